/* ds_portfolio.c: dan never worse than a baseline, by construction.
 *
 * The baselines (original, free-first, lpmf, cp-list, vpux) are cheap: an
 * order by a key and the shared placer.  dan runs them too and uses them
 * three ways: a baseline order that keeps the one-live rule and peaks
 * lower than MPAS's order replaces it (the MPAS figure); the one-live
 * orders are extra DLR starts (an order of higher peak may place with
 * less traffic: random 20k seed 1, free-first's order spills 3,152 bytes
 * where MPAS's spilled 17,152); and the baselines' plans, through CPE,
 * compete with dan's final plan (ds_portfolio_better), so on every graph
 * dan's plan meets the least extra_ddr and the least makespan of the
 * baselines wherever one of the candidate plans does.  A candidate above
 * CPE's peak cap (where set: the run's peak budget) replaces a plan
 * within it only where that is needed for those two (take).
 *
 * Requires: a valid graph.  Guarantees: ds_portfolio_mpas returns an
 * order with the one-live rule (checked by ds_replay) whenever it changes
 * one; ds_portfolio_final returns a plan that passed ds_replay and is no
 * worse by ds_portfolio_better than the one it was given, and within
 * cpe->peak_cap where that one was, unless it meets more of the
 * targets.
 * Cost: the five baselines, O((N + E) log N) each plus the placer and a
 * replay each; CPE on the baseline plans only when dan's plan misses a
 * target. */
#include "ds_portfolio.h"

#include <string.h>

typedef int (*order_fn)(const ds_graph *g, int32_t *order, ds_err *e);

int ds_baseline_order(const ds_graph *g, int s, int32_t *order, ds_err *e)
{
	static const order_fn orders[DS_NBASE] = {
		ds_order_id, ds_order_free_first, ds_order_lpmf,
		ds_order_cp_list, ds_order_vpux};
	if (s < 0 || s >= DS_NBASE)
		return ds_fail(e, DS_EINPUT, "unknown baseline %d", s);
	return orders[s](g, order, e);
}

int ds_baseline_plan(const ds_graph *g, int s, const int32_t *order,
		     ds_plan *out, ds_err *e)
{
	static const ds_place_opts place[DS_NBASE] = {
		{DS_FIRST_FIT, DS_VICTIM_FURTHEST, 0}, /* original */
		{DS_BEST_FIT, DS_VICTIM_FURTHEST, 0},  /* free-first */
		{DS_BEST_FIT, DS_VICTIM_FURTHEST, 0},  /* lpmf */
		{DS_FIRST_FIT, DS_VICTIM_FURTHEST, 0}, /* cp-list */
		{DS_FIRST_FIT, DS_VICTIM_FURTHEST, 0}, /* vpux: linear scan */
	};
	if (s < 0 || s >= DS_NBASE)
		return ds_fail(e, DS_EINPUT, "unknown baseline %d", s);
	return ds_place(g, order, &place[s], out, e);
}

void ds_portfolio_free(const ds_graph *g, ds_portfolio *pf)
{
	for (int s = 0; s < DS_NBASE; s++) {
		ds_free(g->heap, pf->order[s]);
		ds_plan_free(g->heap, &pf->plan[s]);
	}
	memset(pf, 0, sizeof *pf);
}

/* Bounds of the plan of baseline s, from its order: at any step the bytes
 * live in memory m beyond its capacity sit in DDR, each byte spilled once
 * at least (a spill moves size or 2 * size bytes); each SPILL_IN takes at
 * least its traffic in cycles on MTE2. */
static void bounds(const ds_graph *g, int s, ds_portfolio *pf)
{
	int64_t live[DS_NMEM] = {0}, over[DS_NMEM] = {0}, mte2 = 0;
	int32_t pipe = ds_graph_find_pipe(g, "MTE2");
	const int32_t *order = pf->order[s];
	for (int32_t i = 0; i < g->n; i++) {
		int32_t v = order[i];
		if (g->kind[v] == DS_OP) {
			mte2 += g->pipe[v] == pipe ? g->cycles[v] : 0;
			continue;
		}
		int32_t b = g->buf[v];
		int m = g->buf_mem[b];
		live[m] += g->kind[v] == DS_ALLOC ? g->buf_size[b]
						  : -g->buf_size[b];
		if (live[m] - g->caps.cap[m] > over[m])
			over[m] = live[m] - g->caps.cap[m];
	}
	int64_t lb = 0;
	for (int m = 0; m < DS_NMEM; m++)
		lb += over[m];
	pf->ddr_lb[s] = lb;
	pf->makespan_lb[s] = mte2 + lb;
}

