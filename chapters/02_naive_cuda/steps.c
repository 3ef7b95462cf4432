/* steps.c: chapter 02's registry entries, one per step, in the order a reader meets them: 02a and 02b
 * differ in how a thread's index is split into (n, k, p, q); 02c is 02b with the filter in constant
 * memory. Each step's kernel and launch are in its own file, named in .source; README.md walks through
 * them.
 */
#include "conv.h"

void launch_02a(const conv_problem *prob, void *x, void *w, void *y, void *workspace);
void launch_02b(const conv_problem *prob, void *x, void *w, void *y, void *workspace);
CONV_STEP(02c)

#define DIR "chapters/02_naive_cuda/"
#define FPROP_F32_NCHW .pass = PASS_FPROP, .dtype = DTYPE_F32, .layout = LAYOUT_NCHW, .device = ON_GPU

const conv_kernel ch02_kernels[] = {
    {.id = "02a", .name = "naive, uncoalesced (k innermost)", .source = DIR "02a_k_fastest.cu",
     FPROP_F32_NCHW, .launch = launch_02a},
    {.id = "02b", .name = "naive, coalesced (q innermost)", .source = DIR "02b_q_fastest.cu",
     FPROP_F32_NCHW, .launch = launch_02b, .layers = CONV_REFERENCE_LAYER ",resnet50/conv1"},
    /* resnet50/conv1: the reference layer's filter (2.4 MB) is too large for constant memory */
    {.id = "02c", .name = "naive, coalesced, filter in constant memory", .source = DIR "02c_constant_filter.cu",
     FPROP_F32_NCHW, .supports = supports_02c, .launch = launch_02c, .layers = "resnet50/conv1",
     .ptx = "ld\\.const\\.f32\n"},
};
const int ch02_kernel_count = sizeof(ch02_kernels) / sizeof(ch02_kernels[0]);
