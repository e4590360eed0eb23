/* ds_mpas_int.h: what the files of MPAS (stage 1) share: the graph as
 * the scheduler sees it (a view, either direction), the greedy variants,
 * and the entry points of the greedy run (ds_mpas_greedy.c) and of the
 * local search (ds_mpas_ls.c).  Private to ds_mpas*.c. */
#ifndef DS_MPAS_INT_H
#define DS_MPAS_INT_H

#include "ds_stage.h"

/* Number of L0 memories, indexed from DS_L0A. */
#define NL0 3

/* ---- the graph as the scheduler sees it ---- */

/* One direction of the graph.  In the reversed view pred and succ swap,
 * and so do ALLOC and FREE. */
typedef struct view {
	int32_t n;
	const int32_t *poff, *pred, *soff, *succ;
	const uint8_t *kind;  /* enum ds_kind in this direction */
	const int64_t *stay;  /* bytes counted in peak_vstay (ALLOC/FREE) */
	const int8_t *l0;     /* 0..NL0-1 for L0 ALLOC/FREE nodes, else -1 */
	const int32_t *mate;  /* ALLOC <-> FREE of the same buffer, else -1 */
	const int32_t *level; /* operations on the longest path from a root */
	const uint8_t *load;  /* an operation preceded by ALLOCs only: never
				 a target of its own (it only adds memory) */
	const int32_t *buf, *uoff, *user; /* the graph's buffers and users */
	const int32_t *useoff, *use;	  /* the graph's operations' buffers */
	const int32_t *balloc, *bfree;	  /* a buffer's ALLOC and FREE here */
	const int32_t *rank; /* breaks exact ties: ds_structural_rank() */
	const int32_t *cpred; /* pred again, per node its ALLOCs (in this
				 direction) last, each part in pred's order:
				 the order a closure visits them */
} view;

/* ---- greedy variants ---- */

enum {
	POL_NET,  /* least net memory, then least rise */
	POL_RISE, /* least rise, then least net */
	POL_PEAK, /* targets that stay under the peak so far first, by
		     prio; the others by least rise */
	POL_RANK  /* the least rank: follows the structural rank as closely
		     as the one-live rule lets it */
};
enum {
	PR_NET,	   /* least net */
	PR_CREDIT  /* most progress on live buffers */
};

typedef struct gparams {
	int8_t dir;   /* 0 forwards, 1 on the reversed graph */
	int8_t pol;
	int8_t prio;  /* POL_PEAK only */
	int32_t kmax; /* closure bound, in nodes */
} gparams;

/* ---- the greedy run (ds_mpas_greedy.c) ---- */

typedef struct run run;

/* Working arrays for greedy runs over n nodes and ne edges, taken from a
 * (once, reused by every run); NULL, with err set, when out of memory. */
run *mpas_gr_new(ds_arena *a, int32_t n, int64_t ne, ds_err *err);
/* One greedy run over view v into out[0..n); *invalid when the one-live
 * rule had to be broken. */
int mpas_gr_run(run *r, const view *v, const gparams *p, int32_t *out,
	   bool *invalid, ds_err *err);

/* ---- the local search (ds_mpas_ls.c) ---- */

typedef struct ls ls;

/* The search applies: ALLOCs have no preds, FREEs no succs. */
bool mpas_ls_applies(const ds_graph *g);
/* The search's arrays for g (forwards view v), taken from a; NULL, with
 * e set, when out of memory. */
ls *mpas_ls_new(ds_arena *a, const ds_graph *g, const view *v, ds_err *e);
/* Improves order (all n nodes) in place with at most `moves` moves
 * (jumps: the second phase, from the first's result, with a share of
 * them); the result is never worse. */
void mpas_ls_run(ls *s, int32_t *order, int64_t moves, bool jumps);

#endif
