/* bounded.h: input from outside the program (PTX text, .npy headers, command lines) is hostile until
 * checked. Every size, count and index read from it goes through these few helpers before it is used:
 *
 *   bounded_mul, bounded_add, bounded_align_up   arithmetic that says "too large" instead of wrapping:
 *                                                false when the exact result would exceed `limit` (or
 *                                                2^64), so a product of sizes can never wrap to a small
 *                                                number and pass a later check
 *   bounded_u64                                  a whole string as an unsigned integer in [0, max]: no sign,
 *                                                no trailing characters, no silent wrap ("abc" is not 0)
 *   quoted(text, len).s, shown_path(path).s      a piece of input for an error message: cut, control and
 *                                                non-ASCII bytes escaped, so a message is always one
 *                                                printable line
 *   bounded_read_file                            a whole regular file, at most so many bytes
 *
 * Header-only (static inline), so the emulator's library, ptxrun, the harness and the tests share it
 * without a link dependency. The limits themselves are stated where the sizes are read (emu/ptx.h,
 * common/harness/npy.h, emu/ptxrun.c) and in emu/README.md.
 */
#ifndef BOUNDED_H
#define BOUNDED_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* *out = a * b, if that is at most limit; false otherwise (*out untouched). */
static inline bool bounded_mul(uint64_t a, uint64_t b, uint64_t limit, uint64_t *out)
{
    uint64_t product;
    if (__builtin_mul_overflow(a, b, &product) || product > limit)
        return false;
    *out = product;
    return true;
}

/* *out = a + b, if that is at most limit; false otherwise. */
static inline bool bounded_add(uint64_t a, uint64_t b, uint64_t limit, uint64_t *out)
{
    uint64_t sum;
    if (__builtin_add_overflow(a, b, &sum) || sum > limit)
        return false;
    *out = sum;
    return true;
}

/* *out = x rounded up to a multiple of align (0 or 1: x itself), if that is at most limit. */
static inline bool bounded_align_up(uint64_t x, uint64_t align, uint64_t limit, uint64_t *out)
{
    if (align <= 1)
        return x <= limit ? (*out = x, true) : false;
    uint64_t sum;
    if (__builtin_add_overflow(x, align - 1, &sum))
        return false;
    uint64_t rounded = sum / align * align;
    if (rounded > limit)
        return false;
    *out = rounded;
    return true;
}

/* The whole of text as an unsigned integer in base (10, 16, or 0 for C's 0x/0 prefixes) in [0, max]. */
static inline bool bounded_u64(const char *text, int base, uint64_t max, uint64_t *out)
{
    /* strtoull skips spaces and accepts a sign ("-1" is 2^64-1): only a digit may come first */
    if (!text || !(*text >= '0' && *text <= '9'))
        return false;
    char *end;
    errno = 0;
    unsigned long long value = strtoull(text, &end, base);
    if (errno || *end || value > max)
        return false;
    *out = value;
    return true;
}

/* Writes text[0..len) for a message into out: at most max_chars characters of it (then "..."), with \n,
 * \t, \\, \' and \xNN for every byte outside printable ASCII; in single quotes if quote. out must hold
 * 4 * max_chars + 8 bytes. */
static inline void bounded_escape(char *out, const char *text, size_t len, size_t max_chars, bool quote)
{
    static const char hex[] = "0123456789abcdef";
    char *o = out;
    if (quote)
        *o++ = '\'';
    size_t n = len < max_chars ? len : max_chars;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\n')
            *o++ = '\\', *o++ = 'n';
        else if (c == '\t')
            *o++ = '\\', *o++ = 't';
        else if (c == '\\' || (quote && c == '\''))
            *o++ = '\\', *o++ = (char)c;
        else if (c < 0x20 || c >= 0x7f)
            *o++ = '\\', *o++ = 'x', *o++ = hex[c >> 4], *o++ = hex[c & 15];
        else
            *o++ = (char)c;
    }
    if (quote)
        *o++ = '\'';
    if (len > n)
        *o++ = '.', *o++ = '.', *o++ = '.';
    *o = 0;
}

/* A piece of input, ready for a message: 'like this', cut to BOUNDED_QUOTE_CHARS characters, escaped.
 * Returned by value, so it can stand in an argument list: failf(..., "found %s", quoted(p, n).s). */
enum { BOUNDED_QUOTE_CHARS = 40, BOUNDED_PATH_CHARS = 1024 };
typedef struct { char s[4 * BOUNDED_QUOTE_CHARS + 8]; } bounded_quote;

static inline bounded_quote quoted(const char *text, size_t len)
{
    bounded_quote q;
    bounded_escape(q.s, text, len, BOUNDED_QUOTE_CHARS, true);
    return q;
}

/* The same for a NUL-terminated string. */
static inline bounded_quote quoted_str(const char *text)
{
    size_t len = 0;
    while (text[len] && len <= BOUNDED_QUOTE_CHARS)
        len++;
    return quoted(text, len);
}

/* A path the user gave, for a message: as it is when it is printable ASCII (no quotes, so messages
 * read as before), escaped otherwise; cut at BOUNDED_PATH_CHARS. */
typedef struct { char s[4 * BOUNDED_PATH_CHARS + 8]; } bounded_path;

static inline bounded_path shown_path(const char *path)
{
    bounded_path q;
    size_t len = 0;
    while (path[len] && len <= BOUNDED_PATH_CHARS)
        len++;
    bounded_escape(q.s, path, len, BOUNDED_PATH_CHARS, false);
    return q;
}

/* Reads a whole regular file into a NUL-terminated buffer (malloc'ed; *len its length), refusing
 * anything that is not a regular file (a directory, a pipe) and files over max bytes. NULL with why =
 * one line otherwise. */
static inline char *bounded_read_file(const char *path, uint64_t max, size_t *len, char *why, size_t why_len)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    char *text = NULL;
    if (!f) {
        snprintf(why, why_len, "cannot open %s: %s", shown_path(path).s, strerror(errno));
        return NULL;
    }
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
        snprintf(why, why_len, "%s is not a regular file", shown_path(path).s);
    else if ((uint64_t)st.st_size > max)
        snprintf(why, why_len, "%s has %llu bytes, more than the %llu allowed", shown_path(path).s,
                 (unsigned long long)st.st_size, (unsigned long long)max);
    else if (!(text = malloc((size_t)st.st_size + 1)))
        snprintf(why, why_len, "out of memory reading %s", shown_path(path).s);
    else if ((*len = fread(text, 1, (size_t)st.st_size, f)) != (size_t)st.st_size || ferror(f)) {
        snprintf(why, why_len, "cannot read %s", shown_path(path).s);
        free(text);
        text = NULL;
    } else {
        text[*len] = 0;
    }
    fclose(f);
    return text;
}

#endif
