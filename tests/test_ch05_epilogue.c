/* The fused epilogue's definition and its plumbing through the harness, on the CPU:
 *   - batch-norm folding equals batch norm;
 *   - the order of operations (bias, scale+shift, residual, ReLU) on hand-worked values;
 *   - parsing and naming;
 *   - run_kernel with every combination of operations, through a CPU kernel that fuses them correctly
 *     (passes), one that applies ReLU before the residual and one that ignores the bias (both must fail):
 *     the reference chain really checks the order and the operands;
 *   - the operands through .npy: --save-npy writes them, --load-npy reads them back (same result), and a
 *     bias or residual of the wrong size stops the run with one line naming the file and the shape. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "epilogue.h"
#include "harness.h"
#include "npy.h"
#include "tensor.h"
#include "test_util.h"

/* A plain fp32 NCHW convolution with the epilogue fused in, the way a GPU kernel would: in the
 * accumulator, before the store. `mistake` selects a deliberate error. */
enum { CORRECT, RELU_BEFORE_RESIDUAL, IGNORES_BIAS };
static int mistake = CORRECT;

static void fused_cpu(const conv_problem *prob, void *x_ptr, void *w_ptr, void *y_ptr, void *workspace,
                      const struct conv_epilogue *ep)
{
    (void)workspace;
    const float *x = x_ptr, *w = w_ptr, *residual = ep ? ep->residual : NULL;
    float *y = y_ptr;
    const int cg = prob->c / prob->groups, kg = prob->k / prob->groups;
    for (int n = 0; n < prob->n; n++)
        for (int k = 0; k < prob->k; k++)
            for (int p = 0; p < prob->p; p++)
                for (int q = 0; q < prob->q; q++) {
                    double v = 0.0;
                    for (int c = 0; c < cg; c++)
                        for (int r = 0; r < prob->r; r++)
                            for (int s = 0; s < prob->s; s++) {
                                int h = p * prob->stride_h - prob->pad_h + r * prob->dil_h;
                                int wi = q * prob->stride_w - prob->pad_w + s * prob->dil_w;
                                if (h >= 0 && h < prob->h && wi >= 0 && wi < prob->w)
                                    v += (double)x[(((size_t)n * prob->c + k / kg * cg + c) * prob->h + h) * prob->w + wi] *
                                         w[(((size_t)k * cg + c) * prob->r + r) * prob->s + s];
                            }
                    size_t at = (((size_t)n * prob->k + k) * prob->p + p) * prob->q + q;
                    epilogue_ops ops = ep ? ep->ops : (epilogue_ops){0};
                    if (mistake == RELU_BEFORE_RESIDUAL && ops.relu && ops.residual) {
                        ops.residual = false;
                        v = epilogue_apply(ops, v, ep->bias ? ep->bias[k] : 0, ep->scale ? ep->scale[k] : 1,
                                           ep->shift ? ep->shift[k] : 0, 0) + residual[at];
                    } else {
                        if (mistake == IGNORES_BIAS)
                            ops.bias = false;
                        v = epilogue_apply(ops, v, ops.bias ? ep->bias[k] : 0, ops.scale_shift ? ep->scale[k] : 1,
                                           ops.scale_shift ? ep->shift[k] : 0, ops.residual ? residual[at] : 0);
                    }
                    y[at] = (float)v;
                }
}

static void plain_cpu(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    fused_cpu(prob, x, w, y, workspace, NULL);
}

static const conv_kernel fused_kernel = {.id = "t1", .name = "test: fused epilogue on the CPU",
                                         .source = "tests/test_ch05_epilogue.c",
                                         .pass = PASS_FPROP, .dtype = DTYPE_F32, .layout = LAYOUT_NCHW,
                                         .device = ON_CPU, .launch = plain_cpu, .launch_fused = fused_cpu};

static bool run_with(epilogue_ops ops, const conv_problem *prob)
{
    run_request request = run_request_defaults(&fused_kernel, prob);
    request.time = false;
    request.epilogue = ops;
    return run_kernel(&request).status == RUN_PASS;
}

/* Runs the fused CPU kernel on prob with every operation, reading inputs and operands from load_dir (if
 * not NULL) and writing them to save_dir (if not NULL), in a child process: a bad file to load ends a
 * run with exit status 2. Returns the child's exit status; its stderr goes to err_path. */
