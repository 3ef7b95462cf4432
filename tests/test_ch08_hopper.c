/* test_ch08_hopper.c: chapter 08's layout math (chapters/08_hopper/hopper.h), checked on the host.
 *
 * The PTX emulator runs the kernels themselves (`conv check 08 --emulate`, the gpu suite); this test is a
 * second reading of the same ISA, written apart from the emulator and from the kernels' PTX: it checks
 * every piece of arithmetic the kernels rely on to put data where the tensor cores will look for it, so
 * a layout mistake would have to fool both the emulator and this host model to pass:
 *   1. the 128-byte swizzle, against the PTX ISA's description of the swizzled layout (a table: in every
 *      8-row x 128-byte block, 16-byte unit u of row r sits at unit u XOR r), hand-worked values, and
 *      chapter 05's swizzle_chunk() for 8-chunk rows;
 *   2. the matrix descriptor's fields (start >> 4, LBO, SBO, swizzle mode), against hand-worked values;
 *   3. that a tile written the way the kernel's cp.async write it, read back through the descriptors the
 *      kernel builds and the ISA's core-matrix layout (hopper_operand_address), is the A and B operands
 *      of every wgmma exactly, element for element; and that a tile not 1024-byte aligned is not;
 *   4. the accumulator fragment: every (row, column) of the 64 x 128 warpgroup tile exactly once, as
 *      four m16n8 C fragments stacked per warp (tensor_core.h's mma_c_row/col);
 *   5. 08b: the TMA box lands exactly where 08a's copies put B, the tensor map's dimensions against
 *      hand-worked values and cuTensorMapEncodeTiled's rules, and the mbarrier protocol (full/empty
 *      barriers, phases and parities, expect_tx, the producer's lag, the consumers' releases) in a
 *      randomized simulation of the producer, the TMA unit and the consumers: orders of events a kernel
 *      run on the emulator meets only one at a time.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "hopper.h"
#include "implicit_gemm.h"
#include "tensor_core.h"
#include "test_util.h"

/* ---- 1. the swizzle --------------------------------------------------------------------------------- */

/* The ISA's picture of the 128-byte swizzle, written as a table lookup rather than bit operations: the
 * pattern repeats every 1024 bytes (8 rows of 128); in row r of a repeat, the 16-byte unit that would
 * be at position u is at position u ^ r; bytes inside a unit do not move. */
static uint32_t isa_swizzle128(uint32_t offset)
{
    const uint32_t repeat = offset / 1024, row = offset % 1024 / 128, unit = offset % 128 / 16, byte = offset % 16;
    return repeat * 1024 + row * 128 + (unit ^ row) * 16 + byte;
}

static void check_swizzle(void)
{
    size_t mismatches = 0;
    for (uint32_t o = 0; o < 64 * 1024; o++)
        mismatches += hopper_swizzle128(o) != isa_swizzle128(o);
    EXPECT(mismatches == 0, "hopper_swizzle128 differs from the ISA's table at %zu offsets", mismatches);

    /* A bijection on every 1024-byte block, which it never leaves. */
    for (uint32_t block = 0; block < 4; block++) {
        unsigned char seen[1024] = {0};
        size_t bad = 0;
        for (uint32_t o = block * 1024; o < block * 1024 + 1024; o++) {
            const uint32_t s = hopper_swizzle128(o);
            if (s / 1024 != block || seen[s % 1024]++)
                bad++;
        }
        EXPECT(bad == 0, "block %u: swizzle not a permutation of the block (%zu bad)", block, bad);
    }

    /* Hand-worked: (row, chunk) -> row*128 + (chunk ^ row%8)*16. */
    EXPECT(hopper_chunk_offset(0, 0) == 0, "(0,0) -> %u", hopper_chunk_offset(0, 0));
    EXPECT(hopper_chunk_offset(0, 5) == 80, "(0,5) -> %u", hopper_chunk_offset(0, 5));
    EXPECT(hopper_chunk_offset(1, 0) == 144, "(1,0) -> %u", hopper_chunk_offset(1, 0));       /* 128 + 1*16 */
    EXPECT(hopper_chunk_offset(7, 3) == 960, "(7,3) -> %u", hopper_chunk_offset(7, 3));       /* 896 + 4*16 */
    EXPECT(hopper_chunk_offset(9, 2) == 1200, "(9,2) -> %u", hopper_chunk_offset(9, 2));      /* 1152 + 3*16 */
    EXPECT(hopper_chunk_offset(127, 7) == 16256, "(127,7) -> %u", hopper_chunk_offset(127, 7)); /* 16256 + 0 */

    /* The same permutation chapter 05 chose for rows of 8 chunks, and conflict-free: the same logical
     * chunk of 8 consecutive rows in 8 different 16-byte slots of their 128-byte lines. */
    size_t differ = 0, conflicts = 0;
    for (int row = 0; row < 128; row++)
        for (int chunk = 0; chunk < 8; chunk++)
            differ += hopper_chunk_offset(row, chunk) != 16u * (uint32_t)swizzle_chunk(row, chunk, 8);
    for (int row0 = 0; row0 < 128; row0 += 8)
        for (int chunk = 0; chunk < 8; chunk++) {
            unsigned slots = 0;
            for (int r = row0; r < row0 + 8; r++)
                slots |= 1u << (hopper_chunk_offset(r, chunk) % 128 / 16);
            conflicts += slots != 0xFFu;
        }
    EXPECT(differ == 0, "hopper_chunk_offset differs from swizzle_chunk(row, chunk, 8) at %zu chunks", differ);
    EXPECT(conflicts == 0, "%zu groups of 8 rows put one chunk into the same slot twice", conflicts);
}

