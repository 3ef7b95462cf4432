/* conv: the runner. Lists the chapters' kernels and runs any of them on any convolution problem,
 * verified against the fp64 reference and timed; benchmarks them over a shape suite into the results
 * CSV. `./build/conv --help` for everything it takes.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "baseline.h"
#include "check.h"
#include "cli.h"
#include "counters.h"
#include "device.h"
#include "emulated.h"
#include "epilogue.h"
#include "harness.h"
#include "registry.h"
#include "results.h"
#include "suites.h"
#include "tensor.h"

static const char usage[] =
    "usage: conv COMMAND [options]\n"
    "\n"
    "commands:\n"
    "  list [--json]             every kernel: id, pass, dtype, layout, where it runs, what it is; with\n"
    "                            --json, every fact of its registry row that is not code (tests read it)\n"
    "  layers                    the named problems of the shape suites\n"
    "  run ID [problem] [opts]   verify and time kernel ID on one problem (default: tutorial/first_graph)\n"
    "  check PREFIX [opts]       verify every kernel whose id starts with PREFIX (\"\" for all) on the fixed\n"
    "                            awkward shapes and --random N random ones; no timing. Exits 77 (skip) when\n"
    "                            its kernels need a GPU and none answers\n"
    "  bench [opts]              benchmark kernels over a suite and write the results CSV\n"
    "\n"
    "problem (each flag overrides the --layer's value, or tutorial/first_graph's):\n"
    "  --layer SUITE/LAYER       a named layer, e.g. resnet50/res2_3x3 (see `conv layers`)\n"
    "  --n --c --h --w --k --r --s N\n"
    "                            batch, input channels, height, width, output channels, filter height, width\n"
    "  --pad N, --pad-h N, --pad-w N          zero padding (default 0, or the layer's)\n"
    "  --stride N, --stride-h N, --stride-w N (default 1)\n"
    "  --dil N, --dil-h N, --dil-w N          dilation (default 1)\n"
    "  --groups N                             channel groups (default 1; depthwise: groups = c = k)\n"
    "\n"
    "options:\n"
    "  --seed S          random inputs are drawn from seed S (default 42); printed with every result\n"
    "  --reps N          timed repetitions, median reported (default 20)\n"
    "  --warmup N        untimed runs first (default 5; 1 for CPU kernels)\n"
    "  --no-verify       skip the reference check (run only)\n"
    "  --no-cudnn        skip the cuDNN baseline (run, bench)\n"
    "  --save-npy DIR    write the inputs, the output and the fp64 reference as .npy files to DIR (run);\n"
    "                    with --epilogue also its operands: bias, scale, shift (K,), residual (like y)\n"
    "  --load-npy DIR    read the inputs from DIR/{x,w,dy}.npy instead of random data, in logical\n"
    "                    NCHW / KCRS order, float16/32/64 (run); with --epilogue also its operands\n"
    "  --epilogue OPS    fuse bias, bn (scale+shift), residual, relu into the store, e.g. bn,residual,relu\n"
    "                    (run, check, bench; fprop kernels with a fused epilogue; verified against the\n"
    "                    reference convolution followed by the same operations, see common/kernel/epilogue.h;\n"
    "                    bench rows are named e.g. 05i+bn+relu and compared with cuDNN's fused call)\n"
    "  --random N        random shapes per kernel (check; default 100)\n"
    "  --suite NAME      resnet50, tutorial or mobilenet (bench; default resnet50); check: verify on its\n"
    "                    layers too (at --n, or the layer's N), after the fixed and random shapes\n"
    "  --kernels LIST    comma-separated id prefixes (bench; default: every kernel)\n"
    "  --quick           three layers of the suite, 10 repetitions: a first look (bench; bench --emulate:\n"
    "                    each chapter's last step only)\n"
    "  --csv FILE        where to write results (bench; default bench/results/<gpu>.csv)\n"
    "  --emulate         run the GPU kernels on the PTX emulator (emu/) instead of a GPU: verified, never\n"
    "                    timed; kernels that call cuBLAS or cuDNN are n/a there (run, check). Without a\n"
    "                    GPU the emulator answers anyway, saying so in one line first\n"
    "  --gpu             a GPU or nothing: no emulator when none answers (for scripts that want times)\n"
    "  --counters        with --emulate: what each kernel executed, counted as Nsight Compute defines it\n"
    "                    (instructions by class, global sectors per request, shared-memory bank conflicts)\n"
    "  bench --emulate   no times: each GPU kernel on its chapter's reference layers (or --layer, --n),\n"
    "                    counted, into bench/results/emulator.csv (or --csv); the blocks emulated are a\n"
    "                    sample of each kind of block in the grid, the counts scaled to the grid; 05i and\n"
    "                    05l also with each epilogue their registry rows compare them with (with\n"
    "                    --epilogue: each fused kernel with that one only)\n"
    "  --sample N        with bench --emulate: blocks emulated per kind of block (default 8; 0: all)\n"
    "  --model GPU       with --emulate: also model the time on GPU (h100, a100, a6000; emu/README.md,\n"
    "                    \"The timing model\"): run and check print it, bench --emulate writes it to\n"
    "                    bench/results/modeled/GPU.csv. A model, not a measurement\n"
    "  --ptx-alone       with --model: each PTX instruction one machine instruction, as if ptxas changed\n"
    "                    nothing (the model reads ptxas's machine code otherwise); bench --emulate writes\n"
    "                    bench/results/modeled/ptx_alone/GPU.csv. To see what the machine code changes\n"
    "\n"
    "Exit status: 0 all verified, 1 a verification failed or an error, 2 bad input (a flag, or a\n"
    "--load-npy file) or an unsupported problem, 77 (check) no GPU for GPU kernels.\n";

typedef struct {
    const char *command;
    const char *target;          /* run ID / check PREFIX */
    const char *layer;
    conv_problem overrides;      /* -1 where not given */
    uint64_t seed;
    int reps, warmup, random_count, sample;
    bool verify, cudnn, quick, emulate, gpu, counters, json; /* emulate, gpu, counters: emulate_if_asked() */
    bool ptx_alone;              /* --ptx-alone: the model without the machine code (EMU_NVDISASM empty) */
    bool suite_given;            /* check verifies on the suite's layers only when asked */
    const char *save_dir, *load_dir, *suite, *kernels, *csv, *epilogue_text;
    const char *model;           /* --model GPU: the timing model's GPU (a file bench/<gpu>.json) */
    epilogue_ops epilogue;
    int argc;                    /* the command line, for choose_device() */
    char **argv;
} options;

