/* SPDX-License-Identifier: MIT */
/*
 * kineto_in.c - Kineto JSON inputs read as kineto2ev reads them, for
 * kineto2ev and for ev-stats report, which converts them in its own
 * process: each file read (an error names it), its rank from
 * distributedInfo, the path or --rank (two files of one rank refused),
 * and per file what the conversion clamped, dropped or could not link.
 */
#include <stdio.h>
#include <string.h>

#include "ev/kineto.h"
#include "ev/tool.h"

int ev_cli_is_json(const char *path)
{
	ev_input *in;
	char b[256];
	if (!path || strcmp(path, "-") == 0 || ev_input_open(&in, path) != EV_OK)
		return 0; /* (standard input is read once: as a stream) */
	long n = ev_input_read(in, b, sizeof b);
	ev_input_close(in);
	return n > 0 && ev_looks_json(b, (size_t)n);
}

int ev_cli_kineto_read(const struct ev_cli *cli, ev_kineto *k, int i)
{
	struct ev_kineto_file *fi = ev_kineto_file(k, i);
	ev_input *in;
	char err[512];
	int rc = ev_input_open(&in, fi->path);
	if (rc)
		return ev_cli_input_error(cli, fi->path, rc);
	rc = ev_kineto_read(k, i, in, err, sizeof err);
	ev_input_close(in);
	if (rc == EV_ERR_IO && *ev_kineto_errpath(k))
		return ev_cli_error(cli, "%s: cannot write a sort run: I/O error", ev_kineto_errpath(k));
	if (rc == EV_ERR_NOMEM)
		return ev_cli_error(cli, "out of memory");
	if (rc)
		return ev_cli_error(cli, "%s: %s", ev_cli_input_name(fi->path), *err ? err : ev_strerror(rc));
	if (fi->events == 0 && fi->skipped == 0)
		return ev_cli_error(cli, "%s: no trace events", ev_cli_input_name(fi->path));
	return 0;
}

int ev_cli_kineto_rank(const struct ev_cli *cli, ev_kineto *k, int i, int n, int64_t rank)
{
	struct ev_kineto_file *fi = ev_kineto_file(k, i);
	int64_t r;
	if (fi->rank >= 0)
		return 0; /* distributedInfo's */
	int how = ev_kineto_rank_from_path(fi->path, &r);
	if (how != 1 && (r < 0 || r > UINT32_MAX))
		return ev_cli_error(cli, "%s: rank %lld from the path is out of range; set --rank", ev_cli_input_name(fi->path),
		                    (long long)r);
	if (how == 2)
		ev_cli_warn(cli, "%s: the path names several ranks: using %lld (set --rank or distributedInfo)",
		            ev_cli_input_name(fi->path), (long long)r);
	if (how != 1) {
		fi->rank = r;
	} else if (rank >= 0 && n == 1) {
		fi->rank = rank;
	} else {
		fi->rank = i;
		ev_cli_warn(cli, "%s: no rank in distributedInfo or the path; using %d (set --rank)", ev_cli_input_name(fi->path), i);
	}
	return 0;
}

int ev_cli_kineto_unique(const struct ev_cli *cli, ev_kineto *k, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			if (ev_kineto_file(k, i)->rank == ev_kineto_file(k, j)->rank)
				return ev_cli_error(cli, "%s and %s are both rank %lld; convert them separately or give ranks in "
				                    "the paths", ev_cli_input_name(ev_kineto_file(k, j)->path),
				                    ev_cli_input_name(ev_kineto_file(k, i)->path), (long long)ev_kineto_file(k, i)->rank);
	return 0;
}

