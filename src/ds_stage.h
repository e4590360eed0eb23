/* ds_stage.h: the planning passes and the pieces they share.
 *
 * Each pass lives in its own file and says there what it requires and what
 * it guarantees.  In order: an order (ds_mpas.c, or a baseline's), then
 * placement and spilling (ds_place.c, ds_dlr.c), then pipeline overlap
 * (ds_cpe.c).  Every plan a pass returns is checked by ds_replay before it
 * is written. */
#ifndef DS_STAGE_H
#define DS_STAGE_H

#include "ds.h"

/* ---- the size a pass's budgets are for ---- */

/* Each pass's opts carry size_nodes: the size of the graph its budgets
 * are for.  0 (or less than g->n): g's own.  A part of a larger graph
 * planned alone (ds_parts.c) is given that graph's n, so that it gets
 * its share of the whole graph's budgets, not a whole graph's: a budget
 * of tries per node divides by ds_size_nodes, a budget of work is cut to
 * ds_work_share, and the size limits (rounds, floors, packing) compare
 * ds_size_nodes. */
static inline int64_t ds_size_nodes(const ds_graph *g, int64_t size_nodes)
{
	int64_t n = g->n > 0 ? g->n : 1;
	return size_nodes > n ? size_nodes : n;
}

/* work times g's share of size_nodes, at least 1. */
static inline int64_t ds_work_share(const ds_graph *g, int64_t size_nodes,
				    int64_t work)
{
	int64_t all = ds_size_nodes(g, size_nodes), n = g->n > 0 ? g->n : 1;
	if (all == n)
		return work;
	int64_t w = (int64_t)((double)work * (double)n / (double)all);
	return w > 1 ? w : 1;
}

/* ---- placement and spilling over a fixed order (ds_place.c) ---- */

enum { DS_FIRST_FIT, DS_BEST_FIT };
enum { DS_VICTIM_FURTHEST, DS_VICTIM_COST, DS_VICTIM_AGED };

typedef struct ds_place_opts {
	int fit;    /* DS_FIRST_FIT or DS_BEST_FIT */
	int victim; /* DS_VICTIM_FURTHEST: furthest next use of the window's
		       nearest victim; DS_VICTIM_COST: least sum of
		       traffic / distance to next use; DS_VICTIM_AGED: of
		       the windows FURTHEST scores at most tie_pct percent
		       worse than its best, the one whose victims were used
		       longest ago, so that their SPILL_OUTs need not wait
		       for a use that has just run */
	int32_t tie_pct; /* DS_VICTIM_AGED's tolerance */
} ds_place_opts;

/* Each buffer's uses along an order, by position: its operations and its
 * FREE (ds_place.c; shared by both placers).  ptr moves forward only, so
 * the positions asked of one buffer must not decrease between rewinds. */
typedef struct ds_uses {
	int32_t *off; /* [nbuf + 1] CSR into pos */
	int32_t *pos;
	int32_t *ptr; /* per buffer: its first use not before the last asked */
} ds_uses;

/* The arrays of u from a (false when one failed), then filled along order
 * (the n graph nodes) and rewound. */
bool ds_uses_init(ds_uses *u, const ds_graph *g, const int32_t *order,
		  ds_arena *a);
void ds_uses_rewind(ds_uses *u, const ds_graph *g);
/* Position of b's next use at or after now (INT32_MAX: none). */
int32_t ds_uses_next(ds_uses *u, int32_t b, int32_t now);
/* Position of b's last use before the position last asked of
 * ds_uses_next, -1 when none. */
int32_t ds_uses_prev(const ds_uses *u, int32_t b);

/* Every operation's buffers fit together in each memory; DS_EINPUT with
 * the node otherwise (such a graph cannot be placed at all). */
int ds_check_fits(const ds_graph *g, ds_err *e);

/* What both placers require: order is a topological order of the n
 * nodes (ds_order_check) and every operation's buffers fit (ds_check_fits);
 * DS_EINPUT naming the problem otherwise. */
int ds_place_check(const ds_graph *g, const int32_t *order, ds_err *e);

/* Places the buffers along order (a topological order of all n nodes,
 * checked: DS_EINPUT otherwise, see ds_order_check) and spills where they
 * do not fit. */
int ds_place(const ds_graph *g, const int32_t *order,
	     const ds_place_opts *o, ds_plan *out, ds_err *e);

