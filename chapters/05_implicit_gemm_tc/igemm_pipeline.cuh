/* igemm_pipeline.cuh: the tensor-core implicit-GEMM machinery that chapters 05 (fprop), 06 (dgrad) and
 * 07 (wgrad) share, written once (chapter 05 introduces it; 06 and 07 reuse it). Device code, CUDA C++.
 *
 * What a chapter keeps for itself is what makes it that pass: which elements of which tensors its A and
 * B tiles gather (its index math header and its copy_tile()), and where its results go (the last step
 * of its epilogue). What lives here is the same in all three:
 *   igemm_tile<>          the constants derived from a block tile shape (warp tile, mma tiles per warp,
 *                         bytes per stage); a chapter's shape derives from it and adds its copy layout.
 *   igemm_lanes<>         per lane, the swizzled byte offsets of the rows it hands to ldmatrix, computed
 *   igemm_lanes_of()      once per thread (05c writes the k-contiguous case out in its own file).
 *   igemm_warp_tile_mma() acc += this warp's slice of one staged k tile: ldmatrix (.trans where a tile
 *                         is stored k-major) + mma.sync.
 *   igemm_mainloop()      the multi-stage cp.async pipeline: prologue, then per k tile wait, barrier,
 *                         copy of the tile STAGES-1 ahead, commit, compute. One barrier per k tile.
 *   igemm_stage_out()     the epilogue's first half: the accumulators, as fp16 pairs, into a BM x
 *   igemm_out_chunks()    OUT_PITCH tile in shared memory; the second: each thread's 16-byte chunks of it.
 *   igemm_store_chunks()  fprop's use of the second half: the chunks to y, with its edges (05, 08).
 *
 * Two tile layouts, per operand (A is BM x BK, B is BK x BN; a "chunk" is 16 bytes, tensor_core.h):
 *   k-contiguous  rows are m (A) or n (B), BK halves each: a 16-deep step is 2 chunks along every row
 *                 (the swizzle permutes them: one lane offset per step), a warp's 16-row fragments are
 *                 16 rows apart (the swizzle moves them by exactly 16 rows: one constant). Plain
 *                 ldmatrix, lanes addressed by ldsm_a_* (A) and ldsm_b_* (B). Chapter 05's A and B,
 *                 chapter 06's A.
 *   k-major       rows are k, BM (A) or BN (B) halves each: a 16-deep step is 16 rows on (a constant),
 *                 a warp's fragments are 2 chunks apart along a row (one lane offset per fragment).
 *                 ldmatrix .trans transposes each 8x8 matrix on its way into the registers; lanes are
 *                 addressed the other way round, A by ldsm_b_* and B by ldsm_a_* (wgrad.h's
 *                 wgrad_ldsm_*, emulated element by element in tests/test_ch07_wgrad.c). Chapter 06's B
 *                 (the filter, channel-contiguous), chapter 07's A and B (both j-major activations).
 * Both are swizzled with swizzle_chunk() (tensor_core.h), which moves an address 16 rows on by exactly
 * 16 rows: that is what lets one offset per lane serve every fragment or step along the other axis.
 */
#ifndef IGEMM_PIPELINE_CUH
#define IGEMM_PIPELINE_CUH

#include <stdint.h>

#include <cuda_fp16.h>

#include "tensor_core.h"

/* ---- the block tile ------------------------------------------------------------------------------------ */

/* A block computes a BM x BN tile of the GEMM, BK deep per pipeline stage, with WARPS_M x WARPS_N warps of
 * WM x WN each. A chapter's shape derives from this and adds how its threads copy a tile (chunks per
 * row, copies per thread), which depends on its layouts. */