/* Counted warnings: what the conversion clamped, dropped or could not link. */
static void file_warnings(const struct ev_cli *cli, const struct ev_kineto_file *fi, uint32_t link_window)
{
	const char *p = ev_cli_input_name(fi->path);
	if (fi->neg_dur)
		ev_cli_warn(cli, "%s: %llu events with a negative duration: made 0", p, (unsigned long long)fi->neg_dur);
	if (fi->big_stream)
		ev_cli_warn(cli, "%s: %llu events with a stream, pid or tid outside 0..2^32-1: made 0", p,
		            (unsigned long long)fi->big_stream);
	if (fi->unmatched_b)
		ev_cli_warn(cli, "%s: %llu B events without their E: dropped", p, (unsigned long long)fi->unmatched_b);
	if (fi->unmatched_e)
		ev_cli_warn(cli, "%s: %llu E events without their B: skipped", p, (unsigned long long)fi->unmatched_e);
	if (fi->inferred_colls)
		ev_cli_warn(cli, "%s: %llu collectives without collective arguments (PyTorch <= 2.1): inferred from kernel "
		            "names in the default group, ordered per rank", p, (unsigned long long)fi->inferred_colls);
	if (fi->inferred_no_size)
		ev_cli_warn(cli, "%s: %llu inferred collectives have no nccl:* annotation around their launch: bytes 0", p,
		            (unsigned long long)fi->inferred_no_size);
	/* Some GPU events without a launching call are normal at the edges of
	 * a capture (-v counts them); none linked at all means op-level
	 * analyses of this file will find nothing.  A backward op without its
	 * forward op: ev-stats' backward sheets miss it. */
	if (fi->fwdbwd_lost)
		ev_cli_warn(cli, "%s: %llu fwdbwd flows whose forward op was not among the last %u flows' "
		            "(--link-window) or had no 's' end: their backward ops carry no forward op", p,
		            (unsigned long long)fi->fwdbwd_lost, link_window ? link_window : 65536u);
	if (fi->fwdbwd_unbound)
		ev_cli_warn(cli, "%s: %llu fwdbwd flow ends at no cpu_op starting at their time and thread: not linked", p,
		            (unsigned long long)fi->fwdbwd_unbound);
	if (fi->gpu_events && fi->linked_stack + fi->linked_ext + fi->linked_call_only == 0)
		ev_cli_warn(cli, "%s: none of %llu GPU events has a launching call or an op (no runtime events or "
		            "cpu_ops in the trace?): op-level analyses will find nothing", p,
		            (unsigned long long)fi->gpu_events);
}

void ev_cli_kineto_say(const struct ev_cli *cli, const ev_kineto *kc, int n, const struct ev_kineto_opts *ko,
                       int verbose)
{
	ev_kineto *k = (ev_kineto *)kc; /* (ev_kineto_file gives a writable file) */
	for (int i = 0; i < n; i++) {
		const struct ev_kineto_file *fi = ev_kineto_file(k, i);
		file_warnings(cli, fi, ko->link_window);
		char nf[192] = "", half[96] = "";
		if (fi->half_to)
			snprintf(half, sizeof half, "; bytes %llu to %llu read on a second thread",
			         (unsigned long long)fi->half_from, (unsigned long long)fi->half_to);
		if (ko->flow_links)
			snprintf(nf, sizeof nf, "; %llu joined to their call by correlation id only (no ac2g flow: flagged "
			         "noflow); %llu backward ops linked to their forward op (fwdbwd)",
			         (unsigned long long)fi->noflow, (unsigned long long)fi->fwdbwd_linked);
		if (verbose && !cli->quiet)
			ev_cli_note(cli, "%s: rank %lld: %llu events, %llu kernels (%llu without a launching call), "
			            "%llu collectives, %llu skipped; %llu inferred collectives; GPU events %llu: %llu linked "
			            "through the call stack, %llu by External id, %llu to a call outside any op, %llu to no "
			            "op%s%s", ev_cli_input_name(fi->path), (long long)fi->rank, (unsigned long long)fi->events,
			            (unsigned long long)fi->kernels, (unsigned long long)fi->unlinked,
			            (unsigned long long)(fi->colls + fi->inferred_colls), (unsigned long long)fi->skipped,
			            (unsigned long long)fi->inferred_colls, (unsigned long long)fi->gpu_events,
			            (unsigned long long)fi->linked_stack, (unsigned long long)fi->linked_ext,
			            (unsigned long long)fi->linked_call_only,
			            (unsigned long long)(fi->gpu_events - fi->linked_stack - fi->linked_ext - fi->linked_call_only),
			            nf, half);
	}
	if (ev_kineto_overruns(k) && ko->clip)
		ev_cli_warn(cli, "%llu kernels overran the next kernel on their stream: clipped to its start",
		            (unsigned long long)ev_kineto_clipped(k));
	else if (ev_kineto_overruns(k))
		ev_cli_warn(cli, "%llu kernels start before the previous kernel on their stream ends (overruns; --clip cuts "
		            "them)", (unsigned long long)ev_kineto_overruns(k));
}
