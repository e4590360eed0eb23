/* test_orders.c: orders from callers, right and wrong (issue 18).
 *
 * The original schedule of a graph whose Ids are not topological is the
 * Id order repaired (ds_order_id), the same as before where they are;
 * every scheduler plans renumbered copies of the bundled graphs and the
 * graph of the issue (reversed4), which once corrupted the heap; every
 * entry point taking an order (ds_place, ds_dlr, ds_cpe, ds_replay, the
 * public API) refuses a wrong one with a status and a message, on random
 * orders topological or not, with and without spills (the fuzz_order
 * entry, fuzz/fuzz_entry.h), also when any allocation fails.  With
 * DS_TEST_QUICK (CI's sanitizer pass) a part of the graphs and inputs. */
#include "test_util.h"

#include "../fuzz/fuzz_entry.h"
#include "ds_pipeline.h"

/* The graph of issue 18: Ids in reverse topological order. */
static const char reversed4[] = GRAPH(
	FREE(0, 0, 64, UB) "," OP(1, VADD, VECTOR, 5, "0") ","
	OP(2, COPY_IN, MTE2, 10, "0") "," ALLOC(3, 0, 64, UB),
	"[3,2],[2,1],[1,0]");

/* Runs scheduler s on g: the plan must pass the replay with its spills in
 * order, and give the figures ds_run reported. */
static void run_scheduler(const ds_graph *g, int s, const char *what)
{
	ds_run_opts o;
	ds_run_opts_default(&o);
	o.scheduler = s;
	ds_plan p;
	ds_figures f, r;
	ds_err e;
	if (ds_run(g, &o, &p, &f, &e) != DS_OK)
		fail_msg("%s, %s: %s", what, ds_sched_names[s], e.msg);
	ds_replay_opts strict = {.spill_order = true};
	if (ds_replay(g, &p, &strict, &r, &e) != DS_OK)
		fail_msg("%s, %s: %s", what, ds_sched_names[s], e.msg);
	assert_int_equal(r.makespan, f.makespan);
	assert_int_equal(r.extra_ddr, f.extra_ddr);
	ds_plan_free(g->heap, &p);
}

static void reversed_ids(void **state)
{
	(void)state;
	ds_graph *g = must_load(reversed4);
	int32_t order[4], want[4] = {3, 2, 1, 0}, ids[4] = {0, 1, 2, 3};
	ds_err e;
	assert_int_equal(ds_order_id(g, order, &e), DS_OK);
	assert_memory_equal(order, want, sizeof want);
	/* the Ids as an order: refused, not placed */
	ds_plan p;
	assert_int_equal(ds_place(g, ids, &(ds_place_opts){0, 0, 0}, &p, &e),
			 DS_EINPUT);
	assert_contains(e.msg, "placement: not a topological order");
	assert_int_equal(ds_dlr(g, ids, NULL, &p, &e), DS_EINPUT);
	assert_contains(e.msg, "dlr: not a topological order");
	for (int s = 0; s < DS_NSCHED; s++)
		run_scheduler(g, s, "reversed4");
	ds_graph_free(g);
}

/* Where the Ids are topological the original order is 0..n-1, as it
 * always was. */
static void id_order_kept(const char *name, const char *path, ds_graph *g,
			  void *ud)
{
	(void)path;
	(void)ud;
	int32_t *order = malloc((size_t)g->n * sizeof *order);
	assert_non_null(order);
	ds_err e;
	assert_int_equal(ds_order_id(g, order, &e), DS_OK);
	for (int32_t v = 0; v < g->n; v++)
		if (order[v] != v)
			fail_msg("%s: original order changed at %d", name, v);
	free(order);
}

static void id_order_unchanged(void **state)
{
	(void)state;
	assert_true(for_each_bundled(id_order_kept, NULL) >= 1);
}

/* Every scheduler on a renumbered copy: the baselines on every graph
 * (quick: under 10,000 nodes), dan on those under 5,000 (quick: 2,000;
 * test_pipeline runs dan on renumbered copies of all of them). */
