/* train_cnn.c: train a small CNN with our own fprop, dgrad and wgrad kernels, and check it learns.
 *
 * The network (net.h) is three 3x3 convolutions with ReLU, global average pooling and a linear
 * classifier; the task (data.h) is telling four bar orientations apart in noisy 32x32 images that the
 * program draws itself. Training is plain SGD on fp32 master weights, batch 32, 300 steps by default.
 * Why: a kernel that passes its verification on random tensors can still be wrong in a way that only
 * training exposes (a transposed filter, a gradient for the wrong tap, a stride phase that is never
 * written): gradient descent on the wrong gradient does not learn. Here every convolution of every
 * step runs on the registry kernels of chapters 05-07, and the result is judged by held-out accuracy.
 *
 * Backends (--backend):
 *   ours   fprop 05h, dgrad 06a (stride 1) / 06b (stride 2), wgrad 07b; fp16 NHWC activations and
 *          gradients, KRSC filters, fp32 accumulation, a static loss scale (README: loss scaling).
 *   cudnn  the same convolutions through cuDNN (common/harness/cudnn_conv.h), same dtype and layout.
 *   cpu    the fp64 references (common/harness/reference.h) on fp32 NCHW: runs anywhere, slowly.
 * Every layer that is not a convolution is the same code on all three (layers.h). All backends start
 * from the same seeded weights and see the same batches. --compare trains ours and cudnn side by side
 * and fails if their losses differ by more than COMPARE_TOLERANCE at any logged step.
 *
 * Build and run:
 *   meson setup build && meson compile -C build
 *   ./build/chapters/11_train_cnn/train_cnn --backend ours --log ours.csv
 *   ./build/chapters/11_train_cnn/train_cnn --compare --log compare.csv
 *   ./build/chapters/11_train_cnn/train_cnn --backend cpu
 *   python3 chapters/11_train_cnn/plot_loss.py ours.csv --out loss.png
 * Exit status: 0 learned (test accuracy >= --target, and with --compare the backends agreed), 1 not
 * (or an error), 2 bad command line, 77 a GPU backend was asked for where no CUDA device (or, for
 * --compare, no cuDNN) answers.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "cli.h"
#include "cudnn_conv.h"
#include "data.h"
#include "device.h"
#include "harness.h"
#include "layers_gpu.h"
#include "net.h"
#include "registry.h"
#include "tensor.h"
#include "timing.h"

/* |loss_ours - loss_cudnn| allowed at a logged step. Both backends store the same tensors in fp16 from
 * fp32 sums; they differ only in summation order and so, now and then, in the last bit of a stored
 * fp16 value (2^-11 relative). Such differences feed back through the weights, but stay below what
 * fp16 storage itself does to the loss, which the cpu backend measures without a GPU: fp16-rounded
 * (--emulate-fp16) vs fp32 training on the same batches differs by at most 5.7e-4 over the default
 * 300 steps, and by 3.1e-2 in the cpu suite's noisier short run at lr 0.1 (README). The tolerance is
 * above both and far below the loss's own fall (1.40 -> 0.05), so a backend whose gradients are
 * wrong enough to change how it learns cannot pass. */
#define COMPARE_TOLERANCE 0.05

#define TEST_SEED_OFFSET 0x7E57ull /* the test stream: another seed, so test images are never trained on */

/* Who computes the convolutions: our kernels, cuDNN (both on the GPU), or the fp64 references on the CPU. */
typedef enum { OURS, CUDNN, CPU, NO_BACKEND } backend_kind;
static const char *const backend_name[] = {"ours", "cudnn", "cpu"};

typedef struct {
    backend_kind backend;
    backend_kind partner;    /* with --compare: the backend ours is compared with (cudnn, or cpu) */
    bool compare, emulate_fp16;
    int steps, batch, size, log_every, test;
    float lr, loss_scale, target;
    uint64_t seed;
    const char *log_path;
} options;

