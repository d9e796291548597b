/* SPDX-License-Identifier: MIT */
/*
 * merge.c - the second pass: one ORDER BY start cursor per table and file,
 * merged by time with a heap, each row turned into records as it arrives
 * (kernels, memory operations, NVTX ranges and marks, runtime launches that
 * give NCCL calls their correlation ids).  Only the pending NCCL operations
 * and caches keyed by distinct names stay in memory.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* " ORDER BY rowid" when the table's rows are stored in start order (as
 * nsys export writes them), so SQLite reads them as they lie and sorts
 * nothing: memory stays flat whatever the size.  Otherwise " ORDER BY
 * start": SQLite sorts, in memory up to its cache budget per cursor and
 * in temporary files beyond.  (Rows whose start is not an integer are
 * left out by the reader either way.) */
static const char *order_of(struct file *f, const char *table)
{
	char sql[160];
	sqlite3_stmt *st;
	int sorted = 0, rc = SQLITE_DONE;
	snprintf(sql, sizeof sql, "SELECT start FROM %s ORDER BY rowid", table);
	if (sqlite3_prepare_v2(f->db, sql, -1, &st, NULL) == SQLITE_OK) {
		int64_t last = INT64_MIN;
		sorted = 1;
		while (sorted && (rc = sqlite3_step(st)) == SQLITE_ROW) {
			if (sqlite3_column_type(st, 0) != SQLITE_INTEGER)
				continue;
			int64_t t = sqlite3_column_int64(st, 0);
			sorted = t >= last;
			last = t;
		}
		if (sorted && rc != SQLITE_DONE)
			sorted = 0; /* a damaged page: let the sorting query report it */
		sqlite3_finalize(st);
	}
	return sorted ? " ORDER BY rowid" : " ORDER BY start";
}

int nsys_prepare_cursors(struct ev_nsys *s, struct file *f, int has_nccl)
{
	char sql[1536];
	const char *t;
	size_t n;
	/* kernels: start end globalPid deviceId streamId correlationId demangledName gridX blockX */
	if (nsys_table_exists(f, t = nsys_cur_table[CUR_KERNEL])) {
		snprintf(sql, sizeof sql, "SELECT start, end");
		static const char *const kc[] = { "globalPid", "deviceId", "streamId", "correlationId" };
		for (int i = 0; i < 4; i++)
			nsys_add_col(sql, sizeof sql, f, t, kc[i], "0");
		nsys_add_col(sql, sizeof sql, f, t, "demangledName", NULL);
		nsys_add_col(sql, sizeof sql, f, t, "gridX", "0");
		nsys_add_col(sql, sizeof sql, f, t, "blockX", "0");
		n = strlen(sql);
		snprintf(sql + n, sizeof sql - n, " FROM %s%s", t, order_of(f, t));
		if (sqlite3_prepare_v2(f->db, sql, -1, &f->cur[CUR_KERNEL], NULL) != SQLITE_OK)
			return nsys_sql_error(s, f, t);
	}
	for (int k = CUR_MEMCPY; k <= CUR_MEMSET; k++) {
		if (!nsys_table_exists(f, t = nsys_cur_table[k]))
			continue;
		snprintf(sql, sizeof sql, "SELECT start, end");
		static const char *const mc[] = { "globalPid", "deviceId", "streamId", "correlationId", "bytes", "copyKind" };
		for (int i = 0; i < (k == CUR_MEMCPY ? 6 : 5); i++)
			nsys_add_col(sql, sizeof sql, f, t, mc[i], "0");
		n = strlen(sql);
		snprintf(sql + n, sizeof sql - n, " FROM %s%s", t, order_of(f, t));
		if (sqlite3_prepare_v2(f->db, sql, -1, &f->cur[k], NULL) != SQLITE_OK)
			return nsys_sql_error(s, f, t);
	}
	/* NVTX: start end eventType globalTid domainId text textId binaryData */
	if (nsys_table_exists(f, t = nsys_cur_table[CUR_NVTX]) && nsys_column_exists(f, t, "start")) {
		snprintf(sql, sizeof sql, "SELECT start");
		static const char *const nc[] = { "end", "eventType", "globalTid", "domainId", "text", "textId", "binaryData" };
		for (int i = 0; i < 7; i++)
			nsys_add_col(sql, sizeof sql, f, t, nc[i], NULL);
		n = strlen(sql);
		snprintf(sql + n, sizeof sql - n, " FROM %s%s%s", t,
		         nsys_column_exists(f, t, "eventType") ? " WHERE eventType IN (34, 59, 60)" : "", order_of(f, t));
		if (sqlite3_prepare_v2(f->db, sql, -1, &f->cur[CUR_NVTX], NULL) != SQLITE_OK)
			return nsys_sql_error(s, f, t);
	}
	/* runtime: start end globalTid correlationId nameId; only launches
	 * unless --api */
	if ((s->o.api || has_nccl) && nsys_table_exists(f, t = nsys_cur_table[CUR_RUNTIME]) && nsys_column_exists(f, t, "nameId") &&
	    nsys_column_exists(f, t, "globalTid") && nsys_column_exists(f, t, "correlationId")) {
		snprintf(sql, sizeof sql,
		         "SELECT start, end, globalTid, correlationId, nameId FROM %s%s%s", t,
		         s->o.api ? "" : " WHERE nameId IN (SELECT id FROM StringIds WHERE value LIKE 'cudaLaunchKernel%' "
		                          "OR value LIKE 'cuLaunchKernel%' OR value LIKE 'cudaLaunchCooperativeKernel%' "
		                          "OR value LIKE 'cuLaunchCooperativeKernel%')", order_of(f, t));
		if (sqlite3_prepare_v2(f->db, sql, -1, &f->cur[CUR_RUNTIME], NULL) != SQLITE_OK)
			return nsys_sql_error(s, f, t);
		f->has_runtime_launch = 1;
	}
	return 0;
}

