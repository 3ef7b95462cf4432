/* harness.h: run one kernel on one problem, the way every number in this repository is produced.
 *
 *   1. fresh seeded random inputs (or the reader's .npy files), rounded to the kernel's dtype;
 *   2. the fp64 reference: on the CPU for small problems, on the GPU for large ones;
 *   3. inputs converted to the kernel's layout and dtype and uploaded; the output poisoned with NaN;
 *   4. one run, then verification (relative L2, scaled max error, NaN/Inf fail);
 *   5. timing (warm-up, L2 flush, median), then verification again on what the last timed run left;
 *   6. optionally cuDNN's best algorithm on the same problem, timed the same way.
 * With an epilogue (common/kernel/epilogue.h), seeded bias, scale, shift and residual operands are drawn too,
 * the reference is the fp64 convolution followed by the same epilogue, and the kernel's launch_fused
 * runs instead of launch.
 */
#ifndef HARNESS_H
#define HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "baseline.h"
#include "conv.h"
#include "device.h"
#include "epilogue.h"
#include "timing.h"
#include "verify.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const conv_kernel *kernel;
    conv_problem prob;           /* validated */
    uint64_t seed;               /* inputs are drawn from seed, seed+1 */
    bool verify;
    bool time;
    bool cudnn;                  /* also time cuDNN's best algorithm */
    timing_opts timing;
    double cpu_time_budget_s;    /* CPU kernels stop repeating after this long (at least 3 runs) */
    const char *load_dir;        /* read inputs from DIR/x.npy, w.npy, dy.npy (the pass's inputs); a file that
                                  * cannot be read or has the wrong shape exits 2 (bad input) */
    const char *save_dir;        /* write inputs, output and fp64 reference to DIR as .npy */
    epilogue_ops epilogue;       /* fprop only: fused bias / batch norm / residual / ReLU (launch_fused) */
} run_request;

typedef enum { RUN_PASS, RUN_FAIL, RUN_UNSUPPORTED } run_status;

typedef struct {
    run_status status;
    char why[512];               /* for RUN_UNSUPPORTED: the constraint; for RUN_FAIL: what failed */
    bool verified;
    verify_result check;         /* the check after the first run */
    verify_result check_after_timing;
    bool timed;
    timing_result timing;
    size_t workspace_bytes;      /* scratch the kernel needed (chapter 04: the im2col matrix) */
    bool phase_timed;            /* the kernel's first phase (conv_kernel.launch_phase), timed alone */
    timing_result phase_timing;
    double tflops, gbps;
    double min_bytes;            /* the traffic gbps counts: each tensor once, and an epilogue's operands */
    baseline_result cudnn;
    bool reference_on_gpu;
} run_outcome;

/* The CUDA runtime's version, "13.0"-style. */
const char *cuda_runtime_version(void);

run_request run_request_defaults(const conv_kernel *kernel, const conv_problem *prob);
run_outcome run_kernel(const run_request *request);

/* Shapes a check visits: the fixed awkward list, then seeded random valid problems. */
int check_fixed_count(void);
conv_problem check_fixed_problem(int index);
/* A random valid problem small enough for the CPU reference. C/groups and K/groups are multiples of 8
 * about half the time, so kernels that need aligned channels still see many shapes; one in six is
 * depthwise (groups = C = K), so depthwise kernels do too. */
conv_problem check_random_problem(uint64_t *state);

#ifdef __cplusplus
}
#endif

#endif
