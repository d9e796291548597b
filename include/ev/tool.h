/* SPDX-License-Identifier: MIT */
/*
 * ev/tool.h - what every evkit program does the same way.  These are the only
 * library functions that print (to stderr); like the rest, they never exit.
 */
#ifndef EV_TOOL_H
#define EV_TOOL_H

#include <getopt.h>
#include <stdio.h>

#include "ev/analysis.h"
#include "ev/goal.h"
#include "ev/kineto.h"
#include "ev/stream.h"

/* ------------------------------------------------------------------ */
/* CLI helpers for tools (lib/tool/cli.c, getopt.c).  These print to stderr;
 * they never exit. */

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

/* The common options, in every tool: -h/--help, -V/--version, -o/--output,
 * -q/--quiet, -f/--force.  A tool's option table starts with
 * EV_CLI_COMMON_LONG; ev_cli_getopt adds EV_CLI_COMMON_SHORT to the tool's
 * letters. */
#define EV_CLI_OPT_HELP 'h'
#define EV_CLI_OPT_VERSION 'V'
#define EV_CLI_COMMON_SHORT "hVo:qf"
#define EV_CLI_COMMON_LONG                                   \
	{ "help", no_argument, NULL, 'h' },                  \
	{ "version", no_argument, NULL, 'V' },               \
	{ "output", required_argument, NULL, 'o' },          \
	{ "quiet", no_argument, NULL, 'q' },                 \
	{ "force", no_argument, NULL, 'f' }

/* --help text every tool prints alike, written once so that the tools
 * (and their docs) cannot drift apart: the -h and -V lines of the options,
 * and the exit statuses, WHY saying what makes a data or I/O error. */
#define EV_CLI_HELP_HV                                         \
	"  -h, --help             show this help and exit\n"     \
	"  -V, --version          show version and exit\n"
#define EV_CLI_HELP_EXIT(why)                                  \
	"Exit status:\n"                                        \
	"  0  success\n"                                        \
	"  1  data or I/O error (" why ")\n"                    \
	"  2  usage error\n"

/* Set the program name (basename of argv0 or the given name), fill closed
 * standard streams, make `ulimit -f` a write error rather than a signal,
 * and remove temp outputs on SIGINT, SIGTERM and SIGHUP; SIGPIPE stays
 * default.  Call first in main(). */
void ev_cli_init(struct ev_cli *cli, const char *prog);

/* Options of a tool, for ev_cli_getopt.  Long-only options take codes
 * from 256 up (an enum of names), so that they never meet a letter. */
struct ev_cli_opts {
	/* The tool's own letters in getopt's syntax, "" for none; a leading
	 * '+' ends the options at the first operand (a subcommand's name). */
	const char *shortopts;
	/* The tool's table: EV_CLI_COMMON_LONG first, a zero row last. */
	const struct option *longopts;
	/* Each option that is not a common one, with getopt's code and
	 * argument (NULL for none).  Returns 0 to go on, or the exit status
	 * to stop with (ev_cli_usage_error's 2, 1 when out of memory).  NULL
	 * when the tool has no options of its own. */
	int (*opt)(void *ctx, int code, const char *arg);
	/* The --help text, printed to f. */
	void (*usage)(FILE *f);
};
/* ev_cli_getopt's "parse went fine: run the tool". */
enum { EV_CLI_RUN = -1 };
/* Every tool's option loop: getopt_long over argv with the tool's table,
 * options after operands accepted (argv is permuted, as GNU tools do) unless
 * shortopts starts with '+'.  The common options are handled here: --help
 * prints the usage to stdout, --version the version, -o, -q and -f set cli;
 * the rest go to opts->opt(ctx, ...).  Options are taken in order and the
 * first that ends the parse wins (`--help --bogus` prints the help).
 * Returns EV_CLI_RUN with *first the index of the first operand in argv, or
 * the exit status: 0 after --help or --version, 2 after getopt's own
 * message for an unknown option or a missing argument, or what opt
 * returned.  Either way main ends with ev_cli_finish(cli, status), which
 * flushes what --help printed.  Parsing starts afresh at argv[1] on every
 * call, so a tool with subcommands calls it again on the words after the
 * subcommand's name (argv + *first). */
int ev_cli_getopt(struct ev_cli *cli, int argc, char **argv, const struct ev_cli_opts *opts, void *ctx, int *first);

