/* ds_pipeline.h: running a scheduler end to end (ds_pipeline.c). */
#ifndef DS_PIPELINE_H
#define DS_PIPELINE_H

#include "ds_stage.h"

enum {
	DS_SCHED_ORIGINAL,   /* node-Id order (repaired, ds_order_id), first
				fit, furthest next use */
	DS_SCHED_FREE_FIRST, /* Kahn FREE first / ALLOC last, best fit */
	DS_SCHED_LPMF,	     /* PyTorch Inductor lpmf (+BFS/DFS), best fit */
	DS_SCHED_CP_LIST,    /* HEFT upward rank, first fit */
	DS_SCHED_VPUX,	     /* OpenVINO NPU per-executor queues, linear scan */
	DS_SCHED_DAN,	     /* the three stages */
	DS_NSCHED
};
extern const char *const ds_sched_names[DS_NSCHED];

enum { DS_STAGE_MPAS = 1, DS_STAGE_DLR = 2, DS_STAGE_CPE = 3 };
extern const char *const ds_stage_names[4];

/* Graphs of at most this many nodes get the rounds of CPE and retiming
 * and the floors (ds_chain.c, CPE_RETIME_MAX_NODES says what chose
 * it), and their parts planned alone however many up to a limit
 * (ds_parts.c). */
#define DS_SMALL_GRAPH_NODES 20000

/* The traffic budgets (percent, rising) along which dan's makespan never
 * rises on graphs of up to 20,000 nodes (ds_pipeline.c: the budget floor
 * and the ladder floor), and at which `dansched tradeoff` plans. */
#define DS_NLADDER 5
extern const double ds_budget_ladder[DS_NLADDER];

typedef struct ds_run_opts {
	int scheduler;
	int stage; /* dan only: the last stage to run */
	ds_mpas_opts mpas;
	ds_dlr_opts dlr;
	ds_cpe_opts cpe;
	ds_retime_opts retime;
	/* the graph size the size-dependent choices are made for (the DLR
	 * starts, CPE's rounds, the floors, packing) and the stages'
	 * budgets are shares of (ds_stage.h, ds_size_nodes): 0, the
	 * graph's own; set with ds_run_opts_size, which gives the stages
	 * the same */
	int64_t size_nodes;
	/* dan only: the graph planned whole, never by its parts (ds_parts.c:
	 * the grouped plan's group, whose parts are planned already) */
	bool whole_only;
	/* a part of a larger graph planned alone (ds_parts.c): its plan's
	 * addresses are placed again by need in the larger graph's plan,
	 * not here (need_floor) */
	bool part;
	/* called after each stage with its time and figures (may be NULL) */
	void (*progress)(void *ud, const char *stage, double seconds,
			 const ds_figures *f);
	void *progress_ud;
} ds_run_opts;

void ds_run_opts_default(ds_run_opts *o);
/* o->size_nodes and each stage's size_nodes set to size_nodes. */
void ds_run_opts_size(ds_run_opts *o, int64_t size_nodes);
/* o without its progress lines (for the runs a stage makes inside). */
ds_run_opts ds_run_quiet(const ds_run_opts *o);

/* Shared with CPE's backbone (ds_backbone.c).  How many orders DLR
 * places (1 on large graphs; the pulls and the tail order run only where
 * it is more), and the traffic cap: the budget over DLR's figure. */
int ds_dlr_starts(const ds_graph *g, const ds_run_opts *o);
int64_t ds_traffic_cap(const ds_run_opts *o, int64_t dlr_ddr);

int ds_run(const ds_graph *g, const ds_run_opts *o, ds_plan *out,
	   ds_figures *fig, ds_err *e);
/* dan (o: the scheduler and stage CPE, else DS_EINPUT) at each budget of
 * ds_budget_ladder, o's own not read: out[i] and fig[i] are the plan and
 * figures ds_run makes at budget i, the stages' shared work made once.
 * On failure every out[i] is empty. */
int ds_run_ladder(const ds_graph *g, const ds_run_opts *o,
		  ds_plan out[DS_NLADDER], ds_figures fig[DS_NLADDER],
		  ds_err *e);

#endif
