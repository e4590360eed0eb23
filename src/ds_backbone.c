/* ds_backbone.c: stage 3's starting point, CPE's backbone.
 *
 * CPE keeps its backbone's spills and reorders around them, so the
 * backbone decides which buffers go out and when.  DLR's plan is the
 * least-traffic one, not the one whose spills wait least; this file
 * places DLR's order and variants of it again (aged victims, staggered
 * accumulators, relayed groups, the wave and tail orders, spill-separated
 * uses pulled together; where DLR's plan is packed, ds_pack.c, those over
 * the cap packed too) and keeps the one whose replay is shortest within
 * the traffic cap, with up to two more to start from (ds_backbone_choose
 * says which and why).
 *
 * Requires: a valid graph and DLR's plan for it (ds_replay accepts it),
 * with its figures, and DLR's timely plan (a plan ds_replay accepts, or
 * len 0) with its replay's figures.
 * Guarantees: *bb holds DLR's plan (len 0) or the candidate whose replay
 * was the shortest, each kept only when ds_replay accepts it within the
 * traffic cap (ds_traffic_cap) and its own peak and margin limits, and
 * replays shorter than the plan it replaces; bb->prev that plan; bb->alt
 * and bb->timely a second and a third backbone within the cap, or none
 * (len 0).  The same input
 * gives the same bytes out.
 * Cost: see ds_backbone_choose: a few placements and replays, each
 * O((N + E) log N) or less, and on graphs small enough for more than one
 * DLR start up to 2 (1 + PULL_PAIRS) DLR lite placements. */
#include "ds_backbone.h"

#include <string.h>

/* The aged placement's tolerances (ds_place_opts.tie_pct): of the windows
 * whose furthest-next-use score is within this percentage of the best,
 * the one whose victims were used longest ago.  Measured on the six
 * graphs (final makespans, default options), one tolerance alone: 5
 * gives Matmul_Case1 982,117 (its aged plan within 0.3% of DLR's before
 * CPE) and Conv_Case1 none (over the traffic cap); 10 gives Matmul_Case1
 * 906,544, Matmul_Case0 93,040, Conv_Case1 602,490, FlashAttention_Case1
 * 143,413; 20 gives Matmul_Case1 909,031 at more traffic (232,448) and
 * Matmul_Case0 93,391.  Both 10 and 15 are placed and the shorter replay
 * kept (the earlier on ties): 15 alone gives FlashAttention_Case0 31,981
 * instead of 32,766 (the same 1,280 bytes: its V tiles evicted right
 * after their last use in the first row group instead of K tiles whose
 * SPILL_OUT waited) and FlashAttention_Case1 143,130, but Matmul_Case0
 * 93,369 and Matmul_Case1 907,605, whose aged plans at 15 do not replay
 * shorter than at 10 and so are not kept.  With 10 and 20,
 * FlashAttention_Case1 keeps 10's plan (143,193: its replay at 20 is the
 * longer).  Adding 30 gives FlashAttention_Case1 141,608 at 21,760, but
 * a copy of Conv_Case0 with its Ids and BufIds shuffled (seed 2)
 * 446,540 instead of 444,954: the replay before CPE is a rough guide. */
static const int32_t aged_tie_pcts[] = {10, 15};
#define AGED_NTIES (sizeof aged_tie_pcts / sizeof *aged_tie_pcts)

/* The wave's plan must replay this much shorter (per mille) than the
 * backbone so far: CPE reworks the others more.  Measured (default
 * options): Conv_Case1's wave replays 1.4 % shorter (859,767 against
 * 871,903; final 582,161, 602,490 without it); Matmul_Case0's 0.19 %
 * (120,524 against the staggered 120,754), and through CPE it gives
 * 94,189 against 87,470.  (Its copies took the one or the other with the
 * feeders found in Id order.) */
#define WAVE_MARGIN 5

