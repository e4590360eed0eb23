/* ds_dlr_stage.h: dan's DLR stage, the search over placements that the
 * pipeline runs between MPAS and CPE (ds_dlr_stage.c; the pipeline:
 * ds_pipeline.c). */
#ifndef DS_DLR_STAGE_H
#define DS_DLR_STAGE_H

#include "ds_pipeline.h"
#include "ds_portfolio.h"

/* DLR's starts at most: DLR_STARTS (ds_dlr_stage.c) and MPAS's own order
 * when a baseline's replaced it. */
#define DS_DLR_MAX_STARTS 17

/* A plan a run makes once and asks for again, kept the first time
 * (made) with its figures (dan_run's memos, ds_pipeline.c). */
typedef struct ds_memo {
	bool made;
	ds_plan plan;
	ds_figures fig;
} ds_memo;

/* What the search starts from: the orders to place (starts[0] MPAS's
 * stage's order), MPAS's own order (packed again at the end), the
 * baselines, and the memo of DLR's timely plan, which gets the
 * placements the search drops for their traffic (the one whose replay
 * is the shortest). */
typedef struct ds_dlr_search {
	const int32_t *const *starts;
	int nstart; /* 1 to DS_DLR_MAX_STARTS */
	const int32_t *mpas;
	ds_portfolio *pf;
	ds_memo *timely;
} ds_dlr_search;

/* Is f better than best by the search's rule: less extra_ddr, then fewer
 * spills. */
bool ds_dlr_better(const ds_figures *f, const ds_figures *best);

/* DLR from each start, then again from the orders its plan's spills
 * pull together, from the baselines' orders that place better, and
 * packed (on small graphs all of it from two more starts too): into
 * *out the plan of the least (extra_ddr, spills) found, which
 * ds_replay accepts, and into *fig its replay's figures; *packed
 * when it is a packed placement (CPE's backbone choice reads that).  A
 * start count out of 1 to DS_DLR_MAX_STARTS is refused (DS_EINPUT, *out
 * untouched); on any other failure *out is left empty. */
int ds_dlr_stage_search(const ds_graph *g, const ds_run_opts *o,
			const ds_dlr_search *s, ds_plan *out, ds_figures *fig,
			bool *packed, ds_err *e);

#endif
