/* results.h: the benchmark's CSVs, one row per (kernel, pass, layer), written only by the benchmark. A
 * new row replaces the row with the same key instead of adding one. Three tables:
 *   results_gpu       bench/results/<gpu>.csv: measurements on a GPU;
 *   results_emulator  bench/results/emulator.csv: what the emulator counted (no times), with the columns
 *                     that mean the same thing named the same;
 *   results_modeled   bench/results/modeled/<gpu>.csv: what the timing model says a GPU would take. */
#ifndef RESULTS_H
#define RESULTS_H

#include <stdbool.h>
#include <stddef.h>

#include "conv.h"
#include "epilogue.h"

#define RESULTS_MAX_COLUMNS 64
#define RESULTS_FIELD 160

typedef struct {
    const char *const *header;
    int columns;
} results_table;

extern const results_table results_gpu, results_emulator, results_modeled;

typedef struct {
    const results_table *table;
    char field[RESULTS_MAX_COLUMNS][RESULTS_FIELD];
} results_row;

/* An empty row of a table. */
void results_row_init(results_row *row, const results_table *table);

/* Sets a row's field by column name (fails loudly on an unknown name: a programming error). */
/* A column's value in a row ("" until set). */
const char *results_get(const results_row *row, const char *column);
void results_set(results_row *row, const char *column, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The columns every writer fills the same way, so a row means the same whatever wrote it:
 *   results_set_kernel:  chapter, kernel and kernel_name; a run with a fused epilogue is its own row,
 *                        "05i+bn+relu" beside the plain "05i";
 *   results_set_problem: n, c, h, w, k, r, s, stride, pad, dilation ("2", or "2x1" when h and w
 *                        differ), groups, dtype, layout;
 *   results_set_timing:  time_ms, tflops, gbps, pct_roofline (of the roofline at this flops/bytes
 *                        intensity under the two peaks), reps;
 *   results_set_machine: peak_tflops and peak_gbps (when measured, > 0), gpu, cuda, cudnn,
 *                        source_sha256, date. */
void results_set_kernel(results_row *row, const char *id, const char *name, epilogue_ops epilogue);
void results_set_problem(results_row *row, const conv_problem *prob, conv_dtype dtype, conv_layout layout);
void results_set_timing(results_row *row, double median_ms, int reps, double flops, double bytes, double peak_tflops,
                        double peak_gbps);
void results_set_machine(results_row *row, double peak_tflops, double peak_gbps, const char *source_sha256,
                         const char *date);

/* Reads path (which may not exist yet: zero rows), replaces rows whose kernel/pass/layer match a new
 * row (in their place, so the file keeps its order), appends the rest, and writes the file back atomically. The rows are of one table. Returns false
 * with why on any problem (an existing file with another header, a malformed line, an unwritable path). */
bool results_merge(const char *path, const results_row *rows, int count, char *why, size_t why_len);

/* Parses one CSV line into a row of the table (RFC 4180 quoting). Returns false if the field count is
 * wrong. */
bool results_parse_line(const char *line, const results_table *table, results_row *row);

/* Where the benchmark writes by default: SOURCE_ROOT/bench/results/<gpu>.csv, "h100.csv" for an
 * "NVIDIA H100 80GB HBM3" (the folder is created if missing). */
void results_default_path(const char *source_root, const char *gpu, char *path, size_t len);
/* SOURCE_ROOT/bench/results/NAME.csv (its folders are created if missing): "emulator" for the counts,
 * "modeled/h100" for the model's times. */
void results_path(const char *source_root, const char *name, char *path, size_t len);

#endif
