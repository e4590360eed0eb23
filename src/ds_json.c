/* ds_json.c: graph files in the benchmark's JSON format.
 *
 * Requires: cJSON.  cJSON allocates with malloc, not through the ds_heap:
 * its allocator hooks are process-wide (cJSON_InitHooks) and the library
 * keeps no global mutable state.  Every path frees the cJSON tree.
 *
 * A file of the usual shape, {"Nodes": [...], "Edges": [...]}, is read one
 * element at a time (load_stream): cJSON parses each node or edge alone
 * and the tree of one element is all there is at a time.  The whole
 * document's tree took 1.4 GB for a 1M-node graph (143 MB of text), and
 * the kernel's time to hand out its pages grew faster than the graph.
 * Anything else about the file (another key, a duplicate, an error of
 * any kind, a value nested near cJSON's limit, white space cJSON allows
 * and JSON does not) sends it to the whole-document path (load_tree),
 * which says what is wrong; so both accept the same files, feed the
 * builder the same calls in the same order and refuse with the same
 * message.
 *
 * Guarantees: a loaded graph has passed every check of ds_builder_finish;
 * before that, every structural problem of the file (bad UTF-8, syntax,
 * missing or duplicate keys, wrong JSON types, numbers that are not integers
 * in 0..DS_VALUE_MAX) is refused with one line that starts with the file
 * name and names the item.  ds_write_json writes the exact layout of the
 * bundled data (tabs, CRLF, no final newline), so loading a bundled file and
 * writing it back reproduces it byte for byte.
 * Cost: time linear in the text (twice for a file the streamed path
 * leaves); memory the text, the builder and one element's tree (the
 * whole document's on the other path). */
#include "ds.h"

#include <cjson/cJSON.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- messages ---- */

/* 1-based line and column (in characters) of byte offset off. */
static void text_position(const char *text, size_t off, long *line, long *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off; i++) {
		unsigned char c = (unsigned char)text[i];
		if (c == '\n') {
			(*line)++;
			*col = 1;
		} else if ((c & 0xC0) != 0x80) {
			(*col)++; /* continuation bytes are not characters */
		}
	}
}

/* A whole number below 2^53 as written (-60, not -6e+01), anything else
 * in the shortest "%g" form that reads back as d, so 2.5 prints as 2.5,
 * not 2.50000000000000000. */
static void format_double(double d, char *buf, size_t size)
{
	if (d > -9007199254740992.0 && d < 9007199254740992.0 &&
	    d == (double)(long long)d) {
		snprintf(buf, size, "%lld", (long long)d);
		return;
	}
	for (int p = 1; p <= 17; p++) {
		snprintf(buf, size, "%.*g", p, d);
		if (strtod(buf, NULL) == d)
			return;
	}
}

/* A short description of a JSON value for messages. */
static const char *describe(const cJSON *v, char *buf, size_t size)
{
	if (cJSON_IsNumber(v)) {
		format_double(v->valuedouble, buf, size);
	} else if (cJSON_IsString(v)) {
		/* at most 32 bytes, cut at a character boundary */
		const char *s = v->valuestring;
		size_t n = strlen(s), k = n > 32 ? 32 : n;
		while (k < n && k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80)
			k--;
		snprintf(buf, size, "the string \"%.*s\"%s", (int)k, s,
			 k < n ? "..." : "");
	} else if (cJSON_IsBool(v)) {
		snprintf(buf, size, "%s", cJSON_IsTrue(v) ? "true" : "false");
	} else if (cJSON_IsNull(v)) {
		snprintf(buf, size, "null");
	} else if (cJSON_IsArray(v)) {
		snprintf(buf, size, "an array");
	} else if (cJSON_IsObject(v)) {
		snprintf(buf, size, "an object");
	} else {
		snprintf(buf, size, "an unknown value");
	}
	return buf;
}

/* ---- reading the tree ---- */

/* The item being read is named in messages ("node at index 17 (Id 17)")
 * only when one is written: formatting the name of every node and edge
 * took a quarter of the load's time on the largest bundled graphs. */
