/* interp.h: the interpreter's state, shared by its files: exec.c (the scheduler, memory and control flow),
 * alu.c, tensor.c and sync.c (the instructions every GPU since Ampere has), hopper.c (mbarrier, TMA,
 * wgmma, setmaxnreg), device_calls.c (printf, assert), functions.c (calls of a module's .func), block.c
 * and launch.c (blocks and grids). Not an interface: the emulator's users see emu.h. */
#ifndef EMU_INTERP_H
#define EMU_INTERP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "emu.h"

#define LANES 32
#define FULL_MASK 0xffffffffu
#define NO_BARRIER -1
#define RACE_COPY_AGENTS 32 /* racecheck: mbarriers per block whose bulk copies get a clock of their own */

/* A hot loop's vector copies: the compiler makes one for x86-64-v4 (AVX-512), one for x86-64-v3 (AVX2, FMA)
 * and one for any x86-64 CPU, and the loader picks the best this CPU runs (GCC's target_clones); elsewhere
 * one copy. The tensor cores' sums (rows of binary64) ran slower with AVX-512 than with AVX2 (05h: 291 against
 * 301 million thread-instructions per second, on an AMD EPYC), so they have no x86-64-v4 copy (SUM_COPIES). FUSED_PRODUCTS lets the compiler fuse a
 * multiply into an add (where the product is exact, which changes nothing). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define VECTOR_COPIES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define SUM_COPIES __attribute__((target_clones("arch=x86-64-v3", "default")))
#define FUSED_PRODUCTS __attribute__((optimize("fp-contract=fast")))
#else
#define VECTOR_COPIES
#define SUM_COPIES
#define FUSED_PRODUCTS
#endif

/* Iterates over the set bits of a lane mask. */
#define FOR_LANES(mask, l) \
    for (uint32_t lanes_left_ = (mask), l; lanes_left_ && ((l = (uint32_t)__builtin_ctz(lanes_left_)), 1); \
         lanes_left_ &= lanes_left_ - 1)

/* Each lane's bit: loops over all 32 lanes that test a mask with it are ones the compiler makes vector
 * instructions of, where a bit scan per lane is not (and costs more once a warp has diverged by a few).
 * Such a loop may compute on the registers of lanes outside the mask, as long as it writes only the mask's:
 * integer and float arithmetic have no traps, and the emulator reads no floating-point exception flags. */
static const uint32_t lane_bit[LANES] = {
    1u << 0,  1u << 1,  1u << 2,  1u << 3,  1u << 4,  1u << 5,  1u << 6,  1u << 7,  1u << 8,  1u << 9,  1u << 10,
    1u << 11, 1u << 12, 1u << 13, 1u << 14, 1u << 15, 1u << 16, 1u << 17, 1u << 18, 1u << 19, 1u << 20, 1u << 21,
    1u << 22, 1u << 23, 1u << 24, 1u << 25, 1u << 26, 1u << 27, 1u << 28, 1u << 29, 1u << 30, 1u << 31};

/* How many lanes a mask holds, in a few instructions: the portable build (x86-64 without popcnt) makes
 * __builtin_popcount a library call, and run_warp counts every instruction's lanes. */
