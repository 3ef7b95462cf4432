/* racecheck.c: accesses to shared memory by two threads that nothing orders, at least one of them a
 * write: the hazards compute-sanitizer's racecheck reports (write-after-write, read-after-write,
 * write-after-read), found the way a happens-before race detector finds them.
 *
 * What orders two accesses, from the PTX ISA ("Memory Consistency Model"; "bar, barrier";
 * "bar.warp.sync"; "mbarrier"; "Proxies"; "cp.async"):
 *   - program order: one thread's accesses are ordered;
 *   - a barrier (bar.sync, barrier.sync, bar.red, bar.arrive): what a thread did before arriving is
 *     ordered before what the waiting threads do after it completes;
 *   - bar.warp.sync ("guarantees memory ordering among threads participating in barrier");
 *   - an mbarrier: arrivals on a phase (and the bytes a bulk copy completes on it) are ordered before
 *     what a thread does after its try_wait or test_wait has seen that phase complete.
 * Threads of one warp are not in lock step: lanes of a warp are ordered only by these, too.
 *
 * How: vector clocks, one per warp (every lane of a warp passes a barrier together). Warp w's clock
 * vc[w][w] ticks at each synchronization it releases; vc[w][v] is the latest tick of warp v that w has
 * acquired. Bulk copies write as an agent of their own, not as the thread that issued them: each
 * mbarrier a copy completes on has a column too, which ticks at each landing and reaches a warp only
 * through the mbarrier's phase. Lanes of one warp are ordered only where they meet (bar.warp.sync's
 * members, a barrier's waiters) or through what another lane released: seen[w][u][t] is the tick of warp w
 * before which lane t's accesses are ordered before lane u's. An access by thread t of warp v at clock c is
 * ordered before the current access by thread u of warp w when t == u, or v == w and u has seen it
 * (c < seen[w][u][t]), or v != w and w acquired it (c <= vc[w][v]). What a lane acquires from another
 * warp, it acquires for its whole warp (vc has one entry per warp), and what it acquires of its own warp's
 * releases, from all its warp's lanes up to the release (the clock does not say which lane released): a
 * release can hide a race between two other lanes of its warp when it reaches them through another warp.
 * Each byte of shared memory remembers its last write and one read since (thread, clock, instruction): a
 * write is checked against both, a read against the write. The bytes of a word share one record while
 * every access takes the whole word (racecheck.h: shadow_cell).
 *
 * Asynchronous copies are writes that happen at some moment between their issue and their wait:
 *   - cp.async: checked as a write when issued, in flight ("pending") until the issuing thread's
 *     cp.async.wait_group lands it, then the write of that thread at that moment. Any access of bytes in
 *     flight is a race: they may hold the old data or the new.
 *   - cp.async.bulk(.tensor) to shared memory: the same, landing as a write of the async proxy that the
 *     mbarrier it completes on orders before its waiters.
 *   - wgmma, and a bulk copy from shared to global memory, read through the async proxy at some moment
 *     between their issue and their wait: checked as reads when issued, and "in flight" until the wait,
 *     so a write to those bytes meanwhile is a race. A generic-proxy write they read (st.shared,
 *     cp.async) must be followed by fence.proxy.async in the writing thread ("Proxies": "a cross-proxy
 *     fence is required to synchronize across proxies"), besides being ordered before them as above.
 *   - an mbarrier a bulk copy completes on is written by the async proxy: its mbarrier.init (a generic
 *     write) must be followed by fence.mbarrier_init (or fence.proxy.async) in the initialising thread,
 *     and that fence ordered before the copy's issue.
 * Strong accesses (atomics; ld/st .relaxed, .acquire, .release, .volatile) do not race with each other
 * ("Conflict and Data-races": a data race needs accesses that are not morally strong), but do with plain
 * ones; a release and an acquire of one word order what comes before and after them.
 * What it does not see: one read is remembered per byte, so a write that races only with an earlier of
 * several unordered reads goes unreported; the mbarrier objects themselves are synchronization, not data. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "interp.h"
#include "racecheck.h"

/* An mbarrier's clocks: what the arrivals on its current phase release, and what its last completed
 * phase released (a waiter that sees it complete acquires that). */