typedef struct loader {
	const ds_heap *heap;
	const char *source;
	const char *kind; /* "node", "edge"; NULL: the top level */
	long long index;  /* the item's index in its array */
	long long id;	  /* a node's Id once read, else -1 */
	int64_t *bufs;	  /* scratch for one operation's Bufs */
	int64_t cap;
} loader;

/* What a value is called in messages: a key's value ("\"Cycles\""), an
 * element of a key's array ("element 2 of \"Bufs\""), or a phrase ("its
 * source") when key is NULL. */
typedef struct value_name {
	const char *key, *phrase;
	int32_t elem; /* >= 0: the element of key's array */
} value_name;

/* The name of L's item, in buf. */
static const char *item_name(const loader *L, char *buf, size_t size)
{
	if (!L->kind)
		snprintf(buf, size, "the top level");
	else if (L->id >= 0)
		snprintf(buf, size, "%s at index %lld (Id %lld)", L->kind,
			 L->index, L->id);
	else
		snprintf(buf, size, "%s at index %lld", L->kind, L->index);
	return buf;
}

static const char *value_called(value_name w, char *buf, size_t size)
{
	if (!w.key)
		snprintf(buf, size, "%s", w.phrase);
	else if (w.elem >= 0)
		snprintf(buf, size, "element %d of \"%s\"", (int)w.elem, w.key);
	else
		snprintf(buf, size, "\"%s\"", w.key);
	return buf;
}

/* Refuses the file: "source: item: " and the formatted rest. */
static int item_fail(const loader *L, ds_err *e, const char *fmt, ...)
{
	char item[96], rest[sizeof e->msg];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rest, sizeof rest, fmt, ap);
	va_end(ap);
	return ds_fail(e, DS_EINPUT, "%s: %s: %s", L->source,
		       item_name(L, item, sizeof item), rest);
}

/* v (called what in messages) as an integer in 0..DS_VALUE_MAX.  Note a
 * number above 2^53 may already have been rounded to 2^53 by cJSON; that is
 * the one value the check cannot see through. */
static int as_int(const loader *L, const cJSON *v, value_name what,
		  int64_t *out, ds_err *e)
{
	char got[80], called[80];
	double d = cJSON_IsNumber(v) ? v->valuedouble : -1;
	if (d > (double)DS_VALUE_MAX)
		return item_fail(L, e, "%s is too large (at most %lld), got %s",
				 value_called(what, called, sizeof called),
				 (long long)DS_VALUE_MAX,
				 describe(v, got, sizeof got));
	/* in range, so the cast is defined; it drops any fraction */
	if (!(d >= 0) || (double)(int64_t)d != d)
		return item_fail(L, e,
				 "%s must be a non-negative integer, got %s",
				 value_called(what, called, sizeof called),
				 describe(v, got, sizeof got));
	*out = (int64_t)d;
	return DS_OK;
}

/* The member key of obj; a missing key is an error.  Keys are
 * case-sensitive, so a near miss ("id") is pointed out. */
static int member(const loader *L, const cJSON *obj, const char *key,
		  const cJSON **out, ds_err *e)
{
	*out = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (*out)
		return DS_OK;
	const cJSON *near = cJSON_GetObjectItem(obj, key);
	if (near)
		return item_fail(L, e,
				 "missing key \"%s\" (keys are "
				 "case-sensitive; found \"%s\")",
				 key, near->string);
	return item_fail(L, e, "missing key \"%s\"", key);
}

static int int_member(const loader *L, const cJSON *obj, const char *key,
		      int64_t *out, ds_err *e)
{
	const cJSON *v;
	int rc = member(L, obj, key, &v, e);
	if (rc)
		return rc;
	return as_int(L, v, (value_name){.key = key, .elem = -1}, out, e);
}

static int str_member(const loader *L, const cJSON *obj, const char *key,
		      const char **out, ds_err *e)
{
	const cJSON *v;
	int rc = member(L, obj, key, &v, e);
	if (rc)
		return rc;
	char got[80];
	if (!cJSON_IsString(v) || !v->valuestring)
		return item_fail(L, e, "\"%s\" must be a string, got %s", key,
				 describe(v, got, sizeof got));
	*out = v->valuestring;
	return DS_OK;
}

