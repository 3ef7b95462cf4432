/* dgrad.h: the index math of chapter 06's kernels, apart from the kernels so the CPU tests can check it.
 * The kernels (06a_flipped_filter.cu, 06b_stride_phases.cu, dgrad.cuh) call exactly these functions;
 * tests/test_ch06_dgrad.c builds every GEMM on the host through them and compares with the fp64
 * reference.
 *
 * dgrad as GEMMs (docs/gemm_view.md), NHWC dy and dx, KRSC filter, one GEMM per (stride phase, group):
 *
 *     D[m][j] = sum over kappa of A[m][kappa] * B[kappa][j]
 *
 *     m     = (n, i, jw)   a row: the i-th row and jw-th column of the phase's pixels   dgrad_rows()
 *     j     = c - g*C/G    a column: one input channel                                  dgrad_cols()
 *     kappa = (t, u, k)    the reduction: the phase's t-th row tap and u-th column tap,
 *                          output channel k within the group, k fastest                 dgrad_depth()
 *
 *     A[m][kappa] = dy[n][p][q][g*K/G + k]   p = out0 + i - t*out_step, q likewise; 0 outside [0,P)x[0,Q)
 *     B[kappa][j] = w[g*K/G + k][r][s][j]    r = tap0 + t*tap_step, s likewise (KRSC: j contiguous)
 *     D[m][j]     = dx[n][h][w][g*C/G + j]   h = first + i*stride, w likewise
 *
 * Why p = out0 + i - t*out_step. The forward pass reads input row h = p*stride - pad + r*dil (1), so
 * dx at h collects the p with p*stride = h + pad - r*dil. Within a stride phase (stride_phases.h) the
 * pixels are h = first + i*stride and the taps that reach them r = tap0 + t*tap_step, with
 * tap_step*dil a multiple of stride, so
 *     p = (first + i*stride + pad - (tap0 + t*tap_step)*dil) / stride
 *       = (first + pad - tap0*dil) / stride  +  i  -  t * (tap_step*dil / stride)
 *       =  out0                              +  i  -  t *  out_step
 * exactly (every division is exact). Each phase is a stride-1 dgrad in its own coordinates.
 * At stride 1 there is one phase, the whole image and every tap: out0 = pad, out_step = dil, and
 * p = h + pad - r*dil, the "flipped filter" form (06a, dgrad_axis_direct()).
 *
 * Plain C: a C11 test includes it as is; under nvcc the same functions also compile for the device.
 */
#ifndef DGRAD_H
#define DGRAD_H

#include <stdbool.h>
#include <stdint.h>

#include "conv.h"
#include "tiles.h" /* tiles_covering, gemm_block_of */
#include "stride_phases.h"

#define DG_FN static HOST_DEVICE inline

/* Block tiles of 06a and 06b: block M (pixels), block N (input channels), block K (reduction per stage),
 * warps along M, warps along N, pipeline stages. Each step instantiates its kernel from these lines and
 * the launch picks one per problem (dgrad_pick_shape()), as chapter 05's 05i/05j/05k are picked by hand. */
#define DGRAD_SHAPE_WIDE 128, 128, 32, 2, 2, 4   /* 4 warps of 64x64: the default */
#define DGRAD_SHAPE_NARROW 256, 64, 32, 4, 1, 4  /* 4 warps of 64x64: C/groups <= 64, half of 128 would be zeros */
#define DGRAD_SHAPE_SMALL 64, 64, 32, 2, 2, 4    /* 4 warps of 32x32: problems too small to fill the GPU */

/* ---- one axis of one phase ---------------------------------------------------------------------- */

/* Along one axis (rows: extent H, taps R; columns: W, S): the phase's pixels h = first + i*stride for
 * 0 <= i < count, its taps r = tap0 + t*tap_step for 0 <= t < taps, and the output coordinate that
 * pixel i reads through tap t, p = out0 + i - t*out_step (to be checked against [0, P)). */
typedef struct {
    int first, count, stride;
    int tap0, taps, tap_step;
    int out0, out_step;
} dgrad_axis;

/* 06a, stride 1 only: every pixel, every tap, p = h + pad - r*dil. */
DG_FN dgrad_axis dgrad_axis_direct(int extent, int taps, int pad, int dil)
{
    dgrad_axis a;
    a.first = 0;
    a.count = extent;
    a.stride = 1;
    a.tap0 = 0;
    a.taps = taps;
    a.tap_step = 1;
    a.out0 = pad;
    a.out_step = dil;
    return a;
}