/* A time plus the file's UTC offset.  A time that overflows is counted
 * and its row left out (returns 1). */
static int shift(struct ev_nsys *s, struct file *f, int64_t t, uint64_t row, int kind, int64_t *out)
{
	if (__builtin_add_overflow(t, f->offset, out)) {
		nsys_note(s, f, W_SAT_TIME, nsys_cur_table[kind], row);
		return 1;
	}
	return 0;
}

int64_t nsys_shift_time(struct ev_nsys *s, struct file *f, int64_t t, uint64_t row, const char *table)
{
	int64_t r;
	if (__builtin_add_overflow(t, f->offset, &r)) {
		nsys_note(s, f, W_SAT_TIME, table, row);
		return f->offset > 0 ? INT64_MAX : INT64_MIN;
	}
	return r;
}

/* The row's end as a duration; a non-integer end or one before the start
 * is counted and reads as duration 0. */
static uint64_t dur_of(struct ev_nsys *s, struct file *f, sqlite3_stmt *st, int col, int64_t start, uint64_t row, int kind)
{
	int64_t end;
	if (nsys_col_int(s, f, st, col, W_BAD_END, nsys_cur_table[kind], row, &end) ||
	    sqlite3_column_type(st, col) == SQLITE_NULL)
		return 0;
	if (end < start) {
		nsys_note(s, f, W_BAD_END, nsys_cur_table[kind], row);
		return 0;
	}
	uint64_t d = (uint64_t)end - (uint64_t)start;
	return d > (uint64_t)INT64_MAX ? (uint64_t)INT64_MAX : d;
}

/* 1 inside the GPU's profiled window (or none), 0 outside (counted). */
int nsys_in_window(struct ev_nsys *s, struct gpu *g, int64_t ts)
{
	if (ts >= g->win_lo && ts <= g->win_hi)
		return 1;
	struct file *f = &s->files[g->file];
	if (ts < g->win_lo)
		f->cut_before++;
	else
		f->cut_after++;
	return 0;
}

static int64_t col_i(struct ev_nsys *s, struct file *f, sqlite3_stmt *st, int i, uint64_t row, int kind)
{
	int64_t v;
	nsys_col_int(s, f, st, i, W_BAD_INT, nsys_cur_table[kind], row, &v);
	return v;
}

/* A stream id (column 4): outside 0..2^32-1 it fits no ev stream field
 * (-5 would become 4294967291); counted and said, stream 0. */
static uint32_t col_stream(struct ev_nsys *s, struct file *f, sqlite3_stmt *st, uint64_t row, int kind)
{
	int64_t v = col_i(s, f, st, 4, row, kind);
	if (v >= 0 && v <= (int64_t)UINT32_MAX)
		return (uint32_t)v;
	nsys_note(s, f, W_BAD_STREAM, nsys_cur_table[kind], row);
	return 0;
}