/* ---- 2. the descriptor ------------------------------------------------------------------------------ */

static void check_descriptor(void)
{
    /* Hand-worked: start 0x400 -> 0x40 in bits 0-13; LBO 16 -> 1 in bits 16-29; SBO 1024 -> 0x40 in
     * bits 32-45; 128-byte swizzle -> 1 in bits 62-63. */
    const uint64_t d = hopper_desc_encode(0x400, 16, 1024, HOPPER_SWIZZLE_128B);
    EXPECT(d == 0x4000004000010040ull, "descriptor 0x%016llx", (unsigned long long)d);
    EXPECT(hopper_desc_start(d) == 0x400 && hopper_desc_lbo(d) == 16 && hopper_desc_sbo(d) == 1024 &&
               hopper_desc_swizzle(d) == HOPPER_SWIZZLE_128B && hopper_desc_base_offset(d) == 0,
           "fields of 0x%016llx", (unsigned long long)d);

    /* What the kernel builds for warpgroup 1 (rows 64..127), kappa 16..31, of a tile at 0x10400:
     * start 0x10400 + 64*128 + 16*2 = 0x12420 -> 0x1242. */
    const uint64_t a = hopper_operand_desc(0x10400, 64, 16);
    EXPECT(a == 0x4000004000011242ull, "A descriptor 0x%016llx", (unsigned long long)a);
    /* B of the same stage, kappa 48..63: start 0x10400 + 16384 + 96 = 0x14460 -> 0x1446. */
    const uint64_t b = hopper_operand_desc(0x10400 + H08A_A_TILE_BYTES, 0, 48);
    EXPECT(b == 0x4000004000011446ull, "B descriptor 0x%016llx", (unsigned long long)b);

    /* Round trip over every 16-byte aligned address the kernel's shared memory can have (the 18 bits of
     * the field cover 256 KB; an H100 block has at most 227 KB), with the fields not bleeding into each
     * other. */
    size_t bad = 0;
    for (uint32_t start = 0; start < (1u << 18); start += 16) {
        const uint64_t e = hopper_desc_encode(start, 16, 1024, HOPPER_SWIZZLE_128B);
        bad += hopper_desc_start(e) != start || hopper_desc_lbo(e) != 16 || hopper_desc_sbo(e) != 1024 ||
               hopper_desc_swizzle(e) != 1 || hopper_desc_base_offset(e) != 0 ||
               (e & 0x3FFFC000C000C000ull) != 0; /* the unused bits 14-15, 30-31, 46-61 */
    }
    EXPECT(bad == 0, "%zu start addresses do not survive the descriptor", bad);
    EXPECT(H08A_STAGES * H08A_STAGE_BYTES + H08_ATOM_BYTES <= 227 * 1024, "08a's shared memory fits an H100 block");
}

/* ---- 3. tiles read back through the descriptors ---------------------------------------------------------- */

