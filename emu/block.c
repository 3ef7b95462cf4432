/* block.c: a block of a launch, as the interpreter and the timing model both run it: its state allocated
 * for a launch, placed at a position of the grid, started (registers, shared and local memory poisoned, every
 * warp at the kernel's first instruction), run until its warps exit (exec.c schedules them) or a deadlock
 * is reported, and released.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu.h"
#include "interp.h"

void describe_deadlock(block *b)
{
    char waits[512] = "";
    size_t used = 0;
    for (unsigned i = 0; i < b->n_warps && used < sizeof waits - 64; i++) {
        const warp *w = &b->warps[i];
        if (!w->live)
            continue;
        int lane = __builtin_ctz(w->live);
        int32_t pc = w->converged ? w->wpc : w->pc[lane];
        if (w->mbar_wait >= 0)
            used += (size_t)snprintf(waits + used, sizeof waits - used, "%swarp %u on the mbarrier at shared 0x%llx "
                                     "(PTX line %d)", used ? ", " : "", i, (unsigned long long)w->mbar_wait,
                                     b->k->code[pc].ptx_line);
        else if (w->reg_wait)
            used += (size_t)snprintf(waits + used, sizeof waits - used, "%swarp %u for %d registers (PTX line %d)",
                                     used ? ", " : "", i, w->reg_wait, b->k->code[pc].ptx_line);
        else if (w->bar_id != NO_BARRIER)
            used += (size_t)snprintf(waits + used, sizeof waits - used, "%swarp %u at barrier %d (PTX line %d)",
                                     used ? ", " : "", i, w->bar_id, b->k->code[pc].ptx_line);
        else
            used += (size_t)snprintf(waits + used, sizeof waits - used, "%swarp %u at PTX line %d", used ? ", " : "",
                                     i, b->k->code[pc].ptx_line);
    }
    for (unsigned i = 0; i < b->n_warps; i++) {
        const warp *w = &b->warps[i];
        if (!w->live)
            continue;
        int lane = __builtin_ctz(w->live);
        int32_t pc = w->converged ? w->wpc : w->pc[lane];
        fault(b, &b->k->code[pc], lane, w, EMU_ERR_DEADLOCK,
              "deadlock: no warp can run (%s); a barrier that not every warp reaches, or lanes waiting for lanes "
              "that exited", waits);
        return;
    }
}

/* Sets block b up to run from its first instruction: shared memory, registers and .local as poison, the
 * special registers of each thread. */
