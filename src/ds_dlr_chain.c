/* ds_dlr_chain.c: DLR's chain order (ch_).
 *
 * Requires: a valid graph, a topological order of its n nodes (stage 1's)
 * and its positions; chopts as ds_dlr.h says.
 * Guarantees: a topological order of all n nodes (dlr_po_follow's, keyed by the
 * simulated steps) into out[], or *any false when the graph has fewer than
 * two chains (out[] then untouched); with o->pilot, the pilot's order (see
 * ds_dlr_pilot.c).  A pure function of the inputs (node Ids break exact
 * ties).  DS_ENOMEM on failure, nothing else.
 * Cost: O(C W S I) for C chains of S steps with I inputs each, W =
 * CH_WINDOW, plus O((N + E) log N); the pilot's own (ds_dlr_pilot.c).
 *
 * An accumulator is a buffer (data not from DDR) with three users or more
 * that follow each other along edges: a chain of steps, each reading data
 * that other chains read too (in Matmul a tile of A or B).  Which chains
 * run side by side, and which follows which, decides how often that data
 * must be brought back.  This simulates the chains at step granularity:
 * as many chains run at once as their memory holds, stepping in turn (so
 * two chains sharing data use it together); the inputs sit in an LRU model
 * of their memories; when a chain ends, the next is the one whose
 * remaining inputs cost least to bring in (bytes missing, plus bytes to
 * evict for them; inputs the running chains will bring count as there),
 * judged together with the best chain that could start after it when two
 * fit side by side (ch_pick), then the one reusing the most recently used
 * data, then stage 1's.  The simulated order of steps is then laid over
 * the places stage 1 gave the steps, each step taking along the loads and
 * moves that feed it, and the order is rebuilt by dlr_po_follow.  The chains
 * that may start are the first CH_WINDOW not started in stage 1's order.
 *
 * The model's counters (bytes and buffers in the model, reads left, the
 * running chains' bytes) are recomputed from scratch at intervals when
 * assertions are on (ch_check). */
#include "ds_dlr.h"

#include <string.h>

/* Is b an accumulator (ds_dlr.h)? */
bool dlr_is_chain(const ds_graph *g, const int32_t *usr, int32_t nu,
		  int32_t b)
{
	if (g->buf_copyin[b] || nu < 3)
		return false;
	for (int32_t k = 1; k < nu; k++) {
		bool edge = false;
		for (int32_t j = g->pred_off[usr[k]]; j < g->pred_off[usr[k] + 1];
		     j++)
			edge |= g->pred[j] == usr[k - 1];
		if (!edge)
			return false;
	}
	return true;
}

/* Makes room for size bytes of memory m in the model, least recently used
 * first, never an input of the current step (stamp == st). */
static void ch_room(chsim *c, int m, int64_t size)
{
	const ds_graph *g = c->g;
	while (c->used[m] + size > c->icap[m]) {
		int32_t v = -1;
		for (int32_t i = 0; i < c->nres; i++) {
			int32_t x = c->reslist[i];
			if (!c->res[x] || g->buf_mem[x] != m || c->stamp[x] == c->st)
				continue;
			if (v < 0 || c->last[x] < c->last[v] ||
			    (c->last[x] == c->last[v] &&
			     c->pos1[g->buf_alloc[x]] < c->pos1[g->buf_alloc[v]]))
				v = x;
		}
		if (v < 0)
			return;
		c->res[v] = 0;
		c->nin--;
		c->used[m] -= g->buf_size[v];
	}
}

/* Bytes chain ch must bring in for its inputs (not in the model, not
 * claimed by the running chains (== claim) or the partner tried (pclaim ==
 * pst)), plus the bytes that would overflow their memories; *mru gets the
 * latest use among its inputs in the model. */
static int64_t ch_cost(chsim *c, int32_t ch, int32_t claim, int64_t *mru)
{
	const ds_graph *g = c->g;
	int64_t nw[DS_NMEM] = {0}, cost = 0;
	*mru = -1;
	for (int32_t k = c->dioff[ch]; k < c->dioff[ch + 1]; k++) {
		int32_t x = c->div[k];
		if (c->claim[x] == claim || c->pclaim[x] == c->pst)
			continue;
		if (c->res[x]) {
			if (c->last[x] > *mru)
				*mru = c->last[x];
		} else {
			nw[g->buf_mem[x]] += g->buf_size[x];
		}
	}
	for (int m = 0; m < DS_NMEM; m++) {
		int64_t over = c->used[m] + nw[m] - c->icap[m];
		cost += nw[m] + (over > 0 ? over : 0);
	}
	return cost;
}

