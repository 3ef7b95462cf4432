/* resnet_block: a ResNet-18/34 basic block built from chapter 05's kernels, three ways, on the same data.
 *
 *   h  = ReLU(BN1(conv3x3_s(x, w1)))       sc = x  or  BN_sc(conv1x1_s(x, w_sc))
 *   y  = ReLU(BN2(conv3x3(h, w2)) + sc)    (block.h has the definition and the fp64 reference)
 *
 *   10a  ours, fused: a chapter-05 kernel's launch_fused with the BN, residual and ReLU applied to the
 *        fp32 accumulators before the one fp16 store. Two launches (identity) or three (projection).
 *   10b  ours, unfused: the same kernel's plain launch, then the epilogue as a separate elementwise pass
 *        (epilogue_unfused_f16_nhwc), as a framework without fusion runs it.
 *   cuDNN  cudnnConvolutionBiasActivationForward with BN folded the way inference deployments fold it:
 *        BN's scale into the fp16 filter, its shift into the bias; conv2 gets z = sc and ReLU.
 * Why: a fused epilogue saves a whole read and write of every convolution's output; the block shows
 * what that is worth next to the convolutions themselves, and next to cuDNN doing the same.
 *
 * Every implementation is verified before it is timed: each stage against the fp64 reference fed with
 * that implementation's own fp16 intermediates, and y end to end against the fp64 chain from x.
 *
 *   meson compile -C build
 *   ./build/chapters/10_resnet_block/resnet_block check [--random N]   fixed and random blocks, verified
 *   ./build/chapters/10_resnet_block/resnet_block bench [--n 32]       ResNet-34's blocks, timed, into the CSV
 *   ./build/chapters/10_resnet_block/resnet_block --help
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "baseline.h"
#include "block.h"
#include "check.h"
#include "cli.h"
#include "cudnn_conv.h"
#include "device.h"
#include "epilogue.h"
#include "harness.h"
#include "registry.h"
#include "results.h"
#include "tensor.h"
#include "timing.h"

/* This program, as the results CSV names the code it measured (registry.h: source_sha256). */
#define CHAPTER_SOURCE "chapters/10_resnet_block/resnet_block.c"

static const char usage[] =
    "usage: resnet_block COMMAND [options]\n"
    "\n"
    "A ResNet basic block, y = ReLU(BN2(conv3x3(ReLU(BN1(conv3x3_s(x))))) + shortcut(x)), NHWC fp16, run\n"
    "three ways on the same data: 10a our chapter-05 kernel with fused epilogues, 10b the same kernel with\n"
    "the epilogues as separate passes, and cuDNN's fused conv + bias + activation with BN folded in.\n"
    "\n"
    "commands:\n"
    "  check [opts]      verify every implementation on a fixed list of blocks (identity and projection,\n"
    "                    odd sizes, N = 1, C = K = 8) and --random N seeded random ones: each stage against\n"
    "                    the fp64 reference fed with that implementation's own fp16 intermediates, y end to\n"
    "                    end against the fp64 block. Exits 77 (skip) when there is no GPU\n"
    "  bench [opts]      verify, then time, ResNet-34's blocks conv2_x, conv3_1, conv3_x, conv4_1, conv4_x,\n"
    "                    conv5_1, conv5_x; print a table and merge rows 10a and 10b into the results CSV\n"
    "\n"
    "options:\n"
    "  --kernel ID       the chapter-05 kernel for 10a and 10b: 05i (default), 05j or 05k\n"
    "  --seed S          inputs and parameters are drawn from seed S (default 42)\n"
    "  --random N        random blocks after the fixed ones (check; default 20)\n"
    "  --n N             batch size (bench; default 32)\n"
    "  --blocks LIST     comma-separated block names, e.g. conv3_1,conv5_x (bench; default all)\n"
    "  --quick           conv2_x, conv3_1 and conv5_1 only, 10 timed runs instead of 20 (bench)\n"
    "  --csv FILE        where to merge the rows (bench; default bench/results/<gpu>.csv)\n"
    "  --emulate         run the kernels on the PTX emulator (emu/) instead of a GPU (check; cuDNN is n/a there);\n"
    "                    without a GPU the emulator answers anyway, saying so; --gpu: a GPU or nothing\n"
    "\n"
    "Exit status: 0 all verified, 1 a verification failed or an error, 2 bad input, 77 no GPU.\n";

/* ---- the blocks ------------------------------------------------------------------------------------- */

typedef struct {
    const char *name;
    block_shape shape; /* n, c, h, w, k, stride; n is --n */
} named_block;

/* ResNet-34's basic blocks at 224x224 input (ResNet-18 has the same ones, fewer times). */
static const named_block resnet34[] = {
    {"conv2_x", {32, 64, 56, 56, 64, 1}},
    {"conv3_1", {32, 64, 56, 56, 128, 2}},
    {"conv3_x", {32, 128, 28, 28, 128, 1}},
    {"conv4_1", {32, 128, 28, 28, 256, 2}},
    {"conv4_x", {32, 256, 14, 14, 256, 1}},
    {"conv5_1", {32, 256, 14, 14, 512, 2}},
    {"conv5_x", {32, 512, 7, 7, 512, 1}},
};
enum { RESNET34_BLOCKS = sizeof resnet34 / sizeof resnet34[0] };

static bool quick_block(const char *name)
{
    return strcmp(name, "conv2_x") == 0 || strcmp(name, "conv3_1") == 0 || strcmp(name, "conv5_1") == 0;
}

