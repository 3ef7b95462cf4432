/* data.h: the synthetic task the example learns: which way do the strokes point?
 *
 * Each image holds DATA_MIN_STROKES to DATA_MAX_STROKES anti-aliased strokes at random positions,
 * lengths, widths and brightnesses, in Gaussian noise (sigma 0.25). Its class is the strokes' common
 * orientation: 0, 45, 90 or 135 degrees (each stroke jittered by up to 7.5 degrees). Chance is 25%. No single pixel, and no image-wide statistic such as mean brightness, tells the classes
 * apart; local oriented edges do, which is what 3x3 filters learn. Image i of a stream depends only on
 * (seed, i), so every backend, batch size and run order sees the same images, and a test stream drawn
 * from another seed is held out from training.
 */
#ifndef DATA_H
#define DATA_H

#include <stdint.h>

#define DATA_CLASSES 4
#define DATA_MIN_STROKES 3
#define DATA_MAX_STROKES 6

/* Draws image `index` of stream `seed`: size x size floats, about zero mean and unit variance, every
 * value exactly representable in fp16 (so the fp16 and fp32 backends start from the same numbers).
 * Returns its class. */
int draw_image(uint64_t seed, int64_t index, int size, float *pixels);

/* count consecutive images from `first`: images [count][size][size], labels [count]. */
void draw_batch(uint64_t seed, int64_t first, int count, int size, float *images, int *labels);

#endif
