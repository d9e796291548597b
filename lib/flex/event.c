/* SPDX-License-Identifier: MIT */
/*
 * event.c - one Flex event from its JSON object: phase, name, ids, host time
 * (exact decimal microseconds to ns), the device cycle counters TS1..TS5
 * (hex or decimal strings), and the communication arguments CollGroup,
 * Peer/Peers, Type and Bytes; the device-time arithmetic.
 */
#include <stdlib.h>
#include <string.h>

#include "ev.h"
#include "ev/flex.h"

/* Copy string (or primitive) token i, unescaped, into buf at *used. */
static const char *tok_text(const char *text, const struct ev_json_tok *t, int i, char *buf, size_t cap,
                            size_t *used, size_t *len)
{
	size_t need = (size_t)(t[i].end - t[i].start) + 1;
	if (*used + need > cap)
		return NULL;
	char *out = buf + *used;
	size_t n;
	if (t[i].type == EV_JT_STRING) {
		n = ev_json_str(text, t, i, out);
		if (n == (size_t)-1)
			return NULL;
	} else {
		n = need - 1;
		memcpy(out, text + t[i].start, n);
	}
	out[n] = '\0';
	*used += n + 1;
	*len = n;
	return out;
}

/* Unsigned integer from a number token or a string holding decimal or 0x hex. */
static int tok_u64(const char *text, const struct ev_json_tok *t, int i, uint64_t *v)
{
	char b[40];
	int n = t[i].end - t[i].start;
	if (n <= 0 || n >= (int)sizeof b || (t[i].type != EV_JT_STRING && t[i].type != EV_JT_PRIMITIVE))
		return -1;
	memcpy(b, text + t[i].start, (size_t)n);
	b[n] = '\0';
	if (b[0] == '0' && (b[1] == 'x' || b[1] == 'X')) {
		if (!b[2])
			return -1;
		uint64_t x = 0;
		for (const char *p = b + 2; *p; p++) {
			int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 :
			        *p >= 'A' && *p <= 'F' ? *p - 'A' + 10 : -1;
			if (d < 0 || x >> 60)
				return -1;
			x = x << 4 | (uint64_t)d;
		}
		*v = x;
		return 0;
	}
	if (ev_parse_u64(b, v) == 0)
		return 0;
	double d;
	if (ev_parse_double(b, &d) == 0 && d >= 0 && d < 1.8e19) {
		*v = (uint64_t)d;
		return 0;
	}
	return -1;
}

static int tok_i64v(const char *text, const struct ev_json_tok *t, int i, int64_t *v)
{
	uint64_t u;
	char b[40];
	int n = t[i].end - t[i].start;
	if (n > 0 && n < (int)sizeof b && text[t[i].start] == '-') {
		memcpy(b, text + t[i].start, (size_t)n);
		b[n] = '\0';
		return ev_parse_i64(b, v) == 0 ? 0 : -1;
	}
	if (tok_u64(text, t, i, &u))
		return -1;
	*v = (int64_t)u;
	return 0;
}

static int parse_peers(const char *s, size_t n, struct ev_flex_event *e)
{
	size_t i = 0;
	while (i < n) {
		while (i < n && (s[i] == ' ' || s[i] == ','))
			i++;
		if (i >= n)
			break;
		int64_t v = 0;
		size_t d = 0;
		while (i < n && s[i] >= '0' && s[i] <= '9' && d < 10) {
			v = v * 10 + (s[i] - '0');
			i++;
			d++;
		}
		if (!d || (i < n && s[i] != ',' && s[i] != ' '))
			return -1;
		if (e->npeers < EV_FLEX_MAX_PEERS)
			e->peers[e->npeers++] = (int32_t)v;
	}
	return 0;
}

