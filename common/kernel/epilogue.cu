/* epilogue.cu: the epilogue as a pass of its own (05l, the unfused comparison).
 *
 * What a network does without fusion: the convolution writes y, then an elementwise kernel reads y
 * back (and the residual), applies the same operations (epilogue_value_with(), epilogue.cuh) and
 * writes y again. Done here in one pass for all the operations, as fast as a pass over y can be
 * (16-byte loads and stores), so that what the fused epilogue saves is the traffic, not a weak kernel.
 * One difference in the numbers: the convolution's result is rounded to fp16 before the epilogue
 * sees it, where the fused epilogue works on the fp32 accumulator.
 */
#include <stdint.h>

#include <cuda_fp16.h>

#include "check.h"
#include "conv.h"
#include "epilogue.cuh"

enum {
    EPILOGUE_THREADS = 256,
    /* Enough blocks to fill any current GPU several times over; past that the threads stride. */
    EPILOGUE_MAX_BLOCKS = 8192,
};

/* VEC consecutive halves, read and written as one access: 16 bytes for VEC = 8. */
template <int VEC>
struct __align__(2 * VEC) half_pack {
    __half h[VEC];
};

/* In place over y, `vectors` packs of VEC elements, each thread from pack `first` on, striding by the
 * grid. With VEC = 8, K % 8 == 0, so a pack is channels k..k+7 of one pixel. The channel of the
 * thread's pack moves by k_step (the grid's stride in elements, modulo K) per iteration: no division
 * in the loop. */
template <int VEC>
static __global__ void __launch_bounds__(EPILOGUE_THREADS)
epilogue_apply_kernel(const conv_epilogue ep, __half *__restrict__ y, int64_t vectors, int k_count, int k_step)
{
    const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const half_pack<VEC> *residual = (const half_pack<VEC> *)ep.residual;
    int k = (int)(first * VEC % k_count);
    for (int64_t i = first; i < vectors; i += stride) {
        half_pack<VEC> v = ((const half_pack<VEC> *)y)[i];
        const half_pack<VEC> r = ep.ops.residual ? residual[i] : v; /* v: a placeholder, never added */
#pragma unroll
        for (int e = 0; e < VEC; e++)
            v.h[e] = __float2half_rn(epilogue_value_with(ep, __half2float(v.h[e]), k + e, __half2float(r.h[e])));
        ((half_pack<VEC> *)y)[i] = v;
        k += k_step;
        if (k >= k_count)
            k -= k_count;
    }
}

extern "C" void epilogue_unfused_f16_nhwc(const conv_problem *prob, void *y, const conv_epilogue *ep)
{
    if (!epilogue_any(ep->ops))
        return; /* nothing to apply: no pass */
    /* 16-byte packs need every pixel's K channels to be whole packs (y and the residual are
     * cudaMalloc'd, so their starts are aligned). */
    const int vec = prob->k % 8 == 0 ? 8 : 1;
    const int64_t vectors = problem_y_elems(prob) / vec;
    int64_t blocks = (vectors + EPILOGUE_THREADS - 1) / EPILOGUE_THREADS;
    if (blocks > EPILOGUE_MAX_BLOCKS)
        blocks = EPILOGUE_MAX_BLOCKS;
    const int k_step = (int)(blocks * EPILOGUE_THREADS * vec % prob->k);
    if (vec == 8)
        epilogue_apply_kernel<8><<<(unsigned)blocks, EPILOGUE_THREADS>>>(*ep, (__half *)y, vectors, prob->k, k_step);
    else
        epilogue_apply_kernel<1><<<(unsigned)blocks, EPILOGUE_THREADS>>>(*ep, (__half *)y, vectors, prob->k, k_step);
    CUDA_CHECK_LAUNCH();
}
