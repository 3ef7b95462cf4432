/* runtime.c: the CUDA runtime API, as far as this project calls it, answered by the emulator.
 *
 * nvcc turns `kernel<<<grid, block, smem>>>(args)` into host code that calls a few entry points of
 * libcudart (see `nm -u` of any object nvcc built): at start-up __cudaRegisterFatBinary,
 * __cudaRegisterFunction and __cudaRegisterVar tell the runtime which kernels exist (by mangled name)
 * and which __device__ and __constant__ variables (cudaMemcpyToSymbol and cudaMemcpyFromSymbol reach
 * them), and each launch
 * calls __cudaPushCallConfiguration, __cudaPopCallConfiguration and __cudaLaunchKernel. This file
 * defines those and the cuda* calls the harness makes, so a program built against libcudart.so runs
 * unchanged with this library loaded in its place (`conv --emulate` does that with LD_PRELOAD, the
 * way GPGPU-Sim stands in for libcudart).
 *
 * The device: an H100's limits (emu.h), memory in host RAM (memory.c), kernels run by exec.c on the
 * PTX of the executable being run. nvcc embeds each CUDA source's device code in the program as a fat
 * binary and registers it with __cudaRegisterFatBinary; the build asks for PTX in it beside the
 * machine code (meson.build: `code=compute_XX` for the newest target, chapter 08's compute_90a), and
 * the emulator reads that PTX, so a copied or moved build, or a program built from changed sources,
 * runs its own kernels and never PTX left in some folder by another build. A kernel is found by the
 * mangled name registration gives, in the PTX of the fat binary it was registered with.
 *
 * $EMU_PTX_PATH (folders, ':' between them) is the one override: it replaces every fat binary's PTX
 * with the .ptx files found there, for the tests that run deliberately changed PTX. Then, when two
 * files define a kernel, the module whose kernels are exactly those registered with the same fat
 * binary is the one.
 *
 * Every launch is synchronous: streams are queues that are always empty, events are markers in an
 * order that is always already done. An emulated run has no times to give: cudaEventElapsedTime
 * says so instead of making one up.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dirent.h>
#include <fatbinary_section.h> /* the CUDA toolkit's: __fatBinC_Wrapper_t, FATBINC_MAGIC */
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bounded.h"
#include "emu.h"
#include "model.h"

#define EXPORT __attribute__((visibility("default")))

/* ---------------------------------------------------------------------------------------------- */
/* Errors                                                                                         */

static cudaError_t last_error = cudaSuccess;   /* what cudaGetLastError returns (and clears) */
static cudaError_t sticky_error = cudaSuccess; /* a kernel fault: every later call returns it, as on a GPU */
static char detail[1024];                      /* the emulator's one line about the last failure */
static cudaError_t detail_code = cudaSuccess;

static cudaError_t fail(cudaError_t code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    detail_code = code;
    last_error = code;
    return code;
}

#define STICKY()                          \
    do {                                  \
        if (sticky_error != cudaSuccess)  \
            return sticky_error;          \
    } while (0)

/* ---------------------------------------------------------------------------------------------- */
/* PTX modules                                                                                    */

typedef struct {
    char *path;
    char *text;            /* until parsed */
    char **entries;        /* .entry names found by a quick scan */
    int n_entries;
    ptx_module *module;    /* parsed on first use */
    char *error;           /* why it could not be parsed */
} ptx_file;

static ptx_file *files;
static int n_files;
static bool scanned;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* A .ptx file's text: a regular file of at most PTX_MAX_TEXT_BYTES (bounded.h). NULL (the file is
 * skipped, as one that cannot be opened is) otherwise. */
static char *read_text(const char *path)
{
    char why[4200];
    size_t len;
    char *text = bounded_read_file(path, PTX_MAX_TEXT_BYTES, &len, why, sizeof why);
    if (text && strlen(text) != len) { /* a NUL byte: not text */
        free(text);
        text = NULL;
    }
    return text;
}

/* The kernels a PTX text defines, by a quick scan for `.entry NAME`. */
static void scan_entries(ptx_file *f)
{
    for (const char *p = f->text; (p = strstr(p, ".entry ")); p += 7) {
        const char *name = p + 7, *end = name;
        while (*end && *end != '(' && *end != ' ' && *end != '\n')
            end++;
        char **entries = realloc(f->entries, (size_t)(f->n_entries + 1) * sizeof *f->entries);
        char *entry = entries ? strndup(name, (size_t)(end - name)) : NULL;
        if (entries)
            f->entries = entries;
        if (!entry)
            return; /* out of memory: the kernels after this one are not found, and say so when launched */
        f->entries[f->n_entries++] = entry;
    }
}

static void scan_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".ptx") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        char *text = read_text(path);
        if (!text)
            continue;
        ptx_file f = {.path = strdup(path), .text = text};
        ptx_file *grown = f.path ? realloc(files, (size_t)(n_files + 1) * sizeof *files) : NULL;
        if (!grown) { /* out of memory: the file is skipped */
            free(f.path), free(text);
            continue;
        }
        scan_entries(&f);
        files = grown;
        files[n_files++] = f;
    }
    closedir(d);
}

/* The .ptx files in $EMU_PTX_PATH's folders (the override, see the file comment). */
static void scan_ptx(const char *path)
{
    if (scanned)
        return;
    scanned = true;
    char *copy = strdup(path);
    for (char *save = NULL, *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save))
        scan_dir(dir);
    free(copy);
}

static bool file_defines(const ptx_file *f, const char *name)
{
    for (int i = 0; i < f->n_entries; i++)
        if (strcmp(f->entries[i], name) == 0)
            return true;
    return false;
}

/* ---------------------------------------------------------------------------------------------- */
/* Fat binaries: the PTX of the program being run                                                 */