/* The inputs of chain x count as brought in by a partner (pclaim == a new
 * pst) in the next ch_cost calls. */
static void ch_partner(chsim *c, int32_t x)
{
	c->pst++;
	for (int32_t si = c->soff[x]; si < c->soff[x + 1]; si++)
		for (int32_t k = c->ioff[si]; k < c->ioff[si + 1]; k++)
			c->pclaim[c->iv[k]] = c->pst;
}

/* Is a before b: less cost, then more recent reuse, then stage 1. */
static bool ch_before(const chsim *c, int32_t a, int64_t ca, int64_t ma,
		      int32_t b, int64_t cb, int64_t mb)
{
	if (ca != cb)
		return ca < cb;
	if (ma != mb)
		return ma > mb;
	return c->pos1[c->sv[c->soff[a]]] < c->pos1[c->sv[c->soff[b]]];
}

/* Leaders ch_pick judges with a partner.  Measured (ds_dlr.h): 4 and 16
 * give the same plans' figures as 8 (316,264), in the same time; 8 is
 * kept as the middle of a flat range. */
#define CH_TOP 8
/* The chains that may start next: the first CH_WINDOW not started in
 * stage 1's order (all of them on the bundled graphs), which keeps a
 * start O(CH_WINDOW) instead of O(C). */
#define CH_WINDOW 256

/* The CH_TOP leaders among the candidates into top[] (indices into
 * c->cand, best first by ch_before), at most two of any one (cost,
 * recency): equal scores mostly mean interchangeable chains.  Returns
 * how many. */
static int32_t ch_leaders(chsim *c, int32_t top[CH_TOP])
{
	const int32_t *cand = c->cand, n = c->ncand;
	const int64_t *cost = c->ccost, *mru = c->cmru;
	int32_t nt = 0;
	for (int32_t i = 0; i < n; i++) {
		/* insert i into top[] (sorted), keeping the variety rule */
		int32_t same = 0;
		for (int32_t j = 0; j < nt; j++)
			same += cost[top[j]] == cost[i] && mru[top[j]] == mru[i];
		if (same >= 2) {
			/* replace the worse of the two when i beats it */
			int32_t w = -1;
			for (int32_t j = 0; j < nt; j++)
				if (cost[top[j]] == cost[i] && mru[top[j]] == mru[i])
					w = j;
			if (!ch_before(c, cand[i], cost[i], mru[i], cand[top[w]],
				       cost[top[w]], mru[top[w]]))
				continue;
			memmove(top + w, top + w + 1,
				(size_t)(nt - w - 1) * sizeof *top);
			nt--;
		}
		int32_t j = nt < CH_TOP ? nt++ : CH_TOP;
		while (j > 0 && ch_before(c, cand[i], cost[i], mru[i],
					  cand[top[j - 1]], cost[top[j - 1]],
					  mru[top[j - 1]])) {
			if (j < CH_TOP)
				top[j] = top[j - 1];
			j--;
		}
		if (j < CH_TOP)
			top[j] = i;
	}
	return nt;
}

/* The cost of the best chain to follow x once x's inputs count as
 * brought in (ch_partner); -1 when no other chain is left. */
static int64_t ch_follow_cost(chsim *c, int32_t x, int32_t claim)
{
	int64_t follow = -1;
	ch_partner(c, x);
	for (int32_t j = 0; j < c->ncand; j++) {
		int32_t y = c->cand[j];
		int64_t ym;
		if (y == x || c->started[y])
			continue;
		int64_t yc = ch_cost(c, y, claim, &ym);
		if (follow < 0 || yc < follow)
			follow = yc;
	}
	return follow;
}

/* The chain to start among cand[0..ncand) with their costs: the best by
 * itself, or, when a second chain would fit beside it, the best together
 * with the best chain to follow it (the partner's inputs count as brought
 * in): chains that run side by side share what they read.  Only the
 * leaders (ch_leaders) are tried. */
