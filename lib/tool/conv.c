/* SPDX-License-Identifier: MIT */
/*
 * conv.c - what the JSON converters (flex2ev, kineto2ev) check alike:
 * their size options and their inputs, with the same limits and the same
 * messages, so that one tool cannot accept what the other refuses.
 */
#include <stdint.h>

#include "ev/tool.h"

int ev_cli_buffer_size(const struct ev_cli *cli, const char *arg, uint64_t *v)
{
	if (ev_parse_size(arg, v) || *v < (1u << 20))
		return ev_cli_usage_error(cli, "--buffer-size: expected a size of at least 1M, got '%s'", arg);
	return 0;
}

int ev_cli_max_object(const struct ev_cli *cli, const char *arg, uint64_t *v)
{
	if (ev_parse_size(arg, v) || *v < 1024 || *v > (1ull << 31))
		return ev_cli_usage_error(cli, "--max-object: expected a size from 1K to 2G, got '%s'", arg);
	return 0;
}

int ev_cli_converter_inputs(const struct ev_cli *cli, int ninputs, int64_t rank)
{
	if (ninputs == 0)
		return ev_cli_usage_error(cli, "no input file");
	if (rank >= 0 && ninputs != 1)
		return ev_cli_usage_error(cli, "--rank applies to a single input");
	if (ninputs > 65535)
		return ev_cli_usage_error(cli, "at most 65535 inputs");
	return 0;
}

int ev_cli_rules(const struct ev_cli *cli, const char *arg, enum ev_rules *r)
{
	if (ev_rules_parse(arg, r) != EV_OK)
		return ev_cli_usage_error(cli, "--rules: expected tracelens, tracelens-2025 or hta, got '%s'", arg);
	return 0;
}
