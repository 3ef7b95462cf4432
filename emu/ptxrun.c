/* ptxrun: runs one kernel of any PTX file on the emulator, with buffers from and to .npy files.
 *
 *   ptxrun FILE.ptx KERNEL --grid X[,Y,Z] --block X[,Y,Z] [--smem BYTES] [--counters]
 *          [--model GPU [--sample-waves N]] ARG...
 *
 * Each ARG is the kernel's next parameter:
 *   in:PATH.npy                  a device buffer filled from the file
 *   out:PATH.npy:DTYPE:COUNT     a buffer of COUNT elements (DTYPE f16|f32|f64|u8|s8|u16|s16|u32|s32|u64|s64),
 *                                poisoned (all bits set: NaN, or -1) before the launch, written to PATH.npy
 *                                after
 *   inout:PATH.npy:OUTPATH.npy   filled from PATH.npy, written to OUTPATH.npy after
 *   u32:V  s32:V  u64:V  f32:V   a scalar
 * With --model GPU (h100, a100, a6000; or EMU_MODEL=GPU), the launch is also modeled on that GPU and the modeled time and
 * warp states printed (emu/README.md, "The timing model"; ptxas must be at $CUDA_HOME or /usr/local/cuda).
 * With --sample-waves N as well, only the first N waves of the modeled SM's blocks run, the rest of its time
 * extrapolated from them, and no other block: a large grid's time in seconds, its outputs not computed
 * (nothing is written to the out: and inout: files).
 * Exit 0 when the kernel ran; otherwise the emulator's one-line error and exit 1 (2 for bad usage).
 * Limits (USAGE below, emu/README.md): a buffer at most NPY_MAX_BYTES, --smem at most 227 KiB, the PTX
 * file at most PTX_MAX_TEXT_BYTES and whatever emu/ptx.h allows in it.
 * It is for reading PTX and trying it, and for the emulator's own tests, which are PTX no chapter
 * generated: the same interpreter as `conv --emulate`, without the CUDA runtime around it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounded.h"
#include "emu.h"
#include "model.h"
#include "npy.h"

#define USAGE                                                                                              \
    "usage: ptxrun FILE.ptx KERNEL --grid X[,Y,Z] --block X[,Y,Z] [--smem BYTES] [--counters]\n"            \
    "       [--model GPU [--sample-waves N]] ARG...\n"                                                      \
    "  ARG, one per kernel parameter:\n"                                                                   \
    "    in:PATH.npy                a buffer filled from the file\n"                                       \
    "    out:PATH.npy:DTYPE:COUNT   COUNT elements (DTYPE f16 f32 f64 u8 s8 u16 s16 u32 s32 u64 s64),\n"   \
    "                               written after\n"                                                       \
    "    inout:PATH.npy:OUT.npy     filled from PATH.npy, written to OUT.npy after\n"                      \
    "    u32:V  s32:V  u64:V  f32:V a scalar\n"                                                            \
    "  --model GPU  also model the launch's time on GPU (h100, a100, a6000): a model, not a measurement\n"   \
    "  --sample-waves N  with --model: model the first N (3 to 1000) waves of blocks of one SM, extrapolate\n" \
    "               the rest; no other block runs and no output is written\n"                               \
    "limits: a buffer at most 2^36 bytes (64 GiB); --smem at most 232448 (227 KiB); --grid and --block\n"  \
    "  dimensions 1 to 2^31-1; the PTX file at most 256 MiB, and in it at most 2^18 registers and\n"       \
    "  constants per kernel, 32764 bytes of parameters, 227 KiB of static shared memory, 512 KiB of\n"    \
    "  .local memory per thread, 1 GiB per module variable, .file indexes up to 65536 (emu/README.md)\n"

/* Bad usage: one line, exit 2. The one argument, a piece of the command line, is shown quoted and
 * escaped (bounded.h), so the message stays one line whatever it holds. */
static void usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "ptxrun: ");
    fprintf(stderr, fmt, quoted_str(arg).s);
    fprintf(stderr, " (see ptxrun --help)\n");
    exit(2);
}

