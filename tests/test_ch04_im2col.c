/* Chapter 04's im2col mapping (chapters/04_im2col_gemm/im2col.h), on the host, against the definition.
 *
 * For the fixed awkward shapes and 100 random ones: every input coordinate the functions produce is
 * p*stride - pad + r*dil, each (c, r, s) gets its own row and each pixel its own column, every element
 * of A is the input value (or the zero padding) the definition says; and W x A, written to y through
 * im2col_y_column(), lands on y's NCHW offsets and reproduces the fp64 reference. Then the buffer's
 * size and the supports() limit on a problem too large for it.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "im2col.h"
#include "reference.h"
#include "tensor.h"
#include "test_util.h"

static void check_input_coord(void)
{
    for (int out = 0; out < 12; out++)
        for (int tap = 0; tap < 7; tap++)
            for (int stride = 1; stride <= 3; stride++)
                for (int pad = 0; pad <= 4; pad++)
                    for (int dil = 1; dil <= 3; dil++)
                        EXPECT(im2col_input_coord(out, tap, stride, pad, dil) == out * stride - pad + tap * dil,
                               "out %d tap %d stride %d pad %d dil %d", out, tap, stride, pad, dil);
}

/* The input value behind A[(c, r, s)][(n, p, q)], straight from the definition, or 0 in the padding. */
static float definition(const conv_problem *prob, const float *x, int c, int r, int s, int n, int p, int q)
{
    int h = p * prob->stride_h - prob->pad_h + r * prob->dil_h;
    int w = q * prob->stride_w - prob->pad_w + s * prob->dil_w;
    if (h < 0 || h >= prob->h || w < 0 || w >= prob->w)
        return 0.0f;
    return x[(((size_t)n * prob->c + c) * prob->h + h) * prob->w + w];
}

static void check_problem(const conv_problem *prob, uint64_t seed)
{
    char text[128];
    problem_format(prob, text, sizeof text);
    const int rows = (int)im2col_rows(prob), cols = (int)im2col_cols(prob), ld = (int)im2col_ld(prob);
    const int pq = prob->p * prob->q, kg = prob->k / prob->groups;
    const int depth = prob->c / prob->groups * prob->r * prob->s;
    EXPECT(rows == prob->c * prob->r * prob->s && cols == prob->n * pq, "%s: A is %d x %d", text, rows, cols);
    EXPECT(ld >= cols && ld % 4 == 0 && ld - cols < 4, "%s: row pitch %d for %d columns", text, ld, cols);

    float *x = xmalloc(sizeof(float) * (size_t)problem_x_elems(prob));
    float *w = xmalloc(sizeof(float) * (size_t)problem_w_elems(prob));
    fill_uniform(x, (size_t)problem_x_elems(prob), seed);
    fill_uniform(w, (size_t)problem_w_elems(prob), seed + 1);

    /* Columns: the pixel decoding inverts (n*P + p)*Q + q. */
    int bad_cols = 0;
    for (int col = 0; col < cols; col++) {
        output_pixel px = output_pixel_of(prob, col);
        bad_cols += px.n < 0 || px.n >= prob->n || px.p < 0 || px.p >= prob->p || px.q < 0 || px.q >= prob->q ||
                    (px.n * prob->p + px.p) * prob->q + px.q != col;
    }
    EXPECT(bad_cols == 0, "%s: %d columns decode to the wrong pixel", text, bad_cols);

    /* Rows and elements: A built with the header's functions, compared with the definition. NaN in the
     * buffer first, so a row the mapping never reaches shows up. */
    float *a = xmalloc(sizeof(float) * (size_t)rows * ld);
    for (size_t i = 0; i < (size_t)rows * ld; i++)
        a[i] = NAN;
    unsigned char *row_seen = calloc((size_t)rows, 1);
    int bad_rows = 0;
    size_t bad_offsets = 0, bad_values = 0;
    for (int c = 0; c < prob->c; c++)
        for (int r = 0; r < prob->r; r++)
            for (int s = 0; s < prob->s; s++) {
                int row = im2col_row(prob, c, r, s);
                if (row < 0 || row >= rows || row != (c * prob->r + r) * prob->s + s || row_seen[row]++) {
                    bad_rows++;
                    continue;
                }
                for (int col = 0; col < ld; col++) {
                    if (col >= cols) { /* the padding up to the row pitch, as im2col writes it */
                        a[(size_t)row * ld + col] = 0.0f;
                        continue;
                    }
                    output_pixel px = output_pixel_of(prob, col);
                    int from = im2col_x_offset(prob, c, r, s, px);
                    int h = px.p * prob->stride_h - prob->pad_h + r * prob->dil_h;
                    int ww = px.q * prob->stride_w - prob->pad_w + s * prob->dil_w;
                    int expected = h >= 0 && h < prob->h && ww >= 0 && ww < prob->w
                                       ? ((px.n * prob->c + c) * prob->h + h) * prob->w + ww
                                       : -1;
                    bad_offsets += from != expected;
                    float value = from >= 0 ? x[from] : 0.0f;
                    bad_values += value != definition(prob, x, c, r, s, px.n, px.p, px.q);
                    a[(size_t)row * ld + col] = value;
                }
            }
    EXPECT(bad_rows == 0, "%s: %d (c, r, s) map to a wrong or repeated row", text, bad_rows);
    EXPECT(bad_offsets == 0 && bad_values == 0, "%s: %zu offsets and %zu values differ from the definition", text,
           bad_offsets, bad_values);

    /* Y_g = W_g x A_g, each column stored where im2col_y_column() says; that must be y's NCHW offset.
     * The product is summed in fp64 like the reference, so the two differ only by summation order:
     * at most depth * 2^-53 times the sum of the terms' magnitudes. */
    const size_t y_elems = (size_t)problem_y_elems(prob);
    double *y = xmalloc(sizeof(double) * y_elems), *magnitude = xmalloc(sizeof(double) * y_elems);
    double *ref = xmalloc(sizeof(double) * y_elems);
    for (size_t i = 0; i < y_elems; i++)
        y[i] = NAN;
    size_t bad_places = 0;
    for (int g = 0; g < prob->groups; g++)
        for (int m = 0; m < kg; m++)
            for (int col = 0; col < cols; col++) {
                double sum = 0.0, sum_abs = 0.0;
                for (int kk = 0; kk < depth; kk++) {
                    double term = (double)w[((size_t)g * kg + m) * depth + kk] *
                                  a[((size_t)g * depth + kk) * ld + col];
                    sum += term;
                    sum_abs += fabs(term);
                }
                const int k = g * kg + m;
                const size_t at = (size_t)k * pq + im2col_y_column(col, pq, prob->k * pq);
                output_pixel px = output_pixel_of(prob, col);
                bad_places += at != (((size_t)px.n * prob->k + k) * prob->p + px.p) * prob->q + px.q;
                y[at] = sum;
                magnitude[at] = sum_abs;
            }
    EXPECT(bad_places == 0, "%s: %zu outputs stored away from their NCHW offset", text, bad_places);

    ref_fprop_cpu(prob, x, w, ref);
    size_t wrong = 0;
    for (size_t i = 0; i < y_elems; i++)
        wrong += !(fabs(y[i] - ref[i]) <= 1e-12 * (1.0 + magnitude[i])); /* NaN (never written) fails too */
    EXPECT(wrong == 0, "%s: W x A differs from the reference at %zu of %zu outputs", text, wrong, y_elems);

    free(ref);
    free(magnitude);
    free(y);
    free(row_seen);
    free(a);
    free(w);
    free(x);
}

