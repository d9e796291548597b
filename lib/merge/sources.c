/* SPDX-License-Identifier: MIT */
/*
 * sources.c - the output's sources: every source of every input becomes one
 * source of the output, renumbered in order of appearance, and its
 * configuration is named.  Its #src keys are kept; the merge adds its own:
 * the label, the input path as file= (or input=, when the source names its
 * file already) and the --src-regex keys.
 */
#include <stdio.h>
#include <string.h>

#include "merge_int.h"

int merge_sources_reset(ev_merge *m)
{
	ev_meta_free(m->srcs);
	m->srcs = ev_meta_new();
	m->nsrc = 0;
	for (size_t i = 0; i < m->n; i++) {
		ev_map_free(&m->in[i].srcmap);
		ev_map_init(&m->in[i].srcmap);
	}
	if (m->srcs)
		return EV_OK;
	ev_say(&m->o.say, EV_SAY_ERROR, "out of memory");
	return EV_ERR_NOMEM;
}

/* Append " key=value" (value escaped, spaces made '_': a #src value has
 * none). */
static size_t put_kv(char *line, size_t cap, size_t n, const char *key, const char *val, size_t vlen)
{
	char esc[8192];
	if (vlen > 4000)
		vlen = 4000;
	ev_text_escape(val, vlen, esc, sizeof esc);
	for (char *p = esc; *p; p++)
		if (*p == ' ')
			*p = '_';
	if (n < cap)
		n += (size_t)snprintf(line + n, cap - n, " %s=%s", key, esc);
	return n;
}

/* The regex keys of an input: their values in val/len (NULL when a group
 * did not take part).  0 when there is no regex or the path does not
 * match it (said once per input). */
static int regex_keys(ev_merge *m, struct merge_in *in, const char **val, size_t *len)
{
	if (!m->o.re)
		return 0;
	regmatch_t g[10];
	if (regexec(m->o.re, in->path, 10, g, 0) != 0) {
		if (!in->warned_regex)
			ev_say(&m->o.say, EV_SAY_WARN, "%s: does not match --src-regex; no keys for this source", in->path);
		in->warned_regex = 1;
		return 0;
	}
	for (size_t k = 0; k < m->o.nkeys; k++) {
		val[k] = g[k + 1].rm_so < 0 ? NULL : in->path + g[k + 1].rm_so;
		len[k] = g[k + 1].rm_so < 0 ? 0 : (size_t)(g[k + 1].rm_eo - g[k + 1].rm_so);
	}
	return 1;
}

/* The output #src line of output source out for an input: the input's
 * own #src line (the text after "#src N", NULL for none) plus our keys. */
static int compose_src(ev_merge *m, struct merge_in *in, uint32_t out, const char *rest, size_t rlen, char *line,
                       size_t cap, size_t *lenp)
{
	const char *rv[10] = { 0 };
	size_t rl[10] = { 0 };
	int have_re = regex_keys(m, in, rv, rl);
	int seen_file = 0, seen_input = 0, seen_key[10] = { 0 };
	const char *path = strcmp(in->path, "-") == 0 ? "standard input" : in->path;
	size_t n = (size_t)snprintf(line, cap, "#src %u", out);
	if (in->label)
		n = put_kv(line, cap, n, "label", in->label, strlen(in->label));
	const char *p = rest, *end = rest ? rest + rlen : NULL;
	while (p && p < end) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		const char *t = p;
		while (p < end && *p != ' ' && *p != '\t')
			p++;
		if (p == t)
			break;
		const char *eq = memchr(t, '=', (size_t)(p - t));
		size_t klen = eq ? (size_t)(eq - t) : (size_t)(p - t);
		char key[128];
		snprintf(key, sizeof key, "%.*s", (int)(klen < 127 ? klen : 127), t);
		if (strcmp(key, "label") == 0 && in->label) {
			/* Our label names the source now; the earlier one is kept. */
			if (n < cap)
				n += (size_t)snprintf(line + n, cap - n, " label.prev%.*s", (int)(p - t - (int)klen), t + klen);
			continue;
		}
		seen_file |= strcmp(key, "file") == 0;
		seen_input |= strcmp(key, "input") == 0;
		int replaced = 0;
		for (size_t k = 0; have_re && k < m->o.nkeys; k++)
			if (rv[k] && strcmp(key, m->o.keys[k]) == 0) {
				seen_key[k] = 1;
				const char *v = eq ? eq + 1 : p;
				if ((size_t)(p - v) != rl[k] || memcmp(v, rv[k], rl[k]) != 0) {
					if (!in->warned_key)
						ev_say(&m->o.say, EV_SAY_WARN, "%s: --src-regex sets %s=%.*s over the input's %.*s",
						       in->path, key, (int)rl[k], rv[k], (int)(p - t), t);
					in->warned_key = 1;
					n = put_kv(line, cap, n, key, rv[k], rl[k]);
					replaced = 1;
				}
			}
		if (!replaced && n < cap)
			n += (size_t)snprintf(line + n, cap - n, " %.*s", (int)(p - t), t);
	}
	if (!seen_file)
		n = put_kv(line, cap, n, "file", path, strlen(path));
	else if (!seen_input)
		n = put_kv(line, cap, n, "input", path, strlen(path));
	for (size_t k = 0; have_re && k < m->o.nkeys; k++)
		if (rv[k] && !seen_key[k])
			n = put_kv(line, cap, n, m->o.keys[k], rv[k], rl[k]);
	if (n >= cap) {
		ev_say(&m->o.say, EV_SAY_ERROR, "%s: source description too long", in->path);
		return EV_ERR_LIMIT;
	}
	*lenp = n;
	return EV_OK;
}

