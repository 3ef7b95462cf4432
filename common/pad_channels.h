/* pad_channels.h: widen each row of an fp16 tensor to a multiple of 8 channels, with zeros.
 *
 * The tensor-core chapters load 16 bytes (8 fp16 channels) at a time, so they need C/groups (and for
 * wgrad K/groups) to be a multiple of 8. Where it is not (ResNet-50's conv1 has C = 3) they copy the
 * operand into their workspace with each row padded by zeros and run the padded problem: the zeros add
 * exact zeros, so the result is the same, and the copy is part of the timed work.
 * NHWC x is N*H*W*groups rows of C/groups channels; KRSC w is K*R*S rows; NHWC dy N*P*Q*groups rows.
 */
#ifndef PAD_CHANNELS_H
#define PAD_CHANNELS_H

#include <stddef.h>
#include <stdint.h>

#include "conv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dst = src with each of `rows` rows of `channels` halves widened to `padded` halves (a multiple of 8,
 * >= channels) by zeros. Enqueued on the default stream; launch errors are fatal. */
void pad_channels_f16(const void *src, void *dst, int64_t rows, int channels, int padded);

/* The next multiple of 8. */
static inline int round_up_to_8(int channels)
{
    return (channels + 7) / 8 * 8;
}

/* ---- fprop on padded copies (chapter 05's 05d-05l, chapter 08) ---------------------------------------- */

/* The problem a kernel runs on the padded copies: the same in every way but C, each group's C/groups
 * rounded up to a multiple of 8. Its extra channels are zeros in both x and w, so they add exact
 * zeros: y is unchanged. */
static inline conv_problem pad_fprop_problem(const conv_problem *prob)
{
    conv_problem padded = *prob;
    padded.c = round_up_to_8(prob->c / prob->groups) * prob->groups;
    return padded;
}

/* Elements of the padded x (NHWC) and w (KRSC), for the kernels' 32-bit index limits. */
int64_t pad_fprop_x_elems(const conv_problem *prob);
int64_t pad_fprop_w_elems(const conv_problem *prob);

/* The workspace the copies need: the padded x, then (256-byte aligned) the padded w; 0 when C/groups
 * is a multiple of 8 already. */
size_t pad_fprop_workspace_bytes(const conv_problem *prob);

/* What the kernel reads: x and w themselves and prob when nothing needs padding; else padded copies,
 * written into the workspace (enqueued on the default stream), and the padded problem. */
typedef struct {
    conv_problem prob;
    const void *x, *w;
} pad_fprop_operands;

pad_fprop_operands pad_fprop(const conv_problem *prob, const void *x, const void *w, void *workspace);

#ifdef __cplusplus
}
#endif

#endif
