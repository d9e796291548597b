/* SPDX-License-Identifier: MIT */
/*
 * opt.c - option values that are words from a fixed list, checked the same
 * way in every tool, with the list of valid words in the message.
 */
#include <stdio.h>
#include <string.h>

#include "ev/tool.h"

static void list_words(const char *const *words, char *buf, size_t n)
{
	size_t o = 0;
	buf[0] = '\0';
	for (size_t i = 0; words[i] && o < n; i++)
		o += (size_t)snprintf(buf + o, n - o, "%s%s", i ? ", " : "", words[i]);
}

int ev_cli_word_find(const char *const *words, const char *arg)
{
	for (int i = 0; words[i]; i++)
		if (strcmp(arg, words[i]) == 0)
			return i;
	return -1;
}

int ev_cli_word(const struct ev_cli *cli, const char *option, const char *arg, const char *const *words,
                unsigned *idx)
{
	int i = ev_cli_word_find(words, arg);
	if (i >= 0) {
		*idx = (unsigned)i;
		return 0;
	}
	char list[512];
	list_words(words, list, sizeof list);
	return ev_cli_usage_error(cli, "%s: '%s' is not one of: %s", option, arg, list);
}

int ev_cli_word_list(const struct ev_cli *cli, const char *option, const char *arg, const char *const *words,
                     unsigned *mask)
{
	unsigned m = 0;
	if (strcmp(arg, "all") == 0) {
		for (unsigned i = 0; words[i] && i < 32; i++)
			m |= 1u << i;
		*mask = m;
		return 0;
	}
	const char *p = arg;
	for (;;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		unsigned i;
		for (i = 0; words[i]; i++)
			if (strlen(words[i]) == len && strncmp(p, words[i], len) == 0)
				break;
		if (!words[i] || i >= 32) {
			char list[512];
			list_words(words, list, sizeof list);
			return ev_cli_usage_error(cli, "%s: '%.*s' is not one of: %s (or all)", option, (int)len, p, list);
		}
		m |= 1u << i;
		if (!e)
			break;
		p = e + 1;
	}
	*mask = m;
	return 0;
}

int ev_cli_not_for(const struct ev_cli *cli, const char *sub, const char *option, const char *for_subs)
{
	return ev_cli_usage_error(cli, "%s: %s does not apply (it is for: %s)", sub, option, for_subs);
}
