/* registry.h: every kernel of every chapter, in reading order. */
#ifndef REGISTRY_H
#define REGISTRY_H

#include "conv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* All registered kernels, in chapter order. */
const conv_kernel *registry_kernel(int index);
int registry_count(void);

/* The kernel with this exact id, or NULL. */
const conv_kernel *registry_find(const char *id);

/* Whether a kernel's id starts with prefix ("02" selects 02a and 02b; "" selects all). */
bool registry_matches(const conv_kernel *kernel, const char *prefix);
/* Whether the kernel matches one of the comma-separated id prefixes (all kernels when NULL). */
bool registry_selected(const conv_kernel *kernel, const char *prefixes);

/* The sha256 of a kernel's code as it was built: every .c, .cu and .h file in its source file's folder
 * (generated at build time by common/harness/hash_sources.py), or "unknown". */
const char *registry_source_sha256(const conv_kernel *kernel);

/* The same for any hashed source file by its path from the repository root: the kernels' sources and
 * the example programs' (chapters 10 and 11), which are not registry kernels but write results too. */
const char *source_sha256(const char *source);

#ifdef __cplusplus
}
#endif

#endif
