/* half.c: IEEE 754 binary16 and bfloat16, to and from wider floats, with the rounding modes of
 * `cvt.{rn,rz,rm,rp}.f16.f32` (PTX ISA, "cvt" and "Rounding Modifiers"). Written on the values
 * themselves, so the result does not depend on the host compiler's own half type.
 */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "emu.h"

static float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
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

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
/* Eight at a time by the CPU's own conversion (F16C's VCVTPH2PS: exact for every binary16, subnormals
 * included; a signalling NaN comes back quiet). */
__attribute__((target("avx,f16c"))) static int f16_to_f32_by_eights(const uint16_t *h, float *out, int n)
{
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + i))));
    return i;
}
#endif

/* n of them: out[i] = emu_f16_to_f32(h[i]), but a signalling NaN may come back quiet (a tensor-core
 * instruction's operands, 64 at a time, go on to binary64, which quiets it anyway). */
void emu_f16_to_f32_n(const uint16_t *h, float *out, int n)
{
    int i = 0;
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    if (__builtin_cpu_supports("f16c"))
        i = f16_to_f32_by_eights(h, out, n);
#endif
    for (; i < n; i++)
        out[i] = emu_f16_to_f32(h[i]);
}

/* A 16-bit float format: binary16 has 10 fraction and 5 exponent bits, bfloat16 7 and 8. */
typedef struct { int fraction_bits, exponent_bits; } format16;
static const format16 binary16 = {10, 5}, bfloat16 = {7, 8};

/* x rounded to the format by `mode` (IEEE 754: nearest-even, toward zero, toward -inf, toward +inf;
 * "Rounding Modifiers" in the PTX ISA), as its bit pattern. Every binary32 and binary64 value is
 * rounded once, from its exact value: no double rounding. */
static uint16_t round_to(double x, emu_rounding mode, format16 fmt)
{
    const int bias = (1 << (fmt.exponent_bits - 1)) - 1, emin = 1 - bias;
    const uint16_t sign = signbit(x) ? (uint16_t)(1u << 15) : 0;
    const uint16_t inf = (uint16_t)(((1u << fmt.exponent_bits) - 1) << fmt.fraction_bits);
    if (isnan(x)) /* a quiet NaN, sign kept */
        return (uint16_t)(sign | inf | (1u << (fmt.fraction_bits - 1)));
    double a = fabs(x);
    if (isinf(x))
        return (uint16_t)(sign | inf);
    if (a == 0.0)
        return sign;
    /* the spacing of representable values around a: 2^(exponent - fraction_bits), fixed below 2^emin */
    int e;
    frexp(a, &e); /* a = m * 2^e, m in [0.5, 1): the leading bit is 2^(e-1) */
    int lead = e - 1 < emin ? emin : e - 1;
    double units = ldexp(a, fmt.fraction_bits - lead); /* exact: a power-of-two scaling */
    double whole = floor(units), rest = units - whole;
    bool up;
    switch (mode) {
    case EMU_ROUND_ZERO: up = false; break;
    case EMU_ROUND_DOWN: up = sign && rest > 0; break;  /* toward -inf: magnitudes of negatives grow */
    case EMU_ROUND_UP: up = !sign && rest > 0; break;
    default: up = rest > 0.5 || (rest == 0.5 && fmod(whole, 2.0) != 0.0); break;
    }
    double magnitude = ldexp(whole + (up ? 1.0 : 0.0), lead - fmt.fraction_bits);
    double largest = ldexp(2.0 - ldexp(1.0, -fmt.fraction_bits), bias);
    if (magnitude > largest) { /* overflow: Inf, or the largest finite value when rounding away from Inf */
        bool to_inf = mode == EMU_ROUND_NEAREST || (mode == EMU_ROUND_UP && !sign) || (mode == EMU_ROUND_DOWN && sign);
        return (uint16_t)(sign | (to_inf ? inf : inf - 1));
    }
    if (magnitude == 0.0) /* rounded away to zero */
        return sign;
    frexp(magnitude, &e);
    if (e - 1 < emin) /* subnormal: the count of the smallest steps */
        return (uint16_t)(sign | (uint16_t)ldexp(magnitude, fmt.fraction_bits - emin));
    uint32_t fraction = (uint32_t)(ldexp(magnitude, fmt.fraction_bits - (e - 1)) - ldexp(1.0, fmt.fraction_bits));
    return (uint16_t)(sign | (uint32_t)(e - 1 + bias) << fmt.fraction_bits | fraction);
}

