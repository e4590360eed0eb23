/* ds_dlr_greedy.c: the reuse pilot's greedy over the chains (rg_).
 *
 * Requires: a pilot whose index (cioff .. uv, first, reserve) dlr_pl_order
 * built, and its arrays allocated; forced[0..nf) distinct chains.
 * Guarantees: out[0..nch) a permutation of the chains: forced[] first, in
 * that order, then the greedy's choices; the ranked choices at each start
 * from rank_from on.  A pure function of the pilot's index, forced[] and
 * p->variant; it adds its work to p->work.
 * Cost: O(C (C I + T I U) + A (U + R)) for C chains with I distinct
 * inputs, T = PL_TOP ranked candidates, U chains per input, A accesses and
 * R resident inputs; a round where no chain fits beside the running ones
 * costs O(DS_NMEM) more, not O(C) (rg_fits_some).  The work units added
 * to p->work are those of the plain loops, whatever shortcut is taken:
 * the budgets, and so the plans, do not depend on it.
 *
 * The greedy starts the chain with the fewest bytes neither resident nor
 * brought by the running chains, then the one whose loads complete the
 * most other chains (data just loaded is used by all that need only it),
 * then recency, then stage 1; its model evicts dead data first, then the
 * data whose waiting chains are furthest from complete, then what the
 * running chains read.  Each chain's missing bytes (miss[]) are kept up to
 * date as inputs come and go, for the chains not started: each input's
 * readers not started stay at the front of its part of uv (rg_unlist),
 * so the loops over readers pass over no started chain (on Matmul_Case0
 * the greedy took 2.66 G of the schedule's 8.79 G instructions, and
 * skipping started chains saved 0.41 G of them, plans unchanged).  With
 * assertions on, both are recomputed from scratch at intervals
 * (rg_check). */
#include "ds_dlr.h"

#include <string.h>

/* Removes b from the greedy's resident list of m. */
static void rg_drop(pilot *p, int m, int32_t b)
{
	for (int32_t i = 0; i < p->nrl[m]; i++)
		if (p->rl[m][i] == b) {
			p->rl[m][i] = p->rl[m][--p->nrl[m]];
			break;
		}
	p->res[b] = 0;
}

/* Is x resident or claimed (as of the last rg_flip on it)? */
static bool rg_have(const pilot *p, int32_t x)
{
	return p->have[x];
}

/* x became present or absent (have[] follows res[] and claim[] here):
 * the chains reading it miss it or not. */
static void rg_flip(pilot *p, int32_t x, bool before)
{
	bool now = p->res[x] || p->claim[x] > 0;
	p->have[x] = now;
	if (now == before)
		return;
	int64_t d = now ? -p->c->g->buf_size[x] : p->c->g->buf_size[x];
	const int32_t *uv = p->uv + p->uoff[x], n = p->left[x];
	for (int32_t k = 0; k < n; k++)
		p->miss[uv[k]] += d;
	p->work += p->uoff[x + 1] - p->uoff[x];
}

static void rg_unres(pilot *p, int32_t x)
{
	bool before = rg_have(p, x);
	int m = p->c->g->buf_mem[x];
	rg_drop(p, m, x);
	p->used[m] -= p->c->g->buf_size[x];
	rg_flip(p, x, before);
}

/* Eviction order, larger first: data nobody waits for, then data whose
 * waiting chains miss the most, then least recently used; what the
 * running chains still read goes last. */
static void rg_key(pilot *p, int32_t x, int *cat, int64_t *pr)
{
	if (p->claim[x] > 0) {
		*cat = 0;
		*pr = 0;
		return;
	}
	/* locals: this is the greedy's innermost loop */
	const int32_t *uv = p->uv + p->uoff[x], n = p->left[x];
	const int64_t *miss = p->miss;
	int64_t least = INT64_MAX;
	for (int32_t k = 0; k < n; k++)
		least = miss[uv[k]] < least ? miss[uv[k]] : least;
	p->work += p->uoff[x + 1] - p->uoff[x];
	*pr = least;
	*cat = n > 0 ? 1 : 2;
}

