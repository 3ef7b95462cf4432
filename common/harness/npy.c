/* npy.c: a small, strict reader and writer for NumPy's .npy format.
 *
 * The header is a Python dict literal such as
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (8, 64, 56, 56), }
 * padded with spaces to a 64-byte boundary and ended by '\n'. We parse exactly the three keys and
 * reject what we do not understand rather than guess.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounded.h"
#include "npy.h"

static const char magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* Each npy_type's dtype string and size; the float types come first. */
static const struct { const char *descr; size_t size; } types[] = {
    [NPY_F16] = {"<f2", 2}, [NPY_F32] = {"<f4", 4}, [NPY_F64] = {"<f8", 8}, [NPY_U32] = {"<u4", 4},
    [NPY_S32] = {"<i4", 4}, [NPY_U64] = {"<u8", 8}, [NPY_S64] = {"<i8", 8}, [NPY_U8] = {"|u1", 1},
    [NPY_S8] = {"|i1", 1}, [NPY_U16] = {"<u2", 2}, [NPY_S16] = {"<i2", 2}};
enum { NPY_FLOAT_TYPES = 3, NPY_TYPES = 11 };

size_t npy_type_size(npy_type type) { return types[type].size; }

/* For an array npy_read returned: its shape was checked then (the product fits NPY_MAX_BYTES). */
int64_t npy_count(const npy_array *array)
{
    int64_t count = 1;
    for (int i = 0; i < array->ndim; i++)
        count *= array->shape[i];
    return count;
}

#define REJECT(...)                                                                                \
    do {                                                                                           \
        int used_ = snprintf(why, why_len, "%s: ", shown_path(path).s);                            \
        snprintf(why + used_, why_len > (size_t)used_ ? why_len - used_ : 0, __VA_ARGS__);         \
        goto fail;                                                                                 \
    } while (0)

/* Finds 'key': in the header and returns a pointer just past the colon and any spaces. */
static const char *find_value(const char *header, const char *key)
{
    char quoted[32];
    snprintf(quoted, sizeof quoted, "'%s'", key);
    const char *at = strstr(header, quoted);
    if (!at)
        return NULL;
    at += strlen(quoted);
    while (*at == ' ')
        at++;
    if (*at != ':')
        return NULL;
    at++;
    while (*at == ' ')
        at++;
    return at;
}

/* The dtype string at descr ('<f4') for a message: up to its closing quote, at most 8 characters. */
static bounded_quote dtype_shown(const char *descr)
{
    size_t len = 0;
    if (*descr == '\'')
        while (len < 8 && descr[1 + len] && descr[1 + len] != '\'')
            len++;
    return *descr == '\'' ? quoted(descr + 1, len) : quoted(descr, strnlen(descr, 8));
}