/* DLR's timely plan (ds_dlr_stage.c timely_offer) is a third backbone
 * where it replays this much shorter (per mille) than the backbone
 * chosen: CPE's chain then runs from it too (ds_chain.c,
 * timely_floor).  Measured 2026-12-05: FlashAttention_Case1 at UB=1088
 * to 1536, where DLR's plan (19,712 bytes at 1088, replay 190,530) runs
 * the matmuls far ahead of the vector work and the placement of its
 * pulled order (20,224 bytes, within the cap) replays 162,584, 12.5 to
 * 14.8 % shorter: final 138,820 -> 116,128 cycles (1152: 139,593 ->
 * 115,511; 1536: 137,226 -> 114,270).  In place of the backbone at no
 * margin, plans whose timely replay was 0.9 to 3.4 % shorter came out
 * of CPE longer (FlashAttention_Case1 at UB=896 117,025 -> 117,780,
 * Matmul_Case0 at L1=5120 78,060 -> 81,116), and at this margin `gen
 * --kind attention --nodes 1000 --seed 2` at L1=2048,UB=640 (replay
 * 30,673 against 34,043) 22,449 -> 22,745: the replay before CPE is a
 * rough guide, so a floor.  The margin bounds its cost: the bundled
 * graphs at their own capacities make no third backbone
 * (FlashAttention_Case1's timely plan replays 3.4 % shorter than its
 * backbone). */
#define TIMELY_MARGIN 100

/* While the backbone is chosen: the aged placement of DLR's order that
 * replayed shortest over the cap (plan len 0: none), the base of
 * pulled_over's pulls. */
typedef struct over_plan {
	ds_plan plan;
	int64_t makespan; /* its replay */
} over_plan;

/* Plan p (taken over) replayed, kept in bb as backbone_try says; with
 * over (not NULL), a plan kept from that only by its traffic goes to
 * *over when it replays shorter than the one there. */
static int backbone_keep(const ds_graph *g, ds_plan *p, int64_t max_ddr,
			 int64_t max_peak, int32_t margin, over_plan *over,
			 ds_backbone *bb, int64_t *ddr, ds_err *e)
{
	ds_figures f;
	int rc = ds_replay(g, p, NULL, &f, e);
	*ddr = rc == DS_OK ? f.extra_ddr : 0;
	bool fits = rc == DS_OK && f.extra_ddr <= max_ddr &&
		    f.peak_vstay <= max_peak;
	if (fits && f.makespan * (1000 + margin) < bb->best.makespan * 1000) {
		ds_plan_free(g->heap, &bb->prev);
		bb->prev = bb->plan;
		bb->had_prev = true;
		bb->prev_peak = bb->best.peak_vstay;
		bb->pulled = false;
		bb->plan = *p;
		bb->best = f;
	} else if (rc == DS_OK && over && !fits && f.peak_vstay <= max_peak &&
		   (over->plan.len == 0 || f.makespan < over->makespan)) {
		ds_plan_free(g->heap, &over->plan);
		over->plan = *p;
		over->makespan = f.makespan;
	} else {
		ds_plan_free(g->heap, p);
	}
	return rc;
}

/* One backbone candidate: order placed with aged victims at tolerance
 * tie_pct, kept in bb when its plan has at most max_ddr extra DDR
 * traffic, a peak_vstay of at most max_peak (checked on the order first:
 * a walk, where the placement costs much more) and a replay shorter than
 * bb's by more than margin per mille; where DLR's plan is packed
 * (bb->pack) and this placement exceeds max_ddr, also placed packed
 * (ds_pack.c, the spills decided on bytes: Conv_Case0's relayed order
 * 41,476 bytes against 45,696, the cap 43,554) and judged alike.  Only
 * there: `gen --kind random --nodes 1500 --seed 2`, whose DLR plan has
 * no spill, came to 23,983 cycles from a packed backbone, 23,713
 * without.  With over (not NULL), a placement over max_ddr may be kept
 * in *over (backbone_keep).  *ddr: the least extra DDR traffic of the
 * placements (0 when none was made). */
