/* model.h: the timing model's interface inside the emulator (model.c; emu/README.md, "The timing model").
 * launch.c asks it whether a launch is modeled and hands it the launch; the interpreter tells it each memory
 * access the instruction it just ran made. Not for the emulator's users: they set EMU_MODEL and read the
 * modeled fields of emu_counters (counters.h).
 */
#ifndef EMU_MODEL_H
#define EMU_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "emu.h"

typedef struct sm_model sm_model;

/* The GPU launches are modeled on (EMU_MODEL=h100|a100|a6000), or NULL: no model (the default). An unknown
 * name is reported once, on stderr, and no launch is modeled. */
const struct model_gpu *model_gpu_chosen(void);
const char *model_gpu_label(const struct model_gpu *gpu); /* "NVIDIA H100 SXM5 80GB" */
/* Chooses the GPU by name instead of EMU_MODEL (ptxrun --model); false for a name the model does not know. */
bool model_gpu_choose(const char *name);
void model_gpu_names(char *out, size_t size); /* "h100, a100, a6000" */
const char *model_gpu_arch(const struct model_gpu *gpu);  /* what ptxas compiles for: "sm_90a" */
/* Its peaks, TFLOP/s: fp16 on the tensor cores (dense) or fp32 FMA, from the GPU file's figures. */
double model_gpu_peak_tflops(const struct model_gpu *gpu, bool tensor_cores);

/* Runs, on one modeled SM of `gpu`, the blocks the GPU's block scheduler gives its first SM (linear ids 0,
 * SMs, 2 SMs, ...), cycle by cycle, as many at once as fit; the rest of the grid is the interpreter's to
 * run. `registers` is what ptxas gave the kernel per thread. Adds the modeled cycles, picoseconds and warp
 * states to `modeled`, and, when `counts` is not NULL, what the blocks did to it. EMU_OK or the first
 * error (one line in err). */
emu_status model_run_sm(const struct model_gpu *gpu, const emu_launch_desc *L, uint64_t smem_size, int registers,
                        emu_counters *modeled, emu_counters *counts, char *err, size_t err_len);

/* The modeled SM runs the blocks whose linear id is a multiple of this (the functional run skips them). */
uint64_t model_sm_stride(const struct model_gpu *gpu);

/* Compiles a PTX text for `arch` as the GPU would run it: each kernel's registers per thread (ptxas -v) into
 * its ptxas_registers and, where nvdisasm is at hand, the machine instructions ptxas made of each PTX
 * instruction into its .sass (has_sass). False, one line in err, when ptxas cannot be run or refuses the
 * text. */
bool model_compile(const char *ptx_text, ptx_module *module, const char *arch, char *err, size_t err_len);

/* Prints the modeled fields of counters under their label: "modeled on <GPU> (a model, not a measurement)". */
void emu_model_print(FILE *out, const emu_counters *c);

#endif
