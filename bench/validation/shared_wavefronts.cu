/* Shared memory's wavefronts per warp access, by access width and address pattern, measured on a GPU: the
 * measured side of how the emulator counts shared-memory wavefronts (emu/counters.c) and what the timing
 * model charges a warp's shared load or store.
 *
 * What it measures: one warp's 32-, 64- or 128-bit shared loads (LDS, LDS.64, LDS.128) and stores (STS ...),
 * lane i at the byte offset a pattern gives it (every lane apart, one address for all, pairs of lanes sharing
 * one, strides that put lanes on one bank, some lanes making none, ...; the table PATTERNS below; a lane that
 * makes none is "-" in the offsets column). Two ways:
 *   --count  each (pattern, width, load or store) once, one warp, 64 accesses: the launches Nsight Compute
 *            counts (bash bench/gpu_session.sh validation runs it under ncu: wavefronts and bank conflicts
 *            per instruction, l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld/st);
 *   (none)   each timed in four warps, one per scheduler, eight accesses in flight a warp: clocks of the SM
 *            per warp access (a wavefront takes the SM one clock).
 * One CSV row per (pattern, width, access) on stdout, in the same order both ways; the count run's rows are
 * the order of Nsight Compute's launches. tests/test_shared_wavefronts.py runs the --count kernels on the
 * emulator and compares its counts with the measured ones.
 *
 * Run on the GPU machine (bench/gpu_session.sh validation builds and runs it):
 *   nvcc -O3 -arch=native -Icommon/kernel bench/validation/shared_wavefronts.cu common/kernel/check.c \
 *        -o build/shared_wavefronts
 *   ./build/shared_wavefronts > bench/results/validation/shared_wavefronts_h100.csv
 */
#include <cstdio>
#include <cstring>
#include <ctime>

#include <cuda_runtime.h>

#include "check.h"

enum {
    TABLE_WORDS = 2048,  /* 8 KiB of shared memory: the farthest pattern reaches 31 * 128 + 16 bytes */
    IN_FLIGHT = 8,       /* accesses a warp issues before it uses their values */
    COUNT_ROUNDS = 8,    /* --count: 64 accesses a launch */
    TIMED_ROUNDS = 4096, /* timed: 32,768 accesses a warp */
    TIMED_WARPS = 4,
};

/* A pattern: lane i's byte offset for an access of `width` bytes, or NO_ACCESS for a lane that makes none. */
static const unsigned NO_ACCESS = 0xffffffffu;
struct Pattern {
    const char *name;
    unsigned (*offset)(unsigned lane, unsigned width);
};

static const Pattern PATTERNS[] = {
    {"every lane its own, contiguous", [](unsigned l, unsigned w) { return l * w; }},
    {"one address for all", [](unsigned, unsigned) { return 0u; }},
    {"lanes t and t^1 share one", [](unsigned l, unsigned w) { return l / 2 * w; }},
    {"lanes t and t^2 share one", [](unsigned l, unsigned w) { return (l / 4 * 2 + l % 2) * w; }},
    {"lanes t and t^16 share one", [](unsigned l, unsigned w) { return l % 16 * w; }},
    {"lanes t, t^8, t^16, t^24 share one", [](unsigned l, unsigned w) { return l % 8 * w; }},
    {"four addresses, lane/8", [](unsigned l, unsigned w) { return l / 8 * w; }},
    {"lanes 2 widths apart", [](unsigned l, unsigned w) { return l * 2 * w; }},
    {"lanes 4 widths apart", [](unsigned l, unsigned w) { return l * 4 * w; }},
    {"lanes 8 widths apart", [](unsigned l, unsigned w) { return l * 8 * w; }},
    {"lanes 128 bytes apart", [](unsigned l, unsigned) { return l * 128; }},
    {"lanes t and t^16 share one, 32 bytes apart", [](unsigned l, unsigned) { return l % 16 * 32; }},
    {"lanes t and t^1 share one, 2 widths apart", [](unsigned l, unsigned w) { return l / 2 * 2 * w; }},
    {"contiguous, lanes in reverse", [](unsigned l, unsigned w) { return (31 - l) * w; }},
    {"contiguous, lanes t and t^1 swapped", [](unsigned l, unsigned w) { return (l ^ 1) * w; }},
    {"contiguous, lanes permuted (7 t mod 32)", [](unsigned l, unsigned w) { return l * 7 % 32 * w; }},
    /* lanes that make no access: do pairs with one lane missing count as sharing? */
    {"even lanes only, contiguous", [](unsigned l, unsigned w) { return l % 2 ? NO_ACCESS : l * w; }},
    {"lanes 0 and 1 of each 4 only, contiguous", [](unsigned l, unsigned w) { return l % 4 < 2 ? l * w : NO_ACCESS; }},
    {"lanes 0-15 only, contiguous", [](unsigned l, unsigned w) { return l < 16 ? l * w : NO_ACCESS; }},
    {"even lanes only, one address", [](unsigned l, unsigned) { return l % 2 ? NO_ACCESS : 0u; }},
    {"lanes 0 and 1 of each 4 only, groups of 4 lanes 64 bytes apart",
     [](unsigned l, unsigned w) { return l % 4 < 2 ? l / 4 * 64 + l % 4 * w : NO_ACCESS; }},
};

