/* Chapter 06's dgrad index math (chapters/06_dgrad/dgrad.h, on top of stride_phases.h), on the host,
 * against the definition.
 *
 * For the fixed awkward shapes, ~100 random ones (strides 1-3, dilation, padding, odd sizes, groups,
 * N = 1) and a few chosen ones (phases without taps, filters shorter than the stride, the
 * transposed-convolution example):
 *  1. every stride phase's GEMM, built through dgrad_a_offset() / dgrad_b_offset() and stored through
 *     dgrad_dx_offset(), reproduces ref_dgrad_cpu(); every dx element is written by exactly one
 *     (phase, group, row, column), phases without taps included (they write zeros);
 *  2. the split form the kernel uses (row origin + tap offset, edge masks) addresses the same dy element
 *     as the direct form for every (row, kappa), and dgrad_b_row_offset() the same filter element;
 *  3. the walk (dgrad_iter_next) visits the same (t, u, k) as division, from every start of a k tile;
 *  4. at stride 1, 06a's direct geometry is the one phase of 06b's;
 *  5. the grid: dgrad_max_tiles() covers every phase's tiles for each tile shape, and the work by phase
 *     is what dgrad_macs_by_phase() counts (stride_phases.h), the number the chapter quotes;
 *  6. dgrad_pick_shape() picks the tile shape the chapter says on the layers it names;
 *  7. channels per group not a multiple of 8: the padded problem (pad_dgrad_problem(), common/
 *     pad_channels.h) rounds each group's C/groups and K/groups up to a multiple of 8 and changes nothing
 *     else, the workspace holds the padded copies, and the GEMMs run on the padded problem over copies
 *     padded with zeros (written here from the layouts' definitions), with dx's real channels taken back
 *     out, reproduce ref_dgrad_cpu() of the unpadded problem while the padded channels of dx come out 0.
 *
 * The thread-by-thread behaviour of the kernel (swizzled staging, ldmatrix .trans, mma fragments) is
 * not emulated here; it was emulated outside the repository while writing the chapter, and the gpu
 * suite (`conv check 06`) is what checks it for real. The padding kernels themselves (pad_channels.cu)
 * run on the PTX emulator in the cpu suite's ch06_emulate_06b_padded_* tests (tests/meson.build).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dgrad.h"
#include "harness.h"
#include "pad_channels.h"
#include "reference.h"
#include "suites.h"
#include "tensor.h"
#include "test_util.h"

static int check_problem(const conv_problem *prob, const char *label)
{
    const int failures_before = test_failures;
    char desc[128];
    problem_format(prob, desc, sizeof desc);

    const int64_t nx = problem_x_elems(prob), nw = problem_w_elems(prob), ny = problem_y_elems(prob);
    float *w = xmalloc(nw * sizeof(float)), *dy = xmalloc(ny * sizeof(float));
    float *w_krsc = xmalloc(nw * sizeof(float)), *dy_nhwc = xmalloc(ny * sizeof(float));
    double *ref = xmalloc(nx * sizeof(double)), *dx = xmalloc(nx * sizeof(double));
    int *count = xmalloc(nx * sizeof(int));
    fill_uniform(w, nw, 11);
    fill_uniform(dy, ny, 12);
    int wd[4], yd[4];
    problem_w_dims(prob, wd);
    problem_y_dims(prob, yd);
    pack_tensor(w, wd, LAYOUT_NHWC, DTYPE_F32, w_krsc);
    pack_tensor(dy, yd, LAYOUT_NHWC, DTYPE_F32, dy_nhwc);
    ref_dgrad_cpu(prob, ref, w, dy);
    memset(count, 0, nx * sizeof(int));
    for (int64_t e = 0; e < nx; e++)
        dx[e] = NAN;

    const int cols = dgrad_cols(prob), kg = prob->k / prob->groups;
    int split_bad = 0, walk_bad = 0, b_bad = 0, range_bad = 0;
    double visited = 0.0;
    for (int z = 0; z < dgrad_phase_count(prob); z++) {
        const dgrad_phase ph = dgrad_phase_of(prob, z);
        const int rows = dgrad_rows(prob, ph), depth = dgrad_depth(prob, ph);
        visited += (double)rows * cols * depth * prob->groups;
        const int shapes[3][2] = {{128, 128}, {256, 64}, {64, 64}}; /* DGRAD_SHAPE_WIDE, _NARROW, _SMALL */
        for (int sh = 0; sh < 3; sh++)
            EXPECT(tiles_covering(rows, shapes[sh][0]) * tiles_covering(cols, shapes[sh][1]) <=
                       dgrad_max_tiles(prob, true, shapes[sh][0], shapes[sh][1]),
                   "%s: phase %d has more %dx%d tiles than the grid", desc, z, shapes[sh][0], shapes[sh][1]);

        /* 3. the walk, from every start a thread of a 32-deep k tile takes (A: 8*chunk, B: row) */
        const dgrad_walk walk = dgrad_walk_make(prob, ph, 32);
        for (int start = 0; start < 32 && depth > 0; start++)
            for (dgrad_iter it = dgrad_iter_at(walk, start); it.kappa < depth; it = dgrad_iter_next(it, walk)) {
                const dgrad_tap tp = dgrad_tap_of(prob, ph, it.kappa);
                walk_bad += it.t != tp.t || it.u != tp.u || it.k != tp.k;
            }

        for (int g = 0; g < prob->groups; g++)
            for (int m = 0; m < rows; m++) {
                const dgrad_origin o = dgrad_row_origin(prob, ph, g, m);
                const uint32_t hm = dgrad_tap_mask(o.p, ph.h.taps, ph.h.out_step, prob->p);
                const uint32_t wm = dgrad_tap_mask(o.q, ph.w.taps, ph.w.out_step, prob->q);
                const dgrad_pixel px = dgrad_pixel_of(ph, m);
                range_bad += px.h < 0 || px.h >= prob->h || px.w < 0 || px.w >= prob->w ||
                             phase_of(px.h, prob->pad_h, prob->stride_h) != z / prob->stride_w ||
                             phase_of(px.w, prob->pad_w, prob->stride_w) != z % prob->stride_w;
                double *sums = calloc(cols, sizeof(double));
                for (int kappa = 0; kappa < depth; kappa++) {
                    const int a = dgrad_a_offset(prob, ph, g, m, kappa);
                    const dgrad_tap tp = dgrad_tap_of(prob, ph, kappa);
                    /* 2. the split form */
                    const bool inside = (hm >> tp.t) & (wm >> tp.u) & 1u;
                    const int split = inside ? o.offset + dgrad_a_tap_offset(prob, ph, tp.t, tp.u, tp.k) : -1;
                    split_bad += split != a;
                    /* the definition: the tap reaches this pixel and the p it names is this one */
                    const int p = dgrad_axis_out(ph.h, px.i, tp.t), q = dgrad_axis_out(ph.w, px.jw, tp.u);
                    range_bad += tp.r < 0 || tp.r >= prob->r || tp.s < 0 || tp.s >= prob->s ||
                                 p * prob->stride_h != px.h + prob->pad_h - tp.r * prob->dil_h ||
                                 q * prob->stride_w != px.w + prob->pad_w - tp.s * prob->dil_w;
                    if (a < 0)
                        continue;
                    for (int j = 0; j < cols; j++) {
                        const int b = dgrad_b_offset(prob, ph, g, kappa, j);
                        b_bad += b != dgrad_b_group_offset(prob, g) +
                                          dgrad_b_row_offset(prob, ph, tp.t, tp.u, tp.k) + j;
                        sums[j] += (double)dy_nhwc[a] * w_krsc[b];
                    }
                }
                for (int j = 0; j < cols; j++) {
                    const int d = dgrad_dx_offset(prob, ph, g, m, j);
                    if (d < 0 || d >= nx) {
                        range_bad++;
                        continue;
                    }
                    dx[d] = sums[j];
                    count[d]++;
                }
                free(sums);
            }
    }
    (void)kg;

    /* 1. exactly once, equal to the reference (ref is NCHW, dx NHWC) */
    int not_once = 0, wrong = 0;
    double worst = 0.0;
    for (int n = 0; n < prob->n; n++)
        for (int c = 0; c < prob->c; c++)
            for (int h = 0; h < prob->h; h++)
                for (int x = 0; x < prob->w; x++) {
                    const int64_t d = (((int64_t)n * prob->h + h) * prob->w + x) * prob->c + c;
                    const double r = ref[(((int64_t)n * prob->c + c) * prob->h + h) * prob->w + x];
                    not_once += count[d] != 1;
                    const double err = fabs(dx[d] - r);
                    if (!(err <= 1e-9 * (1.0 + fabs(r))))
                        wrong++;
                    if (err > worst)
                        worst = err;
                }
    EXPECT(not_once == 0, "%s (%s): %d dx elements not written exactly once", desc, label, not_once);
    EXPECT(wrong == 0, "%s (%s): %d dx elements differ from the reference (worst %g)", desc, label, wrong, worst);
    EXPECT(split_bad == 0, "%s (%s): %d (row, kappa) where origin + tap offset + masks != direct", desc, label,
           split_bad);
    EXPECT(walk_bad == 0, "%s (%s): the walk left the division's digits %d times", desc, label, walk_bad);
    EXPECT(b_bad == 0, "%s (%s): %d filter offsets differ between the two forms", desc, label, b_bad);
    EXPECT(range_bad == 0, "%s (%s): %d pixels, taps or output coordinates off the definition", desc, label,
           range_bad);
    /* 5. the GEMMs' total depth is the phase-by-phase MAC count of stride_phases.h */
    const double macs = dgrad_macs_by_phase(prob);
    EXPECT(fabs(visited - macs) <= 1e-9 * macs, "%s: GEMMs visit %.0f MACs, stride_phases.h counts %.0f", desc,
           visited, macs);

    /* 4. at stride 1, 06a's direct geometry is the one phase */
    if (prob->stride_h == 1 && prob->stride_w == 1) {
        const dgrad_phase a = dgrad_direct(prob), b = dgrad_phase_of(prob, 0);
        EXPECT(memcmp(&a, &b, sizeof a) == 0, "%s: direct geometry differs from phase 0 at stride 1", desc);
    }

    free(w);
    free(dy);
    free(w_krsc);
    free(dy_nhwc);
    free(ref);
    free(dx);
    free(count);
    return test_failures == failures_before;
}

