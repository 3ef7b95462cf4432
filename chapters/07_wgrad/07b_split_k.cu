/* 07b: split-K, deterministic: the reduction of each output tile cut into ranges, one block per range.
 *
 * What it computes: dw = dL/dw from x and dy = dL/dy, fp16 in and out with fp32 accumulation, NHWC
 * activations and a KRSC filter, any padding, stride, dilation and groups: 07a's result.
 *
 * What changes from 07a: who walks the reduction. The reduction N*P*Q is cut into `splits` contiguous
 * ranges (plan_split_k() in split_k.h, through plan_of(), from the SM count), and the grid gets a block
 * per (output tile, range): gridDim.y = splits. Each block computes its tile over its own range with
 * 07a's loop and writes the fp32 partial tile to the workspace instead of dw. A second kernel,
 * wgrad_reduce, adds the partials in split order 0, 1, 2, ... in fp32 and rounds to fp16 into dw.
 *
 * Why: wgrad's output is small and its reduction long. One block per output tile (07a) runs conv1 as 4
 * blocks on 132 SMs, each walking 401,408 pixels; split 67 ways it is 268 blocks. Fixed ranges and a
 * fixed order of the sum make the result bitwise the same on every run, with no atomics (an atomicAdd
 * into dw would change its rounding with the order in which blocks finish). The price is the partials:
 * written once and read once, splits x K x R*S*C fp32 values.
 *
 * Run:
 *   ./build/conv check 07b --emulate
 *   ./build/conv run 07b --layer resnet50/conv1
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

/* ---- the main kernel: one range of the reduction per block ------------------------------------------------ */

/* prob is the padded problem the operands are laid out in (the partials too). Grid: x = output tiles of
 * one group, y = split, z = group. */
template <class T>
static __global__ void __launch_bounds__(T::THREADS, 3)
wgrad_split(const conv_problem prob, const wgrad_step step, const split_plan plan, const __half *__restrict__ x,
            const __half *__restrict__ dy, float *__restrict__ partial)
{
    const uint32_t smem = smem_address(wgrad_smem);
    const int rows = wgrad_rows(&prob), cols = wgrad_cols(&prob);
    const int group = blockIdx.z, split = blockIdx.y;
    const int group_k0 = group * rows; /* the group's first output channel in the padded problem */
    const gemm_block blk = gemm_block_of(blockIdx.x, cols, T::BM, T::BN);
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int warp_m = warp % T::WARPS_M, warp_n = warp / T::WARPS_M;

    /* The block's range of the reduction: split blockIdx.y of the plan (split_range(), split_k.h). */
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
     * (mma_c_col() is even, and cols is a multiple of 8, so a pair is never cut by the edge), stored as
     * fp32 into this split's partial tile, in the padded problem's layout: no rounding yet, and the
     * padded rows and columns are dropped by the reduction. */
    igemm_for_each_pair<T>(acc, warp_m, warp_n, lane, [&](int row, int col, float &v0, float &v1) {
        const int kk = blk.row0 + row, cc = blk.col0 + col;
        if (kk >= rows || cc >= cols)
            return;
        *(float2 *)(partial + wgrad_partial_offset(&prob, split, group_k0 + kk, cc)) = make_float2(v0, v1);
    });
}

/* ---- the second kernel: the partials, summed in split order --------------------------------------------- */

/* One thread per 4 consecutive elements of dw. Unpadded, the partials have dw's own layout and are read
 * as float4; padded, each element finds its padded place (wgrad_padded_of()). The sum runs over
 * splits 0, 1, 2, ... in fp32, the same order on every run. */
