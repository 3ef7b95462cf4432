/* counters.h: what a launch did, counted by the emulator the way Nsight Compute defines its metrics
 * (emu/README.md, "Counters"). Counts, never times; the timing model's fields at the end are modeled
 * time, kept apart and named so (emu/README.md, "The timing model"). Standalone (only <stdint.h>), so that the runner can
 * read the counters libcudaemu exports (emu_bench_take, below) without the emulator's insides. */
#ifndef EMU_COUNTERS_H
#define EMU_COUNTERS_H

#include <stdint.h>

typedef enum {
    CLASS_TENSOR,       /* mma, wmma.mma, wgmma.mma_async */
    CLASS_FP32,         /* f32 arithmetic */
    CLASS_FP64,
    CLASS_FP16,         /* f16/bf16 arithmetic */
    CLASS_INTEGER,      /* integer arithmetic, logic, shifts, comparisons, selects, moves */
    CLASS_CONVERSION,   /* cvt, cvta */
    CLASS_CONTROL,      /* branches, calls, returns, exit */
    CLASS_GLOBAL,       /* loads, stores and atomics in global memory, cp.async, bulk copies */
    CLASS_SHARED,       /* loads and stores in shared memory, ldmatrix, wmma.load/store */
    CLASS_OTHER_MEMORY, /* param, local, const */
    CLASS_SYNC,         /* barriers, mbarrier, fences, warp collectives */
    CLASS_COUNT
} emu_class;

/* The states a warp is in, cycle by cycle, in the timing model (model.c), with Nsight Compute's names
 * (emu_stall_names): issuing, able to but another was picked, or stalled and why. */
typedef enum {
    STALL_SELECTED, STALL_NOT_SELECTED, STALL_WAIT, STALL_SHORT_SCOREBOARD, STALL_LONG_SCOREBOARD,
    STALL_MATH_PIPE_THROTTLE, STALL_MIO_THROTTLE, STALL_LG_THROTTLE, STALL_BARRIER, STALL_MEMBAR,
    STALL_COUNT
} emu_stall;
#if defined(__GNUC__)
__attribute__((unused))
#endif
static const char *const emu_stall_names[STALL_COUNT] = {
    [STALL_SELECTED] = "selected", [STALL_NOT_SELECTED] = "not_selected", [STALL_WAIT] = "wait",
    [STALL_SHORT_SCOREBOARD] = "short_scoreboard", [STALL_LONG_SCOREBOARD] = "long_scoreboard",
    [STALL_MATH_PIPE_THROTTLE] = "math_pipe_throttle", [STALL_MIO_THROTTLE] = "mio_throttle",
    [STALL_LG_THROTTLE] = "lg_throttle", [STALL_BARRIER] = "barrier", [STALL_MEMBAR] = "membar"};

typedef struct {
    uint64_t launches;
    uint64_t grid_blocks, emulated_blocks; /* blocks the grids had, and how many ran (counters.h, sampled) */
    uint64_t warp_instructions;       /* smsp__inst_executed: instructions executed, per warp */
    uint64_t thread_instructions;     /* smsp__thread_inst_executed: the same, per active thread */
    uint64_t by_class[CLASS_COUNT];   /* warp instructions */
    uint64_t global_load_requests, global_load_sectors, global_load_bytes;    /* a request: one warp's */
    uint64_t global_store_requests, global_store_sectors, global_store_bytes; /* instruction; a sector: 32 B */
    uint64_t shared_load_requests, shared_load_wavefronts, shared_load_ideal;    /* wavefronts: the passes */
    uint64_t shared_store_requests, shared_store_wavefronts, shared_store_ideal; /* through the 32 banks */
    uint64_t barriers;                /* bar.sync / barrier.sync arrivals, per warp */
    uint64_t tensor_flops;            /* 2*M*N*K of every mma, wmma and wgmma */
    /* The timing model's (EMU_MODEL; model.c), launch after launch: modeled, never counted or measured */
    uint64_t modeled_cycles;          /* cycles the modeled SM took: the launches' modeled time */
    uint64_t modeled_picoseconds;     /* the same at the modeled GPU's clock */
    uint64_t modeled_sm_blocks;       /* blocks the modeled SM ran */
    uint64_t modeled_extrapolated_blocks; /* and the blocks after them it would run, extrapolated (model_waves) */
    uint64_t modeled_extrapolation_variance; /* the extrapolation's variance, cycles squared */
    uint64_t modeled_resident_blocks; /* blocks it held at once (summed over launches) */
    uint64_t modeled_issued;          /* warp instructions it issued: machine instructions (model_compile) */
    uint64_t modeled_issued_ptx;      /* the PTX instructions they were made of */
    uint64_t modeled_sass_launches;   /* modeled launches whose machine code was read (else PTX alone) */
    uint64_t modeled_stalls[STALL_COUNT]; /* warp-cycles in each state */
    /* the same by warpgroup of the block (warps 4g to 4g + 3; a block has 8 at most), over the blocks the
     * modeled SM ran (not the waves extrapolated): where warps have roles, each role's states */
    uint64_t modeled_warpgroup_stalls[8][STALL_COUNT];
} emu_counters;

/* Sampled launches. A full-size layer has thousands of blocks; most do the same work as their
 * neighbours. With a sample of S, the blocks of a grid are sorted into kinds by where they sit in each
 * dimension (the first, the last, or one between: up to 27 kinds, so every edge of the grid is its own
 * kind), and S blocks of each kind are emulated, chosen at random (a fixed seed); then twice as many
 * of each kind, up to at least 64 per kind before its spread is judged, and on for each kind
 * whose blocks differ, until the estimate of the total instructions, global sectors and shared
 * wavefronts has a relative standard error of at most 0.5% (launch.c, sampled_launch). Each block's counts
 * stand for its kind: they are scaled by (blocks of the kind) / (blocks emulated of it). The outputs of
 * a sampled launch are not computed (most blocks never run), so such a launch counts and is never
 * verified, and initcheck and racecheck are off for it (`conv check --emulate` runs them; later kernels
 * read what skipped blocks did not write, which initcheck would only report).
 *
 * What libcudaemu exports for `conv bench --emulate` (looked up with dlsym; absent on a real GPU): */
typedef void emu_bench_sample_fn(unsigned blocks_per_kind); /* from the next launch on; 0: every block */
/* The counters of every launch since the last call, scaled as above, and how many blocks their grids
 * had and how many were emulated; then starts again from zero. */
typedef void emu_bench_take_fn(emu_counters *counters, uint64_t *grid_blocks, uint64_t *emulated_blocks);
#define EMU_BENCH_SAMPLE "emu_bench_sample"
#define EMU_BENCH_TAKE "emu_bench_take"
/* The GPU launches are modeled on (EMU_MODEL): its name, and its peaks in TFLOP/s (fp16 on the tensor
 * cores, dense; fp32 FMA), for `conv run --model`'s line; false when no launch is modeled. */
typedef bool emu_model_gpu_fn(const char **label, double *tensor_fp16_tflops, double *fp32_tflops);
#define EMU_MODEL_GPU "emu_model_gpu"

#endif
