/* Chapter 07: wgrad, the backward pass for the filter, as an implicit GEMM on tensor cores.
 *
 * What it computes: dw = dL/dw from x and dy = dL/dy, fp16 in and out with fp32 accumulation, NHWC
 * activations and a KRSC filter, any padding, stride, dilation and groups.
 *
 * The GEMM view (docs/gemm_view.md; wgrad.h and split_k.h for the index math): per group,
 * dW[k][(r,s,c)] = sum over j = (n,p,q) of dy[j][k] * x[n][h][w][c]. M = K/groups, N = R*S*C/groups,
 * and the reduction runs over every output pixel of the batch: N*P*Q, hundreds of thousands. Both
 * operands are activations gathered on the fly (x through the im2col mapping, as in chapter 05), and
 * both arrive j-major: 16 bytes of dy are 8 output channels at one pixel, 16 bytes of x 8 input
 * channels. The tiles are staged that way (cp.async, swizzled) and ldmatrix .trans transposes each
 * 8x8 piece on its way into the mma.sync fragments.
 *
 *   07a  one block per 64 x 128 output tile walks the whole reduction, 32 pixels per stage, through a
 *        4-stage cp.async pipeline (chapter 05's loop, 05f on). Correct, and slow where the output is small:
 *        conv1's dw is one row of 4 tiles (with channels padded to 8), so 4 blocks run on 132 SMs.
 *   07b  split-K: the reduction is cut into `splits` contiguous ranges (plan_split_k(), from the SM
 *        count), each block computes its tile over one range and writes the fp32 partial tile to the
 *        workspace; a second kernel adds the partials in split order 0, 1, 2, ... and rounds to fp16.
 *        Fixed ranges and a fixed order: bitwise the same result on every run (no atomics).
 *
 * From chapter 05's igemm_pipeline.cuh (its building blocks, shared): the derived tile constants
 * (igemm_tile, which wgrad_shape below extends), the per-lane ldmatrix offsets and the warp tile's
 * ldmatrix .trans + mma.sync loop (igemm_lanes_of, igemm_warp_tile_mma, with both tiles k-major: the
 * lanes addressed as wgrad.h's wgrad_ldsm_*) and the cp.async main loop (igemm_mainloop). What is
 * wgrad's own stays here: gathering dy and x along j (copy_tile), split-K, and the epilogue straight
 * from the fragments to dw or the fp32 partials.
 *
 * C/groups or K/groups not a multiple of 8 (conv1's C = 3): x and/or dy are first copied into the
 * workspace with each group's channels padded with zeros to a multiple of 8; the padded rows and
 * columns of dW are computed and never stored (wgrad_dw_offset()).
 *
 * None of this has run on a GPU yet: it is compiled (sm_80, sm_90, no spills) and its index math, split
 * and fragment addressing are emulated on the CPU by tests/test_ch07_wgrad.c.
 *
 * Run:
 *   ./build/conv run 07b --layer resnet50/conv1
 *   ./build/conv check 07
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

/* ---- the main kernel (07a: SPLIT = false, 07b: SPLIT = true) ---------------------------------------------- */

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

extern __shared__ __align__(128) unsigned char wgrad_smem[];

/* prob is the padded problem the operands are laid out in, real the caller's (for where dw goes). Grid:
 * x = output tiles of one group, y = split, z = group. */
