/* block.c: the ResNet basic block's definition, references and tolerances (see block.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block.h"
#include "check.h"
#include "reference.h"
#include "tensor.h"

void block_format(const block_shape *shape, char *buf, size_t len)
{
    const bool projection = shape->stride != 1 || shape->c != shape->k;
    snprintf(buf, len, "n%d c%d %dx%d k%d s%d %s", shape->n, shape->c, shape->h, shape->w, shape->k, shape->stride,
             projection ? "projection" : "identity");
}

static bool validated(conv_problem *prob, const char *what, char *why, size_t why_len)
{
    char reason[200]; /* problem_validate's reasons are one short line */
    if (problem_validate(prob, reason, sizeof reason))
        return true;
    snprintf(why, why_len, "%s: %s", what, reason);
    return false;
}

bool block_problems(const block_shape *shape, bool *projection, conv_problem *conv1, conv_problem *conv2,
                    conv_problem *shortcut, char *why, size_t why_len)
{
    *projection = shape->stride != 1 || shape->c != shape->k;
    /* problem_validate takes any stride, but a basic block keeps its size (1) or halves it (2): what
     * block.h promises to refuse, and what the checks and tests cover */
    if (shape->stride != 1 && shape->stride != 2) {
        snprintf(why, why_len, "a basic block's stride is 1 or 2 (got %d)", shape->stride);
        return false;
    }
    *conv1 = problem_make(shape->n, shape->c, shape->h, shape->w, shape->k, 3, 3);
    conv1->pad_h = conv1->pad_w = 1;
    conv1->stride_h = conv1->stride_w = shape->stride;
    if (!validated(conv1, "conv1", why, why_len))
        return false;
    *conv2 = problem_make(shape->n, shape->k, conv1->p, conv1->q, shape->k, 3, 3);
    conv2->pad_h = conv2->pad_w = 1;
    if (!validated(conv2, "conv2", why, why_len))
        return false;
    memset(shortcut, 0, sizeof *shortcut);
    if (!*projection)
        return true;
    *shortcut = problem_make(shape->n, shape->c, shape->h, shape->w, shape->k, 1, 1);
    shortcut->stride_h = shortcut->stride_w = shape->stride;
    /* pad 0 with a 1x1 filter lands on the same P x Q as conv1's pad 1 with a 3x3 one */
    return validated(shortcut, "shortcut", why, why_len);
}

static float *fp16_uniform(size_t count, uint64_t seed)
{
    float *data = xmalloc(count * sizeof *data);
    fill_uniform(data, count, seed);
    round_to_dtype(data, count, DTYPE_F16);
    return data;
}

/* Statistics of the size the convolution before the BN produces: a sum of L products of values
 * uniform in [-1, 1) (rms 1/sqrt(3) each) has rms sqrt(L)/3. A trained network's BN has measured
 * something like that, so its output is of order 1, as in a real block. (conv2's input h is not
 * uniform, so there it is only about right; nothing depends on it being exact.) */
static void bn_draw(block_bn *bn, int channels, int64_t reduction_length, uint64_t seed)
{
    const double sigma = sqrt((double)reduction_length) / 3.0;
    float **vectors[4] = {&bn->gamma, &bn->beta, &bn->mean, &bn->var};
    for (int v = 0; v < 4; v++) {
        *vectors[v] = xmalloc((size_t)channels * sizeof(float));
        fill_uniform(*vectors[v], (size_t)channels, seed + (uint64_t)v);
    }
    for (int k = 0; k < channels; k++) {
        bn->gamma[k] = 1.0f + 0.5f * bn->gamma[k];                              /* [0.5, 1.5) */
        bn->beta[k] = 0.5f * bn->beta[k];                                       /* [-0.5, 0.5) */
        bn->mean[k] = (float)(0.5 * sigma * bn->mean[k]);                       /* |mean| < sigma / 2 */
        bn->var[k] = (float)(sigma * sigma * (1.25 + 0.75 * bn->var[k]));       /* [0.5, 2) sigma^2: > 0 */
    }
}

static void bn_free(block_bn *bn)
{
    free(bn->gamma), free(bn->beta), free(bn->mean), free(bn->var);
}

bool block_params_make(block_params *params, const block_shape *shape, uint64_t seed, char *why, size_t why_len)
{
    memset(params, 0, sizeof *params);
    params->shape = *shape;
    if (!block_problems(shape, &params->projection, &params->conv1, &params->conv2, &params->shortcut, why,
                        why_len))
        return false;
    params->x = fp16_uniform((size_t)problem_x_elems(&params->conv1), seed);
    params->w1 = fp16_uniform((size_t)problem_w_elems(&params->conv1), seed + 1);
    params->w2 = fp16_uniform((size_t)problem_w_elems(&params->conv2), seed + 2);
    bn_draw(&params->bn1, shape->k, problem_reduction_length(&params->conv1, PASS_FPROP), seed + 10);
    bn_draw(&params->bn2, shape->k, problem_reduction_length(&params->conv2, PASS_FPROP), seed + 20);
    if (params->projection) {
        params->wsc = fp16_uniform((size_t)problem_w_elems(&params->shortcut), seed + 3);
        bn_draw(&params->bnsc, shape->k, problem_reduction_length(&params->shortcut, PASS_FPROP), seed + 30);
    }
    return true;
}

