/* test_dlr.c: stage 2, DLR (ds_dlr.c) and the placer it uses (ds_place.c).
 *
 * On every bundled graph, from the free-first order: the plan passes
 * ds_replay, extra_ddr reaches the acceptance figure (or, where DLR is
 * short of it, stays at the measured figure, so that a regression fails),
 * two runs write the same bytes, and a copy of the graph with node Ids and
 * BufIds renumbered at random (fixed seed), given the same order renamed,
 * gets about the same extra_ddr.  Small hand-built graphs check the spill
 * rules: a victim whose data sits in DDR costs its size, a buffer needing
 * a window larger than any one victim frees two adjacent ones, a spilled
 * buffer comes back before its next use, and a graph that cannot be placed
 * at all is refused; the aged victim rule spills, among near-equal
 * choices, the buffer used longest ago; placed packed (ds_pack.c), a
 * graph whose free bytes best fit leaves in two holes needs no spill.  On a generated tiled matmul the reuse pilot keeps
 * the traffic under a measured bound, renumbered too, and plans one whose
 * chains read no inputs.  DLR's stage search (ds_dlr_stage.c) keeps no
 * more traffic than its one start's plan and refuses a start count out
 * of range.  DLR's memo gives back the plans DLR makes without it. */
#include "test_util.h"

#include "ds_dlr_stage.h"
#include "ds_stage.h"

/* ---- helpers ---- */

/* ds_dlr from the free-first order; the plan must pass ds_replay. */
static void run_dlr_order(const ds_graph *g, const int32_t *order,
			  ds_plan *p, ds_figures *f)
{
	ds_err e;
	ds_dlr_opts o;
	memset(&o, 0, sizeof o);
	int rc = ds_dlr(g, order, &o, p, &e);
	if (rc)
		fail_msg("%s: ds_dlr failed: %s", g->source, e.msg);
	rc = ds_replay(g, p, NULL, f, &e);
	if (rc)
		fail_msg("%s: replay refuses the DLR plan: %s", g->source,
			 e.msg);
	assert_true(f->has_memory);
}

static int32_t *free_first(const ds_graph *g)
{
	ds_err e;
	int32_t *ord = malloc((size_t)g->n * sizeof *ord);
	assert_non_null(ord);
	assert_int_equal(ds_order_free_first(g, ord, &e), DS_OK);
	return ord;
}

static void run_dlr(const ds_graph *g, ds_plan *p, ds_figures *f)
{
	int32_t *ord = free_first(g);
	run_dlr_order(g, ord, p, f);
	free(ord);
}

/* The graph's nodes in the order of g's DLR plan from free-first (its
 * spill nodes left out), in an array with room for copies such orders
 * (free it). */
static int32_t *dlr_graph_order(const ds_graph *g, int copies)
{
	ds_plan p;
	ds_figures f;
	run_dlr(g, &p, &f);
	int32_t *ord = test_graph_order(g, &p, copies);
	ds_plan_free(g->heap, &p);
	return ord;
}

/* The figures of order placed with aged victims at tolerance 10 (the
 * pipeline's backbone candidates' placement). */
static void aged_replay(const ds_graph *g, const int32_t *order,
			ds_figures *f)
{
	ds_place_opts po = {DS_BEST_FIT, DS_VICTIM_AGED, 10};
	ds_plan q;
	ds_err e;
	if (ds_place(g, order, &po, &q, &e) || ds_replay(g, &q, NULL, f, &e))
		fail_msg("%s", e.msg);
	ds_plan_free(g->heap, &q);
}

/* Orders from and to (to made from from, as what says) each through
 * aged_replay, both figures printed. */
static void aged_compare(const ds_graph *g, const int32_t *from,
			 const int32_t *to, const char *what,
			 ds_figures *before, ds_figures *after)
{
	aged_replay(g, from, before);
	aged_replay(g, to, after);
	print_message("aged placement: %lld at %lld, %s %lld at %lld\n",
		      (long long)before->makespan, (long long)before->extra_ddr,
		      what, (long long)after->makespan,
		      (long long)after->extra_ddr);
}

/* ds_dlr on a copy of g with node Ids and BufIds renumbered (seed), from
 * ord renamed: its figures into *f. */
static void run_dlr_renumbered(const ds_graph *g, const int32_t *ord,
			       uint64_t seed, ds_figures *f)
{
	int32_t *perm = test_shuffled(g->n, &seed);
	ds_graph *r = test_renumbered(g, perm, true, &seed);
	int32_t *rord = malloc((size_t)g->n * sizeof *rord);
	assert_non_null(rord);
	for (int32_t i = 0; i < g->n; i++)
		rord[i] = perm[ord[i]];
	ds_plan p;
	run_dlr_order(r, rord, &p, f);
	ds_plan_free(r->heap, &p);
	free(perm);
	free(rord);
	ds_graph_free(r);
}

/* Writes p into a fresh folder and returns the concatenated files. */
static char *plan_bytes(const ds_graph *g, const ds_plan *p)
{
	char *dir = make_tmpdir();
	ds_err e;
	if (ds_plan_write(g, p, dir, "case", &e))
		fail_msg("writing the plan: %s", e.msg);
	static const char *const names[] = {"case_schedule.txt",
					    "case_memory.txt",
					    "case_spill.txt"};
	size_t len = 0;
	char *all = malloc(1);
	assert_non_null(all);
	all[0] = 0;
	for (int i = 0; i < 3; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		char *s = slurp(path);
		assert_non_null(s);
		size_t l = strlen(s);
		all = realloc(all, len + l + 2);
		assert_non_null(all);
		memcpy(all + len, s, l);
		len += l;
		all[len++] = '|';
		all[len] = 0;
		free(s);
	}
	rm_tree(dir);
	return all;
}

/* ---- the bundled graphs ---- */

/* Acceptance figures (extra_ddr from the free-first order).  Where DLR is
 * short of one, known is what it reaches (see the DLR report): a
 * regression past that still fails.  A renumbered copy gets the same
 * figure (Matmul_Case0's copy once got 12,544 against 11,776: the chain
 * order's search ended in another basin as ties fell; the structural
 * rank breaks them now). */
static const struct {
	const char *file;
	int64_t figure;
	int64_t known;
} expect[] = {
	{"Conv_Case0.json", 46872, 49152},
	{"Conv_Case1.json", 44242, 0},
	{"FlashAttention_Case0.json", 3584, 0},
	{"FlashAttention_Case1.json", 32512, 0},
	{"Matmul_Case0.json", 11776, 0},
	{"Matmul_Case1.json", 230400, 0},
};

static void check_bundled(const char *name, const char *path, ds_graph *g,
			  void *ud)
{
	(void)ud;
	int32_t *ord = free_first(g);
	ds_plan pa, pb;
	ds_figures fa, fb;
	run_dlr_order(g, ord, &pa, &fa);
	run_dlr_order(g, ord, &pb, &fb);
	char *ba = plan_bytes(g, &pa), *bb = plan_bytes(g, &pb);
	if (strcmp(ba, bb))
		fail_msg("%s: two runs write different plans", path);
	free(ba);
	free(bb);
	int64_t figure = INT64_MAX, known = 0;
	for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++)
		if (!strcmp(expect[i].file, name)) {
			figure = expect[i].figure;
			known = expect[i].known;
		}
	if (fa.extra_ddr > figure) {
		if (fa.extra_ddr > known)
			fail_msg("%s: extra_ddr %lld above %lld", path,
				 (long long)fa.extra_ddr,
				 (long long)figure);
		print_message("%s: extra_ddr %lld, short of the "
			      "figure %lld (known gap)\n",
			      name, (long long)fa.extra_ddr,
			      (long long)figure);
	}
	/* renumbered, with the same order renamed: the same */
	ds_figures fr;
	run_dlr_renumbered(g, ord, 20251130, &fr);
	if (fr.extra_ddr != fa.extra_ddr)
		fail_msg("%s: renumbered copy gets extra_ddr %lld, "
			 "the original %lld",
			 path, (long long)fr.extra_ddr,
			 (long long)fa.extra_ddr);
	print_message("%s: extra_ddr %lld spills %lld (renumbered "
		      "%lld)\n",
		      name, (long long)fa.extra_ddr,
		      (long long)fa.spills, (long long)fr.extra_ddr);
	ds_plan_free(g->heap, &pa);
	ds_plan_free(g->heap, &pb);
	free(ord);
}

