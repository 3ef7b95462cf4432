/* sync.c: what orders threads and lands copies (their rows in instructions.def): cp.async and its groups,
 * the block's barriers (bar.sync, bar.arrive, bar.red), bar.warp.sync, the warp collectives (shfl.sync,
 * vote.sync, activemask, redux.sync, match.sync, elect.sync) and the fences; and the lanes' convergence
 * they bring (reconverge, diverge), which the scheduler in exec.c uses. Hopper's mbarriers are hopper.c's.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "emu.h"
#include "interp.h"

/* ---------------------------------------------------------------------------------------------- */
/* cp.async                                                                                       */

/* EMU_INTERLEAVE's dice: true once in `n` throws, by the block's seeded generator. */
bool one_in(block *b, unsigned n)
{
    b->rng = b->rng * 6364136223846793005ull + 1442695040888963407ull;
    return (b->rng >> 33) % n == 0;
}

/* One cp.async lands in shared memory: src-size bytes from global memory, zeros past them. */
static void land_copy(block *b, warp *w, const async_copy *c)
{
    uint8_t *dst = b->smem + c->dst;
    if (c->src_bytes == 16 && c->size == 16) { /* the most common: copied and marked without a call */
        memcpy(dst, (const void *)(uintptr_t)c->src, 16);
        memset(b->smem_written + c->dst, 1, 16);
    } else {
        if (c->src_bytes)
            memcpy(dst, (const void *)(uintptr_t)c->src, c->src_bytes);
        memset(dst + c->src_bytes, 0, (size_t)(c->size - c->src_bytes)); /* zero fill past src-size */
        memset(b->smem_written + c->dst, 1, c->size);
    }
    if (b->racecheck) /* the issuing thread's write, now: other threads need a barrier after this wait */
        race_async_land(b, w, c->lane, c->dst, c->size, c->issued_at);
}

static void land_copies(block *b, warp *w, uint32_t lanes, bool all, uint32_t allowed_pending)
{
    /* "cp.async.wait_group N": wait until at most N of the most recent groups are pending. Groups
     * complete in commit order, so: every copy of a group older than committed - N lands. */
    int kept = 0;
    for (int i = 0; i < w->n_copies; i++) {
        async_copy *c = &w->copies[i];
        bool mine = lanes >> c->lane & 1;
        bool done = all || c->group + allowed_pending < w->committed[c->lane];
        if (mine && done)
            land_copy(b, w, c);
        else
            w->copies[kept++] = *c;
    }
    w->n_copies = kept;
}

/* EMU_INTERLEAVE: a cp.async may land at any moment between its issue and the wait that covers it
 * ("Async-group mechanism"), so now and then one lands early: a kernel that reads its bytes before the
 * wait (or relies on the old ones) shows. */
void land_one_early(block *b, warp *w)
{
    b->rng = b->rng * 6364136223846793005ull + 1442695040888963407ull;
    const int i = (int)((b->rng >> 33) % (uint64_t)w->n_copies);
    land_copy(b, w, &w->copies[i]);
    w->copies[i] = w->copies[--w->n_copies];
}

