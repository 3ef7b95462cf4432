/* baseline.c: the numbers every chapter's kernels are held against.
 *
 * cuDNN gives the speed a tuned library reaches on the same problem; cuBLAS gives the hardware
 * ceilings (fp16 tensor-core rate, fp32 FMA rate, copy bandwidth) the roofline is drawn with. Both
 * are timed with time_gpu(), exactly as our kernels are, so the comparison differs only in the code.
 *
 * The comparison is only fair in the same precision. For fp32, cuDNN gets CUDNN_FMA_MATH and cuBLAS
 * pedantic math: otherwise on Ampere and later both may quietly run fp32 work as TF32 (a 10-bit
 * mantissa) on tensor cores and "beat" an fp32 kernel with a less precise one. For fp16, both compute
 * with fp16 operands and fp32 accumulation, as our fp16 kernels do.
 *
 * The legacy cuDNN convolution API is deprecated in cuDNN 9 but still the shortest honest route to
 * "the fastest algorithm cuDNN has for this convolution"; its deprecation warnings are opt-in
 * (CUDNN_WARN_DEPRECATED), so the build stays quiet.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#if defined(HAVE_CUDNN) && HAVE_CUDNN
#include <cudnn.h>
#endif

#include "baseline.h"
#include "check.h"
#include "conv.h"
#include "epilogue.h"
#include "tensor.h"
#include "timing.h"

#define MIB (1024.0 * 1024.0)
#define GIB ((size_t)1 << 30)

/* cudaMalloc that treats running out of device memory as an answer rather than an error: a large
 * problem that fits our kernel may not leave room for cuDNN's, and that deserves "n/a", not an exit.
 * Returns false (with *ptr NULL and the error cleared) only for cudaErrorMemoryAllocation. */
static bool try_device_alloc(void **ptr, size_t bytes)
{
    *ptr = NULL;
    if (bytes == 0)
        return true;
    cudaError_t err = cudaMalloc(ptr, bytes);
    if (err == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        *ptr = NULL;
        return false;
    }
    CUDA_CHECK(err);
    return true;
}

#if defined(HAVE_CUDNN) && HAVE_CUDNN

/* One handle for the whole process: creating it loads cuDNN's kernels, far too slow to repeat per
 * problem. Its stream is the default stream, the one time_gpu() records its events on. */
static cudnnHandle_t cudnn_handle(void)
{
    static cudnnHandle_t handle;
    if (!handle)
        CUDNN_CHECK(cudnnCreate(&handle));
    return handle;
}

/* Everything one cuDNN call needs; the timed callback reads it. */
typedef struct {
    cudnnHandle_t handle;
    conv_pass pass;
    cudnnTensorDescriptor_t x_desc, y_desc;
    cudnnFilterDescriptor_t w_desc;
    cudnnConvolutionDescriptor_t conv_desc;
    void *x, *w, *y;
    void *workspace;
    size_t workspace_bytes;
    int algo; /* a cudnnConvolutionFwdAlgo_t, BwdDataAlgo_t or BwdFilterAlgo_t, as pass says */
    /* The fused fprop (cudnn_fused_best): y = act(conv(x) + alpha2 * z + bias), bias [1,K,1,1] in y's
     * data type, z the residual (alpha2 = 1) or y itself, unread (alpha2 = 0). */
    bool fused;
    epilogue_ops ops;
    cudnnTensorDescriptor_t bias_desc;
    cudnnActivationDescriptor_t act_desc;
    void *bias, *z;
    float alpha2;
} cudnn_run;

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

/* cudnnFind*Ex for the run's pass over every algorithm cuDNN has, measured on the real buffers with
 * the run's workspace. Returns Find's own status; *found (the caller frees it) holds *count rows,
 * fastest first. */