/* The buffer's size, and the limit: 2^31 floats (8 GiB), refused with the size and the blow-up. */
static void check_buffer_limits(void)
{
    char why[512] = "";
    conv_problem res2 = problem_make(32, 64, 56, 56, 64, 3, 3);
    res2.pad_h = res2.pad_w = 1;
    EXPECT(problem_validate(&res2, why, sizeof why), "res2_3x3: %s", why);
    EXPECT(im2col_workspace_bytes(&res2) == (size_t)4 * 64 * 9 * 32 * 56 * 56, "res2_3x3: %zu bytes",
           im2col_workspace_bytes(&res2));
    EXPECT(im2col_supports(&res2, why, sizeof why), "res2_3x3 refused: %s", why);

    conv_problem odd = problem_make(1, 2, 5, 5, 1, 1, 1); /* 25 columns, padded to 28 */
    EXPECT(problem_validate(&odd, why, sizeof why), "odd: %s", why);
    EXPECT(im2col_workspace_bytes(&odd) == (size_t)4 * 2 * 28, "odd: %zu bytes", im2col_workspace_bytes(&odd));

    conv_problem big = problem_make(64, 128, 224, 224, 128, 3, 3); /* big_3x3 at N=64: 13.8 GiB */
    big.pad_h = big.pad_w = 1;
    EXPECT(problem_validate(&big, why, sizeof why), "big_3x3 n64: %s", why);
    why[0] = '\0';
    EXPECT(!im2col_supports(&big, why, sizeof why), "big_3x3 at N=64 accepted");
    EXPECT(strstr(why, "13.78 GiB") && strstr(why, "9.0x the input"), "the reason names size and blow-up: %s", why);
}

int main(void)
{
    check_input_coord();
    for (int i = 0; i < check_fixed_count(); i++) {
        conv_problem prob = check_fixed_problem(i);
        check_problem(&prob, 100 + 2 * (uint64_t)i);
    }
    uint64_t state = 4;
    for (int i = 0; i < 100; i++) {
        conv_problem prob = check_random_problem(&state);
        check_problem(&prob, 1000 + 2 * (uint64_t)i);
    }
    check_buffer_limits();
    return test_summary("test_ch04_im2col");
}
