/* Chapter 05: implicit GEMM on tensor cores.
 *
 * What it computes: fprop, y = x (*) w, fp16 in and out with fp32 accumulation, NHWC activations and
 * KRSC filters (the harness converts from NCHW/KCRS), any padding, stride, dilation and groups.
 *
 * The GEMM view (docs/gemm_view.md, and implicit_gemm.h for the index math): per group,
 * Y[m][j] = sum_kappa A[m][kappa] * B[kappa][j] with m an output pixel (N*P*Q rows), j an output
 * channel (K/groups columns) and kappa = (r, s, c) a filter tap and input channel (R*S*C/groups).
 * Chapter 04 wrote A (im2col) to memory, 9x the input for a 3x3 filter; here A is never built: each
 * block gathers the piece of A it needs straight from x into shared memory, computing for every element
 * which input pixel and channel it is (or that it is a zero of the padding). B needs no gathering: a
 * KRSC filter is B transposed, each output channel's R*S*C/groups values contiguous.
 *
 * The steps, each its own kernel and registry entry, each a small change from the last:
 *   05a  WMMA (nvcuda::wmma 16x16x16 fragments, fp16 x fp16 -> fp32). A 64x64 block tile, 32 deep per
 *        stage, staged in shared memory by plain 2-byte loads, each element's address computed by
 *        dividing m and kappa (igemm_a_offset()). Works for any C, so it runs conv1 (C = 3) as is.
 *   05b  mma.sync.m16n8k16 from the PTX ISA, with operands loaded by ldmatrix from a swizzled shared
 *        tile (no bank conflicts, no padding), and 16-byte global loads: 8 consecutive channels of one
 *        input pixel. That needs C/groups % 8 == 0; other problems run on a zero-padded copy (below).
 *        A 128x128x32 block tile, 8 warps of 64x32. The pixel part of each address is computed once per
 *        row, the tap part once per k step (a division per step, not per element).
 *   05c  a 4-stage cp.async pipeline: copies for k tiles kt+1..kt+3 are in flight while the tensor
 *        cores work on kt, with one barrier per k tile. The tap part of the address now advances by
 *        precomputed deltas (igemm_iter_next(), no division in the loop) and the padding test is two
 *        bits of per-row masks computed once. The warp tile grows to 64x64 (4 warps per 128x128 block,
 *        up to 255 registers each): per 16-deep step a warp issues 8 ldmatrix.x4 for 32 mma.sync, where
 *        05b's 64x32 issues 6 for 16, so shared memory feeds 1.5x the math per byte. The epilogue goes
 *        through shared memory so that y is written in 16-byte stores.
 *   05d  05c with a 64x64 block tile (4 warps of 32x32): four times the blocks, for the small late
 *        layers (res4, res5) where 128x128 tiles leave most of the SMs idle.
 *   05e  05c with a 256x64 block tile (4 warps of 64x64 stacked along M), for K = 64 layers (res2,
 *        conv1), where half of a 128-wide tile would multiply zeros.
 * The tile shapes are IGEMM_SHAPE_05B..05E in implicit_gemm.h, one line each.
 *
 * Fused epilogue (common/epilogue.h; chapter 10 builds on it): 05c-05e can apply per-channel bias,
 * batch norm folded into scale and shift, a residual add and ReLU to the fp32 accumulators in
 * registers, before the one rounding to fp16 and the one store (apply_epilogue(), epilogue_value()
 * from common/epilogue.cuh): launch_fused in the registry. The plain launch runs the same kernel
 * with every operation off.
 *   05f  the unfused comparison: 05c, then the epilogue as a separate elementwise pass over y
 *        (common/epilogue.cu), which reads y and the residual and writes y once more.
 *
 * From common/igemm_pipeline.cuh (shared with chapters 06 and 07): the derived tile constants
 * (igemm_tile, which tile_shape below extends), the per-lane ldmatrix offsets and the warp tile's
 * ldmatrix + mma.sync loop (igemm_lanes_of, igemm_warp_tile_mma; both operands k-contiguous), the
 * cp.async main loop of 05c-05e (igemm_mainloop) and the staged epilogue's two halves (igemm_stage_out,
 * igemm_out_chunks). What is fprop's own stays here: gathering A from x and B from w (copy_tile) and
 * writing y.
 *
 * C/groups not a multiple of 8 (conv1's C = 3, odd channel counts): 05b-05e first copy x and w into
 * the workspace with each group's channels padded with zeros to a multiple of 8 (pad_channels), then
 * run the kernel on that problem. The zero channels add exact zeros, so y is the same; the time
 * includes the copy, and FLOPs are counted with the real C. conv1's reduction grows from 7*7*3 = 147 to
 * 7*7*8 = 392: 2.7x the tensor-core work. 05a reads the unpadded input directly.
 *
 * None of this has run on a GPU yet: it is compiled (sm_80, sm_90, no spills) and its index math and
 * fragment bookkeeping are emulated on the CPU by tests/test_implicit_gemm.c. Numbers come from the
 * benchmark.
 *
 * Run:
 *   ./build/conv run 05c --layer resnet50/res2_3x3      (likewise 05a, 05b, 05d, 05e)
 *   ./build/conv check 05                               (every step against the reference)
 */
