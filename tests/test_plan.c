/* test_plan.c: the three result files (schedule, memory, spill), and
 * the spill lines in the order the spills happen (ds_plan_sort_spills),
 * dead reloads dropped (ds_plan_drop_dead_reloads). */
#include "test_util.h"

#include "ds_pipeline.h"

/* BufIds 10 (UB 100) and 20 (L1 64), so buffer indices differ from BufIds:
 *   0 ALLOC 10, 1 ALLOC 20 -> 2 E1 (VECTOR 10) -> 3 FREE 10, 4 FREE 20 */
#define G_TWO_BUFS                                                            \
	GRAPH(ALLOC(0, 10, 100, UB) "," ALLOC(1, 20, 64, L1) "," OP(          \
		      2, E1, VECTOR, 10, "10,20") "," FREE(3, 10, 100,         \
							   UB) "," FREE(4, 20, \
									64,    \
									L1),   \
	      "[0,2],[1,2],[2,3],[2,4]")

typedef struct fixture {
	char *dir;
	ds_graph *g;
	char sched[4200], mem[4200], spill[4200];
} fixture;

static int setup(void **state)
{
	fixture *x = calloc(1, sizeof *x);
	if (!x)
		return -1;
	x->dir = make_tmpdir();
	x->g = must_load(G_TWO_BUFS);
	snprintf(x->sched, sizeof x->sched, "%s/sched.txt", x->dir);
	snprintf(x->mem, sizeof x->mem, "%s/mem.txt", x->dir);
	snprintf(x->spill, sizeof x->spill, "%s/spill.txt", x->dir);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	fixture *x = *state;
	ds_graph_free(x->g);
	rm_tree(x->dir);
	free(x);
	return 0;
}

/* Writes the three files (NULL: leave that file out) and reads them. */
static int read_plan(fixture *x, const char *s, const char *m, const char *sp,
		     ds_plan *p, ds_err *e)
{
	write_text(x->sched, s);
	if (m)
		write_text(x->mem, m);
	if (sp)
		write_text(x->spill, sp);
	memset(e, 0, sizeof *e);
	return ds_plan_read(x->g, x->sched, m ? x->mem : NULL,
			    sp ? x->spill : NULL, p, e);
}

/* Reading must fail with code and a message containing needle. */
static void read_fails(fixture *x, const char *s, const char *m,
		       const char *sp, int code, const char *needle)
{
	ds_plan p;
	ds_err e;
	int rc = read_plan(x, s, m, sp, &p, &e);
	if (rc != code)
		fail_msg("expected %d, got %d (%s)", code, rc, e.msg);
	assert_contains(e.msg, needle);
	assert_null(p.order); /* nothing half-read is handed back */
	assert_null(p.offset);
}

static void round_trip(void **state)
{
	fixture *x = *state;
	/* spill buffer 10 (index 0) right after its ALLOC, back at 300 */
	int32_t order[] = {0, 1, 5, 6, 2, 3, 4};
	int64_t offset[] = {0, 128};
	ds_spill sp[] = {{0, 300}};
	ds_plan p = {7, order, offset, 1, sp};
	ds_err e;
	ds_figures f;
	if (ds_replay(x->g, &p, NULL, &f, &e) != DS_OK)
		fail_msg("the plan itself is invalid: %s", e.msg);
	assert_int_equal(ds_plan_write(x->g, &p, x->dir, "c", &e), DS_OK);

	char path[4200];
	snprintf(path, sizeof path, "%s/c_schedule.txt", x->dir);
	char *s = slurp(path);
	assert_non_null(s);
	assert_string_equal(s, "0\n1\n5\n6\n2\n3\n4\n");
	free(s);
	snprintf(path, sizeof path, "%s/c_memory.txt", x->dir);
	char *m = slurp(path);
	assert_non_null(m);
	assert_string_equal(m, "10:0\n20:128\n"); /* BufIds, not indices */
	free(m);
	snprintf(path, sizeof path, "%s/c_spill.txt", x->dir);
	char *l = slurp(path);
	assert_non_null(l);
	assert_string_equal(l, "10:300\n");
	free(l);
	assert_int_equal(count_entries(x->dir), 3);

	char sp_path[4200], m_path[4200];
	snprintf(path, sizeof path, "%s/c_schedule.txt", x->dir);
	snprintf(m_path, sizeof m_path, "%s/c_memory.txt", x->dir);
	snprintf(sp_path, sizeof sp_path, "%s/c_spill.txt", x->dir);
	ds_plan q;
	assert_int_equal(ds_plan_read(x->g, path, m_path, sp_path, &q, &e),
			 DS_OK);
	assert_int_equal(q.len, 7);
	for (int i = 0; i < 7; i++)
		assert_int_equal(q.order[i], order[i]);
	assert_non_null(q.offset);
	assert_int_equal(q.offset[0], 0);
	assert_int_equal(q.offset[1], 128);
	assert_int_equal(q.nspill, 1);
	assert_int_equal(q.spill[0].buf, 0);
	assert_int_equal(q.spill[0].offset, 300);
	ds_figures f2;
	assert_int_equal(ds_replay(x->g, &q, NULL, &f2, &e), DS_OK);
	assert_int_equal(f2.makespan, f.makespan);
	ds_plan_free(x->g->heap, &q);
	assert_null(q.order);
}

