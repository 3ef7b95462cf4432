/* Chapter 10's ResNet basic block on the CPU (chapters/10_resnet_block/block.h):
 *   - the fp64 reference chain equals a naive definition written independently here, with batch norm
 *     applied unfolded (gamma * (v - mean) / sqrt(var + eps) + beta), on tiny identity and projection
 *     blocks; the drawn parameters are fp16 values and every variance is positive;
 *   - the end-to-end check passes the block as each implementation computes it (emulated here with its
 *     fp16 roundings: fused, unfused, cuDNN with BN folded into fp16 filters) and REJECTS wrong blocks:
 *     ReLU before the residual add, a missing shortcut, a projection with the wrong stride;
 *   - the shapes, FLOPs and bytes of ResNet-34's conv2_x and conv3_1 against hand-worked numbers (the
 *     README's traffic table comes from the same formulas).
 * Run: meson test -C build ch10_resnet_block_reference */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "block.h"
#include "tensor.h"
#include "test_util.h"

/* ---- the naive definition ---------------------------------------------------------------------------- */

/* out[n][k][p][q] = sum over c, r, s of in[n][c][p*stride - pad + r][q*stride - pad + s] * w[k][c][r][s] */
static void naive_conv(int n_count, int c_count, int h_in, int w_in, const double *in, int k_count, int taps,
                       int stride, int pad, const float *w, int h_out, int w_out, double *out)
{
    for (int n = 0; n < n_count; n++)
        for (int k = 0; k < k_count; k++)
            for (int p = 0; p < h_out; p++)
                for (int q = 0; q < w_out; q++) {
                    double sum = 0.0;
                    for (int c = 0; c < c_count; c++)
                        for (int r = 0; r < taps; r++)
                            for (int s = 0; s < taps; s++) {
                                int hi = p * stride - pad + r, wi = q * stride - pad + s;
                                if (hi >= 0 && hi < h_in && wi >= 0 && wi < w_in)
                                    sum += in[((n * c_count + c) * h_in + hi) * w_in + wi] *
                                           w[((k * c_count + c) * taps + r) * taps + s];
                            }
                    out[((n * k_count + k) * h_out + p) * w_out + q] = sum;
                }
}

static double batch_norm(const block_bn *bn, int k, double v)
{
    return bn->gamma[k] * (v - bn->mean[k]) / sqrt((double)bn->var[k] + (double)BLOCK_BN_EPS) + bn->beta[k];
}

static void naive_block(const block_params *params, double *y)
{
    const block_shape *b = &params->shape;
    const int p_out = (b->h - 1) / b->stride + 1, q_out = (b->w - 1) / b->stride + 1;
    const size_t x_count = (size_t)b->n * b->c * b->h * b->w, y_count = (size_t)b->n * b->k * p_out * q_out;
    double *x = malloc(x_count * sizeof *x), *h = malloc(y_count * sizeof *h), *sc = malloc(y_count * sizeof *sc);
    double *t = malloc(y_count * sizeof *t);
    for (size_t i = 0; i < x_count; i++)
        x[i] = params->x[i];
    const size_t plane = (size_t)p_out * q_out;

    naive_conv(b->n, b->c, b->h, b->w, x, b->k, 3, b->stride, 1, params->w1, p_out, q_out, h);
    for (size_t i = 0; i < y_count; i++)
        h[i] = fmax(batch_norm(&params->bn1, (int)(i / plane % (size_t)b->k), h[i]), 0.0);
    if (b->stride == 1 && b->c == b->k) {
        memcpy(sc, x, y_count * sizeof *sc);
    } else {
        naive_conv(b->n, b->c, b->h, b->w, x, b->k, 1, b->stride, 0, params->wsc, p_out, q_out, sc);
        for (size_t i = 0; i < y_count; i++)
            sc[i] = batch_norm(&params->bnsc, (int)(i / plane % (size_t)b->k), sc[i]);
    }
    naive_conv(b->n, b->k, p_out, q_out, h, b->k, 3, 1, 1, params->w2, p_out, q_out, t);
    for (size_t i = 0; i < y_count; i++)
        y[i] = fmax(batch_norm(&params->bn2, (int)(i / plane % (size_t)b->k), t[i]) + sc[i], 0.0);
    free(x), free(h), free(sc), free(t);
}

