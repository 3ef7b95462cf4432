/* pad_channels.cu: see pad_channels.h. One thread per 16-byte chunk of the destination. */
#include <cuda_fp16.h>

#include "check.h"
#include "pad_channels.h"

/* Row `row` of dst is row `row % padded_rows` of its block: a copy of the source row when that is below
 * `rows`, zeros past it. A plain row padding is one block (rows = padded_rows = all rows). */
static __global__ void pad_channels_kernel(const __half *__restrict__ src, __half *__restrict__ dst,
                                           int64_t dst_rows, int64_t rows, int64_t padded_rows, int channels,
                                           int padded)
{
    const int chunks_per_row = padded / 8;
    const int64_t chunks = dst_rows * chunks_per_row;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < chunks;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t row = i / chunks_per_row, in_block = row % padded_rows;
        const int64_t src_row = row / padded_rows * rows + in_block;
        const int c0 = (int)(i % chunks_per_row) * 8;
        __align__(16) __half v[8];
#pragma unroll
        for (int e = 0; e < 8; e++)
            v[e] = in_block < rows && c0 + e < channels ? src[src_row * channels + c0 + e] : __float2half(0.0f);
        *(uint4 *)(dst + row * padded + c0) = *(const uint4 *)v;
    }
}

/* A grid-stride loop: a million blocks are plenty to fill any GPU. */
static unsigned grid_for(int64_t items, int threads)
{
    const int64_t blocks = (items + threads - 1) / threads;
    return (unsigned)(blocks < (1 << 20) ? blocks : (1 << 20));
}

extern "C" void pad_rows_f16(const void *src, void *dst, int64_t blocks, int64_t rows, int64_t padded_rows,
                             int channels, int padded)
{
    const int64_t dst_rows = blocks * padded_rows;
    if (dst_rows == 0)
        return;
    pad_channels_kernel<<<grid_for(dst_rows * (padded / 8), 256), 256>>>((const __half *)src, (__half *)dst, dst_rows,
                                                                         rows, padded_rows, channels, padded);
    CUDA_CHECK_LAUNCH();
}

extern "C" void pad_channels_f16(const void *src, void *dst, int64_t rows, int channels, int padded)
{
    pad_rows_f16(src, dst, 1, rows, rows, channels, padded);
}

/* One thread per half of the destination: rows of `channels` halves are not 16-byte chunks in general. */
static __global__ void unpad_channels_kernel(const __half *__restrict__ src, __half *__restrict__ dst, int64_t rows,
                                             int channels, int padded)
{
    const int64_t elems = rows * channels;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < elems;
         i += (int64_t)gridDim.x * blockDim.x)
        dst[i] = src[i / channels * padded + i % channels];
}

extern "C" void unpad_channels_f16(const void *src, void *dst, int64_t rows, int channels, int padded)
{
    if (rows * channels == 0)
        return;
    unpad_channels_kernel<<<grid_for(rows * channels, 256), 256>>>((const __half *)src, (__half *)dst, rows,
                                                                   channels, padded);
    CUDA_CHECK_LAUNCH();
}

extern "C" int64_t pad_fprop_x_elems(const conv_problem *prob)
{
    const conv_problem padded = pad_fprop_problem(prob);
    return (int64_t)padded.n * padded.h * padded.w * padded.c;
}

extern "C" int64_t pad_fprop_w_elems(const conv_problem *prob)
{
    const conv_problem padded = pad_fprop_problem(prob);
    return (int64_t)padded.k * padded.r * padded.s * (padded.c / padded.groups);
}

static size_t align256(size_t bytes)
{
    return (bytes + 255) / 256 * 256;
}

/* Where the padded w starts: after the padded x, on a 256-byte boundary. */
static size_t padded_w_offset(const conv_problem *prob)
{
    return align256((size_t)pad_fprop_x_elems(prob) * 2);
}

extern "C" const char *const pad_fprop_branches[] = {"channels as they are", "channels padded to 8 (copies)", NULL};

extern "C" int pad_fprop_branch(const conv_problem *prob)
{
    return (prob->c / prob->groups) % 8 == 0 ? PAD_FPROP_NONE : PAD_FPROP_COPIES;
}

