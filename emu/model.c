/* model.c: modeled time. How long a GPU would take to run a launch, and why: a cycle-level model of one
 * SM, driven by the instructions the emulator executes (emu/README.md, "The timing model"). It is a model,
 * not a measurement: its figures come from the GPU files (bench/<gpu>.json, each figure with its source;
 * docs/gpus.md), the guesses it must make are the ASSUME_* below, each written down with why, and its
 * accuracy is what its validation shows, nothing more.
 *
 * The machine it models, per SM (the figures' names are the GPU file's):
 *   - warps from as many blocks as fit at once (registers, shared memory, warps, blocks: occupancy), a
 *     block starting as soon as one ends, the blocks the GPU's block scheduler would give one SM;
 *   - `schedulers` sub-partitions; warp i of the SM on sub-partition i % schedulers; each issues at most
 *     one machine instruction per cycle, from its eligible warps, greedy-then-youngest (ASSUME_POLICY); a
 *     PTX instruction is the machine instructions ptxas made of it for the modeled GPU (model_compile,
 *     ASSUME_SASS_PER_LINE), none, one or many;
 *   - a scoreboard per warp: an instruction issues when the registers it reads have been produced;
 *   - pipes per sub-partition with an issue interval from the throughput table (thr_*: results per clock
 *     per SM; a warp instruction of 32 threads takes 32 / (thr / schedulers) cycles of its pipe) and a
 *     latency (lat_*);
 *   - one memory data path per SM (smem_bytes_per_clock): shared-memory wavefronts (bank conflicts as
 *     the counters count them) and L1 sectors pass through it; an L1 of sectors (l1_and_smem less the
 *     shared-memory carveout), an L2 and DRAM behind it, with their latencies and this SM's share of
 *     their bandwidth;
 *   - cp.async, bulk tensor copies and wgmma as asynchronous work that completes at a modeled cycle;
 *     cp.async.wait_group, mbarrier waits and wgmma.wait_group hold a warp until then.
 * Each cycle every resident warp is in one state, with Nsight Compute's name (emu_stall_names; Nsight
 * Compute, "Warp Scheduler States" and smsp__pcsamp_warps_issue_stalled_*): the
 * warp-cycles per state say where the time went.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interp.h"
#include "model.h"

typedef struct model_gpu {
    const char *name, *label;
    double sms, clock_ghz, schedulers, registers_per_sm, register_unit, max_registers_per_thread, max_warps,
        max_blocks, smem_per_sm, smem_unit, smem_reserved_per_block, l1_and_smem, l1_line, sector, l2_bytes,
        dram_gbps, smem_bytes_per_clock, thr_fp32, thr_fp16x2, thr_fp64, thr_int_add, thr_int_mad,
        thr_int_logic, thr_compare, thr_mufu, thr_shfl, thr_cvt64, thr_cvt, lat_fp32, lat_int, lat_mufu, lat_smem,
        lat_l1, lat_l2, lat_dram, lsu_issue, mma_k16_interval, mma_k8_interval, tensor_flop_per_clock, lat_mma,
        lat_mma_k8, l2_bytes_per_clock, l1_ways, wgmma_clocks_per_n, lat_wgmma_min;
    double carveouts_kb[16];   /* the shared-memory carveouts the L1 can be set to */
    int n_carveouts_kb;
} model_gpu;

#include "gpu_table.h" /* generated from bench/<gpu>.json (emu/gpu_table.py) */

/* ---- Assumptions: what no source this project has read gives; each one a guess, named here ------------ */

/* ASSUME_POLICY: the warp scheduler is greedy-then-youngest: it keeps issuing from the warp that issued last
 * while it can, else the youngest eligible warp (the one whose block started last; in a block, the highest
 * numbered). NVIDIA does not publish its policy; Huerta et al. ("Dissecting and Modeling the Architecture of
 * Modern GPU Cores", MICRO 2025, arXiv 2503.20481, section 5.1.2) found it so on Turing and Ampere cores by
 * microbenchmarks ("Compiler Guided Greedy Then Youngest": the compiler's part is the stall counts,
 * ASSUME_STALL_COUNTS), and it is taken for Hopper. GPGPU-Sim's greedy-then-oldest (Rogers et al., MICRO 2012)
 * is the mirror image. */
/* ASSUME_FP64_LATENCY: cycles from an fp64 FMA's issue to its result (no figure read). */
enum { ASSUME_FP64_LATENCY = 8 };
/* ASSUME_UNIT_LATENCIES: conversions (cvt) and warp collectives (shuffles: through ASSUME_SHUFFLE_QUEUE) run on the
 * pipes their throughput names; their latencies are taken as the special-function unit's (lat_mufu) and shared
 * memory's (lat_smem). Two conversions are not the special-function unit's, by Nsight Compute's pipe definitions
 * ("Pipelines"): one from f32 to f16 or bf16 (ptxas: F2FP) is the ALU's ("On NVIDIA Ampere architecture chips, the
 * ALU pipeline performs fast FP32-to-FP16 conversion"), at its integer add's rate and latency; one from f16 or bf16
 * to f32 (HADD2.F32) is fp16 arithmetic ("FMAHeavy performs ... FP16 arithmetic (HADD2, HMUL2, HFMA2)"), timed as
 * the model times fp16 arithmetic. */
/* ASSUME_SHUFFLE_QUEUE: a shuffle goes to the L1TEX unit the SM's four sub-partitions share, as a shared
 * memory access does (Nsight Compute, "Pipelines": the LSU "issues ... shuffles ... to the L1TEX unit"): a
 * sub-partition hands it to the SM's queue in one cycle, and the queue passes a warp's shuffle every
 * 32 / thr_shfl cycles (the Programming Guide's rate for the SM), in the order they came, behind the shared
 * memory accesses queued before it; its result comes lat_smem after it leaves the queue. The cycle a
 * sub-partition takes to hand it over, and the queue's order, are assumptions; that the queue is the SM's,
 * not a sub-partition's, is the definition's. */
/* ASSUME_MEMORY_QUEUE_CYCLES: cycles of work the memory data path may have queued before a sub-partition's
 * next memory instruction waits to issue (mio_throttle, lg_throttle; no figure read). */
enum { ASSUME_MEMORY_QUEUE_CYCLES = 32 };
/* ASSUME_L1_LINE_PER_CYCLE: the L1's tag stage takes one cycle for each 128-byte line a warp's global request
 * touches, and its data path four sectors a cycle (smem_bytes_per_clock); a request takes the longer of the two,
 * its lines resolved one after another. Measured on an H100 (bench/validation/throughput.cu, "L1-hit warp loads,
 * lanes S bytes apart": 32 lines took 32 cycles whether 128 bytes or 64 KiB apart; 8 lines of 4 sectors each,
 * 8); NVIDIA's description of Volta's tag stage (4 sets of 4 sectors a cycle, its developer forum) would give
 * 8 for the 32 lines. Taken for every modeled GPU; measured on the H100 alone. */
/* ASSUME_FENCE: a memory fence holds its warp until the warp's own earlier accesses are done; a GPU-wide one
 * (membar.gl, fence.acq_rel.gpu, ...: FENCE_GPU in ptx.h) at least an L2 round trip too, the point of
 * coherence. One within the CTA (membar.cta, fence.proxy.async.shared::cta) orders threads that share its SM's
 * L1 and shared memory: ptxas makes it a MEMBAR.CTA, without the L1 invalidation (CCTL.IVALL) of the GPU-wide
 * form. A proxy fence with no memory barrier in its machine code (fence.proxy.async.global,
 * fence.mbarrier_init) holds nothing. How long a fence takes beyond that, no source gives. */
/* ASSUME_EVEN_SHARES: the L2 and DRAM give every SM an equal share of their bandwidth (l2_bytes_per_clock /
 * sms). The L1 replaces the least recently used line of a set (l1_ways; 0: one set, fully associative). */
/* ASSUME_CARVEOUT: the driver sets the L1/shared split to the smallest carveout the resident blocks' shared
 * memory fits in, leaving the rest to the L1 (the Programming Guide lets it choose; this is a guess at how). */
/* ASSUME_CP_ASYNC_L2: cp.async copies go to the L2 only, as the 16-byte .cg copies the chapters use do
 * (PTX ISA, cp.async: .cg caches at the L2, not the L1); .ca copies are modeled the same way. */
/* ASSUME_WGMMA_LATENCY: a wgmma holds its warps' tensor cores for max(N x wgmma_clocks_per_n, lat_wgmma_min)
 * cycles, and its accumulators are ready when that is done and its operands are read (ASSUME_WGMMA_OPERANDS):
 * the tensor pipe's time for a large N; for a small one the fewest cycles any wgmma took in Luo et al.'s
 * measurements (m64n8k16 with A in registers, whose throughput, one a 14 cycles, says the floor holds the
 * tensor cores, not only the result). */
/* ASSUME_WGMMA_OPERANDS: a wgmma reads its operands in shared memory through the SM's memory data path
 * (smem_bytes_per_clock), A (64 x 16 elements, when not in registers) and B (N x 16) once for the warpgroup:
 * each warp's share, a quarter of the bytes, as it issues; its accumulators are not ready before its share is
 * read. No source gives how the tensor cores read shared memory; this uses no figure of its own. It was
 * written after the small wgmmas' throughput on the H100 (16 + N / 4 clocks a wgmma for N of 32 or less, where
 * the tensor pipe alone gives N / 2: the microbenchmark table), so those rows agree with it but do not test
 * it independently. */
/* ASSUME_FIRST_REQUEST: the L2 holds a launch's whole working set (true of the layers this project models:
 * a few tens of MB at most, against 40-50 MB), so each byte comes from DRAM once per launch and the SMs
 * share that traffic evenly. The modeled SM's first request for a sector waits as long as a DRAM access
 * (it brings the sector, or another SM asking at about the same time does: blocks of one wave read the
 * same filter at about the same time), and it pays, in DRAM bandwidth, its share of the launch's footprint
 * (the allocations its parameters point into) over the first requests of all SMs, estimated as its own
 * per block started times the grid's blocks. Later requests for a sector hit the L2. */
/* ASSUME_CONSTANT_OPERANDS: kernel parameters and constants are operands of the machine code's
 * instructions (the constant bank), at an integer instruction's cost. */
/* ASSUME_SAME_TEXT: the registers per thread are ptxas's for the modeled GPU, from the program's PTX with its
 * .target changed to that GPU's: a fat binary carries PTX for its newest target only (compute_90 here), and
 * what runs on an A100 is the same kernel compiled for sm_80. A kernel that needs the newer target (wgmma,
 * setmaxnreg) fails to compile and is not modeled on that GPU. */
/* ASSUME_SASS_PER_LINE: what runs is the machine code ptxas makes of the PTX for the modeled GPU (nvdisasm
 * -gp attributes each of its instructions to a PTX line), and each time a PTX instruction runs, one copy
 * of what ptxas made of its line runs: a division becomes its dozen or more instructions, an address
 * computation folded into a load's offset none. Where ptxas copied a basic block (a loop unrolled four
 * times holds four copies of each of its lines), a line's instructions are divided among the copies (a
 * share that is no whole number spreads over the warp's runs of the line: a quarter is one run in four): the
 * count most of the block's lines have where those lines are loads, stores or fp32 arithmetic (one machine
 * instruction each per copy; an address ptxas computes once for all copies does not hide them), else the
 * fewest instructions any of the block's lines has (each copy holds at least one of every line ptxas kept;
 * a count, unlike the runs of a line, does not grow when ptxas interleaves a division's instructions with
 * its neighbours'); a block of one line is one copy (its count alone cannot tell a
 * copy from an expansion). A kernel's or function's return is one instruction (ptxas puts an EXIT on each
 * way out, and a thread takes one). What ptxas moved out of the innermost loop a line's instructions are
 * in is not counted: it runs once per loop, not each time the line runs. */
/* ASSUME_SASS_ACCESS_WIDTH: where ptxas made one wider load or store of neighbouring PTX lines' accesses (four
 * ld.shared.f32 of consecutive words: one LDS.128, attributed to the first line), the line holding it moves
 * that many bytes a thread, from its lanes' addresses rounded down to the width, through the data path (its
 * wavefronts and sectors as the counters count them for that width), and the lines ptxas folded into it
 * move nothing more: their values arrive with the warp's last access. */
/* ASSUME_IMAD_PIPE: an IMAD (IMUL, IDP) goes down the FMA pipe, every other integer instruction the ALU
 * (Nsight Compute's pipe definitions: "fma ... also performs integer multiplication operations (IMUL, IMAD), as
 * well as integer dot products"; "alu ... integer instructions, excluding IMAD and IMUL"); measured on an H100,
 * IMADs and IADD3s in turn issue at 3.9 warp instructions a clock for the SM, each alone at 2
 * (bench/validation/throughput.cu, "issue rate"). A PTX line is on the pipe most of ptxas's instructions for
 * it are; on the FMA pipe an IMAD holds it for the integer multiply-add's interval, as it would an FFMA for
 * the FFMA's (how the hardware shares that pipe's halves between FFMAs and IMADs is not modeled). */
/* ASSUME_SASS_EXPANSION: the n machine instructions of one PTX instruction issue from its warp on n
 * consecutive cycles, each down the PTX instruction's pipe, and its result comes n - 1 cycles after one
 * instruction's would (they depend on each other, as a division's do). */
