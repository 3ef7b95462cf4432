/* data.c: the bar-orientation images of data.h, drawn from a seeded generator (splitmix64). */
#include <math.h>

#include "data.h"
#include "tensor.h"

static uint64_t splitmix(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double uniform01(uint64_t *state)
{
    return (double)(splitmix(state) >> 11) * 0x1.0p-53;
}

/* Box-Muller; 1 - u keeps the logarithm's argument in (0, 1]. */
static double gaussian(uint64_t *state)
{
    const double u = 1.0 - uniform01(state), v = uniform01(state);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

int draw_image(uint64_t seed, int64_t index, int size, float *pixels)
{
    /* One generator per image, its state mixed from (seed, index). */
    uint64_t state = seed ^ 0x5DEECE66Dull;
    state = splitmix(&state) ^ (uint64_t)index;
    (void)splitmix(&state);
    const int label = (int)(splitmix(&state) % DATA_CLASSES);
    const double pi = 3.141592653589793;
    for (int i = 0; i < size * size; i++)
        pixels[i] = 0.0f;
    /* Several strokes, so that a fair share of the image carries the orientation: the network sees it
     * through a global average, which a single small stroke would dilute. */
    const int strokes = DATA_MIN_STROKES + (int)(splitmix(&state) % (DATA_MAX_STROKES - DATA_MIN_STROKES + 1));
    for (int k = 0; k < strokes; k++) {
        const double angle = label * pi / 4 + (uniform01(&state) - 0.5) * (pi / 12);
        const double half_length = size * (0.08 + 0.08 * uniform01(&state));
        const double half_width = size / 32.0 * (0.6 + 0.8 * uniform01(&state));
        const double cx = size * (0.1 + 0.8 * uniform01(&state)), cy = size * (0.1 + 0.8 * uniform01(&state));
        const double brightness = 0.6 + 0.4 * uniform01(&state);
        const double ux = cos(angle), uy = -sin(angle); /* image rows grow downwards */
        for (int y = 0; y < size; y++)
            for (int x = 0; x < size; x++) {
                /* distance from the pixel centre to the segment, then a one-pixel anti-aliased edge */
                const double dx = x + 0.5 - cx, dy = y + 0.5 - cy;
                double along = dx * ux + dy * uy;
                along = along < -half_length ? -half_length : (along > half_length ? half_length : along);
                const double d = hypot(dx - along * ux, dy - along * uy);
                double ink = 1.0 - (d - half_width);
                ink = brightness * (ink < 0.0 ? 0.0 : (ink > 1.0 ? 1.0 : ink));
                if (ink > pixels[y * size + x])
                    pixels[y * size + x] = (float)ink;
            }
    }
    /* Noise, then about zero mean and unit variance over the data set (the ink covers ~10% of an
     * image): with raw [0, 1] pixels the filters' gradients are so small against the filters that
     * plain SGD barely moves them in a few hundred steps. */
    for (int i = 0; i < size * size; i++)
        pixels[i] = (float)(3.0 * (pixels[i] + 0.25 * gaussian(&state) - 0.1));
    round_to_dtype(pixels, (size_t)size * size, DTYPE_F16);
    return label;
}

void draw_batch(uint64_t seed, int64_t first, int count, int size, float *images, int *labels)
{
    for (int i = 0; i < count; i++)
        labels[i] = draw_image(seed, first + i, size, images + (int64_t)i * size * size);
}
