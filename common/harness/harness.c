/* harness.c: the one path every kernel run takes (see harness.h for the steps). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "npy.h"
#include "reference.h"
#include "tensor.h"

/* Above this many flops the reference runs on the GPU (when there is one): the CPU's fp64 loops
 * manage ~1 GFLOP/s, the GPU's ~1000x that. */
#define CPU_REFERENCE_MAX_FLOPS 2e8

const char *cuda_runtime_version(void)
{
    static char text[16];
    int version = 0;
    CUDA_CHECK(cudaRuntimeGetVersion(&version));
    snprintf(text, sizeof text, "%d.%d", version / 1000, version % 1000 / 10);
    return text;
}

run_request run_request_defaults(const conv_kernel *kernel, const conv_problem *prob)
{
    run_request request = {.kernel = kernel, .prob = *prob, .seed = 42, .verify = true, .time = true,
                           .cudnn = false, .timing = timing_defaults(), .cpu_time_budget_s = 10.0};
    if (kernel->device == ON_CPU) {
        request.timing.warmup = 1;
        request.timing.flush_l2 = false;
    }
    return request;
}

/* The three tensors of a problem in logical order, and which of them a pass reads and writes. */
enum { TENSOR_X, TENSOR_W, TENSOR_Y, TENSOR_COUNT };

typedef struct {
    int dims[TENSOR_COUNT][4];
    size_t count[TENSOR_COUNT];
    int output;                    /* the tensor this pass writes */
    int inputs[2];                 /* the two it reads, in the order the sum multiplies them */
    const char *file[TENSOR_COUNT]; /* .npy names: an output gradient is dy, dx, dw */
} pass_tensors;

static pass_tensors tensors_of(const conv_problem *prob, conv_pass pass)
{
    pass_tensors t;
    problem_x_dims(prob, t.dims[TENSOR_X]);
    problem_w_dims(prob, t.dims[TENSOR_W]);
    problem_y_dims(prob, t.dims[TENSOR_Y]);
    t.count[TENSOR_X] = (size_t)problem_x_elems(prob);
    t.count[TENSOR_W] = (size_t)problem_w_elems(prob);
    t.count[TENSOR_Y] = (size_t)problem_y_elems(prob);
    switch (pass) {
    case PASS_FPROP:
        t.output = TENSOR_Y;
        t.inputs[0] = TENSOR_X, t.inputs[1] = TENSOR_W;
        t.file[TENSOR_X] = "x", t.file[TENSOR_W] = "w", t.file[TENSOR_Y] = "y";
        break;
    case PASS_DGRAD:
        t.output = TENSOR_X;
        t.inputs[0] = TENSOR_Y, t.inputs[1] = TENSOR_W;
        t.file[TENSOR_X] = "dx", t.file[TENSOR_W] = "w", t.file[TENSOR_Y] = "dy";
        break;
    case PASS_WGRAD:
        t.output = TENSOR_W;
        t.inputs[0] = TENSOR_X, t.inputs[1] = TENSOR_Y;
        t.file[TENSOR_X] = "x", t.file[TENSOR_W] = "dw", t.file[TENSOR_Y] = "dy";
        break;
    }
    return t;
}

/* DIR/NAME.npy into dst as fp32, if its shape is exactly dims[0..ndim): the 4-D tensors in logical
 * order, an epilogue's per-channel vectors as (K,). Anything else: one line, exit 2 (bad input). */
static void load_input(const char *dir, const char *name, int ndim, const int *dims, size_t count, float *dst)
{
    char path[4096], why[4200];
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    npy_array array;
    if (!npy_read(path, &array, why, sizeof why))
        fail_status(2, "%s", why);
    bool shape_ok = array.ndim == ndim;
    for (int i = 0; shape_ok && i < ndim; i++)
        shape_ok = array.shape[i] == dims[i];
    if (!shape_ok) {
        char expected[96] = "", found[160] = "";
        for (int i = 0, used = 0; i < ndim && used < (int)sizeof expected; i++)
            used += snprintf(expected + used, sizeof expected - (size_t)used, "%s%d", i ? ", " : "", dims[i]);
        for (int i = 0, used = 0; i < array.ndim && used < (int)sizeof found; i++)
            used += snprintf(found + used, sizeof found - (size_t)used, "%s%lld", i ? ", " : "",
                             (long long)array.shape[i]);
        fail_status(2, "%s: shape (%s%s) does not match the problem: expected (%s%s)%s", path, found,
                    array.ndim == 1 ? "," : "", expected, ndim == 1 ? "," : "",
                    ndim == 4 ? " in logical (NCHW / KCRS) order" : ", one value per output channel");
    }
    for (size_t i = 0; i < count; i++) {
        switch (array.type) {
        case NPY_F16: dst[i] = half_to_float(((const uint16_t *)array.data)[i]); break;
        case NPY_F32: dst[i] = ((const float *)array.data)[i]; break;
        case NPY_F64: dst[i] = (float)((const double *)array.data)[i]; break;
        default: fail_status(2, "%s: not a float array", path); /* npy_read returns floats only */
        }
    }
    free(array.data);
}

