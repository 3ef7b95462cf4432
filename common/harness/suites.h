/* suites.h: the named problems the benchmark runs: the suites resnet50, tutorial and mobilenet. */
#ifndef SUITES_H
#define SUITES_H

#include <stdbool.h>
#include <stddef.h>

#include "conv.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *suite;    /* "resnet50" */
    const char *layer;    /* "res2_3x3" */
    conv_problem prob;    /* validated: p and q are set */
} suite_layer;

/* Every layer of every suite, in order. */
int suite_layer_count(void);
const suite_layer *suite_layer_at(int index);

/* Whether a suite of this name exists. */
bool suite_exists(const char *suite);

/* Looks up "suite/layer". batch > 0 overrides the layer's N. Returns false with a reason (naming
 * the known layers) if there is no such layer. */
bool suite_find(const char *spec, int batch, conv_problem *out, char *why, size_t why_len);

#ifdef __cplusplus
}
#endif

#endif
