/* The references, which everything else is checked against, checked three ways:
 *   1. fprop on small examples worked by hand (identity, box filter, one-hot input, chapter 01's
 *      example in one dimension, stride with dilation, groups);
 *   2. the adjoint identities <fprop(x,w), dy> = <x, dgrad(w,dy)> = <w, wgrad(x,dy)>, which define
 *      dgrad and wgrad as the transposes of fprop, on many random shapes;
 *   3. the gather-form per-element sums the GPU reference runs (reference_element.h), computed here on
 *      the host, against the scatter-form CPU reference, element by element.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "reference.h"
#include "reference_element.h"
#include "tensor.h"
#include "test_util.h"

static conv_problem valid(conv_problem prob)
{
    char why[256];
    if (!problem_validate(&prob, why, sizeof why))
        printf("invalid test problem: %s\n", why), exit(1);
    return prob;
}

static void hand_worked_examples(void)
{
    /* identity: a 3x3 filter with a 1 in the centre and "same" padding copies the image */
    conv_problem prob = problem_make(1, 1, 4, 5, 1, 3, 3);
    prob.pad_h = prob.pad_w = 1;
    prob = valid(prob);
    float x[20], w[9] = {0, 0, 0, 0, 1, 0, 0, 0, 0};
    double y[20];
    for (int i = 0; i < 20; i++)
        x[i] = (float)(i + 1);
    ref_fprop_cpu(&prob, x, w, y);
    for (int i = 0; i < 20; i++)
        EXPECT(y[i] == x[i], "identity at %d: %g vs %g", i, y[i], x[i]);

    /* box filter on ones: each output counts the taps inside the image: 4 in corners, 6 on edges, 9 inside */
    prob = valid((conv_problem){.n = 1, .c = 1, .h = 4, .w = 4, .k = 1, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1,
                                .stride_h = 1, .stride_w = 1, .dil_h = 1, .dil_w = 1, .groups = 1});
    float ones[16], box[9];
    double counts[16];
    for (int i = 0; i < 16; i++)
        ones[i] = 1.0f;
    for (int i = 0; i < 9; i++)
        box[i] = 1.0f;
    ref_fprop_cpu(&prob, ones, box, counts);
    const double expected_counts[16] = {4, 6, 6, 4, 6, 9, 9, 6, 6, 9, 9, 6, 4, 6, 6, 4};
    EXPECT(memcmp(counts, expected_counts, sizeof counts) == 0, "box filter counts");

    /* one-hot input: cross-correlation reads the filter back to front, y[p][q] = w[h0-p+1][w0-q+1] */
    float hot[16] = {0}, ramp[9];
    double response[16];
    hot[1 * 4 + 2] = 1.0f; /* h0 = 1, w0 = 2 */
    for (int i = 0; i < 9; i++)
        ramp[i] = (float)(i + 1);
    ref_fprop_cpu(&prob, hot, ramp, response);
    for (int p = 0; p < 4; p++)
        for (int q = 0; q < 4; q++) {
            int r = 1 - p + 1, s = 2 - q + 1;
            double expected = (r >= 0 && r < 3 && s >= 0 && s < 3) ? ramp[r * 3 + s] : 0.0;
            EXPECT(response[p * 4 + q] == expected, "one-hot at (%d,%d): %g vs %g", p, q, response[p * 4 + q], expected);
        }

    /* chapter 01's example in one dimension: x = 1..5, w = (1, 0, -1), pad 1: y[q] = x[q-1] - x[q+1], the
     * padding's zero standing in for x[-1] and x[5] */
    prob = valid((conv_problem){.n = 1, .c = 1, .h = 1, .w = 5, .k = 1, .r = 1, .s = 3, .pad_h = 0, .pad_w = 1,
                                .stride_h = 1, .stride_w = 1, .dil_h = 1, .dil_w = 1, .groups = 1});
    float line[5] = {1, 2, 3, 4, 5}, difference[3] = {1, 0, -1};
    double slopes[5];
    const double expected_slopes[5] = {-2, -2, -2, -2, 4};
    ref_fprop_cpu(&prob, line, difference, slopes);
    EXPECT(memcmp(slopes, expected_slopes, sizeof slopes) == 0, "1D example: %g %g %g %g %g", slopes[0], slopes[1],
           slopes[2], slopes[3], slopes[4]);

    /* one row, S=3, dilation 2, stride 2, no padding: Q = (7 - 5)/2 + 1 = 2 taps at 0,2,4 and 2,4,6 */
    prob = valid((conv_problem){.n = 1, .c = 1, .h = 1, .w = 7, .k = 1, .r = 1, .s = 3, .pad_h = 0, .pad_w = 0,
                                .stride_h = 1, .stride_w = 2, .dil_h = 1, .dil_w = 2, .groups = 1});
    float row[7] = {1, 2, 3, 4, 5, 6, 7}, taps[3] = {1, 10, 100};
    double out[2];
    ref_fprop_cpu(&prob, row, taps, out);
    EXPECT(prob.q == 2, "q = %d", prob.q);
    EXPECT(out[0] == 1 + 30 + 500 && out[1] == 3 + 50 + 700, "%g %g", out[0], out[1]);

    /* two groups: output channel 0 sees only input channel 0, channel 1 only channel 1 */
    prob = valid((conv_problem){.n = 1, .c = 2, .h = 1, .w = 1, .k = 2, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0,
                                .stride_h = 1, .stride_w = 1, .dil_h = 1, .dil_w = 1, .groups = 2});
    float pixel[2] = {3, 5}, scale[2] = {2, 7};
    double scaled[2];
    ref_fprop_cpu(&prob, pixel, scale, scaled);
    EXPECT(scaled[0] == 6 && scaled[1] == 35, "groups: %g %g", scaled[0], scaled[1]);
}

