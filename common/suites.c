/* suites.c: ResNet-50 v1.5 layers and the seed documents' examples. */
#include <stdio.h>
#include <string.h>

#include "suites.h"

#define LAYER(suite_, layer_, n_, c_, hw_, k_, rs_, stride_, pad_)                                  \
    {suite_, layer_, {.n = n_, .c = c_, .h = hw_, .w = hw_, .k = k_, .r = rs_, .s = rs_,             \
                      .pad_h = pad_, .pad_w = pad_, .stride_h = stride_, .stride_w = stride_,       \
                      .dil_h = 1, .dil_w = 1, .groups = 1}}

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
    /* The seeds: cuDNN's first-graph example, its conv tutorial, composable_kernel's dgrad example. */
    LAYER("seeds", "first_graph",          8,  64,   56,  32,   3, 1, 1),
    LAYER("seeds", "conv_tutorial",        16, 64,   56,  128,  3, 1, 1),
    LAYER("seeds", "ck_dgrad",             128, 128, 71,  256,  3, 2, 1),
};
#undef LAYER

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
