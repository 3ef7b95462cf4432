/* fuzz_util.h: what every harness in tests/fuzz/ checks beyond "no crash, no hang, no leak" (which
 * libFuzzer and the sanitizers check): an error message is one line of printable ASCII. */
#ifndef FUZZ_UTIL_H
#define FUZZ_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Stops the run (a finding) unless message is non-empty printable ASCII, at most one trailing newline. */
static inline void fuzz_check_message(const char *what, const char *message, size_t len)
{
    if (len && message[len - 1] == '\n')
        len--;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)message[i] < 0x20 || (unsigned char)message[i] >= 0x7f) {
            fprintf(stderr, "fuzz: %s: byte %zu of the message is 0x%02x (not one printable line)\n", what, i,
                    (unsigned char)message[i]);
            abort();
        }
    if (len == 0) {
        fprintf(stderr, "fuzz: %s: an empty message\n", what);
        abort();
    }
}

/* The input as a NUL-terminated string (malloc'ed; NULL if out of memory, and the input is skipped). */
static inline char *fuzz_text(const unsigned char *data, size_t size)
{
    char *text = malloc(size + 1);
    if (text) {
        memcpy(text, data, size);
        text[size] = 0;
    }
    return text;
}

#endif
