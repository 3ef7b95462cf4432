/* hopper.c: the instructions chapter 08's sm_90a kernels add: mbarrier, TMA (cp.async.bulk.tensor) and
 * plain bulk copies, wgmma, setmaxnreg. The state they share with the rest of the interpreter is in
 * interp.h; how a warp runs them is exec.c's. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"

/* ---------------------------------------------------------------------------------------------- */
/* Hopper: mbarrier, TMA, wgmma, setmaxnreg                                                        */

/* The mbarrier object ("Parallel Synchronization and Communication Instructions: mbarrier") holds the
 * current phase, the pending and expected arrival counts and the tx-count; its 64 bits are opaque to
 * programs. Here: pending in bits 0-20, expected in 21-41, tx-count (two's complement) in 42-62, the
 * phase's parity in bit 63. Poisoned shared memory (all ones) decodes as uninitialized. */
typedef struct {
    uint32_t pending, expected;
    int32_t tx;
    unsigned parity;
} mbar_state;

enum { MBAR_MAX_COUNT = (1 << 20) - 1 };

static bool mbar_decode(uint64_t word, mbar_state *m)
{
    m->pending = (uint32_t)(word & 0x1fffff);
    m->expected = (uint32_t)(word >> 21 & 0x1fffff);
    m->tx = (int32_t)(word >> 42 & 0x1fffff);
    if (m->tx & 0x100000)
        m->tx -= 0x200000;
    m->parity = (unsigned)(word >> 63);
    return m->expected >= 1 && m->expected <= MBAR_MAX_COUNT && m->pending <= m->expected;
}

static uint64_t mbar_encode(const mbar_state *m)
{
    return (uint64_t)m->pending | (uint64_t)m->expected << 21 | ((uint64_t)(uint32_t)m->tx & 0x1fffff) << 42 |
           (uint64_t)m->parity << 63;
}

/* The mbarrier at an address (shared, or generic), for one thread (NULL after a fault). */
static uint8_t *mbar_at(block *b, warp *w, const insn *in, uint32_t lane, int space, uint64_t addr, mbar_state *m)
{
    uint8_t *p = mem_access(b, w, in, lane, space, addr, 8, ACCESS_PROBE); /* its own init check: */
    if (p && m && !mbar_decode(load_bits(p, 8), m)) {
        fault(b, in, (int)lane, w, EMU_ERR_INVALID, "mbarrier at shared 0x%" PRIx64 " used before mbarrier.init", addr);
        return NULL;
    }
    return p;
}

/* Waiting warps poll again when a phase completes ("Phase Completion": pending arrivals and tx-count
 * both zero; the phase advances and pending is reset to expected). */
static void mbar_complete_if_done(block *b, mbar_state *m, uint64_t shared_offset)
{
    if (m->pending != 0 || m->tx != 0)
        return;
    if (b->racecheck)
        race_mbar_phase_complete(b, (uint32_t)shared_offset);
    m->parity ^= 1;
    m->pending = m->expected;
    b->fruitless_polls = 0;
    for (unsigned i = 0; i < b->n_warps; i++) {
        warp *w = &b->warps[i];
        if (w->mbar_wait == (int64_t)shared_offset) {
            w->waiting = 0;
            w->mbar_wait = -1;
        }
    }
}

static uint64_t shared_offset_of(uint64_t addr)
{
    return addr - EMU_SHARED_WINDOW < EMU_WINDOW_SIZE ? addr - EMU_SHARED_WINDOW : addr;
}

static bool tma_land_box(block *b, warp *w, const insn *in, const tma_copy *c, uint64_t *written);

/* The copy's bytes land (as the async proxy's write, for racecheck: ordered before whoever sees the
 * mbarrier's phase complete), then complete-tx of them on its mbarrier. */
static bool tma_land(block *b, warp *w, const insn *in, const tma_copy *c)
{
    uint64_t written = c->bytes;
    b->race_checked_elsewhere = true;
    bool landed;
    if (c->bytes) { /* a plain bulk copy */
        const uint8_t *src = mem_access(b, w, in, 0, SPACE_GLOBAL, c->src, c->bytes, ACCESS_READ);
        uint8_t *dst = src ? mem_access(b, w, in, 0, SPACE_SHARED, c->dst, c->bytes, ACCESS_WRITE) : NULL;
        if ((landed = dst != NULL))
            memcpy(dst, src, c->bytes);
    } else {
        landed = tma_land_box(b, w, in, c, &written);
    }
    b->race_checked_elsewhere = false;
    mbar_state m;
    uint8_t *word = landed ? mbar_at(b, w, in, 0, SPACE_SHARED, c->mbar, &m) : NULL;
    if (!word)
        return false;
    if (b->racecheck) {
        if (!race_copy_landed(b, w, in, c->mbar, c->dst, written, c->issued_at))
            return false;
    }
    m.tx -= (int32_t)written; /* a tensor box counts whole, the zero-filled part too */
    mbar_complete_if_done(b, &m, c->mbar);
    uint64_t v = mbar_encode(&m);
    memcpy(word, &v, 8);
    return true;
}

/* The bytes of a tensor copy's box. */
static uint64_t box_bytes(const emu_tensor_map *map)
{
    uint64_t bytes = map->element_bytes;
    for (int d = 0; d < map->rank; d++)
        bytes *= (map->box[d] + map->element_stride[d] - 1) / map->element_stride[d];
    return bytes;
}

/* `count` elements of `eb` bytes outside the tensor: zeros, or NaN where the map asks for it. Which NaN a GPU's
 * copy writes is not documented (an H100 wrote 0x7ff7 into f16 and bf16 boxes, measured by tma_test.cu); this
 * writes the PTX ISA's canonical one for the element's width (0x7fff for f16, 0x7fffffff for f32), whose bits
 * are a NaN whatever floating-point type the map names, bf16 included. */
static void fill_outside(uint8_t *dst, uint64_t count, unsigned eb, bool nan)
{
    if (!nan) {
        memset(dst, 0, count * eb);
        return;
    }
    memset(dst, 0xff, count * eb); /* every bit but the sign: 0x7fff, a NaN as f16 and as bf16 alike */
    for (uint64_t i = 0; i < count; i++)
        dst[i * eb + eb - 1] = 0x7f;
}

