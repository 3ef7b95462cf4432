/* test_ch11_train_cnn.c: the cpu parts of chapter 11's training example, without a GPU.
 *
 *   1. the per-element layers of layers.h (the code the GPU kernels run too) against their
 *      definitions, written here as independent plain loops, in both activation layouts;
 *   2. the CPU backend's whole backward pass against central finite differences of the loss, for a
 *      sample of parameters of every layer (three convolutions through the fp64 references, the
 *      classifier), with loss scale 1 and 1024;
 *   3. the synthetic data: deterministic, balanced, fp16-exact, and labelled by what is drawn (the
 *      images' average gradient structure points the way each class says).
 * Built and run by meson (suite cpu): ./build/chapters/11_train_cnn/test_ch11_train_cnn. Exit 0 if all pass.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "layers.h"
#include "net.h"
#include "tensor.h"

static int failures = 0;

#define CHECK(cond, ...)                                              \
    do {                                                              \
        if (!(cond)) {                                                \
            failures++;                                               \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);               \
            printf(__VA_ARGS__);                                      \
            printf("\n");                                             \
        }                                                             \
    } while (0)

static double close_to(double a, double b)
{
    return fabs(a - b) <= 1e-5 * (1.0 + fabs(b));
}

static void test_layout(void)
{
    for (int nhwc = 0; nhwc < 2; nhwc++) {
        const act_shape s = {3, 5, 7, nhwc};
        char *seen = calloc((size_t)act_elems(s), 1);
        for (int b = 0; b < s.batch; b++)
            for (int k = 0; k < s.channels; k++)
                for (int j = 0; j < s.pixels; j++) {
                    const int64_t off = act_offset(s, b, k, j);
                    const int64_t want = nhwc ? ((int64_t)b * 7 + j) * 5 + k : ((int64_t)b * 5 + k) * 7 + j;
                    CHECK(off == want, "act_offset(%d,%d,%d) nhwc=%d: %lld, want %lld", b, k, j, nhwc, (long long)off,
                          (long long)want);
                    int bb, kk, jj;
                    act_coords(s, off, &bb, &kk, &jj);
                    CHECK(bb == b && kk == k && jj == j, "act_coords does not invert act_offset at %lld", (long long)off);
                    seen[off]++;
                }
        for (int64_t i = 0; i < act_elems(s); i++)
            CHECK(seen[i] == 1, "offset %lld hit %d times", (long long)i, seen[i]);
        free(seen);
    }
}

static void test_relu(void)
{
    float y[6] = {-2.0f, -0.0f, 0.0f, 1e-30f, 3.5f, -1e-30f};
    const float want[6] = {0.0f, 0.0f, 0.0f, 1e-30f, 3.5f, 0.0f};
    for (int i = 0; i < 6; i++) {
        relu_forward_element(y, i);
        CHECK(y[i] == want[i] && !signbit(y[i]), "relu(%d) = %g, want %g", i, y[i], want[i]);
    }
    float grad[6] = {1, 2, 3, 4, 5, 6};
    const float want_grad[6] = {0, 0, 0, 4, 5, 0};
    for (int i = 0; i < 6; i++) {
        relu_backward_element(grad, y, i);
        CHECK(grad[i] == want_grad[i], "relu backward(%d) = %g, want %g", i, grad[i], want_grad[i]);
    }
}

static void test_pool(void)
{
    const int B = 2, K = 3, P = 5;
    float logical[2][3][5], a[2][30], dg[6], g[2][6], da[2][30];
    fill_uniform(&logical[0][0][0], 30, 11);
    fill_uniform(dg, 6, 12);
    for (int nhwc = 0; nhwc < 2; nhwc++) {
        const act_shape s = {B, K, P, nhwc};
        for (int b = 0; b < B; b++)
            for (int k = 0; k < K; k++)
                for (int j = 0; j < P; j++)
                    a[nhwc][act_offset(s, b, k, j)] = logical[b][k][j];
        for (int e = 0; e < B * K; e++)
            pool_forward_element(a[nhwc], s, g[nhwc], e);
        for (int e = 0; e < B * K * P; e++)
            pool_backward_element(dg, s, da[nhwc], e);
        double inner_fwd = 0.0, inner_bwd = 0.0;
        for (int b = 0; b < B; b++)
            for (int k = 0; k < K; k++) {
                double mean = 0.0;
                for (int j = 0; j < P; j++)
                    mean += logical[b][k][j] / P;
                CHECK(close_to(g[nhwc][b * K + k], mean), "pool(%d,%d) nhwc=%d: %g, want %g", b, k, nhwc,
                      g[nhwc][b * K + k], mean);
                inner_fwd += g[nhwc][b * K + k] * dg[b * K + k];
                for (int j = 0; j < P; j++) {
                    const float got = da[nhwc][act_offset(s, b, k, j)];
                    CHECK(close_to(got, dg[b * K + k] / P), "pool backward (%d,%d,%d): %g", b, k, j, got);
                    inner_bwd += (double)logical[b][k][j] * got;
                }
            }
        /* the backward is the forward's adjoint: <pool(a), dg> = <a, pool_backward(dg)> */
        CHECK(close_to(inner_fwd, inner_bwd), "pool adjoint: %g vs %g", inner_fwd, inner_bwd);
    }
}

