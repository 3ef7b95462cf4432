/* cudnn_conv.c: one cuDNN convolution on the caller's buffers (cudnn_conv.h), the fastest algorithm
 * cuDNN has in our kernels' math mode. baseline.c times it on buffers of its own; chapters 10 and 11
 * run it on theirs.
 *
 * The legacy cuDNN convolution API is deprecated in cuDNN 9 but still the shortest honest route to
 * "the fastest algorithm cuDNN has for this convolution"; its deprecation warnings are opt-in
 * (CUDNN_WARN_DEPRECATED), so the build stays quiet.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>
#if defined(HAVE_CUDNN) && HAVE_CUDNN
#include <cudnn.h>
#endif

#include "check.h"
#include "cudnn_conv.h"
#include "tensor.h"

#if defined(HAVE_CUDNN) && HAVE_CUDNN

#define MIB (1024.0 * 1024.0)
#define GIB ((size_t)1 << 30)

struct cudnn_conv {
    cudnnHandle_t handle;
    conv_pass pass;
    conv_dtype dtype;
    cudnnTensorDescriptor_t x_desc, y_desc;
    cudnnFilterDescriptor_t w_desc;
    cudnnConvolutionDescriptor_t conv_desc;
    int algo; /* a cudnnConvolutionFwdAlgo_t, BwdDataAlgo_t or BwdFilterAlgo_t, as pass says; -1 before find */
    void *workspace;
    size_t workspace_bytes;
    /* The fused fprop: y = act(conv(x) + alpha2 * z + bias), bias [1,K,1,1] in y's data type, z the
     * residual (alpha2 = 1) or y itself, unread (alpha2 = 0). */
    bool fused;
    float alpha2;
    cudnnTensorDescriptor_t bias_desc;
    cudnnActivationDescriptor_t act_desc;
    bool relu;
};

/* One handle for the whole process: creating it loads cuDNN's kernels, far too slow to repeat per
 * problem. Its stream is the default stream, the one time_gpu() records its events on. */
static cudnnHandle_t cudnn_handle(void)
{
    static cudnnHandle_t handle;
    if (!handle)
        CUDNN_CHECK(cudnnCreate(&handle));
    return handle;
}

/* One row of cudnnFind*'s answer. The three passes' perf structs share these fields. */
typedef struct {
    int algo;
    cudnnStatus_t status;
    size_t memory;
    cudnnMathType_t math;
} found_algo;

static const char *algo_name(conv_pass pass, int algo)
{
    switch (pass) {
    case PASS_FPROP:
        switch ((cudnnConvolutionFwdAlgo_t)algo) {
        case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "IMPLICIT_GEMM";
        case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "IMPLICIT_PRECOMP_GEMM";
        case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "GEMM";
        case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "DIRECT";
        case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "FFT";
        case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "FFT_TILING";
        case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "WINOGRAD";
        case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
        default: return "unknown fprop algorithm";
        }
    case PASS_DGRAD:
        switch ((cudnnConvolutionBwdDataAlgo_t)algo) {
        case CUDNN_CONVOLUTION_BWD_DATA_ALGO_0: return "ALGO_0";
        case CUDNN_CONVOLUTION_BWD_DATA_ALGO_1: return "ALGO_1";
        case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT: return "FFT";
        case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING: return "FFT_TILING";
        case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD: return "WINOGRAD";
        case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
        default: return "unknown dgrad algorithm";
        }
    case PASS_WGRAD:
        switch ((cudnnConvolutionBwdFilterAlgo_t)algo) {
        case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0: return "ALGO_0";
        case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1: return "ALGO_1";
        case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT: return "FFT";
        case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3: return "ALGO_3";
        case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD: return "WINOGRAD";
        case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
        case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING: return "FFT_TILING";
        default: return "unknown wgrad algorithm";
        }
    }
    return "unknown pass";
}

/* The math mode cuDNN is asked for, matching our kernels of this dtype. */
static cudnnMathType_t requested_math(conv_dtype dtype)
{
    return dtype == DTYPE_F32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH;
}

/* Whether an algorithm found in this math mode computes at our kernel's precision. cudnnFind may
 * answer with modes other than the one asked for. fp32 accepts FMA math, and default math only
 * because the runner sets NVIDIA_TF32_OVERRIDE=0 before any library loads (bench/conv.c), which
 * turns TF32 off in cuDNN and cuBLAS whatever the math mode says. fp16 accepts tensor-op and default
 * math, both of which keep fp16 operands and the descriptor's fp32 accumulation;
 * ..._ALLOW_CONVERSION would let cuDNN convert operands down and is refused. */
