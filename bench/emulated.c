/* emulated.c: `conv bench --emulate`. Without a GPU, the benchmark's question "how fast?" has no answer,
 * but "what did the kernel make the machine do?" has one: the emulator counts it (emu/README.md,
 * "Counters"). For each kernel, on its chapter's reference layers at the suite's batch size, one run is
 * emulated, a sample of the blocks (emu/counters.h: every kind of block at the grid's edges and inside,
 * scaled to the grid), and its counts become a row of bench/results/emulator.csv. bench/tables.py turns
 * the rows into each chapter's counter table and a bound from counts at an H100's published peaks.
 * Correctness is `conv check --emulate`'s business: a sampled run computes only part of the output. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "counters.h"
#include "emulated.h"
#include "harness.h"
#include "registry.h"
#include "results.h"
#include "suites.h"

/* The most reference layers one kernel's row may name. */
#define MAX_REFERENCE_LAYERS 4

/* The layers a kernel's counts are shown on: its registry row's .layers, or CONV_REFERENCE_LAYER. Each
 * name is copied into its own slot of `names`. */
static int reference_layers(const conv_kernel *kernel, char names[MAX_REFERENCE_LAYERS][128])
{
    char copy[MAX_REFERENCE_LAYERS * 128];
    snprintf(copy, sizeof copy, "%s", kernel->layers ? kernel->layers : CONV_REFERENCE_LAYER);
    int count = 0;
    for (char *save = NULL, *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        if (count == MAX_REFERENCE_LAYERS)
            fail("kernel %s names more than %d reference layers", kernel->id, MAX_REFERENCE_LAYERS);
        snprintf(names[count++], sizeof names[0], "%s", name);
    }
    return count;
}

static void set_counts(results_row *row, const emu_counters *c)
{
    static const char *const class_columns[CLASS_COUNT] = {
        [CLASS_TENSOR] = "inst_tensor", [CLASS_FP32] = "inst_fp32", [CLASS_FP64] = "inst_fp64",
        [CLASS_FP16] = "inst_fp16", [CLASS_INTEGER] = "inst_integer", [CLASS_CONVERSION] = "inst_conversion",
        [CLASS_CONTROL] = "inst_control", [CLASS_GLOBAL] = "inst_global", [CLASS_SHARED] = "inst_shared",
        [CLASS_OTHER_MEMORY] = "inst_other_memory", [CLASS_SYNC] = "inst_sync"};
    const struct { const char *column; uint64_t value; } counts[] = {
        {"grid_blocks", c->grid_blocks}, {"emulated_blocks", c->emulated_blocks}, {"launches", c->launches},
        {"warp_inst", c->warp_instructions}, {"thread_inst", c->thread_instructions},
        {"global_load_requests", c->global_load_requests}, {"global_load_sectors", c->global_load_sectors},
        {"global_load_bytes", c->global_load_bytes}, {"global_store_requests", c->global_store_requests},
        {"global_store_sectors", c->global_store_sectors}, {"global_store_bytes", c->global_store_bytes},
        {"shared_load_requests", c->shared_load_requests}, {"shared_load_wavefronts", c->shared_load_wavefronts},
        {"shared_load_ideal", c->shared_load_ideal}, {"shared_store_requests", c->shared_store_requests},
        {"shared_store_wavefronts", c->shared_store_wavefronts}, {"shared_store_ideal", c->shared_store_ideal},
        {"barriers", c->barriers}, {"tensor_flops", c->tensor_flops}};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        results_set(row, counts[i].column, "%llu", (unsigned long long)counts[i].value);
    for (int k = 0; k < CLASS_COUNT; k++)
        results_set(row, class_columns[k], "%llu", (unsigned long long)c->by_class[k]);
}

