/* cudnn_conv.h: one cuDNN convolution on the caller's own buffers, with the fastest algorithm cuDNN has.
 *
 * baseline.h times cuDNN on buffers of its own; the examples that put cuDNN beside our kernels in a real
 * computation (chapter 10's ResNet block, chapter 11's training loop) need it on theirs: the same
 * activations, the same filters, the output where the next layer reads it. This is that call:
 *
 *   cudnn_conv *conv = cudnn_conv_create(&prob, PASS_FPROP, DTYPE_F16, LAYOUT_NHWC, NULL, why, sizeof why);
 *   cudnn_conv_buffers buf = {.x = x, .w = w, .y = y};
 *   if (!conv || !cudnn_conv_find(conv, &buf, why, sizeof why)) ... why says what cuDNN could not do
 *   cudnn_conv_run(conv, &buf);      as many times as needed, on any buffers of the same shapes
 *   cudnn_conv_destroy(conv);
 *
 * The algorithm is chosen as cudnn_best() chooses it: cudnnFind*Ex on the given buffers, the fastest
 * that ran in our kernels' math mode (fp32: FMA, no TF32; fp16: tensor-op math, fp32 accumulation),
 * with exactly the workspace it asked for. Find overwrites the pass's output (y, x or w as the pass
 * says), so call it before the output holds anything you need.
 *
 * A fused fprop (ops not NULL) is cudnnConvolutionBiasActivationForward:
 *   y = act(conv(x, w) + z + bias)       act = ReLU if ops->relu, else the identity
 * with bias K values in y's data type and z a tensor shaped like y (ops->residual) or absent. It has no
 * per-channel scale: fold batch norm's scale into w and its shift into the bias (bn_fold, epilogue.h).
 *
 * Built without cuDNN, cudnn_conv_create() returns NULL and says so.
 */
#ifndef CUDNN_CONV_H
#define CUDNN_CONV_H

#include <stdbool.h>
#include <stddef.h>

#include "conv.h"
#include "epilogue.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cudnn_conv cudnn_conv;

/* Device buffers in the plan's dtype and layout. bias and z only for a fused plan (z only with
 * ops->residual). */
typedef struct {
    void *x, *w, *y;
    const void *bias, *z;
} cudnn_conv_buffers;

/* Describes prob to cuDNN for this pass (fused: fprop only, ops not NULL with no scale_shift). NULL,
 * with the reason in why, when cuDNN is not built in or refuses the description. */
cudnn_conv *cudnn_conv_create(const conv_problem *prob, conv_pass pass, conv_dtype dtype, conv_layout layout,
                              const epilogue_ops *fused, char *why, size_t why_len);

/* Finds the algorithm on these buffers and allocates its workspace. false, with why, when no algorithm
 * runs in the matching math mode or the workspace does not fit in device memory. */
bool cudnn_conv_find(cudnn_conv *conv, const cudnn_conv_buffers *buffers, char *why, size_t why_len);

/* Enqueues the convolution on the default stream (alpha 1, beta 0: the output is written, never read). */
void cudnn_conv_run(const cudnn_conv *conv, const cudnn_conv_buffers *buffers);

/* The chosen algorithm, "IMPLICIT_PRECOMP_GEMM"-style, and its workspace. */
const char *cudnn_conv_algo(const cudnn_conv *conv);
size_t cudnn_conv_workspace_bytes(const cudnn_conv *conv);

void cudnn_conv_destroy(cudnn_conv *conv);

/* "9.13.0", or "n/a" when the build has no cuDNN. */
const char *cudnn_version_string(void);

#ifdef __cplusplus
}
#endif

#endif
