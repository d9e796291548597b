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
	uint64_t progress_start;  /* when the first progress call came */
	uint64_t progress_total;  /* bytes expected in all inputs, 0 unknown */
	uint64_t filter_records;  /* records passed by ev_filter_run */
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
/* "prog: message" on stderr, an informational line (report, -v counts);
 * the caller decides about quiet.  Every message function shows control
 * bytes of the text (from input names) as \xNN. */
void ev_cli_note(const struct ev_cli *cli, const char *fmt, ...) EV_PRINTF(2, 3);
/* "prog: warning: message" unless quiet. */
void ev_cli_warn(const struct ev_cli *cli, const char *fmt, ...) EV_PRINTF(2, 3);
/* A library message (struct ev_say, ctx the struct ev_cli): an error as
 * ev_cli_error, a warning as ev_cli_warn, a note as ev_cli_note unless
 * quiet. */
void ev_cli_say(void *cli, enum ev_say_kind kind, const char *text);
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
/* The same for a file read: "-" is "standard input". */
int ev_cli_input_error(const struct ev_cli *cli, const char *file, int status);
/* Refuse to write binary ev to a terminal unless -f.  Returns 0 if fine,
 * else prints the message and returns 1. */
int ev_cli_check_binary_out(const struct ev_cli *cli);
/* Progress line on stderr (only when cli->progress, i.e. stderr is a
 * terminal and not -q): at most once a second, after the first second;
 * records, bytes, rate, and with cli->progress_total the share done and
 * the time left. */
void ev_cli_progress(struct ev_cli *cli, uint64_t records, uint64_t bytes);
void ev_cli_progress_done(struct ev_cli *cli);
/* Install SIGINT/SIGTERM/SIGHUP handlers that remove temp outputs (and
 * call extra(), if not NULL, which must be async-signal-safe) then
 * re-raise the signal. */
void ev_cli_cleanup_on_signal(void (*extra)(void));
/* Final stdout check: flush/close stdout; prints "write error" on failure.
 * Returns status unchanged if fine, else 1. */
int ev_cli_finish(const struct ev_cli *cli, int status);

/* ------------------------------------------------------------------ */
/* Option words (lib/tool/opt.c).                                      */

/* An option whose value is one of a fixed set of words: *idx receives the
 * index of arg in the NULL-terminated list.  Returns 0, or prints
 * "prog: OPTION: 'arg' is not one of: a, b, c" with the help hint and
 * returns 2 (the usage exit status). */
int ev_cli_word(const struct ev_cli *cli, const char *option, const char *arg, const char *const *words,
                unsigned *idx);
/* A comma list of such words as a bit mask (bit i for words[i]); "all"
 * sets every bit.  Returns 0, or prints as above and returns 2. */
int ev_cli_word_list(const struct ev_cli *cli, const char *option, const char *arg, const char *const *words,
                     unsigned *mask);
/* Refuse an option that the chosen subcommand does not read:
 * "prog SUB: --opt does not apply (it is for: a, b)".  Returns 2. */
int ev_cli_not_for(const struct ev_cli *cli, const char *sub, const char *option, const char *for_subs);

/* ------------------------------------------------------------------ */
/* The stream-filter driver (lib/tool/filter.c): the input loop of     */
/* every tool that reads ev streams, written once.                     */

/* Callbacks return EV_OK to go on, a negative ev status (the driver
 * reports it as "FILE: record N: message"), EV_FILTER_STOP to stop reading
 * quietly, or EV_FILTER_REPORTED when the callback has already printed
 * its own error. */
enum { EV_FILTER_STOP = 1, EV_FILTER_REPORTED = 2 };
enum ev_filter_flags {
	EV_FILTER_ORDER = 1u << 0,     /* records must come in time order (FORMAT.md §7) */
	EV_FILTER_SKIP_TEXT = 1u << 1, /* metadata lines are not passed to `text` */
	EV_FILTER_LAZY = 1u << 2,      /* ev_reader_lazy_decode: only type, flags, name, sig */
	EV_FILTER_RAW_TEXT = 1u << 3,  /* ev_reader_raw_text: #ev/#str/#end lines too, verbatim */
};
struct ev_filter {
	unsigned flags;
	/* At the start of input i (after it is opened), may be NULL. */
	int (*begin)(void *ctx, ev_reader *r, size_t i);
	/* Each metadata line other than #ev/#str/#end, may be NULL. */
	int (*text)(void *ctx, ev_reader *r, const char *line, size_t len);
	/* Each record. */
	int (*rec)(void *ctx, ev_reader *r, struct ev_rec *rec);
	/* After the last record of input i, may be NULL. */
	int (*end)(void *ctx, ev_reader *r, size_t i);
	/* May be NULL.  For filters that pass records on unchanged: runs of
	 * records checked as ev_read would and handed over as their lines
	 * (ev_read_run, ev_write_run); `rec` still gets the records that do
	 * not come in a run.  Not with EV_FILTER_ORDER. */
	int (*run)(void *ctx, ev_reader *r, const char *span, size_t len, uint64_t n);
};
/* Read inputs[0..n) ("-" for n == 0) in turn with one shared strtab and
 * meta store (either may be NULL: the reader's own), showing progress on a
 * terminal, checking order when asked, calling the callbacks, and
 * reporting every error in the tool's format.  Returns the exit status:
 * 0, or 1 after an error (quietly for a reader that went away). */
int ev_filter_run(struct ev_cli *cli, char *const *inputs, size_t n, ev_strtab *st, ev_meta *meta,
                  const struct ev_filter *f, void *ctx);
/* Records the driver has passed to `rec` so far, over all inputs. */
uint64_t ev_filter_records(const struct ev_cli *cli);

#endif /* EV_TOOL_H */
