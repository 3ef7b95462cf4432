// Planted bugs for the PTX emulator: each kernel comes as a correct version and a broken twin.
// tests/test_emu_planted.py compiles this file to PTX, runs both under ptxrun and checks that the
// correct one gives the right answer and the broken one is caught (an error line, or a wrong answer).
// A line marked "BUG:" is where the broken twin goes wrong; the test looks for the marker to check
// the source line the emulator names.

// a. Block sum of 64 floats (two warps) through shared memory.
//    missing_sync: no barrier between every thread's store and warp 0 reading warp 1's element.
extern "C" __global__ void reduce_ok(const float* in, float* out)
{
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * 64 + t];
    for (unsigned stride = 32; stride > 0; stride /= 2) {
        __syncthreads();
        if (t < stride)
            s[t] += s[t + stride];
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}

extern "C" __global__ void reduce_missing_sync(const float* in, float* out)
{
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * 64 + t];
    // BUG: missing_sync -- warp 0 reads s[t + 32] before warp 1 has stored it
    if (t < 32)
        s[t] += s[t + 32];
    for (unsigned stride = 16; stride > 0; stride /= 2) {
        __syncthreads();
        if (t < stride)
            s[t] += s[t + stride];
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}

// b. cp.async: 64 threads each copy 16 bytes (4 floats) global->shared, then every thread reads
//    the four floats another warp copied. out[4t + k] = 2 * in[4 * ((t + 32) % 64) + k].
//    missing_wait: commit_group without cp.async.wait_group before the barrier.
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem)
{
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    size_t g = __cvta_generic_to_global(gmem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(g) : "memory");
}

extern "C" __global__ void cp_async_ok(const float* in, float* out)
{
    __shared__ __align__(16) float s[256];
    unsigned t = threadIdx.x;
    cp_async16(&s[4 * t], &in[4 * t]);
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    __syncthreads();
    unsigned src = (t + 32) % 64;
    for (int k = 0; k < 4; k++)
        out[4 * t + k] = 2.0f * s[4 * src + k];
}

extern "C" __global__ void cp_async_missing_wait(const float* in, float* out)
{
    __shared__ __align__(16) float s[256];
    unsigned t = threadIdx.x;
    cp_async16(&s[4 * t], &in[4 * t]);
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    // BUG: missing_wait -- no cp.async.wait_group 0: the copies may not have landed
    __syncthreads();
    unsigned src = (t + 32) % 64;
    for (int k = 0; k < 4; k++)
        out[4 * t + k] = 2.0f * s[4 * src + k];
}

// c. Guarded copy of n floats; oob_store uses <= and writes one element past out.
extern "C" __global__ void copy_ok(const float* in, float* out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] + 1.0f;
}

extern "C" __global__ void copy_oob_store(const float* in, float* out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n)
        out[i] = (i < n ? in[i] : 0.0f) + 1.0f; // BUG: oob_store -- i == n is one past the end
}

// d. Transpose a 16x16 b16 tile (row-major, 32 bytes a row) with one ldmatrix.x4: the four 8x8
//    matrices are (rows 0-7, cols 0-7), (rows 8-15, cols 0-7), (rows 0-7, cols 8-15),
//    (rows 8-15, cols 8-15). With .trans, register j of lane l holds M_j^T[l/4][2(l%4) .. +1],
//    which is out[l/4 + 8(j>>1)][2(l%4) + 8(j&1) .. +1] of out = in^T.
//    wrong_trans: the same stores after ldmatrix without .trans.
__device__ __forceinline__ void stage_tile(const unsigned short* in, unsigned short* s)
{
    unsigned t = threadIdx.x; // 32 threads x 8 b16 = 256
    reinterpret_cast<uint4*>(s)[t] = reinterpret_cast<const uint4*>(in)[t];
    __syncthreads();
}

__device__ __forceinline__ void store_transposed(unsigned* out, const unsigned r[4])
{
    unsigned l = threadIdx.x;
    for (int j = 0; j < 4; j++) {
        unsigned row = l / 4 + 8 * (j >> 1);
        unsigned col = 2 * (l % 4) + 8 * (j & 1);
        out[(row * 16 + col) / 2] = r[j];
    }
}

__device__ __forceinline__ unsigned ldmatrix_row_addr(const unsigned short* s)
{
    unsigned l = threadIdx.x, j = l / 8, r = l % 8;
    return (unsigned)__cvta_generic_to_shared(&s[(r + 8 * (j & 1)) * 16 + 8 * (j >> 1)]);
}

extern "C" __global__ void ldmatrix_ok(const unsigned short* in, unsigned* out)
{
    __shared__ __align__(16) unsigned short s[256];
    stage_tile(in, s);
    unsigned r[4];
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(ldmatrix_row_addr(s)));
    store_transposed(out, r);
}

