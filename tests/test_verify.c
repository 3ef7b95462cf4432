/* Verification: exact output passes, NaN/Inf and unwritten (poisoned) elements fail, one bad element
 * among many fails through max_err, the tolerances scale as documented, and TF32-sized error fails
 * an fp32 kernel. The bound per element: the rounding distance on hand-worked values, and on simulated
 * dot products, fp32 accumulation rounded to fp16 passes while an fp16 accumulator, or partial sums
 * stored as fp16 before the final sum, fails. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tensor.h"
#include "verify.h"
#include "test_util.h"

#define COUNT 10000

/* OUTPUTS dot products of LENGTH fp16-valued products, accumulated three ways and rounded to fp16 */
#define OUTPUTS 4096
#define LENGTH 64
#define SPLITS 4

static float to_half(double value) /* round to fp16 (through fp32: exact for the sums below) */
{
    return half_to_float(float_to_half((float)value));
}

static void simulated_dot_products(void)
{
    static double ref[OUTPUTS], bound[OUTPUTS];
    static float fp32_sum[OUTPUTS], fp16_sum[OUTPUTS], fp16_partials[OUTPUTS];
    float a[LENGTH], b[LENGTH];
    for (int i = 0; i < OUTPUTS; i++) {
        fill_uniform(a, LENGTH, 100 + (uint64_t)i);
        fill_uniform(b, LENGTH, 900000 + (uint64_t)i);
        double exact = 0.0, magnitude = 0.0;
        float acc32 = 0.0f, acc16 = 0.0f, total = 0.0f, partial = 0.0f;
        for (int j = 0; j < LENGTH; j++) {
            const float x = to_half(a[j]), y = to_half(b[j]), product = x * y; /* exact in fp32 */
            exact += (double)x * y;
            magnitude += fabs((double)x * y);
            acc32 += product;
            acc16 = to_half(acc16 + product);
            partial += product;
            if ((j + 1) % (LENGTH / SPLITS) == 0) {
                total += to_half(partial);
                partial = 0.0f;
            }
        }
        ref[i] = exact;
        bound[i] = accumulation_error_factor(LENGTH) * magnitude;
        fp32_sum[i] = to_half(acc32);
        fp16_sum[i] = to_half(acc16);
        fp16_partials[i] = to_half(total);
    }
    verify_result r = verify_output(fp32_sum, ref, bound, OUTPUTS, DTYPE_F16, LENGTH, 1.0 / 3.0);
    EXPECT(r.pass && r.excess_ratio <= 1.0, "fp32 accumulation rounded to fp16 is within its bound (worst %.3g)",
           r.excess_ratio);
    r = verify_output(fp16_sum, ref, bound, OUTPUTS, DTYPE_F16, LENGTH, 1.0 / 3.0);
    EXPECT(!r.pass && r.excess_ratio > 1.0, "an fp16 accumulator fails the bound (worst %.3g)", r.excess_ratio);
    r = verify_output(fp16_partials, ref, bound, OUTPUTS, DTYPE_F16, LENGTH, 1.0 / 3.0);
    EXPECT(!r.pass && r.excess_ratio > 1.0, "split-K partials stored as fp16 fail the bound (worst %.3g)",
           r.excess_ratio);
    r = verify_output(fp16_partials, ref, NULL, OUTPUTS, DTYPE_F16, LENGTH, 1.0 / 3.0);
    EXPECT(r.pass, "while the statistics alone let them through (rel %.3g, tol %.3g)", r.rel_l2, r.tol_rel);
}

static void rounding_distances(void)
{
    EXPECT(rounding_distance(1.0, DTYPE_F16) == 0.0 && rounding_distance(-2048.0, DTYPE_F16) == 0.0,
           "fp16 numbers are 0 from themselves");
    EXPECT(rounding_distance(1.0 + ldexp(1.0, -11), DTYPE_F16) == ldexp(1.0, -11),
           "halfway between 1 and 1 + 2^-10: half a spacing");
    EXPECT(rounding_distance(1.0 + ldexp(1.0, -12), DTYPE_F16) == ldexp(1.0, -12), "a quarter spacing above 1");
    EXPECT(rounding_distance(2.0 - ldexp(1.0, -12), DTYPE_F16) == ldexp(1.0, -12),
           "just under 2: nearest is 2, on the same grid");
    EXPECT(rounding_distance(ldexp(3.0, -26), DTYPE_F16) == ldexp(1.0, -26),
           "fp16 subnormals: spacing 2^-24 (3 * 2^-26 is 2^-26 from 2^-24)");
    EXPECT(rounding_distance(1.0 + ldexp(1.0, -24), DTYPE_F32) == ldexp(1.0, -24), "fp32: spacing 2^-23 at 1");
    EXPECT(accumulation_error_factor(100) > 101 * ldexp(1.0, -23) &&
               accumulation_error_factor(100) < 1.001 * 101 * ldexp(1.0, -23),
           "gamma_(n+1) with unit 2^-23");
}