/* A stage of rows x 64 kappa, element (row, kappa) = a value unique to it, written chunk by chunk as the
 * kernel's cp.async write it (hopper_chunk_offset, 8 halves per chunk) into `smem` (one float per
 * 2-byte slot, index = byte address / 2) at byte address `tile`. */
static double tile_value(int which, int row, int kappa)
{
    return which * 1e6 + row * 100 + kappa;
}

static void write_tile(double *smem, uint32_t tile, int which, int rows)
{
    for (int row = 0; row < rows; row++)
        for (int chunk = 0; chunk < 8; chunk++)
            for (int e = 0; e < 8; e++)
                smem[(tile + hopper_chunk_offset(row, chunk)) / 2 + (uint32_t)e] = tile_value(which, row, 8 * chunk + e);
}

/* Wrong elements when every wgmma operand of a stage at `base` is read back through its descriptor. */
static size_t read_back_errors(uint32_t base)
{
    const size_t slots = (base + H08A_STAGE_BYTES) / 2 + 1024;
    double *smem = calloc(slots, sizeof(double));
    const uint32_t a_tile = base, b_tile = base + H08A_A_TILE_BYTES;
    write_tile(smem, a_tile, 1, H08A_BM);
    write_tile(smem, b_tile, 2, H08A_BN);
    size_t wrong = 0;
    for (int ks = 0; ks < H08A_BK / H08_MMA_K; ks++) {
        for (int wg = 0; wg < H08A_WARPGROUPS; wg++) {
            const uint64_t d = hopper_operand_desc(a_tile, wg * H08_WG_M, ks * H08_MMA_K);
            for (int row = 0; row < H08_WG_M; row++)
                for (int k = 0; k < H08_MMA_K; k++)
                    wrong += smem[hopper_operand_address(d, row, k) / 2] !=
                             tile_value(1, wg * H08_WG_M + row, ks * H08_MMA_K + k);
        }
        const uint64_t d = hopper_operand_desc(b_tile, 0, ks * H08_MMA_K);
        for (int n = 0; n < H08A_BN; n++)
            for (int k = 0; k < H08_MMA_K; k++)
                wrong += smem[hopper_operand_address(d, n, k) / 2] != tile_value(2, n, ks * H08_MMA_K + k);
    }
    free(smem);
    return wrong;
}

static void check_read_back(void)
{
    for (int stage = 0; stage < H08A_STAGES; stage++) {
        const uint32_t base = 0x400 + (uint32_t)stage * H08A_STAGE_BYTES; /* 1024-byte aligned, as the kernel's */
        const size_t wrong = read_back_errors(base);
        EXPECT(wrong == 0, "stage %d: %zu operand elements read back wrong", stage, wrong);
    }
    /* The hardware swizzles absolute address bits: a tile that starts 128 bytes off a 1024-byte boundary
     * is read back scrambled. That is why the kernel rounds its shared memory up to 1024 bytes. */
    EXPECT(read_back_errors(0x400 + 128) > 0, "a misaligned tile must not read back right");
}

/* ---- 4. the accumulator fragment ----------------------------------------------------------------------- */

static void check_accumulators(void)
{
    int seen[H08_WG_M][H08A_BN];
    memset(seen, 0, sizeof seen);
    size_t bad_formula = 0, bad_pairs = 0;
    for (int t = 0; t < 128; t++)
        for (int i = 0; i < H08A_ACC; i++) {
            const int row = hopper_d_row(t, i), col = hopper_d_col(t, i);
            /* Warp t/32 owns rows 16*(t/32) ..; within them each n8 block (registers 4j .. 4j+3) is an
             * mma.m16n8 C fragment. */
            const int lane = t % 32, e = i % 4;
            bad_formula += row != 16 * (t / 32) + mma_c_row(lane, e) || col != 8 * (i / 4) + mma_c_col(lane, e);
            bad_pairs += i % 2 == 0 && (hopper_d_row(t, i + 1) != row || hopper_d_col(t, i + 1) != col + 1);
            if (row >= 0 && row < H08_WG_M && col >= 0 && col < H08A_BN)
                seen[row][col]++;
        }
    size_t not_once = 0;
    for (int r = 0; r < H08_WG_M; r++)
        for (int c = 0; c < H08A_BN; c++)
            not_once += seen[r][c] != 1;
    EXPECT(bad_formula == 0, "%zu accumulators differ from the stacked m16n8 C fragments", bad_formula);
    EXPECT(bad_pairs == 0, "%zu register pairs are not column neighbours", bad_pairs);
    EXPECT(not_once == 0, "%zu of the 64 x 128 accumulators not held exactly once", not_once);
}

