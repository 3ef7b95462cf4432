/* dgrad.cuh: what chapter 06's two steps (06a_flipped_filter.cu, 06b_stride_phases.cu) share unchanged,
 * so that each step's file holds its kernel and launch and a diff between them shows the idea that
 * separates them. The index math is in dgrad.h (on top of stride_phases.h); the pipeline's building
 * blocks are chapter 05's igemm_pipeline.cuh.
 *
 *   dgrad_shape<>          a block tile shape (one DGRAD_SHAPE_* line of dgrad.h) with the constants
 *                          both steps derive from it: igemm_tile's warp tile, mma tiles per warp and stage
 *                          bytes, plus how dgrad's threads copy a tile in 16-byte chunks.
 *   tile_copier, copy_tile()   one thread's copies of one k tile: A gathered from dy, B from the filter.
 *   smem_bytes()           a block's dynamic shared memory: the stages, reused for the output tile.
 *   supports_taps(), supports_grid()   the limits both steps share.
 *   sm_count()             the device's SM count, which the choice of tile shape needs.
 *
 * Channels: the kernels need C/groups and K/groups multiples of 8 (16-byte chunks of dy along k, of w
 * and dx along c). Other problems run on copies padded with zeros to a multiple of 8 per group
 * (pad_dgrad(), common/kernel/pad_channels.h), made in the workspace before the kernel: dy's channels k
 * and w's rows k when K/groups needs it, w's columns c when C/groups does, and then the kernel writes a
 * padded dx there, whose real channels are copied back into dx after it (unpad_dgrad_dx()). A padded k
 * is a zero in both dy and w, so it adds exact zeros; a padded c is a zero column of w, so its channel
 * of the padded dx is zero and is dropped. The copies are part of the timed work.
 */
#ifndef CH06_DGRAD_CUH
#define CH06_DGRAD_CUH

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

/* The three shapes a launch picks from (dgrad_pick_shape(): 0, 1, 2), one line each in dgrad.h. */
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

/* A block's dynamic shared memory: STAGES x (A tile, B tile), then the output tile. */
extern __shared__ __align__(128) unsigned char dgrad_smem[];

/* ---- host side ------------------------------------------------------------------------------------- */

/* Shared memory of a block: the stages, reused for the output tile after the loop. */
template <class T>
static size_t smem_bytes(void)
{
    const size_t stages = (size_t)T::STAGES * T::STAGE_BYTES, out = (size_t)T::BM * T::OUT_PITCH * 2;
    return stages > out ? stages : out;
}

/* The limits, on the padded problem the kernel runs (pad_dgrad_problem(): the same as the caller's
 * where C/groups and K/groups are multiples of 8 already). One GEMM's taps, `ph`: */
static bool supports_taps(const char *id, const dgrad_phase &ph, char *why, size_t why_len)
{
    if (ph.h.taps > 32 || ph.w.taps > 32) {
        snprintf(why, why_len, "%s keeps one bit per filter tap in 32-bit row masks: at most 32 taps per phase "
                 "along each axis (this one has %dx%d)", id, ph.h.taps, ph.w.taps);
        return false;
    }
    return true;
}

/* The grid (groups on gridDim.y, `phases` GEMMs on gridDim.z) and the 32-bit offsets. */
static bool supports_grid(const char *id, const conv_problem *prob, int phases, char *why, size_t why_len)
{
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

/* The SM count of the device the harness uses (one), asked once. */
static int sm_count(void)
{
    static int sms = 0;
    if (sms == 0) {
        int device = 0;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    }
    return sms;
}

#endif
