/* 05d_16byte_loads.cuh: 05d's kernel, 16-byte global loads, each address split into a pixel part and a
 * tap part.
 *
 * What changes from 05c: how a tile gets from global to shared memory. A thread loads 8 consecutive kappa
 * with one 16-byte load (one tap, 8 channels of one input pixel) into registers, then stores the chunk
 * into the swizzled tile with one 16-byte store. Its address is no longer divided out per element: the
 * pixel part (igemm_row_origin()) is computed once per row before the loop, since a thread's rows do not
 * change, and the tap part (igemm_tap_offset()) once per k tile, shared by all of that thread's rows
 * (implicit_gemm.h: "split").
 *
 * Why: 05c spends most of its instructions on divisions and 2-byte loads: per thread and k tile, 16 for
 * each tile, each after its own divisions. Now it is 2 loads of 16 bytes for each tile, and one division
 * of kappa per k tile.
 *
 * The cost: the 8 values must be 8 channels of one tap, 16-byte aligned, so C/groups must be a multiple
 * of 8. Other problems (conv1's C = 3) run on a copy of x and w with each group's channels padded with
 * zeros to a multiple of 8 (pad_fprop(), common/kernel/pad_channels.h), made in the workspace before the
 * kernel; the zero channels add exact zeros. K needs nothing: columns past K/groups load zeros and are
 * never stored.
 *
 * This header holds the kernel and its launch, as templates over the tile shape: 05d_16byte_loads.cu
 * launches them on 64x64, 05e_large_tile.cu on 128x128.
 */
#ifndef STEP_05D_CUH
#define STEP_05D_CUH

#include <stdint.h>

#include <cuda_fp16.h>

#include "check.h"
#include "conv.h"
#include "igemm_pipeline.cuh"
#include "implicit_gemm.h"
#include "pad_channels.h"
#include "steps.cuh"
#include "tensor_core.h"

template <class T>
static __global__ void __launch_bounds__(T::THREADS, T::MIN_BLOCKS)
igemm_wide_loads(const conv_problem prob, const __half *__restrict__ x, const __half *__restrict__ w,
                 __half *__restrict__ y)
{
    __shared__ __align__(128) uint4 a_tile[T::BM * T::CPR]; /* 16-byte chunks, swizzle_chunk() order */
    __shared__ __align__(128) uint4 b_tile[T::BN * T::CPR];

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

    const igemm_lanes<T, false, false> lanes = igemm_lanes_of<T, false, false>(warp_m, warp_n, lane, 0);
    const uint32_t a_base = smem_address(a_tile), b_base = smem_address(b_tile);
    float acc[T::MMA_M][T::MMA_N][4] = {};

    const int k_tiles = tiles_covering(depth, T::BK);
    for (int kt = 0; kt < k_tiles; kt++) {
        /* This thread's 8 consecutive kappa: one tap, 8 channels. The tap part of the address is the
         * same for all its rows; the padding test is per row. */
        const int kappa = kt * T::BK + chunk * 8;
        const bool k_ok = kappa < depth;
        const igemm_tap tap = igemm_tap_of(&prob, kappa);
        const int tap_offset = igemm_tap_offset(&prob, tap.r, tap.s, tap.c);
        uint4 a_val[T::A_LOADS], b_val[T::B_LOADS];
#pragma unroll
        for (int i = 0; i < T::A_LOADS; i++) {
            const bool ok = k_ok && a_row_ok[i] && igemm_tap_inside(&prob, a_origin[i], tap.r, tap.s);
            a_val[i] = ok ? *(const uint4 *)(x + (a_origin[i].offset + tap_offset)) : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int i = 0; i < T::B_LOADS; i++)
            b_val[i] = k_ok && b_row_ok[i] ? *(const uint4 *)(w + (b_offset[i] + kappa)) : make_uint4(0, 0, 0, 0);

        __syncthreads(); /* every warp is done with the previous tile */
#pragma unroll
        for (int i = 0; i < T::A_LOADS; i++)
            a_tile[swizzle_chunk(igemm_load_row(tid, i, T::THREADS, T::CPR), chunk, T::CPR)] = a_val[i];
#pragma unroll
        for (int i = 0; i < T::B_LOADS; i++)
            b_tile[swizzle_chunk(igemm_load_row(tid, i, T::THREADS, T::CPR), chunk, T::CPR)] = b_val[i];
        __syncthreads();

        igemm_warp_tile_mma<T>(a_base, b_base, lanes, acc);
    }

    store_fragments<T>(acc, prob, group, blk, warp_m, warp_n, lane, y);
}

/* The launch, on the channel-padded copies when C/groups is not a multiple of 8 (pad_fprop()). */
template <class T>
static void launch_16byte_loads(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    const pad_fprop_operands op = pad_fprop(prob, x, w, workspace);
    igemm_wide_loads<T><<<grid_of(&op.prob, T::BM, T::BN), T::THREADS>>>(op.prob, (const __half *)op.x,
                                                                         (const __half *)op.w, (__half *)y);
    CUDA_CHECK_LAUNCH();
}

#endif
