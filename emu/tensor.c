/* tensor.c: the warp-level tensor-core instructions (their rows in instructions.def): mma.sync (m16n8k16
 * and m16n8k8, f16 and bf16), ldmatrix, and wmma's load, store and mma (16x16x16).
 *
 * Each is .sync.aligned: the whole warp executes it together, and the emulator runs it once for the warp,
 * gathering every lane's fragment registers into the matrices the ISA's fragment layouts describe
 * ("Matrix Fragments for mma.m16n8k16"), multiplying them exactly, and scattering the result back. What a
 * tensor core's rounding would be, the ISA does not say (emu/README.md: what the emulator cannot tell).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "emu.h"
#include "interp.h"

/* mma.m16n8k16, fragments per "Matrix Fragments for mma.m16n8k16 with floating point type"
 * (g = lane >> 2, t = lane % 4; each .f16x2 register holds the lower-numbered element in bits 15:0):
 *   A (16x16): a_i in row g + 8 * ((i >> 1) & 1), column 2t + (i & 1) + 8 * (i >= 4)
 *   B (16x8):  b_i in row 2t + (i & 1) + 8 * (i >= 2), column g
 *   C/D (16x8): c_i in row g + 8 * (i >= 2), column 2t + (i & 1)
 * mma.m16n8k8 with .f16 or .bf16 ("Matrix Fragments for mma.m16n8k8") is the same with k < 8: its A is
 * a0-a3 above (rows g and g + 8, column 2t + (i & 1)), its B b0-b1 (row 2t + i, column g), its C and D
 * the same. wmma's fragments are placed element by element by these (wmma_position); mma.sync's move as
 * whole 8x8 blocks (mma_body), which these give.
 */
static inline int frag_a_row(int lane, int i) { return (lane >> 2) + 8 * ((i >> 1) & 1); }
static inline int frag_a_col(int lane, int i) { return 2 * (lane & 3) + (i & 1) + 8 * (i >= 4); }
static inline int frag_b_row(int lane, int i) { return 2 * (lane & 3) + (i & 1) + 8 * (i >= 2); }
static inline int frag_b_col(int lane, int i) { (void)i; return lane >> 2; }
static inline int frag_c_row(int lane, int i) { return (lane >> 2) + 8 * (i >= 2); }
static inline int frag_c_col(int lane, int i) { return 2 * (lane & 3) + (i & 1); }

typedef double row8 __attribute__((vector_size(8 * sizeof(double)))); /* a row of B or D: 8 doubles */

/* D += A * B for one m16n8kK tile, D holding C on entry: four rows of D at a time (four independent sums in
 * flight), each element summed in k order; K a constant where it is called, so the compiler unrolls the sums
 * and keeps them in registers. Each product of two 16-bit floats is exact in binary64, and so, to far below
 * an fp32 ulp, is their sum with C; the result is rounded to fp32 once (an f16 D then from that fp32 value to
 * f16: twice, not once from the sum). The ISA does not say how a tensor core rounds its sums (emu/README.md:
 * what the emulator cannot tell), so this is the exact answer, not a model of one GPU's arithmetic. Fusing a product into its sum changes nothing (the product is exact),
 * so the compiler may (FUSED_PRODUCTS where it is inlined). */
static inline __attribute__((always_inline)) void mma_rows(int K, const double A[16][16], const row8 B[16], row8 D[16])
{
    for (int i = 0; i < 16; i += 4) {
        row8 acc[4] = {D[i], D[i + 1], D[i + 2], D[i + 3]};
        for (int k = 0; k < K; k++)
            for (int row = 0; row < 4; row++)
                acc[row] += A[i + row][k] * B[k];
        for (int row = 0; row < 4; row++)
            D[i + row] = acc[row];
    }
}

