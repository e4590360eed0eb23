/* test_loader.c: the graph loader (ds_json.c over ds_graph.c).
 *
 * Every refusal must be DS_EINPUT with one line that starts with the source
 * name and names the offending item; valid graphs must come out with the
 * right CSR arrays and buffer table. */
#include "test_util.h"

#include "../fuzz/fuzz_entry.h"

#include <cjson/cJSON.h>

/* The smallest sensible graph: ALLOC -> EXP -> FREE of one UB buffer. */
#define TINY                                                                 \
	GRAPH(ALLOC(0, 7, 16, UB) "," OP(1, EXP, VECTOR, 60, "7") "," FREE( \
		      2, 7, 16, UB),                                        \
	      "[0,1],[1,2]")

/* Loads json and checks the refusal: DS_EINPUT, no graph, a message that
 * starts with the source name and contains every needle (NULL-ended). */
static void refuse_caps(const char *json, const ds_caps *caps, ...)
{
	ds_graph *g = (ds_graph *)&g; /* must be reset to NULL */
	ds_err e;
	int rc = load_caps(json, caps, &g, &e);
	if (rc != DS_EINPUT)
		fail_msg("expected DS_EINPUT, got %d (%s) for %s", rc,
			 rc ? e.msg : "accepted", json);
	assert_null(g);
	assert_int_equal(e.code, DS_EINPUT);
	assert_starts_with(e.msg, "t.json");
	assert_null(strchr(e.msg, '\n')); /* one line */
	va_list ap;
	va_start(ap, caps);
	for (const char *n; (n = va_arg(ap, const char *));)
		assert_contains(e.msg, n);
	va_end(ap);
}
#define refuse(json, ...) refuse_caps(json, NULL, __VA_ARGS__, (char *)NULL)

static void tiny_is_valid(void **state)
{
	(void)state;
	ds_graph *g = must_load(TINY);
	assert_int_equal(g->n, 3);
	assert_int_equal(g->critical_path, 60);
	ds_graph_free(g);
}

/* ---- Ids ---- */

static void ids_not_dense(void **state)
{
	(void)state;
	/* three nodes need Ids 0..2; 5 is out of range */
	refuse(GRAPH(ALLOC(0, 7, 16, UB) "," OP(1, EXP, VECTOR, 60, "7") "," FREE(
			     5, 7, 16, UB),
		     "[0,1],[1,5]"),
	       "Id 5");
}

static void id_duplicate(void **state)
{
	(void)state;
	refuse(GRAPH(ALLOC(0, 7, 16, UB) "," OP(1, EXP, VECTOR, 60, "7") "," FREE(
			     1, 7, 16, UB),
		     "[0,1]"),
	       "Id 1", "twice");
}

static void id_negative(void **state)
{
	(void)state;
	refuse(GRAPH(ALLOC(0, 7, 16, UB) "," OP(-1, EXP, VECTOR, 60, "7") "," FREE(
			     2, 7, 16, UB),
		     "[0,2]"),
	       "Id", "-1");
}

/* ---- edges ---- */

/* No edge orders EXP after the ALLOC or before the FREE of its buffer
 * (only [0,2],[1,2]): the order constraints must add them, so that every
 * pass keeps the buffer resident while EXP uses it. */
static void use_ordered_by_buffer(void **state)
{
	(void)state;
	ds_graph *g = must_load(GRAPH(ALLOC(0, 7, 16, UB) "," OP(1, EXP, VECTOR,
							   60, "7") "," FREE(2, 7, 16, UB),
			       "[0,2],[1,2]"));
	assert_int_equal(g->topo[0], 0);
	assert_int_equal(g->topo[1], 1);
	assert_int_equal(g->topo[2], 2);
	assert_int_equal(g->pred_off[2] - g->pred_off[1], 1); /* 0 -> 1 */
	assert_int_equal(g->epred_off[2] - g->epred_off[1], 0);
	ds_graph_free(g);
}

/* An edge from a buffer's FREE to one of its users cannot be kept. */
static void use_after_free(void **state)
{
	(void)state;
	refuse(GRAPH(ALLOC(0, 7, 16, UB) "," OP(1, EXP, VECTOR, 60, "7") "," FREE(
			     2, 7, 16, UB),
		     "[0,1],[2,1]"),
	       "outside its ALLOC..FREE", "->");
}

static void edge_missing_node(void **state)
{
	(void)state;
	refuse(GRAPH(ALLOC(0, 7, 16, UB) "," OP(1, EXP, VECTOR, 60, "7") "," FREE(
			     2, 7, 16, UB),
		     "[0,1],[1,9]"),
	       "node 9");
}

static void edge_self_loop(void **state)
{
	(void)state;
	refuse(GRAPH(ALLOC(0, 7, 16, UB) "," OP(1, EXP, VECTOR, 60, "7") "," FREE(
			     2, 7, 16, UB),
		     "[0,1],[1,1],[1,2]"),
	       "[1, 1]", "cycle");
}

static void edge_not_a_pair(void **state)
{
	(void)state;
	refuse(GRAPH(ALLOC(0, 7, 16, UB) "," OP(1, EXP, VECTOR, 60, "7") "," FREE(
			     2, 7, 16, UB),
		     "[0,1],[1,2,0]"),
	       "edge at index 1");
}

/* The message lists the cycle as "a -> b -> ... -> a"; every step must be
 * an edge of the graph (given as pairs, npairs long) and no node off the
 * cycle may appear.  Returns the number of distinct nodes listed. */
static int check_cycle_message(const char *msg, const int (*edge)[2],
			       int npairs)
{
	const char *p = strstr(msg, "cycle: ");
	if (!p)
		fail_msg("no cycle list in '%s'", msg);
	p += strlen("cycle: ");
	assert_contains(p, "->");
	int list[16] = {0}, k = 0;
	while (*p && k < 16) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		list[k++] = (int)v;
		p = end;
		if (strncmp(p, " -> ", 4) != 0)
			break;
		p += 4;
	}
	assert_true(k >= 2);
	bool dots = strncmp(p, "...", 3) == 0;
	if (!dots)
		assert_int_equal(list[0], list[k - 1]); /* closes the loop */
	for (int i = 0; i + 1 < k; i++) {
		bool found = false;
		for (int j = 0; j < npairs; j++)
			found |= edge[j][0] == list[i] &&
				 edge[j][1] == list[i + 1];
		if (!found)
			fail_msg("'%d -> %d' in '%s' is not an edge", list[i],
				 list[i + 1], msg);
	}
	return dots ? k : k - 1;
}

