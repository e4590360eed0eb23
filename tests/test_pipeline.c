/* test_pipeline.c: dan end to end (ds_pipeline.c), as the CLI runs it.
 *
 * On every bundled graph, with default options, the stage figures the
 * issues set: the MPAS order's peak_vstay (one live buffer per L0 memory)
 * at or under the best published one, the DLR plan's extra DDR traffic at
 * or under the best published one, the final plan's makespan under the
 * best published one, its traffic within the 5% budget over DLR's and its
 * peak not above DLR's; every stage's plan passes ds_replay (ds_run checks
 * it, this test replays the final one again).  A renumbered copy of each
 * graph gets the same peak and beats or equals the best published traffic
 * and makespan (../shared/published.csv); the exact figures of the
 * originals are the README's (the golden test), and the final ones of the
 * two matmuls are held here too (aged_finals).  Where dan is
 * still short of a figure, the test holds it to what it reaches and says
 * so.  On generated graphs: more effort never longer, its runner-up, a
 * traffic budget's plan not beaten by budget 0's (exact figures).  Every
 * allocation failure of the pipeline is reported, and leaks nothing.
 * With DS_TEST_QUICK (CI's sanitizer pass) only the graphs under 10,000
 * nodes run. */
#include "test_util.h"

#include "ds_pipeline.h"

/* The best published figures (the issues' tables); the traffic is the
 * figure the DLR issue asks where it asks more (Matmul_Case1: 230,400,
 * against 316,672 published). */
static const struct {
	const char *file;
	int64_t peak, traffic, makespan;
	int64_t traffic_known; /* what DLR reaches where short, else 0 */
} published[] = {
	{"Conv_Case0.json", 6912, 46872, 476530, 0},
	{"Conv_Case1.json", 11631, 44242, 1026586, 0},
	{"FlashAttention_Case0.json", 4498, 3584, 44956, 0},
	{"FlashAttention_Case1.json", 7586, 32512, 164166, 0},
	{"Matmul_Case0.json", 9216, 12416, 140398, 0},
	{"Matmul_Case1.json", 34816, 230400, 1683725, 0},
};

/* Final figures held exactly where CPE's backbone is DLR's order placed
 * again with aged victims (ds_backbone.c, ds_backbone_choose), Matmul_Case0's
 * with its accumulators staggered (ds_dlr_stagger.c), CPE may spend its
 * peak budget and retime double-buffers streams (ds_retime.c); with
 * DLR's own plan as the backbone, none of these, they were
 * Matmul_Case0 93,962 at 11,776 and Matmul_Case1 995,136 at 230,400
 * (aged backbone alone: 93,040 at 11,648 and 906,544 at 231,296; before
 * the staggered backbone Matmul_Case0 was 93,018 at 11,648);
 * Conv_Case1's backbone is the wave order (ds_wave.c) placed with aged
 * victims (602,490 at 5,936 with the aged backbone; 582,161 at 4,664
 * before the wave order moved its loads slow for their size up, 564,209
 * at 5,304 before the canonical rank).  Retime's readiness phase
 * (ds_retime.c, ready_phase) puts Matmul_Case0's reloads in the order
 * their tiles are needed: 87,470 before it (Matmul_Case1 905,744).
 * Matmul_Case0 was 87,306 at 11,776 before its
 * staggered lanes' last accumulators started together, placed at
 * STAGGER_TIE_PCT (ds_backbone.c; 86,859 at 11,904 with that alone),
 * and 86,152 at 12,032 before, in the reload phase, an accumulator that
 * frees no input ran after the next one that frees one
 * (ds_dlr_stagger.c, sg_delay).  Conv_Case0's backbone is DLR's order
 * with its groups of accumulators relayed (ds_dlr_stagger.c, rl_): 436,519
 * at 47,424 before.  Matmul_Case1 was 905,682 at 231,552 while the
 * structural rank broke its ties among alike nodes by Id (DLR's traffic
 * 230,400).  Before CPE and retiming ran again on each other's plans
 * (ds_chain.c, cpe_retime_rounds; graphs of at most 20,000 nodes):
 * Matmul_Case0 85,506 and Conv_Case0 413,994 at the same traffic; before
 * the readiness phase's line windows (ds_retime_phase.c; removed since,
 * the later passes reaching the same plans) Conv_Case0 413,139; before
 * the backbone's pulls (ds_backbone.c, backbone_pulled) 411,453 at
 * 47,232; before DLR's packed placement (ds_pack.c; ds_dlr_stage.c,
 * dlr_packed: DLR's figure 41,480 bytes, was 45,888) 408,081 at 47,232,
 * and with it, before retime's rotations
 * fitting the cap by cycles per byte (ds_retime_phase.c, rot_select),
 * 410,524 at 41,472; before the tail's spills planned again
 * (ds_replan.c) 405,466 at 43,008, 401,836 before its window; before
 * the spill-separated uses of the finished plan were pulled together
 * (ds_window.c) 398,410.  Matmul_Case0 was 85,347 at 12,032 before CPE's
 * gang mode ran at the default effort (ds_cpe.c). */
static const struct {
	const char *file;
	int64_t makespan, traffic;
} aged_finals[] = {
	{"Matmul_Case0.json", 85415, 11776},
	{"Matmul_Case1.json", 905813, 231680},
	{"Conv_Case1.json", 561799, 5218},
	{"Conv_Case0.json", 394888, 43008},
};

/* Figures held exactly where DLR's plan is placed again from orders
 * that pull spill-separated uses together (ds_pipeline.c, dlr_pulled),
 * then CPE runs on the aged placement whose replay is the shorter.
 * Before the pulled orders:
 * FlashAttention_Case1's DLR figure 21,504 and its final plan 143,193
 * cycles (143,130 with the second tolerance); FlashAttention_Case0's DLR
 * figure 1,280 and 32,766 cycles (31,981 with the second tolerance),
 * whose gain comes from the undirected round.  FlashAttention_Case1's
 * final plan was 117,972 before retime's readiness phase (ds_retime.c,
 * ready_phase) placed its occupancies where their addresses were free
 * first.  FlashAttention_Case0's final plan was 31,673 cycles before
 * the tail order's backbone (ds_tail.c; ds_backbone.c, backbone_tail);
 * FlashAttention_Case1's 117,227 before CPE and retiming ran again on
 * each other's plans (cpe_retime_rounds). */
static const struct {
	const char *file;
	int64_t dlr_traffic, makespan, traffic;
} pulled_finals[] = {
	{"FlashAttention_Case1.json", 20224, 115378, 20224},
	{"FlashAttention_Case0.json", 1024, 30028, 1024},
};

