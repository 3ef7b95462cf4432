/* tensor_core.h: the tensor-core building blocks that chapters 05, 06 and 07 share.
 *
 * Two halves:
 *   1. Index math, plain C and HOST_DEVICE so the cpu tests check it on the host:
 *        - where each lane of a warp holds its part of an mma.m16n8k16 operand (the fragment layouts);
 *        - which shared-memory row each lane hands to ldmatrix so that the registers it gets back are
 *          exactly those fragments;
 *        - the swizzle that places 16-byte chunks of a tile in shared memory so that ldmatrix and
 *          16-byte stores meet no bank conflicts.
 *   2. Thin inline-PTX wrappers, device code only (sm_80 and newer): ldmatrix, mma.sync, cp.async.
 *
 * Every function names the section of NVIDIA's "Parallel Thread Execution ISA" it follows, by title
 * (numbers, where given, are those of PTX ISA 8.x; they move between versions, the titles do not).
 *
 * Vocabulary. A "chunk" is 16 bytes: 8 fp16 values, the unit of cp.async.cg, of one ldmatrix row and of
 * the swizzle. lane = threadIdx.x % 32. groupID = lane / 4 and threadID_in_group = lane % 4, as the ISA
 * names them.
 */
#ifndef TENSOR_CORE_H
#define TENSOR_CORE_H

#include <stdint.h>

#include "conv.h" /* HOST_DEVICE */

#define TC_FN static HOST_DEVICE inline

/* ---- 1. index math -------------------------------------------------------------------------------- */

/* mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32: D (16x8, fp32) = A (16x16, fp16) x B (16x8, fp16) + C.
 * PTX ISA "Matrix Fragments for mma.m16n8k16 with floating point type" (9.7.14.5.8).
 *
 * A: four .b32 registers per lane, each two fp16 side by side along k. Register `reg` (0..3) of `lane`
 * holds A[row][col] (low half) and A[row][col + 1] (high half), with
 *     row = groupID + 8 * (reg % 2)        col = 2 * threadID_in_group + 8 * (reg / 2)
 * (the ISA counts the halves a0..a7: a0,a1 in register 0, a2,a3 in register 1, ...). */
TC_FN int mma_a_row(int lane, int reg)
{
    return (lane >> 2) + 8 * (reg & 1);
}

TC_FN int mma_a_col(int lane, int reg)
{
    return 2 * (lane & 3) + 8 * (reg >> 1);
}

/* B: two .b32 registers per lane. Register `reg` (0..1) holds B[k][n] (low) and B[k + 1][n] (high), with
 *     k = 2 * threadID_in_group + 8 * reg        n = groupID
 * so a lane's registers run along k: B is "col" (k contiguous per column n). */
TC_FN int mma_b_k(int lane, int reg)
{
    return 2 * (lane & 3) + 8 * reg;
}

TC_FN int mma_b_n(int lane)
{
    return lane >> 2;
}

/* C and D (fp32): four floats per lane. Element `e` (0..3) is C[row][col], with
 *     row = groupID + 8 * (e / 2)        col = 2 * threadID_in_group + e % 2
 * so elements 0,1 (and 2,3) are neighbours along a row: one 32-bit fp16 pair in the output. */
TC_FN int mma_c_row(int lane, int e)
{
    return (lane >> 2) + 8 * (e >> 1);
}

TC_FN int mma_c_col(int lane, int e)
{
    return 2 * (lane & 3) + (e & 1);
}

/* ldmatrix.sync.aligned.m8n8.x4.shared.b16: PTX ISA "Warp-level matrix load instruction: ldmatrix"
 * (9.7.14.5.15). Four 8x8 matrices of 16-bit values, each row one 16-byte chunk anywhere in shared memory
 * (16-byte aligned). Lane L gives the address of row L % 8 of matrix L / 8; afterwards register j of
 * lane L holds elements (L / 4, 2 * (L % 4)) and (L / 4, 2 * (L % 4) + 1) of matrix j. That is the
 * groupID/threadID_in_group pattern of the fragments above, so one ldmatrix.x4 fills an mma operand.
 *
 * A operand, 16 rows (m) x 16 columns (k), stored with k contiguous (16 rows of two chunks). Matrices
 * 0..3 are chosen as (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15),
 * which makes registers 0..3 exactly A's registers 0..3. Lane L points at row L % 16, chunk L / 16: */
TC_FN int ldsm_a_row(int lane)
{
    return lane & 15;
}

TC_FN int ldsm_a_chunk(int lane)
{
    return lane >> 4;
}

/* Two B operands side by side, n 0-7 and n 8-15, 16 k each, stored n-major with k contiguous (the
 * way a KRSC filter already is). Matrices 0..3 are (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7),
 * (n 8-15, k 8-15): registers 0,1 are the first n8 tile's B registers, 2,3 the second's. Lane L
 * points at row (n) L % 8 + 8 * (L / 16), chunk (L / 8) % 2: */
TC_FN int ldsm_b_row(int lane)
{
    return (lane & 7) + ((lane >> 4) << 3);
}

TC_FN int ldsm_b_chunk(int lane)
{
    return (lane >> 3) & 1;
}

