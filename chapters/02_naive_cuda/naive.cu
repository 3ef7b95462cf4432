/* Chapter 02: one CUDA thread per output element.
 *
 * What it computes: fprop, y = x (*) w, fp32, NCHW activations and KCRS filters, with padding, stride,
 * dilation and groups: exactly chapter 01's sum. The four outer loops of the CPU version (n, k, p, q)
 * become the grid; each thread runs the three inner loops (c in its group, r, s) alone, reading every
 * operand straight from global memory.
 *
 * What changes from chapter 01: nothing in the arithmetic; everything in who does it. N*K*P*Q threads
 * (6.4 million for ResNet-50's res2_3x3 at N=32) run the same dot product at once.
 *
 * The two kernels differ in one thing only: the order in which a thread's flat index is split into
 * (n, k, p, q), which decides what the 32 lanes of a warp touch together.
 *   02a  k fastest: a warp holds 32 output channels of one pixel. Its stores to y land P*Q floats apart
 *        and its filter loads C/groups*R*S floats apart: 32 sectors for each (its x loads, one address
 *        for the whole warp, are a broadcast).
 *   02b  q fastest: a warp holds 32 neighbouring pixels of one channel. It stores 128 contiguous bytes,
 *        reads x at consecutive addresses (stride 1) and one filter value for the whole warp.
 * Same instructions, same FLOPs; the gap between their times is the price of uncoalesced access.
 *
 * Run:
 *   ./build/conv run 02b --layer resnet50/res2_3x3      (likewise 02a)
 *   ./build/conv list                                   (every kernel, and what each supports)
 */
#include <stdint.h>

#include "check.h"
#include "conv.h"
#include "naive.cuh"

/* 02a: k fastest, then q, p, n. Neighbouring lanes compute neighbouring output channels. */
static __global__ void conv_naive_k_fastest(const conv_problem prob, const float *__restrict__ x,
                                            const float *__restrict__ w, float *__restrict__ y,
                                            unsigned outputs)
{
    unsigned index = flat_thread_index();
    if (index >= outputs)
        return;
    const int k = index % prob.k;
    index /= prob.k;
    const int q = index % prob.q;
    index /= prob.q;
    const int p = index % prob.p;
    const int n = index / prob.p;
    y[(((int64_t)n * prob.k + k) * prob.p + p) * prob.q + q] = output_element(&prob, x, w, n, k, p, q);
}

/* 02b: q fastest, then p, k, n: the order of y itself, so the flat index is the output's offset. */
static __global__ void conv_naive_q_fastest(const conv_problem prob, const float *__restrict__ x,
                                            const float *__restrict__ w, float *__restrict__ y,
                                            unsigned outputs)
{
    const unsigned index = flat_thread_index();
    if (index >= outputs)
        return;
    const int q = index % prob.q;
    const int p = index / prob.q % prob.p;
    const int k = index / (prob.q * prob.p) % prob.k;
    const int n = index / (prob.q * prob.p * prob.k);
    y[index] = output_element(&prob, x, w, n, k, p, q);
}

extern "C" void launch_02a(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    (void)workspace;
    const unsigned outputs = (unsigned)problem_y_elems(prob);
    conv_naive_k_fastest<<<blocks_for(outputs), THREADS_PER_BLOCK>>>(*prob, (const float *)x,
                                                                      (const float *)w, (float *)y, outputs);
    CUDA_CHECK_LAUNCH();
}

extern "C" void launch_02b(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    (void)workspace;
    const unsigned outputs = (unsigned)problem_y_elems(prob);
    conv_naive_q_fastest<<<blocks_for(outputs), THREADS_PER_BLOCK>>>(*prob, (const float *)x,
                                                                      (const float *)w, (float *)y, outputs);
    CUDA_CHECK_LAUNCH();
}