/* Baseline s's order, whether it keeps the one-live rule, its peak. */
static int run_order(const ds_graph *g, int s, ds_portfolio *pf, ds_err *e)
{
	pf->order[s] = ds_alloc(g->heap, (size_t)g->n, sizeof(int32_t));
	if (!pf->order[s])
		return ds_fail(e, DS_ENOMEM, "out of memory");
	int rc = ds_baseline_order(g, s, pf->order[s], e);
	if (rc)
		return rc;
	ds_plan p = {g->n, pf->order[s], NULL, 0, NULL};
	ds_replay_opts ro = {.q1 = true};
	ds_figures f;
	ds_err q1e;
	rc = ds_replay(g, &p, &ro, &f, &q1e);
	if (rc == DS_ENOMEM)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	pf->one_live[s] = rc == DS_OK;
	pf->order_peak[s] = rc == DS_OK ? f.peak_vstay : INT64_MAX;
	bounds(g, s, pf);
	return DS_OK;
}

/* Baseline s's plan and its figures (once). */
static int place(const ds_graph *g, int s, ds_portfolio *pf, ds_err *e)
{
	if (pf->placed[s])
		return DS_OK;
	int rc = ds_baseline_plan(g, s, pf->order[s], &pf->plan[s], e);
	if (rc == DS_OK)
		rc = ds_replay(g, &pf->plan[s], NULL, &pf->fig[s], e);
	if (rc == DS_EPLAN)
		return ds_fail(e, DS_EPLAN, "%s: internal error: baseline %s "
			       "made an invalid plan", g->source,
			       ds_sched_names[s]);
	pf->placed[s] = rc == DS_OK;
	return rc;
}

int ds_portfolio_run(const ds_graph *g, ds_portfolio *pf, ds_err *e)
{
	memset(pf, 0, sizeof *pf);
	int rc = DS_OK;
	for (int s = 0; s < DS_NBASE && rc == DS_OK; s++)
		rc = run_order(g, s, pf, e);
	if (rc)
		ds_portfolio_free(g, pf);
	return rc;
}

int ds_portfolio_mpas(const ds_graph *g, const ds_portfolio *pf,
		      int32_t *order, int64_t *peak)
{
	int best = -1;
	for (int s = 0; s < DS_NBASE; s++)
		if (pf->one_live[s] && pf->order_peak[s] < *peak &&
		    (best < 0 || pf->order_peak[s] < pf->order_peak[best]))
			best = s;
	if (best >= 0) {
		memcpy(order, pf->order[best], (size_t)g->n * sizeof *order);
		*peak = pf->order_peak[best];
	}
	return best;
}

/* Less (extra_ddr, spills). */
static bool less_traffic(const ds_figures *f, const ds_figures *cur)
{
	return f->extra_ddr < cur->extra_ddr ||
	       (f->extra_ddr == cur->extra_ddr && f->spills < cur->spills);
}

/* Has an earlier baseline the same order as s? */
static bool seen_order(const ds_graph *g, const ds_portfolio *pf, int s)
{
	for (int i = 0; i < s; i++)
		if (pf->one_live[i] &&
		    memcmp(pf->order[i], pf->order[s],
			   (size_t)g->n * sizeof(int32_t)) == 0)
			return true;
	return false;
}

int ds_portfolio_dlr(const ds_graph *g, ds_portfolio *pf,
		     const ds_dlr_opts *o, ds_plan *best, ds_figures *bf,
		     ds_err *e)
{
	int rc = DS_OK;
	for (int s = 0; s < DS_NBASE && rc == DS_OK; s++) {
		if (!pf->one_live[s] || pf->ddr_lb[s] > bf->extra_ddr ||
		    seen_order(g, pf, s))
			continue;
		rc = place(g, s, pf, e);
		if (rc || !less_traffic(&pf->fig[s], bf))
			continue;
		ds_plan p;
		ds_figures f;
		rc = ds_dlr(g, pf->order[s], o, &p, e);
		if (rc == DS_OK)
			rc = ds_replay(g, &p, NULL, &f, e);
		ds_plan_keep(g->heap, rc == DS_OK && less_traffic(&f, bf),
			     best, bf, &p, &f);
	}
	return rc;
}

/* How many of the targets t f misses. */
static int misses(const ds_figures *t, const ds_figures *f)
{
	return (f->extra_ddr > t->extra_ddr) + (f->makespan > t->makespan);
}

bool ds_portfolio_dominates(const ds_figures *a, const ds_figures *b)
{
	return a->extra_ddr <= b->extra_ddr && a->spills <= b->spills &&
	       a->makespan <= b->makespan &&
	       (a->extra_ddr < b->extra_ddr || a->spills < b->spills ||
		a->makespan < b->makespan);
}

bool ds_portfolio_beats(const ds_figures *f, const ds_figures *cur)
{
	return f->makespan < cur->makespan && f->extra_ddr <= cur->extra_ddr &&
	       f->spills <= cur->spills;
}

