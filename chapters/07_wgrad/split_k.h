/* split_k.h: wgrad as a GEMM, and how its long reduction is split across blocks.
 *
 * wgrad (docs/gemm_view.md): dw[k][(r,s,c)] = sum over (n,p,q) of dy[n][p][q][k] * x[n][h][w][c], with
 * h = p*stride_h - pad_h + r*dil_h and w likewise: GEMM M = K, N = R*S*C (c fastest, as KRSC stores dw),
 * reduction N*P*Q. The output is small (ResNet-50 conv1: 64 x 147) and the reduction huge (401,408 at
 * batch 32), so one block per output tile would leave most SMs idle. Split-K gives each of `splits`
 * blocks a contiguous range of the reduction; they write fp32 partial tiles to a workspace, and a second
 * small kernel adds the partials in split order. Fixed ranges plus a fixed summation order make the
 * result bitwise reproducible run to run (atomics would not be).
 *
 * Plain C, and device code under nvcc (HOST_DEVICE, common/kernel/conv.h).
 */
#ifndef SPLIT_K_H
#define SPLIT_K_H

#include <stdint.h>

#include "conv.h"

/* ---- the operands, element by element (NHWC x and dy, KRSC dw) ---------------------------------- */

/* Reduction index j = (n, p, q), q fastest: the order dy is stored in, so a run of j is contiguous. */
typedef struct {
    int n, p, q;
} wgrad_pixel;

static HOST_DEVICE inline wgrad_pixel wgrad_pixel_of(const conv_problem *prob, int64_t j)
{
    wgrad_pixel at;
    at.q = (int)(j % prob->q);
    at.p = (int)(j / prob->q % prob->p);
    at.n = (int)(j / ((int64_t)prob->q * prob->p));
    return at;
}

/* Column index (r, s, c), c fastest within one group (c < C/groups): the order of a KRSC filter row. */
typedef struct {
    int r, s, c;
} wgrad_tap;

static HOST_DEVICE inline wgrad_tap wgrad_tap_of(const conv_problem *prob, int column)
{
    const int c_per_group = prob->c / prob->groups;
    wgrad_tap at;
    at.c = column % c_per_group;
    at.s = column / c_per_group % prob->s;
    at.r = column / (c_per_group * prob->s);
    return at;
}

/* Offset of the x element that reduction index j meets in column (r, s, c) of output channel k's group,
 * or -1 where the tap falls in the padding (the GEMM operand is zero there). */
static HOST_DEVICE inline int64_t wgrad_x_offset(const conv_problem *prob, wgrad_pixel at, wgrad_tap tap, int k)
{
    const int h = at.p * prob->stride_h - prob->pad_h + tap.r * prob->dil_h;
    const int w = at.q * prob->stride_w - prob->pad_w + tap.s * prob->dil_w;
    if (h < 0 || h >= prob->h || w < 0 || w >= prob->w)
        return -1;
    const int c = k / (prob->k / prob->groups) * (prob->c / prob->groups) + tap.c;
    return (((int64_t)at.n * prob->h + h) * prob->w + w) * prob->c + c;
}

static HOST_DEVICE inline int64_t wgrad_dy_offset(const conv_problem *prob, wgrad_pixel at, int k)
{
    return (((int64_t)at.n * prob->p + at.p) * prob->q + at.q) * prob->k + k;
}

/* ---- the split -------------------------------------------------------------------------------- */

typedef struct {
    int splits;      /* blocks along the reduction, each with a non-empty range */
    int64_t chunk;   /* reduction elements per split, a multiple of block_k (the last may be shorter) */
} split_plan;

/* Enough splits that tiles * splits fills every SM `waves` times over, but no split shorter than
 * min_chunk (below that, writing and re-reading a partial tile costs more than the math it spreads). */
static HOST_DEVICE inline split_plan plan_split_k(int64_t reduction, int tiles, int sm_count, int waves,
                                                  int block_k, int64_t min_chunk)
{
    int64_t wanted = ((int64_t)sm_count * waves + tiles - 1) / tiles;
    int64_t most = reduction / (min_chunk > 0 ? min_chunk : 1);
    int64_t splits = wanted < most ? wanted : most;
    if (splits < 1)
        splits = 1;
    /* Rounding the chunk down to whole block_k steps keeps the count at or above what was wanted
     * (rounding up could leave SMs idle); the last split takes the remainder. */
    int64_t chunk = reduction / splits / block_k * block_k;
    split_plan plan;
    plan.chunk = chunk > block_k ? chunk : block_k;
    plan.splits = (int)((reduction + plan.chunk - 1) / plan.chunk);
    return plan;
}

/* The reduction range [begin, end) of split `index`. */
static HOST_DEVICE inline void split_range(split_plan plan, int index, int64_t reduction, int64_t *begin, int64_t *end)
{
    *begin = plan.chunk * index;
    *end = *begin + plan.chunk < reduction ? *begin + plan.chunk : reduction;
}

#endif