static void rg_room(pilot *p, int m, int64_t size)
{
	int64_t cap = p->c->g->caps.cap[m] - p->cused[m];
	while (p->used[m] + size > cap) {
		int32_t v = -1, vc = 0;
		int64_t vp = 0;
		for (int32_t j = 0; j < p->nrl[m]; j++) {
			int32_t y = p->rl[m][j];
			int cat;
			int64_t pr;
			if (p->stamp[y] == p->st)
				continue;
			rg_key(p, y, &cat, &pr);
			if (v < 0 || cat > vc || (cat == vc && pr > vp) ||
			    (cat == vc && pr == vp && p->last[y] < p->last[v])) {
				v = y;
				vc = cat;
				vp = pr;
			}
		}
		if (v < 0)
			return;
		rg_unres(p, v);
	}
}

/* Is a before b as the chain to start: fewer missing bytes, more chains
 * completed by its loads, more recent reuse, stage 1. */
static bool rg_before(const pilot *p, int32_t a, int64_t ba, int64_t ma,
		      int32_t b, int64_t bb, int64_t mb)
{
	if (p->miss[a] != p->miss[b])
		return p->miss[a] < p->miss[b];
	if (ba != bb)
		return ba > bb;
	if (ma != mb)
		return (p->variant & 2) ? ma < mb : ma > mb;
	return (p->variant & 1) ? p->first[a] > p->first[b]
				: p->first[a] < p->first[b];
}

/* Chains that nothing but ch's missing inputs keep from complete. */
static int64_t rg_completes(pilot *p, int32_t ch)
{
	const ds_graph *g = p->c->g;
	/* locals: the stores below could otherwise alias p and force its
	 * fields to be loaded again at every user (as in rg_key) */
	const int32_t *uv = p->uv, *uoff = p->uoff, *left = p->left;
	int32_t *redst = p->redst, *touch = p->touch;
	int64_t *red = p->red;
	const int32_t stamp = ++p->redstamp;
	int32_t nt = 0;
	int64_t n = 0, work = 0;
	for (int32_t k = p->cioff[ch]; k < p->cioff[ch + 1]; k++) {
		int32_t x = p->civ[k];
		if (rg_have(p, x))
			continue;
		const int64_t size = g->buf_size[x];
		const int32_t end = uoff[x] + left[x];
		for (int32_t j = uoff[x]; j < end; j++) {
			int32_t u = uv[j];
			if (redst[u] != stamp) {
				redst[u] = stamp;
				red[u] = 0;
				touch[nt++] = u;
			}
			red[u] += size;
		}
		work += uoff[x + 1] - uoff[x];
	}
	p->work += work;
	/* ch's own miss is its red when it misses anything (it is then
	 * touched) */
	for (int32_t i = 0; i < nt; i++)
		n += p->miss[touch[i]] == red[touch[i]];
	return nt > 0 ? n - 1 : 0;
}

/* The latest use of a resident input of chain ch, -1 when none. */
static int64_t rg_mru(const pilot *p, int32_t ch)
{
	int64_t mru = -1;
	for (int32_t k = p->cioff[ch]; k < p->cioff[ch + 1]; k++)
		if (p->res[p->civ[k]] && p->last[p->civ[k]] > mru)
			mru = p->last[p->civ[k]];
	return mru;
}

/* Does some chain not started fit beside the running ones?  The
 * smallest not started of each memory tells (bysz, byat: the started
 * ones only grow in a run).  O(DS_NMEM) amortised. */
static bool rg_fits_some(pilot *p)
{
	const chsim *c = p->c;
	const ds_graph *g = c->g;
	for (int m = 0; m < DS_NMEM; m++) {
		int32_t i = p->byat[m];
		while (i < p->byoff[m + 1] && p->started[p->bysz[i]])
			i++;
		p->byat[m] = i;
		if (i < p->byoff[m + 1] &&
		    p->cused[m] + g->buf_size[c->cbuf[p->bysz[i]]] <=
			    g->caps.cap[m])
			return true;
	}
	return false;
}

