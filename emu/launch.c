/* launch.c: a launch, run, and modeled when EMU_MODEL asks (emu.h: emu_launch). The interpreter (exec.c)
 * runs blocks; the timing model (model.c) runs the blocks of the SM it models, cycle by cycle, on the same
 * interpreter; this file decides which runs what, so that neither of them needs the other's decisions.
 */
#include "interp.h"
#include "model.h"

emu_status emu_launch(const emu_launch_desc *L, emu_counters *counters, char *err, size_t err_len)
{
    const struct model_gpu *gpu = model_gpu_chosen();
    if (!gpu || !counters || L->kernel->ptxas_registers < 0) /* no model, or one its GPU cannot run */
        return exec_launch(L, 0, counters, err, err_len);
    uint64_t smem;
    emu_status status = exec_launch_check(L, &smem, err, err_len);
    if (status != EMU_OK)
        return status;
    /* The modeled SM's blocks run in the model. A sampled launch counts its sample as always (running the
     * modeled SM's blocks a second time: its outputs are not computed anyway); a full one runs every other
     * block, and the model's blocks count with them. */
    status = model_run_sm(gpu, L, smem, L->kernel->ptxas_registers, counters, L->sample ? NULL : counters, err,
                          err_len);
    if (status != EMU_OK)
        return status;
    return exec_launch(L, L->sample ? 0 : model_sm_stride(gpu), counters, err, err_len);
}