/* cJSON keeps duplicate keys and returns the first; refuse them instead of
 * silently ignoring the second value.  Only the keys we read are checked,
 * so the cost stays linear in the object's size. */
static int no_duplicates(const loader *L, const cJSON *obj,
			 const char *const *keys, size_t nkeys, ds_err *e)
{
	for (size_t k = 0; k < nkeys; k++) {
		int seen = 0;
		const cJSON *c;
		cJSON_ArrayForEach(c, obj)
		{
			if (c->string && strcmp(c->string, keys[k]) == 0)
				seen++;
		}
		if (seen > 1)
			return item_fail(L, e, "key \"%s\" appears %d times",
					 keys[k], seen);
	}
	return DS_OK;
}

/* An ALLOC's or FREE's BufId, Size and Type, into the builder. */
static int load_buffer_node(loader *L, ds_builder *b, const cJSON *node,
			    int64_t id, bool is_free, ds_err *e)
{
	int64_t bufid, size;
	const char *type;
	int rc;
	if ((rc = int_member(L, node, "BufId", &bufid, e)) ||
	    (rc = int_member(L, node, "Size", &size, e)) ||
	    (rc = str_member(L, node, "Type", &type, e)))
		return rc;
	return ds_builder_buffer(b, id, is_free, bufid, size, type, e);
}

/* An operation's "Bufs" array into L->bufs[0..*nbufs). */
static int load_bufs(loader *L, const cJSON *bufs, int32_t *nbufs,
		     ds_err *e)
{
	char got[80];
	int rc;
	if (!cJSON_IsArray(bufs))
		return item_fail(L, e,
				 "\"Bufs\" must be an array of BufIds, got %s",
				 describe(bufs, got, sizeof got));
	*nbufs = 0;
	const cJSON *x;
	cJSON_ArrayForEach(x, bufs)
	{
		if ((rc = ds_reserve(L->heap, (void **)&L->bufs, &L->cap,
				     (int64_t)*nbufs + 1, sizeof *L->bufs, e)))
			return ds_fail(e, rc, "%s: out of memory", L->source);
		value_name what = {.key = "Bufs", .elem = *nbufs};
		if ((rc = as_int(L, x, what, &L->bufs[*nbufs], e)))
			return rc;
		if (*nbufs == INT32_MAX)
			return item_fail(L, e, "too many Bufs");
		(*nbufs)++;
	}
	return DS_OK;
}

static int load_node(loader *L, ds_builder *b, const cJSON *node,
		     long long index, ds_err *e)
{
	static const char *const keys[] = {"Id",   "Op",   "BufId",
					   "Size", "Type", "Pipe",
					   "Cycles", "Bufs"};
	char got[80];
	int rc;
	L->kind = "node";
	L->index = index;
	L->id = -1;
	if (!cJSON_IsObject(node))
		return item_fail(L, e, "must be an object, got %s",
				 describe(node, got, sizeof got));
	if ((rc = no_duplicates(L, node, keys, sizeof keys / sizeof keys[0],
				e)))
		return rc;
	int64_t id;
	if ((rc = int_member(L, node, "Id", &id, e)))
		return rc;
	L->id = id;
	const char *op;
	if ((rc = str_member(L, node, "Op", &op, e)))
		return rc;

	bool is_alloc = strcmp(op, "ALLOC") == 0;
	if (is_alloc || strcmp(op, "FREE") == 0)
		return load_buffer_node(L, b, node, id, !is_alloc, e);

	const char *pipe;
	int64_t cycles;
	const cJSON *bufs;
	int32_t nbufs = 0;
	if ((rc = str_member(L, node, "Pipe", &pipe, e)) ||
	    (rc = int_member(L, node, "Cycles", &cycles, e)) ||
	    (rc = member(L, node, "Bufs", &bufs, e)) ||
	    (rc = load_bufs(L, bufs, &nbufs, e)))
		return rc;
	return ds_builder_op(b, id, op, pipe, cycles, L->bufs, nbufs, e);
}