static options parse_options(int argc, char **argv)
{
    options opts = {.seed = 42, .reps = -1, .warmup = -1, .sample = -1, .random_count = 100, .verify = true, .cudnn = true,
                    .argc = argc, .argv = argv};
    memset(&opts.overrides, 0xff, sizeof opts.overrides); /* every field -1: not given */
    opts.command = cli_command(argc, argv, usage);
    int at = 2;
    if (strcmp(opts.command, "run") == 0 || strcmp(opts.command, "check") == 0) {
        if (at >= argc || (argv[at][0] == '-' && argv[at][1] == '-'))
            cli_error("'%s' needs a kernel id (see conv list)", opts.command);
        opts.target = argv[at++];
    } else if (strcmp(opts.command, "list") != 0 && strcmp(opts.command, "layers") != 0 &&
               strcmp(opts.command, "bench") != 0) {
        cli_error("unknown command '%s'", opts.command);
    }

    conv_problem *given = &opts.overrides;
    const cli_option options[] = {
        {CLI_INTEGER("--n", &given->n, 1, INT_MAX)}, {CLI_INTEGER("--c", &given->c, 1, INT_MAX)},
        {CLI_INTEGER("--h", &given->h, 1, INT_MAX)}, {CLI_INTEGER("--w", &given->w, 1, INT_MAX)},
        {CLI_INTEGER("--k", &given->k, 1, INT_MAX)}, {CLI_INTEGER("--r", &given->r, 1, INT_MAX)},
        {CLI_INTEGER("--s", &given->s, 1, INT_MAX)},
        {CLI_INTEGER("--pad", &given->pad_h, 0, INT_MAX), .also = &given->pad_w},
        {CLI_INTEGER("--pad-h", &given->pad_h, 0, INT_MAX)}, {CLI_INTEGER("--pad-w", &given->pad_w, 0, INT_MAX)},
        {CLI_INTEGER("--stride", &given->stride_h, 1, INT_MAX), .also = &given->stride_w},
        {CLI_INTEGER("--stride-h", &given->stride_h, 1, INT_MAX)},
        {CLI_INTEGER("--stride-w", &given->stride_w, 1, INT_MAX)},
        {CLI_INTEGER("--dil", &given->dil_h, 1, INT_MAX), .also = &given->dil_w},
        {CLI_INTEGER("--dil-h", &given->dil_h, 1, INT_MAX)}, {CLI_INTEGER("--dil-w", &given->dil_w, 1, INT_MAX)},
        {CLI_INTEGER("--groups", &given->groups, 1, INT_MAX)}, {CLI_INTEGER("--reps", &opts.reps, 1, INT_MAX)},
        {CLI_INTEGER("--warmup", &opts.warmup, 0, INT_MAX)}, {CLI_INTEGER("--sample", &opts.sample, 0, INT_MAX)},
        {CLI_INTEGER("--random", &opts.random_count, 0, INT_MAX)}, {CLI_SEED_INTO("--seed", &opts.seed)},
        {CLI_STRING("--layer", &opts.layer)}, {CLI_STRING("--save-npy", &opts.save_dir)},
        {CLI_STRING("--load-npy", &opts.load_dir)}, {CLI_STRING("--suite", &opts.suite)},
        {CLI_STRING("--kernels", &opts.kernels)}, {CLI_STRING("--csv", &opts.csv)},
        {CLI_STRING("--epilogue", &opts.epilogue_text)}, {CLI_STRING("--model", &opts.model)},
        {CLI_SETS("--no-verify", &opts.verify, false)},
        {CLI_SETS("--no-cudnn", &opts.cudnn, false)}, {CLI_SETS("--quick", &opts.quick, true)},
        {CLI_SETS("--emulate", &opts.emulate, true)}, {CLI_SETS("--gpu", &opts.gpu, true)},
        {CLI_SETS("--counters", &opts.counters, true)}, {CLI_SETS("--json", &opts.json, true)},
        {CLI_SETS("--ptx-alone", &opts.ptx_alone, true)}};
    /* which command reads which option is checked where it is read (the commands share most of them) */
    cli_parse(argc, argv, at, options, (int)(sizeof options / sizeof options[0]), NULL, usage);
    char why[256];
    if (opts.epilogue_text && !epilogue_parse(opts.epilogue_text, &opts.epilogue, why, sizeof why))
        cli_error("%s", why);
    if (opts.model) { /* a GPU the model knows is a GPU file: bench/<gpu>.json (docs/gpus.md) */
        char file[4096];
        struct stat st;
        snprintf(file, sizeof file, "%s/bench/%s.json", CONV_SOURCE_ROOT, opts.model);
        if (!*opts.model || strspn(opts.model, "abcdefghijklmnopqrstuvwxyz0123456789") != strlen(opts.model) ||
            stat(file, &st) != 0)
            cli_error("--model '%s': no such GPU file bench/<gpu>.json (the model knows h100, a100, a6000)", opts.model);
    }
    if (opts.ptx_alone && !opts.model)
        cli_error("--ptx-alone is an option of the timing model: give --model GPU too");
    opts.suite_given = opts.suite != NULL;
    if (!opts.suite)
        opts.suite = "resnet50";
    if (opts.suite_given && !suite_exists(opts.suite))
        cli_error("unknown suite '%s' (known: resnet50, tutorial, mobilenet)", opts.suite);
    return opts;
}

