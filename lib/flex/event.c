/* SPDX-License-Identifier: MIT */
/*
 * event.c - one Flex event from its JSON object: phase, name, ids, host time
 * (exact decimal microseconds to ns), the device cycle counters TS1..TS5
 * (hex or decimal strings), and the communication arguments CollGroup,
 * Peer/Peers, Type and Bytes; the device-time arithmetic.
 */
#include <stdlib.h>
#include <string.h>

#include "ev/flex.h"
#include "ev/stream.h"

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

static int key_is(const char *text, const struct ev_json_tok *t, int k, const char *s, size_t n)
{
	return (size_t)(t[k].end - t[k].start) == n && memcmp(text + t[k].start, s, n) == 0;
}

/* One pass over the members of attr/args: the TS counters, Bytes,
 * CollGroup, Peer(s), Type, Power and correlation.  The first value wins
 * (attr is read before args). */
static void args_of(const char *text, const struct ev_json_tok *t, int a, char *buf, size_t cap, size_t *used,
                    struct ev_flex_event *e)
{
	uint64_t cyc[5];
	unsigned have = 0;
	int type_k = -1, peers_k = -1, peer_k = -1;
	size_t len;
	const char *s;
	for (int m = 0, k = a + 1; m < t[a].size; m++) {
		int v = k + 1;
		int klen = t[k].end - t[k].start;
		const char *key = text + t[k].start;
		if (klen == 3 && key[0] == 'T' && key[1] == 'S' && key[2] >= '1' && key[2] <= '5') {
			if (tok_u64(text, t, v, &cyc[key[2] - '1']) == 0)
				have |= 1u << (key[2] - '1');
		} else if (key_is(text, t, k, "Bytes", 5) || key_is(text, t, k, "bytes", 5)) {
			if (!e->have_bytes && tok_u64(text, t, v, &e->bytes) == 0)
				e->have_bytes = 1;
		} else if (key_is(text, t, k, "CollGroup", 9)) {
			if (!e->group && (s = tok_text(text, t, v, buf, cap, used, &len))) {
				e->group = s;
				e->group_len = len;
			}
		} else if (key_is(text, t, k, "Peers", 5)) {
			peers_k = v;
		} else if (key_is(text, t, k, "Peer", 4)) {
			peer_k = v;
			uint64_t pv;
			if (!e->have_peer_arg && tok_u64(text, t, v, &pv) == 0 && pv < INT32_MAX) {
				e->peer_arg = (int32_t)pv;
				e->have_peer_arg = 1;
			}
		} else if (key_is(text, t, k, "Type", 4)) {
			type_k = v;
		} else if (key_is(text, t, k, "Power", 5)) {
			if (!e->have_power && tok_u64(text, t, v, &e->power) == 0)
				e->have_power = 1;
		} else if (key_is(text, t, k, "correlation", 11)) {
			uint64_t c;
			if (!e->correlation && tok_u64(text, t, v, &c) == 0)
				e->correlation = (uint32_t)c;
		}
		k = ev_json_skip(t, v);
	}
	if (have == 0x1F && !e->have_cyc) {
		memcpy(e->cyc, cyc, sizeof cyc);
		e->have_cyc = 1;
	}
	int pk = peers_k >= 0 ? peers_k : peer_k;
	if (!e->npeers && pk >= 0) {
		if (t[pk].type == EV_JT_ARRAY) {
			for (int j = 0, x = pk + 1; j < t[pk].size; j++, x = ev_json_skip(t, x)) {
				uint64_t v;
				if (tok_u64(text, t, x, &v) == 0 && v < INT32_MAX && e->npeers < EV_FLEX_MAX_PEERS)
					e->peers[e->npeers++] = (int32_t)v;
			}
		} else if ((s = tok_text(text, t, pk, buf, cap, used, &len))) {
			if (parse_peers(s, len, e))
				e->npeers = 0;
		}
	}
	if (!e->ctype && type_k >= 0 && (s = tok_text(text, t, type_k, buf, cap, used, &len))) {
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
	e->name = "";
	if (t[i].type != EV_JT_OBJECT)
		return EV_ERR_FORMAT;
	size_t used = 0, len;
	int attr = -1, args = -1;
	/* One pass over the members. */
	for (int m = 0, k = i + 1; m < t[i].size; m++) {
		int v = k + 1;
		const char *key = text + t[k].start;
		int kl = t[k].end - t[k].start;
		if (kl == 2 && !memcmp(key, "ph", 2)) {
			if (t[v].end > t[v].start)
				e->ph = text[t[v].start];
		} else if (kl == 4 && !memcmp(key, "name", 4)) {
			e->name = tok_text(text, t, v, buf, cap, &used, &len);
			if (!e->name)
				return EV_ERR_FORMAT;
			e->name_len = len;
		} else if (kl == 3 && !memcmp(key, "cat", 3)) {
			e->cat = tok_text(text, t, v, buf, cap, &used, &len);
			e->cat_len = e->cat ? len : 0;
		} else if (kl == 3 && !memcmp(key, "pid", 3)) {
			if (tok_i64v(text, t, v, &e->pid) == 0)
				e->have_pid = 1;
			else
				e->pid = (int64_t)(ev_hash64(text + t[v].start, (size_t)(t[v].end - t[v].start)) & 0x7FFFFFFF);
		} else if (kl == 3 && !memcmp(key, "tid", 3)) {
			if (tok_u64(text, t, v, &e->tid))
				e->tid = ev_hash64(text + t[v].start, (size_t)(t[v].end - t[v].start));
		} else if (kl == 2 && !memcmp(key, "ts", 2)) {
			int rc = t[v].type != EV_JT_PRIMITIVE ? EV_ERR_FORMAT
			         : ev_parse_decimal_scaled(text + t[v].start, (size_t)(t[v].end - t[v].start), 3, &e->ts);
			if (rc)
				return rc == EV_ERR_RANGE ? rc : EV_ERR_FORMAT;
			e->have_ts = 1;
		} else if (kl == 3 && !memcmp(key, "dur", 3)) {
			int64_t d;
			int rc = t[v].type != EV_JT_PRIMITIVE ? EV_ERR_FORMAT
			         : ev_parse_decimal_scaled(text + t[v].start, (size_t)(t[v].end - t[v].start), 3, &d);
			if (rc)
				return rc == EV_ERR_RANGE ? rc : EV_ERR_FORMAT;
			e->dur = d < 0 ? 0 : (uint64_t)d;
			e->have_dur = d >= 0 ? 1 : -1;
		} else if (kl == 4 && !memcmp(key, "attr", 4)) {
			attr = v;
		} else if (kl == 4 && !memcmp(key, "args", 4)) {
			args = v;
		}
		k = ev_json_skip(t, v);
	}
	if (attr >= 0 && t[attr].type == EV_JT_OBJECT)
		args_of(text, t, attr, buf, cap, &used, e);
	if (args >= 0 && t[args].type == EV_JT_OBJECT)
		args_of(text, t, args, buf, cap, &used, e);
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

int ev_flex_counters(const struct ev_flex_event *e, uint64_t c[5])
{
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
	return ovc;
}

int ev_flex_device_time(const struct ev_flex_event *e, int64_t host_ts, uint64_t host_dur, uint64_t soc_khz,
                        int64_t *ts, uint64_t *dur)
{
	uint64_t c[5];
	int ovc = ev_flex_counters(e, c);
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
