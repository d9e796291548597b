/* SPDX-License-Identifier: MIT */
/*
 * kineto_meta.c - the rarer parts of a Kineto document, tokenized whole:
 * counter events (one sample per numeric argument), distributedInfo
 * (rank, world size, NCCL version), and the process and thread names of
 * the metadata events.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kineto/kineto_internal.h"

#define META_TOKENS 65536

static int tok_i64(const char *text, const struct ev_json_tok *t, int i, int64_t *v)
{
	struct ev_kspan s = { .p = text + t[i].start, .n = (uint32_t)(t[i].end - t[i].start),
		              .type = t[i].type == EV_JT_STRING ? '"' : t[i].type == EV_JT_PRIMITIVE ? 'n' : 0 };
	return ev_kspan_i64(&s, v);
}

/* The tokens of a small JSON value (at most META_TOKENS), *n of them (an
 * error status when it does not tokenize); NULL on no memory. */
static struct ev_json_tok *meta_tokens(const char *text, size_t len, int *n)
{
	struct ev_json_tok *t = malloc(META_TOKENS * sizeof *t);
	if (t)
		*n = ev_json_tokenize(text, len, t, META_TOKENS);
	return t;
}

int kineto_counters(ev_kineto *k, int fidx, const struct ev_kspan *args, const struct ev_rec *r)
{
	const char *text = args->p;
	int n, rc = EV_OK;
	struct ev_json_tok *t = meta_tokens(text, args->n, &n);
	if (!t)
		return EV_ERR_NOMEM;
	const char *base = ev_strtab_get(k->st, r->name, NULL);
	for (int m = 0, i = 1; n > 0 && m < t[0].size; m++) {
		int64_t val;
		if (tok_i64(text, t, i + 1, &val) == 0 && val >= 0) {
			char kb[256], nb[512];
			if (t[i].end - t[i].start < 200 && ev_json_str(text, t, i, kb) != (size_t)-1) {
				int nn = snprintf(nb, sizeof nb, "%s.%s", base ? base : "", kb);
				struct ev_rec c = *r;
				c.type = EV_COUNTER;
				c.op = 0;
				c.bytes = (uint64_t)val;
				c.dur = 0;
				if (nn > 0 && (size_t)nn < sizeof nb && ev_strtab_intern(k->st, nb, (size_t)nn, &c.name) == EV_OK &&
				    (rc = ev_kineto_add(k, fidx, &c)) != EV_OK)
					break;
			}
		}
		i = ev_json_skip(t, i + 1);
	}
	free(t);
	return rc;
}

int kineto_distributed_info(ev_kineto *k, int fidx, const char *text, size_t len)
{
	struct ev_kineto_file *fi = &k->files[fidx];
	int n, v, rc = EV_OK;
	struct ev_json_tok *t = text ? meta_tokens(text, len, &n) : NULL;
	if (!t)
		return text ? EV_ERR_NOMEM : EV_OK;
	int64_t x;
	if (n > 0 && t[0].type == EV_JT_OBJECT) {
		if ((v = ev_json_get(text, t, 0, "rank")) >= 0 && tok_i64(text, t, v, &x) == 0)
			fi->rank = x;
		if ((v = ev_json_get(text, t, 0, "world_size")) >= 0 && tok_i64(text, t, v, &x) == 0)
			fi->world = x;
		if ((v = ev_json_get(text, t, 0, "nccl_version")) >= 0 && t[v].type == EV_JT_STRING &&
		    t[v].end - t[v].start < (int)sizeof fi->nccl_version &&
		    ev_json_str(text, t, v, fi->nccl_version) != (size_t)-1) {
			char line[128];
			snprintf(line, sizeof line, "#meta nccl_version=%s", fi->nccl_version);
			rc = kineto_comm_line(k, line);
		}
	}
	free(t);
	return rc;
}

