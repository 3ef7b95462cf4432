/* Chapter 02, step 02b: 02a with q fastest.
 *
 * What it computes: the same fprop as 02a (fp32, NCHW, KCRS, any padding, stride, dilation and groups),
 * with the same dot product per thread (output_element(), naive.cuh).
 *
 * What changes from 02a: only the order in which a thread's flat index is split into (n, k, p, q).
 * With q fastest a warp holds 32 neighbouring pixels of one channel: it stores 128 contiguous bytes,
 * reads x at consecutive addresses (stride 1) and one filter value for the whole warp. Same
 * instructions, same FLOPs; the gap between the two times is the price of uncoalesced access.
 *
 * Run:
 *   ./build/conv run 02b --layer resnet50/res2_3x3
 *   ./build/conv run 02b --layer resnet50/res2_3x3 --n 1       (no GPU: the emulator runs it by itself)
 */
#include <stdint.h>

#include "check.h"
#include "conv.h"
#include "naive.cuh"

/* q fastest, then p, k, n: the order of y itself, so the flat index is the output's offset. */
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

extern "C" void launch_02b(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    (void)workspace;
    const unsigned outputs = (unsigned)problem_y_elems(prob);
    conv_naive_q_fastest<<<blocks_for(outputs), THREADS_PER_BLOCK>>>(*prob, (const float *)x,
                                                                      (const float *)w, (float *)y, outputs);
    CUDA_CHECK_LAUNCH();
}
