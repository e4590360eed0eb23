/* test_gen.c: the graph generator (ds_gen.c), and the fuzz regressions.
 *
 * Every kind at 1k and 10k nodes must load (pass ds_builder_finish), be
 * about the size asked for, follow the bundled graphs' conventions, fit
 * (ds_check_fits), admit a schedule with one live buffer per L0 memory,
 * be the same graph for the same seed and another for another seed, and
 * survive ds_write_json / ds_load_json unchanged.  Every file in
 * tests/fuzz_regress/ goes through its fuzz target's entry (named by the
 * file's prefix: json-, csv-, plan-) and must not crash. */
#include "test_util.h"

#include "../fuzz/fuzz_entry.h"
#include "ds_stage.h"

static const int kinds[] = {DS_GEN_MATMUL, DS_GEN_ATTENTION, DS_GEN_CONV,
			    DS_GEN_RANDOM};
static const char *const kind_names[] = {"matmul", "attention", "conv",
					 "random"};

static ds_graph *gen(int kind, int64_t nodes, uint64_t seed)
{
	ds_caps caps;
	ds_caps_default(&caps);
	ds_graph *g = NULL;
	ds_err e;
	int rc = ds_generate(ds_heap_std(), kind, nodes, seed, &caps, &g, &e);
	if (rc != DS_OK)
		fail_msg("%s %lld seed %llu: %d %s", kind_names[kind],
			 (long long)nodes, (unsigned long long)seed, rc, e.msg);
	assert_non_null(g);
	return g;
}

/* Same nodes, names, cycles, buffers, uses and edges (in input order). */
static bool same_graph(const ds_graph *a, const ds_graph *b)
{
	if (a->n != b->n || a->nbuf != b->nbuf || a->nedge != b->nedge)
		return false;
	for (int32_t v = 0; v < a->n; v++) {
		if (a->kind[v] != b->kind[v] || a->cycles[v] != b->cycles[v] ||
		    strcmp(a->ops[a->op[v]], b->ops[b->op[v]]) != 0 ||
		    (a->pipe[v] < 0) != (b->pipe[v] < 0) ||
		    (a->pipe[v] >= 0 &&
		     strcmp(a->pipes[a->pipe[v]], b->pipes[b->pipe[v]]) != 0) ||
		    a->buf[v] != b->buf[v] ||
		    a->use_off[v + 1] != b->use_off[v + 1])
			return false;
		for (int32_t k = a->use_off[v]; k < a->use_off[v + 1]; k++)
			if (a->buf_id[a->use[k]] != b->buf_id[b->use[k]])
				return false;
	}
	for (int32_t x = 0; x < a->nbuf; x++)
		if (a->buf_id[x] != b->buf_id[x] ||
		    a->buf_size[x] != b->buf_size[x] ||
		    a->buf_mem[x] != b->buf_mem[x])
			return false;
	for (int64_t k = 0; k < a->nedge; k++)
		if (a->esrc[k] != b->esrc[k] || a->edst[k] != b->edst[k])
			return false;
	return true;
}

/* The conventions ds_gen.c promises. */
static void check_conventions(const ds_graph *g)
{
	/* Ids are a topological order, FREEs last */
	for (int64_t k = 0; k < g->nedge; k++)
		assert_true(g->esrc[k] < g->edst[k]);
	int32_t first_free = g->n - g->nbuf;
	for (int32_t v = 0; v < g->n; v++)
		assert_int_equal(g->kind[v] == DS_FREE, v >= first_free);
	for (int32_t x = 0; x < g->nbuf; x++) {
		int32_t a = g->buf_alloc[x], f = g->buf_free[x];
		/* used, and first by an operation with an edge from ALLOC */
		assert_true(g->user_off[x + 1] > g->user_off[x]);
		int32_t u = g->user[g->user_off[x]];
		bool alloc_edge = false, free_edge = false;
		for (int32_t k = g->pred_off[u]; k < g->pred_off[u + 1]; k++)
			alloc_edge |= g->pred[k] == a;
		for (int32_t k = g->pred_off[f]; k < g->pred_off[f + 1]; k++)
			free_edge |= g->pred[k] == a;
		assert_true(alloc_edge);
		assert_true(free_edge);
		/* ... and the last user precedes the FREE by an edge */
		int32_t last = g->user[g->user_off[x + 1] - 1];
		bool last_edge = false;
		for (int32_t k = g->pred_off[f]; k < g->pred_off[f + 1]; k++)
			last_edge |= g->pred[k] == last;
		assert_true(last_edge);
	}
	/* no operation uses two buffers of one L0 memory */
	for (int32_t v = 0; v < g->n; v++) {
		int l0[DS_NMEM] = {0};
		for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++)
			l0[g->buf_mem[g->use[k]]]++;
		assert_true(l0[DS_L0A] <= 1 && l0[DS_L0B] <= 1 &&
			    l0[DS_L0C] <= 1);
	}
}

