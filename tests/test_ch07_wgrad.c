/* Chapter 07's wgrad index math (chapters/07_wgrad/wgrad.h, common/kernel/tensor_core.h), on the host, on the
 * fixed shapes, the shapes wgrad must handle and 100 random ones:
 *   - the walk along the reduction (wgrad_pixel_next) equals dividing j (wgrad_pixel_of);
 *   - the channel padding's maps between the padded GEMM and dw are inverse bijections;
 *   - the fragments: a j-major, swizzled shared tile read through ldmatrix .x4 .trans at the lane
 *     addresses the kernel uses gives exactly mma.m16n8k16's A and B registers, without bank conflicts,
 *     and the accumulator fragments cover the warp tile once;
 *   - the split plan of every resnet50 layer at N = 32 on 132 SMs (H100), printed for the README.
 *
 * The kernels themselves, thread by thread, are what the PTX emulator runs (`conv check 07 --emulate`, the
 * gpu suite, and the determinism test): a bug in a .cu file or in a header the kernels include shows there.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "split_k.h"
#include "suites.h"
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

static void check_problem(const conv_problem *prob)
{
    check_walk(prob, BK);
    check_walk(prob, 7);
    check_walk(prob, 1000);
    check_padding_maps(prob);
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
        check_problem(&prob);
    }
    /* the shapes wgrad must handle (1x1, 3x3, 7x7 stride 2, dilation, odd sizes, groups, depthwise, long
     * reductions) */
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
        check_problem(&named[i]);

    uint64_t state = 7;
    for (int i = 0; i < 100; i++) {
        conv_problem prob = check_random_problem(&state);
        check_problem(&prob);
    }

    print_split_table();
    return test_summary("test_ch07_wgrad");
}