/* ASSUME_STALL_COUNTS: a warp issues its next instruction no sooner than the stall count ptxas set in the
 * control information of the one it issued last (Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via
 * Microbenchmarking", 2018, section 2.2: "the number of cycles the scheduler waits before issuing the next
 * instruction"; how a fixed-latency result is waited for since Volta; Huerta et al., MICRO 2025, model the
 * same counter on Ampere). Per PTX line, the sum of its machine instructions' stall counts (in its innermost
 * loop, shared among the copies of its block as its instructions are) holds the warp from the line's first
 * issue: the gaps inside the line fall between its own instructions, which issue on consecutive cycles
 * (ASSUME_SASS_EXPANSION), so another warp does not issue in them; the last gap, to the next line, does let
 * one. The warp state while held is `wait` (Nsight Compute: "waiting on a fixed latency execution
 * dependency"). A result of fixed latency is waited for by the stall counts alone where none of its line's
 * machine instructions sets a dependence counter (the control information's "write barrier", which a
 * result of variable latency sets and its users wait on; Jia et al., ibid.): then the model's scoreboard
 * has it at once, and the GPU file's latency for it goes unused (an HMMA on sm_90 sets none: ptxas spaces
 * its users by stall counts). A line that sets one (a load, a conversion, a special function, a division's
 * reciprocal) keeps the model's ready time for its results as well. The yield flag is not modeled. */
/* ASSUME_SASS_ORDER: a warp issues a basic block's instructions in the order ptxas put their lines in the machine
 * code (each line where its first machine instruction stands; a line ptxas made none of, folded into others, as
 * early as its dependencies allow: it takes no issue cycle), as far as the block's own dependencies allow: the
 * registers one instruction writes and another reads or writes, and a load and a store that may touch the same
 * bytes (may_overlap) keep their PTX order. A GPU issues the machine code in order; ptxas moves independent
 * instructions, hoisting the next step's loads among the arithmetic of this one (04b). Only arithmetic, logic,
 * conversions, moves and plain loads and stores move, between branches, branch targets, and any other instruction
 * (barriers, atomics, collectives, tensor-core and asynchronous instructions, carry chains), and only in a
 * converged warp; the interpreter runs them in that order too, which ptxas's own reordering shows is the same
 * computation. A forward conditional branch of whose line ptxas made no branch (no BRA, nor any other jump, in the
 * machine code: it if-converted the block the branch skips into predicated instructions) joins the blocks around it
 * into one stretch, when what it skips is movable and nothing else jumps into it or to its target: the branch
 * issues, noting the lanes it would take, and the instructions it skips issue after it, predicated off for those
 * lanes (warp.skipped), as the machine code runs them; so a guarded load moves above the store of the load before
 * it, as ptxas moved it (04b). */
/* ASSUME_STEADY_WAVES: asked to model only the first waves of the SM's blocks (a launch's model_waves:
 * ptxrun --sample-waves), the model takes every wave after them to last as long as the mean of the modeled
 * waves after the first (the first starts with cold caches and its blocks in step), the tail wave as long
 * as a full one, and the instructions issued and the warp states to grow with the waves. The spread of
 * the modeled waves gives the extrapolation's standard error, printed with it. */
/* ASSUME_SM0: every SM runs what the first does; the launch takes as long as the first SM's blocks (ids 0,
 * SMs, 2 SMs, ...: the most any SM gets when the block scheduler deals blocks round the SMs). */

/* ---- Pipes -------------------------------------------------------------------------------------------- */

typedef enum { PIPE_FMA, PIPE_ALU, PIPE_FP64, PIPE_XU, PIPE_TENSOR, PIPE_MIO, PIPE_LSU, PIPE_BRANCH, PIPE_COUNT } pipe_kind;

/* What a result waits on, for the warp state of an instruction that needs it: a fixed latency (wait),
 * the MIO (shared memory, shuffles, special functions: short_scoreboard) or L1TEX (global and local
 * memory: long_scoreboard). */
typedef enum { DEP_FIXED, DEP_MIO, DEP_L1TEX } dependency;

typedef struct {
    pipe_kind pipe;
    double interval;   /* cycles the pipe is busy for one warp instruction */
    double latency;    /* cycles to its result (memory: computed per access) */
    dependency dep;
} timing;

static double max_d(double a, double b) { return a > b ? a : b; }

/* A warp instruction of 32 threads on a pipe that gives `per_sm` results per clock per SM. */
static double interval_of(const model_gpu *g, double per_sm) { return 32.0 / (per_sm / g->schedulers); }

/* An fp16 warp instruction: packed (HFMA2) or not, the machine's instruction does two lanes' halves a thread, and
 * thr_fp16x2 counts halves. */
static double fp16_interval(const model_gpu *g) { return 2 * interval_of(g, g->thr_fp16x2); }

static bool is_memory(const insn *in)
{
    switch (in->op) {
    case OP_LD: case OP_ST: case OP_ATOM: case OP_RED: case OP_PREFETCH: case OP_LDMATRIX: case OP_WMMA_LOAD:
    case OP_WMMA_STORE: case OP_CP_ASYNC: case OP_TMA_LOAD: case OP_BULK_COPY:
        return true;
    default:
        return false;
    }
}

static timing ptx_timing_of(const model_gpu *g, const insn *in)
{
    const bool f32 = in->type == T_F32, f64 = in->type == T_F64;
    const bool f16 = in->type >= T_F16 && in->type <= T_BF16X2;
    switch (in->op) {
    case OP_MMA:
        return in->vec == 8 ? (timing){PIPE_TENSOR, g->mma_k8_interval, g->lat_mma_k8, DEP_FIXED}
                            : (timing){PIPE_TENSOR, g->mma_k16_interval, g->lat_mma, DEP_FIXED};
    case OP_WMMA_MMA: /* 16x16x16: two m16n8k16, one after the other */
        return (timing){PIPE_TENSOR, 2 * g->mma_k16_interval, g->mma_k16_interval + g->lat_mma, DEP_FIXED};
    case OP_WGMMA_MMA: /* this warp's 16 rows of m64nNk16 (ASSUME_WGMMA_LATENCY; its results: where it issues) */
        return (timing){PIPE_TENSOR, max_d(g->wgmma_clocks_per_n * in->size * 8, g->lat_wgmma_min), 0, DEP_FIXED};
    case OP_RCP: case OP_SQRT: case OP_RSQRT: case OP_EX2: case OP_LG2: case OP_SIN: case OP_COS: case OP_TANH:
        return (timing){PIPE_XU, interval_of(g, g->thr_mufu), g->lat_mufu, DEP_MIO};
    case OP_DIV:
        if (f32 || f64)
            return (timing){PIPE_XU, interval_of(g, g->thr_mufu), g->lat_mufu, DEP_MIO};
        return (timing){PIPE_ALU, interval_of(g, g->thr_int_mad), g->lat_int, DEP_FIXED};
    case OP_CVT:
        if (in->stype == T_F32 && in->type >= T_F16 && in->type <= T_BF16X2) /* F2FP (ASSUME_UNIT_LATENCIES) */
            return (timing){PIPE_ALU, interval_of(g, g->thr_int_add), g->lat_int, DEP_FIXED};
        if (in->type == T_F32 && in->stype >= T_F16 && in->stype <= T_BF16X2) /* HADD2.F32 */
            return (timing){PIPE_FMA, fp16_interval(g), g->lat_fp32, DEP_FIXED};
        return (timing){PIPE_XU, interval_of(g, ptx_type_bits((ptx_type)in->type) == 64 ||
                                                       ptx_type_bits((ptx_type)in->stype) == 64
                                                   ? g->thr_cvt64 : g->thr_cvt),
                        g->lat_mufu, DEP_MIO};
    case OP_SHFL: /* ASSUME_SHUFFLE_QUEUE: the SM's queue paces it (issue), not the sub-partition's pipe */
        return (timing){PIPE_MIO, 1, g->lat_smem, DEP_MIO};
    case OP_VOTE: case OP_REDUX: case OP_MATCH:
        return (timing){PIPE_MIO, interval_of(g, g->thr_shfl), g->lat_smem, DEP_MIO};
    case OP_BRA: case OP_BRX: case OP_CALL: case OP_RET: case OP_EXIT:
        return (timing){PIPE_BRANCH, 1, 0, DEP_FIXED};
    case OP_MUL: case OP_MAD: case OP_MUL24: case OP_MAD24: case OP_SAD: case OP_MADC:
        if (f32 || f16)
            break;
        if (f64)
            return (timing){PIPE_FP64, interval_of(g, g->thr_fp64), ASSUME_FP64_LATENCY, DEP_FIXED};
        return (timing){PIPE_ALU, interval_of(g, g->thr_int_mad), g->lat_int, DEP_FIXED};
    case OP_SETP: case OP_SET: case OP_MIN: case OP_MAX: case OP_SELP: case OP_SLCT:
        if (f32 || f16 || f64)
            break;
        return (timing){PIPE_ALU, interval_of(g, g->thr_compare), g->lat_int, DEP_FIXED};
    default:
        break;
    }
    if (is_memory(in) && (in->space == SPACE_PARAM || in->space == SPACE_CONST))
        /* ASSUME_CONSTANT_OPERANDS */
        return (timing){PIPE_ALU, interval_of(g, g->thr_int_add), g->lat_int, DEP_FIXED};
    if (is_memory(in))
        return (timing){in->op == OP_LD || in->op == OP_ST || in->op == OP_ATOM || in->op == OP_RED ||
                                in->op == OP_PREFETCH
                            ? (in->space == SPACE_SHARED ? PIPE_MIO : PIPE_LSU)
                        : in->op == OP_LDMATRIX || in->op == OP_WMMA_LOAD || in->op == OP_WMMA_STORE ? PIPE_MIO
                                                                                                     : PIPE_LSU,
                        g->lsu_issue, 0,
                        /* Nsight Compute's scoreboards: shared memory is an MIO operation's (short), the rest
                         * L1TEX's (long) */
                        in->space == SPACE_SHARED || in->op == OP_LDMATRIX ? DEP_MIO : DEP_L1TEX};
    if (f64)
        return (timing){PIPE_FP64, interval_of(g, g->thr_fp64), ASSUME_FP64_LATENCY, DEP_FIXED};
    if (f16)
        return (timing){PIPE_FMA, fp16_interval(g), g->lat_fp32, DEP_FIXED};
    if (f32)
        return (timing){PIPE_FMA, interval_of(g, g->thr_fp32), g->lat_fp32, DEP_FIXED};
    /* integer arithmetic, logic, moves, and what synchronises (barriers, fences, mbarriers: their waits
     * are the states below, not a pipe) */
    return (timing){PIPE_ALU, interval_of(g, g->thr_int_add), g->lat_int, DEP_FIXED};
}

/* An instruction's pipe, issue interval, latency and dependency: its PTX's, but where ptxas made its integer work
 * IMADs (IMAD.MOV for a move, IMAD.SHL for a shift, IMAD.IADD for an add), the FMA pipe's at the integer
 * multiply-add's rate (ASSUME_IMAD_PIPE). */
static timing timing_of(const model_gpu *g, const insn *in)
{
    timing t = ptx_timing_of(g, in);
    if (t.pipe == PIPE_ALU && in->sass_on_fma)
        t.pipe = PIPE_FMA, t.interval = interval_of(g, g->thr_int_mad);
    return t;
}

/* ---- The memory system as the modeled SM sees it ------------------------------------------------------- */

/* The L1: lines of sectors in sets, each set a list from most to least recently used, and a hash of the
 * lines present (open addressing, linear probing) so a lookup does not walk a fully associative set. */
typedef struct {
    uint64_t *tag;      /* per line: its address; UINT64_MAX: empty */
    uint8_t *sectors;   /* per line: its valid sectors, a bit each */
    uint32_t *newer, *older; /* per line: its neighbours in its set's list */
    uint32_t *newest, *oldest; /* per set */
    uint32_t *index;    /* hash: line + 1, or 0 for an empty bucket */
    uint32_t n_lines, ways, sets, buckets;
} l1_cache;

static uint32_t bucket_of(const l1_cache *c, uint64_t tag)
{
    return (uint32_t)((tag * 0x9e3779b97f4a7c15ull) >> 32) & (c->buckets - 1);
}

static uint32_t l1_find(const l1_cache *c, uint64_t tag) /* the line holding it, or UINT32_MAX */
{
    for (uint32_t j = bucket_of(c, tag);; j = (j + 1) & (c->buckets - 1)) {
        if (!c->index[j])
            return UINT32_MAX;
        if (c->tag[c->index[j] - 1] == tag)
            return c->index[j] - 1;
    }
}

static void l1_unhash(l1_cache *c, uint64_t tag) /* linear probing's deletion: shift the run back */
{
    uint32_t j = bucket_of(c, tag);
    while (c->tag[c->index[j] - 1] != tag)
        j = (j + 1) & (c->buckets - 1);
    for (uint32_t k = (j + 1) & (c->buckets - 1); c->index[k]; k = (k + 1) & (c->buckets - 1)) {
        const uint32_t home = bucket_of(c, c->tag[c->index[k] - 1]);
        if (((k - home) & (c->buckets - 1)) >= ((k - j) & (c->buckets - 1)))
            c->index[j] = c->index[k], j = k;
    }
    c->index[j] = 0;
}

static void l1_unlink(l1_cache *c, uint32_t set, uint32_t i)
{
    if (c->newer[i] != UINT32_MAX) c->older[c->newer[i]] = c->older[i]; else c->newest[set] = c->older[i];
    if (c->older[i] != UINT32_MAX) c->newer[c->older[i]] = c->newer[i]; else c->oldest[set] = c->newer[i];
}