static cudnnStatus_t find_algos(const cudnn_run *run, found_algo **found, int *count)
{
    cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
    int max = 0;
    *count = 0;
    switch (run->pass) {
    case PASS_FPROP: {
        CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(run->handle, &max));
        cudnnConvolutionFwdAlgoPerf_t *perf = xmalloc((size_t)max * sizeof *perf);
        *found = xmalloc((size_t)max * sizeof **found);
        status = cudnnFindConvolutionForwardAlgorithmEx(
            run->handle, run->x_desc, run->x, run->w_desc, run->w, run->conv_desc, run->y_desc, run->y, max,
            count, perf, run->workspace, run->workspace_bytes);
        for (int i = 0; status == CUDNN_STATUS_SUCCESS && i < *count; i++)
            (*found)[i] = (found_algo){(int)perf[i].algo, perf[i].status, perf[i].memory, perf[i].mathType};
        free(perf);
        break;
    }
    case PASS_DGRAD: {
        CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(run->handle, &max));
        cudnnConvolutionBwdDataAlgoPerf_t *perf = xmalloc((size_t)max * sizeof *perf);
        *found = xmalloc((size_t)max * sizeof **found);
        status = cudnnFindConvolutionBackwardDataAlgorithmEx(
            run->handle, run->w_desc, run->w, run->y_desc, run->y, run->conv_desc, run->x_desc, run->x, max,
            count, perf, run->workspace, run->workspace_bytes);
        for (int i = 0; status == CUDNN_STATUS_SUCCESS && i < *count; i++)
            (*found)[i] = (found_algo){(int)perf[i].algo, perf[i].status, perf[i].memory, perf[i].mathType};
        free(perf);
        break;
    }
    case PASS_WGRAD: {
        CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(run->handle, &max));
        cudnnConvolutionBwdFilterAlgoPerf_t *perf = xmalloc((size_t)max * sizeof *perf);
        *found = xmalloc((size_t)max * sizeof **found);
        status = cudnnFindConvolutionBackwardFilterAlgorithmEx(
            run->handle, run->x_desc, run->x, run->y_desc, run->y, run->conv_desc, run->w_desc, run->w, max,
            count, perf, run->workspace, run->workspace_bytes);
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

/* One fused call with the run's algorithm; its status, unchecked: choose_algo() tries candidates with it. */
static cudnnStatus_t fused_forward(const cudnn_run *run)
{
    const float one = 1.0f;
    return cudnnConvolutionBiasActivationForward(run->handle, &one, run->x_desc, run->x, run->w_desc, run->w,
                                                 run->conv_desc, (cudnnConvolutionFwdAlgo_t)run->algo,
                                                 run->workspace, run->workspace_bytes, &run->alpha2, run->y_desc,
                                                 run->z, run->bias_desc, run->bias, run->act_desc, run->y_desc,
                                                 run->y);
}

/* The timed work: one convolution call, alpha 1 and beta 0 (so the output is written, never read);
 * or one fused call. Scaling factors are float for both fp32 and fp16 data. */
static void cudnn_enqueue(void *ctx)
{
    const cudnn_run *run = ctx;
    const float one = 1.0f, zero = 0.0f;
    if (run->fused) {
        CUDNN_CHECK(fused_forward(run));
        return;
    }
    switch (run->pass) {
    case PASS_FPROP:
        CUDNN_CHECK(cudnnConvolutionForward(run->handle, &one, run->x_desc, run->x, run->w_desc, run->w,
                                            run->conv_desc, (cudnnConvolutionFwdAlgo_t)run->algo, run->workspace,
                                            run->workspace_bytes, &zero, run->y_desc, run->y));
        break;
    case PASS_DGRAD:
        CUDNN_CHECK(cudnnConvolutionBackwardData(run->handle, &one, run->w_desc, run->w, run->y_desc, run->y,
                                                 run->conv_desc, (cudnnConvolutionBwdDataAlgo_t)run->algo,
                                                 run->workspace, run->workspace_bytes, &zero, run->x_desc,
                                                 run->x));
        break;
    case PASS_WGRAD:
        CUDNN_CHECK(cudnnConvolutionBackwardFilter(run->handle, &one, run->x_desc, run->x, run->y_desc, run->y,
                                                   run->conv_desc, (cudnnConvolutionBwdFilterAlgo_t)run->algo,
                                                   run->workspace, run->workspace_bytes, &zero, run->w_desc,
                                                   run->w));
        break;
    }
}

/* Describes the problem to cuDNN. Activations and filters share one format flag: NCHW goes with KCRS
 * filters, NHWC with KRSC, the pairing our kernels use. */
