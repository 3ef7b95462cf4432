/* hopper.h: the layout math of chapter 08's kernel, apart from the kernel so the CPU test
 * (tests/test_ch08_hopper.c) can check it. The kernel calls exactly these functions.
 *
 * The GEMM is chapter 05's (implicit_gemm.h): per group g, Y_g[m][j] = sum_kappa A_g[m][kappa] B_g[kappa][j],
 * m = (n, p, q) an output pixel, j an output channel, kappa = (r, s, c) with c fastest. What changes is
 * who reads the staged tiles: not ldmatrix into each warp's registers, but the tensor cores themselves,
 * through wgmma.mma_async, reading both operands straight from shared memory. They find them through a
 * 64-bit "matrix descriptor" (the tile's address and strides), and they expect a fixed layout: here the
 * K-major layout with the 128-byte swizzle (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-
 * Accumulate Operation using wgmma.mma_async instructions": "Shared Memory Matrix Layout" and "Matrix
 * Descriptor Format"; titles, not numbers, since numbers move between ISA versions).
 *
 * The staged tiles (one pipeline stage: the A tile, then the B tile):
 *   A: BM rows (output pixels) x BK = 64 kappa, 128 bytes a row;  B: BN rows (output channels) x 64 kappa.
 * Both are "K-major": kappa contiguous in a row, exactly how chapter 05 stages them (a KRSC filter
 * already is B transposed, so neither operand needs transposing). A row of 64 fp16 is 128 bytes: one
 * row of the 128-byte swizzle pattern, whose unit (an "atom") is 8 rows x 128 bytes = 1024 bytes:
 *
 *     16-byte chunk c of row r (r, c counted inside the atom) is stored at chunk c XOR (r mod 8)
 *
 *   row 0:  0 1 2 3 4 5 6 7        the same logical chunk of 8 consecutive rows lands in 8 different
 *   row 1:  1 0 3 2 5 4 7 6        16-byte slots of a 128-byte line: no bank conflicts for the
 *   row 2:  2 3 0 1 6 7 4 5        copies that write it, nor for the tensor cores that read it.
 *   ...     (physical slot p holds logical chunk p XOR r)
 *   row 7:  7 6 5 4 3 2 1 0
 *
 * The hardware applies the swizzle to the address bits of the shared-memory address itself: bits 4-6
 * (the 16-byte chunk within a 128-byte line) are XORed with bits 7-9 (the line within a 1024-byte
 * block). So the tiles must start 1024-byte aligned (the descriptor's "base offset" field is then 0),
 * and then the tile-relative function below is the hardware's function.
 *
 * Plain C: the test includes it as is; under nvcc the same functions compile for the device.
 */
#ifndef HOPPER_H
#define HOPPER_H

#include <stdint.h>

#include "conv.h" /* HOST_DEVICE */

#define HOPPER_FN static HOST_DEVICE inline

/* ---- 08a's tile shape ---------------------------------------------------------------------------- */

/* A block computes a 128 x 128 tile of Y with two warpgroups (consumers), each a 64 x 128 slice:
 * one wgmma.m64n128k16 per 16-deep step. BK = 64 kappa per stage (four wgmma per stage), 5 stages. */
#define H08A_BM 128
#define H08A_BN 128
#define H08A_BK 64
#define H08A_WARPGROUPS 2
#define H08A_STAGES 5
#define H08A_THREADS (128 * H08A_WARPGROUPS)
#define H08_WG_M 64                                   /* rows of one wgmma, and of a warpgroup's slice */
#define H08_MMA_K 16                                  /* depth of one wgmma (fp16) */
#define H08_ROW_BYTES 128                             /* one staged row: BK halves = one swizzle row */
#define H08_CHUNKS_PER_ROW 8                          /* 16-byte chunks in a row */
#define H08_ATOM_BYTES 1024                           /* 8 rows of 128 bytes: the swizzle's period */
#define H08A_A_TILE_BYTES (H08A_BM * H08_ROW_BYTES)   /* 16384 */
#define H08A_B_TILE_BYTES (H08A_BN * H08_ROW_BYTES)   /* 16384 */
#define H08A_STAGE_BYTES (H08A_A_TILE_BYTES + H08A_B_TILE_BYTES)
#define H08A_ACC (H08_WG_M * H08A_BN / 128)           /* fp32 accumulators per thread: 64 */

