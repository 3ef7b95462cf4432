/* steps.c: chapter 06's registry entries, one per step: 06a is dgrad at stride 1 as one GEMM (the
 * flipped filter), 06b any stride as one GEMM per stride phase. Each step's kernel, supports() and launch
 * are in its own file, named in .source; what both share is in dgrad.cuh; README.md walks through them.
 */
#include "conv.h"
#include "pad_channels.h"

CONV_STEP(06a)
CONV_STEP(06b)
/* The tile shape each launch picks (dgrad_pick_shape(), dgrad.h), an index into dgrad_shapes[] */
int branch_06a(const conv_problem *prob);
int branch_06b(const conv_problem *prob);
static const char *const dgrad_shapes[] = {"128x128 tile (wide)", "256x64 tile (C/groups <= 64)",
                                           "64x64 tile (too few blocks for the GPU)", NULL};

#define DIR "chapters/06_dgrad/"
#define DGRAD_F16_NHWC .pass = PASS_DGRAD, .dtype = DTYPE_F16, .layout = LAYOUT_NHWC, .device = ON_GPU
/* The counts are shown on the dense reference layer and on the strided layer 06b is for. */
#define DGRAD_LAYERS CONV_REFERENCE_LAYER ",resnet50/res3_3x3_s2"

const conv_kernel ch06_kernels[] = {
    {.id = "06a", .name = "dgrad implicit GEMM, stride 1, flipped filter, cp.async",
     .source = DIR "06a_flipped_filter.cu", DGRAD_F16_NHWC, .supports = supports_06a,
     .workspace_bytes = pad_dgrad_workspace_bytes, .launch = launch_06a, .branches = dgrad_shapes,
     .branch_of = branch_06a, .layers = DGRAD_LAYERS,
     .ptx = "mma\\.sync\\.aligned\\.m16n8k16\\.row\\.col\\.f32\\.f16\\.f16\\.f32\n"
            "ldmatrix\\.sync\\.aligned\\.m8n8\\.x4\\.trans\n"
            "cp\\.async\\.cg\\.shared\\.global\n",
     .sass = "HMMA\\.16816\\.F32\n"
             "LDSM\\.16\\.MT88\\.4\n"
             "LDGSTS\\.E\\.BYPASS\\.128\n"},
    {.id = "06b", .name = "dgrad implicit GEMM, one GEMM per stride phase, cp.async",
     .source = DIR "06b_stride_phases.cu", DGRAD_F16_NHWC, .supports = supports_06b,
     .workspace_bytes = pad_dgrad_workspace_bytes, .launch = launch_06b, .branches = dgrad_shapes,
     .branch_of = branch_06b, .layers = DGRAD_LAYERS},
};
const int ch06_kernel_count = sizeof(ch06_kernels) / sizeof(ch06_kernels[0]);
