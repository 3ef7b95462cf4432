/* 05e: the larger block and warp tiles.
 *
 * What changes from 05d: one line, the tile shape (IGEMM_SHAPE_05E). The block tile grows from 64x64 to
 * 128x128 and each of its 4 warps from 32x32 to 64x64, up to 255 registers per thread for the 128
 * accumulators.
 *
 * Why: per 16-deep step a warp of 32x32 issues 4 ldmatrix.x4 (2 KB of shared memory) for 8 mma.sync, 8
 * multiply-adds per byte read; a warp of 64x64 issues 8 (4 KB) for 32 mma.sync, 16 per byte. Shared
 * memory delivers about 128 B per clock per SM, so the bigger warp tile lets it keep up with twice the
 * tensor-core rate. The bigger block tile reads each loaded byte of x and w for twice as many outputs:
 * half the global traffic per multiply-add. The price: 4 times fewer blocks, too few to fill the GPU on
 * the late layers (05j is the answer there).
 */
#include "05d_16byte_loads.cuh" /* 05d's kernel and launch: this step changes only the tile */

typedef tile_shape<IGEMM_SHAPE_05E> shape_05e;

extern "C" bool supports_05e(const conv_problem *prob, char *why, size_t why_len)
{
    return supports_16byte("05e", false, shape_05e::BM, shape_05e::BN, prob, why, why_len);
}

extern "C" void launch_05e(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    launch_16byte_loads<shape_05e>(prob, x, w, y, workspace);
}
