/* 05j: 05i on a 64x64 tile, for the small layers.
 *
 * What changes from 05i: the tile shape only (IGEMM_SHAPE_05J): 64x64, 4 warps of 32x32. Four times
 * the blocks, for the small late layers (res4, res5) where 128x128 tiles leave most of the SMs idle.
 * Its warp tile reads more shared memory per multiply (8 multiply-adds per byte against 16), but a
 * busy SM beats an idle one. Which shape wins on which layer is for the benchmark to say.
 */
#include "05i_fused_epilogue.cuh" /* 05i's kernel and launch: this step changes only the tile */

typedef tile_shape<IGEMM_SHAPE_05J> shape_05j;

extern "C" bool supports_05j(const conv_problem *prob, char *why, size_t why_len)
{
    return supports_16byte("05j", true, shape_05j::BM, shape_05j::BN, prob, why, why_len);
}

extern "C" void launch_05j(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    launch_with_epilogue<shape_05j>(prob, x, w, y, workspace, &no_epilogue);
}

extern "C" void launch_fused_05j(const conv_problem *prob, void *x, void *w, void *y, void *workspace,
                                 const conv_epilogue *ep)
{
    launch_with_epilogue<shape_05j>(prob, x, w, y, workspace, ep);
}
