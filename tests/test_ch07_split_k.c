/* Chapter 07's wgrad GEMM view and split-K ranges (chapters/07_wgrad/split_k.h), on the host:
 * the GEMM built element by element through the operand mappings equals the fp64 wgrad reference,
 * and the split ranges partition the reduction into non-empty, block-aligned pieces that fill the GPU. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "reference.h"
#include "split_k.h"
#include "tensor.h"
#include "test_util.h"

/* wgrad through the GEMM view, summed split by split in split order, as the kernels will. */
static void wgrad_by_gemm(const conv_problem *prob, const float *x_nhwc, const float *dy_nhwc, split_plan plan,
                          double *dw_krsc)
{
    const int64_t reduction = (int64_t)prob->n * prob->p * prob->q;
    const int columns = prob->r * prob->s * (prob->c / prob->groups);
    for (int k = 0; k < prob->k; k++)
        for (int column = 0; column < columns; column++) {
            wgrad_tap tap = wgrad_tap_of(prob, column);
            double total = 0.0;
            for (int split = 0; split < plan.splits; split++) {
                int64_t begin, end;
                split_range(plan, split, reduction, &begin, &end);
                double partial = 0.0;
                for (int64_t j = begin; j < end; j++) {
                    wgrad_pixel at = wgrad_pixel_of(prob, j);
                    int64_t x_at = wgrad_x_offset(prob, at, tap, k);
                    if (x_at >= 0)
                        partial += (double)x_nhwc[x_at] * dy_nhwc[wgrad_dy_offset(prob, at, k)];
                }
                total += partial;
            }
            dw_krsc[(int64_t)k * columns + column] = total;
        }
}

static void check_gemm_view(const conv_problem *prob, uint64_t seed)
{
    int x_dims[4], w_dims[4], y_dims[4];
    problem_x_dims(prob, x_dims);
    problem_w_dims(prob, w_dims);
    problem_y_dims(prob, y_dims);
    size_t nx = (size_t)problem_x_elems(prob), nw = (size_t)problem_w_elems(prob), ny = (size_t)problem_y_elems(prob);
    float *x = malloc(nx * sizeof *x), *dy = malloc(ny * sizeof *dy), *x_nhwc = malloc(nx * sizeof *x_nhwc);
    float *dy_nhwc = malloc(ny * sizeof *dy_nhwc), *dw_logical = malloc(nw * sizeof *dw_logical);
    double *ref = malloc(nw * sizeof *ref), *dw_krsc = malloc(nw * sizeof *dw_krsc);
    fill_uniform(x, nx, seed);
    fill_uniform(dy, ny, seed + 1);
    ref_wgrad_cpu(prob, x, ref, dy);
    pack_tensor(x, x_dims, LAYOUT_NHWC, DTYPE_F32, x_nhwc);
    pack_tensor(dy, y_dims, LAYOUT_NHWC, DTYPE_F32, dy_nhwc);
    split_plan plan = plan_split_k((int64_t)prob->n * prob->p * prob->q, 1, 4, 1, 8, 8);
    wgrad_by_gemm(prob, x_nhwc, dy_nhwc, plan, dw_krsc);
    /* KRSC back to logical KCRS, through floats: compare in double by unpacking an index map instead */
    int mismatches = 0;
    const int cg = prob->c / prob->groups;
    for (int k = 0; k < prob->k; k++)
        for (int c = 0; c < cg; c++)
            for (int r = 0; r < prob->r; r++)
                for (int s = 0; s < prob->s; s++) {
                    double got = dw_krsc[(((int64_t)k * prob->r + r) * prob->s + s) * cg + c];
                    double want = ref[(((int64_t)k * cg + c) * prob->r + r) * prob->s + s];
                    mismatches += fabs(got - want) > 1e-9 * (1.0 + fabs(want));
                }
    char text[128];
    problem_format(prob, text, sizeof text);
    EXPECT(mismatches == 0, "%s: %d filter elements differ from the reference (splits %d)", text, mismatches,
           plan.splits);
    free(x), free(dy), free(x_nhwc), free(dy_nhwc), free(dw_logical), free(ref), free(dw_krsc);
}

static void check_ranges(int64_t reduction, int tiles, int sm_count, int block_k, int64_t min_chunk)
{
    split_plan plan = plan_split_k(reduction, tiles, sm_count, 2, block_k, min_chunk);
    int64_t expected_begin = 0;
    bool ok = plan.splits >= 1 && plan.chunk % block_k == 0;
    for (int i = 0; i < plan.splits && ok; i++) {
        int64_t begin, end;
        split_range(plan, i, reduction, &begin, &end);
        ok = begin == expected_begin && end > begin && begin % block_k == 0;
        expected_begin = end;
    }
    ok = ok && expected_begin == reduction;
    /* fills the GPU twice over when the reduction is long enough to allow it */
    if (reduction >= (int64_t)min_chunk * (2 * sm_count + tiles - 1) / tiles + (int64_t)block_k * 2 * sm_count)
        ok = ok && (int64_t)plan.splits * tiles >= 2 * sm_count;
    EXPECT(ok, "reduction %lld tiles %d sms %d block_k %d min %lld: splits %d chunk %lld", (long long)reduction,
           tiles, sm_count, block_k, (long long)min_chunk, plan.splits, (long long)plan.chunk);
}

int main(void)
{
    for (int i = 0; i < check_fixed_count(); i++) {
        conv_problem prob = check_fixed_problem(i);
        check_gemm_view(&prob, 70 + (uint64_t)i);
    }
    uint64_t state = 5;
    for (int i = 0; i < 60; i++) {
        conv_problem prob = check_random_problem(&state);
        if (problem_flops(&prob) < 2e7)
            check_gemm_view(&prob, 300 + (uint64_t)i);
    }
    int64_t reductions[] = {1, 7, 32, 100, 4096, 100000, 401408, 3211264};
    for (size_t i = 0; i < sizeof reductions / sizeof reductions[0]; i++)
        for (int tiles = 1; tiles <= 300; tiles = tiles * 3 + 1)
            check_ranges(reductions[i], tiles, 132, 32, 256);
    /* conv1 at batch 32: a 64 x 147 filter, one 128x128-ish tile or two; reduction 32*112*112 */
    split_plan conv1 = plan_split_k(401408, 2, 132, 2, 32, 256);
    printf("conv1 wgrad: %d splits of %lld\n", conv1.splits, (long long)conv1.chunk);
    EXPECT(conv1.splits >= 132 && conv1.splits <= 134 && conv1.chunk >= 256, "conv1 wgrad splits %d", conv1.splits);
    return test_summary("test_ch07_split_k");
}
