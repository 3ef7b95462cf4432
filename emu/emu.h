/* emu.h: the emulator's inside, shared by the interpreter (exec.c, launch.c), device memory (memory.c),
 * the CUDA runtime it stands in for (runtime.c) and ptxrun. Readers start at emu/README.md.
 */
#ifndef EMU_EMU_H
#define EMU_EMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "counters.h"
#include "device_name.h"
#include "ptx.h"

/* The device the kernels' supports() see: an H100 SXM's limits (CUDA C Programming Guide, "Compute
 * Capabilities", compute capability 9.0). */
enum {
    EMU_SM_COUNT = 132,
    EMU_MAX_THREADS_PER_BLOCK = 1024,
    EMU_SMEM_PER_BLOCK = 48 * 1024,           /* without opting in */
    EMU_SMEM_PER_BLOCK_OPTIN = 227 * 1024,    /* with cudaFuncAttributeMaxDynamicSharedMemorySize */
    EMU_SMEM_PER_SM = 228 * 1024,
    EMU_REGS_PER_BLOCK = 65536,
    EMU_WARP_SIZE = 32
};

/* Generic addresses (PTX ISA, "Generic Addressing"): shared and local memory are windows in the
 * generic address space. Device (global) memory is host memory here, so the windows sit above the
 * 47-bit user address range where no host pointer can fall. */
#define EMU_SHARED_WINDOW 0x0001000000000000ull
#define EMU_LOCAL_WINDOW 0x0002000000000000ull
#define EMU_PARAM_WINDOW 0x0003000000000000ull
#define EMU_WINDOW_SIZE 0x0000100000000000ull

/* The 128-byte CUtensorMap, as the emulator's cuTensorMapEncodeTiled fills it (the driver's own layout
 * is not published; a map is opaque to the kernels that pass it to cp.async.bulk.tensor). */
#define EMU_TENSOR_MAP_MAGIC 0x4d54554du /* "MUTM" */
typedef struct {
    uint32_t magic;
    uint8_t element_bytes, rank, swizzle_bytes, nan_fill; /* swizzle 0, 32, 64 or 128; nan_fill: OOB as NaN */
    uint64_t global_address;
    uint32_t dim_minus_1[5];   /* a dimension can be 2^32 */
    uint64_t stride[5];        /* bytes from one index to the next, per dimension (stride[0] = element_bytes) */
    uint16_t box[5];
    uint8_t element_stride[5];
} emu_tensor_map;

/* The registers per thread the emulator assumes ptxas gave a kernel of `threads` threads per block, for
 * setmaxnreg's register pool: the block's 64K registers shared evenly, rounded down to a multiple of 8. */
int emu_registers_per_thread(unsigned threads);

/* ---- device memory (memory.c) ---------------------------------------------------------------- */
typedef struct {
    uint64_t base, size;
    const char *what;      /* "cudaMalloc", "module variable name", "ptxrun argument 2" */
    uint8_t *written;      /* initcheck: a bit per byte, set once anything has written it */
} emu_alloc;

/* `initialized`: whether its bytes count as written already (module variables with their initial
 * values), or not (cudaMalloc's: a kernel that reads them before anything writes them is wrong). */
void emu_alloc_add(uint64_t base, uint64_t size, const char *what, bool initialized);
/* initcheck: mark bytes written; whether all are (else the first that is not). */
void emu_mark_written(const emu_alloc *a, uint64_t addr, uint64_t size);
bool emu_all_written(const emu_alloc *a, uint64_t addr, uint64_t size, uint64_t *first_unwritten);
/* Whether every byte of a warp's aligned accesses of `size` (1, 2, 4 or 8) bytes at address[lane] (lanes) has
 * been written: each lane's bytes within one of the bitmap's bytes. */
bool emu_lanes_written(const emu_alloc *a, const uint64_t *address, uint32_t lanes, uint64_t size);
bool emu_alloc_remove(uint64_t base);
/* The allocation holding [addr, addr + size), or NULL. */
const emu_alloc *emu_alloc_find(uint64_t addr, uint64_t size);
/* "12 bytes past the end of the 4096-byte allocation at 0x..." for error messages. */
void emu_alloc_describe(uint64_t addr, uint64_t size, char *out, size_t out_len);
uint64_t emu_alloc_total(void);

