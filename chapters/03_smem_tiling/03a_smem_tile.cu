/* Chapter 03, step 03a: shared-memory tiling, one output per thread.
 *
 * What it computes: fprop, y = x (*) w, fp32, NCHW activations and KCRS filters, with any padding,
 * stride, dilation, filter size and groups: the sum of chapters 01 and 02.
 *
 * What changes from chapter 02: there, each of the up to R*S*K/groups outputs that use an input value
 * loads it from global memory again, and each filter value is loaded again for every pixel. Here a block
 * owns a tile of outputs (TILE_P x TILE_Q pixels of one image, A_K_TILE output channels of one group),
 * copies what that tile reads into shared memory once per input channel (the input tile with its halo,
 * and the channel's taps for the block's output channels; tiled.cuh), and every thread of the block
 * reads its operands from there. Still one thread per output, as in 02b: the block is 16x16 pixels x 4
 * output channels, so each staged input value serves up to R*S pixels x 4 channels and each staged tap
 * 256 pixels.
 *
 * Run:
 *   ./build/conv run 03a --layer resnet50/res2_3x3
 *   ./build/conv list                                   (every kernel, and what each supports)
 */
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "conv.h"
#include "tiled.cuh"
#include "tiling.h"

/* 03a: one output per thread, so the block is the pixel tile times A_K_TILE output channels. */
enum {
    A_K_TILE = 4,
    A_THREADS = TILE_P * TILE_Q * A_K_TILE,
};

static __global__ void __launch_bounds__(A_THREADS, 2)
conv_tiled_smem(const conv_problem prob, const float *__restrict__ x, const float *__restrict__ w,
                float *__restrict__ y)
{
    const int halo_h = (int)halo_extent(TILE_P, prob.stride_h, prob.r, prob.dil_h);
    const int halo_w = (int)halo_extent(TILE_Q, prob.stride_w, prob.s, prob.dil_w);
    const int taps = prob.r * prob.s;
    float *x_tile = smem;                   /* [halo_h][halo_w]: one input channel */
    float *w_tile = smem + halo_h * halo_w; /* [A_K_TILE][R][S]: its taps for the block's output channels */

    const block_tile t = block_tile_of(blockIdx.x, &prob, TILE_P, TILE_Q, A_K_TILE);
    const int c_per_group = prob.c / prob.groups;
    const int plane = prob.h * prob.w;
    const float *x_group = x + ((int64_t)t.n * prob.c + (int64_t)t.group * c_per_group) * plane;
    const float *w_block = w + (int64_t)t.k_first * c_per_group * taps;
    const int h_first = tap_input_coord(t.p_first, 0, prob.stride_h, prob.pad_h, prob.dil_h);
    const int w_first = tap_input_coord(t.q_first, 0, prob.stride_w, prob.pad_w, prob.dil_w);

    /* threadIdx is (q, p, k) within the tile: a warp is two rows of 16 pixels of one output channel. */
    const int thread = threadIdx.x + TILE_Q * (threadIdx.y + TILE_P * threadIdx.z);
    const float *x_mine = x_tile + threadIdx.y * prob.stride_h * halo_w + threadIdx.x * prob.stride_w;
    const float *w_mine = w_tile + threadIdx.z * taps;

    float sum = 0.0f;
    for (int c = 0; c < c_per_group; c++) {
        const float *x_c = x_group + c * plane;
        for (int i = thread; i < halo_h * halo_w; i += A_THREADS) {
            const int in_h = h_first + i / halo_w, in_w = w_first + i % halo_w;
            const bool inside = (unsigned)in_h < (unsigned)prob.h && (unsigned)in_w < (unsigned)prob.w;
            x_tile[i] = inside ? x_c[in_h * prob.w + in_w] : 0.0f;
        }
        /* Past the group's last output channel the taps are zero: the spare threads compute a 0 that is
         * never stored, and read nothing beyond the filter. */
        for (int i = thread; i < A_K_TILE * taps; i += A_THREADS) {
            const int k = i / taps;
            w_tile[i] = k < t.k_count ? w_block[(k * c_per_group + c) * taps + i % taps] : 0.0f;
        }
        __syncthreads();
        for (int r = 0; r < prob.r; r++)
            for (int s = 0; s < prob.s; s++)
                sum += x_mine[r * prob.dil_h * halo_w + s * prob.dil_w] * w_mine[r * prob.s + s];
        __syncthreads(); /* before the next channel overwrites the tile */
    }

    const int p = t.p_first + threadIdx.y, q = t.q_first + threadIdx.x;
    if (p < prob.p && q < prob.q && (int)threadIdx.z < t.k_count)
        y[(((int64_t)t.n * prob.k + t.k_first + threadIdx.z) * prob.p + p) * prob.q + q] = sum;
}

static int64_t smem_bytes_03a(const conv_problem *prob)
{
    const int64_t tap_floats = (int64_t)A_K_TILE * prob->r * prob->s;
    return (int64_t)sizeof(float) * (halo_rows(prob) * halo_cols(prob) + tap_floats);
}

extern "C" bool supports_03a(const conv_problem *prob, char *why, size_t why_len)
{
    if (smem_bytes_03a(prob) <= SMEM_LIMIT)
        return true;
    char tile[160];
    describe_tile(prob, tile, sizeof tile);
    snprintf(why, why_len,
             "03a needs %lld bytes of shared memory for %s plus %dx%d taps for %d output channels, over the "
             "%d-byte limit",
             (long long)smem_bytes_03a(prob), tile, prob->r, prob->s, A_K_TILE, SMEM_LIMIT);
    return false;
}

extern "C" void launch_03a(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    (void)workspace;
    const dim3 block(TILE_Q, TILE_P, A_K_TILE);
    conv_tiled_smem<<<blocks_covering(prob, TILE_P, TILE_Q, A_K_TILE), block, (size_t)smem_bytes_03a(prob)>>>(
        *prob, (const float *)x, (const float *)w, (float *)y);
    CUDA_CHECK_LAUNCH();
}
