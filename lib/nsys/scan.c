/* SPDX-License-Identifier: MIT */
/*
 * scan.c - the first pass over each export: time base, host, GPU
 * processes, payload schemas, communicators from init markers or payloads,
 * then (once every file is known) ring and tree markers and the profiled
 * window of each GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int row_meta(struct ev_nsys *s, struct file *f, sqlite3_stmt *st, void *ctx)
{
	(void)s;
	(void)ctx;
	const char *k = nsys_col_text(st, 0), *v = nsys_col_text(st, 1);
	if (!k || !v)
		return 0;
	if (!strcmp(k, "EXPORT_PRODUCT_VERSION"))
		snprintf(f->version, sizeof f->version, "%s", v);
	else if (!strcmp(k, "EXPORT_SCHEMA_VERSION"))
		snprintf(f->schema_ver, sizeof f->schema_ver, "%s", v);
	else if (!strcmp(k, "EXPORT_PARAM_INCLUDE_BLOBS"))
		f->has_blobs = !strcmp(v, "true") || !strcmp(v, "1");
	else if (!strcmp(k, "EXPORT_PARAM_TIME_NORMALIZE"))
		f->normalized = !strcmp(v, "true") || !strcmp(v, "1");
	return 0;
}

static int row_start_time(struct ev_nsys *s, struct file *f, sqlite3_stmt *st, void *ctx)
{
	(void)ctx;
	if (f->have_utc || sqlite3_column_type(st, 0) == SQLITE_NULL)
		return 0;
	/* Both must be integers and the offset must leave room for trace
	 * times (a UTC epoch beyond year 2200 is not one): anything else is
	 * said, and the trace's own clock is used. */
	int64_t utc, sys, off;
	if (sqlite3_column_type(st, 0) != SQLITE_INTEGER || sqlite3_column_type(st, 1) != SQLITE_INTEGER ||
	    (utc = sqlite3_column_int64(st, 0)) < 0 || utc > (int64_t)7258118400 * 1000000000 ||
	    __builtin_sub_overflow(utc, f->normalized ? 0 : (sys = sqlite3_column_int64(st, 1)), &off)) {
		nsys_note(s, f, W_BAD_UTC, "TARGET_INFO_SESSION_START_TIME", 0);
		return 0;
	}
	(void)sys;
	f->offset = off;
	f->have_utc = 1;
	return 0;
}

static int row_host(struct ev_nsys *s, struct file *f, sqlite3_stmt *st, void *ctx)
{
	(void)s;
	(void)ctx;
	const char *v = nsys_col_text(st, 0);
	if (v && !f->host[0])
		snprintf(f->host, sizeof f->host, "%s", v);
	return 0;
}

static int row_gpu(struct ev_nsys *s, struct file *f, sqlite3_stmt *st, void *ctx)
{
	int fi = (int)(f - s->files);
	int64_t gp = sqlite3_column_int64(st, 0), dev = sqlite3_column_int64(st, 1);
	int64_t n = sqlite3_column_int64(st, 2);
	(void)ctx;
	struct gpu *g = nsys_gpu_add(s, fi, nsys_pid_of(gp));
	if (!g)
		return nsys_nomem(s);
	/* The device with the most kernels names the GPU of a process. */
	if (g->device < 0 || (int64_t)g->kernels < n) {
		g->device = dev;
		g->kernels = (uint64_t)n;
	}
	return 0;
}

static int row_grid(struct ev_nsys *s, struct file *f, sqlite3_stmt *st, void *ctx)
{
	(void)ctx;
	struct gpu *g = nsys_gpu_find(s, (int)(f - s->files), nsys_pid_of(sqlite3_column_int64(st, 0)));
	if (g)
		g->max_grid = sqlite3_column_int64(st, 1);
	return 0;
}