/* The blocks every check visits: the edges of chapter 05's tiles and of the shortcut's two kinds. */
static const block_shape check_blocks[] = {
    /* n   c   h   w    k  stride */
    {1, 8, 7, 7, 8, 1},      /* C = K = 8, N = 1, identity, 7x7 */
    {1, 8, 7, 7, 8, 2},      /* C = K = 8, projection by stride alone */
    {2, 24, 9, 9, 24, 1},    /* identity, 9x9, C = K = 24 (not a multiple of 64) */
    {1, 16, 9, 9, 40, 2},    /* projection by stride and channels, 9x9 -> 5x5 */
    {2, 24, 7, 7, 24, 2},    /* 7x7 -> 4x4, C = K */
    {1, 8, 13, 11, 72, 1},   /* projection by channels alone, H != W */
    {2, 64, 14, 14, 64, 1},  /* aligned identity */
    {1, 64, 15, 15, 136, 2}, /* K = 136: one column past 05i's 128-wide tile */
    {3, 136, 7, 7, 136, 1},  /* res5-like: 7x7, many channels, N = 3 */
    {2, 8, 1, 1, 8, 1},      /* a 1x1 image: every tap but the centre is padding */
};
enum { CHECK_BLOCKS = sizeof check_blocks / sizeof check_blocks[0] };

static int draw(uint64_t *state, int low, int high) /* uniform in [low, high] */
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return low + (int)((*state >> 33) % (uint64_t)(high - low + 1));
}

/* A random block with C and K multiples of 8 (what chapter 05's 16-byte loads read without padding),
 * small enough for the CPU reference; identity about a third of the time. */
static block_shape random_block(uint64_t *state)
{
    block_shape shape = {.n = draw(state, 1, 3), .c = 8 * draw(state, 1, 12), .h = draw(state, 1, 20),
                         .w = draw(state, 1, 20), .stride = draw(state, 1, 2)};
    shape.k = draw(state, 0, 2) == 0 ? shape.c : 8 * draw(state, 1, 12);
    if (shape.k == shape.c && draw(state, 0, 1))
        shape.stride = 1;
    return shape;
}

/* ---- the command line ------------------------------------------------------------------------------- */

typedef struct {
    const char *command, *kernel_id, *csv, *blocks;
    uint64_t seed;
    int random_count, n;
    bool quick;
    bool selected[RESNET34_BLOCKS];
} options;

static void select_blocks(options *opts)
{
    if (!opts->blocks) {
        for (int i = 0; i < RESNET34_BLOCKS; i++)
            opts->selected[i] = !opts->quick || quick_block(resnet34[i].name);
        return;
    }
    char copy[512];
    snprintf(copy, sizeof copy, "%s", opts->blocks);
    bool any = false;
    for (char *save = NULL, *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        if (strncmp(name, "resnet34/", 9) == 0)
            name += 9;
        int found = -1;
        for (int i = 0; i < RESNET34_BLOCKS; i++)
            if (strcmp(name, resnet34[i].name) == 0)
                found = i;
        if (found < 0) {
            cli_fail(2, "unknown block '%s' (known: conv2_x, conv3_1, conv3_x, conv4_1, conv4_x, conv5_1, conv5_x)",
                     name);
        }
        opts->selected[found] = any = true;
    }
    if (!any)
        cli_error("--blocks needs at least one block name, got '%s'", opts->blocks);
}

/* The kernel for 10a and 10b: it needs both launches, and must be an fp16 NHWC fprop GPU kernel. */
static const conv_kernel *kernel_or_exit(const char *id)
{
    const conv_kernel *kernel = registry_find(id);
    const char *missing = !kernel                                  ? "is not a kernel"
                          : kernel->pass != PASS_FPROP || kernel->dtype != DTYPE_F16 ||
                                    kernel->layout != LAYOUT_NHWC || kernel->device != ON_GPU
                                                                   ? "is not an fp16 NHWC fprop GPU kernel"
                          : !kernel->launch_fused                  ? "has no fused epilogue (launch_fused)"
                          : !kernel->launch                        ? "has no plain launch (it is an unfused comparison)"
                                                                   : NULL;
    if (!missing)
        return kernel;
    char known[1024] = "";
    for (int i = 0, used = 0; i < registry_count() && used < (int)sizeof known; i++) {
        const conv_kernel *k = registry_kernel(i);
        if (k->launch_fused && k->launch && k->pass == PASS_FPROP && k->dtype == DTYPE_F16 &&
            k->layout == LAYOUT_NHWC && k->device == ON_GPU)
            used += snprintf(known + used, sizeof known - (size_t)used, " %s", k->id);
    }
    cli_fail(2, "kernel '%s' %s; the block needs one with both launches:%s", id, missing, known);
}