/* The problem the flags describe: a layer (or tutorial/first_graph), then each given field (-1 in
 * overrides: not given). p and q are derived by problem_validate(), never given. */
static conv_problem problem_from_options(const options *opts)
{
    conv_problem prob;
    char why[2048];
    if (!suite_find(opts->layer ? opts->layer : "tutorial/first_graph", 0, &prob, why, sizeof why)) {
        cli_fail(2, "%s", why);
    }
    const conv_problem *given = &opts->overrides;
#define OVERRIDE(field) prob.field = given->field >= 0 ? given->field : prob.field
    OVERRIDE(n), OVERRIDE(c), OVERRIDE(h), OVERRIDE(w), OVERRIDE(k), OVERRIDE(r), OVERRIDE(s);
    OVERRIDE(pad_h), OVERRIDE(pad_w), OVERRIDE(stride_h), OVERRIDE(stride_w), OVERRIDE(dil_h), OVERRIDE(dil_w);
    OVERRIDE(groups);
#undef OVERRIDE
    if (!problem_validate(&prob, why, sizeof why)) {
        cli_fail(2, "impossible problem: %s", why);
    }
    return prob;
}

static const conv_kernel *kernel_or_exit(const char *id)
{
    const conv_kernel *kernel = registry_find(id);
    int starting = 0;
    for (int i = 0; i < registry_count(); i++)
        starting += registry_matches(registry_kernel(i), id);
    if (!kernel && starting) { /* a chapter or a prefix: run takes one kernel, check takes them all */
        fprintf(stderr, "conv: '%s' starts %d kernel ids, and run takes one:", id, starting);
        for (int i = 0; i < registry_count(); i++)
            if (registry_matches(registry_kernel(i), id))
                fprintf(stderr, " %s", registry_kernel(i)->id);
        fprintf(stderr, " (conv check %s checks them all)\n", id);
        exit(2);
    }
    if (!kernel) {
        char known[1024] = "";
        for (int i = 0, used = 0; i < registry_count() && used < (int)sizeof known; i++)
            used += snprintf(known + used, sizeof known - (size_t)used, " %s", registry_kernel(i)->id);
        cli_fail(2, "unknown kernel '%s' (known:%s)", id, known);
    }
    return kernel;
}

static void apply_timing_options(const options *opts, run_request *request)
{
    if (opts->reps > 0)
        request->timing.reps = opts->reps;
    if (opts->warmup >= 0)
        request->timing.warmup = opts->warmup;
}

/* A string as a JSON string literal (the regular expressions' backslashes, names' quotes). */
static void print_json_string(const char *text)
{
    putchar('"');
    for (const char *c = text; *c; c++) {
        if (*c == '"' || *c == '\\')
            printf("\\%c", *c);
        else if (*c == '\n')
            printf("\\n");
        else
            putchar(*c);
    }
    putchar('"');
}

/* A field that lists things one per line (ptx, sass) or by commas (layers), as a JSON array. */
static void print_json_list(const char *text, char separator)
{
    putchar('[');
    bool first = true;
    for (const char *at = text; at && *at;) {
        const char *end = strchr(at, separator);
        size_t length = end ? (size_t)(end - at) : strlen(at);
        char item[512];
        snprintf(item, sizeof item, "%.*s", (int)length, at);
        printf("%s", first ? "" : ", ");
        print_json_string(item);
        first = false;
        at = end ? end + 1 : at + length;
    }
    putchar(']');
}

/* Every kernel's registry facts that are not code, for the tests that check them (check_build.py). */
static int command_list_json(void)
{
    printf("[\n");
    for (int i = 0; i < registry_count(); i++) {
        const conv_kernel *kernel = registry_kernel(i);
        printf("  {\"id\": ");
        print_json_string(kernel->id);
        printf(", \"name\": ");
        print_json_string(kernel->name);
        printf(", \"source\": ");
        print_json_string(kernel->source);
        printf(", \"pass\": \"%s\", \"dtype\": \"%s\", \"layout\": \"%s\", \"device\": \"%s\", \"layers\": ",
               pass_name(kernel->pass), dtype_name(kernel->dtype), layout_name(kernel->layout),
               kernel->device == ON_GPU ? "gpu" : "cpu");
        print_json_list(kernel->layers ? kernel->layers : CONV_REFERENCE_LAYER, ',');
        printf(", \"compared_epilogues\": ");
        print_json_list(kernel->compared_epilogues, ';');
        printf(", \"ptx\": ");
        print_json_list(kernel->ptx, '\n');
        printf(", \"sass\": ");
        print_json_list(kernel->sass, '\n');
        printf("}%s\n", i + 1 < registry_count() ? "," : "");
    }
    printf("]\n");
    return 0;
}

