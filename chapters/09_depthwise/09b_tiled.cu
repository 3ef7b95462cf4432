/* Chapter 09, step 09b: depthwise convolution from a shared-memory tile, with a rolling window.
 *
 * What it computes: the same depthwise fprop as 09a (fp16 NHWC, KRSC, fp32 accumulation, any padding,
 * stride and dilation), with the same vectors of 8 channels (depthwise.cuh).
 *
 * What changes from 09a: a block stages a tile of input pixels, halo included, for a run of 32 channels
 * in shared memory with cp.async (its zero-fill is the padding), and the run's taps transposed to fp32.
 * Each thread computes a vertical strip of output rows for 8 channels. For 3x3 and 5x5 at stride 1 and 2
 * (dilation 1) a specialization slides a window down the strip: every staged vector it loads is
 * converted once and feeds all the outputs that read it. Other shapes take a general loop.
 *
 * Run:
 *   ./build/conv run 09b --layer mobilenet/dw144_56
 */
#include <stdint.h>
#include <stdio.h>

#include <cuda_fp16.h>

#include "check.h"
#include "conv.h"
#include "depthwise.cuh"
#include "depthwise.h"

/* ---- 09b: a tile and its halo in shared memory, a rolling window in registers --------------------- */

/* The block of depthwise.h: DW_RUN channels x DW_TILE_Q columns x DW_STRIPS strips of M rows. */
enum {
    B_VECS = DW_RUN / DW_VEC,
    B_THREADS = B_VECS * DW_TILE_Q * DW_STRIPS,
    B_MIN_BLOCKS = 4, /* blocks per SM the register budget is built for (at most 128 registers) */
};
static_assert(B_THREADS == 128, "09b: four warps");

/* How 09b stages one problem; computed on the host, passed to every block. */
typedef struct {
    int tile_p;         /* output rows per tile: DW_STRIPS * rows per thread */
    int halo_h, halo_w; /* input rows and columns the tile reads */
} dw_plan;

extern __shared__ __align__(16) unsigned char dw_smem[];

/* 16-byte copy global -> shared that bypasses L1 (cp.async.cg, sm_80+). src_bytes = 0 reads nothing and
 * writes 16 zero bytes: that is how the padding gets into the tile. src must still be a valid address. */
static __device__ __forceinline__ void cp_async_16(void *smem_dst, const void *gmem_src, int src_bytes)
{
    const unsigned dst = (unsigned)__cvta_generic_to_shared(smem_dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem_src), "r"(src_bytes)
                 : "memory");
}

static __device__ __forceinline__ void cp_async_wait_all(void)
{
    asm volatile("cp.async.wait_all;\n" ::: "memory");
}

/* The 8 fp32 taps of the thread's vector for one filter tap, from the staged [R*S][DW_W_PITCH] floats. */
static __device__ __forceinline__ void load_taps(const float *w_tap, float out[DW_VEC])
{
    const float4 a = *(const float4 *)w_tap, b = *(const float4 *)(w_tap + 4);
    out[0] = a.x, out[1] = a.y, out[2] = a.z, out[3] = a.w;
    out[4] = b.x, out[5] = b.y, out[6] = b.z, out[7] = b.w;
}

/* R, S, STRIDE > 0: a specialization with dilation 1 and stride STRIDE in both axes; 0: the general
 * kernel, which reads them from prob. M: output rows per thread. */