/* A tensor copy's box lands: zero-filled (or NaN) outside the tensor, swizzled as the map says
 * ("Tensors: Tiled Mode"; the 16-byte chunks of each 128/64/32-byte row XORed with the row's index in
 * the pattern, the TMA swizzle of the CUDA Programming Guide). It goes in runs: the elements along
 * dimension 0 (contiguous in the tensor) that share a 16-byte chunk of the box (which the swizzle moves
 * whole) and lie all inside the tensor or all outside, one copy or fill each when in bounds; an element
 * alone where a run is not in bounds, so that mem_access names the element that is not. */
static bool tma_land_box(block *b, warp *w, const insn *in, const tma_copy *c, uint64_t *written_out)
{
    const emu_tensor_map *map = &c->map;
    const unsigned eb = map->element_bytes;
    uint32_t count[5] = {1, 1, 1, 1, 1};
    uint64_t elements = 1;
    for (int d = 0; d < map->rank; d++) {
        count[d] = (map->box[d] + map->element_stride[d] - 1) / map->element_stride[d];
        elements *= count[d];
    }
    const uint32_t mask = map->swizzle_bytes ? map->swizzle_bytes / 16 - 1 : 0;
    const int64_t last0 = (int64_t)map->dim_minus_1[0];
    uint64_t written = 0, run;
    for (uint64_t e = 0; e < elements; e += run) {
        uint64_t rest = e, src = map->global_address;
        bool inside_rest = true; /* inside the tensor along every dimension but 0 */
        int64_t x0 = 0;
        for (int d = 0; d < map->rank; d++) {
            int64_t x = (int64_t)c->coords[d] + (int64_t)(rest % count[d]) * map->element_stride[d];
            rest /= count[d];
            if (d == 0)
                x0 = x;
            else
                inside_rest &= x >= 0 && x <= (int64_t)map->dim_minus_1[d];
            src += (uint64_t)x * map->stride[d];
        }
        const bool inside = inside_rest && x0 >= 0 && x0 <= last0;
        uint64_t at = c->dst + e * eb;
        run = 1;
        if (map->element_stride[0] == 1) {
            const uint64_t in_row = count[0] - e % count[0], in_chunk = (16 - at % 16) / eb;
            run = in_row < in_chunk ? in_row : in_chunk;
            const int64_t same_side = inside                   ? last0 - x0 + 1 /* up to the tensor's end */
                                      : inside_rest && x0 < 0 ? -x0          /* up to its start */
                                                               : INT64_MAX;   /* the row is outside */
            run = (uint64_t)same_side < run ? (uint64_t)same_side : run;
        }
        at ^= ((at >> 7) & mask) << 4;
        const emu_alloc *alloc = inside ? emu_alloc_find(src, run * eb) : NULL;
        uint8_t *dst;
        const uint8_t *from = NULL;
        if (at + run * eb <= b->smem_size && (!inside || alloc)) {
            dst = shared_access(b, w, in, 0, at, run * eb, ACCESS_WRITE);
            from = dst && inside ? device_access(b, w, in, 0, alloc, src, run * eb, ACCESS_READ) : NULL;
        } else {
            run = 1;
            dst = mem_access(b, w, in, 0, SPACE_SHARED, at, eb, ACCESS_WRITE);
            from = dst && inside ? mem_access(b, w, in, 0, SPACE_GLOBAL, src, eb, ACCESS_READ) : NULL;
        }
        if (!dst || (inside && !from))
            return false;
        if (inside)
            memcpy(dst, from, run * eb);
        else
            fill_outside(dst, run, eb, map->nan_fill);
        written += run * eb;
    }
    *written_out = written;
    return true;
}

/* Lands every bulk copy that completes on this mbarrier (a thread is about to wait on it). */
static bool tma_land_for(block *b, warp *w, const insn *in, uint64_t mbar)
{
    for (int i = 0; i < b->n_tma;) {
        if (b->tma[i].mbar != mbar) {
            i++;
            continue;
        }
        tma_copy c = b->tma[i];
        b->tma[i] = b->tma[--b->n_tma];
        if (!tma_land(b, w, in, &c))
            return false;
    }
    return true;
}

/* An mbarrier instruction's address: in shared memory, or a generic address into it. */
static int mbar_space(const insn *in) { return in->space == SPACE_GENERIC ? SPACE_GENERIC : SPACE_SHARED; }

step exec_mbarrier(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                   uint32_t m)
{
    FOR_LANES(m, l) {
        uint64_t addr = (in->addr_base >= 0 ? r[in->addr_base][l] : 0) + (uint64_t)in->addr_offset;
        uint64_t at = shared_offset_of(addr);
        mbar_state st;
        uint8_t *word;
        if (in->op == OP_MBAR_INIT) {
            uint32_t count = (uint32_t)r[o[0]][l];
            if (!(word = mbar_at(b, w, in, l, mbar_space(in), addr, NULL)))
                return STEP_FAULT;
            if (count < 1 || count > MBAR_MAX_COUNT) {
                fault(b, in, (int)l, w, EMU_ERR_INVALID, "mbarrier.init count %u is outside [1, 2^20-1]", count);
                return STEP_FAULT;
            }
            st = (mbar_state){.pending = count, .expected = count, .tx = 0, .parity = 0};
            if (b->racecheck)
                race_mbar_init(b, w, l, in, (uint32_t)at);
        } else {
            if (!(word = mbar_at(b, w, in, l, mbar_space(in), addr, &st)))
                return STEP_FAULT;
            const uint64_t *src = in->n_src ? r[o[in->n_dst]] : NULL;
            switch (in->op) {
            case OP_MBAR_ARRIVE: {
                uint64_t before = load_bits(word, 8);
                uint32_t count = 1;
                if (in->flags & F_EXPECT_TX) /* expect-tx(txCount), then arrive-on(1) */
                    st.tx += (int32_t)src[l];
                else if (in->n_src)
                    count = (uint32_t)src[l];
                if (count > st.pending) {
                    fault(b, in, (int)l, w, EMU_ERR_INVALID, "mbarrier at shared 0x%" PRIx64 ": %u arrivals, %u pending "
                          "in this phase", at, count, st.pending);
                    return STEP_FAULT;
                }
                st.pending -= count;
                r[o[0]][l] = before; /* the state: the phase before the arrival */
                if (b->racecheck) /* what this thread did so far is ordered before the phase's waiters */
                    race_mbar_arrive(b, w, (uint32_t)at);
                mbar_complete_if_done(b, &st, at);
                break;
            }
            case OP_MBAR_EXPECT_TX: st.tx += (int32_t)src[l]; break;
            case OP_MBAR_COMPLETE_TX:
                st.tx -= (int32_t)src[l];
                if (b->racecheck)
                    race_mbar_arrive(b, w, (uint32_t)at);
                mbar_complete_if_done(b, &st, at);
                break;
            case OP_MBAR_INVAL: memset(word, 0xff, 8); continue;
            default: break;
            }
        }
        uint64_t v = mbar_encode(&st);
        memcpy(word, &v, 8);
    }
    return STEP_NEXT;
}

