/* Chapter 06: dgrad, the backward pass for data, as implicit GEMM on tensor cores.
 *
 * What it computes: dx = dL/dx from dy = dL/dy and the filter, fp16 in and out with fp32 accumulation,
 * NHWC dy and dx, KRSC filter, any padding, dilation and groups; 06a stride 1, 06b any stride.
 *
 * The GEMM view (docs/gemm_view.md; dgrad.h for the index math and its derivation): per stride phase
 * and group, D[m][j] = sum_kappa A[m][kappa] * B[kappa][j] with m an input pixel of the phase, j an
 * input channel (C/groups columns) and kappa = (t, u, k) a tap of the phase and an output channel
 * (taps_h * taps_w * K/groups, k fastest: 8 consecutive kappa are 16 contiguous bytes of dy).
 *   A is gathered from dy: pixel (n, h, w) through tap (r, s) reads dy[n][p][q] with
 *     p = (h + pad_h - r*dil_h) / stride_h, zero where p (or q) falls outside the output;
 *   B is the filter read as [K*R*S][C/groups]: a KRSC row (k, r, s) is C/groups contiguous halves, so
 *     B's rows (not its columns, as in chapter 05) are contiguous. It is staged k-major and handed to
 *     mma.sync through ldmatrix .trans, which transposes each 8x8 matrix on the way to the registers.
 *
 *   06a  stride 1: one GEMM over every pixel and every tap, p = h + pad_h - r*dil_h (the flipped filter).
 *   06b  any stride: stride_h * stride_w GEMMs, one per stride phase (blockIdx.z), each over exactly the
 *        taps that reach its pixels (stride_phases.h), so no product is computed only to be masked away.
 *        A phase that no tap reaches (possible with dilation) runs a GEMM of depth 0 and writes zeros.
 * Both are one kernel: 128x128x32 block tiles of 4 warps of 64x64 (256x64 when C/groups <= 64, 64x64
 * of 4 warps of 32x32 for problems too small to fill the GPU: dgrad_pick_shape()), a 4-stage cp.async
 * pipeline with one barrier per k tile, zero-fill (src-size 0) for taps outside dy and for tile edges, swizzled shared
 * memory (tensor_core.h) and a staged epilogue writing 16-byte chunks of dx. Compared with chapter 05's
 * 05h only the index math (dgrad.h) and the B side (ldmatrix .trans) differ.
 *
 * From chapter 05's igemm_pipeline.cuh (its building blocks, shared): the derived tile constants
 * (igemm_tile, which dgrad_shape below extends), the per-lane ldmatrix offsets and the warp tile's
 * ldmatrix + mma.sync loop (igemm_lanes_of, igemm_warp_tile_mma, with A k-contiguous and B k-major),
 * the cp.async main loop (igemm_mainloop) and the staged epilogue's two halves (igemm_stage_out,
 * igemm_out_chunks). What is dgrad's own stays here: gathering A from dy and B from the filter
 * (copy_tile) and where each chunk of dx goes.
 *
 * Channels: the kernel needs C/groups and K/groups multiples of 8 (16-byte chunks of dy along k, of w and
 * dx along c). Other problems (odd K, a C of 12 in 2 groups) run on copies padded with zeros to a
 * multiple of 8 per group (pad_dgrad(), common/kernel/pad_channels.h), made in the workspace before the kernel:
 * dy's channels k and w's rows k when K/groups needs it, w's columns c when C/groups does, and then the
 * kernel writes a padded dx there, whose real channels are copied back into dx after it. A padded k is
 * a zero in both dy and w, so it adds exact zeros; a padded c is a zero column of w, so its channel of
 * the padded dx is zero and is dropped. The copies are part of the timed work.
 *
 * None of this has run on a GPU yet: it is compiled (sm_80, sm_90, no spills) and its index math is
 * checked on the CPU by tests/test_ch06_dgrad.c.
 *
 * Run:
 *   ./build/conv run 06a --layer resnet50/res2_3x3
 *   ./build/conv run 06b --n 16 --c 64 --h 28 --w 28 --k 128 --r 4 --s 4 --stride 2 --pad 1
 *   ./build/conv check 06
 */
#include <stdint.h>
#include <stdio.h>

#include <cuda_fp16.h>

#include "check.h"
#include "conv.h"
#include "dgrad.h"
#include "../05_implicit_gemm_tc/igemm_pipeline.cuh" /* chapter 05's pipeline, which this chapter reuses */
#include "pad_channels.h"
#include "tensor_core.h"