static void order_only(void **state)
{
	fixture *x = *state;
	/* no offsets: only the schedule file is written */
	int32_t order[] = {0, 1, 2, 3, 4};
	ds_plan p = {5, order, NULL, 0, NULL};
	ds_err e;
	assert_int_equal(ds_plan_write(x->g, &p, x->dir, "o", &e), DS_OK);
	assert_int_equal(count_entries(x->dir), 1);
	char path[4200];
	snprintf(path, sizeof path, "%s/o_schedule.txt", x->dir);
	ds_plan q;
	assert_int_equal(ds_plan_read(x->g, path, NULL, NULL, &q, &e), DS_OK);
	assert_int_equal(q.len, 5);
	assert_null(q.offset);
	assert_int_equal(q.nspill, 0);
	assert_int_equal(q.order[4], 4);
	ds_plan_free(x->g->heap, &q);
	remove(path);
}

static void empty_spill_file(void **state)
{
	fixture *x = *state;
	/* offsets and no spills: the spill file exists and is empty */
	int32_t order[] = {0, 1, 2, 3, 4};
	int64_t offset[] = {0, 0};
	ds_plan p = {5, order, offset, 0, NULL};
	ds_err e;
	assert_int_equal(ds_plan_write(x->g, &p, x->dir, "e", &e), DS_OK);
	char path[4200];
	snprintf(path, sizeof path, "%s/e_spill.txt", x->dir);
	char *s = slurp(path);
	assert_non_null(s);
	assert_string_equal(s, "");
	free(s);
	assert_int_equal(count_entries(x->dir), 3);
}

static void syntax_errors(void **state)
{
	fixture *x = *state;
	char where[4300];
	snprintf(where, sizeof where, "%s:3", x->sched);
	read_fails(x, "0\n1\nx\n", NULL, NULL, DS_EINPUT, where);
	snprintf(where, sizeof where, "%s:1", x->sched);
	read_fails(x, "12abc\n", NULL, NULL, DS_EINPUT, where);
	snprintf(where, sizeof where, "%s:2", x->sched);
	read_fails(x, "0\n3:\n", NULL, NULL, DS_EINPUT, where);
	read_fails(x, "0\n1.5\n", NULL, NULL, DS_EINPUT, where);
	/* the memory file: letters, "3:", a missing colon */
	snprintf(where, sizeof where, "%s:1", x->mem);
	read_fails(x, "0\n", "a:1\n", NULL, DS_EINPUT, where);
	read_fails(x, "0\n", "10:\n", NULL, DS_EINPUT, where);
	snprintf(where, sizeof where, "%s:2", x->mem);
	read_fails(x, "0\n", "10:0\n20 128\n", NULL, DS_EINPUT, where);
	read_fails(x, "0\n", "10:0\n20128\n", NULL, DS_EINPUT, where);
	read_fails(x, "0\n", "10:0\n20:1:2\n", NULL, DS_EINPUT, where);
	/* the spill file */
	snprintf(where, sizeof where, "%s:1", x->spill);
	read_fails(x, "0\n", "10:0\n20:0\n", "10\n", DS_EINPUT, where);
	/* not text at all */
	read_fails(x, "0\n\xff\n", NULL, NULL, DS_EINPUT, x->sched);
	/* a file that is not there */
	ds_plan p;
	ds_err e;
	assert_int_equal(ds_plan_read(x->g, "/nonexistent/s.txt", NULL, NULL,
				      &p, &e),
			 DS_EINPUT);
	assert_contains(e.msg, "/nonexistent/s.txt");
}

