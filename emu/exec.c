/* exec.c: running a kernel's decoded PTX on the CPU.
 *
 * The SIMT model, as this file implements it:
 *   - A grid is blocks; blocks are independent, so host threads take them one at a time (a block
 *     runs start to finish on one host thread).
 *   - A block is warps of 32 threads. Each thread has its own registers and its own program counter
 *     (PTX ISA, "Independent Thread Scheduling"), kept per lane. A warp executes one instruction for
 *     all lanes that stand at the same pc at once (a lane loop over a slot-major register file), so
 *     decoding costs once per warp, not per thread. When lanes diverge, the warp runs the group with
 *     the lowest pc first: in structured code the lanes that went ahead wait at the join point until
 *     the others catch up, and they run together again there (whether they count as converged is
 *     tracked apart: see "Convergence" below). Lanes inside calls of a .func are ordered by their call
 *     sites, outermost first, then by pc (functions.c, call_stack_before): a call reconverges as a branch.
 *   - Warps are scheduled cooperatively: a warp runs until it waits (a barrier) or exits, then the
 *     next. A barrier completes when every warp with live threads has arrived ("bar, barrier":
 *     exited threads do not hold it back). If no warp can run and some have not exited, nothing ever
 *     will: that is a deadlock, reported with where each warp waits, never a hang.
 *   - Warp-collective instructions (mma.sync, ldmatrix, wmma, shfl.sync, vote.sync, ...) execute once
 *     for the whole group, reading every participating lane's registers, as the hardware does.
 *   - cp.async copies are queued per thread and land in shared memory only at the cp.async.wait_group
 *     that covers them ("Async-group mechanism"): a kernel that forgets to wait reads the poison that
 *     fills shared memory at block start, not the data.
 * Every memory access is checked (allocation, shared-memory size, alignment) before it happens, and
 * every read for bytes nothing has written yet (initcheck, unless EMU_INITCHECK=0): access.c. The
 * instructions are the rows of instructions.def, each with its handler: the arithmetic, logic, comparison
 * and conversion ones are alu.c's, the warp's tensor-core ones (mma, ldmatrix, wmma) tensor.c's, barriers,
 * collectives, fences and cp.async sync.c's, Hopper's (mbarrier, TMA, wgmma, setmaxnreg) hopper.c's, memory
 * and control flow this file's, with the scheduler; a launch's blocks and grid, launch.c; what a launch
 * counts, counters.c; the state they share, interp.h; the options and the one-line report of every check,
 * checks.c.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu.h"
#include "interp.h"

/* ---------------------------------------------------------------------------------------------- */
/* Memory instructions and branches                                                               */

/* The space a warp's generic access goes to (its first thread's; a warp that mixes spaces is rare). */
static int resolved_space(int space, uint64_t address)
{
    if (space != SPACE_GENERIC)
        return space;
    return address - EMU_SHARED_WINDOW < EMU_WINDOW_SIZE ? SPACE_SHARED
           : address - EMU_LOCAL_WINDOW < EMU_WINDOW_SIZE || address - EMU_PARAM_WINDOW < EMU_WINDOW_SIZE
               ? SPACE_LOCAL
               : SPACE_GLOBAL;
}