#define TEXT_OF(x) #x
#define NUMBER_TEXT(x) TEXT_OF(x) /* COMPARE_TOLERANCE's value as written, in the usage text */

static const char usage_text[] =
            "usage: train_cnn [--backend ours|cudnn|cpu | --compare] [options]\n"
            "Trains conv3x3(1->16,s2)+ReLU, conv3x3(16->32)+ReLU, conv3x3(32->64,s2)+ReLU, global average pool,\n"
            "linear(64->4), softmax cross-entropy, with plain SGD, on synthetic bar orientations (4 classes).\n"
            "  --backend B       ours (default): fprop 05h, dgrad 06a/06b, wgrad 07b, fp16 NHWC\n"
            "                    cudnn: the same convolutions through cuDNN; cpu: the fp64 references\n"
            "  --compare         train ours and cudnn side by side; fail if their losses differ by more\n"
            "                    than " NUMBER_TEXT(COMPARE_TOLERANCE) " at any logged step\n"
            "  --compare-with B  the same, ours against B: cudnn, or cpu (fp16 storage emulated), which\n"
            "                    needs no cuDNN and so also runs on the PTX emulator (--emulate)\n"
            "  --emulate         run our kernels on the PTX emulator (emu/) instead of a GPU: not timed;\n"
            "                    without a GPU the emulator answers anyway, saying so; --gpu: a GPU or nothing\n"
            "  --steps N         training steps (default 300)\n"
            "  --batch N         images per step (default 32)\n"
            "  --size N          image side in pixels, 8..256 (default 32)\n"
            "  --lr X            SGD learning rate (default 0.05)\n"
            "  --loss-scale X    static loss scale for the fp16 gradients (default 1024)\n"
            "  --log-every N     log the loss every N steps (default 10; the last step is always logged)\n"
            "  --log FILE        also write the logged losses as CSV: backend,step,loss\n"
            "  --test N          held-out test images (default 512, rounded up to whole batches)\n"
            "  --target X        test accuracy to reach, 0..1 (default 0.9); below it the exit status is 1\n"
            "  --seed N          data and initial weights (default 1)\n"
            "  --emulate-fp16    cpu backend: round to fp16 what the GPU backends store in fp16\n"
            "  --help            this text\n";

static backend_kind backend_named(const char *name)
{
    for (int kind = OURS; kind < NO_BACKEND; kind++)
        if (strcmp(name, backend_name[kind]) == 0)
            return (backend_kind)kind;
    return NO_BACKEND;
}

static options parse_options(int argc, char **argv)
{
    options o = {OURS, CUDNN, false, false, 300, 32, 32, 10, 512, 0.05f, 1024.0f, 0.9f, 1, NULL};
    const char *backend = NULL, *partner = NULL;
    const cli_option table[] = {
        {CLI_SETS("--compare", &o.compare, true)},
        {CLI_SETS("--emulate-fp16", &o.emulate_fp16, true)},
        {CLI_READ_ELSEWHERE("--emulate")}, {CLI_READ_ELSEWHERE("--gpu")}, /* the device: chosen in main() */
        {CLI_STRING("--backend", &backend)}, {CLI_STRING("--compare-with", &partner)},
        {CLI_INTEGER("--steps", &o.steps, 1, 1000000)}, {CLI_INTEGER("--batch", &o.batch, 1, 4096)},
        {CLI_INTEGER("--size", &o.size, 8, 256)}, {CLI_NUMBER("--lr", &o.lr, 0.0, 100.0), .min_excluded = true},
        {CLI_NUMBER("--loss-scale", &o.loss_scale, 0.0, 65536.0), .min_excluded = true},
        {CLI_INTEGER("--log-every", &o.log_every, 1, 1000000)}, {CLI_STRING("--log", &o.log_path)},
        {CLI_INTEGER("--test", &o.test, 1, 1000000)}, {CLI_NUMBER("--target", &o.target, 0.0, 1.0)},
        {CLI_SEED_INTO("--seed", &o.seed)}};
    cli_parse(argc, argv, 1, table, (int)(sizeof table / sizeof table[0]), NULL, usage_text);
    if (partner) {
        o.partner = backend_named(partner);
        if (o.partner != CUDNN && o.partner != CPU)
            cli_error("--compare-with takes cudnn or cpu, not '%s'", partner);
        o.compare = true;
    }
    if (backend) {
        o.backend = backend_named(backend);
        if (o.backend == NO_BACKEND)
            cli_error("unknown backend '%s' (ours, cudnn or cpu)", backend);
        if (o.compare)
            cli_error("--compare trains both GPU backends; it takes no --backend");
    }
    if (o.log_path && !*o.log_path)
        cli_error("--log needs a file name");
    if (o.emulate_fp16 && (o.compare || o.backend != CPU))
        cli_error("--emulate-fp16 is for --backend cpu (the GPU backends store fp16 already; --compare-with cpu "
                  "emulates it)");
    return o;
}

