/* fuzz_ptxrun_cli: ptxrun's command line (emu/ptxrun.c, its main() run in-process through
 * ptxrun_hooks.h). The input is the arguments after "ptxrun", separated by NUL bytes; the starting inputs name the
 * files the harness writes into its own scratch folder (k.ptx, a.npy, b.npy), where it runs. A finding:
 * a crash, undefined behaviour, stderr that is not one printable line, or an exit status other than
 * 0, 1 or 2. Inputs that would write outside the scratch folder (any '/'), launch more than 4096 threads
 * or allocate a buffer between 64 Ki elements and the 2^36-byte limit are skipped: they would only be
 * slow, and the limits themselves are tested by tests/test_hostile_input.py. */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu.h"
#include "fuzz_util.h"
#include "model.h"

int ptxrun_main(int argc, char **argv);

FILE *fuzz_stderr;
static jmp_buf back;
static int exit_status;

/* ---- what ptxrun.c's main() allocates, so an exit() does not leak it -------------------------- */
enum { MAX_LIVE = 4096 };
static void *live[MAX_LIVE];
static int n_live;
static ptx_module *modules[64];
static int n_modules;
static uint64_t alloc_bases[256];
static int n_alloc_bases;

static void *remember(void *p)
{
    if (p && n_live < MAX_LIVE)
        live[n_live++] = p;
    return p;
}

void *fuzz_malloc(size_t size) { return remember(malloc(size)); }
void *fuzz_calloc(size_t n, size_t size) { return remember(calloc(n, size)); }
void *fuzz_aligned_alloc(size_t align, size_t size) { return remember(aligned_alloc(align, size)); }

void fuzz_free(void *p)
{
    for (int i = 0; i < n_live; i++)
        if (live[i] == p) {
            live[i] = live[--n_live];
            break;
        }
    free(p);
}

ptx_module *fuzz_ptx_parse(const char *text, const char *path, char *err, size_t err_len)
{
    ptx_module *m = ptx_parse(text, path, err, err_len);
    if (m && n_modules < 64)
        modules[n_modules++] = m;
    return m;
}

void fuzz_ptx_free(ptx_module *m)
{
    for (int i = 0; i < n_modules; i++)
        if (modules[i] == m) {
            modules[i] = modules[--n_modules];
            break;
        }
    ptx_free(m);
}

/* ptxrun --model NAME: known or not, as the model says; nothing is modeled (ptxrun_hooks.h) */
bool fuzz_model_gpu_choose(const char *name)
{
    char names[128];
    model_gpu_names(names, sizeof names);
    for (char *save = NULL, *known = strtok_r(names, ", ", &save); known; known = strtok_r(NULL, ", ", &save))
        if (strcmp(known, name) == 0)
            return true;
    return false;
}

const struct model_gpu *fuzz_model_gpu_chosen(void) { return NULL; }

void fuzz_alloc_add(uint64_t base, uint64_t size, const char *what, bool initialized)
{
    if (n_alloc_bases < 256)
        alloc_bases[n_alloc_bases++] = base;
    emu_alloc_add(base, size, what, initialized);
}

_Noreturn void fuzz_exit(int status)
{
    exit_status = status;
    longjmp(back, 1);
}

static void release_all(void)
{
    for (int i = 0; i < n_alloc_bases; i++)
        emu_alloc_remove(alloc_bases[i]);
    n_alloc_bases = 0;
    for (int i = 0; i < n_modules; i++)
        ptx_free(modules[i]);
    n_modules = 0;
    for (int i = 0; i < n_live; i++)
        free(live[i]);
    n_live = 0;
}

/* ---- the scratch folder and its files ------------------------------------------------------------ */
static const char kernel_ptx[] =
    ".version 9.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry k(.param .u64 out, .param .u64 in, .param .u32 n, .param .f32 x)\n{\n"
    "  .reg .pred %p<2>; .reg .b32 %r<4>; .reg .b64 %rd<6>; .reg .f32 %f<3>;\n"
    "  ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [in]; ld.param.u32 %r2, [n]; ld.param.f32 %f2, [x];\n"
    "  mov.u32 %r1, %tid.x; setp.ge.u32 %p1, %r1, %r2; @%p1 bra DONE;\n"
    "  mul.wide.u32 %rd3, %r1, 4; add.s64 %rd4, %rd2, %rd3; add.s64 %rd5, %rd1, %rd3;\n"
    "  ld.global.f32 %f1, [%rd4]; add.f32 %f1, %f1, %f2; st.global.f32 [%rd5], %f1;\n"
    "DONE:\n  ret;\n}\n";