int nsys_pass1(struct ev_nsys *s, int fi)
{
	struct file *f = &s->files[fi];
	char sql[1024];
	int st = 0;
	f->nccl_domain = -1;
	int have[NCUR];
	for (int k = 0; k < NCUR; k++)
		have[k] = nsys_table_exists(f, nsys_cur_table[k]);
	if (!have[CUR_KERNEL] && !have[CUR_MEMCPY] && !have[CUR_MEMSET] && !have[CUR_NVTX])
		return nsys_fail(s, EV_ERR_FORMAT, "%s: not an Nsight Systems export (no CUPTI_ACTIVITY_KIND_* or NVTX_EVENTS table)",
		                    f->path);
	if (have[CUR_KERNEL] && (!nsys_column_exists(f, nsys_cur_table[CUR_KERNEL], "start") ||
	                         !nsys_column_exists(f, nsys_cur_table[CUR_KERNEL], "end") ||
	                         !nsys_column_exists(f, nsys_cur_table[CUR_KERNEL], "demangledName")))
		return nsys_fail(s, EV_ERR_FORMAT, "%s: table CUPTI_ACTIVITY_KIND_KERNEL lacks start, end or demangledName", f->path);
	if ((have[CUR_KERNEL] || have[CUR_RUNTIME]) && !nsys_table_exists(f, "StringIds"))
		return nsys_fail(s, EV_ERR_FORMAT, "%s: no StringIds table: names cannot be resolved", f->path);
	if (nsys_table_exists(f, "META_DATA_EXPORT") &&
	    (st = nsys_query_rows(s, f, "SELECT name, value FROM META_DATA_EXPORT", "META_DATA_EXPORT", row_meta, NULL)))
		return st;
	if (nsys_table_exists(f, "TARGET_INFO_SESSION_START_TIME") &&
	    nsys_column_exists(f, "TARGET_INFO_SESSION_START_TIME", "utcEpochNs") &&
	    nsys_column_exists(f, "TARGET_INFO_SESSION_START_TIME", "systemClockNs") &&
	    (st = nsys_query_rows(s, f, "SELECT utcEpochNs, systemClockNs FROM TARGET_INFO_SESSION_START_TIME",
	                     "TARGET_INFO_SESSION_START_TIME", row_start_time, NULL)))
		return st;
	if (!f->have_utc)
		f->offset = 0;
	if (nsys_table_exists(f, "TARGET_INFO_SYSTEM_ENV") &&
	    (st = nsys_query_rows(s, f, "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'",
	                     "TARGET_INFO_SYSTEM_ENV", row_host, NULL)))
		return st;
	nsys_node_from_path(s, f, fi);
	/* GPU processes: whoever ran kernels or memory operations. */
	for (int k = CUR_KERNEL; k <= CUR_MEMSET; k++) {
		if (!have[k])
			continue;
		snprintf(sql, sizeof sql, "SELECT ");
		nsys_add_col(sql, sizeof sql, f, nsys_cur_table[k], "globalPid", "0");
		nsys_add_col(sql, sizeof sql, f, nsys_cur_table[k], "deviceId", "0");
		size_t n = strlen(sql);
		snprintf(sql + n, sizeof sql - n, ", count(*) FROM %s GROUP BY 1, 2", nsys_cur_table[k]);
		if ((st = nsys_query_rows(s, f, sql, nsys_cur_table[k], row_gpu, NULL)))
			return st;
	}
	if (have[CUR_KERNEL] && nsys_column_exists(f, nsys_cur_table[CUR_KERNEL], "gridX") &&
	    nsys_column_exists(f, nsys_cur_table[CUR_KERNEL], "globalPid") &&
	    (st = nsys_query_rows(s, f,
	                     "SELECT globalPid, max(gridX) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE demangledName IN "
	                     "(SELECT id FROM StringIds WHERE value LIKE 'nccl%' OR value LIKE '%ncclDevKernel%' "
	                     "OR value LIKE '%ncclKernel%') GROUP BY 1",
	                     "CUPTI_ACTIVITY_KIND_KERNEL", row_grid, NULL)))
		return st;
	if (nsys_table_exists(f, "NVTX_PAYLOAD_SCHEMA_ENTRIES") &&
	    nsys_column_exists(f, "NVTX_PAYLOAD_SCHEMA_ENTRIES", "offset") &&
	    (st = nsys_query_rows(s, f,
	                     "SELECT domainId, schemaId, idx, name, type, offset FROM NVTX_PAYLOAD_SCHEMA_ENTRIES "
	                     "GROUP BY domainId, schemaId, idx ORDER BY domainId, schemaId, idx",
	                     "NVTX_PAYLOAD_SCHEMA_ENTRIES", nsys_row_entry, NULL)))
		return st;
	int nvtx_tid = have[CUR_NVTX] && nsys_column_exists(f, "NVTX_EVENTS", "globalTid");
	if (have[CUR_NVTX] && !nsys_column_exists(f, "NVTX_EVENTS", "text"))
		have[CUR_NVTX] = 0;
	if (have[CUR_NVTX]) {
		snprintf(sql, sizeof sql,
		         "SELECT %s, text FROM NVTX_EVENTS WHERE text LIKE 'commHash %% commId %%' ORDER BY start",
		         nvtx_tid ? "globalTid" : "NULL");
		if ((st = nsys_query_rows(s, f, sql, "NVTX_EVENTS", nsys_row_comm_info, NULL)))
			return st;
		if (f->has_blobs && nsys_column_exists(f, "NVTX_EVENTS", "binaryData") &&
		    nsys_column_exists(f, "NVTX_EVENTS", "textId") && f->nschemas &&
		    (st = nsys_query_rows(s, f,
		                     "SELECT n.globalTid, n.binaryData FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId "
		                     "WHERE s.value LIKE 'ncclCommInit%' OR s.value = 'ncclCommSplit' ORDER BY n.start",
		                     "NVTX_EVENTS", nsys_row_init_payload, NULL)))
			return st;
	}
	return 0;
}

