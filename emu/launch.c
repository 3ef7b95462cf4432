/* launch.c: a launch. Its blocks (block.c), each from start to end on one host thread; the grid's blocks
 * shared among the host threads, with a progress line; sampled launches (counters.h, "Sampled launches");
 * and, when EMU_MODEL asks, which blocks the timing model runs (model.c: the blocks of the SM it models,
 * cycle by cycle, on the same interpreter) and which the interpreter runs alone, so that neither of them
 * needs the other's decisions.
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "emu.h"
#include "interp.h"
#include "model.h"

/* ---------------------------------------------------------------------------------------------- */
/* EMU_STATS: the thread-instructions executed                                                    */

static _Atomic uint64_t thread_instructions;

uint64_t emu_thread_instructions(void) { return atomic_load(&thread_instructions); }

/* ---------------------------------------------------------------------------------------------- */
/* Blocks and grids                                                                               */

typedef struct {
    const emu_launch_desc *launch;
    uint64_t smem_size;
    _Atomic uint64_t next_block;
    _Atomic uint64_t blocks_done;   /* for the progress line */
    _Atomic int workers_done;
    uint64_t n_blocks;         /* to run: the grid's, or the sample's */
    const uint64_t *sample;    /* the blocks to run, or NULL: every block */
    emu_counters *per_block;   /* with a sample: each block's counts, in the sample's order */
    _Atomic int failed;
    pthread_mutex_t lock;
    emu_counters *counters;    /* where the blocks' counts go, or NULL */
    launch_race *races;        /* racecheck between the blocks (racecheck_global.c), or NULL */
    emu_status status;
    char *err;
    size_t err_len;
} grid_run;

static void *grid_worker(void *arg)
{
    grid_run *g = arg;
    const emu_launch_desc *L = g->launch;
    const ptx_kernel *k = L->kernel;
    block b;
    char err[1024];
    bool allocated = block_alloc(&b, L, g->smem_size, g->counters != NULL, err, sizeof err) &&
                     (!g->races || race_global_attach(&b, g->races));
    if (!allocated) { /* one line, and no block runs on a missing register file or .local depot */
        pthread_mutex_lock(&g->lock);
        if (!atomic_load(&g->failed)) {
            atomic_store(&g->failed, 1);
            g->status = EMU_ERR_LAUNCH;
            snprintf(g->err, g->err_len, "kernel %s: out of host memory for a block of %u threads (%" PRIu64 " bytes of "
                     ".local and %d register slots per thread, %" PRIu64 " bytes of shared memory)", k->name,
                     b.n_threads, k->local_bytes, k->n_slots, g->smem_size);
        }
        pthread_mutex_unlock(&g->lock);
    }
    for (; allocated;) {
        uint64_t next = atomic_fetch_add(&g->next_block, 1);
        if (next >= g->n_blocks || atomic_load(&g->failed))
            break;
        block_place(&b, g->sample ? g->sample[next] : next);
        run_block(&b);
        race_global_end_block(&b);
        atomic_fetch_add(&g->blocks_done, 1);
        if (g->per_block) { /* kept apart: how much it counts depends on the whole sample */
            g->per_block[next] = b.c;
            atomic_fetch_add(&thread_instructions, b.c.thread_instructions);
            memset(&b.c, 0, sizeof b.c);
        }
        if (b.status != EMU_OK) {
            pthread_mutex_lock(&g->lock);
            if (!atomic_load(&g->failed)) {
                atomic_store(&g->failed, 1);
                g->status = b.status;
                snprintf(g->err, g->err_len, "%s", err);
            }
            pthread_mutex_unlock(&g->lock);
            break;
        }
    }
    atomic_fetch_add(&thread_instructions, b.c.thread_instructions);
    if (g->counters) {
        pthread_mutex_lock(&g->lock);
        emu_counters_add(g->counters, &b.c);
        pthread_mutex_unlock(&g->lock);
    }
    block_release(&b);
    atomic_fetch_add(&g->workers_done, 1);
    return NULL;
}

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* While n_workers run the grid: once it has taken PROGRESS_AFTER seconds, one line on stderr, redrawn
 * in place, with the blocks done of the grid's, the time so far and an estimate of the time left;
 * erased when the launch ends. Only on a terminal: logs and pipes get no progress lines. */