template <int R, int S, int STRIDE, int M>
static __global__ void __launch_bounds__(B_THREADS, B_MIN_BLOCKS)
dw_tiled(const conv_problem prob, const dw_plan plan, const __half *__restrict__ x,
         const __half *__restrict__ w, __half *__restrict__ y)
{
    constexpr bool special = R > 0;
    constexpr int TILE_P = DW_STRIPS * M;
    /* Specialized, these fold to constants; the index math below is the same either way. */
    const int taps_r = special ? R : prob.r, taps_s = special ? S : prob.s;
    const int halo_w = special ? (int)halo_extent(DW_TILE_Q, STRIDE, S, 1) : plan.halo_w;
    const int halo_h = special ? (int)halo_extent(TILE_P, STRIDE, R, 1) : plan.halo_h;
    const int halo_pixels = halo_h * halo_w;
    const int taps = taps_r * taps_s;

    /* Shared memory: w_tile [R*S][DW_W_PITCH] fp32, then x_tile [halo_h][halo_w][DW_RUN] fp16. */
    float *w_tile = (float *)dw_smem;
    __half *x_tile = (__half *)(dw_smem + (size_t)taps * DW_W_PITCH * sizeof(float));

    const dw_tile t = dw_tile_of(blockIdx.x, &prob, TILE_P, DW_TILE_Q, DW_RUN);
    const int vecs = t.c_count / DW_VEC; /* vectors of this run: B_VECS, fewer in a short last run */

    /* 1. The input tile: one cp.async per 16-byte vector, all in flight at once; zero-filled where the
     *    tile hangs over the image. Consecutive threads copy consecutive items (dw_stage_item_of()): a
     *    warp reads whole 64-byte pixels of x, and the tile holds the items in order, item i at
     *    x_tile + 8*i. A thread's items all have the same vector (128 is a multiple of 4). */
    static_assert(B_THREADS % B_VECS == 0, "09b: a thread stages one vector of each of its pixels");
    if ((int)threadIdx.x % B_VECS < vecs) /* past the run's last channel: nothing to copy, never read */
        for (int item = threadIdx.x; item < halo_pixels * B_VECS; item += B_THREADS) {
            const int from = dw_stage_source(&prob, &t, dw_stage_item_of(item, halo_w, B_VECS));
            cp_async_16(x_tile + item * DW_VEC, x + (from >= 0 ? from : 0), from >= 0 ? 16 : 0);
        }
    /* 2. The run's taps, converted to fp32 and transposed to tap-major while the copies fly: the
     *    run's c_count * R*S taps are contiguous in [C][R][S], read in order. */
    for (int i = threadIdx.x; i < t.c_count * taps; i += B_THREADS)
        w_tile[i % taps * DW_W_PITCH + i / taps] = __half2float(w[t.c_first * taps + i]);
    cp_async_wait_all();
    __syncthreads();

    /* 3. Each thread: one vector, one column, a strip of M rows. Threads past the output's edge or past
     *    the run's channels have nothing to compute (no barrier follows). */
    const dw_thread d = dw_thread_of(threadIdx.x, B_VECS, DW_TILE_Q, M);
    if (d.vec >= vecs || t.q_first + d.q >= prob.q || t.p_first + d.p >= prob.p)
        return;
    const float *w_mine = w_tile + d.vec * DW_VEC;
    float acc[M][DW_VEC];
#pragma unroll
    for (int m = 0; m < M; m++)
#pragma unroll
        for (int j = 0; j < DW_VEC; j++)
            acc[m][j] = 0.0f;

    if constexpr (special) {
        /* The rolling window, column by column: for filter column s, the R taps in registers, then
         * window rows i = 0 .. (M-1)*STRIDE + R-1 of tile column q*STRIDE + s, each loaded and
         * converted once and added into every output row it feeds (dw_window_output(): constant after
         * unrolling, so the tests below vanish and acc stays in registers). */
        constexpr int WINDOW = (M - 1) * STRIDE + R;
        const __half *x_mine = x_tile + (tap_input_coord(d.p, 0, STRIDE, 0, 1) * halo_w +
                                         tap_input_coord(d.q, 0, STRIDE, 0, 1)) * DW_RUN + d.vec * DW_VEC;
#pragma unroll
        for (int s = 0; s < S; s++) {
            float tap[R][DW_VEC];
#pragma unroll
            for (int r = 0; r < R; r++)
                load_taps(w_mine + (r * S + s) * DW_W_PITCH, tap[r]);
#pragma unroll
            for (int i = 0; i < WINDOW; i++) {
                float in[DW_VEC];
                unpack8(*(const uint4 *)(x_mine + (i * halo_w + s) * DW_RUN), in);
#pragma unroll
                for (int r = 0; r < R; r++) {
                    const int m = dw_window_output(i, r, STRIDE, M);
                    if (m >= 0)
#pragma unroll
                        for (int j = 0; j < DW_VEC; j++)
                            acc[m][j] = fmaf(in[j], tap[r][j], acc[m][j]);
                }
            }
        }
    } else {
        /* The general loop: per tap, its 8 fp32 taps, then one staged vector per output row. */
        for (int r = 0; r < taps_r; r++)
            for (int s = 0; s < taps_s; s++) {
                float tap[DW_VEC];
                load_taps(w_mine + (r * taps_s + s) * DW_W_PITCH, tap);
                const int row = tap_input_coord(d.p, r, prob.stride_h, 0, prob.dil_h);
                const int col = tap_input_coord(d.q, s, prob.stride_w, 0, prob.dil_w);
                const __half *x_tap = x_tile + (row * halo_w + col) * DW_RUN + d.vec * DW_VEC;
#pragma unroll
                for (int m = 0; m < M; m++) {
                    float in[DW_VEC];
                    unpack8(*(const uint4 *)(x_tap + m * prob.stride_h * halo_w * DW_RUN), in);
#pragma unroll
                    for (int j = 0; j < DW_VEC; j++)
                        acc[m][j] = fmaf(in[j], tap[j], acc[m][j]);
                }
            }
    }

    /* 4. The strip's rows that lie inside the output, one 16-byte store each. */
    const int q = t.q_first + d.q, c = t.c_first + d.vec * DW_VEC;
#pragma unroll
    for (int m = 0; m < M; m++) {
        const int p = t.p_first + d.p + m;
        if (p < prob.p)
            *(uint4 *)(y + dw_y_offset(&prob, t.n, p, q, c)) = pack8(acc[m]);
    }
}

