/* The results CSV: fields with commas and quotes survive a round trip, a new measurement replaces the
 * row of the same kernel/pass/layer, other rows stay, and a foreign header is refused. The shared
 * column writers describe a problem and a timing the same way for every program that writes rows. */
#include <stdio.h>
#include <string.h>

#include "results.h"
#include "test_util.h"

static results_row make_row(const char *kernel, const char *layer, const char *time_ms)
{
    results_row row;
    results_row_init(&row, &results_gpu);
    results_set(&row, "chapter", "%.2s", kernel);
    results_set(&row, "kernel", "%s", kernel);
    results_set(&row, "kernel_name", "naive, \"uncoalesced\"");
    results_set(&row, "pass", "fprop");
    results_set(&row, "layer", "%s", layer);
    results_set(&row, "time_ms", "%s", time_ms);
    results_set(&row, "status", "pass");
    return row;
}

static const char *field(const results_row *row, const char *column)
{
    for (int i = 0; i < row->table->columns; i++)
        if (strcmp(row->table->header[i], column) == 0)
            return row->field[i];
    return "(no such column)";
}

static void test_column_writers(void)
{
    conv_problem prob = problem_make(8, 64, 56, 56, 128, 3, 3);
    prob.stride_h = 2;
    prob.pad_h = prob.pad_w = 1;
    results_row row;
    results_row_init(&row, &results_gpu);
    results_set_problem(&row, &prob, DTYPE_F16, LAYOUT_NHWC);
    EXPECT(strcmp(field(&row, "c"), "64") == 0 && strcmp(field(&row, "k"), "128") == 0, "c, k");
    EXPECT(strcmp(field(&row, "stride"), "2x1") == 0, "stride h != w: '%s'", field(&row, "stride"));
    EXPECT(strcmp(field(&row, "pad"), "1") == 0, "pad h == w: '%s'", field(&row, "pad"));
    EXPECT(strcmp(field(&row, "dtype"), "f16") == 0 && strcmp(field(&row, "layout"), "NHWC") == 0, "%s %s",
           field(&row, "dtype"), field(&row, "layout"));

    /* 2 TFLOP and 1 GB in 10 ms: 200 TFLOP/s, 100 GB/s. Intensity 2000 flop/byte under a 3000 GB/s slope
     * gives a 6000 TFLOP/s roof, so the 400 TFLOP/s compute peak binds: 50% of the roofline. */
    results_set_timing(&row, 10.0, 20, 2e12, 1e9, 400.0, 3000.0);
    EXPECT(strcmp(field(&row, "tflops"), "200") == 0, "tflops '%s'", field(&row, "tflops"));
    EXPECT(strcmp(field(&row, "gbps"), "100") == 0, "gbps '%s'", field(&row, "gbps"));
    EXPECT(strcmp(field(&row, "pct_roofline"), "50.00") == 0, "pct_roofline '%s'", field(&row, "pct_roofline"));
    /* 1 GFLOP over 1 GB (1 flop/byte): the 3000 GB/s slope binds at 3 TFLOP/s; 1 GFLOP in 1 ms is 1. */
    results_set_timing(&row, 1.0, 20, 1e9, 1e9, 400.0, 3000.0);
    EXPECT(strcmp(field(&row, "pct_roofline"), "33.33") == 0, "bandwidth-bound '%s'", field(&row, "pct_roofline"));
}

static int count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    int lines = 0;
    for (int ch; f && (ch = fgetc(f)) != EOF;)
        lines += ch == '\n';
    if (f)
        fclose(f);
    return lines;
}

static results_row read_row(const char *path, int index)
{
    FILE *f = fopen(path, "r");
    char line[RESULTS_MAX_COLUMNS * RESULTS_FIELD];
    results_row row;
    results_row_init(&row, &results_gpu);
    for (int i = 0; f && i <= index + 1 && fgets(line, sizeof line, f); i++)
        if (i == index + 1)
            results_parse_line(line, &results_gpu, &row);
    if (f)
        fclose(f);
    return row;
}

int main(int argc, char **argv)
{
    char path[4096], why[4400];
    snprintf(path, sizeof path, "%s/results_test.csv", argc > 1 ? argv[1] : ".");
    remove(path);
    test_column_writers();

    results_row first[2] = {make_row("02a", "resnet50/res2_3x3", "1.5"), make_row("02b", "resnet50/res2_3x3", "0.9")};
    EXPECT(results_merge(path, first, 2, why, sizeof why), "%s", why);
    EXPECT(count_lines(path) == 3, "header + 2 rows, got %d lines", count_lines(path));
    results_row back = read_row(path, 0);
    EXPECT(strcmp(back.field[2], "naive, \"uncoalesced\"") == 0, "quoted field round-trips: '%s'", back.field[2]);
    EXPECT(strcmp(back.field[1], "02a") == 0 && strcmp(back.field[18], "1.5") == 0, "fields in place");

    results_row update = make_row("02a", "resnet50/res2_3x3", "1.25");
    results_row other = make_row("02a", "resnet50/res4_3x3", "2.0");
    results_row both[2] = {update, other};
    EXPECT(results_merge(path, both, 2, why, sizeof why), "%s", why);
    EXPECT(count_lines(path) == 4, "one replaced, one added: %d lines", count_lines(path));
    EXPECT(strcmp(read_row(path, 0).field[1], "02a") == 0 && strcmp(read_row(path, 0).field[18], "1.25") == 0,
           "the replacement takes the replaced row's place, with the new time");
    EXPECT(strcmp(read_row(path, 1).field[1], "02b") == 0, "the untouched row stays where it was");
    EXPECT(strcmp(read_row(path, 2).field[4], "resnet50/res4_3x3") == 0, "new layer appended");

    EXPECT(!results_parse_line("a,b,c\n", &results_gpu, &back), "too few fields is malformed");
    FILE *f = fopen(path, "w");
    fputs("kernel,time\n02a,1.0\n", f);
    fclose(f);
    EXPECT(!results_merge(path, first, 1, why, sizeof why) && strstr(why, "header is not this version's"),
           "foreign file: %s", why);
    f = fopen(path, "w");
    for (int i = 0; i < results_gpu.columns; i++)
        fprintf(f, "%s%s", i ? "," : "", results_gpu.header[i]);
    fputs("\n02a,1.0\n", f);
    fclose(f);
    EXPECT(!results_merge(path, first, 1, why, sizeof why) && strstr(why, ":2: malformed line"), "short row: %s", why);
    snprintf(path, sizeof path, "%s/no_such_dir/results.csv", argc > 1 ? argv[1] : ".");
    EXPECT(!results_merge(path, first, 1, why, sizeof why) && strstr(why, "cannot write"), "unwritable: %s", why);
    return test_summary("test_results");
}
