/* test_view.c: the Perfetto trace and the SVG memory map (ds_view.c). */
#include "test_util.h"

#include <cjson/cJSON.h>

#include "ds_stage.h"

/* BufId 1 (UB 100, used by a COPY_IN, so its SPILL_OUT costs 0) and BufId 2
 * (UB 200); Z takes 0 cycles:
 *   0 ALLOC 1 -> 2 COPY_IN (MTE2 10) -> 3 Z (VECTOR 0) -> 4 FREE 1
 *   1 ALLOC 2 ------------------------^  3 -> 5 FREE 2 */
#define G_SMALL                                                               \
	GRAPH(ALLOC(0, 1, 100, UB) "," ALLOC(1, 2, 200, UB) "," OP(           \
		      2, COPY_IN, MTE2, 10, "1") "," OP(3, Z, VECTOR, 0,      \
							"1,2") "," FREE(4, 1,  \
									100,   \
									UB)    \
		      "," FREE(5, 2, 200, UB),                                \
	      "[0,2],[2,3],[1,3],[3,4],[3,5]")

/* Buffer 1 (index 0) spilled right after its ALLOC and back at 512:
 * ids 6 and 7 are its SPILL_OUT and SPILL_IN. */
static int32_t small_order[] = {0, 6, 7, 1, 2, 3, 4, 5};
static int64_t small_offset[] = {0, 100};
static ds_spill small_spill[] = {{0, 512}};

static ds_plan small_plan(void)
{
	ds_plan p = {8, small_order, small_offset, 1, small_spill};
	return p;
}

/* ---- a minimal XML well-formedness checker ---- */

typedef struct svg_counts {
	int occ;     /* <rect class="occ ..."> */
	int spilled; /* ... with the class "spilled" too */
	int evicted;
	int rects;
} svg_counts;

static bool name_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
	       c == ':';
}