/* try_wait: true when the phase asked about has completed ("waitComplete(parity p) = p != the current
 * phase's parity"; the state form compares with the phase the state was taken in). A phase not yet
 * complete suspends the threads until it completes, which is one of the outcomes the ISA allows a
 * try_wait; if it never can, no warp can run and the block reports a deadlock. */
step exec_mbar_wait(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                    uint32_t m)
{
    if (!m)
        return STEP_NEXT;
    bool all_done = true;
    uint64_t waited_on = 0;
    FOR_LANES(m, l) {
        uint64_t addr = (in->addr_base >= 0 ? r[in->addr_base][l] : 0) + (uint64_t)in->addr_offset;
        mbar_state st;
        if (!tma_land_for(b, w, in, shared_offset_of(addr)) || !mbar_at(b, w, in, l, mbar_space(in), addr, &st))
            return STEP_FAULT;
        uint64_t operand = r[o[in->n_dst]][l];
        unsigned asked = (in->flags & F_PARITY) ? (unsigned)(operand & 1) : (unsigned)(operand >> 63);
        bool done = asked != st.parity;
        r[o[0]][l] = done;
        if (done && b->racecheck) /* it saw the phase complete: what was released into it is ordered before */
            race_mbar_acquire(b, w, (uint32_t)shared_offset_of(addr), 1u << l);
        if (!done)
            all_done = false, waited_on = shared_offset_of(addr);
    }
    if (all_done || m != active)
        return STEP_NEXT;
    /* A try_wait may also give up ("until a system-dependent time limit") and return false: with
     * EMU_INTERLEAVE, half of them do (by the seed), so a kernel that ignores the answer shows. */
    bool gives_up = false;
    if (!(in->flags & F_TEST_WAIT) && emu_get_options()->interleave) {
        b->rng = b->rng * 6364136223846793005ull + 1442695040888963407ull;
        gives_up = b->rng >> 63;
    }
    if ((in->flags & F_TEST_WAIT) || gives_up) { /* false, and the other warps get their turn */
        if (++b->fruitless_polls > 1000000) {
            fault(b, in, (int)__builtin_ctz(m), w, EMU_ERR_DEADLOCK, "deadlock: threads poll an mbarrier for a "
                  "phase that no other thread can complete");
            return STEP_FAULT;
        }
        return STEP_YIELD;
    }
    if (w->converged) { /* the lanes wait here; the warp keeps a pc per lane meanwhile */
        for (int l = 0; l < LANES; l++)
            w->pc[l] = w->wpc;
        w->converged = false;
    }
    w->waiting |= active;
    w->mbar_wait = (int64_t)waited_on;
    return STEP_WAIT;
}

/* A bulk copy is in flight from its issue until it lands. By default it lands as late as the program
 * allows, when a thread waits on its mbarrier, so a consumer that reads without waiting reads poison.
 * With EMU_INTERLEAVE, half of the copies (by the seed) land at once instead, so a producer that
 * overwrites a buffer its consumers still read shows too. Threads already waiting on the mbarrier poll
 * again (and so land it). */
static bool queue_bulk_copy(block *b, warp *w, const insn *in, const tma_copy *c)
{
    if (emu_get_options()->interleave) {
        b->rng = b->rng * 6364136223846793005ull + 1442695040888963407ull;
        if (b->rng >> 63)
            return tma_land(b, w, in, c);
    }
    if (!queue_room((void **)&b->tma, b->n_tma, &b->cap_tma, sizeof *b->tma, 16)) {
        fault(b, in, 0, w, EMU_ERR_LAUNCH, "out of host memory for the bulk copies in flight");
        return false;
    }
    b->tma[b->n_tma++] = *c;
    for (unsigned i = 0; i < b->n_warps; i++)
        if (b->warps[i].mbar_wait == (int64_t)c->mbar) {
            b->warps[i].waiting = 0;
            b->warps[i].mbar_wait = -1;
        }
    return true;
}

step exec_tma_load(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                   uint32_t m)
{
    FOR_LANES(m, l) {
        uint64_t map_addr = (in->addr_base >= 0 ? r[in->addr_base][l] : 0) + (uint64_t)in->addr_offset;
        const uint8_t *p = mem_access(b, w, in, l, in->space, map_addr, 64, ACCESS_READ);
        if (!p)
            return STEP_FAULT;
        tma_copy c;
        memcpy(&c.map, p, sizeof c.map);
        if (c.map.magic != EMU_TENSOR_MAP_MAGIC || c.map.rank != in->vec) {
            fault(b, in, (int)l, w, EMU_ERR_INVALID, "cp.async.bulk.tensor.%dd: the operand at 0x%" PRIx64 " is not a "
                  "%d-dimensional tensor map made by cuTensorMapEncodeTiled", in->vec, map_addr, in->vec);
            return STEP_FAULT;
        }
        c.bytes = 0;
        c.dst = (uint32_t)shared_offset_of(r[o[0]][l] + (uint64_t)in->dst_offset);
        c.mbar = (uint32_t)shared_offset_of(r[o[1]][l] + (uint64_t)in->mbar_offset);
        for (int d = 0; d < in->vec; d++)
            c.coords[d] = (int32_t)r[o[2 + d]][l];
        if (c.dst % 128) { /* "Shared memory alignment: 128 bytes" (Programming Guide, TMA Swizzle) */
            fault(b, in, (int)l, w, EMU_ERR_MISALIGNED, "cp.async.bulk.tensor destination 0x%x is not 128-byte aligned",
                  c.dst);
            return STEP_FAULT;
        }
        /* "The address of the bounding Box must also be aligned to 16 bytes" (PTX ISA, "Tensors: Tiled Mode:
         * Bounding Box"): where the coordinates put its first element, inside the tensor or not (the map's base
         * and strides are multiples of 16, so dimension 0's bytes decide) */
        int64_t box_start = (int64_t)c.coords[0] * c.map.element_bytes;
        if (box_start % 16) {
            fault(b, in, (int)l, w, EMU_ERR_MISALIGNED, "cp.async.bulk.tensor: the box at coordinate %d of dimension 0 "
                  "starts %" PRId64 " bytes from the tensor's base, not a multiple of 16 (the ISA's Bounding Box "
                  "must be 16-byte aligned)", c.coords[0], box_start);
            return STEP_FAULT;
        }
        if (!mbar_at(b, w, in, l, SPACE_SHARED, c.mbar, NULL) ||
            !mem_access(b, w, in, l, SPACE_SHARED, c.dst, box_bytes(&c.map), ACCESS_PROBE) ||
            (b->racecheck && (!race_async_issue(b, w, in, l, c.dst, box_bytes(&c.map)) ||
                              !race_mbar_async_use(b, w, in, l, c.mbar))))
            return STEP_FAULT;
        c.issued_at = (int32_t)(in - b->k->code);
        if (!queue_bulk_copy(b, w, in, &c))
            return STEP_FAULT;
    }
    return STEP_NEXT;
}

