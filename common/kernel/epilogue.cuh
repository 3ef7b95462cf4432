/* epilogue.cuh: the epilogue of epilogue.h on the GPU, one fp32 value at a time.
 *
 * Written once for every kernel that applies it: chapter 05's fused epilogue calls it on its fp32
 * accumulators before the one fp16 rounding, and the separate elementwise pass (epilogue.cu, the
 * unfused comparison) on values it has read back from y. Same operations, same order, same fp32 math
 * as epilogue_apply() defines in double. Device code, CUDA C++.
 */
#ifndef EPILOGUE_CUH
#define EPILOGUE_CUH

#include <stdint.h>

#include <cuda_fp16.h>

#include "epilogue.h"

/* v through ep's operations for output channel k (in [0, K)), the residual element already read (it
 * is ignored unless ops.residual): for callers that load residuals in wide vectors of their own. */
static __device__ __forceinline__ float epilogue_value_with(const conv_epilogue &ep, float v, int k, float residual)
{
    if (ep.ops.bias)
        v += __ldg(&ep.bias[k]);
    if (ep.ops.scale_shift)
        v = fmaf(v, __ldg(&ep.scale[k]), __ldg(&ep.shift[k]));
    if (ep.ops.residual)
        v += residual;
    if (ep.ops.relu && v < 0.0f) /* not fmaxf: a NaN stays NaN, as in epilogue_apply() */
        v = 0.0f;
    return v;
}

/* v through ep's operations for the element of an NHWC fp16 y at y_offset, output channel k; the
 * residual, shaped like y, is read at the same offset. */
static __device__ __forceinline__ float epilogue_value(const conv_epilogue &ep, float v, int k, int64_t y_offset)
{
    const float residual = ep.ops.residual ? __half2float(((const __half *)ep.residual)[y_offset]) : 0.0f;
    return epilogue_value_with(ep, v, k, residual);
}

#endif