static bool math_matches(conv_dtype dtype, cudnnMathType_t math)
{
    if (dtype == DTYPE_F32)
        return math == CUDNN_FMA_MATH || math == CUDNN_DEFAULT_MATH;
    return math == CUDNN_TENSOR_OP_MATH || math == CUDNN_DEFAULT_MATH;
}

/* The z operand of a fused call: the residual, or y itself when there is none (alpha2 = 0: never
 * read, and the API lets z alias y). */
static const void *fused_z(const cudnn_conv *conv, const cudnn_conv_buffers *buf)
{
    return conv->alpha2 != 0.0f ? buf->z : buf->y;
}

/* One fused call with the conv's algorithm and the given workspace size; its status, unchecked:
 * choose_algo() tries candidates with it. */
static cudnnStatus_t fused_forward(const cudnn_conv *conv, const cudnn_conv_buffers *buf, size_t workspace_bytes)
{
    const float one = 1.0f;
    return cudnnConvolutionBiasActivationForward(conv->handle, &one, conv->x_desc, buf->x, conv->w_desc, buf->w,
                                                 conv->conv_desc, (cudnnConvolutionFwdAlgo_t)conv->algo,
                                                 conv->workspace, workspace_bytes, &conv->alpha2, conv->y_desc,
                                                 fused_z(conv, buf), conv->bias_desc, buf->bias, conv->act_desc,
                                                 conv->y_desc, buf->y);
}

/* cudnnFind*Ex for the pass over every algorithm cuDNN has, measured on the real buffers with the
 * conv's (search) workspace. Returns Find's own status; *found (the caller frees it) holds *count
 * rows, fastest first. */
static cudnnStatus_t find_algos(const cudnn_conv *conv, const cudnn_conv_buffers *buf, found_algo **found,
                                int *count)
{
    cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
    int max = 0;
    *count = 0;
    switch (conv->pass) {
    case PASS_FPROP: {
        CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(conv->handle, &max));
        cudnnConvolutionFwdAlgoPerf_t *perf = xmalloc((size_t)max * sizeof *perf);
        *found = xmalloc((size_t)max * sizeof **found);
        status = cudnnFindConvolutionForwardAlgorithmEx(
            conv->handle, conv->x_desc, buf->x, conv->w_desc, buf->w, conv->conv_desc, conv->y_desc, buf->y, max,
            count, perf, conv->workspace, conv->workspace_bytes);
        for (int i = 0; status == CUDNN_STATUS_SUCCESS && i < *count; i++)
            (*found)[i] = (found_algo){(int)perf[i].algo, perf[i].status, perf[i].memory, perf[i].mathType};
        free(perf);
        break;
    }
    case PASS_DGRAD: {
        CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(conv->handle, &max));
        cudnnConvolutionBwdDataAlgoPerf_t *perf = xmalloc((size_t)max * sizeof *perf);
        *found = xmalloc((size_t)max * sizeof **found);
        status = cudnnFindConvolutionBackwardDataAlgorithmEx(
            conv->handle, conv->w_desc, buf->w, conv->y_desc, buf->y, conv->conv_desc, conv->x_desc, buf->x, max,
            count, perf, conv->workspace, conv->workspace_bytes);
        for (int i = 0; status == CUDNN_STATUS_SUCCESS && i < *count; i++)
            (*found)[i] = (found_algo){(int)perf[i].algo, perf[i].status, perf[i].memory, perf[i].mathType};
        free(perf);
        break;
    }
    case PASS_WGRAD: {
        CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(conv->handle, &max));
        cudnnConvolutionBwdFilterAlgoPerf_t *perf = xmalloc((size_t)max * sizeof *perf);
        *found = xmalloc((size_t)max * sizeof **found);
        status = cudnnFindConvolutionBackwardFilterAlgorithmEx(
            conv->handle, conv->x_desc, buf->x, conv->y_desc, buf->y, conv->conv_desc, conv->w_desc, buf->w, max,
            count, perf, conv->workspace, conv->workspace_bytes);
        for (int i = 0; status == CUDNN_STATUS_SUCCESS && i < *count; i++)
            (*found)[i] = (found_algo){(int)perf[i].algo, perf[i].status, perf[i].memory, perf[i].mathType};
        free(perf);
        break;
    }
    }
    if (status != CUDNN_STATUS_SUCCESS)
        *count = 0;
    return status;
}