extern "C" __global__ void ldmatrix_wrong_trans(const unsigned short* in, unsigned* out)
{
    __shared__ __align__(16) unsigned short s[256];
    stage_tile(in, s);
    unsigned r[4];
    // BUG: wrong_trans -- no .trans, so the fragments are of in, not in^T
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(ldmatrix_row_addr(s)));
    store_transposed(out, r);
}

// e. Swap neighbours through shared memory (one warp): out[t] = in[t ^ 1].
//    divergent_barrier: the barrier sits in a branch only the even lanes take.
extern "C" __global__ void swap_ok(const float* in, float* out)
{
    __shared__ float s[32];
    unsigned t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    out[t] = s[t ^ 1];
}

extern "C" __global__ void swap_divergent_barrier(const float* in, float* out)
{
    __shared__ float s[32];
    unsigned t = threadIdx.x;
    s[t] = in[t];
    if ((t & 1) == 0)
        __syncthreads(); // BUG: divergent_barrier -- only the even lanes of the warp get here
    out[t] = s[t ^ 1];
}

// f. float4 loads: out[4i + k] = in[4 + 4i + k] (aligned) / in[1 + 4i + k] (misaligned: 4-byte
//    aligned address read as a 16-byte vector).
extern "C" __global__ void vec_load_ok(const float* in, float* out)
{
    unsigned i = threadIdx.x;
    reinterpret_cast<float4*>(out)[i] = reinterpret_cast<const float4*>(in + 4)[i];
}

extern "C" __global__ void vec_load_misaligned(const float* in, float* out)
{
    unsigned i = threadIdx.x;
    // (load and store on one line: nvcc gives the vector load the store's line)
    reinterpret_cast<float4*>(out)[i] = reinterpret_cast<const float4*>(in + 1)[i]; // BUG: misaligned -- in + 1 is not 16-byte aligned
}

// g. Producer/consumer with a named barrier (64 threads, two warps): warp 0 stores, both warps
//    meet at named barrier 1 (64 threads), warp 1 reads. out[t] = 3 * in[t] for t < 32.
//    deadlock: warp 1 waits at named barrier 2 instead, so neither barrier ever gets 64 threads.
extern "C" __global__ void named_barrier_ok(const float* in, float* out)
{
    __shared__ float s[32];
    unsigned t = threadIdx.x;
    if (t < 32) {
        s[t] = 3.0f * in[t];
        asm volatile("bar.sync 1, 64;\n" ::: "memory");
    } else {
        asm volatile("bar.sync 1, 64;\n" ::: "memory");
        out[t - 32] = s[t - 32];
    }
}

extern "C" __global__ void named_barrier_deadlock(const float* in, float* out)
{
    __shared__ float s[32];
    unsigned t = threadIdx.x;
    if (t < 32) {
        s[t] = 3.0f * in[t];
        asm volatile("bar.sync 1, 64;\n" ::: "memory");
    } else {
        asm volatile("bar.sync 2, 64;\n" ::: "memory"); // BUG: deadlock -- warp 0 waits at barrier 1
        out[t - 32] = s[t - 32];
    }
}

// h-k: races in shared memory that give the right answer in the emulator's schedule (or only by luck
// on a GPU): racecheck must name them.

// h. Two tiles through one shared buffer: each thread stores its element, the block syncs, each thread
//    reads the element of a thread in the other warp; out[t] = sum over tiles.
//    reuse_without_sync: no barrier after the reads, so the next tile's store may overwrite an element
//    the other warp has not read yet (write-after-read).
extern "C" __global__ void tiles_ok(const float* in, float* out)
{
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    float sum = 0.0f;
    for (int tile = 0; tile < 2; tile++) {
        s[t] = in[64 * tile + t];
        __syncthreads();
        sum += s[(t + 32) % 64];
        __syncthreads();
    }
    out[t] = sum;
}

extern "C" __global__ void tiles_reuse_without_sync(const float* in, float* out)
{
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    float sum = 0.0f;
    for (int tile = 0; tile < 2; tile++) {
        s[t] = in[64 * tile + t]; // BUG: reuse_without_sync -- the other warp may still be reading s[t]
        __syncthreads();
        sum += s[(t + 32) % 64];
    }
    out[t] = sum;
}

// i. Neighbour swap within one warp: lane t stores, then reads lane t ^ 1's element.
//    no_syncwarp: nothing orders the lanes of a warp (they are not in lock step): __syncwarp is needed.
extern "C" __global__ void lane_swap_ok(const float* in, float* out)
{
    __shared__ float s[32];
    unsigned t = threadIdx.x;
    s[t] = in[t];
    __syncwarp();
    out[t] = s[t ^ 1];
}