/* ---- the 128-byte swizzle --------------------------------------------------------------------------- */

/* Byte offset `offset` from a 1024-byte aligned base, as the hardware stores it under the 128-byte
 * swizzle: bits 4-6 XOR bits 7-9. */
HOPPER_FN uint32_t hopper_swizzle128(uint32_t offset)
{
    return offset ^ ((offset >> 3) & 0x70u);
}

/* Where chunk `chunk` (0..7: kappa 8*chunk .. 8*chunk+7) of row `row` of a staged tile goes: its byte
 * offset from the tile's start. This is what the cp.async copies write to. It equals chapter 05's
 * swizzle_chunk(row, chunk, 8) * 16 (tensor_core.h), which XORs with row % 8 for rows of 8 chunks: the
 * same permutation, now dictated by the hardware rather than chosen. */
HOPPER_FN uint32_t hopper_chunk_offset(int row, int chunk)
{
    return hopper_swizzle128((uint32_t)row * H08_ROW_BYTES + (uint32_t)chunk * 16u);
}

/* ---- the shared-memory matrix descriptor -------------------------------------------------------------- */

/* The 64-bit descriptor of an operand in shared memory (PTX ISA "Matrix Descriptor Format"):
 *   bits  0-13  start address >> 4     (the operand's first byte, a .shared address)
 *   bits 16-29  leading dimension byte offset >> 4
 *   bits 32-45  stride dimension byte offset >> 4
 *   bits 49-51  base offset (0: the swizzle pattern starts at a 1024-byte aligned address)
 *   bits 62-63  swizzle mode: 0 none, 1 128-byte, 2 64-byte, 3 32-byte
 * Offsets are 18-bit byte quantities with their 4 low bits dropped (16-byte granules). */
#define HOPPER_SWIZZLE_NONE 0
#define HOPPER_SWIZZLE_128B 1
#define HOPPER_SWIZZLE_64B 2
#define HOPPER_SWIZZLE_32B 3

HOPPER_FN uint64_t hopper_desc_encode(uint32_t start, uint32_t lbo, uint32_t sbo, int swizzle)
{
    return (uint64_t)((start & 0x3FFFFu) >> 4) | (uint64_t)((lbo & 0x3FFFFu) >> 4) << 16 |
           (uint64_t)((sbo & 0x3FFFFu) >> 4) << 32 | (uint64_t)(swizzle & 3) << 62;
}

HOPPER_FN uint32_t hopper_desc_start(uint64_t desc)
{
    return (uint32_t)(desc & 0x3FFFu) << 4;
}

HOPPER_FN uint32_t hopper_desc_lbo(uint64_t desc)
{
    return (uint32_t)(desc >> 16 & 0x3FFFu) << 4;
}

HOPPER_FN uint32_t hopper_desc_sbo(uint64_t desc)
{
    return (uint32_t)(desc >> 32 & 0x3FFFu) << 4;
}

HOPPER_FN int hopper_desc_base_offset(uint64_t desc)
{
    return (int)(desc >> 49 & 7u);
}

HOPPER_FN int hopper_desc_swizzle(uint64_t desc)
{
    return (int)(desc >> 62 & 3u);
}