static void unknown_buffers(void **state)
{
	fixture *x = *state;
	char where[4300];
	/* well-formed lines naming buffers the graph lacks: a plan error */
	snprintf(where, sizeof where, "%s:2", x->mem);
	read_fails(x, "0\n", "10:0\n99:0\n", NULL, DS_EPLAN, where);
	read_fails(x, "0\n", "10:0\n99:0\n", NULL, DS_EPLAN, "99");
	snprintf(where, sizeof where, "%s:1", x->spill);
	read_fails(x, "0\n", "10:0\n20:0\n", "99:0\n", DS_EPLAN, where);
	read_fails(x, "0\n", "10:0\n20:0\n", "99:0\n", DS_EPLAN, "99");
	/* a buffer given twice, a negative offset */
	snprintf(where, sizeof where, "%s:2", x->mem);
	read_fails(x, "0\n", "10:0\n10:5\n", NULL, DS_EPLAN, where);
	read_fails(x, "0\n", "10:0\n20:-5\n", NULL, DS_EPLAN, where);
}

static void blank_lines_and_crlf(void **state)
{
	fixture *x = *state;
	ds_plan p;
	ds_err e;
	/* CRLF, blank and blank-looking lines, spaces, no final newline */
	int rc = read_plan(x, "0\r\n\r\n1\r\n   \r\n5\r\n 6 \r\n\t2\r\n3\r\n4",
			   "\r\n10:0\r\n\r\n20:128\r\n", " 10 : 300 \r\n\r\n",
			   &p, &e);
	if (rc != DS_OK)
		fail_msg("%s", e.msg);
	static const int32_t order[] = {0, 1, 5, 6, 2, 3, 4};
	assert_int_equal(p.len, 7);
	for (int i = 0; i < 7; i++)
		assert_int_equal(p.order[i], order[i]);
	assert_int_equal(p.offset[0], 0);
	assert_int_equal(p.offset[1], 128);
	assert_int_equal(p.nspill, 1);
	assert_int_equal(p.spill[0].buf, 0);
	assert_int_equal(p.spill[0].offset, 300);
	ds_plan_free(x->g->heap, &p);
	/* an empty spill file is no spills */
	rc = read_plan(x, "0\n1\n2\n3\n4\n", "10:0\n20:0\n", "", &p, &e);
	assert_int_equal(rc, DS_OK);
	assert_int_equal(p.nspill, 0);
	ds_plan_free(x->g->heap, &p);
	remove(x->sched);
	remove(x->mem);
	remove(x->spill);
}

static void failed_write_leaves_nothing(void **state)
{
	fixture *x = *state;
	int32_t order[] = {0, 1, 2, 3, 4};
	int64_t offset[] = {0, 0};
	ds_plan p = {5, order, offset, 0, NULL};
	ds_err e;
	/* a folder that does not exist */
	char dir[4200];
	snprintf(dir, sizeof dir, "%s/nope/deeper", x->dir);
	assert_int_equal(ds_plan_write(x->g, &p, dir, "c", &e), DS_EINPUT);
	assert_contains(e.msg, "nope/deeper/c_");
	assert_int_equal(count_entries(x->dir), 0);

	/* the memory file's name is taken by a non-empty folder, so its
	 * rename fails after both temporaries were written: no temporary
	 * may stay behind */
	char blocker[4300], inner[4400];
	snprintf(blocker, sizeof blocker, "%s/c_memory.txt", x->dir);
	assert_int_equal(mkdir(blocker, 0777), 0);
	snprintf(inner, sizeof inner, "%s/x", blocker);
	write_text(inner, "x");
	assert_int_not_equal(ds_plan_write(x->g, &p, x->dir, "c", &e), DS_OK);
	assert_contains(e.msg, "c_memory.txt");
	DIR *d = opendir(x->dir);
	assert_non_null(d);
	struct dirent *de;
	while ((de = readdir(d)))
		if (strstr(de->d_name, ".tmp"))
			fail_msg("temporary %s left behind", de->d_name);
	closedir(d);
	remove(inner);
	rmdir(blocker);
	char sched[4300];
	snprintf(sched, sizeof sched, "%s/c_schedule.txt", x->dir);
	remove(sched);
}

/* ---- spills in the order they happen (issue 20) ---- */

/* The replay's figures of p, which must be valid with (strict) or without
 * the spill order. */
