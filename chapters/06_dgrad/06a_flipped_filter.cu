/* 06a: dgrad at stride 1, the flipped filter, as one implicit GEMM on tensor cores.
 *
 * What it computes: dx = dL/dx from dy = dL/dy and the filter, fp16 in and out with fp32 accumulation,
 * NHWC dy and dx, KRSC filter, any padding, dilation and groups, stride 1 (06b takes any stride).
 *
 * The GEMM view (docs/gemm_view.md; dgrad.h for the index math and its derivation): per group,
 * D[m][j] = sum_kappa A[m][kappa] * B[kappa][j] with m = (n, h, w) an input pixel, j an input channel
 * (C/groups columns) and kappa = (r, s, k) a tap and an output channel (R * S * K/groups, k fastest:
 * 8 consecutive kappa are 16 contiguous bytes of dy).
 *   A is gathered from dy: pixel (n, h, w) through tap (r, s) reads dy[n][p][q] with
 *     p = h + pad_h - r*dil_h, q likewise, zero where p (or q) falls outside the output. This is fprop
 *     with the filter turned by 180 degrees (the flipped filter), read in place: no flipped copy;
 *   B is the filter read as [K*R*S][C/groups]: a KRSC row (k, r, s) is C/groups contiguous halves, so
 *     B's rows (not its columns, as in chapter 05) are contiguous.
 *
 * What changes from chapter 05's 05h: the index math and the B side. The output coordinate is computed
 * from the input coordinate (dgrad.h, dgrad_direct(): out0 = pad, out_step = dil), and B is staged
 * k-major and handed to mma.sync through ldmatrix .trans, which transposes each 8x8 matrix on the way
 * to the registers. Everything else is 05h's design, taken from chapter 05's igemm_pipeline.cuh: the
 * 4-stage cp.async pipeline with one barrier per k tile (igemm_mainloop), the warp tile's ldmatrix +
 * mma.sync loop (igemm_lanes_of, igemm_warp_tile_mma, with A k-contiguous and B k-major), zero-fill
 * (src-size 0) for taps outside dy and for tile edges, swizzled shared memory (tensor_core.h) and the
 * staged epilogue writing 16-byte chunks of dx (igemm_stage_out, igemm_out_chunks). What is dgrad's own
 * is gathering A from dy and B from the filter (copy_tile, dgrad.cuh) and where each chunk of dx goes.
 *
 * Why: at stride 1 every tap reaches every pixel, so dgrad is a convolution like fprop, with K and C
 * swapped, and 05h's design carries over. The filter is read as it lies in memory, which is why B's
 * tile is transposed by ldmatrix instead.
 *
 * The tile shape is picked per problem from three (dgrad.h's DGRAD_SHAPE_*, dgrad_pick_shape()):
 * 128x128x32 of 4 warps of 64x64, 256x64 when C/groups <= 64, 64x64 of 4 warps of 32x32 when the others
 * give fewer blocks than the GPU has SMs. Channels that are not multiples of 8 run on padded copies
 * (dgrad.cuh).
 *
 * Run:
 *   ./build/conv check 06a --emulate
 *   ./build/conv run 06a --layer resnet50/res2_3x3
 */
#include <stdint.h>
#include <stdio.h>

#include <cuda_fp16.h>

#include "check.h"
#include "conv.h"
#include "dgrad.cuh"
#include "dgrad.h"
#include "../05_implicit_gemm_tc/igemm_pipeline.cuh" /* chapter 05's pipeline, which this chapter reuses */
#include "pad_channels.h"
#include "tensor_core.h"

/* ---- the kernel ------------------------------------------------------------------------------------ */

