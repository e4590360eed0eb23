/* test_replay.c: the evaluator on tiny graphs with figures worked out by
 * hand from SPEC.md's replay rule (each graph's comment shows the work).
 *
 * Every graph here uses BufIds 0..nbuf-1, so a plan's offset[] and spill
 * buffer indices are the BufIds.  With DS_DUMP_DIR set, each replay also
 * writes its graph, plan and the figures it got into that folder, so the
 * numbers can be checked against the referee while developing. */
#include "test_util.h"

#include "ds_stage.h"

#define MAXN 32

typedef struct run {
	int rc;
	ds_err e;
	ds_figures f;
	int64_t start[MAXN], finish[MAXN];
} run;

static void dump(const char *name, const ds_graph *g, const ds_plan *p,
		 bool q1, const run *r)
{
	const char *dir = getenv("DS_DUMP_DIR");
	if (!dir)
		return;
	char path[4096];
	ds_err e;
	snprintf(path, sizeof path, "%s/%s.json", dir, name);
	assert_int_equal(ds_write_json(g, path, &e), DS_OK);
	assert_int_equal(ds_plan_write(g, p, dir, name, &e), DS_OK);
	snprintf(path, sizeof path, "%s/%s_expect.txt", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "q1=%d rc=%d peak_vstay=%lld extra_ddr=%lld spills=%lld "
		   "makespan=%lld lb_critical_path=%lld lb_pipe_load=%lld\n",
		q1, r->rc, (long long)r->f.peak_vstay,
		(long long)r->f.extra_ddr, (long long)r->f.spills,
		(long long)r->f.makespan, (long long)r->f.lb_critical_path,
		(long long)r->f.lb_pipe_load);
	fclose(f);
}

/* Replays order (len entries) with optional offsets and spills. */
static run replay(const char *name, const ds_graph *g, int32_t *order,
		  int32_t len, int64_t *offset, ds_spill *spill,
		  int32_t nspill, bool q1)
{
	assert_true(g->n + 2 * nspill <= MAXN);
	for (int32_t b = 0; b < g->nbuf; b++)
		assert_int_equal(g->buf_id[b], b);
	run r;
	memset(&r, 0, sizeof r);
	ds_plan p = {len, order, offset, nspill, spill};
	ds_replay_opts o = {.q1 = q1, .start = r.start, .finish = r.finish};
	r.rc = ds_replay(g, &p, &o, &r.f, &r.e);
	dump(name, g, &p, q1, &r);
	return r;
}

#define ORDER(...) (int32_t[]){__VA_ARGS__}, \
	(int32_t)(sizeof((int32_t[]){__VA_ARGS__}) / sizeof(int32_t))
#define OFFS(...) (int64_t[]){__VA_ARGS__}

static void expect_ok(const run *r)
{
	if (r->rc != DS_OK)
		fail_msg("replay failed (%d): %s", r->rc, r->e.msg);
}

/* A broken rule: DS_EPLAN and a message containing the rule word and
 * every other needle (NULL-ended). */
static void expect_broken(const run *r, ...)
{
	if (r->rc != DS_EPLAN)
		fail_msg("expected DS_EPLAN, got %d (%s)", r->rc,
			 r->rc ? r->e.msg : "valid");
	assert_null(strchr(r->e.msg, '\n'));
	va_list ap;
	va_start(ap, r);
	for (const char *n; (n = va_arg(ap, const char *));)
		assert_contains(r->e.msg, n);
	va_end(ap);
}
#define BROKEN(r, ...) expect_broken(&(r), __VA_ARGS__, (char *)NULL)

/* ---- graphs ---- */

/* ALLOC(UB 16) -> EXP (VECTOR 60) -> FREE. */
#define G_THREE                                                             \
	GRAPH(ALLOC(0, 0, 16, UB) "," OP(1, EXP, VECTOR, 60, "0") "," FREE( \
		      2, 0, 16, UB),                                        \
	      "[0,1],[1,2]")

/* The same nodes without edges, so residency is the only thing that
 * stops a use before ALLOC or after FREE. */
#define G_NOEDGE                                                            \
	GRAPH(ALLOC(0, 0, 16, UB) "," OP(1, EXP, VECTOR, 60, "0") "," FREE( \
		      2, 0, 16, UB),                                        \
	      "")

static void three_nodes(void **state)
{
	(void)state;
	/* 0 at 0; EXP starts at 0 (its pred ALLOC finished at 0), ends 60;
	 * FREE at 60.  Live UB bytes: 16. */
	ds_graph *g = must_load(G_THREE);
	run r = replay("three", g, ORDER(0, 1, 2), OFFS(0), NULL, 0, false);
	expect_ok(&r);
	assert_int_equal(r.f.makespan, 60);
	assert_int_equal(r.f.peak_vstay, 16);
	assert_int_equal(r.f.peak_mem[DS_UB], 16);
	assert_int_equal(r.f.peak_mem[DS_L1], 0);
	assert_int_equal(r.f.extra_ddr, 0);
	assert_int_equal(r.f.spills, 0);
	assert_int_equal(r.f.nodes, 3);
	assert_int_equal(r.f.lb_critical_path, 60);
	assert_int_equal(r.f.lb_pipe_load, 60);
	assert_true(r.f.has_memory);
	assert_int_equal(r.start[1], 0);
	assert_int_equal(r.finish[2], 60);
	/* the order alone gives the same figures, without a memory check */
	r = replay("three_nomem", g, ORDER(0, 1, 2), NULL, NULL, 0, false);
	expect_ok(&r);
	assert_int_equal(r.f.makespan, 60);
	assert_int_equal(r.f.peak_vstay, 16);
	assert_false(r.f.has_memory);
	ds_graph_free(g);
}

