/* check.c: the one way the harness stops on an error. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounded.h"
#include "check.h"

static const char *program = "error";

void check_set_program(const char *name) { program = name; }

#if defined(__GNUC__)
__attribute__((noreturn))
#endif
static void vfail(int status, const char *fmt, va_list args)
{
    /* one line whatever the message names (a path, a flag's value): escaped and cut (bounded.h) */
    char message[4096], shown[4 * 600 + 8];
    vsnprintf(message, sizeof message, fmt, args);
    bounded_escape(shown, message, strlen(message), 600, false);
    fflush(stdout);
    fprintf(stderr, "%s: %s\n", program, shown);
    exit(status);
}

void fail(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vfail(1, fmt, args);
}

void fail_status(int status, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vfail(status, fmt, args);
}

bool try_device_alloc(void **ptr, size_t bytes)
{
    *ptr = NULL;
    if (bytes == 0)
        return true;
    cudaError_t err = cudaMalloc(ptr, bytes);
    if (err == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        *ptr = NULL;
        return false;
    }
    CUDA_CHECK(err);
    return true;
}

bool kernel_image_available(const void *kernel, const char *id, char *why, size_t why_len)
{
    struct cudaFuncAttributes attributes;
    cudaError_t err = cudaFuncGetAttributes(&attributes, kernel);
    if (err == cudaSuccess)
        return true;
    (void)cudaGetLastError(); /* an answer, not a failed launch */
    snprintf(why, why_len, "%s: no code this device can run: %s", id, cudaGetErrorString(err));
    return false;
}
