/* Chapter 07's wgrad kernels (chapters/07_wgrad/: wgrad.h, wgrad.cuh, 07a_whole_reduction.cu, 07b_split_k.cu),
 * emulated on the host:
 *   - the walk along the reduction (wgrad_pixel_next) equals dividing j (wgrad_pixel_of);
 *   - the channel padding's maps between the padded GEMM and dw are inverse bijections;
 *   - the fragments: a j-major, swizzled shared tile read through ldmatrix .x4 .trans at the lane
 *     addresses the kernel uses gives exactly mma.m16n8k16's A and B registers, without bank conflicts,
 *     and the accumulator fragments cover the warp tile once;
 *   - the whole kernel, thread by thread (each thread's copies of each k tile, the tile coverage, the
 *     epilogue's writes, 07b's partials and their reduction in split order) against ref_wgrad_cpu on
 *     the fixed shapes and ~100 random ones; every dw element written exactly once;
 *   - the split plan of every resnet50 layer at N = 32 on 132 SMs (H100), printed for the README.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "reference.h"
#include "split_k.h"
#include "suites.h"
#include "tensor.h"
#include "tensor_core.h"
#include "test_util.h"
#include "wgrad.h"

static const int shape[] = {WGRAD_SHAPE};
#define BM shape[0]
#define BN shape[1]
#define BK shape[2]
#define WARPS_M shape[3]
#define WARPS_N shape[4]
#define THREADS (32 * WARPS_M * WARPS_N)
#define WM (BM / WARPS_M)
#define WN (BN / WARPS_N)
#define A_CPR (BM / 8)
#define B_CPR (BN / 8)
#define A_LOADS (BK * A_CPR / THREADS)
#define B_LOADS (BK * B_CPR / THREADS)
#define MAX_LOADS 16

/* ---- the walk along j ---------------------------------------------------------------------------------- */

static void check_walk(const conv_problem *prob, int step)
{
    const wgrad_step st = wgrad_step_make(prob, step);
    const int64_t total = wgrad_reduction(prob);
    int bad = 0;
    for (int start = 0; start < step && start < total; start += 1 + step / 3) {
        wgrad_pixel at = wgrad_pixel_of(prob, start);
        for (int64_t j = start; j < total + 2 * step; j += step) {
            const wgrad_pixel want = wgrad_pixel_of(prob, j);
            bad += at.n != want.n || at.p != want.p || at.q != want.q;
            at = wgrad_pixel_next(prob, at, st);
        }
    }
    char text[128];
    problem_format(prob, text, sizeof text);
    EXPECT(bad == 0, "%s: step %d: %d pixels of the walk differ from dividing", text, step, bad);
}

/* ---- the padding maps ---------------------------------------------------------------------------------- */

static void check_padding_maps(const conv_problem *prob)
{
    const conv_problem padded = wgrad_padded_problem(prob);
    const int cols = wgrad_cols(prob), cols8 = wgrad_cols(&padded);
    const int64_t elems = (int64_t)prob->k * cols;
    char *seen = calloc((size_t)elems, 1);
    int bad = 0;
    for (int k = 0; k < padded.k; k++)
        for (int col = 0; col < cols8; col++) {
            const int64_t at = wgrad_dw_offset(prob, &padded, k, col);
            if (at < 0)
                continue;
            if (at >= elems || seen[at]) {
                bad++;
                continue;
            }
            seen[at] = 1;
            /* the definition: padded (k, col) is group k / K'/G, row k % K'/G, tap col / C'/G, channel
             * col % C'/G; it must be the same (group, row, tap, channel) in dw */
            const int kg = prob->k / prob->groups, cg = prob->c / prob->groups;
            const int kg8 = padded.k / padded.groups, cg8 = padded.c / padded.groups;
            const int want_k = k / kg8 * kg + k % kg8;
            const wgrad_tap t = wgrad_tap_of(&padded, col);
            const int64_t want = (int64_t)want_k * cols + ((int64_t)t.r * prob->s + t.s) * cg + t.c;
            bad += at != want || k % kg8 >= kg || col % cg8 >= cg;
            const wgrad_padded_at back = wgrad_padded_of(prob, &padded, (int)(at / cols), (int)(at % cols));
            bad += back.k != k || back.col != col;
        }
    int64_t missing = 0;
    for (int64_t i = 0; i < elems; i++)
        missing += !seen[i];
    char text[128];
    problem_format(prob, text, sizeof text);
    EXPECT(bad == 0 && missing == 0, "%s: padding maps: %d wrong, %lld dw elements never mapped", text, bad,
           (long long)missing);
    free(seen);
}