static void bundled_graphs(void **state)
{
	(void)state;
	assert_true(for_each_bundled(check_bundled, NULL) >= 1);
}

/* ---- spill rules on small graphs ---- */

/* Position of node v in p's order. */
static int32_t position(const ds_plan *p, int32_t v)
{
	for (int32_t i = 0; i < p->len; i++)
		if (p->order[i] == v)
			return i;
	fail_msg("node %d is not in the plan", v);
	return -1;
}

/* Every spilled buffer comes back before its next user: SPILL_IN stands
 * between SPILL_OUT and the first user after it, and before the FREE. */
static void check_reloads(const ds_graph *g, const ds_plan *p)
{
	for (int32_t k = 0; k < p->nspill; k++) {
		int32_t b = p->spill[k].buf;
		int32_t so = position(p, g->n + 2 * k);
		int32_t si = position(p, g->n + 2 * k + 1);
		assert_true(so < si);
		assert_true(si < position(p, g->buf_free[b]));
		for (int32_t j = g->user_off[b]; j < g->user_off[b + 1]; j++) {
			int32_t u = position(p, g->user[j]);
			if (u > so)
				assert_true(si < u);
		}
	}
}

/* The graph of json with L1 of l1 bytes (the other memories as SPEC.md);
 * the test fails when it does not load. */
static ds_graph *load_l1(const char *json, int64_t l1)
{
	ds_caps caps;
	ds_caps_default(&caps);
	caps.cap[DS_L1] = l1;
	ds_graph *g = NULL;
	ds_err e;
	if (load_caps(json, &caps, &g, &e))
		fail_msg("%s", e.msg);
	return g;
}

/* L1 holds two of three 100-byte buffers: C (loaded by a COPY_IN) and D
 * (written here) stay live across E's life, so one must go; C costs 100,
 * D 200. */
static const char copyin_json[] =
	GRAPH(ALLOC(0, 0, 100, L1) ","
	      OP(1, COPY_IN, MTE2, 10, "0") ","
	      ALLOC(2, 1, 100, L1) ","
	      OP(3, WRITE, MTE1, 10, "1") ","
	      ALLOC(4, 2, 100, L1) ","
	      OP(5, WRITE, MTE1, 10, "2") ","
	      OP(6, READ, MTE1, 10, "2") ","
	      FREE(7, 2, 100, L1) ","
	      OP(8, READ, MTE1, 10, "0") ","
	      OP(9, READ, MTE1, 10, "1") ","
	      FREE(10, 0, 100, L1) ","
	      FREE(11, 1, 100, L1),
	      "[0,1],[1,5],[2,3],[3,5],[4,5],[5,6],[6,7],[6,8],[6,9]"
	      ",[1,8],[8,10],[0,10],[3,9],[9,11],[2,11]");

static void copyin_victim_costs_size(void **state)
{
	(void)state;
	ds_graph *g = load_l1(copyin_json, 200);
	ds_plan p;
	ds_figures f;
	run_dlr(g, &p, &f);
	assert_int_equal(f.spills, 1);
	assert_int_equal(p.spill[0].buf, ds_graph_find_buf(g, 0));
	assert_int_equal(f.extra_ddr, 100); /* its size, not twice */
	check_reloads(g, &p);
	ds_plan_free(g->heap, &p);
	ds_graph_free(g);
}

/* L1 = 200 holds A and B, written in that order (B's writer long), when
 * C comes; A is read again a little sooner than B.  Furthest next use
 * spills B, whose SPILL_OUT waits for B's writer; the aged rule, allowed
 * a score 20% off the best, spills A, written earlier, whose SPILL_OUT
 * runs beside B's writer: the same traffic, C's window free sooner, 1,260
 * cycles down to 920 (WB 10-510, C 510-550, A back 550-900, reads to
 * 920).  Within 10% it keeps B. */
static const char aged_json[] = GRAPH(
	ALLOC(0, 0, 100, L1) "," ALLOC(1, 1, 100, L1) ","
	OP(2, WRITE, MTE1, 10, "0") "," OP(3, WRITE, MTE1, 500, "1") ","
	ALLOC(4, 2, 100, L1) "," OP(5, WORK, MTE1, 10, "2") ","
	OP(6, WORK, MTE1, 10, "2") "," OP(7, WORK, MTE1, 10, "2") ","
	OP(8, WORK, MTE1, 10, "2") "," FREE(9, 2, 100, L1) ","
	OP(10, READ, MTE1, 10, "0") "," OP(11, READ, MTE1, 10, "1") ","
	FREE(12, 0, 100, L1) "," FREE(13, 1, 100, L1),
	"[0,2],[1,3],[2,3],[4,5],[3,5],[5,6],[6,7],[7,8],[8,9],[8,10]"
	",[3,10],[10,11],[10,12],[11,13]");

/* The plan ds_place makes of g in Id order with victim rule v, tie_pct
 * tie; its figures in *f. */
static void place_ids(const ds_graph *g, int v, int32_t tie, ds_plan *p,
		      ds_figures *f)
{
	int32_t order[14];
	ds_err e;
	assert_int_equal(g->n, 14);
	assert_int_equal(ds_order_id(g, order, &e), DS_OK);
	ds_place_opts o = {DS_BEST_FIT, v, tie};
	if (ds_place(g, order, &o, p, &e) || ds_replay(g, p, NULL, f, &e))
		fail_msg("%s", e.msg);
}

static void aged_victims(void **state)
{
	(void)state;
	ds_graph *g = load_l1(aged_json, 200);
	ds_plan p;
	ds_figures far, aged, near;
	place_ids(g, DS_VICTIM_FURTHEST, 0, &p, &far);
	assert_int_equal(far.spills, 1);
	assert_int_equal(p.spill[0].buf, ds_graph_find_buf(g, 1));
	ds_plan_free(g->heap, &p);
	place_ids(g, DS_VICTIM_AGED, 10, &p, &near);
	assert_int_equal(p.spill[0].buf, ds_graph_find_buf(g, 1));
	assert_int_equal(near.makespan, far.makespan);
	ds_plan_free(g->heap, &p);
	place_ids(g, DS_VICTIM_AGED, 20, &p, &aged);
	assert_int_equal(aged.spills, 1);
	assert_int_equal(p.spill[0].buf, ds_graph_find_buf(g, 0));
	check_reloads(g, &p);
	assert_int_equal(aged.extra_ddr, far.extra_ddr);
	assert_int_equal(far.makespan, 1260);
	assert_int_equal(aged.makespan, 920);
	ds_plan_free(g->heap, &p);
	ds_graph_free(g);
}

/* L1 = 200 holds two of three 100-byte buffers, each written (W) then
 * read (R); in the Id order all three are written before any is read,
 * so placing it spills one between its write and its read. */