static void test_chain_is_the_block(void)
{
    static const block_shape shapes[] = {
        {2, 8, 5, 6, 8, 1},  /* identity */
        {2, 8, 7, 7, 16, 2}, /* projection: stride and channels */
        {1, 8, 6, 5, 8, 2},  /* projection by stride alone, even sizes */
        {1, 3, 5, 4, 5, 1},  /* projection by channels alone */
        {1, 4, 1, 1, 4, 1},  /* a 1x1 image */
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        block_params params;
        char why[256];
        EXPECT(block_params_make(&params, &shapes[i], 7 + i, why, sizeof why), "%s", why);
        EXPECT(params.projection == (shapes[i].stride != 1 || shapes[i].c != shapes[i].k), "block %zu", i);
        const size_t x_count = (size_t)problem_x_elems(&params.conv1), count = (size_t)problem_y_elems(&params.conv2);
        bool fp16_values = true;
        for (size_t j = 0; j < x_count; j++)
            fp16_values &= half_to_float(float_to_half(params.x[j])) == params.x[j];
        EXPECT(fp16_values, "block %zu: x holds values fp16 cannot represent", i);
        bool positive = true;
        for (int k = 0; k < shapes[i].k; k++)
            positive &= params.bn1.var[k] > 0 && params.bn2.var[k] > 0 &&
                        (!params.projection || params.bnsc.var[k] > 0);
        EXPECT(positive, "block %zu: a BN variance is not positive", i);

        double *chain = malloc(count * sizeof *chain), *naive = malloc(count * sizeof *naive);
        block_chain(&params, false, chain);
        naive_block(&params, naive);
        double worst = 0.0, largest = 0.0, positives = 0.0;
        for (size_t j = 0; j < count; j++) {
            worst = fmax(worst, fabs(chain[j] - naive[j]));
            largest = fmax(largest, fabs(naive[j]));
            positives += naive[j] > 0.0;
        }
        EXPECT(worst <= 1e-12 * fmax(largest, 1.0), "block %zu: chain differs from the naive block by %.3g (max %.3g)",
               i, worst, largest);
        /* ReLU keeps some and clips some: a block that is all zeros or all positive would test less
         * (the 1x1 image has too few outputs to be sure of both) */
        EXPECT(positives > 0 && (count < 32 || positives < (double)count), "block %zu: %.0f of %zu outputs positive",
               i, positives, count);
        free(chain), free(naive);
        block_params_free(&params);
    }
}

/* ---- implementations, emulated with their roundings, and wrong blocks ---------------------------------- */

enum { AS_FUSED, AS_UNFUSED, AS_CUDNN, EMULATIONS };
enum { NO_MISTAKE, RELU_BEFORE_ADD, NO_SHORTCUT, PROJECTION_STRIDE_1, MISTAKES };
static const char *const emulation_name[EMULATIONS] = {"fused", "unfused", "cudnn"};
static const char *const mistake_name[MISTAKES] = {"none", "ReLU before the add", "no shortcut",
                                                   "projection with stride 1"};

static float fp16(double v)
{
    return half_to_float(float_to_half((float)v));
}

/* One stage the way an implementation computes it from its fp16 inputs: the convolution (exact here; the
 * kernels' fp32 accumulation is far finer than fp16), rounded to fp16 first if unfused, then
 * v * scale + shift, the residual and ReLU, rounded to fp16. */
static void emulate_stage(const conv_problem *prob, const float *in, const float *w, const double *scale,
                          const double *shift, const float *residual, bool relu, bool relu_before_add, bool unfused,
                          float *out)
{
    const size_t count = (size_t)problem_y_elems(prob), plane = (size_t)prob->p * prob->q;
    double *acc = malloc(count * sizeof *acc);
    const block_epilogue none = {.ops = {0}};
    block_stage_reference(prob, in, w, &none, false, acc);
    for (size_t i = 0; i < count; i++) {
        const int k = (int)(i / plane % (size_t)prob->k);
        double v = unfused ? fp16(acc[i]) : acc[i];
        v = v * scale[k] + shift[k];
        if (relu_before_add)
            v = fmax(v, 0.0);
        if (residual)
            v += residual[i];
        if (relu)
            v = fmax(v, 0.0);
        out[i] = fp16(v);
    }
    free(acc);
}