/* ---- 5. 08b: the TMA box, and the mbarrier protocol ------------------------------------------------------ */

static void check_tma_layout(void)
{
    /* A box element lands where 08a's cp.async put the same element: chunk col/8 of the row, half col%8;
     * and where the ISA's swizzle table says. */
    size_t differ = 0;
    for (int row = 0; row < H08A_BN; row++)
        for (int col = 0; col < H08A_BK; col++)
            differ += hopper_tma_box_offset(row, col) != hopper_chunk_offset(row, col / 8) + (uint32_t)(col % 8) * 2u ||
                      hopper_tma_box_offset(row, col) != isa_swizzle128((uint32_t)row * 128u + (uint32_t)col * 2u);
    EXPECT(differ == 0, "%zu box elements land elsewhere than 08a's chunks", differ);

    /* Hand-worked: res2_3x3's filter, K = 64 rows of 3*3*64 = 576 values, 1152 bytes apart. */
    conv_problem prob = problem_make(32, 64, 56, 56, 64, 3, 3);
    prob.pad_h = prob.pad_w = 1;
    char why[256];
    EXPECT(problem_validate(&prob, why, sizeof why), "res2_3x3: %s", why);
    const hopper_tma_2d t = hopper_filter_tma(&prob);
    EXPECT(t.dim[0] == 576 && t.dim[1] == 64 && t.row_stride == 1152 && t.box[0] == 64 && t.box[1] == 128,
           "res2_3x3 tensor map: dims %llu x %llu, stride %llu, box %u x %u", (unsigned long long)t.dim[0],
           (unsigned long long)t.dim[1], (unsigned long long)t.row_stride, t.box[0], t.box[1]);
    /* Grouped: group 1 of 2, columns from 64: rows from K/G + 64. */
    conv_problem grouped = problem_make(1, 32, 8, 8, 256, 1, 1);
    grouped.groups = 2;
    EXPECT(problem_validate(&grouped, why, sizeof why), "grouped: %s", why);
    EXPECT(hopper_tma_row(&grouped, 1, 64) == 192 && hopper_tma_kappa(3) == 192, "TMA coordinates: row %d, kappa %d",
           hopper_tma_row(&grouped, 1, 64), hopper_tma_kappa(3));
    /* cuTensorMapEncodeTiled's rules, for the problems 08b runs (C/G padded to a multiple of 8): the
     * row stride a multiple of 16 bytes, the box at most 256 per dimension and, under the 128-byte
     * swizzle, its inner dimension at most 128 bytes. */
    uint64_t state = 11;
    size_t bad = 0;
    for (int i = 0; i < 200; i++) {
        conv_problem r = check_random_problem(&state);
        const conv_problem run = pad_fprop_problem(&r);
        const hopper_tma_2d m = hopper_filter_tma(&run);
        bad += m.row_stride % 16 != 0 || m.box[0] > 256 || m.box[1] > 256 || m.box[0] * 2 > 128 ||
               m.dim[0] * m.dim[1] != (uint64_t)problem_w_elems(&run);
    }
    EXPECT(bad == 0, "%zu padded problems break a tensor-map rule", bad);
}

/* The 08b pipeline as a set of actors taking steps in random order, with mbarriers modelled as the ISA
 * describes them: a phase completes when its pending arrivals reach zero and its transaction count is
 * zero; then the next phase starts with the full arrival count; try_wait.parity(P) succeeds once the
 * current phase's parity is not P. The producer threads, the TMA unit, the cp.async landings and the
 * two consumer warpgroups (their wgmma groups completing in order, later) follow the kernel's steps
 * with hopper_stage_of / hopper_full_parity / hopper_empty_parity. Checked: it never deadlocks, a
 * consumer only issues wgmma on a stage that holds the whole tile (every producer thread's chunks and
 * the TMA box), and nothing lands in a stage while a wgmma group that reads it is in flight. */
