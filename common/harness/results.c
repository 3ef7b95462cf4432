/* results.c: reading, merging and writing the benchmark's CSVs. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "cudnn_conv.h"
#include "harness.h"
#include "results.h"

static const char *const gpu_header[] = {
    "chapter", "kernel", "kernel_name", "pass", "layer", "n", "c", "h", "w", "k", "r", "s", "stride", "pad",
    "dilation", "groups", "dtype", "layout", "time_ms", "tflops", "gbps", "cudnn_ms", "cudnn_algo",
    "pct_cudnn", "peak_tflops", "peak_gbps", "pct_roofline", "rel_err", "status", "reps", "gpu", "cuda",
    "cudnn", "source_sha256", "date"};
const results_table results_gpu = {gpu_header, sizeof gpu_header / sizeof gpu_header[0]};

/* The emulator's counts (emu/counters.h; emu/README.md, "Counters" for what each one is): warp
 * instructions by class, global requests and 32-byte sectors, shared requests and wavefronts against
 * the ideal, and the blocks emulated of the grids' (fewer when sampled: the counts are scaled). No date:
 * the digests say which code and emulator counted, and a run that changes nothing leaves the file as
 * it was. */
static const char *const emulator_header[] = {
    "chapter", "kernel", "kernel_name", "pass", "layer", "n", "c", "h", "w", "k", "r", "s", "stride", "pad",
    "dilation", "groups", "dtype", "layout", "flops", "min_bytes", "grid_blocks", "emulated_blocks", "launches",
    "warp_inst", "thread_inst", "inst_tensor", "inst_fp32", "inst_fp64", "inst_fp16", "inst_integer",
    "inst_conversion", "inst_control", "inst_global", "inst_shared", "inst_other_memory", "inst_sync",
    "global_load_requests", "global_load_sectors", "global_load_bytes", "global_store_requests",
    "global_store_sectors", "global_store_bytes", "shared_load_requests", "shared_load_wavefronts",
    "shared_load_ideal", "shared_store_requests", "shared_store_wavefronts", "shared_store_ideal", "barriers",
    "tensor_flops", "status", "source_sha256", "emulator_sha256"};
const results_table results_emulator = {emulator_header, sizeof emulator_header / sizeof emulator_header[0]};

/* The timing model's (emu/README.md, "The timing model"), one file per modeled GPU
 * (bench/results/modeled/<gpu>.csv): modeled time, never a count or a measurement. warp_cycles_<state>:
 * the warp-cycles the modeled SM's warps spent in each state (Nsight Compute's names); issued: the warp
 * instructions it issued, so a state's cycles per issued instruction is their ratio: machine instructions
 * (machine_code "sass") or PTX ones where the machine code was not read ("ptx"); issued_ptx: the PTX
 * instructions they were made of. */
static const char *const modeled_header[] = {
    "chapter", "kernel", "kernel_name", "pass", "layer", "n", "c", "h", "w", "k", "r", "s", "stride", "pad",
    "dilation", "groups", "dtype", "layout", "flops", "gpu", "modeled_us", "modeled_tflops", "modeled_cycles",
    "sm_blocks", "resident_blocks", "issued", "issued_ptx", "machine_code", "warp_cycles_selected", "warp_cycles_not_selected",
    "warp_cycles_wait", "warp_cycles_short_scoreboard", "warp_cycles_long_scoreboard",
    "warp_cycles_math_pipe_throttle", "warp_cycles_mio_throttle", "warp_cycles_lg_throttle",
    "warp_cycles_barrier", "warp_cycles_membar", "status", "source_sha256", "emulator_sha256"};
const results_table results_modeled = {modeled_header, sizeof modeled_header / sizeof modeled_header[0]};

void results_row_init(results_row *row, const results_table *table)
{
    memset(row, 0, sizeof *row);
    row->table = table;
}

static int column_index(const results_table *table, const char *column)
{
    for (int i = 0; i < table->columns; i++)
        if (strcmp(table->header[i], column) == 0)
            return i;
    fail("results: no column named '%s'", column);
}

const char *results_get(const results_row *row, const char *column)
{
    return row->field[column_index(row->table, column)];
}

void results_set(results_row *row, const char *column, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vsnprintf(row->field[column_index(row->table, column)], RESULTS_FIELD, fmt, args);
    va_end(args);
}

bool results_parse_line(const char *line, const results_table *table, results_row *row)
{
    results_row_init(row, table);
    const int columns = table->columns;
    int column = 0;
    size_t length = 0;
    bool quoted = false;
    for (const char *at = line;; at++) {
        char ch = *at;
        if (quoted) {
            if (ch == '\0')
                return false;
            if (ch == '"' && at[1] == '"') {
                ch = '"', at++;
            } else if (ch == '"') {
                quoted = false;
                continue;
            }
        } else if (ch == '"' && length == 0) {
            quoted = true;
            continue;
        } else if (ch == ',' || ch == '\0' || ch == '\n' || ch == '\r') {
            if (column >= columns)
                return false;
            row->field[column++][length] = '\0';
            length = 0;
            if (ch != ',')
                break;
            continue;
        }
        if (column >= columns || length + 1 >= RESULTS_FIELD)
            return false;
        row->field[column][length++] = ch;
    }
    return column == columns;
}

