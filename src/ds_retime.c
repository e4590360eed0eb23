/* ds_retime.c: stage 3b, retiming the memory plan along the critical chain.
 *
 * Requires: a graph and a full plan for it that ds_replay accepts (order
 * with spill nodes, offsets, spills), e.g. CPE's.
 * Guarantees: a plan that ds_replay accepts, with the input's spills and
 * possibly up to RT_MAX_ADD more, its extra DDR traffic at most
 * max(max_extra_ddr, the input's), the same peak_vstay (ALLOCs and FREEs
 * keep their places), and a makespan no longer than the input's: a copy
 * of the input when nothing better is found.  The same input gives the
 * same bytes out.
 *
 * How: a local search judged by the replay.  Each round replays the best
 * plan so far with start and finish times, walks its critical chain back
 * from the node that finishes last (at each node the predecessor that
 * finished exactly when it started: a graph edge, a spill edge, an
 * address-reuse edge or the node before it on its pipe), and tries, for
 * the nodes on that chain, from the end:
 *  - a reuse edge binds (an occupancy starts when a previous occupant of
 *    its addresses ended): move the new occupancy to another window free
 *    over its whole occupancy, the one whose previous occupants ended
 *    earliest (time-aware first fit: double buffering where memory has
 *    room), or move the previous occupant off these addresses;
 *  - no window is free: evict a resident buffer not used when the
 *    occupancy starts (one more spill, within the traffic cap: the
 *    traffic budget), its last use the earliest, one not used during the
 *    occupancy first (it comes back at its own addresses after it); its
 *    SPILL_OUT just before the occupancy, else right after its last use
 *    (ahead of the stores queued on its pipe: Conv_Case0 439,891 ->
 *    436,519 cycles at the same traffic);
 *  - the pipe binds a spill node (a SPILL_IN queued behind another load,
 *    a SPILL_OUT behind another store): issue it before its pipe
 *    predecessor, a SPILL_IN then at the window free over its longer
 *    occupancy whose previous occupants ended earliest.
 * Before that, a stream phase (move_stream): where the busiest pipe's
 * idle gaps wait for the previous occupant of the same addresses (a
 * single-buffered stream of loads: load, its uses, the next load there),
 * evictions of residents not used for a while lend their addresses to
 * every second load of the stream (double buffering), all the stream's
 * stretches at once, one replay per candidate, within the traffic cap.
 * A candidate is kept when the replay accepts it and it lowers the
 * makespan, or keeps it and lowers the sum of finish times (progress on
 * one of several equally critical chains), one that adds traffic only
 * when it gains at least a cycle per RT_BYTES_PER_CYCLE bytes added; a
 * (node, move) is tried once until a shorter plan is found (which clears
 * the marks); the objective only falls and the work budget bounds the
 * rest, so the search ends.  Last, a readiness phase (ready_phase): the
 * reloads that follow each other on their pipe put in the order their
 * data are first needed, and every occupancy, in the order they start,
 * placed at the window whose previous occupants finished first in the
 * replay (a load waits for the addresses freed earliest, not for ones a
 * late use still holds); one candidate, kept when its replay is shorter.
 *
 * Cost: a round is O(N + E) (the replay, occupancies, spill edges, chain)
 * plus O(R + K^2) per window search (R occupancies of the memory, K those
 * live beside the one moved); a candidate costs one replay.  The work,
 * counted in replayed nodes, is bounded by RT_WORK (times the effort), so
 * a large graph gets a few candidates or none.  A stream round adds
 * O(N + W G + S R) (G idle gaps of the busiest pipe, W <=
 * RT_STREAM_WINDOWS windows, S stretches, R occupancies of the memory),
 * counted in the same budget.  The readiness phase: O(N + E) and one
 * replay, plus O(R (L + I)^2) for the placement (L occupancies live at
 * once, I address ranges last used: a few tens on the bundled graphs) and
 * O(K^2) per run of K reloads, counted in a budget of its own,
 * RT_READY_WORK (a memory whose placement runs out of it keeps its
 * offsets; none on graphs whose scans alone would exceed it).  Memory
 * O(N + E). */
#include "ds_stage.h"

#include <stdlib.h>
#include <string.h>

/* Work units (nodes replayed or scanned) one run may spend.  Measured on
 * the six bundled graphs (`schedule -v`): at 6M, Conv_Case1 and
 * Matmul_Case1 spent 0.3 s each and gained nothing; at 1.5M the six runs
 * take about 0.25 s in all on a loaded machine, with the same gains on
 * the small graphs (Conv_Case0 stops on its own at ~1.5M). */
#define RT_WORK 1500000
/* Windows tried per candidate move, best first. */
#define RT_TRIES 2
/* Occupancies looked back at for the last occupants of a memory: enough
 * to cover L1 on the bundled graphs (a few tens). */
#define RT_PROFILE 256

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

/* A trial that adds traffic must shorten the makespan by at least one
 * cycle per this many bytes added: Matmul_Case0 renumbered (seed 1) took
 * one more reload (+256 bytes, 3.3 % over the original's traffic) for 10
 * cycles.  At 4, FlashAttention_Case0 at --traffic-budget 25 lost an
 * eviction of 256 bytes for 54 cycles (32,712 -> 32,766); at 8 every
 * other retime gain on the six graphs, their renumbered copies (seeds 1,
 * 2) and `dansched tradeoff` on the six is kept. */
#define RT_BYTES_PER_CYCLE 8

/* The readiness phase's own work budget, after the local search has
 * spent RT_WORK: its placement cost Matmul_Case0 1.3M and
 * FlashAttention_Case1 2.0M units (L1's few tens of live tiles and
 * ranges, for each of its windows); 1M left Matmul_Case0 without its
 * gain. */
#define RT_READY_WORK 4000000

enum { MV_REUSE_NEW, MV_REUSE_OLD, MV_EVICT, MV_PIPE, MV_KINDS };

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
	int64_t work, budget;
	/* stream double buffering: the stream, the insertions */
	int32_t *strm;
	int32_t *ins_line, *ins_node;
	int32_t nins;
	int64_t trial_ddr;
	int64_t *pbusy;	    /* [npipes + 2] busy cycles */
	int32_t *wv, *wcnt; /* stream candidates */
} rt;

/* ---- plans ---- */

static int plan_alloc(const rt *r, ds_plan *p)
{
	const ds_graph *g = r->g;
	memset(p, 0, sizeof *p);
	p->order = ds_alloc(g->heap, (size_t)r->tmax, sizeof *p->order);
	p->offset = ds_alloc(g->heap, (size_t)(g->nbuf ? g->nbuf : 1),
			     sizeof *p->offset);
	p->spill = ds_alloc(g->heap, (size_t)r->smax, sizeof *p->spill);
	if (!p->order || !p->offset || !p->spill) {
		ds_plan_free(g->heap, p);
		return DS_ENOMEM;
	}
	return DS_OK;
}

static void plan_copy(const ds_graph *g, const ds_plan *src, ds_plan *dst)
{
	dst->len = src->len;
	dst->nspill = src->nspill;
	memcpy(dst->order, src->order, (size_t)src->len * sizeof *src->order);
	memcpy(dst->offset, src->offset, (size_t)g->nbuf * sizeof *src->offset);
	if (src->nspill > 0)
		memcpy(dst->spill, src->spill,
		       (size_t)src->nspill * sizeof *src->spill);
}

/* The offset an occupancy starting with node v has in p. */
static int64_t *occ_offset(const rt *r, ds_plan *p, int32_t v)
{
	const int32_t n = r->g->n;
	return v < n ? &p->offset[r->g->buf[v]] : &p->spill[(v - n) / 2].offset;
}

static int32_t node_pipe(const rt *r, int32_t v)
{
	const int32_t n = r->g->n;
	if (v < n)
		return r->g->pipe[v];
	return (v - n) % 2 ? r->mte2 : r->mte3;
}

