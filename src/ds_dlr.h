/* ds_dlr.h: the pieces DLR's files share (private to src/ds_dlr*.c).
 *
 *   ds_dlr.c         the driver: the candidate orders, placed and measured
 *   ds_dlr_sched.c   the list schedulers: po_ (stage 1's order re-keyed)
 *                    and ls_ (memory-aware, follows an anchor order)
 *   ds_dlr_chain.c   ch_: the chain simulation, the chain order
 *   ds_dlr_pilot.c   pl_: the reuse pilot and the improvement
 *   ds_dlr_greedy.c  rg_: the pilot's greedy over the chains
 *   ds_dlr_stagger.c sg_: a plan's accumulators staggered, and rl_:
 *                    groups of them relayed (both for CPE's backbone,
 *                    ds_pipeline.c)
 *
 * Each file opens with its contract; the tuning constants sit where they
 * are used, with the measurement that chose them.  "Measured" there means:
 * the constant alone set to half and to double its value, rebuilt, and
 * `dansched schedule data/NAME.json --stage dlr -v` run on the six bundled
 * graphs; the figure is extra_ddr summed over the six (316,264 with the
 * values in the tree; per graph 45,888 5,672 1,280 21,504 11,520 230,400
 * for Conv_Case0/1, FlashAttention_Case0/1, Matmul_Case0/1), and the dlr
 * stage's seconds summed (2.4-2.9 s at the values in the tree on a shared
 * machine: differences under ~0.4 s are noise). */
#ifndef DS_DLR_H
#define DS_DLR_H

#include "ds_stage.h"

/* ---- shared by the schedulers and the chain simulation ---- */

/* A CSR list per node or buffer. */
typedef struct csr {
	int32_t *off, *v;
} csr;

/* Sorts each list of c by pos of its entries (insertion sort: the lists
 * are short, and it is stable). */
void dlr_sort_lists(const int32_t *pos, csr *c, int32_t n);

/* Stage 1's order (pos1: its positions) rebuilt as a topological sort by
 * base_key (NULL: the position in order), ALLOCs lazy and FREEs eager; with
 * pull, an operation that only stages data for one consumer takes that
 * consumer's key.  out[0..n). */
int dlr_po_follow(const ds_graph *g, const int32_t *order, const int32_t *pos1,
	      const int32_t *base_key, bool pull, int32_t *out, ds_err *e);

/* The memory-aware list scheduler: order[0..n), following the anchor
 * positions pos1, with posr (or NULL: LRU) forecasting next uses. */
int dlr_ls_run(const ds_graph *g, const int32_t *pos1, const int32_t *posr,
	   int32_t *order, ds_err *e);

/* ---- the chain simulation (ds_dlr_chain.c) ---- */

/* Is b an accumulator: data made here, three users or more, each user
 * after the first a direct successor of the one before (usr[0..nu): b's
 * users in the order's positions)? */
bool dlr_is_chain(const ds_graph *g, const int32_t *usr, int32_t nu,
		  int32_t b);

/* How dlr_ch_order chooses. */
typedef struct chopts {
	double share; /* the part of each memory the simulation lets the
			 inputs use (a smaller share makes the chains keep
			 less data around, a larger one more) */
	int64_t pilot; /* > 0: the pilot chooses, within this budget */
	int64_t nest;  /* pilot: the budget to judge its own first choices
			  by whole pilots (0: none) */
	const int32_t *ref; /* pilot: the simulation's chain order */
	int64_t ref_ddr;    /* pilot: extra_ddr of its placement */
	int64_t improve;    /* the improvement's budget (work units) */
	int32_t *alt;	    /* pilot: room for two chain orders (nbuf
			       apart), the pilot's and the nested one's,
			       when the one chosen is not theirs */
	int32_t *nalt;	    /* pilot: how many it holds */
	const int32_t *force; /* simulation: this chain order (no pilot) */
	int32_t *ref_out;   /* simulation: its chain order (may be NULL) */
	const int32_t *prefix; /* simulation: these nprefix starts first, */
	int32_t nprefix;       /* then its own choices */
	int32_t *turn_out;  /* simulation: per start i at a turn, the group
			       that keeps the last group's common inputs
			       (2i, 2i + 1; else left as it is) */
} chopts;

/* The chains (accumulators) and their steps, and the step-level
 * simulation over them.  The chains' description (cbuf .. cv) is what the
 * pilot reads too; the rest is the simulation's own. */
typedef struct chsim {
	const ds_graph *g;
	const int32_t *order; /* stage 1's order */
	const int32_t *pos1;  /* its positions */
	const chopts *o;
	ds_arena *a; /* every array below */
	int32_t nch;
	int32_t *cbuf;		/* chain -> its buffer */
	int32_t *soff, *sv;	/* chain -> its steps (users, stage 1 order) */
	int32_t *ioff, *iv;	/* step -> input buffers */
	int32_t *dioff, *div;	/* chain -> its distinct input buffers */
	int32_t *coff, *cv;	/* step -> operations it takes along */
	int64_t ni, ncl, cap_i, cap_c; /* lengths and room of iv, cv */
	/* building */
	int32_t *usr;	 /* users of each buffer, stage 1 order */
	int32_t *isstep; /* per node */
	int32_t *tmp;	 /* per node: a step's operations */
	/* the model */
	uint8_t *res;		/* per buffer: in the model */
	int64_t *last;		/* per buffer: last use tick */
	int32_t *uses;		/* per buffer: steps still reading it */
	int32_t *stamp;		/* per buffer */
	int32_t *claim;		/* per buffer: == cst, running chains read it */
	int32_t *pclaim;	/* per buffer: == pst, the partner tried reads it */
	int32_t st, cst, pst;
	int64_t used[DS_NMEM], cused[DS_NMEM];
	int64_t icap[DS_NMEM]; /* modelled capacity for the inputs */
	int32_t nin;		/* buffers in the model */
	int64_t tick;
	int32_t *reslist, nres; /* buffers put in the model (with repeats) */
	/* the run */
	int32_t *live, *next, nlive; /* running chains, their next steps */
	int32_t done, nstart;
	uint8_t *started;
	int32_t *wnext, *wprev, whead; /* chains not started, stage 1 order */
	const int32_t *forced;	       /* a whole chain order given */
	int32_t *cand, ncand;	       /* the chains that may start now */
	int64_t *ccost, *cmru;	       /* their costs and recency */
	int32_t *prevg, nprev;	       /* the group that just ended */
	int32_t *icnt, *ist, gst;      /* ch_turn's per-buffer counts */
	/* the simulated steps laid over stage 1's places */
	int32_t *key, *anchor, *mark, na, t;
#ifndef NDEBUG
	int32_t *dbg; /* per buffer: ch_check's scratch (zero between) */
	int64_t rounds;
#endif
} chsim;