static int32_t ch_pick(chsim *c, int32_t claim)
{
	const ds_graph *g = c->g;
	if (c->ncand == 0)
		return -1;
	int32_t top[CH_TOP] = {0};
	int32_t nt = ch_leaders(c, top);
	int32_t best = top[0];
	int32_t b0 = c->cbuf[c->cand[best]];
	int m = g->buf_mem[b0];
	if (c->cused[m] + 2 * g->buf_size[b0] > g->caps.cap[m] || c->ncand < 2)
		return c->cand[best];
	int64_t best_total = -1;
	for (int32_t i = 0; i < nt; i++) {
		int64_t follow = ch_follow_cost(c, c->cand[top[i]], claim);
		int64_t total = c->ccost[top[i]] + (follow < 0 ? 0 : follow);
		if (best_total < 0 || total < best_total) {
			best_total = total;
			best = top[i];
		}
	}
	c->pst++;
	return c->cand[best];
}

/* How many of the inputs all chains of the last group read (icnt[x] ==
 * nprev, ist[x] == gst) chain ch reads; *other: whether it reads any other
 * input of that group. */
static int32_t ch_reads(chsim *c, int32_t ch, bool *other)
{
	const int32_t *cnt = c->icnt, *st = c->ist, stamp = c->gst;
	const int32_t ng = c->nprev;
	int32_t common = 0;
	*other = false;
	c->st++;
	for (int32_t si = c->soff[ch]; si < c->soff[ch + 1]; si++)
		for (int32_t k = c->ioff[si]; k < c->ioff[si + 1]; k++) {
			int32_t x = c->iv[k];
			if (c->stamp[x] == c->st || st[x] != stamp)
				continue;
			c->stamp[x] = c->st;
			common += cnt[x] == ng;
			*other |= cnt[x] < ng;
		}
	return common;
}

/* How many inputs every chain of the group that just ended
 * (prevg[0..nprev)) read, counted in icnt[] and ist[] under a new stamp
 * gst. */
static int32_t ch_common_inputs(chsim *c)
{
	const int32_t *grp = c->prevg, ng = c->nprev;
	int32_t *cnt = c->icnt, *st = c->ist, stamp = ++c->gst;
	int32_t ncommon = 0;
	for (int32_t i = 0; i < ng; i++) {
		c->st++;
		for (int32_t si = c->soff[grp[i]]; si < c->soff[grp[i] + 1]; si++)
			for (int32_t k = c->ioff[si]; k < c->ioff[si + 1]; k++) {
				int32_t x = c->iv[k];
				if (c->stamp[x] == c->st)
					continue;
				c->stamp[x] = c->st;
				if (st[x] != stamp) {
					st[x] = stamp;
					cnt[x] = 0;
				}
				ncommon += ++cnt[x] == ng;
			}
	}
	return ncommon;
}

/* A turn: the group of chains that just ended (prevg[0..nprev), two or more)
 * read some inputs in common, and the chain chosen next, pick, reads none
 * of the others: the group's stationary data is done with and the next
 * band starts, here across the one just run.  The way the simulation
 * turns is the locally cheapest, which can cut the remaining work into
 * ever shorter bands; the other way is to keep the common inputs: out[0],
 * out[1] get the best two candidates (cand[0..ncand) with their costs)
 * that read all of them, the second judged with the first's inputs
 * counted as brought in, for the caller to try.  Left as they are when
 * this is no turn.  O(inputs of the group and of the candidates). */
static void ch_turn(chsim *c, int32_t pick, int32_t *out)
{
	const int32_t n = c->ncand;
	const int32_t *cand = c->cand;
	const int64_t *cost = c->ccost, *mru = c->cmru;
	int32_t ncommon = ch_common_inputs(c);
	if (ncommon == 0)
		return;
	bool other;
	ch_reads(c, pick, &other);
	if (other)
		return;
	int32_t lead = -1;
	for (int32_t i = 0; i < n; i++) {
		if (ch_reads(c, cand[i], &other) ==
			    ncommon &&
		    (lead < 0 || ch_before(c, cand[i], cost[i], mru[i],
					   cand[lead], cost[lead], mru[lead])))
			lead = i;
	}
	if (lead < 0)
		return;
	int32_t x = cand[lead], y = -1;
	int64_t yc = 0, ym = 0;
	ch_partner(c, x);
	for (int32_t i = 0; i < n; i++) {
		if (cand[i] == x)
			continue;
		if (ch_reads(c, cand[i], &other) !=
		    ncommon)
			continue;
		int64_t m, cc = ch_cost(c, cand[i], -1, &m);
		if (y < 0 || ch_before(c, cand[i], cc, m, y, yc, ym)) {
			y = cand[i];
			yc = cc;
			ym = m;
		}
	}
	c->pst++;
	if (y < 0)
		return;
	out[0] = x;
	out[1] = y;
}

