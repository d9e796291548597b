/* SPDX-License-Identifier: MIT */
/*
 * join.c - one schedule from rank parts written by parallel workers
 * (rank_0 .. rank_<N-1> in a directory).
 *
 * A part may be truncated (a worker killed mid-write), damaged or missing;
 * joined as is it would give LogGOPSim a schedule that deadlocks or reads
 * past its arrays.  So every part is checked before it is copied: a text
 * part must be exactly the grammar ev2goal writes (its rank's block, labels
 * l0, l1, ... in order, requires lines naming earlier labels, peers below N,
 * 8-bit cpu and nic, a closing brace as its last line); a binary part must
 * have the section layout (node count, roots, 39-byte nodes whose
 * successor counts and offsets add up, the appendix of exactly that size).
 * Memory stays flat: one line or one buffer at a time.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "goal_int.h"

#define GOAL_LINE_MAX 4096

static int jfail(struct ev_goal_error *err, int status, const char *fmt, ...) EV_PRINTF(3, 4);
static int jfail(struct ev_goal_error *err, int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	err->status = status;
	err->in_output = 0;
	return status;
}

static int jout(struct ev_goal_error *err, int rc)
{
	err->status = rc;
	err->in_output = 1;
	err->msg[0] = '\0';
	return rc;
}

/* ---- text parts ------------------------------------------------------ */

/* A cursor over one line: each step consumes a literal or a number. */
struct cur { const char *p, *e; };

static int lit(struct cur *c, const char *s)
{
	size_t n = strlen(s);
	if ((size_t)(c->e - c->p) < n || memcmp(c->p, s, n))
		return 0;
	c->p += n;
	return 1;
}

/* A decimal number without sign or leading zeros, at most max. */
static int num(struct cur *c, uint64_t max, uint64_t *v)
{
	const char *s = c->p;
	uint64_t x = 0;
	while (c->p < c->e && *c->p >= '0' && *c->p <= '9') {
		unsigned d = (unsigned)(*c->p - '0');
		if (x > (UINT64_MAX - d) / 10)
			return 0;
		x = x * 10 + d;
		c->p++;
	}
	if (c->p == s || (*s == '0' && c->p - s > 1) || x > max)
		return 0;
	*v = x;
	return 1;
}

struct tpart {
	const char *path;
	uint32_t rank, nranks;
	uint64_t lineno;
	uint64_t nops;  /* labels defined so far */
	int closed;     /* the closing brace was seen */
};

static int tbad(struct ev_goal_error *err, const struct tpart *t, const char *what)
{
	return jfail(err, EV_ERR_FORMAT, "%s: line %llu: %s", t->path, (unsigned long long)t->lineno, what);
}

/* The peer field of a send ("to P") or recv ("from P" or "from -1"). */
static int peer_ok(struct cur *c, const struct tpart *t, int recv, struct ev_goal_error *err)
{
	uint64_t p;
	if (recv && lit(c, "-1"))
		return 0;
	if (!num(c, UINT32_MAX, &p))
		return tbad(err, t, "not a GOAL line as ev2goal writes it (peer)");
	if (p >= t->nranks)
		return jfail(err, EV_ERR_RANGE,
		             "%s: line %llu: peer %llu is not below num_ranks %u (the parts are rank_0 .. rank_%u)", t->path,
		             (unsigned long long)t->lineno, (unsigned long long)p, t->nranks, t->nranks - 1);
	return 0;
}

