/* steps.c: chapter 05's registry entries, one per step, in the order a reader climbs them. Each step's
 * kernel, supports() and launch are in its own file, named in .source; README.md walks through them.
 */
#include "conv.h"
#include "epilogue.h"
#include "pad_channels.h"

#define FUSED(id)                                                                                  \
    void launch_fused_##id(const conv_problem *prob, void *x, void *w, void *y, void *workspace,   \
                           const conv_epilogue *ep);
CONV_STEP(05a)
CONV_STEP(05b)
CONV_STEP(05c)
CONV_STEP(05d)
CONV_STEP(05e)
CONV_STEP(05f)
CONV_STEP(05g)
CONV_STEP(05h)
CONV_STEP(05i)
CONV_STEP(05j)
CONV_STEP(05k)
FUSED(05i)
FUSED(05j)
FUSED(05k)
FUSED(05l)
#undef FUSED

#define DIR "chapters/05_implicit_gemm_tc/"
#define FPROP_F16_NHWC .pass = PASS_FPROP, .dtype = DTYPE_F16, .layout = LAYOUT_NHWC, .device = ON_GPU
/* From 05d on, a step pads C/groups to a multiple of 8 when it must (pad_fprop): two paths to test */
#define PADDED .branches = pad_fprop_branches, .branch_of = pad_fprop_branch

/* The fusion comparison: 05i (the epilogue in the convolution's store) against 05l (the same convolution,
 * then a separate pass), each benchmarked and counted with these epilogues, from the lightest to the
 * heaviest, so that the numbers show what fusing saves and what it costs. (05j and 05k fuse too, but
 * only change 05i's tile: with --epilogue they run as well.) */
#define FUSION_COMPARED "bias,relu;bn,relu;bn,residual,relu"

const conv_kernel ch05_kernels[] = {
    {.id = "05a", .name = "implicit GEMM, WMMA 16x16x16, 64x64 tile", .source = DIR "05a_wmma.cu", FPROP_F16_NHWC,
     .supports = supports_05a, .launch = launch_05a,
     .ptx = "wmma\\.mma\\.sync\n"},
    {.id = "05b", .name = "mma.sync + ldmatrix, padded smem, 64x64", .source = DIR "05b_mma_sync.cu",
     FPROP_F16_NHWC, .supports = supports_05b, .launch = launch_05b,
     .ptx = "mma\\.sync\\.aligned\\.m16n8k16\\.row\\.col\\.f32\\.f16\\.f16\\.f32\n"
            "ldmatrix\\.sync\\.aligned\\.m8n8\\.x4\n",
     .sass = "HMMA\\.16816\\.F32\n"
             "LDSM\\.16\\.M88\\.4\n"},
    {.id = "05c", .name = "mma.sync + ldmatrix, swizzled smem, 64x64", .source = DIR "05c_swizzle.cu",
     FPROP_F16_NHWC, .supports = supports_05c, .launch = launch_05c,
     .ptx = "ldmatrix\\.sync\\.aligned\\.m8n8\\.x4\n"},
    {.id = "05d", .name = "16-byte loads, split addresses, 64x64", .source = DIR "05d_16byte_loads.cu",
     FPROP_F16_NHWC, .supports = supports_05d, .workspace_bytes = pad_fprop_workspace_bytes, PADDED, .launch = launch_05d,
     .ptx = "ld\\.global\\.nc\\.v4\n"
            "st\\.shared\\.v4\n"},
    {.id = "05e", .name = "16-byte loads, 128x128 with 64x64 warp tiles", .source = DIR "05e_large_tile.cu",
     FPROP_F16_NHWC, .supports = supports_05e, .workspace_bytes = pad_fprop_workspace_bytes, PADDED, .launch = launch_05e},
    {.id = "05f", .name = "cp.async 4-stage pipeline, 128x128", .source = DIR "05f_cp_async.cu", FPROP_F16_NHWC,
     .supports = supports_05f, .workspace_bytes = pad_fprop_workspace_bytes, PADDED, .launch = launch_05f,
     .ptx = "cp\\.async\\.cg\\.shared\\.global\n"
            "cp\\.async\\.wait_group\n",
     .sass = "LDGSTS\\.E\\.BYPASS\\.128\n"},
    {.id = "05g", .name = "pipeline + walked addresses and tap masks, 128x128", .source = DIR "05g_walked.cu",
     FPROP_F16_NHWC, .supports = supports_05g, .workspace_bytes = pad_fprop_workspace_bytes, PADDED, .launch = launch_05g,
     .ptx = "cp\\.async\\.cg\\.shared\\.global\n"},
    {.id = "05h", .name = "walked pipeline, staged 16-byte stores, 128x128", .source = DIR "05h_staged_stores.cu",
     FPROP_F16_NHWC, .supports = supports_05h, .workspace_bytes = pad_fprop_workspace_bytes, PADDED, .launch = launch_05h,
     .ptx = "st\\.global\\.v4\n",
     .sass = "HMMA\\.16816\\.F32\n"
             "LDGSTS\\.E\\.BYPASS\\.128\n"
             "STG\\.E\\.128\n"},
    {.id = "05i", .name = "05h + fused epilogue (bias, BN, residual, ReLU)", .source = DIR "05i_fused_epilogue.cu",
     FPROP_F16_NHWC, .supports = supports_05i, .workspace_bytes = pad_fprop_workspace_bytes, PADDED, .launch = launch_05i,
     .launch_fused = launch_fused_05i, .compared_epilogues = FUSION_COMPARED,
     /* batch norm's scale and shift: one fma per output, 16-byte stores */
     .ptx = "fma\\.rn\\.f32\n"
            "st\\.global\\.v4\n"},
    {.id = "05j", .name = "05i on a 64x64 tile (small layers)", .source = DIR "05j_small_tile.cu",
     FPROP_F16_NHWC, .supports = supports_05j, .workspace_bytes = pad_fprop_workspace_bytes, PADDED, .launch = launch_05j,
     .launch_fused = launch_fused_05j},
    {.id = "05k", .name = "05i on a 256x64 tile (K = 64 layers)", .source = DIR "05k_tall_tile.cu",
     FPROP_F16_NHWC, .supports = supports_05k, .workspace_bytes = pad_fprop_workspace_bytes, PADDED, .launch = launch_05k,
     .launch_fused = launch_fused_05k},
    /* 05l has no plain launch: without an epilogue it would be 05h again */
    {.id = "05l", .name = "05h + separate epilogue kernel (unfused)", .source = DIR "05l_unfused_epilogue.c",
     FPROP_F16_NHWC, .supports = supports_05h, .workspace_bytes = pad_fprop_workspace_bytes, PADDED,
     .launch_fused = launch_fused_05l, .compared_epilogues = FUSION_COMPARED},
};
const int ch05_kernel_count = sizeof(ch05_kernels) / sizeof(ch05_kernels[0]);
