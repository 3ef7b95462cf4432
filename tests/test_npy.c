/* .npy: round trips in each type, and a clear reason for every malformed file.
 * (tests/test_npy_numpy.py checks the same files against NumPy itself.) */
#include <stdlib.h>
#include <string.h>

#include "npy.h"
#include "test_util.h"

static char dir[4096];

static void write_raw(const char *name, const void *bytes, size_t len)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    fwrite(bytes, 1, len, f);
    fclose(f);
}

/* A v1.0 file with the given dict text, padded correctly, followed by data_len bytes of data. */
static void write_with_header(const char *name, const char *dict, size_t data_len)
{
    char buffer[1024] = "\x93NUMPY\x01\x00";
    size_t dict_len = strlen(dict), total = (10 + dict_len + 1 + 63) / 64 * 64;
    size_t header_len = total - 10;
    buffer[8] = (char)(header_len & 0xff), buffer[9] = (char)(header_len >> 8);
    memset(buffer + 10, ' ', header_len);
    memcpy(buffer + 10, dict, dict_len);
    buffer[total - 1] = '\n';
    memset(buffer + total, 0, data_len);
    write_raw(name, buffer, total + data_len);
}

static void expect_rejected(const char *name, const char *fragment)
{
    char path[4200], why[4400] = "";
    snprintf(path, sizeof path, "%s/%s", dir, name);
    npy_array array;
    bool ok = npy_read(path, &array, why, sizeof why);
    EXPECT(!ok && strstr(why, fragment) && strstr(why, name), "%s: expected '%s', got %s '%s'", name, fragment,
           ok ? "success" : "", why);
    EXPECT(array.data == NULL, "%s: nothing left allocated", name);
}

int main(int argc, char **argv)
{
    snprintf(dir, sizeof dir, "%s", argc > 1 ? argv[1] : ".");
    char path[4200], why[4400];

    /* round trips */
    float values[2 * 3 * 4 * 5];
    for (int i = 0; i < 120; i++)
        values[i] = (float)i * 0.25f - 7.0f;
    int64_t shape[4] = {2, 3, 4, 5};
    snprintf(path, sizeof path, "%s/round_trip.npy", dir);
    EXPECT(npy_write(path, NPY_F32, 4, shape, values, why, sizeof why), "%s", why);
    npy_array array;
    EXPECT(npy_read(path, &array, why, sizeof why), "%s", why);
    EXPECT(array.type == NPY_F32 && array.ndim == 4 && array.shape[0] == 2 && array.shape[3] == 5 &&
               npy_count(&array) == 120 && memcmp(array.data, values, sizeof values) == 0,
           "fp32 round trip");
    free(array.data);
    FILE *f = fopen(path, "rb");
    unsigned char head[10];
    EXPECT(fread(head, 1, 10, f) == 10, "read header");
    fclose(f);
    EXPECT((10 + (head[8] | head[9] << 8)) % 64 == 0, "header padded to 64 bytes");

    uint16_t halves[6] = {0x3c00, 0xc000, 0x0001, 0x7bff, 0x8000, 0x3555};
    int64_t shape2[2] = {2, 3};
    snprintf(path, sizeof path, "%s/halves.npy", dir);
    EXPECT(npy_write(path, NPY_F16, 2, shape2, halves, why, sizeof why), "%s", why);
    EXPECT(npy_read(path, &array, why, sizeof why) && array.type == NPY_F16 && array.ndim == 2 &&
               memcmp(array.data, halves, sizeof halves) == 0, "fp16 round trip");
    free(array.data);
    double wide[3] = {1.0 / 3.0, -2.5, 1e300};
    int64_t shape1[1] = {3};
    snprintf(path, sizeof path, "%s/doubles.npy", dir);
    EXPECT(npy_write(path, NPY_F64, 1, shape1, wide, why, sizeof why), "%s", why);
    EXPECT(npy_read(path, &array, why, sizeof why) && array.type == NPY_F64 &&
               memcmp(array.data, wide, sizeof wide) == 0, "fp64 round trip");
    free(array.data);

    /* what a NumPy user might hand us, and what we say */
    snprintf(path, sizeof path, "%s/does_not_exist.npy", dir);
    EXPECT(!npy_read(path, &array, why, sizeof why) && strstr(why, "cannot open"), "missing file: %s", why);
    write_raw("empty.npy", "", 0);
    expect_rejected("empty.npy", "bad magic");
    write_raw("text.npy", "hello, world\n", 13);
    expect_rejected("text.npy", "bad magic");
    write_raw("version9.npy", "\x93NUMPY\x09\x00\x10\x00", 10);
    expect_rejected("version9.npy", "unsupported .npy format version 9.0");
    write_raw("short_header.npy", "\x93NUMPY\x01\x00\x40\x00{'descr'", 17);
    expect_rejected("short_header.npy", "truncated header");
    write_with_header("int32.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", 8);
    expect_rejected("int32.npy", "unsupported dtype '<i4'");
    write_with_header("bigendian.npy", "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8);
    expect_rejected("bigendian.npy", "unsupported dtype '>f4'");
    write_with_header("fortran.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16);
    expect_rejected("fortran.npy", "Fortran-ordered");
    write_with_header("noshape.npy", "{'descr': '<f4', 'fortran_order': False, }", 8);
    expect_rejected("noshape.npy", "no 'shape'");
    write_with_header("badshape.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", 8);
    expect_rejected("badshape.npy", "malformed shape");
    write_with_header("truncated.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }", 60);
    expect_rejected("truncated.npy", "shorter than its shape says (16 elements)");
    write_with_header("trailing.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 12);
    expect_rejected("trailing.npy", "longer than its shape says");
    /* shapes whose product overflows, or promises more than the file holds: refused before allocating */
    write_with_header("huge_2e62.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,), }", 0);
    expect_rejected("huge_2e62.npy", "hold more than");
    write_with_header("huge_2e32x2e32x2.npy",
                      "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 2), }", 0);
    expect_rejected("huge_2e32x2e32x2.npy", "hold more than");
    write_with_header("huge_2e40.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }", 4);
    expect_rejected("huge_2e40.npy", "hold more than");
    write_with_header("no_data.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1073741824,), }", 4);
    expect_rejected("no_data.npy", "shorter than its shape says"); /* known from the file's size, not read */
    write_with_header("dtype_newline.npy", "{'descr': '<f\n', 'fortran_order': False, 'shape': (2,), }", 8);
    expect_rejected("dtype_newline.npy", "unsupported dtype '<f\\n'");
    write_with_header("scalar.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", 8);
    snprintf(path, sizeof path, "%s/scalar.npy", dir);
    EXPECT(npy_read(path, &array, why, sizeof why) && array.ndim == 0 && npy_count(&array) == 1, "0-d array: %s",
           why);
    free(array.data);
    snprintf(path, sizeof path, "%s/no_such_dir/out.npy", dir);
    EXPECT(!npy_write(path, NPY_F32, 4, shape, values, why, sizeof why) && strstr(why, "cannot create"),
           "unwritable path: %s", why);
    return test_summary("test_npy");
}
