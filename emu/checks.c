/* checks.c: what the emulator checks, and how it says what it found.
 *
 * The options come from the environment once per process (emu.h lists them: EMU_THREADS,
 * EMU_INITCHECK, EMU_RACECHECK, EMU_LIVELOCK, EMU_CONVERGENCE, EMU_INTERLEAVE). A check that fails
 * reports through fault(): one line naming the kernel, the PTX line, the block and the thread, and the
 * block stops. Everything that checks (the interpreter, Hopper's instructions, racecheck, the memory
 * accesses) reports here, and this file calls none of them.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu.h"
#include "interp.h"

static emu_options options;
static pthread_once_t options_once = PTHREAD_ONCE_INIT;

static void read_options(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    options.threads = cores > 0 ? (int)cores : 1;
    const char *threads = getenv("EMU_THREADS");
    if (threads && atoi(threads) > 0)
        options.threads = atoi(threads);
    const char *initcheck = getenv("EMU_INITCHECK");
    options.initcheck = !(initcheck && strcmp(initcheck, "0") == 0);
    const char *racecheck = getenv("EMU_RACECHECK");
    options.racecheck = !(racecheck && strcmp(racecheck, "0") == 0);
    const char *livelock = getenv("EMU_LIVELOCK");
    options.livelock_after = livelock && strtoull(livelock, NULL, 10) > 0 ? strtoull(livelock, NULL, 10) : 1ull << 28;
    const char *convergence = getenv("EMU_CONVERGENCE");
    options.strict_convergence = convergence && strcmp(convergence, "strict") == 0;
    const char *seed = getenv("EMU_INTERLEAVE");
    if (seed && *seed) {
        options.interleave = true;
        options.interleave_seed = strtoull(seed, NULL, 0);
    }
}

const emu_options *emu_get_options(void)
{
    pthread_once(&options_once, read_options);
    return &options;
}

/* One line: kernel, PTX line (source line), block, thread, what. The first error of a block wins. */
void describe_line(const block *b, const insn *in, char *out, size_t len)
{
    const ptx_module *mod = b->launch->module;
    const char *file = in->src_file > 0 && in->src_file < mod->n_files ? mod->files[in->src_file] : NULL;
    const char *base = file ? strrchr(file, '/') : NULL;
    if (file && in->src_line > 0)
        snprintf(out, len, "PTX line %d (%s:%d)", in->ptx_line, base ? base + 1 : file, in->src_line);
    else
        snprintf(out, len, "PTX line %d", in->ptx_line);
}

void fault(block *b, const insn *in, int lane, const warp *w, emu_status status, const char *fmt, ...)
{
    if (b->status != EMU_OK)
        return;
    b->status = status;
    unsigned t = w->index * LANES + (unsigned)lane;
    emu_dim3 bd = b->launch->block;
    char where[512] = "";
    if (in)
        describe_line(b, in, where, sizeof where);
    int n = snprintf(b->err, b->err_len, "kernel %s, %s, block (%u,%u,%u) thread (%u,%u,%u): ", b->k->name, where,
                     b->ctaid.x, b->ctaid.y, b->ctaid.z, t % bd.x, t / bd.x % bd.y, t / (bd.x * bd.y));
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < b->err_len)
        vsnprintf(b->err + n, b->err_len - (size_t)n, fmt, ap);
    va_end(ap);
}
