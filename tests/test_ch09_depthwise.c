/* Chapter 09's index math (chapters/09_depthwise/depthwise.h), on the host, against the definition:
 *   - every tap's input coordinate and every tile's halo are what the definition says;
 *   - 09a's threads and 09b's blocks and threads cover every output exactly once;
 *   - 09b's staging copies every halo pixel once, from the right place or as padding, and every tap of
 *     every output it stores reads a staged pixel that holds the input the definition names;
 *   - the rolling window meets each (output row, filter row) pair exactly once;
 * on depthwise shapes: odd sizes, stride 2 and 3, dilation, padding larger than the filter, N = 1, C not a
 * multiple of the block's 32-channel run, and seeded random ones.
 *
 * The kernels themselves, thread by thread, are what the PTX emulator runs (`conv check 09 --emulate`, the
 * gpu suite, on the harness's shapes: one for each kernel 09b dispatches to, and random depthwise ones):
 * a bug in a .cu file or in a header the kernels include shows there. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "depthwise.h"
#include "harness.h"
#include "test_util.h"

static conv_problem depthwise(int n, int c, int h, int w, int r, int s, int stride_h, int stride_w, int pad_h,
                              int pad_w, int dil_h, int dil_w)
{
    conv_problem prob = problem_make(n, c, h, w, c, r, s);
    prob.groups = c;
    prob.stride_h = stride_h, prob.stride_w = stride_w;
    prob.pad_h = pad_h, prob.pad_w = pad_w;
    prob.dil_h = dil_h, prob.dil_w = dil_w;
    char why[256];
    if (!problem_validate(&prob, why, sizeof why)) {
        printf("bad test problem: %s\n", why);
        exit(1);
    }
    return prob;
}

static const char *describe(const conv_problem *prob)
{
    static char text[128];
    problem_format(prob, text, sizeof text);
    return text;
}

static int draw(uint64_t *state, int low, int high) /* uniform in [low, high] */
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return low + (int)((*state >> 33) % (uint64_t)(high - low + 1));
}

/* ---- coordinates ---------------------------------------------------------------------------------- */

static void check_coords(void)
{
    /* tap_input_coord, halo_extent and tiles_covering (common/kernel/tiles.h) are checked in test_ch03_tiling.c. */
    /* Offsets against the layouts' definitions: NHWC x and y, [C][R][S] w. */
    conv_problem prob = depthwise(3, 24, 7, 9, 3, 5, 2, 1, 1, 2, 1, 1);
    int bad = 0, expect = 0;
    for (int n = 0; n < prob.n; n++)
        for (int h = 0; h < prob.h; h++)
            for (int w = 0; w < prob.w; w++)
                for (int c = 0; c < prob.c; c++)
                    bad += dw_x_offset(&prob, n, h, w, c) != expect++;
    expect = 0;
    for (int n = 0; n < prob.n; n++)
        for (int p = 0; p < prob.p; p++)
            for (int q = 0; q < prob.q; q++)
                for (int c = 0; c < prob.c; c++)
                    bad += dw_y_offset(&prob, n, p, q, c) != expect++;
    expect = 0;
    for (int c = 0; c < prob.c; c++)
        for (int r = 0; r < prob.r; r++)
            for (int s = 0; s < prob.s; s++)
                bad += dw_w_offset(&prob, c, r, s) != expect++;
    EXPECT(bad == 0, "%d offsets differ from the NHWC / [C][R][S] order", bad);
    EXPECT(dw_is_depthwise(&prob), "groups = c = k is depthwise");
    conv_problem grouped = prob;
    grouped.groups = 8;
    EXPECT(!dw_is_depthwise(&grouped), "groups 8 of c 24 is not depthwise");
}

/* Output vectors of a problem: N*P*Q*C/8. */
static int dw_vectors_of_problem(const conv_problem *prob)
{
    return prob->n * prob->p * prob->q * (prob->c / DW_VEC);
}

/* ---- 09a: one thread per output vector ------------------------------------------------------------ */

