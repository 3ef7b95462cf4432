/* depthwise.h: the index math of chapter 09's depthwise kernels, apart from the kernels so the CPU tests
 * can check it against the definition. The kernels and their launch code call exactly these functions.
 *
 * Depthwise convolution is the grouped convolution with groups = C = K: output channel c reads input
 * channel c only, through its own R x S filter. In the layouts of this chapter (fp16, NHWC activations,
 * KRSC filters with C/groups = 1):
 *
 *   x [N][H][W][C]     w [C][R][S]     y [N][P][Q][C]
 *   y[n][p][q][c] = sum over r, s of x[n][h][w][c] * w[c][r][s],
 *                   h = p*stride_h - pad_h + r*dil_h,  w = q*stride_w - pad_w + s*dil_w
 *
 * The channels of one pixel are contiguous, so 8 consecutive channels are one 16-byte vector: both
 * kernels load, compute and store in vectors of DW_VEC channels (hence C % 8 == 0).
 *
 * Plain C: a C11 test includes it as is; under nvcc the same functions also compile for the device
 * (HOST_DEVICE, common/kernel/conv.h). Offsets are 32-bit: problem_validate() keeps every tensor below 2^31
 * elements.
 */
#ifndef DEPTHWISE_H
#define DEPTHWISE_H

#include "conv.h"
#include "tiles.h" /* tiles_covering, tap_input_coord, halo_extent */

#define DW_FN static HOST_DEVICE inline

/* Channels per 16-byte vector of fp16. */
enum { DW_VEC = 8 };

/* Both kernels work on runs of DW_RUN = 32 channels (4 vectors): a warp is 8 pixels x 4 vectors.
 * 09b's block is a run x DW_TILE_Q output columns x DW_STRIPS strips of dw_rows_per_thread() rows, one
 * thread per (vector, column, strip): 128 threads, and a tile of 16x16 output pixels at stride 1, 8x16
 * otherwise. It stages the run's taps as fp32, DW_W_PITCH floats per tap: rows stay 16-byte aligned, and
 * the transposing stores spread over the banks. */
enum { DW_RUN = 32, DW_TILE_Q = 16, DW_STRIPS = 2, DW_W_PITCH = DW_RUN + 4 };

/* Dynamic shared memory a 09b block may use without opting in; every specialization's tile fits. */
enum { DW_SMEM_LIMIT = 48 * 1024 };

/* ---- the definition: coordinates and offsets ------------------------------------------------------- */

/* Whether a problem is depthwise: one filter per channel, each reading its own channel. */
DW_FN bool dw_is_depthwise(const conv_problem *prob)
{
    return prob->groups == prob->c && prob->k == prob->c;
}

/* Element offsets in the three tensors. */
DW_FN int dw_x_offset(const conv_problem *prob, int n, int h, int w, int c)
{
    return ((n * prob->h + h) * prob->w + w) * prob->c + c;
}

DW_FN int dw_y_offset(const conv_problem *prob, int n, int p, int q, int c)
{
    return ((n * prob->p + p) * prob->q + q) * prob->c + c;
}

DW_FN int dw_w_offset(const conv_problem *prob, int c, int r, int s)
{
    return (c * prob->r + r) * prob->s + s;
}

/* ---- 09a: one thread per output vector -------------------------------------------------------------- */

/* An output vector: channels [c, c + DW_VEC) of pixel (n, p, q). */
typedef struct {
    int n, p, q, c;
} dw_vector;

/* Threads 09a launches: for every pixel, tiles_covering(C, DW_RUN) runs of DW_RUN / DW_VEC = 4 vector
 * slots. When C is not a multiple of DW_RUN, the last run's spare slots have no vector (c >= C). Below
 * 2^31: 4 * ceil(C/32) <= C/2 for C >= 8, and N*P*Q*C is below 2^31. */
DW_FN int dw_vector_threads(const conv_problem *prob)
{
    return prob->n * prob->p * prob->q * tiles_covering(prob->c, DW_RUN) * (DW_RUN / DW_VEC);
}

/* Thread `index` of 09a: the vector within a 32-channel run varies fastest, then q, p, the run, n. A warp
 * is 8 neighbouring pixels x the 4 vectors of one run: its loads of x and stores of y are whole 64-byte
 * pieces of 8 pixels, and each of its tap loads touches the filters of 4 vectors (32 channels), where
 * "vectors fastest" would put up to 32 vectors' filters, 32 different cache lines, in every tap load.
 * c >= C marks a spare slot. */
