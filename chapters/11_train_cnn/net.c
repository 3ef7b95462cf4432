/* net.c: the network of net.h and its CPU backend: fp64 reference convolutions, layers.h for the rest. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net.h"
#include "reference.h"
#include "tensor.h"

static const int widths[NET_CONVS + 1] = {1, 16, 32, 64};
static const int strides[NET_CONVS] = {2, 1, 2};

bool net_shape_make(int batch, int size, net_shape *shape, char *why, size_t why_len)
{
    memset(shape, 0, sizeof *shape);
    shape->batch = batch;
    shape->size = size;
    int h = size;
    for (int i = 0; i < NET_CONVS; i++) {
        conv_problem *prob = &shape->conv[i];
        *prob = problem_make(batch, widths[i], h, h, widths[i + 1], 3, 3);
        prob->pad_h = prob->pad_w = 1;
        prob->stride_h = prob->stride_w = strides[i];
        char reason[256];
        if (!problem_validate(prob, reason, sizeof reason)) {
            snprintf(why, why_len, "batch %d, size %d: conv%d: %s", batch, size, i + 1, reason);
            return false;
        }
        h = prob->p;
    }
    shape->fc = (linear_shape){batch, widths[NET_CONVS], DATA_CLASSES};
    return true;
}

act_shape net_act_shape(const net_shape *shape, int i, bool nhwc)
{
    if (i == 0)
        return (act_shape){shape->batch, widths[0], shape->size * shape->size, nhwc};
    const conv_problem *prob = &shape->conv[i - 1];
    return (act_shape){shape->batch, prob->k, prob->p * prob->q, nhwc};
}

static void *zeros(size_t count, size_t size)
{
    void *p = xmalloc(count ? count * size : 1);
    memset(p, 0, count * size);
    return p;
}

void net_params_zero(net_params *params, const net_shape *shape)
{
    for (int i = 0; i < NET_CONVS; i++)
        params->conv_w[i] = zeros((size_t)problem_w_elems(&shape->conv[i]), sizeof(float));
    params->fc_w = zeros((size_t)shape->fc.out * shape->fc.in, sizeof(float));
    params->fc_b = zeros((size_t)shape->fc.out, sizeof(float));
}

void net_params_init(net_params *params, const net_shape *shape, uint64_t seed)
{
    net_params_zero(params, shape);
    for (int i = 0; i < NET_CONVS; i++) {
        const conv_problem *prob = &shape->conv[i];
        const size_t count = (size_t)problem_w_elems(prob);
        /* He: keeps the activations' scale through each conv + ReLU */
        const float bound = sqrtf(6.0f / (float)(prob->c * prob->r * prob->s));
        fill_uniform(params->conv_w[i], count, seed + 1 + (uint64_t)i);
        for (size_t j = 0; j < count; j++)
            params->conv_w[i][j] *= bound;
    }
    const size_t count = (size_t)shape->fc.out * shape->fc.in;
    fill_uniform(params->fc_w, count, seed + 1 + NET_CONVS);
    for (size_t j = 0; j < count; j++)
        params->fc_w[j] /= sqrtf((float)shape->fc.in);
}

void net_params_free(net_params *params)
{
    for (int i = 0; i < NET_CONVS; i++)
        free(params->conv_w[i]);
    free(params->fc_w);
    free(params->fc_b);
    memset(params, 0, sizeof *params);
}

void net_cpu_init(net_cpu *net, const net_shape *shape, const net_params *initial, float loss_scale, bool fp16)
{
    memset(net, 0, sizeof *net);
    net->shape = *shape;
    net->loss_scale = loss_scale;
    net->fp16 = fp16;
    net_params_zero(&net->params, shape);
    net_params_zero(&net->grads, shape);
    size_t widest = 0, largest_w = 0;
    for (int i = 0; i < NET_CONVS; i++) {
        const size_t wc = (size_t)problem_w_elems(&shape->conv[i]);
        memcpy(net->params.conv_w[i], initial->conv_w[i], wc * sizeof(float));
        largest_w = wc > largest_w ? wc : largest_w;
    }
    memcpy(net->params.fc_w, initial->fc_w, (size_t)shape->fc.out * shape->fc.in * sizeof(float));
    memcpy(net->params.fc_b, initial->fc_b, (size_t)shape->fc.out * sizeof(float));
    for (int i = 0; i <= NET_CONVS; i++) {
        const size_t count = (size_t)act_elems(net_act_shape(shape, i, false));
        net->act[i] = zeros(count, sizeof(float));
        widest = count > widest ? count : widest;
    }
    widest = largest_w > widest ? largest_w : widest;
    net->dy = zeros(widest, sizeof(float));
    net->dx = zeros(widest, sizeof(float));
    net->wide = zeros(widest, sizeof(double));
    net->w_used = zeros(largest_w, sizeof(float));
    net->pooled = zeros((size_t)shape->batch * shape->fc.in, sizeof(float));
    net->dpooled = zeros((size_t)shape->batch * shape->fc.in, sizeof(float));
    net->logits = zeros((size_t)shape->batch * shape->fc.out, sizeof(float));
    net->dlogits = zeros((size_t)shape->batch * shape->fc.out, sizeof(float));
    net->loss = zeros((size_t)shape->batch, sizeof(float));
    net->labels = zeros((size_t)shape->batch, sizeof(int));
}

