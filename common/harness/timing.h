/* timing.h: how every number in this repository is measured.
 *
 * GPU work: CUDA events around each run, after warm-up runs, with the L2 cache flushed before every
 * run (a write of a buffer twice the L2 size) so that no run finds its inputs already on chip; the
 * result is the median. CPU work: a monotonic clock around each run, median likewise.
 */
#ifndef TIMING_H
#define TIMING_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int warmup;     /* runs before timing starts: module load, caches of descriptors, clocks */
    int reps;       /* timed runs; the median is reported (at least 20 for GPU numbers) */
    bool flush_l2;  /* write a 2x-L2-sized buffer before each timed run */
} timing_opts;

/* The defaults the runner and the benchmark use: 5 warm-up runs, 20 timed, L2 flushed. */
timing_opts timing_defaults(void);

/* One run of the work being timed. For GPU work it only enqueues on the default stream. */
typedef void (*timed_fn)(void *ctx);

typedef struct {
    double median_ms;
    double min_ms, max_ms;
    int reps;                 /* how many runs the median is of */
} timing_result;

timing_result time_gpu(timed_fn fn, void *ctx, const timing_opts *opts);

/* CPU kernels are slow: the reps stop early once max_seconds have been spent (but never fewer than
 * three), and the result says how many ran. */
timing_result time_cpu(timed_fn fn, void *ctx, const timing_opts *opts, double max_seconds);

/* Median of n values (reorders the array). */
double median_of(double *values, int n);

#ifdef __cplusplus
}
#endif

#endif