DW_FN dw_vector dw_vector_of(int index, const conv_problem *prob)
{
    const int slots = DW_RUN / DW_VEC, runs = tiles_covering(prob->c, DW_RUN);
    dw_vector v;
    const int slot = index % slots;
    index /= slots;
    v.q = index % prob->q;
    index /= prob->q;
    v.p = index % prob->p;
    index /= prob->p;
    v.c = index % runs * DW_RUN + slot * DW_VEC;
    v.n = index / runs;
    return v;
}

/* ---- 09b: tiles in shared memory ------------------------------------------------------------------- */

/* The outputs one block computes: image n; channels [c_first, c_first + c_count), a run of at most
 * `run` channels (the last run of a C that is not a multiple of `run` is shorter); pixels from
 * (p_first, q_first), a tile that may hang over the bottom and right edges of the output (those pixels
 * are computed from zeros or not at all, and never stored). */
typedef struct {
    int n, c_first, c_count, p_first, q_first;
} dw_tile;

/* Number of blocks that cover a problem with tiles of tile_p x tile_q pixels and runs of `run` channels.
 * It stays below 2^31: every block owns at least one of the N*P*Q*C outputs. */
DW_FN int dw_blocks_covering(const conv_problem *prob, int tile_p, int tile_q, int run)
{
    return prob->n * tiles_covering(prob->c, run) * tiles_covering(prob->p, tile_p) *
           tiles_covering(prob->q, tile_q);
}

/* Block `block` of dw_blocks_covering(): the spatial tile varies fastest, then the channel run, then the
 * image, so blocks that run at the same time are spatial neighbours, and the halo rows and columns they
 * share are read from DRAM once and from L2 the second time. */
DW_FN dw_tile dw_tile_of(int block, const conv_problem *prob, int tile_p, int tile_q, int run)
{
    const int tiles_q = tiles_covering(prob->q, tile_q);
    const int tiles_p = tiles_covering(prob->p, tile_p);
    const int runs = tiles_covering(prob->c, run);
    dw_tile t;
    t.q_first = block % tiles_q * tile_q;
    block /= tiles_q;
    t.p_first = block % tiles_p * tile_p;
    block /= tiles_p;
    t.c_first = block % runs * run;
    t.n = block / runs;
    t.c_count = prob->c - t.c_first < run ? prob->c - t.c_first : run;
    return t;
}

/* A thread's share of its block's tile: channel vector `vec` of the run, output column `q` of the tile,
 * and `rows` consecutive output rows from row `p` of the tile (a vertical strip). */
typedef struct {
    int vec, q, p;
} dw_thread;

/* Thread `thread` of a block of vecs_per_run * tile_q * strips threads: the vector varies fastest, then
 * the column, then the strip. A warp (with vecs_per_run = 4) is 8 neighbouring columns times the 4
 * vectors of the run: each of its shared-memory loads reads 8 whole staged pixels, 64 contiguous bytes
 * each, and each of its global stores writes 8 whole 64-byte pieces of y. */
DW_FN dw_thread dw_thread_of(int thread, int vecs_per_run, int tile_q, int rows)
{
    dw_thread d;
    d.vec = thread % vecs_per_run;
    thread /= vecs_per_run;
    d.q = thread % tile_q;
    d.p = thread / tile_q * rows;
    return d;
}

/* The staged input tile: halo_h x halo_w pixels of the run's channels, stored like NHWC,
 * [halo_h][halo_w][run] halves, so one staged vector is 16 contiguous bytes. Staging item `item`
 * (consecutive threads take consecutive items) is vector `vec` of tile pixel (row, col): the vector
 * varies fastest, so a warp copies whole pixels, 64 contiguous bytes of x each. With
 * vecs_per_run = run / DW_VEC that is also the tile's own order: item i is stored at halves
 * (row*halo_w + col)*run + vec*DW_VEC = i*DW_VEC of the tile. */
typedef struct {
    int row, col, vec;
} dw_stage_item;

DW_FN dw_stage_item dw_stage_item_of(int item, int halo_w, int vecs_per_run)
{
    /* In unsigned arithmetic (item >= 0): a division by a constant is then a multiply and a shift. */
    const unsigned pixel = (unsigned)item / (unsigned)vecs_per_run;
    dw_stage_item it;
    it.vec = (int)((unsigned)item % (unsigned)vecs_per_run);
    it.col = (int)(pixel % (unsigned)halo_w);
    it.row = (int)(pixel / (unsigned)halo_w);
    return it;
}

/* Where in x staging item `it` of tile `t` comes from, or -1 where it lies in the zero padding. */
DW_FN int dw_stage_source(const conv_problem *prob, const dw_tile *t, dw_stage_item it)
{
    const int h = tap_input_coord(t->p_first, 0, prob->stride_h, prob->pad_h, prob->dil_h) + it.row;
    const int w = tap_input_coord(t->q_first, 0, prob->stride_w, prob->pad_w, prob->dil_w) + it.col;
    if (h < 0 || h >= prob->h || w < 0 || w >= prob->w)
        return -1;
    return dw_x_offset(prob, t->n, h, w, t->c_first + it.vec * DW_VEC);
}

