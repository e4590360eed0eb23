/* ds_pipeline.c: the schedulers, end to end, each plan checked.
 *
 * The baselines are an order plus the shared placer with their policy
 * (ds_baseline.c).  dan runs its stages in order, stopping after the one
 * asked for:
 * - MPAS: an order of low peak (ds_mpas.c); the baselines' one-live
 *   orders compete with it (ds_portfolio.c).
 * - DLR: placement and spills, a search of its own (ds_dlr_stage.c):
 *   from several starts, then from orders that pull together the uses
 *   its plan's spills separate, last MPAS's order and its plan's placed
 *   with the spills decided on bytes and the addresses packed.  Where
 *   MPAS's second phase bettered its first, the search runs from both
 *   orders, the better plan kept (dlr_search).
 * - CPE: pipeline overlap, CPE's chain (ds_chain.c: the backbone, CPE,
 *   retiming and their rounds, and the chain's floors), then the stage's
 *   floors here: the baselines' plans and the graph's parts planned
 *   alone (ds_parts.c, up to 64 parts), the spill-separated uses pulled
 *   together (window_floor, ds_window.c), with a traffic budget the
 *   chain at budget 0 (budget_floor) and above 5 the stage at the next
 *   lower of 5, 25, 100 and 400 (ladder_floor), the spills of the plan's
 *   end searched again (ds_replan_floor, ds_finish.c), the finished
 *   plan's addresses placed again by need (need_floor, ds_retime.c), and
 *   the final plan's dead reloads dropped (ds_plan_drop_dead_reloads).
 * With more effort the default's plan is made too and the shorter kept,
 * and with a peak budget above the default the plans at each of 5, 25
 * and 100 below it (floor_opts).  A run makes each floor's plan once
 * (dan_run's memos), and ds_run_ladder plans at every budget of the
 * ladder in one run, each plan the one ds_run makes at that budget.
 *
 * Requires: a valid graph.  Guarantees: the plan returned has passed
 * ds_replay (with the one-live rule for an MPAS-only plan), its spills
 * numbered in the order their SPILL_OUTs run (ds_plan_sort_spills,
 * checked by a strict replay), and *fig holds its figures.  Cost: the
 * stages' own (each file says), the floors' runs on graphs of up to
 * DS_FLOOR_MAX_NODES nodes. */
#include "ds_chain.h"

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

int64_t ds_run_size(const ds_graph *g, const ds_run_opts *o)
{
	return ds_size_nodes(g, o->size_nodes);
}

double ds_run_seconds(clock_t t0)
{
	return (double)(clock() - t0) / CLOCKS_PER_SEC;
}

int ds_run_check(const ds_graph *g, const ds_run_opts *o,
		 const char *stage, const ds_plan *p, bool q1, clock_t t0,
		 ds_figures *fig, ds_err *e)
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
		o->progress(o->progress_ud, stage, ds_run_seconds(t0), fig);
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
		rc = ds_run_check(g, o, ds_sched_names[o->scheduler], out,
				  false, t0, fig, e);
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
	int32_t *near_first; /* where near differs from MPAS's own order
				(the second phase bettered the first; else
				NULL): near, or the baseline's order
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
	ds_dlr_memo *dlr_memo; /* DLR's plans in this run (NULL: none) */
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
	ds_dlr_memo_free(d->dlr_memo);
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

/* Copies order (MPAS's) into own (unless own is NULL: the caller has
 * kept it), then replaces order by the baselines' one-live order of
 * least peak where that is lower (*replaced then set). */
static int mpas_or_baseline(const ds_graph *g, dan_run *d, int32_t *order,
			    int32_t *own, bool *replaced, ds_err *e)
{
	int64_t peak;
	int rc = one_live_peak(g, order, &peak, e);
	if (rc == DS_OK) {
		if (own)
			memcpy(own, order, (size_t)g->n * sizeof *order);
		*replaced = ds_portfolio_mpas(g, &d->pf, order, &peak) >= 0;
	}
	return rc;
}

/* The first phase's order where the second bettered it (d->near_first), and
 * the baseline's that replaces it as mpas_or_baseline replaces MPAS's
 * own: DLR's search runs from both (dlr_search). */