extern "C" __global__ void lane_swap_no_syncwarp(const float* in, float* out)
{
    __shared__ float s[32];
    unsigned t = threadIdx.x;
    s[t] = in[t];
    out[t] = s[t ^ 1]; // BUG: no_syncwarp -- lane t ^ 1's store is not ordered before this read
}

// j. A two-stage cp.async pipeline over four tiles of 64 floats: while the block reads tile k from one
//    stage, the copy of tile k + 1 lands in the other; out[t] = sum of the tiles' elements (t + 32) % 64.
//    stage_reused_early: no barrier at the end of an iteration, so the copy into a stage is issued while
//    the other warp may still read it (an asynchronous write-after-read).
__device__ __forceinline__ void cp_async4(float* smem, const float* gmem)
{
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    size_t g = __cvta_generic_to_global(gmem);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(g) : "memory");
}

template <bool sync_after_reads>
__device__ void two_stage_sum(const float* in, float* out)
{
    __shared__ float stage[2][64];
    unsigned t = threadIdx.x;
    cp_async4(&stage[0][t], &in[t]);
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    float sum = 0.0f;
    for (int tile = 0; tile < 4; tile++) {
        if (tile + 1 < 4)
            cp_async4(&stage[(tile + 1) % 2][t], &in[64 * (tile + 1) + t]);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
        asm volatile("cp.async.wait_group 1;\n" ::: "memory"); // tile's copy has landed, tile + 1's may not
        __syncthreads();
        sum += stage[tile % 2][(t + 32) % 64]; // BUG: stage_reused_early -- races with the next copy into it
        if (sync_after_reads)
            __syncthreads();
    }
    out[t] = sum;
}

extern "C" __global__ void two_stage_ok(const float* in, float* out) { two_stage_sum<true>(in, out); }
extern "C" __global__ void two_stage_reused_early(const float* in, float* out) { two_stage_sum<false>(in, out); }

// k. Two threads store to one word: thread t and thread t + 32 both write s[t % 32].
//    write_write: with no order between them, which value survives is up to the schedule.
extern "C" __global__ void last_writer_ok(const float* in, float* out)
{
    __shared__ float s[32];
    unsigned t = threadIdx.x;
    if (t < 32)
        s[t] = in[t];
    __syncthreads();
    if (t >= 32)
        s[t - 32] = in[t];
    __syncthreads();
    if (t < 32)
        out[t] = s[t];
}

extern "C" __global__ void last_writer_write_write(const float* in, float* out)
{
    __shared__ float s[32];
    unsigned t = threadIdx.x;
    s[t % 32] = in[t]; // BUG: write_write -- threads t and t + 32 store to the same word, unordered
    __syncthreads();
    if (t < 32)
        out[t] = s[t];
}

// l. A shared histogram of 64 values into 32 bins, with atomicAdd.
//    bins_not_zeroed_first: no barrier between warp 0 zeroing the bins and the other warp's atomicAdd to
//    them. Atomics do not race with each other, but a plain store and an atomic unordered do.
extern "C" __global__ void histogram_ok(const unsigned* in, unsigned* out)
{
    __shared__ unsigned bins[32];
    unsigned t = threadIdx.x;
    if (t < 32)
        bins[t] = 0;
    __syncthreads();
    atomicAdd(&bins[in[t] % 32], 1u);
    __syncthreads();
    if (t < 32)
        out[t] = bins[t];
}

extern "C" __global__ void histogram_unsynced(const unsigned* in, unsigned* out)
{
    __shared__ unsigned bins[32];
    unsigned t = threadIdx.x;
    if (t < 32)
        bins[t] = 0; // BUG: bins_not_zeroed_first -- no barrier between this and the atomicAdd below
    atomicAdd(&bins[in[t] % 32], 1u);
    __syncthreads();
    if (t < 32)
        out[t] = bins[t];
}

// m. A message from warp 0 to warp 1 through a flag: warp 0 stores the data, then the flag with release
//    semantics; warp 1 reads the flag with acquire semantics and, if it is set, the data (else -1). No
//    barrier: the emulator runs warp 0 first, so warp 1 finds the flag set (on a GPU it might not, and
//    would write -1; either is correct).
//    plain_flag: the flag is read with a plain load, which synchronizes with nothing: a race.
template <bool acquire>
__device__ void message(const float* in, float* out)
{
    __shared__ float data[32];
    __shared__ unsigned flag;
    unsigned t = threadIdx.x;
    if (t < 32) {
        data[t] = in[t];
        __syncwarp();
        if (t == 0)
            asm volatile("st.release.cta.shared.u32 [%0], 1;\n" ::"r"((unsigned)__cvta_generic_to_shared(&flag))
                         : "memory");
    } else {
        unsigned seen;
        if (acquire)
            asm volatile("ld.acquire.cta.shared.u32 %0, [%1];\n"
                         : "=r"(seen) : "r"((unsigned)__cvta_generic_to_shared(&flag)) : "memory");
        else
            seen = flag; // BUG: plain_flag -- a plain load
        out[t - 32] = seen ? data[t - 32] : -1.0f;
    }
}

