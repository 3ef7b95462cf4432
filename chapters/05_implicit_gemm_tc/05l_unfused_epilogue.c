/* 05l: the unfused comparison.
 *
 * What changes from 05i: the epilogue runs as a pass of its own. 05h's plain convolution
 * (05h_staged_stores.cu) writes y, then a separate elementwise kernel (epilogue_unfused_f16_nhwc(),
 * common/kernel/epilogue.cu) reads y back, and the residual, applies the same operations and writes y again.
 *
 * Why: to measure what fusing saves, the second round trip of y through memory. It has no plain launch;
 * without an epilogue it would be 05h.
 *
 * Run:
 *   ./build/conv run 05l --emulate --epilogue bias,bn,residual,relu --n 1
 */
#include "conv.h"
#include "epilogue.h"

void launch_05h(const conv_problem *prob, void *x, void *w, void *y, void *workspace);

void launch_fused_05l(const conv_problem *prob, void *x, void *w, void *y, void *workspace, const conv_epilogue *ep)
{
    launch_05h(prob, x, w, y, workspace);
    epilogue_unfused_f16_nhwc(prob, y, ep);
}