/* ---- the tile shape -------------------------------------------------------------------------------- */

/* The warp tile, mma tiles, stage bytes and launch bounds come from igemm_tile (igemm_pipeline.cuh);
 * added here is how dgrad copies a tile: A is BM rows (pixels of one phase) of BK halves (k
 * contiguous), B is BK rows (kappa) of BN halves (input channels contiguous), each thread copying
 * chunks of one B row. */
template <int BM_, int BN_, int BK_, int WARPS_M_, int WARPS_N_, int STAGES_>
struct dgrad_shape : igemm_tile<BM_, BN_, BK_, WARPS_M_, WARPS_N_, STAGES_> {
    enum {
        A_CPR = BK_ / 8,                     /* A tile: BM rows (pixels) of BK halves (k contiguous) */
        A_LOADS = BM_ * A_CPR / (32 * WARPS_M_ * WARPS_N_), /* 16-byte copies per thread per k tile */
        B_CPR = BN_ / 8,                     /* B tile: BK rows (kappa) of BN halves (c contiguous) */
        B_THREADS_PER_ROW = 32 * WARPS_M_ * WARPS_N_ / BK_, /* each thread copies chunks of one B row */
        B_LOADS = B_CPR / B_THREADS_PER_ROW,
    };
    static_assert((32 * WARPS_M_ * WARPS_N_) % A_CPR == 0 && (BM_ * A_CPR) % (32 * WARPS_M_ * WARPS_N_) == 0,
                  "A: whole rows of chunks, equal shares");
    static_assert((32 * WARPS_M_ * WARPS_N_) % BK_ == 0 && B_CPR % B_THREADS_PER_ROW == 0,
                  "B: one row per thread, equal shares");
    static_assert(STAGES_ >= 3, "the pipeline keeps at least two tiles in flight");
};

typedef dgrad_shape<DGRAD_SHAPE_WIDE> shape_wide;
typedef dgrad_shape<DGRAD_SHAPE_NARROW> shape_narrow;
typedef dgrad_shape<DGRAD_SHAPE_SMALL> shape_small;

/* ---- copying one k tile ---------------------------------------------------------------------------- */

/* What a thread needs to issue its copies of one k tile, set up once per block. A: the thread's rows
 * (pixels), each with its origin in dy and two edge masks, all at one chunk column (8 channels k of
 * one tap). B: one row (kappa) of the filter tile, several chunks (8 input channels each) along it. */
template <class T>
struct tile_copier {
    int a_offset[T::A_LOADS];       /* dgrad_row_origin().offset */
    uint32_t a_h_mask[T::A_LOADS];  /* dgrad_tap_mask() along h and w: 0 for rows past the last pixel */
    uint32_t a_w_mask[T::A_LOADS];
    uint32_t a_dst[T::A_LOADS];     /* byte offsets in a stage's A tile, swizzled */
    bool b_ok[T::B_LOADS];          /* the chunk's channels are inside C/groups */
    uint32_t b_dst[T::B_LOADS];     /* byte offsets in a stage, past its A tile, swizzled */
    dgrad_iter a_at, b_at;          /* where along kappa this thread's next A chunk and B row are */
};

/* Issues this thread's cp.async for the next k tile into the stage at `stage`, then walks both
 * positions one k tile on. Taps outside dy, rows past the last pixel, channels past C/groups and kappa
 * past the reduction are copied with src-size 0: zeros. w_tile is w at (group, column j0). */
template <class T>
static __device__ __forceinline__ void copy_tile(tile_copier<T> &tc, uint32_t stage, const conv_problem &prob,
                                                 const dgrad_phase &ph, int depth, const dgrad_walk &walk,
                                                 const __half *dy, const __half *w_tile, const __half *w)
{
    const bool a_k_ok = tc.a_at.kappa < depth;
    const int a_tap = dgrad_a_tap_offset(&prob, ph, tc.a_at.t, tc.a_at.u, tc.a_at.k);
#pragma unroll
    for (int i = 0; i < T::A_LOADS; i++) {
        const bool ok = a_k_ok && ((tc.a_h_mask[i] >> tc.a_at.t) & (tc.a_w_mask[i] >> tc.a_at.u) & 1u);
        cp_async_16(stage + tc.a_dst[i], ok ? dy + (tc.a_offset[i] + a_tap) : dy, ok);
    }
    const bool b_k_ok = tc.b_at.kappa < depth;
    const int b_row = b_k_ok ? dgrad_b_row_offset(&prob, ph, tc.b_at.t, tc.b_at.u, tc.b_at.k) : 0;
    const int lane_chunk = threadIdx.x % T::B_THREADS_PER_ROW;
#pragma unroll
    for (int i = 0; i < T::B_LOADS; i++) {
        const bool ok = b_k_ok && tc.b_ok[i];
        const int chunk = lane_chunk + i * T::B_THREADS_PER_ROW;
        cp_async_16(stage + tc.b_dst[i], ok ? w_tile + (b_row + 8 * chunk) : w, ok);
    }
    tc.a_at = dgrad_iter_next(tc.a_at, walk);
    tc.b_at = dgrad_iter_next(tc.b_at, walk);
}

