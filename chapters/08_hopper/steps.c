/* steps.c: chapter 08's registry entries, one per step. Each step's kernel, supports() and launch are
 * in its own file, named in .source; what both share is in hopper.cuh; README.md walks through them.
 */
#include "conv.h"
#include "pad_channels.h"

CONV_STEP(08a)
CONV_STEP(08b)

#define DIR "chapters/08_hopper/"
#define FPROP_F16_NHWC .pass = PASS_FPROP, .dtype = DTYPE_F16, .layout = LAYOUT_NHWC, .device = ON_GPU
/* Both pad C/groups to a multiple of 8 when they must (pad_fprop): two paths to test */
#define PADDED .branches = pad_fprop_branches, .branch_of = pad_fprop_branch

const conv_kernel ch08_kernels[] = {
    {.id = "08a", .name = "implicit GEMM, wgmma m64n128k16 from swizzled smem, cp.async 5-stage, 128x128",
     .source = DIR "08a_wgmma.cu", FPROP_F16_NHWC, .supports = supports_08a,
     .workspace_bytes = pad_fprop_workspace_bytes, .launch = launch_08a, PADDED,
     /* wgmma from shared memory, fed by cp.async and fenced into the async proxy */
     .ptx = "wgmma\\.mma_async\\.sync\\.aligned\\.m64n128k16\\.f32\\.f16\\.f16\n"
            "wgmma\\.fence\\.sync\\.aligned\n"
            "wgmma\\.commit_group\\.sync\\.aligned\n"
            "wgmma\\.wait_group\\.sync\\.aligned 1;\n"
            "fence\\.proxy\\.async\\.shared::cta\n"
            "cp\\.async\\.cg\\.shared\\.global\n",
     .sass = "HGMMA\\.64x128x16\\.F32\n"
             "WARPGROUP\\.ARRIVE\n"
             "LDGSTS\\.E\\.BYPASS\\.128\n"
             "FENCE\\.VIEW\\.ASYNC\\.S\n"},
    {.id = "08b", .name = "08a + TMA for the filter, mbarriers, producer warpgroup + 2 consumers, setmaxnreg",
     .source = DIR "08b_warp_specialized.cu", FPROP_F16_NHWC, .supports = supports_08b,
     .workspace_bytes = pad_fprop_workspace_bytes, .launch = launch_08b, PADDED,
     /* 08a's wgmma; the filter by TMA on mbarriers; the producer's and the consumers' register counts */
     .ptx = "wgmma\\.mma_async\\.sync\\.aligned\\.m64n128k16\\.f32\\.f16\\.f16\n"
            "cp\\.async\\.bulk\\.tensor\\.2d\\.shared::cluster\\.global\\.mbarrier::complete_tx::bytes\n"
            "mbarrier\\.try_wait\\.parity\n"
            "mbarrier\\.expect_tx\n"
            "setmaxnreg\\.dec\\.sync\\.aligned\\.u32\n"
            "setmaxnreg\\.inc\\.sync\\.aligned\\.u32\n",
     .sass = "HGMMA\\.64x128x16\\.F32\n"
             "UTMALDG\\.2D\n"
             "USETMAXREG\\.DEALLOC\n"
             "USETMAXREG\\.TRY_ALLOC\n"
             "SYNCS\\.PHASECHK\n"},
};
const int ch08_kernel_count = sizeof(ch08_kernels) / sizeof(ch08_kernels[0]);