extern "C" __global__ void message_ok(const float* in, float* out) { message<true>(in, out); }
extern "C" __global__ void message_plain_flag(const float* in, float* out) { message<false>(in, out); }

// n. Warp 0 spins on a flag in global memory (zero when the kernel starts) until warp 1 sets it: the
//    emulator runs warp 0 first, so it must let warp 1 run while warp 0 spins, not spin forever.
extern "C" __global__ void spin_wait_ok(const float* in, unsigned* flag, float* out)
{
    unsigned t = threadIdx.x;
    if (t < 32) {
        unsigned seen = 0;
        while (!seen)
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(seen) : "l"(flag) : "memory");
        out[t] = in[t];
    } else if (t == 32) {
        asm volatile("st.release.gpu.global.u32 [%0], 1;\n" ::"l"(flag) : "memory");
    }
}

// o. A bulk copy (cp.async.bulk) of 64 floats into shared memory, completing on an mbarrier; thread 0
//    issues it, then the block passes a barrier and reads the copy.
//    skip_the_wait: warp 1 reads after the barrier but never waits on the mbarrier. The barrier orders
//    the issue, not the copy's landing: only the mbarrier's phase says the bytes are there.
//    unfenced_init: no fence.mbarrier_init after the mbarrier.init, so the async proxy, which completes
//    the copy's bytes on the mbarrier, may not see it initialised ("Proxies").
template <bool every_warp_waits, bool fence_init = true>
__device__ void bulk_copy_read(const float* in, float* out)
{
    __shared__ __align__(128) float buf[64];
    __shared__ __align__(8) unsigned long long full;
    unsigned t = threadIdx.x;
    unsigned full_at = (unsigned)__cvta_generic_to_shared(&full), buf_at = (unsigned)__cvta_generic_to_shared(buf);
    if (t == 0) {
        asm volatile("mbarrier.init.shared.b64 [%0], 1;\n" ::"r"(full_at)); // BUG: unfenced_init -- when not fenced
        if (fence_init)
            asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    if (t == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], 256;\n" ::"r"(full_at) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 256, [%2];\n"
                     ::"r"(buf_at), "l"(in), "r"(full_at) : "memory");
    }
    __syncthreads();
    if (t < 32 || every_warp_waits) {
        unsigned done = 0;
        while (!done)
            asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared.b64 p, [%1], 0;\n selp.u32 %0, 1, 0, p;\n}\n"
                         : "=r"(done) : "r"(full_at) : "memory");
    }
    out[t] = buf[t]; // BUG: skip_the_wait -- warp 1 reads without waiting on the mbarrier
}

extern "C" __global__ void bulk_copy_ok(const float* in, float* out) { bulk_copy_read<true>(in, out); }
extern "C" __global__ void bulk_copy_skip_the_wait(const float* in, float* out) { bulk_copy_read<false>(in, out); }
extern "C" __global__ void bulk_copy_unfenced_init(const float* in, float* out) { bulk_copy_read<true, false>(in, out); }

// p. A bulk copy from shared to global memory (thread 0 issues it after every thread stored its
//    element and fenced it into the async proxy); then the block reuses the buffer.
//    reused_before_read: the buffer is overwritten before thread 0's cp.async.bulk.wait_group.read says
//    the copy has read it: the copy may take the new values.
template <bool wait_before_reuse>
__device__ void bulk_store(const float* in, float* out)
{
    __shared__ __align__(16) float s[64];
    unsigned t = threadIdx.x;
    s[t] = in[t];
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    if (t == 0) {
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], 256;\n"
                     ::"l"(out), "r"((unsigned)__cvta_generic_to_shared(s)) : "memory");
        asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
        if (wait_before_reuse)
            asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
    }
    __syncthreads();
    s[t] = -1.0f; // BUG: reused_before_read -- the copy may not have read s yet
    __syncthreads();
    if (t == 0)
        asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}

extern "C" __global__ void bulk_store_ok(const float* in, float* out) { bulk_store<true>(in, out); }
extern "C" __global__ void bulk_store_reused_before_read(const float* in, float* out) { bulk_store<false>(in, out); }