/* Ranks the chains that may start now into cand[0..*n), best first (the
 * PL_TOP best by missing bytes and reuse fully ranked). */
static void rg_rank(pilot *p, int32_t *n)
{
	chsim *c = p->c;
	const ds_graph *g = c->g;
	int32_t nc = 0;
	*n = 0;
	if (!rg_fits_some(p))
		return; /* the scan below would find none */
	for (int32_t ch = 0; ch < c->nch; ch++) {
		int32_t b = c->cbuf[ch];
		int m = g->buf_mem[b];
		if (p->started[ch] ||
		    p->cused[m] + g->buf_size[b] > g->caps.cap[m])
			continue;
		p->work += p->cioff[ch + 1] - p->cioff[ch];
		p->cben[ch] = 0;
		/* insertion into the sorted top, the rest appended; the
		 * recency only for a chain that may enter the top (cmru is
		 * read for those alone) */
		int32_t j = nc++;
		int32_t lim = j < PL_TOP ? j : PL_TOP;
		p->cand[j] = ch;
		if (j >= PL_TOP && p->miss[ch] > p->miss[p->cand[PL_TOP - 1]])
			continue; /* after the top by missing bytes alone */
		int64_t mru = rg_mru(p, ch);
		p->cmru[ch] = mru;
		if (j >= PL_TOP) {
			if (!rg_before(p, ch, 0, mru, p->cand[PL_TOP - 1], 0,
				       p->cmru[p->cand[PL_TOP - 1]]))
				continue;
			p->cand[j] = p->cand[PL_TOP - 1];
			lim = PL_TOP - 1;
		}
		while (lim > 0 && rg_before(p, ch, 0, mru, p->cand[lim - 1], 0,
					    p->cmru[p->cand[lim - 1]])) {
			p->cand[lim] = p->cand[lim - 1];
			lim--;
		}
		p->cand[lim] = ch;
	}
	int32_t top = nc < PL_TOP ? nc : PL_TOP;
	for (int32_t i = 0; i < top; i++)
		p->cben[p->cand[i]] = rg_completes(p, p->cand[i]);
	for (int32_t i = 1; i < top; i++) {
		int32_t x = p->cand[i], j = i;
		while (j > 0 && rg_before(p, x, p->cben[x], p->cmru[x],
					  p->cand[j - 1], p->cben[p->cand[j - 1]],
					  p->cmru[p->cand[j - 1]])) {
			p->cand[j] = p->cand[j - 1];
			j--;
		}
		p->cand[j] = x;
	}
	*n = nc;
}

/* The choices the pilot tries among the ranked cand[0..nc): the best of
 * each (missing bytes, completions) in rank order, PL_K at most; chains
 * alike in both are mostly interchangeable, and the choice that matters
 * is between unlike ones (complete what is loaded, or load more). */
static void rg_choices(pilot *p, int32_t nc, int32_t *r, int32_t *nr)
{
	int32_t n = 0;
	for (int32_t i = 0; i < nc && n < PL_K; i++) {
		int32_t x = p->cand[i];
		bool dup = false;
		for (int32_t j = 0; j < n && !dup; j++)
			dup = p->miss[r[j]] == p->miss[x] &&
			      p->cben[r[j]] == p->cben[x];
		if (!dup)
			r[n++] = x;
	}
	*nr = n;
}

/* The greedy's state before its first start. */
static void rg_reset(pilot *p)
{
	const chsim *c = p->c;
	const ds_graph *g = c->g;
	for (int32_t ch = 0; ch < c->nch; ch++) {
		p->started[ch] = 0;
		p->miss[ch] = 0;
		for (int32_t k = p->cioff[ch]; k < p->cioff[ch + 1]; k++)
			p->miss[ch] += g->buf_size[p->civ[k]];
	}
	for (int32_t b = 0; b < g->nbuf; b++) {
		p->res[b] = p->have[b] = 0;
		p->claim[b] = 0;
		p->left[b] = p->uoff[b + 1] - p->uoff[b];
		p->last[b] = 0;
	}
	for (int m = 0; m < DS_NMEM; m++) {
		p->nrl[m] = 0;
		p->used[m] = p->cused[m] = 0;
		p->byat[m] = p->byoff[m];
	}
	p->tick = 0;
	p->nout = p->nlive = p->done = 0;
}

