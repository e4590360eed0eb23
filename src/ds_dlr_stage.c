/* ds_dlr_stage.c: dan's DLR stage, a search over placements (prefix
 * dlr_).  DLR (ds_dlr.c) places each of several orders (MPAS's, the
 * baselines' one-live ones), a lite run each and a full one for the best
 * (dlr_best); then again from the orders that pull together the uses its
 * plan's spills separate (dlr_pulled); then from the baselines' orders
 * that place better (ds_portfolio_dlr); last, MPAS's order and its
 * plan's placed with the spills decided on bytes and the addresses
 * packed afterwards (dlr_packed, ds_pack.c); on small graphs all of it
 * again from two more starts run in full (dlr_more_starts).  Every plan
 * is replayed; the one of least (extra_ddr, spills) is kept, and of
 * those dropped for their traffic the one whose replay is the shortest
 * goes to the timely memo (timely_offer), which CPE's backbone choice
 * weighs.
 *
 * Requires: a valid graph and orders of it that ds_replay accepts.
 * Guarantees: *out passed ds_replay and has the least (extra_ddr,
 * spills) of the plans made; the same input gives the same plan.
 * Cost: per start a lite DLR run and a replay, one full run (effort N:
 * N), per pull round one pull, a lite run and a replay; the baselines'
 * placements and DLR runs (ds_portfolio.c); four packed placements; on
 * graphs of up to DLR_MORE_MAX_NODES nodes, up to two more full runs,
 * each with its pulls, the baselines' orders and two packed
 * placements. */
#include "ds_dlr_stage.h"

#include <string.h>

/* DLR's timely plan (dan_run's timely, offered to CPE's backbone choice,
 * ds_backbone_choose): of the placements DLR makes and drops for their
 * traffic, the one whose replay is the shortest.  p (figures *f) goes
 * to *t when it replays shorter than the one there; else it is freed. */
static void timely_offer(const ds_graph *g, ds_memo *t, ds_plan *p,
			 const ds_figures *f)
{
	bool take = !t->made || f->makespan < t->fig.makespan;
	t->made = t->made || take;
	ds_plan_keep(g->heap, take, &t->plan, &t->fig, p, f);
}

/* DLR starts from MPAS's order and from up to DLR_STARTS - 1 other good
 * orders MPAS found: orders of equal or nearly equal peak can differ in
 * traffic by tens of percent once placed (Conv_Case0: from 45,888 to
 * 52,618 between orders whose peaks differ by two bytes), and only
 * placing them tells; and the more starts, the less the result depends on
 * which orders MPAS happens to keep (renumbered copies of
 * FlashAttention_Case0: 1,280-1,536 from 16 starts, up to 3,072 from 8).
 * The starts are bounded by size, DLR_START_WORK nodes in all (times the
 * DLR effort), so large graphs get one. */
#define DLR_STARTS 16
#define DLR_START_WORK 40000
_Static_assert(DS_DLR_MAX_STARTS >= DLR_STARTS + 1,
	       "MPAS's own order besides DLR_STARTS");

int ds_dlr_starts(const ds_graph *g, const ds_run_opts *o)
{
	int64_t work = DLR_START_WORK * (o->dlr.effort > 1 ? o->dlr.effort : 1);
	int64_t k = work / ds_size_nodes(g, o->size_nodes);
	return k < 1 ? 1 : k > DLR_STARTS ? DLR_STARTS : (int)k;
}

bool ds_dlr_better(const ds_figures *f, const ds_figures *best)
{
	return f->extra_ddr < best->extra_ddr ||
	       (f->extra_ddr == best->extra_ddr && f->spills < best->spills);
}

/* What dlr_best saw of its starts: each one's lite figures, and which
 * ones it ran in full. */
typedef struct dlr_looks {
	ds_figures lite[DS_DLR_MAX_STARTS];
	bool full[DS_DLR_MAX_STARTS];
} dlr_looks;

/* The start of the best lite figures not yet run in full (the earlier
 * on ties), -1 when every one was. */