step exec_cp_async(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                           uint32_t m)
{
    uint64_t sources[LANES] = {0}, destinations[LANES] = {0}; /* set for m's lanes (warp_access_region reads all) */
    uint32_t src_bytes[LANES];
    uint32_t readers = 0;      /* the lanes that read all cp-size bytes */
    bool whole_or_none = true; /* every lane reads all of them or none (a zero fill) */
    uint64_t source_bits = 0;  /* the sources or-ed: whether every one is aligned */
    FOR_LANES(m, l) {
        destinations[l] = (uint32_t)r[o[0]][l] + (uint32_t)in->dst_offset;
        sources[l] = (in->addr_base >= 0 ? r[in->addr_base][l] : 0) + (uint64_t)in->addr_offset;
        src_bytes[l] = in->size;
        if (in->n_src > 1) {
            const uint64_t extra = r[o[1]][l];
            if (in->flags & F_IGNORE_SRC)
                src_bytes[l] = (extra & 1) ? 0 : in->size; /* ignore-src true: all zeros */
            else
                src_bytes[l] = (uint32_t)extra;
        }
        if (src_bytes[l] > in->size) {
            fault(b, in, (int)l, w, EMU_ERR_INVALID, "cp.async src-size %u is larger than cp-size %u", src_bytes[l],
                  in->size);
            return STEP_FAULT;
        }
        readers |= src_bytes[l] == in->size ? 1u << l : 0;
        whole_or_none = whole_or_none && (src_bytes[l] == in->size || src_bytes[l] == 0);
        source_bits |= sources[l];
    }
    /* The common case, its bounds and alignment checked for the warp at once: every destination in the block's
     * shared memory, every source aligned, and the sources of the lanes that read (the others fill zeros and
     * read nothing) in one allocation, read whole. Then what is left to find is a race (reported first) or a
     * source byte never written (warp_access). Else lane by lane, each lane's faults in the order the ISA's
     * operands give them. */
    const emu_alloc *alloc;
    const bool at_once = whole_or_none && source_bits % in->size == 0 &&
                         warp_access_region(b, SPACE_SHARED, destinations, m, in->size, &alloc) == WARP_SHARED &&
                         (!readers || warp_access_region(b, SPACE_GLOBAL, sources, readers, in->size, &alloc) ==
                                          WARP_DEVICE);
    if (at_once) {
        uint8_t *at[LANES];
        if (b->racecheck && !race_warp_async_issue(b, w, in, m, destinations, in->size))
            return STEP_FAULT;
        if (readers && !warp_access(b, w, in, SPACE_GLOBAL, readers, sources, in->size, ACCESS_READ, at))
            return STEP_FAULT;
    }
    FOR_LANES(m, l) {
        const uint32_t dst = (uint32_t)destinations[l];
        const uint64_t src = sources[l];
        if (!at_once) {
            if (!mem_access(b, w, in, l, SPACE_SHARED, dst, in->size, ACCESS_PROBE))
                return STEP_FAULT;
            if (b->racecheck && !race_async_issue(b, w, in, l, dst, in->size))
                return STEP_FAULT;
            if (src % in->size) { /* "Addresses as Operands": aligned to the access size, cp-size */
                fault(b, in, (int)l, w, EMU_ERR_MISALIGNED, "misaligned cp.async source 0x%" PRIx64 " (cp-size %u)",
                      src, in->size);
                return STEP_FAULT;
            }
            if (src_bytes[l] && !mem_access(b, w, in, l, SPACE_GLOBAL, src, src_bytes[l], ACCESS_READ))
                return STEP_FAULT; /* only src-size bytes are read: they must exist and have been written */
        }
        if (!queue_room((void **)&w->copies, w->n_copies, &w->cap_copies, sizeof *w->copies, 256)) {
            fault(b, in, (int)l, w, EMU_ERR_LAUNCH, "out of host memory for the cp.async copies in flight");
            return STEP_FAULT;
        }
        w->copies[w->n_copies++] = (async_copy){l, w->committed[l], dst, src, in->size, (uint8_t)src_bytes[l],
                                                (int32_t)(in - b->k->code)};
    }
    count_access(b, SPACE_GLOBAL, true, sources, m, in->size);       /* the read (LDGSTS's global side) */
    count_access(b, SPACE_SHARED, false, destinations, m, in->size); /* and the shared write */
    return STEP_NEXT;
}

/* ---------------------------------------------------------------------------------------------- */
/* Barriers                                                                                       */

/* Convergence. The emulator runs every lane that stands at one pc together (run_warp), which is when the
 * hardware may run them together; that is not the same as their being converged. PTX leaves the
 * reconvergence points of divergent code to the code generator ("Divergence of Threads in Control
 * Constructs"), and run_warp's join points stand for them. But on sm_70 and later "threads can diverge
 * and reconverge at sub-warp granularity" (PTX ISA, "Independent Thread Scheduling"): nothing promises
 * a reconvergence the program did not ask for with a synchronisation. So each lane remembers the lanes
 * it is converged with: a divergent branch splits them, and only an instruction that makes the lanes
 * executing it wait for one another joins them again (bar.warp.sync, the member-mask collectives,
 * barriers). Under EMU_CONVERGENCE=strict an .aligned instruction that does not synchronise by itself
 * (mma, ldmatrix, wmma, wgmma, setmaxnreg: "all threads in the warp must execute the same
 * instruction", and the code generator takes them to be converged there) reached by lanes that
 * diverged and were never joined is an error. Which instructions synchronise: synchronises_lanes
 * (interp.h, inline: the scheduler asks it of every instruction). */

/* The lanes in `lanes` are converged from now on (a union of whole groups: see synchronises_lanes). */
VECTOR_COPIES
void reconverge(warp *w, uint32_t lanes)
{
    for (uint32_t l = 0; l < LANES; l++) /* every lane in a vector loop, written only for the live ones */
        w->together[l] = !(w->live & lane_bit[l]) ? w->together[l]
                         : (lanes & lane_bit[l])  ? lanes
                                                  : w->together[l] & ~lanes;
}