static void edge_cycle(void **state)
{
	(void)state;
	/* 0 ALLOC feeds the cycle 1 -> 2 -> 3 -> 1, which feeds 4 FREE; the
	 * message must list exactly the three nodes on the cycle. */
	static const int edges[][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 1}, {3, 4}};
	const char *json = GRAPH(
		ALLOC(0, 7, 16, UB) "," OP(1, A, VECTOR, 1, "7") "," OP(
			2, B, VECTOR, 1, "7") "," OP(3, C, VECTOR, 1,
						     "7") "," FREE(4, 7, 16, UB),
		"[0,1],[1,2],[2,3],[3,1],[3,4]");
	ds_graph *g = NULL;
	ds_err e;
	assert_int_equal(load_caps(json, NULL, &g, &e), DS_EINPUT);
	assert_null(g);
	assert_starts_with(e.msg, "t.json");
	assert_int_equal(check_cycle_message(e.msg, edges, 5), 3);
	assert_null(strstr(e.msg, "0 ->"));
	assert_null(strstr(e.msg, "4 ->"));
}

static void edge_long_cycle(void **state)
{
	(void)state;
	/* a cycle of 12 operations 1..12: the message lists part of it and
	 * ends with "...", and what it lists still follows the edges */
	char json[4096];
	int edges[14][2], ne = 0;
	size_t at = (size_t)snprintf(json, sizeof json,
				     "{\"Nodes\":[" ALLOC(0, 7, 16, UB));
	for (int v = 1; v <= 12; v++)
		at += (size_t)snprintf(json + at, sizeof json - at,
				       ",{\"Id\":%d,\"Op\":\"X\",\"Pipe\":"
				       "\"VECTOR\",\"Cycles\":1,\"Bufs\":[7]}",
				       v);
	at += (size_t)snprintf(json + at, sizeof json - at,
			       "," FREE(13, 7, 16, UB) "],\"Edges\":[[0,1]");
	edges[ne][0] = 0, edges[ne++][1] = 1;
	for (int v = 1; v <= 12; v++) {
		int w = v == 12 ? 1 : v + 1;
		at += (size_t)snprintf(json + at, sizeof json - at,
				       ",[%d,%d]", v, w);
		edges[ne][0] = v, edges[ne++][1] = w;
	}
	snprintf(json + at, sizeof json - at, ",[12,13]]}");
	edges[ne][0] = 12, edges[ne++][1] = 13;
	ds_graph *g = NULL;
	ds_err e;
	assert_int_equal(load_caps(json, NULL, &g, &e), DS_EINPUT);
	assert_contains(e.msg, "...");
	assert_int_equal(check_cycle_message(e.msg, (const int(*)[2])edges, ne),
			 8);
}

/* ---- buffers ---- */

static void buffer_two_allocs(void **state)
{
	(void)state;
	refuse(GRAPH(ALLOC(0, 7, 16, UB) "," ALLOC(1, 7, 16, UB) "," FREE(
			     2, 7, 16, UB),
		     "[0,2],[1,2]"),
	       "buffer 7", "2 ALLOC");
}

static void buffer_without_free(void **state)
{
	(void)state;
	refuse(GRAPH(ALLOC(0, 7, 16, UB) "," OP(1, EXP, VECTOR, 60, "7"),
		     "[0,1]"),
	       "buffer 7", "0 FREE");
}

static void buffer_size_differs(void **state)
{
	(void)state;
	refuse(GRAPH(ALLOC(0, 7, 16, UB) "," OP(1, EXP, VECTOR, 60, "7") "," FREE(
			     2, 7, 32, UB),
		     "[0,1],[1,2]"),
	       "buffer 7", "Size 16", "32");
}

static void buffer_type_differs(void **state)
{
	(void)state;
	refuse(GRAPH(ALLOC(0, 7, 16, UB) "," OP(1, EXP, VECTOR, 60, "7") "," FREE(
			     2, 7, 16, L1),
		     "[0,1],[1,2]"),
	       "buffer 7", "Type UB", "L1");
}

static void buffer_unknown_in_bufs(void **state)
{
	(void)state;
	refuse(GRAPH(ALLOC(0, 7, 16, UB) "," OP(1, EXP, VECTOR, 60, "7,9") "," FREE(
			     2, 7, 16, UB),
		     "[0,1],[1,2]"),
	       "buffer 9", "node 1");
}

static void buffer_listed_twice(void **state)
{
	(void)state;
	refuse(GRAPH(ALLOC(0, 7, 16, UB) "," OP(1, EXP, VECTOR, 60, "7,7") "," FREE(
			     2, 7, 16, UB),
		     "[0,1],[1,2]"),
	       "buffer 7", "twice");
}

static void buffer_unknown_memory(void **state)
{
	(void)state;
	refuse(GRAPH(ALLOC(0, 7, 16, L2) "," OP(1, EXP, VECTOR, 60, "7") "," FREE(
			     2, 7, 16, L2),
		     "[0,1],[1,2]"),
	       "'L2'", "buffer 7");
}

static void buffer_size_zero(void **state)
{
	(void)state;
	refuse(GRAPH(ALLOC(0, 7, 0, UB) "," OP(1, EXP, VECTOR, 60, "7") "," FREE(
			     2, 7, 0, UB),
		     "[0,1],[1,2]"),
	       "Size 0", "buffer 7");
}

static void buffer_size_negative(void **state)
{
	(void)state;
	refuse(GRAPH(ALLOC(0, 7, -4, UB) "," OP(1, EXP, VECTOR, 60, "7") "," FREE(
			     2, 7, -4, UB),
		     "[0,1],[1,2]"),
	       "\"Size\"", "-4");
}

static void buffer_larger_than_memory(void **state)
{
	(void)state;
	const char *json =
		GRAPH(ALLOC(0, 7, 2048, UB) "," OP(1, EXP, VECTOR, 60,
						   "7") "," FREE(2, 7, 2048,
								 UB),
		      "[0,1],[1,2]");
	refuse(json, "buffer 7", "2048", "UB capacity 1024");
	/* --cap UB=4096 makes room for it */
	ds_caps caps;
	ds_caps_default(&caps);
	ds_err e;
	assert_int_equal(ds_caps_parse(&caps, "UB=4096", &e), DS_OK);
	ds_graph *g = NULL;
	if (load_caps(json, &caps, &g, &e) != DS_OK)
		fail_msg("refused with UB=4096: %s", e.msg);
	assert_int_equal(g->buf_size[0], 2048);
	assert_int_equal(g->caps.cap[DS_UB], 4096);
	ds_graph_free(g);
	/* and exactly the capacity is fine */
	caps.cap[DS_UB] = 2048;
	assert_int_equal(load_caps(json, &caps, &g, &e), DS_OK);
	ds_graph_free(g);
	caps.cap[DS_UB] = 2047;
	refuse_caps(json, &caps, "buffer 7", "capacity 2047", (char *)NULL);
}

/* ---- numbers ---- */

static void cycles_negative(void **state)
{
	(void)state;
	refuse(GRAPH(ALLOC(0, 7, 16, UB) "," OP(1, EXP, VECTOR, -5, "7") "," FREE(
			     2, 7, 16, UB),
		     "[0,1],[1,2]"),
	       "Id 1", "\"Cycles\"", "-5");
}

static void cycles_fraction(void **state)
{
	(void)state;
	refuse(GRAPH(ALLOC(0, 7, 16, UB) "," OP(1, EXP, VECTOR, 2.5, "7") "," FREE(
			     2, 7, 16, UB),
		     "[0,1],[1,2]"),
	       "Id 1", "\"Cycles\"", "2.5");
}

