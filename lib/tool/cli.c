/* SPDX-License-Identifier: MIT */
/*
 * cli.c - what every evkit program does the same way: common options,
 * message format, exit codes, progress, terminal checks, signal cleanup and
 * the final check of standard output.  These functions print to stderr (that
 * is their job) but, like the rest of the library, never exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ev/tool.h"

/* A standard stream the caller closed (`tool <&-`, `>&-`) is filled with
 * /dev/null opened the wrong way round, so that no file the tool opens
 * later takes its number (an input read as "standard input", an output
 * written by printf), while using the stream still fails, with EBADF,
 * naming the stream. */
static void guard_std_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
			continue;
		int nfd = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
		if (nfd >= 0 && nfd != fd) {
			dup2(nfd, fd);
			close(nfd);
		}
	}
}

void ev_cli_init(struct ev_cli *cli, const char *prog)
{
	guard_std_fds();
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
 * user's terminal.  The line goes out in one write, whole, even when
 * several processes of a pipeline share the terminal. */
static void vmsg(const struct ev_cli *cli, const char *prefix, const char *fmt, va_list ap)
{
	char text[2048], *msg = text;
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(text, sizeof text, fmt, ap);
	if (n >= (int)sizeof text && (msg = malloc((size_t)n + 1)) != NULL)
		vsnprintf(msg, (size_t)n + 1, fmt, aq);
	va_end(aq);
	if (!msg) {
		msg = text;
		n = (int)sizeof text - 1;
	}
	size_t len = n > 0 ? (size_t)n : 0, head = strlen(cli->prog) + strlen(prefix) + 2;
	char linebuf[4096], *line = linebuf;
	if (head + 4 * len + 1 > sizeof linebuf && !(line = malloc(head + 4 * len + 1)))
		line = linebuf, len = (sizeof linebuf - head - 1) / 4;
	size_t k = (size_t)snprintf(line, head + 1, "%s: %s", cli->prog, prefix);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)msg[i];
		if (c < 0x20 || c == 0x7f) {
			snprintf(line + k, 5, "\\x%02x", c);
			k += 4;
		} else {
			line[k++] = (char)c;
		}
	}
	line[k++] = '\n';
	/* Output already produced should land before the message. */
	fflush(stdout);
	if (cli->progress_last != cli->progress_start)
		fputs("\r\033[K", stderr);
	fwrite(line, 1, k, stderr);
	if (line != linebuf)
		free(line);
	if (msg != text)
		free(msg);
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

void ev_cli_say(void *cli, enum ev_say_kind kind, const char *text)
{
	const struct ev_cli *c = cli;
	if (kind == EV_SAY_ERROR)
		ev_cli_error(c, "%s", text);
	else if (kind == EV_SAY_WARN)
		ev_cli_warn(c, "%s", text);
	else if (!c->quiet)
		ev_cli_note(c, "%s", text);
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

int ev_cli_order_error(const struct ev_cli *cli, const char *input, uint64_t recno, int64_t ts, int64_t last)
{
	char why[128];
	ev_order_text(why, sizeof why, ts, last);
	return ev_cli_error(cli, "%s: record %" PRIu64 ": %s", input, recno, why);
}

int ev_cli_reader_error(const struct ev_cli *cli, const ev_reader *r, int status)
{
	if (status == EV_ERR_PIPE)
		return 1;
	const char *d = ev_reader_errdetail(r);
	ev_cli_error(cli, "%s: %s", ev_reader_name(r), d && *d ? d : ev_strerror(status));
	return 1;
}

static int file_error(const struct ev_cli *cli, const char *name, int status)
{
	if (status == EV_ERR_PIPE)
		return 1;
	if (status == EV_ERR_IO && errno)
		ev_cli_error(cli, "%s: %s", name, strerror(errno));
	else
		ev_cli_error(cli, "%s: %s", name, ev_strerror(status));
	return 1;
}

int ev_cli_file_error(const struct ev_cli *cli, const char *file, int status)
{
	return file_error(cli, !file || strcmp(file, "-") == 0 ? "standard output" : file, status);
}

const char *ev_cli_input_name(const char *file)
{
	return !file || strcmp(file, "-") == 0 ? "standard input" : file;
}

int ev_cli_input_error(const struct ev_cli *cli, const char *file, int status)
{
	return file_error(cli, ev_cli_input_name(file), status);
}

int ev_cli_close_ev_output(const struct ev_cli *cli, ev_writer **w, ev_output **out)
{
	int rc = *w ? ev_writer_close(*w) : ev_output_close(*out);
	*w = NULL;
	*out = NULL;
	return rc ? ev_cli_file_error(cli, cli->output, rc) : 0;
}

int ev_cli_close_writer(struct ev_cli *cli, ev_writer **w)
{
	ev_cli_progress_done(cli);
	int rc = ev_writer_close(*w);
	*w = NULL;
	return rc ? ev_cli_file_error(cli, cli->output, rc) : 0;
}

/* Does path lead to a terminal?  Any name of one counts (/dev/tty,
 * /dev/stdout, /dev/fd/1, /proc/self/fd/1, /dev/pts/N): a character device
 * is opened, without becoming the controlling terminal and without
 * waiting, and asked. */
static int path_is_tty(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISCHR(st.st_mode))
		return 0;
	int fd = open(path, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0; /* opening the output will say why */
	int tty = isatty(fd);
	close(fd);
	return tty;
}

int ev_cli_check_binary_out(const struct ev_cli *cli)
{
	if (cli->force)
		return 0;
	if (strcmp(cli->output, "-") == 0) {
		if (!isatty(STDOUT_FILENO))
			return 0;
		ev_cli_error(cli, "refusing to write binary ev output to a terminal; use -o FILE or a pipe (-f to force)");
		return 1;
	}
	if (!path_is_tty(cli->output))
		return 0;
	ev_cli_error(cli, "%s: refusing to write binary ev output to a terminal; use -o FILE or a pipe (-f to force)",
	             cli->output);
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

long long ev_cli_created(long long newest)
{
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	if (sde && *sde)
		return strtoll(sde, NULL, 10);
	return newest > 0 ? newest : (long long)time(NULL);
}

long long ev_cli_newest(char *const *files, size_t n)
{
	long long newest = 0;
	struct stat sb;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(files[i], "-") == 0 || stat(files[i], &sb) != 0)
			return -1; /* standard input has no time: now */
		if ((long long)sb.st_mtime > newest)
			newest = (long long)sb.st_mtime;
	}
	return newest;
}