/* __cudaRegisterFatBinary receives the toolkit's __fatBinC_Wrapper_t (fatbinary_section.h: magic
 * FATBINC_MAGIC, version FATBINC_VERSION, `data` pointing at the fat binary). The fat binary's own layout
 * is not documented by NVIDIA; this is how nvcc 13.0 writes it, and how cuobjdump lists it
 * (`cuobjdump -lptx build/conv` names the same PTX entries):
 *
 *   header  u32 magic 0xBA55ED50, u16 version, u16 header size, u64 bytes of entries after the header
 *   entry   u16 kind (1: PTX, 2: ELF machine code), u16, u32 header size, u64 payload bytes, ...,
 *           u32 architecture at byte 28 (90 for compute_90 and compute_90a), u64 flags at byte 40;
 *           the payload follows the entry's header (PTX: text, padded with zero bytes)
 *
 * Flags 0x1000 and 0x2000 (LZ-style) and 0x8000 (Zstandard) mark a compressed payload. fatbinary
 * compresses PTX unless told not to (`fatbinary --help`: "--compress [true,false] Compress ptx and debug
 * images in fatbinary. Default value: true."; nvcc 13.0's entries are Zstandard frames), so the build
 * passes nvcc --no-compress (NVCC documentation, "NVCC Command Options": "--no-compress: Do not compress
 * device code in fatbinary") and the emulator reads the PTX as it is, with no decompressor. A compressed
 * or missing PTX entry is refused in one line, never replaced by PTX from elsewhere.
 *
 * Why the fat binary, and not the build's emu/NAME.ptx files looked for beside the program: a file can
 * be older than the program or come from another build (a copied build, a source changed and rebuilt
 * elsewhere), and nothing would tell; the fat binary is part of the program. It is the same PTX: the
 * files are compiled with the same flags for the same target, and the fat binary keeps every line
 * (fatbinary drops comments and indentation, leaving the lines empty, so PTX line numbers in messages
 * agree); tests/test_relocated_build.py checks that. */
enum { FATBIN_MAGIC = 0xba55ed50u, FATBIN_KIND_PTX = 1, FATBIN_ENTRY_MIN = 48 };
static const uint64_t fatbin_compressed = 0x1000 | 0x2000 | 0x8000;

typedef struct {
    void *unused;                      /* first: the handle returned is a void ** pointing here */
    const __fatBinC_Wrapper_t *wrapper;
    bool read;                         /* its PTX was looked for */
    ptx_file ptx;                      /* path: a name for messages, "SOURCE.cu (PTX in PROGRAM)" */
    char *missing;                     /* why it has no PTX the emulator can run */
} fat_binary;

static uint16_t load_u16(const unsigned char *p) { uint16_t v; memcpy(&v, p, sizeof v); return v; }
static uint32_t load_u32(const unsigned char *p) { uint32_t v; memcpy(&v, p, sizeof v); return v; }
static uint64_t load_u64(const unsigned char *p) { uint64_t v; memcpy(&v, p, sizeof v); return v; }

/* "SOURCE.cu (PTX in PROGRAM)": the source from the PTX's first .file directive (the build compiles
 * with -lineinfo), the program from /proc/self/exe. */
static char *ptx_label(const char *text)
{
    char exe[PATH_MAX] = "the program";
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0)
        exe[n] = 0;
    const char *program = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
    const char *file = strstr(text, ".file");
    const char *quote = file ? strchr(file, '"') : NULL;
    const char *close = quote ? strchr(quote + 1, '"') : NULL;
    char source[256] = "a CUDA source";
    if (close) {
        const char *name = quote + 1;
        for (const char *p = name; p < close; p++)
            if (*p == '/')
                name = p + 1;
        snprintf(source, sizeof source, "%.*s", (int)(close - name), name);
    }
    char label[PATH_MAX + 300];
    snprintf(label, sizeof label, "%s (PTX in %s)", source, program);
    return strdup(label);
}

/* Finds a registered fat binary's PTX: its PTX entry for the newest architecture (the build embeds
 * one, for its newest target), as a ptx_file, or why there is none in bin->missing. */
static void read_fat_binary(fat_binary *bin)
{
    bin->read = true;
    char why[512] = "";
    const __fatBinC_Wrapper_t *w = bin->wrapper;
    const unsigned char *best = NULL;
    if (!w || w->magic != FATBINC_MAGIC) {
        snprintf(why, sizeof why, "what was registered is not a fat binary (magic %#x)", w ? (unsigned)w->magic : 0u);
    } else if (w->version != FATBINC_VERSION) {
        snprintf(why, sizeof why, "a fat binary of version %d (relocatable device code, -rdc) is not supported by the "
                 "emulator yet", w->version);
    } else if (load_u32((const unsigned char *)w->data) != FATBIN_MAGIC) {
        snprintf(why, sizeof why, "the fat binary's header has magic %#x, not %#x",
                 (unsigned)load_u32((const unsigned char *)w->data), (unsigned)FATBIN_MAGIC);
    } else {
        const unsigned char *base = (const unsigned char *)w->data;
        const unsigned char *p = base + load_u16(base + 6), *end = p + load_u64(base + 8);
        while (p + FATBIN_ENTRY_MIN <= end) {
            uint32_t header = load_u32(p + 4);
            uint64_t bytes = load_u64(p + 8);
            if (header < FATBIN_ENTRY_MIN || bytes > (uint64_t)(end - p) - header) {
                snprintf(why, sizeof why, "the fat binary's entry at byte %td runs past its end", p - base);
                break;
            }
            if (load_u16(p) == FATBIN_KIND_PTX && (!best || load_u32(p + 28) > load_u32(best + 28)))
                best = p;
            p += header + bytes;
        }
    }
    if (!why[0] && !best)
        snprintf(why, sizeof why, "its fat binary holds machine code and no PTX, and the emulator runs PTX (nvcc "
                 "embeds it for -gencode=arch=compute_XX,code=compute_XX)");
    else if (!why[0] && (load_u64(best + 40) & fatbin_compressed))
        snprintf(why, sizeof why, "its fat binary's PTX is compressed (entry flags %#llx), which the emulator does "
                 "not read: build with nvcc --no-compress", (unsigned long long)load_u64(best + 40));
    if (!why[0]) {
        char *text = strndup((const char *)best + load_u32(best + 4), (size_t)load_u64(best + 8));
        if (!strstr(text, ".version")) {
            free(text);
            snprintf(why, sizeof why, "its fat binary's PTX entry is not PTX text");
        } else {
            bin->ptx = (ptx_file){.path = ptx_label(text), .text = text};
            scan_entries(&bin->ptx);
        }
    }
    if (why[0])
        bin->missing = strdup(why);
}