static void test_linear(void)
{
    const linear_shape s = {3, 5, 4};
    float g[15], W[20], bias[4], dz[12], z[12], dW[20], dbias[4], dg[15];
    fill_uniform(g, 15, 21);
    fill_uniform(W, 20, 22);
    fill_uniform(bias, 4, 23);
    fill_uniform(dz, 12, 24);
    for (int e = 0; e < 12; e++)
        linear_forward_element(g, W, bias, z, s, e);
    for (int e = 0; e < 4 * 6; e++)
        linear_backward_params_element(dz, g, dW, dbias, s, e);
    for (int e = 0; e < 15; e++)
        linear_backward_input_element(dz, W, dg, s, e);
    for (int b = 0; b < 3; b++)
        for (int o = 0; o < 4; o++) {
            double want = bias[o];
            for (int i = 0; i < 5; i++)
                want += (double)g[b * 5 + i] * W[o * 5 + i];
            CHECK(close_to(z[b * 4 + o], want), "linear z[%d][%d] = %g, want %g", b, o, z[b * 4 + o], want);
        }
    for (int o = 0; o < 4; o++) {
        double want_b = 0.0;
        for (int b = 0; b < 3; b++)
            want_b += dz[b * 4 + o];
        CHECK(close_to(dbias[o], want_b), "dbias[%d] = %g, want %g", o, dbias[o], want_b);
        for (int i = 0; i < 5; i++) {
            double want = 0.0;
            for (int b = 0; b < 3; b++)
                want += (double)dz[b * 4 + o] * g[b * 5 + i];
            CHECK(close_to(dW[o * 5 + i], want), "dW[%d][%d] = %g, want %g", o, i, dW[o * 5 + i], want);
        }
    }
    for (int b = 0; b < 3; b++)
        for (int i = 0; i < 5; i++) {
            double want = 0.0;
            for (int o = 0; o < 4; o++)
                want += (double)dz[b * 4 + o] * W[o * 5 + i];
            CHECK(close_to(dg[b * 5 + i], want), "dg[%d][%d] = %g, want %g", b, i, dg[b * 5 + i], want);
        }
}

/* -log softmax(z)[label], the definition, for small logits. */
static double xent_definition(const float *z, int classes, int label)
{
    double total = 0.0;
    for (int o = 0; o < classes; o++)
        total += exp((double)z[o]);
    return -log(exp((double)z[label]) / total);
}