static void describe_problem(cudnn_run *run, const conv_problem *prob, conv_dtype dtype, conv_layout layout)
{
    cudnnTensorFormat_t format = layout == LAYOUT_NHWC ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    cudnnDataType_t data_type = dtype == DTYPE_F16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;

    CUDNN_CHECK(cudnnCreateTensorDescriptor(&run->x_desc));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&run->y_desc));
    CUDNN_CHECK(cudnnCreateFilterDescriptor(&run->w_desc));
    CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&run->conv_desc));

    CUDNN_CHECK(cudnnSetTensor4dDescriptor(run->x_desc, format, data_type, prob->n, prob->c, prob->h, prob->w));
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(run->y_desc, format, data_type, prob->n, prob->k, prob->p, prob->q));
    CUDNN_CHECK(cudnnSetFilter4dDescriptor(run->w_desc, data_type, format, prob->k, prob->c / prob->groups,
                                           prob->r, prob->s));
    /* Cross-correlation is what deep learning calls convolution (no filter flip), and what we compute.
     * The compute type is fp32 for fp16 data too: fp32 accumulation, like our kernels. */
    CUDNN_CHECK(cudnnSetConvolution2dDescriptor(run->conv_desc, prob->pad_h, prob->pad_w, prob->stride_h,
                                                prob->stride_w, prob->dil_h, prob->dil_w, CUDNN_CROSS_CORRELATION,
                                                CUDNN_DATA_FLOAT));
    CUDNN_CHECK(cudnnSetConvolutionGroupCount(run->conv_desc, prob->groups));
    CUDNN_CHECK(cudnnSetConvolutionMathType(run->conv_desc, requested_math(dtype)));

    int n, k, p, q;
    CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(run->conv_desc, run->x_desc, run->w_desc, &n, &k, &p, &q));
    if (n != prob->n || k != prob->k || p != prob->p || q != prob->q)
        fail("cudnn_best: cuDNN computes output [%d,%d,%d,%d] but the problem says [%d,%d,%d,%d]", n, k, p, q,
             prob->n, prob->k, prob->p, prob->q);
}

/* Whether the fused call runs with a candidate Find measured for the plain convolution: the fused API
 * takes fewer. With the identity activation the documentation allows IMPLICIT_PRECOMP_GEMM only; for
 * the rest, one call on the real buffers and its status answer. The call is told the workspace is the
 * size the candidate asked for, the size it will be timed with. Leaves the candidate's algorithm and
 * math mode set. */
static cudnnStatus_t fused_status(cudnn_run *run, const found_algo *candidate)
{
    if (!run->ops.relu && candidate->algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)
        return CUDNN_STATUS_NOT_SUPPORTED;
    run->algo = candidate->algo;
    CUDNN_CHECK(cudnnSetConvolutionMathType(run->conv_desc, candidate->math));
    cudnn_run trial = *run;
    trial.workspace_bytes = candidate->memory;
    return fused_forward(&trial);
}

/* Runs cudnnFind and picks the algorithm to time: Find lists them fastest first, so the first that ran
 * in a matching math mode (and for a fused run, that the fused call accepts). Returns false, with why
 * filled in, when there is none. */