/* The same with the spills decided on bytes alone and the addresses
 * after, for all occupancies at once (ds_pack.c), each greedy packing
 * that misses tried again up to rounds times (0: none); *fits false,
 * and no plan, when no packing fits. */
int ds_place_packed(const ds_graph *g, const int32_t *order,
		    const ds_place_opts *o, int32_t rounds, ds_plan *out,
		    bool *fits, ds_err *e);
/* Whether the passes try ds_place_packed on g (a size limit, on
 * ds_size_nodes). */
bool ds_pack_applies(const ds_graph *g, int64_t size_nodes);

/* ---- orders (ds_order.c) ---- */

/* A binary min-heap of nodes keyed by (key, node Id). */
typedef struct ds_heapq {
	const ds_heap *h;
	int64_t *key;
	int32_t *node;
	int32_t n;
} ds_heapq;
int ds_heapq_init(ds_heapq *q, const ds_heap *h, int32_t cap);
void ds_heapq_push(ds_heapq *q, int64_t key, int32_t v);
int32_t ds_heapq_pop(ds_heapq *q);
void ds_heapq_free(ds_heapq *q);

/* Kahn's algorithm: the ready node of least (key(g, ctx, v), Id) runs
 * next.  With gate set, an L0 ALLOC waits while its memory holds a live
 * buffer, unless nothing else can run (then the least held ALLOC runs). */
typedef int64_t (*ds_key_fn)(const ds_graph *g, void *ctx, int32_t v);
int ds_order_kahn(const ds_graph *g, ds_key_fn key, void *ctx, bool gate,
		  int32_t *order, ds_err *e);
/* The benchmark's "original" schedule: the Id order repaired, Kahn
 * taking the least ready Id: 0..n-1 itself when the Ids are a
 * topological order, a topological order whatever they are. */
int ds_order_id(const ds_graph *g, int32_t *order, ds_err *e);
/* The peak_vstay of order (the n graph nodes; a plan placed along it has
 * the same, spill nodes do not count); *one_live (may be NULL): at most
 * one live buffer in each L0 memory all along.  O(N). */
int64_t ds_order_peak(const ds_graph *g, const int32_t *order,
		      bool *one_live);
/* Kahn with FREE first and ALLOC last, L0 one-live gating; Id breaks
 * ties. */
int ds_order_free_first(const ds_graph *g, int32_t *order, ds_err *e);
/* The same with ties broken by rank[] (a permutation of 0..n-1), or by Id
 * when rank is NULL. */
int ds_order_free_first_ranked(const ds_graph *g, const int32_t *rank,
			       int32_t *order, ds_err *e);

/* Plan p's order (spill nodes dropped), except that where a spill of a
 * buffer stands between two of its uses (with direct, only where the
 * later use depends on the earlier one), the later use moves up to right
 * after the earlier one when it can run there, with its ALLOCs, and the
 * FREEs it makes ready follow (ds_pull.c); *moved counts the uses moved.
 * A topological order of the n nodes. */
int ds_order_pull(const ds_graph *g, const ds_plan *p, bool direct,
		  int32_t *order, int32_t *moved, ds_err *e);
/* The pairs of uses plan p's spills separate: for each spilled buffer,
 * in the order of the first SPILL_OUTs, the last operation using it
 * before its first SPILL_OUT (early[k]) and the first after it
 * (late[k]); with later, the same around each SPILL_OUT after a
 * buffer's first, in the plan's order; at most max, *count of them
 * (ds_pull.c).  O(len + nbuf + U), U the uses of the spilled buffers. */
int ds_pull_pairs(const ds_graph *g, const ds_plan *p, bool later,
		  int32_t max, int32_t *early, int32_t *late, int32_t *count,
		  ds_err *e);
/* order[0..n) (a topological order of g's constraints) with node c and
 * those of its ancestors that stand after node a moved up to right after
 * a, in their order, the nodes between keeping theirs after them: a
 * topological order still.  *moved: how many of those ancestors need
 * something themselves (not ALLOCs without predecessors, which
 * ds_order_pull brings along), 0 too when nothing moves (c not after a,
 * or only c's ancestors between them).  O(N + E). */
int ds_order_pull_one(const ds_graph *g, int32_t *order, int32_t a,
		      int32_t c, int32_t *moved, ds_err *e);

/* The baselines' orders (ds_baseline.c): PyTorch Inductor's lpmf with its
 * BFS/DFS fallbacks, HEFT-style critical-path list, OpenVINO NPU's
 * per-executor queues. */
