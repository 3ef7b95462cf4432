/* tiling.h: the index math of chapter 03's tiled kernels, apart from the kernels so the CPU tests can
 * check it against brute force. The kernels and their launch code call exactly these functions.
 *
 * Plain C: a C11 test includes it as is; under nvcc the same functions also compile for the device
 * (HOST_DEVICE, common/kernel/conv.h).
 */
#ifndef TILING_H
#define TILING_H

#include "conv.h"
#include "tiles.h" /* tiles_covering, tap_input_coord, halo_extent */

#define TILING_FN static HOST_DEVICE inline

/* Row pitch, in floats, of a staged input tile whose rows are halo_w floats wide. In 03b the two
 * half-warps read tile rows `rows_apart` apart, each sixteen consecutive floats (at stride_w 1). They
 * fall on disjoint halves of the 32 banks when rows_apart * pitch = 16 (mod 32); this returns the
 * smallest such pitch >= halo_w, or halo_w when none exists (rows_apart a multiple of 4). The search
 * is exhaustive: rows_apart * pitch mod 32 repeats with period 32 in pitch. */
TILING_FN int halo_row_pitch(int halo_w, int rows_apart)
{
    for (int pitch = halo_w; pitch < halo_w + 32; pitch++)
        if (rows_apart * pitch % 32 == 16)
            return pitch;
    return halo_w;
}

/* The outputs one block computes: image n; output channels [k_first, k_first + k_count), all in group
 * `group`; pixels from (p_first, q_first), a tile that may hang over the bottom and right edges of the
 * output (those pixels are computed from zeros and never stored). */
typedef struct {
    int n, group, k_first, k_count, p_first, q_first;
} block_tile;

/* Number of blocks that cover a problem with tiles of tile_p x tile_q pixels and k_tile channels.
 * Channel tiles never straddle a group, so each block reads one group's input channels only. It stays
 * below 2^31: every block owns at least one of the N*K*P*Q outputs. */
TILING_FN int blocks_covering(const conv_problem *prob, int tile_p, int tile_q, int k_tile)
{
    const int k_tiles_per_group = tiles_covering(prob->k / prob->groups, k_tile);
    return prob->n * prob->groups * k_tiles_per_group * tiles_covering(prob->p, tile_p) *
           tiles_covering(prob->q, tile_q);
}

/* Block `block` of blocks_covering(): the spatial tile varies fastest, then the channel tile, then the
 * group, then the image, so the blocks in flight at one time read the same image (and share it in L2). */
TILING_FN block_tile block_tile_of(int block, const conv_problem *prob, int tile_p, int tile_q, int k_tile)
{
    const int k_per_group = prob->k / prob->groups;
    const int k_tiles_per_group = tiles_covering(k_per_group, k_tile);
    const int tiles_q = tiles_covering(prob->q, tile_q);
    const int tiles_p = tiles_covering(prob->p, tile_p);
    block_tile t;
    t.q_first = block % tiles_q * tile_q;
    block /= tiles_q;
    t.p_first = block % tiles_p * tile_p;
    block /= tiles_p;
    const int k_tile_in_group = block % k_tiles_per_group;
    block /= k_tiles_per_group;
    t.group = block % prob->groups;
    t.n = block / prob->groups;
    const int k_skipped = k_tile_in_group * k_tile;
    t.k_first = t.group * k_per_group + k_skipped;
    t.k_count = k_per_group - k_skipped < k_tile ? k_per_group - k_skipped : k_tile;
    return t;
}

#undef TILING_FN

#endif