/* ---- the fragments ----------------------------------------------------------------------------------- */

/* A shared tile of `rows` j rows, `cpr` 16-byte chunks each, filled the way the kernel's copies fill it:
 * logical (row, chunk) at swizzle_chunk(). Each element holds its logical (j, index) as j*1000 + index. */
static void fill_tile(int *tile, int rows, int cpr)
{
    for (int row = 0; row < rows; row++)
        for (int chunk = 0; chunk < cpr; chunk++)
            for (int e = 0; e < 8; e++)
                tile[swizzle_chunk(row, chunk, cpr) * 8 + e] = row * 1000 + chunk * 8 + e;
}

/* ldmatrix.x4.trans, emulated (tensor_core.h): lane L gives the byte offset of row L % 8 of matrix L / 8;
 * register m of lane L gets (row 2*(L%4), column L/4) and (row 2*(L%4)+1, column L/4) of matrix m.
 * Also counts bank conflicts: the 8 rows of one matrix must sit in 8 different 16-byte slots of a
 * 128-byte line. */
static void ldmatrix_trans(const int *tile, const uint32_t address[32], int reg[32][4][2], int *conflicts)
{
    for (int m = 0; m < 4; m++) {
        int slots = 0;
        for (int row = 0; row < 8; row++) {
            const int slot = (int)(address[8 * m + row] / 16) % 8;
            if (slots & (1 << slot))
                (*conflicts)++;
            slots |= 1 << slot;
        }
    }
    for (int lane = 0; lane < 32; lane++)
        for (int m = 0; m < 4; m++)
            for (int h = 0; h < 2; h++) {
                const uint32_t row_address = address[8 * m + 2 * (lane % 4) + h];
                reg[lane][m][h] = tile[row_address / 2 + lane / 4];
            }
}

static void check_fragments(void)
{
    int *a_tile = malloc(sizeof(int) * BK * BM), *b_tile = malloc(sizeof(int) * BK * BN);
    fill_tile(a_tile, BK, A_CPR);
    fill_tile(b_tile, BK, B_CPR);
    int bad = 0, conflicts = 0;
    static int reg[32][4][2];
    uint32_t address[32];
    for (int warp_m = 0; warp_m < WARPS_M; warp_m++)
        for (int warp_n = 0; warp_n < WARPS_N; warp_n++)
            for (int ks = 0; ks < BK / 16; ks++) {
                /* A: per 16 rows (k) of the warp tile, the kernel's a_lane[i] + ks * 16 rows */
                for (int i = 0; i < WM / 16; i++) {
                    for (int lane = 0; lane < 32; lane++)
                        address[lane] = 16u * swizzle_chunk(wgrad_ldsm_a_row(lane),
                                                            (warp_m * WM + i * 16) / 8 + wgrad_ldsm_a_chunk(lane), A_CPR) +
                                        ks * 16 * (BM * 2);
                    ldmatrix_trans(a_tile, address, reg, &conflicts);
                    for (int lane = 0; lane < 32; lane++)
                        for (int r = 0; r < 4; r++)
                            for (int h = 0; h < 2; h++) {
                                const int k = warp_m * WM + i * 16 + mma_a_row(lane, r);
                                const int j = ks * 16 + mma_a_col(lane, r) + h;
                                bad += reg[lane][r][h] != j * 1000 + k;
                            }
                }
                /* B: per 16 columns, two n8 operands: registers {0,1} and {2,3} */
                for (int jj = 0; jj < WN / 16; jj++) {
                    for (int lane = 0; lane < 32; lane++)
                        address[lane] = 16u * swizzle_chunk(wgrad_ldsm_b_row(lane),
                                                            (warp_n * WN + jj * 16) / 8 + wgrad_ldsm_b_chunk(lane), B_CPR) +
                                        ks * 16 * (BN * 2);
                    ldmatrix_trans(b_tile, address, reg, &conflicts);
                    for (int lane = 0; lane < 32; lane++)
                        for (int half = 0; half < 2; half++)
                            for (int r = 0; r < 2; r++)
                                for (int h = 0; h < 2; h++) {
                                    const int col = warp_n * WN + (2 * jj + half) * 8 + mma_b_n(lane);
                                    const int j = ks * 16 + mma_b_k(lane, r) + h;
                                    bad += reg[lane][2 * half + r][h] != j * 1000 + col;
                                }
                }
            }
    EXPECT(bad == 0, "%d fragment elements read through ldmatrix.trans are not the mma operand's", bad);
    EXPECT(conflicts == 0, "%d bank conflicts in the ldmatrix reads", conflicts);

    /* the accumulators: every (row, col) of the block tile once, over warps, lanes, fragments */
    int *count = calloc((size_t)BM * BN, sizeof(int));
    for (int warp_m = 0; warp_m < WARPS_M; warp_m++)
        for (int warp_n = 0; warp_n < WARPS_N; warp_n++)
            for (int lane = 0; lane < 32; lane++)
                for (int i = 0; i < WM / 16; i++)
                    for (int j = 0; j < WN / 8; j++)
                        for (int e = 0; e < 4; e++)
                            count[(warp_m * WM + i * 16 + mma_c_row(lane, e)) * BN + warp_n * WN + j * 8 +
                                  mma_c_col(lane, e)]++;
    int off = 0;
    for (int i = 0; i < BM * BN; i++)
        off += count[i] != 1;
    EXPECT(off == 0, "%d elements of the block tile not held by exactly one accumulator", off);
    free(count), free(a_tile), free(b_tile);
}

