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
 * Before that, a stream phase (rt_stream_phase): where the busiest pipe's
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
 * rest, so the search ends.  Before it and after it, a rotation phase
 * (rt_rotate_phase): for each reload the busiest pipe waits for, a
 * resident idle from before it until after it goes out after its last
 * use and lends it its addresses (the slot used longest ago, not the
 * one just used), each checked alone by a replay, and of those the ones
 * that fit the traffic cap together, the most cycles gained per byte
 * first (in the plan's order, the first ones used up the cap: packed
 * Conv_Case0 410,524 cycles at 41,472 bytes, 405,466 at 43,008 with
 * the late layers' rotation taken instead), in one candidate, kept
 * when it gains a cycle per RT_ROT_BYTES_PER_CYCLE bytes;
 * when the second is taken, the local search again from there
 * (Conv_Case0: 416,511 -> 413,994 cycles at the default budget, at
 * --traffic-budget 25 413,139 -> 393,721 at 56,448 bytes; see
 * rotations).  Last, a readiness phase (rt_ready_phase): the
 * reloads that follow each other on their pipe put in the order their
 * data are first needed, and every occupancy, in the order they start,
 * placed at the window whose previous occupants finished first in the
 * replay (a load waits for the addresses freed earliest, not for ones a
 * late use still holds); one candidate, kept when its replay is shorter.
 * These three whole-plan phases are in ds_retime_phase.c, and a fourth
 * that the pipeline runs alone on its finished plan (ds_retime_by_need):
 * each memory placed again by need, at windows whose previous occupants
 * end by the time the occupancy is first needed, both times taken from
 * the plan replayed with that memory's reuse edges lifted (a load then
 * waits for no address that a stall of the plan itself holds late).
 *
 * Cost: a round is O(N + E) (the replay, occupancies, spill edges, chain)
 * plus O(R + K^2) per window search (R occupancies of the memory, K those
 * live beside the one moved); a candidate costs one replay.  The work,
 * counted in replayed nodes, is bounded by RT_WORK (times the effort), so
 * a large graph gets a few candidates or none.  The stream phase counts
 * its work in the same budget, the rotation phase in one of its own,
 * RT_ROT_WORK, the local search after it in a second RT_WORK, the
 * readiness phase in one of its own, RT_READY_WORK (their costs:
 * ds_retime_phase.c).  Memory O(N + E). */
#include "ds_retime_int.h"

#include <stdlib.h>
#include <string.h>

/* Windows tried per candidate move, best first. */
#define RT_TRIES 2
/* Occupancies looked back at for the last occupants of a memory: enough
 * to cover L1 on the bundled graphs (a few tens). */
#define RT_PROFILE 256

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

/* The placement by need's work budget (ds_retime_by_need), counted as
 * the readiness phase counts: placing L1 took Matmul_Case1 16.8M units
 * and `dansched gen --kind conv --nodes 6000` (seeds 1 to 5) 16.2M at
 * most; Conv_Case1's L1 ran out of 100M (its occupancies placed before
 * then found no shorter plan).  A placement that runs out keeps its
 * offsets.  At 24M the six graphs take 0.01 s more than without the
 * pass (the least of six runs each, Release; 2026-12-07). */
#define RT_NEED_WORK 24000000

enum { MV_REUSE_NEW, MV_REUSE_OLD, MV_EVICT, MV_PIPE, MV_KINDS };

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