static int32_t node_buf(const rt *r, int32_t v)
{
	const int32_t n = r->g->n;
	return v < n ? r->g->buf[v] : r->cur.spill[(v - n) / 2].buf;
}

/* ---- the replay as judge ---- */

static int64_t sum_fin(const int64_t *fin, int32_t total)
{
	int64_t s = 0;
	for (int32_t v = 0; v < total; v++)
		if (!ds_add(s, fin[v], &s))
			return INT64_MAX;
	return s;
}

/* Replays the trial plan: *ok when it is valid.  A refused candidate is
 * no error: the search only proposes, the replay decides. */
static int judge(rt *r, bool *ok)
{
	ds_replay_opts ro = {.start = r->tstart, .finish = r->tfin};
	ds_err e2;
	r->work += r->trial.len;
	int rc = ds_replay(r->g, &r->trial, &ro, &r->tf, &e2);
	*ok = rc == DS_OK;
	if (rc == DS_ENOMEM)
		return ds_fail(r->e, DS_ENOMEM, "out of memory");
	if (rc == DS_EINPUT) /* overflow of the makespan: not a better plan */
		*ok = false;
	if (*ok)
		r->tsum = sum_fin(r->tfin, r->trial.len);
	return DS_OK;
}

static bool trial_better(const rt *r)
{
	if ((r->cf.makespan - r->tf.makespan) * RT_BYTES_PER_CYCLE <
	    r->tf.extra_ddr - r->cf.extra_ddr)
		return false;
	return r->tf.makespan < r->cf.makespan ||
	       (r->tf.makespan == r->cf.makespan && r->tsum < r->csum);
}

static void take_trial(rt *r)
{
	/* a shorter plan: every move may be worth trying again */
	if (r->tf.makespan < r->cf.makespan)
		memset(r->tried, 0, ((size_t)r->tmax + 1) * MV_KINDS);
	ds_plan p = r->cur;
	r->cur = r->trial;
	r->trial = p;
	int64_t *s = r->start, *f = r->fin;
	r->start = r->tstart, r->fin = r->tfin;
	r->tstart = s, r->tfin = f;
	r->cf = r->tf;
	r->csum = r->tsum;
	r->total = r->cur.len;
}

/* ---- the state of the current plan ---- */

static void scan_order(rt *r)
{
	const ds_graph *g = r->g;
	const int32_t n = g->n;
	int32_t *last = r->plast;
	int32_t np = g->npipes + 2;
	for (int32_t q = 0; q < np; q++)
		last[q] = -1;
	r->nocc = 0;
	for (int32_t i = 0; i < r->total; i++) {
		int32_t v = r->cur.order[i];
		r->pos[v] = i;
		r->occ_at[v] = -1;
		r->occ_end[v] = -1;
		int32_t q = node_pipe(r, v);
		r->ppred[v] = q >= 0 ? last[q] : -1;
		if (q >= 0)
			last[q] = v;
		bool starts = v < n ? g->kind[v] == DS_ALLOC : (v - n) % 2;
		bool ends = v < n ? g->kind[v] == DS_FREE : !((v - n) % 2);
		if (starts) {
			int32_t o = r->nocc++;
			r->oc_buf[o] = node_buf(r, v);
			r->oc_s[o] = v;
			r->oc_t[o] = -1;
			r->occ_at[v] = o;
			r->cur_occ[r->oc_buf[o]] = o;
		} else if (ends) {
			r->oc_t[r->cur_occ[node_buf(r, v)]] = v;
			r->occ_end[v] = r->cur_occ[node_buf(r, v)];
		}
	}
}

/* Occupancies grouped by memory, each group by the line of its end. */
static void group_by_mem(rt *r)
{
	const ds_graph *g = r->g;
	memset(r->mem_off, 0, sizeof r->mem_off);
	for (int32_t o = 0; o < r->nocc; o++)
		r->mem_off[g->buf_mem[r->oc_buf[o]] + 1]++;
	for (int m = 0; m < DS_NMEM; m++)
		r->mem_off[m + 1] += r->mem_off[m];
	int32_t fill[DS_NMEM] = {0};
	/* by end line: walk the order once */
	for (int32_t i = 0; i < r->total; i++) {
		int32_t v = r->cur.order[i];
		bool ends = v < g->n ? g->kind[v] == DS_FREE
				     : !((v - g->n) % 2);
		if (!ends)
			continue;
		int m = g->buf_mem[node_buf(r, v)];
		r->bymem[r->mem_off[m] + fill[m]++] = r->occ_end[v];
	}
}

static int add_x(void *ud, int32_t from, int32_t to, bool timed)
{
	rt *r = ud;
	(void)timed;
	if (r->nx == r->xcap) {
		int64_t nc = r->xcap ? 2 * r->xcap : 1024;
		int32_t *s = ds_arena_grow(&r->a, r->xsrc, (size_t)nc,
					   sizeof *s);
		if (s)
			r->xsrc = s;
		int32_t *d = ds_arena_grow(&r->a, r->xdst, (size_t)nc,
					   sizeof *d);
		if (!s || !d)
			return ds_fail(r->e, DS_ENOMEM, "out of memory");
		r->xdst = d;
		r->xcap = nc;
	}
	r->xsrc[r->nx] = from;
	r->xdst[r->nx] = to;
	r->nx++;
	return DS_OK;
}

/* The spill edges of cur, CSR by destination. */
static int spill_csr(rt *r)
{
	r->nx = 0;
	int rc = ds_spill_edges(r->g, &r->cur, r->pos, false, add_x, r, r->e);
	if (rc)
		return rc;
	r->xadj = ds_arena_grow(&r->a, r->xadj, (size_t)(r->nx ? r->nx : 1),
				sizeof *r->xadj);
	if (!r->xadj)
		return ds_fail(r->e, DS_ENOMEM, "out of memory");
	memset(r->xoff, 0, ((size_t)r->total + 1) * sizeof *r->xoff);
	for (int64_t k = 0; k < r->nx; k++)
		r->xoff[r->xdst[k] + 1]++;
	for (int32_t v = 0; v < r->total; v++)
		r->xoff[v + 1] += r->xoff[v];
	for (int64_t k = 0; k < r->nx; k++)
		r->xadj[r->xoff[r->xdst[k]]++] = r->xsrc[k];
	for (int32_t v = r->total; v > 0; v--)
		r->xoff[v] = r->xoff[v - 1];
	r->xoff[0] = 0;
	return DS_OK;
}

static int refresh(rt *r)
{
	scan_order(r);
	group_by_mem(r);
	r->work += 3 * (int64_t)r->total;
	return spill_csr(r);
}

/* ---- windows ---- */

/* Lines doubled, so that a node moved just before line i starts at
 * 2i - 1, between the lines. */
static int64_t s2(const rt *r, int32_t o)
{
	return 2 * (int64_t)r->pos[r->oc_s[o]];
}
static int64_t t2(const rt *r, int32_t o)
{
	return 2 * (int64_t)r->pos[r->oc_t[o]];
}
static int64_t olo(rt *r, int32_t o)
{
	return *occ_offset(r, &r->cur, r->oc_s[o]);
}
static int64_t ohi(rt *r, int32_t o)
{
	return olo(r, o) + r->g->buf_size[r->oc_buf[o]];
}

static void swap64(int64_t *a, int32_t i)
{
	int64_t t = a[i];
	a[i] = a[i - 1];
	a[i - 1] = t;
}

/* Swaps profile intervals i - 1 and i. */
static void swap_profile(rt *r, int32_t i)
{
	swap64(r->plo, i);
	swap64(r->phi, i);
	swap64(r->pready, i);
	int32_t q = r->pocc[i];
	r->pocc[i] = r->pocc[i - 1];
	r->pocc[i - 1] = q;
}

