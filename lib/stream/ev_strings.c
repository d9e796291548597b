/* SPDX-License-Identifier: MIT */
/*
 * ev_strings.c - content-hashed string ids (ev_hash64), the string table,
 * and the escaping of text fields.
 */
#include <stdlib.h>
#include <string.h>

#include "ev/stream.h"

#define K1 0x9E3779B97F4A7C15ULL
#define K2 0xC2B2AE3D27D4EB4FULL
#define K3 0x165667B19E3779F9ULL

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xFF51AFD7ED558CCDULL;
	x ^= x >> 33;
	x *= 0xC4CEB9FE1A85EC53ULL;
	x ^= x >> 33;
	return x;
}

/* Specified in docs/FORMAT.md section 6; change both or neither. */
uint64_t ev_hash64(const void *data, size_t n)
{
	const unsigned char *p = data;
	uint64_t h = K3 ^ ((uint64_t)n * K1);
	size_t i = 0;
	if (n == 0)
		return 0;
	for (; i + 8 <= n; i += 8)
		h = (h ^ mix64(ev_le64(p + i) * K2)) * K1 + K3;
	if (i < n) {
		unsigned char t[8] = { 0 };
		memcpy(t, p + i, n - i);
		h = (h ^ mix64(ev_le64(t) * K2 + (uint64_t)n)) * K1 + K3;
	}
	h = mix64(h);
	return h ? h : 1;
}

/* Open addressing on the id itself (already a good hash).  Texts live in
 * large arena blocks so interning never mallocs per string, each after a
 * head with its length and stamp (the reader segment that defined it
 * first, ev_strtab_define_in): an entry is 16 bytes, as a table holds
 * every distinct name of the stream, ProfilerStep#N one per iteration. */
struct entry { uint64_t id; const char *text; };
struct head { uint32_t len, stamp; };

static const struct head *head_of(const char *text)
{
	return (const struct head *)(const void *)(text - sizeof(struct head));
}

struct arena_block { struct arena_block *next; size_t used, cap; char data[]; };

/* Texts interned lately, by a cheap key: a converter interns the same few
 * hundred names over and over, and ev_hash64 over a 300-byte kernel name
 * costs more than comparing it with the copy it already has. */
#define RECENT 1024
struct recent { uint64_t key; const char *text; size_t len; uint64_t id; };

struct ev_strtab {
	struct entry *tab;
	size_t cap, count;
	struct arena_block *arena;
	struct recent *recent; /* RECENT entries, allocated at first use */
	uint32_t stamps;       /* the last stamp handed out */
};

ev_strtab *ev_strtab_new(void)
{
	ev_strtab *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->cap = 1024;
	t->tab = calloc(t->cap, sizeof *t->tab);
	if (!t->tab) {
		free(t);
		return NULL;
	}
	return t;
}

void ev_strtab_free(ev_strtab *t)
{
	if (!t)
		return;
	struct arena_block *b = t->arena;
	while (b) {
		struct arena_block *next = b->next;
		free(b);
		b = next;
	}
	free(t->tab);
	free(t->recent);
	free(t);
}

static struct entry *slot(const ev_strtab *t, uint64_t id)
{
	size_t mask = t->cap - 1, i = (size_t)id & mask;
	while (t->tab[i].id && t->tab[i].id != id)
		i = (i + 1) & mask;
	return &t->tab[i];
}

static int grow(ev_strtab *t)
{
	size_t ncap = t->cap * 2;
	/* Zeroed by writing (see ev_map_put): not calloc's fresh pages. */
	struct entry *old = t->tab, *nt = malloc(ncap * sizeof *nt);
	if (!nt)
		return EV_ERR_NOMEM;
	memset(nt, 0, ncap * sizeof *nt);
	size_t ocap = t->cap;
	t->tab = nt;
	t->cap = ncap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].id)
			*slot(t, old[i].id) = old[i];
	free(old);
	return EV_OK;
}

