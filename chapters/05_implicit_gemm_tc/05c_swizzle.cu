/* 05c: the swizzle instead of padding.
 *
 * What changes from 05b: where a staged element lives in shared memory. The rows are BK halves, with no
 * padding; inside each row the 16-byte chunks are permuted: logical chunk c of row r is stored at chunk
 * c ^ f(r) (swizzle_chunk(), tensor_core.h). The warp tile is 05b's with the new offsets, written once
 * for chapters 05 to 07 as igemm_lanes_of() and igemm_warp_tile_mma() (common/igemm_pipeline.cuh).
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

    const igemm_lanes<T, false, false> lanes = igemm_lanes_of<T, false, false>(warp_m, warp_n, lane, 0);
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

        igemm_warp_tile_mma<T>(a_base, b_base, lanes, acc);
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
