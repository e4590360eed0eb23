/* test_baseline.c: the baseline schedulers of the benchmark table.
 *
 * For every bundled graph and every baseline (original, free-first, lpmf,
 * cp-list, vpux): the plan passes the evaluator, a second run gives the
 * same bytes, the orders that gate L0 ALLOCs keep the one-live rule, and
 * the makespan is at least lb_any. */
#include "test_util.h"

#include "ds_pipeline.h"

static void check_bundled(const char *name, const char *path, ds_graph *g,
			  void *ud)
{
	(void)name;
	(void)ud;
	ds_err e;
	ds_bounds bd; /* lb_any holds for every plan */
	if (ds_bounds_compute(g, NULL, 0, 0, &bd, &e))
		fail_msg("%s: %s", path, e.msg);
	for (int s = 0; s < DS_NSCHED; s++) {
		if (s == DS_SCHED_DAN)
			continue;
		ds_run_opts o;
		ds_run_opts_default(&o);
		o.scheduler = s;
		ds_plan a, b;
		ds_figures fa, fb;
		if (ds_run(g, &o, &a, &fa, &e) || ds_run(g, &o, &b, &fb, &e))
			fail_msg("%s, %s: %s", path, ds_sched_names[s], e.msg);
		/* ds_run replays every plan; replay once more here so that the
		 * test does not rest on that */
		ds_figures f;
		ds_replay_opts ro = {0};
		if (ds_replay(g, &a, &ro, &f, &e))
			fail_msg("%s, %s: invalid plan: %s", path,
				 ds_sched_names[s], e.msg);
		assert_int_equal(f.makespan, fa.makespan);
		if (f.makespan < bd.any)
			fail_msg("%s, %s: makespan %lld under lb_any %lld",
				 path, ds_sched_names[s], (long long)f.makespan,
				 (long long)bd.any);
		if (!ds_plan_same(g, &a, &b))
			fail_msg("%s, %s: two runs differ", path,
				 ds_sched_names[s]);
		/* free-first, lpmf and vpux gate L0 ALLOCs: their order alone
		 * keeps one live buffer per L0 memory */
		if (s == DS_SCHED_FREE_FIRST || s == DS_SCHED_LPMF ||
		    s == DS_SCHED_VPUX) {
			int32_t *order = test_graph_order(g, &a, 1);
			ds_plan op = {g->n, order, NULL, 0, NULL};
			ds_replay_opts q1 = {.q1 = true};
			if (ds_replay(g, &op, &q1, &f, &e))
				fail_msg("%s, %s: one-live rule: %s", path,
					 ds_sched_names[s], e.msg);
			free(order);
		}
		ds_plan_free(g->heap, &a);
		ds_plan_free(g->heap, &b);
	}
}

static void bundled_graphs(void **state)
{
	(void)state;
	assert_true(for_each_bundled(check_bundled, NULL) > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bundled_graphs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
