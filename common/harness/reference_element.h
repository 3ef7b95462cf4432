/* reference_element.h: one output element of each pass, as a gather (the form a GPU thread computes).
 *
 * The GPU reference runs these one thread per element; the cpu suite runs the same functions on the
 * host and compares them with the scatter-form CPU reference (reference.c), which is written
 * independently, so the GPU reference is checked without a GPU. Plain C when compiled by a C compiler.
 */
#ifndef REFERENCE_ELEMENT_H
#define REFERENCE_ELEMENT_H

#include "conv.h"

static HOST_DEVICE inline double ref_fprop_element(const conv_problem *prob, const float *x, const float *w,
                                                   int n, int k, int p, int q)
{
    int c_per_group = prob->c / prob->groups, group = k / (prob->k / prob->groups);
    double sum = 0.0;
    for (int cg = 0; cg < c_per_group; cg++)
        for (int r = 0; r < prob->r; r++)
            for (int s = 0; s < prob->s; s++) {
                int ih = p * prob->stride_h - prob->pad_h + r * prob->dil_h;
                int iw = q * prob->stride_w - prob->pad_w + s * prob->dil_w;
                if (ih < 0 || ih >= prob->h || iw < 0 || iw >= prob->w)
                    continue;
                int c = group * c_per_group + cg;
                sum += (double)x[(((long long)n * prob->c + c) * prob->h + ih) * prob->w + iw] *
                       (double)w[(((long long)k * c_per_group + cg) * prob->r + r) * prob->s + s];
            }
    return sum;
}

/* Input pixel ih was read by tap r of output row p exactly when p*stride_h = ih + pad_h - r*dil_h. */
static HOST_DEVICE inline double ref_dgrad_element(const conv_problem *prob, const float *w, const float *dy,
                                                   int n, int c, int ih, int iw)
{
    int c_per_group = prob->c / prob->groups, k_per_group = prob->k / prob->groups;
    int group = c / c_per_group, cg = c % c_per_group;
    double sum = 0.0;
    for (int kg = 0; kg < k_per_group; kg++)
        for (int r = 0; r < prob->r; r++)
            for (int s = 0; s < prob->s; s++) {
                int p_times_stride = ih + prob->pad_h - r * prob->dil_h;
                int q_times_stride = iw + prob->pad_w - s * prob->dil_w;
                if (p_times_stride < 0 || q_times_stride < 0 || p_times_stride % prob->stride_h ||
                    q_times_stride % prob->stride_w)
                    continue;
                int p = p_times_stride / prob->stride_h, q = q_times_stride / prob->stride_w;
                if (p >= prob->p || q >= prob->q)
                    continue;
                int k = group * k_per_group + kg;
                sum += (double)dy[(((long long)n * prob->k + k) * prob->p + p) * prob->q + q] *
                       (double)w[(((long long)k * c_per_group + cg) * prob->r + r) * prob->s + s];
            }
    return sum;
}

/* dw sums over all N*P*Q output pixels: far longer than the other two passes' sums (401,408 terms for
 * ResNet-50's conv1 at batch 32), too long for one GPU thread. So the sum is written over a flat pixel
 * index j = (n, p, q), and this takes every step-th term from `first`: the GPU reference lets a block's
 * threads take one residue each and adds their partial sums. */
static HOST_DEVICE inline double ref_wgrad_partial(const conv_problem *prob, const float *x, const float *dy, int k,
                                                   int cg, int r, int s, long long first, long long step)
{
    int c = (k / (prob->k / prob->groups)) * (prob->c / prob->groups) + cg;
    long long pixels = (long long)prob->n * prob->p * prob->q;
    double sum = 0.0;
    for (long long j = first; j < pixels; j += step) {
        int q = (int)(j % prob->q), p = (int)(j / prob->q % prob->p), n = (int)(j / ((long long)prob->q * prob->p));
        int ih = p * prob->stride_h - prob->pad_h + r * prob->dil_h;
        int iw = q * prob->stride_w - prob->pad_w + s * prob->dil_w;
        if (ih < 0 || ih >= prob->h || iw < 0 || iw >= prob->w)
            continue;
        sum += (double)x[(((long long)n * prob->c + c) * prob->h + ih) * prob->w + iw] *
               (double)dy[(((long long)n * prob->k + k) * prob->p + p) * prob->q + q];
    }
    return sum;
}

static HOST_DEVICE inline double ref_wgrad_element(const conv_problem *prob, const float *x, const float *dy,
                                                   int k, int cg, int r, int s)
{
    return ref_wgrad_partial(prob, x, dy, k, cg, r, s, 0, 1);
}

#endif