/* DLR's figures held exactly where its plan is placed packed (ds_pack.c;
 * ds_pipeline.c, dlr_packed): Conv_Case0's was 45,888 bytes in 37
 * spills, most of its early spills made for want of one hole large
 * enough. */
static const struct {
	const char *file;
	int64_t dlr_traffic, dlr_spills;
} packed_dlr[] = {
	{"Conv_Case0.json", 41480, 34},
};

/* The figures of each stage, from the progress callback. */
typedef struct stages {
	ds_figures mpas, dlr, retime, cpe; /* cpe: the final plan's */
	int seen;
} stages;

static void on_stage(void *ud, const char *stage, double seconds,
		     const ds_figures *f)
{
	(void)seconds;
	stages *s = ud;
	if (!strcmp(stage, "mpas"))
		s->mpas = *f, s->seen |= 1;
	else if (!strcmp(stage, "dlr"))
		s->dlr = *f, s->seen |= 2;
	else if (!strcmp(stage, "cpe"))
		s->cpe = *f, s->seen |= 4;
	else if (!strcmp(stage, "retime"))
		s->retime = *f, s->seen |= 8;
}

/* The best (smallest) extra_ddr and makespan published for graph file
 * name ("Conv_Case0.json") in ../shared/published.csv; fails the test when
 * the file or the case is missing. */
static void published_best(const char *name, int64_t *ddr, int64_t *makespan)
{
	char *text = slurp(DS_SOURCE_DIR "/../shared/published.csv");
	if (!text)
		fail_msg("%s: cannot read " DS_SOURCE_DIR
			 "/../shared/published.csv",
			 name);
	size_t len = strlen(name) - strlen(".json");
	*ddr = *makespan = INT64_MAX;
	/* case,source,extra_ddr,makespan,spills,note */
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *c1 = strchr(line, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
		if (!c2 || (size_t)(c1 - line) != len || strncmp(line, name, len))
			continue;
		char *end;
		long long d = strtoll(c2 + 1, &end, 10);
		long long m = *end == ',' ? strtoll(end + 1, NULL, 10) : 0;
		if (d > 0 && d < *ddr)
			*ddr = d;
		if (m > 0 && m < *makespan)
			*makespan = m;
	}
	free(text);
	if (*ddr == INT64_MAX || *makespan == INT64_MAX)
		fail_msg("%s: no published figures", name);
}

/* Runs dan with default options; the final plan must replay to the
 * figures the last stage reported. */
static void run_dan(const ds_graph *g, stages *s)
{
	ds_run_opts o;
	ds_run_opts_default(&o);
	o.progress = on_stage;
	o.progress_ud = s;
	memset(s, 0, sizeof *s);
	ds_plan p;
	ds_figures f, again;
	ds_err e;
	if (ds_run(g, &o, &p, &f, &e))
		fail_msg("%s: %s", g->source, e.msg);
	assert_int_equal(s->seen, 15);
	ds_replay_opts ro = {.q1 = false};
	if (ds_replay(g, &p, &ro, &again, &e))
		fail_msg("%s: the final plan does not replay: %s", g->source,
			 e.msg);
	/* lb_any holds for every plan: each stage's */
	ds_bounds bd;
	if (ds_bounds_compute(g, NULL, 0, 0, &bd, &e))
		fail_msg("%s: %s", g->source, e.msg);
	assert_true(bd.any <= s->mpas.makespan && bd.any <= s->dlr.makespan &&
		    bd.any <= s->cpe.makespan);
	assert_int_equal(again.makespan, s->cpe.makespan);
	assert_int_equal(again.extra_ddr, s->cpe.extra_ddr);
	assert_int_equal(f.makespan, s->cpe.makespan);
	ds_plan_free(g->heap, &p);
}

static void check_bundled(const char *name, const char *path, ds_graph *g,
			  void *ud)
{
	(void)path;
	(void)ud;
	if (test_quick() && g->n > 10000) {
		print_message("%s: skipped (DS_TEST_QUICK)\n", name);
		return;
	}
	stages s;
	run_dan(g, &s);
	print_message("%s: mpas peak %lld; dlr traffic %lld spills %lld; "
		      "final makespan %lld at traffic %lld\n",
		      name, (long long)s.mpas.peak_vstay,
		      (long long)s.dlr.extra_ddr, (long long)s.dlr.spills,
		      (long long)s.cpe.makespan, (long long)s.cpe.extra_ddr);
	/* budgets: traffic and peak within 5% of DLR's */
	assert_true(s.cpe.extra_ddr * 100 <= s.dlr.extra_ddr * 105);
	assert_true(s.cpe.peak_vstay * 100 <= s.dlr.peak_vstay * 105);
	assert_true(s.cpe.makespan <= s.dlr.makespan);
	for (size_t i = 0; i < sizeof published / sizeof published[0]; i++) {
		if (strcmp(published[i].file, name))
			continue;
		assert_true(s.mpas.peak_vstay <= published[i].peak);
		int64_t t = published[i].traffic;
		if (s.dlr.extra_ddr > t) {
			if (s.dlr.extra_ddr > published[i].traffic_known)
				fail_msg("%s: extra_ddr %lld above %lld", name,
					 (long long)s.dlr.extra_ddr,
					 (long long)t);
			print_message("%s: extra_ddr %lld, short of the "
				      "figure %lld (known gap)\n",
				      name, (long long)s.dlr.extra_ddr,
				      (long long)t);
		}
		assert_true(s.cpe.makespan < published[i].makespan);
	}
	for (size_t i = 0; i < sizeof aged_finals / sizeof aged_finals[0]; i++)
		if (!strcmp(aged_finals[i].file, name)) {
			assert_int_equal(s.cpe.makespan, aged_finals[i].makespan);
			assert_int_equal(s.cpe.extra_ddr, aged_finals[i].traffic);
		}
	for (size_t i = 0; i < sizeof pulled_finals / sizeof pulled_finals[0];
	     i++)
		if (!strcmp(pulled_finals[i].file, name)) {
			assert_int_equal(s.dlr.extra_ddr,
					 pulled_finals[i].dlr_traffic);
			assert_int_equal(s.cpe.makespan,
					 pulled_finals[i].makespan);
			assert_int_equal(s.cpe.extra_ddr,
					 pulled_finals[i].traffic);
		}
	for (size_t i = 0; i < sizeof packed_dlr / sizeof packed_dlr[0]; i++)
		if (!strcmp(packed_dlr[i].file, name)) {
			assert_int_equal(s.dlr.extra_ddr,
					 packed_dlr[i].dlr_traffic);
			assert_int_equal(s.dlr.spills, packed_dlr[i].dlr_spills);
		}
	/* every point published on the graph (../shared/published.csv)
	 * beaten or equalled: DLR's traffic, the final makespan */
	int64_t best_ddr, best_makespan;
	published_best(name, &best_ddr, &best_makespan);
	assert_true(s.dlr.extra_ddr <= best_ddr);
	assert_true(s.cpe.makespan <= best_makespan);
	/* a renumbered copy (Ids and BufIds shuffled): the same figures at
	 * each stage (Matmul_Case0's copy had DLR at 12,544 bytes, short of
	 * the best published 12,416, until the structural rank) */
	uint64_t seed = 20251130;
	int32_t *perm = test_shuffled(g->n, &seed);
	ds_graph *r = test_renumbered(g, perm, true, &seed);
	stages rs;
	run_dan(r, &rs);
	print_message("%s renumbered: mpas peak %lld; dlr traffic %lld; cpe "
		      "makespan %lld\n",
		      name, (long long)rs.mpas.peak_vstay,
		      (long long)rs.dlr.extra_ddr, (long long)rs.cpe.makespan);
	assert_int_equal(rs.mpas.peak_vstay, s.mpas.peak_vstay);
	assert_int_equal(rs.dlr.extra_ddr, s.dlr.extra_ddr);
	assert_int_equal(rs.cpe.makespan, s.cpe.makespan);
	assert_int_equal(rs.cpe.extra_ddr, s.cpe.extra_ddr);
	free(perm);
	ds_graph_free(r);
}