/* One common option for a loop of the tool's own (ev_cli_getopt's is
 * built on it).  Returns EV_CLI_HANDLED (-o, -q, -f), EV_CLI_WANT_HELP
 * (--help: the caller prints the usage), EV_CLI_DONE (--version, printed)
 * or EV_CLI_NOT_MINE for any other code. */
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
/* A record out of time order: "prog: INPUT: record N: " and ev_order_text's
 * words on stderr.  Returns 1, the data error exit status. */
int ev_cli_order_error(const struct ev_cli *cli, const char *input, uint64_t recno, int64_t ts, int64_t last);
/* Report a library status for a file:
 *   "prog: FILE: record N: message" (reader errors, with errdetail)
 * Returns the exit code 1 (quietly for EV_ERR_PIPE). */
int ev_cli_reader_error(const struct ev_cli *cli, const ev_reader *r, int status);
/* "prog: FILE: strerror/ev_strerror" for open/write failures; quiet for
 * EV_ERR_PIPE.  Returns 1 (or 1 quietly for EV_ERR_PIPE). */
int ev_cli_file_error(const struct ev_cli *cli, const char *file, int status);
/* The same for a file read: "-" is "standard input". */
int ev_cli_input_error(const struct ev_cli *cli, const char *file, int status);
/* An input as messages name it: "-" (or NULL) is "standard input". */
const char *ev_cli_input_name(const char *file);
/* Close the tool's ev output (-o): the writer when there is one, else the
 * byte output (one of them non-NULL); both are cleared.  Returns 0, or 1
 * with the error said as ev_cli_file_error does. */
int ev_cli_close_ev_output(const struct ev_cli *cli, ev_writer **w, ev_output **out);
/* Refuse to write binary ev to a terminal unless -f: standard output, or
 * -o naming a terminal by any path (/dev/tty, /dev/stdout, /proc/self/fd/1).
 * Returns 0 if fine, else prints the message and returns 1. */
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
/* The lookup alone: the index of arg in words, or -1.  For an option whose
 * message for a bad word is the tool's own (one that tests hold to, or
 * that says more than the list). */
int ev_cli_word_find(const char *const *words, const char *arg);
/* Refuse an option that the chosen subcommand does not read:
 * "prog SUB: --opt does not apply (it is for: a, b)".  Returns 2. */
int ev_cli_not_for(const struct ev_cli *cli, const char *sub, const char *option, const char *for_subs);

/* The JSON converters' checks (lib/tool/conv.c), one rule for flex2ev and
 * kineto2ev.  -S/--buffer-size: a size of at least 1M; --max-object: 1K
 * to 2G; the inputs: at least one, at most 65535 (a source number is 16
 * bits), only one with --rank (rank >= 0).  Each returns 0, or prints the
 * usage error and returns 2. */
int ev_cli_buffer_size(const struct ev_cli *cli, const char *arg, uint64_t *v);
int ev_cli_max_object(const struct ev_cli *cli, const char *arg, uint64_t *v);
int ev_cli_converter_inputs(const struct ev_cli *cli, int ninputs, int64_t rank);
/* --rules: a kernel class rule set (ev_rules_parse), in every tool that
 * classifies; 0, or the usage error said and 2. */
int ev_cli_rules(const struct ev_cli *cli, const char *arg, enum ev_rules *r);

/* Kineto JSON inputs read as kineto2ev reads them (lib/tool/kineto_in.c),
 * by kineto2ev and by ev-stats report, which converts them in its own
 * process.  Each returns 0, or says the error and returns 1. */
/* 1 when path's first bytes (inflated if gzip) look like JSON
 * (ev_looks_json), not an ev stream ("-" is never looked at). */
int ev_cli_is_json(const char *path);
/* Input i (its path in ev_kineto_file(k, i)): read, or the error said. */
int ev_cli_kineto_read(const struct ev_cli *cli, ev_kineto *k, int i);
/* Its rank, when distributedInfo gave none: from the path, else rank
 * (--rank, one input of n), else i, said. */
int ev_cli_kineto_rank(const struct ev_cli *cli, ev_kineto *k, int i, int n, int64_t rank);
/* Two inputs of one rank: refused. */
int ev_cli_kineto_unique(const struct ev_cli *cli, ev_kineto *k, int n);
/* After the conversion: per input what it clamped, dropped or could not
 * link (warnings), with verbose its counts (a note); the overruns. */
void ev_cli_kineto_say(const struct ev_cli *cli, const ev_kineto *k, int n, const struct ev_kineto_opts *ko,
                       int verbose);