static bool name_char(char c)
{
	return name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

/* At '&': a predefined or numeric entity reference; advances past ';'. */
static bool entity(const char **s)
{
	static const char *const ok[] = {"&amp;", "&lt;", "&gt;", "&quot;",
					 "&apos;"};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		if (strncmp(*s, ok[i], strlen(ok[i])) == 0) {
			*s += strlen(ok[i]);
			return true;
		}
	const char *p = *s + 1;
	if (*p++ != '#')
		return false;
	bool hex = *p == 'x';
	if (hex)
		p++;
	const char *d = p;
	while ((*p >= '0' && *p <= '9') ||
	       (hex && ((*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F'))))
		p++;
	if (p == d || *p != ';')
		return false;
	*s = p + 1;
	return true;
}

static bool has_token(const char *v, size_t n, const char *tok)
{
	size_t tl = strlen(tok);
	for (size_t i = 0; i + tl <= n; i++)
		if ((i == 0 || v[i - 1] == ' ') && strncmp(v + i, tok, tl) == 0 &&
		    (i + tl == n || v[i + tl] == ' '))
			return true;
	return false;
}

/* Fails the test unless s is well-formed XML: one root, balanced tags,
 * quoted attributes without '<', '&' only in entity references. */
static void check_xml(const char *s, svg_counts *c)
{
	memset(c, 0, sizeof *c);
	const char *stack[256];
	size_t slen[256];
	int depth = 0, roots = 0;
	const char *p = s;
	if (strncmp(p, "<?xml", 5) == 0) {
		p = strstr(p, "?>");
		assert_non_null(p);
		p += 2;
	}
	while (*p) {
		if (*p == '&') {
			if (!entity(&p))
				fail_msg("bad entity at byte %ld",
					 (long)(p - s));
			if (depth == 0)
				fail_msg("text outside the root");
			continue;
		}
		if (*p != '<') {
			if (depth == 0 && *p != ' ' && *p != '\n' && *p != '\t' &&
			    *p != '\r')
				fail_msg("text outside the root at byte %ld",
					 (long)(p - s));
			p++;
			continue;
		}
		if (strncmp(p, "<!--", 4) == 0) {
			p = strstr(p, "-->");
			assert_non_null(p);
			p += 3;
			continue;
		}
		bool close = p[1] == '/';
		p += close ? 2 : 1;
		const char *nm = p;
		if (!name_start(*p))
			fail_msg("bad tag name at byte %ld", (long)(p - s));
		while (name_char(*p))
			p++;
		size_t nl = (size_t)(p - nm);
		if (close) {
			while (*p == ' ' || *p == '\n')
				p++;
			if (*p++ != '>')
				fail_msg("bad end tag at byte %ld",
					 (long)(p - s));
			if (depth == 0 || slen[depth - 1] != nl ||
			    strncmp(stack[depth - 1], nm, nl) != 0)
				fail_msg("unbalanced </%.*s> at byte %ld",
					 (int)nl, nm, (long)(p - s));
			depth--;
			continue;
		}
		bool rect = nl == 4 && strncmp(nm, "rect", 4) == 0;
		const char *names[64];
		size_t nlens[64];
		int nattr = 0;
		for (;;) {
			bool space = false;
			while (*p == ' ' || *p == '\n' || *p == '\t') {
				p++;
				space = true;
			}
			if (*p == '>' || (p[0] == '/' && p[1] == '>'))
				break;
			if (!space || !name_start(*p))
				fail_msg("bad attribute at byte %ld",
					 (long)(p - s));
			const char *an = p;
			while (name_char(*p))
				p++;
			size_t al = (size_t)(p - an);
			for (int k = 0; k < nattr; k++)
				if (nlens[k] == al &&
				    strncmp(names[k], an, al) == 0)
					fail_msg("attribute %.*s twice at byte "
						 "%ld",
						 (int)al, an, (long)(p - s));
			assert_true(nattr < 64);
			names[nattr] = an;
			nlens[nattr++] = al;
			if (*p++ != '=')
				fail_msg("attribute without value at byte %ld",
					 (long)(p - s));
			char q = *p++;
			if (q != '"' && q != '\'')
				fail_msg("unquoted attribute at byte %ld",
					 (long)(p - s));
			const char *v = p;
			while (*p && *p != q) {
				if (*p == '<')
					fail_msg("'<' in an attribute at byte "
						 "%ld",
						 (long)(p - s));
				if (*p == '&') {
					if (!entity(&p))
						fail_msg("bad entity at byte "
							 "%ld",
							 (long)(p - s));
				} else {
					p++;
				}
			}
			if (!*p)
				fail_msg("unterminated attribute");
			size_t vl = (size_t)(p - v);
			p++;
			if (rect && al == 5 && strncmp(an, "class", 5) == 0 &&
			    has_token(v, vl, "occ")) {
				c->occ++;
				c->spilled += has_token(v, vl, "spilled");
				c->evicted += has_token(v, vl, "evicted");
			}
		}
		c->rects += rect;
		if (*p == '/') {
			p += 2;
			if (depth == 0)
				roots++;
			continue;
		}
		p++;
		if (depth == 0)
			roots++;
		assert_true(depth < 256);
		stack[depth] = nm;
		slen[depth++] = nl;
	}
	assert_int_equal(depth, 0);
	assert_int_equal(roots, 1);
}

/* The checker itself, on a document using every construct it knows. */
static void xml_checker(void **state)
{
	(void)state;
	svg_counts c;
	check_xml("<?xml version=\"1.0\"?>\n<a x='1' y=\"&lt;&#38;\"><b/>t&amp;"
		  "<rect class=\"occ spilled\"/></a>\n",
		  &c);
	assert_int_equal(c.occ, 1);
	assert_int_equal(c.spilled, 1);
	const char *bad = "&foo;";
	assert_false(entity(&bad));
	const char *num = "&#x3c;";
	assert_true(entity(&num));
	assert_false(has_token("occupied", 8, "occ"));
	assert_true(has_token("a occ", 5, "occ"));
}

/* ---- checking a trace ---- */

static double num(const cJSON *o, const char *key)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsNumber(x))
		fail_msg("event without number \"%s\"", key);
	return x->valuedouble;
}

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsString(x))
		fail_msg("event without string \"%s\"", key);
	return x->valuestring;
}

typedef struct xrec {
	double ts, end;
	int tid, id;
} xrec;

static int cmp_xrec(const void *a, const void *b)
{
	const xrec *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->id - y->id;
}

/* The trace at path describes plan p of g exactly: one complete event per
 * operation and spill node at its replay times, tracks that never overlap,
 * the last event ending at the makespan, counters within capacity. */
static void check_trace(const char *path, const ds_graph *g, const ds_plan *p)
{
	int32_t total = p->len;
	int64_t *start = calloc((size_t)total, sizeof *start);
	int64_t *finish = calloc((size_t)total, sizeof *finish);
	int *seen = calloc((size_t)total, sizeof *seen);
	xrec *x = calloc((size_t)total, sizeof *x);
	assert_true(start && finish && seen && x);
	ds_replay_opts o = {.start = start, .finish = finish};
	ds_figures f;
	ds_err e;
	if (ds_replay(g, p, &o, &f, &e) != DS_OK)
		fail_msg("%s", e.msg);

	char *text = slurp(path);
	assert_non_null(text);
	cJSON *root = cJSON_Parse(text);
	if (!root)
		fail_msg("%s: not JSON near '%.40s'", path, cJSON_GetErrorPtr());
	assert_true(cJSON_IsObject(root));
	assert_non_null(cJSON_GetObjectItemCaseSensitive(root,
							 "displayTimeUnit"));
	const cJSON *evs = cJSON_GetObjectItemCaseSensitive(root,
							    "traceEvents");
	assert_true(cJSON_IsArray(evs));

	int nx = 0, expect = 2 * p->nspill;
	for (int32_t v = 0; v < g->n; v++)
		expect += g->kind[v] == DS_OP;
	bool named[64] = {false};
	double last_end = -1, max_end = 0;
	double held_ts[DS_NMEM], held[DS_NMEM];
	for (int m = 0; m < DS_NMEM; m++)
		held_ts[m] = -1, held[m] = 0;
	const cJSON *ev;
	cJSON_ArrayForEach(ev, evs)
	{
		const char *ph = str(ev, "ph");
		if (strcmp(ph, "M") == 0) {
			if (strcmp(str(ev, "name"), "thread_name") == 0) {
				int tid = (int)num(ev, "tid");
				assert_true(tid > 0 && tid < 64);
				named[tid] = true;
			}
			continue;
		}
		if (strcmp(ph, "C") == 0) {
			int m = ds_mem_from_name(str(ev, "name"));
			assert_true(m >= 0);
			double ts = num(ev, "ts");
			const cJSON *args =
				cJSON_GetObjectItemCaseSensitive(ev, "args");
			double b = num(args, "bytes");
			assert_true(ts >= held_ts[m]); /* in time order */
			assert_true(b >= 0 && b <= (double)g->caps.cap[m]);
			held_ts[m] = ts;
			held[m] = b;
			continue;
		}
		assert_string_equal(ph, "X");
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
		assert_true(cJSON_IsObject(args));
		int id = (int)num(args, "id");
		assert_true(id >= 0 && id < total);
		assert_int_equal(seen[id]++, 0);
		bool spill = id >= g->n;
		if (spill) {
			assert_string_equal(str(ev, "cat"), "spill");
			assert_string_equal(str(ev, "name"),
					    (id - g->n) % 2 ? "SPILL_IN"
							    : "SPILL_OUT");
			assert_non_null(str(ev, "cname"));
		} else {
			assert_int_equal(g->kind[id], DS_OP);
			assert_string_equal(str(ev, "cat"), "op");
			assert_string_equal(str(ev, "name"),
					    g->ops[g->op[id]]);
		}
		const cJSON *bufs = cJSON_GetObjectItemCaseSensitive(args,
								    "bufs");
		const cJSON *mem = cJSON_GetObjectItemCaseSensitive(args, "mem");
		int nb = spill ? 1 : g->use_off[id + 1] - g->use_off[id];
		assert_int_equal(cJSON_GetArraySize(bufs), nb);
		assert_int_equal(cJSON_GetArraySize(mem), nb);
		double ts = num(ev, "ts"), dur = num(ev, "dur");
		assert_true(ts == (double)start[id]);
		assert_true(dur == (double)(finish[id] - start[id]));
		xrec r = {ts, ts + dur, (int)num(ev, "tid"), id};
		x[nx++] = r;
		last_end = r.end;
		if (r.end > max_end)
			max_end = r.end;
	}
	assert_int_equal(nx, expect);
	assert_true(max_end == (double)f.makespan);
	assert_true(last_end == (double)f.makespan);
	for (int m = 0; m < DS_NMEM; m++)
		assert_true(held[m] == 0); /* everything freed in the end */
	qsort(x, (size_t)nx, sizeof *x, cmp_xrec);
	for (int i = 0; i < nx; i++) {
		assert_true(x[i].tid > 0 && x[i].tid < 64);
		assert_true(named[x[i].tid]);
		if (i > 0 && x[i - 1].tid == x[i].tid && x[i - 1].end > x[i].ts)
			fail_msg("%s: nodes %d and %d overlap on track %d",
				 path, x[i - 1].id, x[i].id, x[i].tid);
	}
	cJSON_Delete(root);
	free(text);
	free(start);
	free(finish);
	free(seen);
	free(x);
}

/* The SVG at path is well-formed with one rectangle per occupancy. */
static void check_svg(const char *path, const ds_graph *g, const ds_plan *p,
		      svg_counts *c)
{
	char *text = slurp(path);
	assert_non_null(text);
	check_xml(text, c);
	assert_int_equal(c->occ, g->nbuf + p->nspill);
	assert_int_equal(c->spilled, p->nspill);
	assert_int_equal(c->evicted, p->nspill);
	assert_null(strstr(text, "<script"));
	free(text);
	/* a second opinion: xmllint (libxml2-utils, which scripts/deps.sh
	 * installs); its absence fails the test rather than skip silently */
	if (system("command -v xmllint >/dev/null 2>&1") != 0)
		fail_msg("xmllint is missing: the SVG is NOT checked as XML "
			 "(install libxml2-utils: bash scripts/deps.sh)");
	char cmd[4300];
	snprintf(cmd, sizeof cmd, "xmllint --noout '%s'", path);
	assert_int_equal(system(cmd), 0);
}

static bool same_file(const char *a, const char *b)
{
	char *x = slurp(a), *y = slurp(b);
	assert_true(x && y);
	bool same = strcmp(x, y) == 0;
	free(x);
	free(y);
	return same;
}

/* ---- tests ---- */

static void small_graph(void **state)
{
	(void)state;
	char *dir = make_tmpdir();
	char tr[4200], svg[4200];
	snprintf(tr, sizeof tr, "%s/t.json", dir);
	snprintf(svg, sizeof svg, "%s/t.svg", dir);
	ds_graph *g = must_load(G_SMALL);
	ds_plan p = small_plan();
	ds_err e;
	if (ds_write_trace(g, &p, tr, &e) != DS_OK)
		fail_msg("%s", e.msg);
	check_trace(tr, g, &p);
	/* zero-cycle nodes are there, with dur 0 */
	char *text = slurp(tr);
	assert_contains(text, "\"dur\":0,\"name\":\"SPILL_OUT\"");
	assert_contains(text, "\"dur\":0,\"name\":\"Z\"");
	assert_contains(text, "\"dur\":350,\"name\":\"SPILL_IN\"");
	assert_contains(text, "\"process_name\",\"args\":{\"name\":\"t\"}");
	free(text);
	if (ds_write_memmap(g, &p, svg, &e) != DS_OK)
		fail_msg("%s", e.msg);
	svg_counts c;
	check_svg(svg, g, &p, &c);
	assert_int_equal(c.occ, 3);
	/* only UB holds buffers: one panel */
	text = slurp(svg);
	assert_contains(text, "id=\"mem-UB\"");
	assert_null(strstr(text, "id=\"mem-L1\""));
	assert_contains(text, "capacity 1024 B");
	assert_contains(text, "<title>buffer 1 (UB, 100 B) at [512, 612)");
	free(text);
	ds_graph_free(g);
	rm_tree(dir);
}

/* Events are listed by finish time: the last one ends at the makespan even
 * when the schedule's last operation ends earlier (A on MTE2 takes 100
 * cycles, B on VECTOR 5, and B comes last). */
static void last_event_ends_last(void **state)
{
	(void)state;
	char *dir = make_tmpdir();
	char tr[4200];
	snprintf(tr, sizeof tr, "%s/t.json", dir);
	ds_graph *g = must_load(GRAPH(
		ALLOC(0, 1, 10, UB) "," ALLOC(1, 2, 10, UB) "," OP(
			2, A, MTE2, 100, "1") "," OP(3, B, VECTOR, 5,
						     "2") "," FREE(4, 1, 10, UB)
			"," FREE(5, 2, 10, UB),
		"[0,2],[1,3],[2,4],[3,5]"));
	int32_t order[] = {0, 1, 2, 3, 4, 5};
	int64_t offset[] = {0, 10};
	ds_plan p = {6, order, offset, 0, NULL};
	ds_err e;
	assert_int_equal(ds_write_trace(g, &p, tr, &e), DS_OK);
	check_trace(tr, g, &p);
	char *text = slurp(tr);
	char *a = strstr(text, "\"name\":\"A\""), *b = strstr(text, "\"name\":\"B\"");
	assert_true(a && b && b < a);
	free(text);
	ds_graph_free(g);
	rm_tree(dir);
}

/* Free strings end up escaped: an op name with quotes, backslash, control
 * characters and markup, a source name with markup. */
static void escaping(void **state)
{
	(void)state;
	char *dir = make_tmpdir();
	char tr[4200], svg[4200];
	snprintf(tr, sizeof tr, "%s/t.json", dir);
	snprintf(svg, sizeof svg, "%s/t.svg", dir);
	const char *json =
		GRAPH(ALLOC(0, 1, 100, UB) ",{\"Id\":1,\"Op\":\"a\\\"b\\\\c\\u0001"
					   "\\t<&>'\\u00e9\",\"Pipe\":\"V<&>\","
					   "\"Cycles\":5,\"Bufs\":[1]},"
		      FREE(2, 1, 100, UB),
		      "[0,1],[1,2]");
	ds_caps caps;
	ds_caps_default(&caps);
	ds_graph *g = NULL;
	ds_err e;
	if (ds_load_json_text(ds_heap_std(), "x/<a&b\">.json", json,
			      strlen(json), &caps, &g, &e) != DS_OK)
		fail_msg("%s", e.msg);
	int32_t order[] = {0, 1, 2};
	int64_t offset[] = {7};
	ds_plan p = {3, order, offset, 0, NULL};
	assert_int_equal(ds_write_trace(g, &p, tr, &e), DS_OK);
	check_trace(tr, g, &p);
	char *text = slurp(tr);
	cJSON *root = cJSON_Parse(text);
	assert_non_null(root);
	/* the names survive the round trip */
	bool op = false, pipe = false, proc = false;
	const cJSON *ev;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root,
								"traceEvents"))
	{
		const char *nm = str(ev, "name");
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(ev, "args");
		if (strcmp(str(ev, "ph"), "X") == 0)
			op = strcmp(nm, "a\"b\\c\x01\t<&>'\xc3\xa9") == 0;
		else if (strcmp(nm, "thread_name") == 0)
			pipe = strcmp(str(a, "name"), "V<&>") == 0;
		else if (strcmp(nm, "process_name") == 0)
			proc = strcmp(str(a, "name"), "<a&b\">") == 0;
	}
	assert_true(op && pipe && proc);
	cJSON_Delete(root);
	free(text);
	assert_int_equal(ds_write_memmap(g, &p, svg, &e), DS_OK);
	svg_counts c;
	check_svg(svg, g, &p, &c);
	text = slurp(svg);
	assert_contains(text, "&lt;a&amp;b&quot;&gt;: memory map");
	free(text);
	ds_graph_free(g);
	rm_tree(dir);
}

