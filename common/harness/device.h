/* device.h: which device answers a program's kernels, a GPU or the PTX emulator (emu/).
 *
 * The programs link the CUDA runtime as a shared library. `--emulate` restarts the program with the
 * emulator's stand-in for that library loaded first (LD_PRELOAD): emu/libcudaemu.so of the build the
 * program is in, found from where the program is, so a copied or moved build runs its own. The same
 * binary, the same kernels (the emulator runs the PTX in the program's own fat binaries) and the same
 * harness run, only the device differs.
 *
 * Which device answers: --emulate, the emulator; --gpu, a GPU or nothing (for scripts that want a
 * measurement or an error); neither, a GPU when one answers and the emulator otherwise, said in one
 * line on stderr first. CONV_EMULATE=auto in the environment (the gpu test suite sets it) asks for
 * that choice explicitly; CONV_EMULATE=never is --gpu.
 */
#ifndef DEVICE_H
#define DEVICE_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Call in main() before anything runs on a device: restarts the program on the emulator when argv
 * holds --emulate, or when no GPU answers, `device_needed` says this run needs one and neither --gpu
 * nor CONV_EMULATE=never refuses it (see above); with --counters also in argv, the emulator prints what
 * each kernel executed when the program exits (emu/README.md, "Counters"). Returns only when the
 * program should go on as it is. */
void emulate_if_asked(int argc, char **argv, bool device_needed);

/* Whether a CUDA device answers (a GPU, or the emulator once restarted on it). Otherwise false with a
 * one-line reason (no driver, no device). */
bool gpu_available(char *why, size_t why_len);

/* The device's name ("NVIDIA H100 80GB HBM3", or the emulator's); call only when one answers. */
const char *gpu_name(void);

/* Whether the CUDA device this process talks to is the emulator. */
bool on_emulator(void);

/* Whether argv[i] is --emulate or --gpu, the device choice (the programs' option parsers skip them). */
bool is_device_flag(const char *arg);

#ifdef __cplusplus
}
#endif

#endif
