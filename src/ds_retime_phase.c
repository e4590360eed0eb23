/* ds_retime_phase.c: retiming's four whole-plan phases (stage 3b, with
 * ds_retime.c, whose header gives the overview): stream double buffering
 * (rt_stream_phase), run before the local search, rotating evictions
 * (rt_rotate_phase) and addresses by readiness (rt_ready_phase), run
 * after it; and addresses by need (rt_need_phase), which
 * ds_retime_by_need runs alone on a finished plan.
 *
 * Requires: a run's state (rt) set up by ds_retime.c, its cur a plan that
 * ds_replay accepts, with start and finish times from its replay.
 * Guarantees: each phase changes cur only to a candidate the replay
 * accepts that rt_trial_better finds better (the readiness phase and
 * the placement by need: only a shorter one), within the spill room and
 * the traffic cap; the same state gives the same plan.
 *
 * Cost: a stream round is O(N + W G + S R) (G idle gaps of the busiest
 * pipe, W <= RT_STREAM_WINDOWS windows, S stretches, R occupancies of the
 * memory) plus one replay per candidate, counted in the run's budget;
 * the phase stops once it has spent RT_STREAM_WORK.  A rotation round:
 * O(N + E) for the state, O(R) per reload the busiest pipe waits for
 * (its victim) and one replay each, then one for the candidate, counted
 * in the run's budget (Conv_Case0 at --traffic-budget 25: two rounds,
 * 19 replays).  The readiness phase: O(N + E) and one replay, plus
 * O(R (L + I) (L + log I + J)) for the placement (L occupancies live at
 * once, I address ranges last used, J of them under a window: a few tens
 * on the bundled graphs) and O(K^2) per run of K reloads, counted in a
 * budget of its own, RT_READY_WORK (a memory whose placement runs out of
 * it keeps its offsets; none on graphs whose scans alone would exceed
 * it).  The placement by need, per memory: a replay with the memory's
 * reuse edges lifted, the same placement and a replay of its plan, in a
 * budget of its own, RT_NEED_WORK.  Memory: the run's arrays, and O(N)
 * from its arena for the readiness phase and the placement by need. */
#include "ds_retime_int.h"