#include <stdint.h>
#include <stdio.h>

#include <cuda_fp16.h>
#include <mma.h>

#include "check.h"
#include "conv.h"
#include "epilogue.cuh"
#include "igemm_pipeline.cuh"
#include "implicit_gemm.h"
#include "pad_channels.h"
#include "tensor_core.h"

/* ---- the tile shapes, all in one place ------------------------------------------------------------- */

/* 05a: a WMMA_BM x WMMA_BN block tile, WMMA_BK deep per stage, 4 warps as 2 x 2, each 32x32 = 2 x 2
 * WMMA tiles of 16x16. The staged rows are padded by 8 halves: wmma::load_matrix_sync wants a row
 * pitch that is a multiple of 8 halves and 32-byte aligned fragments, and 40 halves (80 bytes) also
 * spreads consecutive rows over different banks. */
enum {
    WMMA_BM = 64,
    WMMA_BN = 64,
    WMMA_BK = 32,
    WMMA_WARPS_M = 2,
    WMMA_WARPS_N = 2,
    WMMA_THREADS = 32 * WMMA_WARPS_M * WMMA_WARPS_N,
    WMMA_PITCH = WMMA_BK + 8,
};

/* 05b-05e: one template parameter carries a whole shape (implicit_gemm.h: IGEMM_SHAPE_05B..05E). The
 * warp tile, mma tiles, stage bytes and launch bounds come from igemm_tile (igemm_pipeline.cuh); added
 * here is how fprop copies a tile: both A (BM pixels) and B (BN output channels) are rows of BK
 * halves, kappa contiguous. */
template <int BM_, int BN_, int BK_, int WARPS_M_, int WARPS_N_, int STAGES_>
struct tile_shape : igemm_tile<BM_, BN_, BK_, WARPS_M_, WARPS_N_, STAGES_> {
    enum {
        CPR = BK_ / 8,                                  /* 16-byte chunks per staged row */
        ROW_BYTES = BK_ * 2,
        A_LOADS = BM_ * CPR / (32 * WARPS_M_ * WARPS_N_), /* 16-byte copies per thread per k tile */
        B_LOADS = BN_ * CPR / (32 * WARPS_M_ * WARPS_N_),
    };
    static_assert((32 * WARPS_M_ * WARPS_N_) % CPR == 0 && (BM_ * CPR) % (32 * WARPS_M_ * WARPS_N_) == 0 &&
                      (BN_ * CPR) % (32 * WARPS_M_ * WARPS_N_) == 0,
                  "the threads copy whole rows of chunks, the same number each");
    static_assert((BM_ * BN_ / 8) % (32 * WARPS_M_ * WARPS_N_) == 0,
                  "the epilogue stores whole 16-byte chunks, the same number each");
};

typedef tile_shape<IGEMM_SHAPE_05B> shape_05b;
typedef tile_shape<IGEMM_SHAPE_05C> shape_05c;
typedef tile_shape<IGEMM_SHAPE_05D> shape_05d;
typedef tile_shape<IGEMM_SHAPE_05E> shape_05e;
static_assert(shape_05b::STAGES == 1, "05b is the unpipelined step");
static_assert(shape_05c::STAGES >= 3 && shape_05d::STAGES >= 3 && shape_05e::STAGES >= 3,
              "05c-05e pipeline at least 3 stages");