/* One line of a rank block after its header. */
static int text_line(struct tpart *t, const char *line, size_t len, struct ev_goal_error *err)
{
	struct cur c = { line, line + len };
	uint64_t k, v;
	if (t->closed)
		return tbad(err, t, "text after the closing } of the rank block");
	if (len == 1 && line[0] == '}') {
		t->closed = 1;
		return 0;
	}
	if (!lit(&c, "l") || !num(&c, UINT32_MAX, &k))
		return tbad(err, t, "not a GOAL line as ev2goal writes it");
	if (lit(&c, ": ")) {
		/* An op: the next label in order. */
		if (k != t->nops)
			return jfail(err, EV_ERR_FORMAT, "%s: line %llu: label l%llu where l%llu comes next", t->path,
			             (unsigned long long)t->lineno, (unsigned long long)k, (unsigned long long)t->nops);
		int rc;
		if (lit(&c, "calc ")) {
			if (!num(&c, UINT64_MAX, &v) || !lit(&c, " cpu ") || !num(&c, 255, &v))
				return tbad(err, t, "not a GOAL calc line as ev2goal writes it (calc D cpu C, C < 256)");
		} else {
			int recv = lit(&c, "recv ");
			if (!recv && !lit(&c, "send "))
				return tbad(err, t, "not a GOAL line as ev2goal writes it (send, recv or calc)");
			if (!num(&c, UINT64_MAX, &v) || !lit(&c, recv ? "b from " : "b to "))
				return tbad(err, t, "not a GOAL send/recv line as ev2goal writes it");
			if ((rc = peer_ok(&c, t, recv, err)))
				return rc;
			if (!lit(&c, " tag ") || !num(&c, UINT32_MAX, &v) || !lit(&c, " cpu ") || !num(&c, 255, &v) ||
			    !lit(&c, " nic ") || !num(&c, 255, &v))
				return tbad(err, t, "not a GOAL send/recv line as ev2goal writes it (tag T cpu C nic N, C, N < 256)");
		}
		if (c.p != c.e)
			return tbad(err, t, "text after the end of a GOAL op line");
		t->nops++;
		return 0;
	}
	int ireq = lit(&c, " irequires l");
	if (!ireq && !lit(&c, " requires l"))
		return tbad(err, t, "not a GOAL line as ev2goal writes it");
	if (!num(&c, UINT32_MAX, &v) || c.p != c.e)
		return tbad(err, t, "not a GOAL requires line as ev2goal writes it (lK requires lJ)");
	if (!t->nops || k != t->nops - 1)
		return tbad(err, t, "a requires line that does not follow its op");
	if (v >= k)
		return jfail(err, EV_ERR_FORMAT, "%s: line %llu: l%llu requires l%llu, which is not earlier", t->path,
		             (unsigned long long)t->lineno, (unsigned long long)k, (unsigned long long)v);
	return 0;
}

/* Check one text part and copy it to out as it is checked. */
static int join_text_part(const char *path, uint32_t rank, uint32_t nranks, ev_output *out, struct ev_goal_error *err)
{
	ev_input *in;
	if (ev_input_open(&in, path))
		return jfail(err, EV_ERR_IO, "%s: %s", path, strerror(errno));
	ev_input_set_line_limit(in, GOAL_LINE_MAX);
	struct tpart t = { .path = path, .rank = rank, .nranks = nranks };
	const char *line;
	size_t len;
	int rc, status = EV_OK;
	while ((rc = ev_input_line(in, &line, &len)) == EV_REC) {
		t.lineno++;
		if (t.lineno == 1) {
			char want[32];
			int n = snprintf(want, sizeof want, "rank %u {", rank);
			if (len != (size_t)n || memcmp(line, want, len)) {
				status = jfail(err, EV_ERR_FORMAT, "%s: line 1: expected `%s`, the start of rank %u's block", path,
				               want, rank);
				break;
			}
		} else if ((status = text_line(&t, line, len, err))) {
			break;
		}
		int wr = ev_output_write(out, line, len);
		if (wr || (wr = ev_output_putc(out, '\n'))) {
			status = jout(err, wr);
			break;
		}
	}
	if (!status) {
		t.lineno++;
		if (rc == EV_ERR_TRUNCATED)
			status = jfail(err, EV_ERR_TRUNCATED, "%s: line %llu: truncated: the last line has no newline", path,
			               (unsigned long long)t.lineno);
		else if (rc == EV_ERR_LIMIT)
			status = jfail(err, EV_ERR_LIMIT, "%s: line %llu: longer than %d bytes: not a GOAL line", path,
			               (unsigned long long)t.lineno, GOAL_LINE_MAX);
		else if (rc < 0)
			status = jfail(err, rc, "%s: %s", path, rc == EV_ERR_IO ? strerror(errno) : ev_strerror(rc));
		else if (t.lineno == 1)
			status = jfail(err, EV_ERR_TRUNCATED, "%s: line 1: empty part: expected `rank %u {`", path, rank);
		else if (!t.closed)
			status = jfail(err, EV_ERR_TRUNCATED, "%s: line %llu: truncated: rank %u's block has no closing }",
			               path, (unsigned long long)t.lineno - 1, rank);
	}
	ev_input_close(in);
	return status;
}

