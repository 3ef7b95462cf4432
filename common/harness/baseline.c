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
 * cuDNN's algorithm search and calls live in cudnn_conv.c.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "baseline.h"
#include "check.h"
#include "conv.h"
#include "epilogue.h"
#include "tensor.h"
#include "timing.h"

#define MIB (1024.0 * 1024.0)
#define GIB ((size_t)1 << 30)

/* What a cuDNN measurement runs: the convolution and the buffers it reads and writes. */
typedef struct {
    const cudnn_conv *conv;
    cudnn_conv_buffers buf;
} cudnn_timed;

static void cudnn_enqueue(void *ctx)
{
    const cudnn_timed *run = ctx;
    cudnn_conv_run(run->conv, &run->buf);
}

/* Allocates and fills buffers for the pass (and a fused call's bias and residual), finds cuDNN's best
 * algorithm on them and times it. Random inputs, never zeros: a GPU multiplying zeros toggles fewer
 * bits, draws less power and holds higher clocks than it would on real data. */
static baseline_result measure(const conv_problem *prob, conv_pass pass, conv_dtype dtype, conv_layout layout,
                               const epilogue_ops *fused, const timing_opts *opts)
{
    baseline_result result = {0};
    cudnn_conv *conv = cudnn_conv_create(prob, pass, dtype, layout, fused, result.why, sizeof result.why);
    if (!conv)
        return result;

    const size_t x_elems = (size_t)problem_x_elems(prob), w_elems = (size_t)problem_w_elems(prob);
    const size_t y_elems = (size_t)problem_y_elems(prob), elem = dtype_size(dtype);
    cudnn_timed run = {.conv = conv};
    void *bias = NULL, *z = NULL;
    if (!try_device_alloc(&run.buf.x, x_elems * elem) || !try_device_alloc(&run.buf.w, w_elems * elem) ||
        !try_device_alloc(&run.buf.y, y_elems * elem)) {
        snprintf(result.why, sizeof result.why, "cuDNN: out of device memory for x, w, y (%.0f MiB)",
                 (double)((x_elems + w_elems + y_elems) * elem) / MIB);
    } else if (fused && (!try_device_alloc(&bias, (size_t)prob->k * elem) ||
                         (fused->residual && !try_device_alloc(&z, y_elems * elem)))) {
        snprintf(result.why, sizeof result.why, "cuDNN: out of device memory for the bias and residual");
    } else {
        /* Only the pass's inputs: its output is overwritten. */
        if (pass != PASS_DGRAD)
            fill_uniform_device(run.buf.x, x_elems, dtype, 1);
        if (pass != PASS_WGRAD)
            fill_uniform_device(run.buf.w, w_elems, dtype, 2);
        if (pass != PASS_FPROP)
            fill_uniform_device(run.buf.y, y_elems, dtype, 3);
        if (fused) {
            /* The fused call always adds a bias: zeros where none was asked for. */
            if (fused->bias)
                fill_uniform_device(bias, (size_t)prob->k, dtype, 7);
            else
                CUDA_CHECK(cudaMemset(bias, 0, (size_t)prob->k * elem));
            if (fused->residual)
                fill_uniform_device(z, y_elems, dtype, 8);
            run.buf.bias = bias;
            run.buf.z = z;
        }
        if (cudnn_conv_find(conv, &run.buf, result.why, sizeof result.why)) {
            timing_result timing = time_gpu(cudnn_enqueue, &run, opts);
            result.ok = true;
            result.ms = timing.median_ms;
            snprintf(result.algo, sizeof result.algo, "%s", cudnn_conv_algo(conv));
        }
    }
    CUDA_CHECK(cudaFree(z));
    CUDA_CHECK(cudaFree(bias));
    CUDA_CHECK(cudaFree(run.buf.y));
    CUDA_CHECK(cudaFree(run.buf.w));
    CUDA_CHECK(cudaFree(run.buf.x));
    cudnn_conv_destroy(conv);
    return result;
}

baseline_result cudnn_best(const conv_problem *prob, conv_pass pass, conv_dtype dtype, conv_layout layout,
                           const timing_opts *opts)
{
    return measure(prob, pass, dtype, layout, NULL, opts);
}

/* cuDNN's fused convolution: cudnnConvolutionBiasActivationForward computes
 * y = act(alpha1 * conv(x) + alpha2 * z + bias) in one call, the legacy API's conv+bias+activation.
 * Our epilogue maps onto it as alpha1 = 1, bias, z = the residual with alpha2 = 1 (else 0), act = RELU
 * or IDENTITY. Batch norm's per-channel scale has no place in it (alpha1 is one scalar). How many
 * kernels the one call launches is cuDNN's choice, per algorithm; what is timed is the call. */
baseline_result cudnn_fused_best(const conv_problem *prob, conv_dtype dtype, conv_layout layout, epilogue_ops ops,
                                 const timing_opts *opts)
{
    if (ops.scale_shift) {
        baseline_result result = {.ok = false, .why = "cuDNN's fused API has no per-channel scale"};
        return result;
    }
    return measure(prob, PASS_FPROP, dtype, layout, &ops, opts);
}

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
