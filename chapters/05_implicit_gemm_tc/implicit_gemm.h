/* implicit_gemm.h: the index math of chapter 05's kernels, apart from the kernels so the CPU tests can
 * check it. The kernels and their launch code call exactly these functions.
 *
 * fprop as one GEMM per group g of G (docs/gemm_view.md), in NHWC activations and KRSC filters:
 *
 *     Y_g[m][j] = sum over kappa of A_g[m][kappa] * B_g[kappa][j]
 *
 *     m     = (n, p, q)   a row: one output pixel           0 <= m < N*P*Q        igemm_rows()
 *     j     = k - g*K/G   a column: one output channel      0 <= j < K/G          igemm_cols()
 *     kappa = (r, s, c)   the reduction: tap and channel    0 <= kappa < R*S*C/G  igemm_depth()
 *                         c fastest, so 8 consecutive kappa are 8 consecutive channels: 16 bytes of x
 *
 *     A_g[m][kappa] = x[n][h][w][g*C/G + c]    h = p*stride_h - pad_h + r*dil_h, w likewise; 0 outside
 *     B_g[kappa][j] = w[g*K/G + j][r][s][c]    a KRSC filter is B_g transposed: each column contiguous
 *     Y_g[m][j]     = y[n][p][q][g*K/G + j]
 *
 * A is never built (hence "implicit"): for each element a kernel loads it works out where in x that
 * element lives. The chapter does this three ways, each step cheaper than the last:
 *   direct  igemm_a_offset(): divide m into (n, p, q) and kappa into (r, s, c), then bounds-check.
 *           05a, 05b and 05c, for every element they stage.
 *   split   the pixel part, igemm_row_origin(), once per row for the whole loop (a thread's rows do not
 *           change), plus the tap part, igemm_tap_offset(), once per k step (it is the same for every
 *           row): the address is the sum. 05d, 05e and 05f.
 *   walked  the tap part advanced by precomputed deltas instead of divided again (igemm_walk,
 *           igemm_iter_next()), the bounds check a test of two bits of per-row masks computed once
 *           (igemm_tap_mask()). 05g to 05k.
 * tests/test_ch05_implicit_gemm.c checks all three against each other and, multiplied out, against the
 * fp64 reference.
 *
 * Plain C: a C11 test includes it as is; under nvcc the same functions also compile for the device.
 */
#ifndef IMPLICIT_GEMM_H
#define IMPLICIT_GEMM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "conv.h"
#include "pad_channels.h" /* pad_fprop_problem and the padded tensors' sizes */
#include "tiles.h"        /* tiles_covering, gemm_block_of, output_pixel_of */

#define IG_FN static HOST_DEVICE inline

/* The tile shapes of 05b-05k, all in one place:
 *     block M (pixels), block N (output channels), block K (reduction per stage),
 *     warps along M, warps along N, pipeline stages.
 * Each step instantiates its kernel from its line (tile_shape<IGEMM_SHAPE_05D>, steps.cuh) and the CPU
 * test emulates exactly these; change a number here and both follow. Registers follow from the warp
 * tile: up to 64 fp32 accumulators per thread get 128 registers, 128 accumulators up to 255.
 * Constraints (static_asserts in igemm_pipeline.cuh and steps.cuh): block K a multiple of 16; the warp
 * tile, (block M / warps M) x (block N / warps N), a multiple of 16 x 16; every thread copies the same
 * number of 16-byte chunks. The first steps keep 05a's tile, so that what changes is only the idea. */
