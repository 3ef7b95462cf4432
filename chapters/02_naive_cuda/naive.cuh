/* naive.cuh: what the naive kernels share (02a, 02b and 02c, each in its own file): one
 * thread's whole dot product, the thread's flat index, and the one-dimensional grid. The kernels differ
 * only in how they split the flat index into (n, k, p, q) and where the filter comes from. */
#ifndef CH02_NAIVE_CUH
#define CH02_NAIVE_CUH

#include <stdint.h>

#include "conv.h"

enum { THREADS_PER_BLOCK = 256 };

/* The whole dot product behind y[n][k][p][q]. Taps that fall outside the image read the zero padding,
 * so they are skipped rather than loaded. Always inlined: then, in 02c, the compiler sees that w points
 * into constant memory and loads it with ld.const. */
static __device__ __forceinline__ float output_element(const conv_problem *prob, const float *__restrict__ x,
                                                       const float *__restrict__ w, int n, int k, int p, int q)
{
    const int c_per_group = prob->c / prob->groups;
    const int group = k / (prob->k / prob->groups);
    const int plane = prob->h * prob->w;
    const float *x_group = x + ((int64_t)n * prob->c + (int64_t)group * c_per_group) * plane;
    const float *w_k = w + (int64_t)k * c_per_group * prob->r * prob->s;
    const int h_first = p * prob->stride_h - prob->pad_h;
    const int w_first = q * prob->stride_w - prob->pad_w;

    float sum = 0.0f;
    for (int c = 0; c < c_per_group; c++) {
        const float *x_c = x_group + c * plane;
        const float *w_c = w_k + c * prob->r * prob->s;
        for (int r = 0; r < prob->r; r++) {
            const int in_h = h_first + r * prob->dil_h;
            if ((unsigned)in_h >= (unsigned)prob->h) /* one compare catches in_h < 0 too */
                continue;
            for (int s = 0; s < prob->s; s++) {
                const int in_w = w_first + s * prob->dil_w;
                if ((unsigned)in_w >= (unsigned)prob->w)
                    continue;
                sum += x_c[in_h * prob->w + in_w] * w_c[r * prob->s + s];
            }
        }
    }
    return sum;
}

/* The flat index fits in 32 unsigned bits: problem_validate() keeps N*K*P*Q below 2^31, and the grid
 * rounds it up by less than one block. */
static __device__ unsigned flat_thread_index(void)
{
    return blockIdx.x * blockDim.x + threadIdx.x;
}

static unsigned blocks_for(unsigned outputs)
{
    return (outputs + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK;
}

#endif
