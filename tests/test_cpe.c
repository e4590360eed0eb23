/* test_cpe.c: stage 3, critical path enhancement (ds_cpe.c).
 *
 * On every bundled graph (and on generated ones with tight memories, so
 * with many spills), starting from the free-first order placed by the
 * shared placer: the plan ds_cpe returns passes ds_replay, its extra DDR
 * traffic stays within the budget (never above the input's with budget
 * 0: spills may only be dropped), its peak_vstay within the peak budget
 * (never above the input's with budget 0), its makespan is never longer,
 * and the same input gives the same bytes out; a renumbered copy of each
 * bundled graph, with the same input plan renamed, gets about the same
 * makespan.  Tiny graphs check that double buffering emerges where memory
 * allows it and that a spill memory does not need is dropped; a failing
 * heap checks every error path. */
#include "test_util.h"

#include "ds_pipeline.h"
#include "ds_stage.h"

/* The input plans: free-first order, best fit, cheapest victims. */
static void input_plan(const ds_graph *g, ds_plan *p)
{
	ds_err e;
	int32_t *order = malloc((size_t)g->n * sizeof *order);
	assert_non_null(order);
	assert_int_equal(ds_order_free_first(g, order, &e), DS_OK);
	ds_place_opts po = {DS_BEST_FIT, DS_VICTIM_COST, 0};
	int rc = ds_place(g, order, &po, p, &e);
	if (rc)
		fail_msg("ds_place: %s", e.msg);
	free(order);
}

/* Runs ds_cpe on p with options o and checks everything the pass
 * guarantees; returns the output's figures. */
static void check_cpe_opts(const ds_graph *g, const ds_plan *p,
			   const ds_cpe_opts o, ds_figures *out)
{
	const double traffic = o.traffic_budget_pct, peak = o.peak_budget_pct;
	ds_figures in, f;
	must_replay(g, p, &in);
	ds_plan q;
	ds_err e;
	int rc = ds_cpe(g, p, &o, &q, &e);
	if (rc)
		fail_msg("%s: ds_cpe failed: %s", g->source, e.msg);
	must_replay(g, &q, &f);
	if ((double)f.extra_ddr >
	    (double)in.extra_ddr * (1 + traffic / 100) + 1e-9)
		fail_msg("%s: traffic %lld over the budget (input %lld)",
			 g->source, (long long)f.extra_ddr,
			 (long long)in.extra_ddr);
	/* dropped spills may lower it, nothing raises it */
	if (traffic == 0)
		assert_true(f.extra_ddr <= in.extra_ddr);
	assert_true(f.spills <= in.spills);
	if ((double)f.peak_vstay >
	    (double)in.peak_vstay * (1 + peak / 100) + 1e-9)
		fail_msg("%s: peak_vstay %lld over the budget (input %lld)",
			 g->source, (long long)f.peak_vstay,
			 (long long)in.peak_vstay);
	if (f.makespan > in.makespan)
		fail_msg("%s: makespan %lld longer than the input's %lld",
			 g->source, (long long)f.makespan,
			 (long long)in.makespan);
	/* determinism: the same input, the same plan */
	ds_plan q2;
	assert_int_equal(ds_cpe(g, p, &o, &q2, &e), DS_OK);
	assert_true(ds_plan_same(g, &q, &q2));
	ds_plan_free(g->heap, &q);
	ds_plan_free(g->heap, &q2);
	*out = f;
}

/* check_cpe_opts with the budgets, the rest default. */
static void check_cpe(const ds_graph *g, const ds_plan *p, double traffic,
		      double peak, ds_figures *out)
{
	ds_cpe_opts o = {.traffic_budget_pct = traffic, .peak_budget_pct = peak};
	check_cpe_opts(g, p, o, out);
}

/* ---- the bundled graphs ---- */