static void save_tensor(const char *dir, const char *name, int ndim, const int *dims, const void *data, npy_type type)
{
    char path[4096], why[4200];
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    int64_t shape[4];
    for (int i = 0; i < ndim; i++)
        shape[i] = dims[i];
    if (!npy_write(path, type, ndim, shape, data, why, sizeof why))
        fail("%s", why);
}

/* Saves a logical fp32 tensor in the kernel's dtype, as the kernel saw (or produced) it. */
static void save_logical(const char *dir, const char *name, const int dims[4], const float *data, size_t count,
                         conv_dtype dtype)
{
    if (dtype == DTYPE_F32) {
        save_tensor(dir, name, 4, dims, data, NPY_F32);
        return;
    }
    uint16_t *halves = xmalloc(count * sizeof *halves);
    for (size_t i = 0; i < count; i++)
        halves[i] = float_to_half(data[i]);
    save_tensor(dir, name, 4, dims, halves, NPY_F16);
    free(halves);
}

static void compute_reference(const conv_problem *prob, conv_pass pass, bool on_gpu, float *logical[TENSOR_COUNT],
                              const pass_tensors *t, double *ref)
{
    if (!on_gpu) {
        switch (pass) {
        case PASS_FPROP: ref_fprop_cpu(prob, logical[TENSOR_X], logical[TENSOR_W], ref); break;
        case PASS_DGRAD: ref_dgrad_cpu(prob, ref, logical[TENSOR_W], logical[TENSOR_Y]); break;
        case PASS_WGRAD: ref_wgrad_cpu(prob, logical[TENSOR_X], ref, logical[TENSOR_Y]); break;
        }
        return;
    }
    float *device[TENSOR_COUNT] = {NULL, NULL, NULL};
    double *device_ref;
    for (int i = 0; i < 2; i++) {
        int which = t->inputs[i];
        CUDA_CHECK(cudaMalloc((void **)&device[which], t->count[which] * sizeof(float)));
        CUDA_CHECK(cudaMemcpy(device[which], logical[which], t->count[which] * sizeof(float), cudaMemcpyHostToDevice));
    }
    CUDA_CHECK(cudaMalloc((void **)&device_ref, t->count[t->output] * sizeof(double)));
    switch (pass) {
    case PASS_FPROP: ref_fprop_gpu(prob, device[TENSOR_X], device[TENSOR_W], device_ref); break;
    case PASS_DGRAD: ref_dgrad_gpu(prob, device_ref, device[TENSOR_W], device[TENSOR_Y]); break;
    case PASS_WGRAD: ref_wgrad_gpu(prob, device[TENSOR_X], device_ref, device[TENSOR_Y]); break;
    }
    CUDA_CHECK(cudaMemcpy(ref, device_ref, t->count[t->output] * sizeof(double), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(device_ref));
    for (int i = 0; i < TENSOR_COUNT; i++)
        CUDA_CHECK(cudaFree(device[i]));
}

/* Each output's worst-case fp32 accumulation error (verify.c, step 1): accumulation_error_factor times
 * the sum of its products' magnitudes, which is the same pass on |inputs|. */
static void accumulation_bounds(const conv_problem *prob, conv_pass pass, bool on_gpu, float *logical[TENSOR_COUNT],
                                const pass_tensors *t, double *bound)
{
    float *magnitudes[TENSOR_COUNT] = {NULL, NULL, NULL};
    for (int i = 0; i < 2; i++) {
        int which = t->inputs[i];
        magnitudes[which] = xmalloc(t->count[which] * sizeof(float));
        for (size_t j = 0; j < t->count[which]; j++)
            magnitudes[which][j] = fabsf(logical[which][j]);
    }
    compute_reference(prob, pass, on_gpu, magnitudes, t, bound);
    const double factor = accumulation_error_factor(problem_reduction_length(prob, pass));
    for (size_t j = 0; j < t->count[t->output]; j++)
        bound[j] *= factor;
    for (int i = 0; i < TENSOR_COUNT; i++)
        free(magnitudes[i]);
}

typedef struct {
    const conv_kernel *kernel;
    const conv_problem *prob;
    void *buffers[TENSOR_COUNT];
    void *workspace;
    const conv_epilogue *epilogue; /* NULL: the plain launch */
} launch_context;

static void launch_once(void *ctx)
{
    launch_context *launch = ctx;
    if (launch->epilogue)
        launch->kernel->launch_fused(launch->prob, launch->buffers[TENSOR_X], launch->buffers[TENSOR_W],
                                     launch->buffers[TENSOR_Y], launch->workspace, launch->epilogue);
    else
        launch->kernel->launch(launch->prob, launch->buffers[TENSOR_X], launch->buffers[TENSOR_W],
                               launch->buffers[TENSOR_Y], launch->workspace);
    if (launch->kernel->device == ON_GPU)
        CUDA_CHECK_LAUNCH();
}

static void launch_phase_once(void *ctx)
{
    launch_context *launch = ctx;
    launch->kernel->launch_phase(launch->prob, launch->buffers[TENSOR_X], launch->buffers[TENSOR_W],
                                 launch->buffers[TENSOR_Y], launch->workspace);
    if (launch->kernel->device == ON_GPU)
        CUDA_CHECK_LAUNCH();
}

/* Copies the kernel's output back (from the device if need be) and checks it. */
static verify_result check_output(const launch_context *launch, const pass_tensors *t, const double *ref,
                                  const double *compute_bound, double input_rms_product, void *host_staging,
                                  float *logical_out)
{
    const conv_kernel *kernel = launch->kernel;
    size_t bytes = t->count[t->output] * dtype_size(kernel->dtype);
    const void *out = launch->buffers[t->output];
    if (kernel->device == ON_GPU) {
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemcpy(host_staging, out, bytes, cudaMemcpyDeviceToHost));
        out = host_staging;
    }
    unpack_tensor(out, t->dims[t->output], kernel->layout, kernel->dtype, logical_out);
    return verify_output(logical_out, ref, compute_bound, t->count[t->output], kernel->dtype,
                         problem_reduction_length(launch->prob, kernel->pass), input_rms_product);
}