/* ---------------------------------------------------------------------------------------------- */
/* Registered kernels                                                                             */

typedef struct {
    const void *host_fun;      /* the host stub's address: what <<<>>> and cudaFuncSetAttribute pass */
    char *name;                /* mangled */
    fat_binary *owner;         /* the fat binary it was registered with */
    const ptx_kernel *kernel;  /* resolved on first use */
    const ptx_module *module;
    int max_dynamic_smem;      /* cudaFuncAttributeMaxDynamicSharedMemorySize */
    emu_counters counters;     /* what its launches did (EMU_COUNTERS=1 prints them at exit) */
} function;

static function *functions;
static int n_functions;

static function *function_of(const void *host_fun)
{
    for (int i = 0; i < n_functions; i++)
        if (functions[i].host_fun == host_fun)
            return &functions[i];
    return NULL;
}

/* With $EMU_PTX_PATH set: the file there that defines the function's kernel and every kernel registered
 * with the same fat binary, the smallest such (see the file comment). NULL, with the error set, if none. */
static ptx_file *override_file(const function *fn, const char *path)
{
    scan_ptx(path);
    ptx_file *best = NULL;
    int candidates = 0;
    for (int i = 0; i < n_files; i++) {
        if (!file_defines(&files[i], fn->name))
            continue;
        candidates++;
        bool all_siblings = true; /* does it define every kernel registered with the same fat binary? */
        for (int j = 0; j < n_functions && all_siblings; j++)
            if (functions[j].owner == fn->owner && !file_defines(&files[i], functions[j].name))
                all_siblings = false;
        if (all_siblings && (!best || files[i].n_entries < best->n_entries))
            best = &files[i];
    }
    if (!best)
        fail(cudaErrorNoKernelImageForDevice,
             candidates ? "kernel %s: the PTX files in %s (EMU_PTX_PATH) that define it do not match the kernels "
                          "registered with it"
                        : "kernel %s: no PTX defines it in %s (EMU_PTX_PATH)",
             fn->name, path);
    return best;
}

/* The PTX file of the function's kernel: its own fat binary's, unless $EMU_PTX_PATH overrides it. NULL,
 * with the error set, if there is none. */
static ptx_file *file_of(const function *fn)
{
    const char *path = getenv("EMU_PTX_PATH");
    if (path && *path)
        return override_file(fn, path);
    fat_binary *bin = fn->owner;
    if (!bin->read)
        read_fat_binary(bin);
    if (bin->missing) {
        fail(cudaErrorNoKernelImageForDevice, "kernel %s: %s", fn->name, bin->missing);
        return NULL;
    }
    if (!file_defines(&bin->ptx, fn->name)) {
        fail(cudaErrorNoKernelImageForDevice, "kernel %s: not in %s, the PTX of the fat binary it was registered with",
             fn->name, bin->ptx.path);
        return NULL;
    }
    return &bin->ptx;
}

/* The timing model needs the registers ptxas gives each kernel for the modeled GPU, and its machine code. A
 * module ptxas refuses for that GPU (chapter 08's sm_90a code for an A100) runs as always, its launches not
 * modeled (ptxas_registers -1), and says so once. */
static void compile_for_model(const char *text, ptx_module *module)
{
    char err[1024];
    const struct model_gpu *gpu = model_gpu_chosen();
    if (!model_compile(text, module, model_gpu_arch(gpu), err, sizeof err))
        fprintf(stderr, "emu: not modeled on the %s: %s\n", model_gpu_label(gpu), err);
}

/* Finds the PTX module for a registered function (see the file comment), parsing it if needed. */
static cudaError_t resolve(function *fn)
{
    if (fn->kernel)
        return cudaSuccess;
    pthread_mutex_lock(&lock);
    ptx_file *best = file_of(fn);
    if (!best) {
        pthread_mutex_unlock(&lock);
        return detail_code;
    }
    if (!best->module && !best->error) {
        char err[1024];
        best->module = ptx_parse(best->text, best->path, err, sizeof err);
        if (!best->module)
            best->error = strdup(err);
        else if (model_gpu_chosen())
            compile_for_model(best->text, best->module);
        free(best->text);
        best->text = NULL;
        for (int v = 0; best->module && v < best->module->n_vars; v++) {
            ptx_var *var = &best->module->vars[v];
            if (var->storage)
                emu_alloc_add((uint64_t)(uintptr_t)var->storage, var->size ? var->size : 1, var->name, true);
        }
    }
    pthread_mutex_unlock(&lock);
    if (best->error)
        return fail(cudaErrorNoKernelImageForDevice, "kernel %s is not supported by the emulator yet: %s", fn->name,
                    best->error);
    fn->module = best->module;
    fn->kernel = ptx_find_kernel(best->module, fn->name);
    return fn->kernel ? cudaSuccess
                      : fail(cudaErrorNoKernelImageForDevice, "kernel %s: not found in %s", fn->name, best->path);
}