static void refusals(void **state)
{
	(void)state;
	char *dir = make_tmpdir();
	char tr[4200], svg[4200];
	snprintf(tr, sizeof tr, "%s/t.json", dir);
	snprintf(svg, sizeof svg, "%s/t.svg", dir);
	ds_graph *g = must_load(G_SMALL);
	ds_err e;
	/* the replay's verdict is passed on, nothing is written */
	int32_t bad_order[] = {0, 6, 7, 1, 3, 2, 4, 5};
	ds_plan p = small_plan();
	p.order = bad_order;
	ds_figures f;
	ds_err want;
	assert_int_equal(ds_replay(g, &p, NULL, &f, &want), DS_EPLAN);
	assert_int_equal(ds_write_trace(g, &p, tr, &e), DS_EPLAN);
	assert_string_equal(e.msg, want.msg);
	assert_int_equal(ds_write_memmap(g, &p, svg, &e), DS_EPLAN);
	assert_string_equal(e.msg, want.msg);
	/* overlapping offsets */
	p = small_plan();
	int64_t overlap[] = {0, 50};
	p.offset = overlap;
	p.spill = (ds_spill[]){{0, 0}};
	assert_int_equal(ds_write_memmap(g, &p, svg, &e), DS_EPLAN);
	assert_contains(e.msg, "overlap");
	/* a memory map needs offsets; a trace does not */
	p = small_plan();
	p.offset = NULL;
	assert_int_equal(ds_write_memmap(g, &p, svg, &e), DS_EINPUT);
	assert_contains(e.msg, "offsets");
	assert_int_equal(count_entries(dir), 0);
	assert_int_equal(ds_write_trace(g, &p, tr, &e), DS_OK);
	check_trace(tr, g, &p);
	/* an unwritable path */
	p = small_plan();
	assert_int_equal(ds_write_trace(g, &p, "/nonexistent/t.json", &e),
			 DS_EINPUT);
	assert_contains(e.msg, "/nonexistent/t.json");
	ds_graph_free(g);
	rm_tree(dir);
}