/* A workbook's creation time (ev_xlsx_open): $SOURCE_DATE_EPOCH, else
 * newest (> 0: the inputs' newest modification time, ev_cli_newest),
 * else now, so that the same inputs give the same bytes. */
long long ev_cli_created(long long newest);
/* The newest modification time of files, -1 when one is standard input
 * (or cannot be looked at). */
long long ev_cli_newest(char *const *files, size_t n);
/* Close the tool's writer (progress ended first); *w cleared.  0, or 1
 * with the error said as ev_cli_file_error does. */
int ev_cli_close_writer(struct ev_cli *cli, ev_writer **w);

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
/* Note every input (ev_files_note_input_path, "-" standard input) before
 * the first is read, so that an input that is also the output (`-o x x`,
 * `tool a x >> x`) is refused before anything is written; ev_filter_run
 * does it, a tool with its own input loop calls it first.  Returns 0, or
 * prints "prog: FILE: message" and returns 1. */
int ev_cli_note_inputs(const struct ev_cli *cli, char *const *inputs, size_t n);
/* Records the driver has passed to `rec` so far, over all inputs. */
uint64_t ev_filter_records(const struct ev_cli *cli);

/* ------------------------------------------------------------------ */
/* GOAL schedules (lib/tool/goal.c): ev2goal's schedule options and its */
/* --stats report, shared with coll-expand --format=goal.               */

struct ev_cli_goal {
	struct ev_goal_opts g;
	int stats;              /* -s/--stats */
	const char *stats_file; /* its FILE, NULL or "-": standard error */
	const char *tmpdir;     /* -T/--tmpdir */
	int given;              /* some option of EV_CLI_GOAL_LONG was given */
};
/* Codes of the long-only options, clear of every tool's own (256 up). */
enum {
	EV_CLI_GOAL_NUM_RANKS = 0x1000, EV_CLI_GOAL_CPU, EV_CLI_GOAL_NIC, EV_CLI_GOAL_NO_CHECK,
	EV_CLI_GOAL_KEEP_SYNC
};
/* The letters (add to the tool's own) and the rows of the option table.
 * --ranks-per-node (the node of a rank for --nic=rail) is the tool's own:
 * coll-expand has it already, and ev2goal sets g.ranks_per_node. */
#define EV_CLI_GOAL_SHORT "bs::w:T:"
#define EV_CLI_GOAL_LONG                                                   	{ "binary", no_argument, NULL, 'b' },                              	{ "num-ranks", required_argument, NULL, EV_CLI_GOAL_NUM_RANKS },   	{ "cpu", required_argument, NULL, EV_CLI_GOAL_CPU },               	{ "nic", required_argument, NULL, EV_CLI_GOAL_NIC },               	{ "no-check", no_argument, NULL, EV_CLI_GOAL_NO_CHECK },           	{ "keep-sync", no_argument, NULL, EV_CLI_GOAL_KEEP_SYNC },         	{ "stats", optional_argument, NULL, 's' },                         	{ "window", required_argument, NULL, 'w' },                        	{ "tmpdir", required_argument, NULL, 'T' }
/* Defaults (ev_goal_opts_init), nothing given. */
void ev_cli_goal_init(struct ev_cli_goal *o);
/* One option: returns 1 when code is one of EV_CLI_GOAL_LONG (*status 0,
 * or 2 after the usage error is said), 0 when it is not. */
int ev_cli_goal_opt(const struct ev_cli *cli, struct ev_cli_goal *o, int code, const char *arg, int *status);
/* Before ev_goal_new: the spool's folder (--tmpdir, $TMPDIR, /tmp), the
 * metadata for --nic=rail, the line estimate when --stats wants it. */
void ev_cli_goal_setup(struct ev_cli_goal *o, const ev_meta *meta);
/* Say a library failure; returns the exit status (1).  output names the
 * file written when the failure is in it. */
int ev_cli_goal_error(const struct ev_cli *cli, const struct ev_goal_error *e, const char *output);
/* The finished schedule to -o (via a temporary name); 0 or 1, said. */
int ev_cli_goal_write(const struct ev_cli *cli, ev_goal *g);
/* --stats, when given: the summary to its FILE or standard error; 0 or 1. */
int ev_cli_goal_stats(const struct ev_cli *cli, const struct ev_cli_goal *o, const ev_goal *g);

#endif /* EV_TOOL_H */
