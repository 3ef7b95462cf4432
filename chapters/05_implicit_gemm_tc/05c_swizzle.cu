/* 05c: the swizzle instead of padding.
 *
 * What changes from 05b: where a staged element lives in shared memory. The rows are BK halves, with no
 * padding; inside each row the 16-byte chunks are permuted: logical chunk c of row r is stored at chunk
 * c ^ f(r) (swizzle_chunk(), tensor_core.h). The warp tile is 05b's with the new offsets
 * (swizzled_lanes_of(), swizzled_warp_tile_mma() below). From 05d on, the steps and chapters 06 and 07
 * use this warp tile as written once in igemm_pipeline.cuh (igemm_lanes_of(),
 * igemm_warp_tile_mma(), which add the k-major layout that dgrad and wgrad need).
 *
 * Why: unpadded 64-byte rows would put the 8 rows that one ldmatrix phase reads onto 2 of a 128-byte
 * line's 8 slots, a 4-way bank conflict. 05b's padding avoids that by spending 8 halves a row (20% more
 * shared memory); the swizzle avoids it by permutation, for free. The same chunk of 8 consecutive rows
 * lands in 8 different slots, and a row's own chunks stay a permutation of themselves, so whole-row
 * stores stay conflict-free too. The bytes saved matter from 05f on, where 4 stages of the tile are
 * resident at once.
 */
#include <stdint.h>

#include <cuda_fp16.h>

#include "check.h"
#include "conv.h"
#include "igemm_pipeline.cuh"
#include "implicit_gemm.h"
#include "steps.cuh"
#include "tensor_core.h"

typedef tile_shape<IGEMM_SHAPE_05C> shape_05c;

/* Where element (row, col) of a tile of BK-half rows is staged: chunk col / 8 of the row, swizzled,
 * then col % 8 halves into it. An index in halves. */
template <class T>
static __device__ __forceinline__ int swizzled(int row, int col)
{
    return 8 * swizzle_chunk(row, col / 8, T::CPR) + col % 8;
}

/* Per lane, the byte offset in the A tile and in the B tile of the row it hands to ldmatrix at each
 * 16-deep step ks: 05b's rows and chunks, at their swizzled places. The warp's other 16-row fragments
 * are 16 rows further, and the swizzle keeps them there: it repeats every 8 rows. */
template <class T>
static __device__ __forceinline__ igemm_lanes<T, false, false> swizzled_lanes_of(int warp_m, int warp_n, int lane)
{
    igemm_lanes<T, false, false> o;
#pragma unroll
    for (int ks = 0; ks < T::BK / 16; ks++) {
        o.a[ks] = 16u * swizzle_chunk(warp_m * T::WM + ldsm_a_row(lane), 2 * ks + ldsm_a_chunk(lane), T::CPR);
        o.b[ks] = 16u * swizzle_chunk(warp_n * T::WN + ldsm_b_row(lane), 2 * ks + ldsm_b_chunk(lane), T::CPR);
    }
    return o;
}

/* acc += this warp's WM x BK slice of the staged A times the BK x WN slice of B. Per 16-deep step:
 * MMA_M ldmatrix.x4 for A (one per 16 rows), MMA_N/2 for B (one per 16 columns, two n8 operands), then
 * MMA_M * MMA_N mma.sync. a_tile and b_tile are .shared addresses. */
template <class T>
static __device__ __forceinline__ void swizzled_warp_tile_mma(uint32_t a_tile, uint32_t b_tile,
                                                              const igemm_lanes<T, false, false> &o,
                                                              float (&acc)[T::MMA_M][T::MMA_N][4])
{
    const int row_bytes = 2 * T::BK;
#pragma unroll
    for (int ks = 0; ks < T::BK / 16; ks++) {
        uint32_t a[T::MMA_M][4], b[T::MMA_N][2];
#pragma unroll
        for (int i = 0; i < T::MMA_M; i++)
            ldmatrix_x4(a[i], a_tile + o.a[ks] + i * 16 * row_bytes);
#pragma unroll
        for (int jj = 0; jj < T::MMA_N / 2; jj++) {
            uint32_t r[4];
            ldmatrix_x4(r, b_tile + o.b[ks] + jj * 16 * row_bytes);
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

template <class T>
static __global__ void __launch_bounds__(T::THREADS, T::MIN_BLOCKS)
igemm_mma_swizzled(const conv_problem prob, const __half *__restrict__ x, const __half *__restrict__ w,
                 __half *__restrict__ y)
{
    static_assert(T::THREADS % T::BK == 0 && T::BM % (T::THREADS / T::BK) == 0 && T::BN % (T::THREADS / T::BK) == 0,
                  "each thread stages one column of both tiles, every THREADS/BK-th row");
    __shared__ __align__(128) __half a_tile[T::BM * T::BK]; /* A[m0 + row][k0 + col] at swizzled(row, col) */
    __shared__ __align__(128) __half b_tile[T::BN * T::BK]; /* B[k0 + col][j0 + row]: n-major, likewise */

    const int rows = igemm_rows(&prob), cols = igemm_cols(&prob), depth = igemm_depth(&prob);
    const int group = blockIdx.y;
    const gemm_block blk = gemm_block_of(blockIdx.x, cols, T::BM, T::BN);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int warp_m = warp % T::WARPS_M, warp_n = warp / T::WARPS_M;

    const igemm_lanes<T, false, false> lanes = swizzled_lanes_of<T>(warp_m, warp_n, lane);
    const uint32_t a_base = smem_address(a_tile), b_base = smem_address(b_tile);
    float acc[T::MMA_M][T::MMA_N][4] = {};

    /* Each thread stages one column of both tiles (consecutive threads: consecutive kappa, which in
     * NHWC are consecutive channels, so a warp's loads coalesce) and every 4th row. */
    const int col = threadIdx.x % T::BK;
    const int row_first = threadIdx.x / T::BK, row_step = T::THREADS / T::BK;
    const __half zero = __float2half(0.0f);

    for (int k0 = 0; k0 < depth; k0 += T::BK) {
        const int kappa = k0 + col;
        for (int row = row_first; row < T::BM; row += row_step) {
            const int m = blk.row0 + row;
            const int from = m < rows && kappa < depth ? igemm_a_offset(&prob, group, m, kappa) : -1;
            a_tile[swizzled<T>(row, col)] = from >= 0 ? x[from] : zero;
        }
        for (int row = row_first; row < T::BN; row += row_step) {
            const int j = blk.col0 + row;
            b_tile[swizzled<T>(row, col)] =
                j < cols && kappa < depth ? w[igemm_b_offset(&prob, group, j, kappa)] : zero;
        }
        __syncthreads();

        swizzled_warp_tile_mma<T>(a_base, b_base, lanes, acc);
        __syncthreads(); /* before the next stage overwrites the tiles */
    }

    store_fragments<T>(acc, prob, group, blk, warp_m, warp_n, lane, y);
}

extern "C" bool supports_05c(const conv_problem *prob, char *why, size_t why_len)
{
    return grid_fits("05c", prob, shape_05c::BM, shape_05c::BN, why, why_len);
}

extern "C" void launch_05c(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    typedef shape_05c T;
    (void)workspace;
    igemm_mma_swizzled<T><<<grid_of(prob, T::BM, T::BN), T::THREADS>>>(*prob, (const __half *)x,
                                                                        (const __half *)w, (__half *)y);
    CUDA_CHECK_LAUNCH();
}