static emu_dim3 parse_dim3(const char *text)
{
    unsigned v[3] = {1, 1, 1};
    int n = 0;
    const char *p = text;
    while (n < 3) {
        char *end;
        errno = 0;
        unsigned long x = strtoul(p, &end, 10);
        if (end == p || errno || x == 0 || x > 0x7fffffff)
            usage_error("bad dimensions %s (positive integers X[,Y,Z])", text);
        v[n++] = (unsigned)x;
        if (*end == 0)
            break;
        if (*end != ',')
            usage_error("bad dimensions %s (positive integers X[,Y,Z])", text);
        p = end + 1;
    }
    return (emu_dim3){v[0], v[1], v[2]};
}

typedef struct {
    void *device;          /* NULL for scalars */
    uint64_t bytes;
    npy_type type;
    int64_t count;
    const char *out_path;  /* where to write it after the launch, or NULL */
    uint64_t scalar;
    int scalar_size;
} argument;

static bool type_named(const char *name, npy_type *type)
{
    static const struct { const char *name; npy_type type; } names[] = {
        {"f16", NPY_F16}, {"f32", NPY_F32}, {"f64", NPY_F64}, {"u32", NPY_U32}, {"s32", NPY_S32},
        {"u64", NPY_U64}, {"s64", NPY_S64}, {"u8", NPY_U8}, {"s8", NPY_S8}, {"u16", NPY_U16}, {"s16", NPY_S16}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i].name) == 0) {
            *type = names[i].type;
            return true;
        }
    return false;
}

static void *device_buffer(uint64_t bytes, const char *what, bool initialized)
{
    uint64_t rounded = (bytes + 255) / 256 * 256;
    void *p = aligned_alloc(256, rounded ? rounded : 256);
    if (!p) {
        fprintf(stderr, "ptxrun: out of memory for %s\n", what);
        exit(1);
    }
    emu_alloc_add((uint64_t)(uintptr_t)p, bytes, what, initialized);
    return p;
}

