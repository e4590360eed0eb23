/* ds_cpe.h: CPE's working state, shared by its three files (private).
 *
 *   ds_cpe.c       the pass: its rounds, the working state, the backbone's
 *                  constraint graph, the candidate plans (prefix cpe_)
 *   ds_cpe_list.c  list scheduling: the vstay guard, the forward and
 *                  backward simulations, the priorities (prefix cl_)
 *   ds_cpe_mem.c   memory: occupancies, windows, online placement, dropped
 *                  spills, re-placement (prefix cm_)
 *
 * The address-segment map is the evaluator's (ds_segmap.h). */
#ifndef DS_CPE_H
#define DS_CPE_H

#include "ds_segmap.h"
#include "ds_stage.h"

/* ---- tuning constants ----
 * Measured on the six bundled graphs (the .json files of data/) with
 * `dansched schedule -v` at the default options: ms is the sum of the cpe
 * stages' makespans, s the sum of their seconds (one run each on a shared
 * 2-core machine: s is noisy, +-10%), each value against half and double
 * it, the others unchanged.  With the values below: ms 2316412, s 1.55. */

/* Rounds at most at the default effort (N times as many at effort N).
 * 2: ms 2321077, s 1.25; 8: ms 2316412, s 1.54 (no graph gains enough
 * for a fifth round). */
#define CPE_DEFAULT_ROUNDS 4
/* Another round only after one that gained at least this, per mille of
 * the makespan.  2: ms 2315237, s 1.88; 10: ms 2316412, s 1.39 (the same
 * plans here, faster; not changed by the refactor that measured it).
 * Was 5; 7 since Conv_Case1's wave backbone (ds_wave.c): its second round
 * gains 0.58 % and a third 0.07 % (581,724 against 582,161) for ~0.3 s,
 * the one bundled graph whose figures 5 and 7 tell apart; at 10
 * Matmul_Case1 loses its third round (0.73 % gain: 906,945 against
 * 905,744). */
#define CPE_MIN_GAIN_PERMILLE 7
/* Forward passes per mode and round (the first on backbone priorities,
 * the second on the busiest pipe's needs, then forward-backward).
 * 2: ms 2334921, s 0.95; 6: ms 2316362, s 2.74. */
#define CPE_FB_PASSES 3
/* Candidates tried per decision before only the frontier operation is: a
 * refused candidate stays, and retrying all of them at every decision
 * would cost O(N) each time.  2: ms 2317132, s 1.31; 8: ms 2317461,
 * s 1.88. */
#define CPE_MAX_TRIES 4
/* The rounds with the peak limit relaxed to the budget (ds_cpe) cost up to
 * this many nodes, rounds times the graph's size; a larger graph gets one
 * light round (the online mode's first pass), so that the peak budget is
 * spent on a graph of any size (until 2026-12-07 it got none, and
 * --peak-budget changed nothing above 24,000 nodes).  The light round,
 * default options, against none: Conv_Case1 561,862 -> 561,799 cycles
 * (peak 5,032 -> 5,064), the other five bundled plans the same, their
 * user time 3.27-3.30 s -> 3.28-3.48 s (alternate runs); generated
 * graphs (`gen --seed 1`) of 30,000 and 100,000 nodes, the four kinds:
 * 5 of 8 shorter, none longer (conv 30,000: 799,305 -> 795,143; random
 * 100,000: 1,789,171 -> 1,785,409, traffic 22,128 -> 20,848 bytes); a
 * full relaxed round instead came within 0.12 % of these (attention
 * 30,000: 604,549 against 605,238) for 3 to 5 times the cost.  On 1M
 * nodes the light round takes conv's cpe line of `schedule -v` from
 * 8.6-8.7 s to 9.2-9.4 s (26,044,297 -> 26,026,874 cycles); matmul's run
 * stays within noise (40-48 s; with a full round 47-51 s).  Before it,
 * default options, the six graphs' final makespans and the sum of their
 * schedule -v lines (alternate runs, same minutes, noisy +-0.1 s): 12,000
 * and 24,000 the same plans (Conv_Case0 439,891, FlashAttention_Case0
 * 32,766, Matmul_Case0 93,922, the others as without the phase), sum
 * within noise of no relaxed rounds (6.62 s against 6.62-6.68 s); 48,000
 * also Conv_Case1 604,244 (-0.1%) for +0.3 s; unbounded +0.6 s
 * (Conv_Case1 +0.4, Matmul_Case1 +0.2). */