static void test_softmax_xent(void)
{
    const int classes = 4, batch = 3;
    const int labels[3] = {2, 0, 3};
    float z[12], loss[3], dz[12];
    fill_uniform(z, 12, 31);
    const float scale = 1024.0f / batch;
    for (int b = 0; b < batch; b++)
        softmax_xent_element(z, labels, loss, dz, classes, scale, b);
    for (int b = 0; b < batch; b++) {
        const double want = xent_definition(z + b * classes, classes, labels[b]);
        CHECK(close_to(loss[b], want), "loss[%d] = %g, want %g", b, loss[b], want);
        double row = 0.0;
        for (int o = 0; o < classes; o++) {
            /* the gradient is the loss's derivative: central differences in fp64 */
            float zp[4], zm[4];
            memcpy(zp, z + b * classes, sizeof zp);
            memcpy(zm, z + b * classes, sizeof zm);
            const double h = 1e-3;
            zp[o] += (float)h;
            zm[o] -= (float)h;
            const double fd = (xent_definition(zp, classes, labels[b]) - xent_definition(zm, classes, labels[b])) /
                              ((double)zp[o] - (double)zm[o]);
            CHECK(fabs(dz[b * classes + o] / scale - fd) < 1e-5, "dz[%d][%d]/scale = %g, finite difference %g", b, o,
                  dz[b * classes + o] / scale, fd);
            row += dz[b * classes + o];
        }
        CHECK(fabs(row) < 1e-4 * scale, "the gradient of sample %d sums to %g, not 0", b, row);
    }
    /* huge logits: the maximum is subtracted, so nothing overflows */
    const float big[4] = {1000.0f, 990.0f, -1000.0f, 1000.0f};
    const int label0[1] = {1};
    float big_loss[1], big_dz[4];
    softmax_xent_element(big, label0, big_loss, big_dz, 4, 1.0f, 0);
    CHECK(fabs(big_loss[0] - (10.0 + log(2.0))) < 1e-4, "loss of huge logits %g, want %g", big_loss[0],
          10.0 + log(2.0));
    for (int o = 0; o < 4; o++)
        CHECK(isfinite(big_dz[o]), "gradient of huge logits not finite");
}

static void test_sgd_and_argmax(void)
{
    float w = 1.5f;
    CHECK(sgd_element(&w, 2.0f, 0.25f) && w == 1.0f, "sgd: w = %g, want 1", w);
    CHECK(!sgd_element(&w, INFINITY, 0.25f), "sgd accepted an infinite gradient");
    CHECK(!sgd_element(&w, NAN, 0.25f), "sgd accepted a NaN gradient");
    const float z[8] = {0.1f, 0.5f, 0.2f, 0.5f, -3.0f, -2.0f, -1.0f, -4.0f};
    CHECK(argmax_element(z, 4, 0) == 1, "argmax takes the first of equal maxima");
    CHECK(argmax_element(z, 4, 1) == 2, "argmax of sample 1");
}

/* The parameter tensors of a net_params, for sampling. */
static float *param_tensor(net_params *p, int t)
{
    return t < NET_CONVS ? p->conv_w[t] : t == NET_CONVS ? p->fc_w : p->fc_b;
}

static int64_t param_count(const net_shape *s, int t)
{
    return t < NET_CONVS ? problem_w_elems(&s->conv[t]) : t == NET_CONVS ? (int64_t)s->fc.out * s->fc.in : s->fc.out;
}

/* Finite differences of the loss against the backward pass. The loss is only piecewise smooth: every
 * ReLU input that crosses zero bends it, and one conv1 weight moves every conv1 output of its channel
 * and all that follows, so kinks are dense (with images scaled to unit variance, one every ~1e-3 to
 * 1e-4 of a conv1 weight on this tiny net). A quotient over an interval that holds a kink is off by
 * up to a few percent. Smaller steps meet fewer kinks but see more rounding: the logits are fp32, so
 * the loss is resolved to ~3e-8 and a quotient over h to ~3e-8 / h. So each weight gets the central
 * quotient and both one-sided ones at h = 1e-2, 1e-3 and 3e-4: the gradient is the one-sided
 * derivative on any side free of kinks, and one of these nine must agree to within 0.2% of the largest
 * gradient of the same tensor. A wrong gradient (a flipped tap, a transposed filter, a missed stride
 * phase, a wrong scale) is off by tens of percent. The net is small (batch 2, 8x8 images) to keep the
 * kinks few. */
