/* check.h: every CUDA, cuBLAS and cuDNN call goes through one of these.
 *
 * A failed call prints one line naming the call, where it was made and the library's own message,
 * then exits with status 1. For a teaching harness a clear stop beats unwinding: there is nothing a
 * benchmark can do about a failed allocation except say so.
 */
#ifndef CHECK_H
#define CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Names the program in every message below ("conv: ..."; cli_set_program() sets it); "error" until then. */
void check_set_program(const char *name);

/* Prints "<program>: <what>" and exits 1. The single place the harness gives up. */
void fail(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((noreturn, format(printf, 1, 2)))
#endif
    ;

/* The same with another exit status: 2 for bad input (an unusable --load-npy file, like a bad flag). */
void fail_status(int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((noreturn, format(printf, 2, 3)))
#endif
    ;

/* cudaMalloc that treats running out of device memory as an answer rather than an error: a large
 * problem that fits our kernel may not leave room for cuDNN's, and that deserves "n/a", not an exit.
 * Returns false (with *ptr NULL and the error cleared) only for cudaErrorMemoryAllocation; any other
 * failure is fatal. Zero bytes: *ptr NULL, true. */
bool try_device_alloc(void **ptr, size_t bytes);

/* Whether the device has code it can run for this kernel (asked with cudaFuncGetAttributes): on a GPU,
 * machine code or PTX for its architecture; on the PTX emulator, PTX whose instructions it implements.
 * Otherwise false, with "ID: <the runtime's reason>" in why, and the error cleared. */
bool kernel_image_available(const void *kernel, const char *id, char *why, size_t why_len);

#ifdef __cplusplus
}
#endif

#define CUDA_CHECK(call)                                                                          \
    do {                                                                                          \
        cudaError_t check_status_ = (call);                                                       \
        if (check_status_ != cudaSuccess)                                                         \
            fail("%s:%d: %s: %s (%s)", __FILE__, __LINE__, #call,                                 \
                 cudaGetErrorString(check_status_), cudaGetErrorName(check_status_));             \
    } while (0)

/* After a kernel launch: catches bad launch configurations at once (asynchronous faults surface at
 * the next synchronizing call, which is checked too). */
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

#define CUBLAS_CHECK(call)                                                                        \
    do {                                                                                          \
        cublasStatus_t check_status_ = (call);                                                    \
        if (check_status_ != CUBLAS_STATUS_SUCCESS)                                               \
            fail("%s:%d: %s: cuBLAS status %d (%s)", __FILE__, __LINE__, #call,                   \
                 (int)check_status_, cublasGetStatusString(check_status_));                       \
    } while (0)

#define CUDNN_CHECK(call)                                                                         \
    do {                                                                                          \
        cudnnStatus_t check_status_ = (call);                                                     \
        if (check_status_ != CUDNN_STATUS_SUCCESS)                                                \
            fail("%s:%d: %s: %s", __FILE__, __LINE__, #call, cudnnGetErrorString(check_status_)); \
    } while (0)

#endif
