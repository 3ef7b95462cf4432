/* 05g: precomputed deltas and masks instead of division.
 *
 * What changes from 05f: how a thread finds its next tap. In 05f each copy_next divides kappa into
 * (r, s, c) and tests both coordinates of every row against the image. Here a thread's position along
 * kappa is an igemm_iter, (kappa, r, s, c) and the tap's offset in x, and each k tile moves it by BK,
 * written once as mixed-radix digits (dr, ds, dc) (igemm_walk_make(), on the host): three additions and
 * at most two carries (igemm_iter_next()). Whether a row's tap is inside the image is one bit of each
 * of two 32-bit masks computed once per row (igemm_tap_mask(): bit t of the h mask says whether filter
 * row t reads inside the image; likewise w): (h_mask >> r) & (w_mask >> s) & 1.
 *
 * Why: the divisions and compares of 05f run for every k tile on the same units that must issue the
 * copies and the ldmatrix; with the tensor cores fed from a pipeline, those instructions are what is
 * left to remove. The masks limit filters to R, S <= 32 (supports() says so).
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

typedef tile_shape<IGEMM_SHAPE_05G> shape_05g;

extern __shared__ __align__(128) unsigned char igemm_smem[];

template <class T>
static __global__ void __launch_bounds__(T::THREADS, T::MIN_BLOCKS)
igemm_walked(const conv_problem prob, const igemm_walk walk, const __half *__restrict__ x,
             const __half *__restrict__ w, __half *__restrict__ y)
{
    const uint32_t smem = smem_address(igemm_smem); /* STAGES x (A tile, B tile), swizzle_chunk() order */

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

    store_fragments<T>(acc, prob, group, blk, warp_m, warp_n, lane, y);
}

extern "C" bool supports_05g(const conv_problem *prob, char *why, size_t why_len)
{
    return supports_16byte("05g", true, shape_05g::BM, shape_05g::BN, prob, why, why_len);
}

extern "C" void launch_05g(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    typedef shape_05g T;
    const pad_fprop_operands op = pad_fprop(prob, x, w, workspace);
    const size_t smem = (size_t)T::STAGES * T::STAGE_BYTES;
    /* Over 48 KB a block must opt in, once per kernel (and device; the harness uses one). */
    static bool opted_in = false;
    if (smem > 48 * 1024 && !opted_in) {
        CUDA_CHECK(cudaFuncSetAttribute(igemm_walked<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        opted_in = true;
    }
    const igemm_walk walk = igemm_walk_make(&op.prob, T::BK);
    igemm_walked<T><<<grid_of(&op.prob, T::BM, T::BN), T::THREADS, smem>>>(op.prob, walk, (const __half *)op.x,
                                                                           (const __half *)op.w, (__half *)y);
    CUDA_CHECK_LAUNCH();
}
