/* ds_chain.c: CPE's chain, the CPE stage's run from one DLR plan.
 *
 * The backbone is chosen (ds_backbone.c), CPE runs from it (ds_cpe.c)
 * and retiming after it (ds_retime.c), then both again on each other's
 * plans while that shortens it (cpe_retime_rounds); CPE runs also from
 * the backbone a pull replaced (pull_floor) and, with more effort, from
 * the runner-up (cpe_runner_up); then the floors of the backbone choice:
 * the chain again from the backbone chosen within the default budget
 * (lean_floor), from the choice's second and third backbones (over_floor,
 * timely_floor) and from DLR's own plan where the plan is over the peak
 * cap (cap_floor).  The stage around it (the baselines, the parts, the
 * budget and ladder floors, the tail searched again) is ds_pipeline.c's.
 *
 * Requires: a valid graph and DLR's plan of it, which ds_replay
 * accepts, with its figures.  Guarantees: the plan made has passed
 * ds_replay; a round's or a floor's plan replaces the one so far only by
 * ds_chain_keep_shorter's rule (within the peak cap first, then shorter,
 * or as long with less traffic, or as much at a lower peak), retiming's
 * only where shorter.  Cost: one backbone choice and one chain of CPE
 * and retiming (with two rounds on graphs of up to DS_SMALL_GRAPH_NODES
 * nodes), and one more chain for each floor whose backbone exists (the
 * lean floor, above the default budget, also one more backbone choice
 * and its own over and timely floors). */
#include "ds_chain.h"

#include <string.h>

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
	ds_run_opts quiet = ds_run_quiet(o);
	int rc = ds_retime(g, p, &ro, &q, e);
	if (rc == DS_OK)
		rc = ds_run_check(g, &quiet, "retime", &q, false, t0, &f, e);
	ds_plan_keep(g->heap, rc == DS_OK && f.makespan < fig->makespan, p,
		     fig, &q, &f);
	/* the line reports the plan kept */
	if (rc == DS_OK && o->progress)
		o->progress(o->progress_ud, "retime", ds_run_seconds(t0), fig);
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
void ds_chain_keep_shorter(const ds_graph *g, const ds_run_opts *o,
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

/* The end of a floor's run: with rc DS_OK, plan q (figures fq) made and
 * kept as keep_shorter says; else q freed.  Returns rc. */
int ds_chain_keep_made(const ds_graph *g, const ds_run_opts *o, int rc,
		       ds_plan *out, ds_figures *f, ds_plan *q,
		       const ds_figures *fq)
{
	if (rc == DS_OK)
		ds_chain_keep_shorter(g, o, out, f, q, fq);
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
	ds_run_opts quiet = ds_run_quiet(o);
	if (o->cpe.peak_cap <= 0 || peak_cap < o->cpe.peak_cap)
		quiet.cpe.peak_cap = peak_cap;
	int rc = DS_OK;
	int rounds = ds_run_size(g, o) <= CPE_RETIME_MAX_NODES
			     ? CPE_RETIME_ROUNDS
			     : 0;
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
		ds_chain_keep_shorter(g, o, p, f, &q, &fq);
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
	ds_run_opts quiet = ds_run_quiet(o);
	ds_plan q;
	ds_figures fq;
	int rc = cpe_from(g, o, &bb->prev, dlr, &q, &fq, e);
	if (rc == DS_OK)
		rc = retime(g, &quiet, &q, dlr_ddr, &fq, e);
	if (rc == DS_OK && rounds_peak > 0)
		rc = cpe_retime_rounds(g, &quiet, rounds_peak, dlr_ddr, &q, &fq,
				       e);
	return ds_chain_keep_made(g, o, rc, out, f, &q, &fq);
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
 * floor, 55,957 at 1,152 without, until DLR's packings took rounds;
 * test_pipeline's case: `--nodes 1500 --seed 5` at L1=1536,UB=640).
 * Cost: one more chain where a pull is kept (Conv_Case0's run, pulls
 * and floor together: 0.20 -> about 0.38 s). */
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
	ds_run_opts quiet = ds_run_quiet(o);
	ds_plan q;
	memset(&q, 0, sizeof q);
	ds_figures fq;
	int rc = chain_on(g, &quiet, bb, dlr, df, &q, &fq, NULL, e);
	return ds_chain_keep_made(g, o, rc, out, f, &q, &fq);
}

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
 * none at the default budget.  Up to DS_FLOOR_MAX_NODES nodes, as
 * the other floors. */
static int lean_floor(const ds_graph *g, const ds_run_opts *o,
		      const ds_chain_in *in, const ds_backbone *bb,
		      const ds_plan *dlr, const ds_figures *df, ds_plan *out,
		      ds_figures *f, ds_err *e)
{
	if (o->cpe.traffic_budget_pct <= LEAN_BUDGET_PCT ||
	    ds_run_size(g, o) > DS_FLOOR_MAX_NODES)
		return DS_OK;
	ds_run_opts lean = ds_run_quiet_at(o, LEAN_BUDGET_PCT);
	ds_backbone lb;
	const ds_memo *tm = in->timely;
	int rc = ds_backbone_choose(g, &lean, dlr, df, in->packed, &tm->plan,
				    &tm->fig, &lb, e);
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
int ds_chain(const ds_graph *g, const ds_run_opts *o, const ds_chain_in *in,
	     const ds_plan *dlr, const ds_figures *df, ds_plan *out,
	     ds_figures *f, clock_t *t0, ds_err *e)
{
	ds_backbone bb;
	const ds_memo *tm = in->timely;
	int rc = ds_backbone_choose(g, o, dlr, df, in->packed, &tm->plan,
				    &tm->fig, &bb, e);
	if (rc == DS_OK)
		rc = chain_on(g, o, &bb, dlr, df, out, f, t0, e);
	if (rc == DS_OK)
		rc = lean_floor(g, o, in, &bb, dlr, df, out, f, e);
	if (rc == DS_OK)
		rc = over_floor(g, o, &bb, dlr, df, out, f, e);
	if (rc == DS_OK)
		rc = timely_floor(g, o, &bb, dlr, df, out, f, e);
	if (rc == DS_OK)
		rc = cap_floor(g, o, dlr, df, out, f, e);
	ds_backbone_free(g, &bb);
	return rc;
}