#define CPE_RELAX_WORK 24000
/* Backbone occupancies still to start that an online placement looks at:
 * beyond, a placement off the backbone's offset is not tried, and one on
 * it waits for the frontier to come closer.  128: ms 2317869, s 1.52;
 * 512: ms 2317198, s 1.62. */
#define CPE_MAX_RESERVED 256
/* The gang mode (ds_cpe.c) runs on graphs of at most this many nodes:
 * run at the default effort on the six bundled graphs, it cost Conv_Case1
 * (36,086 nodes) 11 % more instructions and Matmul_Case1 (30,976) 7 %
 * (callgrind, 2026-12-07), neither plan shorter for it; the generated
 * graphs it shortened have 800 to 5,000 nodes. */
#define CPE_GANG_MAX_NODES 20000

/* edge types: order only, timed, the address-reuse edges of the fixed
 * mode (timed) */
enum { E_ORDER = 0, E_TIMED = 1, E_REUSE = 2 };
enum { K_OP, K_ALLOC, K_FREE, K_SOUT, K_SIN };
/* node states in the list scheduler */
enum { S_WAIT, S_PARKED, S_QUEUED, S_ISSUED };

/* ---- a segment tree: range add, range max over backbone positions ---- */

typedef struct segt {
	int32_t len, size;
	int64_t *mx, *ad;
} segt;

typedef struct cpe {
	ds_arena a; /* every working array */
	const ds_graph *g;
	const ds_heap *h;
	ds_err *e;
	int32_t n, total, nspill;
	int32_t npipes;
	int32_t bneck;	 /* the busiest pipe */
	int32_t *porder; /* the pipes, busiest first */
	/* per node of the plan (spill nodes included) */
	uint8_t *kind;
	int32_t *pipe;
	int64_t *cyc;
	int32_t *nbuf; /* ALLOC, FREE and spill nodes: their buffer */

	/* constraint graph of the backbone, CSR by source and by target */
	bool online; /* offsets chosen while scheduling, no reuse edges */
	bool gang;   /* online, gang mode: see cl_gather_gang */
	bool relax_now; /* placing a gang: windows of the memories that do
			   not stay ignore the backbone's reservations */
	int64_t ne, cape;
	int32_t *es, *ed;
	uint8_t *et;
	int32_t *s_off, *s_adj, *p_off, *p_adj;
	uint8_t *s_typ, *p_typ;
	uint8_t *has_user;  /* ALLOC: some operation follows it */
	const ds_plan *bbp; /* the backbone plan */
	const int32_t *bb;  /* its order */
	int32_t *pos;	    /* position in it */
	int32_t *rank;	    /* list-scheduling priority, 0 = first */
	int64_t *key;	    /* what the rank is made from */

	/* the backbone's occupancies, in order of their start: addresses
	 * [bo_lo, bo_hi) from position bo_s to bo_e; per memory as lists */
	int32_t nbo;
	int64_t *bo_lo, *bo_hi;
	int32_t *bo_s, *bo_e;
	int32_t *occ_of; /* ALLOC/SPILL_IN node: its backbone occupancy */
	int32_t mo_off[DS_NMEM + 1], *mo_list; /* each list ends with -1 */
	int32_t *mo_idx; /* an occupancy's index in its list */
	/* online: which backbone occupancies have started, and a skip
	 * structure over the lists to find those not started yet */
	uint8_t *bo_started;
	int32_t *skip;
	int32_t *bo_fen; /* online: a Fenwick tree over the lists' indices,
			    counting those started (cm_unstarted_until) */
#ifndef NDEBUG
	uint64_t skip_calls; /* cm_next_unstarted's debug check */
	uint64_t fen_calls;  /* cm_unstarted_until's debug check */
#endif
	int64_t *resv; /* scratch: reserved address intervals */

	/* the vstay guard: the backbone's profile (vstay before each
	 * position), as a tree, plus what was issued ahead */
	int64_t *prof;
	segt guard;
	int64_t limit;
	bool guard_on; /* the limit can be reached at all */
	int64_t refused; /* issues the guard refused (ds_cpe: is it worth
			    relaxing the limit?) */
	int32_t front;	/* first backbone position not issued */
	int32_t gfront; /* first backbone operation not issued */

	/* list scheduler */
	uint8_t *state;
	int32_t *npend, *nparked;
	int64_t *avail, *start, *fin;
	int32_t *stack, *tmp;
	/* gang mode: the operations of the gangs placed, issued first on
	 * their pipes (cl_try_committed); the anchor of the gang gathered */
	int32_t *commit, ncommit, gang_w;
	uint8_t *committed;
	ds_heapq *waiting, *ready; /* per pipe: by avail time, by rank */
	int64_t *pfree;		   /* per pipe: when it is free again */
	int32_t *fstack;	   /* reverse pass: nodes ready to go */
	int32_t nfree;
	ds_heapq frees; /* FREEs ready to be issued, by backbone position, so
			   that edge order never matters */
	bool stuck; /* no progress possible (see cl_simulate) */
	int32_t *mark, stamp;
	int32_t *out; /* the order being built */
	int32_t nout;

	/* occupancies of the plan being built */
	ds_segmap sm[DS_NMEM], snap[DS_NMEM];
	int32_t nocc;
	int32_t *cur_occ;    /* per buffer: its current occupancy */
	int64_t *occ_endt;   /* end time, INT64_MAX while live */
	uint64_t endver;     /* bumped at every write of occ_endt */
	/* the free runs of one map (cm_free_runs), all sizes, as they were
	   at its version fr_ver and endver fr_endver (none: fr_map NULL,
	   as cpe_init leaves it) */
	int64_t *fr;
	int32_t nfr;
	const ds_segmap *fr_map;
	uint64_t fr_ver, fr_endver;
	int32_t *occ_end;    /* ending node (reuse edges) */
	int32_t *occ_mark;
	int64_t *vacated;    /* online: when a start's window was vacated */
	int32_t *blocker;    /* online: what kept it off its backbone window */
	int64_t *alt_ver;    /* online: 2 mver (+1 with the reservations
				lifted) when no other window was found */
	int64_t *alt_retry;  /* online: and when more memory gets vacated */
	int64_t mver[DS_NMEM];	/* online: occupancies begun or ended */
	int64_t mlast[DS_NMEM]; /* online: latest end time so far */
	int64_t *off, *soff; /* offsets chosen: per buffer, per spill */
	int64_t *bx;	     /* per buffer: offset of its current occupancy */
	bool elide;	     /* online: spills may be dropped (see cm_can_elide) */
	uint8_t *elided;     /* per spill: dropped in the pass being built */
	/* online: reuse edges of the order built, by source */
	int32_t *x_off, *x_adj, *xe;
	int64_t x_cap, xe_cap;
} cpe;