/* A fat binary per CUDA source: its PTX is read when one of its kernels is first resolved. */
EXPORT void **__cudaRegisterFatBinary(void *fat_cubin)
{
    fat_binary *bin = calloc(1, sizeof *bin);
    bin->wrapper = fat_cubin;
    return &bin->unused; /* the handle: the runtime's callers only pass it back */
}

EXPORT void __cudaRegisterFatBinaryEnd(void **handle) { (void)handle; }

EXPORT void __cudaUnregisterFatBinary(void **handle) { (void)handle; /* kernels stay until exit */ }

EXPORT char __cudaInitModule(void **handle)
{
    (void)handle;
    return 1;
}

EXPORT void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun, const char *device_name,
                                   int thread_limit, uint3 *tid, uint3 *bid, dim3 *block_dim, dim3 *grid_dim,
                                   int *warp_size)
{
    (void)device_fun, (void)thread_limit, (void)tid, (void)bid, (void)block_dim, (void)grid_dim, (void)warp_size;
    functions = realloc(functions, (size_t)(n_functions + 1) * sizeof *functions);
    functions[n_functions++] = (function){.host_fun = host_fun, .name = strdup(device_name),
                                           .owner = (fat_binary *)handle};
}

/* ---------------------------------------------------------------------------------------------- */
/* Device variables (__device__, __constant__)                                                    */

/* nvcc registers each with the address of its host shadow, the name the PTX gives it and the fat
 * binary it lives in. Its bytes are the module variable's storage (parse.c), allocated when the module
 * is parsed; the host reaches them only through the shadow's address, with cudaMemcpyToSymbol. */
typedef struct {
    const void *host_var;
    char *name;
    fat_binary *owner;
} device_variable;

static device_variable *variables;
static int n_variables;

EXPORT void __cudaRegisterVar(void **handle, char *host_var, char *device_address, const char *device_name, int ext,
                              size_t size, int constant, int global)
{
    (void)device_address, (void)ext, (void)size, (void)constant, (void)global;
    variables = realloc(variables, (size_t)(n_variables + 1) * sizeof *variables);
    variables[n_variables++] = (device_variable){.host_var = host_var, .name = strdup(device_name),
                                                 .owner = (fat_binary *)handle};
}

/* The module variable behind a host shadow's address, its module parsed if need be (through any kernel
 * of the same fat binary: they share one module). NULL, with the error set, if there is none. */
static const ptx_var *variable_of(const void *symbol)
{
    const device_variable *v = NULL;
    for (int i = 0; i < n_variables && !v; i++)
        if (variables[i].host_var == symbol)
            v = &variables[i];
    if (!v) {
        fail(cudaErrorInvalidSymbol, "%p is not a registered __device__ or __constant__ variable", symbol);
        return NULL;
    }
    for (int i = 0; i < n_functions; i++) {
        if (functions[i].owner != v->owner)
            continue;
        if (resolve(&functions[i]) != cudaSuccess)
            return NULL;
        for (int j = 0; j < functions[i].module->n_vars; j++)
            if (strcmp(functions[i].module->vars[j].name, v->name) == 0)
                return &functions[i].module->vars[j];
        break;
    }
    fail(cudaErrorInvalidSymbol, "variable %s: not in the PTX of the fat binary it was registered with", v->name);
    return NULL;
}

/* The launch configuration <<<grid, block, smem, stream>>> travels from push to pop. */
static struct {
    dim3 grid, block;
    size_t smem;
    void *stream;
} pending_config;

EXPORT unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t smem, void *stream)
{
    pending_config.grid = grid, pending_config.block = block, pending_config.smem = smem;
    pending_config.stream = stream;
    return 0;
}

EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *smem, void *stream)
{
    *grid = pending_config.grid, *block = pending_config.block, *smem = pending_config.smem;
    *(void **)stream = pending_config.stream;
    return cudaSuccess;
}

EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *host_fun)
{
    *kernel = (cudaKernel_t)function_of(host_fun);
    return *kernel ? cudaSuccess : cudaErrorInvalidDeviceFunction;
}

/* EMU_STATS=1: at exit, how many thread-instructions the kernels executed and how fast (the
 * emulator's speed, on this machine; never a kernel's time on a GPU). */
static double launch_seconds;
static uint64_t launches;

static void print_counters(void)
{
    fflush(stdout);
    for (int i = 0; i < n_functions; i++)
        if (functions[i].counters.launches) {
            emu_counters_print(stdout, functions[i].name, &functions[i].counters);
            if (functions[i].counters.modeled_cycles)
                emu_model_print(stdout, &functions[i].counters);
        }
    fflush(stdout);
}

