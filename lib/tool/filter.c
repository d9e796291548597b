/* SPDX-License-Identifier: MIT */
/*
 * filter.c - the input loop of every tool that reads ev streams, written
 * once so that no tool can get it wrong: open each input (stdin for none),
 * report open errors naming the file, read records and metadata, check time
 * order (ev_cli_order_error's message), show progress on a terminal, map
 * every status to the tool's message format and exit status.
 * Temp outputs are removed on signals by ev_cli_init's handler.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ev/tool.h"

/* Bytes of all inputs that are regular files, for the progress line's
 * share and time left (0 when any size is unknown). */
static uint64_t total_size(char *const *inputs, size_t n)
{
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (strcmp(inputs[i], "-") == 0 || stat(inputs[i], &st) != 0 || !S_ISREG(st.st_mode))
			return 0;
		total += (uint64_t)st.st_size;
	}
	return total;
}

/* Report a callback's or the reader's status; returns the exit status. */
static int report(struct ev_cli *cli, ev_reader *r, int rc)
{
	if (rc == EV_FILTER_REPORTED)
		return 1;
	if (rc == EV_ERR_PIPE)
		return 1; /* the reader went away: quietly */
	if (ev_reader_errdetail(r) && *ev_reader_errdetail(r))
		return ev_cli_reader_error(cli, r, rc);
	if (ev_reader_recno(r))
		return ev_cli_error(cli, "%s: record %" PRIu64 ": %s", ev_reader_name(r), ev_reader_recno(r),
		                    ev_strerror(rc));
	return ev_cli_error(cli, "%s: %s", ev_reader_name(r), ev_strerror(rc));
}

static int run_one(struct ev_cli *cli, ev_reader *r, size_t idx, ev_input *in, uint64_t *done_bytes,
                   const struct ev_filter *f, void *ctx)
{
	struct ev_order order = { 0, 0, 0 };
	struct ev_rec rec;
	int rc;
	if (f->flags & EV_FILTER_SKIP_TEXT || !f->text)
		ev_reader_skip_text(r, 1);
	if (f->flags & EV_FILTER_LAZY)
		ev_reader_lazy_decode(r, 1);
	if (f->flags & EV_FILTER_RAW_TEXT)
		ev_reader_raw_text(r, 1);
	if (f->begin && (rc = f->begin(ctx, r, idx)) != EV_OK)
		return rc == EV_FILTER_STOP ? 0 : report(cli, r, rc);
	/* Runs: as many records as the progress line allows between two looks. */
	int runs = f->run && !(f->flags & EV_FILTER_ORDER);
	for (;;) {
		uint64_t n = 0;
		const char *span = NULL;
		size_t span_len = 0;
		if (runs) {
			size_t max = 0x10000 - (size_t)(cli->filter_records & 0xffff);
			rc = ev_read_run(r, &rec, max, &span, &span_len, &n);
		} else {
			rc = ev_read(r, &rec);
		}
		if (n) {
			uint64_t before = cli->filter_records;
			cli->filter_records += n;
			if ((rc = f->run(ctx, r, span, span_len, n)) != EV_OK)
				return rc == EV_FILTER_STOP ? 0 : report(cli, r, rc);
			if ((before >> 16) != (cli->filter_records >> 16))
				ev_cli_progress(cli, cli->filter_records, *done_bytes + ev_input_offset(in));
			continue;
		}
		if (rc == EV_EOF)
			break;
		if (rc < 0)
			return report(cli, r, rc);
		if (rc == EV_TEXT) {
			const char *line;
			size_t len;
			ev_reader_text(r, &line, &len);
			if ((rc = f->text(ctx, r, line, len)) != EV_OK)
				return rc == EV_FILTER_STOP ? 0 : report(cli, r, rc);
			continue;
		}
		if ((f->flags & EV_FILTER_ORDER) && ev_order_check(&order, rec.ts) != EV_OK)
			return ev_cli_order_error(cli, ev_reader_name(r), ev_reader_recno(r), rec.ts, order.last_ts);
		cli->filter_records++;
		if ((rc = f->rec(ctx, r, &rec)) != EV_OK)
			return rc == EV_FILTER_STOP ? 0 : report(cli, r, rc);
		if ((cli->filter_records & 0xffff) == 0)
			ev_cli_progress(cli, cli->filter_records, *done_bytes + ev_input_offset(in));
	}
	*done_bytes += ev_input_offset(in);
	if (f->end && (rc = f->end(ctx, r, idx)) != EV_OK)
		return rc == EV_FILTER_STOP ? 0 : report(cli, r, rc);
	return 0;
}

int ev_cli_note_inputs(const struct ev_cli *cli, char *const *inputs, size_t n)
{
	/* Standard output, when it is the output and a regular file, is
	 * compared here too: the message then names the input, whichever of
	 * the two the tool opens first. */
	struct stat out, in;
	int to_file = strcmp(cli->output, "-") == 0 && fstat(STDOUT_FILENO, &out) == 0 && S_ISREG(out.st_mode);
	for (size_t i = 0; i < n; i++) {
		int is_stdin = strcmp(inputs[i], "-") == 0;
		if (to_file && (is_stdin ? fstat(STDIN_FILENO, &in) : stat(inputs[i], &in)) == 0 &&
		    in.st_dev == out.st_dev && in.st_ino == out.st_ino)
			return ev_cli_input_error(cli, inputs[i], EV_ERR_SAMEOUT);
		int rc = is_stdin ? ev_files_note_input(STDIN_FILENO) : ev_files_note_input_path(inputs[i]);
		if (rc != EV_OK)
			return ev_cli_input_error(cli, inputs[i], rc);
	}
	return 0;
}

int ev_filter_run(struct ev_cli *cli, char *const *inputs, size_t n, ev_strtab *st, ev_meta *meta,
                  const struct ev_filter *f, void *ctx)
{
	static char *const stdin_only[] = { (char *)"-" };
	if (n == 0) {
		inputs = stdin_only;
		n = 1;
	}
	/* All inputs before the first is read: the output of a filter starts
	 * with the first input, and the last may be the output itself. */
	if (ev_cli_note_inputs(cli, inputs, n))
		return 1;
	if (cli->progress && !cli->progress_total)
		cli->progress_total = total_size(inputs, n);
	uint64_t done_bytes = 0;
	int status = 0;
	for (size_t i = 0; i < n && status == 0; i++) {
		ev_input *in;
		ev_reader *r;
		int rc = ev_input_open(&in, inputs[i]);
		if (rc != EV_OK) {
			status = ev_cli_input_error(cli, inputs[i], rc);
			break;
		}
		if ((rc = ev_reader_from_input(&r, in, st, meta)) != EV_OK) {
			ev_input_close(in);
			status = ev_cli_input_error(cli, inputs[i], rc);
			break;
		}
		status = run_one(cli, r, i, in, &done_bytes, f, ctx);
		int crc = ev_reader_close(r);
		if (status == 0 && crc != EV_OK && crc != EV_ERR_PIPE)
			status = ev_cli_input_error(cli, inputs[i], crc);
	}
	ev_cli_progress_done(cli);
	return status;
}

uint64_t ev_filter_records(const struct ev_cli *cli)
{
	return cli->filter_records;
}
