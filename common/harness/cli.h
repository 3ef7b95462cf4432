/* cli.h: the command line, read one way in every program here (conv, resnet_block, train_cnn): each
 * declares its options as a table (cli_option) and cli_parse() reads them; bad input is one line on
 * stderr naming the program and the mistake, exit status 2, never a crash. */
#ifndef CLI_H
#define CLI_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The name the messages start with; call once at the top of main(). */
void cli_set_program(const char *name);

/* "NAME: <message> (see NAME --help)" on stderr, then exit 2. The message is one line whatever the
 * arguments hold: control and non-ASCII bytes are escaped (bounded.h), and it is cut at 600 characters. */
void cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((noreturn, format(printf, 1, 2)))
#endif
    ;

/* "NAME: <message>" on stderr, one line (escaped and cut like cli_error's), then exit status. */
void cli_fail(int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((noreturn, format(printf, 2, 3)))
#endif
    ;

/* The command, argv[1], of a program run as `NAME COMMAND [options]`: cli_error() when there is none;
 * --help, -h or help print usage to stdout and exit 0. */
const char *cli_command(int argc, char **argv, const char *usage);

/* A flag's value as an int in [min, max] (all of it, no trailing characters), or cli_error(). */
int cli_int(const char *flag, const char *text, int min, int max);

/* A flag's value as a non-negative 64-bit integer (a seed), or cli_error(). */
uint64_t cli_seed(const char *flag, const char *text);

/* One option of a program's table: the one parser every program here uses (cli_parse()). */
typedef enum {
    CLI_SWITCH, /* takes no value: stores .set_to in a bool (value NULL: accepted, read elsewhere) */
    CLI_INT,    /* an int in [.min, .max], also stored in .also when that is set (--pad: pad_h and pad_w) */
    CLI_SEED,   /* a non-negative 64-bit integer */
    CLI_FLOAT,  /* a finite number in [.min, .max], or (.min, .max] with .min_excluded */
    CLI_TEXT,   /* the value as given */
} cli_kind;

typedef struct {
    const char *flag;     /* "--steps" */
    cli_kind kind;
    void *value;          /* bool *, int *, uint64_t *, float * or const char ** by kind */
    double min, max;      /* CLI_INT and CLI_FLOAT */
    bool set_to;          /* CLI_SWITCH: --no-verify stores false */
    bool min_excluded;    /* CLI_FLOAT */
    int *also;            /* CLI_INT: a second destination */
    const char *command;  /* the one command it belongs to ("bench"); NULL: every command */
} cli_option;

/* A table row's fields by kind, to write between the row's braces; .also, .min_excluded and .command
 * follow when needed: {CLI_INTEGER("--pad", &pad_h, 0, INT_MAX), .also = &pad_w}. */
#define CLI_SETS(name, flag_bool, to) .flag = (name), .kind = CLI_SWITCH, .value = (flag_bool), .set_to = (to)
#define CLI_READ_ELSEWHERE(name) .flag = (name), .kind = CLI_SWITCH, .value = NULL
#define CLI_INTEGER(name, destination, lowest, highest) \
    .flag = (name), .kind = CLI_INT, .value = (destination), .min = (lowest), .max = (highest)
#define CLI_SEED_INTO(name, destination) .flag = (name), .kind = CLI_SEED, .value = (destination)
#define CLI_NUMBER(name, destination, lowest, highest) \
    .flag = (name), .kind = CLI_FLOAT, .value = (destination), .min = (lowest), .max = (highest)
#define CLI_STRING(name, destination) .flag = (name), .kind = CLI_TEXT, .value = (destination)

/* Reads argv[first..] against the table: --help or -h prints usage and exits 0; an unknown option, a
 * missing or malformed value, a value out of range, or an option of another command is cli_error().
 * command is argv[1] for programs with commands, NULL for one without. */
void cli_parse(int argc, char **argv, int first, const cli_option *options, int count, const char *command,
               const char *usage);

#ifdef __cplusplus
}
#endif

#endif
