/* ds_finish.c: the finished plan's last searches, and the one rule by
 * which their plans are kept (fn_).
 *
 * After CPE and retiming, two searches change a finished plan where it
 * stands: the tail's spills planned again with their times
 * (ds_replan.c), and the uses a spill separates pulled together with
 * the window around them spilled and placed again (ds_window.c).  Both
 * keep a plan by ds_keep_shorter: the replay accepts it (a plan it
 * refuses is dropped, memory failing is reported), it is shorter, its
 * extra DDR traffic is no more than a limit and its peak_vstay at most
 * the peak limit or that plan's.  The tail's traffic limit is the
 * caller's max_ddr (the traffic budget's cap over DLR's figure, at most
 * the parts' traffic for a graph planned by parts, so that a union of
 * graphs keeps its graphs' traffic) or the plan's where that is more;
 * the window's is the plan it came from (the cap there changed no plan
 * of the six graphs at budgets 5, 25 and 100).  So the tail's search
 * spends the budget where an eviction more shortens the end (Conv_Case0
 * at --traffic-budget 10: 394,888 cycles at 43,008 bytes -> 391,424 at
 * 44,544; at 100: 373,245 at 54,528 -> 366,501 at 59,136), where before
 * it kept the plan's traffic.
 *
 * Requires: a valid graph and a plan of it that ds_replay accepts.
 * Guarantees: the plan replaced only by one ds_replay accepts, shorter,
 * with no more traffic than the plan or (the tail) max_ddr, within the
 * peak limit or the old plan's peak.
 * Cost: ds_replan_floor, two copies and replays of the plan and the
 * tail's search per memory (ds_replan.c); ds_keep_shorter, one replay. */
#include "ds_stage.h"

#include <string.h>

int ds_keep_shorter(const ds_graph *g, ds_plan *q, int64_t max_peak,
		    const ds_figures *from, ds_plan *best, ds_figures *fb,
		    bool *took, ds_err *e)
{
	ds_figures fq;
	ds_err local; /* a plan the replay refuses is not kept; memory
		       * failing is reported */
	int vr = ds_replay(g, q, NULL, &fq, &local);
	*took = false;
	if (vr == DS_ENOMEM) {
		ds_plan_free(g->heap, q);
		return ds_fail(e, DS_ENOMEM, "out of memory");
	}
	*took = vr == DS_OK && fq.makespan < fb->makespan &&
		fq.extra_ddr <= from->extra_ddr &&
		(fq.peak_vstay <= max_peak || fq.peak_vstay <= from->peak_vstay);
	ds_plan_keep(g->heap, *took, best, fb, q, &fq);
	return DS_OK;
}

/* Plan p's replay with each node's finish time: *fin (the caller frees
 * it) and *fp. */
static int replay_fin(const ds_graph *g, const ds_plan *p, int64_t **fin,
		      ds_figures *fp, ds_err *e)
{
	*fin = ds_alloc(g->heap, (size_t)p->len + 1, sizeof **fin);
	if (!*fin)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	ds_replay_opts ro = {.finish = *fin};
	return ds_replay(g, p, &ro, fp, e);
}

/* The traffic a plan kept over *f may have: max_ddr, or *f's own where
 * that is more. */
static int64_t ddr_within(const ds_figures *f, int64_t max_ddr)
{
	return f->extra_ddr > max_ddr ? f->extra_ddr : max_ddr;
}

int ds_keep_within(const ds_graph *g, ds_plan *q, int64_t max_peak,
		   int64_t max_ddr, ds_plan *best, ds_figures *fb, bool *took,
		   ds_err *e)
{
	ds_figures from = *fb;
	from.extra_ddr = ddr_within(fb, max_ddr);
	return ds_keep_shorter(g, q, max_peak, &from, best, fb, took, e);
}

/* The tail's spills of memory m planned again (ds_replan.c) from *s,
 * *out with its spill lines sorted, and its finish times fin, with at
 * most max_ddr bytes of traffic or *out's own where that is more; the
 * plan replaces *out (figures *f) by ds_keep_within: *took. */
static int replan_mem(const ds_graph *g, int m, int64_t max_peak,
		      int64_t max_ddr, const ds_plan *s, const int64_t *fin,
		      ds_plan *out, ds_figures *f, bool *took, ds_err *e)
{
	ds_plan q;
	bool changed = false;
	/* the plan's own traffic at least: the parts' plan of a union whose
	 * own DLR plan has less traffic than its parts' may be over the cap */
	int rc = ds_replan_tail(g, s, fin, m, ddr_within(f, max_ddr), &q,
				&changed, e);
	*took = false;
	if (rc == DS_OK && changed)
		rc = ds_keep_within(g, &q, max_peak, max_ddr, out, f, took, e);
	return rc;
}

/* *out's copy with its spill lines sorted (*s) and its finish times
 * (*fin, the caller frees it). */
static int replan_input(const ds_graph *g, const ds_plan *out, ds_plan *s,
			int64_t **fin, ds_err *e)
{
	ds_figures fs;
	int rc = ds_plan_copy(g, out, s, e);
	if (rc == DS_OK)
		rc = ds_plan_sort_spills(g, s, e);
	if (rc == DS_OK)
		rc = replay_fin(g, s, fin, &fs, e);
	return rc;
}

/* Of L1 then of UB (replan_mem); the sorted copy and its replay made
 * again only after a plan is taken. */
int ds_replan_floor(const ds_graph *g, int64_t max_peak, int64_t max_ddr,
		    ds_plan *out, ds_figures *f, ds_err *e)
{
	ds_plan s;
	int64_t *fin = NULL;
	bool took = true;
	int rc = DS_OK;
	memset(&s, 0, sizeof s);
	for (int m = DS_L1; m <= DS_UB && rc == DS_OK; m++) {
		if (took) {
			ds_free(g->heap, fin);
			ds_plan_free(g->heap, &s);
			fin = NULL;
			rc = replan_input(g, out, &s, &fin, e);
		}
		if (rc == DS_OK)
			rc = replan_mem(g, m, max_peak, max_ddr, &s, fin, out,
					f, &took, e);
	}
	ds_free(g->heap, fin);
	ds_plan_free(g->heap, &s);
	return rc;
}