static int put(struct ev_nsys *s, struct gpu *g, const struct ev_rec *r)
{
	return nsys_in_window(s, g, r->ts) ? nsys_write_status(s, ev_write(s->w, r)) : 0;
}

static int do_kernel(struct ev_nsys *s, int fi, sqlite3_stmt *st, int64_t start, int64_t ts, uint64_t row)
{
	struct file *f = &s->files[fi];
	struct gpu *g = nsys_gpu_find(s, fi, nsys_pid_of(col_i(s, f, st, 2, row, CUR_KERNEL)));
	if (!g) {
		f->skipped_nopid++;
		return 0;
	}
	struct ev_rec r;
	struct kinfo ki;
	ev_rec_init(&r);
	r.type = EV_KERNEL;
	r.rank = (uint32_t)g->rank;
	r.stream = col_stream(s, f, st, row, CUR_KERNEL);
	r.ts = ts;
	r.dur = dur_of(s, f, st, 1, start, row, CUR_KERNEL);
	r.id = (uint32_t)col_i(s, f, st, 5, row, CUR_KERNEL);
	int64_t grid = col_i(s, f, st, 7, row, CUR_KERNEL), block = col_i(s, f, st, 8, row, CUR_KERNEL);
	r.aux = grid > 0 && grid <= UINT32_MAX ? (uint32_t)grid : 0;
	r.nthreads = block > 0 && block <= UINT16_MAX ? (uint16_t)block : 0;
	r.src = (uint16_t)fi;
	int rc = nsys_str_of(s, f, fi, col_i(s, f, st, 6, row, CUR_KERNEL), &r.name, row, nsys_cur_table[CUR_KERNEL]);
	if (rc)
		return rc;
	if (nsys_kinfo_of(s, r.name, &ki))
		return nsys_nomem(s);
	r.op = ki.kclass;
	if ((rc = put(s, g, &r)) != 0)
		return rc;
	return ki.nccl ? nsys_nccl_kernel(s, g, &r, start, &ki) : 0;
}

static int do_mem(struct ev_nsys *s, int fi, sqlite3_stmt *st, int kind, int64_t start, int64_t ts, uint64_t row)
{
	struct file *f = &s->files[fi];
	struct gpu *g = nsys_gpu_find(s, fi, nsys_pid_of(col_i(s, f, st, 2, row, kind)));
	if (!g) {
		f->skipped_nopid++;
		return 0;
	}
	struct ev_rec r;
	ev_rec_init(&r);
	r.type = kind == CUR_MEMCPY ? EV_MEMCPY : EV_MEMSET;
	r.rank = (uint32_t)g->rank;
	r.stream = col_stream(s, f, st, row, kind);
	r.ts = ts;
	r.dur = dur_of(s, f, st, 1, start, row, kind);
	r.id = (uint32_t)col_i(s, f, st, 5, row, kind);
	int64_t b = col_i(s, f, st, 6, row, kind);
	r.bytes = b > 0 ? (uint64_t)b : 0;
	r.src = (uint16_t)fi;
	if (kind == CUR_MEMCPY) {
		switch (col_i(s, f, st, 7, row, kind)) {
		case 1: r.op = EV_CP_HTOD; break;
		case 2: r.op = EV_CP_DTOH; break;
		case 8: r.op = EV_CP_DTOD; break;
		case 9: r.op = EV_CP_HTOH; break;
		case 10: r.op = EV_CP_PTOP; break;
		default: r.op = EV_CP_UNKNOWN; break;
		}
	}
	return put(s, g, &r);
}

/* Stock NCCL range (registered name) -> a call, sizes from the payload. */
static int stock_call(struct ev_nsys *s, struct file *f, sqlite3_stmt *st, const char *name, struct call *c)
{
	unsigned kind = ev_nccl_api_coll(name);
	if (kind == EV_OP_UNKNOWN)
		return 0;
	memset(c, 0, sizeof *c);
	c->kind = kind;
	c->p2p = kind == EV_OP_SEND || kind == EV_OP_RECV;
	size_t bl;
	const unsigned char *b = nsys_col_blob(s, st, 7, &bl);
	int64_t v[NPF];
	unsigned m;
	if (b && nsys_decode_payload(f, b, bl, v, &m) == 0) {
		if (m & 1u << PF_COMM)
			c->comm = v[PF_COMM], c->have |= HC_COMM;
		if (m & 1u << PF_SIZE)
			c->bytes = v[PF_SIZE], c->have |= HC_BYTES;
		if (m & 1u << PF_PEER)
			c->peer = v[PF_PEER], c->have |= HC_PEER;
		if (m & 1u << PF_ROOT)
			c->root = v[PF_ROOT], c->have |= HC_ROOT;
		if (m & 1u << PF_REDOP)
			c->redop = v[PF_REDOP], c->have |= HC_REDOP;
	}
	return 1;
}