static void check_bundled(const char *name, const char *path, ds_graph *g,
			  void *ud)
{
	(void)ud;
	ds_plan p;
	input_plan(g, &p);
	ds_figures in, f5, f0;
	must_replay(g, &p, &in);
	check_cpe(g, &p, 5, 0, &f5);
	check_cpe(g, &p, 0, 0, &f0);
	/* the bundled graphs all leave room for overlap */
	if (f5.makespan >= in.makespan)
		fail_msg("%s: no improvement (%lld)", path,
			 (long long)in.makespan);
	/* renumbered, the same input plan renamed: about the same */
	uint64_t seed = 20251130;
	int32_t *perm = test_shuffled(g->n, &seed);
	ds_graph *r = test_renumbered(g, perm, false, &seed);
	for (int32_t i = 0; i < p.len; i++)
		if (p.order[i] < g->n)
			p.order[i] = perm[p.order[i]];
	ds_figures fr;
	check_cpe(r, &p, 5, 0, &fr);
	int64_t diff = fr.makespan - f5.makespan;
	if ((diff < 0 ? -diff : diff) * 100 > 3 * f5.makespan)
		fail_msg("%s: renumbered copy gets makespan %lld, the "
			 "original %lld", path, (long long)fr.makespan,
			 (long long)f5.makespan);
	print_message("%s: makespan %lld -> %lld (renumbered %lld)\n", name,
		      (long long)in.makespan, (long long)f5.makespan,
		      (long long)fr.makespan);
	free(perm);
	ds_graph_free(r);
	ds_plan_free(g->heap, &p);
}

static void bundled_graphs(void **state)
{
	(void)state;
	assert_true(for_each_bundled(check_bundled, NULL) >= 6);
}

/* The peak budget is spent only after rounds within the input's peak,
 * where that limit held CPE back, so a budget never makes the plan
 * longer: on the DLR plans of dan's pipeline, FlashAttention_Case0 gets
 * shorter with a 5% budget than without (on its DLR plan of 1,280 bytes,
 * before the pulled rounds: 35,295 and 32,766; a single phase at the
 * budget's limit got 32,670), and Conv_Case0 no longer gets longer (it
 * did: 444,269 against 443,054 without the budget; on its DLR plan of
 * 45,888 bytes, before DLR's packed placement, 443,054 and 442,520; on
 * the packed one of 41,480, 436,304 at 0, 5 and 50).  size_nodes: the
 * graph size CPE's budgets are for (ds_cpe_opts; 0: the graph's). */
static void budget_case(const char *file, int64_t size_nodes, int64_t want0,
			int64_t want5)
{
	ds_graph *g = load_bundled(file);
	ds_run_opts o;
	ds_run_opts_default(&o);
	o.stage = DS_STAGE_DLR;
	ds_plan p;
	ds_figures in, f[3];
	ds_err e;
	if (ds_run(g, &o, &p, &in, &e))
		fail_msg("%s", e.msg);
	const double peak[3] = {0, 5, 50};
	for (int k = 0; k < 3; k++) {
		ds_cpe_opts co = {.traffic_budget_pct = 5,
				  .peak_budget_pct = peak[k],
				  .size_nodes = size_nodes};
		check_cpe_opts(g, &p, co, &f[k]);
	}
	print_message("%s (size %lld): peak budget 0: %lld (peak %lld), "
		      "5: %lld (%lld), 50: %lld (%lld)\n",
		      file, (long long)size_nodes, (long long)f[0].makespan,
		      (long long)f[0].peak_vstay, (long long)f[1].makespan,
		      (long long)f[1].peak_vstay, (long long)f[2].makespan,
		      (long long)f[2].peak_vstay);
	assert_int_equal(f[0].makespan, want0);
	assert_int_equal(f[1].makespan, want5);
	assert_true(f[1].makespan <= f[0].makespan &&
		    f[2].makespan <= f[0].makespan);
	ds_plan_free(g->heap, &p);
	ds_graph_free(g);
}

static void peak_budget_pays(void **state)
{
	(void)state;
	budget_case("FlashAttention_Case0.json", 0, 34713, 32249);
	budget_case("Conv_Case0.json", 0, 436304, 436304);
}

/* On a graph too large for a relaxed round within CPE_RELAX_WORK, one
 * light round, so the peak budget is spent on a graph of any size:
 * FlashAttention_Case0's DLR plan, with the budgets sized for a graph of
 * 1,000,000 nodes, gets 33,048 cycles at a 5 % peak budget against
 * 34,713 without one (with no relaxed round, as before 2026-12-07,
 * 34,713 at both). */
static void peak_budget_large(void **state)
{
	(void)state;
	budget_case("FlashAttention_Case0.json", 1000000, 34713, 33048);
}

/* ---- generated graphs, tight memories: many spills ---- */