/* Whether the fused call runs with a candidate Find measured for the plain convolution: the fused API
 * takes fewer. With the identity activation the documentation allows IMPLICIT_PRECOMP_GEMM only; for
 * the rest, one call on the real buffers and its status answer. The call is told the workspace is the
 * size the candidate asked for, the size it will run with. Leaves the candidate's algorithm and math
 * mode set. */
static cudnnStatus_t fused_status(cudnn_conv *conv, const cudnn_conv_buffers *buf, const found_algo *candidate)
{
    if (!conv->relu && candidate->algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)
        return CUDNN_STATUS_NOT_SUPPORTED;
    conv->algo = candidate->algo;
    CUDNN_CHECK(cudnnSetConvolutionMathType(conv->conv_desc, candidate->math));
    return fused_forward(conv, buf, candidate->memory);
}

/* Runs cudnnFind and picks the algorithm: Find lists them fastest first, so the first that ran in a
 * matching math mode (and for a fused conv, that the fused call accepts). Returns false, with why
 * filled in, when there is none. */
static bool choose_algo(cudnn_conv *conv, const cudnn_conv_buffers *buf, found_algo *best, char *why,
                        size_t why_len)
{
    found_algo *found = NULL;
    int count = 0;
    cudnnStatus_t status = find_algos(conv, buf, &found, &count);
    if (CUDNN_STATUS_CATEGORY(status) == CUDNN_STATUS_NOT_SUPPORTED) {
        free(found);
        snprintf(why, why_len, "cuDNN: %s not supported here: %s", pass_name(conv->pass),
                 cudnnGetErrorString(status));
        return false;
    }
    CUDNN_CHECK(status);

    int other_math = 0;
    cudnnStatus_t first_failure = CUDNN_STATUS_SUCCESS;
    for (int i = 0; i < count; i++) {
        cudnnStatus_t fused = CUDNN_STATUS_SUCCESS;
        if (found[i].status != CUDNN_STATUS_SUCCESS) {
            if (first_failure == CUDNN_STATUS_SUCCESS)
                first_failure = found[i].status;
        } else if (!math_matches(conv->dtype, found[i].math)) {
            other_math++;
        } else if (conv->fused && (fused = fused_status(conv, buf, &found[i])) != CUDNN_STATUS_SUCCESS) {
            if (first_failure == CUDNN_STATUS_SUCCESS)
                first_failure = fused;
        } else {
            *best = found[i];
            free(found);
            return true;
        }
    }
    free(found);
    if (other_math > 0)
        snprintf(why, why_len, "cuDNN: no %s algorithm in %s math (%d ran in other modes)", pass_name(conv->pass),
                 conv->dtype == DTYPE_F32 ? "FMA" : "tensor-op", other_math);
    else
        snprintf(why, why_len, "cuDNN: no %s%s algorithm ran: %s", conv->fused ? "fused " : "",
                 pass_name(conv->pass),
                 first_failure == CUDNN_STATUS_SUCCESS ? "none returned" : cudnnGetErrorString(first_failure));
    return false;
}

