/* ds_dlr_pilot.c: DLR's reuse pilot and the improvement (pl_).
 *
 * Requires: the chains of a chain simulation (chsim: cbuf .. cv built by
 * dlr_ch_order, two chains or more), chopts with pilot > 0, ref the
 * simulation's chain order and ref_ddr its placement's extra_ddr, alt room
 * for two chain orders nbuf apart.
 * Guarantees: out[0..nch) a permutation of the chains, or *useful false
 * (out[] then unspecified) when the model does not describe the placement
 * or no order it found beats the simulation's; alt[0..*nalt) the earlier
 * orders worth placing too.  A pure function of the inputs; DS_ENOMEM on
 * failure, nothing else.
 * Cost: see the end of this comment.
 *
 * A second way to choose the chain order, judged by what a placement would
 * really cost.  pl_eval lays the chains out (started in a given order as
 * their memory has room, stepping in turn, as dlr_ch_order does) and counts
 * the traffic of the reloads under furthest-next-use eviction, the rule the
 * placer follows; on graphs whose traffic is the chains' inputs it gives
 * the placement's figure to a reload or two.  dlr_rg_run is a fast greedy over
 * the same layout: it starts the chain with the fewest bytes neither
 * resident nor brought by the running chains, then the one whose loads
 * complete the most other chains (data just loaded is used by all that
 * need only it), then recency, then stage 1; its model evicts dead data
 * first, then the data whose waiting chains are furthest from complete,
 * then what the running chains read.
 *
 * The pilot builds the order start by start: it tries the greedy's best
 * unlike choices (PL_K at most), completes each with the greedy, evaluates
 * the complete orders exactly and keeps the choice whose completion costs
 * least.  That sees what no rule of thumb does, for instance whether a
 * taller band of work around stationary inputs pays for itself later.  It
 * runs once per way of breaking the greedy's last ties (PL_VARIANTS), the
 * cheapest order winning; then a nested pilot judges the first choices of
 * that order by whole pilots, within a budget of its own (a choice that
 * pays only with later choices shows there).  It is used only where the
 * simulation's order, placed, costs what the model says (the chains
 * describe the traffic), and stops when its greedy starts well behind
 * that order.
 *
 * Cost: a greedy run is O(C (C I + T I U) + A (U + R)) for C chains with
 * I distinct inputs, T = PL_TOP ranked candidates, U chains per input, A
 * accesses and R resident inputs; an evaluation O(A R), less when cut
 * short at a bound; the pilot makes up to PL_K runs per start, the nested
 * one a pilot per choice, each within a budget of work units that effort
 * scales, after which the best order met so far stands.
 *
 * The tuning constants were each measured at half and double their value
 * on the six bundled graphs (schedule --stage dlr: extra_ddr summed over
 * the six, and the dlr seconds); see each. */
#include "ds_dlr.h"

#include <string.h>

/* Ways of breaking the greedy's last ties (pilot.variant's two bits). */
#define PL_VARIANTS 4
/* The model must agree with the simulation's placement to within
 * 1/PL_AGREE of its extra_ddr for the pilot to run (the chains then
 * describe the traffic). */
#define PL_AGREE 8
/* The pilot gives up when its greedy starts more than 1/PL_BEHIND behind
 * the simulation's order. */
#define PL_BEHIND 8
/* The budget must pay PL_AFFORD greedy runs at least. */
#define PL_AFFORD 8
/* Measured (ds_dlr.h): each of the three at 4 and at 16 gives the same
 * figures as at 8 (316,264), in the same time within noise: on the
 * bundled graphs the pilot either clearly applies (Matmul) or clearly
 * does not; 8 is the middle of a flat range, a guard for graphs between. */

static int64_t pl_cap(const pilot *p, int m)
{
	int64_t cap = p->c->g->caps.cap[m] - p->reserve[m];
	return cap > 0 ? cap : 0;
}

/* The steps of the chains started in order[], as many at once as their
 * memory holds, stepping in turn; returns the number of steps. */