/* The profile of memory m at line2 over [qlo, qhi): for each address,
 * the finish time of the last occupancy (other than skip) ended before it,
 * as disjoint intervals [plo, phi) with pready and pocc, by address.  At
 * most RT_PROFILE occupancies back: older ones ended long before (an
 * address not covered counts as ready at 0; the replay judges anyway). */
static void profile(rt *r, int m, int64_t line2, int32_t skip, int64_t qlo,
		    int64_t qhi)
{
	int64_t covered = 0;
	r->np = 0;
	int32_t lo = r->mem_off[m], hi = r->mem_off[m + 1];
	/* the last occupancy ended before line2 */
	int32_t a = lo, z = hi;
	while (a < z) {
		int32_t mid = a + (z - a) / 2;
		if (t2(r, r->bymem[mid]) < line2)
			a = mid + 1;
		else
			z = mid;
	}
	for (int32_t k = a - 1, steps = 0;
	     k >= lo && covered < qhi - qlo && steps < RT_PROFILE; k--) {
		int32_t o = r->bymem[k];
		r->work += 1 + r->np;
		steps++;
		if (o == skip)
			continue;
		int64_t x = olo(r, o), y = ohi(r, o);
		x = x < qlo ? qlo : x;
		y = y > qhi ? qhi : y;
		if (x >= y)
			continue;
		int64_t rd = r->fin[r->oc_t[o]];
		/* the parts of [x, y) not yet covered, in address order */
		int32_t np0 = r->np;
		int64_t at = x;
		for (int32_t j = 0; j < np0 && at < y; j++) {
			if (r->phi[j] <= at || r->plo[j] >= y)
				continue;
			if (r->plo[j] > at) {
				r->plo[r->np] = at, r->phi[r->np] = r->plo[j];
				r->pocc[r->np] = o;
				r->pready[r->np++] = rd;
				covered += r->plo[j] - at;
			}
			at = r->phi[j];
		}
		if (at < y) {
			r->plo[r->np] = at, r->phi[r->np] = y;
			r->pocc[r->np] = o;
			r->pready[r->np++] = rd;
			covered += y - at;
		}
		/* keep the intervals by address */
		for (int32_t j = np0; j < r->np; j++)
			for (int32_t i = j; i > 0 && r->plo[i - 1] > r->plo[i];
			     i--)
				swap_profile(r, i);
	}
}

static int64_t ready_at(const rt *r, int64_t off, int64_t size)
{
	int64_t rd = 0;
	for (int32_t j = 0; j < r->np; j++)
		if (r->plo[j] < off + size && off < r->phi[j] &&
		    r->pready[j] > rd)
			rd = r->pready[j];
	return rd;
}

/* The occupancies of memory m live beside [a2, b2) (other than skip). */
static void gather_live(rt *r, int m, int64_t a2, int64_t b2, int32_t skip)
{
	r->nlive = 0;
	for (int32_t k = r->mem_off[m]; k < r->mem_off[m + 1]; k++) {
		int32_t o = r->bymem[k];
		r->work++;
		if (o != skip && s2(r, o) < b2 && a2 < t2(r, o))
			r->live[r->nlive++] = o;
	}
}

static bool window_free(rt *r, int64_t off, int64_t size, int64_t cap,
			int64_t xlo, int64_t xhi)
{
	if (off < 0 || off + size > cap)
		return false;
	if (xlo < off + size && off < xhi)
		return false;
	for (int32_t k = 0; k < r->nlive; k++)
		if (olo(r, r->live[k]) < off + size && off < ohi(r, r->live[k]))
			return false;
	return true;
}

static void add_window(rt *r, int64_t off, int64_t size, int64_t cap,
		       int64_t xlo, int64_t xhi)
{
	for (int32_t k = 0; k < r->nw; k++)
		if (r->wof[k] == off)
			return;
	if (!window_free(r, off, size, cap, xlo, xhi))
		return;
	r->wof[r->nw] = off;
	r->wready[r->nw++] = ready_at(r, off, size);
}

/* The windows for occupancy o of a buffer of size in memory m, over
 * lines [a2, b2), avoiding [xlo, xhi) too, sorted by (ready, offset). */
static void windows(rt *r, int32_t o, int64_t a2, int64_t b2, int64_t xlo,
		    int64_t xhi)
{
	const ds_graph *g = r->g;
	int32_t b = r->oc_buf[o];
	int m = g->buf_mem[b];
	int64_t size = g->buf_size[b], cap = g->caps.cap[m];
	gather_live(r, m, a2, b2, o);
	profile(r, m, a2, o, 0, cap);
	r->nw = 0;
	add_window(r, 0, size, cap, xlo, xhi);
	add_window(r, cap - size, size, cap, xlo, xhi);
	add_window(r, xhi, size, cap, xlo, xhi);
	add_window(r, xlo - size, size, cap, xlo, xhi);
	for (int32_t k = 0; k < r->nlive; k++) {
		add_window(r, ohi(r, r->live[k]), size, cap, xlo, xhi);
		add_window(r, olo(r, r->live[k]) - size, size, cap, xlo, xhi);
	}
	for (int32_t j = 0; j < r->np; j++) {
		add_window(r, r->plo[j], size, cap, xlo, xhi);
		add_window(r, r->phi[j] - size, size, cap, xlo, xhi);
	}
	r->work += (int64_t)r->nw * r->nlive;
	/* insertion sort by (ready, offset): a few tens of windows */
	for (int32_t j = 1; j < r->nw; j++)
		for (int32_t i = j; i > 0 &&
				    (r->wready[i - 1] > r->wready[i] ||
				     (r->wready[i - 1] == r->wready[i] &&
				      r->wof[i - 1] > r->wof[i]));
		     i--) {
			swap64(r->wof, i);
			swap64(r->wready, i);
		}
}

/* ---- moves ---- */

/* Tries occupancy o at each of the best windows found (ready before
 * limit), with the order of r->trial as set by the caller; keeps the
 * first better plan. */
static int try_windows(rt *r, int32_t o, int64_t limit, bool *took)
{
	int tries = 0;
	int64_t keep = *occ_offset(r, &r->trial, r->oc_s[o]);
	for (int32_t k = 0; k < r->nw && tries < RT_TRIES && !*took; k++) {
		if (r->wready[k] >= limit)
			break;
		tries++;
		*occ_offset(r, &r->trial, r->oc_s[o]) = r->wof[k];
		bool ok;
		int rc = judge(r, &ok);
		if (rc)
			return rc;
		if (ok && trial_better(r)) {
			take_trial(r);
			*took = true;
		}
	}
	if (!*took)
		*occ_offset(r, &r->trial, r->oc_s[o]) = keep;
	return DS_OK;
}

/* A reuse edge into v binds: v's occupancy to a window whose previous
 * occupants ended before v started. */
static int move_new(rt *r, int32_t v, bool *took)
{
	int32_t o = r->occ_at[v];
	windows(r, o, s2(r, o), t2(r, o), 0, 0);
	plan_copy(r->g, &r->cur, &r->trial);
	return try_windows(r, o, r->start[v], took);
}

/* The previous occupant u ended (with node u) on v's addresses: move its
 * occupancy off them, to a window ready no later than its own. */
static int move_old(rt *r, int32_t v, int32_t u, bool *took)
{
	int32_t x = r->occ_at[v];
	int32_t o = r->occ_end[u];
	if (o < 0)
		return DS_OK;
	int m = r->g->buf_mem[r->oc_buf[o]];
	profile(r, m, s2(r, o), o, olo(r, o), ohi(r, o));
	int64_t now = ready_at(r, olo(r, o), r->g->buf_size[r->oc_buf[o]]);
	windows(r, o, s2(r, o), t2(r, o), olo(r, x), ohi(r, x));
	plan_copy(r->g, &r->cur, &r->trial);
	return try_windows(r, o, now + 1, took);
}

/* The finish of z's last use before line i within occupancy oz (its
 * start when none). */
