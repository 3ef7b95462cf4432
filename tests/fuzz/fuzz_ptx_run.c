/* fuzz_ptx_run: the PTX parser and then the interpreter (emu/exec.c, hopper.c, racecheck.c) on the
 * kernels it accepts. To keep every run short, only loop-free kernels run (no branch goes backwards and no
 * call can recurse, so each thread executes each instruction at most once per call site; a barrier that can never complete is a reported
 * deadlock, not a hang), on one block of at most 64 threads and small buffers; bigger kernels are parsed
 * only. A finding: as fuzz_ptx, plus a crash, undefined behaviour or a multi-line message in a launch. */
#include <stdint.h>
#include <stdlib.h>

#include "emu.h"
#include "fuzz_util.h"

enum { BUFFER_BYTES = 4096, MAX_PARAMS = 16 };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    setenv("EMU_THREADS", "1", 1); /* one host thread: the sanitizers see one block at a time */
    return 0;
}

/* Whether a run of k is bounded and small: no backward branch, few slots, little memory; and no call of a
 * .func that could recurse (each direct call goes forward in the code: the module's functions follow the
 * kernel's own code in their order, so calls that only go forward form no cycle; an indirect call could). */
static int runnable(const ptx_kernel *k)
{
    if (k->n_slots > (1 << 14) || k->local_bytes > (1 << 16) + PTX_STACK_BYTES || k->n_code > 20000 ||
        k->n_params > MAX_PARAMS)
        return 0;
    for (int i = 0; i < k->n_code; i++) {
        if (k->code[i].op == OP_BRA && k->code[i].target <= i)
            return 0;
        if (k->code[i].op == OP_CALL && (k->code[i].mode == CALL_INDIRECT ||
                                         (k->code[i].mode == CALL_FUNCTION && k->code[i].target <= i)))
            return 0;
    }
    return 1;
}

static void run_kernel(const ptx_module *module, const ptx_kernel *k)
{
    uint8_t *buffers[MAX_PARAMS] = {0};
    uint8_t params[PTX_MAX_PARAM_BYTES] = {0};
    for (int i = 0; i < k->n_params; i++) {
        const ptx_param *p = &k->params[i];
        if (p->size == 8) { /* a pointer, probably: a small buffer, written, so initcheck lets it be read */
            buffers[i] = aligned_alloc(256, BUFFER_BYTES);
            if (!buffers[i])
                goto done;
            for (int j = 0; j < BUFFER_BYTES; j++)
                buffers[i][j] = (uint8_t)(j * 37);
            emu_alloc_add((uint64_t)(uintptr_t)buffers[i], BUFFER_BYTES, "fuzz buffer", true);
            uint64_t address = (uint64_t)(uintptr_t)buffers[i];
            memcpy(params + p->offset, &address, 8);
        } else if (p->size <= 8) {
            uint64_t value = 3;
            memcpy(params + p->offset, &value, p->size);
        }
    }
    unsigned threads = k->req_threads[0] ? (unsigned)(k->req_threads[0] * k->req_threads[1] * k->req_threads[2]) : 64;
    emu_dim3 block = k->req_threads[0] ? (emu_dim3){(unsigned)k->req_threads[0], (unsigned)k->req_threads[1],
                                                    (unsigned)k->req_threads[2]}
                                       : (emu_dim3){64, 1, 1};
    if (k->max_threads && (unsigned)k->max_threads < threads && !k->req_threads[0])
        block.x = (unsigned)k->max_threads;
    if (threads > 64 && k->req_threads[0])
        goto done;
    emu_launch_desc launch = {.module = module, .kernel = k, .grid = {2, 1, 1}, .block = block,
                              .dynamic_smem = 256, .params = params};
    char err[1024] = "";
    emu_counters counters = {0};
    if (emu_launch(&launch, &counters, err, sizeof err) != EMU_OK)
        fuzz_check_message("emu_launch", err, strlen(err));
done:
    for (int i = 0; i < k->n_params; i++)
        if (buffers[i]) {
            emu_alloc_remove((uint64_t)(uintptr_t)buffers[i]);
            free(buffers[i]);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    char err[1024] = "";
    ptx_module *module = ptx_parse(text, "fuzz.ptx", err, sizeof err);
    free(text);
    if (!module) {
        fuzz_check_message("ptx_parse", err, strlen(err));
        return 0;
    }
    for (int v = 0; v < module->n_vars; v++)
        if (module->vars[v].storage)
            emu_alloc_add((uint64_t)(uintptr_t)module->vars[v].storage, module->vars[v].size, module->vars[v].name,
                          true);
    for (int i = 0; i < module->n_kernels && i < 2; i++)
        if (runnable(&module->kernels[i]))
            run_kernel(module, &module->kernels[i]);
    for (int v = 0; v < module->n_vars; v++)
        if (module->vars[v].storage)
            emu_alloc_remove((uint64_t)(uintptr_t)module->vars[v].storage);
    ptx_free(module);
    return 0;
}