/* The next chain to start, or -1 when none may now: the next forced one
 * while its memory has room (ranking the choices from rank_from on), then
 * the greedy's best; rank[nout * PL_K ..] gets the choices there. */
static int32_t rg_next(pilot *p, const int32_t *forced, int32_t nf,
		       int32_t rank_from, int32_t *rank, int32_t *nrank)
{
	const chsim *c = p->c;
	const ds_graph *g = c->g;
	int32_t *r = rank + (size_t)p->nout * PL_K, nc;
	if (p->nout >= c->nch)
		return -1;
	if (p->nout < nf) {
		int32_t ch = forced[p->nout], b = c->cbuf[ch];
		int m = g->buf_mem[b];
		if (p->nlive > 0 && p->cused[m] + g->buf_size[b] > g->caps.cap[m])
			return -1;
		if (p->nout >= rank_from) {
			rg_rank(p, &nc);
			rg_choices(p, nc, r, &nrank[p->nout]);
		}
		return ch;
	}
	rg_rank(p, &nc);
	if (nc == 0 && p->nlive > 0)
		return -1;
	rg_choices(p, nc, r, &nrank[p->nout]);
	if (nc > 0)
		return p->cand[0];
	/* nothing fits beside nothing: cannot happen (ds_check_fits); stay
	 * total */
	int32_t ch = 0;
	while (p->started[ch])
		ch++;
	return ch;
}

/* Chain ch leaves the readers not started of each of its inputs: it
 * trades places in uv with the last of them. */
static void rg_unlist(pilot *p, int32_t ch)
{
	for (int32_t k = p->cioff[ch]; k < p->cioff[ch + 1]; k++) {
		int32_t x = p->civ[k];
		int32_t at = p->upos[k], end = p->uoff[x] + --p->left[x];
		int32_t kw = p->ukof[end];
		p->uv[at] = p->uv[end];
		p->ukof[at] = kw;
		p->upos[kw] = at;
		p->uv[end] = ch;
		p->ukof[end] = k;
		p->upos[k] = end;
	}
}

/* Chain ch starts: its inputs are claimed by a running chain. */
static void rg_start(pilot *p, int32_t ch, int32_t *out)
{
	const chsim *c = p->c;
	const ds_graph *g = c->g;
	p->started[ch] = 1;
	out[p->nout++] = ch;
	p->live[p->nlive] = ch;
	p->lnext[p->nlive++] = c->soff[ch];
	p->cused[g->buf_mem[c->cbuf[ch]]] += g->buf_size[c->cbuf[ch]];
	rg_unlist(p, ch);
	for (int32_t si = c->soff[ch]; si < c->soff[ch + 1]; si++)
		for (int32_t k = c->ioff[si]; k < c->ioff[si + 1]; k++) {
			int32_t x = c->iv[k];
			bool before = rg_have(p, x);
			p->claim[x]++;
			rg_flip(p, x, before);
		}
}

/* Step si reads its inputs: missing ones come in (rg_room's victims);
 * then its claims end, and data nobody will read again leaves. */
