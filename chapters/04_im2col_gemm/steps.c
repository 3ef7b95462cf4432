/* steps.c: chapter 04's registry entries, one per step, in the order a reader climbs them: 04a-04d
 * multiply the im2col buffer (im2col.cu) with an SGEMM of our own (sgemm.cuh and a file per step), 04x
 * with cuBLAS. Each step's kernel and launch are in its own file, named in .source; README.md walks
 * through them.
 */
#include "conv.h"
#include "im2col.h"

CONV_STEP(04a)
CONV_STEP(04b)
CONV_STEP(04c)
CONV_STEP(04d)
void launch_04x(const conv_problem *prob, void *x, void *w, void *y, void *workspace);

#define DIR "chapters/04_im2col_gemm/"
/* Every step: fprop in fp32 NCHW, the im2col buffer as its workspace, im2col timed as its own phase */
#define IM2COL_STEP                                                                                \
    .pass = PASS_FPROP, .dtype = DTYPE_F32, .layout = LAYOUT_NCHW, .device = ON_GPU,               \
    .workspace_bytes = im2col_workspace_bytes, .phase_name = "im2col", .launch_phase = im2col_phase

const conv_kernel ch04_kernels[] = {
    {.id = "04a", .name = "im2col + SGEMM, 32x32 smem tiles", .source = DIR "04a_smem_tiles.cu", IM2COL_STEP,
     .supports = supports_04a, .launch = launch_04a},
    {.id = "04b", .name = "im2col + SGEMM, 64x256 tile, 8x8 per thread", .source = DIR "04b_register_blocking.cu",
     IM2COL_STEP, .supports = supports_04b, .launch = launch_04b},
    {.id = "04c", .name = "im2col + SGEMM, 16-byte loads and stores", .source = DIR "04c_16byte_accesses.cu",
     IM2COL_STEP, .supports = supports_04c, .launch = launch_04c,
     .ptx = "ld\\.global\\.nc\\.v4\\.f32\n"
            "ld\\.shared\\.v4\\.f32\n"
            "st\\.global\\.v4\\.f32\n"},
    {.id = "04d", .name = "im2col + SGEMM, double-buffered stages", .source = DIR "04d_double_buffered.cu",
     IM2COL_STEP, .supports = supports_04d, .launch = launch_04d},
    {.id = "04x", .name = "im2col + cuBLAS SGEMM (fp32, no TF32)", .source = DIR "04x_cublas.cu", IM2COL_STEP,
     .supports = im2col_supports, .launch = launch_04x, .library = "cuBLAS"},
};
const int ch04_kernel_count = sizeof(ch04_kernels) / sizeof(ch04_kernels[0]);
