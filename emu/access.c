/* access.c: every memory access a kernel makes, checked before it happens.
 *
 * mem_access() turns a PTX address into a host address for one thread, after memcheck (the address is
 * inside an allocation, the block's shared memory, the thread's local memory or the parameters, and
 * aligned to its size), initcheck (a read is of bytes something has written) and racecheck in shared
 * memory (racecheck.c) and global memory (racecheck_global.c), as compute-sanitizer defines them. A generic address is resolved to its
 * space through the windows emu.h places shared, local and parameter memory at.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "emu.h"
#include "interp.h"

static const char *space_name(int space)
{
    static const char *const names[] = {"generic", "global", "shared", "local", "param", "const"};
    return names[space];
}

static const char *access_name(access_kind kind)
{
    return kind == ACCESS_READ ? "read" : kind == ACCESS_ATOMIC ? "atomic" : "write";
}

/* The host address of `size` bytes at `addr` in `space` for one thread, or NULL after a fault:
 * memcheck (bounds, alignment), initcheck (reads of bytes nothing has written) and racecheck. */
uint8_t *mem_access(block *b, warp *w, const insn *in, uint32_t lane, int space, uint64_t addr, uint64_t size,
                    access_kind kind)
{
    const bool write = kind != ACCESS_READ, initcheck = b->initcheck && kind != ACCESS_PROBE;
    const bool marks_written = kind == ACCESS_WRITE || kind == ACCESS_ATOMIC;
    if (size <= 16 && (size & (size - 1)) == 0 && addr % size != 0) { /* a scalar or vector access */
        fault(b, in, (int)lane, w, EMU_ERR_MISALIGNED,
              "misaligned %s %" PRIu64 "-byte %s at 0x%" PRIx64 " (must be a multiple of %" PRIu64 ")",
              space_name(space), size, access_name(kind), addr, size);
        return NULL;
    }
    if (space == SPACE_GENERIC) {
        if (addr - EMU_SHARED_WINDOW < EMU_WINDOW_SIZE)
            space = SPACE_SHARED, addr -= EMU_SHARED_WINDOW;
        else if (addr - EMU_LOCAL_WINDOW < EMU_WINDOW_SIZE)
            space = SPACE_LOCAL, addr -= EMU_LOCAL_WINDOW;
        else if (addr - EMU_PARAM_WINDOW < EMU_WINDOW_SIZE)
            space = SPACE_PARAM, addr -= EMU_PARAM_WINDOW;
        else
            space = SPACE_GLOBAL;
    }
    switch (space) {
    case SPACE_SHARED:
        if (addr + size > b->smem_size || addr + size < addr) {
            fault(b, in, (int)lane, w, EMU_ERR_ADDRESS,
                  "out-of-bounds shared %s of %" PRIu64 " bytes at 0x%" PRIx64 " (the block has %" PRIu64
                  " bytes of shared memory)", access_name(kind), size, addr, b->smem_size);
            return NULL;
        }
        return shared_access(b, w, in, lane, addr, size, kind);
    case SPACE_LOCAL:
        if (size > b->k->local_bytes || addr > b->k->local_bytes - size) { /* no wrap near 2^64 */
            fault(b, in, (int)lane, w, EMU_ERR_ADDRESS,
                  "out-of-bounds local %s at 0x%" PRIx64 " (the thread has %" PRIu64 " bytes)",
                  access_name(kind), addr, b->k->local_bytes);
            return NULL;
        }
        {
            uint8_t *at = w->local + lane * b->k->local_bytes + addr;
            uint8_t *written = w->local_written + lane * b->k->local_bytes + addr;
            if (marks_written)
                b->since_progress = 0; /* as shared_access and device_access count a write: not a livelock */
            if (initcheck && marks_written)
                memset(written, 1, size);
            if (initcheck && kind == ACCESS_READ)
                for (uint64_t i = 0; i < size; i++)
                    if (!written[i]) {
                        fault(b, in, (int)lane, w, EMU_ERR_UNINITIALIZED, "read of local memory at 0x%" PRIx64 " that "
                              "this thread has not written (initcheck)", addr + i);
                        return NULL;
                    }
            return at;
        }
    case SPACE_PARAM:
        if (kind == ACCESS_WRITE || size > b->k->param_bytes || addr > b->k->param_bytes - size) {
            fault(b, in, (int)lane, w, EMU_ERR_ADDRESS, "%s kernel parameter space at 0x%" PRIx64,
                  write ? "write to the" : "read outside the", addr);
            return NULL;
        }
        return (uint8_t *)b->launch->params + addr;
    default: { /* global, const: device memory */
        const emu_alloc *a = emu_alloc_find(addr, size);
        if (!a) {
            char where[256];
            emu_alloc_describe(addr, size, where, sizeof where);
            fault(b, in, (int)lane, w, EMU_ERR_ADDRESS, "out-of-bounds global %s of %" PRIu64 " bytes at 0x%" PRIx64
                  " (%s)", access_name(kind), size, addr, where);
            return NULL;
        }
        return device_access(b, w, in, lane, a, addr, size, kind);
    }
    }
}