/* A copy of s after its head, the next head kept aligned. */
static const char *arena_copy(ev_strtab *t, const char *s, size_t len, uint32_t stamp)
{
	struct arena_block *b = t->arena;
	size_t need = (sizeof(struct head) + len + 1 + 7) & ~(size_t)7;
	if (!b || b->cap - b->used < need) {
		size_t cap = need > 256 * 1024 ? need : 256 * 1024;
		b = malloc(sizeof *b + cap);
		if (!b)
			return NULL;
		b->used = 0;
		b->cap = cap;
		b->next = t->arena;
		t->arena = b;
	}
	struct head h = { (uint32_t)len, stamp };
	char *dst = b->data + b->used + sizeof h;
	memcpy(dst - sizeof h, &h, sizeof h);
	memcpy(dst, s, len);
	dst[len] = '\0';
	b->used += need;
	return dst;
}

/* The stored copy of id's text goes to *stored (when not NULL); a new
 * entry takes stamp, and *fresh (when not NULL) says whether it is new. */
static int insert(ev_strtab *t, uint64_t id, const char *text, size_t len, const char **stored, uint32_t stamp,
                  int *fresh)
{
	struct entry *e = slot(t, id);
	if (fresh)
		*fresh = 0;
	if (e->id) {
		if (head_of(e->text)->len != len || memcmp(e->text, text, len) != 0)
			return EV_ERR_COLLISION;
		if (stored)
			*stored = e->text;
		return EV_OK;
	}
	if (len > UINT32_MAX)
		return EV_ERR_NOMEM;
	if ((t->count + 1) * 4 > t->cap * 3) {
		if (grow(t))
			return EV_ERR_NOMEM;
		e = slot(t, id);
	}
	const char *copy = arena_copy(t, text, len, stamp);
	if (!copy)
		return EV_ERR_NOMEM;
	e->id = id;
	e->text = copy;
	t->count++;
	if (stored)
		*stored = copy;
	if (fresh)
		*fresh = 1;
	return EV_OK;
}

/* A key for the recent-text cache from the length and three words (the
 * first, middle and last eight bytes): names that differ only elsewhere
 * share a slot, and the compare that confirms a hit tells them apart. */
static uint64_t recent_key(const char *s, size_t len)
{
	uint64_t a = 0, b = 0, c = 0;
	if (len >= 8) {
		memcpy(&a, s, 8);
		memcpy(&b, s + (len - 8) / 2, 8);
		memcpy(&c, s + len - 8, 8);
	} else {
		memcpy(&a, s, len);
	}
	uint64_t h = (a ^ (uint64_t)len * K1) * K2;
	h = (h ^ b ^ (h >> 29)) * K1;
	h = (h ^ c ^ (h >> 31)) * K2;
	return h ^ (h >> 32);
}

int ev_strtab_intern(ev_strtab *t, const char *text, size_t len, uint64_t *id)
{
	if (len == 0) {
		*id = 0;
		return EV_OK;
	}
	if (!t->recent)
		t->recent = calloc(RECENT, sizeof *t->recent); /* NULL: no cache, still correct */
	uint64_t key = recent_key(text, len);
	struct recent *r = t->recent ? &t->recent[key & (RECENT - 1)] : NULL;
	if (r && r->text && r->key == key && r->len == len && memcmp(r->text, text, len) == 0) {
		*id = r->id;
		return EV_OK;
	}
	uint64_t h = ev_hash64(text, len);
	const char *stored;
	*id = h;
	int rc = insert(t, h, text, len, &stored, 0, NULL);
	if (rc == EV_OK && r)
		*r = (struct recent){ key, stored, len, h };
	return rc;
}

int ev_strtab_define(ev_strtab *t, uint64_t id, const char *text, size_t len)
{
	return ev_strtab_define_in(t, id, text, len, 0, NULL);
}

uint32_t ev_strtab_new_stamp(ev_strtab *t)
{
	return t->stamps == UINT32_MAX ? 0 : ++t->stamps;
}

int ev_strtab_define_in(ev_strtab *t, uint64_t id, const char *text, size_t len, uint32_t stamp, int *fresh)
{
	if (fresh)
		*fresh = 0;
	if (id == 0 || ev_hash64(text, len) != id)
		return EV_ERR_FORMAT;
	return insert(t, id, text, len, NULL, stamp, fresh);
}