static int run_in_child(const conv_problem *prob, const char *load_dir, const char *save_dir, const char *err_path)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen(err_path, "w", stderr))
            _exit(99);
        run_request request = run_request_defaults(&fused_kernel, prob);
        request.time = false;
        request.epilogue = (epilogue_ops){true, true, true, true};
        request.load_dir = load_dir;
        request.save_dir = save_dir;
        _exit(run_kernel(&request).status == RUN_PASS ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_npy_operands(const char *tmp)
{
    char dir[4096], err[4200], path[4300], line[1024];
    snprintf(dir, sizeof dir, "%s/epilogue_npy", tmp);
    snprintf(err, sizeof err, "%s/stderr.txt", dir);
    mkdir(dir, 0755);
    conv_problem prob = check_fixed_problem(1);
    EXPECT(run_in_child(&prob, NULL, dir, err) == 0, "--save-npy with an epilogue runs");
    const char *names[] = {"bias", "scale", "shift", "residual"};
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s.npy", dir, names[i]);
        npy_array array;
        char why[4400];
        bool read = npy_read(path, &array, why, sizeof why);
        EXPECT(read && array.ndim == (i < 3 ? 1 : 4) && array.shape[0] == (i < 3 ? prob.k : prob.n), "%s: %s",
               path, read ? "wrong shape" : why);
        if (read)
            free(array.data);
    }
    EXPECT(run_in_child(&prob, dir, NULL, err) == 0, "--load-npy of what --save-npy wrote verifies");

    /* a bias of K+1 values: one line naming the file and the expected shape, exit 2 (bad input) */
    snprintf(path, sizeof path, "%s/bias.npy", dir);
    float wrong[64] = {0};
    int64_t shape[1] = {prob.k + 1};
    char why[4400];
    EXPECT(npy_write(path, NPY_F32, 1, shape, wrong, why, sizeof why), "%s", why);
    EXPECT(run_in_child(&prob, dir, NULL, err) == 2, "a wrong-sized bias stops the run as bad input");
    FILE *f = fopen(err, "r");
    int lines = 0;
    bool named = false;
    while (f && fgets(line, sizeof line, f)) {
        lines++;
        named |= strstr(line, "bias.npy: shape (") != NULL && strstr(line, ") does not match the problem: expected (");
    }
    if (f)
        fclose(f);
    EXPECT(lines == 1 && named, "one line naming bias.npy and the shape (%d lines)", lines);
}

int main(int argc, char **argv)
{
    /* batch norm, folded */
    float gamma[4] = {1.0f, 0.5f, 2.0f, -1.0f}, beta[4] = {0.0f, 1.0f, -0.5f, 0.25f};
    float mean[4] = {0.0f, 2.0f, -1.0f, 0.5f}, var[4] = {1.0f, 4.0f, 0.25f, 9.0f}, scale[4], shift[4];
    bn_fold(4, gamma, beta, mean, var, 1e-5f, scale, shift);
    for (int k = 0; k < 4; k++)
        for (double v = -3.0; v <= 3.0; v += 0.5) {
            double bn = gamma[k] * (v - mean[k]) / sqrt(var[k] + 1e-5) + beta[k];
            EXPECT_NEAR(v * scale[k] + shift[k], bn, 1e-5 * (1.0 + fabs(bn)));
        }

    /* the order: ((v + bias) * scale + shift + residual), then ReLU */
    epilogue_ops all = {true, true, true, true};
    EXPECT(epilogue_apply(all, 1.0, 2.0, 3.0, -4.0, 0.5) == 5.5, "(1+2)*3-4+0.5 = 5.5");
    EXPECT(epilogue_apply(all, 1.0, 2.0, 3.0, -4.0, -6.0) == 0.0, "ReLU last: -1 clamps to 0");
    epilogue_ops relu_only = {false, false, false, true};
    EXPECT(epilogue_apply(relu_only, -2.0, 9, 9, 9, 9) == 0.0 && epilogue_apply(relu_only, 2.0, 9, 9, 9, 9) == 2.0,
           "only what is asked for");

    /* names */
    epilogue_ops parsed;
    char why[256], text[64];
    EXPECT(epilogue_parse("relu,bn,bias", &parsed, why, sizeof why) && parsed.bias && parsed.scale_shift &&
               parsed.relu && !parsed.residual, "parse");
    epilogue_format(parsed, text, sizeof text);
    EXPECT(strcmp(text, "bias+bn+relu") == 0, "format: %s", text);
    EXPECT(epilogue_parse("none", &parsed, why, sizeof why) && !epilogue_any(parsed), "none");
    EXPECT(!epilogue_parse("bias,gelu", &parsed, why, sizeof why) && strstr(why, "'gelu'"), "%s", why);

    /* every combination through the harness, on the fixed awkward shapes */
    int failures_correct = 0, caught_order = 0, caught_bias = 0, order_cases = 0, bias_cases = 0;
    for (int mask = 1; mask < 16; mask++) {
        epilogue_ops ops = {mask & 1, (mask >> 1) & 1, (mask >> 2) & 1, (mask >> 3) & 1};
        for (int i = 0; i < check_fixed_count(); i += 3) {
            conv_problem prob = check_fixed_problem(i);
            mistake = CORRECT;
            failures_correct += !run_with(ops, &prob);
            /* with a handful of outputs the wrong order can give the right answer by chance */
            if (ops.relu && ops.residual && problem_y_elems(&prob) >= 64) {
                mistake = RELU_BEFORE_RESIDUAL;
                order_cases++;
                caught_order += !run_with(ops, &prob);
            }
            if (ops.bias) {
                mistake = IGNORES_BIAS;
                bias_cases++;
                caught_bias += !run_with(ops, &prob);
            }
        }
    }
    EXPECT(failures_correct == 0, "%d correct fused runs failed verification", failures_correct);
    EXPECT(caught_order == order_cases, "ReLU before the residual caught %d of %d times", caught_order, order_cases);
    EXPECT(caught_bias == bias_cases, "an ignored bias caught %d of %d times", caught_bias, bias_cases);

    /* a kernel without a fused epilogue says so */
    conv_kernel plain = fused_kernel;
    plain.launch_fused = NULL;
    conv_problem prob = check_fixed_problem(1);
    run_request request = run_request_defaults(&plain, &prob);
    request.epilogue = all;
    run_outcome outcome = run_kernel(&request);
    EXPECT(outcome.status == RUN_UNSUPPORTED && strstr(outcome.why, "no fused epilogue"), "%s", outcome.why);

    mistake = CORRECT;
    test_npy_operands(argc > 1 ? argv[1] : ".");
    return test_summary("test_ch05_epilogue");
}
