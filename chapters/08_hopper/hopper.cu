/* Chapter 08: implicit GEMM on Hopper's warpgroup tensor cores (wgmma).
 *
 * What it computes: fprop, exactly chapter 05's: fp16 NHWC x, KRSC w, fp32
 * accumulation, fp16 NHWC y, any padding, stride, dilation and groups; C/groups not a multiple of 8
 * runs on chapter 05's zero-padded copy (pad_channels), in the workspace.
 *
 * The GEMM view is unchanged (implicit_gemm.h): per group, Y[m][j] = sum_kappa A[m][kappa] B[kappa][j],
 * m = (n, p, q) an output pixel, j an output channel, kappa = (r, s, c) with c fastest. A is gathered
 * from x by cp.async exactly as 05g and 05h gather it (row origins and tap masks computed once per row, the
 * tap walked by igemm_iter_next(), zero-fill for the padding); B is rows of the KRSC filter.
 *
 * What is new, 08a:
 *   - wgmma.mma_async.m64n128k16: a warpgroup (4 warps, 128 threads) multiplies a 64 x 16 slice of A
 *     by a 16 x 128 slice of B into 64 x 128 fp32 accumulators held across its registers (64 each).
 *     Both operands come straight from shared memory: no ldmatrix, no operand registers. The
 *     instruction is asynchronous: it is issued, then committed as a group (wgmma.commit_group), and
 *     waited for later (wgmma.wait_group), so the warpgroup can issue the next stage's copies while
 *     the tensor cores work.
 *   - the tiles are in the layout the tensor cores read: K-major, 128-byte swizzle (hopper.h), each
 *     operand named by a 64-bit matrix descriptor (hopper_operand_desc()).
 *   - two warpgroups (256 threads), each copying and multiplying, share a 128 x 128 block tile, 64 rows
 *     each; BK = 64 (one 128-byte swizzle row per staged row); 5 stages of 32 KB.
 *   - fence.proxy.async: cp.async writes shared memory through the "generic proxy", wgmma reads it
 *     through the "async proxy". Each thread fences its landed copies into the async proxy before the
 *     barrier after which wgmma reads them.
 *
 * The pipeline, per k tile kt (hopper_wgmma_kernel below):
 *   wait for this thread's copies of tile kt; fence.proxy.async; barrier
 *     (now tile kt is complete and visible to the tensor cores, and every warpgroup has passed its
 *      wgmma.wait_group 1 of the previous iteration: the wgmma of tile kt-2 are done everywhere)
 *   issue the copies of tile kt+STAGES-2 into tile kt-2's stage; commit
 *   wgmma.fence; 4 x wgmma (16 kappa each) on tile kt's stage; wgmma.commit_group
 *   wgmma.wait_group 1 (the group of tile kt-1 is done; tile kt's may still run)
 * So STAGES-2 tiles are being copied while one wgmma group runs and the next is issued.
 *
 * 08b (hopper_ws_kernel): the same tile, stages and wgmma, with the work split by role.
 *   - warpgroup 0, the producer (setmaxnreg.dec to 56 registers): per k tile, waits on the stage's
 *     "empty" mbarrier, has the TMA unit fetch the B tile (one thread: mbarrier.expect_tx, then
 *     cp.async.bulk.tensor.2d with the filter's tensor map, 128-byte swizzle, zero fill outside;
 *     completes on the stage's "full" mbarrier), and gathers A with cp.async (128 threads, 8 chunks
 *     each). LAG tiles later each thread waits for its chunks, fences them into the async proxy and
 *     arrives on the tile's full barrier.
 *   - warpgroups 1 and 2, the consumers (setmaxnreg.inc to 224): wait on full, 4 x wgmma, commit,
 *     wait_group 1, and release the previous tile's stage (one arrival per warp on its empty barrier).
 *   No block-wide barrier in the loop. The tensor map is made on the host by cuTensorMapEncodeTiled,
 *   found through cudaGetDriverEntryPointByVersion (the binaries link only the runtime), and passed as
 *   a __grid_constant__ parameter.
 *
 * Hopper-only code: wgmma needs the sm_90a target, and the build compiles this file for sm_90a alone
 * (chapters/08_hopper/meson.build), so an H100 cannot pick a plain sm_90 copy instead. Compiled for any
 * other target (tests/check_build.py does, to check them all) the kernels are a trap, and supports()
 * refuses every device that is not compute capability 9.0, so they never launch there.
 *
 * Status: compiled (sm_90a: no spills, no stack); layout math, both kernels' data movement and 08b's
 * mbarrier protocol emulated on the CPU by tests/test_hopper.c; not yet run on a GPU.
 *
 * Run:
 *   ./build/conv run 08a --layer resnet50/res2_3x3     (likewise 08b)
 *   ./build/conv check 08
 */
#include <stdint.h>
#include <stdio.h>

