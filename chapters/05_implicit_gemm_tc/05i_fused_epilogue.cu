/* 05i: the fused epilogue.
 *
 * The kernel is in 05i_fused_epilogue.cuh (what changes from 05h, and why, is said there); this file
 * launches it on 05h's 128x128 tile (IGEMM_SHAPE_05I), plain and with an epilogue.
 */
#include "05i_fused_epilogue.cuh"

typedef tile_shape<IGEMM_SHAPE_05I> shape_05i;

extern "C" bool supports_05i(const conv_problem *prob, char *why, size_t why_len)
{
    return supports_16byte("05i", true, shape_05i::BM, shape_05i::BN, prob, why, why_len);
}

extern "C" void launch_05i(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    launch_with_epilogue<shape_05i>(prob, x, w, y, workspace, &no_epilogue);
}

extern "C" void launch_fused_05i(const conv_problem *prob, void *x, void *w, void *y, void *workspace,
                                 const conv_epilogue *ep)
{
    launch_with_epilogue<shape_05i>(prob, x, w, y, workspace, ep);
}
