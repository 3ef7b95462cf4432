/* Chapter 03, step 03b: 03a's staged tile, with register blocking.
 *
 * What it computes: the same fprop as 03a (fp32, NCHW, KCRS, any padding, stride, dilation, filter size
 * and groups), from the same staged input tile and filter slice (tiled.cuh).
 *
 * What changes from 03a: a thread keeps 8 pixels x 8 output channels in registers, so each input value
 * it loads from shared memory serves 8 channels and each tap 8 pixels: per filter tap, 10 shared loads
 * (8 floats, 2 float4) feed 64 FMAs, where 03a needs 2 loads per FMA. That moves the bound from
 * shared-memory bandwidth towards the FMA units. It also stages up to 8 input channels per pair of
 * barriers, and pads the tile rows against bank conflicts.
 *
 * Run:
 *   ./build/conv run 03b --layer resnet50/res2_3x3
 *   ./build/conv list                                   (every kernel, and what each supports)
 */
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "conv.h"
#include "tiled.cuh"
#include "tiling.h"

/* 03b: a warp covers the whole pixel tile, each lane 8 consecutive rows of one column; the 8 warps take
 * 8 output channels each. */
enum {
    B_K_TILE = 64,                              /* output channels per block */
    B_ROWS_PER_THREAD = 8,                      /* a thread's pixels: consecutive rows, one column */
    B_K_PER_THREAD = 8,                         /* a thread's output channels: consecutive ones */
    B_MAX_CHUNK = 8,                            /* input channels staged per pair of barriers, at most */
    B_K_PITCH = B_K_TILE + 4,                   /* floats per filter tap in shared memory; see below */
    B_WARPS = B_K_TILE / B_K_PER_THREAD,
    B_THREADS = 32 * B_WARPS,
};
static_assert(TILE_P * TILE_Q == 32 * B_ROWS_PER_THREAD, "03b: one warp covers the pixel tile");
static_assert(B_K_PER_THREAD % 4 == 0, "03b: a thread reads its taps as float4");

/* How 03b stages its operands for one problem; computed on the host, passed to every block. */
typedef struct {
    int halo_h, halo_w; /* input rows and columns a pixel tile reads */
    int pitch;          /* floats from one staged input row to the next (>= halo_w) */
    int chunk;          /* input channels staged per pair of barriers; 0 when even one does not fit */
} staging_plan;

/* Shared memory layout, `chunk` input channels at a time:
 *   w_tile [chunk][R][S][B_K_PITCH]  the taps, transposed from KCRS so that a thread's 8 output channels
 *                                    of one tap are 32 contiguous bytes: two float4 loads, broadcast to
 *                                    the warp. B_K_PITCH = B_K_TILE + 4 keeps them 16-byte aligned and
 *                                    spreads the transposing stores over 8 banks instead of 1.
 *   x_tile [chunk][halo_h][pitch]    the input tiles; pitch per halo_row_pitch(), so that the two
 *                                    half-warps, reading rows 8*stride_h apart, hit disjoint banks. */