#include <string.h>

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
		if (rt_olo(r, o) == lo && r->g->buf_size[r->oc_buf[o]] == size)
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
	/* by end line: those ended at or before line i skipped at once */
	for (int32_t k = rt_ending_from(r, m, 2 * (int64_t)i + 1);
	     k < r->mem_off[m + 1]; k++) {
		int32_t oz = r->bymem[k];
		int32_t b = r->oc_buf[oz];
		r->work++;
		if (rt_s2(r, oz) >= 2 * (int64_t)i ||
		    rt_olo(r, oz) == lo || b == skip || g->buf_size[b] < size)
			continue;
		int64_t tr = ds_spill_traffic(g, b);
		if (ddr + tr > r->max_ddr)
			continue;
		int32_t nu = rt_next_use(r, oz, i);
		if (nu <= i || nu < *q || rt_last_use(r, oz, i) >= t)
			continue;
		if (nu == *q &&
		    (tr > btr ||
		     (tr == btr && rt_olo(r, oz) >= rt_olo(r, best))))
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

/* One more spill in the trial plan: occupancy z's buffer out before line
 * out, back at z's addresses before line in (insertions, put in place
 * by stream_order). */
static void trial_evict(rt *r, int32_t z, int32_t out, int32_t in)
{
	ds_plan *p = &r->trial;
	int32_t sp = p->nspill++;
	p->spill[sp].buf = r->oc_buf[z];
	p->spill[sp].offset = rt_olo(r, z);
	stream_insert(r, out, r->g->n + 2 * sp);
	stream_insert(r, in, r->g->n + 2 * sp + 1);
}

/* One stretch from stream element k: the trial plan gets the eviction
 * of a resident and every second element from k at its addresses, while
 * they end before its next use; returns the element after the stretch
 * (k + 1 when none was made). */
static int32_t stream_stretch(rt *r, int32_t ns, int32_t k, int32_t *skip)
{
	const ds_graph *g = r->g;
	int32_t x = r->strm[k];
	int m = g->buf_mem[r->oc_buf[x]];
	int64_t size = g->buf_size[r->oc_buf[x]], lo = rt_olo(r, x);
	int32_t i = r->pos[r->oc_s[x]], q;
	int32_t z = stream_victim(r, m, lo, size, i, r->start[r->oc_s[x]],
				  r->trial_ddr, *skip, &q);
	if (z < 0)
		return k + 1;
	int32_t e = k, moved = 0;
	for (int32_t j = k; j < ns && rt_t2(r, r->strm[j]) < 2 * (int64_t)q;
	     j += 2)
		e = j, moved++;
	if (moved < RT_STREAM_MIN)
		return k + 1;
	trial_evict(r, z, i, r->pos[r->oc_t[r->strm[e]]] + 1);
	for (int32_t j = k; j <= e; j += 2)
		*rt_occ_offset(r, &r->trial, r->oc_s[r->strm[j]]) =
			rt_olo(r, z);
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
	int32_t ns = stream_of(r, m, rt_olo(r, x),
			       r->g->buf_size[r->oc_buf[x]]);
	if (ns < 2 * RT_STREAM_MIN)
		return DS_OK;
	rt_plan_copy(r->g, &r->cur, &r->trial);
	r->trial_ddr = r->cf.extra_ddr;
	int32_t skip = -1;
	for (int32_t k = 0; k < ns && r->trial.nspill < r->smax;)
		k = stream_stretch(r, ns, k, &skip);
	if (r->nins == 0)
		return DS_OK;
	stream_order(r);
	return rt_trial_keep(r, took);
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
		int32_t v = r->cur.order[i], q = rt_node_pipe(r, v);
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
		if (rt_node_pipe(r, u) != q || r->ppred[u] < 0 ||
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
			    rt_olo(r, x) == rt_olo(r, o) &&
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
int rt_stream_phase(rt *r)
{
	int64_t w0 = r->work;
	int fails = 0;
	bool took = true;
	int rc = DS_OK;
	while (rc == DS_OK && took && fails < RT_STREAM_FAILS &&
	       r->work - w0 + 5 * (int64_t)r->total < r->stream_budget) {
		rc = rt_refresh(r);
		if (rc)
			break;
		int32_t nw = stream_candidates(r);
		took = false;
		for (int32_t c = 0; c < nw && !took && rc == DS_OK &&
				    fails < RT_STREAM_FAILS &&
				    r->work - w0 < r->stream_budget;
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

/* ---- rotating evictions ----
 * A reload x waits for addresses that a buffer just used still holds
 * (its store, then x's load, between two uses on the busiest pipe),
 * while another resident z sits idle from before x's load until after x
 * ends: z goes out after its last use (behind the stores that could
 * start before that use ended: rot_out_line), x takes z's addresses, z
 * comes back at them right after x ends.  Uses chained through a few
 * slots then rotate their reloads through the slot used longest ago
 * instead of the one just used (Conv_Case0's chains of CONVs over four
 * inputs with three slots).  One eviction alone often gains nothing (an
 * equally long chain is left), so each reload the busiest pipe waits for
 * gets its eviction when that alone lets the waiting node start earlier
 * and leaves the plan no longer (one replay each), and all of them make
 * one candidate, within the spill room and the traffic cap. */

/* A rotation must gain at least a cycle per this many bytes added: one
 * rotation hides about one transfer of the reload it makes room for
 * (2 x size + 150 cycles for 2 x size bytes).  Measured: Conv_Case0 at
 * --traffic-budget 25 gains 9,276 cycles for 6,144 bytes (four
 * rotations) in its first round; at 8 (the local search's rule),
 * FlashAttention_Case1 at the default budget took one of 256 bytes for
 * 209 cycles (117,227 -> 117,018 at 20,480 bytes). */
#define RT_ROT_BYTES_PER_CYCLE 1

/* The reload node an idle gap before u waits for: the occupancy start
 * gap_occ_node finds, else a spill-edge predecessor that starts one and
 * finished when u started; -1 when none. */
static int32_t rot_waited(const rt *r, int32_t u)
{
	int32_t v = gap_occ_node(r, u);
	if (v >= 0)
		return v;
	for (int32_t k = r->xoff[u]; k < r->xoff[u + 1]; k++) {
		int32_t a = r->xadj[k];
		if (r->occ_at[a] >= 0 && r->fin[a] == r->start[u])
			return a;
	}
	return -1;
}

/* Whether occupancy oz (of buffer b, next used at line nu) can make room
 * for x: used again, and not before x ends, its last use and its store
 * done before x's load starts, and its return after x ends done before
 * that next use starts (times of cur's replay). */
static bool rot_fits(const rt *r, int32_t oz, int32_t x, int32_t nu)
{
	const ds_graph *g = r->g;
	int32_t b = r->oc_buf[oz], i = r->pos[r->oc_s[x]];
	return nu > r->pos[r->oc_t[x]] && nu < r->pos[r->oc_t[oz]] &&
	       rt_last_use(r, oz, i) + ds_spill_out_cycles(g, b) <
		       r->start[r->oc_s[x]] &&
	       r->start[r->cur.order[nu]] - r->fin[r->oc_t[x]] >=
		       ds_spill_in_cycles(g, b);
}

/* The resident to evict for occupancy x: live over all of x, at least
 * as large, not taken yet, within the traffic left (ddr so far), one
 * that rot_fits; the one whose next use is farthest, then the least
 * traffic, then the lowest offset.  -1: none. */
static int32_t rot_victim(rt *r, int32_t x, int64_t ddr)
{
	const ds_graph *g = r->g;
	int m = g->buf_mem[r->oc_buf[x]];
	int64_t size = g->buf_size[r->oc_buf[x]];
	int32_t i = r->pos[r->oc_s[x]], j = r->pos[r->oc_t[x]];
	int32_t best = -1, bq = -1;
	int64_t btr = 0;
	for (int32_t k = r->mem_off[m]; k < r->mem_off[m + 1]; k++) {
		int32_t oz = r->bymem[k], b = r->oc_buf[oz];
		int64_t tr = ds_spill_traffic(g, b);
		r->work++;
		if (r->rmark[oz] || rt_s2(r, oz) >= 2 * (int64_t)i ||
		    rt_t2(r, oz) <= 2 * (int64_t)j || g->buf_size[b] < size ||
		    ddr + tr > r->max_ddr)
			continue;
		int32_t nu = rt_next_use(r, oz, i);
		if (nu < bq || (nu == bq && (tr > btr ||
					     (tr == btr && rt_olo(r, oz) >=
							       rt_olo(r, best)))))
			continue;
		if (rot_fits(r, oz, x, nu))
			best = oz, bq = nu, btr = tr;
	}
	return best;
}

/* Sorts the insertions by line, equal lines in the order they came. */
static void rot_sort_ins(rt *r)
{
	for (int32_t a = 1; a < r->nins; a++)
		for (int32_t k = a;
		     k > 0 && r->ins_line[k - 1] > r->ins_line[k]; k--) {
			int32_t t = r->ins_line[k];
			r->ins_line[k] = r->ins_line[k - 1];
			r->ins_line[k - 1] = t;
			t = r->ins_node[k];
			r->ins_node[k] = r->ins_node[k - 1];
			r->ins_node[k - 1] = t;
		}
}

/* The line for the SPILL_OUT of occupancy z, which makes room for a
 * load at line i: right after z's last use before i, but behind the
 * stores between that use and i that start (in cur's replay) no later
 * than that use finishes: its pipe runs in order, and a store put ahead
 * of them would hold them back until the use is done (Conv_Case0: the
 * previous chain's result, stored while the chain's first CONV runs,
 * waited for the CONV behind the rotated input's store, and the next
 * input's load waited for that store's addresses; --traffic-budget 25
 * 413,139 -> 392,866 cycles at 56,448 bytes, 100 385,264). */
static int32_t rot_out_line(const rt *r, int32_t z, int32_t i)
{
	int32_t line = rt_after_last_use(r, z, i);
	int64_t used = rt_last_use(r, z, i);
	for (int32_t l = line; l < i; l++) {
		int32_t v = r->cur.order[l];
		if (rt_node_pipe(r, v) == r->mte3 && r->start[v] <= used)
			line = l + 1;
	}
	return line;
}

/* Rotation k into the trial plan: rz[k]'s buffer out after its last use
 * before rx[k] starts (rot_out_line), back at its own addresses right
 * after rx[k] ends, rx[k] at those addresses meanwhile. */
static void rot_add(rt *r, int32_t k)
{
	int32_t x = r->rx[k], z = r->rz[k];
	trial_evict(r, z, rot_out_line(r, z, r->pos[r->oc_s[x]]),
		    r->pos[r->oc_t[x]] + 1);
	*rt_occ_offset(r, &r->trial, r->oc_s[x]) = rt_olo(r, z);
}

/* The trial plan: cur with rotations from..nr-1. */
static void rot_build(rt *r, int32_t from, int32_t nr)
{
	rt_plan_copy(r->g, &r->cur, &r->trial);
	r->nins = 0;
	for (int32_t k = from; k < nr; k++)
		rot_add(r, k);
	rot_sort_ins(r);
	stream_order(r);
}

/* Whether rotation k alone is valid, lets u start earlier and leaves
 * the plan no longer (one replay). */
static int rot_probe(rt *r, int32_t u, int32_t k, bool *good)
{
	rot_build(r, k, k + 1);
	bool ok;
	int rc = rt_judge(r, &ok);
	*good = ok && r->tstart[u] < r->start[u] &&
		r->tf.makespan <= r->cf.makespan;
	return rc;
}

/* The busiest pipe's node u waits after an idle gap for a reload x that
 * does not wait for its own pipe and is not taken yet: x, else -1. */
static int32_t rot_reload(const rt *r, int32_t u, int32_t q)
{
	if (rt_node_pipe(r, u) != q || r->ppred[u] < 0 ||
	    r->start[u] <= r->fin[r->ppred[u]])
		return -1;
	int32_t v = rot_waited(r, u);
	if (v < 0 || r->rmark[r->occ_at[v]] ||
	    (r->ppred[v] >= 0 && r->start[v] <= r->fin[r->ppred[v]]))
		return -1;
	return r->occ_at[v];
}

/* Keeps, of the rotations rx/rz[0..n) found (each passed rot_probe alone,
 * gaining gain[k] cycles on the start of the node that waited), those
 * that fit the traffic cap together, the most cycles per byte first
 * (then the earlier), in their found order; returns how many. */
static int32_t rot_select(rt *r, int32_t n, const int64_t *gain)
{
	const ds_graph *g = r->g;
	int64_t ddr = r->cf.extra_ddr;
	bool take[RT_MAX_ADD] = {false};
	for (int32_t left = n; left > 0; left--) {
		int32_t best = -1;
		int64_t bt = 0;
		for (int32_t k = 0; k < n; k++) {
			int64_t tr = ds_spill_traffic(g, r->oc_buf[r->rz[k]]);
			if (take[k] || ddr + tr > r->max_ddr)
				continue;
			/* gain[k] / tr > gain[best] / bt, exactly */
			if (best < 0 || gain[k] * bt > gain[best] * tr)
				best = k, bt = tr;
		}
		if (best < 0)
			break;
		take[best] = true;
		ddr += bt;
	}
	int32_t m = 0;
	for (int32_t k = 0; k < n; k++)
		if (take[k]) {
			r->rx[m] = r->rx[k];
			r->rz[m] = r->rz[k];
			m++;
		}
	return m;
}

/* One candidate in the trial plan: the rotations that pass rot_probe,
 * for the reloads the busiest pipe waits for, in the plan's order, each
 * judged against the plan's own traffic; those that fit the cap
 * together then (rot_select).  *nr: how many (none: the trial is left as
 * it is). */
static int rot_candidate(rt *r, int32_t *nr)
{
	memset(r->rmark, 0, (size_t)r->nocc);
	int64_t gain[RT_MAX_ADD];
	int32_t q = busiest_pipe(r);
	int rc = DS_OK;
	*nr = 0;
	for (int32_t i = 0; i < r->total && rc == DS_OK && *nr < RT_MAX_ADD &&
			    r->cur.nspill + *nr < r->smax &&
			    r->work < r->budget;
	     i++) {
		int32_t u = r->cur.order[i];
		int32_t x = rot_reload(r, u, q);
		int32_t z = x < 0 ? -1 : rot_victim(r, x, r->cf.extra_ddr);
		if (z < 0)
			continue;
		r->rx[*nr] = x, r->rz[*nr] = z;
		bool good;
		rc = rot_probe(r, u, *nr, &good);
		if (!good)
			continue;
		r->rmark[x] = r->rmark[z] = 1;
		gain[*nr] = r->start[u] - r->tstart[u];
		(*nr)++;
	}
	if (rc == DS_OK)
		*nr = rot_select(r, *nr, gain);
	if (rc == DS_OK && *nr > 0)
		rot_build(r, 0, *nr);
	return rc;
}

/* Judges the trial: taken when rt_trial_better and it gains at least a
 * cycle per RT_ROT_BYTES_PER_CYCLE bytes added. */
static int rot_keep(rt *r, bool *took)
{
	bool ok;
	int rc = rt_judge(r, &ok);
	if (rc == DS_OK && ok && rt_trial_better(r) &&
	    (r->cf.makespan - r->tf.makespan) * RT_ROT_BYTES_PER_CYCLE >=
		    r->tf.extra_ddr - r->cf.extra_ddr) {
		rt_take_trial(r);
		*took = true;
	}
	return rc;
}

/* The rotation phase, after the local search: a candidate per round
 * while one is taken and the work budget lasts. */
int rt_rotate_phase(rt *r)
{
	bool took = true;
	int rc = DS_OK;
	while (rc == DS_OK && took &&
	       r->work + 5 * (int64_t)r->total < r->budget) {
		rc = rt_refresh(r);
		took = false;
		int32_t nr = 0;
		if (rc == DS_OK)
			rc = rot_candidate(r, &nr);
		if (rc == DS_OK && nr > 0)
			rc = rot_keep(r, &took);
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
	int64_t *need; /* [occupancy] by need: when it is first needed */
} rdy;

#ifndef NDEBUG
/* The ranges non-empty, disjoint and sorted by address (rdy_paint's
 * invariant, checked in the test build). */
static bool rdy_sorted(const rdy *d)
{
	for (int32_t j = 0; j < d->ni; j++)
		if (d->lo[j] >= d->hi[j] || (j > 0 && d->lo[j] < d->hi[j - 1]))
			return false;
	return true;
}
#endif

/* The range [x, y) was last used by an occupancy finishing at f: the
 * ranges it covers give way to it, those it cuts keep their parts left of
 * x and right of y (the ranges stay disjoint and sorted by address). */
static void rdy_paint(rdy *d, int64_t x, int64_t y, int64_t f)
{
	int32_t i = 0, j;
	while (i < d->ni && d->hi[i] <= x)
		i++;
	for (j = i; j < d->ni && d->lo[j] < y; j++)
		;
	int64_t pl[3], ph[3], pt[3];
	int32_t np = 0;
	if (i < j && d->lo[i] < x)
		pl[np] = d->lo[i], ph[np] = x, pt[np++] = d->at[i];
	pl[np] = x, ph[np] = y, pt[np++] = f;
	if (i < j && d->hi[j - 1] > y)
		pl[np] = y, ph[np] = d->hi[j - 1], pt[np++] = d->at[j - 1];
	size_t tail = (size_t)(d->ni - j);
	memmove(d->lo + i + np, d->lo + j, tail * sizeof *d->lo);
	memmove(d->hi + i + np, d->hi + j, tail * sizeof *d->hi);
	memmove(d->at + i + np, d->at + j, tail * sizeof *d->at);
	for (int32_t k = 0; k < np; k++)
		d->lo[i + k] = pl[k], d->hi[i + k] = ph[k], d->at[i + k] = pt[k];
	d->ni = i + np + (int32_t)tail;
	DS_ASSERT(rdy_sorted(d));
}

/* When [x, x + size) is ready, or -1 when a live occupancy holds part of
 * it or it leaves the memory. */
static int64_t rdy_window(rt *r, const rdy *d, int64_t x, int64_t size,
			  int64_t cap)
{
	if (x < 0 || x + size > cap)
		return -1;
	/* counted as a scan of every range, as RT_READY_WORK was measured */
	r->work += d->nlive + d->ni;
	for (int32_t k = 0; k < d->nlive; k++) {
		int32_t p = d->live[k];
		if (d->off[p] < x + size &&
		    x < d->off[p] + r->g->buf_size[r->oc_buf[p]])
			return -1;
	}
	int32_t lo = 0, hi = d->ni; /* the first range ending after x */
	while (lo < hi) {
		int32_t mid = lo + (hi - lo) / 2;
		if (d->hi[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	int64_t t = 0;
	for (int32_t j = lo; j < d->ni && d->lo[j] < x + size; j++)
		if (d->at[j] > t)
			t = d->at[j];
	return t;
}

/* The width of the free run of addresses around [x, x + size) among
 * the live occupancies (a window rdy_window found free). */
static int64_t rdy_room(rt *r, const rdy *d, int64_t x, int64_t size,
			int64_t cap)
{
	int64_t lo = 0, hi = cap;
	for (int32_t k = 0; k < d->nlive; k++) {
		int32_t p = d->live[k];
		int64_t a = d->off[p], b = a + r->g->buf_size[r->oc_buf[p]];
		if (b <= x && b > lo)
			lo = b;
		if (a >= x + size && a < hi)
			hi = a;
	}
	return hi - lo;
}

/* Candidate c of rdy_place for a window of size bytes: the memory's
 * ends, then beside each live occupancy and at each range's ends
 * (rdy_ncand of them). */
static int32_t rdy_ncand(const rdy *d)
{
	return 2 + 2 * (d->nlive + d->ni);
}

static int64_t rdy_cand(const rt *r, const rdy *d, int32_t c, int64_t size,
			int64_t cap)
{
	if (c < 2)
		return c ? cap - size : 0;
	c -= 2;
	if (c < 2 * d->nlive) {
		int32_t p = d->live[c / 2];
		return c % 2 ? d->off[p] - size
			     : d->off[p] + r->g->buf_size[r->oc_buf[p]];
	}
	c -= 2 * d->nlive;
	return c % 2 ? d->hi[c / 2] - size : d->lo[c / 2];
}

/* Occupancy o at one of rdy_cand's windows: with need < 0 the one ready
 * first (the lowest on ties); else one ready by need in the narrowest
 * free run (best fit keeps the wide runs for the larger buffers that
 * follow), and the one ready first when none is; false when none is
 * free. */
static bool rdy_place(rt *r, rdy *d, int32_t o, int64_t cap, int64_t need)
{
	int64_t size = r->g->buf_size[r->oc_buf[o]];
	int64_t best = -1, bk = INT64_MAX, bt = INT64_MAX;
	for (int32_t c = 0, nc = rdy_ncand(d); c < nc; c++) {
		int64_t x = rdy_cand(r, d, c, size, cap);
		int64_t t = rdy_window(r, d, x, size, cap);
		if (t < 0)
			continue;
		/* the key: the width of a window ready by need, before any
		 * not ready by then (cap + its ready time) */
		int64_t k = t;
		if (need >= 0)
			k = t <= need ? rdy_room(r, d, x, size, cap) : cap + t;
		if (k < bk || (k == bk && (t < bt || (t == bt && x < best))))
			best = x, bk = k, bt = t;
	}
	if (best < 0)
		return false;
	d->off[o] = best;
	d->live[d->nlive++] = o;
	return true;
}

/* Every occupancy of memory m, in the order they start (cur's), at the
 * window whose previous occupants finished first in the times fin (the
 * replay of the plan the phase started from): a load then waits for the
 * addresses freed earliest, not for ones a late use still holds; with
 * need, by rdy_place's rule for need.  False when some finds no window or
 * the work budget runs out (the old offsets stay). */
static bool rdy_memory(rt *r, rdy *d, int m, const int64_t *fin,
		       const int64_t *need)
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
			while (k < d->nlive && d->live[k] != o)
				k++;
			if (k == d->nlive) {
				/* never placed: not with rdy_need's bound
				 * (cur's order is one the replay accepts) */
				DS_ASSERT(k < d->nlive);
				return false;
			}
			d->live[k] = d->live[--d->nlive];
			rdy_paint(d, d->off[o],
				  d->off[o] + g->buf_size[r->oc_buf[o]],
				  fin[v]);
		}
		o = r->occ_at[v];
		if (o >= 0 && g->buf_mem[r->oc_buf[o]] == m &&
		    !rdy_place(r, d, o, cap, need ? need[o] : -1))
			return false;
	}
	return r->work < r->budget;
}

/* When reload v is first needed: the start of the first use of its
 * buffer after it and before the end of the occupancy it starts
 * (INT64_MAX when none); *line: that use's line, or the end's (a reload
 * spilled again unused, as the local search can leave one, must stay
 * before that SPILL_OUT). */
static int64_t rdy_need(rt *r, int32_t v, int32_t *line)
{
	const ds_graph *g = r->g;
	int32_t b = rt_node_buf(r, v);
	int32_t end = r->oc_t[r->occ_at[v]];
	int64_t t = INT64_MAX;
	*line = end >= 0 ? r->pos[end] : r->total;
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
	int32_t v = r->cur.order[i], b = rt_node_buf(r, v), k = 0;
	for (int32_t j = i; j < r->total; j++) {
		int32_t x = r->cur.order[j];
		if (rt_node_pipe(r, x) != rt_node_pipe(r, v))
			continue;
		if (!is_reload(r, x) ||
		    g->buf_mem[rt_node_buf(r, x)] != g->buf_mem[b] ||
		    g->buf_size[rt_node_buf(r, x)] != g->buf_size[b])
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

/* trial (a copy of cur): every run of reloads in need order; true when
 * one changed. */
static bool rdy_sort_runs(rt *r, rdy *d)
{
	bool changed = false;
	for (int32_t j = 0; j < r->total;) {
		if (!is_reload(r, r->cur.order[j])) {
			j++;
			continue;
		}
		int32_t k = rdy_run(r, d, j);
		j = d->run[k - 1] + 1;
		changed |= rdy_sort_run(r, d, k);
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
	return rt_refresh(r);
}

/* Memory m's offsets as rdy_memory placed them (d->off) into p, whose
 * occupancies are cur's; true when one moved. */
static bool rdy_write(rt *r, const rdy *d, int m, ds_plan *p)
{
	bool moved = false;
	for (int32_t k = r->mem_off[m]; k < r->mem_off[m + 1]; k++) {
		int32_t o = r->bymem[k];
		int64_t *q = rt_occ_offset(r, p, r->oc_s[o]);
		moved |= *q != d->off[o];
		*q = d->off[o];
	}
	return moved;
}

/* The offsets of every memory placed by rdy_memory into p (whose
 * occupancies are cur's); true when one moved. */
static bool rdy_offsets(rt *r, rdy *d, ds_plan *p)
{
	bool moved = false;
	for (int m = 0; m < DS_NMEM; m++)
		if (rdy_memory(r, d, m, r->fin, NULL))
			moved |= rdy_write(r, d, m, p);
	return moved;
}

/* Judges the trial and takes it when it is shorter: one as long with a
 * lower sum of finish times would change the bytes for nothing (the
 * phase is last, nothing builds on it). */
static int rdy_keep_shorter(rt *r)
{
	bool ok = false;
	int rc = rt_judge(r, &ok);
	if (rc == DS_OK && ok && rt_trial_better(r) &&
	    r->tf.makespan < r->cf.makespan)
		rt_take_trial(r);
	return rc;
}

/* ---- addresses by need ----
 * The readiness placement ranks windows by the replay of the plan it
 * starts from, whose times already hold the waits its addresses cause.
 * This one asks, memory by memory, when each occupancy would be needed
 * and would end if that memory's addresses made no node wait, and places
 * the memory again by those times (rdy_place's rule for need: a window
 * whose last occupants end by then, best fit).  Run by the pipeline on
 * its finished plan (ds_retime_by_need).  Measured 2026-12-07 at default
 * options against the pipeline without it: `dansched gen --kind conv`
 * graphs of 1,000, 3,000 and 6,000 nodes, seeds 1 to 5, 0.57 to 3.74 %
 * shorter on 8 of the 15 (conv 3,000 seed 4: 75,958 -> 73,120 cycles),
 * none longer, and at L1=2048,UB=768 attention 3,000 seed 1 58,658 ->
 * 58,502 and random 3,000 seed 3 67,918 -> 67,880, none longer;
 * Matmul_Case1 905,937 -> 905,813; the other bundled graphs and
 * 3,000-node random, attention and matmul graphs (seeds 1 to 3)
 * unchanged.  With the window ready first instead (rdy_place's rule
 * without need, on the same times) 5 of the 15 came out shorter, by
 * less (conv 3,000 seed 4: 75,316). */

/* cur replayed with memory m's occupancies at addresses of their own, m's
 * capacity lifted for that replay alone (a graph copy sharing g's
 * arrays): into tstart and tfin, *ok when it ran (not when m holds
 * nothing, nor when its occupancies side by side would pass
 * DS_VALUE_MAX bytes). */
static int need_times(rt *r, int m, bool *ok)
{
	ds_graph g2 = *r->g;
	int64_t off = 0;
	*ok = false;
	rt_plan_copy(r->g, &r->cur, &r->trial);
	for (int32_t k = r->mem_off[m]; k < r->mem_off[m + 1]; k++) {
		int32_t o = r->bymem[k];
		int64_t size = r->g->buf_size[r->oc_buf[o]];
		if (off > DS_VALUE_MAX - size)
			return DS_OK;
		*rt_occ_offset(r, &r->trial, r->oc_s[o]) = off;
		off += size;
	}
	if (off == 0)
		return DS_OK;
	if (off > g2.caps.cap[m])
		g2.caps.cap[m] = off;
	ds_replay_opts ro = {.start = r->tstart, .finish = r->tfin};
	ds_figures f;
	ds_err e2;
	r->work += r->trial.len;
	int rc = ds_replay(&g2, &r->trial, &ro, &f, &e2);
	if (rc == DS_ENOMEM)
		return ds_fail(r->e, DS_ENOMEM, "out of memory");
	*ok = rc == DS_OK;
	return DS_OK;
}

/* When occupancy o is first needed in the times start: a reload's own
 * start (it writes the addresses), else the first start among its
 * buffer's uses within the occupancy (INT64_MAX when none). */
static int64_t occ_need(rt *r, int32_t o, const int64_t *start)
{
	const ds_graph *g = r->g;
	int32_t v = r->oc_s[o], b = r->oc_buf[o];
	if (v >= g->n)
		return start[v];
	int32_t end = r->oc_t[o] >= 0 ? r->pos[r->oc_t[o]] : r->total;
	int64_t t = INT64_MAX;
	r->work += g->user_off[b + 1] - g->user_off[b];
	for (int32_t k = g->user_off[b]; k < g->user_off[b + 1]; k++) {
		int32_t u = g->user[k];
		if (r->pos[u] > r->pos[v] && r->pos[u] < end && start[u] < t)
			t = start[u];
	}
	return t;
}

/* Memory m placed again by need: the trial is cur with m's new offsets,
 * taken when it is shorter. */
static int need_memory(rt *r, rdy *d, int m)
{
	bool ok;
	int rc = need_times(r, m, &ok);
	if (rc || !ok)
		return rc;
	for (int32_t k = r->mem_off[m]; k < r->mem_off[m + 1]; k++)
		d->need[r->bymem[k]] = occ_need(r, r->bymem[k], r->tstart);
	if (!rdy_memory(r, d, m, r->tfin, d->need))
		return DS_OK;
	rt_plan_copy(r->g, &r->cur, &r->trial);
	return rdy_write(r, d, m, &r->trial) ? rdy_keep_shorter(r) : DS_OK;
}

/* The scratch of the readiness phase and the placement by need, from the
 * run's arena. */
static int rdy_alloc(rt *r, rdy *d)
{
	size_t no = (size_t)r->tmax + 1; /* occupancies: at most the nodes */
	d->off = ds_arena_alloc(&r->a, no, sizeof *d->off);
	d->live = ds_arena_alloc(&r->a, no, sizeof *d->live);
	d->lo = ds_arena_alloc(&r->a, 2 * no, sizeof *d->lo);
	d->hi = ds_arena_alloc(&r->a, 2 * no, sizeof *d->hi);
	d->at = ds_arena_alloc(&r->a, 2 * no, sizeof *d->at);
	d->run = ds_arena_alloc(&r->a, 2 * no, sizeof *d->run);
	d->key = ds_arena_alloc(&r->a, no, sizeof *d->key);
	d->need = ds_arena_alloc(&r->a, no, sizeof *d->need);
	if (r->a.failed)
		return ds_fail(r->e, DS_ENOMEM, "out of memory");
	return DS_OK;
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
 * last, it can only shorten the plan.  Where that candidate was not
 * taken (Conv_Case0, whose L1 cannot be placed anew), a second step put
 * the sorted reloads at the windows of the lines they landed on, run by
 * run (Conv_Case0 413,139 -> 411,453 when it came); removed once the
 * passes after it (the tail's replan, the window pass) had made it
 * idle: on the six graphs at budgets 0, 5, 25 and 100 and on 84
 * generated graph-capacity pairs it no longer changed a plan. */
int rt_ready_phase(rt *r)
{
	rdy d;
	int rc = rdy_alloc(r, &d);
	if (rc == DS_OK)
		rc = rt_refresh(r);
	if (rc)
		return rc;
	rt_plan_copy(r->g, &r->cur, &r->trial);
	bool sorted = rdy_sort_runs(r, &d);
	if (sorted && (rc = rdy_swap(r))) /* cur: the sorted order */
		return rc;
	bool moved = rdy_offsets(r, &d, sorted ? &r->cur : &r->trial);
	if (sorted && (rc = rdy_swap(r))) /* back: trial the sorted one */
		return rc;
	return sorted || moved ? rdy_keep_shorter(r) : DS_OK;
}

int rt_need_phase(rt *r)
{
	rdy d;
	int rc = rdy_alloc(r, &d);
	if (rc == DS_OK)
		rc = rt_refresh(r);
	for (int m = 0; m < DS_NMEM && rc == DS_OK; m++)
		rc = need_memory(r, &d, m);
	return rc;
}