static void bundled_graphs(void **state)
{
	(void)state;
	assert_true(for_each_bundled(check_bundled, NULL) >= 1);
}

/* dan's final makespan and traffic on g at effort N. */
static void run_effort(const ds_graph *g, int64_t effort, ds_figures *f)
{
	ds_run_opts o;
	ds_run_opts_default(&o);
	o.mpas.effort = o.dlr.effort = o.cpe.effort = o.retime.effort = effort;
	*f = must_plan_figures(g, &o);
}

/* dan's final figures at effort 1 (*one) and 2 (*two) on the generated
 * matmul graph of about nodes nodes (seed). */
static void run_generated_efforts(int64_t nodes, uint64_t seed,
				  ds_figures *one, ds_figures *two)
{
	ds_graph *g = must_generate(DS_GEN_MATMUL, nodes, seed);
	run_effort(g, 1, one);
	run_effort(g, 2, two);
	ds_graph_free(g);
}

/* With more effort CPE and retime also run from the backbone the chosen
 * one replaced (ds_chain.c, cpe_runner_up): on this generated graph
 * (`dansched gen --kind matmul --nodes 1000 --seed 3`) the plan is
 * 44,940 cycles at effort 1 and 44,719 at effort 2, 44,940 at
 * effort 2 without the runner-up (44,988, 44,867 and 44,988 before CPE's
 * gang mode ran at every effort).  (`--nodes 800 --seed 2` showed it,
 * 26,148 against 26,013, until its parts' plan came to be kept where it
 * beats the whole graph's on every figure, ds_parts.c: 26,013 at effort
 * 1 too; then `--nodes 1000 --seed 2`, 29,754 against 29,578, until the
 * grouped plan of its parts, ds_parts.c, came to 28,995 at both.) */
static void more_effort_runner_up(void **state)
{
	(void)state;
	ds_figures one, two;
	run_generated_efforts(1000, 3, &one, &two);
	assert_int_equal(one.makespan, 44940);
	assert_int_equal(two.makespan, 44719);
	assert_true(two.extra_ddr <= one.extra_ddr);
}

/* CPE's gang mode (ds_cpe.c, ds_cpe_list.c: operations whose L0
 * operands are ready placed ahead of the backbone's reservations): on
 * `dansched gen --kind attention --nodes 800 --seed 4` the plan is 17,644
 * cycles, 18,175 without the gang mode, and the same figures on two
 * renumbered copies (measured 2026-12-07). */
static void gangs(void **state)
{
	(void)state;
	ds_graph *g = must_generate(DS_GEN_ATTENTION, 800, 4);
	ds_figures f;
	run_effort(g, 1, &f);
	assert_int_equal(f.makespan, 17644);
	ds_graph_free(g);
}

/* More effort never keeps a longer plan (ds_pipeline.c, floor_opts):
 * on this generated graph (`dansched gen --kind matmul --nodes 2000
 * --seed 5`) the effort-2 pipeline alone ends at 108,408 cycles and
 * 18,176 bytes, the default's at 107,184 and 17,920, so the default's
 * plan is kept.  (Conv_Case0 was the case until retime's rotations ran
 * before its local search too, 416,540 at effort 2 against 416,511;
 * then `--seed 4`, 49,004 against 48,621, until its parts' plan came to
 * be kept at effort 2 too, ds_parts.c.) */
static void more_effort_never_longer(void **state)
{
	(void)state;
	/* not in the sanitizer pass (near 10 minutes): the floor's code runs
	 * there in more_effort_runner_up */
	if (test_quick())
		return;
	ds_figures one, two;
	run_generated_efforts(2000, 5, &one, &two);
	assert_int_equal(one.makespan, 107184);
	assert_int_equal(two.makespan, 107184);
	assert_int_equal(two.extra_ddr, one.extra_ddr);
}

/* dan's final figures on g at traffic budget pct. */
static void run_budget(const ds_graph *g, double pct, ds_figures *f)
{
	ds_run_opts o;
	ds_run_opts_default(&o);
	o.cpe.traffic_budget_pct = pct;
	*f = must_plan_figures(g, &o);
}

/* A traffic budget's plan is not beaten on every figure by CPE's plan at
 * budget 0 (ds_pipeline.c, budget_floor), and not longer than the plan
 * at the ladder's budget below it (ladder_floor): the makespan does not
 * rise along budgets 0, 5 and 25.  On `dansched gen --kind matmul
 * --nodes 1500 --seed 1` the budget's own plan at the default budget
 * ends at 54,892 cycles, 6,400 bytes and 25 spills, at budget 0 at 54,334,
 * 6,144 and 24: budget 0's plan is kept.  (`--nodes 3000 --seed 7`, the
 * case here before, 233,489 against 232,665 at budget 0, no longer needs
 * the floor: its five parts planned alone, ds_parts.c, come to 230,775
 * at every budget.)  On `--kind random --nodes 1500 --seed 6` at
 * L1=2048,UB=768 budget 25's own plan ends at 42,620 cycles and 7,424
 * bytes against budget 5's 42,241 and 7,552: budget 5's plan is kept.
 * (The cases here before: `--kind matmul --nodes 1500 --seed 4`, 34,886
 * at 25 against 34,386 at 5, whose own plan at 25 is 34,293 now, held
 * below as the ladder's check; `--seed 15`, 63,453 cycles at 25 without
 * the floor, as at 5, once the lean floor had landed.)  The makespans
 * are held exactly.  With DS_TEST_QUICK, the first graph at budgets 0
 * and 5 only. */
