/* functions.c: device functions the compiler did not inline -- a call of a .func of the module, and its ret
 * (PTX ISA 9.0, sections 7.1 "Function Declarations and Definitions", 9.7.12.5 "call", 9.7.12.6 "ret",
 * 5.1.6.4 "Device Function Parameters", 11.3.2-3 ".callprototype" and ".calltargets").
 *
 * Every function a kernel reaches is part of its code (parse.c, link_functions), compiled with the kernel's
 * slots: a call is a jump to the callee's first instruction, after each calling thread has
 *   - pushed a frame (call_frame): where its ret goes back to, and its stack pointer;
 *   - saved the callee's slots (its registers, and the slots holding its variables' addresses), which the
 *     callee's ret restores: each activation has its own registers, so a function that calls itself (or
 *     whose caller it calls again) finds its caller's values as they were;
 *   - taken the callee's frame from its stack in local memory: its .local variables and the .param
 *     variables of the calls it makes, each activation its own (a slot per variable holds its address), as
 *     poison and unwritten (initcheck), like any thread's fresh local memory;
 *   - bound the callee's parameters: a .param parameter is the caller's .param variable itself (its slot
 *     holds that variable's address, so the callee's ld.param reads the value the caller stored, and its
 *     st.param to a return parameter writes the caller's variable, which the caller's ld.param then reads:
 *     "Arguments are pass-by-value", and the caller's variable is the call's own copy); a .reg parameter
 *     gets the value of the caller's register or constant.
 * A .reg return value is copied to the caller's register at the ret, after the callee's slots are restored.
 *
 * The stack (PTX_STACK_BYTES per thread, the emulator's cudaLimitStackSize) bounds the depth: a call that
 * would not fit is an error naming the depth and the limit, never a crash or a hang; so is an indirect call
 * through anything but the address of a function of the module whose signature is the call's (the ISA:
 * undefined), or one not in its .calltargets list.
 *
 * Divergence. Lanes of a warp may call at different times, different functions (an indirect call), and take
 * different paths inside the callee; a diverged warp runs its lanes in program order (exec.c, next_group),
 * and a lane in a call stands where its call does: the order compares the lanes' call sites from the
 * outermost in, then their pcs (call_stack_before). So lanes that returned from a call wait at the
 * instruction after it until the lanes still inside it return too ("A divergent return suspends threads
 * until all threads are ready to return to the caller", section 9.7.12.6), and lanes that have not made the
 * call yet run to it first and follow the others in: the warp reconverges after the call as after a branch.
 * Lanes at one instruction of a function run together whatever their call sites (each has its own frame).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "interp.h"

#define FRAME_OVERHEAD 16 /* a return address and a frame pointer, per activation */
#define SLOT_BYTES 4      /* per saved slot: the 32-bit registers a GPU's callee saves on the stack */

bool call_stack_before(const warp *w, uint32_t x, uint32_t y)
{
    const call_stack *cx = &w->calls[x], *cy = &w->calls[y];
    const int depth = cx->depth < cy->depth ? cx->depth : cy->depth;
    for (int i = 0; i < depth; i++) {
        const int32_t sx = cx->frames[i].return_pc - 1, sy = cy->frames[i].return_pc - 1; /* the calls */
        if (sx != sy)
            return sx < sy;
    }
    /* one stack is a prefix of the other: compare where the shallower lane is with the other's next call */
    const int32_t px = cx->depth > depth ? cx->frames[depth].return_pc - 1 : w->pc[x];
    const int32_t py = cy->depth > depth ? cy->frames[depth].return_pc - 1 : w->pc[y];
    if (px != py)
        return px < py;
    return cx->depth < cy->depth; /* a lane at a call before the lanes already inside it */
}

void calls_reset(block *b, warp *w)
{
    w->in_call = 0;
    if (!w->calls)
        return;
    for (int l = 0; l < LANES; l++) {
        w->calls[l].depth = 0;
        w->calls[l].n_saved = 0;
        w->calls[l].sp = (uint32_t)b->k->stack_base;
    }
}

void calls_free(warp *w)
{
    if (!w->calls)
        return;
    for (int l = 0; l < LANES; l++)
        free(w->calls[l].frames), free(w->calls[l].saved);
    free(w->calls);
    w->calls = NULL;
}

/* Room for n more saved slots (bounded: the stack charges SLOT_BYTES for each). */
static bool room_to_save(call_stack *cs, uint32_t n)
{
    if (cs->n_saved + n <= cs->cap_saved)
        return true;
    const uint32_t want = 2 * (cs->n_saved + n) > 256 ? 2 * (cs->n_saved + n) : 256;
    uint64_t *bigger = realloc(cs->saved, (size_t)want * sizeof *bigger);
    if (!bigger)
        return false;
    cs->saved = bigger, cs->cap_saved = want;
    return true;
}

/* The function a lane's target register names: its index, or -1 after reporting why it is none. */
static int indirect_target(block *b, warp *w, const insn *in, uint32_t lane, uint64_t address)
{
    const ptx_module *mod = b->launch->module;
    const uint64_t index = (address - PTX_FUNC_WINDOW) / 16 - 1;
    if (address < PTX_FUNC_ADDRESS(0) || (address - PTX_FUNC_WINDOW) % 16 || index >= (uint64_t)mod->n_funcs) {
        fault(b, in, (int)lane, w, EMU_ERR_INVALID, "indirect call of 0x%" PRIx64 ", which is not the address of "
              "a function of the module (PTX ISA, \"call\": fptr \"must be an address of a function\")", address);
        return -1;
    }
    const ptx_func *f = &mod->funcs[index];
    if (index >= (uint64_t)b->k->n_frames || b->k->frames[index].entry < 0) {
        fault(b, in, (int)lane, w, EMU_ERR_INVALID, "indirect call of function %s, which the module declares "
              "but does not define (or whose address it never takes)", f->name);
        return -1;
    }
    if (f->signature != (uint64_t)in->addr_offset) {
        fault(b, in, (int)lane, w, EMU_ERR_INVALID, "indirect call of function %s, whose parameters are not the "
              "call's prototype (PTX ISA, \"call\": undefined)", f->name);
        return -1;
    }
    if (in->target >= 0) {
        const int32_t *list = b->k->call_targets + in->target;
        bool listed = false;
        for (int i = 0; i < in->dst_offset && !listed; i++)
            listed = list[i] == (int32_t)index;
        if (!listed) {
            fault(b, in, (int)lane, w, EMU_ERR_INVALID, "indirect call of function %s, which is not in the "
                  "call's .calltargets list", f->name);
            return -1;
        }
    }
    return (int)index;
}

