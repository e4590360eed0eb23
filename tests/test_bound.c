/* test_bound.c: the lower bounds that hold for every plan (ds_bound.c).
 *
 * Hand graphs whose one-machine (Jackson) bound is worked out below, the
 * sampled fallback, allocation failures, and on the bundled graphs: the
 * exact figures, lb_any against every other bound, and the same figures
 * on a renumbered copy.  lb_any against the makespan of the plans:
 * test_baseline (every baseline), test_pipeline (each stage of dan),
 * test_replay (a placed free-first order). */
#include "test_util.h"

#include "dansched.h"

/* Loads release and tails from loads, not paths.
 *   0, 1  P1 10 each (a1, a2)      -> every x
 *   2-4   X  5 each  (x1, x2, x3)  -> every b
 *   5, 6  P2 10 each (b1, b2)
 * Each x is released at 20 (both a's, one pipe: the path is only 10) and
 * has a tail of 20 (both b's): on X, 20 + 3 x 5 + 20 = 55, which the Id
 * order reaches.  Critical path 25, busiest pipe 20, phase 20 + 20 = 40. */
#define G_LOADS                                                              \
	GRAPH(OP(0, A, P1, 10, "") "," OP(1, A, P1, 10, "") "," OP(           \
		      2, X, X, 5, "") "," OP(3, X, X, 5, "") "," OP(4, X, X,  \
								  5, "") ","  \
		      OP(5, B, P2, 10, "") "," OP(6, B, P2, 10, ""),          \
	      "[0,2],[0,3],[0,4],[1,2],[1,3],[1,4],"                          \
	      "[2,5],[2,6],[3,5],[3,6],[4,5],[4,6]")

/* Preemption matters.
 *   0 c  P1 5  -> 2, 3        1 x1 X 10 -> 5
 *   2 x2 X  1  -> 4           3 x3 X  1 -> 4
 *   4 d  P2 10                5 e  P3 5
 * On X: x1 (release 0, tail 5), x2 and x3 (release 5, tail 10).  Jackson's
 * rule runs x1 over [0, 5), x2 [5, 6) -> 16, x3 [6, 7) -> 17, x1 [7, 12)
 * -> 17: the bound is 17, above the critical path (16: c x2 d) and the
 * phase figure (15, so 16 with the critical path).  Without preemption
 * every order gives 22 (x1 first: x3 ends at 12, d at 22; x2 and x3 first:
 * x1 ends at 17, e at 22), which the Id order shows. */
#define G_PREEMPT                                                            \
	GRAPH(OP(0, C, P1, 5, "") "," OP(1, X, X, 10, "") "," OP(             \
		      2, X, X, 1, "") "," OP(3, X, X, 1, "") "," OP(4, D, P2, \
								  10, "") "," \
		      OP(5, E, P3, 5, ""),                                    \
	      "[0,2],[0,3],[2,4],[3,4],[1,5]")

static ds_bounds bounds_of(const ds_graph *g, int64_t work)
{
	ds_bounds b;
	ds_err e;
	if (ds_bounds_compute(g, NULL, 0, work, &b, &e))
		fail_msg("%s", e.msg);
	return b;
}

static int64_t id_order_makespan(const ds_graph *g)
{
	int32_t *order = malloc((size_t)g->n * sizeof *order);
	assert_non_null(order);
	for (int32_t v = 0; v < g->n; v++)
		order[v] = v;
	ds_plan p = {g->n, order, NULL, 0, NULL};
	ds_figures f;
	ds_err e;
	if (ds_replay(g, &p, NULL, &f, &e))
		fail_msg("%s", e.msg);
	free(order);
	return f.makespan;
}

static void hand_loads(void **state)
{
	(void)state;
	ds_graph *g = must_load(G_LOADS);
	ds_bounds b = bounds_of(g, 0);
	assert_true(b.exact);
	assert_int_equal(b.critical_path, 25);
	assert_int_equal(b.pipe_load, 20);
	assert_int_equal(b.phase, 40);
	assert_int_equal(b.any, 55);
	assert_int_equal(id_order_makespan(g), 55);
	int64_t lb;
	ds_err e;
	assert_int_equal(ds_phase_bound(g, NULL, 0, &lb, &e), DS_OK);
	assert_int_equal(lb, 40);
	ds_graph_free(g);
}