/* ---- the kernel, thread by thread -------------------------------------------------------------------- */

/* Rows of `cg` values widened to `cg8` by zeros: pad_channels_f16 (common/kernel/pad_channels.cu). */
static float *pad_rows(const float *src, int64_t rows, int cg, int cg8)
{
    float *dst = malloc(sizeof(float) * (size_t)(rows * cg8));
    for (int64_t row = 0; row < rows; row++)
        for (int c = 0; c < cg8; c++)
            dst[row * cg8 + c] = c < cg ? src[row * cg + c] : 0.0f;
    return dst;
}

/* wgrad_whole<T> (07a) or wgrad_split<T> (07b) for every block, then (split) wgrad_reduce. dw is KRSC;
 * written[] counts the writes of each element. Returns the number of tile-coverage faults. */
static int emulate(const conv_problem *prob, split_plan plan, int split, const float *x, const float *dy, double *dw,
                   int *written)
{
    const conv_problem pp = wgrad_padded_problem(prob);
    const float *xp = pad_rows(x, (int64_t)prob->n * prob->h * prob->w * prob->groups, prob->c / prob->groups,
                               pp.c / pp.groups);
    const float *dyp = pad_rows(dy, (int64_t)prob->n * prob->p * prob->q * prob->groups, prob->k / prob->groups,
                                pp.k / pp.groups);
    const int rows = wgrad_rows(&pp), cols = wgrad_cols(&pp);
    const int64_t reduction = wgrad_reduction(&pp);
    const wgrad_step step = wgrad_step_make(&pp, BK);
    const size_t partial_elems = (size_t)plan.splits * pp.k * cols;
    float *partial = split ? malloc(sizeof(float) * partial_elems) : NULL;
    for (size_t i = 0; split && i < partial_elems; i++)
        partial[i] = NAN;
    float *a_tile = malloc(sizeof(float) * BK * BM), *b_tile = malloc(sizeof(float) * BK * BN);
    double *acc = malloc(sizeof(double) * BM * BN);
    int faults = 0;
    const int blocks = tiles_covering(rows, BM) * tiles_covering(cols, BN);

    for (int group = 0; group < pp.groups; group++)
        for (int block = 0; block < blocks; block++)
            for (int sp = 0; sp < plan.splits; sp++) {
                const int group_k0 = group * rows;
                const gemm_block blk = gemm_block_of(block, cols, BM, BN);
                int64_t begin, end;
                split_range(plan, sp, reduction, &begin, &end);
                /* every thread's copier, as the kernel sets it up */
                static wgrad_pixel a_at[1024][MAX_LOADS], b_at[1024][MAX_LOADS];
                for (int tid = 0; tid < THREADS; tid++) {
                    for (int i = 0; i < A_LOADS; i++)
                        a_at[tid][i] = wgrad_pixel_of(&pp, begin + tid / A_CPR + i * (THREADS / A_CPR));
                    for (int i = 0; i < B_LOADS; i++)
                        b_at[tid][i] = wgrad_pixel_of(&pp, begin + tid / B_CPR + i * (THREADS / B_CPR));
                }
                for (int i = 0; i < BM * BN; i++)
                    acc[i] = 0.0;
                const int k_tiles = (int)((end - begin + BK - 1) / BK);
                int64_t remaining = end - begin;
                for (int kt = 0; kt < k_tiles; kt++, remaining -= BK) {
                    for (int i = 0; i < BK * BM; i++)
                        a_tile[i] = NAN;
                    for (int i = 0; i < BK * BN; i++)
                        b_tile[i] = NAN;
                    for (int tid = 0; tid < THREADS; tid++) {
                        const int a_chunk = tid % A_CPR, b_chunk = tid % B_CPR;
                        const int k = blk.row0 + 8 * a_chunk, col = blk.col0 + 8 * b_chunk;
                        const bool k_ok = k < rows, col_ok = col < cols;
                        const wgrad_tap tap = wgrad_tap_of(&pp, col_ok ? col : 0);
                        for (int i = 0; i < A_LOADS; i++) {
                            const int row = tid / A_CPR + i * (THREADS / A_CPR);
                            const bool ok = k_ok && row < remaining;
                            const int64_t at = ok ? wgrad_dy_offset(&pp, a_at[tid][i], group_k0 + k) : 0;
                            for (int e = 0; e < 8; e++) {
                                faults += !isnan(a_tile[row * BM + 8 * a_chunk + e]);
                                a_tile[row * BM + 8 * a_chunk + e] = ok ? dyp[at + e] : 0.0f;
                            }
                            a_at[tid][i] = wgrad_pixel_next(&pp, a_at[tid][i], step);
                        }
                        for (int i = 0; i < B_LOADS; i++) {
                            const int row = tid / B_CPR + i * (THREADS / B_CPR);
                            const int64_t at =
                                col_ok && row < remaining ? wgrad_x_offset(&pp, b_at[tid][i], tap, group_k0) : -1;
                            for (int e = 0; e < 8; e++) {
                                faults += !isnan(b_tile[row * BN + 8 * b_chunk + e]);
                                b_tile[row * BN + 8 * b_chunk + e] = at >= 0 ? xp[at + e] : 0.0f;
                            }
                            b_at[tid][i] = wgrad_pixel_next(&pp, b_at[tid][i], step);
                        }
                    }
                    for (int i = 0; i < BK * BM; i++)
                        faults += isnan(a_tile[i]) != 0;
                    for (int i = 0; i < BK * BN; i++)
                        faults += isnan(b_tile[i]) != 0;
                    const int m_end = rows - blk.row0 < BM ? rows - blk.row0 : BM;
                    const int n_end = cols - blk.col0 < BN ? cols - blk.col0 : BN;
                    for (int j = 0; j < BK; j++)
                        for (int m = 0; m < m_end; m++) {
                            const double a = a_tile[j * BM + m];
                            if (a == 0.0)
                                continue;
                            for (int n = 0; n < n_end; n++)
                                acc[m * BN + n] += a * b_tile[j * BN + n];
                        }
                }
                /* the epilogue (its fragment coverage is check_fragments()'s) */
                for (int m = 0; m < BM; m++)
                    for (int n = 0; n < BN; n++) {
                        const int kk = blk.row0 + m, cc = blk.col0 + n;
                        if (kk >= rows || cc >= cols)
                            continue;
                        if (split) {
                            partial[wgrad_partial_offset(&pp, sp, group_k0 + kk, cc)] = (float)acc[m * BN + n];
                        } else {
                            const int64_t at = wgrad_dw_offset(prob, &pp, group_k0 + kk, cc);
                            if (at >= 0) {
                                dw[at] = (float)acc[m * BN + n];
                                written[at]++;
                            }
                        }
                    }
            }

    if (split) { /* wgrad_reduce: in split order, in fp32 */
        const int real_cols = wgrad_cols(prob);
        const int64_t split_stride = (int64_t)pp.k * cols;
        for (int64_t e = 0; e < (int64_t)prob->k * real_cols; e++) {
            const wgrad_padded_at at = wgrad_padded_of(prob, &pp, (int)(e / real_cols), (int)(e % real_cols));
            const float *p = partial + wgrad_partial_offset(&pp, 0, at.k, at.col);
            float total = p[0];
            for (int s = 1; s < plan.splits; s++)
                total += p[s * split_stride];
            dw[e] = total;
            written[e]++;
        }
    }
    free((void *)xp), free((void *)dyp), free(partial), free(a_tile), free(b_tile), free(acc);
    return faults;
}