#include <cuda.h> /* CUtensorMap and its enums: types only, libcuda is not linked */
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h> /* PFN_cuTensorMapEncodeTiled */

#include "check.h"
#include "conv.h"
#include "hopper.h"
#include "igemm_pipeline.cuh" /* igemm_out_chunks: the staged epilogue's 16-byte stores */
#include "implicit_gemm.h"    /* chapter 05's index math: row origins, tap masks, the walk */
#include "pad_channels.h"
#include "tensor_core.h" /* smem_address, cp_async_16, cp_async_commit, cp_async_wait */

/* The block tile, in the names igemm_out_chunks() expects. */
struct h08a_shape {
    enum {
        BM = H08A_BM,
        BN = H08A_BN,
        BK = H08A_BK,
        STAGES = H08A_STAGES,
        THREADS = H08A_THREADS,
        OUT_PITCH = H08A_BN + 8, /* the staged output tile's row pitch, in halves (as chapter 05) */
        CPR = H08_CHUNKS_PER_ROW,
        A_LOADS = H08A_BM * H08_CHUNKS_PER_ROW / H08A_THREADS, /* 16-byte copies per thread per k tile */
        B_LOADS = H08A_BN * H08_CHUNKS_PER_ROW / H08A_THREADS,
    };
};
typedef h08a_shape T08a;
static_assert(H08A_BK * 2 == H08_ROW_BYTES, "a staged row is exactly one 128-byte swizzle row");
static_assert(H08A_BM == H08A_WARPGROUPS * H08_WG_M, "each warpgroup owns 64 rows: one wgmma's M");
static_assert(H08A_BN == 128, "the wgmma wrapper below is m64n128k16");
static_assert(T08a::A_LOADS * H08A_THREADS == H08A_BM * H08_CHUNKS_PER_ROW &&
                  T08a::B_LOADS * H08A_THREADS == H08A_BN * H08_CHUNKS_PER_ROW,
              "every thread copies the same number of chunks");
static_assert(H08A_A_TILE_BYTES % H08_ATOM_BYTES == 0 && H08A_STAGE_BYTES % H08_ATOM_BYTES == 0,
              "every tile starts 1024-byte aligned: the swizzle's base offset is 0");
static_assert(H08A_STAGES >= 3, "two stages are read by wgmma groups in flight, the rest are being copied");

/* Shared memory: STAGES x (A tile, B tile), from a 1024-byte aligned start (hence the 1024 bytes of
 * slack: the dynamic shared memory's own alignment is not promised to be that large); reused for the
 * output tile after the loop. */
static const size_t h08a_smem_bytes = (size_t)H08A_STAGES * H08A_STAGE_BYTES + H08_ATOM_BYTES;
static_assert((size_t)H08A_BM * (H08A_BN + 8) * 2 <= (size_t)H08A_STAGES * H08A_STAGE_BYTES,
              "the output tile fits in the stages");

extern __shared__ __align__(1024) unsigned char h08_smem[];

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
/* ---- sm_90a: the warpgroup MMA wrappers (PTX ISA "Asynchronous Warpgroup Level Matrix Multiply-
 * Accumulate Instructions") ------------------------------------------------------------------------- */

/* wgmma.fence: orders this warpgroup's earlier register and shared-memory accesses before the
 * wgmma.mma_async that follow. Needed before the first wgmma of a batch; between wgmma of the same shape
 * accumulating into the same registers the hardware keeps the order itself. */
static __device__ __forceinline__ void wgmma_fence(void)
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

/* Closes the group of every wgmma.mma_async this warpgroup issued since the last commit. */
static __device__ __forceinline__ void wgmma_commit(void)
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/* Waits until at most N of this warpgroup's committed groups are pending: their accumulators are
 * written and their shared-memory reads done. */
template <int N>
static __device__ __forceinline__ void wgmma_wait(void)
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

/* No instruction: tells the compiler that every accumulator may have changed here, so that no read
 * of one moves above the wgmma_wait() before it (the wgmma asm is the accumulators' last visible
 * writer, and the wait does not name them). */
static __device__ __forceinline__ void wgmma_fence_operands(float (&d)[H08A_ACC])
{
#pragma unroll
    for (int i = 0; i < H08A_ACC; i++)
        asm volatile("" : "+f"(d[i])::"memory");
}

/* fence.proxy.async.shared::cta: this thread's earlier writes to shared memory through the generic
 * proxy (ordinary stores, and cp.async once waited for) are ordered before later accesses through the
 * async proxy (wgmma's operand reads, TMA). With a barrier after it, before other threads' wgmma. */
static __device__ __forceinline__ void fence_proxy_async_shared(void)
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/* acc += A (64 x 16, from descriptor a) x B (16 x 128, from descriptor b) on the tensor cores:
 * wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16, both operands from shared memory, both K-major
 * (imm-trans-a = imm-trans-b = 0), scale-d true (accumulate into d), scale-a = scale-b = +1. It only
 * starts the multiply. The accumulators are "+f" operands, so the compiler keeps them where they are;
 * they may be read only after a wgmma_wait() that covers this instruction's group, followed by
 * wgmma_fence_operands() (below). PTX ISA "wgmma.mma_async". */