static int load_edge(loader *L, ds_builder *b, const cJSON *edge,
		     long long index, ds_err *e)
{
	char got[80];
	int rc;
	L->kind = "edge";
	L->index = index;
	L->id = -1;
	if (!cJSON_IsArray(edge) || cJSON_GetArraySize(edge) != 2)
		return item_fail(L, e,
				 "must be an array [src, dst] of two node Ids, "
				 "got %s%s",
				 describe(edge, got, sizeof got),
				 cJSON_IsArray(edge) ? " of another length"
						     : "");
	int64_t src, dst;
	value_name from = {.phrase = "its source", .elem = -1};
	value_name to = {.phrase = "its destination", .elem = -1};
	if ((rc = as_int(L, edge->child, from, &src, e)) ||
	    (rc = as_int(L, edge->child->next, to, &dst, e)))
		return rc;
	return ds_builder_edge(b, src, dst, e);
}

/* Feeds every node, then every edge of the document to b. */
static int load_tree(loader *L, ds_builder *b, const cJSON *root, ds_err *e)
{
	static const char *const keys[] = {"Nodes", "Edges"};
	char got[80];
	int rc;
	L->kind = NULL;
	if (!cJSON_IsObject(root))
		return ds_fail(e, DS_EINPUT,
			       "%s: the top level must be an object {\"Nodes\": "
			       "[...], \"Edges\": [...]}, got %s",
			       L->source, describe(root, got, sizeof got));
	const cJSON *nodes, *edges;
	if ((rc = no_duplicates(L, root, keys, 2, e)) ||
	    (rc = member(L, root, "Nodes", &nodes, e)) ||
	    (rc = member(L, root, "Edges", &edges, e)))
		return rc;
	if (!cJSON_IsArray(nodes))
		return ds_fail(e, DS_EINPUT,
			       "%s: \"Nodes\" must be an array, got %s",
			       L->source, describe(nodes, got, sizeof got));
	if (!cJSON_IsArray(edges))
		return ds_fail(e, DS_EINPUT,
			       "%s: \"Edges\" must be an array, got %s",
			       L->source, describe(edges, got, sizeof got));

	long long index = 0;
	const cJSON *v;
	cJSON_ArrayForEach(v, nodes)
	{
		if ((rc = load_node(L, b, v, index++, e)))
			return rc;
	}
	index = 0;
	cJSON_ArrayForEach(v, edges)
	{
		if ((rc = load_edge(L, b, v, index++, e)))
			return rc;
	}
	return DS_OK;
}

static bool json_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The first position from at on that is not JSON white space (len when
 * none is). */
static size_t skip_space(const char *text, size_t len, size_t at)
{
	while (at < len && json_space(text[at]))
		at++;
	return at;
}

/* Refuses a text cJSON must not be given: bad UTF-8, a NUL byte, or
 * nothing but white space from start on. */
static int load_check_text(const char *source, const char *text, size_t len,
			   size_t start, ds_err *e)
{
	long line, col;
	size_t bad = ds_utf8_check(text, len);
	if (bad < len) {
		text_position(text, bad, &line, &col);
		return ds_fail(e, DS_EINPUT,
			       "%s:%ld:%ld: not valid UTF-8 (byte offset %zu)",
			       source, line, col, bad);
	}
	/* cJSON works on C strings: a NUL byte would end the text early */
	const char *nul = memchr(text, 0, len);
	if (nul) {
		text_position(text, (size_t)(nul - text), &line, &col);
		return ds_fail(e, DS_EINPUT, "%s:%ld:%ld: NUL byte in the text",
			       source, line, col);
	}
	if (skip_space(text, len, start) == len)
		return ds_fail(e, DS_EINPUT, "%s: the file is empty", source);
	return DS_OK;
}

/* The message for a text cJSON could not parse from start on.  cJSON
 * gives only a position, at (the last byte when the text ends early);
 * show what stands there. */
