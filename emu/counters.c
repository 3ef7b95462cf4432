/* counters.c: counting what a launch does (an instruction's class, a memory request's sectors and
 * wavefronts), adding the counts up and printing them (emu.h: emu_counters). The metrics follow Nsight
 * Compute's definitions, named beside each line; they are counts of what the emulator executed, never
 * measurements of a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu.h"
#include "interp.h"

void emu_counters_add(emu_counters *into, const emu_counters *from)
{
    const uint64_t *f = (const uint64_t *)from;
    uint64_t *t = (uint64_t *)into;
    for (size_t i = 0; i < sizeof *from / sizeof(uint64_t); i++)
        t[i] += f[i];
}

static const char *const class_names[CLASS_COUNT] = {
    [CLASS_TENSOR] = "tensor", [CLASS_FP32] = "fp32", [CLASS_FP64] = "fp64", [CLASS_FP16] = "fp16",
    [CLASS_INTEGER] = "integer", [CLASS_CONVERSION] = "conversion", [CLASS_CONTROL] = "control",
    [CLASS_GLOBAL] = "global memory", [CLASS_SHARED] = "shared memory", [CLASS_OTHER_MEMORY] = "param/local",
    [CLASS_SYNC] = "sync"};

/* "_Z20conv_naive_k_fastest12conv_problem..." -> "conv_naive_k_fastest" (the name, without the types). */
void emu_short_name(const char *mangled, char *out, size_t out_len)
{
    const char *p = mangled;
    if (strncmp(p, "_Z", 2) == 0) {
        p += 2;
        size_t len = 0;
        while (*p >= '0' && *p <= '9')
            len = 10 * len + (size_t)(*p++ - '0');
        if (len && len < out_len && strlen(p) >= len) {
            memcpy(out, p, len);
            out[len] = 0;
            return;
        }
    }
    snprintf(out, out_len, "%s", mangled);
}