template <int BM_, int BN_, int BK_, int WARPS_M_, int WARPS_N_, int STAGES_>
struct igemm_tile {
    enum {
        BM = BM_,                            /* block tile: rows of the GEMM */
        BN = BN_,                            /* block tile: columns */
        BK = BK_,                            /* reduction per stage */
        WARPS_M = WARPS_M_,
        WARPS_N = WARPS_N_,
        STAGES = STAGES_,                    /* 1: 05b-05e's load, store, compute; >= 3: cp.async pipeline */
        THREADS = 32 * WARPS_M * WARPS_N,
        WM = BM / WARPS_M,                   /* warp tile */
        WN = BN / WARPS_N,
        /* Blocks per SM the registers must allow (__launch_bounds__): warp tiles of up to 64 fp32
         * accumulators per thread get 128 registers (512 threads per SM), larger ones 255 (256). */
        MIN_BLOCKS = (WM * WN / 32 <= 64 ? 512 : 256) / THREADS > 0 ? (WM * WN / 32 <= 64 ? 512 : 256) / THREADS : 1,
        MMA_M = WM / 16,                     /* m16n8k16 tiles per warp tile */
        MMA_N = WN / 8,
        A_TILE_BYTES = BM * BK * 2,          /* a stage: the A tile, then the B tile */
        STAGE_BYTES = (BM + BN) * BK * 2,
        OUT_PITCH = BN + 8,                  /* rows of the staged output tile (implicit_gemm.h: igemm_out_pitch) */
    };
    static_assert(BK_ % 16 == 0, "a k tile is whole m16n8k16 steps");
    static_assert((BM_ / WARPS_M_) % 16 == 0 && (BN_ / WARPS_N_) % 16 == 0,
                  "a warp tile is whole 16x16 ldmatrix.x4 loads of A and B");
};

/* ---- the warp tile: ldmatrix (.trans) + mma.sync ----------------------------------------------------- */

/* Per lane, the byte offset (from the A or B tile of a stage) of the row it hands to ldmatrix: one per
 * 16-deep step of a k tile where the operand is k-contiguous, one per 16-wide fragment of the warp tile
 * where it is k-major (the layouts above). The B offsets start at b_from: A_TILE_BYTES for
 * igemm_mainloop(), which hands igemm_warp_tile_mma() the stage as both a_tile and b_tile; 0 where B
 * has a tile of its own (05d, 05e). */
template <class T, bool A_KMAJOR, bool B_KMAJOR>
struct igemm_lanes {
    uint32_t a[A_KMAJOR ? T::MMA_M : T::BK / 16];
    uint32_t b[B_KMAJOR ? T::MMA_N / 2 : T::BK / 16];
};

template <class T, bool A_KMAJOR, bool B_KMAJOR>
static __device__ __forceinline__ igemm_lanes<T, A_KMAJOR, B_KMAJOR> igemm_lanes_of(int warp_m, int warp_n, int lane,
                                                                                    uint32_t b_from)
{
    igemm_lanes<T, A_KMAJOR, B_KMAJOR> o;
    if (A_KMAJOR) {
#pragma unroll
        for (int i = 0; i < T::MMA_M; i++)
            o.a[i] = 16u * swizzle_chunk(ldsm_b_row(lane), warp_m * (T::WM / 8) + 2 * i + ldsm_b_chunk(lane), T::BM / 8);
    } else {
#pragma unroll
        for (int ks = 0; ks < T::BK / 16; ks++)
            o.a[ks] = 16u * swizzle_chunk(warp_m * T::WM + ldsm_a_row(lane), 2 * ks + ldsm_a_chunk(lane), T::BK / 8);
    }
    if (B_KMAJOR) {
#pragma unroll
        for (int jj = 0; jj < T::MMA_N / 2; jj++)
            o.b[jj] = b_from + 16u * swizzle_chunk(ldsm_a_row(lane), warp_n * (T::WN / 8) + 2 * jj + ldsm_a_chunk(lane), T::BN / 8);
    } else {
#pragma unroll
        for (int ks = 0; ks < T::BK / 16; ks++)
            o.b[ks] = b_from + 16u * swizzle_chunk(warp_n * T::WN + ldsm_b_row(lane), 2 * ks + ldsm_b_chunk(lane), T::BK / 8);
    }
    return o;
}

/* acc += this warp's WM x BK slice of the staged A times the BK x WN slice of B. Per 16-deep step:
 * MMA_M ldmatrix.x4 for A (one per 16 rows), MMA_N/2 for B (one per 16 columns, two n8 operands),
 * then MMA_M * MMA_N mma.sync. a_tile and b_tile are .shared addresses. */