/* ---- building the chains ---- */

/* Every per-node and per-buffer array of c from its arena; false when one
 * failed. */
static bool ch_alloc(chsim *c)
{
	ds_arena *a = c->a;
	const ds_graph *g = c->g;
	const size_t n = (size_t)g->n, nb = (size_t)g->nbuf;
	c->usr = ds_arena_alloc(a, (size_t)g->user_off[nb] + 1, sizeof *c->usr);
	c->isstep = ds_arena_alloc(a, n, sizeof *c->isstep);
	c->key = ds_arena_alloc(a, n, sizeof *c->key);
	c->anchor = ds_arena_alloc(a, n, sizeof *c->anchor);
	c->mark = ds_arena_alloc(a, n, sizeof *c->mark);
	c->tmp = ds_arena_alloc(a, n, sizeof *c->tmp);
	c->live = ds_arena_alloc(a, nb, sizeof *c->live);
	c->next = ds_arena_alloc(a, nb, sizeof *c->next);
	c->reslist = ds_arena_alloc(a, nb, sizeof *c->reslist);
	c->started = ds_arena_alloc(a, nb, 1);
	c->cbuf = ds_arena_alloc(a, nb, sizeof *c->cbuf);
	c->soff = ds_arena_alloc(a, nb + 1, sizeof *c->soff);
	c->res = ds_arena_alloc(a, nb, 1);
	c->last = ds_arena_alloc(a, nb, sizeof *c->last);
	c->uses = ds_arena_alloc(a, nb, sizeof *c->uses);
	c->stamp = ds_arena_alloc(a, nb, sizeof *c->stamp);
	c->claim = ds_arena_alloc(a, nb, sizeof *c->claim);
	c->pclaim = ds_arena_alloc(a, nb, sizeof *c->pclaim);
	c->cand = ds_arena_alloc(a, nb, sizeof *c->cand);
	c->ccost = ds_arena_alloc(a, nb, sizeof *c->ccost);
	c->cmru = ds_arena_alloc(a, nb, sizeof *c->cmru);
	c->wnext = ds_arena_alloc(a, nb + 1, sizeof *c->wnext);
	c->wprev = ds_arena_alloc(a, nb + 1, sizeof *c->wprev);
	c->prevg = ds_arena_alloc(a, nb + 1, sizeof *c->prevg);
	c->icnt = ds_arena_alloc(a, nb + 1, sizeof *c->icnt);
	c->ist = ds_arena_alloc(a, nb + 1, sizeof *c->ist);
#ifndef NDEBUG
	c->dbg = ds_arena_alloc(a, nb + 1, sizeof *c->dbg);
#endif
	return !a->failed;
}

/* The users of each buffer by stage 1 position, and the chains with their
 * steps (cbuf, soff), numbered in stage 1's order of their ALLOCs (ties
 * between chains go by that number, not by the numbering of the buffers);
 * returns the number of steps. */
static int32_t ch_build(chsim *c)
{
	const ds_graph *g = c->g;
	const int32_t nb = g->nbuf;
	memcpy(c->usr, g->user, (size_t)g->user_off[nb] * sizeof *c->usr);
	csr u = {g->user_off, c->usr};
	dlr_sort_lists(c->pos1, &u, nb);
	int32_t nsteps = 0;
	for (int32_t i = 0; i < g->n; i++) {
		if (g->kind[c->order[i]] != DS_ALLOC)
			continue;
		int32_t b = g->buf[c->order[i]];
		int32_t *ub = c->usr + g->user_off[b];
		int32_t nu = g->user_off[b + 1] - g->user_off[b];
		if (!dlr_is_chain(g, ub, nu, b))
			continue;
		c->cbuf[c->nch] = b;
		c->soff[c->nch + 1] = c->soff[c->nch] + nu;
		c->nch++;
		nsteps += nu;
	}
	return nsteps;
}

/* Room for need entries in *v (capacity *cap, doubling); false when the
 * arena failed. */
static bool ch_room_for(ds_arena *a, int32_t **v, int64_t *cap, int64_t need)
{
	if (need <= *cap)
		return true;
	int64_t n = *cap < 16 ? 16 : *cap;
	while (n < need)
		n *= 2;
	int32_t *p = ds_arena_grow(a, *v, (size_t)n, sizeof *p);
	if (!p)
		return false;
	*v = p;
	*cap = n;
	return true;
}

/* What step u takes along into tmp[0..): itself, its operation preds that
 * are no step, and theirs (each level in stage 1's order), marked ms;
 * returns how many. */