static int64_t last_use(const rt *r, int32_t oz, int32_t i)
{
	const ds_graph *g = r->g;
	int32_t b = r->oc_buf[oz];
	int64_t t = r->fin[r->oc_s[oz]];
	for (int32_t k = g->user_off[b]; k < g->user_off[b + 1]; k++) {
		int32_t u = g->user[k];
		if (r->pos[u] > r->pos[r->oc_s[oz]] && r->pos[u] < i &&
		    r->fin[u] > t)
			t = r->fin[u];
	}
	return t;
}

/* The line just after the last use of oz's buffer before line i within
 * occupancy oz (just after its start when none). */
static int32_t after_last_use(const rt *r, int32_t oz, int32_t i)
{
	const ds_graph *g = r->g;
	int32_t b = r->oc_buf[oz];
	int32_t l = r->pos[r->oc_s[oz]];
	for (int32_t k = g->user_off[b]; k < g->user_off[b + 1]; k++) {
		int32_t u = r->pos[g->user[k]];
		if (u > l && u < i)
			l = u;
	}
	return l + 1;
}

/* The line of the first use of oz's buffer at or after line i, or of its
 * end when there is none. */
static int32_t next_use(const rt *r, int32_t oz, int32_t i)
{
	const ds_graph *g = r->g;
	int32_t b = r->oc_buf[oz];
	int32_t q = r->pos[r->oc_t[oz]];
	for (int32_t k = g->user_off[b]; k < g->user_off[b + 1]; k++) {
		int32_t l = r->pos[g->user[k]];
		if (l >= i && l < q)
			q = l;
	}
	return q;
}

/* The plan with one more spill: oz's buffer out just before line i, in
 * again (at offset in) just before line q > i, occupancy x at oz's
 * addresses. */
static void add_spill(rt *r, int32_t oz, int32_t x, int32_t i, int32_t q,
		      int64_t in)
{
	const int32_t n = r->g->n;
	ds_plan *p = &r->trial;
	plan_copy(r->g, &r->cur, p);
	int32_t k = p->nspill++;
	p->spill[k].buf = r->oc_buf[oz];
	p->spill[k].offset = in;
	int32_t *ord = p->order;
	memmove(ord + q + 2, ord + q, (size_t)(p->len - q) * sizeof *ord);
	ord[q + 1] = n + 2 * k + 1;
	memmove(ord + i + 1, ord + i, (size_t)(q - i) * sizeof *ord);
	ord[i] = n + 2 * k;
	p->len += 2;
	*occ_offset(r, p, r->oc_s[x]) = olo(r, oz);
}

/* Evicts oz's buffer for occupancy x (lines i..j): back at its own
 * addresses after x when it is not used before, else just before its
 * next use at the best window beside x's new place; *in < 0: none. */
static void reload_at(rt *r, int32_t oz, int32_t x, int32_t i, int32_t j,
		      int32_t *q, int64_t *in)
{
	int32_t u = next_use(r, oz, i);
	*q = u;
	*in = -1;
	if (u > j) {
		*q = j + 1;
		*in = olo(r, oz);
		return;
	}
	int64_t lo = olo(r, oz), sx = r->g->buf_size[r->oc_buf[x]];
	windows(r, oz, 2 * (int64_t)u - 1, t2(r, oz), lo, lo + sx);
	if (r->nw > 0)
		*in = r->wof[0];
}

/* A reuse edge into v binds and no window is free: evict a resident
 * buffer not used when v's occupancy starts (one whose last use ended
 * earliest, the least traffic on ties), within the traffic cap, and put
 * v's occupancy at its addresses. */
static int move_evict(rt *r, int32_t v, bool *took)
{
	const ds_graph *g = r->g;
	int32_t x = r->occ_at[v];
	int m = g->buf_mem[r->oc_buf[x]];
	int64_t size = g->buf_size[r->oc_buf[x]];
	int32_t i = r->pos[r->oc_s[x]], j = r->pos[r->oc_t[x]];
	if (r->cur.nspill >= r->smax)
		return DS_OK;
	int32_t best[RT_TRIES];
	int64_t bready[RT_TRIES], btraffic[RT_TRIES];
	int nb = 0;
	for (int32_t k = r->mem_off[m]; k < r->mem_off[m + 1]; k++) {
		int32_t oz = r->bymem[k];
		int32_t b = r->oc_buf[oz];
		r->work++;
		if (oz == x || s2(r, oz) >= 2 * (int64_t)i ||
		    t2(r, oz) <= 2 * (int64_t)i || g->buf_size[b] < size)
			continue;
		int64_t tr = ds_spill_traffic(g, b);
		if (r->cf.extra_ddr + tr > r->max_ddr ||
		    next_use(r, oz, i) == i)
			continue;
		int64_t rd = last_use(r, oz, i);
		if (rd >= r->start[v])
			continue;
		/* a buffer not used during x first: it comes back at its own
		 * addresses, no window needed */
		if (next_use(r, oz, i) <= j)
			rd += r->cf.makespan + 1;
		/* keep the RT_TRIES best by (ready, traffic, occupancy) */
		int at = nb < RT_TRIES ? nb++ : RT_TRIES;
		while (at > 0 && (bready[at - 1] > rd ||
				  (bready[at - 1] == rd &&
				   btraffic[at - 1] > tr))) {
			if (at < RT_TRIES) {
				best[at] = best[at - 1];
				bready[at] = bready[at - 1];
				btraffic[at] = btraffic[at - 1];
			}
			at--;
		}
		if (at < RT_TRIES)
			best[at] = oz, bready[at] = rd, btraffic[at] = tr;
	}
	for (int c = 0; c < nb && !*took; c++) {
		int32_t q;
		int64_t in;
		reload_at(r, best[c], x, i, j, &q, &in);
		if (in < 0)
			continue;
		/* out just before x, or as early as it can go: right after
		 * its last use (ahead of the stores queued on its pipe) */
		int32_t early = after_last_use(r, best[c], i);
		for (int w = 0; w < 2 && !*took; w++) {
			if (w == 1 && early >= i)
				break;
			add_spill(r, best[c], x, w ? early : i, q, in);
			bool ok;
			int rc = judge(r, &ok);
			if (rc)
				return rc;
			if (ok && trial_better(r)) {
				take_trial(r);
				*took = true;
			}
		}
	}
	return DS_OK;
}

/* ---- stream double buffering ----
 * A stream: occupancies one after the other at the same addresses, each
 * waiting for the one before to end (a load, its few uses, the next
 * load).  When no window is free, single buffering puts the gap of the
 * uses between every two loads.  The move evicts a resident buffer z not
 * used for a while and lets every second occupancy of the stream use z's
 * addresses meanwhile, z coming back at its own addresses after the last
 * of them: one reload pays for many gaps.  Stretch after stretch, each
 * with the resident whose next use is farthest, within the spill room and
 * the traffic cap; one replay judges all. */

/* The occupancies of memory m at exactly [lo, lo + size), by line. */
static int32_t stream_of(rt *r, int m, int64_t lo, int64_t size)
{
	int32_t ns = 0;
	for (int32_t k = r->mem_off[m]; k < r->mem_off[m + 1]; k++) {
		int32_t o = r->bymem[k];
		r->work++;
		if (olo(r, o) == lo && r->g->buf_size[r->oc_buf[o]] == size)
			r->strm[ns++] = o;
	}
	return ns;
}

/* The resident of memory m to evict at line i for a stretch of the
 * stream at lo (of size bytes) starting at time t: live across line i,
 * unused at i and since before t, not buffer skip, within the traffic
 * left; the one whose next use is farthest (*q its line), then the least
 * traffic, then the lowest offset.  -1: none. */