static int dlr_next_full(const dlr_looks *l, int nstart)
{
	int k = -1;
	for (int i = 0; i < nstart; i++)
		if (!l->full[i] &&
		    (k < 0 || ds_dlr_better(&l->lite[i], &l->lite[k])))
			k = i;
	return k;
}

/* DLR from each of starts[0..nstart): the plan with the least
 * (extra_ddr, spills), the earlier on ties; the others offered to
 * *timely (timely_offer).  With more than one start,
 * every start first gets a lite run (DLR without its most expensive
 * searches), then the best lite start (the best effort ones with effort)
 * a full one: the starts that place well at a first look are the ones
 * worth the search (Matmul_Case0: 7 full runs took 2.3 s, 7 lite and one
 * full 0.6 s, for the same 11,520).  *l: what the runs saw. */
static int dlr_best(const ds_graph *g, const ds_run_opts *o,
		    const int32_t *const *starts, int nstart, ds_plan *out,
		    ds_memo *timely, dlr_looks *l, ds_err *e)
{
	DS_ASSERT(nstart >= 1 && nstart <= DS_DLR_MAX_STARTS);
	memset(l, 0, sizeof *l);
	if (nstart == 1) {
		l->full[0] = true;
		return ds_dlr(g, starts[0], &o->dlr, out, e);
	}
	ds_dlr_opts lite = o->dlr;
	lite.lite = true;
	const int64_t nfull = o->dlr.effort > 1 ? o->dlr.effort : 1;
	ds_figures best, f;
	memset(&best, 0, sizeof best);
	int rc = DS_OK;
	bool have = false;
	memset(out, 0, sizeof *out);
	/* runs 0..nstart-1 are the lite ones, then the full ones */
	for (int64_t r = 0; r < nstart + nfull && rc == DS_OK; r++) {
		int k = (int)r;
		if (r >= nstart) {
			k = dlr_next_full(l, nstart);
			if (k < 0)
				break;
			l->full[k] = true;
		}
		ds_plan p;
		rc = ds_dlr(g, starts[k], r >= nstart ? &o->dlr : &lite, &p,
			    e);
		if (rc)
			break;
		rc = ds_replay(g, &p, NULL, &f, e);
		if (r < nstart)
			l->lite[k] = f;
		if (rc == DS_OK && (!have || ds_dlr_better(&f, &best))) {
			if (have)
				timely_offer(g, timely, out, &best);
			*out = p;
			best = f;
			have = true;
		} else if (rc == DS_OK) {
			timely_offer(g, timely, &p, &f);
		} else {
			ds_plan_free(g->heap, &p);
		}
	}
	if (rc)
		ds_plan_free(g->heap, out);
	return rc;
}

/* DLR again from orders that pull together the uses its plan's spills
 * separate (ds_order_pull; direct: only a later use that depends on the
 * earlier one), each round from the plan of the round before,
 * a lite run each (as dlr_best's first look); *best (figures *bf) is
 * replaced by a round's plan only when dlr_better says so, so the DLR
 * figure never rises.  FlashAttention_Case1: the first round (from DLR's
 * plan, 21,504 bytes) places at 35,840, the second at 20,224, and CPE
 * makes 117,972 cycles of it (143,193 before): pulling the first reads of
 * spilled S tiles up to the copies that wrote them runs each tile's vector
 * work right after its matmuls, and DLR then needs fewer spills.  The
 * rounds stop when no use moves: on the other five bundled graphs none
 * does (no spill there separates a use from one it depends on that could
 * run right after it).  Only graphs small enough for more than one DLR
 * start get them.  PULL_ROUNDS: 2 and 3, 4, 5 gave the same figures on
 * FlashAttention_Case1 and two renumbered copies of it.  Cost: per round
 * one pull, one lite DLR run and a replay.  The rounds' plans that are
 * not kept, and those a later round replaces, are offered to *timely
 * (timely_offer). */
#define PULL_ROUNDS 2

