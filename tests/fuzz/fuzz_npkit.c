/* SPDX-License-Identifier: MIT */
/*
 * fuzz_npkit.c - npkit2lat's reader and table writer on arbitrary bytes,
 * through the tool's own source with its main() renamed.
 */
#include "fuzz.h"

int npkit2lat_main(int argc, char **argv);
#define main npkit2lat_main
#include "../../tools/npkit2lat.c"
#undef main

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *inputs[1];
	static char *require[2] = { (char *)"RECV_REDUCE_SEND", (char *)"DIRECT_RECV_COPY_SEND" };
	struct opts o;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "npkit2lat");
	o.cli.quiet = 1;
	o.cli.progress = 0;
	o.cli.output = "/dev/null";
	o.max_object = 1u << 16;
	/* Half the inputs need the default primitives, half need none. */
	if (size % 2) {
		o.require = require;
		o.nrequire = 2;
	} else {
		o.no_require = 1;
	}
	inputs[0] = (char *)fuzz_input_file(data, size, "npkit_data_summary_Simple.json");
	o.inputs = inputs;
	o.ninputs = 1;
	int status = run(&o);
	if (status != 0 && status != 1)
		abort();
	return 0;
}