int kineto_device_properties(ev_kineto *k, int fidx, const char *text, size_t len)
{
	struct ev_kineto_file *fi = &k->files[fidx];
	int n;
	struct ev_json_tok *t = text ? meta_tokens(text, len, &n) : NULL;
	if (!t)
		return text ? EV_ERR_NOMEM : EV_OK;
	fi->ngpus = 0;
	if (n > 0 && t[0].type == EV_JT_ARRAY) {
		/* The array's elements, one value after the other. */
		for (int e = 0, i = 1; e < t[0].size && i < n; e++, i = ev_json_skip(t, i)) {
			/* A device is an entry with a name: a writer that indexes
			 * the list by device id (ev2perfetto --tb) leaves the
			 * others empty, and they are no GPUs the process saw. */
			if (t[i].type != EV_JT_OBJECT || ev_json_get(text, t, i, "name") < 0)
				continue;
			fi->ngpus++;
			int v = ev_json_get(text, t, i, "id");
			int64_t id;
			char name[sizeof fi->gpu_name[0]];
			if (v < 0 || tok_i64(text, t, v, &id) != 0 || id < 0 || id >= 16)
				continue;
			v = ev_json_get(text, t, i, "name");
			if (v < 0 || t[v].type != EV_JT_STRING || t[v].end - t[v].start >= (int)sizeof name ||
			    ev_json_str(text, t, v, name) == (size_t)-1)
				continue;
			for (char *p = name; *p; p++)
				if (*p == ' ' || *p == '\t' || *p == '\\' || (unsigned char)*p < 0x20)
					*p = '_';
			memcpy(fi->gpu_name[id], name, sizeof name);
		}
	}
	free(t);
	return EV_OK;
}

/* The names the trace's readers show (TraceLens's process_name,
 * process_label and thread_name columns): TraceLens looks a process's
 * name and labels up under tid 0 of its pid and a thread's name under its
 * (pid, tid), the last event of each winning. */
int kineto_metadata_event(ev_kineto *k, int fidx, const struct ev_kevent *e, uint32_t pid, uint32_t tid)
{
	const struct ev_kspan *nm = &e->f[EV_KF_NAME], *args = &e->f[EV_KF_ARGS];
	int kind;
	const char *key;
	if (nm->type != '"' || args->type != '{')
		return EV_OK;
	if (nm->n == 12 && !memcmp(nm->p, "process_name", 12))
		kind = 0, key = "name";
	else if (nm->n == 14 && !memcmp(nm->p, "process_labels", 14))
		kind = 1, key = "labels";
	else if (nm->n == 11 && !memcmp(nm->p, "thread_name", 11))
		kind = 2, key = "name";
	else
		return EV_OK;
	int64_t t0;
	if (kind < 2 && (e->f[EV_KF_TID].type != 'n' || ev_kspan_i64(&e->f[EV_KF_TID], &t0) != 0 || t0 != 0))
		return EV_OK; /* not where TraceLens looks */
	int n, v, rc = EV_OK;
	struct ev_json_tok *t = meta_tokens(args->p, args->n, &n);
	if (!t)
		return EV_ERR_NOMEM;
	char *text = NULL;
	if (n > 0 && t[0].type == EV_JT_OBJECT && (v = ev_json_get(args->p, t, 0, key)) >= 0 && t[v].type == EV_JT_STRING) {
		text = malloc((size_t)(t[v].end - t[v].start) + 1);
		if (!text)
			rc = EV_ERR_NOMEM;
		else if (ev_json_str(args->p, t, v, text) == (size_t)-1) {
			free(text);
			text = NULL;
		}
	}
	free(t);
	if (!text)
		return rc;
	return kineto_meta_put(k, fidx, pid, tid, kind, text);
}

