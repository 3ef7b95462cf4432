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

extern "C" int64_t pad_fprop_x_elems(const conv_problem *prob)
{
    const conv_problem padded = pad_fprop_problem(prob);
    return (int64_t)padded.n * padded.h * padded.w * padded.c;
}

extern "C" int64_t pad_fprop_w_elems(const conv_problem *prob)
{
    const conv_problem padded = pad_fprop_problem(prob);
    return (int64_t)padded.k * padded.r * padded.s * (padded.c / padded.groups);
}

/* Where the padded w starts: after the padded x, on a 256-byte boundary. */
static size_t padded_w_offset(const conv_problem *prob)
{
    return ((size_t)pad_fprop_x_elems(prob) * 2 + 255) / 256 * 256;
}

extern "C" size_t pad_fprop_workspace_bytes(const conv_problem *prob)
{
    if ((prob->c / prob->groups) % 8 == 0)
        return 0;
    return padded_w_offset(prob) + (size_t)pad_fprop_w_elems(prob) * 2;
}

extern "C" pad_fprop_operands pad_fprop(const conv_problem *prob, const void *x, const void *w, void *workspace)
{
    pad_fprop_operands op = {pad_fprop_problem(prob), x, w};
    if (op.prob.c == prob->c)
        return op;
    const int cg = prob->c / prob->groups, cg8 = op.prob.c / op.prob.groups;
    void *x_padded = workspace, *w_padded = (char *)workspace + padded_w_offset(prob);
    pad_channels_f16(x, x_padded, (int64_t)prob->n * prob->h * prob->w * prob->groups, cg, cg8);
    pad_channels_f16(w, w_padded, (int64_t)prob->k * prob->r * prob->s, cg, cg8);
    op.x = x_padded;
    op.w = w_padded;
    return op;
}