/* ---- binary parts ---------------------------------------------------- */

/* Read exactly n bytes (a short file is a truncated section). */
static int read_exact(ev_input *in, void *buf, size_t n)
{
	unsigned char *p = buf;
	while (n) {
		long got = ev_input_read(in, p, n);
		if (got <= 0)
			return got < 0 ? (int)got : EV_ERR_TRUNCATED;
		p += got;
		n -= (size_t)got;
	}
	return EV_OK;
}

struct bsec { uint64_t size; uint8_t max_cpu, max_nic; };

/* Check one binary section; its size and largest cpu and nic into *b. */
static int check_bin_part(const char *path, uint32_t nranks, struct bsec *b, struct ev_goal_error *err)
{
	ev_input *in;
	if (ev_input_open(&in, path))
		return jfail(err, EV_ERR_IO, "%s: %s", path, strerror(errno));
	unsigned char h[8], nb[EV_GOAL_NODE_BYTES];
	uint64_t off = 0, run = 0, preds = 0;
	int rc = read_exact(in, h, 8);
	uint32_t nn = ev_le32(h), nroots = ev_le32(h + 4);
	memset(b, 0, sizeof *b);
	if (rc)
		goto short_read;
	off = 8;
	if (nroots > nn) {
		rc = jfail(err, EV_ERR_FORMAT, "%s: byte 4: %u roots but %u nodes: not a rank section", path, nroots, nn);
		goto out;
	}
	for (uint32_t i = 0; i < nroots; i++, off += 4) {
		if ((rc = read_exact(in, h, 4)))
			goto short_read;
		if (ev_le32(h) >= nn) {
			rc = jfail(err, EV_ERR_FORMAT, "%s: byte %llu: root %u is not a node (%u nodes)", path,
			           (unsigned long long)off, ev_le32(h), nn);
			goto out;
		}
	}
	for (uint32_t i = 0; i < nn; i++, off += EV_GOAL_NODE_BYTES) {
		if ((rc = read_exact(in, nb, sizeof nb)))
			goto short_read;
		uint32_t peer = ev_le32(nb + 5);
		const char *bad = NULL;
		if (nb[4] < 1 || nb[4] > 3)
			bad = "type is not send, recv or calc";
		else if (nb[4] != 3 && peer >= nranks && !(nb[4] == 2 && peer == NONE32))
			bad = "peer is not below the number of parts";
		else if (ev_le32(nb + 27) != run || ev_le32(nb + 35) != run + ev_le32(nb + 23))
			bad = "successor offsets do not follow the previous node's";
		if (bad) {
			rc = jfail(err, EV_ERR_FORMAT, "%s: node %u (byte %llu): %s", path, i, (unsigned long long)off, bad);
			goto out;
		}
		run += (uint64_t)ev_le32(nb + 23) + ev_le32(nb + 31);
		preds += ev_le32(nb);
		if (nb[21] > b->max_cpu)
			b->max_cpu = nb[21];
		if (nb[22] > b->max_nic)
			b->max_nic = nb[22];
	}
	if (preds != run) {
		rc = jfail(err, EV_ERR_FORMAT, "%s: %llu dependencies but %llu successor entries: not a rank section", path,
		           (unsigned long long)preds, (unsigned long long)run);
		goto out;
	}
	for (uint64_t i = 0; i < run; i++, off += 4) {
		if ((rc = read_exact(in, h, 4)))
			goto short_read;
		if (ev_le32(h) >= nn) {
			rc = jfail(err, EV_ERR_FORMAT, "%s: byte %llu: successor %u is not a node (%u nodes)", path,
			           (unsigned long long)off, ev_le32(h), nn);
			goto out;
		}
	}
	if (ev_input_read(in, h, 1) != 0) {
		rc = jfail(err, EV_ERR_FORMAT, "%s: byte %llu: data after the end of the rank section", path,
		           (unsigned long long)off);
		goto out;
	}
	b->size = off;
	rc = EV_OK;
	goto out;
short_read:
	if (rc == EV_ERR_TRUNCATED)
		rc = jfail(err, rc, "%s: byte %llu: truncated rank section (%u nodes, %u roots)", path,
		           (unsigned long long)off, nn, nroots);
	else
		rc = jfail(err, rc, "%s: %s", path, rc == EV_ERR_IO ? strerror(errno) : ev_strerror(rc));
out:
	ev_input_close(in);
	return rc;
}