static void write_field(FILE *file, const char *value)
{
    if (!strpbrk(value, ",\"\n")) {
        fputs(value, file);
        return;
    }
    fputc('"', file);
    for (const char *at = value; *at; at++) {
        if (*at == '"')
            fputc('"', file);
        fputc(*at, file);
    }
    fputc('"', file);
}

static void write_row(FILE *file, const char *const *fields, int columns)
{
    for (int i = 0; i < columns; i++) {
        if (i)
            fputc(',', file);
        write_field(file, fields[i]);
    }
    fputc('\n', file);
}

static bool same_key(const results_row *a, const results_row *b)
{
    static const char *const key[] = {"kernel", "pass", "layer"};
    for (int i = 0; i < 3; i++) {
        int at = column_index(a->table, key[i]);
        if (strcmp(a->field[at], b->field[at]) != 0)
            return false;
    }
    return true;
}

bool results_merge(const char *path, const results_row *rows, int count, char *why, size_t why_len)
{
    const results_table *table = rows[0].table;
    results_row *kept = NULL;
    int kept_count = 0, kept_capacity = 0;
    bool ok = false;
    bool *placed = calloc((size_t)count, sizeof *placed); /* the new rows that replaced an old one */
    if (!placed)
        fail("out of host memory merging into %s", path);
    FILE *file = fopen(path, "r");
    if (file) {
        char line[RESULTS_MAX_COLUMNS * RESULTS_FIELD];
        int line_number = 0;
        while (fgets(line, sizeof line, file)) {
            line_number++;
            if (line[0] == '\n' || line[0] == '\0')
                continue;
            results_row row;
            if (!results_parse_line(line, table, &row)) {
                if (line_number == 1)
                    snprintf(why, why_len, "%s: its header is not this version's (%d columns expected); move the "
                             "file away and run again", path, table->columns);
                else
                    snprintf(why, why_len, "%s:%d: malformed line (expected %d fields)", path, line_number,
                             table->columns);
                goto done;
            }
            if (line_number == 1) {
                for (int i = 0; i < table->columns; i++)
                    if (strcmp(row.field[i], table->header[i]) != 0) {
                        snprintf(why, why_len, "%s: header differs from this version's (column %d is '%s', "
                                 "expected '%s'); move the file away", path, i + 1, row.field[i],
                                 table->header[i]);
                        goto done;
                    }
                continue;
            }
            /* a row the new ones replace: the new one takes its place, so a file's order stays its own */
            for (int i = 0; i < count; i++)
                if (!placed[i] && same_key(&row, &rows[i])) {
                    row = rows[i];
                    placed[i] = true;
                    break;
                }
            if (kept_count == kept_capacity) {
                kept_capacity = kept_capacity ? 2 * kept_capacity : 64;
                results_row *grown = realloc(kept, (size_t)kept_capacity * sizeof *kept);
                if (!grown)
                    fail("out of host memory reading %s", path);
                kept = grown;
            }
            kept[kept_count++] = row;
        }
        fclose(file);
        file = NULL;
    } else if (errno != ENOENT) {
        snprintf(why, why_len, "%s: cannot read: %s", path, strerror(errno));
        goto done;
    }

    char temporary[4096];
    snprintf(temporary, sizeof temporary, "%s.tmp", path);
    file = fopen(temporary, "w");
    if (!file) {
        snprintf(why, why_len, "%s: cannot write: %s", temporary, strerror(errno));
        goto done;
    }
    write_row(file, table->header, table->columns);
    const char *fields[RESULTS_MAX_COLUMNS];
    for (int r = 0; r < kept_count + count; r++) {
        if (r >= kept_count && placed[r - kept_count])
            continue; /* written in the place of the row it replaced */
        const results_row *row = r < kept_count ? &kept[r] : &rows[r - kept_count];
        for (int i = 0; i < table->columns; i++)
            fields[i] = row->field[i];
        write_row(file, fields, table->columns);
    }
    bool written = !ferror(file);
    written = fclose(file) == 0 && written;
    file = NULL;
    if (!written || rename(temporary, path) != 0) {
        snprintf(why, why_len, "%s: write failed: %s", path, strerror(errno));
        goto done;
    }
    ok = true;
done:
    if (file)
        fclose(file);
    free(kept);
    free(placed);
    return ok;
}