/* 06b: phase `phase` (0 <= phase < stride) of an axis, through stride_phases.h. A phase with no taps
 * (dilation sharing a factor with the stride, or a filter shorter than the stride) has taps = 0: its
 * pixels receive nothing and must be written as zeros. */
DG_FN dgrad_axis dgrad_axis_phase(int phase, int extent, int taps, int pad, int dil, int stride)
{
    dgrad_axis a;
    a.first = phase_first_pixel(phase, pad, stride);
    a.count = phase_pixel_count(phase, extent, pad, stride);
    a.stride = stride;
    a.taps = phase_tap_count(phase, taps, dil, stride);
    a.tap_step = phase_tap_step(dil, stride);
    a.tap0 = a.taps > 0 ? phase_first_tap(phase, taps, dil, stride) : 0;
    a.out0 = a.taps > 0 ? phase_output_coord(a.first, a.tap0, pad, dil, stride) : 0;
    a.out_step = a.tap_step * dil / stride;
    return a;
}

DG_FN int dgrad_axis_pixel(dgrad_axis a, int i)
{
    return a.first + i * a.stride;
}

DG_FN int dgrad_axis_tap(dgrad_axis a, int t)
{
    return a.tap0 + t * a.tap_step;
}

DG_FN int dgrad_axis_out(dgrad_axis a, int i, int t)
{
    return a.out0 + i - t * a.out_step;
}

/* ---- a phase: both axes ------------------------------------------------------------------------- */

typedef struct {
    dgrad_axis h, w;
} dgrad_phase;

/* How many phases 06b runs (gridDim.z): stride_h * stride_w. Phase z = a*stride_w + b. */
DG_FN int dgrad_phase_count(const conv_problem *prob)
{
    return prob->stride_h * prob->stride_w;
}

DG_FN dgrad_phase dgrad_phase_of(const conv_problem *prob, int z)
{
    dgrad_phase ph;
    ph.h = dgrad_axis_phase(z / prob->stride_w, prob->h, prob->r, prob->pad_h, prob->dil_h, prob->stride_h);
    ph.w = dgrad_axis_phase(z % prob->stride_w, prob->w, prob->s, prob->pad_w, prob->dil_w, prob->stride_w);
    return ph;
}

/* 06a's single "phase": the whole problem at stride 1. Equal to dgrad_phase_of(prob, 0) there. */
DG_FN dgrad_phase dgrad_direct(const conv_problem *prob)
{
    dgrad_phase ph;
    ph.h = dgrad_axis_direct(prob->h, prob->r, prob->pad_h, prob->dil_h);
    ph.w = dgrad_axis_direct(prob->w, prob->s, prob->pad_w, prob->dil_w);
    return ph;
}

/* ---- the GEMM's extents ------------------------------------------------------------------------- */

DG_FN int dgrad_rows(const conv_problem *prob, dgrad_phase ph)
{
    return prob->n * ph.h.count * ph.w.count;
}

DG_FN int dgrad_cols(const conv_problem *prob)
{
    return prob->c / prob->groups;
}

DG_FN int dgrad_depth(const conv_problem *prob, dgrad_phase ph)
{
    return ph.h.taps * ph.w.taps * (prob->k / prob->groups);
}

/* ---- direct: divide, then check ------------------------------------------------------------------ */

/* Row m of a phase: m = (n * count_h + i) * count_w + jw, the pixel (n, h, w). */
typedef struct {
    int n, i, jw, h, w;
} dgrad_pixel;

DG_FN dgrad_pixel dgrad_pixel_of(dgrad_phase ph, int m)
{
    dgrad_pixel px;
    px.jw = m % ph.w.count;
    m /= ph.w.count;
    px.i = m % ph.h.count;
    px.n = m / ph.h.count;
    px.h = dgrad_axis_pixel(ph.h, px.i);
    px.w = dgrad_axis_pixel(ph.w, px.jw);
    return px;
}

/* Reduction index kappa = (t * taps_w + u) * K/G + k: tap (t, u) of the phase, filter (r, s). */
typedef struct {
    int t, u, k, r, s;
} dgrad_tap;

DG_FN dgrad_tap dgrad_tap_of(const conv_problem *prob, dgrad_phase ph, int kappa)
{
    const int kg = prob->k / prob->groups;
    dgrad_tap tp;
    tp.k = kappa % kg;
    kappa /= kg;
    tp.u = kappa % ph.w.taps;
    tp.t = kappa / ph.w.taps;
    tp.r = dgrad_axis_tap(ph.h, tp.t);
    tp.s = dgrad_axis_tap(ph.w, tp.u);
    return tp;
}

