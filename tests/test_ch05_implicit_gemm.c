/* Chapter 05's index math (chapters/05_implicit_gemm_tc/implicit_gemm.h, common/kernel/tensor_core.h), on the
 * host, against the definition.
 *
 *  1. The tensor-core bookkeeping: the fragment layouts of tensor_core.h against the formulas of the PTX
 *     ISA text ("Matrix Fragments for mma.m16n8k16 with floating point type"), ldmatrix's lane
 *     addresses (modelled from "Warp-level matrix load instruction: ldmatrix") filling exactly those
 *     fragments, and the swizzle: a permutation of each row, bank-conflict-free for ldmatrix and for
 *     16-byte row stores, and moved by exactly 16 rows when the row moves by 16.
 *  2. For the fixed awkward shapes and 100 random ones: the three ways the kernels address A (direct
 *     division, row origin + tap offset, walked iterator + masks) agree with the definition element by
 *     element; the walk visits the same (r, s, c, offset) as division at every step, for steps of
 *     8..64 from every start; and A x B, built through igemm_a_offset()/igemm_b_offset() and stored
 *     through igemm_y_offset(), reproduces the fp64 reference, with and without channel padding.
 *
 * The kernels themselves, thread by thread, are what the PTX emulator runs (`conv check 05 --emulate`, the
 * gpu suite): a bug in a .cu file or in a header the kernels include shows there. This file checks the
 * header's arithmetic on its own, against the definition and the ISA's text, including what no kernel run
 * tries: walks from every start with every step from 8 to 64, and each fragment layout element by element.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "implicit_gemm.h"
#include "pad_channels.h"
#include "reference.h"
#include "tensor.h"
#include "tensor_core.h"
#include "test_util.h"

/* ---- the inputs ----------------------------------------------------------------------------------------- */

/* Inputs for one problem, in the kernels' layouts: NHWC x and KRSC w (fp32 on the host), the fp64
 * reference y (NKPQ) and the magnitude of its terms (the reference of |x| and |w|). */
typedef struct {
    conv_problem prob;
    float *x, *w;           /* NHWC, KRSC */
    double *ref, *magnitude; /* NCHW order, as ref_fprop_cpu writes it */
} fixture;

static fixture fixture_make(const conv_problem *prob, uint64_t seed)
{
    fixture f = {.prob = *prob};
    int dims[4];
    const size_t x_elems = (size_t)problem_x_elems(prob), w_elems = (size_t)problem_w_elems(prob);
    const size_t y_elems = (size_t)problem_y_elems(prob);
    float *x = xmalloc(sizeof(float) * x_elems), *w = xmalloc(sizeof(float) * w_elems);
    fill_uniform(x, x_elems, seed);
    fill_uniform(w, w_elems, seed + 1);
    f.ref = xmalloc(sizeof(double) * y_elems);
    f.magnitude = xmalloc(sizeof(double) * y_elems);
    ref_fprop_cpu(prob, x, w, f.ref);
    f.x = xmalloc(sizeof(float) * x_elems);
    f.w = xmalloc(sizeof(float) * w_elems);
    problem_x_dims(prob, dims);
    pack_tensor(x, dims, LAYOUT_NHWC, DTYPE_F32, f.x);
    problem_w_dims(prob, dims);
    pack_tensor(w, dims, LAYOUT_NHWC, DTYPE_F32, f.w);
    for (size_t i = 0; i < x_elems; i++)
        x[i] = fabsf(x[i]);
    for (size_t i = 0; i < w_elems; i++)
        w[i] = fabsf(w[i]);
    ref_fprop_cpu(prob, x, w, f.magnitude);
    free(w);
    free(x);
    return f;
}

static void fixture_free(fixture *f)
{
    free(f->x);
    free(f->w);
    free(f->ref);
    free(f->magnitude);
}

/* x and w with each group's channels zero-padded to round_up_to_8(), as 05d-05k's pad_channels
 * writes them, written here from the layouts' definitions. */
