/* reference_gpu.cu: the fp64 reference on the GPU, for problems too large for the CPU reference.
 *
 * One thread per output element, each calling the plain per-element sum of reference_element.h (wgrad:
 * one block per element, its threads splitting the long sum): no tiling, nothing clever, so that it is
 * as easy to trust as the CPU version. The
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

/* One block per filter element: its threads split the N*P*Q-long sum by residue, then add the partial
 * sums in a fixed tree order (so the reference is deterministic too). */
enum { WGRAD_THREADS = 128 };

static __global__ void wgrad_kernel(conv_problem prob, const float *x, double *dw, const float *dy)
{
    __shared__ double partial[WGRAD_THREADS];
    int at[4];
    unflatten(blockIdx.x, prob.c / prob.groups, prob.r, prob.s, at);
    partial[threadIdx.x] = ref_wgrad_partial(&prob, x, dy, at[0], at[1], at[2], at[3], threadIdx.x, WGRAD_THREADS);
    for (int half = WGRAD_THREADS / 2; half > 0; half /= 2) {
        __syncthreads();
        if ((int)threadIdx.x < half)
            partial[threadIdx.x] += partial[threadIdx.x + half];
    }
    if (threadIdx.x == 0)
        dw[blockIdx.x] = partial[0];
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
    wgrad_kernel<<<(unsigned)problem_w_elems(prob), WGRAD_THREADS>>>(*prob, x, dw, dy);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
}