/* ---- the GPU backends ---------------------------------------------------------------------------- */

typedef struct {
    const char *name;
    bool use_cudnn;
    net_shape shape;
    float loss_scale;
    void *act[NET_CONVS + 1];          /* fp16 NHWC: act[0] the images, act[i] ReLU(conv i) */
    void *dy, *dx;                     /* fp16 NHWC activation gradients */
    void *w16[NET_CONVS], *dw16[NET_CONVS]; /* fp16 KRSC: what the convolutions read and wgrad writes */
    float *w32[NET_CONVS];             /* fp32 KRSC master weights */
    float *fc_w, *fc_b, *dfc_w, *dfc_b, *pooled, *dpooled, *logits, *dlogits, *loss;
    int *labels, *overflow;
    const conv_kernel *fprop, *dgrad[NET_CONVS], *wgrad; /* ours */
    void *workspace;
    cudnn_conv *plan[3][NET_CONVS];    /* cudnn, [pass][layer] */
    cudaEvent_t start, stop;
    uint16_t *host_images;
} gpu_net;

static void *device_alloc(size_t bytes)
{
    void *p = NULL;
    CUDA_CHECK(cudaMalloc(&p, bytes ? bytes : 1));
    CUDA_CHECK(cudaMemset(p, 0, bytes ? bytes : 1));
    return p;
}

static const conv_kernel *our_kernel(const char *id, const conv_problem *prob, size_t *workspace)
{
    const conv_kernel *kernel = registry_find(id);
    if (!kernel)
        fail("kernel %s is not in the registry", id);
    char why[512];
    if (kernel->supports && !kernel->supports(prob, why, sizeof why))
        fail("kernel %s cannot run this layer: %s", id, why);
    const size_t bytes = kernel->workspace_bytes ? kernel->workspace_bytes(prob) : 0;
    *workspace = bytes > *workspace ? bytes : *workspace;
    return kernel;
}

/* cuDNN's descriptions and algorithms for every convolution, found on the net's own buffers (Find
 * overwrites each pass's output, which holds nothing yet). false with why if cuDNN cannot. */
static bool cudnn_plans(gpu_net *g, char *why, size_t why_len)
{
    for (int i = 0; i < NET_CONVS; i++) {
        const conv_problem *prob = &g->shape.conv[i];
        const conv_pass passes[3] = {PASS_FPROP, PASS_DGRAD, PASS_WGRAD};
        const cudnn_conv_buffers buffers[3] = {{.x = g->act[i], .w = g->w16[i], .y = g->act[i + 1]},
                                               {.x = g->dx, .w = g->w16[i], .y = g->dy},
                                               {.x = g->act[i], .w = g->dw16[i], .y = g->dy}};
        for (int pass = 0; pass < 3; pass++) {
            if (passes[pass] == PASS_DGRAD && i == 0)
                continue;
            char reason[256];
            cudnn_conv *plan = cudnn_conv_create(prob, passes[pass], DTYPE_F16, LAYOUT_NHWC, NULL, reason,
                                                 sizeof reason);
            if (!plan || !cudnn_conv_find(plan, &buffers[pass], reason, sizeof reason)) {
                snprintf(why, why_len, "cuDNN %s of conv%d: %s", pass_name(passes[pass]), i + 1, reason);
                if (plan)
                    cudnn_conv_destroy(plan);
                return false;
            }
            g->plan[pass][i] = plan;
        }
    }
    return true;
}

