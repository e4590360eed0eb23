/* ds_mpas_greedy.c: MPAS's list scheduler, one greedy run (mpas_gr_run) over a
 * view of the graph, forwards or reversed.
 *
 * Requires: a view of a valid graph (ds_mpas.c builds it: pred/succ lists
 * in rank order, levels, loads) and a variant (gparams).  Guarantees:
 * out[] is a topological order of the view's n nodes; at most one buffer
 * of each L0 memory is live at any time unless *invalid is set (the rule
 * had to be broken: no candidate could run and forced() found nothing
 * better).  Exact ties are broken by the structural rank only.
 *
 * Method.  The run keeps candidate targets: an operation with its
 * ancestors that have not run ("closure", at most kmax nodes), extended
 * along buffers left with a single consumer.  A target is rated by
 * simulating it under an undo journal (gr_rate: the rise of memory over
 * the current level, the net change, the progress on live buffers); the
 * best one runs (gr_commit), then every node that costs nothing.  L0
 * ALLOCs are gated: a target may not need a busy L0 memory, and one that
 * leaves an L0 buffer live must leave no wait-for cycle between L0
 * memories (gr_l0_safe).  The candidates sit in treaps (tp_), one per L0
 * memory they wait for and one for those that can run, ordered by
 * cand_key(); the best that may run is found in O(log C) (tp_best).
 *
 * Cost, N nodes, E edges: O((N + E) * K * D * log C) a run, with K the
 * closure bound (gparams.kmax, 24), D the fan-out of the re-rating
 * after each decision and C the candidates (up to N); gr_forced(), when
 * no candidate can run,
 * is O(R * K) for R nodes waiting for nothing (it never runs on the
 * bundled graphs nor on the generator's at 100k nodes).  Memory
 * O(N + E), taken once (mpas_gr_new) and reused by every run.  With asserts
 * live, gr_check recomputes the treaps and the counters from scratch at
 * the 2^k-th decisions: O((N + E) log N) more a run. */
#include "ds_mpas_int.h"

#include <string.h>

/* ---- tuning (measured as in ds_mpas.c: peak_vstay of the six bundled
 * graphs and of gen random_1 and attention_1, half and double) ---- */

/* gr_l0_needs gives up (the state counts as unsafe) past this many nodes
 * searched: a bound on its cost.  128 or 512: every peak the same. */
#define GR_NEEDS_MAX 256
/* A target extended along single consumers plays at most GR_PLAY_SPAN
 * times the closure bound nodes.  2: peak sum 72,754 (Conv_Case1 5,176
 * against 5,360, the rest the same); 8: 72,922 (Conv_Case1 5,344): a
 * lead for a later change, kept here as the refactor keeps every plan. */
#define GR_PLAY_SPAN 4
/* The credit's fixed point: a buffer's size times the share of its users
 * that ran, in 1/CREDIT_SCALE (a unit, not a tuning). */
#define CREDIT_SCALE 1024

/* ---- candidates ---- */

/* Outcome of rating one target.  EV_BIG: the closure is too big;
 * EV_BLOCKED: it needs a busy L0 memory; EV_UNSAFE: it would leave an L0
 * buffer that might never be freed, or its own closure needs two buffers
 * of one L0 memory.  Dropped targets come back when an ancestor runs. */
enum { EV_OK, EV_BIG, EV_BLOCKED, EV_UNSAFE };

typedef struct cand {
	int32_t t;
	int32_t why; /* -1: can run; else the busy L0 memory it waits for */
	int64_t rise, net;
	int64_t credit; /* progress towards freeing live buffers, scaled */
} cand;

typedef struct jent {
	int32_t *p;
	int32_t old;
} jent;

/* The state of a greedy run. */
struct run {
	const view *v;
	const gparams *p;
	int32_t *done;	 /* node has run */
	int32_t *wait;	 /* ALLOC: preds not done; others: preds not available
			    (an ALLOC is available once it could run) */
	int32_t *palloc; /* ALLOC preds not done */
	int32_t *mark;
	int32_t stamp;
	int32_t *pushed; /* round in which a target was last rated */
	int32_t round;
	/* undo journal of a simulation */
	jent *jr;
	int64_t njr;
	bool sim;
	/* scalars */
	int64_t cur, peak;
	int32_t l0cnt[NL0], l0hold[NL0];
	int viol; /* first L0 memory a simulation found busy, -1: none */
	/* nodes that cost nothing and can run */
	int32_t *eag;
	int32_t neag;
	/* nodes not run that wait for nothing (wait == 0), for gr_forced();
	 * kept for the real state only (simulations restore it) */
	int32_t *rdy, *rpos;
	int32_t nrdy;
	/* closure, and the DFS stacks that build it */
	int32_t *clos, nclos;
	int32_t *stk, *stki;
	int32_t *fresh;	      /* ALLOCs run by the target being played */
	int32_t *plan, nplan; /* the nodes a target runs, in order */
	int32_t *slog, nslog; /* every node a simulation ran */
	bool nobound;	      /* gr_forced(): closures of any size */
	/* candidates, and each target's index among them (-1: none) */
	cand *c;
	int64_t nc, capc;
	int32_t *cpos;
	/* the candidates again, one treap per L0 memory they wait for (and
	 * one for those that can run), ordered by cand_key(); per target:
	 * children and, for POL_PEAK, the subtree's first by cand_prio_first() */
	int32_t troot[NL0 + 1];
	int32_t *tl, *tr, *tmin;
	/* the order */
	int32_t *out, nout;
	int64_t runpeak; /* peak of the order so far */
	bool invalid;	 /* the one-live rule had to be broken */
	ds_arena *ar;	 /* where the arrays come from (c grows there) */
#ifndef NDEBUG
	int64_t ndecide; /* decisions so far: gr_check at each 2^k-th */
#endif
};

