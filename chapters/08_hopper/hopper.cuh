/* hopper.cuh: what chapter 08's kernels share, written once: 08a introduces all of it and 08b builds on
 * it. The block tile and its shared memory, the warpgroup MMA instructions as thin wrappers (the way
 * common/kernel/tensor_core.h wraps mma.sync and ldmatrix for chapter 05), 08a's gather of the A tile, the
 * epilogue, and the host-side checks both kernels make. The layout math is in hopper.h; how each kernel
 * uses these pieces, the step's own idea, is in its file (08a_wgmma.cu, 08b_warp_specialized.cu).
 */
#ifndef HOPPER_CUH
#define HOPPER_CUH

#include <stdint.h>
#include <stdio.h>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "check.h"
#include "conv.h"
#include "hopper.h"
#include "igemm_pipeline.cuh" /* igemm_out_chunks: the staged epilogue's 16-byte stores */
#include "implicit_gemm.h"    /* chapter 05's index math: row origins, tap masks, the walk */
#include "tensor_core.h"      /* smem_address, cp_async_16, cp_async_commit, cp_async_wait */

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
#endif /* sm_90a */

/* ---- the A tile's gather and the epilogue ---------------------------------------------------------- */

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

/* ---- host side: the checks both kernels make ------------------------------------------------------ */

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

#endif /* HOPPER_CUH */
