/* tiled.cuh: what chapter 03's two steps share: the pixel tile a block owns, the shared memory a block
 * may use without opting in, and the staged input tile's extent (the index math is in tiling.h).
 *
 * Both steps stage, per input channel, what a block's tile of outputs reads: the input tile plus its
 * halo, halo_extent() rows by columns, zero where it hangs over the image (so padding costs no branch in
 * the inner loop), and the filter slice, that channel's R*S taps for each of the block's output
 * channels. Both size their shared memory at launch from the problem's halo and refuse (supports()) a
 * problem whose staged tile does not fit the 48 KB a block gets without opting in.
 */
#ifndef CH03_TILED_CUH
#define CH03_TILED_CUH

#include <stdint.h>
#include <stdio.h>

#include "conv.h"
#include "tiling.h"

/* Both steps give a block TILE_P x TILE_Q output pixels. */
enum { TILE_P = 16, TILE_Q = 16 };

/* Dynamic shared memory a block may use without cudaFuncSetAttribute. */
enum { SMEM_LIMIT = 48 * 1024 };

/* Both kernels size their shared memory at launch, from the problem's halo. */
extern __shared__ __align__(16) float smem[];

/* The staged input tile, in 64-bit: with a large stride or dilation its extent may overflow an int, and
 * then it certainly does not fit in shared memory. */
static int64_t halo_rows(const conv_problem *prob)
{
    return halo_extent(TILE_P, prob->stride_h, prob->r, prob->dil_h);
}

static int64_t halo_cols(const conv_problem *prob)
{
    return halo_extent(TILE_Q, prob->stride_w, prob->s, prob->dil_w);
}

/* "a 18x18 input tile (16x16 outputs at stride 1x1, 3x3 filter at dilation 1x1)", for refusals. */
static void describe_tile(const conv_problem *prob, char *buf, size_t len)
{
    snprintf(buf, len,
             "a %lldx%lld input tile (%dx%d outputs at stride %dx%d, %dx%d filter at dilation %dx%d)",
             (long long)halo_rows(prob), (long long)halo_cols(prob), TILE_P, TILE_Q, prob->stride_h,
             prob->stride_w, prob->r, prob->s, prob->dil_h, prob->dil_w);
}

#endif