static void gr_jset(run *r, int32_t *p, int32_t val)
{
	if (r->sim) {
		r->jr[r->njr].p = p;
		r->jr[r->njr].old = *p;
		r->njr++;
	}
	*p = val;
}

static void gr_rdy_add(run *r, int32_t x)
{
	if (r->sim || r->rpos[x] >= 0 || r->done[x])
		return;
	r->rpos[x] = r->nrdy;
	r->rdy[r->nrdy++] = x;
}

static void gr_rdy_del(run *r, int32_t x)
{
	int32_t i = r->rpos[x];
	if (i < 0)
		return;
	r->rdy[i] = r->rdy[--r->nrdy];
	r->rpos[r->rdy[i]] = i;
	r->rpos[x] = -1;
}

/* One thing w waited for is available. */
static void gr_wait_less(run *r, int32_t w)
{
	gr_jset(r, &r->wait[w], r->wait[w] - 1);
	if (r->wait[w] == 0)
		gr_rdy_add(r, w);
}

static void gr_make_eager_if_ready(run *r, int32_t w)
{
	if (!r->done[w] && r->wait[w] == 0 && r->palloc[w] == 0 &&
	    r->v->kind[w] != DS_ALLOC)
		r->eag[r->neag++] = w;
}

/* An ALLOC became able to run: its users no longer wait for it. */
static void gr_alloc_ready(run *r, int32_t a)
{
	const view *v = r->v;
	for (int32_t k = v->soff[a]; k < v->soff[a + 1]; k++) {
		int32_t y = v->succ[k];
		if (v->kind[y] == DS_ALLOC)
			continue;
		gr_wait_less(r, y);
		gr_make_eager_if_ready(r, y);
	}
}

/* ---- the candidate treaps ---- */

/* a before b in the variant's order (cand_better()) as it would be with
 * `room` bytes under the peak so far; then more credit, lower level,
 * lower rank.  A strict total order for any room: the ranks differ. */
static bool cand_before(const run *r, const cand *a, const cand *b,
			int64_t room)
{
	int64_t ka[4], kb[4];
	switch (r->p->pol) {
	case POL_RANK:
		ka[0] = r->v->rank[a->t], kb[0] = r->v->rank[b->t];
		ka[1] = kb[1] = 0;
		break;
	case POL_NET:
		ka[0] = a->net, kb[0] = b->net;
		ka[1] = a->rise, kb[1] = b->rise;
		break;
	case POL_RISE:
		ka[0] = a->rise, kb[0] = b->rise;
		ka[1] = a->net, kb[1] = b->net;
		break;
	default: {
		/* under the peak so far a target costs nothing: by priority;
		 * above it, by the new peak */
		ka[0] = a->rise > room ? a->rise : 0;
		kb[0] = b->rise > room ? b->rise : 0;
		ka[1] = r->p->prio == PR_NET ? a->net : -a->credit;
		kb[1] = r->p->prio == PR_NET ? b->net : -b->credit;
		break;
	}
	}
	ka[2] = -a->credit, kb[2] = -b->credit;
	ka[3] = r->v->level[a->t], kb[3] = r->v->level[b->t];
	for (int i = 0; i < 4; i++)
		if (ka[i] != kb[i])
			return ka[i] < kb[i];
	return r->v->rank[a->t] < r->v->rank[b->t];
}

/* The order of now: the room is what is left under the peak so far. */
static bool cand_better(const run *r, const cand *a, const cand *b)
{
	return cand_before(r, a, b, r->runpeak - r->cur);
}

static const cand *cand_get(const run *r, int32_t t)
{
	DS_ASSERT(r->cpos[t] >= 0);
	return &r->c[r->cpos[t]];
}

/* The treaps' key: the variant's order with no room (rise >= 0 > room),
 * which for POL_PEAK sorts by rise first, so the targets that fit under
 * the peak are a prefix. */
static bool cand_key(const run *r, int32_t a, int32_t b)
{
	return cand_before(r, cand_get(r, a), cand_get(r, b), INT64_MIN);
}

/* POL_PEAK's order among the targets that fit under the peak (rise
 * ignored: all room); -1 is last. */
static int32_t cand_prio_first(const run *r, int32_t a, int32_t b)
{
	if (a < 0 || b < 0)
		return a < 0 ? b : a;
	return cand_before(r, cand_get(r, a), cand_get(r, b), INT64_MAX) ? a : b;
}

/* Heap priority of a treap node: a hash, so the shape is random whatever
 * the order of insertions (it affects the time, never the choice). */
static uint32_t tp_prio(int32_t t)
{
	uint32_t z = (uint32_t)t * 0x9E3779B1u;
	z ^= z >> 16;
	z *= 0x85EBCA6Bu;
	z ^= z >> 13;
	return z;
}