static __global__ void wgrad_reduce(const conv_problem prob, const conv_problem real, int splits,
                                    const float *__restrict__ partial, __half *__restrict__ dw)
{
    const int cols = wgrad_cols(&real);
    const int64_t elems = (int64_t)real.k * cols;
    const int64_t split_stride = (int64_t)prob.k * wgrad_cols(&prob);
    const bool unpadded = prob.c == real.c && prob.k == real.k;
    for (int64_t e0 = 4 * (blockIdx.x * (int64_t)blockDim.x + threadIdx.x); e0 < elems;
         e0 += 4 * (int64_t)gridDim.x * blockDim.x) {
        if (unpadded) { /* elems is a multiple of 8: whole float4s */
            float4 total = *(const float4 *)(partial + e0);
            for (int s = 1; s < splits; s++) {
                const float4 p = *(const float4 *)(partial + s * split_stride + e0);
                total.x += p.x;
                total.y += p.y;
                total.z += p.z;
                total.w += p.w;
            }
            __half2 out[2] = {__floats2half2_rn(total.x, total.y), __floats2half2_rn(total.z, total.w)};
            *(uint2 *)(dw + e0) = *(const uint2 *)out;
        } else {
            for (int64_t e = e0; e < e0 + 4 && e < elems; e++) {
                const wgrad_padded_at at = wgrad_padded_of(&real, &prob, (int)(e / cols), (int)(e % cols));
                const float *p = partial + wgrad_partial_offset(&prob, 0, at.k, at.col);
                float total = p[0];
                for (int s = 1; s < splits; s++)
                    total += p[s * split_stride];
                dw[e] = __float2half_rn(total);
            }
        }
    }
}

/* ---- host side ---------------------------------------------------------------------------------------------- */

static int sm_count(void)
{
    int device = 0, sms = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return sms;
}

/* The split of a problem: enough splits to fill every SM WGRAD_WAVES times, none shorter than
 * WGRAD_MIN_CHUNK pixels (wgrad.h). workspace_07b() and launch_07b() both ask here, so the workspace
 * always matches the launch. */
static split_plan plan_of(const conv_problem *prob)
{
    const conv_problem padded = wgrad_padded_problem(prob);
    return wgrad_plan(&padded, sm_count(), shape_07::BM, shape_07::BN);
}

/* The fp32 partials: one whole padded dW (K rows of R*S*C/groups) per split, after the padded copies. */
static size_t partial_bytes(const conv_problem *prob, split_plan plan)
{
    const conv_problem padded = wgrad_padded_problem(prob);
    return (size_t)plan.splits * padded.k * wgrad_cols(&padded) * sizeof(float);
}

/* The workspace: the padded copies of x and dy, where the channels need them (wgrad.cuh), then the
 * partials. */
extern "C" size_t workspace_07b(const conv_problem *prob)
{
    const padded_copies l = padded_copies_of(prob);
    return l.x_bytes + l.dy_bytes + partial_bytes(prob, plan_of(prob));
}

extern "C" bool supports_07b(const conv_problem *prob, char *why, size_t why_len)
{
    return supports_wgrad("07b", prob, why, why_len);
}

/* The harness keeps fprop's names: x = activations, w = dw (the output), y = dy (an input). */
extern "C" void launch_07b(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    typedef shape_07 T;
    const conv_problem padded = wgrad_padded_problem(prob);
    const split_plan plan = plan_of(prob);
    const padded_copies l = padded_copies_of(prob);
    const __half *xs, *dys;
    prepare(prob, l, x, y, workspace, &xs, &dys);
    float *partial = (float *)((char *)workspace + l.x_bytes + l.dy_bytes);

    const size_t smem = T::SMEM_BYTES;
    static bool opted_in = false; /* over 48 KB a block must opt in, once per kernel */
    if (smem > 48 * 1024 && !opted_in) {
        CUDA_CHECK(cudaFuncSetAttribute(wgrad_split<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        opted_in = true;
    }
    const dim3 grid((unsigned)(tiles_covering(wgrad_rows(&padded), T::BM) * tiles_covering(wgrad_cols(&padded), T::BN)),
                    (unsigned)plan.splits, (unsigned)padded.groups);
    const wgrad_step step = wgrad_step_make(&padded, T::BK);
    wgrad_split<T><<<grid, T::THREADS, smem>>>(padded, step, plan, xs, dys, partial);
    CUDA_CHECK_LAUNCH();

    const int64_t quads = ((int64_t)prob->k * wgrad_cols(prob) + 3) / 4;
    const int threads = 256;
    const int64_t blocks = (quads + threads - 1) / threads;
    wgrad_reduce<<<(unsigned)(blocks < (1 << 20) ? blocks : (1 << 20)), threads>>>(padded, *prob, plan.splits, partial,
                                                                                 (__half *)w);
    CUDA_CHECK_LAUNCH();
}
