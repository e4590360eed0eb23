/* test_api_make.c: the public API's graphs and plans from memory
 * (dansched_graph_parse, dansched_graph_buffer_id, dansched_plan_make), the
 * entries the Python package (python/dansched) is built on. */
#include "test_util.h"

#include "dansched.h"

/* BufIds 10 (UB 100) and 20 (L1 64), so buffer indices differ from BufIds:
 *   0 ALLOC 10, 1 ALLOC 20 -> 2 E1 (VECTOR 10) -> 3 FREE 10, 4 FREE 20 */
#define G_TWO_BUFS                                                            \
	GRAPH(ALLOC(0, 10, 100, UB) "," ALLOC(1, 20, 64, L1) "," OP(          \
		      2, E1, VECTOR, 10, "10,20") "," FREE(3, 10, 100,         \
							   UB) "," FREE(4, 20, \
									64,    \
									L1),   \
	      "[0,2],[1,2],[2,3],[2,4]")

static dansched_graph *parse(const char *text)
{
	dansched_graph *g = NULL;
	dansched_error e;
	int rc = dansched_graph_parse(NULL, "t.json", text, strlen(text), NULL,
				      &g, &e);
	if (rc)
		fail_msg("parse failed (%d): %s", rc, e.message);
	return g;
}

static void parse_and_buffer_ids(void **state)
{
	(void)state;
	dansched_graph *g = parse(G_TWO_BUFS);
	assert_int_equal(dansched_graph_nodes(g), 5);
	assert_int_equal(dansched_graph_buffers(g), 2);
	assert_int_equal(dansched_graph_buffer_id(g, 0), 10);
	assert_int_equal(dansched_graph_buffer_id(g, 1), 20);
	assert_int_equal(dansched_graph_buffer_id(g, 2), -1);
	assert_int_equal(dansched_graph_buffer_id(g, -1), -1);
	assert_int_equal(dansched_graph_buffer_id(NULL, 0), -1);
	dansched_graph_destroy(g);
}

static void parse_refuses(void **state)
{
	(void)state;
	dansched_graph *g = (dansched_graph *)&g; /* must be reset to NULL */
	dansched_error e;
	const char *bad = GRAPH(ALLOC(0, 7, 16, UB), "[0,1]");
	assert_int_equal(dansched_graph_parse(NULL, "t.json", bad, strlen(bad),
					      NULL, &g, &e),
			 DANSCHED_BAD_INPUT);
	assert_null(g);
	assert_int_equal(e.status, DANSCHED_BAD_INPUT);
	assert_starts_with(e.message, "t.json");
	/* no text, no output: real errors, not crashes */
	assert_int_equal(dansched_graph_parse(NULL, NULL, NULL, 0, NULL, &g, &e),
			 DANSCHED_BAD_INPUT);
	assert_contains(e.message, "graph: the file is empty");
	g = (dansched_graph *)&g;
	assert_int_equal(dansched_graph_parse(NULL, "t.json", NULL, 5, NULL, &g,
					      &e),
			 DANSCHED_BAD_INPUT);
	assert_null(g);
	assert_contains(e.message, "no text");
	assert_int_equal(dansched_graph_parse(NULL, "t.json", bad, strlen(bad),
					      NULL, NULL, &e),
			 DANSCHED_BAD_INPUT);
	assert_contains(e.message, "no output");
}

/* The arrays of plan p (offsets and spills as dansched_place). */
typedef struct arrays {
	int64_t *order;
	int64_t len;
	dansched_place *offsets, *spills;
	int64_t noffsets, nspills;
} arrays;

static arrays arrays_of(const dansched_graph *g, const dansched_plan *p)
{
	arrays a;
	a.len = dansched_plan_length(p);
	a.order = calloc((size_t)a.len + 1, sizeof *a.order);
	a.noffsets = dansched_graph_buffers(g);
	a.offsets = calloc((size_t)a.noffsets + 1, sizeof *a.offsets);
	a.nspills = dansched_plan_spill_count(p);
	a.spills = calloc((size_t)a.nspills + 1, sizeof *a.spills);
	assert_true(a.order && a.offsets && a.spills);
	for (int64_t i = 0; i < a.len; i++)
		a.order[i] = dansched_plan_order(p)[i];
	for (int32_t b = 0; b < a.noffsets; b++) {
		a.offsets[b].bufid = dansched_graph_buffer_id(g, b);
		a.offsets[b].offset =
			dansched_plan_offset(g, p, a.offsets[b].bufid);
	}
	for (int32_t k = 0; k < a.nspills; k++)
		assert_int_equal(dansched_plan_spill(g, p, k, &a.spills[k].bufid,
						     &a.spills[k].offset),
				 DANSCHED_OK);
	return a;
}

