/* block.h: the ResNet basic block of chapter 10, defined once for the program and its tests.
 *
 *   h  = ReLU(BN1(conv3x3, stride s, pad 1 (x, w1)))        C -> K
 *   sc = x                                                 identity: s == 1 and C == K
 *   sc = BN_sc(conv1x1, stride s (x, w_sc))                projection: otherwise
 *   y  = ReLU(BN2(conv3x3, pad 1 (h, w2)) + sc)            K -> K
 *
 * BN is batch norm in inference: gamma * (v - mean) / sqrt(var + eps) + beta per output channel.
 * This file holds what every implementation of the block is measured against: the shapes, seeded
 * parameters, the fp64 reference chain from x to y with no rounding in between, the references of the
 * single stages, the end-to-end tolerance, and the bytes each implementation moves. Tensors here are
 * fp32 in logical order (NCHW activations, KCRS filters), as common/harness/reference.h takes them; the values
 * are fp16-representable, so the reference sees exactly what the GPU sees.
 * Host C; built into resnet_block and tests/test_ch10_resnet_block.c (tests/test_ch10_resnet_block.c checks it).
 */
#ifndef BLOCK_H
#define BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conv.h"
#include "epilogue.h"
#include "verify.h"

/* Above this many flops a stage's reference runs on the GPU when there is one, as common/harness/harness.c
 * decides: the CPU's fp64 loops manage about 1 GFLOP/s. */
#define BLOCK_CPU_REFERENCE_MAX_FLOPS 2e8

/* PyTorch's default for BatchNorm2d. */
#define BLOCK_BN_EPS 1e-5f

typedef struct {
    int n, c, h, w, k, stride;
} block_shape;

/* Batch norm's four per-channel vectors, K floats each. */
typedef struct {
    float *gamma, *beta, *mean, *var;
} block_bn;

typedef struct {
    block_shape shape;
    bool projection;             /* the shortcut is conv1x1 + BN (otherwise sc = x) */
    conv_problem conv1, conv2, shortcut; /* validated; shortcut only for a projection */
    float *x, *w1, *w2, *wsc;    /* fp16 values; wsc NULL for the identity */
    block_bn bn1, bn2, bnsc;     /* bnsc only for a projection */
} block_params;

/* "n32 c64 56x56 k128 s2 projection". */
void block_format(const block_shape *shape, char *buf, size_t len);

/* The three convolutions of a block (shortcut filled for a projection only). false, with why, for a
 * shape that is not a block (sizes below 1, a stride other than 1 or 2, index math past 2^31). */
bool block_problems(const block_shape *shape, bool *projection, conv_problem *conv1, conv_problem *conv2,
                    conv_problem *shortcut, char *why, size_t why_len);

/* Validates shape and draws every parameter from seed: x and the filters uniform in [-1, 1) rounded
 * to fp16, batch-norm statistics of the size the convolution before them produces (var > 0). */
bool block_params_make(block_params *params, const block_shape *shape, uint64_t seed, char *why, size_t why_len);
void block_params_free(block_params *params);

/* Batch norm as the affine map it is in inference, in fp64: scale = gamma / sqrt(var + eps),
 * shift = beta - mean * scale (bn_fold of common/kernel/epilogue.h computes the same and rounds to fp32). */
void block_bn_affine(const block_bn *bn, int channels, double *scale, double *shift);

/* A stage's epilogue in fp64 (epilogue_apply's order): K-long vectors, a residual shaped like y. */
typedef struct {
    epilogue_ops ops;
    const double *bias, *scale, *shift;
    const double *residual;
} block_epilogue;

/* Whether a stage's reference runs on the GPU (see BLOCK_CPU_REFERENCE_MAX_FLOPS). */
bool block_reference_on_gpu(const conv_problem *prob, bool have_gpu);

/* The fp64 convolution of an fp32 input (fp16 values, exactly what a kernel read), then ep applied in
 * place: the reference of one stage. */
void block_stage_reference(const conv_problem *prob, const float *x, const float *w, const block_epilogue *ep,
                           bool have_gpu, double *y);

/* The same for an fp64 input (the chain's unrounded h): x = hi + lo with hi and lo fp32, two fp64
 * convolutions, exact to about 2^-48 of x. */
void block_stage_reference_f64(const conv_problem *prob, const double *x, const float *w, const block_epilogue *ep,
                               bool have_gpu, double *y);

/* The whole block in fp64, BN applied through block_bn_affine: y = the block of x, nothing rounded. */
void block_chain(const block_params *params, bool have_gpu, double *y);

/* y (an implementation's fp16 output, as fp32 in logical order) against block_chain's y, with the
 * end-to-end tolerance derived in block.c. */
verify_result block_verify_end_to_end(const block_params *params, const float *y, const double *ref);

/* FLOPs of the block's convolutions (2 multiply-adds per tap, the elementwise work not counted). */
double block_flops(const block_shape *shape);

/* The fewest bytes each implementation moves, from the sizes (arithmetic, not a measurement): every
 * kernel reads its inputs once and writes its output once. fused: the three (or two) convolutions with
 * their epilogues (fp32 scale and shift, the residual); unfused: the same plus, per convolution, the
 * separate pass reading and writing y once more; cudnn: as fused, with an fp16 bias instead of the
 * scale and shift. */
typedef struct {
    double fused, unfused, cudnn;
} block_bytes;

block_bytes block_traffic(const block_shape *shape);

#endif
