/* ds_pipeline.c: the schedulers, end to end, each plan checked.
 *
 * dan runs the passes in order — MPAS (an order), DLR (placement and
 * spills; from several starts, then again from orders that pull together
 * the uses its plan's spills separate: dlr_pulled), CPE (pipeline
 * overlap; its backbone DLR's plan, or DLR's order, as it is, with its
 * accumulators staggered, relayed (ds_dlr_relay) or as a wave
 * (ds_wave.c), placed again with aged victims where that replays
 * shorter within the traffic cap: aged_backbone; that backbone with a use
 * its spills separate pulled next to the earlier one, with the loads it
 * needs, where DLR places that better: backbone_pulled, CPE then run
 * from both: pull_floor) and its retiming
 * (ds_retime.c), then both again, each on the other's plan, while that
 * shortens it (cpe_retime_rounds), and the final plan's dead reloads
 * dropped (ds_plan_drop_dead_reloads) — stopping after the stage asked
 * for; with a traffic budget, CPE's chain at budget 0 too, its plan kept
 * where it is shorter with no more traffic (budget_floor), and above 5
 * CPE's stage at the next lower of the budgets 5, 25, 100 and 400, its
 * plan kept where it is shorter (ladder_floor); with more
 * effort the default's plan is made too and the shorter kept
 * (default_floor); the baselines' orders and plans compete at each stage
 * (ds_portfolio.c), and a graph of a few parts is also planned part by
 * part (ds_parts.c).  The baselines are an order plus the shared placer
 * with their policy.
 *
 * Requires: a valid graph.  Guarantees: the plan returned has passed
 * ds_replay (with the one-live rule for an MPAS-only plan), its spills
 * numbered in the order their SPILL_OUTs run (ds_plan_sort_spills, checked
 * by a strict replay), and *fig holds its figures. */
#include "ds_pipeline.h"
#include "ds_portfolio.h"

#include <string.h>
#include <time.h>

const char *const ds_sched_names[DS_NSCHED] = {
	"original", "free-first", "lpmf", "cp-list", "vpux", "dan"};
const char *const ds_stage_names[4] = {"", "mpas", "dlr", "cpe"};

void ds_run_opts_default(ds_run_opts *o)
{
	memset(o, 0, sizeof *o);
	o->scheduler = DS_SCHED_DAN;
	o->stage = DS_STAGE_CPE;
	o->cpe.traffic_budget_pct = 5;
	/* the rounds that may raise the peak run only where it held CPE
	 * back (ds_cpe); 5, as the traffic budget: 3, 5 and 10 gave the
	 * same plans on the six bundled graphs */
	o->cpe.peak_budget_pct = 5;
}

static double seconds_since(clock_t t0)
{
	return (double)(clock() - t0) / CLOCKS_PER_SEC;
}

/* Replays p (the evaluator is the judge of every pass) and reports. */
static int check(const ds_graph *g, const ds_run_opts *o, const char *stage,
		 const ds_plan *p, bool q1, clock_t t0, ds_figures *fig,
		 ds_err *e)
{
	ds_replay_opts ro = {.q1 = q1};
	int rc = ds_replay(g, p, &ro, fig, e);
	if (rc == DS_EPLAN) {
		/* a pass produced an invalid plan: a bug, say so plainly */
		char msg[sizeof e->msg];
		memcpy(msg, e->msg, sizeof msg);
		return ds_fail(e, DS_EPLAN, "%s: internal error: stage %s made "
			       "an invalid plan: %.400s",
			       g->source, stage, msg);
	}
	if (rc == DS_OK && o->progress)
		o->progress(o->progress_ud, stage, seconds_since(t0), fig);
	return rc;
}