static void renumbered_one(const char *name, const char *path, ds_graph *g,
			   void *ud)
{
	(void)path;
	uint64_t *seed = ud;
	bool quick = test_quick();
	if (quick && g->n >= 10000)
		return;
	int32_t *perm = test_shuffled(g->n, seed);
	ds_graph *r = test_renumbered(g, perm, true, seed);
	char what[256];
	snprintf(what, sizeof what, "%s renumbered", name);
	for (int s = 0; s < DS_NSCHED; s++)
		if (s != DS_SCHED_DAN || g->n < (quick ? 2000 : 5000))
			run_scheduler(r, s, what);
	ds_graph_free(r);
	free(perm);
}

static void renumbered_bundled(void **state)
{
	(void)state;
	uint64_t seed = 18;
	assert_true(for_each_bundled(renumbered_one, &seed) >= 1);
}

/* An order of g from random keys (Kahn: topological) or, when swaps > 0,
 * the Id order with that many random swaps. */
static void random_order(const ds_graph *g, uint64_t *seed, int swaps,
			 int32_t *order)
{
	if (swaps == 0) {
		uint8_t *key = malloc((size_t)g->n);
		assert_non_null(key);
		for (int32_t v = 0; v < g->n; v++)
			key[v] = (uint8_t)test_splitmix(seed);
		ds_err e;
		assert_int_equal(ds_order_kahn(g, fuzz_key, key, false, order,
					       &e),
				 DS_OK);
		free(key);
		return;
	}
	for (int32_t v = 0; v < g->n; v++)
		order[v] = v;
	for (int k = 0; k < swaps; k++) {
		int32_t i = (int32_t)(test_splitmix(seed) % (uint64_t)g->n);
		int32_t j = (int32_t)(test_splitmix(seed) % (uint64_t)g->n);
		int32_t t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
}

/* Random orders of a generated graph to the passes that take one: each
 * refuses exactly the orders ds_order_check refuses (DS_EINPUT), and what
 * they make from the others passes the replay. */
static void random_orders_passes(void **state)
{
	(void)state;
	ds_graph *g = must_generate(DS_GEN_ATTENTION, 300, 3);
	ds_err e;
	int32_t *order = malloc((size_t)g->n * sizeof *order);
	assert_non_null(order);
	uint64_t seed = 7;
	int tries = test_quick() ? 10 : 40, refused = 0;
	for (int t = 0; t < tries; t++) {
		random_order(g, &seed, t % 2 ? 1 + t / 2 : 0, order);
		int ck = ds_order_check(g, order, "test", &e);
		assert_true(ck == DS_OK || ck == DS_EINPUT);
		if (t % 2 == 0)
			assert_int_equal(ck, DS_OK);
		refused += ck == DS_EINPUT;
		ds_plan p;
		ds_figures f;
		int rc = ds_place(g, order, &(ds_place_opts){1, 1, 0}, &p, &e);
		assert_int_equal(rc, ck);
		if (rc == DS_OK) {
			assert_int_equal(ds_replay(g, &p, NULL, &f, &e), DS_OK);
			ds_plan_free(g->heap, &p);
		} else {
			assert_contains(e.msg, "placement: ");
		}
		rc = ds_dlr(g, order, NULL, &p, &e);
		assert_int_equal(rc, ck);
		if (rc == DS_OK) {
			assert_int_equal(ds_replay(g, &p, NULL, &f, &e), DS_OK);
			ds_plan_free(g->heap, &p);
		}
	}
	/* most swapped orders break an edge */
	assert_true(refused >= tries / 4);
	free(order);
	ds_graph_free(g);
}

/* Random inputs through the fuzz_order entry (which aborts on any
 * disagreement): orders topological or not, plans with and without
 * spills, changed, to the replay, CPE, the renumbering and the public
 * API. */
static void random_orders_entry(void **state)
{
	(void)state;
	char *dir = make_tmpdir();
	uint64_t seed = 2018;
	int runs = test_quick() ? 40 : 300, topo = 0;
	uint8_t data[160];
	for (int t = 0; t < runs; t++) {
		for (size_t i = 0; i < sizeof data; i++)
			data[i] = (uint8_t)test_splitmix(&seed);
		/* few raw entries: they are refused early */
		if (data[0] & 4 && t % 4)
			data[0] ^= 4;
		int rc = fuzz_order_one(ds_heap_std(), dir, "t", data,
					sizeof data);
		assert_true(rc == DS_OK || rc == DS_EINPUT);
		topo += rc == DS_OK;
	}
	print_message("%d random orders, %d topological\n", runs, topo);
	assert_true(topo > 0 && topo < runs);
	assert_int_equal(count_entries(dir), 0);
	rm_tree(dir);
}

/* The same entry with every allocation failing in turn: each failure is
 * a status, nothing leaks.  Inputs: a topological order with DLR's plan
 * renumbered and swapped, the Id order swapped (refused). */
static void random_orders_out_of_memory(void **state)
{
	(void)state;
	static const uint8_t topo[] = {
		0x21, 9, 200, 3, 77, 14, 5, 61, 88, 2, 150, 31, 4, 19, 250,
		7, 1, 66, 43, 12, 99, 8, 6, 240, 17, 33, 71, 5, 128, 3, 9,
		54, 2, 11, 190, 23, 1, 1, 1, 0, 1, 2, 2, 9, 30};
	static const uint8_t swapped[] = {0x08, 3, 2, 6, 9, 24, 5, 0};
	const struct {
		const uint8_t *d;
		size_t len;
	} in[] = {{topo, sizeof topo}, {swapped, sizeof swapped}};
	char *dir = make_tmpdir();
	for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
		ds_faulty st = {0, 0, 0};
		ds_heap fh = ds_heap_faulty(&st);
		int want = fuzz_order_one(&fh, dir, "f", in[i].d, in[i].len);
		long calls = st.calls, step = test_quick() ? 7 : 1, runs = 0;
		assert_int_equal(st.live, 0);
		for (long k = 1; k <= calls; k += step, runs++) {
			st.fail_at = st.calls + k;
			int rc = fuzz_order_one(&fh, dir, "f", in[i].d,
						in[i].len);
			assert_true(rc == want || rc == DS_ENOMEM);
			assert_int_equal(st.live, 0);
		}
		print_message("input %zu: %ld allocations, %ld failures "
			      "injected\n",
			      i, calls, runs);
		assert_true(calls > 50);
	}
	assert_int_equal(count_entries(dir), 0);
	rm_tree(dir);
}