static void check_vectors(const conv_problem *prob)
{
    size_t outputs = (size_t)problem_y_elems(prob);
    unsigned char *seen = calloc(outputs, 1);
    int threads = dw_vector_threads(prob), bad = 0, spare = 0;
    EXPECT((int64_t)threads == (int64_t)prob->n * prob->p * prob->q * ((prob->c + 31) / 32) * 4,
           "%s: %d threads", describe(prob), threads);
    for (int i = 0; i < threads; i++) {
        dw_vector v = dw_vector_of(i, prob);
        bad += v.n < 0 || v.n >= prob->n || v.p < 0 || v.p >= prob->p || v.q < 0 || v.q >= prob->q ||
               v.c < 0 || v.c % DW_VEC != 0 || v.c >= (prob->c + 31) / 32 * 32;
        if (v.c >= prob->c) {
            spare++;
            continue;
        }
        for (int j = 0; j < DW_VEC; j++)
            seen[dw_y_offset(prob, v.n, v.p, v.q, v.c + j)]++;
        /* The 4 vectors of a run are consecutive threads on one pixel; then comes the next pixel of the
         * same run. */
        dw_vector before = dw_vector_of(i > 0 ? i - 1 : 0, prob);
        if (i % 4 != 0)
            bad += before.n != v.n || before.p != v.p || before.q != v.q || before.c != v.c - DW_VEC;
        else if (i > 0 && v.q > 0)
            bad += before.n != v.n || before.p != v.p || before.q != v.q - 1 || before.c / 32 != v.c / 32;
        bad += i % 4 != v.c % 32 / 8;
    }
    size_t wrong = 0;
    for (size_t i = 0; i < outputs; i++)
        wrong += seen[i] != 1;
    EXPECT(bad == 0 && wrong == 0 && spare == threads - dw_vectors_of_problem(prob),
           "%s: %d threads out of place, %zu outputs not covered exactly once, %d spare slots",
           describe(prob), bad, wrong, spare);
    free(seen);
}

/* ---- 09b: blocks, threads, staging ---------------------------------------------------------------- */

typedef struct {
    int run, tile_q, strips, rows; /* channels per block, columns, strips, output rows per thread */
} geometry;

/* 09b's own geometry for a problem; rows = 0 when 09b refuses it (shared memory). */
enum { SMEM_LIMIT = DW_SMEM_LIMIT };

static geometry geometry_of(const conv_problem *prob)
{
    geometry g = {DW_RUN, DW_TILE_Q, DW_STRIPS, dw_plan_rows(prob, SMEM_LIMIT)};
    return g;
}

/* Every output stored exactly once; every block's run inside [0, C) and its image inside [0, N); and a
 * thread stores something exactly when the kernel's early-exit test lets it compute. */