static __global__ void __launch_bounds__(B_THREADS, 2)
conv_tiled_register_blocked(const conv_problem prob, const staging_plan plan, const float *__restrict__ x,
                            const float *__restrict__ w, float *__restrict__ y)
{
    const int taps = prob.r * prob.s;
    float *w_tile = smem;
    float *x_tile = smem + plan.chunk * taps * B_K_PITCH;

    const block_tile t = block_tile_of(blockIdx.x, &prob, TILE_P, TILE_Q, B_K_TILE);
    const int c_per_group = prob.c / prob.groups;
    const int plane = prob.h * prob.w;
    const float *x_group = x + ((int64_t)t.n * prob.c + (int64_t)t.group * c_per_group) * plane;
    const float *w_block = w + (int64_t)t.k_first * c_per_group * taps;
    const int h_first = tap_input_coord(t.p_first, 0, prob.stride_h, prob.pad_h, prob.dil_h);
    const int w_first = tap_input_coord(t.q_first, 0, prob.stride_w, prob.pad_w, prob.dil_w);

    /* Lanes 0-15 own rows 0-7 of the pixel tile, lanes 16-31 rows 8-15, one column each; warp w owns
     * the block's output channels 8w .. 8w+7. A warp's input loads are then two runs of 16 consecutive
     * floats (at stride_w 1), and its tap loads one address for all lanes. */
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int q_mine = lane % TILE_Q;
    const int p_mine = lane / TILE_Q * B_ROWS_PER_THREAD;
    const int k_mine = warp * B_K_PER_THREAD;
    const int row_step = prob.stride_h * plan.pitch; /* staged floats between a thread's output rows */
    const float *x_mine = x_tile + p_mine * row_step + q_mine * prob.stride_w;

    float acc[B_ROWS_PER_THREAD][B_K_PER_THREAD] = {{0.0f}};

    for (int c_first = 0; c_first < c_per_group; c_first += plan.chunk) {
        const int chunk = min(plan.chunk, c_per_group - c_first);

        /* The input tiles, as chunk*halo_h rows of halo_w floats: consecutive threads take consecutive
         * columns, so the global loads coalesce along a row. */
        for (int i = threadIdx.x; i < chunk * plan.halo_h * plan.halo_w; i += B_THREADS) {
            const int row = i / plan.halo_w, col = i % plan.halo_w; /* row runs over (channel, tile row) */
            const int c = row / plan.halo_h;
            const int in_h = h_first + row - c * plan.halo_h, in_w = w_first + col;
            const bool inside = (unsigned)in_h < (unsigned)prob.h && (unsigned)in_w < (unsigned)prob.w;
            x_tile[row * plan.pitch + col] =
                inside ? x_group[(c_first + c) * plane + in_h * prob.w + in_w] : 0.0f;
        }
        /* The taps: each output channel's chunk*R*S taps are contiguous in KCRS, read in order, stored
         * transposed. Past the group's last channel they are zero, as in 03a. */
        const int slice = chunk * taps;
        for (int i = threadIdx.x; i < B_K_TILE * slice; i += B_THREADS) {
            const int k = i / slice, tap = i % slice;
            w_tile[tap * B_K_PITCH + k] =
                k < t.k_count ? w_block[(k * c_per_group + c_first) * taps + tap] : 0.0f;
        }
        __syncthreads();

        /* The staged taps are in (c, r, s) order, so one pointer walks them. */
        const float *w_tap = w_tile + k_mine;
        for (int c = 0; c < chunk; c++) {
            const float *x_c = x_mine + c * plan.halo_h * plan.pitch;
            for (int r = 0; r < prob.r; r++) {
                const float *x_r = x_c + r * prob.dil_h * plan.pitch;
                for (int s = 0; s < prob.s; s++, w_tap += B_K_PITCH) {
                    const float *x_tap = x_r + s * prob.dil_w;
                    float in[B_ROWS_PER_THREAD], tap[B_K_PER_THREAD];
#pragma unroll
                    for (int i = 0; i < B_ROWS_PER_THREAD; i++)
                        in[i] = x_tap[i * row_step];
#pragma unroll
                    for (int j = 0; j < B_K_PER_THREAD; j += 4) {
                        const float4 four = *(const float4 *)(w_tap + j);
                        tap[j] = four.x;
                        tap[j + 1] = four.y;
                        tap[j + 2] = four.z;
                        tap[j + 3] = four.w;
                    }
#pragma unroll
                    for (int i = 0; i < B_ROWS_PER_THREAD; i++)
#pragma unroll
                        for (int j = 0; j < B_K_PER_THREAD; j++)
                            acc[i][j] = fmaf(in[i], tap[j], acc[i][j]);
                }
            }
        }
        __syncthreads(); /* before the next chunk overwrites the tiles */
    }

    const int q = t.q_first + q_mine;
    if (q >= prob.q)
        return;
    const int64_t y_mine =
        (((int64_t)t.n * prob.k + t.k_first + k_mine) * prob.p + t.p_first + p_mine) * prob.q + q;
#pragma unroll
    for (int i = 0; i < B_ROWS_PER_THREAD; i++) {
        if (t.p_first + p_mine + i >= prob.p)
            break;
#pragma unroll
        for (int j = 0; j < B_K_PER_THREAD; j++)
            if (k_mine + j < t.k_count)
                y[y_mine + (j * prob.p + i) * prob.q] = acc[i][j];
    }
}

/* 03b's staging for a problem. channel_bytes gets the shared memory one staged input channel takes (its
 * tile rows at the padded pitch, and its taps for B_K_TILE output channels); the chunk is as many
 * channels as fit in SMEM_LIMIT, up to B_MAX_CHUNK and the group's channels, and 0 when not even one
 * fits. More channels per chunk: fewer barriers, and more loads in flight per staging pass. */
static staging_plan plan_03b(const conv_problem *prob, int64_t *channel_bytes)
{
    const int64_t tap_floats = (int64_t)prob->r * prob->s * B_K_PITCH;
    staging_plan plan = {0, 0, 0, 0};
    *channel_bytes = (int64_t)sizeof(float) * (halo_rows(prob) * halo_cols(prob) + tap_floats);
    if (*channel_bytes > SMEM_LIMIT)
        return plan; /* padding the rows could only add to it */
    plan.halo_h = (int)halo_rows(prob);
    plan.halo_w = (int)halo_cols(prob);
    plan.pitch = halo_row_pitch(plan.halo_w, B_ROWS_PER_THREAD * prob->stride_h);
    *channel_bytes = (int64_t)sizeof(float) * ((int64_t)plan.halo_h * plan.pitch + tap_floats);
    plan.chunk = B_MAX_CHUNK;
    if (plan.chunk > prob->c / prob->groups)
        plan.chunk = prob->c / prob->groups;
    if (plan.chunk > SMEM_LIMIT / *channel_bytes)
        plan.chunk = (int)(SMEM_LIMIT / *channel_bytes);
    return plan;
}

extern "C" bool supports_03b(const conv_problem *prob, char *why, size_t why_len)
{
    int64_t channel_bytes;
    if (plan_03b(prob, &channel_bytes).chunk > 0)
        return true;
    char tile[160];
    describe_tile(prob, tile, sizeof tile);
    snprintf(why, why_len,
             "03b needs %lld bytes of shared memory for one input channel, %s plus %dx%d taps for %d output "
             "channels, over the %d-byte limit",
             (long long)channel_bytes, tile, prob->r, prob->s, B_K_TILE, SMEM_LIMIT);
    return false;
}

extern "C" void launch_03b(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    (void)workspace;
    int64_t channel_bytes;
    const staging_plan plan = plan_03b(prob, &channel_bytes);
    conv_tiled_register_blocked<<<blocks_covering(prob, TILE_P, TILE_Q, B_K_TILE), B_THREADS,
                                  (size_t)(plan.chunk * channel_bytes)>>>(*prob, plan, (const float *)x,
                                                                          (const float *)w, (float *)y);
    CUDA_CHECK_LAUNCH();
}