/* A plan given with a graph of another shape is bad input, not a read
 * past its arrays. */
static void public_plan_other_graph(void **state)
{
	(void)state;
	char *dir = make_tmpdir();
	char path[4096];
	snprintf(path, sizeof path, "%s/r.json", dir);
	write_text(path, reversed4);
	dansched_graph *a = NULL, *b = NULL;
	dansched_plan *p = NULL;
	dansched_error err;
	assert_int_equal(dansched_graph_load(NULL, path, NULL, &a, &err), 0);
	assert_int_equal(dansched_generate(NULL, "matmul", 100, 1, NULL, &b,
					   &err),
			 0);
	assert_int_equal(dansched_schedule(b, NULL, &p, NULL, &err), 0);
	dansched_figures f;
	int64_t lb, id, off;
	assert_int_equal(dansched_evaluate(a, p, 0, &f, &err),
			 DANSCHED_BAD_INPUT);
	assert_contains(err.message, "the plan was made for another graph");
	assert_int_equal(dansched_phase_bound(a, p, &lb, &err),
			 DANSCHED_BAD_INPUT);
	assert_int_equal(dansched_plan_write(a, p, dir, "x", &err),
			 DANSCHED_BAD_INPUT);
	snprintf(path, sizeof path, "%s/x.svg", dir);
	assert_int_equal(dansched_write_memmap(a, p, path, &err),
			 DANSCHED_BAD_INPUT);
	assert_int_equal(dansched_write_trace(a, p, path, &err),
			 DANSCHED_BAD_INPUT);
	assert_int_equal(dansched_plan_offset(a, p, 0), -1);
	assert_int_equal(dansched_plan_spill(a, p, 0, &id, &off),
			 DANSCHED_BAD_INPUT);
	assert_int_equal(dansched_evaluate(b, p, 0, &f, &err), DANSCHED_OK);
	dansched_plan_destroy(p);
	dansched_graph_destroy(a);
	dansched_graph_destroy(b);
	assert_int_equal(count_entries(dir), 1); /* r.json */
	rm_tree(dir);
}

