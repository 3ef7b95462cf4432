/* verify.c: relative L2 and scaled max error against the fp64 reference, a bound per element; NaN
 * never passes.
 *
 * The bound per element, derived. Output element i is a sum of n products a_j * b_j (n = C*R*S per
 * group for fprop, K*R*S for dgrad, N*P*Q for wgrad: problem_reduction_length) whose exact value the
 * fp64 reference gives, ref_i. A kernel forms it in fp32 as v_i, then rounds v_i to the output type.
 *
 * 1. The accumulation. The inputs are values of the kernel's type, so for fp16 each product is exact
 *    in fp32 (11 x 11 significant bits <= 24); an fp32 product is exact inside an fma or rounded once.
 *    Each addition then rounds once. With every rounding within a relative u, the recursive sum obeys
 *        |v_i - ref_i| <= gamma_n * sum_j |a_j b_j|,   gamma_n = n u / (1 - n u)
 *    (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., section 3.1, eq. 3.5). Any
 *    order of summation, split-K partials summed in fp32 included, obeys the same bound: no term goes
 *    through more than n roundings. We take u = 2^-23, one unit in the last place of fp32, not the
 *    2^-24 of round-to-nearest: tensor cores align the products of one mma to the largest exponent
 *    and truncate, normalizing toward zero (Fasi, Higham, Mikaitis, Pranesh, "Numerical behavior of
 *    NVIDIA tensor cores", PeerJ Computer Science 7:e330, 2021), so a GPU's error per step can reach a
 *    whole unit. The product term is n + 1 roundings to cover an fp32 product rounded before its add.
 *    This is a worst case, not a random walk, so it holds on every GPU for every input.
 *    sum_j |a_j b_j| is the same convolution of |a| and |b|: the harness computes it with the same
 *    reference (compute_bound = accumulation_error_factor(n) * that, per element).
 * 2. The epilogue (common/kernel/epilogue.h), in fp32: bias, scale and shift, residual, ReLU. ReLU never
 *    increases a difference; scale multiplies it by |scale|; each of the three roundings adds at most
 *    u times the magnitude of its result. A kernel may also store the convolution in the output type
 *    before the epilogue (an unfused epilogue does), one more rounding of the convolution, bounded by
 *    step 3 below applied to it. The harness adds these to compute_bound.
 * 3. The output's rounding. The kernel stores fl(v_i), the output type's number nearest v_i. Because it
 *    is the nearest, |fl(v_i) - v_i| <= |fl(ref_i) - v_i|, so
 *        |fl(v_i) - ref_i| <= |fl(v_i) - v_i| + |v_i - ref_i| <= |fl(ref_i) - ref_i| + 2 |v_i - ref_i|
 *    that is: the distance from ref_i to the output type's nearest number (rounding_distance, known
 *    exactly from the reference) plus twice the bound of steps 1 and 2. No statistics, no factor of
 *    safety beyond u = 2^-23. verify_output reports the error beyond the first term as a fraction of
 *    the second (excess_ratio): 0 for an output rounded exactly as the reference rounds, at most 1 for
 *    any fp32 accumulation, in any order, on any GPU.
 * What it catches: an fp16 accumulator rounds every partial sum to 2^-11, and an fp16 intermediate
 * (split-K partials stored as fp16) rounds each partial once; both add errors of the output's own
 * rounding size, where this budget allows the exact rounding plus a sliver of 2^-23-sized terms.
 */
#include <math.h>

#include "verify.h"

double accumulation_error_factor(int64_t reduction_length)
{
    const double unit = ldexp(1.0, -23), roundings = (double)(reduction_length > 0 ? reduction_length : 1) + 1.0;
    return roundings * unit / (1.0 - roundings * unit);
}

double rounding_distance(double value, conv_dtype dtype)
{
    /* The spacing of dtype's numbers around value: 2^(e - mantissa bits) in the binade [2^e, 2^(e+1)),
     * the subnormal spacing below the smallest normal. A number at the top of a binade rounds to the
     * next power of two, which lies on the same grid, so one spacing serves both. */
    const int mantissa_bits = dtype == DTYPE_F16 ? 10 : 23, min_exponent = dtype == DTYPE_F16 ? -14 : -126;
    if (value == 0.0 || !isfinite(value))
        return 0.0;
    int exponent;
    frexp(fabs(value), &exponent); /* |value| = f * 2^exponent, f in [0.5, 1) */
    exponent -= 1;                 /* |value| in [2^exponent, 2^(exponent+1)) */
    if (exponent < min_exponent)
        exponent = min_exponent;
    const double spacing = ldexp(1.0, exponent - mantissa_bits);
    const double steps = fabs(value) / spacing;
    return fabs(steps - nearbyint(steps)) * spacing;
}

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

verify_result verify_output(const float *out, const double *ref, const double *compute_bound, size_t count,
                            conv_dtype dtype, int64_t reduction_length, double input_rms_product)
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
        if (compute_bound) { /* the error beyond the reference's own rounding, against what fp32 may add */
            double excess = fabs(diff) - rounding_distance(ref[i], dtype), allowance = 2.0 * compute_bound[i];
            double ratio = excess <= 0.0 ? 0.0 : allowance > 0.0 ? excess / allowance : INFINITY;
            if (ratio > result.excess_ratio) {
                result.excess_ratio = ratio;
                result.excess_index = i;
            }
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
    result.pass = result.rel_l2 <= result.tol_rel && result.max_err <= result.tol_max && result.excess_ratio <= 1.0;
    return result;
}
