/* SPDX-License-Identifier: MIT */
/*
 * test_json.c - lib/json's nested reading (ev_json_nest): containers
 * entered, items returned with their array's key, members copied or
 * skipped, and the errors of a damaged document.
 */
#include <stdlib.h>
#include <string.h>

#include "ev/json.h"
#include "unit.h"

/* Enter "tool" (an array) and what is in it, and "records"; the arrays
 * "rows" and "more" are items; "meta" is copied; anything else skipped. */
static int choose(void *ctx, int depth, const char *key, size_t len)
{
	(void)ctx;
	if (!key)
		return depth >= 2 ? EV_JSON_ENTER : EV_JSON_COPY;
	if ((len == 4 && !memcmp(key, "tool", 4)) || (len == 7 && !memcmp(key, "records", 7)))
		return EV_JSON_ENTER;
	if ((len == 4 && !memcmp(key, "rows", 4)) || (len == 4 && !memcmp(key, "more", 4)))
		return EV_JSON_ITEMS;
	if (len == 4 && !memcmp(key, "meta", 4))
		return EV_JSON_COPY;
	return EV_JSON_SKIP;
}

/* Every item of doc as "kind:key:depth:text;" (text "-" when skipped). */
static int walk(const char *doc, char *out, size_t n)
{
	char path[] = "/tmp/ev_test_json_XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return -100;
	if (write(fd, doc, strlen(doc)) != (ssize_t)strlen(doc)) {
		close(fd);
		return -100;
	}
	close(fd);
	ev_input *in;
	ev_json *j;
	int rc = ev_input_open(&in, path);
	if (rc)
		return rc;
	if ((rc = ev_json_open(&j, in, NULL, 1 << 20)) != EV_OK) {
		ev_input_close(in);
		return rc;
	}
	ev_json_nest(j, choose, NULL);
	struct ev_json_item it;
	size_t o = 0;
	out[0] = '\0';
	while ((rc = ev_json_next(j, &it)) > 0 && o < n) {
		o += (size_t)snprintf(out + o, n - o, "%c:%.*s:%d:%.*s;", it.kind == EV_JSON_ELEM ? 'E' : 'T',
		                      (int)it.key_len, it.key ? it.key : "", it.depth, it.text ? (int)it.len : 1,
		                      it.text ? it.text : "-");
	}
	ev_json_close(j);
	ev_input_close(in);
	remove(path);
	return rc;
}

static void test_nested(void)
{
	char out[1024];
	CHECK(walk("{\"x\": 1, \"tool\": [{\"meta\": {\"a\": [1]}, \"junk\": [1, 2], \"rows\": [{\"k\": 1}, 2],"
	           " \"records\": {\"more\": [], \"rows\": [3]}}, {\"rows\": [4]}], \"y\": {}}",
	           out, sizeof out) == 0);
	CHECK(!strcmp(out, "T:x:1:-;T:meta:3:{\"a\": [1]};T:junk:3:-;E:rows:4:{\"k\": 1};E:rows:4:2;"
	                   "E:rows:5:3;E:rows:4:4;T:y:1:-;"));
	/* Empty containers entered and left; a scalar where an object was
	 * expected is copied. */
	CHECK(walk("{\"tool\": [{}, [], {\"records\": {}}, 7]}", out, sizeof out) == 0);
	CHECK(!strcmp(out, "E::2:7;"));
}

static void test_damaged(void)
{
	char out[256];
	CHECK(walk("{\"tool\": [{\"rows\": [1, 2]}", out, sizeof out) == EV_ERR_TRUNCATED);
	CHECK(walk("{\"tool\": [{\"rows\": [1] 2}]}", out, sizeof out) == EV_ERR_FORMAT);
	CHECK(walk("{\"tool\": [{\"rows\": [1]}] x}", out, sizeof out) == EV_ERR_FORMAT);
	CHECK(walk("{\"tool\": [{\"rows\": [1]} {}]}", out, sizeof out) == EV_ERR_FORMAT);
	CHECK(walk("{\"tool\": []} trailing", out, sizeof out) == EV_ERR_FORMAT);
	/* Deeper than the reader follows: a limit, not a crash. */
	char deep[256] = "{\"tool\": ";
	for (int i = 0; i < 20; i++)
		strcat(deep, "[");
	CHECK(walk(deep, out, sizeof out) == EV_ERR_LIMIT);
}

int main(void)
{
	RUN(test_nested);
	RUN(test_damaged);
	return unit_report("test_json");
}