cudnn_conv *cudnn_conv_create(const conv_problem *prob, conv_pass pass, conv_dtype dtype, conv_layout layout,
                              const epilogue_ops *fused, char *why, size_t why_len)
{
    if (fused && (pass != PASS_FPROP || fused->scale_shift)) {
        snprintf(why, why_len, "cuDNN's fused call is fprop only, with no per-channel scale (fold it into w)");
        return NULL;
    }
    cudnn_conv *conv = xmalloc(sizeof *conv);
    *conv = (cudnn_conv){.handle = cudnn_handle(), .pass = pass, .dtype = dtype, .algo = -1};
    const cudnnTensorFormat_t format = layout == LAYOUT_NHWC ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    const cudnnDataType_t data_type = dtype == DTYPE_F16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;

    /* Activations and filters share one format flag: NCHW goes with KCRS filters, NHWC with KRSC, the
     * pairing our kernels use. */
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&conv->x_desc));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&conv->y_desc));
    CUDNN_CHECK(cudnnCreateFilterDescriptor(&conv->w_desc));
    CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv->conv_desc));
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(conv->x_desc, format, data_type, prob->n, prob->c, prob->h, prob->w));
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(conv->y_desc, format, data_type, prob->n, prob->k, prob->p, prob->q));
    CUDNN_CHECK(cudnnSetFilter4dDescriptor(conv->w_desc, data_type, format, prob->k, prob->c / prob->groups,
                                           prob->r, prob->s));
    /* Cross-correlation is what deep learning calls convolution (no filter flip), and what we compute.
     * The compute type is fp32 for fp16 data too: fp32 accumulation, like our kernels. */
    CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv->conv_desc, prob->pad_h, prob->pad_w, prob->stride_h,
                                                prob->stride_w, prob->dil_h, prob->dil_w, CUDNN_CROSS_CORRELATION,
                                                CUDNN_DATA_FLOAT));
    CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv->conv_desc, prob->groups));
    CUDNN_CHECK(cudnnSetConvolutionMathType(conv->conv_desc, requested_math(dtype)));

    int n, k, p, q;
    CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(conv->conv_desc, conv->x_desc, conv->w_desc, &n, &k, &p, &q));
    if (n != prob->n || k != prob->k || p != prob->p || q != prob->q)
        fail("cudnn_conv: cuDNN computes output [%d,%d,%d,%d] but the problem says [%d,%d,%d,%d]", n, k, p, q,
             prob->n, prob->k, prob->p, prob->q);

    if (fused) {
        conv->fused = true;
        conv->relu = fused->relu;
        conv->alpha2 = fused->residual ? 1.0f : 0.0f;
        /* The bias is one value per output channel, [1,K,1,1], in y's data type (the documented
         * configurations: HALF for fp16 data with fp32 compute, FLOAT for fp32). */
        CUDNN_CHECK(cudnnCreateTensorDescriptor(&conv->bias_desc));
        CUDNN_CHECK(cudnnSetTensor4dDescriptor(conv->bias_desc, format, data_type, 1, prob->k, 1, 1));
        /* IDENTITY exists for exactly this call, to skip the activation; the coefficient is for clipped
         * ReLU and ELU only. */
        CUDNN_CHECK(cudnnCreateActivationDescriptor(&conv->act_desc));
        CUDNN_CHECK(cudnnSetActivationDescriptor(conv->act_desc,
                                                 fused->relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY,
                                                 CUDNN_NOT_PROPAGATE_NAN, 0.0));
    }
    return conv;
}

bool cudnn_conv_find(cudnn_conv *conv, const cudnn_conv_buffers *buffers, char *why, size_t why_len)
{
    CUDA_CHECK(cudaFree(conv->workspace));
    /* Find tries each algorithm with this much scratch and skips those that need more. A quarter of
     * what is free (at most 1 GiB) admits every algorithm worth having without crowding the device. */
    size_t free_bytes, total_bytes;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    conv->workspace_bytes = free_bytes / 4 < GIB ? free_bytes / 4 : GIB;
    if (!try_device_alloc(&conv->workspace, conv->workspace_bytes)) {
        snprintf(why, why_len, "cuDNN: out of device memory for the search workspace (%.0f MiB)",
                 (double)conv->workspace_bytes / MIB);
        conv->workspace_bytes = 0;
        return false;
    }
    found_algo best;
    const bool found = choose_algo(conv, buffers, &best, why, why_len);
    CUDA_CHECK(cudaFree(conv->workspace));
    conv->workspace = NULL;
    conv->workspace_bytes = 0;
    if (!found)
        return false;

    /* Run the winner as cuDNN would: the algorithm and math mode together pick the kernel, with
     * exactly the workspace it asked for. */
    conv->algo = best.algo;
    CUDNN_CHECK(cudnnSetConvolutionMathType(conv->conv_desc, best.math));
    if (!try_device_alloc(&conv->workspace, best.memory)) {
        snprintf(why, why_len, "cuDNN: out of device memory for the workspace of %s (%.0f MiB)",
                 algo_name(conv->pass, conv->algo), (double)best.memory / MIB);
        conv->algo = -1;
        return false;
    }
    conv->workspace_bytes = best.memory;
    return true;
}

