/* sgemm.cuh: what chapter 04's own SGEMM steps (04a-04d, a file each) share: the tile sizes, one
 * group's GEMM and a block's part of it, and the host side (the GEMM's shape, supports(), the launch
 * after the im2col phase).
 *
 * What it computes: fprop, y = x (*) w, fp32, NCHW activations and KCRS filters, with any padding,
 * stride, dilation and groups. im2col.cu lowers x to the matrix A (C*R*S x N*P*Q); then, per group g,
 *
 *   Y_g[m][n] = W_g[m][k] x A_g[k][n],   m = K/groups, n = N*P*Q, k = C/groups*R*S
 *
 * with W_g the group's filters as KCRS stores them, and Y_g written straight into y (NCHW): row i is an
 * output channel, column j a pixel of some image (im2col.h). This is the GEMM view (docs/gemm_view.md),
 * transposed (its M = N*P*Q is our n): with the pixels along the columns, each row of a tile of Y is a
 * run of contiguous floats in y, so the output needs no reordering pass.
 *
 * The steps, a file each, each timed beside 04x (the same buffer through cuBLAS, 04x_cublas.cu):
 * 04a_smem_tiles.cu, 04b_register_blocking.cu (its pieces in 04b_register_blocking.cuh, which 04c and
 * 04d reuse), 04c_16byte_accesses.cu (likewise .cuh), 04d_double_buffered.cu. README.md walks through
 * them; predictions, not yet measured on a GPU, are there too.
 */
#ifndef CH04_SGEMM_CUH
#define CH04_SGEMM_CUH

#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "conv.h"
#include "im2col.h"

/* ---- the tile sizes, all in one place ------------------------------------------------------------ */

/* 04a: a SMEM_TILE x SMEM_TILE block of threads, one output each, SMEM_TILE deep per stage. */
enum { SMEM_TILE = 32 };

/* 04b-04d: a TILE_M x TILE_N block tile, TILE_K deep per stage, THREAD_M x THREAD_N outputs a thread. */
enum {
    TILE_M = 64,                                       /* output channels per block */
    TILE_N = 256,                                      /* pixels per block */
    TILE_K = 8,                                        /* taps (rows of A) per stage */
    THREAD_M = 8,
    THREAD_N = 8,
    THREADS = TILE_M * TILE_N / (THREAD_M * THREAD_N), /* 256 */
    W_PITCH = TILE_M + 4,                              /* floats per row of the transposed W stage */

    /* A thread's outputs sit in the block tile as four 4x4 squares: rows 4*ty and TILE_M/2 + 4*ty,
     * columns 4*tx and TILE_N/2 + 4*tx, each plus 0..3. Reading one k step, the lanes of a warp that
     * need different values then read neighbouring 16-byte words, in different banks (an 8x8 square
     * per thread would put lanes 4 apart on one bank). A warp is a 4 (ty) x 8 (tx) patch of threads,
     * so it reads 4 distinct words of W and 8 of A per load, not 32. */
    THREADS_ALONG_N = TILE_N / THREAD_N,               /* 32 */
    WARPS_ALONG_N = THREADS_ALONG_N / 8,               /* 4 */

    /* Per thread and stage: W_LOADS floats of W; A_LOADS floats (04b) or A_VECS float4s (04c, 04d) of A. */
    W_LOADS = TILE_M * TILE_K / THREADS,               /* 2 */
    A_LOADS = TILE_K * TILE_N / THREADS,               /* 8 */
    A_VECS = A_LOADS / 4,                              /* 2 */
};
static_assert(THREAD_M == 8 && THREAD_N == 8 && TILE_M / THREAD_M == 8, "8 warps of 4x8 threads, 4x4 squares");
static_assert(TILE_M * TILE_K % THREADS == 0 && A_LOADS % 4 == 0, "stages split evenly over the threads");
static_assert(W_PITCH % 4 == 0, "float4 reads of the W stage stay aligned");

/* ---- what every kernel shares ---------------------------------------------------------------------- */

/* One group's GEMM and where its output goes. */
typedef struct {
    int m, n, k;   /* K/groups output channels, N*P*Q pixels, C/groups*R*S taps */
    int a_ld;      /* floats between rows of A: n rounded up to a multiple of 4 (im2col_ld) */
    int pq, k_pq;  /* floats between output channels of y, and between its images */
    bool y_vec;    /* P*Q % 4 == 0 and y 16-byte aligned: 04c and 04d store float4s */
} gemm_shape;

