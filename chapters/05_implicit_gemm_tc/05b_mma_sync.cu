/* 05b: mma.sync and ldmatrix instead of WMMA, on 05a's tile.
 *
 * What changes from 05a: the warp tile's loads and multiplies. mma.sync.aligned.m16n8k16 from the PTX
 * ISA replaces wmma::mma_sync, and ldmatrix.x4 replaces wmma::load_matrix_sync. Everything else is 05a's:
 * the 64x64x32 block tile of 4 warps of 32x32, the 2-byte loads addressed by division, the staged rows
 * padded to BK + 8 halves.
 *
 * Why: WMMA's fragment layouts are unspecified, mma.sync's are written down (tensor_core.h: mma_a_row()
 * .. mma_c_col()). Knowing which lane holds which element lets one ldmatrix.x4 hand a whole 16x16 A
 * operand, or two 16x8 B operands, to the warp: each lane gives the address of one 16-byte row and the
 * hardware deals the values out in fragment order (ldsm_a_row(), ldsm_b_row()). And it lets each lane
 * write its own accumulators to y as fp16 pairs (store_fragments(), steps.cuh), with no trip through
 * shared memory. The padding keeps ldmatrix free of bank conflicts: rows 80 bytes apart put the 8 rows
 * of one ldmatrix phase into 8 different 16-byte slots of the 128-byte line.
 */
#include <stdint.h>

#include <cuda_fp16.h>

#include "check.h"
#include "conv.h"
#include "igemm_pipeline.cuh"
#include "implicit_gemm.h"
#include "steps.cuh"
#include "tensor_core.h"

typedef tile_shape<IGEMM_SHAPE_05B> shape_05b;

/* Row pitch of the staged tiles, in halves: 05a's padding. */
template <class T>
struct padded {
    enum { PITCH = T::BK + 8 };
};

/* Per lane, the byte offset in the A tile and in the B tile of the row it hands to ldmatrix at each
 * 16-deep step ks; the warp's other 16-row fragments are 16 rows further. */
template <class T>
static __device__ __forceinline__ igemm_lanes<T, false, false> padded_lanes_of(int warp_m, int warp_n, int lane)
{
    const int pitch = padded<T>::PITCH;
    igemm_lanes<T, false, false> o;
#pragma unroll
    for (int ks = 0; ks < T::BK / 16; ks++) {
        o.a[ks] = 2u * ((warp_m * T::WM + ldsm_a_row(lane)) * pitch + 8 * (2 * ks + ldsm_a_chunk(lane)));
        o.b[ks] = 2u * ((warp_n * T::WN + ldsm_b_row(lane)) * pitch + 8 * (2 * ks + ldsm_b_chunk(lane)));
    }
    return o;
}

/* acc += this warp's WM x BK slice of the staged A times the BK x WN slice of B. Per 16-deep step:
 * MMA_M ldmatrix.x4 for A (one per 16 rows), MMA_N/2 for B (one per 16 columns, two n8 operands), then
 * MMA_M * MMA_N mma.sync. a_tile and b_tile are .shared addresses. */
template <class T>
static __device__ __forceinline__ void padded_warp_tile_mma(uint32_t a_tile, uint32_t b_tile,
                                                            const igemm_lanes<T, false, false> &o,
                                                            float (&acc)[T::MMA_M][T::MMA_N][4])
{
    const int row_bytes = 2 * padded<T>::PITCH;
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
igemm_mma_padded(const conv_problem prob, const __half *__restrict__ x, const __half *__restrict__ w,
                 __half *__restrict__ y)
{
    static_assert(T::THREADS % T::BK == 0 && T::BM % (T::THREADS / T::BK) == 0 && T::BN % (T::THREADS / T::BK) == 0,
                  "each thread stages one column of both tiles, every THREADS/BK-th row");
    __shared__ __align__(16) __half a_tile[T::BM][padded<T>::PITCH]; /* A[m0 + row][k0 + col] */
    __shared__ __align__(16) __half b_tile[T::BN][padded<T>::PITCH]; /* B[k0 + col][j0 + row]: n-major */

    const int rows = igemm_rows(&prob), cols = igemm_cols(&prob), depth = igemm_depth(&prob);
    const int group = blockIdx.y;
    const gemm_block blk = gemm_block_of(blockIdx.x, cols, T::BM, T::BN);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int warp_m = warp % T::WARPS_M, warp_n = warp / T::WARPS_M;

    const igemm_lanes<T, false, false> lanes = padded_lanes_of<T>(warp_m, warp_n, lane);
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
            a_tile[row][col] = from >= 0 ? x[from] : zero;
        }
        for (int row = row_first; row < T::BN; row += row_step) {
            const int j = blk.col0 + row;
            b_tile[row][col] = j < cols && kappa < depth ? w[igemm_b_offset(&prob, group, j, kappa)] : zero;
        }
        __syncthreads();

        padded_warp_tile_mma<T>(a_base, b_base, lanes, acc);
        __syncthreads(); /* before the next stage overwrites the tiles */
    }

    store_fragments<T>(acc, prob, group, blk, warp_m, warp_n, lane, y);
}

extern "C" bool supports_05b(const conv_problem *prob, char *why, size_t why_len)
{
    return grid_fits("05b", prob, shape_05b::BM, shape_05b::BN, why, why_len);
}

extern "C" void launch_05b(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    typedef shape_05b T;
    (void)workspace;
    igemm_mma_padded<T><<<grid_of(prob, T::BM, T::BN), T::THREADS>>>(*prob, (const __half *)x, (const __half *)w,
                                                                      (__half *)y);
    CUDA_CHECK_LAUNCH();
}
