/* steps.c: chapter 07's registry entries, one per step: 07a walks each output tile's whole reduction in
 * one block, 07b splits it across blocks and adds the partials in a fixed order. Each step's kernels,
 * supports() and launch are in its own file, named in .source; what both share is in wgrad.cuh;
 * README.md walks through them.
 */
#include "conv.h"

CONV_STEP(07a)
CONV_STEP(07b)
/* The workspace: padded copies of x and dy where the channels need them, and 07b's fp32 partials */
size_t workspace_07a(const conv_problem *prob);
size_t workspace_07b(const conv_problem *prob);

#define DIR "chapters/07_wgrad/"
#define WGRAD_F16_NHWC .pass = PASS_WGRAD, .dtype = DTYPE_F16, .layout = LAYOUT_NHWC, .device = ON_GPU

const conv_kernel ch07_kernels[] = {
    {.id = "07a", .name = "wgrad implicit GEMM, mma.sync + ldmatrix.trans, 64x128, whole reduction per block",
     .source = DIR "07a_whole_reduction.cu", WGRAD_F16_NHWC, .supports = supports_07a,
     .workspace_bytes = workspace_07a, .launch = launch_07a,
     .ptx = "mma\\.sync\\.aligned\\.m16n8k16\\.row\\.col\\.f32\\.f16\\.f16\\.f32\n"
            "ldmatrix\\.sync\\.aligned\\.m8n8\\.x4\\.trans\n"
            "cp\\.async\\.cg\\.shared\\.global\n"
            "cp\\.async\\.wait_group\n",
     .sass = "HMMA\\.16816\\.F32\n"},
    {.id = "07b", .name = "wgrad implicit GEMM, split-K over N*P*Q, deterministic fp32 reduction",
     .source = DIR "07b_split_k.cu", WGRAD_F16_NHWC, .supports = supports_07b,
     .workspace_bytes = workspace_07b, .launch = launch_07b},
};
const int ch07_kernel_count = sizeof(ch07_kernels) / sizeof(ch07_kernels[0]);
