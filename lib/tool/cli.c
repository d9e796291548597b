/* SPDX-License-Identifier: MIT */
/*
 * cli.c - what every evkit program does the same way: common options,
 * message format, exit codes, progress, terminal checks, signal cleanup and
 * the final check of standard output.  These functions print to stderr (that
 * is their job) but, like the rest of the library, never exit.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ev.h"

void ev_cli_init(struct ev_cli *cli, const char *prog)
{
	const char *slash = strrchr(prog, '/');
	memset(cli, 0, sizeof *cli);
	cli->prog = slash ? slash + 1 : prog;
	cli->output = "-";
	cli->progress = isatty(STDERR_FILENO);
	/* Past `ulimit -f`, writes should fail with EFBIG and be reported like
	 * any write error rather than kill the process. */
	signal(SIGXFSZ, SIG_IGN);
	/* Every tool removes its temp outputs when interrupted; a tool with
	 * more to clean calls ev_cli_cleanup_on_signal() again. */
	ev_cli_cleanup_on_signal(NULL);
}

int ev_cli_common(struct ev_cli *cli, int opt, const char *arg)
{
	switch (opt) {
	case 'h':
		return EV_CLI_WANT_HELP;
	case 'V':
		ev_cli_version(cli);
		return EV_CLI_DONE;
	case 'o':
		cli->output = arg;
		return EV_CLI_HANDLED;
	case 'q':
		cli->quiet = 1;
		cli->progress = 0;
		return EV_CLI_HANDLED;
	case 'f':
		cli->force = 1;
		return EV_CLI_HANDLED;
	default:
		return EV_CLI_NOT_MINE;
	}
}

void ev_cli_version(const struct ev_cli *cli)
{
	printf("%s (evkit) %s\nev format %d.%d\n", cli->prog, EV_VERSION_STRING, EV_FORMAT_MAJOR, EV_FORMAT_MINOR);
}

/* Messages quote names, keys and lines from the input: control bytes
 * among them (an ESC sequence in a kernel name, a CR in a path) are shown
 * as \xNN so that they cannot move the cursor, recolour or clear the
 * user's terminal. */
static void put_safe(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if (c < 0x20 || c == 0x7f)
			fprintf(stderr, "\\x%02x", c);
		else
			fputc(c, stderr);
	}
}

static void vmsg(const struct ev_cli *cli, const char *prefix, const char *fmt, va_list ap)
{
	char stackbuf[2048], *buf = stackbuf;
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(stackbuf, sizeof stackbuf, fmt, ap);
	if (n >= (int)sizeof stackbuf && (buf = malloc((size_t)n + 1)) != NULL)
		vsnprintf(buf, (size_t)n + 1, fmt, aq);
	va_end(aq);
	if (!buf) {
		buf = stackbuf;
		n = (int)sizeof stackbuf - 1;
	}
	/* Output already produced should land before the message. */
	fflush(stdout);
	if (cli->progress_last != cli->progress_start)
		fputs("\r\033[K", stderr);
	fprintf(stderr, "%s: %s", cli->prog, prefix);
	put_safe(buf, n > 0 ? (size_t)n : 0);
	fputc('\n', stderr);
	if (buf != stackbuf)
		free(buf);
}

void ev_cli_note(const struct ev_cli *cli, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(cli, "", fmt, ap);
	va_end(ap);
}

int ev_cli_error(const struct ev_cli *cli, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(cli, "", fmt, ap);
	va_end(ap);
	return 1;
}

void ev_cli_warn(const struct ev_cli *cli, const char *fmt, ...)
{
	va_list ap;
	if (cli->quiet)
		return;
	va_start(ap, fmt);
	vmsg(cli, "warning: ", fmt, ap);
	va_end(ap);
}

int ev_cli_usage_error(const struct ev_cli *cli, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(cli, "", fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s --help'.\n", cli->prog);
	return 2;
}

int ev_cli_try_help(const struct ev_cli *cli)
{
	fprintf(stderr, "Try '%s --help'.\n", cli->prog);
	return 2;
}

int ev_cli_reader_error(const struct ev_cli *cli, const ev_reader *r, int status)
{
	if (status == EV_ERR_PIPE)
		return 1;
	const char *d = ev_reader_errdetail(r);
	ev_cli_error(cli, "%s: %s", ev_reader_name(r), d && *d ? d : ev_strerror(status));
	return 1;
}

int ev_cli_file_error(const struct ev_cli *cli, const char *file, int status)
{
	const char *name = !file || strcmp(file, "-") == 0 ? "standard output" : file;
	if (status == EV_ERR_PIPE)
		return 1;
	if (status == EV_ERR_IO && errno)
		ev_cli_error(cli, "%s: %s", name, strerror(errno));
	else
		ev_cli_error(cli, "%s: %s", name, ev_strerror(status));
	return 1;
}

int ev_cli_check_binary_out(const struct ev_cli *cli)
{
	if (cli->force || strcmp(cli->output, "-") != 0 || !isatty(STDOUT_FILENO))
		return 0;
	ev_cli_error(cli, "refusing to write binary ev output to a terminal; use -o FILE or a pipe (-f to force)");
	return 1;
}

void ev_cli_progress(struct ev_cli *cli, uint64_t records, uint64_t bytes)
{
	if (!cli->progress)
		return;
	uint64_t now = ev_now_ns();
	if (cli->progress_start == 0) {
		/* The first call only starts the clock: short runs print nothing. */
		cli->progress_start = cli->progress_last = now;
		return;
	}
	if (now - cli->progress_last < 1000000000u)
		return;
	cli->progress_last = now;
	double secs = (double)(now - cli->progress_start) / 1e9;
	double mib = (double)bytes / (1024.0 * 1024.0);
	double rate = secs > 0 ? mib / secs : 0;
	fprintf(stderr, "\r\033[K%s: %llu records, %.1f MiB, %.1f MiB/s", cli->prog, (unsigned long long)records, mib,
	        rate);
	if (cli->progress_total && bytes <= cli->progress_total && rate > 0) {
		double left = (double)(cli->progress_total - bytes) / (1024.0 * 1024.0) / rate;
		fprintf(stderr, ", %.0f%%, %.0f s left", 100.0 * (double)bytes / (double)cli->progress_total, left);
	}
}

void ev_cli_progress_done(struct ev_cli *cli)
{
	if (cli->progress && cli->progress_last != cli->progress_start)
		fputs("\r\033[K", stderr);
	cli->progress_last = cli->progress_start = 0;
}

static void (*signal_extra)(void);

static void on_signal(int sig)
{
	ev_output_abort_all_signal();
	if (signal_extra)
		signal_extra();
	signal(sig, SIG_DFL);
	raise(sig);
}

void ev_cli_cleanup_on_signal(void (*extra)(void))
{
	struct sigaction sa;
	signal_extra = extra;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

int ev_cli_finish(const struct ev_cli *cli, int status)
{
	/* Delayed write errors on stdout show up only here. */
	if (fflush(stdout) != 0 || ferror(stdout) || (fclose(stdout) != 0 && errno != EBADF)) {
		if (errno == EPIPE)
			return status ? status : 1;
		ev_cli_error(cli, "write error: %s", strerror(errno));
		return 1;
	}
	return status;
}