/* ---- the kernel ------------------------------------------------------------------------------------ */

extern __shared__ __align__(128) unsigned char dgrad_smem[];

/* PHASED false: 06a, the whole problem as one GEMM (stride 1). PHASED true: 06b, phase blockIdx.z. */
template <class T, bool PHASED>
static __global__ void __launch_bounds__(T::THREADS, T::MIN_BLOCKS)
dgrad_pipelined(const conv_problem prob, const __half *__restrict__ dy, const __half *__restrict__ w,
                __half *__restrict__ dx)
{
    const dgrad_phase ph = PHASED ? dgrad_phase_of(&prob, blockIdx.z) : dgrad_direct(&prob);
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

/* ---- host side: supports(), launches --------------------------------------------------------------- */

/* The limits are the padded problem's, the one the kernel runs (pad_dgrad_problem(): the same as prob
 * where C/groups and K/groups are multiples of 8 already). */
static bool supports_common(const char *id, bool phased, const conv_problem *unpadded, char *why, size_t why_len)
{
    const conv_problem padded = pad_dgrad_problem(unpadded);
    const conv_problem *prob = &padded;
    const int phases = phased ? dgrad_phase_count(prob) : 1;
    for (int z = 0; z < phases; z++) {
        const dgrad_phase ph = phased ? dgrad_phase_of(prob, z) : dgrad_direct(prob);
        if (ph.h.taps > 32 || ph.w.taps > 32) {
            snprintf(why, why_len, "%s keeps one bit per filter tap in 32-bit row masks: at most 32 taps per phase "
                     "along each axis (this one has %dx%d)", id, ph.h.taps, ph.w.taps);
            return false;
        }
    }
    if (prob->groups > 65535 || phases > 65535) {
        snprintf(why, why_len, "%s puts the group on gridDim.y and the phase on gridDim.z, at most 65535 each "
                 "(groups = %d, phases = %d)", id, prob->groups, phases);
        return false;
    }
    if (!dgrad_offsets_fit(prob)) {
        snprintf(why, why_len, "%s forms 32-bit offsets into dy, w and dx (channels padded to multiples of 8); "
                 "this problem's tensors are too large", id);
        return false;
    }
    return true;
}

static bool supports_06a(const conv_problem *prob, char *why, size_t why_len)
{
    if (prob->stride_h != 1 || prob->stride_w != 1) {
        snprintf(why, why_len, "06a is the stride-1 direct form; stride %dx%d runs on 06b (stride phases)",
                 prob->stride_h, prob->stride_w);
        return false;
    }
    return supports_common("06a", false, prob, why, why_len);
}

static bool supports_06b(const conv_problem *prob, char *why, size_t why_len)
{
    return supports_common("06b", true, prob, why, why_len);
}

/* Shared memory of a block: the stages, reused for the output tile after the loop. */
template <class T>
static size_t smem_bytes(void)
{
    const size_t stages = (size_t)T::STAGES * T::STAGE_BYTES, out = (size_t)T::BM * T::OUT_PITCH * 2;
    return stages > out ? stages : out;
}

template <class T, bool PHASED>
static void launch_shape(const conv_problem *prob, const void *dy, const void *w, void *dx)
{
    const size_t smem = smem_bytes<T>();
    static bool opted_in = false; /* over 48 KB a block must opt in, once per kernel */
    if (smem > 48 * 1024 && !opted_in) {
        CUDA_CHECK(cudaFuncSetAttribute(dgrad_pipelined<T, PHASED>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)smem));
        opted_in = true;
    }
    const int tiles = dgrad_max_tiles(prob, PHASED, T::BM, T::BN);
    if (tiles == 0) /* no phase has a pixel: impossible for a valid problem, but launch nothing then */
        return;
    const dim3 grid((unsigned)tiles, (unsigned)prob->groups, PHASED ? (unsigned)dgrad_phase_count(prob) : 1u);
    dgrad_pipelined<T, PHASED><<<grid, T::THREADS, smem>>>(*prob, (const __half *)dy, (const __half *)w, (__half *)dx);
    CUDA_CHECK_LAUNCH();
}