/* Then rounds that pull every pair of uses a first spill separates, the
 * later use depending on the earlier or not: FlashAttention_Case0's DLR
 * figure 1,280 -> 1,024 bytes and its final plan 31,981 -> 31,673
 * cycles; the other five graphs' plans do not change.  One round: 2 gave
 * the same figures on the six graphs; the round costs Matmul_Case0, whose
 * 73 moved uses place no better, about 0.03 s. */
#define PULL_ANY_ROUNDS 1

static int dlr_pulled(const ds_graph *g, const ds_run_opts *o, int rounds,
		      bool direct, ds_plan *best, ds_figures *bf, ds_memo *timely,
		      ds_err *e)
{
	int32_t *order = ds_alloc(g->heap, (size_t)g->n, sizeof *order);
	if (!order)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	ds_dlr_opts lite = o->dlr;
	lite.lite = true;
	ds_plan last, p;
	ds_figures lastf = {0};
	memset(&last, 0, sizeof last);
	const ds_plan *ref = best;
	int rc = DS_OK;
	for (int r = 0; r < rounds && rc == DS_OK; r++) {
		int32_t moved = 0;
		ds_figures f;
		rc = ds_order_pull(g, ref, direct, order, &moved, e);
		if (rc || moved == 0)
			break;
		rc = ds_dlr(g, order, &lite, &p, e);
		if (rc)
			break;
		if (last.len) /* ref's, when it was last */
			timely_offer(g, timely, &last, &lastf);
		rc = ds_replay(g, &p, NULL, &f, e);
		if (rc == DS_OK && ds_dlr_better(&f, bf)) {
			timely_offer(g, timely, best, bf);
			*best = p;
			*bf = f;
			ref = best;
		} else {
			last = p, lastf = f;
			ref = &last;
		}
	}
	if (last.len && rc == DS_OK)
		timely_offer(g, timely, &last, &lastf);
	ds_plan_free(g->heap, &last);
	ds_free(g->heap, order);
	return rc;
}

/* The rounds of each packing that misses (ds_pack.c, pk_promote).  On
 * 108 generated runs (`gen`, the four kinds, 600, 1,500 and 2,500 nodes,
 * seeds 1-3, at the default capacities, L1=2048,UB=768 and
 * L1=1536,UB=640), DLR's figures summed 475,292 bytes without rounds,
 * 472,204 with 2 (6 lower, none higher), 471,100 with 4 (7 lower),
 * 470,270 with 8 and 469,196 with 16; the packings' share of the six
 * bundled graphs' time: 1.1 % without, 2.4 % with 4, 3.5 % with 8
 * (perf; the greedy packings alone took 2.0 % before the index by time),
 * and the six plans stay the same.  Conv_Case0's first layers as a
 * graph of their own (MPAS's order, 2,189 nodes) need two: 3,084
 * bytes, 8,072 before (measured 2026-12-06). */
#define DLR_PACK_ROUNDS 4

/* One packed placement (ds_pack.c) of order with victim rule victim,
 * replacing *best (figures *bf) when dlr_better says so (*took then
 * set). */
static int dlr_pack_one(const ds_graph *g, const int32_t *order, int victim,
			ds_plan *best, ds_figures *bf, bool *took, ds_err *e)
{
	ds_place_opts po = {DS_BEST_FIT, victim, 0};
	ds_plan p;
	ds_figures f;
	bool fits;
	int rc = ds_place_packed(g, order, &po, DLR_PACK_ROUNDS, &p, &fits,
				 e);
	if (rc || !fits)
		return rc;
	rc = ds_replay(g, &p, NULL, &f, e);
	bool take = rc == DS_OK && ds_dlr_better(&f, bf);
	ds_plan_keep(g->heap, take, best, bf, &p, &f);
	*took = *took || take;
	return rc;
}

