/* 04b_register_blocking.cuh: 04b's pieces, which 04c and 04d reuse: the shared-memory stage, where a
 * thread's 8x8 outputs sit in the block tile, a stage's loads, its multiply, and the stores of the
 * outputs. 04b_register_blocking.cu is the kernel built from them.
 */
#ifndef CH04_04B_REGISTER_BLOCKING_CUH
#define CH04_04B_REGISTER_BLOCKING_CUH

#include "sgemm.cuh"

/* The shared-memory stage, TILE_K deep:
 *   w [TILE_K][W_PITCH]  W transposed, so that a thread's 4 consecutive rows at one k are one aligned
 *                        float4. W_PITCH = TILE_M + 4 shifts each k row by 4 banks, which spreads the
 *                        transposing stores of a warp (4 rows x 8 taps) over all 32 banks.
 *   a [TILE_K][TILE_N]   A as it is: its rows already run along k. */
typedef struct {
    float w[TILE_K * W_PITCH];
    float a[TILE_K * TILE_N];
} stage;

typedef struct {
    int ty, tx;
} thread_spot;

static __device__ thread_spot thread_spot_of(void)
{
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    thread_spot t;
    t.ty = warp / WARPS_ALONG_N * 4 + lane / 8;
    t.tx = warp % WARPS_ALONG_N * 8 + lane % 8;
    return t;
}

/* Float e of a W stage (e < TILE_M*TILE_K), zero outside W, and where the stage keeps it. Consecutive e
 * run along a row of W, so a warp reads 4 rows x 8 taps: four whole 32-byte sectors. */
static __device__ float fetch_w(const gemm_shape *s, const block_job *job, int k_first, int e)
{
    const int row = job->m_first + e / TILE_K, col = k_first + e % TILE_K;
    return row < s->m && col < s->k ? job->w[offset(row, s->k, col)] : 0.0f;
}

static __device__ int w_slot(int e)
{
    return e % TILE_K * W_PITCH + e / TILE_K;
}

/* Float e of an A stage (e < TILE_K*TILE_N), zero outside A; the stage keeps it at e. A warp reads 32
 * consecutive pixels. */
static __device__ float fetch_a(const gemm_shape *s, const block_job *job, int k_first, int e)
{
    const int row = k_first + e / TILE_N, col = job->n_first + e % TILE_N;
    return row < s->k && col < s->n ? job->a[offset(row, s->a_ld, col)] : 0.0f;
}

static __device__ void load_stage(const gemm_shape *s, const block_job *job, int k_first, stage *st)
{
#pragma unroll
    for (int i = 0; i < W_LOADS; i++) {
        const int e = threadIdx.x + i * THREADS;
        st->w[w_slot(e)] = fetch_w(s, job, k_first, e);
    }
#pragma unroll
    for (int i = 0; i < A_LOADS; i++) {
        const int e = threadIdx.x + i * THREADS;
        st->a[e] = fetch_a(s, job, k_first, e);
    }
}

/* One stage's TILE_K rank-1 updates of this thread's 8x8 outputs. Each 4x4 square's four values at one
 * k are contiguous and 16-byte aligned: four shared-memory loads of 16 bytes feed 64 FMAs. */
static __device__ void multiply_stage(float acc[THREAD_M][THREAD_N], const stage *st, thread_spot t)
{
#pragma unroll
    for (int kk = 0; kk < TILE_K; kk++) {
        const float *w_k = st->w + kk * W_PITCH + 4 * t.ty, *a_k = st->a + kk * TILE_N + 4 * t.tx;
        const float4 w0 = *(const float4 *)w_k, w1 = *(const float4 *)(w_k + TILE_M / 2);
        const float4 a0 = *(const float4 *)a_k, a1 = *(const float4 *)(a_k + TILE_N / 2);
        const float wv[THREAD_M] = {w0.x, w0.y, w0.z, w0.w, w1.x, w1.y, w1.z, w1.w};
        const float av[THREAD_N] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
#pragma unroll
        for (int i = 0; i < THREAD_M; i++)
#pragma unroll
            for (int j = 0; j < THREAD_N; j++)
                acc[i][j] = fmaf(wv[i], av[j], acc[i][j]);
    }
}

/* Writes this thread's 8x8 outputs: acc[i][j] is row 4*ty + i%4 (+ TILE_M/2 for i >= 4), column
 * 4*tx + j%4 (+ TILE_N/2 for j >= 4). A warp stores 4 rows of 8 x 4 consecutive pixels at a time.
 * `vector` (P*Q % 4 == 0, y aligned): four columns from a multiple of 4 are then consecutive pixels of
 * one image at an aligned address, and all inside n when the first is; one 16-byte store writes them. */
static __device__ void store_outputs(float acc[THREAD_M][THREAD_N], const gemm_shape *s, const block_job *job,
                                     float *y, thread_spot t, bool vector)
{
    y = y_group(s, y);
#pragma unroll
    for (int half_n = 0; half_n < 2; half_n++) {
        const int col = job->n_first + half_n * TILE_N / 2 + 4 * t.tx;
#pragma unroll
        for (int i = 0; i < THREAD_M; i++) {
            const int row = job->m_first + i / 4 * TILE_M / 2 + 4 * t.ty + i % 4;
            if (row >= s->m)
                continue;
            float *y_row = y + offset(row, s->pq, 0);
            const float *out = &acc[i][4 * half_n];
            if (vector) {
                if (col < s->n)
                    *(float4 *)(y_row + im2col_y_column(col, s->pq, s->k_pq)) =
                        make_float4(out[0], out[1], out[2], out[3]);
            } else {
#pragma unroll
                for (int j = 0; j < 4; j++)
                    if (col + j < s->n)
                        y_row[im2col_y_column(col + j, s->pq, s->k_pq)] = out[j];
            }
        }
    }
}

#endif