static void describe_failure(char *why, size_t why_len, const verify_result *check, const pass_tensors *t,
                             const char *when)
{
    /* the statistics' verdict first; the bound per element speaks when it alone fails */
    const bool bound_only = !check->nonfinite && check->rel_l2 <= check->tol_rel && check->max_err <= check->tol_max;
    const int *d = t->dims[t->output];
    size_t i = bound_only ? check->excess_index : check->worst_index;
    char where[96];
    snprintf(where, sizeof where, "%s[%d][%d][%d][%d]", t->file[t->output], (int)(i / ((size_t)d[1] * d[2] * d[3])),
             (int)(i / ((size_t)d[2] * d[3]) % d[1]), (int)(i / d[3] % d[2]), (int)(i % d[3]));
    if (check->nonfinite)
        snprintf(why, why_len, "%s: %zu outputs are NaN/Inf (unwritten or overflowed), first at %s", when,
                 check->nonfinite, where);
    else if (bound_only)
        snprintf(why, why_len, "%s: %s is off by more than the output type's rounding of the reference plus "
                 "twice an fp32 sum's worst error: %.3gx that allowance (common/harness/verify.c)", when, where,
                 check->excess_ratio);
    else
        snprintf(why, why_len, "%s: error over tolerance: rel_l2 %.3g (tol %.3g), max %.3g (tol %.3g) at %s", when,
                 check->rel_l2, check->tol_rel, check->max_err, check->tol_max, where);
}

/* The epilogue's operands, on the host (logical order) and where the kernel reads them. */
typedef struct {
    float *bias, *scale, *shift, *residual; /* host: K floats each; residual in y's logical order */
    void *residual_packed;                  /* residual in the kernel's dtype and layout (host) */
    conv_epilogue device;                   /* what the kernel gets */
} epilogue_operands;