static void args_of(const char *text, const struct ev_json_tok *t, int a, char *buf, size_t cap, size_t *used,
                    struct ev_flex_event *e)
{
	static const char *const tsk[5] = { "TS1", "TS2", "TS3", "TS4", "TS5" };
	int k, all = 1;
	uint64_t cyc[5];
	for (int j = 0; j < 5; j++) {
		k = ev_json_get(text, t, a, tsk[j]);
		if (k < 0 || tok_u64(text, t, k, &cyc[j]))
			all = 0;
	}
	if (all && !e->have_cyc) {
		memcpy(e->cyc, cyc, sizeof cyc);
		e->have_cyc = 1;
	}
	if (!e->have_bytes && ((k = ev_json_get(text, t, a, "Bytes")) >= 0 || (k = ev_json_get(text, t, a, "bytes")) >= 0) &&
	    tok_u64(text, t, k, &e->bytes) == 0)
		e->have_bytes = 1;
	size_t len;
	const char *s;
	if (!e->group && (k = ev_json_get(text, t, a, "CollGroup")) >= 0 &&
	    (s = tok_text(text, t, k, buf, cap, used, &len))) {
		e->group = s;
		e->group_len = len;
	}
	if (!e->npeers && ((k = ev_json_get(text, t, a, "Peers")) >= 0 || (k = ev_json_get(text, t, a, "Peer")) >= 0)) {
		if (t[k].type == EV_JT_ARRAY) {
			for (int j = 0, x = k + 1; j < t[k].size; j++, x = ev_json_skip(t, x)) {
				uint64_t v;
				if (tok_u64(text, t, x, &v) == 0 && v < INT32_MAX && e->npeers < EV_FLEX_MAX_PEERS)
					e->peers[e->npeers++] = (int32_t)v;
			}
		} else if ((s = tok_text(text, t, k, buf, cap, used, &len))) {
			if (parse_peers(s, len, e))
				e->npeers = 0;
		}
	}
	if (!e->ctype && (k = ev_json_get(text, t, a, "Type")) >= 0 && (s = tok_text(text, t, k, buf, cap, used, &len))) {
		if (len >= 5 && memcmp(s, "WDone", 5) == 0 && strstr(s, "Barrier"))
			e->ctype = EV_FT_DONE;
		else if (strcmp(s, "MultiCast XSEG") == 0)
			e->ctype = EV_FT_SEND; /* an xseg targets a single peer */
		else if (strcmp(s, "MultiCast") == 0)
			e->ctype = EV_FT_MCAST;
		else if (strcmp(s, "SingleCast") == 0)
			e->ctype = EV_FT_SEND;
		else if (strcmp(s, "Set BCList") == 0)
			e->ctype = EV_FT_BCLIST;
	}
	uint64_t v;
	if (!e->correlation && (k = ev_json_get(text, t, a, "correlation")) >= 0 && tok_u64(text, t, k, &v) == 0)
		e->correlation = (uint32_t)v;
}

/* "[sync=...]" in the name, and the peer of RdmaRecv_<peer>_ names. */
static void name_parts(struct ev_flex_event *e)
{
	const char *n = e->name;
	const char *p = strstr(n, "[sync=");
	if (p) {
		const char *q = strchr(p, ']');
		if (q) {
			e->sync = p + 6;
			e->sync_len = (size_t)(q - p - 6);
		}
	}
	if (!e->npeers && (p = strstr(n, "RdmaRecv_")) != NULL) {
		p += 9;
		int64_t v = 0;
		int d = 0;
		while (*p >= '0' && *p <= '9' && d < 9) {
			v = v * 10 + (*p++ - '0');
			d++;
		}
		if (d && *p == '_')
			e->peers[e->npeers++] = (int32_t)v;
	}
}