/* The descriptor of one wgmma operand inside a staged K-major tile at `tile` (1024-byte aligned): rows
 * row0 .. row0+63 (A: one warpgroup's 64 pixels) or 0 .. BN-1 (B), kappa k0 .. k0+15 of the stage.
 *   start  the tile + row0 rows + k0 halves: the logical (unswizzled) address of element (row0, k0).
 *          Moving k0 by 16 moves it 32 bytes inside the 128-byte row; the hardware swizzles the
 *          address it forms from it, so the rows' XOR pattern still comes from bits 7-9.
 *   SBO    1024: from one group of 8 rows (one 8 x 16-byte core matrix per 8 kappa) to the next.
 *   LBO    the distance between core matrices along K; with the 128-byte swizzle in K-major, a
 *          wgmma's 16 kappa (two core matrices, 32 bytes) lie inside one swizzled 128-byte row, so the
 *          ISA does not use it. Set to 16 (encoded 1), a harmless value.
 *   mode   128-byte swizzle. */
HOPPER_FN uint64_t hopper_operand_desc(uint32_t tile, int row0, int k0)
{
    return hopper_desc_encode(tile + (uint32_t)row0 * H08_ROW_BYTES + (uint32_t)k0 * 2u, 16u, H08_ATOM_BYTES,
                              HOPPER_SWIZZLE_128B);
}

/* What the tensor cores read: the .shared byte address of element (row, k) (row < 64 for A, < N for B;
 * k < 16) of the operand a descriptor describes, for the K-major layout with the 128-byte swizzle and
 * 2-byte elements (PTX ISA "Shared Memory Matrix Layout"). The operand is made of core matrices of
 * 8 rows x 16 bytes (8 x 8 fp16): core matrix (row / 8, k / 8) has its 8 rows one swizzle row (128
 * bytes) apart, core matrices along M/N are SBO apart, along K 16 bytes apart inside the row; the
 * address so formed is then swizzled on its bits (hopper_swizzle128 of the full address: valid with
 * base offset 0, i.e. 1024-byte aligned atoms). tests/test_ch08_hopper.c uses this to read tiles back. */
HOPPER_FN uint32_t hopper_operand_address(uint64_t desc, int row, int k)
{
    const uint32_t logical = hopper_desc_start(desc) + (uint32_t)(row / 8) * hopper_desc_sbo(desc) +
                             (uint32_t)(row % 8) * H08_ROW_BYTES + (uint32_t)(k / 8) * 16u + (uint32_t)(k % 8) * 2u;
    return hopper_swizzle128(logical);
}

/* ---- the accumulator fragment ---------------------------------------------------------------------- */

/* wgmma.m64nNk16 with fp32 accumulators: each of the warpgroup's 128 threads holds N/2 floats
 * (PTX ISA "Register Fragments and Shared Memory Matrix Layouts", the D matrix). Warp w (0..3) of the
 * warpgroup owns rows 16w .. 16w+15, laid out like mma.m16n8's C fragment repeated along N: register i
 * of thread t (lane = t % 32) holds D[row][col] with
 *     row = 16 * (t / 32) + lane / 4 + 8 * ((i / 2) % 2)      col = 8 * (i / 4) + 2 * (lane % 4) + i % 2
 * so registers i and i + 1 (i even) are neighbours along a row: one fp16 pair in the output. */
HOPPER_FN int hopper_d_row(int thread_in_wg, int i)
{
    return 16 * (thread_in_wg >> 5) + ((thread_in_wg & 31) >> 2) + 8 * ((i >> 1) & 1);
}

HOPPER_FN int hopper_d_col(int thread_in_wg, int i)
{
    return 8 * (i >> 2) + 2 * (thread_in_wg & 3) + (i & 1);
}


/* ---- 08b: TMA for B, mbarriers, warp specialization --------------------------------------------------- */

/* 08b keeps 08a's block tile (128 x 128 x 64, two consumer warpgroups of 64 x 128, 5 stages) and adds a
 * third warpgroup, the producer, in front of them: 384 threads. The producer's 128 threads gather A
 * with cp.async as before (8 chunks each per k tile instead of 4), and one of them has the TMA unit
 * fetch the B tile. Registers are moved from the producer to the consumers with setmaxnreg. */