/* A branch that `taken` of the `active` lanes take and the others do not: each side goes on alone. */
VECTOR_COPIES
void diverge(warp *w, uint32_t active, uint32_t taken)
{
    for (uint32_t l = 0; l < LANES; l++) /* as reconverge: written only for the active lanes */
        w->together[l] &= !(active & lane_bit[l]) ? ~0u : (taken & lane_bit[l]) ? taken : active & ~taken;
}

static int live_warps(const block *b)
{
    int n = 0;
    for (unsigned i = 0; i < b->n_warps; i++)
        n += b->warps[i].live != 0;
    return n;
}

/* Completes barrier `id` if everyone it waits for has arrived: releases the waiting warps. */
void try_complete(block *b, int id)
{
    barrier *bar = &b->bars[id];
    if (bar->arrived_warps == 0)
        return;
    bool complete = bar->expected ? bar->arrived_threads >= bar->expected : bar->arrived_warps >= live_warps(b);
    if (!complete)
        return;
    for (unsigned i = 0; i < b->n_warps; i++) {
        warp *w = &b->warps[i];
        if (w->bar_id != id || !w->waiting)
            continue;
        if (bar->red_slot >= 0)
            FOR_LANES(w->waiting, l) w->r[bar->red_slot][l] = bar->red_value;
        const uint32_t at_barrier = w->waiting & ~w->at_warp_sync;
        if (b->racecheck) { /* what every arrived warp did before arriving is ordered before what this one does
                             * next, its own lanes' too */
            race_acquire(b, w, bar->released, at_barrier);
            race_lanes_meet(b, w, at_barrier);
        }
        FOR_LANES(at_barrier, l) w->pc[l]++; /* waiting warps keep per-lane pcs (see exec_barrier) */
        reconverge(w, at_barrier);
        w->waiting &= ~at_barrier;
        w->bar_id = NO_BARRIER;
    }
    *bar = (barrier){.red_slot = -1};
}

step exec_barrier(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                          uint32_t m)
{
    if (m != active) {
        fault(b, in, (int)__builtin_ctz(active), w, EMU_ERR_INVALID, "a barrier under a guard predicate that "
              "differs between threads");
        return STEP_FAULT;
    }
    if (!m)
        return STEP_NEXT;
    int first = (int)__builtin_ctz(active);
    uint32_t id = (uint32_t)r[o[in->n_dst]][first];
    uint32_t count = (in->flags & F_HAS_COUNT) ? (uint32_t)r[o[in->n_dst + 1]][first] : 0;
    if (id >= 16) {
        fault(b, in, first, w, EMU_ERR_INVALID, "barrier id %u (there are 16 barriers, 0-15)", id);
        return STEP_FAULT;
    }
    if (count % LANES) {
        fault(b, in, first, w, EMU_ERR_INVALID, "barrier thread count %u is not a multiple of the warp size", count);
        return STEP_FAULT;
    }
    /* .aligned (bar.sync, __syncthreads): every live thread of the warp executes this barrier together */
    if ((in->flags & F_ALIGNED) && active != w->live) {
        fault(b, in, first, w, EMU_ERR_INVALID,
              "divergent barrier: %d of the warp's %d live threads reached this bar.sync (.aligned barriers must be "
              "reached by the whole warp; the others are elsewhere)", __builtin_popcount(active),
              __builtin_popcount(w->live));
        return STEP_FAULT;
    }
    barrier *bar = &b->bars[id];
    if (bar->arrived_warps && bar->expected != count) {
        fault(b, in, first, w, EMU_ERR_INVALID, "barrier %u used with thread counts %u and %u at once", id,
              bar->expected, count);
        return STEP_FAULT;
    }
    bar->expected = count;
    if (in->op == OP_BAR_RED) {
        if (!bar->arrived_warps) {
            bar->red_mode = in->mode;
            bar->red_value = in->mode == ATOM_AND ? 1 : 0;
            bar->red_slot = o[0];
        }
        FOR_LANES(active, l) {
            bool p = r[o[in->n_dst + in->n_src - 1]][l] & 1;
            if (in->flags & F_NEG_PRED)
                p = !p;
            if (in->mode == ATOM_POPC)
                bar->red_value += p;
            else if (in->mode == ATOM_AND)
                bar->red_value &= p;
            else
                bar->red_value |= p;
        }
    } else if (bar->arrived_warps == 0) {
        bar->red_slot = -1;
    }
    /* a warp arrives when all its live threads have ("marks warps' arrival at the barrier"). While any
     * lane waits, the warp keeps a pc per lane. */
    if (w->converged) {
        for (int l = 0; l < LANES; l++)
            w->pc[l] = w->wpc;
        w->converged = false;
    }
    w->waiting |= active;
    w->bar_id = (int)id;
    b->since_progress = 0;
    if ((w->waiting & ~w->at_warp_sync & w->live) != w->live)
        return STEP_WAIT;
    bar->arrived_warps++;
    bar->arrived_threads += LANES;
    if (b->racecheck)
        race_release(b, w, bar->released);
    b->c.barriers++;
    if (in->op == OP_BAR_ARRIVE) { /* arrive and go on */
        w->waiting = 0;
        w->bar_id = NO_BARRIER;
        try_complete(b, (int)id);
        return STEP_NEXT;
    }
    try_complete(b, (int)id);
    return w->waiting ? STEP_WAIT : STEP_MOVED;
}