/* Shared memory of one block: the staged input tile in fp16 plus the run's taps in fp32,
 * [R*S][w_pitch] floats (tap-major, so a thread's 8 channels of one tap are 32 contiguous bytes).
 * Saturates at INT64_MAX: a stride or dilation near 2^31 makes a halo of ~2^35 pixels each way, whose
 * product would overflow even 64 bits (and no shared memory holds 2^24 pixels anyway). */
DW_FN int64_t dw_smem_bytes(int64_t halo_h, int64_t halo_w, int run, int taps, int w_pitch)
{
    if (halo_h > (1 << 24) || halo_w > (1 << 24))
        return INT64_MAX;
    return halo_h * halo_w * run * 2 + (int64_t)taps * w_pitch * 4;
}

/* The rolling window of 09b's specialized kernels (dilation 1). A thread's strip of m output rows, at
 * stride `stride`, reads window rows 0 .. dw_window_rows() - 1 of the staged tile (counted from its first
 * output's first tap). Window row i meets filter row r in output row (i - r) / stride of the strip, when
 * that divides evenly and lies in [0, m); this returns that output row, or -1. Each (output row, filter
 * row) pair is met exactly once, at i = out*stride + r, so every window row is loaded and converted once
 * and serves all the outputs that read it. */
DW_FN int dw_window_rows(int m, int stride, int r)
{
    return (int)halo_extent(m, stride, r, 1);
}

DW_FN int dw_window_output(int i, int r, int stride, int m)
{
    const int d = i - r;
    if (d < 0 || d % stride != 0 || d / stride >= m)
        return -1;
    return d / stride;
}

/* Which 09b kernel serves a problem: a specialization (filter size, stride, rows per thread fixed at
 * compile time, so the rolling window unrolls completely) for the shapes of real networks, or the
 * general one (any filter, stride and dilation) for the rest. */
typedef enum { DW_GENERAL, DW_3X3_S1, DW_3X3_S2, DW_5X5_S1, DW_5X5_S2 } dw_variant;

DW_FN dw_variant dw_variant_of(const conv_problem *prob)
{
    if (prob->dil_h != 1 || prob->dil_w != 1 || prob->stride_h != prob->stride_w || prob->r != prob->s)
        return DW_GENERAL;
    const int stride = prob->stride_h;
    if (prob->r == 3 && stride == 1)
        return DW_3X3_S1;
    if (prob->r == 3 && stride == 2)
        return DW_3X3_S2;
    if (prob->r == 5 && stride == 1)
        return DW_5X5_S1;
    if (prob->r == 5 && stride == 2)
        return DW_5X5_S2;
    return DW_GENERAL;
}

/* Output rows per thread, at most: 8 at stride 1, where a taller strip shares more of its window rows
 * between outputs (the window is m + R - 1 rows for m outputs); 4 otherwise, which keeps a stride-2
 * tile's halo (and the general kernel's, at any stride and dilation) small enough for several blocks per
 * SM. */
DW_FN int dw_rows_per_thread(dw_variant variant)
{
    return variant == DW_3X3_S1 || variant == DW_5X5_S1 ? 8 : 4;
}

/* Shared memory of 09b's block for a problem at `rows` output rows per thread. */
DW_FN int64_t dw_tile_smem_bytes(const conv_problem *prob, int rows)
{
    return dw_smem_bytes(halo_extent(DW_STRIPS * rows, prob->stride_h, prob->r, prob->dil_h),
                         halo_extent(DW_TILE_Q, prob->stride_w, prob->s, prob->dil_w), DW_RUN,
                         prob->r * prob->s, DW_W_PITCH);
}

/* The rows per thread 09b runs a problem at: a specialization's own (its tile always fits, which the
 * tests check); for the general kernel 4, or 2 or 1 when a large stride, filter or dilation makes the
 * 4-row tile's halo outgrow smem_limit; 0 when not even the 1-row tile fits. */
DW_FN int dw_plan_rows(const conv_problem *prob, int64_t smem_limit)
{
    const dw_variant variant = dw_variant_of(prob);
    if (variant != DW_GENERAL)
        return dw_rows_per_thread(variant);
    for (int rows = dw_rows_per_thread(variant); rows >= 1; rows /= 2)
        if (dw_tile_smem_bytes(prob, rows) <= smem_limit)
            return rows;
    return 0;
}

#undef DW_FN

#endif