/* The emission order with every FREE right after its last predecessor:
 * it must keep one live buffer per L0 memory (the rule of the
 * peak-memory problem), and ds_place must turn it into a valid plan. */
static void check_schedulable(const ds_graph *g)
{
	const int32_t n = g->n, nops = n - g->nbuf;
	int32_t *off = calloc((size_t)nops + 2, sizeof *off);
	int32_t *last = malloc((size_t)n * sizeof *last);
	int32_t *byop = malloc((size_t)n * sizeof *byop);
	int32_t *order = malloc((size_t)n * sizeof *order);
	assert_non_null(off);
	assert_non_null(last);
	assert_non_null(byop);
	assert_non_null(order);
	/* the FREEs grouped by their last predecessor (a counting sort) */
	for (int32_t f = nops; f < n; f++) {
		int32_t p = 0;
		for (int32_t k = g->pred_off[f]; k < g->pred_off[f + 1]; k++)
			if (g->pred[k] > p)
				p = g->pred[k];
		assert_true(p < nops);
		last[f] = p;
		off[p + 2]++;
	}
	for (int32_t v = 0; v < nops; v++)
		off[v + 2] += off[v + 1];
	for (int32_t f = nops; f < n; f++)
		byop[off[last[f] + 1]++] = f;
	int32_t at = 0;
	for (int32_t v = 0; v < nops; v++) {
		order[at++] = v;
		for (int32_t k = v ? off[v] : 0; k < off[v + 1]; k++)
			order[at++] = byop[k];
	}
	assert_int_equal(at, n);
	ds_plan p = {n, order, NULL, 0, NULL};
	ds_replay_opts o = {.q1 = true};
	ds_figures f;
	ds_err e;
	int rc = ds_replay(g, &p, &o, &f, &e);
	if (rc)
		fail_msg("emission order, one live L0 buffer: %s", e.msg);
	ds_place_opts po = {DS_BEST_FIT, DS_VICTIM_COST, 0};
	ds_plan q;
	rc = ds_place(g, order, &po, &q, &e);
	if (rc)
		fail_msg("ds_place: %s", e.msg);
	rc = ds_replay(g, &q, NULL, &f, &e);
	if (rc)
		fail_msg("placed plan: %s", e.msg);
	ds_plan_free(g->heap, &q);
	free(order);
	free(byop);
	free(last);
	free(off);
}

static void check_kind(int kind, int64_t nodes)
{
	ds_graph *g = gen(kind, nodes, 1);
	/* about the size asked for: units are cut to what is left */
	assert_true(g->n >= nodes);
	if (g->n > nodes + nodes / 20 + 200)
		fail_msg("%s: %d nodes for %lld", kind_names[kind], g->n,
			 (long long)nodes);
	ds_err e;
	if (ds_check_fits(g, &e) != DS_OK)
		fail_msg("%s", e.msg);
	check_conventions(g);
	check_schedulable(g);

	/* deterministic per seed */
	ds_graph *same = gen(kind, nodes, 1), *other = gen(kind, nodes, 2);
	assert_true(same_graph(g, same));
	assert_false(same_graph(g, other));

	/* JSON round trip */
	char *dir = make_tmpdir();
	char path[512];
	snprintf(path, sizeof path, "%s/g.json", dir);
	assert_int_equal(ds_write_json(g, path, &e), DS_OK);
	ds_caps caps;
	ds_caps_default(&caps);
	ds_graph *back = NULL;
	if (ds_load_json(ds_heap_std(), path, &caps, &back, &e) != DS_OK)
		fail_msg("reload: %s", e.msg);
	assert_true(same_graph(g, back));
	rm_tree(dir);

	ds_graph_free(back);
	ds_graph_free(other);
	ds_graph_free(same);
	ds_graph_free(g);
}

static void kinds_1k(void **state)
{
	(void)state;
	for (int k = 0; k < 4; k++)
		check_kind(kinds[k], 1000);
}

static void kinds_10k(void **state)
{
	(void)state;
	for (int k = 0; k < 4; k++)
		check_kind(kinds[k], 10000);
}

/* Tiny requests still give one whole unit. */
static void tiny_requests(void **state)
{
	(void)state;
	for (int k = 0; k < 4; k++)
		for (int64_t n = 1; n <= 40; n += 13) {
			ds_graph *g = gen(kinds[k], n, 5);
			assert_true(g->n >= n);
			check_conventions(g);
			check_schedulable(g);
			ds_graph_free(g);
		}
}

