/* ds_pipeline.c: the schedulers, end to end, each plan checked.
 *
 * dan runs the passes in order — MPAS (an order), DLR (placement and
 * spills, a search of its own, ds_dlr_stage.c, run again from MPAS's
 * order where that bettered its first phase's, the better plan kept:
 * dlr_search; from several starts,
 * then again from orders that pull together the uses its plan's spills
 * separate; last, MPAS's order and its plan's placed with the spills
 * decided on bytes and the addresses packed afterwards), CPE (pipeline
 * overlap; its backbone DLR's plan, or DLR's order, as it is, with its
 * accumulators staggered, relayed (ds_dlr_relay) or as a wave
 * (ds_wave.c), placed again with aged victims where that replays
 * shorter within the traffic cap, or that backbone with a use its spills
 * separate pulled next to the earlier one, with the loads it needs,
 * where DLR places that better: ds_backbone.c; after a pull CPE also
 * runs from the backbone it replaced: pull_floor, and from the second
 * and third backbones the choice may make: over_floor, timely_floor)
 * and its retiming
 * (ds_retime.c), then both again, each on the other's plan, while that
 * shortens it (cpe_retime_rounds), the spills of its plan's end searched
 * again at no more traffic and within CPE's peak limit
 * (ds_replan_floor, ds_finish.c), the uses its spills separate pulled
 * together with the window around them spilled again (window_floor,
 * ds_window.c; CPE's chain's plan gets that too before it meets the
 * parts'), and the final
 * plan's dead reloads dropped (ds_plan_drop_dead_reloads) — stopping
 * after the stage asked for; with a traffic budget, CPE's chain at
 * budget 0 too, its plan kept where it is shorter and within the cap
 * (budget_floor), and above 5
 * CPE's stage at the next lower of the budgets 5, 25, 100 and 400, its
 * plan kept where it is shorter (ladder_floor), and CPE's chain from the
 * backbone chosen within 5's cap too (lean_floor); with more
 * effort the default's plan is made too and the shorter kept, and with a
 * peak budget above the default the plans at each of 5, 25 and 100
 * below it too (floor_opts); the
 * baselines' orders and plans
 * compete at each stage
 * (ds_portfolio.c), and a graph of a few parts (up to 64) is also
 * planned part by part (ds_parts.c).  The baselines are an order plus
 * the shared placer with their policy.  A run makes each floor's plan
 * once (dan_run's memos), and ds_run_ladder plans at every budget of the
 * ladder in one run, each plan the one ds_run makes at that budget.
 *
 * Requires: a valid graph.  Guarantees: the plan returned has passed
 * ds_replay (with the one-live rule for an MPAS-only plan), its spills
 * numbered in the order their SPILL_OUTs run (ds_plan_sort_spills, checked
 * by a strict replay), and *fig holds its figures. */
#include "ds_backbone.h"
#include "ds_dlr_stage.h"

#include <string.h>
#include <time.h>

const char *const ds_sched_names[DS_NSCHED] = {
	"original", "free-first", "lpmf", "cp-list", "vpux", "dan"};
const char *const ds_stage_names[4] = {"", "mpas", "dlr", "cpe"};

/* The default peak budget.  The rounds that may raise the peak run only
 * where it held CPE back (ds_cpe); 5, as the traffic budget.  A larger
 * one trades peak for makespan about 1 to 10: on 54 generated graphs
 * (`gen`, the four kinds, 500, 1,500 and 3,000 nodes, seeds 3-5, and
 * random renumberings of the random and attention ones) at L1=4096,
 * L1=2048,UB=768 and L1=1536,UB=640, 20 gave makespans 0.41 % shorter
 * on average for final plans' peaks 4.35 % higher (2026-12-06); on the
 * six bundled graphs 10 to 20 only shorten FlashAttention_Case0 (29,732
 * cycles against 30,028, peak 5,520 against 5,388).  A budget above it
 * is never worse than it, nor than 25 and 100 below it (floor_opts). */
#define PEAK_BUDGET_DEFAULT 5

void ds_run_opts_default(ds_run_opts *o)
{
	memset(o, 0, sizeof *o);
	o->scheduler = DS_SCHED_DAN;
	o->stage = DS_STAGE_CPE;
	o->cpe.traffic_budget_pct = 5;
	o->cpe.peak_budget_pct = PEAK_BUDGET_DEFAULT;
}

void ds_run_opts_size(ds_run_opts *o, int64_t size_nodes)
{
	o->size_nodes = size_nodes;
	o->mpas.size_nodes = o->dlr.size_nodes = size_nodes;
	o->cpe.size_nodes = o->retime.size_nodes = size_nodes;
}