/* dx (NHWC) as 06a and 06b's GEMMs compute it on `run`, from NHWC dy and KRSC w: the direct form of every
 * phase and group (dgrad_a_offset(), dgrad_b_offset(), dgrad_dx_offset()). */
static void dgrad_by_phases(const conv_problem *run, const float *dy, const float *w, double *dx)
{
    const int cols = dgrad_cols(run);
    double *sums = xmalloc(cols * sizeof(double));
    for (int z = 0; z < dgrad_phase_count(run); z++) {
        const dgrad_phase ph = dgrad_phase_of(run, z);
        const int rows = dgrad_rows(run, ph), depth = dgrad_depth(run, ph);
        for (int g = 0; g < run->groups; g++)
            for (int m = 0; m < rows; m++) {
                for (int j = 0; j < cols; j++)
                    sums[j] = 0.0;
                for (int kappa = 0; kappa < depth; kappa++) {
                    const int a = dgrad_a_offset(run, ph, g, m, kappa);
                    for (int j = 0; a >= 0 && j < cols; j++)
                        sums[j] += (double)dy[a] * w[dgrad_b_offset(run, ph, g, kappa, j)];
                }
                for (int j = 0; j < cols; j++)
                    dx[dgrad_dx_offset(run, ph, g, m, j)] = sums[j];
            }
    }
    free(sums);
}