static void pad_operands(const conv_problem *prob, const float *x, const float *w, float **x_padded,
                         float **w_padded)
{
    const conv_problem padded = pad_fprop_problem(prob);
    const int cg = prob->c / prob->groups, cgp = padded.c / padded.groups;
    const size_t pixels = (size_t)prob->n * prob->h * prob->w, taps = (size_t)prob->k * prob->r * prob->s;
    *x_padded = calloc(pixels * padded.c, sizeof(float));
    *w_padded = calloc(taps * cgp, sizeof(float));
    for (size_t px = 0; px < pixels; px++)
        for (int g = 0; g < prob->groups; g++)
            for (int c = 0; c < cg; c++)
                (*x_padded)[px * padded.c + (size_t)g * cgp + c] = x[px * prob->c + (size_t)g * cg + c];
    for (size_t t = 0; t < taps; t++)
        for (int c = 0; c < cg; c++)
            (*w_padded)[t * cgp + c] = w[t * cg + c];
}

/* The shapes aimed at an implicit GEMM's edges: a reduction shorter than
 * one k tile, one that ends a chunk into a tile, C/groups below, at and above BK, more k tiles than
 * stages, K not a multiple of 8 and above 128 (two column tiles), rows that end mid-tile (N*P*Q = 162:
 * two row tiles of 128), several groups with few channels each, and conv1's C = 3 (padded to 8) with
 * its 7x7 stride-2 filter. */
#define EDGE_SHAPE(n_, c_, h_, w_, k_, r_, s_, pad_h_, pad_w_, stride_h_, stride_w_, dil_h_, dil_w_, groups_)    \
    {.n = n_, .c = c_, .h = h_, .w = w_, .k = k_, .r = r_, .s = s_, .pad_h = pad_h_, .pad_w = pad_w_,           \
     .stride_h = stride_h_, .stride_w = stride_w_, .dil_h = dil_h_, .dil_w = dil_w_, .groups = groups_}
static const conv_problem igemm_edge_shapes[] = {
    /*         n   c   h   w    k  r  s  pad   stride  dil   groups */
    EDGE_SHAPE(1,  8,  3,  3,   8, 1, 1, 0, 0, 1, 1, 1, 1, 1),
    EDGE_SHAPE(2, 40,  9,  9,  20, 1, 1, 0, 0, 1, 1, 1, 1, 1),
    EDGE_SHAPE(1, 64, 12, 12, 136, 3, 3, 1, 1, 1, 1, 1, 1, 1),
    EDGE_SHAPE(1, 16, 11, 13,  24, 3, 2, 2, 0, 2, 1, 1, 3, 2),
    EDGE_SHAPE(3, 24,  8,  8,   9, 5, 5, 2, 2, 1, 1, 1, 1, 3),
    EDGE_SHAPE(1,  3, 30, 30,  64, 7, 7, 3, 3, 2, 2, 1, 1, 1),
};
#define IGEMM_EDGE_SHAPES ((int)(sizeof igemm_edge_shapes / sizeof igemm_edge_shapes[0]))

/* ---- 1. fragments, ldmatrix, swizzle ----------------------------------------------------------------- */

/* The PTX ISA's formulas, written as the ISA writes them: per element a_i (i = 0..7), b_i (0..3),
 * c_i (0..3); element i lives in register i / 2, half i % 2. */
static int isa_a_row(int lane, int i)
{
    int group_id = lane >> 2;
    return (i < 2 || (i >= 4 && i < 6)) ? group_id : group_id + 8;
}

static int isa_a_col(int lane, int i)
{
    int tig = lane % 4;
    return i < 4 ? tig * 2 + (i & 1) : tig * 2 + (i & 1) + 8;
}

static int isa_b_row(int lane, int i) /* k */
{
    int tig = lane % 4;
    return i < 2 ? tig * 2 + (i & 1) : tig * 2 + (i & 1) + 8;
}

static int isa_b_col(int lane) /* n */
{
    return lane >> 2;
}

static int isa_c_row(int lane, int i)
{
    return i < 2 ? lane >> 2 : (lane >> 2) + 8;
}

static int isa_c_col(int lane, int i)
{
    return (lane % 4) * 2 + (i & 1);
}

/* ldmatrix .x4 on a .b16 shared array: lane L supplies the row address (in elements) of row L % 8 of
 * matrix L / 8 (addr[L]); register j of lane L receives elements 2*(L%4) and 2*(L%4)+1 of row L / 4 of
 * matrix j, that is, from the address lane 8*j + L/4 supplied. */
static void model_ldmatrix_x4(const double *smem, const int addr[32], double reg[32][4][2])
{
    for (int lane = 0; lane < 32; lane++)
        for (int j = 0; j < 4; j++)
            for (int h = 0; h < 2; h++)
                reg[lane][j][h] = smem[addr[8 * j + lane / 4] + 2 * (lane % 4) + h];
}