/* Two independent chains on two pipes:
 *   0 ALLOC A (L1 64) -> 2 COPY_IN (MTE2 100) -> 4 FREE A
 *   1 ALLOC B (UB 32) -> 3 EXP (VECTOR 70)    -> 5 FREE B */
#define G_TWO_PIPES                                                         \
	GRAPH(ALLOC(0, 0, 64, L1) "," ALLOC(1, 1, 32, UB) "," OP(           \
		      2, COPY_IN, MTE2, 100, "0") "," OP(3, EXP, VECTOR, 70, \
							 "1") "," FREE(4, 0, \
								       64,   \
								       L1) "," \
		      FREE(5, 1, 32, UB),                                   \
	      "[0,2],[2,4],[1,3],[3,5]")

static void two_pipes_overlap(void **state)
{
	(void)state;
	/* COPY_IN runs 0..100 on MTE2 while EXP runs 0..70 on VECTOR: the
	 * makespan is the longer one, 100, not the sum 170. */
	ds_graph *g = must_load(G_TWO_PIPES);
	run r = replay("two_pipes", g, ORDER(0, 1, 2, 3, 4, 5), OFFS(0, 0),
		       NULL, 0, false);
	expect_ok(&r);
	assert_int_equal(r.start[2], 0);
	assert_int_equal(r.start[3], 0);
	assert_int_equal(r.finish[3], 70);
	assert_int_equal(r.f.makespan, 100);
	assert_int_equal(r.f.peak_vstay, 96);
	assert_int_equal(r.f.peak_mem[DS_L1], 64);
	assert_int_equal(r.f.peak_mem[DS_UB], 32);
	assert_int_equal(r.f.lb_pipe_load, 100);
	assert_int_equal(r.f.lb_critical_path, 100);
	ds_graph_free(g);
}

/* 0 ALLOC A -> 2 COPY_IN (MTE2 100) -> 3 EXP (VECTOR 50) -> 5 FREE A
 * 1 ALLOC B -> 4 ADD (VECTOR 30) -> 6 FREE B; both UB 16. */
#define G_INORDER                                                            \
	GRAPH(ALLOC(0, 0, 16, UB) "," ALLOC(1, 1, 16, UB) "," OP(            \
		      2, COPY_IN, MTE2, 100, "0") "," OP(3, EXP, VECTOR, 50,  \
							 "0") "," OP(4, ADD,  \
								     VECTOR,  \
								     30,      \
								     "1") "," \
		      FREE(5, 0, 16, UB) "," FREE(6, 1, 16, UB),             \
	      "[0,2],[2,3],[3,5],[1,4],[4,6]")

static void pipe_in_order(void **state)
{
	(void)state;
	ds_graph *g = must_load(G_INORDER);
	/* EXP before ADD in the schedule: EXP waits for COPY_IN (0..100) and
	 * runs 100..150; ADD, ready at 0, waits for VECTOR: 150..180. */
	run r = replay("inorder_a", g, ORDER(0, 1, 2, 3, 4, 5, 6), OFFS(0, 16),
		       NULL, 0, false);
	expect_ok(&r);
	assert_int_equal(r.start[3], 100);
	assert_int_equal(r.start[4], 150);
	assert_int_equal(r.f.makespan, 180);
	/* ADD first: ADD 0..30, EXP 100..150. */
	r = replay("inorder_b", g, ORDER(0, 1, 2, 4, 3, 5, 6), OFFS(0, 16),
		   NULL, 0, false);
	expect_ok(&r);
	assert_int_equal(r.start[4], 0);
	assert_int_equal(r.f.makespan, 150);
	assert_int_equal(r.f.lb_pipe_load, 100);
	ds_graph_free(g);
}

/* 0 ALLOC A (UB 100) -> 1 E1 (VECTOR 10) -> 2 E2 (VECTOR 20) -> 3 FREE A */
#define G_SPILL                                                               \
	GRAPH(ALLOC(0, 0, 100, UB) "," OP(1, E1, VECTOR, 10, "0") "," OP(     \
		      2, E2, VECTOR, 20, "0") "," FREE(3, 0, 100, UB),        \
	      "[0,1],[1,2],[2,3]")