static void arrays_free(arrays *a)
{
	free(a->order);
	free(a->offsets);
	free(a->spills);
}

/* A scheduled plan taken apart and made again is the same plan: the same
 * figures, the same accessors. */
static void make_round_trip(void **state)
{
	(void)state;
	dansched_graph *g;
	dansched_error e;
	const char *path = DS_SOURCE_DIR "/data/FlashAttention_Case0.json";
	assert_int_equal(dansched_graph_load(NULL, path, NULL, &g, &e),
			 DANSCHED_OK);
	dansched_options o;
	dansched_options_default(&o);
	o.scheduler = DANSCHED_FREE_FIRST; /* fast, and it spills here */
	dansched_plan *p, *q;
	dansched_figures f1, f2;
	assert_int_equal(dansched_schedule(g, &o, &p, &f1, &e), DANSCHED_OK);
	arrays a = arrays_of(g, p);
	assert_true(a.nspills > 0);
	assert_int_equal(dansched_plan_make(g, a.order, a.len, a.offsets,
					    a.noffsets, a.spills, a.nspills,
					    &q, &e),
			 DANSCHED_OK);
	assert_int_equal(dansched_evaluate(g, q, 0, &f2, &e), DANSCHED_OK);
	assert_memory_equal(&f1, &f2, sizeof f1);
	arrays b = arrays_of(g, q);
	assert_int_equal(a.len, b.len);
	assert_int_equal(a.nspills, b.nspills);
	assert_memory_equal(a.order, b.order, (size_t)a.len * sizeof *a.order);
	assert_memory_equal(a.offsets, b.offsets,
			    (size_t)a.noffsets * sizeof *a.offsets);
	assert_memory_equal(a.spills, b.spills,
			    (size_t)a.nspills * sizeof *a.spills);
	arrays_free(&a);
	arrays_free(&b);
	dansched_plan_destroy(q);
	dansched_plan_destroy(p);
	dansched_graph_destroy(g);
}

/* plan_make must refuse with status and a message containing needle, and
 * leave *out NULL. */
static void make_fails(const dansched_graph *g, const int64_t *order,
		       int64_t len, const dansched_place *off, int64_t noff,
		       const dansched_place *sp, int64_t nsp, int status,
		       const char *needle)
{
	dansched_plan *p = (dansched_plan *)&p;
	dansched_error e;
	int rc = dansched_plan_make(g, order, len, off, noff, sp, nsp, &p, &e);
	if (rc != status)
		fail_msg("expected %d, got %d (%s) for '%s'", status, rc,
			 rc ? e.message : "accepted", needle);
	assert_int_equal(e.status, status);
	assert_contains(e.message, needle);
	assert_null(strchr(e.message, '\n'));
	if (g)
		assert_null(p);
}

