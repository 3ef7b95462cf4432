/* cli.c: the options tables' parser, and bad command-line input as one line and exit 2 (cli.h). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounded.h"
#include "check.h"
#include "cli.h"

static const char *program = "conv";

void cli_set_program(const char *name)
{
    program = name;
    check_set_program(name); /* the harness's own errors name the program too */
}

/* "NAME: message[suffix]" on stderr as one line: the message names what the user typed, so it is
 * escaped (bounded.h: no control or non-ASCII byte gets through) and cut at 600 characters. */
static void print_line(const char *fmt, va_list args, const char *suffix)
{
    char message[4096], shown[4 * 600 + 8];
    vsnprintf(message, sizeof message, fmt, args);
    bounded_escape(shown, message, strlen(message), 600, false);
    fflush(stdout);
    fprintf(stderr, "%s: %s%s\n", program, shown, suffix);
}

void cli_error(const char *fmt, ...)
{
    char suffix[96];
    snprintf(suffix, sizeof suffix, " (see %s --help)", program);
    va_list args;
    va_start(args, fmt);
    print_line(fmt, args, suffix);
    va_end(args);
    exit(2);
}

void cli_fail(int status, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    print_line(fmt, args, "");
    va_end(args);
    exit(status);
}

const char *cli_command(int argc, char **argv, const char *usage)
{
    if (argc < 2)
        cli_error("no command given");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        fputs(usage, stdout);
        exit(0);
    }
    return argv[1];
}

int cli_int(const char *flag, const char *text, int min, int max)
{
    char *end;
    errno = 0;
    const long value = strtol(text, &end, 10);
    if (errno || end == text || *end != '\0' || value < INT_MIN || value > INT_MAX)
        cli_error("%s needs an integer, got '%s'", flag, text);
    if (value < min || value > max) {
        if (max == INT_MAX)
            cli_error("%s must be at least %d, got %ld", flag, min, value);
        cli_error("%s must be in %d..%d, got %ld", flag, min, max, value);
    }
    return (int)value;
}

uint64_t cli_seed(const char *flag, const char *text)
{
    char *end;
    errno = 0;
    /* strtoull accepts "-5" (as 2^64 - 5): a seed must not start with a sign */
    const unsigned long long value = strtoull(text, &end, 10);
    if (errno || end == text || *end != '\0' || text[0] == '-' || text[0] == '+')
        cli_error("%s needs a non-negative integer, got '%s'", flag, text);
    return (uint64_t)value;
}

static float cli_float(const cli_option *option, const char *text)
{
    char *end;
    errno = 0;
    const double value = strtod(text, &end);
    if (errno || end == text || *end || !isfinite(value))
        cli_error("%s needs a number, got '%s'", option->flag, text);
    if (value < option->min || (value == option->min && option->min_excluded) || value > option->max)
        cli_error("%s must be in %c%g, %g], got %s", option->flag, option->min_excluded ? '(' : '[', option->min,
                  option->max, text);
    return (float)value;
}

void cli_parse(int argc, char **argv, int first, const cli_option *options, int count, const char *command,
               const char *usage)
{
    for (int at = first; at < argc; at++) {
        const char *flag = argv[at];
        if (strcmp(flag, "--help") == 0 || strcmp(flag, "-h") == 0) {
            fputs(usage, stdout);
            exit(0);
        }
        const cli_option *option = NULL;
        for (int i = 0; i < count && !option; i++)
            if (strcmp(flag, options[i].flag) == 0)
                option = &options[i];
        if (!option)
            cli_error("unknown option '%s'", flag);
        if (command && option->command && strcmp(option->command, command) != 0)
            cli_error("%s is an option of '%s', not of '%s'", flag, option->command, command);
        if (option->kind == CLI_SWITCH) {
            if (option->value)
                *(bool *)option->value = option->set_to;
            continue;
        }
        if (at + 1 >= argc)
            cli_error("%s needs a value", flag);
        const char *text = argv[++at];
        switch (option->kind) {
        case CLI_INT:
            *(int *)option->value = cli_int(flag, text, (int)option->min, (int)option->max);
            if (option->also)
                *option->also = *(int *)option->value;
            break;
        case CLI_SEED:
            *(uint64_t *)option->value = cli_seed(flag, text);
            break;
        case CLI_FLOAT:
            *(float *)option->value = cli_float(option, text);
            break;
        default:
            *(const char **)option->value = text;
            break;
        }
    }
}