/* y of the block as implementation `how` computes it, with `mistake` made. */
static void emulate_block(const block_params *params, int how, int mistake, float *y)
{
    const int k_count = params->shape.k;
    const size_t count = (size_t)problem_y_elems(&params->conv2);
    float *h = malloc(count * sizeof *h), *sc = malloc(count * sizeof *sc);
    float *scale_f = malloc((size_t)k_count * sizeof *scale_f), *shift_f = malloc((size_t)k_count * sizeof *shift_f);
    double *scale = malloc((size_t)k_count * sizeof *scale), *shift = malloc((size_t)k_count * sizeof *shift);
    const conv_problem *probs[3] = {&params->conv1, &params->shortcut, &params->conv2};
    const float *filters[3] = {params->w1, params->wsc, params->w2};
    const block_bn *bns[3] = {&params->bn1, &params->bnsc, &params->bn2};
    const float *w_used[3] = {NULL, NULL, NULL};
    float *folded[3] = {NULL, NULL, NULL};
    double *scales[3], *shifts[3];
    for (int st = 0; st < 3; st++) {
        scales[st] = malloc((size_t)k_count * sizeof(double));
        shifts[st] = malloc((size_t)k_count * sizeof(double));
        if (st == 1 && !params->projection)
            continue;
        bn_fold(k_count, bns[st]->gamma, bns[st]->beta, bns[st]->mean, bns[st]->var, BLOCK_BN_EPS, scale_f, shift_f);
        const size_t w_count = (size_t)problem_w_elems(probs[st]), per_k = w_count / (size_t)k_count;
        w_used[st] = filters[st];
        for (int k = 0; k < k_count; k++) {
            scales[st][k] = scale_f[k];
            shifts[st][k] = shift_f[k];
        }
        if (how == AS_CUDNN) { /* BN's scale folded into the fp16 filter, its shift an fp16 bias */
            folded[st] = malloc(w_count * sizeof(float));
            for (size_t j = 0; j < w_count; j++)
                folded[st][j] = fp16((double)filters[st][j] * scale_f[j / per_k]);
            w_used[st] = folded[st];
            for (int k = 0; k < k_count; k++) {
                scales[st][k] = 1.0;
                shifts[st][k] = fp16(shift_f[k]);
            }
        }
    }
    const bool unfused = how == AS_UNFUSED;
    emulate_stage(&params->conv1, params->x, w_used[0], scales[0], shifts[0], NULL, true, false, unfused, h);
    if (params->projection && mistake == PROJECTION_STRIDE_1) {
        /* the 1x1 convolution at stride 1, its top-left P x Q kept: the wrong input pixels */
        conv_problem wrong = params->shortcut;
        char why[256];
        wrong.stride_h = wrong.stride_w = 1;
        EXPECT(problem_validate(&wrong, why, sizeof why), "%s", why);
        float *full = malloc((size_t)problem_y_elems(&wrong) * sizeof *full);
        emulate_stage(&wrong, params->x, w_used[1], scales[1], shifts[1], NULL, false, false, unfused, full);
        const conv_problem *right = &params->shortcut;
        for (int n = 0; n < right->n; n++)
            for (int k = 0; k < right->k; k++)
                for (int p = 0; p < right->p; p++)
                    for (int q = 0; q < right->q; q++)
                        sc[(((size_t)n * right->k + k) * right->p + p) * right->q + q] =
                            full[(((size_t)n * wrong.k + k) * wrong.p + p) * wrong.q + q];
        free(full);
    } else if (params->projection) {
        emulate_stage(&params->shortcut, params->x, w_used[1], scales[1], shifts[1], NULL, false, false, unfused, sc);
    } else {
        memcpy(sc, params->x, count * sizeof *sc);
    }
    emulate_stage(&params->conv2, h, w_used[2], scales[2], shifts[2], mistake == NO_SHORTCUT ? NULL : sc, true,
                  mistake == RELU_BEFORE_ADD, unfused, y);
    for (int st = 0; st < 3; st++)
        free(folded[st]), free(scales[st]), free(shifts[st]);
    free(h), free(sc), free(scale_f), free(shift_f), free(scale), free(shift);
}

