/* ds_retime_int.h: what the files of retiming (stage 3b) share: the
 * state of a run (rt), the constants both read, the helpers of the local
 * search (ds_retime.c) that the whole-plan phases use, and the phases'
 * entry points (ds_retime_phase.c).  Private to ds_retime*.c. */
#ifndef DS_RETIME_INT_H
#define DS_RETIME_INT_H

#include "ds_stage.h"

/* Work units (nodes replayed or scanned) one run may spend.  Measured on
 * the six bundled graphs (`schedule -v`): at 6M, Conv_Case1 and
 * Matmul_Case1 spent 0.3 s each and gained nothing; at 1.5M the six runs
 * take about 0.25 s in all on a loaded machine, with the same gains on
 * the small graphs (Conv_Case0 stops on its own at ~1.5M). */
#define RT_WORK 1500000

/* Spills one run may add (each within the traffic cap): Matmul_Case1's
 * cap (5 % over DLR's traffic) has room for 90 reloads of its 128-byte
 * buffers, and the stream moves take all 90 (64 stopped them at 64). */
#define RT_MAX_ADD 96

/* Stream double buffering (move_stream): at least this many occupancies
 * moved per eviction, fewer cannot repay the evicted buffer's reload
 * (Matmul_Case1: 62 cycles saved per occupancy moved, 406 per reload;
 * with 4, 6, 8 and 10 its makespan came to 967,941, 959,873, 957,040 and
 * no gain); failed stream candidates before the stream phase stops; its
 * work budget, taken from RT_WORK (the local search gets what is left:
 * on Matmul_Case1 it gained nothing after the stream phase); stream
 * windows considered per round (L1 holds a few tens of buffers). */
#define RT_STREAM_MIN 8
#define RT_STREAM_FAILS 2
#define RT_STREAM_WORK RT_WORK
#define RT_STREAM_WINDOWS 32

/* The rotation phase's work budget (times the effort): Conv_Case0 at
 * --traffic-budget 25 spends about 120k units in its two rounds; with
 * the whole RT_WORK, Matmul_Case1's one round (a probe per reload its
 * busiest pipe waits for, about 45 replays, none taken) took its retime
 * from 0.06 to 0.16 s. */
#define RT_ROT_WORK 300000

/* The state of one run: the best plan so far (cur) and its replay, the
 * trial plan and its replay, cur's occupancies and spill edges, scratch. */
typedef struct rt {
	const ds_graph *g;
	const ds_heap *h;
	ds_err *e;
	ds_arena a;
	int32_t total;	/* nodes of cur, spill nodes included */
	int32_t tmax;	/* room for: the input's and RT_MAX_ADD spills */
	int32_t smax;
	int64_t max_ddr; /* extra DDR traffic cap */
	int32_t mte2, mte3; /* pipes of SPILL_IN and SPILL_OUT */
	ds_plan cur, trial;
	ds_figures cf, tf;
	int64_t csum, tsum; /* sums of finish times */
	int64_t *start, *fin, *tstart, *tfin;
	int32_t *pos;	/* [total] line of each node in cur */
	int32_t *ppred; /* [total] previous node on the same pipe, -1 */
	/* occupancies of cur: buffer, start and end node */
	int32_t nocc;
	int32_t *oc_buf, *oc_s, *oc_t;
	int32_t *occ_at;  /* [total] occupancy a node starts, -1 */
	int32_t *occ_end; /* [total] occupancy a node ends, -1 */
	int32_t *plast;	  /* [npipes + 2] scratch */
	int32_t *cur_occ; /* [nbuf] scratch */
	/* per memory, occupancies by the line of their end */
	int32_t *bymem, mem_off[DS_NMEM + 1];
	/* spill edges of cur, CSR by destination */
	int32_t *xsrc, *xdst, *xoff, *xadj;
	int64_t nx, xcap;
	uint8_t *tried; /* [total * MV_KINDS] */
	int32_t *chain; /* candidates: node * MV_KINDS + kind */
	int32_t nchain;
	/* window search scratch */
	int32_t *live; /* occupancies beside the one moved */
	int32_t nlive;
	int64_t *plo, *phi, *pready; /* last-occupant profile */
	int32_t *pocc;
	int32_t np;
	int64_t *wof, *wready; /* candidate windows */
	int32_t nw;
	int64_t work, budget, rot_budget;
	/* RT_STREAM_WORK, RT_READY_WORK and RT_NEED_WORK, the graph's
	 * share of them */
	int64_t stream_budget, ready_budget, need_budget;
	/* stream double buffering: the stream, the insertions */
	int32_t *strm;
	int32_t *ins_line, *ins_node;
	int32_t nins;
	int64_t trial_ddr;
	int64_t *pbusy;	    /* [npipes + 2] busy cycles */
	int32_t *wv, *wcnt; /* stream candidates */
	/* rotations: occupancies taken (reloads and victims), the pairs */
	uint8_t *rmark;
	int32_t *rx, *rz; /* [RT_MAX_ADD] reload, victim */
} rt;

