/* SPDX-License-Identifier: MIT */
/*
 * getopt.c - every tool's option loop, written once: getopt_long over the
 * tool's table, the common options handled here and the tool's own handed
 * to its callback, so that --help, --version, -o, -q, -f and the messages
 * for a bad option are the same in every tool.
 */
#include <stdio.h>
#include <string.h>

#include "ev/tool.h"

int ev_cli_getopt(struct ev_cli *cli, int argc, char **argv, const struct ev_cli_opts *opts, void *ctx, int *first)
{
	/* '+' (stop at the first operand) must lead the whole string. */
	const char *own = opts->shortopts ? opts->shortopts : "";
	int stop = own[0] == '+';
	char shortopts[64];
	if ((size_t)snprintf(shortopts, sizeof shortopts, "%s%s%s", stop ? "+" : "", EV_CLI_COMMON_SHORT, own + stop) >=
	    sizeof shortopts)
		return ev_cli_error(cli, "internal error: too many option letters");
	/* 0, not 1: GNU getopt starts afresh (the '+', the permutation), as a
	 * second call for a subcommand needs. */
	optind = 0;
	int c;
	while ((c = getopt_long(argc, argv, shortopts, opts->longopts, NULL)) != -1) {
		switch (ev_cli_common(cli, c, optarg)) {
		case EV_CLI_HANDLED:
			continue;
		case EV_CLI_WANT_HELP:
			opts->usage(stdout);
			return 0;
		case EV_CLI_DONE:
			return 0;
		default:
			break;
		}
		if (c == '?' || !opts->opt)
			return ev_cli_try_help(cli); /* getopt has said what was wrong */
		int status = opts->opt(ctx, c, optarg);
		if (status)
			return status;
	}
	*first = optind;
	return EV_CLI_RUN;
}
