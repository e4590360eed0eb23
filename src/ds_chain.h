/* ds_chain.h: CPE's chain (ds_chain.c) and the helpers of the pipeline
 * (ds_pipeline.c) it shares; internal to the two. */
#ifndef DS_CHAIN_H
#define DS_CHAIN_H

#include "ds_backbone.h"
#include "ds_dlr_stage.h"

#include <time.h>

/* The floors (lean, budget, ladder) apply to graphs of at most this
 * many nodes (the limit of the rounds, CPE_RETIME_MAX_NODES in
 * ds_chain.c): at 1M nodes the budget floor would double the cpe line
 * of `schedule -v` (22 s). */
#define DS_FLOOR_MAX_NODES DS_SMALL_GRAPH_NODES

/* What CPE's chain takes from DLR's stage besides its plan: whether
 * that plan is packed (the backbone choice reads it) and DLR's timely
 * plan (ds_dlr_search's memo; not made: no third backbone). */
typedef struct ds_chain_in {
	bool packed;
	const ds_memo *timely;
} ds_chain_in;

/* CPE's chain from DLR's plan dlr (figures *df): the backbone, CPE,
 * retiming and their rounds, then the floors, into *out (figures *f).
 * With t0, the retime line's own time is taken out of *t0's count (NULL:
 * no retime line). */
int ds_chain(const ds_graph *g, const ds_run_opts *o, const ds_chain_in *in,
	     const ds_plan *dlr, const ds_figures *df, ds_plan *out,
	     ds_figures *f, clock_t *t0, ds_err *e);

/* Plan q (figures fq) replaces *out (figures *f) when it is shorter, or
 * as long with less traffic, or as long with as much at a lower peak,
 * the one within o's peak cap first; the other one is freed. */
void ds_chain_keep_shorter(const ds_graph *g, const ds_run_opts *o,
			   ds_plan *out, ds_figures *f, ds_plan *q,
			   const ds_figures *fq);
/* With rc DS_OK, ds_chain_keep_shorter; else q freed.  Returns rc. */
int ds_chain_keep_made(const ds_graph *g, const ds_run_opts *o, int rc,
		       ds_plan *out, ds_figures *f, ds_plan *q,
		       const ds_figures *fq);

/* ds_pipeline.c's: the graph size o's size-dependent choices are made
 * for; the seconds since t0; o without progress lines at traffic budget
 * pct; and p replayed (with the one-live rule where q1), an invalid plan
 * reported as stage's internal error, and the stage's line reported
 * (o->progress) with its time since t0. */
int64_t ds_run_size(const ds_graph *g, const ds_run_opts *o);
double ds_run_seconds(clock_t t0);
ds_run_opts ds_run_quiet_at(const ds_run_opts *o, double pct);
int ds_run_check(const ds_graph *g, const ds_run_opts *o,
		 const char *stage, const ds_plan *p, bool q1, clock_t t0,
		 ds_figures *fig, ds_err *e);

#endif
