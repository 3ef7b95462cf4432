/* Chapter 04, step 04c: 04b with 16-byte accesses.
 *
 * What it computes: the same GEMM as 04b, with 04b's stage, tile and stores (04b_register_blocking.cuh).
 *
 * What changes from 04b: 16-byte accesses for A, the operand that streams from DRAM: one float4 load
 * per 4 pixels (im2col pads the buffer's rows to a multiple of 4 floats, so every run of 4 from a
 * multiple of 4 is aligned, whatever N*P*Q is), one float4 store into shared memory, and float4 stores
 * of y when P*Q is a multiple of 4. Per stage a thread issues 2 loads and 2 stores for A where 04b
 * issued 8 and 8. W stays with scalar loads: its rows, C/groups*R*S long, are often not a multiple of 4
 * (147 in conv1), and it is small enough to be served from L1/L2. The pieces are in
 * 04c_16byte_accesses.cuh.
 *
 * Run:
 *   ./build/conv run 04c --layer resnet50/big_3x3
 */
#include "check.h"
#include "conv.h"
#include "im2col.h"
#include "sgemm.cuh"
#include "04b_register_blocking.cuh"
#include "04c_16byte_accesses.cuh"

static __global__ void __launch_bounds__(THREADS, 2)
sgemm_vectorized(const gemm_shape s, const float *__restrict__ w, const float *__restrict__ a,
                 float *__restrict__ y)
{
    __shared__ __align__(16) stage st;
    const block_job job = block_job_of(&s, w, a, TILE_M, TILE_N);
    const thread_spot t = thread_spot_of();

    float acc[THREAD_M][THREAD_N] = {{0.0f}};
    for (int k_first = 0; k_first < s.k; k_first += TILE_K) {
        const stage_regs regs = fetch_stage(&s, &job, k_first);
        stash_stage(&regs, &st);
        __syncthreads();
        multiply_stage(acc, &st, t);
        __syncthreads(); /* before the next stage overwrites this one */
    }
    store_outputs(acc, &s, &job, y, t, s.y_vec);
}

extern "C" bool supports_04c(const conv_problem *prob, char *why, size_t why_len)
{
    return supports_gemm(prob, why, why_len);
}

extern "C" void launch_04c(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    launch_gemm(prob, x, w, y, workspace, sgemm_vectorized, dim3(THREADS), TILE_M, TILE_N);
}