/* Shared memory's initcheck flags (1: written) for an access of n bytes: those of a 4-, 8- or 16-byte access
 * (the sizes most have) set at once, without a call. */
static inline void mark_written(uint8_t *flags, uint64_t n)
{
    switch (n) {
    case 4: memset(flags, 1, 4); break;
    case 8: memset(flags, 1, 8); break;
    case 16: memset(flags, 1, 16); break;
    default: memset(flags, 1, n); break;
    }
}

/* The first of the n bytes whose flag is still 0, or NULL when all are written. */
static inline const uint8_t *first_unwritten(const uint8_t *flags, uint64_t n)
{
    const bool written = (n == 4 || n == 8 || n == 16) && !flags_unwritten(flags, n);
    return written ? NULL : memchr(flags, 0, n);
}

/* Shared memory's initcheck for one lane's access at offset addr: a write marks its bytes, a read must find
 * them written. False after the fault. */
static inline bool shared_initcheck(block *b, warp *w, const insn *in, uint32_t lane, uint64_t addr, uint64_t size,
                                    access_kind kind)
{
    if (kind == ACCESS_WRITE || kind == ACCESS_ATOMIC)
        mark_written(b->smem_written + addr, size);
    const uint8_t *unwritten = kind == ACCESS_READ ? first_unwritten(b->smem_written + addr, size) : NULL;
    if (unwritten) {
        fault(b, in, (int)lane, w, EMU_ERR_UNINITIALIZED, "read of shared memory at 0x%" PRIx64 " that no thread "
              "of this block has written (initcheck; a missing barrier or wait?)", (uint64_t)(unwritten - b->smem_written));
        return false;
    }
    return true;
}

uint8_t *shared_access(block *b, warp *w, const insn *in, uint32_t lane, uint64_t addr, uint64_t size,
                       access_kind kind)
{
    const bool initcheck = b->initcheck && kind != ACCESS_PROBE;
    if (kind == ACCESS_WRITE || kind == ACCESS_ATOMIC)
        b->since_progress = 0; /* a thread told the others something: not a livelock */
    if (b->racecheck && kind != ACCESS_PROBE && !b->race_checked_elsewhere) {
        const bool strong = kind == ACCESS_ATOMIC || (in && (in->flags & F_STRONG));
        if ((in && (in->flags & F_ACQUIRE)) && kind != ACCESS_WRITE)
            race_acquire_at(b, w, addr, 1u << lane);
        if (!race_access(b, w, in, lane, addr, size, kind != ACCESS_READ, strong))
            return NULL;
        if ((in && (in->flags & F_RELEASE)) && kind != ACCESS_READ)
            race_release_at(b, w, addr);
        if (strong && !race_strong_access(b, w, in, lane, addr, kind != ACCESS_WRITE, kind != ACCESS_READ))
            return NULL;
    }
    if (initcheck && !shared_initcheck(b, w, in, lane, addr, size, kind))
        return NULL;
    return b->smem + addr;
}

