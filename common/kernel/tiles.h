/* tiles.h: how a grid of blocks covers an output, the index math every tiled chapter shares.
 *
 * Plain C for the cpu tests, and device code under nvcc (HOST_DEVICE, conv.h).
 */
#ifndef TILES_H
#define TILES_H

#include <stdint.h>

#include "conv.h"

/* How many tiles of `tile` it takes to cover `extent`. */
static HOST_DEVICE inline int tiles_covering(int extent, int tile)
{
    return (extent + tile - 1) / tile;
}

/* The input coordinate, along one axis, that filter tap `tap` of output coordinate `out` reads
 * (docs/gemm_view.md, (1)). Outside [0, input size) it reads the zero padding. */
static HOST_DEVICE inline int tap_input_coord(int out, int tap, int stride, int pad, int dil)
{
    return out * stride - pad + tap * dil;
}

/* The input extent, along one axis, that `tile` consecutive outputs read through a filter of `taps`
 * taps: from the first output's first tap to the last output's last tap, (tile-1)*stride +
 * (taps-1)*dil + 1. Inputs in between that no tap reads (stride > dilation) are staged anyway: the tile
 * stays a dense rectangle, addressed by one formula. In 64-bit: with a large stride or dilation it may
 * overflow an int, and then it certainly does not fit in shared memory. */
static HOST_DEVICE inline int64_t halo_extent(int tile, int stride, int taps, int dil)
{
    return (int64_t)(tile - 1) * stride + (int64_t)(taps - 1) * dil + 1;
}

/* The output pixel (n, p, q) behind a flat index over N*P*Q, q fastest: the row order of the fprop GEMM
 * (and of y itself in NCHW within a channel plane, or NHWC across pixels). */
typedef struct {
    int n, p, q;
} output_pixel;

static HOST_DEVICE inline output_pixel output_pixel_of(const conv_problem *prob, int index)
{
    output_pixel px;
    px.q = index % prob->q;
    index /= prob->q;
    px.p = index % prob->p;
    px.n = index / prob->p;
    return px;
}

/* A GEMM-shaped output tiled bm x bn: block `block` starts at row row0 and column col0. The column tile
 * varies fastest, so the few blocks that read the same rows of A (the same input pixels) run at the
 * same time and share them in L2. */
typedef struct {
    int row0, col0;
} gemm_block;

static HOST_DEVICE inline gemm_block gemm_block_of(int block, int cols, int bm, int bn)
{
    const int col_tiles = tiles_covering(cols, bn);
    gemm_block b;
    b.row0 = block / col_tiles * bm;
    b.col0 = block % col_tiles * bn;
    return b;
}

#endif
