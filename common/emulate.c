/* emulate.c: see emulate.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device_name.h"
#include "emulate.h"
#include "harness.h"

#ifndef EMU_LIBRARY
#error "EMU_LIBRARY must name the emulator's library (the build defines it)"
#endif

/* Set in the restarted process, so it does not restart again. */
#define LOADED_MARK "CONV_EMULATOR_LOADED"

bool is_emulate_flag(const char *arg) { return strcmp(arg, "--emulate") == 0; }

void emulate_if_asked(int argc, char **argv)
{
    if (getenv(LOADED_MARK)) {
        unsetenv("LD_PRELOAD"); /* programs this one starts get a GPU's runtime unless they ask too */
        return;
    }
    bool asked = false;
    for (int i = 1; i < argc; i++) {
        asked |= is_emulate_flag(argv[i]);
        if (strcmp(argv[i], "--counters") == 0) /* the emulator prints its counts per kernel at exit */
            setenv("EMU_COUNTERS", "1", 1);
    }
    const char *env = getenv("CONV_EMULATE");
    if (!asked && env && strcmp(env, "auto") == 0) {
        char why[256];
        asked = !gpu_available(why, sizeof why);
    }
    if (!asked)
        return;
    if (access(EMU_LIBRARY, R_OK) != 0) {
        fprintf(stderr, "%s: --emulate: the emulator's library %s is missing (build it: meson compile -C build)\n",
                argv[0], EMU_LIBRARY);
        exit(1);
    }
    setenv("LD_PRELOAD", EMU_LIBRARY, 1);
    setenv(LOADED_MARK, "1", 1);
    execv("/proc/self/exe", argv);
    fprintf(stderr, "%s: --emulate: cannot restart on the emulator: ", argv[0]);
    perror("execv");
    exit(1);
}

bool on_emulator(void)
{
    char why[256];
    return gpu_available(why, sizeof why) && strncmp(gpu_name(), EMU_DEVICE_NAME_PREFIX,
                                                     strlen(EMU_DEVICE_NAME_PREFIX)) == 0;
}