/* ---- the join --------------------------------------------------------- */

/* Count the parts: rank_0 .. up to the first missing one, or exactly
 * expect; a part beyond a gap is an error. */
static int count_parts(const char *dir, int binary, uint32_t expect, uint32_t *count, struct ev_goal_error *err)
{
	char path[4096];
	struct stat st;
	uint32_t n = 0;
	for (;;) {
		if (ev_goal_part_name(path, sizeof path, dir, n, binary))
			return jfail(err, EV_ERR_RANGE, "%s: path too long", dir);
		if ((expect && n == expect) || stat(path, &st))
			break;
		if (n == EV_GOAL_MAX_RANKS)
			return jfail(err, EV_ERR_RANGE, "%s: more than %u parts", dir, EV_GOAL_MAX_RANKS);
		n++;
	}
	if ((expect && n < expect) || !n)
		return jfail(err, EV_ERR_IO, "%s: %s", path, strerror(errno));
	DIR *dh = opendir(dir);
	if (!dh)
		return jfail(err, EV_ERR_IO, "%s: %s", dir, strerror(errno));
	const char *ext = binary ? ".bin" : ".goal";
	struct dirent *de;
	while ((de = readdir(dh))) {
		char *end;
		if (strncmp(de->d_name, "rank_", 5) || de->d_name[5] < '0' || de->d_name[5] > '9')
			continue;
		unsigned long v = strtoul(de->d_name + 5, &end, 10);
		if (!expect && strcmp(end, ext) == 0 && v >= n) {
			closedir(dh);
			return jfail(err, EV_ERR_FORMAT, "%s: rank_%u%s is missing but rank_%lu%s exists", dir, n, ext, v, ext);
		}
	}
	closedir(dh);
	*count = n;
	return EV_OK;
}

int ev_goal_join(const char *dir, int binary, uint32_t expect, ev_output *out, uint32_t *nparts,
                 struct ev_goal_error *err)
{
	char path[4096];
	uint32_t n = 0;
	int rc = count_parts(dir, binary, expect, &n, err), werr;
	if (rc)
		return rc;
	*nparts = n;
	if (!binary) {
		if ((rc = ev_output_printf(out, "num_ranks %u\n", n)))
			return jout(err, rc);
		for (uint32_t r = 0; r < n; r++) {
			ev_goal_part_name(path, sizeof path, dir, r, 0);
			if ((rc = join_text_part(path, r, n, out, err)))
				return rc;
		}
		return EV_OK;
	}
	uint64_t *sizes = calloc(n, sizeof *sizes);
	uint8_t mc = 0, mn = 0;
	if (!sizes)
		return jfail(err, EV_ERR_NOMEM, "out of memory");
	for (uint32_t r = 0; r < n; r++) {
		struct bsec b;
		ev_goal_part_name(path, sizeof path, dir, r, 1);
		if ((rc = check_bin_part(path, n, &b, err))) {
			free(sizes);
			return rc;
		}
		sizes[r] = b.size;
		mc = b.max_cpu > mc ? b.max_cpu : mc;
		mn = b.max_nic > mn ? b.max_nic : mn;
	}
	rc = goal_write_bin_header(out, n, mc, mn, sizes);
	free(sizes);
	if (rc)
		return jout(err, rc);
	unsigned char *buf = malloc(GOAL_IOBUF);
	if (!buf)
		return jfail(err, EV_ERR_NOMEM, "out of memory");
	for (uint32_t r = 0; r < n; r++) {
		ev_goal_part_name(path, sizeof path, dir, r, 1);
		if (goal_copy_file(path, out, &werr, buf, GOAL_IOBUF)) {
			free(buf);
			return werr ? jout(err, werr) : jfail(err, EV_ERR_IO, "%s: %s", path, strerror(errno));
		}
	}
	free(buf);
	return EV_OK;
}