static void epilogue_prepare(const run_request *request, const pass_tensors *t, epilogue_operands *e)
{
    const conv_kernel *kernel = request->kernel;
    const int k = request->prob.k;
    const size_t y_count = t->count[TENSOR_Y];
    memset(e, 0, sizeof *e);
    e->device.ops = request->epilogue;
    e->bias = xmalloc((size_t)k * sizeof(float));
    e->scale = xmalloc((size_t)k * sizeof(float));
    e->shift = xmalloc((size_t)k * sizeof(float));
    e->residual = xmalloc(y_count * sizeof(float));
    fill_uniform(e->bias, (size_t)k, request->seed + 10);
    fill_uniform(e->scale, (size_t)k, request->seed + 11);
    for (int i = 0; i < k; i++)
        e->scale[i] = 1.0f + 0.5f * e->scale[i]; /* in [0.5, 1.5): a batch norm's typical gain */
    fill_uniform(e->shift, (size_t)k, request->seed + 12);
    fill_uniform(e->residual, y_count, request->seed + 13);
    if (request->load_dir) { /* the reader's own operands, for the operations asked for */
        const epilogue_ops ops = request->epilogue;
        const char *dir = request->load_dir;
        if (ops.bias)
            load_input(dir, "bias", 1, &k, (size_t)k, e->bias);
        if (ops.scale_shift) {
            load_input(dir, "scale", 1, &k, (size_t)k, e->scale);
            load_input(dir, "shift", 1, &k, (size_t)k, e->shift);
        }
        if (ops.residual)
            load_input(dir, "residual", 4, t->dims[TENSOR_Y], y_count, e->residual);
    }
    round_to_dtype(e->residual, y_count, kernel->dtype);
    e->residual_packed = xmalloc(y_count * dtype_size(kernel->dtype));
    pack_tensor(e->residual, t->dims[TENSOR_Y], kernel->layout, kernel->dtype, e->residual_packed);

    const float *host[3] = {e->bias, e->scale, e->shift};
    const float **device[3] = {&e->device.bias, &e->device.scale, &e->device.shift};
    const bool wanted[3] = {request->epilogue.bias, request->epilogue.scale_shift, request->epilogue.scale_shift};
    for (int i = 0; i < 3; i++) {
        if (!wanted[i])
            continue;
        void *copy = (void *)host[i];
        if (kernel->device == ON_GPU) {
            CUDA_CHECK(cudaMalloc(&copy, (size_t)k * sizeof(float)));
            CUDA_CHECK(cudaMemcpy(copy, host[i], (size_t)k * sizeof(float), cudaMemcpyHostToDevice));
        }
        *device[i] = copy;
    }
    if (request->epilogue.residual) {
        void *copy = e->residual_packed;
        if (kernel->device == ON_GPU) {
            size_t bytes = y_count * dtype_size(kernel->dtype);
            CUDA_CHECK(cudaMalloc(&copy, bytes));
            CUDA_CHECK(cudaMemcpy(copy, e->residual_packed, bytes, cudaMemcpyHostToDevice));
        }
        e->device.residual = copy;
    }
}

/* The operands the run used, beside its inputs and output: bias, scale, shift as fp32 (K,), the residual
 * in y's dtype and logical shape. */
static void epilogue_save(const run_request *request, const pass_tensors *t, const epilogue_operands *e)
{
    const epilogue_ops ops = request->epilogue;
    const char *dir = request->save_dir;
    const int *k = &request->prob.k;
    if (ops.bias)
        save_tensor(dir, "bias", 1, k, e->bias, NPY_F32);
    if (ops.scale_shift) {
        save_tensor(dir, "scale", 1, k, e->scale, NPY_F32);
        save_tensor(dir, "shift", 1, k, e->shift, NPY_F32);
    }
    if (ops.residual)
        save_logical(dir, "residual", t->dims[TENSOR_Y], e->residual, t->count[TENSOR_Y], request->kernel->dtype);
}

/* The reference chain: the fp64 convolution, then the epilogue, element by element. On the way, each
 * element's compute bound (verify.c, step 2) grows from the convolution's to the whole chain's: the
 * convolution's error (with one more rounding to dtype, which an unfused epilogue makes) scaled by
 * |scale|, plus one fp32 rounding of each operation's result. */
static void epilogue_reference(const conv_problem *prob, const epilogue_operands *e, conv_dtype dtype, double *ref,
                               double *compute_bound)
{
    const double unit = ldexp(1.0, -23);
    const epilogue_ops ops = e->device.ops;
    size_t plane = (size_t)prob->p * prob->q, count = (size_t)problem_y_elems(prob);
    for (size_t i = 0; i < count; i++) {
        int k = (int)(i / plane % (size_t)prob->k);
        const double conv = ref[i], conv_error = rounding_distance(conv, dtype) + 2.0 * compute_bound[i];
        const double scale = ops.scale_shift ? fabs(e->scale[k]) : 1.0;
        const double after_bias = fabs(conv) + conv_error + (ops.bias ? fabs(e->bias[k]) : 0.0);
        const double after_scale = scale * after_bias + (ops.scale_shift ? fabs(e->shift[k]) : 0.0);
        const double after_residual = after_scale + (ops.residual ? fabs(e->residual[i]) : 0.0);
        compute_bound[i] = scale * conv_error + unit * ((ops.bias ? after_bias : 0.0) +
                                                        (ops.scale_shift ? after_scale : 0.0) +
                                                        (ops.residual ? after_residual : 0.0));
        ref[i] = epilogue_apply(ops, conv, e->bias[k], e->scale[k], e->shift[k], e->residual[i]);
    }
}