static int32_t pl_layout(pilot *p, const int32_t *order)
{
	chsim *c = p->c;
	const ds_graph *g = c->g;
	int32_t nlive = 0, ns = 0, k = 0, done = 0;
	int64_t cused[DS_NMEM] = {0};
	while (done < c->nch) {
		while (k < c->nch) {
			int32_t ch = order[k], b = c->cbuf[ch];
			int m = g->buf_mem[b];
			int64_t size = g->buf_size[b];
			if (nlive > 0 && cused[m] + size > g->caps.cap[m])
				break;
			cused[m] += size;
			p->live[nlive] = ch;
			p->lnext[nlive++] = c->soff[ch];
			k++;
		}
		for (int32_t l = 0; l < nlive; l++)
			p->steps[ns++] = p->lnext[l]++;
		for (int32_t l = 0; l < nlive;) {
			int32_t ch = p->live[l];
			if (p->lnext[l] < c->soff[ch + 1]) {
				l++;
				continue;
			}
			int32_t b = c->cbuf[ch];
			cused[g->buf_mem[b]] -= g->buf_size[b];
			done++;
			memmove(p->live + l, p->live + l + 1,
				(size_t)(nlive - l - 1) * sizeof *p->live);
			memmove(p->lnext + l, p->lnext + l + 1,
				(size_t)(nlive - l - 1) * sizeof *p->lnext);
			nlive--;
		}
	}
	return ns;
}

/* Removes b from the evaluation's resident list of m, in O(1). */
static void pl_out(pilot *p, int m, int32_t b)
{
	int32_t i = p->rpos[b], last = p->rl[m][--p->nrl[m]];
	DS_ASSERT(p->rl[m][i] == b);
	p->rl[m][i] = last;
	p->rpos[last] = i;
	p->res[b] = 0;
	p->used[m] -= p->c->g->buf_size[b];
}

/* Makes room for size bytes of memory m: the resident inputs used
 * furthest ahead go first, never one the current step reads (stamp ==
 * st). */
static void pl_room(pilot *p, int m, int64_t size)
{
	/* locals: the scan is the evaluation's innermost loop */
	const int32_t *rl = p->rl[m], *stamp = p->stamp, *nu = p->nu;
	const int32_t st = p->st;
	while (p->used[m] + size > pl_cap(p, m)) {
		int32_t v = -1, vnu = -1;
		for (int32_t j = 0, n = p->nrl[m]; j < n; j++) {
			int32_t y = rl[j];
			if (stamp[y] != st && (v < 0 || nu[y] > vnu)) {
				v = y;
				vnu = nu[y];
			}
		}
		p->work += p->nrl[m];
		if (v < 0)
			break;
		pl_out(p, m, v);
	}
}

#ifndef NDEBUG
/* The evaluation's resident lists recomputed: each memory's bytes, each
 * entry's index (rpos).  O(R). */
static void pl_check(const pilot *p)
{
	const ds_graph *g = p->c->g;
	for (int m = 0; m < DS_NMEM; m++) {
		int64_t used = 0;
		for (int32_t i = 0; i < p->nrl[m]; i++) {
			int32_t b = p->rl[m][i];
			DS_ASSERT(p->rpos[b] == i && p->res[b]);
			used += g->buf_size[b];
		}
		DS_ASSERT(used == p->used[m]);
		(void)used;
	}
	(void)g;
}
#endif

/* Traffic of the reloads when the chains start in order[]: every input
 * read again after leaving costs its traffic; the victims are the
 * resident inputs used furthest ahead (data used no more goes at once;
 * next uses are access indices, so no two resident inputs tie).  Stops
 * once the cost reaches bound (the traffic only grows), returning what
 * it has. */