static void value_above_2_53(void **state)
{
	(void)state;
	/* 2^54 Cycles, 1e20 Size, a 2^60 BufId, an edge end at 2^54 */
	refuse(GRAPH(ALLOC(0, 7, 16, UB) "," OP(1, EXP, VECTOR,
						 18014398509481984,
						 "7") "," FREE(2, 7, 16, UB),
		     "[0,1],[1,2]"),
	       "\"Cycles\"", "too large");
	refuse(GRAPH(ALLOC(0, 7, 1e20, UB) "," OP(1, EXP, VECTOR, 60, "7") "," FREE(
			     2, 7, 1e20, UB),
		     "[0,1],[1,2]"),
	       "\"Size\"", "too large");
	refuse(GRAPH(ALLOC(0, 1152921504606846976, 16, UB) "," OP(
			     1, EXP, VECTOR, 60,
			     "1152921504606846976") "," FREE(2,
							     1152921504606846976,
							     16, UB),
		     "[0,1],[1,2]"),
	       "\"BufId\"", "too large");
	refuse(GRAPH(ALLOC(0, 7, 16, UB) "," OP(1, EXP, VECTOR, 60, "7") "," FREE(
			     2, 7, 16, UB),
		     "[0,1],[1,18014398509481984]"),
	       "edge at index 1", "too large");
}

static void value_2_53_accepted(void **state)
{
	(void)state;
	/* DS_VALUE_MAX itself is a legal Cycles value */
	ds_graph *g = must_load(
		GRAPH(ALLOC(0, 7, 16, UB) "," OP(1, EXP, VECTOR,
						 9007199254740992,
						 "7") "," FREE(2, 7, 16, UB),
		      "[0,1],[1,2]"));
	assert_int_equal(g->cycles[1], DS_VALUE_MAX);
	assert_int_equal(g->critical_path, DS_VALUE_MAX);
	ds_graph_free(g);
}

/* ---- JSON types and syntax ---- */

static void cycles_string(void **state)
{
	(void)state;
	refuse(GRAPH(ALLOC(0, 7, 16, UB) "," OP(1, EXP, VECTOR, "60", "7") "," FREE(
			     2, 7, 16, UB),
		     "[0,1],[1,2]"),
	       "Id 1", "\"Cycles\"", "string");
}

static void bufs_not_array(void **state)
{
	(void)state;
	refuse(GRAPH(ALLOC(0, 7, 16, UB) ",{\"Id\":1,\"Op\":\"EXP\",\"Pipe\":"
					 "\"VECTOR\",\"Cycles\":60,\"Bufs\":7},"
					 FREE(2, 7, 16, UB),
		     "[0,1],[1,2]"),
	       "Id 1", "\"Bufs\"");
}

/* The item and the value a message names, in full: the names are made
 * only when a message is written (ds_json.c's item_name). */
static void messages_name_item_and_value(void **state)
{
	(void)state;
	refuse(GRAPH(ALLOC(0, 7, 16, UB) ",{\"Id\":1,\"Op\":\"EXP\",\"Pipe\":"
					 "\"VECTOR\",\"Cycles\":60,\"Bufs\":[7,"
					 "\"7\"]}," FREE(2, 7, 16, UB),
		     "[0,1],[1,2]"),
	       "t.json: node at index 1 (Id 1): element 1 of \"Bufs\" must "
	       "be a non-negative integer, got the string \"7\"");
	refuse(GRAPH("{\"Op\":\"ALLOC\",\"BufId\":7,\"Size\":16,"
		     "\"Type\":\"UB\"}",
		     "[0,1]"),
	       "t.json: node at index 0: missing key \"Id\"");
	refuse(GRAPH(ALLOC(0, 7, 16, UB) "," OP(1, EXP, VECTOR, 60, "7") "," FREE(
			     2, 7, 16, UB),
		     "[0,1],[\"1\",2]"),
	       "t.json: edge at index 1: its source must be a non-negative "
	       "integer");
	refuse(GRAPH(ALLOC(0, 7, 16, UB) "," OP(1, EXP, VECTOR, 60, "7") "," FREE(
			     2, 7, 16, UB),
		     "[0,1],[1,2.5]"),
	       "t.json: edge at index 1: its destination must be a "
	       "non-negative integer, got 2.5");
	refuse(GRAPH(ALLOC(0, 7, 16, UB) "," OP(1, EXP, VECTOR, -60, "7") "," FREE(
			     2, 7, 16, UB),
		     "[0,1],[1,2]"),
	       "t.json: node at index 1 (Id 1): \"Cycles\" must be a "
	       "non-negative integer, got -60");
	refuse("[]", "t.json: the top level must be an object");
}

static void nodes_not_array(void **state)
{
	(void)state;
	refuse("{\"Nodes\":{\"Id\":0},\"Edges\":[]}", "\"Nodes\"", "array");
}

static void top_level_array(void **state)
{
	(void)state;
	refuse("[{\"Nodes\":[],\"Edges\":[]}]", "top level", "array");
}

static void missing_key(void **state)
{
	(void)state;
	refuse(GRAPH("{\"Id\":0,\"Op\":\"ALLOC\",\"BufId\":7,\"Type\":\"UB\"}" "," OP(
			     1, EXP, VECTOR, 60, "7") "," FREE(2, 7, 16, UB),
		     "[0,1],[1,2]"),
	       "Id 0", "\"Size\"");
}

static void truncated(void **state)
{
	(void)state;
	/* cut the valid graph in the middle of its second node */
	const char *full = TINY;
	const char *cut = strstr(full, "\"Cycles\"");
	assert_non_null(cut);
	size_t len = (size_t)(cut - full);
	char *text = malloc(len + 1);
	assert_non_null(text);
	memcpy(text, full, len);
	text[len] = 0;
	refuse(text, "t.json:1:", "JSON");
	free(text);
}

static void trailing_text(void **state)
{
	(void)state;
	refuse(TINY " x", "t.json:1:", "after");
}

static void invalid_utf8(void **state)
{
	(void)state;
	/* a lone 0xFF inside an Op name; the message gives its offset */
	const char *json = GRAPH(
		ALLOC(0, 7, 16, UB) ",{\"Id\":1,\"Op\":\"E\xff\",\"Pipe\":"
				    "\"VECTOR\",\"Cycles\":60,\"Bufs\":[7]}," FREE(
					    2, 7, 16, UB),
		"[0,1],[1,2]");
	char where[32];
	snprintf(where, sizeof where, "offset %zu",
		 (size_t)(strchr(json, '\xff') - json));
	refuse(json, "UTF-8", where);
}

static void byte_order_mark(void **state)
{
	(void)state;
	/* editors write a UTF-8 BOM; it is skipped */
	ds_graph *g = must_load("\xEF\xBB\xBF" TINY);
	assert_int_equal(g->n, 3);
	ds_graph_free(g);
}

