/* timing.c: CUDA-event and wall-clock timing, medians. */
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "tensor.h"
#include "timing.h"

timing_opts timing_defaults(void)
{
    timing_opts opts = {.warmup = 5, .reps = 20, .flush_l2 = true};
    return opts;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median_of(double *values, int n)
{
    qsort(values, (size_t)n, sizeof values[0], compare_doubles);
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

static timing_result summarize(double *samples, int n)
{
    timing_result result = {.reps = n};
    result.median_ms = median_of(samples, n); /* sorts: min and max are at the ends */
    result.min_ms = samples[0];
    result.max_ms = samples[n - 1];
    return result;
}

/* A buffer twice the L2 size, written before each timed run: whatever the last run left in L2 is
 * evicted, so every run reads its inputs from device memory as it would in a network. */
static void flush_l2(void)
{
    static void *scrub = NULL;
    static size_t scrub_bytes = 0;
    if (!scrub) {
        int device, l2_bytes;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
        scrub_bytes = 2 * (size_t)(l2_bytes > 0 ? l2_bytes : 1 << 20);
        CUDA_CHECK(cudaMalloc(&scrub, scrub_bytes));
    }
    CUDA_CHECK(cudaMemsetAsync(scrub, 0, scrub_bytes, 0));
}

timing_result time_gpu(timed_fn fn, void *ctx, const timing_opts *opts)
{
    for (int i = 0; i < opts->warmup; i++)
        fn(ctx);
    CUDA_CHECK(cudaDeviceSynchronize());

    int reps = opts->reps > 0 ? opts->reps : 1;
    cudaEvent_t *starts = xmalloc((size_t)reps * sizeof(cudaEvent_t));
    cudaEvent_t *stops = xmalloc((size_t)reps * sizeof(cudaEvent_t));
    double *samples = xmalloc((size_t)reps * sizeof(double));
    for (int i = 0; i < reps; i++) {
        CUDA_CHECK(cudaEventCreate(&starts[i]));
        CUDA_CHECK(cudaEventCreate(&stops[i]));
    }
    for (int i = 0; i < reps; i++) {
        if (opts->flush_l2)
            flush_l2();
        CUDA_CHECK(cudaEventRecord(starts[i], 0));
        fn(ctx);
        CUDA_CHECK(cudaEventRecord(stops[i], 0));
    }
    CUDA_CHECK(cudaEventSynchronize(stops[reps - 1]));
    for (int i = 0; i < reps; i++) {
        float ms;
        CUDA_CHECK(cudaEventElapsedTime(&ms, starts[i], stops[i]));
        samples[i] = ms;
        CUDA_CHECK(cudaEventDestroy(starts[i]));
        CUDA_CHECK(cudaEventDestroy(stops[i]));
    }
    timing_result result = summarize(samples, reps);
    free(samples);
    free(stops);
    free(starts);
    return result;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

timing_result time_cpu(timed_fn fn, void *ctx, const timing_opts *opts, double max_seconds)
{
    for (int i = 0; i < opts->warmup; i++)
        fn(ctx);
    int reps = opts->reps > 0 ? opts->reps : 1;
    double *samples = xmalloc((size_t)reps * sizeof(double));
    double began = now_ms();
    int done = 0;
    while (done < reps) {
        double start = now_ms();
        fn(ctx);
        samples[done++] = now_ms() - start;
        if (done >= 3 && now_ms() - began > max_seconds * 1e3)
            break;
    }
    timing_result result = summarize(samples, done);
    free(samples);
    return result;
}