template <class T, bool A_KMAJOR, bool B_KMAJOR>
static __device__ __forceinline__ void igemm_warp_tile_mma(uint32_t a_tile, uint32_t b_tile,
                                                           const igemm_lanes<T, A_KMAJOR, B_KMAJOR> &o,
                                                           float (&acc)[T::MMA_M][T::MMA_N][4])
{
#pragma unroll
    for (int ks = 0; ks < T::BK / 16; ks++) {
        uint32_t a[T::MMA_M][4], b[T::MMA_N][2];
#pragma unroll
        for (int i = 0; i < T::MMA_M; i++) {
            if (A_KMAJOR)
                ldmatrix_x4_trans(a[i], a_tile + o.a[i] + ks * 16 * (T::BM * 2));
            else
                ldmatrix_x4(a[i], a_tile + o.a[ks] + i * 16 * (T::BK * 2));
        }
#pragma unroll
        for (int jj = 0; jj < T::MMA_N / 2; jj++) {
            uint32_t r[4];
            if (B_KMAJOR)
                ldmatrix_x4_trans(r, b_tile + o.b[jj] + ks * 16 * (T::BN * 2));
            else
                ldmatrix_x4(r, b_tile + o.b[ks] + jj * 16 * (T::BK * 2));
            b[2 * jj][0] = r[0];
            b[2 * jj][1] = r[1];
            b[2 * jj + 1][0] = r[2];
            b[2 * jj + 1][1] = r[3];
        }
#pragma unroll
        for (int i = 0; i < T::MMA_M; i++)
#pragma unroll
            for (int j = 0; j < T::MMA_N; j++)
                mma_m16n8k16_f16_f32(acc[i][j], a[i], b[j]);
    }
}

/* ---- the cp.async pipeline --------------------------------------------------------------------------- */

/* The main loop over k_tiles k tiles, STAGES stages of STAGE_BYTES from smem (a .shared address), each
 * an A tile then a B tile. copy_next(stage) issues this thread's cp.async for the next k tile into the
 * stage at `stage` and moves the thread's positions one k tile on (the chapter's copy_tile()).
 *
 * Prologue: k tiles 0 .. STAGES-2 in flight, one commit group each (empty past the last tile, so the
 * group count below stays right for any number of tiles, zero included: acc is then untouched).
 * Main loop: at iteration kt, STAGES-1+kt groups have been committed; waiting until at most STAGES-2
 * are in flight means tiles 0..kt have landed (for this thread; the barrier extends that to the
 * block). The barrier also means every warp is done with tile kt-1, whose stage the copy for tile
 * kt+STAGES-1 then reuses. One barrier per k tile. On return every copy has landed, but no barrier
 * follows the last tile's compute: a caller that reuses the stages must __syncthreads() first. */
template <class T, bool A_KMAJOR, bool B_KMAJOR, class CopyNext>
static __device__ __forceinline__ void igemm_mainloop(uint32_t smem, int k_tiles, CopyNext &copy_next,
                                                      const igemm_lanes<T, A_KMAJOR, B_KMAJOR> &lanes,
                                                      float (&acc)[T::MMA_M][T::MMA_N][4])
{
    static_assert(T::STAGES >= 3, "the pipeline keeps at least two tiles in flight");
#pragma unroll
    for (int s = 0; s < T::STAGES - 1; s++) {
        if (s < k_tiles)
            copy_next(smem + s * T::STAGE_BYTES);
        cp_async_commit();
    }

    int read_stage = 0, write_stage = T::STAGES - 1;
    for (int kt = 0; kt < k_tiles; kt++) {
        cp_async_wait<T::STAGES - 2>();
        __syncthreads();
        if (kt + T::STAGES - 1 < k_tiles)
            copy_next(smem + write_stage * T::STAGE_BYTES);
        cp_async_commit();

        const uint32_t stage = smem + read_stage * T::STAGE_BYTES;
        igemm_warp_tile_mma<T>(stage, stage, lanes, acc); /* lanes' B offsets include A_TILE_BYTES */
        read_stage = read_stage == T::STAGES - 1 ? 0 : read_stage + 1;
        write_stage = write_stage == T::STAGES - 1 ? 0 : write_stage + 1;
    }
    cp_async_wait<0>(); /* nothing may land in the stages once they hold something else */
}

