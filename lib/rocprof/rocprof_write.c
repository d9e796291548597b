/* SPDX-License-Identifier: MIT */
/*
 * rocprof_write.c - the converter's state and the time-ordered output.
 *
 * Records wait in the external sorter; written in time order, each HIP
 * call is remembered by correlation id until the GPU events it launched
 * run (a call starts before its kernel or copy can), and a GPU event whose
 * call is not there is flagged unlinked.  Host-side records (HIP calls,
 * markers) go on the rank of the lowest GPU their process used.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocprof/rocprof_int.h"

int ev_rocprof_new(ev_rocprof **out, const struct ev_rocprof_opts *o, int nfiles)
{
	ev_rocprof *r = calloc(1, sizeof *r);
	*out = NULL;
	if (!r)
		return EV_ERR_NOMEM;
	r->o = *o;
	if (!r->o.max_object)
		r->o.max_object = 16u << 20;
	if (!r->o.max_markers)
		r->o.max_markers = 1u << 22;
	uint32_t win = 1024;
	while (win < (o->link_window ? o->link_window : 65536))
		win <<= 1;
	r->calls_mask = win - 1;
	r->calls = calloc(win, sizeof *r->calls);
	r->st = ev_strtab_new();
	r->files = calloc(nfiles > 0 ? (size_t)nfiles : 1, sizeof *r->files);
	r->nfiles = nfiles;
	r->ntoks = 1024;
	r->toks = malloc((size_t)r->ntoks * sizeof *r->toks);
	ev_map_init(&r->symbols);
	ev_map_init(&r->messages);
	if (!r->calls || !r->st || !r->files || !r->toks || ev_sorter_open(&r->sorter, o->sort_bytes, o->tmpdir) != EV_OK) {
		ev_rocprof_free(r);
		return EV_ERR_NOMEM;
	}
	for (int i = 0; i < nfiles; i++)
		r->files[i].pid = r->files[i].init_ns = r->files[i].fini_ns = -1;
	*out = r;
	return EV_OK;
}

void ev_rocprof_free(ev_rocprof *r)
{
	if (!r)
		return;
	ev_sorter_close(r->sorter);
	ev_strtab_free(r->st);
	for (int i = 0; r->files && i < r->nfiles; i++)
		free(r->files[i].gpus);
	free(r->files);
	ev_map_free(&r->symbols);
	ev_map_free(&r->messages);
	for (int k = 0; k < RP_MAX_KINDS; k++)
		free(r->kind_ops[k]);
	free(r->toks);
	free(r->scratch);
	free(r->calls);
	free(r);
}

struct ev_rocprof_file *ev_rocprof_file(ev_rocprof *r, int i) { return &r->files[i]; }
ev_strtab *ev_rocprof_strtab(ev_rocprof *r) { return r->st; }
const char *ev_rocprof_errpath(const ev_rocprof *r) { return ev_sorter_errpath(r->sorter); }

/* The sorter's sink: each record in time order. */
static int sink(void *ctx, struct ev_rec *e)
{
	ev_rocprof *r = ctx;
	struct ev_rocprof_file *fi = &r->files[e->src];
	uint64_t *slot = &r->calls[((uint64_t)e->src << 24 ^ e->id) & r->calls_mask];
	/* A slot holds (input, correlation id) + 1 of the last call put there. */
	uint64_t key = ((uint64_t)e->src << 32 | e->id) + 1;
	if (e->rank == RP_HOST_RANK)
		e->rank = fi->host_rank;
	if (e->type == EV_API) {
		*slot = key;
		if (r->o.no_api)
			return EV_OK;
	} else if ((e->type == EV_KERNEL || e->type == EV_MEMCPY) && fi->api) {
		if (*slot == key) {
			fi->linked++;
		} else {
			fi->unlinked++;
			e->flags |= EV_F_UNLINKED;
		}
	}
	return ev_write(r->w, e);
}

static void escape_word(const char *s, char *out, size_t n)
{
	ev_text_escape(s, strlen(s), out, n);
	for (char *p = out; *p; p++)
		if (*p == ' ')
			*p = '_';
}

static int heads(ev_rocprof *r, int i)
{
	struct ev_rocprof_file *fi = &r->files[i];
	char esc[4096], host[300] = "", pid[32] = "";
	escape_word(fi->path, esc, sizeof esc);
	if (fi->host[0]) {
		char h[260];
		escape_word(fi->host, h, sizeof h);
		snprintf(host, sizeof host, " host=%s", h);
	}
	if (fi->pid >= 0)
		snprintf(pid, sizeof pid, " pid=%lld", (long long)fi->pid);
	int rc = fi->init_ns >= 0 && fi->fini_ns >= 0
	                 ? ev_write_textf(r->w, "#src %d file=%s%s%s init_ns=%lld fini_ns=%lld", i, esc, host, pid,
	                                  (long long)fi->init_ns, (long long)fi->fini_ns)
	                 : ev_write_textf(r->w, "#src %d file=%s%s%s", i, esc, host, pid);
	int any = 0;
	for (int g = 0; g < fi->ngpus && !rc; g++) {
		const struct ev_rp_gpu *gp = &fi->gpus[g];
		if (!gp->used && !(gp->rank == fi->host_rank && (fi->api || fi->markers)))
			continue;
		char prod[160], arch[80];
		escape_word(gp->product, prod, sizeof prod);
		escape_word(gp->arch, arch, sizeof arch);
		rc = ev_write_textf(r->w, "#rank %u%s%s device=%u%s%s%s%s", gp->rank, host, pid, gp->rank, prod[0] ? " gpu=" : "",
		                    prod, arch[0] ? " arch=" : "", arch);
		any = 1;
	}
	/* Host records only (no GPU agent used): the process's rank alone. */
	if (!rc && !any && (fi->api || fi->markers))
		rc = ev_write_textf(r->w, "#rank %u%s%s", fi->host_rank, host, pid);
	return rc;
}

int ev_rocprof_write(ev_rocprof *r, ev_writer *w)
{
	int rc = ev_writer_header(w, "origin", "trace");
	if (!rc)
		rc = ev_writer_header(w, "producer", "rocprof2ev");
	r->w = w;
	for (int i = 0; i < r->nfiles && !rc; i++) {
		struct ev_rocprof_file *fi = &r->files[i];
		uint32_t low = UINT32_MAX;
		for (int g = 0; g < fi->ngpus; g++)
			if (fi->gpus[g].used && fi->gpus[g].rank < low)
				low = fi->gpus[g].rank;
		fi->host_rank = low == UINT32_MAX ? 0 : low;
		rc = heads(r, i);
	}
	if (rc)
		return rc;
	return ev_sorter_count(r->sorter) ? ev_sorter_finish(r->sorter, NULL, sink, r) : EV_OK;
}
