/* SPDX-License-Identifier: MIT */
/*
 * ev/tsv.h - the text forms of records: rows of named columns as TSV, CSV
 * or JSON Lines (what ev-view prints), and TSV rows packed back into
 * records (ev-view --pack).  The TSV form with every column is lossless.
 */
#ifndef EV_TSV_H
#define EV_TSV_H

#include "ev/stream.h"

/* Record fields in column order; the TSV header row names them. */
enum ev_col {
	EV_COL_TYPE, EV_COL_OP, EV_COL_RANK, EV_COL_STREAM, EV_COL_TS, EV_COL_DUR, EV_COL_BYTES,
	EV_COL_NAME, EV_COL_SIG, EV_COL_COMM, EV_COL_SEQ, EV_COL_PEER, EV_COL_ID, EV_COL_CHANNEL,
	EV_COL_STEP, EV_COL_AUX, EV_COL_ALGO, EV_COL_PROTO, EV_COL_DTYPE, EV_COL_REDOP, EV_COL_FLAGS,
	EV_COL_SRC, EV_COL_NTHREADS, EV_COL_CHUNK_STEPS, EV_COL_SLICE_STEPS, EV_COL_STEP_SIZE,
	EV_NCOLS,
	/* String columns as 16-hex-digit ids (ev-view --ids): name_id, sig_id. */
	EV_COL_NAME_ID = 100, EV_COL_SIG_ID = 101,
};
extern const char *const ev_col_names[EV_NCOLS];
/* Column of a header word ("ts", "name_id"...), or -1. */
int ev_col_index(const char *name, size_t len);

enum ev_row_fmt { EV_ROW_TSV, EV_ROW_CSV, EV_ROW_JSONL };
struct ev_rowfmt {
	enum ev_row_fmt fmt;
	int ids;              /* name and sig as ids instead of texts */
	int cols[EV_NCOLS];   /* columns to print, in order */
	int ncols;
};
/* One record as a row (texts escaped for the format), or its header row. */
int ev_row_write(const struct ev_rowfmt *f, ev_output *out, const struct ev_rec *r, const ev_strtab *st) EV_RESULT_USED;
int ev_row_header(const struct ev_rowfmt *f, ev_output *out) EV_RESULT_USED;

/* TSV rows back to records.  The first row of an input is its header row
 * (any subset and order of columns; missing ones default); a later row made
 * only of column names starts a new header (concatenated TSV files). */
struct ev_tsv_packer {
	int map[EV_NCOLS + 2]; /* column position -> enum ev_col */
	int ncols;
	int have_header;
	char err[256];         /* what was wrong with the last line */
};
void ev_tsv_packer_init(struct ev_tsv_packer *pk);
/* One line without its newline; line[len] is overwritten with a NUL and
 * fields are unescaped in place.  Returns EV_TEXT for a '#' line (to be
 * written verbatim), EV_OK for a header row, EV_REC with *r filled (strings
 * interned in st), or EV_ERR_FORMAT / EV_ERR_COLLISION with pk->err. */
int ev_tsv_pack_line(struct ev_tsv_packer *pk, char *line, size_t len, struct ev_rec *r, ev_strtab *st) EV_RESULT_USED;

#endif /* EV_TSV_H */