static bool tp_above(int32_t a, int32_t b)
{
	uint32_t pa = tp_prio(a), pb = tp_prio(b);
	return pa != pb ? pa > pb : a > b;
}

static void tp_pull(run *r, int32_t x)
{
	if (r->p->pol != POL_PEAK)
		return;
	int32_t m = x;
	if (r->tl[x] >= 0)
		m = cand_prio_first(r, r->tmin[r->tl[x]], m);
	if (r->tr[x] >= 0)
		m = cand_prio_first(r, m, r->tmin[r->tr[x]]);
	r->tmin[x] = m;
}

/* Splits treap x into the nodes before t (*lo) and the others (*hi). */
static void tp_split(run *r, int32_t x, int32_t t, int32_t *lo, int32_t *hi)
{
	if (x < 0) {
		*lo = *hi = -1;
		return;
	}
	if (cand_key(r, x, t)) {
		tp_split(r, r->tr[x], t, &r->tr[x], hi);
		*lo = x;
	} else {
		tp_split(r, r->tl[x], t, lo, &r->tl[x]);
		*hi = x;
	}
	tp_pull(r, x);
}

/* Joins treaps a and b, every node of a before every node of b. */
static int32_t tp_merge(run *r, int32_t a, int32_t b)
{
	if (a < 0 || b < 0)
		return a < 0 ? b : a;
	if (tp_above(a, b)) {
		r->tr[a] = tp_merge(r, r->tr[a], b);
		tp_pull(r, a);
		return a;
	}
	r->tl[b] = tp_merge(r, a, r->tl[b]);
	tp_pull(r, b);
	return b;
}

static int32_t tp_insert(run *r, int32_t x, int32_t t)
{
	if (x < 0 || tp_above(t, x)) {
		tp_split(r, x, t, &r->tl[t], &r->tr[t]);
		tp_pull(r, t);
		return t;
	}
	if (cand_key(r, t, x))
		r->tl[x] = tp_insert(r, r->tl[x], t);
	else
		r->tr[x] = tp_insert(r, r->tr[x], t);
	tp_pull(r, x);
	return x;
}

static int32_t tp_erase(run *r, int32_t x, int32_t t)
{
	DS_ASSERT(x >= 0);
	if (x == t)
		return tp_merge(r, r->tl[t], r->tr[t]);
	if (cand_key(r, t, x))
		r->tl[x] = tp_erase(r, r->tl[x], t);
	else
		r->tr[x] = tp_erase(r, r->tr[x], t);
	tp_pull(r, x);
	return x;
}

/* The best target of treap x in cand_better()'s order, -1 when it is empty:
 * the first one; for POL_PEAK, the first by priority among those that
 * fit under the peak (a prefix of the treap), if any.  O(depth). */
static int32_t tp_best(const run *r, int32_t x)
{
	int32_t best = -1, first = x;
	if (r->p->pol == POL_PEAK) {
		int64_t room = r->runpeak - r->cur;
		for (int32_t y = x; y >= 0;) {
			if (cand_get(r, y)->rise > room) {
				y = r->tl[y];
				continue;
			}
			if (r->tl[y] >= 0)
				best = cand_prio_first(r, best, r->tmin[r->tl[y]]);
			best = cand_prio_first(r, best, y);
			y = r->tr[y];
		}
		if (best >= 0)
			return best;
	}
	while (first >= 0 && r->tl[first] >= 0)
		first = r->tl[first];
	return first;
}

static int32_t *tp_root_of(run *r, const cand *e)
{
	return &r->troot[e->why + 1];
}

static void cand_remove(run *r, int32_t t)
{
	int64_t i = r->cpos[t];
	if (i < 0)
		return;
	int32_t *root = tp_root_of(r, &r->c[i]);
	*root = tp_erase(r, *root, t);
	r->c[i] = r->c[--r->nc];
	r->cpos[r->c[i].t] = (int32_t)i;
	r->cpos[t] = -1;
}

/* Room for one more candidate. */
static int cand_reserve(run *r, ds_err *err)
{
	if (r->nc < r->capc)
		return DS_OK;
	int64_t cap = r->capc < 16 ? 16 : 2 * r->capc;
	cand *c = ds_arena_grow(r->ar, r->c, (size_t)cap, sizeof *c);
	if (!c)
		return ds_fail(err, DS_ENOMEM, "out of memory");
	r->c = c;
	r->capc = cap;
	return DS_OK;
}

/* Files e among the candidates, replacing the rating of its target. */
static int cand_set(run *r, const cand *e, ds_err *err)
{
	int32_t t = e->t;
	if (r->cpos[t] >= 0) {
		int32_t *root = tp_root_of(r, cand_get(r, t));
		*root = tp_erase(r, *root, t);
	} else {
		if (cand_reserve(r, err))
			return DS_ENOMEM;
		r->cpos[t] = (int32_t)r->nc++;
	}
	r->c[r->cpos[t]] = *e;
	r->tl[t] = r->tr[t] = -1;
	r->tmin[t] = t;
	int32_t *root = tp_root_of(r, e);
	*root = tp_insert(r, *root, t);
	return DS_OK;
}