static void budget_floor_kept(void **state)
{
	(void)state;
	static const struct {
		int kind;
		int64_t nodes;
		uint64_t seed;
		const char *caps; /* as `schedule --cap`; NULL: the defaults */
		int64_t makespan0, ddr0;
		int64_t makespan[2]; /* at budgets[] */
	} cases[] = {
		{DS_GEN_MATMUL, 1500, 1, NULL, 54334, 6144, {54334, 54334}},
		{DS_GEN_MATMUL, 1500, 4, NULL, 34293, 1024, {34293, 34293}},
		{DS_GEN_RANDOM, 1500, 6, "L1=2048,UB=768", 42487, 7296,
		 {42241, 42241}}};
	static const double budgets[] = {5, 25};
	const size_t ncases = test_quick() ? 1 : sizeof cases / sizeof *cases;
	const size_t nbudgets =
		test_quick() ? 1 : sizeof budgets / sizeof *budgets;
	for (size_t i = 0; i < ncases; i++) {
		ds_graph *g = must_generate(cases[i].kind, cases[i].nodes,
					    cases[i].seed);
		if (cases[i].caps)
			must_set_caps(g, cases[i].caps);
		ds_figures prev, f;
		run_budget(g, 0, &prev);
		assert_int_equal(prev.makespan, cases[i].makespan0);
		assert_int_equal(prev.extra_ddr, cases[i].ddr0);
		for (size_t k = 0; k < nbudgets; k++) {
			run_budget(g, budgets[k], &f);
			print_message("case %zu (%lld nodes, seed %llu) budget "
				      "%g: %lld cycles, %lld bytes\n", i,
				      (long long)cases[i].nodes,
				      (unsigned long long)cases[i].seed,
				      budgets[k], (long long)f.makespan,
				      (long long)f.extra_ddr);
			assert_true(f.makespan <= prev.makespan);
			assert_int_equal(f.makespan, cases[i].makespan[k]);
			prev = f;
		}
		ds_graph_free(g);
	}
}

/* dan's figures on bundled graph name at capacities caps (as `schedule
 * --cap`), default options but for the last stage. */
static ds_figures bundled_at(const char *name, const char *caps, int stage)
{
	ds_graph *g = load_bundled_case(name);
	must_set_caps(g, caps);
	ds_run_opts o;
	ds_run_opts_default(&o);
	o.stage = stage;
	ds_figures f = must_plan_figures(g, &o);
	ds_graph_free(g);
	return f;
}

/* The budget floor takes the plan CPE's chain makes at budget 0 where it
 * is shorter and within the budget's cap, more traffic than the final
 * plan's or not (ds_pipeline.c, budget_floor, keep_capped): `dansched
 * gen --kind random --nodes 1000 --seed 7` at L1=1536,UB=640 (DLR's
 * figure 3,984 bytes, cap 4,183) comes to 23,808 cycles at 3,888 bytes
 * in 27 spills, budget 0's plan; when the floor took only plans of no
 * more traffic than the final one, 24,220 at 3,664 in 18 (measured
 * 2026-12-07 with that rule's mutation, scripts/mutate.py; the same
 * figures on two renumbered copies).  Found by a sweep of that mutation
 * over 552 runs (`gen`, the four kinds, 600 to 5,000 nodes, some on
 * renumbered copies, at the default capacities, L1=2048,UB=768 and
 * L1=1536,UB=640); in one more graph, random 3,000 seed 61 at
 * L1=2048,UB=768, the rule also decides (53,557 cycles, 54,175
 * without).  Conv_Case0 at L1=4416 first needed the rule (390,044
 * cycles at 40,704 bytes, 418,650 at 41,092 without, 2026-12-05) and no
 * longer does since DLR's stage runs more starts in full (ds_dlr_stage.c,
 * dlr_more_starts); its figures, 391,692 at 39,940, are held too, but
 * not in the sanitizer pass, which is near 10 minutes. */
static void budget_floor_capped(void **state)
{
	(void)state;
	ds_graph *g = must_generate_planned_at(DS_GEN_RANDOM, 1000, 7,
					       "L1=1536,UB=640");
	ds_figures f = must_plan_figures(g, NULL);
	assert_int_equal(f.makespan, 23808);
	assert_int_equal(f.extra_ddr, 3888);
	assert_int_equal(f.spills, 27);
	ds_graph_free(g);
	if (test_quick())
		return;
	f = bundled_at("Conv_Case0", "L1=4416", DS_STAGE_CPE);
	assert_int_equal(f.makespan, 391692);
	assert_int_equal(f.extra_ddr, 39940);
}

/* A peak budget above the default is never worse than the default's
 * (ds_pipeline.c, floor_opts): on `dansched gen --kind random --nodes 500
 * --seed 9` at the default capacities the plan at the default budget (5)
 * ends at 10,459 cycles; at 10 the budget's own plan comes to 10,475, so
 * 5's plan is kept; at 20 the budget's own, 10,205, is shorter (measured
 * with the floor dropped, 2026-12-07).  The ladder's plans keep the same
 * rule.  (`--seed 4`, the case here before, came to 9,050 cycles at 5
 * and 9,089 at 10 without the floor until CPE's gang mode ran at the
 * default effort: 8,391 at 5 and 8,345 at 10 now, the floor not needed.
 * At L1=2048,UB=768, where it ran before that, its DLR plan came to
 * spill nothing once DLR's packings took rounds.) */
static void peak_floor_kept(void **state)
{
	(void)state;
	ds_graph *g = must_generate(DS_GEN_RANDOM, 500, 9);
	static const struct {
		double pct;
		int64_t makespan;
	} want[] = {{5, 10459}, {10, 10459}, {20, 10205}};
	for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
		ds_figures f = must_plan_at_peak(g, want[k].pct);
		assert_int_equal(f.makespan, want[k].makespan);
		assert_int_equal(f.extra_ddr, 0);
	}
	/* the ladder's plans too (ds_run_ladder, as `tradeoff` makes them):
	 * at peak budget 10 its point at traffic budget 5 is the plan above
	 * (not in the sanitizer pass, which is near 10 minutes) */
	if (test_quick()) {
		ds_graph_free(g);
		return;
	}
	ds_plan p[DS_NLADDER];
	ds_figures f[DS_NLADDER];
	ds_err e;
	ds_run_opts o;
	ds_run_opts_default(&o);
	o.cpe.peak_budget_pct = 10;
	if (ds_run_ladder(g, &o, p, f, &e))
		fail_msg("ds_run_ladder: %s", e.msg);
	for (int i = 0; i < DS_NLADDER; i++) {
		if (ds_budget_ladder[i] == 5)
			assert_int_equal(f[i].makespan, 10459);
		ds_plan_free(g->heap, &p[i]);
	}
	ds_graph_free(g);
}