static argument parse_argument(char *text)
{
    argument a = {0};
    char *colon = strchr(text, ':');
    if (!colon)
        usage_error("argument %s has no kind (in:, out:, inout:, u32:, s32:, u64:, f32:)", text);
    *colon = 0;
    char *rest = colon + 1;
    char why[4200];
    if (strcmp(text, "in") == 0 || strcmp(text, "inout") == 0) {
        char *out = NULL;
        if (text[0] == 'i' && text[2] == 'o') { /* inout:PATH:OUTPATH */
            out = strrchr(rest, ':');
            if (!out)
                usage_error("inout:%s needs an output path (inout:PATH.npy:OUTPATH.npy)", rest);
            *out++ = 0;
        }
        npy_array array;
        if (!npy_read_numeric(rest, &array, why, sizeof why)) {
            fprintf(stderr, "ptxrun: %s\n", why);
            exit(1);
        }
        a.type = array.type;
        a.count = npy_count(&array);
        a.bytes = (uint64_t)a.count * npy_type_size(array.type);
        a.device = device_buffer(a.bytes, "ptxrun buffer", true); /* filled from the file */
        memcpy(a.device, array.data, a.bytes);
        free(array.data);
        a.out_path = out;
        return a;
    }
    if (strcmp(text, "out") == 0) { /* out:PATH:DTYPE:COUNT */
        char *count_text = strrchr(rest, ':');
        if (!count_text)
            usage_error("out:%s needs DTYPE:COUNT", rest);
        *count_text++ = 0;
        char *type_text = strrchr(rest, ':');
        if (!type_text)
            usage_error("out:%s needs DTYPE:COUNT", rest);
        *type_text++ = 0;
        if (!type_named(type_text, &a.type))
            usage_error("unknown dtype %s (f16, f32, f64, u8, s8, u16, s16, u32, s32, u64, s64)", type_text);
        /* COUNT elements of the type: their bytes at most NPY_MAX_BYTES, computed without wrapping */
        uint64_t count;
        if (!bounded_u64(count_text, 10, NPY_MAX_BYTES, &count) || count == 0 ||
            !bounded_mul(count, npy_type_size(a.type), NPY_MAX_BYTES, &a.bytes))
            usage_error("bad element count %s (1 or more, at most 2^36 bytes in all)", count_text);
        a.count = (int64_t)count;
        a.device = device_buffer(a.bytes, "ptxrun buffer", false);
        memset(a.device, 0xff, a.bytes); /* poison: an unwritten element shows */
        a.out_path = rest;
        return a;
    }
    char *end;
    errno = 0;
    if (strcmp(text, "u32") == 0 || strcmp(text, "s32") == 0) {
        long long v = strtoll(rest, &end, 0);
        if (*end || errno || v < (text[0] == 'u' ? 0 : INT32_MIN) || v > (text[0] == 'u' ? UINT32_MAX : INT32_MAX))
            usage_error("bad 32-bit integer %s", rest);
        a.scalar = (uint32_t)v, a.scalar_size = 4;
    } else if (strcmp(text, "u64") == 0) {
        unsigned long long v = strtoull(rest, &end, 0);
        if (*end || errno)
            usage_error("bad 64-bit integer %s", rest);
        a.scalar = v, a.scalar_size = 8;
    } else if (strcmp(text, "f32") == 0) {
        float f = strtof(rest, &end);
        if (*end || end == rest)
            usage_error("bad float %s", rest);
        uint32_t bits;
        memcpy(&bits, &f, 4);
        a.scalar = bits, a.scalar_size = 4;
    } else {
        usage_error("unknown argument kind %s (in, out, inout, u32, s32, u64, f32)", text);
    }
    return a;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(USAGE, stdout);
        return 0;
    }
    if (argc < 3) {
        fprintf(stderr, "ptxrun: needs FILE.ptx and KERNEL (see ptxrun --help)\n");
        return 2;
    }
    for (int i = 3; i < argc; i++) /* --model first: the registers it needs are read with the PTX */
        if (strcmp(argv[i], "--model") == 0) {
            char names[128];
            model_gpu_names(names, sizeof names);
            if (i + 1 >= argc)
                usage_error("%s needs a GPU's name", argv[i]);
            if (!model_gpu_choose(argv[i + 1])) {
                fprintf(stderr, "ptxrun: --model %s: the model knows %s (see ptxrun --help)\n",
                        quoted_str(argv[i + 1]).s, names);
                exit(2);
            }
        }
    char err[4200];
    size_t size;
    char *text = bounded_read_file(argv[1], PTX_MAX_TEXT_BYTES, &size, err, sizeof err);
    if (!text) {
        fprintf(stderr, "ptxrun: %s\n", err);
        return 1;
    }
    if (strlen(text) != size) {
        fprintf(stderr, "ptxrun: %s holds a NUL byte: not PTX text\n", shown_path(argv[1]).s);
        return 1;
    }
    ptx_module *module = ptx_parse(text, argv[1], err, sizeof err);
    if (!module) {
        free(text);
        fprintf(stderr, "ptxrun: %s\n", err);
        return 1;
    }
    if (model_gpu_chosen() && /* EMU_MODEL: occupancy needs ptxas's registers, timing its machine code */
        !model_compile(text, module, model_gpu_arch(model_gpu_chosen()), err, sizeof err)) {
        fprintf(stderr, "ptxrun: %s\n", err);
        return 1;
    }
    free(text);
    const ptx_kernel *kernel = ptx_find_kernel(module, argv[2]);
    if (!kernel) {
        fprintf(stderr, "ptxrun: %s has no kernel %s (it has:", shown_path(argv[1]).s, quoted_str(argv[2]).s);
        for (int i = 0; i < module->n_kernels; i++)
            fprintf(stderr, " %s", module->kernels[i].name);
        fprintf(stderr, ")\n");
        return 1;
    }
    for (int v = 0; v < module->n_vars; v++)
        if (module->vars[v].storage)
            emu_alloc_add((uint64_t)(uintptr_t)module->vars[v].storage, module->vars[v].size, module->vars[v].name,
                          true);

    emu_launch_desc launch = {.module = module, .kernel = kernel};
    bool have_grid = false, have_block = false, print_counters = false;
    argument *args = calloc((size_t)argc, sizeof *args);
    if (!args) {
        fprintf(stderr, "ptxrun: out of memory\n");
        return 1;
    }
    int n_args = 0;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--counters") == 0) {
            print_counters = true;
            continue;
        }
        if (strcmp(argv[i], "--model") == 0) { /* read above */
            i++;
            continue;
        }
        if (strcmp(argv[i], "--sample-waves") == 0) {
            uint64_t waves;
            if (i + 1 >= argc || !bounded_u64(argv[i + 1], 10, 1000, &waves) || waves < 3)
                usage_error("--sample-waves needs a number of waves, 3 to 1000 (got %s)", i + 1 < argc ? argv[i + 1] : "");
            if (!model_gpu_chosen())
                usage_error("%s models a sample of the blocks: it needs --model GPU", argv[i]);
            launch.model_waves = (unsigned)waves;
            i++;
            continue;
        }
        if (strcmp(argv[i], "--grid") == 0 || strcmp(argv[i], "--block") == 0 || strcmp(argv[i], "--smem") == 0) {
            if (i + 1 >= argc)
                usage_error("%s needs a value", argv[i]);
            if (argv[i][2] == 'g')
                launch.grid = parse_dim3(argv[i + 1]), have_grid = true;
            else if (argv[i][2] == 'b')
                launch.block = parse_dim3(argv[i + 1]), have_block = true;
            else if (!bounded_u64(argv[i + 1], 10, EMU_SMEM_PER_BLOCK_OPTIN, &launch.dynamic_smem))
                usage_error("bad --smem %s (bytes of dynamic shared memory, 0 to 232448)", argv[i + 1]);
            else
                launch.max_dynamic_smem = EMU_SMEM_PER_BLOCK_OPTIN;
            i++;
            continue;
        }
        args[n_args++] = parse_argument(argv[i]);
    }
    if (!have_grid || !have_block) {
        fprintf(stderr, "ptxrun: --grid and --block are required (see ptxrun --help)\n");
        return 2;
    }
    if (n_args != kernel->n_params) {
        fprintf(stderr, "ptxrun: kernel %s takes %d parameters, %d given\n", kernel->name, kernel->n_params, n_args);
        return 2;
    }
    uint8_t *params = calloc(1, kernel->param_bytes ? kernel->param_bytes : 1);
    if (!params) {
        fprintf(stderr, "ptxrun: out of memory\n");
        return 1;
    }
    for (int i = 0; i < n_args; i++) {
        const ptx_param *p = &kernel->params[i];
        uint64_t value = args[i].device ? (uint64_t)(uintptr_t)args[i].device : args[i].scalar;
        uint64_t size = args[i].device ? 8 : (uint64_t)args[i].scalar_size;
        if (p->size != size) {
            fprintf(stderr, "ptxrun: parameter %d (%s) is %llu bytes; the argument gives %llu\n", i, p->name,
                    (unsigned long long)p->size, (unsigned long long)size);
            return 2;
        }
        memcpy(params + p->offset, &value, size);
    }
    launch.params = params;
    emu_counters counters = {0};
    emu_status status = emu_launch(&launch, &counters, err, sizeof err);
    if (status != EMU_OK) {
        fprintf(stderr, "ptxrun: %s\n", err);
        return 1;
    }
    for (int i = 0; i < n_args && !launch.model_waves; i++) { /* (a sample computes no output) */
        if (!args[i].out_path)
            continue;
        int64_t shape[1] = {args[i].count};
        char why[4200];
        if (!npy_write(args[i].out_path, args[i].type, 1, shape, args[i].device, why, sizeof why)) {
            fprintf(stderr, "ptxrun: %s\n", why);
            return 1;
        }
    }
    if (print_counters)
        emu_counters_print(stdout, kernel->name, &counters);
    if (counters.modeled_cycles)
        emu_model_print(stdout, &counters);
    ptx_free(module);
    return 0;
}
