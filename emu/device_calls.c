/* device_calls.c: the CUDA runtime's device-side functions that a kernel calls by name. nvcc compiles
 * printf() to a call of vprintf(format, arguments) and assert() to a call of __assertfail(message, file,
 * line, function, char size) (CUDA C++ Programming Guide, "Formatted Output" and "Assertion"); parse.c
 * accepts those two extern callees and no other. A call of a .func of the module is functions.c's.
 *
 * A call's operands are .param variables of the call's scope, which live in the thread's local memory
 * here (parse.c): each source operand of the instruction holds one's offset. vprintf's arguments are
 * packed by the caller into a local buffer, each at a multiple of its own size, in the order the format
 * names them: 4 bytes for the integer conversions (8 with the l, ll, z, j and t sizes), 8 for a double
 * (a float argument is promoted), a string's or a pointer's 8-byte address.
 *
 * On a GPU printf's output is buffered and appears when the kernel has finished; here each call prints
 * its line as it runs, whole, so lines of different threads never mix within a line. An assertion that
 * fails stops the launch with one error line (cudaErrorAssert, as on a GPU).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bounded.h"
#include "interp.h"

#define MAX_STRING 4096 /* a format or %s string longer than this is an error, not an endless read */
#define MAX_SHOWN 200   /* characters of an assertion's message, file and function in its error line */

/* 8 bytes at `addr` of `space` for `lane`: false after reporting a bad access. */
static bool read_u64(block *b, warp *w, const insn *in, uint32_t lane, int space, uint64_t addr, uint64_t *out)
{
    const uint8_t *p = mem_access(b, w, in, lane, space, addr, 8, ACCESS_READ);
    if (p)
        memcpy(out, p, 8);
    return p != NULL;
}

/* The NUL-terminated string at the generic address `addr` into out: false after reporting a bad access or
 * a string longer than MAX_STRING. */
static bool read_string(block *b, warp *w, const insn *in, uint32_t lane, uint64_t addr, char *out)
{
    for (int i = 0; i < MAX_STRING; i++) {
        const uint8_t *p = mem_access(b, w, in, lane, SPACE_GENERIC, addr + (uint64_t)i, 1, ACCESS_READ);
        if (!p)
            return false;
        out[i] = (char)*p;
        if (!*p)
            return true;
    }
    fault(b, in, (int)lane, w, EMU_ERR_INVALID, "a string of more than %d bytes at 0x%" PRIx64 " (no NUL)",
          MAX_STRING, addr);
    return false;
}

/* A growing line of output. */
typedef struct {
    char text[2 * MAX_STRING];
    size_t used;
} line_buffer;