/* A[m][kappa]: its offset in dy (NHWC), or -1 where (p, q) falls outside the output (a zero). */
DG_FN int dgrad_a_offset(const conv_problem *prob, dgrad_phase ph, int group, int m, int kappa)
{
    const dgrad_pixel px = dgrad_pixel_of(ph, m);
    const dgrad_tap tp = dgrad_tap_of(prob, ph, kappa);
    const int p = dgrad_axis_out(ph.h, px.i, tp.t), q = dgrad_axis_out(ph.w, px.jw, tp.u);
    if (p < 0 || p >= prob->p || q < 0 || q >= prob->q)
        return -1;
    return ((px.n * prob->p + p) * prob->q + q) * prob->k + group * (prob->k / prob->groups) + tp.k;
}

/* B[kappa][j]: its offset in w (KRSC). Row kappa of B is C/G contiguous halves of w. */
DG_FN int dgrad_b_offset(const conv_problem *prob, dgrad_phase ph, int group, int kappa, int j)
{
    const dgrad_tap tp = dgrad_tap_of(prob, ph, kappa);
    const int kk = group * (prob->k / prob->groups) + tp.k;
    return ((kk * prob->r + tp.r) * prob->s + tp.s) * dgrad_cols(prob) + j;
}

/* D[m][j]: its offset in dx (NHWC). */
DG_FN int dgrad_dx_offset(const conv_problem *prob, dgrad_phase ph, int group, int m, int j)
{
    const dgrad_pixel px = dgrad_pixel_of(ph, m);
    return ((px.n * prob->h + px.h) * prob->w + px.w) * prob->c + group * dgrad_cols(prob) + j;
}

/* ---- split and walked: what the pipelined kernel does instead of dividing ------------------------ */

/* Row m's origin in dy: the output pixel (p, q) tap (0, 0) reads (may be outside the output) and the
 * offset that (n, p, q, first channel of the group) would have. */
typedef struct {
    int p, q, offset;
} dgrad_origin;

DG_FN dgrad_origin dgrad_row_origin(const conv_problem *prob, dgrad_phase ph, int group, int m)
{
    const dgrad_pixel px = dgrad_pixel_of(ph, m);
    dgrad_origin o;
    o.p = dgrad_axis_out(ph.h, px.i, 0);
    o.q = dgrad_axis_out(ph.w, px.jw, 0);
    o.offset = ((px.n * prob->p + o.p) * prob->q + o.q) * prob->k + group * (prob->k / prob->groups);
    return o;
}

/* The tap part of A's offset: how far tap (t, u), channel k lies from the origin in dy. The same for
 * every row; A[m][kappa] is at origin.offset + dgrad_a_tap_offset() whenever (p, q) is inside. */
DG_FN int dgrad_a_tap_offset(const conv_problem *prob, dgrad_phase ph, int t, int u, int k)
{
    return k - (t * ph.h.out_step * prob->q + u * ph.w.out_step) * prob->k;
}

/* Bit t (t < taps <= 32) is set when origin - t*out_step, the output coordinate tap t reads, is in
 * [0, extent): the edge test of every tap of a row, computed once. */
DG_FN uint32_t dgrad_tap_mask(int origin, int taps, int out_step, int extent)
{
    uint32_t mask = 0;
    for (int t = 0; t < taps; t++) {
        const int at = origin - t * out_step;
        if (at >= 0 && at < extent)
            mask |= 1u << t;
    }
    return mask;
}

/* The offset in w of B's row kappa = (t, u, k), column 0, group 0 (add group*K/G*R*S*C/G for others). */
DG_FN int dgrad_b_row_offset(const conv_problem *prob, dgrad_phase ph, int t, int u, int k)
{
    return ((k * prob->r + dgrad_axis_tap(ph.h, t)) * prob->s + dgrad_axis_tap(ph.w, u)) * dgrad_cols(prob);
}

DG_FN int dgrad_b_group_offset(const conv_problem *prob, int group)
{
    return group * (prob->k / prob->groups) * prob->r * prob->s * dgrad_cols(prob);
}

/* A position along the reduction, its digits (t, u, k) kept up to date without dividing. */
typedef struct {
    int kappa, t, u, k;
} dgrad_iter;

/* A constant step along kappa written in the mixed radix (t, u, k) = (taps_h, taps_w, K/G): advancing
 * is three additions and at most one carry per digit (each digit plus its delta plus a carry stays
 * below twice its radix). */