/* Every allocation failure is reported as DS_ENOMEM and leaks nothing. */
static void allocation_failures(void **state)
{
	(void)state;
	char *dir = make_tmpdir();
	char path[4200];
	snprintf(path, sizeof path, "%s/out", dir);
	ds_faulty st = {0};
	ds_heap h = ds_heap_faulty(&st);
	ds_caps caps;
	ds_caps_default(&caps);
	const char *json = G_SMALL;
	ds_graph *g = NULL;
	ds_err e;
	assert_int_equal(ds_load_json_text(&h, "t.json", json, strlen(json),
					   &caps, &g, &e),
			 DS_OK);
	ds_plan p = small_plan();
	long base = st.live;
	for (int which = 0; which < 2; which++) {
		long n = 1;
		for (;; n++) {
			assert_true(n < 10000);
			st.fail_at = st.calls + n;
			long before = st.calls;
			int rc = which ? ds_write_memmap(g, &p, path, &e)
				       : ds_write_trace(g, &p, path, &e);
			bool failed = st.calls - before >= n;
			if (rc != DS_OK) {
				if (rc != DS_ENOMEM)
					fail_msg("allocation %ld: %d (%s)", n,
						 rc, e.msg);
				assert_true(failed);
			}
			if (st.live != base)
				fail_msg("allocation %ld failing: %ld blocks "
					 "leaked",
					 n, st.live - base);
			if (rc == DS_OK && !failed)
				break;
		}
		assert_true(n > 5);
	}
	st.fail_at = 0;
	ds_graph_free(g);
	assert_int_equal(st.live, 0);
	rm_tree(dir);
}