static void write_file(const char *name, const void *bytes, size_t len)
{
    FILE *f = fopen(name, "wb");
    if (f) {
        fwrite(bytes, 1, len, f);
        fclose(f);
    }
}

/* A .npy v1.0 file of n float32 (or uint32) values. */
static void write_npy(const char *name, const char *descr, int n)
{
    char header[128];
    int len = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }", descr, n);
    unsigned char file[512] = "\x93NUMPY\x01\x00";
    int total = (10 + len + 1 + 63) / 64 * 64;
    file[8] = (unsigned char)(total - 10), file[9] = 0;
    memset(file + 10, ' ', (size_t)(total - 10));
    memcpy(file + 10, header, (size_t)len);
    file[total - 1] = '\n';
    memset(file + total, 0, (size_t)n * 4);
    write_file(name, file, (size_t)total + (size_t)n * 4);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    setenv("EMU_THREADS", "1", 1);
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/fuzz_ptxrun_cli_%d", (int)getpid());
    mkdir(dir, 0700);
    if (chdir(dir) != 0)
        abort();
    write_file("k.ptx", kernel_ptx, sizeof kernel_ptx - 1);
    write_npy("a.npy", "<f4", 32);
    write_npy("b.npy", "<u4", 8);
    fuzz_stderr = tmpfile();
    if (!fuzz_stderr)
        abort();
    return 0;
}

/* The product of every run of digits in text (saturating): at least the threads a --grid or --block
 * value can ask for, however ptxrun reads it. */
static uint64_t digits_product(const char *text)
{
    uint64_t product = 1;
    for (const char *p = text; *p;) {
        if (*p < '0' || *p > '9') {
            p++;
            continue;
        }
        uint64_t value = 0;
        for (; *p >= '0' && *p <= '9'; p++)
            value = value > (1ull << 40) ? value : value * 10 + (uint64_t)(*p - '0');
        product = product > (1ull << 40) || value > (1ull << 40) ? (1ull << 41) : product * value;
    }
    return product;
}

static bool worth_running(int argc, char **argv)
{
    uint64_t threads = 1;
    for (int i = 1; i < argc; i++) {
        if (strchr(argv[i], '/'))
            return false;
        if ((strcmp(argv[i], "--grid") == 0 || strcmp(argv[i], "--block") == 0) && i + 1 < argc) {
            uint64_t p = digits_product(argv[i + 1]);
            threads = p > 4096 || threads * p > 4096 ? 4097 : threads * p;
        }
        if (strncmp(argv[i], "out:", 4) == 0) {
            unsigned long long count = strtoull(strrchr(argv[i], ':') + 1, NULL, 10);
            if (count > 65536 && count <= (1ull << 36))
                return false;
        }
    }
    return threads <= 4096;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum { MAX_ARGS = 24 };
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    char *argv[MAX_ARGS + 2] = {"ptxrun"};
    int argc = 1;
    for (size_t at = 0; at < size && argc <= MAX_ARGS; at += strlen(text + at) + 1)
        argv[argc++] = text + at;
    argv[argc] = NULL;
    if (argc > MAX_ARGS || !worth_running(argc, argv)) {
        free(text);
        return 0;
    }
    rewind(fuzz_stderr);
    if (ftruncate(fileno(fuzz_stderr), 0) != 0)
        abort();
    exit_status = -1;
    if (setjmp(back) == 0)
        exit_status = ptxrun_main(argc, argv);
    release_all();
    fflush(fuzz_stderr);
    long len = ftell(fuzz_stderr);
    char message[8192];
    rewind(fuzz_stderr);
    size_t got = fread(message, 1, len > 0 && len < (long)sizeof message ? (size_t)len : sizeof message - 1,
                       fuzz_stderr);
    message[got] = 0;
    if (exit_status < 0 || exit_status > 2) {
        fprintf(stderr, "fuzz: ptxrun exit status %d\n", exit_status);
        abort();
    }
    if (got)
        fuzz_check_message("ptxrun's stderr", message, got);
    else if (exit_status != 0) {
        fprintf(stderr, "fuzz: ptxrun exit status %d with nothing on stderr\n", exit_status);
        abort();
    }
    free(text);
    return 0;
}