/* Runs node x (for real, or in a simulation with a journal). */
static void gr_exec(run *r, int32_t x)
{
	const view *v = r->v;
	DS_ASSERT(!r->done[x]);
	gr_jset(r, &r->done[x], 1);
	int m = v->l0[x];
	if (v->kind[x] == DS_ALLOC) {
		r->cur += v->stay[x];
		if (r->cur > r->peak)
			r->peak = r->cur;
		if (m >= 0) {
			if (r->l0cnt[m] > 0) {
				if (r->viol < 0)
					r->viol = m;
				if (!r->sim)
					r->invalid = true;
			}
			r->l0cnt[m]++;
			r->l0hold[m] = x;
		}
	} else if (v->kind[x] == DS_FREE) {
		r->cur -= v->stay[x];
		if (m >= 0 && --r->l0cnt[m] == 0)
			r->l0hold[m] = -1;
	}
	if (r->sim) {
		r->slog[r->nslog++] = x;
	} else {
		r->out[r->nout++] = x;
		cand_remove(r, x);
		gr_rdy_del(r, x);
	}
	for (int32_t k = v->soff[x]; k < v->soff[x + 1]; k++) {
		int32_t w = v->succ[k];
		if (v->kind[w] == DS_ALLOC) {
			gr_wait_less(r, w);
			if (r->wait[w] == 0)
				gr_alloc_ready(r, w);
			continue;
		}
		if (v->kind[x] == DS_ALLOC)
			gr_jset(r, &r->palloc[w], r->palloc[w] - 1);
		else
			gr_wait_less(r, w);
		gr_make_eager_if_ready(r, w);
	}
}

static void gr_drain(run *r)
{
	while (r->neag > 0) {
		int32_t w = r->eag[--r->neag];
		if (!r->done[w])
			gr_exec(r, w);
	}
}

/* The closure of t: t and its ancestors that have not run, in the order
 * they would run (depth first along view.cpred: ALLOC preds last, so
 * just before their user).  False when it holds more than kmax nodes. */
static bool gr_closure(run *r, int32_t t)
{
	const view *v = r->v;
	int32_t st = ++r->stamp, sp = 0;
	r->nclos = 0;
	r->mark[t] = st;
	r->stk[sp] = t;
	r->stki[sp++] = 0;
	while (sp > 0) {
		int32_t x = r->stk[sp - 1];
		int32_t k = v->poff[x] + r->stki[sp - 1]++;
		if (k >= v->poff[x + 1]) {
			r->clos[r->nclos++] = x;
			sp--;
			continue;
		}
		int32_t y = v->cpred[k];
		if (r->done[y] || r->mark[y] == st)
			continue;
		if (r->nclos + sp >= r->p->kmax && !r->nobound)
			return false;
		r->mark[y] = st;
		r->stk[sp] = y;
		r->stki[sp++] = 0;
	}
	return true;
}

/* The L0 memories whose not yet allocated buffers the FREE f still waits
 * for; all of them when the search exceeds a small budget (the caller
 * then treats the state as unsafe). */
static int gr_l0_needs(run *r, int32_t f)
{
	const view *v = r->v;
	int32_t st = ++r->stamp, sp = 0, seen = 0;
	int needs = 0;
	r->mark[f] = st;
	r->stk[sp++] = f;
	while (sp > 0) {
		int32_t x = r->stk[--sp];
		if (++seen > GR_NEEDS_MAX)
			return (1 << NL0) - 1;
		if (v->kind[x] == DS_ALLOC && v->l0[x] >= 0)
			needs |= 1 << v->l0[x];
		for (int32_t k = v->poff[x]; k < v->poff[x + 1]; k++) {
			int32_t y = v->pred[k];
			if (r->done[y] || r->mark[y] == st)
				continue;
			r->mark[y] = st;
			r->stk[sp++] = y;
		}
	}
	return needs;
}

/* Every live L0 buffer can still be freed: none waits for its own memory,
 * and the wait-for relation between busy memories has no cycle. */
static bool gr_l0_safe(run *r)
{
	int needs[NL0] = {0}, busy = 0;
	for (int m = 0; m < NL0; m++) {
		if (r->l0cnt[m] == 0)
			continue;
		busy |= 1 << m;
		needs[m] = gr_l0_needs(r, r->v->mate[r->l0hold[m]]);
		if (needs[m] & (1 << m))
			return false;
	}
	/* peel memories that wait for no busy memory */
	for (bool again = true; again;) {
		again = false;
		for (int m = 0; m < NL0; m++)
			if ((busy & (1 << m)) && !(needs[m] & busy)) {
				busy &= ~(1 << m);
				again = true;
			}
	}
	return busy == 0;
}

/* Simulation state that a checkpoint saves. */
typedef struct ckpt {
	int64_t njr, cur, peak;
	int32_t l0cnt[NL0], l0hold[NL0];
	int32_t neag, nplan, nslog;
} ckpt;

static void gr_save(const run *r, ckpt *c)
{
	c->njr = r->njr;
	c->cur = r->cur;
	c->peak = r->peak;
	memcpy(c->l0cnt, r->l0cnt, sizeof c->l0cnt);
	memcpy(c->l0hold, r->l0hold, sizeof c->l0hold);
	c->neag = r->neag;
	c->nplan = r->nplan;
	c->nslog = r->nslog;
}

static void gr_restore(run *r, const ckpt *c)
{
	while (r->njr > c->njr) {
		r->njr--;
		*r->jr[r->njr].p = r->jr[r->njr].old;
	}
	r->cur = c->cur;
	r->peak = c->peak;
	memcpy(r->l0cnt, c->l0cnt, sizeof c->l0cnt);
	memcpy(r->l0hold, c->l0hold, sizeof c->l0hold);
	r->neag = c->neag;
	r->nplan = c->nplan;
	r->nslog = c->nslog;
	r->viol = -1;
}