static void hand_preemption(void **state)
{
	(void)state;
	ds_graph *g = must_load(G_PREEMPT);
	ds_bounds b = bounds_of(g, 0);
	assert_true(b.exact);
	assert_int_equal(b.critical_path, 16);
	assert_int_equal(b.pipe_load, 12);
	assert_int_equal(b.phase, 16);
	assert_int_equal(b.any, 17);
	assert_int_equal(id_order_makespan(g), 22);
	ds_graph_free(g);
}

/* Over the work budget: weaker, never above the exact figures, never
 * below the critical path and the busiest pipe, flagged. */
static void check_fallback(const ds_graph *g, const ds_bounds *x)
{
	ds_bounds s = bounds_of(g, 1);
	assert_false(s.exact);
	assert_true(s.any <= x->any && s.phase <= x->phase);
	assert_int_equal(s.critical_path, x->critical_path);
	assert_int_equal(s.pipe_load, x->pipe_load);
	assert_true(s.any >= s.phase && s.phase >= s.critical_path);
	assert_true(s.any >= s.pipe_load);
}

static void fallback(void **state)
{
	(void)state;
	const char *graphs[] = {G_LOADS, G_PREEMPT};
	for (int i = 0; i < 2; i++) {
		ds_graph *g = must_load(graphs[i]);
		ds_bounds x = bounds_of(g, 0);
		check_fallback(g, &x);
		/* the samples see every operation of these small graphs:
		 * the loads, so the bounds, are the exact ones */
		ds_bounds s = bounds_of(g, 1);
		assert_int_equal(s.any, x.any);
		ds_graph_free(g);
	}
}

/* The busiest pipe's cycles among the nodes reached from v along the
 * graph's edges (down: to successors), v not counted, into load[]. */
static void brute_reach(const ds_graph *g, int32_t v, bool down,
			int64_t *load, bool *seen, int32_t *stk)
{
	memset(seen, 0, (size_t)g->n * sizeof *seen);
	memset(load, 0, (size_t)g->npipes * sizeof *load);
	int32_t top = 0;
	stk[top++] = v;
	seen[v] = true;
	while (top > 0) {
		int32_t x = stk[--top];
		if (x != v && g->kind[x] == DS_OP)
			load[g->pipe[x]] += g->cycles[x];
		for (int64_t k = 0; k < g->nedge; k++) {
			int32_t from = down ? g->esrc[k] : g->edst[k];
			int32_t to = down ? g->edst[k] : g->esrc[k];
			if (from == x && !seen[to]) {
				seen[to] = true;
				stk[top++] = to;
			}
		}
	}
}

/* lb_phase by brute force: one search per operation over the edge list. */
static int64_t brute_phase(const ds_graph *g)
{
	int64_t best = g->critical_path;
	int64_t *a = calloc((size_t)g->npipes + 1, sizeof *a);
	int64_t *d = calloc((size_t)g->npipes + 1, sizeof *d);
	bool *seen = malloc((size_t)g->n * sizeof *seen);
	int32_t *stk = malloc((size_t)g->n * sizeof *stk);
	assert_true(a && d && seen && stk);
	for (int32_t v = 0; v < g->n; v++) {
		if (g->kind[v] != DS_OP)
			continue;
		brute_reach(g, v, false, a, seen, stk);
		brute_reach(g, v, true, d, seen, stk);
		d[g->pipe[v]] += g->cycles[v];
		int64_t am = 0, dm = 0;
		for (int32_t p = 0; p < g->npipes; p++)
			am = a[p] > am ? a[p] : am, dm = d[p] > dm ? d[p] : dm;
		best = am + dm > best ? am + dm : best;
	}
	free(a);
	free(d);
	free(seen);
	free(stk);
	return best;
}

/* The bitset loads against a plain search, on generated graphs of
 * several hundred operations per pipe (several words, varied cycles). */
static void brute_force(void **state)
{
	(void)state;
	const int kinds[] = {DS_GEN_RANDOM, DS_GEN_ATTENTION, DS_GEN_CONV};
	for (int i = 0; i < 3; i++) {
		ds_caps caps;
		ds_caps_default(&caps);
		ds_graph *g;
		ds_err e;
		if (ds_generate(ds_heap_std(), kinds[i], 1500, 7, &caps, &g,
				&e))
			fail_msg("%s", e.msg);
		ds_bounds b = bounds_of(g, 0);
		assert_true(b.exact);
		assert_int_equal(b.phase, brute_phase(g));
		assert_true(b.any >= b.phase);
		ds_graph_free(g);
	}
}

