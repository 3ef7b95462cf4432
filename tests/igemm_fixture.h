/* igemm_fixture.h: what the CPU emulations of chapters 05 and 08 start from (tests/test_ch05_implicit_gemm.c,
 * tests/test_ch08_hopper.c): one problem's inputs in the kernels' layouts with their fp64 reference, and
 * the channel-padded copies the kernels run on when C/groups is not a multiple of 8. */
#ifndef IGEMM_FIXTURE_H
#define IGEMM_FIXTURE_H

#include <math.h>
#include <stdlib.h>

#include "conv.h"
#include "pad_channels.h"
#include "reference.h"
#include "tensor.h"

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

/* The shapes aimed at an implicit GEMM's edges, which both emulations run: a reduction shorter than
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

#endif