static step exec_memory(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                         uint32_t m)
{
    const int bytes = ptx_type_bits((ptx_type)in->type) / 8;
    const uint64_t *base = in->addr_base >= 0 ? r[in->addr_base] : NULL;
    uint64_t address[LANES]; /* every lane's (warp_access reads them all), in a loop the compiler vectorizes */
    for (uint32_t l = 0; l < LANES; l++)
        address[l] = (base ? base[l] : 0) + (uint64_t)in->addr_offset;
    const int space = m ? resolved_space(in->space, address[__builtin_ctz(m)]) : in->space;
    if (in->op == OP_LD || in->op == OP_ST) {
        const uint64_t total = (uint64_t)bytes * in->vec;
        const bool load = in->op == OP_LD, sign = is_signed(in->type);
        uint8_t *at[LANES];
        if (!warp_access(b, w, in, in->space, m, address, total, load ? ACCESS_READ : ACCESS_WRITE, at))
            return STEP_FAULT;
        if (load && bytes == 4 && !sign && m == FULL_MASK) /* the most common load (f32, b32, u32, and their
                                                              vectors), of a whole warp: no search for each lane */
            for (int i = 0; i < in->vec; i++)
                for (uint32_t l = 0; l < LANES; l++)
                    r[o[i]][l] = (uint32_t)load_bits(at[l] + 4 * i, 4);
        else if (load && bytes == 4 && !sign)
            for (int i = 0; i < in->vec; i++)
                FOR_LANES(m, l) r[o[i]][l] = (uint32_t)load_bits(at[l] + 4 * i, 4);
        else if (load)
            FOR_LANES(m, l) for (int i = 0; i < in->vec; i++) {
                const uint64_t v = load_bits(at[l] + i * bytes, bytes);
                r[o[i]][l] = sign ? (uint64_t)sign_extend(v, 8 * bytes) : v;
            }
        else if (bytes == 4) /* the most common store: a word's low 4 bytes (little-endian, as every register) */
            for (int i = 0; i < in->vec; i++)
                FOR_LANES(m, l) memcpy(at[l] + 4 * i, &r[o[i]][l], 4);
        else
            FOR_LANES(m, l) for (int i = 0; i < in->vec; i++) memcpy(at[l] + i * bytes, &r[o[i]][l], (size_t)bytes);
        count_access(b, load && space == SPACE_GENERIC ? SPACE_GLOBAL : space, load, address, m, total);
        return STEP_NEXT;
    }
    /* atom / red: one thread at a time (blocks on other host threads use the CPU's atomics) */
    FOR_LANES(m, l) {
        uint64_t addr = (base ? base[l] : 0) + (uint64_t)in->addr_offset;
        uint8_t *p = mem_access(b, w, in, l, in->space, addr, (uint64_t)bytes, ACCESS_ATOMIC);
        if (!p)
            return STEP_FAULT;
        const uint64_t *src = &r[o[in->n_dst]][l];
        uint64_t x = src[0], old;
        const int t = in->type, bits = 8 * bytes;
        /* "atom": atom.add.f32 on global memory flushes subnormal inputs and results to sign-preserving
         * zero; on shared memory it keeps them */
        const bool ftz = t == T_F32 && resolved_space(in->space, addr) == SPACE_GLOBAL;
        if (bytes == 4) {
            _Atomic uint32_t *q = (_Atomic uint32_t *)p;
            uint32_t cur = atomic_load(q), next;
            do {
                uint32_t y = (uint32_t)x;
                switch (in->mode) {
                case ATOM_ADD:
                    next = t != T_F32 ? cur + y
                           : ftz      ? (uint32_t)bits_f32(ftz32(ftz32(f32_of(cur)) + ftz32(f32_of(y))))
                                      : (uint32_t)bits_f32(f32_of(cur) + f32_of(y));
                    break;
                case ATOM_MIN: next = is_signed(t) ? ((int32_t)y < (int32_t)cur ? y : cur) : (y < cur ? y : cur); break;
                case ATOM_MAX: next = is_signed(t) ? ((int32_t)y > (int32_t)cur ? y : cur) : (y > cur ? y : cur); break;
                case ATOM_INC: next = cur >= y ? 0 : cur + 1; break;
                case ATOM_DEC: next = (cur == 0 || cur > y) ? y : cur - 1; break;
                case ATOM_AND: next = cur & y; break;
                case ATOM_OR: next = cur | y; break;
                case ATOM_XOR: next = cur ^ y; break;
                case ATOM_EXCH: next = y; break;
                default: next = cur == y ? (uint32_t)r[o[in->n_dst + 1]][l] : cur; break; /* cas */
                }
            } while (!atomic_compare_exchange_weak(q, &cur, next));
            old = cur;
        } else if (bytes == 2) { /* atom.cas.b16 (sm_70+), atom.exch.b16 */
            _Atomic uint16_t *q = (_Atomic uint16_t *)p;
            uint16_t cur = atomic_load(q), next;
            do {
                uint16_t y = (uint16_t)x;
                switch (in->mode) {
                case ATOM_EXCH: next = y; break;
                default: next = cur == y ? (uint16_t)r[o[in->n_dst + 1]][l] : cur; break; /* cas */
                }
            } while (!atomic_compare_exchange_weak(q, &cur, next));
            old = cur;
        } else {
            _Atomic uint64_t *q = (_Atomic uint64_t *)p;
            uint64_t cur = atomic_load(q), next;
            do {
                switch (in->mode) {
                case ATOM_ADD: next = t == T_F64 ? bits_f64(f64_of(cur) + f64_of(x)) : cur + x; break;
                case ATOM_MIN: next = is_signed(t) ? ((int64_t)x < (int64_t)cur ? x : cur) : (x < cur ? x : cur); break;
                case ATOM_MAX: next = is_signed(t) ? ((int64_t)x > (int64_t)cur ? x : cur) : (x > cur ? x : cur); break;
                case ATOM_INC: next = cur >= x ? 0 : cur + 1; break;
                case ATOM_DEC: next = (cur == 0 || cur > x) ? x : cur - 1; break;
                case ATOM_AND: next = cur & x; break;
                case ATOM_OR: next = cur | x; break;
                case ATOM_XOR: next = cur ^ x; break;
                case ATOM_EXCH: next = x; break;
                default: next = cur == x ? r[o[in->n_dst + 1]][l] : cur; break;
                }
            } while (!atomic_compare_exchange_weak(q, &cur, next));
            old = cur;
        }
        if (in->op == OP_ATOM)
            r[o[0]][l] = old & width_mask(bits);
    }
    return STEP_NEXT;
}