static void spill_plain(void **state)
{
	(void)state;
	/* A spilled between E1 and E2, back at 200: SPILL_OUT is node 4
	 * (MTE3), SPILL_IN node 5 (MTE2), each 2*100+150 = 350 cycles.
	 * Edges added: 0->4, 1->4 (E1 stands before it), 4->5, 5->2, 5->3.
	 *   E1 0..10; SPILL_OUT 10..360; SPILL_IN 360..710 ([200,300) was
	 *   never used: no reuse edge); E2 710..730; FREE 730.
	 * makespan 730, extra_ddr 2*100, spills 1; SPILL_OUT/IN leave V_stay
	 * alone (peak 100); the busiest pipe is MTE3 or MTE2 with 350. */
	ds_graph *g = must_load(G_SPILL);
	ds_spill sp[] = {{0, 200}};
	run r = replay("spill", g, ORDER(0, 1, 4, 5, 2, 3), OFFS(0), sp, 1,
		       false);
	expect_ok(&r);
	assert_int_equal(r.start[4], 10);
	assert_int_equal(r.finish[4], 360);
	assert_int_equal(r.start[5], 360);
	assert_int_equal(r.finish[5], 710);
	assert_int_equal(r.start[2], 710);
	assert_int_equal(r.f.makespan, 730);
	assert_int_equal(r.f.extra_ddr, 200);
	assert_int_equal(r.f.spills, 1);
	assert_int_equal(r.f.peak_vstay, 100);
	assert_int_equal(r.f.peak_mem[DS_UB], 100);
	assert_int_equal(r.f.lb_pipe_load, 350);
	assert_int_equal(r.f.lb_critical_path, 30);
	assert_int_equal(r.f.nodes, 4);

	ds_plan p = {6, (int32_t[]){0, 1, 4, 5, 2, 3}, OFFS(0), 1, sp};
	assert_int_equal(ds_node_cycles(g, &p, 4), 350);
	assert_int_equal(ds_node_cycles(g, &p, 5), 350);
	assert_int_equal(ds_node_cycles(g, &p, 1), 10);
	char lab[96];
	assert_string_equal(ds_node_label(g, &p, 4, lab, sizeof lab),
			    "4 (SPILL_OUT of buffer 0)");
	assert_string_equal(ds_node_label(g, &p, 5, lab, sizeof lab),
			    "5 (SPILL_IN of buffer 0)");
	assert_string_equal(ds_node_label(g, &p, 1, lab, sizeof lab),
			    "1 (E1)");
	ds_graph_free(g);
}

/* G_SPILL beside two independent transfers: 4 ALLOC B (UB 16) -> 5 LOAD
 * (MTE2 1000) -> 6 FREE B, and 7 ALLOC C (UB 16) -> 8 STORE (MTE3 500) ->
 * 9 FREE C. */
#define G_SPILL_BUSY                                                          \
	GRAPH(ALLOC(0, 0, 100, UB) "," OP(1, E1, VECTOR, 10, "0") "," OP(     \
		      2, E2, VECTOR, 20, "0") "," FREE(3, 0, 100, UB) ","     \
		      ALLOC(4, 1, 16, UB) "," OP(5, LOAD, MTE2, 1000, "1") "," \
		      FREE(6, 1, 16, UB) "," ALLOC(7, 2, 16, UB) "," OP(      \
		      8, STORE, MTE3, 500, "2") "," FREE(9, 2, 16, UB),       \
	      "[0,1],[1,2],[2,3],[4,5],[5,6],[7,8],[8,9]")

static void spill_waits_for_its_pipe(void **state)
{
	(void)state;
	/* Spill nodes run in order on their pipes like any node: SPILL_OUT
	 * (10) on MTE3 after STORE, SPILL_IN (11) on MTE2 after LOAD, each
	 * 2*100+150 = 350 cycles.
	 *   LOAD 0..1000 (MTE2); STORE 0..500 (MTE3); E1 0..10;
	 *   SPILL_OUT ready at 10, MTE3 free at 500: 500..850;
	 *   SPILL_IN ready at 850, MTE2 free at 1000: 1000..1350;
	 *   E2 1350..1370; FREE A 1370.
	 * Were spill nodes free of their pipes: 10..360, 360..710, makespan
	 * 1000 (LOAD). */
	ds_graph *g = must_load(G_SPILL_BUSY);
	ds_spill sp[] = {{0, 0}};
	run r = replay("spill_busy", g, ORDER(0, 4, 5, 7, 8, 1, 10, 11, 2, 3, 6, 9),
		       OFFS(0, 100, 200), sp, 1, false);
	expect_ok(&r);
	assert_int_equal(r.start[8], 0);
	assert_int_equal(r.start[10], 500);
	assert_int_equal(r.finish[10], 850);
	assert_int_equal(r.start[11], 1000);
	assert_int_equal(r.finish[11], 1350);
	assert_int_equal(r.start[2], 1350);
	assert_int_equal(r.f.makespan, 1370);
	assert_int_equal(r.f.lb_pipe_load, 1350);
	ds_graph_free(g);
}

/* 0 ALLOC A (UB 100) -> E1 10 -> E2 20 -> E3 30 -> 4 FREE A, VECTOR */
#define G_SPILL2                                                              \
	GRAPH(ALLOC(0, 0, 100, UB) "," OP(1, E1, VECTOR, 10, "0") "," OP(     \
		      2, E2, VECTOR, 20, "0") "," OP(3, E3, VECTOR, 30,        \
						     "0") "," FREE(4, 0, 100,  \
								   UB),        \
	      "[0,1],[1,2],[2,3],[3,4]")

