/* verify.h: is a kernel's output right?
 *
 * Two statistics against the fp64 reference, and one bound per element (verify.c derives it):
 *   rel_l2   ||out - ref||_2 / ||ref||_2, the error of the output as a whole;
 *   max_err  max_i |out_i - ref_i| / typical, where typical = sqrt(L) * rms(a) * rms(b) is the size of
 *            a typical output element: a sum of L products of independent zero-mean values a*b (or a
 *            sixth of the largest reference value, if that is larger: a fused epilogue's bias, scale or
 *            residual can make the outputs larger than the sum alone).
 *            One bad element can hide in rel_l2 over millions; it cannot hide here.
 * Any NaN or Inf in the output fails outright: outputs are poisoned with NaN before each run, so an
 * element the kernel never wrote is caught too.
 *
 * Thresholds (why these numbers): an fp32-accumulated dot product of length L has a rounding error
 * that grows like sqrt(L) * 2^-24 in a random-walk model; the final store adds half an ulp of the output
 * type (2^-24 for fp32, 2^-11 for fp16), relative to the element. rel_l2 may be 4x the random-walk
 * estimate plus 2 units of output rounding. max_err, in units of a typical element, may be 8x the
 * random walk plus 16 units: among millions of outputs the largest sit ~6 typical sizes out, half an
 * ulp of such an element is up to 6 units of a typical one, and an unfused epilogue (a conv stored in
 * fp16, read back, transformed and stored again) rounds it twice.
 * TF32 math (10-bit mantissa inputs, ~2^-11 per product) fails the fp32 threshold, as it should.
 *
 * The bound per element (when the caller gives one) is tighter where it matters: an output rounded
 * from an fp32 accumulation may differ from the reference by the output type's own rounding of the
 * reference plus twice the accumulation's worst-case error, and by nothing more. An fp16 accumulator
 * or an fp16 intermediate adds errors of the output's own size and fails it.
 */
#ifndef VERIFY_H
#define VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conv.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    double rel_l2, max_err;      /* the two errors (infinite if any output is not finite) */
    double tol_rel, tol_max;     /* the thresholds they were held to */
    double excess_ratio;         /* the worst error beyond the output type's rounding of the reference, as
                                  * a fraction of twice compute_bound: above 1 fails (0 without a bound) */
    size_t nonfinite;            /* NaN/Inf outputs: each one is a failure */
    size_t worst_index;          /* where max_err was found (logical order) */
    size_t excess_index;         /* where excess_ratio was found */
    bool pass;
} verify_result;

/* Thresholds for an output of dtype accumulated in fp32 over reduction_length terms. */
void verify_tolerances(conv_dtype dtype, int64_t reduction_length, double *tol_rel, double *tol_max);

/* The worst-case relative error of an fp32 sum of reduction_length products, as a multiple of the
 * sum of the products' magnitudes (verify.c: gamma_n with unit 2^-23). */
double accumulation_error_factor(int64_t reduction_length);

/* How far value lies from the nearest number of dtype (the error of rounding it to nearest). */
double rounding_distance(double value, conv_dtype dtype);

/* out: the kernel's output converted to fp32 in logical order; ref: the fp64 reference.
 * input_rms_product: rms(a) * rms(b) of the two inputs of the sum.
 * compute_bound: NULL, or per element a bound on how far the kernel's value before its final rounding
 * to dtype may be from ref (accumulation_error_factor times the sum of the products' magnitudes, and
 * an epilogue's share): each element must then lie within rounding_distance(ref) + 2 * compute_bound
 * of ref. */
verify_result verify_output(const float *out, const double *ref, const double *compute_bound, size_t count,
                            conv_dtype dtype, int64_t reduction_length, double input_rms_product);

/* Root mean square of a tensor (for input_rms_product). */
double rms_of(const float *data, size_t count);

#ifdef __cplusplus
}
#endif

#endif
