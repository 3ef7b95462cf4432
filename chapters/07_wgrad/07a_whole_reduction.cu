/* 07a: wgrad as an implicit GEMM, one block per output tile walking the whole reduction.
 *
 * What it computes: dw = dL/dw from x and dy = dL/dy, fp16 in and out with fp32 accumulation, NHWC
 * activations and a KRSC filter, any padding, stride, dilation and groups.
 *
 * The GEMM view (docs/gemm_view.md; wgrad.h and split_k.h for the index math): per group,
 * dW[k][(r,s,c)] = sum over j = (n,p,q) of dy[j][k] * x[n][h][w][c]. M = K/groups, N = R*S*C/groups,
 * and the reduction runs over every output pixel of the batch: N*P*Q, hundreds of thousands.
 *
 * What changes from chapter 05's 05h (and chapter 06): the operands and the reduction. Both operands are
 * activations gathered on the fly (x through the im2col mapping, as in chapter 05), and both arrive
 * j-major: 16 bytes of dy are 8 output channels at one pixel, 16 bytes of x 8 input channels. The tiles
 * are staged that way (cp.async, swizzled) and ldmatrix .trans transposes each 8x8 piece of both on its
 * way into the mma.sync fragments (igemm_lanes_of<T, true, true>, addressed as wgrad.h's wgrad_ldsm_*).
 * A thread's chunk column is fixed for the whole loop, so its tap is divided out once; its rows move
 * along j by a k tile each time, carried like digits (wgrad_pixel_next) instead of divided. The epilogue
 * writes fp16 pairs straight from the fragments into dw. The pipeline is chapter 05's (igemm_mainloop,
 * 05f on): a 64 x 128 output tile per block, 32 pixels per stage, 4 stages, one barrier per k tile.
 *
 * Why: dw is a GEMM like the others, but its operands are both activations and its output is the small
 * one; the gather reads both where they lie, with no im2col buffer and no transposed copy. 07a is
 * correct and slow where the output is small: conv1's dw is one row of 4 tiles (with channels padded to
 * 8), so 4 blocks run on 132 SMs, each walking the whole reduction (07b splits it).
 *
 * The kernel is written for a range of the reduction, [begin, end), from a split plan (split_k.h);
 * 07a's plan has one split, the whole of it.
 *
 * Run:
 *   ./build/conv check 07a --emulate
 *   ./build/conv run 07a --layer resnet50/res2_1x1_reduce
 */
#include <stdint.h>
#include <stdio.h>

#include <cuda_fp16.h>

#include "check.h"
#include "conv.h"
#include "../05_implicit_gemm_tc/igemm_pipeline.cuh" /* chapter 05's pipeline, which this chapter reuses */
#include "pad_channels.h"
#include "split_k.h"
#include "tensor_core.h"
#include "wgrad.cuh"
#include "wgrad.h"

/* ---- the kernel --------------------------------------------------------------------------------------------- */

/* prob is the padded problem the operands are laid out in, real the caller's (for where dw goes). Grid:
 * x = output tiles of one group, y = split (one here), z = group. */