static void make_refuses(void **state)
{
	(void)state;
	dansched_graph *g = parse(G_TWO_BUFS);
	const int64_t ord[] = {0, 1, 2, 3, 4};
	const dansched_place off[] = {{10, 0}, {20, 0}};
	const dansched_place twice[] = {{10, 0}, {10, 8}};
	const dansched_place unknown[] = {{10, 0}, {30, 0}};
	const dansched_place negative[] = {{10, -1}};
	const int64_t far[] = {0, 1, 2, 3, (int64_t)1 << 40};
	const int64_t minus[] = {0, -3};
	const int B = DANSCHED_BAD_INPUT, P = DANSCHED_INVALID_PLAN;

	/* arguments no plan could fix */
	make_fails(NULL, ord, 5, off, 2, NULL, 0, B, "no graph");
	make_fails(g, ord, -1, off, 2, NULL, 0, B, "negative count");
	make_fails(g, ord, 5, off, -2, NULL, 0, B, "negative count");
	make_fails(g, NULL, 5, off, 2, NULL, 0, B, "order is NULL");
	make_fails(g, ord, 5, NULL, 2, NULL, 0, B, "offsets is NULL");
	make_fails(g, ord, 5, off, 2, NULL, 1, B, "spills is NULL");
	make_fails(g, ord, (int64_t)1 << 33, off, 2, NULL, 0, B,
		   "at most 2147483647");
	dansched_error e;
	assert_int_equal(dansched_plan_make(g, ord, 5, off, 2, NULL, 0, NULL,
					    &e),
			 B);
	assert_contains(e.message, "no output");

	/* items that cannot belong to a plan of g: named by array and index */
	make_fails(g, ord, 5, twice, 2, NULL, 0, P, "offsets[1]: buffer 10 "
						    "given twice");
	make_fails(g, ord, 5, unknown, 2, NULL, 0, P,
		   "offsets[1]: offset for unknown buffer 30");
	make_fails(g, ord, 5, negative, 1, NULL, 0, P,
		   "offsets[0]: negative offset -1");
	make_fails(g, ord, 5, off, 2, unknown, 2, P,
		   "spills[1]: spill of unknown buffer 30");
	make_fails(g, ord, 5, off, 2, negative, 1, P,
		   "spills[0]: negative offset -1");
	make_fails(g, far, 5, off, 2, NULL, 0, P,
		   "order[4]: node 1099511627776 does not exist");
	make_fails(g, minus, 2, NULL, 0, NULL, 0, P,
		   "order[1]: node -3 does not exist");

	/* accepted but broken: the evaluator names the rule */
	dansched_plan *p;
	const int64_t rev[] = {4, 3, 2, 1, 0};
	assert_int_equal(dansched_plan_make(g, rev, 5, off, 2, NULL, 0, &p, &e),
			 DANSCHED_OK);
	assert_int_equal(dansched_evaluate(g, p, 0, NULL, &e), P);
	assert_contains(e.message, "order");
	dansched_plan_destroy(p);
	/* no offsets: an order alone, as dansched_plan_read without MEMORY */
	assert_int_equal(dansched_plan_make(g, ord, 5, NULL, 0, NULL, 0, &p,
					    &e),
			 DANSCHED_OK);
	assert_int_equal(dansched_plan_has_offsets(p), 0);
	assert_int_equal(dansched_evaluate(g, p, 0, NULL, &e), DANSCHED_OK);
	dansched_plan_destroy(p);
	dansched_graph_destroy(g);
}

/* Every allocation of plan_make failing in turn: DANSCHED_NO_MEMORY, no
 * plan, nothing left allocated. */
static void make_out_of_memory(void **state)
{
	(void)state;
	ds_faulty st = {0, 0, 0};
	ds_heap fh = ds_heap_faulty(&st);
	dansched_allocator alloc = {fh.fn, fh.ud};
	const char *text = G_TWO_BUFS;
	dansched_graph *g;
	dansched_error e;
	assert_int_equal(dansched_graph_parse(&alloc, "t.json", text,
					      strlen(text), NULL, &g, &e),
			 DANSCHED_OK);
	const long live = st.live;
	const int64_t ord[] = {0, 1, 2, 3, 4};
	const dansched_place off[] = {{10, 0}, {20, 0}};
	const dansched_place sp[] = {{20, 0}};
	int failures = 0;
	for (long k = 1;; k++) {
		st.fail_at = st.calls + k;
		dansched_plan *p = (dansched_plan *)&p;
		int rc = dansched_plan_make(g, ord, 5, off, 2, sp, 1, &p, &e);
		if (rc == DANSCHED_OK) {
			dansched_plan_destroy(p);
			break;
		}
		assert_int_equal(rc, DANSCHED_NO_MEMORY);
		assert_null(p);
		assert_int_equal(st.live, live);
		failures++;
	}
	assert_int_equal(failures, 4); /* the plan, spills, offsets, order */
	st.fail_at = 0;
	assert_int_equal(st.live, live);
	dansched_graph_destroy(g);
	assert_int_equal(st.live, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_and_buffer_ids),
		cmocka_unit_test(parse_refuses),
		cmocka_unit_test(make_round_trip),
		cmocka_unit_test(make_refuses),
		cmocka_unit_test(make_out_of_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