void block_start(block *b)
{
    const ptx_kernel *k = b->k;
    const emu_launch_desc *L = b->launch;
    /* shared memory starts as poison (0xff bytes: NaN as f16/f32, -1 as integers), never as zeros that
     * could pass for data; so does every register */
    memset(b->smem, 0xff, b->smem_size);
    memset(b->smem_written, 0, b->smem_size);
    if (b->racecheck)
        race_begin_block(b);
    race_global_begin_block(b);
    memset(b->bars, 0, sizeof b->bars);
    for (int i = 0; i < 16; i++)
        b->bars[i].red_slot = -1;
    b->n_tma = 0;
    for (unsigned g = 0; b->wgmma_logs && g < b->n_warps / 4; g++)
        b->wgmma_logs[g].n = 0;
    b->fruitless_polls = 0;
    b->since_progress = 0;
    for (unsigned i = 0; i < b->n_warps; i++) {
        warp *w = &b->warps[i];
        for (int s = 0; s < k->n_poison_slots; s++) /* the rest are written before they are read (poison.c) */
            memset(w->r[k->poison_slot[s]], 0xff, sizeof *w->r);
        memset(w->local, 0xff, (size_t)LANES * k->local_bytes); /* .local starts as poison too, per thread */
        memset(w->carry, CARRY_UNSET, sizeof w->carry);
        memset(w->local_written, 0, (size_t)LANES * k->local_bytes);
        unsigned first = i * LANES, n = b->n_threads - first < LANES ? b->n_threads - first : LANES;
        w->live = n == LANES ? FULL_MASK : (1u << n) - 1;
        w->waiting = 0;
        w->skipped = 0;
        w->bar_id = NO_BARRIER;
        w->converged = true;
        w->wpc = 0;
        w->take_turns = false;
        w->at_warp_sync = 0;
        for (int l = 0; l < LANES; l++)
            w->together[l] = w->live;
        w->index = i;
        w->n_copies = 0;
        memset(w->committed, 0, sizeof w->committed);
        w->mbar_wait = -1;
        w->reg_wait = 0;
        w->regs = emu_registers_per_thread(b->n_threads);
        if (k->max_registers && k->max_registers < w->regs) /* .maxnreg caps what ptxas may allocate */
            w->regs = k->max_registers;
        w->n_stores = 0;
        memset(w->bulk_committed, 0, sizeof w->bulk_committed);
        w->n_wgmma = 0;
        calls_reset(b, w);
        w->wgmma_committed = 0;
        w->wgmma_issued = 0;
        w->wgmma_fenced = false;
        memset(w->wgmma_busy, 0, (size_t)k->n_slots);
        for (int c = 0; c < k->n_consts; c++)
            for (int l = 0; l < LANES; l++)
                w->r[k->const_slot[c]][l] = k->const_value[c];
        for (int s = 0; s < k->n_sregs; s++) {
            uint64_t *slot = w->r[k->sreg_slot[s]];
            for (unsigned l = 0; l < LANES; l++) {
                unsigned t = first + l;
                uint64_t v = 0;
                switch ((ptx_sreg)k->sreg_which[s]) {
                case SREG_TID_X: v = t % L->block.x; break;
                case SREG_TID_Y: v = t / L->block.x % L->block.y; break;
                case SREG_TID_Z: v = t / (L->block.x * L->block.y); break;
                case SREG_NTID_X: v = L->block.x; break;
                case SREG_NTID_Y: v = L->block.y; break;
                case SREG_NTID_Z: v = L->block.z; break;
                case SREG_CTAID_X: v = b->ctaid.x; break;
                case SREG_CTAID_Y: v = b->ctaid.y; break;
                case SREG_CTAID_Z: v = b->ctaid.z; break;
                case SREG_NCTAID_X: v = L->grid.x; break;
                case SREG_NCTAID_Y: v = L->grid.y; break;
                case SREG_NCTAID_Z: v = L->grid.z; break;
                case SREG_LANEID: v = l; break;
                case SREG_WARPID: v = i; break;
                case SREG_NWARPID: v = b->n_warps; break;
                case SREG_SMID: v = 0; break;
                case SREG_NSMID: v = EMU_SM_COUNT; break;
                case SREG_GRIDID: v = 1; break;
                case SREG_LANEMASK_EQ: v = 1u << l; break;
                case SREG_LANEMASK_LE: v = (uint32_t)((2ull << l) - 1); break;
                case SREG_LANEMASK_LT: v = (1u << l) - 1; break;
                case SREG_LANEMASK_GE: v = ~((1u << l) - 1); break;
                case SREG_LANEMASK_GT: v = (uint32_t)~((2ull << l) - 1); break;
                case SREG_DYNAMIC_SMEM_SIZE: v = L->dynamic_smem; break;
                case SREG_TOTAL_SMEM_SIZE: v = b->smem_size; break;
                default: v = 0; break; /* the clocks: set before each instruction (run_warp) */
                }
                slot[l] = v;
            }
        }
    }
    /* %clock, %clock64, %globaltimer: the warp instructions this host thread has executed, a count that
     * grows with every instruction of every warp, so a timing loop sees time pass and a spin on the clock
     * ends ("Special Registers": a counter that increments; its rate is not the emulator's to know) */
    b->n_clock_slots = 0;
    for (int s = 0; s < k->n_sregs; s++)
        if (k->sreg_which[s] == SREG_CLOCK || k->sreg_which[s] == SREG_CLOCK64 || k->sreg_which[s] == SREG_GLOBALTIMER)
            b->clock_slots[b->n_clock_slots++] = k->sreg_slot[s];
    /* setmaxnreg's pool: the block's registers that the warps' allocations leave over */
    b->register_pool = EMU_REGS_PER_BLOCK - (int64_t)b->warps[0].regs * b->n_warps * LANES;
}

