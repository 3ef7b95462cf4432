/* net.h: the network the example trains, its parameters, and the CPU backend.
 *
 *   image  [batch][1][size][size]
 *   conv1  3x3, 1 -> 16, stride 2, pad 1, ReLU      dgrad not needed (nothing before it learns)
 *   conv2  3x3, 16 -> 32, stride 1, pad 1, ReLU     dgrad: 06a (stride 1)
 *   conv3  3x3, 32 -> 64, stride 2, pad 1, ReLU     dgrad: 06b (stride phases)
 *   global average pool -> 64 features -> linear 64 -> 4 classes -> softmax cross-entropy
 * The convolutions have no bias (ReLU after each, and the classifier has one). conv1 is the strided
 * one so that both of chapter 06's dgrad kernels are on the training path.
 *
 * The CPU backend runs every convolution through the fp64 references (common/harness/reference.h) on fp32
 * NCHW tensors and the other layers through layers.h: the same training as the GPU backends, slowly,
 * on any machine. With fp16 set it also rounds to fp16 everything the GPU backends store in fp16
 * (filters, convolution outputs, activation gradients), to show on the CPU what fp16 storage and the
 * loss scale do to training.
 */
#ifndef NET_H
#define NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conv.h"
#include "data.h"
#include "layers.h"

#define NET_CONVS 3

typedef struct {
    int batch, size;
    conv_problem conv[NET_CONVS]; /* validated */
    linear_shape fc;
} net_shape;

/* The network for this batch and image size; false with a one-line reason when they do not fit. */
bool net_shape_make(int batch, int size, net_shape *shape, char *why, size_t why_len);

/* Shape of the input (i = 0) or of conv i's output (i = 1 .. NET_CONVS), in either layout. */
act_shape net_act_shape(const net_shape *shape, int i, bool nhwc);

/* The learned parameters in fp32: filters KCRS (logical order), classifier [out][in] and [out]. */
typedef struct {
    float *conv_w[NET_CONVS];
    float *fc_w, *fc_b;
} net_params;

/* Seeded He-uniform filters, a uniform(+-1/sqrt(in)) classifier, zero bias. */
void net_params_init(net_params *params, const net_shape *shape, uint64_t seed);
void net_params_zero(net_params *params, const net_shape *shape);
void net_params_free(net_params *params);

typedef struct {
    net_shape shape;
    net_params params;            /* the fp32 master weights */
    net_params grads;             /* after net_cpu_backward: dL/dparam * loss_scale */
    float loss_scale;
    bool fp16;
    float *act[NET_CONVS + 1];    /* act[0]: the images; act[i]: ReLU(conv i), NCHW */
    float *dy, *dx;               /* activation gradients, the two sides of one convolution */
    double *wide;                 /* a reference's fp64 output */
    float *w_used;                /* the filter the convolution reads: the master, or its fp16 rounding */
    float *pooled, *dpooled, *logits, *dlogits, *loss;
    int *labels;
} net_cpu;

void net_cpu_init(net_cpu *net, const net_shape *shape, const net_params *initial, float loss_scale, bool fp16);
void net_cpu_free(net_cpu *net);

/* Forward pass on images [batch][size][size] with their labels: the mean loss. net->logits keeps the
 * scores for prediction. */
double net_cpu_forward(net_cpu *net, const float *images, const int *labels);

/* Backward pass of the last forward: net->grads. */
void net_cpu_backward(net_cpu *net);

/* w -= lr * grad / loss_scale for every parameter; false when a gradient was not finite. */
bool net_cpu_sgd(net_cpu *net, float lr);

#endif
