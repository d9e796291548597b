/* SPDX-License-Identifier: MIT */
/*
 * api.c - the reader's public entry points (ev/nsys.h): inputs, the
 * decisions made once every input is known (communicators, ranks, time
 * base, window), the write, and what is said afterwards.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int ev_nsys_new(ev_nsys **out, const struct ev_nsys_opts *opts)
{
	struct ev_nsys *s = calloc(1, sizeof *s);
	*out = NULL;
	if (!s)
		return EV_ERR_NOMEM;
	if (opts)
		s->o = *opts;
	s->st = ev_strtab_new();
	ev_map_init(&s->gpu_idx);
	ev_map_init(&s->comm_idx);
	ev_map_init(&s->comm_alias);
	ev_map_init(&s->comm_rank);
	ev_map_init(&s->strs);
	ev_map_init(&s->seq);
	ev_map_init(&s->kinfo);
	ev_map_init(&s->usage_seen);
	ev_map_init(&s->logidx);
	ev_map_init(&s->logseen);
	ev_vec_init(&s->logops, 1);
	ev_vec_init(&s->kinfos, sizeof(struct kinfo));
	ev_vec_init(&s->usage, sizeof(struct usage));
	*out = s;
	if (!s->st)
		return nsys_nomem(s);
	if (s->o.node_regex) {
		if (regcomp(&s->node_re, s->o.node_regex, REG_EXTENDED))
			return nsys_fail(s, EV_ERR_ARG, "--node-regex: invalid regular expression '%s'", s->o.node_regex);
		s->have_node_re = 1;
	}
	return EV_OK;
}

static struct file *file_new(struct ev_nsys *s, const char *name)
{
	if (s->prepared || s->nfiles >= 65535) {
		nsys_fail(s, EV_ERR_ARG, "%s: at most 65535 inputs, all before ev_nsys_prepare", name);
		return NULL;
	}
	if (s->nfiles == s->capfiles) {
		int cap = s->capfiles ? 2 * s->capfiles : 8;
		struct file *n = realloc(s->files, (size_t)cap * sizeof *n);
		if (!n) {
			nsys_nomem(s);
			return NULL;
		}
		s->files = n;
		s->capfiles = cap;
	}
	struct file *f = &s->files[s->nfiles];
	memset(f, 0, sizeof *f);
	f->temp_slot = -1;
	f->path = strdup(name);
	if (!f->path) {
		nsys_nomem(s);
		return NULL;
	}
	s->nfiles++;
	return f;
}

int ev_nsys_add_file(ev_nsys *s, const char *path)
{
	struct file *f = file_new(s, path);
	if (!f)
		return s->err[0] ? EV_ERR_NOMEM : EV_ERR_ARG;
	int rc = nsys_db_open_path(s, f);
	return rc ? rc : nsys_pass1(s, s->nfiles - 1);
}

int ev_nsys_add_db(ev_nsys *s, sqlite3 *db, const char *name)
{
	struct file *f = file_new(s, name ? name : "memory");
	if (!f) {
		sqlite3_close(db);
		return EV_ERR_NOMEM;
	}
	f->db = db;
	f->dbpath = f->path; /* nothing to remove */
	int rc = nsys_db_configure(s, f);
	return rc ? rc : nsys_pass1(s, s->nfiles - 1);
}

/* Communicators whose members are not all among the inputs, and inputs
 * that take part in none of the communicators the others describe. */
int nsys_check_members(struct ev_nsys *s)
{
	char list[512], files[512];
	for (size_t i = 0; i < s->ncomms; i++) {
		struct comm *c = &s->comms[i];
		size_t n = 0, missing = 0;
		list[0] = '\0';
		for (uint32_t r = 0; r < c->nranks; r++)
			if (c->gpu_of[r] < 0) {
				missing++;
				if (n < sizeof list - 16)
					n += (size_t)snprintf(list + n, sizeof list - n, "%s%u", n ? "," : "", r);
				else if (n < sizeof list - 4)
					n += (size_t)snprintf(list + n, sizeof list - n, ",...");
			}
		if (!missing)
			continue;
		n = 0;
		files[0] = '\0';
		for (int k = 0; k < s->nfiles && n < sizeof files - 8; k++)
			n += (size_t)snprintf(files + n, sizeof files - n, "%s%s", k ? ", " : "", s->files[k].path);
		nsys_warn(s, "communicator %016llx (%u ranks): rank%s %s ha%s no export among the files read (%s); "
		          "their operations and the peers that name them are missing",
		          (unsigned long long)c->id, c->nranks, missing == 1 ? "" : "s", list, missing == 1 ? "s" : "ve",
		          files);
	}
	if (!s->ncomms)
		return 0;
	for (int k = 0; k < s->nfiles; k++) {
		int any = 0;
		for (size_t i = 0; i < s->ncomms && !any; i++)
			for (uint32_t r = 0; r < s->comms[i].nranks && !any; r++)
				any = s->comms[i].gpu_of[r] >= 0 && s->gpus[s->comms[i].gpu_of[r]].file == k;
		if (!any)
			nsys_warn(s, "%s: none of its GPU processes is in a communicator of the other inputs (an export of "
			          "another job?); its ranks follow the others", s->files[k].path);
	}
	return 0;
}

