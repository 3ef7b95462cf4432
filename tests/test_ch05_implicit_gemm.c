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
 *  3. An emulation of the 16-byte steps (05d-05k) on the host, thread by thread and lane by lane, built
 *     from the same header functions the kernels call: every staged chunk is written once per k tile
 *     with the value the definition says, every output is written once, and the result equals the
 *     reference. ldmatrix and mma.sync are modelled from the PTX ISA text, independently of
 *     tensor_core.h. (What it cannot show: the timing of the cp.async pipeline. That is argued in the
 *     kernel's comments and checked by the gpu suite.)
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "igemm_fixture.h"
#include "implicit_gemm.h"
#include "pad_channels.h"
#include "reference.h"
#include "tensor.h"
#include "tensor_core.h"
#include "test_util.h"

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

/* mma.m16n8k16: d += A x B with A, B assembled from the registers as the ISA lays them out. Also
 * reports whether every element of A and B was supplied exactly once. */
static bool model_mma(double d[32][4], double a[32][4][2], double b[32][2][2])
{
    double am[16][16], bm[16][8];
    int a_seen[16][16] = {{0}}, b_seen[16][8] = {{0}};
    for (int lane = 0; lane < 32; lane++) {
        for (int i = 0; i < 8; i++) {
            int row = isa_a_row(lane, i), col = isa_a_col(lane, i);
            am[row][col] = a[lane][i / 2][i % 2];
            a_seen[row][col]++;
        }
        for (int i = 0; i < 4; i++) {
            int k = isa_b_row(lane, i), n = isa_b_col(lane);
            bm[k][n] = b[lane][i / 2][i % 2];
            b_seen[k][n]++;
        }
    }
    bool once = true;
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 16; c++)
            once &= a_seen[r][c] == 1 && (c >= 8 || b_seen[r][c] == 1);
    for (int lane = 0; lane < 32; lane++)
        for (int i = 0; i < 4; i++) {
            int row = isa_c_row(lane, i), col = isa_c_col(lane, i);
            double sum = 0.0;
            for (int k = 0; k < 16; k++)
                sum += am[row][k] * bm[k][col];
            d[lane][i] += sum;
        }
    return once;
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

/* ---- 3. the kernels, emulated ----------------------------------------------------------------------- */

typedef struct {
    int bm, bn, bk, warps_m, warps_n, stages;
} tile_shape;

typedef struct {
    const char *id;
    tile_shape shape;
    bool walked; /* 05g-05k: iterator + masks; 05d-05f: division once per k tile + bounds test */
    bool staged; /* 05h-05k: the epilogue through the output tile; 05d-05g: straight from the fragments */
} variant;

/* The steps that copy 16-byte chunks. 05f is left out: its copies and epilogue are 05e's, on 05e's
 * tile, and what it adds, the pipeline's timing, is what this emulation cannot show. 05i is left out
 * too: its copies and staged stores are 05h's, on 05h's tile, and what it adds, the fused operations, is
 * checked on the emulated PTX by conv check --epilogue. */
static const variant variants[] = {
    {"05d", {IGEMM_SHAPE_05D}, false, false},
    {"05e", {IGEMM_SHAPE_05E}, false, false},
    {"05g", {IGEMM_SHAPE_05G}, true, false},
    {"05h", {IGEMM_SHAPE_05H}, true, true},
    {"05j", {IGEMM_SHAPE_05J}, true, true},
    {"05k", {IGEMM_SHAPE_05K}, true, true},
};

/* What the emulation counts; all must stay 0. */
typedef struct {
    size_t wrong_source;  /* a chunk copied from somewhere else than the definition's offset, or not zeroed */
    size_t walk_drift;    /* the walked position differs from division */
    size_t smem_coverage; /* a staged chunk written twice, or never, in one k tile */
    size_t fragments;     /* an mma operand element supplied other than once */
    size_t out_coverage;  /* an output tile element read before it was written */
} emulation_counts;

/* The .cu's tile_shape<>, derived the same way. */
typedef struct {
    int threads, cpr, wm, wn, mma_m, mma_n, a_loads, b_loads;
} derived_shape;

static derived_shape derive(tile_shape s)
{
    derived_shape d;
    d.threads = 32 * s.warps_m * s.warps_n;
    d.cpr = s.bk / 8;
    d.wm = s.bm / s.warps_m;
    d.wn = s.bn / s.warps_n;
    d.mma_m = d.wm / 16;
    d.mma_n = d.wn / 8;
    d.a_loads = s.bm * d.cpr / d.threads;
    d.b_loads = s.bn * d.cpr / d.threads;
    return d;
}

/* One block of one group, as the kernel runs it, into y (NHWC). */
static void emulate_block(const conv_problem *prob, const variant *v, int g, int block, const float *x,
                          const float *w, double *y, int *writes, emulation_counts *counts)
{
    const tile_shape s = v->shape;
    const derived_shape d = derive(s);
    const int rows = igemm_rows(prob), cols = igemm_cols(prob), depth = igemm_depth(prob);
    const gemm_block blk = gemm_block_of(block, cols, s.bm, s.bn);
    const igemm_walk walk = igemm_walk_make(prob, s.bk);

    /* Per-thread state, set up before the loop (05g: the walk's starting points). */
    igemm_iter *at = xmalloc(sizeof(igemm_iter) * d.threads);
    for (int t = 0; t < d.threads; t++)
        at[t] = igemm_iter_at(prob, igemm_load_chunk(t, d.cpr) * 8);

    double *a_s = xmalloc(sizeof(double) * s.bm * s.bk), *b_s = xmalloc(sizeof(double) * s.bn * s.bk);
    int *a_written = xmalloc(sizeof(int) * s.bm * d.cpr), *b_written = xmalloc(sizeof(int) * s.bn * d.cpr);
    const int warps = s.warps_m * s.warps_n;
    const size_t acc_count = (size_t)warps * d.mma_m * d.mma_n * 32 * 4;
    double *acc = calloc(acc_count, sizeof(double));
#define ACC(warp, i, j) (acc + ((((size_t)(warp) * d.mma_m + (i)) * d.mma_n + (j)) * 32 * 4))

    const int k_tiles = tiles_covering(depth, s.bk);
    for (int kt = 0; kt < k_tiles; kt++) {
        memset(a_written, 0, sizeof(int) * s.bm * d.cpr);
        memset(b_written, 0, sizeof(int) * s.bn * d.cpr);
        for (int t = 0; t < d.threads; t++) {
            const int chunk = igemm_load_chunk(t, d.cpr);
            const int kappa = kt * s.bk + chunk * 8;
            const bool k_ok = kappa < depth;
            const igemm_tap tap = igemm_tap_of(prob, kappa);
            if (v->walked) {
                const igemm_iter want = igemm_iter_at(prob, kappa);
                counts->walk_drift += at[t].kappa != kappa || at[t].r != want.r || at[t].s != want.s ||
                                      at[t].c != want.c || at[t].offset != want.offset;
            }
            for (int i = 0; i < d.a_loads; i++) {
                const int row = igemm_load_row(t, i, d.threads, d.cpr), m = blk.row0 + row;
                bool ok;
                int src;
                if (v->walked) { /* 05g's row masks and copy_next() */
                    uint32_t h_mask = 0, w_mask = 0;
                    int offset = 0;
                    if (m < rows) {
                        const igemm_origin o = igemm_row_origin(prob, g, m);
                        offset = o.offset;
                        h_mask = igemm_tap_mask(o.h, prob->r, prob->dil_h, prob->h);
                        w_mask = igemm_tap_mask(o.w, prob->s, prob->dil_w, prob->w);
                    }
                    const igemm_iter it = at[t];
                    ok = it.kappa < depth && ((h_mask >> it.r) & (w_mask >> it.s) & 1u);
                    src = ok ? offset + it.offset : 0;
                } else { /* 05d-05f */
                    const bool row_ok = m < rows;
                    const igemm_origin o = igemm_row_origin(prob, g, row_ok ? m : 0);
                    ok = k_ok && row_ok && igemm_tap_inside(prob, o, tap.r, tap.s);
                    src = o.offset + igemm_tap_offset(prob, tap.r, tap.s, tap.c);
                }
                const int expected = m < rows && k_ok ? definition_offset(prob, g, m, kappa) : -1;
                counts->wrong_source += ok != (expected >= 0) || (ok && src != expected);
                const int dst = swizzle_chunk(row, chunk, d.cpr);
                a_written[dst]++;
                for (int e = 0; e < 8; e++)
                    a_s[dst * 8 + e] = ok ? x[src + e] : 0.0;
            }
            for (int i = 0; i < d.b_loads; i++) {
                const int row = igemm_load_row(t, i, d.threads, d.cpr), j = blk.col0 + row;
                const bool ok = k_ok && j < cols;
                const int src = igemm_b_offset(prob, g, ok ? j : 0, 0) + kappa;
                counts->wrong_source += ok && src != igemm_b_offset(prob, g, j, kappa);
                const int dst = swizzle_chunk(row, chunk, d.cpr);
                b_written[dst]++;
                for (int e = 0; e < 8; e++)
                    b_s[dst * 8 + e] = ok ? w[src + e] : 0.0;
            }
            if (v->walked)
                at[t] = igemm_iter_next(at[t], walk);
        }
        for (int i = 0; i < s.bm * d.cpr; i++)
            counts->smem_coverage += a_written[i] != 1;
        for (int i = 0; i < s.bn * d.cpr; i++)
            counts->smem_coverage += b_written[i] != 1;

        /* The warps: warp_tile_mma(), lane by lane. */
        for (int warp = 0; warp < warps; warp++) {
            const int warp_m = warp % s.warps_m, warp_n = warp / s.warps_m;
            for (int ks = 0; ks < s.bk / 16; ks++) {
                int a_lane[32], b_lane[32];
                for (int lane = 0; lane < 32; lane++) {
                    a_lane[lane] = 8 * swizzle_chunk(warp_m * d.wm + ldsm_a_row(lane), 2 * ks + ldsm_a_chunk(lane), d.cpr);
                    b_lane[lane] = 8 * swizzle_chunk(warp_n * d.wn + ldsm_b_row(lane), 2 * ks + ldsm_b_chunk(lane), d.cpr);
                }
                double(*a_reg)[32][4][2] = xmalloc(sizeof(double) * d.mma_m * 32 * 4 * 2);
                double(*b_reg)[32][2][2] = xmalloc(sizeof(double) * d.mma_n * 32 * 2 * 2);
                for (int i = 0; i < d.mma_m; i++) {
                    int addr[32];
                    for (int lane = 0; lane < 32; lane++)
                        addr[lane] = a_lane[lane] + i * 16 * s.bk;
                    model_ldmatrix_x4(a_s, addr, a_reg[i]);
                }
                for (int jj = 0; jj < d.mma_n / 2; jj++) {
                    int addr[32];
                    double reg[32][4][2];
                    for (int lane = 0; lane < 32; lane++)
                        addr[lane] = b_lane[lane] + jj * 16 * s.bk;
                    model_ldmatrix_x4(b_s, addr, reg);
                    for (int lane = 0; lane < 32; lane++)
                        for (int h = 0; h < 2; h++) {
                            b_reg[2 * jj][lane][0][h] = reg[lane][0][h];
                            b_reg[2 * jj][lane][1][h] = reg[lane][1][h];
                            b_reg[2 * jj + 1][lane][0][h] = reg[lane][2][h];
                            b_reg[2 * jj + 1][lane][1][h] = reg[lane][3][h];
                        }
                }
                for (int i = 0; i < d.mma_m; i++)
                    for (int j = 0; j < d.mma_n; j++)
                        counts->fragments += !model_mma((double(*)[4])ACC(warp, i, j), a_reg[i], b_reg[j]);
                free(b_reg);
                free(a_reg);
            }
        }
    }

    /* The epilogue. 05d-05g: straight from the fragments. 05h-05k: through the padded output tile. */
    const int pitch = igemm_out_pitch(s.bn);
    double *out = xmalloc(sizeof(double) * s.bm * pitch);
    for (int i = 0; i < s.bm * pitch; i++)
        out[i] = NAN;
    for (int warp = 0; warp < warps; warp++) {
        const int warp_m = warp % s.warps_m, warp_n = warp / s.warps_m;
        for (int i = 0; i < d.mma_m; i++)
            for (int j = 0; j < d.mma_n; j++)
                for (int lane = 0; lane < 32; lane++)
                    for (int e = 0; e < 4; e++) {
                        const double value = ACC(warp, i, j)[lane * 4 + e];
                        const int row = warp_m * d.wm + i * 16 + mma_c_row(lane, e);
                        const int col = warp_n * d.wn + j * 8 + mma_c_col(lane, e);
                        if (v->staged) {
                            out[row * pitch + col] = value;
                        } else if (blk.row0 + row < rows && blk.col0 + col < cols) {
                            const int at = igemm_y_offset(prob, g, blk.row0 + row, blk.col0 + col);
                            y[at] = value;
                            writes[at]++;
                        }
                    }
    }
    if (v->staged)
        for (int index = 0; index < s.bm * s.bn / 8; index++) {
            const int row = index / (s.bn / 8), col = index % (s.bn / 8) * 8;
            const int m = blk.row0 + row, j = blk.col0 + col;
            if (m >= rows || j >= cols)
                continue;
            for (int e = 0; e < 8 && j + e < cols; e++) {
                const double value = out[row * pitch + col + e];
                counts->out_coverage += isnan(value);
                const int at = igemm_y_offset(prob, g, m, j + e);
                y[at] = value;
                writes[at]++;
            }
        }
#undef ACC
    free(out);
    free(acc);
    free(b_written);
    free(a_written);
    free(b_s);
    free(a_s);
    free(at);
}

static int emulated_runs = 0;

static void check_emulation(const fixture *f, const variant *v, const conv_problem *run, const float *x,
                            const float *w, const char *text)
{
    const size_t y_elems = (size_t)problem_y_elems(&f->prob);
    double *y = xmalloc(sizeof(double) * y_elems);
    int *writes = calloc(y_elems, sizeof(int));
    for (size_t i = 0; i < y_elems; i++)
        y[i] = NAN;
    emulation_counts counts = {0, 0, 0, 0, 0};
    emulated_runs++;
    const int blocks = tiles_covering(igemm_rows(run), v->shape.bm) * tiles_covering(igemm_cols(run), v->shape.bn);
    for (int g = 0; g < run->groups; g++)
        for (int b = 0; b < blocks; b++)
            emulate_block(run, v, g, b, x, w, y, writes, &counts);
    size_t not_once = 0;
    for (size_t i = 0; i < y_elems; i++)
        not_once += writes[i] != 1;
    EXPECT(counts.wrong_source == 0 && counts.walk_drift == 0, "%s %s: %zu chunks from the wrong place, walk "
           "drifted %zu times", v->id, text, counts.wrong_source, counts.walk_drift);
    EXPECT(counts.smem_coverage == 0 && counts.fragments == 0 && counts.out_coverage == 0,
           "%s %s: %zu staged chunks not written once, %zu mma operands incomplete, %zu output reads unwritten",
           v->id, text, counts.smem_coverage, counts.fragments, counts.out_coverage);
    EXPECT(not_once == 0, "%s %s: %zu of %zu outputs not written exactly once", v->id, text, not_once, y_elems);
    const size_t wrong = count_wrong(f, y);
    EXPECT(wrong == 0, "%s %s: emulated kernel differs from the reference at %zu of %zu outputs", v->id, text, wrong,
           y_elems);
    free(writes);
    free(y);
}

/* Multiply-adds the emulation of variant v spends on a problem, zeros and all. */
static double emulation_cost(const conv_problem *run, const variant *v)
{
    return (double)run->groups * tiles_covering(igemm_rows(run), v->shape.bm) * v->shape.bm *
           tiles_covering(igemm_cols(run), v->shape.bn) * v->shape.bn * tiles_covering(igemm_depth(run), v->shape.bk) *
           v->shape.bk;
}

static void check_problem(const conv_problem *prob, uint64_t seed, double emulation_budget)
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
    float *x_padded, *w_padded;
    pad_operands(prob, f.x, f.w, &x_padded, &w_padded);
    if (run.c != prob->c) {
        check_addressing(&run, text);
        check_product(&f, &run, x_padded, w_padded, text, "channels padded");
    }
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
        if (emulation_cost(&run, &variants[i]) <= emulation_budget)
            check_emulation(&f, &variants[i], &run, x_padded, w_padded, text);
    free(w_padded);
    free(x_padded);
    fixture_free(&f);
}

/* igemm_fixture.h's edge shapes. */
static void check_edge_shapes(void)
{
    for (int i = 0; i < IGEMM_EDGE_SHAPES; i++) {
        conv_problem prob = igemm_edge_shapes[i];
        char why[256];
        EXPECT(problem_validate(&prob, why, sizeof why), "edge shape %d: %s", i, why);
        check_problem(&prob, 7000 + 2 * (uint64_t)i, 1e12);
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
        check_problem(&prob, 100 + 2 * (uint64_t)i, 1e12);
    }
    /* The random shapes: every check but the emulation on all 100; the emulation where it is cheap. */
    uint64_t state = 5;
    for (int i = 0; i < 100; i++) {
        conv_problem prob = check_random_problem(&state);
        check_problem(&prob, 1000 + 2 * (uint64_t)i, 1e9);
    }
    printf("emulated %d kernel runs (05d-05k on the shapes within budget)\n", emulated_runs);
    return test_summary("test_ch05_implicit_gemm");
}
