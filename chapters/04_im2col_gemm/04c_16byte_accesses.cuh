/* 04c_16byte_accesses.cuh: 04c's pieces, which 04d reuses: a float4 of A, and a stage fetched into
 * registers and stored into shared memory in 16-byte pieces. 04c_16byte_accesses.cu is the kernel.
 */
#ifndef CH04_04C_16BYTE_ACCESSES_CUH
#define CH04_04C_16BYTE_ACCESSES_CUH

#include "04b_register_blocking.cuh"

/* Float4 e of an A stage (e < TILE_K*TILE_N/4), zero outside A; the stage keeps it at floats 4e..4e+3.
 * Always one 16-byte load: rows of the buffer start 16-byte aligned (im2col_ld), columns go in fours
 * from a multiple of 4, and the padding past n holds zeros, so a run that starts inside n may end
 * past it. A warp reads 512 contiguous bytes. */
static __device__ float4 fetch_a4(const gemm_shape *s, const block_job *job, int k_first, int e)
{
    const int row = k_first + e / (TILE_N / 4), col = job->n_first + e % (TILE_N / 4) * 4;
    return row < s->k && col < s->n ? *(const float4 *)(job->a + offset(row, s->a_ld, col))
                                    : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}

/* A stage in registers, between its global loads and its shared-memory stores. */
typedef struct {
    float w[W_LOADS];
    float4 a[A_VECS];
} stage_regs;

static __device__ stage_regs fetch_stage(const gemm_shape *s, const block_job *job, int k_first)
{
    stage_regs regs;
#pragma unroll
    for (int i = 0; i < W_LOADS; i++)
        regs.w[i] = fetch_w(s, job, k_first, threadIdx.x + i * THREADS);
#pragma unroll
    for (int i = 0; i < A_VECS; i++)
        regs.a[i] = fetch_a4(s, job, k_first, threadIdx.x + i * THREADS);
    return regs;
}

static __device__ void stash_stage(const stage_regs *regs, stage *st)
{
#pragma unroll
    for (int i = 0; i < W_LOADS; i++)
        st->w[w_slot(threadIdx.x + i * THREADS)] = regs->w[i];
#pragma unroll
    for (int i = 0; i < A_VECS; i++)
        ((float4 *)st->a)[threadIdx.x + i * THREADS] = regs->a[i];
}

#endif