static __device__ __forceinline__ void wgmma_m64n128k16(float (&d)[H08A_ACC], uint64_t a, uint64_t b)
{
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "setp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
                 "}, %64, %65, p, 1, 1, 0, 0;\n"
                 "}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
                   "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
                   "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
                   "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
                   "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
                   "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(a), "l"(b), "r"(1));
}

/* ---- sm_90a: mbarriers, TMA, setmaxnreg (08b) ------------------------------------------------------- */

/* An mbarrier (a 64-bit object in shared memory) expecting `count` arrivals per phase (PTX ISA
 * "Parallel Synchronization and Communication Instructions: mbarrier"). */
static __device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

/* Makes the initialised barriers visible to the async proxy (the TMA unit signals them) and, with the
 * __syncthreads() after it, to every thread. */
static __device__ __forceinline__ void mbar_fence_init(void)
{
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/* One arrival (release semantics: this thread's earlier writes happen before the phase completes). */
static __device__ __forceinline__ void mbar_arrive(uint32_t bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

/* The current phase will also wait for `bytes` bytes of asynchronous copies (complete_tx), without
 * arriving: the thread arrives later, like the others, once its own cp.async have landed. */
static __device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes)
{
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

/* Spins until the phase of parity `parity` has completed (acquire semantics: what the arriving
 * threads wrote before arriving, and the bytes the TMA unit delivered, are visible afterwards). */
static __device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity)
{
    asm volatile("{\n"
                 ".reg .pred done;\n"
                 "MBAR_WAIT_%=:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra MBAR_WAIT_%=;\n"
                 "}\n" ::"r"(bar),
                 "r"(parity)
                 : "memory");
}

/* The TMA unit copies the box at coordinates (c0 innermost, c1) of the tensor `map` describes into
 * shared memory at dst (1024-byte aligned for the 128-byte swizzle), and signals complete_tx of its
 * bytes on `bar`. One thread issues it. PTX ISA "cp.async.bulk.tensor". */
static __device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap *map, int c0, int c1, uint32_t bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
                 "[%4];\n" ::"r"(dst),
                 "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(bar)
                 : "memory");
}

/* setmaxnreg: this warpgroup gives registers back to the pool (dec) or takes them (inc); every warp of
 * the warpgroup executes it. */
template <int N>
static __device__ __forceinline__ void setmaxnreg_dec(void)
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}

template <int N>
static __device__ __forceinline__ void setmaxnreg_inc(void)
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

/* A barrier among the consumer warpgroups only (named barrier 1): the producer has left. */
static __device__ __forceinline__ void consumers_sync(void)
{
    asm volatile("bar.sync 1, %0;\n" ::"n"(128 * H08B_CONSUMERS) : "memory");
}

#endif /* sm_90a */

/* ---- 08a: the kernel ------------------------------------------------------------------------------ */

/* A thread's share of gathering the A tile (BM rows of 8 chunks) when `COPIERS` threads share it: 05h's
 * row setup and copy_next() for this tile shape. Row origins and tap masks are computed once; the position along
 * kappa walks one k tile at a time (igemm_iter_next: no division in the loop). */
template <int COPIERS>
struct a_copier {
    enum { LOADS = H08A_BM * H08_CHUNKS_PER_ROW / COPIERS };
    int offset[LOADS];      /* row origin offsets in x (igemm_row_origin) */
    uint32_t h_mask[LOADS]; /* igemm_tap_mask along h and w: 0 for rows past the last pixel */
    uint32_t w_mask[LOADS];
    igemm_iter at;          /* the position along kappa of this thread's next chunk */

    __device__ __forceinline__ void init(const conv_problem &prob, int group, int row0, int rows, int ctid)
    {
#pragma unroll
        for (int i = 0; i < LOADS; i++) {
            const int m = row0 + igemm_load_row(ctid, i, COPIERS, H08_CHUNKS_PER_ROW);
            offset[i] = 0;
            h_mask[i] = w_mask[i] = 0;
            if (m < rows) {
                const igemm_origin o = igemm_row_origin(&prob, group, m);
                offset[i] = o.offset;
                h_mask[i] = igemm_tap_mask(o.h, prob.r, prob.dil_h, prob.h);
                w_mask[i] = igemm_tap_mask(o.w, prob.s, prob.dil_w, prob.w);
            }
        }
        at = igemm_iter_at(&prob, igemm_load_chunk(ctid, H08_CHUNKS_PER_ROW) * 8);
    }