static double ratio(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

void emu_counters_print(FILE *out, const char *kernel, const emu_counters *c)
{
    char name[256];
    emu_short_name(kernel, name, sizeof name);
    fprintf(out, "emu counts for %s (%llu launch%s; counted by the emulator, not measured):\n", name,
            (unsigned long long)c->launches, c->launches == 1 ? "" : "es");
    if (c->emulated_blocks < c->grid_blocks)
        fprintf(out, "  sampled             %llu of the grids' %llu blocks emulated, counts scaled to the grids\n",
                (unsigned long long)c->emulated_blocks, (unsigned long long)c->grid_blocks);
    fprintf(out, "  instructions        %llu warp instructions, %llu thread instructions: %.1f%% of lanes active "
            "(SIMT efficiency)\n",
            (unsigned long long)c->warp_instructions, (unsigned long long)c->thread_instructions,
            100.0 * ratio(c->thread_instructions, 32 * c->warp_instructions));
    fprintf(out, "  by class            ");
    for (int k = 0; k < CLASS_COUNT; k++)
        if (c->by_class[k])
            fprintf(out, "%s %.1f%%  ", class_names[k], 100.0 * ratio(c->by_class[k], c->warp_instructions));
    fprintf(out, "\n");
    if (c->global_load_requests)
        fprintf(out, "  global loads        %llu requests, %llu sectors: %.2f sectors per request; %.4g bytes requested\n",
                (unsigned long long)c->global_load_requests, (unsigned long long)c->global_load_sectors,
                ratio(c->global_load_sectors, c->global_load_requests), (double)c->global_load_bytes);
    if (c->global_store_requests)
        fprintf(out, "  global stores       %llu requests, %llu sectors: %.2f sectors per request; %.4g bytes requested\n",
                (unsigned long long)c->global_store_requests, (unsigned long long)c->global_store_sectors,
                ratio(c->global_store_sectors, c->global_store_requests), (double)c->global_store_bytes);
    if (c->shared_load_requests)
        fprintf(out, "  shared loads        %llu requests, %llu wavefronts (ideal %llu): %llu bank conflicts\n",
                (unsigned long long)c->shared_load_requests, (unsigned long long)c->shared_load_wavefronts,
                (unsigned long long)c->shared_load_ideal,
                (unsigned long long)(c->shared_load_wavefronts - c->shared_load_ideal));
    if (c->shared_store_requests)
        fprintf(out, "  shared stores       %llu requests, %llu wavefronts (ideal %llu): %llu bank conflicts\n",
                (unsigned long long)c->shared_store_requests, (unsigned long long)c->shared_store_wavefronts,
                (unsigned long long)c->shared_store_ideal,
                (unsigned long long)(c->shared_store_wavefronts - c->shared_store_ideal));
    if (c->barriers)
        fprintf(out, "  barriers            %llu warp arrivals\n", (unsigned long long)c->barriers);
    if (c->tensor_flops)
        fprintf(out, "  tensor-core FLOPs   %.4g\n", (double)c->tensor_flops);
}

/* ---------------------------------------------------------------------------------------------- */
/* Counters (the definitions are Nsight Compute's; emu/README.md, "Counters")                     */

/* The counters' class of each instruction: its row's in instructions.def (class_of, interp.h). */
const uint8_t instruction_classes[OP_COUNT] = {
#define INSTRUCTION(opcode, name, class, handler, isa) [OP_##opcode] = class,
#include "instructions.def"
#undef INSTRUCTION
};

/* Each instruction's class, found once when its kernel is loaded: run_warp counts every instruction by it. */
void ptx_set_counter_classes(ptx_kernel *k)
{
    for (int pc = 0; pc < k->n_code; pc++)
        k->code[pc].counter_class = (uint8_t)class_of(&k->code[pc]);
}

/* Sorts a warp's few addresses (at most 4 * LANES) in place. Insertion sort: a warp's lanes mostly come in
 * increasing order, which it passes through once, where qsort's calls through a pointer cost more than the
 * whole sort. */
static void sort_addresses(uint64_t *v, int n)
{
    for (int i = 1; i < n; i++) {
        const uint64_t x = v[i];
        int j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

int distinct_pieces(const uint64_t *address, uint32_t lanes, uint64_t size, uint64_t unit, uint64_t *pieces)
{
    int n = 0;
    FOR_LANES(lanes, l) {
        const uint64_t first = address[l] / unit, last = (address[l] + size - 1) / unit;
        for (uint64_t s = first; s <= last && n < 2 * LANES; s++)
            pieces[n++] = s;
    }
    sort_addresses(pieces, n);
    int distinct = 0;
    for (int i = 0; i < n; i++)
        if (i == 0 || pieces[i] != pieces[distinct - 1])
            pieces[distinct++] = pieces[i];
    return distinct;
}

/* A warp's global request touches the distinct 32-byte sectors its threads' bytes fall in
 * (l1tex__t_sectors_pipe_lsu_mem_global_op_ld / _st per l1tex__t_requests_...). */
static uint64_t count_sectors(const uint64_t *address, uint32_t lanes, uint64_t size)
{
    uint64_t sectors[2 * LANES];
    return (uint64_t)distinct_pieces(address, lanes, size, 32, sectors);
}

/* Shared memory serves a warp's request in wavefronts: in each, every one of the 32 banks (4-byte words,
 * bank = word % 32) delivers one word, to any number of threads (a broadcast). A request of 8-byte
 * accesses is processed as two half-warps, of 16-byte accesses as four quarter-warps, each phase its
 * own wavefronts; within a phase, the wavefronts are the most distinct words any bank must deliver.
 * `ideal` gets the fewest wavefronts the same distinct words could take; wavefronts - ideal is the
 * bank conflicts (l1tex__data_bank_conflicts_pipe_lsu_mem_shared). `lanes_per_phase` of 32 means one
 * phase. */
static uint64_t count_wavefronts(const uint64_t *address, uint32_t lanes, uint64_t size, int lanes_per_phase,
                                 uint64_t *ideal)
{
    uint64_t total = 0;
    const uint64_t words_each = size < 4 ? 1 : size / 4;
    for (int phase = 0; phase < LANES / lanes_per_phase; phase++) {
        uint32_t mine = lanes & (uint32_t)(((1ull << lanes_per_phase) - 1) << (phase * lanes_per_phase));
        if (!mine)
            continue;
        /* The common case first: every word of the phase in a bank of its own, so every word distinct and one
         * wavefront. A thread's words_each words are that many banks in a row from its first word's (a rotated
         * run of bits), no two of which can be one bank. */
        const uint32_t run = (1u << words_each) - 1;
        uint32_t banks = 0;
        bool shared_bank = false;
        FOR_LANES(mine, l) {
            const uint32_t first = (uint32_t)(address[l] / 4 % 32);
            const uint32_t mine_banks = run << first | run >> ((32 - first) % 32);
            shared_bank |= (banks & mine_banks) != 0;
            banks |= mine_banks;
        }
        if (!shared_bank) {
            total += 1;
            *ideal += 1;
            continue;
        }
        uint64_t words[4 * LANES];
        int n = 0;
        FOR_LANES(mine, l) for (uint64_t j = 0; j < words_each; j++) words[n++] = address[l] / 4 + j;
        sort_addresses(words, n);
        int per_bank[32] = {0}, distinct = 0;
        for (int i = 0; i < n; i++)
            if (i == 0 || words[i] != words[i - 1]) {
                per_bank[words[i] % 32]++;
                distinct++;
            }
        int most = 0;
        for (int k = 0; k < 32; k++)
            most = per_bank[k] > most ? per_bank[k] : most;
        total += (uint64_t)most;
        *ideal += (uint64_t)(distinct + 31) / 32;
    }
    return total;
}

/* Whether lanes l and l ^ partner are at one address wherever both are active. */
static bool pairs_share(const uint64_t *address, uint32_t lanes, int partner)
{
    FOR_LANES(lanes, l)
    if ((lanes >> (l ^ partner) & 1) && address[l ^ partner] != address[l])
        return false;
    return true;
}

/* A load of 8 or 16 bytes a thread whose lanes share addresses in pairs (lanes t and t^1, or t and t^2)
 * returns two threads' registers in one slot, so its phases hold twice the lanes: such a 16-byte load takes
 * two wavefronts, not four, and an 8-byte one one. A pair of which one lane makes no access shares. Measured
 * on an H100 with Nsight Compute (bench/validation/shared_wavefronts.cu, bench/results/validation/: every
 * launch counted as here, lanes that make no access among them); NVIDIA's description for compute
 * capability 7.x (the developer forums, "Unexpected shared memory bank conflict") names the same two
 * pairings. Stores are never packed. */
uint64_t shared_wavefronts(const uint64_t *address, uint32_t lanes, uint64_t size, bool load, uint64_t *ideal)
{
    int lanes_per_phase = size <= 4 ? LANES : (int)(4 * LANES / size);
    if (load && size > 4 && (pairs_share(address, lanes, 1) || pairs_share(address, lanes, 2)))
        lanes_per_phase *= 2;
    return count_wavefronts(address, lanes, size, lanes_per_phase, ideal);
}

/* One warp-level load or store of `size` bytes per thread, counted by its space. */
void count_access(block *b, int space, bool load, const uint64_t *address, uint32_t lanes, uint64_t size)
{
    if (lanes && b->on_access)
        b->on_access(b->model, space, load, address, lanes, size);
    if (!lanes || !b->counting)
        return;
    emu_counters *c = &b->c;
    if (space == SPACE_SHARED) {
        if (load) {
            c->shared_load_requests++;
            c->shared_load_wavefronts += shared_wavefronts(address, lanes, size, true, &c->shared_load_ideal);
        } else {
            c->shared_store_requests++;
            c->shared_store_wavefronts += shared_wavefronts(address, lanes, size, false, &c->shared_store_ideal);
        }
    } else if (space == SPACE_GLOBAL) {
        uint64_t bytes = (uint64_t)lane_count(lanes) * size;
        if (load) {
            c->global_load_requests++;
            c->global_load_sectors += count_sectors(address, lanes, size);
            c->global_load_bytes += bytes;
        } else {
            c->global_store_requests++;
            c->global_store_sectors += count_sectors(address, lanes, size);
            c->global_store_bytes += bytes;
        }
    }
}