static int mpas_near(const ds_graph *g, dan_run *d, ds_err *e)
{
	if (!memcmp(d->near, d->order, (size_t)g->n * sizeof *d->near))
		return DS_OK;
	d->near_first = ds_alloc(g->heap, (size_t)g->n, sizeof *d->near_first);
	if (!d->near_first)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	memcpy(d->near_first, d->near, (size_t)g->n * sizeof *d->near);
	return mpas_or_baseline(g, d, d->near_first, NULL, &d->near_replaced,
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
		rc = ds_run_check(g, o, "mpas", &mp, true, t0, fig, e);
		if (rc == DS_EPLAN && o->stage != DS_STAGE_MPAS)
			rc = ds_run_check(g, o, "mpas", &mp, false, t0, fig, e);
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
	int rc = ds_run_check(g, &quiet, "dlr", p, false, t0, &f, e);
	if (rc == DS_OK)
		rc = ds_portfolio_final(g, &d->pf, NULL, p, &f, e);
	if (rc == DS_OK)
		rc = ds_parts_plan(g, o, p, &f, NULL, NULL, e);
	if (rc == DS_OK)
		rc = ds_run_check(g, o, "dlr", p, false, t0, fig, e);
	return rc;
}

/* DLR's search (ds_dlr_stage_search) from first, the MPAS stage's
 * order (MPAS's own order own, or a baseline's that replaced it: then
 * own is the second start), then from MPAS's other orders. */
static int dlr_search_from(const ds_graph *g, const ds_run_opts *o,
			   dan_run *d, const int32_t *first, const int32_t *own,
			   bool replaced, ds_plan *out, ds_figures *fig,
			   bool *packed, ds_err *e)
{
	const int32_t *starts[DS_DLR_MAX_STARTS];
	int k = 0;
	starts[k++] = first;
	if (replaced)
		starts[k++] = own;
	for (int i = 0; i < d->nalt; i++)
		starts[k++] = d->alt + (size_t)i * g->n;
	ds_dlr_search ds = {starts, k, first, &d->pf, &d->timely};
	return ds_dlr_stage_search(g, o, &ds, out, fig, packed, e);
}

/* The search from MPAS's stage's order, or where the second phase of
 * MPAS's local search bettered the first's (d->near_first) from the first
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
	ds_figures f, fq;
	if (!d->near_first)
		return dlr_search_from(g, o, d, d->order, own, d->replaced, out,
				       &f, &d->packed, e);
	int rc = dlr_search_from(g, o, d, d->near_first, d->near,
				 d->near_replaced, out, &f, &d->packed, e);
	if (rc || ds_dlr_starts(g, o) < 2)
		return rc;
	ds_plan q;
	memset(&q, 0, sizeof q);
	bool packed = false;
	rc = dlr_search_from(g, o, d, d->order, own, d->replaced, &q, &fq,
			     &packed, e);
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
		rc = ds_run_check(g, o, "dlr", out, false, t0, fig, e);
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

ds_run_opts ds_run_quiet(const ds_run_opts *o)
{
	ds_run_opts q = *o;
	q.progress = NULL;
	return q;
}

ds_run_opts ds_run_quiet_at(const ds_run_opts *o, double pct)
{
	ds_run_opts q = ds_run_quiet(o);
	q.cpe.traffic_budget_pct = pct;
	return q;
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
		    ds_memo *m, const ds_plan *p, const ds_figures *f,
		    ds_err *e)
{
	if (ds_run_size(g, o) > DS_FLOOR_MAX_NODES)
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
	ds_chain_in in = {d->packed, &d->timely};
	int rc = ds_chain(g, o, &in, dlr, df, out, f, t0, e);
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
 * budget 0, 380 bytes more but 2,211 under the cap (it needs the rule
 * no longer, since DLR's stage runs more starts in full); test_pipeline
 * holds `--kind random --nodes 1000 --seed 7` at L1=1536,UB=640: 23,808
 * cycles at 3,888 bytes, budget 0's plan, against 24,220 at 3,664.  The
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
	    ds_run_size(g, o) > DS_FLOOR_MAX_NODES)
		return DS_OK;
	ds_run_opts zero = ds_run_quiet_at(o, 0);
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
 * So on graphs of up to DS_FLOOR_MAX_NODES nodes the makespan never
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
	    ds_run_size(g, o) > DS_FLOOR_MAX_NODES)
		return DS_OK;
	ds_run_opts lower = ds_run_quiet_at(o, ds_budget_ladder[below]);
	ds_plan q;
	memset(&q, 0, sizeof q);
	ds_figures fq;
	int rc = stage_at(g, &lower, d, dlr, df, &q, &fq, NULL, e);
	return ds_chain_keep_made(g, o, rc, out, f, &q, &fq);
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

/* need_floor on graphs of at most this many nodes (the six bundled
 * graphs have up to 36,086): on `dansched gen --kind matmul --nodes
 * 1000000` it took the plan from 46.3 to 55.2 s for the same makespan
 * (its replays with a memory's reuse edges lifted, about one per memory,
 * cost far more than its work budget counts; 2026-12-07, both under the
 * same load). */
#define NEED_MAX_NODES 50000

/* The finished plan's memories placed again by need (ds_retime.c,
 * ds_retime_by_need), kept where shorter: last, and not on a part of a
 * larger graph (whose plan the larger one's is built on), so that no
 * plan built on it can end longer.  Inside retiming, where CPE's rounds
 * built on it, it lengthened `dansched gen --kind random --nodes 1500
 * --seed 6` at L1=2048,UB=768, 42,241 -> 43,207 cycles, and on the
 * parts, `--kind conv --nodes 6000 --seed 5` there, 159,657 -> 160,240
 * (2026-12-07). */
static int need_floor(const ds_graph *g, const ds_run_opts *o,
		      const ds_figures *df, ds_plan *out, ds_figures *f,
		      ds_err *e)
{
	/* a part: the whole graph's plan gets it */
	if (o->part || ds_run_size(g, o) > NEED_MAX_NODES)
		return DS_OK;
	ds_plan q;
	int rc = ds_retime_by_need(g, out, &o->retime, &q, e);
	if (rc)
		return rc;
	const ds_figures from = *f;
	bool took;
	return ds_keep_shorter(g, &q, finish_peak(o, df), &from, out, f,
			       &took, e);
}

/* CPE's stage before its check: CPE's chain from DLR's plan (figures
 * *df) and its spill-separated uses pulled together (window_floor, so
 * that it meets the parts' plans, which had that, on equal terms), then
 * against the baselines' plans and the parts (as dlr_final), then the
 * budget floor, the ladder floor, the tail searched again
 * (ds_replan_floor), the uses pulled together again and the grouped plan
 * of the parts (group_floor; graphs of up to DS_FLOOR_MAX_NODES
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
	bool grouped = ds_run_size(g, o) <= DS_FLOOR_MAX_NODES;
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
	if (rc == DS_OK)
		rc = need_floor(g, o, df, out, f, e);
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
		rc = ds_run_check(g, o, "cpe", out, false, t0, fig, e);
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
	ds_run_opts one = ds_run_quiet(o);
	one.mpas.effort = one.dlr.effort = one.cpe.effort = 1;
	one.retime.effort = 1;
	return one;
}

/* o at peak budget pct, without its progress lines. */
static ds_run_opts at_peak(const ds_run_opts *o, double pct)
{
	ds_run_opts d = ds_run_quiet(o);
	d.cpe.peak_budget_pct = pct;
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
 *    at 5; test_pipeline now has that graph at the default capacities,
 *    9,089 against 9,050, since DLR's packings took rounds).  So the makespan never rises along 5, 25 and
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

/* MPAS, DLR and CPE with o (no floors), stopping after o's stage; on
 * graphs where the floors run, DLR's plans kept in the run's memo
 * (d.dlr_memo): the backbones of CPE's chain and of the budget floor's
 * place the same orders (Conv_Case0: 45 of 105 DLR runs; the six
 * bundled graphs' plans in 42.28 G instructions instead of 43.37 G,
 * callgrind, the same plans, 2026-12-07). */
static int dan_chain(const ds_graph *g, const ds_run_opts *run_o,
		     ds_plan *out, ds_figures *fig, ds_err *e)
{
	dan_run d;
	memset(&d, 0, sizeof d);
	if (ds_run_size(g, run_o) <= DS_FLOOR_MAX_NODES &&
	    !(d.dlr_memo = ds_dlr_memo_new(g)))
		return ds_fail(e, DS_ENOMEM, "out of memory");
	ds_run_opts memo_o = *run_o;
	memo_o.dlr.memo = d.dlr_memo;
	const ds_run_opts *o = &memo_o;
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
		ds_chain_keep_shorter(g, o, out, fig, &q, &fq);
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
			ds_chain_keep_shorter(g, o, &out[i], &fig[i], &q[i],
					      &fq[i]);
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