static options parse_options(int argc, char **argv)
{
    options opts = {.kernel_id = "05i", .seed = 42, .random_count = 20, .n = 32};
    opts.command = cli_command(argc, argv, usage);
    const bool bench = strcmp(opts.command, "bench") == 0;
    if (!bench && strcmp(opts.command, "check") != 0)
        cli_error("unknown command '%s'", opts.command);

    const cli_option options[] = {
        {CLI_STRING("--kernel", &opts.kernel_id)}, {CLI_SEED_INTO("--seed", &opts.seed)},
        {CLI_INTEGER("--random", &opts.random_count, 0, INT_MAX), .command = "check"},
        {CLI_INTEGER("--n", &opts.n, 1, INT_MAX), .command = "bench"},
        {CLI_STRING("--blocks", &opts.blocks), .command = "bench"},
        {CLI_STRING("--csv", &opts.csv), .command = "bench"},
        {CLI_SETS("--quick", &opts.quick, true), .command = "bench"},
        {CLI_READ_ELSEWHERE("--emulate"), .command = "check"}, /* the device: chosen in main() */
        {CLI_READ_ELSEWHERE("--gpu")}};
    cli_parse(argc, argv, 2, options, (int)(sizeof options / sizeof options[0]), opts.command, usage);
    kernel_or_exit(opts.kernel_id);
    if (bench) {
        select_blocks(&opts);
        for (int i = 0; i < RESNET34_BLOCKS; i++) { /* every shape at this N is a valid block, or say why */
            block_shape shape = resnet34[i].shape;
            shape.n = opts.n;
            bool projection;
            conv_problem conv1, conv2, shortcut;
            char why[256];
            if (opts.selected[i] && !block_problems(&shape, &projection, &conv1, &conv2, &shortcut, why, sizeof why)) {
                fprintf(stderr, "resnet_block: block %s at --n %d: %s\n", resnet34[i].name, opts.n, why);
                exit(2);
            }
        }
    }
    return opts;
}

/* ---- one block on the GPU, three ways --------------------------------------------------------------- */

enum { FUSED, UNFUSED, CUDNN, IMPLS };
enum { CONV1, SHORTCUT, CONV2, STAGES };
static const char *const impl_id[IMPLS] = {"10a", "10b", "cuDNN"};
static const char *const stage_name[STAGES] = {"conv1", "shortcut", "conv2"};

typedef struct {
    void *h, *sc, *y;              /* device, fp16 NHWC; sc is x for the identity */
    float *h_host, *sc_host, *y_host; /* after a run, fp32 in logical order */
} impl_outputs;

typedef struct {
    const block_params *params;
    const conv_kernel *kernel;
    int stages;                    /* 3 with a projection; the shortcut is stage 1 */
    const conv_problem *prob[STAGES];
    void *x, *workspace;
    /* Ours: the filters as drawn, BN as bn_fold's fp32 scale and shift. cuDNN: BN's scale folded into
     * the filters, its shift as the bias, all fp16. Host copies (logical order) for the references. */
    void *w[2][STAGES];            /* [0] ours, [1] cuDNN's folded; device */
    const float *w_host[2][STAGES];
    float *folded_host[STAGES];
    double *scale[STAGES], *shift[STAGES], *bias[STAGES]; /* what each applies, exactly, in fp64 */
    float *scale_dev[STAGES], *shift_dev[STAGES];
    void *bias_dev[STAGES];
    conv_epilogue ep[2][STAGES];   /* [FUSED] and [UNFUSED]: the same but for conv2's residual */
    cudnn_conv *plan[STAGES];
    bool cudnn_ready;
    char cudnn_why[256];
    impl_outputs out[IMPLS];
} block_run;

typedef struct {
    block_run *run;
    int impl;
} launch_context;

static const epilogue_ops our_ops[STAGES] = {
    {.scale_shift = true, .relu = true}, {.scale_shift = true}, {.scale_shift = true, .residual = true, .relu = true}};
static const epilogue_ops cudnn_ops[STAGES] = {
    {.bias = true, .relu = true}, {.bias = true}, {.bias = true, .residual = true, .relu = true}};

static void *device_copy(const void *host, size_t bytes)
{
    void *device;
    CUDA_CHECK(cudaMalloc(&device, bytes));
    CUDA_CHECK(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice));
    return device;
}

/* A logical fp32 tensor to the device as fp16 in the kernels' layout (NHWC, or KRSC for filters). */
static void *upload_f16(const float *logical, const int dims[4])
{
    const size_t count = (size_t)dims[0] * dims[1] * dims[2] * dims[3];
    uint16_t *packed = xmalloc(count * sizeof *packed);
    pack_tensor(logical, dims, LAYOUT_NHWC, DTYPE_F16, packed);
    void *device = device_copy(packed, count * sizeof *packed);
    free(packed);
    return device;
}

static void download_f16(const void *device, const int dims[4], float *logical)
{
    const size_t count = (size_t)dims[0] * dims[1] * dims[2] * dims[3];
    uint16_t *packed = xmalloc(count * sizeof *packed);
    CUDA_CHECK(cudaMemcpy(packed, device, count * sizeof *packed, cudaMemcpyDeviceToHost));
    unpack_tensor(packed, dims, LAYOUT_NHWC, DTYPE_F16, logical);
    free(packed);
}

static cudnn_conv_buffers cudnn_buffers(const block_run *run, int stage)
{
    const impl_outputs *out = &run->out[CUDNN];
    cudnn_conv_buffers buffers = {.w = run->w[1][stage], .bias = run->bias_dev[stage]};
    buffers.x = stage == CONV2 ? out->h : run->x;
    buffers.y = stage == CONV1 ? out->h : stage == SHORTCUT ? out->sc : out->y;
    if (stage == CONV2)
        buffers.z = out->sc;
    return buffers;
}