void block_params_free(block_params *params)
{
    free(params->x), free(params->w1), free(params->w2), free(params->wsc);
    bn_free(&params->bn1), bn_free(&params->bn2);
    if (params->projection)
        bn_free(&params->bnsc);
}

void block_bn_affine(const block_bn *bn, int channels, double *scale, double *shift)
{
    for (int k = 0; k < channels; k++) {
        scale[k] = (double)bn->gamma[k] / sqrt((double)bn->var[k] + (double)BLOCK_BN_EPS);
        shift[k] = (double)bn->beta[k] - (double)bn->mean[k] * scale[k];
    }
}

bool block_reference_on_gpu(const conv_problem *prob, bool have_gpu)
{
    return have_gpu && problem_flops(prob) > BLOCK_CPU_REFERENCE_MAX_FLOPS;
}

/* The fp64 convolution on the CPU, or on the GPU from host buffers. */
static void convolve(const conv_problem *prob, const float *x, const float *w, bool have_gpu, double *y)
{
    if (!block_reference_on_gpu(prob, have_gpu)) {
        ref_fprop_cpu(prob, x, w, y);
        return;
    }
    const size_t x_bytes = (size_t)problem_x_elems(prob) * sizeof(float);
    const size_t w_bytes = (size_t)problem_w_elems(prob) * sizeof(float);
    const size_t y_bytes = (size_t)problem_y_elems(prob) * sizeof(double);
    float *x_dev, *w_dev;
    double *y_dev;
    CUDA_CHECK(cudaMalloc((void **)&x_dev, x_bytes));
    CUDA_CHECK(cudaMalloc((void **)&w_dev, w_bytes));
    CUDA_CHECK(cudaMalloc((void **)&y_dev, y_bytes));
    CUDA_CHECK(cudaMemcpy(x_dev, x, x_bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(w_dev, w, w_bytes, cudaMemcpyHostToDevice));
    ref_fprop_gpu(prob, x_dev, w_dev, y_dev);
    CUDA_CHECK(cudaMemcpy(y, y_dev, y_bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(x_dev));
    CUDA_CHECK(cudaFree(w_dev));
    CUDA_CHECK(cudaFree(y_dev));
}

static void apply_epilogue(const conv_problem *prob, const block_epilogue *ep, double *y)
{
    const size_t plane = (size_t)prob->p * prob->q, count = (size_t)problem_y_elems(prob);
    for (size_t i = 0; i < count; i++) {
        const int k = (int)(i / plane % (size_t)prob->k);
        y[i] = epilogue_apply(ep->ops, y[i], ep->ops.bias ? ep->bias[k] : 0.0,
                              ep->ops.scale_shift ? ep->scale[k] : 1.0, ep->ops.scale_shift ? ep->shift[k] : 0.0,
                              ep->ops.residual ? ep->residual[i] : 0.0);
    }
}

void block_stage_reference(const conv_problem *prob, const float *x, const float *w, const block_epilogue *ep,
                           bool have_gpu, double *y)
{
    convolve(prob, x, w, have_gpu, y);
    apply_epilogue(prob, ep, y);
}

void block_stage_reference_f64(const conv_problem *prob, const double *x, const float *w, const block_epilogue *ep,
                               bool have_gpu, double *y)
{
    /* The references take fp32 inputs; the convolution is linear, so conv(hi) + conv(lo) is conv(x)
     * with hi + lo within 2^-48 of x: no rounding the checks could see. */
    const size_t count = (size_t)problem_x_elems(prob), y_count = (size_t)problem_y_elems(prob);
    float *hi = xmalloc(count * sizeof *hi), *lo = xmalloc(count * sizeof *lo);
    for (size_t i = 0; i < count; i++) {
        hi[i] = (float)x[i];
        lo[i] = (float)(x[i] - (double)hi[i]);
    }
    double *low_part = xmalloc(y_count * sizeof *low_part);
    convolve(prob, hi, w, have_gpu, y);
    convolve(prob, lo, w, have_gpu, low_part);
    for (size_t i = 0; i < y_count; i++)
        y[i] += low_part[i];
    apply_epilogue(prob, ep, y);
    free(hi), free(lo), free(low_part);
}

void block_chain(const block_params *params, bool have_gpu, double *y)
{
    const int k = params->shape.k;
    const size_t count = (size_t)problem_y_elems(&params->conv1);
    double *scale = xmalloc((size_t)k * sizeof *scale), *shift = xmalloc((size_t)k * sizeof *shift);
    double *h = xmalloc(count * sizeof *h), *sc = xmalloc(count * sizeof *sc);

    block_bn_affine(&params->bn1, k, scale, shift);
    const block_epilogue bn_relu = {.ops = {.scale_shift = true, .relu = true}, .scale = scale, .shift = shift};
    block_stage_reference(&params->conv1, params->x, params->w1, &bn_relu, have_gpu, h);

    if (params->projection) {
        block_bn_affine(&params->bnsc, k, scale, shift);
        const block_epilogue bn = {.ops = {.scale_shift = true}, .scale = scale, .shift = shift};
        block_stage_reference(&params->shortcut, params->x, params->wsc, &bn, have_gpu, sc);
    } else {
        for (size_t i = 0; i < count; i++) /* same shape, same logical order */
            sc[i] = params->x[i];
    }

    block_bn_affine(&params->bn2, k, scale, shift);
    const block_epilogue bn_add_relu = {.ops = {.scale_shift = true, .residual = true, .relu = true},
                                        .scale = scale, .shift = shift, .residual = sc};
    block_stage_reference_f64(&params->conv2, h, params->w2, &bn_add_relu, have_gpu, y);
    free(scale), free(shift), free(h), free(sc);
}

/* The end-to-end tolerance. Each stage is held to verify_tolerances() for its own reduction length,
 * given its own fp16 inputs. End to end, y also carries the fp16 roundings upstream that the stage
 * checks forgive: h (and, unfused, the convolution before its BN), sc (and its convolution), and for
 * cuDNN the filters with BN's scale folded in, rounded to fp16. Each is a relative error of at most
 * u = 2^-11 of the value rounded, and a convolution passes a rounding of its input or filter on as a
 * random sum, which keeps its relative size (sum of L terms each off by up to u: the result is off by
 * about u / sqrt(3) of its own rms); BN scales signal and error alike, ReLU and the residual add do not
 * enlarge it. So y's error is a few such units, summed in quadrature: three stage budgets (conv1's
 * output, the shortcut's, and conv2's own, each 2u relative and 16u at the worst element, with room
 * for a double rounding) bound it with a wide margin, while a wrong block (ReLU before the add, a
 * missing shortcut, a mis-strided projection) is off by a sizeable fraction of y and fails by orders
 * of magnitude (tests/test_ch10_resnet_block.c checks both). Errors are in units of a typical y, a sixth of
 * the largest. */
verify_result block_verify_end_to_end(const block_params *params, const float *y, const double *ref)
{
    const int64_t longest = 9 * (int64_t)(params->shape.c > params->shape.k ? params->shape.c : params->shape.k);
    verify_result result = verify_output(y, ref, NULL, (size_t)problem_y_elems(&params->conv2), DTYPE_F16, longest, 0.0);
    double stage_rel, stage_max;
    verify_tolerances(DTYPE_F16, longest, &stage_rel, &stage_max);
    result.tol_rel = 3.0 * stage_rel;
    result.tol_max = 3.0 * stage_max;
    result.pass = result.nonfinite == 0 && result.rel_l2 <= result.tol_rel && result.max_err <= result.tol_max;
    return result;
}

double block_flops(const block_shape *shape)
{
    bool projection;
    conv_problem conv1, conv2, shortcut;
    char why[256];
    if (!block_problems(shape, &projection, &conv1, &conv2, &shortcut, why, sizeof why))
        fail("block_flops: %s", why);
    return problem_flops(&conv1) + problem_flops(&conv2) + (projection ? problem_flops(&shortcut) : 0.0);
}

block_bytes block_traffic(const block_shape *shape)
{
    bool projection;
    conv_problem convs[3];
    char why[256];
    if (!block_problems(shape, &projection, &convs[0], &convs[1], &convs[2], why, sizeof why))
        fail("block_traffic: %s", why);
    const double half = 2.0, vector = (double)shape->k;
    block_bytes bytes = {0.0, 0.0, 0.0};
    for (int i = 0; i < (projection ? 3 : 2); i++) {
        const double tensors = problem_min_bytes(&convs[i], PASS_FPROP, DTYPE_F16);
        const double y = half * (double)problem_y_elems(&convs[i]);
        const double residual = i == 1 ? y : 0.0; /* conv2 adds sc, shaped like its y */
        bytes.fused += tensors + 2.0 * 4.0 * vector + residual;
        bytes.unfused += tensors + 2.0 * 4.0 * vector + residual + 2.0 * y; /* the pass reads y, writes it */
        bytes.cudnn += tensors + half * vector + residual;
    }
    return bytes;
}
