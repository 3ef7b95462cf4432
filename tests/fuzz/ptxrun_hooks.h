/* ptxrun_hooks.h: force-included (-include) when fuzz_ptxrun_cli compiles emu/ptxrun.c, so that its
 * main() can run many times in one process: exit() returns to the harness (longjmp), stderr goes to a
 * file the harness reads back, and what main() allocates is recorded so the harness can free what an
 * exit() left behind. Nothing in ptxrun.c changes for this. */
#ifndef PTXRUN_HOOKS_H
#define PTXRUN_HOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct ptx_module;
_Noreturn void fuzz_exit(int status);
void *fuzz_malloc(size_t size);
void *fuzz_calloc(size_t n, size_t size);
void *fuzz_aligned_alloc(size_t align, size_t size);
void fuzz_free(void *p);
extern FILE *fuzz_stderr;

#undef stderr
#define stderr fuzz_stderr
#define exit fuzz_exit
#define main ptxrun_main
#define malloc fuzz_malloc
#define calloc fuzz_calloc
#define aligned_alloc fuzz_aligned_alloc
#define free fuzz_free
#define ptx_parse fuzz_ptx_parse
#define ptx_free fuzz_ptx_free
#define emu_alloc_add fuzz_alloc_add
/* --model is parsed and checked, never acted on: no ptxas run, no launch modeled, many times a second */
#define model_gpu_choose fuzz_model_gpu_choose
#define model_gpu_chosen fuzz_model_gpu_chosen

#endif