/* The configuration of output source out, from its #src line: its keys
 * but the per-rank ones (or --config-keys), and input= when inputs are
 * runs. */
static int name_config(ev_merge *m, struct merge_in *in, uint32_t out)
{
	char name[4096];
	uint32_t cfg = 0;
	const struct ev_src_info *si = ev_meta_src(m->srcs, out);
	size_t nl = ev_align_config_name(si, m->o.cfg_keys, m->o.ncfg_keys, name, sizeof name);
	const char *input = si && m->input_is_run && !m->o.ncfg_keys ? ev_kv_get(si->kv, si->nkv, "input") : NULL;
	if (input && nl < sizeof name)
		nl += (size_t)snprintf(name + nl, sizeof name - nl, "%sinput=%s", nl ? " " : "", input);
	if (nl >= sizeof name || ev_align_cfgs_id(&m->cfgs, name, &cfg) != EV_OK) {
		ev_say(&m->o.say, EV_SAY_ERROR, "%s: too many or too long configurations", in->path);
		return EV_ERR_LIMIT;
	}
	m->cfg_of[out] = (uint16_t)cfg;
	return EV_OK;
}

/* Map source in_src of input i to an output source, defining it from the
 * input's #src line (rest != NULL) or as a default one. */
static int map_src(ev_merge *m, size_t i, uint32_t in_src, const char *rest, size_t rlen, ev_writer *w,
                   uint32_t *outp)
{
	struct merge_in *in = &m->in[i];
	uint64_t *p = ev_map_get(&in->srcmap, (uint64_t)in_src + 1);
	uint32_t out;
	int rc;
	if (p) {
		out = (uint32_t)(*p - 1);
		if (!rest) {
			*outp = out;
			return EV_OK;
		}
	} else {
		if (m->nsrc >= 65535) {
			ev_say(&m->o.say, EV_SAY_ERROR, "%s: more than 65535 sources in all inputs", in->path);
			return EV_ERR_LIMIT;
		}
		out = m->nsrc++;
		if (ev_map_put(&in->srcmap, (uint64_t)in_src + 1, (uint64_t)out + 1) != EV_OK) {
			ev_say(&m->o.say, EV_SAY_ERROR, "out of memory");
			return EV_ERR_NOMEM;
		}
	}
	char line[16384];
	size_t len = 0;
	if ((rc = compose_src(m, in, out, rest, rlen, line, sizeof line, &len)) != EV_OK)
		return rc;
	if (ev_meta_add_line(m->srcs, line, len) != EV_OK) {
		ev_say(&m->o.say, EV_SAY_ERROR, "%s: bad #src line: %.200s", in->path, line);
		return EV_ERR_FORMAT;
	}
	if ((rc = name_config(m, in, out)) != EV_OK)
		return rc;
	if (w && (rc = ev_write_text(w, line, len)) != EV_OK)
		return merge_say_output(m, rc);
	*outp = out;
	return EV_OK;
}

int merge_map_src(ev_merge *m, size_t i, uint32_t in_src, ev_writer *w, uint32_t *out)
{
	return map_src(m, i, in_src, NULL, 0, w, out);
}

int merge_src_line(ev_merge *m, size_t i, ev_reader *r, const char *line, size_t len, ev_writer *w)
{
	const char *p = line + 5, *end = line + len, *t;
	while (p < end && *p == ' ')
		p++;
	t = p;
	while (p < end && *p != ' ' && *p != '\t')
		p++;
	char num[16];
	uint32_t n, out;
	snprintf(num, sizeof num, "%.*s", (int)(p - t < 15 ? p - t : 15), t);
	if (ev_parse_u32(num, &n) || n > 65535) {
		ev_say(&m->o.say, EV_SAY_ERROR, "%s: line %llu: bad #src number '%s'", m->in[i].path,
		       (unsigned long long)ev_reader_lineno(r), num);
		return EV_ERR_FORMAT;
	}
	return map_src(m, i, n, p, (size_t)(end - p), w, &out);
}