static int backbone_try(const ds_graph *g, const int32_t *order,
			int32_t tie_pct, int64_t max_ddr, int64_t max_peak,
			int32_t margin, over_plan *over, ds_backbone *bb,
			int64_t *ddr, ds_err *e)
{
	ds_place_opts po = {DS_BEST_FIT, DS_VICTIM_AGED, tie_pct};
	ds_plan p;
	*ddr = 0;
	if (ds_order_peak(g, order, NULL) > max_peak)
		return DS_OK;
	int rc = ds_place(g, order, &po, &p, e);
	if (rc)
		return rc;
	rc = backbone_keep(g, &p, max_ddr, max_peak, margin, over, bb, ddr, e);
	if (rc || *ddr <= max_ddr || !bb->pack)
		return rc;
	bool fits;
	int64_t packed;
	/* no rounds (ds_pack.c): measured on 1530f96 over 108 generated runs
	 * (`gen`, four kinds, 600 to 2,500 nodes, seeds 1-3, three
	 * capacities), 4 rounds here change no final plan, and 8 one, shorter
	 * (`--kind random --nodes 2500 --seed 3` at L1=2048,UB=768: 54,621
	 * cycles against 56,725; 2026-12-07).  Session 44's measurement, one
	 * run longer with 8 (the same graph at L1=1536,UB=640: 86,642 against
	 * 85,127), did not repeat; the rounds here are untried on the six. */
	rc = ds_place_packed(g, order, &po, 0, &p, &fits, e);
	if (rc || !fits)
		return rc;
	rc = backbone_keep(g, &p, max_ddr, max_peak, margin, over, bb,
			   &packed, e);
	if (rc == DS_OK && packed > 0 && packed < *ddr)
		*ddr = packed;
	return rc;
}

/* The next lag divisor to try after div's placement exceeded the cap:
 * the traffic above DLR's (excess) about halves with the lag
 * (Matmul_Case0 renumbered, seed 2: +1,536, +640, +256 bytes at lags of
 * a half, a quarter and an eighth of a chain; Matmul_Case1: +112,000,
 * +58,752, +30,848, +15,232), so the lag tried next is the longest that
 * this predicts within the room (the cap over DLR's figure), at most
 * half the last one; 0 when there is no room. */
static int32_t stagger_next(int32_t div, int64_t excess, int64_t room)
{
	if (room <= 0)
		return 0;
	int32_t next = div;
	do
		next *= 2;
	while (next < (1 << 20) && excess * div > room * next);
	return next;
}

/* The aged placement's tolerance for the staggered orders.  Measured on
 * Matmul_Case0 (final makespans, default options): 10 gives 86,859 at
 * 11,904 bytes, 15 86,827, 20 (and 25, 30, 40) 86,152 at 12,032 (cap
 * 12,096); without the lanes' last accumulators started together
 * (ds_dlr_stagger.c) 87,306 at 10, 87,156 from 15.  The staggered plans
 * replay alike at each (120,832 cycles, 11,776 bytes): CPE and retime
 * make the difference (CPE 87,893 at 10, 87,503 at 20; retime's
 * evictions then 86,859 and 86,152).  With the reload phase's
 * accumulators that free nothing delayed (ds_dlr_stagger.c, sg_delay):
 * 10 gives 86,374, 15 86,128, 20 and 30 85,506.  The other five bundled
 * graphs' plans are the same at 10 and 20. */
#define STAGGER_TIE_PCT 20

/* The staggered orders of order (scratch: n more entries after it) as
 * candidates: the lanes half a chain apart, or, while that placement
 * exceeds the cap, half as far again. */
static int backbone_stagger(const ds_graph *g, int32_t *order, int64_t cap,
			    int64_t dlr_ddr, ds_backbone *bb, ds_err *e)
{
	bool changed = true;
	int64_t ddr;
	int rc = DS_OK;
	for (int32_t div = 1; rc == DS_OK && changed && div > 0;) {
		rc = ds_dlr_stagger(g, order, div, order + g->n, &changed, e);
		if (rc == DS_OK && changed)
			rc = backbone_try(g, order + g->n, STAGGER_TIE_PCT, cap,
					  INT64_MAX, 0, NULL, bb, &ddr, e);
		if (rc || !changed || ddr <= cap)
			break;
		div = stagger_next(div, ddr - dlr_ddr, cap - dlr_ddr);
	}
	return rc;
}

/* The relay order of order (ds_dlr_relay; scratch: n more entries after
 * it) as a candidate, at the first aged tolerance (Conv_Case0: 0, 15,
 * 20 and 30 give the same final plan), within the cap. */