static void check_fragment_layouts(void)
{
    int bad = 0;
    for (int lane = 0; lane < 32; lane++) {
        for (int i = 0; i < 8; i++)
            bad += mma_a_row(lane, i / 2) != isa_a_row(lane, i) ||
                   mma_a_col(lane, i / 2) + i % 2 != isa_a_col(lane, i);
        for (int i = 0; i < 4; i++)
            bad += mma_b_k(lane, i / 2) + i % 2 != isa_b_row(lane, i) || mma_b_n(lane) != isa_b_col(lane);
        for (int i = 0; i < 4; i++)
            bad += mma_c_row(lane, i) != isa_c_row(lane, i) || mma_c_col(lane, i) != isa_c_col(lane, i);
    }
    EXPECT(bad == 0, "%d fragment coordinates differ from the PTX ISA formulas", bad);

    /* ldmatrix with the header's lane addresses, on a 16x16 tile stored row-major (rows of 2 chunks):
     * A's four registers, and two B operands' two registers each, come out as the fragments. */
    double tile[16 * 16];
    for (int i = 0; i < 256; i++)
        tile[i] = i;
    int addr[32];
    double reg[32][4][2];
    for (int lane = 0; lane < 32; lane++)
        addr[lane] = ldsm_a_row(lane) * 16 + ldsm_a_chunk(lane) * 8;
    model_ldmatrix_x4(tile, addr, reg);
    bad = 0;
    for (int lane = 0; lane < 32; lane++)
        for (int j = 0; j < 4; j++)
            for (int h = 0; h < 2; h++)
                bad += reg[lane][j][h] != tile[mma_a_row(lane, j) * 16 + mma_a_col(lane, j) + h];
    EXPECT(bad == 0, "ldmatrix with ldsm_a_*() addresses: %d A fragment values misplaced", bad);

    /* B stored n-major: tile[n * 16 + k] is B[k][n], n 0..15 (two n8 operands). */
    for (int lane = 0; lane < 32; lane++)
        addr[lane] = ldsm_b_row(lane) * 16 + ldsm_b_chunk(lane) * 8;
    model_ldmatrix_x4(tile, addr, reg);
    bad = 0;
    for (int lane = 0; lane < 32; lane++)
        for (int op = 0; op < 2; op++)
            for (int j = 0; j < 2; j++)
                for (int h = 0; h < 2; h++) {
                    int n = 8 * op + mma_b_n(lane), k = mma_b_k(lane, j) + h;
                    bad += reg[lane][2 * op + j][h] != tile[n * 16 + k];
                }
    EXPECT(bad == 0, "ldmatrix with ldsm_b_*() addresses: %d B fragment values misplaced", bad);
}