static void epilogue_release(const conv_kernel *kernel, epilogue_operands *e)
{
    if (kernel->device == ON_GPU) {
        CUDA_CHECK(cudaFree((void *)e->device.bias));
        CUDA_CHECK(cudaFree((void *)e->device.scale));
        CUDA_CHECK(cudaFree((void *)e->device.shift));
        CUDA_CHECK(cudaFree((void *)e->device.residual));
    }
    free(e->bias), free(e->scale), free(e->shift), free(e->residual), free(e->residual_packed);
}

run_outcome run_kernel(const run_request *request)
{
    run_outcome outcome = {.status = RUN_PASS};
    const conv_kernel *kernel = request->kernel;
    const conv_problem *prob = &request->prob;
    const pass_tensors t = tensors_of(prob, kernel->pass);

    if (kernel->supports && !kernel->supports(prob, outcome.why, sizeof outcome.why)) {
        outcome.status = RUN_UNSUPPORTED;
        return outcome;
    }
    const bool fused = epilogue_any(request->epilogue);
    /* An epilogue reads its operands too: K floats per vector, and a y-sized residual. */
    outcome.min_bytes = problem_min_bytes(prob, kernel->pass, kernel->dtype);
    if (fused)
        outcome.min_bytes += 4.0 * prob->k * (request->epilogue.bias + 2 * request->epilogue.scale_shift) +
                             (request->epilogue.residual ? (double)problem_y_elems(prob) * dtype_size(kernel->dtype) : 0.0);
    if (fused && (!kernel->launch_fused || kernel->pass != PASS_FPROP)) {
        snprintf(outcome.why, sizeof outcome.why, "kernel %s has no fused epilogue", kernel->id);
        outcome.status = RUN_UNSUPPORTED;
        return outcome;
    }
    if (!fused && !kernel->launch) {
        snprintf(outcome.why, sizeof outcome.why, "kernel %s runs only with an epilogue (--epilogue)", kernel->id);
        outcome.status = RUN_UNSUPPORTED;
        return outcome;
    }
    bool have_gpu = gpu_available(outcome.why, sizeof outcome.why);
    if (kernel->device == ON_GPU && !have_gpu)
        fail("kernel %s needs a GPU: %s", kernel->id, outcome.why);
    outcome.why[0] = '\0';
    /* On the emulator a run is verified, never timed, and has no cuDNN baseline (closed machine code);
     * its references are the CPU's, which are faster there than the GPU reference emulated */
    const bool emulator = have_gpu && on_emulator(), emulated = kernel->device == ON_GPU && emulator;
    if (emulated && kernel->library) {
        snprintf(outcome.why, sizeof outcome.why, "%s calls %s, whose machine code the emulator cannot run: n/a",
                 kernel->id, kernel->library);
        outcome.status = RUN_UNSUPPORTED;
        return outcome;
    }
    size_t workspace_bytes = kernel->workspace_bytes ? kernel->workspace_bytes(prob) : 0;
    outcome.workspace_bytes = workspace_bytes;
    outcome.reference_on_gpu = have_gpu && !emulator && problem_flops(prob) > CPU_REFERENCE_MAX_FLOPS;
    if (kernel->device == ON_GPU || outcome.reference_on_gpu) {
        size_t free_bytes, total_bytes;
        CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
        /* the reference keeps fp32 inputs and an fp64 output on the device while it runs */
        double reference_bytes = outcome.reference_on_gpu ? 4.0 * (t.count[0] + t.count[1] + t.count[2]) +
                                                                 8.0 * t.count[t.output]
                                                          : 0.0;
        double kernel_bytes = kernel->device == ON_GPU ? (double)workspace_bytes : 0.0;
        char why[256];
        if (!problem_fits_memory(prob, kernel->device == ON_GPU ? kernel->dtype : DTYPE_F32,
                                 kernel_bytes + reference_bytes, (double)free_bytes, why, sizeof why)) {
            snprintf(outcome.why, sizeof outcome.why, "too large for this GPU: %s", why);
            outcome.status = RUN_UNSUPPORTED;
            return outcome;
        }
    }

    /* 1. inputs in logical order, rounded to what the kernel can represent */
    float *logical[TENSOR_COUNT];
    for (int i = 0; i < TENSOR_COUNT; i++)
        logical[i] = xmalloc(t.count[i] * sizeof(float));
    for (int i = 0; i < 2; i++) {
        int which = t.inputs[i];
        if (request->load_dir) {
            load_input(request->load_dir, t.file[which], 4, t.dims[which], t.count[which], logical[which]);
        } else {
            fill_uniform(logical[which], t.count[which], request->seed + (uint64_t)i);
        }
        round_to_dtype(logical[which], t.count[which], kernel->dtype);
    }
    double input_rms_product = rms_of(logical[t.inputs[0]], t.count[t.inputs[0]]) *
                               rms_of(logical[t.inputs[1]], t.count[t.inputs[1]]);

    /* 2. the reference (and the epilogue's operands, which it needs) */
    epilogue_operands epilogue;
    if (fused)
        epilogue_prepare(request, &t, &epilogue);
    double *ref = NULL, *compute_bound = NULL;
    if (request->verify || request->save_dir) {
        ref = xmalloc(t.count[t.output] * sizeof(double));
        compute_reference(prob, kernel->pass, outcome.reference_on_gpu, logical, &t, ref);
        compute_bound = xmalloc(t.count[t.output] * sizeof(double));
        accumulation_bounds(prob, kernel->pass, outcome.reference_on_gpu, logical, &t, compute_bound);
        if (fused)
            epilogue_reference(prob, &epilogue, kernel->dtype, ref, compute_bound);
    }

    /* 3. the kernel's buffers: inputs packed to its layout and dtype, the output poisoned */
    launch_context launch = {.kernel = kernel, .prob = prob, .epilogue = fused ? &epilogue.device : NULL};
    void *host_packed[TENSOR_COUNT];
    for (int i = 0; i < TENSOR_COUNT; i++) {
        size_t bytes = t.count[i] * dtype_size(kernel->dtype);
        host_packed[i] = xmalloc(bytes);
        if (i == t.output)
            memset(host_packed[i], 0xff, bytes); /* all-ones bits: NaN in fp32 and fp16 alike */
        else
            pack_tensor(logical[i], t.dims[i], kernel->layout, kernel->dtype, host_packed[i]);
        if (kernel->device == ON_GPU) {
            CUDA_CHECK(cudaMalloc(&launch.buffers[i], bytes));
            CUDA_CHECK(cudaMemcpy(launch.buffers[i], host_packed[i], bytes, cudaMemcpyHostToDevice));
        } else {
            launch.buffers[i] = host_packed[i];
        }
    }
    if (workspace_bytes) {
        if (kernel->device == ON_GPU)
            CUDA_CHECK(cudaMalloc(&launch.workspace, workspace_bytes));
        else
            launch.workspace = xmalloc(workspace_bytes);
    }
    float *logical_out = logical[t.output];

    /* 4. one run, checked */
    launch_once(&launch);
    if (request->verify) {
        outcome.check = check_output(&launch, &t, ref, compute_bound, input_rms_product, host_packed[t.output], logical_out);
        outcome.verified = true;
        if (!outcome.check.pass) {
            outcome.status = RUN_FAIL;
            describe_failure(outcome.why, sizeof outcome.why, &outcome.check, &t, "first run");
        }
    } else if (kernel->device == ON_GPU) {
        CUDA_CHECK(cudaDeviceSynchronize());
    }

    /* 5. timing, and the check again: a kernel that only works the first time fails here */
    if (request->time && !emulated && outcome.status == RUN_PASS) {
        outcome.timing = kernel->device == ON_GPU
                             ? time_gpu(launch_once, &launch, &request->timing)
                             : time_cpu(launch_once, &launch, &request->timing, request->cpu_time_budget_s);
        outcome.timed = true;
        if (kernel->launch_phase) {
            outcome.phase_timing = kernel->device == ON_GPU
                                       ? time_gpu(launch_phase_once, &launch, &request->timing)
                                       : time_cpu(launch_phase_once, &launch, &request->timing,
                                                  request->cpu_time_budget_s);
            outcome.phase_timed = true;
        }
        double seconds = outcome.timing.median_ms * 1e-3;
        outcome.tflops = problem_flops(prob) / seconds / 1e12;
        outcome.gbps = outcome.min_bytes / seconds / 1e9;
        if (request->verify) {
            outcome.check_after_timing =
                check_output(&launch, &t, ref, compute_bound, input_rms_product, host_packed[t.output], logical_out);
            if (!outcome.check_after_timing.pass) {
                outcome.status = RUN_FAIL;
                describe_failure(outcome.why, sizeof outcome.why, &outcome.check_after_timing, &t,
                                 "after timing");
            }
        }
    }

    /* 6. the baseline */
    if (request->cudnn && kernel->device == ON_GPU && !emulated)
        outcome.cudnn = cudnn_best(prob, kernel->pass, kernel->dtype, kernel->layout, &request->timing);
    else
        snprintf(outcome.cudnn.why, sizeof outcome.cudnn.why, "not requested");

    if (request->save_dir) {
        if (!request->verify) /* the output has not been fetched yet */
            check_output(&launch, &t, ref, compute_bound, input_rms_product, host_packed[t.output], logical_out);
        for (int i = 0; i < TENSOR_COUNT; i++)
            save_logical(request->save_dir, t.file[i], t.dims[i], logical[i], t.count[i], kernel->dtype);
        char ref_name[32];
        snprintf(ref_name, sizeof ref_name, "%s_ref", t.file[t.output]);
        save_tensor(request->save_dir, ref_name, 4, t.dims[t.output], ref, NPY_F64);
        if (fused)
            epilogue_save(request, &t, &epilogue);
    }

    if (kernel->device == ON_GPU) {
        for (int i = 0; i < TENSOR_COUNT; i++)
            CUDA_CHECK(cudaFree(launch.buffers[i]));
        CUDA_CHECK(cudaFree(launch.workspace));
    } else {
        free(launch.workspace);
    }
    if (fused)
        epilogue_release(kernel, &epilogue);
    for (int i = 0; i < TENSOR_COUNT; i++) {
        free(host_packed[i]);
        free(logical[i]);
    }
    free(ref);
    free(compute_bound);
    return outcome;
}

