/* layers_gpu.h: the non-convolution layers of layers.h on the GPU (layers.cu), callable from C.
 *
 * Each launches one grid-stride kernel on the default stream that applies a layers.h element function
 * to every element; activations (void *) are fp16 in the layout act_shape says. Launch errors are
 * checked at once (CUDA_CHECK_LAUNCH); faults surface at the caller's next checked synchronization.
 */
#ifndef LAYERS_GPU_H
#define LAYERS_GPU_H

#include "layers.h"

#ifdef __cplusplus
extern "C" {
#endif

void gpu_relu_forward(void *y, int64_t count);
void gpu_relu_backward(void *grad, const void *a, int64_t count);
void gpu_pool_forward(const void *a, act_shape s, float *g);
void gpu_pool_backward(const float *dg, act_shape s, void *da);
void gpu_linear_forward(const float *g, const float *W, const float *bias, float *z, linear_shape s);
void gpu_linear_backward(const float *dz, const float *g, const float *W, float *dW, float *dbias, float *dg,
                         linear_shape s);
void gpu_softmax_xent(const float *z, const int *labels, float *loss, float *dz, int batch, int classes,
                      float grad_scale);
/* SGD on fp32 master weights from fp32 gradients; sets *overflow to 1 if a gradient is not finite. */
void gpu_sgd(float *w, const float *grad, int64_t count, float step, int *overflow);
/* The same from fp16 gradients (the conv filters' wgrad output), then the fp16 copy of the updated
 * weight that the convolutions read. */
void gpu_sgd_half(float *w, void *w_half, const void *grad, int64_t count, float step, int *overflow);
/* fp32 -> fp16, for the convolutions' copy of the initial weights. */
void gpu_to_half(const float *src, void *dst, int64_t count);

#ifdef __cplusplus
}
#endif

#endif
