/* Chapter 04, step 04a: im2col, then an SGEMM of our own with shared-memory tiles.
 *
 * What it computes: fprop, fp32 NCHW, as Y_g = W_g x A_g per group on chapter 04's im2col buffer
 * (im2col.cu; the GEMM's shapes and launch in sgemm.cuh).
 *
 * How: a block computes 32x32 outputs, one per thread, staging a 32x32 tile of W and of A per step.
 * Each FMA takes two shared-memory loads (one a broadcast): shared memory, not the FMA units, sets the
 * pace, as in 03a.
 *
 * Run:
 *   ./build/conv run 04a --layer resnet50/big_3x3
 */
#include "check.h"
#include "conv.h"
#include "im2col.h"
#include "sgemm.cuh"

static __global__ void __launch_bounds__(SMEM_TILE * SMEM_TILE)
sgemm_smem_tiles(const gemm_shape s, const float *__restrict__ w, const float *__restrict__ a,
                 float *__restrict__ y)
{
    __shared__ float w_tile[SMEM_TILE][SMEM_TILE], a_tile[SMEM_TILE][SMEM_TILE];
    const block_job job = block_job_of(&s, w, a, SMEM_TILE, SMEM_TILE);
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = job.m_first + ty, col = job.n_first + tx;

    /* A warp is one ty: it loads 32 consecutive floats of a row of W and of A, reads w_tile[ty][kk] as
     * one broadcast and a_tile[kk][tx] as 32 consecutive words. Out of range, the tiles hold zeros. */
    float sum = 0.0f;
    for (int k_first = 0; k_first < s.k; k_first += SMEM_TILE) {
        w_tile[ty][tx] = row < s.m && k_first + tx < s.k ? job.w[offset(row, s.k, k_first + tx)] : 0.0f;
        a_tile[ty][tx] = k_first + ty < s.k && col < s.n ? job.a[offset(k_first + ty, s.a_ld, col)] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < SMEM_TILE; kk++)
            sum = fmaf(w_tile[ty][kk], a_tile[kk][tx], sum);
        __syncthreads(); /* before the next stage overwrites the tiles */
    }
    if (row < s.m && col < s.n)
        y_group(&s, y)[offset(row, s.pq, im2col_y_column(col, s.pq, s.k_pq))] = sum;
}

extern "C" bool supports_04a(const conv_problem *prob, char *why, size_t why_len)
{
    return supports_gemm(prob, why, why_len);
}

extern "C" void launch_04a(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    launch_gemm(prob, x, w, y, workspace, sgemm_smem_tiles, dim3(SMEM_TILE, SMEM_TILE), SMEM_TILE, SMEM_TILE);
}