static void test_gradients(float loss_scale)
{
    net_shape shape;
    char why[256];
    if (!net_shape_make(2, 8, &shape, why, sizeof why)) {
        CHECK(false, "net_shape_make: %s", why);
        return;
    }
    net_params initial;
    net_params_init(&initial, &shape, 5);
    for (int o = 0; o < shape.fc.out; o++)
        initial.fc_b[o] = 0.1f * (float)(o - 1); /* not zero, so a wrong bias gradient shows */
    net_cpu net;
    net_cpu_init(&net, &shape, &initial, loss_scale, false);
    float images[2 * 8 * 8];
    int labels[2];
    draw_batch(77, 0, 2, 8, images, labels);
    const double loss = net_cpu_forward(&net, images, labels);
    net_cpu_backward(&net);

    const char *names[] = {"conv1", "conv2", "conv3", "fc weight", "fc bias"};
    double worst = 0.0;
    int checked = 0;
    uint64_t pick = 12345;
    for (int t = 0; t < NET_CONVS + 2; t++) {
        const int64_t count = param_count(&shape, t);
        float *w = param_tensor(&net.params, t);
        const float *grad = param_tensor(&net.grads, t);
        double norm = 0.0; /* the tensor's gradient scale, for a relative error */
        for (int64_t i = 0; i < count; i++)
            norm = fmax(norm, fabs(grad[i] / loss_scale));
        for (int n = 0; n < 16 && n < count; n++) {
            pick = pick * 6364136223846793005ull + 1442695040888963407ull;
            const int64_t i = count <= 16 ? n : (int64_t)((pick >> 33) % (uint64_t)count);
            const float saved = w[i];
            const double analytic = grad[i] / loss_scale;
            const float steps[3] = {1e-2f, 1e-3f, 3e-4f};
            double err = INFINITY, central[3];
            for (int pass = 0; pass < 3; pass++) {
                w[i] = saved + steps[pass];
                const double up_at = w[i], up = net_cpu_forward(&net, images, labels);
                w[i] = saved - steps[pass];
                const double down_at = w[i], down = net_cpu_forward(&net, images, labels);
                w[i] = saved;
                central[pass] = (up - down) / (up_at - down_at);
                const double right = (up - loss) / (up_at - saved), left = (loss - down) / (saved - down_at);
                err = fmin(err, fmin(fabs(central[pass] - analytic), fmin(fabs(right - analytic), fabs(left - analytic))));
            }
            err /= fmax(norm, 1e-12);
            worst = fmax(worst, err);
            checked++;
            CHECK(err < 2e-3, "loss scale %g: %s[%lld]: backward %.6e, central differences %.6e / %.6e / %.6e (best "
                  "error %.2e of the tensor's largest gradient %.3e)", loss_scale, names[t], (long long)i, analytic,
                  central[0], central[1], central[2], err, norm);
        }
        CHECK(norm > 0.0, "%s has an all-zero gradient: nothing would learn", names[t]);
    }
    printf("gradient check, loss scale %g: %d parameters in 5 tensors, worst error %.2e of the tensor's largest "
           "gradient\n", loss_scale, checked, worst);
    net_cpu_free(&net);
    net_params_free(&initial);
}

/* Draws the same stream twice and checks what every backend relies on; then that each class's strokes
 * point where the label says: over many images the average structure tensor (sums of gx^2, gy^2 and
 * gx*gy of the pixel gradients) has its strong direction across the strokes. The noise is isotropic,
 * so it only adds the same amount to gx^2 and gy^2. */