static void test_end_to_end_check(void)
{
    static const block_shape shapes[] = {
        {2, 16, 9, 9, 16, 1},  /* identity */
        {2, 16, 9, 9, 32, 2},  /* projection */
        {1, 64, 8, 8, 64, 1},  /* identity with a longer reduction */
        {1, 32, 10, 10, 64, 2} /* projection with a longer reduction, even sizes */
    };
    double worst_ratio = 0.0;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        block_params params;
        char why[256], text[96];
        EXPECT(block_params_make(&params, &shapes[i], 100 + i, why, sizeof why), "%s", why);
        block_format(&shapes[i], text, sizeof text);
        const size_t count = (size_t)problem_y_elems(&params.conv2);
        double *ref = malloc(count * sizeof *ref);
        float *y = malloc(count * sizeof *y);
        block_chain(&params, false, ref);
        for (int how = 0; how < EMULATIONS; how++) {
            emulate_block(&params, how, NO_MISTAKE, y);
            verify_result v = block_verify_end_to_end(&params, y, ref);
            EXPECT(v.pass, "%s, %s: rel %.3g (tol %.3g), max %.3g (tol %.3g)", text, emulation_name[how], v.rel_l2,
                   v.tol_rel, v.max_err, v.tol_max);
            worst_ratio = fmax(worst_ratio, fmax(v.rel_l2 / v.tol_rel, v.max_err / v.tol_max));
            for (int mistake = RELU_BEFORE_ADD; mistake < MISTAKES; mistake++) {
                if (mistake == PROJECTION_STRIDE_1 && !(params.projection && shapes[i].stride > 1))
                    continue;
                emulate_block(&params, how, mistake, y);
                v = block_verify_end_to_end(&params, y, ref);
                EXPECT(!v.pass, "%s, %s with %s: passed (rel %.3g, tol %.3g)", text, emulation_name[how],
                       mistake_name[mistake], v.rel_l2, v.tol_rel);
                /* not a near miss: wrong by many times the tolerance */
                EXPECT(v.rel_l2 > 10.0 * v.tol_rel, "%s, %s with %s: rel %.3g only just over tol %.3g", text,
                       emulation_name[how], mistake_name[mistake], v.rel_l2, v.tol_rel);
            }
        }
        /* an output left as NaN fails however close the rest is */
        emulate_block(&params, AS_FUSED, NO_MISTAKE, y);
        y[count / 2] = NAN;
        EXPECT(!block_verify_end_to_end(&params, y, ref).pass, "%s: a NaN passed", text);
        free(ref), free(y);
        block_params_free(&params);
    }
    printf("end to end: the right blocks use at most %.0f%% of the tolerance\n", 100.0 * worst_ratio);
}

/* ---- shapes, FLOPs and traffic of ResNet-34's blocks, by hand ------------------------------------------- */

static void test_arithmetic(void)
{
    const block_shape conv2_x = {32, 64, 56, 56, 64, 1}, conv3_1 = {32, 64, 56, 56, 128, 2};
    bool projection;
    conv_problem conv1, conv2, shortcut;
    char why[256];
    EXPECT(block_problems(&conv3_1, &projection, &conv1, &conv2, &shortcut, why, sizeof why), "%s", why);
    EXPECT(projection && conv1.p == 28 && conv1.q == 28 && shortcut.p == 28 && conv2.c == 128 && conv2.h == 28,
           "conv3_1: projection %d, P %d, shortcut P %d", projection, conv1.p, shortcut.p);
    EXPECT(block_problems(&conv2_x, &projection, &conv1, &conv2, &shortcut, why, sizeof why) && !projection,
           "conv2_x is an identity block");
    const block_shape no_image = {1, 8, 0, 8, 8, 1};
    EXPECT(!block_problems(&no_image, &projection, &conv1, &conv2, &shortcut, why, sizeof why), "H = 0 accepted");

    /* conv2_x: two 3x3 convolutions of 2 * 32*56*56 * 64 * 64*9 FLOPs each */
    EXPECT_NEAR(block_flops(&conv2_x), 2.0 * 2.0 * 32 * 56 * 56 * 64 * 64 * 9, 0.5);
    /* activations 32*56*56*64 halves = 12,845,056 B; each filter 64*9*64 halves = 73,728 B; scale and shift
     * 2 * 64 floats = 512 B per convolution, an fp16 bias 128 B.
     * fused:   conv1 x + w1 + h + 512, conv2 h + w2 + y + 512 + the residual x = 64,373,760 B
     * unfused: + 2 passes each reading and writing an activation, 4 * 12,845,056 = 115,753,984 B
     * cuDNN:   fused - 2 * (512 - 128) = 64,372,992 B */
    block_bytes bytes = block_traffic(&conv2_x);
    EXPECT_NEAR(bytes.fused, 64373760.0, 0.5);
    EXPECT_NEAR(bytes.unfused, 115753984.0, 0.5);
    EXPECT_NEAR(bytes.cudnn, 64372992.0, 0.5);
    /* conv3_1: x 12,845,056 B, h, sc and y 32*28*28*128 halves = 6,422,528 B each; w1 128*9*64 halves =
     * 147,456 B, w2 128*9*128 = 294,912 B, w_sc 128*64 = 16,384 B; vectors 2 * 128 floats = 1,024 B.
     * fused: (x + w1 + h) + (x + w_sc + sc) + (h + w2 + y + sc) + 3 * 1,024 = 58,264,576 B;
     * unfused: + 3 passes * 2 * 6,422,528 = 96,799,744 B */
    bytes = block_traffic(&conv3_1);
    EXPECT_NEAR(bytes.fused, 58264576.0, 0.5);
    EXPECT_NEAR(bytes.unfused, 96799744.0, 0.5);
}

int main(void)
{
    test_chain_is_the_block();
    test_end_to_end_check();
    test_arithmetic();
    return test_summary("test_ch10_resnet_block");
}