/* A peak budget is never worse than 25 below it either, and of plans as
 * long the lower peak is kept (ds_pipeline.c, floor_opts, keep_shorter):
 * on `dansched gen --kind random --nodes 500 --seed 1` the budget's own
 * plan at 50 ends at 11,524 cycles at 3,200 bytes, the plan at 25 at
 * 11,489 and 2,848, which is kept (measured without the rung at 25,
 * 2026-12-07); on `--kind attention --nodes 500 --seed 2` every budget
 * gives 11,223 cycles, at 50 its own plan at 1,314 bytes, the default's
 * at 930, which is kept (measured 2026-12-06, before the rung at 25 and
 * the tie on the peak: 11,223 at 1,314).  (`--kind random --seed 4`,
 * the first case until CPE's gang mode ran at the default effort, now
 * gives 8,345 cycles at every budget from 10.) */
static void peak_rungs_kept(void **state)
{
	(void)state;
	static const struct {
		int kind;
		uint64_t seed;
		double pct;
		int64_t makespan, peak;
	} want[] = {{DS_GEN_RANDOM, 1, 50, 11489, 2848},
		    {DS_GEN_ATTENTION, 2, 50, 11223, 930}};
	for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
		ds_graph *g = must_generate(want[k].kind, 500, want[k].seed);
		ds_figures f = must_plan_at_peak(g, want[k].pct);
		assert_int_equal(f.makespan, want[k].makespan);
		assert_int_equal(f.peak_vstay, want[k].peak);
		ds_graph_free(g);
	}
}

/* The peak budget holds for the final plan, over the DLR plan's peak
 * (the dlr line of `schedule -v`): `dansched gen --kind random --nodes
 * 500 --seed 2` has DLR's plan at 1,280 bytes, and the baselines' plans
 * through CPE peak higher: free-first's 8,316 cycles at 1,840 bytes (44 %
 * more), vpux's 8,275 at 1,792 (40 %).  Until 2026-12 such a plan was
 * kept at every budget, 0 included; then 9,659 cycles at 1,280 bytes at
 * budgets 0 and 5, and free-first's, 8,275 at 1,696 then, at 35; since
 * CPE's gang mode runs at the default effort, 9,022 at 1,280 at budget 0,
 * 8,851 at 1,344 at 5 and 8,348 at 1,600 at 35, dan's own plans (the
 * baselines' through CPE measured 2026-12-07). */
static void peak_budget_holds(void **state)
{
	(void)state;
	ds_graph *g = must_generate(DS_GEN_RANDOM, 500, 2);
	static const struct {
		double pct;
		int64_t makespan, peak;
	} want[] = {{0, 9022, 1280}, {5, 8851, 1344}, {35, 8348, 1600}};
	for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
		/* the sanitizer pass (near 10 minutes): the default only */
		if (test_quick() && want[k].pct != 5)
			continue;
		stages st;
		memset(&st, 0, sizeof st);
		ds_run_opts o;
		ds_run_opts_default(&o);
		o.cpe.peak_budget_pct = want[k].pct;
		o.progress = on_stage;
		o.progress_ud = &st;
		ds_figures f = must_plan_figures(g, &o);
		assert_int_equal(st.dlr.peak_vstay, 1280);
		assert_true(f.peak_vstay <=
			    ds_cpe_budget(st.dlr.peak_vstay, want[k].pct));
		assert_int_equal(f.makespan, want[k].makespan);
		assert_int_equal(f.peak_vstay, want[k].peak);
	}
	ds_graph_free(g);
}

/* Where CPE's chain ends above the peak cap (its backbone an order of a
 * higher peak), it runs again from DLR's own plan (ds_chain.c,
 * cap_floor): `dansched gen --kind matmul --nodes 300 --seed 5` at
 * L1=1536,UB=640 has DLR's plan at 256 bytes and comes to 21,988 cycles
 * (its lb_any) at 256; without the floor the same 21,988 at 1,024.  And a
 * plan above the cap never replaces one within it (keep_shorter):
 * `--kind random --nodes 200 --seed 2` (DLR's plan at 896 bytes) comes
 * to 5,501 cycles at 880; with a shorter plan above the cap let in and
 * the cap floor after it, 5,509 at 928. */
static void cap_floor_kept(void **state)
{
	(void)state;
	ds_graph *g = must_generate_planned_at(DS_GEN_MATMUL, 300, 5,
					       "L1=1536,UB=640");
	ds_figures f = must_plan_figures(g, NULL);
	assert_int_equal(f.makespan, 21988);
	assert_int_equal(f.peak_vstay, 256);
	ds_graph_free(g);
	g = must_generate(DS_GEN_RANDOM, 200, 2);
	f = must_plan_figures(g, NULL);
	assert_int_equal(f.makespan, 5501);
	assert_int_equal(f.peak_vstay, 880);
	ds_graph_free(g);
}

/* A graph planned as a part of a larger one (ds_run_opts_size) gets that
 * graph's share of the budgets and its size limits: one DLR start, not
 * 16, on `dansched gen --kind matmul --nodes 1000 --seed 1` as a part of
 * 1M nodes, work budgets cut to the part's share (at least 1), and the
 * plan made so still valid: 43,824 cycles against 40,315 with the
 * graph's own budgets, at the same 2,048 bytes. */
static void size_class(void **state)
{
	(void)state;
	ds_graph *g = must_generate(DS_GEN_MATMUL, 1000, 1);
	ds_run_opts o;
	ds_run_opts_default(&o);
	assert_int_equal(ds_dlr_starts(g, &o), 16);
	assert_int_equal(ds_size_nodes(g, 0), g->n);
	assert_int_equal(ds_size_nodes(g, 1), g->n);
	assert_int_equal(ds_work_share(g, 0, 40000), 40000);
	ds_run_opts_size(&o, 1000000);
	assert_int_equal(o.mpas.size_nodes, 1000000);
	assert_int_equal(o.dlr.size_nodes, 1000000);
	assert_int_equal(o.cpe.size_nodes, 1000000);
	assert_int_equal(o.retime.size_nodes, 1000000);
	assert_int_equal(ds_dlr_starts(g, &o), 1);
	assert_int_equal(ds_size_nodes(g, 1000000), 1000000);
	assert_int_equal(ds_work_share(g, 1000000, 40000000),
			 (int64_t)40 * g->n);
	assert_int_equal(ds_work_share(g, 1000000, 5), 1);
	ds_plan p;
	ds_figures whole, part;
	ds_err e;
	ds_run_opts d;
	ds_run_opts_default(&d);
	if (ds_run(g, &d, &p, &whole, &e))
		fail_msg("%s", e.msg);
	ds_plan_free(g->heap, &p);
	if (ds_run(g, &o, &p, &part, &e))
		fail_msg("%s", e.msg);
	ds_plan_free(g->heap, &p);
	print_message("matmul 1000 seed 1: %lld cycles at %lld bytes, as a "
		      "part of 1M nodes %lld at %lld\n",
		      (long long)whole.makespan, (long long)whole.extra_ddr,
		      (long long)part.makespan, (long long)part.extra_ddr);
	assert_int_equal(whole.makespan, 40315);
	assert_int_equal(part.makespan, 43824);
	assert_int_equal(part.extra_ddr, 2048);
	ds_graph_free(g);
}