/* Lanes of the warp that must take part in a .sync collective with this member mask. */
static bool collective_ready(block *b, warp *w, const insn *in, uint32_t active, uint32_t membermask, int lane)
{
    uint32_t needed = membermask & w->live;
    if ((needed & ~active) || (active & ~membermask)) {
        fault(b, in, lane, w, EMU_ERR_INVALID,
              "warp-collective with member mask 0x%08x executed by lanes 0x%08x (live 0x%08x): every member must "
              "execute it together, and only members", membermask, active, w->live);
        return false;
    }
    return true;
}

static step exec_warp_collective(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o,
                                 uint32_t active)
{
    const int first = (int)__builtin_ctz(active);
    switch (in->op) {
    case OP_SHFL: {
        /* "shfl.sync": cval = c[4:0], segmask = c[12:8]; maxLane = (lane & segmask) | (cval & ~segmask) */
        const int a = o[in->n_dst], bsl = o[in->n_dst + 1], csl = o[in->n_dst + 2], msl = o[in->n_dst + 3];
        uint32_t membermask = (uint32_t)r[msl][first];
        if (!collective_ready(b, w, in, active, membermask, first))
            return STEP_FAULT;
        uint64_t source[LANES];
        for (int l = 0; l < LANES; l++)
            source[l] = r[a][l];
        FOR_LANES(active, lane) {
            uint32_t bval = (uint32_t)r[bsl][lane] & 31, c = (uint32_t)r[csl][lane];
            uint32_t cval = c & 31, segmask = (c >> 8) & 31;
            int max_lane = (int)((lane & segmask) | (cval & ~segmask)), min_lane = (int)(lane & segmask), j;
            bool in_range;
            switch (in->mode) {
            case SHFL_UP: j = (int)lane - (int)bval; in_range = j >= max_lane; break;
            case SHFL_DOWN: j = (int)lane + (int)bval; in_range = j <= max_lane; break;
            case SHFL_BFLY: j = (int)(lane ^ bval); in_range = j <= max_lane; break;
            default: j = min_lane | (int)(bval & ~segmask); in_range = j <= max_lane; break;
            }
            if (!in_range)
                j = (int)lane;
            if (!(active >> j & 1)) {
                fault(b, in, (int)lane, w, EMU_ERR_INVALID, "shfl.sync reads lane %d, which is not executing it", j);
                return STEP_FAULT;
            }
            r[o[0]][lane] = source[j] & 0xffffffffu;
            if (in->n_dst == 2)
                r[o[1]][lane] = in_range;
        }
        return STEP_NEXT;
    }
    case OP_VOTE: {
        uint32_t membermask = (uint32_t)r[o[2]][first];
        if (!collective_ready(b, w, in, active, membermask, first))
            return STEP_FAULT;
        uint32_t ballot = 0;
        FOR_LANES(active, l) {
            bool p = r[o[1]][l] & 1;
            if (in->flags & F_NEG_PRED)
                p = !p;
            ballot |= (uint32_t)p << l;
        }
        uint64_t v = in->mode == VOTE_BALLOT ? ballot
                     : in->mode == VOTE_ALL  ? ballot == active
                     : in->mode == VOTE_ANY  ? ballot != 0
                                             : (ballot == active || ballot == 0);
        FOR_LANES(active, l) r[o[0]][l] = v;
        return STEP_NEXT;
    }
    case OP_ACTIVEMASK:
        FOR_LANES(active, l) r[o[0]][l] = active;
        return STEP_NEXT;
    case OP_REDUX: {
        uint32_t membermask = (uint32_t)r[o[2]][first];
        if (!collective_ready(b, w, in, active, membermask, first))
            return STEP_FAULT;
        uint32_t v = (uint32_t)r[o[1]][first];
        FOR_LANES(active & (active - 1) /* all but the first */, l) {
            uint32_t x = (uint32_t)r[o[1]][l];
            switch (in->mode) {
            case ATOM_ADD: v += x; break;
            case ATOM_MIN: v = in->type == T_S32 ? ((int32_t)x < (int32_t)v ? x : v) : (x < v ? x : v); break;
            case ATOM_MAX: v = in->type == T_S32 ? ((int32_t)x > (int32_t)v ? x : v) : (x > v ? x : v); break;
            case ATOM_AND: v &= x; break;
            case ATOM_OR: v |= x; break;
            default: v ^= x; break;
            }
        }
        FOR_LANES(active, l) r[o[0]][l] = v;
        return STEP_NEXT;
    }
    case OP_MATCH: {
        /* "match.sync": .any: the lanes whose value equals mine; .all: every lane's mask if all agree
         * (and p = 1), else 0 (p = 0) */
        const int a = o[in->n_dst], msl = o[in->n_dst + 1];
        uint32_t membermask = (uint32_t)r[msl][first];
        if (!collective_ready(b, w, in, active, membermask, first))
            return STEP_FAULT;
        uint64_t mask = width_mask(ptx_type_bits((ptx_type)in->type));
        bool all_equal = true;
        FOR_LANES(active, l) all_equal &= ((r[a][l] ^ r[a][first]) & mask) == 0;
        FOR_LANES(active, l) {
            uint32_t same = 0;
            FOR_LANES(active, j) same |= (uint32_t)(((r[a][j] ^ r[a][l]) & mask) == 0) << j;
            if (in->mode == VOTE_ALL) {
                r[o[0]][l] = all_equal ? active : 0;
                if (in->n_dst == 2)
                    r[o[1]][l] = all_equal;
            } else {
                r[o[0]][l] = same;
            }
        }
        return STEP_NEXT;
    }
    default:
        return STEP_FAULT;
    }
}

