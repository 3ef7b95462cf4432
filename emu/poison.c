/* poison.c: which registers a block start must poison again.
 *
 * Every register starts each block as poison (all bits set: NaN as a float, -1 as an integer), so a thread
 * that reads a register before writing it reads poison, never a value a thread of an earlier block left
 * there (block.c). Filling all of them costs a block start time in proportion to the registers the PTX
 * declares, and nvcc's PTX gives each value a register of its own: thousands in an unrolled kernel, 256
 * bytes each per warp: 32% of the host instructions of 07b's launches on a small problem (res4_3x3, N = 1, 16
 * output channels) went to filling them.
 *
 * Most never need it. A register that every path from the kernel's first instruction writes before any
 * instruction reads it is never seen unwritten, whatever it held before. That is a compiler's "definitely
 * assigned" analysis, a forward dataflow problem over the kernel's basic blocks: a register is written on
 * entry to a block when it is written on leaving every block that can jump or fall into it. A thread's
 * path is a path of this graph whatever the other lanes do, so what holds for every path holds for each
 * thread; and a lane whose register another lane reads (shfl.sync, the tensor cores' fragments) stands at
 * the same instruction, so it too has been down one of the paths that reach it.
 *
 * So: every register is poisoned once, when a block's registers are allocated (block_alloc), and at each
 * block start again only those some instruction writes (the others still hold their poison, or a
 * constant or special register block_start fills anyway) and some path may read before writing.
 *   - An instruction reads its sources, its guard and its address's base register; a wgmma also its
 *     accumulators (it adds to them unless told not to, which is a run-time value).
 *   - An instruction writes its destinations, unless it has a guard: a guarded write may not happen.
 *   - A kernel with a call or an indirect branch (brx.idx) has control flow this graph does not follow
 *     (functions' bodies, their frames, jump tables): all of its slots are poisoned at every start, as
 *     they are where the analysis would pass its limits (below).
 */
#include <stdlib.h>
#include <string.h>

#include "ptx.h"

/* The analysis's limits: words of bitsets (blocks x registers / 64) held at once, and words narrowed in all
 * its passes. Real kernels need a few hundred thousand of each; a hostile PTX file past either (many blocks,
 * or a graph along which what is written travels one block a pass) gets every register poisoned, which is
 * always right, and a load that takes a fraction of a second more, never minutes. */
#define MAX_BITSET_WORDS (1u << 23)
#define MAX_WORD_STEPS (1ull << 28)

static bool ends_block(const insn *in)
{
    return in->op == OP_BRA || in->op == OP_BRX || in->op == OP_CALL || in->op == OP_RET || in->op == OP_EXIT ||
           in->op == OP_TRAP;
}

/* Where control can go after instruction i, the last of its block: into succ (at most two). */
static int successors(const ptx_kernel *k, int i, int succ[2])
{
    const insn *in = &k->code[i];
    int n = 0;
    if (in->op == OP_BRA)
        succ[n++] = in->target;
    const bool stops = in->op == OP_BRA || in->op == OP_RET || in->op == OP_EXIT || in->op == OP_TRAP;
    if ((!stops || in->guard >= 0) && i + 1 < k->n_code) /* a guarded branch or exit may not be taken */
        succ[n++] = i + 1;
    return n;
}

static inline bool has(const uint64_t *set, int32_t slot) { return set[slot >> 6] >> (slot & 63) & 1; }
static inline void add(uint64_t *set, int32_t slot) { set[slot >> 6] |= 1ull << (slot & 63); }

/* What an instruction writes for certain: its destinations, if it has no guard. */
static void apply_writes(const ptx_kernel *k, const insn *in, uint64_t *written)
{
    if (in->guard >= 0)
        return;
    for (int i = 0; i < in->n_dst; i++)
        add(written, k->slots_of[in->operands + i]);
}

/* What an instruction reads where `written` may not hold it, into maybe_unwritten. */
static void note_reads(const ptx_kernel *k, const insn *in, const uint64_t *written, uint64_t *maybe_unwritten)
{
    const int32_t *o = k->slots_of + in->operands;
    for (int j = in->op == OP_WGMMA_MMA ? 0 : in->n_dst; j < in->n_dst + in->n_src; j++)
        if (!has(written, o[j]))
            add(maybe_unwritten, o[j]);
    if (in->guard >= 0 && !has(written, in->guard))
        add(maybe_unwritten, in->guard);
    if (in->addr_base >= 0 && !has(written, in->addr_base))
        add(maybe_unwritten, in->addr_base);
}

/* The basic blocks: one starts at the first instruction, at every branch target and after every instruction
 * that ends one. block_of[i]: instruction i's; start[b]: block b's first instruction (start[n]: n_code). */