typedef struct {
    int phase, pending, count;
    long tx;
} model_barrier;

static void barrier_maybe_complete(model_barrier *b)
{
    if (b->pending == 0 && b->tx == 0) {
        b->phase++;
        b->pending = b->count;
    }
}

static void barrier_arrive(model_barrier *b)
{
    b->pending--;
    barrier_maybe_complete(b);
}

static bool barrier_done(const model_barrier *b, uint32_t parity)
{
    return (uint32_t)(b->phase & 1) != parity;
}

enum { MODEL_P = 128, MODEL_S = H08B_STAGES, MODEL_MAX_TILES = 16 };

typedef struct {
    model_barrier full[MODEL_S], empty[MODEL_S];
    int a_tile[MODEL_S][MODEL_P]; /* the tile whose A chunks of producer thread p are in the stage (-1: none) */
    int b_tile[MODEL_S];          /* the tile whose B box is in the stage */
    int reading[MODEL_S];         /* wgmma groups in flight that read the stage */
    size_t hazards, bad_reads;
} model_state;

static uint64_t model_rand(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return *state >> 33;
}

static bool simulate_pipeline(int k_tiles, uint64_t seed, model_state *m)
{
    uint64_t rng = seed;
    memset(m, 0, sizeof *m);
    for (int s = 0; s < MODEL_S; s++) {
        m->full[s] = (model_barrier){0, H08B_FULL_ARRIVALS, H08B_FULL_ARRIVALS, 0};
        m->empty[s] = (model_barrier){0, H08B_EMPTY_ARRIVALS, H08B_EMPTY_ARRIVALS, 0};
        m->b_tile[s] = -1;
        for (int p = 0; p < MODEL_P; p++)
            m->a_tile[s][p] = -1;
    }
    /* Producer thread p: at tile pt[p], step ps[p] (0 wait empty, 1 TMA (thread 0), 2 copy + commit,
     * 3 release tile - LAG), then the drain; its committed groups land in order at random times. */
    int pt[MODEL_P] = {0}, ps[MODEL_P] = {0}, landed[MODEL_P] = {0}, committed[MODEL_P] = {0};
    int drained[MODEL_P] = {0};
    int tma_pending[MODEL_MAX_TILES], tma_count = 0, tma_next = 0; /* tiles whose box is on its way */
    /* Consumer warpgroup c: at tile ct[c], step cs[c] (0 wait full + issue, 1 wait<1> + release); its
     * wgmma groups in flight ring[c][..], oldest first. */
    int ct[2] = {0, 0}, cs[2] = {0, 0}, inflight[2][MODEL_MAX_TILES], n_inflight[2] = {0, 0}, first[2] = {0, 0};
    for (int steps = 0; steps < 1000000; steps++) {
        bool finished = ct[0] == k_tiles && ct[1] == k_tiles && n_inflight[0] == 0 && n_inflight[1] == 0;
        for (int p = 0; p < MODEL_P; p++)
            finished = finished && drained[p];
        if (finished)
            return true;
        /* Collect the actions that can happen now, pick one at random. */
        int choices[MODEL_P * 2 + 8][2], n = 0;
        for (int p = 0; p < MODEL_P; p++) {
            if (landed[p] < committed[p])
                choices[n][0] = 0, choices[n++][1] = p; /* a landing */
            if (drained[p])
                continue;
            if (pt[p] == k_tiles) {
                if (landed[p] == committed[p])
                    choices[n][0] = 1, choices[n++][1] = p; /* the drain */
                continue;
            }
            const int t = pt[p], s = hopper_stage_of(t);
            bool can = true;
            if (ps[p] == 0)
                can = t < MODEL_S || barrier_done(&m->empty[s], hopper_empty_parity(t));
            if (ps[p] == 3)
                can = t < H08B_LAG || landed[p] >= committed[p] - H08B_LAG;
            if (can)
                choices[n][0] = 2, choices[n++][1] = p;
        }
        if (tma_next < tma_count)
            choices[n][0] = 3, choices[n++][1] = 0;
        for (int c = 0; c < 2; c++) {
            if (n_inflight[c] > 0)
                choices[n][0] = 4, choices[n++][1] = c; /* the oldest wgmma group completes */
            if (ct[c] == k_tiles)
                continue;
            const int s = hopper_stage_of(ct[c]);
            if ((cs[c] == 0 && barrier_done(&m->full[s], hopper_full_parity(ct[c]))) || (cs[c] == 1 && n_inflight[c] <= 1))
                choices[n][0] = 5, choices[n++][1] = c;
        }
        if (n == 0)
            return false; /* deadlock */
        const int pick = (int)(model_rand(&rng) % (uint64_t)n), kind = choices[pick][0], who = choices[pick][1];
        if (kind == 0) { /* producer `who`'s oldest group lands: its A chunks of that tile enter the stage */
            const int t = landed[who]++, s = hopper_stage_of(t);
            m->hazards += m->reading[s] > 0;
            m->a_tile[s][who] = t;
        } else if (kind == 1) { /* drain: release the last LAG tiles */
            for (int t = k_tiles > H08B_LAG ? k_tiles - H08B_LAG : 0; t < k_tiles; t++)
                barrier_arrive(&m->full[hopper_stage_of(t)]);
            drained[who] = 1;
        } else if (kind == 2) {
            const int t = pt[who], s = hopper_stage_of(t);
            if (ps[who] == 0) {
                ps[who] = 1;
            } else if (ps[who] == 1) {
                if (who == 0) { /* expect_tx, then the TMA copy */
                    m->full[s].tx += H08A_B_TILE_BYTES;
                    m->hazards += m->reading[s] > 0;
                    tma_pending[tma_count++] = t;
                }
                ps[who] = 2;
            } else if (ps[who] == 2) {
                m->hazards += m->reading[s] > 0;
                committed[who]++;
                ps[who] = 3;
            } else {
                if (t >= H08B_LAG)
                    barrier_arrive(&m->full[hopper_stage_of(t - H08B_LAG)]);
                ps[who] = 0;
                pt[who]++;
            }
        } else if (kind == 3) { /* the TMA box lands: complete_tx */
            const int t = tma_pending[tma_next++], s = hopper_stage_of(t);
            m->hazards += m->reading[s] > 0;
            m->b_tile[s] = t;
            m->full[s].tx -= H08A_B_TILE_BYTES;
            barrier_maybe_complete(&m->full[s]);
        } else if (kind == 4) { /* consumer `who`'s oldest wgmma group completes */
            m->reading[hopper_stage_of(inflight[who][first[who]])]--;
            first[who]++;
            n_inflight[who]--;
        } else {
            const int t = ct[who], s = hopper_stage_of(t);
            if (cs[who] == 0) { /* wgmma on tile t: the stage must hold all of it */
                bool whole = m->b_tile[s] == t;
                for (int p = 0; p < MODEL_P; p++)
                    whole = whole && m->a_tile[s][p] == t;
                m->bad_reads += !whole;
                m->reading[s]++;
                inflight[who][first[who] + n_inflight[who]++] = t;
                cs[who] = 1;
            } else { /* wait<1> passed: release tile t-1 (4 warps) */
                if (t >= 1)
                    for (int warp = 0; warp < 4; warp++)
                        barrier_arrive(&m->empty[hopper_stage_of(t - 1)]);
                cs[who] = 0;
                ct[who]++;
            }
        }
    }
    return false;
}

static void check_pipeline_protocol(void)
{
    static model_state m;
    size_t deadlocks = 0, hazards = 0, bad_reads = 0, runs = 0;
    for (int k_tiles = 1; k_tiles <= MODEL_MAX_TILES; k_tiles++)
        for (uint64_t seed = 1; seed <= 12; seed++) {
            deadlocks += !simulate_pipeline(k_tiles, seed * 7919 + (uint64_t)k_tiles, &m);
            hazards += m.hazards;
            bad_reads += m.bad_reads;
            runs++;
        }
    EXPECT(deadlocks == 0, "%zu of %zu simulated pipelines deadlocked", deadlocks, runs);
    EXPECT(hazards == 0, "%zu writes into a stage a wgmma group in flight was reading", hazards);
    EXPECT(bad_reads == 0, "%zu wgmma issued on a stage that did not hold its whole tile", bad_reads);
}

int main(void)
{
    check_swizzle();
    check_descriptor();
    check_read_back();
    check_accumulators();
    check_tma_layout();
    check_pipeline_protocol();
    return test_summary("test_ch08_hopper");
}