static int64_t pl_eval(pilot *p, const int32_t *order, int64_t bound)
{
	chsim *c = p->c;
	const ds_graph *g = c->g;
	int32_t ns = pl_layout(p, order), na = 0;
	for (int32_t s = 0; s < ns; s++)
		for (int32_t k = c->ioff[p->steps[s]];
		     k < c->ioff[p->steps[s] + 1]; k++) {
			p->acc[na] = p->siv[k];
			p->accs[na++] = s;
		}
	for (int32_t i = 0; i < p->nins; i++) {
		int32_t b = p->ins[i];
		p->nu[b] = INT32_MAX;
		p->res[b] = p->seen[b] = 0;
	}
	for (int32_t i = na - 1; i >= 0; i--) {
		p->nxt[i] = p->nu[p->acc[i]];
		p->nu[p->acc[i]] = i;
	}
	for (int m = 0; m < DS_NMEM; m++) {
		p->nrl[m] = 0;
		p->used[m] = 0;
	}
	int64_t cost = 0;
	p->work += na;
	for (int32_t i = 0; i < na; i++) {
		int32_t x = p->acc[i];
		int m = g->buf_mem[x];
		int32_t *rl = p->rl[m];
		if (i == 0 || p->accs[i] != p->accs[i - 1]) {
			p->st++;
			for (int32_t j = i; j < na && p->accs[j] == p->accs[i];
			     j++)
				p->stamp[p->acc[j]] = p->st;
		}
		if (!p->res[x]) {
			if (p->seen[x])
				cost += ds_spill_traffic(g, x);
			if (cost >= bound)
				return cost;
			p->seen[x] = 1;
			pl_room(p, m, g->buf_size[x]);
			p->res[x] = 1;
			p->rpos[x] = p->nrl[m];
			rl[p->nrl[m]++] = x;
			p->used[m] += g->buf_size[x];
		}
		p->nu[x] = p->nxt[i];
		if (p->nu[x] == INT32_MAX)
			pl_out(p, m, x);
#ifndef NDEBUG
		/* after accesses 0, 1, 3, 7, ...: O(R log A) an evaluation */
		if ((i & (i + 1)) == 0)
			pl_check(p);
#endif
	}
	return cost;
}


/* A slot other than a, b and c. */
static int pl_slot(int a, int b, int c)
{
	int s = 0;
	while (s == a || s == b || s == c)
		s++;
	DS_ASSERT(s < PL_SLOTS);
	return s;
}

/* The pilot from the starts fixed[0..nfix): the greedy's completion is
 * the first incumbent, and stands when it costs more than giveup; then a
 * pass over the later starts: at each, every choice is completed by the
 * greedy, and a complete order costing less becomes the incumbent, whose
 * start there is then kept.  Leaves slot keep alone; returns the
 * incumbent's slot and its cost in *val. */
static int pl_pilot(pilot *p, const int32_t *fixed, int32_t nfix, int keep,
		    int64_t giveup, int64_t budget, int64_t *val)
{
	const int32_t nch = p->c->nch;
	int inc = pl_slot(keep, -1, -1);
	dlr_rg_run(p, fixed, nfix, nfix, p->ord[inc], p->rk[inc], p->nrk[inc]);
	int64_t incv = pl_eval(p, p->ord[inc], INT64_MAX);
	for (int32_t at = nfix; at < nch && incv <= giveup && p->work < budget;
	     at++) {
		int32_t r[PL_K], nr = p->nrk[inc][at];
		memcpy(r, p->rk[inc] + (size_t)at * PL_K, (size_t)nr * sizeof *r);
		memcpy(p->pre, p->ord[inc], (size_t)at * sizeof *p->pre);
		/* r[0] is the incumbent's own choice */
		for (int32_t i = 1; i < nr && p->work < budget; i++) {
			int s = pl_slot(keep, inc, -1);
			p->pre[at] = r[i];
			dlr_rg_run(p, p->pre, at + 1, at + 1, p->ord[s], p->rk[s],
			       p->nrk[s]);
			int64_t cost = pl_eval(p, p->ord[s], INT64_MAX);
			if (cost < incv) {
				incv = cost;
				inc = s;
			}
		}
	}
	*val = incv;
	return inc;
}