/* ---- 05a: WMMA ------------------------------------------------------------------------------------- */

static __global__ void __launch_bounds__(WMMA_THREADS)
igemm_wmma(const conv_problem prob, const __half *__restrict__ x, const __half *__restrict__ w,
           __half *__restrict__ y)
{
    using namespace nvcuda;
    __shared__ __align__(32) __half a_tile[WMMA_BM][WMMA_PITCH]; /* A[m0 + row][k0 + col] */
    __shared__ __align__(32) __half b_tile[WMMA_BN][WMMA_PITCH]; /* B[k0 + col][j0 + row]: n-major */
    __shared__ __align__(32) float out_tile[WMMA_WARPS_M * WMMA_WARPS_N][16][16];

    const int rows = igemm_rows(&prob), cols = igemm_cols(&prob), depth = igemm_depth(&prob);
    const int group = blockIdx.y;
    const gemm_block blk = gemm_block_of(blockIdx.x, cols, WMMA_BM, WMMA_BN);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int warp_m = warp % WMMA_WARPS_M, warp_n = warp / WMMA_WARPS_M;

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            wmma::fill_fragment(acc[i][j], 0.0f);

    /* Each thread stages one column of both tiles (consecutive threads: consecutive kappa, which in
     * NHWC are consecutive channels, so a warp's loads coalesce) and every 4th row. */
    const int col = threadIdx.x % WMMA_BK;
    const int row_first = threadIdx.x / WMMA_BK, row_step = WMMA_THREADS / WMMA_BK;
    const __half zero = __float2half(0.0f);

    for (int k0 = 0; k0 < depth; k0 += WMMA_BK) {
        const int kappa = k0 + col;
        for (int row = row_first; row < WMMA_BM; row += row_step) {
            const int m = blk.row0 + row;
            const int from = m < rows && kappa < depth ? igemm_a_offset(&prob, group, m, kappa) : -1;
            a_tile[row][col] = from >= 0 ? x[from] : zero;
        }
        for (int row = row_first; row < WMMA_BN; row += row_step) {
            const int j = blk.col0 + row;
            b_tile[row][col] = j < cols && kappa < depth ? w[igemm_b_offset(&prob, group, j, kappa)] : zero;
        }
        __syncthreads();

        for (int kk = 0; kk < WMMA_BK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a[2];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b[2];
            for (int i = 0; i < 2; i++)
                wmma::load_matrix_sync(a[i], &a_tile[warp_m * 32 + i * 16][kk], WMMA_PITCH);
            for (int j = 0; j < 2; j++)
                wmma::load_matrix_sync(b[j], &b_tile[warp_n * 32 + j * 16][kk], WMMA_PITCH);
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < 2; j++)
                    wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
        }
        __syncthreads(); /* before the next stage overwrites the tiles */
    }

    /* A WMMA accumulator's layout inside the warp is unspecified: store it to shared memory, then each
     * lane converts and writes 8 of its 256 values, skipping rows and columns past the edges. */
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            wmma::store_matrix_sync(&out_tile[warp][0][0], acc[i][j], 16, wmma::mem_row_major);
            __syncwarp();
            for (int e = lane; e < 256; e += 32) {
                const int m = blk.row0 + warp_m * 32 + i * 16 + e / 16;
                const int jj = blk.col0 + warp_n * 32 + j * 16 + e % 16;
                if (m < rows && jj < cols)
                    y[igemm_y_offset(&prob, group, m, jj)] = __float2half(out_tile[warp][e / 16][e % 16]);
            }
            __syncwarp(); /* before the next fragment overwrites out_tile */
        }
}

/* ---- 05b: mma.sync + ldmatrix + swizzle, 16-byte loads ------------------------------------------ */

/* Per k tile: 16-byte loads of this thread's chunks into registers, a barrier (everyone is done with
 * the previous tile), 16-byte stores into the swizzled tiles, a barrier, the warp tiles. The loads'
 * latency is exposed to this block (other resident blocks fill the gap); 05c removes that.
 * The warp tiles of 05b-05e are igemm_lanes_of() and igemm_warp_tile_mma() (igemm_pipeline.cuh) with
 * both tiles k-contiguous (template arguments false, false): per lane one swizzled row offset per
 * 16-deep step, computed once; per step MMA_M ldmatrix.x4 for A, MMA_N/2 for B, MMA_M * MMA_N mma.sync. */
