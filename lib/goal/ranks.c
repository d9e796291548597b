/* SPDX-License-Identifier: MIT */
/*
 * ranks.c - rank selections for parallel workers writing rank parts:
 * "0-7,12" (ranges) or "K%N" (the ranks r with r mod N = K).
 */
#include <stdlib.h>

#include "goal_int.h"

static int parse_range(const char *tok, size_t len, struct ev_goal_range *r)
{
	char buf[32];
	if (!len || len >= sizeof buf)
		return -1;
	memcpy(buf, tok, len);
	buf[len] = '\0';
	char *dash = strchr(buf, '-');
	if (dash)
		*dash = '\0';
	if (ev_parse_u32(buf, &r->lo))
		return -1;
	r->hi = r->lo;
	if (dash && ev_parse_u32(dash + 1, &r->hi))
		return -1;
	return r->hi < r->lo ? -1 : 0;
}

int ev_goal_ranks_parse(struct ev_goal_ranks *s, const char *arg)
{
	memset(s, 0, sizeof *s);
	const char *pc = strchr(arg, '%');
	if (pc) {
		char buf[32];
		size_t n = (size_t)(pc - arg);
		if (n >= sizeof buf)
			return EV_ERR_ARG;
		memcpy(buf, arg, n);
		buf[n] = '\0';
		if (ev_parse_u32(buf, &s->k) || ev_parse_u32(pc + 1, &s->mod) || !s->mod || s->k >= s->mod) {
			s->mod = s->k = 0;
			return EV_ERR_ARG;
		}
		return EV_OK;
	}
	for (const char *p = arg;;) {
		size_t len = strcspn(p, ",");
		struct ev_goal_range r;
		if (parse_range(p, len, &r)) {
			ev_goal_ranks_free(s);
			return EV_ERR_ARG;
		}
		struct ev_goal_range *nr = realloc(s->r, (s->n + 1) * sizeof *nr);
		if (!nr) {
			ev_goal_ranks_free(s);
			return EV_ERR_NOMEM;
		}
		s->r = nr;
		nr[s->n++] = r;
		if (!p[len])
			break;
		p += len + 1;
	}
	return EV_OK;
}

int ev_goal_ranks_empty(const struct ev_goal_ranks *s)
{
	return !s || (!s->mod && !s->n);
}

int ev_goal_ranks_has(const struct ev_goal_ranks *s, uint32_t r)
{
	if (ev_goal_ranks_empty(s))
		return 1;
	if (s->mod)
		return r % s->mod == s->k;
	for (size_t i = 0; i < s->n; i++)
		if (r >= s->r[i].lo && r <= s->r[i].hi)
			return 1;
	return 0;
}

void ev_goal_ranks_free(struct ev_goal_ranks *s)
{
	free(s->r);
	memset(s, 0, sizeof *s);
}