static double ratio(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

/* The timing model's row for a counted run: its modeled time on the GPU and its warps' states. */
static void set_modeled(results_row *row, const results_row *counted, const char *gpu, const emu_counters *c,
                        double flops)
{
    static const char *const shared[] = {"chapter", "kernel", "kernel_name", "pass", "layer", "n", "c", "h", "w", "k",
                                         "r", "s", "stride", "pad", "dilation", "groups", "dtype", "layout", "flops",
                                         "status", "source_sha256", "emulator_sha256"};
    for (size_t i = 0; i < sizeof shared / sizeof shared[0]; i++)
        results_set(row, shared[i], "%s", results_get(counted, shared[i]));
    const double us = (double)c->modeled_picoseconds * 1e-6;
    results_set(row, "gpu", "%s", gpu);
    results_set(row, "modeled_us", "%.3f", us);
    results_set(row, "modeled_tflops", "%.2f", us > 0 ? flops / (us * 1e-6) / 1e12 : 0.0);
    results_set(row, "modeled_cycles", "%llu", (unsigned long long)c->modeled_cycles);
    results_set(row, "sm_blocks", "%llu", (unsigned long long)c->modeled_sm_blocks);
    results_set(row, "resident_blocks", "%.1f", ratio(c->modeled_resident_blocks, c->launches));
    results_set(row, "issued", "%llu", (unsigned long long)c->modeled_issued);
    results_set(row, "issued_ptx", "%llu", (unsigned long long)c->modeled_issued_ptx);
    results_set(row, "machine_code", "%s", c->modeled_sass_launches == 0 ? "ptx"
                                           : c->modeled_sass_launches == c->launches ? "sass" : "mixed");
    for (int i = 0; i < STALL_COUNT; i++) {
        char column[64];
        snprintf(column, sizeof column, "warp_cycles_%s", emu_stall_names[i]);
        results_set(row, column, "%llu", (unsigned long long)c->modeled_stalls[i]);
    }
}

/* The most epilogues a kernel's registry row compares it with (conv.h, compared_epilogues). */
#define MAX_COMPARED 4

/* --quick: a first look at the ladder, each chapter's last step the emulator runs (no later kernel of its
 * chapter but those that call a vendor library, whose machine code has no PTX). */
static bool last_of_chapter(int i)
{
    for (int j = i + 1; j < registry_count() && strncmp(registry_kernel(i)->id, registry_kernel(j)->id, 2) == 0; j++)
        if (!registry_kernel(j)->library)
            return false;
    return !registry_kernel(i)->library;
}

/* The runs of one kernel: without an epilogue when none is asked for and the kernel has a plain launch
 * (05l has none); with the asked epilogue when the kernel has a fused launch, or else with each of the
 * epilogues its registry row compares it with. Returns how many were written to runs. */
static int kernel_runs(const conv_kernel *kernel, epilogue_ops asked, epilogue_ops runs[1 + MAX_COMPARED])
{
    int count = 0;
    if (kernel->launch && !epilogue_any(asked))
        runs[count++] = (epilogue_ops){0};
    if (kernel->launch_fused && epilogue_any(asked)) {
        runs[count++] = asked;
    } else if (kernel->launch_fused && kernel->compared_epilogues) {
        char list[256];
        snprintf(list, sizeof list, "%s", kernel->compared_epilogues);
        for (char *save = NULL, *ops = strtok_r(list, ";", &save); ops; ops = strtok_r(NULL, ";", &save)) {
            char why[256];
            if (count == 1 + MAX_COMPARED)
                fail("kernel %s compares more than %d epilogues", kernel->id, MAX_COMPARED);
            if (!epilogue_parse(ops, &runs[count++], why, sizeof why))
                fail("kernel %s's compared epilogue '%s': %s", kernel->id, ops, why);
        }
    }
    return count;
}

bool emulator_counting(emu_bench_sample_fn **sample, emu_bench_take_fn **take)
{
    *sample = (emu_bench_sample_fn *)dlsym(RTLD_DEFAULT, EMU_BENCH_SAMPLE);
    *take = (emu_bench_take_fn *)dlsym(RTLD_DEFAULT, EMU_BENCH_TAKE);
    return *sample && *take;
}

int bench_emulated(const emulated_bench *request)
{
    emu_bench_sample_fn *sample;
    emu_bench_take_fn *take;
    if (!emulator_counting(&sample, &take))
        fail("the emulator's library exports no counters (%s, %s): is libcudaemu.so out of date?", EMU_BENCH_SAMPLE,
             EMU_BENCH_TAKE);
    const char *what_if = getenv("EMU_MODEL_FIGURES");
    if (request->model && what_if && *what_if) /* the CSV is the GPU file's model, nothing else */
        fail("EMU_MODEL_FIGURES=%.100s: a what-if is not written to bench/results/modeled/; unset it for bench "
             "(conv run --model shows it)", what_if);
    char csv[4096];
    if (request->csv)
        snprintf(csv, sizeof csv, "%s", request->csv);
    else
        results_path(CONV_SOURCE_ROOT, "emulator", csv, sizeof csv);
    printf("bench: on the PTX emulator: counts of what each kernel executed (never times), %s\n",
           request->sample ? "from a sample of each grid's blocks, scaled to the grid" : "every block emulated");
    int rows = 0, failures = 0, total = 0;
    for (int i = 0; i < registry_count(); i++) { /* the runs to come, for the progress lines */
        const conv_kernel *kernel = registry_kernel(i);
        epilogue_ops runs[1 + MAX_COMPARED];
        char layers[MAX_REFERENCE_LAYERS][128];
        const int run_count = kernel_runs(kernel, request->epilogue, runs);
        if (kernel->device == ON_GPU && run_count && registry_selected(kernel, request->kernels) &&
            (!request->quick || last_of_chapter(i)))
            total += run_count * (request->layer ? 1 : reference_layers(kernel, layers));
    }
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    for (int i = 0; i < registry_count(); i++) {
        const conv_kernel *kernel = registry_kernel(i);
        epilogue_ops runs[1 + MAX_COMPARED];
        int run_count = kernel_runs(kernel, request->epilogue, runs);
        if (kernel->device != ON_GPU || !run_count || !registry_selected(kernel, request->kernels) ||
            (request->quick && !last_of_chapter(i)))
            continue;
        char layers[MAX_REFERENCE_LAYERS][128];
        int layer_count = request->layer ? 1 : reference_layers(kernel, layers);
        if (request->layer)
            snprintf(layers[0], sizeof layers[0], "%s", request->layer);
        for (int l = 0; l < layer_count * run_count; l++) {
            const epilogue_ops epilogue = runs[l % run_count];
            conv_problem prob;
            char why[2048];
            if (!suite_find(layers[l / run_count], 0, &prob, why, sizeof why))
                fail("%s", why);
            if (request->n > 0)
                prob.n = request->n;
            if (!problem_validate(&prob, why, sizeof why))
                fail("layer %s: %s", layers[l / run_count], why);
            run_request run = run_request_defaults(kernel, &prob);
            run.seed = request->seed;
            run.verify = run.time = run.cudnn = false;
            run.epilogue = epilogue;
            sample(request->sample);
            emu_counters counts;
            uint64_t grid_blocks, emulated_blocks;
            take(&counts, &grid_blocks, &emulated_blocks); /* nothing from earlier runs */
            run_outcome outcome = run_kernel(&run);
            take(&counts, &grid_blocks, &emulated_blocks);

            results_row row;
            results_row_init(&row, &results_emulator);
            results_set_kernel(&row, kernel->id, kernel->name, epilogue);
            results_set(&row, "pass", "%s", pass_name(kernel->pass));
            results_set(&row, "layer", "%s", layers[l / run_count]);
            results_set_problem(&row, &prob, kernel->dtype, kernel->layout);
            results_set(&row, "flops", "%.0f", problem_flops(&prob));
            results_set(&row, "min_bytes", "%.0f", outcome.min_bytes);
            results_set(&row, "source_sha256", "%s", registry_source_sha256(kernel));
            results_set(&row, "emulator_sha256", "%s", source_sha256("emu/exec.c"));
            char label[96] = "", ops[64] = "";
            if (epilogue_any(epilogue))
                epilogue_format(epilogue, ops, sizeof ops);
            snprintf(label, sizeof label, "%s%s%s", kernel->id, *ops ? "+" : "", ops);
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            const double elapsed = (double)(now.tv_sec - started.tv_sec) + 1e-9 * (double)(now.tv_nsec - started.tv_nsec);
            char left[48] = "";
            if (rows)
                snprintf(left, sizeof left, ", about %.0f s left", elapsed / rows * (total - rows));
            printf("[%d/%d, %.0f s%s] %-20s %-22s n=%-3d ", rows + 1, total, elapsed, left, label,
                   layers[l / run_count], prob.n);
            if (outcome.status == RUN_UNSUPPORTED) {
                results_set(&row, "status", "unsupported");
                printf("unsupported: %s\n", outcome.why);
            } else if (outcome.status == RUN_FAIL) { /* an error the emulator stopped the kernel for */
                results_set(&row, "status", "fail");
                printf("FAIL: %s\n", outcome.why);
                failures++;
            } else {
                results_set(&row, "status", "counted");
                set_counts(&row, &counts);
                printf("%llu of %llu blocks emulated: %.3g warp instructions, %.2f sectors per global load, %llu "
                       "shared bank conflicts\n", (unsigned long long)emulated_blocks,
                       (unsigned long long)grid_blocks, (double)counts.warp_instructions,
                       ratio(counts.global_load_sectors, counts.global_load_requests),
                       (unsigned long long)(counts.shared_load_wavefronts - counts.shared_load_ideal +
                                            counts.shared_store_wavefronts - counts.shared_store_ideal));
            }
            char reason[4200];
            if (!results_merge(csv, &row, 1, reason, sizeof reason)) /* row by row: a cut-off run keeps its rows */
                fail("%s", reason);
            if (request->model && outcome.status == RUN_PASS) {
                results_row modeled;
                results_row_init(&modeled, &results_modeled);
                set_modeled(&modeled, &row, request->model, &counts, problem_flops(&prob));
                if (counts.modeled_cycles) {
                    printf("%-20s %-22s n=%-3d modeled on %s: %.2f us (a model, not a measurement)\n", label,
                           layers[l / run_count], prob.n, request->model, (double)counts.modeled_picoseconds * 1e-6);
                } else { /* its code is not the modeled GPU's (the emulator said why) */
                    results_set(&modeled, "status", "unsupported");
                    printf("%-20s %-22s n=%-3d not modeled on %s: ptxas cannot compile its code for that GPU\n",
                           label, layers[l / run_count], prob.n, request->model);
                }
                char modeled_csv[4096], name[128];
                snprintf(name, sizeof name, "modeled/%s%s", request->ptx_alone ? "ptx_alone/" : "", request->model);
                results_path(CONV_SOURCE_ROOT, name, modeled_csv, sizeof modeled_csv);
                if (!results_merge(modeled_csv, &modeled, 1, reason, sizeof reason))
                    fail("%s", reason);
            }
            rows++;
        }
    }
    if (!rows) {
        fprintf(stderr, "conv: no kernel the emulator runs matches --kernels %s\n",
                request->kernels ? request->kernels : "");
        return 2;
    }
    printf("bench: %d rows of counts written to %s (counted by the emulator; no times)\n", rows, csv);
    return failures ? 1 : 0;
}
