/* fuzz_npy: the .npy reader (common/harness/npy.c) on arbitrary files. A finding: a crash, a leak, undefined
 * behaviour, a large allocation for a small file (libFuzzer's -malloc_limit_mb), a message that is not
 * one printable line, or an accepted array whose shape and data disagree. */
#include <stdint.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "npy.h"

static char path[64];

static void remove_file(void) { unlink(path); }

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    snprintf(path, sizeof path, "/tmp/fuzz_npy_%d.npy", (int)getpid());
    atexit(remove_file);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    size_t wrote = fwrite(data, 1, size, f);
    if (fclose(f) != 0 || wrote != size)
        return 0;
    npy_array array;
    char why[4400] = "";
    if (npy_read_numeric(path, &array, why, sizeof why)) {
        /* accepted: the header's shape accounts for every byte after the header */
        size_t bytes = (size_t)npy_count(&array) * npy_type_size(array.type);
        if (bytes > size) {
            fprintf(stderr, "fuzz: %zu bytes of data accepted from a %zu-byte file\n", bytes, size);
            abort();
        }
        free(array.data);
    } else {
        fuzz_check_message("npy_read", why, strlen(why));
        if (array.data)
            abort(); /* a failed read leaves nothing allocated */
    }
    return 0;
}