/* The whole problem as one GEMM per group: every pixel, every tap. Grid: x = tiles, y = group. */
template <class T>
static __global__ void __launch_bounds__(T::THREADS, T::MIN_BLOCKS)
dgrad_flipped(const conv_problem prob, const __half *__restrict__ dy, const __half *__restrict__ w,
              __half *__restrict__ dx)
{
    const dgrad_phase ph = dgrad_direct(&prob); /* every pixel and tap: p = h + pad_h - r*dil_h */
    const int rows = dgrad_rows(&prob, ph), cols = dgrad_cols(&prob), depth = dgrad_depth(&prob, ph);
    const int group = blockIdx.y;
    const gemm_block blk = gemm_block_of(blockIdx.x, cols, T::BM, T::BN);
    if (blk.row0 >= rows) /* past the last pixel: the grid fits this one GEMM, so no block is */
        return;
    const dgrad_walk walk = dgrad_walk_make(&prob, ph, T::BK);
    const uint32_t smem = smem_address(dgrad_smem); /* STAGES x (A tile, B tile), then the output tile */
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int warp_m = warp % T::WARPS_M, warp_n = warp / T::WARPS_M;

    /* Everything the loop needs about this thread's rows and filter row, divisions done here, once. */
    tile_copier<T> tc;
    const int a_chunk = tid % T::A_CPR;
#pragma unroll
    for (int i = 0; i < T::A_LOADS; i++) {
        const int row = tid / T::A_CPR + i * (T::THREADS / T::A_CPR), m = blk.row0 + row;
        tc.a_offset[i] = 0;
        tc.a_h_mask[i] = tc.a_w_mask[i] = 0;
        if (m < rows) {
            const dgrad_origin o = dgrad_row_origin(&prob, ph, group, m);
            tc.a_offset[i] = o.offset;
            tc.a_h_mask[i] = dgrad_tap_mask(o.p, ph.h.taps, ph.h.out_step, prob.p);
            tc.a_w_mask[i] = dgrad_tap_mask(o.q, ph.w.taps, ph.w.out_step, prob.q);
        }
        tc.a_dst[i] = 16u * swizzle_chunk(row, a_chunk, T::A_CPR);
    }
    const int b_row = tid / T::B_THREADS_PER_ROW;
#pragma unroll
    for (int i = 0; i < T::B_LOADS; i++) {
        const int chunk = tid % T::B_THREADS_PER_ROW + i * T::B_THREADS_PER_ROW;
        tc.b_ok[i] = blk.col0 + 8 * chunk < cols;
        tc.b_dst[i] = T::A_TILE_BYTES + 16u * swizzle_chunk(b_row, chunk, T::B_CPR);
    }
    tc.a_at = dgrad_iter_at(walk, 8 * a_chunk);
    tc.b_at = dgrad_iter_at(walk, b_row);
    const __half *w_tile = w + dgrad_b_group_offset(&prob, group) + blk.col0;

    /* The warp tile: igemm_lanes_of() and igemm_warp_tile_mma() (igemm_pipeline.cuh) with A k-contiguous,
     * as in chapter 05, and B k-major (template arguments false, true). A: one lane offset per 16-deep
     * step, fragments 16 rows apart add 16 rows. B is stored k-major, so a 16-deep step is 16 rows
     * further down (a constant, the swizzle moves by whole rows), while the warp's n16 slices are chunks
     * along a row, which the XOR permutes: one offset per slice. ldmatrix .x4 .trans of a 16 (k) x 16 (n)
     * block: matrices (k 0-7, n 0-7), (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15); lane L points
     * at row L % 16, chunk L / 16 (ldsm_a_*). Transposed, registers 0,1 are the first n8 tile's B
     * operand, 2,3 the second's. */
    const igemm_lanes<T, false, true> lanes = igemm_lanes_of<T, false, true>(warp_m, warp_n, lane, T::A_TILE_BYTES);
    float acc[T::MMA_M][T::MMA_N][4] = {};

    /* The pipeline of chapter 05's 05f-05k (igemm_mainloop, igemm_pipeline.cuh): STAGES-1 k tiles in flight, one
     * barrier per k tile. */
    const int k_tiles = tiles_covering(depth, T::BK);
    auto copy_next = [&](uint32_t stage) { copy_tile<T>(tc, stage, prob, ph, depth, walk, dy, w_tile, w); };
    igemm_mainloop<T>(smem, k_tiles, copy_next, lanes, acc);
    __syncthreads(); /* every warp is done with the stages: they now hold the output tile */

    /* Epilogue through shared memory: fp16 pairs into a BM x OUT_PITCH tile (igemm_stage_out), then
     * 16-byte chunks (8 channels of one pixel, igemm_out_chunks) to dx. C/groups % 8 == 0 (padded
     * where it was not), so a chunk is wholly inside or outside. Each row finds its pixel by
     * dgrad_dx_offset(). */
    __half *out = (__half *)dgrad_smem;
    igemm_stage_out<T>(out, acc, warp_m, warp_n, lane);
    __syncthreads();

    auto store = [&](int row, int col, const __half *chunk) {
        const int m = blk.row0 + row, j = blk.col0 + col;
        if (m >= rows || j >= cols)
            return;
        *(uint4 *)(dx + dgrad_dx_offset(&prob, ph, group, m, j)) = *(const uint4 *)chunk;
    };
    igemm_out_chunks<T>(out, tid, store);
}