static void generated_graphs(void **state)
{
	(void)state;
	for (int kind = DS_GEN_MATMUL; kind <= DS_GEN_RANDOM; kind++) {
		for (uint64_t seed = 1; seed <= 3; seed++) {
			ds_caps caps;
			ds_caps_default(&caps);
			if (seed >= 2) {
				caps.cap[DS_L1] = 700;
				caps.cap[DS_UB] = 300;
			}
			if (seed == 3) {
				caps.cap[DS_L0A] = caps.cap[DS_L0B] = 200;
				caps.cap[DS_L0C] = 300;
			}
			ds_graph *g = NULL;
			ds_err e;
			if (ds_generate(ds_heap_std(), kind, 800, seed, &caps,
					&g, &e))
				fail_msg("ds_generate: %s", e.msg);
			ds_plan p;
			input_plan(g, &p);
			ds_figures f;
			check_cpe(g, &p, 5, 0, &f);
			check_cpe(g, &p, 0, 10, &f);
			ds_plan_free(g->heap, &p);
			ds_graph_free(g);
		}
	}
}

/* ---- double buffering emerges ---- */

#define NODE_BUF(id, op, buf)                                                \
	"{\"Id\":" #id ",\"Op\":\"" op "\",\"BufId\":" #buf                   \
	",\"Size\":128,\"Type\":\"L0A\"}"
#define NODE_OP(id, pipe, buf)                                               \
	"{\"Id\":" #id ",\"Op\":\"OP" #id "\",\"Pipe\":\"" pipe                \
	"\",\"Cycles\":100,\"Bufs\":[" #buf "]}"

/* Two load -> compute chains on L0A buffers of half its capacity.  The
 * input keeps both at offset 0, so the second load waits for the first
 * compute (makespan 400); with the second buffer moved to the other half,
 * the second load overlaps the first compute (300). */
static const char two_chains[] =
	"{\"Nodes\":[" NODE_BUF(0, "ALLOC", 1) "," NODE_OP(1, "MTE1", 1) ","
	NODE_OP(2, "CUBE", 1) "," NODE_BUF(3, "FREE", 1) ","
	NODE_BUF(4, "ALLOC", 2) "," NODE_OP(5, "MTE1", 2) ","
	NODE_OP(6, "CUBE", 2) "," NODE_BUF(7, "FREE", 2)
	"],\"Edges\":[[0,1],[1,2],[2,3],[0,3],[4,5],[5,6],[6,7],[4,7]]}";

static void double_buffering(void **state)
{
	(void)state;
	ds_graph *g = must_load(two_chains);
	int32_t order[8] = {0, 1, 2, 3, 4, 5, 6, 7};
	int64_t offset[2] = {0, 0};
	ds_plan p = {8, order, offset, 0, NULL};
	ds_figures in, f;
	must_replay(g, &p, &in);
	assert_int_equal(in.makespan, 400);
	check_cpe(g, &p, 0, 0, &f);
	assert_int_equal(f.makespan, 300);
	assert_int_equal(f.peak_vstay, 0);
	ds_graph_free(g);
}

/* ---- a spill that memory does not need is dropped ---- */

/* One UB buffer of half the capacity, used twice; the input spills it
 * between the uses (2 * 512 + 150 cycles each way), though it could stay:
 * makespan 100 + 1174 + 1174 + 100.  Kept resident, 200 and no traffic. */
static const char needless_spill[] =
	"{\"Nodes\":[{\"Id\":0,\"Op\":\"ALLOC\",\"BufId\":7,\"Size\":512,"
	"\"Type\":\"UB\"},{\"Id\":1,\"Op\":\"A\",\"Pipe\":\"VECTOR\","
	"\"Cycles\":100,\"Bufs\":[7]},{\"Id\":2,\"Op\":\"B\",\"Pipe\":"
	"\"VECTOR\",\"Cycles\":100,\"Bufs\":[7]},{\"Id\":3,\"Op\":\"FREE\","
	"\"BufId\":7,\"Size\":512,\"Type\":\"UB\"}],"
	"\"Edges\":[[0,1],[1,2],[2,3]]}";

/* ds_cpe from plan p under alloc_sweep: a valid plan with `spills`
 * spills (-1: any number), or none at all. */
typedef struct cpe_run {
	const ds_graph *g;
	const ds_plan *p;
	int64_t spills;
	ds_plan q;
} cpe_run;

static int cpe_call(void *ctx, ds_err *e)
{
	cpe_run *c = ctx;
	return ds_cpe(c->g, c->p, NULL, &c->q, e);
}