static void spill_twice(void **state)
{
	(void)state;
	/* A spilled around E2 and again around E3: spill line 0 (back at 0)
	 * is nodes 5/6, line 1 (back at 200) nodes 7/8, 350 cycles each.
	 *   E1 0..10; SO 5 10..360; SI 6 360..710; E2 710..730;
	 *   SO 7 waits for E2 (and SI 6): 730..1080 on MTE3;
	 *   SI 8 1080..1430 on MTE2; E3 1430..1460; FREE 1460.
	 * extra_ddr 2 * 200; MTE2 and MTE3 each carry 700. */
	ds_graph *g = must_load(G_SPILL2);
	ds_spill sp[] = {{0, 0}, {0, 200}};
	run r = replay("spill2", g, ORDER(0, 1, 5, 6, 2, 7, 8, 3, 4), OFFS(0),
		       sp, 2, false);
	expect_ok(&r);
	assert_int_equal(r.start[7], 730);
	assert_int_equal(r.start[8], 1080);
	assert_int_equal(r.f.makespan, 1460);
	assert_int_equal(r.f.extra_ddr, 400);
	assert_int_equal(r.f.spills, 2);
	assert_int_equal(r.f.lb_pipe_load, 700);
	/* the second spill line used first: the Ids follow the lines, the
	 * timing the schedule; same costs, so the same makespan */
	r = replay("spill2_swapped", g, ORDER(0, 1, 7, 8, 2, 5, 6, 3, 4),
		   OFFS(0), sp, 2, false);
	expect_ok(&r);
	assert_int_equal(r.start[7], 10);
	assert_int_equal(r.start[5], 730);
	assert_int_equal(r.f.makespan, 1460);
	/* back to back, nothing between SPILL_IN 6 and SPILL_OUT 7: SO 7
	 * still waits for SI 6 (an earlier spill node of A, SPEC.md):
	 *   SO 5 10..360; SI 6 360..710; SO 7 710..1060; SI 8 1060..1410;
	 *   E2 1410..1430; E3 1430..1460. */
	r = replay("spill2_back_to_back", g, ORDER(0, 1, 5, 6, 7, 8, 2, 3, 4),
		   OFFS(0), sp, 2, false);
	expect_ok(&r);
	assert_int_equal(r.start[7], 710);
	assert_int_equal(r.start[8], 1060);
	assert_int_equal(r.start[2], 1410);
	assert_int_equal(r.f.makespan, 1460);
	ds_graph_free(g);
}

/* 0 ALLOC A (UB 100) -> 1 COPY_IN (MTE2 40) -> 2 EXP (VECTOR 20) -> 3 FREE */
#define G_COPYIN                                                              \
	GRAPH(ALLOC(0, 0, 100, UB) "," OP(1, COPY_IN, MTE2, 40, "0") "," OP(  \
		      2, EXP, VECTOR, 20, "0") "," FREE(3, 0, 100, UB),       \
	      "[0,1],[1,2],[2,3]")

static void spill_copyin(void **state)
{
	(void)state;
	/* A COPY_IN uses A, so its data still sits in DDR: SPILL_OUT (4)
	 * costs 0, SPILL_IN (5) 2*100+150 = 350, extra_ddr is 100.
	 *   COPY_IN 0..40; SO 40..40; SI back at 0 waits for SO (the reuse
	 *   edge 4->5 too) and for MTE2 (free at 40): 40..390;
	 *   EXP 390..410.  MTE2 carries 40 + 350 = 390. */
	ds_graph *g = must_load(G_COPYIN);
	ds_spill sp[] = {{0, 0}};
	run r = replay("spill_copyin", g, ORDER(0, 1, 4, 5, 2, 3), OFFS(0), sp,
		       1, false);
	expect_ok(&r);
	assert_int_equal(r.start[4], 40);
	assert_int_equal(r.finish[4], 40);
	assert_int_equal(r.finish[5], 390);
	assert_int_equal(r.f.makespan, 410);
	assert_int_equal(r.f.extra_ddr, 100);
	assert_int_equal(r.f.spills, 1);
	assert_int_equal(r.f.lb_pipe_load, 390);
	ds_plan p = {6, (int32_t[]){0, 1, 4, 5, 2, 3}, OFFS(0), 1, sp};
	assert_int_equal(ds_node_cycles(g, &p, 4), 0);
	assert_int_equal(ds_node_cycles(g, &p, 5), 350);
	ds_graph_free(g);
}

/* Two unrelated chains of 512-byte UB buffers:
 *   0 ALLOC A -> 1 E1 (VECTOR 100) -> 2 FREE A
 *   3 ALLOC B -> 4 COPY_IN (MTE2 50) -> 5 FREE B */
#define G_REUSE                                                               \
	GRAPH(ALLOC(0, 0, 512, UB) "," OP(1, E1, VECTOR, 100, "0") "," FREE(  \
		      2, 0, 512, UB) "," ALLOC(3, 1, 512, UB) "," OP(          \
		      4, COPY_IN, MTE2, 50, "1") "," FREE(5, 1, 512, UB),      \
	      "[0,1],[1,2],[3,4],[4,5]")

static void address_reuse(void **state)
{
	(void)state;
	ds_graph *g = must_load(G_REUSE);
	/* No memory plan: the chains run side by side, E1 0..100 and COPY_IN
	 * 0..50; makespan 100. */
	run r = replay("reuse_nomem", g, ORDER(0, 1, 2, 3, 4, 5), NULL, NULL,
		       0, false);
	expect_ok(&r);
	assert_int_equal(r.start[3], 0);
	assert_int_equal(r.f.makespan, 100);
	/* B at A's offset: the reuse edge FREE A (2) -> ALLOC B (3).  FREE A
	 * waits for E1 (100), so ALLOC B is at 100, COPY_IN 100..150. */
	r = replay("reuse_same", g, ORDER(0, 1, 2, 3, 4, 5), OFFS(0, 0), NULL,
		   0, false);
	expect_ok(&r);
	assert_int_equal(r.start[3], 100);
	assert_int_equal(r.start[4], 100);
	assert_int_equal(r.f.makespan, 150);
	assert_int_equal(r.f.peak_vstay, 512);
	assert_int_equal(r.f.peak_mem[DS_UB], 512);
	/* Disjoint addresses: no edge, back to 100. */
	r = replay("reuse_apart", g, ORDER(0, 1, 2, 3, 4, 5), OFFS(0, 512),
		   NULL, 0, false);
	expect_ok(&r);
	assert_int_equal(r.f.makespan, 100);
	/* A partial overlap, either way round, is enough for the edge. */
	r = replay("reuse_part", g, ORDER(0, 1, 2, 3, 4, 5), OFFS(0, 256),
		   NULL, 0, false);
	expect_ok(&r);
	assert_int_equal(r.f.makespan, 150);
	r = replay("reuse_part2", g, ORDER(0, 1, 2, 3, 4, 5), OFFS(256, 0),
		   NULL, 0, false);
	expect_ok(&r);
	assert_int_equal(r.f.makespan, 150);
	/* One byte of A's range is shared ([511, 1023) against [0, 512)). */
	r = replay("reuse_byte", g, ORDER(0, 1, 2, 3, 4, 5), OFFS(0, 511),
		   NULL, 0, false);
	expect_ok(&r);
	assert_int_equal(r.f.makespan, 150);
	ds_graph_free(g);
}