static int backbone_relay(const ds_graph *g, int32_t *order, int64_t cap,
			  ds_backbone *bb, ds_err *e)
{
	bool changed;
	int64_t ddr;
	int rc = ds_dlr_relay(g, order, order + g->n, &changed, e);
	if (rc == DS_OK && changed)
		rc = backbone_try(g, order + g->n, aged_tie_pcts[0], cap,
				  INT64_MAX, 0, NULL, bb, &ddr, e);
	return rc;
}

/* The tail order of order (ds_tail.c; scratch: n more entries after
 * it) as a candidate: placed by DLR lite (the aged placement of it needs
 * more traffic: FlashAttention_Case0 1,536 bytes against DLR's 1,024),
 * kept with at most the cap's traffic, no higher peak than DLR's plan
 * (df) and a shorter replay than the backbone so far.  Only graphs small
 * enough for more than one DLR start (as dlr_pulled): the DLR run costs
 * Conv_Case1 0.08 s and Matmul_Case1 0.12 s, whose candidates are not
 * kept; Matmul_Case0 0.05 s (not kept either: 12,672 bytes against the
 * cap 12,096).  The order's peak within CPE's budget over DLR's plan
 * (FlashAttention_Case0: 5,388, the budget 5,132 + 5 %). */
static int backbone_tail(const ds_graph *g, const ds_run_opts *o,
			 int32_t *order, int64_t cap, const ds_figures *df,
			 ds_backbone *bb, ds_err *e)
{
	bool changed;
	int64_t ddr;
	if (ds_dlr_starts(g, o) < 2)
		return DS_OK;
	int rc = ds_tail_order(g, order, order + g->n, &changed, e);
	if (rc || !changed)
		return rc;
	/* CPE's peak budget over DLR's (ds_cpe_budget), on the order first:
	 * a walk, where DLR costs much more (Conv_Case0's 12,322 > 7,259) */
	int64_t budget = ds_cpe_budget(df->peak_vstay, o->cpe.peak_budget_pct);
	if (ds_order_peak(g, order + g->n, NULL) > budget)
		return DS_OK;
	ds_dlr_opts lite = o->dlr;
	lite.lite = true;
	ds_plan p;
	rc = ds_dlr(g, order + g->n, &lite, &p, e);
	if (rc == DS_OK)
		rc = backbone_keep(g, &p, cap, df->peak_vstay, 0, NULL, bb,
				   &ddr, e);
	return rc;
}

/* Pairs backbone_pulled looks at, at most, around the first SPILL_OUTs
 * and as many around the later ones (each in the plan's order).
 * Conv_Case0's backbone (its relay order, aged) has 21 of the first; the
 * one pull taken is the first. */
#define PULL_PAIRS 32
/* The ancestors a pull of a later spill's pair may move
 * (ds_order_pull_one's count), at most.  On Conv_Case0 the later spills
 * are the last layers' inputs, reloaded for each chain that reads them,
 * and their pulls, a chain's work run ahead of the one before, moved 5
 * or 8 (and three 2) and each placed 3,072 to 6,144 bytes over its
 * order: 60 DLR lite runs in a schedule for nothing, 0.42 -> 0.55 s user
 * CPU.  The pulls kept on generated graphs (the runs below) moved 1 to
 * 3. */
#define PULL_LATER_MOVED 4

/* Whether DLR's placement f improves on best with no trade: neither more
 * traffic nor more spills, and less of one. */
static bool dlr_dominates(const ds_figures *f, const ds_figures *best)
{
	return f->extra_ddr <= best->extra_ddr && f->spills <= best->spills &&
	       (f->extra_ddr < best->extra_ddr || f->spills < best->spills);
}

/* The pulls of pairs k (early[k] and late[k], ds_order_pull_one) into
 * ord in turn, those that move an ancestor ds_order_pull would not (at
 * most max_moved of them), each kept when DLR lite places the pulled
 * order with no more traffic and spills and less of one (dlr_dominates)
 * than ord's placement, *p (made at the first such pull; p->len 0 until
 * then); trial: scratch for n nodes.  *taken: how many kept. */