enum { PROGRESS_AFTER = 2 };

/* A kernel's name as its source spells it: the identifier inside an Itanium-mangled name
 * (_Z12igemm_stagedI... -> igemm_staged), or the name as it is (extern "C" kernels). */
static void source_name(const char *mangled, char *out, size_t size)
{
    char *end;
    unsigned long length = strncmp(mangled, "_Z", 2) == 0 ? strtoul(mangled + 2, &end, 10) : 0;
    if (length && length <= strlen(end))
        snprintf(out, size, "%.*s", (int)length, end);
    else
        snprintf(out, size, "%s", mangled);
}

static void show_progress(grid_run *g, int n_workers)
{
    char name[48];
    source_name(g->launch->kernel->name, name, sizeof name);
    const double started = seconds_now();
    bool shown = false;
    while (atomic_load(&g->workers_done) < n_workers) {
        const struct timespec pause = {0, 200 * 1000 * 1000};
        nanosleep(&pause, NULL);
        const double elapsed = seconds_now() - started;
        const uint64_t done = atomic_load(&g->blocks_done);
        if (elapsed < PROGRESS_AFTER || atomic_load(&g->workers_done) == n_workers)
            continue;
        char left[48] = "";
        if (done)
            snprintf(left, sizeof left, ", about %.0f s left", elapsed / (double)done * (double)(g->n_blocks - done));
        fprintf(stderr, "\r\033[Kemu: %s: block %" PRIu64 " of %" PRIu64 ", %.0f s%s", name, done, g->n_blocks,
                elapsed, left);
        shown = true;
    }
    if (shown)
        fprintf(stderr, "\r\033[K");
}

/* Runs the grid's blocks (or g->sample's) on the host threads. */
static void run_blocks(grid_run *g)
{
    atomic_store(&g->next_block, 0);
    atomic_store(&g->blocks_done, 0);
    atomic_store(&g->workers_done, 0);
    int n_threads = emu_get_options()->threads;
    if ((uint64_t)n_threads > g->n_blocks)
        n_threads = (int)g->n_blocks;
    const bool progress = isatty(STDERR_FILENO);
    if (n_threads <= 1 && !progress) {
        grid_worker(g);
        return;
    }
    pthread_t *ids = malloc((size_t)n_threads * sizeof *ids);
    int started = 0;
    while (ids && started < n_threads && pthread_create(&ids[started], NULL, grid_worker, g) == 0)
        started++;
    if (started == 0) { /* no thread to be had: this one runs the grid */
        grid_worker(g);
    } else {
        if (progress)
            show_progress(g, started);
        for (int i = 0; i < started; i++)
            pthread_join(ids[i], NULL);
    }
    free(ids);
}

/* ---- sampled launches (counters.h, "Sampled launches") ---------------------------------------- */

enum { KINDS = 27, MIN_JUDGED = 64 };

/* Where index i sits in an extent of n: 0 the first, 2 the last, 1 one between. */
static unsigned position_kind(unsigned i, unsigned n) { return i == 0 ? 0 : i == n - 1 ? 2 : 1; }

/* The counts a sample's precision is judged by: what the counter tables and the bounds use most. */
static void judged_counts(const emu_counters *c, double out[3])
{
    out[0] = (double)c->warp_instructions;
    out[1] = (double)(c->global_load_sectors + c->global_store_sectors);
    out[2] = (double)(c->shared_load_wavefronts + c->shared_store_wavefronts);
}

/* The order blocks of one kind are sampled in: a seeded random shuffle (Fisher-Yates). Random, because
 * the precision test below is only sound for a random sample: an evenly spread one can alias with
 * blocks that alternate (09b's even and odd channel blocks), look uniform, and stop early, wrong. */
static void shuffle(uint64_t *members, uint64_t n, uint64_t *rng)
{
    for (uint64_t i = n; i > 1; i--) {
        *rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t j = (*rng >> 11) % i, t = members[i - 1];
        members[i - 1] = members[j], members[j] = t;
    }
}