static inline uint32_t lane_count(uint32_t mask)
{
    mask -= (mask >> 1) & 0x55555555u;
    mask = (mask & 0x33333333u) + ((mask >> 2) & 0x33333333u);
    return (((mask + (mask >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24;
}

/* ---------------------------------------------------------------------------------------------- */
/* State                                                                                          */

typedef struct {
    uint32_t lane, group;      /* the thread that issued it, and its group number */
    uint32_t dst;              /* shared-memory offset */
    uint64_t src;              /* global address (host pointer) */
    uint8_t size, src_bytes;   /* bytes written; bytes read (the rest is zero fill) */
    int32_t issued_at;         /* the cp.async instruction, an index into the kernel's code (racecheck) */
} async_copy;

/* A wgmma.mma_async issued and not yet waited for: it runs at the wgmma.wait_group that covers it. */
typedef struct {
    const insn *in;
    uint64_t a_desc, b_desc;   /* shared-memory matrix descriptors (a_desc unused when A is in registers) */
    uint32_t a_regs[4][LANES]; /* A's fragment, when it comes from registers (copied at issue) */
    bool accumulate;           /* scale-d: D = A*B + D, else D = A*B */
    uint32_t group;
} wgmma_op;

/* A cp.async.bulk.tensor in flight: it lands, and completes its bytes on the mbarrier, when a thread
 * first waits on that mbarrier. */
typedef struct {
    emu_tensor_map map;        /* the tensor form's map; unused by a plain bulk copy */
    int32_t coords[5];
    uint32_t dst, mbar;
    uint64_t src;              /* a plain cp.async.bulk: the global source and the byte count */
    uint32_t bytes;
    int32_t issued_at;         /* racecheck: the instruction, an index into the kernel's code */
} tma_copy;

/* A cp.async.bulk from shared to global memory, in its thread's bulk async-group. */
typedef struct {
    uint32_t lane, group, src, bytes;
    uint64_t dst;
} bulk_store;

#define CARRY_UNSET 2

/* A call a thread is in (functions.c): where its ret goes back to, the callee, and the thread's stack as it
 * was before the call. */
typedef struct {
    int32_t return_pc;         /* the instruction after the call */
    int32_t func;              /* the callee: an index into the module's functions and the kernel's frames */
    uint32_t sp;               /* the stack pointer before the call (a local-memory offset) */
    uint32_t saved;            /* where its caller's values of the callee's slots start in `saved` */
} call_frame;

/* One thread's calls, innermost last. */
typedef struct {
    call_frame *frames;
    int depth, cap;
    uint64_t *saved;           /* the slots each call saved, one frame after another */
    uint32_t n_saved, cap_saved;
    uint32_t sp;               /* the next free byte of the stack */
} call_stack;

typedef struct {
    uint64_t (*r)[LANES];      /* registers: r[slot][lane] */
    int32_t pc[LANES];
    int32_t wpc;               /* the pc of every live lane while `converged` */
    bool converged;            /* every ready lane at one pc: the fast path (one pc for the warp) */
    bool take_turns;           /* diverged lanes run group by group in pc order, not lowest pc first */
    int32_t last_pc;           /* the instruction it ran last */
    uint32_t together[LANES];  /* the lanes each lane is converged with: split by a divergent branch, joined
                                  again only where the program synchronises them (see sync.c: reconverge) */
    uint32_t live;             /* lanes that exist and have not exited */
    uint32_t skipped;          /* lanes that do not run the next instruction: the timing model runs a block that
                                  ptxas predicated (if-converted) as predicated instructions, the lanes its
                                  branch would take past it off (model.c, ASSUME_SASS_ORDER); else 0 */
    uint32_t waiting;          /* lanes stopped at a barrier, or at a bar.warp.sync (at_warp_sync) */
    uint32_t at_warp_sync;     /* lanes waiting at a bar.warp.sync for members still to come */
    uint32_t warp_sync_mask[LANES]; /* the member mask each of them gave */
    int bar_id;                /* the barrier they wait at */
    unsigned index;            /* warp number in the block */
    async_copy *copies;        /* cp.async in flight */
    int n_copies, cap_copies;
    uint32_t committed[LANES]; /* cp.async groups committed per lane */
    uint8_t carry[LANES];      /* each thread's CC.CF: 0, 1, or CARRY_UNSET before any .cc instruction */
    uint8_t *local;            /* .local memory, local_bytes per lane */
    uint8_t *local_written;    /* initcheck: a byte per byte of it, set once the thread wrote it */
    /* Hopper */
    int64_t mbar_wait;         /* the mbarrier (shared offset) its waiting lanes wait on, -1 if none */
    int reg_wait;              /* the count a setmaxnreg.inc waits to reach, 0 if none */
    int regs;                  /* registers per thread (setmaxnreg changes it) */
    wgmma_op *wgmma;           /* issued wgmma.mma_async not yet waited for */
    int n_wgmma, cap_wgmma;
    uint32_t wgmma_committed;  /* wgmma groups committed */
    uint32_t wgmma_issued;     /* wgmma.mma_async issued since the block began (the warpgroup's log, below) */
    bool wgmma_fenced;         /* a wgmma.fence since the last wgmma.wait_group (or the start) */
    uint8_t *wgmma_busy;       /* per register slot: the in-flight wgmma that will write or read it */
    bulk_store *stores;        /* cp.async.bulk shared -> global, not yet waited for */
    int n_stores, cap_stores;
    uint32_t bulk_committed[LANES];
    /* racecheck: fences with strong accesses (racecheck.c, race_fence): whether the warp has fenced since the
     * block began, and the words its strong loads read since its last fence */
    bool fenced;
    uint64_t *strong_reads;
    int n_strong_reads, cap_strong_reads;
    /* device functions (functions.c): each thread's calls, NULL when the module has no .func */
    call_stack *calls;
    uint32_t in_call;          /* the lanes inside a call */
} warp;

typedef struct {
    int arrived_warps;
    uint32_t arrived_threads;
    uint32_t expected;         /* threads, when the instruction gave a count; 0: every live warp */
    uint32_t red_value;        /* bar.red: the running reduction */
    int red_mode;
    int32_t red_slot;          /* bar.red: where each waiting thread receives it */
    uint32_t released[32 + RACE_COPY_AGENTS]; /* racecheck: the arrived warps' clocks, joined */
} barrier;

typedef struct shadow_cell shadow_cell; /* racecheck.h */
struct race_mbar;
struct global_shadow;                  /* racecheck_global.c */
typedef struct launch_race launch_race;

typedef struct {
    const emu_launch_desc *launch;
    const ptx_kernel *k;
    emu_dim3 ctaid;
    unsigned n_threads, n_warps;
    uint8_t *smem;
    uint8_t *smem_written;     /* initcheck: a byte per byte of shared memory, set once a thread wrote it */
    uint64_t smem_size;
    warp *warps;
    barrier bars[16];
    tma_copy *tma;             /* bulk tensor copies in flight */
    /* each warpgroup's wgmma.mma_async in the order its first warp to reach them issued them: the
     * instruction and its descriptors, which the warpgroup's other warps must repeat (hopper.c) */
    struct wgmma_log {
        const insn **in;
        uint64_t *a_desc, *b_desc;
        uint32_t n, cap;
    } *wgmma_logs;
    int n_tma, cap_tma;
    int64_t register_pool;     /* setmaxnreg: registers released and not yet taken again */
    uint64_t fruitless_polls;  /* mbarrier.test_wait that found nothing new, since the last phase completed */
    uint64_t since_progress;   /* warp instructions since a store, a barrier arrival or an exit (livelock) */
    int32_t clock_slots[3];    /* the slots of %clock, %clock64 and %globaltimer this kernel reads */
    int n_clock_slots;
    uint64_t rng;
    emu_counters c;            /* what this host thread's blocks did (merged into the launch's at the end) */
    bool initcheck;            /* whether reads of unwritten memory are errors (EMU_INITCHECK) */
    bool counting;             /* whether memory requests are counted (the launch asked for counters) */
    /* racecheck (racecheck.c): a shadow of shared memory (a cell per word, and per byte of a split word),
     * a vector clock per warp (n_warps x n_warps), what each lane has seen of its warp's other lanes
     * (n_warps x 32 x 32), each thread's last fence.proxy.async and fence.mbarrier_init, the mbarriers'
     * clocks */
    bool racecheck;
    bool race_checked_elsewhere; /* an access whose caller does its race check (a copy landing, wgmma, a warp's
                                    plain ld/st.shared: race_warp_access) */
    shadow_cell *shadow_words, *shadow_bytes;
    uint32_t *vc;
    uint32_t *lane_seen;
    uint32_t *fence_clock;
    uint32_t *init_fence_clock; /* each thread's last fence.mbarrier_init */
    struct race_mbar *race_mbars;
    int n_race_mbars, cap_race_mbars;
    /* racecheck in global memory (racecheck_global.c): the bytes this block touched, and the launch's, which
     * its blocks are checked against when each ends; NULL for blocks the grid's workers do not run */
    struct global_shadow *global_shadow;
    launch_race *launch_race;
    /* the timing model running this block (model.c), or NULL: the cycle %clock reads, and what it is told
     * of each memory access */
    struct sm_model *model;
    const uint64_t *clock;
    void (*on_access)(struct sm_model *m, int space, bool load, const uint64_t *address, uint32_t lanes,
                      uint64_t size);
    emu_status status;
    char *err;
    size_t err_len;
} block;

/* What an instruction did to the lanes' program counters: NEXT (advance them), BRANCH, WAIT (stay,
 * the warp stops), EXIT, MOVED (a barrier released them and advanced them itself), YIELD (advance, and
 * let the other warps run: a poll that found nothing), FAULT. */
typedef enum { STEP_NEXT, STEP_BRANCH, STEP_WAIT, STEP_EXIT, STEP_MOVED, STEP_YIELD, STEP_FAULT } step;

/* An instruction's handler (instructions.def names one for each): it runs instruction `in` for the lanes of
 * `active` (the warp's lanes at it) whose guard predicate holds (`m`), with the warp's registers r and the
 * instruction's operand slots o, and says what the lanes' program counters do next. Not every handler needs
 * every argument: they share one signature so that one table can name them. */
typedef step insn_handler(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                          uint32_t m);

/* In a handler: operand i's registers (all lanes), and source operand i's */
#define D(i) (r[o[(i)]])
#define S(i) (r[o[in->n_dst + (i)]])

/* How an access uses memory: it reads (initcheck: the bytes must have been written), it writes (they
 * count as written from now on), it is an atomic read-modify-write (a write, but synchronization, not a
 * race), or it is only checked for bounds and alignment now and lands later (cp.async, bulk copies:
 * their landing reads and writes). */
typedef enum { ACCESS_READ, ACCESS_WRITE, ACCESS_ATOMIC, ACCESS_PROBE } access_kind;

/* Blocks (block.c) and warps (exec.c) as the interpreter runs them, and the timing model (model.c) too. */
bool block_alloc(block *b, const emu_launch_desc *L, uint64_t smem_size, bool counting, char *err, size_t err_len);
void block_release(block *b);
void block_place(block *b, uint64_t id);    /* the grid's block with this linear index */
void block_start(block *b);                 /* from its first instruction, its state poisoned */
void run_block(block *b);                   /* until its warps exit, or a fault or deadlock stops it */
void run_warp(block *b, warp *w, uint64_t turn); /* `turn` instructions (0: the emulator's own turn) */
/* The lanes that run next when a diverged warp runs, and their pc; false when every lane waits. *behind
 * (unless NULL): the lowest pc of the other ready lanes, INT32_MIN when the order is not lowest pc first. */
bool warp_next_group(block *b, const warp *w, uint32_t *group, int32_t *pc, int32_t *behind);
void describe_deadlock(block *b);
/* A launch's configuration against the device's limits, and its shared memory per block (the one-line
 * error otherwise); then the launch run: every block, or a sampled launch's sample, or with skip_every
 * every block whose linear id is not a multiple of it (launch.c: the timing model runs those). */
emu_status exec_launch_check(const emu_launch_desc *L, uint64_t *smem_size, char *err, size_t err_len);
emu_status exec_launch(const emu_launch_desc *L, uint64_t skip_every, emu_counters *counters, char *err,
                       size_t err_len);

/* "PTX line N (file.cu:L)", the source line where the PTX has one: how every report names an instruction. */
void describe_line(const block *b, const insn *in, char *out, size_t len);

/* One line: kernel, PTX line (source line), block, thread, what. The first error of a block wins. */
void fault(block *b, const insn *in, int lane, const warp *w, emu_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

/* The host address of `size` bytes at `addr` in `space` for one thread, or NULL after a fault:
 * memcheck (bounds, alignment) and initcheck as compute-sanitizer defines them (access.c). */
uint8_t *mem_access(block *b, warp *w, const insn *in, uint32_t lane, int space, uint64_t addr, uint64_t size,
                    access_kind kind);
/* The same once bounds and alignment are known to hold: in the block's shared memory (addr: the offset in
 * it), and in device memory, in allocation a. Racecheck and initcheck (access.c). */
uint8_t *shared_access(block *b, warp *w, const insn *in, uint32_t lane, uint64_t addr, uint64_t size,
                       access_kind kind);
uint8_t *device_access(block *b, warp *w, const insn *in, uint32_t lane, const emu_alloc *a, uint64_t addr,
                       uint64_t size, access_kind kind);
/* Where a warp's access of `size` bytes per lane at address[lane] (lanes; address[] is read for all 32 lanes,
 * those outside `lanes` holding any value, so it must be set for all) goes when bounds and alignment hold
 * for every lane, checked once for the warp: WARP_SHARED (all in the block's shared memory; a generic
 * address less EMU_SHARED_WINDOW is the offset), WARP_DEVICE (all in one allocation, *alloc) or WARP_PARAM
 * (.param addresses, all in the kernel's parameters); else WARP_LANES: mem_access checks each lane, and says
 * what is wrong, if anything. */
typedef enum { WARP_LANES, WARP_SHARED, WARP_DEVICE, WARP_PARAM } warp_region;
warp_region warp_access_region(const block *b, int space, const uint64_t *address, uint32_t lanes, uint64_t size,
                               const emu_alloc **alloc);
/* The host addresses (into at[lane]) of a warp's plain access of `size` bytes per lane at address[lane]
 * (lanes), as mem_access gives them lane by lane: bounds and alignment checked once where
 * warp_access_region allows, a plain shared access race-checked for the whole warp at once
 * (race_warp_access), and where no lane needs a racecheck of its own, initcheck without a call per lane (a
 * coalesced device access as one run of bytes). False after a fault. ld, st and ldmatrix (access.c). */
bool warp_access(block *b, warp *w, const insn *in, int space, uint32_t lanes, const uint64_t *address, uint64_t size,
                 access_kind kind, uint8_t *at[LANES]);

/* The wavefronts a warp's shared-memory load or store of `size` bytes per thread takes (counters.c), and into
 * *ideal the fewest the same words could take: the counters' and the timing model's one rule. */
uint64_t shared_wavefronts(const uint64_t *address, uint32_t lanes, uint64_t size, bool load, uint64_t *ideal);

/* The distinct `unit`-byte pieces (sectors: 32 bytes for the counters, the GPU's sector for the model) that a
 * warp's accesses of `size` bytes per thread touch, numbered address / unit, in increasing order into
 * `pieces` (room for 2 * LANES: an access spans at most two): how many. */
int distinct_pieces(const uint64_t *address, uint32_t lanes, uint64_t size, uint64_t unit, uint64_t *pieces);

/* One warp-level load or store of `size` bytes per thread, counted (when the launch counts). */
void count_access(block *b, int space, bool load, const uint64_t *address, uint32_t lanes, uint64_t size);

/* racecheck (racecheck.c). Each check returns false after reporting a race. */
bool race_alloc(block *b); /* false: out of host memory (race_free frees what it got) */
void race_begin_block(block *b);
bool race_access(block *b, warp *w, const insn *in, uint32_t lane, uint64_t addr, uint64_t size, bool write,
                 bool strong);
/* a plain ld or st of shared memory by the lanes in `lanes`, each of `size` bytes at address[l] - base (its
 * shared offset): race_access for each, in lane order */
bool race_warp_access(block *b, warp *w, const insn *in, uint32_t lanes, const uint64_t *address, uint64_t base,
                      uint64_t size, bool write);
bool race_async_issue(block *b, warp *w, const insn *in, uint32_t lane, uint64_t addr, uint64_t size);
/* race_async_issue for the lanes in `lanes`, each of `size` bytes at the shared offset offset[l], in lane order:
 * the accessor worked out once for the warp */
bool race_warp_async_issue(block *b, warp *w, const insn *in, uint32_t lanes, const uint64_t *offset, uint64_t size);
/* a cp.async lands at its thread's wait: that thread's write, now */
void race_async_land(block *b, const warp *w, uint32_t lane, uint64_t addr, uint64_t size, int32_t issued_at);
/* an asynchronous read (wgmma's operands, a bulk copy to global memory) from its issue to its wait: of the
 * n spans of `size` bytes at the shared offsets spans[0..n) */
bool race_async_read_begin(block *b, warp *w, const insn *in, uint32_t lane, const uint64_t *spans, int n,
                           uint64_t size);
void race_async_read_end(block *b, const uint64_t *spans, int n, uint64_t size);
void race_lanes_meet(block *b, const warp *w, uint32_t lanes); /* bar.warp.sync; a barrier's waiters */
void race_release(block *b, const warp *w, uint32_t *into);    /* arrive: publish this warp's clock, tick */
void race_acquire(block *b, const warp *w, const uint32_t *from, uint32_t lanes); /* lanes: who acquire */
void race_proxy_fence(block *b, const warp *w, uint32_t lanes); /* fence.proxy.async */
void race_mbar_init_fence(block *b, const warp *w, uint32_t lanes); /* fence.mbarrier_init */
void race_mbar_init(block *b, const warp *w, uint32_t lane, const insn *in, uint32_t at);
/* a bulk copy issued to complete on the mbarrier at `at`: its init must be fenced for the async proxy */
bool race_mbar_async_use(block *b, warp *w, const insn *in, uint32_t lane, uint32_t at);
void race_mbar_arrive(block *b, const warp *w, uint32_t at);
/* A bulk copy's bytes land, written by its mbarrier's copy agent (false after reporting a limit) */
bool race_copy_landed(block *b, warp *w, const insn *in, uint32_t mbar, uint64_t addr, uint64_t size,
                      int32_t issued_at);
void race_mbar_phase_complete(block *b, uint32_t at);
void race_mbar_acquire(block *b, const warp *w, uint32_t at, uint32_t lanes);
/* st/atom .release on a word of memory, and ld/atom .acquire of it: the word's shared offset, or for global
 * memory RACE_GLOBAL_WORD | its address */
#define RACE_GLOBAL_WORD (1ull << 63)
void race_release_at(block *b, const warp *w, uint64_t at);
void race_acquire_at(block *b, const warp *w, uint64_t at, uint32_t lanes);
/* A strong access of the word at `at` (the same keys), after race_access: the release and acquire patterns
 * fences make with strong accesses (false: out of host memory, reported) */
bool race_strong_access(block *b, warp *w, const insn *in, uint32_t lane, uint64_t at, bool reads, bool writes);
void race_fence(block *b, warp *w, uint32_t lanes); /* membar, fence.sc, fence.acq_rel */
void race_free(block *b);

/* racecheck in global memory (racecheck_global.c). */
launch_race *launch_race_new(void);        /* NULL: out of host memory */
void launch_race_free(launch_race *lr);
bool race_global_attach(block *b, launch_race *lr); /* a grid worker's block: false, out of host memory */
void race_global_begin_block(block *b);
bool race_global_access(block *b, warp *w, const insn *in, uint32_t lane, const emu_alloc *a, uint64_t addr,
                        uint64_t size, bool write, bool strong);
/* whether the launch has written the allocation so far: a plain read of one it has not has nothing to check */
bool race_global_keeps(block *b, const emu_alloc *a);
void race_global_synchronized(block *b);   /* a fence, or a release or acquire in global memory */
void race_global_end_block(block *b);      /* the block's bytes against the other blocks' */
void race_global_free(block *b);
/* after the launch: false, with the one-line error, when two of its blocks raced */
bool launch_race_result(launch_race *lr, char *err, size_t err_len);

/* A call of the CUDA runtime's device-side vprintf or __assertfail (device_calls.c). */
step runtime_call(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t m);

/* Device functions (functions.c): a call of a .func of the module, and its ret, for the lanes of m; each
 * lane's next instruction into to[lane] (exec.c moves the lanes). False after reporting a fault. */
bool function_call(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t m,
                   int32_t *to);
bool function_ret(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], uint32_t m, int32_t *to);
/* Whether lane x stands before lane y in the program: their call sites, outermost first, then their pcs. */
bool call_stack_before(const warp *w, uint32_t x, uint32_t y);
void calls_reset(block *b, warp *w);  /* a block starts: no thread is in a call */
void calls_free(warp *w);

/* Hopper's instruction families (hopper.c). */
/* A block ended: every warp of each warpgroup issued the same wgmma.mma_async (false after reporting one
 * that did not); and the logs' memory. */
bool wgmma_block_done(block *b);
void wgmma_logs_free(block *b);
/* The instruction touches a register an in-flight wgmma.mma_async owns (false after reporting it). */
bool wgmma_registers_free(block *b, warp *w, const insn *in);
insn_handler exec_mbarrier, exec_mbar_wait, exec_tma_load, exec_bulk, exec_setmaxnreg, exec_wgmma;

/* The arithmetic, logic, comparison and conversion instructions (alu.c). */
insn_handler exec_mov, exec_arithmetic, exec_carry, exec_logic, exec_testp, exec_compare, exec_select, exec_cvt,
    exec_cvta, exec_isspacep;
/* The warp-level tensor-core instructions (tensor.c). */
insn_handler exec_mma, exec_ldmatrix, exec_wmma_load_store, exec_wmma_mma;

/* Barriers, warp collectives, fences and cp.async (sync.c), and what the scheduler needs of them: whether
 * an instruction reconverges the lanes that execute it; lanes that do so (reconverge) or that a branch
 * parts (diverge); a barrier completing once its last thread arrived or exited; the bar.warp.syncs an exited
 * thread no longer holds back; and, under EMU_INTERLEAVE, a copy in flight landing early (one_in: the
 * block's dice). */
insn_handler exec_cp_async, exec_cp_async_commit, exec_cp_async_wait, exec_barrier, exec_warp_sync,
    exec_warp_collectives, exec_elect, exec_membar;
/* Whether an instruction makes the lanes executing it wait for one another, and so joins them (the
 * barriers and the member-mask collectives; sync.c, "Convergence"). */
static inline bool synchronises_lanes(const insn *in)
{
    switch (in->op) {
    case OP_BAR: case OP_BAR_ARRIVE: case OP_BAR_RED: case OP_BAR_WARP:
    case OP_SHFL: case OP_VOTE: case OP_REDUX: case OP_MATCH: case OP_ELECT:
        return true;
    default:
        return false;
    }
}
void reconverge(warp *w, uint32_t lanes);
void diverge(warp *w, uint32_t active, uint32_t taken);
void try_complete(block *b, int id);
void release_warp_syncs(block *b, warp *w);
bool one_in(block *b, unsigned n);
void land_one_early(block *b, warp *w);

/* The counters' class of an instruction: its row's in instructions.def (instruction_classes, counters.c), or
 * by its type or state space. Each instruction keeps its own (counter_class, set when its kernel is loaded). */
enum { BY_TYPE = CLASS_COUNT, BY_SPACE };
extern const uint8_t instruction_classes[OP_COUNT];
static inline emu_class class_of(const insn *in)
{
    switch (instruction_classes[in->op]) {
    case BY_SPACE:
        return in->space == SPACE_SHARED ? CLASS_SHARED
               : in->space == SPACE_GLOBAL || in->space == SPACE_GENERIC ? CLASS_GLOBAL
                                                                        : CLASS_OTHER_MEMORY;
    case BY_TYPE:
        return in->type == T_F32 ? CLASS_FP32
               : in->type == T_F64 ? CLASS_FP64
               : (in->type >= T_F16 && in->type <= T_BF16X2) ? CLASS_FP16
                                                               : CLASS_INTEGER;
    default:
        return (emu_class)instruction_classes[in->op];
    }
}

/* Makes room for one more item in a queue of *count items (capacity *cap, doubled from `first`);
 * false, the queue as it was, when the host has no memory for it. */
static inline bool queue_room(void **items, int count, int *cap, size_t item_size, int first)
{
    if (count < *cap)
        return true;
    const int grown = *cap ? 2 * *cap : first;
    void *bigger = realloc(*items, (size_t)grown * item_size);
    if (!bigger)
        return false;
    *items = bigger, *cap = grown;
    return true;
}

/* Values: a width's mask, sign extension, a type's kind, .ftz ("flush subnormal inputs and results to
 * sign-preserving zero"). */
static inline uint64_t width_mask(int bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }

static inline int64_t sign_extend(uint64_t v, int bits)
{
    return bits >= 64 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits);
}

static inline bool is_float(int t) { return t >= T_F16 && t <= T_TF32; }
static inline bool is_signed(int t) { return t >= T_S8 && t <= T_S64; }

static inline float ftz32(float f) { return fpclassify(f) == FP_SUBNORMAL ? copysignf(0.0f, f) : f; }

/* A slot's bits as a float, and back. */
static inline float f32_of(uint64_t v)
{
    uint32_t u = (uint32_t)v;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline uint64_t bits_f32(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline double f64_of(uint64_t v)
{
    double d;
    memcpy(&d, &v, 8);
    return d;
}

static inline uint64_t bits_f64(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* `bytes` (1, 2, 4 or 8) little-endian bytes, like the GPU's: each width its own fixed-size copy, which the
 * compiler makes one load */
static inline uint64_t load_bits(const uint8_t *p, int bytes)
{
    uint8_t v1;
    uint16_t v2;
    uint32_t v4;
    uint64_t v8;
    switch (bytes) {
    case 1: memcpy(&v1, p, 1); return v1;
    case 2: memcpy(&v2, p, 2); return v2;
    case 4: memcpy(&v4, p, 4); return v4;
    default: memcpy(&v8, p, 8); return v8;
    }
}

/* initcheck's flags for shared memory (block.smem_written): not zero when one of the n (4, 8 or 16) flags
 * is not 1, the flags read as words, without a loop. */
static inline uint64_t flags_unwritten(const uint8_t *flags, uint64_t n)
{
    const uint64_t ones = 0x0101010101010101ull;
    uint64_t first = 0, second = ones;
    if (n == 4) {
        uint32_t word;
        memcpy(&word, flags, 4);
        first = word | (ones << 32);
    } else {
        memcpy(&first, flags, 8);
        if (n == 16)
            memcpy(&second, flags + 8, 8);
    }
    return (first ^ ones) | (second ^ ones);
}

/* The same for a run of n flags, n a multiple of 4: eight at a time. */
static inline uint64_t run_unwritten(const uint8_t *flags, uint64_t n)
{
    uint64_t unwritten = 0, i = 0;
    for (; i + 8 <= n; i += 8)
        unwritten |= flags_unwritten(flags + i, 8);
    if (i < n)
        unwritten |= flags_unwritten(flags + i, 4);
    return unwritten;
}

/* emu_f16_table(), set when a launch starts (defined in half.c) */
extern const float *emu_f16_values;

/* 16-bit float types as 32-bit floats: every f16/bf16 value is exact in binary32. */

static inline float half_in(uint64_t v, int type)
{
    return type == T_BF16 ? emu_bf16_to_f32((uint16_t)v) : emu_f16_values[(uint16_t)v];
}

/* The fragment layout of mma.sync's operands and of wgmma's accumulators ("Matrix Fragments for
 * mma.m16n8k16 with floating point type"; wgmma's "Register Fragments"): a fragment register read across
 * the warp is one 8x8 block of its matrix in lane order, lane 4g + t holding the block's row g, columns 2t
 * and 2t + 1. A .f16x2/.bf16x2 register holds both (the lower column in bits 15:0); f32 fragments take a
 * register each, the block a pair (even: column 2t, odd: 2t + 1). `block` is the block's first element,
 * its rows `stride` elements apart. */
static inline void f32_block_in(const uint64_t *even, const uint64_t *odd, float *block, int stride)
{
    for (int g = 0; g < 8; g++)
        for (int t = 0; t < 4; t++) {
            block[g * stride + 2 * t] = f32_of(even[4 * g + t]);
            block[g * stride + 2 * t + 1] = f32_of(odd[4 * g + t]);
        }
}

static inline void f32_block_out(const float *block, int stride, uint64_t *even, uint64_t *odd)
{
    for (int g = 0; g < 8; g++)
        for (int t = 0; t < 4; t++) {
            even[4 * g + t] = bits_f32(block[g * stride + 2 * t]);
            odd[4 * g + t] = bits_f32(block[g * stride + 2 * t + 1]);
        }
}

#endif
