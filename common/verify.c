/* verify.c: relative L2 and scaled max error against the fp64 reference; NaN never passes. */
#include <math.h>

#include "verify.h"

void verify_tolerances(conv_dtype dtype, int64_t reduction_length, double *tol_rel, double *tol_max)
{
    const double fp32_unit = ldexp(1.0, -24);
    const double output_unit = dtype == DTYPE_F16 ? ldexp(1.0, -11) : fp32_unit;
    double random_walk = fp32_unit * sqrt((double)(reduction_length > 0 ? reduction_length : 1));
    *tol_rel = 4.0 * random_walk + 2.0 * output_unit;
    *tol_max = 8.0 * random_walk + 16.0 * output_unit;
}

double rms_of(const float *data, size_t count)
{
    double sum = 0.0;
    for (size_t i = 0; i < count; i++)
        sum += (double)data[i] * data[i];
    return count ? sqrt(sum / (double)count) : 0.0;
}

verify_result verify_output(const float *out, const double *ref, size_t count, conv_dtype dtype,
                            int64_t reduction_length, double input_rms_product)
{
    verify_result result = {0};
    verify_tolerances(dtype, reduction_length, &result.tol_rel, &result.tol_max);

    double diff_sq = 0.0, ref_sq = 0.0, max_abs = 0.0, max_ref = 0.0;
    for (size_t i = 0; i < count; i++)
        max_ref = fmax(max_ref, fabs(ref[i]));
    for (size_t i = 0; i < count; i++) {
        if (!isfinite(out[i])) {
            if (result.nonfinite++ == 0)
                result.worst_index = i;
            continue;
        }
        double diff = (double)out[i] - ref[i];
        diff_sq += diff * diff;
        ref_sq += ref[i] * ref[i];
        if (fabs(diff) > max_abs) {
            max_abs = fabs(diff);
            if (!result.nonfinite)
                result.worst_index = i;
        }
    }
    if (result.nonfinite) {
        result.rel_l2 = result.max_err = INFINITY;
        result.pass = false;
        return result;
    }
    /* An all-zero reference (an output no tap reaches) must be matched exactly. */
    result.rel_l2 = ref_sq > 0.0 ? sqrt(diff_sq / ref_sq) : (diff_sq > 0.0 ? INFINITY : 0.0);
    /* The size of a typical output: a sum of L random products, or, where an epilogue's bias, scale or
     * residual makes outputs larger than that, a sixth of the largest (about where the largest of many
     * normally distributed values sits), so the largest output's rounding stays within the budget. */
    double typical = fmax(sqrt((double)(reduction_length > 0 ? reduction_length : 1)) * input_rms_product,
                          max_ref / 6.0);
    result.max_err = typical > 0.0 ? max_abs / typical : (max_abs > 0.0 ? INFINITY : 0.0);
    result.pass = result.rel_l2 <= result.tol_rel && result.max_err <= result.tol_max;
    return result;
}