/* Two 600-byte UB buffers that cannot both be resident (UB is 1024):
 *   0 ALLOC A -> 1 E1 (VECTOR 100) -> 5 E2 (VECTOR 30) -> 6 FREE A
 *   2 ALLOC B -> 3 COPY_IN (MTE2 50) -> 4 FREE B */
#define G_REUSE_SPILL                                                         \
	GRAPH(ALLOC(0, 0, 600, UB) "," OP(1, E1, VECTOR, 100, "0") "," ALLOC( \
		      2, 1, 600, UB) "," OP(3, COPY_IN, MTE2, 50,             \
					   "1") "," FREE(4, 1, 600,           \
							 UB) "," OP(5, E2,    \
								    VECTOR,   \
								    30,       \
								    "0") "," \
		      FREE(6, 0, 600, UB),                                    \
	      "[0,1],[1,5],[5,6],[2,3],[3,4]")

static void reuse_through_spill(void **state)
{
	(void)state;
	/* A is spilled (SO 7, SI 8, 2*600+150 = 1350 cycles each) so B can
	 * use A's addresses [0, 600); A comes back at 0 after B's FREE.
	 * Reuse edges: SO 7 -> ALLOC B (2), FREE B (4) -> SI 8.
	 *   E1 0..100; SO 100..1450; ALLOC B 1450; COPY_IN 1450..1500;
	 *   FREE B 1500; SI 1500..2850; E2 2850..2880.
	 * V_stay counts ALLOCs and FREEs only: 600 + 600 = 1200 at ALLOC B,
	 * though UB never holds more than 600.  MTE2: 50 + 1350 = 1400. */
	ds_graph *g = must_load(G_REUSE_SPILL);
	ds_spill sp[] = {{0, 0}};
	run r = replay("reuse_spill", g, ORDER(0, 1, 7, 2, 3, 4, 8, 5, 6),
		       OFFS(0, 0), sp, 1, false);
	expect_ok(&r);
	assert_int_equal(r.start[2], 1450);
	assert_int_equal(r.start[3], 1450);
	assert_int_equal(r.start[8], 1500);
	assert_int_equal(r.f.makespan, 2880);
	assert_int_equal(r.f.peak_vstay, 1200);
	assert_int_equal(r.f.peak_mem[DS_UB], 600);
	assert_int_equal(r.f.extra_ddr, 1200);
	assert_int_equal(r.f.lb_pipe_load, 1400);
	assert_int_equal(r.f.lb_critical_path, 130);
	/* Without offsets there are no reuse edges: B runs at once (COPY_IN
	 * 0..50), SI 1450..2800 after SO, E2 2800..2830. */
	r = replay("reuse_spill_nomem", g, ORDER(0, 1, 7, 2, 3, 4, 8, 5, 6),
		   NULL, sp, 1, false);
	expect_ok(&r);
	assert_int_equal(r.start[2], 0);
	assert_int_equal(r.f.makespan, 2830);
	/* Both resident at once does not fit: B at 424 overlaps A. */
	r = replay("reuse_spill_overlap", g, ORDER(0, 1, 2, 3, 4, 7, 8, 5, 6),
		   OFFS(0, 424), sp, 1, false);
	BROKEN(r, "overlap", "buffer 1", "buffer 0", "UB");
	ds_graph_free(g);
}

/* Four buffers in four memories:
 *   A L1 1000, B L1 2000 -> 4 MM (MTE2 10, uses A B) -> FREE A, FREE B
 *   C UB 300 -> 5 V (VECTOR 10) -> FREE C
 *   D L0A 256 -> 6 MOVE (MTE1 5) -> FREE D */
#define G_PEAKS                                                                \
	GRAPH(ALLOC(0, 0, 1000, L1) "," ALLOC(1, 1, 2000, L1) "," ALLOC(       \
		      2, 2, 300, UB) "," ALLOC(3, 3, 256, L0A) "," OP(          \
		      4, MM, MTE2, 10, "0,1") "," OP(5, V, VECTOR, 10,          \
						     "2") "," OP(6, MOVE, MTE1, \
								 5, "3") ","   \
		      FREE(7, 0, 1000, L1) "," FREE(8, 1, 2000, L1) "," FREE(   \
			      9, 2, 300, UB) "," FREE(10, 3, 256, L0A),        \
	      "[0,4],[1,4],[4,7],[4,8],[2,5],[5,9],[3,6],[6,10]")