static int32_t ch_takes(chsim *c, int32_t u, int32_t ms)
{
	const ds_graph *g = c->g;
	int32_t nt = 0;
	c->tmp[nt++] = u;
	c->mark[u] = ms;
	for (int32_t lvl = 0, lo = 0; lvl < 2; lvl++) {
		int32_t hi = nt;
		for (int32_t q = lo; q < hi; q++) {
			int32_t x = c->tmp[q];
			for (int32_t k = g->pred_off[x]; k < g->pred_off[x + 1];
			     k++) {
				int32_t p = g->pred[k];
				if (g->kind[p] != DS_OP || c->isstep[p] ||
				    c->mark[p] == ms)
					continue;
				c->mark[p] = ms;
				c->tmp[nt++] = p;
			}
		}
		/* the level in stage 1's order, not in the Ids' (the inputs
		 * are read in this order) */
		for (int32_t q = hi + 1; q < nt; q++) {
			int32_t x = c->tmp[q], j = q;
			for (; j > hi && c->pos1[c->tmp[j - 1]] > c->pos1[x]; j--)
				c->tmp[j] = c->tmp[j - 1];
			c->tmp[j] = x;
		}
		lo = hi;
	}
	return nt;
}

/* The inputs of step si of chain ch, whose operations are tmp[0..nt)
 * (marked ms): the buffers they use that have a user outside the step;
 * false when the arena failed. */
static bool ch_inputs(chsim *c, int32_t ch, int32_t si, int32_t nt,
		      int32_t ms)
{
	const ds_graph *g = c->g;
	for (int32_t q = 0; q < nt; q++) {
		int32_t x = c->tmp[q];
		for (int32_t k = g->use_off[x]; k < g->use_off[x + 1]; k++) {
			int32_t bb = g->use[k];
			if (bb == c->cbuf[ch] || c->stamp[bb] == ms)
				continue;
			c->stamp[bb] = ms;
			bool local = true;
			for (int32_t j = g->user_off[bb]; j < g->user_off[bb + 1];
			     j++)
				local &= c->mark[g->user[j]] == ms;
			if (local)
				continue;
			if (!ch_room_for(c->a, &c->iv, &c->cap_i, c->ni + 1))
				return false;
			c->iv[c->ni++] = bb;
			c->uses[bb]++;
		}
	}
	c->ioff[si + 1] = (int32_t)c->ni;
	return true;
}

/* The steps of the chains (sv), what each takes along (coff, cv: its
 * operation preds that are no step, and theirs) and reads (ioff, iv:
 * buffers of those not wholly inside; both lists allocated even when
 * empty, so that c->iv + c->ioff[si] is always a pointer into one);
 * false when the arena failed. */
static bool ch_steps(chsim *c, int32_t nsteps)
{
	const ds_graph *g = c->g;
	c->sv = ds_arena_alloc(c->a, (size_t)nsteps, sizeof *c->sv);
	c->ioff = ds_arena_alloc(c->a, (size_t)nsteps + 1, sizeof *c->ioff);
	c->coff = ds_arena_alloc(c->a, (size_t)nsteps + 1, sizeof *c->coff);
	if (c->a->failed || !ch_room_for(c->a, &c->iv, &c->cap_i, 1) ||
	    !ch_room_for(c->a, &c->cv, &c->cap_c, 1))
		return false;
	for (int32_t ch = 0; ch < c->nch; ch++) {
		int32_t b = c->cbuf[ch];
		memcpy(c->sv + c->soff[ch], c->usr + g->user_off[b],
		       (size_t)(c->soff[ch + 1] - c->soff[ch]) * sizeof *c->sv);
	}
	for (int32_t i = 0; i < nsteps; i++)
		c->isstep[c->sv[i]] = 1;
	int32_t ms = 0;
	for (int32_t ch = 0; ch < c->nch; ch++)
		for (int32_t si = c->soff[ch]; si < c->soff[ch + 1]; si++) {
			int32_t nt = ch_takes(c, c->sv[si], ++ms);
			if (!ch_room_for(c->a, &c->cv, &c->cap_c, c->ncl + nt))
				return false;
			for (int32_t q = 0; q < nt; q++)
				c->cv[c->ncl++] = c->tmp[q];
			c->coff[si + 1] = (int32_t)c->ncl;
			if (!ch_inputs(c, ch, si, nt, ms))
				return false;
		}
	return true;
}

