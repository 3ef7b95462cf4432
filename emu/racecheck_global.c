/* racecheck_global.c: races in global memory, within a block and between the blocks of a launch.
 *
 * Within a block, global memory is checked as shared memory is (racecheck.c): the same vector clocks,
 * ordered by the same barriers, bar.warp.sync, mbarrier waits and release/acquire pairs; bar.sync orders
 * every state space ("bar, barrier": memory ordering among the participating threads). The shadow lives
 * in a hash table of the 16-byte granules the block has touched (an aligned vector access is one lookup;
 * a cell per word, and per byte of a split word: racecheck.h), emptied when the next block starts.
 *
 * Between blocks, nothing a block does at CTA scope (barriers, mbarriers) orders it with another block:
 * only the memory model's own synchronization at GPU scope could ("Memory Consistency Model": a release
 * and an acquire, fences, morally strong accesses). So a byte that one block of a launch wrote and
 * another block read or wrote is a race, unless both accesses were strong (atomics; .relaxed, .acquire,
 * .release, .volatile: "Conflict and Data-races"). When a block ends, the bytes it touched are merged
 * into the launch's table, which remembers for each byte one block that wrote it and one that read it.
 * A launch that synchronizes through global memory (a membar or fence other than the proxy fences, or a
 * release or acquire there) may order its blocks by it, as a last-block reduction does; this check
 * does not follow such protocols, so that launch's blocks are not checked against each other. The first
 * race between blocks is reported when the launch ends: it can miss a race, never invent one.
 *
 * What it does not see:
 *  - reads of an allocation before the launch first writes it. A kernel reads mostly its inputs, which
 *    it never writes; keeping a shadow for each of their bytes would cost a table entry per byte read,
 *    for races that need a write. A write racing with such a read goes unreported.
 *  - the global side of a bulk copy (TMA), which the async proxy reads at its landing;
 *  - between blocks, the allocations a launch writes after its first 64 (within a block they are checked),
 *    and a word whose bytes blocks touch apart when the host has no memory left to record them apart;
 *  - the blocks the timing model runs (--model: launch.c runs them apart from the grid).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "racecheck.h"

/* ---- one block's bytes ------------------------------------------------------------------------------ */

enum { GRANULE = 16 };

/* A slot is live when its generation is the table's: a block starts by moving to a new generation. */
typedef struct {
    uint64_t addr;            /* the granule's first byte */
    uint32_t generation;
    int32_t allocation;       /* its allocation's index in the launch's list of written ones, or -1 */
    shadow_cell words[GRANULE / 4];
} global_slot;

/* Slot h's cells are slots[h].words and, for its split words, bytes[h]: kept apart, the slots are a quarter
 * of the size, and the lookups that every access makes stay in fewer cache lines; a granule's byte cells are
 * written (and their pages taken) only when one of its words is split. */
struct global_shadow {
    global_slot *slots;
    shadow_cell (*bytes)[GRANULE];
    uint64_t mask;
    uint32_t generation;
    uint64_t *live, used;     /* the live slots' indexes, in the order they were taken: what a block touched */
};

static uint64_t slot_hash(uint64_t addr, int32_t allocation)
{
    addr = (addr ^ (uint64_t)(uint32_t)allocation) * 0x9e3779b97f4a7c15ull;
    return addr ^ addr >> 29;
}

static bool table_make(struct global_shadow *t, uint64_t capacity)
{
    t->slots = calloc(capacity, sizeof *t->slots);
    t->bytes = calloc(capacity, sizeof *t->bytes);
    t->live = malloc(capacity / 2 * sizeof *t->live); /* a table grows before it is half full */
    t->mask = capacity - 1;
    t->used = 0;
    return t->slots && t->bytes && t->live;
}

static void table_free(struct global_shadow *t)
{
    free(t->slots), free(t->bytes), free(t->live);
}

/* Twice the slots, the live ones moved over (false: out of host memory). */
static bool table_grow(struct global_shadow *t)
{
    struct global_shadow bigger = {.generation = t->generation};
    if (!table_make(&bigger, 2 * (t->mask + 1))) {
        table_free(&bigger);
        return false;
    }
    for (uint64_t i = 0; i < t->used; i++) {
        const global_slot *from = &t->slots[t->live[i]];
        uint64_t h = slot_hash(from->addr, from->allocation) & bigger.mask;
        while (bigger.slots[h].generation == bigger.generation)
            h = (h + 1) & bigger.mask;
        bigger.slots[h] = *from;
        for (int word = 0; word < GRANULE / 4; word++)
            if (from->words[word].flags & SHADOW_SPLIT)
                memcpy(&bigger.bytes[h][4 * word], &t->bytes[t->live[i]][4 * word], 4 * sizeof(shadow_cell));
        bigger.live[bigger.used++] = h;
    }
    table_free(t);
    *t = bigger;
    return true;
}

