/* wgrad.cuh: what chapter 07's two steps (07a_whole_reduction.cu, 07b_split_k.cu) share unchanged, so
 * that each step's file holds its kernels and launch and a diff between them shows the idea that
 * separates them. The index math is in wgrad.h and split_k.h; the pipeline's building blocks are
 * chapter 05's igemm_pipeline.cuh.
 *
 *   wgrad_shape<>, shape_07     the block tile (wgrad.h's WGRAD_SHAPE) with the constants both steps
 *                               derive from it: igemm_tile's warp tile, mma tiles per warp and stage bytes,
 *                               plus how wgrad's threads copy a tile in 16-byte chunks.
 *   wgrad_copier, copy_tile()   one thread's copies of one k tile: dy (A) and x (B), gathered along j.
 *   padded_copies_of(), prepare()   the copies of x and dy with channels padded to multiples of 8.
 *   supports_wgrad()            the limits both steps share.
 *
 * C/groups or K/groups not a multiple of 8 (conv1's C = 3): x and/or dy are first copied into the
 * workspace with each group's channels padded with zeros to a multiple of 8; the kernels run on the
 * padded problem, and the padded rows and columns of dW are computed and never stored
 * (wgrad_dw_offset()).
 */
#ifndef CH07_WGRAD_CUH
#define CH07_WGRAD_CUH

#include <stdint.h>
#include <stdio.h>

#include <cuda_fp16.h>

#include "check.h"
#include "conv.h"
#include "../05_implicit_gemm_tc/igemm_pipeline.cuh" /* chapter 05's pipeline, which this chapter reuses */
#include "pad_channels.h"
#include "split_k.h"
#include "tensor_core.h"
#include "wgrad.h"

/* ---- the tile shape ----------------------------------------------------------------------------------- */

/* The warp tile, mma tiles and stage bytes come from igemm_tile (igemm_pipeline.cuh); added here is
 * how wgrad copies a tile: both tiles are BK rows (pixels j) of 16-byte chunks, along k (A, dy) or
 * along the columns (B, x). */
template <int BM_, int BN_, int BK_, int WARPS_M_, int WARPS_N_, int STAGES_>
struct wgrad_shape : igemm_tile<BM_, BN_, BK_, WARPS_M_, WARPS_N_, STAGES_> {
    enum {
        A_CPR = BM_ / 8,                    /* 16-byte chunks per staged j row: dy (A) and x (B) */
        B_CPR = BN_ / 8,
        A_LOADS = BK_ * A_CPR / (32 * WARPS_M_ * WARPS_N_), /* 16-byte copies per thread per k tile */
        B_LOADS = BK_ * B_CPR / (32 * WARPS_M_ * WARPS_N_),
        SMEM_BYTES = STAGES_ * (BM_ + BN_) * BK_ * 2,
    };
    static_assert(A_CPR >= 8 && B_CPR >= 8, "the swizzle's row period is 8 (chunks_per_row >= 8), so +16 rows "
                                            "moves a lane's address by exactly 16 rows");
    static_assert((32 * WARPS_M_ * WARPS_N_) % A_CPR == 0 && (32 * WARPS_M_ * WARPS_N_) % B_CPR == 0 &&
                      (BK_ * A_CPR) % (32 * WARPS_M_ * WARPS_N_) == 0 &&
                      (BK_ * B_CPR) % (32 * WARPS_M_ * WARPS_N_) == 0,
                  "the threads copy whole rows of chunks, the same number each");
    static_assert(STAGES_ >= 3, "the pipeline keeps at least two tiles in flight");
};

typedef wgrad_shape<WGRAD_SHAPE> shape_07;
static_assert(shape_07::BK == WGRAD_BK, "the split plan's block_k is the kernel's tile depth");

/* ---- copying one k tile ----------------------------------------------------------------------------------- */

/* What a thread needs to issue its copies of one k tile: the pixels its rows are at, the fixed part of
 * its chunk (8 output channels of dy; one tap and 8 channels of x), and where the chunks go. */
template <class T>
struct wgrad_copier {
    wgrad_pixel a_at[T::A_LOADS];
    wgrad_pixel b_at[T::B_LOADS];
    uint32_t a_dst[T::A_LOADS], b_dst[T::B_LOADS]; /* byte offsets in a stage, swizzled */
    int a_row[T::A_LOADS], b_row[T::B_LOADS];      /* j - (the tile's first j) */
    int dy_channel;                                /* g*K'/G + k of this thread's first channel */
    bool k_ok, col_ok;
    wgrad_tap tap;
};