/* Each chain's distinct inputs (dioff, div), in the order its steps
 * first read them: ch_cost's list, which needs no stamps then (it is
 * evaluated far more often than built).  False when the arena failed. */
static bool ch_distinct(chsim *c)
{
	c->dioff = ds_arena_alloc(c->a, (size_t)c->nch + 1, sizeof *c->dioff);
	c->div = ds_arena_alloc(c->a, (size_t)c->ni + 1, sizeof *c->div);
	if (c->a->failed)
		return false;
	/* the stamps ch_inputs left (ch_simulate clears them again) */
	for (int32_t b = 0; b < c->g->nbuf; b++)
		c->stamp[b] = 0;
	int32_t n = 0;
	for (int32_t ch = 0; ch < c->nch; ch++) {
		int32_t st = ch + 1;
		for (int32_t k = c->ioff[c->soff[ch]];
		     k < c->ioff[c->soff[ch + 1]]; k++)
			if (c->stamp[c->iv[k]] != st) {
				c->stamp[c->iv[k]] = st;
				c->div[n++] = c->iv[k];
			}
		c->dioff[ch + 1] = n;
	}
	return true;
}

/* The chains not started, a list (wnext, wprev, whead) in stage 1's order
 * of their first steps, ties by chain: each node's chains are linked
 * through wnext first, then appended as order[] reaches the node. */
static void ch_waitlist(chsim *c)
{
	const int32_t n = c->g->n;
	for (int32_t v = 0; v < n; v++)
		c->tmp[v] = -1;
	for (int32_t ch = c->nch - 1; ch >= 0; ch--) {
		int32_t v = c->sv[c->soff[ch]];
		c->wnext[ch] = c->tmp[v];
		c->tmp[v] = ch;
	}
	c->whead = -1;
	for (int32_t i = 0, prev = -1; i < n; i++)
		for (int32_t ch = c->tmp[c->order[i]]; ch >= 0;) {
			int32_t nx = c->wnext[ch];
			c->wprev[ch] = prev;
			c->wnext[ch] = -1;
			if (prev >= 0)
				c->wnext[prev] = ch;
			else
				c->whead = ch;
			prev = ch;
			ch = nx;
		}
}

/* Stage 1's places of the steps, in order (the anchors); the keys start
 * as stage 1's; mark[] now says: taken along by an executed step. */
static void ch_anchors(chsim *c)
{
	const int32_t n = c->g->n;
	c->na = 0;
	for (int32_t i = 0; i < n; i++)
		if (c->isstep[c->order[i]])
			c->anchor[c->na++] = i;
	for (int32_t v = 0; v < n; v++) {
		c->key[v] = c->pos1[v];
		c->mark[v] = 0;
	}
}

/* ---- the simulation ---- */

/* The simulation's own choice of the chain to start, or -1: the inputs
 * the running chains will bring anyway are claimed, the first CH_WINDOW
 * chains waiting that fit are costed, ch_pick picks, and ch_turn records
 * the other way at a turn. */
static int32_t ch_choose(chsim *c)
{
	const ds_graph *g = c->g;
	int32_t claim = ++c->cst;
	for (int32_t l = 0; l < c->nlive; l++)
		for (int32_t si = c->next[l]; si < c->soff[c->live[l] + 1]; si++)
			for (int32_t k = c->ioff[si]; k < c->ioff[si + 1]; k++)
				c->claim[c->iv[k]] = claim;
	c->pst++; /* no partner yet */
	c->ncand = 0;
	for (int32_t ch = c->whead, nw = 0; ch >= 0 && nw < CH_WINDOW;
	     ch = c->wnext[ch], nw++) {
		int32_t b = c->cbuf[ch];
		int m = g->buf_mem[b];
		DS_ASSERT(!c->started[ch]);
		if (c->cused[m] + g->buf_size[b] > g->caps.cap[m])
			continue;
		c->cand[c->ncand] = ch;
		c->ccost[c->ncand] = ch_cost(c, ch, claim, &c->cmru[c->ncand]);
		c->ncand++;
	}
	int32_t pick = ch_pick(c, claim);
	if (pick >= 0 && c->o->turn_out && c->nlive == 0 && c->nprev >= 2)
		ch_turn(c, pick, c->o->turn_out + 2 * (size_t)c->done);
	return pick;
}

