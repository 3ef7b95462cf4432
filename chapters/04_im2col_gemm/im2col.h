/* im2col.h: the im2col matrix of chapter 04, its coordinate mapping and the launches im2col.cu exports.
 *
 * The matrix A, one per problem, row-major, C*R*S rows by N*P*Q columns:
 *
 *   row    i = (c*R + r)*S + s     input channel c, filter tap (r, s): the order of w's C*R*S
 *   column j = (n*P + p)*Q + q     output pixel (n, p, q):             the order of y's N..P*Q
 *
 *   A[i][j] = x[n][c][p*stride_h - pad_h + r*dil_h][q*stride_w - pad_w + s*dil_w], 0 outside the image
 *
 * so that, for each group g of Kg = K/groups output channels and Cg = C/groups input channels,
 *
 *   Y_g[Kg][N*P*Q] = W_g[Kg][Cg*R*S] x A_g[Cg*R*S][N*P*Q]
 *
 * with W_g the group's Kg consecutive filters of w exactly as KCRS stores them, and A_g the group's
 * Cg*R*S consecutive rows of A. Row k of Y_g is output channel g*Kg + k of every image; column j is
 * pixel (p, q) of image n, which NCHW stores at y[n][g*Kg + k][p][q]: im2col_y_column() says where.
 * The buffer stores A row by row, im2col_ld() floats apart.
 *
 * The mapping functions are plain C, so the cpu suite (tests/test_ch04_im2col.c) builds A on the host with
 * them and checks W x A against the reference; under nvcc the same functions compile for the device,
 * and the kernels call exactly these.
 */
#ifndef IM2COL_H
#define IM2COL_H

#include "conv.h"
#include "tiles.h" /* output_pixel_of */

#define IM2COL_FN static HOST_DEVICE inline

/* Rows and columns of A: C*R*S and N*P*Q. */
IM2COL_FN int64_t im2col_rows(const conv_problem *prob)
{
    return (int64_t)prob->c * prob->r * prob->s;
}

IM2COL_FN int64_t im2col_cols(const conv_problem *prob)
{
    return (int64_t)prob->n * prob->p * prob->q;
}

/* Floats from one row of A to the next in the buffer: the columns rounded up to a multiple of 4, so
 * that every row starts 16-byte aligned and the GEMM can read any run of 4 columns from a multiple of 4
 * with one 16-byte load, whatever N*P*Q is. The (at most 3) extra columns are zeros. */
IM2COL_FN int64_t im2col_ld(const conv_problem *prob)
{
    return (im2col_cols(prob) + 3) / 4 * 4;
}

/* The row of A that input channel c, filter tap (r, s) fills. */
IM2COL_FN int im2col_row(const conv_problem *prob, int c, int r, int s)
{
    return (c * prob->r + r) * prob->s + s;
}

/* The output pixel behind column j of A: output_pixel_of() (common/kernel/tiles.h). */

/* The input coordinate, along one axis, that filter tap `tap` of output coordinate `out` reads. */
IM2COL_FN int im2col_input_coord(int out, int tap, int stride, int pad, int dil)
{
    return out * stride - pad + tap * dil;
}

/* Where in x (NCHW) element A[im2col_row(c, r, s)][column of px] comes from, or -1 where the tap falls
 * in the zero padding. */
IM2COL_FN int im2col_x_offset(const conv_problem *prob, int c, int r, int s, output_pixel px)
{
    const int h = im2col_input_coord(px.p, r, prob->stride_h, prob->pad_h, prob->dil_h);
    const int w = im2col_input_coord(px.q, s, prob->stride_w, prob->pad_w, prob->dil_w);
    if ((unsigned)h >= (unsigned)prob->h || (unsigned)w >= (unsigned)prob->w) /* catches h < 0 too */
        return -1;
    return ((px.n * prob->c + c) * prob->h + h) * prob->w + w;
}

/* Where column j of a GEMM output row lives in y: pixel (p, q) of image n, in a y whose images are
 * k_pq = K*P*Q floats apart. Output channel k adds k*P*Q; so Y_g[k][j] is
 * y[(g*Kg + k)*P*Q + im2col_y_column(j, P*Q, K*P*Q)]. */
IM2COL_FN int im2col_y_column(int col, int pq, int k_pq)
{
    return col / pq * k_pq + col % pq;
}

#undef IM2COL_FN

/* Exported by im2col.cu, for the steps and the registry (steps.c). */
#ifdef __cplusplus
extern "C" {
#endif

/* The im2col buffer, in bytes: C*R*S rows of im2col_ld() floats, about 4*C*R*S*N*P*Q. */
size_t im2col_workspace_bytes(const conv_problem *prob);

/* Whether the buffer can be built and addressed with 32-bit offsets; otherwise false with its size and
 * its blow-up over the input. */
bool im2col_supports(const conv_problem *prob, char *why, size_t why_len);

/* Writes A for x into the workspace: the "im2col" phase the runner times on its own. */
void im2col_phase(const conv_problem *prob, void *x, void *w, void *y, void *workspace);

#ifdef __cplusplus
}
#endif

#endif