/* 7. The padded path of 06a and 06b (pad_dgrad()). Returns whether the problem needed padding. */
static bool check_padded(const conv_problem *prob, const char *label)
{
    char desc[128];
    problem_format(prob, desc, sizeof desc);
    const conv_problem pp = pad_dgrad_problem(prob);
    const int g = prob->groups, cg = prob->c / g, kg = prob->k / g, cg8 = pp.c / g, kg8 = pp.k / g;
    conv_problem same = pp;
    same.c = prob->c, same.k = prob->k;
    EXPECT(memcmp(&same, prob, sizeof same) == 0, "%s (%s): padding changed more than C and K", desc, label);
    EXPECT(pp.c % g == 0 && pp.k % g == 0 && cg8 % 8 == 0 && kg8 % 8 == 0 && cg8 - cg >= 0 && cg8 - cg < 8 &&
               kg8 - kg >= 0 && kg8 - kg < 8,
           "%s (%s): padded to C %d, K %d: not each group's channels up to the next multiple of 8", desc, label,
           pp.c, pp.k);
    const size_t workspace = pad_dgrad_workspace_bytes(prob);
    const bool pad_c = cg % 8 != 0, pad_k = kg % 8 != 0;
    if (!pad_c && !pad_k) {
        EXPECT(workspace == 0, "%s (%s): %zu bytes of workspace with nothing to pad", desc, label, workspace);
        return false;
    }
    /* the copies: dy if K is padded, w always, dx if C is */
    const size_t pixels_in = (size_t)prob->n * prob->h * prob->w, pixels_out = (size_t)prob->n * prob->p * prob->q;
    const size_t taps = (size_t)prob->r * prob->s;
    const size_t copies =
        2 * ((pad_k ? pixels_out * pp.k : 0) + (size_t)pp.k * taps * cg8 + (pad_c ? pixels_in * pp.c : 0));
    EXPECT(workspace >= copies, "%s (%s): %zu bytes of workspace for %zu bytes of padded copies", desc, label,
           workspace, copies);

    const int64_t nx = problem_x_elems(prob), nw = problem_w_elems(prob), ny = problem_y_elems(prob);
    float *w = xmalloc(nw * sizeof(float)), *dy = xmalloc(ny * sizeof(float));
    float *w_krsc = xmalloc(nw * sizeof(float)), *dy_nhwc = xmalloc(ny * sizeof(float));
    double *ref = xmalloc(nx * sizeof(double)), *dx_padded = xmalloc(pixels_in * pp.c * sizeof(double));
    fill_uniform(w, nw, 21);
    fill_uniform(dy, ny, 22);
    int wd[4], yd[4];
    problem_w_dims(prob, wd);
    problem_y_dims(prob, yd);
    pack_tensor(w, wd, LAYOUT_NHWC, DTYPE_F32, w_krsc);
    pack_tensor(dy, yd, LAYOUT_NHWC, DTYPE_F32, dy_nhwc);
    ref_dgrad_cpu(prob, ref, w, dy);

    /* the copies the kernel reads: group gi's channel k of dy at gi*kg8 + k; filter row (gi*kg8 + k, r, s)
     * of w with its column c at c; everything else zero */
    float *dy_padded = calloc(pixels_out * pp.k, sizeof(float));
    float *w_padded = calloc((size_t)pp.k * taps * cg8, sizeof(float));
    for (size_t px = 0; px < pixels_out; px++)
        for (int gi = 0; gi < g; gi++)
            for (int k = 0; k < kg; k++)
                dy_padded[px * pp.k + (size_t)gi * kg8 + k] = dy_nhwc[px * prob->k + (size_t)gi * kg + k];
    for (int gi = 0; gi < g; gi++)
        for (int k = 0; k < kg; k++)
            for (size_t t = 0; t < taps; t++)
                for (int c = 0; c < cg; c++)
                    w_padded[(((size_t)gi * kg8 + k) * taps + t) * cg8 + c] =
                        w_krsc[(((size_t)gi * kg + k) * taps + t) * cg + c];
    for (size_t e = 0; e < pixels_in * pp.c; e++)
        dx_padded[e] = NAN;
    dgrad_by_phases(&pp, dy_padded, w_padded, dx_padded);

    /* dx's real channels, taken out of the padded dx, against the unpadded problem's reference */
    int wrong = 0, not_zero = 0;
    for (size_t px = 0; px < pixels_in; px++)
        for (int gi = 0; gi < g; gi++)
            for (int c = 0; c < cg8; c++) {
                const double v = dx_padded[px * pp.c + (size_t)gi * cg8 + c];
                if (c >= cg) {
                    not_zero += v != 0.0;
                    continue;
                }
                const int64_t plane = (int64_t)prob->h * prob->w, n = (int64_t)px / plane, hw = (int64_t)px % plane;
                const double r = ref[(n * prob->c + (int64_t)gi * cg + c) * plane + hw]; /* NCHW */
                wrong += !(fabs(v - r) <= 1e-9 * (1.0 + fabs(r)));
            }
    EXPECT(wrong == 0, "%s (%s): padded to C %d, K %d: %d dx elements differ from the reference", desc, label,
           pp.c, pp.k, wrong);
    EXPECT(not_zero == 0, "%s (%s): padded to C %d, K %d: %d padded channels of dx are not 0", desc, label, pp.c,
           pp.k, not_zero);

    free(w);
    free(dy);
    free(w_krsc);
    free(dy_nhwc);
    free(ref);
    free(dx_padded);
    free(dy_padded);
    free(w_padded);
    return true;
}