static void append(line_buffer *line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(line_buffer *line, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(line->text + line->used, sizeof line->text - line->used, fmt, args);
    va_end(args);
    if (n > 0)
        line->used += (size_t)n < sizeof line->text - line->used ? (size_t)n : sizeof line->text - line->used - 1;
}

static pthread_mutex_t output_lock = PTHREAD_MUTEX_INITIALIZER;

/* vprintf for one thread: the format's text and each conversion of the next packed argument. Returns the
 * number of arguments read (printf's return value), or -1 after reporting a bad access. */
static int device_printf(block *b, warp *w, const insn *in, uint32_t lane, uint64_t format, uint64_t arguments)
{
    char fmt[MAX_STRING], text[MAX_STRING];
    if (!read_string(b, w, in, lane, format, fmt))
        return -1;
    line_buffer line = {.used = 0};
    uint64_t offset = 0;
    int count = 0;
    for (const char *c = fmt; *c;) {
        if (*c != '%') {
            append(&line, "%c", *c++);
            continue;
        }
        if (c[1] == '%') {
            append(&line, "%%");
            c += 2;
            continue;
        }
        /* %[flags][width][.precision][size]type, width and precision given in the format (a * would take
         * an argument of its own: refused rather than guessed) */
        const char *start = c++;
        c += strspn(c, "-+ #0");
        c += strspn(c, "0123456789");
        if (*c == '.')
            c++, c += strspn(c, "0123456789");
        const char *size = c;
        c += strspn(c, "hljztL");
        const char type = *c;
        if (!type || !strchr("diuoxXcfFeEgGaAsp", type)) {
            fault(b, in, (int)lane, w, EMU_ERR_INVALID, "printf: conversion %s is not one the emulator knows",
                  quoted(start, (size_t)(c - start + (type != 0))).s);
            return -1;
        }
        c++;
        const bool wide = strchr("diuoxXc", type) ? strspn(size, "ljzt") > 0 : true;
        const uint64_t bytes = wide ? 8 : 4;
        offset = (offset + bytes - 1) / bytes * bytes;
        uint64_t value = 0;
        const uint8_t *p = mem_access(b, w, in, lane, SPACE_GENERIC, arguments + offset, bytes, ACCESS_READ);
        if (!p)
            return -1;
        memcpy(&value, p, bytes);
        offset += bytes;
        count++;
        /* the conversion as written, without its size, with the host's own size for the value read */
        char spec[64];
        const int plain = (int)(size - start) < 48 ? (int)(size - start) : 48;
        if (type == 's') {
            if (!read_string(b, w, in, lane, value, text))
                return -1;
            snprintf(spec, sizeof spec, "%.*ss", plain, start);
            append(&line, spec, text);
        } else if (type == 'p') {
            snprintf(spec, sizeof spec, "%.*s" "%s", plain, start, PRIx64);
            append(&line, "0x");
            append(&line, spec, value);
        } else if (strchr("fFeEgGaA", type)) {
            double v;
            memcpy(&v, &value, 8);
            snprintf(spec, sizeof spec, "%.*s%c", plain, start, type);
            append(&line, spec, v);
        } else if (type == 'c') {
            snprintf(spec, sizeof spec, "%.*sc", plain, start);
            append(&line, spec, (int)(unsigned char)value);
        } else if (type == 'd' || type == 'i') {
            snprintf(spec, sizeof spec, "%.*s%s", plain, start, PRId64);
            append(&line, spec, wide ? (int64_t)value : (int64_t)(int32_t)value);
        } else {
            snprintf(spec, sizeof spec, "%.*s%s", plain, start,
                     type == 'u' ? PRIu64 : type == 'o' ? PRIo64 : type == 'x' ? PRIx64 : PRIX64);
            append(&line, spec, wide ? value : (uint64_t)(uint32_t)value);
        }
    }
    pthread_mutex_lock(&output_lock);
    fwrite(line.text, 1, line.used, stdout);
    fflush(stdout);
    pthread_mutex_unlock(&output_lock);
    return count;
}

step runtime_call(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t m)
{
    FOR_LANES(m, l) {
        /* each operand: the offset of a .param variable in this thread's local memory */
        uint64_t value[6] = {0};
        for (int i = in->mode == CALL_VPRINTF ? 1 : 0; i < in->n_src; i++) {
            if (in->mode == CALL_ASSERTFAIL && i == 2) { /* the line: a .b32 */
                const uint8_t *p = mem_access(b, w, in, (uint32_t)l, SPACE_LOCAL, r[o[i]][l], 4, ACCESS_READ);
                if (!p)
                    return STEP_FAULT;
                memcpy(&value[i], p, 4);
            } else if (!read_u64(b, w, in, (uint32_t)l, SPACE_LOCAL, r[o[i]][l], &value[i])) {
                return STEP_FAULT;
            }
        }
        if (in->mode == CALL_VPRINTF) {
            const int count = device_printf(b, w, in, (uint32_t)l, value[1], value[2]);
            if (count < 0)
                return STEP_FAULT;
            uint8_t *ret = mem_access(b, w, in, (uint32_t)l, SPACE_LOCAL, r[o[0]][l], 4, ACCESS_WRITE);
            if (!ret)
                return STEP_FAULT;
            const int32_t returned = count;
            memcpy(ret, &returned, 4);
            continue;
        }
        char message[MAX_STRING], file[MAX_STRING], function[MAX_STRING];
        if (!read_string(b, w, in, (uint32_t)l, value[0], message) ||
            !read_string(b, w, in, (uint32_t)l, value[1], file) ||
            !read_string(b, w, in, (uint32_t)l, value[3], function))
            return STEP_FAULT;
        /* device memory's bytes, escaped and cut, so the report stays one printable line */
        char shown[3][4 * MAX_SHOWN + 8];
        bounded_escape(shown[0], message, strlen(message), MAX_SHOWN, false);
        bounded_escape(shown[1], file, strlen(file), MAX_SHOWN, false);
        bounded_escape(shown[2], function, strlen(function), MAX_SHOWN, false);
        fault(b, in, l, w, EMU_ERR_TRAP, "assertion `%s` failed (%s:%" PRIu32 ", in %s)", shown[0], shown[1],
              (uint32_t)value[2], shown[2]);
        return STEP_FAULT;
    }
    return STEP_NEXT;
}