// q. ldmatrix after a loop whose trip count differs per lane. By default the emulator reconverges the
//    lanes where the loop ends, as the code generator does ("Divergence of Threads in Control
//    Constructs"); under EMU_CONVERGENCE=strict only a synchronisation joins them (Independent Thread
//    Scheduling), so the .aligned ldmatrix needs the __syncwarp() the broken twin leaves out.
template <bool SYNCWARP>
__device__ void diverged_ldmatrix(const unsigned short* in, unsigned* out)
{
    __shared__ __align__(16) unsigned short s[256];
    stage_tile(in, s);
    unsigned sum = 0;
    for (unsigned i = 0; i < (in[threadIdx.x] & 7u); i++) // a different number of trips per lane
        sum += in[i];
    if (SYNCWARP)
        __syncwarp();
    unsigned r[4];
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(ldmatrix_row_addr(s))); // BUG: not_reconverged -- lanes that left the loop apart
    store_transposed(out, r);
    out[128 + threadIdx.x] = sum;
}
extern "C" __global__ void reconverged_ldmatrix_ok(const unsigned short* in, unsigned* out)
{
    diverged_ldmatrix<true>(in, out);
}
extern "C" __global__ void diverged_ldmatrix_not_reconverged(const unsigned short* in, unsigned* out)
{
    diverged_ldmatrix<false>(in, out);
}

// r. Device functions nvcc does not inline: a recursive count of the ways to climb n steps one or two at a time
//    (ways(n) = ways(n - 1) + ways(n - 2), and 1 for n <= 0), and a function pointer chosen from a table.
//    runaway_recursion: the base case misses n == -1, so ways(1) recurses for ever: a stack overflow.
//    bad_pointer: the pointer is the table entry's address plus 4, not a function.
__device__ __noinline__ int ways_ok(int n) { return n <= 0 ? 1 : ways_ok(n - 1) + ways_ok(n - 2); }

__device__ __noinline__ int ways_runaway(int n)
{
    if (n == 0)
        return 1;
    return ways_runaway(n - 1) + ways_runaway(n - 2); // BUG: runaway_recursion -- n == -1 never stops
}

extern "C" __global__ void ways_recursion_ok(const int* n, int* out)
{
    out[threadIdx.x] = ways_ok(n[threadIdx.x]);
}

extern "C" __global__ void ways_recursion_runaway(const int* n, int* out)
{
    out[threadIdx.x] = ways_runaway(n[threadIdx.x]);
}

__device__ __noinline__ int op_double(int x) { return 2 * x; }
__device__ __noinline__ int op_square(int x) { return x * x; }
typedef int (*int_op)(int);
__device__ int_op ops[2] = {op_double, op_square};

extern "C" __global__ void pointer_call_ok(const int* x, int* out)
{
    unsigned t = threadIdx.x;
    int_op f = ops[t % 2];
    out[t] = f(x[t]);
}

extern "C" __global__ void pointer_call_bad_pointer(const int* x, int* out)
{
    unsigned t = threadIdx.x;
    int_op f = (int_op)((const char*)ops[t % 2] + 4 * (t == 7));
    out[t] = f(x[t]); // BUG: bad_pointer -- thread 7 calls 4 bytes past a function
}

// t-v: races in global memory (racecheck_global.c), within a block and between the blocks of a launch.
// t. Warp 0 stores in[t] to out[t]; after a barrier, warp 1 stores out[t - 32] + in[t].
//    global_no_barrier: no barrier, so warp 1's loads are not ordered after warp 0's stores (the emulator
//    runs warp 0 first, so the answer is right here; a GPU may run warp 1 first).
template <bool sync>
__device__ void global_handoff(const float* in, float* out)
{
    unsigned t = threadIdx.x;
    if (t < 32)
        out[t] = in[t];
    if (sync)
        __syncthreads();
    if (t >= 32)
        out[t] = out[t - 32] + in[t]; // BUG: global_no_barrier -- warp 0's store is not ordered before this load
}

extern "C" __global__ void global_handoff_ok(const float* in, float* out) { global_handoff<true>(in, out); }
extern "C" __global__ void global_handoff_no_barrier(const float* in, float* out) { global_handoff<false>(in, out); }

// u. Two blocks copy in[0..63] to out[0..63], block b the elements i with i % 2 == b.
//    blocks_overlap: the test of i % 2 forgotten: both blocks store every element (the same values, so
//    the answer is right), and nothing orders one block's stores with the other's.
//    byte_of_other_block: block 1 also stores byte 2 of element 0, block 0's (its own byte, so the answer
//    is right): a race on a byte inside a word the other block stored whole.
template <bool split, bool byte = false>
__device__ void copy_by_two_blocks(const float* in, float* out)
{
    unsigned i = threadIdx.x;
    if (!split || i % 2 == blockIdx.x)
        out[i] = in[i]; // BUG: blocks_overlap -- block 1 stores what block 0 stores, unordered
    const unsigned char* from = reinterpret_cast<const unsigned char*>(in);
    if (byte && blockIdx.x == 1 && i == 1)
        reinterpret_cast<unsigned char*>(out)[2] = from[2]; // BUG: byte_of_other_block -- block 0 stored the word
}