static step jump_lanes(warp *w, uint32_t active, uint32_t exec, const int32_t *to, int32_t here);

/* brx.idx (PTX ISA, "Control Flow Instructions: brx.idx"): each lane whose guard holds goes to entry
 * `index` of the .branchtargets list; an index past the list's end is undefined there, an error here.
 * Lanes sent to different entries diverge, as at a bra whose predicate differs between them. */
static step exec_brx(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                     uint32_t m)
{
    const int32_t here = (int32_t)(in - b->k->code), *list = b->k->branch_targets + in->target;
    int32_t to[LANES];
    FOR_LANES(m, l) {
        const uint64_t index = S(0)[l] & 0xffffffffu;
        if (index >= (uint64_t)in->addr_offset) {
            fault(b, in, l, w, EMU_ERR_INVALID, "brx.idx index %" PRIu64 " is past the %" PRId64 " labels of its "
                  ".branchtargets list (undefined: PTX ISA, \"brx.idx\")", index, in->addr_offset);
            return STEP_FAULT;
        }
        to[l] = list[index];
    }
    return jump_lanes(w, active, m, to, here);
}

/* Moves lanes to per-lane targets (to[l] for the lanes of exec, here + 1 for the rest of active), splitting
 * the lanes that go to different places: brx.idx, call and ret. */
static step jump_lanes(warp *w, uint32_t active, uint32_t exec, const int32_t *to, int32_t here)
{
    uint32_t same = 0;
    if (exec)
        FOR_LANES(exec, l) same |= (uint32_t)(to[l] == to[__builtin_ctz(exec)]) << l;
    if (w->converged && (exec == 0 || (exec == active && same == exec))) {
        w->wpc = exec ? to[__builtin_ctz(exec)] : here + 1;
        return STEP_MOVED;
    }
    if (w->converged) {
        for (int l = 0; l < LANES; l++)
            w->pc[l] = w->wpc;
        w->converged = false;
    }
    for (uint32_t left = exec; left;) { /* each group of lanes bound for one label leaves the rest */
        const int32_t target = to[__builtin_ctz(left)];
        uint32_t group = 0;
        FOR_LANES(left, l) group |= (uint32_t)(to[l] == target) << l;
        if (group != active)
            diverge(w, active, group);
        FOR_LANES(group, l) w->pc[l] = target;
        left &= ~group;
    }
    if (exec != active)
        diverge(w, active, exec);
    FOR_LANES(active & ~exec, l) w->pc[l] = here + 1;
    return STEP_MOVED;
}