static void rg_step(pilot *p, int32_t si)
{
	const chsim *c = p->c;
	const ds_graph *g = c->g;
	/* the step's inputs, held apart from the byte stores below */
	const int32_t *in = c->iv + c->ioff[si];
	const int32_t nin = c->ioff[si + 1] - c->ioff[si];
	p->st++;
	for (int32_t k = 0; k < nin; k++)
		p->stamp[in[k]] = p->st;
	for (int32_t k = 0; k < nin; k++) {
		int32_t x = in[k];
		int m = g->buf_mem[x];
		p->tick++;
		if (!p->res[x]) {
			rg_room(p, m, g->buf_size[x]);
			bool before = rg_have(p, x);
			p->res[x] = 1;
			p->rl[m][p->nrl[m]++] = x;
			p->used[m] += g->buf_size[x];
			rg_flip(p, x, before);
		}
		p->last[x] = p->tick;
	}
	for (int32_t k = 0; k < nin; k++) {
		int32_t x = in[k];
		bool before = rg_have(p, x);
		p->claim[x]--;
		rg_flip(p, x, before);
		if (p->claim[x] == 0 && p->left[x] == 0)
			rg_unres(p, x);
	}
	p->work += nin;
}

/* The chains that ran their last step end. */
static void rg_retire(pilot *p)
{
	const chsim *c = p->c;
	const ds_graph *g = c->g;
	for (int32_t l = 0; l < p->nlive;) {
		int32_t ch = p->live[l];
		if (p->lnext[l] < c->soff[ch + 1]) {
			l++;
			continue;
		}
		p->cused[g->buf_mem[c->cbuf[ch]]] -= g->buf_size[c->cbuf[ch]];
		p->done++;
		memmove(p->live + l, p->live + l + 1,
			(size_t)(p->nlive - l - 1) * sizeof *p->live);
		memmove(p->lnext + l, p->lnext + l + 1,
			(size_t)(p->nlive - l - 1) * sizeof *p->lnext);
		p->nlive--;
	}
}

#ifndef NDEBUG
/* The greedy's counters recomputed from scratch: each chain's missing
 * bytes, each buffer's have[] and readers not started, each memory's
 * resident bytes.  O(C I + B + R) for B buffers. */
static void rg_check(const pilot *p)
{
	const ds_graph *g = p->c->g;
	for (int32_t ch = 0; ch < p->c->nch; ch++) {
		int64_t miss = 0;
		for (int32_t k = p->cioff[ch]; k < p->cioff[ch + 1]; k++) {
			int32_t x = p->civ[k], at = p->upos[k];
			DS_ASSERT(p->uv[at] == ch && p->ukof[at] == k);
			DS_ASSERT((at < p->uoff[x] + p->left[x]) ==
				  !p->started[ch]);
			if (!p->res[x] && p->claim[x] == 0)
				miss += g->buf_size[x];
			(void)x;
			(void)at;
		}
		DS_ASSERT(p->started[ch] || miss == p->miss[ch]);
		(void)miss;
	}
	for (int32_t b = 0; b < g->nbuf; b++)
		DS_ASSERT(p->have[b] == (p->res[b] || p->claim[b] > 0));
	for (int m = 0; m < DS_NMEM; m++) {
		int64_t used = 0;
		for (int32_t i = 0; i < p->nrl[m]; i++) {
			DS_ASSERT(p->res[p->rl[m][i]]);
			used += g->buf_size[p->rl[m][i]];
		}
		DS_ASSERT(used == p->used[m]);
		(void)used;
	}
	(void)g;
}
#endif

void dlr_rg_run(pilot *p, const int32_t *forced, int32_t nf, int32_t rank_from,
	    int32_t *out, int32_t *rank, int32_t *nrank)
{
	const chsim *c = p->c;
	rg_reset(p);
	for (int64_t round = 1; p->done < c->nch; round++) {
		int32_t ch;
		while ((ch = rg_next(p, forced, nf, rank_from, rank, nrank)) >= 0)
			rg_start(p, ch, out);
		/* one step of each running chain, in turn */
		for (int32_t l = 0, nl = p->nlive; l < nl; l++)
			rg_step(p, p->lnext[l]++);
		rg_retire(p);
#ifndef NDEBUG
		/* at rounds 1, 2, 4, ...: O((C I + B + R) log rounds) a run */
		if ((round & (round - 1)) == 0)
			rg_check(p);
#endif
	}
}