/* Last, MPAS's order and the DLR plan's own placed with the spills
 * decided on bytes and the addresses packed afterwards (ds_pack.c), with
 * both of DLR's victim rules; each kept when dlr_better says so, so the
 * DLR figure never rises.  Conv_Case0: 41,480 bytes in 34 spills (MPAS's
 * order, furthest next use) against 45,888 in 37, most of its early
 * spills having been made for want of one hole large enough; the other
 * five bundled graphs keep their plans.  After the pulls and the
 * baselines' orders, not among DLR's candidates: from a packed plan the
 * pulls take other paths (`gen --kind random --nodes 1500 --seed 1`
 * at L1=2048,UB=768: 4,224 bytes against 3,072).  Graphs where
 * ds_pack_applies.  mpas NULL: the plan's own order only.  *took: a
 * packed plan replaced *best. */
static int dlr_packed(const ds_graph *g, const int32_t *mpas, ds_plan *best,
		      ds_figures *bf, bool *took, ds_err *e)
{
	int32_t *own = ds_alloc(g->heap, (size_t)g->n, sizeof *own);
	if (!own)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	ds_plan_nodes(g, best, own);
	int rc = DS_OK;
	for (int k = mpas ? 0 : 2; k < 4 && rc == DS_OK; k++)
		rc = dlr_pack_one(g, k < 2 ? mpas : own,
				  k % 2 ? DS_VICTIM_COST : DS_VICTIM_FURTHEST,
				  best, bf, took, e);
	ds_free(g->heap, own);
	return rc;
}

/* After a full run (plan *out), the stage's other steps: the pulls
 * (graphs with more than one start), the baselines' orders, packing
 * (ds_pack_applies; of order mpas too, unless NULL).  *f: the figures
 * of *out, which each step replaces only by a plan dlr_better says is
 * better; *packed set when a packed plan did. */
static int dlr_improve(const ds_graph *g, const ds_run_opts *o,
		       const ds_dlr_search *s, const int32_t *mpas,
		       ds_memo *timely, ds_plan *out, ds_figures *f,
		       bool *packed, ds_err *e)
{
	const int nstart = ds_dlr_starts(g, o);
	int rc = ds_replay(g, out, NULL, f, e);
	if (rc == DS_OK && nstart > 1)
		rc = dlr_pulled(g, o, nstart < PULL_ROUNDS ? nstart : PULL_ROUNDS,
				true, out, f, timely, e);
	if (rc == DS_OK && nstart > 1)
		rc = dlr_pulled(g, o, PULL_ANY_ROUNDS, false, out, f, timely,
				e);
	if (rc == DS_OK)
		rc = ds_portfolio_dlr(g, s->pf, &o->dlr, out, f, e);
	if (rc == DS_OK && ds_pack_applies(g, o->size_nodes))
		rc = dlr_packed(g, mpas, out, f, packed, e);
	return rc;
}

/* More full runs on small graphs: after the best lite start's, the
 * search runs the stage's order (starts[0]) and the runner-up lite start
 * in full too, each followed by the other steps (dlr_improve), and keeps
 * a plan that dlr_better says is better.  The lite figures rank the
 * starts well but not always: a start a little behind at a first look
 * can end far ahead once its full run and pulls are made.  Measured on
 * 108 generated runs (`gen`, the four kinds, 600, 1,500 and 2,500
 * nodes, seeds 1-3, at the default capacities, L1=2048,UB=768 and
 * L1=1536,UB=640): DLR's figures summed 474,184 bytes with one full
 * run, 465,000 with the stage's order's too (5 lower), 464,469 with the
 * runner-up's (11 lower) and 462,261 with both (-2.5 %, 12 lower, none
 * higher; `--kind random --nodes 600 --seed 3` at L1=1536,UB=640: 3,712
 * -> 1,920 bytes, its final plan 19,287 -> 17,929 cycles); the six
 * bundled graphs' plans stay the same.  DLR_MORE_MAX_NODES: a full run
 * costs far more than a lite one where spills are many (Matmul_Case0,
 * 4,160 nodes and 90 spills: its DLR stage 0.75 s -> 1.57 s with the two
 * runs, for the same 11,520 bytes), so only graphs of up to 3,000 nodes
 * (ds_size_nodes) get them: of the six bundled graphs Conv_Case0 (2,580)
 * and FlashAttention_Case0 (1,716), the six's user time 3.28-3.35 s
 * before and 3.34-3.40 s after, three runs each; measured 2026-12-07. */
