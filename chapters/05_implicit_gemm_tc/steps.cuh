/* steps.cuh: what the steps of chapter 05 share unchanged, so that each step's file holds only its
 * kernel and a diff between two steps shows only the idea that separates them. A step's file repeats
 * the kernel code it keeps from the step before, on purpose: each reads top to bottom on its own.
 *
 *   tile_shape<>         a block tile shape (one IGEMM_SHAPE_05x line of implicit_gemm.h) with the
 *                        constants every step derives from it: igemm_tile's warp tile, mma tiles per
 *                        warp and stage bytes (igemm_pipeline.cuh), plus how fprop's threads copy
 *                        a tile in 16-byte chunks.
 *   store_fragments()    the epilogue of 05b-05g: each lane writes its fp16 pairs straight from the
 *                        accumulator fragments into y.
 *   grid_of(), grid_fits(), supports_16byte()   the launch grid and the limits the steps share.
 */
#ifndef STEPS_CUH
#define STEPS_CUH

#include <stdint.h>
#include <stdio.h>

#include <cuda_fp16.h>

#include "conv.h"
#include "igemm_pipeline.cuh"
#include "implicit_gemm.h"

/* One template parameter carries a whole shape (tile_shape<IGEMM_SHAPE_05D>). Both A (BM pixels) and B
 * (BN output channels) are staged as rows of BK halves, kappa contiguous: CPR 16-byte chunks per row.
 * The steps that copy 16-byte chunks give each thread A_LOADS rows of A and B_LOADS rows of B, at the
 * same chunk column (igemm_load_row(), igemm_load_chunk()). */
template <int BM_, int BN_, int BK_, int WARPS_M_, int WARPS_N_, int STAGES_>
struct tile_shape : igemm_tile<BM_, BN_, BK_, WARPS_M_, WARPS_N_, STAGES_> {
    enum {
        CPR = BK_ / 8,                                    /* 16-byte chunks per staged row */
        A_LOADS = BM_ * CPR / (32 * WARPS_M_ * WARPS_N_), /* 16-byte copies per thread per k tile */
        B_LOADS = BN_ * CPR / (32 * WARPS_M_ * WARPS_N_),
    };
    static_assert((32 * WARPS_M_ * WARPS_N_) % CPR == 0 && (BM_ * CPR) % (32 * WARPS_M_ * WARPS_N_) == 0 &&
                      (BN_ * CPR) % (32 * WARPS_M_ * WARPS_N_) == 0,
                  "the threads copy whole rows of chunks, the same number each");
};

/* The accumulators to y straight from the fragments: each lane holds pairs of neighbouring output
 * channels (mma_c_col(), tensor_core.h), one 32-bit store each when the pairs are 4-byte aligned in y
 * (K and K/groups even), element by element otherwise. Rows and columns past the GEMM's edges are
 * skipped. */
template <class T>
static __device__ __forceinline__ void store_fragments(float (&acc)[T::MMA_M][T::MMA_N][4], const conv_problem &prob,
                                                       int group, const gemm_block blk, int warp_m, int warp_n,
                                                       int lane, __half *y)
{
    const int rows = igemm_rows(&prob), cols = igemm_cols(&prob);
    const bool pairs = prob.k % 2 == 0 && cols % 2 == 0;
    igemm_for_each_pair<T>(acc, warp_m, warp_n, lane, [&](int row, int col, float &v0, float &v1) {
        const int m = blk.row0 + row, jj = blk.col0 + col;
        if (m >= rows || jj >= cols)
            return;
        __half *out = y + igemm_y_offset(&prob, group, m, jj);
        if (pairs) {
            *(__half2 *)out = __floats2half2_rn(v0, v1);
        } else {
            out[0] = __float2half_rn(v0);
            if (jj + 1 < cols)
                out[1] = __float2half_rn(v1);
        }
    });
}

/* ---- host side ---------------------------------------------------------------------------------------- */

/* The grid: one block per bm x bn tile of a group's GEMM on gridDim.x, the group on gridDim.y. */
static inline dim3 grid_of(const conv_problem *prob, int bm, int bn)
{
    return dim3((unsigned)(tiles_covering(igemm_rows(prob), bm) * tiles_covering(igemm_cols(prob), bn)),
                (unsigned)prob->groups);
}

/* Whether that grid fits: at most 65535 groups on gridDim.y, 2^31-1 tiles on gridDim.x. */
static inline bool grid_fits(const char *id, const conv_problem *prob, int bm, int bn, char *why, size_t why_len)
{
    if (prob->groups > 65535) {
        snprintf(why, why_len, "%s puts the group on gridDim.y, which holds at most 65535 (groups = %d)", id,
                 prob->groups);
        return false;
    }
    const int64_t tiles = (int64_t)tiles_covering(igemm_rows(prob), bm) * tiles_covering(igemm_cols(prob), bn);
    if (tiles > INT32_MAX) {
        snprintf(why, why_len, "%s needs %lld blocks of %dx%d, over gridDim.x's 2^31-1", id, (long long)tiles, bm,
                 bn);
        return false;
    }
    return true;
}

/* The steps with 16-byte loads (05d-05k) run the channel-padded problem: the grid, its 32-bit offsets,
 * and for the steps that keep one bit per filter tap in 32-bit row masks (masks: 05g-05k) filters of
 * at most 32 x 32 taps. */
static inline bool supports_16byte(const char *id, bool masks, int bm, int bn, const conv_problem *prob, char *why,
                                   size_t why_len)
{
    if (masks && (prob->r > 32 || prob->s > 32)) {
        snprintf(why, why_len, "%s keeps one bit per filter tap in 32-bit row masks: needs R <= 32 and S <= 32 "
                 "(this filter is %dx%d)", id, prob->r, prob->s);
        return false;
    }
    if (!grid_fits(id, prob, bm, bn, why, why_len))
        return false;
    return igemm_padded_fits_32bit(id, prob, why, why_len);
}

#endif
