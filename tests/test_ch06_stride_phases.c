/* Chapter 06's stride-phase decomposition (chapters/06_dgrad/stride_phases.h) against the definition:
 * for every input coordinate, the taps its phase lists are exactly the taps that satisfy
 * p * stride = h + pad - r * dil for some integer p (before the 0 <= p < P edge test), with the right p;
 * the phases partition the pixels; and the work saved on the strided named problems is what the chapter says. */
#include <string.h>

#include "stride_phases.h"
#include "suites.h"
#include "test_util.h"

int main(void)
{
    int disagreements = 0, partitions = 0;
    for (int stride = 1; stride <= 4; stride++)
        for (int dil = 1; dil <= 4; dil++)
            for (int taps = 1; taps <= 7; taps++)
                for (int pad = 0; pad <= 4; pad++)
                    for (int extent = 1; extent <= 13; extent++) {
                        int covered = 0;
                        for (int phase = 0; phase < stride; phase++) {
                            int pixels = phase_pixel_count(phase, extent, pad, stride);
                            covered += pixels;
                            for (int i = 0; i < pixels; i++) {
                                int h = phase_pixel(phase, i, pad, stride);
                                partitions += h < 0 || h >= extent || phase_of(h, pad, stride) != phase;
                                bool listed[8] = {false};
                                for (int j = 0; j < phase_tap_count(phase, taps, dil, stride); j++) {
                                    int r = phase_tap(phase, j, taps, dil, stride);
                                    int p = phase_output_coord(h, r, pad, dil, stride);
                                    disagreements += r < 0 || r >= taps || p * stride != h + pad - r * dil;
                                    if (r >= 0 && r < taps)
                                        listed[r] = true;
                                }
                                for (int r = 0; r < taps; r++) {
                                    int numerator = h + pad - r * dil;
                                    bool reaches = ((numerator % stride) + stride) % stride == 0;
                                    disagreements += reaches != listed[r];
                                }
                            }
                        }
                        partitions += covered != extent;
                    }
    EXPECT(disagreements == 0, "%d taps listed by phase disagree with the definition", disagreements);
    EXPECT(partitions == 0, "%d times the phases did not partition the pixels", partitions);
    EXPECT(phase_tap_count(1, 2, 2, 2) == 0, "dilation 2 at stride 2: odd phases get no taps");
    EXPECT(phase_tap_count(0, 3, 1, 4) == 1, "a 3-tap filter at stride 4 reaches phase 0 once");
    EXPECT(phase_tap_count(3, 3, 1, 4) == 0, "and phase 3 never");

    /* the saving on the strided named problems: 3x3 at stride 2 visits 9/4 taps per pixel instead of 9 */
    const char *layers[] = {"resnet50/res3_3x3_s2", "tutorial/ck_dgrad"};
    for (int i = 0; i < 2; i++) {
        conv_problem prob;
        char why[2048];
        EXPECT(suite_find(layers[i], 0, &prob, why, sizeof why), "%s", why);
        double ratio = dgrad_macs_all_taps(&prob) / dgrad_macs_by_phase(&prob);
        printf("%s: every tap %.4g GMAC, by phase %.4g GMAC: %.2fx less work\n", layers[i],
               dgrad_macs_all_taps(&prob) / 1e9, dgrad_macs_by_phase(&prob) / 1e9, ratio);
        EXPECT(ratio > 3.9 && ratio < 4.1, "%s: stride 2, 3x3: about 4x, got %.3f", layers[i], ratio);
    }
    conv_problem unit = problem_make(2, 8, 9, 9, 8, 3, 3);
    unit.pad_h = unit.pad_w = 1;
    char why[256];
    EXPECT(problem_validate(&unit, why, sizeof why), "%s", why);
    EXPECT(dgrad_macs_by_phase(&unit) == dgrad_macs_all_taps(&unit), "stride 1: nothing to save");
    return test_summary("test_ch06_stride_phases");
}