static void l1_push_newest(l1_cache *c, uint32_t set, uint32_t i)
{
    c->newer[i] = UINT32_MAX, c->older[i] = c->newest[set];
    if (c->newest[set] != UINT32_MAX) c->newer[c->newest[set]] = i; else c->oldest[set] = i;
    c->newest[set] = i;
}

static bool l1_init(l1_cache *c, uint64_t bytes, const model_gpu *g)
{
    c->n_lines = (uint32_t)(bytes / (uint64_t)g->l1_line);
    c->ways = g->l1_ways > 0 && g->l1_ways < c->n_lines ? (uint32_t)g->l1_ways : c->n_lines;
    c->sets = c->ways ? c->n_lines / c->ways : 0;
    c->n_lines = c->sets * c->ways;
    for (c->buckets = 16; c->buckets < 2 * c->n_lines; c->buckets *= 2)
        ;
    c->tag = malloc((c->n_lines + 1) * sizeof *c->tag);
    c->sectors = calloc(c->n_lines + 1, 1);
    c->newer = malloc((c->n_lines + 1) * sizeof *c->newer);
    c->older = malloc((c->n_lines + 1) * sizeof *c->older);
    c->newest = malloc((c->sets + 1) * sizeof *c->newest);
    c->oldest = malloc((c->sets + 1) * sizeof *c->oldest);
    c->index = calloc(c->buckets, sizeof *c->index);
    if (!c->tag || !c->sectors || !c->newer || !c->older || !c->newest || !c->oldest || !c->index)
        return false;
    for (uint32_t s = 0; s < c->sets; s++) { /* every set's lines, empty, in a list */
        c->newest[s] = c->oldest[s] = UINT32_MAX;
        for (uint32_t w = 0; w < c->ways; w++) {
            c->tag[s * c->ways + w] = UINT64_MAX;
            l1_push_newest(c, s, s * c->ways + w);
        }
    }
    return true;
}

static void l1_free(l1_cache *c)
{
    free(c->tag), free(c->sectors), free(c->newer), free(c->older), free(c->newest), free(c->oldest), free(c->index);
}

/* Looks one sector up; true on a hit. A miss brings the sector in, in its line (the least recently used
 * line of the set makes room when the line is not there). */
static bool l1_lookup(l1_cache *c, uint64_t line, unsigned sector_bit)
{
    if (!c->n_lines)
        return false;
    const uint32_t set = (uint32_t)(line % c->sets);
    uint32_t i = l1_find(c, line);
    bool hit = false;
    if (i != UINT32_MAX) {
        hit = c->sectors[i] >> sector_bit & 1;
        l1_unlink(c, set, i);
    } else {
        i = c->oldest[set];
        l1_unlink(c, set, i);
        if (c->tag[i] != UINT64_MAX)
            l1_unhash(c, c->tag[i]);
        c->tag[i] = line, c->sectors[i] = 0;
        uint32_t j = bucket_of(c, line);
        while (c->index[j])
            j = (j + 1) & (c->buckets - 1);
        c->index[j] = i + 1;
    }
    c->sectors[i] |= (uint8_t)(1u << sector_bit);
    l1_push_newest(c, set, i);
    return hit;
}

/* A set of sectors this SM has asked the L2 for (open addressing). */
typedef struct {
    uint64_t *keys;     /* sector + 1; 0: empty */
    uint64_t n, cap;
} sector_set;

static bool sector_set_add(sector_set *s, uint64_t sector) /* true when it was new */
{
    if (2 * (s->n + 1) > s->cap) {
        uint64_t cap = s->cap ? 2 * s->cap : 1 << 14, *keys = calloc(cap, sizeof *keys);
        if (!keys)
            return true; /* no memory to remember it: counted as new, the DRAM side of the guess */
        for (uint64_t i = 0; i < s->cap; i++)
            if (s->keys[i])
                for (uint64_t j = (s->keys[i] * 0x9e3779b97f4a7c15ull) >> 20 & (cap - 1);; j = (j + 1) & (cap - 1))
                    if (!keys[j]) {
                        keys[j] = s->keys[i];
                        break;
                    }
        free(s->keys);
        s->keys = keys, s->cap = cap;
    }
    for (uint64_t j = ((sector + 1) * 0x9e3779b97f4a7c15ull) >> 20 & (s->cap - 1);; j = (j + 1) & (s->cap - 1)) {
        if (s->keys[j] == sector + 1)
            return false;
        if (!s->keys[j]) {
            s->keys[j] = sector + 1;
            s->n++;
            return true;
        }
    }
}

/* ---- The modeled SM ------------------------------------------------------------------------------------ */

enum { MAX_GROUPS = 64 }; /* cp.async / wgmma groups a warp may have committed and not waited for */

/* A warp's asynchronous work in groups (cp.async's, wgmma's): what it issued since its last commit
 * completes at `open`; each committed group at its cycle, oldest first. A wait_group N waits for all but
 * the newest N. */
typedef struct {
    uint64_t open;
    uint64_t done[MAX_GROUPS];
    int n;
} groups;

static void groups_issue(groups *g, uint64_t done) { g->open = g->open > done ? g->open : done; }

static void groups_commit(groups *g, uint64_t now)
{
    if (g->n < MAX_GROUPS)
        g->done[g->n++] = g->open;
    g->open = now;
}

static bool groups_pending(const groups *g, int keep, uint64_t now) /* a wait_group keep must wait */
{
    for (int i = 0; i < g->n - keep; i++)
        if (g->done[i] > now)
            return true;
    return false;
}

static void groups_waited(groups *g, int keep)
{
    const int drop = g->n > keep ? g->n - keep : 0;
    memmove(g->done, g->done + drop, (size_t)(g->n - drop) * sizeof *g->done);
    g->n -= drop;
}

typedef struct {
    uint64_t *ready;            /* per register slot: the cycle its value is ready */
    uint8_t *dep;               /* per register slot: what it waits on (dependency) */
    uint64_t hold_until;        /* a fence holds the warp until then */
    uint64_t stalled_until;     /* the stall counts of its last machine instructions hold it until then */
    uint64_t started;           /* when its block started (the youngest first: ASSUME_POLICY) */
    groups copies, mmas;        /* cp.async and wgmma groups */
    uint64_t access_done;       /* when its last access through the data path is done */
    uint32_t *runs;             /* per instruction of the kernel: the times the warp has issued it */
    uint32_t *skips;            /* per if-converted branch (by its index): the lanes it skips, set when the warp
                                   issues it in a stretch (ASSUME_SASS_ORDER) */
    int32_t position, end;      /* in a stretch it issues in machine-code order: where it is in the stretch's
                                   issue order, and the stretch's end (issue_order); else position -1 */
} warp_time;

typedef struct {
    block b;
    bool busy;
    warp_time *time;            /* per warp */
    unsigned first_warp;        /* the SM-wide number of its warp 0 */
} slot;

typedef struct { uint32_t mbar; uint64_t done; } bulk_copy_time;

/* A kernel's stretches of instructions a warp issues out of PTX order (ASSUME_SASS_ORDER): for a stretch
 * [first, end) whose issue order is not the PTX's, end_of[first] = end and order[first .. end) its
 * instructions in the order they issue; end_of is -1 everywhere else. predicated_by[j]: the if-converted
 * branch (its index) whose skipped instructions j is one of, run as predicated ones in a stretch; else -1. */
typedef struct { int32_t *order, *end_of, *predicated_by; } issue_order;

/* Whether instruction j is an if-converted branch whose skipped instructions a stretch runs predicated (its
 * fall-through instruction, within the kernel since the branch jumps past it, is predicated by it). */
static bool predicates_skipped(const ptx_kernel *k, const issue_order *plan, int32_t j)
{
    return k->code[j].if_converted && plan->predicated_by[j + 1] == j;
}

struct sm_model {
    const model_gpu *g;
    uint64_t now;
    double pipe_free[8][PIPE_COUNT]; /* per sub-partition */
    double memory_free;          /* the SM's memory data path */
    double l2_free, dram_free;   /* this SM's share of the L2's and DRAM's bandwidth */
    double l2_cycles_per_sector, dram_cycles_per_sector, sector_cycles;
    l1_cache l1;
    sector_set asked_l2;         /* sectors this SM has asked the L2 for */
    double dram_share;           /* the chance a first request goes to DRAM (see the assumption) */
    int last_issued[8];          /* per sub-partition: the warp it issued last (greedy), -1 none */
    uint64_t expanding_until[8]; /* per sub-partition: the last PTX instruction's machine instructions
                                    issue until then, one a cycle (ASSUME_SASS_EXPANSION) */
    /* the instruction executing now: what its accesses cost */
    uint64_t access_done;        /* when its data is back (loads) or gone (stores) */
    bool accessed;
    bool folded;                 /* a load or store ptxas folded into a wider one (ASSUME_SASS_ACCESS_WIDTH) */
    unsigned machine_bytes;      /* the bytes a thread of the machine code's access moves, 0: the PTX's */
    bool l1_bypass;              /* cp.async: to the L2 only (ASSUME_CP_ASYNC_L2) */
    bulk_copy_time *bulk;        /* bulk tensor copies in flight: their mbarrier and when they land */
    int n_bulk, cap_bulk;
    issue_order order;           /* the kernel's basic blocks in machine-code order (ASSUME_SASS_ORDER) */
};

/* One sector through L1 (when `cached`) to the L2 and maybe DRAM: the cycle its data is back. */
static double sector_access(sm_model *m, uint64_t sector, bool load, bool cached, double start)
{
    const model_gpu *g = m->g;
    if (load && cached) {
        const uint64_t per_line = (uint64_t)g->l1_line / (uint64_t)g->sector;
        if (l1_lookup(&m->l1, sector / per_line, (unsigned)(sector % per_line)))
            return start + g->lat_l1;
    }
    /* to the L2, through this SM's share of its bandwidth */
    const double at_l2 = max_d(start, m->l2_free);
    m->l2_free = at_l2 + m->l2_cycles_per_sector;
    if (!sector_set_add(&m->asked_l2, sector))
        return at_l2 + (load ? g->lat_l2 : 0);
    /* this SM's first request for the sector: DRAM (ASSUME_FIRST_REQUEST), through its share of DRAM's
     * bandwidth: a store's sector all of it, a load's the share the SMs' reuse leaves it */
    const double at_dram = max_d(at_l2, m->dram_free);
    m->dram_free = at_dram + m->dram_cycles_per_sector * (load ? m->dram_share : 1.0);
    return at_dram + (load ? g->lat_dram : 0);
}

/* The interpreter tells the model each warp-wide memory access of the instruction it runs (block.on_access). */
static void note_access(sm_model *m, int space, bool load, const uint64_t *address, uint32_t lanes, uint64_t size)
{
    const model_gpu *g = m->g;
    if (space != SPACE_SHARED && space != SPACE_GLOBAL && space != SPACE_LOCAL)
        return; /* the constant bank (ASSUME_CONSTANT_OPERANDS) */
    if (m->folded)
        return; /* its bytes moved with the wider access ptxas made (ASSUME_SASS_ACCESS_WIDTH) */
    uint64_t wide[LANES];
    if (m->machine_bytes > size) { /* the machine code's wider access, from the lanes' aligned addresses */
        FOR_LANES(lanes, l) wide[l] = address[l] & ~(uint64_t)(m->machine_bytes - 1);
        address = wide;
        size = m->machine_bytes;
    }
    const double start = max_d((double)m->now, m->memory_free);
    double done = start;
    if (space == SPACE_SHARED) {
        uint64_t ideal = 0;
        const uint64_t n = shared_wavefronts(address, lanes, size, load, &ideal);
        m->memory_free = start + (double)n;
        done = start + g->lat_smem + (double)(n ? n - 1 : 0);
    } else {
        uint64_t sectors[2 * LANES];
        const int distinct = distinct_pieces(address, lanes, size, (uint64_t)g->sector, sectors);
        const uint64_t per_line = (uint64_t)g->l1_line / (uint64_t)g->sector;
        int lines = 0; /* the tag stage resolves the request's lines one a cycle (ASSUME_L1_LINE_PER_CYCLE) */
        for (int i = 0; i < distinct; i++) {
            lines += i == 0 || sectors[i] / per_line != sectors[i - 1] / per_line;
            done = max_d(done, sector_access(m, sectors[i], load, !m->l1_bypass, start + (lines - 1)));
        }
        m->memory_free = start + max_d((double)lines, distinct * m->sector_cycles);
    }
    m->access_done = (uint64_t)ceil(max_d((double)m->access_done, done));
    m->accessed = true;
}

/* ---- Occupancy ----------------------------------------------------------------------------------------- */

static uint64_t round_up(uint64_t x, uint64_t unit) { return unit ? (x + unit - 1) / unit * unit : x; }

/* Blocks resident at once on one SM: the fewest that registers, shared memory, warps and the block limit
 * allow (CUDA C Programming Guide, "Hardware Multithreading"; the allocation units of the GPU file). */