/* Issues this thread's cp.async for the next k tile into the stage at `stage`, then walks each row's
 * pixel one k tile on. Rows at or past `remaining` (the end of the block's range of the reduction),
 * output channels and columns past the GEMM's edge, and taps in the padding are copied with src-size 0:
 * zeros. */
template <class T>
static __device__ __forceinline__ void copy_tile(wgrad_copier<T> &tc, uint32_t stage, const conv_problem &prob,
                                                 int group_k0, wgrad_step step, int64_t remaining,
                                                 const __half *x, const __half *dy)
{
#pragma unroll
    for (int i = 0; i < T::A_LOADS; i++) {
        const bool ok = tc.k_ok && tc.a_row[i] < remaining;
        const __half *src = ok ? dy + wgrad_dy_offset(&prob, tc.a_at[i], tc.dy_channel) : dy;
        cp_async_16(stage + tc.a_dst[i], src, ok);
        tc.a_at[i] = wgrad_pixel_next(&prob, tc.a_at[i], step);
    }
#pragma unroll
    for (int i = 0; i < T::B_LOADS; i++) {
        const int64_t at = tc.col_ok && tc.b_row[i] < remaining ? wgrad_x_offset(&prob, tc.b_at[i], tc.tap, group_k0)
                                                                 : -1;
        cp_async_16(stage + tc.b_dst[i], at >= 0 ? x + at : x, at >= 0);
        tc.b_at[i] = wgrad_pixel_next(&prob, tc.b_at[i], step);
    }
}

/* A block's dynamic shared memory: STAGES x (A tile, B tile). */
extern __shared__ __align__(128) unsigned char wgrad_smem[];

/* ---- host side ---------------------------------------------------------------------------------------------- */

static size_t align256(size_t bytes)
{
    return (bytes + 255) / 256 * 256;
}

/* The workspace starts with the padded copies: padded x (if C/G % 8), then padded dy (if K/G % 8). */
typedef struct {
    size_t x_bytes, dy_bytes;
} padded_copies;

static padded_copies padded_copies_of(const conv_problem *prob)
{
    const conv_problem padded = wgrad_padded_problem(prob);
    padded_copies l = {0, 0};
    if (padded.c != prob->c)
        l.x_bytes = align256((size_t)prob->n * prob->h * prob->w * padded.c * 2);
    if (padded.k != prob->k)
        l.dy_bytes = align256((size_t)prob->n * prob->p * prob->q * padded.k * 2);
    return l;
}

static bool supports_wgrad(const char *id, const conv_problem *prob, char *why, size_t why_len)
{
    if (prob->groups > 65535) {
        snprintf(why, why_len, "%s puts the group on gridDim.z, which holds at most 65535 (groups = %d)", id,
                 prob->groups);
        return false;
    }
    const conv_problem padded = wgrad_padded_problem(prob);
    const int64_t tiles = (int64_t)tiles_covering(wgrad_rows(&padded), shape_07::BM) *
                          tiles_covering(wgrad_cols(&padded), shape_07::BN);
    if (tiles > INT32_MAX || (int64_t)padded.r * padded.s * (padded.c / padded.groups) > INT32_MAX / 2) {
        snprintf(why, why_len, "%s indexes the %d x %lld output in 32-bit ints per group; this one is too large", id,
                 wgrad_rows(&padded), (long long)padded.r * padded.s * (padded.c / padded.groups));
        return false;
    }
    return true;
}

/* The operands the kernels read: x and dy themselves, or padded copies in the workspace. */
static void prepare(const conv_problem *prob, const padded_copies &l, void *x, void *dy, void *workspace,
                    const __half **x_out, const __half **dy_out)
{
    const conv_problem padded = wgrad_padded_problem(prob);
    *x_out = (const __half *)x;
    *dy_out = (const __half *)dy;
    if (l.x_bytes) {
        __half *dst = (__half *)workspace;
        pad_channels_f16(x, dst, (int64_t)prob->n * prob->h * prob->w * prob->groups, prob->c / prob->groups,
                         padded.c / padded.groups);
        *x_out = dst;
    }
    if (l.dy_bytes) {
        __half *dst = (__half *)((char *)workspace + l.x_bytes);
        pad_channels_f16(dy, dst, (int64_t)prob->n * prob->p * prob->q * prob->groups, prob->k / prob->groups,
                         padded.k / padded.groups);
        *dy_out = dst;
    }
}

#endif