/* A stratified sample, grown until it is precise enough. The blocks of each kind are taken in the order
 * above; at first `per_kind` of each (and at least 64 before their spread is judged), then, while the estimate of any judged count has a
 * relative standard error above 0.5% (the usual estimate for stratified sampling without replacement:
 * Var = sum over kinds of N^2 (1 - n/N) s^2 / n), twice as many of each kind whose blocks differ. A grid
 * whose blocks all do the same work stops at the first round. Adds the scaled counts to counters and
 * returns the blocks emulated. */
static uint64_t sampled_launch(grid_run *g, emu_dim3 grid, unsigned per_kind, emu_counters *counters)
{
    const uint64_t n_blocks = (uint64_t)grid.x * grid.y * grid.z;
    uint64_t size[KINDS] = {0}, start[KINDS], taken[KINDS] = {0}, wanted[KINDS];
    uint64_t *order = malloc(n_blocks * sizeof *order);
    unsigned char *kind_of = malloc(n_blocks);
    emu_counters *per_block = malloc(n_blocks * sizeof *per_block); /* in `order`, by kind */
    uint64_t *batch = malloc(n_blocks * sizeof *batch);
    emu_counters *batch_counts = malloc(n_blocks * sizeof *batch_counts);
    if (!order || !kind_of || !per_block || !batch || !batch_counts) {
        free(order), free(kind_of), free(per_block), free(batch), free(batch_counts);
        atomic_store(&g->failed, 1);
        g->status = EMU_ERR_LAUNCH;
        snprintf(g->err, g->err_len, "kernel %s: out of host memory to sample a grid of %" PRIu64 " blocks",
                 g->launch->kernel->name, n_blocks);
        return 0;
    }
    for (uint64_t id = 0; id < n_blocks; id++) {
        unsigned x = (unsigned)(id % grid.x), y = (unsigned)(id / grid.x % grid.y);
        unsigned z = (unsigned)(id / ((uint64_t)grid.x * grid.y));
        kind_of[id] = (unsigned char)(position_kind(x, grid.x) + 3 * position_kind(y, grid.y) +
                                      9 * position_kind(z, grid.z));
        size[kind_of[id]]++;
    }
    uint64_t at = 0, rng = 0x5eed5eed5eed5eedull;
    for (int k = 0; k < KINDS; k++) {
        start[k] = at;
        for (uint64_t id = 0; id < n_blocks; id++)
            if (kind_of[id] == k)
                order[at++] = id;
        shuffle(order + start[k], size[k], &rng);
        wanted[k] = size[k] < per_kind ? size[k] : per_kind;
    }
    for (;;) {
        uint64_t n = 0;
        for (int k = 0; k < KINDS; k++)
            for (uint64_t i = taken[k]; i < wanted[k]; i++)
                batch[n++] = order[start[k] + i];
        if (n == 0)
            break;
        g->sample = batch, g->n_blocks = n, g->per_block = batch_counts;
        run_blocks(g);
        if (g->status != EMU_OK)
            break;
        n = 0;
        for (int k = 0; k < KINDS; k++)
            for (; taken[k] < wanted[k]; taken[k]++)
                per_block[start[k] + taken[k]] = batch_counts[n++];
        /* the estimate's relative standard error, for each judged count */
        double total[3] = {0}, variance[3] = {0}, spread[KINDS] = {0};
        for (int k = 0; k < KINDS; k++) {
            if (!taken[k])
                continue;
            double sum[3] = {0}, squares[3] = {0}, v[3];
            for (uint64_t i = 0; i < taken[k]; i++) {
                judged_counts(&per_block[start[k] + i], v);
                for (int m = 0; m < 3; m++)
                    sum[m] += v[m], squares[m] += v[m] * v[m];
            }
            const double n_k = (double)taken[k], size_k = (double)size[k];
            for (int m = 0; m < 3; m++) {
                double mean = sum[m] / n_k, s2 = n_k > 1 ? (squares[m] - n_k * mean * mean) / (n_k - 1) : 0.0;
                total[m] += size_k * mean;
                variance[m] += size_k * size_k * (1.0 - n_k / size_k) * (s2 > 0 ? s2 : 0.0) / n_k;
                spread[k] += s2 > 0 ? s2 : 0.0;
            }
        }
        /* fewer than 64 blocks of a kind say too little about how its blocks differ: 64 that all count
         * the same still leave room for about 5% of the kind to differ unseen (the rule of three) */
        bool precise = true, too_few[KINDS];
        for (int k = 0; k < KINDS; k++)
            too_few[k] = taken[k] < size[k] && taken[k] < MIN_JUDGED, precise &= !too_few[k];
        for (int m = 0; m < 3; m++)
            precise &= total[m] == 0.0 || sqrt(variance[m]) <= 0.005 * total[m];
        if (precise)
            break;
        for (int k = 0; k < KINDS; k++)
            if (spread[k] > 0.0 || too_few[k])
                wanted[k] = 2 * taken[k] < size[k] ? 2 * taken[k] : size[k];
    }
    uint64_t emulated = 0;
    double scaled[sizeof(emu_counters) / sizeof(uint64_t)] = {0};
    for (int k = 0; k < KINDS; k++) {
        emulated += taken[k];
        for (uint64_t i = 0; i < taken[k]; i++) {
            const uint64_t *c = (const uint64_t *)&per_block[start[k] + i];
            for (size_t f = 0; f < sizeof scaled / sizeof scaled[0]; f++)
                scaled[f] += (double)size[k] / (double)taken[k] * (double)c[f];
        }
    }
    uint64_t *into = (uint64_t *)counters;
    for (size_t f = 0; f < sizeof scaled / sizeof scaled[0]; f++)
        into[f] += (uint64_t)llround(scaled[f]);
    free(order), free(kind_of), free(per_block), free(batch), free(batch_counts);
    return emulated;
}

