/* depthwise.cuh: what chapter 09's two steps (09a_direct.cu, 09b_tiled.cu) share: fp16 vectors of 8
 * channels, unpacked and packed, and the check that a problem is depthwise with C a multiple of 8. The
 * index math is in depthwise.h.
 *
 * Why it needs its own kernels: each output element is 2*R*S flops (18 for 3x3) on 2 bytes of input and
 * 2 bytes of output, about 4.5 flop/byte. An H100 does ~300 tensor-core flop per byte of DRAM traffic,
 * and ~20 fp32 CUDA-core flop per byte. The time is the time to move the bytes, so the kernels are built
 * to read every input byte once from DRAM, in 16-byte vectors, and to write every output byte once.
 * There is no GEMM to give to the tensor cores: each output channel is a separate tiny dot product.
 *
 * Both need C % 8 == 0 (a 16-byte vector is 8 channels of one pixel); supports_vectors() says so
 * otherwise.
 */
#ifndef CH09_DEPTHWISE_CUH
#define CH09_DEPTHWISE_CUH

#include <stdio.h>

#include <cuda_fp16.h>

#include "conv.h"
#include "depthwise.h"

/* ---- vectors of 8 fp16 channels ------------------------------------------------------------------- */

/* A uint4 holds channels 0..7 of a vector, two per 32-bit word, the lower channel in the low half. */
static __device__ __forceinline__ void unpack8(uint4 v, float f[DW_VEC])
{
    const unsigned word[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; i++) {
        f[2 * i] = __half2float(__ushort_as_half((unsigned short)(word[i] & 0xffffu)));
        f[2 * i + 1] = __half2float(__ushort_as_half((unsigned short)(word[i] >> 16)));
    }
}

static __device__ __forceinline__ unsigned pack2(float lo, float hi)
{
    const unsigned low = __half_as_ushort(__float2half_rn(lo)), high = __half_as_ushort(__float2half_rn(hi));
    return low | high << 16;
}

static __device__ __forceinline__ uint4 pack8(const float f[DW_VEC])
{
    return make_uint4(pack2(f[0], f[1]), pack2(f[2], f[3]), pack2(f[4], f[5]), pack2(f[6], f[7]));
}

static bool supports_vectors(const char *id, const conv_problem *prob, char *why, size_t why_len)
{
    if (!dw_is_depthwise(prob)) {
        snprintf(why, why_len, "%s is depthwise only: it needs groups = c = k (got groups %d, c %d, k %d)",
                 id, prob->groups, prob->c, prob->k);
        return false;
    }
    if (prob->c % DW_VEC != 0) {
        snprintf(why, why_len,
                 "%s loads 8 channels (16 bytes of fp16) at a time: it needs c a multiple of 8 (got %d)", id,
                 prob->c);
        return false;
    }
    return true;
}

#endif