extern "C" __global__ void two_blocks_ok(const float* in, float* out) { copy_by_two_blocks<true>(in, out); }
extern "C" __global__ void two_blocks_overlap(const float* in, float* out) { copy_by_two_blocks<false>(in, out); }
extern "C" __global__ void two_blocks_byte_of_other(const float* in, float* out)
{
    copy_by_two_blocks<true, true>(in, out);
}

// u'. Two blocks copy in[0..63] to out[0..63] a 16-bit half at a time, block b the halves 2i + b: they share
//    every word and no byte (the launch keeps a record per word until blocks touch its bytes apart).
//    word_over_halves: block 1 also stores element 0 whole, block 0's half with its own (the same values,
//    so the answer is right): a race inside a word whose halves two blocks had stored apart.
template <bool whole>
__device__ void halves_by_two_blocks(const float* in, float* out)
{
    unsigned i = threadIdx.x;
    const unsigned short* from = reinterpret_cast<const unsigned short*>(in);
    reinterpret_cast<unsigned short*>(out)[2 * i + blockIdx.x] = from[2 * i + blockIdx.x];
    if (whole && blockIdx.x == 1 && i == 0)
        out[0] = in[0]; // BUG: word_over_halves -- block 0 stored the low half of this word
}

extern "C" __global__ void halves_ok(const float* in, float* out) { halves_by_two_blocks<false>(in, out); }
extern "C" __global__ void halves_word_over_halves(const float* in, float* out)
{
    halves_by_two_blocks<true>(in, out);
}

// v. The last block sums the blocks' partial sums: each block's thread 0 stores its block's sum to
//    partial[b], fences (__threadfence) and takes a ticket; the block that takes the last ticket reads every
//    partial and stores the total. The fence and the ticket order each partial before the last block's
//    reads ("Memory Consistency Model"): a launch that synchronizes through global memory is not checked
//    between its blocks (racecheck_global.c), and this one must pass.
//    fence_dropped: no __threadfence: a relaxed atomic orders nothing, and the last block's reads race with
//    the other blocks' stores.
template <bool fence>
__device__ void last_block_sum(const float* in, float* partial, unsigned* ticket, float* out)
{
    __shared__ float s[64];
    __shared__ bool last;
    unsigned t = threadIdx.x, b = blockIdx.x;
    s[t] = in[64 * b + t];
    __syncthreads();
    if (t == 0) {
        float sum = 0.0f;
        for (int i = 0; i < 64; i++)
            sum += s[i];
        partial[b] = sum;
        if (fence)
            __threadfence();
        last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && t == 0) {
        float total = 0.0f;
        for (unsigned i = 0; i < gridDim.x; i++)
            total += ((volatile float*)partial)[i]; // BUG: fence_dropped -- the partials' stores are not ordered before
        out[0] = total;
    }
}

extern "C" __global__ void last_block_ok(const float* in, float* partial, unsigned* ticket, float* out)
{
    last_block_sum<true>(in, partial, ticket, out);
}

extern "C" __global__ void last_block_fence_dropped(const float* in, float* partial, unsigned* ticket, float* out)
{
    last_block_sum<false>(in, partial, ticket, out);
}

// w. The message of m, with fences instead of a release and an acquire: warp 0 stores the data, fences
//    (__threadfence_block) and sets the flag with a relaxed store; warp 1 reads the flag with a relaxed load,
//    fences, and reads the data if the flag is set (else -1). A fence before a strong store releases, a
//    fence after a strong load acquires ("Memory Consistency Model": fence-SC order, and the patterns it
//    gives): no race.
//    no_reader_fence: warp 1 reads the data after the relaxed load with no fence between: nothing orders
//    warp 0's stores before its reads. no_writer_fence: warp 0 sets the flag with no fence before it.
template <bool reader_fence, bool writer_fence = true>
__device__ void fenced_message(const float* in, float* out)
{
    __shared__ float data[32];
    __shared__ unsigned flag;
    unsigned t = threadIdx.x;
    unsigned flag_at = (unsigned)__cvta_generic_to_shared(&flag);
    if (t < 32) {
        data[t] = in[t]; // BUG: no_writer_fence -- released only by a fence before the flag
        __syncwarp();
        if (t == 0) {
            if (writer_fence)
                __threadfence_block();
            asm volatile("st.relaxed.cta.shared.u32 [%0], 1;\n" ::"r"(flag_at) : "memory");
        }
    } else {
        unsigned seen;
        asm volatile("ld.relaxed.cta.shared.u32 %0, [%1];\n" : "=r"(seen) : "r"(flag_at) : "memory");
        if (reader_fence)
            __threadfence_block();
        out[t - 32] = seen ? data[t - 32] : -1.0f; // BUG: no_reader_fence -- not ordered after the flag
    }
}