static void check_cover(const conv_problem *prob, geometry g)
{
    const int tile_p = g.strips * g.rows, vecs_per_run = g.run / DW_VEC;
    const int threads = vecs_per_run * g.tile_q * g.strips;
    size_t outputs = (size_t)problem_y_elems(prob);
    unsigned char *seen = calloc(outputs, 1);
    int blocks = dw_blocks_covering(prob, tile_p, g.tile_q, g.run), bad_blocks = 0, bad_threads = 0;
    for (int b = 0; b < blocks; b++) {
        dw_tile t = dw_tile_of(b, prob, tile_p, g.tile_q, g.run);
        bad_blocks += t.n < 0 || t.n >= prob->n || t.c_first < 0 || t.c_first % g.run != 0 ||
                      t.c_count < DW_VEC || t.c_count > g.run || t.c_count % DW_VEC != 0 ||
                      t.c_first + t.c_count > prob->c || t.p_first < 0 || t.p_first >= prob->p ||
                      t.q_first < 0 || t.q_first >= prob->q || t.p_first % tile_p != 0 ||
                      t.q_first % g.tile_q != 0;
        const int vecs = t.c_count / DW_VEC;
        for (int i = 0; i < threads; i++) {
            dw_thread d = dw_thread_of(i, vecs_per_run, g.tile_q, g.rows);
            bad_threads += d.vec < 0 || d.vec >= vecs_per_run || d.q < 0 || d.q >= g.tile_q || d.p < 0 ||
                           d.p + g.rows > tile_p || d.p % g.rows != 0;
            const bool computes =
                !(d.vec >= vecs || t.q_first + d.q >= prob->q || t.p_first + d.p >= prob->p);
            int stored = 0;
            for (int m = 0; m < g.rows && computes; m++) {
                int p = t.p_first + d.p + m, q = t.q_first + d.q;
                if (p >= prob->p)
                    continue;
                for (int j = 0; j < DW_VEC; j++, stored++)
                    seen[dw_y_offset(prob, t.n, p, q, t.c_first + d.vec * DW_VEC + j)]++;
            }
            /* Had it not exited, would it have owned an output? It must not have. */
            int owned = 0;
            for (int m = 0; m < g.rows; m++)
                owned += d.vec < vecs && t.q_first + d.q < prob->q && t.p_first + d.p + m < prob->p;
            bad_threads += (owned > 0) != (stored > 0);
        }
    }
    size_t wrong = 0;
    for (size_t i = 0; i < outputs; i++)
        wrong += seen[i] != 1;
    EXPECT(
        bad_blocks == 0 && bad_threads == 0 && wrong == 0,
        "%s run %d tile %dx%d rows %d: %d bad blocks, %d bad threads, %zu outputs not covered exactly once",
        describe(prob), g.run, tile_p, g.tile_q, g.rows, bad_blocks, bad_threads, wrong);
    free(seen);
}

/* Staging: the items of a tile are its halo_h x halo_w pixels x vecs_per_run vectors, each once; an item's
 * source is the x element of its coordinates, or padding exactly when those lie outside the image; and
 * every tap of every output the tile stores lands inside the staged tile, on the input the definition
 * names. */
static void check_staging(const conv_problem *prob, geometry g)
{
    const int tile_p = g.strips * g.rows, vecs_per_run = g.run / DW_VEC;
    const int halo_h = (int)halo_extent(tile_p, prob->stride_h, prob->r, prob->dil_h);
    const int halo_w = (int)halo_extent(g.tile_q, prob->stride_w, prob->s, prob->dil_w);
    const int items = halo_h * halo_w * vecs_per_run;
    unsigned char *seen = malloc((size_t)items);
    int blocks = dw_blocks_covering(prob, tile_p, g.tile_q, g.run), bad_items = 0, bad_taps = 0;
    for (int b = 0; b < blocks; b++) {
        dw_tile t = dw_tile_of(b, prob, tile_p, g.tile_q, g.run);
        memset(seen, 0, (size_t)items);
        const int h_first = tap_input_coord(t.p_first, 0, prob->stride_h, prob->pad_h, prob->dil_h);
        const int w_first = tap_input_coord(t.q_first, 0, prob->stride_w, prob->pad_w, prob->dil_w);
        for (int i = 0; i < items; i++) {
            dw_stage_item it = dw_stage_item_of(i, halo_w, vecs_per_run);
            if (it.row < 0 || it.row >= halo_h || it.col < 0 || it.col >= halo_w || it.vec < 0 ||
                it.vec >= vecs_per_run) {
                bad_items++;
                continue;
            }
            seen[(it.row * halo_w + it.col) * vecs_per_run + it.vec]++;
            /* 09b stores item i at x_tile + 8*i: the tile's [row][col][run] order. */
            bad_items += (it.row * halo_w + it.col) * g.run + it.vec * DW_VEC != i * DW_VEC;
            if (it.vec >= t.c_count / DW_VEC)
                continue; /* the kernel skips these */
            int h = h_first + it.row, w = w_first + it.col;
            bool inside = h >= 0 && h < prob->h && w >= 0 && w < prob->w;
            int from = dw_stage_source(prob, &t, it);
            bad_items +=
                inside ? from != dw_x_offset(prob, t.n, h, w, t.c_first + it.vec * DW_VEC) : from != -1;
        }
        for (int i = 0; i < items; i++)
            bad_items += seen[i] != 1;
        /* Taps of stored outputs: tile-relative row/column inside the halo, and equal to the global
         * coordinate minus the tile's first. */
        for (int p = t.p_first; p < t.p_first + tile_p && p < prob->p; p++)
            for (int q = t.q_first; q < t.q_first + g.tile_q && q < prob->q; q++)
                for (int r = 0; r < prob->r; r++)
                    for (int s = 0; s < prob->s; s++) {
                        int row = tap_input_coord(p - t.p_first, r, prob->stride_h, 0, prob->dil_h);
                        int col = tap_input_coord(q - t.q_first, s, prob->stride_w, 0, prob->dil_w);
                        bad_taps +=
                            row < 0 || row >= halo_h || col < 0 || col >= halo_w ||
                            h_first + row != tap_input_coord(p, r, prob->stride_h, prob->pad_h, prob->dil_h) ||
                            w_first + col != tap_input_coord(q, s, prob->stride_w, prob->pad_w, prob->dil_w);
                    }
    }
    EXPECT(bad_items == 0 && bad_taps == 0,
           "%s tile %dx%d: %d bad staging items, %d taps outside or misplaced", describe(prob), tile_p,
           g.tile_q, bad_items, bad_taps);
    free(seen);
}