static bool gpu_net_init(gpu_net *g, const char *name, bool use_cudnn, const net_shape *shape,
                         const net_params *initial, float loss_scale, char *why, size_t why_len)
{
    memset(g, 0, sizeof *g);
    g->name = name;
    g->use_cudnn = use_cudnn;
    g->shape = *shape;
    g->loss_scale = loss_scale;
    size_t widest = 0;
    for (int i = 0; i <= NET_CONVS; i++) {
        const size_t bytes = (size_t)act_elems(net_act_shape(shape, i, true)) * 2;
        g->act[i] = device_alloc(bytes);
        widest = bytes > widest ? bytes : widest;
    }
    g->dy = device_alloc(widest);
    g->dx = device_alloc(widest);
    for (int i = 0; i < NET_CONVS; i++) {
        const conv_problem *prob = &shape->conv[i];
        const size_t count = (size_t)problem_w_elems(prob);
        int dims[4];
        problem_w_dims(prob, dims);
        float *krsc = xmalloc(count * sizeof(float));
        pack_tensor(initial->conv_w[i], dims, LAYOUT_NHWC, DTYPE_F32, krsc);
        g->w32[i] = device_alloc(count * sizeof(float));
        CUDA_CHECK(cudaMemcpy(g->w32[i], krsc, count * sizeof(float), cudaMemcpyHostToDevice));
        free(krsc);
        g->w16[i] = device_alloc(count * 2);
        g->dw16[i] = device_alloc(count * 2);
        gpu_to_half(g->w32[i], g->w16[i], (int64_t)count);
    }
    const linear_shape fc = shape->fc;
    g->fc_w = device_alloc((size_t)fc.out * fc.in * sizeof(float));
    g->fc_b = device_alloc((size_t)fc.out * sizeof(float));
    CUDA_CHECK(cudaMemcpy(g->fc_w, initial->fc_w, (size_t)fc.out * fc.in * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(g->fc_b, initial->fc_b, (size_t)fc.out * sizeof(float), cudaMemcpyHostToDevice));
    g->dfc_w = device_alloc((size_t)fc.out * fc.in * sizeof(float));
    g->dfc_b = device_alloc((size_t)fc.out * sizeof(float));
    g->pooled = device_alloc((size_t)fc.batch * fc.in * sizeof(float));
    g->dpooled = device_alloc((size_t)fc.batch * fc.in * sizeof(float));
    g->logits = device_alloc((size_t)fc.batch * fc.out * sizeof(float));
    g->dlogits = device_alloc((size_t)fc.batch * fc.out * sizeof(float));
    g->loss = device_alloc((size_t)fc.batch * sizeof(float));
    g->labels = device_alloc((size_t)fc.batch * sizeof(int));
    g->overflow = device_alloc(sizeof(int));
    g->host_images = xmalloc((size_t)act_elems(net_act_shape(shape, 0, true)) * 2);
    CUDA_CHECK(cudaEventCreate(&g->start));
    CUDA_CHECK(cudaEventCreate(&g->stop));
    if (use_cudnn)
        return cudnn_plans(g, why, why_len);
    size_t workspace = 0;
    /* fprop is chapter 05's plain staged kernel, not the fused 05i: ReLU runs as its own kernel, as in the
     * other backends, so that the backends differ only in their convolutions. */
    g->fprop = our_kernel("05h", &shape->conv[0], &workspace);
    g->wgrad = our_kernel("07b", &shape->conv[0], &workspace);
    for (int i = 1; i < NET_CONVS; i++) {
        const conv_problem *prob = &shape->conv[i];
        our_kernel("05h", prob, &workspace);
        our_kernel("07b", prob, &workspace);
        g->dgrad[i] = our_kernel(prob->stride_h == 1 && prob->stride_w == 1 ? "06a" : "06b", prob, &workspace);
    }
    g->workspace = device_alloc(workspace);
    return true;
}

static void gpu_net_free(gpu_net *g)
{
    void *buffers[] = {g->dy, g->dx, g->fc_w, g->fc_b, g->dfc_w, g->dfc_b, g->pooled, g->dpooled, g->logits,
                       g->dlogits, g->loss, g->labels, g->overflow, g->workspace};
    for (size_t i = 0; i < sizeof buffers / sizeof buffers[0]; i++)
        CUDA_CHECK(cudaFree(buffers[i]));
    for (int i = 0; i <= NET_CONVS; i++)
        CUDA_CHECK(cudaFree(g->act[i]));
    for (int i = 0; i < NET_CONVS; i++) {
        CUDA_CHECK(cudaFree(g->w16[i]));
        CUDA_CHECK(cudaFree(g->dw16[i]));
        CUDA_CHECK(cudaFree(g->w32[i]));
        for (int pass = 0; pass < 3; pass++)
            if (g->plan[pass][i])
                cudnn_conv_destroy(g->plan[pass][i]);
    }
    CUDA_CHECK(cudaEventDestroy(g->start));
    CUDA_CHECK(cudaEventDestroy(g->stop));
    free(g->host_images);
}

/* One convolution pass of layer i. The registry keeps fprop's names for every pass: x is the
 * activation (dx for dgrad), w the filter (dw for wgrad), y the output (dy for dgrad and wgrad). */
static void gpu_conv(gpu_net *g, conv_pass pass, int i, void *x, void *w, void *y)
{
    if (g->use_cudnn) {
        const cudnn_conv_buffers buffers = {.x = x, .w = w, .y = y};
        cudnn_conv_run(g->plan[pass][i], &buffers);
        return;
    }
    const conv_kernel *kernel = pass == PASS_FPROP ? g->fprop : pass == PASS_DGRAD ? g->dgrad[i] : g->wgrad;
    kernel->launch(&g->shape.conv[i], x, w, y, g->workspace);
    CUDA_CHECK_LAUNCH();
}

static void gpu_upload(gpu_net *g, const float *images, const int *labels)
{
    const net_shape *s = &g->shape;
    const int dims[4] = {s->batch, 1, s->size, s->size};
    pack_tensor(images, dims, LAYOUT_NHWC, DTYPE_F16, g->host_images);
    CUDA_CHECK(cudaMemcpy(g->act[0], g->host_images, (size_t)act_elems(net_act_shape(s, 0, true)) * 2,
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(g->labels, labels, (size_t)s->batch * sizeof(int), cudaMemcpyHostToDevice));
}

static void gpu_forward(gpu_net *g)
{
    const net_shape *s = &g->shape;
    for (int i = 0; i < NET_CONVS; i++) {
        gpu_conv(g, PASS_FPROP, i, g->act[i], g->w16[i], g->act[i + 1]);
        gpu_relu_forward(g->act[i + 1], act_elems(net_act_shape(s, i + 1, true)));
    }
    gpu_pool_forward(g->act[NET_CONVS], net_act_shape(s, NET_CONVS, true), g->pooled);
    gpu_linear_forward(g->pooled, g->fc_w, g->fc_b, g->logits, s->fc);
    gpu_softmax_xent(g->logits, g->labels, g->loss, g->dlogits, s->batch, s->fc.out, g->loss_scale / (float)s->batch);
}

static void gpu_backward_and_update(gpu_net *g, float lr)
{
    const net_shape *s = &g->shape;
    gpu_linear_backward(g->dlogits, g->pooled, g->fc_w, g->dfc_w, g->dfc_b, g->dpooled, s->fc);
    const act_shape top = net_act_shape(s, NET_CONVS, true);
    gpu_pool_backward(g->dpooled, top, g->dy);
    gpu_relu_backward(g->dy, g->act[NET_CONVS], act_elems(top));
    void *dy = g->dy, *dx = g->dx;
    for (int i = NET_CONVS - 1; i >= 0; i--) {
        gpu_conv(g, PASS_WGRAD, i, g->act[i], g->dw16[i], dy);
        if (i == 0)
            break; /* the images need no gradient */
        gpu_conv(g, PASS_DGRAD, i, dx, g->w16[i], dy);
        gpu_relu_backward(dx, g->act[i], act_elems(net_act_shape(s, i, true)));
        void *t = dy;
        dy = dx;
        dx = t;
    }
    const float step = lr / g->loss_scale;
    for (int i = 0; i < NET_CONVS; i++)
        gpu_sgd_half(g->w32[i], g->w16[i], g->dw16[i], problem_w_elems(&s->conv[i]), step, g->overflow);
    gpu_sgd(g->fc_w, g->dfc_w, (int64_t)s->fc.out * s->fc.in, step, g->overflow);
    gpu_sgd(g->fc_b, g->dfc_b, s->fc.out, step, g->overflow);
}

/* The mean of the last forward's per-sample losses, summed on the host in order (as the cpu backend). */
static double gpu_loss(const gpu_net *g, float *host_loss)
{
    CUDA_CHECK(cudaMemcpy(host_loss, g->loss, (size_t)g->shape.batch * sizeof(float), cudaMemcpyDeviceToHost));
    double total = 0.0;
    for (int b = 0; b < g->shape.batch; b++)
        total += host_loss[b];
    return total / g->shape.batch;
}

static bool gpu_overflowed(const gpu_net *g)
{
    int flag = 0;
    CUDA_CHECK(cudaMemcpy(&flag, g->overflow, sizeof flag, cudaMemcpyDeviceToHost));
    return flag != 0;
}

/* ---- one interface over the three backends ----------------------------------------------------- */

typedef struct {
    const char *name;
    bool on_gpu;
    bool timed;        /* false on the emulator, which has no times to give */
    net_cpu cpu;
    gpu_net gpu;
    double *step_ms;   /* per step: device time (CUDA events) or wall time (cpu) */
    float *scratch;    /* batch floats: losses and logits read back */
} backend;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

/* One training step on a batch. Returns the batch's loss (before the update) if want_loss. */
static double backend_step(backend *be, const float *images, const int *labels, float lr, int step, bool want_loss)
{
    if (!be->on_gpu) {
        const double t0 = now_ms();
        const double loss = net_cpu_forward(&be->cpu, images, labels);
        net_cpu_backward(&be->cpu);
        if (!net_cpu_sgd(&be->cpu, lr))
            fail("%s: a gradient overflowed at step %d with loss scale %g: use a smaller --loss-scale", be->name,
                 step, be->cpu.loss_scale);
        be->step_ms[step] = now_ms() - t0;
        return loss;
    }
    gpu_net *g = &be->gpu;
    gpu_upload(g, images, labels);
    if (be->timed)
        CUDA_CHECK(cudaEventRecord(g->start, 0));
    gpu_forward(g);
    gpu_backward_and_update(g, lr);
    be->step_ms[step] = NAN;
    if (be->timed) {
        CUDA_CHECK(cudaEventRecord(g->stop, 0));
        CUDA_CHECK(cudaEventSynchronize(g->stop));
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, g->start, g->stop));
        be->step_ms[step] = ms;
    }
    if (!want_loss)
        return NAN;
    if (gpu_overflowed(g))
        fail("%s: fp16 gradients overflowed at or before step %d with loss scale %g: use a smaller --loss-scale",
             be->name, step, g->loss_scale);
    return gpu_loss(g, be->scratch);
}

