/* wgrad.h: the index math of chapter 07's kernels, apart from the kernels so the CPU tests can check it.
 * The kernels and their launch code call exactly these functions (and split_k.h's operand mappings).
 *
 * wgrad as one GEMM per group g of G (docs/gemm_view.md, split_k.h):
 *
 *     dW_g[i][col] = sum over j of A_g[i][j] * B_g[j][col]
 *
 *     i   = k - g*K/G     a row: one output channel           0 <= i < K/G           wgrad_rows()
 *     col = (r, s, c)     a column: tap and input channel     0 <= col < R*S*C/G     wgrad_cols()
 *                         c fastest: a KRSC filter row, so 8 consecutive columns are 8 channels of x
 *     j   = (n, p, q)     the reduction: one output pixel     0 <= j < N*P*Q         wgrad_reduction()
 *
 *     A_g[i][j]   = dy[n][p][q][g*K/G + i]   (wgrad_dy_offset)  dy is [j][k]: A is stored "column-major"
 *     B_g[j][col] = x[n][h][w][g*C/G + c]    (wgrad_x_offset)   h = p*stride_h - pad_h + r*dil_h; 0 outside
 *
 * Both operands are activations, and both are stored with the reduction index j as the slow one: a
 * 16-byte load is 8 consecutive output channels of dy (8 rows of A) or 8 consecutive channels of x
 * (8 columns of B) at one pixel j. The kernels stage both tiles j-major and transpose on the way into
 * the registers with ldmatrix .trans (tensor_core.h), see wgrad_ldsm_* below.
 *
 * A block's rows of the tile walk along j with a constant step (the tile depth), so instead of dividing
 * j into (n, p, q) every step, a thread divides once and then carries digits: wgrad_step_make(),
 * wgrad_pixel_next().
 *
 * Channels per group not a multiple of 8 (conv1's C = 3, odd K): the kernels run on copies of x and dy
 * whose channels per group are padded with zeros to a multiple of 8 (wgrad_padded_problem). The zero
 * channels contribute whole zero columns (x) or rows (dy) of dW, which the kernels never write:
 * wgrad_dw_offset() maps a padded (k, column) back to dw, or to -1 for a padding one.
 *
 * Plain C: a C11 test includes it as is; under nvcc the same functions also compile for the device.
 */
#ifndef WGRAD_H
#define WGRAD_H

#include <stdbool.h>
#include <stdint.h>

#include "conv.h"
#include "tiles.h" /* tiles_covering, gemm_block_of */
#include "split_k.h"
#include "tensor_core.h"

#define WG_FN static HOST_DEVICE inline

/* The block tile of 07a and 07b: block M (output channels k), block N (columns (r, s, c)),
 * block K (reduction j per stage), warps along M, warps along N, pipeline stages.
 * 4 warps of 32 x 64: 64 fp32 accumulators per thread. One stage is 32 x 64 halves of dy plus
 * 32 x 128 of x, 12 KB; four stages 48 KB. */
#define WGRAD_SHAPE 64, 128, 32, 2, 2, 4
#define WGRAD_BK 32

/* Split-K policy of 07b (plan_split_k's inputs besides the problem and the SM count): enough splits to
 * fill every SM twice, no split shorter than 16 k tiles (512 pixels), so that writing and re-reading a
 * 64 x 128 fp32 partial tile (32 KB) stays small against the block's math (512 x 64 x 128 x 2 flops). */
#define WGRAD_WAVES 2
#define WGRAD_MIN_CHUNK (16 * WGRAD_BK)

/* ---- extents --------------------------------------------------------------------------------------- */

WG_FN int wgrad_rows(const conv_problem *prob)
{
    return prob->k / prob->groups;
}

WG_FN int wgrad_cols(const conv_problem *prob)
{
    return prob->r * prob->s * (prob->c / prob->groups);
}

WG_FN int64_t wgrad_reduction(const conv_problem *prob)
{
    return (int64_t)prob->n * prob->p * prob->q;
}

/* Output tiles of all groups: what plan_split_k() spreads over the SMs. */
WG_FN int wgrad_output_tiles(const conv_problem *prob, int bm, int bn)
{
    return tiles_covering(wgrad_rows(prob), bm) * tiles_covering(wgrad_cols(prob), bn) * prob->groups;
}

/* ---- channel padding ----------------------------------------------------------------------------------- */

WG_FN int wgrad_pad8(int channels)
{
    return (channels + 7) / 8 * 8;
}

/* The problem the tensor-core kernels run on: C/G and K/G rounded up to multiples of 8 (the same
 * problem when both already are). */
WG_FN conv_problem wgrad_padded_problem(const conv_problem *prob)
{
    conv_problem padded = *prob;
    padded.c = wgrad_pad8(prob->c / prob->groups) * prob->groups;
    padded.k = wgrad_pad8(prob->k / prob->groups) * prob->groups;
    return padded;
}

/* Where element (k, col) of the padded problem's dW (k over all groups, col a padded column) goes in the
 * real problem's dw (KRSC), or -1 when k or the column's channel is padding. */