int ds_order_lpmf(const ds_graph *g, int32_t *order, ds_err *e);
int ds_order_cp_list(const ds_graph *g, int32_t *order, ds_err *e);
int ds_order_vpux(const ds_graph *g, int32_t *order, ds_err *e);

/* ---- the structural rank (ds_rank.c) ---- */

/* rank[0..n): a permutation of the nodes, a program order recovered from
 * the graph's structure; the Ids decide only among nodes alike in every
 * structural respect.  Passes break their exact ties by it. */
int ds_structural_rank(const ds_graph *g, int32_t *rank, ds_err *e);

/* A hash of g's structure as order lays it out: each node's kind,
 * operation, pipe, cycles and buffer, its preds and its buffers by their
 * positions in order.  Two graphs with orders that an isomorphism maps
 * onto each other hash alike, whatever their Ids.  pos[0..n) is
 * scratch.  O(N + E). */
uint64_t ds_order_shape(const ds_graph *g, const int32_t *order,
			int32_t *pos);

/* ---- the band order (ds_band.c) ---- */

/* order[0..n): the band order, a program order for graphs without loop
 * structure whose operations use recent values (a window): operations by
 * their position along the long axis of their component (breadth-first
 * sweeps; rev: from the other end; then smooth rounds, each placing a
 * node at the mean place of its neighbours), each after its ancestors, the
 * operations sharing L0 buffers together; rank breaks the ties.  A
 * topological order; the one-live rule holds when the L0 groups need
 * nothing of each other. */
int ds_band_order(const ds_graph *g, const int32_t *rank, bool rev,
		  int smooth, int32_t *order, ds_err *e);

/* order[0..n): the wave order (ds_wave.c), for CPE's backbone: order
 * (topological) with the busiest pipe's first operations right after
 * their producers, their loads and moves just before them. */
int ds_wave_order(const ds_graph *g, const int32_t *order, int32_t *out,
		  ds_err *e);

/* out[0..n): the tail order (ds_tail.c), for CPE's backbone: order
 * (topological) with each rise's tail loads by b-level, the late ones
 * after the next group's first work, consumers whose inputs die at them
 * right after their producers; *changed false (out untouched) when it
 * comes out the same. */
int ds_tail_order(const ds_graph *g, const int32_t *order, int32_t *out,
		  bool *changed, ds_err *e);

/* ---- stage 1, MPAS (ds_mpas.c) ---- */

typedef struct ds_mpas_opts {
	int64_t effort; /* the search budget (greedy runs, local-search
			   moves) in multiples of the default; 0: 1 */
	int64_t size_nodes; /* the graph size the budget is for (above) */
} ds_mpas_opts;

/* A topological order of all n nodes, one live buffer per L0 memory at any
 * time, aiming at the least peak_vstay. */
int ds_mpas(const ds_graph *g, const ds_mpas_opts *o, int32_t *order,
	    ds_err *e);
/* The same, and up to nalt other good orders (by peak, different from
 * order and from each other) into alt[i * n ..], *got of them: the next
 * stage may place each and keep the best.  near (n nodes, or NULL) gets
 * the order the local search's first phase made, which its second
 * (ds_mpas_ls.c) may have bettered: where it differs from order, the
 * next stage weighs both. */
int ds_mpas_alts(const ds_graph *g, const ds_mpas_opts *o, int32_t *order,
		 int32_t *near, int32_t *alt, int nalt, int *got, ds_err *e);

/* ---- stage 2, DLR (ds_dlr.c) ---- */

/* The plans ds_dlr made in one run, by input order and options, bound to
 * one graph (ds_dlr.c): asked again, ds_dlr returns a copy.  The
 * backbone's pulls place the same orders for each chain of a run (CPE's
 * and the budget floor's): on Conv_Case0, 45 of its 105 DLR runs.  It
 * also keeps the latest placements of DLR's candidate orders, which
 * repeat within a run and across runs: on Conv_Case0, 277 of the 627. */
typedef struct ds_dlr_memo ds_dlr_memo;

typedef struct ds_dlr_opts {
	ds_dlr_memo *memo; /* where not NULL and made for the graph, the
			      plans of earlier calls (and placements of
			      earlier candidates) are copied, not made
			      again; the plans are the same either way */
	int64_t effort; /* rounds of the scheduler against the best plan so
			   far (0 or 1: one), and the reuse pilot's budget
			   in multiples of the default; 2 and up also try
			   more models of the chain order and the nested
			   pilot */
	bool lite;	/* a first look, to choose which start orders get a
			   full run: the reuse pilot at a tenth of its
			   budget, no nested pilot, no improvement, no
			   turns, no list scheduler */
	int64_t size_nodes; /* the graph size the budgets are for (above) */
} ds_dlr_opts;