static unsigned blocks_per_sm(const model_gpu *g, unsigned warps, int registers, uint64_t smem, const char **limit)
{
    const uint64_t regs_per_warp = round_up((uint64_t)(registers ? registers : 1) * 32, (uint64_t)g->register_unit);
    const uint64_t by_registers = (uint64_t)g->registers_per_sm / (regs_per_warp * warps);
    const uint64_t smem_block = round_up(smem + (uint64_t)g->smem_reserved_per_block, (uint64_t)g->smem_unit);
    const uint64_t by_smem = smem_block ? (uint64_t)g->smem_per_sm / smem_block : UINT64_MAX;
    const uint64_t by_warps = (uint64_t)g->max_warps / warps;
    uint64_t n = (uint64_t)g->max_blocks;
    *limit = "the blocks per SM";
    if (by_warps < n)
        n = by_warps, *limit = "warps";
    if (by_registers < n)
        n = by_registers, *limit = "registers";
    if (by_smem < n)
        n = by_smem, *limit = "shared memory";
    return (unsigned)n;
}

/* ---- Issue --------------------------------------------------------------------------------------------- */

/* The instruction warp w of block b would issue next, and its lanes; false when none can (all wait). */
/* Warp w's next instruction: where its lanes are, or in a stretch it issues in machine-code order, the next
 * of that order (which it takes when it comes to the stretch's start converged). */
static const insn *next_insn(const sm_model *m, block *b, const warp *w, warp_time *t)
{
    uint32_t active;
    int32_t pc;
    if (w->converged) {
        if (!(w->live & ~w->waiting))
            return NULL;
        if (t->position < 0 && m->order.end_of[w->wpc] >= 0)
            t->position = w->wpc, t->end = m->order.end_of[w->wpc];
        return &b->k->code[t->position >= 0 ? m->order.order[t->position] : w->wpc];
    }
    if (!warp_next_group(b, w, &active, &pc, NULL))
        return NULL;
    return &b->k->code[pc];
}

static uint64_t mbar_offset(const block *b, const warp *w, const insn *in)
{
    const uint32_t lanes = w->live & ~w->waiting;
    const int lane = lanes ? __builtin_ctz(lanes) : 0;
    const uint64_t addr = (in->addr_base >= 0 ? w->r[in->addr_base][lane] : 0) + (uint64_t)in->addr_offset;
    (void)b;
    return addr - EMU_SHARED_WINDOW < EMU_WINDOW_SIZE ? addr - EMU_SHARED_WINDOW : addr;
}

/* Why warp w cannot issue `in` now (a warp state), or STALL_SELECTED when it can. */
static emu_stall blocked_by(sm_model *m, slot *s, unsigned wi, const insn *in, int sub)
{
    block *b = &s->b;
    warp *w = &b->warps[wi];
    warp_time *t = &s->time[wi];
    if (!in)
        return w->mbar_wait >= 0 ? STALL_LONG_SCOREBOARD : STALL_BARRIER;
    if (t->hold_until > m->now)
        return STALL_MEMBAR;
    if (t->stalled_until > m->now)
        return STALL_WAIT;
    /* the registers it reads, its guard, its address */
    const int32_t *o = &b->k->slots_of[in->operands];
    emu_stall worst = STALL_SELECTED;
    for (int i = 0; i < in->n_dst + in->n_src + 2; i++) {
        const int32_t slot = i < in->n_dst + in->n_src ? o[i] : i == in->n_dst + in->n_src ? in->guard : in->addr_base;
        if (slot < 0 || t->ready[slot] <= m->now)
            continue;
        /* a destination is waited on too: a load's target must not be overwritten before it lands */
        const emu_stall why = t->dep[slot] == DEP_L1TEX ? STALL_LONG_SCOREBOARD
                              : t->dep[slot] == DEP_MIO ? STALL_SHORT_SCOREBOARD
                                                        : STALL_WAIT;
        if (worst == STALL_SELECTED || why == STALL_LONG_SCOREBOARD)
            worst = why;
    }
    if (worst != STALL_SELECTED)
        return worst;
    switch (in->op) {
    case OP_CP_ASYNC_WAIT: case OP_CP_ASYNC_WAIT_ALL:
        if (groups_pending(&t->copies, in->op == OP_CP_ASYNC_WAIT ? (int)in->addr_offset : 0, m->now))
            return STALL_LONG_SCOREBOARD;
        break;
    case OP_WGMMA_WAIT:
        if (groups_pending(&t->mmas, (int)in->addr_offset, m->now))
            return STALL_WAIT;
        break;
    case OP_MBAR_TRY_WAIT: {
        const uint64_t at = mbar_offset(b, w, in);
        for (int i = 0; i < m->n_bulk; i++)
            if (m->bulk[i].mbar == at && m->bulk[i].done > m->now && m->bulk[i].done != UINT64_MAX)
                return STALL_LONG_SCOREBOARD;
        break;
    }
    default:
        break;
    }
    const timing tm = timing_of(m->g, in);
    if (m->pipe_free[sub][tm.pipe] > (double)m->now)
        return tm.pipe == PIPE_MIO ? STALL_MIO_THROTTLE : tm.pipe == PIPE_LSU ? STALL_LG_THROTTLE
                                                                               : STALL_MATH_PIPE_THROTTLE;
    if ((is_memory(in) || in->op == OP_SHFL) && m->memory_free > (double)m->now + ASSUME_MEMORY_QUEUE_CYCLES)
        return tm.pipe == PIPE_MIO ? STALL_MIO_THROTTLE : STALL_LG_THROTTLE;
    return STALL_SELECTED;
}

/* The share of `total` (machine instructions, stall cycles) that falls to a warp's run number `runs` of a line
 * whose block ptxas copied `copies` times: 2 instructions over 4 copies (two LDS.128 for four copies of an
 * ld.shared.f32) are one on the warp's first run, none on its second, one on its third, ... */
static unsigned run_share(uint64_t runs, uint64_t total, uint64_t copies)
{
    return (unsigned)(((runs + 1) * total + copies - 1) / copies - (runs * total + copies - 1) / copies);
}

/* The machine instructions a PTX instruction stands for on the modeled GPU, this time warp t runs it: its
 * run's share of what ptxas made of its line (ASSUME_SASS_PER_LINE), or one where the machine code was not
 * read. */
static unsigned machine_instructions(const ptx_kernel *k, const insn *in, const warp_time *t)
{
    return k->has_sass ? run_share(t->runs[in - k->code], in->sass, in->copies) : 1;
}

/* Issues `in` for warp wi: runs it in the interpreter, then books its pipe and its results. Its n machine
 * instructions issue one a cycle and go down its pipe one after another (ASSUME_SASS_EXPANSION); one that
 * ptxas folded into others (n = 0) takes neither an issue cycle nor its pipe, and its result is there at once. */
static void issue(sm_model *m, slot *s, unsigned wi, const insn *in, int sub)
{
    block *b = &s->b;
    warp *w = &b->warps[wi];
    warp_time *t = &s->time[wi];
    const model_gpu *g = m->g;
    const timing tm = timing_of(g, in);
    const int n_tma_before = b->n_tma;
    const unsigned n = machine_instructions(b->k, in, t);
    if (b->k->has_sass && n > 0) { /* its stall counts hold the warp (ASSUME_STALL_COUNTS) */
        const unsigned stalls = run_share(t->runs[in - b->k->code], in->sass_stalls, in->copies);
        t->stalled_until = m->now + (stalls > n ? stalls : n);
    }
    t->runs[in - b->k->code]++;
    m->accessed = false;
    m->access_done = m->now;
    m->l1_bypass = in->op == OP_CP_ASYNC;
    m->folded = b->k->has_sass && n == 0 && (in->op == OP_LD || in->op == OP_ST) && in->space != SPACE_PARAM &&
                in->space != SPACE_CONST;
    m->machine_bytes = b->k->has_sass ? in->sass_bytes : 0;
    const int32_t at = (int32_t)(in - b->k->code);
    if (t->position >= 0) /* out of PTX order: the interpreter runs the one the model issues */
        w->wpc = at;
    if (t->position >= 0 && predicates_skipped(b->k, &m->order, at)) {
        /* a branch ptxas if-converted: not taken, but the lanes it would take past its skipped instructions
         * are noted, and those run predicated, without them (ASSUME_SASS_ORDER) */
        uint32_t taken = 0;
        const uint32_t active = w->live & ~w->waiting;
        FOR_LANES(active, l) taken |= (uint32_t)(w->r[in->guard][l] & 1) << l;
        t->skips[at] = in->flags & F_GUARD_NEG ? active & ~taken : taken;
    } else {
        w->skipped = t->position >= 0 && m->order.predicated_by[at] >= 0 ? t->skips[m->order.predicated_by[at]] : 0;
        run_warp(b, w, 1);
        w->skipped = 0;
    }
    if (t->position >= 0 && ++t->position < t->end)
        w->wpc = m->order.order[t->position];
    else if (t->position >= 0) /* the stretch done: on in PTX order after it */
        w->wpc = t->end, t->position = -1;
    if (n > 0) /* (a wgmma's pipe time is its N's, set below) */
        m->pipe_free[sub][tm.pipe] = (double)m->now + tm.interval * (in->op == OP_WGMMA_MMA ? 1 : n);
    double done = (double)m->now + (n > 0 ? tm.latency + (n - 1) : 0);
    switch (in->op) {
    case OP_CP_ASYNC:
        groups_issue(&t->copies, m->access_done);
        break;
    case OP_CP_ASYNC_COMMIT:
        groups_commit(&t->copies, m->now);
        break;
    case OP_CP_ASYNC_WAIT: case OP_CP_ASYNC_WAIT_ALL:
        groups_waited(&t->copies, in->op == OP_CP_ASYNC_WAIT ? (int)in->addr_offset : 0);
        break;
    case OP_WGMMA_MMA: {
        /* the warp's share of its operands through the data path (ASSUME_WGMMA_OPERANDS): a quarter of B's
         * N x 16 two-byte elements, and of A's 64 x 16 when A is in shared memory */
        const double bytes = (in->flags & F_A_REGS ? 0 : 64 * 16 * 2 / 4) + in->size * 8 * 16 * 2 / 4;
        const double read_start = max_d((double)m->now, m->memory_free);
        m->memory_free = read_start + bytes / g->smem_bytes_per_clock;
        /* the warp's share of the tensor pipe, queued behind the wgmma before it, and not done before its
         * operands are read */
        const double start = max_d((double)m->now, m->pipe_free[sub][PIPE_TENSOR] - tm.interval);
        m->pipe_free[sub][PIPE_TENSOR] = max_d(start + tm.interval, m->memory_free);
        groups_issue(&t->mmas, (uint64_t)ceil(m->pipe_free[sub][PIPE_TENSOR]));
        break;
    }
    case OP_SHFL: /* through the SM's queue (ASSUME_SHUFFLE_QUEUE) */
        if (n > 0) {
            const double start = max_d((double)m->now, m->memory_free);
            m->memory_free = start + n * 32.0 / g->thr_shfl;
            done = m->memory_free - 32.0 / g->thr_shfl + g->lat_smem;
        }
        break;
    case OP_WGMMA_COMMIT:
        groups_commit(&t->mmas, m->now);
        break;
    case OP_WGMMA_WAIT:
        groups_waited(&t->mmas, (int)in->addr_offset);
        break;
    case OP_MEMBAR:
        if (in->mode != FENCE_VIEW_ONLY)
            t->hold_until = t->access_done;
        if (in->mode == FENCE_GPU && t->hold_until < m->now + (uint64_t)g->lat_l2)
            t->hold_until = m->now + (uint64_t)g->lat_l2;
        break;
    default:
        if (m->accessed)
            done = (double)m->access_done + (n > 1 ? n - 1 : 0), t->access_done = m->access_done;
        else if (m->folded)
            done = max_d(done, (double)t->access_done);
        break;
    }
    /* bulk tensor copies: their bytes through this SM's share of the L2, landing after an L2 round trip */
    for (int i = n_tma_before; i < b->n_tma; i++) {
        if (!queue_room((void **)&m->bulk, m->n_bulk, &m->cap_bulk, sizeof *m->bulk, 16))
            break;
        const emu_tensor_map *map = &b->tma[i].map;
        uint64_t bytes = map->element_bytes;
        for (int d = 0; d < map->rank; d++)
            bytes *= map->box[d];
        if (!map->rank)
            bytes = b->tma[i].bytes;
        const double sectors = ceil((double)bytes / g->sector);
        const double at = max_d((double)m->now, m->l2_free);
        m->l2_free = at + sectors * m->l2_cycles_per_sector;
        m->bulk[m->n_bulk++] = (bulk_copy_time){b->tma[i].mbar, (uint64_t)ceil(m->l2_free + g->lat_l2)};
    }
    /* its results: ready when done, waited on as its dependency says; or, a fixed latency the machine code
     * leaves to its stall counts alone, ready now (ASSUME_STALL_COUNTS) */
    if (in->op != OP_WGMMA_MMA) {
        const int32_t *o = &b->k->slots_of[in->operands];
        const bool stall_counts_alone = b->k->has_sass && in->sass_fixed && tm.dep == DEP_FIXED;
        const uint64_t ready = stall_counts_alone ? m->now : (uint64_t)ceil(done);
        for (int i = 0; i < in->n_dst; i++)
            if (o[i] >= 0)
                t->ready[o[i]] = ready, t->dep[o[i]] = (uint8_t)tm.dep;
    }
}

/* ---- Issue order (ASSUME_SASS_ORDER) ------------------------------------------------------------------- */

/* Whether a warp may issue `in` out of PTX order: arithmetic, logic, comparisons, conversions, moves, and
 * plain loads and stores. */