static void test_data(void)
{
    enum { SIZE = 32, COUNT = 800 };
    float *a = malloc(sizeof(float) * SIZE * SIZE), *b = malloc(sizeof(float) * SIZE * SIZE);
    int per_class[DATA_CLASSES] = {0};
    double gxx[DATA_CLASSES] = {0}, gyy[DATA_CLASSES] = {0}, gxy[DATA_CLASSES] = {0};
    for (int i = 0; i < COUNT; i++) {
        const int la = draw_image(3, i, SIZE, a), lb = draw_image(3, i, SIZE, b);
        CHECK(la == lb && !memcmp(a, b, sizeof(float) * SIZE * SIZE), "image %d is not deterministic", i);
        CHECK(la >= 0 && la < DATA_CLASSES, "label %d out of range", la);
        per_class[la]++;
        for (int p = 0; p < SIZE * SIZE; p++)
            CHECK(half_to_float(float_to_half(a[p])) == a[p], "image %d pixel %d is not fp16-exact", i, p);
        for (int y = 1; y < SIZE - 1; y++)
            for (int x = 1; x < SIZE - 1; x++) {
                const double gx = a[y * SIZE + x + 1] - a[y * SIZE + x - 1];
                const double gy = a[(y + 1) * SIZE + x] - a[(y - 1) * SIZE + x];
                gxx[la] += gx * gx;
                gyy[la] += gy * gy;
                gxy[la] += gx * gy;
            }
    }
    draw_image(3, 0, SIZE, a);
    draw_image(4, 0, SIZE, b);
    CHECK(memcmp(a, b, sizeof(float) * SIZE * SIZE) != 0, "another seed draws the same image");
    for (int c = 0; c < DATA_CLASSES; c++)
        CHECK(per_class[c] > COUNT / DATA_CLASSES * 3 / 4, "class %d has %d of %d images", c, per_class[c], COUNT);
    /* 0 deg: horizontal strokes, gradients vertical; 90 deg: the reverse. 45 deg rises to the right
     * (rows grow downwards), so gradients lie along (1, 1): gx*gy > 0; 135 deg the reverse. */
    CHECK(gyy[0] > 1.2 * gxx[0], "class 0: gy^2 %g should exceed gx^2 %g", gyy[0], gxx[0]);
    CHECK(gxx[2] > 1.2 * gyy[2], "class 2: gx^2 %g should exceed gy^2 %g", gxx[2], gyy[2]);
    CHECK(gxy[1] > 0.1 * gxx[1], "class 1: gx*gy %g should be clearly positive", gxy[1]);
    CHECK(gxy[3] < -0.1 * gxx[3], "class 3: gx*gy %g should be clearly negative", gxy[3]);
    CHECK(fabs(gxy[0]) < 0.05 * gxx[0] && fabs(gxy[2]) < 0.05 * gxx[2], "classes 0 and 2 should have no diagonal");
    free(a);
    free(b);
}

static void test_shapes(void)
{
    net_shape s;
    char why[256];
    CHECK(net_shape_make(32, 32, &s, why, sizeof why), "the default network: %s", why);
    CHECK(s.conv[0].p == 16 && s.conv[1].p == 16 && s.conv[2].p == 8, "32x32 gives %d, %d, %d", s.conv[0].p,
          s.conv[1].p, s.conv[2].p);
    CHECK(s.conv[1].stride_h == 1 && s.conv[2].stride_h == 2, "conv2 runs dgrad 06a (stride 1), conv3 06b");
    CHECK(s.conv[1].c % 8 == 0 && s.conv[1].k % 8 == 0 && s.conv[2].c % 8 == 0 && s.conv[2].k % 8 == 0,
          "dgrad's layers need C and K multiples of 8 (06a/06b load 8 channels at a time)");
    const act_shape top = net_act_shape(&s, NET_CONVS, true);
    CHECK(top.channels == s.fc.in && top.pixels == 64, "the pooled features feed the classifier");
}

int main(void)
{
    test_layout();
    test_relu();
    test_pool();
    test_linear();
    test_softmax_xent();
    test_sgd_and_argmax();
    test_shapes();
    test_data();
    test_gradients(1.0f);
    test_gradients(1024.0f);
    if (failures) {
        printf("%d check(s) failed\n", failures);
        return 1;
    }
    printf("all checks passed\n");
    return 0;
}