static void peaks_per_memory(void **state)
{
	(void)state;
	ds_graph *g = must_load(G_PEAKS);
	/* A and B freed before C is allocated: V_stay peaks at 3000 (L1);
	 * UB peaks at 300 on its own; L0A holds 256 and never counts. */
	run r = replay("peaks_a", g, ORDER(0, 1, 4, 7, 8, 2, 5, 9, 3, 6, 10),
		       OFFS(0, 1000, 0, 0), NULL, 0, false);
	expect_ok(&r);
	assert_int_equal(r.f.peak_vstay, 3000);
	assert_int_equal(r.f.peak_mem[DS_L1], 3000);
	assert_int_equal(r.f.peak_mem[DS_UB], 300);
	assert_int_equal(r.f.peak_mem[DS_L0A], 256);
	assert_int_equal(r.f.peak_mem[DS_L0B], 0);
	assert_int_equal(r.f.peak_mem[DS_L0C], 0);
	assert_int_equal(r.f.makespan, 10);
	/* C allocated first: all three live together, V_stay 3300, while
	 * each memory's own peak is unchanged. */
	r = replay("peaks_b", g, ORDER(2, 0, 1, 4, 7, 8, 5, 9, 3, 6, 10),
		   OFFS(0, 1000, 0, 0), NULL, 0, false);
	expect_ok(&r);
	assert_int_equal(r.f.peak_vstay, 3300);
	assert_int_equal(r.f.peak_mem[DS_L1], 3000);
	assert_int_equal(r.f.peak_mem[DS_UB], 300);
	ds_graph_free(g);
}

/* Two L0A buffers, 128 each:
 *   0 ALLOC A -> 2 MOVE (MTE1 5) -> 4 FREE A
 *   1 ALLOC B -> 3 MOVE (MTE1 5) -> 5 FREE B */
#define G_L0                                                                   \
	GRAPH(ALLOC(0, 0, 128, L0A) "," ALLOC(1, 1, 128, L0A) "," OP(          \
		      2, MOVE, MTE1, 5, "0") "," OP(3, MOVE, MTE1, 5,           \
						    "1") "," FREE(4, 0, 128,    \
								  L0A) ","     \
		      FREE(5, 1, 128, L0A),                                    \
	      "[0,2],[2,4],[1,3],[3,5]")

static void q1_one_live(void **state)
{
	(void)state;
	ds_graph *g = must_load(G_L0);
	/* both live at once: valid without --q1 (MTE1 0..5, 5..10) */
	run r = replay("q1_both", g, ORDER(0, 1, 2, 3, 4, 5), OFFS(0, 128),
		       NULL, 0, false);
	expect_ok(&r);
	assert_int_equal(r.f.makespan, 10);
	assert_int_equal(r.f.peak_mem[DS_L0A], 256);
	assert_int_equal(r.f.peak_vstay, 0);
	/* ... and refused with it, at the second ALLOC */
	r = replay("q1_both_q1", g, ORDER(0, 1, 2, 3, 4, 5), OFFS(0, 128),
		   NULL, 0, true);
	BROKEN(r, "q1", "L0A", "buffer 1");
	/* one after the other passes --q1; B reuses A's addresses, so
	 * ALLOC B waits for FREE A at 5: still 10 */
	r = replay("q1_serial", g, ORDER(0, 2, 4, 1, 3, 5), OFFS(0, 0), NULL,
		   0, true);
	expect_ok(&r);
	assert_int_equal(r.f.peak_mem[DS_L0A], 128);
	assert_int_equal(r.f.makespan, 10);
	ds_graph_free(g);
}

/* ---- broken rules ---- */

static void schedule_not_permutation(void **state)
{
	(void)state;
	ds_graph *g = must_load(G_THREE);
	run r = replay("perm_missing", g, ORDER(0, 1), NULL, NULL, 0, false);
	BROKEN(r, "schedule", "2 entries", "expected 3");
	r = replay("perm_dup", g, ORDER(0, 1, 1), NULL, NULL, 0, false);
	BROKEN(r, "schedule", "line 3", "node 1", "twice");
	r = replay("perm_range", g, ORDER(0, 1, 3), NULL, NULL, 0, false);
	BROKEN(r, "schedule", "line 3", "node 3", "does not exist");
	r = replay("perm_negative", g, ORDER(-1, 0, 1), NULL, NULL, 0, false);
	BROKEN(r, "schedule", "line 1", "node -1");
	ds_graph_free(g);
	/* a spill adds two nodes the schedule must list */
	g = must_load(G_SPILL);
	ds_spill sp[] = {{0, 200}};
	r = replay("perm_spill", g, ORDER(0, 1, 2, 3), OFFS(0), sp, 1, false);
	BROKEN(r, "schedule", "expected 6");
	r = replay("perm_spill_in", g, ORDER(0, 1, 4, 2, 3, 6), OFFS(0), sp, 1,
		   false);
	BROKEN(r, "schedule", "node 6");
	ds_graph_free(g);
}