/* ---- plans, nodes and occupancies (ds_retime.c) ---- */

void rt_plan_copy(const ds_graph *g, const ds_plan *src, ds_plan *dst);

/* The offset an occupancy starting with node v has in p. */
static inline int64_t *rt_occ_offset(const rt *r, ds_plan *p, int32_t v)
{
	const int32_t n = r->g->n;
	return v < n ? &p->offset[r->g->buf[v]] : &p->spill[(v - n) / 2].offset;
}

static inline int32_t rt_node_pipe(const rt *r, int32_t v)
{
	const int32_t n = r->g->n;
	if (v < n)
		return r->g->pipe[v];
	return (v - n) % 2 ? r->mte2 : r->mte3;
}

static inline int32_t rt_node_buf(const rt *r, int32_t v)
{
	const int32_t n = r->g->n;
	return v < n ? r->g->buf[v] : r->cur.spill[(v - n) / 2].buf;
}

/* Lines doubled, so that a node moved just before line i starts at
 * 2i - 1, between the lines. */
static inline int64_t rt_s2(const rt *r, int32_t o)
{
	return 2 * (int64_t)r->pos[r->oc_s[o]];
}
static inline int64_t rt_t2(const rt *r, int32_t o)
{
	return 2 * (int64_t)r->pos[r->oc_t[o]];
}
static inline int64_t rt_olo(rt *r, int32_t o)
{
	return *rt_occ_offset(r, &r->cur, r->oc_s[o]);
}

/* ---- the replay as judge, cur's state (ds_retime.c) ---- */

/* Replays the trial plan: *ok when it is valid (an error only when out of
 * memory). */
int rt_judge(rt *r, bool *ok);
/* The trial is better than cur: shorter, or as long with a lower sum of
 * finish times; one that adds traffic only when it gains a cycle per
 * RT_BYTES_PER_CYCLE bytes added. */
bool rt_trial_better(const rt *r);
/* The trial becomes cur (cur the next trial). */
void rt_take_trial(rt *r);
/* Judges the trial and, when it is valid and better, takes it and sets
 * *took. */
int rt_trial_keep(rt *r, bool *took);
/* cur's occupancies, pipe predecessors and spill edges, recomputed. */
int rt_refresh(rt *r);
/* The finish of the last use of occupancy oz's buffer before line i, and
 * the line of its first use at or after line i (see ds_retime.c). */
int64_t rt_last_use(const rt *r, int32_t oz, int32_t i);
int32_t rt_next_use(const rt *r, int32_t oz, int32_t i);
/* The line just after the last use of oz's buffer before line i (just
 * after its start when none). */
int32_t rt_after_last_use(const rt *r, int32_t oz, int32_t i);
/* The first of memory m's occupancies by end line (bymem) whose doubled
 * end line is line2 or later; mem_off[m + 1] when none.  O(log N). */
int32_t rt_ending_from(const rt *r, int m, int64_t line2);

/* ---- the whole-plan phases (ds_retime_phase.c) ---- */

/* Stream double buffering, before the local search. */
int rt_stream_phase(rt *r);
/* Addresses by readiness, after it. */
int rt_ready_phase(rt *r);
/* Each memory's addresses placed again by need, each kept when shorter
 * (ds_retime_by_need). */
int rt_need_phase(rt *r);
/* Rotating evictions, after the local search. */
int rt_rotate_phase(rt *r);

#endif
