/* tensor.h: host-side tensors, conversions and the random data every check starts from.
 *
 * The harness keeps each tensor once, as fp32 in the logical order (NCHW for activations, KCRS for
 * filters), and converts to what a kernel wants (NHWC/KRSC, fp16) just before upload. Inputs for an
 * fp16 kernel are rounded to fp16 first, so the fp64 reference sees exactly the values the kernel sees
 * and the measured error is the kernel's own.
 */
#ifndef TENSOR_H
#define TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "conv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* IEEE binary16 <-> binary32 on the host, round to nearest even (C has no half type). */
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);

/* Uniform values in [-1, 1) from a seeded generator (splitmix64): the same seed, the same tensor. */
void fill_uniform(float *data, size_t count, uint64_t seed);

/* Rounds every element to the nearest value representable in dtype (no-op for fp32). */
void round_to_dtype(float *data, size_t count, conv_dtype dtype);

/* A 4-D tensor [d0][d1][d2][d3] given in logical order (NCHW / KCRS) converted to layout and dtype:
 * LAYOUT_NHWC stores it as [d0][d2][d3][d1]. dst holds count * dtype_size(dtype) bytes. */
void pack_tensor(const float *logical, const int dims[4], conv_layout layout, conv_dtype dtype, void *dst);

/* The inverse: a kernel's buffer back to fp32 in logical order. */
void unpack_tensor(const void *src, const int dims[4], conv_layout layout, conv_dtype dtype, float *logical);

/* Logical dims of x, w and y for a problem. */
void problem_x_dims(const conv_problem *prob, int dims[4]);
void problem_w_dims(const conv_problem *prob, int dims[4]);
void problem_y_dims(const conv_problem *prob, int dims[4]);

/* Fills device memory with seeded uniform values in dtype (for baselines that need their own data). */
void fill_uniform_device(void *device_ptr, size_t count, conv_dtype dtype, uint64_t seed);

/* malloc that fails with a clear message instead of returning NULL. */
void *xmalloc(size_t bytes);

#ifdef __cplusplus
}
#endif

#endif