static ds_figures replayed(const ds_graph *g, const ds_plan *p, bool strict)
{
	ds_replay_opts o = {.spill_order = strict};
	ds_figures f;
	ds_err e;
	if (ds_replay(g, p, &o, &f, &e) != DS_OK)
		fail_msg("replay (%s): %s", strict ? "strict" : "any order",
			 e.msg);
	return f;
}

static void same_figures(const ds_figures *a, const ds_figures *b)
{
	assert_int_equal(a->peak_vstay, b->peak_vstay);
	assert_int_equal(a->extra_ddr, b->extra_ddr);
	assert_int_equal(a->spills, b->spills);
	assert_int_equal(a->makespan, b->makespan);
	assert_int_equal(a->lb_pipe_load, b->lb_pipe_load);
	assert_memory_equal(a->peak_mem, b->peak_mem, sizeof a->peak_mem);
}

/* The placer lists spills in order; numbered backwards the plan keeps
 * every figure, the strict replay names the first line out of order, and
 * ds_plan_sort_spills gives the placer's plan back exactly. */
static void sort_spills_relabelled(void **state)
{
	(void)state;
	ds_graph *g = must_generate(DS_GEN_CONV, 600, 4);
	ds_err e;
	int32_t *order = malloc((size_t)g->n * sizeof *order);
	assert_non_null(order);
	assert_int_equal(ds_order_id(g, order, &e), DS_OK);
	ds_plan p, q;
	assert_int_equal(ds_place(g, order, &(ds_place_opts){0, 0, 0}, &p, &e),
			 DS_OK);
	assert_int_equal(ds_place(g, order, &(ds_place_opts){0, 0, 0}, &q, &e),
			 DS_OK);
	const int32_t n = g->n, S = q.nspill;
	print_message("%d spills\n", S);
	assert_true(S >= 3);
	ds_figures f = replayed(g, &p, true);
	for (int32_t k = 0; k < S / 2; k++) {
		ds_spill t = q.spill[k];
		q.spill[k] = q.spill[S - 1 - k];
		q.spill[S - 1 - k] = t;
	}
	for (int32_t i = 0; i < q.len; i++)
		if (q.order[i] >= n)
			q.order[i] = n + 2 * (S - 1 - (q.order[i] - n) / 2) +
				     (q.order[i] - n) % 2;
	ds_figures fq = replayed(g, &q, false);
	same_figures(&f, &fq);
	ds_replay_opts strict = {.spill_order = true};
	assert_int_equal(ds_replay(g, &q, &strict, &fq, &e), DS_EPLAN);
	assert_contains(e.msg, "spill line 2:");
	assert_int_equal(ds_plan_sort_spills(g, &q, &e), DS_OK);
	fq = replayed(g, &q, true);
	same_figures(&f, &fq);
	assert_memory_equal(q.order, p.order, (size_t)p.len * sizeof *p.order);
	for (int32_t k = 0; k < S; k++) {
		assert_int_equal(q.spill[k].buf, p.spill[k].buf);
		assert_int_equal(q.spill[k].offset, p.spill[k].offset);
	}
	/* a spill without its SPILL_OUT: refused, not renumbered past the
	 * table */
	for (int32_t i = 0; i < q.len; i++)
		if (q.order[i] == n)
			q.order[i] = 0;
	assert_int_equal(ds_plan_sort_spills(g, &q, &e), DS_EPLAN);
	ds_plan_free(g->heap, &p);
	ds_plan_free(g->heap, &q);
	free(order);
	ds_graph_free(g);
}

/* CPE and retiming move (and add) spill nodes: on the first bundled graph
 * (by name, up to a size) where their plan lists them out of order, that
 * plan with the spills renumbered (ds_plan_sort_spills) is in order, with
 * the same figures, and the pipeline's final plan is in order.  (The
 * final plan was that renumbered plan itself until CPE and retiming ran
 * again on each other's plans: ds_chain.c, cpe_retime_rounds.)  The
 * graph must be one whose CPE backbone is
 * built here as the pipeline builds it: Conv_Case0's is DLR's order with
 * its groups of accumulators relayed (ds_dlr_relay), placed with aged
 * victims at the first tolerance (ds_backbone.c ds_backbone_choose; it was
 * DLR's own plan before the relay); FlashAttention_Case0's is another
 * aged placement.  The quick runs reach Conv_Case0 too. */
