/* problem.c: the convolution problem descriptor, its validation and its cost model. */
#include <inttypes.h>
#include <stdio.h>

#include "conv.h"

conv_problem problem_make(int n, int c, int h, int w, int k, int r, int s)
{
    conv_problem prob = {.n = n, .c = c, .h = h, .w = w, .k = k, .r = r, .s = s,
                         .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1,
                         .dil_h = 1, .dil_w = 1, .groups = 1};
    return prob;
}

int conv_out_size(int in, int pad, int dil, int filter, int stride)
{
    /* The extent the filter covers is dil*(filter-1)+1; it fits in (in + 2*pad) at this many strides.
     * Written with a floor division so a negative numerator gives a non-positive size, not 1. */
    int64_t span = (int64_t)in + 2 * (int64_t)pad - (int64_t)dil * (filter - 1) - 1;
    if (span < 0)
        return 0;
    return (int)(span / stride + 1);
}

int64_t problem_x_elems(const conv_problem *prob)
{
    return (int64_t)prob->n * prob->c * prob->h * prob->w;
}

int64_t problem_w_elems(const conv_problem *prob)
{
    return (int64_t)prob->k * (prob->c / prob->groups) * prob->r * prob->s;
}

int64_t problem_y_elems(const conv_problem *prob)
{
    return (int64_t)prob->n * prob->k * prob->p * prob->q;
}

bool problem_validate(conv_problem *prob, char *why, size_t why_len)
{
    const struct { const char *name; int value; } positive[] = {
        {"n", prob->n}, {"c", prob->c}, {"h", prob->h}, {"w", prob->w}, {"k", prob->k},
        {"r", prob->r}, {"s", prob->s}, {"stride_h", prob->stride_h}, {"stride_w", prob->stride_w},
        {"dil_h", prob->dil_h}, {"dil_w", prob->dil_w}, {"groups", prob->groups}};
    for (size_t i = 0; i < sizeof positive / sizeof positive[0]; i++) {
        if (positive[i].value <= 0) {
            snprintf(why, why_len, "%s must be positive (got %d)", positive[i].name, positive[i].value);
            return false;
        }
    }
    if (prob->pad_h < 0 || prob->pad_w < 0) {
        snprintf(why, why_len, "padding must be non-negative (got %d, %d)", prob->pad_h, prob->pad_w);
        return false;
    }
    if (prob->c % prob->groups != 0 || prob->k % prob->groups != 0) {
        snprintf(why, why_len, "groups (%d) must divide both c (%d) and k (%d)", prob->groups, prob->c,
                 prob->k);
        return false;
    }
    /* Kernels index with 32-bit ints: every element offset (and the GEMM extents derived from them)
     * must stay below 2^31, and so must input coordinates, which padding and dilation stretch. */
    const struct { const char *name; int64_t count; } extents[] = {
        {"padded input row (h + 2*pad_h + dil_h*r)",
         (int64_t)prob->h + 2 * (int64_t)prob->pad_h + (int64_t)prob->dil_h * prob->r},
        {"padded input column (w + 2*pad_w + dil_w*s)",
         (int64_t)prob->w + 2 * (int64_t)prob->pad_w + (int64_t)prob->dil_w * prob->s}};
    for (size_t i = 0; i < sizeof extents / sizeof extents[0]; i++) {
        if (extents[i].count > INT32_MAX) {
            snprintf(why, why_len, "%s is %" PRId64 ", over the 2^31-1 that 32-bit index math allows",
                     extents[i].name, extents[i].count);
            return false;
        }
    }
    prob->p = conv_out_size(prob->h, prob->pad_h, prob->dil_h, prob->r, prob->stride_h);
    prob->q = conv_out_size(prob->w, prob->pad_w, prob->dil_w, prob->s, prob->stride_w);
    if (prob->p <= 0 || prob->q <= 0) {
        snprintf(why, why_len,
                 "the output would be empty: a %dx%d filter with dilation %dx%d spans %lldx%lld, more "
                 "than the padded %dx%d input",
                 prob->r, prob->s, prob->dil_h, prob->dil_w,
                 (long long)prob->dil_h * (prob->r - 1) + 1, (long long)prob->dil_w * (prob->s - 1) + 1,
                 prob->h + 2 * prob->pad_h, prob->w + 2 * prob->pad_w);
        return false;
    }
    /* In double: a product of four 31-bit sizes can overflow even int64. */
    const struct { const char *name; double count; } sizes[] = {
        {"input x (n*c*h*w)", (double)prob->n * prob->c * prob->h * prob->w},
        {"filter w (k*c/groups*r*s)", (double)prob->k * (prob->c / prob->groups) * prob->r * prob->s},
        {"output y (n*k*p*q)", (double)prob->n * prob->k * prob->p * prob->q}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (sizes[i].count > INT32_MAX) {
            snprintf(why, why_len, "%s has %.4g elements, over the 2^31-1 that 32-bit index math allows",
                     sizes[i].name, sizes[i].count);
            return false;
        }
    }
    return true;
}