static double dot(const float *a, const double *b, size_t count)
{
    double sum = 0.0;
    for (size_t i = 0; i < count; i++)
        sum += a[i] * b[i];
    return sum;
}

static void adjoint_and_gather(const conv_problem *prob, uint64_t seed, const char *label)
{
    size_t nx = (size_t)problem_x_elems(prob), nw = (size_t)problem_w_elems(prob), ny = (size_t)problem_y_elems(prob);
    float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w), *dy = malloc(ny * sizeof *dy);
    double *y = malloc(ny * sizeof *y), *dx = malloc(nx * sizeof *dx), *dw = malloc(nw * sizeof *dw);
    fill_uniform(x, nx, seed);
    fill_uniform(w, nw, seed + 1);
    fill_uniform(dy, ny, seed + 2);
    ref_fprop_cpu(prob, x, w, y);
    ref_dgrad_cpu(prob, dx, w, dy);
    ref_wgrad_cpu(prob, x, dw, dy);

    double forward = dot(dy, y, ny), data = dot(x, dx, nx), filter = dot(w, dw, nw);
    double scale = fabs(forward) + 1.0;
    EXPECT(fabs(forward - data) <= 1e-9 * scale, "%s: <fprop(x,w),dy> %.15g != <x,dgrad(w,dy)> %.15g", label,
           forward, data);
    EXPECT(fabs(forward - filter) <= 1e-9 * scale, "%s: <fprop(x,w),dy> %.15g != <w,wgrad(x,dy)> %.15g", label,
           forward, filter);

    int mismatches = 0;
    for (int n = 0; n < prob->n; n++)
        for (int k = 0; k < prob->k; k++)
            for (int p = 0; p < prob->p; p++)
                for (int q = 0; q < prob->q; q++) {
                    size_t at = (((size_t)n * prob->k + k) * prob->p + p) * prob->q + q;
                    mismatches += fabs(ref_fprop_element(prob, x, w, n, k, p, q) - y[at]) > 1e-12 * (1 + fabs(y[at]));
                }
    for (int n = 0; n < prob->n; n++)
        for (int c = 0; c < prob->c; c++)
            for (int h = 0; h < prob->h; h++)
                for (int iw = 0; iw < prob->w; iw++) {
                    size_t at = (((size_t)n * prob->c + c) * prob->h + h) * prob->w + iw;
                    mismatches += fabs(ref_dgrad_element(prob, w, dy, n, c, h, iw) - dx[at]) > 1e-12 * (1 + fabs(dx[at]));
                }
    for (int k = 0; k < prob->k; k++)
        for (int c = 0; c < prob->c / prob->groups; c++)
            for (int r = 0; r < prob->r; r++)
                for (int s = 0; s < prob->s; s++) {
                    size_t at = (((size_t)k * (prob->c / prob->groups) + c) * prob->r + r) * prob->s + s;
                    mismatches += fabs(ref_wgrad_element(prob, x, dy, k, c, r, s) - dw[at]) > 1e-12 * (1 + fabs(dw[at]));
                }
    EXPECT(mismatches == 0, "%s: %d elements where the gather form differs from the scatter form", label, mismatches);
    /* the GPU reference's split of wgrad's long sum: the residues add up to the whole */
    int split_mismatches = 0;
    for (int k = 0; k < prob->k; k++) {
        double whole = ref_wgrad_element(prob, x, dy, k, 0, 0, 0), parts = 0.0;
        for (int first = 0; first < 7; first++)
            parts += ref_wgrad_partial(prob, x, dy, k, 0, 0, 0, first, 7);
        split_mismatches += fabs(parts - whole) > 1e-12 * (1.0 + fabs(whole));
    }
    EXPECT(split_mismatches == 0, "%s: %d filters where wgrad's residue split differs", label, split_mismatches);
    free(x), free(w), free(dy), free(y), free(dx), free(dw);
}

int main(void)
{
    hand_worked_examples();
    char label[160];
    for (int i = 0; i < check_fixed_count(); i++) {
        conv_problem prob = check_fixed_problem(i);
        problem_format(&prob, label, sizeof label);
        adjoint_and_gather(&prob, 100 + (uint64_t)i, label);
    }
    uint64_t state = 2024;
    for (int i = 0; i < 150; i++) {
        conv_problem prob = check_random_problem(&state);
        if (problem_flops(&prob) > 2e7) /* keep the test fast: the gather form re-sums every element */
            continue;
        problem_format(&prob, label, sizeof label);
        adjoint_and_gather(&prob, 1000 + (uint64_t)i, label);
    }
    return test_summary("test_reference");
}