/* DLR's plan d's order relayed (ds_dlr_relay) and placed with aged
 * victims at tolerance 10, as the pipeline's backbone candidate; an empty
 * plan when the relay changes nothing. */
static ds_plan relayed_backbone(const ds_graph *g, const ds_plan *d)
{
	ds_plan bb;
	memset(&bb, 0, sizeof bb);
	int32_t *ord = test_graph_order(g, d, 2);
	bool changed;
	ds_err e;
	assert_int_equal(ds_dlr_relay(g, ord, ord + g->n, &changed, &e), DS_OK);
	ds_place_opts po = {DS_BEST_FIT, DS_VICTIM_AGED, 10};
	if (changed)
		assert_int_equal(ds_place(g, ord + g->n, &po, &bb, &e), DS_OK);
	free(ord);
	return bb;
}

typedef struct cpe_case {
	int found;
} cpe_case;

static void cpe_spills_one(const char *name, const char *path, ds_graph *g,
			   void *ud)
{
	(void)path;
	cpe_case *c = ud;
	if (c->found || g->n > (test_quick() ? 3000 : 5000))
		return;
	ds_run_opts o;
	ds_run_opts_default(&o);
	o.stage = DS_STAGE_DLR;
	ds_plan d, raw, fin;
	ds_figures f;
	ds_err e;
	assert_int_equal(ds_run(g, &o, &d, &f, &e), DS_OK);
	ds_plan bb = relayed_backbone(g, &d);
	assert_int_equal(ds_cpe(g, bb.len ? &bb : &d, &o.cpe, &raw, &e), DS_OK);
	ds_plan_free(g->heap, &bb);
	ds_figures fr = replayed(g, &raw, false);
	/* then retiming, kept when shorter, as the pipeline does */
	ds_figures fd = replayed(g, &d, false);
	ds_retime_opts ro = {
		.max_extra_ddr = (int64_t)((double)fd.extra_ddr *
					   (1 + o.cpe.traffic_budget_pct / 100))};
	ds_plan rt;
	assert_int_equal(ds_retime(g, &raw, &ro, &rt, &e), DS_OK);
	ds_figures frt = replayed(g, &rt, false);
	if (frt.makespan < fr.makespan) {
		ds_plan_free(g->heap, &raw);
		raw = rt;
		fr = frt;
	} else {
		ds_plan_free(g->heap, &rt);
	}
	ds_replay_opts strict = {.spill_order = true};
	if (ds_replay(g, &raw, &strict, &f, &e) == DS_OK) {
		print_message("%s: CPE keeps the spills in order\n", name);
	} else {
		assert_contains(e.msg, "spill order");
		c->found = 1;
		assert_int_equal(ds_plan_sort_spills(g, &raw, &e), DS_OK);
		ds_figures fs = replayed(g, &raw, true);
		same_figures(&fr, &fs);
		o.stage = DS_STAGE_CPE;
		assert_int_equal(ds_run(g, &o, &fin, &f, &e), DS_OK);
		ds_figures ff = replayed(g, &fin, true);
		same_figures(&f, &ff);
		print_message("%s: CPE's %d spills renumbered in order, "
			      "makespan %lld; the final plan %lld\n",
			      name, raw.nspill, (long long)fr.makespan,
			      (long long)f.makespan);
		ds_plan_free(g->heap, &fin);
	}
	ds_plan_free(g->heap, &raw);
	ds_plan_free(g->heap, &d);
}

static void cpe_spills_in_order(void **state)
{
	(void)state;
	cpe_case c = {0};
	assert_true(for_each_bundled(cpe_spills_one, &c) >= 1);
	assert_true(c.found);
}

/* ---- dead reloads (ds_plan_drop_dead_reloads) ---- */

/* L1 buffer 10 used by E1, E2 and E3 in turn (UB buffer 20 beside). */
#define G_THREE_USES                                                          \
	GRAPH(ALLOC(0, 10, 64, L1) "," ALLOC(1, 20, 32, UB) ","               \
	      OP(2, E1, VECTOR, 10, "10,20") ","                              \
	      OP(3, E2, VECTOR, 10, "10,20") ","                              \
	      OP(4, E3, VECTOR, 10, "10,20") ","                              \
	      FREE(5, 10, 64, L1) "," FREE(6, 20, 32, UB),                    \
	      "[0,2],[1,2],[2,3],[3,4],[4,5],[4,6]")