static void print_stats(void)
{
    uint64_t n = emu_thread_instructions();
    fprintf(stderr, "emu: %llu launches, %.3g thread-instructions in %.2f s of emulation: %.1f million per second on %d "
            "host threads\n", (unsigned long long)launches, (double)n, launch_seconds,
            launch_seconds > 0 ? n / launch_seconds / 1e6 : 0.0, emu_get_options()->threads);
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* `conv bench --emulate` (counters.h): the sample it asks for, and the counts of the launches since it
 * last took them. */
static bool bench_counting;
static unsigned bench_sample;
static emu_counters bench_counters;

EXPORT void emu_bench_sample(unsigned blocks_per_kind)
{
    bench_counting = true;
    bench_sample = blocks_per_kind;
}

EXPORT bool emu_model_gpu(const char **label, double *tensor_fp16_tflops, double *fp32_tflops)
{
    const struct model_gpu *gpu = model_gpu_chosen();
    if (!gpu)
        return false;
    *label = model_gpu_label(gpu);
    *tensor_fp16_tflops = model_gpu_peak_tflops(gpu, true);
    *fp32_tflops = model_gpu_peak_tflops(gpu, false);
    return true;
}

EXPORT void emu_bench_take(emu_counters *counters, uint64_t *grid_blocks, uint64_t *emulated_blocks)
{
    *counters = bench_counters;
    *grid_blocks = bench_counters.grid_blocks;
    *emulated_blocks = bench_counters.emulated_blocks;
    memset(&bench_counters, 0, sizeof bench_counters);
}

static cudaError_t launch(function *fn, dim3 grid, dim3 block, void **args, size_t smem)
{
    STICKY();
    if (!fn)
        return fail(cudaErrorInvalidDeviceFunction, "launch of a function that is not a registered kernel");
    cudaError_t err = resolve(fn);
    if (err != cudaSuccess) {
        fprintf(stderr, "emu: %s\n", detail);
        return err;
    }
    const ptx_kernel *k = fn->kernel;
    uint8_t *params = calloc(1, k->param_bytes ? k->param_bytes : 1);
    if (!params)
        return fail(cudaErrorMemoryAllocation, "kernel %s: out of host memory for its parameters", fn->name);
    for (int i = 0; i < k->n_params; i++)
        memcpy(params + k->params[i].offset, args[i], k->params[i].size);
    emu_launch_desc desc = {.module = fn->module, .kernel = k, .grid = {grid.x, grid.y, grid.z},
                            .block = {block.x, block.y, block.z}, .dynamic_smem = smem,
                            .max_dynamic_smem = (uint64_t)fn->max_dynamic_smem, .params = params,
                            .sample = bench_sample};
    char message[1024];
    static bool stats_registered, counters_registered;
    if (!stats_registered && getenv("EMU_STATS") && atoi(getenv("EMU_STATS")) > 0) {
        atexit(print_stats);
        stats_registered = true;
    }
    /* a modeled launch is counted too (the model's fields are counters': counters.h), and printed at exit
     * unless the benchmark takes the counts */
    const bool asked = getenv("EMU_COUNTERS") && atoi(getenv("EMU_COUNTERS")) > 0;
    const bool counting = asked || model_gpu_chosen();
    if ((asked || (counting && !bench_counting)) && !counters_registered) {
        atexit(print_counters);
        counters_registered = true;
    }
    double started = now_seconds();
    emu_counters launch_counters = {0};
    emu_status status = emu_launch(&desc, counting || bench_counting ? &launch_counters : NULL, message, sizeof message);
    emu_counters_add(&fn->counters, &launch_counters);
    emu_counters_add(&bench_counters, &launch_counters);
    launch_seconds += now_seconds() - started;
    launches++;
    free(params);
    switch (status) {
    case EMU_OK:
        return cudaSuccess;
    case EMU_ERR_LAUNCH: /* like a GPU: a bad configuration is reported at once and is not sticky */
        fprintf(stderr, "emu: %s\n", message);
        return fail(cudaErrorInvalidConfiguration, "%s", message);
    default:
        fprintf(stderr, "emu: %s\n", message);
        sticky_error = status == EMU_ERR_ADDRESS      ? cudaErrorIllegalAddress
                       : status == EMU_ERR_MISALIGNED ? cudaErrorMisalignedAddress
                       : status == EMU_ERR_TRAP       ? cudaErrorAssert
                       : status == EMU_ERR_UNINITIALIZED ? cudaErrorIllegalAddress
                                                      : cudaErrorLaunchFailure;
        fail(sticky_error, "%s", message);
        return sticky_error;
    }
}

EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t smem,
                                      cudaStream_t stream)
{
    (void)stream;
    return launch((function *)kernel, grid, block, args, smem);
}

EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t smem,
                                           cudaStream_t stream)
{
    return __cudaLaunchKernel(kernel, grid, block, args, smem, stream);
}

EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t smem,
                                    cudaStream_t stream)
{
    (void)stream;
    return launch(function_of(func), grid, block, args, smem);
}

/* ---------------------------------------------------------------------------------------------- */
/* Device                                                                                         */

EXPORT cudaError_t cudaGetDeviceCount(int *count)
{
    *count = 1;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGetDevice(int *device)
{
    *device = 0;
    return cudaSuccess;
}

EXPORT cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : fail(cudaErrorInvalidDevice, "device %d", device); }

static const size_t device_memory = 80ull << 30; /* an H100 SXM's HBM3 */

EXPORT cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int device)
{
    if (device != 0)
        return fail(cudaErrorInvalidDevice, "device %d: the emulator has one device, 0", device);
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", EMU_DEVICE_NAME);
    p->major = 9, p->minor = 0;
    p->totalGlobalMem = device_memory;
    p->sharedMemPerBlock = EMU_SMEM_PER_BLOCK;
    p->sharedMemPerBlockOptin = EMU_SMEM_PER_BLOCK_OPTIN;
    p->sharedMemPerMultiprocessor = EMU_SMEM_PER_SM;
    p->regsPerBlock = EMU_REGS_PER_BLOCK;
    p->regsPerMultiprocessor = EMU_REGS_PER_BLOCK;
    p->warpSize = EMU_WARP_SIZE;
    p->maxThreadsPerBlock = EMU_MAX_THREADS_PER_BLOCK;
    p->maxThreadsPerMultiProcessor = 2048;
    p->maxThreadsDim[0] = 1024, p->maxThreadsDim[1] = 1024, p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 0x7fffffff, p->maxGridSize[1] = 65535, p->maxGridSize[2] = 65535;
    p->multiProcessorCount = EMU_SM_COUNT;
    p->l2CacheSize = 50 << 20;
    p->memoryBusWidth = 5120;
    p->totalConstMem = 64 << 10;
    p->maxBlocksPerMultiProcessor = 32;
    p->concurrentKernels = 1;
    p->unifiedAddressing = 1;
    return cudaSuccess;
}

