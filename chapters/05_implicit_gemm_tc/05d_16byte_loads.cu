/* 05d: 16-byte global loads, each address split into a pixel part and a tap part.
 *
 * The kernel is in 05d_16byte_loads.cuh (what changes from 05c, and why, is said there); this file
 * launches it on 05c's 64x64 tile, 4 warps of 32x32 (IGEMM_SHAPE_05D).
 */
#include "05d_16byte_loads.cuh"

typedef tile_shape<IGEMM_SHAPE_05D> shape_05d;

extern "C" bool supports_05d(const conv_problem *prob, char *why, size_t why_len)
{
    return supports_16byte("05d", false, shape_05d::BM, shape_05d::BN, prob, why, why_len);
}

extern "C" void launch_05d(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    launch_16byte_loads<shape_05d>(prob, x, w, y, workspace);
}
