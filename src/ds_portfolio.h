/* ds_portfolio.h: dan never worse than a baseline (ds_portfolio.c). */
#ifndef DS_PORTFOLIO_H
#define DS_PORTFOLIO_H

#include "ds_pipeline.h"

/* The baselines are the schedulers 0 .. DS_NBASE - 1. */
#define DS_NBASE DS_SCHED_DAN

/* Baseline s's order of all n nodes, and its plan (the order placed by
 * the shared placer with s's policy; DS_EINPUT when the order breaks an
 * edge, as the node-Id order of a graph numbered out of order does). */
int ds_baseline_order(const ds_graph *g, int s, int32_t *order, ds_err *e);
int ds_baseline_plan(const ds_graph *g, int s, const int32_t *order,
		     ds_plan *out, ds_err *e);

/* Every baseline run on one graph, as the bench runs them; the plans are
 * made only where they may matter (see ds_portfolio_final). */
typedef struct ds_portfolio {
	int32_t *order[DS_NBASE];  /* each baseline's order (n nodes) */
	bool one_live[DS_NBASE];   /* its order keeps the one-live rule */
	int64_t order_peak[DS_NBASE];
	/* lower bounds of the plan's extra_ddr (the bytes over capacity at
	 * the order's worst step, per memory) and makespan (MTE2's
	 * operations plus the SPILL_INs those bytes need) */
	int64_t ddr_lb[DS_NBASE], makespan_lb[DS_NBASE];
	bool placed[DS_NBASE];
	ds_plan plan[DS_NBASE];	  /* placed by the baseline's policy */
	ds_figures fig[DS_NBASE]; /* the plans' figures */
} ds_portfolio;

/* The baselines' orders and their bounds. */
int ds_portfolio_run(const ds_graph *g, ds_portfolio *pf, ds_err *e);
void ds_portfolio_free(const ds_graph *g, ds_portfolio *pf);

/* When a baseline order keeping the one-live rule has a peak below
 * *peak, copies the least such into order and sets *peak; returns the
 * baseline's index, or -1 when order stays. */
int ds_portfolio_mpas(const ds_graph *g, const ds_portfolio *pf,
		      int32_t *order, int64_t *peak);

/* DLR from the baseline orders that place better than *best (figures
 * *bf, DLR's plan) with the baseline's own policy: the better of *best
 * and each such DLR plan, by (extra_ddr, spills), stays in *best. */
int ds_portfolio_dlr(const ds_graph *g, ds_portfolio *pf,
		     const ds_dlr_opts *o, ds_plan *best, ds_figures *bf,
		     ds_err *e);

/* Is plan figure f better than cur for targets t (the least baseline
 * extra_ddr and makespan): it dominates cur on (extra_ddr, spills,
 * makespan), or it meets more of the targets, or, both missing the same
 * number, it has less (extra_ddr, spills, makespan). */
bool ds_portfolio_better(const ds_figures *t, const ds_figures *f,
			 const ds_figures *cur);

/* Does a dominate b: no more extra_ddr, spills and makespan, and less of
 * one of them? */
bool ds_portfolio_dominates(const ds_figures *a, const ds_figures *b);

/* Does plan figure f beat cur on every figure: shorter, with no more
 * extra_ddr and spills?  (The rule of ds_parts_plan and of the budget
 * floor, ds_pipeline.c: a plan that passes it keeps every guarantee cur
 * had on traffic and spills.) */
bool ds_portfolio_beats(const ds_figures *f, const ds_figures *cur);

/* Has f less (extra_ddr, spills, makespan) than cur, in that order? */
bool ds_portfolio_less_lex(const ds_figures *f, const ds_figures *cur);

/* Keeps in *best (figures *bf) the better of it and the baselines' plans,
 * each through CPE with opts cpe unless cpe is NULL (then the plans
 * compete by (extra_ddr, spills, makespan)); with cpe->peak_cap set, a
 * plan above it replaces one within it only where it meets more of the
 * baselines' least extra_ddr and makespan.  A baseline whose bounds
 * exceed bf's extra_ddr and makespan is not placed. */
int ds_portfolio_final(const ds_graph *g, ds_portfolio *pf,
		       const ds_cpe_opts *cpe, ds_plan *best, ds_figures *bf,
		       ds_err *e);

/* ds_parts.c: when g's weakly connected components are 2 to 64,
 * each planned alone with o, the plans back to back (through CPE at the
 * CPE stage) replace *best (figures *bf) unless *best is at most the
 * parts' sums of extra_ddr, spills and makespan and they do not beat it
 * (ds_portfolio_beats).  With grouped not NULL, where some parts are
 * small: *grouped the grouped plan (the small parts planned with the
 * largest as one graph, the others as above, back to back through CPE),
 * for the caller to keep or free; left empty otherwise.  With parts_ddr
 * not NULL: *parts_ddr the parts' summed extra_ddr where g was planned
 * by its parts, else INT64_MAX (what a later search may spend on g's
 * plan: a union of graphs keeps its graphs' traffic). */
int ds_parts_plan(const ds_graph *g, const ds_run_opts *o, ds_plan *best,
		  ds_figures *bf, ds_plan *grouped, int64_t *parts_ddr,
		  ds_err *e);

#endif