/* 09b's tile for a problem (tile_p = 0 when it does not fit in DW_SMEM_LIMIT). */
static dw_plan plan_09b(const conv_problem *prob)
{
    const int rows = dw_plan_rows(prob, DW_SMEM_LIMIT);
    dw_plan plan = {DW_STRIPS * rows, 0, 0};
    if (rows > 0) {
        plan.halo_h = (int)halo_extent(plan.tile_p, prob->stride_h, prob->r, prob->dil_h);
        plan.halo_w = (int)halo_extent(DW_TILE_Q, prob->stride_w, prob->s, prob->dil_w);
    }
    return plan;
}

extern "C" bool supports_09b(const conv_problem *prob, char *why, size_t why_len)
{
    if (!supports_vectors("09b", prob, why, why_len))
        return false;
    if (plan_09b(prob).tile_p > 0)
        return true;
    snprintf(why, why_len,
             "09b needs %lld bytes of shared memory even for its smallest tile, %lldx%lld input pixels of "
             "%d channels (%dx%d outputs at stride %dx%d, %dx%d filter at dilation %dx%d) plus the taps, "
             "over the %d-byte limit",
             (long long)dw_tile_smem_bytes(prob, 1),
             (long long)halo_extent(DW_STRIPS, prob->stride_h, prob->r, prob->dil_h),
             (long long)halo_extent(DW_TILE_Q, prob->stride_w, prob->s, prob->dil_w), DW_RUN, DW_STRIPS,
             DW_TILE_Q, prob->stride_h, prob->stride_w, prob->r, prob->s, prob->dil_h, prob->dil_w,
             DW_SMEM_LIMIT);
    return false;
}

/* One instantiation's launch. The grid is planned for plan->tile_p rows per tile; the kernel's M must
 * match, or the blocks would not cover the output. */
template <int R, int S, int STRIDE, int M>
static void launch_tiled(const conv_problem *prob, const dw_plan *plan, void *x, void *w, void *y)
{
    if (plan->tile_p != DW_STRIPS * M)
        fail("09b: planned %d-row tiles for a kernel of %d-row tiles", plan->tile_p, DW_STRIPS * M);
    const size_t smem = (size_t)dw_tile_smem_bytes(prob, M);
    dw_tiled<R, S, STRIDE, M><<<dw_blocks_covering(prob, plan->tile_p, DW_TILE_Q, DW_RUN), B_THREADS, smem>>>(
        *prob, *plan, (const __half *)x, (const __half *)w, (__half *)y);
}

/* The kernels 09b launches: the four specializations, and the general kernel at the rows per thread its
 * tile fits at. The registry lists them by name; `conv check` sees each taken by a fixed shape. */
enum { B_3X3_S1, B_3X3_S2, B_5X5_S1, B_5X5_S2, B_GENERAL_4_ROWS, B_GENERAL_2_ROWS, B_GENERAL_1_ROW };
extern "C" const char *const branches_09b[] = {"3x3 stride 1",         "3x3 stride 2",         "5x5 stride 1",
                                           "5x5 stride 2",         "general, 4 rows a thread", "general, 2 rows a thread",
                                           "general, 1 row a thread", NULL};

extern "C" int branch_09b(const conv_problem *prob)
{
    switch (dw_variant_of(prob)) {
    case DW_3X3_S1: return B_3X3_S1;
    case DW_3X3_S2: return B_3X3_S2;
    case DW_5X5_S1: return B_5X5_S1;
    case DW_5X5_S2: return B_5X5_S2;
    case DW_GENERAL: break;
    }
    const int rows = dw_plan_rows(prob, DW_SMEM_LIMIT);
    return rows == 4 ? B_GENERAL_4_ROWS : rows == 2 ? B_GENERAL_2_ROWS : B_GENERAL_1_ROW;
}

extern "C" void launch_09b(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    (void)workspace;
    const dw_plan plan = plan_09b(prob);
    switch (branch_09b(prob)) {
    case B_3X3_S1: launch_tiled<3, 3, 1, 8>(prob, &plan, x, w, y); break;
    case B_3X3_S2: launch_tiled<3, 3, 2, 4>(prob, &plan, x, w, y); break;
    case B_5X5_S1: launch_tiled<5, 5, 1, 8>(prob, &plan, x, w, y); break;
    case B_5X5_S2: launch_tiled<5, 5, 2, 4>(prob, &plan, x, w, y); break;
    case B_GENERAL_4_ROWS: launch_tiled<0, 0, 0, 4>(prob, &plan, x, w, y); break;
    case B_GENERAL_2_ROWS: launch_tiled<0, 0, 0, 2>(prob, &plan, x, w, y); break;
    case B_GENERAL_1_ROW: launch_tiled<0, 0, 0, 1>(prob, &plan, x, w, y); break;
    }
    CUDA_CHECK_LAUNCH();
}