static int pull_each(const ds_graph *g, const ds_run_opts *o,
		     const int32_t *early, const int32_t *late,
		     int32_t npairs, int32_t max_moved, int32_t *ord,
		     int32_t *trial, ds_plan *p, int *taken, ds_err *e)
{
	ds_dlr_opts lite = o->dlr;
	lite.lite = true;
	ds_figures fp = {0};
	int rc = DS_OK;
	*taken = 0;
	for (int32_t k = 0; k < npairs && rc == DS_OK; k++) {
		int32_t moved;
		ds_plan q;
		ds_figures fq;
		memcpy(trial, ord, (size_t)g->n * sizeof *trial);
		rc = ds_order_pull_one(g, trial, early[k], late[k], &moved, e);
		if (rc || moved == 0 || moved > max_moved)
			continue;
		if (p->len == 0) {
			rc = ds_dlr(g, ord, &lite, p, e);
			if (rc == DS_OK)
				rc = ds_replay(g, p, NULL, &fp, e);
		}
		if (rc == DS_OK)
			rc = ds_dlr(g, trial, &lite, &q, e);
		if (rc)
			break;
		rc = ds_replay(g, &q, NULL, &fq, e);
		bool take = rc == DS_OK && dlr_dominates(&fq, &fp);
		ds_plan_keep(g->heap, take, p, &fp, &q, &fq);
		if (take) {
			memcpy(ord, trial, (size_t)g->n * sizeof *ord);
			(*taken)++;
		}
	}
	return rc;
}

/* One pass of backbone_pulled: pairs k (early[k] and late[k]) pulled
 * into ord in turn (pull_each); when a pull is taken, its placement is a
 * candidate (backbone_keep: a shorter replay within the cap). */
static int pull_pass(const ds_graph *g, const ds_run_opts *o,
		     const int32_t *early, const int32_t *late,
		     int32_t npairs, int32_t max_moved, int64_t cap,
		     int32_t *ord, ds_backbone *bb, ds_err *e)
{
	int taken = 0;
	int64_t ddr;
	ds_plan p = {0};
	int rc = pull_each(g, o, early, late, npairs, max_moved, ord,
			   ord + g->n, &p, &taken, e);
	if (rc == DS_OK && taken > 0)
		return backbone_keep(g, &p, cap, INT64_MAX, 0, NULL, bb, &ddr,
				     e);
	ds_plan_free(g->heap, &p);
	return rc;
}