static void nul_byte(void **state)
{
	(void)state;
	/* a NUL would end cJSON's text early: refused, not truncated */
	static const char text[] = TINY "\0 junk";
	ds_graph *g = NULL;
	ds_err e;
	ds_caps caps;
	ds_caps_default(&caps);
	assert_int_equal(ds_load_json_text(ds_heap_std(), "t.json", text,
					   sizeof text - 1, &caps, &g, &e),
			 DS_EINPUT);
	assert_null(g);
	assert_starts_with(e.msg, "t.json:1:");
	assert_contains(e.msg, "NUL");
}

static void empty_graph(void **state)
{
	(void)state;
	refuse("{\"Nodes\":[],\"Edges\":[]}", "no nodes");
	refuse("  \n", "empty");
}

/* ---- valid graphs: the arrays ---- */

/* Six nodes, two buffers (BufIds 3 and 5, so buffer index != BufId):
 *   0 ALLOC 5 (UB, 16)     1 ALLOC 3 (L1, 64)
 *   2 COPY_IN MTE2 10 [3]  3 EXP VECTOR 60 [5, 3]
 *   4 FREE 3               5 FREE 5
 * edges 0->3, 1->2, 2->3, 3->4, 3->5 */
#define N_ALLOC5 ALLOC(0, 5, 16, UB)
#define N_ALLOC3 ALLOC(1, 3, 64, L1)
#define N_COPYIN OP(2, COPY_IN, MTE2, 10, "3")
#define N_EXP OP(3, EXP, VECTOR, 60, "5,3")
#define N_FREE3 FREE(4, 3, 64, L1)
#define N_FREE5 FREE(5, 5, 16, UB)
#define SIX_EDGES "[0,3],[1,2],[2,3],[3,4],[3,5]"

static void check_six(const ds_graph *g)
{
	assert_string_equal(g->source, "t.json");
	assert_int_equal(g->n, 6);
	assert_int_equal(g->nbuf, 2);
	assert_int_equal(g->nedge, 5);
	static const uint8_t kind[] = {DS_ALLOC, DS_ALLOC, DS_OP,
				       DS_OP,	 DS_FREE,  DS_FREE};
	static const int64_t cycles[] = {0, 0, 10, 60, 0, 0};
	static const int32_t buf[] = {1, 0, -1, -1, 0, 1};
	for (int v = 0; v < 6; v++) {
		assert_int_equal(g->kind[v], kind[v]);
		assert_int_equal(g->cycles[v], cycles[v]);
		assert_int_equal(g->buf[v], buf[v]);
	}
	assert_string_equal(g->ops[g->op[2]], "COPY_IN");
	assert_string_equal(g->ops[g->op[3]], "EXP");
	assert_string_equal(g->ops[g->op[0]], "ALLOC");
	assert_string_equal(g->ops[g->op[5]], "FREE");
	assert_string_equal(g->pipes[g->pipe[2]], "MTE2");
	assert_string_equal(g->pipes[g->pipe[3]], "VECTOR");
	assert_int_equal(g->pipe[0], -1);
	assert_int_equal(ds_graph_find_pipe(g, "VECTOR"), g->pipe[3]);
	assert_int_equal(ds_graph_find_pipe(g, "CUBE"), -1);

	/* the edges by destination, input order kept within a node */
	static const int32_t epred_off[] = {0, 0, 0, 1, 3, 4, 5};
	static const int32_t epred[] = {1, 0, 2, 3, 3};
	for (int v = 0; v <= 6; v++)
		assert_int_equal(g->epred_off[v], epred_off[v]);
	for (int k = 0; k < 5; k++)
		assert_int_equal(g->epred[k], epred[k]);
	/* the order constraints: the edges plus ALLOC -> user -> FREE of
	 * every buffer and ALLOC -> FREE, deduplicated, sorted; new here:
	 * 1 -> 3 (EXP uses BufId 3), 2 -> 4, 1 -> 4, 0 -> 5 */
	static const int32_t pred_off[] = {0, 0, 0, 1, 4, 7, 9};
	static const int32_t pred[] = {1, 0, 1, 2, 1, 2, 3, 0, 3};
	static const int32_t succ_off[] = {0, 2, 5, 7, 9, 9, 9};
	static const int32_t succ[] = {3, 5, 2, 3, 4, 3, 4, 4, 5};
	for (int v = 0; v <= 6; v++) {
		assert_int_equal(g->pred_off[v], pred_off[v]);
		assert_int_equal(g->succ_off[v], succ_off[v]);
	}
	for (int k = 0; k < 9; k++) {
		assert_int_equal(g->pred[k], pred[k]);
		assert_int_equal(g->succ[k], succ[k]);
	}
	/* Bufs as buffer indices, in the order listed: node 3 lists 5, 3 */
	static const int32_t use_off[] = {0, 0, 0, 1, 3, 3, 3};
	static const int32_t use[] = {0, 1, 0};
	for (int v = 0; v <= 6; v++)
		assert_int_equal(g->use_off[v], use_off[v]);
	for (int k = 0; k < 3; k++)
		assert_int_equal(g->use[k], use[k]);

	/* the buffer table, in BufId order */
	assert_int_equal(g->buf_id[0], 3);
	assert_int_equal(g->buf_id[1], 5);
	assert_int_equal(g->buf_size[0], 64);
	assert_int_equal(g->buf_size[1], 16);
	assert_int_equal(g->buf_mem[0], DS_L1);
	assert_int_equal(g->buf_mem[1], DS_UB);
	assert_int_equal(g->buf_alloc[0], 1);
	assert_int_equal(g->buf_free[0], 4);
	assert_int_equal(g->buf_alloc[1], 0);
	assert_int_equal(g->buf_free[1], 5);
	assert_int_equal(g->buf_copyin[0], 1); /* COPY_IN uses BufId 3 */
	assert_int_equal(g->buf_copyin[1], 0);
	assert_int_equal(g->user_off[0], 0);
	assert_int_equal(g->user_off[1], 2);
	assert_int_equal(g->user_off[2], 3);
	assert_int_equal(g->user[0], 2);
	assert_int_equal(g->user[1], 3);
	assert_int_equal(g->user[2], 3);
	assert_int_equal(ds_graph_find_buf(g, 3), 0);
	assert_int_equal(ds_graph_find_buf(g, 5), 1);
	assert_int_equal(ds_graph_find_buf(g, 4), -1);

	/* Kahn from Id order: 0 1 2 3 4 5; the critical path 10 + 60 */
	for (int v = 0; v < 6; v++)
		assert_int_equal(g->topo[v], v);
	assert_int_equal(g->critical_path, 70);
	assert_int_equal(g->caps.cap[DS_L1], 4096);
}

static void valid_arrays(void **state)
{
	(void)state;
	ds_graph *g = must_load(GRAPH(N_ALLOC5 "," N_ALLOC3 "," N_COPYIN
					       "," N_EXP "," N_FREE3
					       "," N_FREE5,
				      SIX_EDGES));
	check_six(g);
	ds_graph_free(g);
}