/* D = A * B + C for wmma's two m16n8k16 tiles, from matrices of floats. In vector copies (interp.h). */
SUM_COPIES FUSED_PRODUCTS
static void mma_m16n8k16(const float A[16][16], const float B[16][8], const float C[16][8], float Dm[16][8])
{
    double Ad[16][16];
    row8 Bd[16], D[16];
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++)
            Ad[i][j] = A[i][j];
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 8; j++)
            Bd[i][j] = B[i][j], D[i][j] = C[i][j];
    mma_rows(16, Ad, Bd, D);
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 8; j++)
            Dm[i][j] = (float)D[i][j];
}

/* mma, ldmatrix and wmma are .sync.aligned, the whole warp's: "UB if any thread in the warp has exited" or
 * is elsewhere. False after reporting lanes that are not there. */
static bool whole_warp(block *b, warp *w, const insn *in, uint32_t active, uint32_t m)
{
    if (m == FULL_MASK)
        return true;
    fault(b, in, (int)__builtin_ctz(active | 1), w, EMU_ERR_INVALID,
          "%s needs all 32 threads of the warp; lanes 0x%08x execute it (live 0x%08x)", ptx_op_name((ptx_op)in->op),
          m, w->live);
    return false;
}

/* Rows of a fragment's 8x8 block as vectors. Four lanes' 64-bit register slots read as a u32x8 hold each
 * lane's low 32 bits at the even places (the host is little-endian, as the GPU). */
typedef float f32x8 __attribute__((vector_size(8 * sizeof(float))));
typedef uint32_t u32x8 __attribute__((vector_size(8 * sizeof(uint32_t))));

/* Eight elements picked from x's and y's sixteen by constant indexes (y's from 8 on): one shuffle
 * instruction, as a rule, in the AVX2 copy. GCC's __builtin_shuffle; clang, and GCC only from 12, spell it
 * __builtin_shufflevector. */
#if defined(__clang__)
#define PICK8(x, y, ...) __builtin_shufflevector(x, y, __VA_ARGS__)
#else
#define PICK8(x, y, ...) __builtin_shuffle(x, y, (u32x8){__VA_ARGS__})
#endif

/* Row g of a fragment register's 8x8 block of 16-bit elements (lanes 4g to 4g + 3: the low 32 bits of
 * their slots), into out[0..7]. */
static inline __attribute__((always_inline)) void fragment_row(const uint64_t *reg, int g, uint16_t out[8])
{
    u32x8 slots;
    memcpy(&slots, &reg[4 * g], sizeof slots);
    const u32x8 low = PICK8(slots, slots, 0, 2, 4, 6, 0, 2, 4, 6); /* (the first four wanted) */
    memcpy(out, &low, 4 * sizeof(uint32_t));
}

/* An 8x8 block's transpose, its rows as vectors: three rounds of shuffles, each pairing the vectors of the
 * round before (the usual AVX transpose). */