#define PULL_NODES                                                             \
	ALLOC(0, 0, 100, L1) "," OP(1, W, MTE1, 10, "0") ","                   \
	ALLOC(2, 1, 100, L1) "," OP(3, W, MTE1, 10, "1") ","                   \
	ALLOC(4, 2, 100, L1) "," OP(5, W, MTE1, 10, "2") ","                   \
	OP(6, R, VECTOR, 10, "0") "," FREE(7, 0, 100, L1) ","                  \
	OP(8, R, VECTOR, 10, "1") "," FREE(9, 1, 100, L1) ","                  \
	OP(10, R, VECTOR, 10, "2") "," FREE(11, 2, 100, L1)
static const char pull_json[] = GRAPH(PULL_NODES, "[1,6],[3,8],[5,10]");

/* The Id order of g placed (best fit, furthest next use) into *p: one
 * spill, of B (BufId 1). */
static void place_pull_graph(const ds_graph *g, int32_t *order, ds_plan *p)
{
	ds_figures f;
	ds_err e;
	ds_place_opts o = {DS_BEST_FIT, DS_VICTIM_FURTHEST, 0};
	assert_int_equal(ds_order_id(g, order, &e), DS_OK);
	if (ds_place(g, order, &o, p, &e) || ds_replay(g, p, NULL, &f, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(f.spills, 1);
	assert_int_equal(p->spill[0].buf, ds_graph_find_buf(g, 1));
}

/* ds_order_pull: the read of the spilled buffer (B, node 8, furthest
 * next use) moves up to right after its write, its FREE after it; the
 * order placed again needs no spill; a plan without spills is its own
 * order. */
static void pull_spilled_use(void **state)
{
	(void)state;
	ds_graph *g = load_l1(pull_json, 200);
	int32_t order[12], pulled[12], moved;
	const int32_t want[12] = {0, 1, 2, 3, 8, 9, 4, 5, 6, 7, 10, 11};
	ds_plan p, q;
	ds_figures f;
	ds_err e;
	ds_place_opts o = {DS_BEST_FIT, DS_VICTIM_FURTHEST, 0};
	place_pull_graph(g, order, &p);
	assert_int_equal(ds_order_pull(g, &p, true, pulled, &moved, &e), DS_OK);
	assert_int_equal(moved, 1);
	assert_memory_equal(pulled, want, sizeof want);
	if (ds_place(g, pulled, &o, &q, &e) || ds_replay(g, &q, NULL, &f, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(f.spills, 0);
	assert_int_equal(ds_order_pull(g, &q, true, order, &moved, &e), DS_OK);
	assert_int_equal(moved, 0);
	assert_memory_equal(order, pulled, sizeof want);
	ds_plan_free(g->heap, &p);
	ds_plan_free(g->heap, &q);
	ds_graph_free(g);
}

/* The same graph without the edge from B's write to its read: the
 * direct pull leaves the order alone, the undirected one moves the read
 * up as before. */
static const char pull_any_json[] = GRAPH(PULL_NODES, "[1,6],[5,10]");

static void pull_any_pair(void **state)
{
	(void)state;
	ds_graph *g = load_l1(pull_any_json, 200);
	int32_t order[12], pulled[12], moved;
	const int32_t want[12] = {0, 1, 2, 3, 8, 9, 4, 5, 6, 7, 10, 11};
	ds_plan p;
	ds_err e;
	place_pull_graph(g, order, &p);
	assert_int_equal(ds_order_pull(g, &p, true, pulled, &moved, &e), DS_OK);
	assert_int_equal(moved, 0);
	assert_memory_equal(pulled, order, sizeof want);
	assert_int_equal(ds_order_pull(g, &p, false, pulled, &moved, &e), DS_OK);
	assert_int_equal(moved, 1);
	assert_memory_equal(pulled, want, sizeof want);
	ds_plan_free(g->heap, &p);
	ds_graph_free(g);
}

/* L1 = 210: A, B, C (100 bytes) written, A read, then D (10 bytes)
 * written and read with B, C read last.  In the Id order B is spilled
 * between its write (3) and its read (10), which needs D's write (9)
 * and ALLOC (8) first: ds_order_pull cannot move it, ds_order_pull_one
 * moves it with them. */
#define PULL_ONE_NODES                                                         \
	ALLOC(0, 0, 100, L1) "," OP(1, W, MTE1, 10, "0") ","                   \
	ALLOC(2, 1, 100, L1) "," OP(3, W, MTE1, 10, "1") ","                   \
	ALLOC(4, 2, 100, L1) "," OP(5, W, MTE1, 10, "2") ","                   \
	OP(6, R, VECTOR, 10, "0") "," FREE(7, 0, 100, L1) ","                  \
	ALLOC(8, 3, 10, L1) "," OP(9, W, MTE1, 10, "3") ","                    \
	OP(10, R, VECTOR, 10, "1,3") "," FREE(11, 1, 100, L1) ","              \
	FREE(12, 3, 10, L1) "," OP(13, R, VECTOR, 10, "2") ","                 \
	FREE(14, 2, 100, L1)
static const char pull_one_json[] =
	GRAPH(PULL_ONE_NODES, "[1,6],[3,10],[9,10],[5,13]");

/* ds_pull_pairs with later on plan p of pull_one_json, whose one spill
 * (nodes 15 and 16) is B's: no pair; with B spilled again (17, 18)
 * after its reload, the pair (3, 10) around that second SPILL_OUT, and
 * without later still the one around the first. */
static void later_pairs(const ds_graph *g, const ds_plan *p)
{
	int32_t early, late, count, order[19], len = 0;
	ds_err e;
	assert_int_equal(ds_pull_pairs(g, p, true, 4, &early, &late, &count,
				       &e),
			 DS_OK);
	assert_int_equal(count, 0);
	assert_true(p->len == 17 && p->nspill == 1);
	for (int32_t i = 0; i < p->len; i++) {
		order[len++] = p->order[i];
		if (p->order[i] == 16) { /* B's reload, before 10 */
			order[len++] = 17;
			order[len++] = 18;
		}
	}
	ds_spill twice[2] = {p->spill[0], p->spill[0]};
	ds_plan q = {len, order, NULL, 2, twice};
	for (int later = 0; later < 2; later++) {
		assert_int_equal(ds_pull_pairs(g, &q, later, 4, &early, &late,
					       &count, &e),
				 DS_OK);
		assert_int_equal(count, 1);
		assert_int_equal(early, 3);
		assert_int_equal(late, 10);
	}
}

/* ds_pull_pairs finds B's pair (3, 10); ds_order_pull moves nothing
 * there; ds_order_pull_one moves 10 with 8 and 9 up to right after 3
 * (one ancestor that needs something: 9), and again moves nothing, nor
 * with the pair reversed. */
static void pull_one_with_ancestors(void **state)
{
	(void)state;
	ds_graph *g = load_l1(pull_one_json, 210);
	int32_t order[15], pulled[15], moved, early, late, count;
	const int32_t want[15] = {0, 1, 2, 3, 8, 9, 10, 4,
				  5, 6, 7, 11, 12, 13, 14};
	ds_plan p;
	ds_figures f;
	ds_err e;
	ds_place_opts o = {DS_BEST_FIT, DS_VICTIM_FURTHEST, 0};
	assert_int_equal(ds_order_id(g, order, &e), DS_OK);
	if (ds_place(g, order, &o, &p, &e) || ds_replay(g, &p, NULL, &f, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(f.spills, 1);
	assert_int_equal(p.spill[0].buf, ds_graph_find_buf(g, 1));
	assert_int_equal(ds_pull_pairs(g, &p, false, 4, &early, &late,
				       &count, &e),
			 DS_OK);
	assert_int_equal(count, 1);
	assert_int_equal(early, 3);
	assert_int_equal(late, 10);
	later_pairs(g, &p);
	assert_int_equal(ds_order_pull(g, &p, false, pulled, &moved, &e),
			 DS_OK);
	assert_int_equal(moved, 0);
	assert_int_equal(ds_order_pull_one(g, order, 3, 10, &moved, &e),
			 DS_OK);
	assert_int_equal(moved, 1);
	assert_memory_equal(order, want, sizeof want);
	assert_int_equal(ds_order_check(g, order, "pulled", &e), DS_OK);
	for (int k = 0; k < 2; k++) { /* (3, 10) again, then (10, 3) */
		assert_int_equal(ds_order_pull_one(g, order, k ? 10 : 3,
						   k ? 3 : 10, &moved, &e),
				 DS_OK);
		assert_int_equal(moved, 0);
		assert_memory_equal(order, want, sizeof want);
	}
	ds_plan_free(g->heap, &p);
	ds_graph_free(g);
}

/* L1 = 100 full of four 25-byte buffers written one after the other and
 * all read after T (50 bytes) has come and gone: T's window must be two
 * adjacent victims, and they come back before their readers. */
static void contiguous_window(void **state)
{
	(void)state;
	ds_text t;
	ds_text_init(&t, ds_heap_std());
	ds_text_printf(&t, "{\"Nodes\":[");
	/* P..S: buffers 0..3, nodes 4*i .. 4*i+3 (ALLOC, WRITE, READ,
	 * FREE); T: buffer 4, nodes 16..19 */
	for (int i = 0; i < 5; i++) {
		int sz = i < 4 ? 25 : 50;
		ds_text_printf(&t,
			       "%s{\"Id\":%d,\"Op\":\"ALLOC\",\"BufId\":%d,"
			       "\"Size\":%d,\"Type\":\"L1\"},"
			       "{\"Id\":%d,\"Op\":\"WRITE\",\"Pipe\":\"MTE1\","
			       "\"Cycles\":10,\"Bufs\":[%d]},"
			       "{\"Id\":%d,\"Op\":\"READ\",\"Pipe\":\"MTE1\","
			       "\"Cycles\":10,\"Bufs\":[%d]},"
			       "{\"Id\":%d,\"Op\":\"FREE\",\"BufId\":%d,"
			       "\"Size\":%d,\"Type\":\"L1\"}",
			       i ? "," : "", 4 * i, i, sz, 4 * i + 1, i,
			       4 * i + 2, i, 4 * i + 3, i, sz);
	}
	ds_text_printf(&t, "],\"Edges\":[");
	for (int i = 0; i < 5; i++)
		ds_text_printf(&t, "%s[%d,%d],[%d,%d],[%d,%d]", i ? "," : "",
			       4 * i, 4 * i + 1, 4 * i + 1, 4 * i + 2,
			       4 * i + 2, 4 * i + 3);
	/* every writer before T's writer, T's reader before every reader */
	for (int i = 0; i < 4; i++)
		ds_text_printf(&t, ",[%d,17],[18,%d]", 4 * i + 1, 4 * i + 2);
	ds_text_printf(&t, "]}");
	assert_false(t.failed);
	ds_graph *g = load_l1(t.s, 100);
	ds_text_free(&t);
	ds_plan p;
	ds_figures f;
	run_dlr(g, &p, &f);
	assert_int_equal(f.spills, 2);
	assert_int_equal(f.extra_ddr, 100);
	int32_t tb = ds_graph_find_buf(g, 4);
	int64_t lo = p.offset[tb], hi = lo + 50;
	int64_t o0 = p.offset[p.spill[0].buf], o1 = p.offset[p.spill[1].buf];
	/* the two victims sat side by side exactly where T goes */
	assert_true(o0 >= lo && o0 + 25 <= hi);
	assert_true(o1 >= lo && o1 + 25 <= hi);
	assert_true(o0 != o1);
	check_reloads(g, &p);
	ds_plan_free(g->heap, &p);
	ds_graph_free(g);
}

/* L1 = 100 filled by A, B, C and D (25 bytes each, written together);
 * A and C are read and freed, then T (50 bytes) comes while B and D
 * wait for their reader.  Along the order, best fit put A..D side by
 * side, so the two free quarters are apart and T costs a spill; placed
 * packed (ds_place_packed: the spills on bytes, the addresses after),
 * A and C share one half with T and nothing is spilled. */
#define FRAG_JSON(tsize)                                                     \
	GRAPH(ALLOC(0, 0, 25, L1) "," ALLOC(1, 1, 25, L1) ","                \
	      ALLOC(2, 2, 25, L1) "," ALLOC(3, 3, 25, L1) ","                \
	      OP(4, WRITE, MTE1, 10, "0,1,2,3") ","                          \
	      OP(5, READ, MTE1, 10, "0") "," FREE(6, 0, 25, L1) ","          \
	      OP(7, READ, MTE1, 10, "2") "," FREE(8, 2, 25, L1) ","          \
	      ALLOC(9, 4, tsize, L1) "," OP(10, WORK, MTE1, 10, "4") ","     \
	      FREE(11, 4, tsize, L1) ","                                     \
	      OP(12, READ, MTE1, 10, "1,3") "," FREE(13, 1, 25, L1) ","      \
	      FREE(14, 3, 25, L1),                                           \
	      "[4,5],[4,7],[10,12]")
static const char frag_json[] = FRAG_JSON(50);
/* T of 75 bytes: the bytes do not fit, B or D goes out and back */
static const char frag75_json[] = FRAG_JSON(75);

/* order[0..15): the 15-node graphs below in Id order. */
static void id_order15(int32_t order[15])
{
	for (int32_t i = 0; i < 15; i++)
		order[i] = i;
}

/* frag_json's graph placed in Id order: by ds_place (packed false) or
 * ds_place_packed; the plan must pass ds_replay. */
static void place_frag(const ds_graph *g, bool packed, ds_plan *p,
		       ds_figures *f)
{
	int32_t order[15];
	assert_int_equal(g->n, 15);
	id_order15(order);
	ds_place_opts o = {DS_BEST_FIT, DS_VICTIM_FURTHEST, 0};
	ds_err e;
	bool fits = true;
	int rc = packed ? ds_place_packed(g, order, &o, 0, p, &fits, &e)
			: ds_place(g, order, &o, p, &e);
	if (rc)
		fail_msg("placement failed: %s", e.msg);
	assert_true(fits);
	if (ds_replay(g, p, NULL, f, &e))
		fail_msg("replay refuses the plan: %s", e.msg);
}

static void packed_without_holes(void **state)
{
	(void)state;
	ds_graph *g = load_l1(frag_json, 100);
	ds_plan p;
	ds_figures f;
	place_frag(g, false, &p, &f);
	assert_int_equal(f.spills, 1);
	ds_plan_free(g->heap, &p);
	place_frag(g, true, &p, &f);
	assert_int_equal(f.spills, 0);
	assert_int_equal(f.extra_ddr, 0);
	/* T lies where A and C were */
	int64_t t = p.offset[ds_graph_find_buf(g, 4)];
	int64_t a = p.offset[ds_graph_find_buf(g, 0)];
	int64_t c = p.offset[ds_graph_find_buf(g, 2)];
	assert_true(a >= t && a + 25 <= t + 50);
	assert_true(c >= t && c + 25 <= t + 50);
	ds_plan_free(g->heap, &p);
	ds_graph_free(g);
	g = load_l1(frag75_json, 100);
	place_frag(g, true, &p, &f);
	assert_int_equal(f.spills, 1);
	assert_int_equal(f.extra_ddr, 50);
	check_reloads(g, &p);
	ds_plan_free(g->heap, &p);
	ds_graph_free(g);
}

/* Five buffers in Id order, L1 = 60, at most 50 bytes live at once: A
 * (20 bytes) until D is written, B (30) early, C (10) and D (20) after B,
 * E (30) at the end, with D.  Both greedy packings (the broadest first,
 * the largest first: B, E, A, D, C) put B and E at 0, A above B, and
 * leave D, which meets A and E, no room below 70; one round with the
 * buffers that stood out placed first (ds_pack.c, pk_promote) fits. */
static const char rounds_json[] =
	GRAPH(ALLOC(0, 0, 20, L1) "," OP(1, A, MTE1, 10, "0") ","
	      ALLOC(2, 1, 30, L1) "," OP(3, B, MTE1, 10, "1") ","
	      FREE(4, 1, 30, L1) "," ALLOC(5, 2, 10, L1) ","
	      OP(6, C, MTE1, 10, "2") "," ALLOC(7, 3, 20, L1) ","
	      OP(8, D, MTE1, 10, "3") "," FREE(9, 2, 10, L1) ","
	      FREE(10, 0, 20, L1) "," ALLOC(11, 4, 30, L1) ","
	      OP(12, E, MTE1, 10, "4") "," FREE(13, 3, 20, L1) ","
	      FREE(14, 4, 30, L1),
	      "[0,1],[2,3],[3,4],[5,6],[7,8],[6,9],[1,10],[11,12],[8,13],"
	      "[12,14]");

static void packed_rounds(void **state)
{
	(void)state;
	ds_graph *g = load_l1(rounds_json, 60);
	int32_t order[15];
	assert_int_equal(g->n, 15);
	id_order15(order);
	ds_place_opts o = {DS_BEST_FIT, DS_VICTIM_FURTHEST, 0};
	ds_plan p;
	ds_figures f;
	ds_err e;
	bool fits = true;
	assert_int_equal(ds_place_packed(g, order, &o, 0, &p, &fits, &e),
			 DS_OK);
	assert_false(fits);
	assert_int_equal(ds_place_packed(g, order, &o, 1, &p, &fits, &e),
			 DS_OK);
	assert_true(fits);
	if (ds_replay(g, &p, NULL, &f, &e))
		fail_msg("replay refuses the plan: %s", e.msg);
	assert_int_equal(f.spills, 0);
	assert_int_equal(f.peak_mem[DS_L1], 50);
	ds_plan_free(g->heap, &p);
	ds_graph_free(g);
}

/* ds_place_packed under every allocation failing in turn. */
typedef struct frag_ctx {
	ds_graph *g;
	ds_plan p;
} frag_ctx;

static int frag_run(void *ctx, ds_err *e)
{
	frag_ctx *c = ctx;
	int32_t order[15];
	id_order15(order);
	ds_place_opts o = {DS_BEST_FIT, DS_VICTIM_COST, 0};
	bool fits;
	return ds_place_packed(c->g, order, &o, 4, &c->p, &fits, e);
}

static void frag_done(void *ctx, int rc)
{
	frag_ctx *c = ctx;
	if (rc == DS_OK)
		ds_plan_free(c->g->heap, &c->p);
}

static void packed_out_of_memory(void **state)
{
	(void)state;
	ds_faulty st = {0, 0, 0};
	ds_heap fh = ds_heap_faulty(&st);
	frag_ctx c = {load_l1(frag75_json, 100), {0}};
	const ds_heap *keep = c.g->heap;
	c.g->heap = &fh;
	sweep w = {frag_run, frag_done, &c};
	assert_true(alloc_sweep(&st, &w) > 0);
	c.g->heap = keep;
	ds_graph_free(c.g);
}

/* One operation needs more L1 than there is: refused, nothing returned. */
static void cannot_be_placed(void **state)
{
	(void)state;
	static const char json[] =
		GRAPH(ALLOC(0, 0, 3000, L1) ","
		      ALLOC(1, 1, 2000, L1) ","
		      OP(2, ADD, VECTOR, 5, "0,1") ","
		      FREE(3, 0, 3000, L1) ","
		      FREE(4, 1, 2000, L1),
		      "[0,2],[1,2],[2,3],[2,4]");
	ds_graph *g = must_load(json);
	int32_t *ord = free_first(g);
	ds_plan p;
	ds_err e;
	memset(&e, 0, sizeof e);
	assert_int_equal(ds_dlr(g, ord, NULL, &p, &e), DS_EINPUT);
	assert_int_equal(e.code, DS_EINPUT);
	assert_contains(e.msg, "L1");
	assert_null(p.order);
	assert_null(p.offset);
	free(ord);
	ds_graph_free(g);
}

/* The operations on the first accumulator's buffer that stand before
 * the first one on another accumulator's (Matmul_Case0: each L0C buffer
 * an accumulator), from the order's start, or from its end (from_end:
 * the last accumulator's, after the last one on another's): the lag
 * between the lanes' first (last) chains plus one. */
static int32_t lane_lag(const ds_graph *g, const int32_t *order,
			bool from_end)
{
	int32_t first = -1, steps = 0;
	for (int32_t k = 0; k < g->n; k++) {
		int32_t v = order[from_end ? g->n - 1 - k : k], b = -1;
		for (int32_t q = g->use_off[v]; q < g->use_off[v + 1]; q++)
			if (g->buf_mem[g->use[q]] == DS_L0C)
				b = g->use[q];
		if (b < 0 || g->kind[v] != DS_OP)
			continue;
		if (first < 0)
			first = b;
		if (b != first)
			return steps;
		steps++;
	}
	return -1;
}

/* The most L0C buffers live at once along an order (ALLOC to FREE). */
static int32_t most_l0c(const ds_graph *g, const int32_t *order)
{
	int32_t live = 0, most = 0;
	for (int32_t i = 0; i < g->n; i++) {
		int32_t v = order[i];
		if (g->kind[v] == DS_OP || g->buf_mem[g->buf[v]] != DS_L0C)
			continue;
		live += g->kind[v] == DS_ALLOC ? 1 : -1;
		most = live > most ? live : most;
	}
	return most;
}

/* Groups of accumulators relayed (ds_dlr_relay) on Conv_Case0's DLR
 * order from free-first: in each late layer four accumulators run one after another over
 * the same four inputs, and every accumulator of the next layer reads
 * first the result of this layer's first one; relayed, the one whose
 * result is needed first runs last.  A topological order, the same bytes
 * twice; placed with aged victims it replays shorter at less traffic
 * (493,233 at 51,460 bytes -> 478,746 at 49,156; from the pipeline's DLR
 * plan it is CPE's backbone: test_pipeline, aged_finals).  Matmul_Case0's
 * accumulators run side by side (no group): left alone. */
static void relay_groups(void **state)
{
	(void)state;
	ds_graph *g = load_bundled("Conv_Case0.json");
	ds_err e;
	int32_t *ord = dlr_graph_order(g, 3);
	int32_t *rl = ord + g->n, *again = ord + 2 * g->n;
	bool changed = false;
	assert_int_equal(ds_dlr_relay(g, ord, rl, &changed, &e), DS_OK);
	assert_true(changed);
	assert_int_equal(ds_order_check(g, rl, "relay", &e), DS_OK);
	assert_int_equal(ds_dlr_relay(g, ord, again, &changed, &e), DS_OK);
	assert_memory_equal(rl, again, (size_t)g->n * sizeof *rl);
	ds_figures before, after;
	aged_compare(g, ord, rl, "relayed", &before, &after);
	assert_int_equal(before.makespan, 493233);
	assert_int_equal(before.extra_ddr, 51460);
	assert_int_equal(after.makespan, 478746);
	assert_int_equal(after.extra_ddr, 49156);
	free(ord);
	ds_graph_free(g);
	g = load_bundled("Matmul_Case0.json");
	ord = dlr_graph_order(g, 2);
	assert_int_equal(ds_dlr_relay(g, ord, ord + g->n, &changed, &e), DS_OK);
	assert_false(changed);
	free(ord);
	ds_graph_free(g);
}

/* Accumulators staggered (ds_dlr_stagger) on Matmul_Case0's DLR order
 * from free-first (lockstep: lag 0): two lanes (L0C holds two
 * accumulators) half a chain of 9 steps apart at div 1 (4 steps), 2 at
 * div 2, none below one step; the lanes' last accumulators side by side
 * again (4 steps apart before, when the staggered order replayed at
 * 116,571 below);
 * a topological order still holding two accumulators at most, the same
 * bytes twice; placed with aged victims it replays shorter than the
 * order it came from (121,946 -> 117,911, at more traffic here: 11,776
 * -> 12,288; the pipeline takes it only within its cap; 115,915 before
 * the reload phase's accumulators that free nothing ran after the next
 * one that frees (sg_delay), which shortens the pipeline's final plan,
 * test_pipeline).  A graph whose
 * order never runs two accumulators side by side is left alone. */
static void stagger_accumulators(void **state)
{
	(void)state;
	ds_graph *g = load_bundled("Matmul_Case0.json");
	ds_err e;
	int32_t *ord = dlr_graph_order(g, 3);
	int32_t *st = ord + g->n, *again = ord + 2 * g->n;
	bool changed = false;
	assert_int_equal(lane_lag(g, ord, false), 1);
	assert_int_equal(ds_dlr_stagger(g, ord, 1, st, &changed, &e), DS_OK);
	assert_true(changed);
	assert_int_equal(ds_order_check(g, st, "stagger", &e), DS_OK);
	assert_int_equal(lane_lag(g, st, false), 5);
	assert_int_equal(lane_lag(g, ord, true), 1);
	assert_int_equal(lane_lag(g, st, true), 1);
	assert_int_equal(most_l0c(g, st), 2);
	assert_int_equal(ds_dlr_stagger(g, ord, 1, again, &changed, &e), DS_OK);
	assert_memory_equal(st, again, (size_t)g->n * sizeof *st);
	ds_figures before, after;
	aged_compare(g, ord, st, "staggered", &before, &after);
	assert_int_equal(before.makespan, 121946);
	assert_int_equal(before.extra_ddr, 11776);
	assert_int_equal(after.makespan, 117911);
	assert_int_equal(after.extra_ddr, 12288);
	assert_int_equal(ds_dlr_stagger(g, ord, 2, st, &changed, &e), DS_OK);
	assert_true(changed);
	assert_int_equal(lane_lag(g, st, false), 3);
	assert_int_equal(lane_lag(g, st, true), 1);
	memcpy(again, st, (size_t)g->n * sizeof *st);
	assert_int_equal(ds_dlr_stagger(g, ord, 8, st, &changed, &e), DS_OK);
	assert_false(changed);
	assert_memory_equal(st, again, (size_t)g->n * sizeof *st);
	free(ord);
	ds_graph_free(g);
	g = load_bundled("FlashAttention_Case0.json");
	ord = dlr_graph_order(g, 2);
	assert_int_equal(ds_dlr_stagger(g, ord, 1, ord + g->n, &changed, &e),
			 DS_OK);
	assert_false(changed);
	free(ord);
	ds_graph_free(g);
}

/* Effort adds candidates, never makes the plan worse. */
static void effort_never_worse(void **state)
{
	(void)state;
	char path[4096];
	snprintf(path, sizeof path, "%s/data/Matmul_Case0.json",
		 DS_SOURCE_DIR);
	ds_graph *g = NULL;
	ds_err e;
	ds_caps caps;
	ds_caps_default(&caps);
	if (ds_load_graph(ds_heap_std(), path, &caps, &g, &e))
		fail_msg("%s", e.msg);
	int32_t *ord = free_first(g);
	ds_plan p1, p3;
	ds_figures f1, f3;
	run_dlr_order(g, ord, &p1, &f1);
	ds_dlr_opts o = {.effort = 3};
	if (ds_dlr(g, ord, &o, &p3, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(ds_replay(g, &p3, NULL, &f3, &e), DS_OK);
	assert_true(f3.extra_ddr <= f1.extra_ddr);
	ds_plan_free(g->heap, &p1);
	ds_plan_free(g->heap, &p3);
	free(ord);
	ds_graph_free(g);
}

/* A generated tiled matmul (not one of the bundled graphs): the reuse
 * pilot orders its accumulation chains so that the loaded tiles are
 * reused before they leave.  Measured: 29184 (a renumbered copy 29696);
 * before the pilot, `dansched schedule --stage dlr` on the same graph got
 * 39424 from stage 1's order. */
#define PILOT_GEN_BOUND 31232

/* DLR from free-first on g and on a copy renumbered with seed: both
 * within bound (extra_ddr). */
static void dlr_within(ds_graph *g, const char *what, uint64_t seed,
		       int64_t bound)
{
	int32_t *ord = free_first(g);
	ds_plan p;
	ds_figures f, fr;
	run_dlr_order(g, ord, &p, &f);
	print_message("%s: extra_ddr %lld spills %lld\n", what,
		      (long long)f.extra_ddr, (long long)f.spills);
	run_dlr_renumbered(g, ord, seed, &fr);
	print_message("%s renumbered: extra_ddr %lld\n", what,
		      (long long)fr.extra_ddr);
	assert_true(f.extra_ddr <= bound);
	assert_true(fr.extra_ddr <= bound);
	ds_plan_free(g->heap, &p);
	free(ord);
}

static void pilot_on_generated_matmul(void **state)
{
	(void)state;
	ds_graph *g = must_generate(DS_GEN_MATMUL, 5000, 1);
	dlr_within(g, "generated matmul", 7, PILOT_GEN_BOUND);
	ds_graph_free(g);
}

/* `dansched gen --kind matmul --nodes 300 --seed 7`: its chains'
 * steps read no inputs, their input list was never allocated, and the
 * pilot copied it from a NULL pointer (undefined behaviour: UBSan
 * stopped the run).  It fits the default capacities: no traffic. */
static void pilot_without_inputs(void **state)
{
	(void)state;
	ds_graph *g = must_generate(DS_GEN_MATMUL, 300, 7);
	dlr_within(g, "generated matmul (300 nodes, seed 7)", 7, 0);
	ds_graph_free(g);
}

/* ---- a tiled matmul, written out here ----
 *
 * C[M x N] = A[M x K] B[K x N] in tiles, as the bundled Matmul graphs are
 * built: each L1 tile of A and B loaded once (COPY_IN) and shared, one L0C
 * accumulator (256 bytes: two fit) per output tile with a chain of K
 * MATMULs, each fed by MOVEs to L0A and L0B, then COPY_OUT.  Output tiles
 * in row-major order, node Ids in creation order. */

typedef struct text {
	char *s;
	size_t len, cap;
} text;

static void put(text *t, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int n = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		assert_true(n >= 0);
		if ((size_t)n < t->cap - t->len) {
			t->len += (size_t)n;
			return;
		}
		t->cap = 2 * t->cap + (size_t)n + 64;
		t->s = realloc(t->s, t->cap);
		assert_non_null(t->s);
	}
}

typedef struct mmgen {
	text nodes, edges;
	int nid, nbuf;
} mmgen;

static int mm_node(mmgen *m, const char *fields)
{
	put(&m->nodes, "%s{\"Id\":%d,%s}", m->nid ? "," : "", m->nid,
	    fields);
	return m->nid++;
}

static void mm_edge(mmgen *m, int a, int b)
{
	put(&m->edges, "%s[%d,%d]", m->edges.len ? "," : "", a, b);
}

/* A buffer: its ALLOC's Id into *alloc, its BufId returned. */
static int mm_alloc(mmgen *m, const char *mem, int size, int *alloc)
{
	char f[128];
	snprintf(f, sizeof f,
		 "\"Op\":\"ALLOC\",\"BufId\":%d,\"Size\":%d,\"Type\":\"%s\"",
		 m->nbuf, size, mem);
	*alloc = mm_node(m, f);
	return m->nbuf++;
}

static int mm_free(mmgen *m, int b, const char *mem, int size)
{
	char f[128];
	snprintf(f, sizeof f,
		 "\"Op\":\"FREE\",\"BufId\":%d,\"Size\":%d,\"Type\":\"%s\"",
		 b, size, mem);
	return mm_node(m, f);
}

static int mm_op(mmgen *m, const char *op, const char *pipe, int bufs0,
		 int bufs1, int bufs2, int nbufs)
{
	char f[160];
	int n = snprintf(f, sizeof f,
			 "\"Op\":\"%s\",\"Pipe\":\"%s\",\"Cycles\":64,"
			 "\"Bufs\":[%d",
			 op, pipe, bufs0);
	if (nbufs > 1)
		n += snprintf(f + n, sizeof f - (size_t)n, ",%d", bufs1);
	if (nbufs > 2)
		n += snprintf(f + n, sizeof f - (size_t)n, ",%d", bufs2);
	snprintf(f + n, sizeof f - (size_t)n, "]");
	return mm_node(m, f);
}

static char *tiled_matmul_json(int M, int N, int K, int l1)
{
	mmgen m;
	memset(&m, 0, sizeof m);
	int ntile = M * K + K * N;
	int *tb = malloc((size_t)ntile * sizeof *tb);  /* tile -> BufId */
	int *tl = malloc((size_t)ntile * sizeof *tl);  /* tile -> COPY_IN */
	int *tu = malloc((size_t)ntile * M * N * K * sizeof *tu); /* MOVEs */
	int *nu = calloc((size_t)ntile, sizeof *nu);
	assert_true(tb && tl && tu && nu);
	for (int i = 0; i < ntile; i++) {
		int a;
		tb[i] = mm_alloc(&m, "L1", l1, &a);
		tl[i] = mm_op(&m, "COPY_IN", "MTE2", tb[i], 0, 0, 1);
		mm_edge(&m, a, tl[i]);
	}
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			int ca, c = mm_alloc(&m, "L0C", 256, &ca), prev = ca;
			for (int k = 0; k < K; k++) {
				int src[2] = {i * K + k, M * K + k * N + j};
				int l0[2], mv[2];
				for (int s = 0; s < 2; s++) {
					int a;
					l0[s] = mm_alloc(&m, s ? "L0B" : "L0A", 128,
							 &a);
					mv[s] = mm_op(&m, "MOVE", "MTE1", l0[s],
						      tb[src[s]], 0, 2);
					mm_edge(&m, a, mv[s]);
					mm_edge(&m, tl[src[s]], mv[s]);
					tu[src[s] * M * N * K + nu[src[s]]++] =
						mv[s];
				}
				int mm = mm_op(&m, "MATMUL", "CUBE", c, l0[1],
					       l0[0], 3);
				mm_edge(&m, mv[0], mm);
				mm_edge(&m, mv[1], mm);
				mm_edge(&m, prev, mm);
				for (int s = 0; s < 2; s++)
					mm_edge(&m, mm,
						mm_free(&m, l0[s],
							s ? "L0B" : "L0A", 128));
				prev = mm;
			}
			int out = mm_op(&m, "COPY_OUT", "FIXP", c, 0, 0, 1);
			mm_edge(&m, prev, out);
			mm_edge(&m, out, mm_free(&m, c, "L0C", 256));
		}
	for (int i = 0; i < ntile; i++) {
		int f = mm_free(&m, tb[i], "L1", l1);
		for (int u = 0; u < nu[i]; u++)
			mm_edge(&m, tu[i * M * N * K + u], f);
	}
	text all = {NULL, 0, 0};
	put(&all, "{\"Nodes\":[%s],\"Edges\":[%s]}", m.nodes.s, m.edges.s);
	free(m.nodes.s);
	free(m.edges.s);
	free(tb);
	free(tl);
	free(tu);
	free(nu);
	return all.s;
}

/* The chain simulation goes round the output tiles the locally cheapest
 * way, which leaves ever shorter bands of work; taken the other way at
 * its turns (keeping the inputs the last pair of chains shared), the
 * bands stay long.  8 x 8 tiles, K = 8, 16 L1 tiles: the simulation's
 * own order places to 55,040 bytes, the pilot's to 53,504; the turns
 * reach 50,176 (measured; the serpentine over row pairs).  The renumbered
 * copy too. */
#define TURNS_BOUND 50176

static void turns_on_tiled_matmul(void **state)
{
	(void)state;
	char *json = tiled_matmul_json(8, 8, 8, 256);
	ds_graph *g = must_load(json);
	free(json);
	dlr_within(g, "tiled matmul", 11, TURNS_BOUND);
	ds_graph_free(g);
}

/* Two accumulators (three steps each, the first two reading one of two
 * shared loaded tiles): exercises the chain order. */
static const char chains_json[] =
	GRAPH(ALLOC(0, 0, 128, L1) ","
	      OP(1, COPY_IN, MTE2, 9, "0") ","
	      FREE(2, 0, 128, L1) ","
	      ALLOC(3, 1, 128, L1) ","
	      OP(4, COPY_IN, MTE2, 9, "1") ","
	      FREE(5, 1, 128, L1) ","
	      ALLOC(6, 2, 256, L0C) ","
	      OP(7, MAC, CUBE, 9, "2,0") ","
	      OP(8, MAC, CUBE, 9, "2,1") ","
	      OP(9, OUT, FIXP, 9, "2") ","
	      FREE(10, 2, 256, L0C) ","
	      ALLOC(11, 3, 256, L0C) ","
	      OP(12, MAC, CUBE, 9, "3,0") ","
	      OP(13, MAC, CUBE, 9, "3,1") ","
	      OP(14, OUT, FIXP, 9, "3") ","
	      FREE(15, 3, 256, L0C),
	      "[0,1],[1,7],[1,12],[3,4],[4,8],[4,13],[6,7],[7,8],[8,9]"
	      ",[9,10],[11,12],[12,13],[13,14],[14,15],[7,2],[12,2]"
	      ",[8,5],[13,5]");

/* DLR's stage search (ds_dlr_stage.c) from one start, the free-first
 * order: a plan the replay accepts, with the search's traffic at most
 * that start's own DLR plan's (the search keeps the least); a start
 * count out of 1 to DS_DLR_MAX_STARTS is refused with an error, not
 * only an assert. */
static void stage_search_starts(void **state)
{
	(void)state;
	ds_graph *g = must_generate(DS_GEN_RANDOM, 300, 3);
	int32_t *ord = free_first(g);
	ds_plan alone, p;
	ds_figures fa, f, fs;
	run_dlr_order(g, ord, &alone, &fa);
	ds_run_opts o;
	ds_run_opts_default(&o);
	ds_portfolio pf;
	ds_memo timely;
	memset(&timely, 0, sizeof timely);
	ds_err e;
	assert_int_equal(ds_portfolio_run(g, &pf, &e), DS_OK);
	const int32_t *starts[] = {ord};
	ds_dlr_search s = {starts, 1, ord, &pf, &timely};
	bool packed = false;
	assert_int_equal(ds_dlr_stage_search(g, &o, &s, &p, &fs, &packed, &e),
			 DS_OK);
	assert_int_equal(ds_replay(g, &p, NULL, &f, &e), DS_OK);
	assert_true(f.extra_ddr <= fa.extra_ddr);
	assert_int_equal(fs.extra_ddr, f.extra_ddr);
	assert_int_equal(fs.spills, f.spills);
	assert_int_equal(fs.makespan, f.makespan);
	assert_int_equal(fs.peak_vstay, f.peak_vstay);
	ds_plan_free(g->heap, &p);
	s.nstart = 0;
	assert_int_equal(ds_dlr_stage_search(g, &o, &s, &p, &fs, &packed, &e),
			 DS_EINPUT);
	assert_non_null(strstr(e.msg, "DLR starts"));
	s.nstart = DS_DLR_MAX_STARTS + 1;
	assert_int_equal(ds_dlr_stage_search(g, &o, &s, &p, &fs, &packed, &e),
			 DS_EINPUT);
	ds_plan_free(g->heap, &timely.plan);
	ds_plan_free(g->heap, &alone);
	ds_portfolio_free(g, &pf);
	free(ord);
	ds_graph_free(g);
}

/* Every allocation failing in turn: DS_ENOMEM, nothing leaked. */
static void out_of_memory_on(const char *json)
{
	ds_graph *g = must_load(json);
	int32_t *ord = free_first(g);
	for (long k = 1;; k++) {
		ds_faulty st = {k, 0, 0};
		ds_heap fh = ds_heap_faulty(&st);
		const ds_heap *keep = g->heap;
		g->heap = &fh;
		ds_plan p;
		ds_err e;
		int rc = ds_dlr(g, ord, NULL, &p, &e);
		g->heap = keep;
		if (rc == DS_OK) {
			ds_plan_free(&fh, &p);
			assert_int_equal(st.live, 0);
			break;
		}
		assert_int_equal(rc, DS_ENOMEM);
		assert_int_equal(st.live, 0);
	}
	free(ord);
	ds_graph_free(g);
}

static void out_of_memory(void **state)
{
	(void)state;
	out_of_memory_on(copyin_json);
	out_of_memory_on(chains_json);
	/* a small tiled matmul: the turns are tried (and one kept) */
	char *json = tiled_matmul_json(4, 4, 4, 512);
	out_of_memory_on(json);
	free(json);
}

/* ds_dlr with opts o (memo as given) into *p, which must equal ref when
 * ref is not NULL. */
static void dlr_with(const ds_graph *g, const int32_t *ord, ds_dlr_opts o,
		     ds_dlr_memo *memo, const ds_plan *ref, ds_plan *p)
{
	ds_err e;
	o.memo = memo;
	if (ds_dlr(g, ord, &o, p, &e))
		fail_msg("ds_dlr failed: %s", e.msg);
	if (ref)
		assert_true(ds_plan_same(g, ref, p));
}

/* The memo: a plan asked again is the plan made without it (full and
 * lite runs kept apart); a memo made for another graph (here one of the
 * same nodes and order, with larger tiles) is not used; out of memory, a
 * run with a memo fails with DS_ENOMEM, leaking nothing, or returns the
 * plan. */
static void memo_same_plans(void **state)
{
	(void)state;
	/* other: the same nodes, Ids and order, larger L1 tiles */
	char *json = tiled_matmul_json(4, 4, 4, 512),
	     *json2 = tiled_matmul_json(4, 4, 4, 768);
	ds_graph *g = must_load(json), *other = must_load(json2);
	int32_t *ord = free_first(g), *ord2 = free_first(other);
	assert_int_equal(g->n, other->n);
	assert_memory_equal(ord, ord2, (size_t)g->n * sizeof *ord);
	ds_dlr_opts full = {0}, lite = {.lite = true};
	ds_plan ref, ref_lite, ref2, p;
	dlr_with(g, ord, full, NULL, NULL, &ref);
	dlr_with(g, ord, lite, NULL, NULL, &ref_lite);
	dlr_with(other, ord2, full, NULL, NULL, &ref2);
	assert_true(ref.nspill != ref2.nspill); /* g's plan is not other's */
	ds_dlr_memo *memo = ds_dlr_memo_new(g);
	assert_non_null(memo);
	for (int k = 0; k < 3; k++) { /* made, then copied twice */
		dlr_with(g, ord, full, memo, &ref, &p);
		ds_plan_free(g->heap, &p);
		dlr_with(g, ord, lite, memo, &ref_lite, &p);
		ds_plan_free(g->heap, &p);
		dlr_with(other, ord2, full, memo, &ref2, &p);
		ds_plan_free(other->heap, &p);
	}
	ds_dlr_memo_free(memo);
	for (long k = 1;; k++) { /* failures while made, kept and copied */
		ds_faulty st = {k, 0, 0};
		ds_heap fh = ds_heap_faulty(&st);
		const ds_heap *keep = g->heap;
		g->heap = &fh;
		memo = ds_dlr_memo_new(g);
		ds_dlr_opts o = {.memo = memo};
		int rc = memo ? DS_OK : DS_ENOMEM;
		for (int r = 0; r < 2 && rc == DS_OK; r++) {
			ds_err e;
			rc = ds_dlr(g, ord, &o, &p, &e);
			if (rc == DS_OK) {
				assert_true(ds_plan_same(g, &ref, &p));
				ds_plan_free(&fh, &p);
			}
		}
		ds_dlr_memo_free(memo);
		g->heap = keep;
		assert_int_equal(st.live, 0);
		if (rc == DS_OK)
			break;
		assert_int_equal(rc, DS_ENOMEM);
	}
	ds_plan_free(g->heap, &ref);
	ds_plan_free(g->heap, &ref_lite);
	ds_plan_free(other->heap, &ref2);
	free(ord);
	free(ord2);
	ds_graph_free(g);
	ds_graph_free(other);
	free(json);
	free(json2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(copyin_victim_costs_size),
		cmocka_unit_test(contiguous_window),
		cmocka_unit_test(packed_without_holes),
		cmocka_unit_test(packed_rounds),
		cmocka_unit_test(packed_out_of_memory),
		cmocka_unit_test(aged_victims),
		cmocka_unit_test(pull_spilled_use),
		cmocka_unit_test(pull_any_pair),
		cmocka_unit_test(pull_one_with_ancestors),
		cmocka_unit_test(stagger_accumulators),
		cmocka_unit_test(relay_groups),
		cmocka_unit_test(cannot_be_placed),
		cmocka_unit_test(out_of_memory),
		cmocka_unit_test(memo_same_plans),
		cmocka_unit_test(stage_search_starts),
		cmocka_unit_test(effort_never_worse),
		cmocka_unit_test(pilot_on_generated_matmul),
		cmocka_unit_test(pilot_without_inputs),
		cmocka_unit_test(turns_on_tiled_matmul),
		cmocka_unit_test(bundled_graphs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
