/* SPDX-License-Identifier: MIT */
/*
 * stats_notes.c - what an analysis saw that its reader must know, as
 * warnings through the caller's ev_say: collectives not seen on every rank,
 * quantiles from the sketch, cells left empty and conventions that would
 * read as facts, and why a table is empty.  Each is said once, counted.
 */
#include "analysis/stats_impl.h"

void ev_stats_say_notes(ev_stats *s, const struct ev_say *say)
{
	struct ev_stats_counts n;
	const struct ev_stats_counts *c = &n;
	ev_stats_get_counts(s, &n);
	if (c->coll_incomplete) {
		ev_say(say, EV_SAY_WARN, "%llu collectives were not seen on every rank of their communicator",
		       (unsigned long long)c->coll_incomplete);
		if (c->coll_evicted)
			ev_say(say, EV_SAY_WARN, "%llu of them released early, oldest first, past --max-open=%zu open "
			       "collectives or %u arrivals held", (unsigned long long)c->coll_evicted,
			       s->o.coll_limits.max_open, EV_COLLMATCH_MAX_HELD);
		if (c->coll_unsized)
			ev_say(say, EV_SAY_WARN, "%llu of them have no communicator size (no aux, no #comm nranks=)",
			       (unsigned long long)c->coll_unsized);
	}
	if (c->coll_mismatch)
		ev_say(say, EV_SAY_WARN, "%llu collective arrivals differ in kind or size from another rank's at the same "
		       "(comm, seq): the ranks' traces do not hold the same collectives (cut or sampled traces?), so "
		       "those pairs are not one collective", (unsigned long long)c->coll_mismatch);
	if (c->ops_window)
		ev_say(say, EV_SAY_WARN, "%llu op instances closed while open: more than 65536 open at once (a later "
		       "kernel of one counts as a new instance)", (unsigned long long)c->ops_window);
	if (c->no_thread)
		ev_say(say, EV_SAY_WARN, "%llu op instances without their cpu_op range in the stream (or launched past "
		       "the window of recent ops): process and thread names \"Unknown\"", (unsigned long long)c->no_thread);
	if (c->sketched)
		ev_say(say, EV_SAY_WARN, "quantiles of the largest groups come from a sketch (within %.1f%%): over "
		       "--exact-limit", EV_DIST_SKETCH_ERR * 100);
	if (c->hta_one_step)
		ev_say(say, EV_SAY_WARN, "%llu rank(s) have one ProfilerStep: HTA's rows keep every GPU event, as HTA "
		       "does with fewer than two steps", (unsigned long long)c->hta_one_step);
	if (c->hta_no_step)
		ev_say(say, EV_SAY_WARN, "%llu rank(s) have no ProfilerStep: HTA's rows keep every GPU event, as HTA "
		       "does with fewer than two steps", (unsigned long long)c->hta_no_step);
	if (c->hta_pruned)
		ev_say(say, EV_SAY_WARN, "%llu GPU event(s) started later after their launch than twice the longest "
		       "delay seen before (at least 1 s): their launch was no longer held, so HTA's rows leave them out",
		       (unsigned long long)c->hta_pruned);
	if (c->no_comm)
		ev_say(say, EV_SAY_WARN, "%llu rank(s) have no communication: hta_comm_comp_overlap_time's percent left "
		       "empty (HTA gives NaN)", (unsigned long long)c->no_comm);
	if (c->folded_kernels)
		ev_say(say, EV_SAY_WARN, "kernels: %llu kernels of about %llu other names past --max-names=%llu share the "
		       "row '%s'", (unsigned long long)c->folded_kernels, (unsigned long long)c->folded_names,
		       (unsigned long long)s->o.max_names, EV_STATS_OTHER_NAMES);
	if (c->one_instance)
		ev_say(say, EV_SAY_WARN, "%llu row(s) of a single instance: std left empty (a sample std needs two)",
		       (unsigned long long)c->one_instance);
	/* The analysis's own, what it dropped or approximated. */
	char note[512];
	for (unsigned i = 0; s->a->warning && s->a->warning(s, i, note, sizeof note); i++)
		ev_say(say, EV_SAY_WARN, "%s", note);
}

void ev_stats_say_empty(const ev_stats *s, const char *name, const struct ev_say *say)
{
	char msg[1024];
	struct ev_stats_counts n;
	const struct ev_stats_counts *c = &n;
	ev_stats_get_counts(s, &n);
	if (c->records == 0)
		ev_say(say, EV_SAY_WARN, "%s: no records in the input: empty table", name);
	else if (s->a->explain && s->a->explain(&s->o, c, msg, sizeof msg))
		ev_say(say, EV_SAY_WARN, "%s: %s", name, msg);
	else
		ev_say(say, EV_SAY_WARN, "%s: no GPU events (kernel, memcpy, memset) among %llu records: empty table", name,
		       (unsigned long long)c->records);
}