/* Accuracy on the first `count` images of the test stream (a whole number of batches). */
static double backend_accuracy(backend *be, uint64_t seed, int count, const net_shape *s, float *images, int *labels)
{
    int correct = 0;
    for (int first = 0; first < count; first += s->batch) {
        draw_batch(seed, first, s->batch, s->size, images, labels);
        const float *logits;
        if (be->on_gpu) {
            gpu_upload(&be->gpu, images, labels);
            gpu_forward(&be->gpu);
            CUDA_CHECK(cudaMemcpy(be->scratch, be->gpu.logits, (size_t)s->batch * s->fc.out * sizeof(float),
                                  cudaMemcpyDeviceToHost));
            logits = be->scratch;
        } else {
            net_cpu_forward(&be->cpu, images, labels);
            logits = be->cpu.logits;
        }
        for (int b = 0; b < s->batch; b++)
            correct += argmax_element(logits, s->fc.out, b) == labels[b];
    }
    return (double)correct / count;
}

static void backend_free(backend *be)
{
    if (be->on_gpu)
        gpu_net_free(&be->gpu);
    else
        net_cpu_free(&be->cpu);
    free(be->step_ms);
    free(be->scratch);
}

int main(int argc, char **argv)
{
    cli_set_program("train_cnn");
    const options o = parse_options(argc, argv);
    net_shape shape;
    char why[512];
    if (!net_shape_make(o.batch, o.size, &shape, why, sizeof why)) {
        cli_fail(2, "%s", why);
    }

    const bool want_gpu = o.compare || o.backend != CPU;
    emulate_if_asked(argc, argv, want_gpu);
    if (want_gpu && !gpu_available(why, sizeof why)) {
        printf("skip: %s\n", why);
        return 77;
    }
    const bool with_cudnn = o.compare && o.partner == CUDNN;
    if (with_cudnn && strcmp(cudnn_version_string(), "n/a") == 0) {
        printf("skip: --compare needs cuDNN, and this build has none\n");
        return 77;
    }
    if (with_cudnn && on_emulator()) {
        printf("skip: cuDNN's machine code cannot run in the emulator (--compare-with cpu can)\n");
        return 77;
    }
    FILE *log = NULL;
    if (o.log_path && !(log = fopen(o.log_path, "w")))
        fail("cannot write %s: %s", o.log_path, strerror(errno));

    net_params initial;
    net_params_init(&initial, &shape, o.seed);
    backend be[2];
    memset(be, 0, sizeof be);
    const int count = o.compare ? 2 : 1;
    for (int n = 0; n < count; n++) {
        const backend_kind kind = o.compare ? (n == 0 ? OURS : o.partner) : o.backend;
        be[n].name = backend_name[kind];
        be[n].on_gpu = kind != CPU;
        be[n].timed = !be[n].on_gpu || !on_emulator();
        be[n].step_ms = xmalloc((size_t)o.steps * sizeof(double));
        be[n].scratch = xmalloc((size_t)shape.batch * shape.fc.out * sizeof(float));
        if (!be[n].on_gpu)
            net_cpu_init(&be[n].cpu, &shape, &initial, o.loss_scale, o.emulate_fp16 || o.compare);
        else if (!gpu_net_init(&be[n].gpu, be[n].name, kind == CUDNN, &shape, &initial, o.loss_scale,
                               why, sizeof why))
            fail("%s", why); /* a comparison cuDNN cannot run is a failure, not a skip */
    }
    net_params_free(&initial);

    printf("train_cnn: %d steps, batch %d, %dx%d images, %d classes, lr %g, loss scale %g, seed %" PRIu64 "\n",
           o.steps, o.batch, o.size, o.size, DATA_CLASSES, o.lr, o.loss_scale, o.seed);
    for (int n = 0; n < count; n++) {
        if (!be[n].on_gpu)
            printf("  %s: fp64 reference convolutions on fp32 NCHW%s\n", be[n].name,
                   o.emulate_fp16 || o.compare ? ", fp16 storage emulated" : "");
        else if (be[n].gpu.use_cudnn)
            for (int i = 0; i < NET_CONVS; i++)
                printf("  %s: cuDNN fp16 NHWC, conv%d: fprop %s, dgrad %s, wgrad %s\n", be[n].name, i + 1,
                       cudnn_conv_algo(be[n].gpu.plan[0][i]),
                       i ? cudnn_conv_algo(be[n].gpu.plan[1][i]) : "(not needed)", cudnn_conv_algo(be[n].gpu.plan[2][i]));
        else
            printf("  %s: fprop %s, dgrad %s (conv2) %s (conv3), wgrad %s, fp16 NHWC, on %s\n", be[n].name,
                   be[n].gpu.fprop->id, be[n].gpu.dgrad[1]->id, be[n].gpu.dgrad[2]->id, be[n].gpu.wgrad->id,
                   gpu_name());
    }
    if (log)
        fprintf(log, "backend,step,loss\n");

    float *images = xmalloc((size_t)shape.batch * shape.size * shape.size * sizeof(float));
    int *labels = xmalloc((size_t)shape.batch * sizeof(int));
    double worst_gap = 0.0;
    int worst_step = -1;
    for (int step = 0; step < o.steps; step++) {
        const bool logged = step % o.log_every == 0 || step == o.steps - 1;
        draw_batch(o.seed, (int64_t)step * shape.batch, shape.batch, shape.size, images, labels);
        double loss[2];
        for (int n = 0; n < count; n++) {
            loss[n] = backend_step(&be[n], images, labels, o.lr, step, logged);
            if (logged && !isfinite(loss[n]))
                fail("%s: the loss is %g at step %d: training diverged (try a smaller --lr)", be[n].name, loss[n], step);
            if (logged && log)
                fprintf(log, "%s,%d,%.6f\n", be[n].name, step, loss[n]);
        }
        if (!logged)
            continue;
        if (o.compare) {
            const double gap = fabs(loss[0] - loss[1]);
            if (gap > worst_gap || worst_step < 0) {
                worst_gap = gap;
                worst_step = step;
            }
            printf("step %5d  loss ours %.4f  %s %.4f  |diff| %.2e%s\n", step, loss[0], backend_name[o.partner], loss[1], gap,
                   gap > COMPARE_TOLERANCE ? "  > tolerance" : "");
        } else {
            printf("step %5d  loss %.4f\n", step, loss[0]);
        }
        fflush(stdout);
    }
    if (log && fclose(log) != 0)
        fail("cannot write %s: %s", o.log_path, strerror(errno));

    bool ok = true;
    const int test_count = (o.test + shape.batch - 1) / shape.batch * shape.batch;
    for (int n = 0; n < count; n++) {
        /* the first step pays one-time costs (module loading, cuDNN's first calls): left out when there
         * are others */
        const int skip = o.steps > 1 ? 1 : 0;
        const double ms = median_of(be[n].step_ms + skip, o.steps - skip);
        const double accuracy = backend_accuracy(&be[n], o.seed + TEST_SEED_OFFSET, test_count, &shape, images, labels);
        const bool reached = accuracy >= o.target;
        ok &= reached;
        printf("%s: test accuracy %.4f on %d held-out images (target %.2f: %s); ", be[n].name, accuracy, test_count,
               o.target, reached ? "reached" : "NOT reached");
        if (be[n].timed)
            printf("median time per step %.3f ms (%s)\n", ms,
                   be[n].on_gpu ? "CUDA events: forward, backward and update on the device" : "wall clock, one core");
        else
            printf("emulated, not timed\n");
    }
    if (o.compare) {
        const bool agree = worst_gap <= COMPARE_TOLERANCE;
        ok &= agree;
        printf("compare: largest |loss_ours - loss_%s| %.3e at step %d, tolerance %.3g: %s\n", backend_name[o.partner], worst_gap,
               worst_step, COMPARE_TOLERANCE, agree ? "agree" : "DISAGREE");
    }
    free(images);
    free(labels);
    for (int n = 0; n < count; n++)
        backend_free(&be[n]);
    return ok ? 0 : 1;
}