/* The swizzle. A tile whose rows are `chunks_per_row` chunks long (1, 2, 4, 8, 16, ...: 16-byte chunks,
 * so BK = 8 * chunks_per_row fp16 values) is stored row after row, but inside each row the chunks are
 * permuted: logical chunk c of row r is stored at physical chunk c ^ f(r). Returns its index, in chunks,
 * from the start of the tile.
 *
 * Why: shared memory serves a 128-byte line (32 banks of 4 bytes, 8 chunks) per cycle. ldmatrix reads,
 * per group of 8 lanes, the same logical chunk of 8 consecutive rows. Unswizzled, with 64-byte rows
 * (BK = 32), rows r and r + 2 start in the same bank, so the 8 reads land on 2 of the 8 chunk slots of
 * a line: a 4-way conflict. With f(r) as below, 8 consecutive rows (from a multiple of 8) put one
 * logical chunk into 8 different slots (row % lines-sharing picks the half/quarter of the line, the XOR
 * picks the slot inside it), and a row's own chunks stay a permutation of themselves, so 16-byte
 * stores of whole rows (cp.async, st.shared.v4) are conflict-free too.
 *     chunks_per_row >= 8:  f(r) = r % 8                 (XOR on the chunk's low three bits)
 *     chunks_per_row <  8:  f(r) = (r / (8 / chunks_per_row)) % chunks_per_row
 * Two properties the kernels rely on (tests/test_ch05_implicit_gemm.c checks both): it is a bijection on each
 * row, and moving 16 rows down moves the result by exactly 16 rows, so a lane's swizzled offset for one
 * 16-row fragment serves every other fragment of its warp tile after adding a constant.
 * Only 16-byte alignment of the tile is needed: a shift by whole chunks keeps the 8 slots distinct. */
TC_FN int swizzle_chunk(int row, int chunk, int chunks_per_row)
{
    const int f = chunks_per_row >= 8 ? row % 8 : row / (8 / chunks_per_row) % chunks_per_row;
    return row * chunks_per_row + (chunk ^ f);
}

/* ---- 2. PTX wrappers (device code only) ---------------------------------------------------------- */
#ifdef __CUDACC__

/* A generic pointer into shared memory as the 32-bit .shared address that ldmatrix and cp.async take
 * (PTX ISA "Data Movement and Conversion Instructions: cvta"). */
static __device__ __forceinline__ uint32_t smem_address(const void *pointer)
{
    return (uint32_t)__cvta_generic_to_shared(pointer);
}

/* ldmatrix .x4 (see ldsm_a_row above): four 8x8 b16 matrices, one row address per lane. The "memory"
 * clobber keeps the compiler from moving it across the barrier that makes the tile visible. */
static __device__ __forceinline__ void ldmatrix_x4(uint32_t reg[4], uint32_t address)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(reg[0]), "=r"(reg[1]), "=r"(reg[2]), "=r"(reg[3])
                 : "r"(address)
                 : "memory");
}

/* ldmatrix .x4 .trans: the same four matrices, each transposed on the way: register j of lane L holds
 * elements (2 * (L % 4), L / 4) and (2 * (L % 4) + 1, L / 4) of matrix j. For operands stored with the
 * wrong dimension contiguous (dgrad's filter, wgrad's activations: chapters 06 and 07). */
static __device__ __forceinline__ void ldmatrix_x4_trans(uint32_t reg[4], uint32_t address)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(reg[0]), "=r"(reg[1]), "=r"(reg[2]), "=r"(reg[3])
                 : "r"(address)
                 : "memory");
}

/* ldmatrix .x2 (and .trans): two matrices; lanes 0-15 give the row addresses (lanes 16-31's are
 * ignored but must be valid shared addresses). */
static __device__ __forceinline__ void ldmatrix_x2(uint32_t reg[2], uint32_t address)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(reg[0]), "=r"(reg[1])
                 : "r"(address)
                 : "memory");
}

static __device__ __forceinline__ void ldmatrix_x2_trans(uint32_t reg[2], uint32_t address)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(reg[0]), "=r"(reg[1])
                 : "r"(address)
                 : "memory");
}

/* d += a x b on the tensor cores: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32, fragments as
 * described by mma_a_row() .. mma_c_col() (PTX ISA "Multiply-and-Accumulate Instruction:
 * mma"). fp16 products, fp32 accumulation. Not volatile: a pure function of its registers,
 * which the compiler may schedule freely. */
static __device__ __forceinline__ void mma_m16n8k16_f16_f32(float d[4], const uint32_t a[4], const uint32_t b[2])
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* cp.async.cg.shared.global [dst], [src], 16, src_size: copies 16 bytes from global to shared memory
 * without passing through registers (and, with .cg, through L1), asynchronously: the data is there only
 * after a cp_async_wait() that covers its group. With src_size = 0 nothing is read and the 16 bytes are
 * zero-filled: the ISA fills cp-size - src-size bytes with zeros. That is how padding, rows past the
 * last output pixel and k past the end of the reduction become zeros without a branch around the copy.
 * src must be 16-byte aligned and, even when nothing is read, a valid global address (pass the
 * tensor's base). PTX ISA "Data Movement and Conversion Instructions: cp.async". */
static __device__ __forceinline__ void cp_async_16(uint32_t dst, const void *src, bool fill)
{
    const int src_size = fill ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_size)
                 : "memory");
}

/* Closes the group of all cp.async issued by this thread since the last commit (PTX ISA
 * "Data Movement and Conversion Instructions: cp.async.commit_group"). An empty group is legal and completes at once. */
static __device__ __forceinline__ void cp_async_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* Waits until at most N of this thread's committed groups are still in flight (PTX ISA
 * "Data Movement and Conversion Instructions: cp.async.wait_group / cp.async.wait_all"). It covers only this thread's copies: a __syncthreads() after
 * it makes every thread's landed data visible to the block. N must be a constant, hence the template. */
template <int N>
static __device__ __forceinline__ void cp_async_wait(void)
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

#endif /* __CUDACC__ */

#undef TC_FN

#endif