/* A renumbered copy gets the original's figures: retime's walk along
 * the critical chain took, of two graph predecessors that finished
 * together, the first in the edges' order, so Conv_Case0's copy of seed
 * 5 came to 416,522 cycles against 416,511 (now the latest in the plan;
 * 413,994 each since retime's rotations run before its local search,
 * 413,139 since CPE and retiming run again on each other's plans,
 * 411,453 since the readiness phase's line windows, 408,081 since the
 * backbone's pulls, 405,466 since DLR's packed placement, 401,836
 * since the tail's spills are planned again: ds_replan.c, 399,304 since
 * that search may run a step of its window before the plan's next,
 * 398,648 since a load in the tail is keyed to a compute step, 398,410
 * since the loads of small buffers live at its start join it, 394,888
 * since the first layer's CONV 89 is pulled next to CONV 86 in the
 * finished plan: ds_window.c). */
static void renumbered_same_final(void **state)
{
	(void)state;
	ds_graph *g = load_bundled("Conv_Case0.json");
	uint64_t seed = 5;
	int32_t *perm = test_shuffled(g->n, &seed);
	ds_graph *r = test_renumbered(g, perm, true, &seed);
	ds_figures fg, fr;
	run_effort(g, 1, &fg);
	run_effort(r, 1, &fr);
	print_message("Conv_Case0 %lld cycles at %lld bytes, its copy %lld at "
		      "%lld\n",
		      (long long)fg.makespan, (long long)fg.extra_ddr,
		      (long long)fr.makespan, (long long)fr.extra_ddr);
	assert_int_equal(fg.makespan, 394888);
	assert_int_equal(fr.makespan, fg.makespan);
	assert_int_equal(fr.extra_ddr, fg.extra_ddr);
	free(perm);
	ds_graph_free(r);
	ds_graph_free(g);
}

/* g planned by ds_run up to stage (DS_STAGE_MPAS, _DLR or _CPE) at the
 * default options, into *p (free it) with its figures *f; the test fails
 * when it does not plan. */
static inline void must_run_stage(const ds_graph *g, int stage, ds_plan *p,
				  ds_figures *f)
{
	ds_run_opts o;
	ds_run_opts_default(&o);
	o.stage = stage;
	ds_err e;
	if (ds_run(g, &o, p, f, &e))
		fail_msg("%s: %s", g->source, e.msg);
}

/* DLR's packed placement where the first packing of a memory does not
 * fit: the spills decided again with the capacity lowered where the
 * occupancies stood out (ds_pack.c, pk_lower).  `dansched gen --kind
 * random --nodes 1000 --seed 5` at L1=1536,UB=640: DLR's figure 3,584
 * bytes, 4,928 with one try (measured with the capacity never lowered,
 * 2026-12-07).  (`--nodes 500 --seed 6` had 2,464 against 3,712 until
 * DLR's stage ran more starts in full, ds_dlr_stage.c dlr_more_starts:
 * now 2,016 either way; `--nodes 2000 --seed 11`, 544 bytes against 832
 * before the packings took rounds, now packs in one try: 352.) */
static void packed_dlr_lowered(void **state)
{
	(void)state;
	ds_graph *g = must_generate_planned_at(DS_GEN_RANDOM, 1000, 5,
					       "L1=1536,UB=640");
	ds_plan p;
	ds_figures f;
	must_run_stage(g, DS_STAGE_DLR, &p, &f);
	assert_int_equal(f.extra_ddr, 3584);
	ds_plan_free(g->heap, &p);
	ds_graph_free(g);
}

/* DLR's stage runs the stage's order and the runner-up lite start in
 * full too on small graphs (ds_dlr_stage.c, dlr_more_starts): `dansched
 * gen --kind random --nodes 600 --seed 3` at L1=1536,UB=640 places at
 * 1,920 bytes from the stage's order, 3,712 from the best lite start
 * alone; `--kind matmul --nodes 600 --seed 2` at L1=2048,UB=768 at 0
 * from the runner-up, 128 without (measured 2026-12-07). */