/* cp.async.bulk: to shared memory on an mbarrier (lands like a tensor copy, when a thread waits on
 * it), or to global memory in the thread's bulk async-group (lands at the cp.async.bulk.wait_group
 * that covers the group). Sizes and addresses are multiples of 16 ("cp.async.bulk"). */
step exec_bulk(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active, uint32_t m)
{
    if (in->op == OP_BULK_COMMIT) {
        FOR_LANES(m, l) w->bulk_committed[l]++;
        return STEP_NEXT;
    }
    if (in->op == OP_BULK_WAIT) {
        int kept = 0;
        for (int i = 0; i < w->n_stores; i++) {
            bulk_store *st = &w->stores[i];
            if ((m >> st->lane & 1) && st->group + (uint32_t)in->addr_offset < w->bulk_committed[st->lane]) {
                b->race_checked_elsewhere = true; /* racecheck: from the issue to here (below) */
                const uint8_t *src = mem_access(b, w, in, st->lane, SPACE_SHARED, st->src, st->bytes, ACCESS_READ);
                b->race_checked_elsewhere = false;
                if (src && b->racecheck)
                    race_async_read_end(b, &(uint64_t){st->src}, 1, st->bytes);
                uint8_t *dst = src ? mem_access(b, w, in, st->lane, SPACE_GLOBAL, st->dst, st->bytes, ACCESS_WRITE) : NULL;
                if (!dst)
                    return STEP_FAULT;
                memcpy(dst, src, st->bytes);
            } else {
                w->stores[kept++] = *st;
            }
        }
        w->n_stores = kept;
        return STEP_NEXT;
    }
    FOR_LANES(m, l) {
        uint64_t dst = r[o[0]][l] + (uint64_t)(int64_t)in->dst_offset;
        uint64_t src = (in->addr_base >= 0 ? r[in->addr_base][l] : 0) + (uint64_t)in->addr_offset;
        uint32_t bytes = (uint32_t)r[o[1]][l];
        if (bytes % 16 || dst % 16 || src % 16) {
            fault(b, in, (int)l, w, EMU_ERR_MISALIGNED, "cp.async.bulk of %u bytes from 0x%" PRIx64 " to 0x%" PRIx64
                  ": sizes and addresses must be multiples of 16", bytes, src, dst);
            return STEP_FAULT;
        }
        if (in->flags & F_TO_GLOBAL) {
            if (!mem_access(b, w, in, l, SPACE_SHARED, shared_offset_of(src), bytes, ACCESS_PROBE) ||
                !mem_access(b, w, in, l, SPACE_GLOBAL, dst, bytes, ACCESS_PROBE) ||
                (b->racecheck && !race_async_read_begin(b, w, in, l, &(uint64_t){shared_offset_of(src)}, 1, bytes)))
                return STEP_FAULT; /* the copy reads its source through the async proxy until its wait */
            if (!queue_room((void **)&w->stores, w->n_stores, &w->cap_stores, sizeof *w->stores, 16)) {
                fault(b, in, (int)l, w, EMU_ERR_LAUNCH, "out of host memory for the bulk stores in flight");
                return STEP_FAULT;
            }
            w->stores[w->n_stores++] = (bulk_store){l, w->bulk_committed[l], (uint32_t)shared_offset_of(src), bytes, dst};
            continue;
        }
        tma_copy c = {.dst = (uint32_t)shared_offset_of(dst), .src = src, .bytes = bytes,
                      .mbar = (uint32_t)shared_offset_of(r[o[2]][l] + (uint64_t)(int64_t)in->mbar_offset)};
        if (!mem_access(b, w, in, l, SPACE_GLOBAL, src, bytes, ACCESS_PROBE) ||
            !mem_access(b, w, in, l, SPACE_SHARED, c.dst, bytes, ACCESS_PROBE) ||
            !mbar_at(b, w, in, l, SPACE_SHARED, c.mbar, NULL) ||
            (b->racecheck && (!race_async_issue(b, w, in, l, c.dst, bytes) || !race_mbar_async_use(b, w, in, l, c.mbar))))
            return STEP_FAULT;
        c.issued_at = (int32_t)(in - b->k->code);
        if (!queue_bulk_copy(b, w, in, &c))
            return STEP_FAULT;
    }
    return STEP_NEXT;
}

int emu_registers_per_thread(unsigned threads)
{
    int per_thread = (int)(EMU_REGS_PER_BLOCK / (threads ? threads : 1)) / 8 * 8;
    return per_thread > 256 ? 256 : per_thread;
}

/* setmaxnreg ("Miscellaneous Instructions: setmaxnreg"): .dec releases registers to the block's pool,
 * .inc takes them from it, waiting until there are enough. A warpgroup whose .inc can never be met
 * waits forever on a GPU; here no warp can run and the block reports the deadlock. */
step exec_setmaxnreg(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                     uint32_t m)
{
    const int target = (int)in->addr_offset;
    if (m != w->live) {
        fault(b, in, (int)__builtin_ctz(m | 1), w, EMU_ERR_INVALID, "setmaxnreg must be executed by the whole warp");
        return STEP_FAULT;
    }
    if ((in->flags & F_INC) ? target < w->regs : target > w->regs) {
        fault(b, in, (int)__builtin_ctz(m), w, EMU_ERR_INVALID, "setmaxnreg.%s to %d registers from %d",
              (in->flags & F_INC) ? "inc" : "dec", target, w->regs);
        return STEP_FAULT;
    }
    int64_t change = (int64_t)(target - w->regs) * LANES;
    if (change > b->register_pool) {
        if (w->converged) {
            for (int l = 0; l < LANES; l++)
                w->pc[l] = w->wpc;
            w->converged = false;
        }
        w->waiting |= m;
        w->reg_wait = target;
        return STEP_WAIT;
    }
    b->register_pool -= change;
    w->regs = target;
    if (change < 0) /* registers came back: warps waiting for some may go on */
        for (unsigned i = 0; i < b->n_warps; i++)
            if (b->warps[i].reg_wait) {
                b->warps[i].waiting = 0;
                b->warps[i].reg_wait = 0;
            }
    return STEP_NEXT;
}