template <class T>
static __global__ void __launch_bounds__(T::THREADS, 3)
wgrad_whole(const conv_problem prob, const conv_problem real, const wgrad_step step, const split_plan plan,
            const __half *__restrict__ x, const __half *__restrict__ dy, __half *__restrict__ dw)
{
    const uint32_t smem = smem_address(wgrad_smem);
    const int rows = wgrad_rows(&prob), cols = wgrad_cols(&prob);
    const int group = blockIdx.z, split = blockIdx.y;
    const int group_k0 = group * rows; /* the group's first output channel in the padded problem */
    const gemm_block blk = gemm_block_of(blockIdx.x, cols, T::BM, T::BN);
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int warp_m = warp % T::WARPS_M, warp_n = warp / T::WARPS_M;

    /* The block's range of the reduction: with 07a's plan of one split, all N*P*Q pixels. */
    int64_t begin, end;
    split_range(plan, split, wgrad_reduction(&prob), &begin, &end);

    /* The rows and chunk this thread copies: j rows of the tile, the same chunk column every tile.
     * One division per row here; the loop carries digits (wgrad_pixel_next). */
    wgrad_copier<T> tc;
    const int a_chunk = tid % T::A_CPR, b_chunk = tid % T::B_CPR;
    const int k = blk.row0 + 8 * a_chunk, col = blk.col0 + 8 * b_chunk;
    tc.k_ok = k < rows;
    tc.dy_channel = group_k0 + k;
    tc.col_ok = col < cols;
    tc.tap = wgrad_tap_of(&prob, tc.col_ok ? col : 0);
#pragma unroll
    for (int i = 0; i < T::A_LOADS; i++) {
        tc.a_row[i] = tid / T::A_CPR + i * (T::THREADS / T::A_CPR);
        tc.a_at[i] = wgrad_pixel_of(&prob, begin + tc.a_row[i]);
        tc.a_dst[i] = 16u * swizzle_chunk(tc.a_row[i], a_chunk, T::A_CPR);
    }
#pragma unroll
    for (int i = 0; i < T::B_LOADS; i++) {
        tc.b_row[i] = tid / T::B_CPR + i * (T::THREADS / T::B_CPR);
        tc.b_at[i] = wgrad_pixel_of(&prob, begin + tc.b_row[i]);
        tc.b_dst[i] = T::A_TILE_BYTES + 16u * swizzle_chunk(tc.b_row[i], b_chunk, T::B_CPR);
    }

    /* Per lane, the swizzled byte offset of the row it hands to ldmatrix for each 16-wide fragment of
     * its warp tile, at the tile's first 16 j; the second 16 j are 16 rows further (same swizzle). Both
     * tiles are k-major (igemm_lanes_of<T, true, true>): A addressed by wgrad_ldsm_a_*, B by
     * wgrad_ldsm_b_*, each fragment's 8x8 matrices transposed by ldmatrix .trans. */
    const igemm_lanes<T, true, true> lanes = igemm_lanes_of<T, true, true>(warp_m, warp_n, lane, T::A_TILE_BYTES);
    float acc[T::MMA_M][T::MMA_N][4] = {};

    /* The pipeline of chapter 05's 05f-05k (igemm_mainloop): STAGES-1 tiles in flight, one barrier per tile. */
    const int k_tiles = (int)((end - begin + T::BK - 1) / T::BK);
    int64_t remaining = end - begin; /* pixels left from the next tile to copy on */
    auto copy_next = [&](uint32_t stage) {
        copy_tile(tc, stage, prob, group_k0, step, remaining, x, dy);
        remaining -= T::BK;
    };
    igemm_mainloop<T>(smem, k_tiles, copy_next, lanes, acc);

    /* Epilogue straight from the fragments: each lane holds pairs of neighbouring columns
     * (mma_c_col() is even, and cols is a multiple of 8, so a pair is never cut by the edge). Unpadded,
     * a pair is two neighbouring elements of dw; padded, each element finds its place in dw, or none. */
    const bool unpadded = prob.c == real.c && prob.k == real.k;
    igemm_for_each_pair<T>(acc, warp_m, warp_n, lane, [&](int row, int col, float &v0, float &v1) {
        const int kk = blk.row0 + row, cc = blk.col0 + col;
        if (kk >= rows || cc >= cols)
            return;
        if (unpadded) {
            *(__half2 *)(dw + wgrad_dw_offset(&real, &prob, group_k0 + kk, cc)) = __floats2half2_rn(v0, v1);
        } else {
            const int64_t at0 = wgrad_dw_offset(&real, &prob, group_k0 + kk, cc);
            const int64_t at1 = wgrad_dw_offset(&real, &prob, group_k0 + kk, cc + 1);
            if (at0 >= 0)
                dw[at0] = __float2half_rn(v0);
            if (at1 >= 0)
                dw[at1] = __float2half_rn(v1);
        }
    });
}

/* ---- host side ---------------------------------------------------------------------------------------------- */

/* The workspace: the padded copies of x and dy, where the channels need them (wgrad.cuh). */
extern "C" size_t workspace_07a(const conv_problem *prob)
{
    const padded_copies l = padded_copies_of(prob);
    return l.x_bytes + l.dy_bytes;
}

extern "C" bool supports_07a(const conv_problem *prob, char *why, size_t why_len)
{
    return supports_wgrad("07a", prob, why, why_len);
}

/* The harness keeps fprop's names: x = activations, w = dw (the output), y = dy (an input). */
extern "C" void launch_07a(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    typedef shape_07 T;
    const conv_problem padded = wgrad_padded_problem(prob);
    const split_plan whole = {1, wgrad_reduction(&padded)};
    const padded_copies l = padded_copies_of(prob);
    const __half *xs, *dys;
    prepare(prob, l, x, y, workspace, &xs, &dys);

    const size_t smem = T::SMEM_BYTES;
    static bool opted_in = false; /* over 48 KB a block must opt in, once per kernel */
    if (smem > 48 * 1024 && !opted_in) {
        CUDA_CHECK(cudaFuncSetAttribute(wgrad_whole<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        opted_in = true;
    }
    const dim3 grid((unsigned)(tiles_covering(wgrad_rows(&padded), T::BM) * tiles_covering(wgrad_cols(&padded), T::BN)),
                    (unsigned)whole.splits, (unsigned)padded.groups);
    const wgrad_step step = wgrad_step_make(&padded, T::BK);
    wgrad_whole<T><<<grid, T::THREADS, smem>>>(padded, *prob, step, whole, xs, dys, (__half *)w);
    CUDA_CHECK_LAUNCH();
}
