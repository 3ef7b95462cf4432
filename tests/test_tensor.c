/* Host tensors: fp16 conversion (every one of the 65536 halves, and rounding), seeded random data,
 * NCHW <-> NHWC packing. */
#include <stdlib.h>
#include <string.h>

#include "tensor.h"
#include "test_util.h"

static uint32_t bits_of(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return bits;
}

static float from_bits(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

int main(void)
{
    /* every half survives half -> float -> half exactly (NaNs stay NaN) */
    int round_trip_errors = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = half_to_float((uint16_t)h);
        bool is_nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu);
        if (is_nan)
            round_trip_errors += !isnan(f);
        else
            round_trip_errors += float_to_half(f) != h;
    }
    EXPECT(round_trip_errors == 0, "%d halves did not round-trip", round_trip_errors);

    EXPECT(half_to_float(0x3c00) == 1.0f, "1.0");
    EXPECT(half_to_float(0xc000) == -2.0f, "-2.0");
    EXPECT(half_to_float(0x7bff) == 65504.0f, "largest half");
    EXPECT(half_to_float(0x0001) == ldexpf(1.0f, -24), "smallest subnormal");
    EXPECT(float_to_half(65520.0f) == 0x7c00, "65520 rounds to Inf");
    EXPECT(float_to_half(65519.0f) == 0x7bff, "65519 rounds to 65504");
    EXPECT(float_to_half(1.0f + ldexpf(1.0f, -11)) == 0x3c00, "a tie rounds to even (down)");
    EXPECT(float_to_half(1.0f + 3 * ldexpf(1.0f, -11)) == 0x3c02, "a tie rounds to even (up)");
    EXPECT(float_to_half(1.0f + ldexpf(1.0f, -11) + ldexpf(1.0f, -20)) == 0x3c01, "above the tie rounds up");
    EXPECT(float_to_half(ldexpf(1.0f, -25)) == 0x0000, "half the smallest subnormal: tie to even zero");
    EXPECT(float_to_half(ldexpf(1.5f, -25)) == 0x0001, "above half the smallest subnormal");
    EXPECT(float_to_half(ldexpf(1.0f, -14) - ldexpf(1.0f, -26)) == 0x0400, "rounds up into the normals");
    EXPECT(float_to_half(-0.0f) == 0x8000, "negative zero");
    EXPECT(float_to_half(from_bits(0x7fc00000u)) == 0x7e00, "NaN stays NaN");
    EXPECT(float_to_half(INFINITY) == 0x7c00 && float_to_half(-INFINITY) == 0xfc00, "infinities");
    /* against round-to-nearest computed in double for many random floats in the normal range */
    int rounding_errors = 0;
    float sample[10000];
    fill_uniform(sample, 10000, 3);
    for (int i = 0; i < 10000; i++) {
        float f = sample[i] * 1000.0f;
        float rounded = half_to_float(float_to_half(f));
        double ulp = ldexp(1.0, (int)floor(log2(fabs((double)f))) - 10);
        rounding_errors += fabs((double)rounded - f) > 0.5 * ulp;
    }
    EXPECT(rounding_errors == 0, "%d values rounded to a half more than half an ulp away", rounding_errors);
    (void)bits_of;

    /* seeded uniform data: reproducible, inside [-1, 1), not degenerate */
    float a[4096], b[4096];
    fill_uniform(a, 4096, 42);
    fill_uniform(b, 4096, 42);
    EXPECT(memcmp(a, b, sizeof a) == 0, "same seed, same data");
    fill_uniform(b, 4096, 43);
    EXPECT(memcmp(a, b, sizeof a) != 0, "another seed, other data");
    double mean = 0.0, lowest = 1.0, highest = -1.0;
    for (int i = 0; i < 4096; i++) {
        mean += a[i] / 4096.0;
        lowest = fmin(lowest, a[i]);
        highest = fmax(highest, a[i]);
    }
    EXPECT(lowest >= -1.0 && highest < 1.0 && fabs(mean) < 0.05 && highest - lowest > 1.9, "range %g..%g mean %g",
           lowest, highest, mean);
    float rounded[4096];
    memcpy(rounded, a, sizeof a);
    round_to_dtype(rounded, 4096, DTYPE_F16);
    int not_half = 0;
    for (int i = 0; i < 4096; i++)
        not_half += half_to_float(float_to_half(rounded[i])) != rounded[i];
    EXPECT(not_half == 0, "round_to_dtype(f16) leaves only representable values");

    /* NCHW -> NHWC puts channels innermost; unpack inverts pack for both dtypes */
    int dims[4] = {2, 3, 4, 5};
    float logical[120], back[120];
    for (int i = 0; i < 120; i++)
        logical[i] = (float)i;
    float nhwc[120];
    pack_tensor(logical, dims, LAYOUT_NHWC, DTYPE_F32, nhwc);
    /* element (n=1, c=2, h=3, w=4) is logical index ((1*3+2)*4+3)*5+4 = 119, NHWC index ((1*4+3)*5+4)*3+2 = 119;
     * element (n=0, c=1, h=0, w=0) is logical 20, NHWC 1 */
    EXPECT(nhwc[1] == 20.0f, "NHWC[0][0][0][1] = x[0][1][0][0]: %g", nhwc[1]);
    EXPECT(nhwc[3] == 1.0f, "NHWC[0][0][1][0] = x[0][0][0][1]: %g", nhwc[3]);
    unpack_tensor(nhwc, dims, LAYOUT_NHWC, DTYPE_F32, back);
    EXPECT(memcmp(logical, back, sizeof back) == 0, "NHWC fp32 round trip");
    uint16_t halves[120];
    pack_tensor(logical, dims, LAYOUT_NCHW, DTYPE_F16, halves);
    EXPECT(halves[7] == float_to_half(7.0f), "NCHW f16 keeps the order");
    unpack_tensor(halves, dims, LAYOUT_NCHW, DTYPE_F16, back);
    EXPECT(memcmp(logical, back, sizeof back) == 0, "NCHW fp16 round trip (small integers are exact)");
    return test_summary("test_tensor");
}