/* wgmma.mma_async m64nNk16 ("Asynchronous Multiply-and-Accumulate Instruction: wgmma.mma_async"). The
 * four warps of a warpgroup each own 16 rows of the 64-row D and A; B is shared. So each warp's part is
 * computed on its own, from the warp's rank w in its warpgroup:
 *   D (f32): d_i at row 16w + g + 8*((i >> 1) & 1), column 8*(i >> 2) + 2t + (i & 1)
 *   A in registers: a_i at row 16w + g + 8*((i >> 1) & 1), column 2t + (i & 1) + 8*(i >> 2)
 * (g = lane / 4, t = lane % 4; "Matrix Fragments for wgmma.mma_async.m64nNk16"). */

/* The byte offset in shared memory of element (r, k) of a matrix a descriptor describes ("Matrix
 * Descriptor Format"; "Shared Memory Matrix Layout", its canonical K-major and MN-major layouts): r is
 * the M (A) or N (B) index, k the K index, 2-byte elements. The swizzle XORs the 16-byte chunk index
 * with address bits 7 and up, as TMA writes it. */
typedef struct {
    uint64_t start, lbo, sbo; /* the start address, leading and stride byte offsets */
    uint64_t sw;              /* the swizzle's span in bytes (128, 64 or 32), 0 for none */
} matrix_descriptor;

static matrix_descriptor descriptor_fields(uint64_t desc)
{
    const unsigned mode = (unsigned)(desc >> 62);
    return (matrix_descriptor){.start = (desc & 0x3fff) << 4, .lbo = (desc >> 16 & 0x3fff) << 4,
                               .sbo = (desc >> 32 & 0x3fff) << 4,
                               .sw = mode == 1 ? 128 : mode == 2 ? 64 : mode == 3 ? 32 : 0};
}

static inline uint64_t descriptor_address(matrix_descriptor d, bool mn_major, int r, int k)
{
    const uint64_t start = d.start, lbo = d.lbo, sbo = d.sbo, sw = d.sw;
    uint64_t lin;
    if (!sw)
        lin = mn_major ? start + (uint64_t)(r >> 3) * sbo + (uint64_t)(r & 7) * 2 + (uint64_t)(k >> 3) * lbo +
                             (uint64_t)(k & 7) * 16
                       : start + (uint64_t)(r >> 3) * sbo + (uint64_t)(r & 7) * 16 + (uint64_t)(k >> 3) * lbo +
                             (uint64_t)(k & 7) * 2;
    else
        lin = mn_major ? start + (uint64_t)r / (sw / 2) * lbo + (uint64_t)r % (sw / 2) * 2 + (uint64_t)(k >> 3) * sbo +
                             (uint64_t)(k & 7) * sw
                       : start + (uint64_t)(r >> 3) * sbo + (uint64_t)(r & 7) * sw + (uint64_t)k * 2;
    return sw ? lin ^ ((lin >> 7) & (sw / 16 - 1)) << 4 : lin;
}

/* A 2-byte operand element in shared memory. The usual case (in bounds, written) is read directly;
 * anything else goes through mem_access, which reports it. */
static bool operand_element(block *b, warp *w, const insn *in, uint64_t at, int h, float sign, float *out)
{
    const uint8_t *p = b->smem + at;
    if (at + 2 > b->smem_size || at % 2 || (b->initcheck && !(b->smem_written[at] && b->smem_written[at + 1]))) {
        b->race_checked_elsewhere = true; /* bounds and initcheck: racecheck was done at the issue */
        p = mem_access(b, w, in, 0, SPACE_SHARED, at, 2, ACCESS_READ);
        b->race_checked_elsewhere = false;
        if (!p)
            return false;
    }
    *out = sign * half_in(load_bits(p, 2), h);
    return true;
}

/* The 8 elements of a 16-byte chunk at `at`, each written to out[j * stride]. In every layout a descriptor
 * describes, 8 elements consecutive along K (K-major) or along M or N (MN-major) fill one chunk, in order
 * (wgmma_operands_in_flight relies on it too): one bounds and initcheck test for the 8, and element by
 * element only when it fails, so the report names the element. */
static inline bool operand_chunk(block *b, warp *w, const insn *in, uint64_t at, int h, float sign, float *out,
                                 int stride)
{
    if (at % 16 == 0 && at + 16 <= b->smem_size && (!b->initcheck || !flags_unwritten(b->smem_written + at, 16))) {
        for (int j = 0; j < 8; j++)
            out[j * stride] = sign * half_in(load_bits(b->smem + at + 2 * j, 2), h);
        return true;
    }
    for (int j = 0; j < 8; j++)
        if (!operand_element(b, w, in, at + 2 * (uint64_t)j, h, sign, &out[j * stride]))
            return false;
    return true;
}

/* The 16-byte chunks of one matrix operand a descriptor describes, `rows` rows (M or N; row r is row
 * first_row + r of the descriptor's matrix) by 16 along K: each chunk's shared-memory offset and the (r, k)
 * of its first element, the chunk's other 7 following along M or N (MN-major) or along K (K-major).
 * Returns how many (2 * rows). */
typedef struct { uint64_t at; int r, k; } operand_chunk_at;
static int operand_chunks(uint64_t desc, bool mn_major, int first_row, int rows, operand_chunk_at *chunks)
{
    const matrix_descriptor d = descriptor_fields(desc);
    int n = 0;
    if (mn_major) { /* a chunk is 8 rows at one k */
        for (int k = 0; k < 16; k++)
            for (int r = 0; r < rows; r += 8)
                chunks[n++] = (operand_chunk_at){descriptor_address(d, true, first_row + r, k), r, k};
    } else { /* a chunk is 8 k of one row */
        for (int r = 0; r < rows; r++)
            for (int k = 0; k < 16; k += 8)
                chunks[n++] = (operand_chunk_at){descriptor_address(d, false, first_row + r, k), r, k};
    }
    return n;
}