static bool choose_algo(cudnn_run *run, conv_dtype dtype, found_algo *best, char *why, size_t why_len)
{
    found_algo *found = NULL;
    int count = 0;
    cudnnStatus_t status = find_algos(run, &found, &count);
    if (CUDNN_STATUS_CATEGORY(status) == CUDNN_STATUS_NOT_SUPPORTED) {
        free(found);
        snprintf(why, why_len, "cuDNN: %s not supported here: %s", pass_name(run->pass),
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
        } else if (!math_matches(dtype, found[i].math)) {
            other_math++;
        } else if (run->fused && (fused = fused_status(run, &found[i])) != CUDNN_STATUS_SUCCESS) {
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
        snprintf(why, why_len, "cuDNN: no %s algorithm in %s math (%d ran in other modes)", pass_name(run->pass),
                 dtype == DTYPE_F32 ? "FMA" : "tensor-op", other_math);
    else
        snprintf(why, why_len, "cuDNN: no %s%s algorithm ran: %s", run->fused ? "fused " : "", pass_name(run->pass),
                 first_failure == CUDNN_STATUS_SUCCESS ? "none returned" : cudnnGetErrorString(first_failure));
    return false;
}

/* Allocates and fills the run's buffers, finds the algorithm and times it. Whatever it allocates it
 * leaves in run for the caller to free, so every way out is a plain return. */
static void measure(cudnn_run *run, const conv_problem *prob, conv_dtype dtype, const timing_opts *opts,
                    baseline_result *result)
{
    size_t x_elems = (size_t)problem_x_elems(prob);
    size_t w_elems = (size_t)problem_w_elems(prob);
    size_t y_elems = (size_t)problem_y_elems(prob);
    size_t elem = dtype_size(dtype);
    if (!try_device_alloc(&run->x, x_elems * elem) || !try_device_alloc(&run->w, w_elems * elem) ||
        !try_device_alloc(&run->y, y_elems * elem)) {
        snprintf(result->why, sizeof result->why, "cuDNN: out of device memory for x, w, y (%.0f MiB)",
                 (double)((x_elems + w_elems + y_elems) * elem) / MIB);
        return;
    }
    /* Only the pass's inputs: its output is overwritten. Random, never zeros: a GPU multiplying zeros
     * toggles fewer bits, draws less power and holds higher clocks than it would on real data. */
    if (run->pass != PASS_DGRAD)
        fill_uniform_device(run->x, x_elems, dtype, 1);
    if (run->pass != PASS_WGRAD)
        fill_uniform_device(run->w, w_elems, dtype, 2);
    if (run->pass != PASS_FPROP)
        fill_uniform_device(run->y, y_elems, dtype, 3);
    /* The fused call always adds a bias: zeros where none was asked for. */
    if (run->fused) {
        if (!try_device_alloc(&run->bias, (size_t)prob->k * elem) ||
            (run->ops.residual && !try_device_alloc(&run->z, y_elems * elem))) {
            snprintf(result->why, sizeof result->why, "cuDNN: out of device memory for the bias and residual");
            return;
        }
        if (run->ops.bias)
            fill_uniform_device(run->bias, (size_t)prob->k, dtype, 7);
        else
            CUDA_CHECK(cudaMemset(run->bias, 0, (size_t)prob->k * elem));
        if (run->ops.residual)
            fill_uniform_device(run->z, y_elems, dtype, 8);
        else
            run->z = run->y; /* alpha2 = 0: never read, and the API lets z alias y */
    }

    /* Find tries each algorithm with this much scratch and skips those that need more. A quarter of
     * what is free (at most 1 GiB) admits every algorithm worth having without crowding the device. */
    size_t free_bytes, total_bytes;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    run->workspace_bytes = free_bytes / 4 < GIB ? free_bytes / 4 : GIB;
    if (!try_device_alloc(&run->workspace, run->workspace_bytes)) {
        snprintf(result->why, sizeof result->why, "cuDNN: out of device memory for the search workspace (%.0f MiB)",
                 (double)run->workspace_bytes / MIB);
        return;
    }

    found_algo best;
    if (!choose_algo(run, dtype, &best, result->why, sizeof result->why))
        return;

    /* Time the winner as cuDNN would run it: the algorithm and math mode together pick the kernel,
     * with exactly the workspace it asked for. */
    run->algo = best.algo;
    CUDNN_CHECK(cudnnSetConvolutionMathType(run->conv_desc, best.math));
    CUDA_CHECK(cudaFree(run->workspace));
    run->workspace_bytes = best.memory;
    if (!try_device_alloc(&run->workspace, run->workspace_bytes)) {
        snprintf(result->why, sizeof result->why, "cuDNN: out of device memory for the workspace of %s (%.0f MiB)",
                 algo_name(run->pass, run->algo), (double)run->workspace_bytes / MIB);
        return;
    }

    timing_result timing = time_gpu(cudnn_enqueue, run, opts);
    result->ok = true;
    result->ms = timing.median_ms;
    snprintf(result->algo, sizeof result->algo, "%s", algo_name(run->pass, run->algo));
}

baseline_result cudnn_best(const conv_problem *prob, conv_pass pass, conv_dtype dtype, conv_layout layout,
                           const timing_opts *opts)
{
    baseline_result result = {0};
    cudnn_run run = {.handle = cudnn_handle(), .pass = pass};

    describe_problem(&run, prob, dtype, layout);
    measure(&run, prob, dtype, opts, &result);

    CUDA_CHECK(cudaFree(run.workspace));
    CUDA_CHECK(cudaFree(run.y));
    CUDA_CHECK(cudaFree(run.w));
    CUDA_CHECK(cudaFree(run.x));
    CUDNN_CHECK(cudnnDestroyConvolutionDescriptor(run.conv_desc));
    CUDNN_CHECK(cudnnDestroyFilterDescriptor(run.w_desc));
    CUDNN_CHECK(cudnnDestroyTensorDescriptor(run.y_desc));
    CUDNN_CHECK(cudnnDestroyTensorDescriptor(run.x_desc));
    return result;
}

/* cuDNN's fused convolution: cudnnConvolutionBiasActivationForward computes
 * y = act(alpha1 * conv(x) + alpha2 * z + bias) in one call, the legacy API's conv+bias+activation.
 * Our epilogue maps onto it as alpha1 = 1, bias, z = the residual with alpha2 = 1 (else 0), act = RELU
 * or IDENTITY. Batch norm's per-channel scale has no place in it (alpha1 is one scalar). How many
 * kernels the one call launches is cuDNN's choice, per algorithm; what is timed is the call. */
baseline_result cudnn_fused_best(const conv_problem *prob, conv_dtype dtype, conv_layout layout, epilogue_ops ops,
                                 const timing_opts *opts)
{
    baseline_result result = {0};
    if (ops.scale_shift) {
        snprintf(result.why, sizeof result.why, "cuDNN's fused API has no per-channel scale");
        return result;
    }
    cudnn_run run = {.handle = cudnn_handle(), .pass = PASS_FPROP, .fused = true, .ops = ops,
                     .alpha2 = ops.residual ? 1.0f : 0.0f};

    describe_problem(&run, prob, dtype, layout);
    /* The bias is one value per output channel, [1,K,1,1], in y's data type (the documented
     * configurations: HALF for fp16 data with fp32 compute, FLOAT for fp32). */
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&run.bias_desc));
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(run.bias_desc, layout == LAYOUT_NHWC ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                           dtype == DTYPE_F16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT, 1, prob->k, 1, 1));
    /* IDENTITY exists for exactly this call, to skip the activation; the coefficient is for clipped
     * ReLU and ELU only. */
    CUDNN_CHECK(cudnnCreateActivationDescriptor(&run.act_desc));
    CUDNN_CHECK(cudnnSetActivationDescriptor(run.act_desc, ops.relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY,
                                             CUDNN_NOT_PROPAGATE_NAN, 0.0));
    measure(&run, prob, dtype, opts, &result);

    if (run.z != run.y)
        CUDA_CHECK(cudaFree(run.z));
    CUDA_CHECK(cudaFree(run.bias));
    CUDA_CHECK(cudaFree(run.workspace));
    CUDA_CHECK(cudaFree(run.y));
    CUDA_CHECK(cudaFree(run.w));
    CUDA_CHECK(cudaFree(run.x));
    CUDNN_CHECK(cudnnDestroyActivationDescriptor(run.act_desc));
    CUDNN_CHECK(cudnnDestroyTensorDescriptor(run.bias_desc));
    CUDNN_CHECK(cudnnDestroyConvolutionDescriptor(run.conv_desc));
    CUDNN_CHECK(cudnnDestroyFilterDescriptor(run.w_desc));
    CUDNN_CHECK(cudnnDestroyTensorDescriptor(run.y_desc));
    CUDNN_CHECK(cudnnDestroyTensorDescriptor(run.x_desc));
    return result;
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