/* The offset of element (row, col) of a row-major matrix with rows `ld` floats apart. Unsigned, since it
 * is never negative: an unsigned 32-bit offset widens to a 64-bit address for free, where a signed one
 * needs a sign extension, and in 04c's main loop the registers to keep the extended values (with
 * signed offsets, nvcc 13.0 spilled there). supports_gemm() keeps every offset below 2^31. */
static __device__ unsigned offset(int row, int ld, int col)
{
    return (unsigned)(row * ld + col);
}

/* The block's group (blockIdx.y), its operands, and its tile's first row and column. Row tiles vary
 * fastest along blockIdx.x, so the blocks that read the same columns of A (for different output
 * channels) run together and share them through L2. */
typedef struct {
    const float *w, *a;
    int m_first, n_first;
} block_job;

static __device__ block_job block_job_of(const gemm_shape *s, const float *w, const float *a, int tile_m,
                                         int tile_n)
{
    const int g = blockIdx.y, row_tiles = (s->m + tile_m - 1) / tile_m;
    block_job job;
    job.w = w + offset(g * s->m, s->k, 0);
    job.a = a + offset(g * s->k, s->a_ld, 0);
    job.m_first = blockIdx.x % row_tiles * tile_m;
    job.n_first = blockIdx.x / row_tiles * tile_n;
    return job;
}

/* The group's output channels in y: row i of Y_g starts at y_group(...) + i*P*Q. Formed only when the
 * outputs are written, so no register holds it through the main loop. */
static __device__ float *y_group(const gemm_shape *s, float *y)
{
    return y + offset(blockIdx.y * s->m, s->pq, 0);
}

static gemm_shape shape_of(const conv_problem *prob, const void *y)
{
    gemm_shape s;
    s.m = prob->k / prob->groups;
    s.n = (int)im2col_cols(prob);
    s.k = prob->c / prob->groups * prob->r * prob->s;
    s.a_ld = (int)im2col_ld(prob);
    s.pq = prob->p * prob->q;
    s.k_pq = prob->k * s.pq;
    s.y_vec = s.pq % 4 == 0 && (uintptr_t)y % 16 == 0;
    return s;
}

/* The buffer's limits (im2col_supports), and the grid's: the group is blockIdx.y, and a tile that
 * hangs over the edge of the matrix must not overflow an int in its last index. */
static bool supports_gemm(const conv_problem *prob, char *why, size_t why_len)
{
    if (!im2col_supports(prob, why, why_len))
        return false;
    if (prob->groups > 65535) {
        snprintf(why, why_len, "the GEMM grid puts the group in blockIdx.y, at most 65535: got %d groups",
                 prob->groups);
        return false;
    }
    const int64_t extent = im2col_ld(prob) > im2col_rows(prob) ? im2col_ld(prob) : im2col_rows(prob);
    if (extent > INT32_MAX - TILE_N) {
        snprintf(why, why_len, "a GEMM extent of %lld plus a %d-wide tile overflows 32-bit indices",
                 (long long)extent, TILE_N);
        return false;
    }
    return true;
}

typedef void (*gemm_kernel)(gemm_shape, const float *, const float *, float *);

/* im2col, then one GEMM launch for every group at once. The 16-byte loads of A rely on the workspace
 * being 16-byte aligned, as every cudaMalloc is. */
static void launch_gemm(const conv_problem *prob, void *x, void *w, void *y, void *workspace, gemm_kernel kernel,
                        dim3 block, int tile_m, int tile_n)
{
    if ((uintptr_t)workspace % 16 != 0)
        fail("chapter 04: the im2col workspace must be 16-byte aligned");
    im2col_phase(prob, x, w, y, workspace);
    const gemm_shape s = shape_of(prob, y);
    const int64_t tiles = (int64_t)((s.m + tile_m - 1) / tile_m) * ((s.n + tile_n - 1) / tile_n);
    kernel<<<dim3((unsigned)tiles, (unsigned)prob->groups), block>>>(s, (const float *)w, (const float *)workspace,
                                                                    (float *)y);
    CUDA_CHECK_LAUNCH();
}

#endif
