/* Chapter 04, step 04b: 04a with register blocking.
 *
 * What it computes: the same GEMM as 04a on the same im2col buffer.
 *
 * What changes from 04a: a block computes a 64x256 tile, 8 deep per stage; each of its 256 threads keeps
 * 8x8 outputs in registers and does 64 FMAs per 16 values it reads from shared memory (the pieces are in
 * 04b_register_blocking.cuh). Why 64x256 and not the usual 128x128: K/groups is 64 in conv1 and
 * res2_*, where a 128-row tile would compute zeros half the time.
 *
 * Run:
 *   ./build/conv run 04b --layer resnet50/big_3x3
 */
#include "check.h"
#include "conv.h"
#include "im2col.h"
#include "sgemm.cuh"
#include "04b_register_blocking.cuh"

static __global__ void __launch_bounds__(THREADS, 2)
sgemm_register_blocked(const gemm_shape s, const float *__restrict__ w, const float *__restrict__ a,
                       float *__restrict__ y)
{
    __shared__ __align__(16) stage st;
    const block_job job = block_job_of(&s, w, a, TILE_M, TILE_N);
    const thread_spot t = thread_spot_of();

    float acc[THREAD_M][THREAD_N] = {{0.0f}};
    for (int k_first = 0; k_first < s.k; k_first += TILE_K) {
        load_stage(&s, &job, k_first, &st);
        __syncthreads();
        multiply_stage(acc, &st, t);
        __syncthreads(); /* before the next stage overwrites this one */
    }
    store_outputs(acc, &s, &job, y, t, false);
}

extern "C" bool supports_04b(const conv_problem *prob, char *why, size_t why_len)
{
    return supports_gemm(prob, why, why_len);
}

extern "C" void launch_04b(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    launch_gemm(prob, x, w, y, workspace, sgemm_register_blocked, dim3(THREADS), TILE_M, TILE_N);
}
