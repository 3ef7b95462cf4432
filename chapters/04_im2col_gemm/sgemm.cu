/* Chapter 04, part 2: an SGEMM of our own on the im2col buffer, in four steps a reader can run.
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
 * The steps, each its own kernel, each timed beside 04x (the same buffer through cuBLAS):
 *   04a  shared-memory tiles: a block computes 32x32 outputs, one per thread, staging a 32x32 tile of
 *        W and of A per step. Each FMA takes two shared-memory loads (one a broadcast): shared memory,
 *        not the FMA units, sets the pace, as in 03a.
 *   04b  register blocking: a block computes a 64x256 tile, 8 deep per stage; each of its 256 threads
 *        keeps 8x8 outputs in registers and does 64 FMAs per 16 values it reads from shared memory.
 *        Why 64x256 and not the usual 128x128: K/groups is 64 in conv1 and res2_*, where a 128-row
 *        tile would compute zeros half the time.
 *   04c  16-byte accesses for A, the operand that streams from DRAM: one float4 load per 4 pixels
 *        (im2col pads the buffer's rows to a multiple of 4 floats, so every run of 4 from a multiple
 *        of 4 is aligned, whatever N*P*Q is), one float4 store into shared memory, and float4 stores
 *        of y when P*Q is a multiple of 4. Per stage a thread issues 2 loads and 2 stores for A where
 *        04b issued 8 and 8. W stays with scalar loads: its rows, C/groups*R*S long, are often not a
 *        multiple of 4 (147 in conv1), and it is small enough to be served from L1/L2.
 *   04d  double buffering: two shared-memory stages; the next stage's global loads are issued into
 *        registers before the current stage is multiplied, so their latency hides behind 512 FMAs per
 *        thread, and one barrier per stage suffices instead of two.
 * Predictions, not yet measured on a GPU, are in README.md.
 *
 * Run:
 *   ./build/conv run 04d --layer resnet50/big_3x3       (likewise 04a, 04b, 04c, and 04x for cuBLAS)
 *   ./build/conv check 04                               (every step against the reference)
 */
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

/* ---- 04a: shared-memory tiles, one output per thread ----------------------------------------------- */

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

/* ---- 04b: register blocking ------------------------------------------------------------------------ */

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

/* ---- 04c: 16-byte loads and stores ----------------------------------------------------------------- */

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

/* ---- 04d: double buffering ------------------------------------------------------------------------- */

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

/* ---- host side: shapes, supports(), launches, registry --------------------------------------------- */

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

static void launch_04a(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    launch_gemm(prob, x, w, y, workspace, sgemm_smem_tiles, dim3(SMEM_TILE, SMEM_TILE), SMEM_TILE, SMEM_TILE);
}

static void launch_04b(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    launch_gemm(prob, x, w, y, workspace, sgemm_register_blocked, dim3(THREADS), TILE_M, TILE_N);
}

static void launch_04c(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    launch_gemm(prob, x, w, y, workspace, sgemm_vectorized, dim3(THREADS), TILE_M, TILE_N);
}

static void launch_04d(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    launch_gemm(prob, x, w, y, workspace, sgemm_double_buffered, dim3(THREADS), TILE_M, TILE_N);
}

#define SGEMM_SOURCE "chapters/04_im2col_gemm/sgemm.cu"

extern "C" const conv_kernel ch04_kernels[] = {
    {.id = "04a", .name = "im2col + SGEMM, 32x32 smem tiles",
     .source = SGEMM_SOURCE,
     .pass = PASS_FPROP, .dtype = DTYPE_F32, .layout = LAYOUT_NCHW, .device = ON_GPU,
     .supports = supports_gemm, .workspace_bytes = im2col_workspace_bytes, .launch = launch_04a,
     .phase_name = "im2col", .launch_phase = im2col_phase, .launch_fused = NULL, .library = NULL,
     .branches = NULL, .branch_of = NULL, .layers = NULL, .ptx = NULL, .sass = NULL},
    {.id = "04b", .name = "im2col + SGEMM, 64x256 tile, 8x8 per thread",
     .source = SGEMM_SOURCE,
     .pass = PASS_FPROP, .dtype = DTYPE_F32, .layout = LAYOUT_NCHW, .device = ON_GPU,
     .supports = supports_gemm, .workspace_bytes = im2col_workspace_bytes, .launch = launch_04b,
     .phase_name = "im2col", .launch_phase = im2col_phase, .launch_fused = NULL, .library = NULL,
     .branches = NULL, .branch_of = NULL, .layers = NULL, .ptx = NULL, .sass = NULL},
    {.id = "04c", .name = "im2col + SGEMM, 16-byte loads and stores",
     .source = SGEMM_SOURCE,
     .pass = PASS_FPROP, .dtype = DTYPE_F32, .layout = LAYOUT_NCHW, .device = ON_GPU,
     .supports = supports_gemm, .workspace_bytes = im2col_workspace_bytes, .launch = launch_04c,
     .phase_name = "im2col", .launch_phase = im2col_phase, .launch_fused = NULL, .library = NULL,
     .branches = NULL, .branch_of = NULL, .layers = NULL,
     .ptx = "ld\\.global\\.nc\\.v4\\.f32\n"
            "ld\\.shared\\.v4\\.f32\n"
            "st\\.global\\.v4\\.f32\n",
     .sass = NULL},
    {.id = "04d", .name = "im2col + SGEMM, double-buffered stages",
     .source = SGEMM_SOURCE,
     .pass = PASS_FPROP, .dtype = DTYPE_F32, .layout = LAYOUT_NCHW, .device = ON_GPU,
     .supports = supports_gemm, .workspace_bytes = im2col_workspace_bytes, .launch = launch_04d,
     .phase_name = "im2col", .launch_phase = im2col_phase, .launch_fused = NULL, .library = NULL,
     .branches = NULL, .branch_of = NULL, .layers = NULL, .ptx = NULL, .sass = NULL},
    {.id = "04x", .name = "im2col + cuBLAS SGEMM (fp32, no TF32)",
     .source = "chapters/04_im2col_gemm/im2col.cu",
     .pass = PASS_FPROP, .dtype = DTYPE_F32, .layout = LAYOUT_NCHW, .device = ON_GPU,
     .supports = im2col_supports, .workspace_bytes = im2col_workspace_bytes, .launch = launch_04x,
     .phase_name = "im2col", .launch_phase = im2col_phase, .launch_fused = NULL, .library = "cuBLAS",
     .branches = NULL, .branch_of = NULL, .layers = NULL, .ptx = NULL, .sass = NULL},
};
extern "C" const int ch04_kernel_count = sizeof(ch04_kernels) / sizeof(ch04_kernels[0]);
