/* 05f: a multi-stage cp.async pipeline.
 *
 * What changes from 05e: how the copies overlap the math. cp.async copies 16 bytes from global to shared
 * memory without passing through registers, asynchronously, so a block can have the copies for k tiles
 * kt+1 .. kt+3 in flight while its tensor cores work on kt. The tiles live in 4 stages of dynamic
 * shared memory (64 KB: the 48 KB default needs an opt-in), and the loop is igemm_mainloop()
 * (igemm_pipeline.cuh): a prologue that starts 3 tiles, then per k tile a wait for the oldest, one
 * barrier, the copy of the tile 3 ahead (copy_next below, 05e's loads as cp.async) and the mma.sync on
 * the landed one. Out-of-image taps, rows past the last pixel, columns past K/groups and kappa past the
 * reduction become zeros with no branch around the copy: src-size 0 makes cp.async zero-fill.
 *
 * Why: in 05e each k tile waits a full global-memory latency before its math, with only the other
 * resident block to hide it. Here the latency of one tile overlaps the math on three others. The
 * addresses are still 05e's: divided once per k tile, the padding tested per row.
 */
#include <stdint.h>

#include <cuda_fp16.h>

#include "check.h"
#include "conv.h"
#include "igemm_pipeline.cuh"
#include "implicit_gemm.h"
#include "pad_channels.h"
#include "steps.cuh"
#include "tensor_core.h"

typedef tile_shape<IGEMM_SHAPE_05F> shape_05f;

extern __shared__ __align__(128) unsigned char igemm_smem[];

template <class T>
static __global__ void __launch_bounds__(T::THREADS, T::MIN_BLOCKS)
igemm_cp_async(const conv_problem prob, const __half *__restrict__ x, const __half *__restrict__ w,
               __half *__restrict__ y)
{
    const uint32_t smem = smem_address(igemm_smem); /* STAGES x (A tile, B tile), swizzle_chunk() order */

    const int rows = igemm_rows(&prob), cols = igemm_cols(&prob), depth = igemm_depth(&prob);
    const int group = blockIdx.y;
    const gemm_block blk = gemm_block_of(blockIdx.x, cols, T::BM, T::BN);
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int warp_m = warp % T::WARPS_M, warp_n = warp / T::WARPS_M;
    const int chunk = igemm_load_chunk(tid, T::CPR); /* the same chunk column in A and in B */

    /* The rows this thread copies, and where each one's receptive field starts: divisions, once. */
    igemm_origin a_origin[T::A_LOADS];
    bool a_row_ok[T::A_LOADS];
#pragma unroll
    for (int i = 0; i < T::A_LOADS; i++) {
        const int m = blk.row0 + igemm_load_row(tid, i, T::THREADS, T::CPR);
        a_row_ok[i] = m < rows;
        a_origin[i] = igemm_row_origin(&prob, group, a_row_ok[i] ? m : 0);
    }
    int b_offset[T::B_LOADS];
    bool b_row_ok[T::B_LOADS];
#pragma unroll
    for (int i = 0; i < T::B_LOADS; i++) {
        const int j = blk.col0 + igemm_load_row(tid, i, T::THREADS, T::CPR);
        b_row_ok[i] = j < cols;
        b_offset[i] = igemm_b_offset(&prob, group, b_row_ok[i] ? j : 0, 0);
    }

    const igemm_lanes<T, false, false> lanes = igemm_lanes_of<T, false, false>(warp_m, warp_n, lane, T::A_TILE_BYTES);
    float acc[T::MMA_M][T::MMA_N][4] = {};

    /* This thread's copies of the next k tile into the stage at `stage` (a .shared address): its 8
     * consecutive kappa, one tap and 8 channels, for each of its rows. The tap part of the address is the
     * same for all its rows; the padding test is per row. */
    int next_kappa = chunk * 8;
    auto copy_next = [&](uint32_t stage) {
        const int kappa = next_kappa;
        const bool k_ok = kappa < depth;
        const igemm_tap tap = igemm_tap_of(&prob, kappa);
        const int tap_offset = igemm_tap_offset(&prob, tap.r, tap.s, tap.c);
#pragma unroll
        for (int i = 0; i < T::A_LOADS; i++) {
            const bool ok = k_ok && a_row_ok[i] && igemm_tap_inside(&prob, a_origin[i], tap.r, tap.s);
            const uint32_t dst = 16u * swizzle_chunk(igemm_load_row(tid, i, T::THREADS, T::CPR), chunk, T::CPR);
            cp_async_16(stage + dst, ok ? x + (a_origin[i].offset + tap_offset) : x, ok);
        }
#pragma unroll
        for (int i = 0; i < T::B_LOADS; i++) {
            const bool ok = k_ok && b_row_ok[i];
            const uint32_t dst = 16u * swizzle_chunk(igemm_load_row(tid, i, T::THREADS, T::CPR), chunk, T::CPR);
            cp_async_16(stage + T::A_TILE_BYTES + dst, ok ? w + (b_offset[i] + kappa) : w, ok);
        }
        next_kappa += T::BK;
    };

    const int k_tiles = tiles_covering(depth, T::BK);
    igemm_mainloop<T>(smem, k_tiles, copy_next, lanes, acc);

    store_fragments<T>(acc, prob, group, blk, warp_m, warp_n, lane, y);
}

extern "C" bool supports_05f(const conv_problem *prob, char *why, size_t why_len)
{
    return supports_16byte("05f", false, shape_05f::BM, shape_05f::BN, prob, why, why_len);
}

extern "C" void launch_05f(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    typedef shape_05f T;
    const pad_fprop_operands op = pad_fprop(prob, x, w, workspace);
    const size_t smem = (size_t)T::STAGES * T::STAGE_BYTES;
    /* Over 48 KB a block must opt in, once per kernel (and device; the harness uses one). */
    static bool opted_in = false;
    if (smem > 48 * 1024 && !opted_in) {
        CUDA_CHECK(cudaFuncSetAttribute(igemm_cp_async<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        opted_in = true;
    }
    igemm_cp_async<T><<<grid_of(&op.prob, T::BM, T::BN), T::THREADS, smem>>>(op.prob, (const __half *)op.x,
                                                                             (const __half *)op.w, (__half *)y);
    CUDA_CHECK_LAUNCH();
}