static void check_swizzle(void)
{
    const int widths[] = {1, 2, 4, 8, 16};
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
        const int cpr = widths[wi];
        int not_permutation = 0, ldsm_conflicts = 0, store_conflicts = 0, not_separable = 0;
        for (int row = 0; row < 128; row++) {
            int seen[16] = {0};
            for (int c = 0; c < cpr; c++) {
                int at = swizzle_chunk(row, c, cpr) - row * cpr;
                if (at < 0 || at >= cpr || seen[at]++)
                    not_permutation++;
                for (int i = 1; i < 8; i++)
                    not_separable += swizzle_chunk(row + 16 * i, c, cpr) != swizzle_chunk(row, c, cpr) + 16 * i * cpr;
            }
        }
        /* ldmatrix: 8 lanes, the same chunk of 8 consecutive rows from a multiple of 8. A 128-byte line
         * has 8 chunk slots; the 8 reads must take 8 different slots. */
        for (int row0 = 0; row0 < 128; row0 += 8)
            for (int c = 0; c < cpr; c++) {
                int slots = 0;
                for (int i = 0; i < 8; i++)
                    slots |= 1 << (swizzle_chunk(row0 + i, c, cpr) % 8);
                ldsm_conflicts += slots != 0xff;
            }
        /* 16-byte stores: 8 consecutive threads of igemm_load_row/chunk's assignment. */
        for (int t0 = 0; t0 < 256; t0 += 8) {
            int slots = 0;
            for (int t = t0; t < t0 + 8; t++)
                slots |= 1 << (swizzle_chunk(igemm_load_row(t, 0, 256, cpr), igemm_load_chunk(t, cpr), cpr) % 8);
            store_conflicts += slots != 0xff;
        }
        EXPECT(not_permutation == 0 && not_separable == 0, "swizzle, %d chunks per row: %d not a permutation, "
               "%d not moved by 16 rows", cpr, not_permutation, not_separable);
        EXPECT(ldsm_conflicts == 0 && store_conflicts == 0, "swizzle, %d chunks per row: %d ldmatrix phases and "
               "%d store phases with bank conflicts", cpr, ldsm_conflicts, store_conflicts);
    }

    /* 05b's way to the same end, padding: rows of BK + 8 halves (5 chunks at BK = 32) put the same chunk
     * of 8 consecutive rows into 8 different slots, and rows of BK halves, neither padded nor swizzled,
     * are what padding and swizzle both avoid (2 slots: a 4-way conflict). */
    for (int pitch_chunks = 4; pitch_chunks <= 5; pitch_chunks++) {
        int conflicts = 0;
        for (int row0 = 0; row0 < 128; row0 += 8)
            for (int c = 0; c < 4; c++) {
                int slots = 0;
                for (int i = 0; i < 8; i++)
                    slots |= 1 << (((row0 + i) * pitch_chunks + c) % 8);
                conflicts += slots != 0xff;
            }
        if (pitch_chunks == 5)
            EXPECT(conflicts == 0, "rows padded to 40 halves: %d ldmatrix phases with bank conflicts", conflicts);
        else
            EXPECT(conflicts == 64, "rows of 32 halves, unswizzled: %d of 64 ldmatrix phases conflict", conflicts);
    }

    /* The epilogue's fp16-pair stores: the 32 lanes of one store hit 32 different banks. */
    const int bns[] = {64, 128, 256};
    for (size_t i = 0; i < sizeof bns / sizeof bns[0]; i++) {
        for (int e = 0; e < 4; e += 2) {
            unsigned banks = 0;
            for (int lane = 0; lane < 32; lane++)
                banks |= 1u << ((mma_c_row(lane, e) * igemm_out_pitch(bns[i]) + mma_c_col(lane, e)) / 2 % 32);
            EXPECT(banks == 0xffffffffu, "epilogue staging at BN %d: fp16-pair stores conflict (banks %08x)", bns[i],
                   banks);
        }
        EXPECT(igemm_out_pitch(bns[i]) % 8 == 0, "output pitch %d keeps rows 16-byte aligned", igemm_out_pitch(bns[i]));
    }
}

/* ---- 2. the three address paths and A x B ------------------------------------------------------------ */

/* The definition, written out: the NHWC offset of A_g[m][kappa], or -1 in the padding. */
static int definition_offset(const conv_problem *prob, int g, int m, int kappa)
{
    const int cg = prob->c / prob->groups;
    const int n = m / (prob->p * prob->q), p = m / prob->q % prob->p, q = m % prob->q;
    const int r = kappa / (prob->s * cg), s = kappa / cg % prob->s, c = kappa % cg;
    const int h = p * prob->stride_h - prob->pad_h + r * prob->dil_h;
    const int w = q * prob->stride_w - prob->pad_w + s * prob->dil_w;
    if (h < 0 || h >= prob->h || w < 0 || w >= prob->w)
        return -1;
    return ((n * prob->h + h) * prob->w + w) * prob->c + g * cg + c;
}