static inline __attribute__((always_inline)) void transpose8(const f32x8 in[8], f32x8 out[8])
{
    f32x8 pairs[8], quads[8];
    for (int i = 0; i < 8; i += 2) { /* rows i and i + 1 interleaved: columns 0,1,4,5 then 2,3,6,7 */
        pairs[i] = PICK8(in[i], in[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
        pairs[i + 1] = PICK8(in[i], in[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
    }
    for (int i = 0; i < 8; i += 4) /* four rows' columns c (then c + 4) together */
        for (int k = 0; k < 2; k++) {
            quads[i + 2 * k] = PICK8(pairs[i + k], pairs[i + k + 2], 0, 1, 8, 9, 4, 5, 12, 13);
            quads[i + 2 * k + 1] = PICK8(pairs[i + k], pairs[i + k + 2], 2, 3, 10, 11, 6, 7, 14, 15);
        }
    for (int c = 0; c < 4; c++) { /* the two halves of the block: columns c and c + 4 whole */
        out[c] = PICK8(quads[c], quads[c + 4], 0, 1, 2, 3, 8, 9, 10, 11);
        out[c + 4] = PICK8(quads[c], quads[c + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    }
}

/* mma.m16n8kK, the whole of it: the fragments' elements gathered from every lane's registers into binary64
 * matrices, multiplied, and D's elements scattered back. Every fragment register read across the warp is
 * an 8x8 block of its matrix in lane order (interp.h), so the gather moves whole rows: A's register j is
 * the block at rows 8(j % 2), columns 8(j / 2); B's register j a block of B's transpose, at rows 8j of B;
 * C's and D's f16 register j (f32 registers 2j and 2j + 1, lane 4g + t holding columns 2t and 2t + 1 of
 * row g) the block at rows 8j. C and D have one type, f32 or f16 ("mma": .dtype is .ctype at these shapes,
 * parse.c). K, h and f32 are constants where mma_tile inlines it for the chapters' form, so the compiler
 * drops the branches on them there. */
static inline __attribute__((always_inline)) void mma_body(int K, int h, bool f32, uint64_t (*r)[LANES],
                                                           const int32_t *o)
{
    const int nd = f32 ? 4 : 2, a0 = nd, b0 = nd + K / 4, c0 = b0 + K / 8; /* K/4 registers of A, K/8 of B */
    /* A's and B's registers (consecutive operands), then an f16 C's: their 16-bit elements, row by row */
    const int n_halves = K / 4 + K / 8 + (f32 ? 0 : 2);
    uint16_t halves[8][8][8];
    for (int i = 0; i < n_halves; i++)
        for (int g = 0; g < 8; g++)
            fragment_row(r[o[a0 + i]], g, halves[i][g]);
    float elements[8][8][8];
    if (h == T_F16) /* (bf16 comes with an f32 C alone) */
        emu_f16_to_f32_n(&halves[0][0][0], &elements[0][0][0], 64 * n_halves);
    else /* bf16: the top half of a binary32 */
        for (int i = 0; i < K / 4 + K / 8; i++)
            for (int g = 0; g < 8; g++)
                for (int e = 0; e < 8; e++)
                    elements[i][g][e] = f32_of((uint64_t)halves[i][g][e] << 16);

    double A[16][16];
    row8 B[16], D[16];
    for (int j = 0; j < K / 4; j++)
        for (int g = 0; g < 8; g++) {
            f32x8 row;
            memcpy(&row, elements[j][g], sizeof row);
            const row8 wide = __builtin_convertvector(row, row8);
            memcpy(&A[8 * (j & 1) + g][8 * (j >> 1)], &wide, sizeof wide);
        }
    for (int j = 0; j < K / 8; j++) { /* lane 4g + t holds B's rows 2t and 2t + 1 of column g */
        f32x8 columns[8], rows[8];
        memcpy(columns, elements[K / 4 + j], sizeof columns);
        transpose8(columns, rows);
        for (int row = 0; row < 8; row++)
            B[8 * j + row] = __builtin_convertvector(rows[row], row8);
    }
    for (int j = 0; j < 2; j++)
        for (int g = 0; g < 8; g++) {
            f32x8 row;
            if (f32) { /* the even register's lanes give columns 2t, the odd one's 2t + 1 */
                u32x8 even, odd;
                memcpy(&even, &r[o[c0 + 2 * j]][4 * g], sizeof even);
                memcpy(&odd, &r[o[c0 + 2 * j + 1]][4 * g], sizeof odd);
                const u32x8 both = PICK8(even, odd, 0, 8, 2, 10, 4, 12, 6, 14);
                memcpy(&row, &both, sizeof row);
            } else {
                memcpy(&row, elements[K / 4 + K / 8 + j][g], sizeof row);
            }
            D[8 * j + g] = __builtin_convertvector(row, row8);
        }

    if (K == 16)
        mma_rows(16, A, B, D);
    else
        mma_rows(8, A, B, D);

    for (int j = 0; j < 2; j++)
        for (int g = 0; g < 8; g++) {
            const f32x8 row = __builtin_convertvector(D[8 * j + g], f32x8);
            if (f32) {
                u32x8 bits;
                memcpy(&bits, &row, sizeof bits);
                const u32x8 zero = {0}, even = PICK8(bits, zero, 0, 8, 2, 8, 4, 8, 6, 8),
                            odd = PICK8(bits, zero, 1, 8, 3, 8, 5, 8, 7, 8);
                memcpy(&r[o[2 * j]][4 * g], &even, sizeof even);
                memcpy(&r[o[2 * j + 1]][4 * g], &odd, sizeof odd);
            } else { /* lane 4g + t's pair, the lower column in bits 15:0 */
                float values[8];
                uint16_t h16[8];
                memcpy(values, &row, sizeof values);
                emu_f32_to_f16_n(values, h16, 8);
                for (int t = 0; t < 4; t++)
                    r[o[j]][4 * g + t] = (uint64_t)h16[2 * t + 1] << 16 | h16[2 * t];
            }
        }
}

/* mma_body with its shape and types constants, in vector copies (interp.h): with the sums, the hottest code
 * of a tensor-core kernel's emulation. The form the chapters use (m16n8k16, f16 A and B, f32 C and D) gets a
 * copy of its own; the others share one. */
SUM_COPIES FUSED_PRODUCTS
static void mma_tile(int K, int h, bool f32, uint64_t (*r)[LANES], const int32_t *o)
{
    if (K == 16 && h == T_F16 && f32)
        mma_body(16, T_F16, true, r, o);
    else
        mma_body(K, h, f32, r, o);
}

step exec_mma(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                     uint32_t m)
{
    if (!whole_warp(b, w, in, active, m))
        return STEP_FAULT;
    const int K = in->vec; /* m16n8kK */
    mma_tile(K, in->stype == T_BF16 ? T_BF16 : T_F16, in->type == T_F32, r, o);
    b->c.tensor_flops += 2 * 16 * 8 * (uint64_t)K;
    return STEP_NEXT;
}

/* ldmatrix ("Warp-level matrix load instruction: ldmatrix"): lanes 8k..8k+7 give the row addresses of
 * matrix k (16 bytes each, 16-byte aligned). Lane L receives, in register k, row L/4 elements 2(L%4)
 * and 2(L%4)+1 of matrix k, or with .trans the same positions of its transpose. */
step exec_ldmatrix(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                          uint32_t m)
{
    if (!whole_warp(b, w, in, active, m))
        return STEP_FAULT;
    const uint32_t givers = (uint32_t)((1ull << (8 * in->vec)) - 1); /* the lanes that give row addresses */
    const int space = in->space == SPACE_GENERIC ? SPACE_GENERIC : SPACE_SHARED;
    /* each row's address (warp_access reads all 32 lanes'), and its offset in shared memory */
    uint64_t address[LANES] = {0}, offset[LANES];
    for (uint32_t lane = 0; lane < 8u * in->vec; lane++) {
        address[lane] = (in->addr_base >= 0 ? r[in->addr_base][lane] : 0) + (uint64_t)in->addr_offset;
        offset[lane] = space == SPACE_GENERIC ? address[lane] - EMU_SHARED_WINDOW : address[lane];
        if (space == SPACE_GENERIC && offset[lane] >= EMU_WINDOW_SIZE) {
            fault(b, in, (int)lane, w, EMU_ERR_ADDRESS, "ldmatrix row address 0x%" PRIx64 " is not in shared memory",
                  address[lane]);
            return STEP_FAULT;
        }
    }
    uint8_t *at[LANES];
    if (!warp_access(b, w, in, space, givers, address, 16, ACCESS_READ, at))
        return STEP_FAULT;
    uint16_t rows[4][8][8];
    FOR_LANES(givers, lane) memcpy(rows[lane / 8][lane % 8], at[lane], 16);
    /* one wavefront per 8x8 matrix when its 8 rows fall in distinct banks: a phase per matrix */
    count_access(b, SPACE_SHARED, true, offset, givers, 16);
    for (int k = 0; k < in->vec; k++) {
        /* lane 4g + t's elements 2t and 2t + 1 of row g: the matrix's 32-bit word number `lane`; with .trans
         * the same of its transpose, so the transpose is made first */
        uint16_t transposed[8][8];
        if (in->flags & F_TRANS)
            for (int row = 0; row < 8; row++)
                for (int col = 0; col < 8; col++)
                    transposed[col][row] = rows[k][row][col];
        uint32_t words[LANES];
        memcpy(words, in->flags & F_TRANS ? transposed : rows[k], sizeof words);
        for (int lane = 0; lane < LANES; lane++)
            r[o[k]][lane] = words[lane];
    }
    return STEP_NEXT;
}

/* WMMA m16n16k16. The ISA leaves the fragments' layout unspecified ("Matrix Fragments for WMMA"); a
 * program may only load, multiply, store and apply uniform element-wise operations. This emulator
 * uses the mma.m16n8k16 layout: A's registers 0-3 hold the A fragment (registers 4-7 repeat it), B's
 * registers 0-1 the columns 0-7 and 2-3 the columns 8-15 (4-7 repeat them), an f32 accumulator's
 * registers 0-3 the columns 0-7 and 4-7 the columns 8-15; an f16 accumulator packs those in pairs.
 * Element (row, col) is at p + (row * stride + col) * size (row layout) or p + (col * stride + row) * size. */
static step wmma_element(block *b, warp *w, const insn *in, uint64_t base, uint32_t stride, int row, int col,
                         int size, bool write, uint8_t **out)
{
    bool row_major = in->flags & F_ROW_A;
    uint64_t addr = base + (uint64_t)(row_major ? row * (int)stride + col : col * (int)stride + row) * (uint64_t)size;
    *out = mem_access(b, w, in, 0, in->space, addr, (uint64_t)size, write ? ACCESS_WRITE : ACCESS_READ);
    return *out ? STEP_NEXT : STEP_FAULT;
}

/* Which (row, col) of the 16x16 matrix register `reg`, half `part`, of `lane` holds. */
static void wmma_position(int matrix, int lane, int reg, int part, int *row, int *col)
{
    if (matrix == WMMA_A) {
        int i = 2 * (reg & 3) + part;
        *row = frag_a_row(lane, i), *col = frag_a_col(lane, i);
    } else if (matrix == WMMA_B) {
        int i = 2 * (reg & 1) + part, n_half = (reg >> 1) & 1;
        *row = frag_b_row(lane, i), *col = frag_b_col(lane, i) + 8 * n_half;
    } else { /* C/D, f32: reg 0-3 -> columns 0-7, 4-7 -> columns 8-15 (part = 0) */
        int i = reg & 3;
        *row = frag_c_row(lane, i), *col = frag_c_col(lane, i) + 8 * (reg >> 2);
    }
}

step exec_wmma_load_store(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o,
                                 uint32_t active, uint32_t m)
{
    if (!whole_warp(b, w, in, active, m))
        return STEP_FAULT;
    const bool load = in->op == OP_WMMA_LOAD;
    const int n = load ? in->n_dst : in->n_src - 1; /* fragment registers */
    const int stride_slot = o[load ? in->n_dst : in->n_src - 1];
    const int matrix = in->mode == WMMA_D ? WMMA_C : in->mode;
    const bool f32 = in->type == T_F32;
    const int size = f32 ? 4 : 2;
    const int32_t *frag = o; /* the fragment registers: destinations of a load, first sources of a store */
    uint64_t base = (in->addr_base >= 0 ? r[in->addr_base][0] : 0) + (uint64_t)in->addr_offset;
    uint32_t stride = (uint32_t)r[stride_slot][0];
    for (int lane = 1; lane < LANES; lane++) /* "UB if threads use different p or stride" */
        if ((in->addr_base >= 0 && r[in->addr_base][lane] != r[in->addr_base][0]) ||
            (uint32_t)r[stride_slot][lane] != stride) {
            fault(b, in, lane, w, EMU_ERR_INVALID, "wmma address or stride differs between lanes of the warp");
            return STEP_FAULT;
        }
    for (int lane = 0; lane < LANES; lane++)
        for (int reg = 0; reg < n; reg++) {
            int parts = f32 ? 1 : 2;
            /* f16 accumulators: registers 0-1 columns 0-7, 2-3 columns 8-15, two elements each */
            for (int part = 0; part < parts; part++) {
                int row, col;
                if (matrix == WMMA_C && !f32) {
                    int i = 2 * (reg & 1) + part;
                    row = frag_c_row(lane, i), col = frag_c_col(lane, i) + 8 * (reg >> 1);
                } else {
                    wmma_position(matrix, lane, reg, part, &row, &col);
                }
                uint8_t *p;
                if (wmma_element(b, w, in, base, stride, row, col, size, !load, &p) != STEP_NEXT)
                    return STEP_FAULT;
                if (load) {
                    uint64_t v = load_bits(p, size);
                    uint64_t *dst = &r[frag[reg]][lane];
                    *dst = f32 ? v : (part ? (*dst & 0xffff) | v << 16 : v);
                } else if (matrix == WMMA_A || matrix == WMMA_B ? reg < 4 : true) {
                    uint64_t v = r[frag[reg]][lane] >> (16 * part);
                    memcpy(p, &v, (size_t)size);
                }
            }
        }
    return STEP_NEXT;
}

step exec_wmma_mma(block *b, warp *w, const insn *in, uint64_t (*r)[LANES], const int32_t *o, uint32_t active,
                          uint32_t m)
{
    if (!whole_warp(b, w, in, active, m))
        return STEP_FAULT;
    const bool d_f32 = in->type == T_F32, c_f32 = in->mode == T_F32;
    const int nd = d_f32 ? 8 : 4, a0 = nd, b0 = nd + 8, c0 = nd + 16;
    float A[16][16], B[16][16], C[16][16];
    for (int lane = 0; lane < LANES; lane++)
        for (int reg = 0; reg < 4; reg++)
            for (int part = 0; part < 2; part++) {
                int row, col;
                wmma_position(WMMA_A, lane, reg, part, &row, &col);
                A[row][col] = half_in(r[o[a0 + reg]][lane] >> (16 * part), T_F16);
                wmma_position(WMMA_B, lane, reg, part, &row, &col);
                B[row][col] = half_in(r[o[b0 + reg]][lane] >> (16 * part), T_F16);
            }
    for (int lane = 0; lane < LANES; lane++)
        for (int i = 0; i < 8; i++) {
            int row = frag_c_row(lane, i & 3), col = frag_c_col(lane, i & 3) + 8 * (i >> 2);
            C[row][col] = c_f32 ? f32_of(r[o[c0 + i]][lane])
                                : half_in(r[o[c0 + ((i & 3) >> 1) + 2 * (i >> 2)]][lane] >> (16 * (i & 1)), T_F16);
        }
    float Dm[16][16];
    for (int half = 0; half < 2; half++) { /* two m16n8k16 tiles: columns 0-7 and 8-15 */
        float Bh[16][8], Ch[16][8], Dh[16][8];
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 8; j++)
                Bh[i][j] = B[i][8 * half + j], Ch[i][j] = C[i][8 * half + j];
        mma_m16n8k16(A, Bh, Ch, Dh);
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 8; j++)
                Dm[i][8 * half + j] = Dh[i][j];
    }
    for (int lane = 0; lane < LANES; lane++)
        for (int i = 0; i < 8; i++) {
            int row = frag_c_row(lane, i & 3), col = frag_c_col(lane, i & 3) + 8 * (i >> 2);
            if (d_f32) {
                r[o[i]][lane] = bits_f32(Dm[row][col]);
            } else {
                uint64_t *reg = &r[o[((i & 3) >> 1) + 2 * (i >> 2)]][lane];
                uint64_t h = emu_f32_to_f16(Dm[row][col]);
                *reg = (i & 1) ? (*reg & 0xffff) | h << 16 : h;
            }
        }
    b->c.tensor_flops += 2 * 16 * 16 * 16;
    return STEP_NEXT;
}
