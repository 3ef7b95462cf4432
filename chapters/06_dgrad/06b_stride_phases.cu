/* 06b: dgrad at any stride, one GEMM per stride phase.
 *
 * What it computes: dx = dL/dx from dy = dL/dy and the filter, fp16 in and out with fp32 accumulation,
 * NHWC dy and dx, KRSC filter, any padding, stride, dilation and groups.
 *
 * What changes from 06a: the GEMMs. Whether tap r reaches input row h at stride s depends on h only
 * through its phase, (h + pad_h) mod s: every row of a phase is reached by the same taps, those with
 * h + pad_h - r*dil_h a multiple of s (stride_phases.h). So 06b runs stride_h * stride_w GEMMs per
 * group, one per phase, the phase on blockIdx.z (dgrad_phase_of() where 06a has dgrad_direct()). Each
 * covers only its phase's pixels, h = first + i*stride, and only the taps that reach them,
 * r = tap0 + t*tap_step, and reads p = out0 + i - t*out_step. The grid is sized for the phase with the
 * most tiles, and blocks past a smaller phase's tiles leave at once. A phase that no tap reaches (a
 * dilation sharing a factor with the stride, a filter shorter than the stride) is a GEMM of depth 0:
 * its blocks skip the main loop and write zeros. supports() checks every phase's taps, and the tile
 * shape is picked counting every phase's blocks.
 *
 * Why: with 06a's form at stride > 1, a kernel would visit every tap of every pixel and mask the ones
 * that do not divide: a 3x3 filter at stride 2 keeps 9/4 of its 9 products on average, so it throws
 * away about 3 in 4. Here no product is computed only to be masked away. Each phase is a stride-1
 * dgrad in its own coordinates, with "padding" out0 and "dilation" out_step (dgrad.h), so the kernel is
 * 06a's with a different geometry per block. At stride 1 there is one phase, and it is 06a's GEMM.
 *
 * Everything else is 06a's: chapter 05's pipeline, warp tile and staged epilogue (igemm_pipeline.cuh),
 * the gather of dy and the filter (copy_tile, dgrad.cuh), the three tile shapes and the padded copies.
 *
 * Run:
 *   ./build/conv check 06b --emulate
 *   ./build/conv run 06b --layer resnet50/res3_3x3_s2
 *   ./build/conv run 06b --n 16 --c 64 --h 28 --w 28 --k 128 --r 4 --s 4 --stride 2 --pad 1   (transposed conv)
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

/* One GEMM per stride phase and group. Grid: x = tiles of the largest phase, y = group, z = phase. */
template <class T>
static __global__ void __launch_bounds__(T::THREADS, T::MIN_BLOCKS)
dgrad_phased(const conv_problem prob, const __half *__restrict__ dy, const __half *__restrict__ w,
             __half *__restrict__ dx)
{
    const dgrad_phase ph = dgrad_phase_of(&prob, blockIdx.z); /* p = out0 + i - t*out_step */
    const int rows = dgrad_rows(&prob, ph), cols = dgrad_cols(&prob), depth = dgrad_depth(&prob, ph);
    const int group = blockIdx.y;
    const gemm_block blk = gemm_block_of(blockIdx.x, cols, T::BM, T::BN);
    if (blk.row0 >= rows) /* the grid fits the largest phase; this one is smaller (the whole block leaves) */
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
     * barrier per k tile. A phase without taps has no k tiles at all and leaves acc zero. */
    const int k_tiles = tiles_covering(depth, T::BK);
    auto copy_next = [&](uint32_t stage) { copy_tile<T>(tc, stage, prob, ph, depth, walk, dy, w_tile, w); };
    igemm_mainloop<T>(smem, k_tiles, copy_next, lanes, acc);
    __syncthreads(); /* every warp is done with the stages: they now hold the output tile */

    /* Epilogue through shared memory: fp16 pairs into a BM x OUT_PITCH tile (igemm_stage_out), then
     * 16-byte chunks (8 channels of one pixel, igemm_out_chunks) to dx. C/groups % 8 == 0 (padded
     * where it was not), so a chunk is wholly inside or outside. The phase's pixels are stride apart in
     * dx, so each row finds its pixel by dgrad_dx_offset(). */
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

extern "C" bool supports_06b(const conv_problem *prob, char *why, size_t why_len)
{
    const conv_problem padded = pad_dgrad_problem(prob);
    const int phases = dgrad_phase_count(&padded);
    for (int z = 0; z < phases; z++)
        if (!supports_taps("06b", dgrad_phase_of(&padded, z), why, why_len))
            return false;
    return supports_grid("06b", &padded, phases, why, why_len);
}

template <class T>
static void launch_shape(const conv_problem *prob, const void *dy, const void *w, void *dx)
{
    const size_t smem = smem_bytes<T>();
    static bool opted_in = false; /* over 48 KB a block must opt in, once per kernel */
    if (smem > 48 * 1024 && !opted_in) {
        CUDA_CHECK(cudaFuncSetAttribute(dgrad_phased<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)smem));
        opted_in = true;
    }
    const int tiles = dgrad_max_tiles(prob, true, T::BM, T::BN); /* the largest phase's tiles */
    if (tiles == 0) /* no phase has a pixel: impossible for a valid problem, but launch nothing then */
        return;
    const dim3 grid((unsigned)tiles, (unsigned)prob->groups, (unsigned)dgrad_phase_count(prob));
    dgrad_phased<T><<<grid, T::THREADS, smem>>>(*prob, (const __half *)dy, (const __half *)w, (__half *)dx);
    CUDA_CHECK_LAUNCH();
}

/* The tile shape a problem runs at (dgrad_pick_shape(), an index into the registry's branch names,
 * steps.c), on the padded problem the kernel runs. */
extern "C" int branch_06b(const conv_problem *prob)
{
    const conv_problem padded = pad_dgrad_problem(prob);
    return dgrad_pick_shape(&padded, true, sm_count());
}

/* The harness's names are fprop's: x is dx (written here), y is dy (read). The kernel runs on the padded
 * problem and operands (pad_dgrad(): the unpadded ones where nothing needs padding). */
extern "C" void launch_06b(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    const pad_dgrad_operands op = pad_dgrad(prob, y, w, x, workspace);
    switch (branch_06b(prob)) {
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
