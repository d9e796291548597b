/* SPDX-License-Identifier: MIT */
/*
 * read.c - one Flex JSON file into the converter: the streaming scanner,
 * the dialect evidence, event parsing and conversion, in one pass.  The
 * caller turns the result into messages (the library never prints).
 */
#include <stdlib.h>
#include <string.h>

#include "ev/flex.h"
#include "ev/stream.h"

struct ev_flex_reader {
	struct ev_json_tok *toks;
	int ntok;
	char *buf;
	size_t cap;
};

int ev_flex_reader_new(ev_flex_reader **r)
{
	ev_flex_reader *x = calloc(1, sizeof *x);
	*r = NULL;
	if (!x)
		return EV_ERR_NOMEM;
	x->ntok = 1 << 16;
	x->toks = malloc((size_t)x->ntok * sizeof *x->toks);
	if (!x->toks) {
		free(x);
		return EV_ERR_NOMEM;
	}
	*r = x;
	return EV_OK;
}

void ev_flex_reader_free(ev_flex_reader *r)
{
	if (!r)
		return;
	free(r->toks);
	free(r->buf);
	free(r);
}

static int fail(struct ev_flex_read *res, int status, enum ev_flex_read_error what, uint64_t record)
{
	res->error = what;
	res->record = record;
	return status;
}

int ev_flex_read_file(ev_flex_reader *rd, ev_flex_conv *c, uint16_t src, const char *path, size_t max_object,
                      void (*progress)(void *ctx, uint64_t events, uint64_t bytes), void *ctx,
                      struct ev_flex_read *res)
{
	ev_input *in = NULL;
	ev_json *j = NULL;
	int rc;
	memset(res, 0, sizeof *res);
	ev_flex_sniff_init(&res->sniff);
	if ((rc = ev_input_open(&in, path)) != EV_OK)
		return fail(res, rc, EV_FLEX_RE_OPEN, 0);
	if ((rc = ev_json_open(&j, in, "traceEvents", max_object)) != EV_OK) {
		(void)ev_input_close(in);
		return fail(res, rc, EV_FLEX_RE_OPEN, 0);
	}
	ev_json_want(j, ev_flex_sniff_want, NULL);
	struct ev_flex_sniff *sn = &res->sniff;
	struct ev_json_item it;
	uint64_t n = 0, kineto_at = 0;
	while ((rc = ev_json_next(j, &it)) > 0) {
		if (it.kind == EV_JSON_TOP) {
			ev_flex_sniff_top(sn, it.key, it.key_len, it.text, it.len);
			if (sn->processed_top || sn->kineto_top || sn->rocprof_top) {
				size_t kl = it.key_len < sizeof res->key - 1 ? it.key_len : sizeof res->key - 1;
				memcpy(res->key, it.key, kl);
				res->key[kl] = '\0';
				rc = EV_ERR_FORMAT;
				res->error = EV_FLEX_RE_DIALECT;
				goto out;
			}
			continue;
		}
		n++;
		/* PyTorch event categories: converting stops, but the rest is still
		 * scanned for a top-level otherData (ev2perfetto's own output has
		 * "kernel" slices and its otherData at the end). */
		if (kineto_at)
			continue;
		int nt = ev_json_tokenize(it.text, it.len, rd->toks, rd->ntok);
		if (nt < 0) {
			rc = fail(res, nt, nt == EV_ERR_LIMIT ? EV_FLEX_RE_TOKENS : EV_FLEX_RE_JSON, n);
			goto out;
		}
		/* Evidence until the file is known to be Flex (1000 events in). */
		if (sn->events < 1000 || ev_flex_sniff_verdict(sn) != EV_DIALECT_FLEX)
			ev_flex_sniff_event(sn, it.text, rd->toks, 0);
		else
			sn->events++;
		if (ev_flex_sniff_verdict(sn) == EV_DIALECT_KINETO) {
			kineto_at = n;
			continue;
		}
		if (rd->toks[0].type != EV_JT_OBJECT)
			continue;
		if (it.len * 2 + 64 > rd->cap) {
			char *b = realloc(rd->buf, it.len * 2 + 64);
			if (!b) {
				rc = fail(res, EV_ERR_NOMEM, EV_FLEX_RE_CONVERT, n);
				goto out;
			}
			rd->buf = b;
			rd->cap = it.len * 2 + 64;
		}
		struct ev_flex_event e;
		if ((rc = ev_flex_event_parse(it.text, rd->toks, 0, rd->buf, rd->cap, &e)) != EV_OK) {
			rc = fail(res, rc == EV_ERR_RANGE ? rc : EV_ERR_FORMAT, EV_FLEX_RE_EVENT, n);
			goto out;
		}
		if ((rc = ev_flex_conv_event(c, src, &e)) != EV_OK) {
			res->pid = e.pid;
			fail(res, rc, EV_FLEX_RE_CONVERT, n);
			goto out;
		}
		if (progress && (n & 0xFFFF) == 0)
			progress(ctx, n, ev_input_offset(in));
	}
	if (rc < 0) {
		const char *d = ev_json_errdetail(j);
		snprintf(res->detail, sizeof res->detail, "%s", d && d[0] ? d : ev_strerror(rc));
		fail(res, rc, EV_FLEX_RE_JSON, 0);
		goto out;
	}
	rc = EV_OK;
	if (kineto_at) {
		res->record = kineto_at;
		res->error = EV_FLEX_RE_DIALECT;
		rc = EV_ERR_FORMAT;
		goto out;
	}
	ev_flex_conv_end_source(c, src);
	if (ev_flex_sniff_verdict(sn) != EV_DIALECT_FLEX) {
		res->error = EV_FLEX_RE_DIALECT;
		rc = EV_ERR_FORMAT;
	}
out:
	res->events = n;
	res->dialect = ev_flex_sniff_verdict(sn);
	ev_json_close(j);
	if (in)
		(void)ev_input_close(in);
	return rc;
}