template <class T>
static __global__ void __launch_bounds__(T::THREADS, T::MIN_BLOCKS)
igemm_mma(const conv_problem prob, const __half *__restrict__ x, const __half *__restrict__ w,
          __half *__restrict__ y)
{
    __shared__ __align__(128) uint4 a_tile[T::BM * T::CPR]; /* 16-byte chunks, swizzle_chunk() order */
    __shared__ __align__(128) uint4 b_tile[T::BN * T::CPR];

    const int rows = igemm_rows(&prob), cols = igemm_cols(&prob), depth = igemm_depth(&prob);
    const int group = blockIdx.y;
    const gemm_block blk = gemm_block_of(blockIdx.x, cols, T::BM, T::BN);
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int warp_m = warp % T::WARPS_M, warp_n = warp / T::WARPS_M;
    const int chunk = igemm_load_chunk(tid, T::CPR); /* the same chunk column in A and in B */

    /* The rows this thread copies, and where each one's receptive field starts: divisions, once. */
    igemm_origin a_origin[T::A_LOADS];
    bool a_row_ok[T::A_LOADS];
#pragma unroll
    for (int i = 0; i < T::A_LOADS; i++) {
        const int m = blk.row0 + igemm_load_row(tid, i, T::THREADS, T::CPR);
        a_row_ok[i] = m < rows;
        a_origin[i] = igemm_row_origin(&prob, group, a_row_ok[i] ? m : 0);
    }
    int b_offset[T::B_LOADS];
    bool b_row_ok[T::B_LOADS];
#pragma unroll
    for (int i = 0; i < T::B_LOADS; i++) {
        const int j = blk.col0 + igemm_load_row(tid, i, T::THREADS, T::CPR);
        b_row_ok[i] = j < cols;
        b_offset[i] = igemm_b_offset(&prob, group, b_row_ok[i] ? j : 0, 0);
    }

    const igemm_lanes<T, false, false> lanes = igemm_lanes_of<T, false, false>(warp_m, warp_n, lane, 0);
    const uint32_t a_base = smem_address(a_tile), b_base = smem_address(b_tile);
    float acc[T::MMA_M][T::MMA_N][4] = {};

    const int k_tiles = tiles_covering(depth, T::BK);
    for (int kt = 0; kt < k_tiles; kt++) {
        /* This thread's 8 consecutive kappa: one tap, 8 channels. The tap part of the address is the
         * same for all its rows; the padding test is per row. */
        const int kappa = kt * T::BK + chunk * 8;
        const bool k_ok = kappa < depth;
        const igemm_tap tap = igemm_tap_of(&prob, kappa);
        const int tap_offset = igemm_tap_offset(&prob, tap.r, tap.s, tap.c);
        uint4 a_val[T::A_LOADS], b_val[T::B_LOADS];
#pragma unroll
        for (int i = 0; i < T::A_LOADS; i++) {
            const bool ok = k_ok && a_row_ok[i] && igemm_tap_inside(&prob, a_origin[i], tap.r, tap.s);
            a_val[i] = ok ? *(const uint4 *)(x + (a_origin[i].offset + tap_offset)) : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int i = 0; i < T::B_LOADS; i++)
            b_val[i] = k_ok && b_row_ok[i] ? *(const uint4 *)(w + (b_offset[i] + kappa)) : make_uint4(0, 0, 0, 0);

        __syncthreads(); /* every warp is done with the previous tile */
#pragma unroll
        for (int i = 0; i < T::A_LOADS; i++)
            a_tile[swizzle_chunk(igemm_load_row(tid, i, T::THREADS, T::CPR), chunk, T::CPR)] = a_val[i];
#pragma unroll
        for (int i = 0; i < T::B_LOADS; i++)
            b_tile[swizzle_chunk(igemm_load_row(tid, i, T::THREADS, T::CPR), chunk, T::CPR)] = b_val[i];
        __syncthreads();

        igemm_warp_tile_mma<T>(a_base, b_base, lanes, acc);
    }

    /* Straight from the fragments: each lane holds pairs of neighbouring channels (mma_c_col()), one
     * 32-bit store each when the pairs are 4-byte aligned in y (K and K/groups even). */
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

/* ---- 05c-05e: cp.async pipeline, walked addresses, staged epilogue ------------------------------ */

/* What a thread needs to issue its copies of one k tile, set up once per block. */
template <class T>
struct tile_copier {
    int a_offset[T::A_LOADS];     /* row origin offsets in x (igemm_row_origin) */
    uint32_t a_h_mask[T::A_LOADS]; /* igemm_tap_mask along h and w: 0 for rows past the last pixel */
    uint32_t a_w_mask[T::A_LOADS];
    uint32_t a_dst[T::A_LOADS];    /* byte offsets in a stage's A tile, swizzled */
    int b_offset[T::B_LOADS];     /* offsets in w of (column, kappa = 0) */
    bool b_ok[T::B_LOADS];
    uint32_t b_dst[T::B_LOADS];    /* byte offsets in a stage, past its A tile */
    igemm_iter at;                 /* the position along kappa of this thread's next chunk */
};

/* Issues this thread's cp.async for the k tile at tc.at into the stage at `stage` (a .shared address),
 * then walks tc.at one k tile on. Out-of-image taps, rows past the last pixel, columns past the last
 * channel and kappa past the reduction are copied with src-size 0: zeros. */
template <class T>
static __device__ __forceinline__ void copy_tile(tile_copier<T> &tc, uint32_t stage, int depth, const igemm_walk walk,
                                                 const __half *x, const __half *w)
{
    const bool k_ok = tc.at.kappa < depth;
#pragma unroll
    for (int i = 0; i < T::A_LOADS; i++) {
        const bool ok = k_ok && ((tc.a_h_mask[i] >> tc.at.r) & (tc.a_w_mask[i] >> tc.at.s) & 1u);
        cp_async_16(stage + tc.a_dst[i], ok ? x + (tc.a_offset[i] + tc.at.offset) : x, ok);
    }
#pragma unroll
    for (int i = 0; i < T::B_LOADS; i++) {
        const bool ok = k_ok && tc.b_ok[i];
        cp_async_16(stage + tc.b_dst[i], ok ? w + (tc.b_offset[i] + tc.at.kappa) : w, ok);
    }
    tc.at = igemm_iter_next(tc.at, walk);
}

/* The fused epilogue (epilogue.h), on this warp's fp32 accumulators in registers, before anything is
 * rounded to fp16: each value is that of output pixel m, channel group * cols + jj, and the residual
 * element is the one at y's offset for it. Elements past the last row or column are left alone (they
 * are never stored). Applied here, once, both of the store paths below (16-byte chunks and element by
 * element at the edges) write values that have been through it. */
template <class T>
static __device__ __forceinline__ void apply_epilogue(float (&acc)[T::MMA_M][T::MMA_N][4], const conv_epilogue &ep,
                                                      const conv_problem &prob, int group, const gemm_block blk,
                                                      int warp_m, int warp_n, int lane)
{
    const int rows = igemm_rows(&prob), cols = igemm_cols(&prob);
    igemm_for_each_pair<T>(acc, warp_m, warp_n, lane, [&](int row, int col, float &v0, float &v1) {
        const int m = blk.row0 + row, jj = blk.col0 + col;
        if (m >= rows)
            return;
        const int offset = igemm_y_offset(&prob, group, m, jj), k = group * cols + jj;
        if (jj < cols) /* the pair of neighbouring channels this lane holds */
            v0 = epilogue_value(ep, v0, k, offset);
        if (jj + 1 < cols)
            v1 = epilogue_value(ep, v1, k + 1, offset + 1);
    });
}

extern __shared__ __align__(128) unsigned char igemm_smem[];

/* ep: the fused epilogue, passed by value (a few flags and pointers); the plain launch passes one with
 * every operation off, so fused and plain runs are the same kernel. */
template <class T>
static __global__ void __launch_bounds__(T::THREADS, T::MIN_BLOCKS)
igemm_pipelined(const conv_problem prob, const igemm_walk walk, const __half *__restrict__ x,
                const __half *__restrict__ w, __half *__restrict__ y, const conv_epilogue ep)
{
    const uint32_t smem = smem_address(igemm_smem); /* STAGES x (A tile, B tile), then the output tile */
    const int rows = igemm_rows(&prob), cols = igemm_cols(&prob), depth = igemm_depth(&prob);
    const int group = blockIdx.y;
    const gemm_block blk = gemm_block_of(blockIdx.x, cols, T::BM, T::BN);
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int warp_m = warp % T::WARPS_M, warp_n = warp / T::WARPS_M;
    const int chunk = igemm_load_chunk(tid, T::CPR);

    /* Everything the loop needs about this thread's rows, with the divisions done here, once. */
    tile_copier<T> tc;
#pragma unroll
    for (int i = 0; i < T::A_LOADS; i++) {
        const int row = igemm_load_row(tid, i, T::THREADS, T::CPR), m = blk.row0 + row;
        tc.a_offset[i] = 0;
        tc.a_h_mask[i] = tc.a_w_mask[i] = 0;
        if (m < rows) {
            const igemm_origin o = igemm_row_origin(&prob, group, m);
            tc.a_offset[i] = o.offset;
            tc.a_h_mask[i] = igemm_tap_mask(o.h, prob.r, prob.dil_h, prob.h);
            tc.a_w_mask[i] = igemm_tap_mask(o.w, prob.s, prob.dil_w, prob.w);
        }
        tc.a_dst[i] = 16u * swizzle_chunk(row, chunk, T::CPR);
    }
#pragma unroll
    for (int i = 0; i < T::B_LOADS; i++) {
        const int row = igemm_load_row(tid, i, T::THREADS, T::CPR), j = blk.col0 + row;
        tc.b_ok[i] = j < cols;
        tc.b_offset[i] = igemm_b_offset(&prob, group, tc.b_ok[i] ? j : 0, 0);
        tc.b_dst[i] = T::A_TILE_BYTES + 16u * swizzle_chunk(row, chunk, T::CPR);
    }
    tc.at = igemm_iter_at(&prob, chunk * 8);

    const igemm_lanes<T, false, false> lanes = igemm_lanes_of<T, false, false>(warp_m, warp_n, lane, T::A_TILE_BYTES);
    float acc[T::MMA_M][T::MMA_N][4] = {};

    /* The pipeline (igemm_mainloop, igemm_pipeline.cuh): STAGES-1 k tiles in flight, one barrier per
     * k tile; copy_tile() below is what it issues for each. */
    const int k_tiles = tiles_covering(depth, T::BK);
    auto copy_next = [&](uint32_t stage) { copy_tile(tc, stage, depth, walk, x, w); };
    igemm_mainloop<T>(smem, k_tiles, copy_next, lanes, acc);
    __syncthreads(); /* every warp is done with the stages: they now hold the output tile */

    /* Epilogue: the fused operations, if any, on the fp32 accumulators (apply_epilogue). Then through
     * shared memory: fp16 pairs into a BM x OUT_PITCH tile (igemm_stage_out), then whole 16-byte chunks
     * (8 channels of one pixel, igemm_out_chunks) to y, one store each where K and K/groups are
     * multiples of 8; otherwise, and at the last column tile's edge, element by element. */
    if (epilogue_any(ep.ops))
        apply_epilogue<T>(acc, ep, prob, group, blk, warp_m, warp_n, lane);
    __half *out = (__half *)igemm_smem;
    igemm_stage_out<T>(out, acc, warp_m, warp_n, lane);
    __syncthreads();

    igemm_store_chunks<T>(out, tid, blk.row0, blk.col0, rows, cols, prob.k % 8 == 0 && cols % 8 == 0,
                          [&](int m, int j) { return y + igemm_y_offset(&prob, group, m, j); });
}

/* ---- host side: supports(), launches ----------------------------------------------------------------- */

/* Limits every variant shares: the group goes on gridDim.y, the tiles on gridDim.x. */
static bool grid_fits(const char *id, const conv_problem *prob, int bm, int bn, char *why, size_t why_len)
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

static bool supports_05a(const conv_problem *prob, char *why, size_t why_len)
{
    return grid_fits("05a", prob, WMMA_BM, WMMA_BN, why, why_len);
}

/* 05b-05e: the grid, the 32-bit offsets of the padded problem, and for the walked variants (masks of
 * one bit per tap) filters of at most 32 x 32. */
static bool supports_mma(const char *id, bool masks, int bm, int bn, const conv_problem *prob, char *why,
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

static bool supports_05b(const conv_problem *prob, char *why, size_t why_len)
{
    return supports_mma("05b", false, shape_05b::BM, shape_05b::BN, prob, why, why_len);
}

static bool supports_05c(const conv_problem *prob, char *why, size_t why_len)
{
    return supports_mma("05c", true, shape_05c::BM, shape_05c::BN, prob, why, why_len);
}

static bool supports_05d(const conv_problem *prob, char *why, size_t why_len)
{
    return supports_mma("05d", true, shape_05d::BM, shape_05d::BN, prob, why, why_len);
}

static bool supports_05e(const conv_problem *prob, char *why, size_t why_len)
{
    return supports_mma("05e", true, shape_05e::BM, shape_05e::BN, prob, why, why_len);
}

static dim3 grid_of(const conv_problem *prob, int bm, int bn)
{
    return dim3((unsigned)(tiles_covering(igemm_rows(prob), bm) * tiles_covering(igemm_cols(prob), bn)),
                (unsigned)prob->groups);
}

extern "C" void launch_05a(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    (void)workspace;
    igemm_wmma<<<grid_of(prob, WMMA_BM, WMMA_BN), WMMA_THREADS>>>(*prob, (const __half *)x, (const __half *)w,
                                                                   (__half *)y);
    CUDA_CHECK_LAUNCH();
}

extern "C" void launch_05b(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    typedef shape_05b T;
    const pad_fprop_operands op = pad_fprop(prob, x, w, workspace);
    igemm_mma<T><<<grid_of(&op.prob, T::BM, T::BN), T::THREADS>>>(op.prob, (const __half *)op.x,
                                                                  (const __half *)op.w, (__half *)y);
    CUDA_CHECK_LAUNCH();
}

/* Shared memory of a pipelined block: the stages, reused for the output tile after the loop. */
template <class T>
static size_t pipelined_smem_bytes(void)
{
    const size_t stages = (size_t)T::STAGES * T::STAGE_BYTES, out = (size_t)T::BM * T::OUT_PITCH * 2;
    return stages > out ? stages : out;
}

/* ep: the fused epilogue's operands (device memory), or every operation off for the plain launch. */
template <class T>
static void launch_pipelined(const conv_problem *prob, void *x, void *w, void *y, void *workspace,
                             const conv_epilogue *ep)
{
    const pad_fprop_operands op = pad_fprop(prob, x, w, workspace);
    const size_t smem = pipelined_smem_bytes<T>();
    /* Over 48 KB a block must opt in, once per kernel (and device; the harness uses one). */
    static bool opted_in = false;
    if (smem > 48 * 1024 && !opted_in) {
        CUDA_CHECK(cudaFuncSetAttribute(igemm_pipelined<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        opted_in = true;
    }
    const igemm_walk walk = igemm_walk_make(&op.prob, T::BK);
    igemm_pipelined<T><<<grid_of(&op.prob, T::BM, T::BN), T::THREADS, smem>>>(
        op.prob, walk, (const __half *)op.x, (const __half *)op.w, (__half *)y, *ep);
    CUDA_CHECK_LAUNCH();
}

/* The plain launches: no epilogue operation (a zeroed conv_epilogue). */
static const conv_epilogue no_epilogue = {};

extern "C" void launch_05c(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    launch_pipelined<shape_05c>(prob, x, w, y, workspace, &no_epilogue);
}

extern "C" void launch_05d(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    launch_pipelined<shape_05d>(prob, x, w, y, workspace, &no_epilogue);
}

extern "C" void launch_05e(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    launch_pipelined<shape_05e>(prob, x, w, y, workspace, &no_epilogue);
}

/* The fused launches: the same kernels with the epilogue applied in registers before the store. */
extern "C" void launch_fused_05c(const conv_problem *prob, void *x, void *w, void *y, void *workspace,
                                 const conv_epilogue *ep)
{
    launch_pipelined<shape_05c>(prob, x, w, y, workspace, ep);
}

extern "C" void launch_fused_05d(const conv_problem *prob, void *x, void *w, void *y, void *workspace,
                                 const conv_epilogue *ep)
{
    launch_pipelined<shape_05d>(prob, x, w, y, workspace, ep);
}

extern "C" void launch_fused_05e(const conv_problem *prob, void *x, void *w, void *y, void *workspace,
                                 const conv_epilogue *ep)
{
    launch_pipelined<shape_05e>(prob, x, w, y, workspace, ep);
}

/* 05f, the unfused comparison: 05c's plain convolution, then the epilogue as a separate elementwise
 * pass over y (epilogue.cu), which reads y back, and the residual, and writes y again. Its plain
 * launch is 05c's. */
extern "C" void launch_fused_05f(const conv_problem *prob, void *x, void *w, void *y, void *workspace,
                                 const conv_epilogue *ep)
{
    launch_05c(prob, x, w, y, workspace);
    epilogue_unfused_f16_nhwc(prob, y, ep);
}

extern "C" const conv_kernel ch05_kernels[] = {
    {.id = "05a", .name = "implicit GEMM, WMMA 16x16x16, 64x64 tile",
     .source = "chapters/05_implicit_gemm_tc/implicit_gemm.cu",
     .pass = PASS_FPROP, .dtype = DTYPE_F16, .layout = LAYOUT_NHWC, .device = ON_GPU,
     .supports = supports_05a, .workspace_bytes = NULL, .launch = launch_05a,
     .phase_name = NULL, .launch_phase = NULL, .launch_fused = NULL, .library = NULL},
    {.id = "05b", .name = "implicit GEMM, mma.sync + ldmatrix, swizzled smem, 128x128",
     .source = "chapters/05_implicit_gemm_tc/implicit_gemm.cu",
     .pass = PASS_FPROP, .dtype = DTYPE_F16, .layout = LAYOUT_NHWC, .device = ON_GPU,
     .supports = supports_05b, .workspace_bytes = pad_fprop_workspace_bytes, .launch = launch_05b,
     .phase_name = NULL, .launch_phase = NULL, .launch_fused = NULL, .library = NULL},
    {.id = "05c", .name = "implicit GEMM, cp.async 4-stage pipeline, 128x128",
     .source = "chapters/05_implicit_gemm_tc/implicit_gemm.cu",
     .pass = PASS_FPROP, .dtype = DTYPE_F16, .layout = LAYOUT_NHWC, .device = ON_GPU,
     .supports = supports_05c, .workspace_bytes = pad_fprop_workspace_bytes, .launch = launch_05c,
     .phase_name = NULL, .launch_phase = NULL, .launch_fused = launch_fused_05c, .library = NULL},
    {.id = "05d", .name = "implicit GEMM, cp.async 4-stage pipeline, 64x64",
     .source = "chapters/05_implicit_gemm_tc/implicit_gemm.cu",
     .pass = PASS_FPROP, .dtype = DTYPE_F16, .layout = LAYOUT_NHWC, .device = ON_GPU,
     .supports = supports_05d, .workspace_bytes = pad_fprop_workspace_bytes, .launch = launch_05d,
     .phase_name = NULL, .launch_phase = NULL, .launch_fused = launch_fused_05d, .library = NULL},
    {.id = "05e", .name = "implicit GEMM, cp.async 4-stage pipeline, 256x64",
     .source = "chapters/05_implicit_gemm_tc/implicit_gemm.cu",
     .pass = PASS_FPROP, .dtype = DTYPE_F16, .layout = LAYOUT_NHWC, .device = ON_GPU,
     .supports = supports_05e, .workspace_bytes = pad_fprop_workspace_bytes, .launch = launch_05e,
     .phase_name = NULL, .launch_phase = NULL, .launch_fused = launch_fused_05e, .library = NULL},
    /* 05f has no plain launch: without an epilogue it would be 05c again */
    {.id = "05f", .name = "05c + separate epilogue kernel (unfused)",
     .source = "chapters/05_implicit_gemm_tc/implicit_gemm.cu",
     .pass = PASS_FPROP, .dtype = DTYPE_F16, .layout = LAYOUT_NHWC, .device = ON_GPU,
     .supports = supports_05c, .workspace_bytes = pad_fprop_workspace_bytes, .launch = NULL,
     .phase_name = NULL, .launch_phase = NULL, .launch_fused = launch_fused_05f, .library = NULL},
};
extern "C" const int ch05_kernel_count = sizeof(ch05_kernels) / sizeof(ch05_kernels[0]);