/* Runs the closure just built, recording it in the plan. */
static void gr_play_closure(run *r, int32_t *nfresh, bool *newl0)
{
	const view *v = r->v;
	for (int32_t i = 0; i < r->nclos && r->viol < 0; i++) {
		int32_t x = r->clos[i];
		if (r->done[x])
			continue;
		if (v->kind[x] == DS_ALLOC) {
			r->fresh[(*nfresh)++] = x;
			if (v->l0[x] >= 0)
				*newl0 = true;
		}
		r->plan[r->nplan++] = x;
		gr_exec(r, x);
		gr_drain(r);
	}
}

/* Simulates target t into the plan: its closure, then, while a buffer it
 * allocated has a single user left, that user's closure too: a chain of
 * single consumers is one decision.  An extension that is too big or
 * would break the one-live rule is left out. */
static int gr_play(run *r, int32_t t, bool *newl0)
{
	const view *v = r->v;
	int32_t nfresh = 0, scan = 0;
	r->nplan = 0;
	if (!gr_closure(r, t))
		return EV_BIG;
	gr_play_closure(r, &nfresh, newl0);
	if (r->viol >= 0)
		return EV_BLOCKED;
	while (scan < nfresh && r->nplan < GR_PLAY_SPAN * r->p->kmax) {
		int32_t a = r->fresh[scan++], b = v->buf[a], left = 0, u = -1;
		if (r->done[v->mate[a]])
			continue;
		for (int32_t k = v->uoff[b]; k < v->uoff[b + 1]; k++)
			if (!r->done[v->user[k]]) {
				left++;
				u = v->user[k];
			}
		if (left != 1 || !gr_closure(r, u) ||
		    r->nplan + r->nclos > GR_PLAY_SPAN * r->p->kmax)
			continue;
		ckpt c;
		bool l0 = *newl0;
		int32_t nf = nfresh;
		gr_save(r, &c);
		gr_play_closure(r, &nfresh, &l0);
		if (r->viol >= 0) {
			gr_restore(r, &c);
			nfresh = nf;
			continue;
		}
		*newl0 = l0;
	}
	return EV_OK;
}

/* Progress a simulation made on buffers that were live before it and stay
 * live: each counts its size times the share of its remaining users that
 * ran.  It separates otherwise equal targets in favour of the one that
 * brings live buffers closest to their FREE, which keeps a consistent
 * direction through symmetric structures such as tiled loops. */
static int64_t gr_credit(run *r)
{
	const view *v = r->v;
	int32_t st = ++r->stamp;
	int64_t sum = 0;
	for (int32_t i = 0; i < r->nslog; i++)
		r->mark[r->slog[i]] = st;
	for (int32_t i = 0; i < r->nslog; i++) {
		int32_t x = r->slog[i];
		if (v->kind[x] != DS_OP)
			continue;
		for (int32_t k = v->useoff[x]; k < v->useoff[x + 1]; k++) {
			int32_t b = v->use[k], a = v->balloc[b];
			if (r->mark[a] == st || r->mark[a] == -st ||
			    r->done[v->bfree[b]] || v->stay[a] == 0)
				continue;
			r->mark[a] = -st; /* counted */
			int32_t left = 0, ran = 0;
			for (int32_t j = v->uoff[b]; j < v->uoff[b + 1]; j++) {
				int32_t u = v->user[j];
				if (r->mark[u] == st)
					ran++;
				else if (!r->done[u])
					left++;
			}
			sum += v->stay[a] * CREDIT_SCALE * ran / (left + ran);
		}
	}
	return sum;
}

/* Rates target t by playing it in a simulation into e.  The plan stays
 * valid until the state changes, for gr_commit(). */
static int gr_rate(run *r, int32_t t, cand *e)
{
	ckpt c;
	bool newl0 = false;
	r->sim = true;
	r->njr = 0;
	r->nslog = 0;
	r->viol = -1;
	gr_save(r, &c);
	r->peak = r->cur;
	int rc = gr_play(r, t, &newl0);
	e->t = t;
	e->why = -1;
	if (rc == EV_BLOCKED) {
		e->why = r->viol;
		if (c.l0cnt[r->viol] == 0)
			rc = EV_UNSAFE;
	} else if (rc == EV_OK && newl0 && !gr_l0_safe(r)) {
		rc = EV_UNSAFE;
	}
	e->rise = r->peak - c.cur;
	e->net = r->cur - c.cur;
	e->credit = rc == EV_OK ? gr_credit(r) : 0;
	int32_t nplan = r->nplan;
	gr_restore(r, &c);
	r->nplan = nplan;
	r->sim = false;
	return rc;
}

/* Rates t and files it among the candidates, or drops it when it cannot
 * be a target now. */
static int gr_consider(run *r, int32_t t, ds_err *err)
{
	const view *v = r->v;
	if (r->done[t] || v->kind[t] == DS_ALLOC || v->load[t] ||
	    r->pushed[t] == r->round)
		return DS_OK;
	r->pushed[t] = r->round;
	cand e;
	int ev = gr_rate(r, t, &e);
	if (ev == EV_BIG || ev == EV_UNSAFE) {
		cand_remove(r, t);
		return DS_OK;
	}
	return cand_set(r, &e, err);
}