void run_block(block *b)
{
    block_start(b);
    for (;;) {
        bool ran = false, alive = false;
        unsigned start = 0;
        if (emu_get_options()->interleave) {
            b->rng = b->rng * 6364136223846793005ull + 1442695040888963407ull;
            start = (unsigned)(b->rng >> 33) % b->n_warps;
        }
        for (unsigned j = 0; j < b->n_warps; j++) {
            warp *w = &b->warps[(start + j) % b->n_warps];
            if (!w->live)
                continue;
            alive = true;
            if (!(w->live & ~w->waiting))
                continue;
            run_warp(b, w, 0);
            ran = true;
            if (b->status != EMU_OK)
                return;
        }
        if (!alive) {
            wgmma_block_done(b);
            return;
        }
        if (!ran) {
            describe_deadlock(b);
            return;
        }
    }
}

/* A block's host memory for launch L: its shared memory, and its warps' registers and .local; false when the
 * host has none to give (block_release frees what it got). Sampled launches count (conv check verifies,
 * with both checks); and they skip blocks whose results later kernels read, which initcheck would only
 * report. */
bool block_alloc(block *b, const emu_launch_desc *L, uint64_t smem_size, bool counting, char *err, size_t err_len)
{
    const ptx_kernel *k = L->kernel;
    *b = (block){.launch = L, .k = k, .smem_size = smem_size, .status = EMU_OK, .counting = counting,
                 .initcheck = emu_get_options()->initcheck && !L->sample,
                 .racecheck = emu_get_options()->racecheck && !L->sample, .err = err, .err_len = err_len};
    b->n_threads = L->block.x * L->block.y * L->block.z;
    b->n_warps = (b->n_threads + LANES - 1) / LANES;
    b->smem = malloc(smem_size ? smem_size : 1);
    b->smem_written = malloc(smem_size ? smem_size : 1);
    b->warps = calloc(b->n_warps, sizeof *b->warps);
    bool allocated = b->smem && b->smem_written && b->warps && (!b->racecheck || race_alloc(b));
    for (unsigned i = 0; allocated && i < b->n_warps; i++) {
        warp *w = &b->warps[i];
        w->r = malloc((size_t)(k->n_slots ? k->n_slots : 1) * sizeof *w->r);
        w->local = malloc((size_t)LANES * (k->local_bytes ? k->local_bytes : 1));
        w->local_written = malloc((size_t)LANES * (k->local_bytes ? k->local_bytes : 1));
        w->wgmma_busy = malloc(k->n_slots ? (size_t)k->n_slots : 1);
        w->calls = k->n_frames ? calloc(LANES, sizeof *w->calls) : NULL;
        allocated = w->r && w->local && w->local_written && w->wgmma_busy && (w->calls || !k->n_frames);
        if (w->r) /* poison once: what no block start poisons again is written before it is read, or never */
            memset(w->r, 0xff, (size_t)(k->n_slots ? k->n_slots : 1) * sizeof *w->r);
    }
    return allocated;
}

void block_release(block *b)
{
    for (unsigned i = 0; b->warps && i < b->n_warps; i++) {
        warp *w = &b->warps[i];
        free(w->r);
        free(w->local);
        free(w->local_written);
        free(w->wgmma_busy);
        calls_free(w);
        free(w->copies);
        free(w->strong_reads);
        free(w->wgmma);
        free(w->stores);
    }
    free(b->tma);
    wgmma_logs_free(b);
    free(b->warps);
    free(b->smem);
    free(b->smem_written);
    race_free(b);
    race_global_free(b);
}

/* The block of the grid with linear index id: its %ctaid, and its seed for EMU_INTERLEAVE. */
void block_place(block *b, uint64_t id)
{
    const emu_launch_desc *L = b->launch;
    b->ctaid.x = (unsigned)(id % L->grid.x);
    b->ctaid.y = (unsigned)(id / L->grid.x % L->grid.y);
    b->ctaid.z = (unsigned)(id / ((uint64_t)L->grid.x * L->grid.y));
    b->rng = emu_get_options()->interleave_seed ^ (id * 0x9e3779b97f4a7c15ull);
}
