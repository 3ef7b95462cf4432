/* reference.h: the definition of convolution, in the plainest code that can be trusted.
 *
 * Every kernel in this repository is checked against these. Inputs are fp32 in logical order
 * (x NCHW, w KCRS, y NKPQ), sums are accumulated in fp64 and the output is fp64, so the reference's
 * own rounding is ~2^-53: far below any kernel's.
 *
 * The CPU versions are for small problems (tests, chapter 01). The GPU versions compute exactly the
 * same loops with one thread per output element; the gpu suite checks them against the CPU ones, and
 * the runner uses them for large problems so verification never takes minutes.
 */
#ifndef REFERENCE_H
#define REFERENCE_H

#include "conv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* y[n][k][p][q] = sum_{c in k's group, r, s} x[n][c][p*sh - ph + r*dh][q*sw - pw + s*dw] * w[k][c'][r][s] */
void ref_fprop_cpu(const conv_problem *prob, const float *x, const float *w, double *y);
/* dx[n][c][h][w] = sum over every (k, r, s, p, q) whose fprop read x[n][c][h][w] of dy[n][k][p][q] * w[k][c'][r][s] */
void ref_dgrad_cpu(const conv_problem *prob, double *dx, const float *w, const float *dy);
/* dw[k][c'][r][s] = sum_{n, p, q} x[n][c][p*sh - ph + r*dh][q*sw - pw + s*dw] * dy[n][k][p][q] */
void ref_wgrad_cpu(const conv_problem *prob, const float *x, double *dw, const float *dy);

/* The same three on device buffers (fp32 in, fp64 out). Synchronous; errors are fatal. */
void ref_fprop_gpu(const conv_problem *prob, const float *x, const float *w, double *y);
void ref_dgrad_gpu(const conv_problem *prob, double *dx, const float *w, const float *dy);
void ref_wgrad_gpu(const conv_problem *prob, const float *x, double *dw, const float *dy);

#ifdef __cplusplus
}
#endif

#endif
