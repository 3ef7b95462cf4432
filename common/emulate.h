/* emulate.h: running a program's kernels on the PTX emulator (emu/) instead of a GPU.
 *
 * The programs link the CUDA runtime as a shared library. `--emulate` restarts the program with the
 * emulator's stand-in for that library loaded first (LD_PRELOAD): emu/libcudaemu.so of the build the
 * program is in, found from where the program is, so a copied or moved build runs its own. The same
 * binary, the same kernels (the emulator runs the PTX in the program's own fat binaries) and the same
 * harness run, only the device differs. With CONV_EMULATE=auto in the
 * environment (the gpu test suite sets it), a program uses a GPU when one answers and the emulator
 * otherwise.
 */
#ifndef EMULATE_H
#define EMULATE_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Call first in main(): restarts the program on the emulator when argv holds --emulate (or the
 * environment asks for it, see above); with --counters also in argv, the emulator prints what each
 * kernel executed when the program exits (emu/README.md, "Counters"). Returns only when the program
 * should go on as it is. */
void emulate_if_asked(int argc, char **argv);

/* Whether the CUDA device this process talks to is the emulator. */
bool on_emulator(void);

/* Whether argv[i] is --emulate (the programs' option parsers skip it). */
bool is_emulate_flag(const char *arg);

#ifdef __cplusplus
}
#endif

#endif