static conv_problem make(int n, int c, int h, int w, int k, int r, int s, int stride_h, int stride_w, int pad_h,
                         int pad_w, int dil_h, int dil_w, int groups)
{
    conv_problem prob = problem_make(n, c, h, w, k, r, s);
    prob.stride_h = stride_h, prob.stride_w = stride_w;
    prob.pad_h = pad_h, prob.pad_w = pad_w;
    prob.dil_h = dil_h, prob.dil_w = dil_w;
    prob.groups = groups;
    char why[256];
    if (!problem_validate(&prob, why, sizeof why)) {
        printf("FAIL: chosen problem invalid: %s\n", why);
        test_failures++;
    }
    return prob;
}

int main(void)
{
    int passed = 0, total = 0, padded = 0;
    for (int i = 0; i < check_fixed_count(); i++) {
        conv_problem prob = check_fixed_problem(i);
        passed += check_problem(&prob, "fixed");
        padded += check_padded(&prob, "fixed");
        total++;
    }

    const conv_problem chosen[] = {
        /* dilation 2 at stride 2: phases (1, *) and (*, 1) have no taps and must be zeros */
        make(2, 8, 11, 10, 16, 3, 3, 2, 2, 2, 2, 2, 2, 1),
        /* 1x1 at stride 2 (a ResNet downsampling shortcut): three of four phases get nothing */
        make(1, 16, 9, 8, 8, 1, 1, 2, 2, 0, 0, 1, 1, 1),
        /* a filter shorter than the stride, odd sizes, N = 1 */
        make(1, 8, 13, 11, 8, 2, 2, 3, 3, 1, 0, 1, 1, 1),
        /* stride 3 with dilation 3 and padding: one phase of nine gets taps */
        make(1, 8, 14, 13, 8, 3, 2, 3, 3, 2, 1, 3, 3, 1),
        /* different strides per axis, groups */
        make(2, 24, 12, 15, 16, 3, 5, 2, 3, 1, 2, 1, 2, 2),
        /* the transposed-convolution example at batch 2 (the chapter's is batch 16): a 4x4 stride-2
         * filter, pad 1, taking [2,128,14,14] to [2,64,28,28]: every phase has 2x2 taps */
        make(2, 64, 28, 28, 128, 4, 4, 2, 2, 1, 1, 1, 1, 1),
        /* channels padded per group: C/groups = 6 -> 8 and K/groups = 10 -> 16 (rounding all of K, 20 -> 24,
         * would leave 12 per group), at stride 2 and stride 1; and the same C and K in one group */
        make(2, 12, 9, 9, 20, 3, 3, 2, 2, 1, 1, 1, 1, 2),
        make(2, 12, 9, 9, 20, 3, 3, 1, 1, 1, 1, 1, 1, 2),
        make(2, 12, 9, 9, 20, 3, 3, 2, 2, 1, 1, 1, 1, 1),
        /* only K padded (K/groups = 12 in 2 groups); only C padded (C = 3), with dilation, strides 2x1 */
        make(1, 16, 10, 11, 24, 3, 3, 2, 2, 1, 1, 1, 1, 2),
        make(2, 3, 12, 10, 16, 3, 2, 2, 1, 2, 1, 2, 1, 1),
    };
    for (size_t i = 0; i < sizeof chosen / sizeof chosen[0]; i++) {
        passed += check_problem(&chosen[i], "chosen");
        const bool was_padded = check_padded(&chosen[i], "chosen");
        EXPECT(was_padded || i < 6, "chosen problem %zu: a padding case, not padded", i);
        padded += was_padded;
        total++;
    }
    {
        const conv_problem pp = pad_dgrad_problem(&chosen[6]);
        EXPECT(pp.c == 16 && pp.k == 32, "C 12, K 20 in 2 groups pads to C 16, K 32 (got %d, %d)", pp.c, pp.k);
    }
    {
        const dgrad_phase ph = dgrad_phase_of(&chosen[0], 1);
        EXPECT(ph.w.taps == 0 && dgrad_depth(&chosen[0], ph) == 0, "dilation 2, stride 2: phase (0,1) has no taps");
        const dgrad_phase t = dgrad_phase_of(&chosen[5], 3);
        EXPECT(t.h.taps == 2 && t.w.taps == 2, "4x4 stride 2: every phase has 2x2 taps (got %dx%d)", t.h.taps,
               t.w.taps);
    }

    /* 6. the tile shape: 128x128 by default, 256x64 for C/groups <= 64, 64x64 below one wave (132 SMs) */
    {
        const char *layers[] = {"resnet50/res3_3x3_s2", "resnet50/res2_3x3", "tutorial/ck_dgrad"};
        const int want[] = {0, 1, 0};
        for (int i = 0; i < 3; i++) {
            conv_problem prob;
            char why[2048];
            EXPECT(suite_find(layers[i], 0, &prob, why, sizeof why), "%s", why);
            EXPECT(dgrad_pick_shape(&prob, true, 132) == want[i], "%s: shape %d, expected %d", layers[i],
                   dgrad_pick_shape(&prob, true, 132), want[i]);
        }
        const conv_problem tiny = make(1, 256, 7, 7, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1);
        EXPECT(dgrad_pick_shape(&tiny, false, 132) == 2, "a 7x7 layer at batch 1 takes the 64x64 tile");
    }

    uint64_t state = 0x06d6ad;
    int strided = 0, single = 0;
    for (int i = 0; i < 100; i++) {
        conv_problem prob = check_random_problem(&state);
        if (i % 10 == 0) { /* N = 1 and stride > 1 some of the time, whatever the draw */
            prob.n = 1;
            char why[256];
            problem_validate(&prob, why, sizeof why);
        }
        strided += prob.stride_h > 1 || prob.stride_w > 1;
        single += prob.n == 1;
        passed += check_problem(&prob, "random");
        padded += check_padded(&prob, "random");
        total++;
    }
    printf("%d of %d problems: every phase's GEMM equals the reference, every dx element written once "
           "(%d random ones strided, %d with N = 1); %d with channels padded\n", passed, total, strided, single,
           padded);
    EXPECT(strided >= 30 && single >= 10, "the random problems cover strides and N = 1 (%d, %d)", strided, single);
    EXPECT(padded >= 30, "only %d problems had channels to pad", padded);
    return test_summary("test_ch06_dgrad");
}