static int command_list(const options *opts)
{
    if (opts->json)
        return command_list_json();
    printf("%-5s %-6s %-4s %-6s %-4s %s\n", "id", "pass", "type", "layout", "runs", "kernel");
    for (int i = 0; i < registry_count(); i++) {
        const conv_kernel *kernel = registry_kernel(i);
        printf("%-5s %-6s %-4s %-6s %-4s %s\n", kernel->id, pass_name(kernel->pass), dtype_name(kernel->dtype),
               layout_name(kernel->layout), kernel->device == ON_GPU ? "gpu" : "cpu", kernel->name);
    }
    return 0;
}

static int command_layers(void)
{
    for (int i = 0; i < suite_layer_count(); i++) {
        const suite_layer *layer = suite_layer_at(i);
        char name[64], text[128];
        snprintf(name, sizeof name, "%s/%s", layer->suite, layer->layer);
        problem_format(&layer->prob, text, sizeof text);
        printf("%-30s %-40s %8.2f GFLOP\n", name, text, problem_flops(&layer->prob) / 1e9);
    }
    return 0;
}

/* One line per run. inputs_from names the --load-npy folder; otherwise the inputs came from the seed. */
static void print_outcome(const conv_kernel *kernel, const conv_problem *prob, uint64_t seed,
                          const char *inputs_from, epilogue_ops epilogue, const run_outcome *outcome)
{
    char text[128];
    problem_format(prob, text, sizeof text);
    printf("%s %s %s %s | %s | ", kernel->id, pass_name(kernel->pass), dtype_name(kernel->dtype),
           layout_name(kernel->layout), text);
    if (epilogue_any(epilogue)) {
        char ops[64];
        epilogue_format(epilogue, ops, sizeof ops);
        printf("epilogue %s | ", ops);
    }
    if (inputs_from)
        printf("inputs from %s", inputs_from);
    else
        printf("seed %llu", (unsigned long long)seed);
    if (outcome->status == RUN_UNSUPPORTED) {
        printf(" | unsupported: %s\n", outcome->why);
        return;
    }
    if (outcome->timed) {
        printf(" | %.4f ms (median of %d) ", outcome->timing.median_ms, outcome->timing.reps);
        if (outcome->tflops >= 0.1) /* CPU chapters run at GFLOP/s; say so rather than print 0.00 */
            printf("%.2f TFLOP/s", outcome->tflops);
        else
            printf("%.2f GFLOP/s", outcome->tflops * 1e3);
        printf(" %.3g GB/s", outcome->gbps);
        if (outcome->phase_timed)
            printf(" (%s %.4f ms of it)", kernel->phase_name, outcome->phase_timing.median_ms);
    }
    if (!outcome->timed && kernel->device == ON_GPU && on_emulator())
        printf(" | emulated, not timed");
    if (outcome->workspace_bytes)
        printf(" | workspace %.3g MiB = %.2fx the input", outcome->workspace_bytes / 1048576.0,
               (double)outcome->workspace_bytes / ((double)problem_x_elems(prob) * dtype_size(kernel->dtype)));
    if (outcome->cudnn.ok)
        printf(" | cuDNN %.4f ms (%s) = %.0f%% of cuDNN", outcome->cudnn.ms, outcome->cudnn.algo,
               100.0 * outcome->cudnn.ms / outcome->timing.median_ms);
    else if (outcome->timed)
        printf(" | cuDNN n/a");
    if (outcome->verified) {
        const verify_result *check = outcome->check_after_timing.tol_rel > 0 ? &outcome->check_after_timing
                                                                            : &outcome->check;
        printf(" | err %.2e (max %.2e, excess %.2f) %s", check->rel_l2, check->max_err, check->excess_ratio,
               outcome->status == RUN_PASS ? "pass" : "FAIL");
    } else {
        printf(" | not verified");
    }
    printf("\n");
    if (outcome->status == RUN_FAIL)
        printf("  %s\n", outcome->why);
    else if (outcome->timed && !outcome->cudnn.ok && kernel->device == ON_GPU)
        printf("  cuDNN: %s\n", outcome->cudnn.why);
}

/* A GPU kernel is about to run: from here on a device answers, the emulator where no GPU does (unless
 * --gpu; device.h). Called once the command's own checks have passed, so that bad input gets its one
 * line and nothing else. */
static void choose_device(const options *opts)
{
    emulate_if_asked(opts->argc, opts->argv, true);
    if (opts->model && !on_emulator() && strcmp(opts->command, "bench") == 0)
        printf("bench: --model %s: a GPU answers, so the kernels are measured and nothing is modeled\n", opts->model);
    else if (opts->model && !on_emulator())
        cli_error("--model runs the timing model inside the emulator: it needs the emulator (--emulate, or no GPU)");
}

/* --model on the emulator: the modeled time of the run's launches in one line, under its label, with the
 * warp states that held them most (the whole breakdown comes at exit with --counters). */