static int load_syntax_error(const char *source, const char *text,
			     size_t len, size_t start, size_t at, ds_err *e)
{
	long line, col;
	size_t last = len;
	while (last > start && json_space(text[last - 1]))
		last--;
	if (at >= last) {
		text_position(text, last, &line, &col);
		return ds_fail(e, DS_EINPUT,
			       "%s:%ld:%ld: JSON syntax error: the text ends "
			       "before the value is complete",
			       source, line, col);
	}
	text_position(text, at, &line, &col);
	size_t n = 0;
	while (at + n < len && n < 24 && text[at + n] != '\n' &&
	       text[at + n] != '\r')
		n++;
	while (n > 0 && at + n < len &&
	       ((unsigned char)text[at + n] & 0xC0) == 0x80)
		n--; /* do not cut a character in two */
	return ds_fail(e, DS_EINPUT, "%s:%ld:%ld: JSON syntax error at '%.*s'",
		       source, line, col, (int)n, text + at);
}

/* Parses the JSON value that starts at start into *root, which must be
 * followed by nothing but white space. */
static int load_parse(const char *source, const char *text, size_t len,
		      size_t start, cJSON **root, ds_err *e)
{
	/* Trailing text is checked below rather than by cJSON, whose check
	 * wants a NUL inside the given length. */
	const char *end = NULL;
	*root = cJSON_ParseWithLengthOpts(text + start, len - start, &end,
					  false);
	size_t at = end ? (size_t)(end - text) : start;
	if (!*root)
		return load_syntax_error(source, text, len, start, at, e);
	at = skip_space(text, len, at);
	if (at < len) {
		cJSON_Delete(*root);
		*root = NULL;
		long line, col;
		text_position(text, at, &line, &col);
		return ds_fail(e, DS_EINPUT,
			       "%s:%ld:%ld: unexpected text after the JSON "
			       "value",
			       source, line, col);
	}
	return DS_OK;
}

/* The graph of the parsed document root, which is deleted. */
static int load_build(const ds_heap *h, const char *source, cJSON *root,
		      const ds_caps *caps, ds_graph **out, ds_err *e)
{
	ds_builder *b = ds_builder_new(h, source);
	if (!b) {
		cJSON_Delete(root);
		return ds_fail(e, DS_ENOMEM, "%s: out of memory", source);
	}
	loader L = {.heap = h, .source = source};
	int rc = load_tree(&L, b, root, e);
	/* the builder has copied all it needs */
	cJSON_Delete(root);
	ds_free(h, L.bufs);
	if (rc == DS_OK)
		rc = ds_builder_finish(b, caps, out, e);
	ds_builder_free(b);
	return rc;
}

/* ---- one element at a time ---- */

/* A position in the text of the document being streamed; ok false once
 * anything is not as load_stream expects (the whole-document path then
 * reads the file). */
typedef struct stream {
	const char *text;
	size_t len, at;
	bool ok;
} stream;

/* The next character after white space is c: consumed, true. */
static bool st_take(stream *s, char c)
{
	s->at = skip_space(s->text, s->len, s->at);
	if (s->at < s->len && s->text[s->at] == c) {
		s->at++;
		return true;
	}
	return false;
}

/* Arrays and objects nested in v, v included, up to limit. */
static int nesting(const cJSON *v, int limit)
{
	if (!cJSON_IsArray(v) && !cJSON_IsObject(v))
		return 0;
	int most = 0;
	for (const cJSON *c = v->child; c && most < limit; c = c->next) {
		int d = nesting(c, limit);
		if (d > most)
			most = d;
	}
	return most + 1;
}

/* The value at s (after white space), parsed alone; NULL with s->ok false
 * where the whole document would not read it the same: cJSON's parse of
 * a value alone skips a byte order mark, and counts its nesting from 0
 * rather than from depth (the arrays and objects around it). */
static cJSON *st_value(stream *s, int depth)
{
	s->at = skip_space(s->text, s->len, s->at);
	if (s->at >= s->len || s->text[s->at] == '\xEF') {
		s->ok = false;
		return NULL;
	}
	const char *end = NULL;
	cJSON *v = cJSON_ParseWithLengthOpts(s->text + s->at, s->len - s->at,
					     &end, false);
	int most = CJSON_NESTING_LIMIT - depth;
	if (!v || nesting(v, CJSON_NESTING_LIMIT) > most) {
		cJSON_Delete(v);
		s->ok = false;
		return NULL;
	}
	s->at = (size_t)(end - s->text);
	return v;
}