void cudnn_conv_run(const cudnn_conv *conv, const cudnn_conv_buffers *buf)
{
    if (conv->algo < 0)
        fail("cudnn_conv_run: no algorithm yet (call cudnn_conv_find first)");
    const float one = 1.0f, zero = 0.0f; /* float scaling factors for fp32 and fp16 data alike */
    if (conv->fused) {
        CUDNN_CHECK(fused_forward(conv, buf, conv->workspace_bytes));
        return;
    }
    switch (conv->pass) {
    case PASS_FPROP:
        CUDNN_CHECK(cudnnConvolutionForward(conv->handle, &one, conv->x_desc, buf->x, conv->w_desc, buf->w,
                                            conv->conv_desc, (cudnnConvolutionFwdAlgo_t)conv->algo, conv->workspace,
                                            conv->workspace_bytes, &zero, conv->y_desc, buf->y));
        break;
    case PASS_DGRAD:
        CUDNN_CHECK(cudnnConvolutionBackwardData(conv->handle, &one, conv->w_desc, buf->w, conv->y_desc, buf->y,
                                                 conv->conv_desc, (cudnnConvolutionBwdDataAlgo_t)conv->algo,
                                                 conv->workspace, conv->workspace_bytes, &zero, conv->x_desc,
                                                 buf->x));
        break;
    case PASS_WGRAD:
        CUDNN_CHECK(cudnnConvolutionBackwardFilter(conv->handle, &one, conv->x_desc, buf->x, conv->y_desc, buf->y,
                                                   conv->conv_desc, (cudnnConvolutionBwdFilterAlgo_t)conv->algo,
                                                   conv->workspace, conv->workspace_bytes, &zero, conv->w_desc,
                                                   buf->w));
        break;
    }
}

const char *cudnn_conv_algo(const cudnn_conv *conv)
{
    return conv->algo < 0 ? "none" : algo_name(conv->pass, conv->algo);
}

size_t cudnn_conv_workspace_bytes(const cudnn_conv *conv)
{
    return conv->workspace_bytes;
}

void cudnn_conv_destroy(cudnn_conv *conv)
{
    if (!conv)
        return;
    CUDA_CHECK(cudaFree(conv->workspace));
    if (conv->fused) {
        CUDNN_CHECK(cudnnDestroyActivationDescriptor(conv->act_desc));
        CUDNN_CHECK(cudnnDestroyTensorDescriptor(conv->bias_desc));
    }
    CUDNN_CHECK(cudnnDestroyConvolutionDescriptor(conv->conv_desc));
    CUDNN_CHECK(cudnnDestroyFilterDescriptor(conv->w_desc));
    CUDNN_CHECK(cudnnDestroyTensorDescriptor(conv->y_desc));
    CUDNN_CHECK(cudnnDestroyTensorDescriptor(conv->x_desc));
    free(conv);
}

const char *cudnn_version_string(void)
{
    static char version[32];
    if (!version[0]) {
        size_t v = cudnnGetVersion(); /* major * 10000 + minor * 100 + patch since cuDNN 9 */
        snprintf(version, sizeof version, "%zu.%zu.%zu", v / 10000, v / 100 % 100, v % 100);
    }
    return version;
}

#else /* no cuDNN in this build: nothing can be created, so nothing else is ever reached */

cudnn_conv *cudnn_conv_create(const conv_problem *prob, conv_pass pass, conv_dtype dtype, conv_layout layout,
                              const epilogue_ops *fused, char *why, size_t why_len)
{
    (void)prob;
    (void)pass;
    (void)dtype;
    (void)layout;
    (void)fused;
    snprintf(why, why_len, "cuDNN not built in");
    return NULL;
}

bool cudnn_conv_find(cudnn_conv *conv, const cudnn_conv_buffers *buffers, char *why, size_t why_len)
{
    (void)conv;
    (void)buffers;
    snprintf(why, why_len, "cuDNN not built in");
    return false;
}

void cudnn_conv_run(const cudnn_conv *conv, const cudnn_conv_buffers *buffers)
{
    (void)conv;
    (void)buffers;
    fail("cudnn_conv_run: cuDNN not built in");
}

const char *cudnn_conv_algo(const cudnn_conv *conv)
{
    (void)conv;
    return "none";
}

size_t cudnn_conv_workspace_bytes(const cudnn_conv *conv)
{
    (void)conv;
    return 0;
}

void cudnn_conv_destroy(cudnn_conv *conv)
{
    (void)conv;
}

const char *cudnn_version_string(void)
{
    return "n/a";
}

#endif