/* From a stage-1 order (a topological order of the n nodes, checked:
 * DS_EINPUT otherwise), a full plan: order with spill nodes, offsets,
 * spills; aiming at the least extra DDR traffic, then spills.  o may be
 * NULL (defaults). */
int ds_dlr(const ds_graph *g, const int32_t *order, const ds_dlr_opts *o,
	   ds_plan *out, ds_err *e);
/* A memo for ds_dlr's calls on g (NULL when out of memory); freed with
 * everything it holds by ds_dlr_memo_free (NULL: nothing).  ds_dlr with a
 * memo fails with DS_ENOMEM where it cannot keep its plan. */
ds_dlr_memo *ds_dlr_memo_new(const ds_graph *g);
void ds_dlr_memo_free(ds_dlr_memo *m);

/* The same order (a topological order of the n nodes, e.g. a DLR plan's
 * without spill nodes) with the accumulators it runs side by side
 * staggered: two lanes half a chain apart at div 1, a quarter at div 2 ...,
 * the lanes' last accumulators started together
 * (ds_dlr_stagger.c): into out[0..n) with *changed true, or *changed
 * false and out[] untouched when there is nothing to stagger (or the lag
 * comes out below one step). */
int ds_dlr_stagger(const ds_graph *g, const int32_t *order, int32_t div,
		   int32_t *out, bool *changed, ds_err *e);

/* The same order with each group of accumulators that run one after
 * another over the same shared inputs reordered so that the one whose
 * result is needed first runs last (ds_dlr_stagger.c, rl_): into
 * out[0..n) with *changed true, or *changed false and out[] untouched. */
int ds_dlr_relay(const ds_graph *g, const int32_t *order, int32_t *out,
		 bool *changed, ds_err *e);

/* ---- stage 3, CPE (ds_cpe.c) ---- */

typedef struct ds_cpe_opts {
	double traffic_budget_pct; /* extra DDR traffic may grow by this
				      share of the input's (default 5) */
	double peak_budget_pct;	   /* peak_vstay likewise (default 0),
				      after rounds within the input's
				      peak, only where that held CPE back */
	int64_t effort;		   /* 0 or 1: up to CPE_DEFAULT_ROUNDS
				      rounds, each while the last one gained
				      CPE_MIN_GAIN_PERMILLE; N > 1: N times
				      as many, each while the last gained */
	int64_t peak_cap;	   /* > 0: the relaxed peak limit is at most
				      this (and at least the input's peak):
				      CPE run again on its own plan keeps
				      its first run's limit; in CPE's
				      stage, the peak budget over DLR's
				      plan's, which the stage's plans are
				      held to (ds_pipeline.c cpe_stage) */
	int64_t size_nodes;	   /* the graph size the budgets are for
				      (above) */
} ds_cpe_opts;

/* Is a plan peaking at peak within peak_cap (a cpe opts' peak_cap: 0 or
 * less, none)?  The pipeline's keep rules, the portfolio's and CPE's
 * peak budget. */
static inline bool ds_within_peak_cap(int64_t peak_cap, int64_t peak)
{
	return peak_cap <= 0 || peak <= peak_cap;
}

/* value plus pct percent of it (a negative pct counts as 0), rounded
 * down: CPE's traffic and peak budgets over its input's figures, and the
 * pipeline's checks against the same peak budget. */
int64_t ds_cpe_budget(int64_t value, double pct);

/* From a full valid plan (stage 2's), a full valid plan with a makespan no
 * longer than the input's, within the traffic and peak budgets; a copy of
 * the input when nothing better is found.  Spills are kept or dropped
 * (where memory lets the buffer stay), never added, so the traffic never
 * grows.  o may be NULL (defaults).  DS_EPLAN when the input
 * plan is invalid (ds_replay checks it, any spill order), DS_EINPUT when
 * it has no offsets.  The spills of the plan returned keep their input
 * numbering (ds_plan_sort_spills puts them in order). */
int ds_cpe(const ds_graph *g, const ds_plan *in, const ds_cpe_opts *o,
	   ds_plan *out, ds_err *e);