/* Chain ch starts: it leaves the waiting list and runs. */
static void ch_start(chsim *c, int32_t ch)
{
	const ds_graph *g = c->g;
	c->nprev = 0;
	if (c->o->ref_out)
		c->o->ref_out[c->done + c->nlive] = ch;
	c->started[ch] = 1;
	if (c->wprev[ch] >= 0)
		c->wnext[c->wprev[ch]] = c->wnext[ch];
	else
		c->whead = c->wnext[ch];
	if (c->wnext[ch] >= 0)
		c->wprev[c->wnext[ch]] = c->wprev[ch];
	c->live[c->nlive] = ch;
	c->next[c->nlive++] = c->soff[ch];
	c->cused[g->buf_mem[c->cbuf[ch]]] += g->buf_size[c->cbuf[ch]];
}

/* Starts chains while their memory has room: a whole order given, or its
 * first starts, then the simulation's own choices. */
static void ch_fill(chsim *c)
{
	const ds_graph *g = c->g;
	for (;;) {
		int32_t ch;
		if (c->forced || c->nstart < c->o->nprefix) {
			if (c->nstart == c->nch)
				break;
			ch = (c->forced ? c->forced : c->o->prefix)[c->nstart];
			int32_t b = c->cbuf[ch];
			int m = g->buf_mem[b];
			if (c->nlive > 0 &&
			    c->cused[m] + g->buf_size[b] > g->caps.cap[m])
				break;
		} else if ((ch = ch_choose(c)) < 0) {
			break;
		}
		c->nstart++;
		ch_start(c, ch);
	}
}

/* Step si reads its inputs in the model: missing ones are brought in (LRU
 * victims), and leave when no step reads them any more. */
static void ch_read(chsim *c, int32_t si)
{
	const ds_graph *g = c->g;
	c->st++;
	for (int32_t k = c->ioff[si]; k < c->ioff[si + 1]; k++)
		c->stamp[c->iv[k]] = c->st;
	c->tick++;
	for (int32_t k = c->ioff[si]; k < c->ioff[si + 1]; k++) {
		int32_t x = c->iv[k];
		int m = g->buf_mem[x];
		if (!c->res[x]) {
			ch_room(c, m, g->buf_size[x]);
			c->res[x] = 1;
			c->nin++;
			c->used[m] += g->buf_size[x];
			c->reslist[c->nres++] = x;
		}
		c->last[x] = c->tick;
		if (--c->uses[x] == 0) {
			c->res[x] = 0;
			c->nin--;
			c->used[m] -= g->buf_size[x];
		}
	}
}

/* Compacts the resident list when most of it left the model (and drops
 * repeats): ch_room scans it, so it stays O(what the memories hold). */
static void ch_compact(chsim *c)
{
	if (c->nres <= 2 * c->nin + 16)
		return;
	int32_t j = 0, st = ++c->st;
	for (int32_t i = 0; i < c->nres; i++) {
		int32_t x = c->reslist[i];
		if (c->res[x] && c->stamp[x] != st) {
			c->stamp[x] = st;
			c->reslist[j++] = x;
		}
	}
	c->nres = j;
}

/* Step si takes the next anchor, with the operations it takes along (a
 * step shared by two chains takes its place once). */
static void ch_lay(chsim *c, int32_t si)
{
	if (c->mark[c->sv[si]])
		return;
	for (int32_t k = c->coff[si]; k < c->coff[si + 1]; k++) {
		int32_t x = c->cv[k];
		if (!c->mark[x]) {
			c->mark[x] = 1;
			c->key[x] = c->anchor[c->t];
		}
	}
	c->t++;
}

/* The chains that ran their last step end; they form the group a turn
 * looks back on. */
static void ch_retire(chsim *c)
{
	const ds_graph *g = c->g;
	for (int32_t l = 0; l < c->nlive;) {
		int32_t ch = c->live[l];
		if (c->next[l] < c->soff[ch + 1]) {
			l++;
			continue;
		}
		c->cused[g->buf_mem[c->cbuf[ch]]] -= g->buf_size[c->cbuf[ch]];
		c->prevg[c->nprev++] = ch;
		c->done++;
		memmove(c->live + l, c->live + l + 1,
			(size_t)(c->nlive - l - 1) * sizeof *c->live);
		memmove(c->next + l, c->next + l + 1,
			(size_t)(c->nlive - l - 1) * sizeof *c->next);
		c->nlive--;
	}
}

#ifndef NDEBUG
/* The model's counters recomputed from scratch: bytes and buffers in the
 * model per memory, each of them on the resident list with reads left, the
 * reads left in all (the steps not run), the running chains' bytes.
 * O(N_buf + C); dbg[] is zero before and after. */