static int problems_checked = 0;

static void check_kernels(const conv_problem *prob, uint64_t seed)
{
    int x_dims[4], y_dims[4];
    problem_x_dims(prob, x_dims);
    problem_y_dims(prob, y_dims);
    const size_t nx = (size_t)problem_x_elems(prob), nw = (size_t)problem_w_elems(prob);
    const size_t ny = (size_t)problem_y_elems(prob);
    float *x = malloc(nx * sizeof *x), *dy = malloc(ny * sizeof *dy);
    float *x_nhwc = malloc(nx * sizeof *x_nhwc), *dy_nhwc = malloc(ny * sizeof *dy_nhwc);
    double *ref = malloc(nw * sizeof *ref), *dw = malloc(nw * sizeof *dw);
    int *written = malloc(nw * sizeof *written);
    fill_uniform(x, nx, seed);
    fill_uniform(dy, ny, seed + 1);
    round_to_dtype(x, nx, DTYPE_F16);
    round_to_dtype(dy, ny, DTYPE_F16);
    ref_wgrad_cpu(prob, x, ref, dy);
    pack_tensor(x, x_dims, LAYOUT_NHWC, DTYPE_F32, x_nhwc);
    pack_tensor(dy, y_dims, LAYOUT_NHWC, DTYPE_F32, dy_nhwc);

    const conv_problem pp = wgrad_padded_problem(prob);
    const int64_t reduction = wgrad_reduction(prob);
    /* 07a (one split), 07b's plan on an H100, and a plan with many short splits (min chunk = one k tile) */
    split_plan plans[3];
    plans[0].splits = 1;
    plans[0].chunk = reduction;
    plans[1] = wgrad_plan(&pp, 132, BM, BN);
    plans[2] = plan_split_k(reduction, wgrad_output_tiles(&pp, BM, BN), 132, 2, BK, BK);
    char text[128];
    problem_format(prob, text, sizeof text);
    for (int v = 0; v < 3; v++) {
        for (size_t i = 0; i < nw; i++)
            dw[i] = NAN, written[i] = 0;
        const int faults = emulate(prob, plans[v], v > 0, x_nhwc, dy_nhwc, dw, written);
        int bad = 0, unwritten = 0;
        const int cg = prob->c / prob->groups;
        const double tol = 1e-5 * sqrt((double)reduction) + 1e-9;
        for (int k = 0; k < prob->k; k++)
            for (int c = 0; c < cg; c++)
                for (int r = 0; r < prob->r; r++)
                    for (int s = 0; s < prob->s; s++) {
                        const int64_t at = (((int64_t)k * prob->r + r) * prob->s + s) * cg + c;
                        const double want = ref[(((int64_t)k * cg + c) * prob->r + r) * prob->s + s];
                        unwritten += written[at] != 1;
                        bad += !(fabs(dw[at] - want) <= tol * (1.0 + fabs(want)));
                    }
        EXPECT(faults == 0 && bad == 0 && unwritten == 0,
               "%s: plan %d (%d splits of %lld): %d tile faults, %d elements off the reference, %d not written once",
               text, v, plans[v].splits, (long long)plans[v].chunk, faults, bad, unwritten);
    }
    problems_checked++;
    free(x), free(dy), free(x_nhwc), free(dy_nhwc), free(ref), free(dw), free(written);
}