static int32_t stream_victim(rt *r, int m, int64_t lo, int64_t size,
			     int32_t i, int64_t t, int64_t ddr, int32_t skip,
			     int32_t *q)
{
	const ds_graph *g = r->g;
	int32_t best = -1;
	int64_t btr = 0;
	*q = -1;
	/* by end line: those ended before line i skipped at once */
	int32_t a = r->mem_off[m], z = r->mem_off[m + 1];
	while (a < z) {
		int32_t mid = a + (z - a) / 2;
		if (t2(r, r->bymem[mid]) <= 2 * (int64_t)i)
			a = mid + 1;
		else
			z = mid;
	}
	for (int32_t k = a; k < r->mem_off[m + 1]; k++) {
		int32_t oz = r->bymem[k];
		int32_t b = r->oc_buf[oz];
		r->work++;
		if (s2(r, oz) >= 2 * (int64_t)i ||
		    olo(r, oz) == lo || b == skip || g->buf_size[b] < size)
			continue;
		int64_t tr = ds_spill_traffic(g, b);
		if (ddr + tr > r->max_ddr)
			continue;
		int32_t nu = next_use(r, oz, i);
		if (nu <= i || nu < *q || last_use(r, oz, i) >= t)
			continue;
		if (nu == *q && (tr > btr ||
				 (tr == btr && olo(r, oz) >= olo(r, best))))
			continue;
		best = oz, *q = nu, btr = tr;
	}
	return best;
}

static void stream_insert(rt *r, int32_t line, int32_t node)
{
	r->ins_line[r->nins] = line;
	r->ins_node[r->nins++] = node;
}

/* One stretch from stream element k: the trial plan gets the eviction
 * of a resident and every second element from k at its addresses, while
 * they end before its next use; returns the element after the stretch
 * (k + 1 when none was made). */
static int32_t stream_stretch(rt *r, int32_t ns, int32_t k, int32_t *skip)
{
	const ds_graph *g = r->g;
	const int32_t n = g->n;
	int32_t x = r->strm[k];
	int m = g->buf_mem[r->oc_buf[x]];
	int64_t size = g->buf_size[r->oc_buf[x]], lo = olo(r, x);
	int32_t i = r->pos[r->oc_s[x]], q;
	int32_t z = stream_victim(r, m, lo, size, i, r->start[r->oc_s[x]],
				  r->trial_ddr, *skip, &q);
	if (z < 0)
		return k + 1;
	int32_t e = k, moved = 0;
	for (int32_t j = k; j < ns && t2(r, r->strm[j]) < 2 * (int64_t)q;
	     j += 2)
		e = j, moved++;
	if (moved < RT_STREAM_MIN)
		return k + 1;
	ds_plan *p = &r->trial;
	int32_t sp = p->nspill++;
	p->spill[sp].buf = r->oc_buf[z];
	p->spill[sp].offset = olo(r, z);
	stream_insert(r, i, n + 2 * sp);
	stream_insert(r, r->pos[r->oc_t[r->strm[e]]] + 1, n + 2 * sp + 1);
	for (int32_t j = k; j <= e; j += 2)
		*occ_offset(r, p, r->oc_s[r->strm[j]]) = olo(r, z);
	r->trial_ddr += ds_spill_traffic(g, r->oc_buf[z]);
	*skip = r->oc_buf[z];
	return e + 1;
}

/* Rebuilds trial's order: cur's with the insertions (by line). */
static void stream_order(rt *r)
{
	int32_t *ord = r->trial.order, w = 0, k = 0;
	for (int32_t i = 0; i < r->cur.len; i++) {
		while (k < r->nins && r->ins_line[k] == i)
			ord[w++] = r->ins_node[k++];
		ord[w++] = r->cur.order[i];
	}
	while (k < r->nins)
		ord[w++] = r->ins_node[k++];
	r->trial.len = w;
}

/* Double-buffers the stream through v's addresses (v starts an
 * occupancy bound by a reuse edge). */
static int move_stream(rt *r, int32_t v, bool *took)
{
	int32_t x = r->occ_at[v];
	int m = r->g->buf_mem[r->oc_buf[x]];
	int32_t ns = stream_of(r, m, olo(r, x),
			       r->g->buf_size[r->oc_buf[x]]);
	if (ns < 2 * RT_STREAM_MIN)
		return DS_OK;
	plan_copy(r->g, &r->cur, &r->trial);
	r->trial_ddr = r->cf.extra_ddr;
	int32_t skip = -1;
	for (int32_t k = 0; k < ns && r->trial.nspill < r->smax;)
		k = stream_stretch(r, ns, k, &skip);
	if (r->nins == 0)
		return DS_OK;
	stream_order(r);
	bool ok;
	int rc = judge(r, &ok);
	if (rc == DS_OK && ok && trial_better(r)) {
		take_trial(r);
		*took = true;
	}
	return rc;
}

/* Moves the node at line i to line j < i in trial's order. */
static void hoist(rt *r, int32_t i, int32_t j)
{
	int32_t *ord = r->trial.order;
	int32_t v = ord[i];
	memmove(ord + j + 1, ord + j, (size_t)(i - j) * sizeof *ord);
	ord[j] = v;
}

/* The pipe binds spill node v: issue it before its pipe predecessor; a
 * SPILL_IN at the best window over its longer occupancy. */
static int move_pipe(rt *r, int32_t v, bool *took)
{
	int32_t w = r->ppred[v];
	if (w < 0)
		return DS_OK;
	plan_copy(r->g, &r->cur, &r->trial);
	hoist(r, r->pos[v], r->pos[w]);
	int32_t o = r->occ_at[v];
	if (o < 0) {
		bool ok;
		int rc = judge(r, &ok);
		if (rc == DS_OK && ok && trial_better(r)) {
			take_trial(r);
			*took = true;
		}
		return rc;
	}
	windows(r, o, 2 * (int64_t)r->pos[w] - 1, t2(r, o), 0, 0);
	return try_windows(r, o, INT64_MAX, took);
}

/* ---- the critical chain ---- */

static void push(rt *r, int32_t v, int kind)
{
	size_t k = (size_t)v * MV_KINDS + (size_t)kind;
	if (!r->tried[k])
		r->chain[r->nchain++] = (int32_t)k;
}

/* The occupancy started by v: the previous occupant whose end finished
 * exactly at t, or -1. */
static int32_t reuse_pred(rt *r, int32_t v, int64_t t)
{
	int32_t o = r->occ_at[v];
	int64_t lo = olo(r, o), hi = ohi(r, o);
	profile(r, r->g->buf_mem[r->oc_buf[o]], s2(r, o), o, lo, hi);
	for (int32_t j = 0; j < r->np; j++)
		if (r->plo[j] < hi && lo < r->phi[j] && r->pready[j] == t)
			return r->oc_t[r->pocc[j]];
	return -1;
}

/* The critical chain from the node that finishes last, the moves to try
 * on it in r->chain, latest first; *reuse_src[k] for reuse moves. */
static void walk_chain(rt *r, int32_t *usrc)
{
	const ds_graph *g = r->g;
	const int32_t n = g->n;
	int32_t v = r->cur.order[0];
	for (int32_t i = 0; i < r->total; i++)
		if (r->fin[r->cur.order[i]] > r->fin[v])
			v = r->cur.order[i];
	r->nchain = 0;
	for (int32_t steps = 0; v >= 0 && r->start[v] > 0 && steps < r->total;
	     steps++) {
		int64_t s = r->start[v];
		int32_t next = -1;
		if (v < n)
			for (int32_t k = g->epred_off[v];
			     k < g->epred_off[v + 1] && next < 0; k++)
				if (r->fin[g->epred[k]] == s)
					next = g->epred[k];
		for (int32_t k = r->xoff[v]; k < r->xoff[v + 1] && next < 0;
		     k++)
			if (r->fin[r->xadj[k]] == s)
				next = r->xadj[k];
		if (next < 0 && r->occ_at[v] >= 0) {
			int32_t u = reuse_pred(r, v, s);
			if (u >= 0) {
				usrc[r->nchain] = u;
				push(r, v, MV_REUSE_NEW);
				usrc[r->nchain] = u;
				push(r, v, MV_REUSE_OLD);
				push(r, v, MV_EVICT);
				next = u;
			}
		}
		int32_t w = r->ppred[v];
		if (next < 0 && w >= 0 && r->fin[w] == s) {
			if (v >= n)
				push(r, v, MV_PIPE);
			next = w;
		}
		r->work += 8;
		v = next;
	}
}

