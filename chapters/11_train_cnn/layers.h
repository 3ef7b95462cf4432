/* layers.h: every layer of the training example that is not a convolution, one output element at a time.
 *
 * ReLU, global average pooling, the linear classifier, softmax cross-entropy and the SGD update are
 * written once here, as HOST_DEVICE functions of one element (the pattern of common/harness/reference_element.h).
 * The GPU backends run them from grid-stride kernels (layers.cu); the CPU backend runs the same
 * functions in plain loops (net.c), and the cpu suite checks them against their definitions
 * (tests/test_ch11_train_cnn.c). So the two backends differ only in their convolutions.
 *
 * act_t is how activations and their gradients are stored between layers: what the convolutions read
 * and write. The GPU kernels (compiled by nvcc) store fp16, like our fp16 NHWC kernels and cuDNN in
 * the same mode; the CPU backend (compiled as C) stores fp32, the precision of the fp64 references'
 * inputs. Everything else (pooled features, logits, the classifier, master weights) is fp32 with
 * fp64 sums on both sides.
 */
#ifndef LAYERS_H
#define LAYERS_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "conv.h"

#ifdef __CUDACC__
#include <cuda_fp16.h>
typedef __half act_t;
static HOST_DEVICE inline float act_load(act_t v) { return __half2float(v); }
static HOST_DEVICE inline act_t act_store(float v) { return __float2half_rn(v); }
#else
typedef float act_t;
static inline float act_load(act_t v) { return v; }
static inline act_t act_store(float v) { return v; }
#endif

/* An activation tensor [batch][channels][pixels] in either layout: NCHW (the CPU backend, what the
 * references take) or NHWC (the GPU backends, what our kernels and cuDNN take here). */
typedef struct {
    int batch, channels, pixels;
    bool nhwc;
} act_shape;

static HOST_DEVICE inline int64_t act_elems(act_shape s)
{
    return (int64_t)s.batch * s.channels * s.pixels;
}

static HOST_DEVICE inline int64_t act_offset(act_shape s, int b, int k, int j)
{
    return s.nhwc ? ((int64_t)b * s.pixels + j) * s.channels + k : ((int64_t)b * s.channels + k) * s.pixels + j;
}

/* The inverse of act_offset. */
static HOST_DEVICE inline void act_coords(act_shape s, int64_t offset, int *b, int *k, int *j)
{
    if (s.nhwc) {
        *k = (int)(offset % s.channels);
        *j = (int)(offset / s.channels % s.pixels);
    } else {
        *j = (int)(offset % s.pixels);
        *k = (int)(offset / s.pixels % s.channels);
    }
    *b = (int)(offset / ((int64_t)s.channels * s.pixels));
}

/* ReLU, in place on a convolution's output: a = max(y, 0). */
static HOST_DEVICE inline void relu_forward_element(act_t *y, int64_t i)
{
    const float v = act_load(y[i]);
    y[i] = act_store(v > 0.0f ? v : 0.0f);
}

/* ReLU backward, in place on the gradient: dy = da where the ReLU passed its input, else 0. The output
 * a is kept rather than y: a > 0 exactly where y > 0, and a is what the next layer already stores. */
static HOST_DEVICE inline void relu_backward_element(act_t *grad, const act_t *a, int64_t i)
{
    if (!(act_load(a[i]) > 0.0f))
        grad[i] = act_store(0.0f);
}

/* Global average pooling, element e = b * channels + k:  g[b][k] = (1 / pixels) * sum_j a[b][k][j]. */
static HOST_DEVICE inline void pool_forward_element(const act_t *a, act_shape s, float *g, int64_t e)
{
    const int b = (int)(e / s.channels), k = (int)(e % s.channels);
    double sum = 0.0;
    for (int j = 0; j < s.pixels; j++)
        sum += act_load(a[act_offset(s, b, k, j)]);
    g[e] = (float)(sum / s.pixels);
}

/* Its backward, element e = any offset of da: every pixel had weight 1 / pixels in the mean, so
 * da[b][k][j] = dg[b][k] / pixels. */
static HOST_DEVICE inline void pool_backward_element(const float *dg, act_shape s, act_t *da, int64_t e)
{
    int b, k, j;
    act_coords(s, e, &b, &k, &j);
    da[e] = act_store(dg[(int64_t)b * s.channels + k] / (float)s.pixels);
}