/* One matrix operand from its descriptor, chunk by chunk: `rows` rows by 16 along K, element (r, k) into
 * m[r * row_step + k * k_step]. */
static bool operand_matrix(block *b, warp *w, const insn *in, uint64_t desc, bool mn_major, int first_row, int rows,
                           int h, float sign, float *m, int row_step, int k_step)
{
    operand_chunk_at chunks[2 * 256];
    const int n = operand_chunks(desc, mn_major, first_row, rows, chunks);
    for (int c = 0; c < n; c++)
        if (!operand_chunk(b, w, in, chunks[c].at, h, sign, &m[chunks[c].r * row_step + chunks[c].k * k_step],
                           mn_major ? row_step : k_step))
            return false;
    return true;
}

/* racecheck: a wgmma may read its shared-memory operands at any time from its issue to the wait that
 * covers it. At the issue, each 16-byte chunk it reads is checked and marked as being read; at the
 * wait, unmarked. */
static bool wgmma_operands_in_flight(block *b, warp *w, const wgmma_op *op, bool issued)
{
    const insn *in = op->in;
    const int rank = (int)(w->index % 4);
    operand_chunk_at chunks[2 * 16 + 2 * 256];
    int n = 0;
    if (!(in->flags & F_A_REGS)) /* this warp's 16 rows of A, and all of B */
        n = operand_chunks(op->a_desc, in->mode & 1, 16 * rank, 16, chunks);
    n += operand_chunks(op->b_desc, in->mode & 2, 0, in->size * 8, chunks + n);
    uint64_t inside[2 * 16 + 2 * 256];
    int n_inside = 0;
    for (int c = 0; c < n; c++)
        if (chunks[c].at + 16 <= b->smem_size) /* out of bounds: the read itself reports it */
            inside[n_inside++] = chunks[c].at;
    if (!issued) {
        race_async_read_end(b, inside, n_inside, 16);
        return true;
    }
    return race_async_read_begin(b, w, in, 0, inside, n_inside, 16);
}

/* D += A * B for a warp's 16 rows and n columns, k in order: exact products, summed in binary64 (as
 * mma_rows in tensor.c). The hottest loop of a wgmma kernel's emulation, in vector copies (SUM_COPIES,
 * interp.h); fusing a product into its sum changes nothing (the product is exact), so the compiler may. */
SUM_COPIES FUSED_PRODUCTS
static void wgmma_sum(const float A[16][16], const float B[16][256], float D[16][256], int n)
{
    typedef double cols8 __attribute__((vector_size(8 * sizeof(double)))); /* 8 columns of a row */
    typedef float cols8_f32 __attribute__((vector_size(8 * sizeof(float))));
    cols8 Bd[16][32]; /* B in binary64 once, not once per row of A */
    for (int k = 0; k < 16; k++)
        for (int c = 0; c < n / 8; c++) {
            cols8_f32 v;
            memcpy(&v, &B[k][8 * c], sizeof v);
            Bd[k][c] = __builtin_convertvector(v, cols8);
        }
    for (int row = 0; row < 16; row++)
        for (int c = 0; c < n / 8; c++) { /* 8 columns of the row, summed over k in registers */
            cols8 acc;
            for (int j = 0; j < 8; j++)
                acc[j] = D[row][8 * c + j];
            for (int k = 0; k < 16; k++)
                acc += (double)A[row][k] * Bd[k][c];
            for (int j = 0; j < 8; j++)
                D[row][8 * c + j] = (float)acc[j]; /* the one rounding */
        }
}

static bool wgmma_run(block *b, warp *w, const wgmma_op *op)
{
    const insn *in = op->in;
    const int n = in->size * 8, rank = (int)(w->index % 4), h = in->stype == T_BF16 ? T_BF16 : T_F16;
    const int32_t *o = b->k->slots_of + in->operands;
    const bool a_regs = in->flags & F_A_REGS, trans_a = in->mode & 1, trans_b = in->mode & 2;
    const float sa = (in->mode & 4) ? -1.0f : 1.0f, sb = (in->mode & 8) ? -1.0f : 1.0f;
    if ((!a_regs && op->a_desc >> 49 & 7) || op->b_desc >> 49 & 7) {
        fault(b, in, 0, w, EMU_ERR_INVALID, "wgmma descriptor with a non-zero base offset: not supported yet");
        return false;
    }
    float A[16][16];
    float B[16][256]; /* 32 KB on the stack with D: a thread-local array costs a lookup per use in a library */
    float D[16][256];
    if (a_regs) {
        for (int row = 0; row < 16; row++)
            for (int k = 0; k < 16; k++) {
                int lane = (row & 7) * 4 + (k & 7) / 2, i = (k & 1) + 2 * ((row >> 3) & 1) + 4 * (k >> 3);
                A[row][k] = sa * half_in(op->a_regs[i / 2][lane] >> (16 * (i & 1)), h);
            }
    } else if (!operand_matrix(b, w, in, op->a_desc, trans_a, 16 * rank, 16, h, sa, &A[0][0], 16, 1)) {
        return false;
    }
    if (!operand_matrix(b, w, in, op->b_desc, trans_b, 0, n, h, sb, &B[0][0], 1, 256)) /* B's rows are N */
        return false;
    /* this warp's 16 rows of D: the accumulators gathered, A*B added in k order (exact products, one
     * rounding at the end, as for mma), and scattered back */
    uint64_t (*r)[LANES] = w->r;
    if (!op->accumulate) /* D's n columns used start at zero */
        for (int row = 0; row < 16; row++)
            memset(D[row], 0, (size_t)n * sizeof D[row][0]);
    else /* registers 4c + 2j and 4c + 2j + 1 of every lane: the 8x8 block at rows 8j, columns 8c (interp.h) */
        for (int c = 0; c < n / 8; c++)
            for (int j = 0; j < 2; j++)
                f32_block_in(r[o[4 * c + 2 * j]], r[o[4 * c + 2 * j + 1]], &D[8 * j][8 * c], 256);
    wgmma_sum(A, B, D, n);
    for (int c = 0; c < n / 8; c++)
        for (int j = 0; j < 2; j++)
            f32_block_out(&D[8 * j][8 * c], 256, r[o[4 * c + 2 * j]], r[o[4 * c + 2 * j + 1]]);
    return true;
}

