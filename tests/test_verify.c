/* Verification: exact output passes, NaN/Inf and unwritten (poisoned) elements fail, one bad element
 * among many fails through max_err, the tolerances scale as documented, and TF32-sized error fails
 * an fp32 kernel. */
#include <stdlib.h>
#include <string.h>

#include "tensor.h"
#include "verify.h"
#include "test_util.h"

#define COUNT 10000

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
    verify_result result = verify_output(out, ref, COUNT, DTYPE_F32, length, 1.0 / 3.0);
    EXPECT(result.pass && result.rel_l2 < 1e-7, "fp32-rounded reference passes: rel %g max %g", result.rel_l2,
           result.max_err);

    memcpy(out + 10, (float[]){NAN}, sizeof(float));
    result = verify_output(out, ref, COUNT, DTYPE_F32, length, 1.0 / 3.0);
    EXPECT(!result.pass && result.nonfinite == 1 && result.worst_index == 10, "one NaN fails");
    memset(out, 0xff, sizeof out); /* the harness's poison */
    result = verify_output(out, ref, COUNT, DTYPE_F32, length, 1.0 / 3.0);
    EXPECT(!result.pass && result.nonfinite == COUNT, "a poisoned (unwritten) output fails");
    uint16_t poisoned_half = 0xffff;
    EXPECT(isnan(half_to_float(poisoned_half)), "the poison is NaN in fp16 too");

    for (int i = 0; i < COUNT; i++)
        out[i] = (float)ref[i];
    out[1234] += (float)(1e-4 * typical);
    result = verify_output(out, ref, COUNT, DTYPE_F32, length, 1.0 / 3.0);
    EXPECT(!result.pass && result.worst_index == 1234 && result.rel_l2 < result.tol_rel,
           "one element off by 1e-4 of a typical value fails on max_err alone (rel %g, max %g)", result.rel_l2,
           result.max_err);
    out[1234] = (float)ref[1234];
    out[77] = INFINITY;
    EXPECT(!verify_output(out, ref, COUNT, DTYPE_F32, length, 1.0 / 3.0).pass, "Inf fails");
    out[77] = (float)ref[77];

    /* TF32-like error (relative 2^-11 per element) fails fp32 and passes fp16 */
    for (int i = 0; i < COUNT; i++)
        out[i] = (float)(ref[i] * (1.0 + ldexp(1.0, -11) * noise[(i * 7) % COUNT]));
    EXPECT(!verify_output(out, ref, COUNT, DTYPE_F32, length, 1.0 / 3.0).pass, "TF32-sized error fails fp32");
    EXPECT(verify_output(out, ref, COUNT, DTYPE_F16, length, 1.0 / 3.0).pass, "the same error passes fp16");
    /* an fp16 output rounded from the exact value passes */
    for (int i = 0; i < COUNT; i++)
        out[i] = half_to_float(float_to_half((float)ref[i]));
    result = verify_output(out, ref, COUNT, DTYPE_F16, length, 1.0 / 3.0);
    EXPECT(result.pass, "fp16-rounded output passes: rel %g (tol %g) max %g (tol %g)", result.rel_l2, result.tol_rel,
           result.max_err, result.tol_max);

    /* an all-zero reference must be matched exactly */
    static double zeros[16];
    static float small[16];
    EXPECT(verify_output(small, zeros, 16, DTYPE_F32, length, 1.0 / 3.0).pass, "zeros match zeros");
    small[3] = 1e-6f;
    EXPECT(!verify_output(small, zeros, 16, DTYPE_F32, length, 1.0 / 3.0).pass, "non-zero against zeros fails");

    double tol_short, tol_long, ignored;
    verify_tolerances(DTYPE_F32, 100, &tol_short, &ignored);
    verify_tolerances(DTYPE_F32, 10000, &tol_long, &ignored);
    EXPECT(tol_long > 9 * tol_short && tol_long < 10 * tol_short, "fp32 tolerance grows like sqrt(L)");
    verify_tolerances(DTYPE_F16, 100, &tol_short, &ignored);
    EXPECT(tol_short > ldexp(1.0, -10) && tol_short < 1.1 * ldexp(1.0, -10), "fp16: two units of 2^-11");
    return test_summary("test_verify");
}