EXPORT cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    if (device != 0)
        return fail(cudaErrorInvalidDevice, "device %d: the emulator has one device, 0", device);
    switch (attr) {
    case cudaDevAttrMultiProcessorCount: *value = EMU_SM_COUNT; return cudaSuccess;
    case cudaDevAttrL2CacheSize: *value = 50 << 20; return cudaSuccess;
    case cudaDevAttrComputeCapabilityMajor: *value = 9; return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor: *value = 0; return cudaSuccess;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = EMU_SMEM_PER_BLOCK_OPTIN; return cudaSuccess;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = EMU_SMEM_PER_BLOCK; return cudaSuccess;
    case cudaDevAttrMaxThreadsPerBlock: *value = EMU_MAX_THREADS_PER_BLOCK; return cudaSuccess;
    case cudaDevAttrWarpSize: *value = EMU_WARP_SIZE; return cudaSuccess;
    default: return fail(cudaErrorNotSupported, "the emulator does not know device attribute %d", (int)attr);
    }
}

EXPORT cudaError_t cudaRuntimeGetVersion(int *version)
{
    *version = CUDART_VERSION;
    return cudaSuccess;
}

EXPORT cudaError_t cudaDriverGetVersion(int *version)
{
    *version = CUDART_VERSION;
    return cudaSuccess;
}

EXPORT cudaError_t cudaDeviceSynchronize(void)
{
    STICKY();
    return cudaSuccess; /* every launch finished before it returned */
}

EXPORT cudaError_t cudaDeviceReset(void) { return cudaSuccess; }

EXPORT cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
    function *fn = function_of(func);
    if (!fn)
        return fail(cudaErrorInvalidDeviceFunction, "cudaFuncSetAttribute on a function that is not a kernel");
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
        if (value < 0 || value > EMU_SMEM_PER_BLOCK_OPTIN)
            return fail(cudaErrorInvalidValue, "%d bytes of dynamic shared memory: the device allows %d", value,
                        EMU_SMEM_PER_BLOCK_OPTIN);
        fn->max_dynamic_smem = value;
    }
    return cudaSuccess; /* the carve-out preference and the like change nothing an emulator shows */
}

/* Whether the emulator can run the kernel: this is where an unsupported instruction shows up, as "no
 * kernel image for the device", before any launch. */
EXPORT cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
    function *fn = function_of(func);
    if (!fn)
        return fail(cudaErrorInvalidDeviceFunction, "cudaFuncGetAttributes on a function that is not a kernel");
    cudaError_t err = resolve(fn);
    if (err != cudaSuccess)
        return err;
    memset(attr, 0, sizeof *attr);
    attr->sharedSizeBytes = fn->kernel->static_smem;
    attr->localSizeBytes = fn->kernel->local_bytes;
    attr->maxThreadsPerBlock = fn->kernel->max_threads ? fn->kernel->max_threads : EMU_MAX_THREADS_PER_BLOCK;
    attr->maxDynamicSharedSizeBytes = fn->max_dynamic_smem ? fn->max_dynamic_smem
                                                           : EMU_SMEM_PER_BLOCK - (int)fn->kernel->static_smem;
    attr->ptxVersion = 90;
    attr->binaryVersion = 90;
    return cudaSuccess;
}

/* cuTensorMapEncodeTiled (CUDA Driver API, "Tensor Map Object Management"): checks every requirement
 * the driver documents and writes the emulator's own 128-byte encoding (emu.h: emu_tensor_map), which
 * cp.async.bulk.tensor reads. A map the driver would refuse is refused here, with
 * CUDA_ERROR_INVALID_VALUE, as on a GPU. */