static void order_violated(void **state)
{
	(void)state;
	ds_graph *g = must_load(G_THREE);
	run r = replay("order_graph", g, ORDER(0, 2, 1), NULL, NULL, 0, false);
	BROKEN(r, "order", "1 (EXP)", "2 (FREE of buffer 0)");
	ds_graph_free(g);
	/* spill edges count too: SPILL_IN before its SPILL_OUT */
	g = must_load(G_SPILL);
	ds_spill sp[] = {{0, 200}};
	r = replay("order_spill", g, ORDER(0, 1, 5, 4, 2, 3), OFFS(0), sp, 1,
		   false);
	BROKEN(r, "order", "SPILL_OUT", "SPILL_IN");
	/* and SPILL_OUT before the ALLOC of its buffer */
	r = replay("order_spill_alloc", g, ORDER(4, 0, 1, 5, 2, 3), OFFS(0),
		   sp, 1, false);
	BROKEN(r, "order", "0 (ALLOC of buffer 0)", "4 (SPILL_OUT");
	ds_graph_free(g);
}

static void use_between_spill_out_and_in(void **state)
{
	(void)state;
	/* E2 between SPILL_OUT and SPILL_IN: E2 stands after SPILL_OUT, so
	 * SPEC.md adds SPILL_IN -> E2, which the order breaks (the referee
	 * reports the same: "order: 5 must come before 2"). */
	ds_graph *g = must_load(G_SPILL);
	ds_spill sp[] = {{0, 200}};
	run r = replay("use_spilled", g, ORDER(0, 1, 4, 2, 5, 3), OFFS(0), sp,
		       1, false);
	BROKEN(r, "order", "5 (SPILL_IN of buffer 0)", "2 (E2)");
	ds_graph_free(g);
}

static void use_not_resident(void **state)
{
	(void)state;
	/* no edges, so only residency catches a use before ALLOC ... */
	ds_graph *g = must_load(G_NOEDGE);
	run r = replay("use_before_alloc", g, ORDER(1, 0, 2), NULL, NULL, 0,
		       false);
	BROKEN(r, "residency", "1 (EXP)", "buffer 0");
	/* ... or after FREE */
	r = replay("use_after_free", g, ORDER(0, 2, 1), NULL, NULL, 0, false);
	BROKEN(r, "residency", "1 (EXP)", "buffer 0");
	/* the right order is fine: EXP 0..60 */
	r = replay("noedge_ok", g, ORDER(0, 1, 2), OFFS(0), NULL, 0, false);
	expect_ok(&r);
	assert_int_equal(r.f.makespan, 60);
	ds_graph_free(g);
}

static void free_before_alloc(void **state)
{
	(void)state;
	ds_graph *g = must_load(G_NOEDGE);
	run r = replay("free_first", g, ORDER(2, 0, 1), NULL, NULL, 0, false);
	BROKEN(r, "residency", "FREE", "2 (FREE of buffer 0)");
	ds_graph_free(g);
}

static void overlap(void **state)
{
	(void)state;
	/* A [0,512) and B [256,768) live together */
	ds_graph *g = must_load(G_REUSE);
	run r = replay("overlap", g, ORDER(0, 3, 1, 4, 2, 5), OFFS(0, 256),
		       NULL, 0, false);
	BROKEN(r, "overlap", "buffer 1 [256, 768)", "buffer 0 [0, 512)", "UB");
	/* touching ranges do not overlap */
	r = replay("touching", g, ORDER(0, 3, 1, 4, 2, 5), OFFS(0, 512), NULL,
		   0, false);
	expect_ok(&r);
	assert_int_equal(r.f.peak_mem[DS_UB], 1024);
	ds_graph_free(g);
}

static void capacity_exceeded(void **state)
{
	(void)state;
	ds_graph *g = must_load(G_THREE);
	/* 1009 + 16 > 1024; 1008 + 16 fits exactly */
	run r = replay("cap_alloc", g, ORDER(0, 1, 2), OFFS(1009), NULL, 0,
		       false);
	BROKEN(r, "capacity", "buffer 0", "UB capacity 1024");
	r = replay("cap_edge", g, ORDER(0, 1, 2), OFFS(1008), NULL, 0, false);
	expect_ok(&r);
	ds_graph_free(g);
	/* a SPILL_IN's NewOffset is checked the same way */
	g = must_load(G_SPILL);
	ds_spill sp[] = {{0, 925}}; /* 925 + 100 = 1025 */
	r = replay("cap_spill", g, ORDER(0, 1, 4, 5, 2, 3), OFFS(0), sp, 1,
		   false);
	BROKEN(r, "capacity", "SPILL_IN", "UB");
	ds_graph_free(g);
}

static void missing_offset(void **state)
{
	(void)state;
	ds_graph *g = must_load(G_TWO_PIPES);
	run r = replay("no_offset", g, ORDER(0, 1, 2, 3, 4, 5), OFFS(0, -1),
		       NULL, 0, false);
	BROKEN(r, "memory", "buffer 1", "no offset");
	ds_graph_free(g);
}

static void unknown_spill_buffer(void **state)
{
	(void)state;
	ds_graph *g = must_load(G_SPILL);
	ds_spill sp[] = {{3, 0}};
	ds_plan p = {6, (int32_t[]){0, 1, 4, 5, 2, 3}, OFFS(0), 1, sp};
	ds_figures f;
	ds_err e;
	assert_int_equal(ds_replay(g, &p, NULL, &f, &e), DS_EPLAN);
	assert_contains(e.msg, "spill 0");
	assert_contains(e.msg, "unknown buffer");
	ds_graph_free(g);
}