static void check_addressing(const conv_problem *prob, const char *text)
{
    const int rows = igemm_rows(prob), depth = igemm_depth(prob), cg = prob->c / prob->groups;
    int bad_pixels = 0, bad_taps = 0;
    for (int m = 0; m < rows; m++) {
        output_pixel px = output_pixel_of(prob, m);
        bad_pixels += px.n < 0 || px.n >= prob->n || px.p < 0 || px.p >= prob->p || px.q < 0 || px.q >= prob->q ||
                      (px.n * prob->p + px.p) * prob->q + px.q != m;
    }
    for (int kappa = 0; kappa < depth; kappa++) {
        igemm_tap t = igemm_tap_of(prob, kappa);
        bad_taps += t.r < 0 || t.r >= prob->r || t.s < 0 || t.s >= prob->s || t.c < 0 || t.c >= cg ||
                    (t.r * prob->s + t.s) * cg + t.c != kappa;
    }
    EXPECT(bad_pixels == 0 && bad_taps == 0, "%s: %d rows and %d kappa decode wrongly", text, bad_pixels, bad_taps);

    /* Element by element: direct, split and masked agree with the definition. */
    const bool masks = prob->r <= 32 && prob->s <= 32;
    size_t bad_direct = 0, bad_split = 0, bad_masks = 0;
    for (int g = 0; g < prob->groups; g++)
        for (int m = 0; m < rows; m++) {
            const igemm_origin o = igemm_row_origin(prob, g, m);
            const uint32_t h_mask = masks ? igemm_tap_mask(o.h, prob->r, prob->dil_h, prob->h) : 0;
            const uint32_t w_mask = masks ? igemm_tap_mask(o.w, prob->s, prob->dil_w, prob->w) : 0;
            for (int kappa = 0; kappa < depth; kappa++) {
                const int expected = definition_offset(prob, g, m, kappa);
                bad_direct += igemm_a_offset(prob, g, m, kappa) != expected;
                const igemm_tap t = igemm_tap_of(prob, kappa);
                const bool inside = igemm_tap_inside(prob, o, t.r, t.s);
                bad_split += inside != (expected >= 0) ||
                             (inside && o.offset + igemm_tap_offset(prob, t.r, t.s, t.c) != expected);
                if (masks)
                    bad_masks += (bool)((h_mask >> t.r) & (w_mask >> t.s) & 1u) != inside;
            }
        }
    EXPECT(bad_direct == 0 && bad_split == 0 && bad_masks == 0,
           "%s: %zu direct, %zu split and %zu masked A addresses differ from the definition", text, bad_direct,
           bad_split, bad_masks);

    /* The walk: from every start, for steps of 8 to 64 (05g-05k walk by BK = 32 from starts 0, 8, 16, 24),
     * each step equals igemm_iter_at() of the same kappa, also past the end of the reduction, where
     * the last k tile leaves it. */
    int bad_walks = 0;
    for (int step = 8; step <= 64; step *= 2) {
        const igemm_walk walk = igemm_walk_make(prob, step);
        for (int start = 0; start < step; start++) {
            igemm_iter it = igemm_iter_at(prob, start);
            for (int kappa = start; kappa < depth + 2 * step; kappa += step) {
                const igemm_iter want = igemm_iter_at(prob, kappa);
                bad_walks += it.kappa != want.kappa || it.r != want.r || it.s != want.s || it.c != want.c ||
                             it.offset != want.offset;
                it = igemm_iter_next(it, walk);
            }
        }
    }
    EXPECT(bad_walks == 0, "%s: the incremental walk left division's (r, s, c, offset) %d times", text, bad_walks);
    EXPECT(igemm_offsets_fit(prob), "%s: a small problem's offsets must fit in 32 bits", text);
}

/* y in NHWC against the reference: returns the number of outputs that differ (NaN, never written,
 * included) beyond fp64 summation-order noise. */
static size_t count_wrong(const fixture *f, const double *y)
{
    const conv_problem *prob = &f->prob;
    size_t wrong = 0;
    for (int g = 0; g < prob->groups; g++)
        for (int m = 0; m < igemm_rows(prob); m++)
            for (int j = 0; j < igemm_cols(prob); j++) {
                const output_pixel px = output_pixel_of(prob, m);
                const int k = g * igemm_cols(prob) + j;
                const size_t at = (((size_t)px.n * prob->k + k) * prob->p + px.p) * prob->q + px.q;
                const double got = y[igemm_y_offset(prob, g, m, j)];
                wrong += !(fabs(got - f->ref[at]) <= 1e-12 * (1.0 + f->magnitude[at]));
            }
    return wrong;
}