/* Annotated call "ncclAllReduce(): commHash 0x.., stream 0x.., data_size .." */
static int annotated_call(const char *t, struct call *c)
{
	const char *paren = strstr(t, "(): ");
	char fn[32];
	if (!paren || !has_prefix(t, "nccl") || (size_t)(paren - t) >= sizeof fn)
		return 0;
	memcpy(fn, t, (size_t)(paren - t));
	fn[paren - t] = '\0';
	memset(c, 0, sizeof *c);
	c->kind = ev_nccl_api_coll(fn);
	if (c->kind == EV_OP_UNKNOWN)
		return 0;
	c->p2p = c->kind == EV_OP_SEND || c->kind == EV_OP_RECV;
	if (!ev_nsys_marker_num(t, "commHash", &c->comm)) c->have |= HC_COMM;
	if (!ev_nsys_marker_num(t, "data_size", &c->bytes)) c->have |= HC_BYTES;
	if (!ev_nsys_marker_num(t, "type_size", &c->type_size)) c->have |= HC_TS;
	if (!ev_nsys_marker_num(t, "red_op", &c->redop)) c->have |= HC_REDOP;
	if (!ev_nsys_marker_num(t, "root", &c->root)) c->have |= HC_ROOT;
	if (!ev_nsys_marker_num(t, "receiver_rank", &c->peer) || !ev_nsys_marker_num(t, "sender_rank", &c->peer) ||
	    !ev_nsys_marker_num(t, "peer", &c->peer))
		c->have |= HC_PEER;
	if (!ev_nsys_marker_num(t, "stream", &c->stream)) c->have |= HC_STREAM;
	return 1;
}

