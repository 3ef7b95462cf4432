/* racecheck.h: what racecheck.c (shared memory) and racecheck_global.c (global memory) share: the shadow
 * of memory, and the check of one access against it. Not an interface: interp.h lists
 * what the interpreter calls. */
#ifndef EMU_RACECHECK_H
#define EMU_RACECHECK_H

#include "interp.h"

/* writers that are not threads: the bulk copies completing on mbarrier i of the block's table */
enum { NO_THREAD = 0xffff, COPY_AGENT = 0x8000, COPY_AGENTS = RACE_COPY_AGENTS };
/* a copy's bytes in flight; a write by the async proxy; the last write, and the read kept, were strong;
 * (a word's cell only) its bytes were accessed apart and each has a cell of its own */
enum { SHADOW_IN_FLIGHT = 1, SHADOW_ASYNC_PROXY = 2, SHADOW_STRONG_WRITE = 4, SHADOW_STRONG_READ = 8, SHADOW_SPLIT = 16 };

/* The shadow of some memory: its last write, and one read since, each by a thread of the block at its
 * clock. A cell stands for a 4-byte word, each of whose bytes has that shadow; when an access touches only
 * part of a word, the word is split and each of its bytes gets a cell (a copy of the word's) until they
 * are the same again. So an access of whole words is checked once per word, and every byte keeps its own
 * history where accesses of single bytes or halves give it one. */
struct shadow_cell {
    uint32_t write_clock, read_clock;
    int32_t write_at, read_at;      /* the instructions (indexes into the kernel's code) */
    uint16_t writer, reader;        /* thread numbers in the block, NO_THREAD: none since the block began */
    uint16_t flags;
    uint16_t async_reads;           /* asynchronous reads in flight (wgmma, a bulk copy to global memory) */
};
/* No padding, so two cells are the same when their bytes are (racecheck.c, same_cell) */
_Static_assert(sizeof(struct shadow_cell) == 24, "a shadow_cell has no padding");

/* A stretch of memory's shadow, from its first (4-byte aligned) byte: words[i] for bytes 4i..4i+3, and
 * bytes[j] for byte j while its word is split. */
typedef struct {
    shadow_cell *words, *bytes;
} shadow_map;

/* An access being checked: what the check of each cell it touches needs, worked out once (for a warp's
 * access, once for the warp and once per lane: accessor_lane). */
typedef struct {
    block *b;
    warp *w;
    const insn *in;
    const char *space;    /* "shared" or "global", for the report */
    int32_t here;         /* the instruction, an index into the kernel's code */
    const uint32_t *vc;   /* the warp's vector clock */
    uint32_t now;         /* its own tick: the access's clock */
    bool write, strong;
    uint32_t lane;        /* the lane making it; its thread number in the block; what it has seen of its warp's
                             other lanes (seen_by) */
    unsigned me;
    const uint32_t *seen;
} accessor;

/* Lane u of warp w: seen[t], the tick of w before which lane t's accesses are ordered before u's. */
static inline uint32_t *seen_by(block *b, unsigned warp_index, uint32_t lane)
{
    return b->lane_seen + ((size_t)warp_index * LANES + lane) * LANES;
}

accessor accessor_of(block *b, warp *w, const insn *in, const char *space, bool write, bool strong);

/* The access a's warp makes, by its lane `lane` (inline: a warp's access calls it for every lane) */
static inline void accessor_lane(accessor *a, uint32_t lane)
{
    a->lane = lane;
    a->me = a->w->index * LANES + lane;
    a->seen = seen_by(a->b, a->w->index, lane);
}

/* The access of bytes [from, from + n) of map m, at address `at` (for the report), by a's lane, checked
 * against their shadows and recorded in them; false after reporting a race. */
bool race_bytes(const accessor *a, shadow_map m, uint64_t from, uint64_t n, uint64_t at);

#endif
