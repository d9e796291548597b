/* SPDX-License-Identifier: MIT */
/*
 * write.c - pass 2: every input read at once and merged into the output in
 * the stream's order, remaining ties by input index and then input order,
 * so the output is deterministic and detail records (dep, chan) stay right
 * after their op.  Text lines go out as they are read, ahead of the records
 * that use them; records that need no change go out as their own lines.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "merge_int.h"

int merge_say_output(ev_merge *m, int rc)
{
	ev_say_file(&m->o.say, !m->output || strcmp(m->output, "-") == 0 ? "standard output" : m->output, rc);
	return rc;
}

static int open_input(ev_merge *m, struct merge_in *in)
{
	int rc = ev_reader_open(&in->r, in->spool ? in->spool : in->path, m->st, m->meta);
	if (rc != EV_OK) {
		ev_say_file(&m->o.say, strcmp(in->path, "-") ? in->path : "standard input", rc);
		return rc;
	}
	memset(&in->order, 0, sizeof in->order);
	in->done = 0;
	return EV_OK;
}

/* The output takes its origin from the first input read; its header must be
 * set before the first line is written. */
static int set_origin(ev_merge *m, const char *origin)
{
	m->header_set = 1;
	if (origin && ev_writer_header(m->w, "origin", origin) != EV_OK) {
		ev_say(&m->o.say, EV_SAY_ERROR, "cannot use origin '%s' of the inputs", origin);
		return EV_ERR_ARG;
	}
	return EV_OK;
}

/* A text line of input i, passed on: #src lines renumbered, and #rank lines
 * too when ranks are input numbers. */
static int pass_text(ev_merge *m, size_t i, struct merge_in *in, const char *line, size_t len)
{
	int rc;
	if (len >= 5 && memcmp(line, "#src ", 5) == 0)
		return merge_src_line(m, i, in->r, line, len, m->w);
	if (m->o.rank_from_src && len >= 6 && memcmp(line, "#rank ", 6) == 0) {
		const char *p = line + 6;
		while (p < line + len && *p != ' ' && *p != '\t')
			p++;
		char buf[16384];
		int n = snprintf(buf, sizeof buf, "#rank %d%.*s", (int)i, (int)(line + len - p), p);
		if (n < 0 || (size_t)n >= sizeof buf) {
			/* Named by its argument up to '=' (its label when it has
			 * one), as ev-merge always named it here. */
			ev_say(&m->o.say, EV_SAY_ERROR, "%s: #rank line too long", in->label ? in->label : in->path);
			return EV_ERR_LIMIT;
		}
		rc = ev_write_text(m->w, buf, (size_t)n);
	} else {
		rc = ev_write_text(m->w, line, len);
	}
	return rc ? merge_say_output(m, rc) : EV_OK;
}

/* Input i to its next record (or its end), writing text lines on the way:
 * the record in its output form, its line kept when it is unchanged. */
static int advance(ev_merge *m, size_t i)
{
	struct merge_in *in = &m->in[i];
	for (;;) {
		int rc = ev_read(in->r, &in->rec);
		if (rc == EV_TEXT) {
			const char *line;
			size_t len;
			if (!m->header_set && (rc = set_origin(m, ev_reader_header(in->r, "origin"))) != EV_OK)
				return rc;
			ev_reader_text(in->r, &line, &len);
			if ((rc = pass_text(m, i, in, line, len)) != EV_OK)
				return rc;
			if (len >= 5 && memcmp(line, "#src ", 5) == 0)
				in->last_src = UINT32_MAX;
			continue;
		}
		if (rc == EV_EOF) {
			in->done = 1;
			return EV_OK;
		}
		if (rc < 0) {
			ev_say_reader(&m->o.say, in->r, rc);
			return rc;
		}
		if (!m->o.sort && ev_order_check(&in->order, in->rec.ts) != EV_OK) {
			char why[128];
			ev_order_text(why, sizeof why, in->rec.ts, in->order.last_ts);
			ev_say(&m->o.say, EV_SAY_ERROR, "%s: record %llu: %s", ev_reader_name(in->r),
			       (unsigned long long)ev_reader_recno(in->r), why);
			return EV_ERR_ORDER;
		}
		if (in->rec.src != in->last_src) {
			if (!m->header_set && (rc = set_origin(m, ev_reader_header(in->r, "origin"))) != EV_OK)
				return rc;
			if ((rc = merge_map_src(m, i, in->rec.src, m->w, &in->out_src)) != EV_OK)
				return rc;
			in->last_src = in->rec.src;
		}
		int changed = 0;
		if (m->o.rank_from_src && in->rec.rank != (uint32_t)i) {
			in->rec.rank = (uint32_t)i;
			changed = 1;
		}
		if (in->rec.src != in->out_src) {
			in->rec.src = (uint16_t)in->out_src;
			changed = 1;
		}
		if (m->al) {
			int64_t ts = in->rec.ts;
			uint64_t dur = in->rec.dur;
			ev_align_apply_rec(m->al, m->cfg_of[in->out_src], in->rec.rank, &in->rec);
			changed |= ts != in->rec.ts || dur != in->rec.dur;
		}
		if (changed)
			in->line = NULL;
		else
			ev_reader_record_line(in->r, &in->line, &in->line_len);
		return EV_OK;
	}
}

