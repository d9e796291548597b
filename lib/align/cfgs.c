/* SPDX-License-Identifier: MIT */
/*
 * cfgs.c - configuration ids: each distinct configuration name gets the
 * next small number, the id ev_align keeps its ranks apart by.
 */
#include <stdlib.h>
#include <string.h>

#include "ev/align.h"
#include "ev/stream.h"

void ev_align_cfgs_init(struct ev_align_cfgs *c)
{
	c->names = NULL;
	c->n = 0;
	ev_map_init(&c->ix);
}

int ev_align_cfgs_id(struct ev_align_cfgs *c, const char *name, uint32_t *id)
{
	uint64_t h = ev_hash64(name, strlen(name)) | 1; /* map keys are never 0 */
	uint64_t *p = ev_map_get(&c->ix, h);
	if (p) {
		*id = (uint32_t)(*p - 1);
		return EV_OK;
	}
	/* Sources are numbered below 65536, so configurations are too. */
	if (c->n >= 65535)
		return EV_ERR_LIMIT;
	char **nn = realloc(c->names, (c->n + 1) * sizeof *nn);
	if (!nn)
		return EV_ERR_NOMEM;
	c->names = nn;
	if (!(c->names[c->n] = strdup(name)))
		return EV_ERR_NOMEM;
	if (ev_map_put(&c->ix, h, (uint64_t)c->n + 1) != EV_OK) {
		free(c->names[c->n]);
		return EV_ERR_NOMEM;
	}
	*id = c->n++;
	return EV_OK;
}

void ev_align_cfgs_free(struct ev_align_cfgs *c)
{
	for (uint32_t i = 0; i < c->n; i++)
		free(c->names[i]);
	free(c->names);
	ev_map_free(&c->ix);
	ev_align_cfgs_init(c);
}