static void cpe_done(void *ctx, int rc)
{
	cpe_run *c = ctx;
	if (rc != DS_OK) {
		assert_null(c->q.order);
		return;
	}
	ds_figures f;
	must_replay(c->g, &c->q, &f);
	if (c->spills >= 0)
		assert_int_equal(f.spills, c->spills);
	ds_plan_free(c->g->heap, &c->q);
}

static void drops_spill(void **state)
{
	(void)state;
	ds_graph *g = must_load(needless_spill);
	int32_t order[6] = {0, 1, 4, 5, 2, 3};
	int64_t offset[1] = {0};
	ds_spill sp[1] = {{0, 512}};
	ds_plan p = {6, order, offset, 1, sp};
	ds_figures in, f;
	must_replay(g, &p, &in);
	assert_int_equal(in.makespan, 2548);
	assert_int_equal(in.extra_ddr, 1024);
	check_cpe(g, &p, 0, 0, &f);
	assert_int_equal(f.makespan, 200);
	assert_int_equal(f.spills, 0);
	assert_int_equal(f.extra_ddr, 0);
	/* every allocation may fail, the rebuild for fewer spills too */
	ds_faulty st = {0, 0, 0};
	ds_heap fh = ds_heap_faulty(&st);
	ds_graph *gf = NULL;
	ds_err e;
	assert_int_equal(ds_load_json_text(&fh, "needless", needless_spill,
					   sizeof needless_spill - 1, &g->caps,
					   &gf, &e),
			 DS_OK);
	cpe_run c = {.g = gf, .p = &p, .spills = 0};
	alloc_sweep(&st, &(sweep){cpe_call, cpe_done, &c});
	ds_graph_free(gf);
	ds_graph_free(g);
}

/* ---- refusals and defaults ---- */

static void needs_offsets(void **state)
{
	(void)state;
	ds_graph *g = must_load(two_chains);
	int32_t order[8] = {0, 1, 2, 3, 4, 5, 6, 7};
	ds_plan p = {8, order, NULL, 0, NULL}, q;
	ds_err e;
	assert_int_equal(ds_cpe(g, &p, NULL, &q, &e), DS_EINPUT);
	assert_null(q.order);
	/* an invalid input plan is refused, not improved */
	int64_t offset[2] = {0, 64};
	int32_t both[8] = {0, 4, 1, 2, 3, 5, 6, 7};
	ds_plan bad = {8, both, offset, 0, NULL};
	assert_int_equal(ds_cpe(g, &bad, NULL, &q, &e), DS_EPLAN);
	ds_graph_free(g);
}

static void null_options(void **state)
{
	(void)state;
	ds_graph *g = must_load(two_chains);
	int32_t order[8] = {0, 1, 2, 3, 4, 5, 6, 7};
	int64_t offset[2] = {0, 0};
	ds_plan p = {8, order, offset, 0, NULL}, q;
	ds_err e;
	assert_int_equal(ds_cpe(g, &p, NULL, &q, &e), DS_OK);
	ds_figures f;
	must_replay(g, &q, &f);
	assert_int_equal(f.makespan, 300);
	ds_plan_free(g->heap, &q);
	ds_graph_free(g);
}

/* ---- out of memory: every allocation may fail ---- */

static void out_of_memory(void **state)
{
	(void)state;
	ds_faulty st = {0, 0, 0};
	ds_heap fh = ds_heap_faulty(&st);
	ds_caps caps;
	ds_caps_default(&caps);
	caps.cap[DS_L1] = 700;
	caps.cap[DS_UB] = 300;
	ds_graph *g = NULL;
	ds_err e;
	assert_int_equal(ds_generate(&fh, DS_GEN_ATTENTION, 300, 7, &caps, &g,
				     &e),
			 DS_OK);
	ds_plan p;
	input_plan(g, &p);
	cpe_run c = {.g = g, .p = &p, .spills = -1};
	assert_true(alloc_sweep(&st, &(sweep){cpe_call, cpe_done, &c}) > 0);
	ds_plan_free(g->heap, &p);
	ds_graph_free(g);
	assert_int_equal(st.live, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(double_buffering),
		cmocka_unit_test(drops_spill),
		cmocka_unit_test(needs_offsets),
		cmocka_unit_test(null_options),
		cmocka_unit_test(peak_budget_pays),
		cmocka_unit_test(peak_budget_large),
		cmocka_unit_test(out_of_memory),
		cmocka_unit_test(generated_graphs),
		cmocka_unit_test(bundled_graphs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