static void valid_out_of_order(void **state)
{
	(void)state;
	/* the same nodes listed in another order: Ids decide, not places */
	ds_graph *g = must_load(GRAPH(N_FREE5 "," N_EXP "," N_ALLOC3
					      "," N_FREE3 "," N_ALLOC5
					      "," N_COPYIN,
				      SIX_EDGES));
	check_six(g);
	ds_graph_free(g);
}

static void valid_builder(void **state)
{
	(void)state;
	/* the builder, fed directly in a scrambled order, agrees */
	ds_builder *b = ds_builder_new(ds_heap_std(), "t.json");
	assert_non_null(b);
	ds_err e;
	int64_t u3[] = {3}, u53[] = {5, 3};
	assert_int_equal(ds_builder_edge(b, 3, 5, &e), DS_OK);
	assert_int_equal(ds_builder_buffer(b, 5, true, 5, 16, "UB", &e), DS_OK);
	assert_int_equal(ds_builder_op(b, 3, "EXP", "VECTOR", 60, u53, 2, &e),
			 DS_OK);
	assert_int_equal(ds_builder_buffer(b, 1, false, 3, 64, "L1", &e),
			 DS_OK);
	assert_int_equal(ds_builder_op(b, 2, "COPY_IN", "MTE2", 10, u3, 1, &e),
			 DS_OK);
	assert_int_equal(ds_builder_buffer(b, 4, true, 3, 64, "L1", &e), DS_OK);
	assert_int_equal(ds_builder_buffer(b, 0, false, 5, 16, "UB", &e),
			 DS_OK);
	/* edges in the JSON's order except [3,5], given first: preds of 5
	 * and succs of 3 come out the same either way */
	assert_int_equal(ds_builder_edge(b, 0, 3, &e), DS_OK);
	assert_int_equal(ds_builder_edge(b, 1, 2, &e), DS_OK);
	assert_int_equal(ds_builder_edge(b, 2, 3, &e), DS_OK);
	assert_int_equal(ds_builder_edge(b, 3, 4, &e), DS_OK);
	ds_caps caps;
	ds_caps_default(&caps);
	ds_graph *g = NULL;
	assert_int_equal(ds_builder_finish(b, &caps, &g, &e), DS_OK);
	ds_builder_free(b);
	/* [3,5] came first here: the edges of 5 are the same, and the order
	 * constraints do not depend on the input order at all */
	assert_int_equal(g->epred_off[5], 4);
	assert_int_equal(g->epred[4], 3);
	assert_int_equal(g->succ_off[3], 7);
	assert_int_equal(g->succ_off[4], 9);
	assert_int_equal(g->succ[7], 4);
	assert_int_equal(g->succ[8], 5);
	assert_int_equal(g->nbuf, 2);
	assert_int_equal(g->buf_alloc[0], 1);
	assert_int_equal(g->buf_free[1], 5);
	assert_int_equal(g->buf_copyin[0], 1);
	assert_int_equal(g->critical_path, 70);
	ds_graph_free(g);
}

/* Every bundled graph loads, and its topo is a permutation that respects
 * every edge. */
static void check_loaded(const char *name, const char *path, ds_graph *g,
			 void *ud)
{
	(void)name;
	(void)path;
	(void)ud;
	assert_true(g->n > 0);
	assert_true(g->nbuf > 0);
	int32_t *pos = malloc((size_t)g->n * sizeof *pos);
	assert_non_null(pos);
	for (int32_t v = 0; v < g->n; v++)
		pos[v] = -1;
	for (int32_t i = 0; i < g->n; i++) {
		assert_int_equal(pos[g->topo[i]], -1);
		pos[g->topo[i]] = i;
	}
	for (int64_t k = 0; k < g->nedge; k++)
		assert_true(pos[g->esrc[k]] < pos[g->edst[k]]);
	free(pos);
}

static void bundled_graphs_load(void **state)
{
	(void)state;
	assert_true(for_each_bundled(check_loaded, NULL) >= 1);
}

/* ---- one element at a time, or the whole document ---- */

/* Heap calls that loading json makes (ds_heap_faulty counting), *g the
 * graph (NULL when refused). */
static long load_counted(const char *json, ds_graph **g)
{
	ds_faulty st = {0};
	ds_heap h = ds_heap_faulty(&st);
	ds_caps caps;
	ds_caps_default(&caps);
	ds_err e;
	*g = NULL;
	(void)ds_load_json_text(&h, "t.json", json, strlen(json), &caps, g, &e);
	return st.calls;
}

#define SIX_NODES                                                            \
	N_ALLOC5 "," N_ALLOC3 "," N_COPYIN "," N_EXP "," N_FREE3 "," N_FREE5

static void streamed_or_whole(void **state)
{
	(void)state;
	/* the usual shape is read one element at a time; another key, the
	 * edges first, white space cJSON allows and JSON does not (a form
	 * feed) take the whole-document path, which feeds the builder again
	 * after the streamed attempt stopped: more heap calls */
	static const char *const whole[] = {
		"{\"Nodes\":[" SIX_NODES "],\"Edges\":[" SIX_EDGES
		"],\"Name\":\"six\"}",
		"{\"Edges\":[" SIX_EDGES "],\"Nodes\":[" SIX_NODES "]}",
		"{\"Nodes\":[" SIX_NODES "],\"Edges\":[" SIX_EDGES
		"]\f}",
	};
	ds_graph *g;
	long streamed = load_counted(GRAPH(SIX_NODES, SIX_EDGES), &g);
	assert_non_null(g);
	check_six(g);
	ds_graph_free(g);
	for (size_t k = 0; k < sizeof whole / sizeof *whole; k++) {
		long calls = load_counted(whole[k], &g);
		if (!g)
			fail_msg("refused: %s", whole[k]);
		check_six(g);
		ds_graph_free(g);
		assert_true(calls > streamed);
	}
	/* a bad element (the first node's Id a string) stops the streamed
	 * attempt and the whole path names it; so is a second "Nodes" */
	refuse(GRAPH("{\"Id\":\"0\",\"Op\":\"ALLOC\",\"BufId\":5,\"Size\":16,"
		     "\"Type\":\"UB\"}",
		     "[0,1]"),
	       "node at index 0", "\"0\"");
	refuse("{\"Nodes\":[" SIX_NODES "],\"Nodes\":[],\"Edges\":[" SIX_EDGES
	       "]}",
	       "\"Nodes\"", "2 times");
}

/* A node nested k arrays deep in a key of its own. */
static char *deep_node(int k)
{
	const char *head = "{\"Nodes\":[" N_ALLOC5 "," N_ALLOC3 "," N_COPYIN
			   "," N_EXP "," N_FREE3 ",{\"Id\":5,\"Op\":\"FREE\","
			   "\"BufId\":5,\"Size\":16,\"Type\":\"UB\",\"X\":";
	const char *tail = "}],\"Edges\":[" SIX_EDGES "]}";
	size_t n = strlen(head) + 2 * (size_t)k + strlen(tail) + 1;
	char *t = malloc(n);
	assert_non_null(t);
	char *c = t + sprintf(t, "%s", head);
	memset(c, '[', (size_t)k);
	memset(c + k, ']', (size_t)k);
	strcpy(c + 2 * k, tail);
	return t;
}