static void check_problem(const conv_problem *prob, uint64_t seed)
{
    check_walk(prob, BK);
    check_walk(prob, 7);
    check_walk(prob, 1000);
    check_padding_maps(prob);
    check_kernels(prob, seed);
}

static conv_problem make(int n, int c, int h, int w, int k, int r, int s, int pad, int stride, int dil, int groups)
{
    conv_problem prob = problem_make(n, c, h, w, k, r, s);
    prob.pad_h = prob.pad_w = pad;
    prob.stride_h = prob.stride_w = stride;
    prob.dil_h = prob.dil_w = dil;
    prob.groups = groups;
    char why[256];
    if (!problem_validate(&prob, why, sizeof why)) {
        printf("bad test problem: %s\n", why);
        exit(1);
    }
    return prob;
}

/* ---- the split table ------------------------------------------------------------------------------------ */

static void print_split_table(void)
{
    printf("\n07b split plan, the resnet50 suite, 132 SMs (waves %d, block_k %d, min chunk %d):\n", WGRAD_WAVES, BK,
           WGRAD_MIN_CHUNK);
    printf("| layer | N | K x R*S*C (padded) | reduction N*P*Q | output tiles | splits | chunk | blocks |\n");
    printf("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |\n");
    for (int i = 0; i < suite_layer_count(); i++) {
        const suite_layer *layer = suite_layer_at(i);
        if (strcmp(layer->suite, "resnet50") != 0)
            continue;
        const conv_problem prob = layer->prob; /* N = 32, but big_3x3 (N = 8) */
        const conv_problem pp = wgrad_padded_problem(&prob);
        const int tiles = wgrad_output_tiles(&pp, BM, BN);
        const split_plan plan = wgrad_plan(&pp, 132, BM, BN);
        char size[64];
        if (pp.c == prob.c)
            snprintf(size, sizeof size, "%d x %d", prob.k, wgrad_cols(&prob));
        else
            snprintf(size, sizeof size, "%d x %d (%d)", prob.k, wgrad_cols(&prob), wgrad_cols(&pp));
        printf("| %s | %d | %s | %lld | %d | %d | %lld | %d |\n", layer->layer, prob.n, size, (long long)wgrad_reduction(&pp), tiles,
               plan.splits, (long long)plan.chunk, tiles * plan.splits);
        /* the plan partitions the reduction and fills the GPU twice, unless the min chunk stops it */
        int64_t expected = 0;
        bool ok = true;
        for (int s = 0; s < plan.splits; s++) {
            int64_t begin, end;
            split_range(plan, s, wgrad_reduction(&pp), &begin, &end);
            ok = ok && begin == expected && end > begin;
            expected = end;
        }
        ok = ok && expected == wgrad_reduction(&pp) && plan.splits <= 65535;
        ok = ok && (tiles * plan.splits >= 2 * 132 || plan.chunk < 2 * WGRAD_MIN_CHUNK);
        EXPECT(ok, "%s: plan %d splits of %lld", layer->layer, plan.splits, (long long)plan.chunk);
    }
    printf("\n");
}

