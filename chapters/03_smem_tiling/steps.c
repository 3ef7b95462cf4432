/* steps.c: chapter 03's registry entries, one per step, in the order a reader climbs them: 03a stages a
 * block's tile in shared memory, 03b adds register blocking. Each step's kernel, supports() and launch
 * are in its own file, named in .source; what both share is in tiled.cuh; README.md walks through them.
 */
#include "conv.h"

CONV_STEP(03a)
CONV_STEP(03b)

#define DIR "chapters/03_smem_tiling/"
#define FPROP_F32_NCHW .pass = PASS_FPROP, .dtype = DTYPE_F32, .layout = LAYOUT_NCHW, .device = ON_GPU

const conv_kernel ch03_kernels[] = {
    {.id = "03a", .name = "smem tile + halo, one output per thread", .source = DIR "03a_smem_tile.cu",
     FPROP_F32_NCHW, .supports = supports_03a, .launch = launch_03a,
     .ptx = "ld\\.shared\\.f32\n"
            "st\\.shared\\.f32\n"},
    {.id = "03b", .name = "smem tile + 8x8 register blocking", .source = DIR "03b_register_blocking.cu",
     FPROP_F32_NCHW, .supports = supports_03b, .launch = launch_03b},
};
const int ch03_kernel_count = sizeof(ch03_kernels) / sizeof(ch03_kernels[0]);