static int find_blocks(const ptx_kernel *k, int *block_of, int *start)
{
    memset(block_of, 0, (size_t)k->n_code * sizeof *block_of); /* first 1 where a block starts */
    block_of[0] = 1;
    for (int i = 0; i < k->n_code; i++) {
        if (k->code[i].op == OP_BRA)
            block_of[k->code[i].target] = 1;
        if (ends_block(&k->code[i]) && i + 1 < k->n_code)
            block_of[i + 1] = 1;
    }
    int n = 0;
    for (int i = 0; i < k->n_code; i++) {
        if (block_of[i])
            start[n++] = i;
        block_of[i] = n - 1;
    }
    start[n] = k->n_code;
    return n;
}

/* Into maybe_unwritten, every register some path may read before writing it: what is written on entry to
 * each block, narrowed pass by pass (at first nothing at the first block, everything at the others) to
 * what every block before it leaves written until nothing changes; then each instruction's reads against
 * what is written where it stands. False past the limits above. */
static bool find_unwritten_reads(const ptx_kernel *k, int words, uint64_t *maybe_unwritten)
{
    int *block_of = malloc((size_t)k->n_code * sizeof *block_of);
    int *start = malloc(((size_t)k->n_code + 1) * sizeof *start);
    const int n_blocks = block_of && start ? find_blocks(k, block_of, start) : 0;
    const bool small = n_blocks && (uint64_t)n_blocks * (uint64_t)words <= MAX_BITSET_WORDS;
    uint64_t *written_in = small ? malloc((size_t)n_blocks * words * sizeof *written_in) : NULL;
    uint64_t *written = small ? malloc((size_t)words * sizeof *written) : NULL;
    bool ok = written_in && written;
    if (ok) {
        memset(written_in, 0xff, (size_t)n_blocks * words * sizeof *written_in);
        memset(written_in, 0, (size_t)words * sizeof *written_in);
        uint64_t steps = 0;
        for (bool changed = true; changed && ok;) {
            changed = false;
            ok = (steps += (uint64_t)n_blocks * (uint64_t)words) <= MAX_WORD_STEPS;
            for (int b = 0; ok && b < n_blocks; b++) {
                memcpy(written, written_in + (size_t)b * words, (size_t)words * sizeof *written);
                for (int i = start[b]; i < start[b + 1]; i++)
                    apply_writes(k, &k->code[i], written);
                int succ[2];
                const int n = successors(k, start[b + 1] - 1, succ);
                for (int s = 0; s < n; s++) {
                    uint64_t *in = written_in + (size_t)block_of[succ[s]] * words;
                    for (int w = 0; w < words; w++) {
                        changed |= (in[w] & written[w]) != in[w];
                        in[w] &= written[w];
                    }
                }
            }
        }
        for (int b = 0; ok && b < n_blocks; b++) {
            memcpy(written, written_in + (size_t)b * words, (size_t)words * sizeof *written);
            for (int i = start[b]; i < start[b + 1]; i++) {
                note_reads(k, &k->code[i], written, maybe_unwritten);
                apply_writes(k, &k->code[i], written);
            }
        }
    }
    free(written);
    free(written_in);
    free(start);
    free(block_of);
    return ok;
}

bool ptx_find_poisoned_registers(ptx_kernel *k)
{
    const int words = k->n_slots / 64 + 1;
    uint64_t *written_anywhere = calloc((size_t)words, sizeof *written_anywhere);
    uint64_t *maybe_unwritten = calloc((size_t)words, sizeof *maybe_unwritten);
    k->poison_slot = malloc((size_t)(k->n_slots ? k->n_slots : 1) * sizeof *k->poison_slot);
    k->n_poison_slots = 0;
    const bool ok = written_anywhere && maybe_unwritten && k->poison_slot;
    bool follow = ok;
    for (int i = 0; follow && i < k->n_code; i++)
        follow = k->code[i].op != OP_CALL && k->code[i].op != OP_BRX;
    if (follow && find_unwritten_reads(k, words, maybe_unwritten)) {
        for (int i = 0; i < k->n_code; i++)
            for (int j = 0; j < k->code[i].n_dst; j++)
                add(written_anywhere, k->slots_of[k->code[i].operands + j]);
        for (int32_t s = 0; s < k->n_slots; s++)
            if (has(written_anywhere, s) && has(maybe_unwritten, s))
                k->poison_slot[k->n_poison_slots++] = s;
    } else if (ok) { /* every slot: control flow this does not follow (calls, brx.idx), or past the limits */
        for (int32_t s = 0; s < k->n_slots; s++)
            k->poison_slot[k->n_poison_slots++] = s;
    }
    free(maybe_unwritten);
    free(written_anywhere);
    return ok;
}
