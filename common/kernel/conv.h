/* conv.h: the vocabulary every chapter shares.
 *
 * A 2D convolution problem, the three passes computed on it, and the kernel registry entry that each
 * chapter fills in. This header is plain C so host code (C11) and kernels (CUDA C) include the same one.
 *
 * Tensors, logically (whatever the memory layout):
 *   x  activations     [N][C][H][W]
 *   w  filter          [K][C/groups][R][S]
 *   y  output          [N][K][P][Q]
 * Every pass touches the same three tensors; only which one is written changes:
 *   fprop  reads x, w   writes y        y  = x (*) w
 *   dgrad  reads y, w   writes x        dx = dL/dx, from dy = dL/dy
 *   wgrad  reads x, y   writes w        dw = dL/dw
 */
#ifndef CONV_H
#define CONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Index math that kernels use is written once, for both sides: the GPU runs it and the cpu test suite
 * checks it against the plain definition on the host. */
#ifdef __CUDACC__
#define HOST_DEVICE __host__ __device__
#else
#define HOST_DEVICE
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int n, c, h, w;                /* input batch, channels, height, width */
    int k, r, s;                   /* output channels, filter height, filter width */
    int pad_h, pad_w;              /* zero padding on each side */
    int stride_h, stride_w;
    int dil_h, dil_w;              /* dilation: filter tap r reads input row p*stride + r*dil - pad */
    int groups;                    /* channels split into independent groups (depthwise: groups = c) */
    int p, q;                      /* output height and width, derived by problem_validate() */
} conv_problem;

typedef enum { PASS_FPROP, PASS_DGRAD, PASS_WGRAD } conv_pass;
struct conv_epilogue; /* common/kernel/epilogue.h */
typedef enum { DTYPE_F32, DTYPE_F16 } conv_dtype;
typedef enum { LAYOUT_NCHW, LAYOUT_NHWC } conv_layout; /* NHWC activations go with KRSC filters */
typedef enum { ON_CPU, ON_GPU } conv_device;

/* The fixed default a problem starts from: stride 1, dilation 1, no padding, one group. */
conv_problem problem_make(int n, int c, int h, int w, int k, int r, int s);

/* Output size along one axis, (in + 2*pad - dil*(filter-1) - 1) / stride + 1 (docs/gemm_view.md). May be
 * <= 0 for impossible problems. */
int conv_out_size(int in, int pad, int dil, int filter, int stride);

/* Derives p and q and checks everything that makes a problem impossible or unsupported.
 * Returns true when valid; otherwise false with a one-line reason in why. */
bool problem_validate(conv_problem *prob, char *why, size_t why_len);

/* Whether the three tensors in dtype plus extra_bytes of scratch fit in free_bytes of device memory;
 * otherwise false with the sizes in why. */
bool problem_fits_memory(const conv_problem *prob, conv_dtype dtype, double extra_bytes, double free_bytes,
                         char *why, size_t why_len);

/* Element counts of the three tensors. */
int64_t problem_x_elems(const conv_problem *prob);
int64_t problem_w_elems(const conv_problem *prob);
int64_t problem_y_elems(const conv_problem *prob);

/* FLOPs of any pass: 2 * N*P*Q * K * (C/groups) * R*S. */
double problem_flops(const conv_problem *prob);

/* Length of the dot product behind one output element of this pass (for error scaling):
 * fprop C/g*R*S, dgrad K/g*R*S (an upper bound: stride skips some taps), wgrad N*P*Q. */
int64_t problem_reduction_length(const conv_problem *prob, conv_pass pass);

/* Fewest bytes a pass must move: each input read once, the output written once. */
double problem_min_bytes(const conv_problem *prob, conv_pass pass, conv_dtype dtype);

/* "n8 c64 56x56 k32 3x3 s1 p1 d1 g1": a compact description for tables and messages. */
void problem_format(const conv_problem *prob, char *buf, size_t len);

const char *pass_name(conv_pass pass);
const char *dtype_name(conv_dtype dtype);
const char *layout_name(conv_layout layout);
size_t dtype_size(conv_dtype dtype);

/* The most code paths one kernel's launch may choose among (conv_kernel.branches). */
#define CONV_MAX_BRANCHES 16