/* The graph size o's size-dependent choices are made for. */
static int64_t run_size(const ds_graph *g, const ds_run_opts *o)
{
	return ds_size_nodes(g, o->size_nodes);
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

/* What dan's stages hand on: MPAS's orders and the baselines', and the
 * plans of CPE's stage that a run asks for again: at each budget of
 * ds_budget_ladder (the ladder floor asks for the one below, a ladder
 * run for each in turn) and CPE's chain at budget 0 (the budget floor's
 * at every budget).  Each depends on the budget alone: the other options,
 * DLR's plan and the rest of the run are the same throughout. */
typedef struct dan_run {
	int32_t *order; /* the MPAS stage's order */
	int32_t *near;	/* MPAS's order from its local search's first
			   phase (ds_mpas_alts), NULL at stage MPAS */
	bool jumped;	/* near differs from MPAS's own order */
	int32_t *near_first; /* where jumped: near, or the baseline's order
				that replaces it as order replaces MPAS's */
	bool near_replaced;
	int32_t *alt;	/* MPAS's other orders (nalt * n), then
			   MPAS's own when a baseline order replaced it */
	int nalt;
	bool replaced;
	bool packed; /* DLR's plan is dlr_packed's */
	ds_portfolio pf;
	ds_memo zero;		/* chain_final at budget 0 */
	ds_memo timely;		/* DLR's timely plan (timely_offer) */
	ds_memo stage[DS_NLADDER]; /* cpe_stage at ds_budget_ladder[i] */
} dan_run;

static void dan_free(const ds_graph *g, dan_run *d)
{
	ds_free(g->heap, d->order);
	ds_free(g->heap, d->near);
	ds_free(g->heap, d->near_first);
	ds_free(g->heap, d->alt);
	ds_portfolio_free(g, &d->pf);
	ds_plan_free(g->heap, &d->zero.plan);
	ds_plan_free(g->heap, &d->timely.plan);
	for (int i = 0; i < DS_NLADDER; i++)
		ds_plan_free(g->heap, &d->stage[i].plan);
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

/* Copies order (MPAS's) into own, then replaces order by the baselines'
 * one-live order of least peak where that is lower (*replaced then
 * set). */
static int mpas_or_baseline(const ds_graph *g, dan_run *d, int32_t *order,
			    int32_t *own, bool *replaced, ds_err *e)
{
	int64_t peak;
	int rc = one_live_peak(g, order, &peak, e);
	if (rc == DS_OK) {
		memcpy(own, order, (size_t)g->n * sizeof *order);
		*replaced = ds_portfolio_mpas(g, &d->pf, order, &peak) >= 0;
	}
	return rc;
}

/* The first phase's order where the second bettered it (d->jumped), and
 * the baseline's that replaces it as mpas_or_baseline replaces MPAS's
 * own: DLR's search runs from both (dlr_search). */
static int mpas_near(const ds_graph *g, dan_run *d, ds_err *e)
{
	d->jumped = memcmp(d->near, d->order, (size_t)g->n * sizeof *d->near);
	if (!d->jumped)
		return DS_OK;
	d->near_first = ds_alloc(g->heap, (size_t)g->n, sizeof *d->near_first);
	if (!d->near_first)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	memcpy(d->near_first, d->near, (size_t)g->n * sizeof *d->near);
	return mpas_or_baseline(g, d, d->near_first, d->near, &d->near_replaced,
				e);
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
	int nalt = o->stage == DS_STAGE_MPAS ? 0 : ds_dlr_starts(g, o) - 1;
	d->alt = ds_alloc(h, (size_t)(nalt + 1) * g->n, sizeof *d->alt);
	if (o->stage != DS_STAGE_MPAS)
		d->near = ds_alloc(h, (size_t)g->n, sizeof *d->near);
	if (!d->order || !d->alt || (o->stage != DS_STAGE_MPAS && !d->near))
		return ds_fail(e, DS_ENOMEM, "out of memory");
	int rc = ds_mpas_alts(g, &o->mpas, d->order, d->near, d->alt, nalt,
			      &d->nalt, e);
	if (rc == DS_OK)
		rc = ds_portfolio_run(g, &d->pf, e);
	if (rc == DS_OK && d->near)
		rc = mpas_near(g, d, e);
	if (rc == DS_OK)
		rc = mpas_or_baseline(g, d, d->order,
				      d->alt + (size_t)d->nalt * g->n,
				      &d->replaced, e);
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
		rc = ds_parts_plan(g, o, p, &f, NULL, NULL, e);
	if (rc == DS_OK)
		rc = check(g, o, "dlr", p, false, t0, fig, e);
	return rc;
}

/* DLR's search (ds_dlr_stage_search) from first, the MPAS stage's
 * order (MPAS's own order own, or a baseline's that replaced it: then
 * own is the second start), then from MPAS's other orders. */
static int dlr_search_from(const ds_graph *g, const ds_run_opts *o,
			   dan_run *d, const int32_t *first, const int32_t *own,
			   bool replaced, ds_plan *out, bool *packed,
			   ds_err *e)
{
	const int32_t *starts[DS_DLR_MAX_STARTS];
	int k = 0;
	starts[k++] = first;
	if (replaced)
		starts[k++] = own;
	for (int i = 0; i < d->nalt; i++)
		starts[k++] = d->alt + (size_t)i * g->n;
	ds_dlr_search ds = {starts, k, first, &d->pf, &d->timely};
	return ds_dlr_stage_search(g, o, &ds, out, packed, e);
}

/* The search from MPAS's stage's order, or where the second phase of
 * MPAS's local search bettered the first's (d->jumped) from the first
 * phase's, and then, where the graph is small enough for more than one
 * DLR start, from the second's too: the better plan (ds_dlr_better; ties
 * keep the first).  A lower peak does not always place better: the
 * search's choices (which start gets a full run, what its pulls move)
 * follow the order, so DLR's figure is never worse than the first
 * phase's order gives it.  Measured on the 16 of 384 generated graphs
 * (`gen`, the four kinds, 600, 1,200 and 2,500 nodes, seeds 9-40) where
 * the second phase lowered the peak in its first form (8 targets, back
 * only), at the default capacities,
 * L1=2048,UB=768 and L1=1536,UB=640: DLR from the second phase's order
 * alone gave 8 of the 48 plans more traffic (`--kind random --nodes 2500
 * --seed 13` at L1=1536,UB=640: 26,128 bytes against 18,208) and
 * changed 30 final makespans (17 longer), from -8.0 % to +4.4 %; kept
 * only where better, it lowers 6 DLR figures and their makespans
 * (`--seed 31` at L1=2048,UB=768: 5,280 bytes against 9,536 and 61,191
 * cycles against 66,503) and changes nothing else (2026-12-06).
 * Conv_Case0's first layers as a graph of their own (test_pipeline's
 * second_phase_placed): 1,540 bytes from the second phase's order, 7,296
 * from the first's. */
static int dlr_search(const ds_graph *g, const ds_run_opts *o, dan_run *d,
		      ds_plan *out, ds_err *e)
{
	const int32_t *own = d->alt + (size_t)d->nalt * g->n;
	if (!d->jumped)
		return dlr_search_from(g, o, d, d->order, own, d->replaced, out,
				       &d->packed, e);
	int rc = dlr_search_from(g, o, d, d->near_first, d->near,
				 d->near_replaced, out, &d->packed, e);
	if (rc || ds_dlr_starts(g, o) < 2)
		return rc;
	ds_plan q;
	memset(&q, 0, sizeof q);
	ds_figures f, fq;
	bool packed = false;
	rc = dlr_search_from(g, o, d, d->order, own, d->replaced, &q, &packed,
			     e);
	if (rc == DS_OK)
		rc = ds_replay(g, out, NULL, &f, e);
	if (rc == DS_OK)
		rc = ds_replay(g, &q, NULL, &fq, e);
	bool take = rc == DS_OK && ds_dlr_better(&fq, &f);
	if (take)
		d->packed = packed;
	ds_plan_keep(g->heap, take, out, &f, &q, &fq);
	return rc;
}

/* Stage 2: DLR's search (dlr_search) from MPAS's orders, then checked
 * and reported (at stage DLR after its final choice). */
static int dan_dlr(const ds_graph *g, const ds_run_opts *o, dan_run *d,
		   ds_plan *out, ds_figures *fig, ds_err *e)
{
	clock_t t0 = clock();
	int rc = dlr_search(g, o, d, out, e);
	if (rc == DS_OK && o->stage == DS_STAGE_DLR)
		rc = dlr_final(g, o, d, out, t0, fig, e);
	else if (rc == DS_OK)
		rc = check(g, o, "dlr", out, false, t0, fig, e);
	if (rc)
		ds_plan_free(g->heap, out);
	return rc;
}

/* The traffic cap: the budget over DLR's figure, by CPE's own rule
 * (ds_cpe_budget), so that the two never differ by a rounding. */
int64_t ds_traffic_cap(const ds_run_opts *o, int64_t dlr_ddr)
{
	return ds_cpe_budget(dlr_ddr, o->cpe.traffic_budget_pct);
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
	ro.max_extra_ddr = ds_traffic_cap(o, dlr_ddr);
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

/* Is a plan of figures f within the peak cap (o's cpe.peak_cap, where
 * set: see cpe_stage)? */
static bool within_cap(const ds_run_opts *o, const ds_figures *f)
{
	return ds_within_peak_cap(o->cpe.peak_cap, f->peak_vstay);
}

/* Plan q (figures fq) replaces *out (figures *f) when it is shorter, or
 * as long with less traffic, or as long with as much at a lower peak,
 * the one within the peak cap first (within_cap); the other one is
 * freed. */
static void keep_shorter(const ds_graph *g, const ds_run_opts *o,
			 ds_plan *out, ds_figures *f, ds_plan *q,
			 const ds_figures *fq)
{
	bool qin = within_cap(o, fq), in = within_cap(o, f);
	ds_plan_keep(g->heap,
		     qin != in ? qin
			       : fq->makespan < f->makespan ||
					 (fq->makespan == f->makespan &&
					  (fq->extra_ddr < f->extra_ddr ||
					   (fq->extra_ddr == f->extra_ddr &&
					    fq->peak_vstay < f->peak_vstay))),
		     out, f, q, fq);
}

/* o without its progress lines, at traffic budget pct. */
static ds_run_opts quiet_at(const ds_run_opts *o, double pct)
{
	ds_run_opts q = *o;
	q.progress = NULL;
	q.cpe.traffic_budget_pct = pct;
	return q;
}

/* The end of a floor's run: with rc DS_OK, plan q (figures fq) made and
 * kept as keep_shorter says; else q freed.  Returns rc. */
static int keep_made(const ds_graph *g, const ds_run_opts *o, int rc,
		     ds_plan *out, ds_figures *f, ds_plan *q,
		     const ds_figures *fq)
{
	if (rc == DS_OK)
		keep_shorter(g, o, out, f, q, fq);
	else
		ds_plan_free(g->heap, q);
	return rc;
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
#define CPE_RETIME_MAX_NODES DS_SMALL_GRAPH_NODES

static int cpe_retime_rounds(const ds_graph *g, const ds_run_opts *o,
			     int64_t peak_cap, int64_t dlr_ddr, ds_plan *p,
			     ds_figures *f, ds_err *e)
{
	ds_run_opts quiet = *o;
	quiet.progress = NULL;
	if (o->cpe.peak_cap <= 0 || peak_cap < o->cpe.peak_cap)
		quiet.cpe.peak_cap = peak_cap;
	int rc = DS_OK;
	int rounds =
		run_size(g, o) <= CPE_RETIME_MAX_NODES ? CPE_RETIME_ROUNDS : 0;
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
		keep_shorter(g, o, p, f, &q, &fq);
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
			   const ds_backbone *bb, const ds_plan *dlr,
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
	return keep_made(g, o, rc, out, f, &q, &fq);
}

/* With more effort (--effort N > 1), CPE and retime also from the
 * backbone that bb's plan replaced: the replay before CPE is a rough
 * guide (at --effort 2, Matmul_Case1's tail order replays shorter than
 * its aged plan and came out of CPE at 910,813 cycles against 905,937).
 * *out and *f become that plan and its figures when it is the shorter
 * (the one with less traffic on ties). */
static int cpe_runner_up(const ds_graph *g, const ds_run_opts *o,
			 const ds_backbone *bb, const ds_plan *dlr,
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
 * backbone against 58,589 at 2,496 without (until MPAS's second phase
 * gave it another DLR plan; `--seed 3`: 55,841 at 1,024 bytes with the
 * floor, 55,957 at 1,152 without, test_pipeline).  Cost: one more chain where
 * a pull is kept (Conv_Case0's run, pulls and floor together: 0.20 ->
 * about 0.38 s). */
static int pull_floor(const ds_graph *g, const ds_run_opts *o,
		      const ds_backbone *bb, const ds_plan *dlr,
		      int64_t dlr_ddr, ds_plan *out, ds_figures *f,
		      ds_err *e)
{
	if (!bb->pulled)
		return DS_OK;
	return chain_from_prev(g, o, bb, dlr, dlr_ddr,
			       ds_cpe_budget(bb->prev_peak,
					     o->cpe.peak_budget_pct),
			       out, f, e);
}

/* CPE from backbone bb (chosen from DLR's plan dlr, figures *df), then
 * retiming, the rounds, the pull floor and the runner-up, into *out
 * (figures *f).  The retime line reports its first run's own time, taken
 * out of *t0's count (t0 NULL: no line is reported). */
static int chain_on(const ds_graph *g, const ds_run_opts *o,
		    const ds_backbone *bb, const ds_plan *dlr,
		    const ds_figures *df, ds_plan *out, ds_figures *f,
		    clock_t *t0, ds_err *e)
{
	const int64_t dlr_ddr = df->extra_ddr;
	int rc = cpe_from(g, o, &bb->plan, dlr, out, f, e);
	clock_t rt0 = clock();
	if (rc == DS_OK)
		rc = retime(g, o, out, dlr_ddr, f, e);
	if (t0)
		*t0 += clock() - rt0; /* the retime line has its own time */
	if (rc == DS_OK)
		/* the peak limit CPE's first run had, over its backbone's */
		rc = cpe_retime_rounds(g, o,
				       ds_cpe_budget(bb->best.peak_vstay,
						     o->cpe.peak_budget_pct),
				       dlr_ddr, out, f, e);
	if (rc == DS_OK)
		rc = pull_floor(g, o, bb, dlr, dlr_ddr, out, f, e);
	if (rc == DS_OK)
		rc = cpe_runner_up(g, o, bb, dlr, dlr_ddr, out, f, e);
	return rc;
}

/* chain_on from backbone bb, quietly; its plan replaces *out (figures
 * *f) when it is shorter, or as long with less traffic. */
static int chain_keep(const ds_graph *g, const ds_run_opts *o,
		      const ds_backbone *bb, const ds_plan *dlr,
		      const ds_figures *df, ds_plan *out, ds_figures *f,
		      ds_err *e)
{
	ds_run_opts quiet = *o;
	quiet.progress = NULL;
	ds_plan q;
	memset(&q, 0, sizeof q);
	ds_figures fq;
	int rc = chain_on(g, &quiet, bb, dlr, df, &q, &fq, NULL, e);
	return keep_made(g, o, rc, out, f, &q, &fq);
}

/* The floors (lean, budget, ladder) apply to graphs of at most this
 * many nodes (the limit of the rounds, CPE_RETIME_MAX_NODES): at 1M
 * nodes the budget floor would double the cpe line of `schedule -v`
 * (22 s). */
#define BUDGET_FLOOR_MAX_NODES CPE_RETIME_MAX_NODES

/* chain_keep from plan p (figures *pf; len 0: none, nothing done), a
 * backbone borrowed, not freed here. */
static int chain_keep_from(const ds_graph *g, const ds_run_opts *o,
			   const ds_plan *p, const ds_figures *pf,
			   const ds_plan *dlr, const ds_figures *df,
			   ds_plan *out, ds_figures *f, ds_err *e)
{
	if (p->len == 0)
		return DS_OK;
	ds_backbone bb;
	memset(&bb, 0, sizeof bb);
	bb.plan = *p;
	bb.best = *pf;
	return chain_keep(g, o, &bb, dlr, df, out, f, e);
}

/* The over floor: where the backbone choice made a second backbone
 * (bb->alt: the pulls from the aged placement over the cap,
 * ds_backbone.c pulled_over), CPE's chain also runs from it, and its
 * plan replaces *out (figures *f) when it is shorter, or as long with
 * less traffic.  Why a floor and not a candidate: both backbones are
 * judged by their replay before CPE, a rough guide (pulled_over says
 * what each way gave).  Cost: one more chain where bb->alt is made
 * (none on the six bundled graphs). */
static int over_floor(const ds_graph *g, const ds_run_opts *o,
		      const ds_backbone *bb, const ds_plan *dlr,
		      const ds_figures *df, ds_plan *out, ds_figures *f,
		      ds_err *e)
{
	return chain_keep_from(g, o, &bb->alt, &bb->alt_best, dlr, df, out,
			       f, e);
}

/* The timely floor: where the backbone choice kept DLR's timely plan
 * as a third backbone (bb->timely, ds_backbone.c backbone_timely: it
 * replays far shorter than the one chosen), CPE's chain also runs from
 * it, and its plan replaces *out (figures *f) when it is shorter, or as
 * long with less traffic.  A floor for the reason over_floor is one.
 * Cost: one more chain where bb->timely is made (none on the six
 * bundled graphs at their own capacities). */
static int timely_floor(const ds_graph *g, const ds_run_opts *o,
			const ds_backbone *bb, const ds_plan *dlr,
			const ds_figures *df, ds_plan *out, ds_figures *f,
			ds_err *e)
{
	return chain_keep_from(g, o, &bb->timely, &bb->timely_best, dlr, df,
			       out, f, e);
}

/* The budget a backbone may spend at most in the lean floor: the
 * default budget (ds_run_opts_default), the one the backbones' rules
 * were measured at (ds_backbone.c). */
#define LEAN_BUDGET_PCT 5

/* The lean floor: with a budget above LEAN_BUDGET_PCT, CPE's chain also
 * runs from the backbone chosen within that budget's cap (and from that
 * choice's second and third backbones, over_floor and timely_floor), CPE
 * and
 * retiming still within the whole budget's, where that backbone is not
 * the one chosen (bb: its figures differ); its plan replaces *out
 * (figures *f) when it is shorter, or as long with less traffic.  Why: a
 * backbone spends traffic on a placement rule judged by its replay
 * before CPE; retiming spends it on evictions judged by the replay after
 * CPE, where the critical chain waits.  A larger cap lets in backbones
 * with more traffic and leaves retiming less: Conv_Case0 at budget 25
 * had the relayed order placed without packing (45,696 bytes against
 * 41,476 packed; cap 51,850) and came to 397,965 cycles at 51,840 bytes;
 * from the packed one retiming spends the rest on the late layers'
 * evictions: 379,778 at 51,456 (budget 12: 405,466 -> 395,350; 100 and
 * 400: 375,851 -> 374,583).  Not in place of the chain's own backbone:
 * so chosen alone, `gen --kind matmul --nodes 3000 --seed 2` came to
 * 72,223 cycles at budget 25 against 69,536, and `--kind random --nodes
 * 3000 --seed 1` at L1=2048,UB=768 72,358 against 71,164.  Cost: one more
 * backbone choice at budgets above 5, one more chain where it differs;
 * none at the default budget.  Up to BUDGET_FLOOR_MAX_NODES nodes, as
 * the other floors. */
static int lean_floor(const ds_graph *g, const ds_run_opts *o,
		      const dan_run *d, const ds_backbone *bb,
		      const ds_plan *dlr, const ds_figures *df, ds_plan *out,
		      ds_figures *f, ds_err *e)
{
	if (o->cpe.traffic_budget_pct <= LEAN_BUDGET_PCT ||
	    run_size(g, o) > BUDGET_FLOOR_MAX_NODES)
		return DS_OK;
	ds_run_opts lean = quiet_at(o, LEAN_BUDGET_PCT);
	ds_backbone lb;
	int rc = ds_backbone_choose(g, &lean, dlr, df, d->packed,
				    &d->timely.plan, &d->timely.fig, &lb, e);
	if (rc == DS_OK && (lb.best.makespan != bb->best.makespan ||
			    lb.best.extra_ddr != bb->best.extra_ddr)) {
		rc = chain_keep(g, o, &lb, dlr, df, out, f, e);
		if (rc == DS_OK)
			rc = over_floor(g, o, &lb, dlr, df, out, f, e);
		if (rc == DS_OK)
			rc = timely_floor(g, o, &lb, dlr, df, out, f, e);
	}
	ds_backbone_free(g, &lb);
	return rc;
}

/* The cap floor: where the chain's plan *out (figures *f) peaks above
 * the peak cap (o->cpe.peak_cap, see cpe_stage), CPE's chain also runs
 * from DLR's own plan dlr (figures *df), and its plan, within the cap,
 * replaces it (keep_shorter).  Why: a backbone of another order
 * (staggered, relayed, pulled) may peak above the cap, CPE keeps its
 * starting plan's peak, and the floors may all start from such orders. */
static int cap_floor(const ds_graph *g, const ds_run_opts *o,
		     const ds_plan *dlr, const ds_figures *df, ds_plan *out,
		     ds_figures *f, ds_err *e)
{
	if (within_cap(o, f))
		return DS_OK;
	ds_backbone bb;
	memset(&bb, 0, sizeof bb);
	bb.best = *df;
	return chain_keep(g, o, &bb, dlr, df, out, f, e);
}

/* CPE's chain from DLR's plan dlr (figures *df): the backbone, then
 * chain_on and the lean, over, timely and cap floors, into *out
 * (figures *f); t0 as chain_on's. */
static int cpe_chain(const ds_graph *g, const ds_run_opts *o,
		     const dan_run *d, const ds_plan *dlr,
		     const ds_figures *df, ds_plan *out, ds_figures *f,
		     clock_t *t0, ds_err *e)
{
	ds_backbone bb;
	int rc = ds_backbone_choose(g, o, dlr, df, d->packed,
				    &d->timely.plan, &d->timely.fig, &bb, e);
	if (rc == DS_OK)
		rc = chain_on(g, o, &bb, dlr, df, out, f, t0, e);
	if (rc == DS_OK)
		rc = lean_floor(g, o, d, &bb, dlr, df, out, f, e);
	if (rc == DS_OK)
		rc = over_floor(g, o, &bb, dlr, df, out, f, e);
	if (rc == DS_OK)
		rc = timely_floor(g, o, &bb, dlr, df, out, f, e);
	if (rc == DS_OK)
		rc = cap_floor(g, o, dlr, df, out, f, e);
	ds_backbone_free(g, &bb);
	return rc;
}

/* *out and *f: a copy of m's plan and its figures. */
static int memo_get(const ds_graph *g, const ds_memo *m, ds_plan *out,
		    ds_figures *f, ds_err *e)
{
	*f = m->fig;
	return ds_plan_copy(g, &m->plan, out, e);
}

/* The end of a memo's making, rc its status: with DS_OK, a copy of p
 * (figures *f) kept in m, on graphs where the floors run (no one asks
 * for it again on larger ones).  Returns rc, or the copy's failure. */
static int memo_put(const ds_graph *g, const ds_run_opts *o, int rc,
		    ds_memo *m, const ds_plan *p, const ds_figures *f, ds_err *e)
{
	if (run_size(g, o) > BUDGET_FLOOR_MAX_NODES)
		return rc;
	if (rc == DS_OK)
		rc = ds_plan_copy(g, p, &m->plan, e);
	if (rc == DS_OK) {
		m->fig = *f;
		m->made = true;
	}
	return rc;
}

/* CPE's chain from DLR's plan dlr (figures *df), then against the
 * baselines' plans (ds_portfolio_final), into *out (figures *f); t0 as
 * chain_on's.  At budget 0 made once in a run (d->zero). */
static int chain_final(const ds_graph *g, const ds_run_opts *o, dan_run *d,
		       const ds_plan *dlr, const ds_figures *df,
		       ds_plan *out, ds_figures *f, clock_t *t0, ds_err *e)
{
	const bool zero = o->cpe.traffic_budget_pct == 0;
	if (zero && d->zero.made)
		return memo_get(g, &d->zero, out, f, e);
	int rc = cpe_chain(g, o, d, dlr, df, out, f, t0, e);
	if (rc == DS_OK)
		rc = ds_portfolio_final(g, &d->pf, &o->cpe, out, f, e);
	return zero ? memo_put(g, o, rc, &d->zero, out, f, e) : rc;
}

/* The peak limit of the finished plan's passes: CPE's, the peak budget
 * over DLR's plan's (figures *df). */
static int64_t finish_peak(const ds_run_opts *o, const ds_figures *df)
{
	return ds_cpe_budget(df->peak_vstay, o->cpe.peak_budget_pct);
}

/* The traffic the finished plan's searches may spend (the tail's,
 * ds_replan_floor, and the budget floor's, keep_capped): the
 * budget's cap over DLR's figure, at most the parts' traffic where g was
 * planned by its parts (parts_ddr, ds_parts_plan), so that a union of
 * graphs spends no more than its graphs alone, whatever its own DLR
 * plan's traffic (Matmul_Case0 + Conv_Case0: 71,048 bytes against the
 * graphs' 11,520 + 41,480). */
static int64_t replan_ddr(const ds_run_opts *o, const ds_figures *df,
			  int64_t parts_ddr)
{
	int64_t cap = ds_traffic_cap(o, df->extra_ddr);
	return cap < parts_ddr ? cap : parts_ddr;
}

/* Plan q replaces *out (figures *f) as the tail's search's plans do
 * (ds_keep_within): shorter, its traffic within replan_ddr or *out's
 * where that is more, its peak within finish_peak or *out's; else q is
 * freed. */
static int keep_capped(const ds_graph *g, const ds_run_opts *o,
		       const ds_figures *df, int64_t parts_ddr, ds_plan *q,
		       ds_plan *out, ds_figures *f, ds_err *e)
{
	bool took;
	return ds_keep_within(g, q, finish_peak(o, df),
			      replan_ddr(o, df, parts_ddr), out, f, &took, e);
}

/* The budget floor: a plan that spends a traffic budget is never longer
 * than the plan CPE's chain makes at budget 0, where that plan is within
 * the traffic the finished plan's searches may spend.  With a budget
 * above 0 (and DLR's plan spilling, else the caps are the same), the
 * chain runs again at budget 0 from the same DLR plan (*df: its figures)
 * and meets the baselines' plans as in a run at budget 0
 * (ds_portfolio_final, so it keeps what that guarantees); its plan
 * replaces the final one (*out, figures *f) as the tail's search's plan
 * does (keep_capped): shorter, within the budget's cap over DLR's figure
 * (at most the parts' traffic, parts_ddr, where g was planned by its
 * parts) or the final plan's traffic where that is more, and within the
 * peak limit.  Why: the backbone is chosen by its replay before CPE, a
 * rough guide, and the budget lets in backbones that replay shorter but
 * come out of CPE longer.  `dansched gen --kind matmul --nodes 3000
 * --seed 7` at the default budget had 233,489 cycles and 51,968 bytes
 * against 232,665 and 51,456 at budget 0 (its aged backbone, 512 bytes
 * over DLR's, replayed 244,451 against DLR's own 249,405; its parts
 * planned alone, ds_parts.c, now beat both, and test_pipeline holds
 * `--nodes 1500 --seed 1`: 54,892 at 6,400 bytes against 54,334 at
 * 6,144); of 72 generated graphs (four kinds, 300 to 6,000 nodes), one
 * was longer at 5 than at 0 and two at 25 than at 5 (those two as long
 * at 0 as at 5); with the floor, none.  Until 2026-12 the floor took
 * only a plan with no more traffic and spills than the final one:
 * Conv_Case0 at L1=4416 kept 434,583 cycles at 39,556 bytes (418,650
 * after the tail's search) against the chain's 404,941 at 39,936 at
 * budget 0, 380 bytes more but 2,211 under the cap; now 390,044.  The
 * floor runs after the parts (ds_parts_plan): kept in place of the
 * chain's plan alone, a shorter one lost to the plan of the parts that
 * the chain's own plan had yielded to (`--nodes 2000 --seed 4`: 49,004
 * cycles against 48,621).  The parts are not planned again at 0 (that
 * doubled the time of a union of two bundled graphs): each part's plan
 * has its own floor. */
static int budget_floor(const ds_graph *g, const ds_run_opts *o,
			dan_run *d, const ds_plan *dlr, const ds_figures *df,
			int64_t parts_ddr, ds_plan *out, ds_figures *f,
			ds_err *e)
{
	if (o->cpe.traffic_budget_pct <= 0 || df->extra_ddr == 0 ||
	    run_size(g, o) > BUDGET_FLOOR_MAX_NODES)
		return DS_OK;
	ds_run_opts zero = quiet_at(o, 0);
	ds_plan q;
	memset(&q, 0, sizeof q);
	ds_figures fq;
	int rc = chain_final(g, &zero, d, dlr, df, &q, &fq, NULL, e);
	if (rc) {
		ds_plan_free(g->heap, &q);
		return rc;
	}
	return keep_capped(g, o, df, parts_ddr, &q, out, f, e);
}

const double ds_budget_ladder[DS_NLADDER] = {0, 5, 25, 100, 400};

static int stage_at(const ds_graph *g, const ds_run_opts *o, dan_run *d,
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
 * 4` has 34,386 cycles at budget 5, and its own plan at 25 34,886
 * (test_pipeline; `--seed 15`, 63,453 at 5 and 63,851 at 25, the one of
 * 72 generated graphs longer at a larger budget when this floor came,
 * needs it no more since the lean floor).  Costs nothing at the default
 * budget; above it, CPE's stage at each ladder budget below, each made
 * once in a run (stage_at), as is the budget floor's chain at 0
 * (chain_final): `schedule --traffic-budget 400` of Conv_Case0 took 1.32
 * s when each lower budget's stage made its own chain at 0, 1.08 s now;
 * and `tradeoff` on the six bundled graphs 21.2 s as one run per budget,
 * 7.3 s as one for all (ds_run_ladder), the same plans. */
static int ladder_floor(const ds_graph *g, const ds_run_opts *o,
			dan_run *d, const ds_plan *dlr, const ds_figures *df,
			ds_plan *out, ds_figures *f, ds_err *e)
{
	int below = 0;
	for (int i = 0; i < DS_NLADDER; i++)
		if (ds_budget_ladder[i] < o->cpe.traffic_budget_pct)
			below = i;
	if (ds_budget_ladder[below] == 0 || df->extra_ddr == 0 ||
	    run_size(g, o) > BUDGET_FLOOR_MAX_NODES)
		return DS_OK;
	ds_run_opts lower = quiet_at(o, ds_budget_ladder[below]);
	ds_plan q;
	memset(&q, 0, sizeof q);
	ds_figures fq;
	int rc = stage_at(g, &lower, d, dlr, df, &q, &fq, NULL, e);
	return keep_made(g, o, rc, out, f, &q, &fq);
}

/* The uses a spill separates pulled together in *out (ds_window.c);
 * graphs small enough for more than one DLR start. */
static int window_floor(const ds_graph *g, const ds_run_opts *o,
			const ds_figures *df, ds_plan *out, ds_figures *f,
			ds_err *e)
{
	if (ds_dlr_starts(g, o) < 2)
		return DS_OK;
	return ds_window_pulls(g, out, f, finish_peak(o, df), e);
}

/* The grouped plan of the parts (ds_parts_plan) replaces *out where it
 * is shorter (ds_keep_shorter), after the floors: a graph planned by its
 * parts or whole, with every floor, only gains by it; *grp freed. */
static int group_floor(const ds_graph *g, const ds_run_opts *o,
		       const ds_figures *df, ds_plan *grp, ds_plan *out,
		       ds_figures *f, ds_err *e)
{
	if (!grp->order)
		return DS_OK;
	const ds_figures from = *f;
	bool took;
	return ds_keep_shorter(g, grp, finish_peak(o, df), &from, out, f,
			       &took, e);
}

/* CPE's stage before its check: CPE's chain from DLR's plan (figures
 * *df) and its spill-separated uses pulled together (window_floor, so
 * that it meets the parts' plans, which had that, on equal terms), then
 * against the baselines' plans and the parts (as dlr_final), then the
 * budget floor, the ladder floor, the tail searched again
 * (ds_replan_floor), the uses pulled together again and the grouped plan
 * of the parts (group_floor; graphs of up to BUDGET_FLOOR_MAX_NODES
 * nodes); into *out (figures *f).
 * The peak budget holds for the plan made, not only for CPE's runs: its
 * limit over DLR's plan's peak (finish_peak) is CPE's peak_cap in every
 * run of the stage, no plan above it replaces one within it
 * (keep_shorter; the baselines' plans, ds_portfolio_final, unless only
 * such a plan meets their targets), and a chain that ends above it runs
 * again from DLR's own plan (cap_floor).  Until 2026-12 CPE's limit
 * counted from each run's starting plan and the plans competed on
 * makespan and traffic alone: of 144 runs (`gen`, the four kinds, 500 to
 * 2,000 nodes, seeds 1-4, at the default capacities, L1=2048,UB=768 and
 * L1=1536,UB=640) 23 final plans peaked 6 to 70 % over DLR's plan,
 * through a baseline's plan, a starting plan of a higher peak or a
 * graph's parts; now 4 do, each the plan of a graph's parts (ds_parts.c:
 * each part within its own DLR plan's limit), 16 to 20 % over.  The
 * makespans: 20 longer, 1 shorter, 0.54 % longer on average (up to 18.5
 * %: `--kind random --nodes 500 --seed 4`, 7,635 -> 9,050 cycles, peak
 * 2,528 -> 1,968 bytes), for final peaks 3.1 % lower on average; the six
 * bundled graphs' plans do not change.
 * On failure *out may hold a plan (the caller frees it). */
static int cpe_stage(const ds_graph *g, const ds_run_opts *ro, dan_run *d,
		     const ds_plan *dlr, const ds_figures *df, ds_plan *out,
		     ds_figures *f, clock_t *t0, ds_err *e)
{
	ds_run_opts capped = *ro;
	capped.cpe.peak_cap = finish_peak(ro, df);
	const ds_run_opts *o = &capped;
	ds_plan grp; /* the grouped plan of the parts, if one is made */
	memset(&grp, 0, sizeof grp);
	bool grouped = run_size(g, o) <= BUDGET_FLOOR_MAX_NODES;
	int64_t parts_ddr; /* the parts' traffic, where planned by parts */
	int rc = chain_final(g, o, d, dlr, df, out, f, t0, e);
	if (rc == DS_OK)
		rc = window_floor(g, o, df, out, f, e);
	if (rc == DS_OK)
		rc = ds_parts_plan(g, o, out, f, grouped ? &grp : NULL,
				   &parts_ddr, e);
	if (rc == DS_OK)
		rc = budget_floor(g, o, d, dlr, df, parts_ddr, out, f, e);
	if (rc == DS_OK)
		rc = ladder_floor(g, o, d, dlr, df, out, f, e);
	if (rc == DS_OK)
		rc = ds_replan_floor(g, finish_peak(o, df),
				     replan_ddr(o, df, parts_ddr), out, f, e);
	if (rc == DS_OK)
		rc = window_floor(g, o, df, out, f, e);
	if (rc == DS_OK)
		rc = group_floor(g, o, df, &grp, out, f, e);
	ds_plan_free(g->heap, &grp);
	return rc;
}

/* The index of budget pct in ds_budget_ladder, -1 when it is none. */
static int ladder_index(double pct)
{
	for (int i = 0; i < DS_NLADDER; i++)
		if (ds_budget_ladder[i] == pct)
			return i;
	return -1;
}

/* cpe_stage, made once in a run at each budget of the ladder
 * (d->stage). */
static int stage_at(const ds_graph *g, const ds_run_opts *o, dan_run *d,
		    const ds_plan *dlr, const ds_figures *df, ds_plan *out,
		    ds_figures *f, clock_t *t0, ds_err *e)
{
	const int i = ladder_index(o->cpe.traffic_budget_pct);
	if (i < 0)
		return cpe_stage(g, o, d, dlr, df, out, f, t0, e);
	if (d->stage[i].made)
		return memo_get(g, &d->stage[i], out, f, e);
	int rc = cpe_stage(g, o, d, dlr, df, out, f, t0, e);
	return memo_put(g, o, rc, &d->stage[i], out, f, e);
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
	int rc = stage_at(g, o, d, dlr, &df, out, &f, &t0, e);
	if (rc == DS_OK)
		rc = ds_plan_drop_dead_reloads(g, out, &dead, e);
	if (rc == DS_OK)
		rc = check(g, o, "cpe", out, false, t0, fig, e);
	if (rc)
		ds_plan_free(g->heap, out);
	return rc;
}

/* Whether o asks any stage for more than its default effort. */
static bool more_effort(const ds_run_opts *o)
{
	return o->mpas.effort > 1 || o->dlr.effort > 1 || o->cpe.effort > 1 ||
	       o->retime.effort > 1;
}

/* o at every stage's default effort, without its progress lines: the
 * default's run that a run with more effort also makes. */
static ds_run_opts default_effort(const ds_run_opts *o)
{
	ds_run_opts one = *o;
	one.mpas.effort = one.dlr.effort = one.cpe.effort = 1;
	one.retime.effort = 1;
	one.progress = NULL;
	return one;
}

/* o at peak budget pct, without its progress lines. */
static ds_run_opts at_peak(const ds_run_opts *o, double pct)
{
	ds_run_opts d = *o;
	d.cpe.peak_budget_pct = pct;
	d.progress = NULL;
	return d;
}

/* The peak budgets a larger one is never worse than (floor_opts), as
 * the traffic budget's ladder has them: the default, 25 and 100. */
enum { NPEAK_RUNGS = 3, FLOORS_MAX = 1 + 2 * NPEAK_RUNGS };
static const double peak_rungs[NPEAK_RUNGS] = {PEAK_BUDGET_DEFAULT, 25,
					       100};

/* The floors: the runs a run with o also makes, its plan replaced by
 * theirs where one is shorter, or as long with less traffic, or as long
 * with as much at a lower peak (keep_shorter); into alt[], their count
 * returned.  Each option set once, in this order (a floor's run has no
 * floors of its own, so none is made twice):
 *  - the default effort.  More effort is never worse than the default,
 *    by construction.  The searches are heuristics, and their larger
 *    budgets do not always find a shorter plan (`dansched gen --kind
 *    matmul --nodes 2000 --seed 5` at --effort 2: 108,408 cycles against
 *    the default's 107,184; so were Conv_Case0 once, 416,540 against
 *    416,511, and `--seed 4`).
 *  - each peak budget of peak_rungs below o's (at the default effort too
 *    where o has more).  A peak budget is never worse than a lower one's
 *    plan, by construction: what that plan was held to holds at the
 *    larger budget too (CPE's peak limit, over the same DLR plan's peak,
 *    is lower; the traffic cap is the same, and so are the baselines'
 *    plans it competed with).  CPE at a raised limit is never worse than
 *    within the lower one (ds_cpe), but retiming and the floors after it
 *    are heuristics: of the 162 runs that chose PEAK_BUDGET_DEFAULT, 6
 *    were longer at 10 than at 5, 10 at 15 and 8 at 20 without the
 *    default's floor, none with it (the most: `gen --kind random --nodes
 *    500 --seed 4` at L1=2048,UB=768, 8,572 cycles at 10 against 8,258
 *    at 5, test_pipeline).  So the makespan never rises along 5, 25 and
 *    100, nor above the last; between them it may (`--kind random
 *    --nodes 500 --seed 2`: 8,549 cycles at 20, 8,874 at 25).  The rungs
 *    above the default came with the tie on the peak: on 64 generated
 *    graphs (the four kinds, 500 and 1,000 nodes, seeds 1-4, the default
 *    capacities and L1=2048,UB=768) at peak budgets 10 to 100, 6 plans
 *    at 30 and 50 came out shorter (`--kind random --nodes 500 --seed
 *    4` at 30: 9,050 cycles at 2,368 bytes -> 8,988 at 2,304, the plan
 *    at 25), 50 as long at a lower peak (`--kind attention --nodes 500
 *    --seed 2` at 50: 11,223 cycles at 1,314 bytes -> 930), none longer
 *    or higher (2026-12-06).  A run above 25 makes three chains, above
 *    100 four. */
static int floor_opts(const ds_run_opts *o, ds_run_opts alt[FLOORS_MAX])
{
	ds_run_opts one = default_effort(o);
	const bool more = more_effort(o);
	int n = 0;
	if (more)
		alt[n++] = one;
	for (int r = 0; r < NPEAK_RUNGS; r++) {
		if (peak_rungs[r] >= o->cpe.peak_budget_pct)
			break;
		if (more)
			alt[n++] = at_peak(&one, peak_rungs[r]);
		alt[n++] = at_peak(o, peak_rungs[r]);
	}
	return n;
}

/* MPAS, DLR and CPE with o (no floors), stopping after o's stage. */
static int dan_chain(const ds_graph *g, const ds_run_opts *o, ds_plan *out,
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
	return rc;
}

/* The plan of dan_chain with o replaces *out (figures *fig) when it is
 * shorter, or as long with less traffic. */
static int floor_run(const ds_graph *g, const ds_run_opts *o, ds_plan *out,
		     ds_figures *fig, ds_err *e)
{
	ds_plan q;
	ds_figures fq;
	memset(&q, 0, sizeof q); /* dan_chain frees what it made on failure */
	int rc = dan_chain(g, o, &q, &fq, e);
	if (rc == DS_OK)
		keep_shorter(g, o, out, fig, &q, &fq);
	return rc;
}

/* dan_chain with o, then its floors (floor_opts) where it ran to CPE. */
static int run_dan(const ds_graph *g, const ds_run_opts *o, ds_plan *out,
		   ds_figures *fig, ds_err *e)
{
	int rc = dan_chain(g, o, out, fig, e);
	ds_run_opts alt[FLOORS_MAX];
	int n = o->stage == DS_STAGE_CPE ? floor_opts(o, alt) : 0;
	for (int i = 0; i < n && rc == DS_OK; i++)
		if ((rc = floor_run(g, &alt[i], out, fig, e)))
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

/* The ladder's plans, as dan_chain makes each (o's own budget not read):
 * MPAS and DLR once, then CPE's stage at each budget in turn, the floors
 * taking the plans already made (dan_run).  On failure out[] may hold
 * plans (the caller frees them). */
static int ladder_dan(const ds_graph *g, const ds_run_opts *o,
		      ds_plan out[DS_NLADDER], ds_figures fig[DS_NLADDER],
		      ds_err *e)
{
	dan_run d;
	memset(&d, 0, sizeof d);
	ds_plan dlr;
	memset(&dlr, 0, sizeof dlr);
	ds_figures df;
	int rc = dan_mpas(g, o, &d, &df, e);
	if (rc == DS_OK)
		rc = dan_dlr(g, o, &d, &dlr, &df, e);
	for (int i = 0; i < DS_NLADDER && rc == DS_OK; i++) {
		ds_run_opts at = *o;
		at.cpe.traffic_budget_pct = ds_budget_ladder[i];
		fig[i] = df;
		rc = dan_cpe(g, &at, &d, &dlr, &out[i], &fig[i], e);
	}
	ds_plan_free(g->heap, &dlr);
	dan_free(g, &d);
	return rc;
}

/* floor_run's rule at each budget of the ladder. */
static int ladder_floor_run(const ds_graph *g, const ds_run_opts *o,
			    ds_plan out[DS_NLADDER],
			    ds_figures fig[DS_NLADDER], ds_err *e)
{
	ds_plan q[DS_NLADDER];
	ds_figures fq[DS_NLADDER];
	memset(q, 0, sizeof q);
	int rc = ladder_dan(g, o, q, fq, e);
	for (int i = 0; i < DS_NLADDER; i++)
		if (rc == DS_OK)
			keep_shorter(g, o, &out[i], &fig[i], &q[i], &fq[i]);
		else
			ds_plan_free(g->heap, &q[i]);
	return rc;
}

int ds_run_ladder(const ds_graph *g, const ds_run_opts *o,
		  ds_plan out[DS_NLADDER], ds_figures fig[DS_NLADDER],
		  ds_err *e)
{
	memset(out, 0, DS_NLADDER * sizeof *out);
	if (o->scheduler != DS_SCHED_DAN || o->stage != DS_STAGE_CPE)
		return ds_fail(e, DS_EINPUT, "the budget ladder is the dan "
			       "scheduler's, to its last stage");
	int rc = ladder_dan(g, o, out, fig, e);
	ds_run_opts alt[FLOORS_MAX]; /* run_dan's floors at each budget */
	int n = floor_opts(o, alt);
	for (int i = 0; i < n && rc == DS_OK; i++)
		rc = ladder_floor_run(g, &alt[i], out, fig, e);
	for (int i = 0; i < DS_NLADDER && rc == DS_OK; i++)
		rc = finish(g, &out[i], &fig[i], e);
	if (rc)
		for (int i = 0; i < DS_NLADDER; i++)
			ds_plan_free(g->heap, &out[i]);
	return rc;
}