/* After nodes ran: their successors, and those successors' successors,
 * have smaller closures now; a FREE left waiting for one user makes that
 * user's rating better. */
static int gr_retrigger(run *r, int32_t from, ds_err *err)
{
	const view *v = r->v;
	r->round++;
	for (int32_t i = from; i < r->nout; i++) {
		int32_t x = r->out[i];
		for (int32_t k = v->soff[x]; k < v->soff[x + 1]; k++) {
			int32_t w = v->succ[k];
			if (r->done[w] || v->kind[w] == DS_ALLOC)
				continue;
			if (v->kind[w] == DS_FREE && r->wait[w] == 1) {
				for (int32_t j = v->poff[w]; j < v->poff[w + 1];
				     j++) {
					int32_t u = v->pred[j];
					if (!r->done[u] &&
					    v->kind[u] != DS_ALLOC &&
					    gr_consider(r, u, err))
						return DS_ENOMEM;
				}
				continue;
			}
			if (gr_consider(r, w, err))
				return DS_ENOMEM;
			for (int32_t j = v->soff[w]; j < v->soff[w + 1]; j++)
				if (gr_consider(r, v->succ[j], err))
					return DS_ENOMEM;
		}
	}
	return DS_OK;
}

/* Runs the plan gr_rate() just made, for real. */
static void gr_commit(run *r)
{
	for (int32_t i = 0; i < r->nplan; i++) {
		int32_t x = r->plan[i];
		if (!r->done[x]) {
			gr_exec(r, x);
			gr_drain(r);
		}
	}
}

/* No candidate can run: run the best operation that waits for nothing
 * but ALLOCs, the one-live rule permitting; failing that, the first one
 * (breaking the rule); failing that, an ALLOC nobody waits for.  O(R * K)
 * for R such nodes. */
static void gr_forced(run *r)
{
	const view *v = r->v;
	int32_t any = -1, ready = -1;
	cand best = {-1, -1, 0, 0, 0};
	for (int32_t i = 0; i < r->nrdy; i++) {
		int32_t x = r->rdy[i];
		DS_ASSERT(!r->done[x] && r->wait[x] == 0);
		if (v->kind[x] == DS_ALLOC) {
			if (ready < 0 || v->rank[x] < v->rank[ready])
				ready = x;
			continue;
		}
		if (any < 0 || v->rank[x] < v->rank[any])
			any = x;
		cand e;
		if (gr_rate(r, x, &e) == EV_OK &&
		    (best.t < 0 || cand_better(r, &e, &best)))
			best = e;
	}
	int32_t t = best.t >= 0 ? best.t : any;
	if (t >= 0) {
		cand e;
		r->nobound = true;
		gr_rate(r, t, &e);
		r->nobound = false;
		if (best.t < 0)
			r->invalid = true;
		gr_commit(r);
		return;
	}
	DS_ASSERT(ready >= 0);
	gr_exec(r, ready);
	gr_drain(r);
}

/* Working arrays for greedy runs over n nodes and ne edges, allocated
 * once and reused by every run. */
run *mpas_gr_new(ds_arena *a, int32_t n, int64_t ne, ds_err *err)
{
	run *r = ds_arena_alloc(a, 1, sizeof *r);
	if (!r) {
		ds_fail(err, DS_ENOMEM, "out of memory");
		return NULL;
	}
	const size_t n1 = (size_t)n + 1;
	r->ar = a;
	r->done = ds_arena_alloc(a, (size_t)n, sizeof *r->done);
	r->wait = ds_arena_alloc(a, (size_t)n, sizeof *r->wait);
	r->palloc = ds_arena_alloc(a, (size_t)n, sizeof *r->palloc);
	r->mark = ds_arena_alloc(a, (size_t)n, sizeof *r->mark);
	r->pushed = ds_arena_alloc(a, (size_t)n, sizeof *r->pushed);
	/* a simulation changes each counter at most once per edge, and
	 * each node's done flag once */
	r->jr = ds_arena_alloc(a, (size_t)(n + 2 * ne + 1), sizeof *r->jr);
	r->eag = ds_arena_alloc(a, n1, sizeof *r->eag);
	r->clos = ds_arena_alloc(a, n1, sizeof *r->clos);
	r->fresh = ds_arena_alloc(a, n1, sizeof *r->fresh);
	r->plan = ds_arena_alloc(a, n1, sizeof *r->plan);
	r->slog = ds_arena_alloc(a, n1, sizeof *r->slog);
	r->stk = ds_arena_alloc(a, n1, sizeof *r->stk);
	r->stki = ds_arena_alloc(a, n1, sizeof *r->stki);
	r->cpos = ds_arena_alloc(a, n1, sizeof *r->cpos);
	r->tl = ds_arena_alloc(a, n1, sizeof *r->tl);
	r->tr = ds_arena_alloc(a, n1, sizeof *r->tr);
	r->tmin = ds_arena_alloc(a, n1, sizeof *r->tmin);
	r->rdy = ds_arena_alloc(a, n1, sizeof *r->rdy);
	r->rpos = ds_arena_alloc(a, n1, sizeof *r->rpos);
	if (a->failed) {
		ds_fail(err, DS_ENOMEM, "out of memory");
		return NULL;
	}
	return r;
}