static bool movable(const insn *in)
{
    if (in->flags & (F_CC | F_ALIGNED | F_STRONG))
        return false;
    if (in->op == OP_LD || in->op == OP_ST)
        return true;
    if (in->op == OP_ADDC || in->op == OP_SUBC || in->op == OP_MADC || in->op == OP_NANOSLEEP || in->op == OP_PMEVENT)
        return false;
    const emu_class c = class_of(in);
    return c == CLASS_FP32 || c == CLASS_FP64 || c == CLASS_FP16 || c == CLASS_INTEGER || c == CLASS_CONVERSION;
}

/* Whether x writes a register y reads (its sources, guard or address) or writes. */
static bool writes_for(const ptx_kernel *k, const insn *x, const insn *y)
{
    const int32_t *ox = &k->slots_of[x->operands], *oy = &k->slots_of[y->operands];
    for (int i = 0; i < x->n_dst; i++) {
        if (ox[i] < 0)
            continue;
        if (ox[i] == y->guard || ox[i] == y->addr_base)
            return true;
        for (int j = 0; j < y->n_dst + y->n_src; j++)
            if (ox[i] == oy[j])
                return true;
    }
    return false;
}

/* Whether two loads or stores may touch the same bytes: not when they name different state spaces (a generic
 * address may be in any), nor when they add different constant offsets to one register and their bytes do not
 * meet (where that register changes between them, the register keeps them in order anyway). */
static bool may_overlap(const insn *a, const insn *b)
{
    if (a->space != b->space && a->space != SPACE_GENERIC && b->space != SPACE_GENERIC)
        return false;
    const int64_t a_bytes = a->vec * ptx_type_bits((ptx_type)a->type) / 8, b_bytes = b->vec * ptx_type_bits((ptx_type)b->type) / 8;
    return a->addr_base != b->addr_base ||
           (a->addr_offset < b->addr_offset + b_bytes && b->addr_offset < a->addr_offset + a_bytes);
}

/* Whether b, after a in PTX order, must issue after it: a register between them, or a store and a load or
 * store that may touch the same bytes. */
static bool depends(const ptx_kernel *k, const insn *a, const insn *b)
{
    const bool a_memory = a->op == OP_LD || a->op == OP_ST, b_memory = b->op == OP_LD || b->op == OP_ST;
    if (a_memory && b_memory && (a->op == OP_ST || b->op == OP_ST) && may_overlap(a, b))
        return true;
    return writes_for(k, a, b) || writes_for(k, b, a);
}

/* Where a basic block starts: at a branch target, and after a branch, call, return or exit. */
static bool *block_starts(const ptx_kernel *k)
{
    bool *starts = calloc((size_t)k->n_code + 1, sizeof *starts);
    if (!starts)
        return NULL;
    for (int j = 0; j < k->n_code; j++) {
        const insn *in = &k->code[j];
        if (in->op == OP_BRA || in->op == OP_BRX || in->op == OP_CALL || in->op == OP_RET || in->op == OP_EXIT)
            starts[j + 1] = true;
        if (in->op == OP_BRA && in->target >= 0 && in->target < k->n_code)
            starts[in->target] = true;
    }
    for (int j = 0; j < k->n_branch_targets; j++)
        if (k->branch_targets[j] >= 0 && k->branch_targets[j] < k->n_code)
            starts[k->branch_targets[j]] = true;
    return starts;
}

/* The if-converted branches whose skipped instructions a stretch may run predicated: a forward branch ptxas
 * made no branch of (insn.if_converted) over movable instructions that nothing else jumps into, to a target
 * that no other branch jumps to. Marks predicated_by for the instructions each skips, and `joined` for the
 * block starts a stretch may then run through (the skipped instructions' first, and the target). */
static void find_if_converted(const ptx_kernel *k, const bool *starts, int32_t *predicated_by, bool *joined)
{
    int *jumps_to = calloc((size_t)k->n_code + 1, sizeof *jumps_to); /* the branches to each instruction */
    for (int j = 0; j < k->n_code; j++)
        predicated_by[j] = -1, joined[j] = false;
    if (!jumps_to)
        return; /* none found: PTX order across branches, as without them */
    for (int j = 0; j < k->n_code; j++)
        if (k->code[j].op == OP_BRA && k->code[j].target >= 0 && k->code[j].target < k->n_code)
            jumps_to[k->code[j].target]++;
    for (int j = 0; j < k->n_branch_targets; j++)
        if (k->branch_targets[j] >= 0 && k->branch_targets[j] < k->n_code)
            jumps_to[k->branch_targets[j]] += 2; /* an indirect branch's: never joined */
    for (int j = 0; j < k->n_code; j++) {
        const insn *bra = &k->code[j];
        if (!bra->if_converted || bra->target >= k->n_code || jumps_to[bra->target] != 1)
            continue;
        bool straight = true;
        for (int i = j + 1; i < bra->target && straight; i++)
            straight = movable(&k->code[i]) && (i == j + 1 || !starts[i]);
        if (!straight)
            continue;
        for (int i = j + 1; i < bra->target; i++)
            predicated_by[i] = j;
        joined[j + 1] = joined[bra->target] = true;
    }
    free(jumps_to);
}

/* The kernel's issue order: its stretches of movable instructions within a basic block, or across the blocks
 * of if-converted branches (the branch in the stretch, the instructions it skips run predicated), each
 * scheduled as a list scheduler would, taking of the instructions whose dependencies have issued the one
 * ptxas put first. Without the machine code, PTX order everywhere. False when out of host memory. */
static bool plan_issue_order(const ptx_kernel *k, issue_order *plan)
{
    const size_t n = k->n_code ? (size_t)k->n_code : 1;
    plan->order = malloc(n * sizeof *plan->order);
    plan->end_of = malloc(n * sizeof *plan->end_of);
    plan->predicated_by = malloc(n * sizeof *plan->predicated_by);
    int32_t *waiting_on = malloc(n * sizeof *waiting_on); /* its earlier dependencies not issued; -1: issued */
    bool *starts = k->has_sass ? block_starts(k) : NULL, *joined = malloc(n * sizeof *joined);
    if (!plan->order || !plan->end_of || !plan->predicated_by || !waiting_on || !joined || (k->has_sass && !starts)) {
        free(waiting_on), free(starts), free(joined);
        return false;
    }
    for (int j = 0; j < k->n_code; j++)
        plan->order[j] = j, plan->end_of[j] = -1, plan->predicated_by[j] = -1;
    if (k->has_sass)
        find_if_converted(k, starts, plan->predicated_by, joined);
    /* in a stretch: a movable instruction, or an if-converted branch whose skipped instructions run predicated */
#define IN_STRETCH(j) (movable(&k->code[j]) || predicates_skipped(k, plan, j))
    /* b must issue after a: a dependency, or a is the branch whose skipped instructions b is one of */
#define AFTER(a, b) (depends(k, &k->code[a], &k->code[b]) || plan->predicated_by[b] == (a))
    for (int first = 0, end; k->has_sass && first < k->n_code; first = end) {
        for (end = first + 1; IN_STRETCH(first) && end < k->n_code && (!starts[end] || joined[end]) && IN_STRETCH(end);)
            end++;
        bool predicates = false; /* it runs skipped instructions predicated: never in PTX order, as branches */
        for (int j = first; j < end; j++) {
            waiting_on[j] = 0;
            for (int i = first; i < j; i++)
                waiting_on[j] += AFTER(i, j);
            predicates |= plan->predicated_by[j] >= 0;
        }
        for (int p = first; p < end; p++) {
            int next = -1;
            for (int j = first; j < end; j++)
                if (waiting_on[j] == 0 && (next < 0 || k->code[j].sass_order < k->code[next].sass_order))
                    next = j;
            plan->order[p] = next, waiting_on[next] = -1;
            for (int j = next + 1; j < end; j++)
                if (waiting_on[j] > 0 && AFTER(next, j))
                    waiting_on[j]--;
            if (next != p || predicates)
                plan->end_of[first] = end;
        }
    }
#undef IN_STRETCH
#undef AFTER
    free(waiting_on);
    free(starts);
    free(joined);
    return true;
}

/* ---- The SM, cycle by cycle ---------------------------------------------------------------------------- */

uint64_t model_sm_stride(const model_gpu *gpu) { return (uint64_t)gpu->sms; }

static void slot_start(sm_model *m, slot *s, uint64_t id, unsigned first_warp, const ptx_kernel *k)
{
    block_place(&s->b, id);
    block_start(&s->b);
    s->busy = true;
    s->first_warp = first_warp;
    for (unsigned i = 0; i < s->b.n_warps; i++) {
        warp_time *t = &s->time[i];
        memset(t->ready, 0, (size_t)k->n_slots * sizeof *t->ready);
        memset(t->dep, 0, (size_t)k->n_slots);
        memset(t->runs, 0, (size_t)k->n_code * sizeof *t->runs);
        t->hold_until = t->stalled_until = 0, t->started = m->now, t->position = -1;
        t->copies = t->mmas = (groups){.open = m->now};
    }
    s->b.model = m;
    s->b.clock = &m->now;
    s->b.on_access = note_access;
}

static bool slot_done(const slot *s)
{
    for (unsigned i = 0; i < s->b.n_warps; i++)
        if (s->b.warps[i].live)
            return false;
    return true;
}

/* The bytes of every allocation the launch's parameters point into (a pointer anywhere in them, in a
 * struct passed by value too): what its blocks read and write, all together, at most. */
static uint64_t launch_footprint(const emu_launch_desc *L)
{
    const emu_alloc *seen[64];
    int n_seen = 0;
    uint64_t total = 0;
    for (uint64_t at = 0; at + 8 <= L->kernel->param_bytes; at += 8) {
        uint64_t p;
        memcpy(&p, L->params + at, 8);
        const emu_alloc *a = emu_alloc_find(p, 1);
        bool known = false;
        for (int i = 0; a && i < n_seen && !known; i++)
            known = seen[i] == a;
        if (a && !known && n_seen < 64)
            seen[n_seen++] = a, total += a->size;
    }
    return total;
}

/* A live warp of the SM this cycle: its next instruction, and why it cannot issue it (STALL_SELECTED: it can). */
typedef struct { slot *s; unsigned wi; int id; const insn *in; emu_stall why; } candidate;

/* PTX instructions ptxas folded away that one sub-partition issues in one cycle at most: a bound, not a
 * figure (a run of them longer than this takes another cycle; none of this project's kernels has one). */
enum { FOLDED_PER_CYCLE = 32 };

/* Sub-partition sub's pick among the warps: while `expanding`, the warp whose machine instructions are
 * issuing; else greedy, the warp that issued last while it can, else the youngest that can (ASSUME_POLICY).
 * Sets each of its warps' next instruction and state; -1 when none can issue. */
static int choose(sm_model *m, candidate *warps_now, int n, int sub, bool expanding, bool *any_runnable)
{
    const int subs = (int)m->g->schedulers;
    int chosen = -1;
    uint64_t chosen_youth = 0;
    for (int i = 0; i < n; i++) {
        candidate *c = &warps_now[i];
        if (c->id % subs != sub)
            continue;
        const warp *w = &c->s->b.warps[c->wi];
        *any_runnable |= (w->live & ~w->waiting) != 0;
        c->in = next_insn(m, &c->s->b, w, &c->s->time[c->wi]);
        c->why = blocked_by(m, c->s, c->wi, c->in, sub);
        if (expanding) {
            if (c->id == m->last_issued[sub])
                chosen = i;
            continue;
        }
        if (c->why != STALL_SELECTED)
            continue;
        const uint64_t youth = c->s->time[c->wi].started * 4096 + (uint64_t)c->id;
        if (chosen < 0 || c->id == m->last_issued[sub] ||
            (warps_now[chosen].id != m->last_issued[sub] && youth > chosen_youth))
            chosen = i, chosen_youth = youth;
    }
    return chosen;
}