/* Plan base (the backbone so far, else DLR's plan; or pulled_over's)
 * with the uses its spills separate pulled together one pair at a time,
 * in two passes: the pairs around each spilled buffer's first SPILL_OUT,
 * then those around its later ones (both lists made from base,
 * ds_pull_pairs, up to PULL_PAIRS each).  Each pair whose later use
 * needs ancestors that stand between is moved with them up to right
 * after the earlier use (ds_order_pull_one), kept when DLR lite places
 * the result with no more traffic and spills than the order so far and
 * less of one (pull_each).  When a pass keeps a pull, its plan is a
 * candidate (pull_pass; backbone_keep: a shorter replay within the cap),
 * so where both passes' plans are kept, the first's is the one the
 * second's replaced, which CPE also runs from (ds_chain.c,
 * pull_floor).  dlr_pulled's pulls,
 * all at once and only of uses that can run at once, cannot move a use
 * whose weights are not loaded yet, and this backbone's order is not
 * DLR's: Conv_Case0's relayed order has CONV 89 after two CONVs (104,
 * 107) whose 1,536-byte accumulator evicts 89's inputs, reloaded while
 * CUBE waits (3,372 cycles); pulled next to CONV 86, the last use
 * before that eviction, with its weight loads, DLR lite places the order
 * at 45,696 bytes with 35 spills instead of 36,
 * replay 481,205 against 482,924, final 408,081 cycles against 411,453
 * at the same 47,232 bytes (budgets 0, 25, 100: 413,139, 385,995,
 * 375,851 against 416,511, 389,367, 379,223).  Only graphs small enough
 * for more than one DLR start (as backbone_tail).  With DLR's own rule
 * instead (dlr_better: less traffic, or as much and fewer spills), a
 * second pull was kept too (CONV 1033 next to 1021: 45,504 bytes in 38
 * spills) and the final came to 408,167 cycles at 47,952 bytes.  On 48
 * generated graphs (four kinds, 400 to 3,000 nodes, default caps,
 * L1=2048,UB=768 and L1=1536,UB=640, budgets 5 and 25: 288 runs) 22
 * plans change, each shorter with less traffic (`gen --kind random
 * --nodes 3000 --seed 12`: 71,278 cycles at 2,816 bytes against 75,358
 * at 5,568).  The later spills' pass (a buffer spilled and reloaded more
 * than once; pulls of at most PULL_LATER_MOVED ancestors), measured
 * 2026-12-05 against the first pass alone on 456 runs (84 generated
 * graph-capacity pairs of 1,200 and 2,000 nodes at budgets 5 and 25, 96
 * graphs of 600 to 1,500 nodes, seeds 1-8, at three capacities): 7
 * plans change (5 graph-capacity pairs), each shorter with less
 * traffic (`gen --kind conv --nodes 1500 --seed 7` at L1=1536,UB=640:
 * 82,924 cycles at 14,438 bytes -> 79,304 at 13,942; `--kind random
 * --nodes 1200 --seed 4` at L1=2560,UB=640: 29,046 at 2,400 -> 27,979
 * at 2,240); the six bundled graphs' plans at budgets 0, 5, 25 and 100
 * do not change; their run time 3.27 -> 3.33 s user CPU (least of seven
 * rounds, alternating).
 * Cost: O(N + E) per pair, and 2 + 2 PULL_PAIRS DLR lite placements and
 * replays at most, none where no pull needs ancestors
 * (FlashAttention_Case1, Matmul_Case0: pairs of a use and its ALLOC,
 * dlr_pulled's). */
static int backbone_pulled(const ds_graph *g, const ds_run_opts *o,
			   const ds_plan *base, int64_t cap, ds_backbone *bb,
			   ds_err *e)
{
	if (ds_dlr_starts(g, o) < 2)
		return DS_OK;
	ds_arena ar;
	ds_arena_init(&ar, g->heap);
	int32_t *ord = ds_arena_alloc(&ar, 2 * (size_t)g->n, sizeof *ord);
	/* the first spills' pairs, then the later spills' (early ones in
	 * pair[0..), late ones from pair[2 * PULL_PAIRS]) */
	int32_t *pair = ds_arena_alloc(&ar, 4 * PULL_PAIRS, sizeof *pair);
	if (ar.failed) {
		ds_arena_free(&ar);
		return ds_fail(e, DS_ENOMEM, "out of memory");
	}
	int32_t *late = pair + 2 * PULL_PAIRS, nfirst = 0, nlater = 0;
	int rc = ds_pull_pairs(g, base, false, PULL_PAIRS, pair, late,
			       &nfirst, e);
	if (rc == DS_OK)
		rc = ds_pull_pairs(g, base, true, PULL_PAIRS, pair + nfirst,
				   late + nfirst, &nlater, e);
	ds_plan_nodes(g, base, ord);
	const int64_t was = bb->best.makespan;
	if (rc == DS_OK)
		rc = pull_pass(g, o, pair, late, nfirst, INT32_MAX, cap, ord,
			       bb, e);
	if (rc == DS_OK)
		rc = pull_pass(g, o, pair + nfirst, late + nfirst, nlater,
			       PULL_LATER_MOVED, cap, ord, bb, e);
	bb->pulled = bb->best.makespan < was;
	ds_arena_free(&ar);
	return rc;
}