struct race_mbar {
    uint64_t at;               /* its shared offset, or (RACE_GLOBAL_WORD | address) for a word of global memory */
    uint32_t *arrived, *completed;
    uint32_t landings;         /* its copy agent's clock */
    uint16_t init_thread;      /* the mbarrier.init that made it, by this thread at this clock (NO_THREAD: none) */
    uint32_t init_clock;
    int32_t init_at;
};

/* A vector clock's entries: the warps', then the copy agents'. */
static inline unsigned clock_width(const block *b) { return b->n_warps + COPY_AGENTS; }

static inline uint32_t *clock_of(block *b, unsigned warp_index) { return b->vc + (size_t)warp_index * clock_width(b); }

static void join(uint32_t *into, const uint32_t *from, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (from[i] > into[i])
            into[i] = from[i];
}

static const shadow_cell no_access = {.writer = NO_THREAD, .reader = NO_THREAD};

static inline uint64_t shared_words(const block *b) { return b->smem_size ? (b->smem_size + 3) / 4 : 1; }

static inline shadow_map shared_shadow(const block *b) { return (shadow_map){b->shadow_words, b->shadow_bytes}; }

bool race_alloc(block *b)
{
    b->shadow_words = malloc(shared_words(b) * sizeof *b->shadow_words);
    b->shadow_bytes = malloc(4 * shared_words(b) * sizeof *b->shadow_bytes); /* a split word's, set when split */
    b->vc = malloc((size_t)b->n_warps * clock_width(b) * sizeof *b->vc);
    b->lane_seen = malloc((size_t)b->n_warps * LANES * LANES * sizeof *b->lane_seen);
    b->fence_clock = malloc((size_t)b->n_warps * LANES * sizeof *b->fence_clock);
    b->init_fence_clock = malloc((size_t)b->n_warps * LANES * sizeof *b->init_fence_clock);
    return b->shadow_words && b->shadow_bytes && b->vc && b->lane_seen && b->fence_clock && b->init_fence_clock;
}

void race_begin_block(block *b)
{
    for (uint64_t i = 0; i < shared_words(b); i++)
        b->shadow_words[i] = no_access;
    memset(b->vc, 0, (size_t)b->n_warps * clock_width(b) * sizeof *b->vc);
    for (unsigned w = 0; w < b->n_warps; w++)
        clock_of(b, w)[w] = 1;
    memset(b->lane_seen, 0, (size_t)b->n_warps * LANES * LANES * sizeof *b->lane_seen);
    memset(b->fence_clock, 0, (size_t)b->n_warps * LANES * sizeof *b->fence_clock);
    memset(b->init_fence_clock, 0, (size_t)b->n_warps * LANES * sizeof *b->init_fence_clock);
    b->n_race_mbars = 0;
    for (unsigned w = 0; w < b->n_warps; w++)
        b->warps[w].fenced = false, b->warps[w].n_strong_reads = 0;
}

accessor accessor_of(block *b, warp *w, const insn *in, const char *space, bool write, bool strong)
{
    const uint32_t *vc = clock_of(b, w->index);
    return (accessor){.b = b, .w = w, .in = in, .space = space, .here = (int32_t)(in - b->k->code), .vc = vc,
                      .now = vc[w->index], .write = write, .strong = strong};
}

/* Whether an access by `thread` at `clock` is ordered before a's. */
static inline bool ordered(const accessor *a, unsigned thread, uint32_t clock)
{
    if (thread >= COPY_AGENT) /* a copy's landing: seen only through its mbarrier */
        return clock <= a->vc[a->b->n_warps + thread - COPY_AGENT];
    if (thread == a->me)
        return true;
    const unsigned other = thread / LANES;
    return other == a->w->index ? clock < a->seen[thread % LANES] : clock <= a->vc[other];
}

/* The other side of a race: "thread (x,y,z) at PTX line N (file.cu:L)", or for a copy's landing "the
 * bulk copy completing on the mbarrier at 0x.. issued at PTX line N (file.cu:L)". */
