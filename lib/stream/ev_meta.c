/* SPDX-License-Identifier: MIT */
/*
 * ev_meta.c - parsed metadata text lines (#src #rank #comm #ring #tree
 * #process #thread #meta), kept in order of first appearance and looked
 * up by key.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev/stream.h"

/* A communicator and the line that gave its size, to name it when a later
 * line contradicts it (info first: the vector's pointer is to both). */
struct comm_rec {
	struct ev_comm_info info;
	int sized;          /* a line gave nranks= or ranks= */
	char *origin;       /* that line's input name (NULL: not said) */
	uint64_t line;      /* and number */
	char *text;         /* its first bytes */
};
#define COMM_TEXT 160

struct ev_meta {
	struct ev_vec src, rank, comm, ring, tree, proc, thread; /* vectors of pointers */
	struct ev_map src_ix, rank_ix, comm_ix, ring_ix, tree_ix, proc_ix, thread_ix; /* key -> index + 1 */
	struct ev_kv *kv;
	size_t nkv;
	const char *at_name; /* where the line being added is (ev_meta_add_line_at) */
	uint64_t at_line;
	char conflict[COMM_TEXT + 1200];
};

ev_meta *ev_meta_new(void)
{
	ev_meta *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	ev_vec_init(&m->src, sizeof(void *));
	ev_vec_init(&m->rank, sizeof(void *));
	ev_vec_init(&m->comm, sizeof(void *));
	ev_vec_init(&m->ring, sizeof(void *));
	ev_vec_init(&m->tree, sizeof(void *));
	ev_vec_init(&m->proc, sizeof(void *));
	ev_vec_init(&m->thread, sizeof(void *));
	return m;
}

static void free_kv(struct ev_kv *kv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].val);
	}
	free(kv);
}

#define PTR(v, i) (((void **)(v)->data)[i])

void ev_meta_free(ev_meta *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->src.len; i++) {
		struct ev_src_info *s = PTR(&m->src, i);
		free(s->label);
		free(s->file);
		free_kv(s->kv, s->nkv);
		free(s);
	}
	for (size_t i = 0; i < m->rank.len; i++) {
		struct ev_rank_info *r = PTR(&m->rank, i);
		free_kv(r->kv, r->nkv);
		free(r);
	}
	for (size_t i = 0; i < m->comm.len; i++) {
		struct comm_rec *c = PTR(&m->comm, i);
		free(c->info.ranks);
		free_kv(c->info.kv, c->info.nkv);
		free(c->origin);
		free(c->text);
		free(c);
	}
	for (size_t i = 0; i < m->ring.len; i++) {
		struct ev_ring_info *r = PTR(&m->ring, i);
		free(r->order);
		free(r);
	}
	for (size_t i = 0; i < m->tree.len; i++) {
		struct ev_tree_info *t = PTR(&m->tree, i);
		free(t->nodes);
		free(t);
	}
	for (size_t i = 0; i < m->proc.len; i++) {
		struct ev_process_info *p = PTR(&m->proc, i);
		free(p->name);
		free(p->labels);
		free(p);
	}
	for (size_t i = 0; i < m->thread.len; i++) {
		struct ev_thread_info *t = PTR(&m->thread, i);
		free(t->name);
		free(t);
	}
	ev_vec_free(&m->proc);
	ev_vec_free(&m->thread);
	ev_map_free(&m->proc_ix);
	ev_map_free(&m->thread_ix);
	ev_vec_free(&m->src);
	ev_vec_free(&m->rank);
	ev_vec_free(&m->comm);
	ev_vec_free(&m->ring);
	ev_vec_free(&m->tree);
	ev_map_free(&m->src_ix);
	ev_map_free(&m->rank_ix);
	ev_map_free(&m->comm_ix);
	ev_map_free(&m->ring_ix);
	ev_map_free(&m->tree_ix);
	free_kv(m->kv, m->nkv);
	free(m);
}

/* Split a line into fields separated by runs of spaces or TABs.  The copy
 * in buf is modified in place; returns the number of fields. */
