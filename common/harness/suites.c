/* suites.c: ResNet-50 v1.5 layers, the example problems of the cuDNN tutorials and composable_kernel,
 * MobileNetV2's layers. */
#include <stdio.h>
#include <string.h>

#include "suites.h"

#define GROUPED(suite_, layer_, n_, c_, hw_, k_, rs_, stride_, pad_, groups_)                       \
    {suite_, layer_, {.n = n_, .c = c_, .h = hw_, .w = hw_, .k = k_, .r = rs_, .s = rs_,             \
                      .pad_h = pad_, .pad_w = pad_, .stride_h = stride_, .stride_w = stride_,       \
                      .dil_h = 1, .dil_w = 1, .groups = groups_}}
#define LAYER(suite_, layer_, n_, c_, hw_, k_, rs_, stride_, pad_)                                  \
    GROUPED(suite_, layer_, n_, c_, hw_, k_, rs_, stride_, pad_, 1)
/* A depthwise 3x3: one filter per channel (groups = C = K), "same" padding. */
#define DEPTHWISE(layer_, c_, hw_, stride_) GROUPED("mobilenet", layer_, 32, c_, hw_, c_, 3, stride_, 1, c_)

static suite_layer layers[] = {
    /*                          layer               N   C    H=W   K     RxS str pad */
    LAYER("resnet50", "conv1",             32, 3,    224, 64,   7, 2, 3),
    LAYER("resnet50", "res2_1x1_reduce",   32, 256,  56,  64,   1, 1, 0),
    LAYER("resnet50", "res2_3x3",          32, 64,   56,  64,   3, 1, 1),
    LAYER("resnet50", "res3_3x3_s2",       32, 128,  56,  128,  3, 2, 1),
    LAYER("resnet50", "res3_proj",         32, 256,  56,  512,  1, 2, 0),
    LAYER("resnet50", "res4_3x3",          32, 256,  14,  256,  3, 1, 1),
    LAYER("resnet50", "res4_1x1_expand",   32, 256,  14,  1024, 1, 1, 0),
    LAYER("resnet50", "res5_3x3",          32, 512,  7,   512,  3, 1, 1),
    LAYER("resnet50", "res5_1x1_reduce",   32, 2048, 7,   512,  1, 1, 0),
    LAYER("resnet50", "big_3x3",           8,  128,  224, 128,  3, 1, 1),
    /* The tutorials' problems: cuDNN's first-graph example, its conv tutorial, composable_kernel's dgrad
     * example. */
    LAYER("tutorial", "first_graph",       8,  64,   56,  32,   3, 1, 1),
    LAYER("tutorial", "conv_tutorial",     16, 64,   56,  128,  3, 1, 1),
    LAYER("tutorial", "ck_dgrad",          128, 128, 71,  256,  3, 2, 1),
    /* MobileNetV2 (224x224, N=32): each bottleneck expands 1x1 (t=6), filters depthwise 3x3, projects
     * 1x1. One layer of each distinct shape, in network order. */
    LAYER("mobilenet", "conv_stem",        32, 3,    224, 32,   3, 2, 1),
    DEPTHWISE("dw32_112",                  32,   112, 1),
    LAYER("mobilenet", "pw_project_32_16", 32, 32,   112, 16,   1, 1, 0),
    LAYER("mobilenet", "pw_expand_16_96",  32, 16,   112, 96,   1, 1, 0),
    DEPTHWISE("dw96_112_s2",               96,   112, 2),
    LAYER("mobilenet", "pw_project_96_24", 32, 96,   56,  24,   1, 1, 0),
    LAYER("mobilenet", "pw_expand_24_144", 32, 24,   56,  144,  1, 1, 0),
    DEPTHWISE("dw144_56",                  144,  56,  1),
    DEPTHWISE("dw144_56_s2",               144,  56,  2),
    LAYER("mobilenet", "pw_project_144_32", 32, 144, 28,  32,   1, 1, 0),
    DEPTHWISE("dw192_28",                  192,  28,  1),
    DEPTHWISE("dw192_28_s2",               192,  28,  2),
    LAYER("mobilenet", "pw_expand_64_384", 32, 64,   14,  384,  1, 1, 0),
    DEPTHWISE("dw384_14",                  384,  14,  1),
    LAYER("mobilenet", "pw_project_384_96", 32, 384, 14,  96,   1, 1, 0),
    DEPTHWISE("dw576_14",                  576,  14,  1),
    DEPTHWISE("dw576_14_s2",               576,  14,  2),
    LAYER("mobilenet", "pw_expand_160_960", 32, 160, 7,   960,  1, 1, 0),
    DEPTHWISE("dw960_7",                   960,  7,   1),
    LAYER("mobilenet", "pw_project_960_320", 32, 960, 7,  320,  1, 1, 0),
    LAYER("mobilenet", "conv_last",        32, 320,  7,   1280, 1, 1, 0),
};
#undef DEPTHWISE
#undef LAYER
#undef GROUPED

static const int layer_total = sizeof layers / sizeof layers[0];

static void derive_output_sizes(void)
{
    static bool done = false;
    if (done)
        return;
    for (int i = 0; i < layer_total; i++) {
        char why[256];
        problem_validate(&layers[i].prob, why, sizeof why); /* every table entry is valid (tested) */
    }
    done = true;
}

int suite_layer_count(void)
{
    return layer_total;
}

const suite_layer *suite_layer_at(int index)
{
    derive_output_sizes();
    return index >= 0 && index < layer_total ? &layers[index] : NULL;
}

bool suite_exists(const char *suite)
{
    for (int i = 0; i < layer_total; i++)
        if (strcmp(layers[i].suite, suite) == 0)
            return true;
    return false;
}

bool suite_find(const char *spec, int batch, conv_problem *out, char *why, size_t why_len)
{
    derive_output_sizes();
    const char *slash = strchr(spec, '/');
    size_t suite_len = slash ? (size_t)(slash - spec) : 0;
    for (int i = 0; slash && i < layer_total; i++) {
        if (strlen(layers[i].suite) == suite_len && strncmp(layers[i].suite, spec, suite_len) == 0 &&
            strcmp(layers[i].layer, slash + 1) == 0) {
            *out = layers[i].prob;
            if (batch > 0) {
                out->n = batch;
                return problem_validate(out, why, why_len);
            }
            return true;
        }
    }
    int used = snprintf(why, why_len, "unknown layer '%s' (known:", spec);
    for (int i = 0; i < layer_total && used < (int)why_len; i++)
        used += snprintf(why + used, why_len - used, " %s/%s", layers[i].suite, layers[i].layer);
    if (used < (int)why_len)
        snprintf(why + used, why_len - used, ")");
    return false;
}