static bool read_npy(const char *path, npy_array *out, bool integers, char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    char *header = NULL;
    FILE *file = fopen(path, "rb");
    if (!file) {
        snprintf(why, why_len, "%s: cannot open: %s", shown_path(path).s, strerror(errno));
        return false;
    }
    unsigned char prefix[8];
    if (fread(prefix, 1, 8, file) != 8 || memcmp(prefix, magic, 6) != 0)
        REJECT("not a .npy file (bad magic string)");
    int major = prefix[6];
    if (major < 1 || major > 3)
        REJECT("unsupported .npy format version %d.%d", prefix[6], prefix[7]);
    size_t header_len;
    if (major == 1) {
        unsigned char len_bytes[2];
        if (fread(len_bytes, 1, 2, file) != 2)
            REJECT("truncated header");
        header_len = len_bytes[0] | (size_t)len_bytes[1] << 8;
    } else {
        unsigned char len_bytes[4];
        if (fread(len_bytes, 1, 4, file) != 4)
            REJECT("truncated header");
        header_len = len_bytes[0] | (size_t)len_bytes[1] << 8 | (size_t)len_bytes[2] << 16 |
                     (size_t)len_bytes[3] << 24;
        if (header_len > (1u << 20))
            REJECT("header of %zu bytes is implausibly large", header_len);
    }
    header = malloc(header_len + 1);
    if (!header)
        REJECT("out of memory reading the header");
    if (fread(header, 1, header_len, file) != header_len)
        REJECT("truncated header");
    header[header_len] = '\0';

    const char *descr = find_value(header, "descr");
    if (!descr)
        REJECT("header has no 'descr'");
    if (*descr != '\'') /* a quoted string, before its characters are compared (it may end the header) */
        REJECT("header's 'descr' is not a quoted string");
    int found = -1;
    for (int t = 0; t < (integers ? NPY_TYPES : NPY_FLOAT_TYPES) && found < 0; t++)
        if (strncmp(descr + 1, types[t].descr, 3) == 0 && descr[4] == '\'')
            found = t;
    if (found < 0)
        REJECT("unsupported dtype %s (need little-endian float16, float32 or float64%s)", dtype_shown(descr).s,
               integers ? ", or an integer type of 8, 16, 32 or 64 bits" : "");
    out->type = (npy_type)found;

    const char *order = find_value(header, "fortran_order");
    if (!order)
        REJECT("header has no 'fortran_order'");
    if (strncmp(order, "False", 5) != 0)
        REJECT("Fortran-ordered arrays are not supported (save with numpy.ascontiguousarray)");

    const char *shape = find_value(header, "shape");
    if (!shape || *shape != '(')
        REJECT("header has no 'shape' tuple");
    shape++;
    while (*shape != ')') {
        while (*shape == ' ' || *shape == ',')
            shape++;
        if (*shape == ')')
            break;
        char *end;
        errno = 0;
        long long dim = strtoll(shape, &end, 10);
        if (end == shape || errno || dim < 0)
            REJECT("malformed shape in header");
        if (out->ndim == NPY_MAX_DIMS)
            REJECT("more than %d dimensions", NPY_MAX_DIMS);
        out->shape[out->ndim++] = dim;
        shape = end;
        while (*shape == ' ')
            shape++;
        if (*shape != ',' && *shape != ')')
            REJECT("malformed shape in header");
    }

    /* the shape's product in elements and bytes, checked: a shape that overflows, or promises more
     * than NPY_MAX_BYTES or more than the file holds, is refused before anything is allocated */
    uint64_t count = 1, bytes;
    for (int i = 0; i < out->ndim; i++)
        if (!bounded_mul(count, (uint64_t)out->shape[i], NPY_MAX_BYTES, &count))
            REJECT("shape's %d dimensions hold more than %llu bytes (the limit)", out->ndim,
                   (unsigned long long)NPY_MAX_BYTES);
    if (!bounded_mul(count, npy_type_size(out->type), NPY_MAX_BYTES, &bytes))
        REJECT("shape's %lld elements hold more than %llu bytes (the limit)", (long long)count,
               (unsigned long long)NPY_MAX_BYTES);
    struct stat st;
    long at = ftell(file);
    if (fstat(fileno(file), &st) == 0 && S_ISREG(st.st_mode) && at >= 0 && (uint64_t)(st.st_size - at) < bytes)
        REJECT("file is shorter than its shape says (%lld elements)", (long long)count);
    out->data = malloc(bytes ? bytes : 1);
    if (!out->data)
        REJECT("out of memory for %lld elements", (long long)count);
    if (fread(out->data, 1, bytes, file) != bytes)
        REJECT("file is shorter than its shape says (%lld elements)", (long long)count);
    if (fgetc(file) != EOF)
        REJECT("file is longer than its shape says (%lld elements)", (long long)count);
    free(header);
    fclose(file);
    return true;

fail:
    free(out->data);
    out->data = NULL;
    free(header);
    fclose(file);
    return false;
}

bool npy_read(const char *path, npy_array *out, char *why, size_t why_len)
{
    return read_npy(path, out, false, why, why_len);
}

bool npy_read_numeric(const char *path, npy_array *out, char *why, size_t why_len)
{
    return read_npy(path, out, true, why, why_len);
}

bool npy_write(const char *path, npy_type type, int ndim, const int64_t *shape, const void *data, char *why,
               size_t why_len)
{
    char dict[256];
    int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", types[type].descr);
    uint64_t count = 1, bytes;
    if (ndim < 0 || ndim > NPY_MAX_DIMS) {
        snprintf(why, why_len, "%s: %d dimensions (at most %d)", shown_path(path).s, ndim, NPY_MAX_DIMS);
        return false;
    }
    for (int i = 0; i < ndim; i++) {
        len += snprintf(dict + len, sizeof dict - len, "%lld,%s", (long long)shape[i], i + 1 < ndim ? " " : "");
        if (shape[i] < 0 || !bounded_mul(count, (uint64_t)shape[i], NPY_MAX_BYTES, &count))
            count = NPY_MAX_BYTES + 1;
    }
    if (!bounded_mul(count, npy_type_size(type), NPY_MAX_BYTES, &bytes)) {
        snprintf(why, why_len, "%s: shape holds more than %llu bytes (the limit)", shown_path(path).s,
                 (unsigned long long)NPY_MAX_BYTES);
        return false;
    }
    len += snprintf(dict + len, sizeof dict - len, "), }");
    /* magic (6) + version (2) + length (2) + dict + padding + '\n' is a multiple of 64 */
    int total = 10 + len + 1;
    int padded = (total + 63) / 64 * 64;
    char header[320];
    memcpy(header, magic, 6);
    header[6] = 1, header[7] = 0;
    int header_len = padded - 10;
    header[8] = (char)(header_len & 0xff), header[9] = (char)(header_len >> 8);
    memcpy(header + 10, dict, (size_t)len);
    memset(header + 10 + len, ' ', (size_t)(padded - total));
    header[padded - 1] = '\n';

    FILE *file = fopen(path, "wb");
    if (!file) {
        snprintf(why, why_len, "%s: cannot create: %s", shown_path(path).s, strerror(errno));
        return false;
    }
    bool ok = fwrite(header, 1, (size_t)padded, file) == (size_t)padded && fwrite(data, 1, bytes, file) == bytes;
    ok = (fclose(file) == 0) && ok;
    if (!ok)
        snprintf(why, why_len, "%s: write failed: %s", shown_path(path).s, strerror(errno));
    return ok;
}