double problem_flops(const conv_problem *prob)
{
    return 2.0 * prob->n * prob->p * prob->q * (double)prob->k * (prob->c / prob->groups) * prob->r * prob->s;
}

int64_t problem_reduction_length(const conv_problem *prob, conv_pass pass)
{
    switch (pass) {
    case PASS_FPROP: return (int64_t)(prob->c / prob->groups) * prob->r * prob->s;
    case PASS_DGRAD: return (int64_t)(prob->k / prob->groups) * prob->r * prob->s;
    case PASS_WGRAD: return (int64_t)prob->n * prob->p * prob->q;
    }
    return 0;
}

double problem_min_bytes(const conv_problem *prob, conv_pass pass, conv_dtype dtype)
{
    (void)pass; /* every pass reads two of the three tensors and writes the third */
    return (double)dtype_size(dtype) *
           (double)(problem_x_elems(prob) + problem_w_elems(prob) + problem_y_elems(prob));
}

static void format_pair(char *buf, size_t len, const char *tag, int a, int b)
{
    if (a == b)
        snprintf(buf, len, " %s%d", tag, a);
    else
        snprintf(buf, len, " %s%dx%d", tag, a, b);
}

void problem_format(const conv_problem *prob, char *buf, size_t len)
{
    char stride[32], pad[32], dil[32];
    format_pair(stride, sizeof stride, "s", prob->stride_h, prob->stride_w);
    format_pair(pad, sizeof pad, "p", prob->pad_h, prob->pad_w);
    format_pair(dil, sizeof dil, "d", prob->dil_h, prob->dil_w);
    snprintf(buf, len, "n%d c%d %dx%d k%d %dx%d%s%s%s g%d", prob->n, prob->c, prob->h, prob->w, prob->k,
             prob->r, prob->s, stride, pad, dil, prob->groups);
}

const char *pass_name(conv_pass pass)
{
    static const char *names[] = {"fprop", "dgrad", "wgrad"};
    return names[pass];
}

const char *dtype_name(conv_dtype dtype)
{
    return dtype == DTYPE_F32 ? "f32" : "f16";
}

const char *layout_name(conv_layout layout)
{
    return layout == LAYOUT_NCHW ? "NCHW" : "NHWC";
}

size_t dtype_size(conv_dtype dtype)
{
    return dtype == DTYPE_F32 ? 4 : 2;
}

bool problem_fits_memory(const conv_problem *prob, conv_dtype dtype, double extra_bytes, double free_bytes,
                         char *why, size_t why_len)
{
    double tensors = problem_min_bytes(prob, PASS_FPROP, dtype);
    if (tensors + extra_bytes <= free_bytes)
        return true;
    snprintf(why, why_len, "needs %.2f GiB of device memory (tensors %.2f GiB + scratch %.2f GiB), %.2f GiB free",
             (tensors + extra_bytes) / (1 << 30), tensors / (1 << 30), extra_bytes / (1 << 30),
             free_bytes / (1 << 30));
    return false;
}
