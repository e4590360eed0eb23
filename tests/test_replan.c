/* test_replan.c: the tail's spills planned again (ds_replan.c).
 *
 * The fixture tests/data/Conv_Case0_405466_*.txt is `dansched schedule`'s
 * plan of Conv_Case0 before the tail was planned again (405,466 cycles at
 * 43,008 bytes, 31 spills): its last three layers are the tail. */
#include "test_util.h"

#include "ds_pipeline.h"

#define FIXTURE DS_SOURCE_DIR "/tests/data/Conv_Case0_405466_"

static void read_fixture(const ds_graph *g, ds_plan *p)
{
	ds_err e;
	if (ds_plan_read(g, FIXTURE "schedule.txt", FIXTURE "memory.txt",
			 FIXTURE "spill.txt", p, &e))
		fail_msg("%s", e.msg);
}

/* Plan p's finish times from its replay (the caller frees them). */
static int64_t *finish_times(const ds_graph *g, const ds_plan *p,
			     ds_figures *f)
{
	int64_t *fin = calloc((size_t)p->len, sizeof *fin);
	assert_non_null(fin);
	ds_replay_opts ro = {.finish = fin};
	ds_err e;
	if (ds_replay(g, p, &ro, f, &e))
		fail_msg("%s", e.msg);
	return fin;
}

/* Conv_Case0 with the fixture's plan and its replay. */
typedef struct fixture {
	ds_graph *g;
	ds_plan p;
	int64_t *fin;
	ds_figures f;
} fixture;

static void fixture_open(fixture *x)
{
	x->g = load_bundled_case("Conv_Case0");
	read_fixture(x->g, &x->p);
	x->fin = finish_times(x->g, &x->p, &x->f);
	assert_int_equal(x->f.makespan, 405466);
}

static void fixture_close(fixture *x)
{
	free(x->fin);
	ds_plan_free(x->g->heap, &x->p);
	ds_graph_free(x->g);
}

/* The fixture's tail of memory m planned again within limit bytes of
 * traffic into *q: whether that made a plan. */
static bool replan(fixture *x, int m, int64_t limit, ds_plan *q)
{
	bool changed;
	ds_err e;
	int rc = ds_replan_tail(x->g, &x->p, x->fin, m, limit, q, &changed, &e);
	if (rc != DS_OK)
		fail_msg("%s", e.msg);
	if (!changed)
		assert_null(q->order);
	return changed;
}

/* The operations of 1,700 cycles or more (the tail's CONVs and
 * COPY_OUTs) of plan p, in its order, into *out (the caller frees it). */
static int32_t long_ops(const ds_graph *g, const ds_plan *p, int32_t **out)
{
	int32_t n = 0;
	*out = malloc((size_t)p->len * sizeof **out);
	assert_non_null(*out);
	for (int32_t i = 0; i < p->len; i++)
		if (p->order[i] < g->n && g->cycles[p->order[i]] >= 1700)
			(*out)[n++] = p->order[i];
	return n;
}

/* Whether q runs the long operations in another order than p. */
static bool steps_reordered(const ds_graph *g, const ds_plan *p,
			    const ds_plan *q)
{
	int32_t *a, *b;
	int32_t na = long_ops(g, p, &a), nb = long_ops(g, q, &b);
	assert_int_equal(na, nb);
	bool diff = memcmp(a, b, (size_t)na * sizeof *a) != 0;
	free(a);
	free(b);
	return diff;
}

/* The fixture's tail (L1, from line 2,150 of 2,642: the last operations
 * of the layer before the last three on): 6,162 cycles shorter at the
 * same traffic and spill count, two of the last layer's COPY_OUTs moved
 * before the next chain's first CONV; UB has no spill, so no tail. */
static void conv_tail(void **state)
{
	(void)state;
	fixture x;
	fixture_open(&x);
	ds_plan q, r;
	ds_figures fq;
	ds_err e;
	assert_false(replan(&x, DS_UB, x.f.extra_ddr, &q));
	assert_true(replan(&x, DS_L1, x.f.extra_ddr, &q));
	ds_replay_opts strict = {.spill_order = true};
	if (ds_replay(x.g, &q, &strict, &fq, &e))
		fail_msg("%s", e.msg);
	print_message("Conv_Case0: %lld cycles at %lld bytes, %lld spills\n",
		      (long long)fq.makespan, (long long)fq.extra_ddr,
		      (long long)fq.spills);
	assert_int_equal(fq.makespan, 398410);
	assert_int_equal(fq.extra_ddr, 43008);
	assert_int_equal(fq.spills, 31);
	assert_true(steps_reordered(x.g, &x.p, &q));
	/* the same input, the same plan */
	assert_true(replan(&x, DS_L1, x.f.extra_ddr, &r));
	assert_int_equal(r.len, q.len);
	assert_memory_equal(r.order, q.order, (size_t)q.len * 4);
	assert_memory_equal(r.offset, q.offset, (size_t)x.g->nbuf * 8);
	assert_int_equal(r.nspill, q.nspill);
	assert_memory_equal(r.spill, q.spill, (size_t)q.nspill * sizeof *q.spill);
	ds_plan_free(x.g->heap, &r);
	ds_plan_free(x.g->heap, &q);
	fixture_close(&x);
}

/* The fixture with every L1 address moved up 5 bytes, at L1=4101: the
 * same tail is found (its units start at 5) and planned as at 0, to the
 * same figures as conv_tail's, every L1 address still at least 5. */
