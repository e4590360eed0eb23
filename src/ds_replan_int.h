/* ds_replan_int.h: the state of a run of ds_replan.c (rp_), shared with
 * ds_replan_plan.c, which builds its plan. */
#ifndef DS_REPLAN_INT_H
#define DS_REPLAN_INT_H

#include "ds_stage.h"

/* The search's breadth: evictions and reloads tried before a step,
 * states kept per traffic figure, and steps a state may run next (the
 * first RP_WINDOW it has not run, in the plan's order, whose
 * predecessors have run).  Measured on Conv_Case0 (`dansched schedule`,
 * 2026-12-05; evictions, reloads, beam, window: makespan; the pass starts
 * from a plan of 405,466 cycles): (2, 1, 8, 1) 401,598, the plan's order
 * kept; (2, 1, 16, 2 to 4), (2, 1, 24, 4) and (2, 1, 32, 6 to 16)
 * 398,410, two stores (COPY_OUT) run before the next chain's first CONV
 * and free their units sooner; (2, 1, 8, 4) none shorter, (2, 1, 12, 4)
 * 404,970 and (2, 1, 16, 6 or 8) 401,690: the beam, ranked by bound,
 * keeps states that later find no units.  A window of 16, a beam of 64
 * and ten times RP_WORK find plans that run two chains at once
 * (396,515) above CPE's peak limit.  The search does not count
 * peak_vstay: that plan (measured again 2026-12-06, (2, 1, 64, 16)
 * with ten times RP_WORK) peaks at 7,824 bytes, above the limit of
 * 7,259, so ds_keep_shorter refuses it and the pass keeps nothing (the
 * pipeline then ends at 401,944); a beam kept per set of steps run as
 * well as per traffic figure does the same (396,124 at 7,824).  Within
 * the limit two or three chains at once gain nothing there
 * (scripts/late_layers.c --peak 9).  Three evictions: 403,522 at (3, 1,
 * 8, 1), from the rollouts alone (first measured before the plan keyed
 * loads to compute steps and moved the loads of small buffers into the
 * tail).  (2, 1, 16, 4) costs about 0.06 s more than (2, 1, 8, 1)
 * there. */
enum { RP_EVICT_K = 2, RP_RELOAD_K = 1, RP_BEAM = 16, RP_WINDOW = 4 };
/* Limits: buffers and units a state holds, steps a tail has, buffers a
 * step may allocate, states a run may add (Conv_Case0 adds about
 * 128,000) and bytes the tail's sets of steps may take (a word per 64
 * steps per line: Conv_Case0's 492 lines and 52 steps take 3,936). */
enum { RP_BUFS = 64, RP_UNITS = 32, RP_STEPS = 1024, RP_ALLOCS = 4 };
#define RP_WORK ((int64_t)400000)
#define RP_REACH ((int64_t)1 << 26)

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
	int64_t base;	   /* where the units start: unit u at base + u q */
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
	uint64_t *spred; /* [ns * nw] the steps each step follows */
	int32_t nw;      /* words of a set of steps */
	uint8_t *active; /* [npc] clocks that bind */
	int64_t ub, budget, origin;
	/* states */
	size_t rec;
	size_t o_clk, o_t, o_free, o_stat, o_pos, o_used, o_done, o_rem;
	size_t keylen; /* the key: stat to done, the padding between included */
	rp_ev *ev;
	int32_t nev, evcap;
	struct rp_rank *rank; /* the beam's scratch */
	int32_t nrank;
	int64_t work;
	bool failed;
	bool quiet; /* a rollout: no events */
	void *roll, *inc; /* a rollout's state; the best rollout's end state */
	int64_t inc_end;  /* its end */
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
	uint8_t *moved;	   /* [n] prefix nodes that join the tail */
	int32_t nmoved;
} rp_emit;

static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Where step si uses buffer x: its index in sbuf (and sdep, salloc), -1
 * when si does not use x. */
static inline int32_t rp_use_at(const rp *r, int32_t si, int32_t x)
{
	for (int32_t k = r->soff[si]; k < r->soff[si + 1]; k++)
		if (r->sbuf[k] == x)
			return k;
	return -1;
}

/* A state: a header then its arrays, in one record of rec bytes. */
typedef struct rp_hdr {
	int32_t hist;
	int32_t next; /* the hash chain */
	int64_t tr;
	uint8_t dead;
} rp_hdr;

/* A state's arrays: the clocks, the buffers' times, the units' free
 * times, per buffer its status, its first unit and whether it was used
 * since it came in, the steps run and the step cycles left per clock. */
static inline int64_t *clk(const rp *r, void *s) { return (int64_t *)((char *)s + r->o_clk); }
/* ready, last and avail of buffer x: t[3x], t[3x+1], t[3x+2] */
static inline int64_t *tim(const rp *r, void *s) { return (int64_t *)((char *)s + r->o_t); }
static inline int64_t *ufree(const rp *r, void *s) { return (int64_t *)((char *)s + r->o_free); }
static inline uint8_t *stat(const rp *r, void *s) { return (uint8_t *)s + r->o_stat; }
static inline int8_t *pos(const rp *r, void *s) { return (int8_t *)s + r->o_pos; }
static inline uint8_t *used(const rp *r, void *s) { return (uint8_t *)s + r->o_used; }
/* the steps run, a bit each */
static inline uint64_t *done(const rp *r, void *s) { return (uint64_t *)((char *)s + r->o_done); }
/* per clock, the cycles of the steps not run */
static inline int64_t *rem(const rp *r, void *s) { return (int64_t *)((char *)s + r->o_rem); }
static inline bool is_done(const rp *r, void *s, int32_t si)
{
	return done(r, s)[si >> 6] >> (si & 63) & 1;
}

/* Buffer x of state s in the units from p on. */
static inline void take_units(const rp *r, void *s, int32_t x, int32_t p)
{
	int64_t *fr = ufree(r, s);
	for (int32_t u = p; u < p + r->w[x]; u++)
		fr[u] = -1;
	pos(r, s)[x] = (int8_t)p;
}

/* The tail and the model (ds_replan_model.c): the unit (0 when memory m
 * has no large spilled buffer); the tail's first line and its units
 * (false when none qualifies, or memory fails: r->a.failed); each
 * node's line; the steps and the model's buffers (false beyond the
 * model's limits); the state at the tail's start into s0 (false when a
 * reload crossing into the tail serves no step). */
int64_t rp_unit(const rp *r);
bool rp_find_tail(rp *r);
int32_t *rp_positions(rp *r);
bool rp_build_steps(rp *r, const int32_t *at);
bool rp_origin(rp *r, const int32_t *at, void *s0);

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