extern "C" size_t pad_fprop_workspace_bytes(const conv_problem *prob)
{
    if (pad_fprop_branch(prob) == PAD_FPROP_NONE)
        return 0;
    return padded_w_offset(prob) + (size_t)pad_fprop_w_elems(prob) * 2;
}

extern "C" pad_fprop_operands pad_fprop(const conv_problem *prob, const void *x, const void *w, void *workspace)
{
    pad_fprop_operands op = {pad_fprop_problem(prob), x, w};
    if (pad_fprop_branch(prob) == PAD_FPROP_NONE)
        return op;
    const int cg = prob->c / prob->groups, cg8 = op.prob.c / op.prob.groups;
    void *x_padded = workspace, *w_padded = (char *)workspace + padded_w_offset(prob);
    pad_channels_f16(x, x_padded, (int64_t)prob->n * prob->h * prob->w * prob->groups, cg, cg8);
    pad_channels_f16(w, w_padded, (int64_t)prob->k * prob->r * prob->s, cg, cg8);
    op.x = x_padded;
    op.w = w_padded;
    return op;
}

/* ---- dgrad ------------------------------------------------------------------------------------------------ */

/* Where each padded copy starts in the workspace, and how many bytes it takes (0: not needed). */
typedef struct {
    size_t dy_bytes, w_at, w_bytes, dx_at, dx_bytes;
} dgrad_layout;

static dgrad_layout dgrad_layout_of(const conv_problem *prob)
{
    const conv_problem padded = pad_dgrad_problem(prob);
    const bool pad_k = padded.k != prob->k, pad_c = padded.c != prob->c;
    dgrad_layout l;
    l.dy_bytes = pad_k ? (size_t)prob->n * prob->p * prob->q * padded.k * 2 : 0;
    l.w_at = align256(l.dy_bytes);
    l.w_bytes = pad_k || pad_c ? (size_t)padded.k * prob->r * prob->s * (padded.c / padded.groups) * 2 : 0;
    l.dx_at = align256(l.w_at + l.w_bytes);
    l.dx_bytes = pad_c ? (size_t)prob->n * prob->h * prob->w * padded.c * 2 : 0;
    return l;
}

extern "C" size_t pad_dgrad_workspace_bytes(const conv_problem *prob)
{
    const dgrad_layout l = dgrad_layout_of(prob);
    return l.w_bytes ? l.dx_at + l.dx_bytes : 0;
}

extern "C" pad_dgrad_operands pad_dgrad(const conv_problem *prob, const void *dy, const void *w, void *dx,
                                        void *workspace)
{
    pad_dgrad_operands op = {pad_dgrad_problem(prob), dy, w, dx};
    const dgrad_layout l = dgrad_layout_of(prob);
    if (!l.w_bytes)
        return op;
    const int cg = prob->c / prob->groups, kg = prob->k / prob->groups;
    const int cg8 = op.prob.c / op.prob.groups, kg8 = op.prob.k / op.prob.groups;
    if (l.dy_bytes) {
        pad_channels_f16(dy, workspace, (int64_t)prob->n * prob->p * prob->q * prob->groups, kg, kg8);
        op.dy = workspace;
    }
    /* w: per group, K/groups*R*S rows of C/groups, widened to C/groups padded and followed by the rows of
     * the padded k (zeros) */
    void *w_padded = (char *)workspace + l.w_at;
    const int64_t taps = (int64_t)prob->r * prob->s;
    pad_rows_f16(w, w_padded, prob->groups, kg * taps, kg8 * taps, cg, cg8);
    op.w = w_padded;
    if (l.dx_bytes)
        op.dx = (char *)workspace + l.dx_at;
    return op;
}

extern "C" void unpad_dgrad_dx(const conv_problem *prob, const pad_dgrad_operands *op, void *dx)
{
    if (op->dx == dx)
        return;
    unpad_channels_f16(op->dx, dx, (int64_t)prob->n * prob->h * prob->w * prob->groups, prob->c / prob->groups,
                       op->prob.c / op->prob.groups);
}
