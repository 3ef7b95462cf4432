/* Chapter 04, step 04x: the classic convolution, im2col + cuBLAS SGEMM.
 *
 * What it computes: fprop, fp32 NCHW, as im2col (im2col.cu) followed by a GEMM per group in cuBLAS:
 * Y_g[K/groups][N*P*Q] = W_g[K/groups][C/groups*R*S] x A_g. The filter needs no copy (KCRS already is
 * the row-major matrix W), nor does the output (the GEMM's columns are the pixels in y's own order).
 * It is the yardstick 04a-04d are timed against: the same buffer, the vendor's GEMM.
 *
 * Run:
 *   ./build/conv run 04x --layer resnet50/res2_3x3      (also times the im2col phase alone)
 *   ./build/conv check 04x                              (against the reference on awkward shapes)
 */
#include <stdint.h>

#include <cublas_v2.h>

#include "check.h"
#include "conv.h"
#include "im2col.h"

/* Created on first use and kept: creating a handle costs far more than the GEMM. Pedantic math pins
 * SGEMM to true fp32 whatever the environment asks for (no TF32), so 04x is fp32 against fp32. */
static cublasHandle_t cublas_handle(void)
{
    static cublasHandle_t handle;
    if (!handle) {
        CUBLAS_CHECK(cublasCreate(&handle));
        CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH));
    }
    return handle;
}

/* cuBLAS is column-major, and a row-major matrix is its transpose in column-major, so Y = W x A is asked
 * for as Y^T = A^T x W^T with the operands swapped and nothing transposed in memory. One GEMM per
 * (image n, group g): A_{n,g} is the P*Q columns of image n in A_g (leading dimension: the buffer's row
 * pitch), and its product lands in y[n][g*Kg .. (g+1)*Kg) directly, P*Q floats per row. The (n, g)
 * pairs are a strided batch along whichever of images and groups is longer, and a loop along the other.
 * Batch strides, in floats: */
typedef struct {
    int64_t a, w, y;
} batch_strides;

extern "C" void launch_04x(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    im2col_phase(prob, x, w, y, workspace);

    const int pq = prob->p * prob->q, ld = (int)im2col_ld(prob);
    const int kg = prob->k / prob->groups, depth = prob->c / prob->groups * prob->r * prob->s;
    const batch_strides per_image = {pq, 0, (int64_t)prob->k * pq}; /* every image: the same filters */
    const batch_strides per_group = {(int64_t)depth * ld, (int64_t)kg * depth, (int64_t)kg * pq};
    const bool batch_images = prob->n >= prob->groups;
    const batch_strides batch = batch_images ? per_image : per_group, step = batch_images ? per_group : per_image;
    const int batch_count = batch_images ? prob->n : prob->groups;
    const int loops = batch_images ? prob->groups : prob->n;
    const float one = 1.0f, zero = 0.0f;
    for (int i = 0; i < loops; i++)
        CUBLAS_CHECK(cublasSgemmStridedBatched(
            cublas_handle(), CUBLAS_OP_N, CUBLAS_OP_N, pq, kg, depth, &one, (const float *)workspace + i * step.a,
            ld, batch.a, (const float *)w + i * step.w, depth, batch.w, &zero, (float *)y + i * step.y, pq,
            batch.y, batch_count));
}