int main(void)
{
    check_fragments();

    for (int i = 0; i < check_fixed_count(); i++) {
        conv_problem prob = check_fixed_problem(i);
        check_problem(&prob, 700 + (uint64_t)i);
    }
    /* the shapes wgrad must handle (1x1, 3x3, 7x7 stride 2, dilation, odd sizes, groups, depthwise, long
     * reductions), small enough for the emulation */
    const conv_problem named[] = {
        make(2, 16, 9, 9, 24, 1, 1, 0, 1, 1, 1),    /* 1x1 */
        make(2, 32, 10, 11, 64, 3, 3, 1, 1, 1, 1),  /* 3x3 */
        make(2, 3, 33, 31, 64, 7, 7, 3, 2, 1, 1),   /* conv1-like: 7x7 stride 2, C = 3 */
        make(1, 16, 15, 13, 16, 3, 3, 2, 1, 2, 1),  /* dilation 2, N = 1 */
        make(1, 5, 7, 9, 3, 3, 2, 1, 1, 1, 1),      /* odd sizes everywhere */
        make(2, 32, 12, 12, 48, 3, 3, 1, 2, 1, 4),  /* groups, K/G = 12: padded rows */
        make(3, 24, 8, 8, 24, 3, 3, 1, 1, 1, 24),   /* depthwise */
        make(8, 16, 56, 56, 16, 1, 1, 0, 1, 1, 1),  /* large N*P*Q: 25088 */
        make(4, 8, 40, 40, 8, 3, 3, 1, 1, 1, 1),    /* long reduction through 3x3 taps: 6400 */
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        check_problem(&named[i], 800 + (uint64_t)i);

    uint64_t state = 7;
    int random_checked = 0;
    for (int i = 0; random_checked < 100 && i < 400; i++) {
        conv_problem prob = check_random_problem(&state);
        if (problem_flops(&prob) > 4e7)
            continue;
        check_problem(&prob, 900 + (uint64_t)i);
        random_checked++;
    }
    printf("kernels emulated on %d problems (%d random)\n", problems_checked, random_checked);
    EXPECT(random_checked >= 90, "only %d random problems were small enough", random_checked);

    print_split_table();
    return test_summary("test_ch07_wgrad");
}