/* The plan of g with order[0..len) and nspill spills of buffer 0 (BufId
 * 10) at the offsets off[]. */
static ds_plan three_uses_plan(const ds_graph *g, const int32_t *order,
			       int32_t len, const int64_t *off, int32_t nspill)
{
	ds_plan p = {len, malloc((size_t)len * sizeof(int32_t)),
		     calloc((size_t)g->nbuf, sizeof(int64_t)), nspill,
		     calloc((size_t)nspill, sizeof(ds_spill))};
	assert_true(p.order && p.offset && p.spill);
	memcpy(p.order, order, (size_t)len * sizeof *order);
	for (int32_t k = 0; k < nspill; k++)
		p.spill[k] = (ds_spill){0, off[k]};
	return p;
}

/* Two reloads spilled again unused, then a used one: one spill is left,
 * from the first SPILL_OUT to the last SPILL_IN at its offset; a reload
 * used before its buffer goes out again stays.  Every figure no worse,
 * the traffic 2 x 64 less per reload dropped. */
static void dead_reloads_dropped(void **state)
{
	(void)state;
	ds_graph *g = must_load(G_THREE_USES);
	ds_err e;
	static const int64_t off[] = {100, 200, 300};
	/* 7/8, 9/10, 11/12: the spills' SPILL_OUT/SPILL_IN */
	static const int32_t dead2[] = {0, 1, 2, 7, 8, 9, 10, 11, 12,
					3, 4, 5, 6};
	static const int32_t left2[] = {0, 1, 2, 7, 8, 3, 4, 5, 6};
	ds_plan p = three_uses_plan(g, dead2, 13, off, 3);
	ds_figures f0 = replayed(g, &p, true), f1;
	int32_t dropped;
	assert_int_equal(ds_plan_drop_dead_reloads(g, &p, &dropped, &e),
			 DS_OK);
	assert_int_equal(dropped, 2);
	assert_int_equal(p.len, 9);
	assert_memory_equal(p.order, left2, sizeof left2);
	assert_int_equal(p.nspill, 1);
	assert_int_equal(p.spill[0].offset, 300);
	f1 = replayed(g, &p, true);
	assert_int_equal(f1.extra_ddr, f0.extra_ddr - 2 * 2 * 64);
	assert_int_equal(f1.spills, 1);
	assert_true(f1.makespan <= f0.makespan);
	assert_int_equal(f1.peak_vstay, f0.peak_vstay);
	ds_plan_free(g->heap, &p);

	/* spill 0's reload used by E2; spill 1's dead */
	static const int32_t dead1[] = {0, 1, 2, 7, 8, 3, 9, 10, 11, 12,
					4, 5, 6};
	static const int32_t left1[] = {0, 1, 2, 7, 8, 3, 9, 10, 4, 5, 6};
	p = three_uses_plan(g, dead1, 13, off, 3);
	f0 = replayed(g, &p, true);
	assert_int_equal(ds_plan_drop_dead_reloads(g, &p, &dropped, &e),
			 DS_OK);
	assert_int_equal(dropped, 1);
	assert_memory_equal(p.order, left1, sizeof left1);
	assert_int_equal(p.nspill, 2);
	assert_int_equal(p.spill[0].offset, 100);
	assert_int_equal(p.spill[1].offset, 300);
	f1 = replayed(g, &p, true);
	assert_int_equal(f1.extra_ddr, f0.extra_ddr - 2 * 64);
	assert_true(f1.makespan <= f0.makespan);

	/* nothing dead: the plan as it was */
	assert_int_equal(ds_plan_drop_dead_reloads(g, &p, &dropped, &e),
			 DS_OK);
	assert_int_equal(dropped, 0);
	assert_memory_equal(p.order, left1, sizeof left1);
	ds_plan_free(g->heap, &p);
	ds_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sort_spills_relabelled),
		cmocka_unit_test(cpe_spills_in_order),
		cmocka_unit_test(dead_reloads_dropped),
		cmocka_unit_test_setup_teardown(round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(order_only, setup, teardown),
		cmocka_unit_test_setup_teardown(empty_spill_file, setup,
						teardown),
		cmocka_unit_test_setup_teardown(syntax_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(unknown_buffers, setup,
						teardown),
		cmocka_unit_test_setup_teardown(blank_lines_and_crlf, setup,
						teardown),
		cmocka_unit_test_setup_teardown(failed_write_leaves_nothing,
						setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
