/* Chapter 03's index math (chapters/03_smem_tiling/tiling.h, and common/kernel/tiles.h which chapters 05-09 use
 * too), on the host, against brute force:
 * the halo extent is exactly the span the taps read, the row pitch avoids the bank conflict it is
 * meant to, and the blocks cover every output exactly once without a channel tile straddling a group. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "test_util.h"
#include "tiling.h"

static void check_halo(void)
{
    for (int tile = 1; tile <= 17; tile++)
        for (int stride = 1; stride <= 3; stride++)
            for (int taps = 1; taps <= 7; taps++)
                for (int dil = 1; dil <= 3; dil++) {
                    int lowest = 1 << 30, highest = -(1 << 30);
                    for (int out = 0; out < tile; out++)
                        for (int tap = 0; tap < taps; tap++) {
                            int at = tap_input_coord(out, tap, stride, 0, dil);
                            lowest = at < lowest ? at : lowest;
                            highest = at > highest ? at : highest;
                        }
                    EXPECT(halo_extent(tile, stride, taps, dil) == highest - lowest + 1,
                           "tile %d stride %d taps %d dil %d: %lld vs %d", tile, stride, taps, dil,
                           (long long)halo_extent(tile, stride, taps, dil), highest - lowest + 1);
                }
    EXPECT(tap_input_coord(3, 2, 2, 1, 2) == 3 * 2 - 1 + 2 * 2, "p*stride - pad + r*dil");
    for (int extent = 1; extent < 100; extent++)
        for (int tile = 1; tile < 20; tile++) {
            int tiles = tiles_covering(extent, tile);
            EXPECT(tiles * tile >= extent && (tiles - 1) * tile < extent, "tiles_covering(%d, %d)", extent, tile);
        }
}

static void check_pitch(void)
{
    for (int halo_w = 1; halo_w <= 80; halo_w++)
        for (int rows_apart = 1; rows_apart <= 12; rows_apart++) {
            int pitch = halo_row_pitch(halo_w, rows_apart);
            int smallest = -1;
            for (int candidate = halo_w; candidate < halo_w + 64 && smallest < 0; candidate++)
                if (rows_apart * candidate % 32 == 16)
                    smallest = candidate;
            EXPECT(pitch == (smallest >= 0 ? smallest : halo_w), "halo_w %d rows_apart %d: pitch %d, expected %d",
                   halo_w, rows_apart, pitch, smallest >= 0 ? smallest : halo_w);
        }
}

static void check_cover(const conv_problem *prob, int tile_p, int tile_q, int k_tile)
{
    size_t outputs = (size_t)problem_y_elems(prob);
    unsigned char *seen = calloc(outputs, 1);
    int blocks = blocks_covering(prob, tile_p, tile_q, k_tile), bad = 0;
    int k_per_group = prob->k / prob->groups;
    for (int b = 0; b < blocks; b++) {
        block_tile t = block_tile_of(b, prob, tile_p, tile_q, k_tile);
        bad += t.k_count < 1 || t.k_count > k_tile || t.group != t.k_first / k_per_group ||
               (t.k_first + t.k_count - 1) / k_per_group != t.group || t.n >= prob->n;
        for (int k = t.k_first; k < t.k_first + t.k_count; k++)
            for (int p = t.p_first; p < t.p_first + tile_p && p < prob->p; p++)
                for (int q = t.q_first; q < t.q_first + tile_q && q < prob->q; q++)
                    seen[(((size_t)t.n * prob->k + k) * prob->p + p) * prob->q + q]++;
    }
    size_t wrong = 0;
    for (size_t i = 0; i < outputs; i++)
        wrong += seen[i] != 1;
    char text[128];
    problem_format(prob, text, sizeof text);
    EXPECT(bad == 0 && wrong == 0, "%s tiles %dx%dx%d: %d bad blocks, %zu outputs not covered exactly once", text,
           tile_p, tile_q, k_tile, bad, wrong);
    free(seen);
}

int main(void)
{
    check_halo();
    check_pitch();
    for (int i = 0; i < check_fixed_count(); i++) {
        conv_problem prob = check_fixed_problem(i);
        check_cover(&prob, 16, 16, 8);
        check_cover(&prob, 4, 8, 3);
    }
    uint64_t state = 31;
    for (int i = 0; i < 200; i++) {
        conv_problem prob = check_random_problem(&state);
        check_cover(&prob, 16, 16, 16);
        check_cover(&prob, 8, 4, 5);
    }
    return test_summary("test_ch03_tiling");
}