static void launch_block(void *ctx)
{
    const launch_context *launch = ctx;
    const block_run *run = launch->run;
    const impl_outputs *out = &run->out[launch->impl];
    void *const outputs[STAGES] = {out->h, out->sc, out->y};
    for (int stage = 0; stage < STAGES; stage++) {
        if (stage == SHORTCUT && run->stages == 2)
            continue;
        void *input = stage == CONV2 ? out->h : run->x;
        switch (launch->impl) {
        case FUSED:
            run->kernel->launch_fused(run->prob[stage], input, run->w[0][stage], outputs[stage], run->workspace,
                                      &run->ep[FUSED][stage]);
            break;
        case UNFUSED:
            run->kernel->launch(run->prob[stage], input, run->w[0][stage], outputs[stage], run->workspace);
            CUDA_CHECK_LAUNCH();
            epilogue_unfused_f16_nhwc(run->prob[stage], outputs[stage], &run->ep[UNFUSED][stage]);
            break;
        default: {
            const cudnn_conv_buffers buffers = cudnn_buffers(run, stage);
            cudnn_conv_run(run->plan[stage], &buffers);
        }
        }
        CUDA_CHECK_LAUNCH();
    }
}

/* Device memory the block needs, all three ways, and the largest reference's scratch. */
static double block_device_bytes(const block_params *params, size_t workspace)
{
    const double x = (double)problem_x_elems(&params->conv1), y = (double)problem_y_elems(&params->conv1);
    const double w1 = (double)problem_w_elems(&params->conv1), w2 = (double)problem_w_elems(&params->conv2);
    double filters = w1 + w2 + (params->projection ? (double)problem_w_elems(&params->shortcut) : 0.0);
    double outputs = IMPLS * (params->projection ? 3.0 : 2.0) * y;
    /* conv1's filter is the larger one when C > K (the shortcut's is a ninth of conv1's) */
    double reference = 4.0 * (x > y ? x : y) + 4.0 * (w1 > w2 ? w1 : w2) + 8.0 * y;
    return 2.0 * (x + 2.0 * filters + outputs) + (double)workspace + reference;
}

/* Uploads everything, folds BN for each implementation and prepares cuDNN's plans. false, with why,
 * when the kernel does not support a stage or the block does not fit in device memory. */
static bool block_run_make(block_run *run, const block_params *params, const conv_kernel *kernel, char *why,
                           size_t why_len)
{
    memset(run, 0, sizeof *run);
    run->params = params;
    run->kernel = kernel;
    run->stages = params->projection ? 3 : 2;
    run->prob[CONV1] = &params->conv1;
    run->prob[SHORTCUT] = &params->shortcut;
    run->prob[CONV2] = &params->conv2;
    const float *filters[STAGES] = {params->w1, params->wsc, params->w2};
    const block_bn *bn[STAGES] = {&params->bn1, &params->bnsc, &params->bn2};
    const int k = params->shape.k;

    size_t workspace = 0;
    for (int stage = 0; stage < STAGES; stage++) {
        if (stage == SHORTCUT && !params->projection)
            continue;
        char reason[256];
        if (kernel->supports && !kernel->supports(run->prob[stage], reason, sizeof reason)) {
            snprintf(why, why_len, "%s: %s", stage_name[stage], reason);
            return false;
        }
        size_t bytes = kernel->workspace_bytes ? kernel->workspace_bytes(run->prob[stage]) : 0;
        workspace = bytes > workspace ? bytes : workspace;
    }
    size_t free_bytes, total_bytes;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const double needed = block_device_bytes(params, workspace);
    if (needed > (double)free_bytes) {
        snprintf(why, why_len, "too large for this GPU: needs %.2f GiB of device memory, %.2f GiB free",
                 needed / (1 << 30), (double)free_bytes / (1 << 30));
        return false;
    }

    int dims[4];
    problem_x_dims(&params->conv1, dims);
    run->x = upload_f16(params->x, dims);
    if (workspace)
        CUDA_CHECK(cudaMalloc(&run->workspace, workspace));
    float *scale = xmalloc((size_t)k * sizeof *scale), *shift = xmalloc((size_t)k * sizeof *shift);
    for (int stage = 0; stage < STAGES; stage++) {
        if (stage == SHORTCUT && !params->projection)
            continue;
        const conv_problem *prob = run->prob[stage];
        problem_w_dims(prob, dims);
        const size_t w_count = (size_t)problem_w_elems(prob), per_k = w_count / (size_t)k;
        bn_fold(k, bn[stage]->gamma, bn[stage]->beta, bn[stage]->mean, bn[stage]->var, BLOCK_BN_EPS, scale, shift);

        /* ours: the filter as drawn, BN as fp32 scale and shift in the epilogue */
        run->w_host[0][stage] = filters[stage];
        run->w[0][stage] = upload_f16(filters[stage], dims);
        run->scale_dev[stage] = device_copy(scale, (size_t)k * sizeof *scale);
        run->shift_dev[stage] = device_copy(shift, (size_t)k * sizeof *shift);
        /* cuDNN: w'[k] = fp16(w[k] * scale[k]), bias[k] = fp16(shift[k]) */
        float *folded = run->folded_host[stage] = xmalloc(w_count * sizeof *folded);
        uint16_t *bias16 = xmalloc((size_t)k * sizeof *bias16);
        run->scale[stage] = xmalloc((size_t)k * sizeof(double));
        run->shift[stage] = xmalloc((size_t)k * sizeof(double));
        run->bias[stage] = xmalloc((size_t)k * sizeof(double));
        for (int j = 0; j < k; j++) {
            const float *taps = filters[stage] + (size_t)j * per_k; /* KCRS: filter j's taps are contiguous */
            for (size_t i = 0; i < per_k; i++)
                folded[(size_t)j * per_k + i] = half_to_float(float_to_half(taps[i] * scale[j]));
            bias16[j] = float_to_half(shift[j]);
            run->scale[stage][j] = scale[j];
            run->shift[stage][j] = shift[j];
            run->bias[stage][j] = half_to_float(bias16[j]);
        }
        run->w_host[1][stage] = folded;
        run->w[1][stage] = upload_f16(folded, dims);
        run->bias_dev[stage] = device_copy(bias16, (size_t)k * sizeof *bias16);
        free(bias16);
        for (int impl = FUSED; impl <= UNFUSED; impl++)
            run->ep[impl][stage] = (conv_epilogue){.ops = our_ops[stage], .scale = run->scale_dev[stage],
                                                   .shift = run->shift_dev[stage]};
    }
    free(scale), free(shift);

    const size_t y_count = (size_t)problem_y_elems(&params->conv1), y_bytes = y_count * 2;
    for (int impl = 0; impl < IMPLS; impl++) {
        impl_outputs *out = &run->out[impl];
        CUDA_CHECK(cudaMalloc(&out->h, y_bytes));
        CUDA_CHECK(cudaMalloc(&out->y, y_bytes));
        out->sc = run->x; /* identity: the block's input is the shortcut */
        if (params->projection)
            CUDA_CHECK(cudaMalloc(&out->sc, y_bytes));
        out->h_host = xmalloc(y_count * sizeof(float));
        out->y_host = xmalloc(y_count * sizeof(float));
        out->sc_host = xmalloc(y_count * sizeof(float));
        if (impl != CUDNN)
            run->ep[impl][CONV2].residual = out->sc;
    }

    /* cuDNN's plans, found on these buffers (Find writes the outputs: before anything is verified). On
     * the emulator cuDNN is n/a: its machine code has no PTX to run. */
    run->cudnn_ready = !on_emulator();
    if (!run->cudnn_ready)
        snprintf(run->cudnn_why, sizeof run->cudnn_why, "cuDNN's machine code cannot run in the emulator");
    for (int stage = 0; stage < STAGES && run->cudnn_ready; stage++) {
        if (stage == SHORTCUT && !params->projection)
            continue;
        run->plan[stage] = cudnn_conv_create(run->prob[stage], PASS_FPROP, DTYPE_F16, LAYOUT_NHWC, &cudnn_ops[stage],
                                             run->cudnn_why, sizeof run->cudnn_why);
        const cudnn_conv_buffers buffers = cudnn_buffers(run, stage);
        run->cudnn_ready = run->plan[stage] &&
                           cudnn_conv_find(run->plan[stage], &buffers, run->cudnn_why, sizeof run->cudnn_why);
    }
    return true;
}