static void print_modeled(const conv_kernel *kernel, const conv_problem *prob, const emu_counters *c)
{
    emu_model_gpu_fn *describe = (emu_model_gpu_fn *)dlsym(RTLD_DEFAULT, EMU_MODEL_GPU);
    const char *label;
    double tensor_tflops, fp32_tflops;
    if (!describe || !describe(&label, &tensor_tflops, &fp32_tflops) || !c->modeled_picoseconds) {
        printf("not modeled: the emulator modeled none of its launches (see above)\n");
        return;
    }
    const double us = (double)c->modeled_picoseconds * 1e-6, tflops = problem_flops(prob) / (us * 1e-6) / 1e12;
    const bool tensor = kernel->dtype == DTYPE_F16;
    printf("modeled on %s (a model, not a measurement): %.2f us, %.1f TFLOP/s, %.0f%% of its %s peak; its warps "
           "waited most on", label, us, tflops, 100 * tflops / (tensor ? tensor_tflops : fp32_tflops),
           tensor ? "fp16 tensor-core" : "fp32");
    bool shown[STALL_COUNT] = {false};
    shown[STALL_SELECTED] = true;
    for (int n = 0; n < 3; n++) {
        int top = -1;
        for (int s = 0; s < STALL_COUNT; s++)
            if (!shown[s] && c->modeled_stalls[s] && (top < 0 || c->modeled_stalls[s] > c->modeled_stalls[top]))
                top = s;
        if (top < 0)
            break;
        shown[top] = true;
        printf("%s %s %.2f", n ? "," : "", emu_stall_names[top],
               c->modeled_issued ? (double)c->modeled_stalls[top] / (double)c->modeled_issued : 0.0);
    }
    printf(" (cycles per issued instruction; --counters: all of it)\n");
}

static int command_run(const options *opts)
{
    const conv_kernel *kernel = kernel_or_exit(opts->target);
    conv_problem prob = problem_from_options(opts);
    if (kernel->device == ON_GPU)
        choose_device(opts);
    /* The default problem at its own batch takes the emulator about half a minute on two cores; one
     * image of it, a few seconds. Said, and --n takes it back. */
    if (!opts->layer && !opts->load_dir && opts->overrides.n < 0 && kernel->device == ON_GPU && on_emulator() &&
        prob.n > 1) {
        fprintf(stderr, "conv: emulated, so tutorial/first_graph at batch 1 (--n %d for its own batch of %d)\n",
                prob.n, prob.n);
        prob.n = 1;
    }
    if (opts->save_dir) {
        if (mkdir(opts->save_dir, 0755) != 0 && errno != EEXIST)
            fail("cannot create %s: %s", opts->save_dir, strerror(errno));
    }
    char why[256];
    if (kernel->device == ON_GPU && !gpu_available(why, sizeof why)) {
        fprintf(stderr, "conv: kernel %s runs on the GPU: %s\n", kernel->id, why);
        return 1;
    }
    if (opts->counters && !on_emulator())
        cli_error("--counters counts what the emulator executes: it needs the emulator (--emulate, or no GPU)");
    run_request request = run_request_defaults(kernel, &prob);
    request.seed = opts->seed;
    request.verify = opts->verify;
    request.cudnn = opts->cudnn;
    request.save_dir = opts->save_dir;
    request.load_dir = opts->load_dir;
    request.epilogue = opts->epilogue;
    apply_timing_options(opts, &request);
    /* --model: the run's launches counted (every block), so that their modeled time is this run's */
    emu_bench_sample_fn *sample = NULL;
    emu_bench_take_fn *take = NULL;
    if (!(opts->model && on_emulator() && emulator_counting(&sample, &take)))
        take = NULL;
    emu_counters modeled;
    uint64_t grid_blocks, emulated_blocks;
    if (take) {
        sample(0);
        take(&modeled, &grid_blocks, &emulated_blocks); /* nothing from before */
    }
    run_outcome outcome = run_kernel(&request);
    if (take)
        take(&modeled, &grid_blocks, &emulated_blocks);
    print_outcome(kernel, &prob, opts->seed, opts->load_dir, opts->epilogue, &outcome);
    if (take && outcome.status != RUN_UNSUPPORTED)
        print_modeled(kernel, &prob, &modeled);
    if (outcome.status == RUN_PASS && opts->save_dir)
        printf("saved the inputs, the output and the fp64 reference as .npy in %s\n", opts->save_dir);
    return outcome.status == RUN_PASS ? 0 : outcome.status == RUN_FAIL ? 1 : 2;
}

/* The branch a kernel's launch takes for a problem, checked against its list of branches. */
static int branch_index(const conv_kernel *kernel, const conv_problem *prob)
{
    int count = 0;
    while (kernel->branches[count])
        count++;
    const int index = kernel->branch_of(prob);
    if (count > CONV_MAX_BRANCHES || index < 0 || index >= count)
        fail("kernel %s: branch_of gave %d for a list of %d branches (at most %d)", kernel->id, index, count,
             CONV_MAX_BRANCHES);
    return index;
}

/* Verifies one kernel on the fixed shapes and random ones; returns the number of failures, or -1 when
 * the kernel ran on none of them because the emulator cannot run it (n/a, said in one line). */