static void nesting_limit(void **state)
{
	(void)state;
	/* cJSON refuses a document nested more than CJSON_NESTING_LIMIT
	 * deep; a node parsed alone starts three levels further up, and
	 * must still be refused where the document is */
	int k = CJSON_NESTING_LIMIT - 3; /* root, "Nodes", the node */
	char *ok = deep_node(k), *deep = deep_node(k + 1);
	ds_graph *g = must_load(ok);
	check_six(g);
	ds_graph_free(g);
	refuse(deep, "t.json:1:", "JSON syntax error");
	free(ok);
	free(deep);
	/* a byte order mark is skipped at the start of the file only */
	refuse("{\"Nodes\":[\xEF\xBB\xBF" SIX_NODES "],\"Edges\":[" SIX_EDGES
	       "]}",
	       "t.json:1:", "JSON syntax error");
}

/* Each bundled graph read one element at a time and as a whole (a key
 * added at the end) is the same graph (fuzz_same_graph, as the JSON fuzz
 * target checks). */
static void same_both_ways(const char *name, const char *path, ds_graph *g,
			   void *ud)
{
	(void)name;
	(void)ud;
	char *text;
	size_t len;
	ds_err e;
	assert_int_equal(ds_read_file(ds_heap_std(), path, &text, &len, &e),
			 DS_OK);
	assert_true(len > 0 && text[len - 1] == '}');
	char *whole = malloc(len + 16);
	assert_non_null(whole);
	memcpy(whole, text, len - 1);
	memcpy(whole + len - 1, ",\"X\":0}", 7);
	ds_caps caps;
	ds_caps_default(&caps);
	ds_graph *w = NULL;
	assert_int_equal(ds_load_json_text(ds_heap_std(), path, whole, len + 6,
					   &caps, &w, &e),
			 DS_OK);
	assert_true(fuzz_same_graph(g, w));
	free(whole);
	free(text);
	ds_graph_free(w);
}

static void bundled_both_ways(void **state)
{
	(void)state;
	assert_true(for_each_bundled(same_both_ways, NULL) >= 1);
}

static void missing_file(void **state)
{
	(void)state;
	ds_caps caps;
	ds_caps_default(&caps);
	ds_graph *g = NULL;
	ds_err e;
	assert_int_equal(ds_load_graph(ds_heap_std(), "/nonexistent/x.json",
				       &caps, &g, &e),
			 DS_EINPUT);
	assert_null(g);
	assert_starts_with(e.msg, "/nonexistent/x.json");
}

/* ---- CSV: the same refusals as JSON (ds_csv.c over ds_graph.c) ---- */

#define CSV_HEAD "Id,Op,BufId,Size,Type,Pipe,Cycles,Bufs\n"
#define CSV_TINY CSV_HEAD "0,ALLOC,7,16,UB,,,\n1,EXP,,,,VECTOR,60,7\n2,FREE,7,16,UB,,,\n"
#define CSV_TINY_EDGES "Src,Dst\n0,1\n1,2\n"

/* Writes the two tables (edges NULL: no edges file) to a fresh folder as
 * t_nodes.csv and t_edges.csv and loads them; when want_ok is false the
 * load must be refused with DS_EINPUT, one line starting with the path of
 * the table at fault (bad_edges: the edges table) and containing needle. */
static void csv_case(const char *nodes, size_t nodes_len, const char *edges,
		     bool bad_edges, const char *needle)
{
	char *dir = make_tmpdir();
	char np[4200], ep[4200];
	snprintf(np, sizeof np, "%s/t_nodes.csv", dir);
	snprintf(ep, sizeof ep, "%s/t_edges.csv", dir);
	FILE *f = fopen(np, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(nodes, 1, nodes_len, f), nodes_len);
	fclose(f);
	if (edges)
		write_text(ep, edges);
	ds_caps caps;
	ds_caps_default(&caps);
	ds_graph *g = (ds_graph *)&g;
	ds_err e;
	memset(&e, 0, sizeof e);
	int rc = ds_load_csv(ds_heap_std(), np, &caps, &g, &e);
	if (!needle) {
		if (rc != DS_OK)
			fail_msg("refused a valid CSV graph: %s", e.msg);
		ds_graph_free(g);
		rm_tree(dir);
		return;
	}
	if (rc != DS_EINPUT)
		fail_msg("expected DS_EINPUT, got %d (%s) for\n%s", rc,
			 rc ? e.msg : "accepted", nodes);
	assert_null(g);
	assert_starts_with(e.msg, bad_edges ? ep : np);
	assert_null(strchr(e.msg, '\n'));
	assert_contains(e.msg, needle);
	rm_tree(dir);
}

#define csv_refuse(nodes, edges, needle) \
	csv_case(nodes, strlen(nodes), edges, false, needle)
#define csv_refuse_edges(nodes, edges, needle) \
	csv_case(nodes, strlen(nodes), edges, true, needle)

static void csv_valid_and_ids(void **state)
{
	(void)state;
	csv_case(CSV_TINY, strlen(CSV_TINY), CSV_TINY_EDGES, false, NULL);
	/* quoted cells, Bufs as [..], CRLF line ends: still the same graph */
	const char *q = "Id,Op,BufId,Size,Type,Pipe,Cycles,Bufs\r\n"
			"0,ALLOC,7,16,UB,,,\r\n\"1\",EXP,,,,VECTOR,60,\"[7]\"\r\n"
			"2,FREE,7,16,UB,,,\r\n";
	csv_case(q, strlen(q), CSV_TINY_EDGES, false, NULL);
	/* Ids: dense, unique, non-negative */
	csv_refuse(CSV_HEAD "0,ALLOC,7,16,UB,,,\n1,EXP,,,,VECTOR,60,7\n"
			    "5,FREE,7,16,UB,,,\n",
		   "Src,Dst\n0,1\n1,5\n", "Id 5");
	csv_refuse(CSV_HEAD "0,ALLOC,7,16,UB,,,\n1,EXP,,,,VECTOR,60,7\n"
			    "1,FREE,7,16,UB,,,\n",
		   "Src,Dst\n0,1\n", "twice");
	csv_refuse(CSV_HEAD "0,ALLOC,7,16,UB,,,\n-1,EXP,,,,VECTOR,60,7\n"
			    "2,FREE,7,16,UB,,,\n",
		   CSV_TINY_EDGES, "Id");
	csv_refuse(CSV_HEAD "0,ALLOC,7,16,UB,,,\nx,EXP,,,,VECTOR,60,7\n"
			    "2,FREE,7,16,UB,,,\n",
		   CSV_TINY_EDGES, "Id");
	csv_refuse(CSV_HEAD, "Src,Dst\n", "no nodes");
}