/* Output paths of the bundled-graph check. */
typedef struct view_files {
	char tr[4200], tr2[4200], svg[4200], svg2[4200];
} view_files;

/* One bundled graph's plan (free-first order, best fit, cost victims): its
 * trace and memory map are well-formed and the same on a second write. */
static void check_views(const char *name, const char *path, ds_graph *g,
			void *ud)
{
	const view_files *f = ud;
	ds_err e;
	int32_t *order = malloc((size_t)g->n * sizeof *order);
	assert_non_null(order);
	if (ds_order_free_first(g, order, &e) != DS_OK)
		fail_msg("%s", e.msg);
	ds_place_opts po = {DS_BEST_FIT, DS_VICTIM_COST, 0};
	ds_plan p;
	if (ds_place(g, order, &po, &p, &e) != DS_OK)
		fail_msg("%s: %s", path, e.msg);
	if (ds_write_trace(g, &p, f->tr, &e) != DS_OK ||
	    ds_write_trace(g, &p, f->tr2, &e) != DS_OK)
		fail_msg("%s: %s", path, e.msg);
	check_trace(f->tr, g, &p);
	assert_true(same_file(f->tr, f->tr2)); /* deterministic */
	if (ds_write_memmap(g, &p, f->svg, &e) != DS_OK ||
	    ds_write_memmap(g, &p, f->svg2, &e) != DS_OK)
		fail_msg("%s: %s", path, e.msg);
	svg_counts c;
	check_svg(f->svg, g, &p, &c);
	assert_true(same_file(f->svg, f->svg2));
	printf("%s: %d occupancies (%d re-loaded by SPILL_IN)\n", name, c.occ,
	       c.spilled);
	ds_plan_free(g->heap, &p);
	free(order);
}

static void bundled_graphs(void **state)
{
	(void)state;
	char *dir = make_tmpdir();
	view_files f;
	snprintf(f.tr, sizeof f.tr, "%s/t.json", dir);
	snprintf(f.tr2, sizeof f.tr2, "%s/t2.json", dir);
	snprintf(f.svg, sizeof f.svg, "%s/t.svg", dir);
	snprintf(f.svg2, sizeof f.svg2, "%s/t2.svg", dir);
	assert_true(for_each_bundled(check_views, &f) >= 1);
	rm_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(xml_checker),
		cmocka_unit_test(small_graph),
		cmocka_unit_test(last_event_ends_last),
		cmocka_unit_test(escaping),
		cmocka_unit_test(refusals),
		cmocka_unit_test(allocation_failures),
		cmocka_unit_test(bundled_graphs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