static int check_kernel(const conv_kernel *kernel, const options *opts)
{
    int passed = 0, failed = 0, unsupported = 0;
    int branch_shapes[CONV_MAX_BRANCHES] = {0}; /* fixed shapes that took each of the kernel's branches */
    int branch_random[CONV_MAX_BRANCHES] = {0}; /* and random ones */
    char first_reason[512] = "";
    uint64_t state = opts->seed;
    int total = check_fixed_count() + opts->random_count, layers = 0;
    const suite_layer *suite[64];
    for (int i = 0; opts->suite_given && i < suite_layer_count() && layers < 64; i++)
        if (strcmp(suite_layer_at(i)->suite, opts->suite) == 0)
            suite[layers++] = suite_layer_at(i);
    for (int i = 0; i < total + layers; i++) {
        conv_problem prob = i < check_fixed_count() ? check_fixed_problem(i)
                            : i < total             ? check_random_problem(&state)
                                                    : suite[i - total]->prob;
        if (i >= total && opts->overrides.n > 0)
            prob.n = opts->overrides.n; /* a smaller batch of a valid layer stays valid */
        run_request request = run_request_defaults(kernel, &prob);
        request.seed = opts->seed + 1000003ull * (uint64_t)i;
        request.time = false;
        request.epilogue = opts->epilogue;
        run_outcome outcome = run_kernel(&request);
        if (kernel->branch_of && i < total && outcome.status != RUN_UNSUPPORTED)
            (i < check_fixed_count() ? branch_shapes : branch_random)[branch_index(kernel, &prob)]++;
        if (outcome.status == RUN_PASS) {
            passed++;
        } else if (outcome.status == RUN_UNSUPPORTED) {
            if (!unsupported++)
                snprintf(first_reason, sizeof first_reason, "%s", outcome.why);
        } else {
            failed++;
            printf("FAIL ");
            print_outcome(kernel, &prob, request.seed, NULL, request.epilogue, &outcome);
        }
    }
    if (passed == 0 && failed == 0 && kernel->device == ON_GPU && on_emulator()) {
        printf("%-4s n/a on the emulator: %s\n", kernel->id, first_reason);
        return -1;
    }
    char suite_part[96] = "";
    if (layers)
        snprintf(suite_part, sizeof suite_part, ", %d %s layers", layers, opts->suite);
    printf("%-4s %d shapes (%d fixed, %d random from seed %llu%s): %d pass, %d fail, %d unsupported\n", kernel->id,
           total + layers, check_fixed_count(), opts->random_count, (unsigned long long)opts->seed, suite_part, passed,
           failed, unsupported);
    if (passed == 0) {
        printf("%-4s supports none of the shapes: that is a failure too\n", kernel->id);
        failed++;
    }
    for (int b = 0; kernel->branches && kernel->branches[b]; b++) {
        printf("%-4s   branch %-34s %d fixed shape%s, %d random\n", kernel->id, kernel->branches[b], branch_shapes[b],
               branch_shapes[b] == 1 ? "" : "s", branch_random[b]);
        if (!branch_shapes[b]) {
            printf("FAIL %s: no fixed shape takes its branch '%s': a path no test runs (add a shape to the "
                   "fixed ones, common/harness/harness.c)\n", kernel->id, kernel->branches[b]);
            failed++;
        }
    }
    return failed;
}

static int command_check(const options *opts)
{
    int matched = 0, checked = 0, failures = 0, skipped = 0, not_applicable = 0;
    bool on_gpu = false;
    for (int i = 0; i < registry_count(); i++)
        on_gpu |= registry_matches(registry_kernel(i), opts->target) && registry_kernel(i)->device == ON_GPU;
    if (on_gpu)
        choose_device(opts);
    char why[256];
    bool have_gpu = gpu_available(why, sizeof why);
    for (int i = 0; i < registry_count(); i++) {
        const conv_kernel *kernel = registry_kernel(i);
        if (!registry_matches(kernel, opts->target))
            continue;
        matched++;
        if (epilogue_any(opts->epilogue) && !kernel->launch_fused) {
            printf("%-4s has no fused epilogue: not checked with --epilogue\n", kernel->id);
        } else if (!epilogue_any(opts->epilogue) && !kernel->launch) {
            printf("%-4s runs only with an epilogue: checked with --epilogue\n", kernel->id);
        } else if (kernel->device == ON_GPU && !have_gpu) {
            skipped++;
        } else if (kernel->library && kernel->device == ON_GPU && on_emulator()) {
            printf("%-4s n/a: calls %s, whose machine code the emulator cannot run\n", kernel->id, kernel->library);
            not_applicable++;
        } else {
            int failed = check_kernel(kernel, opts);
            if (failed < 0) {
                not_applicable++;
            } else {
                checked++;
                failures += failed;
            }
        }
    }
    if (!matched) {
        cli_fail(2, "no kernel id starts with '%s' (see conv list)", opts->target);
    }
    if (failures)
        return 1;
    if (skipped) { /* a check that could not run is not a pass */
        printf("skip: %d GPU kernel%s not checked: %s\n", skipped, skipped > 1 ? "s" : "", why);
        return 77;
    }
    if (!checked && not_applicable) {
        printf("skip: no kernel checked: the emulator cannot run %s\n", not_applicable > 1 ? "them" : "it");
        return 77;
    }
    return 0;
}

/* The layers a --quick run visits: a 3x3, a strided 3x3 and a 1x1, the shapes that behave differently. */
static bool quick_layer(const suite_layer *layer)
{
    static const char *const quick[] = {"res2_3x3", "res3_3x3_s2", "res4_1x1_expand", "first_graph",
                                        "dw144_56", "dw144_56_s2", "pw_expand_24_144"};
    for (size_t i = 0; i < sizeof quick / sizeof quick[0]; i++)
        if (strcmp(layer->layer, quick[i]) == 0)
            return true;
    return false;
}

/* CPU kernels are far too slow for the suite's batch sizes: the benchmark runs them at N=1, and only
 * where that is under this many flops, so a chapter-01 point on the plots costs seconds, not hours. */