static int run_baseline(const ds_graph *g, const ds_run_opts *o,
			ds_plan *out, ds_figures *fig, ds_err *e)
{
	clock_t t0 = clock();
	int32_t *order = ds_alloc(g->heap, (size_t)g->n, sizeof *order);
	if (!order)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	int rc = ds_baseline_order(g, o->scheduler, order, e);
	if (rc == DS_OK)
		rc = ds_baseline_plan(g, o->scheduler, order, out, e);
	ds_free(g->heap, order);
	if (rc == DS_OK)
		rc = check(g, o, ds_sched_names[o->scheduler], out, false, t0,
			   fig, e);
	if (rc)
		ds_plan_free(g->heap, out);
	return rc;
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
/* and MPAS's own order when a baseline's replaced it */
#define MAX_STARTS (DLR_STARTS + 1)

static int dlr_starts(const ds_graph *g, const ds_run_opts *o)
{
	int64_t work = DLR_START_WORK * (o->dlr.effort > 1 ? o->dlr.effort : 1);
	int64_t k = work / (g->n > 0 ? g->n : 1);
	return k < 1 ? 1 : k > DLR_STARTS ? DLR_STARTS : (int)k;
}

/* Is f better than best: less extra_ddr, then fewer spills. */
static bool dlr_better(const ds_figures *f, const ds_figures *best)
{
	return f->extra_ddr < best->extra_ddr ||
	       (f->extra_ddr == best->extra_ddr && f->spills < best->spills);
}

/* DLR from each of starts[0..nstart): the plan with the least
 * (extra_ddr, spills), the earlier on ties.  With more than one start,
 * every start first gets a lite run (DLR without its most expensive
 * searches), then the best lite start (the best effort ones with effort)
 * a full one: the starts that place well at a first look are the ones
 * worth the search (Matmul_Case0: 7 full runs took 2.3 s, 7 lite and one
 * full 0.6 s, for the same 11,520). */
static int dlr_best(const ds_graph *g, const ds_run_opts *o,
		    const int32_t *const *starts, int nstart, ds_plan *out,
		    ds_err *e)
{
	DS_ASSERT(nstart >= 1 && nstart <= MAX_STARTS);
	if (nstart == 1)
		return ds_dlr(g, starts[0], &o->dlr, out, e);
	ds_dlr_opts lite = o->dlr;
	lite.lite = true;
	const int64_t nfull = o->dlr.effort > 1 ? o->dlr.effort : 1;
	ds_figures best, f, first[MAX_STARTS];
	bool full[MAX_STARTS] = {false};
	memset(&best, 0, sizeof best);
	int rc = DS_OK;
	bool have = false;
	memset(out, 0, sizeof *out);
	/* runs 0..nstart-1 are the lite ones, then the full ones */
	for (int64_t r = 0; r < nstart + nfull && rc == DS_OK; r++) {
		int k = (int)r;
		if (r >= nstart) {
			/* the best lite start not yet run in full */
			k = -1;
			for (int i = 0; i < nstart; i++)
				if (!full[i] &&
				    (k < 0 || dlr_better(&first[i], &first[k])))
					k = i;
			if (k < 0)
				break;
			full[k] = true;
		}
		ds_plan p;
		rc = ds_dlr(g, starts[k], r >= nstart ? &o->dlr : &lite, &p,
			    e);
		if (rc)
			break;
		rc = ds_replay(g, &p, NULL, &f, e);
		if (r < nstart)
			first[k] = f;
		if (rc == DS_OK && (!have || dlr_better(&f, &best))) {
			if (have)
				ds_plan_free(g->heap, out);
			*out = p;
			best = f;
			have = true;
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
 * one pull, one lite DLR run and a replay. */
#define PULL_ROUNDS 2

/* Then rounds that pull every pair of uses a first spill separates, the
 * later use depending on the earlier or not: FlashAttention_Case0's DLR
 * figure 1,280 -> 1,024 bytes and its final plan 31,981 -> 31,673
 * cycles; the other five graphs' plans do not change.  One round: 2 gave
 * the same figures on the six graphs; the round costs Matmul_Case0, whose
 * 73 moved uses place no better, about 0.03 s. */
#define PULL_ANY_ROUNDS 1

static int dlr_pulled(const ds_graph *g, const ds_run_opts *o, int rounds,
		      bool direct, ds_plan *best, ds_figures *bf, ds_err *e)
{
	int32_t *order = ds_alloc(g->heap, (size_t)g->n, sizeof *order);
	if (!order)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	ds_dlr_opts lite = o->dlr;
	lite.lite = true;
	ds_plan last, p;
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
		ds_plan_free(g->heap, &last); /* ref's, when it was last */
		rc = ds_replay(g, &p, NULL, &f, e);
		if (rc == DS_OK && dlr_better(&f, bf)) {
			ds_plan_free(g->heap, best);
			*best = p;
			*bf = f;
			ref = best;
		} else {
			last = p;
			ref = &last;
		}
	}
	ds_plan_free(g->heap, &last);
	ds_free(g->heap, order);
	return rc;
}

/* What dan's stages hand on: MPAS's orders and the baselines'. */
typedef struct dan_run {
	int32_t *order; /* the MPAS stage's order */
	int32_t *alt;	/* MPAS's other orders (nalt * n), then
			   MPAS's own when a baseline order replaced it */
	int nalt;
	bool replaced;
	ds_portfolio pf;
} dan_run;

static void dan_free(const ds_graph *g, dan_run *d)
{
	ds_free(g->heap, d->order);
	ds_free(g->heap, d->alt);
	ds_portfolio_free(g, &d->pf);
}

/* The one-live peak of order, INT64_MAX when it breaks the rule. */
static int one_live_peak(const ds_graph *g, const int32_t *order,
			 int64_t *peak, ds_err *e)
{
	ds_plan p = {g->n, (int32_t *)order, NULL, 0, NULL};
	ds_replay_opts ro = {.q1 = true};
	ds_figures f;
	int rc = ds_replay(g, &p, &ro, &f, e);
	*peak = rc == DS_OK ? f.peak_vstay : INT64_MAX;
	return rc == DS_EPLAN ? DS_OK : rc;
}

/* Stage 1: MPAS's orders, and the baselines' (their plans too when a
 * later stage runs); the least peak among the one-live ones is the
 * stage's order, MPAS's own then the last DLR start. */
static int dan_mpas(const ds_graph *g, const ds_run_opts *o, dan_run *d,
		    ds_figures *fig, ds_err *e)
{
	const ds_heap *h = g->heap;
	clock_t t0 = clock();
	d->order = ds_alloc(h, (size_t)g->n, sizeof *d->order);
	int nalt = o->stage == DS_STAGE_MPAS ? 0 : dlr_starts(g, o) - 1;
	d->alt = ds_alloc(h, (size_t)(nalt + 1) * g->n, sizeof *d->alt);
	if (!d->order || !d->alt)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	int rc = ds_mpas_alts(g, &o->mpas, d->order, d->alt, nalt, &d->nalt,
			      e);
	if (rc == DS_OK)
		rc = ds_portfolio_run(g, &d->pf, e);
	int64_t peak;
	if (rc == DS_OK)
		rc = one_live_peak(g, d->order, &peak, e);
	if (rc == DS_OK) {
		memcpy(d->alt + (size_t)d->nalt * g->n, d->order,
		       (size_t)g->n * sizeof *d->order);
		d->replaced = ds_portfolio_mpas(g, &d->pf, d->order, &peak) >= 0;
	}
	if (rc == DS_OK) {
		/* the one-live rule binds the MPAS figure; a graph where it
		 * cannot hold may still go on to the later stages */
		ds_plan mp = {g->n, d->order, NULL, 0, NULL};
		rc = check(g, o, "mpas", &mp, true, t0, fig, e);
		if (rc == DS_EPLAN && o->stage != DS_STAGE_MPAS)
			rc = check(g, o, "mpas", &mp, false, t0, fig, e);
	}
	return rc;
}

/* The final choice of DLR's stage: plan *p (dan's) against the
 * baselines' plans, then against its parts planned alone; then checked
 * and reported (CPE's stage takes the same steps, then its budget floor:
 * dan_cpe). */
static int dlr_final(const ds_graph *g, const ds_run_opts *o, dan_run *d,
		     ds_plan *p, clock_t t0, ds_figures *fig, ds_err *e)
{
	ds_figures f;
	ds_run_opts quiet = {0}; /* checked, not reported yet */
	int rc = check(g, &quiet, "dlr", p, false, t0, &f, e);
	if (rc == DS_OK)
		rc = ds_portfolio_final(g, &d->pf, NULL, p, &f, e);
	if (rc == DS_OK)
		rc = ds_parts_plan(g, o, p, &f, e);
	if (rc == DS_OK)
		rc = check(g, o, "dlr", p, false, t0, fig, e);
	return rc;
}

/* Stage 2: DLR from MPAS's orders, then from the baselines' one-live
 * orders that place better than that (ds_portfolio_dlr). */
static int dan_dlr(const ds_graph *g, const ds_run_opts *o, dan_run *d,
		   ds_plan *out, ds_figures *fig, ds_err *e)
{
	clock_t t0 = clock();
	const int32_t *starts[MAX_STARTS];
	int k = 0;
	starts[k++] = d->order;
	if (d->replaced)
		starts[k++] = d->alt + (size_t)d->nalt * g->n;
	for (int i = 0; i < d->nalt; i++)
		starts[k++] = d->alt + (size_t)i * g->n;
	int rc = dlr_best(g, o, starts, k, out, e);
	ds_figures f;
	if (rc == DS_OK)
		rc = ds_replay(g, out, NULL, &f, e);
	const int nstart = dlr_starts(g, o);
	if (rc == DS_OK && nstart > 1)
		rc = dlr_pulled(g, o, nstart < PULL_ROUNDS ? nstart : PULL_ROUNDS,
				true, out, &f, e);
	if (rc == DS_OK && nstart > 1)
		rc = dlr_pulled(g, o, PULL_ANY_ROUNDS, false, out, &f, e);
	if (rc == DS_OK)
		rc = ds_portfolio_dlr(g, &d->pf, &o->dlr, out, &f, e);
	if (rc == DS_OK && o->stage == DS_STAGE_DLR)
		rc = dlr_final(g, o, d, out, t0, fig, e);
	else if (rc == DS_OK)
		rc = check(g, o, "dlr", out, false, t0, fig, e);
	if (rc)
		ds_plan_free(g->heap, out);
	return rc;
}

/* The traffic cap: the budget over DLR's figure. */
static int64_t traffic_cap(const ds_run_opts *o, int64_t dlr_ddr)
{
	double pct = o->cpe.traffic_budget_pct > 0 ? o->cpe.traffic_budget_pct
						   : 0;
	return (int64_t)((double)dlr_ddr * (1 + pct / 100));
}

/* Retiming after CPE (ds_retime.c), its traffic cap the budget over
 * DLR's figure (dlr_ddr): its plan replaces *p only when the replay finds
 * it shorter, so never worse by construction.  *fig: p's figures. */
static int retime(const ds_graph *g, const ds_run_opts *o, ds_plan *p,
		  int64_t dlr_ddr, ds_figures *fig, ds_err *e)
{
	clock_t t0 = clock();
	ds_plan q;
	ds_figures f;
	ds_retime_opts ro = o->retime;
	ro.max_extra_ddr = traffic_cap(o, dlr_ddr);
	ds_run_opts quiet = *o;
	quiet.progress = NULL;
	int rc = ds_retime(g, p, &ro, &q, e);
	if (rc == DS_OK)
		rc = check(g, &quiet, "retime", &q, false, t0, &f, e);
	ds_plan_keep(g->heap, rc == DS_OK && f.makespan < fig->makespan, p,
		     fig, &q, &f);
	/* the line reports the plan kept */
	if (rc == DS_OK && o->progress)
		o->progress(o->progress_ud, "retime", seconds_since(t0), fig);
	return rc;
}

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

/* CPE's backbone so far: the plan (len 0: DLR's own) and its figures;
 * the one it replaced (len 0: DLR's own; none while had_prev is false),
 * which CPE also reworks with more effort (dan_cpe). */
typedef struct backbone {
	ds_plan plan;
	ds_figures best;
	ds_plan prev;
	bool had_prev;
	int64_t prev_peak; /* prev's peak_vstay (DLR's when prev is) */
	bool pulled;	   /* plan is backbone_pulled's */
} backbone;

/* Plan p (taken over) replayed, kept in bb as backbone_try says. */
static int backbone_keep(const ds_graph *g, ds_plan *p, int64_t max_ddr,
			 int64_t max_peak, int32_t margin, backbone *bb,
			 int64_t *ddr, ds_err *e)
{
	ds_figures f;
	int rc = ds_replay(g, p, NULL, &f, e);
	*ddr = rc == DS_OK ? f.extra_ddr : 0;
	if (rc == DS_OK && f.extra_ddr <= max_ddr && f.peak_vstay <= max_peak &&
	    f.makespan * (1000 + margin) < bb->best.makespan * 1000) {
		ds_plan_free(g->heap, &bb->prev);
		bb->prev = bb->plan;
		bb->had_prev = true;
		bb->prev_peak = bb->best.peak_vstay;
		bb->pulled = false;
		bb->plan = *p;
		bb->best = f;
	} else {
		ds_plan_free(g->heap, p);
	}
	return rc;
}

/* One backbone candidate: order placed with aged victims at tolerance
 * tie_pct, kept in bb when its plan has at most max_ddr extra DDR
 * traffic, a peak_vstay of at most max_peak (checked on the order first:
 * a walk, where the placement costs much more) and a replay shorter than
 * bb's by more than margin per mille.  *ddr: its extra DDR traffic (0
 * when not placed). */
static int backbone_try(const ds_graph *g, const int32_t *order,
			int32_t tie_pct, int64_t max_ddr, int64_t max_peak,
			int32_t margin, backbone *bb, int64_t *ddr, ds_err *e)
{
	ds_place_opts po = {DS_BEST_FIT, DS_VICTIM_AGED, tie_pct};
	ds_plan p;
	*ddr = 0;
	if (ds_order_peak(g, order, NULL) > max_peak)
		return DS_OK;
	int rc = ds_place(g, order, &po, &p, e);
	if (rc)
		return rc;
	return backbone_keep(g, &p, max_ddr, max_peak, margin, bb, ddr, e);
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
			    int64_t dlr_ddr, backbone *bb, ds_err *e)
{
	bool changed = true;
	int64_t ddr;
	int rc = DS_OK;
	for (int32_t div = 1; rc == DS_OK && changed && div > 0;) {
		rc = ds_dlr_stagger(g, order, div, order + g->n, &changed, e);
		if (rc == DS_OK && changed)
			rc = backbone_try(g, order + g->n, STAGGER_TIE_PCT, cap,
					  INT64_MAX, 0, bb, &ddr, e);
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
			  backbone *bb, ds_err *e)
{
	bool changed;
	int64_t ddr;
	int rc = ds_dlr_relay(g, order, order + g->n, &changed, e);
	if (rc == DS_OK && changed)
		rc = backbone_try(g, order + g->n, aged_tie_pcts[0], cap,
				  INT64_MAX, 0, bb, &ddr, e);
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
			 backbone *bb, ds_err *e)
{
	bool changed;
	int64_t ddr;
	if (dlr_starts(g, o) < 2)
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
		rc = backbone_keep(g, &p, cap, df->peak_vstay, 0, bb, &ddr, e);
	return rc;
}

/* Plan p's order without its spill nodes into out[0..n). */
static void plan_nodes(const ds_graph *g, const ds_plan *p, int32_t *out)
{
	int32_t len = 0;
	for (int32_t i = 0; i < p->len; i++)
		if (p->order[i] < g->n)
			out[len++] = p->order[i];
}

/* Pairs backbone_pulled looks at, at most (in the order of their first
 * SPILL_OUTs).  Conv_Case0's backbone (its relay order, aged) has 21; the
 * one pull taken is the first. */
#define PULL_PAIRS 32

/* Whether DLR's placement f improves on best with no trade: neither more
 * traffic nor more spills, and less of one. */
static bool dlr_dominates(const ds_figures *f, const ds_figures *best)
{
	return f->extra_ddr <= best->extra_ddr && f->spills <= best->spills &&
	       (f->extra_ddr < best->extra_ddr || f->spills < best->spills);
}

/* The pulls of pairs k (early[k] and late[k], ds_order_pull_one) into
 * ord in turn, those that move an ancestor ds_order_pull would not, each
 * kept when DLR lite places the pulled order with no more traffic and
 * spills and less of one (dlr_dominates) than ord's placement, *p (made
 * at the first such pull; p->len 0 until then); trial: scratch for n
 * nodes.  *taken: how many kept. */
static int pull_each(const ds_graph *g, const ds_run_opts *o,
		     const int32_t *early, const int32_t *late,
		     int32_t npairs, int32_t *ord, int32_t *trial, ds_plan *p,
		     int *taken, ds_err *e)
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
		if (rc || moved == 0)
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

/* The backbone so far (bb's plan, else DLR's, dlr) with the uses its
 * spills separate pulled together one pair at a time: each of its first
 * PULL_PAIRS pairs (ds_pull_pairs) whose later use needs ancestors that
 * stand between moved with them up to right after the earlier use
 * (ds_order_pull_one), kept when DLR lite places the result with no more
 * traffic and spills than the order so far and less of one
 * (pull_each).  When a pull is kept, that plan is a candidate
 * (backbone_keep: a shorter replay within the cap).  dlr_pulled's pulls,
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
 * at 5,568).  Cost: O(N + E) per pair,
 * and 1 + PULL_PAIRS DLR lite placements and replays at most, none where
 * no pull needs ancestors (FlashAttention_Case1, Matmul_Case0: pairs of
 * a use and its ALLOC, dlr_pulled's). */
static int backbone_pulled(const ds_graph *g, const ds_run_opts *o,
			   const ds_plan *dlr, int64_t cap, backbone *bb,
			   ds_err *e)
{
	if (dlr_starts(g, o) < 2)
		return DS_OK;
	const ds_plan *base = bb->plan.len ? &bb->plan : dlr;
	ds_arena ar;
	ds_arena_init(&ar, g->heap);
	int32_t *ord = ds_arena_alloc(&ar, 2 * (size_t)g->n, sizeof *ord);
	int32_t *pair = ds_arena_alloc(&ar, 2 * PULL_PAIRS, sizeof *pair);
	if (ar.failed) {
		ds_arena_free(&ar);
		return ds_fail(e, DS_ENOMEM, "out of memory");
	}
	int32_t npairs = 0;
	plan_nodes(g, base, ord);
	ds_plan p = {0};
	int taken = 0;
	int rc = ds_pull_pairs(g, base, PULL_PAIRS, pair, pair + PULL_PAIRS,
			       &npairs, e);
	if (rc == DS_OK)
		rc = pull_each(g, o, pair, pair + PULL_PAIRS, npairs, ord,
			       ord + g->n, &p, &taken, e);
	int64_t ddr, was = bb->best.makespan;
	if (rc == DS_OK && taken > 0)
		rc = backbone_keep(g, &p, cap, INT64_MAX, 0, bb, &ddr, e);
	else
		ds_plan_free(g->heap, &p);
	bb->pulled = bb->best.makespan < was;
	ds_arena_free(&ar);
	return rc;
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
 * - its tail order (ds_tail.c), placed by DLR lite (backbone_tail):
 *   FlashAttention_Case0's V tiles loaded in the order the output
 *   accumulation needs them, the next rows' Q work before the last ones
 *   (replay 45,174 against the aged 45,571; final 31,673 -> 30,028).
 * All within the traffic cap.  The replay before CPE decides: running CPE
 * on each plan would multiply CPE's time.  *bb gets the plan chosen
 * (len 0 when DLR's is kept) and the one it replaced last; the caller
 * frees both (backbone_free).  Cost: AGED_NTIES + 2
 * placements and replays (the relay's only when it changes the order)
 * and the relay's O((N + E) log N), per lag tried (at most log2 of the longest
 * chain) one more and the staggered order's O((N + E) log N), the wave
 * order's O((N + E) log N) and its walk. */
static int aged_backbone(const ds_graph *g, const ds_run_opts *o,
			 const ds_plan *dlr, const ds_figures *df,
			 backbone *bb, ds_err *e)
{
	memset(bb, 0, sizeof *bb); /* the caller frees it, whatever rc */
	bb->best = *df;
	int32_t *order = ds_alloc(g->heap, 2 * (size_t)g->n, sizeof *order);
	if (!order)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	plan_nodes(g, dlr, order);
	const int64_t cap = traffic_cap(o, df->extra_ddr);
	int64_t ddr;
	int rc = DS_OK;
	for (size_t k = 0; k < AGED_NTIES && rc == DS_OK; k++)
		rc = backbone_try(g, order, aged_tie_pcts[k], cap, INT64_MAX,
				  0, bb, &ddr, e);
	if (rc == DS_OK)
		rc = backbone_stagger(g, order, cap, df->extra_ddr, bb, e);
	if (rc == DS_OK)
		rc = backbone_relay(g, order, cap, bb, e);
	if (rc == DS_OK)
		rc = ds_wave_order(g, order, order + g->n, e);
	if (rc == DS_OK)
		rc = backbone_try(g, order + g->n, aged_tie_pcts[0],
				  bb->best.extra_ddr, df->peak_vstay, WAVE_MARGIN,
				  bb, &ddr, e);
	if (rc == DS_OK)
		rc = backbone_pulled(g, o, dlr, cap, bb, e);
	if (rc == DS_OK)
		rc = backbone_tail(g, o, order, cap, df, bb, e);
	ds_free(g->heap, order);
	return rc;
}

static void backbone_free(const ds_graph *g, backbone *bb)
{
	ds_plan_free(g->heap, &bb->plan);
	ds_plan_free(g->heap, &bb->prev);
}

/* CPE from backbone bb (len 0: DLR's plan dlr) into *out, and its
 * figures *f from the replay. */
static int cpe_from(const ds_graph *g, const ds_run_opts *o,
		    const ds_plan *bb, const ds_plan *dlr, ds_plan *out,
		    ds_figures *f, ds_err *e)
{
	int rc = ds_cpe(g, bb->len ? bb : dlr, &o->cpe, out, e);
	if (rc == DS_OK)
		rc = ds_replay(g, out, NULL, f, e);
	return rc;
}

/* Plan q (figures fq) replaces *out (figures *f) when it is shorter, or
 * as long with less traffic; the other one is freed. */
static void keep_shorter(const ds_graph *g, ds_plan *out, ds_figures *f,
			 ds_plan *q, const ds_figures *fq)
{
	ds_plan_keep(g->heap,
		     fq->makespan < f->makespan ||
			     (fq->makespan == f->makespan &&
			      fq->extra_ddr < f->extra_ddr),
		     out, f, q, fq);
}

/* CPE and retiming again, each from the other's plan, while the pair
 * shortens it: CPE reworks the order around the spills retiming added and
 * moved, and retiming then finds the waits of the new critical chain.
 * CPE's peak limit stays its first run's (peak_cap), retiming's traffic
 * cap the budget over DLR's figure (dlr_ddr).  *p and *f: the plan so far
 * and its figures, replaced by a shorter pair's (or as long with less
 * traffic, which ends the rounds).  CPE_RETIME_ROUNDS: measured on the
 * six bundled graphs (default options, no size limit), one round gives
 * FlashAttention_Case1 115,378 cycles (117,227 without), Conv_Case0
 * 413,139 (413,994), Conv_Case1 561,799 (561,862), Matmul_Case0 85,347
 * (85,506), Matmul_Case1 905,751 (905,937); two Conv_Case1 561,708;
 * three and five the same as two.  FlashAttention_Case0 keeps 30,028:
 * its shorter plans (29,701 after eight rounds) need a higher peak than
 * the first run's limit (5,538 against 5,388). */
#define CPE_RETIME_ROUNDS 2
/* ... on graphs of at most this many nodes: Conv_Case1 (36,086 nodes)
 * and Matmul_Case1 (30,976) gain 154 and 186 cycles (0.03 %) for about
 * 0.4 s more in all, and on 1M generated nodes (the graph of bench
 * --scale) the two rounds took the cpe line of `schedule -v` from 22.3 s
 * to 36.1 s, for a makespan 0.05 % shorter. */
#define CPE_RETIME_MAX_NODES 20000

static int cpe_retime_rounds(const ds_graph *g, const ds_run_opts *o,
			     int64_t peak_cap, int64_t dlr_ddr, ds_plan *p,
			     ds_figures *f, ds_err *e)
{
	ds_run_opts quiet = *o;
	quiet.progress = NULL;
	quiet.cpe.peak_cap = peak_cap;
	int rc = DS_OK;
	int rounds = g->n <= CPE_RETIME_MAX_NODES ? CPE_RETIME_ROUNDS : 0;
	for (int r = 0; r < rounds && rc == DS_OK; r++) {
		ds_plan q;
		ds_figures fq;
		memset(&q, 0, sizeof q);
		rc = ds_cpe(g, p, &quiet.cpe, &q, e);
		if (rc == DS_OK)
			rc = ds_replay(g, &q, NULL, &fq, e);
		if (rc == DS_OK)
			rc = retime(g, &quiet, &q, dlr_ddr, &fq, e);
		if (rc) {
			ds_plan_free(g->heap, &q);
			break;
		}
		bool shorter = fq.makespan < f->makespan;
		keep_shorter(g, p, f, &q, &fq);
		if (!shorter)
			break;
	}
	return rc;
}

/* CPE and retiming from the backbone that bb's plan replaced (bb->prev,
 * DLR's plan dlr when that was it), then CPE and retiming again on each
 * other's plans under the peak limit rounds_peak when it is above 0
 * (cpe_retime_rounds); *out and *f become that plan and its figures when
 * it is the shorter (the one with less traffic on ties). */
static int chain_from_prev(const ds_graph *g, const ds_run_opts *o,
			   const backbone *bb, const ds_plan *dlr,
			   int64_t dlr_ddr, int64_t rounds_peak, ds_plan *out,
			   ds_figures *f, ds_err *e)
{
	ds_run_opts quiet = *o;
	quiet.progress = NULL;
	ds_plan q;
	ds_figures fq;
	int rc = cpe_from(g, o, &bb->prev, dlr, &q, &fq, e);
	if (rc == DS_OK)
		rc = retime(g, &quiet, &q, dlr_ddr, &fq, e);
	if (rc == DS_OK && rounds_peak > 0)
		rc = cpe_retime_rounds(g, &quiet, rounds_peak, dlr_ddr, &q, &fq,
				       e);
	if (rc == DS_OK)
		keep_shorter(g, out, f, &q, &fq);
	else
		ds_plan_free(g->heap, &q);
	return rc;
}

/* With more effort (--effort N > 1), CPE and retime also from the
 * backbone that bb's plan replaced: the replay before CPE is a rough
 * guide (at --effort 2, Matmul_Case1's tail order replays shorter than
 * its aged plan and came out of CPE at 910,813 cycles against 905,937).
 * *out and *f become that plan and its figures when it is the shorter
 * (the one with less traffic on ties). */
static int cpe_runner_up(const ds_graph *g, const ds_run_opts *o,
			 const backbone *bb, const ds_plan *dlr,
			 int64_t dlr_ddr, ds_plan *out, ds_figures *f,
			 ds_err *e)
{
	if (o->cpe.effort <= 1 || !bb->had_prev || bb->pulled)
		return DS_OK; /* pulled: pull_floor has run it, rounds too */
	return chain_from_prev(g, o, bb, dlr, dlr_ddr, 0, out, f, e);
}

/* When the backbone is backbone_pulled's, CPE, retiming and their rounds
 * also from the one it replaced, the shorter final plan kept (the one
 * with less traffic on ties): a pull is judged by DLR's placement and the
 * replay before CPE, rough guides.  `dansched gen --kind random --nodes
 * 3000 --seed 11` came to 59,144 cycles at 2,304 bytes with the pulled
 * backbone against 58,589 at 2,496 without.  Cost: one more chain where
 * a pull is kept (Conv_Case0's run, pulls and floor together: 0.20 ->
 * about 0.38 s). */
static int pull_floor(const ds_graph *g, const ds_run_opts *o,
		      const backbone *bb, const ds_plan *dlr, int64_t dlr_ddr,
		      ds_plan *out, ds_figures *f, ds_err *e)
{
	if (!bb->pulled)
		return DS_OK;
	return chain_from_prev(g, o, bb, dlr, dlr_ddr,
			       ds_cpe_budget(bb->prev_peak,
					     o->cpe.peak_budget_pct),
			       out, f, e);
}

/* CPE's chain from DLR's plan dlr (figures *df): the backbone, CPE,
 * retiming, the rounds, the pull floor and the runner-up, into *out
 * (figures *f).  The retime line reports its first run's own time, taken
 * out of *t0's count (t0 NULL: no line is reported). */
static int cpe_chain(const ds_graph *g, const ds_run_opts *o,
		     const ds_plan *dlr, const ds_figures *df, ds_plan *out,
		     ds_figures *f, clock_t *t0, ds_err *e)
{
	const int64_t dlr_ddr = df->extra_ddr;
	backbone bb;
	int rc = aged_backbone(g, o, dlr, df, &bb, e);
	if (rc == DS_OK)
		rc = cpe_from(g, o, &bb.plan, dlr, out, f, e);
	clock_t rt0 = clock();
	if (rc == DS_OK)
		rc = retime(g, o, out, dlr_ddr, f, e);
	if (t0)
		*t0 += clock() - rt0; /* the retime line has its own time */
	if (rc == DS_OK)
		/* the peak limit CPE's first run had, over its backbone's */
		rc = cpe_retime_rounds(g, o,
				       ds_cpe_budget(bb.best.peak_vstay,
						     o->cpe.peak_budget_pct),
				       dlr_ddr, out, f, e);
	if (rc == DS_OK)
		rc = pull_floor(g, o, &bb, dlr, dlr_ddr, out, f, e);
	if (rc == DS_OK)
		rc = cpe_runner_up(g, o, &bb, dlr, dlr_ddr, out, f, e);
	backbone_free(g, &bb);
	return rc;
}

/* The budget floor applies to graphs of at most this many nodes (the
 * limit of the rounds, CPE_RETIME_MAX_NODES): at 1M nodes it would
 * double the cpe line of `schedule -v` (22 s). */
#define BUDGET_FLOOR_MAX_NODES CPE_RETIME_MAX_NODES

/* The budget floor: a plan that spends a traffic budget is never beaten
 * on every figure by the plan CPE's chain makes at budget 0.  With a
 * budget above 0 (and DLR's plan spilling, else the caps are the same),
 * the chain runs again at budget 0 from the same DLR plan (*df: its
 * figures) and meets the baselines' plans as in a run at budget 0
 * (ds_portfolio_final); its plan replaces the final one (*out, figures
 * *f) when it is shorter with no more traffic and spills, so that what
 * the final plan was guaranteed against the baselines and the parts (on
 * traffic and spills too) still holds.  Why: the backbone is chosen by
 * its replay before CPE, a rough guide, and the budget lets in backbones
 * that replay shorter but come out of CPE longer.  `dansched gen --kind
 * matmul --nodes 3000 --seed 7` at the default budget had 233,489 cycles
 * and 51,968 bytes against 232,665 and 51,456 at budget 0 (its aged
 * backbone, 512 bytes over DLR's, replayed 244,451 against DLR's own
 * 249,405); of 72 generated graphs (four kinds, 300 to 6,000 nodes),
 * one was longer at 5 than at 0 and two at 25 than at 5 (those two as
 * long at 0 as at 5); with the floor, none.  The floor's plan meets the
 * final one, the baselines' and the parts' plans taken into account: kept
 * in place of the chain's plan alone, a shorter one lost to the plan of
 * the parts that the chain's own plan had yielded to (`--nodes 2000
 * --seed 4`: 49,004 cycles against 48,621).  The parts are not planned
 * again at 0 (that doubled the time of a union of two bundled graphs):
 * each part's plan has its own floor. */
static int budget_floor(const ds_graph *g, const ds_run_opts *o,
			dan_run *d, const ds_plan *dlr, const ds_figures *df,
			ds_plan *out, ds_figures *f, ds_err *e)
{
	if (o->cpe.traffic_budget_pct <= 0 || df->extra_ddr == 0 ||
	    g->n > BUDGET_FLOOR_MAX_NODES)
		return DS_OK;
	ds_run_opts zero = *o;
	zero.progress = NULL;
	zero.cpe.traffic_budget_pct = 0;
	ds_plan q;
	memset(&q, 0, sizeof q);
	ds_figures fq;
	int rc = cpe_chain(g, &zero, dlr, df, &q, &fq, NULL, e);
	if (rc == DS_OK)
		rc = ds_portfolio_final(g, &d->pf, &zero.cpe, &q, &fq, e);
	ds_plan_keep(g->heap, rc == DS_OK && ds_portfolio_beats(&fq, f), out,
		     f, &q, &fq);
	return rc;
}

const double ds_budget_ladder[DS_NLADDER] = {0, 5, 25, 100, 400};

static int cpe_stage(const ds_graph *g, const ds_run_opts *o, dan_run *d,
		     const ds_plan *dlr, const ds_figures *df, ds_plan *out,
		     ds_figures *f, clock_t *t0, ds_err *e);

/* The ladder floor: with a budget above 5, the whole of CPE's stage runs
 * again at the largest budget of ds_budget_ladder below it (that run
 * has its own floors, down to budget 0, which the budget floor covers),
 * and its plan replaces *out when it is shorter, or as long with less
 * traffic: it is within the larger budget's cap, and what it was
 * guaranteed against the baselines and the parts holds at any budget.
 * So on graphs of up to BUDGET_FLOOR_MAX_NODES nodes the makespan never
 * rises along the ladder's budgets, nor above its last (between them it
 * may).  Why: a larger cap lets in other backbones and evictions, and
 * CPE is a heuristic; `dansched gen --kind matmul --nodes 1500 --seed
 * 15` had 63,453 cycles at budget 5 and 63,851 at 25 and 100 (of 72
 * generated graphs, four kinds, 300 to 6,000 nodes, the one longer at a
 * larger budget), `--nodes 5000 --seed 26` 109,447 at 5 and 109,523 at
 * 25.  Costs nothing at the default budget; `tradeoff` on the six
 * bundled graphs took 18.1 s instead of 13.6. */
static int ladder_floor(const ds_graph *g, const ds_run_opts *o,
			dan_run *d, const ds_plan *dlr, const ds_figures *df,
			ds_plan *out, ds_figures *f, ds_err *e)
{
	double below = 0;
	for (int i = 0; i < DS_NLADDER; i++)
		if (ds_budget_ladder[i] < o->cpe.traffic_budget_pct)
			below = ds_budget_ladder[i];
	if (below == 0 || df->extra_ddr == 0 ||
	    g->n > BUDGET_FLOOR_MAX_NODES)
		return DS_OK;
	ds_run_opts lower = *o;
	lower.progress = NULL;
	lower.cpe.traffic_budget_pct = below;
	ds_plan q;
	memset(&q, 0, sizeof q);
	ds_figures fq;
	int rc = cpe_stage(g, &lower, d, dlr, df, &q, &fq, NULL, e);
	if (rc == DS_OK)
		keep_shorter(g, out, f, &q, &fq);
	else
		ds_plan_free(g->heap, &q);
	return rc;
}

/* CPE's stage before its check: CPE's chain from DLR's plan (figures
 * *df), then against the baselines' plans and the parts (as dlr_final),
 * then the budget floor and the ladder floor; into *out (figures *f).
 * On failure *out may hold a plan (the caller frees it). */
static int cpe_stage(const ds_graph *g, const ds_run_opts *o, dan_run *d,
		     const ds_plan *dlr, const ds_figures *df, ds_plan *out,
		     ds_figures *f, clock_t *t0, ds_err *e)
{
	int rc = cpe_chain(g, o, dlr, df, out, f, t0, e);
	if (rc == DS_OK)
		rc = ds_portfolio_final(g, &d->pf, &o->cpe, out, f, e);
	if (rc == DS_OK)
		rc = ds_parts_plan(g, o, out, f, e);
	if (rc == DS_OK)
		rc = budget_floor(g, o, d, dlr, df, out, f, e);
	if (rc == DS_OK)
		rc = ladder_floor(g, o, d, dlr, df, out, f, e);
	return rc;
}

/* Stage 3: CPE's stage (cpe_stage) from DLR's plan (whose figures *fig
 * holds), its dead reloads dropped (a reload spilled again before any
 * use, as retiming's search can leave one: less traffic, never longer),
 * checked and reported.  The -v lines: retime (its first run's own
 * time), then cpe (the rest: the rounds of CPE and retiming after it,
 * the runner-up's and the floors' included), so that they add up. */
static int dan_cpe(const ds_graph *g, const ds_run_opts *o, dan_run *d,
		   const ds_plan *dlr, ds_plan *out, ds_figures *fig,
		   ds_err *e)
{
	clock_t t0 = clock();
	const ds_figures df = *fig;
	ds_figures f;
	int32_t dead;
	int rc = cpe_stage(g, o, d, dlr, &df, out, &f, &t0, e);
	if (rc == DS_OK)
		rc = ds_plan_drop_dead_reloads(g, out, &dead, e);
	if (rc == DS_OK)
		rc = check(g, o, "cpe", out, false, t0, fig, e);
	if (rc)
		ds_plan_free(g->heap, out);
	return rc;
}

static int run_dan(const ds_graph *g, const ds_run_opts *o, ds_plan *out,
		   ds_figures *fig, ds_err *e);

/* Whether o asks any stage for more than its default effort. */
static bool more_effort(const ds_run_opts *o)
{
	return o->mpas.effort > 1 || o->dlr.effort > 1 || o->cpe.effort > 1 ||
	       o->retime.effort > 1;
}

/* More effort is never worse than the default, by construction: the
 * default's plan is made too (quietly) and replaces *out when it is
 * shorter, or as long with less traffic.  The searches are heuristics,
 * and their larger budgets do not always find a shorter plan
 * (`dansched gen --kind matmul --nodes 2000 --seed 5` at --effort 2:
 * 108,408 cycles against the default's 107,184; so were Conv_Case0
 * once, 416,540 against 416,511, and `--seed 4`). */
static int default_floor(const ds_graph *g, const ds_run_opts *o,
			 ds_plan *out, ds_figures *fig, ds_err *e)
{
	ds_run_opts one = *o;
	one.mpas.effort = one.dlr.effort = one.cpe.effort = 1;
	one.retime.effort = 1;
	one.progress = NULL;
	ds_plan q;
	ds_figures fq;
	memset(&q, 0, sizeof q); /* run_dan frees what it made on failure */
	int rc = run_dan(g, &one, &q, &fq, e);
	if (rc == DS_OK)
		keep_shorter(g, out, fig, &q, &fq);
	return rc;
}

static int run_dan(const ds_graph *g, const ds_run_opts *o, ds_plan *out,
		   ds_figures *fig, ds_err *e)
{
	dan_run d;
	memset(&d, 0, sizeof d);
	ds_plan dlr;
	memset(&dlr, 0, sizeof dlr);
	int rc = dan_mpas(g, o, &d, fig, e);
	if (rc == DS_OK && o->stage == DS_STAGE_MPAS) {
		out->order = d.order;
		out->len = g->n;
		d.order = NULL;
		dan_free(g, &d);
		return DS_OK;
	}
	if (rc == DS_OK)
		rc = dan_dlr(g, o, &d, &dlr, fig, e);
	if (rc == DS_OK && o->stage == DS_STAGE_DLR) {
		*out = dlr;
		dan_free(g, &d);
		return DS_OK;
	}
	if (rc == DS_OK)
		rc = dan_cpe(g, o, &d, &dlr, out, fig, e);
	ds_plan_free(g->heap, &dlr);
	dan_free(g, &d);
	if (rc == DS_OK && more_effort(o) &&
	    (rc = default_floor(g, o, out, fig, e)))
		ds_plan_free(g->heap, out);
	return rc;
}

/* The plan is done: its spills numbered in the order they happen (the
 * stages need not keep that: CPE moves spill nodes), and the relabelled
 * plan replayed with that order required. */
static int finish(const ds_graph *g, ds_plan *p, ds_figures *fig, ds_err *e)
{
	if (p->nspill == 0)
		return DS_OK;
	int rc = ds_plan_sort_spills(g, p, e);
	ds_replay_opts ro = {.spill_order = true};
	ds_figures f = {0};
	if (rc == DS_OK)
		rc = ds_replay(g, p, &ro, &f, e);
	if (rc == DS_EPLAN) {
		char msg[sizeof e->msg];
		memcpy(msg, e->msg, sizeof msg);
		return ds_fail(e, DS_EPLAN, "%s: internal error: the spills "
			       "renumbered make an invalid plan: %.400s",
			       g->source, msg);
	}
	DS_ASSERT(rc || (f.makespan == fig->makespan &&
			 f.extra_ddr == fig->extra_ddr));
	if (rc == DS_OK)
		*fig = f;
	return rc;
}

int ds_run(const ds_graph *g, const ds_run_opts *o, ds_plan *out,
	   ds_figures *fig, ds_err *e)
{
	memset(out, 0, sizeof *out);
	if (o->scheduler < 0 || o->scheduler >= DS_NSCHED)
		return ds_fail(e, DS_EINPUT, "unknown scheduler %d",
			       o->scheduler);
	int rc = o->scheduler == DS_SCHED_DAN ? run_dan(g, o, out, fig, e)
					      : run_baseline(g, o, out, fig, e);
	if (rc == DS_OK && (rc = finish(g, out, fig, e)))
		ds_plan_free(g->heap, out);
	return rc;
}