static CUresult encode_tiled(CUtensorMap *tensor_map, CUtensorMapDataType type, cuuint32_t rank, void *global_address,
                             const cuuint64_t *global_dim, const cuuint64_t *global_strides, const cuuint32_t *box_dim,
                             const cuuint32_t *element_strides, CUtensorMapInterleave interleave,
                             CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2_promotion,
                             CUtensorMapFloatOOBfill oob_fill)
{
    (void)l2_promotion; /* a caching hint */
    static const uint8_t sizes[] = {[CU_TENSOR_MAP_DATA_TYPE_UINT8] = 1, [CU_TENSOR_MAP_DATA_TYPE_UINT16] = 2,
                                    [CU_TENSOR_MAP_DATA_TYPE_UINT32] = 4, [CU_TENSOR_MAP_DATA_TYPE_INT32] = 4,
                                    [CU_TENSOR_MAP_DATA_TYPE_UINT64] = 8, [CU_TENSOR_MAP_DATA_TYPE_INT64] = 8,
                                    [CU_TENSOR_MAP_DATA_TYPE_FLOAT16] = 2, [CU_TENSOR_MAP_DATA_TYPE_FLOAT32] = 4,
                                    [CU_TENSOR_MAP_DATA_TYPE_FLOAT64] = 8, [CU_TENSOR_MAP_DATA_TYPE_BFLOAT16] = 2,
                                    [CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ] = 4, [CU_TENSOR_MAP_DATA_TYPE_TFLOAT32] = 4,
                                    [CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ] = 4};
    static const uint8_t swizzle_bytes[] = {[CU_TENSOR_MAP_SWIZZLE_NONE] = 0, [CU_TENSOR_MAP_SWIZZLE_32B] = 32,
                                            [CU_TENSOR_MAP_SWIZZLE_64B] = 64, [CU_TENSOR_MAP_SWIZZLE_128B] = 128};
#define REFUSE(...)                                                  \
    do {                                                             \
        fail(cudaErrorInvalidValue, "cuTensorMapEncodeTiled: " __VA_ARGS__); \
        return CUDA_ERROR_INVALID_VALUE;                             \
    } while (0)
    if (!tensor_map || (uintptr_t)tensor_map % 64)
        REFUSE("the map must be 64-byte aligned");
    if ((unsigned)type >= sizeof sizes || !sizes[type])
        REFUSE("data type %d is not one the emulator supports", (int)type);
    if (rank < 1 || rank > 5)
        REFUSE("rank %u is not 1 to 5", rank);
    if (interleave != CU_TENSOR_MAP_INTERLEAVE_NONE)
        REFUSE("interleaved layouts are not supported by the emulator yet");
    if ((unsigned)swizzle >= sizeof swizzle_bytes)
        REFUSE("swizzle mode %d is not supported by the emulator yet", (int)swizzle);
    if ((uintptr_t)global_address % 16)
        REFUSE("the global address must be 16-byte aligned");
    if (oob_fill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA &&
        (type <= CU_TENSOR_MAP_DATA_TYPE_INT64))
        REFUSE("NaN fill needs a floating-point type");
    emu_tensor_map map;
    memset(&map, 0, sizeof map);
    map.magic = EMU_TENSOR_MAP_MAGIC;
    map.element_bytes = sizes[type];
    map.rank = (uint8_t)rank;
    map.swizzle_bytes = swizzle_bytes[swizzle];
    map.nan_fill = oob_fill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    map.global_address = (uint64_t)(uintptr_t)global_address;
    for (cuuint32_t d = 0; d < rank; d++) {
        if (global_dim[d] == 0 || global_dim[d] > (1ull << 32))
            REFUSE("globalDim[%u] = %llu is not in [1, 2^32]", d, (unsigned long long)global_dim[d]);
        if (box_dim[d] == 0 || box_dim[d] > 256)
            REFUSE("boxDim[%u] = %u is not in [1, 256]", d, box_dim[d]);
        if (element_strides[d] == 0 || element_strides[d] > 8)
            REFUSE("elementStrides[%u] = %u is not in [1, 8]", d, element_strides[d]);
        map.dim_minus_1[d] = (uint32_t)(global_dim[d] - 1);
        map.box[d] = (uint16_t)box_dim[d];
        map.element_stride[d] = d == 0 ? 1 : (uint8_t)element_strides[d]; /* ignored for dimension 0 */
        map.stride[d] = d == 0 ? map.element_bytes : global_strides[d - 1];
        if (d > 0 && (global_strides[d - 1] % 16 || global_strides[d - 1] >= (1ull << 40)))
            REFUSE("globalStrides[%u] = %llu is not a multiple of 16 below 2^40", d - 1,
                   (unsigned long long)global_strides[d - 1]);
    }
    if (box_dim[0] * map.element_bytes % 16)
        REFUSE("the box's inner dimension, %u bytes, is not a multiple of 16", box_dim[0] * map.element_bytes);
    if (map.swizzle_bytes && box_dim[0] * map.element_bytes > map.swizzle_bytes)
        REFUSE("the box's inner dimension, %u bytes, exceeds the %u-byte swizzle span", box_dim[0] * map.element_bytes,
               map.swizzle_bytes);
#undef REFUSE
    memset(tensor_map, 0, sizeof *tensor_map);
    memcpy(tensor_map, &map, sizeof map);
    return CUDA_SUCCESS;
}

/* The driver's entry points the programs look up: the tensor-map encoder (chapter 08). */
EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned int version,
                                                    unsigned long long flags,
                                                    enum cudaDriverEntryPointQueryResult *status)
{
    (void)version, (void)flags;
    bool known = strcmp(symbol, "cuTensorMapEncodeTiled") == 0;
    *fn = known ? (void *)encode_tiled : NULL;
    if (status)
        *status = known ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
    return cudaSuccess;
}

/* ---------------------------------------------------------------------------------------------- */
/* Memory                                                                                         */

EXPORT cudaError_t cudaMalloc(void **ptr, size_t bytes)
{
    STICKY();
    *ptr = NULL;
    if (bytes == 0)
        return cudaSuccess;
    size_t rounded = (bytes + 255) / 256 * 256; /* "allocated memory is suitably aligned": 256 bytes */
    if (emu_alloc_total() + rounded > device_memory)
        return fail(cudaErrorMemoryAllocation, "out of the emulated device's %zu bytes", device_memory);
    void *p = aligned_alloc(256, rounded);
    if (!p)
        return fail(cudaErrorMemoryAllocation, "the host has no %zu bytes for the emulated device", rounded);
    memset(p, 0xff, rounded); /* fresh device memory is garbage on a GPU; here it is NaN / -1 */
    emu_alloc_add((uint64_t)(uintptr_t)p, bytes, "cudaMalloc allocation", false);
    *ptr = p;
    return cudaSuccess;
}

EXPORT cudaError_t cudaFree(void *ptr)
{
    STICKY();
    if (!ptr)
        return cudaSuccess;
    if (!emu_alloc_remove((uint64_t)(uintptr_t)ptr))
        return fail(cudaErrorInvalidValue, "cudaFree of %p, which cudaMalloc did not return", ptr);
    free(ptr);
    return cudaSuccess;
}

EXPORT cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    STICKY();
    size_t used = emu_alloc_total();
    size_t host_free = (size_t)sysconf(_SC_AVPHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
    *total = device_memory;
    *free_bytes = device_memory - used < host_free ? device_memory - used : host_free;
    return cudaSuccess;
}

/* A range of device memory the host copies or sets: it must be inside an allocation; a destination
 * counts as written from now on (initcheck). */
static cudaError_t check_device_range(const void *p, size_t bytes, const char *what, bool written)
{
    const emu_alloc *a = bytes ? emu_alloc_find((uint64_t)(uintptr_t)p, bytes) : NULL;
    if (a && written)
        emu_mark_written(a, (uint64_t)(uintptr_t)p, bytes);
    if (bytes && !a) {
        char where[256];
        emu_alloc_describe((uint64_t)(uintptr_t)p, bytes, where, sizeof where);
        return fail(cudaErrorInvalidValue, "%s: %zu bytes at %p are not device memory (%s)", what, bytes, p, where);
    }
    return cudaSuccess;
}

EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    STICKY();
    cudaError_t err = cudaSuccess;
    if (kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice)
        err = check_device_range(src, bytes, "cudaMemcpy source", false);
    if (err == cudaSuccess && (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice))
        err = check_device_range(dst, bytes, "cudaMemcpy destination", true);
    if (err != cudaSuccess)
        return err;
    if (bytes)
        memmove(dst, src, bytes);
    return cudaSuccess;
}

EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                                   cudaStream_t stream)
{
    (void)stream;
    return cudaMemcpy(dst, src, bytes, kind);
}

/* The variable behind `symbol` and its bytes [offset, offset + count), or NULL with the error set:
 * cudaMemcpyToSymbol's and cudaMemcpyFromSymbol's common checks. */
static uint8_t *symbol_bytes(const char *call, const void *symbol, size_t count, size_t offset)
{
    const ptx_var *var = variable_of(symbol);
    if (!var)
        return NULL;
    if (offset > var->size || count > var->size - offset) {
        fail(cudaErrorInvalidValue, "%s: %zu bytes at offset %zu of %s, which has %" PRIu64 " bytes", call, count,
             offset, var->name, var->size);
        return NULL;
    }
    return (uint8_t *)var->storage + offset;
}

/* CUDA Runtime API, cudaMemcpyToSymbol: count bytes from src to offset bytes into the variable, from
 * the host or from device memory (kind cudaMemcpyHostToDevice, cudaMemcpyDeviceToDevice or
 * cudaMemcpyDefault, which the unified address space resolves by where src lies). */
EXPORT cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
                                      enum cudaMemcpyKind kind)
{
    STICKY();
    if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
        return fail(cudaErrorInvalidMemcpyDirection, "cudaMemcpyToSymbol: kind %d is not host-to-device, "
                    "device-to-device or default", (int)kind);
    uint8_t *bytes = symbol_bytes("cudaMemcpyToSymbol", symbol, count, offset);
    if (!bytes)
        return detail_code;
    cudaError_t err = kind == cudaMemcpyDeviceToDevice ? check_device_range(src, count, "cudaMemcpyToSymbol source",
                                                                            false)
                                                       : cudaSuccess;
    if (err != cudaSuccess)
        return err;
    if (count)
        memmove(bytes, src, count);
    return cudaSuccess;
}

/* CUDA Runtime API, cudaMemcpyFromSymbol: count bytes from offset bytes into the variable to dst, on the
 * host or in device memory (kind cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice or cudaMemcpyDefault). */
EXPORT cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
                                        enum cudaMemcpyKind kind)
{
    STICKY();
    if (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
        return fail(cudaErrorInvalidMemcpyDirection, "cudaMemcpyFromSymbol: kind %d is not device-to-host, "
                    "device-to-device or default", (int)kind);
    const uint8_t *bytes = symbol_bytes("cudaMemcpyFromSymbol", symbol, count, offset);
    if (!bytes)
        return detail_code;
    cudaError_t err = kind == cudaMemcpyDeviceToDevice
                          ? check_device_range(dst, count, "cudaMemcpyFromSymbol destination", true)
                          : cudaSuccess;
    if (err != cudaSuccess)
        return err;
    if (count)
        memmove(dst, bytes, count);
    return cudaSuccess;
}

EXPORT cudaError_t cudaMemset(void *dst, int value, size_t bytes)
{
    STICKY();
    cudaError_t err = check_device_range(dst, bytes, "cudaMemset", true);
    if (err != cudaSuccess)
        return err;
    memset(dst, value, bytes);
    return cudaSuccess;
}

EXPORT cudaError_t cudaMemsetAsync(void *dst, int value, size_t bytes, cudaStream_t stream)
{
    (void)stream;
    return cudaMemset(dst, value, bytes);
}

/* ---------------------------------------------------------------------------------------------- */
/* Streams and events                                                                             */

EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    (void)stream;
    STICKY();
    return cudaSuccess;
}

EXPORT cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    *event = (cudaEvent_t)malloc(1);
    return cudaSuccess;
}

EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    free(event);
    return cudaSuccess;
}

EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    (void)event, (void)stream;
    STICKY();
    return cudaSuccess;
}

EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    (void)event;
    STICKY();
    return cudaSuccess;
}

EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    (void)start, (void)end;
    *ms = 0.0f;
    return fail(cudaErrorNotSupported, "the emulator does not time kernels: an emulated run has no times to give");
}

/* ---------------------------------------------------------------------------------------------- */
/* Error reporting                                                                                */

EXPORT cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last_error;
    last_error = sticky_error;
    return e;
}

EXPORT cudaError_t cudaPeekAtLastError(void) { return last_error; }

EXPORT const char *cudaGetErrorName(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidDeviceFunction: return "cudaErrorInvalidDeviceFunction";
    case cudaErrorNoKernelImageForDevice: return "cudaErrorNoKernelImageForDevice";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    case cudaErrorMisalignedAddress: return "cudaErrorMisalignedAddress";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    case cudaErrorAssert: return "cudaErrorAssert";
    case cudaErrorNotSupported: return "cudaErrorNotSupported";
    default: return "cudaErrorUnknown";
    }
}

/* The emulator's own line for the failure it last reported (it names the kernel, instruction, thread
 * and address), else the error's name. */
EXPORT const char *cudaGetErrorString(cudaError_t e)
{
    if (e == cudaSuccess)
        return "no error";
    if (e == detail_code && detail[0])
        return detail;
    return cudaGetErrorName(e);
}