/* ---- stage 3b, retiming (ds_retime.c) ---- */

typedef struct ds_retime_opts {
	int64_t effort;	       /* the work budget in multiples of the
				  default; 0: the default */
	int64_t max_extra_ddr; /* extra DDR traffic the plan may reach by
				  added spills; below the input's: none
				  added */
	int64_t size_nodes;    /* the graph size the budgets are for
				  (above) */
} ds_retime_opts;

/* From a full valid plan (CPE's), a full valid plan with the same
 * peak_vstay and a makespan no longer than the input's: offsets and spill
 * nodes moved where the replay's critical chain waits on an address-reuse
 * edge or on a pipe, and spills added (evictions that free a window in
 * time) while the extra DDR traffic stays within max_extra_ddr (never
 * above the input's when that is lower); a copy of the input when nothing
 * better is found.  o may be NULL (defaults: no traffic added).
 * DS_EPLAN when the input plan is invalid, DS_EINPUT when it has no
 * offsets or no nodes. */
int ds_retime(const ds_graph *g, const ds_plan *in, const ds_retime_opts *o,
	      ds_plan *out, ds_err *e);

/* From a full valid plan, the same plan with each memory's offsets placed
 * again by need where that replays shorter (ds_retime.c: the addresses
 * whose last occupants end by the time each occupancy is first needed,
 * in the plan replayed with that memory's reuse edges lifted); a copy of
 * the input when nothing is shorter.  The order, spills, traffic and
 * peak_vstay stay; o may be NULL (only its size_nodes is read).
 * DS_EPLAN when the input plan is invalid, DS_EINPUT when it has no
 * offsets or no nodes. */
int ds_retime_by_need(const ds_graph *g, const ds_plan *in,
		      const ds_retime_opts *o, ds_plan *out, ds_err *e);

/* ---- the tail's spills planned again (ds_replan.c) ---- */

/* From a full plan p that ds_replay accepts, its spill lines sorted, and
 * the finish time of each of its nodes in that replay (fin, indexed by
 * node), a plan whose spills of memory m at p's end are searched again
 * with their times (ds_replan.c's header), its extra DDR traffic at most
 * max_ddr or p's own before the tail: *changed and *out, else *changed
 * false and *out empty (no tail qualifies, the search finds nothing
 * shorter in its model, or its order cannot be completed).  The caller
 * replays *out and keeps it only when it is shorter. */
int ds_replan_tail(const ds_graph *g, const ds_plan *p, const int64_t *fin,
		   int m, int64_t max_ddr, ds_plan *out, bool *changed,
		   ds_err *e);

/* ---- the finished plan's searches (ds_finish.c, ds_window.c) ---- */

/* Replays q and keeps it in *best (figures *fb) when the replay accepts
 * it and it is shorter than *fb, with no more extra DDR traffic than the
 * plan it was made from (figures *from) and a peak_vstay at most
 * max_peak or that plan's: *took; q is taken over or freed either way
 * (ds_finish.c). */
int ds_keep_shorter(const ds_graph *g, ds_plan *q, int64_t max_peak,
		    const ds_figures *from, ds_plan *best, ds_figures *fb,
		    bool *took, ds_err *e);
/* ds_keep_shorter with the traffic limit max_ddr, or *fb's own traffic
 * where that is more (the tail's search and the budget floor keep their
 * plans so; ds_finish.c). */
int ds_keep_within(const ds_graph *g, ds_plan *q, int64_t max_peak,
		   int64_t max_ddr, ds_plan *best, ds_figures *fb, bool *took,
		   ds_err *e);
/* The tail's spills of L1, then of UB, planned again on *out (figures
 * *f; ds_replan_tail) with at most max_ddr bytes of traffic (or *out's
 * own where that is more), each plan kept by ds_keep_shorter
 * (ds_finish.c). */
int ds_replan_floor(const ds_graph *g, int64_t max_peak, int64_t max_ddr,
		    ds_plan *out, ds_figures *f, ds_err *e);

/* Plan *p (offsets set, figures *f) with, for each pair of uses its
 * spills separate (ds_pull_pairs), the later pulled next to the earlier
 * and the window around them spilled and placed again; a result
 * replaces *p and *f by ds_keep_shorter (ds_window.c). */
int ds_window_pulls(const ds_graph *g, ds_plan *p, ds_figures *f,
		    int64_t max_peak, ds_err *e);

#endif
