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

#include <stdint.h>

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

#ifdef __cplusplus
}
#endif

#endif
