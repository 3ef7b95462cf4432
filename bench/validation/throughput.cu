/* Throughputs and instruction latencies measured on a GPU by microbenchmarks: the measured side of the timing
 * model's throughput rows (bench/model_microbench.py runs the load, mma.sync and wgmma kernels, written in PTX, on
 * the model).
 *
 * How it measures. Each figure but global memory's is a difference of two runs that differ only in how long their
 * loop is, so what a run costs besides its loop (the launch, the first loads' latency, the drain) cancels: the work
 * the long run does beyond the short one over the time it takes beyond the short one. Each run is launched once to
 * warm up (caches filled, clocks up), then 3 times, and the least time of the 3 is kept. Time is
 *   clocks: clock64(), read by a block's thread 0 after a barrier before the loop and after a barrier after it
 *     (each thread has used its last load's value before that barrier, so its loads are done). A per-SM figure
 *     uses one block's count; a whole-GPU figure the largest count of any block (every block is resident at
 *     once and runs the whole launch);
 *   seconds: CUDA events around the launch, for the figures in GB/s (10^9 bytes per second) and TFLOP/s.
 * The figures (their names are bench/h100.json's published measurements' where it has one):
 *   shared memory load throughput: one block of 1024 threads, each thread ld.volatile.shared.v4 (16 bytes, the
 *     block's threads side by side: conflict-free) of its own 16 bytes of a 16 KiB table, 256 then 1024 times,
 *     8 loads in flight before their values are XORed; bytes per clock per SM;
 *   L1 load throughput, FP32.v4 loads: the same with ld.global.v4 (as the model's kernel: LDG.128, cached in the
 *     L1) from a 16 KiB global table the block first walks once (so it is in the L1);
 *   L2 load throughput, FP32 loads / FP32.v4 loads: 2 blocks of 1024 threads per SM (all resident), ld.global.cg
 *     (cached in the L2 only, so no L1 hit on another block's line) of 4 and 16 bytes, each block walking a 1 MiB
 *     window of a 16 MiB table (window = block % 16) round and round, 64 bytes in flight per thread; bytes per
 *     clock for the whole GPU (the largest block count) and, as ", GB/s", per second (events);
 *   global memory load throughput: a grid-stride read of 2 GiB (written first) with ld.global.v4, 2 blocks of
 *     1024 threads per SM, 4 loads in flight per thread; global memory copy throughput: the same copying 1 GiB
 *     to another 1 GiB, the bytes read plus those written; GB/s from events, one pass (2 GiB is 40 times the L2,
 *     so it needs no shorter run to subtract: a launch's fixed cost is under 1% of it);
 *   mma.sync m16n8k16 / m16n8k8 f16 in, f32 accumulate, dense throughput: one block of 1024 threads on each SM
 *     (as model_microbench's mma_throughput; each block asks for more than half an SM's shared memory, so no two
 *     share one), each warp 4 independent chains of mma.sync on zero data read at run time; TFLOP/s (2 x 16 x 8 x K
 *     flop per mma) from events;
 *   wgmma m64nNk16 f32 accumulate throughput, SS, zero data (N = 256, 64, 32, 16, 8): one block of 2 warpgroups
 *     on each SM (placed the same way), each issuing wgmma.mma_async (f16 in, f32 accumulate, A and B zeros in shared memory, K-major,
 *     no swizzle, as model_microbench's wgmma_chain) back to back, waited for at the end (fenced and committed in
 *     8s, the machine code ptxas makes of one commit group anyway); TFLOP/s from events;
 *   wgmma m64nNk16 f32 accumulate latency, SS (N = 128, 64, 32, 16): one warpgroup, each wgmma fenced,
 *     committed and waited for before the next; clocks per wgmma;
 *   the same throughputs (N = 64, 32, 16, 8) and latencies (N = 32, 16) with A in registers ("RS": zeros the
 *     compiler cannot see are zeros), B in shared memory: what a wgmma costs with only B to read there;
 *   shared memory bank conflicts, N-way (N = 1 to 32): one warp, lane i loading 32-bit word i N with
 *     ld.volatile.shared (N lanes on each bank used), up to 32 loads in flight; clocks per warp load. With one
 *     warp the 1- and 2-way figures may be its issue rate (a load and half an XOR per load), not the banks';
 *     ", 4 warps": the same in four warps, clocks per warp load of the SM (the shared memory's own rate);
 *   dependent FFMA chains / dependent L2-hit loads, W warps on one SM (W = 1 to 32): latency hidden by warps,
 *     one block of W warps, each thread the FFMA chain below, or each warp a chain of 128-byte lines through
 *     a 4 MiB table (line_chase); warp instructions per clock;
 *   L1-hit warp loads, lanes S bytes apart (S = 4 to 64 KiB): 4 warps on one SM loading 32 words the lanes hold
 *     S bytes apart, already in the L1, 8 in flight per warp; clocks per warp load: what the L1's tag stage
 *     takes for a request of 1 to 32 lines and how lines far apart share its sets;
 *   L1-hit warp loads, 32 lanes on L lines (L = 1 to 16): the same, the lanes in L groups, each group's lanes
 *     loading one word, the groups' words 128 bytes apart (a depthwise kernel's filter taps, read by the lanes of
 *     a few channels); whether the tag stage takes a cycle for each line however few lanes ask for it;
 *   fma.rn.f32, add.s32, mad.lo.s32, ex2.approx.f32, fma.rn.f16x2, fma.rn.f64, cvt.rn.f16.f32, shfl.sync.bfly
 *     latency: one thread (a warp for the shuffle) running a chain of dependent instructions in inline PTX on
 *     values passed at run time, 256 then 1024 of them; clocks per instruction. What ptxas makes of each is at its
 *     chain below;
 *   FFMA, IADD3, IMAD, MUFU.EX2, HFMA2, DFMA, F2FP, SHFL.BFLY issue rate: the same chains in 32 warps on one
 *     SM, every thread its own chain; warp instructions per clock per SM, the rate of the pipe each goes down;
 *     and IMAD and IADD3, FFMA and IADD3, FFMA and IMAD in turn: whether the two go down one pipe.
 * The tensor throughputs also give ", SM clock" (MHz): their clocks over their seconds, to turn TFLOP/s into
 * flop per clock. One CSV row per figure on stdout: quantity,value,unit,gpu,date.
 *
 * Run on the GPU machine (an H100: wgmma needs sm_90a, not the sm_90 -arch=native gives):
 *   nvcc -O3 -arch=sm_90a -Icommon/kernel bench/validation/throughput.cu common/kernel/check.c -o build/throughput
 *   ./build/throughput > bench/results/validation/throughput_h100.csv
 * (`throughput --issue-rates` measures the issue rates alone.)
 */
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <vector>