/* "bar.warp.sync": a thread waits until every non-exited thread of its member mask has executed a
 * bar.warp.sync with the same mask, not necessarily this one (on sm_70 and later the members may reach
 * it from different places). Lanes whose members are not all here yet wait at it; the last to come
 * releases them (each goes on from its own bar.warp.sync). Lanes with different masks (tiles) are
 * separate barriers. */
step exec_warp_sync(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                            uint32_t m)
{
    if (!m)
        return STEP_NEXT;
    const uint64_t *mask_of = S(0);
    bool waits = false;
    for (uint32_t left = m; left;) {
        const uint32_t mask = (uint32_t)mask_of[__builtin_ctz(left)];
        uint32_t here = 0, waiting_same = 0;
        FOR_LANES(left, l) if ((uint32_t)mask_of[l] == mask) here |= 1u << l;
        FOR_LANES(w->at_warp_sync, l) if (w->warp_sync_mask[l] == mask) waiting_same |= 1u << l;
        left &= ~here;
        const uint32_t members = mask & w->live;
        if (here & ~members) {
            fault(b, in, (int)__builtin_ctz(here & ~members), w, EMU_ERR_INVALID,
                  "bar.warp.sync with member mask 0x%08x executed by lanes 0x%08x, not all of them members", mask,
                  here);
            return STEP_FAULT;
        }
        if (members & ~(here | waiting_same)) { /* members still to come: wait for them here */
            FOR_LANES(here, l) w->warp_sync_mask[l] = mask;
            w->at_warp_sync |= here;
            waits = true;
            continue;
        }
        /* all here: "guarantees memory ordering among threads participating in barrier", the members and
         * no other lane */
        FOR_LANES(waiting_same, l) w->pc[l]++;
        w->waiting &= ~waiting_same;
        w->at_warp_sync &= ~waiting_same;
        reconverge(w, members);
        if (b->racecheck)
            race_lanes_meet(b, w, members);
    }
    if (!waits)
        return STEP_NEXT;
    /* some lanes wait (keeping a pc per lane); the others here have gone on: run_warp advances them */
    if (w->converged) {
        for (int l = 0; l < LANES; l++)
            w->pc[l] = w->wpc;
        w->converged = false;
    }
    FOR_LANES(m & ~w->at_warp_sync, l) w->pc[l]++;
    w->waiting |= m & w->at_warp_sync;
    return STEP_MOVED;
}