/* Second half of pass 1, after every file's communicators are known. */
int nsys_pass1_topology(struct ev_nsys *s, int fi)
{
	struct file *f = &s->files[fi];
	char sql[512];
	if (!nsys_table_exists(f, "NVTX_EVENTS") || !nsys_column_exists(f, "NVTX_EVENTS", "text"))
		return 0;
	snprintf(sql, sizeof sql,
	         "SELECT %s, text FROM NVTX_EVENTS WHERE text LIKE 'commHash %% Rings [%%' OR "
	         "text LIKE 'commHash %% Trees [%%' OR text LIKE 'nccl%%(): commHash %%' ORDER BY start",
	         nsys_column_exists(f, "NVTX_EVENTS", "globalTid") ? "globalTid" : "NULL");
	return nsys_query_rows(s, f, sql, "NVTX_EVENTS", nsys_row_topo, NULL);
}

/* "nsys profiling start, pid: N" / "nsys profiling stopped, pid: N" marks
 * (ATLAHS' application patch): the first start and the last stop. */
static int row_profile_mark(struct ev_nsys *s, struct file *f, sqlite3_stmt *st, void *ctx)
{
	(void)ctx;
	const char *t = nsys_col_text(st, 2);
	uint32_t pid;
	if (!t || sqlite3_column_type(st, 0) != SQLITE_INTEGER || nsys_row_pid(st, 1, t, &pid))
		return 0;
	struct gpu *g = nsys_gpu_find(s, (int)(f - s->files), pid);
	int64_t ts = sqlite3_column_int64(st, 0);
	if (!g)
		return 0;
	if (!strncmp(t, "nsys profiling start", 20)) {
		if (!g->mark_start)
			g->mark_start = ts;
	} else if (!strncmp(t, "nsys profiling stop", 19)) {
		g->mark_stop = ts;
	}
	return 0;
}

/* --steps NAME[:FROM-TO]: the k-th range of that name on each GPU. */
static int row_step(struct ev_nsys *s, struct file *f, sqlite3_stmt *st, void *ctx)
{
	(void)ctx;
	uint32_t pid;
	if (sqlite3_column_type(st, 0) != SQLITE_INTEGER || sqlite3_column_type(st, 1) != SQLITE_INTEGER ||
	    nsys_row_pid(st, 2, nsys_col_text(st, 3), &pid))
		return 0;
	struct gpu *g = nsys_gpu_find(s, (int)(f - s->files), pid);
	if (!g)
		return 0;
	int64_t k = (int64_t)g->step_n++, a = sqlite3_column_int64(st, 0), b = sqlite3_column_int64(st, 1);
	if (k < s->o.step_from || k > s->o.step_to || b < a)
		return 0;
	if (g->step_hi < g->step_lo) {
		g->step_lo = a;
		g->step_hi = b;
	} else {
		if (a < g->step_lo)
			g->step_lo = a;
		if (b > g->step_hi)
			g->step_hi = b;
	}
	return 0;
}

static int64_t shifted(const struct file *f, int64_t t)
{
	int64_t r;
	if (__builtin_add_overflow(t, f->offset, &r))
		return f->offset > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* Each GPU's profiled window, in output time: the marks (unless
 * --window=all), intersected with --window T0:T1 and --steps. */
