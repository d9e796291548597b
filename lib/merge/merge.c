/* SPDX-License-Identifier: MIT */
/*
 * merge.c - the merge's life: its inputs, and the alignment's first pass
 * over them (the sources name each record's configuration) with its report,
 * before write.c merges them.
 */
#include <stdlib.h>
#include <string.h>

#include "merge_int.h"

int ev_merge_new(ev_merge **out, const struct ev_merge_opts *o, const struct ev_merge_input *inputs, size_t n)
{
	*out = NULL;
	if (n > 65535) {
		ev_say(&o->say, EV_SAY_ERROR, "at most 65535 inputs");
		return EV_ERR_LIMIT;
	}
	ev_merge *m = calloc(1, sizeof *m);
	if (!m) {
		ev_say(&o->say, EV_SAY_ERROR, "out of memory");
		return EV_ERR_NOMEM;
	}
	m->o = *o;
	ev_align_cfgs_init(&m->cfgs);
	m->in = calloc(n ? n : 1, sizeof *m->in);
	m->st = ev_strtab_new();
	m->meta = ev_meta_new();
	/* Sources are numbered in 16 bits. */
	m->cfg_of = calloc(65536, sizeof *m->cfg_of);
	if (!m->in || !m->st || !m->meta || !m->cfg_of) {
		ev_say(&o->say, EV_SAY_ERROR, "out of memory");
		ev_merge_free(m);
		return EV_ERR_NOMEM;
	}
	m->n = n;
	for (size_t i = 0; i < n; i++) {
		m->in[i].label = inputs[i].label;
		m->in[i].path = inputs[i].path;
		m->in[i].spool_slot = -1;
		ev_map_init(&m->in[i].srcmap);
	}
	/* All inputs are open at once: past 256 their read buffers (256 KiB
	 * each by default) share 64 MiB. */
	if (n > 256)
		ev_input_set_default_buffer((64u << 20) / (unsigned)n);
	*out = m;
	return EV_OK;
}

void ev_merge_free(ev_merge *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		ev_reader_close(m->in[i].r);
		ev_map_free(&m->in[i].srcmap);
	}
	for (size_t i = 0; i < m->n; i++)
		merge_spool_remove(&m->in[i]);
	ev_align_free(m->al);
	ev_meta_free(m->srcs);
	free(m->cfg_of);
	ev_align_cfgs_free(&m->cfgs);
	ev_strtab_free(m->st);
	ev_meta_free(m->meta);
	free(m->in);
	free(m);
}

ev_strtab *ev_merge_strtab(ev_merge *m) { return m->st; }

int ev_merge_write(ev_merge *m, ev_writer *w, const char *output)
{
	m->w = w;
	m->output = output;
	return merge_write(m);
}

/* The scan's view of the sources: #src lines define them, and a record's
 * source gives its configuration. */
static int scan_src_line(void *ctx, size_t i, ev_reader *r, const char *line, size_t len)
{
	return merge_src_line(ctx, i, r, line, len, NULL);
}

static int scan_config_of(void *ctx, size_t i, uint32_t src, uint32_t *config)
{
	ev_merge *m = ctx;
	uint32_t out;
	int rc = merge_map_src(m, i, src, NULL, &out);
	if (rc == EV_OK)
		*config = m->cfg_of[out];
	return rc;
}

/* The report: notes and warnings, and the TSV file when asked for. */
static int report(ev_merge *m, const struct ev_align_scan *s)
{
	const char *name = m->o.report && strcmp(m->o.report, "-") ? m->o.report : "standard output";
	ev_output *tsv = NULL;
	int rc;
	if (m->o.report && (rc = ev_output_open(&tsv, m->o.report)) != EV_OK) {
		ev_say_file(&m->o.say, name, rc);
		return rc;
	}
	struct ev_align_report rep = {
		.cfgs = &m->cfgs, .origin = s->origin, .producer = s->producer, .world_size = s->world_size,
		.rank_is_input = m->o.rank_from_src, .tsv = tsv, .say = m->o.say,
	};
	rc = ev_align_report_write(m->al, &rep);
	if (tsv) {
		if (rc)
			ev_output_abort(tsv);
		else
			rc = ev_output_close(tsv);
		if (rc) {
			ev_say_file(&m->o.say, name, rc);
			return rc;
		}
	}
	return EV_OK;
}

/* Pass 1, twice: first only the headers' #src lines, to learn whether
 * input= separates runs (one file per run merged) or ranks of one run (one
 * file per rank), which the configurations depend on; then every record. */
static int align_pass(ev_merge *m, const char **paths)
{
	for (size_t i = 0; i < m->n; i++)
		paths[i] = m->in[i].spool ? m->in[i].spool : m->in[i].path;
	const char **names = paths + m->n;
	for (size_t i = 0; i < m->n; i++)
		names[i] = m->in[i].path;
	struct ev_align_scan s;
	memset(&s, 0, sizeof s);
	s.paths = paths;
	s.names = names;
	s.n = m->n;
	s.rank_is_input = m->o.rank_from_src;
	s.src_line = scan_src_line;
	s.config_of = scan_config_of;
	s.ctx = m;
	s.say = m->o.say;
	int rc = merge_sources_reset(m);
	if (rc || (rc = ev_align_scan_run(&s)) != EV_OK)
		return rc;
	m->input_is_run = ev_align_input_is_config(m->srcs);
	ev_align_cfgs_free(&m->cfgs);
	if ((rc = merge_sources_reset(m)) != EV_OK)
		return rc;
	s.al = m->al;
	if ((rc = ev_align_scan_run(&s)) != EV_OK || (rc = report(m, &s)) != EV_OK)
		return rc;
	/* An input holding several ranks (or configurations) is ordered by
	 * uncorrected time; corrected, it needs the sorter. */
	m->need_sort = s.several_clocks;
	return EV_OK;
}

int ev_merge_align(ev_merge *m)
{
	int rc;
	if (m->o.align.mode != EV_ALIGN_NONE) {
		for (size_t i = 0; i < m->n; i++)
			if (strcmp(m->in[i].path, "-") == 0 && (rc = merge_spool_stdin(m, &m->in[i])) != EV_OK)
				return rc;
		if (ev_align_new(&m->al, &m->o.align) != EV_OK) {
			ev_say(&m->o.say, EV_SAY_ERROR, "out of memory");
			return EV_ERR_NOMEM;
		}
		const char **paths = calloc(2 * m->n + 1, sizeof *paths);
		if (!paths) {
			ev_say(&m->o.say, EV_SAY_ERROR, "out of memory");
			return EV_ERR_NOMEM;
		}
		rc = align_pass(m, paths);
		free(paths);
		if (rc)
			return rc;
	}
	/* Pass 2 numbers the sources again, from the start. */
	return merge_sources_reset(m);
}