/* Device memory's initcheck for `size` bytes at addr in allocation a, lane's access: a write marks them, a read
 * must find them written. False after the fault. */
static bool device_initcheck(block *b, warp *w, const insn *in, uint32_t lane, const emu_alloc *a, uint64_t addr,
                             uint64_t size, access_kind kind)
{
    uint64_t unwritten;
    if (kind == ACCESS_WRITE || kind == ACCESS_ATOMIC)
        emu_mark_written(a, addr, size);
    if (kind == ACCESS_READ && !emu_all_written(a, addr, size, &unwritten)) {
        fault(b, in, (int)lane, w, EMU_ERR_UNINITIALIZED, "read of global memory at 0x%" PRIx64 ", byte %" PRIu64
              " of the %" PRIu64 "-byte %s, that nothing has written since it was allocated (initcheck)", unwritten,
              unwritten - a->base, a->size, a->what);
        return false;
    }
    return true;
}

uint8_t *device_access(block *b, warp *w, const insn *in, uint32_t lane, const emu_alloc *a, uint64_t addr,
                       uint64_t size, access_kind kind)
{
    const bool initcheck = b->initcheck && kind != ACCESS_PROBE;
    if (kind == ACCESS_WRITE || kind == ACCESS_ATOMIC)
        b->since_progress = 0; /* a thread told the others something: not a livelock */
    if (b->global_shadow && kind != ACCESS_PROBE && !b->race_checked_elsewhere) {
        const bool strong = kind == ACCESS_ATOMIC || (in && (in->flags & F_STRONG));
        if (in && (in->flags & (F_ACQUIRE | F_RELEASE)))
            race_global_synchronized(b); /* it may order blocks: see racecheck_global.c */
        if ((in && (in->flags & F_ACQUIRE)) && kind != ACCESS_WRITE)
            race_acquire_at(b, w, RACE_GLOBAL_WORD | addr, 1u << lane);
        if (!race_global_access(b, w, in, lane, a, addr, size, kind != ACCESS_READ, strong))
            return NULL;
        if ((in && (in->flags & F_RELEASE)) && kind != ACCESS_READ)
            race_release_at(b, w, RACE_GLOBAL_WORD | addr);
        if (strong && !race_strong_access(b, w, in, lane, RACE_GLOBAL_WORD | addr, kind != ACCESS_WRITE,
                                          kind != ACCESS_READ))
            return NULL;
    }
    if (initcheck && !device_initcheck(b, w, in, lane, a, addr, size, kind))
        return NULL;
    return (uint8_t *)(uintptr_t)addr;
}

/* The lowest and highest of the lanes' addresses, and all their bits or-ed (whether every one is aligned), in
 * loops the compiler makes vector instructions of (VECTOR_COPIES, interp.h): a lane outside
 * `lanes` counts as the highest address for the lowest and as 0 for the rest. */
VECTOR_COPIES
static void lanes_span(const uint64_t *address, uint32_t lanes, uint64_t *lowest, uint64_t *highest, uint64_t *bits)
{
    uint64_t lo = UINT64_MAX, hi = 0, any_bits = 0;
    for (uint32_t l = 0; l < LANES; l++) {
        const uint64_t in = -(uint64_t)((lanes >> l) & 1); /* all ones for a lane in `lanes` */
        const uint64_t a = address[l] & in;
        lo = (a | ~in) < lo ? a | ~in : lo;
        hi = a > hi ? a : hi;
        any_bits |= a;
    }
    *lowest = lo, *highest = hi, *bits = any_bits;
}