static void block_run_free(block_run *run)
{
    for (int stage = 0; stage < STAGES; stage++) {
        if (run->plan[stage])
            cudnn_conv_destroy(run->plan[stage]);
        CUDA_CHECK(cudaFree(run->w[0][stage]));
        CUDA_CHECK(cudaFree(run->w[1][stage]));
        CUDA_CHECK(cudaFree(run->scale_dev[stage]));
        CUDA_CHECK(cudaFree(run->shift_dev[stage]));
        CUDA_CHECK(cudaFree(run->bias_dev[stage]));
        free(run->folded_host[stage]), free(run->scale[stage]), free(run->shift[stage]), free(run->bias[stage]);
    }
    for (int impl = 0; impl < IMPLS; impl++) {
        impl_outputs *out = &run->out[impl];
        CUDA_CHECK(cudaFree(out->h));
        CUDA_CHECK(cudaFree(out->y));
        if (run->params->projection)
            CUDA_CHECK(cudaFree(out->sc));
        free(out->h_host), free(out->y_host), free(out->sc_host);
    }
    CUDA_CHECK(cudaFree(run->x));
    CUDA_CHECK(cudaFree(run->workspace));
}

/* NaN in every output (all-ones bytes, in fp16 too), so an element an implementation never wrote fails. */
static void poison_outputs(const block_run *run, int impl)
{
    const size_t bytes = (size_t)problem_y_elems(&run->params->conv1) * 2;
    const impl_outputs *out = &run->out[impl];
    CUDA_CHECK(cudaMemset(out->h, 0xff, bytes));
    CUDA_CHECK(cudaMemset(out->y, 0xff, bytes));
    if (run->params->projection)
        CUDA_CHECK(cudaMemset(out->sc, 0xff, bytes));
}

/* ---- verification ---------------------------------------------------------------------------------- */

typedef struct {
    bool ran;                      /* false: cuDNN was not available (cudnn_why says why) */
    verify_result stage[STAGES];   /* each stage on this implementation's own fp16 inputs */
    verify_result end_to_end;      /* y against the fp64 block */
    bool pass;
} impl_check;

static void fetch_outputs(block_run *run, int impl)
{
    int dims[4];
    problem_y_dims(&run->params->conv1, dims);
    impl_outputs *out = &run->out[impl];
    CUDA_CHECK(cudaDeviceSynchronize());
    download_f16(out->h, dims, out->h_host);
    download_f16(out->y, dims, out->y_host);
    if (run->params->projection)
        download_f16(out->sc, dims, out->sc_host);
    else
        memcpy(out->sc_host, run->params->x, (size_t)problem_y_elems(&run->params->conv1) * sizeof(float));
}