/* The pulls from over, the aged placement of DLR's order that replayed
 * shortest over the cap, into bb->alt (figures bb->alt_best)
 * when one is kept (within the cap): a second backbone, not in place of
 * bb's (CPE's chain runs from both: ds_chain.c, over_floor).  Why:
 * the pulls are placed by DLR lite and judged by their own traffic, so a
 * base over the cap can give pulls within it, and its spills separate
 * other uses than DLR's.  `dansched gen --kind random --nodes 4000
 * --seed 2` at L1=2048,UB=768 came to 99,668 cycles at 11,712 bytes by
 * default and to 95,404 at 11,200 at budget 25, where the aged placement
 * is within the cap and so the pulls' base: 95,404 at 11,328 now.  Of
 * 383 runs (`gen` of four kinds, 1,000 to 4,000 nodes, at the default
 * caps, L1=2048,UB=768 and L1=1536,UB=640), in place of bb's plan where
 * it replayed shorter (the pull floor running from the plan before both
 * pulls) 8 came out shorter and 2 longer (`--nodes 4000 --seed 2` at the
 * default caps: 67,299 -> 68,047); as a second backbone where it
 * replays shorter than bb's, the same 8 shorter and none longer; as a
 * second backbone whatever its replay (the rule here: the replay before
 * CPE is a rough guide), 19 shorter (`--kind conv --nodes 2000 --seed 5`
 * at L1=1536,UB=640: 62,738 -> 59,408; `--nodes 3000 --seed 3` at
 * L1=2048,UB=768: 71,328 -> 70,455 from a backbone that replays 105,788
 * against bb's 105,063) and none longer. */
static int pulled_over(const ds_graph *g, const ds_run_opts *o,
		       const ds_plan *over, int64_t cap, ds_backbone *bb,
		       ds_err *e)
{
	ds_backbone alt;
	memset(&alt, 0, sizeof alt);
	alt.best.makespan = INT64_MAX / 1000; /* no bound: any pull is kept */
	int rc = backbone_pulled(g, o, over, cap, &alt, e);
	bb->alt = alt.plan;
	bb->alt_best = alt.best;
	ds_plan_free(g->heap, &alt.prev);
	return rc;
}

/* DLR's timely plan (len 0: none; figures *tf, its replay's), a copy
 * in bb->timely when it fits the cap and replays shorter than bb's
 * backbone by more than TIMELY_MARGIN. */
static int backbone_timely(const ds_graph *g, const ds_plan *timely,
			   const ds_figures *tf, int64_t cap, ds_backbone *bb,
			   ds_err *e)
{
	if (timely->len == 0 || tf->extra_ddr > cap ||
	    tf->makespan * (1000 + TIMELY_MARGIN) >= bb->best.makespan * 1000)
		return DS_OK;
	bb->timely_best = *tf;
	return ds_plan_copy(g, timely, &bb->timely, e);
}

/* CPE's backbone: DLR's plan (figures *df), or one of these placed with
 * aged victims, whichever replays shortest (the earlier on ties):
 * - DLR's order, at each tolerance of aged_tie_pcts: a SPILL_OUT that
 *   need not wait for a use that has just run frees its window early, so
 *   the load that needs it can run early; CPE, which keeps its
 *   backbone's spills, cannot change the victims;
 * - that order with its accumulators staggered (ds_dlr_stagger), at
 *   STAGGER_TIE_PCT: the loads spread over the steps instead of coming in
 *   bursts (Matmul_Case0: replay 130,639 aged, 120,754 staggered, final
 *   93,018 -> 87,470; its renumbered copy 2 needs an eighth of a chain:
 *   92,448 -> 89,934; with the lanes' last accumulators started together
 *   and STAGGER_TIE_PCT 86,152; 85,506 with the reload phase's
 *   accumulators that free nothing delayed, ds_dlr_stagger.c sg_delay);
 * - that order with each group of accumulators that run one after
 *   another over the same inputs relayed (ds_dlr_relay), at the first
 *   tolerance: the one whose result the next work reads first runs last
 *   (Conv_Case0: replay 489,819 -> 482,924 at 45,696 bytes, final
 *   436,519 -> 416,511 at 47,232);
 * - its wave order (ds_wave.c), at the first tolerance, only with no
 *   more traffic than the backbone so far, no higher peak than DLR's and
 *   a replay shorter by more than WAVE_MARGIN
 *   (CPE's peak budget counts from its backbone's): CPE cannot run the
 *   wave's deeper layers early, their memory being the backbone's
 *   (Conv_Case1 602,490 -> 582,161; 564,209 with its loads slow for
 *   their size moved up, ds_wave.c); a shorter replay with more spills
 *   came out of CPE longer on Conv_Case0 (482,998 before CPE against
 *   489,819, at 46,468 bytes against 45,888: 441,801 against 439,891) and
 *   on Matmul_Case0 (94,189 against 93,018).
 * - the backbone so far with the uses its spills separate pulled
 *   together, placed by DLR lite (backbone_pulled); the same from the
 *   aged placement of DLR's order that replayed shortest over the cap
 *   is a second backbone, bb->alt (pulled_over);
 * - its tail order (ds_tail.c), placed by DLR lite (backbone_tail):
 *   FlashAttention_Case0's V tiles loaded in the order the output
 *   accumulation needs them, the next rows' Q work before the last ones
 *   (replay 45,174 against the aged 45,571; final 31,673 -> 30,028).
 * All within the traffic cap.  Last, DLR's timely plan: of the
 * placements DLR dropped for their traffic (its other starts, its pulled
 * rounds), the one whose replay was the shortest, a third backbone
 * (bb->timely) where it fits the cap and replays shorter than the one
 * chosen by more than TIMELY_MARGIN (backbone_timely): DLR judges on
 * traffic alone.  The replay before CPE decides: running CPE
 * on each plan would multiply CPE's time.  *bb gets the plan chosen
 * (len 0 when DLR's is kept) and the one it replaced last; the caller
 * frees both (ds_backbone_free).  Cost: AGED_NTIES + 2
 * placements and replays (the relay's only when it changes the order)
 * and the relay's O((N + E) log N), per lag tried (at most log2 of the longest
 * chain) one more and the staggered order's O((N + E) log N), the wave
 * order's O((N + E) log N) and its walk, the pulls' (twice where an
 * aged placement exceeds the cap); the timely plan is judged by its
 * replay in DLR, not replayed again. */