/* ---------------------------------------------------------------------------------------------- */
/* The handlers of the rows of instructions.def that are not arithmetic (alu.c), tensor cores (tensor.c) or
 * Hopper's (hopper.c). Each runs its instruction for the lanes of `active` (the warp's lanes at it, all at
 * one pc) whose guard predicate holds (`m`), and says what the warp does next. */

/* prefetch, nanosleep and pmevent: hints, nothing to do in an emulator */
static step exec_nothing(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                         uint32_t m)
{
    return STEP_NEXT;
}

static step exec_bra(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                     uint32_t m)
{
    return STEP_BRANCH; /* run_warp moves the lanes */
}

/* the runtime's vprintf and __assertfail (device_calls.c), or a .func (functions.c) */
static step exec_call(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                      uint32_t m)
{
    if (in->mode != CALL_FUNCTION && in->mode != CALL_INDIRECT)
        return runtime_call(b, w, in, r, o, m);
    int32_t to[LANES];
    return function_call(b, w, in, r, o, m, to) ? jump_lanes(w, active, m, to, (int32_t)(in - b->k->code))
                                                : STEP_FAULT;
}

/* a kernel's: the thread is done; a .func's: back to the caller (functions.c) */
static step exec_ret(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                     uint32_t m)
{
    if (in->mode != RET_FUNCTION)
        return STEP_EXIT;
    int32_t to[LANES];
    return function_ret(b, w, in, r, m, to) ? jump_lanes(w, active, m, to, (int32_t)(in - b->k->code)) : STEP_FAULT;
}

static step exec_exit(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                      uint32_t m)
{
    return STEP_EXIT;
}

static step exec_trap(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                      uint32_t m)
{
    if (!m)
        return STEP_NEXT;
    fault(b, in, (int)__builtin_ctz(m), w, EMU_ERR_TRAP, "trap (an assertion or __trap() in the kernel)");
    return STEP_FAULT;
}

/* Each instruction's handler, from its row in instructions.def. */
static insn_handler *const handlers[OP_COUNT] = {
#define INSTRUCTION(opcode, name, class, handler, isa) [OP_##opcode] = handler,
#include "instructions.def"
#undef INSTRUCTION
};

/* One instruction for the lanes in `active` (all at the same pc); `exec` is active & the guard. */
static step execute(block *b, warp *w, const insn *in, uint32_t active, uint32_t exec)
{
    return handlers[in->op](b, w, in, w->r, b->k->slots_of + in->operands, active, exec);
}

/* ---------------------------------------------------------------------------------------------- */
/* The scheduler: which lanes of a warp run, and the loop that runs them                          */

/* The lanes of `active` whose predicate holds (bit 0 of its slot), every lane tested in a vector loop. */
static uint32_t lanes_where(const uint64_t *predicate, uint32_t active)
{
    uint32_t on = 0;
    for (uint32_t l = 0; l < LANES; l++)
        on |= -(uint32_t)(predicate[l] & 1) & lane_bit[l];
    return on & active;
}

/* Lanes `lanes` of a diverged warp go to `to`, the others stay where they are. */
static void move_lanes(warp *w, uint32_t lanes, int32_t to)
{
    for (uint32_t l = 0; l < LANES; l++)
        w->pc[l] = (lanes & lane_bit[l]) ? to : w->pc[l];
}

/* Lanes `lanes` of a diverged warp go on to their next instruction: an add of 1 or 0 to every lane's pc,
 * fewer vector instructions than move_lanes's choice of a new pc or the old. */
static void step_lanes(warp *w, uint32_t lanes)
{
    for (uint32_t l = 0; l < LANES; l++)
        w->pc[l] += (lanes & lane_bit[l]) != 0;
}

