/* reference.c: fprop, dgrad and wgrad on the CPU, straight from the definition, fp64 accumulation.
 *
 * dgrad and wgrad are written as the same loop nest as fprop with the roles of the tensors swapped,
 * scattering into the output, so all three are visibly the same sum and the adjoint identities
 * <fprop(x,w), dy> = <x, dgrad(w,dy)> = <w, wgrad(x,dy)> hold by construction of the index map.
 * (The tests check those identities, and fprop on hand-worked examples, so a wrong shared index map
 * cannot hide.)
 */
#include <string.h>

#include "reference.h"

/* Visits every (n, k, p, q, c, r, s) term of the convolution sum whose input tap lies inside the
 * image, giving the flat indices of the three tensors. */
#define FOR_EACH_TERM(prob, X_AT, W_AT, Y_AT, BODY)                                                  \
    do {                                                                                           \
        const int c_per_group_ = (prob)->c / (prob)->groups;                                       \
        const int k_per_group_ = (prob)->k / (prob)->groups;                                       \
        for (int n = 0; n < (prob)->n; n++)                                                        \
            for (int k = 0; k < (prob)->k; k++)                                                    \
                for (int p = 0; p < (prob)->p; p++)                                                \
                    for (int q = 0; q < (prob)->q; q++) {                                          \
                        size_t Y_AT = (((size_t)n * (prob)->k + k) * (prob)->p + p) * (prob)->q + q; \
                        const int group_ = k / k_per_group_;                                       \
                        for (int cg = 0; cg < c_per_group_; cg++) {                                \
                            const int c = group_ * c_per_group_ + cg;                              \
                            for (int r = 0; r < (prob)->r; r++) {                                  \
                                const int ih = p * (prob)->stride_h - (prob)->pad_h + r * (prob)->dil_h; \
                                if (ih < 0 || ih >= (prob)->h)                                     \
                                    continue;                                                      \
                                for (int s = 0; s < (prob)->s; s++) {                              \
                                    const int iw = q * (prob)->stride_w - (prob)->pad_w + s * (prob)->dil_w; \
                                    if (iw < 0 || iw >= (prob)->w)                               \
                                        continue;                                                  \
                                    size_t X_AT = (((size_t)n * (prob)->c + c) * (prob)->h + ih) * (prob)->w + iw; \
                                    size_t W_AT = (((size_t)k * c_per_group_ + cg) * (prob)->r + r) * (prob)->s + s; \
                                    BODY;                                                          \
                                }                                                                  \
                            }                                                                      \
                        }                                                                          \
                    }                                                                              \
    } while (0)

void ref_fprop_cpu(const conv_problem *prob, const float *x, const float *w, double *y)
{
    memset(y, 0, (size_t)problem_y_elems(prob) * sizeof(double));
    FOR_EACH_TERM(prob, xi, wi, yi, y[yi] += (double)x[xi] * (double)w[wi]);
}

void ref_dgrad_cpu(const conv_problem *prob, double *dx, const float *w, const float *dy)
{
    memset(dx, 0, (size_t)problem_x_elems(prob) * sizeof(double));
    FOR_EACH_TERM(prob, xi, wi, yi, dx[xi] += (double)dy[yi] * (double)w[wi]);
}

void ref_wgrad_cpu(const conv_problem *prob, const float *x, double *dw, const float *dy)
{
    memset(dw, 0, (size_t)problem_w_elems(prob) * sizeof(double));
    FOR_EACH_TERM(prob, xi, wi, yi, dw[wi] += (double)x[xi] * (double)dy[yi]);
}