/* The tile shape a problem runs at (dgrad_pick_shape(), an index into the registry's branch names), on
 * the padded problem the kernel runs. */
static const char *const dgrad_shape_names[] = {"128x128 tile (wide)", "256x64 tile (C/groups <= 64)",
                                                "64x64 tile (too few blocks for the GPU)", NULL};

template <bool PHASED>
static int dgrad_shape_of(const conv_problem *prob)
{
    static int sms = 0; /* the harness uses one device */
    if (sms == 0) {
        int device = 0;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    }
    const conv_problem padded = pad_dgrad_problem(prob);
    return dgrad_pick_shape(&padded, PHASED, sms);
}

/* The harness's names are fprop's: x is dx (written here), y is dy (read). The kernel runs on the padded
 * problem and operands (pad_dgrad(): the unpadded ones where nothing needs padding). */
template <bool PHASED>
static void launch_dgrad(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    const pad_dgrad_operands op = pad_dgrad(prob, y, w, x, workspace);
    switch (dgrad_shape_of<PHASED>(prob)) {
    case 0:
        launch_shape<shape_wide, PHASED>(&op.prob, op.dy, op.w, op.dx);
        break;
    case 1:
        launch_shape<shape_narrow, PHASED>(&op.prob, op.dy, op.w, op.dx);
        break;
    default:
        launch_shape<shape_small, PHASED>(&op.prob, op.dy, op.w, op.dx);
        break;
    }
    unpad_dgrad_dx(prob, &op, x);
}

extern "C" void launch_06a(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    launch_dgrad<false>(prob, x, w, y, workspace);
}

extern "C" void launch_06b(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    launch_dgrad<true>(prob, x, w, y, workspace);
}

/* The counts are shown on the dense reference layer and on the strided layer 06b is for. */
#define DGRAD_LAYERS CONV_REFERENCE_LAYER ",resnet50/res3_3x3_s2"

extern "C" const conv_kernel ch06_kernels[] = {
    {.id = "06a", .name = "dgrad implicit GEMM, stride 1, flipped filter, cp.async",
     .source = "chapters/06_dgrad/dgrad.cu",
     .pass = PASS_DGRAD, .dtype = DTYPE_F16, .layout = LAYOUT_NHWC, .device = ON_GPU,
     .supports = supports_06a, .workspace_bytes = pad_dgrad_workspace_bytes, .launch = launch_06a,
     .phase_name = NULL, .launch_phase = NULL, .launch_fused = NULL, .library = NULL,
     .branches = dgrad_shape_names, .branch_of = dgrad_shape_of<false>, .layers = DGRAD_LAYERS,
     .ptx = "mma\\.sync\\.aligned\\.m16n8k16\\.row\\.col\\.f32\\.f16\\.f16\\.f32\n"
            "ldmatrix\\.sync\\.aligned\\.m8n8\\.x4\\.trans\n"
            "cp\\.async\\.cg\\.shared\\.global\n",
     .sass = "HMMA\\.16816\\.F32\n"
             "LDSM\\.16\\.MT88\\.4\n"
             "LDGSTS\\.E\\.BYPASS\\.128\n"},
    {.id = "06b", .name = "dgrad implicit GEMM, one GEMM per stride phase, cp.async",
     .source = "chapters/06_dgrad/dgrad.cu",
     .pass = PASS_DGRAD, .dtype = DTYPE_F16, .layout = LAYOUT_NHWC, .device = ON_GPU,
     .supports = supports_06b, .workspace_bytes = pad_dgrad_workspace_bytes, .launch = launch_06b,
     .phase_name = NULL, .launch_phase = NULL, .launch_fused = NULL, .library = NULL,
     .branches = dgrad_shape_names, .branch_of = dgrad_shape_of<true>, .layers = DGRAD_LAYERS,
     .ptx = NULL, .sass = NULL},
};
extern "C" const int ch06_kernel_count = sizeof(ch06_kernels) / sizeof(ch06_kernels[0]);