/* The classifier z = g W^T + bias: g [batch][in], W [out][in], z [batch][out]. */
typedef struct {
    int batch, in, out;
} linear_shape;

/* Element e = b * out + o:  z[b][o] = bias[o] + sum_i W[o][i] g[b][i]. */
static HOST_DEVICE inline void linear_forward_element(const float *g, const float *W, const float *bias, float *z,
                                                      linear_shape s, int64_t e)
{
    const int b = (int)(e / s.out), o = (int)(e % s.out);
    double sum = bias[o];
    for (int i = 0; i < s.in; i++)
        sum += (double)W[(int64_t)o * s.in + i] * g[(int64_t)b * s.in + i];
    z[e] = (float)sum;
}

/* Gradients of the parameters, element e in [0, out * (in + 1)): e = o * (in + 1) + i gives
 * dW[o][i] = sum_b dz[b][o] g[b][i] for i < in, and dbias[o] = sum_b dz[b][o] for i = in. */
static HOST_DEVICE inline void linear_backward_params_element(const float *dz, const float *g, float *dW,
                                                              float *dbias, linear_shape s, int64_t e)
{
    const int o = (int)(e / (s.in + 1)), i = (int)(e % (s.in + 1));
    double sum = 0.0;
    for (int b = 0; b < s.batch; b++)
        sum += (double)dz[(int64_t)b * s.out + o] * (i < s.in ? g[(int64_t)b * s.in + i] : 1.0f);
    if (i < s.in)
        dW[(int64_t)o * s.in + i] = (float)sum;
    else
        dbias[o] = (float)sum;
}

/* Gradient of the input, element e = b * in + i:  dg[b][i] = sum_o dz[b][o] W[o][i]. */
static HOST_DEVICE inline void linear_backward_input_element(const float *dz, const float *W, float *dg,
                                                             linear_shape s, int64_t e)
{
    const int b = (int)(e / s.in), i = (int)(e % s.in);
    double sum = 0.0;
    for (int o = 0; o < s.out; o++)
        sum += (double)dz[(int64_t)b * s.out + o] * W[(int64_t)o * s.in + i];
    dg[e] = (float)sum;
}

/* Softmax cross-entropy of sample b, with its gradient:
 *   loss[b]  = log(sum_o exp z[b][o]) - z[b][label]
 *   dz[b][o] = (softmax(z[b])[o] - [o == label]) * grad_scale
 * The training loss is the mean over the batch, so grad_scale = loss_scale / batch: the whole backward
 * pass then carries gradients multiplied by loss_scale (see README: loss scaling). The maximum is
 * subtracted first so exp cannot overflow. */
static HOST_DEVICE inline void softmax_xent_element(const float *z, const int *labels, float *loss, float *dz,
                                                    int classes, float grad_scale, int b)
{
    const float *zb = z + (int64_t)b * classes;
    double top = zb[0];
    for (int o = 1; o < classes; o++)
        top = zb[o] > top ? zb[o] : top;
    double total = 0.0;
    for (int o = 0; o < classes; o++)
        total += exp(zb[o] - top);
    loss[b] = (float)(log(total) + top - zb[labels[b]]);
    for (int o = 0; o < classes; o++) {
        const double p = exp(zb[o] - top) / total;
        dz[(int64_t)b * classes + o] = (float)((p - (o == labels[b] ? 1.0 : 0.0)) * grad_scale);
    }
}

/* Plain SGD on an fp32 master weight: w -= step * grad, with step = learning rate / loss_scale, which
 * undoes the loss scale. Returns false when grad is not finite: the fp16 gradients overflowed. */
static HOST_DEVICE inline bool sgd_element(float *w, float grad, float step)
{
    *w -= step * grad;
    return isfinite(grad);
}

/* The index of the largest logit: the predicted class. */
static HOST_DEVICE inline int argmax_element(const float *z, int classes, int b)
{
    int best = 0;
    for (int o = 1; o < classes; o++)
        if (z[(int64_t)b * classes + o] > z[(int64_t)b * classes + best])
            best = o;
    return best;
}

#endif
