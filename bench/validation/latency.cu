/* Load latencies measured on a GPU by pointer chases: the measured side of the timing model's latency rows.
 *
 * What it measures: one thread follows a chain of 8-byte offsets, each load's address the last load's value
 * plus the table's base, and reads the SM's clock (clock64) before and after the links it times: clocks per
 * link, the load's latency plus the address add between two loads. The chains are bench/model_microbench.py's,
 * which the model runs: links 160 bytes apart (each load a new 128-byte line) through
 *   a 32 KiB table, the second of 2 walks timed (the first brings it into the L1): an L1 hit;
 *   a 4 MiB table, the second of 2 walks timed (more than the L1 holds, far less than the L2): an L2 hit;
 *   a 4 MiB table, its first walk timed after a 512 MiB write has pushed it out of the L2: a DRAM access;
 *   a 4 MiB table pushed out of the L2 the same way, then copied by a kernel into a new allocation, the
 *     copy's first walk timed: whether what one kernel writes is in the L2 for the next (the timing model
 *     starts every launch with nothing in the L2 for its SM: ASSUME_FIRST_REQUEST in emu/model.c);
 *   one 8-byte word of shared memory, 1,024 links: a shared-memory load.
 * One CSV row per chase on stdout, which bench/model_microbench.py reads (bench/results/validation/).
 *
 * Run on the GPU machine (bench/gpu_session.sh validation builds and runs it):
 *   nvcc -O3 -arch=native -Icommon/kernel bench/validation/latency.cu common/kernel/check.c -o build/latency
 *   ./build/latency > bench/results/validation/latency_h100.csv
 */
#include <cstdio>
#include <ctime>
#include <vector>

#include <cuda_runtime.h>

#include "check.h"

enum { STRIDE = 160, SHARED_LINKS = 1024 };

/* Walks `passes` times through `links` links from offset 0; the last walk is timed. */
__global__ void global_chase(const char *table, unsigned links, unsigned passes, unsigned long long *end,
                             long long *clocks)
{
    unsigned long long offset = 0;
    for (unsigned pass = 0; pass + 1 < passes; pass++)
        for (unsigned i = 0; i < links; i++)
            offset = *(const unsigned long long *)(table + offset);
    const long long start = clock64();
    for (unsigned i = 0; i < links; i++)
        offset = *(const unsigned long long *)(table + offset);
    const long long stop = clock64();
    *end = offset;  /* stored, so the chain is kept */
    *clocks = stop - start;
}

/* The shared-memory chase: every link reads the one word, whose value (0) is the next offset. */
__global__ void shared_chase(unsigned long long *end, long long *clocks)
{
    __shared__ unsigned long long word[1];
    word[0] = 0;
    __syncthreads();
    const char *base = (const char *)word;
    unsigned long long offset = 0;
    const long long start = clock64();
    for (unsigned i = 0; i < SHARED_LINKS; i++)
        offset = *(const volatile unsigned long long *)(base + offset);
    const long long stop = clock64();
    *end = offset;
    *clocks = stop - start;
}

/* Copies `words` 8-byte words, every thread of the grid a share: the table a chase then walks, written by a
 * kernel of its own. */
__global__ void copy_words(const unsigned long long *from, unsigned long long *to, size_t words)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words; i += (size_t)gridDim.x * blockDim.x)
        to[i] = from[i];
}

/* A chain of links STRIDE bytes apart through `bytes`, its last link back to the first. */
static char *chain(size_t bytes, unsigned *links)
{
    *links = (unsigned)(bytes / STRIDE);
    std::vector<unsigned long long> host(bytes / 8, 0);
    for (unsigned i = 0; i < *links; i++)
        host[(size_t)i * STRIDE / 8] = (unsigned long long)((i + 1) % *links) * STRIDE;
    char *table;
    CUDA_CHECK(cudaMalloc(&table, bytes));
    CUDA_CHECK(cudaMemcpy(table, host.data(), bytes, cudaMemcpyHostToDevice));
    return table;
}

int main(void)
{
    check_set_program("latency");
    unsigned long long *end;
    long long *clocks, host_clocks;
    char *flush;
    const size_t flush_bytes = 512u << 20;
    CUDA_CHECK(cudaMalloc(&end, sizeof *end));
    CUDA_CHECK(cudaMalloc(&clocks, sizeof *clocks));
    CUDA_CHECK(cudaMalloc(&flush, flush_bytes));

    cudaDeviceProp prop;
    int device;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    char date[16];
    const time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));

    struct { const char *what; size_t bytes; unsigned passes; bool flush_l2, copied; } chases[] = {
        {"L1 hit latency, pointer chase", 32u << 10, 2, false, false},
        {"L2 hit latency, pointer chase", 4u << 20, 2, false, false},
        {"global memory latency, pointer chase", 4u << 20, 1, true, false},
        {"latency of a table a kernel just wrote, pointer chase", 4u << 20, 1, true, true},
    };
    printf("quantity,table_bytes,links_timed,clocks_per_link,gpu,date\n");
    for (const auto &c : chases) {
        unsigned links;
        char *table = chain(c.bytes, &links);
        if (c.flush_l2)
            CUDA_CHECK(cudaMemset(flush, 1, flush_bytes));
        if (c.copied) { /* the links are offsets from the table's base, so the copy is a chain too */
            char *copy;
            CUDA_CHECK(cudaMalloc(&copy, c.bytes));
            copy_words<<<2 * prop.multiProcessorCount, 256>>>((const unsigned long long *)table,
                                                               (unsigned long long *)copy, c.bytes / 8);
            CUDA_CHECK_LAUNCH();
            CUDA_CHECK(cudaFree(table));
            table = copy;
        }
        global_chase<<<1, 1>>>(table, links, c.passes, end, clocks);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaMemcpy(&host_clocks, clocks, sizeof host_clocks, cudaMemcpyDeviceToHost));
        printf("\"%s\",%zu,%u,%.2f,%s,%s\n", c.what, c.bytes, links, (double)host_clocks / links, prop.name, date);
        CUDA_CHECK(cudaFree(table));
    }
    shared_chase<<<1, 1>>>(end, clocks);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(&host_clocks, clocks, sizeof host_clocks, cudaMemcpyDeviceToHost));
    printf("\"shared memory load latency\",8,%d,%.2f,%s,%s\n", SHARED_LINKS, (double)host_clocks / SHARED_LINKS,
           prop.name, date);
    CUDA_CHECK(cudaFree(end));
    CUDA_CHECK(cudaFree(clocks));
    CUDA_CHECK(cudaFree(flush));
    return 0;
}
