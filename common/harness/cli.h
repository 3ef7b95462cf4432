/* cli.h: bad command-line input, handled one way in every program here (conv, resnet_block,
 * train_cnn): one line on stderr naming the program and the mistake, exit status 2, never a crash. */
#ifndef CLI_H
#define CLI_H

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

#ifdef __cplusplus
}
#endif

#endif