extern "C" __global__ void fenced_message_ok(const float* in, float* out) { fenced_message<true>(in, out); }
extern "C" __global__ void fenced_message_no_reader_fence(const float* in, float* out)
{
    fenced_message<false>(in, out);
}
extern "C" __global__ void fenced_message_no_writer_fence(const float* in, float* out)
{
    fenced_message<true, false>(in, out);
}

// x. A byte, or a word, in the middle of a vector: thread 0 stores byte 5 (or word 1, bytes 4-7) of a 16-byte
//    element, then thread 32 (warp 1) stores the whole element. The other bytes race with nothing, those
//    thread 0 stored do: racecheck must judge every byte of a wide access, whichever bytes it judges
//    together, in shared and in global memory.
//    byte_in_vector: the barrier between the two stores dropped (the word's race, the same line).
template <bool sync, bool global, bool word = false>
__device__ void byte_then_vector(const float4* in, float4* out)
{
    __shared__ float4 s[1];
    float4* v = global ? out : s;
    unsigned t = threadIdx.x;
    if (t == 0 && word)
        reinterpret_cast<float*>(v)[1] = 7.0f;
    else if (t == 0)
        reinterpret_cast<unsigned char*>(v)[5] = 7;
    if (sync)
        __syncthreads();
    if (t == 32)
        v[0] = in[0]; // BUG: byte_in_vector -- thread 0's store of byte 5 is not ordered before this one
    __syncthreads();
    if (!global && t == 0)
        out[0] = s[0];
}

extern "C" __global__ void vector_shared_ok(const float4* in, float4* out) { byte_then_vector<true, false>(in, out); }
extern "C" __global__ void vector_global_ok(const float4* in, float4* out) { byte_then_vector<true, true>(in, out); }
extern "C" __global__ void vector_shared_byte_race(const float4* in, float4* out)
{
    byte_then_vector<false, false>(in, out);
}
extern "C" __global__ void vector_global_byte_race(const float4* in, float4* out)
{
    byte_then_vector<false, true>(in, out);
}
extern "C" __global__ void vector_shared_word_ok(const float4* in, float4* out)
{
    byte_then_vector<true, false, true>(in, out);
}
extern "C" __global__ void vector_global_word_ok(const float4* in, float4* out)
{
    byte_then_vector<true, true, true>(in, out);
}
extern "C" __global__ void vector_shared_word_race(const float4* in, float4* out)
{
    byte_then_vector<false, false, true>(in, out);
}
extern "C" __global__ void vector_global_word_race(const float4* in, float4* out)
{
    byte_then_vector<false, true, true>(in, out);
}

// y. Two half-warps exchange through shared memory, each half synchronizing only itself (__syncwarp with its
//    half's member mask, "guarantees memory ordering among threads participating in barrier"): lane t reads
//    lane t ^ 1's element, in its own half.
//    other_half: lane t reads lane t ^ 16's element, which the other half's __syncwarp orders for that half only.
template <bool other_half>
__device__ void half_warps(const float* in, float* out)
{
    __shared__ float s[32];
    unsigned t = threadIdx.x;
    s[t] = in[t];
    __syncwarp(t < 16 ? 0x0000ffffu : 0xffff0000u);
    out[t] = other_half ? s[t ^ 16] : s[t ^ 1]; // BUG: other_half -- lane t ^ 16's store is ordered for its half alone
}

extern "C" __global__ void half_warps_ok(const float* in, float* out) { half_warps<false>(in, out); }
extern "C" __global__ void half_warps_other_half(const float* in, float* out) { half_warps<true>(in, out); }

// z. One lane's fence orders nothing between two others: lane 1 stores an element, lane 2 runs
//    fence.proxy.async, and lane 0 reads the element after a __syncwarp.
//    fence_between: no __syncwarp, only lane 2's fence between the store and the read.
template <bool sync>
__device__ void fence_between(const float* in, float* out)
{
    __shared__ float s[32];
    unsigned t = threadIdx.x;
    if (t == 1)
        s[1] = in[1];
    if (t == 2)
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    if (sync)
        __syncwarp();
    if (t == 0)
        out[0] = s[1]; // BUG: fence_between -- lane 2's fence does not order lane 1's store before this read
}

extern "C" __global__ void fence_between_ok(const float* in, float* out) { fence_between<true>(in, out); }
extern "C" __global__ void fence_between_lanes(const float* in, float* out) { fence_between<false>(in, out); }

