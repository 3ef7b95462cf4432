/* alu.c: the arithmetic, logic, comparison and conversion instructions (their rows in instructions.def).
 *
 * The ALU families (alu_int, alu_f32, alu_f64, alu_f16, alu_logic) are functions of the registers alone:
 * no warp, no memory, no scheduling. Each runs one instruction for the lanes of a mask over the slot-major
 * register file (r[slot][lane]); the common f32 arithmetic of a whole warp runs as one lane-parallel loop
 * the compiler vectorizes. The handlers below them (exec_arithmetic, exec_compare, exec_cvt, ...) are the
 * rows' entries: they pick the family by the instruction's type. Semantics are the PTX ISA's, cited at each
 * instruction; rounding modes other than nearest-even use the host FPU's, around one operation.
 */
#include <fenv.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "emu.h"
#include "interp.h"

/* ---------------------------------------------------------------------------------------------- */
/* Values                                                                                         */

/* .sat on a float: clamp to [0, 1], NaN -> +0 */
static inline float sat32(float f) { return isnan(f) ? 0.0f : f < 0.0f ? 0.0f : f > 1.0f ? 1.0f : f; }
static inline double sat64(double f) { return isnan(f) ? 0.0 : f < 0.0 ? 0.0 : f > 1.0 ? 1.0 : f; }

static const uint32_t canonical_nan32 = 0x7fffffffu; /* PTX ISA: the canonical f32 NaN */

/* Float rounding other than nearest-even: the host FPU's rounding mode, around one operation. */
static int fe_mode(int rounding)
{
    switch (rounding) {
    case RND_RZ: case RND_RZI: return FE_TOWARDZERO;
    case RND_RM: case RND_RMI: return FE_DOWNWARD;
    case RND_RP: case RND_RPI: return FE_UPWARD;
    default: return FE_TONEAREST;
    }
}

static inline uint64_t half_out(float f, int type)
{
    return type == T_BF16 ? emu_f32_to_bf16(f) : emu_f32_to_f16(f);
}