#else /* no cuDNN in this build */

baseline_result cudnn_best(const conv_problem *prob, conv_pass pass, conv_dtype dtype, conv_layout layout,
                           const timing_opts *opts)
{
    (void)prob;
    (void)pass;
    (void)dtype;
    (void)layout;
    (void)opts;
    baseline_result result = {.ok = false, .why = "cuDNN not built in"};
    return result;
}

baseline_result cudnn_fused_best(const conv_problem *prob, conv_dtype dtype, conv_layout layout, epilogue_ops ops,
                                 const timing_opts *opts)
{
    (void)prob;
    (void)dtype;
    (void)layout;
    (void)ops;
    (void)opts;
    baseline_result result = {.ok = false, .why = "cuDNN not built in"};
    return result;
}

const char *cudnn_version_string(void)
{
    return "n/a";
}

#endif

/* The ceilings: large square problems on which cuBLAS runs at the hardware's rate. */

#define GEMM_SIZE 8192 /* m = n = k: big enough that every SM is busy and launch costs vanish */

typedef struct {
    cublasHandle_t handle;
    conv_dtype dtype;
    void *a, *b, *c;
} gemm_run;

static void gemm_enqueue(void *ctx)
{
    const gemm_run *run = ctx;
    const float one = 1.0f, zero = 0.0f;
    const int n = GEMM_SIZE;
    if (run->dtype == DTYPE_F16)
        CUBLAS_CHECK(cublasGemmEx(run->handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, run->a, CUDA_R_16F, n,
                                  run->b, CUDA_R_16F, n, &zero, run->c, CUDA_R_16F, n, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT));
    else
        CUBLAS_CHECK(cublasSgemm(run->handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, run->a, n, run->b, n, &zero,
                                 run->c, n));
}

