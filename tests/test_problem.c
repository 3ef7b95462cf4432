/* The problem descriptor: output sizes worked by hand, every validation message, the cost model,
 * and the shape tables (suites, the check list) are all valid. */
#include <string.h>

#include "conv.h"
#include "harness.h"
#include "suites.h"
#include "test_util.h"

static bool rejects(conv_problem prob, const char *expected_fragment)
{
    char why[256] = "";
    bool valid = problem_validate(&prob, why, sizeof why);
    if (valid || !strstr(why, expected_fragment)) {
        printf("  expected rejection containing '%s', got %s '%s'\n", expected_fragment, valid ? "valid" : "", why);
        return false;
    }
    return true;
}

int main(void)
{
    /* P = (H + 2*pad - dil*(R-1) - 1) / stride + 1, worked by hand */
    EXPECT(conv_out_size(56, 1, 1, 3, 1) == 56, "same padding keeps 56");
    EXPECT(conv_out_size(56, 0, 1, 3, 1) == 54, "valid 3x3 loses 2");
    EXPECT(conv_out_size(56, 2, 1, 3, 1) == 58, "full padding gains 2");
    EXPECT(conv_out_size(56, 1, 1, 3, 2) == 28, "stride 2 halves");
    EXPECT(conv_out_size(224, 3, 1, 7, 2) == 112, "conv1: 224 -> 112");
    EXPECT(conv_out_size(56, 2, 2, 3, 1) == 56, "dilation 2 with pad 2 keeps 56 (a 5x5 span)");
    EXPECT(conv_out_size(71, 1, 1, 3, 2) == 36, "the composable_kernel seed: 71 -> 36");
    EXPECT(conv_out_size(5, 0, 1, 5, 1) == 1, "filter as large as the image: one output");
    EXPECT(conv_out_size(4, 0, 1, 5, 1) == 0, "filter larger than the image: none");
    EXPECT(conv_out_size(4, 0, 3, 3, 1) == 0, "dilated span 7 > 4: none");
    EXPECT(conv_out_size(1, 4, 1, 3, 3) == 3, "padding larger than the filter: (1+8-3)/3+1 = 3");

    conv_problem prob = problem_make(32, 64, 56, 56, 64, 3, 3);
    prob.pad_h = prob.pad_w = 1;
    char why[256];
    EXPECT(problem_validate(&prob, why, sizeof why), "res2_3x3 is valid: %s", why);
    EXPECT(prob.p == 56 && prob.q == 56, "p %d q %d", prob.p, prob.q);
    EXPECT_NEAR(problem_flops(&prob), 2.0 * 32 * 56 * 56 * 64 * 64 * 9, 0);
    EXPECT(problem_reduction_length(&prob, PASS_FPROP) == 576, "C*R*S");
    EXPECT(problem_reduction_length(&prob, PASS_DGRAD) == 576, "K*R*S");
    EXPECT(problem_reduction_length(&prob, PASS_WGRAD) == 32 * 56 * 56, "N*P*Q");
    EXPECT_NEAR(problem_min_bytes(&prob, PASS_FPROP, DTYPE_F16),
                2.0 * (32.0 * 64 * 56 * 56 * 2 + 64 * 64 * 9), 0);
    char text[128];
    problem_format(&prob, text, sizeof text);
    EXPECT(strcmp(text, "n32 c64 56x56 k64 3x3 s1 p1 d1 g1") == 0, "'%s'", text);

    conv_problem grouped = problem_make(2, 32, 8, 8, 64, 3, 3);
    grouped.groups = 4;
    EXPECT(problem_validate(&grouped, why, sizeof why), "%s", why);
    EXPECT(problem_w_elems(&grouped) == 64 * 8 * 9, "w is K x C/groups x R x S");
    EXPECT_NEAR(problem_flops(&grouped), 2.0 * 2 * 6 * 6 * 64 * 8 * 9, 0);

    /* every impossible problem gets a reason */
    conv_problem bad = problem_make(0, 3, 8, 8, 4, 3, 3);
    EXPECT(rejects(bad, "n must be positive"), "n = 0");
    bad = problem_make(1, 3, 8, 8, -4, 3, 3);
    EXPECT(rejects(bad, "k must be positive"), "k < 0");
    bad = problem_make(1, 3, 8, 8, 4, 3, 3), bad.stride_w = 0;
    EXPECT(rejects(bad, "stride_w must be positive"), "stride 0");
    bad = problem_make(1, 3, 8, 8, 4, 3, 3), bad.dil_h = 0;
    EXPECT(rejects(bad, "dil_h must be positive"), "dilation 0");
    bad = problem_make(1, 3, 8, 8, 4, 3, 3), bad.pad_h = -1;
    EXPECT(rejects(bad, "padding must be non-negative"), "negative padding");
    bad = problem_make(1, 6, 8, 8, 4, 3, 3), bad.groups = 4;
    EXPECT(rejects(bad, "groups (4) must divide both c (6) and k (4)"), "groups");
    bad = problem_make(1, 3, 2, 8, 4, 3, 3);
    EXPECT(rejects(bad, "the output would be empty"), "filter taller than the image");
    bad = problem_make(1, 3, 8, 8, 4, 3, 3), bad.dil_w = 5;
    EXPECT(rejects(bad, "spans 3x11"), "dilated span too wide");
    bad = problem_make(1024, 1024, 1024, 1024, 4, 1, 1);
    EXPECT(rejects(bad, "over the 2^31-1 that 32-bit index math allows"), "x too large for int32");
    bad = problem_make(1, 1, 8, 8, 1, 1, 1), bad.pad_h = 2000000000;
    EXPECT(rejects(bad, "padded input row"), "padding overflows int32");

    EXPECT(problem_fits_memory(&prob, DTYPE_F32, 0, 1e9, why, sizeof why), "res2_3x3 fits in 1 GB");
    EXPECT(!problem_fits_memory(&prob, DTYPE_F32, 0, 1e6, why, sizeof why) && strstr(why, "GiB free"),
           "not in 1 MB: '%s'", why);

    /* the shape tables are valid and hold the published shapes */
    for (int i = 0; i < suite_layer_count(); i++) {
        conv_problem layer = suite_layer_at(i)->prob;
        EXPECT(problem_validate(&layer, why, sizeof why), "%s/%s: %s", suite_layer_at(i)->suite,
               suite_layer_at(i)->layer, why);
    }
    conv_problem found;
    EXPECT(suite_find("resnet50/conv1", 0, &found, why, sizeof why) && found.p == 112 && found.c == 3,
           "conv1 112x112");
    EXPECT(suite_find("tutorial/ck_dgrad", 0, &found, why, sizeof why) && found.p == 36 && found.n == 128,
           "the composable_kernel problem: 36x36");
    EXPECT(suite_find("resnet50/res5_3x3", 4, &found, why, sizeof why) && found.n == 4, "batch override");
    EXPECT(!suite_find("resnet50/nope", 0, &found, why, sizeof why) && strstr(why, "unknown layer"), "%s", why);
    EXPECT(!suite_find("nonsense", 0, &found, why, sizeof why), "no slash");
    for (int i = 0; i < check_fixed_count(); i++) {
        conv_problem fixed = check_fixed_problem(i);
        EXPECT(problem_validate(&fixed, why, sizeof why), "fixed shape %d: %s", i, why);
    }
    uint64_t state = 7;
    for (int i = 0; i < 500; i++) {
        conv_problem random = check_random_problem(&state);
        EXPECT(problem_validate(&random, why, sizeof why), "random shape %d: %s", i, why);
    }
    return test_summary("test_problem");
}