static int try_move(rt *r, int32_t v, int kind, int32_t u, bool *took)
{
	switch (kind) {
	case MV_REUSE_NEW:
		return move_new(r, v, took);
	case MV_REUSE_OLD:
		return move_old(r, v, u, took);
	case MV_EVICT:
		return move_evict(r, v, took);
	default:
		return move_pipe(r, v, took);
	}
}

/* One round: the first better plan among the chain's moves, those that
 * add no traffic first. */
static int round_once(rt *r, int32_t *usrc, bool *took)
{
	int rc = refresh(r);
	if (rc)
		return rc;
	walk_chain(r, usrc);
	*took = false;
	for (int pass = 0; pass < 2; pass++)
		for (int32_t c = 0; c < r->nchain && !*took && rc == DS_OK &&
				    r->work < r->budget;
		     c++) {
			int32_t k = r->chain[c];
			int kind = k % MV_KINDS;
			if (r->tried[k] || (kind == MV_EVICT) != (pass == 1))
				continue;
			r->tried[k] = 1;
			rc = try_move(r, k / MV_KINDS, kind, usrc[c], took);
		}
	return rc;
}

/* The node whose start an idle gap of pipe q before node u waits for,
 * when it starts an occupancy: u itself (a SPILL_IN) or the ALLOC of a
 * buffer u uses (a load into a fresh buffer; the earliest in the order
 * on ties, whatever the edge order); -1 when neither. */
static int32_t gap_occ_node(const rt *r, int32_t u)
{
	const ds_graph *g = r->g;
	if (r->occ_at[u] >= 0)
		return u;
	if (u >= g->n)
		return -1;
	int32_t best = -1;
	for (int32_t k = g->epred_off[u]; k < g->epred_off[u + 1]; k++) {
		int32_t a = g->epred[k];
		if (r->occ_at[a] >= 0 && r->fin[a] == r->start[u] &&
		    (best < 0 || r->pos[a] < r->pos[best]))
			best = a;
	}
	return best;
}

/* The busiest pipe of cur (most busy cycles; the lowest on ties). */
static int32_t busiest_pipe(rt *r)
{
	int32_t np = r->g->npipes + 2, best = 0;
	for (int32_t q = 0; q < np; q++)
		r->pbusy[q] = 0;
	for (int32_t i = 0; i < r->total; i++) {
		int32_t v = r->cur.order[i], q = node_pipe(r, v);
		if (q >= 0)
			r->pbusy[q] += r->fin[v] - r->start[v];
	}
	for (int32_t q = 1; q < np; q++)
		if (r->pbusy[q] > r->pbusy[best])
			best = q;
	r->work += r->total;
	return best;
}

/* The stream candidates: the windows whose occupancies the busiest
 * pipe's idle gaps wait for (at most RT_STREAM_WINDOWS, the first seen),
 * in r->wv (a node starting one of their occupancies), the most gaps
 * first. */
static int32_t stream_candidates(rt *r)
{
	int32_t q = busiest_pipe(r), nw = 0;
	for (int32_t i = 0; i < r->total; i++) {
		int32_t u = r->cur.order[i];
		if (node_pipe(r, u) != q || r->ppred[u] < 0 ||
		    r->start[u] <= r->fin[r->ppred[u]])
			continue;
		int32_t v = gap_occ_node(r, u);
		if (v < 0)
			continue;
		int32_t o = r->occ_at[v], b = r->oc_buf[o], k = 0;
		int m = r->g->buf_mem[b];
		for (; k < nw; k++) {
			int32_t x = r->occ_at[r->wv[k]];
			r->work++;
			if (r->g->buf_mem[r->oc_buf[x]] == m &&
			    olo(r, x) == olo(r, o) &&
			    r->g->buf_size[r->oc_buf[x]] == r->g->buf_size[b])
				break;
		}
		if (k == nw) {
			if (nw == RT_STREAM_WINDOWS)
				continue;
			r->wv[nw] = v, r->wcnt[nw++] = 0;
		}
		r->wcnt[k]++;
	}
	/* insertion sort, the most gaps first: a few tens */
	for (int32_t j = 1; j < nw; j++)
		for (int32_t i = j; i > 0 && r->wcnt[i - 1] < r->wcnt[i]; i--) {
			int32_t t = r->wv[i];
			r->wv[i] = r->wv[i - 1], r->wv[i - 1] = t;
			t = r->wcnt[i];
			r->wcnt[i] = r->wcnt[i - 1], r->wcnt[i - 1] = t;
		}
	return nw;
}

/* The stream phase, before the local search: stream moves on the windows
 * the busiest pipe waits for, while the work budget lasts (what it spends
 * the local search does not get), until RT_STREAM_FAILS candidates
 * fail or none is left. */
static int stream_phase(rt *r)
{
	int64_t w0 = r->work;
	int fails = 0;
	bool took = true;
	int rc = DS_OK;
	while (rc == DS_OK && took && fails < RT_STREAM_FAILS &&
	       r->work - w0 + 5 * (int64_t)r->total < RT_STREAM_WORK) {
		rc = refresh(r);
		if (rc)
			break;
		int32_t nw = stream_candidates(r);
		took = false;
		for (int32_t c = 0; c < nw && !took && rc == DS_OK &&
				    fails < RT_STREAM_FAILS &&
				    r->work - w0 < RT_STREAM_WORK;
		     c++) {
			if (r->wcnt[c] < 2 * RT_STREAM_MIN)
				break;
			r->nins = 0; /* move_stream's insertions: a candidate */
			rc = move_stream(r, r->wv[c], &took);
			if (!took && r->nins > 0)
				fails++;
		}
	}
	return rc;
}

/* ---- addresses by readiness ---- */

/* Scratch of the readiness phase: the new offsets, the live occupancies,
 * the finish of the last occupant ended on each address range (disjoint
 * ranges), a run of reloads (lines, then nodes) and their keys. */
typedef struct rdy {
	int64_t *off;
	int32_t *live, nlive;
	int64_t *lo, *hi, *at;
	int32_t ni;
	int32_t *run;
	int64_t *key;
} rdy;

/* The range [x, y) was last used by an occupancy finishing at f. */
static void rdy_paint(rdy *d, int64_t x, int64_t y, int64_t f)
{
	int32_t k = 0;
	int64_t rb = -1, rt = 0; /* the right part of a range split in two */
	for (int32_t j = 0; j < d->ni; j++) {
		int64_t a = d->lo[j], b = d->hi[j], t = d->at[j];
		if (b <= x || a >= y) {
			d->lo[k] = a, d->hi[k] = b, d->at[k++] = t;
			continue;
		}
		if (a < x)
			d->lo[k] = a, d->hi[k] = x, d->at[k++] = t;
		if (b > y)
			rb = b, rt = t;
	}
	d->ni = k;
	d->lo[d->ni] = x, d->hi[d->ni] = y, d->at[d->ni++] = f;
	if (rb > y)
		d->lo[d->ni] = y, d->hi[d->ni] = rb, d->at[d->ni++] = rt;
}

/* When [x, x + size) is ready, or -1 when a live occupancy holds part of
 * it or it leaves the memory. */
static int64_t rdy_window(rt *r, const rdy *d, int64_t x, int64_t size,
			  int64_t cap)
{
	if (x < 0 || x + size > cap)
		return -1;
	r->work += d->nlive + d->ni;
	for (int32_t k = 0; k < d->nlive; k++) {
		int32_t p = d->live[k];
		if (d->off[p] < x + size &&
		    x < d->off[p] + r->g->buf_size[r->oc_buf[p]])
			return -1;
	}
	int64_t t = 0;
	for (int32_t j = 0; j < d->ni; j++)
		if (d->lo[j] < x + size && x < d->hi[j] && d->at[j] > t)
			t = d->at[j];
	return t;
}

