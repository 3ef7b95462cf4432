/* Chapter 02, step 02a: one CUDA thread per output element, k fastest.
 *
 * What it computes: fprop, y = x (*) w, fp32, NCHW activations and KCRS filters, with padding, stride,
 * dilation and groups: exactly chapter 01's sum. The four outer loops of the CPU version (n, k, p, q)
 * become the grid; each thread runs the three inner loops (c in its group, r, s) alone, reading every
 * operand straight from global memory (output_element(), naive.cuh).
 *
 * What changes from chapter 01: nothing in the arithmetic; everything in who does it. N*K*P*Q threads
 * (6.4 million for ResNet-50's res2_3x3 at N=32) run the same dot product at once.
 *
 * How a thread's flat index becomes (n, k, p, q) decides what the 32 lanes of a warp touch together.
 * Here k is fastest: a warp holds 32 output channels of one pixel. Its stores to y land P*Q floats
 * apart and its filter loads C/groups*R*S floats apart: 32 sectors for each (its x loads, one address
 * for the whole warp, are a broadcast). 02b turns the order around.
 *
 * Run:
 *   ./build/conv run 02a --layer resnet50/res2_3x3
 *   ./build/conv list                                   (every kernel, and what each supports)
 */
#include <stdint.h>

#include "check.h"
#include "conv.h"
#include "naive.cuh"

/* k fastest, then q, p, n. Neighbouring lanes compute neighbouring output channels. */
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

extern "C" void launch_02a(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    (void)workspace;
    const unsigned outputs = (unsigned)problem_y_elems(prob);
    conv_naive_k_fastest<<<blocks_for(outputs), THREADS_PER_BLOCK>>>(*prob, (const float *)x,
                                                                      (const float *)w, (float *)y, outputs);
    CUDA_CHECK_LAUNCH();
}