static void other_side(const block *b, unsigned t, int32_t at, char *out, size_t len)
{
    const emu_dim3 bd = b->launch->block;
    char line[256];
    describe_line(b, &b->k->code[at], line, sizeof line);
    if (t >= COPY_AGENT)
        snprintf(out, len, "the bulk copy completing on the mbarrier at shared 0x%" PRIx64 ", issued at %s",
                 b->race_mbars[t - COPY_AGENT].at, line);
    else
        snprintf(out, len, "thread (%u,%u,%u) at %s", t % bd.x, t / bd.x % bd.y, t / (bd.x * bd.y), line);
}

static bool report(block *b, warp *w, const insn *in, uint32_t lane, const char *space, uint64_t at,
                   const char *mine, const char *theirs, unsigned other, int32_t other_at, const char *why)
{
    char other_name[400];
    other_side(b, other, other_at, other_name, sizeof other_name);
    fault(b, in, (int)lane, w, EMU_ERR_RACE, "racecheck: %s of %s 0x%" PRIx64 " races with the %s by %s: %s", mine,
          space, at, theirs, other_name, why);
    return false;
}

/* a's access races with `theirs` by `other`: the report, naming a's kind of access. */
static bool race_report(const accessor *a, uint64_t at, const char *theirs, unsigned other, int32_t other_at,
                        const char *why)
{
    const char *mine = a->write ? (a->strong ? "strong write" : "write") : (a->strong ? "strong read" : "read");
    return report(a->b, a->w, a->in, a->lane, a->space, at, mine, theirs, other, other_at, why);
}

static const char *const unordered = "no barrier, bar.warp.sync or mbarrier wait orders them";

/* a's access of the memory cell s stands for, at `at`, against its shadow and recorded there; false after
 * reporting a race. */
static inline __attribute__((always_inline)) bool race_cell(const accessor *a, shadow_cell *s, uint64_t at)
{
    if (s->flags & SHADOW_IN_FLIGHT)
        return race_report(a, at, "asynchronous copy", s->writer, s->write_at, "the copy is in flight, not yet waited for");
    /* two strong accesses never race ("Conflict and Data-races": morally strong) */
    if (s->writer != NO_THREAD && !(a->strong && (s->flags & SHADOW_STRONG_WRITE)) && !ordered(a, s->writer, s->write_clock))
        return race_report(a, at, "write", s->writer, s->write_at, unordered);
    if (a->write && s->async_reads) /* the reader is one of the reads in flight */
        return race_report(a, at, "asynchronous read still in flight", s->reader, s->read_at, "its wait has not come yet");
    if (a->write) {
        if (s->reader != NO_THREAD && !(a->strong && (s->flags & SHADOW_STRONG_READ)) &&
            !ordered(a, s->reader, s->read_clock))
            return race_report(a, at, "read", s->reader, s->read_at, unordered);
        *s = (shadow_cell){a->now, 0, a->here, 0, (uint16_t)a->me, NO_THREAD, a->strong ? SHADOW_STRONG_WRITE : 0, 0};
    } else if (s->reader == NO_THREAD || ordered(a, s->reader, s->read_clock)) {
        /* an unordered earlier read is kept: it is the one a later write may race with */
        s->reader = (uint16_t)a->me, s->read_clock = a->now, s->read_at = a->here;
        s->flags = (uint16_t)((s->flags & ~SHADOW_STRONG_READ) | (a->strong ? SHADOW_STRONG_READ : 0));
    }
    return true;
}

static inline bool same_cell(const shadow_cell *x, const shadow_cell *y) { return !memcmp(x, y, sizeof *x); }

/* shadow_unit's other cases: a part of a word, or a word split into its bytes (joined again when they are the
 * same, and the access takes the whole word). */
static __attribute__((noinline)) shadow_cell *split_unit(shadow_map m, uint64_t i, uint64_t end, uint64_t *next)
{
    shadow_cell *word = &m.words[i / 4], *bytes = &m.bytes[i & ~(uint64_t)3];
    const bool whole = (i & 3) == 0 && end - i >= 4;
    if (whole && same_cell(&bytes[0], &bytes[1]) && same_cell(&bytes[0], &bytes[2]) &&
        same_cell(&bytes[0], &bytes[3])) {
        *word = bytes[0]; /* joined: a byte's cell never has SHADOW_SPLIT */
        *next = i + 4;
        return word;
    }
    if (!(word->flags & SHADOW_SPLIT)) {
        for (int k = 0; k < 4; k++)
            bytes[k] = *word;
        word->flags |= SHADOW_SPLIT;
    }
    *next = i + 1;
    return &m.bytes[i];
}

