/* gpu suite: __constant__ and __device__ variables filled with cudaMemcpyToSymbol (as 02c fills its
 * filter) and read with cudaMemcpyFromSymbol, on a GPU or, without one, on the emulator: from the host
 * and from device memory, at an offset, each read back by a kernel; and the errors the CUDA Runtime API
 * documents for both (a copy past the variable's end, an address that is no variable, the wrong
 * direction), each returned without touching the variable. Exits 77 (skip) when no device answers. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "device.h"
#include "test_util.h"

enum { CONSTANT_FLOATS = 64, DEVICE_INTS = 16 };

__constant__ float constant_table[CONSTANT_FLOATS];
__device__ int device_table[DEVICE_INTS];

static __global__ void read_tables(float *constant_out, int *device_out)
{
    const int i = threadIdx.x;
    constant_out[i] = constant_table[i];
    if (i < DEVICE_INTS)
        device_out[i] = device_table[i];
}

/* What the kernel reads from both variables now. */
static void read_back(float constant_now[CONSTANT_FLOATS], int device_now[DEVICE_INTS])
{
    float *constant_out;
    int *device_out;
    CUDA_CHECK(cudaMalloc((void **)&constant_out, CONSTANT_FLOATS * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&device_out, DEVICE_INTS * sizeof(int)));
    read_tables<<<1, CONSTANT_FLOATS>>>(constant_out, device_out);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(constant_now, constant_out, CONSTANT_FLOATS * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(device_now, device_out, DEVICE_INTS * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(constant_out));
    CUDA_CHECK(cudaFree(device_out));
}

/* A call that must fail with `want` and leave the error state clean (these errors are not sticky). */
static void expect_error(cudaError_t got, cudaError_t want, const char *what)
{
    EXPECT(got == want, "%s: %s, want %s", what, cudaGetErrorName(got), cudaGetErrorName(want));
    cudaGetLastError();
}

int main(int argc, char **argv)
{
    emulate_if_asked(argc, argv, true); /* without a GPU the gpu suite runs this on the emulator */
    char why[256];
    if (!gpu_available(why, sizeof why)) {
        printf("skip: %s\n", why);
        return 77;
    }
    float host_floats[CONSTANT_FLOATS], constant_now[CONSTANT_FLOATS];
    int host_ints[DEVICE_INTS], device_now[DEVICE_INTS];
    for (int i = 0; i < CONSTANT_FLOATS; i++)
        host_floats[i] = 0.5f * (float)i - 3.0f;
    for (int i = 0; i < DEVICE_INTS; i++)
        host_ints[i] = 1000 + 7 * i;

    /* From the host, the whole of each. */
    CUDA_CHECK(cudaMemcpyToSymbol(constant_table, host_floats, sizeof host_floats, 0, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpyToSymbol(device_table, host_ints, sizeof host_ints));
    read_back(constant_now, device_now);
    EXPECT(memcmp(constant_now, host_floats, sizeof host_floats) == 0, "__constant__ from the host: [5] = %g, want %g",
           constant_now[5], host_floats[5]);
    EXPECT(memcmp(device_now, host_ints, sizeof host_ints) == 0, "__device__ from the host: [5] = %d, want %d",
           device_now[5], host_ints[5]);

    /* From device memory, eight floats at an offset of ten: the rest stays as it was. */
    float *on_device;
    const float eight[8] = {100, 101, 102, 103, 104, 105, 106, 107};
    CUDA_CHECK(cudaMalloc((void **)&on_device, sizeof eight));
    CUDA_CHECK(cudaMemcpy(on_device, eight, sizeof eight, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpyToSymbol(constant_table, on_device, sizeof eight, 10 * sizeof(float),
                                  cudaMemcpyDeviceToDevice));
    float want[CONSTANT_FLOATS];
    memcpy(want, host_floats, sizeof want);
    memcpy(want + 10, eight, sizeof eight);
    read_back(constant_now, device_now);
    int differ = 0;
    for (int i = 0; i < CONSTANT_FLOATS; i++)
        differ += constant_now[i] != want[i];
    EXPECT(differ == 0, "device to constant at offset 40: %d floats differ ([10] = %g, [18] = %g)", differ,
           constant_now[10], constant_now[18]);

    /* The documented errors, each leaving the variable as it was. */
    float too_many[CONSTANT_FLOATS + 1] = {0};
    expect_error(cudaMemcpyToSymbol(constant_table, too_many, sizeof too_many), cudaErrorInvalidValue,
                 "one float more than the variable holds");
    expect_error(cudaMemcpyToSymbol(constant_table, too_many, 2 * sizeof(float), (CONSTANT_FLOATS - 1) * sizeof(float)),
                 cudaErrorInvalidValue, "two floats at the last float's offset");
    static int not_a_variable;
    expect_error(cudaMemcpyToSymbol(&not_a_variable, host_ints, sizeof(int)), cudaErrorInvalidSymbol,
                 "a host address that is no device variable");
    expect_error(cudaMemcpyToSymbol(constant_table, too_many, sizeof(float), 0, cudaMemcpyDeviceToHost),
                 cudaErrorInvalidMemcpyDirection, "device to host");
    read_back(constant_now, device_now);
    EXPECT(memcmp(constant_now, want, sizeof want) == 0, "a refused copy changed the variable: [0] = %g, want %g",
           constant_now[0], want[0]);

    /* Read back with cudaMemcpyFromSymbol: to the host at an offset, and to device memory. */
    float eight_back[8];
    CUDA_CHECK(cudaMemcpyFromSymbol(eight_back, constant_table, sizeof eight_back, 10 * sizeof(float)));
    EXPECT(memcmp(eight_back, eight, sizeof eight) == 0, "constant to host at offset 40: [0] = %g, want %g",
           eight_back[0], eight[0]);
    int *ints_on_device, ints_back[DEVICE_INTS];
    CUDA_CHECK(cudaMalloc((void **)&ints_on_device, sizeof ints_back));
    CUDA_CHECK(cudaMemcpyFromSymbol(ints_on_device, device_table, sizeof ints_back, 0, cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaMemcpy(ints_back, ints_on_device, sizeof ints_back, cudaMemcpyDeviceToHost));
    EXPECT(memcmp(ints_back, host_ints, sizeof ints_back) == 0, "__device__ to device memory: [3] = %d, want %d",
           ints_back[3], host_ints[3]);
    expect_error(cudaMemcpyFromSymbol(eight_back, constant_table, sizeof eight_back, (CONSTANT_FLOATS - 4) * sizeof(float)),
                 cudaErrorInvalidValue, "reading eight floats at the fourth-last float's offset");
    expect_error(cudaMemcpyFromSymbol(eight_back, &not_a_variable, sizeof(int)), cudaErrorInvalidSymbol,
                 "reading a host address that is no device variable");
    expect_error(cudaMemcpyFromSymbol(eight_back, constant_table, sizeof(float), 0, cudaMemcpyHostToDevice),
                 cudaErrorInvalidMemcpyDirection, "reading host to device");

    CUDA_CHECK(cudaFree(ints_on_device));
    CUDA_CHECK(cudaFree(on_device));
    return test_summary("test_device_variables");
}