static int do_nvtx(struct ev_nsys *s, int fi, sqlite3_stmt *st, int64_t start, int64_t ts, uint64_t row)
{
	struct file *f = &s->files[fi];
	int mark = sqlite3_column_type(st, 1) == SQLITE_NULL;
	const char *text = nsys_col_text(st, 5);
	struct ev_rec r;
	ev_rec_init(&r);
	r.ts = ts;
	r.dur = mark ? 0 : dur_of(s, f, st, 1, start, row, CUR_NVTX);
	int64_t end = start + (int64_t)(r.dur > (uint64_t)(INT64_MAX - (start > 0 ? start : 0)) ? 0 : r.dur);
	r.src = (uint16_t)fi;
	r.type = mark ? EV_MARK : EV_RANGE;
	r.op = EV_RG_NVTX;
	/* A text of its own is interned only when it is written: the annotated
	 * markers that become other records carry per-operation numbers
	 * (opCount, buffer addresses), and interning them made memory grow
	 * with the number of operations (docs/nsys2ev.md). */
	const char *name = text;
	if (!text && sqlite3_column_type(st, 6) != SQLITE_NULL) {
		int rc = nsys_str_of(s, f, fi, col_i(s, f, st, 6, row, CUR_NVTX), &r.name, row, nsys_cur_table[CUR_NVTX]);
		if (rc)
			return rc;
		name = ev_strtab_get(s->st, r.name, NULL);
	}
	if (!name)
		name = "";
	uint32_t pid;
	if (nsys_row_pid(st, 3, name, &pid)) {
		f->skipped_nopid++;
		return 0;
	}
	struct gpu *g = nsys_gpu_find(s, fi, pid);
	if (!g) {
		f->skipped_nopid++;
		return 0;
	}
	uint32_t tid = sqlite3_column_type(st, 3) != SQLITE_NULL ? (uint32_t)(sqlite3_column_int64(st, 3) & 0xFFFFFF) : pid;
	r.rank = (uint32_t)g->rank;
	r.stream = tid;
	struct call c;
	int rc;
	if (f->annotated && text && name[0] && (name[0] == 'n' || name[0] == 'c' || name[0] == 'B')) {
		if (has_prefix(name, "ncclGroupStart()") || has_prefix(name, "ncclGroupEnd()")) {
			if ((rc = nsys_group_mark(g, tid, start, end, name[9] == 'S')) != 0)
				return nsys_nomem(s);
			r.op = EV_RG_NCCL;
			const char *fn = name[9] == 'S' ? "ncclGroupStart" : "ncclGroupEnd";
			if (nsys_intern(s, fn, strlen(fn), &r.name))
				return nsys_nomem(s);
			return put(s, g, &r);
		}
		if (annotated_call(name, &c)) {
			const char *paren = strstr(name, "()");
			if (nsys_intern(s, name, (size_t)(paren - name), &c.name))
				return nsys_nomem(s);
			if ((rc = nsys_add_call(s, g, tid, start, end, &c)) != 0)
				return nsys_nomem(s);
			r.op = EV_RG_NCCL;
			r.name = c.name;
			return put(s, g, &r);
		}
		/* Markers that become coll/p2p/chan records and #comm/#ring/#tree
		 * lines are not written again as marks. */
		if (has_prefix(name, "collType ")) {
			nsys_coll_info(g, name, &f->skipped_bad);
			return 0;
		}
		if (has_prefix(name, "nWarps ") && strstr(name, "workCount"))
			return nsys_coll_kernel(g, name, &f->skipped_bad) ? nsys_nomem(s) : 0;
		if (has_prefix(name, "Bytes ") && strstr(name, "p2pType"))
			return nsys_p2p_kernel(g, name, &f->skipped_bad) ? nsys_nomem(s) : 0;
		if (has_prefix(name, "commHash "))
			return 0;
	} else if (!f->annotated && name[0] == 'n' && has_prefix(name, "nccl") && !text &&
	           (f->nccl_domain < 0 || sqlite3_column_type(st, 4) == SQLITE_NULL ||
	            sqlite3_column_int64(st, 4) == f->nccl_domain)) {
		r.op = EV_RG_NCCL;
		if (!strcmp(name, "ncclGroupStart") || !strcmp(name, "ncclGroupEnd")) {
			if ((rc = nsys_group_mark(g, tid, start, end, name[9] == 'S')) != 0)
				return nsys_nomem(s);
		} else if (stock_call(s, f, st, name, &c)) {
			c.name = r.name;
			f->nccl_calls++;
			if (!(c.have & HC_BYTES) && (rc = nsys_log_fill(s, g, &c)) != 0)
				return rc;
			if (!(c.have & HC_BYTES) && nsys_torch_fill(g, tid, start, &c))
				f->torch_sized++;
			if (!(c.have & HC_BYTES))
				f->nccl_nosize++;
			if ((rc = nsys_add_call(s, g, tid, start, end, &c)) != 0)
				return nsys_nomem(s);
		}
	}
	if (has_prefix(name, "nccl"))
		r.op = EV_RG_NCCL;
	if (text && name[0] == 'n' && !strncmp(name, "nccl:", 5) && nsys_torch_range(g, tid, start, end, name))
		return nsys_nomem(s);
	if (text && nsys_intern(s, text, (size_t)sqlite3_column_bytes(st, 5), &r.name))
		return nsys_nomem(s);
	return put(s, g, &r);
}

static int do_runtime(struct ev_nsys *s, int fi, sqlite3_stmt *st, int64_t start, int64_t ts, uint64_t row)
{
	struct file *f = &s->files[fi];
	int64_t gt = col_i(s, f, st, 2, row, CUR_RUNTIME);
	struct gpu *g = nsys_gpu_find(s, fi, nsys_pid_of(gt));
	if (!g) {
		if (s->o.api)
			f->skipped_nopid++;
		return 0;
	}
	uint32_t tid = (uint32_t)(gt & 0xFFFFFF);
	struct ev_rec r;
	ev_rec_init(&r);
	r.type = EV_API;
	r.rank = (uint32_t)g->rank;
	r.stream = tid;
	r.ts = ts;
	r.dur = dur_of(s, f, st, 1, start, row, CUR_RUNTIME);
	r.id = (uint32_t)col_i(s, f, st, 3, row, CUR_RUNTIME);
	r.src = (uint16_t)fi;
	int rc = nsys_str_of(s, f, fi, col_i(s, f, st, 4, row, CUR_RUNTIME), &r.name, row, nsys_cur_table[CUR_RUNTIME]);
	if (rc)
		return rc;
	const char *name = ev_strtab_get(s->st, r.name, NULL);
	if (!name)
		name = "";
	r.op = has_prefix(name, "cu") && !has_prefix(name, "cuda") ? EV_API_DRIVER : EV_API_RUNTIME;
	if (g->units && (has_prefix(name, "cudaLaunch") || has_prefix(name, "cuLaunch")))
		nsys_note_launch(g, tid, start, r.id);
	return s->o.api ? put(s, g, &r) : 0;
}