/* Occupancy o at the window ready first (the lowest on ties) among those
 * at the memory's ends, beside a live occupancy or at a range's ends;
 * false when none is free. */
static bool rdy_place(rt *r, rdy *d, int32_t o, int64_t cap)
{
	int64_t size = r->g->buf_size[r->oc_buf[o]];
	int64_t best = -1, bt = INT64_MAX;
	int32_t nc = 2 + 2 * (d->nlive + d->ni);
	for (int32_t c = 0; c < nc; c++) {
		int64_t x;
		if (c < 2) {
			x = c ? cap - size : 0;
		} else if (c - 2 < 2 * d->nlive) {
			int32_t p = d->live[(c - 2) / 2];
			x = c % 2 ? d->off[p] - size
				  : d->off[p] + r->g->buf_size[r->oc_buf[p]];
		} else {
			int32_t j = (c - 2 - 2 * d->nlive) / 2;
			x = c % 2 ? d->hi[j] - size : d->lo[j];
		}
		int64_t t = rdy_window(r, d, x, size, cap);
		if (t >= 0 && (t < bt || (t == bt && x < best)))
			best = x, bt = t;
	}
	if (best < 0)
		return false;
	d->off[o] = best;
	d->live[d->nlive++] = o;
	return true;
}

/* Every occupancy of memory m, in the order they start (cur's), at the
 * window whose previous occupants finished first in the replay of the
 * plan the phase started from: a load then waits for the addresses freed
 * earliest, not for ones a late use still holds.  False when some finds
 * no window or the work budget runs out (the old offsets stay). */
static bool rdy_memory(rt *r, rdy *d, int m)
{
	const ds_graph *g = r->g;
	const int64_t cap = g->caps.cap[m];
	d->nlive = 0;
	d->ni = 0;
	for (int32_t i = 0; i < r->total && r->work < r->budget; i++) {
		int32_t v = r->cur.order[i];
		int32_t o = r->occ_end[v];
		if (o >= 0 && g->buf_mem[r->oc_buf[o]] == m) {
			int32_t k = 0;
			while (d->live[k] != o)
				k++;
			d->live[k] = d->live[--d->nlive];
			rdy_paint(d, d->off[o],
				  d->off[o] + g->buf_size[r->oc_buf[o]],
				  r->fin[v]);
		}
		o = r->occ_at[v];
		if (o >= 0 && g->buf_mem[r->oc_buf[o]] == m &&
		    !rdy_place(r, d, o, cap))
			return false;
	}
	return r->work < r->budget;
}

/* When reload v is first needed: the start of the first use of its
 * buffer after it (INT64_MAX when none); *line: that use's line. */
static int64_t rdy_need(rt *r, int32_t v, int32_t *line)
{
	const ds_graph *g = r->g;
	int32_t b = node_buf(r, v);
	int64_t t = INT64_MAX;
	*line = r->total;
	r->work += g->user_off[b + 1] - g->user_off[b];
	for (int32_t k = g->user_off[b]; k < g->user_off[b + 1]; k++) {
		int32_t u = g->user[k];
		if (r->pos[u] > r->pos[v] && r->pos[u] < *line)
			*line = r->pos[u], t = r->start[u];
	}
	return t;
}

static bool is_reload(const rt *r, int32_t v)
{
	return v >= r->g->n && (v - r->g->n) % 2;
}

/* The run of reloads starting at line i: the lines (d->run[0..k)) of
 * the reloads that follow each other on their pipe, into one memory and
 * of one size. */
static int32_t rdy_run(rt *r, rdy *d, int32_t i)
{
	const ds_graph *g = r->g;
	int32_t v = r->cur.order[i], b = node_buf(r, v), k = 0;
	for (int32_t j = i; j < r->total; j++) {
		int32_t x = r->cur.order[j];
		if (node_pipe(r, x) != node_pipe(r, v))
			continue;
		if (!is_reload(r, x) ||
		    g->buf_mem[node_buf(r, x)] != g->buf_mem[b] ||
		    g->buf_size[node_buf(r, x)] != g->buf_size[b])
			break;
		d->run[k++] = j;
	}
	return k;
}

/* The run's k reloads sorted by (need, line) over its lines in trial's
 * order, unless one would leave the lines between its SPILL_OUT and its
 * first use; true when the order changed. */
static bool rdy_sort_run(rt *r, rdy *d, int32_t k)
{
	int32_t *nodes = d->run + k;
	for (int32_t a = 0; a < k; a++) {
		int32_t ln;
		nodes[a] = r->cur.order[d->run[a]];
		d->key[a] = rdy_need(r, nodes[a], &ln);
	}
	r->work += (int64_t)k * k;
	for (int32_t a = 1; a < k; a++)
		for (int32_t c = a; c > 0 && d->key[c - 1] > d->key[c]; c--) {
			int64_t t = d->key[c];
			d->key[c] = d->key[c - 1], d->key[c - 1] = t;
			int32_t y = nodes[c];
			nodes[c] = nodes[c - 1], nodes[c - 1] = y;
		}
	bool diff = false;
	for (int32_t a = 0; a < k; a++) {
		int32_t x = nodes[a], ln;
		rdy_need(r, x, &ln);
		if (r->pos[x - 1] >= d->run[a] || d->run[a] >= ln)
			return false;
		diff |= x != r->cur.order[d->run[a]];
	}
	for (int32_t a = 0; diff && a < k; a++)
		r->trial.order[d->run[a]] = nodes[a];
	return diff;
}

/* trial: cur with every run of reloads in need order; true when some
 * run changed. */
static bool rdy_sort_runs(rt *r, rdy *d)
{
	bool changed = false;
	for (int32_t i = 0; i < r->total;) {
		if (!is_reload(r, r->cur.order[i])) {
			i++;
			continue;
		}
		int32_t k = rdy_run(r, d, i);
		changed |= rdy_sort_run(r, d, k);
		i = d->run[k - 1] + 1;
	}
	return changed;
}

/* Swaps cur and trial (same length: only the order of reloads differs),
 * cur's state recomputed. */
static int rdy_swap(rt *r)
{
	ds_plan t = r->cur;
	r->cur = r->trial;
	r->trial = t;
	return refresh(r);
}

/* The offsets of every memory placed by rdy_memory into p (whose
 * occupancies are cur's); true when one moved. */
static bool rdy_offsets(rt *r, rdy *d, ds_plan *p)
{
	bool moved = false;
	for (int m = 0; m < DS_NMEM; m++) {
		if (!rdy_memory(r, d, m))
			continue;
		for (int32_t o = 0; o < r->nocc; o++)
			if (r->g->buf_mem[r->oc_buf[o]] == m) {
				int64_t *q = occ_offset(r, p, r->oc_s[o]);
				moved |= *q != d->off[o];
				*q = d->off[o];
			}
	}
	return moved;
}

/* The readiness phase, after the local search: the reloads that follow
 * each other on their pipe in the order their data are needed, and every
 * memory placed again by readiness (rdy_memory); kept when the replay is
 * shorter.  Measured at default options: FlashAttention_Case1 117,972 ->
 * 117,227 (offsets alone), Matmul_Case0 87,470 -> 87,306 (the order of
 * its reloads: DLR placed them in the order their windows came free,
 * e.g. tiles needed 4th and 6th before the 2nd), Matmul_Case1 905,744 ->
 * 905,682; the other three bundled graphs unchanged.  Before the stream
 * phase instead, it gained as much on the first two, but the local search
 * after it ended longer on two generated conv graphs (+7, +168 cycles)
 * and on FlashAttention_Case0/1 at --cap L1=2048,UB=768 (+480, +1,278);
 * last, it can only shorten the plan. */