/* ---- the improvement ----
 *
 * A local search over the start order with pl_eval as the objective,
 * from the cheapest order the pilots or the simulation found.  At each
 * place i in turn: a block of up to PL_BLOCK chains from i moved up to
 * PL_REACH places either way, chain i swapped with one up to PL_REACH
 * after it, the segment from i to a place up to PL_REACH after reversed;
 * the first move that lowers the cost is kept and the scan goes on from
 * there; passes repeat until one finds nothing or the budget is spent.
 * The pilot's greedy completions miss such small rearrangements of the
 * bands they build (a chain or a pair started a little earlier or later).
 * O(C PL_BLOCK PL_REACH) trials per pass, each an evaluation cut short at
 * the incumbent's cost; the budget counts the evaluations' work. */

/* Block length and reach of the local moves.  Measured (ds_dlr.h):
 * PL_BLOCK 2 or 6, PL_REACH 4 or 16 give the same figures as 3 and 8
 * (316,264; the improvement's budget, not its neighbourhood, bounds it
 * on these graphs), in the same time within noise; kept. */
#define PL_BLOCK 3
#define PL_REACH 8

/* tr[] = ord[] with its block [i, i + len) moved to start at j. */
static void pl_move(const int32_t *ord, int32_t n, int32_t i, int32_t len,
		    int32_t j, int32_t *tr)
{
	int32_t t = 0;
	for (int32_t k = 0; k < n; k++) {
		if (t == j)
			for (int32_t b = 0; b < len; b++)
				tr[t++] = ord[i + b];
		if (k < i || k >= i + len)
			tr[t++] = ord[k];
	}
	if (t == j)
		for (int32_t b = 0; b < len; b++)
			tr[t++] = ord[i + b];
	DS_ASSERT(t == n);
}

/* Keeps tr[] in ord[] when it costs less than *val. */
static bool pl_keep(pilot *p, int32_t *ord, const int32_t *tr, int64_t *val)
{
	int64_t v = pl_eval(p, tr, *val);
	if (v >= *val)
		return false;
	memcpy(ord, tr, (size_t)p->c->nch * sizeof *ord);
	*val = v;
	return true;
}

/* One pass of local moves over ord[] (costing *val): each block of up to
 * PL_BLOCK chains moved up to PL_REACH places either way, each pair of
 * chains up to PL_REACH apart swapped, each segment that long reversed,
 * in that order by place, keeping the first move that lowers the cost
 * each time.  Returns whether any did. */
static bool pl_pass(pilot *p, int32_t *ord, int64_t *val, int64_t budget)
{
	const int32_t n = p->c->nch;
	int32_t *tr = p->pre;
	bool any = false;
	for (int32_t i = 0; i < n && p->work < budget; i++) {
		for (int32_t len = 1; len <= PL_BLOCK && i + len <= n; len++)
			for (int32_t d = -PL_REACH; d <= PL_REACH; d++) {
				int32_t j = i + d;
				if (d == 0 || j < 0 || j + len > n ||
				    p->work >= budget)
					continue;
				pl_move(ord, n, i, len, j, tr);
				any |= pl_keep(p, ord, tr, val);
			}
		for (int32_t j = i + 1; j <= i + PL_REACH && j < n &&
					p->work < budget;
		     j++) {
			memcpy(tr, ord, (size_t)n * sizeof *tr);
			tr[i] = ord[j];
			tr[j] = ord[i];
			any |= pl_keep(p, ord, tr, val);
		}
		for (int32_t j = i + 2; j <= i + PL_REACH && j < n &&
					p->work < budget;
		     j++) {
			memcpy(tr, ord, (size_t)n * sizeof *tr);
			for (int32_t k = i; k <= j; k++)
				tr[k] = ord[i + j - k];
			any |= pl_keep(p, ord, tr, val);
		}
	}
	return any;
}

/* Improves ord[] (costing val) by local passes until none helps or
 * p->work reaches budget; returns its cost. */