static size_t split(char *buf, char **f, size_t maxf)
{
	size_t n = 0;
	char *p = buf;
	while (*p) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		if (n == maxf)
			return maxf + 1;
		f[n++] = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (*p)
			*p++ = '\0';
	}
	return n;
}

/* Set key to val in a kv list (replace or append). */
static int kv_set(struct ev_kv **kv, size_t *n, const char *key, size_t klen, const char *val)
{
	for (size_t i = 0; i < *n; i++)
		if (strlen((*kv)[i].key) == klen && memcmp((*kv)[i].key, key, klen) == 0) {
			char *v = strdup(val);
			if (!v)
				return EV_ERR_NOMEM;
			free((*kv)[i].val);
			(*kv)[i].val = v;
			return EV_OK;
		}
	struct ev_kv *nk = realloc(*kv, (*n + 1) * sizeof **kv);
	if (!nk)
		return EV_ERR_NOMEM;
	*kv = nk;
	nk[*n].key = strndup(key, klen);
	nk[*n].val = strdup(val);
	if (!nk[*n].key || !nk[*n].val) {
		free(nk[*n].key);
		free(nk[*n].val);
		return EV_ERR_NOMEM;
	}
	(*n)++;
	return EV_OK;
}

/* Parse "key=value" fields f[0..n) into a kv list. */
static int add_kvs(struct ev_kv **kv, size_t *nkv, char **f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *eq = strchr(f[i], '=');
		if (!eq || eq == f[i])
			return EV_ERR_FORMAT;
		char *val = eq + 1;
		size_t vlen = ev_text_unescape(val, strlen(val));
		if (vlen == (size_t)-1)
			return EV_ERR_FORMAT;
		val[vlen] = '\0';
		int rc = kv_set(kv, nkv, f[i], (size_t)(eq - f[i]), val);
		if (rc)
			return rc;
	}
	return EV_OK;
}

const char *ev_kv_get(const struct ev_kv *kv, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(kv[i].key, key) == 0)
			return kv[i].val;
	return NULL;
}

/* Find or create the item with the given key in vector v / index map ix. */
static void *find_or_add(struct ev_vec *v, struct ev_map *ix, uint64_t key, size_t size, int *created)
{
	uint64_t *p = ev_map_get(ix, key);
	*created = 0;
	if (p)
		return PTR(v, *p - 1);
	void *item = calloc(1, size);
	void **slot = item ? ev_vec_push(v) : NULL;
	if (!slot || ev_map_put(ix, key, v->len) != EV_OK) {
		if (slot)
			v->len--;
		free(item);
		return NULL;
	}
	*slot = item;
	*created = 1;
	return item;
}

static uint64_t pair_key(uint64_t comm, uint32_t channel)
{
	unsigned char b[12];
	ev_put64(b, comm);
	ev_put32(b + 8, channel);
	return ev_hash64(b, sizeof b);
}

static int parse_int_list(const char *s, int32_t **out, uint32_t *count)
{
	size_t n = 1;
	for (const char *p = s; *p; p++)
		n += *p == ',';
	int32_t *a = malloc(n * sizeof *a);
	if (!a)
		return EV_ERR_NOMEM;
	char tmp[32];
	size_t i = 0;
	const char *p = s;
	while (i < n) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == 0 || len >= sizeof tmp) {
			free(a);
			return EV_ERR_FORMAT;
		}
		memcpy(tmp, p, len);
		tmp[len] = '\0';
		if (ev_parse_i32(tmp, &a[i]) || a[i] < -1) {
			free(a);
			return EV_ERR_FORMAT;
		}
		i++;
		p = e ? e + 1 : p + len;
	}
	*out = a;
	*count = (uint32_t)n;
	return EV_OK;
}