/* Marks (or, done, unmarks) the registers an issued wgmma.mma_async writes and reads later: its
 * accumulators, and A's fragment when A comes from registers. Until the wgmma.wait_group that covers it,
 * no other instruction may touch them ("wgmma.mma_async": "Accessing the accumulator register or the
 * input register containing fragments of matrix A of a wgmma.mma_async instruction without first
 * performing a wgmma.wait_group instruction that waits on a wgmma-group including that wgmma.mma_async
 * instruction is undefined behavior"). */
/* wgmma.mma_async's operands by name, from the slots parse.c lists them in: "d, a-desc, b-desc, scale-d" or
 * "d, {a0, a1, a2, a3}, b-desc, scale-d" ("wgmma.mma_async"), the accumulators d first (n_dst of them). */
typedef struct {
    const int32_t *d;      /* the n_dst accumulator registers */
    const int32_t *a_regs; /* A's four registers, or NULL when A is in shared memory */
    int32_t a_desc;        /* A's descriptor, or -1 when A is in registers */
    int32_t b_desc, scale_d;
} wgmma_operands;

static wgmma_operands wgmma_operands_of(const insn *in, const int32_t *o)
{
    const int32_t *a = o + in->n_dst;
    const int a_count = in->flags & F_A_REGS ? 4 : 1;
    return (wgmma_operands){.d = o, .a_regs = a_count == 4 ? a : NULL, .a_desc = a_count == 4 ? -1 : a[0],
                            .b_desc = a[a_count], .scale_d = a[a_count + 1]};
}

/* Marks (delta +1) or unmarks (-1) the registers an issued wgmma reads or writes until its wait. */
static void wgmma_registers_in_flight(warp *w, const wgmma_op *op, const int32_t *o, int delta)
{
    const wgmma_operands ops = wgmma_operands_of(op->in, o);
    for (int i = 0; i < op->in->n_dst; i++)
        w->wgmma_busy[ops.d[i]] = (uint8_t)(w->wgmma_busy[ops.d[i]] + delta);
    for (int i = 0; ops.a_regs && i < 4; i++)
        w->wgmma_busy[ops.a_regs[i]] = (uint8_t)(w->wgmma_busy[ops.a_regs[i]] + delta);
}

bool wgmma_registers_free(block *b, warp *w, const insn *in)
{
    const int32_t *o = b->k->slots_of + in->operands;
    for (int i = 0; i < in->n_dst + in->n_src; i++)
        if (w->wgmma_busy[o[i]]) {
            fault(b, in, 0, w, EMU_ERR_INVALID, "%s %s a register that an in-flight wgmma.mma_async accumulates into "
                  "or reads A from, before the wgmma.wait_group that covers it (undefined: \"wgmma.mma_async\")",
                  ptx_op_name((ptx_op)in->op), i < in->n_dst ? "writes" : "reads");
            return false;
        }
    return true;
}

/* A shared-memory matrix descriptor as the ISA allows it ("Matrix Descriptor Format"): with a swizzle,
 * a matrix that does not start at a row of the pattern's repeat boundary needs the base offset (start >>
 * 7) mod the pattern's rows; with base offset 0 it must start on that boundary. */
static bool descriptor_ok(block *b, warp *w, const insn *in, uint64_t desc, const char *which)
{
    const uint64_t start = (desc & 0x3fff) << 4;
    const unsigned mode = (unsigned)(desc >> 62), rows = mode == 1 ? 8 : mode == 2 ? 4 : mode == 3 ? 2 : 1;
    const unsigned row = (unsigned)(start >> 7) % rows;
    if (rows > 1 && row != 0 && (desc >> 49 & 7) == 0) {
        fault(b, in, 0, w, EMU_ERR_INVALID, "wgmma: the %s descriptor's matrix starts at shared 0x%" PRIx64 ", row %u "
              "of its %u-byte swizzle pattern, with base offset 0 (\"Matrix Descriptor Format\": the base offset "
              "must then be %u)", which, start, row, rows * 128, row);
        return false;
    }
    return true;
}

/* wgmma.mma_async is the warpgroup's instruction ("wgmma.mma_async": "The mandatory .aligned qualifier
 * indicates that all threads in the warpgroup must execute the same wgmma.mma_async instruction"; its
 * descriptors are the warpgroup's). The emulator runs each warp's part on its own, so it checks that the
 * four warps agree: the first warp to issue its k-th wgmma.mma_async writes it, with its descriptors, into
 * the warpgroup's log; the others must find the same there; and when the block ends, each must have issued
 * all the log holds. */
static bool wgmma_warpgroup_issue(block *b, warp *w, const insn *in, const wgmma_op *op)
{
    const unsigned group = w->index / 4;
    if (4 * group + 4 > b->n_warps) {
        fault(b, in, 0, w, EMU_ERR_INVALID, "wgmma.mma_async belongs to a warpgroup: warps %u to %u must all execute "
              "it, and the block has %u warp%s (\"wgmma.mma_async\": .aligned)", 4 * group, 4 * group + 3, b->n_warps,
              b->n_warps == 1 ? "" : "s");
        return false;
    }
    if (!b->wgmma_logs && !(b->wgmma_logs = calloc(b->n_warps / 4, sizeof *b->wgmma_logs))) {
        fault(b, in, 0, w, EMU_ERR_LAUNCH, "out of host memory for the warpgroups' wgmma logs");
        return false;
    }
    struct wgmma_log *log = &b->wgmma_logs[group];
    const uint32_t k = w->wgmma_issued++;
    if (k < log->n) {
        if (log->in[k] != in) {
            char first[256];
            describe_line(b, log->in[k], first, sizeof first);
            fault(b, in, 0, w, EMU_ERR_INVALID, "warp %u of warpgroup %u issues this as its wgmma.mma_async number %u; "
                  "another warp of the warpgroup issued the one at %s (\"wgmma.mma_async\": .aligned, every thread of "
                  "the warpgroup must execute the same one)", w->index % 4, group, k + 1, first);
            return false;
        }
        const bool a_differs = !(in->flags & F_A_REGS) && log->a_desc[k] != op->a_desc;
        if (a_differs || log->b_desc[k] != op->b_desc) {
            fault(b, in, 0, w, EMU_ERR_INVALID, "warp %u of warpgroup %u gives the %s descriptor 0x%" PRIx64 ", another "
                  "warp of the warpgroup gave 0x%" PRIx64 " (the descriptors are one per warpgroup)", w->index % 4,
                  group, a_differs ? "A" : "B", a_differs ? op->a_desc : op->b_desc,
                  a_differs ? log->a_desc[k] : log->b_desc[k]);
            return false;
        }
        return true;
    }
    if (log->n == log->cap) {
        const uint32_t cap = log->cap ? 2 * log->cap : 16;
        const insn **ins = realloc(log->in, cap * sizeof *ins);
        if (ins)
            log->in = ins;
        uint64_t *a = ins ? realloc(log->a_desc, cap * sizeof *a) : NULL;
        if (a)
            log->a_desc = a;
        uint64_t *d = a ? realloc(log->b_desc, cap * sizeof *d) : NULL;
        if (!d) {
            fault(b, in, 0, w, EMU_ERR_LAUNCH, "out of host memory for the warpgroups' wgmma logs");
            return false;
        }
        log->b_desc = d, log->cap = cap;
    }
    log->in[log->n] = in, log->a_desc[log->n] = op->a_desc, log->b_desc[log->n] = op->b_desc;
    log->n++;
    return true;
}

