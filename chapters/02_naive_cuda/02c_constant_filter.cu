/* Chapter 02, step 02c: 02b with the filter in constant memory.
 *
 * What it computes: the same fprop as 02b (fp32, NCHW activations, KCRS filters, any padding, stride,
 * dilation and groups), with the same thread-to-output map: q fastest, so the 32 lanes of a warp are
 * 32 neighbouring pixels of one output channel.
 *
 * What changes from 02b: where the filter is read from. In 02b every lane of a warp reads the same
 * filter value at each tap (one channel k, one tap (c, r, s)), a broadcast that still goes down the
 * global-memory path beside the x loads. Here the host copies the filter into a __constant__ array
 * before the launch (cudaMemcpyToSymbol), and the kernel reads it with ld.const: constant memory is
 * cached in each SM's constant cache, which serves a warp whose lanes all read one address in a single
 * request (CUDA C++ Programming Guide, "Device Memory Accesses", constant memory). The global loads
 * left are x's alone, and the filter's latency is the constant cache's once it is warm.
 *
 * What it cannot do, and why chapter 03 takes another road:
 *   - Constant memory is 64 KB for the whole program (CUDA C++ Programming Guide, "Technical
 *     Specifications": constant memory size), so the filter must fit in it: K*(C/groups)*R*S floats at
 *     most 16,384. ResNet-50's conv1 (64x3x7x7, 37 KB) and every depthwise filter do; its 3x3 layers past
 *     the stem (147 KB to 9.4 MB) do not, and supports_02c() refuses them.
 *   - The cache serves one address per request: a warp whose lanes read different addresses is split
 *     into as many requests as there are addresses (same guide, same section). 02a's map (k fastest,
 *     32 channels per warp) would read 32 filter values at once and be served 32 times over.
 *
 * Run:
 *   ./build/conv run 02c --layer resnet50/conv1 --n 1          (no GPU: the emulator runs it by itself)
 *   ./build/conv run 02c --layer resnet50/res2_3x3            (refused: its filter is 147 KB)
 */
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "conv.h"
#include "naive.cuh"

/* All the constant memory a program may declare, as floats. */
enum { CONSTANT_FILTER_FLOATS = 64 * 1024 / sizeof(float) };

static __constant__ float filter_in_constant_memory[CONSTANT_FILTER_FLOATS];

/* 02b's kernel with the filter taken from constant memory instead of a pointer argument. */
static __global__ void conv_naive_constant_filter(const conv_problem prob, const float *__restrict__ x,
                                                  float *__restrict__ y, unsigned outputs)
{
    const unsigned index = flat_thread_index();
    if (index >= outputs)
        return;
    const int q = index % prob.q;
    const int p = index / prob.q % prob.p;
    const int k = index / (prob.q * prob.p) % prob.k;
    const int n = index / (prob.q * prob.p * prob.k);
    y[index] = output_element(&prob, x, filter_in_constant_memory, n, k, p, q);
}

extern "C" bool supports_02c(const conv_problem *prob, char *why, size_t why_len)
{
    const int64_t filter_floats = problem_w_elems(prob);
    if (filter_floats <= CONSTANT_FILTER_FLOATS)
        return true;
    snprintf(why, why_len, "02c keeps the filter in constant memory: %lld bytes, over its 65536-byte limit",
             (long long)(filter_floats * (int64_t)sizeof(float)));
    return false;
}

extern "C" void launch_02c(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    (void)workspace;
    /* Ordered after earlier work on the default stream, so a previous launch that reads the filter
     * has finished before it is overwritten. */
    CUDA_CHECK(cudaMemcpyToSymbol(filter_in_constant_memory, w, (size_t)problem_w_elems(prob) * sizeof(float), 0,
                                  cudaMemcpyDeviceToDevice));
    const unsigned outputs = (unsigned)problem_y_elems(prob);
    conv_naive_constant_filter<<<blocks_for(outputs), THREADS_PER_BLOCK>>>(*prob, (const float *)x, (float *)y,
                                                                           outputs);
    CUDA_CHECK_LAUNCH();
}