/* The shadow of the granule at addr (of that allocation: two could share a granule), a new one (nothing
 * since the block began) if the block has not touched it; false when the host has no memory for the table. */
static bool granule_of(struct global_shadow *t, uint64_t addr, int32_t allocation, shadow_map *shadow)
{
    if (2 * (t->used + 1) > t->mask + 1 && !table_grow(t))
        return false;
    uint64_t h = slot_hash(addr, allocation) & t->mask;
    for (;; h = (h + 1) & t->mask) {
        global_slot *slot = &t->slots[h];
        if (slot->generation != t->generation) {
            slot->addr = addr, slot->generation = t->generation, slot->allocation = allocation;
            for (int i = 0; i < GRANULE / 4; i++)
                slot->words[i] = (shadow_cell){.writer = NO_THREAD, .reader = NO_THREAD};
            t->live[t->used++] = h;
            break;
        }
        if (slot->addr == addr && slot->allocation == allocation)
            break;
    }
    *shadow = (shadow_map){t->slots[h].words, t->bytes[h]};
    return true;
}

/* ---- the launch's bytes -------------------------------------------------------------------------------- */

enum { WRITER, READER, WRITTEN_ALLOCATIONS = 64 };

/* What the launch knows of some bytes: a block that wrote them and one that read them (their linear ids + 1;
 * 0: none), the thread and instruction of that access, and whether it was strong. */
typedef struct {
    uint32_t block[2];
    int32_t at[2];
    uint16_t thread[2];
    bool strong[2];
} launch_access;

/* A word of an allocation the launch wrote: one record for its four bytes while every block touches it
 * whole, as most do; once a block touches one byte of it alone, a record per byte (`split`: their index + 1
 * in the launch's list of split words). A record a word, not a byte, keeps the table about a quarter the
 * size: a launch touches each of its output's pages once, and the pages, not the records, cost the time. */
typedef struct {
    launch_access whole;
    uint32_t split;
} launch_word;

struct launch_race {
    pthread_mutex_t lock;     /* merging blocks, from the host threads that ran them */
    atomic_bool synchronized; /* the launch synchronized through global memory: its blocks are not checked */
    /* the allocations the launch has written, in the order it first wrote them: a launch_word for each of
     * their words (calloc's pages: only the words blocks touch take memory) */
    struct {
        _Atomic uint64_t base;
        uint64_t size;
        launch_word *words;
    } written[WRITTEN_ALLOCATIONS];
    atomic_int n_written;
    launch_access (*split)[4]; /* the split words' bytes */
    uint32_t n_split, split_capacity;
    bool found;               /* a race between blocks, described in `first` */
    char first[1024];
};

launch_race *launch_race_new(void)
{
    launch_race *lr = calloc(1, sizeof *lr);
    if (lr)
        pthread_mutex_init(&lr->lock, NULL);
    return lr;
}

void launch_race_free(launch_race *lr)
{
    if (!lr)
        return;
    for (int i = 0; i < atomic_load(&lr->n_written); i++)
        free(lr->written[i].words);
    free(lr->split);
    pthread_mutex_destroy(&lr->lock);
    free(lr);
}

/* The launch's word of an allocation at `base` that holds the byte at addr: words are the aligned ones, as the
 * block's shadow has them, so an allocation at an unaligned base (a module variable) shares its first one. */
static uint64_t word_of(uint64_t base, uint64_t addr)
{
    return addr / 4 - base / 4;
}

