/* emulated.h: `conv bench --emulate`: every chapter's kernels on their reference layers, on the PTX
 * emulator, counted (never timed), into bench/results/emulator.csv; the kernels with a fused epilogue
 * also with each of the epilogues chapter 05 compares (emulated.c: FUSION_EPILOGUES). */
#ifndef EMULATED_H
#define EMULATED_H

#include <stdbool.h>
#include <stdint.h>

#include "counters.h"
#include "epilogue.h"

typedef struct {
    const char *kernels;   /* comma-separated id prefixes, or NULL: every kernel the emulator can run */
    const char *layer;     /* SUITE/LAYER instead of each chapter's reference layers, or NULL */
    int n;                 /* the batch instead of the layer's, or -1 */
    unsigned sample;       /* blocks emulated per kind of block (emu/counters.h); 0: every block */
    const char *csv;       /* where the rows go (NULL: bench/results/emulator.csv) */
    uint64_t seed;
    epilogue_ops epilogue; /* --epilogue: only the kernels with a fused epilogue, with this one */
    bool quick;            /* --quick: a first look, each chapter's last step only */
    const char *model;     /* --model GPU: also modeled on it (EMU_MODEL, set before the emulator loaded),
                              into bench/results/modeled/<gpu>.csv; NULL: counts only */
    bool ptx_alone;        /* --ptx-alone: modeled without the machine code (EMU_NVDISASM empty, set before
                              the emulator loaded), into bench/results/modeled/ptx_alone/<gpu>.csv */
} emulated_bench;

/* Runs the request; 0 when every kernel ran (or was unsupported, which its row says), 1 otherwise. */
int bench_emulated(const emulated_bench *request);

/* The emulator's counting functions (emu/counters.h), looked up in the running program: false when it
 * does not run on libcudaemu. */
bool emulator_counting(emu_bench_sample_fn **sample, emu_bench_take_fn **take);

#endif
