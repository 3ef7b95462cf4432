/* device.c: which device answers, a GPU or the PTX emulator (device.h). */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "counters.h"
#include "device.h"
#include "device_name.h"

#ifndef EMU_LIBRARY
#error "EMU_LIBRARY must name the emulator's library, relative to the build folder (the build defines it)"
#endif

/* Set in the restarted process, so it does not restart again; its value is the library preloaded. */
#define LOADED_MARK "CONV_EMULATOR_LOADED"

/* The build's programs sit in its top folder or one or two below it (tests/, chapters/NN/). */
#define MAX_LEVELS_UP 2

/* The emulator's library of the build this program belongs to, found from where the program is, never
 * from where it was built: EMU_LIBRARY in the program's folder or the nearest of the two above it. A
 * copied or moved build so runs its own library (and the library runs the program's own PTX, from
 * its fat binaries: emu/runtime.c). Returns false, with the places looked at in `looked`, if none. */
static bool find_library(char *library, size_t size, char *looked, size_t looked_size)
{
    char dir[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
    if (n <= 0) {
        snprintf(looked, looked_size, "/proc/self/exe unreadable");
        return false;
    }
    dir[n] = 0;
    looked[0] = 0;
    for (int level = 0; level <= MAX_LEVELS_UP; level++) {
        char *slash = strrchr(dir, '/');
        if (!slash)
            break;
        *slash = 0; /* the program's folder, then its parents */
        snprintf(library, size, "%s/%s", dir, EMU_LIBRARY);
        if (access(library, R_OK) == 0)
            return true;
        size_t used = strlen(looked);
        snprintf(looked + used, looked_size - used, "%s%s", used ? ", " : "", library);
    }
    return false;
}

/* How the program names itself in a message: "conv", not "./build/conv". */
static const char *program_name(const char *argv0)
{
    const char *slash = strrchr(argv0, '/');
    return slash ? slash + 1 : argv0;
}

bool is_device_flag(const char *arg) { return strcmp(arg, "--emulate") == 0 || strcmp(arg, "--gpu") == 0; }

void emulate_if_asked(int argc, char **argv, bool device_needed)
{
    const char *name = program_name(argv[0]);
    const char *loaded = getenv(LOADED_MARK);
    if (loaded) {
        /* The loader only warns when a preloaded library cannot be loaded, and the program would then
         * go on with the GPU's runtime: the emulator's own entry point says whether it is there. */
        if (!dlsym(RTLD_DEFAULT, EMU_BENCH_SAMPLE)) {
            fprintf(stderr, "%s: --emulate: the emulator's library %s did not load\n", name, loaded);
            exit(1);
        }
        /* programs this one starts get a GPU's runtime unless they ask too */
        unsetenv("LD_PRELOAD");
        unsetenv(LOADED_MARK);
        return;
    }
    bool asked = false, gpu_only = false;
    for (int i = 1; i < argc; i++) {
        asked |= strcmp(argv[i], "--emulate") == 0;
        gpu_only |= strcmp(argv[i], "--gpu") == 0;
        if (strcmp(argv[i], "--counters") == 0) /* the emulator prints its counts per kernel at exit */
            setenv("EMU_COUNTERS", "1", 1);
        if (strcmp(argv[i], "--model") == 0 && i + 1 < argc) /* the timing model's GPU (emu/model.h) */
            setenv("EMU_MODEL", argv[i + 1], 1);
        if (strcmp(argv[i], "--ptx-alone") == 0) /* ... without the machine code (emu/README.md) */
            setenv("EMU_NVDISASM", "", 1);
    }
    if (asked && gpu_only) {
        fprintf(stderr, "%s: --emulate and --gpu ask for different devices: give one\n", name);
        exit(2);
    }
    const char *env = getenv("CONV_EMULATE");
    if (env && *env && strcmp(env, "auto") != 0 && strcmp(env, "never") != 0) {
        fprintf(stderr, "%s: CONV_EMULATE is '%.40s': it takes auto or never\n", name, env);
        exit(2);
    }
    gpu_only |= env && strcmp(env, "never") == 0;
    if (!asked && !gpu_only && device_needed) {
        char why[256];
        if (gpu_available(why, sizeof why))
            return;
        fprintf(stderr, "%s: %s; running on the PTX emulator instead: verified, not timed (--gpu: a GPU or "
                "nothing)\n", name, why);
        asked = true;
    }
    if (!asked)
        return;
    char library[PATH_MAX + 64], looked[4 * PATH_MAX];
    if (!find_library(library, sizeof library, looked, sizeof looked)) {
        fprintf(stderr, "%s: --emulate: the emulator's library is missing (looked for %s; build it: meson compile -C "
                "build)\n", name, looked);
        exit(1);
    }
    if (strpbrk(library, " :")) { /* LD_PRELOAD splits its list at spaces and colons */
        fprintf(stderr, "%s: --emulate: the emulator's library %s cannot be preloaded from a path with a space or "
                "colon in it\n", name, library);
        exit(1);
    }
    setenv("LD_PRELOAD", library, 1);
    setenv(LOADED_MARK, library, 1);
    execv("/proc/self/exe", argv);
    fprintf(stderr, "%s: --emulate: cannot restart on the emulator: ", name);
    perror("execv");
    exit(1);
}

bool on_emulator(void)
{
    char why[256];
    return gpu_available(why, sizeof why) && strncmp(gpu_name(), EMU_DEVICE_NAME_PREFIX,
                                                     strlen(EMU_DEVICE_NAME_PREFIX)) == 0;
}

bool gpu_available(char *why, size_t why_len)
{
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
        snprintf(why, why_len, "no CUDA device: %s (%s)", cudaGetErrorString(status), cudaGetErrorName(status));
        cudaGetLastError(); /* the failure is reported; do not let it poison later calls */
        return false;
    }
    if (count == 0) {
        snprintf(why, why_len, "no CUDA device: the driver reports none");
        return false;
    }
    return true;
}

const char *gpu_name(void)
{
    static struct cudaDeviceProp props;
    static bool known = false;
    if (!known) {
        int device;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaGetDeviceProperties(&props, device));
        known = true;
    }
    return props.name;
}
