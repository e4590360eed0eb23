/* ds_replan_int.h: the state of a run of ds_replan.c (rp_), shared with
 * ds_replan_plan.c, which builds its plan. */
#ifndef DS_REPLAN_INT_H
#define DS_REPLAN_INT_H

#include "ds_stage.h"

/* The search's breadth, measured on Conv_Case0 (`dansched schedule`,
 * 2026-12-05; evictions, reloads a step, states kept per traffic figure:
 * makespan): (2, 1, 8) 401,836; (2, 1, 5) and (2, 1, 4) no plan shorter
 * than 405,466; (2, 1, 10) and (2, 1, 12) 403,522; (2, 1, 15), (2, 1, 20)
 * and (2, 2, 8) 401,836, 0.07 to 0.1 s slower; (3, 1, 8) and (3, 2, 8)
 * none: every state lost before the end (the beam keeps states that
 * evict early and later find no units), also at beams of 16 and 32. */
enum { RP_EVICT_K = 2, RP_RELOAD_K = 1, RP_BEAM = 8 };
/* Limits: buffers and units a state holds, steps a tail has, buffers a
 * step may allocate, and states a run may add (Conv_Case0 adds about
 * 60,000). */
enum { RP_BUFS = 64, RP_UNITS = 32, RP_STEPS = 1024, RP_ALLOCS = 4 };
#define RP_WORK ((int64_t)400000)

enum { ST_NONE = 0, ST_RES = 1, ST_DDR = 2 };
enum { EV_ROOT, EV_EVICT, EV_RELOAD, EV_ALLOC, EV_STEP };

typedef struct rp_ev {
	int32_t parent;
	int8_t kind, pos;
	int32_t x; /* buffer (model index) or step */
	int64_t start, fin;
} rp_ev;

typedef struct rp {
	const ds_graph *g;
	const ds_plan *p;
	const int64_t *fin;
	ds_arena a;
	int m, npc;  /* memory; clocks: the graph's pipes and two spill pipes */
	int pin, pout; /* the pipes of SPILL_IN and SPILL_OUT */
	int64_t q, cap;
	int32_t units, a0; /* units; the tail's first line */
	/* the model */
	int32_t ns, nb;
	int32_t *step, *spipe; /* [ns] */
	int64_t *scyc;
	int32_t *buf; /* [nb] buffer index */
	int8_t *w;    /* [nb] units */
	int32_t *uoff, *ustep; /* [nb + 1] CSR: steps using each buffer */
	int32_t *soff, *sbuf;  /* [ns + 1] CSR: each step's buffers */
	uint8_t *sdep, *salloc; /* per (step, buffer): sets ready; allocates */
	int32_t *bi;  /* [nbuf] model index or -1 */
	uint8_t *active; /* [npc] clocks that bind */
	int64_t *rem; /* [npc] step cycles left */
	int64_t ub, budget, origin;
	/* states */
	size_t rec;
	size_t o_clk, o_t, o_free, o_stat, o_pos, o_used;
	rp_ev *ev;
	int32_t nev, evcap;
	struct rp_rank *rank; /* the beam's scratch */
	int32_t nrank;
	int64_t work;
	bool failed;
} rp;

typedef struct rp_emit {
	int32_t total;	   /* nodes of the new plan */
	int32_t K, nl;	   /* prefix lines; all lines */
	ds_spill *sp;	   /* [nl] */
	int64_t *sstart, *sfin; /* [ns] the steps' times */
	int32_t *apos;	   /* [nb] units an allocation took */
	int64_t *key;	   /* [total] */
	uint8_t *cls, *in; /* [total]; in: a node of the tail */
	int32_t *rank;	   /* [total] */
	int32_t *tail, nt; /* the tail's nodes */
	int64_t *off;	   /* [nbuf] the new offsets */
} rp_emit;

static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Node v of a plan with spill lines sp and offsets off, when it starts
 * or ends an occupancy: its buffer, whether it starts one, and where. */
bool rp_occupancy(const ds_graph *g, const ds_spill *sp, const int64_t *off,
		  int32_t v, int32_t *b, int64_t *o, bool *starts);

/* Spill lines whose SPILL_OUT stands before the tail (the first ones,
 * the lines being sorted); at: each node's line. */
int32_t rp_prefix_lines(const rp *r, const int32_t *at);

/* The plan of the search's best end state (its last event best) into
 * *out (ds_replan_plan.c): *changed false when the tail's order cannot
 * be completed; DS_ENOMEM when memory fails. */
int rp_emit_plan(rp *r, int32_t best, const int32_t *at, ds_plan *out,
		 bool *changed, ds_err *e);

#endif
