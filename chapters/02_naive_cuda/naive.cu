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

enum { THREADS_PER_BLOCK = 256 };

/* The whole dot product behind y[n][k][p][q]. Taps that fall outside the image read the zero padding,
 * so they are skipped rather than loaded. */
static __device__ float output_element(const conv_problem *prob, const float *__restrict__ x,
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

static unsigned blocks_for(unsigned outputs)
{
    return (outputs + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK;
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

extern "C" const conv_kernel ch02_kernels[] = {
    {.id = "02a", .name = "naive, uncoalesced (k innermost)",
     .source = "chapters/02_naive_cuda/naive.cu",
     .pass = PASS_FPROP, .dtype = DTYPE_F32, .layout = LAYOUT_NCHW, .device = ON_GPU,
     .supports = NULL, .workspace_bytes = NULL, .launch = launch_02a,
     .phase_name = NULL, .launch_phase = NULL, .launch_fused = NULL, .library = NULL,
     .branches = NULL, .branch_of = NULL, .layers = NULL, .ptx = NULL, .sass = NULL},
    {.id = "02b", .name = "naive, coalesced (q innermost)",
     .source = "chapters/02_naive_cuda/naive.cu",
     .pass = PASS_FPROP, .dtype = DTYPE_F32, .layout = LAYOUT_NCHW, .device = ON_GPU,
     .supports = NULL, .workspace_bytes = NULL, .launch = launch_02b,
     .phase_name = NULL, .launch_phase = NULL, .launch_fused = NULL, .library = NULL,
     .branches = NULL, .branch_of = NULL, .layers = NULL, .ptx = NULL, .sass = NULL},
};
extern "C" const int ch02_kernel_count = sizeof(ch02_kernels) / sizeof(ch02_kernels[0]);