/* The wave order (ds_wave.c): B, the busiest pipe's (CUBE) second
 * operation, reads A's output and a load X that the input order puts
 * after two independent CONVs; the wave runs X and B right after A,
 * before them, in a topological order. */
static const char wave6[] = GRAPH(
	ALLOC(0, 0, 16, L1) "," OP(1, COPY_IN, MTE2, 10, "0") ","
	ALLOC(2, 1, 16, L1) "," OP(3, CONV, CUBE, 50, "1,0") ","
	FREE(4, 0, 16, L1) "," ALLOC(5, 2, 16, L1) ","
	OP(6, CONV, CUBE, 50, "2") "," FREE(7, 2, 16, L1) ","
	ALLOC(8, 3, 16, L1) "," OP(9, CONV, CUBE, 50, "3") ","
	FREE(10, 3, 16, L1) "," ALLOC(11, 4, 16, L1) ","
	OP(12, COPY_IN, MTE2, 10, "4") "," ALLOC(13, 5, 16, L1) ","
	OP(14, CONV, CUBE, 50, "5,1,4") "," FREE(15, 1, 16, L1) ","
	FREE(16, 4, 16, L1) "," FREE(17, 5, 16, L1),
	"[0,1],[1,3],[2,3],[3,4],[5,6],[6,7],[8,9],[9,10],[11,12],[12,14],"
	"[13,14],[3,14],[14,15],[14,16],[14,17]");

/* The wave order of g's Id order (n nodes, at most 32) into out, a
 * topological order, and each node's place in it into pos. */
static void wave_of_ids(const ds_graph *g, int32_t n, int32_t *out,
			int32_t *pos)
{
	int32_t order[32];
	ds_err e;
	assert_true(n == g->n && n <= 32);
	assert_int_equal(ds_order_id(g, order, &e), DS_OK);
	assert_int_equal(ds_wave_order(g, order, out, &e), DS_OK);
	assert_int_equal(ds_order_check(g, out, "wave", &e), DS_OK);
	for (int32_t i = 0; i < n; i++)
		pos[out[i]] = i;
}

static void wave_pulls_consumer(void **state)
{
	(void)state;
	ds_graph *g = must_load(wave6);
	int32_t out[18], pos[18];
	wave_of_ids(g, 18, out, pos);
	assert_true(pos[3] < pos[12] && pos[12] < pos[14]);
	assert_true(pos[14] < pos[6] && pos[14] < pos[9]);
	ds_graph_free(g);
}

/* The wave order moves up a load slow for its size (ds_wave.c,
 * wave_hoist_keys): S (node 8, 90 cycles for 8 bytes) feeds the second
 * CONV with N (node 6, 64 cycles for 32 bytes, not slow enough); S runs
 * before N, but not before the first CONV: there, with the first CONV's
 * 72-byte input and 32-byte output live, its 8 bytes would pass the
 * order's peak (104, at the second CONV). */