int ev_nsys_prepare(ev_nsys *s)
{
	int status = 0;
	if (s->prepared)
		return EV_OK;
	if (!s->nfiles)
		return nsys_fail(s, EV_ERR_ARG, "no input");
	s->prepared = 1;
	for (int i = 0; i < s->nfiles && !status; i++)
		status = nsys_pass1_topology(s, i);
	if (status)
		return status;
	for (int i = 0; i < s->nfiles; i++) {
		int any = 0;
		for (size_t k = 0; k < s->ngpus; k++)
			any |= s->gpus[k].file == i;
		if (!any)
			return nsys_fail(s, EV_ERR_FORMAT, "%s: empty trace: no kernels, memory operations or NCCL markers",
			                 s->files[i].path);
	}
	if (s->o.nccl_log && (status = nsys_read_nccl_log(s)) != 0)
		return status;
	if ((status = nsys_synthesize(s)) != 0 || (status = nsys_assign_ranks(s)) != 0)
		return status;
	if (s->nsynth)
		nsys_warn(s, "%llu communicator%s synthesized: no init markers (commHash ... commId ...) in the exports; "
		          "members are the GPUs that called them, in (node, pid) order, so ranks may differ from the run's",
		          (unsigned long long)s->nsynth, s->nsynth == 1 ? "" : "s");
	nsys_check_members(s);
	s->all_utc = 1;
	for (int i = 0; i < s->nfiles; i++)
		s->all_utc &= s->files[i].have_utc;
	if (!s->all_utc) {
		for (int i = 0; i < s->nfiles; i++) {
			if (s->files[i].have_utc && s->nfiles > 1)
				nsys_warn(s, "%s: not every input has a UTC start time; using each trace's own clock",
				          s->files[i].path);
			s->files[i].offset = 0;
		}
	}
	if ((status = nsys_windows(s)) != 0)
		return status;
	for (int i = 0; i < s->nfiles && !status; i++) {
		int has_nccl = s->files[i].annotated || s->o.nccl_log;
		for (size_t k = 0; k < s->ngpus; k++)
			has_nccl |= s->gpus[k].file == i && s->gpus[k].max_grid > 0;
		status = nsys_prepare_cursors(s, &s->files[i], has_nccl);
	}
	return status;
}

int ev_nsys_write(ev_nsys *s, ev_writer *w, void (*progress)(void *, uint64_t), void *ctx)
{
	int rc = ev_nsys_prepare(s);
	if (rc)
		return rc;
	s->w = w;
	rc = ev_writer_header(w, "origin", s->all_utc ? "unix" : "trace");
	if (!rc)
		rc = ev_writer_header(w, "producer", "nsys2ev");
	if (!rc)
		rc = nsys_write_meta(s);
	if (rc)
		return s->err[0] ? rc : nsys_write_status(s, rc);
	return nsys_pass2(s, progress, ctx);
}