/* Lanes of a diverged warp run lowest pc first; returns the group and its pc (false: none can run), and
 * into *behind (when not NULL) the lowest pc of the other ready lanes where the group is the lowest-pc one,
 * INT32_MIN where another order chose it. */
VECTOR_COPIES
bool warp_next_group(block *b, const warp *w, uint32_t *group, int32_t *pc, int32_t *behind)
{
    uint32_t ready = w->live & ~w->waiting;
    if (!ready)
        return false;
    int32_t best = INT32_MAX, second = INT32_MAX;
    uint32_t g = 0;            /* the lanes at `best` */
    if (ready & w->in_call) { /* lanes in calls: the first in program order (functions.c, call_stack_before) */
        uint32_t first = (uint32_t)__builtin_ctz(ready);
        FOR_LANES(ready, l) if (call_stack_before(w, l, first)) first = l;
        best = w->pc[first], second = INT32_MIN;
    } else {               /* the lowest pc and its lanes in vector loops, then the next lowest pc */
        int32_t at[LANES]; /* each lane's pc, INT32_MAX for a lane not ready */
        for (uint32_t l = 0; l < LANES; l++) {
            const int32_t is_ready = -(int32_t)((ready & lane_bit[l]) != 0);
            at[l] = (w->pc[l] & is_ready) | (INT32_MAX & ~is_ready);
        }
        for (uint32_t l = 0; l < LANES; l++)
            best = at[l] < best ? at[l] : best;
        for (uint32_t l = 0; l < LANES; l++)
            g |= at[l] == best ? lane_bit[l] : 0;
        FOR_LANES(ready & ~g, l) second = w->pc[l] < second ? w->pc[l] : second;
    }
    /* Other orders than lowest pc first: the lanes' turns (take_turns) and EMU_INTERLEAVE's random pick.
     * Both choose among lanes at instructions that need no one else; lanes that must gather (a barrier,
     * a collective, an .aligned instruction) wait for the lanes behind them, which lowest pc first
     * brings. */
    if (w->take_turns || emu_get_options()->interleave) {
        uint32_t free = 0;
        FOR_LANES(ready, l) {
            const insn *at = &b->k->code[w->pc[l]];
            if (!synchronises_lanes(at) && !(at->flags & F_ALIGNED) && at->op != OP_ACTIVEMASK)
                free |= 1u << l;
        }
        if (free && emu_get_options()->interleave) { /* any free lane's pc, at random: ITS allows any */
            b->rng = b->rng * 6364136223846793005ull + 1442695040888963407ull;
            const uint32_t pick = (uint32_t)(b->rng >> 33) % (uint32_t)__builtin_popcount(free);
            uint32_t lanes = free;
            for (uint32_t i = 0; i < pick; i++)
                lanes &= lanes - 1;
            best = w->pc[__builtin_ctz(lanes)];
        } else if (free) { /* the free group after the one that ran last, in pc order (wrapping round) */
            int32_t after = INT32_MAX, first = INT32_MAX;
            FOR_LANES(free, l) {
                if (w->pc[l] > w->last_pc && w->pc[l] < after)
                    after = w->pc[l];
                if (w->pc[l] < first)
                    first = w->pc[l];
            }
            best = after != INT32_MAX ? after : first;
        }
        second = INT32_MIN;
    }
    if (!g || (w->pc[__builtin_ctz(g)] != best)) { /* lanes in calls, or another pick above */
        g = 0;
        FOR_LANES(ready, l) if (w->pc[l] == best) g |= 1u << l;
    }
    *group = g;
    *pc = best;
    if (behind)
        *behind = second;
    return true;
}

static void check_converged(warp *w)
{
    uint32_t ready = w->live & ~w->waiting;
    if (!ready || w->waiting)
        return;
    int32_t pc = w->pc[__builtin_ctz(ready)];
    uint32_t apart = 0;
    for (uint32_t l = 0; l < LANES; l++)
        apart |= w->pc[l] != pc ? lane_bit[l] : 0;
    if (apart & ready)
        return;
    w->converged = true;
    w->wpc = pc;
}

