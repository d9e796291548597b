/* SPDX-License-Identifier: MIT */
/*
 * kineto_event.c - one Kineto event, one pass: the event's JSON is
 * validated and the members the conversion needs are found in the same
 * walk over its text, so nothing tokenizes the event first and nothing
 * looks keys up afterwards.
 */
#include <string.h>

#include "ev/kineto.h"
#include "json/json_bytes.h"

struct walk {
	const char *p, *end;
	struct ev_kevent *e;
	uint32_t tokens, max_tokens; /* keys and values, as a tokenizer counts them */
};

static int hexdigit(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* The rest of a string from p, where ev_json_str_stop stopped at an
 * escape or the end of the text (rare: most strings have no escape). */
static __attribute__((noinline)) int string_end_slow(const char *p, const char *end, const char **out)
{
	for (;;) {
		if (p >= end)
			return EV_ERR_FORMAT;
		if (*p == '"') {
			*out = p + 1;
			return EV_OK;
		}
		/* An escape at p. */
		if (p + 1 >= end)
			return EV_ERR_FORMAT;
		char c = p[1];
		if (c == 'u') {
			if (end - p < 6 || !hexdigit(p[2]) || !hexdigit(p[3]) || !hexdigit(p[4]) || !hexdigit(p[5]))
				return EV_ERR_FORMAT;
			p += 6;
		} else if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't') {
			p += 2;
		} else {
			return EV_ERR_FORMAT;
		}
		p = ev_json_str_stop(p, end);
	}
}

/* A string starting after its opening quote; *out is past the closing one. */
static inline int string_end(const char *p, const char *end, const char **out)
{
	p = ev_json_str_stop(p, end);
	if (p < end && *p == '"') {
		*out = p + 1;
		return EV_OK;
	}
	return string_end_slow(p, end, out);
}

/* A number's fraction and exponent, if any, from p (past its integer
 * part): their end, or NULL when they break the grammar (digits after a
 * point and in an exponent).  *num gets EV_KNUM_FRAC and EV_KNUM_EXP. */
static inline __attribute__((always_inline)) const char *number_tail(const char *p, const char *end, unsigned *num)
{
	if (p < end && *p == '.') {
		p++;
		if (p >= end || *p < '0' || *p > '9')
			return NULL;
		p = ev_json_digits_end(p, end);
		*num |= EV_KNUM_FRAC;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || *p < '0' || *p > '9')
			return NULL;
		p = ev_json_digits_end(p, end);
		*num |= EV_KNUM_EXP;
	}
	return p;
}

/* The end of the JSON number at p, by the strict grammar (no leading
 * zero, digits after a point and in an exponent). */
static inline __attribute__((always_inline)) int number_end(const char *p, const char *end, const char **out)
{
	if (p < end && *p == '-')
		p++;
	if (p >= end || *p < '0' || *p > '9')
		return EV_ERR_FORMAT;
	if (*p == '0')
		p++;
	else
		p = ev_json_digits_end(p, end);
	unsigned num = 0;
	if (!(p = number_tail(p, end, &num)))
		return EV_ERR_FORMAT;
	*out = p;
	return EV_OK;
}

/* A number that a slot keeps: as number_end, and the value of its integer
 * part is read in the same pass (see struct ev_kspan): timestamps,
 * durations, ids and sizes are not parsed a second time from the text. */
static inline __attribute__((always_inline)) int number_slot(const char *p, const char *end, struct ev_kspan *slot,
                                                             const char **out)
{
	const char *s = p;
	int neg = *p == '-';
	p += neg;
	if (p >= end || *p < '0' || *p > '9')
		return EV_ERR_FORMAT;
	uint64_t x = 0;
	if (*p == '0')
		p++;
	else
		p = ev_json_digits_value(p, end, &x);
	unsigned num = p - s - neg <= 18 ? EV_KNUM_INT : 0;
	slot->ilen = (uint8_t)(num ? p - s : 0);
	slot->iv = (int64_t)(neg ? 0 - x : x); /* unsigned: -2^63 has no positive twin */
	if (!(p = number_tail(p, end, &num)))
		return EV_ERR_FORMAT;
	slot->p = s;
	slot->n = (uint32_t)(p - s);
	slot->type = 'n';
	slot->num = (uint8_t)num;
	*out = p;
	return EV_OK;
}