/* Every failing allocation is reported, and nothing leaks. */
static void out_of_memory(void **state)
{
	(void)state;
	ds_graph *g = must_load(G_PREEMPT);
	ds_faulty st = {0};
	ds_heap fh = ds_heap_faulty(&st);
	const ds_heap *keep = g->heap;
	g->heap = &fh;
	for (int64_t work = 0; work < 2; work++)
		for (long n = 1;; n++) {
			st.fail_at = n;
			st.calls = 0;
			ds_bounds b;
			ds_err e;
			int rc = ds_bounds_compute(g, NULL, 0, work, &b, &e);
			assert_int_equal(st.live, 0);
			if (rc == DS_OK) {
				assert_int_equal(b.any, 17);
				break;
			}
			assert_int_equal(rc, DS_ENOMEM);
			assert_true(n < 100);
		}
	g->heap = keep;
	ds_graph_free(g);
}

/* The exact figures on the bundled graphs; an independent computation
 * gave lb_any at least these (issue 14), and ours are exactly them. */
static const struct {
	const char *file;
	int64_t any, phase;
} expected[] = {
	{"Conv_Case0.json", 353310, 349261},
	{"Conv_Case1.json", 523383, 510913},
	{"FlashAttention_Case0.json", 28115, 10636},
	{"FlashAttention_Case1.json", 107475, 35128},
	{"Matmul_Case0.json", 66449, 8192},
	{"Matmul_Case1.json", 525201, 32768},
};

static void check_bundled(const char *name, const char *path, ds_graph *g,
			  void *ud)
{
	(void)path;
	(void)ud;
	ds_bounds b = bounds_of(g, 0);
	print_message("%s: lb_any %lld, lb_phase %lld, critical path %lld, "
		      "busiest pipe %lld\n",
		      name, (long long)b.any, (long long)b.phase,
		      (long long)b.critical_path, (long long)b.pipe_load);
	assert_true(b.exact);
	assert_true(b.any >= b.phase && b.phase >= b.critical_path);
	assert_true(b.any >= b.pipe_load);
	for (size_t i = 0; i < sizeof expected / sizeof *expected; i++)
		if (strcmp(expected[i].file, name) == 0) {
			assert_int_equal(b.any, expected[i].any);
			assert_int_equal(b.phase, expected[i].phase);
		}
	check_fallback(g, &b);
	/* exact: the Ids do not matter */
	uint64_t seed = 20251201;
	int32_t *perm = test_shuffled(g->n, &seed);
	ds_graph *r = test_renumbered(g, perm, true, &seed);
	ds_bounds rb = bounds_of(r, 0);
	assert_int_equal(rb.any, b.any);
	assert_int_equal(rb.phase, b.phase);
	free(perm);
	ds_graph_free(r);
}

static void bundled(void **state)
{
	(void)state;
	assert_true(for_each_bundled(check_bundled, NULL) >= 1);
}

/* The public API: lb_any >= lb_phase, the latter as dansched_phase_bound
 * gives it. */
static void public_api(void **state)
{
	(void)state;
	dansched_graph *g;
	dansched_error e;
	const char *path = DS_SOURCE_DIR "/data/FlashAttention_Case0.json";
	if (dansched_graph_load(NULL, path, NULL, &g, &e))
		fail_msg("%s", e.message);
	int64_t any = 0, phase = 0, alone = 0;
	int exact = 0;
	assert_int_equal(dansched_any_bound(g, NULL, &any, &phase, &exact, &e),
			 DANSCHED_OK);
	assert_int_equal(dansched_phase_bound(g, NULL, &alone, &e),
			 DANSCHED_OK);
	assert_int_equal(any, 28115);
	assert_int_equal(phase, alone);
	assert_int_equal(exact, 1);
	assert_int_equal(dansched_any_bound(g, NULL, &any, NULL, NULL, &e),
			 DANSCHED_OK);
	assert_int_equal(any, 28115);
	dansched_graph_destroy(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hand_loads),
		cmocka_unit_test(hand_preemption),
		cmocka_unit_test(fallback),
		cmocka_unit_test(brute_force),
		cmocka_unit_test(out_of_memory),
		cmocka_unit_test(public_api),
		cmocka_unit_test(bundled),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