/* ---- launches (launch.c) ---------------------------------------------------------------------- */
typedef enum {
    EMU_OK,
    EMU_ERR_LAUNCH,           /* bad configuration: too many threads, too much shared memory */
    EMU_ERR_ADDRESS,          /* an access outside every allocation or the block's shared memory */
    EMU_ERR_MISALIGNED,
    EMU_ERR_DEADLOCK,         /* a barrier or warp-collective that can never complete */
    EMU_ERR_TRAP,
    EMU_ERR_UNINITIALIZED,    /* initcheck: a read of memory nothing has written */
    EMU_ERR_INVALID,          /* an instruction used against its rules (a diverged .aligned op, ...) */
    EMU_ERR_RACE              /* racecheck: two threads access shared or global memory unordered, one of them writing */
} emu_status;

typedef struct { unsigned x, y, z; } emu_dim3;

typedef struct {
    const ptx_module *module;
    const ptx_kernel *kernel;
    emu_dim3 grid, block;
    uint64_t dynamic_smem;
    uint64_t max_dynamic_smem;  /* what the kernel opted in to (cudaFuncSetAttribute), 0 = default */
    const uint8_t *params;      /* kernel->param_bytes bytes, laid out as the .param list says */
    unsigned sample;            /* 0: run every block; else emulate at most this many blocks of each kind
                                 * (counters.h, "Sampled launches") and scale the counters to the grid */
    unsigned model_waves;       /* with EMU_MODEL, 0: model every block the modeled SM runs; else only its first
                                 * this many waves (at least 3), the rest extrapolated (model.c,
                                 * ASSUME_STEADY_WAVES), and no other block runs: the outputs are not computed */
} emu_launch_desc;

void emu_counters_add(emu_counters *into, const emu_counters *from);
/* Prints a kernel's counters as a few labelled lines (counters.c; the model's fields: model.h). */
void emu_counters_print(FILE *out, const char *kernel, const emu_counters *c);
/* A mangled kernel name without its parameter types: "_Z4scalePfi" -> "scale". */
void emu_short_name(const char *mangled, char *out, size_t out_len);

/* Runs every block of the grid (or the sample the launch asks for), and models it when EMU_MODEL names a
 * GPU and counters are asked for (launch.c). On an error, writes one line to err and returns its status.
 * When counters is not NULL, what the launch did is added to it. */
emu_status emu_launch(const emu_launch_desc *launch, emu_counters *counters, char *err, size_t err_len);

/* Options, read from the environment once: EMU_THREADS (host threads running blocks, default: the
 * cores), EMU_INTERLEAVE (a seed: switch warps at random points between synchronizations),
 * EMU_LIVELOCK=N (warp instructions of a block with no store, barrier or exit before it is reported as
 * livelocked, default 2^28),
 * EMU_CONVERGENCE=strict (a warp that diverged reconverges only where the program synchronises it,
 * and an .aligned instruction reached before that is an error; emu/README.md, "Convergence"),
 * EMU_INITCHECK=0 (do not report reads of memory nothing has written; on by default),
 * EMU_RACECHECK=0 (do not report unordered accesses to shared memory; on by default). */
typedef struct {
    int threads;
    bool interleave;
    uint64_t interleave_seed;
    bool strict_convergence;   /* EMU_CONVERGENCE=strict: no reconvergence without a synchronisation */
    uint64_t livelock_after;   /* EMU_LIVELOCK: warp instructions with no store, barrier or exit before a
                                  block is reported as livelocked (default 2^28) */
    bool initcheck;
    bool racecheck;
} emu_options;
const emu_options *emu_get_options(void);

/* Thread-instructions executed since the process started (the speed benchmark reads it). */
uint64_t emu_thread_instructions(void);

/* IEEE binary16 and bfloat16 (half.c): from any float with a rounding mode, to binary32 exactly. */
typedef enum { EMU_ROUND_NEAREST, EMU_ROUND_ZERO, EMU_ROUND_DOWN, EMU_ROUND_UP } emu_rounding;
uint16_t emu_to_f16(double x, emu_rounding mode);
uint16_t emu_to_bf16(double x, emu_rounding mode);
uint16_t emu_f32_to_f16(float f);   /* nearest-even */
void emu_f32_to_f16_n(const float *f, uint16_t *out, int n); /* n of them, out[i] from f[i] */
uint16_t emu_f32_to_bf16(float f);
float emu_f16_to_f32(uint16_t h);
void emu_f16_to_f32_n(const uint16_t *h, float *out, int n); /* n of them, out[i] from h[i] */
float emu_bf16_to_f32(uint16_t h);
const float *emu_f16_table(void);   /* emu_f16_to_f32 of every bit pattern, indexed by it */

#endif