static int add_src(ev_meta *m, char **f, size_t n)
{
	uint32_t id;
	int created;
	if (n < 2 || ev_parse_u32(f[1], &id) || id > 0xFFFF)
		return EV_ERR_FORMAT;
	struct ev_src_info *s = find_or_add(&m->src, &m->src_ix, (uint64_t)id + 1, sizeof *s, &created);
	if (!s)
		return EV_ERR_NOMEM;
	s->n = id;
	int rc = add_kvs(&s->kv, &s->nkv, f + 2, n - 2);
	if (rc)
		return rc;
	const char *l = ev_kv_get(s->kv, s->nkv, "label"), *fl = ev_kv_get(s->kv, s->nkv, "file");
	free(s->label);
	free(s->file);
	s->label = l ? strdup(l) : NULL;
	s->file = fl ? strdup(fl) : NULL;
	return (l && !s->label) || (fl && !s->file) ? EV_ERR_NOMEM : EV_OK;
}

static int add_rank(ev_meta *m, char **f, size_t n)
{
	uint32_t r;
	int created;
	if (n < 2 || ev_parse_u32(f[1], &r) || r == UINT32_MAX)
		return EV_ERR_FORMAT;
	struct ev_rank_info *ri = find_or_add(&m->rank, &m->rank_ix, (uint64_t)r + 1, sizeof *ri, &created);
	if (!ri)
		return EV_ERR_NOMEM;
	ri->rank = r;
	return add_kvs(&ri->kv, &ri->nkv, f + 2, n - 2);
}

/* Remember the line that sized communicator c, for a later conflict. */
static int comm_origin(ev_meta *m, struct comm_rec *c, const char *line, size_t len)
{
	char *o = m->at_name ? strdup(m->at_name) : NULL;
	char *t = malloc(COMM_TEXT + 4);
	if ((m->at_name && !o) || !t) {
		free(o);
		free(t);
		return EV_ERR_NOMEM;
	}
	snprintf(t, COMM_TEXT + 4, "%.*s%s", (int)(len > COMM_TEXT ? COMM_TEXT : len), line, len > COMM_TEXT ? "..." : "");
	free(c->origin);
	free(c->text);
	c->origin = o;
	c->text = t;
	c->line = m->at_line;
	return EV_OK;
}

/* Does a line of size nr (when sized) and members a (NULL: none given)
 * contradict what c holds?  Another size, or another global rank for a
 * member both know, is two communicators under one id: whichever a tool
 * took, its answer would be wrong for the other.  A member one of them
 * leaves unknown (-1) is no contradiction. */
static int comm_conflict(ev_meta *m, const struct comm_rec *c, int sized, uint32_t nr, const int32_t *a)
{
	char why[96];
	uint32_t i = 0;
	if (c->sized && sized && c->info.nranks != nr) {
		snprintf(why, sizeof why, "%u ranks here, %u there", nr, c->info.nranks);
	} else {
		while (a && c->info.ranks && i < nr && !(a[i] >= 0 && c->info.ranks[i] >= 0 && a[i] != c->info.ranks[i]))
			i++;
		if (!a || !c->info.ranks || i == nr)
			return EV_OK;
		snprintf(why, sizeof why, "comm rank %u is global rank %d here, %d there", i, (int)a[i], (int)c->info.ranks[i]);
	}
	int same = c->origin && m->at_name && strcmp(c->origin, m->at_name) == 0;
	if (c->origin && c->line)
		snprintf(m->conflict, sizeof m->conflict, "%s%sline %llu (%s): %s", same ? "" : c->origin, same ? "" : " ",
		         (unsigned long long)c->line, c->text, why);
	else
		snprintf(m->conflict, sizeof m->conflict, "an earlier line (%s): %s", c->text ? c->text : "#comm", why);
	return EV_ERR_FORMAT;
}