static int64_t pl_improve(pilot *p, int32_t *ord, int64_t val,
			  int64_t budget)
{
	while (p->work < budget && pl_pass(p, ord, &val, budget))
		;
	return val;
}


/* ---- the pilot's run ---- */

/* Every array of p from arena a, with takers[0..n) for pl_step_inputs
 * and keys[0..nch) for pl_by_size; false when one failed. */
static bool pl_alloc(pilot *p, ds_arena *a, int32_t **takers, ds_hkey **keys)
{
	const chsim *c = p->c;
	const size_t nch = (size_t)c->nch, nb = (size_t)c->g->nbuf;
	const size_t nsteps = (size_t)c->soff[nch];
	const size_t nacc = (size_t)c->ioff[nsteps];
	for (int i = 0; i < PL_SLOTS; i++) {
		p->ord[i] = ds_arena_alloc(a, nch, sizeof **p->ord);
		p->rk[i] = ds_arena_alloc(a, nch * PL_K, sizeof **p->rk);
		p->nrk[i] = ds_arena_alloc(a, nch, sizeof **p->nrk);
	}
	p->pre = ds_arena_alloc(a, nch, sizeof *p->pre);
	p->pre2 = ds_arena_alloc(a, nch, sizeof *p->pre2);
	*takers = ds_arena_alloc(a, (size_t)c->g->n, sizeof **takers);
	*keys = ds_arena_alloc(a, nch, sizeof **keys);
	p->cioff = ds_arena_alloc(a, nch + 1, sizeof *p->cioff);
	p->civ = ds_arena_alloc(a, nacc + 1, sizeof *p->civ);
	p->siv = ds_arena_alloc(a, nacc + 1, sizeof *p->siv);
	p->uoff = ds_arena_alloc(a, nb + 1, sizeof *p->uoff);
	p->uv = ds_arena_alloc(a, nacc + 1, sizeof *p->uv);
	p->upos = ds_arena_alloc(a, nacc + 1, sizeof *p->upos);
	p->ukof = ds_arena_alloc(a, nacc + 1, sizeof *p->ukof);
	p->first = ds_arena_alloc(a, nch, sizeof *p->first);
	p->steps = ds_arena_alloc(a, nsteps, sizeof *p->steps);
	p->acc = ds_arena_alloc(a, nacc + 1, sizeof *p->acc);
	p->accs = ds_arena_alloc(a, nacc + 1, sizeof *p->accs);
	p->nxt = ds_arena_alloc(a, nacc + 1, sizeof *p->nxt);
	p->nu = ds_arena_alloc(a, nb, sizeof *p->nu);
	p->stamp = ds_arena_alloc(a, nb, sizeof *p->stamp);
	p->res = ds_arena_alloc(a, nb, 1);
	p->seen = ds_arena_alloc(a, nb, 1);
	p->live = ds_arena_alloc(a, nch, sizeof *p->live);
	p->lnext = ds_arena_alloc(a, nch, sizeof *p->lnext);
	p->miss = ds_arena_alloc(a, nch, sizeof *p->miss);
	p->started = ds_arena_alloc(a, nch, 1);
	p->have = ds_arena_alloc(a, nb, 1);
	p->bysz = ds_arena_alloc(a, nch, sizeof *p->bysz);
	p->claim = ds_arena_alloc(a, nb, sizeof *p->claim);
	p->left = ds_arena_alloc(a, nb, sizeof *p->left);
	p->last = ds_arena_alloc(a, nb, sizeof *p->last);
	p->red = ds_arena_alloc(a, nch, sizeof *p->red);
	p->redst = ds_arena_alloc(a, nch, sizeof *p->redst);
	p->touch = ds_arena_alloc(a, nch, sizeof *p->touch);
	p->cand = ds_arena_alloc(a, nch, sizeof *p->cand);
	p->cmru = ds_arena_alloc(a, nch, sizeof *p->cmru);
	p->cben = ds_arena_alloc(a, nch, sizeof *p->cben);
	p->rpos = ds_arena_alloc(a, nb, sizeof *p->rpos);
	p->ins = ds_arena_alloc(a, nb, sizeof *p->ins);
	for (int m = 0; m < DS_NMEM; m++)
		p->rl[m] = ds_arena_alloc(a, nb, sizeof *p->rl[m]);
	return !a->failed;
}