#define H08B_CONSUMERS 2
#define H08B_THREADS (128 * (1 + H08B_CONSUMERS))
#define H08B_STAGES 5
#define H08B_LAG 2                /* A tiles a producer thread keeps in flight past the newest */
#define H08B_PRODUCER_REGS 56     /* setmaxnreg: 128 x 56 + 256 x 224 = 64512 = 384 x 168, the block's pool */
#define H08B_CONSUMER_REGS 224
#define H08B_FULL_ARRIVALS 128    /* every producer thread, once its A chunks have landed */
#define H08B_EMPTY_ARRIVALS (4 * H08B_CONSUMERS) /* one lane per consumer warp, once its wgmma are done */

/* The filter as the TMA unit sees it: a 2D tensor of K rows (output channels, all groups) by depth =
 * R*S*C/G fp16 values (a KRSC filter is exactly that, row-major), and the box it copies per k tile:
 * 64 values (128 bytes: the 128-byte swizzle's span, the most a box row may have under it) of 128
 * rows. Dimension 0 is the innermost, as cuTensorMapEncodeTiled numbers them. */
typedef struct {
    uint64_t dim[2];          /* depth, K */
    uint64_t row_stride;      /* bytes from one filter row to the next: depth * 2 (a multiple of 16) */
    uint32_t box[2];          /* BK, BN */
} hopper_tma_2d;

HOPPER_FN hopper_tma_2d hopper_filter_tma(const conv_problem *prob)
{
    hopper_tma_2d t;
    const int depth = prob->r * prob->s * (prob->c / prob->groups);
    t.dim[0] = (uint64_t)depth;
    t.dim[1] = (uint64_t)prob->k;
    t.row_stride = (uint64_t)depth * 2u;
    t.box[0] = H08A_BK;
    t.box[1] = H08A_BN;
    return t;
}

/* The box's coordinates for k tile kt of the block whose first column is col0, in group g: kappa
 * first, then the filter row. Rows past the group's last column read the next group's filter (the
 * columns they feed are never stored); kappa past depth and rows past K are filled with zeros. */
HOPPER_FN int hopper_tma_kappa(int kt)
{
    return kt * H08A_BK;
}

HOPPER_FN int hopper_tma_row(const conv_problem *prob, int group, int col0)
{
    return group * (prob->k / prob->groups) + col0;
}

/* Where the TMA unit puts element (row, col) of a 64-wide fp16 box under CU_TENSOR_MAP_SWIZZLE_128B,
 * from a 1024-byte aligned destination: rows 128 bytes apart, then the same 128-byte swizzle. So a box
 * lands exactly where 08a's cp.async put the same B tile (hopper_chunk_offset). */
HOPPER_FN uint32_t hopper_tma_box_offset(int row, int col)
{
    return hopper_swizzle128((uint32_t)row * H08_ROW_BYTES + (uint32_t)col * 2u);
}

/* The pipeline's bookkeeping: k tile t lives in stage t % STAGES, in that stage's round t / STAGES.
 * An mbarrier counts phases 0, 1, 2, ...; waiting with parity P returns once the phase of that parity
 * most recently due has completed (a fresh barrier, in phase 0, counts phase "-1", odd, as done).
 *   full[s]   completes phase u when round u's tile is in stage s (A landed, B's bytes arrived):
 *             the consumers wait for tile t with parity (t / STAGES) % 2.
 *   empty[s]  completes phase u when the consumers are done reading round u's tile: the producer,
 *             before writing tile t >= STAGES (round u >= 1), waits for phase u - 1. */
HOPPER_FN int hopper_stage_of(int t)
{
    return t % H08B_STAGES;
}

HOPPER_FN uint32_t hopper_full_parity(int t)
{
    return (uint32_t)(t / H08B_STAGES) & 1u;
}

HOPPER_FN uint32_t hopper_empty_parity(int t)
{
    return (uint32_t)(t / H08B_STAGES - 1) & 1u;
}

#undef HOPPER_FN

#endif