static int add_comm(ev_meta *m, char **f, size_t n, const char *line, size_t len)
{
	uint64_t id;
	int created = 0;
	if (n < 2 || ev_parse_u64(f[1], &id))
		return EV_ERR_FORMAT;
	/* The line's own size and members first, checked against earlier
	 * lines of the id before anything of it is merged. */
	struct ev_kv *kv = NULL;
	size_t nkv = 0;
	int32_t *a = NULL;
	uint32_t nr = 0, cnt = 0;
	int rc = add_kvs(&kv, &nkv, f + 2, n - 2);
	const char *nrs = rc ? NULL : ev_kv_get(kv, nkv, "nranks");
	const char *rk = rc ? NULL : ev_kv_get(kv, nkv, "ranks");
	if (nrs && ev_parse_u32(nrs, &nr))
		rc = EV_ERR_FORMAT;
	if (!rc && rk && (rc = parse_int_list(rk, &a, &cnt)) == EV_OK) {
		if (nrs && cnt != nr)
			rc = EV_ERR_FORMAT;
		nr = cnt;
	}
	int sized = nrs || rk;
	/* Comm id 0 is legal; index it under a substitute key. */
	struct comm_rec *c = rc ? NULL : find_or_add(&m->comm, &m->comm_ix, id ? id : UINT64_MAX, sizeof *c, &created);
	if (!rc && !c)
		rc = EV_ERR_NOMEM;
	if (!rc && !created)
		rc = comm_conflict(m, c, sized, nr, a);
	/* The line named later is the last that told something new: the
	 * size, or a member left unknown before. */
	int news = !rc && (created || (sized && !c->sized) || (a && !c->info.ranks));
	for (uint32_t i = 0; !rc && !news && a && i < nr; i++)
		news = c->info.ranks[i] < 0 && a[i] >= 0;
	if (!rc && news)
		rc = comm_origin(m, c, line, len);
	for (size_t i = 0; !rc && i < nkv; i++)
		rc = kv_set(&c->info.kv, &c->info.nkv, kv[i].key, strlen(kv[i].key), kv[i].val);
	if (!rc) {
		c->info.id = id;
		if (sized) {
			c->info.nranks = nr;
			c->sized = 1;
		}
		if (a && c->info.ranks) {
			for (uint32_t i = 0; i < nr; i++)
				if (c->info.ranks[i] < 0)
					c->info.ranks[i] = a[i];
		} else if (a) {
			c->info.ranks = a;
			a = NULL;
		}
	}
	free(a);
	free_kv(kv, nkv);
	return rc;
}

static int add_ring(ev_meta *m, char **f, size_t n)
{
	uint64_t comm;
	uint32_t ch;
	int created;
	if (n < 4 || ev_parse_u64(f[1], &comm) || ev_parse_u32(f[2], &ch) || ch > 0xFFFF)
		return EV_ERR_FORMAT;
	int32_t *order = malloc((n - 3) * sizeof *order);
	if (!order)
		return EV_ERR_NOMEM;
	for (size_t i = 3; i < n; i++)
		if (ev_parse_i32(f[i], &order[i - 3]) || order[i - 3] < 0) {
			free(order);
			return EV_ERR_FORMAT;
		}
	struct ev_ring_info *r = find_or_add(&m->ring, &m->ring_ix, pair_key(comm, ch), sizeof *r, &created);
	if (!r) {
		free(order);
		return EV_ERR_NOMEM;
	}
	free(r->order);
	r->comm = comm;
	r->channel = ch;
	r->order = order;
	r->n = (uint32_t)(n - 3);
	return EV_OK;
}