int ds_backbone_choose(const ds_graph *g, const ds_run_opts *o,
		       const ds_plan *dlr, const ds_figures *df, bool packed,
		       const ds_plan *timely, const ds_figures *tf,
		       ds_backbone *bb, ds_err *e)
{
	memset(bb, 0, sizeof *bb); /* the caller frees it, whatever rc */
	bb->best = *df;
	bb->pack = packed;
	int32_t *order = ds_alloc(g->heap, 2 * (size_t)g->n, sizeof *order);
	if (!order)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	ds_plan_nodes(g, dlr, order);
	const int64_t cap = ds_traffic_cap(o, df->extra_ddr);
	int64_t ddr;
	over_plan over = {0};
	int rc = DS_OK;
	for (size_t k = 0; k < AGED_NTIES && rc == DS_OK; k++)
		rc = backbone_try(g, order, aged_tie_pcts[k], cap, INT64_MAX,
				  0, &over, bb, &ddr, e);
	if (rc == DS_OK)
		rc = backbone_stagger(g, order, cap, df->extra_ddr, bb, e);
	if (rc == DS_OK)
		rc = backbone_relay(g, order, cap, bb, e);
	if (rc == DS_OK)
		rc = ds_wave_order(g, order, order + g->n, e);
	if (rc == DS_OK)
		rc = backbone_try(g, order + g->n, aged_tie_pcts[0],
				  bb->best.extra_ddr, df->peak_vstay, WAVE_MARGIN,
				  NULL, bb, &ddr, e);
	if (rc == DS_OK)
		rc = backbone_pulled(g, o, bb->plan.len ? &bb->plan : dlr, cap,
				     bb, e);
	if (rc == DS_OK && over.plan.len)
		rc = pulled_over(g, o, &over.plan, cap, bb, e);
	ds_plan_free(g->heap, &over.plan);
	if (rc == DS_OK)
		rc = backbone_tail(g, o, order, cap, df, bb, e);
	if (rc == DS_OK)
		rc = backbone_timely(g, timely, tf, cap, bb, e);
	ds_free(g->heap, order);
	return rc;
}

void ds_backbone_free(const ds_graph *g, ds_backbone *bb)
{
	ds_plan_free(g->heap, &bb->plan);
	ds_plan_free(g->heap, &bb->prev);
	ds_plan_free(g->heap, &bb->alt);
	ds_plan_free(g->heap, &bb->timely);
}

