/* tensor.c: host tensors, fp16 conversion, seeded random data, layout packing. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "tensor.h"

void *xmalloc(size_t bytes)
{
    void *ptr = malloc(bytes ? bytes : 1);
    if (!ptr)
        fail("out of host memory allocating %.2f GiB", (double)bytes / (1 << 30));
    return ptr;
}

uint16_t float_to_half(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    uint32_t sign = (bits >> 16) & 0x8000u;
    uint32_t exponent = (bits >> 23) & 0xffu;
    uint32_t mantissa = bits & 0x7fffffu;

    if (exponent == 0xffu) /* Inf stays Inf; NaN stays a (quiet) NaN */
        return (uint16_t)(sign | 0x7c00u | (mantissa ? 0x200u : 0));

    int32_t half_exponent = (int32_t)exponent - 127 + 15;
    if (half_exponent >= 0x1f) /* too large: rounds to Inf */
        return (uint16_t)(sign | 0x7c00u);

    uint32_t significand;  /* the bits to keep, before rounding */
    int shift;             /* how many low bits of the 24-bit significand are dropped */
    if (half_exponent <= 0) {
        if (half_exponent < -10) /* below half the smallest subnormal: rounds to zero */
            return (uint16_t)sign;
        significand = mantissa | 0x800000u; /* subnormal result: make the leading 1 explicit */
        shift = 14 - half_exponent;
        half_exponent = 0;
    } else {
        significand = mantissa;
        shift = 13;
    }
    uint32_t kept = significand >> shift;
    uint32_t dropped = significand & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    /* Round to nearest, ties to even. A carry out of the mantissa correctly bumps the exponent. */
    if (dropped > halfway || (dropped == halfway && (kept & 1u)))
        kept++;
    return (uint16_t)(sign | ((uint32_t)half_exponent << 10)) + (uint16_t)kept;
}

float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1fu;
    uint32_t mantissa = h & 0x3ffu;
    uint32_t bits;
    if (exponent == 0x1fu) {
        bits = sign | 0x7f800000u | (mantissa << 13);
    } else if (exponent == 0) {
        /* zero or subnormal: value = mantissa * 2^-24, exact in fp32 */
        float value = ldexpf((float)mantissa, -24);
        return sign ? -value : value;
    } else {
        bits = sign | ((exponent - 15 + 127) << 23) | (mantissa << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void fill_uniform(float *data, size_t count, uint64_t seed)
{
    uint64_t state = seed;
    for (size_t i = 0; i < count; i++) {
        /* 24 random bits give every fp32 in [-1, 1) on a 2^-23 grid: exact, no rounding bias */
        uint32_t bits = (uint32_t)(splitmix64(&state) >> 40);
        data[i] = (float)bits * (2.0f / 16777216.0f) - 1.0f;
    }
}

void round_to_dtype(float *data, size_t count, conv_dtype dtype)
{
    if (dtype == DTYPE_F16)
        for (size_t i = 0; i < count; i++)
            data[i] = half_to_float(float_to_half(data[i]));
}

/* Offset of logical element (a, b, c, d) of a [d0][d1][d2][d3] tensor stored in layout. */
static size_t stored_offset(const int dims[4], conv_layout layout, int a, int b, int c, int d)
{
    if (layout == LAYOUT_NCHW)
        return (((size_t)a * dims[1] + b) * dims[2] + c) * dims[3] + d;
    return (((size_t)a * dims[2] + c) * dims[3] + d) * dims[1] + b;
}

void pack_tensor(const float *logical, const int dims[4], conv_layout layout, conv_dtype dtype, void *dst)
{
    size_t i = 0;
    for (int a = 0; a < dims[0]; a++)
        for (int b = 0; b < dims[1]; b++)
            for (int c = 0; c < dims[2]; c++)
                for (int d = 0; d < dims[3]; d++, i++) {
                    size_t at = stored_offset(dims, layout, a, b, c, d);
                    if (dtype == DTYPE_F32)
                        ((float *)dst)[at] = logical[i];
                    else
                        ((uint16_t *)dst)[at] = float_to_half(logical[i]);
                }
}

void unpack_tensor(const void *src, const int dims[4], conv_layout layout, conv_dtype dtype, float *logical)
{
    size_t i = 0;
    for (int a = 0; a < dims[0]; a++)
        for (int b = 0; b < dims[1]; b++)
            for (int c = 0; c < dims[2]; c++)
                for (int d = 0; d < dims[3]; d++, i++) {
                    size_t at = stored_offset(dims, layout, a, b, c, d);
                    logical[i] = dtype == DTYPE_F32 ? ((const float *)src)[at]
                                                    : half_to_float(((const uint16_t *)src)[at]);
                }
}

void problem_x_dims(const conv_problem *prob, int dims[4])
{
    dims[0] = prob->n, dims[1] = prob->c, dims[2] = prob->h, dims[3] = prob->w;
}

void problem_w_dims(const conv_problem *prob, int dims[4])
{
    dims[0] = prob->k, dims[1] = prob->c / prob->groups, dims[2] = prob->r, dims[3] = prob->s;
}

void problem_y_dims(const conv_problem *prob, int dims[4])
{
    dims[0] = prob->n, dims[1] = prob->k, dims[2] = prob->p, dims[3] = prob->q;
}

void fill_uniform_device(void *device_ptr, size_t count, conv_dtype dtype, uint64_t seed)
{
    float *values = xmalloc(count * sizeof(float));
    fill_uniform(values, count, seed);
    void *converted = values;
    uint16_t *halves = NULL;
    if (dtype == DTYPE_F16) {
        halves = xmalloc(count * sizeof(uint16_t));
        for (size_t i = 0; i < count; i++)
            halves[i] = float_to_half(values[i]);
        converted = halves;
    }
    CUDA_CHECK(cudaMemcpy(device_ptr, converted, count * dtype_size(dtype), cudaMemcpyHostToDevice));
    free(halves);
    free(values);
}