/* The rolling window: for m output rows at `stride` through an R-row filter, window rows
 * 0 .. dw_window_rows()-1 meet each (output row, filter row) pair exactly once, at out*stride + r, and
 * every window row is used by some pair. */
static void check_window(void)
{
    int bad = 0;
    for (int m = 1; m <= 16; m++)
        for (int stride = 1; stride <= 3; stride++)
            for (int r_taps = 1; r_taps <= 7; r_taps++) {
                int rows = dw_window_rows(m, stride, r_taps);
                int met[16][7] = {{0}};
                for (int i = 0; i < rows + 4; i++) {
                    int used = 0;
                    for (int r = 0; r < r_taps; r++) {
                        int out = dw_window_output(i, r, stride, m);
                        if (out < 0)
                            continue;
                        used++;
                        bad += i >= rows || out >= m || i != out * stride + r;
                        if (out < m)
                            met[out][r]++;
                    }
                    bad += i < rows && used == 0 && r_taps >= stride; /* each row needed (when r >= stride) */
                }
                for (int out = 0; out < m; out++)
                    for (int r = 0; r < r_taps; r++)
                        bad += met[out][r] != 1;
            }
    EXPECT(bad == 0, "rolling window: %d wrong pairings", bad);
}

static void check_variants(void)
{
    const struct {
        int r, s, stride_h, stride_w, dil_h, dil_w;
        dw_variant want;
    } cases[] = {
        {3, 3, 1, 1, 1, 1, DW_3X3_S1},  {3, 3, 2, 2, 1, 1, DW_3X3_S2},  {5, 5, 1, 1, 1, 1, DW_5X5_S1},
        {5, 5, 2, 2, 1, 1, DW_5X5_S2},  {3, 3, 1, 1, 2, 2, DW_GENERAL}, {3, 3, 1, 1, 1, 2, DW_GENERAL},
        {3, 3, 2, 1, 1, 1, DW_GENERAL}, {3, 3, 3, 3, 1, 1, DW_GENERAL}, {3, 5, 1, 1, 1, 1, DW_GENERAL},
        {7, 7, 1, 1, 1, 1, DW_GENERAL}, {1, 1, 1, 1, 1, 1, DW_GENERAL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        conv_problem prob = depthwise(1, 8, 20, 20, cases[i].r, cases[i].s, cases[i].stride_h,
                                      cases[i].stride_w, 1, 1, cases[i].dil_h, cases[i].dil_w);
        EXPECT(dw_variant_of(&prob) == cases[i].want, "%s: variant %d, expected %d", describe(&prob),
               (int)dw_variant_of(&prob), (int)cases[i].want);
    }
    EXPECT(dw_rows_per_thread(DW_3X3_S1) == 8 && dw_rows_per_thread(DW_5X5_S1) == 8, "stride 1: 8 rows");
    EXPECT(dw_rows_per_thread(DW_3X3_S2) == 4 && dw_rows_per_thread(DW_5X5_S2) == 4 &&
               dw_rows_per_thread(DW_GENERAL) == 4,
           "stride 2 and general: 4 rows");
    /* The specializations' tiles fit the 48 KB 09b uses without opting in, by the formula the launch
     * uses and by the definition: halo pixels x 32 channels x 2 bytes + R*S taps x 36 floats. */
    const int special[][3] = {{3, 1, 8}, {3, 2, 4}, {5, 1, 8}, {5, 2, 4}};
    for (int i = 0; i < 4; i++) {
        int taps = special[i][0], stride = special[i][1], rows = special[i][2];
        conv_problem prob = depthwise(1, 8, 64, 64, taps, taps, stride, stride, 1, 1, 1, 1);
        int halo_h = (2 * rows - 1) * stride + taps, halo_w = 15 * stride + taps;
        int64_t bytes = dw_tile_smem_bytes(&prob, rows);
        EXPECT(bytes == (int64_t)halo_h * halo_w * 32 * 2 + taps * taps * 36 * 4 && bytes <= SMEM_LIMIT &&
                   dw_plan_rows(&prob, SMEM_LIMIT) == rows,
               "%dx%d stride %d: %lld bytes of shared memory, %d rows", taps, taps, stride, (long long)bytes,
               dw_plan_rows(&prob, SMEM_LIMIT));
    }
    /* Extents near 2^31 (valid problems: stride and dilation are only bounded by 32-bit coordinates)
     * saturate instead of overflowing. */
    conv_problem far = depthwise(1, 8, 10, 10, 3, 3, 1 << 30, 1 << 30, 0, 0, 1, 1);
    conv_problem wide = depthwise(1, 8, 10, 10, 2, 2, 1, 1, 0, (1 << 28) + 1, 1, 1 << 29);
    EXPECT(dw_tile_smem_bytes(&far, 1) == INT64_MAX && dw_plan_rows(&far, SMEM_LIMIT) == 0 &&
               dw_tile_smem_bytes(&wide, 1) == INT64_MAX && dw_plan_rows(&wide, SMEM_LIMIT) == 0,
           "huge stride: %lld bytes, %d rows", (long long)dw_tile_smem_bytes(&far, 1),
           dw_plan_rows(&far, SMEM_LIMIT));
    /* The general kernel: the most rows (4, 2, 1) whose tile fits, or 0. */
    const int general[][4] = {/* r, stride, dil, rows expected */
                              {3, 3, 1, 2}, {3, 1, 2, 4}, {7, 2, 1, 2},
                              {7, 1, 1, 4}, {3, 3, 4, 1}, {7, 4, 4, 0}};
    for (int i = 0; i < 6; i++) {
        int taps = general[i][0], stride = general[i][1], dil = general[i][2];
        conv_problem prob = depthwise(1, 8, 200, 200, taps, taps, stride, stride, 1, 1, dil, dil);
        int rows = dw_plan_rows(&prob, SMEM_LIMIT), best = 0;
        for (int m = 4; m >= 1 && !best; m /= 2)
            if (dw_tile_smem_bytes(&prob, m) <= SMEM_LIMIT)
                best = m;
        EXPECT(rows == best && rows == general[i][3], "%s: %d rows, expected %d (%d)", describe(&prob), rows,
               general[i][3], best);
    }
}

/* Everything about one depthwise problem: coverage and staging with 09b's geometry and with others
 * (runs of 16 channels, 3 strips of 4 rows by 8 columns; the general kernel's 2- and 1-row strips). */
static void check_problem(const conv_problem *prob)
{
    geometry g = geometry_of(prob);
    const geometry others[] = {
        {16, 8, 3, 4}, {DW_RUN, DW_TILE_Q, DW_STRIPS, 2}, {DW_RUN, DW_TILE_Q, DW_STRIPS, 1}};
    check_vectors(prob);
    for (int i = 0; i < 3; i++) {
        check_cover(prob, others[i]);
        check_staging(prob, others[i]);
    }
    if (g.rows > 0) { /* 09b runs it */
        check_cover(prob, g);
        check_staging(prob, g);
    }
}

int main(void)
{
    check_coords();
    check_window();
    check_variants();

    const conv_problem fixed[] = {
        /*        n  c    h   w  r  s sh sw ph pw dh dw */
        depthwise(2, 32, 13, 13, 3, 3, 1, 1, 1, 1, 1, 1), /* the harness's depthwise shape */
        depthwise(1, 64, 17, 19, 3, 3, 1, 1, 1, 1, 1, 1), /* N = 1, odd sizes, 3x3 s1 */
        depthwise(2, 40, 23, 21, 3, 3, 2, 2, 1, 1, 1, 1), /* 3x3 s2, odd sizes, C = 40: a run of 8 */
        depthwise(2, 24, 20, 18, 5, 5, 1, 1, 2, 2, 1, 1), /* 5x5 s1, C = 24 < the 32-channel run */
        depthwise(1, 48, 19, 25, 5, 5, 2, 2, 2, 2, 1, 1), /* 5x5 s2, C = 48: a run of 16 */
        depthwise(2, 16, 9, 9, 3, 3, 1, 1, 4, 4, 1, 1),   /* padding larger than the filter */
        depthwise(1, 8, 11, 12, 5, 5, 2, 2, 6, 5, 1, 1),  /* the same, 5x5 s2 */
        depthwise(2, 16, 19, 17, 3, 3, 1, 1, 2, 2, 2, 2), /* dilation 2 */
        depthwise(1, 24, 18, 23, 3, 5, 2, 1, 1, 2, 1, 2), /* stride 2x1, dilation 1x2, 3x5 filter */
        depthwise(1, 8, 21, 21, 3, 3, 3, 3, 0, 0, 1, 1),  /* stride 3 */
        depthwise(2, 32, 15, 15, 7, 7, 1, 1, 3, 3, 1, 1), /* 7x7 (ConvNeXt's depthwise) */
        depthwise(1, 16, 5, 5, 5, 5, 1, 1, 0, 0, 1, 1),   /* filter as large as the image: 1x1 output */
        depthwise(3, 8, 1, 40, 1, 3, 1, 1, 0, 1, 1, 1),   /* one row */
        depthwise(1, 8, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1),    /* the smallest */
        depthwise(1, 144, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1),  /* MobileNet's channel count, 7x7 image */
        depthwise(1, 96, 28, 28, 3, 3, 2, 2, 1, 1, 1, 1), /* a MobileNet stride-2 layer, smaller */
        depthwise(1, 32, 40, 36, 3, 3, 1, 1, 1, 1, 1, 1), /* several tiles in both directions */
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        check_problem(&fixed[i]);

    /* Seeded random depthwise problems, half of them in the specializations' shapes. */
    uint64_t state = 9;
    for (int i = 0; i < 120;) {
        int c = 8 * draw(&state, 1, 7), r = draw(&state, 1, 6), s = draw(&state, 1, 6);
        int stride_h = draw(&state, 1, 3), stride_w = draw(&state, 1, 3);
        int dil_h = draw(&state, 0, 2) ? 1 : draw(&state, 2, 3),
            dil_w = draw(&state, 0, 2) ? 1 : draw(&state, 2, 3);
        if (draw(&state, 0, 1)) {
            r = s = draw(&state, 0, 1) ? 3 : 5;
            stride_h = stride_w = draw(&state, 1, 2);
            dil_h = dil_w = 1;
        }
        int n = draw(&state, 1, 2), h = draw(&state, 1, 34), w = draw(&state, 1, 34);
        int pad_h = draw(&state, 0, 4), pad_w = draw(&state, 0, 4);
        if (conv_out_size(h, pad_h, dil_h, r, stride_h) <= 0 ||
            conv_out_size(w, pad_w, dil_w, s, stride_w) <= 0)
            continue;
        conv_problem prob = depthwise(n, c, h, w, r, s, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w);
        check_problem(&prob);
        i++;
    }
    return test_summary("test_ch09_depthwise");
}
