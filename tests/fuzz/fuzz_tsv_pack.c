/* SPDX-License-Identifier: MIT */
/*
 * fuzz_tsv_pack.c - TSV rows packed into records (ev/tsv.h, what
 * ev-view --pack runs) on arbitrary bytes.  Whatever packs must write as a
 * valid ev stream, read back without error as the same number of records,
 * and print again as rows in every text format.
 */
#include "fuzz.h"

#include "ev.h"
#include "ev/tsv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *out_path = fuzz_path(1, "packed.ev");
	ev_strtab *st = ev_strtab_new();
	ev_writer *w = NULL;
	struct ev_tsv_packer pk;
	char *line = malloc(size + 1);
	uint64_t packed = 0;
	int rc = EV_OK;
	if (!st || !line || ev_writer_open(&w, out_path, st) != EV_OK)
		abort();
	ev_tsv_packer_init(&pk);
	size_t i = 0;
	while (i < size && rc >= 0) {
		const uint8_t *nl = memchr(data + i, '\n', size - i);
		size_t len = nl ? (size_t)(nl - (data + i)) : size - i;
		memcpy(line, data + i, len);
		i += len + 1;
		struct ev_rec r;
		rc = ev_tsv_pack_line(&pk, line, len, &r, st);
		if (rc == EV_TEXT) {
			rc = ev_write_line_raw(w, line, len);
		} else if (rc == EV_REC) {
			rc = ev_write(w, &r);
			/* The packer gives only records the writer takes. */
			if (rc != EV_OK)
				abort();
			packed++;
		} else if (rc < 0 && !pk.err[0]) {
			abort(); /* every refusal says why */
		}
	}
	if (rc < 0) {
		ev_writer_abort(w);
		goto out;
	}
	if (ev_writer_close(w) != EV_OK)
		goto out; /* text lines may make an invalid stream (#end counts...) */
	/* Read back and print every record in every text format. */
	for (int f = EV_ROW_TSV; f <= EV_ROW_JSONL; f++) {
		ev_reader *r;
		ev_output *o;
		struct ev_rowfmt fmt;
		struct ev_rec rec;
		uint64_t n = 0;
		memset(&fmt, 0, sizeof fmt);
		fmt.fmt = (enum ev_row_fmt)f;
		fmt.ids = f == EV_ROW_JSONL;
		for (int c = 0; c < EV_NCOLS; c++)
			fmt.cols[fmt.ncols++] = c;
		if (ev_reader_open(&r, out_path, NULL, NULL) != EV_OK || ev_output_open(&o, "/dev/null") != EV_OK)
			abort();
		ev_reader_skip_text(r, 1);
		while ((rc = ev_read(r, &rec)) == EV_REC) {
			if (ev_row_write(&fmt, o, &rec, ev_reader_strtab(r)) != EV_OK)
				abort();
			n++;
		}
		/* Raw text lines (#end with a wrong count...) may make the stream
		 * invalid; records that did read must be the ones packed. */
		if (rc == EV_EOF && n != packed)
			abort();
		ev_reader_close(r);
		if (ev_output_close(o) != EV_OK)
			abort();
	}
out:
	unlink(out_path);
	free(line);
	ev_strtab_free(st);
	return 0;
}
