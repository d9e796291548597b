/* SPDX-License-Identifier: MIT */
/*
 * ev/tool.h - what every evkit program does the same way.  These are the only
 * library functions that print (to stderr); like the rest, they never exit.
 */
#ifndef EV_TOOL_H
#define EV_TOOL_H

#include "ev/stream.h"

/* ------------------------------------------------------------------ */
/* CLI helpers for tools (lib/tool/cli.c).  These print to stderr; they never exit. */

struct ev_cli {
	const char *prog;     /* tool name for messages */
	const char *output;   /* -o FILE, default "-" */
	int quiet;            /* -q */
	int force;            /* -f: write binary to a terminal */
	int progress;         /* progress line enabled (stderr is a tty, not -q) */
	uint64_t progress_last;
};

/* Common long options.  Tools add these rows to their option tables and
 * pass unknown codes to ev_cli_common().  Short letters: h V o q f. */
#define EV_CLI_OPT_HELP 'h'
#define EV_CLI_OPT_VERSION 'V'
#define EV_CLI_COMMON_SHORT "hVo:qf"
#define EV_CLI_COMMON_LONG                                   \
	{ "help", no_argument, NULL, 'h' },                  \
	{ "version", no_argument, NULL, 'V' },               \
	{ "output", required_argument, NULL, 'o' },          \
	{ "quiet", no_argument, NULL, 'q' },                 \
	{ "force", no_argument, NULL, 'f' }

/* Set the program name (basename of argv0 or the given name), ignore
 * nothing: SIGPIPE stays default.  Call first in main(). */
void ev_cli_init(struct ev_cli *cli, const char *prog);
/* Handle a common option.  Returns 1 if handled, 0 if not common,
 * or an exit code + 100 for --help/--version (101 = print help, 100 = done). */
enum { EV_CLI_NOT_MINE = 0, EV_CLI_HANDLED = 1, EV_CLI_WANT_HELP = 2, EV_CLI_DONE = 3 };
int ev_cli_common(struct ev_cli *cli, int opt, const char *arg);
/* Print "prog (evkit) X.Y.Z" and "ev format M.m" to stdout. */
void ev_cli_version(const struct ev_cli *cli);
/* "prog: message" on stderr.  Returns 1 (data/IO error exit code). */
int ev_cli_error(const struct ev_cli *cli, const char *fmt, ...) EV_PRINTF(2, 3);
/* "prog: warning: message" unless quiet. */
void ev_cli_warn(const struct ev_cli *cli, const char *fmt, ...) EV_PRINTF(2, 3);
/* "prog: message" + "Try 'prog --help'." on stderr.  Returns 2. */
int ev_cli_usage_error(const struct ev_cli *cli, const char *fmt, ...) EV_PRINTF(2, 3);
/* After getopt has printed its own message for a bad option: print
 * "Try 'prog --help'." and return 2. */
int ev_cli_try_help(const struct ev_cli *cli);
/* Report a library status for a file:
 *   "prog: FILE: record N: message" (reader errors, with errdetail)
 * Returns the exit code: 0 for EV_ERR_PIPE (quiet), else 1. */
int ev_cli_reader_error(const struct ev_cli *cli, const ev_reader *r, int status);
/* "prog: FILE: strerror/ev_strerror" for open/write failures; quiet for
 * EV_ERR_PIPE.  Returns 1 (or 1 quietly for EV_ERR_PIPE). */
int ev_cli_file_error(const struct ev_cli *cli, const char *file, int status);
/* Refuse to write binary ev to a terminal unless -f.  Returns 0 if fine,
 * else prints the message and returns 1. */
int ev_cli_check_binary_out(const struct ev_cli *cli);
/* Progress line on stderr (only when cli->progress): at most once a second. */
void ev_cli_progress(struct ev_cli *cli, uint64_t records, uint64_t bytes);
void ev_cli_progress_done(struct ev_cli *cli);
/* Install SIGINT/SIGTERM/SIGHUP handlers that remove temp outputs (and
 * call extra(), if not NULL, which must be async-signal-safe) then
 * re-raise the signal. */
void ev_cli_cleanup_on_signal(void (*extra)(void));
/* Final stdout check: flush/close stdout; prints "write error" on failure.
 * Returns status unchanged if fine, else 1. */
int ev_cli_finish(const struct ev_cli *cli, int status);

#endif /* EV_TOOL_H */