static int parse_node(char *s, struct ev_tree_node *nd)
{
	char *c1 = strchr(s, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (!c2)
		return EV_ERR_FORMAT;
	*c1 = *c2 = '\0';
	if (ev_parse_i32(s, &nd->rank) || nd->rank < 0 || ev_parse_i32(c1 + 1, &nd->up) || nd->up < -1)
		return EV_ERR_FORMAT;
	char *d = c2 + 1;
	for (int i = 0; i < 3; i++) {
		char *comma = strchr(d, ',');
		if ((i < 2) != (comma != NULL))
			return EV_ERR_FORMAT;
		if (comma)
			*comma = '\0';
		if (ev_parse_i32(d, &nd->down[i]) || nd->down[i] < -1)
			return EV_ERR_FORMAT;
		d = comma ? comma + 1 : d;
	}
	return EV_OK;
}

static int add_tree(ev_meta *m, char **f, size_t n)
{
	uint64_t comm;
	uint32_t ch;
	int created;
	if (n < 4 || ev_parse_u64(f[1], &comm) || ev_parse_u32(f[2], &ch) || ch > 0xFFFF)
		return EV_ERR_FORMAT;
	struct ev_tree_node *nodes = malloc((n - 3) * sizeof *nodes);
	if (!nodes)
		return EV_ERR_NOMEM;
	for (size_t i = 3; i < n; i++)
		if (parse_node(f[i], &nodes[i - 3])) {
			free(nodes);
			return EV_ERR_FORMAT;
		}
	struct ev_tree_info *t = find_or_add(&m->tree, &m->tree_ix, pair_key(comm, ch), sizeof *t, &created);
	if (!t) {
		free(nodes);
		return EV_ERR_NOMEM;
	}
	t->comm = comm;
	t->channel = ch;
	/* Nodes add up across lines; a rank seen again replaces its links. */
	for (size_t i = 0; i < n - 3; i++) {
		size_t j;
		for (j = 0; j < t->n; j++)
			if (t->nodes[j].rank == nodes[i].rank)
				break;
		if (j == t->n) {
			struct ev_tree_node *nn = realloc(t->nodes, (t->n + 1) * sizeof *nn);
			if (!nn) {
				free(nodes);
				return EV_ERR_NOMEM;
			}
			t->nodes = nn;
			t->n++;
		}
		t->nodes[j] = nodes[i];
	}
	free(nodes);
	return EV_OK;
}

/* The key of a (rank, pid) or (rank, tid) pair; lookups check the pair. */
static uint64_t id_key(uint32_t rank, uint32_t id)
{
	unsigned char b[8];
	ev_put32(b, rank);
	ev_put32(b + 4, id);
	return ev_hash64(b, sizeof b);
}

/* Field i (0: the keyword) of a text line: its start in *at, its length;
 * *next is where the field after it starts (len when none). */
static size_t field_at(const char *line, size_t len, int i, size_t *at, size_t *next)
{
	size_t p = 0, s = 0;
	for (int k = 0; k <= i; k++) {
		while (k && p < len && (line[p] == ' ' || line[p] == '\t'))
			p++;
		s = p;
		while (p < len && line[p] != ' ' && line[p] != '\t')
			p++;
	}
	*at = s;
	*next = p < len ? p + 1 : len;
	return p - s;
}

static int field_u32(const char *line, size_t len, int i, uint32_t *v, size_t *next)
{
	char tmp[16];
	size_t at, n = field_at(line, len, i, &at, next);
	if (n == 0 || n >= sizeof tmp)
		return EV_ERR_FORMAT;
	memcpy(tmp, line + at, n);
	tmp[n] = '\0';
	return ev_parse_u32(tmp, v) ? EV_ERR_FORMAT : EV_OK;
}

/* The rest of a line from byte at, unescaped, into *out (replacing it). */
static int rest_text(const char *line, size_t len, size_t at, char **out)
{
	size_t n = len - at;
	char *t = malloc(n + 1);
	if (!t)
		return EV_ERR_NOMEM;
	memcpy(t, line + at, n);
	n = ev_text_unescape(t, n);
	if (n == (size_t)-1) {
		free(t);
		return EV_ERR_FORMAT;
	}
	t[n] = '\0';
	free(*out);
	*out = t;
	return EV_OK;
}

/* #process <rank> <pid> name|labels <text>: a later line replaces the text. */
static int add_process(ev_meta *m, const char *line, size_t len)
{
	uint32_t rank, pid;
	size_t next, at;
	int created;
	if (field_u32(line, len, 1, &rank, &next) || field_u32(line, len, 2, &pid, &next))
		return EV_ERR_FORMAT;
	size_t kn = field_at(line, len, 3, &at, &next);
	int labels = kn == 6 && !memcmp(line + at, "labels", 6);
	if (!labels && !(kn == 4 && !memcmp(line + at, "name", 4)))
		return EV_ERR_FORMAT;
	if (at + kn == len)
		return EV_ERR_FORMAT; /* no text, not even an empty one */
	struct ev_process_info *p = find_or_add(&m->proc, &m->proc_ix, id_key(rank, pid), sizeof *p, &created);
	if (!p)
		return EV_ERR_NOMEM;
	p->rank = rank;
	p->pid = pid;
	return rest_text(line, len, next, labels ? &p->labels : &p->name);
}

/* #thread <rank> <tid> <pid> [<text>]: a later line replaces the pid and
 * the name (a line without one keeps the name known). */
static int add_thread(ev_meta *m, const char *line, size_t len)
{
	uint32_t rank, tid, pid;
	size_t next;
	int created;
	if (field_u32(line, len, 1, &rank, &next) || field_u32(line, len, 2, &tid, &next) ||
	    field_u32(line, len, 3, &pid, &next))
		return EV_ERR_FORMAT;
	struct ev_thread_info *t = find_or_add(&m->thread, &m->thread_ix, id_key(rank, tid), sizeof *t, &created);
	if (!t)
		return EV_ERR_NOMEM;
	if (created)
		t->order = m->thread.len - 1;
	t->rank = rank;
	t->tid = tid;
	t->pid = pid;
	size_t at, n = field_at(line, len, 3, &at, &next);
	return at + n < len ? rest_text(line, len, next, &t->name) : EV_OK;
}

int ev_meta_add_line_at(ev_meta *m, const char *line, size_t len, const char *name, uint64_t lineno)
{
	m->at_name = name;
	m->at_line = lineno;
	int rc = ev_meta_add_line(m, line, len);
	m->at_name = NULL;
	m->at_line = 0;
	return rc;
}

const char *ev_meta_conflict(const ev_meta *m) { return m->conflict[0] ? m->conflict : NULL; }

int ev_meta_add_line(ev_meta *m, const char *line, size_t len)
{
	char *f[4096];
	int rc;
	m->conflict[0] = '\0';
	if (len < 5 || line[0] != '#')
		return EV_OK;
	/* Only the metadata keywords are parsed; others are ignored. */
	size_t kw = 1;
	while (kw < len && line[kw] != ' ' && line[kw] != '\t')
		kw++;
	int which = 0;
	if (kw == 4 && memcmp(line, "#src", 4) == 0) which = 1;
	else if (kw == 5 && memcmp(line, "#rank", 5) == 0) which = 2;
	else if (kw == 5 && memcmp(line, "#comm", 5) == 0) which = 3;
	else if (kw == 5 && memcmp(line, "#ring", 5) == 0) which = 4;
	else if (kw == 5 && memcmp(line, "#tree", 5) == 0) which = 5;
	else if (kw == 5 && memcmp(line, "#meta", 5) == 0) which = 6;
	else if (kw == 8 && memcmp(line, "#process", 8) == 0) return add_process(m, line, len);
	else if (kw == 7 && memcmp(line, "#thread", 7) == 0) return add_thread(m, line, len);
	if (!which)
		return EV_OK;
	char *buf = malloc(len + 1);
	if (!buf)
		return EV_ERR_NOMEM;
	memcpy(buf, line, len);
	buf[len] = '\0';
	size_t n = split(buf, f, sizeof f / sizeof f[0]);
	if (n > sizeof f / sizeof f[0]) {
		/* Very long rings or trees: parse from a heap array instead. */
		size_t cnt = 0;
		for (size_t i = 0; i < len; i++)
			cnt += buf[i] == ' ' || buf[i] == '\t';
		char **big = malloc((cnt + 2) * sizeof *big);
		if (!big) {
			free(buf);
			return EV_ERR_NOMEM;
		}
		memcpy(buf, line, len);
		n = split(buf, big, cnt + 1);
		rc = which == 4 ? add_ring(m, big, n) : which == 5 ? add_tree(m, big, n) : EV_ERR_LIMIT;
		free(big);
		free(buf);
		return rc;
	}
	switch (which) {
	case 1: rc = add_src(m, f, n); break;
	case 2: rc = add_rank(m, f, n); break;
	case 3: rc = add_comm(m, f, n, line, len); break;
	case 4: rc = add_ring(m, f, n); break;
	case 5: rc = add_tree(m, f, n); break;
	default: rc = add_kvs(&m->kv, &m->nkv, f + 1, n - 1); break;
	}
	free(buf);
	return rc;
}

static void *lookup(const struct ev_vec *v, const struct ev_map *ix, uint64_t key)
{
	uint64_t *p = ev_map_get(ix, key);
	return p ? PTR(v, *p - 1) : NULL;
}

const struct ev_src_info *ev_meta_src(const ev_meta *m, uint32_t n) { return lookup(&m->src, &m->src_ix, (uint64_t)n + 1); }
const struct ev_rank_info *ev_meta_rank(const ev_meta *m, uint32_t r) { return lookup(&m->rank, &m->rank_ix, (uint64_t)r + 1); }
const struct ev_comm_info *ev_meta_comm(const ev_meta *m, uint64_t id) { return lookup(&m->comm, &m->comm_ix, id ? id : UINT64_MAX); }

const struct ev_ring_info *ev_meta_ring(const ev_meta *m, uint64_t comm, uint32_t ch)
{
	const struct ev_ring_info *r = lookup(&m->ring, &m->ring_ix, pair_key(comm, ch));
	return r && r->comm == comm && r->channel == ch ? r : NULL;
}

const struct ev_tree_info *ev_meta_tree(const ev_meta *m, uint64_t comm, uint32_t ch)
{
	const struct ev_tree_info *t = lookup(&m->tree, &m->tree_ix, pair_key(comm, ch));
	return t && t->comm == comm && t->channel == ch ? t : NULL;
}

size_t ev_meta_nsrc(const ev_meta *m) { return m->src.len; }
const struct ev_src_info *ev_meta_src_at(const ev_meta *m, size_t i) { return i < m->src.len ? PTR(&m->src, i) : NULL; }
size_t ev_meta_nrank(const ev_meta *m) { return m->rank.len; }
const struct ev_rank_info *ev_meta_rank_at(const ev_meta *m, size_t i) { return i < m->rank.len ? PTR(&m->rank, i) : NULL; }
size_t ev_meta_ncomm(const ev_meta *m) { return m->comm.len; }
const struct ev_comm_info *ev_meta_comm_at(const ev_meta *m, size_t i) { return i < m->comm.len ? PTR(&m->comm, i) : NULL; }
size_t ev_meta_nring(const ev_meta *m) { return m->ring.len; }
const struct ev_ring_info *ev_meta_ring_at(const ev_meta *m, size_t i) { return i < m->ring.len ? PTR(&m->ring, i) : NULL; }
size_t ev_meta_ntree(const ev_meta *m) { return m->tree.len; }
const struct ev_tree_info *ev_meta_tree_at(const ev_meta *m, size_t i) { return i < m->tree.len ? PTR(&m->tree, i) : NULL; }
const struct ev_process_info *ev_meta_process(const ev_meta *m, uint32_t rank, uint32_t pid)
{
	const struct ev_process_info *p = lookup(&m->proc, &m->proc_ix, id_key(rank, pid));
	return p && p->rank == rank && p->pid == pid ? p : NULL;
}

const struct ev_thread_info *ev_meta_thread(const ev_meta *m, uint32_t rank, uint32_t tid)
{
	const struct ev_thread_info *t = lookup(&m->thread, &m->thread_ix, id_key(rank, tid));
	return t && t->rank == rank && t->tid == tid ? t : NULL;
}

size_t ev_meta_nthread(const ev_meta *m) { return m->thread.len; }
const struct ev_thread_info *ev_meta_thread_at(const ev_meta *m, size_t i) { return i < m->thread.len ? PTR(&m->thread, i) : NULL; }
size_t ev_meta_nprocess(const ev_meta *m) { return m->proc.len; }
const struct ev_process_info *ev_meta_process_at(const ev_meta *m, size_t i) { return i < m->proc.len ? PTR(&m->proc, i) : NULL; }
const char *ev_meta_get(const ev_meta *m, const char *key) { return ev_kv_get(m->kv, m->nkv, key); }