/* Y_g = A_g x B_g through the header's offsets, on x and w in `run`'s layout (padded or not). */
static void check_product(const fixture *f, const conv_problem *run, const float *x, const float *w,
                          const char *text, const char *what)
{
    const conv_problem *prob = &f->prob;
    const size_t y_elems = (size_t)problem_y_elems(prob);
    double *y = xmalloc(sizeof(double) * y_elems);
    int *writes = calloc(y_elems, sizeof(int));
    for (size_t i = 0; i < y_elems; i++)
        y[i] = NAN;
    const int rows = igemm_rows(run), cols = igemm_cols(run), depth = igemm_depth(run);
    double *a_row = xmalloc(sizeof(double) * (size_t)depth);
    size_t bad_y = 0;
    for (int g = 0; g < run->groups; g++)
        for (int m = 0; m < rows; m++) {
            for (int kappa = 0; kappa < depth; kappa++) {
                const int from = igemm_a_offset(run, g, m, kappa);
                a_row[kappa] = from >= 0 ? x[from] : 0.0;
            }
            for (int j = 0; j < cols; j++) {
                double sum = 0.0;
                for (int kappa = 0; kappa < depth; kappa++)
                    sum += a_row[kappa] * w[igemm_b_offset(run, g, j, kappa)];
                const int at = igemm_y_offset(run, g, m, j);
                bad_y += at < 0 || (size_t)at >= y_elems || at != igemm_y_offset(prob, g, m, j);
                if (at >= 0 && (size_t)at < y_elems) {
                    y[at] = sum;
                    writes[at]++;
                }
            }
        }
    size_t not_once = 0;
    for (size_t i = 0; i < y_elems; i++)
        not_once += writes[i] != 1;
    EXPECT(bad_y == 0 && not_once == 0, "%s (%s): %zu outputs mapped outside y, %zu not written exactly once",
           text, what, bad_y, not_once);
    const size_t wrong = count_wrong(f, y);
    EXPECT(wrong == 0, "%s (%s): A x B differs from the reference at %zu of %zu outputs", text, what, wrong, y_elems);
    free(a_row);
    free(writes);
    free(y);
}

static void check_problem(const conv_problem *prob, uint64_t seed)
{
    char text[128];
    problem_format(prob, text, sizeof text);
    check_addressing(prob, text);

    fixture f = fixture_make(prob, seed);
    check_product(&f, prob, f.x, f.w, text, "as is");

    /* 05d-05k's path: the padded problem, on padded copies. */
    const conv_problem run = pad_fprop_problem(prob);
    EXPECT(run.p == prob->p && run.q == prob->q && (run.c / run.groups) % 8 == 0 &&
               run.c / run.groups - prob->c / prob->groups < 8,
           "%s: padded to c %d", text, run.c);
    if (run.c != prob->c) {
        float *x_padded, *w_padded;
        pad_operands(prob, f.x, f.w, &x_padded, &w_padded);
        check_addressing(&run, text);
        check_product(&f, &run, x_padded, w_padded, text, "channels padded");
        free(w_padded);
        free(x_padded);
    }
    fixture_free(&f);
}

/* The edge shapes. */
static void check_edge_shapes(void)
{
    for (int i = 0; i < IGEMM_EDGE_SHAPES; i++) {
        conv_problem prob = igemm_edge_shapes[i];
        char why[256];
        EXPECT(problem_validate(&prob, why, sizeof why), "edge shape %d: %s", i, why);
        check_problem(&prob, 7000 + 2 * (uint64_t)i);
    }
}

/* igemm_offsets_fit() refuses what would overflow and accepts the suite's largest layers. */
static void check_offset_limits(void)
{
    char why[256];
    conv_problem big = problem_make(8, 128, 224, 224, 128, 3, 3); /* big_3x3 */
    big.pad_h = big.pad_w = 1;
    EXPECT(problem_validate(&big, why, sizeof why) && igemm_offsets_fit(&big), "big_3x3 must fit: %s", why);
    conv_problem conv1 = problem_make(32, 3, 224, 224, 64, 7, 7);
    conv1.pad_h = conv1.pad_w = 3;
    conv1.stride_h = conv1.stride_w = 2;
    EXPECT(problem_validate(&conv1, why, sizeof why), "conv1: %s", why);
    conv_problem conv1_padded = pad_fprop_problem(&conv1);
    EXPECT(conv1_padded.c == 8 && igemm_offsets_fit(&conv1_padded), "conv1 padded to c %d must fit", conv1_padded.c);
    conv_problem huge_pad = problem_make(1, 64, 8, 8, 8, 3, 3);
    huge_pad.pad_h = huge_pad.pad_w = 1 << 22; /* (pad*W + pad)*C is about 2^50 */
    EXPECT(!igemm_offsets_fit(&huge_pad), "a padding of 2^22 overflows the row origins");
}

int main(void)
{
    check_fragment_layouts();
    check_swizzle();
    check_offset_limits();
    check_edge_shapes();
    for (int i = 0; i < check_fixed_count(); i++) {
        conv_problem prob = check_fixed_problem(i);
        check_problem(&prob, 100 + 2 * (uint64_t)i);
    }
    /* 100 random shapes. */
    uint64_t state = 5;
    for (int i = 0; i < 100; i++) {
        conv_problem prob = check_random_problem(&state);
        check_problem(&prob, 1000 + 2 * (uint64_t)i);
    }
    return test_summary("test_ch05_implicit_gemm");
}
