/* half.c: IEEE 754 binary16 and bfloat16 from and to binary32, round to nearest, ties to even (the
 * rounding `cvt.rn.f16.f32` names; PTX ISA, "cvt"). Written on bit patterns so the result does not
 * depend on the host compiler's own half type.
 */
#include <math.h>
#include <string.h>

#include "emu.h"

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Rounds the value `mantissa * 2^-shift` to an integer, nearest-even. */
static uint32_t round_shift(uint32_t mantissa, int shift)
{
    if (shift <= 0)
        return mantissa;
    if (shift > 31)
        return 0;
    uint32_t kept = mantissa >> shift, rest = mantissa & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (kept & 1)))
        kept++;
    return kept;
}

uint16_t emu_f32_to_f16(float f)
{
    uint32_t u = bits_of(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    int exp = (int)((u >> 23) & 0xff);
    uint32_t man = u & 0x7fffff;
    if (exp == 0xff) /* Inf stays Inf; NaN stays a (quiet) NaN with its top payload bits */
        return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
    if (exp == 0 && man == 0)
        return sign;
    /* value = 1.man * 2^(exp-127) (normals) = (man | 1<<23) * 2^(exp-150) */
    int e = exp - 127 + 15;
    uint32_t full = exp ? man | 0x800000 : man;
    if (e >= 1) { /* a normal half: 10 fraction bits, drop 13 */
        uint32_t r = round_shift(full, 13);
        /* r may have carried into bit 11 (mantissa overflow): the exponent grows by one */
        uint32_t h = ((uint32_t)e << 10) + (r - 0x400);
        if (r >= 0x800)
            h = ((uint32_t)(e + 1) << 10);
        if (h >= 0x7c00)
            return (uint16_t)(sign | 0x7c00); /* overflow rounds to Inf */
        return (uint16_t)(sign | h);
    }
    /* a subnormal half: the value in units of 2^-24, rounded; binary32 subnormals are far below it */
    if (!exp)
        return sign;
    uint32_t r = round_shift(full, 126 - exp);
    return (uint16_t)(sign | r); /* r == 0x400 becomes the smallest normal, which is right */
}

float emu_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    int exp = (h >> 10) & 0x1f;
    uint32_t man = h & 0x3ff;
    if (exp == 0x1f)
        return float_of(sign | 0x7f800000 | (man << 13));
    if (exp == 0) {
        float v = (float)man * 0x1p-24f;
        return sign ? -v : v;
    }
    return float_of(sign | ((uint32_t)(exp - 15 + 127) << 23) | (man << 13));
}

uint16_t emu_f64_to_f16(double d)
{
    /* through binary32 could round twice; binary32 keeps 13 more bits than binary16, which decides
     * every tie except values within 2^-24 relative of a half-ulp midpoint. Round directly instead. */
    if (isnan(d))
        return (uint16_t)(signbit(d) ? 0xfe00 : 0x7e00);
    double a = fabs(d);
    uint16_t sign = signbit(d) ? 0x8000 : 0;
    if (a >= 65520.0)
        return (uint16_t)(sign | 0x7c00);
    if (a < 0x1p-14) { /* subnormal: multiples of 2^-24 */
        double q = nearbyint(a * 0x1p24); /* default rounding mode: nearest-even */
        return (uint16_t)(sign | (uint16_t)q);
    }
    int e;
    double m = frexp(a, &e); /* a = m * 2^e, m in [0.5, 1) */
    double q = nearbyint(m * 2048.0); /* 11 significant bits */
    if (q >= 2048.0)
        q /= 2.0, e++;
    uint32_t h = ((uint32_t)(e - 1 + 15) << 10) | ((uint32_t)q & 0x3ff);
    return (uint16_t)(sign | h);
}

uint16_t emu_f32_to_bf16(float f)
{
    uint32_t u = bits_of(f);
    if ((u & 0x7fffffff) > 0x7f800000)
        return (uint16_t)((u >> 16) | 0x40); /* NaN stays NaN */
    uint32_t rest = u & 0xffff, kept = u >> 16;
    if (rest > 0x8000 || (rest == 0x8000 && (kept & 1)))
        kept++;
    return (uint16_t)kept;
}

float emu_bf16_to_f32(uint16_t h) { return float_of((uint32_t)h << 16); }