/* The cell for bytes [i, *next) of an access of bytes [i, end): the word's own cell when the access takes
 * the whole word and its bytes share one shadow (a split word whose bytes are the same again is joined
 * first), else byte i's own cell, its word split first. */
static inline shadow_cell *shadow_unit(shadow_map m, uint64_t i, uint64_t end, uint64_t *next)
{
    shadow_cell *word = &m.words[i / 4];
    if ((i & 3) == 0 && end - i >= 4 && !(word->flags & SHADOW_SPLIT)) { /* the common case: a whole word */
        *next = i + 4;
        return word;
    }
    return split_unit(m, i, end, next);
}

/* A cell that held what the cell before it held, before this access checked that one, gets the same verdict
 * (no race) and the same record: a copy of it. The words of a vector access mostly have one history (one
 * thread's st.shared.v4 or cp.async wrote them together), so each is checked once, not once per word. */
static bool race_cells(const accessor *a, shadow_map m, uint64_t from, uint64_t n, uint64_t at)
{
    const shadow_cell *checked = NULL; /* the cell checked last, and what it held before */
    shadow_cell held;
    for (uint64_t i = from, end = from + n, next; i < end; i = next) {
        shadow_cell *s = shadow_unit(m, i, end, &next);
        if (checked && same_cell(s, &held)) {
            *s = *checked;
            continue;
        }
        if (next < end) /* a cell follows that may be compared with this one */
            held = *s;
        if (!race_cell(a, s, at + (i - from)))
            return false;
        checked = s;
    }
    return true;
}

/* Whether the k whole words from `word` on share one history (race_cells's rule: then the first one's verdict
 * and record are every one's). */
static inline bool one_history(const shadow_cell *word, uint64_t k)
{
    for (uint64_t i = 1; i < k; i++)
        if (!same_cell(&word[i], &word[0]))
            return false;
    return true;
}

/* race_bytes, inline where a warp's access calls it for every lane: up to four whole words (the most common
 * accesses: one word, or a vector of them) checked inline, once for all when they share one history (as the
 * words one thread's vector store wrote do), else each (as those different threads wrote); race_cells for
 * the rest (from a split word on, or bytes that are not whole words). */
static inline bool race_span(const accessor *a, shadow_map m, uint64_t from, uint64_t n, uint64_t at)
{
    if ((from & 3) == 0 && (n & 3) == 0 && n <= 16) {
        shadow_cell *word = &m.words[from / 4];
        const uint64_t k = n / 4;
        for (uint64_t i = 0; i < k; i++)
            if (word[i].flags & SHADOW_SPLIT)
                return race_cells(a, m, from, n, at);
        if (one_history(word, k)) {
            if (k > 0 && !race_cell(a, word, at))
                return false;
            for (uint64_t i = 1; i < k; i++)
                word[i] = word[0];
            return true;
        }
        for (uint64_t i = 0; i < k; i++)
            if (!race_cell(a, &word[i], at + 4 * i))
                return false;
        return true;
    }
    return race_cells(a, m, from, n, at);
}

bool race_bytes(const accessor *a, shadow_map m, uint64_t from, uint64_t n, uint64_t at)
{
    return race_span(a, m, from, n, at);
}

bool race_access(block *b, warp *w, const insn *in, uint32_t lane, uint64_t addr, uint64_t size, bool write,
                 bool strong)
{
    accessor a = accessor_of(b, w, in, "shared", write, strong);
    accessor_lane(&a, lane);
    return race_span(&a, shared_shadow(b), addr, size, addr);
}

bool race_warp_access(block *b, warp *w, const insn *in, uint32_t lanes, const uint64_t *address, uint64_t base,
                      uint64_t size, bool write)
{
    accessor a = accessor_of(b, w, in, "shared", write, false);
    const shadow_map m = shared_shadow(b);
    FOR_LANES(lanes, l) {
        accessor_lane(&a, l);
        if (!race_span(&a, m, address[l] - base, size, address[l] - base))
            return false;
    }
    return true;
}

