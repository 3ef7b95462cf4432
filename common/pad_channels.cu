/* pad_channels.cu: see pad_channels.h. One thread per 16-byte chunk of the destination. */
#include <cuda_fp16.h>

#include "check.h"
#include "pad_channels.h"

static __global__ void pad_channels_kernel(const __half *__restrict__ src, __half *__restrict__ dst, int64_t rows,
                                           int channels, int padded)
{
    const int chunks_per_row = padded / 8;
    const int64_t chunks = rows * chunks_per_row;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < chunks;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t row = i / chunks_per_row;
        const int c0 = (int)(i % chunks_per_row) * 8;
        __align__(16) __half v[8];
#pragma unroll
        for (int e = 0; e < 8; e++)
            v[e] = c0 + e < channels ? src[row * channels + c0 + e] : __float2half(0.0f);
        *(uint4 *)(dst + row * padded + c0) = *(const uint4 *)v;
    }
}

extern "C" void pad_channels_f16(const void *src, void *dst, int64_t rows, int channels, int padded)
{
    const int64_t chunks = rows * (padded / 8);
    const int threads = 256;
    const int64_t blocks = (chunks + threads - 1) / threads;
    /* a grid-stride loop: a million blocks are plenty to fill any GPU */
    pad_channels_kernel<<<(unsigned)(blocks < (1 << 20) ? blocks : (1 << 20)), threads>>>(
        (const __half *)src, (__half *)dst, rows, channels, padded);
    CUDA_CHECK_LAUNCH();
}