bool function_call(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t m,
                   int32_t *to)
{
    const ptx_kernel *k = b->k;
    const int32_t here = (int32_t)(in - k->code);
    const bool indirect = in->mode == CALL_INDIRECT;
    const int n_ret = in->n_dst, n_args = in->n_src - indirect;
    const int32_t *args = o + n_ret + indirect;
    FOR_LANES(m, l) {
        const int f = indirect ? indirect_target(b, w, in, l, r[o[n_ret]][l]) : (int)in->addr_offset;
        if (f < 0)
            return false;
        const ptx_frame *frame = &k->frames[f];
        const ptx_func *func = &b->launch->module->funcs[f];
        call_stack *cs = &w->calls[l];
        /* the frame: its variables at an aligned offset, then the overhead and the saved slots */
        const uint32_t n_slots = (uint32_t)(frame->end_slot - frame->first_slot);
        const uint64_t base = (cs->sp + (uint64_t)frame->frame_align - 1) / frame->frame_align * frame->frame_align;
        const uint64_t end = base + frame->frame_bytes + FRAME_OVERHEAD + (uint64_t)SLOT_BYTES * n_slots;
        if (end > k->local_bytes) {
            fault(b, in, (int)l, w, EMU_ERR_ADDRESS, "stack overflow: the call of %s at depth %d needs %" PRIu64
                  " bytes of the thread's %u-byte stack, %" PRIu64 " are left (the emulator's cudaLimitStackSize, "
                  "PTX_STACK_BYTES; a runaway recursion?)", func->name, cs->depth + 1,
                  end - cs->sp, PTX_STACK_BYTES, k->local_bytes - cs->sp);
            return false;
        }
        if (!queue_room((void **)&cs->frames, cs->depth, &cs->cap, sizeof *cs->frames, 8) ||
            !room_to_save(cs, n_slots)) {
            fault(b, in, (int)l, w, EMU_ERR_LAUNCH, "out of host memory for a call of %s", func->name);
            return false;
        }
        /* the arguments first: in a recursive call they are slots of the callee's own range */
        uint64_t value[2 * PTX_MAX_FUNC_PARAMS];
        for (int i = 0; i < n_ret; i++)
            value[i] = r[o[i]][l];
        for (int i = 0; i < n_args; i++)
            value[n_ret + i] = r[args[i]][l];
        cs->frames[cs->depth++] = (call_frame){here + 1, f, cs->sp, cs->n_saved};
        for (int32_t s = frame->first_slot; s < frame->end_slot; s++)
            cs->saved[cs->n_saved++] = r[s][l];
        cs->sp = (uint32_t)end;
        /* a fresh frame, as fresh local memory is: poison, and not written (initcheck) */
        memset(w->local + l * k->local_bytes + base, 0xff, frame->frame_bytes);
        memset(w->local_written + l * k->local_bytes + base, 0, frame->frame_bytes);
        for (int i = 0; i < frame->n_vars; i++)
            r[frame->var_slot[i]][l] = base + frame->var_offset[i];
        for (int i = 0; i < func->n_returns; i++)
            if (!func->reg[i]) /* a .reg return value is the callee's register until the ret */
                r[frame->arg_slot[i]][l] = value[i];
        for (int i = 0; i < n_args; i++)
            r[frame->arg_slot[func->n_returns + i]][l] = value[n_ret + i];
        to[l] = frame->entry;
        w->in_call |= 1u << l;
    }
    return true;
}

bool function_ret(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], uint32_t m, int32_t *to)
{
    const ptx_kernel *k = b->k;
    FOR_LANES(m, l) {
        call_stack *cs = &w->calls[l];
        if (!cs->depth) { /* (a branch cannot leave a function's body: its labels are its own) */
            fault(b, in, (int)l, w, EMU_ERR_INVALID, "ret of a function the thread is not in");
            return false;
        }
        const call_frame *cf = &cs->frames[--cs->depth];
        const ptx_frame *frame = &k->frames[cf->func];
        const ptx_func *func = &b->launch->module->funcs[cf->func];
        uint64_t value[PTX_MAX_FUNC_PARAMS];
        for (int i = 0; i < func->n_returns; i++)
            if (func->reg[i])
                value[i] = r[frame->arg_slot[i]][l];
        for (int32_t s = frame->first_slot; s < frame->end_slot; s++)
            r[s][l] = cs->saved[cf->saved + (uint32_t)(s - frame->first_slot)];
        cs->n_saved = cf->saved;
        cs->sp = cf->sp;
        const insn *call = &k->code[cf->return_pc - 1];
        const int32_t *dst = k->slots_of + call->operands;
        for (int i = 0; i < func->n_returns; i++)
            if (func->reg[i])
                r[dst[i]][l] = value[i];
        to[l] = cf->return_pc;
        if (!cs->depth)
            w->in_call &= ~(1u << l);
    }
    return true;
}
