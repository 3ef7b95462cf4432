/* pad_channels.h: widen each row of an fp16 tensor to a multiple of 8 channels, with zeros.
 *
 * The tensor-core chapters load 16 bytes (8 fp16 channels) at a time, so they need C/groups (and for
 * dgrad and wgrad K/groups) to be a multiple of 8. Where it is not (ResNet-50's conv1 has C = 3) they
 * copy the operand into their workspace with each row padded by zeros and run the padded problem: the
 * zeros add exact zeros, so the result is the same, and the copy is part of the timed work.
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

/* The same for a tensor stored as `blocks` blocks of `rows` rows, each block also lengthened to
 * `padded_rows` rows (>= rows) of zeros at its end: KRSC w with K/groups padded is `groups` blocks of
 * K/groups*R*S rows, each followed by (padded K/groups - K/groups)*R*S zero rows. */
void pad_rows_f16(const void *src, void *dst, int64_t blocks, int64_t rows, int64_t padded_rows, int channels,
                  int padded);

/* The way back: dst = the first `channels` halves of each of `rows` rows of `padded` halves in src. */
void unpad_channels_f16(const void *src, void *dst, int64_t rows, int channels, int padded);

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

/* The two paths pad_fprop() takes, named for the registry (conv_kernel.branches): the operands as they
 * are (PAD_FPROP_NONE), or copied with their channels padded (PAD_FPROP_COPIES). pad_fprop() and
 * pad_fprop_workspace_bytes() decide with pad_fprop_branch(). */
enum { PAD_FPROP_NONE, PAD_FPROP_COPIES };
extern const char *const pad_fprop_branches[];
int pad_fprop_branch(const conv_problem *prob);

/* ---- dgrad on padded copies (chapter 06's 06a and 06b) -------------------------------------------------- */

/* The problem a dgrad kernel runs on the padded copies: the same in every way but C and K, each group's
 * C/groups and K/groups rounded up to a multiple of 8. dgrad reduces over k, so a padded k must be a
 * zero in dy and in w (both are padded); it writes c, so a padded c is a zero column of w and a zero
 * channel of a padded dx, which is computed and then dropped when dx is copied back. */
static inline conv_problem pad_dgrad_problem(const conv_problem *prob)
{
    conv_problem padded = pad_fprop_problem(prob);
    padded.k = round_up_to_8(prob->k / prob->groups) * prob->groups;
    return padded;
}

/* The workspace the copies need, in order and each 256-byte aligned: the padded dy (when K/groups is not
 * a multiple of 8), the padded w (when either is not), the padded dx (when C/groups is not); 0 when
 * nothing needs padding. */
size_t pad_dgrad_workspace_bytes(const conv_problem *prob);

/* What the kernel reads and writes: dy, w and dx themselves and prob when nothing needs padding; else
 * padded copies of dy and w, written into the workspace (enqueued on the default stream), a padded dx
 * there for the kernel to write, and the padded problem. */
typedef struct {
    conv_problem prob;
    const void *dy, *w;
    void *dx;
} pad_dgrad_operands;

pad_dgrad_operands pad_dgrad(const conv_problem *prob, const void *dy, const void *w, void *dx, void *workspace);

/* After the kernel: where it wrote a padded dx, copies the real channels into dx (enqueued on the
 * default stream); else nothing. */
void unpad_dgrad_dx(const conv_problem *prob, const pad_dgrad_operands *op, void *dx);

#ifdef __cplusplus
}
#endif

#endif