    /* cp.async of this thread's chunks of the k tile at `at` into the A tile at `a_tile`, each at its
     * swizzled place (hopper_chunk_offset); zeros (src-size 0) for the padding, rows past the last
     * pixel and kappa past the reduction. */
    __device__ __forceinline__ void copy(uint32_t a_tile, int ctid, int depth, const __half *x) const
    {
        const bool k_ok = at.kappa < depth;
        const int chunk = igemm_load_chunk(ctid, H08_CHUNKS_PER_ROW);
#pragma unroll
        for (int i = 0; i < LOADS; i++) {
            const bool ok = k_ok && ((h_mask[i] >> at.r) & (w_mask[i] >> at.s) & 1u);
            cp_async_16(a_tile + hopper_chunk_offset(igemm_load_row(ctid, i, COPIERS, H08_CHUNKS_PER_ROW), chunk),
                        ok ? x + (offset[i] + at.offset) : x, ok);
        }
    }
};

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
/* The epilogue's two halves, as chapter 05's: the accumulators as fp16 pairs into a BM x OUT_PITCH
 * tile in shared memory (the fragment layout: hopper_d_row/col; warpgroup wg owns rows 64 wg ..), then,
 * after a barrier, whole 16-byte chunks (8 channels of one pixel, igemm_out_chunks) to y where K and
 * K/groups are multiples of 8, element by element otherwise and at the last column tile's edge. */
static __device__ __forceinline__ void stage_accumulators(__half *out, const float (&acc)[H08A_ACC], int wg, int wg_tid)
{
#pragma unroll
    for (int i = 0; i < H08A_ACC; i += 2) {
        const int row = wg * H08_WG_M + hopper_d_row(wg_tid, i), col = hopper_d_col(wg_tid, i);
        *(__half2 *)&out[row * (H08A_BN + 8) + col] = __floats2half2_rn(acc[i], acc[i + 1]);
    }
}

/* The staged output tile to y, as chapter 05 stores it (igemm_store_chunks, igemm_pipeline.cuh). */
template <class T>
static __device__ __forceinline__ void store_tile(const __half *out, int tid, const conv_problem &prob, int group,
                                                  const gemm_block blk, __half *y)
{
    const int cols = igemm_cols(&prob);
    igemm_store_chunks<T>(out, tid, blk.row0, blk.col0, igemm_rows(&prob), cols, prob.k % 8 == 0 && cols % 8 == 0,
                          [&](int m, int j) { return y + igemm_y_offset(&prob, group, m, j); });
}
#endif