/* A string, number or literal at p (not a container): *after is past it,
 * and slot (if any) receives its extent.  Inlined into the member loop:
 * most values are one of these. */
static inline __attribute__((always_inline)) int scalar(const char *p, const char *end, struct ev_kspan *slot, const char **after)
{
	const char *q;
	char c = *p;
	if (c == '"') {
		if (string_end(p + 1, end, &q))
			return EV_ERR_FORMAT;
		if (slot) {
			slot->p = p + 1;
			slot->n = (uint32_t)(q - 1 - (p + 1));
			slot->type = '"';
		}
	} else if (c == 't' || c == 'f' || c == 'n') {
		size_t n = c == 'f' ? 5 : 4;
		const char *lit = c == 't' ? "true" : c == 'f' ? "false" : "null";
		if ((size_t)(end - p) < n || memcmp(p, lit, n))
			return EV_ERR_FORMAT;
		q = p + n;
		if (slot) {
			slot->p = p;
			slot->n = (uint32_t)n;
			slot->type = 'l';
		}
	} else if (slot) {
		if (number_slot(p, end, slot, &q))
			return EV_ERR_FORMAT;
	} else {
		if (number_end(p, end, &q))
			return EV_ERR_FORMAT;
	}
	*after = q;
	return EV_OK;
}

static int value(struct walk *w, int depth, struct ev_kspan *slot, int field_base);

/* A walk that stopped on bad text: the limit's error if the tokens
 * before the stop were already too many (see object). */
static inline int walk_fail(const struct walk *w, uint32_t tokens)
{
	return tokens > w->max_tokens ? EV_ERR_RANGE : EV_ERR_FORMAT;
}