static void shifted_units(void **state)
{
	(void)state;
	fixture x;
	fixture_open(&x);
	free(x.fin);
	must_set_caps(x.g, "L1=4101");
	for (int32_t b = 0; b < x.g->nbuf; b++)
		if (x.g->buf_mem[b] == DS_L1)
			x.p.offset[b] += 5;
	for (int32_t k = 0; k < x.p.nspill; k++)
		if (x.g->buf_mem[x.p.spill[k].buf] == DS_L1)
			x.p.spill[k].offset += 5;
	x.fin = finish_times(x.g, &x.p, &x.f);
	assert_int_equal(x.f.makespan, 405466);
	ds_plan q;
	ds_figures fq;
	assert_true(replan(&x, DS_L1, x.f.extra_ddr, &q));
	must_replay(x.g, &q, &fq);
	assert_int_equal(fq.makespan, 398410);
	assert_int_equal(fq.extra_ddr, 43008);
	assert_int_equal(fq.spills, 31);
	for (int32_t b = 0; b < x.g->nbuf; b++)
		if (x.g->buf_mem[b] == DS_L1)
			assert_true(q.offset[b] >= 5);
	for (int32_t k = 0; k < q.nspill; k++)
		if (x.g->buf_mem[q.spill[k].buf] == DS_L1)
			assert_true(q.spill[k].offset >= 5);
	ds_plan_free(x.g->heap, &q);
	fixture_close(&x);
}

/* No traffic to spend: no eviction in the tail, and the fixture's tail
 * cannot do without its own. */
static void refusals(void **state)
{
	(void)state;
	fixture x;
	fixture_open(&x);
	ds_plan q;
	assert_false(replan(&x, DS_L1, 0, &q));
	fixture_close(&x);
}

/* Other traffic limits: the plan within each, one spill of 768 bytes
 * (1,536 of traffic) fewer or more than the fixture's. */
static void traffic_limits(void **state)
{
	(void)state;
	static const struct {
		int64_t limit, makespan, spills;
	} want[] = {{41472, 408342, 30}, {44544, 394946, 32}};
	fixture x;
	fixture_open(&x);
	for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
		ds_plan q;
		ds_figures fq;
		assert_true(replan(&x, DS_L1, want[k].limit, &q));
		must_replay(x.g, &q, &fq);
		print_message("limit %lld: %lld cycles, %lld spills\n",
			      (long long)want[k].limit, (long long)fq.makespan,
			      (long long)fq.spills);
		assert_int_equal(fq.extra_ddr, want[k].limit);
		assert_int_equal(fq.makespan, want[k].makespan);
		assert_int_equal(fq.spills, want[k].spills);
		ds_plan_free(x.g->heap, &q);
	}
	fixture_close(&x);
}

/* The pass keeps CPE's peak limit: at --peak-budget 0 Conv_Case0 keeps
 * DLR's peak_vstay (6,914) and the tail from before the pass (405,466
 * with it; 401,944 with the first layer's uses pulled together after,
 * ds_window.c), at the default 5 % it takes the tail's plan (398,410 at
 * 7,056; 394,888 with the first layer's). */
static void peak_budget(void **state)
{
	(void)state;
	static const struct {
		double pct;
		int64_t peak, makespan;
	} want[] = {{0, 6914, 401944}, {5, 7056, 394888}};
	ds_graph *g = load_bundled_case("Conv_Case0");
	for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
		ds_figures f = must_plan_at_peak(g, want[k].pct);
		assert_int_equal(f.peak_vstay, want[k].peak);
		assert_int_equal(f.makespan, want[k].makespan);
		assert_int_equal(f.extra_ddr, 43008);
	}
	ds_graph_free(g);
}

typedef struct replan_call {
	const ds_graph *g;
	const ds_plan *p;
	const int64_t *fin;
	ds_plan q;
	bool changed;
} replan_call;

static int replan_once(void *ctx, ds_err *e)
{
	replan_call *c = ctx;
	return ds_replan_tail(c->g, c->p, c->fin, DS_L1, 43008, &c->q,
			      &c->changed, e);
}

static void replan_done(void *ctx, int rc)
{
	replan_call *c = ctx;
	if (rc != DS_OK) {
		assert_null(c->q.order);
		return;
	}
	assert_true(c->changed);
	ds_figures f;
	must_replay(c->g, &c->q, &f);
	assert_int_equal(f.makespan, 398410);
	ds_plan_free(c->g->heap, &c->q);
}

/* Every allocation failing in turn is reported, nothing leaks. */
static void allocation_failures(void **state)
{
	(void)state;
	ds_faulty st = {0, 0, 0};
	ds_heap fh = ds_heap_faulty(&st);
	ds_graph *g = load_bundled_on(&fh, "Conv_Case0.json");
	ds_plan p;
	ds_figures f;
	read_fixture(g, &p);
	int64_t *fin = finish_times(g, &p, &f);
	replan_call c = {.g = g, .p = &p, .fin = fin};
	assert_true(alloc_sweep(&st, &(sweep){replan_once, replan_done, &c}) >
		    10);
	free(fin);
	ds_plan_free(g->heap, &p);
	ds_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(conv_tail),
		cmocka_unit_test(shifted_units),
		cmocka_unit_test(refusals),
		cmocka_unit_test(traffic_limits),
		cmocka_unit_test(peak_budget),
		cmocka_unit_test(allocation_failures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