/* The awkward shapes every kernel must get right (DEVELOPERS.md, "Correct first"). */
#define AWKWARD(n_, c_, h_, w_, k_, r_, s_, stride_, pad_, dil_, groups_)                              \
    {.n = n_, .c = c_, .h = h_, .w = w_, .k = k_, .r = r_, .s = s_, .stride_h = stride_, .stride_w = stride_, \
     .pad_h = pad_, .pad_w = pad_, .dil_h = dil_, .dil_w = dil_, .groups = groups_}

static const conv_problem fixed_problems[] = {
    /*      n  c   h   w   k   r  s str pad dil grp */
    AWKWARD(1, 3, 17, 19, 8, 3, 3, 1, 1, 1, 1),    /* N=1, C=3 (conv1-like), odd H/W */
    AWKWARD(2, 16, 16, 16, 16, 3, 3, 1, 1, 1, 1),  /* aligned everything */
    AWKWARD(2, 13, 15, 9, 11, 3, 3, 1, 1, 1, 1),   /* C and K not multiples of anything */
    AWKWARD(2, 24, 20, 20, 40, 1, 1, 1, 0, 1, 1),  /* 1x1 */
    AWKWARD(1, 3, 37, 35, 16, 7, 7, 2, 3, 1, 1),   /* conv1's 7x7 stride 2 */
    AWKWARD(2, 32, 14, 14, 24, 3, 3, 2, 1, 1, 1),  /* stride 2 */
    AWKWARD(1, 8, 21, 21, 8, 3, 3, 3, 0, 1, 1),    /* stride 3, no padding */
    AWKWARD(2, 16, 19, 17, 16, 3, 3, 1, 2, 2, 1),  /* dilation 2 */
    AWKWARD(1, 8, 9, 9, 8, 3, 3, 1, 4, 1, 1),      /* padding larger than the filter */
    AWKWARD(1, 8, 5, 5, 8, 5, 5, 1, 0, 1, 1),      /* filter as large as the image: 1x1 output */
    AWKWARD(2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 4),  /* groups */
    AWKWARD(2, 32, 13, 13, 32, 3, 3, 1, 1, 1, 32), /* depthwise */
    AWKWARD(1, 64, 7, 7, 72, 3, 3, 1, 1, 1, 1),    /* res5-like: tiny image, many channels */
    AWKWARD(3, 8, 1, 40, 8, 1, 3, 1, 1, 1, 1),     /* one row: 1xS filter */
    AWKWARD(2, 40, 33, 31, 24, 5, 5, 2, 2, 2, 1),  /* everything at once */
    AWKWARD(1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1),      /* the smallest problem there is */
    /* Two full tiles and a partial one along both GEMM dimensions of each pass (docs/gemm_view.md), for
     * tiles up to 256 x 128: a block that ignored its row or column offset would compute tile 0 again.
     * Short reductions keep them quick on the emulator. */
    AWKWARD(1, 8, 33, 17, 264, 1, 1, 1, 0, 1, 1),  /* fprop: M = N*P*Q = 561, N = K = 264 */
    AWKWARD(1, 264, 33, 17, 8, 1, 1, 1, 0, 1, 1),  /* dgrad: M = N*H*W = 561, N = C = 264 */
    AWKWARD(1, 264, 34, 34, 8, 2, 2, 2, 0, 1, 1),  /* dgrad, stride 2: each of 4 phases M = 289, N = 264 */
    AWKWARD(1, 33, 5, 5, 264, 3, 3, 1, 1, 1, 1),   /* wgrad: M = K = 264, N = C*R*S = 297 */
    /* Enough blocks to fill an H100's 132 SMs, which is when chapter 06 picks its larger tiles
     * (dgrad_pick_shape): 3 x 45 blocks of 128x128, and 12 groups x 12 blocks of 256x64. */
    AWKWARD(1, 264, 75, 76, 8, 1, 1, 1, 0, 1, 1),  /* dgrad: C = 264, the 128x128 tile */
    AWKWARD(1, 768, 53, 54, 96, 1, 1, 1, 0, 1, 12), /* dgrad: C/groups = 64, the 256x64 tile */
    /* Depthwise, C = 40 (five 8-channel vectors: one full 32-channel run and a partial one), H and W not
     * multiples of the tile: one shape for each kernel 09b dispatches to (depthwise.h, dw_variant_of and
     * dw_plan_rows). */
    AWKWARD(1, 40, 19, 21, 40, 3, 3, 1, 1, 1, 40), /* 3x3 stride 1 */
    AWKWARD(1, 40, 19, 21, 40, 3, 3, 2, 1, 1, 40), /* 3x3 stride 2 */
    AWKWARD(1, 40, 19, 21, 40, 5, 5, 1, 2, 1, 40), /* 5x5 stride 1 */
    AWKWARD(1, 40, 19, 21, 40, 5, 5, 2, 2, 1, 40), /* 5x5 stride 2 */
    AWKWARD(1, 40, 19, 21, 40, 7, 7, 1, 3, 1, 40), /* general, 4 rows per thread (7x7) */
    AWKWARD(1, 40, 19, 21, 40, 3, 3, 3, 1, 1, 40), /* general, 2 rows per thread (stride 3) */
    AWKWARD(1, 40, 37, 37, 40, 3, 3, 4, 1, 1, 40), /* general, 1 row per thread (stride 4) */
    /* different in h and w: stride 2x1, padding 1x2, dilation 1x2, a 3x5 filter */
    {.n = 2, .c = 16, .h = 18, .w = 23, .k = 24, .r = 3, .s = 5, .stride_h = 2, .stride_w = 1,
     .pad_h = 1, .pad_w = 2, .dil_h = 1, .dil_w = 2, .groups = 1},
};
#undef AWKWARD

