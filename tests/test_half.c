/* test_half.c: the emulator's binary32 -> binary16 rounding on the bits (emu/half.c, emu_f32_to_f16, what every
 * f16 result and cvt.rn.f16.f32 use) against its general rounding from the exact value (emu_to_f16, nearest
 * even), which it must equal for every binary32 but NaN. All 2^32 inputs take minutes; this test takes, for
 * every sign and exponent, every top-10-bit fraction with the low 13 bits at the edges of a rounding step
 * (0, 1, just below half, half, just above, all ones), every subnormal result's steps with their rest at
 * those edges too, and 2^22 random patterns. A NaN must stay a NaN. And the other way, emu_f16_to_f32_n (the
 * CPU's conversion, eight at a time, where it has one: what every mma.sync operand goes through) against
 * emu_f16_to_f32 for all 65,536 binary16 patterns, at every alignment and length of a run, the same bits
 * but for a signalling NaN's quiet bit. And emu_f32_to_f16_n (the CPU's rounding, eight at a time, where it
 * has one: what a warp's cvt.rn.f16.f32 goes through) against emu_f32_to_f16 on every pattern above, the same
 * bits, a NaN's included.
 *
 *   tests/test_half          (the cpu suite runs it; exit 0 when every case agrees)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "emu.h"

static unsigned long long checked, wrong;

/* Every pattern check() sees, kept for check_to_f16_n */
enum { MAX_PATTERNS = 8 << 20 };
static float patterns32[MAX_PATTERNS];
static uint32_t n_patterns32;

static void check(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, 4);
    if (n_patterns32 < MAX_PATTERNS)
        patterns32[n_patterns32++] = f;
    const uint16_t fast = emu_f32_to_f16(f);
    checked++;
    if (isnan(f) ? (fast & 0x7c00) != 0x7c00 || !(fast & 0x3ff) : fast != emu_to_f16((double)f, EMU_ROUND_NEAREST)) {
        if (wrong++ < 10)
            printf("FAIL  0x%08x: emu_f32_to_f16 gives 0x%04x, the exact rounding 0x%04x\n", bits, fast,
                   emu_to_f16((double)f, EMU_ROUND_NEAREST));
    }
}

/* emu_f16_to_f32_n against emu_f16_to_f32: every pattern, starting at each of 8 offsets (so the runs of
 * eight and the remainder both see every pattern), with runs of 1 to 17 elements. */
static unsigned long long check_to_f32_n(void)
{
    static uint16_t patterns[65536 + 24];
    static float converted[65536 + 24];
    unsigned long long differ = 0;
    for (uint32_t i = 0; i < 65536 + 24; i++)
        patterns[i] = (uint16_t)i;
    for (uint32_t offset = 0; offset < 8; offset++)
        for (uint32_t start = offset, length = 1; start < 65536 + offset; start += length, length = length % 17 + 1) {
            emu_f16_to_f32_n(patterns + start, converted + start, (int)length);
            for (uint32_t i = start; i < start + length; i++) {
                uint32_t got, want;
                const float reference = emu_f16_to_f32(patterns[i]);
                memcpy(&got, &converted[i], 4);
                memcpy(&want, &reference, 4);
                const uint32_t quiet = isnan(reference) ? 0x00400000u : 0; /* a signalling NaN may come back quiet */
                if ((got | quiet) != (want | quiet) && differ++ < 10)
                    printf("FAIL  binary16 0x%04x: emu_f16_to_f32_n gives 0x%08x, emu_f16_to_f32 0x%08x\n",
                           patterns[i], got, want);
            }
        }
    return differ;
}

/* emu_f32_to_f16_n against emu_f32_to_f16: every pattern check() saw, in runs of 1 to 17 elements (so the
 * runs of eight and the remainder both see them), the same bits, a NaN's included. */
static unsigned long long check_to_f16_n(void)
{
    static uint16_t converted[MAX_PATTERNS];
    unsigned long long differ = 0;
    for (uint32_t start = 0, length = 1; start < n_patterns32; start += length, length = length % 17 + 1) {
        if (start + length > n_patterns32)
            length = n_patterns32 - start;
        emu_f32_to_f16_n(patterns32 + start, converted + start, (int)length);
    }
    for (uint32_t i = 0; i < n_patterns32; i++) {
        const uint16_t want = emu_f32_to_f16(patterns32[i]);
        if (converted[i] != want && differ++ < 10) {
            uint32_t bits;
            memcpy(&bits, &patterns32[i], 4);
            printf("FAIL  binary32 0x%08x: emu_f32_to_f16_n gives 0x%04x, emu_f32_to_f16 0x%04x\n", bits, converted[i],
                   want);
        }
    }
    return differ;
}

int main(void)
{
    static const uint32_t low_edges[] = {0, 1, 0x0fff, 0x1000, 0x1001, 0x1fff};
    for (uint32_t sign = 0; sign < 2; sign++)
        for (uint32_t exponent = 0; exponent < 256; exponent++)
            for (uint32_t top = 0; top < 1024; top++)
                for (size_t e = 0; e < sizeof low_edges / sizeof low_edges[0]; e++)
                    check(sign << 31 | exponent << 23 | top << 13 | low_edges[e]);
    /* binary16 subnormal results: exponents 102-112 keep 24 - (126 - exponent) of the significand's 24 bits */
    for (uint32_t exponent = 102; exponent <= 112; exponent++) {
        const uint32_t shift = 126 - exponent, half = 1u << (shift - 1), mask = (1u << shift) - 1;
        const uint32_t rests[] = {0, 1, half - 1, half, half + 1, mask};
        for (uint32_t steps = 1u << (23 - shift); steps < 1u << (24 - shift); steps++) /* the leading bit set */
            for (size_t r = 0; r < sizeof rests / sizeof rests[0]; r++) {
                const uint32_t significand = steps << shift | rests[r];
                check(exponent << 23 | (significand & 0x7fffff));
            }
    }
    uint64_t state = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 1 << 22; i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        check((uint32_t)(state >> 32));
    }
    printf("%s  emu_f32_to_f16: %llu binary32 patterns, %llu differ from the exact rounding\n", wrong ? "FAIL" : "PASS",
           checked, wrong);
    const unsigned long long differ = check_to_f32_n();
    printf("%s  emu_f16_to_f32_n: every binary16 pattern at 8 offsets, %llu differ from emu_f16_to_f32\n",
           differ ? "FAIL" : "PASS", differ);
    const unsigned long long differ16 = check_to_f16_n();
    printf("%s  emu_f32_to_f16_n: the %u binary32 patterns above, %llu differ from emu_f32_to_f16\n",
           differ16 ? "FAIL" : "PASS", n_patterns32, differ16);
    return wrong != 0 || differ != 0 || differ16 != 0;
}