/* ---- host side: supports(), the tile shape, the launch ----------------------------------------------- */

extern "C" bool supports_06a(const conv_problem *prob, char *why, size_t why_len)
{
    if (prob->stride_h != 1 || prob->stride_w != 1) {
        snprintf(why, why_len, "06a is the stride-1 direct form; stride %dx%d runs on 06b (stride phases)",
                 prob->stride_h, prob->stride_w);
        return false;
    }
    const conv_problem padded = pad_dgrad_problem(prob);
    return supports_taps("06a", dgrad_direct(&padded), why, why_len) &&
           supports_grid("06a", &padded, 1, why, why_len);
}

template <class T>
static void launch_shape(const conv_problem *prob, const void *dy, const void *w, void *dx)
{
    const size_t smem = smem_bytes<T>();
    static bool opted_in = false; /* over 48 KB a block must opt in, once per kernel */
    if (smem > 48 * 1024 && !opted_in) {
        CUDA_CHECK(cudaFuncSetAttribute(dgrad_flipped<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)smem));
        opted_in = true;
    }
    const int tiles = dgrad_max_tiles(prob, false, T::BM, T::BN); /* the one GEMM's tiles */
    if (tiles == 0) /* no pixel: impossible for a valid problem, but launch nothing then */
        return;
    const dim3 grid((unsigned)tiles, (unsigned)prob->groups, 1u);
    dgrad_flipped<T><<<grid, T::THREADS, smem>>>(*prob, (const __half *)dy, (const __half *)w, (__half *)dx);
    CUDA_CHECK_LAUNCH();
}

/* The tile shape a problem runs at (dgrad_pick_shape(), an index into the registry's branch names,
 * steps.c), on the padded problem the kernel runs. */
extern "C" int branch_06a(const conv_problem *prob)
{
    const conv_problem padded = pad_dgrad_problem(prob);
    return dgrad_pick_shape(&padded, false, sm_count());
}

/* The harness's names are fprop's: x is dx (written here), y is dy (read). The kernel runs on the padded
 * problem and operands (pad_dgrad(): the unpadded ones where nothing needs padding). */
extern "C" void launch_06a(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    const pad_dgrad_operands op = pad_dgrad(prob, y, w, x, workspace);
    switch (branch_06a(prob)) {
    case 0:
        launch_shape<shape_wide>(&op.prob, op.dy, op.w, op.dx);
        break;
    case 1:
        launch_shape<shape_narrow>(&op.prob, op.dy, op.w, op.dx);
        break;
    default:
        launch_shape<shape_small>(&op.prob, op.dy, op.w, op.dx);
        break;
    }
    unpad_dgrad_dx(prob, &op, x);
}
