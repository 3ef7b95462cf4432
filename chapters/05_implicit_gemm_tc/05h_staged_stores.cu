/* 05h: the output staged through shared memory, 16-byte stores to y.
 *
 * What changes from 05g: how the results leave the block. After the loop the stages are free, so the
 * accumulators go there first, as fp16 pairs into a BM x (BN + 8) tile (igemm_stage_out()), and then
 * each thread writes whole 16-byte chunks of it, 8 output channels of one pixel, to y
 * (igemm_store_chunks(); element by element where K or K/groups is not a multiple of 8, and at the last
 * column tile's edge). Both live in igemm_pipeline.cuh; chapter 08 stores the same way.
 *
 * Why: straight from the fragments (05b-05g) a lane holds pairs of neighbouring channels, so a warp's
 * store writes 16 bytes (4 lanes' pairs) in each of 8 rows of y: 32-bit stores, half of each 32-byte
 * sector per request. Through shared memory every store is 16 bytes and a warp writes whole lines. The
 * +8 halves of pitch put the 8 rows of one fragment store into different banks.
 *
 * 05i (05i_fused_epilogue.cuh) is this kernel with a fused epilogue applied before the staging.
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

typedef tile_shape<IGEMM_SHAPE_05H> shape_05h;

extern __shared__ __align__(128) unsigned char igemm_smem[];

template <class T>
static __global__ void __launch_bounds__(T::THREADS, T::MIN_BLOCKS)
igemm_staged(const conv_problem prob, const igemm_walk walk, const __half *__restrict__ x,
             const __half *__restrict__ w, __half *__restrict__ y)
{
    const uint32_t smem = smem_address(igemm_smem); /* STAGES x (A tile, B tile), then the output tile */

    const int rows = igemm_rows(&prob), cols = igemm_cols(&prob), depth = igemm_depth(&prob);
    const int group = blockIdx.y;
    const gemm_block blk = gemm_block_of(blockIdx.x, cols, T::BM, T::BN);
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int warp_m = warp % T::WARPS_M, warp_n = warp / T::WARPS_M;
    const int chunk = igemm_load_chunk(tid, T::CPR); /* the same chunk column in A and in B */

    /* The rows this thread copies: where each one's receptive field starts and which of its taps are
     * inside the image. Divisions, once. */
    int a_offset[T::A_LOADS];
    uint32_t a_h_mask[T::A_LOADS], a_w_mask[T::A_LOADS]; /* igemm_tap_mask(): 0 for rows past the last pixel */
#pragma unroll
    for (int i = 0; i < T::A_LOADS; i++) {
        const int m = blk.row0 + igemm_load_row(tid, i, T::THREADS, T::CPR);
        a_offset[i] = 0;
        a_h_mask[i] = a_w_mask[i] = 0;
        if (m < rows) {
            const igemm_origin o = igemm_row_origin(&prob, group, m);
            a_offset[i] = o.offset;
            a_h_mask[i] = igemm_tap_mask(o.h, prob.r, prob.dil_h, prob.h);
            a_w_mask[i] = igemm_tap_mask(o.w, prob.s, prob.dil_w, prob.w);
        }
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
     * consecutive kappa, one tap and 8 channels, for each of its rows; then one k tile on. */
    igemm_iter at = igemm_iter_at(&prob, chunk * 8);
    auto copy_next = [&](uint32_t stage) {
        const bool k_ok = at.kappa < depth;
#pragma unroll
        for (int i = 0; i < T::A_LOADS; i++) {
            const bool ok = k_ok && ((a_h_mask[i] >> at.r) & (a_w_mask[i] >> at.s) & 1u);
            const uint32_t dst = 16u * swizzle_chunk(igemm_load_row(tid, i, T::THREADS, T::CPR), chunk, T::CPR);
            cp_async_16(stage + dst, ok ? x + (a_offset[i] + at.offset) : x, ok);
        }
#pragma unroll
        for (int i = 0; i < T::B_LOADS; i++) {
            const bool ok = k_ok && b_row_ok[i];
            const uint32_t dst = 16u * swizzle_chunk(igemm_load_row(tid, i, T::THREADS, T::CPR), chunk, T::CPR);
            cp_async_16(stage + T::A_TILE_BYTES + dst, ok ? w + (b_offset[i] + at.kappa) : w, ok);
        }
        at = igemm_iter_next(at, walk);
    };

    const int k_tiles = tiles_covering(depth, T::BK);
    igemm_mainloop<T>(smem, k_tiles, copy_next, lanes, acc);
    __syncthreads(); /* every warp is done with the stages: they now hold the output tile */

    /* fp16 pairs into the BM x OUT_PITCH tile, a barrier, and whole 16-byte chunks of it to y. */
    __half *out = (__half *)igemm_smem;
    igemm_stage_out<T>(out, acc, warp_m, warp_n, lane);
    __syncthreads();

    igemm_store_chunks<T>(out, tid, blk.row0, blk.col0, rows, cols, prob.k % 8 == 0 && cols % 8 == 0,
                          [&](int m, int j) { return y + igemm_y_offset(&prob, group, m, j); });
}

/* Shared memory of a block: the stages, reused for the output tile after the loop. */
template <class T>
static size_t staged_smem_bytes(void)
{
    const size_t stages = (size_t)T::STAGES * T::STAGE_BYTES, out = (size_t)T::BM * T::OUT_PITCH * 2;
    return stages > out ? stages : out;
}

extern "C" bool supports_05h(const conv_problem *prob, char *why, size_t why_len)
{
    return supports_16byte("05h", true, shape_05h::BM, shape_05h::BN, prob, why, why_len);
}

extern "C" void launch_05h(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    typedef shape_05h T;
    const pad_fprop_operands op = pad_fprop(prob, x, w, workspace);
    const size_t smem = staged_smem_bytes<T>();
    /* Over 48 KB a block must opt in, once per kernel (and device; the harness uses one). */
    static bool opted_in = false;
    if (smem > 48 * 1024 && !opted_in) {
        CUDA_CHECK(cudaFuncSetAttribute(igemm_staged<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        opted_in = true;
    }
    const igemm_walk walk = igemm_walk_make(&op.prob, T::BK);
    igemm_staged<T><<<grid_of(&op.prob, T::BM, T::BN), T::THREADS, smem>>>(op.prob, walk, (const __half *)op.x,
                                                                           (const __half *)op.w, (__half *)y);
    CUDA_CHECK_LAUNCH();
}