static int ready_phase(rt *r)
{
	rdy d;
	size_t no = (size_t)r->tmax + 1; /* occupancies: at most the nodes */
	d.off = ds_arena_alloc(&r->a, no, sizeof *d.off);
	d.live = ds_arena_alloc(&r->a, no, sizeof *d.live);
	d.lo = ds_arena_alloc(&r->a, 2 * no, sizeof *d.lo);
	d.hi = ds_arena_alloc(&r->a, 2 * no, sizeof *d.hi);
	d.at = ds_arena_alloc(&r->a, 2 * no, sizeof *d.at);
	d.run = ds_arena_alloc(&r->a, 2 * no, sizeof *d.run);
	d.key = ds_arena_alloc(&r->a, no, sizeof *d.key);
	if (r->a.failed)
		return ds_fail(r->e, DS_ENOMEM, "out of memory");
	int rc = refresh(r);
	if (rc)
		return rc;
	plan_copy(r->g, &r->cur, &r->trial);
	bool sorted = rdy_sort_runs(r, &d);
	if (sorted && (rc = rdy_swap(r))) /* cur: the sorted order */
		return rc;
	bool moved = rdy_offsets(r, &d, sorted ? &r->cur : &r->trial);
	if (sorted && (rc = rdy_swap(r))) /* back: trial the sorted one */
		return rc;
	bool ok = false;
	if ((sorted || moved) && (rc = judge(r, &ok)))
		return rc;
	/* only a shorter plan: one as long with a lower sum of finish times
	 * would change the bytes for nothing (last, nothing builds on it) */
	if (ok && trial_better(r) && r->tf.makespan < r->cf.makespan)
		take_trial(r);
	return DS_OK;
}

/* ---- the pass ---- */

static int rt_init(rt *r, const ds_graph *g, const ds_plan *in,
		   const ds_retime_opts *o, ds_err *e)
{
	memset(r, 0, sizeof *r);
	r->g = g;
	r->h = g->heap;
	r->e = e;
	r->total = in->len;
	ds_arena_init(&r->a, g->heap);
	int32_t np = g->npipes;
	r->mte2 = ds_graph_find_pipe(g, "MTE2");
	r->mte3 = ds_graph_find_pipe(g, "MTE3");
	if (r->mte3 < 0)
		r->mte3 = np++;
	if (r->mte2 < 0)
		r->mte2 = np++;
	int64_t effort = o && o->effort > 0 ? o->effort : 1;
	r->budget = RT_WORK * effort;
	r->max_ddr = o ? o->max_extra_ddr : -1;
	r->smax = in->nspill + RT_MAX_ADD;
	r->tmax = in->len + 2 * RT_MAX_ADD;
	size_t t = (size_t)r->tmax + 1, no = (size_t)g->nbuf + r->smax + 1;
	ds_arena *a = &r->a;
	r->start = ds_arena_alloc(a, t, sizeof *r->start);
	r->fin = ds_arena_alloc(a, t, sizeof *r->fin);
	r->tstart = ds_arena_alloc(a, t, sizeof *r->tstart);
	r->tfin = ds_arena_alloc(a, t, sizeof *r->tfin);
	r->pos = ds_arena_alloc(a, t, sizeof *r->pos);
	r->ppred = ds_arena_alloc(a, t, sizeof *r->ppred);
	r->occ_at = ds_arena_alloc(a, t, sizeof *r->occ_at);
	r->occ_end = ds_arena_alloc(a, t, sizeof *r->occ_end);
	r->plast = ds_arena_alloc(a, (size_t)np + 2, sizeof *r->plast);
	r->xoff = ds_arena_alloc(a, t, sizeof *r->xoff);
	r->tried = ds_arena_alloc(a, t * MV_KINDS, 1);
	r->chain = ds_arena_alloc(a, t * MV_KINDS, sizeof *r->chain);
	r->oc_buf = ds_arena_alloc(a, no, sizeof *r->oc_buf);
	r->oc_s = ds_arena_alloc(a, no, sizeof *r->oc_s);
	r->oc_t = ds_arena_alloc(a, no, sizeof *r->oc_t);
	r->bymem = ds_arena_alloc(a, no, sizeof *r->bymem);
	r->live = ds_arena_alloc(a, no, sizeof *r->live);
	r->cur_occ = ds_arena_alloc(a, (size_t)g->nbuf + 1, sizeof *r->cur_occ);
	/* profile intervals: at most two per occupancy seen; windows: four
	 * and two per live occupancy and per profile interval */
	r->plo = ds_arena_alloc(a, 2 * no, sizeof *r->plo);
	r->phi = ds_arena_alloc(a, 2 * no, sizeof *r->phi);
	r->pready = ds_arena_alloc(a, 2 * no, sizeof *r->pready);
	r->pocc = ds_arena_alloc(a, 2 * no, sizeof *r->pocc);
	r->wof = ds_arena_alloc(a, 8 * no + 4, sizeof *r->wof);
	r->wready = ds_arena_alloc(a, 8 * no + 4, sizeof *r->wready);
	r->strm = ds_arena_alloc(a, no, sizeof *r->strm);
	r->pbusy = ds_arena_alloc(a, (size_t)np + 2, sizeof *r->pbusy);
	r->wv = ds_arena_alloc(a, RT_STREAM_WINDOWS, sizeof *r->wv);
	r->wcnt = ds_arena_alloc(a, RT_STREAM_WINDOWS, sizeof *r->wcnt);
	r->ins_line = ds_arena_alloc(a, 2 * RT_MAX_ADD, sizeof *r->ins_line);
	r->ins_node = ds_arena_alloc(a, 2 * RT_MAX_ADD, sizeof *r->ins_node);
	if (a->failed || plan_alloc(r, &r->cur) || plan_alloc(r, &r->trial))
		return ds_fail(e, DS_ENOMEM, "out of memory");
	plan_copy(g, in, &r->cur);
	return DS_OK;
}

static void rt_free(rt *r)
{
	ds_plan_free(r->h, &r->cur);
	ds_plan_free(r->h, &r->trial);
	ds_arena_free(&r->a);
}

int ds_retime(const ds_graph *g, const ds_plan *in, const ds_retime_opts *o,
	      ds_plan *out, ds_err *e)
{
	memset(out, 0, sizeof *out);
	if (!in->offset || in->len == 0)
		return ds_fail(e, DS_EINPUT, "%s: retime: the plan has no %s",
			       g->source, in->offset ? "nodes" : "offsets");
	rt r;
	int rc = rt_init(&r, g, in, o, e);
	int32_t *usrc = NULL;
	if (rc == DS_OK) {
		ds_replay_opts ro = {.start = r.start, .finish = r.fin};
		rc = ds_replay(g, &r.cur, &ro, &r.cf, e);
		r.csum = sum_fin(r.fin, r.total);
		r.work += r.total;
	}
	if (rc == DS_OK) {
		if (r.max_ddr < r.cf.extra_ddr)
			r.max_ddr = r.cf.extra_ddr;
		usrc = ds_arena_alloc(&r.a, ((size_t)r.tmax + 1) * MV_KINDS,
				      sizeof *usrc);
		if (!usrc)
			rc = ds_fail(e, DS_ENOMEM, "out of memory");
	}
	/* a round costs about four passes over the plan before its first
	 * candidate: none when the budget cannot pay for one (1M nodes) */
	if (rc == DS_OK)
		rc = stream_phase(&r);
	bool took = true;
	while (rc == DS_OK && took &&
	       r.work + 5 * (int64_t)r.total < r.budget)
		rc = round_once(&r, usrc, &took);
	/* last, on a budget of its own: it can only shorten the plan */
	r.budget = r.work + RT_READY_WORK;
	if (rc == DS_OK && 5 * (int64_t)r.total < RT_READY_WORK)
		rc = ready_phase(&r);
	if (rc == DS_OK) {
		*out = r.cur;
		memset(&r.cur, 0, sizeof r.cur);
	}
	rt_free(&r);
	return rc;
}
