/* steps.c: chapter 09's registry entries, one per step: 09a reads straight from global memory, 09b
 * stages a tile with its halo and slides a window down it. Each step's kernel, supports() and launch are
 * in its own file, named in .source; what both share is in depthwise.cuh; README.md walks through them.
 */
#include "conv.h"

CONV_STEP(09a)
CONV_STEP(09b)
/* 09b's launch paths: its four specializations and the general kernel (09b_tiled.cu) */
extern const char *const branches_09b[];
int branch_09b(const conv_problem *prob);

#define DIR "chapters/09_depthwise/"
#define FPROP_F16_NHWC .pass = PASS_FPROP, .dtype = DTYPE_F16, .layout = LAYOUT_NHWC, .device = ON_GPU
/* The counts are shown on a MobileNet depthwise layer, the only kind these kernels run. */
#define DEPTHWISE_LAYERS "mobilenet/dw144_56"

const conv_kernel ch09_kernels[] = {
    {.id = "09a", .name = "depthwise, one thread per 8-channel output vector", .source = DIR "09a_direct.cu",
     FPROP_F16_NHWC, .supports = supports_09a, .launch = launch_09a, .layers = DEPTHWISE_LAYERS,
     .ptx = "ld\\.global\\.nc\\.v4\n",
     .sass = "STG\\.E\\.128\n"},
    {.id = "09b", .name = "depthwise, smem tile + halo, rolling window", .source = DIR "09b_tiled.cu",
     FPROP_F16_NHWC, .supports = supports_09b, .launch = launch_09b, .branches = branches_09b,
     .branch_of = branch_09b, .layers = DEPTHWISE_LAYERS,
     .ptx = "cp\\.async\\.cg\\.shared\\.global\n",
     .sass = "LDGSTS\\.E\\.BYPASS\\.128\n"},
};
const int ch09_kernel_count = sizeof(ch09_kernels) / sizeof(ch09_kernels[0]);