int main(void)
{
    static double ref[COUNT];
    static float out[COUNT];
    float noise[COUNT];
    fill_uniform(noise, COUNT, 9);
    const int64_t length = 576;
    const double typical = sqrt((double)length) / 3.0; /* rms of uniform[-1,1] is 1/sqrt(3) */
    for (int i = 0; i < COUNT; i++) {
        ref[i] = typical * noise[i] * 1.7;
        out[i] = (float)ref[i];
    }
    verify_result result = verify_output(out, ref, NULL, COUNT, DTYPE_F32, length, 1.0 / 3.0);
    EXPECT(result.pass && result.rel_l2 < 1e-7, "fp32-rounded reference passes: rel %g max %g", result.rel_l2,
           result.max_err);

    memcpy(out + 10, (float[]){NAN}, sizeof(float));
    result = verify_output(out, ref, NULL, COUNT, DTYPE_F32, length, 1.0 / 3.0);
    EXPECT(!result.pass && result.nonfinite == 1 && result.worst_index == 10, "one NaN fails");
    memset(out, 0xff, sizeof out); /* the harness's poison */
    result = verify_output(out, ref, NULL, COUNT, DTYPE_F32, length, 1.0 / 3.0);
    EXPECT(!result.pass && result.nonfinite == COUNT, "a poisoned (unwritten) output fails");
    uint16_t poisoned_half = 0xffff;
    EXPECT(isnan(half_to_float(poisoned_half)), "the poison is NaN in fp16 too");

    for (int i = 0; i < COUNT; i++)
        out[i] = (float)ref[i];
    out[1234] += (float)(1e-4 * typical);
    result = verify_output(out, ref, NULL, COUNT, DTYPE_F32, length, 1.0 / 3.0);
    EXPECT(!result.pass && result.worst_index == 1234 && result.rel_l2 < result.tol_rel,
           "one element off by 1e-4 of a typical value fails on max_err alone (rel %g, max %g)", result.rel_l2,
           result.max_err);
    out[1234] = (float)ref[1234];
    out[77] = INFINITY;
    EXPECT(!verify_output(out, ref, NULL, COUNT, DTYPE_F32, length, 1.0 / 3.0).pass, "Inf fails");
    out[77] = (float)ref[77];

    /* TF32-like error (relative 2^-11 per element) fails fp32 and passes fp16 */
    for (int i = 0; i < COUNT; i++)
        out[i] = (float)(ref[i] * (1.0 + ldexp(1.0, -11) * noise[(i * 7) % COUNT]));
    EXPECT(!verify_output(out, ref, NULL, COUNT, DTYPE_F32, length, 1.0 / 3.0).pass, "TF32-sized error fails fp32");
    EXPECT(verify_output(out, ref, NULL, COUNT, DTYPE_F16, length, 1.0 / 3.0).pass, "the same error passes fp16");
    /* an fp16 output rounded from the exact value passes */
    for (int i = 0; i < COUNT; i++)
        out[i] = half_to_float(float_to_half((float)ref[i]));
    result = verify_output(out, ref, NULL, COUNT, DTYPE_F16, length, 1.0 / 3.0);
    EXPECT(result.pass, "fp16-rounded output passes: rel %g (tol %g) max %g (tol %g)", result.rel_l2, result.tol_rel,
           result.max_err, result.tol_max);

    /* an all-zero reference must be matched exactly */
    static double zeros[16];
    static float small[16];
    EXPECT(verify_output(small, zeros, NULL, 16, DTYPE_F32, length, 1.0 / 3.0).pass, "zeros match zeros");
    small[3] = 1e-6f;
    EXPECT(!verify_output(small, zeros, NULL, 16, DTYPE_F32, length, 1.0 / 3.0).pass, "non-zero against zeros fails");

    double tol_short, tol_long, ignored;
    verify_tolerances(DTYPE_F32, 100, &tol_short, &ignored);
    verify_tolerances(DTYPE_F32, 10000, &tol_long, &ignored);
    EXPECT(tol_long > 9 * tol_short && tol_long < 10 * tol_short, "fp32 tolerance grows like sqrt(L)");
    verify_tolerances(DTYPE_F16, 100, &tol_short, &ignored);
    EXPECT(tol_short > ldexp(1.0, -10) && tol_short < 1.1 * ldexp(1.0, -10), "fp16: two units of 2^-11");
    rounding_distances();
    simulated_dot_products();
    return test_summary("test_verify");
}
