/* 08b: 08a with the work split by role: TMA for the filter, mbarriers, a producer warpgroup and two
 * consumers, setmaxnreg.
 *
 * What it computes: exactly 08a's fprop, with the same tile, stages and wgmma (hopper.cuh).
 *
 * What is new:
 *   - warpgroup 0, the producer (setmaxnreg.dec to 56 registers): per k tile, waits on the stage's
 *     "empty" mbarrier, has the TMA unit fetch the B tile (one thread: mbarrier.expect_tx, then
 *     cp.async.bulk.tensor.2d with the filter's tensor map, 128-byte swizzle, zero fill outside;
 *     completes on the stage's "full" mbarrier), and gathers A with cp.async (128 threads, 8 chunks
 *     each). LAG tiles later each thread waits for its chunks, fences them into the async proxy and
 *     arrives on the tile's full barrier.
 *   - warpgroups 1 and 2, the consumers (setmaxnreg.inc to 224): wait on full, 4 x wgmma, commit,
 *     wait_group 1, and release the previous tile's stage (one arrival per warp on its empty barrier).
 *   - no block-wide barrier in the loop. The tensor map is made on the host by cuTensorMapEncodeTiled,
 *     found through cudaGetDriverEntryPointByVersion (the binaries link only the runtime), and passed as
 *     a __grid_constant__ parameter.
 *
 * Hopper-only code, as 08a (sm_90a alone; a trap on any other target, refused by supports()).
 *
 * Status: compiled (sm_90a: no spills, no stack); verified in emulation, 08b's mbarrier protocol also
 * under random schedules (EMU_INTERLEAVE); not yet run on a GPU.
 *
 * Run:
 *   ./build/conv run 08b --emulate --layer resnet50/res2_3x3 --n 1
 *   ./build/conv check 08b --emulate
 */
#include <stdint.h>
#include <stdio.h>

#include <cuda.h> /* CUtensorMap and its enums: types only, libcuda is not linked */
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h> /* PFN_cuTensorMapEncodeTiled */

#include "check.h"
#include "conv.h"
#include "hopper.cuh"
#include "hopper.h"
#include "pad_channels.h"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
/* ---- sm_90a: mbarriers, TMA, setmaxnreg ------------------------------------------------------------ */

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

/* ---- the kernel ---------------------------------------------------------------------------------- */

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

/* ---- host side: the tensor map, supports(), launch ----------------------------------------------- */

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

extern "C" bool supports_08b(const conv_problem *prob, char *why, size_t why_len)
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