/* One access of WIDTH bytes at a shared address: a load into v (its words), or a store of v. */
template <int WIDTH, bool LOAD> static __device__ __forceinline__ void access(unsigned address, uint4 &v)
{
    if (LOAD && WIDTH == 4)
        asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(v.x) : "r"(address));
    if (LOAD && WIDTH == 8)
        asm volatile("ld.volatile.shared.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "r"(address));
    if (LOAD && WIDTH == 16)
        asm volatile("ld.volatile.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(address));
    if (!LOAD && WIDTH == 4)
        asm volatile("st.volatile.shared.u32 [%0], %1;" ::"r"(address), "r"(v.x) : "memory");
    if (!LOAD && WIDTH == 8)
        asm volatile("st.volatile.shared.v2.u32 [%0], {%1, %2};" ::"r"(address), "r"(v.x), "r"(v.y) : "memory");
    if (!LOAD && WIDTH == 16)
        asm volatile("st.volatile.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(address), "r"(v.x), "r"(v.y),
                     "r"(v.z), "r"(v.w) : "memory");
}

/* Every warp of the block: `rounds` times IN_FLIGHT accesses at its lane's offset, then their values folded
 * into one (loads) or the next values made (stores). Thread 0 writes the block's clocks between two
 * barriers; the fold goes to sink, so no load is dead. */
template <int WIDTH, bool LOAD>
static __device__ void accesses(const unsigned *offsets, int rounds, unsigned *sink, long long *clocks)
{
    __shared__ __align__(16) unsigned table[TABLE_WORDS];
    for (unsigned i = threadIdx.x; LOAD && i < TABLE_WORDS; i += blockDim.x)
        table[i] = i;
    const unsigned offset = offsets[threadIdx.x % 32];
    const unsigned address = (unsigned)__cvta_generic_to_shared(table) + offset;
    uint4 v[IN_FLIGHT];
    for (int j = 0; j < IN_FLIGHT; j++)
        v[j] = make_uint4(threadIdx.x, j, 1, 2);
    unsigned fold = 0;
    __syncthreads();
    const long long start = clock64();
    for (int r = 0; offset != NO_ACCESS && r < rounds; r++) {
        for (int j = 0; j < IN_FLIGHT; j++)
            access<WIDTH, LOAD>(address, v[j]);
        for (int j = 0; j < IN_FLIGHT; j++)
            fold ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w, v[j].x += fold;
    }
    __syncthreads();
    const long long stop = clock64();
    sink[threadIdx.x] = fold;
    if (threadIdx.x == 0)
        clocks[0] = stop - start;
}

/* The kernels by name (extern "C", so that the emulator's test names them as written here). */
#define ACCESS_KERNEL(name, width, load)                                                                   \
    extern "C" __global__ void __launch_bounds__(128)                                                      \
        name(const unsigned *offsets, int rounds, unsigned *sink, long long *clocks)                       \
    {                                                                                                      \
        accesses<width, load>(offsets, rounds, sink, clocks);                                              \
    }
ACCESS_KERNEL(shared_load_32, 4, true)
ACCESS_KERNEL(shared_load_64, 8, true)
ACCESS_KERNEL(shared_load_128, 16, true)
ACCESS_KERNEL(shared_store_32, 4, false)
ACCESS_KERNEL(shared_store_64, 8, false)
ACCESS_KERNEL(shared_store_128, 16, false)

typedef void (*Kernel)(const unsigned *, int, unsigned *, long long *);
static const struct {
    Kernel kernel;
    unsigned width;
    const char *access;
} KERNELS[] = {
    {shared_load_32, 4, "load"},   {shared_load_64, 8, "load"},   {shared_load_128, 16, "load"},
    {shared_store_32, 4, "store"}, {shared_store_64, 8, "store"}, {shared_store_128, 16, "store"},
};

int main(int argc, char **argv)
{
    check_set_program("shared_wavefronts");
    const bool count = argc > 1 && strcmp(argv[1], "--count") == 0;
    if (argc > 2 || (argc == 2 && !count))
        fail_status(2, "usage: shared_wavefronts [--count]");
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    char date[16];
    const time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    unsigned *offsets, *sink;
    long long *clocks;
    CUDA_CHECK(cudaMalloc(&offsets, 32 * sizeof *offsets));
    CUDA_CHECK(cudaMalloc(&sink, 128 * sizeof *sink));
    CUDA_CHECK(cudaMalloc(&clocks, sizeof *clocks));
    printf("pattern,bits,access,offsets,%s,gpu,date\n",
           count ? "launch" : "clocks per warp access of the SM (4 warps)");
    int launch = 0;
    for (const auto &k : KERNELS)
        for (const Pattern &p : PATTERNS) {
            unsigned host[32];
            char list[400] = "";
            for (unsigned l = 0; l < 32; l++) {
                host[l] = p.offset(l, k.width);
                if (host[l] == NO_ACCESS)
                    snprintf(list + strlen(list), sizeof list - strlen(list), "%s-", l ? " " : "");
                else
                    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%u", l ? " " : "", host[l]);
            }
            CUDA_CHECK(cudaMemcpy(offsets, host, sizeof host, cudaMemcpyHostToDevice));
            const int warps = count ? 1 : TIMED_WARPS, rounds = count ? COUNT_ROUNDS : TIMED_ROUNDS;
            k.kernel<<<1, 32 * warps>>>(offsets, rounds, sink, clocks);
            CUDA_CHECK_LAUNCH();
            long long elapsed;
            CUDA_CHECK(cudaMemcpy(&elapsed, clocks, sizeof elapsed, cudaMemcpyDeviceToHost));
            printf("\"%s\",%u,%s,%s,", p.name, k.width * 8, k.access, list);
            if (count)
                printf("%d", launch++);
            else
                printf("%.3f", (double)elapsed / ((double)warps * rounds * IN_FLIGHT));
            printf(",%s,%s\n", prop.name, date);
        }
    return 0;
}