static __global__ void __launch_bounds__(H08A_THREADS, 1)
hopper_wgmma_kernel(const conv_problem prob, const igemm_walk walk, const __half *__restrict__ x,
                    const __half *__restrict__ w, __half *__restrict__ y)
{
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
    const uint32_t raw = smem_address(h08_smem);
    const uint32_t smem = (raw + (H08_ATOM_BYTES - 1)) & ~(uint32_t)(H08_ATOM_BYTES - 1);
    const int rows = igemm_rows(&prob), cols = igemm_cols(&prob), depth = igemm_depth(&prob);
    const int group = blockIdx.y;
    const gemm_block blk = gemm_block_of(blockIdx.x, cols, H08A_BM, H08A_BN);
    const int tid = threadIdx.x, wg = tid / 128, wg_tid = tid % 128;
    const int chunk = igemm_load_chunk(tid, T08a::CPR);

    /* Every thread copies A and B: its A rows (divisions done here, once) and its B rows (filter rows,
     * one per output channel, kappa contiguous). */
    a_copier<H08A_THREADS> ac;
    ac.init(prob, group, blk.row0, rows, tid);
    int b_offset[T08a::B_LOADS]; /* offsets in w of (column, kappa = 0) */
    bool b_ok[T08a::B_LOADS];
#pragma unroll
    for (int i = 0; i < T08a::B_LOADS; i++) {
        const int j = blk.col0 + igemm_load_row(tid, i, H08A_THREADS, T08a::CPR);
        b_ok[i] = j < cols;
        b_offset[i] = igemm_b_offset(&prob, group, b_ok[i] ? j : 0, 0);
    }

    /* This thread's cp.async for the next k tile into the stage at `stage`, then one k tile on. */
    auto copy_next = [&](uint32_t stage) {
        ac.copy(stage, tid, depth, x);
        const bool k_ok = ac.at.kappa < depth;
#pragma unroll
        for (int i = 0; i < T08a::B_LOADS; i++) {
            const bool ok = k_ok && b_ok[i];
            cp_async_16(stage + H08A_A_TILE_BYTES +
                            hopper_chunk_offset(igemm_load_row(tid, i, H08A_THREADS, T08a::CPR), chunk),
                        ok ? w + (b_offset[i] + ac.at.kappa) : w, ok);
        }
        ac.at = igemm_iter_next(ac.at, walk);
    };

    float acc[H08A_ACC];
#pragma unroll
    for (int i = 0; i < H08A_ACC; i++)
        acc[i] = 0.0f;

    /* Prologue: tiles 0 .. STAGES-3 in flight, one commit group each (empty past the last tile). */
    const int k_tiles = tiles_covering(depth, H08A_BK);
#pragma unroll
    for (int s = 0; s < H08A_STAGES - 2; s++) {
        if (s < k_tiles)
            copy_next(smem + s * H08A_STAGE_BYTES);
        cp_async_commit();
    }

    int read_stage = 0, write_stage = H08A_STAGES - 2;
    for (int kt = 0; kt < k_tiles; kt++) {
        /* STAGES-2+kt groups committed; at most STAGES-3 pending means tile kt has landed (this
         * thread's part); the fence hands it to the async proxy, the barrier makes it everyone's. The
         * barrier also means every warpgroup has passed the wgmma_wait<1>() of iteration kt-1: the
         * wgmma of tile kt-2 are done, so its stage (write_stage) may be overwritten. */
        cp_async_wait<H08A_STAGES - 3>();
        fence_proxy_async_shared();
        __syncthreads();
        if (kt + H08A_STAGES - 2 < k_tiles)
            copy_next(smem + write_stage * H08A_STAGE_BYTES);
        cp_async_commit();

        /* This warpgroup's 64 rows of A times all 128 columns of B, 16 kappa per wgmma. The copies
         * above branch per thread; wgmma is .sync.aligned, so reconverge the warp explicitly first. */
        const uint32_t a_tile = smem + read_stage * H08A_STAGE_BYTES, b_tile = a_tile + H08A_A_TILE_BYTES;
        __syncwarp();
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < H08A_BK / H08_MMA_K; ks++)
            wgmma_m64n128k16(acc, hopper_operand_desc(a_tile, wg * H08_WG_M, ks * H08_MMA_K),
                             hopper_operand_desc(b_tile, 0, ks * H08_MMA_K));
        wgmma_commit();
        wgmma_wait<1>();

        read_stage = read_stage == H08A_STAGES - 1 ? 0 : read_stage + 1;
        write_stage = write_stage == H08A_STAGES - 1 ? 0 : write_stage + 1;
    }
    wgmma_wait<0>();
    wgmma_fence_operands(acc);
    cp_async_wait<0>(); /* nothing may land in the stages once they hold the output tile */
    __syncthreads();    /* every warpgroup is done reading the stages */

    /* Epilogue, as chapter 05's: fp16 pairs into a BM x OUT_PITCH tile (the accumulator fragment:
     * hopper_d_row/col), then whole 16-byte chunks (8 channels of one pixel) to y where K and
     * K/groups are multiples of 8, element by element otherwise and at the last column tile's edge. */
    __half *out = (__half *)(h08_smem + (smem - raw));
    stage_accumulators(out, acc, wg, wg_tid);
    __syncthreads();
    store_tile<T08a>(out, tid, prob, group, blk, y);
#else
    /* Any other target: wgmma does not exist there. supports() keeps this from being launched. */
    (void)prob;
    (void)walk;
    (void)x;
    (void)w;
    (void)y;
    __trap();
#endif
}

/* ---- 08b: TMA for B, mbarriers, a producer warpgroup ---------------------------------------------- */

/* The consumers' side of the block tile, in the names igemm_out_chunks() expects. */
struct h08b_consumers {
    enum { BM = H08A_BM, BN = H08A_BN, THREADS = 128 * H08B_CONSUMERS, OUT_PITCH = H08A_BN + 8 };
};
static_assert(H08B_LAG >= 1 && H08B_LAG <= H08B_STAGES - 2,
              "the producer releases tile t - LAG before it waits for the stage of tile t + 1 - STAGES + LAG");
static_assert(H08B_CONSUMERS == H08A_WARPGROUPS, "each consumer warpgroup owns 64 rows of the 128-row tile");
/* setmaxnreg moves registers within the block's own pool (PTX ISA "setmaxnreg": a pool per CTA, and
 * .inc blocks until the pool has enough), and that pool is what the block was launched with: 384
 * threads x the count ptxas gives the kernel under __launch_bounds__(384, 1), 65536 / 384 rounded down
 * to the allocation unit of 8 = 168. Not the SM's 64K: the consumers' .inc would wait forever for
 * registers the producer never released. */
static_assert(128 * H08B_PRODUCER_REGS + 128 * H08B_CONSUMERS * H08B_CONSUMER_REGS <=
                  H08B_THREADS * (65536 / H08B_THREADS / 8 * 8),
              "setmaxnreg: the warpgroups' registers fit the block's pool, 384 x 168");

/* STAGES x (A, B), then the barriers: full[STAGES], empty[STAGES]; from a 1024-byte aligned start. */
static const size_t h08b_smem_bytes = (size_t)H08B_STAGES * H08A_STAGE_BYTES + 2 * H08B_STAGES * 8 + H08_ATOM_BYTES;

