/* Chapter 01: convolution as seven nested loops on the CPU.
 *
 * What it computes: fprop, y = x (*) w, fp32 NCHW activations and KCRS filters, with padding,
 * stride, dilation and groups:
 *
 *   y[n][k][p][q] = sum over c in k's group, r < R, s < S of
 *                   x[n][c][p*stride_h - pad_h + r*dil_h][q*stride_w - pad_w + s*dil_w] * w[k][c][r][s]
 *
 * where a tap that falls outside the image reads zero (that is all "padding" means). This is the
 * definition, written to be read: every later chapter computes exactly this sum, faster.
 *
 * Why it is slow: 2*N*K*P*Q*C*R*S flops (ResNet-50's res2_3x3 at N=32: 7.4 GFLOP) on one core, with
 * the innermost loop walking a 3-wide filter row, so the compiler has almost nothing to vectorize and
 * each x value is fetched again for every one of the K output channels that uses it.
 *
 * Run it:
 *   ./build/conv run 01 --n 1 --c 64 --h 56 --w 56 --k 64 --r 3 --s 3 --pad 1
 *   ./build/conv run 01 --layer tutorial/first_graph --n 1
 * It is checked against the fp64 reference (common/harness/reference.c), which is separate code: this loop
 * accumulates in fp32, like the GPU kernels that follow.
 */
#include "conv.h"

static void cpu_loop_fprop(const conv_problem *prob, void *x_ptr, void *w_ptr, void *y_ptr, void *workspace)
{
    (void)workspace;
    const float *x = x_ptr, *w = w_ptr;
    float *y = y_ptr;
    const int C = prob->c, H = prob->h, W = prob->w, K = prob->k, R = prob->r, S = prob->s;
    const int P = prob->p, Q = prob->q;
    const int c_per_group = C / prob->groups, k_per_group = K / prob->groups;

    for (int n = 0; n < prob->n; n++)
        for (int k = 0; k < K; k++)
            for (int p = 0; p < P; p++)
                for (int q = 0; q < Q; q++) {
                    const int first_channel = (k / k_per_group) * c_per_group;
                    float sum = 0.0f;
                    for (int c = 0; c < c_per_group; c++)
                        for (int r = 0; r < R; r++)
                            for (int s = 0; s < S; s++) {
                                int in_h = p * prob->stride_h - prob->pad_h + r * prob->dil_h;
                                int in_w = q * prob->stride_w - prob->pad_w + s * prob->dil_w;
                                if (in_h < 0 || in_h >= H || in_w < 0 || in_w >= W)
                                    continue; /* zero padding contributes nothing */
                                float in = x[(((size_t)n * C + first_channel + c) * H + in_h) * W + in_w];
                                float weight = w[(((size_t)k * c_per_group + c) * R + r) * S + s];
                                sum += in * weight;
                            }
                    y[(((size_t)n * K + k) * P + p) * Q + q] = sum;
                }
}

const conv_kernel ch01_kernels[] = {
    {.id = "01", .name = "seven nested loops on the CPU",
     .source = "chapters/01_cpu_loop/cpu_loop.c",
     .pass = PASS_FPROP, .dtype = DTYPE_F32, .layout = LAYOUT_NCHW, .device = ON_CPU,
     .launch = cpu_loop_fprop},
};
const int ch01_kernel_count = sizeof ch01_kernels / sizeof ch01_kernels[0];