WG_FN int64_t wgrad_dw_offset(const conv_problem *prob, const conv_problem *padded, int k, int col)
{
    const int kg = prob->k / prob->groups, kg8 = padded->k / padded->groups;
    const int cg = prob->c / prob->groups, cg8 = padded->c / padded->groups;
    const int group = k / kg8, i = k % kg8;
    const int c = col % cg8, rs = col / cg8;
    if (i >= kg || c >= cg)
        return -1;
    return ((int64_t)group * kg + i) * wgrad_cols(prob) + (int64_t)rs * cg + c;
}

/* The inverse, for the reduction kernel that walks dw: the padded (k, column) of dw's element (k, col). */
typedef struct {
    int k, col;
} wgrad_padded_at;

WG_FN wgrad_padded_at wgrad_padded_of(const conv_problem *prob, const conv_problem *padded, int k, int col)
{
    const int kg = prob->k / prob->groups, kg8 = padded->k / padded->groups;
    const int cg = prob->c / prob->groups, cg8 = padded->c / padded->groups;
    wgrad_padded_at at;
    at.k = k / kg * kg8 + k % kg;
    at.col = col / cg * cg8 + col % cg;
    return at;
}

/* ---- the walk along j ---------------------------------------------------------------------------------- */

/* A constant step along j as digits in the mixed radix (n, p, q) = (N, P, Q): advancing is three
 * additions and at most two carries (each digit plus its delta plus a carry stays below twice its
 * radix). */
typedef struct {
    int dn, dp, dq;
} wgrad_step;

WG_FN wgrad_step wgrad_step_make(const conv_problem *prob, int step)
{
    wgrad_step st;
    st.dq = step % prob->q;
    st.dp = step / prob->q % prob->p;
    st.dn = step / prob->q / prob->p;
    return st;
}

/* wgrad_pixel_of(j + step) from wgrad_pixel_of(j), without dividing. Past the last pixel n simply
 * grows beyond N; the kernels test j against the end of their range, never n. */
WG_FN wgrad_pixel wgrad_pixel_next(const conv_problem *prob, wgrad_pixel at, wgrad_step st)
{
    at.q += st.dq;
    at.p += st.dp;
    at.n += st.dn;
    if (at.q >= prob->q) {
        at.q -= prob->q;
        at.p += 1;
    }
    if (at.p >= prob->p) {
        at.p -= prob->p;
        at.n += 1;
    }
    return at;
}

/* ---- the fragments: j-major tiles through ldmatrix .trans ------------------------------------------------ */

/* Both shared tiles hold rows of j, each row a run of 16-byte chunks along k (the dy tile) or along the
 * columns (the x tile), swizzled with swizzle_chunk() (tensor_core.h).
 *
 * A operand (16 k x 16 j, "row": j pairs per register) from the dy tile: ldmatrix .x4 .trans with
 * matrices (k 0-7, j 0-7), (k 8-15, j 0-7), (k 0-7, j 8-15), (k 8-15, j 8-15). Stored, matrix (kb, jb)
 * is rows j = 8*jb .. 8*jb+7, chunk kb; transposed on the way, lane L receives (j = 2*(L%4), k = L/4)
 * and the next j: A[L/4][2*(L%4)], A's register layout. Lane L points at row (j) wgrad_ldsm_a_row(L),
 * chunk (k) wgrad_ldsm_a_chunk(L) of the 16 x 16 block: tensor_core.h's ldsm_b_* addressing, reused.
 *
 * B operand, two n8 tiles (16 j x 16 columns), from the x tile: matrices (col 0-7, j 0-7),
 * (col 0-7, j 8-15), (col 8-15, j 0-7), (col 8-15, j 8-15) give B registers {0, 1} of the first n8 tile
 * and {0, 1} of the second; lane L points at row (j) L % 16, chunk L / 16: tensor_core.h's ldsm_a_*, reused.
 * tests/test_ch07_wgrad.c emulates both, element by element. */
WG_FN int wgrad_ldsm_a_row(int lane)
{
    return ldsm_b_row(lane);
}

WG_FN int wgrad_ldsm_a_chunk(int lane)
{
    return ldsm_b_chunk(lane);
}

WG_FN int wgrad_ldsm_b_row(int lane)
{
    return ldsm_a_row(lane);
}

WG_FN int wgrad_ldsm_b_chunk(int lane)
{
    return ldsm_a_chunk(lane);
}

/* ---- the split workspace (07b) ---------------------------------------------------------------------------- */

/* Partials are [splits][K'][cols'] floats in the padded problem's coordinates (K' = padded K over all
 * groups, cols' = padded R*S*C/G): split s's tile is a full dW of its own. */
WG_FN int64_t wgrad_partial_offset(const conv_problem *padded, int split, int k, int col)
{
    return ((int64_t)split * padded->k + k) * wgrad_cols(padded) + col;
}

/* 07b's split of the padded problem's reduction, from the SM count: the one function both
 * workspace_bytes() and the launch call, so the workspace always fits the launch. */
WG_FN split_plan wgrad_plan(const conv_problem *padded, int sm_count, int bm, int bn)
{
    return plan_split_k(wgrad_reduction(padded), wgrad_output_tiles(padded, bm, bn), sm_count, WGRAD_WAVES,
                        WGRAD_BK, WGRAD_MIN_CHUNK);
}

#undef WG_FN

#endif