/* Warpgroup 0, the producer: per k tile t, waits until stage t % STAGES is free (empty barrier), has
 * the TMA unit fetch B into it (one thread: expect_tx, then the copy, which completes on the full
 * barrier), and gathers A into it with cp.async (all 128 threads, 8 chunks each). A thread's copies
 * land asynchronously; LAG tiles later it waits for them, fences them into the async proxy and
 * arrives on the tile's full barrier. Warpgroups 1 and 2, the consumers: per k tile, wait on the full
 * barrier, issue the four wgmma, commit, wait until only this tile's group is pending, and release the
 * previous tile's stage (one arrival per warp on its empty barrier). */
static __global__ void __launch_bounds__(H08B_THREADS, 1)
hopper_ws_kernel(const conv_problem prob, const igemm_walk walk, const __grid_constant__ CUtensorMap w_map,
                 const __half *__restrict__ x, __half *__restrict__ y)
{
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
    const uint32_t raw = smem_address(h08_smem);
    const uint32_t smem = (raw + (H08_ATOM_BYTES - 1)) & ~(uint32_t)(H08_ATOM_BYTES - 1);
    const uint32_t full = smem + H08B_STAGES * H08A_STAGE_BYTES, empty = full + 8 * H08B_STAGES;
    const int rows = igemm_rows(&prob), cols = igemm_cols(&prob), depth = igemm_depth(&prob);
    const int group = blockIdx.y;
    const gemm_block blk = gemm_block_of(blockIdx.x, cols, H08A_BM, H08A_BN);
    const int tid = threadIdx.x, wg = tid / 128, wg_tid = tid % 128;
    const int k_tiles = tiles_covering(depth, H08A_BK);

    if (tid == 0) {
#pragma unroll
        for (int s = 0; s < H08B_STAGES; s++) {
            mbar_init(full + 8 * s, H08B_FULL_ARRIVALS);
            mbar_init(empty + 8 * s, H08B_EMPTY_ARRIVALS);
        }
        mbar_fence_init();
    }
    __syncthreads();

    if (wg == 0) {
        /* ---- the producer ---- */
        setmaxnreg_dec<H08B_PRODUCER_REGS>();
        a_copier<128> ac;
        ac.init(prob, group, blk.row0, rows, wg_tid);
        const int b_row = hopper_tma_row(&prob, group, blk.col0);
        for (int t = 0; t < k_tiles; t++) {
            const int s = hopper_stage_of(t);
            const uint32_t stage = smem + s * H08A_STAGE_BYTES;
            if (t >= H08B_STAGES)
                mbar_wait(empty + 8 * s, hopper_empty_parity(t));
            if (wg_tid == 0) {
                mbar_expect_tx(full + 8 * s, H08A_B_TILE_BYTES);
                tma_load_2d(stage + H08A_A_TILE_BYTES, &w_map, hopper_tma_kappa(t), b_row, full + 8 * s);
            }
            ac.copy(stage, wg_tid, depth, x);
            ac.at = igemm_iter_next(ac.at, walk);
            cp_async_commit();
            if (t >= H08B_LAG) {
                cp_async_wait<H08B_LAG>(); /* tile t - LAG has landed (this thread's chunks) */
                fence_proxy_async_shared();
                mbar_arrive(full + 8 * hopper_stage_of(t - H08B_LAG));
            }
        }
        cp_async_wait<0>();
        fence_proxy_async_shared();
        for (int t = k_tiles > H08B_LAG ? k_tiles - H08B_LAG : 0; t < k_tiles; t++)
            mbar_arrive(full + 8 * hopper_stage_of(t));
    } else {
        /* ---- the consumers ---- */
        setmaxnreg_inc<H08B_CONSUMER_REGS>();
        const int cwg = wg - 1;
        float acc[H08A_ACC];
#pragma unroll
        for (int i = 0; i < H08A_ACC; i++)
            acc[i] = 0.0f;
        for (int kt = 0; kt < k_tiles; kt++) {
            const int s = hopper_stage_of(kt);
            mbar_wait(full + 8 * s, hopper_full_parity(kt));
            /* wgmma is .sync.aligned: every lane issues it together. The spin above and lane 0's arrive
             * below may leave the warp diverged; reconverge explicitly rather than trust the compiler. */
            __syncwarp();
            const uint32_t a_tile = smem + s * H08A_STAGE_BYTES, b_tile = a_tile + H08A_A_TILE_BYTES;
            wgmma_fence();
#pragma unroll
            for (int ks = 0; ks < H08A_BK / H08_MMA_K; ks++)
                wgmma_m64n128k16(acc, hopper_operand_desc(a_tile, cwg * H08_WG_M, ks * H08_MMA_K),
                                 hopper_operand_desc(b_tile, 0, ks * H08_MMA_K));
            wgmma_commit();
            wgmma_wait<1>(); /* tile kt-1's wgmma are done: its stage may be refilled */
            if (kt >= 1 && tid % 32 == 0)
                mbar_arrive(empty + 8 * hopper_stage_of(kt - 1));
        }
        __syncwarp(); /* lane 0's last arrive diverged the warp; wgmma.wait_group is .aligned too */
        wgmma_wait<0>();
        wgmma_fence_operands(acc);
        consumers_sync(); /* both consumers are done reading the stages: they become the output tile */

        __half *out = (__half *)(h08_smem + (smem - raw));
        stage_accumulators(out, acc, cwg, wg_tid);
        consumers_sync();
        store_tile<h08b_consumers>(out, tid - 128, prob, group, blk, y);
    }
#else
    (void)prob;
    (void)walk;
    (void)w_map;
    (void)x;
    (void)y;
    __trap();
#endif
}

