/* SPDX-License-Identifier: MIT */
/*
 * fuzz_kineto.c - kineto2ev's whole conversion (JSON scanning, the event
 * mapping, links, B/E pairs, the sorter and the writer) on arbitrary bytes.
 * The tool's own source is compiled in with its main() renamed, so the
 * harness runs exactly the code the program runs.
 */
#include "fuzz.h"

int kineto2ev_main(int argc, char **argv);
#define main kineto2ev_main
/* glibc's unistd.h (through fuzz.h) declares a close_range() of its own. */
#define close_range kineto2ev_close_range
#include "../../tools/kineto2ev.c"
#undef main

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *inputs[1];
	struct opts o;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "kineto2ev");
	o.cli.quiet = 1;
	o.cli.progress = 0;
	o.cli.output = "/dev/null";
	o.rank = -1;
	o.python = 1;
	o.rules = (enum ev_rules)(size % 3);
	o.sort_bytes = 1u << 20;
	o.max_object = 1u << 16;
	o.max_tokens = 4096;
	inputs[0] = (char *)fuzz_input_file(data, size, "rank1.json");
	o.inputs = inputs;
	o.ninputs = 1;
	int status = run(&o);
	if (status != 0 && status != 1)
		abort();
	return 0;
}