int check_fixed_count(void)
{
    return (int)(sizeof fixed_problems / sizeof fixed_problems[0]);
}

conv_problem check_fixed_problem(int index)
{
    conv_problem prob = fixed_problems[index];
    char why[256];
    problem_validate(&prob, why, sizeof why); /* all valid by construction (tested) */
    return prob;
}

static int draw(uint64_t *state, int low, int high) /* uniform in [low, high] */
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return low + (int)((*state >> 33) % (uint64_t)(high - low + 1));
}

conv_problem check_random_problem(uint64_t *state)
{
    for (;;) {
        /* one in six depthwise (a filter per channel), a few grouped, the rest dense */
        bool depthwise = draw(state, 0, 5) == 0;
        int groups = draw(state, 0, 3) == 0 ? draw(state, 2, 4) : 1;
        bool aligned = draw(state, 0, 1);
        int c_per_group = aligned ? 8 * draw(state, 1, 6) : draw(state, 1, 40);
        int k_per_group = aligned ? 8 * draw(state, 1, 6) : draw(state, 1, 40);
        /* one in eight wide in C or K (dgrad's GEMM columns, or fprop's and wgrad's): past two 128-wide
         * column tiles, kept cheap by the flop limit below */
        int wide = draw(state, 0, 15);
        if (wide == 0)
            k_per_group = draw(state, 257, 300);
        else if (wide == 1)
            c_per_group = draw(state, 257, 300);
        if (depthwise) {
            groups = aligned ? 8 * draw(state, 1, 8) : draw(state, 1, 64);
            c_per_group = k_per_group = 1;
        }
        conv_problem prob = problem_make(draw(state, 1, 3), c_per_group * groups, draw(state, 1, 24),
                                         draw(state, 1, 24), k_per_group * groups, draw(state, 1, 5),
                                         draw(state, 1, 5));
        prob.groups = groups;
        prob.stride_h = draw(state, 1, 3), prob.stride_w = draw(state, 1, 3);
        prob.dil_h = draw(state, 0, 3) ? 1 : draw(state, 2, 3);
        prob.dil_w = draw(state, 0, 3) ? 1 : draw(state, 2, 3);
        prob.pad_h = draw(state, 0, 4), prob.pad_w = draw(state, 0, 4);
        if (depthwise && draw(state, 0, 1)) { /* half of them as networks use it: 3x3 or 5x5, stride 1 or 2 */
            prob.r = prob.s = draw(state, 0, 1) ? 3 : 5;
            prob.stride_h = prob.stride_w = draw(state, 1, 2);
            prob.dil_h = prob.dil_w = 1;
        }
        char why[256];
        if (problem_validate(&prob, why, sizeof why) && problem_flops(&prob) <= (wide < 2 ? 2e7 : CPU_REFERENCE_MAX_FLOPS))
            return prob;
    }
}
