/* 08a: implicit GEMM on Hopper's warpgroup tensor cores (wgmma).
 *
 * What it computes: fprop, exactly chapter 05's: fp16 NHWC x, KRSC w, fp32 accumulation, fp16 NHWC y,
 * any padding, stride, dilation and groups; C/groups not a multiple of 8 runs on chapter 05's
 * zero-padded copy (pad_channels), in the workspace.
 *
 * The GEMM view is unchanged (implicit_gemm.h): per group, Y[m][j] = sum_kappa A[m][kappa] B[kappa][j],
 * m = (n, p, q) an output pixel, j an output channel, kappa = (r, s, c) with c fastest. A is gathered
 * from x by cp.async exactly as 05g and 05h gather it (row origins and tap masks computed once per row, the
 * tap walked by igemm_iter_next(), zero-fill for the padding); B is rows of the KRSC filter.
 *
 * What is new (the instruction wrappers, the A gather and the epilogue, which 08b reuses, are in
 * hopper.cuh; the layout math in hopper.h):
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
 * Hopper-only code: wgmma needs the sm_90a target, and the build compiles this chapter for sm_90a alone
 * (chapters/08_hopper/meson.build), so an H100 cannot pick a plain sm_90 copy instead. Compiled for any
 * other target (tests/check_build.py does, to check them all) the kernel is a trap, and supports()
 * refuses every device that is not compute capability 9.0, so it never launches there.
 *
 * Status: compiled (sm_90a: no spills, no stack); verified in emulation; not yet run on a GPU.
 *
 * Run:
 *   ./build/conv run 08a --emulate --layer resnet50/res2_3x3 --n 1
 *   ./build/conv check 08a --emulate
 */
#include <stdint.h>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "check.h"
#include "conv.h"
#include "hopper.cuh"
#include "hopper.h"
#include "pad_channels.h"

/* Shared memory: STAGES x (A tile, B tile), from a 1024-byte aligned start (hence the 1024 bytes of
 * slack: the dynamic shared memory's own alignment is not promised to be that large); reused for the
 * output tile after the loop. */
static const size_t h08a_smem_bytes = (size_t)H08A_STAGES * H08A_STAGE_BYTES + H08_ATOM_BYTES;
static_assert((size_t)H08A_BM * (H08A_BN + 8) * 2 <= (size_t)H08A_STAGES * H08A_STAGE_BYTES,
              "the output tile fits in the stages");

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

/* ---- host side: supports(), launch ---------------------------------------------------------------- */

extern "C" bool supports_08a(const conv_problem *prob, char *why, size_t why_len)
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