template <class T, bool SPLIT>
static __global__ void __launch_bounds__(T::THREADS, 3)
wgrad_kernel(const conv_problem prob, const conv_problem real, const wgrad_step step, const split_plan plan,
             const __half *__restrict__ x, const __half *__restrict__ dy, __half *__restrict__ dw,
             float *__restrict__ partial)
{
    const uint32_t smem = smem_address(wgrad_smem);
    const int rows = wgrad_rows(&prob), cols = wgrad_cols(&prob);
    const int group = blockIdx.z, split = blockIdx.y;
    const int group_k0 = group * rows; /* the group's first output channel in the padded problem */
    const gemm_block blk = gemm_block_of(blockIdx.x, cols, T::BM, T::BN);
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int warp_m = warp % T::WARPS_M, warp_n = warp / T::WARPS_M;

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
     * (mma_c_col() is even, and cols is a multiple of 8, so a pair is never cut by the edge). */
    const bool unpadded = prob.c == real.c && prob.k == real.k;
    igemm_for_each_pair<T>(acc, warp_m, warp_n, lane, [&](int row, int col, float &v0, float &v1) {
        const int kk = blk.row0 + row, cc = blk.col0 + col;
        if (kk >= rows || cc >= cols)
            return;
        if (SPLIT) {
            *(float2 *)(partial + wgrad_partial_offset(&prob, split, group_k0 + kk, cc)) = make_float2(v0, v1);
        } else if (unpadded) {
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

/* ---- 07b's second kernel: the partials, summed in split order ---------------------------------------------- */

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

static size_t align256(size_t bytes)
{
    return (bytes + 255) / 256 * 256;
}

/* The workspace, in order: padded x (if C/G % 8), padded dy (if K/G % 8), the fp32 partials (07b). */
typedef struct {
    size_t x_bytes, dy_bytes, partial_bytes;
} workspace_layout;

static workspace_layout layout_of(const conv_problem *prob, bool split, split_plan plan)
{
    const conv_problem padded = wgrad_padded_problem(prob);
    workspace_layout l = {0, 0, 0};
    if (padded.c != prob->c)
        l.x_bytes = align256((size_t)prob->n * prob->h * prob->w * padded.c * 2);
    if (padded.k != prob->k)
        l.dy_bytes = align256((size_t)prob->n * prob->p * prob->q * padded.k * 2);
    if (split)
        l.partial_bytes = (size_t)plan.splits * padded.k * wgrad_cols(&padded) * sizeof(float);
    return l;
}

static split_plan plan_of(const conv_problem *prob)
{
    const conv_problem padded = wgrad_padded_problem(prob);
    return wgrad_plan(&padded, sm_count(), shape_07::BM, shape_07::BN);
}

static size_t workspace_07a(const conv_problem *prob)
{
    const split_plan none = {1, 0};
    const workspace_layout l = layout_of(prob, false, none);
    return l.x_bytes + l.dy_bytes;
}

static size_t workspace_07b(const conv_problem *prob)
{
    const workspace_layout l = layout_of(prob, true, plan_of(prob));
    return l.x_bytes + l.dy_bytes + l.partial_bytes;
}

static bool supports_07(const char *id, const conv_problem *prob, char *why, size_t why_len)
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

static bool supports_07a(const conv_problem *prob, char *why, size_t why_len)
{
    return supports_07("07a", prob, why, why_len);
}

static bool supports_07b(const conv_problem *prob, char *why, size_t why_len)
{
    return supports_07("07b", prob, why, why_len);
}

/* The operands the kernels read: x and dy themselves, or padded copies in the workspace. */
static void prepare(const conv_problem *prob, const workspace_layout &l, void *x, void *dy, void *workspace,
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

template <bool SPLIT>
static void launch_main(const conv_problem *prob, const conv_problem &padded, split_plan plan, const __half *x,
                        const __half *dy, __half *dw, float *partial)
{
    typedef shape_07 T;
    const size_t smem = T::SMEM_BYTES;
    static bool opted_in = false; /* over 48 KB a block must opt in, once per kernel */
    if (smem > 48 * 1024 && !opted_in) {
        CUDA_CHECK(cudaFuncSetAttribute(wgrad_kernel<T, SPLIT>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        opted_in = true;
    }
    const dim3 grid((unsigned)(tiles_covering(wgrad_rows(&padded), T::BM) * tiles_covering(wgrad_cols(&padded), T::BN)),
                    (unsigned)plan.splits, (unsigned)padded.groups);
    const wgrad_step step = wgrad_step_make(&padded, T::BK);
    wgrad_kernel<T, SPLIT><<<grid, T::THREADS, smem>>>(padded, *prob, step, plan, x, dy, dw, partial);
    CUDA_CHECK_LAUNCH();
}

/* The harness keeps fprop's names: x = activations, w = dw (the output), y = dy (an input). */
extern "C" void launch_07a(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    const conv_problem padded = wgrad_padded_problem(prob);
    const split_plan whole = {1, wgrad_reduction(&padded)};
    const workspace_layout l = layout_of(prob, false, whole);
    const __half *xs, *dys;
    prepare(prob, l, x, y, workspace, &xs, &dys);
    launch_main<false>(prob, padded, whole, xs, dys, (__half *)w, NULL);
}

extern "C" void launch_07b(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    const conv_problem padded = wgrad_padded_problem(prob);
    const split_plan plan = plan_of(prob);
    const workspace_layout l = layout_of(prob, true, plan);
    const __half *xs, *dys;
    prepare(prob, l, x, y, workspace, &xs, &dys);
    float *partial = (float *)((char *)workspace + l.x_bytes + l.dy_bytes);
    launch_main<true>(prob, padded, plan, xs, dys, (__half *)w, partial);

    const int64_t quads = ((int64_t)prob->k * wgrad_cols(prob) + 3) / 4;
    const int threads = 256;
    const int64_t blocks = (quads + threads - 1) / threads;
    wgrad_reduce<<<(unsigned)(blocks < (1 << 20) ? blocks : (1 << 20)), threads>>>(padded, *prob, plan.splits, partial,
                                                                                 (__half *)w);
    CUDA_CHECK_LAUNCH();
}

extern "C" const conv_kernel ch07_kernels[] = {
    {.id = "07a", .name = "wgrad implicit GEMM, mma.sync + ldmatrix.trans, 64x128, whole reduction per block",
     .source = "chapters/07_wgrad/wgrad.cu",
     .pass = PASS_WGRAD, .dtype = DTYPE_F16, .layout = LAYOUT_NHWC, .device = ON_GPU,
     .supports = supports_07a, .workspace_bytes = workspace_07a, .launch = launch_07a,
     .phase_name = NULL, .launch_phase = NULL, .launch_fused = NULL, .library = NULL,
     .branches = NULL, .branch_of = NULL, .layers = NULL,
     .ptx = "mma\\.sync\\.aligned\\.m16n8k16\\.row\\.col\\.f32\\.f16\\.f16\\.f32\n"
            "ldmatrix\\.sync\\.aligned\\.m8n8\\.x4\\.trans\n"
            "cp\\.async\\.cg\\.shared\\.global\n"
            "cp\\.async\\.wait_group\n",
     .sass = "HMMA\\.16816\\.F32\n"},
    {.id = "07b", .name = "wgrad implicit GEMM, split-K over N*P*Q, deterministic fp32 reduction",
     .source = "chapters/07_wgrad/wgrad.cu",
     .pass = PASS_WGRAD, .dtype = DTYPE_F16, .layout = LAYOUT_NHWC, .device = ON_GPU,
     .supports = supports_07b, .workspace_bytes = workspace_07b, .launch = launch_07b,
     .phase_name = NULL, .launch_phase = NULL, .launch_fused = NULL, .library = NULL,
     .branches = NULL, .branch_of = NULL, .layers = NULL, .ptx = NULL, .sass = NULL},
};
extern "C" const int ch07_kernel_count = sizeof(ch07_kernels) / sizeof(ch07_kernels[0]);