#define IGEMM_SHAPE_05B 64, 64, 32, 2, 2, 1    /* 05a's tile: 4 warps of 32x32, one stage */
#define IGEMM_SHAPE_05C 64, 64, 32, 2, 2, 1
#define IGEMM_SHAPE_05D 64, 64, 32, 2, 2, 1
#define IGEMM_SHAPE_05E 128, 128, 32, 2, 2, 1  /* 4 warps of 64x64 */
#define IGEMM_SHAPE_05F 128, 128, 32, 2, 2, 4  /* the same tile, 4 stages */
#define IGEMM_SHAPE_05G 128, 128, 32, 2, 2, 4
#define IGEMM_SHAPE_05H 128, 128, 32, 2, 2, 4
#define IGEMM_SHAPE_05I 128, 128, 32, 2, 2, 4
#define IGEMM_SHAPE_05J 64, 64, 32, 2, 2, 4    /* 4 warps of 32x32: small layers */
#define IGEMM_SHAPE_05K 256, 64, 32, 4, 1, 4   /* 4 warps of 64x64 stacked along M: K = 64 layers */

/* ---- the GEMM's extents ----------------------------------------------------------------------------- */

IG_FN int igemm_rows(const conv_problem *prob)
{
    return prob->n * prob->p * prob->q;
}

IG_FN int igemm_cols(const conv_problem *prob)
{
    return prob->k / prob->groups;
}

IG_FN int igemm_depth(const conv_problem *prob)
{
    return prob->r * prob->s * (prob->c / prob->groups);
}

/* ---- direct: divide, then check ------------------------------------------------------------------- */

/* Row m's output pixel, m = (n*P + p)*Q + q: output_pixel_of() (common/kernel/tiles.h). */

typedef struct {
    int r, s, c;
} igemm_tap;

/* Reduction index kappa's filter tap and channel (within the group): kappa = (r*S + s)*C/G + c. */
IG_FN igemm_tap igemm_tap_of(const conv_problem *prob, int kappa)
{
    const int cg = prob->c / prob->groups;
    igemm_tap t;
    t.c = kappa % cg;
    kappa /= cg;
    t.s = kappa % prob->s;
    t.r = kappa / prob->s;
    return t;
}

/* Offset in x (NHWC) of the value pixel px reads through tap t, channel t.c of group `group`, or -1 if
 * that tap falls in the zero padding. */
IG_FN int igemm_x_offset(const conv_problem *prob, int group, output_pixel px, igemm_tap t)
{
    const int h = px.p * prob->stride_h - prob->pad_h + t.r * prob->dil_h;
    const int w = px.q * prob->stride_w - prob->pad_w + t.s * prob->dil_w;
    if (h < 0 || h >= prob->h || w < 0 || w >= prob->w)
        return -1;
    return ((px.n * prob->h + h) * prob->w + w) * prob->c + group * (prob->c / prob->groups) + t.c;
}

/* A_g[m][kappa]: its offset in x, or -1 for a zero of the padding. */
IG_FN int igemm_a_offset(const conv_problem *prob, int group, int m, int kappa)
{
    return igemm_x_offset(prob, group, output_pixel_of(prob, m), igemm_tap_of(prob, kappa));
}

/* B_g[kappa][j]: its offset in w (KRSC). Column j of B_g is row g*K/G + j of w, depth values long. */
IG_FN int igemm_b_offset(const conv_problem *prob, int group, int j, int kappa)
{
    return (group * igemm_cols(prob) + j) * igemm_depth(prob) + kappa;
}

/* Y_g[m][j]: its offset in y (NHWC): pixel m's K channels are contiguous. */
IG_FN int igemm_y_offset(const conv_problem *prob, int group, int m, int j)
{
    return m * prob->k + group * igemm_cols(prob) + j;
}

/* ---- split: a row part and a tap part -------------------------------------------------------------- */

/* Where row m's receptive field starts: the input row h and column w that tap (0, 0) reads (in the
 * padding if negative), and the offset in x that (n, h, w, first channel of the group) would have. */
typedef struct {
    int h, w, offset;
} igemm_origin;

IG_FN igemm_origin igemm_row_origin(const conv_problem *prob, int group, int m)
{
    const output_pixel px = output_pixel_of(prob, m);
    igemm_origin o;
    o.h = px.p * prob->stride_h - prob->pad_h;
    o.w = px.q * prob->stride_w - prob->pad_w;
    o.offset = ((px.n * prob->h + o.h) * prob->w + o.w) * prob->c + group * (prob->c / prob->groups);
    return o;
}