#include <cuda_runtime.h>

#include "check.h"

/* -arch=sm_90a also embeds PTX for compute_90, which has no wgmma: in that PTX each wgmma instruction is a trap, so it
 * assembles, and a GPU that would run it (not an H100, which loads the sm_90a machine code) stops at the first. */
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define WGMMA_ASM(...) __trap()
#else
#define WGMMA_ASM(...) asm volatile(__VA_ARGS__)
#endif

enum {
    THREADS = 1024,          /* a block of the load and mma.sync kernels */
    LOADS_IN_FLIGHT = 8,     /* shared_loads: loads a thread issues before it uses their values */
    BYTES_IN_FLIGHT = 64,    /* global_loads: bytes a thread loads before it uses them (32 registers at most) */
    BANK_SLOTS = 32,         /* bank_conflicts: loads in flight in the one warp */
    WINDOWS = 16,            /* the L2 table: WINDOWS windows of 1 MiB */
    REPEATS = 3,             /* timed launches of each run */
};

static cudaDeviceProp prop;
static char date[16];
static long long *clocks;     /* clocks[block]: the block's clock64 count of its loop */
static unsigned *sink;        /* sink[thread]: a value from every thread, so no work is dead */
static cudaEvent_t event_start, event_stop;

static __device__ unsigned fold(unsigned v) { return v; }
static __device__ unsigned fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }
static __device__ unsigned fold(float v) { return __float_as_uint(v); }
static __device__ unsigned fold(double v) { return (unsigned)__double2hiint(v) ^ (unsigned)__double2loint(v); }

/* Thread 0's clock after the block's barrier: the timing of every clocked kernel. */
static __device__ long long block_clock(void)
{
    __syncthreads();
    return clock64();
}

/* ---- Loads ------------------------------------------------------------------------------------------------ */

/* Each thread loads its own 16 bytes of a 16 KiB shared table n times (n a multiple of LOADS_IN_FLIGHT). The loads
 * are volatile PTX: one address every time, which the compilers would otherwise load once. */
__global__ void __launch_bounds__(THREADS) shared_loads(int n, long long *clocks, unsigned *sink)
{
    __shared__ uint4 table[THREADS];
    table[threadIdx.x] = make_uint4(threadIdx.x, 0, 0, 0);
    const unsigned address = (unsigned)__cvta_generic_to_shared(&table[threadIdx.x]);
    unsigned acc = 0;
    const long long start = block_clock();
    for (int i = 0; i < n; i += LOADS_IN_FLIGHT) {
        uint4 v[LOADS_IN_FLIGHT];
        for (int j = 0; j < LOADS_IN_FLIGHT; j++)
            asm volatile("ld.volatile.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                         : "=r"(v[j].x), "=r"(v[j].y), "=r"(v[j].z), "=r"(v[j].w) : "r"(address));
        for (int j = 0; j < LOADS_IN_FLIGHT; j++)
            acc ^= fold(v[j]);
    }
    const long long stop = block_clock();
    if (threadIdx.x == 0)
        clocks[blockIdx.x] = stop - start;
    sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

/* ld.global.cg (cached in the L2 only: LDG.STRONG.GPU) or ld.global (LDG, cached in the L1 too; ld.global.ca would
 * be an LDG.STRONG.SM). */
template <bool L2_ONLY, typename T> static __device__ T load(const T *p) { return L2_ONLY ? __ldcg(p) : *p; }

/* Each block walks its window of `mask` + 1 elements (window block % WINDOWS of the table) round and round, the
 * block's threads side by side: `warm` loads per thread untimed, then n timed (n a multiple of the loads in flight).
 * The index is masked with a run-time mask, so the compiler can neither see two loads read one address (a
 * 16 KiB window: every load of a thread does) nor hoist them out of the loop; it is 32-bit, so an address is one
 * IMAD.WIDE. 2 blocks per SM: 32 registers. */
template <typename T, bool L2_ONLY>
__global__ void __launch_bounds__(THREADS, 2)
    global_loads(const T *table, unsigned mask, int warm, int n, long long *clocks, unsigned *sink)
{
    const int in_flight = BYTES_IN_FLIGHT / sizeof(T);
    const unsigned window = blockIdx.x % WINDOWS * (mask + 1);
    unsigned acc = 0;
    for (int i = 0; i < warm; i++)
        acc ^= fold(load<L2_ONLY>(&table[window + ((threadIdx.x + i * THREADS) & mask)]));
    const long long start = block_clock();
    for (int i = 0; i < n; i += in_flight) {
        T v[in_flight];
        for (int j = 0; j < in_flight; j++)
            v[j] = load<L2_ONLY>(&table[window + ((threadIdx.x + (i + j) * THREADS) & mask)]);
        for (int j = 0; j < in_flight; j++)
            acc ^= fold(v[j]);
    }
    const long long stop = block_clock();
    if (threadIdx.x == 0)
        clocks[blockIdx.x] = stop - start;
    sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

/* Reads `vectors` 16-byte vectors grid-stride, 4 in flight per thread. */
__global__ void __launch_bounds__(THREADS, 2) stream_read(const uint4 *src, size_t vectors, unsigned *sink)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned acc = 0;
    for (; i + 3 * stride < vectors; i += 4 * stride)
        acc ^= fold(src[i]) ^ fold(src[i + stride]) ^ fold(src[i + 2 * stride]) ^ fold(src[i + 3 * stride]);
    for (; i < vectors; i += stride)
        acc ^= fold(src[i]);
    sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

/* Copies `vectors` 16-byte vectors grid-stride, 4 loads then their 4 stores. */
__global__ void __launch_bounds__(THREADS, 2) stream_copy(const uint4 *src, uint4 *dst, size_t vectors)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < vectors; i += 4 * stride) {
        const uint4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
        dst[i] = a;
        dst[i + stride] = b;
        dst[i + 2 * stride] = c;
        dst[i + 3 * stride] = d;
    }
    for (; i < vectors; i += stride)
        dst[i] = src[i];
}

/* Each warp (one, or four: one per scheduler), lane i loading word i * ways: `ways` lanes on each bank it uses.
 * The loads are pipelined: a slot's value is XORed in (two slots per 3-input XOR) just before the slot is loaded
 * again, BANK_SLOTS loads later, so a warp waits for no load it has just issued. n is a multiple of BANK_SLOTS. */
__global__ void __launch_bounds__(128) bank_conflicts(unsigned ways, int n, long long *clocks, unsigned *sink)
{
    __shared__ unsigned words[32 * 32];
    const unsigned lane = threadIdx.x % 32;
    for (unsigned i = lane; i < 32 * 32; i += 32)
        words[i] = i;
    const unsigned address = (unsigned)__cvta_generic_to_shared(&words[lane * ways]);
    unsigned v[BANK_SLOTS], acc[BANK_SLOTS / 2] = {};
    __syncthreads();
    for (int j = 0; j < BANK_SLOTS; j++)
        asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(v[j]) : "r"(address));
    const long long start = block_clock();
    for (int i = 0; i < n; i += BANK_SLOTS)
        for (int j = 0; j < BANK_SLOTS; j += 2) {
            acc[j / 2] ^= v[j] ^ v[j + 1];
            asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(v[j]) : "r"(address));
            asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(v[j + 1]) : "r"(address));
        }
    const long long stop = block_clock();
    unsigned all = 0;
    for (int j = 0; j < BANK_SLOTS / 2; j++)
        all ^= acc[j] ^ v[2 * j] ^ v[2 * j + 1];
    if (threadIdx.x == 0)
        clocks[blockIdx.x] = stop - start;
    sink[threadIdx.x] = all;
}