static const char hoist14[] = GRAPH(
	ALLOC(0, 0, 72, L1) "," OP(1, COPY_IN, MTE2, 64, "0") ","
	ALLOC(2, 1, 32, L1) "," OP(3, CONV, CUBE, 400, "0,1") ","
	FREE(4, 0, 72, L1) "," ALLOC(5, 4, 32, L1) ","
	OP(6, COPY_IN, MTE2, 64, "4") "," ALLOC(7, 2, 8, L1) ","
	OP(8, COPY_IN, MTE2, 90, "2") "," ALLOC(9, 3, 32, L1) ","
	OP(10, CONV, CUBE, 400, "1,4,2,3") "," FREE(11, 1, 32, L1) ","
	FREE(12, 4, 32, L1) "," FREE(13, 2, 8, L1) ","
	FREE(14, 3, 32, L1),
	"[0,1],[1,3],[2,3],[3,4],[5,6],[6,10],[7,8],[8,10],[3,10],[9,10],"
	"[10,11],[10,12],[10,13],[10,14]");

static void wave_hoists_slow_load(void **state)
{
	(void)state;
	ds_graph *g = must_load(hoist14);
	int32_t out[15], pos[15];
	wave_of_ids(g, 15, out, pos);
	assert_true(pos[3] < pos[8] && pos[8] < pos[6]);
	assert_int_equal(ds_order_peak(g, out, NULL), 104);
	ds_graph_free(g);
}

/* The tail order (ds_tail.c) of g's DLR plan order (stage DLR at the
 * default options) into out: a topological order; *changed as it says. */
static void tail_of_dlr(const ds_graph *g, int32_t *out, bool *changed)
{
	ds_run_opts o;
	ds_run_opts_default(&o);
	o.stage = DS_STAGE_DLR;
	ds_plan p;
	ds_figures f;
	ds_err e;
	if (ds_run(g, &o, &p, &f, &e) != DS_OK)
		fail_msg("dlr: %s", e.msg);
	int32_t *order = test_graph_order(g, &p, 1);
	memcpy(out, order, (size_t)g->n * sizeof *out);
	assert_int_equal(ds_tail_order(g, order, out, changed, &e), DS_OK);
	if (ds_order_check(g, out, "tail", &e) != DS_OK)
		fail_msg("%s", e.msg);
	free(order);
	ds_plan_free(g->heap, &p);
}

/* FlashAttention_Case0: one rise (the next rows' Q load after the last
 * V loads); the tail order keeps the order's peak within CPE's budget
 * over DLR's plan (5,132 + 5 %: 5,388), the backbone that makes its final
 * plan 30,028 cycles (test_pipeline). */
static void tail_order_flash(void **state)
{
	(void)state;
	ds_graph *g = load_bundled("FlashAttention_Case0.json");
	int32_t *out = malloc((size_t)g->n * sizeof *out);
	assert_non_null(out);
	bool changed;
	tail_of_dlr(g, out, &changed);
	assert_true(changed);
	assert_int_equal(ds_order_peak(g, out, NULL), 5388);
	free(out);
	ds_graph_free(g);
}

/* A generated graph (random, 5,000 nodes, seed 4, as scripts/losses.py
 * makes it) whose tail order once put a node its tail's sort left
 * without a class before a predecessor that had one (tl_rank's last
 * pass was for FREEs only): DLR refused the order and the run failed. */
static void tail_order_generated(void **state)
{
	(void)state;
	ds_graph *g = must_generate(DS_GEN_RANDOM, 5000, 4);
	int32_t *out = malloc((size_t)g->n * sizeof *out);
	assert_non_null(out);
	bool changed;
	tail_of_dlr(g, out, &changed);
	assert_true(changed);
	free(out);
	ds_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reversed_ids),
		cmocka_unit_test(id_order_unchanged),
		cmocka_unit_test(random_orders_passes),
		cmocka_unit_test(random_orders_entry),
		cmocka_unit_test(random_orders_out_of_memory),
		cmocka_unit_test(public_plan_other_graph),
		cmocka_unit_test(renumbered_bundled),
		cmocka_unit_test(wave_pulls_consumer),
		cmocka_unit_test(wave_hoists_slow_load),
		cmocka_unit_test(tail_order_flash),
		cmocka_unit_test(tail_order_generated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