/* An object after its '{'; field_base picks the key table (top or args). */
static int object(struct walk *w, int depth, int field_base)
{
	/* The text's end and the token count stay in registers: w is
	 * written back only around a nested container and on the way out.
	 * Tokens are counted where a tokenizer would count them but compared
	 * with the limit only on the way out (ok or not): an event over the
	 * limit is refused with EV_ERR_RANGE all the same, and a walk that
	 * fails counted exactly what it would have when stopping at the
	 * limit. */
	const char *end = w->end;
	uint32_t tokens = w->tokens;
	const char *p = ev_json_skip_ws(w->p, end);
	if (p < end && *p == '}') {
		w->p = p + 1;
		return tokens > w->max_tokens ? EV_ERR_RANGE : EV_OK;
	}
	for (;;) {
		if (p >= end || *p != '"')
			return walk_fail(w, tokens);
		const char *k = p + 1, *after;
		if (string_end(k, end, &after))
			return walk_fail(w, tokens);
		size_t kn = (size_t)(after - 1 - k);
		tokens++;
		p = ev_json_skip_ws(after, end);
		if (p >= end || *p != ':')
			return walk_fail(w, tokens);
		const char *v = ev_json_skip_ws(p + 1, end);
		struct ev_kspan *slot = NULL;
		int sub = -1; /* "args" is walked with the argument key table */
		if (field_base == 0) {
			switch (kn) {
			case 2:
				if (!memcmp(k, "ph", 2)) slot = &w->e->f[EV_KF_PH];
				else if (!memcmp(k, "ts", 2)) slot = &w->e->f[EV_KF_TS];
				else if (!memcmp(k, "id", 2)) slot = &w->e->f[EV_KF_ID];
				break;
			case 3:
				if (!memcmp(k, "cat", 3)) slot = &w->e->f[EV_KF_CAT];
				else if (!memcmp(k, "dur", 3)) slot = &w->e->f[EV_KF_DUR];
				else if (!memcmp(k, "pid", 3)) slot = &w->e->f[EV_KF_PID];
				else if (!memcmp(k, "tid", 3)) slot = &w->e->f[EV_KF_TID];
				break;
			case 4:
				if (!memcmp(k, "name", 4)) slot = &w->e->f[EV_KF_NAME];
				else if (!memcmp(k, "args", 4)) { slot = &w->e->f[EV_KF_ARGS]; sub = 1; }
				break;
			default: break;
			}
		} else if (field_base == 1) {
			switch (kn) {
			case 4:
				if (!memcmp(k, "grid", 4)) slot = &w->e->f[EV_KA_GRID];
				break;
			case 5:
				if (!memcmp(k, "bytes", 5)) slot = &w->e->f[EV_KA_BYTES];
				else if (!memcmp(k, "block", 5)) slot = &w->e->f[EV_KA_BLOCK];
				else if (!memcmp(k, "dtype", 5)) slot = &w->e->f[EV_KA_DTYPE];
				break;
			case 6:
				if (!memcmp(k, "stream", 6)) slot = &w->e->f[EV_KA_STREAM];
				else if (!memcmp(k, "device", 6)) slot = &w->e->f[EV_KA_DEVICE];
				break;
			case 10:
				if (!memcmp(k, "Input Dims", 10)) slot = &w->e->f[EV_KA_INPUT_DIMS];
				else if (!memcmp(k, "Input type", 10)) slot = &w->e->f[EV_KA_INPUT_TYPE];
				else if (!memcmp(k, "Group size", 10)) slot = &w->e->f[EV_KA_GROUP_SIZE];
				break;
			case 11:
				if (!memcmp(k, "correlation", 11)) slot = &w->e->f[EV_KA_CORRELATION];
				else if (!memcmp(k, "External id", 11)) slot = &w->e->f[EV_KA_EXTERNAL_ID];
				break;
			case 13:
				if (!memcmp(k, "In msg nelems", 13)) slot = &w->e->f[EV_KA_IN_NELEMS];
				else if (!memcmp(k, "Input Strides", 13)) slot = &w->e->f[EV_KA_INPUT_STRIDES];
				break;
			case 14:
				if (!memcmp(k, "Out msg nelems", 14)) slot = &w->e->f[EV_KA_OUT_NELEMS];
				else if (!memcmp(k, "wait_on_stream", 14)) slot = &w->e->f[EV_KA_WAIT_STREAM];
				break;
			case 15:
				if (!memcmp(k, "Collective name", 15)) slot = &w->e->f[EV_KA_COLL_NAME];
				else if (!memcmp(k, "Concrete Inputs", 15)) slot = &w->e->f[EV_KA_CONCRETE];
				break;
			case 18:
				if (!memcmp(k, "Process Group Name", 18)) slot = &w->e->f[EV_KA_PG_NAME];
				break;
			case 19:
				if (!memcmp(k, "Process Group Ranks", 19)) slot = &w->e->f[EV_KA_PG_RANKS];
				break;
			case 25:
				if (!memcmp(k, "Process Group Description", 25)) slot = &w->e->f[EV_KA_PG_DESC];
				break;
			case 23:
				if (!memcmp(k, "memory bandwidth (GB/s)", 23)) slot = &w->e->f[EV_KA_MEM_BW];
				break;
			case 33:
				if (!memcmp(k, "wait_on_cuda_event_record_corr_id", 33)) slot = &w->e->f[EV_KA_WAIT_CORR];
				break;
			default: break;
			}
		}
		if (slot && slot->type) /* a repeated key keeps its first value */
			slot = NULL, sub = -1;
		if (v < end && *v != '{' && *v != '[') {
			tokens++;
			if (scalar(v, end, slot, &p))
				return walk_fail(w, tokens);
		} else {
			w->p = v;
			w->tokens = tokens;
			int rc = value(w, depth, slot, sub);
			if (rc)
				return rc;
			p = w->p;
			tokens = w->tokens;
		}
		p = ev_json_skip_ws(p, end);
		if (p < end && *p == ',') {
			p = ev_json_skip_ws(p + 1, end);
			continue;
		}
		if (p < end && *p == '}') {
			w->p = p + 1;
			w->tokens = tokens;
			return tokens > w->max_tokens ? EV_ERR_RANGE : EV_OK;
		}
		return walk_fail(w, tokens);
	}
}

/* An array after its '['.  As in object, scalars are walked inline: the
 * shapes of an operator's inputs are arrays of arrays of numbers. */
