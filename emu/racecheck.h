/* racecheck.h: what racecheck.c (shared memory) and racecheck_global.c (global memory) share: the shadow
 * each byte of memory keeps, and the check of one access against it. Not an interface: interp.h lists
 * what the interpreter calls. */
#ifndef EMU_RACECHECK_H
#define EMU_RACECHECK_H

#include "interp.h"

/* writers that are not threads: the bulk copies completing on mbarrier i of the block's table */
enum { NO_THREAD = 0xffff, COPY_AGENT = 0x8000, COPY_AGENTS = RACE_COPY_AGENTS };
/* a copy's bytes in flight; a write by the async proxy; the last write, and the read kept, were strong */
enum { SHADOW_IN_FLIGHT = 1, SHADOW_ASYNC_PROXY = 2, SHADOW_STRONG_WRITE = 4, SHADOW_STRONG_READ = 8 };

/* A byte's last write, and one read since, each by a thread of the block at its clock. */
struct shadow_byte {
    uint32_t write_clock, read_clock;
    int32_t write_at, read_at;      /* the instructions (indexes into the kernel's code) */
    uint16_t writer, reader;        /* thread numbers in the block, NO_THREAD: none since the block began */
    uint16_t flags;
    uint16_t async_reads;           /* asynchronous reads in flight (wgmma, a bulk copy to global memory) */
};
/* No padding, so two shadows are the same when their bytes are (racecheck.c, same_shadow) */
_Static_assert(sizeof(struct shadow_byte) == 24, "a shadow_byte has no padding");

/* The access of n bytes from `at` in `space` (for the report) by warp w's lane, checked against their
 * shadows s[0..n) and recorded in them; false after reporting a race. */
bool race_bytes(block *b, warp *w, const insn *in, uint32_t lane, shadow_byte *s, uint64_t n, const char *space,
                uint64_t at, bool write, bool strong);

#endif
