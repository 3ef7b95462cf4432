/* gpu suite: the GPU reference kernels against the CPU reference, all three passes, on the fixed
 * awkward shapes and random ones. Exits 77 (skip) when no GPU answers. */
#include <stdlib.h>

#include "check.h"
#include "device.h"
#include "harness.h"
#include "reference.h"
#include "tensor.h"
#include "test_util.h"

static float *upload(const float *host, size_t count)
{
    float *device;
    CUDA_CHECK(cudaMalloc((void **)&device, count * sizeof *device));
    CUDA_CHECK(cudaMemcpy(device, host, count * sizeof *device, cudaMemcpyHostToDevice));
    return device;
}

static int compare(const double *cpu, double *device, size_t count)
{
    double *gpu = malloc(count * sizeof *gpu);
    CUDA_CHECK(cudaMemcpy(gpu, device, count * sizeof *gpu, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(device));
    int mismatches = 0;
    for (size_t i = 0; i < count; i++)
        mismatches += !(fabs(gpu[i] - cpu[i]) <= 1e-12 * (1.0 + fabs(cpu[i]))); /* NaN counts as a mismatch */
    free(gpu);
    return mismatches;
}

static void check_problem(const conv_problem *prob, uint64_t seed)
{
    size_t nx = (size_t)problem_x_elems(prob), nw = (size_t)problem_w_elems(prob), ny = (size_t)problem_y_elems(prob);
    float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w), *dy = malloc(ny * sizeof *dy);
    double *y = malloc(ny * sizeof *y), *dx = malloc(nx * sizeof *dx), *dw = malloc(nw * sizeof *dw);
    fill_uniform(x, nx, seed);
    fill_uniform(w, nw, seed + 1);
    fill_uniform(dy, ny, seed + 2);
    ref_fprop_cpu(prob, x, w, y);
    ref_dgrad_cpu(prob, dx, w, dy);
    ref_wgrad_cpu(prob, x, dw, dy);

    float *d_x = upload(x, nx), *d_w = upload(w, nw), *d_dy = upload(dy, ny);
    double *d_out;
    char label[160];
    problem_format(prob, label, sizeof label);
    CUDA_CHECK(cudaMalloc((void **)&d_out, ny * sizeof *d_out));
    CUDA_CHECK(cudaMemset(d_out, 0xff, ny * sizeof *d_out)); /* poison: unwritten elements are NaN */
    ref_fprop_gpu(prob, d_x, d_w, d_out);
    int bad = compare(y, d_out, ny);
    EXPECT(bad == 0, "fprop %s (seed %llu): %d elements differ", label, (unsigned long long)seed, bad);
    CUDA_CHECK(cudaMalloc((void **)&d_out, nx * sizeof *d_out));
    CUDA_CHECK(cudaMemset(d_out, 0xff, nx * sizeof *d_out));
    ref_dgrad_gpu(prob, d_out, d_w, d_dy);
    bad = compare(dx, d_out, nx);
    EXPECT(bad == 0, "dgrad %s (seed %llu): %d elements differ", label, (unsigned long long)seed, bad);
    CUDA_CHECK(cudaMalloc((void **)&d_out, nw * sizeof *d_out));
    CUDA_CHECK(cudaMemset(d_out, 0xff, nw * sizeof *d_out));
    ref_wgrad_gpu(prob, d_x, d_out, d_dy);
    bad = compare(dw, d_out, nw);
    EXPECT(bad == 0, "wgrad %s (seed %llu): %d elements differ", label, (unsigned long long)seed, bad);

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_w));
    CUDA_CHECK(cudaFree(d_dy));
    free(x), free(w), free(dy), free(y), free(dx), free(dw);
}

int main(int argc, char **argv)
{
    emulate_if_asked(argc, argv, true); /* without a GPU the gpu suite runs this on the emulator */
    char why[256];
    if (!gpu_available(why, sizeof why)) {
        printf("skip: %s\n", why);
        return 77;
    }
    /* The CPU side of the comparison sets the pace on a GPU, the emulated GPU side on the emulator: the
     * shapes that fill a GPU with blocks (for the kernels' tile choices) add nothing to the reference's
     * one-thread-per-output loops, so there the limit is lower. */
    const double max_flops = on_emulator() ? 1e7 : 5e7;
    for (int i = 0; i < check_fixed_count(); i++) {
        conv_problem prob = check_fixed_problem(i);
        if (problem_flops(&prob) <= max_flops)
            check_problem(&prob, 10 + (uint64_t)i);
    }
    uint64_t state = 99;
    for (int i = 0; i < 100; i++) {
        conv_problem prob = check_random_problem(&state);
        if (problem_flops(&prob) <= max_flops)
            check_problem(&prob, 500 + (uint64_t)i);
    }
    return test_summary("test_gpu_reference");
}