emu_status exec_launch_check(const emu_launch_desc *L, uint64_t *smem_size, char *err, size_t err_len)
{
    emu_f16_values = emu_f16_table();
    const ptx_kernel *k = L->kernel;
    uint64_t threads = (uint64_t)L->block.x * L->block.y * L->block.z;
    uint64_t n_blocks = (uint64_t)L->grid.x * L->grid.y * L->grid.z;
    if (!threads || !n_blocks) {
        snprintf(err, err_len, "kernel %s: launch with an empty grid or block (%ux%ux%u blocks of %ux%ux%u)", k->name,
                 L->grid.x, L->grid.y, L->grid.z, L->block.x, L->block.y, L->block.z);
        return EMU_ERR_LAUNCH;
    }
    if (threads > EMU_MAX_THREADS_PER_BLOCK || L->block.z > 64 || L->grid.y > 65535 || L->grid.z > 65535) {
        snprintf(err, err_len, "kernel %s: launch of %ux%ux%u threads per block is beyond the device's limits", k->name,
                 L->block.x, L->block.y, L->block.z);
        return EMU_ERR_LAUNCH;
    }
    if (k->req_threads[0] && (L->block.x != (unsigned)k->req_threads[0] || L->block.y != (unsigned)k->req_threads[1] ||
                              L->block.z != (unsigned)k->req_threads[2])) {
        snprintf(err, err_len, "kernel %s: launched with %ux%ux%u threads per block, but its .reqntid is %dx%dx%d", k->name,
                 L->block.x, L->block.y, L->block.z, k->req_threads[0], k->req_threads[1], k->req_threads[2]);
        return EMU_ERR_LAUNCH;
    }
    if (k->max_threads && threads > (uint64_t)k->max_threads) {
        snprintf(err, err_len, "kernel %s: %" PRIu64 " threads per block, but its .maxntid allows %d", k->name, threads,
                 k->max_threads);
        return EMU_ERR_LAUNCH;
    }
    uint64_t dyn_at = k->static_smem;
    if (L->dynamic_smem)
        dyn_at = (k->static_smem + k->dynamic_smem_align - 1) / k->dynamic_smem_align * k->dynamic_smem_align;
    uint64_t smem = dyn_at + L->dynamic_smem;
    uint64_t limit = L->max_dynamic_smem ? k->static_smem + L->max_dynamic_smem : EMU_SMEM_PER_BLOCK;
    if (L->dynamic_smem > (L->max_dynamic_smem ? L->max_dynamic_smem : EMU_SMEM_PER_BLOCK - k->static_smem) ||
        smem > EMU_SMEM_PER_BLOCK_OPTIN) {
        snprintf(err, err_len, "kernel %s: %" PRIu64 " bytes of shared memory per block (%" PRIu64 " static + %" PRIu64
                 " dynamic) exceed the %" PRIu64 " allowed%s", k->name, smem, k->static_smem, L->dynamic_smem,
                 limit < EMU_SMEM_PER_BLOCK_OPTIN ? limit : (uint64_t)EMU_SMEM_PER_BLOCK_OPTIN,
                 L->max_dynamic_smem ? "" : " without cudaFuncAttributeMaxDynamicSharedMemorySize");
        return EMU_ERR_LAUNCH;
    }
    *smem_size = smem;
    return EMU_OK;
}

