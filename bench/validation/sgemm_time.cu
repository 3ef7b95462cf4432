/* The SGEMM worklog's kernels timed on a GPU: the measured side of the timing model's independent check.
 *
 * What it does: C = alpha * A B + beta * C, fp32, row-major, M = N = K = SIZE (default 4096), with each of
 * the six kernels of bench/validation/sgemm_worklog.cu launched as bench/model_sgemm.py models it, and
 * cuBLAS's sgemm beside them. Each kernel is first checked against cuBLAS from the same C (every element
 * within twice the fp32 bound of a K-term sum: both are fp32 sums), then timed: one warm-up launch, then
 * launches timed one by one with CUDA events until a second has passed (at least 3, at most 50), the median
 * kept. One CSV row per kernel on stdout, which bench/model_sgemm.py reads (bench/results/validation/).
 *
 * Run on the GPU machine (bench/gpu_session.sh validation builds and runs it):
 *   nvcc -O3 -arch=native -Icommon/kernel bench/validation/sgemm_time.cu common/kernel/check.c -lcublas \
 *        -o build/sgemm_time && ./build/sgemm_time [SIZE] > bench/results/validation/sgemm_h100.csv
 *   ./build/sgemm_time SIZE --once   each kernel launched once, unchecked and untimed (for a profiler)
 */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "check.h"
#include "sgemm_worklog.cu"

static const float ALPHA = 1.5f, BETA = -0.5f;  /* bench/model_sgemm.py's */

typedef void (*Sgemm)(int, int, int, float, const float *, const float *, float, float *);

/* The launch bench/model_sgemm.py models: threads per block, the C tile one block computes, and whether
 * blockIdx.x walks C's rows (kernels 1-3) or its columns (4-6). */
struct Kernel {
    const char *row, *name;
    Sgemm run;
    dim3 block;
    int tile_rows, tile_cols;
    bool rows_first;
};

static const Kernel KERNELS[] = {
    {"1: Naive", "sgemm_naive", sgemm_naive, dim3(32, 32), 32, 32, true},
    {"2: GMEM Coalescing", "sgemm_coalesced", sgemm_coalesced, dim3(1024), 32, 32, true},
    {"3: SMEM Caching", "sgemm_smem", sgemm_smem, dim3(1024), 32, 32, true},
    {"4: 1D Blocktiling", "sgemm_1d_blocktiling", sgemm_1d_blocktiling, dim3(512), 64, 64, false},
    {"5: 2D Blocktiling", "sgemm_2d_blocktiling", sgemm_2d_blocktiling, dim3(256), 128, 128, false},
    {"6: Vectorized Mem Access", "sgemm_vectorized", sgemm_vectorized, dim3(256), 128, 128, false},
};

struct Problem {
    int size;
    float *a, *b, *c, *c_start;  /* device; c_start: C before any launch */
    cublasHandle_t handle;
};

static void launch(const Kernel *k, const Problem &p)
{
    const int rows = p.size / k->tile_rows, cols = p.size / k->tile_cols;
    const dim3 grid = k->rows_first ? dim3(rows, cols) : dim3(cols, rows);
    k->run<<<grid, k->block>>>(p.size, p.size, p.size, ALPHA, p.a, p.b, BETA, p.c);
    CUDA_CHECK_LAUNCH();
}

/* cuBLAS is column-major: row-major C = alpha A B + beta C is column-major C^T = alpha B^T A^T + beta C^T. */
static void cublas_sgemm(const Problem &p, const float *a, const float *b, float beta, float *c)
{
    CUBLAS_CHECK(cublasSgemm(p.handle, CUBLAS_OP_N, CUBLAS_OP_N, p.size, p.size, p.size, &ALPHA, b, p.size, a,
                             p.size, &beta, c, p.size));
}