/* vstay change when v is issued. */
static inline int64_t cpe_dvstay(const cpe *c, int32_t v)
{
	int k = c->kind[v];
	if (k != K_ALLOC && k != K_FREE)
		return 0;
	int32_t b = c->nbuf[v];
	if (!ds_mem_stays(c->g->buf_mem[b]))
		return 0;
	return k == K_ALLOC ? c->g->buf_size[b] : -c->g->buf_size[b];
}

static inline bool cpe_starts_occ(const cpe *c, int32_t v)
{
	return c->kind[v] == K_ALLOC || c->kind[v] == K_SIN;
}

/* Is v a node of a spill dropped in the pass being built? */
static inline bool cpe_is_elided(const cpe *c, int32_t v)
{
	return v >= c->n && c->elided[(v - c->n) / 2];
}

static inline int cpe_oom(cpe *c)
{
	return ds_fail(c->e, DS_ENOMEM, "out of memory");
}

/* The functions the three files share, each described where it is
 * defined. */

/* ---- ds_cpe.c ---- */

int cpe_reserve(cpe *c, void **p, int64_t *cap, int64_t need, size_t elem);
int cpe_add_edge(cpe *c, int32_t s, int32_t d, int typ);

/* ---- ds_cpe_list.c ---- */

void cl_set_rank(cpe *c, const int64_t *key);
int cl_simulate(cpe *c, bool *ok);
void cl_simulate_back(cpe *c);
int cl_need_keys(cpe *c);

/* ---- ds_cpe_mem.c ---- */

int cm_reuse_edges(cpe *c, const ds_plan *p);
void cm_started(cpe *c, int32_t o);
int cm_occupy(cpe *c, int32_t v, int64_t x);
bool cm_bb_window_ok(cpe *c, int32_t v, int64_t t, int64_t *last);
bool cm_can_elide(cpe *c, int32_t v);
int cm_place_now(cpe *c, const int32_t *nodes, int32_t k, int64_t t,
		 bool *ok);
int cm_built_reuse(cpe *c);
int cm_replace(cpe *c, bool *ok);

#endif