int kineto_meta_put(ev_kineto *k, int fidx, uint32_t pid, uint32_t tid, int kind, char *text)
{
	uint64_t key2 = kineto_key2(((uint64_t)(uint32_t)fidx << 32) | pid, ((uint64_t)kind << 32) | (kind < 2 ? 0 : tid));
	uint64_t *slot = ev_map_get(&k->meta_of, key2);
	struct kname_meta *m = slot ? &((struct kname_meta *)k->meta_names.data)[*slot - 1] : NULL;
	if (m && (m->file != fidx || m->pid != pid || m->kind != kind || (kind == 2 && m->tid != tid)))
		m = NULL; /* another pair under the same key: kept apart below */
	if (!m) {
		m = ev_vec_push(&k->meta_names);
		if (!m || (!slot && ev_map_put(&k->meta_of, key2, k->meta_names.len) != EV_OK)) {
			free(text);
			if (m)
				k->meta_names.len--;
			return EV_ERR_NOMEM;
		}
		*m = (struct kname_meta){ fidx, pid, kind < 2 ? 0 : tid, (uint8_t)kind, NULL };
	}
	free(m->text);
	m->text = text;
	return EV_OK;
}

int kineto_note_thread(ev_kineto *k, int fidx, uint32_t pid, uint32_t tid, int is_op)
{
	uint64_t key = kineto_key2((uint64_t)(uint32_t)fidx + 1, tid);
	if (key == k->last_thread && !is_op)
		return EV_OK;
	k->last_thread = key;
	uint64_t *slot = ev_map_get(&k->thread_of, key);
	if (slot) { /* its first process stays */
		struct kthread *t = &((struct kthread *)k->threads.data)[*slot - 1];
		if (is_op && t->first_op == UINT64_MAX)
			t->first_op = k->files[fidx].events;
		return EV_OK;
	}
	struct kthread *t = ev_vec_push(&k->threads);
	if (!t)
		return EV_ERR_NOMEM;
	*t = (struct kthread){ fidx, tid, pid, is_op ? k->files[fidx].events : UINT64_MAX };
	return ev_map_put(&k->thread_of, key, k->threads.len);
}

/* Threads by input, then by their first cpu_op in it. */
static int cmp_thread(const void *pa, const void *pb)
{
	const struct kthread *a = pa, *b = pb;
	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	return a->first_op < b->first_op ? -1 : a->first_op > b->first_op;
}

/* A name of input file, pid, tid and kind, or NULL. */
static const char *name_of(const ev_kineto *k, int file, uint32_t pid, uint32_t tid, int kind)
{
	const struct kname_meta *m = k->meta_names.data;
	for (size_t i = k->meta_names.len; i-- > 0;)
		if (m[i].file == file && m[i].pid == pid && m[i].kind == kind && m[i].tid == tid)
			return m[i].text;
	return NULL;
}

static int write_named(ev_kineto *k, const char *head, const char *text)
{
	size_t n = strlen(text);
	char *esc = malloc(2 * n + 1);
	if (!esc)
		return EV_ERR_NOMEM;
	ev_text_escape(text, n, esc, 2 * n + 1);
	int rc = kineto_textf(k, "%s %s", head, esc);
	free(esc);
	return rc;
}

int kineto_write_names(ev_kineto *k)
{
	int rc = EV_OK;
	const struct kname_meta *m = k->meta_names.data;
	for (size_t i = 0; i < k->meta_names.len && !rc; i++) {
		if (m[i].kind == 2)
			continue;
		char head[96];
		snprintf(head, sizeof head, "#process %lld %u %s", (long long)k->files[m[i].file].rank, m[i].pid,
		         m[i].kind ? "labels" : "name");
		rc = write_named(k, head, m[i].text);
	}
	/* In the order the trace lists the threads' ops: Kineto writes each
	 * thread's ops together, and TraceLens's "first" of a group of ops
	 * (process_name_first, ...) is the first in the file. */
	struct kthread *t = k->threads.data;
	if (k->threads.len > 1)
		qsort(t, k->threads.len, sizeof *t, cmp_thread);
	for (size_t i = 0; i < k->threads.len && !rc; i++) {
		char head[96];
		snprintf(head, sizeof head, "#thread %lld %u %u", (long long)k->files[t[i].file].rank, t[i].tid, t[i].pid);
		const char *name = name_of(k, t[i].file, t[i].pid, t[i].tid, 2);
		rc = name ? write_named(k, head, name) : kineto_text(k, head, strlen(head));
	}
	return rc;
}