/* ---- debug checks (asserts live only) ---- */

#ifndef NDEBUG
/* Treap x, filed under root m: keys strictly increasing in order, heap
 * order by tp_above, tmin (POL_PEAK) the subtree's first by priority,
 * every node a candidate filed there.  Returns its size; *lo, *hi: its
 * first and last node.  Recursive: O(depth) stack, the treaps' own. */
static int64_t gr_check_treap(const run *r, int32_t x, int m, int32_t *lo,
			      int32_t *hi)
{
	if (x < 0)
		return 0;
	int32_t l = r->tl[x], rt = r->tr[x], llo, lhi, rlo, rhi;
	DS_ASSERT(r->cpos[x] >= 0 && r->cpos[x] < r->nc);
	DS_ASSERT(r->c[r->cpos[x]].t == x && r->c[r->cpos[x]].why + 1 == m);
	int64_t k = 1 + gr_check_treap(r, l, m, &llo, &lhi) +
		    gr_check_treap(r, rt, m, &rlo, &rhi);
	DS_ASSERT(l < 0 || (tp_above(x, l) && cand_key(r, lhi, x)));
	DS_ASSERT(rt < 0 || (tp_above(x, rt) && cand_key(r, x, rlo)));
	if (r->p->pol == POL_PEAK) {
		int32_t first = x;
		if (l >= 0)
			first = cand_prio_first(r, r->tmin[l], first);
		if (rt >= 0)
			first = cand_prio_first(r, first, r->tmin[rt]);
		DS_ASSERT(r->tmin[x] == first);
	}
	*lo = l >= 0 ? llo : x;
	*hi = rt >= 0 ? rhi : x;
	return k;
}

/* The candidates against their treaps: every one filed in the treap of
 * the memory it waits for, and tp_best the best of each by a scan. */
static void gr_check_cands(const run *r)
{
	int64_t total = 0;
	for (int m = 0; m <= NL0; m++) {
		int32_t lo, hi, best = -1;
		total += gr_check_treap(r, r->troot[m], m, &lo, &hi);
		for (int64_t i = 0; i < r->nc; i++)
			if (r->c[i].why + 1 == m &&
			    (best < 0 ||
			     cand_better(r, &r->c[i], cand_get(r, best))))
				best = r->c[i].t;
		DS_ASSERT(tp_best(r, r->troot[m]) == best);
	}
	DS_ASSERT(total == r->nc);
}

/* What node x waits for, from scratch: an ALLOC its preds not done;
 * another node its preds not available (a node not done, or an ALLOC
 * whose preds are not all done). */
static int32_t gr_wait_of(const run *r, int32_t x)
{
	const view *v = r->v;
	int32_t w = 0;
	for (int32_t k = v->poff[x]; k < v->poff[x + 1]; k++) {
		int32_t y = v->pred[k];
		if (v->kind[x] == DS_ALLOC || v->kind[y] != DS_ALLOC)
			w += !r->done[y];
		else
			w += gr_wait_of(r, y) > 0;
	}
	return w;
}

/* The counters, the memory level and the ready set of the real state
 * against a recomputation from the done flags. */
static void gr_check_state(const run *r)
{
	const view *v = r->v;
	int64_t cur = 0;
	int32_t l0cnt[NL0] = {0}, nrdy = 0, ndone = 0;
	for (int32_t x = 0; x < v->n; x++) {
		int32_t pa = 0;
		for (int32_t k = v->poff[x]; k < v->poff[x + 1]; k++)
			pa += v->kind[x] != DS_ALLOC &&
			      v->kind[v->pred[k]] == DS_ALLOC &&
			      !r->done[v->pred[k]];
		DS_ASSERT(r->palloc[x] == pa);
		DS_ASSERT(r->wait[x] == gr_wait_of(r, x));
		DS_ASSERT((r->rpos[x] >= 0) == (!r->done[x] && !r->wait[x]));
		DS_ASSERT(r->rpos[x] < 0 || r->rdy[r->rpos[x]] == x);
		nrdy += r->rpos[x] >= 0;
		if (!r->done[x])
			continue;
		ndone++;
		int d = v->kind[x] == DS_ALLOC ? 1 : v->kind[x] == DS_FREE ? -1 : 0;
		cur += d * v->stay[x];
		if (v->l0[x] >= 0)
			l0cnt[v->l0[x]] += d;
	}
	DS_ASSERT(nrdy == r->nrdy && ndone == r->nout && cur == r->cur);
	for (int m = 0; m < NL0; m++)
		DS_ASSERT(l0cnt[m] == r->l0cnt[m] &&
			  (r->l0cnt[m] > 0) == (r->l0hold[m] >= 0));
}
#endif

/* At the 2^k-th decision of a run (O(log N) times, O(N + E + C) each),
 * the incremental structures against a recomputation from scratch. */
static void gr_check(run *r)
{
#ifndef NDEBUG
	r->ndecide++;
	if (r->ndecide & (r->ndecide - 1))
		return;
	DS_ASSERT(!r->sim);
	gr_check_cands(r);
	gr_check_state(r);
#else
	(void)r;
#endif
}

/* A fresh run over view v: nothing done, the counters from the graph,
 * what waits for nothing in the ready set, and what costs nothing run. */