int ev_flex_event_parse(const char *text, const struct ev_json_tok *t, int i, char *buf, size_t cap,
                        struct ev_flex_event *e)
{
	memset(e, 0, sizeof *e);
	if (t[i].type != EV_JT_OBJECT)
		return EV_ERR_FORMAT;
	size_t used = 0, len;
	int k;
	if ((k = ev_json_get(text, t, i, "ph")) >= 0 && t[k].end > t[k].start)
		e->ph = text[t[k].start];
	if ((k = ev_json_get(text, t, i, "name")) >= 0) {
		e->name = tok_text(text, t, k, buf, cap, &used, &len);
		if (!e->name)
			return EV_ERR_FORMAT;
		e->name_len = len;
	} else {
		e->name = "";
	}
	if ((k = ev_json_get(text, t, i, "cat")) >= 0) {
		e->cat = tok_text(text, t, k, buf, cap, &used, &len);
		e->cat_len = e->cat ? len : 0;
	}
	if ((k = ev_json_get(text, t, i, "pid")) >= 0) {
		if (tok_i64v(text, t, k, &e->pid) == 0)
			e->have_pid = 1;
		else
			e->pid = (int64_t)(ev_hash64(text + t[k].start, (size_t)(t[k].end - t[k].start)) & 0x7FFFFFFF);
	}
	if ((k = ev_json_get(text, t, i, "tid")) >= 0 && tok_u64(text, t, k, &e->tid))
		e->tid = ev_hash64(text + t[k].start, (size_t)(t[k].end - t[k].start));
	if ((k = ev_json_get(text, t, i, "ts")) >= 0) {
		if (t[k].type != EV_JT_PRIMITIVE ||
		    ev_parse_decimal_scaled(text + t[k].start, (size_t)(t[k].end - t[k].start), 3, &e->ts))
			return EV_ERR_FORMAT;
		e->have_ts = 1;
	}
	if ((k = ev_json_get(text, t, i, "dur")) >= 0) {
		int64_t d;
		if (t[k].type != EV_JT_PRIMITIVE ||
		    ev_parse_decimal_scaled(text + t[k].start, (size_t)(t[k].end - t[k].start), 3, &d))
			return EV_ERR_FORMAT;
		e->dur = d < 0 ? 0 : (uint64_t)d;
		e->have_dur = d >= 0 ? 1 : -1;
	}
	for (int a = 0; a < 2; a++) {
		k = ev_json_get(text, t, i, a ? "attr" : "args");
		if (k >= 0 && t[k].type == EV_JT_OBJECT)
			args_of(text, t, k, buf, cap, &used, e);
	}
	name_parts(e);
	return EV_OK;
}

uint64_t ev_flex_cycles_ns(uint64_t cycles, uint64_t soc_khz)
{
	if (!soc_khz)
		return 0;
	unsigned __int128 x = (unsigned __int128)cycles * 1000000u + soc_khz / 2;
	x /= soc_khz;
	return x > UINT64_MAX ? UINT64_MAX : (uint64_t)x;
}

int ev_flex_device_time(const struct ev_flex_event *e, int64_t host_ts, uint64_t host_dur, uint64_t soc_khz,
                        int64_t *ts, uint64_t *dur)
{
	uint64_t c[5];
	int ovc = 0;
	c[0] = e->cyc[0];
	for (int k = 1; k < 5; k++) {
		c[k] = e->cyc[k];
		/* 32-bit counters: one that went backwards wrapped around. */
		while (c[k] < c[k - 1] && c[k - 1] - c[k] < (1ull << 33)) {
			c[k] += 1ull << 32;
			ovc = 1;
		}
	}
	int op = ev_flex_instr(e->name, e->name_len);
	int64_t end = host_ts + (int64_t)host_dur;
	if (op < 0) {
		*ts = host_ts;
		*dur = c[4] >= c[0] ? ev_flex_cycles_ns(c[4] - c[0], soc_khz) : 0;
	} else {
		uint64_t d = c[op + 1] >= c[op] ? ev_flex_cycles_ns(c[op + 1] - c[op], soc_khz) : 0;
		*dur = d;
		*ts = end - (int64_t)d;
	}
	return ovc;
}