void net_cpu_free(net_cpu *net)
{
    net_params_free(&net->params);
    net_params_free(&net->grads);
    for (int i = 0; i <= NET_CONVS; i++)
        free(net->act[i]);
    free(net->dy);
    free(net->dx);
    free(net->wide);
    free(net->w_used);
    free(net->pooled);
    free(net->dpooled);
    free(net->logits);
    free(net->dlogits);
    free(net->loss);
    free(net->labels);
    memset(net, 0, sizeof *net);
}

/* A reference's fp64 output stored as the next layer reads it: fp32, or fp16 when emulating it. */
static void store(const net_cpu *net, const double *src, float *dst, size_t count)
{
    for (size_t i = 0; i < count; i++)
        dst[i] = (float)src[i];
    if (net->fp16)
        round_to_dtype(dst, count, DTYPE_F16);
}

/* The filter conv i reads: the master weights, rounded to fp16 when emulating the GPU backends. */
static const float *filter(net_cpu *net, int i)
{
    if (!net->fp16)
        return net->params.conv_w[i];
    const size_t count = (size_t)problem_w_elems(&net->shape.conv[i]);
    memcpy(net->w_used, net->params.conv_w[i], count * sizeof(float));
    round_to_dtype(net->w_used, count, DTYPE_F16);
    return net->w_used;
}

double net_cpu_forward(net_cpu *net, const float *images, const int *labels)
{
    const net_shape *s = &net->shape;
    memcpy(net->act[0], images, (size_t)act_elems(net_act_shape(s, 0, false)) * sizeof(float));
    memcpy(net->labels, labels, (size_t)s->batch * sizeof(int));
    for (int i = 0; i < NET_CONVS; i++) {
        const int64_t count = act_elems(net_act_shape(s, i + 1, false));
        ref_fprop_cpu(&s->conv[i], net->act[i], filter(net, i), net->wide);
        store(net, net->wide, net->act[i + 1], (size_t)count);
        for (int64_t e = 0; e < count; e++)
            relu_forward_element(net->act[i + 1], e);
    }
    const act_shape top = net_act_shape(s, NET_CONVS, false);
    for (int64_t e = 0; e < (int64_t)s->batch * top.channels; e++)
        pool_forward_element(net->act[NET_CONVS], top, net->pooled, e);
    for (int64_t e = 0; e < (int64_t)s->batch * s->fc.out; e++)
        linear_forward_element(net->pooled, net->params.fc_w, net->params.fc_b, net->logits, s->fc, e);
    double total = 0.0;
    for (int b = 0; b < s->batch; b++) {
        softmax_xent_element(net->logits, net->labels, net->loss, net->dlogits, s->fc.out,
                             net->loss_scale / (float)s->batch, b);
        total += net->loss[b];
    }
    return total / s->batch;
}

void net_cpu_backward(net_cpu *net)
{
    const net_shape *s = &net->shape;
    for (int64_t e = 0; e < (int64_t)s->fc.out * (s->fc.in + 1); e++)
        linear_backward_params_element(net->dlogits, net->pooled, net->grads.fc_w, net->grads.fc_b, s->fc, e);
    for (int64_t e = 0; e < (int64_t)s->batch * s->fc.in; e++)
        linear_backward_input_element(net->dlogits, net->params.fc_w, net->dpooled, s->fc, e);

    /* dy of the last conv: the pooling's gradient through its ReLU */
    act_shape top = net_act_shape(s, NET_CONVS, false);
    for (int64_t e = 0; e < act_elems(top); e++)
        pool_backward_element(net->dpooled, top, net->dy, e);
    if (net->fp16)
        round_to_dtype(net->dy, (size_t)act_elems(top), DTYPE_F16);
    for (int64_t e = 0; e < act_elems(top); e++)
        relu_backward_element(net->dy, net->act[NET_CONVS], e);

    for (int i = NET_CONVS - 1; i >= 0; i--) {
        const conv_problem *prob = &s->conv[i];
        ref_wgrad_cpu(prob, net->act[i], net->wide, net->dy);
        store(net, net->wide, net->grads.conv_w[i], (size_t)problem_w_elems(prob));
        if (i == 0)
            break; /* the images need no gradient */
        const int64_t count = problem_x_elems(prob);
        ref_dgrad_cpu(prob, net->wide, filter(net, i), net->dy);
        store(net, net->wide, net->dx, (size_t)count);
        for (int64_t e = 0; e < count; e++)
            relu_backward_element(net->dx, net->act[i], e);
        float *t = net->dy;
        net->dy = net->dx;
        net->dx = t;
    }
}

static bool sgd_all(float *w, const float *g, size_t count, float step)
{
    bool finite = true;
    for (size_t i = 0; i < count; i++)
        finite &= sgd_element(&w[i], g[i], step);
    return finite;
}

bool net_cpu_sgd(net_cpu *net, float lr)
{
    const net_shape *s = &net->shape;
    const float step = lr / net->loss_scale;
    bool finite = true;
    for (int i = 0; i < NET_CONVS; i++)
        finite &= sgd_all(net->params.conv_w[i], net->grads.conv_w[i], (size_t)problem_w_elems(&s->conv[i]), step);
    finite &= sgd_all(net->params.fc_w, net->grads.fc_w, (size_t)s->fc.out * s->fc.in, step);
    finite &= sgd_all(net->params.fc_b, net->grads.fc_b, (size_t)s->fc.out, step);
    return finite;
}