/* One registered kernel. A chapter defines an array of these; common/harness/registry.c lists them all. */
typedef struct {
    const char *id;          /* "01", "02a", "05c": what `conv run ID` takes */
    const char *name;        /* a few words: "naive, one thread per output" */
    const char *source;      /* its source file, relative to the repository root */
    conv_pass pass;
    conv_dtype dtype;
    conv_layout layout;
    conv_device device;
    /* true if the kernel can run this (valid) problem; otherwise false and a one-line reason
     * naming the constraint. NULL means every valid problem is supported. */
    bool (*supports)(const conv_problem *prob, char *why, size_t why_len);
    /* Scratch memory the kernel needs (im2col buffer, split-K partials); NULL means none. */
    size_t (*workspace_bytes)(const conv_problem *prob);
    /* Computes the pass. Pointers are device memory for ON_GPU kernels, host memory for ON_CPU,
     * in the kernel's dtype and layout. GPU kernels launch asynchronously on the default stream;
     * the harness checks for launch errors. NULL only for a kernel that exists to be run with an
     * epilogue (launch_fused below), such as an unfused comparison. */
    void (*launch)(const conv_problem *prob, void *x, void *w, void *y, void *workspace);
    /* Optional, for kernels that are several launches in a row (chapter 04: im2col, then a GEMM):
     * the first step alone, which the runner also times by itself to show where the time goes.
     * It must leave its result in the workspace exactly as launch() would. */
    const char *phase_name;
    void (*launch_phase)(const conv_problem *prob, void *x, void *w, void *y, void *workspace);
    /* Optional, for fprop kernels with a fused epilogue (bias, batch norm, residual, ReLU applied in
     * registers before the store; common/kernel/epilogue.h): launch() plus the epilogue. NULL: none. */
    void (*launch_fused)(const conv_problem *prob, void *x, void *w, void *y, void *workspace,
                         const struct conv_epilogue *epilogue);
    /* Optional, for chapter 05's comparison of fusion (05i fused against 05l unfused): the epilogues the
     * kernel is benchmarked and counted with besides any asked for, ';'-separated ("bias,relu;bn,relu"):
     * `conv bench --emulate` counts it with each, bench/gpu_session.sh times it with each. NULL: none. */
    const char *compared_epilogues;
    /* A vendor library the kernel calls ("cuBLAS"), NULL if none: its machine code has no PTX, so
     * the emulator cannot run it and reports the kernel as n/a there. */
    const char *library;
    /* Optional, for kernels whose launch picks one of several code paths per problem (09b's
     * specializations, chapter 06's tile shapes): the paths' names, NULL-terminated, and the index of
     * the one a (supported) problem takes. launch() dispatches through the same branch_of(), so the
     * name is the path that ran. `conv check` fails when a branch is taken by none of the fixed shapes:
     * every path a reader's GPU may run is tested. NULL: one path. */
    const char *const *branches;
    int (*branch_of)(const conv_problem *prob);
    /* The reference layers its counts are shown on (`conv bench --emulate`, the chapter's counter
     * tables): suite/layer names, comma-separated. NULL: CONV_REFERENCE_LAYER. */
    const char *layers;
    /* What the compiler must have made of its source file (the build suite, tests/check_build.py):
     * regular expressions, each ending in a newline, that its PTX must each match (ptx), and its
     * machine code for the newest architecture (sass). The instructions the step is about. NULL: none. */
    const char *ptx;
    const char *sass;
} conv_kernel;

/* The layer a kernel's counts are shown on unless its row names others: ResNet-50's fourth stage's 3x3
 * convolution (14x14, 256 -> 256 channels), where every dense kernel runs. */
#define CONV_REFERENCE_LAYER "resnet50/res4_3x3"

/* A step's supports() and launch, declared for its chapter's registry list (steps.c); the step's own
 * file defines them (extern "C"), and the registry row names them. */
#define CONV_STEP(id)                                                                              \
    bool supports_##id(const conv_problem *prob, char *why, size_t why_len);                       \
    void launch_##id(const conv_problem *prob, void *x, void *w, void *y, void *workspace);

#ifdef __cplusplus
}
#endif

#endif
