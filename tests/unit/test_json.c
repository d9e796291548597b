/* SPDX-License-Identifier: MIT */
/*
 * test_json.c - lib/json's nested reading (ev_json_nest): containers
 * entered, items returned with their array's key, members copied or
 * skipped, and the errors of a damaged document; a jump inside the big
 * array (ev_json_jump, over ev_input_seek and ev_input_pread).
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

/* The document's items after a jump from the first element to offset
 * (elem as ev_json_jump), as in walk; the jump's status in *jrc. */
static int jump_walk(const char *doc, uint64_t offset, int elem, int *jrc, char *out, size_t n)
{
	char path[] = "/tmp/ev_test_json_XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, doc, strlen(doc)) != (ssize_t)strlen(doc))
		return -100;
	close(fd);
	ev_input *in;
	ev_json *j;
	struct ev_json_item it;
	const char *text;
	size_t len, o = 0;
	uint64_t off;
	int rc = ev_input_open(&in, path);
	if (rc || (rc = ev_json_open(&j, in, "traceEvents", 1 << 20)) != EV_OK)
		return rc;
	out[0] = '\0';
	*jrc = ev_json_jump(j, offset, elem); /* not yet in the array */
	if (*jrc == EV_ERR_ARG && (rc = ev_json_next(j, &it)) > 0) {
		/* Past the first element, where ev_json_peek would look next. */
		CHECK(ev_json_in_array(j) && ev_json_peek(j, &text, &len, &off) == 1);
		*jrc = ev_json_jump(j, offset, elem);
		while (*jrc == EV_OK && (rc = ev_json_next(j, &it)) > 0 && o < n)
			o += (size_t)snprintf(out + o, n - o, "%.*s;", (int)it.len, it.text ? it.text : "-");
	}
	char head[5];
	CHECK(ev_input_pread(in, head, 5, 1) == 5 && !memcmp(head, doc + 1, 5)); /* beside the reads */
	CHECK(ev_input_file_size(in) == (int64_t)strlen(doc));
	ev_json_close(j);
	ev_input_close(in);
	remove(path);
	return rc;
}

static void test_jump(void)
{
	const char *doc = "{\"traceEvents\": [{\"a\": 1}, {\"b\": 2},\n {\"c\": 3}  ], \"x\": 5}";
	uint64_t c = (uint64_t)(strstr(doc, "{\"c\"") - doc), end = (uint64_t)(strchr(doc, ']') - doc);
	char out[256];
	int jrc;
	CHECK(jump_walk(doc, c, 1, &jrc, out, sizeof out) == 0 && jrc == EV_OK);
	CHECK(!strcmp(out, "{\"c\": 3};5;"));
	CHECK(jump_walk(doc, end, 0, &jrc, out, sizeof out) == 0 && jrc == EV_OK);
	CHECK(!strcmp(out, "5;")); /* after the array, its members go on */
	jump_walk(doc, c, 0, &jrc, out, sizeof out);
	CHECK(jrc == EV_ERR_FORMAT); /* no ']' there */
	/* An element's first byte that is a ']' after a comma: an error, as
	 * reading on would have found. */
	CHECK(jump_walk(doc, end, 1, &jrc, out, sizeof out) == EV_ERR_FORMAT && jrc == EV_OK);
}

int main(void)
{
	RUN(test_nested);
	RUN(test_damaged);
	RUN(test_jump);
	return unit_report("test_json");
}