static double median_ms(const Problem &p, const Kernel *k)
{
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    k ? launch(k, p) : cublas_sgemm(p, p.a, p.b, BETA, p.c);  /* warm-up */
    std::vector<float> times;
    float total = 0.0f;
    while (times.size() < 3 || (total < 1000.0f && times.size() < 50)) {
        CUDA_CHECK(cudaEventRecord(start));
        k ? launch(k, p) : cublas_sgemm(p, p.a, p.b, BETA, p.c);
        CUDA_CHECK(cudaEventRecord(stop));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float ms;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        times.push_back(ms);
        total += ms;
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    std::sort(times.begin(), times.end());
    const size_t n = times.size();
    return n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
}

/* The largest |got - want| over its bound, 2 K 2^-24 (|alpha| |A| |B| + |beta| |C|): over 1 is wrong, as is
 * any NaN. `want` and `scale` are host copies of cuBLAS's C and of the bound's sum of magnitudes. */
static double worst_error(const Problem &p, const std::vector<float> &want, const std::vector<float> &scale)
{
    std::vector<float> got(want.size());
    CUDA_CHECK(cudaMemcpy(got.data(), p.c, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
    double worst = 0.0;
    for (size_t i = 0; i < got.size(); i++) {
        const double bound = 2.0 * p.size * std::ldexp(1.0, -24) * scale[i] + 1e-30;
        const double error = std::fabs((double)got[i] - want[i]) / bound;
        if (!(error <= worst))  /* a NaN is never <= anything: it becomes the worst */
            worst = std::isnan(error) ? INFINITY : error;
    }
    return worst;
}

static float *device_copy(const std::vector<float> &host)
{
    float *device;
    CUDA_CHECK(cudaMalloc(&device, host.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(device, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
    return device;
}

int main(int argc, char **argv)
{
    check_set_program("sgemm_time");
    const int size = argc > 1 ? atoi(argv[1]) : 4096;
    const bool once = argc > 2 && strcmp(argv[2], "--once") == 0;
    if (size <= 0 || size % 128 || (argc > 2 && !once) || argc > 3)
        fail_status(2, "usage: sgemm_time [SIZE, a multiple of 128] [--once]");
    const size_t elements = (size_t)size * size;

    /* inputs uniform in [-1, 1) from a fixed linear congruential sequence, the same on every run */
    std::vector<float> host(3 * elements), magnitudes(3 * elements);
    unsigned state = 12345u;
    for (size_t i = 0; i < host.size(); i++) {
        state = state * 1664525u + 1013904223u;
        host[i] = (float)(state >> 8) / (float)(1u << 23) - 1.0f;
        magnitudes[i] = std::fabs(host[i]);
    }
    Problem p;
    p.size = size;
    float *all = device_copy(host), *all_abs = device_copy(magnitudes);
    p.a = all, p.b = all + elements, p.c_start = all + 2 * elements;
    CUDA_CHECK(cudaMalloc(&p.c, elements * sizeof(float)));
    CUBLAS_CHECK(cublasCreate(&p.handle));
    CUBLAS_CHECK(cublasSetMathMode(p.handle, CUBLAS_PEDANTIC_MATH));  /* fp32 throughout, no TF32 */

    if (once) {
        for (const Kernel &k : KERNELS)
            launch(&k, p);
        CUDA_CHECK(cudaDeviceSynchronize());
        return 0;
    }

    /* cuBLAS's C, and the error bound's |alpha| |A| |B| + |beta| |C| (ALPHA > 0, BETA < 0: -BETA) */
    std::vector<float> want(elements), scale(elements);
    CUDA_CHECK(cudaMemcpy(p.c, p.c_start, elements * sizeof(float), cudaMemcpyDeviceToDevice));
    cublas_sgemm(p, p.a, p.b, BETA, p.c);
    CUDA_CHECK(cudaMemcpy(want.data(), p.c, elements * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(p.c, all_abs + 2 * elements, elements * sizeof(float), cudaMemcpyDeviceToDevice));
    cublas_sgemm(p, all_abs, all_abs + elements, -BETA, p.c);
    CUDA_CHECK(cudaMemcpy(scale.data(), p.c, elements * sizeof(float), cudaMemcpyDeviceToHost));

    cudaDeviceProp prop;
    int device, runtime;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    char date[16];
    const time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));

    printf("kernel,name,m,n,k,time_ms,gflops,worst_error_over_bound,status,gpu,cuda,date\n");
    const double flop = 2.0 * size * size * (double)size;
    int failed = 0;
    for (size_t i = 0; i <= sizeof KERNELS / sizeof KERNELS[0]; i++) {
        const Kernel *k = i < sizeof KERNELS / sizeof KERNELS[0] ? &KERNELS[i] : NULL;  /* NULL: cuBLAS */
        CUDA_CHECK(cudaMemcpy(p.c, p.c_start, elements * sizeof(float), cudaMemcpyDeviceToDevice));
        k ? launch(k, p) : cublas_sgemm(p, p.a, p.b, BETA, p.c);
        CUDA_CHECK(cudaDeviceSynchronize());
        const double worst = worst_error(p, want, scale);
        const bool pass = worst <= 1.0;
        failed += k && !pass;
        const double ms = median_ms(p, k);
        printf("\"%s\",%s,%d,%d,%d,%.4f,%.1f,%.4f,%s,%s,%d.%d,%s\n", k ? k->row : "0: cuBLAS",
               k ? k->name : "cublasSgemm", size, size, size, ms, flop / ms / 1e6, worst, !k ? "reference" : pass ? "pass" : "FAIL",
               prop.name, runtime / 1000, runtime % 1000 / 10, date);
        fflush(stdout);
    }
    CUBLAS_CHECK(cublasDestroy(p.handle));
    CUDA_CHECK(cudaFree(all));
    CUDA_CHECK(cudaFree(all_abs));
    CUDA_CHECK(cudaFree(p.c));
    return failed ? 1 : 0;
}