/* The chain order into out[0..n) (see ds_dlr_chain.c); *any: there are
 * chains (and, for the pilot, an order worth trying). */
int dlr_ch_order(const ds_graph *g, const int32_t *order, const int32_t *pos1,
	     const chopts *o, int32_t *out, bool *any, ds_err *e);

/* ---- the reuse pilot (ds_dlr_pilot.c, ds_dlr_greedy.c) ---- */

/* Choices the pilot tries at a start, at most (the greedy's best unlike
 * ones).  Measured: 2 and 6 both give 317,160 (Matmul_Case0 12,416
 * instead of 11,520), 3 gives 316,264. */
#define PL_K 3
/* The greedy's candidates fully ranked at each start (by completions).
 * Measured: 8 and 32 both give 316,520 (Matmul_Case0 11,776 instead of
 * 11,520), 16 gives 316,264. */
#define PL_TOP 16
/* Complete orders held at once: the incumbent, the one being tried, and
 * the slot the nested pilot keeps (pl_slot) -- a count, not a tuning. */
#define PL_SLOTS 4

/* The pilot's state: the chains' inputs indexed both ways, the layout and
 * the exact evaluation (pl_), the greedy (rg_), and the orders tried. */
typedef struct pilot {
	chsim *c;
	int32_t *cioff, *civ;	/* chain -> its distinct inputs */
	int32_t *siv;		/* step inputs, each step's in the order of
				   the operations reading them (stage 1) */
	int32_t *uoff, *uv;	/* buffer -> chains reading it, those not
				   started first (ds_dlr_greedy.c) */
	int32_t *upos;	/* per civ entry: its chain's place in uv */
	int32_t *ukof;	/* per uv entry: its civ entry */
	int32_t *first;		/* chain -> stage 1 place of its first step */
	int64_t reserve[DS_NMEM]; /* chain buffers' peak bytes per memory */
	/* layout and evaluation */
	int32_t *steps;	/* steps in execution order */
	int32_t *acc, *accs, *nxt; /* accesses: buffer, step serial, next */
	int32_t *nu;	/* per buffer: next use (access index) */
	int32_t *stamp; /* per buffer */
	int32_t st;
	uint8_t *res, *seen;
	int32_t *rl[DS_NMEM], nrl[DS_NMEM]; /* resident buffers */
	int32_t *live, *lnext, nlive;
	int32_t *rpos;	/* per buffer: its place in rl[] */
	int32_t *ins, nins; /* the distinct inputs */
	/* the greedy */
	int64_t *miss;	/* per chain not started: input bytes neither
			   resident nor claimed */
	uint8_t *started;
	uint8_t *have;	/* per buffer: resident or claimed (rg_have) */
	int32_t *bysz;	/* the chains by memory, then chain buffer size */
	int32_t byoff[DS_NMEM + 1]; /* each memory's part of bysz */
	int32_t byat[DS_NMEM];	    /* there, the first not started */
	int32_t *claim; /* per buffer: reads left by running chains */
	int32_t *left;	/* per buffer: chains not started reading it (the
			   first left[b] of its part of uv) */
	int64_t *last;	/* per buffer: last use tick */
	int64_t *red;	/* per chain: scratch for the completion count */
	int32_t *redst, *touch, redstamp;
	int32_t *cand;
	int64_t *cmru, *cben;
	int64_t used[DS_NMEM], cused[DS_NMEM], tick, work;
	int32_t nout, done; /* the greedy run: chains started, ended */
	int variant; /* the greedy's last tie-breaks: bit 0, stage 1 order
			backwards; bit 1, least recent reuse first */
	/* slots of a complete order with its ranked choices at each start */
	int32_t *ord[PL_SLOTS], *rk[PL_SLOTS], *nrk[PL_SLOTS];
	int32_t *pre, *pre2; /* prefixes being tried, per level */
} pilot;

/* The pilot's chain start order into out[0..nch) (ds_dlr_pilot.c). */
int dlr_pl_order(chsim *c, const chopts *o, int32_t *out, bool *useful,
	     ds_err *e);

/* One greedy run (ds_dlr_greedy.c): the chains of forced[0..nf) first, in
 * that order, then the greedy's choices; out[] gets the start order, and
 * for each start i from rank_from on, rank[i * PL_K ..] the best nrank[i]
 * choices there. */
void dlr_rg_run(pilot *p, const int32_t *forced, int32_t nf, int32_t rank_from,
	    int32_t *out, int32_t *rank, int32_t *nrank);

#endif
