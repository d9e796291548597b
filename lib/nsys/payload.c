/* SPDX-License-Identifier: MIT */
/*
 * payload.c - stock NCCL's NVTX payloads (NCCL >= 2.16, exported with
 * --include-blobs=true): the schema entries of NVTX_PAYLOAD_SCHEMA_ENTRIES
 * give each field's offset and width by name, and a blob is a 32-byte
 * header (domain, schema id, payload size, ...) followed by the payload.
 * Fields are found by entry name, never by hard-coded schema ids.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int entry_field(const char *name)
{
	static const char *const names[NPF][3] = {
		{ "NCCL communicator ID", NULL, NULL }, { "Message size [bytes]", "Bytes", "Message size" },
		{ "Peer rank", "Peer", NULL }, { "Root", "Root rank", NULL }, { "Reduction operation", NULL, NULL },
		{ "No. of ranks", "Number of ranks", NULL }, { "Rank", NULL, NULL }, { "CUDA device", NULL, NULL },
	};
	for (int i = 0; i < NPF; i++)
		for (int k = 0; k < 3 && names[i][k]; k++)
			if (!strcmp(name, names[i][k]))
				return i;
	return -1;
}

static unsigned entry_width(int64_t type)
{
	switch (type) {
	case 18: case 22: case 3: case 4: case 8: case 9: return 8; /* (u)int64, size_t, (u)long */
	case 1: case 2: case 10: case 11: return 1;
	case 12: case 13: return 2;
	default: return 4; /* int, (u)int32, enums (>= 2^24) */
	}
}

/* NVTX_PAYLOAD_SCHEMA_ENTRIES rows, ordered by schema and index. */
int nsys_row_entry(struct ev_nsys *s, struct file *f, sqlite3_stmt *st, void *ctx)
{
	(void)ctx;
	int64_t dom = sqlite3_column_int64(st, 0), sid = sqlite3_column_int64(st, 1);
	const char *name = nsys_col_text(st, 3);
	int64_t type = sqlite3_column_int64(st, 4);
	struct schema *sc = NULL;
	for (size_t i = 0; i < f->nschemas; i++)
		if (f->schemas[i].domain == dom && f->schemas[i].id == sid)
			sc = &f->schemas[i];
	if (!sc) {
		struct schema *n = realloc(f->schemas, (f->nschemas + 1) * sizeof *n);
		if (!n)
			return nsys_nomem(s);
		f->schemas = n;
		sc = &n[f->nschemas++];
		memset(sc, 0, sizeof *sc);
		sc->domain = dom;
		sc->id = sid;
		for (int k = 0; k < NPF; k++)
			sc->off[k] = -1;
		sc->size = 0; /* running end offset until the schema size is known */
	}
	unsigned w = entry_width(type);
	int64_t off = sqlite3_column_type(st, 5) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 5);
	if (off < 0) /* NULL: the natural position after the previous entry */
		off = (int64_t)((sc->size + w - 1) / w * w);
	if (off > 4096)
		return 0;
	sc->size = (uint64_t)off + w;
	int k = name ? entry_field(name) : -1;
	if (k >= 0 && sc->off[k] < 0) {
		sc->off[k] = (int16_t)off;
		sc->width[k] = (uint8_t)w;
		f->has_schemas = 1;
		if ((k == PF_COMM || k == PF_SIZE) && f->nccl_domain < 0)
			f->nccl_domain = dom;
	}
	return 0;
}

/* Decode an NCCL payload blob: a 32-byte header (domain, schema id, payload
 * size, ...) then the payload.  Fills vals/mask; returns 0 if decoded. */
int nsys_decode_payload(const struct file *f, const unsigned char *b, size_t n, int64_t vals[NPF], unsigned *mask)
{
	*mask = 0;
	if (!b || n < 32)
		return -1;
	int64_t dom = (int64_t)ev_le64(b), sid = (int64_t)ev_le64(b + 8);
	uint64_t psize = ev_le64(b + 16);
	if (psize > n - 32)
		psize = n - 32;
	const struct schema *sc = NULL;
	for (size_t i = 0; i < f->nschemas; i++)
		if (f->schemas[i].domain == dom && f->schemas[i].id == sid)
			sc = &f->schemas[i];
	if (!sc)
		return -1;
	const unsigned char *p = b + 32;
	for (int k = 0; k < NPF; k++) {
		if (sc->off[k] < 0 || (uint64_t)sc->off[k] + sc->width[k] > psize)
			continue;
		const unsigned char *q = p + sc->off[k];
		switch (sc->width[k]) {
		case 8: vals[k] = (int64_t)ev_le64(q); break;
		case 2: vals[k] = (int16_t)ev_le16(q); break;
		case 1: vals[k] = (int8_t)q[0]; break;
		default: vals[k] = (int32_t)ev_le32(q); break;
		}
		*mask |= 1u << k;
	}
	return 0;
}