/* Through the external sorter: for --sort, and for alignment of inputs
 * that hold several clocks (their corrected records are no longer in
 * order).  Text lines go out while reading, before every record; records
 * are added input by input, so equal keys keep input order. */
static int sort_merge(ev_merge *m)
{
	ev_sorter *s;
	int status = EV_OK, rc = ev_sorter_open(&s, m->o.sort_bytes, NULL);
	if (rc) {
		ev_say(&m->o.say, EV_SAY_ERROR, "out of memory for --buffer-size %llu", (unsigned long long)m->o.sort_bytes);
		return rc;
	}
	for (size_t i = 0; i < m->n && !status; i++)
		while (!m->in[i].done && !status) {
			if ((rc = ev_sorter_add(s, &m->in[i].rec)) != EV_OK)
				break;
			status = advance(m, i);
		}
	if (!status && !rc)
		rc = ev_sorter_finish(s, m->w, NULL, NULL);
	if (!status && rc) {
		if (rc == EV_ERR_IO && *ev_sorter_errpath(s))
			ev_say(&m->o.say, EV_SAY_ERROR, "%s: %s", ev_sorter_errpath(s), strerror(errno));
		else if (rc == EV_ERR_NOMEM)
			ev_say(&m->o.say, EV_SAY_ERROR, "out of memory");
		else
			merge_say_output(m, rc);
		status = rc;
	}
	ev_sorter_close(s);
	return status;
}

/* The k-way merge: each input's next record in the heap, ties by input
 * index. */
static int heap_merge(ev_merge *m, struct ev_kmerge *h)
{
	uint64_t nrec = 0;
	int rc;
	for (size_t i = 0; i < m->n; i++)
		if (!m->in[i].done && (rc = ev_kmerge_add(h, i, &m->in[i].rec, i)) != EV_OK)
			return rc; /* the heap has room for every input */
	while (h->n > 0) {
		size_t i = ev_kmerge_top(h);
		struct merge_in *in = &m->in[i];
		rc = in->line ? ev_write_escaped(m->w, &in->rec, in->line, in->line_len) : ev_write(m->w, &in->rec);
		if (rc)
			return merge_say_output(m, rc);
		if ((++nrec & 0xFFFF) == 0 && m->o.progress)
			m->o.progress(m->o.progress_ctx, nrec);
		if ((rc = advance(m, i)) != EV_OK)
			return rc;
		if (in->done)
			ev_kmerge_drop(h);
		else
			ev_kmerge_next(h, i);
	}
	return EV_OK;
}

int merge_write(ev_merge *m)
{
	int status = EV_OK;
	for (size_t i = 0; i < m->n && !status; i++) {
		status = open_input(m, &m->in[i]);
		m->in[i].last_src = UINT32_MAX;
	}
	if (status)
		return status;
	struct ev_kmerge h;
	if (ev_kmerge_init(&h, m->n) != EV_OK) {
		ev_say(&m->o.say, EV_SAY_ERROR, "out of memory");
		return EV_ERR_NOMEM;
	}
	/* The output's origin is the first input's; say so when inputs
	 * disagree. */
	const char *origin = NULL;
	for (size_t i = 0; i < m->n && !status; i++) {
		const char *org = ev_reader_header(m->in[i].r, "origin");
		if (!m->header_set && (status = set_origin(m, org)) != EV_OK)
			break;
		/* Reading the first item fixes the segment header of each input. */
		status = advance(m, i);
		org = ev_reader_header(m->in[i].r, "origin");
		if (org && !origin)
			origin = org;
		else if (org && origin && strcmp(org, origin) != 0)
			ev_say(&m->o.say, EV_SAY_WARN,
			       "%s: origin=%s differs from origin=%s of an earlier input; times may not be comparable",
			       m->in[i].path, org, origin);
	}
	if (!status && m->al && (status = ev_align_write_meta(m->al, &m->cfgs, m->w)) != EV_OK)
		merge_say_output(m, status);
	if (!status)
		status = m->o.sort || m->need_sort ? sort_merge(m) : heap_merge(m, &h);
	ev_kmerge_free(&h);
	return status;
}