/* Each step's inputs in the order their first readers run in stage 1, as
 * the layout will run them; an operation that several steps take along
 * runs with the first of them, so it does not count (takers[]: how many
 * steps take each node along; nu[] is free scratch here). */
static void pl_step_inputs(pilot *p, int32_t *takers)
{
	const chsim *c = p->c;
	const ds_graph *g = c->g;
	const int32_t nsteps = c->soff[c->nch];
	memcpy(p->siv, c->iv, (size_t)c->ioff[nsteps] * sizeof *p->siv);
	for (int32_t k = 0; k < c->coff[nsteps]; k++)
		takers[c->cv[k]]++;
	for (int32_t si = 0; si < nsteps; si++) {
		int32_t *a = p->siv + c->ioff[si];
		int32_t len = c->ioff[si + 1] - c->ioff[si];
		for (int32_t i = 0; i < len; i++)
			p->nu[a[i]] = INT32_MAX;
		for (int32_t k = c->coff[si]; k < c->coff[si + 1]; k++) {
			int32_t x = c->cv[k];
			if (takers[x] > 1)
				continue;
			for (int32_t j = g->use_off[x]; j < g->use_off[x + 1];
			     j++)
				if (c->pos1[x] < p->nu[g->use[j]])
					p->nu[g->use[j]] = c->pos1[x];
		}
		for (int32_t i = 1; i < len; i++) {
			int32_t x = a[i], j = i;
			while (j > 0 && p->nu[a[j - 1]] > p->nu[x]) {
				a[j] = a[j - 1];
				j--;
			}
			a[j] = x;
		}
	}
}

/* Each chain's distinct inputs (cioff, civ), each input's chains (uoff,
 * uv), the distinct inputs (ins), each chain's first place (first), and
 * the chain buffers' peak per memory, left to the inputs' rest
 * (reserve). */
static void pl_index(pilot *p)
{
	const chsim *c = p->c;
	const ds_graph *g = c->g;
	const int32_t nch = c->nch, nb = g->nbuf;
	p->st = 1;
	for (int32_t ch = 0; ch < nch; ch++) {
		int32_t n = p->cioff[ch];
		p->st++;
		for (int32_t si = c->soff[ch]; si < c->soff[ch + 1]; si++)
			for (int32_t k = c->ioff[si]; k < c->ioff[si + 1]; k++)
				if (p->stamp[c->iv[k]] != p->st) {
					p->stamp[c->iv[k]] = p->st;
					p->civ[n++] = c->iv[k];
					p->uoff[c->iv[k] + 1]++;
				}
		p->cioff[ch + 1] = n;
		p->first[ch] = c->pos1[c->sv[c->soff[ch]]];
	}
	for (int32_t b = 0; b < nb; b++) {
		if (p->uoff[b + 1] > 0)
			p->ins[p->nins++] = b;
		p->uoff[b + 1] += p->uoff[b];
	}
	for (int32_t b = 0; b < nb; b++)
		p->left[b] = p->uoff[b];
	for (int32_t ch = 0; ch < nch; ch++)
		for (int32_t k = p->cioff[ch]; k < p->cioff[ch + 1]; k++) {
			int32_t at = p->left[p->civ[k]]++;
			p->uv[at] = ch;
			p->upos[k] = at;
			p->ukof[at] = k;
		}
	int64_t cused[DS_NMEM] = {0};
	for (int32_t ch = 0; ch < nch; ch++) {
		int32_t b = c->cbuf[ch];
		int m = g->buf_mem[b];
		if (cused[m] + g->buf_size[b] <= g->caps.cap[m])
			cused[m] += g->buf_size[b];
	}
	for (int m = 0; m < DS_NMEM; m++)
		p->reserve[m] = cused[m];
}