/* After lanes exited: a bar.warp.sync waits only for non-exited members, so waiters whose remaining
 * members are all waiting too go on. */
void release_warp_syncs(block *b, warp *w)
{
    for (uint32_t left = w->at_warp_sync; left;) {
        const uint32_t mask = w->warp_sync_mask[__builtin_ctz(left)];
        uint32_t same = 0;
        FOR_LANES(left, l) if (w->warp_sync_mask[l] == mask) same |= 1u << l;
        left &= ~same;
        if (mask & w->live & ~same)
            continue;
        FOR_LANES(same, l) w->pc[l]++;
        w->waiting &= ~same;
        w->at_warp_sync &= ~same;
        reconverge(w, same);
        if (b->racecheck)
            race_lanes_meet(b, w, same);
    }
}

/* The member-mask operand of a .sync collective, or -1 (activemask has none). */
static int membermask_slot(const insn *in, const int32_t *o)
{
    switch (in->op) {
    case OP_SHFL: return o[in->n_dst + 3];
    case OP_VOTE: case OP_REDUX: return o[2];
    case OP_MATCH: return o[in->n_dst + 1];
    default: return -1;
    }
}

/* Each thread's member mask names the threads it exchanges with ("shfl.sync", "vote.sync", "redux.sync",
 * "match.sync"): on sm_70 and later the threads executing one collective together may belong to
 * different groups, each with its own mask (cooperative groups' tiled_partition), as long as every
 * thread of each mask executes it. So the collective runs once per mask, for the lanes that give it. */
step exec_warp_collectives(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o,
                                  uint32_t active, uint32_t m)
{
    const int msl = membermask_slot(in, o);
    if (!m || msl < 0)
        return m ? exec_warp_collective(b, w, in, r, o, m) : STEP_NEXT;
    for (uint32_t left = m; left;) {
        const uint32_t mask = (uint32_t)r[msl][__builtin_ctz(left)];
        uint32_t group = 0;
        FOR_LANES(left, l) if ((uint32_t)r[msl][l] == mask) group |= 1u << l;
        const step s = exec_warp_collective(b, w, in, r, o, group);
        if (s != STEP_NEXT)
            return s;
        left &= ~group;
    }
    return STEP_NEXT;
}

/* ---------------------------------------------------------------------------------------------- */
/* The handlers of the fences, cp.async's groups and elect.sync                                    */

step exec_membar(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                        uint32_t m)
{
    if (b->racecheck && (in->flags & F_PROXY_ASYNC) && m)
        race_proxy_fence(b, w, m);
    if (b->racecheck && (in->flags & F_MBAR_INIT_FENCE) && m)
        race_mbar_init_fence(b, w, m);
    if (!(in->flags & (F_PROXY_ASYNC | F_MBAR_INIT_FENCE)) && m) {
        race_global_synchronized(b); /* a fence may order blocks (racecheck_global.c) */
        if (b->racecheck)
            race_fence(b, w, m);
    }
    return STEP_NEXT;
}

step exec_cp_async_commit(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o,
                                 uint32_t active, uint32_t m)
{
    FOR_LANES(m, l) w->committed[l]++;
    return STEP_NEXT;
}

/* cp.async.wait_group N, and cp.async.wait_all ("equivalent to commit_group; wait_group 0") */
step exec_cp_async_wait(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o,
                               uint32_t active, uint32_t m)
{
    if (in->op == OP_CP_ASYNC_WAIT) {
        land_copies(b, w, m, false, (uint32_t)in->addr_offset);
        return STEP_NEXT;
    }
    FOR_LANES(m, l) w->committed[l]++;
    land_copies(b, w, m, true, 0);
    return STEP_NEXT;
}

/* the lowest member lane leads (the ISA leaves which one to the implementation) */
step exec_elect(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                       uint32_t m)
{
    if (!m)
        return STEP_NEXT;
    uint32_t members = (uint32_t)S(0)[__builtin_ctz(m)] & m;
    int leader = members ? __builtin_ctz(members) : -1;
    FOR_LANES(m, l) {
        D(0)[l] = (uint64_t)(uint32_t)leader;
        D(1)[l] = (int)l == leader;
    }
    return STEP_NEXT;
}
