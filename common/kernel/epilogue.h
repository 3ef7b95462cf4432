/* epilogue.h: what a convolution kernel may do to its output before storing it.
 *
 * A network rarely stores a bare convolution: ResNet's conv is followed by batch norm, an optional
 * residual add and ReLU. Each of those is an elementwise pass over y, so done as separate kernels it
 * reads and writes the whole output again; done in the convolution's epilogue, in registers before the
 * one store, it costs almost nothing. The operations, always applied in this order to the fp32
 * accumulator of output element y[n][k][p][q]:
 *
 *   v = conv                          (the convolution sum)
 *   v = v + bias[k]                   if bias
 *   v = v * scale[k] + shift[k]       if scale_shift (batch norm in inference, folded: bn_fold below)
 *   v = v + residual[n][k][p][q]      if residual (a tensor shaped like y, in y's dtype and layout)
 *   v = max(v, 0)                     if relu
 *   y = v, rounded to y's dtype
 */
#ifndef EPILOGUE_H
#define EPILOGUE_H

#include <stdbool.h>
#include <stddef.h>

#include "conv.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    bool bias, scale_shift, residual, relu;
} epilogue_ops;

/* The operands, in device memory for GPU kernels: bias, scale and shift are K floats each; residual
 * is shaped, typed and laid out like y. Pointers for operations not requested are NULL. */
typedef struct conv_epilogue {
    epilogue_ops ops;
    const float *bias, *scale, *shift;
    const void *residual;
} conv_epilogue;

static HOST_DEVICE inline bool epilogue_any(epilogue_ops ops)
{
    return ops.bias || ops.scale_shift || ops.residual || ops.relu;
}

/* One output value through the epilogue (the definition, used by the reference chain and the tests;
 * kernels compute the same in fp32). */
static HOST_DEVICE inline double epilogue_apply(epilogue_ops ops, double value, double bias, double scale,
                                                double shift, double residual)
{
    if (ops.bias)
        value += bias;
    if (ops.scale_shift)
        value = value * scale + shift;
    if (ops.residual)
        value += residual;
    if (ops.relu && value < 0.0)
        value = 0.0;
    return value;
}

/* Batch norm in inference, gamma * (v - mean) / sqrt(var + eps) + beta, is an affine map per channel:
 * scale = gamma / sqrt(var + eps), shift = beta - mean * scale. */
void bn_fold(int channels, const float *gamma, const float *beta, const float *mean, const float *var, float eps,
             float *scale, float *shift);

/* The epilogue as a separate pass (epilogue.cu): ep's operations applied in place to y, NHWC fp16 of
 * prob's output shape, on the GPU (default stream, asynchronous). The unfused comparison for chapter
 * 05's fused epilogue: y is read and written once more, and the residual read. */
void epilogue_unfused_f16_nhwc(const conv_problem *prob, void *y, const struct conv_epilogue *ep);

/* Parses "bias,bn,residual,relu" (any subset, any order, "none" for none; "bn" is scale_shift).
 * Returns false with a one-line reason for an unknown word. */
bool epilogue_parse(const char *text, epilogue_ops *ops, char *why, size_t why_len);

/* "bias+bn+residual+relu", or "none". */
void epilogue_format(epilogue_ops ops, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