bool ds_portfolio_less_lex(const ds_figures *f, const ds_figures *cur)
{
	if (f->extra_ddr != cur->extra_ddr)
		return f->extra_ddr < cur->extra_ddr;
	if (f->spills != cur->spills)
		return f->spills < cur->spills;
	return f->makespan < cur->makespan;
}

bool ds_portfolio_better(const ds_figures *t, const ds_figures *f,
			 const ds_figures *cur)
{
	if (ds_portfolio_dominates(f, cur))
		return true;
	if (ds_portfolio_dominates(cur, f))
		return false;
	int mf = misses(t, f), mc = misses(t, cur);
	if (mf != mc)
		return mf < mc;
	/* both meet them: keep cur */
	return mf > 0 && ds_portfolio_less_lex(f, cur);
}

/* Baseline s's plan as a candidate: through CPE (cpe set, traffic and
 * peak budgets 0, so that its traffic stays its own) or as it is. */
static int candidate(const ds_graph *g, const ds_portfolio *pf, int s,
		     const ds_cpe_opts *cpe, ds_plan *out, ds_figures *f,
		     ds_err *e)
{
	if (!cpe) {
		*f = pf->fig[s];
		return ds_plan_copy(g, &pf->plan[s], out, e);
	}
	ds_cpe_opts o = *cpe;
	o.traffic_budget_pct = 0;
	o.peak_budget_pct = 0;
	int rc = ds_cpe(g, &pf->plan[s], &o, out, e);
	if (rc == DS_OK)
		rc = ds_replay(g, out, NULL, f, e);
	if (rc)
		ds_plan_free(g->heap, out);
	return rc;
}

/* The targets: the least extra_ddr and makespan of the baselines placed,
 * after placing every one whose bounds do not exceed bf's figures (one
 * that is not placed can be the least in neither). */
static int targets(const ds_graph *g, ds_portfolio *pf, const ds_figures *bf,
		   ds_figures *t, ds_err *e)
{
	memset(t, 0, sizeof *t);
	t->extra_ddr = t->makespan = INT64_MAX;
	int rc = DS_OK;
	for (int s = 0; s < DS_NBASE && rc == DS_OK; s++) {
		if (pf->ddr_lb[s] > bf->extra_ddr &&
		    pf->makespan_lb[s] > bf->makespan)
			continue;
		rc = place(g, s, pf, e);
		if (rc == DS_OK && pf->fig[s].extra_ddr < t->extra_ddr)
			t->extra_ddr = pf->fig[s].extra_ddr;
		if (rc == DS_OK && pf->fig[s].makespan < t->makespan)
			t->makespan = pf->fig[s].makespan;
	}
	return rc;
}

/* Could baseline plan f (before CPE) beat bf?  CPE drops spills and
 * shortens, so only a plan moving no more than bf or the least of the
 * baselines is tried; when bf meets the targets only domination wins, so
 * also with no more spills. */
static bool worth_trying(const ds_figures *t, const ds_figures *f,
			 const ds_figures *bf)
{
	if (misses(t, bf) == 0)
		return f->extra_ddr <= bf->extra_ddr &&
		       f->spills <= bf->spills;
	return f->extra_ddr <= bf->extra_ddr || f->extra_ddr == t->extra_ddr;
}

/* Does candidate f replace bf?  As ds_portfolio_better says, but a
 * candidate above the peak cap (cap > 0; a baseline's plan keeps its own
 * peak) replaces a plan within it only where it misses fewer of the
 * targets t: dan is never worse than a baseline, and otherwise keeps the
 * peak budget. */
static bool take(const ds_figures *t, const ds_figures *f,
		 const ds_figures *bf, int64_t cap)
{
	if (!ds_within_peak_cap(cap, f->peak_vstay) &&
	    ds_within_peak_cap(cap, bf->peak_vstay))
		return misses(t, f) < misses(t, bf);
	return ds_portfolio_better(t, f, bf);
}

int ds_portfolio_final(const ds_graph *g, ds_portfolio *pf,
		       const ds_cpe_opts *cpe, ds_plan *best, ds_figures *bf,
		       ds_err *e)
{
	ds_figures t;
	int rc = targets(g, pf, bf, &t, e);
	if (!cpe) {
		/* before CPE, the plans compete on traffic */
		t.extra_ddr = t.makespan = -1;
	}
	for (int s = 0; s < DS_NBASE && rc == DS_OK; s++) {
		if (!pf->placed[s] || !worth_trying(&t, &pf->fig[s], bf))
			continue;
		ds_plan p;
		ds_figures f;
		rc = candidate(g, pf, s, cpe, &p, &f, e);
		if (rc == DS_OK) /* on failure candidate freed p */
			ds_plan_keep(g->heap,
				     take(&t, &f, bf, cpe ? cpe->peak_cap : 0),
				     best, bf, &p, &f);
	}
	return rc;
}