/* The tap part of the offset: how far tap (r, s), channel c lies from the origin in x. The same for
 * every row, so A_g[m][kappa] sits at origin.offset + igemm_tap_offset() whenever the tap is inside
 * the image. (Either part alone may point outside x; only in-image sums are dereferenced.) */
IG_FN int igemm_tap_offset(const conv_problem *prob, int r, int s, int c)
{
    return (r * prob->dil_h * prob->w + s * prob->dil_w) * prob->c + c;
}

/* Whether tap (r, s) of a row with origin o reads inside the image. */
IG_FN bool igemm_tap_inside(const conv_problem *prob, igemm_origin o, int r, int s)
{
    return (unsigned)(o.h + r * prob->dil_h) < (unsigned)prob->h &&
           (unsigned)(o.w + s * prob->dil_w) < (unsigned)prob->w;
}

/* ---- walked: deltas and masks instead of divisions -------------------------------------------------- */

/* Bit t (t < taps <= 32) is set when origin + t*dil, the coordinate tap t reads, is in [0, extent).
 * A row's two masks (along h with R taps, along w with S) answer igemm_tap_inside() for every tap:
 * inside(r, s) = (h_mask >> r) & (w_mask >> s) & 1. Computed once per row; the loop only shifts. */
IG_FN uint32_t igemm_tap_mask(int origin, int taps, int dil, int extent)
{
    uint32_t mask = 0;
    for (int t = 0; t < taps; t++) {
        const int at = origin + t * dil;
        if (at >= 0 && at < extent)
            mask |= 1u << t;
    }
    return mask;
}

/* A position along the reduction, with its tap, channel and igemm_tap_offset() kept up to date. */
typedef struct {
    int kappa, r, s, c, offset;
} igemm_iter;

/* The constant step of a walk along kappa, written as digits in the mixed radix (r, s, c) = (R, S, C/G)
 * so that advancing is three additions and at most two carries, never a division:
 *     c += dc; if c >= C/G: c -= C/G, carry into s
 *     s += ds (+ carry); if s >= S: s -= S, carry into r
 *     r += dr (+ carry)
 * Each digit plus its delta plus a carry stays below twice its radix, so one subtraction per digit
 * suffices. The offset moves by the precomputed d_offset, plus carry_c and carry_s when those carries
 * happen: the tap offset of (0, 1, -C/G) and (1, -S, 0). */
typedef struct {
    int step, cg, s;
    int dr, ds, dc;
    int d_offset, carry_c, carry_s;
} igemm_walk;

IG_FN igemm_walk igemm_walk_make(const conv_problem *prob, int step)
{
    igemm_walk walk;
    walk.step = step;
    walk.cg = prob->c / prob->groups;
    walk.s = prob->s;
    walk.dc = step % walk.cg;
    walk.ds = step / walk.cg % prob->s;
    walk.dr = step / walk.cg / prob->s;
    walk.d_offset = igemm_tap_offset(prob, walk.dr, walk.ds, walk.dc);
    walk.carry_c = prob->dil_w * prob->c - walk.cg;
    walk.carry_s = prob->dil_h * prob->w * prob->c - prob->s * prob->dil_w * prob->c;
    return walk;
}

/* The walk's starting point, by division (once, before the loop). */
IG_FN igemm_iter igemm_iter_at(const conv_problem *prob, int kappa)
{
    const igemm_tap t = igemm_tap_of(prob, kappa);
    igemm_iter it;
    it.kappa = kappa;
    it.r = t.r;
    it.s = t.s;
    it.c = t.c;
    it.offset = igemm_tap_offset(prob, t.r, t.s, t.c);
    return it;
}

/* One step: igemm_iter_at(kappa + walk.step), without dividing. */
IG_FN igemm_iter igemm_iter_next(igemm_iter it, igemm_walk walk)
{
    it.kappa += walk.step;
    it.c += walk.dc;
    it.s += walk.ds;
    it.r += walk.dr;
    it.offset += walk.d_offset;
    if (it.c >= walk.cg) {
        it.c -= walk.cg;
        it.s += 1;
        it.offset += walk.carry_c;
    }
    if (it.s >= walk.s) {
        it.s -= walk.s;
        it.r += 1;
        it.offset += walk.carry_s;
    }
    return it;
}