/* ---- Tensor cores ----------------------------------------------------------------------------------------- */

template <int K> static __device__ void mma(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2]);
template <> __device__ void mma<16>(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
template <> __device__ void mma<8>(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(b[0]));
}

/* Every warp: n rounds of 4 independent mma.sync m16n8kK (n a multiple of 4), its A and B fragments read from
 * `fragments` (zeros) so nothing is known at compile time. */
template <int K>
__global__ void __launch_bounds__(THREADS, 1)
    mma_sync(const unsigned *fragments, int n, long long *clocks, unsigned *sink)
{
    const unsigned a[4] = {fragments[0], fragments[1], fragments[2], fragments[3]}, b[2] = {fragments[4], fragments[5]};
    float c[4][4] = {};
    const long long start = block_clock();
#pragma unroll 4
    for (int i = 0; i < n; i++)
        for (int chain = 0; chain < 4; chain++)
            mma<K>(c[chain], a, b);
    const long long stop = block_clock();
    float sum = 0;
    for (int chain = 0; chain < 4; chain++)
        sum += c[chain][0] + c[chain][1] + c[chain][2] + c[chain][3];
    if (threadIdx.x == 0)
        clocks[blockIdx.x] = stop - start;
    sink[blockIdx.x * blockDim.x + threadIdx.x] = fold(sum);
}

/* wgmma.mma_async m64nNk16, f16 in, f32 accumulate, A and B in shared memory, scale-d true (D = A B + D): its N/2
 * accumulators, one "+f" operand each, are %0 to %(N/2 - 1), then the descriptors of A and B. The operand lists are
 * spelled out below: an asm statement's operands cannot be counted out by a template. */
#define ACC4 "%0, %1, %2, %3"
#define ACC8 ACC4 ", %4, %5, %6, %7"
#define ACC16 ACC8 ", %8, %9, %10, %11, %12, %13, %14, %15"
#define ACC32 ACC16 ", %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define ACC64                                                                                                      \
    ACC32 ", %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, " \
          "%52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define ACC128                                                                                                     \
    ACC64 ", %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, " \
          "%84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, "     \
          "%103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, " \
          "%120, %121, %122, %123, %124, %125, %126, %127"
#define F4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define F8(i) F4(i), F4(i + 4)
#define F16(i) F8(i), F8(i + 8)
#define F32(i) F16(i), F16(i + 16)
#define F64(i) F32(i), F32(i + 32)
#define F128(i) F64(i), F64(i + 64)

template <int N> static __device__ void wgmma(float (&d)[N / 2], unsigned long long a, unsigned long long b);
#define WGMMA(N, ACC, OPERANDS, A, B)                                                                             \
    template <> __device__ void wgmma<N>(float (&d)[N / 2], unsigned long long a, unsigned long long b)          \
    {                                                                                                             \
        WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n" #N                  \
                  "k16.f32.f16.f16 {" ACC "}, %" #A ", %" #B ", p, 1, 1, 0, 0;\n}\n"                              \
                  : OPERANDS                                                                                      \
                  : "l"(a), "l"(b));                                                                              \
    }
WGMMA(8, ACC4, F4(0), 4, 5)
WGMMA(16, ACC8, F8(0), 8, 9)
WGMMA(32, ACC16, F16(0), 16, 17)
WGMMA(64, ACC32, F32(0), 32, 33)
WGMMA(128, ACC64, F64(0), 64, 65)
WGMMA(256, ACC128, F128(0), 128, 129)

/* The same with A in registers (RS): this thread's four registers of A's fragment ("r", after the accumulators),
 * then B's descriptor; the RS form has no transpose flag for A. */
template <int N> static __device__ void wgmma_rs(float (&d)[N / 2], const unsigned (&a)[4], unsigned long long b);
#define WGMMA_RS(N, ACC, OPERANDS, A0, A1, A2, A3, B)                                                             \
    template <> __device__ void wgmma_rs<N>(float (&d)[N / 2], const unsigned (&a)[4], unsigned long long b)     \
    {                                                                                                             \
        WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n" #N                  \
                  "k16.f32.f16.f16 {" ACC "}, {%" #A0 ", %" #A1 ", %" #A2 ", %" #A3 "}, %" #B ", p, 1, 1, 0;\n}\n"  \
                  : OPERANDS                                                                                      \
                  : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));                                          \
    }