/* The allocation's index in the launch's list of written ones, or -1. */
static int32_t written_index(launch_race *lr, uint64_t base)
{
    const int n = atomic_load_explicit(&lr->n_written, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if (atomic_load_explicit(&lr->written[i].base, memory_order_relaxed) == base)
            return i;
    return -1;
}

/* The same, the allocation added if it is not there (-1: the list is full, or no host memory for it). */
static int32_t note_written(launch_race *lr, const emu_alloc *a)
{
    int32_t i = written_index(lr, a->base);
    if (i >= 0)
        return i;
    pthread_mutex_lock(&lr->lock);
    i = written_index(lr, a->base);
    const int n = atomic_load_explicit(&lr->n_written, memory_order_relaxed);
    const uint64_t words = word_of(a->base, a->base + a->size - 1) + 1;
    if (i < 0 && n < WRITTEN_ALLOCATIONS && (lr->written[n].words = calloc(words, sizeof(launch_word)))) {
        lr->written[n].size = a->size;
        atomic_store_explicit(&lr->written[n].base, a->base, memory_order_relaxed);
        atomic_store_explicit(&lr->n_written, n + 1, memory_order_release);
        i = n;
    }
    pthread_mutex_unlock(&lr->lock);
    return i;
}

/* ---- what the interpreter calls ----------------------------------------------------------------------- */

bool race_global_attach(block *b, launch_race *lr)
{
    b->global_shadow = calloc(1, sizeof *b->global_shadow);
    if (!b->global_shadow || !table_make(b->global_shadow, 4096))
        return false; /* race_global_free frees what it got */
    b->launch_race = lr;
    return true;
}

void race_global_begin_block(block *b)
{
    if (!b->global_shadow)
        return;
    struct global_shadow *t = b->global_shadow;
    if (++t->generation == 0) { /* after 2^32 blocks, slots of generation 0 would look live again */
        memset(t->slots, 0, (t->mask + 1) * sizeof *t->slots);
        t->generation = 1;
    }
    t->used = 0;
}

bool race_global_access(block *b, warp *w, const insn *in, uint32_t lane, const emu_alloc *a, uint64_t addr,
                        uint64_t size, bool write, bool strong)
{
    const int32_t allocation = write ? note_written(b->launch_race, a) : written_index(b->launch_race, a->base);
    if (!write && allocation < 0)
        return true; /* not kept: see "What it does not see" above */
    accessor access = accessor_of(b, w, in, "global", write, strong);
    accessor_lane(&access, lane);
    for (uint64_t at = addr, end = addr + size; at < end;) {
        const uint64_t granule = at & ~(uint64_t)(GRANULE - 1), n = (end < granule + GRANULE ? end : granule + GRANULE) - at;
        shadow_map shadow;
        if (!granule_of(b->global_shadow, granule, allocation, &shadow)) {
            fault(b, in, (int)lane, w, EMU_ERR_LAUNCH, "racecheck: out of host memory for the shadow of global "
                  "memory (EMU_RACECHECK=0 runs without racecheck)");
            return false;
        }
        if (!race_bytes(&access, shadow, at - granule, n, at))
            return false;
        at += n;
    }
    return true;
}

bool race_global_keeps(block *b, const emu_alloc *a)
{
    return written_index(b->launch_race, a->base) >= 0;
}

void race_global_synchronized(block *b)
{
    if (b->launch_race)
        atomic_store(&b->launch_race->synchronized, true);
}

/* An access of the launch: "block (x,y,z) thread (x,y,z) at PTX line N (file.cu:L)", or with `first`
 * "PTX line N (file.cu:L), block (x,y,z) thread (x,y,z)" (the order of an error line's opening, emu.h). */
static void describe_access(const block *b, uint64_t block_id, unsigned thread, int32_t at, bool first, char *out,
                            size_t len)
{
    const emu_dim3 g = b->launch->grid, bd = b->launch->block;
    char line[256], who[96];
    describe_line(b, &b->k->code[at], line, sizeof line);
    snprintf(who, sizeof who, "block (%u,%u,%u) thread (%u,%u,%u)", (unsigned)(block_id % g.x),
             (unsigned)(block_id / g.x % g.y), (unsigned)(block_id / ((uint64_t)g.x * g.y)), thread % bd.x,
             thread / bd.x % bd.y, thread / (bd.x * bd.y));
    if (first)
        snprintf(out, len, "%s, %s", line, who);
    else
        snprintf(out, len, "%s at %s", who, line);
}

/* The first race between blocks, kept for the launch's end, as one error line. */
static void keep_race(launch_race *lr, const block *b, uint32_t me, uint64_t addr, int mine, unsigned my_thread,
                      int32_t my_at, const launch_access *other, int theirs)
{
    if (lr->found)
        return;
    lr->found = true;
    char this_side[400], other_side[400];
    describe_access(b, me - 1, my_thread, my_at, true, this_side, sizeof this_side);
    describe_access(b, other->block[theirs] - 1, other->thread[theirs], other->at[theirs], false, other_side,
                    sizeof other_side);
    snprintf(lr->first, sizeof lr->first, "kernel %s, %s: racecheck: %s of global 0x%" PRIx64 " races with the %s by "
             "%s: two blocks of one launch, and nothing orders them (only atomics, or a release and an acquire at "
             "GPU scope, can)", b->k->name, this_side, mine == WRITER ? "write" : "read", addr,
             theirs == WRITER ? "write" : "read", other_side);
}

/* One access of block `me` to the bytes of record e, from addr: against the launch's record, then recorded
 * there. */
static void merge_access(launch_race *lr, const block *b, uint32_t me, launch_access *e, uint64_t addr, int mine,
                         unsigned thread, int32_t at, bool strong)
{
    for (int theirs = WRITER; theirs <= READER; theirs++)
        if (e->block[theirs] && e->block[theirs] != me && (mine == WRITER || theirs == WRITER) &&
            !(strong && e->strong[theirs]))
            keep_race(lr, b, me, addr, mine, thread, at, e, theirs);
    /* keep a plain access over a strong one: it is the one that races with a later strong access */
    if (!e->block[mine] || e->strong[mine])
        e->block[mine] = me, e->thread[mine] = (uint16_t)thread, e->at[mine] = at, e->strong[mine] = strong;
}

/* The word's four byte records, made from its whole one the first time a block touches a byte of it alone
 * (NULL: out of host memory). */
static launch_access *split_word(launch_race *lr, launch_word *word)
{
    if (!word->split) {
        if (lr->n_split == lr->split_capacity) {
            const uint32_t capacity = lr->split_capacity ? 2 * lr->split_capacity : 64;
            launch_access(*more)[4] = realloc(lr->split, capacity * sizeof *more);
            if (!more)
                return NULL;
            lr->split = more, lr->split_capacity = capacity;
        }
        for (int byte = 0; byte < 4; byte++)
            lr->split[lr->n_split][byte] = word->whole;
        word->split = ++lr->n_split;
    }
    return lr->split[word->split - 1];
}

/* The `count` bytes from addr (a whole word, or one byte) that block `me` touched and that share the shadow
 * s, against the launch's record of them, then recorded there. */
static void merge_bytes(launch_race *lr, const block *b, uint32_t me, const shadow_cell *s, int32_t allocation,
                        uint64_t addr, int count)
{
    /* what this block did to the bytes: a write (then a read of them was its own), or a read */
    const int mine = s->writer != NO_THREAD ? WRITER : s->reader != NO_THREAD ? READER : -1;
    if (mine < 0)
        return;
    const bool strong = mine == WRITER ? s->flags & SHADOW_STRONG_WRITE : s->flags & SHADOW_STRONG_READ;
    const unsigned thread = mine == WRITER ? s->writer : s->reader;
    const int32_t at = mine == WRITER ? s->write_at : s->read_at;
    launch_word *word = &lr->written[allocation].words[word_of(lr->written[allocation].base, addr)];
    if (count == 4 && !word->split) {
        merge_access(lr, b, me, &word->whole, addr, mine, thread, at, strong);
        return;
    }
    launch_access *bytes = split_word(lr, word);
    if (!bytes)
        return; /* out of host memory: see "What it does not see" above */
    for (int i = 0; i < count; i++)
        merge_access(lr, b, me, &bytes[addr % 4 + i], addr + i, mine, thread, at, strong);
}

void race_global_end_block(block *b)
{
    launch_race *lr = b->launch_race;
    const struct global_shadow *t = b->global_shadow;
    if (!lr || b->status != EMU_OK)
        return;
    const emu_dim3 g = b->launch->grid;
    const uint32_t me = (uint32_t)(1 + b->ctaid.x + (uint64_t)g.x * (b->ctaid.y + (uint64_t)g.y * b->ctaid.z));
    pthread_mutex_lock(&lr->lock);
    for (uint64_t i = 0; i < t->used; i++) {
        const global_slot *slot = &t->slots[t->live[i]];
        const shadow_cell *bytes = t->bytes[t->live[i]];
        if (slot->allocation < 0)
            continue;
        /* bytes outside the allocation are never touched: a whole word's cell was taken by an access of all
         * four of its bytes */
        for (int word = 0; word < GRANULE / 4; word++) {
            const uint64_t addr = slot->addr + 4 * (uint64_t)word;
            if (!(slot->words[word].flags & SHADOW_SPLIT))
                merge_bytes(lr, b, me, &slot->words[word], slot->allocation, addr, 4);
            else
                for (int byte = 0; byte < 4; byte++)
                    merge_bytes(lr, b, me, &bytes[4 * word + byte], slot->allocation, addr + byte, 1);
        }
    }
    pthread_mutex_unlock(&lr->lock);
}

bool launch_race_result(launch_race *lr, char *err, size_t err_len)
{
    if (!lr || !lr->found || atomic_load(&lr->synchronized))
        return true;
    snprintf(err, err_len, "%s", lr->first);
    return false;
}

void race_global_free(block *b)
{
    if (b->global_shadow)
        table_free(b->global_shadow);
    free(b->global_shadow);
    b->global_shadow = NULL;
}