#define DLR_MORE_MAX_NODES 3000

/* One more full run from starts[k] and the steps after it, but for
 * MPAS's order packed again (that plan was weighed against *out
 * already, so it cannot be better than *out); the plan replaces *out
 * (figures *fig, *packed) when dlr_better says so, and then *out and
 * the run's own timely plan go to s->timely, else both are freed (so
 * where nothing is better, the timely memo, and with it CPE's backbone
 * choice, stays as it was). */
static int dlr_more(const ds_graph *g, const ds_run_opts *o,
		    const ds_dlr_search *s, int k, ds_plan *out,
		    ds_figures *fig, bool *packed, ds_err *e)
{
	ds_plan q;
	ds_figures fq;
	ds_memo t;
	memset(&t, 0, sizeof t);
	bool qpacked = false;
	int rc = ds_dlr(g, s->starts[k], &o->dlr, &q, e);
	if (rc)
		return rc;
	rc = dlr_improve(g, o, s, NULL, &t, &q, &fq, &qpacked, e);
	if (rc == DS_OK && ds_dlr_better(&fq, fig)) {
		timely_offer(g, s->timely, out, fig);
		*out = q;
		*fig = fq;
		*packed = qpacked;
		if (t.made)
			timely_offer(g, s->timely, &t.plan, &t.fig);
		return DS_OK;
	}
	ds_plan_free(g->heap, &q);
	ds_plan_free(g->heap, &t.plan);
	return rc;
}

/* dlr_more from the stage's order and the runner-up lite start (*l:
 * dlr_best's looks), each where dlr_best did not run it in full; not
 * where *fig has no spill, which no plan is better than (`gen`, the four
 * kinds, 600 and 1,500 nodes, seeds 1-3, at the default capacities: 21
 * of the 24 DLR plans have no spill; the same plans, the 24 runs' user
 * time 5.87-6.59 s -> 5.78-6.41 s, three alternate runs, 2026-12-07). */
static int dlr_more_starts(const ds_graph *g, const ds_run_opts *o,
			   const ds_dlr_search *s, const dlr_looks *l,
			   ds_plan *out, ds_figures *fig, bool *packed,
			   ds_err *e)
{
	if (s->nstart < 2 || fig->spills == 0 ||
	    ds_size_nodes(g, o->size_nodes) > DLR_MORE_MAX_NODES)
		return DS_OK;
	const int runner_up = dlr_next_full(l, s->nstart);
	int rc = DS_OK;
	if (!l->full[0])
		rc = dlr_more(g, o, s, 0, out, fig, packed, e);
	if (rc == DS_OK && runner_up > 0)
		rc = dlr_more(g, o, s, runner_up, out, fig, packed, e);
	return rc;
}

int ds_dlr_stage_search(const ds_graph *g, const ds_run_opts *o,
			const ds_dlr_search *s, ds_plan *out, ds_figures *fig,
			bool *packed, ds_err *e)
{
	if (s->nstart < 1 || s->nstart > DS_DLR_MAX_STARTS)
		return ds_fail(e, DS_EINPUT, "%s: %d DLR starts (1 to %d)",
			       g->source, s->nstart, DS_DLR_MAX_STARTS);
	dlr_looks looks;
	int rc = dlr_best(g, o, s->starts, s->nstart, out, s->timely, &looks,
			  e);
	ds_figures f;
	if (rc == DS_OK)
		rc = dlr_improve(g, o, s, s->mpas, s->timely, out, &f, packed,
				 e);
	if (rc == DS_OK)
		rc = dlr_more_starts(g, o, s, &looks, out, &f, packed, e);
	if (rc)
		ds_plan_free(g->heap, out);
	else
		*fig = f;
	return rc;
}