/* Bytes [addr, addr + size) in flight: an asynchronous copy's, written at some moment before its wait. */
static inline void mark_in_flight(shadow_map m, uint64_t addr, uint64_t size)
{
    for (uint64_t at = addr, next; at < addr + size; at = next)
        shadow_unit(m, at, addr + size, &next)->flags = SHADOW_IN_FLIGHT;
}

bool race_async_issue(block *b, warp *w, const insn *in, uint32_t lane, uint64_t addr, uint64_t size)
{
    if (!race_access(b, w, in, lane, addr, size, true, false))
        return false;
    mark_in_flight(shared_shadow(b), addr, size);
    return true;
}

bool race_warp_async_issue(block *b, warp *w, const insn *in, uint32_t lanes, const uint64_t *offset, uint64_t size)
{
    accessor a = accessor_of(b, w, in, "shared", true, false);
    const shadow_map m = shared_shadow(b);
    FOR_LANES(lanes, l) {
        accessor_lane(&a, l);
        if (!race_span(&a, m, offset[l], size, offset[l]))
            return false;
        mark_in_flight(m, offset[l], size);
    }
    return true;
}

void race_async_land(block *b, const warp *w, uint32_t lane, uint64_t addr, uint64_t size, int32_t issued_at)
{
    const uint32_t now = clock_of(b, w->index)[w->index];
    for (uint64_t at = addr, next; at < addr + size; at = next)
        *shadow_unit(shared_shadow(b), at, addr + size, &next) =
            (shadow_cell){now, 0, issued_at, 0, (uint16_t)(w->index * LANES + lane), NO_THREAD, 0, 0};
}

bool race_async_read_begin(block *b, warp *w, const insn *in, uint32_t lane, const uint64_t *spans, int n,
                           uint64_t size)
{
    accessor reader = accessor_of(b, w, in, "shared", false, false);
    accessor_lane(&reader, lane);
    const shadow_map m = shared_shadow(b);
    for (int span = 0; span < n; span++) {
        const shadow_cell *checked = NULL; /* as race_cells: a cell with the history of the one before gets its
                                              record */
        shadow_cell held;
        for (uint64_t at = spans[span], end = at + size, next; at < end; at = next) {
            shadow_cell *s = shadow_unit(m, at, end, &next);
            if (checked && same_cell(s, &held)) {
                *s = *checked;
                continue;
            }
            held = *s;
            if (s->writer != NO_THREAD && !(s->flags & (SHADOW_IN_FLIGHT | SHADOW_ASYNC_PROXY)) &&
                b->fence_clock[s->writer] < s->write_clock)
                return report(b, w, in, lane, "shared", at, "asynchronous read (async proxy)", "write (generic proxy)",
                              s->writer, s->write_at, "the writer ran no fence.proxy.async after it");
            if (!race_cell(&reader, s, at))
                return false;
            if (s->async_reads < UINT16_MAX)
                s->async_reads++;
            checked = s;
        }
    }
    return true;
}

void race_async_read_end(block *b, const uint64_t *spans, int n, uint64_t size)
{
    const shadow_map m = shared_shadow(b);
    for (int span = 0; span < n; span++)
        for (uint64_t at = spans[span], end = at + size, next; at < end; at = next) {
            shadow_cell *s = shadow_unit(m, at, end, &next);
            if (s->async_reads > 0)
                s->async_reads--;
        }
}

/* ---- synchronization ------------------------------------------------------------------------- */

static void race_tick(block *b, const warp *w) { clock_of(b, w->index)[w->index]++; }

void race_release(block *b, const warp *w, uint32_t *into)
{
    join(into, clock_of(b, w->index), clock_width(b));
    race_tick(b, w);
}

/* What `from` holds of this warp's own tick (a lane's release into it, reaching back) the acquiring lanes
 * take from every lane: which lane released it, the vector clock does not say. */
void race_acquire(block *b, const warp *w, const uint32_t *from, uint32_t lanes)
{
    join(clock_of(b, w->index), from, clock_width(b));
    const uint32_t own = from[w->index] + 1; /* its accesses before the release: clocks up to from[w] */
    FOR_LANES(lanes, u) {
        uint32_t *seen = seen_by(b, w->index, u);
        for (uint32_t t = 0; t < LANES; t++)
            seen[t] = seen[t] > own ? seen[t] : own;
    }
}

