/* Chapter 04: im2col, the lowering every chapter 04 step starts with.
 *
 * What it computes: fprop, y = x (*) w, fp32, NCHW activations and KCRS filters, with any padding,
 * stride, dilation and groups, in two launches:
 *   1. im2col: copy every input value each output pixel reads into a matrix A of C*R*S rows and
 *      N*P*Q columns (im2col.h has the mapping), zeros where a tap falls in the padding;
 *   2. a GEMM per group: Y_g[K/groups][N*P*Q] = W_g[K/groups][C/groups*R*S] x A_g.
 * The filter needs no copy: KCRS already is the row-major matrix W. Nor does the output: the GEMM's
 * columns are the pixels in y's own order, so it writes y in place.
 *
 * What changes from chapter 03: the convolution is no longer a kernel of its own. Once the input is
 * lowered to A, the whole problem is a matrix product, and matrix products are the best-optimized code
 * on a GPU. The price is A itself: about R*S/(stride_h*stride_w) times the input (9x for a 3x3
 * convolution at stride 1), written once and read back by the GEMM. README.md works out what that
 * costs.
 *
 * This file holds the lowering. 04x_cublas.cu hands the buffer to cuBLAS; 04a-04d multiply it with an
 * SGEMM of our own (sgemm.cuh and a file per step); steps.c is the chapter's registry.
 *
 * Run:
 *   ./build/conv run 04x --layer resnet50/res2_3x3      (also times the im2col phase alone)
 */
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "conv.h"
#include "im2col.h"

enum { IM2COL_THREADS = 256 };

/* One thread per (input channel, column of the buffer): it decodes its pixel once and writes the R*S
 * taps of that channel, one row of A each. Consecutive threads take consecutive pixels, so for every
 * tap a warp stores 128 contiguous bytes and, at stride_w 1, reads neighbouring input values. A value
 * of x is read by up to R*S/(stride_h*stride_w) threads, mostly from L1/L2; the writes are the cost.
 * Columns from N*P*Q up to the row pitch `ld` are padding and get zeros. */
static __global__ void __launch_bounds__(IM2COL_THREADS)
im2col_kernel(const conv_problem prob, const float *__restrict__ x, float *__restrict__ a, int cols, int ld,
              unsigned threads)
{
    const unsigned index = blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= threads)
        return;
    const int col = index % ld, c = index / ld;
    const output_pixel px = output_pixel_of(&prob, col);
    for (int r = 0; r < prob.r; r++)
        for (int s = 0; s < prob.s; s++) {
            const int from = col < cols ? im2col_x_offset(&prob, c, r, s, px) : -1;
            a[im2col_row(&prob, c, r, s) * ld + col] = from >= 0 ? x[from] : 0.0f;
        }
}

extern "C" size_t im2col_workspace_bytes(const conv_problem *prob)
{
    return sizeof(float) * (size_t)(im2col_rows(prob) * im2col_ld(prob));
}

/* One limit covers both the memory and the index math: offsets into the buffer are 32-bit ints, so it
 * holds at most 2^31-1 floats, just under 8 GiB. Every other offset the GEMMs form lies in w or y,
 * which problem_validate() already keeps below 2^31. */
extern "C" bool im2col_supports(const conv_problem *prob, char *why, size_t why_len)
{
    const int64_t floats = im2col_rows(prob) * im2col_ld(prob);
    if (floats <= INT32_MAX)
        return true;
    snprintf(why, why_len,
             "the im2col buffer would be C*R*S x N*P*Q = %lld x %lld floats, %.2f GiB (%.1fx the input): "
             "over the 8 GiB (2^31 floats) that 32-bit offsets address",
             (long long)im2col_rows(prob), (long long)im2col_cols(prob),
             (double)floats * sizeof(float) / (1 << 30), (double)floats / (double)problem_x_elems(prob));
    return false;
}

extern "C" void im2col_phase(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    (void)w, (void)y;
    const int cols = (int)im2col_cols(prob), ld = (int)im2col_ld(prob);
    const unsigned threads = (unsigned)prob->c * (unsigned)ld; /* <= the buffer's floats < 2^31 */
    im2col_kernel<<<(threads + IM2COL_THREADS - 1) / IM2COL_THREADS, IM2COL_THREADS>>>(
        *prob, (const float *)x, (float *)workspace, cols, ld, threads);
    CUDA_CHECK_LAUNCH();
}