WGMMA_RS(8, ACC4, F4(0), 4, 5, 6, 7, 8)
WGMMA_RS(16, ACC8, F8(0), 8, 9, 10, 11, 12)
WGMMA_RS(32, ACC16, F16(0), 16, 17, 18, 19, 20)
WGMMA_RS(64, ACC32, F32(0), 32, 33, 34, 35, 36)

/* A zero the compiler cannot see is zero: A's fragment in registers, as a kernel's would be. */
static __device__ unsigned opaque_zero(void)
{
    unsigned zero;
    asm volatile("mov.b32 %0, 0;" : "=r"(zero));
    return zero;
}

/* One wgmma m64nNk16 of the kind the kernels below ask for: A and B in shared memory (SS), or A's zeros in the
 * thread's registers (RS, a_regs) and B in shared memory. */
template <int N, bool RS>
static __device__ void wgmma_of(float (&d)[N / 2], unsigned long long a, const unsigned (&a_regs)[4],
                                unsigned long long b)
{
    if constexpr (RS)
        wgmma_rs<N>(d, a_regs, b);
    else
        wgmma<N>(d, a, b);
}

static __device__ void wgmma_fence(void) { WGMMA_ASM("wgmma.fence.sync.aligned;" ::: "memory"); }
static __device__ void wgmma_commit(void) { WGMMA_ASM("wgmma.commit_group.sync.aligned;" ::: "memory"); }
static __device__ void wgmma_wait(void) { WGMMA_ASM("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }

/* Pins the accumulators' accesses in place: the compiler may move no write of them after the next wgmma.fence
 * and no read before the last wgmma.wait_group (an asm statement that might change them, ordered among the
 * volatile asm statements). */
template <int R> static __device__ void pin(float (&d)[R])
{
    for (int i = 0; i < R; i++)
        asm volatile("" : "+f"(d[i])::"memory");
}

/* A (64 x 16) and B (N x 16) f16 zeros in shared memory and their descriptors, as model_microbench's wgmma_chain
 * builds them: K-major, no swizzle ("Matrix Descriptor Format": start address >> 4 in bits 0-13), core matrices
 * of 8 rows x 16 bytes, the two along K 128 bytes apart (leading byte offset >> 4, bits 16-29), 8-row groups 256
 * bytes apart (stride byte offset >> 4, bits 32-45). The zeros are written by the generic proxy and read by
 * wgmma through the async proxy: a proxy fence, then the barrier. */
template <int N> struct Tiles {
    __align__(1024) unsigned char bytes[64 * 16 * 2 + N * 16 * 2];

    __device__ void zero_and_describe(unsigned long long *a, unsigned long long *b)
    {
        for (unsigned i = 4 * threadIdx.x; i < sizeof bytes; i += 4 * blockDim.x)
            *(unsigned *)(bytes + i) = 0;
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        __syncthreads();
        const unsigned long long layout = (128ull >> 4) << 16 | (256ull >> 4) << 32;
        *a = (unsigned long long)((unsigned)__cvta_generic_to_shared(bytes) >> 4 & 0x3fff) | layout;
        *b = *a + ((64 * 16 * 2) >> 4);
    }
};

/* Each warpgroup of the block: n wgmma m64nNk16 back to back (n a multiple of 8, at least 8), waited for at the end.
 * They are fenced and committed in 8s: ptxas makes the same machine code of one fence before a loop and one commit
 * after it (a WARPGROUP.ARRIVE before each 8 HGMMAs, the 8th marked for the wait), but with a note that it injected
 * the fences, and an empty HGMMA for the commit. */
template <int N, bool RS>
__global__ void __launch_bounds__(256, 1) wgmma_throughput(int n, long long *clocks, unsigned *sink)
{
    __shared__ Tiles<N> tiles;
    unsigned long long a, b;
    tiles.zero_and_describe(&a, &b);
    const unsigned a_regs[4] = {opaque_zero(), opaque_zero(), opaque_zero(), opaque_zero()};
    float d[N / 2] = {};
    pin(d);
    const long long start = block_clock();
    int issued = 0;
#pragma unroll 1
    do {
        wgmma_fence();
        for (int j = 0; j < 8; j++)
            wgmma_of<N, RS>(d, a, a_regs, b);
        wgmma_commit();
        issued += 8;
    } while (issued < n);
    wgmma_wait();
    pin(d);
    const long long stop = block_clock();
    float sum = 0;
    for (int i = 0; i < N / 2; i++)
        sum += d[i];
    if (threadIdx.x == 0)
        clocks[blockIdx.x] = stop - start;
    sink[blockIdx.x * blockDim.x + threadIdx.x] = fold(sum);
}

/* One warpgroup: n wgmma m64nNk16 (n a multiple of 8), each fenced, committed and waited for before the next. */
template <int N, bool RS>
__global__ void __launch_bounds__(128, 1) wgmma_latency(int n, long long *clocks, unsigned *sink)
{
    __shared__ Tiles<N> tiles;
    unsigned long long a, b;
    tiles.zero_and_describe(&a, &b);
    const unsigned a_regs[4] = {opaque_zero(), opaque_zero(), opaque_zero(), opaque_zero()};
    float d[N / 2] = {};
    pin(d);
    const long long start = block_clock();
#pragma unroll 8
    for (int i = 0; i < n; i++) {
        wgmma_fence();
        wgmma_of<N, RS>(d, a, a_regs, b);
        wgmma_commit();
        wgmma_wait();
    }
    pin(d);
    const long long stop = block_clock();
    float sum = 0;
    for (int i = 0; i < N / 2; i++)
        sum += d[i];
    if (threadIdx.x == 0)
        clocks[blockIdx.x] = stop - start;
    sink[blockIdx.x * blockDim.x + threadIdx.x] = fold(sum);
}

/* ---- Dependent chains ------------------------------------------------------------------------------------- */

/* A chain's links: 16 instructions, each reading the last one's result, on values passed at run time (x, and y and
 * z as the other operands). In PTX, so the compiler can neither fold nor merge them; what ptxas made of each link,
 * read in its SASS, is noted at each. */
#define X16(s) s s s s s s s s s s s s s s s s

/* A chain of the three-operand instruction OP (x = OP(x, y, z)) on registers of constraint C. */
#define FMA_CHAIN(NAME, TYPE, C, OP)                                                                     \
    struct NAME {                                                                                      \
        typedef TYPE T;                                                                                \
        static __device__ void links(TYPE &x, TYPE y, TYPE z)                                          \
        {                                                                                              \
            asm volatile(X16(OP " %0, %0, %1, %2;\n") : "+" C(x) : C(y), C(z));                       \
        }                                                                                              \
    };

FMA_CHAIN(Ffma, float, "f", "fma.rn.f32")         /* FFMA */
FMA_CHAIN(Imad, unsigned, "r", "mad.lo.s32")      /* IMAD */
FMA_CHAIN(Hfma2, unsigned, "r", "fma.rn.f16x2")   /* HFMA2 and HFMA2.MMA, which ptxas alternates */
FMA_CHAIN(Dfma, double, "d", "fma.rn.f64")        /* DFMA */
struct Iadd {  /* IADD3: ptxas merges two dependent adds into one IADD3 x + y + z (two adds of the same y into an
                  IMAD or LEA), so a link is a pair of adds, y then z */
    typedef unsigned T;
    static __device__ void links(unsigned &x, unsigned y, unsigned z)
    {
        asm volatile(X16("add.s32 %0, %0, %1;\nadd.s32 %0, %0, %2;\n") : "+r"(x) : "r"(y), "r"(z));
    }
};
struct ImadIadd {  /* IMAD and IADD3 in turn (a link: x = x y + z, then x + y + z): two pipes, or one? */
    typedef unsigned T;
    static __device__ void links(unsigned &x, unsigned y, unsigned z)
    {
        asm volatile(X16("mad.lo.s32 %0, %0, %1, %2;\nadd.s32 %0, %0, %1;\nadd.s32 %0, %0, %2;\n")
                     : "+r"(x) : "r"(y), "r"(z));
    }
};
/* An FFMA and an integer link in turn, on one register's bits (the moves between .f32 and .b32 are none in the
 * machine code). */
#define FFMA_THEN(NAME, INTEGER)                                                                        \
    struct NAME {                                                                                      \
        typedef unsigned T;                                                                            \
        static __device__ void links(unsigned &x, unsigned y, unsigned z)                              \
        {                                                                                              \
            asm volatile("{\n.reg .f32 f;\n" X16("mov.b32 f, %0;\nfma.rn.f32 f, f, f, f;\nmov.b32 %0, f;\n" INTEGER) \
                         "}\n" : "+r"(x) : "r"(y), "r"(z));                                               \
        }                                                                                              \
    };

FFMA_THEN(FfmaIadd, "add.s32 %0, %0, %1;\nadd.s32 %0, %0, %2;\n") /* FFMA and IADD3 in turn */
FFMA_THEN(FfmaImad, "mad.lo.s32 %0, %0, %1, %2;\n")               /* FFMA and IMAD: do they share the FMA pipe? */
struct Ex2 {  /* MUFU.EX2 alone: the .ftz form, as without it ptxas guards an input that might be below 2^-126 with an
                 FSETP and two predicated FMULs (on the first link of each loop trip, where it cannot tell) */
    typedef float T;
    static __device__ void links(float &x, float, float)
    {
        asm volatile(X16("ex2.approx.ftz.f32 %0, %0;\n") : "+f"(x));
    }
};
struct Cvt {  /* F2FP.F16.F32.PACK_AB, the instruction cvt.rn.f16.f32 becomes: here as cvt.rn.f16x2.f32 of z (0) and x,
                the f16 result with 16 zero bits above it read as the next link's f32; cvt.rn.f16.f32 to a 16-bit
                register would add a PRMT to each link, to bring it back to 32 bits */
    typedef unsigned T;
    static __device__ void links(unsigned &x, unsigned, unsigned z)
    {
        asm volatile(X16("cvt.rn.f16x2.f32 %0, %1, %0;\n") : "+r"(x) : "r"(z));
    }
};
struct Shfl {  /* SHFL.BFLY */
    typedef unsigned T;
    static __device__ void links(unsigned &x, unsigned, unsigned)
    {
        asm volatile(X16("shfl.sync.bfly.b32 %0, %0, 1, 0x1f, 0xffffffff;\n") : "+r"(x));
    }
};

/* n links of Op's chain (n a multiple of 16) from x (in thread 0; y in the others); thread 0's clocks. A chain
 * that starts from the same value in every thread would be warp-uniform, and ptxas would run it on the uniform
 * datapath or, for a shuffle, leave it out. */
template <typename Op>
__global__ void chain(typename Op::T x, typename Op::T y, typename Op::T z, int n, long long *clocks, unsigned *sink)
{
    typename Op::T v = threadIdx.x == 0 ? x : y;
    const long long start = block_clock();
#pragma unroll 4
    for (int i = 0; i < n; i += 16)
        Op::links(v, y, z);
    const long long stop = block_clock();
    if (threadIdx.x == 0)
        clocks[blockIdx.x] = stop - start;
    sink[threadIdx.x] = fold(v);
}

/* ---- Latency hidden by warps ---------------------------------------------------------------------------- */

/* Each warp follows its own chain of 128-byte lines through `table`, its 32 lanes reading the line's 32 words (one
 * request, one line), each word holding the next line's first word's index: n dependent requests a warp. Warp w
 * starts at line 64 w; line j links to line j + 97 (mod the table's lines), so a chain visits every line of a
 * table far larger than the L1 before it comes back, and each load is an L2 hit. */
__global__ void line_chase(const unsigned *table, int n, long long *clocks, unsigned *sink)
{
    unsigned at = threadIdx.x / 32 * 64 * 32;
    const long long start = block_clock();
    for (int i = 0; i < n; i++)
        at = table[at + threadIdx.x % 32];
    const long long stop = block_clock();
    if (threadIdx.x == 0)
        clocks[blockIdx.x] = stop - start;
    sink[threadIdx.x] = at;
}

/* ---- The L1's tag stage ----------------------------------------------------------------------------------- */

/* Each of a block's 4 warps loads, n times, the words its lanes hold `stride` words apart, `group` lanes on each
 * word (one 128-byte line when the lanes are 4 bytes apart, 32 lines from 128 bytes up, 32 / group lines of
 * group lanes each), after one untimed load that brings them into the L1: every timed load an L1 hit, 8 in
 * flight per warp. The index adds (i + j) & mask, with mask 0 at run time: the compilers can neither see that
 * the loads read one address (ptxas would keep one of them) nor hoist them out of the loop. */
__global__ void strided_loads(const unsigned *table, unsigned stride, unsigned group, unsigned mask, int n,
                              long long *clocks, unsigned *sink)
{
    const unsigned word = threadIdx.x % 32 / group * stride;
    unsigned acc = table[word];
    const long long start = block_clock();
    for (int i = 0; i < n; i += 8) {
        unsigned v[8];
        for (int j = 0; j < 8; j++)
            v[j] = table[word + ((i + j) & mask)];
        for (int j = 0; j < 8; j++)
            acc ^= v[j];
    }
    const long long stop = block_clock();
    if (threadIdx.x == 0)
        clocks[blockIdx.x] = stop - start;
    sink[threadIdx.x] = acc;
}

/* ---- Host ------------------------------------------------------------------------------------------------- */

struct Timing {
    double ms;           /* event time */
    long long clocks;    /* the largest of the blocks' clock counts */
};

/* launch(n): once to warm up, then REPEATS times, keeping the least event time and the least largest block count
 * (of clocks[0..blocks); none for a kernel that keeps no clocks). */
template <typename Launch> static Timing timed(Launch launch, int n, int blocks)
{
    std::vector<long long> counts(blocks);
    Timing best = {1e30, 0};
    launch(n);
    CUDA_CHECK_LAUNCH();
    for (int repeat = 0; repeat < REPEATS; repeat++) {
        CUDA_CHECK(cudaEventRecord(event_start));
        launch(n);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaEventRecord(event_stop));
        CUDA_CHECK(cudaEventSynchronize(event_stop));
        float ms;
        CUDA_CHECK(cudaEventElapsedTime(&ms, event_start, event_stop));
        best.ms = std::min(best.ms, (double)ms);
        if (blocks == 0)
            continue;
        CUDA_CHECK(cudaMemcpy(counts.data(), clocks, blocks * sizeof(long long), cudaMemcpyDeviceToHost));
        const long long largest = *std::max_element(counts.begin(), counts.end());
        best.clocks = repeat == 0 ? largest : std::min(best.clocks, largest);
    }
    return best;
}

/* What the run of long_n costs beyond the run of short_n. */
template <typename Launch> static Timing difference(Launch launch, int short_n, int long_n, int blocks)
{
    const Timing s = timed(launch, short_n, blocks), l = timed(launch, long_n, blocks);
    return {l.ms - s.ms, l.clocks - s.clocks};
}

static void row(const char *quantity, double value, const char *unit)
{
    printf("\"%s\",%.6g,%s,%s,%s\n", quantity, value, unit, prop.name, date);
}

/* Lets `kernel` be launched with more than half an SM's shared memory, which it does not use: then no two of its
 * blocks fit on one SM, and a grid of one block per SM puts one on each. */
template <typename Kernel> static size_t one_block_per_sm(Kernel kernel)
{
    const size_t bytes = prop.sharedMemPerMultiprocessor / 2 + 1;
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    return bytes;
}

static void per_sm_loads(void)
{
    const int s = 256, l = 1024;  /* loads per thread */
    const double bytes = (double)THREADS * 16 * (l - s);
    const Timing shared = difference([](int n) { shared_loads<<<1, THREADS>>>(n, clocks, sink); }, s, l, 1);
    row("shared memory load throughput", bytes / shared.clocks, "bytes per clock per SM");

    uint4 *table;  /* 16 KiB: each thread's 16 bytes */
    CUDA_CHECK(cudaMalloc(&table, THREADS * sizeof(uint4)));
    CUDA_CHECK(cudaMemset(table, 0, THREADS * sizeof(uint4)));
    const Timing l1 = difference(
        [=](int n) { global_loads<uint4, false><<<1, THREADS>>>(table, THREADS - 1, 1, n, clocks, sink); }, s, l, 1);
    row("L1 load throughput, FP32.v4 loads", bytes / l1.clocks, "bytes per clock per SM");
    CUDA_CHECK(cudaFree(table));
}

/* The L2 rows for loads of T: s and l loads per thread. */
template <typename T> static void l2_loads(const char *quantity, const void *table, int s, int l)
{
    const int blocks = 2 * prop.multiProcessorCount;
    const unsigned mask = (1u << 20) / sizeof(T) - 1;
    const Timing t = difference(
        [=](int n) { global_loads<T, true><<<blocks, THREADS>>>((const T *)table, mask, 0, n, clocks, sink); }, s, l,
        blocks);
    const double bytes = (double)blocks * THREADS * sizeof(T) * (l - s);
    char name[128];
    row(quantity, bytes / t.clocks, "bytes per clock (whole GPU)");
    snprintf(name, sizeof name, "%s, GB/s", quantity);
    row(name, bytes / t.ms / 1e6, "GB/s");
}

static void dram(void)
{
    const size_t bytes = (size_t)2 << 30;
    const int blocks = 2 * prop.multiProcessorCount;
    uint4 *buffer;
    CUDA_CHECK(cudaMalloc(&buffer, bytes));
    CUDA_CHECK(cudaMemset(buffer, 1, bytes));
    const size_t vectors = bytes / sizeof(uint4);
    const Timing read = timed([=](int) { stream_read<<<blocks, THREADS>>>(buffer, vectors, sink); }, 0, 0);
    row("global memory load throughput", bytes / read.ms / 1e6, "GB/s");
    const Timing copy = timed(
        [=](int) { stream_copy<<<blocks, THREADS>>>(buffer, buffer + vectors / 2, vectors / 2); }, 0, 0);
    row("global memory copy throughput", bytes / copy.ms / 1e6, "GB/s");
    CUDA_CHECK(cudaFree(buffer));
}

/* A tensor throughput's TFLOP/s and its SM clock (MHz): `flop` done beyond the short run in t. */
static void tensor_rows(const char *quantity, double flop, Timing t)
{
    char name[160];
    row(quantity, flop / t.ms / 1e9, "TFLOP/s");
    snprintf(name, sizeof name, "%s, SM clock", quantity);
    row(name, t.clocks / t.ms / 1e3, "MHz");
}

template <int K> static void mma_rows(const char *quantity, const unsigned *fragments)
{
    const int sms = prop.multiProcessorCount, s = 4096, l = 16384;  /* rounds of 4 */
    const size_t spread = one_block_per_sm(mma_sync<K>);
    const Timing t = difference(
        [=](int n) { mma_sync<K><<<sms, THREADS, spread>>>(fragments, n, clocks, sink); }, s, l, sms);
    tensor_rows(quantity, (double)sms * (THREADS / 32) * 4 * (l - s) * 2 * 16 * 8 * K, t);
}

template <int N, bool RS = false> static void wgmma_throughput_rows(void)
{
    const int sms = prop.multiProcessorCount, s = 8192, l = 32768;  /* wgmmas per warpgroup */
    const size_t spread = one_block_per_sm(wgmma_throughput<N, RS>);
    const Timing t = difference(
        [=](int n) { wgmma_throughput<N, RS><<<sms, 256, spread>>>(n, clocks, sink); }, s, l, sms);
    char quantity[96];
    snprintf(quantity, sizeof quantity, "wgmma m64n%dk16 f32 accumulate throughput, %s, zero data", N, RS ? "RS" : "SS");
    tensor_rows(quantity, (double)sms * 2 * (l - s) * 2 * 64 * N * 16, t);
}

template <int N, bool RS = false> static void wgmma_latency_row(void)
{
    const int s = 256, l = 1024;
    const Timing t = difference([](int n) { wgmma_latency<N, RS><<<1, 128>>>(n, clocks, sink); }, s, l, 1);
    char quantity[96];
    snprintf(quantity, sizeof quantity, "wgmma m64n%dk16 f32 accumulate latency, %s", N, RS ? "RS" : "SS");
    row(quantity, (double)t.clocks / (l - s), "clocks");
}

template <typename Op>
static void chain_row(const char *quantity, typename Op::T x, typename Op::T y, typename Op::T z, int threads)
{
    const int s = 256, l = 1024;
    const Timing t = difference([=](int n) { chain<Op><<<1, threads>>>(x, y, z, n, clocks, sink); }, s, l, 1);
    row(quantity, (double)t.clocks / (l - s), "clocks");
}

/* Op's chains in 32 warps on one SM: warp instructions (per_link a link) per clock per SM. */
template <typename Op>
static void chain_rate(const char *name, typename Op::T x, typename Op::T y, typename Op::T z, int per_link = 1)
{
    const int s = 256, l = 1024, warps = 32;
    const Timing t = difference([=](int n) { chain<Op><<<1, 32 * warps>>>(x, y, z, n, clocks, sink); }, s, l, 1);
    char quantity[96];
    snprintf(quantity, sizeof quantity, "%s issue rate, dependent chains in 32 warps on one SM", name);
    row(quantity, (double)warps * per_link * (l - s) / t.clocks, "warp instructions per clock per SM");
}

/* The chains above in 32 warps on one SM (8 a scheduler, more than any chain's latency in cycles but the
 * shuffle's), one machine instruction a link: warp instructions per clock per SM, what each pipe sustains. */
static void issue_rates(void)
{
    chain_rate<Ffma>("FFMA", 1.0f, 0.5f, 0.5f);
    chain_rate<Iadd>("IADD3", 1, 1, 1);
    chain_rate<Imad>("IMAD", 1, 1, 2);
    chain_rate<Ex2>("MUFU.EX2", 0.0f, 0.0f, 0.0f);
    chain_rate<Hfma2>("HFMA2", 0x3c003c00, 0x38003800, 0x38003800);
    chain_rate<Dfma>("DFMA", 1.0, 0.5, 0.5);
    chain_rate<Cvt>("F2FP (cvt.rn.f16.f32)", 0x3f800000, 0, 0);
    chain_rate<Shfl>("SHFL.BFLY", 1, 0, 0);
    /* two instruction classes in turn: at the FFMA's rate where their pipes differ, at their own where they share */
    chain_rate<ImadIadd>("IMAD and IADD3 in turn", 1, 1, 2, 2);
    chain_rate<FfmaIadd>("FFMA and IADD3 in turn", 0, 1, 2, 2);
    chain_rate<FfmaImad>("FFMA and IMAD in turn", 0, 1, 2, 2);
}

int main(int argc, char **argv)
{
    check_set_program("throughput");
    const bool issue_rates_alone = argc == 2 && strcmp(argv[1], "--issue-rates") == 0;
    if (argc > 2 || (argc == 2 && !issue_rates_alone))
        fail_status(2, "usage: throughput [--issue-rates]");
    int device;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    const time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    const int sms = prop.multiProcessorCount;
    CUDA_CHECK(cudaMalloc(&clocks, 2 * sms * sizeof *clocks));
    CUDA_CHECK(cudaMalloc(&sink, (size_t)2 * sms * THREADS * sizeof *sink));
    CUDA_CHECK(cudaEventCreate(&event_start));
    CUDA_CHECK(cudaEventCreate(&event_stop));
    printf("quantity,value,unit,gpu,date\n");
    if (issue_rates_alone) { /* one part alone */
        issue_rates();
        return 0;
    }

    per_sm_loads();

    char *l2_table;  /* WINDOWS windows of 1 MiB: far more than an L1, far less than the L2 */
    CUDA_CHECK(cudaMalloc(&l2_table, WINDOWS << 20));
    CUDA_CHECK(cudaMemset(l2_table, 0, WINDOWS << 20));
    l2_loads<unsigned>("L2 load throughput, FP32 loads", l2_table, 16384, 65536);
    l2_loads<uint4>("L2 load throughput, FP32.v4 loads", l2_table, 4096, 16384);
    CUDA_CHECK(cudaFree(l2_table));

    dram();

    unsigned *fragments;  /* mma.sync's A and B: zeros */
    CUDA_CHECK(cudaMalloc(&fragments, 6 * sizeof *fragments));
    CUDA_CHECK(cudaMemset(fragments, 0, 6 * sizeof *fragments));
    mma_rows<16>("mma.sync m16n8k16 f16 in, f32 accumulate, dense throughput", fragments);
    mma_rows<8>("mma.sync m16n8k8 f16 in, f32 accumulate, dense throughput", fragments);
    CUDA_CHECK(cudaFree(fragments));

    wgmma_throughput_rows<256>();
    wgmma_throughput_rows<64>();
    wgmma_throughput_rows<32>();
    wgmma_throughput_rows<16>();
    wgmma_throughput_rows<8>();
    wgmma_latency_row<128>();
    wgmma_latency_row<64>();
    wgmma_latency_row<32>();
    wgmma_latency_row<16>();
    wgmma_throughput_rows<64, true>();
    wgmma_throughput_rows<32, true>();
    wgmma_throughput_rows<16, true>();
    wgmma_throughput_rows<8, true>();
    wgmma_latency_row<32, true>();
    wgmma_latency_row<16, true>();

    for (unsigned ways = 1; ways <= 32; ways *= 2) {
        const int s = 1024, l = 4096;
        char quantity[64];
        const Timing t = difference([=](int n) { bank_conflicts<<<1, 32>>>(ways, n, clocks, sink); }, s, l, 1);
        snprintf(quantity, sizeof quantity, "shared memory bank conflicts, %u-way", ways);
        row(quantity, (double)t.clocks / (l - s), "clocks per warp load");
        /* four warps: what the SM's shared memory takes, where one warp is bound by its own issue */
        const Timing four = difference([=](int n) { bank_conflicts<<<1, 128>>>(ways, n, clocks, sink); }, s, l, 1);
        snprintf(quantity, sizeof quantity, "shared memory bank conflicts, %u-way, 4 warps", ways);
        row(quantity, (double)four.clocks / (4.0 * (l - s)), "clocks per warp load of the SM");
    }

    /* x = x / 2 + 1 / 2 for the FMAs (from 1: it stays 1), x + 2 for the add and the IMAD */
    chain_row<Ffma>("fma.rn.f32 latency", 1.0f, 0.5f, 0.5f, 1);
    chain_row<Iadd>("add.s32 latency", 1, 1, 1, 1);
    chain_row<Imad>("mad.lo.s32 latency", 1, 1, 2, 1);
    chain_row<Ex2>("ex2.approx.f32 latency", 0.0f, 0.0f, 0.0f, 1);
    chain_row<Hfma2>("fma.rn.f16x2 latency", 0x3c003c00, 0x38003800, 0x38003800, 1);  /* f16 pairs 1, 0.5, 0.5 */
    chain_row<Dfma>("fma.rn.f64 latency", 1.0, 0.5, 0.5, 1);
    chain_row<Cvt>("cvt.rn.f16.f32 latency", 0x3f800000, 0, 0, 1);  /* f32 bits 1 and 0 */
    chain_row<Shfl>("shfl.sync.bfly latency", 1, 0, 0, 32);

    issue_rates();

    /* latency hidden by warps: one block of 1 to 32 warps on one SM, each thread a dependent FFMA chain, each warp
     * a chain of L2 hits; warp instructions per clock */
    const int lines = (4 << 20) / 128;
    std::vector<unsigned> links((size_t)lines * 32);
    for (int j = 0; j < lines; j++)
        for (int w = 0; w < 32; w++)
            links[(size_t)j * 32 + w] = (unsigned)((j + 97) % lines) * 32;
    unsigned *line_table;
    CUDA_CHECK(cudaMalloc(&line_table, links.size() * sizeof *line_table));
    CUDA_CHECK(cudaMemcpy(line_table, links.data(), links.size() * sizeof *line_table, cudaMemcpyHostToDevice));
    for (int warps = 1; warps <= 32; warps *= 2) {
        char quantity[96];
        const Timing fma = difference(
            [=](int n) { chain<Ffma><<<1, 32 * warps>>>(1.0f, 0.5f, 0.5f, n, clocks, sink); }, 256, 1024, 1);
        snprintf(quantity, sizeof quantity, "dependent FFMA chains, %d warp%s on one SM", warps, warps > 1 ? "s" : "");
        row(quantity, (double)warps * (1024 - 256) / fma.clocks, "warp instructions per clock per SM");
        const Timing l2 = difference(
            [=](int n) { line_chase<<<1, 32 * warps>>>(line_table, n, clocks, sink); }, 256, 1024, 1);
        snprintf(quantity, sizeof quantity, "dependent L2-hit loads, %d warp%s on one SM", warps, warps > 1 ? "s" : "");
        row(quantity, (double)warps * (1024 - 256) / l2.clocks, "warp loads per clock per SM");
    }
    CUDA_CHECK(cudaFree(line_table));

    /* the L1's tag stage: clocks per warp load of 32 L1-resident words, the lanes 4 bytes to 64 KiB apart */
    unsigned *strided_table;
    CUDA_CHECK(cudaMalloc(&strided_table, (size_t)32 << 16));
    CUDA_CHECK(cudaMemset(strided_table, 0, (size_t)32 << 16));
    for (unsigned bytes = 4; bytes <= (1u << 16); bytes *= 2) {
        const Timing t = difference(
            [=](int n) { strided_loads<<<1, 128>>>(strided_table, bytes / 4, 1, 0, n, clocks, sink); }, 256, 1024, 1);
        char quantity[96];
        snprintf(quantity, sizeof quantity, "L1-hit warp loads, lanes %u bytes apart", bytes);
        row(quantity, t.clocks / (4.0 * (1024 - 256)), "clocks per warp load (4 warps)");
    }
    for (unsigned lines = 1; lines <= 16; lines *= 2) { /* 32 / lines lanes on each line's one word */
        const Timing t = difference(
            [=](int n) { strided_loads<<<1, 128>>>(strided_table, 32, 32 / lines, 0, n, clocks, sink); }, 256, 1024, 1);
        char quantity[96];
        snprintf(quantity, sizeof quantity, "L1-hit warp loads, 32 lanes on %u line%s", lines, lines > 1 ? "s" : "");
        row(quantity, t.clocks / (4.0 * (1024 - 256)), "clocks per warp load (4 warps)");
    }
    CUDA_CHECK(cudaFree(strided_table));

    CUDA_CHECK(cudaEventDestroy(event_start));
    CUDA_CHECK(cudaEventDestroy(event_stop));
    CUDA_CHECK(cudaFree(clocks));
    CUDA_CHECK(cudaFree(sink));
    return 0;
}