#define BENCH_CPU_MAX_FLOPS 1e9

typedef struct {
    int layer;
    conv_pass pass;
    conv_dtype dtype;
    conv_layout layout;
    baseline_result result;
} cudnn_cache_entry;

/* cuDNN's time for a job, measured once per layer, pass, dtype and layout (the run's epilogue, if any, is
 * the same for every job: then the baseline is cuDNN's fused conv + bias + activation). */
static baseline_result cudnn_cached(cudnn_cache_entry *cache, int *cache_count, int layer, const conv_problem *prob,
                                    const conv_kernel *kernel, epilogue_ops epilogue, const timing_opts *timing)
{
    for (int i = 0; i < *cache_count; i++)
        if (cache[i].layer == layer && cache[i].pass == kernel->pass && cache[i].dtype == kernel->dtype &&
            cache[i].layout == kernel->layout)
            return cache[i].result;
    cudnn_cache_entry entry = {layer, kernel->pass, kernel->dtype, kernel->layout,
                               epilogue_any(epilogue)
                                   ? cudnn_fused_best(prob, kernel->dtype, kernel->layout, epilogue, timing)
                                   : cudnn_best(prob, kernel->pass, kernel->dtype, kernel->layout, timing)};
    cache[(*cache_count)++] = entry;
    return entry.result;
}

static void fill_row(results_row *row, const conv_kernel *kernel, epilogue_ops epilogue, const suite_layer *layer,
                     const conv_problem *prob, const run_outcome *outcome, const baseline_result *cudnn,
                     double peak_tflops, double peak_gbps, const char *date)
{
    results_row_init(row, &results_gpu);
    results_set_kernel(row, kernel->id, kernel->name, epilogue);
    results_set(row, "pass", "%s", pass_name(kernel->pass));
    results_set(row, "layer", "%s/%s", layer->suite, layer->layer);
    results_set_problem(row, prob, kernel->dtype, kernel->layout);
    results_set(row, "status", "%s", outcome->status == RUN_PASS ? "pass" : outcome->status == RUN_FAIL ? "fail"
                                                                                                      : "unsupported");
    if (outcome->verified)
        results_set(row, "rel_err", "%.3e", outcome->check_after_timing.tol_rel > 0 ? outcome->check_after_timing.rel_l2
                                                                                    : outcome->check.rel_l2);
    if (outcome->timed)
        results_set_timing(row, outcome->timing.median_ms, outcome->timing.reps, problem_flops(prob),
                           outcome->min_bytes, peak_tflops, peak_gbps);
    if (cudnn->ok) {
        results_set(row, "cudnn_ms", "%.6g", cudnn->ms);
        results_set(row, "cudnn_algo", "%s", cudnn->algo);
        if (outcome->timed)
            results_set(row, "pct_cudnn", "%.2f", 100.0 * cudnn->ms / outcome->timing.median_ms);
    }
    results_set_machine(row, peak_tflops, peak_gbps, registry_source_sha256(kernel), date);
}

static int bench_without_gpu(const options *opts, const char *why)
{
    printf("bench: %s\n", why);
    if (epilogue_any(opts->epilogue)) {
        printf("bench: the fused epilogues run only in the GPU chapters; nothing to run here\n");
        return 0;
    }
    printf("bench: the GPU chapters and cuDNN need a GPU; running the CPU chapter on a small problem instead\n");
    conv_problem prob;
    char reason[2048];
    if (!suite_find("tutorial/first_graph", 1, &prob, reason, sizeof reason))
        fail("%s", reason);
    int failures = 0;
    for (int i = 0; i < registry_count(); i++) {
        const conv_kernel *kernel = registry_kernel(i);
        if (kernel->device != ON_CPU || !registry_selected(kernel, opts->kernels))
            continue;
        run_request request = run_request_defaults(kernel, &prob);
        request.seed = opts->seed;
        request.timing.reps = opts->quick ? 3 : 5;
        apply_timing_options(opts, &request);
        run_outcome outcome = run_kernel(&request);
        print_outcome(kernel, &prob, request.seed, NULL, request.epilogue, &outcome);
        failures += outcome.status == RUN_FAIL;
    }
    printf("bench: no results CSV written (CPU timings are not GPU measurements)\n");
    return failures ? 1 : 0;
}

static double seconds_since(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + 1e-9 * (double)(now.tv_nsec - start->tv_nsec);
}