void race_lanes_meet(block *b, const warp *w, uint32_t lanes)
{
    uint32_t joined[LANES] = {0}; /* what any of them has seen, each of them now sees */
    FOR_LANES(lanes, u) {
        const uint32_t *seen = seen_by(b, w->index, u);
        for (uint32_t t = 0; t < LANES; t++)
            joined[t] = joined[t] > seen[t] ? joined[t] : seen[t];
    }
    race_tick(b, w);
    const uint32_t now = clock_of(b, w->index)[w->index]; /* and each other's accesses until now */
    FOR_LANES(lanes, t) joined[t] = now;
    FOR_LANES(lanes, u) memcpy(seen_by(b, w->index, u), joined, sizeof joined);
}

void race_proxy_fence(block *b, const warp *w, uint32_t lanes)
{
    FOR_LANES(lanes, l) b->fence_clock[w->index * LANES + l] = clock_of(b, w->index)[w->index];
    race_tick(b, w);
}

void race_mbar_init_fence(block *b, const warp *w, uint32_t lanes)
{
    FOR_LANES(lanes, l) b->init_fence_clock[w->index * LANES + l] = clock_of(b, w->index)[w->index];
    race_tick(b, w);
}

static struct race_mbar *mbar_clocks(block *b, uint64_t at)
{
    for (int i = 0; i < b->n_race_mbars; i++)
        if (b->race_mbars[i].at == at)
            return &b->race_mbars[i];
    if (b->n_race_mbars == b->cap_race_mbars) {
        b->cap_race_mbars = b->cap_race_mbars ? 2 * b->cap_race_mbars : 16;
        b->race_mbars = realloc(b->race_mbars, (size_t)b->cap_race_mbars * sizeof *b->race_mbars);
        for (int i = b->n_race_mbars; i < b->cap_race_mbars; i++)
            b->race_mbars[i].arrived = b->race_mbars[i].completed = NULL;
    }
    struct race_mbar *m = &b->race_mbars[b->n_race_mbars++];
    const size_t bytes = clock_width(b) * sizeof *m->arrived;
    m->at = at;
    m->arrived = realloc(m->arrived, bytes);
    m->completed = realloc(m->completed, bytes);
    memset(m->arrived, 0, bytes);
    memset(m->completed, 0, bytes);
    m->landings = 0;
    m->init_thread = NO_THREAD;
    return m;
}

void race_mbar_init(block *b, const warp *w, uint32_t lane, const insn *in, uint32_t at)
{
    struct race_mbar *m = mbar_clocks(b, at);
    memset(m->arrived, 0, clock_width(b) * sizeof *m->arrived);
    memset(m->completed, 0, clock_width(b) * sizeof *m->completed);
    m->init_thread = (uint16_t)(w->index * LANES + lane);
    m->init_clock = clock_of(b, w->index)[w->index];
    m->init_at = (int32_t)(in - b->k->code);
}

bool race_mbar_async_use(block *b, warp *w, const insn *in, uint32_t lane, uint32_t at)
{
    const struct race_mbar *m = mbar_clocks(b, at);
    if (m->init_thread == NO_THREAD)
        return true; /* not initialised in this block: mbar_at has said so already */
    const unsigned t = m->init_thread;
    const uint32_t fenced = b->fence_clock[t] > b->init_fence_clock[t] ? b->fence_clock[t] : b->init_fence_clock[t];
    accessor issue = accessor_of(b, w, in, "shared", false, false);
    accessor_lane(&issue, lane);
    const char *why = fenced < m->init_clock           ? "ran no fence.mbarrier_init (or fence.proxy.async) after it"
                      : !ordered(&issue, t, fenced) ? "fenced it, but nothing orders that fence before this issue"
                                                        : NULL;
    if (!why)
        return true;
    char init_name[400];
    other_side(b, t, m->init_at, init_name, sizeof init_name);
    fault(b, in, (int)lane, w, EMU_ERR_RACE, "racecheck: a bulk copy completes on the mbarrier at shared 0x%x, but the "
          "async proxy may not see its mbarrier.init by %s yet: that thread %s", at, init_name, why);
    return false;
}

void race_mbar_arrive(block *b, const warp *w, uint32_t at) { race_release(b, w, mbar_clocks(b, at)->arrived); }