uint32_t ev_strtab_stamp(const ev_strtab *t, uint64_t id)
{
	const struct entry *e = slot(t, id);
	return e->id ? head_of(e->text)->stamp : 0;
}

const char *ev_strtab_get(const ev_strtab *t, uint64_t id, size_t *len)
{
	if (id == 0) {
		if (len)
			*len = 0;
		return "";
	}
	const struct entry *e = slot(t, id);
	if (!e->id)
		return NULL;
	if (len)
		*len = head_of(e->text)->len;
	return e->text;
}

size_t ev_strtab_count(const ev_strtab *t) { return t->count; }

int ev_strtab_absorb(ev_strtab *t, const ev_strtab *from)
{
	for (size_t i = 0; i < from->cap; i++) {
		const struct entry *e = &from->tab[i];
		int rc;
		if (e->id && (rc = insert(t, e->id, e->text, head_of(e->text)->len, NULL, 0, NULL)) != EV_OK)
			return rc;
	}
	return EV_OK;
}

int ev_looks_json(const char *text, size_t n)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t i = n >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF ? 3 : 0;
	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
		i++;
	return i < n && (p[i] == '{' || p[i] == '[');
}

size_t ev_text_escape(const char *src, size_t len, char *dst, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < len && o + 2 < n; i++) {
		char c = src[i];
		if (c == '\\' || c == '\t' || c == '\n') {
			dst[o++] = '\\';
			dst[o++] = c == '\\' ? '\\' : c == '\t' ? 't' : 'n';
		} else {
			dst[o++] = c;
		}
	}
	if (o < n)
		dst[o] = '\0';
	return o;
}

size_t ev_text_unescape(char *s, size_t len)
{
	const char *bs = memchr(s, '\\', len);
	if (!bs)
		return len;
	size_t o = (size_t)(bs - s);
	for (size_t i = o; i < len; i++) {
		char c = s[i];
		if (c == '\\') {
			if (++i >= len)
				return (size_t)-1;
			switch (s[i]) {
			case '\\': c = '\\'; break;
			case 't': c = '\t'; break;
			case 'n': c = '\n'; break;
			default: return (size_t)-1;
			}
		}
		s[o++] = c;
	}
	return o;
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len;
	unsigned min;
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		len = 2, min = 0x80;
	else if (c >= 0xE0 && c <= 0xEF)
		len = 3, min = 0x800;
	else if (c >= 0xF0 && c <= 0xF4)
		len = 4, min = 0x10000;
	else
		return 0;
	if (n < len)
		return 0;
	unsigned cp = c & (0x3F >> (len - 1));
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return len;
}

size_t ev_json_escape(const char *src, size_t len, char *dst, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)src;
	size_t o = 0;
	if (cap < 6 * len + 3)
		return 0;
	dst[o++] = '"';
	for (size_t i = 0; i < len;) {
		unsigned char c = s[i];
		if (c == '"' || c == '\\') {
			dst[o++] = '\\';
			dst[o++] = (char)c;
			i++;
		} else if (c < 0x20) {
			dst[o++] = '\\';
			switch (c) {
			case '\n': dst[o++] = 'n'; break;
			case '\t': dst[o++] = 't'; break;
			case '\r': dst[o++] = 'r'; break;
			default:
				dst[o++] = 'u';
				dst[o++] = '0';
				dst[o++] = '0';
				dst[o++] = hex[c >> 4];
				dst[o++] = hex[c & 15];
			}
			i++;
		} else if (c < 0x80) {
			dst[o++] = (char)c;
			i++;
		} else {
			size_t n = utf8_len(s + i, len - i);
			if (n == 0) {
				memcpy(dst + o, "\\ufffd", 6);
				o += 6;
				i++;
			} else {
				memcpy(dst + o, s + i, n);
				o += n;
				i += n;
			}
		}
	}
	dst[o++] = '"';
	return o;
}
