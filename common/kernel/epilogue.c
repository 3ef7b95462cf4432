/* epilogue.c: batch-norm folding and the epilogue's names. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "epilogue.h"

void bn_fold(int channels, const float *gamma, const float *beta, const float *mean, const float *var, float eps,
             float *scale, float *shift)
{
    for (int k = 0; k < channels; k++) {
        double s = (double)gamma[k] / sqrt((double)var[k] + eps);
        scale[k] = (float)s;
        shift[k] = (float)((double)beta[k] - (double)mean[k] * s);
    }
}

static const struct {
    const char *name;
    size_t offset;
} names[] = {
    {"bias", offsetof(epilogue_ops, bias)},
    {"bn", offsetof(epilogue_ops, scale_shift)},
    {"residual", offsetof(epilogue_ops, residual)},
    {"relu", offsetof(epilogue_ops, relu)},
};

bool epilogue_parse(const char *text, epilogue_ops *ops, char *why, size_t why_len)
{
    memset(ops, 0, sizeof *ops);
    if (strcmp(text, "none") == 0)
        return true;
    char copy[256];
    snprintf(copy, sizeof copy, "%s", text);
    for (char *save = NULL, *word = strtok_r(copy, ",+", &save); word; word = strtok_r(NULL, ",+", &save)) {
        bool known = false;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strcmp(word, names[i].name) == 0)
                *(bool *)((char *)ops + names[i].offset) = known = true;
        if (!known) {
            snprintf(why, why_len, "unknown epilogue operation '%s' (known: bias, bn, residual, relu, none)", word);
            return false;
        }
    }
    if (!epilogue_any(*ops)) {
        snprintf(why, why_len, "empty epilogue '%s' (say none for none)", text);
        return false;
    }
    return true;
}

void epilogue_format(epilogue_ops ops, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (*(const bool *)((const char *)&ops + names[i].offset))
            used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s", used ? "+" : "", names[i].name);
    if (!used)
        snprintf(buf, len, "none");
}