int nsys_windows(struct ev_nsys *s)
{
	int st;
	for (size_t i = 0; i < s->ngpus; i++) {
		struct gpu *g = &s->gpus[i];
		g->win_lo = INT64_MIN;
		g->win_hi = INT64_MAX;
		g->step_lo = 1;
		g->step_hi = 0;
	}
	for (int fi = 0; fi < s->nfiles; fi++) {
		struct file *f = &s->files[fi];
		if (!nsys_table_exists(f, "NVTX_EVENTS") || !nsys_column_exists(f, "NVTX_EVENTS", "start"))
			continue;
		int tid = nsys_column_exists(f, "NVTX_EVENTS", "globalTid");
		int text = nsys_column_exists(f, "NVTX_EVENTS", "text");
		char sql[768];
		if (s->o.window == EV_NSYS_WIN_MARKS && text) {
			snprintf(sql, sizeof sql,
			         "SELECT start, %s, text FROM NVTX_EVENTS WHERE text LIKE 'nsys profiling %%' ORDER BY start",
			         tid ? "globalTid" : "NULL");
			if ((st = nsys_query_rows(s, f, sql, "NVTX_EVENTS", row_profile_mark, NULL)))
				return st;
		}
		if (s->o.steps && nsys_column_exists(f, "NVTX_EVENTS", "end")) {
			int ids = nsys_column_exists(f, "NVTX_EVENTS", "textId") && nsys_table_exists(f, "StringIds") &&
			          nsys_column_exists(f, "StringIds", "value");
			char name[160];
			snprintf(name, sizeof name, "%s%s%s",
			         text && ids ? "COALESCE(n.text, (SELECT value FROM StringIds WHERE id = n.textId))" : "",
			         text && !ids ? "n.text" : "", !text && ids ? "(SELECT value FROM StringIds WHERE id = n.textId)" : "");
			if (!name[0])
				continue;
			snprintf(sql, sizeof sql,
			         "SELECT n.start, n.end, %s, %s FROM NVTX_EVENTS n WHERE n.end IS NOT NULL AND "
			         "substr(%s, 1, length(?1)) = ?1 ORDER BY n.start",
			         tid ? "n.globalTid" : "NULL", name, name);
			sqlite3_stmt *q;
			if (sqlite3_prepare_v2(f->db, sql, -1, &q, NULL) != SQLITE_OK)
				return nsys_sql_error(s, f, "NVTX_EVENTS");
			sqlite3_bind_text(q, 1, s->o.steps, -1, SQLITE_STATIC);
			int rc;
			st = 0;
			while (!st && (rc = sqlite3_step(q)) == SQLITE_ROW)
				st = row_step(s, f, q, NULL);
			if (!st && rc != SQLITE_DONE)
				st = nsys_sql_error(s, f, "NVTX_EVENTS");
			sqlite3_finalize(q);
			if (st)
				return st;
		}
	}
	size_t nsteps = 0, nmarks = 0;
	for (size_t i = 0; i < s->ngpus; i++) {
		struct gpu *g = &s->gpus[i];
		const struct file *f = &s->files[g->file];
		if (g->mark_start) {
			nmarks++;
			g->win_lo = shifted(f, g->mark_start);
			if (g->mark_stop > g->mark_start)
				g->win_hi = shifted(f, g->mark_stop);
		}
		if (s->o.have_range) {
			if (s->o.t0 > g->win_lo)
				g->win_lo = s->o.t0;
			if (s->o.t1 < g->win_hi)
				g->win_hi = s->o.t1;
		}
		if (s->o.steps) {
			if (g->step_hi >= g->step_lo) {
				nsteps++;
				if (shifted(f, g->step_lo) > g->win_lo)
					g->win_lo = shifted(f, g->step_lo);
				if (shifted(f, g->step_hi) < g->win_hi)
					g->win_hi = shifted(f, g->step_hi);
			} else {
				nsys_warn(s, "%s: GPU process %u (rank %lld) has %llu NVTX ranges named '%s*', none numbered "
				          "%lld-%lld: all of its records are left out", f->path, g->pid, (long long)g->rank,
				          (unsigned long long)g->step_n, s->o.steps, (long long)s->o.step_from,
				          (long long)s->o.step_to);
				g->win_lo = INT64_MAX;
				g->win_hi = INT64_MIN;
			}
		}
	}
	if (s->o.steps && !nsteps && s->ngpus)
		return nsys_fail(s, EV_ERR_FORMAT, "%s: no NVTX range named '%s*' numbered %lld-%lld on any GPU process "
		                 "(--steps counts the ranges of each process from 0)",
		                 s->files[0].path, s->o.steps, (long long)s->o.step_from, (long long)s->o.step_to);
	if (nmarks && nmarks < s->ngpus)
		nsys_warn(s, "%zu of %zu GPU processes have 'nsys profiling start' marks; the others are kept whole",
		          nmarks, s->ngpus);
	return 0;
}