void rt_plan_copy(const ds_graph *g, const ds_plan *src, ds_plan *dst)
{
	dst->len = src->len;
	dst->nspill = src->nspill;
	memcpy(dst->order, src->order, (size_t)src->len * sizeof *src->order);
	memcpy(dst->offset, src->offset, (size_t)g->nbuf * sizeof *src->offset);
	if (src->nspill > 0)
		memcpy(dst->spill, src->spill,
		       (size_t)src->nspill * sizeof *src->spill);
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
int rt_judge(rt *r, bool *ok)
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

bool rt_trial_better(const rt *r)
{
	if ((r->cf.makespan - r->tf.makespan) * RT_BYTES_PER_CYCLE <
	    r->tf.extra_ddr - r->cf.extra_ddr)
		return false;
	return r->tf.makespan < r->cf.makespan ||
	       (r->tf.makespan == r->cf.makespan && r->tsum < r->csum);
}

void rt_take_trial(rt *r)
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

int rt_trial_keep(rt *r, bool *took)
{
	bool ok;
	int rc = rt_judge(r, &ok);
	if (rc == DS_OK && ok && rt_trial_better(r)) {
		rt_take_trial(r);
		*took = true;
	}
	return rc;
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
		int32_t q = rt_node_pipe(r, v);
		r->ppred[v] = q >= 0 ? last[q] : -1;
		if (q >= 0)
			last[q] = v;
		bool starts = v < n ? g->kind[v] == DS_ALLOC : (v - n) % 2;
		bool ends = v < n ? g->kind[v] == DS_FREE : !((v - n) % 2);
		if (starts) {
			int32_t o = r->nocc++;
			r->oc_buf[o] = rt_node_buf(r, v);
			r->oc_s[o] = v;
			r->oc_t[o] = -1;
			r->occ_at[v] = o;
			r->cur_occ[r->oc_buf[o]] = o;
		} else if (ends) {
			r->oc_t[r->cur_occ[rt_node_buf(r, v)]] = v;
			r->occ_end[v] = r->cur_occ[rt_node_buf(r, v)];
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
		int m = g->buf_mem[rt_node_buf(r, v)];
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

int rt_refresh(rt *r)
{
	scan_order(r);
	group_by_mem(r);
	r->work += 3 * (int64_t)r->total;
	return spill_csr(r);
}

/* ---- windows ---- */

static int64_t ohi(rt *r, int32_t o)
{
	return rt_olo(r, o) + r->g->buf_size[r->oc_buf[o]];
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
	int32_t lo = r->mem_off[m];
	/* the last occupancy ended before line2 */
	int32_t a = rt_ending_from(r, m, line2);
	for (int32_t k = a - 1, steps = 0;
	     k >= lo && covered < qhi - qlo && steps < RT_PROFILE; k--) {
		int32_t o = r->bymem[k];
		r->work += 1 + r->np;
		steps++;
		if (o == skip)
			continue;
		int64_t x = rt_olo(r, o), y = ohi(r, o);
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
		if (o != skip && rt_s2(r, o) < b2 && a2 < rt_t2(r, o))
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
		if (rt_olo(r, r->live[k]) < off + size &&
		    off < ohi(r, r->live[k]))
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
		add_window(r, rt_olo(r, r->live[k]) - size, size, cap, xlo,
			   xhi);
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
	int64_t keep = *rt_occ_offset(r, &r->trial, r->oc_s[o]);
	for (int32_t k = 0; k < r->nw && tries < RT_TRIES && !*took; k++) {
		if (r->wready[k] >= limit)
			break;
		tries++;
		*rt_occ_offset(r, &r->trial, r->oc_s[o]) = r->wof[k];
		int rc = rt_trial_keep(r, took);
		if (rc)
			return rc;
	}
	if (!*took)
		*rt_occ_offset(r, &r->trial, r->oc_s[o]) = keep;
	return DS_OK;
}

/* A reuse edge into v binds: v's occupancy to a window whose previous
 * occupants ended before v started. */
static int move_new(rt *r, int32_t v, bool *took)
{
	int32_t o = r->occ_at[v];
	windows(r, o, rt_s2(r, o), rt_t2(r, o), 0, 0);
	rt_plan_copy(r->g, &r->cur, &r->trial);
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
	profile(r, m, rt_s2(r, o), o, rt_olo(r, o), ohi(r, o));
	int64_t now = ready_at(r, rt_olo(r, o), r->g->buf_size[r->oc_buf[o]]);
	windows(r, o, rt_s2(r, o), rt_t2(r, o), rt_olo(r, x), ohi(r, x));
	rt_plan_copy(r->g, &r->cur, &r->trial);
	return try_windows(r, o, now + 1, took);
}

/* The finish of z's last use before line i within occupancy oz (its
 * start when none). */
int64_t rt_last_use(const rt *r, int32_t oz, int32_t i)
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
int32_t rt_after_last_use(const rt *r, int32_t oz, int32_t i)
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

int32_t rt_ending_from(const rt *r, int m, int64_t line2)
{
	int32_t a = r->mem_off[m], z = r->mem_off[m + 1];
	while (a < z) {
		int32_t mid = a + (z - a) / 2;
		if (rt_t2(r, r->bymem[mid]) < line2)
			a = mid + 1;
		else
			z = mid;
	}
	return a;
}

/* The line of the first use of oz's buffer at or after line i, or of its
 * end when there is none. */
int32_t rt_next_use(const rt *r, int32_t oz, int32_t i)
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
	rt_plan_copy(r->g, &r->cur, p);
	int32_t k = p->nspill++;
	p->spill[k].buf = r->oc_buf[oz];
	p->spill[k].offset = in;
	int32_t *ord = p->order;
	memmove(ord + q + 2, ord + q, (size_t)(p->len - q) * sizeof *ord);
	ord[q + 1] = n + 2 * k + 1;
	memmove(ord + i + 1, ord + i, (size_t)(q - i) * sizeof *ord);
	ord[i] = n + 2 * k;
	p->len += 2;
	*rt_occ_offset(r, p, r->oc_s[x]) = rt_olo(r, oz);
}

/* Evicts oz's buffer for occupancy x (lines i..j): back at its own
 * addresses after x when it is not used before, else just before its
 * next use at the best window beside x's new place; *in < 0: none. */
static void reload_at(rt *r, int32_t oz, int32_t x, int32_t i, int32_t j,
		      int32_t *q, int64_t *in)
{
	int32_t u = rt_next_use(r, oz, i);
	*q = u;
	*in = -1;
	if (u > j) {
		*q = j + 1;
		*in = rt_olo(r, oz);
		return;
	}
	int64_t lo = rt_olo(r, oz), sx = r->g->buf_size[r->oc_buf[x]];
	windows(r, oz, 2 * (int64_t)u - 1, rt_t2(r, oz), lo, lo + sx);
	if (r->nw > 0)
		*in = r->wof[0];
}

/* The RT_TRIES best victims for occupancy x (lines i..j, started by v)
 * into best[], best first: residents of its memory at least its size,
 * not used at line i, whose spill fits the traffic cap, their last use
 * ended before v starts; the earliest ended first, one not used during x
 * before any that is, then the least traffic.  Returns how many. */
static int evict_victims(rt *r, int32_t v, int32_t x, int32_t i, int32_t j,
			 int32_t best[RT_TRIES])
{
	const ds_graph *g = r->g;
	int m = g->buf_mem[r->oc_buf[x]];
	int64_t size = g->buf_size[r->oc_buf[x]];
	int64_t bready[RT_TRIES], btraffic[RT_TRIES];
	int nb = 0;
	for (int32_t k = r->mem_off[m]; k < r->mem_off[m + 1]; k++) {
		int32_t oz = r->bymem[k];
		int32_t b = r->oc_buf[oz];
		r->work++;
		if (oz == x || rt_s2(r, oz) >= 2 * (int64_t)i ||
		    rt_t2(r, oz) <= 2 * (int64_t)i || g->buf_size[b] < size)
			continue;
		int64_t tr = ds_spill_traffic(g, b);
		if (r->cf.extra_ddr + tr > r->max_ddr ||
		    rt_next_use(r, oz, i) == i)
			continue;
		int64_t rd = rt_last_use(r, oz, i);
		if (rd >= r->start[v])
			continue;
		/* a buffer not used during x first: it comes back at its own
		 * addresses, no window needed */
		if (rt_next_use(r, oz, i) <= j)
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
	return nb;
}

/* A reuse edge into v binds and no window is free: evict a resident
 * buffer not used when v's occupancy starts (one whose last use ended
 * earliest, the least traffic on ties), within the traffic cap, and put
 * v's occupancy at its addresses. */
static int move_evict(rt *r, int32_t v, bool *took)
{
	int32_t x = r->occ_at[v];
	int32_t i = r->pos[r->oc_s[x]], j = r->pos[r->oc_t[x]];
	if (r->cur.nspill >= r->smax)
		return DS_OK;
	int32_t best[RT_TRIES];
	int nb = evict_victims(r, v, x, i, j, best);
	for (int c = 0; c < nb && !*took; c++) {
		int32_t q;
		int64_t in;
		reload_at(r, best[c], x, i, j, &q, &in);
		if (in < 0)
			continue;
		/* out just before x, or as early as it can go: right after
		 * its last use (ahead of the stores queued on its pipe) */
		int32_t early = rt_after_last_use(r, best[c], i);
		for (int w = 0; w < 2 && !*took; w++) {
			if (w == 1 && early >= i)
				break;
			add_spill(r, best[c], x, w ? early : i, q, in);
			int rc = rt_trial_keep(r, took);
			if (rc)
				return rc;
		}
	}
	return DS_OK;
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
	rt_plan_copy(r->g, &r->cur, &r->trial);
	hoist(r, r->pos[v], r->pos[w]);
	int32_t o = r->occ_at[v];
	if (o < 0)
		return rt_trial_keep(r, took);
	windows(r, o, 2 * (int64_t)r->pos[w] - 1, rt_t2(r, o), 0, 0);
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
	int64_t lo = rt_olo(r, o), hi = ohi(r, o);
	profile(r, r->g->buf_mem[r->oc_buf[o]], rt_s2(r, o), o, lo, hi);
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
		if (v < n) /* the latest in the plan: not the edges' order */
			for (int32_t k = g->epred_off[v];
			     k < g->epred_off[v + 1]; k++)
				if (r->fin[g->epred[k]] == s &&
				    (next < 0 ||
				     r->pos[g->epred[k]] > r->pos[next]))
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
	int rc = rt_refresh(r);
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

/* ---- the pass ---- */

/* The pipes spill nodes run on (MTE2, MTE3: numbered after the graph's
 * own where it has none), the search's budgets and the plan's room for
 * added spills; *np: the pipes counted. */
static void rt_limits(rt *r, const ds_graph *g, const ds_plan *in,
		      const ds_retime_opts *o, int32_t *np)
{
	*np = g->npipes;
	r->mte2 = ds_graph_find_pipe(g, "MTE2");
	r->mte3 = ds_graph_find_pipe(g, "MTE3");
	if (r->mte3 < 0)
		r->mte3 = (*np)++;
	if (r->mte2 < 0)
		r->mte2 = (*np)++;
	int64_t effort = o && o->effort > 0 ? o->effort : 1;
	int64_t size = o ? o->size_nodes : 0;
	r->budget = ds_work_share(g, size, RT_WORK * effort);
	r->rot_budget = ds_work_share(g, size, RT_ROT_WORK * effort);
	r->stream_budget = ds_work_share(g, size, RT_STREAM_WORK);
	r->ready_budget = ds_work_share(g, size, RT_READY_WORK);
	r->need_budget = ds_work_share(g, size, RT_NEED_WORK);
	r->max_ddr = o ? o->max_extra_ddr : -1;
	r->smax = in->nspill + RT_MAX_ADD;
	r->tmax = in->len + 2 * RT_MAX_ADD;
}

/* The search's arrays, from r's arena, sized by rt_limits' room; false
 * when one could not be had. */
static bool rt_arrays(rt *r, const ds_graph *g, int32_t np)
{
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
	r->rmark = ds_arena_alloc(a, no, sizeof *r->rmark);
	r->rx = ds_arena_alloc(a, RT_MAX_ADD, sizeof *r->rx);
	r->rz = ds_arena_alloc(a, RT_MAX_ADD, sizeof *r->rz);
	return !a->failed;
}

static int rt_init(rt *r, const ds_graph *g, const ds_plan *in,
		   const ds_retime_opts *o, ds_err *e)
{
	memset(r, 0, sizeof *r);
	r->g = g;
	r->h = g->heap;
	r->e = e;
	r->total = in->len;
	ds_arena_init(&r->a, g->heap);
	int32_t np;
	rt_limits(r, g, in, o, &np);
	if (!rt_arrays(r, g, np) || plan_alloc(r, &r->cur) ||
	    plan_alloc(r, &r->trial))
		return ds_fail(e, DS_ENOMEM, "out of memory");
	rt_plan_copy(g, in, &r->cur);
	return DS_OK;
}

static void rt_free(rt *r)
{
	ds_plan_free(r->h, &r->cur);
	ds_plan_free(r->h, &r->trial);
	ds_arena_free(&r->a);
}

/* The rotation phase (ds_retime_phase.c) on a budget of its own, the
 * budget of the phase after it left as it was; *took: it shortened the
 * plan.  Run before the local search too, whose evictions otherwise take
 * the traffic a rotation needs (Conv_Case0, default budget: the one
 * eviction the cap allowed gave 416,511, a rotation in its place
 * 413,994; at --traffic-budget 25 and 100, 393,721 and 386,119 against
 * 392,866 and 385,264 with rotations after the local search only; the
 * other five graphs' plans the same either way). */
static int rotations(rt *r, bool *took)
{
	int64_t before = r->cf.makespan, saved = r->budget, w0 = r->work;
	r->budget = r->work + r->rot_budget;
	int rc = rt_rotate_phase(r);
	r->budget = saved + (r->work - w0);
	*took = r->cf.makespan < before;
	return rc;
}

static int no_plan(const ds_graph *g, const ds_plan *in, ds_err *e)
{
	return ds_fail(e, DS_EINPUT, "%s: retime: the plan has no %s",
		       g->source, in->offset ? "nodes" : "offsets");
}

/* The run's plan into *out when rc is DS_OK, the run freed; rc. */
static int rt_end(rt *r, int rc, ds_plan *out)
{
	if (rc == DS_OK) {
		*out = r->cur;
		memset(&r->cur, 0, sizeof r->cur);
	}
	rt_free(r);
	return rc;
}

/* rt_init, then the input replayed: cur's times, figures and sum. */
static int rt_begin(rt *r, const ds_graph *g, const ds_plan *in,
		    const ds_retime_opts *o, ds_err *e)
{
	int rc = rt_init(r, g, in, o, e);
	if (rc == DS_OK) {
		ds_replay_opts ro = {.start = r->start, .finish = r->fin};
		rc = ds_replay(g, &r->cur, &ro, &r->cf, e);
		r->csum = sum_fin(r->fin, r->total);
		r->work += r->total;
	}
	return rc;
}

int ds_retime(const ds_graph *g, const ds_plan *in, const ds_retime_opts *o,
	      ds_plan *out, ds_err *e)
{
	memset(out, 0, sizeof *out);
	if (!in->offset || in->len == 0)
		return no_plan(g, in, e);
	rt r;
	int rc = rt_begin(&r, g, in, o, e);
	int32_t *usrc = NULL;
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
	const int64_t first = r.budget;
	bool took = true;
	if (rc == DS_OK)
		rc = rt_stream_phase(&r);
	if (rc == DS_OK)
		rc = rotations(&r, &took);
	took = true; /* the local search runs whether they were taken or not */
	while (rc == DS_OK && took &&
	       r.work + 5 * (int64_t)r.total < r.budget)
		rc = round_once(&r, usrc, &took);
	/* rotations again, and when they are taken the local search again
	 * from there, on a budget as large as the first */
	if (rc == DS_OK)
		rc = rotations(&r, &took);
	r.budget = r.work + first;
	while (rc == DS_OK && took &&
	       r.work + 5 * (int64_t)r.total < r.budget)
		rc = round_once(&r, usrc, &took);
	/* last, on a budget of its own: it can only shorten the plan */
	r.budget = r.work + r.ready_budget;
	if (rc == DS_OK && 5 * (int64_t)r.total < r.ready_budget)
		rc = rt_ready_phase(&r);
	return rt_end(&r, rc, out);
}

int ds_retime_by_need(const ds_graph *g, const ds_plan *in,
		      const ds_retime_opts *o, ds_plan *out, ds_err *e)
{
	memset(out, 0, sizeof *out);
	if (!in->offset || in->len == 0)
		return no_plan(g, in, e);
	ds_retime_opts none = {.size_nodes = o ? o->size_nodes : 0};
	rt r;
	int rc = rt_begin(&r, g, in, &none, e);
	r.budget = r.work + r.need_budget;
	if (rc == DS_OK && 5 * (int64_t)r.total < r.need_budget)
		rc = rt_need_phase(&r);
	return rt_end(&r, rc, out);
}