static int array(struct walk *w, int depth)
{
	const char *end = w->end;
	const char *p = ev_json_skip_ws(w->p, end);
	if (p < end && *p == ']') {
		w->p = p + 1;
		return EV_OK;
	}
	for (;;) {
		if (p >= end)
			return EV_ERR_FORMAT;
		if (*p != '{' && *p != '[') {
			if (++w->tokens > w->max_tokens)
				return EV_ERR_RANGE;
			if (scalar(p, end, NULL, &p))
				return EV_ERR_FORMAT;
		} else {
			w->p = p;
			int rc = value(w, depth, NULL, -1);
			if (rc)
				return rc;
			p = w->p;
		}
		p = ev_json_skip_ws(p, end);
		if (p < end && *p == ',') {
			p = ev_json_skip_ws(p + 1, end);
			continue;
		}
		if (p < end && *p == ']') {
			w->p = p + 1;
			return EV_OK;
		}
		return EV_ERR_FORMAT;
	}
}

/* One value at w->p; slot (if any) receives its extent.  sub >= 0: an
 * object value is walked with that key table (1 = args). */
static int value(struct walk *w, int depth, struct ev_kspan *slot, int sub)
{
	const char *p = w->p;
	if (p >= w->end)
		return EV_ERR_FORMAT;
	if (++w->tokens > w->max_tokens)
		return EV_ERR_RANGE;
	char c = *p;
	if (c != '{' && c != '[')
		return scalar(p, w->end, slot, &w->p);
	if (depth + 1 > EV_JSON_MAX_DEPTH)
		return EV_ERR_LIMIT;
	w->p = p + 1;
	int rc = c == '{' ? object(w, depth + 1, sub == 1 ? 1 : 2) : array(w, depth + 1);
	if (rc)
		return rc;
	if (slot) {
		slot->p = p;
		slot->n = (uint32_t)(w->p - p);
		slot->type = c;
	}
	return EV_OK;
}

void ev_kevent_clear(struct ev_kevent *e, int from)
{
	/* The types alone, one byte store each: a memset of the whole array
	 * was 2% of kineto2ev's instructions. */
#pragma GCC unroll 32
	for (int i = from; i < EV_KF_COUNT; i++)
		e->f[i].type = 0;
}

int ev_kineto_scan_prefix(const char *text, size_t len, uint32_t max_tokens, struct ev_kevent *e, size_t *used)
{
	ev_kevent_clear(e, 0);
	e->is_object = 0;
	if (len > UINT32_MAX)
		return EV_ERR_LIMIT;
	struct walk w = { ev_json_skip_ws(text, text + len), text + len, e, 0, max_tokens ? max_tokens : UINT32_MAX };
	if (w.p >= w.end)
		return EV_ERR_FORMAT;
	int obj = *w.p == '{';
	int rc;
	if (obj) {
		w.p++;
		w.tokens = 1; /* the event object itself */
		rc = object(&w, 1, 0);
	} else {
		rc = value(&w, 0, NULL, -1);
		ev_kevent_clear(e, 0); /* not an object: no members */
	}
	if (rc)
		return rc;
	e->is_object = obj;
	*used = (size_t)(w.p - text);
	return EV_OK;
}

int ev_kineto_scan_event(const char *text, size_t len, uint32_t max_tokens, struct ev_kevent *e)
{
	size_t used;
	int rc = ev_kineto_scan_prefix(text, len, max_tokens, e, &used);
	if (rc)
		return rc;
	if (ev_json_skip_ws(text + used, text + len) != text + len) {
		e->is_object = 0;
		return EV_ERR_FORMAT; /* one value, nothing after it */
	}
	return EV_OK;
}

int ev_kspan_eq(const struct ev_kspan *s, const char *text)
{
	size_t n = strlen(text);
	return s->type && s->n == n && memcmp(s->p, text, n) == 0;
}

/* The text of a number or numeric string that the scanner did not read
 * (or could not: a sign with a fraction, an exponent, 19 digits). */