emu_status model_run_sm(const model_gpu *g, const emu_launch_desc *L, uint64_t smem_size, int registers,
                        emu_counters *modeled, emu_counters *counts, char *err, size_t err_len)
{
    const ptx_kernel *k = L->kernel;
    const uint64_t n_blocks = (uint64_t)L->grid.x * L->grid.y * L->grid.z;
    const unsigned threads = L->block.x * L->block.y * L->block.z, warps = (threads + LANES - 1) / LANES;
    const char *limit;
    unsigned resident = blocks_per_sm(g, warps, registers, smem_size, &limit);
    if (resident == 0) {
        snprintf(err, err_len, "kernel %s: the model fits no block of %u threads, %d registers per thread and %" PRIu64
                 " bytes of shared memory on one SM of the %s (%s)", k->name, threads, registers, smem_size, g->label,
                 limit);
        return EMU_ERR_LAUNCH;
    }
    const uint64_t mine = (n_blocks + (uint64_t)g->sms - 1) / (uint64_t)g->sms; /* ids 0, SMs, 2 SMs, ... */
    if (resident > mine)
        resident = (unsigned)mine;
    sm_model m = {.g = g};
    if (!plan_issue_order(k, &m.order)) {
        free(m.order.order), free(m.order.end_of), free(m.order.predicated_by);
        snprintf(err, err_len, "kernel %s: out of host memory to model it", k->name);
        return EMU_ERR_LAUNCH;
    }
    m.sector_cycles = g->sector / g->smem_bytes_per_clock;
    m.l2_cycles_per_sector = g->sector / (g->l2_bytes_per_clock / g->sms);
    m.dram_cycles_per_sector = g->sector / (g->dram_gbps / g->sms / g->clock_ghz);
    /* the L1 is what the shared-memory carveout leaves: the smallest carveout the resident blocks' shared
     * memory fits in (ASSUME_CARVEOUT) */
    const double wanted_kb = (double)(resident * round_up(smem_size + (uint64_t)g->smem_reserved_per_block,
                                                          (uint64_t)g->smem_unit)) / 1024.0;
    double carveout_kb = g->carveouts_kb[g->n_carveouts_kb - 1];
    for (int i = g->n_carveouts_kb - 1; i >= 0; i--)
        if (g->carveouts_kb[i] >= wanted_kb)
            carveout_kb = g->carveouts_kb[i];
    const double l1_bytes = g->l1_and_smem - carveout_kb * 1024.0;
    slot *slots = calloc(resident, sizeof *slots);
    char block_err[1024] = "";
    bool ok = l1_init(&m.l1, l1_bytes > 0 ? (uint64_t)l1_bytes : 0, g) && slots;
    for (unsigned i = 0; ok && i < resident; i++) {
        ok = block_alloc(&slots[i].b, L, smem_size, counts != NULL, block_err, sizeof block_err);
        slots[i].time = ok ? calloc(warps, sizeof *slots[i].time) : NULL;
        ok = ok && slots[i].time;
        for (unsigned w = 0; ok && w < warps; w++) {
            slots[i].time[w].ready = malloc((size_t)(k->n_slots ? k->n_slots : 1) * sizeof(uint64_t));
            slots[i].time[w].dep = malloc(k->n_slots ? (size_t)k->n_slots : 1);
            slots[i].time[w].runs = malloc((size_t)(k->n_code ? k->n_code : 1) * sizeof(uint32_t));
            slots[i].time[w].skips = malloc((size_t)(k->n_code ? k->n_code : 1) * sizeof(uint32_t));
            ok = slots[i].time[w].ready && slots[i].time[w].dep && slots[i].time[w].runs && slots[i].time[w].skips;
        }
    }
    emu_status status = EMU_OK;
    if (!ok) {
        snprintf(err, err_len, "kernel %s: out of host memory to model %u resident blocks", k->name, resident);
        status = EMU_ERR_LAUNCH;
    }
    /* the DRAM share: the launch's footprint over what all SMs ask the L2 for the first time, estimated
     * as this SM's first requests per block times the grid's blocks (updated as blocks finish) */
    const double footprint = (double)launch_footprint(L);
    m.dram_share = 1.0;
    for (int i = 0; i < 8; i++)
        m.last_issued[i] = -1;
    uint64_t next = 0, finished = 0;
    /* ASSUME_STEADY_WAVES: the cycle each modeled wave ended (its last block finished), and what had issued
     * by the end of the first */
    const unsigned waves = L->model_waves;
    const uint64_t stop_after = waves && mine > (uint64_t)waves * resident ? (uint64_t)waves * resident : 0;
    uint64_t *wave_end = stop_after ? calloc(waves, sizeof *wave_end) : NULL;
    uint64_t first_wave_stalls[STALL_COUNT] = {0}, first_wave_issued = 0, first_wave_issued_ptx = 0;
    if (stop_after && !wave_end) {
        snprintf(err, err_len, "kernel %s: out of host memory", k->name);
        status = EMU_ERR_LAUNCH;
    }
    for (unsigned i = 0; ok && status == EMU_OK && i < resident; i++)
        slot_start(&m, &slots[i], (next++) * (uint64_t)g->sms, i * warps, k);
    const int subs = (int)g->schedulers;
    uint64_t stalls[STALL_COUNT] = {0}, issued = 0, issued_ptx = 0;
    /* each cycle: every live warp's next instruction and whether it could issue, then one issue per
     * sub-partition, then every warp's state counted */
    candidate *warps_now = malloc((size_t)resident * warps * sizeof *warps_now);
    if (!warps_now && ok) {
        snprintf(err, err_len, "kernel %s: out of host memory to model %u resident blocks", k->name, resident);
        status = EMU_ERR_LAUNCH;
    }
    while (ok && status == EMU_OK) {
        int n = 0;
        for (unsigned si = 0; si < resident; si++)
            for (unsigned wi = 0; slots[si].busy && wi < slots[si].b.n_warps; wi++)
                if (slots[si].b.warps[wi].live)
                    warps_now[n++] = (candidate){&slots[si], wi, (int)(slots[si].first_warp + wi), NULL, 0};
        if (n == 0 && next >= mine)
            break;
        bool any_issued = false, any_runnable = false;
        for (int sub = 0; sub < subs && status == EMU_OK; sub++) {
            /* while the last PTX instruction's machine instructions issue, its warp is the one selected;
             * a PTX instruction ptxas folded away issues in no cycle, so the scheduler picks again */
            const bool expanding = m.expanding_until[sub] > m.now;
            int chosen = -1;
            for (int folded = 0; status == EMU_OK; folded++) {
                chosen = choose(&m, warps_now, n, sub, expanding, &any_runnable);
                if (chosen < 0 || expanding)
                    break;
                candidate *c = &warps_now[chosen];
                const unsigned machine = machine_instructions(k, c->in, &c->s->time[c->wi]);
                if (machine == 0 && folded >= FOLDED_PER_CYCLE)
                    break; /* (the rest wait for the next cycle) */
                issue(&m, c->s, c->wi, c->in, sub);
                issued_ptx++;
                issued += machine;
                any_issued = true;
                m.last_issued[sub] = c->id;
                if (machine > 1)
                    m.expanding_until[sub] = m.now + machine;
                if (c->s->b.status != EMU_OK) {
                    snprintf(err, err_len, "%s", block_err);
                    status = c->s->b.status;
                }
                if (machine > 0)
                    break;
            }
            any_issued |= expanding;
            for (int i = 0; i < n; i++)
                if (warps_now[i].id % subs == sub) {
                    const emu_stall state = i == chosen ? STALL_SELECTED
                                            : warps_now[i].why == STALL_SELECTED ? STALL_NOT_SELECTED
                                                                                 : warps_now[i].why;
                    stalls[state]++;
                    modeled->modeled_warpgroup_stalls[warps_now[i].wi / 4][state]++;
                }
        }
        /* blocks that ended make room for the next of this SM's blocks */
        for (unsigned si = 0; si < resident && status == EMU_OK; si++) {
            slot *s = &slots[si];
            if (!s->busy || !slot_done(s))
                continue;
            s->busy = false;
            finished++;
            if (stop_after && finished % resident == 0)
                wave_end[finished / resident - 1] = m.now;
            if (stop_after && finished == resident) {
                memcpy(first_wave_stalls, stalls, sizeof stalls);
                first_wave_issued = issued, first_wave_issued_ptx = issued_ptx;
            }
            if (counts) {
                emu_counters_add(counts, &s->b.c);
                memset(&s->b.c, 0, sizeof s->b.c);
            }
            if (next < mine)
                slot_start(&m, s, (next++) * (uint64_t)g->sms, s->first_warp, k);
        }
        if (status != EMU_OK || (stop_after && finished >= stop_after))
            break;
        if (!any_issued && !any_runnable && n > 0) { /* every live warp waits on another: a deadlock */
            describe_deadlock(&warps_now[0].s->b);
            snprintf(err, err_len, "%s", block_err);
            status = warps_now[0].s->b.status != EMU_OK ? warps_now[0].s->b.status : EMU_ERR_DEADLOCK;
            break;
        }
        if ((m.now & 255) == 0 && footprint > 0 && m.asked_l2.n) /* the DRAM share, as the blocks show it */
            m.dram_share = fmin(1.0, footprint / ((double)m.asked_l2.n * g->sector / (double)next * (double)n_blocks));
        m.now++;
    }
    free(warps_now);
    /* A launch ends when its stores are done, not when its warps have issued them: the SM's traffic still
     * queued for the L2's and DRAM's bandwidth (stores a warp does not wait for) drains first ("Kernel
     * completion": a kernel's writes are visible to the work that follows it). */
    const double backlog = max_d(0.0, max_d(m.l2_free, m.dram_free) - (double)m.now);
    if (status == EMU_OK && ok && stop_after) { /* the waves not modeled (ASSUME_STEADY_WAVES) */
        double mean = 0.0, spread = 0.0;
        for (unsigned i = 1; i < waves; i++)
            mean += (double)(wave_end[i] - wave_end[i - 1]) / (waves - 1);
        for (unsigned i = 1; i < waves; i++)
            spread += pow((double)(wave_end[i] - wave_end[i - 1]) - mean, 2) / (waves - 2);
        const uint64_t left = mine - finished, more_waves = (left + resident - 1) / resident;
        const double grow = (double)more_waves / (waves - 1);
        for (int i = 0; i < STALL_COUNT; i++)
            stalls[i] += (uint64_t)llround((double)(stalls[i] - first_wave_stalls[i]) * grow);
        issued += (uint64_t)llround((double)(issued - first_wave_issued) * grow);
        issued_ptx += (uint64_t)llround((double)(issued_ptx - first_wave_issued_ptx) * grow);
        m.now += (uint64_t)llround(mean * (double)more_waves);
        /* the mean of waves - 1 waves has a variance of spread / (waves - 1); more_waves of them */
        modeled->modeled_extrapolation_variance +=
            (uint64_t)llround(spread / (waves - 1) * (double)more_waves * (double)more_waves);
        modeled->modeled_extrapolated_blocks += left;
    }
    free(wave_end);
    m.now += (uint64_t)ceil(backlog);
    if (status == EMU_OK && ok) {
        modeled->modeled_cycles += m.now;
        modeled->modeled_picoseconds += (uint64_t)llround((double)m.now / g->clock_ghz * 1000.0);
        modeled->modeled_sm_blocks += finished;
        modeled->modeled_resident_blocks += resident;
        modeled->modeled_issued += issued;
        modeled->modeled_issued_ptx += issued_ptx;
        modeled->modeled_sass_launches += k->has_sass;
        for (int i = 0; i < STALL_COUNT; i++)
            modeled->modeled_stalls[i] += stalls[i];
    }
    for (unsigned i = 0; slots && i < resident; i++) {
        for (unsigned w = 0; slots[i].time && w < warps; w++) {
            free(slots[i].time[w].ready), free(slots[i].time[w].dep), free(slots[i].time[w].runs);
            free(slots[i].time[w].skips);
        }
        free(slots[i].time);
        block_release(&slots[i].b);
    }
    free(slots);
    free(m.order.order), free(m.order.end_of), free(m.order.predicated_by);
    l1_free(&m.l1);
    free(m.asked_l2.keys);
    free(m.bulk);
    return status;
}

/* ---- Which GPU ----------------------------------------------------------------------------------------- */

static const model_gpu *chosen; /* the GPU launches are modeled on, once read */
static bool chosen_read;

/* EMU_MODEL_FIGURES="key=value,...": the chosen GPU with some of its file's figures changed, named as the
 * GPU file names them (twice an H100's DRAM bandwidth: hbm_bandwidth_gbps=6700), to ask the model "what
 * if". Its label says so, and so does every number printed under it. NULL, said once, for a name that is
 * no figure or a value that is no positive number. */
static model_gpu what_if;
static char what_if_label[512];

static const model_gpu *with_figures(const model_gpu *gpu)
{
    const char *set = getenv("EMU_MODEL_FIGURES");
    if (!gpu || !set || !*set)
        return gpu;
    what_if = *gpu;
    snprintf(what_if_label, sizeof what_if_label, "%s with %.200s", gpu->label, set);
    what_if.label = what_if_label;
    for (const char *p = set; *p;) {
        const size_t len = strcspn(p, ","), name = strcspn(p, "=");
        char *end = NULL;
        const double v = name < len ? strtod(p + name + 1, &end) : 0;
        size_t i = 0;
        while (i < sizeof model_figures / sizeof model_figures[0] &&
               !(strlen(model_figures[i].key) == name && strncmp(p, model_figures[i].key, name) == 0))
            i++;
        if (i == sizeof model_figures / sizeof model_figures[0] || name >= len || end != p + len || !(v > 0)) {
            fprintf(stderr, "emu: EMU_MODEL_FIGURES: '%.*s' is not NAME=VALUE with a figure of the GPU files the "
                    "model reads (emu/gpu_table.py) and a positive number: no launch is modeled\n", (int)len, p);
            return NULL;
        }
        *(double *)((char *)&what_if + model_figures[i].offset) = v;
        p += len + (p[len] == ',');
    }
    return &what_if;
}

static const model_gpu *gpu_named(const char *name)
{
    for (size_t i = 0; i < sizeof model_gpus / sizeof model_gpus[0]; i++)
        if (strcmp(name, model_gpus[i].name) == 0)
            return &model_gpus[i];
    return NULL;
}

void model_gpu_names(char *out, size_t size)
{
    size_t used = 0;
    out[0] = 0;
    for (size_t i = 0; i < sizeof model_gpus / sizeof model_gpus[0] && used < size; i++)
        used += (size_t)snprintf(out + used, size - used, "%s%s", i ? ", " : "", model_gpus[i].name);
}

bool model_gpu_choose(const char *name)
{
    const model_gpu *gpu = gpu_named(name);
    if (gpu)
        chosen = with_figures(gpu), chosen_read = true;
    return gpu != NULL;
}

const model_gpu *model_gpu_chosen(void)
{
    if (chosen_read)
        return chosen;
    chosen_read = true;
    const char *name = getenv("EMU_MODEL");
    if (!name || !*name)
        return NULL;
    chosen = gpu_named(name);
    if (!chosen) {
        char names[128];
        model_gpu_names(names, sizeof names);
        fprintf(stderr, "emu: EMU_MODEL=%s names no GPU the model knows (%s): no launch is modeled\n", name, names);
    }
    chosen = with_figures(chosen);
    return chosen;
}