/* ---- the time merge over every table of every file -------------------- */

struct cursor { int64_t ts, start; int file, kind; uint64_t row; };

static int cur_less(const struct cursor *a, const struct cursor *b)
{
	if (a->ts != b->ts)
		return a->ts < b->ts;
	if (a->file != b->file)
		return a->file < b->file;
	return a->kind < b->kind;
}

static void heap_down(struct cursor *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < n && cur_less(&h[l], &h[m]))
			m = l;
		if (l + 1 < n && cur_less(&h[l + 1], &h[m]))
			m = l + 1;
		if (m == i)
			return;
		struct cursor t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* Step a cursor to its next usable row: 1 = a row, 0 = done, <0 = error.
 * Rows whose start is not an integer, or overflows with the UTC offset,
 * are counted and left out (they cannot be placed in time). */
static int cur_step(struct ev_nsys *s, struct cursor *c)
{
	struct file *f = &s->files[c->file];
	sqlite3_stmt *st = f->cur[c->kind];
	for (;;) {
		int rc = sqlite3_step(st);
		if (rc == SQLITE_DONE)
			return 0;
		if (rc != SQLITE_ROW)
			return nsys_fail(s, EV_ERR_FORMAT, "%s: %s: row %llu: %s", f->path, nsys_cur_table[c->kind],
			                 (unsigned long long)c->row + 1, sqlite3_errmsg(f->db));
		c->row++;
		f->rows[c->kind]++;
		if (sqlite3_column_type(st, 0) != SQLITE_INTEGER) {
			nsys_note(s, f, W_BAD_TIME, nsys_cur_table[c->kind], c->row);
			continue;
		}
		c->start = sqlite3_column_int64(st, 0);
		if (shift(s, f, c->start, c->row, c->kind, &c->ts))
			continue;
		return 1;
	}
}

int nsys_pass2(struct ev_nsys *s, void (*progress)(void *, uint64_t), void *ctx)
{
	struct cursor *h = malloc((size_t)s->nfiles * NCUR * sizeof *h);
	size_t n = 0;
	int rc = 0;
	uint64_t nrows = 0;
	if (!h)
		return nsys_nomem(s);
	for (int i = 0; i < s->nfiles && !rc; i++)
		for (int k = 0; k < NCUR && !rc; k++) {
			if (!s->files[i].cur[k])
				continue;
			h[n] = (struct cursor){ 0, 0, i, k, 0 };
			int r = cur_step(s, &h[n]);
			if (r < 0)
				rc = r;
			else if (r > 0)
				n++;
		}
	for (size_t i = n / 2; i-- > 0;)
		heap_down(h, n, i);
	while (n && !rc) {
		struct cursor *c = &h[0];
		sqlite3_stmt *st = s->files[c->file].cur[c->kind];
		s->at_file = c->file;
		s->at_kind = c->kind;
		s->at_row = c->row;
		switch (c->kind) {
		case CUR_KERNEL: rc = do_kernel(s, c->file, st, c->start, c->ts, c->row); break;
		case CUR_MEMCPY:
		case CUR_MEMSET: rc = do_mem(s, c->file, st, c->kind, c->start, c->ts, c->row); break;
		case CUR_NVTX: rc = do_nvtx(s, c->file, st, c->start, c->ts, c->row); break;
		default: rc = do_runtime(s, c->file, st, c->start, c->ts, c->row); break;
		}
		if (rc)
			break;
		int r = cur_step(s, c);
		if (r < 0) {
			rc = r;
			break;
		}
		if (r == 0)
			h[0] = h[--n];
		heap_down(h, n, 0);
		if ((++nrows & 0xFFFF) == 0 && progress)
			progress(ctx, ev_writer_count(s->w));
	}
	free(h);
	if (!rc)
		s->at_row = 0;
	/* Statuses from the queues carry no message of their own. */
	if (rc && rc != EV_ERR_PIPE && !s->err[0])
		rc = rc == EV_ERR_NOMEM ? nsys_nomem(s) : nsys_write_status(s, rc);
	return rc;
}