void results_set_problem(results_row *row, const conv_problem *prob, conv_dtype dtype, conv_layout layout)
{
    const struct { const char *column; int value; } ints[] = {
        {"n", prob->n}, {"c", prob->c}, {"h", prob->h}, {"w", prob->w}, {"k", prob->k}, {"r", prob->r},
        {"s", prob->s}, {"groups", prob->groups}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        results_set(row, ints[i].column, "%d", ints[i].value);
    const struct { const char *column; int a, b; } pairs[] = {
        {"stride", prob->stride_h, prob->stride_w}, {"pad", prob->pad_h, prob->pad_w},
        {"dilation", prob->dil_h, prob->dil_w}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        if (pairs[i].a == pairs[i].b)
            results_set(row, pairs[i].column, "%d", pairs[i].a);
        else
            results_set(row, pairs[i].column, "%dx%d", pairs[i].a, pairs[i].b);
    }
    results_set(row, "dtype", "%s", dtype_name(dtype));
    results_set(row, "layout", "%s", layout_name(layout));
}

void results_set_timing(results_row *row, double median_ms, int reps, double flops, double bytes, double peak_tflops,
                        double peak_gbps)
{
    const double seconds = median_ms * 1e-3, tflops = flops / seconds / 1e12;
    const double roof_by_bytes = peak_gbps * (flops / bytes) / 1000.0; /* GB/s x flop/byte = GFLOP/s */
    results_set(row, "time_ms", "%.6g", median_ms);
    results_set(row, "tflops", "%.6g", tflops);
    results_set(row, "gbps", "%.6g", bytes / seconds / 1e9);
    results_set(row, "pct_roofline", "%.2f", 100.0 * tflops / (roof_by_bytes < peak_tflops ? roof_by_bytes : peak_tflops));
    results_set(row, "reps", "%d", reps);
}

void results_set_kernel(results_row *row, const char *id, const char *name, epilogue_ops epilogue)
{
    results_set(row, "chapter", "%.2s", id);
    if (epilogue_any(epilogue)) {
        char ops[64];
        epilogue_format(epilogue, ops, sizeof ops);
        results_set(row, "kernel", "%s+%s", id, ops);
        results_set(row, "kernel_name", "%s, with %s", name, ops);
    } else {
        results_set(row, "kernel", "%s", id);
        results_set(row, "kernel_name", "%s", name);
    }
}

void results_set_machine(results_row *row, double peak_tflops, double peak_gbps, const char *source_sha256,
                         const char *date)
{
    if (peak_tflops > 0.0)
        results_set(row, "peak_tflops", "%.2f", peak_tflops);
    if (peak_gbps > 0.0)
        results_set(row, "peak_gbps", "%.1f", peak_gbps);
    results_set(row, "gpu", "%s", gpu_name());
    results_set(row, "cuda", "%s", cuda_runtime_version());
    results_set(row, "cudnn", "%s", cudnn_version_string());
    results_set(row, "source_sha256", "%s", source_sha256);
    results_set(row, "date", "%s", date);
}

/* "h100" from "NVIDIA H100 80GB HBM3": the first word that is letters then digits, lowercased. */
static void gpu_short_name(const char *name, char *out, size_t len)
{
    char word[64];
    for (const char *at = name; *at;) {
        size_t n = strcspn(at, " -_");
        if (n > 0 && n < sizeof word) {
            memcpy(word, at, n);
            word[n] = '\0';
            size_t letters = 0;
            while (letters < n && ((word[letters] | 32) >= 'a' && (word[letters] | 32) <= 'z'))
                letters++;
            if (letters > 0 && letters < n && word[letters] >= '0' && word[letters] <= '9') {
                for (size_t i = 0; i < n; i++)
                    word[i] = (char)(word[i] >= 'A' && word[i] <= 'Z' ? word[i] + 32 : word[i]);
                snprintf(out, len, "%s", word);
                return;
            }
        }
        at += n;
        while (*at == ' ' || *at == '-' || *at == '_')
            at++;
    }
    snprintf(out, len, "gpu");
}

void results_path(const char *source_root, const char *name, char *path, size_t len)
{
    snprintf(path, len, "%s/bench/results/%s.csv", source_root, name);
    /* each folder from bench/results down to the file's own */
    for (char *slash = path + strlen(source_root) + strlen("/bench/"); (slash = strchr(slash, '/')); slash++) {
        *slash = '\0';
        const bool made = mkdir(path, 0755) == 0 || errno == EEXIST;
        *slash = '/';
        if (!made)
            fail("cannot create %.*s: %s", (int)(slash - path), path, strerror(errno));
    }
}

void results_default_path(const char *source_root, const char *gpu, char *path, size_t len)
{
    char short_name[64];
    gpu_short_name(gpu, short_name, sizeof short_name);
    results_path(source_root, short_name, path, len);
}