/* Every warp of the block has run for livelock_after instructions with nothing written to memory, no
 * barrier reached and no thread exited: threads waiting on each other for something none of them will
 * do. Reported like a deadlock (a hang otherwise), with where the warps are. */
static void describe_livelock(block *b, const warp *spinning)
{
    char where[512] = "";
    size_t used = 0;
    for (unsigned i = 0; i < b->n_warps && used < sizeof where - 64; i++) {
        const warp *w = &b->warps[i];
        if (!w->live)
            continue;
        int32_t pc = w->converged ? w->wpc : w->pc[__builtin_ctz(w->live)];
        used += (size_t)snprintf(where + used, sizeof where - used, "%swarp %u at PTX line %d", used ? ", " : "", i,
                                 b->k->code[pc].ptx_line);
    }
    int lane = __builtin_ctz(spinning->live);
    int32_t pc = spinning->converged ? spinning->wpc : spinning->pc[lane];
    fault(b, &b->k->code[pc], lane, spinning, EMU_ERR_DEADLOCK,
          "livelock: %" PRIu64 " warp instructions with no store to memory, no barrier reached and no thread exited "
          "(%s): threads spinning on each other (EMU_LIVELOCK sets the count)", emu_get_options()->livelock_after, where);
}

static inline bool is_wgmma(const insn *in)
{
    return in->op == OP_WGMMA_FENCE || in->op == OP_WGMMA_COMMIT || in->op == OP_WGMMA_WAIT || in->op == OP_WGMMA_MMA;
}

/* Runs a warp until it waits, exits or its turn ends: `turn` instructions (the timing model issues one
 * at a time, model.c), or with turn 0 the emulator's own turns. */