/* Whether every 32-bit offset the kernels form stays inside int: row origins (negative in the
 * padding, past the image at the far edge), tap offsets up to 8 filter rows past the end (where a walk
 * may stand after the last k tile), their sums, and filter offsets up to one k tile past the end.
 * problem_validate() bounds the tensors; this bounds the arithmetic around them. */
IG_FN bool igemm_offsets_fit(const conv_problem *prob)
{
    const int64_t c = prob->c, w = prob->w;
    const int64_t origin_min = -((int64_t)prob->pad_h * w + prob->pad_w) * c;
    const int64_t last_h = (int64_t)(prob->p - 1) * prob->stride_h - prob->pad_h;
    const int64_t last_w = (int64_t)(prob->q - 1) * prob->stride_w - prob->pad_w;
    const int64_t origin_max = (((int64_t)(prob->n - 1) * prob->h + last_h) * w + last_w) * c + c;
    const int64_t tap_max = ((int64_t)(prob->r + 8) * prob->dil_h * w + (int64_t)prob->s * prob->dil_w) * c + c;
    const int64_t filter_max = (int64_t)prob->k * igemm_depth(prob) + 64;
    return origin_min >= INT32_MIN && origin_max + tap_max <= INT32_MAX && origin_min + tap_max <= INT32_MAX &&
           filter_max <= INT32_MAX;
}

/* For supports() (host only): whether the channel-padded problem a 16-byte kernel runs on (05d-05k,
 * 08a-08b) keeps its tensors and offsets within 32-bit index math; otherwise false with the reason,
 * naming kernel `id`. */
static inline bool igemm_padded_fits_32bit(const char *id, const conv_problem *prob, char *why, size_t why_len)
{
    const conv_problem padded = pad_fprop_problem(prob);
    if (pad_fprop_x_elems(prob) > INT32_MAX || pad_fprop_w_elems(prob) > INT32_MAX) {
        snprintf(why, why_len, "%s pads C/groups = %d to %d channels for 16-byte loads; the padded x (%lld) or "
                 "w (%lld elements) is over the 2^31-1 of 32-bit index math", id, prob->c / prob->groups,
                 padded.c / padded.groups, (long long)pad_fprop_x_elems(prob), (long long)pad_fprop_w_elems(prob));
        return false;
    }
    if (!igemm_offsets_fit(&padded)) {
        snprintf(why, why_len, "%s forms 32-bit offsets from a row origin and a tap; with padding %dx%d and "
                 "dilation %dx%d on a %dx%dx%d input they would overflow", id, prob->pad_h, prob->pad_w,
                 prob->dil_h, prob->dil_w, prob->h, prob->w, padded.c);
        return false;
    }
    return true;
}

/* ---- how a block and its threads divide the work --------------------------------------------------- */

/* Copying a tile of rows x chunks_per_row 16-byte chunks with `threads` threads: thread t copies
 * chunk igemm_load_chunk(t) of row igemm_load_row(t, i) in its pass i. Consecutive threads take
 * consecutive chunks of a row, so a warp reads whole rows: 8 rows of 64 contiguous bytes at BK = 32. */
IG_FN int igemm_load_row(int thread, int pass, int threads, int chunks_per_row)
{
    return thread / chunks_per_row + pass * (threads / chunks_per_row);
}

IG_FN int igemm_load_chunk(int thread, int chunks_per_row)
{
    return thread % chunks_per_row;
}

/* Row pitch, in halves, of the output tile staged in shared memory by the epilogue of 05h-05k. The 8 extra
 * halves (16 bytes) put the 8 rows that one fragment store of a warp touches into 8 different groups
 * of 4 banks; rows stay 16-byte aligned for the vector reads that follow. */
IG_FN int igemm_out_pitch(int bn)
{
    return bn + 8;
}

#undef IG_FN

#endif