/* Each stage of implementation impl against the fp64 reference of exactly what it was asked to compute,
 * from its own fp16 inputs; then y end to end. fetch_outputs() first. */
static impl_check check_impl(const block_run *run, int impl, const double *chain_y, bool have_gpu)
{
    impl_check check = {.ran = true, .pass = true};
    const block_params *params = run->params;
    const impl_outputs *out = &run->out[impl];
    const int which = impl == CUDNN ? 1 : 0;
    const size_t count = (size_t)problem_y_elems(&params->conv1);
    double *ref = xmalloc(count * sizeof *ref), *residual = xmalloc(count * sizeof *residual);
    for (size_t i = 0; i < count; i++)
        residual[i] = out->sc_host[i];
    const float *inputs[STAGES] = {params->x, params->x, out->h_host};
    const float *outputs[STAGES] = {out->h_host, out->sc_host, out->y_host};
    for (int stage = 0; stage < STAGES; stage++) {
        if (stage == SHORTCUT && !params->projection)
            continue;
        const conv_problem *prob = run->prob[stage];
        const block_epilogue ep = {.ops = impl == CUDNN ? cudnn_ops[stage] : our_ops[stage], .bias = run->bias[stage],
                                   .scale = run->scale[stage], .shift = run->shift[stage], .residual = residual};
        const float *w = run->w_host[which][stage];
        block_stage_reference(prob, inputs[stage], w, &ep, have_gpu, ref);
        /* A typical output is the convolution after BN's scale (about 3 / sqrt(L) of the bare one, by
         * bn_draw's statistics): the folded filter carries that scale for every implementation, where
         * our bare filter would make max_err's unit sqrt(L) / 3 times too large and the check as much
         * too loose. */
        const float *sized = run->w_host[1][stage];
        check.stage[stage] = verify_output(outputs[stage], ref, NULL, count, DTYPE_F16,
                                           problem_reduction_length(prob, PASS_FPROP),
                                           rms_of(inputs[stage], (size_t)problem_x_elems(prob)) *
                                               rms_of(sized, (size_t)problem_w_elems(prob)));
        check.pass &= check.stage[stage].pass;
    }
    check.end_to_end = block_verify_end_to_end(params, out->y_host, chain_y);
    check.pass &= check.end_to_end.pass;
    free(ref), free(residual);
    return check;
}

static const char *impl_label(const block_run *run, int impl, char *buf, size_t len)
{
    if (impl == CUDNN)
        snprintf(buf, len, "cuDNN fused, BN folded");
    else
        snprintf(buf, len, "%s %s", run->kernel->id, impl == FUSED ? "fused" : "unfused");
    return buf;
}

/* One line: the block, the implementation, each stage's error, the end-to-end error, the verdict; and a
 * second line naming what failed. */
static void print_check(const block_run *run, int impl, const impl_check *check)
{
    char shape[96], label[64];
    block_format(&run->params->shape, shape, sizeof shape);
    printf("%-34s | %-5s %-22s |", shape, impl_id[impl], impl_label(run, impl, label, sizeof label));
    if (!check->ran) {
        printf(" n/a: %s\n", run->cudnn_why);
        return;
    }
    for (int stage = 0; stage < STAGES; stage++)
        if (stage != SHORTCUT || run->params->projection)
            printf(" %s %.1e", stage_name[stage], check->stage[stage].rel_l2);
    printf(" | end to end %.2e (tol %.1e) | %s\n", check->end_to_end.rel_l2, check->end_to_end.tol_rel,
           check->pass ? "pass" : "FAIL");
    for (int stage = 0; stage <= STAGES; stage++) {
        const verify_result *v = stage < STAGES ? &check->stage[stage] : &check->end_to_end;
        if ((stage == SHORTCUT && !run->params->projection) || v->pass)
            continue;
        const char *what = stage < STAGES ? stage_name[stage] : "end to end";
        if (v->nonfinite)
            printf("    %s: %zu outputs are NaN/Inf (unwritten or overflowed)\n", what, v->nonfinite);
        else
            printf("    %s: rel_l2 %.3g (tol %.3g), max %.3g (tol %.3g) at logical index %zu\n", what, v->rel_l2,
                   v->tol_rel, v->max_err, v->tol_max, v->worst_index);
    }
}

/* Poisons, runs each implementation once, and verifies all of them. */
static void verify_block(block_run *run, const double *chain_y, bool have_gpu, impl_check checks[IMPLS])
{
    for (int impl = 0; impl < IMPLS; impl++) {
        checks[impl] = (impl_check){.ran = false};
        if (impl == CUDNN && !run->cudnn_ready)
            continue;
        poison_outputs(run, impl);
        launch_context launch = {run, impl};
        launch_block(&launch);
        fetch_outputs(run, impl);
        checks[impl] = check_impl(run, impl, chain_y, have_gpu);
    }
}

/* ---- check ----------------------------------------------------------------------------------------- */