/* The chains by the memory of their buffer, then its size, then chain
 * (bysz, byoff): the greedy finds the smallest not started of each
 * memory there (rg_fits_some).  keys[0..nch) is scratch. */
static void pl_by_size(pilot *p, ds_hkey *keys)
{
	const chsim *c = p->c;
	const ds_graph *g = c->g;
	int32_t at[DS_NMEM + 1] = {0};
	for (int32_t ch = 0; ch < c->nch; ch++) {
		keys[ch] = (ds_hkey){(uint64_t)g->buf_size[c->cbuf[ch]], ch};
		at[g->buf_mem[c->cbuf[ch]] + 1]++;
	}
	ds_hkey_sort(g->heap, keys, (size_t)c->nch);
	for (int m = 0; m < DS_NMEM; m++)
		at[m + 1] += at[m];
	memcpy(p->byoff, at, sizeof p->byoff);
	for (int32_t i = 0; i < c->nch; i++) {
		int32_t ch = keys[i].x;
		p->bysz[at[g->buf_mem[c->cbuf[ch]]]++] = ch;
	}
}

/* Whether a greedy run is cheap enough for budget to pay a few (a greedy
 * run cannot be cut short): its cost from the chains' most inputs and an
 * input's most chains, PL_AFFORD runs at least. */
static bool pl_affordable(const pilot *p, int64_t budget)
{
	const chsim *c = p->c;
	const int32_t nch = c->nch, nb = c->g->nbuf;
	const int32_t nacc = c->ioff[c->soff[nch]];
	int64_t imax = 0, umax = 0;
	for (int32_t ch = 0; ch < nch; ch++)
		if (p->cioff[ch + 1] - p->cioff[ch] > imax)
			imax = p->cioff[ch + 1] - p->cioff[ch];
	for (int32_t b = 0; b < nb; b++)
		if (p->uoff[b + 1] - p->uoff[b] > umax)
			umax = p->uoff[b + 1] - p->uoff[b];
	double tie = (double)PL_TOP * (double)imax * (double)umax;
	double run = (double)nch * ((double)p->cioff[nch] + tie) +
		     (double)nacc * (double)umax;
	return run * PL_AFFORD <= (double)budget;
}

/* The pilot once per way of breaking the greedy's last ties, giving up
 * on a variant whose greedy starts over giveup; the cheapest wins (the
 * first of equals).  Returns its slot, its cost in *val, and leaves its
 * variant in p. */
static int pl_variants(pilot *p, int64_t giveup, int64_t budget,
		       int64_t *val)
{
	int best = -1, bvar = 0;
	for (int v = 0; v < PL_VARIANTS; v++) {
		int64_t vv;
		p->variant = v;
		int sl = pl_pilot(p, NULL, 0, best, giveup, budget, &vv);
		if (best < 0 || vv < *val) {
			best = sl;
			*val = vv;
			bvar = v;
		}
	}
	p->variant = bvar;
	return best;
}

/* Nested: the choices of the order in slot best, each completed by a
 * whole pilot (a choice that pays only with later choices shows there),
 * from the first start on while p->work stays under nbudget.  Returns the
 * slot of the cheapest order met, its cost in *val. */
static int pl_nested(pilot *p, int best, int64_t nbudget, int64_t *val)
{
	const int32_t nch = p->c->nch;
	for (int32_t at = 0; at < nch && p->work < nbudget; at++) {
		/* the incumbent's choices here, afresh */
		int f = pl_slot(best, -1, -1);
		dlr_rg_run(p, p->ord[best], nch, at, p->ord[f], p->rk[f], p->nrk[f]);
		best = f;
		int32_t r[PL_K], nr = p->nrk[best][at];
		memcpy(r, p->rk[best] + (size_t)at * PL_K,
		       (size_t)nr * sizeof *r);
		memcpy(p->pre2, p->ord[best], (size_t)at * sizeof *p->pre2);
		for (int32_t i = 1; i < nr && p->work < nbudget; i++) {
			int64_t v;
			p->pre2[at] = r[i];
			int sl = pl_pilot(p, p->pre2, at + 1, best, INT64_MAX,
					  nbudget, &v);
			if (v < *val) {
				*val = v;
				best = sl;
			}
		}
	}
	return best;
}