static void gr_reset(run *r, const view *v, const gparams *p, int32_t *out)
{
	const int32_t n = v->n;
	r->v = v;
	r->p = p;
	r->out = out;
	r->viol = -1;
	r->stamp = r->round = 0;
	r->njr = 0;
	r->sim = false;
	r->cur = r->peak = r->runpeak = 0;
	r->neag = r->nclos = r->nplan = r->nslog = 0;
	r->nobound = false;
	r->nc = 0;
	for (int m = 0; m <= NL0; m++)
		r->troot[m] = -1;
	r->nout = 0;
	r->invalid = false;
#ifndef NDEBUG
	r->ndecide = 0;
#endif
	memset(r->done, 0, (size_t)n * sizeof *r->done);
	memset(r->wait, 0, (size_t)n * sizeof *r->wait);
	memset(r->palloc, 0, (size_t)n * sizeof *r->palloc);
	memset(r->mark, 0, (size_t)n * sizeof *r->mark);
	memset(r->pushed, 0, (size_t)n * sizeof *r->pushed);
	for (int m = 0; m < NL0; m++) {
		r->l0cnt[m] = 0;
		r->l0hold[m] = -1;
	}
	r->nrdy = 0;
	for (int32_t x = 0; x < n; x++) {
		r->cpos[x] = -1;
		r->rpos[x] = -1;
		for (int32_t k = v->poff[x]; k < v->poff[x + 1]; k++) {
			int32_t y = v->pred[k];
			if (v->kind[x] == DS_ALLOC)
				r->wait[x]++;
			else if (v->kind[y] == DS_ALLOC)
				r->palloc[x]++;
			if (v->kind[x] != DS_ALLOC &&
			    !(v->kind[y] == DS_ALLOC &&
			      v->poff[y + 1] == v->poff[y]))
				r->wait[x]++;
		}
	}
	for (int32_t x = 0; x < n; x++) {
		if (r->wait[x] == 0)
			gr_rdy_add(r, x);
		gr_make_eager_if_ready(r, x);
	}
	gr_drain(r);
}

/* The first candidates: what can run now, and one or two steps on. */
static int gr_seed(run *r, ds_err *err)
{
	const view *v = r->v;
	int rc = DS_OK;
	r->round++;
	for (int32_t x = 0; x < v->n && rc == DS_OK; x++) {
		if (r->done[x] || v->kind[x] == DS_ALLOC || r->wait[x] != 0)
			continue;
		rc = gr_consider(r, x, err);
		for (int32_t k = v->soff[x]; k < v->soff[x + 1] && !rc; k++) {
			int32_t w = v->succ[k];
			rc = gr_consider(r, w, err);
			for (int32_t j = v->soff[w]; j < v->soff[w + 1] && !rc;
			     j++)
				rc = gr_consider(r, v->succ[j], err);
		}
	}
	return rc;
}

/* The best candidate whose L0 memory is free: the best of each treap
 * that may run; -1 when there is none. */
static int32_t gr_best(const run *r)
{
	int32_t bi = -1;
	for (int m = -1; m < NL0; m++) {
		if (m >= 0 && r->l0cnt[m] > 0)
			continue;
		int32_t t = tp_best(r, r->troot[m + 1]);
		if (t >= 0 &&
		    (bi < 0 || cand_better(r, cand_get(r, t), cand_get(r, bi))))
			bi = t;
	}
	return bi;
}

/* Rates the best candidate bi again (its rating may be stale): runs it
 * when unchanged (true), else files the new rating or drops it. */
static bool gr_recheck(run *r, int32_t bi, int *rc, ds_err *err)
{
	cand e, old = *cand_get(r, bi);
	int ev = gr_rate(r, old.t, &e);
	if (ev == EV_BIG || ev == EV_UNSAFE) {
		cand_remove(r, old.t);
		return false;
	}
	if (ev == EV_BLOCKED || e.rise != old.rise || e.net != old.net ||
	    e.credit != old.credit) {
		/* found waiting for a busy L0 memory: keep the rating of its
		 * last full simulation; the partial one stops at the busy
		 * memory, looks cheap, and would be re-rated each time that
		 * memory frees (for all candidates waiting for it:
		 * quadratic) */
		if (ev == EV_BLOCKED && old.why < 0) {
			e.rise = old.rise;
			e.net = old.net;
			e.credit = old.credit;
		}
		*rc = cand_set(r, &e, err);
		return false;
	}
	gr_commit(r);
	return true;
}

/* One decision: the best candidate runs (or, with none, gr_forced), and
 * the successors of what ran are rated again. */
static int gr_step(run *r, ds_err *err)
{
	int rc = DS_OK;
	gr_check(r);
	int32_t bi = gr_best(r), from = r->nout;
	if (bi < 0)
		gr_forced(r);
	else if (!gr_recheck(r, bi, &rc, err))
		return rc;
	if (r->peak > r->runpeak)
		r->runpeak = r->peak;
	return gr_retrigger(r, from, err);
}

int mpas_gr_run(run *r, const view *v, const gparams *p, int32_t *out,
	   bool *invalid, ds_err *err)
{
	gr_reset(r, v, p, out);
	int rc = gr_seed(r, err);
	r->runpeak = r->peak;
	while (rc == DS_OK && r->nout < v->n)
		rc = gr_step(r, err);
	*invalid = r->invalid;
	return rc;
}
