/* npy.h: tensors in NumPy's .npy format, so any kernel's inputs and outputs can be checked against
 * NumPy or PyTorch, and a reader's own data fed in.
 *
 * Written: format version 1.0, little-endian, C order. Read: versions 1.0 to 3.0, little-endian
 * float16/float32/float64 ('<f2', '<f4', '<f8'), C order. Anything else gets a one-line reason.
 */
#ifndef NPY_H
#define NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NPY_MAX_DIMS 8
/* The largest array read or written: 64 GiB (a 16 GB tensor, four times over). A shape whose product
 * is larger, or overflows, is refused before anything is allocated. */
#define NPY_MAX_BYTES (1ull << 36)

/* Element types. The tensors are floats; the integer types are for ptxrun's kernel arguments (bf16 data
 * travels as uint16: NumPy has no bfloat16). */
typedef enum { NPY_F16, NPY_F32, NPY_F64, NPY_U32, NPY_S32, NPY_U64, NPY_S64, NPY_U8, NPY_S8, NPY_U16, NPY_S16 } npy_type;

size_t npy_type_size(npy_type type);

typedef struct {
    npy_type type;
    int ndim;
    int64_t shape[NPY_MAX_DIMS];
    void *data;        /* malloc'ed; free with free() */
} npy_array;

int64_t npy_count(const npy_array *array);

/* Reads path into out: float16, float32 or float64. On failure returns false with
 * why = "<path>: <what is wrong>". */
bool npy_read(const char *path, npy_array *out, char *why, size_t why_len);

/* The same, also accepting the integer types: (u)int8, little-endian (u)int16, (u)int32 and (u)int64. */
bool npy_read_numeric(const char *path, npy_array *out, char *why, size_t why_len);

/* Writes data (count = product of shape) to path. On failure returns false with why. */
bool npy_write(const char *path, npy_type type, int ndim, const int64_t *shape, const void *data, char *why,
               size_t why_len);

#ifdef __cplusplus
}
#endif

#endif