void ev_nsys_finish(ev_nsys *s)
{
	uint64_t unmatched = 0, bad = 0;
	for (size_t k = 0; k < s->ngpus; k++) {
		struct gpu *g = &s->gpus[k];
		for (uint64_t i = g->op_head; g->ops && i < g->op_tail; i++)
			if (!g->ops[i % OPCAP].emitted) {
				g->ops[i % OPCAP].emitted = 1;
				g->unmatched_ops++;
			}
		unmatched += g->unmatched_ops;
	}
	nsys_notes_flush(s);
	for (int i = 0; i < s->nfiles; i++) {
		struct file *f = &s->files[i];
		bad += f->skipped_bad;
		if (f->cut_before || f->cut_after)
			nsys_warn(s, "%s: %llu records before and %llu after the profiled window (%s) left out", f->path,
			          (unsigned long long)f->cut_before, (unsigned long long)f->cut_after,
			          s->o.steps ? "--steps" : s->o.have_range ? "--window" : "nsys profiling start/stopped marks");
		if (f->algo_hint || f->proto_threads)
			nsys_warn(s, "%s: NCCL operations without annotated info: %llu take the algorithm from the kernel name "
			          "(NCCL >= 2.19 names tell only TREE or RING; NVLS, CollNet and PAT kernels are named RING), "
			          "%llu the protocol from the threads per block", f->path, (unsigned long long)f->algo_hint,
			          (unsigned long long)f->proto_threads);
		if (f->torch_sized)
			nsys_warn(s, "%s: %llu NCCL calls sized from PyTorch's NVTX shapes (elements x the kernel's type)%s",
			          f->path, (unsigned long long)f->torch_sized,
			          f->torch_untyped ? "; some have no type in their kernel name (AllGather, Broadcast): "
			                             "bytes 0, counted below" : "");
		if (f->torch_untyped)
			nsys_warn(s, "%s: %llu NCCL operations have element counts but no element type: bytes 0; give "
			          "--nccl-log or export with --include-blobs=true", f->path,
			          (unsigned long long)f->torch_untyped);
		if (f->nccl_nosize)
			nsys_warn(s, "%s: %llu of %llu NCCL calls have no size, peer or communicator: %s", f->path,
			          (unsigned long long)f->nccl_nosize, (unsigned long long)f->nccl_calls,
			          f->has_schemas && !f->has_blobs
			                  ? "the export has NCCL's payload schemas but no values; re-export it with "
			                    "'nsys export --type sqlite --include-blobs=true REPORT.nsys-rep', or give "
			                    "--nccl-log with the run's NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL output"
			                  : "this NCCL writes no NVTX payloads (NCCL < 2.16, or NCCL_NVTX_DISABLE); give "
			                    "--nccl-log with the run's NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL output, "
			                    "or profile with NCCL >= 2.25 and export with --include-blobs=true");
	}
	if (unmatched)
		nsys_warn(s, "%llu NCCL operations had no kernel and were left out (-v for details)",
		          (unsigned long long)unmatched);
	if (bad)
		nsys_warn(s, "%llu NCCL markers could not be parsed or placed and were skipped (-v for details)",
		          (unsigned long long)bad);
}

const char *ev_nsys_errmsg(const ev_nsys *s)
{
	return s && s->err[0] ? s->err : "unknown error";
}

ev_strtab *ev_nsys_strtab(ev_nsys *s) { return s->st; }
size_t ev_nsys_nfiles(const ev_nsys *s) { return (size_t)s->nfiles; }
size_t ev_nsys_ngpus(const ev_nsys *s) { return s->ngpus; }

void ev_nsys_file_stats(const ev_nsys *s, size_t i, struct ev_nsys_file_stats *st)
{
	const struct file *f = &s->files[i];
	memset(st, 0, sizeof *st);
	st->path = f->path;
	st->node = f->node;
	for (int k = 0; k < NCUR; k++)
		st->rows[k] = f->rows[k];
	st->skipped_nopid = f->skipped_nopid;
	st->skipped_bad = f->skipped_bad;
	st->cut_before = f->cut_before;
	st->cut_after = f->cut_after;
}

void ev_nsys_gpu_stats(const ev_nsys *s, size_t i, struct ev_nsys_gpu_stats *st)
{
	const struct gpu *g = &s->gpus[i];
	st->rank = g->rank;
	st->device = g->device;
	st->pid = g->pid;
	st->matched = g->matched;
	st->fallback = g->fallback;
	st->unmatched = g->unmatched_ops;
	st->kernels_alone = g->kernels_alone;
}

void ev_nsys_free(ev_nsys *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nfiles; i++) {
		nsys_db_close(&s->files[i]);
		free(s->files[i].path);
	}
	for (size_t k = 0; k < s->ngpus; k++)
		nsys_gpu_release(&s->gpus[k]);
	for (size_t k = 0; k < s->ncomms; k++) {
		free(s->comms[k].gpu_of);
		free(s->comms[k].ring_next);
		free(s->comms[k].tree);
	}
	free(s->comms);
	free(s->gpus);
	free(s->files);
	free(s->buf);
	free(s->blob);
	if (s->have_node_re)
		regfree(&s->node_re);
	ev_map_free(&s->gpu_idx);
	ev_map_free(&s->comm_idx);
	ev_map_free(&s->comm_alias);
	ev_map_free(&s->comm_rank);
	ev_map_free(&s->strs);
	ev_map_free(&s->seq);
	ev_map_free(&s->kinfo);
	ev_map_free(&s->usage_seen);
	ev_vec_free(&s->usage);
	ev_vec_free(&s->logops);
	ev_vec_free(&s->kinfos);
	ev_map_free(&s->logidx);
	ev_map_free(&s->logseen);
	ev_strtab_free(s->st);
	free(s);
}
