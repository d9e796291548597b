/* SPDX-License-Identifier: MIT */
/*
 * fuzz_tsv_pack.c - ev-view --pack (TSV to ev) on arbitrary bytes, through
 * the tool's own source with its main() renamed.  When packing succeeds,
 * the result must be a valid ev stream: ev-view decodes it again to TSV.
 */
#include "fuzz.h"

int ev_view_main(int argc, char **argv);
#define main ev_view_main
#include "../../tools/ev-view.c"
#undef main

static void defaults(struct opts *o, const char *prog)
{
	memset(o, 0, sizeof *o);
	ev_cli_init(&o->cli, prog);
	o->cli.quiet = 1;
	o->cli.progress = 0;
	for (int i = 0; i < NCOLS; i++)
		o->cols[i] = i;
	o->ncols = NCOLS;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *inputs[1];
	struct opts o;
	defaults(&o, "ev-view");
	o.pack = 1;
	o.cli.output = fuzz_path(1, "packed.ev");
	inputs[0] = (char *)fuzz_input_file(data, size, "in.tsv");
	o.inputs = inputs;
	o.ninputs = 1;
	int status = run(&o);
	if (status != 0 && status != 1)
		abort();
	if (status == 0) {
		/* What --pack wrote must read back without error. */
		defaults(&o, "ev-view");
		o.cli.output = "/dev/null";
		inputs[0] = (char *)fuzz_path(1, "packed.ev");
		if (run(&o) != 0)
			abort();
	}
	unlink(fuzz_path(1, "packed.ev"));
	return 0;
}