static void ch_check(const chsim *c)
{
	const ds_graph *g = c->g;
	int64_t used[DS_NMEM] = {0}, cused[DS_NMEM] = {0}, reads = 0, uses = 0;
	int32_t nin = 0;
	for (int32_t i = 0; i < c->nres; i++)
		c->dbg[c->reslist[i]] = 1;
	for (int32_t x = 0; x < g->nbuf; x++) {
		DS_ASSERT(c->uses[x] >= 0);
		uses += c->uses[x];
		if (c->res[x]) {
			DS_ASSERT(c->dbg[x] && c->uses[x] > 0);
			used[g->buf_mem[x]] += g->buf_size[x];
			nin++;
		}
	}
	for (int32_t i = 0; i < c->nres; i++)
		c->dbg[c->reslist[i]] = 0;
	for (int32_t ch = 0; ch < c->nch; ch++)
		if (!c->started[ch])
			reads += c->ioff[c->soff[ch + 1]] - c->ioff[c->soff[ch]];
	for (int32_t l = 0; l < c->nlive; l++) {
		int32_t ch = c->live[l];
		reads += c->ioff[c->soff[ch + 1]] - c->ioff[c->next[l]];
		cused[g->buf_mem[c->cbuf[ch]]] += g->buf_size[c->cbuf[ch]];
	}
	DS_ASSERT(nin == c->nin && reads == uses);
	for (int m = 0; m < DS_NMEM; m++)
		DS_ASSERT(used[m] == c->used[m] && cused[m] == c->cused[m]);
	(void)nin;
	(void)reads;
	(void)uses;
}
#endif

/* The simulation: chains start as ch_fill says, each running chain takes
 * one step in turn, the ended ones leave; the steps are laid over the
 * anchors.  O(C W S I) (ch_choose), plus the model's evictions. */
static void ch_simulate(chsim *c)
{
	const int32_t nb = c->g->nbuf;
	for (int32_t b = 0; b < nb; b++)
		c->stamp[b] = c->ist[b] = 0;
	c->st = c->cst = c->pst = 1;
	while (c->done < c->nch) {
		ch_fill(c);
		DS_ASSERT(c->nlive > 0);
		for (int32_t l = 0; l < c->nlive; l++) {
			int32_t si = c->next[l]++;
			ch_read(c, si);
			ch_compact(c);
			ch_lay(c, si);
		}
		ch_retire(c);
#ifndef NDEBUG
		/* at rounds 1, 2, 4, ... and every 1024th: O(N_buf) each */
		c->rounds++;
		if ((c->rounds & (c->rounds - 1)) == 0 || c->rounds % 1024 == 0)
			ch_check(c);
#endif
	}
	DS_ASSERT(c->t == c->na);
}

int dlr_ch_order(const ds_graph *g, const int32_t *order, const int32_t *pos1,
	     const chopts *o, int32_t *out, bool *any, ds_err *e)
{
	ds_arena a;
	ds_arena_init(&a, g->heap);
	chsim c = {.g = g, .order = order, .pos1 = pos1, .o = o, .a = &a};
	for (int m = 0; m < DS_NMEM; m++)
		c.icap[m] = (int64_t)(o->share * (double)g->caps.cap[m]);
	int rc = DS_OK;
	*any = false;
	if (!ch_alloc(&c))
		goto oom;
	int32_t nsteps = ch_build(&c);
	*any = c.nch > 1;
	if (c.nch < 2)
		goto out;
	if (!ch_steps(&c, nsteps) || !ch_distinct(&c))
		goto oom;
	ch_waitlist(&c);
	ch_anchors(&c);
	/* the pilot chooses the order of the chains (or it is given), or
	 * the simulation does as it goes */
	if (o->pilot > 0 || o->force) {
		int32_t *forced = ds_arena_alloc(&a, (size_t)c.nch, sizeof *forced);
		if (!forced)
			goto oom;
		if (o->force)
			memcpy(forced, o->force, (size_t)c.nch * sizeof *forced);
		else if ((rc = dlr_pl_order(&c, o, forced, any, e)) || !*any)
			goto out;
		c.forced = forced;
	}
	ch_simulate(&c);
	rc = dlr_po_follow(g, order, pos1, c.key, false, out, e);
	goto out;
oom:
	rc = ds_fail(e, DS_ENOMEM, "out of memory");
out:
	ds_arena_free(&a);
	return rc;
}