uint16_t emu_to_f16(double x, emu_rounding mode) { return round_to(x, mode, binary16); }
uint16_t emu_to_bf16(double x, emu_rounding mode) { return round_to(x, mode, bfloat16); }
/* binary32 to binary16, nearest-even, on the bits: what round_to gives for every binary32 value (checked for all
 * 2^32 of them), without its arithmetic; the interpreter rounds every f16 result this way. */
uint16_t emu_f32_to_f16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    const uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    const uint32_t magnitude = u & 0x7fffffff;
    if (magnitude > 0x7f800000) /* NaN */
        return round_to(f, EMU_ROUND_NEAREST, binary16);
    if (magnitude >= 0x477ff000) /* 65520 (halfway from the largest binary16, 65504, to 2^16) and up: Inf */
        return sign | 0x7c00;
    if (magnitude >= 0x38800000) { /* 2^-14 and up: a normal binary16, the exponent rebiased (127 - 15 = 112) */
        const uint32_t h = (magnitude >> 13) - (112u << 10), rest = magnitude & 0x1fff; /* 13 bits dropped */
        return sign | (uint16_t)(h + (rest > 0x1000 || (rest == 0x1000 && (h & 1))));
    }
    const uint32_t exponent = magnitude >> 23;
    if (exponent < 102) /* below 2^-25, half the smallest subnormal: to zero */
        return sign;
    /* a subnormal: the count of 2^-24 steps, the significand (with its leading bit) shifted down */
    const uint32_t shift = 126 - exponent, significand = (magnitude & 0x7fffff) | 0x800000;
    const uint32_t steps = significand >> shift, rest = significand & ((1u << shift) - 1), half = 1u << (shift - 1);
    return sign | (uint16_t)(steps + (rest > half || (rest == half && (steps & 1))));
}
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
/* Eight at a time by the CPU's own rounding (F16C's VCVTPS2PH, nearest-even: emu_f32_to_f16's result,
 * subnormal ones included), but for a NaN: the CPU keeps the top of its payload where emu_f32_to_f16 gives the
 * quiet NaN 0x7e00 with the sign, which the loop after makes of it. */
__attribute__((target("avx,f16c"))) static int f32_to_f16_by_eights(const float *f, uint16_t *out, int n)
{
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(out + i), _mm256_cvtps_ph(_mm256_loadu_ps(f + i), _MM_FROUND_TO_NEAREST_INT));
    for (int j = 0; j < i; j++)
        if ((out[j] & 0x7fff) > 0x7c00) /* a NaN */
            out[j] = (uint16_t)((out[j] & 0x8000) | 0x7e00);
    return i;
}
#endif

/* n of them: out[i] = emu_f32_to_f16(f[i]), the same bits (a warp's cvt.rn.f16.f32, 32 at a time). */
void emu_f32_to_f16_n(const float *f, uint16_t *out, int n)
{
    int i = 0;
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    if (__builtin_cpu_supports("f16c"))
        i = f32_to_f16_by_eights(f, out, n);
#endif
    for (; i < n; i++)
        out[i] = emu_f32_to_f16(f[i]);
}

uint16_t emu_f32_to_bf16(float f) { return round_to(f, EMU_ROUND_NEAREST, bfloat16); }

float emu_bf16_to_f32(uint16_t h) { return float_of((uint32_t)h << 16); }

/* Every binary16 value as a binary32: the interpreter converts f16 operands of every mma and cvt, and a
 * 256 KiB table is faster than decoding the bits each time. */
static float f16_table[65536];
static pthread_once_t f16_table_once = PTHREAD_ONCE_INIT;

static void fill_f16_table(void)
{
    for (uint32_t h = 0; h < 65536; h++)
        f16_table[h] = emu_f16_to_f32((uint16_t)h);
}

const float *emu_f16_table(void)
{
    pthread_once(&f16_table_once, fill_f16_table);
    return f16_table;
}

/* The table, for the interpreter's half_in() (interp.h): set when a launch starts (exec.c). */
const float *emu_f16_values;