/* The pilots proper, where the model describes the placement (refv, the
 * model's cost of the simulation's order): the variants, and the nested
 * pilot when the greedy is not well behind.  alt[] gets the pilot's order
 * and the nested one's when cheaper, *nalt how many; returns the slot of
 * the cheapest (-1: none, the greedy being well behind), its cost in
 * *val. */
static int pl_search(pilot *p, const chopts *o, int64_t refv, int32_t *nalt,
		     int64_t *val)
{
	const int32_t nch = p->c->nch;
	const size_t nb = (size_t)p->c->g->nbuf;
	*nalt = 0;
	if (!pl_affordable(p, o->pilot))
		return -1;
	/* the pilot refines the greedy: when the greedy is well behind the
	 * simulation's order, there is no catching up, and no trying */
	int64_t giveup = refv + refv / PL_BEHIND;
	int best = pl_variants(p, giveup, o->pilot, val);
	if (*val > giveup)
		return -1;
	/* the pilot's order, kept as a candidate of its own: the steps
	 * after it may lower the model's cost where the placement does not
	 * follow */
	memcpy(o->alt, p->ord[best], (size_t)nch * sizeof *o->alt);
	*nalt = 1;
	int64_t pval = *val;
	best = pl_nested(p, best, p->work + o->nest, val);
	if (*val < pval) {
		memcpy(o->alt + nb, p->ord[best], (size_t)nch * sizeof *o->alt);
		*nalt = 2;
	}
	return best;
}

int dlr_pl_order(chsim *c, const chopts *o, int32_t *out, bool *useful,
	     ds_err *e)
{
	const int32_t nch = c->nch;
	const size_t nb = (size_t)c->g->nbuf;
	*o->nalt = 0;
	ds_arena a;
	ds_arena_init(&a, c->g->heap);
	pilot p = {.c = c};
	int32_t *takers;
	ds_hkey *keys;
	if (!pl_alloc(&p, &a, &takers, &keys)) {
		ds_arena_free(&a);
		return ds_fail(e, DS_ENOMEM, "out of memory");
	}
	pl_step_inputs(&p, takers);
	pl_index(&p);
	pl_by_size(&p, keys);
	/* the model counts only the reloads of the chains' inputs: where
	 * the simulation's order placed costs other than the model says,
	 * the chains do not describe the work, and the pilot is not used */
	int64_t val = 0, refv = pl_eval(&p, o->ref, INT64_MAX);
	int64_t tol = o->ref_ddr / PL_AGREE;
	*useful = refv >= o->ref_ddr - tol && refv <= o->ref_ddr + tol;
	if (!*useful) {
		ds_arena_free(&a);
		return DS_OK;
	}
	int32_t nalt;
	int best = pl_search(&p, o, refv, &nalt, &val);
	/* the improvement, from the better of the pilot's order and the
	 * simulation's */
	bool from_pilot = best >= 0 && val < refv;
	int64_t v0 = from_pilot ? val : refv;
	memcpy(out, from_pilot ? p.ord[best] : o->ref,
	       (size_t)nch * sizeof *out);
	int64_t v1 = pl_improve(&p, out, v0, p.work + o->improve);
	/* out: the cheapest order; alt: the earlier ones that differ */
	if (v1 < v0) {
		*o->nalt = nalt;
	} else if (nalt > 0) {
		memcpy(out, o->alt + (size_t)(nalt - 1) * nb,
		       (size_t)nch * sizeof *out);
		*o->nalt = nalt - 1;
	} else {
		*useful = false;
	}
	ds_arena_free(&a);
	return DS_OK;
}
