/* fuzz_ptx: the PTX parser (emu/parse.c) on arbitrary text. A finding: a crash, a leak, undefined
 * behaviour, a run past libFuzzer's -timeout (a hang, or parse time that is not linear), a message that
 * is not one printable line, or a parsed kernel that breaks the invariants the interpreter relies on. */
#include <stdint.h>

#include "fuzz_util.h"
#include "ptx.h"

static void check_kernel(const ptx_kernel *k)
{
    for (int i = 0; i < k->n_code; i++) {
        const insn *in = &k->code[i];
        if (in->op == OP_BRA && (in->target < 0 || in->target >= k->n_code)) {
            fprintf(stderr, "fuzz: kernel %s: instruction %d branches to %d of %d\n", k->name, i, in->target,
                    k->n_code);
            abort();
        }
        if (in->guard >= k->n_slots) {
            fprintf(stderr, "fuzz: kernel %s: instruction %d's guard slot %d of %d\n", k->name, i, in->guard,
                    k->n_slots);
            abort();
        }
    }
    for (int i = 0; i < k->n_consts; i++)
        if (k->const_slot[i] < 0 || k->const_slot[i] >= k->n_slots)
            abort();
    if (k->n_slots > PTX_MAX_SLOTS || k->local_bytes > PTX_MAX_LOCAL_BYTES || k->static_smem > PTX_MAX_SHARED_BYTES ||
        k->param_bytes > PTX_MAX_PARAM_BYTES || k->max_threads < 0 || k->max_threads > PTX_MAX_THREADS) {
        fprintf(stderr, "fuzz: kernel %s passed a limit of emu/ptx.h\n", k->name);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    char err[1024] = "";
    ptx_module *module = ptx_parse(text, "fuzz.ptx", err, sizeof err);
    if (!module)
        fuzz_check_message("ptx_parse", err, strlen(err));
    for (int i = 0; module && i < module->n_kernels; i++)
        check_kernel(&module->kernels[i]);
    ptx_free(module);
    free(text);
    return 0;
}