void run_warp(block *b, warp *w, uint64_t turn)
{
    const ptx_kernel *k = b->k;
    const emu_options *options = emu_get_options(); /* read once: they do not change during a launch */
    /* A warp runs until it waits, or for a million instructions: a warp spinning on a flag in memory
     * that another warp will set then lets that warp run, instead of spinning forever. */
    uint64_t budget = turn ? turn : 1u << 20;
    if (!turn && options->interleave) { /* a random number of instructions, then another warp's turn */
        b->rng = b->rng * 6364136223846793005ull + 1442695040888963407ull;
        budget = 1 + (b->rng >> 33) % 64;
    }
    uint64_t count = 0;
    /* read once, as locals: nothing the loop stores can change them, which the compiler cannot know */
    const uint64_t livelock_after = options->livelock_after;
    const bool interleave = options->interleave, strict_convergence = options->strict_convergence;
    const int n_clock_slots = b->n_clock_slots;
    /* A diverged warp's lowest-pc group that ran a straight-line instruction is the lowest group again, and
     * alone, while its next pc stays below `behind`, every other ready lane's pc, and those lanes stay as
     * they were (`ready`): it runs on without a search through every lane's pc (warp_next_group). */
    uint32_t runs_on = 0, ready = 0;
    int32_t behind = INT32_MIN;
    while (budget--) {
        uint32_t active;
        int32_t pc;
        if (++b->since_progress > livelock_after) {
            describe_livelock(b, w);
            break;
        }
        if (w->converged) {
            active = w->live & ~w->waiting;
            if (!active)
                break;
            pc = w->wpc;
        } else if (runs_on && (w->live & ~w->waiting) == ready) {
            active = runs_on;
            pc = w->pc[__builtin_ctz(runs_on)];
        } else if (warp_next_group(b, w, &active, &pc, &behind)) {
            ready = w->live & ~w->waiting;
        } else {
            break;
        }
        const insn *in = &k->code[pc];
        uint32_t exec = active;
        if (in->guard >= 0) {
            const uint32_t on = lanes_where(w->r[in->guard], active);
            exec = (in->flags & F_GUARD_NEG) ? active & ~on : on;
        }
        exec &= ~w->skipped;
        if ((in->flags & F_ALIGNED) && strict_convergence && !synchronises_lanes(in) &&
            w->together[__builtin_ctz(active)] != w->live) {
            uint32_t with = w->together[__builtin_ctz(active)];
            fault(b, in, (int)__builtin_ctz(active), w, EMU_ERR_INVALID,
                  "the warp is not converged at this .aligned %s: lanes 0x%08x diverged from lanes 0x%08x at a branch "
                  "and nothing joined them since (a diverged warp reconverges only at __syncwarp/bar.warp.sync, a "
                  ".sync collective or a barrier: PTX ISA, \"Independent Thread Scheduling\")",
                  ptx_op_name((ptx_op)in->op), with, w->live & ~with);
            break;
        }
        count += active == FULL_MASK ? LANES : lane_count(active);
        b->c.warp_instructions++;
        if (n_clock_slots) { /* the kernel reads %clock: its value as this instruction issues */
            const uint64_t clock = b->clock ? *b->clock : b->c.warp_instructions;
            for (int c = 0; c < n_clock_slots; c++)
                FOR_LANES(active, l) w->r[b->clock_slots[c]][l] = clock;
        }
        b->c.by_class[in->counter_class]++;
        w->last_pc = pc;
        if (interleave && w->n_copies && one_in(b, 32))
            land_one_early(b, w);
        if (w->n_wgmma && !is_wgmma(in) && !wgmma_registers_free(b, w, in))
            break;
        step s = execute(b, w, in, active, exec);
        if (exec && s != STEP_FAULT && synchronises_lanes(in))
            reconverge(w, exec);
        switch (s) {
        case STEP_NEXT:
            if (w->converged)
                w->wpc++;
            else
                step_lanes(w, active);
            break;
        case STEP_BRANCH:
            if (exec != active && exec != 0)
                diverge(w, active, exec);
            if (w->converged && (exec == active || exec == 0)) {
                w->wpc = exec ? in->target : pc + 1;
            } else {
                if (w->converged) {
                    for (int l = 0; l < LANES; l++)
                        w->pc[l] = w->wpc;
                    w->converged = false;
                }
                move_lanes(w, active & exec, in->target);
                move_lanes(w, active & ~exec, pc + 1);
            }
            break;
        case STEP_EXIT:
            if (w->converged && exec != active) {
                for (int l = 0; l < LANES; l++)
                    w->pc[l] = w->wpc;
                w->converged = false;
            }
            w->live &= ~exec;
            b->since_progress = 0;
            FOR_LANES(w->live, l) w->together[l] &= w->live;
            if (!w->converged)
                FOR_LANES(active & ~exec, l) w->pc[l]++;
            else
                w->wpc++;
            for (int id = 0; id < 16; id++) /* exited threads no longer hold a barrier back */
                try_complete(b, id);
            if (w->at_warp_sync)
                release_warp_syncs(b, w);
            break;
        case STEP_MOVED:
            break;
        case STEP_YIELD:
            if (w->converged)
                w->wpc++;
            else
                step_lanes(w, active);
            goto out;
        case STEP_WAIT:
            goto out;
        case STEP_FAULT:
            goto out;
        }
        runs_on = 0;
        if (!w->converged) { /* the group went on as one (straight on, or a branch all of it took or none did) */
            const bool as_one = s == STEP_NEXT || (s == STEP_BRANCH && (exec == active || exec == 0));
            if (as_one && w->pc[__builtin_ctz(active)] < behind && (behind != INT32_MAX || w->waiting))
                runs_on = active; /* still apart from the others: not converged */
            else
                check_converged(w);
        }
    }
out:
    if (!w->converged && !w->waiting)
        check_converged(w);
    /* Independent Thread Scheduling promises every thread progress: lanes that ran a whole turn while
     * others of the warp stood elsewhere (lane 0 spinning on a flag lane 1 will set, lowest pc first)
     * take turns group by group from now on, until the warp runs as one again */
    w->take_turns = !w->converged && budget == UINT64_MAX && !turn;
    b->c.thread_instructions += count;
}