static void more_starts_placed(void **state)
{
	(void)state;
	static const struct {
		int kind;
		uint64_t seed;
		const char *caps;
		int64_t ddr;
	} cases[] = {
		{DS_GEN_RANDOM, 3, "L1=1536,UB=640", 1920},
		{DS_GEN_MATMUL, 2, "L1=2048,UB=768", 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		ds_graph *g = must_generate_planned_at(
			cases[i].kind, 600, cases[i].seed, cases[i].caps);
		ds_plan p;
		ds_figures f;
		must_run_stage(g, DS_STAGE_DLR, &p, &f);
		assert_int_equal(f.extra_ddr, cases[i].ddr);
		ds_plan_free(g->heap, &p);
		ds_graph_free(g);
	}
}

/* A final plan keeps no dead reload (a reload spilled again before any
 * use): `dansched gen --kind random --nodes 4000 --seed 9` at
 * L1=2048,UB=768 has one (128 bytes): 19,072 bytes in 66 spills and
 * 106,438 cycles; dropped, 18,816 in 65 and 106,395 (with its 19 parts
 * planned alone too, ds_parts.c: 105,888 at the same bytes and spills;
 * 105,847 with the addresses placed again by need, need_floor).
 * (The graph of
 * seed 11 at 6,000 nodes and L1=1536,UB=640 had one until the
 * backbone's pulls, ds_backbone.c backbone_pulled: now 37,760 bytes in
 * 117 spills and 189,565 cycles, none dead.) */
static void no_dead_reloads(void **state)
{
	(void)state;
	ds_graph *g = must_generate_planned_at(DS_GEN_RANDOM, 4000, 9,
					       "L1=2048,UB=768");
	ds_err e;
	ds_run_opts o;
	ds_run_opts_default(&o);
	ds_plan p;
	ds_figures f;
	if (ds_run(g, &o, &p, &f, &e))
		fail_msg("%s", e.msg);
	int32_t dropped;
	assert_int_equal(ds_plan_drop_dead_reloads(g, &p, &dropped, &e),
			 DS_OK);
	assert_int_equal(dropped, 0);
	assert_int_equal(f.extra_ddr, 18816);
	assert_int_equal(f.spills, 65);
	assert_int_equal(f.makespan, 105847);
	ds_plan_free(g->heap, &p);
	ds_graph_free(g);
}

/* A kept pull (ds_backbone.c, backbone_pulled) is judged by DLR's
 * placement and the replay before CPE, rough guides, so CPE and
 * retiming also run from the backbone it replaced (pull_floor): `dansched
 * gen --kind random --nodes 1500 --seed 6` at L1=2048,UB=768 comes to
 * 42,241 cycles at 7,552 bytes with it and to 43,101 at 7,040 without
 * (measured with the floor dropped, 2026-12-07).  (`--seed 5` at
 * L1=1536,UB=640 came to 51,859 cycles at 9,088 bytes with it and
 * 52,496 at 9,344 without until DLR's stage ran more starts in full:
 * now 47,441 at 5,376 either way; `--nodes 3000 --seed 3` came to 55,841
 * cycles at 1,024 bytes with it and 55,957 at 1,152 without until DLR's
 * packings took rounds.) */
static void pull_floor_kept(void **state)
{
	(void)state;
	ds_graph *g = must_generate_planned_at(DS_GEN_RANDOM, 1500, 6,
					       "L1=2048,UB=768");
	ds_figures f;
	run_effort(g, 1, &f);
	assert_int_equal(f.makespan, 42241);
	assert_int_equal(f.extra_ddr, 7552);
	ds_graph_free(g);
}

/* dan's final figures on `dansched gen --kind K --nodes N --seed S`
 * planned at capacities spec are makespan cycles and ddr bytes. */
static void planned_at_is(int kind, int64_t nodes, uint64_t seed,
			  const char *spec, int64_t makespan, int64_t ddr)
{
	ds_graph *g = must_generate_planned_at(kind, nodes, seed, spec);
	ds_figures f;
	run_effort(g, 1, &f);
	ds_graph_free(g);
	assert_int_equal(f.makespan, makespan);
	assert_int_equal(f.extra_ddr, ddr);
}

/* The backbone's pulls (ds_backbone.c, backbone_pulled) are kept where
 * DLR lite places the pulled order with less traffic or fewer spills:
 * `dansched gen --kind conv --nodes 1000 --seed 4` at L1=2048,UB=768
 * comes to 38,403 cycles at 1,411 bytes with them and to 39,575 at 1,394
 * without (measured with the pulls never kept, 2026-12-06; also `--kind
 * random --nodes 3000 --seed 12` at the default capacities, 70,280 at
 * 2,048 bytes against 75,358 at 5,568).  `--kind random --nodes 600
 * --seed 4` at L1=2048,UB=768, 11,744 cycles with them and 12,449
 * without until the peak budget held the final plan, now 12,449 either
 * way: the pulled order's plans peak at 2,144 bytes, 13.6 % over DLR's
 * plan (11,744 at --peak-budget 15). */
static void backbone_pulls_kept(void **state)
{
	(void)state;
	planned_at_is(DS_GEN_CONV, 1000, 4, "L1=2048,UB=768", 38403, 1411);
}

/* The backbone's pulls also pair the uses around a buffer's later
 * spills (ds_backbone.c, backbone_pulled's second pass): `dansched gen
 * --kind conv --nodes 1000 --seed 4` at L1=1536,UB=640 comes to 46,910
 * cycles at 3,363 bytes with them and to 47,102 at 3,420 without
 * (measured with that pass's pairs dropped, 2026-12-06).  `--kind random
 * --nodes 1200 --seed 4` at L1=2560,UB=640 came to 27,979 at 2,240
 * against 29,046 at 2,400 until DLR's packings took rounds (ds_pack.c):
 * its DLR plan now holds 2,176 bytes, not 2,656, and within that cap its
 * final plan, 29,000 cycles at 2,176, is the same either way. */
static void later_spill_pulls_kept(void **state)
{
	(void)state;
	planned_at_is(DS_GEN_CONV, 1000, 4, "L1=1536,UB=640", 46910, 3363);
}

/* CPE's chain also runs from the pulls of the aged placement over the
 * cap (ds_chain.c, over_floor), whatever that backbone's replay:
 * without it `dansched gen --kind conv --nodes 1000 --seed 7` at
 * L1=1536,UB=640 came to 46,861 cycles at 6,352 bytes (its second
 * backbone replays 60,244 against the chosen one's, DLR's own, 60,129;
 * 45,973 at 6,032 with it, measured again 2026-12-05 with the later
 * spills' pulls).  `--seed 4`, 48,039 at 3,816 without it when it came,
 * now needs it no more (46,910 at 3,363 either way: later_spill_pulls_kept
 * holds it). */
static void over_floor_kept(void **state)
{
	(void)state;
	planned_at_is(DS_GEN_CONV, 1000, 7, "L1=1536,UB=640", 45973, 6032);
}

/* CPE's chain also runs from DLR's timely plan (ds_chain.c,
 * timely_floor; ds_backbone.c, backbone_timely): FlashAttention_Case1
 * at UB=1088 comes to 116,128 cycles at 20,224 bytes, within the cap
 * over DLR's 19,712; without it 138,820 at 20,224 (its DLR plan runs the
 * matmuls far ahead of the vector work; measured 2026-12-05). */
static void timely_backbone(void **state)
{
	(void)state;
	ds_figures f = bundled_at("FlashAttention_Case1", "UB=1088",
				 DS_STAGE_CPE);
	assert_int_equal(f.makespan, 116128);
	assert_int_equal(f.extra_ddr, 20224);
	f = bundled_at("FlashAttention_Case1", "UB=1088", DS_STAGE_DLR);
	assert_int_equal(f.extra_ddr, 19712);
}

/* Where the second phase of MPAS's local search lowers the peak
 * (ds_mpas_ls.c, ls_jumps), DLR's search runs from the first phase's
 * order and from the second's, and the better plan is kept, the first's
 * on ties (ds_pipeline.c, dlr_search).  Conv_Case0's part before node
 * 1304 (test_mpas's part_of_a_bundled_graph): DLR's figure 1,540 bytes
 * from the second phase's order (peak 4,416) against 7,296 from the
 * first's (4,994), and the final plan 112,015 cycles at 1,536 bytes
 * against 117,488 at 7,296.  `dansched gen --kind conv --nodes 3000
 * --seed 7`: both orders place at 0 bytes, and the first's plan, kept,
 * comes to 84,988 cycles (the second's to 85,896), 84,883 with its
 * addresses placed again by need (ds_pipeline.c, need_floor).  The first phase's
 * order is replaced by a baseline's where that peaks lower, as MPAS's
 * is (ds_pipeline.c, mpas_near): `--kind random --nodes 600 --seed 30`
 * at L1=1536,UB=640, 14,241 cycles at 512 bytes (without, 14,317 at
 * 768; measured 2026-12-07; 14,264 and 14,573 before CPE's gang mode
 * ran at the default effort). */
static void second_phase_placed(void **state)
{
	(void)state;
	ds_graph *g = load_bundled("Conv_Case0.json");
	ds_graph *part = test_ancestors(g, 1304);
	ds_plan p;
	ds_figures f;
	must_run_stage(part, DS_STAGE_DLR, &p, &f);
	assert_int_equal(f.extra_ddr, 1540);
	ds_plan_free(part->heap, &p);
	must_run_stage(part, DS_STAGE_CPE, &p, &f);
	assert_int_equal(f.makespan, 112015);
	assert_int_equal(f.extra_ddr, 1536);
	ds_plan_free(part->heap, &p);
	ds_graph_free(part);
	ds_graph_free(g);
	g = must_generate(DS_GEN_CONV, 3000, 7);
	run_effort(g, 1, &f);
	assert_int_equal(f.makespan, 84883);
	assert_int_equal(f.extra_ddr, 0);
	ds_graph_free(g);
	planned_at_is(DS_GEN_RANDOM, 600, 30, "L1=1536,UB=640", 14241, 512);
}

/* ds_run under alloc_sweep: the plan is freed once made. */
typedef struct run_call {
	const ds_graph *g;
	const ds_run_opts *o;
	ds_plan p;
} run_call;

static int run_once(void *ctx, ds_err *e)
{
	run_call *c = ctx;
	ds_figures f;
	return ds_run(c->g, c->o, &c->p, &f, e);
}

static void run_done(void *ctx, int rc)
{
	run_call *c = ctx;
	if (rc == DS_OK)
		ds_plan_free(c->g->heap, &c->p);
}

/* Every allocation of dan on g with options o may fail (every step-th
 * in turn): each failure comes back as DS_ENOMEM and leaks nothing. */
static void sweep_run(ds_graph *g, const ds_run_opts *o, long step,
		      const char *what)
{
	ds_faulty st = {0, 0, 0};
	ds_heap fh = ds_heap_faulty(&st);
	const ds_heap *std_heap = g->heap;
	g->heap = &fh; /* built on the standard heap; dan allocates on this */
	run_call c = {.g = g, .o = o};
	long failed =
		alloc_sweep_every(&st, &(sweep){run_once, run_done, &c}, step);
	print_message("%s: %ld allocation failures, each reported\n", what,
		      failed);
	assert_true(failed > 99);
	g->heap = std_heap;
	assert_int_equal(st.live, 0);
}

/* Every allocation of the whole pipeline may fail: on a graph of two
 * generated operators, so MPAS's alternative orders are pieced together
 * per operator and DLR runs from several (some 6,500 failures; every
 * fourth in the sanitizer pass); on `dansched gen --kind random
 * --nodes 60 --seed 2`, whose parts of 4, 7 and 70 nodes make a grouped
 * plan (ds_parts.c, grouped_plan: some 8,900 failures, a minute in a
 * Release build; every 16th in the sanitizer pass); and at CPE's effort
 * 2 on a generated graph (`dansched gen --kind conv --nodes 50 --seed 2`)
 * where CPE and retime also run from the runner-up backbone
 * (ds_chain.c, cpe_runner_up) and the default's plan is made too
 * (floor_opts), and on that graph at a peak budget of 20, where the
 * plan at 5 is made too (floor_opts; every fourth failure, not in the
 * sanitizer pass). */
static void out_of_memory(void **state)
{
	(void)state;
	ds_graph *a = must_generate(DS_GEN_MATMUL, 60, 5);
	ds_graph *b = must_generate(DS_GEN_ATTENTION, 60, 5);
	ds_graph *c = must_generate(DS_GEN_CONV, 50, 2);
	ds_graph *g = test_union(a, b);
	ds_graph *r = must_generate(DS_GEN_RANDOM, 60, 2);
	ds_run_opts o;
	ds_run_opts_default(&o);
	/* in the sanitizer pass all of them took 161 s of this test's 302
	 * (2026-12-05), every third 35 s, every fourth now (that pass came
	 * to 600 s of 10 minutes, 2026-12-06); the first pass tries each */
	sweep_run(g, &o, test_quick() ? 4 : 1, "matmul and attention");
	sweep_run(r, &o, test_quick() ? 16 : 1, "random, grouped parts");
	/* some 16,400 failures (8,242 before more effort also made the
	 * default's plan, floor_opts), about a minute in a Release
	 * build: not in the sanitizer pass */
	o.cpe.effort = 2;
	if (!test_quick())
		sweep_run(c, &o, 1, "conv, CPE's effort 2");
	o.cpe.effort = 1;
	o.cpe.peak_budget_pct = 20;
	/* some 14,650 failures, about 50 s in a RelWithDebInfo build:
	 * every fourth, not in the sanitizer pass */
	if (!test_quick())
		sweep_run(c, &o, 4, "conv, peak budget 20");
	ds_graph_free(g);
	ds_graph_free(r);
	ds_graph_free(a);
	ds_graph_free(b);
	ds_graph_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(out_of_memory),
		cmocka_unit_test(bundled_graphs),
		cmocka_unit_test(more_effort_runner_up),
		cmocka_unit_test(gangs),
		cmocka_unit_test(more_effort_never_longer),
		cmocka_unit_test(budget_floor_kept),
		cmocka_unit_test(budget_floor_capped),
		cmocka_unit_test(peak_floor_kept),
		cmocka_unit_test(peak_rungs_kept),
		cmocka_unit_test(peak_budget_holds),
		cmocka_unit_test(cap_floor_kept),
		cmocka_unit_test(size_class),
		cmocka_unit_test(renumbered_same_final),
		cmocka_unit_test(packed_dlr_lowered),
		cmocka_unit_test(more_starts_placed),
		cmocka_unit_test(no_dead_reloads),
		cmocka_unit_test(pull_floor_kept),
		cmocka_unit_test(backbone_pulls_kept),
		cmocka_unit_test(later_spill_pulls_kept),
		cmocka_unit_test(over_floor_kept),
		cmocka_unit_test(timely_backbone),
		cmocka_unit_test(second_phase_placed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