static int command_check(const options *opts)
{
    char why[256];
    if (!gpu_available(why, sizeof why)) {
        printf("skip: resnet_block check runs the block on the GPU: %s\n", why);
        return 77;
    }
    const conv_kernel *kernel = kernel_or_exit(opts->kernel_id);
    int passed = 0, failed = 0, unavailable = 0;
    uint64_t state = opts->seed;
    const int total = CHECK_BLOCKS + opts->random_count;
    for (int b = 0; b < total; b++) {
        const block_shape shape = b < CHECK_BLOCKS ? check_blocks[b] : random_block(&state);
        const uint64_t seed = opts->seed + 1000003ull * (uint64_t)b;
        block_params params;
        char reason[512];
        if (!block_params_make(&params, &shape, seed, reason, sizeof reason))
            fail("check block %d: %s", b, reason); /* every listed and drawn block is valid */
        block_run run;
        if (!block_run_make(&run, &params, kernel, reason, sizeof reason)) {
            char text[96];
            block_format(&shape, text, sizeof text);
            printf("%-34s | %s cannot run it: %s | FAIL\n", text, kernel->id, reason);
            failed += 2;
            block_params_free(&params);
            continue;
        }
        double *chain_y = xmalloc((size_t)problem_y_elems(&params.conv2) * sizeof *chain_y);
        block_chain(&params, true, chain_y);
        impl_check checks[IMPLS];
        verify_block(&run, chain_y, true, checks);
        for (int impl = 0; impl < IMPLS; impl++) {
            print_check(&run, impl, &checks[impl]);
            if (!checks[impl].ran)
                unavailable++;
            else if (checks[impl].pass)
                passed++;
            else
                failed++;
        }
        free(chain_y);
        block_run_free(&run);
        block_params_free(&params);
    }
    printf("resnet_block check: %d blocks (%d fixed, %d random from seed %llu), kernel %s: %d pass, %d fail, "
           "%d n/a (cuDNN unavailable)\n", total, CHECK_BLOCKS, opts->random_count, (unsigned long long)opts->seed,
           kernel->id, passed, failed, unavailable);
    return failed ? 1 : 0;
}

/* ---- bench ----------------------------------------------------------------------------------------- */

typedef struct {
    impl_check check, after_timing; /* before timing; on what the last timed run left */
    bool timed, pass;               /* pass: both checks (the first alone if it failed: then no timing) */
    timing_result timing;
} impl_result;

/* The columns every row of a block has: which implementation, which block. The shape columns describe
 * the block by its first convolution (C -> K, 3x3, stride s, pad 1). */
static void fill_row_head(results_row *row, const block_params *params, const char *block_name, int impl,
                          const conv_kernel *kernel)
{
    results_row_init(row, &results_gpu);
    results_set(row, "chapter", "10");
    results_set(row, "kernel", "%s", impl_id[impl]);
    results_set(row, "kernel_name", "basic block on %s, %s", kernel->id,
                impl == FUSED ? "fused epilogues" : "unfused epilogue passes");
    results_set(row, "pass", "%s", pass_name(PASS_FPROP));
    results_set(row, "layer", "resnet34/%s", block_name);
    results_set_problem(row, &params->conv1, DTYPE_F16, LAYOUT_NHWC);
}

static void fill_row(results_row *row, const block_run *run, const char *block_name, int impl,
                     const impl_result *result, const impl_result *cudnn, const char *cudnn_algo, double bytes,
                     double peak_tflops, double peak_gbps, const char *date)
{
    fill_row_head(row, run->params, block_name, impl, run->kernel);
    const impl_check *check = result->timed ? &result->after_timing : &result->check;
    results_set(row, "status", "%s", result->pass ? "pass" : "fail");
    results_set(row, "rel_err", "%.3e", check->end_to_end.rel_l2);
    if (result->timed)
        results_set_timing(row, result->timing.median_ms, result->timing.reps, block_flops(&run->params->shape),
                           bytes, peak_tflops, peak_gbps);
    if (cudnn->timed && cudnn->pass) {
        results_set(row, "cudnn_ms", "%.6g", cudnn->timing.median_ms);
        results_set(row, "cudnn_algo", "%s", cudnn_algo);
        if (result->timed)
            results_set(row, "pct_cudnn", "%.2f", 100.0 * cudnn->timing.median_ms / result->timing.median_ms);
    }
    results_set_machine(row, peak_tflops, peak_gbps, source_sha256(CHAPTER_SOURCE), date);
}

/* An unsupported block still gets its rows, saying why nothing was measured. */
static void fill_unsupported_row(results_row *row, const block_params *params, const char *block_name, int impl,
                                 const conv_kernel *kernel, const char *date)
{
    fill_row_head(row, params, block_name, impl, kernel);
    results_set(row, "status", "unsupported");
    results_set_machine(row, 0.0, 0.0, source_sha256(CHAPTER_SOURCE), date);
}