/* The elements of the array at s, each fed to b by one (node or edge) as
 * load_tree does; s->ok false on anything else, and on an error (whose
 * message the whole-document path gives again, after its checks of the
 * top level). */
static void st_array(stream *s, loader *L, ds_builder *b,
		     int (*one)(loader *, ds_builder *, const cJSON *,
				long long, ds_err *),
		     ds_err *e)
{
	if (!st_take(s, '['))
		s->ok = false;
	if (!s->ok || st_take(s, ']'))
		return;
	long long index = 0;
	do {
		cJSON *v = st_value(s, 2);
		if (v && one(L, b, v, index++, e))
			s->ok = false;
		cJSON_Delete(v);
	} while (s->ok && st_take(s, ','));
	if (s->ok && !st_take(s, ']'))
		s->ok = false;
}

/* The key at s ("Nodes" 1, "Edges" 2, any other 0) and its colon. */
static int st_key(stream *s)
{
	cJSON *k = st_value(s, 1);
	int which = 0;
	if (cJSON_IsString(k))
		which = strcmp(k->valuestring, "Nodes") == 0	? 1
			: strcmp(k->valuestring, "Edges") == 0 ? 2
							       : 0;
	cJSON_Delete(k);
	if (!s->ok || !st_take(s, ':'))
		s->ok = false;
	return which;
}

/* The document from start streamed into b: {"Nodes": [...], "Edges":
 * [...]} and white space, nothing else; false when the whole-document
 * path must read it (b is then spoilt). */
static bool load_stream(loader *L, ds_builder *b, const char *text,
			size_t len, size_t start, ds_err *e)
{
	stream s = {text, len, start, true};
	if (!st_take(&s, '{') || st_key(&s) != 1)
		return false;
	st_array(&s, L, b, load_node, e);
	if (!s.ok || !st_take(&s, ',') || st_key(&s) != 2)
		return false;
	st_array(&s, L, b, load_edge, e);
	return s.ok && st_take(&s, '}') &&
	       skip_space(text, len, s.at) == len;
}

/* The graph of a document load_stream reads (*read true), or nothing
 * (*read false: the whole-document path's turn). */
static int load_streamed(const ds_heap *h, const char *source,
			 const char *text, size_t len, size_t start,
			 const ds_caps *caps, ds_graph **out, bool *read,
			 ds_err *e)
{
	*read = false;
	ds_builder *b = ds_builder_new(h, source);
	if (!b)
		return ds_fail(e, DS_ENOMEM, "%s: out of memory", source);
	loader L = {.heap = h, .source = source};
	*read = load_stream(&L, b, text, len, start, e);
	ds_free(h, L.bufs);
	int rc = *read ? ds_builder_finish(b, caps, out, e) : DS_OK;
	ds_builder_free(b);
	return rc;
}

int ds_load_json_text(const ds_heap *h, const char *source, const char *text,
		      size_t len, const ds_caps *caps, ds_graph **out,
		      ds_err *e)
{
	*out = NULL;
	if (!source)
		source = "graph"; /* the builder's name for a nameless text */
	/* a UTF-8 byte order mark is not JSON, but editors write one */
	size_t start = 0;
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
		start = 3;
	cJSON *root = NULL;
	bool read = false;
	int rc = load_check_text(source, text, len, start, e);
	if (rc == DS_OK)
		rc = load_streamed(h, source, text, len, start, caps, out,
				   &read, e);
	if (rc || read)
		return rc;
	rc = load_parse(source, text, len, start, &root, e);
	if (rc)
		return rc;
	return load_build(h, source, root, caps, out, e);
}

int ds_load_json(const ds_heap *h, const char *path, const ds_caps *caps,
		 ds_graph **out, ds_err *e)
{
	char *text;
	size_t len;
	*out = NULL;
	int rc = ds_read_file(h, path, &text, &len, e);
	if (rc)
		return rc;
	rc = ds_load_json_text(h, path, text, len, caps, out, e);
	ds_free(h, text);
	return rc;
}