/* ---- host side: supports(), launch ---------------------------------------------------------------- */

/* The current device must be compute capability 9.0 (wgmma exists only in sm_90a code), have code it
 * can run for the kernel, and let a block opt in to its shared memory. */
static bool device_is_hopper(const char *id, const void *kernel, size_t smem, char *why, size_t why_len)
{
    int device = 0;
    cudaDeviceProp props;
    cudaError_t err = cudaGetDevice(&device);
    if (err == cudaSuccess)
        err = cudaGetDeviceProperties(&props, device);
    if (err != cudaSuccess) {
        (void)cudaGetLastError(); /* the failed query is not a launch error of anyone's */
        snprintf(why, why_len, "%s needs a device of compute capability 9.0 (wgmma, sm_90a); the device query "
                 "failed: %s", id, cudaGetErrorString(err));
        return false;
    }
    if (props.major != 9 || props.minor != 0) {
        snprintf(why, why_len, "%s needs a device of compute capability 9.0 (wgmma is sm_90a only); device %d "
                 "(%s) is %d.%d", id, device, props.name, props.major, props.minor);
        return false;
    }
    if (!kernel_image_available(kernel, id, why, why_len))
        return false;
    if (props.sharedMemPerBlockOptin < smem) {
        snprintf(why, why_len, "%s needs %zu bytes of shared memory per block; device %d allows %zu", id, smem,
                 device, (size_t)props.sharedMemPerBlockOptin);
        return false;
    }
    return true;
}

/* The same limits as chapter 05's walked kernels: the grid, one bit per tap in 32-bit masks, the
 * padded tensors and every offset in 32-bit index math. */
static bool supports_08a_shape(const char *id, const conv_problem *prob, char *why, size_t why_len)
{
    if (prob->r > 32 || prob->s > 32) {
        snprintf(why, why_len, "%s keeps one bit per filter tap in 32-bit row masks: needs R <= 32 and S <= 32 "
                 "(this filter is %dx%d)", id, prob->r, prob->s);
        return false;
    }
    if (prob->groups > 65535) {
        snprintf(why, why_len, "%s puts the group on gridDim.y, which holds at most 65535 (groups = %d)", id,
                 prob->groups);
        return false;
    }
    const int64_t tiles =
        (int64_t)tiles_covering(igemm_rows(prob), H08A_BM) * tiles_covering(igemm_cols(prob), H08A_BN);
    if (tiles > INT32_MAX) {
        snprintf(why, why_len, "%s needs %lld blocks of %dx%d, over gridDim.x's 2^31-1", id, (long long)tiles,
                 H08A_BM, H08A_BN);
        return false;
    }
    return igemm_padded_fits_32bit(id, prob, why, why_len);
}

static bool supports_08a(const conv_problem *prob, char *why, size_t why_len)
{
    return device_is_hopper("08a", (const void *)hopper_wgmma_kernel, h08a_smem_bytes, why, why_len) && supports_08a_shape("08a", prob, why, why_len);
}

extern "C" void launch_08a(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    const pad_fprop_operands op = pad_fprop(prob, x, w, workspace);
    static bool opted_in = false; /* over 48 KB a block must opt in, once per kernel */
    if (!opted_in) {
        CUDA_CHECK(cudaFuncSetAttribute(hopper_wgmma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)h08a_smem_bytes));
        opted_in = true;
    }
    const igemm_walk walk = igemm_walk_make(&op.prob, H08A_BK);
    const dim3 grid((unsigned)(tiles_covering(igemm_rows(&op.prob), H08A_BM) *
                               tiles_covering(igemm_cols(&op.prob), H08A_BN)),
                    (unsigned)op.prob.groups);
    hopper_wgmma_kernel<<<grid, H08A_THREADS, h08a_smem_bytes>>>(op.prob, walk, (const __half *)op.x,
                                                                  (const __half *)op.w, (__half *)y);
    CUDA_CHECK_LAUNCH();
}

/* ---- 08b host side: the tensor map, supports(), launch ------------------------------------------------ */

/* cuTensorMapEncodeTiled is a driver API function. The binaries link only the CUDA runtime, so it is
 * looked up at run time through the runtime (cudaGetDriverEntryPointByVersion, the non-deprecated form
 * of cudaGetDriverEntryPoint in CUDA 13), once. NULL with a reason when the driver does not have it. */
static PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder(char *why, size_t why_len)
{
    static PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
    static bool looked = false;
    static cudaError_t err = cudaSuccess;
    static cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSuccess;
    if (!looked) {
        void *fn = NULL;
        err = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found);
        if (err == cudaSuccess && found == cudaDriverEntryPointSuccess)
            encode = (PFN_cuTensorMapEncodeTiled_v12000)fn;
        else
            (void)cudaGetLastError();
        looked = true;
    }
    if (!encode && why)
        snprintf(why, why_len, "08b needs the driver's cuTensorMapEncodeTiled (CUDA 12.0+), which was not found: %s",
                 err != cudaSuccess ? cudaGetErrorString(err)
                                    : found == cudaDriverEntryPointVersionNotSufficent ? "driver too old"
                                                                                      : "symbol not found");
    return encode;
}

/* The filter's tensor map (hopper_filter_tma): fp16, 2D, the box 64 x 128, 128-byte swizzle, zeros
 * outside the tensor. */
static CUtensorMap filter_tensor_map(const conv_problem *prob, const __half *w)
{
    const hopper_tma_2d t = hopper_filter_tma(prob);
    const cuuint64_t dims[2] = {t.dim[0], t.dim[1]};
    const cuuint64_t strides[1] = {t.row_stride};
    const cuuint32_t box[2] = {t.box[0], t.box[1]};
    const cuuint32_t element_strides[2] = {1, 1};
    CUtensorMap map;
    const CUresult status = tensor_map_encoder(NULL, 0)(
        &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, (void *)w, dims, strides, box, element_strides,
        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (status != CUDA_SUCCESS)
        fail("%s:%d: cuTensorMapEncodeTiled: CUresult %d (depth %llu, K %llu)", __FILE__, __LINE__, (int)status,
             (unsigned long long)t.dim[0], (unsigned long long)t.dim[1]);
    return map;
}

static bool supports_08b(const conv_problem *prob, char *why, size_t why_len)
{
    if (!device_is_hopper("08b", (const void *)hopper_ws_kernel, h08b_smem_bytes, why, why_len))
        return false;
    if (!tensor_map_encoder(why, why_len))
        return false;
    /* The tensor map's own limits hold for whatever 08a's shape checks accept: the row stride, depth * 2
     * bytes, is a multiple of 16 (depth is padded to whole chunks), and K and depth are far below 2^32. */
    return supports_08a_shape("08b", prob, why, why_len);
}

extern "C" void launch_08b(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    const pad_fprop_operands op = pad_fprop(prob, x, w, workspace);
    static bool opted_in = false;
    if (!opted_in) {
        CUDA_CHECK(cudaFuncSetAttribute(hopper_ws_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)h08b_smem_bytes));
        opted_in = true;
    }
    const CUtensorMap map = filter_tensor_map(&op.prob, (const __half *)op.w);
    const igemm_walk walk = igemm_walk_make(&op.prob, H08A_BK);
    const dim3 grid((unsigned)(tiles_covering(igemm_rows(&op.prob), H08A_BM) *
                               tiles_covering(igemm_cols(&op.prob), H08A_BN)),
                    (unsigned)op.prob.groups);
    hopper_ws_kernel<<<grid, H08B_THREADS, h08b_smem_bytes>>>(op.prob, walk, map, (const __half *)op.x, (__half *)y);
    CUDA_CHECK_LAUNCH();
}

extern "C" const conv_kernel ch08_kernels[] = {
    {.id = "08a", .name = "implicit GEMM, wgmma m64n128k16 from swizzled smem, cp.async 5-stage, 128x128",
     .source = "chapters/08_hopper/hopper.cu",
     .pass = PASS_FPROP, .dtype = DTYPE_F16, .layout = LAYOUT_NHWC, .device = ON_GPU,
     .supports = supports_08a, .workspace_bytes = pad_fprop_workspace_bytes, .launch = launch_08a,
     .phase_name = NULL, .launch_phase = NULL, .launch_fused = NULL, .library = NULL,
     .branches = pad_fprop_branches, .branch_of = pad_fprop_branch},
    {.id = "08b", .name = "08a + TMA for the filter, mbarriers, producer warpgroup + 2 consumers, setmaxnreg",
     .source = "chapters/08_hopper/hopper.cu",
     .pass = PASS_FPROP, .dtype = DTYPE_F16, .layout = LAYOUT_NHWC, .device = ON_GPU,
     .supports = supports_08b, .workspace_bytes = pad_fprop_workspace_bytes, .launch = launch_08b,
     .phase_name = NULL, .launch_phase = NULL, .launch_fused = NULL, .library = NULL,
     .branches = pad_fprop_branches, .branch_of = pad_fprop_branch},
};
extern "C" const int ch08_kernel_count = sizeof(ch08_kernels) / sizeof(ch08_kernels[0]);