static int command_bench(const options *opts)
{
    if (!suite_exists(opts->suite))
        cli_error("unknown suite '%s' (known: resnet50, tutorial, mobilenet)", opts->suite);
    choose_device(opts);
    if (opts->sample >= 0 && !on_emulator())
        cli_error("--sample chooses the blocks the emulator runs: it needs the emulator (--emulate, or no GPU)");
    char why[256];
    if (!gpu_available(why, sizeof why))
        return bench_without_gpu(opts, why);
    if (on_emulator()) {
        conv_problem layer;
        char reason[2048];
        if (opts->layer && !suite_find(opts->layer, 0, &layer, reason, sizeof reason))
            cli_error("%s", reason);
        emulated_bench request = {.kernels = opts->kernels, .layer = opts->layer, .n = opts->overrides.n,
                                  .sample = opts->sample >= 0 ? (unsigned)opts->sample : 8,
                                  .csv = opts->csv, .seed = opts->seed, .epilogue = opts->epilogue,
                                  .quick = opts->quick, .model = opts->model, .ptx_alone = opts->ptx_alone};
        return bench_emulated(&request);
    }

    char csv[4096];
    if (opts->csv)
        snprintf(csv, sizeof csv, "%s", opts->csv);
    else
        results_default_path(CONV_SOURCE_ROOT, gpu_name(), csv, sizeof csv);

    printf("bench: %s, CUDA %s, cuDNN %s; measuring the ceilings...\n", gpu_name(), cuda_runtime_version(),
           cudnn_version_string());
    fflush(stdout);
    double peak_f16 = ceiling_fp16_tflops(), peak_f32 = ceiling_fp32_tflops(), peak_gbps = ceiling_copy_gbps();
    printf("bench: ceilings: fp16 tensor-core GEMM %.1f TFLOP/s, fp32 FMA GEMM %.1f TFLOP/s, copy %.0f GB/s\n",
           peak_f16, peak_f32, peak_gbps);

    /* The jobs: every selected kernel on every layer of the suite (CPU kernels: see BENCH_CPU_MAX_FLOPS). */
    const bool fused = epilogue_any(opts->epilogue);
    typedef struct { const conv_kernel *kernel; int layer; conv_problem prob; } job;
    int capacity = registry_count() * suite_layer_count(), job_count = 0;
    job *jobs = xmalloc((size_t)capacity * sizeof *jobs);
    for (int k = 0; k < registry_count(); k++) {
        const conv_kernel *kernel = registry_kernel(k);
        /* with --epilogue, the kernels that have one (05l, the unfused comparison, only then) */
        if (!registry_selected(kernel, opts->kernels) || !(fused ? kernel->launch_fused != NULL : kernel->launch != NULL))
            continue;
        for (int l = 0; l < suite_layer_count(); l++) {
            const suite_layer *layer = suite_layer_at(l);
            if (strcmp(layer->suite, opts->suite) != 0 || (opts->quick && !quick_layer(layer)))
                continue;
            conv_problem prob = layer->prob;
            if (opts->overrides.n > 0)
                prob.n = opts->overrides.n;
            if (kernel->device == ON_CPU) {
                prob.n = 1;
                if (problem_validate(&prob, why, sizeof why) && problem_flops(&prob) > BENCH_CPU_MAX_FLOPS)
                    continue;
            }
            if (!problem_validate(&prob, why, sizeof why))
                fail("suite layer %s/%s: %s", layer->suite, layer->layer, why);
            jobs[job_count++] = (job){kernel, l, prob};
        }
    }
    if (!job_count) {
        free(jobs);
        cli_fail(2, "no kernel matches --kernels %s%s", opts->kernels ? opts->kernels : "",
                 fused ? " with a fused epilogue" : "");
    }

    char date[16];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    cudnn_cache_entry *cache = xmalloc((size_t)job_count * sizeof *cache);
    int cache_count = 0, failures = 0;
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    for (int j = 0; j < job_count; j++) {
        const job *task = &jobs[j];
        const suite_layer *layer = suite_layer_at(task->layer);
        double elapsed = seconds_since(&started);
        printf("[%d/%d] %s %s/%s  (%.0f s elapsed", j + 1, job_count, task->kernel->id, layer->suite, layer->layer,
               elapsed);
        if (j > 0)
            printf(", ~%.0f s left", elapsed / j * (job_count - j));
        printf(")\n");
        fflush(stdout);

        run_request request = run_request_defaults(task->kernel, &task->prob);
        request.seed = opts->seed;
        request.epilogue = opts->epilogue;
        if (opts->quick)
            request.timing.reps = 10;
        if (task->kernel->device == ON_CPU)
            request.timing.reps = 3, request.timing.warmup = 0;
        apply_timing_options(opts, &request);
        run_outcome outcome = run_kernel(&request);
        baseline_result cudnn = {.ok = false};
        if (opts->cudnn && outcome.status != RUN_UNSUPPORTED && task->kernel->device == ON_GPU)
            cudnn = cudnn_cached(cache, &cache_count, task->layer, &task->prob, task->kernel, opts->epilogue,
                                 &request.timing);
        outcome.cudnn = cudnn;
        print_outcome(task->kernel, &task->prob, request.seed, NULL, request.epilogue, &outcome);
        failures += outcome.status == RUN_FAIL;

        results_row row;
        fill_row(&row, task->kernel, opts->epilogue, layer, &task->prob, &outcome, &cudnn,
                 task->kernel->dtype == DTYPE_F16 ? peak_f16 : peak_f32, peak_gbps, date);
        char reason[4200];
        if (!results_merge(csv, &row, 1, reason, sizeof reason)) /* after every job: a cut-off run keeps its rows */
            fail("%s", reason);
    }
    printf("bench: %d measurements (%d failed verification) written to %s in %.0f s\n", job_count, failures, csv,
           seconds_since(&started));
    free(cache);
    free(jobs);
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    cli_set_program("conv");
    options opts = parse_options(argc, argv); /* the device is chosen when a command needs one (choose_device) */
    /* fp32 comparisons are fp32: no library may quietly use TF32 (read when cuDNN/cuBLAS initialize). */
    setenv("NVIDIA_TF32_OVERRIDE", "0", 1);
    if (strcmp(opts.command, "list") == 0)
        return command_list(&opts);
    if (strcmp(opts.command, "layers") == 0)
        return command_layers();
    if (strcmp(opts.command, "run") == 0)
        return command_run(&opts);
    if (strcmp(opts.command, "check") == 0)
        return command_check(&opts);
    return command_bench(&opts);
}