/* A handle per measurement, destroyed after it, so cuBLAS's own workspace does not stay on the device
 * while the convolutions are measured. */
static double gemm_tflops(conv_dtype dtype)
{
    const size_t elems = (size_t)GEMM_SIZE * GEMM_SIZE;
    const size_t bytes = elems * dtype_size(dtype);
    gemm_run run = {.dtype = dtype};

    CUBLAS_CHECK(cublasCreate(&run.handle));
    /* Pedantic math pins SGEMM to true fp32 whatever the environment asks for (no TF32, no BF16x9
     * emulation), so the fp32 ceiling is an fp32 rate. */
    CUBLAS_CHECK(cublasSetMathMode(run.handle, dtype == DTYPE_F32 ? CUBLAS_PEDANTIC_MATH : CUBLAS_DEFAULT_MATH));
    CUDA_CHECK(cudaMalloc(&run.a, bytes));
    CUDA_CHECK(cudaMalloc(&run.b, bytes));
    CUDA_CHECK(cudaMalloc(&run.c, bytes));
    fill_uniform_device(run.a, elems, dtype, 4);
    fill_uniform_device(run.b, elems, dtype, 5);

    timing_opts opts = timing_defaults();
    timing_result timing = time_gpu(gemm_enqueue, &run, &opts);

    CUDA_CHECK(cudaFree(run.c));
    CUDA_CHECK(cudaFree(run.b));
    CUDA_CHECK(cudaFree(run.a));
    CUBLAS_CHECK(cublasDestroy(run.handle));
    return 2.0 * GEMM_SIZE * GEMM_SIZE * GEMM_SIZE / (timing.median_ms * 1e9);
}

double ceiling_fp16_tflops(void)
{
    static double tflops;
    if (tflops == 0.0)
        tflops = gemm_tflops(DTYPE_F16);
    return tflops;
}

double ceiling_fp32_tflops(void)
{
    static double tflops;
    if (tflops == 0.0)
        tflops = gemm_tflops(DTYPE_F32);
    return tflops;
}

typedef struct {
    void *dst;
    const void *src;
    size_t bytes;
} copy_run;

static void copy_enqueue(void *ctx)
{
    const copy_run *run = ctx;
    CUDA_CHECK(cudaMemcpyAsync(run->dst, run->src, run->bytes, cudaMemcpyDeviceToDevice, 0));
}

double ceiling_copy_gbps(void)
{
    static double gbps;
    if (gbps > 0.0)
        return gbps;

    /* 1 GiB each way takes long enough that launch and event overheads vanish; smaller where a third
     * of free memory is less, so source and destination fit with room to spare. */
    size_t free_bytes, total_bytes;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    copy_run run = {.bytes = free_bytes / 3 < GIB ? free_bytes / 3 : GIB};
    run.bytes -= run.bytes % 4096;
    void *src;
    CUDA_CHECK(cudaMalloc(&src, run.bytes));
    CUDA_CHECK(cudaMalloc(&run.dst, run.bytes));
    fill_uniform_device(src, run.bytes / sizeof(float), DTYPE_F32, 6);
    run.src = src;

    timing_opts opts = timing_defaults();
    timing_result timing = time_gpu(copy_enqueue, &run, &opts);

    CUDA_CHECK(cudaFree(run.dst));
    CUDA_CHECK(cudaFree(src));
    gbps = 2.0 * (double)run.bytes / (timing.median_ms * 1e6);
    return gbps;
}
