/* reference_gpu.cu: the fp64 reference on the GPU, for problems too large for the CPU reference.
 *
 * One thread per output element, each calling the plain per-element sum of reference_element.h: no
 * tiling, no shared memory, nothing clever, so that it is as easy to trust as the CPU version. The
 * cpu suite checks those same functions against the CPU reference on the host; the gpu suite checks
 * these kernels against it on the device.
 */
#include "check.h"
#include "reference.h"
#include "reference_element.h"

/* Splits a flat index over a [d0][d1][d2][d3] tensor into its four coordinates. */
static __device__ void unflatten(long long index, int d1, int d2, int d3, int coord[4])
{
    coord[3] = (int)(index % d3);
    coord[2] = (int)(index / d3 % d2);
    coord[1] = (int)(index / ((long long)d3 * d2) % d1);
    coord[0] = (int)(index / ((long long)d3 * d2 * d1));
}

static __global__ void fprop_kernel(conv_problem prob, const float *x, const float *w, double *y, long long count)
{
    long long index = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (index >= count)
        return;
    int at[4];
    unflatten(index, prob.k, prob.p, prob.q, at);
    y[index] = ref_fprop_element(&prob, x, w, at[0], at[1], at[2], at[3]);
}

static __global__ void dgrad_kernel(conv_problem prob, double *dx, const float *w, const float *dy, long long count)
{
    long long index = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (index >= count)
        return;
    int at[4];
    unflatten(index, prob.c, prob.h, prob.w, at);
    dx[index] = ref_dgrad_element(&prob, w, dy, at[0], at[1], at[2], at[3]);
}

static __global__ void wgrad_kernel(conv_problem prob, const float *x, double *dw, const float *dy, long long count)
{
    long long index = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (index >= count)
        return;
    int at[4];
    unflatten(index, prob.c / prob.groups, prob.r, prob.s, at);
    dw[index] = ref_wgrad_element(&prob, x, dy, at[0], at[1], at[2], at[3]);
}

static unsigned blocks_for(long long count, int threads)
{
    return (unsigned)((count + threads - 1) / threads);
}

extern "C" void ref_fprop_gpu(const conv_problem *prob, const float *x, const float *w, double *y)
{
    long long count = problem_y_elems(prob);
    fprop_kernel<<<blocks_for(count, 256), 256>>>(*prob, x, w, y, count);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
}

extern "C" void ref_dgrad_gpu(const conv_problem *prob, double *dx, const float *w, const float *dy)
{
    long long count = problem_x_elems(prob);
    dgrad_kernel<<<blocks_for(count, 256), 256>>>(*prob, dx, w, dy, count);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
}

extern "C" void ref_wgrad_gpu(const conv_problem *prob, const float *x, double *dw, const float *dy)
{
    /* Few, long-running threads (one per filter element, each summing N*P*Q terms): small blocks
     * spread them over more SMs. */
    long long count = problem_w_elems(prob);
    wgrad_kernel<<<blocks_for(count, 64), 64>>>(*prob, x, dw, dy, count);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
}