// aa. A release and an acquire order the two lanes that make them, no other: lane 1 stores an element and
//     sets a flag with st.release; lane 0 reads the flag with ld.acquire and, when set, the element.
//     no_acquire: lane 2 reads the element too, having acquired nothing (the answer is right in the
//     emulator's order; nothing in the memory model makes it so).
template <bool third_lane>
__device__ void lane_message(const float* in, float* out)
{
    __shared__ float data;
    __shared__ unsigned flag;
    unsigned t = threadIdx.x;
    unsigned flag_at = (unsigned)__cvta_generic_to_shared(&flag);
    if (t == 1) {
        data = in[1];
        asm volatile("st.release.cta.shared.u32 [%0], 1;\n" ::"r"(flag_at) : "memory");
    }
    if (t == 0) {
        unsigned seen;
        asm volatile("ld.acquire.cta.shared.u32 %0, [%1];\n" : "=r"(seen) : "r"(flag_at) : "memory");
        out[0] = seen ? data : -1.0f;
    }
    if (third_lane && t == 2)
        out[1] = data; // BUG: no_acquire -- lane 1's store is ordered before lane 0's reads, not lane 2's
}

extern "C" __global__ void lane_message_ok(const float* in, float* out) { lane_message<false>(in, out); }
extern "C" __global__ void lane_message_no_acquire(const float* in, float* out) { lane_message<true>(in, out); }

// bb. The bytes of one word stored apart, then the word: threads 0, 1, 32 and 33 (two warps) each store one
//     byte of a word, which races with nothing; after a barrier, thread 34 reads the word and stores it
//     back plus one in each byte; after a second barrier, thread 35 reads byte 1. Racecheck judges a word's
//     bytes apart where accesses take them apart, and the word as one again once a store takes all of it.
//     bytes_then_word: no barrier between the byte stores and thread 34's read.
//     word_then_byte: no barrier between thread 34's store of the word and thread 35's read of byte 1.
template <bool first_sync, bool second_sync, bool global>
__device__ void bytes_and_word(const unsigned* in, unsigned* out)
{
    __shared__ unsigned s[1];
    unsigned* word = global ? out : s;
    unsigned char* bytes = reinterpret_cast<unsigned char*>(word);
    unsigned t = threadIdx.x;
    if (t == 0 || t == 1 || t == 32 || t == 33) {
        unsigned byte = t % 32 + 2 * (t / 32);
        bytes[byte] = (unsigned char)in[byte];
    }
    if (first_sync)
        __syncthreads();
    if (t == 34) {
        unsigned v = *word; // BUG: bytes_then_word -- the other threads' byte stores are not ordered before it
        *word = v + 0x01010101u;
        out[1] = v;
    }
    if (second_sync)
        __syncthreads();
    if (t == 35) {
        out[2] = bytes[1]; // BUG: word_then_byte -- thread 34's store of the word is not ordered before it
        if (!global)
            out[0] = *word;
    }
}

extern "C" __global__ void bytes_shared_ok(const unsigned* in, unsigned* out) { bytes_and_word<true, true, false>(in, out); }
extern "C" __global__ void bytes_global_ok(const unsigned* in, unsigned* out) { bytes_and_word<true, true, true>(in, out); }
extern "C" __global__ void bytes_shared_then_word(const unsigned* in, unsigned* out)
{
    bytes_and_word<false, true, false>(in, out);
}
extern "C" __global__ void bytes_global_then_word(const unsigned* in, unsigned* out)
{
    bytes_and_word<false, true, true>(in, out);
}
extern "C" __global__ void bytes_shared_word_then_byte(const unsigned* in, unsigned* out)
{
    bytes_and_word<true, false, false>(in, out);
}
extern "C" __global__ void bytes_global_word_then_byte(const unsigned* in, unsigned* out)
{
    bytes_and_word<true, false, true>(in, out);
}

// cc. Each thread reads its neighbour's element of a shared tile; past_end's thread 37 (lane 5 of warp 1,
//     the rest of its warp inside the tile) reads one element past the tile's end: the warp's access is
//     out of bounds by one lane alone.
template <bool ok>
__device__ void shared_edge(const float* in, float* out)
{
    __shared__ float tile[64];
    unsigned t = threadIdx.x;
    tile[t] = in[t];
    __syncthreads();
    unsigned from = ok || t != 37 ? (t + 1) % 64 : 64;
    out[t] = tile[from]; // BUG: shared_past_end -- thread 37 reads tile[64]
}

extern "C" __global__ void shared_edge_ok(const float* in, float* out) { shared_edge<true>(in, out); }
extern "C" __global__ void shared_edge_past_end(const float* in, float* out) { shared_edge<false>(in, out); }