/* warp_access_region, with the lowest and highest address found on the way (for WARP_DEVICE: region_access) */
static warp_region region_of(const block *b, int space, const uint64_t *address, uint32_t lanes, uint64_t size,
                             const emu_alloc **alloc, uint64_t *lowest, uint64_t *highest)
{
    if (!lanes || (space != SPACE_GLOBAL && space != SPACE_SHARED && space != SPACE_GENERIC && space != SPACE_PARAM))
        return WARP_LANES;
    uint64_t lo, hi, any_bits;
    lanes_span(address, lanes, &lo, &hi, &any_bits);
    *lowest = lo, *highest = hi;
    if (hi + size < hi || (size <= 16 && (size & (size - 1)) == 0 && any_bits % size != 0))
        return WARP_LANES; /* wraps, or a lane is misaligned (the windows are aligned far beyond 16 bytes) */
    if (space == SPACE_PARAM) /* the kernel's parameters, one copy every thread reads */
        return hi + size <= b->k->param_bytes ? WARP_PARAM : WARP_LANES;
    /* shared memory: .shared addresses, or generic ones in the shared window, all in the block's bytes */
    const uint64_t shared_base = space == SPACE_GENERIC ? EMU_SHARED_WINDOW : 0;
    if (space != SPACE_GLOBAL && lo >= shared_base && hi + size - shared_base <= b->smem_size)
        return WARP_SHARED;
    if (space == SPACE_SHARED)
        return WARP_LANES;
    /* device memory: .global addresses, or generic ones in none of the windows, all in one allocation */
    static const uint64_t windows[] = {EMU_SHARED_WINDOW, EMU_LOCAL_WINDOW, EMU_PARAM_WINDOW};
    if (space == SPACE_GENERIC)
        for (int i = 0; i < 3; i++)
            if (hi + size > windows[i] && lo < windows[i] + EMU_WINDOW_SIZE)
                return WARP_LANES;
    *alloc = emu_alloc_find(lo, hi + size - lo);
    return *alloc ? WARP_DEVICE : WARP_LANES;
}

warp_region warp_access_region(const block *b, int space, const uint64_t *address, uint32_t lanes, uint64_t size,
                               const emu_alloc **alloc)
{
    uint64_t lowest, highest;
    return region_of(b, space, address, lanes, size, alloc, &lowest, &highest);
}

/* warp_access where bounds and alignment hold for the whole warp (region; lo and hi the lowest and highest
 * address) and no lane needs a racecheck of its own: what shared_access and device_access do lane by lane,
 * without a call per lane, and a device write whose lanes cover one run of bytes in lane order (a coalesced
 * one) marked written as that run. */
static bool region_access(block *b, warp *w, const insn *in, warp_region region, const emu_alloc *alloc,
                          uint32_t lanes, const uint64_t *address, uint64_t lo, uint64_t hi, uint64_t shared_base,
                          uint64_t size, access_kind kind, uint8_t *at[LANES])
{
    const bool initcheck = b->initcheck && kind != ACCESS_PROBE;
    if (kind == ACCESS_WRITE || kind == ACCESS_ATOMIC)
        b->since_progress = 0; /* a thread told the others something: not a livelock */
    if (region == WARP_PARAM) {
        FOR_LANES(lanes, l) at[l] = (uint8_t *)b->launch->params + address[l];
        return true;
    }
    if (region == WARP_SHARED) {
        for (uint32_t l = 0; l < LANES; l++) /* a loop the compiler vectorizes: at[] outside `lanes` is not used */
            at[l] = b->smem + (address[l] - shared_base);
        if (!initcheck)
            return true;
        if (kind == ACCESS_READ && (size == 4 || size == 8 || size == 16)) { /* the most common: a lane's flags
                                                                                 read as one or two words */
            /* the lanes' bytes within twice a warp's worth (one run, a tile's rows): every flag from the
             * lowest to the highest read as words, lane by lane only if one is not set */
            if (hi + size - lo <= 2 * LANES * size && !run_unwritten(b->smem_written + (lo - shared_base), hi + size - lo))
                return true;
            uint64_t unwritten = 0;
            FOR_LANES(lanes, l) unwritten |= flags_unwritten(b->smem_written + (address[l] - shared_base), size);
            if (!unwritten)
                return true;
        }
        FOR_LANES(lanes, l) /* lane by lane: the first lane that reads unwritten bytes is the one reported */
            if (!shared_initcheck(b, w, in, l, address[l] - shared_base, size, kind))
                return false;
        return true;
    }
    for (uint32_t l = 0; l < LANES; l++) /* a loop the compiler vectorizes: at[] outside `lanes` is not used */
        at[l] = (uint8_t *)(uintptr_t)address[l];
    if (!initcheck)
        return true;
    if (kind != ACCESS_READ) {
        const uint64_t first = address[__builtin_ctz(lanes)];
        uint64_t end = first; /* where the run of bytes in lane order has reached */
        bool one_run = true;
        if (lanes == FULL_MASK) {
            for (uint32_t l = 0; l < LANES; l++)
                one_run &= address[l] == first + l * size;
            end = first + LANES * size;
        } else {
            FOR_LANES(lanes, l) {
                one_run = one_run && address[l] == end;
                end += size;
            }
        }
        if (one_run) {
            emu_mark_written(alloc, first, end - first);
            return true;
        }
    }
    /* a read whose bytes lie within twice a warp's worth (one run, one address for all, a tile's rows): every
     * byte from the lowest to the highest checked at once, lane by lane only if one is unwritten */
    uint64_t unwritten;
    if (kind == ACCESS_READ && hi + size - lo <= 2 * LANES * size && emu_all_written(alloc, lo, hi + size - lo, &unwritten))
        return true;
    /* else a read of 1, 2, 4 or 8 bytes a lane (aligned: region_of), its bits in one byte of the bitmap: the lanes'
     * bits read at once */
    if (kind == ACCESS_READ && size <= 8 && (size & (size - 1)) == 0 && emu_lanes_written(alloc, address, lanes, size))
        return true;
    FOR_LANES(lanes, l) /* lane by lane: the first lane that reads unwritten bytes is the one reported */
        if (!device_initcheck(b, w, in, l, alloc, address[l], size, kind))
            return false;
    return true;
}