static int command_bench(const options *opts)
{
    char why[256];
    if (!gpu_available(why, sizeof why)) {
        printf("bench: %s; the ResNet block runs on the GPU only, nothing measured\n", why);
        return 77;
    }
    if (on_emulator()) {
        printf("bench: on the emulator nothing is timed; `resnet_block check --emulate` verifies the block\n");
        return 77;
    }
    const conv_kernel *kernel = kernel_or_exit(opts->kernel_id);
    char csv[4096];
    if (opts->csv)
        snprintf(csv, sizeof csv, "%s", opts->csv);
    else
        results_default_path(CONV_SOURCE_ROOT, gpu_name(), csv, sizeof csv);
    printf("bench: %s, CUDA %s, cuDNN %s; kernel %s; measuring the ceilings...\n", gpu_name(), cuda_runtime_version(),
           cudnn_version_string(), kernel->id);
    fflush(stdout);
    const double peak_tflops = ceiling_fp16_tflops(), peak_gbps = ceiling_copy_gbps();
    printf("bench: ceilings: fp16 tensor-core GEMM %.1f TFLOP/s, copy %.0f GB/s\n", peak_tflops, peak_gbps);

    timing_opts timing = timing_defaults();
    if (opts->quick)
        timing.reps = 10;
    char date[16];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    int failures = 0, rows_written = 0;
    for (int b = 0; b < RESNET34_BLOCKS; b++) {
        if (!opts->selected[b])
            continue;
        block_shape shape = resnet34[b].shape;
        shape.n = opts->n;
        char text[96], reason[512];
        block_format(&shape, text, sizeof text);
        block_params params;
        if (!block_params_make(&params, &shape, opts->seed, reason, sizeof reason))
            fail("block %s: %s", resnet34[b].name, reason); /* validated with the options */
        const block_bytes bytes = block_traffic(&shape);
        printf("\n%s (%s): %.2f GFLOP\n", resnet34[b].name, text, block_flops(&shape) / 1e9);
        fflush(stdout);

        results_row rows[2];
        block_run run;
        if (!block_run_make(&run, &params, kernel, reason, sizeof reason)) {
            printf("  unsupported: %s\n", reason);
            for (int impl = FUSED; impl <= UNFUSED; impl++)
                fill_unsupported_row(&rows[impl], &params, resnet34[b].name, impl, kernel, date);
        } else {
            double *chain_y = xmalloc((size_t)problem_y_elems(&params.conv2) * sizeof *chain_y);
            block_chain(&params, true, chain_y);
            impl_result results[IMPLS] = {{.timed = false}};
            impl_check checks[IMPLS];
            verify_block(&run, chain_y, true, checks);
            for (int impl = 0; impl < IMPLS; impl++) {
                results[impl].check = checks[impl];
                results[impl].pass = checks[impl].pass;
                print_check(&run, impl, &checks[impl]);
                if (checks[impl].ran && !checks[impl].pass)
                    failures++;
                if (!checks[impl].ran || !checks[impl].pass)
                    continue; /* a wrong block's time means nothing */
                /* timed on poisoned outputs, and checked again on what the last timed run left */
                poison_outputs(&run, impl);
                launch_context launch = {&run, impl};
                results[impl].timing = time_gpu(launch_block, &launch, &timing);
                results[impl].timed = true;
                fetch_outputs(&run, impl);
                results[impl].after_timing = check_impl(&run, impl, chain_y, true);
                results[impl].pass = results[impl].after_timing.pass;
                if (!results[impl].pass) {
                    printf("  %s failed verification after timing:\n", impl_id[impl]);
                    print_check(&run, impl, &results[impl].after_timing);
                    failures++;
                }
            }
            char algos[RESULTS_FIELD] = "";
            for (int stage = 0; run.cudnn_ready && stage < STAGES; stage++)
                if (run.plan[stage])
                    snprintf(algos + strlen(algos), sizeof algos - strlen(algos), "%s%s", algos[0] ? "+" : "",
                             cudnn_conv_algo(run.plan[stage]));
            const double moved[IMPLS] = {bytes.fused, bytes.unfused, bytes.cudnn};
            printf("  %-5s %-22s %9s %8s %9s %9s\n", "impl", "", "ms", "% cuDNN", "TFLOP/s", "MB moved");
            for (int impl = 0; impl < IMPLS; impl++) {
                char label[64];
                printf("  %-5s %-22s", impl_id[impl], impl_label(&run, impl, label, sizeof label));
                if (results[impl].timed && results[impl].pass) {
                    printf(" %9.4f", results[impl].timing.median_ms);
                    if (results[CUDNN].timed && results[CUDNN].pass)
                        printf(" %7.1f%%", 100.0 * results[CUDNN].timing.median_ms / results[impl].timing.median_ms);
                    else
                        printf(" %8s", "n/a");
                    printf(" %9.1f", block_flops(&shape) / (results[impl].timing.median_ms * 1e-3) / 1e12);
                } else {
                    printf(" %9s %8s %9s", "-", "-", "-");
                }
                printf(" %9.1f\n", moved[impl] / 1e6);
            }
            printf("  fusion saves %.1f MB of %.1f (%.0f%%): each unfused pass reads and writes y once more",
                   (bytes.unfused - bytes.fused) / 1e6, bytes.unfused / 1e6,
                   100.0 * (bytes.unfused - bytes.fused) / bytes.unfused);
            if (results[FUSED].pass && results[FUSED].timed && results[UNFUSED].pass && results[UNFUSED].timed)
                printf("; measured: %.4f ms less", results[UNFUSED].timing.median_ms - results[FUSED].timing.median_ms);
            printf("\n");
            if (algos[0])
                printf("  cuDNN algorithms: %s\n", algos);
            for (int impl = FUSED; impl <= UNFUSED; impl++)
                fill_row(&rows[impl], &run, resnet34[b].name, impl, &results[impl], &results[CUDNN], algos, moved[impl],
                         peak_tflops, peak_gbps, date);
            free(chain_y);
            block_run_free(&run);
        }
        block_params_free(&params);
        char merge_why[4200];
        if (!results_merge(csv, rows, 2, merge_why, sizeof merge_why)) /* per block: a cut-off run keeps its rows */
            fail("%s", merge_why);
        rows_written += 2;
    }
    printf("\nbench: %d rows (%d verification failures) written to %s\n", rows_written, failures, csv);
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    cli_set_program("resnet_block");
    options opts = parse_options(argc, argv);
    emulate_if_asked(argc, argv, true);
    return strcmp(opts.command, "check") == 0 ? command_check(&opts) : command_bench(&opts);
}