typedef struct {
    int step, kg, taps_w;
    int dt, du, dk;
} dgrad_walk;

DG_FN dgrad_walk dgrad_walk_make(const conv_problem *prob, dgrad_phase ph, int step)
{
    dgrad_walk walk;
    walk.step = step;
    walk.kg = prob->k / prob->groups;
    walk.taps_w = ph.w.taps > 0 ? ph.w.taps : 1; /* a phase without taps never walks */
    walk.dk = step % walk.kg;
    walk.du = step / walk.kg % walk.taps_w;
    walk.dt = step / walk.kg / walk.taps_w;
    return walk;
}

DG_FN dgrad_iter dgrad_iter_at(dgrad_walk walk, int kappa)
{
    dgrad_iter it;
    it.kappa = kappa;
    it.k = kappa % walk.kg;
    it.u = kappa / walk.kg % walk.taps_w;
    it.t = kappa / walk.kg / walk.taps_w;
    return it;
}

DG_FN dgrad_iter dgrad_iter_next(dgrad_iter it, dgrad_walk walk)
{
    it.kappa += walk.step;
    it.k += walk.dk;
    it.u += walk.du;
    it.t += walk.dt;
    if (it.k >= walk.kg) {
        it.k -= walk.kg;
        it.u += 1;
    }
    if (it.u >= walk.taps_w) {
        it.u -= walk.taps_w;
        it.t += 1;
    }
    return it;
}

/* ---- how a block divides the work ----------------------------------------------------------------- */

/* Block `block` of a phase's tiles_covering(rows, bm) * tiles_covering(cols, bn); column tile fastest. The
 * grid is sized for the largest phase: blocks past a smaller phase's tiles have nothing to do. */
/* The largest phase's tile count: gridDim.x of 06b (06a: its one phase). */
DG_FN int dgrad_max_tiles(const conv_problem *prob, bool phased, int bm, int bn)
{
    const int phases = phased ? dgrad_phase_count(prob) : 1;
    int most = 0;
    for (int z = 0; z < phases; z++) {
        const dgrad_phase ph = phased ? dgrad_phase_of(prob, z) : dgrad_direct(prob);
        const int tiles = tiles_covering(dgrad_rows(prob, ph), bm) * tiles_covering(dgrad_cols(prob), bn);
        most = tiles > most ? tiles : most;
    }
    return most;
}

/* Which tile shape the launch uses: 0 WIDE, 1 NARROW, 2 SMALL (the order of the macros above).
 * NARROW when a 128-wide tile would be at least half zero columns (C/groups <= 64); then SMALL instead
 * if the chosen shape gives fewer blocks than the GPU has SMs (`sms`), so that one wave is not mostly
 * idle. Blocks are counted as launched: the largest phase's tiles, times groups, times phases. */
DG_FN int dgrad_pick_shape(const conv_problem *prob, bool phased, int sms)
{
    const int cols = prob->c / prob->groups;
    const int shape = cols <= 64 ? 1 : 0;
    const int bm = shape == 1 ? 256 : 128, bn = shape == 1 ? 64 : 128;
    const double blocks = (double)dgrad_max_tiles(prob, phased, bm, bn) * prob->groups *
                          (phased ? dgrad_phase_count(prob) : 1);
    return blocks < sms ? 2 : shape;
}

/* Whether every 32-bit offset the kernel forms fits in int: row origins in dy (out0 may lie up to
 * pad/stride + 1 before the output and past its end), the tap part reaching R*dil rows back, filter
 * offsets one k tile past a row, and dx. Generous bounds, computed in 64 bits. */
DG_FN bool dgrad_offsets_fit(const conv_problem *prob)
{
    const int64_t rows = (int64_t)prob->p + prob->h + (int64_t)prob->r * prob->dil_h + prob->pad_h + 2;
    const int64_t cols = (int64_t)prob->q + prob->w + (int64_t)prob->s * prob->dil_w + prob->pad_w + 2;
    const int64_t dy_span = (int64_t)(prob->n + 1) * rows * cols * prob->k;
    const int64_t w_span = (int64_t)(prob->k + 64) * prob->r * prob->s * (prob->c / prob->groups);
    const int64_t dx_span = (int64_t)prob->n * prob->h * prob->w * prob->c;
    return dy_span <= INT32_MAX && w_span <= INT32_MAX && dx_span <= INT32_MAX;
}

#undef DG_FN

#endif