bool race_copy_landed(block *b, warp *w, const insn *in, uint32_t mbar, uint64_t addr, uint64_t size,
                      int32_t issued_at)
{
    struct race_mbar *m = mbar_clocks(b, mbar);
    const unsigned agent = (unsigned)(m - b->race_mbars);
    if (agent >= COPY_AGENTS) {
        fault(b, in, 0, w, EMU_ERR_INVALID, "racecheck follows the bulk copies of %d mbarriers per block; this is "
              "one more (EMU_RACECHECK=0 runs without racecheck)", COPY_AGENTS);
        return false;
    }
    m->landings++;
    for (uint64_t at = addr, next; at < addr + size; at = next)
        *shadow_unit(shared_shadow(b), at, addr + size, &next) =
            (shadow_cell){m->landings, 0, issued_at, 0, (uint16_t)(COPY_AGENT + agent), NO_THREAD, SHADOW_ASYNC_PROXY, 0};
    m->arrived[b->n_warps + agent] = m->landings; /* what the phase's waiters will see of the agent */
    return true;
}

void race_mbar_phase_complete(block *b, uint32_t at)
{
    struct race_mbar *m = mbar_clocks(b, at);
    join(m->completed, m->arrived, clock_width(b));
    memset(m->arrived, 0, clock_width(b) * sizeof *m->arrived);
}

void race_mbar_acquire(block *b, const warp *w, uint32_t at, uint32_t lanes)
{
    race_acquire(b, w, mbar_clocks(b, at)->completed, lanes);
}

/* st.release / atom.release on a word of memory, and ld.acquire / atom.acquire of it ("Release and Acquire
 * Patterns"): the word keeps a clock as an mbarrier does. An acquire takes whatever was released there,
 * whether or not it read that release's value: it can miss a race, never invent one. */
void race_release_at(block *b, const warp *w, uint64_t at) { race_release(b, w, mbar_clocks(b, at)->completed); }

void race_acquire_at(block *b, const warp *w, uint64_t at, uint32_t lanes)
{
    race_acquire(b, w, mbar_clocks(b, at)->completed, lanes);
}

/* A fence (membar, fence.sc, fence.acq_rel) and strong accesses make the release and acquire patterns of
 * "Memory Consistency Model": a fence, then a strong write, releases what came before the fence; a strong
 * read, then a fence, acquires what the write it read released. A warp has one clock, so: a strong write
 * after the warp's first fence releases at its word everything up to the write, and a fence acquires at
 * each word the warp's strong reads read since its last fence. Releasing more than the fence covers can
 * hide a race, never invent one. */
bool race_strong_access(block *b, warp *w, const insn *in, uint32_t lane, uint64_t at, bool reads, bool writes)
{
    if (writes && w->fenced)
        race_release_at(b, w, at);
    if (!reads)
        return true;
    for (int i = 0; i < w->n_strong_reads; i++)
        if (w->strong_reads[i] == at)
            return true;
    if (w->n_strong_reads == w->cap_strong_reads) {
        const int cap = w->cap_strong_reads ? 2 * w->cap_strong_reads : 8;
        uint64_t *grown = realloc(w->strong_reads, (size_t)cap * sizeof *grown);
        if (!grown) {
            fault(b, in, (int)lane, w, EMU_ERR_LAUNCH, "racecheck: out of host memory for the words a warp's strong "
                  "loads read (EMU_RACECHECK=0 runs without racecheck)");
            return false;
        }
        w->strong_reads = grown, w->cap_strong_reads = cap;
    }
    w->strong_reads[w->n_strong_reads++] = at;
    return true;
}

void race_fence(block *b, warp *w, uint32_t lanes)
{
    for (int i = 0; i < w->n_strong_reads; i++)
        race_acquire_at(b, w, w->strong_reads[i], lanes);
    w->n_strong_reads = 0;
    w->fenced = true;
}

void race_free(block *b)
{
    for (int i = 0; i < b->cap_race_mbars; i++) {
        free(b->race_mbars[i].arrived);
        free(b->race_mbars[i].completed);
    }
    free(b->race_mbars);
    free(b->shadow_words);
    free(b->shadow_bytes);
    free(b->vc);
    free(b->lane_seen);
    free(b->fence_clock);
    free(b->init_fence_clock);
}
