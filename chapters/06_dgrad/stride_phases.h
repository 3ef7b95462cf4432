/* stride_phases.h: which filter taps reach which input pixel in dgrad, one stride phase at a time.
 *
 * dgrad sums, for input row h, over the taps r whose forward convolution read it (docs/gemm_view.md):
 *
 *     p * stride = h + pad - r * dil,    0 <= p < P                                    (1)
 *
 * The naive kernel tries every r and masks those where the right side is not a multiple of the
 * stride: at stride 2 it throws away about 3 of every 4 products of a 3x3 filter. But divisibility
 * depends on h only through (h + pad) mod stride, the pixel's *phase*: every row of one phase is reached
 * by the same taps, those with r * dil = phase (mod stride). So dgrad splits into stride_h * stride_w
 * independent GEMMs, one per (row phase, column phase), each over exactly the taps that contribute,
 * with no divisibility test left in the inner loop (only the edge test 0 <= p < P).
 *
 * One axis at a time; rows and columns are independent. Plain C, and device code under nvcc.
 */
#ifndef STRIDE_PHASES_H
#define STRIDE_PHASES_H

#include "conv.h"

/* The phase of input coordinate h: which residue of (h + pad) modulo the stride it has. */
static HOST_DEVICE inline int phase_of(int h, int pad, int stride)
{
    return (h + pad) % stride;
}

/* The first input coordinate in [0, extent) of a phase, and how many coordinates it has. */
static HOST_DEVICE inline int phase_first_pixel(int phase, int pad, int stride)
{
    return ((phase - pad) % stride + stride) % stride;
}

static HOST_DEVICE inline int phase_pixel_count(int phase, int extent, int pad, int stride)
{
    int first = phase_first_pixel(phase, pad, stride);
    return first < extent ? (extent - 1 - first) / stride + 1 : 0;
}

/* The i-th input coordinate of a phase. */
static HOST_DEVICE inline int phase_pixel(int phase, int i, int pad, int stride)
{
    return phase_first_pixel(phase, pad, stride) + i * stride;
}

/* Taps of a phase: the r in [0, taps) with r * dil = phase (mod stride). They are evenly spaced: once
 * one is found, adding stride / gcd(dil, stride) keeps r * dil in the same residue class. */
static HOST_DEVICE inline int phase_tap_step(int dil, int stride)
{
    int a = dil, b = stride;
    while (b) {
        int t = a % b;
        a = b;
        b = t;
    }
    return stride / a;
}

/* The first tap of a phase, or -1 if no tap reaches it (possible when gcd(dil, stride) > 1, or when the
 * filter is shorter than the stride). */
static HOST_DEVICE inline int phase_first_tap(int phase, int taps, int dil, int stride)
{
    int step = phase_tap_step(dil, stride);
    for (int r = 0; r < step && r < taps; r++)
        if (r * dil % stride == phase)
            return r;
    return -1;
}

static HOST_DEVICE inline int phase_tap_count(int phase, int taps, int dil, int stride)
{
    int first = phase_first_tap(phase, taps, dil, stride);
    return first < 0 ? 0 : (taps - 1 - first) / phase_tap_step(dil, stride) + 1;
}

static HOST_DEVICE inline int phase_tap(int phase, int i, int taps, int dil, int stride)
{
    return phase_first_tap(phase, taps, dil, stride) + i * phase_tap_step(dil, stride);
}

/* The output coordinate that tap r of pixel h came from, by (1); exact within a phase. The caller still
 * checks 0 <= p < P: near the edges a tap may point past the output. */
static HOST_DEVICE inline int phase_output_coord(int h, int r, int pad, int dil, int stride)
{
    return (h + pad - r * dil) / stride;
}

/* Multiply-adds the two ways of computing dgrad, counted over taps *visited* (masked-out edge taps
 * included in both): every tap of every pixel, versus only the taps of each pixel's phase. */
static HOST_DEVICE inline double dgrad_macs_all_taps(const conv_problem *prob)
{
    return (double)prob->n * prob->h * prob->w * prob->c * (prob->k / prob->groups) * prob->r * prob->s;
}

static HOST_DEVICE inline double dgrad_macs_by_phase(const conv_problem *prob)
{
    double rows = 0.0, cols = 0.0; /* sum over phases of pixels x taps, per axis */
    for (int a = 0; a < prob->stride_h; a++)
        rows += (double)phase_pixel_count(a, prob->h, prob->pad_h, prob->stride_h) *
                phase_tap_count(a, prob->r, prob->dil_h, prob->stride_h);
    for (int b = 0; b < prob->stride_w; b++)
        cols += (double)phase_pixel_count(b, prob->w, prob->pad_w, prob->stride_w) *
                phase_tap_count(b, prob->s, prob->dil_w, prob->stride_w);
    return (double)prob->n * prob->c * (prob->k / prob->groups) * rows * cols;
}

#endif