static void csv_edges(void **state)
{
	(void)state;
	csv_refuse(CSV_TINY, "Src,Dst\n0,1\n1,9\n", "node 9");
	csv_refuse(CSV_TINY, "Src,Dst\n0,1\n1,1\n1,2\n", "cycle");
	csv_refuse(CSV_TINY, "Src,Dst\n0,1\n1,2\n2,0\n", "cycle");
	csv_refuse_edges(CSV_TINY, "Src,Dst\n0,1\n1,2,0\n", "3 cells");
	csv_refuse_edges(CSV_TINY, "Src,Dst\n0,1\n1\n", "1 cell,");
	csv_refuse_edges(CSV_TINY, "Src,Dst\n0,1\n1,-2\n", "Dst");
	csv_refuse_edges(CSV_TINY, "Src\n0\n", "lacks column Dst");
	csv_refuse_edges(CSV_TINY, "", "the file is empty");
	/* no edges table at all */
	csv_refuse_edges(CSV_TINY, NULL, "t_edges.csv");
}

static void csv_buffers(void **state)
{
	(void)state;
	csv_refuse(CSV_HEAD "0,ALLOC,7,16,UB,,,\n1,ALLOC,7,16,UB,,,\n"
			    "2,FREE,7,16,UB,,,\n",
		   "Src,Dst\n0,2\n1,2\n", "2 ALLOC");
	csv_refuse(CSV_HEAD "0,ALLOC,7,16,UB,,,\n1,EXP,,,,VECTOR,60,7\n",
		   "Src,Dst\n0,1\n", "0 FREE");
	csv_refuse(CSV_HEAD "0,ALLOC,7,16,UB,,,\n1,EXP,,,,VECTOR,60,7\n"
			    "2,FREE,7,32,UB,,,\n",
		   CSV_TINY_EDGES, "Size 16 at ALLOC");
	csv_refuse(CSV_HEAD "0,ALLOC,7,16,UB,,,\n1,EXP,,,,VECTOR,60,7\n"
			    "2,FREE,7,16,L1,,,\n",
		   CSV_TINY_EDGES, "Type UB at ALLOC");
	csv_refuse(CSV_HEAD "0,ALLOC,7,16,UB,,,\n1,EXP,,,,VECTOR,60,8\n"
			    "2,FREE,7,16,UB,,,\n",
		   CSV_TINY_EDGES, "buffer 8");
	csv_refuse(CSV_HEAD "0,ALLOC,7,16,UB,,,\n1,EXP,,,,VECTOR,60,7;7\n"
			    "2,FREE,7,16,UB,,,\n",
		   CSV_TINY_EDGES, "listed twice");
	csv_refuse(CSV_HEAD "0,ALLOC,7,16,L2,,,\n1,EXP,,,,VECTOR,60,7\n"
			    "2,FREE,7,16,L2,,,\n",
		   CSV_TINY_EDGES, "L2");
	csv_refuse(CSV_HEAD "0,ALLOC,7,0,UB,,,\n1,EXP,,,,VECTOR,60,7\n"
			    "2,FREE,7,0,UB,,,\n",
		   CSV_TINY_EDGES, "Size");
	csv_refuse(CSV_HEAD "0,ALLOC,7,-16,UB,,,\n1,EXP,,,,VECTOR,60,7\n"
			    "2,FREE,7,-16,UB,,,\n",
		   CSV_TINY_EDGES, "Size");
	csv_refuse(CSV_HEAD "0,ALLOC,7,2048,UB,,,\n1,EXP,,,,VECTOR,60,7\n"
			    "2,FREE,7,2048,UB,,,\n",
		   CSV_TINY_EDGES, "exceeds UB capacity 1024");
	csv_refuse(CSV_HEAD "0,ALLOC,,16,UB,,,\n1,EXP,,,,VECTOR,60,7\n"
			    "2,FREE,7,16,UB,,,\n",
		   CSV_TINY_EDGES, "BufId is empty");
}

static void csv_values(void **state)
{
	(void)state;
	csv_refuse(CSV_HEAD "0,ALLOC,7,16,UB,,,\n1,EXP,,,,VECTOR,-60,7\n"
			    "2,FREE,7,16,UB,,,\n",
		   CSV_TINY_EDGES, "Cycles");
	csv_refuse(CSV_HEAD "0,ALLOC,7,16,UB,,,\n1,EXP,,,,VECTOR,2.5,7\n"
			    "2,FREE,7,16,UB,,,\n",
		   CSV_TINY_EDGES, "Cycles");
	csv_refuse(CSV_HEAD "0,ALLOC,7,16,UB,,,\n1,EXP,,,,VECTOR,sixty,7\n"
			    "2,FREE,7,16,UB,,,\n",
		   CSV_TINY_EDGES, "Cycles");
	csv_refuse(CSV_HEAD "0,ALLOC,7,16,UB,,,\n1,EXP,,,,VECTOR,"
			    "9007199254740993,7\n2,FREE,7,16,UB,,,\n",
		   CSV_TINY_EDGES, "too large");
	csv_refuse(CSV_HEAD "0,ALLOC,7,16,UB,,,\n1,EXP,,,,VECTOR,60,[7\n"
			    "2,FREE,7,16,UB,,,\n",
		   CSV_TINY_EDGES, "without a closing");
	csv_refuse(CSV_HEAD "0,ALLOC,7,16,UB,,,\n1,EXP,,,,VECTOR,60,7;x\n"
			    "2,FREE,7,16,UB,,,\n",
		   CSV_TINY_EDGES, "Bufs");
	csv_refuse(CSV_HEAD "0,ALLOC,7,16,UB,,,\n1,EXP,,,,VECTOR,60,7;\n"
			    "2,FREE,7,16,UB,,,\n",
		   CSV_TINY_EDGES, "empty item");
	csv_refuse(CSV_HEAD "0,ALLOC,7,16,UB,,,\n1,EXP,,,,,60,7\n"
			    "2,FREE,7,16,UB,,,\n",
		   CSV_TINY_EDGES, "Pipe");
	csv_refuse(CSV_HEAD "0,ALLOC,7,16,UB,,,\n1,,,,,VECTOR,60,7\n"
			    "2,FREE,7,16,UB,,,\n",
		   CSV_TINY_EDGES, "Op is empty");
}

static void csv_syntax(void **state)
{
	(void)state;
	/* a missing column (JSON: a missing key) */
	csv_refuse("Id,Op,BufId,Size,Type,Pipe,Bufs\n0,ALLOC,7,16,UB,,\n",
		   CSV_TINY_EDGES, "lacks column Cycles");
	csv_refuse("Id,Op,BufId,Size,Type,Pipe,Cycles,Bufs,Id\n",
		   CSV_TINY_EDGES, "column Id twice");
	/* a row of the wrong width (JSON: truncated / not an object) */
	csv_refuse(CSV_HEAD "0,ALLOC,7,16,UB,,\n", CSV_TINY_EDGES,
		   "7 cells, but the header has 8 columns");
	csv_refuse(CSV_HEAD "0,ALLOC,7,16,UB,,,\"\n", CSV_TINY_EDGES,
		   "never closed");
	csv_refuse(CSV_HEAD "0,ALLOC,7,16,UB,,,\"7\"x\n", CSV_TINY_EDGES,
		   "text after the closing quote");
	csv_refuse(CSV_HEAD "0,ALL\"OC,7,16,UB,,,\n", CSV_TINY_EDGES,
		   "quote inside unquoted cell");
	csv_refuse("", CSV_TINY_EDGES, "the file is empty");
	csv_refuse(CSV_HEAD "0,ALLOC,7,16,UB,,,\n1,EXP\xff,,,,VECTOR,60,7\n"
			    "2,FREE,7,16,UB,,,\n",
		   CSV_TINY_EDGES, "not valid UTF-8");
	static const char nul[] = CSV_HEAD "0,ALLOC,7,16,UB,,,\n1,E\0P,,,,"
					   "VECTOR,60,7\n2,FREE,7,16,UB,,,\n";
	csv_case(nul, sizeof nul - 1, CSV_TINY_EDGES, false, "NUL byte");
}