/* Two phases: two loads (MTE2 100 each) feed a short CONV (CUBE 10) that
 * two long ones (CUBE 100 each) follow.
 *   0 ALLOC A (L1) -> 2 COPY_IN -> 4 CONV -> 5 FREE A
 *   1 ALLOC B (L1) -> 3 COPY_IN -> 4      -> 6 FREE B
 *   7 ALLOC C (L0C) -> 8 CONV, 9 CONV (both after 4) -> 10 FREE C */
#define G_PHASES                                                             \
	GRAPH(ALLOC(0, 0, 64, L1) "," ALLOC(1, 1, 64, L1) "," OP(             \
		      2, COPY_IN, MTE2, 100, "0") "," OP(3, COPY_IN, MTE2,    \
							 100, "1") "," OP(4, \
			     CONV, CUBE, 10, "0,1") "," FREE(5, 0, 64, L1) "," \
		      FREE(6, 1, 64, L1) "," ALLOC(7, 2, 32, L0C) "," OP(      \
			      8, CONV, CUBE, 100, "2") "," OP(9, CONV, CUBE,  \
							      100, "2") ","   \
		      FREE(10, 2, 32, L0C),                                   \
	      "[0,2],[1,3],[2,4],[3,4],[4,5],[4,6],[7,8],[7,9],[4,8],[4,9],"  \
	      "[8,10],[9,10]")

static void phase_bound(void **state)
{
	(void)state;
	/* critical path 210 and busiest pipe 210, but the CONVs after 4
	 * cannot start before both loads end: 200 + 10 + 200 = 410, which
	 * the Id order reaches */
	ds_graph *g = must_load(G_PHASES);
	run r = replay("phases", g, ORDER(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10),
		       OFFS(0, 64, 0), NULL, 0, false);
	expect_ok(&r);
	assert_int_equal(r.f.lb_critical_path, 210);
	assert_int_equal(r.f.lb_pipe_load, 210);
	assert_int_equal(r.f.makespan, 410);
	ds_err e;
	int64_t lb = 0;
	assert_int_equal(ds_phase_bound(g, NULL, 0, &lb, &e), DS_OK);
	assert_int_equal(lb, 410);
	int32_t order[] = {1, 3, 0, 2, 4, 7, 9, 8, 6, 5, 10};
	assert_int_equal(ds_phase_bound(g, order, 11, &lb, &e), DS_OK);
	assert_int_equal(lb, 410);
	/* every failing allocation is reported, and nothing leaks */
	ds_faulty st = {0};
	ds_heap fh = ds_heap_faulty(&st);
	const ds_heap *keep = g->heap;
	g->heap = &fh;
	for (long n = 1;; n++) {
		st.fail_at = n;
		st.calls = 0;
		int rc = ds_phase_bound(g, NULL, 0, &lb, &e);
		assert_int_equal(st.live, 0);
		if (rc == DS_OK)
			break;
		assert_int_equal(rc, DS_ENOMEM);
		assert_true(n < 50);
	}
	g->heap = keep;
	ds_graph_free(g);
}

/* On every bundled graph, the phase bound stays at or under the makespan
 * of a plan and at or above the critical path. */
static void check_phase(const char *name, const char *path, ds_graph *g,
			void *ud)
{
	(void)path;
	(void)ud;
	ds_err e;
	int32_t *order = malloc((size_t)g->n * sizeof *order);
	assert_non_null(order);
	assert_int_equal(ds_order_free_first(g, order, &e), DS_OK);
	ds_place_opts po = {DS_BEST_FIT, DS_VICTIM_COST, 0};
	ds_plan p;
	if (ds_place(g, order, &po, &p, &e) != DS_OK)
		fail_msg("%s: %s", name, e.msg);
	ds_figures f;
	assert_int_equal(ds_replay(g, &p, NULL, &f, &e), DS_OK);
	int64_t lb;
	assert_int_equal(ds_phase_bound(g, p.order, p.len, &lb, &e), DS_OK);
	printf("%s: phase bound %lld, makespan %lld\n", name, (long long)lb,
	       (long long)f.makespan);
	assert_true(lb >= g->critical_path);
	assert_true(lb <= f.makespan);
	ds_bounds bd;
	assert_int_equal(ds_bounds_compute(g, p.order, p.len, 0, &bd, &e),
			 DS_OK);
	assert_true(bd.any >= lb && bd.any <= f.makespan);
	ds_plan_free(g->heap, &p);
	free(order);
}

static void phase_bound_bundled(void **state)
{
	(void)state;
	assert_true(for_each_bundled(check_phase, NULL) >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(three_nodes),
		cmocka_unit_test(two_pipes_overlap),
		cmocka_unit_test(pipe_in_order),
		cmocka_unit_test(spill_plain),
		cmocka_unit_test(spill_waits_for_its_pipe),
		cmocka_unit_test(spill_twice),
		cmocka_unit_test(spill_copyin),
		cmocka_unit_test(address_reuse),
		cmocka_unit_test(reuse_through_spill),
		cmocka_unit_test(peaks_per_memory),
		cmocka_unit_test(q1_one_live),
		cmocka_unit_test(schedule_not_permutation),
		cmocka_unit_test(order_violated),
		cmocka_unit_test(use_between_spill_out_and_in),
		cmocka_unit_test(use_not_resident),
		cmocka_unit_test(free_before_alloc),
		cmocka_unit_test(overlap),
		cmocka_unit_test(capacity_exceeded),
		cmocka_unit_test(missing_offset),
		cmocka_unit_test(unknown_spill_buffer),
		cmocka_unit_test(phase_bound),
		cmocka_unit_test(phase_bound_bundled),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