bool wgmma_block_done(block *b)
{
    for (unsigned group = 0; b->wgmma_logs && group < b->n_warps / 4; group++) {
        const struct wgmma_log *log = &b->wgmma_logs[group];
        for (unsigned rank = 0; rank < 4; rank++) {
            warp *w = &b->warps[4 * group + rank];
            if (w->wgmma_issued < log->n) {
                fault(b, log->in[w->wgmma_issued], 0, w, EMU_ERR_INVALID, "warp %u of warpgroup %u ended without "
                      "executing this wgmma.mma_async, which another warp of the warpgroup issued (\"wgmma.mma_async\": "
                      ".aligned, every thread of the warpgroup must execute it)", rank, group);
                return false;
            }
        }
    }
    return true;
}

void wgmma_logs_free(block *b)
{
    for (unsigned group = 0; b->wgmma_logs && group < b->n_warps / 4; group++)
        free(b->wgmma_logs[group].in), free(b->wgmma_logs[group].a_desc), free(b->wgmma_logs[group].b_desc);
    free(b->wgmma_logs);
    b->wgmma_logs = NULL;
}

step exec_wgmma(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active, uint32_t m)
{
    if (m != FULL_MASK) { /* .sync.aligned: the whole warp, as for mma.sync */
        fault(b, in, (int)__builtin_ctz(m | 1), w, EMU_ERR_INVALID, "%s needs all 32 threads of the warp; lanes "
              "0x%08x execute it", ptx_op_name((ptx_op)in->op), m);
        return STEP_FAULT;
    }
    switch (in->op) {
    case OP_WGMMA_FENCE: /* orders register accesses: the emulator's are ordered already; it is checked for */
        w->wgmma_fenced = true;
        return STEP_NEXT;
    case OP_WGMMA_COMMIT:
        w->wgmma_committed++;
        return STEP_NEXT;
    case OP_WGMMA_WAIT: { /* "wait until N or fewer of the most recent wgmma-groups are pending" */
        int kept = 0;
        for (int i = 0; i < w->n_wgmma; i++) {
            if (w->wgmma[i].group + (uint32_t)in->addr_offset < w->wgmma_committed) {
                if (!wgmma_run(b, w, &w->wgmma[i]))
                    return STEP_FAULT;
                wgmma_registers_in_flight(w, &w->wgmma[i], b->k->slots_of + w->wgmma[i].in->operands, -1);
                if (b->racecheck)
                    wgmma_operands_in_flight(b, w, &w->wgmma[i], false);
            } else {
                w->wgmma[kept++] = w->wgmma[i];
            }
        }
        w->n_wgmma = kept;
        w->wgmma_fenced = false; /* registers may be touched now: the next batch needs a wgmma.fence */
        return STEP_NEXT;
    }
    default: { /* mma_async: queued; it reads shared memory and its accumulators when a wait covers it */
        const wgmma_operands ops = wgmma_operands_of(in, o);
        if (!w->wgmma_fenced) {
            fault(b, in, 0, w, EMU_ERR_INVALID, "wgmma.mma_async with no wgmma.fence since the warpgroup last "
                  "touched its registers (\"wgmma.fence\": it must come before the first wgmma.mma_async, and "
                  "between a register access and a wgmma.mma_async that uses the register)");
            return STEP_FAULT;
        }
        /* the descriptors and scale-d are the warpgroup's: every thread gives the same */
        const int32_t uniform[3] = {ops.a_desc, ops.b_desc, ops.scale_d};
        for (int u = 0; u < 3; u++)
            for (int l = 1; uniform[u] >= 0 && l < LANES; l++)
                if (r[uniform[u]][l] != r[uniform[u]][0]) {
                    fault(b, in, l, w, EMU_ERR_INVALID, "wgmma.mma_async: lane %d gives %s 0x%" PRIx64 ", lane 0 gives "
                          "0x%" PRIx64 " (the descriptors and scale-d are one per warpgroup: every thread must give "
                          "the same)", l, u == 2 ? "scale-d" : u == 0 ? "the A descriptor" : "the B descriptor",
                          r[uniform[u]][l], r[uniform[u]][0]);
                    return STEP_FAULT;
                }
        wgmma_op op = {.in = in, .group = w->wgmma_committed, .b_desc = r[ops.b_desc][0],
                       .accumulate = r[ops.scale_d][0] & 1};
        if (ops.a_regs)
            for (int i = 0; i < 4; i++)
                for (int l = 0; l < LANES; l++)
                    op.a_regs[i][l] = (uint32_t)r[ops.a_regs[i]][l];
        else
            op.a_desc = r[ops.a_desc][0];
        b->c.tensor_flops += 2ull * 16 * (uint64_t)in->size * 8 * 16; /* this warp's 16 rows of 64 */
        if ((!ops.a_regs && !descriptor_ok(b, w, in, op.a_desc, "A")) ||
            !descriptor_ok(b, w, in, op.b_desc, "B") || !wgmma_warpgroup_issue(b, w, in, &op))
            return STEP_FAULT;
        if (b->racecheck && !wgmma_operands_in_flight(b, w, &op, true))
            return STEP_FAULT;
        wgmma_registers_in_flight(w, &op, o, +1);
        if (!queue_room((void **)&w->wgmma, w->n_wgmma, &w->cap_wgmma, sizeof *w->wgmma, 8)) {
            fault(b, in, 0, w, EMU_ERR_LAUNCH, "out of host memory for the wgmma in flight");
            return STEP_FAULT;
        }
        w->wgmma[w->n_wgmma++] = op;
        return STEP_NEXT;
    }
    }
}