const char *model_gpu_label(const model_gpu *gpu) { return gpu->label; }

double model_gpu_peak_tflops(const model_gpu *gpu, bool tensor_cores)
{
    const double per_sm_clock = tensor_cores ? gpu->tensor_flop_per_clock : 2 * gpu->thr_fp32; /* an FMA: 2 */
    return per_sm_clock * gpu->sms * gpu->clock_ghz * 1e9 / 1e12;
}

const char *model_gpu_arch(const model_gpu *gpu)
{
    return gpu->wgmma_clocks_per_n > 0 ? "sm_90a" : strcmp(gpu->name, "a100") == 0 ? "sm_80" : "sm_86";
}

/* ---- Printing --------------------------------------------------------------------------------------------- */

static double per(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

void emu_model_print(FILE *out, const emu_counters *c)
{
    const struct model_gpu *gpu = model_gpu_chosen();
    fprintf(out, "  modeled on %s (a model, not a measurement):\n", gpu ? model_gpu_label(gpu) : "a GPU");
    fprintf(out, "    time              %.2f us (%llu cycles of one SM; it ran %llu blocks, %.1f at once per launch",
            (double)c->modeled_picoseconds * 1e-6, (unsigned long long)c->modeled_cycles,
            (unsigned long long)c->modeled_sm_blocks, per(c->modeled_resident_blocks, c->launches));
    if (c->modeled_extrapolated_blocks) /* ASSUME_STEADY_WAVES */
        fprintf(out, "; %llu more extrapolated from its waves, standard error %.1f%%",
                (unsigned long long)c->modeled_extrapolated_blocks,
                100.0 * sqrt((double)c->modeled_extrapolation_variance) / (double)c->modeled_cycles);
    fprintf(out, ")\n");
    if (c->modeled_sass_launches)
        fprintf(out, "    issued            %llu warp instructions of machine code (SASS), made of %llu of PTX\n",
                (unsigned long long)c->modeled_issued, (unsigned long long)c->modeled_issued_ptx);
    else
        fprintf(out, "    issued            %llu warp instructions of PTX (the machine code was not read)\n",
                (unsigned long long)c->modeled_issued_ptx);
    uint64_t warp_cycles = 0;
    for (int i = 0; i < STALL_COUNT; i++)
        warp_cycles += c->modeled_stalls[i];
    fprintf(out, "    warp states       cycles per issued instruction, by Nsight Compute's names:\n     ");
    fprintf(out, " %.2f in all:", per(warp_cycles, c->modeled_issued));
    for (int i = 0; i < STALL_COUNT; i++)
        if (c->modeled_stalls[i])
            fprintf(out, " %s %.2f", emu_stall_names[i], per(c->modeled_stalls[i], c->modeled_issued));
    fprintf(out, "\n");
    /* by warpgroup, where a block has more than one: each group's cycles per instruction it issued (its
     * cycles in `selected`, one an instruction) */
    if (!c->modeled_warpgroup_stalls[1][STALL_SELECTED])
        return;
    fprintf(out, "    by warpgroup      the same for warps 4g to 4g + 3 of each block modeled:\n");
    for (int g = 0; g < 8 && c->modeled_warpgroup_stalls[g][STALL_SELECTED]; g++) {
        const uint64_t *group = c->modeled_warpgroup_stalls[g];
        uint64_t cycles = 0;
        for (int i = 0; i < STALL_COUNT; i++)
            cycles += group[i];
        char warps[16];
        snprintf(warps, sizeof warps, "%d-%d:", 4 * g, 4 * g + 3);
        fprintf(out, "      warps %-6s %.2f in all:", warps, per(cycles, group[STALL_SELECTED]));
        for (int i = 0; i < STALL_COUNT; i++)
            if (group[i])
                fprintf(out, " %s %.2f", emu_stall_names[i], per(group[i], group[STALL_SELECTED]));
        fprintf(out, "\n");
    }
}

/* ---- The machine code: ptxas's registers and instructions ---------------------------------------------- */

/* nvdisasm: $EMU_NVDISASM, else the one the build found (the toolkit's, or the PyPI wheel's), else none. */
static const char *nvdisasm_path(void)
{
    const char *set = getenv("EMU_NVDISASM");
    if (set)
        return *set ? set : NULL;
#ifdef EMU_NVDISASM_FOUND
    return EMU_NVDISASM_FOUND;
#else
    return NULL;
#endif
}

/* One machine instruction as nvdisasm lists it: the PTX line it was made of, for a branch its target, for a
 * load or store the bytes a thread moves, and its stall count. */
typedef struct {
    int line;
    int target;    /* the instruction a branch goes to (an index into the list), or -1 */
    uint8_t bytes; /* a load's or store's bytes per thread (LDS.128: 16), else 0 */
    uint8_t stall; /* the cycles its warp waits before it issues its next instruction (ASSUME_STALL_COUNTS) */
    bool counter;  /* it sets a dependence counter that its result's users wait on (ASSUME_STALL_COUNTS) */
    bool imad;     /* an IMAD, IMUL or IDP: the FMA pipe's integer work (ASSUME_IMAD_PIPE) */
    bool control;  /* a branch, jump, call, return or exit (ASSUME_SASS_ORDER: a PTX branch ptxas made none of,
                      it if-converted) */
} sass_insn;

/* An instruction's control information, which ptxas sets, in the high 64 bits of its 128-bit word (Jia et al.,
 * "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking", 2018, section 2.2; the same on Turing,
 * Ampere and Hopper): the stall count at bits 105-108 of the whole word, then the yield flag, then the index of
 * the dependence counter ("write barrier") it sets at bits 110-112, 7 for none. nvdisasm -hex writes the word
 * as two comments, the low half after the instruction and the high half alone on the next line. */
enum { STALL_COUNT_SHIFT = 105 - 64, STALL_COUNT_MASK = 15, WRITE_COUNTER_SHIFT = 110 - 64, NO_COUNTER = 7 };

static bool control_of(const char *p, sass_insn *code) /* p: the line after its indentation */
{
    unsigned long long high;
    char end[4];
    if (sscanf(p, "/* 0x%16llx %3s", &high, end) != 2 || strcmp(end, "*/") != 0)
        return false;
    code->stall = (uint8_t)(high >> STALL_COUNT_SHIFT & STALL_COUNT_MASK);
    code->counter = (high >> WRITE_COUNTER_SHIFT & 7) != NO_COUNTER;
    return true;
}

/* The opcode of the machine instruction `p` (the listing after its address: `@!P0 LDS.128 R4, [R2]`), past its
 * predicate if it has one; its name's length (LDS) in *name. */
static const char *opcode_of(const char *p, size_t *name)
{
    if (*p == '@')
        p += strcspn(p, " \t"), p += strspn(p, " \t");
    *name = strcspn(p, ". \t;");
    return p;
}

/* Whether the instruction after its address is an IMAD, IMUL or IDP. */
static bool is_imad(const char *p)
{
    size_t name;
    p = opcode_of(p, &name);
    return (name == 4 && (strncmp(p, "IMAD", 4) == 0 || strncmp(p, "IMUL", 4) == 0)) ||
           (name == 3 && strncmp(p, "IDP", 3) == 0);
}

/* Whether the instruction after its address takes the warp elsewhere: a branch, jump, call, return or exit. */
static bool is_control(const char *p)
{
    static const char *const opcodes[] = {"BRA", "BRX", "JMP", "JMX", "CALL", "RET", "EXIT"};
    size_t name;
    p = opcode_of(p, &name);
    for (size_t i = 0; i < sizeof opcodes / sizeof *opcodes; i++)
        if (strlen(opcodes[i]) == name && strncmp(p, opcodes[i], name) == 0)
            return true;
    return false;
}

/* The bytes per thread a load or store of shared, global or local memory moves, from its opcode and its size
 * suffix (LDG.E.128: 16, LDS.64: 8, LDS.U8: 1, none: 4); 0 for any other instruction. `p` is the instruction
 * after its address. */
static uint8_t access_bytes(const char *p)
{
    static const char *const opcodes[] = {"LDS", "STS", "LDG", "STG", "LDL", "STL", "LD", "ST"};
    static const struct { const char *suffix; uint8_t bytes; } sizes[] = {
        {"128", 16}, {"64", 8}, {"U8", 1}, {"S8", 1}, {"U16", 2}, {"S16", 2}};
    size_t name;
    p = opcode_of(p, &name);
    const size_t end = strcspn(p, " \t;");
    bool memory = false;
    for (size_t i = 0; i < sizeof opcodes / sizeof *opcodes; i++)
        memory |= strlen(opcodes[i]) == name && strncmp(p, opcodes[i], name) == 0;
    if (!memory)
        return 0;
    uint8_t bytes = 4;
    for (size_t at = name; at < end; at += 1 + strcspn(p + at + 1, ". \t;")) {
        const size_t len = strcspn(p + at + 1, ". \t;");
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
            if (strlen(sizes[i].suffix) == len && strncmp(p + at + 1, sizes[i].suffix, len) == 0)
                bytes = sizes[i].bytes;
    }
    return bytes;
}

typedef struct {
    char name[32];
    int at; /* the index of the instruction it labels */
} sass_label;

/* The instruction a label names, or -1. */
static int label_at(const sass_label *labels, int n, const char *name, size_t len)
{
    for (int i = 0; i < n; i++)
        if (strlen(labels[i].name) == len && strncmp(labels[i].name, name, len) == 0)
            return labels[i].at;
    return -1;
}

/* Reads nvdisasm -gp's listing of the .text sections: `//## File ".nv_debug_ptx_txt", line N` starts the
 * instructions ptxas made of line N. The padding after a function's end is no one's: its NOPs, and the
 * branch to itself that follows the last EXIT (`.L_x_9: BRA `(.L_x_9)`), which no thread reaches.
 * Returns the instructions (free()d by the caller) and their number in *n, or NULL. */
static sass_insn *read_sass(FILE *f, int *n)
{
    char text[1024];
    int current = 0, cap = 0, n_labels = 0, cap_labels = 0;
    bool in_code = false, ok = true, high_half_next = false;
    sass_insn *code = NULL;
    sass_label *labels = NULL;
    struct { int from; char name[32]; } *branches = NULL;
    int n_branches = 0, cap_branches = 0;
    *n = 0;
    while (ok && fgets(text, sizeof text, f)) {
        const char *p = text + strspn(text, " \t");
        /* a section starts: code, or data that is no line's (`.sectioninfo`, which nvdisasm writes for
         * sm_8x, only describes the section) */
        if (strncmp(p, ".section", 8) == 0 && (p[8] == ' ' || p[8] == '\t')) {
            in_code = strstr(p, ".text.") != NULL;
            current = 0;
            continue;
        }
        const char *at = strstr(text, "nv_debug_ptx_txt\", line ");
        if (at) {
            current = atoi(at + strlen("nv_debug_ptx_txt\", line "));
            continue;
        }
        if (!in_code)
            continue;
        const size_t name = strcspn(p, ": \t\n");
        if (p[0] == '.' && p[name] == ':' && name < sizeof labels->name) { /* a label: `.L_x_9:` */
            if (n_labels == cap_labels) {
                cap_labels = cap_labels ? 2 * cap_labels : 64;
                sass_label *grown = realloc(labels, (size_t)cap_labels * sizeof *labels);
                ok = grown != NULL;
                labels = grown ? grown : labels;
            }
            if (ok)
                snprintf(labels[n_labels].name, sizeof labels->name, "%.*s", (int)name, p), labels[n_labels++].at = *n;
            continue;
        }
        if (high_half_next && control_of(p, &code[*n - 1])) {
            high_half_next = false;
            continue;
        }
        high_half_next = false;
        if (p[0] != '/' || p[1] != '*' || !strstr(p, "*/"))
            continue;
        p = strstr(p, "*/") + 2;
        p += strspn(p, " \t");
        if (!*p || *p == '\n' || strncmp(p, "NOP", 3) == 0)
            continue;
        const char *bra = strstr(p, "BRA `(");
        const size_t target_len = bra ? strcspn(bra + 6, ")") : 0;
        if (bra && n_labels > 0 && labels[n_labels - 1].at == *n &&
            label_at(labels + n_labels - 1, 1, bra + 6, target_len) == *n)
            continue; /* the padding's branch to itself */
        if (*n == cap) {
            cap = cap ? 2 * cap : 1024;
            sass_insn *grown = realloc(code, (size_t)cap * sizeof *code);
            ok = grown != NULL;
            code = grown ? grown : code;
        }
        if (ok && bra && target_len < sizeof labels->name) {
            if (n_branches == cap_branches) {
                cap_branches = cap_branches ? 2 * cap_branches : 64;
                void *grown = realloc(branches, (size_t)cap_branches * sizeof *branches);
                ok = grown != NULL;
                branches = grown ? grown : branches;
            }
            if (ok) {
                branches[n_branches].from = *n;
                snprintf(branches[n_branches++].name, sizeof branches->name, "%.*s", (int)target_len, bra + 6);
            }
        }
        if (ok)
            code[(*n)++] = (sass_insn){.line = current, .target = -1, .bytes = access_bytes(p), .stall = 1,
                                       .imad = is_imad(p), .control = is_control(p)};
        high_half_next = ok;
    }
    for (int i = 0; ok && i < n_branches; i++)
        code[branches[i].from].target = label_at(labels, n_labels, branches[i].name, strlen(branches[i].name));
    free(labels);
    free(branches);
    if (!ok || *n == 0) {
        free(code);
        return NULL;
    }
    return code;
}

/* What ptxas made of one PTX line: the machine instructions in the line's innermost loop (ASSUME_SASS_PER_LINE),
 * and of those the IMADs (ASSUME_IMAD_PIPE), the sum of their stall counts and how many set a dependence
 * counter (ASSUME_STALL_COUNTS), the bytes a thread of the widest that loads or stores moves
 * (ASSUME_SASS_ACCESS_WIDTH) and where the first stands in the machine code (ASSUME_SASS_ORDER). */
typedef struct {
    uint32_t count, imads, stalls, counters, first, controls;
    uint8_t widest;
} sass_line;

/* Fills lines[0 .. n_lines) (line 1 first), counting only a line's machine instructions in its innermost loop:
 * a branch back to an earlier instruction closes a loop from there to itself, and what ptxas moved out of the
 * loop a line is in (an invariant part of an address) runs once per loop, not once per time the line runs. */
static bool count_sass_lines(FILE *f, sass_line *lines, int n_lines)
{
    int n;
    sass_insn *code = read_sass(f, &n);
    int *depth = code ? calloc((size_t)n + 1, sizeof *depth) : NULL;
    int *deepest = depth ? malloc(((size_t)n_lines + 1) * sizeof *deepest) : NULL;
    if (!deepest) {
        free(code);
        free(depth);
        return false;
    }
    for (int i = 0; i < n; i++)
        if (code[i].target >= 0 && code[i].target <= i)
            depth[code[i].target]++, depth[i + 1]--;
    for (int i = 1; i < n; i++)
        depth[i] += depth[i - 1];
    for (int l = 0; l <= n_lines; l++)
        deepest[l] = -1;
    for (int i = 0; i < n; i++)
        if (code[i].line > 0 && code[i].line <= n_lines && depth[i] > deepest[code[i].line])
            deepest[code[i].line] = depth[i];
    for (int i = 0; i < n; i++)
        if (code[i].line > 0 && code[i].line <= n_lines && depth[i] == deepest[code[i].line]) {
            sass_line *l = &lines[code[i].line - 1];
            if (!l->count++)
                l->first = (uint32_t)i;
            l->imads += code[i].imad;
            l->stalls += code[i].stall;
            l->counters += code[i].counter;
            l->controls += code[i].control;
            if (code[i].bytes > l->widest)
                l->widest = code[i].bytes;
        }
    free(code);
    free(depth);
    free(deepest);
    return true;
}

/* An fp32 add, sub, mul or fma, a load or a store: one machine instruction for each copy ptxas keeps of it
 * (FADD, FMUL, FFMA, LDG, LDS, STG, ...), or none where ptxas fused it into another. Not a load of a kernel
 * parameter or a constant: ptxas makes those operands of the instructions that use them (c[0x0][...]), or
 * loads them once for many uses. */
static bool one_per_copy(const insn *in)
{
    if (in->space == SPACE_PARAM || in->space == SPACE_CONST)
        return false;
    return in->op == OP_LD || in->op == OP_ST ||
           (in->type == T_F32 && (in->op == OP_ADD || in->op == OP_SUB || in->op == OP_MUL || in->op == OP_FMA));
}

/* The machine instructions ptxas made of instruction j's PTX line, in the line's innermost loop. */
static const sass_line *line_of(const ptx_kernel *k, int j, const sass_line *lines, int n_lines)
{
    const int at = k->code[j].ptx_line;
    return at > 0 && at <= n_lines ? &lines[at - 1] : NULL;
}

static uint32_t machine_of_line(const ptx_kernel *k, int j, const sass_line *lines, int n_lines)
{
    const sass_line *l = line_of(k, j, lines, n_lines);
    return l ? l->count : 0;
}

/* Each instruction's machine instructions, per time it runs (ASSUME_SASS_PER_LINE): its line's count over
 * the copies ptxas made of its basic block (a loop unrolled, a tail duplicated). The copies: where two or
 * more, and most, of the block's fp32 arithmetic, load and store lines have one count, that count (each copy
 * holds one instruction of such a line: 8 on most of them is a loop ptxas unrolled 8 times, even where it
 * computed an address once for all 8 copies); else the fewest instructions of any of the block's lines
 * (every copy holds each line ptxas kept), or one for a block of one line. A block starts at a branch target
 * and after a branch. */
static void set_machine_instructions(ptx_kernel *k, const sass_line *lines, int n_lines)
{
    bool *starts = block_starts(k);
    if (!starts)
        return;
    for (int first = 0, end; first < k->n_code; first = end) {
        for (end = first + 1; end < k->n_code && !starts[end]; end++) {
        }
        int kept_lines = 0, last = 0, best_times = 0;
        uint32_t fewest = UINT32_MAX, most_often = 0;
        for (int j = first; j < end; j++) {
            const uint32_t count = machine_of_line(k, j, lines, n_lines);
            if (count) {
                kept_lines += k->code[j].ptx_line != last;
                last = k->code[j].ptx_line;
                fewest = count < fewest ? count : fewest;
            }
        }
        int kept_once_per_copy = 0; /* the block's one-per-copy lines ptxas kept */
        for (int j = first; j < end; j++) { /* the count its one-per-copy lines have most often */
            const uint32_t count = machine_of_line(k, j, lines, n_lines);
            if (!one_per_copy(&k->code[j]) || !count)
                continue;
            kept_once_per_copy++;
            int times = 0;
            for (int i = first; i < end; i++)
                times += one_per_copy(&k->code[i]) && machine_of_line(k, i, lines, n_lines) == count;
            if (times > best_times || (times == best_times && count < most_often))
                best_times = times, most_often = count;
        }
        /* that count on two or more lines, most of those: one fma ptxas put on two paths, or a lone store ptxas
         * made two instructions of, is no unrolled loop, while the integer lines of an unrolled loop (its counter,
         * the addresses strength reduction left) may have any count */
        const bool unrolled = best_times >= 2 && 2 * best_times > kept_once_per_copy;
        const uint32_t copies = kept_lines <= 1 ? 1 : unrolled ? most_often : fewest;
        for (int j = first; j < end; j++) {
            const sass_line *l = line_of(k, j, lines, n_lines);
            uint32_t machine = l ? l->count : copies, stalls = l ? l->stalls : copies;
            if (k->code[j].op == OP_RET || k->code[j].op == OP_EXIT)
                machine = stalls = copies; /* a thread ends once: of the EXITs ptxas puts on each way out, one runs */
            k->code[j].sass = (uint16_t)(machine > UINT16_MAX ? UINT16_MAX : machine);
            k->code[j].sass_stalls = (uint16_t)(stalls > UINT16_MAX ? UINT16_MAX : stalls);
            k->code[j].copies = (uint8_t)(copies > 255 ? 255 : copies); /* (no block has near so many) */
            k->code[j].sass_bytes = l ? l->widest : 0;
            k->code[j].sass_on_fma = l && 2 * l->imads > l->count;
            k->code[j].sass_fixed = l && l->count && !l->counters;
            k->code[j].sass_order = l && l->count ? l->first : 0; /* none: as early as its dependencies allow */
            k->code[j].if_converted = k->code[j].op == OP_BRA && k->code[j].guard >= 0 && k->code[j].target > j + 1 &&
                                      !(l && l->controls);
        }
    }
    k->has_sass = true;
    free(starts);
}

/* Writes the PTX text for ptxas: its .target the modeled GPU's (ASSUME_SAME_TEXT), and its .loc and .file
 * lines blank, so that ptxas -lineinfo attributes each machine instruction to a line of this PTX text, not of
 * the CUDA source (the line numbers stay the text's). */
static bool directive(const char *word, const char *name)
{
    const size_t n = strlen(name);
    return strncmp(word, name, n) == 0 && (word[n] == ' ' || word[n] == '\t');
}

static bool write_ptx_for(FILE *f, const char *text, const char *arch, int *n_lines)
{
    bool ok = true;
    *n_lines = 0;
    for (const char *line = text; *line && ok; (*n_lines)++) {
        const size_t len = strcspn(line, "\n");
        const char *word = line + strspn(line, " \t");
        if (directive(word, ".target"))
            ok = fprintf(f, ".target %s", arch) > 0;
        else if (!directive(word, ".loc") && !directive(word, ".file"))
            ok = fwrite(line, 1, len, f) == len;
        ok = ok && fputc('\n', f) != EOF;
        line += len + (line[len] == '\n');
    }
    return ok;
}

bool model_compile(const char *ptx_text, ptx_module *module, const char *arch, char *err, size_t err_len)
{
    char dir[] = "/tmp/emu-ptxas-XXXXXX";
    if (!mkdtemp(dir)) {
        snprintf(err, err_len, "the timing model: no temporary folder for ptxas");
        return false;
    }
    char ptx[sizeof dir + 16], cubin[sizeof dir + 16], log[sizeof dir + 16], sass[sizeof dir + 16], command[1024];
    snprintf(ptx, sizeof ptx, "%s/in.ptx", dir);
    snprintf(cubin, sizeof cubin, "%s/out.cubin", dir);
    snprintf(log, sizeof log, "%s/log", dir);
    snprintf(sass, sizeof sass, "%s/sass", dir);
    FILE *f = fopen(ptx, "w");
    int n_lines = 0;
    bool ok = f != NULL && write_ptx_for(f, ptx_text, arch, &n_lines);
    if (f)
        ok = fclose(f) == 0 && ok;
    const char *cuda = getenv("CUDA_HOME");
    char ptxas[300];
    snprintf(ptxas, sizeof ptxas, "%s/bin/ptxas", cuda && *cuda ? cuda : "/usr/local/cuda");
    if (access(ptxas, X_OK) != 0)
        snprintf(ptxas, sizeof ptxas, "ptxas");
    snprintf(command, sizeof command, "'%s' -v -lineinfo -arch=%s -o '%s' '%s' >'%s' 2>&1", ptxas, arch, cubin, ptx,
             log);
    int rc = ok ? system(command) : -1;
    for (int i = 0; i < module->n_kernels; i++)
        module->kernels[i].ptxas_registers = -1, module->kernels[i].has_sass = false;
    char line[1024], current[512] = "", refusal[300] = "";
    f = fopen(log, "r");
    while (f && fgets(line, sizeof line, f)) {
        if (!*refusal && strstr(line, "error"))
            snprintf(refusal, sizeof refusal, "%.*s", (int)strcspn(line, "\r\n"), line);
        const char *entry = strstr(line, "Compiling entry function '");
        if (entry) {
            entry += strlen("Compiling entry function '");
            size_t n = strcspn(entry, "'");
            snprintf(current, sizeof current, "%.*s", (int)(n < sizeof current ? n : sizeof current - 1), entry);
        }
        const char *used = strstr(line, "Used ");
        if (used && strstr(used, "registers") && *current)
            for (int i = 0; i < module->n_kernels; i++)
                if (strcmp(module->kernels[i].name, current) == 0)
                    module->kernels[i].ptxas_registers = atoi(used + 5);
    }
    if (f)
        fclose(f);
    bool result = true;
    if (rc != 0 && *refusal) {
        snprintf(err, err_len, "ptxas -arch=%s refuses the kernels' PTX (%s)", arch, refusal);
        result = false;
    } else if (rc != 0) {
        snprintf(err, err_len, "the timing model runs ptxas -v -arch=%s for the registers per thread: it failed "
                 "(exit %d; is the CUDA toolkit at $CUDA_HOME or /usr/local/cuda?)", arch, rc);
        result = false;
    }
    for (int i = 0; result && i < module->n_kernels; i++)
        if (module->kernels[i].ptxas_registers < 0) {
            snprintf(err, err_len, "the timing model: ptxas -v -arch=%s gave no register count for kernel %s", arch,
                     module->kernels[i].name);
            result = false;
        }
    /* the machine instructions per PTX line (ASSUME_SASS_PER_LINE), where nvdisasm is at hand */
    const char *nvdisasm = nvdisasm_path();
    sass_line *lines = result && nvdisasm ? calloc((size_t)n_lines + 1, sizeof *lines) : NULL;
    if (lines) {
        snprintf(command, sizeof command, "'%s' -gp -hex -c '%s' >'%s' 2>>'%s'", nvdisasm, cubin, sass, log);
        f = system(command) == 0 ? fopen(sass, "r") : NULL;
        if (f && count_sass_lines(f, lines, n_lines))
            for (int i = 0; i < module->n_kernels; i++)
                set_machine_instructions(&module->kernels[i], lines, n_lines);
        if (f)
            fclose(f);
    }
    static bool said; /* (EMU_NVDISASM set empty asks for the PTX alone: nothing to say) */
    if (result && module->n_kernels > 0 && !module->kernels[0].has_sass && !said && !getenv("EMU_NVDISASM"))
        fprintf(stderr, "emu: the timing model reads no machine code (%s): it models each PTX instruction as one "
                "machine instruction\n", nvdisasm ? "nvdisasm failed on ptxas's output" : "no nvdisasm found; "
                "EMU_NVDISASM may name one");
    said = said || (result && module->n_kernels > 0 && !module->kernels[0].has_sass);
    free(lines);
    remove(ptx), remove(cubin), remove(log), remove(sass), rmdir(dir);
    return result;
}
