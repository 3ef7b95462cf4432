/* 05a: implicit GEMM on tensor cores through WMMA, the simplest tensor-core version.
 *
 * What it computes (the whole chapter computes the same): fprop, y = x (*) w, fp16 in and out with fp32
 * accumulation, NHWC activations and KRSC filters (the harness converts from NCHW/KCRS), any padding,
 * stride, dilation and groups. Per group it is the GEMM Y[m][j] = sum over kappa of A[m][kappa] * B[kappa][j]
 * (implicit_gemm.h): m an output pixel, j an output channel, kappa = (r, s, c) a filter tap and input
 * channel. A is never built: each block gathers the piece of A it needs straight from x.
 *
 * What this step changes from chapter 04, and why: the multiplications run on the tensor cores, through
 * nvcuda::wmma 16x16x16 fragments (fp16 x fp16 -> fp32), and A is gathered on the fly instead of written
 * out by im2col. A 64x64 block tile, 32 deep per stage, 4 warps as 2 x 2, each 32x32 = 2 x 2 WMMA tiles.
 * Each element is staged with a plain 2-byte load, its address found by dividing m into (n, p, q) and
 * kappa into (r, s, c) (igemm_a_offset()). That works for any C, so it runs conv1 (C = 3) as is.
 */
#include <stdint.h>

#include <cuda_fp16.h>
#include <mma.h>

#include "check.h"
#include "conv.h"
#include "implicit_gemm.h"
#include "steps.cuh"

/* The staged rows are padded by 8 halves: wmma::load_matrix_sync wants a row pitch that is a multiple
 * of 8 halves and 32-byte aligned fragments, and 40 halves (80 bytes) also spreads consecutive rows
 * over different banks. */
enum {
    WMMA_BM = 64,
    WMMA_BN = 64,
    WMMA_BK = 32,
    WMMA_WARPS_M = 2,
    WMMA_WARPS_N = 2,
    WMMA_THREADS = 32 * WMMA_WARPS_M * WMMA_WARPS_N,
    WMMA_PITCH = WMMA_BK + 8,
};

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

/* Every valid problem whose grid fits: its loads are 2 bytes, one element at a time. */
extern "C" bool supports_05a(const conv_problem *prob, char *why, size_t why_len)
{
    return grid_fits("05a", prob, WMMA_BM, WMMA_BN, why, why_len);
}

extern "C" void launch_05a(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    (void)workspace;
    igemm_wmma<<<grid_of(prob, WMMA_BM, WMMA_BN), WMMA_THREADS>>>(*prob, (const __half *)x, (const __half *)w,
                                                                   (__half *)y);
    CUDA_CHECK_LAUNCH();
}