/* Smaller capacities shrink the buffers; the graph still fits. */
static void small_caps(void **state)
{
	(void)state;
	ds_caps caps = {{64, 32, 16, 16, 16}};
	for (int k = 0; k < 4; k++) {
		ds_graph *g = NULL;
		ds_err e;
		int rc = ds_generate(ds_heap_std(), kinds[k], 2000, 3, &caps,
				     &g, &e);
		if (rc)
			fail_msg("%s: %s", kind_names[k], e.msg);
		assert_int_equal(ds_check_fits(g, &e), DS_OK);
		check_schedulable(g);
		ds_graph_free(g);
	}
}

static void bad_arguments(void **state)
{
	(void)state;
	ds_caps caps;
	ds_caps_default(&caps);
	ds_graph *g = (ds_graph *)&g;
	ds_err e;
	assert_int_equal(ds_generate(ds_heap_std(), 7, 100, 1, &caps, &g, &e),
			 DS_EINPUT);
	assert_null(g);
	assert_contains(e.msg, "kind");
	assert_int_equal(ds_generate(ds_heap_std(), DS_GEN_MATMUL, 0, 1, &caps,
				     &g, &e),
			 DS_EINPUT);
	assert_contains(e.msg, "nodes");
	caps.cap[DS_UB] = 2;
	assert_int_equal(ds_generate(ds_heap_std(), DS_GEN_RANDOM, 100, 1,
				     &caps, &g, &e),
			 DS_EINPUT);
	assert_contains(e.msg, "UB");
}

/* Every allocation failure is reported, and frees everything. */
static void out_of_memory(void **state)
{
	(void)state;
	ds_caps caps;
	ds_caps_default(&caps);
	for (int k = 0; k < 4; k++) {
		ds_faulty f = {0, 0, 0};
		ds_heap h = ds_heap_faulty(&f);
		ds_graph *g = NULL;
		ds_err e;
		assert_int_equal(ds_generate(&h, kinds[k], 300, 9, &caps, &g,
					     &e),
				 DS_OK);
		ds_graph_free(g);
		long calls = f.calls;
		for (long at = 1; at <= calls; at++) {
			ds_faulty ff = {at, 0, 0};
			ds_heap hh = ds_heap_faulty(&ff);
			int rc = ds_generate(&hh, kinds[k], 300, 9, &caps, &g,
					     &e);
			assert_int_equal(rc, DS_ENOMEM);
			assert_null(g);
			assert_int_equal(ff.live, 0);
		}
	}
}

/* ---- fuzz regressions ---- */

static bool has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static void fuzz_regressions(void **state)
{
	(void)state;
	const char *dir = DS_SOURCE_DIR "/tests/fuzz_regress";
	DIR *d = opendir(dir);
	if (!d)
		fail_msg("%s is missing: the fuzz regressions are NOT run", dir);
	char *tmp = make_tmpdir();
	struct dirent *de;
	int ran = 0;
	while ((de = readdir(d))) {
		const char *name = de->d_name;
		if (name[0] == '.')
			continue;
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, name);
		FILE *f = fopen(path, "rb");
		assert_non_null(f);
		static uint8_t data[FUZZ_MAX_INPUT];
		size_t len = fread(data, 1, sizeof data, f);
		fclose(f);
		/* a clean status of any kind is fine: no crash is the test */
		int rc;
		if (has_prefix(name, "json-"))
			rc = fuzz_json_one(data, len);
		else if (has_prefix(name, "csv-"))
			rc = fuzz_csv_one(tmp, "", data, len);
		else if (has_prefix(name, "plan-"))
			rc = fuzz_plan_one(tmp, "", data, len);
		else if (has_prefix(name, "order-"))
			rc = fuzz_order_one(ds_heap_std(), tmp, "", data, len);
		else
			continue; /* README and the like */
		assert_true(rc >= DS_OK && rc <= DS_ENOMEM);
		ran++;
	}
	closedir(d);
	rm_tree(tmp);
	print_message("%d fuzz regression inputs\n", ran);
	if (ran == 0)
		fail_msg("%s holds no json-, csv- or plan- input", dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kinds_1k),
		cmocka_unit_test(kinds_10k),
		cmocka_unit_test(tiny_requests),
		cmocka_unit_test(small_caps),
		cmocka_unit_test(bad_arguments),
		cmocka_unit_test(out_of_memory),
		cmocka_unit_test(fuzz_regressions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
