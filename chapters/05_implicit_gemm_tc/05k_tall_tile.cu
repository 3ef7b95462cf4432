/* 05k: 05i on a 256x64 tile, for the K = 64 layers.
 *
 * What changes from 05j: the tile shape only (IGEMM_SHAPE_05K): 256x64, 4 warps of 64x64 stacked
 * along M, for K = 64 layers (res2, conv1), where half of 05i's 128-wide tile would multiply zeros.
 * Which shape wins on which layer is for the benchmark to say.
 */
#include "05i_fused_epilogue.cuh" /* 05i's kernel and launch: this step changes only the tile */

typedef tile_shape<IGEMM_SHAPE_05K> shape_05k;

extern "C" bool supports_05k(const conv_problem *prob, char *why, size_t why_len)
{
    return supports_16byte("05k", true, shape_05k::BM, shape_05k::BN, prob, why, why_len);
}

extern "C" void launch_05k(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    launch_with_epilogue<shape_05k>(prob, x, w, y, workspace, &no_epilogue);
}

extern "C" void launch_fused_05k(const conv_problem *prob, void *x, void *w, void *y, void *workspace,
                                 const conv_epilogue *ep)
{
    launch_with_epilogue<shape_05k>(prob, x, w, y, workspace, ep);
}