emu_status exec_launch(const emu_launch_desc *L, uint64_t skip_every, emu_counters *counters, char *err,
                       size_t err_len)
{
    const ptx_kernel *k = L->kernel;
    const uint64_t n_blocks = (uint64_t)L->grid.x * L->grid.y * L->grid.z;
    uint64_t smem;
    const emu_status checked = exec_launch_check(L, &smem, err, err_len);
    if (checked != EMU_OK)
        return checked;
    grid_run g = {.launch = L, .smem_size = smem, .n_blocks = n_blocks, .status = EMU_OK, .err = err,
                  .err_len = err_len, .counters = counters};
    if (emu_get_options()->racecheck && !L->sample && !(g.races = launch_race_new())) {
        snprintf(err, err_len, "kernel %s: out of host memory for racecheck", k->name);
        return EMU_ERR_LAUNCH;
    }
    pthread_mutex_init(&g.lock, NULL);
    uint64_t emulated = n_blocks;
    if (L->sample && counters) {
        emulated = sampled_launch(&g, L->grid, L->sample, counters);
    } else if (skip_every) { /* every block but those another runner runs (the timing model, launch.c) */
        uint64_t *others = malloc(n_blocks * sizeof *others), n = 0;
        for (uint64_t id = 0; others && id < n_blocks; id++)
            if (id % skip_every)
                others[n++] = id;
        g.sample = others, g.n_blocks = n;
        if (!others)
            g.status = EMU_ERR_LAUNCH, snprintf(err, err_len, "kernel %s: out of host memory", k->name);
        else if (n)
            run_blocks(&g);
        free(others);
    } else {
        run_blocks(&g);
    }
    pthread_mutex_destroy(&g.lock);
    if (g.status == EMU_OK && !launch_race_result(g.races, err, err_len))
        g.status = EMU_ERR_RACE;
    launch_race_free(g.races);
    if (counters) {
        counters->launches++;
        counters->grid_blocks += n_blocks;
        counters->emulated_blocks += emulated;
    }
    return g.status;
}

/* ---------------------------------------------------------------------------------------------- */
/* A launch: interpreted, or modeled                                                              */

emu_status emu_launch(const emu_launch_desc *L, emu_counters *counters, char *err, size_t err_len)
{
    const struct model_gpu *gpu = model_gpu_chosen();
    if (!gpu || !counters || L->kernel->ptxas_registers < 0) /* no model, or one its GPU cannot run */
        return exec_launch(L, 0, counters, err, err_len);
    uint64_t smem;
    emu_status status = exec_launch_check(L, &smem, err, err_len);
    if (status != EMU_OK)
        return status;
    if (L->model_waves) { /* only the first waves of the modeled SM's blocks run, in the model */
        status = model_run_sm(gpu, L, smem, L->kernel->ptxas_registers, counters, NULL, err, err_len);
        counters->launches++;
        counters->grid_blocks += (uint64_t)L->grid.x * L->grid.y * L->grid.z;
        return status;
    }
    /* The modeled SM's blocks run in the model. A sampled launch counts its sample as always (running the
     * modeled SM's blocks a second time: its outputs are not computed anyway); a full one runs every other
     * block, and the model's blocks count with them. */
    status = model_run_sm(gpu, L, smem, L->kernel->ptxas_registers, counters, L->sample ? NULL : counters, err,
                          err_len);
    if (status != EMU_OK)
        return status;
    return exec_launch(L, L->sample ? 0 : model_sm_stride(gpu), counters, err, err_len);
}