static __attribute__((noinline)) int span_i64_text(const struct ev_kspan *s, int64_t *v)
{
	char buf[32];
	if ((s->type != 'n' && s->type != '"') || s->n == 0 || s->n >= sizeof buf)
		return -1;
	/* Ids, pids and sizes are plain integers of at most 18 digits, which
	 * no int64 overflows: read them where they are.  Anything else (a
	 * sign, a fraction, an exponent, 19 digits and more) goes the long way. */
	if (s->n <= 18) {
		uint64_t x = 0;
		uint32_t i = 0;
		while (i < s->n && (unsigned)(s->p[i] - '0') < 10)
			x = x * 10 + (unsigned)(s->p[i++] - '0');
		if (i == s->n) {
			*v = (int64_t)x;
			return 0;
		}
	}
	memcpy(buf, s->p, s->n);
	buf[s->n] = '\0';
	if (ev_parse_i64(buf, v) == 0)
		return 0;
	double d;
	if (ev_parse_double(buf, &d) == 0 && d >= -9.2e18 && d <= 9.2e18) {
		*v = (int64_t)d;
		return 0;
	}
	return -1;
}

int ev_kspan_i64(const struct ev_kspan *s, int64_t *v)
{
	if (s->type == 'n' && (s->num & (EV_KNUM_INT | EV_KNUM_FRAC | EV_KNUM_EXP)) == EV_KNUM_INT) {
		*v = s->iv; /* an integer the scanner read */
		return 0;
	}
	return span_i64_text(s, v);
}

/* Microseconds from the text: decimals, then exponent notation through
 * double (rare in traces). */
static __attribute__((noinline)) int span_us_to_ns_text(const struct ev_kspan *s, int64_t *ns)
{
	int rc = ev_parse_decimal_scaled(s->p, s->n, 3, ns);
	if (rc != EV_ERR_ARG)
		return rc; /* read, or digits too many for 64-bit ns */
	char buf[64];
	double d;
	if (s->n >= sizeof buf)
		return EV_ERR_FORMAT;
	memcpy(buf, s->p, s->n);
	buf[s->n] = '\0';
	if (ev_parse_double(buf, &d))
		return EV_ERR_FORMAT;
	if (!(d * 1000.0 <= 9.2e18 && d * 1000.0 >= -9.2e18))
		return EV_ERR_RANGE;
	*ns = (int64_t)(d * 1000.0 + (d >= 0 ? 0.5 : -0.5));
	return 0;
}

int ev_kspan_us_to_ns(const struct ev_kspan *s, int64_t *ns)
{
	if (s->type != 'n')
		return EV_ERR_FORMAT;
	/* The scanner read the integer part: add three decimals, rounded half
	 * away from zero at the fourth as ev_parse_decimal_scaled does.  Up to
	 * 9e15 us nothing can overflow; beyond, and with an exponent, the
	 * text is read again. */
	if ((s->num & (EV_KNUM_INT | EV_KNUM_EXP)) != EV_KNUM_INT || s->iv > 9000000000000000 ||
	    s->iv < -9000000000000000)
		return span_us_to_ns_text(s, ns);
	uint64_t m = (uint64_t)(s->iv < 0 ? -s->iv : s->iv) * 1000;
	if (s->num & EV_KNUM_FRAC) {
		const char *f = s->p + s->ilen + 1;
		uint32_t fn = s->n - s->ilen - 1;
		m += (uint64_t)(f[0] - '0') * 100;
		if (fn > 1)
			m += (uint64_t)(f[1] - '0') * 10;
		if (fn > 2)
			m += (uint64_t)(f[2] - '0');
		if (fn > 3 && f[3] >= '5')
			m++;
	}
	*ns = s->p[0] == '-' ? -(int64_t)m : (int64_t)m;
	return 0;
}

size_t ev_kspan_text(const struct ev_kspan *s, char *out, size_t cap)
{
	if (!s->type || (size_t)s->n + 1 > cap)
		return (size_t)-1;
	if (s->type != '"' || !memchr(s->p, '\\', s->n)) {
		memcpy(out, s->p, s->n);
		out[s->n] = '\0';
		return s->n;
	}
	/* Escapes: ev_json_str undoes them from a token. */
	struct ev_json_tok t = { EV_JT_STRING, 0, (int)s->n, 0 };
	return ev_json_str(s->p, &t, 0, out);
}