/* ---- allocation failures ---- */

/* One run with allocation number fail_at failing: load the six-node graph,
 * replay a plan with offsets and a spill, write and read it back, write the
 * graph as CSV and load that.  Every
 * step either succeeds or reports DS_ENOMEM, and nothing leaks.  Returns
 * true when no allocation failed (the sweep is over). */
static bool faulty_run(long fail_at, const char *dir)
{
	ds_faulty st = {.fail_at = fail_at};
	ds_heap h = ds_heap_faulty(&st);
	ds_caps caps;
	ds_caps_default(&caps);
	const char *json = GRAPH(N_ALLOC5 "," N_ALLOC3 "," N_COPYIN "," N_EXP
					  "," N_FREE3 "," N_FREE5,
				 SIX_EDGES);
	ds_graph *g = NULL;
	ds_err e;
	memset(&e, 0, sizeof e);
	int rc = ds_load_json_text(&h, "t.json", json, strlen(json), &caps, &g,
				   &e);
	if (rc == DS_OK) {
		/* spill BufId 5 (index 1) around nothing: ALLOC, out, in,
		 * EXP; ids 6 and 7 are its SPILL_OUT and SPILL_IN */
		int32_t order[] = {0, 6, 7, 1, 2, 3, 4, 5};
		int64_t offset[] = {0, 0};
		ds_spill spill[] = {{1, 512}};
		ds_plan p = {8, order, offset, 1, spill};
		ds_figures f;
		rc = ds_replay(g, &p, NULL, &f, &e);
		if (rc == DS_OK) {
			assert_int_equal(f.spills, 1);
			rc = ds_plan_write(g, &p, dir, "fa", &e);
		}
		if (rc == DS_OK) {
			char s[4200], m[4200], sp[4200];
			snprintf(s, sizeof s, "%s/fa_schedule.txt", dir);
			snprintf(m, sizeof m, "%s/fa_memory.txt", dir);
			snprintf(sp, sizeof sp, "%s/fa_spill.txt", dir);
			ds_plan q;
			rc = ds_plan_read(g, s, m, sp, &q, &e);
			if (rc == DS_OK) {
				assert_int_equal(q.len, 8);
				ds_plan_free(&h, &q);
			}
		}
		/* and the graph through the CSV tables and back */
		if (rc == DS_OK) {
			char csv[4200];
			snprintf(csv, sizeof csv, "%s/fa_nodes.csv", dir);
			rc = ds_write_csv(g, csv, &e);
			ds_graph *c = NULL;
			if (rc == DS_OK)
				rc = ds_load_csv(&h, csv, &caps, &c, &e);
			if (rc == DS_OK) {
				assert_int_equal(c->n, 6);
				assert_int_equal(c->critical_path, 70);
			} else {
				assert_null(c);
			}
			ds_graph_free(c);
		}
		ds_graph_free(g);
	} else {
		assert_null(g);
	}
	bool failed = fail_at <= st.calls;
	if (rc != DS_OK) {
		if (rc != DS_ENOMEM)
			fail_msg("allocation %ld: status %d (%s), expected "
				 "DS_ENOMEM",
				 fail_at, rc, e.msg);
		assert_contains(e.msg, "out of memory");
		assert_true(failed);
	}
	if (st.live != 0)
		fail_msg("allocation %ld failing: %ld blocks leaked", fail_at,
			 st.live);
	return rc == DS_OK && !failed;
}

static void allocation_failures(void **state)
{
	(void)state;
	char *dir = make_tmpdir();
	long n = 1;
	while (!faulty_run(n, dir)) {
		n++;
		assert_true(n < 100000);
	}
	/* the sweep went through many allocations before one run passed */
	assert_true(n > 20);
	print_message("allocation failure sweep: %ld runs\n", n);
	rm_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tiny_is_valid),
		cmocka_unit_test(csv_valid_and_ids),
		cmocka_unit_test(csv_edges),
		cmocka_unit_test(csv_buffers),
		cmocka_unit_test(csv_values),
		cmocka_unit_test(csv_syntax),
		cmocka_unit_test(ids_not_dense),
		cmocka_unit_test(id_duplicate),
		cmocka_unit_test(id_negative),
		cmocka_unit_test(use_ordered_by_buffer),
		cmocka_unit_test(use_after_free),
		cmocka_unit_test(edge_missing_node),
		cmocka_unit_test(edge_self_loop),
		cmocka_unit_test(edge_not_a_pair),
		cmocka_unit_test(edge_cycle),
		cmocka_unit_test(edge_long_cycle),
		cmocka_unit_test(buffer_two_allocs),
		cmocka_unit_test(buffer_without_free),
		cmocka_unit_test(buffer_size_differs),
		cmocka_unit_test(buffer_type_differs),
		cmocka_unit_test(buffer_unknown_in_bufs),
		cmocka_unit_test(buffer_listed_twice),
		cmocka_unit_test(buffer_unknown_memory),
		cmocka_unit_test(buffer_size_zero),
		cmocka_unit_test(buffer_size_negative),
		cmocka_unit_test(buffer_larger_than_memory),
		cmocka_unit_test(cycles_negative),
		cmocka_unit_test(cycles_fraction),
		cmocka_unit_test(value_above_2_53),
		cmocka_unit_test(value_2_53_accepted),
		cmocka_unit_test(cycles_string),
		cmocka_unit_test(bufs_not_array),
		cmocka_unit_test(messages_name_item_and_value),
		cmocka_unit_test(nodes_not_array),
		cmocka_unit_test(top_level_array),
		cmocka_unit_test(missing_key),
		cmocka_unit_test(truncated),
		cmocka_unit_test(trailing_text),
		cmocka_unit_test(invalid_utf8),
		cmocka_unit_test(byte_order_mark),
		cmocka_unit_test(nul_byte),
		cmocka_unit_test(empty_graph),
		cmocka_unit_test(valid_arrays),
		cmocka_unit_test(valid_out_of_order),
		cmocka_unit_test(valid_builder),
		cmocka_unit_test(bundled_graphs_load),
		cmocka_unit_test(streamed_or_whole),
		cmocka_unit_test(nesting_limit),
		cmocka_unit_test(bundled_both_ways),
		cmocka_unit_test(missing_file),
		cmocka_unit_test(allocation_failures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