bool warp_access(block *b, warp *w, const insn *in, int space, uint32_t lanes, const uint64_t *address, uint64_t size,
                 access_kind kind, uint8_t *at[LANES])
{
    const emu_alloc *alloc = NULL;
    uint64_t lo = 0, hi = 0;
    const warp_region region = region_of(b, space, address, lanes, size, &alloc, &lo, &hi);
    const uint64_t shared_base = space == SPACE_GENERIC ? EMU_SHARED_WINDOW : 0;
    const bool plain = !(in->flags & (F_STRONG | F_ACQUIRE | F_RELEASE));
    /* a plain access of shared memory: racecheck for the whole warp at once (racecheck.c), not per lane */
    const bool warp_racecheck = region == WARP_SHARED && b->racecheck && kind != ACCESS_PROBE && plain;
    if (warp_racecheck && !race_warp_access(b, w, in, lanes, address, shared_base, size, kind != ACCESS_READ))
        return false;
    b->race_checked_elsewhere = warp_racecheck;
    /* a plain read of device memory the launch has not written has no global race check to make (it returns
     * at once: racecheck_global.c, "What it does not see"), so the warp's read is checked as one */
    const bool device_lane_checks = region == WARP_DEVICE && b->global_shadow != NULL &&
                                    !(kind == ACCESS_READ && plain && !race_global_keeps(b, alloc));
    const bool lane_checks = kind != ACCESS_PROBE &&
                             (region == WARP_SHARED ? b->racecheck && !warp_racecheck : device_lane_checks);
    if (!lane_checks && region != WARP_LANES && (region != WARP_PARAM || kind == ACCESS_READ)) {
        b->race_checked_elsewhere = false;
        return region_access(b, w, in, region, alloc, lanes, address, lo, hi, shared_base, size, kind, at);
    }
    bool ok = true;
    FOR_LANES(lanes, l) {
        at[l] = region == WARP_SHARED   ? shared_access(b, w, in, l, address[l] - shared_base, size, kind)
                : region == WARP_DEVICE ? device_access(b, w, in, l, alloc, address[l], size, kind)
                                        : mem_access(b, w, in, l, space, address[l], size, kind);
        if (!at[l]) {
            ok = false;
            break;
        }
    }
    b->race_checked_elsewhere = false;
    return ok;
}
