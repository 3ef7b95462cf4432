/* Chapter 04, step 04d: 04c with double buffering.
 *
 * What it computes: the same GEMM as 04c, with 04c's stage fetches (04c_16byte_accesses.cuh).
 *
 * What changes from 04c: two shared-memory stages; the next stage's global loads are issued into
 * registers before the current stage is multiplied, so their latency hides behind 512 FMAs per thread,
 * and one barrier per stage suffices instead of two.
 *
 * Run:
 *   ./build/conv run 04d --layer resnet50/big_3x3
 */
#include "check.h"
#include "conv.h"
#include "im2col.h"
#include "sgemm.cuh"
#include "04b_register_blocking.cuh"
#include "04c_16byte_accesses.cuh"

/* Stage i+1 is fetched into registers before stage i is multiplied, and stored into the other buffer
 * after it. One barrier per stage is enough: the buffer written during stage i was last read during
 * stage i-1, which every thread finished before the barrier that ended it. The last iteration fetches
 * a stage wholly past k, which the edge guards turn into zeros without touching memory, into a buffer
 * nobody reads again: so the loop needs no branch, and nvcc issues the loads early in the FMAs. */
static __global__ void __launch_bounds__(THREADS, 2)
sgemm_double_buffered(const gemm_shape s, const float *__restrict__ w, const float *__restrict__ a,
                      float *__restrict__ y)
{
    __shared__ __align__(16) stage st[2];
    const block_job job = block_job_of(&s, w, a, TILE_M, TILE_N);
    const thread_spot t = thread_spot_of();
    const int stages = (s.k + TILE_K - 1) / TILE_K;

    stage_regs regs = fetch_stage(&s, &job, 0);
    stash_stage(&regs, &st[0]);
    __syncthreads();

    float acc[THREAD_M][THREAD_N] = {{0.0f}};
    for (int i = 0; i < stages; i++) {
        regs = fetch_stage(&s, &job, (i + 1) * TILE_K);
        multiply_stage(acc, &st[i % 2], t);
        stash_stage(&regs, &st[(i + 1) % 2]);
        __syncthreads();
    }
    store_outputs(acc, &s, &job, y, t, s.y_vec);
}

extern "C" bool supports_04d(const conv_problem *prob, char *why, size_t why_len)
{
    return supports_gemm(prob, why, why_len);
}

extern "C" void launch_04d(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    launch_gemm(prob, x, w, y, workspace, sgemm_double_buffered, dim3(THREADS), TILE_M, TILE_N);
}