static bool ends_with_ci(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	if (k > n)
		return false;
	for (size_t i = 0; i < k; i++) {
		char a = s[n - k + i], c = suffix[i];
		if (a >= 'A' && a <= 'Z')
			a = (char)(a - 'A' + 'a');
		if (a != c)
			return false;
	}
	return true;
}

int ds_load_graph(const ds_heap *h, const char *path, const ds_caps *caps,
		  ds_graph **out, ds_err *e)
{
	if (ends_with_ci(path, ".csv"))
		return ds_load_csv(h, path, caps, out, e);
	return ds_load_json(h, path, caps, out, e);
}

int ds_write_graph(const ds_graph *g, const char *path, ds_err *e)
{
	if (ends_with_ci(path, ".csv"))
		return ds_write_csv(g, path, e);
	return ds_write_json(g, path, e);
}

/* ---- writing ---- */

/* s as a JSON string literal.  Names came from valid UTF-8, so only
 * quotes, backslashes and control characters need escapes. */
static void put_string(ds_text *t, const char *s)
{
	ds_text_printf(t, "\"");
	for (const char *p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '"' || c == '\\')
			ds_text_printf(t, "\\%c", c);
		else if (c < 0x20)
			ds_text_printf(t, "\\u%04x", c);
		else
			ds_text_printf(t, "%c", c);
	}
	ds_text_printf(t, "\"");
}

int ds_write_json(const ds_graph *g, const char *path, ds_err *e)
{
	/* the bundled files' layout: CRLF line ends, tabs, no final newline */
	const char *nl = "\r\n";
	ds_text t;
	ds_text_init(&t, g->heap);
	ds_text_printf(&t, "{%s\t\"Nodes\": [%s", nl, nl);
	for (int32_t v = 0; v < g->n; v++) {
		ds_text_printf(&t, "\t\t{%s\t\t\t\"Id\": %d,%s\t\t\t\"Op\": ", nl,
			       v, nl);
		put_string(&t, g->ops[g->op[v]]);
		ds_text_printf(&t, ",%s", nl);
		if (g->kind[v] != DS_OP) {
			int32_t x = g->buf[v];
			ds_text_printf(&t,
				       "\t\t\t\"BufId\": %lld,%s"
				       "\t\t\t\"Size\": %lld,%s"
				       "\t\t\t\"Type\": \"%s\"%s",
				       (long long)g->buf_id[x], nl,
				       (long long)g->buf_size[x], nl,
				       ds_mem_names[g->buf_mem[x]], nl);
		} else {
			ds_text_printf(&t, "\t\t\t\"Pipe\": ");
			put_string(&t, g->pipes[g->pipe[v]]);
			ds_text_printf(&t, ",%s\t\t\t\"Cycles\": %lld,%s",
				       nl, (long long)g->cycles[v], nl);
			ds_text_printf(&t, "\t\t\t\"Bufs\": [");
			for (int32_t k = g->use_off[v]; k < g->use_off[v + 1];
			     k++)
				ds_text_printf(&t, "%s%lld",
					       k > g->use_off[v] ? ", " : "",
					       (long long)g->buf_id[g->use[k]]);
			ds_text_printf(&t, "]%s", nl);
		}
		ds_text_printf(&t, "\t\t}%s%s", v + 1 < g->n ? "," : "", nl);
	}
	ds_text_printf(&t, "\t],%s\t\"Edges\": [%s", nl, nl);
	for (int64_t k = 0; k < g->nedge; k++)
		ds_text_printf(&t, "\t\t[%d,%d]%s%s", g->esrc[k], g->edst[k],
			       k + 1 < g->nedge ? "," : "", nl);
	ds_text_printf(&t, "\t]%s}", nl);
	if (t.failed) {
		ds_text_free(&t);
		return ds_fail(e, DS_ENOMEM, "%s: out of memory", path);
	}
	int rc = ds_write_file_atomic(g->heap, path, t.s, (size_t)t.len, e);
	ds_text_free(&t);
	return rc;
}