/* ---- the staged epilogue ------------------------------------------------------------------------------ */

/* Visits this lane's accumulators a pair at a time: visit(row, col, v0, v1) with v0 and v1 (references
 * into acc) at row `row`, columns `col` and `col + 1` of the block tile (mma's C fragment layout,
 * tensor_core.h). Every epilogue walks the accumulators this way; only what it does with a pair differs. */
template <class T, class Visit>
static __device__ __forceinline__ void igemm_for_each_pair(float (&acc)[T::MMA_M][T::MMA_N][4], int warp_m,
                                                           int warp_n, int lane, Visit visit)
{
#pragma unroll
    for (int i = 0; i < T::MMA_M; i++)
#pragma unroll
        for (int j = 0; j < T::MMA_N; j++)
#pragma unroll
            for (int half = 0; half < 2; half++)
                visit(warp_m * T::WM + i * 16 + mma_c_row(lane, 2 * half),
                      warp_n * T::WN + j * 8 + mma_c_col(lane, 2 * half), acc[i][j][2 * half],
                      acc[i][j][2 * half + 1]);
}

/* The accumulators as fp16 pairs into `out`, a BM x OUT_PITCH tile in shared memory (the stages, once
 * every warp is done with them). The caller's __syncthreads() then makes the whole tile visible. */
template <class T>
static __device__ __forceinline__ void igemm_stage_out(__half *out, float (&acc)[T::MMA_M][T::MMA_N][4],
                                                       int warp_m, int warp_n, int lane)
{
    igemm_for_each_pair<T>(acc, warp_m, warp_n, lane, [&](int row, int col, float &v0, float &v1) {
        *(__half2 *)&out[row * T::OUT_PITCH + col] = __floats2half2_rn(v0, v1);
    });
}

/* Each thread's share of the staged tile's 16-byte chunks (8 columns of one row), consecutive threads
 * along a row: store(row, col, chunk) for each, row and col within the block tile, chunk its address in
 * `out`. The chapter's store() checks the edges and writes the chunk where its result lives. */
template <class T, class Store>
static __device__ __forceinline__ void igemm_out_chunks(const __half *out, int tid, Store &store)
{
    static_assert((T::BM * T::BN / 8) % T::THREADS == 0, "the epilogue stores whole 16-byte chunks, equal shares");
#pragma unroll
    for (int pass = 0; pass < T::BM * T::BN / 8 / T::THREADS; pass++) {
        const int index = tid + pass * T::THREADS;
        const int row = index / (T::BN / 8), col = index % (T::BN / 8) * 8;
        store(row, col, &out[row * T::OUT_PITCH + col]);
    }
}

/* The forward pass's store, written once for chapters 05 and 08: each thread's chunks of the staged
 * tile to y, the block tile starting at (row0, col0) of the rows x cols GEMM output, y_at(m, j) the
 * address of output (m, j). A chunk is one 16-byte store where the output's rows are 16-byte aligned
 * (vectors: K and K/groups multiples of 8) and all 8 columns exist; element by element otherwise, and
 * at the last column tile's edge. */
template <class T, class YAt>
static __device__ __forceinline__ void igemm_store_chunks(const __half *out, int tid, int row0, int col0, int rows,
                                                          int cols, bool vectors, YAt y_at)
{
    auto store = [&](int row, int col, const __half *chunk) {
        const int m = row0 + row, j = col0 + col;
        if (m >= rows || j >= cols)
            return;
        const uint4 v = *(const uint4 *)chunk;
        __half *dst = y_at(m, j);
        if (vectors && j + 8 <= cols) {
            *(uint4 *)dst = v;
        } else {
            const __half *h = (const __half *)&v;
#pragma unroll
            for (int e = 0; e < 8; e++)
                if (j + e < cols)
                    dst[e] = h[e];
        }
    };
    igemm_out_chunks<T>(out, tid, store);
}

#endif