/* A float rounding modifier as the 16-bit conversions take it (none given: nearest-even). */
static emu_rounding rounding_of(int rounding)
{
    switch (rounding) {
    case RND_RZ: return EMU_ROUND_ZERO;
    case RND_RM: return EMU_ROUND_DOWN;
    case RND_RP: return EMU_ROUND_UP;
    default: return EMU_ROUND_NEAREST;
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* Instructions                                                                                   */

/* What most of a kernel's index arithmetic is: add, sub, mul and mad (.lo, or .wide from the sources' width)
 * without .sat, and, or, xor, shl and shr, truncated to the result's width. Computed for all 32 lanes in
 * loops the compiler makes vector instructions of (VECTOR_COPIES, interp.h), written only
 * for `lanes`: a few lanes' worth of wasted arithmetic costs less than a loop that finds each lane. The
 * results are gathered before any is written, so a destination may be a source. */
static bool int_whole_warp_op(const insn *in)
{
    switch (in->op) {
    case OP_ADD: case OP_SUB: return !(in->flags & F_SAT);
    case OP_MUL: case OP_MAD: return !(in->flags & F_HI);
    case OP_AND: case OP_OR: case OP_XOR: case OP_SHL: case OP_SHR: return true;
    default: return false;
    }
}

VECTOR_COPIES
static void int_whole_warp(const insn *in, uint64_t *d, const uint64_t *a, const uint64_t *b, const uint64_t *c,
                           uint32_t lanes)
{
    const int bits = ptx_type_bits((ptx_type)in->type);
    const bool sgn = is_signed(in->type), wide = in->flags & F_WIDE;
    const uint64_t narrow = width_mask(bits), mask = wide ? width_mask(2 * bits) : narrow;
    uint64_t v[LANES];
    switch (in->op) {
    case OP_ADD: for (int l = 0; l < LANES; l++) v[l] = a[l] + b[l]; break;
    case OP_SUB: for (int l = 0; l < LANES; l++) v[l] = a[l] - b[l]; break;
    case OP_MUL:
    case OP_MAD: /* PTX ISA, "mul" / "mad": t = a * b in 2n bits; .lo keeps t<n-1..0>, .wide all of t */
        if (wide && sgn)
            for (int l = 0; l < LANES; l++) v[l] = (uint64_t)(sign_extend(a[l], bits) * sign_extend(b[l], bits));
        else if (wide)
            for (int l = 0; l < LANES; l++) v[l] = (a[l] & narrow) * (b[l] & narrow);
        else
            for (int l = 0; l < LANES; l++) v[l] = a[l] * b[l];
        if (in->op == OP_MAD)
            for (int l = 0; l < LANES; l++) v[l] += c[l];
        break;
    case OP_AND: for (int l = 0; l < LANES; l++) v[l] = a[l] & b[l]; break;
    case OP_OR: for (int l = 0; l < LANES; l++) v[l] = a[l] | b[l]; break;
    case OP_XOR: for (int l = 0; l < LANES; l++) v[l] = a[l] ^ b[l]; break;
    case OP_SHL: /* "Shift amounts greater than the register width N are clamped to N" */
        for (int l = 0; l < LANES; l++) v[l] = (uint32_t)b[l] >= (uint32_t)bits ? 0 : a[l] << (uint32_t)b[l];
        break;
    default: /* shr: signed forms shift in copies of the sign bit */
        if (sgn)
            for (int l = 0; l < LANES; l++)
                v[l] = (uint64_t)(sign_extend(a[l], bits) >> ((uint32_t)b[l] >= (uint32_t)bits ? (uint32_t)bits - 1 : (uint32_t)b[l]));
        else
            for (int l = 0; l < LANES; l++) v[l] = (uint32_t)b[l] >= (uint32_t)bits ? 0 : (a[l] & narrow) >> (uint32_t)b[l];
        break;
    }
    if (lanes == FULL_MASK)
        for (int l = 0; l < LANES; l++)
            d[l] = v[l] & mask;
    else
        for (int l = 0; l < LANES; l++)
            d[l] = (lanes & lane_bit[l]) ? v[l] & mask : d[l];
}

/* Integer arithmetic lane by lane: every form int_whole_warp does not take (alu_int). Not inlined into
 * exec_arithmetic: see there. */
static __attribute__((noinline)) step int_lanes(const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t m)
{
    const int t = in->type, bits = ptx_type_bits((ptx_type)t);
    const uint64_t mask = width_mask(bits);
    const bool sgn = is_signed(t);
    uint64_t *d = D(0);
    const uint64_t *a = S(0), *b = in->n_src > 1 ? S(1) : NULL, *c = in->n_src > 2 ? S(2) : NULL;
    switch (in->op) {
    case OP_ADD: /* add.sat.s32 and sub.sat.s32: clamped to the s32 range */
    case OP_SUB:
        FOR_LANES(m, l) {
            int64_t s = (int64_t)(int32_t)a[l] + (in->op == OP_ADD ? 1 : -1) * (int64_t)(int32_t)b[l];
            d[l] = (uint32_t)(int32_t)(s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : s);
        }
        return STEP_NEXT;
    case OP_MUL:
    case OP_MAD: { /* .hi: t<2n-1..n> of the 2n-bit product t = a * b */
        const bool mad = in->op == OP_MAD;
        FOR_LANES(m, l) {
            uint64_t hi;
            if (bits == 64) {
                hi = sgn ? (uint64_t)(((__int128)(int64_t)a[l] * (int64_t)b[l]) >> 64)
                         : (uint64_t)(((unsigned __int128)a[l] * b[l]) >> 64);
            } else {
                uint64_t p = sgn ? (uint64_t)(sign_extend(a[l], bits) * sign_extend(b[l], bits))
                                 : (a[l] & mask) * (b[l] & mask);
                hi = sgn ? (uint64_t)((int64_t)p >> bits) : p >> bits;
            }
            d[l] = (hi + (mad ? c[l] : 0)) & mask;
        }
        return STEP_NEXT;
    }
    case OP_MUL24:
    case OP_MAD24:
        FOR_LANES(m, l) {
            int64_t x = sgn ? sign_extend(a[l], 24) : (int64_t)(a[l] & 0xffffff);
            int64_t y = sgn ? sign_extend(b[l], 24) : (int64_t)(b[l] & 0xffffff);
            uint64_t p = (uint64_t)(x * y);
            uint64_t v = (in->flags & F_HI) ? p >> 16 : p;
            d[l] = (v + (in->op == OP_MAD24 ? c[l] : 0)) & mask;
        }
        return STEP_NEXT;
    case OP_DIV:
    case OP_REM:
        /* "Division by zero yields an unspecified, machine-specific value" (PTX ISA, "div"): here all
         * ones for div and a itself for rem. The one signed overflow, MIN / -1, wraps to MIN. */
        FOR_LANES(m, l) {
            uint64_t v;
            if (sgn) {
                int64_t x = sign_extend(a[l], bits), y = sign_extend(b[l], bits);
                if (y == 0)
                    v = in->op == OP_DIV ? ~0ull : (uint64_t)x;
                else if (y == -1)
                    v = in->op == OP_DIV ? (uint64_t)0 - (uint64_t)x : 0;
                else
                    v = (uint64_t)(in->op == OP_DIV ? x / y : x % y);
            } else {
                uint64_t x = a[l] & mask, y = b[l] & mask;
                v = y == 0 ? (in->op == OP_DIV ? ~0ull : x) : in->op == OP_DIV ? x / y : x % y;
            }
            d[l] = v & mask;
        }
        return STEP_NEXT;
    case OP_ABS:
        FOR_LANES(m, l) {
            int64_t x = sign_extend(a[l], bits);
            d[l] = (x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x) & mask;
        }
        return STEP_NEXT;
    case OP_NEG:
        FOR_LANES(m, l) d[l] = ((uint64_t)0 - a[l]) & mask;
        return STEP_NEXT;
    case OP_MIN:
    case OP_MAX: {
        const bool is_min = in->op == OP_MIN;
        FOR_LANES(m, l) {
            uint64_t v = a[l] & mask;
            for (int i = 1; i < in->n_src; i++) {
                uint64_t y = S(i)[l] & mask;
                bool less = sgn ? sign_extend(y, bits) < sign_extend(v, bits) : y < v;
                bool greater = sgn ? sign_extend(y, bits) > sign_extend(v, bits) : y > v;
                if (is_min ? less : greater)
                    v = y;
            }
            d[l] = v;
        }
        return STEP_NEXT;
    }
    case OP_SAD:
        FOR_LANES(m, l) {
            bool lt = sgn ? sign_extend(a[l], bits) < sign_extend(b[l], bits) : (a[l] & mask) < (b[l] & mask);
            d[l] = (c[l] + (lt ? b[l] - a[l] : a[l] - b[l])) & mask;
        }
        return STEP_NEXT;
    default:
        return STEP_FAULT;
    }
}

static step alu_int(const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t m)
{
    if (int_whole_warp_op(in)) {
        int_whole_warp(in, D(0), S(0), in->n_src > 1 ? S(1) : NULL, in->n_src > 2 ? S(2) : NULL, m);
        return STEP_NEXT;
    }
    return int_lanes(in, r, o, m);
}

/* What most of a convolution's f32 arithmetic is: add, sub, mul and fma (or mad) rounded to nearest, with
 * no .ftz and no .sat. The same IEEE operations as f32_lanes's loop, as int_whole_warp above: computed for
 * all 32 lanes in loops the compiler makes vector instructions of (VECTOR_COPIES, interp.h), written only
 * for `lanes`, a destination possibly a source. */
VECTOR_COPIES
static void f32_whole_warp(int op, uint64_t *d, const uint64_t *a, const uint64_t *b, const uint64_t *c,
                           uint32_t lanes)
{
    float v[LANES];
    switch (op) {
    case OP_ADD: for (int l = 0; l < LANES; l++) v[l] = f32_of(a[l]) + f32_of(b[l]); break;
    case OP_SUB: for (int l = 0; l < LANES; l++) v[l] = f32_of(a[l]) - f32_of(b[l]); break;
    case OP_MUL: for (int l = 0; l < LANES; l++) v[l] = f32_of(a[l]) * f32_of(b[l]); break;
    default: /* fma, mad */
        for (int l = 0; l < LANES; l++) v[l] = __builtin_fmaf(f32_of(a[l]), f32_of(b[l]), f32_of(c[l]));
        break;
    }
    if (lanes == FULL_MASK)
        for (int l = 0; l < LANES; l++)
            d[l] = bits_f32(v[l]);
    else
        for (int l = 0; l < LANES; l++)
            d[l] = (lanes & lane_bit[l]) ? bits_f32(v[l]) : d[l];
}

/* f32 arithmetic lane by lane: every form but the plainest (alu_f32). Not inlined into exec_arithmetic: see
 * there. */
static __attribute__((noinline)) step f32_lanes(const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t m)
{
    uint64_t *d = D(0);
    const uint64_t *a = S(0), *b = in->n_src > 1 ? S(1) : NULL, *c = in->n_src > 2 ? S(2) : NULL;
    const bool ftz = in->flags & F_FTZ, sat = in->flags & F_SAT;
    const bool directed = in->rounding != RND_NONE && in->rounding != RND_RN;
    int saved_mode = 0;
    if (directed) {
        saved_mode = fegetround();
        fesetround(fe_mode(in->rounding));
    }
    FOR_LANES(m, l) {
        float x = f32_of(a[l]), y = b ? f32_of(b[l]) : 0.0f, z = c ? f32_of(c[l]) : 0.0f, v;
        if (ftz)
            x = ftz32(x), y = ftz32(y), z = ftz32(z);
        switch (in->op) {
        case OP_ADD: v = x + y; break;
        case OP_SUB: v = x - y; break;
        case OP_MUL: v = x * y; break;
        case OP_FMA:
        case OP_MAD: v = fmaf(x, y, z); break; /* "mad.f32 ... is identical to fma.rn.f32" for sm_20+ */
        case OP_DIV: v = x / y; break;          /* .rn exact; .full and .approx are within their 2 ulp */
        case OP_ABS: d[l] = a[l] & 0x7fffffffu; continue;
        case OP_NEG: d[l] = (a[l] ^ 0x80000000u) & 0xffffffffu; continue;
        case OP_MIN:
        case OP_MAX: {
            /* "min"/"max": a NaN operand yields the other (both NaN: NaN); -0 < +0; .NaN: any NaN -> NaN */
            bool is_min = in->op == OP_MIN;
            if (isnan(x) || isnan(y)) {
                if ((in->flags & F_NAN) || (isnan(x) && isnan(y))) {
                    d[l] = canonical_nan32;
                    continue;
                }
                v = isnan(x) ? y : x;
            } else if (x == y) {
                v = is_min ? (signbit(x) ? x : y) : (signbit(x) ? y : x);
            } else {
                v = is_min ? (x < y ? x : y) : (x > y ? x : y);
            }
            break;
        }
        case OP_RCP: v = 1.0f / x; break;       /* rcp.approx: 1 ulp allowed; this is exact */
        case OP_SQRT: v = sqrtf(x); break;
        case OP_RSQRT: v = (float)(1.0 / sqrt((double)x)); break;
        case OP_EX2: v = exp2f(x); break;
        case OP_LG2: v = log2f(x); break;
        case OP_SIN: v = sinf(x); break;
        case OP_COS: v = cosf(x); break;
        case OP_TANH: v = tanhf(x); break;
        case OP_COPYSIGN: v = copysignf(y, x); break; /* "copysign d, a, b": b's magnitude, a's sign */
        default: v = NAN; break;
        }
        if (ftz)
            v = ftz32(v);
        if (sat)
            v = sat32(v);
        d[l] = bits_f32(v);
    }
    if (directed)
        fesetround(saved_mode);
    return STEP_NEXT;
}

/* f32 add, sub, mul, fma and mad, round to nearest, without .ftz or .sat, in vector copies
 * (f32_whole_warp); the rest lane by lane. */
static step alu_f32(const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t m)
{
    if (!(in->flags & (F_FTZ | F_SAT)) && (in->rounding == RND_NONE || in->rounding == RND_RN) &&
        (in->op == OP_ADD || in->op == OP_SUB || in->op == OP_MUL || in->op == OP_FMA || in->op == OP_MAD)) {
        f32_whole_warp(in->op, D(0), S(0), in->n_src > 1 ? S(1) : NULL, in->n_src > 2 ? S(2) : NULL, m);
        return STEP_NEXT;
    }
    return f32_lanes(in, r, o, m);
}

static __attribute__((noinline)) step alu_f64(const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t m)
{
    uint64_t *d = D(0);
    const uint64_t *a = S(0), *b = in->n_src > 1 ? S(1) : NULL, *c = in->n_src > 2 ? S(2) : NULL;
    const bool directed = in->rounding != RND_NONE && in->rounding != RND_RN;
    int saved_mode = 0;
    if (directed) {
        saved_mode = fegetround();
        fesetround(fe_mode(in->rounding));
    }
    FOR_LANES(m, l) {
        double x = f64_of(a[l]), y = b ? f64_of(b[l]) : 0.0, z = c ? f64_of(c[l]) : 0.0, v;
        switch (in->op) {
        case OP_ADD: v = x + y; break;
        case OP_SUB: v = x - y; break;
        case OP_MUL: v = x * y; break;
        case OP_FMA:
        case OP_MAD: v = fma(x, y, z); break;
        case OP_DIV: v = x / y; break;
        case OP_ABS: d[l] = a[l] & 0x7fffffffffffffffull; continue;
        case OP_NEG: d[l] = a[l] ^ 0x8000000000000000ull; continue;
        case OP_MIN:
        case OP_MAX: {
            bool is_min = in->op == OP_MIN;
            if (isnan(x) || isnan(y))
                v = isnan(x) && isnan(y) ? NAN : isnan(x) ? y : x;
            else if (x == y)
                v = is_min ? (signbit(x) ? x : y) : (signbit(x) ? y : x);
            else
                v = is_min ? (x < y ? x : y) : (x > y ? x : y);
            break;
        }
        case OP_RCP: v = 1.0 / x; break;
        case OP_SQRT: v = sqrt(x); break;
        case OP_RSQRT: v = 1.0 / sqrt(x); break;
        case OP_COPYSIGN: v = copysign(y, x); break;
        default: v = NAN; break;
        }
        if (in->flags & F_SAT)
            v = sat64(v);
        d[l] = bits_f64(v);
    }
    if (directed)
        fesetround(saved_mode);
    return STEP_NEXT;
}

/* f16, bf16 and their x2 packs ("Half Precision Floating-Point Instructions"): each half computed in
 * binary32, rounded once to 16 bits (binary32 holds every f16/bf16 sum, difference and product exactly
 * enough for one correct rounding). */
static const uint16_t canonical_nan16 = 0x7fff; /* the canonical f16 and bf16 NaN (CUDART_NAN_FP16/BF16) */

/* .relu (fma, cvt to f16 and bf16): "clamps the result to 0 if negative", and a NaN result becomes the
 * canonical NaN. -0 is taken to 0 too (a choice: the ISA does not say whether it counts as negative). */
static uint16_t relu16(uint16_t v, int h)
{
    if (isnan(half_in(v, h)))
        return canonical_nan16;
    return (v & 0x8000) ? 0 : v;
}

/* .ftz: "flushes subnormal inputs and results to sign-preserving zero" (f16 forms; bf16 has no .ftz). */
static inline float ftz16(float f, int h)
{
    return fabsf(f) < (h == T_BF16 ? 0x1p-126f : 0x1p-14f) ? copysignf(0.0f, f) : f;
}

static inline uint64_t ftz16_bits(uint64_t v) { return (v & 0x7c00) == 0 ? v & 0x8000 : v; }

/* a * b + c rounded once to the 16-bit format. The product is exact in binary64 (at most 2 x 11
 * significant bits); the sum is rounded to binary64 "to odd" (TwoSum gives the error; an inexact even
 * result moves to its odd neighbour toward the exact value), and rounding to odd with at least two
 * extra bits, then to nearest, is one rounding to nearest (Boldo and Melquiond, 2008): no tie is made
 * or broken by the intermediate step, however far apart the exponents of a * b and c are. */
static uint64_t fma_half(float a, float b, float c, int h)
{
    const double p = (double)a * (double)b, s = p + (double)c;
    double odd = s;
    if (isfinite(s)) {
        const double t = s - p, error = (p - (s - t)) + ((double)c - t);
        uint64_t bits;
        memcpy(&bits, &s, 8);
        if (error != 0.0 && !(bits & 1))
            odd = nextafter(s, error > 0.0 ? INFINITY : -INFINITY);
    }
    return h == T_BF16 ? emu_to_bf16(odd, EMU_ROUND_NEAREST) : emu_to_f16(odd, EMU_ROUND_NEAREST);
}

/* min/max as their .f32 forms ("Half Precision Comparison Instructions: min, max"): a NaN operand
 * yields the other (both NaN: the canonical NaN); .NaN: any NaN operand yields the canonical NaN;
 * -0.0 < +0.0. */
static uint64_t min_max_half(bool is_min, bool nan_wins, uint64_t xa, uint64_t xb, float a, float b)
{
    if (isnan(a) || isnan(b))
        return nan_wins || (isnan(a) && isnan(b)) ? canonical_nan16 : isnan(a) ? xb : xa;
    if (a == b) /* equal, or +0 and -0 */
        return is_min ? ((xa & 0x8000) ? xa : xb) : ((xa & 0x8000) ? xb : xa);
    return is_min == (a < b) ? xa : xb;
}

static __attribute__((noinline)) step alu_f16(const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t m)
{
    const int t = in->type;
    const bool pair = t == T_F16X2 || t == T_BF16X2;
    const int h = (t == T_BF16 || t == T_BF16X2) ? T_BF16 : T_F16;
    const bool ftz = (in->flags & F_FTZ) != 0;
    uint64_t *d = D(0);
    FOR_LANES(m, l) {
        uint64_t out = 0;
        for (int part = 0; part < (pair ? 2 : 1); part++) {
            int shift = 16 * part;
            const uint64_t xa = (S(0)[l] >> shift) & 0xffff, xb = in->n_src > 1 ? (S(1)[l] >> shift) & 0xffff : 0;
            float x = half_in(xa, h), y = in->n_src > 1 ? half_in(xb, h) : 0.0f;
            float z = in->n_src > 2 ? half_in(S(2)[l] >> shift, h) : 0.0f;
            if (ftz)
                x = ftz16(x, h), y = ftz16(y, h), z = ftz16(z, h);
            uint64_t v;
            switch (in->op) {
            case OP_ADD: v = half_out(x + y, h); break;
            case OP_SUB: v = half_out(x - y, h); break;
            case OP_MUL: v = half_out(x * y, h); break;
            case OP_FMA: v = fma_half(x, y, z, h); break;
            case OP_NEG: v = xa ^ 0x8000; break;
            case OP_ABS: v = xa & 0x7fff; break;
            case OP_MIN: case OP_MAX: {
                const uint64_t ya = ftz && fabsf(x) == 0.0f ? xa & 0x8000 : xa, yb = ftz && fabsf(y) == 0.0f ? xb & 0x8000 : xb;
                v = min_max_half(in->op == OP_MIN, in->flags & F_NAN, ya, yb, x, y);
                break;
            }
            default: v = 0x7fff; break;
            }
            if (in->flags & F_SAT)
                v = half_out(sat32(half_in(v, h)), h);
            if (ftz && h == T_F16 && in->op != OP_NEG && in->op != OP_ABS)
                v = ftz16_bits(v);
            if (in->flags & F_RELU)
                v = relu16((uint16_t)v, h);
            out |= (v & 0xffff) << shift;
        }
        d[l] = out;
    }
    return STEP_NEXT;
}

static step alu_logic(const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t m)
{
    const int bits = ptx_type_bits((ptx_type)in->type);
    const uint64_t mask = width_mask(bits);
    uint64_t *d = D(0);
    const uint64_t *a = S(0), *b = in->n_src > 1 ? S(1) : NULL, *c = in->n_src > 2 ? S(2) : NULL;
    if (int_whole_warp_op(in)) {
        int_whole_warp(in, d, a, b, c, m);
        return STEP_NEXT;
    }
    switch (in->op) {
    case OP_NOT: FOR_LANES(m, l) d[l] = ~a[l] & mask; break;
    case OP_CNOT: FOR_LANES(m, l) d[l] = (a[l] & mask) == 0; break;
    case OP_SHF: /* "shf": the 64-bit [b:a] shifted, clamp: n = min(c, 32), wrap: n = c & 31 */
        FOR_LANES(m, l) {
            uint32_t n = (in->flags & F_SHIFT_CLAMP) ? ((uint32_t)c[l] > 32 ? 32 : (uint32_t)c[l]) : (uint32_t)c[l] & 31;
            uint64_t both = (b[l] & 0xffffffffu) << 32 | (a[l] & 0xffffffffu);
            d[l] = (in->flags & F_SHIFT_LEFT) ? (both << n) >> 32 : (both >> n) & 0xffffffffu;
        }
        break;
    case OP_LOP3: /* "lop3": d[i] = immLut[(a[i] << 2) | (b[i] << 1) | c[i]] */
        FOR_LANES(m, l) {
            uint32_t lut = (uint32_t)S(3)[l] & 0xff, x = (uint32_t)a[l], y = (uint32_t)b[l], z = (uint32_t)c[l], v = 0;
            for (int i = 0; i < 8; i++)
                if (lut >> i & 1)
                    v |= ((i & 4) ? x : ~x) & ((i & 2) ? y : ~y) & ((i & 1) ? z : ~z);
            d[l] = v;
        }
        break;
    case OP_POPC: FOR_LANES(m, l) d[l] = (uint64_t)__builtin_popcountll(a[l] & mask); break;
    case OP_CLZ:
        FOR_LANES(m, l) {
            uint64_t v = a[l] & mask;
            d[l] = v ? (uint64_t)(__builtin_clzll(v) - (64 - bits)) : (uint64_t)bits;
        }
        break;
    case OP_BFIND: /* "bfind": the most significant bit that differs from the sign (a signed a < 0 is
                      complemented first); .shiftamt: the left shift that brings it to the top; none: ~0 */
        FOR_LANES(m, l) {
            uint64_t v = a[l] & mask;
            if (is_signed(in->type) && (v >> (bits - 1) & 1))
                v = ~v & mask;
            const uint32_t position = v ? 63 - (uint32_t)__builtin_clzll(v) : 0xffffffffu;
            d[l] = v && in->mode ? (uint32_t)(bits - 1) - position : position;
        }
        break;
    case OP_DP4A: /* "dp4a": c + the four byte products; "dp2a": c + a's two halves times b's bytes 0, 1
                     (.lo) or 2, 3 (.hi); each part zero- or sign-extended as its type says */
    case OP_DP2A:
        FOR_LANES(m, l) {
            const bool a_signed = in->type == T_S32, b_signed = in->stype == T_S32, four = in->op == OP_DP4A;
            const int a_bits = four ? 8 : 16, first_b = four || !(in->flags & F_HI) ? 0 : 2;
            uint32_t sum = (uint32_t)c[l];
            for (int i = 0; i < (four ? 4 : 2); i++) {
                const uint64_t x = a[l] >> (a_bits * i), y = b[l] >> (8 * (first_b + i));
                const int64_t xv = a_signed ? sign_extend(x, a_bits) : (int64_t)(x & width_mask(a_bits));
                const int64_t yv = b_signed ? sign_extend(y, 8) : (int64_t)(y & 0xff);
                sum += (uint32_t)(xv * yv);
            }
            d[l] = sum;
        }
        break;
    case OP_BREV:
        FOR_LANES(m, l) {
            uint64_t v = 0;
            for (int i = 0; i < bits; i++)
                v |= (a[l] >> i & 1) << (bits - 1 - i);
            d[l] = v;
        }
        break;
    case OP_BFE: /* "bfe": pos = b & 0xff, len = c & 0xff; the field is bits [pos, pos + len) cut at the msb,
                    moved to bit 0; the bits above it are the sign (the field's top bit, signed forms) or 0 */
        FOR_LANES(m, l) {
            const uint32_t pos = (uint32_t)b[l] & 0xff, len = (uint32_t)c[l] & 0xff, msb = (uint32_t)bits - 1;
            const uint32_t n = pos > msb ? 0 : len < bits - pos ? len : bits - pos; /* the field's bits */
            const uint64_t sbit = is_signed(in->type) && len ? a[l] >> (pos + len - 1 < msb ? pos + len - 1 : msb) & 1 : 0;
            const uint64_t field = n ? a[l] >> pos & width_mask((int)n) : 0;
            d[l] = field | (sbit ? mask & ~width_mask((int)n) : 0);
        }
        break;
    case OP_BFI: /* "bfi": f = b with bits [pos, pos + len), cut at the msb, taken from a's low bits */
        FOR_LANES(m, l) {
            const uint32_t pos = (uint32_t)c[l] & 0xff, len = (uint32_t)S(3)[l] & 0xff;
            const uint32_t n = pos >= (uint32_t)bits ? 0 : len < bits - pos ? len : bits - pos; /* the field's bits */
            const uint64_t field = n ? width_mask((int)n) << pos : 0;
            d[l] = (b[l] & mask & ~field) | (n ? a[l] << pos & field : 0);
        }
        break;
    case OP_PRMT: {
        /* "prmt": bytes 0-3 from a, 4-7 from b; the default mode picks each result byte by a nibble of c
         * (bit 3 replicates the picked byte's sign); the other modes by a table */
        static const uint8_t tables[7][4][4] = {
            {{0}},
            {{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}}, /* f4e: byte j of d, for c & 3 */
            {{0, 7, 6, 5}, {1, 0, 7, 6}, {2, 1, 0, 7}, {3, 2, 1, 0}}, /* b4e */
            {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}}, /* rc8 */
            {{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}}, /* ecl */
            {{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}}, /* ecr */
            {{0, 1, 0, 1}, {2, 3, 2, 3}, {0, 1, 0, 1}, {2, 3, 2, 3}}, /* rc16 */
        };
        FOR_LANES(m, l) {
            uint64_t bytes = (b[l] & 0xffffffffu) << 32 | (a[l] & 0xffffffffu);
            uint32_t sel = (uint32_t)c[l], v = 0;
            for (int j = 0; j < 4; j++) {
                uint32_t byte;
                if (in->mode == PRMT_DEFAULT) {
                    uint32_t s = sel >> (4 * j) & 0xf;
                    byte = (uint32_t)(bytes >> (8 * (s & 7))) & 0xff;
                    if (s & 8)
                        byte = (byte & 0x80) ? 0xff : 0;
                } else {
                    byte = (uint32_t)(bytes >> (8 * tables[in->mode][sel & 3][j])) & 0xff;
                }
                v |= byte << (8 * j);
            }
            d[l] = v;
        }
        break;
    }
    default:
        return STEP_FAULT;
    }
    return STEP_NEXT;
}

/* PTX ISA, "Floating Point Comparisons" and "Integer and Bit-Size Comparisons". */
/* setp/set on floats ("Comparison and Selection Instructions": the u-forms are true when either operand is
 * NaN, the others false), for the lanes of m: the lanes where it holds. */
static uint32_t compare_floats(int cmp, int type, const uint64_t *a, const uint64_t *b, bool ftz, uint32_t m)
{
    uint32_t holds = 0;
    FOR_LANES(m, l) {
        double x, y;
        if (type == T_F32) {
            float fx = f32_of(a[l]), fy = f32_of(b[l]);
            if (ftz)
                fx = ftz32(fx), fy = ftz32(fy);
            x = fx, y = fy;
        } else if (type == T_F64) {
            x = f64_of(a[l]), y = f64_of(b[l]);
        } else {
            x = half_in(a[l], type), y = half_in(b[l], type);
        }
        bool unordered = isnan(x) || isnan(y), t;
        switch (cmp) {
        case CMP_EQ: t = !unordered && x == y; break;
        case CMP_NE: t = !unordered && x != y; break;
        case CMP_LT: t = !unordered && x < y; break;
        case CMP_LE: t = !unordered && x <= y; break;
        case CMP_GT: t = !unordered && x > y; break;
        case CMP_GE: t = !unordered && x >= y; break;
        case CMP_EQU: t = unordered || x == y; break;
        case CMP_NEU: t = unordered || x != y; break;
        case CMP_LTU: t = unordered || x < y; break;
        case CMP_LEU: t = unordered || x <= y; break;
        case CMP_GTU: t = unordered || x > y; break;
        case CMP_GEU: t = unordered || x >= y; break;
        case CMP_NUM: t = !unordered; break;
        case CMP_NAN: t = unordered; break;
        default: t = false; break;
        }
        holds |= (uint32_t)t << l;
    }
    return holds;
}

/* setp/set on integers: into holds[l], 1 where it holds and 0 where not, for every lane (an inactive lane's
 * register is any value, and comparing it is harmless; its verdict is not used). Each operand becomes an
 * unsigned key whose order is the comparison's: the value cut to the type's width, or for lt/le/gt/ge of a
 * signed type, sign-extended with its sign bit flipped (so unsigned order is signed order); eq and ne compare
 * the bits, lo/ls/hi/hs are unsigned. The comparison is chosen once for the warp, not per lane, and each is a
 * loop the compiler vectorizes. */
VECTOR_COPIES
static void compare_integers(int cmp, int type, const uint64_t *a, const uint64_t *b, uint64_t holds[LANES])
{
    const int bits = ptx_type_bits((ptx_type)type);
    const uint64_t mask = width_mask(bits);
    const bool signed_order = is_signed(type) && cmp >= CMP_LT && cmp <= CMP_GE;
    uint64_t x[LANES], y[LANES];
    if (signed_order)
        for (uint32_t l = 0; l < LANES; l++)
            x[l] = (uint64_t)sign_extend(a[l], bits) ^ (1ull << 63), y[l] = (uint64_t)sign_extend(b[l], bits) ^ (1ull << 63);
    else
        for (uint32_t l = 0; l < LANES; l++)
            x[l] = a[l] & mask, y[l] = b[l] & mask;
    switch (cmp) {
    case CMP_EQ: for (uint32_t l = 0; l < LANES; l++) holds[l] = x[l] == y[l]; break;
    case CMP_NE: for (uint32_t l = 0; l < LANES; l++) holds[l] = x[l] != y[l]; break;
    case CMP_LT: case CMP_LO: for (uint32_t l = 0; l < LANES; l++) holds[l] = x[l] < y[l]; break;
    case CMP_LE: case CMP_LS: for (uint32_t l = 0; l < LANES; l++) holds[l] = x[l] <= y[l]; break;
    case CMP_GT: case CMP_HI: for (uint32_t l = 0; l < LANES; l++) holds[l] = x[l] > y[l]; break;
    case CMP_GE: case CMP_HS: for (uint32_t l = 0; l < LANES; l++) holds[l] = x[l] >= y[l]; break;
    default: for (uint32_t l = 0; l < LANES; l++) holds[l] = 0; break;
    }
}

/* An integral value by cvt's integer rounding: .rni nearest-even (the FPU's default mode), .rzi toward
 * zero, .rmi toward -inf, .rpi toward +inf. */
static double round_integral(double x, int rounding)
{
    switch (rounding) {
    case RND_RZI: return trunc(x);
    case RND_RMI: return floor(x);
    case RND_RPI: return ceil(x);
    default: return nearbyint(x);
    }
}

/* cvt between every pair the project uses (PTX ISA, "cvt"; "Scalar Conversions"). */
/* cvt between integer types without .sat: extended by the source's signedness, then chopped to the
 * destination's width and extended by its signedness to the register's width ("Scalar Conversions":
 * cvt.s16.u32 into a 32-bit register sign-extends; slots are 64 bits). Both steps are one formula: a value
 * cut to a width by its mask, then ((v ^ sign) - sign) with sign the width's top bit, sign-extends it (and
 * with sign 0, for an unsigned type, leaves it): no branch, so a warp's lanes convert in vector instructions. */
typedef struct {
    uint64_t from_mask, from_sign, to_mask, to_sign;
} int_conversion;

static inline int_conversion int_conversion_of(const insn *in)
{
    const int sbits = ptx_type_bits((ptx_type)in->stype), dbits = ptx_type_bits((ptx_type)in->type);
    return (int_conversion){width_mask(sbits), is_signed(in->stype) ? 1ull << (sbits - 1) : 0, width_mask(dbits),
                            is_signed(in->type) ? 1ull << (dbits - 1) : 0};
}

static inline uint64_t convert_integer(int_conversion c, uint64_t a)
{
    const uint64_t v = ((a & c.from_mask) ^ c.from_sign) - c.from_sign;
    return ((v & c.to_mask) ^ c.to_sign) - c.to_sign;
}

/* An integer cvt without .sat for a warp: every lane converted in a loop the compiler makes vector instructions
 * of (VECTOR_COPIES, interp.h), written only for `lanes`. */
VECTOR_COPIES
static void convert_integers(int_conversion c, uint64_t *d, const uint64_t *a, uint32_t lanes)
{
    if (lanes == FULL_MASK)
        for (uint32_t l = 0; l < LANES; l++)
            d[l] = convert_integer(c, a[l]);
    else
        for (uint32_t l = 0; l < LANES; l++)
            d[l] = (lanes & lane_bit[l]) ? convert_integer(c, a[l]) : d[l];
}

static uint64_t convert(const insn *in, uint64_t a, uint64_t b_for_pair)
{
    const int dt = in->type, st = in->stype;
    const int dbits = ptx_type_bits((ptx_type)dt), sbits = ptx_type_bits((ptx_type)st);
    const bool sat = in->flags & F_SAT, ftz = in->flags & F_FTZ;
    if (dt == T_F16X2 || dt == T_BF16X2) { /* "a goes to the upper half of d, b to the lower half" */
        uint16_t (*to16)(double, emu_rounding) = dt == T_F16X2 ? emu_to_f16 : emu_to_bf16;
        const int h = dt == T_F16X2 ? T_F16 : T_BF16;
        emu_rounding mode = rounding_of(in->rounding);
        uint16_t high, low;
        if (dt == T_F16X2 && mode == EMU_ROUND_NEAREST) /* the common case, on the bits (half.c) */
            high = emu_f32_to_f16(f32_of(a)), low = emu_f32_to_f16(f32_of(b_for_pair));
        else
            high = to16(f32_of(a), mode), low = to16(f32_of(b_for_pair), mode);
        if (in->flags & F_RELU)
            high = relu16(high, h), low = relu16(low, h);
        return (uint64_t)high << 16 | low;
    }
    if (!is_float(dt) && !is_float(st)) { /* integer <-> integer: extend by the source, chop to the dest */
        if (!sat)
            return convert_integer(int_conversion_of(in), a);
        /* .sat: clamped to the destination's range, where the chop that follows changes nothing */
        int64_t v = is_signed(st) ? sign_extend(a, sbits) : (int64_t)(a & width_mask(sbits));
        const int64_t lo = is_signed(dt) ? -(int64_t)(1ull << (dbits - 1)) : 0;
        const uint64_t hi = is_signed(dt) ? (1ull << (dbits - 1)) - 1 : width_mask(dbits);
        const bool above = is_signed(st) ? (v >= 0 && (uint64_t)v > hi) : (a & width_mask(sbits)) > hi;
        if (is_signed(st) && v < lo)
            v = lo;
        else if (above)
            v = (int64_t)hi;
        return is_signed(dt) ? (uint64_t)sign_extend((uint64_t)v, dbits) : (uint64_t)v & width_mask(dbits);
    }
    /* the source as a double (exact for every type here except 64-bit integers beyond 2^53) */
    double x;
    bool src_int64 = false;
    if (st == T_F32)
        x = ftz ? ftz32(f32_of(a)) : f32_of(a);
    else if (st == T_F64)
        x = f64_of(a);
    else if (st == T_F16 || st == T_BF16)
        x = half_in(a, st);
    else if (is_signed(st))
        x = (double)sign_extend(a, sbits), src_int64 = sbits == 64;
    else
        x = (double)(a & width_mask(sbits)), src_int64 = sbits == 64;
    if (is_float(dt)) {
        if (in->rounding >= RND_RNI && in->rounding <= RND_RPI) /* cvt.rni.f32.f32: round to an integral value */
            x = round_integral(x, in->rounding);
        if (dt == T_F16 || dt == T_BF16) { /* rounded once from the exact source value, in the mode asked */
            uint16_t (*to16)(double, emu_rounding) = dt == T_F16 ? emu_to_f16 : emu_to_bf16;
            const uint16_t v = to16(sat ? sat64(x) : x, rounding_of(in->rounding));
            return (in->flags & F_RELU) ? relu16(v, dt) : v;
        }
        /* to f32 or f64: the host FPU rounds, in a directed mode only when one is asked for */
        const bool directed = in->rounding == RND_RZ || in->rounding == RND_RM || in->rounding == RND_RP;
        const int saved = directed ? fegetround() : 0;
        if (directed)
            fesetround(fe_mode(in->rounding));
        uint64_t out;
        if (dt == T_F64) {
            double v = src_int64 ? (is_signed(st) ? (double)(int64_t)a : (double)a) : x;
            out = bits_f64(sat ? sat64(v) : v);
        } else {
            float v = src_int64 ? (is_signed(st) ? (float)(int64_t)a : (float)a) : (float)x;
            if (ftz)
                v = ftz32(v);
            out = bits_f32(sat ? sat32(v) : v);
        }
        if (directed)
            fesetround(saved);
        return out;
    }
    /* float -> integer: "clamped to the destination range by default"; NaN -> 0 (or the top bit for
     * an f64 source or a 64-bit destination) */
    if (isnan(x))
        return (st == T_F64 || dbits == 64) ? (is_signed(dt) ? (uint64_t)sign_extend(1ull << (dbits - 1), dbits)
                                                             : 1ull << (dbits - 1))
                                            : 0;
    double rounded = round_integral(x, in->rounding);
    if (is_signed(dt)) { /* clamped, and sign-extended to the register like the integer case */
        double lo = -ldexp(1.0, dbits - 1), hi = ldexp(1.0, dbits - 1);
        if (rounded < lo)
            return (uint64_t)(int64_t)lo;
        if (rounded >= hi)
            return width_mask(dbits) >> 1;
        return (uint64_t)(int64_t)rounded;
    }
    double hi = ldexp(1.0, dbits);
    if (rounded <= 0.0)
        return 0;
    if (rounded >= hi)
        return width_mask(dbits);
    return (uint64_t)rounded;
}

/* ---------------------------------------------------------------------------------------------- */
/* The handlers                                                                                   */

/* PTX ISA, "Extended-Precision Integer Arithmetic Instructions": add.cc, addc, sub.cc, subc, mad.cc and
 * madc. Each thread has one condition-code bit, CC.CF: a .cc form writes the carry out of its addition
 * (for sub, the borrow out of its subtraction) to it, and the c forms add it in (subc subtracts it).
 * Signed and unsigned forms compute the same bits. mad's addend is t<hi> or t<lo> of the product a * b,
 * signed for .s types. Nothing gives CC.CF a value before the thread's first .cc instruction: reading it
 * then is an error here. */
step exec_carry(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                        uint32_t m)
{
    const int bits = ptx_type_bits((ptx_type)in->type);
    const uint64_t mask = width_mask(bits);
    const bool carry_in = in->op == OP_ADDC || in->op == OP_SUBC || in->op == OP_MADC;
    const bool subtract = in->op == OP_SUB || in->op == OP_SUBC;
    const bool multiply = in->op == OP_MAD || in->op == OP_MADC;
    if (carry_in)
        FOR_LANES(m, l) if (w->carry[l] == CARRY_UNSET) {
            fault(b, in, l, w, EMU_ERR_INVALID, "%s reads CC.CF, which no .cc instruction of this thread has written "
                  "(PTX ISA, \"Extended-Precision Integer Arithmetic Instructions\")", ptx_op_name((ptx_op)in->op));
            return STEP_FAULT;
        }
    uint64_t *d = D(0);
    const uint64_t *first = S(0), *second = S(1), *third = multiply ? S(2) : NULL;
    FOR_LANES(m, l) {
        const unsigned __int128 cf = carry_in ? w->carry[l] : 0;
        unsigned __int128 x = first[l] & mask, y = second[l] & mask; /* add, sub: d = x +- y (+- CC.CF) */
        if (multiply) { /* mad: d = t<hi or lo> + c (+ CC.CF), t = a * b */
            const __int128 t = is_signed(in->type)
                                   ? (__int128)sign_extend(first[l], bits) * sign_extend(second[l], bits)
                                   : (__int128)(x * y);
            x = (unsigned __int128)((in->flags & F_HI) ? t >> bits : t) & mask;
            y = third[l] & mask;
        }
        const unsigned __int128 v = subtract ? x - y - cf : x + y + cf;
        if (in->flags & F_CC) /* the borrow: y and the borrow in exceed x; the carry: bit `bits` of the sum */
            w->carry[l] = (uint8_t)(subtract ? y + cf > x : (v >> bits) & 1);
        d[l] = (uint64_t)v & mask;
    }
    return STEP_NEXT;
}

/* mov's copy and selp's choice, every lane computed in a vector loop (VECTOR_COPIES, interp.h) and written
 * only for `lanes`: a destination may be a source. */
VECTOR_COPIES
static void copy_lanes(uint64_t *d, const uint64_t *a, uint64_t mask, uint32_t lanes)
{
    for (int l = 0; l < LANES; l++)
        d[l] = (lanes & lane_bit[l]) ? a[l] & mask : d[l];
}

VECTOR_COPIES
static void select_lanes(uint64_t *d, const uint64_t *x, const uint64_t *y, const uint64_t *p, uint32_t lanes)
{
    for (int l = 0; l < LANES; l++)
        d[l] = (lanes & lane_bit[l]) ? ((p[l] & 1) ? x[l] : y[l]) : d[l];
}

/* mov: a copy, or a pack or unpack of parts, low to high. A .b128 value is two 64-bit slots, its low half
 * first (parse.c, register_slot): a copy moves each slot, and part i of bits bits lies in slot
 * i * bits / 64 at bit i * bits % 64. */
step exec_mov(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                     uint32_t m)
{
    const int whole = ptx_type_bits((ptx_type)in->type);
    if (in->n_dst == in->n_src) { /* one slot, or a .b128's two (from or to two .b64 parts alike) */
        const uint64_t mask = width_mask(whole / in->n_dst);
        for (int i = 0; i < in->n_dst; i++)
            copy_lanes(D(i), S(i), mask, m);
        return STEP_NEXT;
    }
    const bool unpack = in->n_dst > in->n_src;
    const int parts = unpack ? in->n_dst : in->n_src, bits = whole / parts;
    const uint64_t mask = width_mask(bits);
    FOR_LANES(m, l) {
        uint64_t value[2] = {0, 0}; /* the whole, slot by slot */
        if (unpack) {
            for (int i = 0; i < in->n_src; i++)
                value[i] = S(i)[l];
            for (int i = 0; i < parts; i++)
                D(i)[l] = value[i * bits / 64] >> (i * bits % 64) & mask;
        } else {
            for (int i = 0; i < parts; i++)
                value[i * bits / 64] |= (S(i)[l] & mask) << (i * bits % 64);
            for (int i = 0; i < in->n_dst; i++)
                D(i)[l] = value[i];
        }
    }
    return STEP_NEXT;
}

/* Arithmetic, by the instruction's type: the ALU families above. The lane-by-lane ones are not inlined here
 * (noinline), so the whole-warp forms, the commonest by far, dispatch without their stack frames. */
step exec_arithmetic(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o,
                            uint32_t active, uint32_t m)
{
    switch (in->type) {
    case T_F32: return alu_f32(in, r, o, m);
    case T_F64: return alu_f64(in, r, o, m);
    case T_F16: case T_F16X2: case T_BF16: case T_BF16X2: return alu_f16(in, r, o, m);
    default:
        if (in->op == OP_FMA || in->op >= OP_RCP) {
            fault(b, in, 0, w, EMU_ERR_INVALID, "%s on an integer type", ptx_op_name((ptx_op)in->op));
            return STEP_FAULT;
        }
        return (in->flags & F_CC) ? exec_carry(b, w, in, r, o, active, m) : alu_int(in, r, o, m);
    }
}

step exec_logic(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                       uint32_t m)
{
    return alu_logic(in, r, o, m);
}

step exec_testp(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                       uint32_t m)
{
    FOR_LANES(m, l) {
        double x = in->type == T_F32 ? (double)f32_of(S(0)[l]) : f64_of(S(0)[l]);
        int cls = in->type == T_F32 ? fpclassify(f32_of(S(0)[l])) : fpclassify(x);
        bool v;
        switch (in->mode) {
        case TESTP_FINITE: v = isfinite(x); break;
        case TESTP_INFINITE: v = isinf(x); break;
        case TESTP_NUMBER: v = !isnan(x); break;
        case TESTP_NOTANUMBER: v = isnan(x); break;
        case TESTP_NORMAL: v = cls == FP_NORMAL || cls == FP_ZERO; break; /* "positive and negative zero are
                                                                               considered normal numbers" */
        default: v = cls == FP_SUBNORMAL; break;
        }
        D(0)[l] = v;
    }
    return STEP_NEXT;
}

/* setp and set */
step exec_compare(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                         uint32_t m)
{
    const int cmp_type = in->op == OP_SETP ? in->type : in->stype;
    const uint64_t *lhs = r[o[in->n_dst]], *rhs = r[o[in->n_dst + 1]];
    uint64_t holds[LANES]; /* each lane's verdict, 1 or 0 (an inactive lane's not used) */
    if (is_float(cmp_type)) {
        const uint32_t mask = compare_floats(in->mode, cmp_type, lhs, rhs, in->flags & F_FTZ, m);
        for (uint32_t l = 0; l < LANES; l++)
            holds[l] = (mask & lane_bit[l]) != 0;
    } else {
        compare_integers(in->mode, cmp_type, lhs, rhs, holds);
    }
    if (m == FULL_MASK && !in->combine && in->op == OP_SETP) { /* the common setp, in loops without a bit scan */
        uint64_t *p = D(0);
        for (uint32_t l = 0; l < LANES; l++)
            p[l] = holds[l];
        if (in->n_dst == 2) {
            uint64_t *q = D(1);
            for (uint32_t l = 0; l < LANES; l++)
                q[l] = holds[l] ^ 1;
        }
        return STEP_NEXT;
    }
    FOR_LANES(m, l) {
        bool t = holds[l], u = !t;
        if (in->combine) {
            bool c = r[o[in->n_dst + 2]][l] & 1;
            if (in->flags & F_NEG_PRED)
                c = !c;
            t = in->combine == 1 ? t && c : in->combine == 2 ? t || c : t != c;
            u = in->combine == 1 ? u && c : in->combine == 2 ? u || c : u != c;
        }
        if (in->op == OP_SETP) {
            D(0)[l] = t;
            if (in->n_dst == 2)
                D(1)[l] = u;
        } else { /* set: 0xffffffff or 1.0f for true */
            D(0)[l] = in->type == T_F32 ? (t ? 0x3f800000u : 0) : (t ? width_mask(ptx_type_bits((ptx_type)in->type)) : 0);
        }
    }
    return STEP_NEXT;
}

/* selp and slct */
step exec_select(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                        uint32_t m)
{
    if (in->op == OP_SELP) {
        select_lanes(D(0), S(0), S(1), S(2), m);
        return STEP_NEXT;
    }
    FOR_LANES(m, l) {
        bool take_a = in->stype == T_F32 ? f32_of(S(2)[l]) >= 0.0f : sign_extend(S(2)[l], 32) >= 0;
        D(0)[l] = take_a ? S(0)[l] : S(1)[l];
    }
    return STEP_NEXT;
}

/* Every lane's f32 (its slot's low 32 bits) rounded to f16, all 32 in one go (emu_f32_to_f16_n: eight at a
 * time where the CPU converts them); an inactive lane's is not used. */
static void lanes_to_f16(const uint64_t *slot, uint16_t out[LANES])
{
    float f[LANES];
    for (int l = 0; l < LANES; l++)
        f[l] = f32_of(slot[l]);
    emu_f32_to_f16_n(f, out, LANES);
}

/* Every lane's f16 (its slot's low 16 bits) as the bits of an f32, all 32 in one go (emu_f16_to_f32_n: eight
 * at a time where the CPU converts them). */
static void lanes_from_f16(const uint64_t *slot, uint32_t out[LANES])
{
    uint16_t h[LANES];
    float f[LANES];
    for (int l = 0; l < LANES; l++)
        h[l] = (uint16_t)slot[l];
    emu_f16_to_f32_n(h, f, LANES);
    memcpy(out, f, sizeof f);
}

step exec_cvt(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                     uint32_t m)
{
    if (!is_float(in->type) && !is_float(in->stype) && !(in->flags & F_SAT)) { /* the common case */
        convert_integers(int_conversion_of(in), D(0), S(0), m);
    } else if (in->type == T_F32 && in->stype == T_F16 && in->rounding == RND_NONE && !(in->flags & (F_SAT | F_FTZ))) {
        uint32_t f[LANES]; /* exact; a NaN quiet, as convert() makes it (its trip through binary64 quiets it) */
        lanes_from_f16(S(0), f);
        FOR_LANES(m, l) D(0)[l] = (f[l] & 0x7fffffff) > 0x7f800000 ? f[l] | 0x400000 : f[l];
    } else if (in->type == T_F16 && in->stype == T_F32 && in->rounding == RND_RN &&
               !(in->flags & (F_SAT | F_FTZ | F_RELU))) { /* as convert(), without the double */
        uint16_t h[LANES];
        lanes_to_f16(S(0), h);
        FOR_LANES(m, l) D(0)[l] = h[l];
    } else if (in->type == T_F16X2 && in->stype == T_F32 && in->rounding == RND_RN &&
               !(in->flags & (F_SAT | F_FTZ | F_RELU))) { /* a pair, "a goes to the upper half": as convert() */
        uint16_t upper[LANES], lower[LANES];
        lanes_to_f16(S(0), upper);
        lanes_to_f16(S(1), lower);
        FOR_LANES(m, l) D(0)[l] = (uint64_t)upper[l] << 16 | lower[l];
    } else {
        FOR_LANES(m, l) D(0)[l] = convert(in, S(0)[l], in->n_src > 1 ? S(1)[l] : 0);
    }
    return STEP_NEXT;
}

/* "cvta": a state-space address <-> a generic one, by the window of that space */
step exec_cvta(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                      uint32_t m)
{
    uint64_t window = in->space == SPACE_SHARED  ? EMU_SHARED_WINDOW
                      : in->space == SPACE_LOCAL ? EMU_LOCAL_WINDOW
                      : in->space == SPACE_PARAM ? EMU_PARAM_WINDOW
                                                 : 0;
    uint64_t mask = width_mask(ptx_type_bits((ptx_type)in->type));
    FOR_LANES(m, l) D(0)[l] = ((in->flags & F_CVTA_TO) ? S(0)[l] - window : S(0)[l] + window) & mask;
    return STEP_NEXT;
}

step exec_isspacep(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                          uint32_t m)
{
    FOR_LANES(m, l) {
        uint64_t a = S(0)[l];
        bool shared = a - EMU_SHARED_WINDOW < EMU_WINDOW_SIZE, local = a - EMU_LOCAL_WINDOW < EMU_WINDOW_SIZE;
        D(0)[l] = in->space == SPACE_SHARED ? shared : in->space == SPACE_LOCAL ? local : !shared && !local;
    }
    return STEP_NEXT;
}
