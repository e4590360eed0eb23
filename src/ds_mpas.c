/* ds_mpas.c: stage 1, MPAS: memory-pressure-aware topological scheduling.
 *
 * Requires: a valid graph (ds_builder_finish; its pred/succ lists hold
 * the residency constraints too).  Guarantees: order[] is a topological
 * order of all n nodes; at most one buffer of each L0 memory is live at
 * any time whenever one of the candidate orders achieves it (the
 * free-first order, ties broken by the structural rank, is always a
 * candidate, and every greedy order does on the bundled graphs).  The
 * aim is the least peak_vstay.  A graph holding several operators that
 * share nothing (weakly connected components) is scheduled one operator
 * after the other, each on its own (ds_mpas() at the end of the file).
 *
 * Method.  Operations do not change memory: the decision is which
 * operation (with the ALLOCs it needs) runs next; an ALLOC is best run
 * just before its first user and a FREE just after its last.  The list
 * scheduler (greedy()) keeps candidate targets: an operation with its
 * ancestors that have not run ("closure", bounded in size), extended along
 * buffers left with a single consumer (a load alone looks cheap, but its
 * buffer stays until the consumer runs).  A target is rated by simulating
 * it: the rise of memory over the current level, the net change once the
 * FREEs it enables have run, and the progress it makes towards freeing
 * live buffers.  The best target runs, then every node that costs nothing
 * (FREEs, operations whose buffers are live) runs at once.  L0 ALLOCs are
 * gated: a target may not need a busy L0 memory, and one that leaves an
 * L0 buffer live must leave a state in which every live L0 buffer can
 * still be freed (no wait-for cycle between L0 memories), so the one-live
 * rule holds without deadlock.  The variants (priorities, forwards or on
 * the reversed graph, where FREEs play ALLOCs and the peak is the same)
 * run for a few rounds each, buffers live at the previous round's peak
 * weighing more.
 *
 * Nothing depends on the node Ids but the order among nodes alike in
 * every structural respect: every exact tie (between candidates, in the
 * pred/succ lists the closures walk, among buffers the local search
 * tries) is broken by one structural rank (ds_structural_rank(), in
 * ds_rank.c), a program order recovered from the graph alone.  It also
 * yields candidates of its own: the free-first order with its ties
 * broken by the rank, and a greedy variant (POL_RANK) that follows it as
 * closely as the one-live rule allows.  Those recover the loop order of
 * the program, a global choice the greedy's local view cannot see (which
 * of two loops of an attention kernel goes inside decides whether the
 * queries or the keys and values stay resident).  A graph without loop
 * structure (values used within a window of recent ones, as in the
 * generator's random DAGs) has no loop order to recover; there the band
 * orders (ds_band_order(), along the graph's long axis, either way) are
 * the program order, and they are candidates too (the better one also
 * smoothed where it beats every other candidate).
 *
 * The best orders then go through a local search that moves blocks of
 * operations across the peak (with lifetime compaction: ALLOCs sunk to
 * their first user, FREEs hoisted to their last): a buffer live at a
 * peak position leaves it when all its remaining users move before it
 * (with their ancestors), or its first user moves after it, or its last
 * user before it.  The best order wins; ties keep the earlier candidate.
 *
 * Cost, N nodes, E constraint edges, B buffers: a greedy run is about
 * O((N + E) * K * D * log C) with K the closure bound (24), D the fan-out
 * of the re-rating after each decision and C the candidates (up to N):
 * the candidates sit in treaps, one per L0 memory they wait for, and a
 * decision finds the best in O(log C) (tbest()).  A decision also re-rates
 * the candidates whose stale ratings put them ahead, a few per decision
 * on the graphs measured (a candidate found waiting for a busy L0 memory
 * keeps its last full rating, so the waiting ones do not all come back
 * each time the memory frees).  forced(), when no candidate can run,
 * rates every node that waits for nothing (a set kept up to date),
 * O(R * K) a call for R such nodes; it never runs on the bundled graphs
 * nor on the generator's at 100k nodes.  There are
 * GREEDY_WORK * effort / N runs (at least one, at most NVARIANTS *
 * MAX_ROUNDS), so small graphs get more.  The structural rank: see
 * ds_rank.c (O((N + E) log N) per round of hashing; the two band
 * orders O((N + E) log(N + E))).  Splitting into
 * operators: O(N + E) and a copy of the graph.  The
 * local search, on the two best orders, does at most effort move
 * evaluations of O(W) each (W the window, 256 operations); finding the
 * moves of a step is O(N + 48 B) and an accepted move costs O(N + E),
 * these together bounded by LS_SCAN * W * effort.  So O((N + E) log N)
 * for a given effort: 1M nodes of the generator's matmul kind take 4 to
 * 5 s.  Memory O(N + E). */
#include "ds_stage.h"

#include <stdlib.h>
#include <string.h>

/* Number of L0 memories, indexed from DS_L0A. */
#define NL0 3

/* Move evaluations of the local search per polished order, by default. */
#define DEFAULT_EFFORT 40000
/* Greedy runs: GREEDY_WORK * effort / N of them. */
#define GREEDY_WORK 2
/* Local search: a move spans at most LS_WINDOW operations, and moves a
 * block at most LS_REACH positions past the peak; LS_STARTS orders are
 * polished. */
#define LS_WINDOW 256
#define LS_REACH 8
#define LS_STARTS 2
/* The scans for moves and the re-evaluations after them (O(N + B) a step)
 * stop past LS_SCAN * LS_WINDOW * effort elementary steps: a huge graph
 * gets a few steps, not up to effort of them (the bundled graphs use at
 * most about a tenth of it). */
#define LS_SCAN 8

/* ---- the graph as the scheduler sees it ---- */

/* One direction of the graph.  In the reversed view pred and succ swap,
 * and so do ALLOC and FREE. */
typedef struct view {
	int32_t n;
	const int32_t *poff, *pred, *soff, *succ;
	const uint8_t *kind;  /* enum ds_kind in this direction */
	const int64_t *stay;  /* bytes counted in peak_vstay (ALLOC/FREE) */
	const int8_t *l0;     /* 0..NL0-1 for L0 ALLOC/FREE nodes, else -1 */
	const int32_t *mate;  /* ALLOC <-> FREE of the same buffer, else -1 */
	const int32_t *level; /* operations on the longest path from a root */
	const uint8_t *load;  /* an operation preceded by ALLOCs only: never
				 a target of its own (it only adds memory) */
	const int32_t *buf, *uoff, *user; /* the graph's buffers and users */
	const int32_t *useoff, *use;	  /* the graph's operations' buffers */
	const int32_t *balloc, *bfree;	  /* a buffer's ALLOC and FREE here */
	const int32_t *rank; /* breaks exact ties: ds_structural_rank() */
} view;

/* ---- greedy variants ---- */

enum {
	POL_NET,  /* least net memory, then least rise */
	POL_RISE, /* least rise, then least net */
	POL_PEAK, /* targets that stay under the peak so far first, by
		     prio; the others by least rise */
	POL_RANK  /* the least rank: follows the structural rank as closely
		     as the one-live rule lets it */
};
enum {
	PR_NET,	   /* least net */
	PR_CREDIT  /* most progress on live buffers */
};

typedef struct gparams {
	int8_t dir;   /* 0 forwards, 1 on the reversed graph */
	int8_t pol;
	int8_t prio;  /* POL_PEAK only */
	int32_t kmax; /* closure bound, in nodes */
} gparams;

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
typedef struct run {
	const view *v;
	const gparams *p;
	const ds_heap *h;
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
	/* nodes not run that wait for nothing (wait == 0), for forced();
	 * kept for the real state only (simulations restore it) */
	int32_t *rdy, *rpos;
	int32_t nrdy;
	/* closure, and the DFS stacks that build it */
	int32_t *clos, nclos;
	int32_t *stk, *stki;
	int32_t *fresh;	      /* ALLOCs run by the target being played */
	int32_t *plan, nplan; /* the nodes a target runs, in order */
	int32_t *slog, nslog; /* every node a simulation ran */
	bool nobound;	      /* forced(): closures of any size */
	/* candidates, and each target's index among them (-1: none) */
	cand *c;
	int64_t nc, capc;
	int32_t *cpos;
	/* the candidates again, one treap per L0 memory they wait for (and
	 * one for those that can run), ordered by cand_key(); per target:
	 * children and, for POL_PEAK, the subtree's first by prio_first() */
	int32_t troot[NL0 + 1];
	int32_t *tl, *tr, *tmin;
	/* the order */
	int32_t *out, nout;
	int64_t runpeak; /* peak of the order so far */
	bool invalid;	 /* the one-live rule had to be broken */
} run;

static void jset(run *r, int32_t *p, int32_t val)
{
	if (r->sim) {
		r->jr[r->njr].p = p;
		r->jr[r->njr].old = *p;
		r->njr++;
	}
	*p = val;
}

static void rdy_add(run *r, int32_t x)
{
	if (r->sim || r->rpos[x] >= 0 || r->done[x])
		return;
	r->rpos[x] = r->nrdy;
	r->rdy[r->nrdy++] = x;
}

static void rdy_del(run *r, int32_t x)
{
	int32_t i = r->rpos[x];
	if (i < 0)
		return;
	r->rdy[i] = r->rdy[--r->nrdy];
	r->rpos[r->rdy[i]] = i;
	r->rpos[x] = -1;
}

/* One thing w waited for is available. */
static void wait_less(run *r, int32_t w)
{
	jset(r, &r->wait[w], r->wait[w] - 1);
	if (r->wait[w] == 0)
		rdy_add(r, w);
}

static void make_eager_if_ready(run *r, int32_t w)
{
	if (!r->done[w] && r->wait[w] == 0 && r->palloc[w] == 0 &&
	    r->v->kind[w] != DS_ALLOC)
		r->eag[r->neag++] = w;
}

/* An ALLOC became able to run: its users no longer wait for it. */
static void alloc_ready(run *r, int32_t a)
{
	const view *v = r->v;
	for (int32_t k = v->soff[a]; k < v->soff[a + 1]; k++) {
		int32_t y = v->succ[k];
		if (v->kind[y] == DS_ALLOC)
			continue;
		wait_less(r, y);
		make_eager_if_ready(r, y);
	}
}

/* ---- the candidate treaps ---- */

/* a before b in the variant's order (better()) as it would be with
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
static bool better(const run *r, const cand *a, const cand *b)
{
	return cand_before(r, a, b, r->runpeak - r->cur);
}

static const cand *cget(const run *r, int32_t t)
{
	DS_ASSERT(r->cpos[t] >= 0);
	return &r->c[r->cpos[t]];
}

/* The treaps' key: the variant's order with no room (rise >= 0 > room),
 * which for POL_PEAK sorts by rise first, so the targets that fit under
 * the peak are a prefix. */
static bool cand_key(const run *r, int32_t a, int32_t b)
{
	return cand_before(r, cget(r, a), cget(r, b), INT64_MIN);
}

/* POL_PEAK's order among the targets that fit under the peak (rise
 * ignored: all room); -1 is last. */
static int32_t prio_first(const run *r, int32_t a, int32_t b)
{
	if (a < 0 || b < 0)
		return a < 0 ? b : a;
	return cand_before(r, cget(r, a), cget(r, b), INT64_MAX) ? a : b;
}

/* Heap priority of a treap node: a hash, so the shape is random whatever
 * the order of insertions (it affects the time, never the choice). */
static uint32_t tprio(int32_t t)
{
	uint32_t z = (uint32_t)t * 0x9E3779B1u;
	z ^= z >> 16;
	z *= 0x85EBCA6Bu;
	z ^= z >> 13;
	return z;
}

static bool tabove(int32_t a, int32_t b)
{
	uint32_t pa = tprio(a), pb = tprio(b);
	return pa != pb ? pa > pb : a > b;
}

static void tpull(run *r, int32_t x)
{
	if (r->p->pol != POL_PEAK)
		return;
	int32_t m = x;
	if (r->tl[x] >= 0)
		m = prio_first(r, r->tmin[r->tl[x]], m);
	if (r->tr[x] >= 0)
		m = prio_first(r, m, r->tmin[r->tr[x]]);
	r->tmin[x] = m;
}

/* Splits treap x into the nodes before t (*lo) and the others (*hi). */
static void tsplit(run *r, int32_t x, int32_t t, int32_t *lo, int32_t *hi)
{
	if (x < 0) {
		*lo = *hi = -1;
		return;
	}
	if (cand_key(r, x, t)) {
		tsplit(r, r->tr[x], t, &r->tr[x], hi);
		*lo = x;
	} else {
		tsplit(r, r->tl[x], t, lo, &r->tl[x]);
		*hi = x;
	}
	tpull(r, x);
}

/* Joins treaps a and b, every node of a before every node of b. */
static int32_t tmerge(run *r, int32_t a, int32_t b)
{
	if (a < 0 || b < 0)
		return a < 0 ? b : a;
	if (tabove(a, b)) {
		r->tr[a] = tmerge(r, r->tr[a], b);
		tpull(r, a);
		return a;
	}
	r->tl[b] = tmerge(r, a, r->tl[b]);
	tpull(r, b);
	return b;
}

static int32_t tinsert(run *r, int32_t x, int32_t t)
{
	if (x < 0 || tabove(t, x)) {
		tsplit(r, x, t, &r->tl[t], &r->tr[t]);
		tpull(r, t);
		return t;
	}
	if (cand_key(r, t, x))
		r->tl[x] = tinsert(r, r->tl[x], t);
	else
		r->tr[x] = tinsert(r, r->tr[x], t);
	tpull(r, x);
	return x;
}

static int32_t terase(run *r, int32_t x, int32_t t)
{
	DS_ASSERT(x >= 0);
	if (x == t)
		return tmerge(r, r->tl[t], r->tr[t]);
	if (cand_key(r, t, x))
		r->tl[x] = terase(r, r->tl[x], t);
	else
		r->tr[x] = terase(r, r->tr[x], t);
	tpull(r, x);
	return x;
}

/* The best target of treap x in better()'s order, -1 when it is empty:
 * the first one; for POL_PEAK, the first by priority among those that
 * fit under the peak (a prefix of the treap), if any.  O(depth). */
static int32_t tbest(const run *r, int32_t x)
{
	int32_t best = -1, first = x;
	if (r->p->pol == POL_PEAK) {
		int64_t room = r->runpeak - r->cur;
		for (int32_t y = x; y >= 0;) {
			if (cget(r, y)->rise > room) {
				y = r->tl[y];
				continue;
			}
			if (r->tl[y] >= 0)
				best = prio_first(r, best, r->tmin[r->tl[y]]);
			best = prio_first(r, best, y);
			y = r->tr[y];
		}
		if (best >= 0)
			return best;
	}
	while (first >= 0 && r->tl[first] >= 0)
		first = r->tl[first];
	return first;
}

static int32_t *troot_of(run *r, const cand *e)
{
	return &r->troot[e->why + 1];
}

static void cand_remove(run *r, int32_t t)
{
	int64_t i = r->cpos[t];
	if (i < 0)
		return;
	int32_t *root = troot_of(r, &r->c[i]);
	*root = terase(r, *root, t);
	r->c[i] = r->c[--r->nc];
	r->cpos[r->c[i].t] = (int32_t)i;
	r->cpos[t] = -1;
}

/* Files e among the candidates, replacing the rating of its target. */
static int cand_set(run *r, const cand *e, ds_err *err)
{
	int32_t t = e->t;
	if (r->cpos[t] >= 0) {
		int32_t *root = troot_of(r, cget(r, t));
		*root = terase(r, *root, t);
	} else {
		if (ds_reserve(r->h, (void **)&r->c, &r->capc, r->nc + 1,
			       sizeof *r->c, err))
			return DS_ENOMEM;
		r->cpos[t] = (int32_t)r->nc++;
	}
	r->c[r->cpos[t]] = *e;
	r->tl[t] = r->tr[t] = -1;
	r->tmin[t] = t;
	int32_t *root = troot_of(r, e);
	*root = tinsert(r, *root, t);
	return DS_OK;
}

/* Runs node x (for real, or in a simulation with a journal). */
static void exec_node(run *r, int32_t x)
{
	const view *v = r->v;
	DS_ASSERT(!r->done[x]);
	jset(r, &r->done[x], 1);
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
		rdy_del(r, x);
	}
	for (int32_t k = v->soff[x]; k < v->soff[x + 1]; k++) {
		int32_t w = v->succ[k];
		if (v->kind[w] == DS_ALLOC) {
			wait_less(r, w);
			if (r->wait[w] == 0)
				alloc_ready(r, w);
			continue;
		}
		if (v->kind[x] == DS_ALLOC)
			jset(r, &r->palloc[w], r->palloc[w] - 1);
		else
			wait_less(r, w);
		make_eager_if_ready(r, w);
	}
}

static void drain(run *r)
{
	while (r->neag > 0) {
		int32_t w = r->eag[--r->neag];
		if (!r->done[w])
			exec_node(r, w);
	}
}

/* The closure of t: t and its ancestors that have not run, in the order
 * they would run (depth first; ALLOC preds last, so just before their
 * user).  False when it holds more than kmax nodes. */
static bool closure(run *r, int32_t t)
{
	const view *v = r->v;
	int32_t st = ++r->stamp, sp = 0;
	r->nclos = 0;
	r->mark[t] = st;
	r->stk[sp] = t;
	r->stki[sp++] = 0;
	while (sp > 0) {
		int32_t x = r->stk[sp - 1];
		int32_t deg = v->poff[x + 1] - v->poff[x];
		int32_t i = r->stki[sp - 1]++;
		if (i >= 2 * deg) {
			r->clos[r->nclos++] = x;
			sp--;
			continue;
		}
		int32_t y = v->pred[v->poff[x] + (i < deg ? i : i - deg)];
		if ((v->kind[y] == DS_ALLOC) != (i >= deg) || r->done[y] ||
		    r->mark[y] == st)
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
static int l0_needs(run *r, int32_t f)
{
	const view *v = r->v;
	int32_t st = ++r->stamp, sp = 0, seen = 0;
	int needs = 0;
	r->mark[f] = st;
	r->stk[sp++] = f;
	while (sp > 0) {
		int32_t x = r->stk[--sp];
		if (++seen > 256)
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
static bool l0_safe(run *r)
{
	int needs[NL0] = {0}, busy = 0;
	for (int m = 0; m < NL0; m++) {
		if (r->l0cnt[m] == 0)
			continue;
		busy |= 1 << m;
		needs[m] = l0_needs(r, r->v->mate[r->l0hold[m]]);
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

static void save(const run *r, ckpt *c)
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

static void restore(run *r, const ckpt *c)
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
static void play_closure(run *r, int32_t *nfresh, bool *newl0)
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
		exec_node(r, x);
		drain(r);
	}
}

/* Simulates target t into the plan: its closure, then, while a buffer it
 * allocated has a single user left, that user's closure too: a chain of
 * single consumers is one decision.  An extension that is too big or
 * would break the one-live rule is left out. */
static int play(run *r, int32_t t, bool *newl0)
{
	const view *v = r->v;
	int32_t nfresh = 0, scan = 0;
	r->nplan = 0;
	if (!closure(r, t))
		return EV_BIG;
	play_closure(r, &nfresh, newl0);
	if (r->viol >= 0)
		return EV_BLOCKED;
	while (scan < nfresh && r->nplan < 4 * r->p->kmax) {
		int32_t a = r->fresh[scan++], b = v->buf[a], left = 0, u = -1;
		if (r->done[v->mate[a]])
			continue;
		for (int32_t k = v->uoff[b]; k < v->uoff[b + 1]; k++)
			if (!r->done[v->user[k]]) {
				left++;
				u = v->user[k];
			}
		if (left != 1 || !closure(r, u) ||
		    r->nplan + r->nclos > 4 * r->p->kmax)
			continue;
		ckpt c;
		bool l0 = *newl0;
		int32_t nf = nfresh;
		save(r, &c);
		play_closure(r, &nfresh, &l0);
		if (r->viol >= 0) {
			restore(r, &c);
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
static int64_t credit(run *r)
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
			sum += v->stay[a] * 1024 * ran / (left + ran);
		}
	}
	return sum;
}

/* Rates target t by playing it in a simulation into e.  The plan stays
 * valid until the state changes, for commit(). */
static int rate(run *r, int32_t t, cand *e)
{
	ckpt c;
	bool newl0 = false;
	r->sim = true;
	r->njr = 0;
	r->nslog = 0;
	r->viol = -1;
	save(r, &c);
	r->peak = r->cur;
	int rc = play(r, t, &newl0);
	e->t = t;
	e->why = -1;
	if (rc == EV_BLOCKED) {
		e->why = r->viol;
		if (c.l0cnt[r->viol] == 0)
			rc = EV_UNSAFE;
	} else if (rc == EV_OK && newl0 && !l0_safe(r)) {
		rc = EV_UNSAFE;
	}
	e->rise = r->peak - c.cur;
	e->net = r->cur - c.cur;
	e->credit = rc == EV_OK ? credit(r) : 0;
	int32_t nplan = r->nplan;
	restore(r, &c);
	r->nplan = nplan;
	r->sim = false;
	return rc;
}

/* Rates t and files it among the candidates, or drops it when it cannot
 * be a target now. */
static int consider(run *r, int32_t t, ds_err *err)
{
	const view *v = r->v;
	if (r->done[t] || v->kind[t] == DS_ALLOC || v->load[t] ||
	    r->pushed[t] == r->round)
		return DS_OK;
	r->pushed[t] = r->round;
	cand e;
	int ev = rate(r, t, &e);
	if (ev == EV_BIG || ev == EV_UNSAFE) {
		cand_remove(r, t);
		return DS_OK;
	}
	return cand_set(r, &e, err);
}

/* After nodes ran: their successors, and those successors' successors,
 * have smaller closures now; a FREE left waiting for one user makes that
 * user's rating better. */
static int retrigger(run *r, int32_t from, ds_err *err)
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
					    consider(r, u, err))
						return DS_ENOMEM;
				}
				continue;
			}
			if (consider(r, w, err))
				return DS_ENOMEM;
			for (int32_t j = v->soff[w]; j < v->soff[w + 1]; j++)
				if (consider(r, v->succ[j], err))
					return DS_ENOMEM;
		}
	}
	return DS_OK;
}

/* Runs the plan rate() just made, for real. */
static void commit(run *r)
{
	for (int32_t i = 0; i < r->nplan; i++) {
		int32_t x = r->plan[i];
		if (!r->done[x]) {
			exec_node(r, x);
			drain(r);
		}
	}
}

/* No candidate can run: run the best operation that waits for nothing
 * but ALLOCs, the one-live rule permitting; failing that, the first one
 * (breaking the rule); failing that, an ALLOC nobody waits for.  O(R * K)
 * for R such nodes. */
static void forced(run *r)
{
	const view *v = r->v;
	int32_t any = -1, ready = -1;
	cand best = {-1, -1, 0, 0, 0};
	for (int32_t i = 0; i < r->nrdy; i++) {
		int32_t x = r->rdy[i];
		DS_ASSERT(!r->done[x] && r->wait[x] == 0);
		if (v->kind[x] == DS_ALLOC) {
			if (ready < 0 || x < ready)
				ready = x;
			continue;
		}
		if (any < 0 || x < any)
			any = x;
		cand e;
		if (rate(r, x, &e) == EV_OK &&
		    (best.t < 0 || better(r, &e, &best)))
			best = e;
	}
	int32_t t = best.t >= 0 ? best.t : any;
	if (t >= 0) {
		cand e;
		r->nobound = true;
		rate(r, t, &e);
		r->nobound = false;
		if (best.t < 0)
			r->invalid = true;
		commit(r);
		return;
	}
	DS_ASSERT(ready >= 0);
	exec_node(r, ready);
	drain(r);
}

static void run_free(run *r)
{
	const ds_heap *h = r->h;
	if (!h)
		return;
	ds_free(h, r->done);
	ds_free(h, r->wait);
	ds_free(h, r->palloc);
	ds_free(h, r->mark);
	ds_free(h, r->pushed);
	ds_free(h, r->jr);
	ds_free(h, r->eag);
	ds_free(h, r->clos);
	ds_free(h, r->fresh);
	ds_free(h, r->plan);
	ds_free(h, r->slog);
	ds_free(h, r->stk);
	ds_free(h, r->stki);
	ds_free(h, r->c);
	ds_free(h, r->cpos);
	ds_free(h, r->rdy);
	ds_free(h, r->rpos);
	ds_free(h, r->tl);
	ds_free(h, r->tr);
	ds_free(h, r->tmin);
}

/* Working arrays for greedy runs over n nodes and ne edges, allocated
 * once and reused by every run. */
static int run_alloc(run *r, const ds_heap *h, int32_t n, int64_t ne,
		     ds_err *err)
{
	memset(r, 0, sizeof *r);
	r->h = h;
	r->done = ds_alloc(h, (size_t)n, sizeof *r->done);
	r->wait = ds_alloc(h, (size_t)n, sizeof *r->wait);
	r->palloc = ds_alloc(h, (size_t)n, sizeof *r->palloc);
	r->mark = ds_alloc(h, (size_t)n, sizeof *r->mark);
	r->pushed = ds_alloc(h, (size_t)n, sizeof *r->pushed);
	/* a simulation changes each counter at most once per edge, and
	 * each node's done flag once */
	r->jr = ds_alloc(h, (size_t)(n + 2 * ne + 1), sizeof *r->jr);
	r->eag = ds_alloc(h, (size_t)n + 1, sizeof *r->eag);
	r->clos = ds_alloc(h, (size_t)n + 1, sizeof *r->clos);
	r->fresh = ds_alloc(h, (size_t)n + 1, sizeof *r->fresh);
	r->plan = ds_alloc(h, (size_t)n + 1, sizeof *r->plan);
	r->slog = ds_alloc(h, (size_t)n + 1, sizeof *r->slog);
	r->stk = ds_alloc(h, (size_t)n + 1, sizeof *r->stk);
	r->stki = ds_alloc(h, (size_t)n + 1, sizeof *r->stki);
	r->cpos = ds_alloc(h, (size_t)n + 1, sizeof *r->cpos);
	r->tl = ds_alloc(h, (size_t)n + 1, sizeof *r->tl);
	r->tr = ds_alloc(h, (size_t)n + 1, sizeof *r->tr);
	r->tmin = ds_alloc(h, (size_t)n + 1, sizeof *r->tmin);
	r->rdy = ds_alloc(h, (size_t)n + 1, sizeof *r->rdy);
	r->rpos = ds_alloc(h, (size_t)n + 1, sizeof *r->rpos);
	if (!r->done || !r->wait || !r->palloc || !r->mark || !r->pushed ||
	    !r->jr || !r->eag || !r->clos || !r->fresh || !r->plan ||
	    !r->slog || !r->stk || !r->stki || !r->cpos || !r->tl || !r->tr ||
	    !r->tmin || !r->rdy || !r->rpos)
		return ds_fail(err, DS_ENOMEM, "out of memory");
	return DS_OK;
}

/* One greedy run over view v into out[0..n); *invalid when the one-live
 * rule had to be broken. */
static int greedy(run *r, const view *v, const gparams *p, int32_t *out,
		  bool *invalid, ds_err *err)
{
	const int32_t n = v->n;
	int rc = DS_OK;
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
			rdy_add(r, x);
		make_eager_if_ready(r, x);
	}
	drain(r);
	/* first candidates: what can run now, and one or two steps on */
	r->round++;
	for (int32_t x = 0; x < n && rc == DS_OK; x++) {
		if (r->done[x] || v->kind[x] == DS_ALLOC || r->wait[x] != 0)
			continue;
		rc = consider(r, x, err);
		for (int32_t k = v->soff[x]; k < v->soff[x + 1] && !rc; k++) {
			int32_t w = v->succ[k];
			rc = consider(r, w, err);
			for (int32_t j = v->soff[w]; j < v->soff[w + 1] && !rc;
			     j++)
				rc = consider(r, v->succ[j], err);
		}
	}
	r->runpeak = r->peak;
	while (rc == DS_OK && r->nout < n) {
		/* the best candidate whose L0 memory is free: the best of
		 * each treap that may run */
		int32_t bi = -1;
		for (int m = -1; m < NL0; m++) {
			if (m >= 0 && r->l0cnt[m] > 0)
				continue;
			int32_t t = tbest(r, r->troot[m + 1]);
			if (t >= 0 && (bi < 0 || better(r, cget(r, t),
							 cget(r, bi))))
				bi = t;
		}
		int32_t from = r->nout;
		if (bi < 0) {
			forced(r);
		} else {
			/* its rating may be stale: rate it again, and look
			 * again unless it is unchanged */
			cand e, old = *cget(r, bi);
			int ev = rate(r, old.t, &e);
			if (ev == EV_BIG || ev == EV_UNSAFE) {
				cand_remove(r, old.t);
				continue;
			}
			if (ev == EV_BLOCKED || e.rise != old.rise ||
			    e.net != old.net || e.credit != old.credit) {
				/* found waiting for a busy L0 memory: keep the
				 * rating of its last full simulation; the
				 * partial one stops at the busy memory, looks
				 * cheap, and would be re-rated each time that
				 * memory frees (for all candidates waiting for
				 * it: quadratic) */
				if (ev == EV_BLOCKED && old.why < 0) {
					e.rise = old.rise;
					e.net = old.net;
					e.credit = old.credit;
				}
				rc = cand_set(r, &e, err);
				continue;
			}
			commit(r);
		}
		if (r->peak > r->runpeak)
			r->runpeak = r->peak;
		rc = retrigger(r, from, err);
	}
	*invalid = r->invalid;
	return rc;
}

/* ---- orders as a whole ---- */

/* peak_vstay of a full order; *valid: the one-live rule holds. */
static int64_t order_peak(const ds_graph *g, const int32_t *order,
			  bool *valid)
{
	int64_t cur = 0, peak = 0;
	int32_t live[DS_NMEM] = {0};
	*valid = true;
	for (int32_t i = 0; i < g->n; i++) {
		int32_t x = order[i];
		if (g->kind[x] == DS_OP)
			continue;
		int32_t b = g->buf[x];
		int m = g->buf_mem[b];
		int d = g->kind[x] == DS_ALLOC ? 1 : -1;
		if (ds_mem_stays(m)) {
			cur += d * g->buf_size[b];
			if (cur > peak)
				peak = cur;
		} else {
			live[m] += d;
			if (live[m] > 1)
				*valid = false;
		}
	}
	return peak;
}

/* Raises the weight of every buffer live at the (first) peak of order:
 * the next greedy round sees them bigger and keeps them shorter. */
static void bump_peak(const ds_graph *g, const int32_t *order, int64_t *wgt,
		      uint8_t *live)
{
	int64_t cur = 0, peak = -1;
	int32_t at = 0;
	for (int32_t i = 0; i < g->n; i++) {
		int32_t x = order[i];
		if (g->kind[x] == DS_OP || !ds_mem_stays(g->buf_mem[g->buf[x]]))
			continue;
		cur += (g->kind[x] == DS_ALLOC ? 1 : -1) *
		       g->buf_size[g->buf[x]];
		if (cur > peak) {
			peak = cur;
			at = i;
		}
	}
	memset(live, 0, (size_t)g->nbuf);
	for (int32_t i = 0; i <= at && i < g->n; i++) {
		int32_t x = order[i];
		if (g->kind[x] != DS_OP)
			live[g->buf[x]] = g->kind[x] == DS_ALLOC;
	}
	for (int32_t b = 0; b < g->nbuf; b++)
		if (live[b] && ds_mem_stays(g->buf_mem[b]))
			wgt[b]++;
}

/* ---- building the views ---- */

typedef struct views {
	view fw, bw;
	uint8_t *kind_bw;
	int64_t *stay;
	int8_t *l0;
	int32_t *mate;
	int32_t *lev_fw, *lev_bw;
	uint8_t *load_fw, *load_bw;
	int32_t *rank;		 /* ds_structural_rank() */
	int32_t *pred_s, *succ_s; /* pred and succ lists sorted by rank */
} views;

static void views_free(const ds_heap *h, views *w)
{
	ds_free(h, w->kind_bw);
	ds_free(h, w->stay);
	ds_free(h, w->l0);
	ds_free(h, w->mate);
	ds_free(h, w->lev_fw);
	ds_free(h, w->lev_bw);
	ds_free(h, w->load_fw);
	ds_free(h, w->load_bw);
	ds_free(h, w->rank);
	ds_free(h, w->pred_s);
	ds_free(h, w->succ_s);
	memset(w, 0, sizeof *w);
}

/* Longest path from a root counted in operations, along a topological
 * order topo of the view (or its reverse when rev); and which operations
 * are loads (preceded by ALLOCs only). */
static void levels(const view *v, const int32_t *topo, bool rev,
		   int32_t *lev, uint8_t *load)
{
	for (int32_t i = 0; i < v->n; i++) {
		int32_t x = topo[rev ? v->n - 1 - i : i];
		int32_t l = 0;
		load[x] = v->kind[x] == DS_OP;
		for (int32_t k = v->poff[x]; k < v->poff[x + 1]; k++) {
			int32_t y = v->pred[k];
			if (lev[y] > l)
				l = lev[y];
			if (v->kind[y] != DS_ALLOC)
				load[x] = 0;
		}
		lev[x] = l + (v->kind[x] == DS_OP);
	}
}

/* ---- lists in rank order ---- */

/* Sorts each list of a CSR by rank: one sort of all entries keyed by
 * (list, rank), O(E log E) whatever the degrees. */
static int sort_lists(const ds_heap *h, const int32_t *off, int32_t *adj,
		      int32_t n, const int32_t *rank, ds_err *e)
{
	int64_t ne = off[n];
	ds_hkey *k = ds_alloc(h, (size_t)ne + 1, sizeof *k);
	if (!k)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	for (int32_t x = 0; x < n; x++)
		for (int32_t i = off[x]; i < off[x + 1]; i++)
			k[i] = (ds_hkey){(uint64_t)x << 32 | (uint32_t)rank[adj[i]],
				      adj[i]};
	qsort(k, (size_t)ne, sizeof *k, ds_hkey_cmp);
	for (int64_t i = 0; i < ne; i++)
		adj[i] = k[i].x;
	ds_free(h, k);
	return DS_OK;
}

static int views_build(const ds_graph *g, views *w, ds_err *e)
{
	const ds_heap *h = g->heap;
	const int32_t n = g->n;
	memset(w, 0, sizeof *w);
	w->kind_bw = ds_alloc(h, (size_t)n, sizeof *w->kind_bw);
	w->stay = ds_alloc(h, (size_t)n, sizeof *w->stay);
	w->l0 = ds_alloc(h, (size_t)n, sizeof *w->l0);
	w->mate = ds_alloc(h, (size_t)n, sizeof *w->mate);
	w->lev_fw = ds_alloc(h, (size_t)n, sizeof *w->lev_fw);
	w->lev_bw = ds_alloc(h, (size_t)n, sizeof *w->lev_bw);
	w->load_fw = ds_alloc(h, (size_t)n, sizeof *w->load_fw);
	w->load_bw = ds_alloc(h, (size_t)n, sizeof *w->load_bw);
	int64_t ne = g->pred_off[n];
	w->rank = ds_alloc(h, (size_t)n + 1, sizeof *w->rank);
	w->pred_s = ds_alloc(h, (size_t)ne + 1, sizeof *w->pred_s);
	w->succ_s = ds_alloc(h, (size_t)ne + 1, sizeof *w->succ_s);
	if (!w->kind_bw || !w->stay || !w->l0 || !w->mate || !w->lev_fw ||
	    !w->lev_bw || !w->load_fw || !w->load_bw || !w->rank ||
	    !w->pred_s || !w->succ_s) {
		views_free(h, w);
		return ds_fail(e, DS_ENOMEM, "out of memory");
	}
	int rc = ds_structural_rank(g, w->rank, e);
	if (rc) {
		views_free(h, w);
		return rc;
	}
	/* lists in rank order: the closures' visiting order is then
	 * structural too */
	memcpy(w->pred_s, g->pred, (size_t)ne * sizeof *w->pred_s);
	memcpy(w->succ_s, g->succ, (size_t)ne * sizeof *w->succ_s);
	rc = sort_lists(h, g->pred_off, w->pred_s, n, w->rank, e);
	if (rc == DS_OK)
		rc = sort_lists(h, g->succ_off, w->succ_s, n, w->rank, e);
	if (rc) {
		views_free(h, w);
		return rc;
	}
	for (int32_t x = 0; x < n; x++) {
		w->l0[x] = -1;
		w->mate[x] = -1;
		w->kind_bw[x] = g->kind[x] == DS_ALLOC	 ? DS_FREE
				: g->kind[x] == DS_FREE ? DS_ALLOC
							: DS_OP;
		if (g->kind[x] == DS_OP)
			continue;
		int32_t b = g->buf[x];
		int m = g->buf_mem[b];
		if (ds_mem_stays(m))
			w->stay[x] = g->buf_size[b];
		else
			w->l0[x] = (int8_t)(m - DS_L0A);
		w->mate[x] = g->kind[x] == DS_ALLOC ? g->buf_free[b]
						    : g->buf_alloc[b];
	}
	w->fw = (view){n,	     g->pred_off,  w->pred_s,	 g->succ_off,
		       w->succ_s,    g->kind,	   w->stay,	 w->l0,
		       w->mate,	     w->lev_fw,	   w->load_fw,	 g->buf,
		       g->user_off,  g->user,	   g->use_off,	 g->use,
		       g->buf_alloc, g->buf_free,  w->rank};
	w->bw = (view){n,	     g->succ_off,  w->succ_s,	 g->pred_off,
		       w->pred_s,    w->kind_bw,   w->stay,	 w->l0,
		       w->mate,	     w->lev_bw,	   w->load_bw,	 g->buf,
		       g->user_off,  g->user,	   g->use_off,	 g->use,
		       g->buf_free,  g->buf_alloc, w->rank};
	levels(&w->fw, g->topo, false, w->lev_fw, w->load_fw);
	levels(&w->bw, g->topo, true, w->lev_bw, w->load_bw);
	return DS_OK;
}

/* ---- local search over the order of operations ---- */

/* The order as a sequence of operations; every ALLOC sits just before the
 * first operation tied to its buffer and every FREE just after the last
 * ("lifetime compaction"), so a buffer lives over a range of positions.
 * This needs ALLOCs without preds and FREEs without succs (true of every
 * bundled graph); otherwise the search is skipped. */
typedef struct ls {
	const ds_graph *g;
	const view *v; /* forwards */
	const ds_heap *h;
	int32_t nops, nbuf;
	int32_t *seq, *pos;   /* pos: per node, -1 for ALLOC/FREE */
	int32_t *boff, *bops; /* per buffer: the operations tied to it */
	int32_t *border;      /* the buffers by the rank of their ALLOC */
	int32_t *ooff, *obuf; /* per node: the buffers tied to it */
	int32_t *first, *last; /* per buffer: positions, -1: no operation */
	int64_t *val;	       /* per position: live bytes while it runs */
	int64_t *gap;	       /* [nops+1]: live bytes between positions */
	int32_t *gl0;	       /* [(nops+1)*NL0]: live L0 buffers, same */
	int32_t *al0;	       /* [(nops+1)*NL0]: live L0 buffers at */
	int64_t *pmax, *smax;  /* prefix and suffix maxima of val */
	int32_t *pcnt, *scnt;  /* how many positions reach them */
	int64_t peak;
	int32_t npeak;
	/* scratch */
	int32_t *bst, *wcnt, *nst, *ord;
	uint8_t *blive, *bafter;
	int32_t st;
	int32_t pstart; /* where the scan for peaks starts */
	int64_t ntry;	/* move evaluations so far */
	int64_t work;	/* scans for moves and re-evaluations so far */
} ls;

static void ls_free(ls *s)
{
	const ds_heap *h = s->h;
	ds_free(h, s->seq);
	ds_free(h, s->pos);
	ds_free(h, s->boff);
	ds_free(h, s->bops);
	ds_free(h, s->border);
	ds_free(h, s->ooff);
	ds_free(h, s->obuf);
	ds_free(h, s->first);
	ds_free(h, s->last);
	ds_free(h, s->val);
	ds_free(h, s->gap);
	ds_free(h, s->gl0);
	ds_free(h, s->al0);
	ds_free(h, s->pmax);
	ds_free(h, s->smax);
	ds_free(h, s->pcnt);
	ds_free(h, s->scnt);
	ds_free(h, s->bst);
	ds_free(h, s->wcnt);
	ds_free(h, s->nst);
	ds_free(h, s->ord);
	ds_free(h, s->blive);
	ds_free(h, s->bafter);
}

static int64_t bsize(const ls *s, int32_t b)
{
	return ds_mem_stays(s->g->buf_mem[b]) ? s->g->buf_size[b] : 0;
}

static int bl0(const ls *s, int32_t b)
{
	int m = s->g->buf_mem[b];
	return ds_mem_stays(m) ? -1 : m - DS_L0A;
}

/* Everything derived from seq; false when the one-live rule is broken. */
static bool ls_eval_all(ls *s)
{
	const int32_t np = s->nops;
	bool ok = true;
	for (int32_t i = 0; i < np; i++)
		s->pos[s->seq[i]] = i;
	memset(s->val, 0, (size_t)np * sizeof *s->val);
	memset(s->gap, 0, (size_t)(np + 1) * sizeof *s->gap);
	memset(s->gl0, 0, (size_t)(np + 1) * NL0 * sizeof *s->gl0);
	memset(s->al0, 0, (size_t)(np + 1) * NL0 * sizeof *s->al0);
	/* difference arrays, summed below */
	for (int32_t b = 0; b < s->nbuf; b++) {
		int32_t f = -1, l = -1;
		for (int32_t k = s->boff[b]; k < s->boff[b + 1]; k++) {
			int32_t p = s->pos[s->bops[k]];
			if (f < 0 || p < f)
				f = p;
			if (p > l)
				l = p;
		}
		s->first[b] = f;
		s->last[b] = l;
		if (f < 0)
			continue;
		int64_t z = bsize(s, b);
		int m = bl0(s, b);
		s->val[f] += z;
		if (l + 1 < np)
			s->val[l + 1] -= z;
		s->gap[f + 1] += z;
		s->gap[l + 1] -= z;
		if (m >= 0) {
			s->gl0[(f + 1) * NL0 + m]++;
			s->gl0[(l + 1) * NL0 + m]--;
			s->al0[f * NL0 + m]++;
			s->al0[(l + 1) * NL0 + m]--;
		}
	}
	for (int32_t i = 1; i < np; i++)
		s->val[i] += s->val[i - 1];
	for (int m = 0; m < NL0; m++)
		ok = ok && s->al0[m] <= 1;
	for (int32_t i = 1; i <= np; i++) {
		s->gap[i] += s->gap[i - 1];
		for (int m = 0; m < NL0; m++) {
			s->gl0[i * NL0 + m] += s->gl0[(i - 1) * NL0 + m];
			s->al0[i * NL0 + m] += s->al0[(i - 1) * NL0 + m];
			/* one-live: buffers live while position i runs */
			ok = ok && s->al0[i * NL0 + m] <= 1;
		}
	}
	for (int32_t i = 0; i < np; i++) {
		int64_t x = s->val[i];
		if (i == 0 || x > s->pmax[i - 1]) {
			s->pmax[i] = x;
			s->pcnt[i] = 1;
		} else {
			s->pmax[i] = s->pmax[i - 1];
			s->pcnt[i] = s->pcnt[i - 1] + (x == s->pmax[i]);
		}
	}
	for (int32_t i = np - 1; i >= 0; i--) {
		int64_t x = s->val[i];
		if (i == np - 1 || x > s->smax[i + 1]) {
			s->smax[i] = x;
			s->scnt[i] = 1;
		} else {
			s->smax[i] = s->smax[i + 1];
			s->scnt[i] = s->scnt[i + 1] + (x == s->smax[i]);
		}
	}
	s->peak = np ? s->pmax[np - 1] : 0;
	s->npeak = np ? s->pcnt[np - 1] : 0;
	return ok;
}

/* Peak and number of positions reaching it if positions lo..hi held
 * ord[0..hi-lo] instead; false when the one-live rule would break. */
static bool ls_try(ls *s, int32_t lo, int32_t hi, const int32_t *ord,
		   int64_t *peak, int32_t *npeak)
{
	int32_t st = ++s->st;
	int64_t cur = s->gap[lo], wmax = -1;
	int32_t wn = 0, l0c[NL0];
	for (int m = 0; m < NL0; m++)
		l0c[m] = s->gl0[lo * NL0 + m];
	for (int32_t i = 0; i <= hi - lo; i++) {
		int32_t w = ord[i];
		for (int32_t k = s->ooff[w]; k < s->ooff[w + 1]; k++) {
			int32_t b = s->obuf[k];
			if (s->bst[b] != st) {
				s->bst[b] = st;
				s->wcnt[b] = 0;
				s->blive[b] = s->first[b] < lo;
				s->bafter[b] = s->last[b] > hi;
			}
			s->wcnt[b]++;
		}
	}
	for (int32_t i = 0; i <= hi - lo; i++) {
		int32_t w = ord[i];
		for (int32_t k = s->ooff[w]; k < s->ooff[w + 1]; k++) {
			int32_t b = s->obuf[k];
			if (s->blive[b])
				continue;
			s->blive[b] = 1;
			int m = bl0(s, b);
			if (m >= 0 && ++l0c[m] > 1)
				return false;
			cur += bsize(s, b);
		}
		if (cur > wmax) {
			wmax = cur;
			wn = 1;
		} else if (cur == wmax) {
			wn++;
		}
		for (int32_t k = s->ooff[w]; k < s->ooff[w + 1]; k++) {
			int32_t b = s->obuf[k];
			if (--s->wcnt[b] == 0 && !s->bafter[b]) {
				int m = bl0(s, b);
				if (m >= 0)
					l0c[m]--;
				cur -= bsize(s, b);
			}
		}
	}
	DS_ASSERT(cur == s->gap[hi + 1]);
	int64_t pk = wmax;
	if (lo > 0 && s->pmax[lo - 1] > pk)
		pk = s->pmax[lo - 1];
	if (hi + 1 < s->nops && s->smax[hi + 1] > pk)
		pk = s->smax[hi + 1];
	int32_t cnt = wmax == pk ? wn : 0;
	if (lo > 0 && s->pmax[lo - 1] == pk)
		cnt += s->pcnt[lo - 1];
	if (hi + 1 < s->nops && s->smax[hi + 1] == pk)
		cnt += s->scnt[hi + 1];
	*peak = pk;
	*npeak = cnt;
	return true;
}

/* The nodes of lo..hi marked st, and their ancestors in lo..hi, to the
 * front, keeping relative order on both sides: ord gets the new contents
 * of lo..hi. */
static void ls_pull_front(ls *s, int32_t lo, int32_t hi, int32_t st,
			  int32_t *ord)
{
	const view *v = s->v;
	int32_t k = 0;
	for (int32_t i = hi - 1; i >= lo; i--) {
		int32_t y = s->seq[i];
		if (s->nst[y] == st)
			continue;
		for (int32_t j = v->soff[y]; j < v->soff[y + 1]; j++)
			if (s->nst[v->succ[j]] == st) {
				s->nst[y] = st;
				break;
			}
	}
	for (int32_t i = lo; i <= hi; i++)
		if (s->nst[s->seq[i]] == st)
			ord[k++] = s->seq[i];
	for (int32_t i = lo; i <= hi; i++)
		if (s->nst[s->seq[i]] != st)
			ord[k++] = s->seq[i];
	DS_ASSERT(k == hi - lo + 1);
}

/* The move that takes operation x (at lo) later past position hi, with
 * its descendants in between (later = true); or operation x (at hi)
 * earlier before lo, with its ancestors in between.  ord gets the new
 * contents of lo..hi. */
static void ls_block(ls *s, int32_t lo, int32_t hi, bool later,
		     int32_t *ord)
{
	const view *v = s->v;
	int32_t st = ++s->st, k = 0;
	if (later) {
		s->nst[s->seq[lo]] = st;
		for (int32_t i = lo + 1; i <= hi; i++) {
			int32_t y = s->seq[i];
			for (int32_t j = v->poff[y]; j < v->poff[y + 1]; j++)
				if (s->nst[v->pred[j]] == st) {
					s->nst[y] = st;
					break;
				}
		}
		for (int32_t i = lo; i <= hi; i++)
			if (s->nst[s->seq[i]] != st)
				ord[k++] = s->seq[i];
		for (int32_t i = lo; i <= hi; i++)
			if (s->nst[s->seq[i]] == st)
				ord[k++] = s->seq[i];
		DS_ASSERT(k == hi - lo + 1);
	} else {
		s->nst[s->seq[hi]] = st;
		ls_pull_front(s, lo, hi, st, ord);
	}
}

/* The move that takes every operation of buffer b after position p
 * (up to hi, its last) earlier, with their ancestors from lo on, to the
 * front of lo..hi: b then ends before p.  Needed where b's remaining
 * users only free memory together (two consumers of one small buffer,
 * each of which alone frees nothing).  ord gets the new contents of
 * lo..hi. */
static void ls_block_all(ls *s, int32_t lo, int32_t hi, int32_t b, int32_t p,
			 int32_t *ord)
{
	int32_t st = ++s->st;
	for (int32_t j = s->boff[b]; j < s->boff[b + 1]; j++) {
		int32_t y = s->bops[j];
		if (s->pos[y] > p && s->pos[y] <= hi)
			s->nst[y] = st;
	}
	ls_pull_front(s, lo, hi, st, ord);
}

/* One step: the first move found that takes a buffer live at a peak
 * position off it and lowers the peak or the number of positions at the
 * peak.  A buffer leaves position p when its first operation (with its
 * descendants up to there) moves to just after p, or a little further,
 * or its last operation (with its ancestors) to just before p, or a
 * little earlier.  False at a local optimum. */
static bool ls_step(ls *s, int32_t window, int32_t reach, int64_t budget)
{
	int32_t *ord = s->ord;
	int32_t seen = 0;
	if (s->work > budget * LS_WINDOW * LS_SCAN)
		return false;
	/* from the position of the last move on: the peaks before it
	 * resisted already */
	for (int32_t q = 0; q < s->nops && seen < 16; q++) {
		int32_t p = (s->pstart + q) % s->nops;
		s->work++;
		if (s->val[p] != s->peak)
			continue;
		seen++;
		s->work += 3 * (int64_t)s->nbuf;
		/* moving all of a buffer's remaining users first, for
		 * every buffer: few tries, and the common case in tiled
		 * loops */
		for (int di = 0; di < 3; di++)
			for (int32_t bi = 0; bi < s->nbuf; bi++) {
				int32_t b = s->border[bi];
				if (bsize(s, b) == 0 || s->first[b] < 0 ||
				    s->first[b] > p || s->last[b] < p)
					continue;
				for (int32_t d = 0, dir = (di + 2) % 3;
				     d <= reach; d++) {
					int32_t lo = dir ? p - d : s->first[b];
					int32_t hi = dir ? s->last[b] : p + d;
					if (lo < 0 || hi >= s->nops ||
					    hi - lo > window)
						break;
					if (lo == hi ||
					    (dir == 1 ? lo <= s->first[b]
					     : dir == 0 ? hi >= s->last[b]
							: hi <= p))
						break;
					if (s->ntry >= budget)
						return false;
					if (dir == 2)
						ls_block_all(s, lo, hi, b, p,
							     ord);
					else
						ls_block(s, lo, hi, !dir, ord);
					s->ntry++;
					int64_t pk;
					int32_t np;
					if (!ls_try(s, lo, hi, ord, &pk, &np))
						continue;
					if (pk > s->peak ||
					    (pk == s->peak && np >= s->npeak))
						continue;
					memcpy(s->seq + lo, ord,
					       (size_t)(hi - lo + 1) *
						       sizeof *ord);
					s->pstart = p;
					s->work += s->nops + s->nbuf;
					bool ok = ls_eval_all(s);
					DS_ASSERT(ok && s->peak == pk &&
						  s->npeak == np);
					(void)ok;
					return true;
				}
		}
	}
	return false;
}

static int ls_init(ls *s, const ds_graph *g, const view *v, ds_err *e)
{
	const ds_heap *h = g->heap;
	const int32_t n = g->n;
	memset(s, 0, sizeof *s);
	s->g = g;
	s->v = v;
	s->h = h;
	s->nbuf = g->nbuf;
	for (int32_t x = 0; x < n; x++)
		s->nops += g->kind[x] == DS_OP;
	int32_t nb = g->nbuf;
	s->seq = ds_alloc(h, (size_t)s->nops + 1, sizeof *s->seq);
	s->pos = ds_alloc(h, (size_t)n, sizeof *s->pos);
	s->boff = ds_alloc(h, (size_t)nb + 1, sizeof *s->boff);
	s->border = ds_alloc(h, (size_t)nb + 1, sizeof *s->border);
	s->ooff = ds_alloc(h, (size_t)n + 1, sizeof *s->ooff);
	s->first = ds_alloc(h, (size_t)nb + 1, sizeof *s->first);
	s->last = ds_alloc(h, (size_t)nb + 1, sizeof *s->last);
	s->val = ds_alloc(h, (size_t)s->nops + 1, sizeof *s->val);
	s->gap = ds_alloc(h, (size_t)s->nops + 1, sizeof *s->gap);
	s->gl0 = ds_alloc(h, ((size_t)s->nops + 1) * NL0, sizeof *s->gl0);
	s->al0 = ds_alloc(h, ((size_t)s->nops + 1) * NL0, sizeof *s->al0);
	s->pmax = ds_alloc(h, (size_t)s->nops + 1, sizeof *s->pmax);
	s->smax = ds_alloc(h, (size_t)s->nops + 1, sizeof *s->smax);
	s->pcnt = ds_alloc(h, (size_t)s->nops + 1, sizeof *s->pcnt);
	s->scnt = ds_alloc(h, (size_t)s->nops + 1, sizeof *s->scnt);
	s->bst = ds_alloc(h, (size_t)nb + 1, sizeof *s->bst);
	s->wcnt = ds_alloc(h, (size_t)nb + 1, sizeof *s->wcnt);
	s->nst = ds_alloc(h, (size_t)n, sizeof *s->nst);
	s->ord = ds_alloc(h, (size_t)s->nops + 1, sizeof *s->ord);
	s->blive = ds_alloc(h, (size_t)nb + 1, sizeof *s->blive);
	s->bafter = ds_alloc(h, (size_t)nb + 1, sizeof *s->bafter);
	if (!s->seq || !s->pos || !s->boff || !s->border || !s->ooff ||
	    !s->first ||
	    !s->last || !s->val || !s->gap || !s->gl0 || !s->al0 || !s->pmax ||
	    !s->smax || !s->pcnt || !s->scnt || !s->bst || !s->wcnt ||
	    !s->nst || !s->ord || !s->blive || !s->bafter)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	/* buffers in rank order: the first move found does not depend on
	 * the numbering */
	{
		ds_hkey *k = ds_alloc(h, (size_t)nb + 1, sizeof *k);
		if (!k)
			return ds_fail(e, DS_ENOMEM, "out of memory");
		for (int32_t b = 0; b < nb; b++)
			k[b] = (ds_hkey){(uint64_t)v->rank[g->buf_alloc[b]], b};
		qsort(k, (size_t)nb, sizeof *k, ds_hkey_cmp);
		for (int32_t b = 0; b < nb; b++)
			s->border[b] = k[b].x;
		ds_free(h, k);
	}
	/* a buffer's operations: those after its ALLOC and before its
	 * FREE in the augmented graph (its users and any tied by edges) */
	int32_t st = 0;
	for (int pass = 0; pass < 2; pass++) {
		int32_t k = 0;
		for (int32_t b = 0; b < nb; b++) {
			s->boff[b] = k;
			st++;
			int32_t ends[2] = {g->buf_alloc[b], g->buf_free[b]};
			for (int j = 0; j < 2; j++) {
				int32_t x = ends[j];
				const int32_t *adj = j ? v->pred : v->succ;
				int32_t a0 = j ? v->poff[x] : v->soff[x];
				int32_t a1 = j ? v->poff[x + 1] : v->soff[x + 1];
				for (int32_t i = a0; i < a1; i++) {
					int32_t y = adj[i];
					if (g->kind[y] != DS_OP ||
					    s->nst[y] == st)
						continue;
					s->nst[y] = st;
					if (pass)
						s->bops[k] = y;
					k++;
				}
			}
		}
		s->boff[nb] = k;
		if (!pass) {
			s->bops = ds_alloc(h, (size_t)k + 1, sizeof *s->bops);
			s->obuf = ds_alloc(h, (size_t)k + 1, sizeof *s->obuf);
			if (!s->bops || !s->obuf)
				return ds_fail(e, DS_ENOMEM, "out of memory");
		}
	}
	for (int32_t b = 0; b < nb; b++)
		for (int32_t k = s->boff[b]; k < s->boff[b + 1]; k++)
			s->ooff[s->bops[k] + 1]++;
	for (int32_t x = 0; x < n; x++)
		s->ooff[x + 1] += s->ooff[x];
	for (int32_t b = 0; b < nb; b++)
		for (int32_t k = s->boff[b]; k < s->boff[b + 1]; k++) {
			int32_t y = s->bops[k];
			s->obuf[s->ooff[y] + s->pos[y]++] = b;
		}
	return DS_OK;
}

/* The search applies: ALLOCs have no preds, FREEs no succs. */
static bool ls_applies(const ds_graph *g)
{
	for (int32_t x = 0; x < g->n; x++) {
		if (g->kind[x] == DS_ALLOC && g->pred_off[x + 1] > g->pred_off[x])
			return false;
		if (g->kind[x] == DS_FREE && g->succ_off[x + 1] > g->succ_off[x])
			return false;
	}
	return true;
}

/* Improves order (all n nodes) in place with at most effort moves;
 * the result is never worse. */
static void ls_run(ls *s, int32_t *order, int64_t effort, int32_t window)
{
	const ds_graph *g = s->g;
	int32_t k = 0;
	for (int32_t i = 0; i < g->n; i++)
		if (g->kind[order[i]] == DS_OP)
			s->seq[k++] = order[i];
	if (!ls_eval_all(s))
		return; /* the order breaks the one-live rule: leave it */
	s->ntry = 0;
	s->work = 0;
	s->pstart = 0;
	while (ls_step(s, window, LS_REACH, effort))
		;
	/* the compacted order: unused buffers first, then each operation
	 * with the ALLOCs that start there before it and the FREEs that end
	 * there after it */
	k = 0;
	for (int32_t b = 0; b < g->nbuf; b++)
		if (s->first[b] < 0) {
			order[k++] = g->buf_alloc[b];
			order[k++] = g->buf_free[b];
		}
	int32_t np = s->nops;
	for (int32_t i = 0; i < np; i++) {
		int32_t x = s->seq[i];
		for (int32_t j = s->ooff[x]; j < s->ooff[x + 1]; j++) {
			int32_t b = s->obuf[j];
			if (s->first[b] == i)
				order[k++] = g->buf_alloc[b];
		}
		order[k++] = x;
		for (int32_t j = s->ooff[x]; j < s->ooff[x + 1]; j++) {
			int32_t b = s->obuf[j];
			if (s->last[b] == i)
				order[k++] = g->buf_free[b];
		}
	}
	DS_ASSERT(k == g->n);
}

/* ---- the pass ---- */

/* The greedy variants, most useful first.  Each runs for a few rounds in
 * which the buffers live at its previous round's peak weigh more (see
 * bump_peak), as many as the effort allows for the graph's size. */
static const gparams variants[] = {
	{1, POL_NET, PR_NET, 24},
	{0, POL_NET, PR_NET, 24},
	{1, POL_RISE, PR_NET, 24},
	{0, POL_PEAK, PR_CREDIT, 24},
	{0, POL_RANK, PR_NET, 24},
};
#define NVARIANTS ((int)(sizeof variants / sizeof variants[0]))
#define MAX_ROUNDS 8
/* Smoothing rounds of the third band order (ds_band_order()). */
#define BAND_SMOOTH 10
/* At most this many other orders go to the next stage (ds_mpas_alts). */
#define MAX_ALTS 16

/* The best orders found, best first; ties keep the earlier one. */
typedef struct pool {
	int32_t *ord[LS_STARTS];
	int64_t peak[LS_STARTS];
	bool valid[LS_STARTS];
	int k;
} pool;

/* Valid orders first, then the lower peak. */
static bool pool_better(int64_t pa, bool va, int64_t pb, bool vb)
{
	return va != vb ? va : pa < pb;
}

/* Offers cand (n nodes) to the pool, which keeps the LS_STARTS best. */
static void pool_offer(pool *p, const ds_graph *g, const int32_t *cand)
{
	bool valid;
	int64_t pk = order_peak(g, cand, &valid);
	int i = p->k;
	while (i > 0 && pool_better(pk, valid, p->peak[i - 1], p->valid[i - 1]))
		i--;
	if (i >= LS_STARTS)
		return;
	/* shift the worse ones down, recycling the last buffer */
	int last = p->k < LS_STARTS ? p->k : LS_STARTS - 1;
	int32_t *buf = p->ord[last];
	for (int j = last; j > i; j--) {
		p->ord[j] = p->ord[j - 1];
		p->peak[j] = p->peak[j - 1];
		p->valid[j] = p->valid[j - 1];
	}
	p->ord[i] = buf;
	memcpy(buf, cand, (size_t)g->n * sizeof *buf);
	p->peak[i] = pk;
	p->valid[i] = valid;
	if (p->k < LS_STARTS)
		p->k++;
}

/* Other good orders for the next stage: the nalt best by peak among the
 * candidates, each different from the others (a duplicate is not kept);
 * ties keep the earlier one.  Peaks equal or close give DLR very
 * different traffic, which only placing them tells. */
typedef struct alts {
	int32_t *ord; /* [nalt * n] */
	int64_t peak[MAX_ALTS];
	bool valid[MAX_ALTS];
	int k, nalt;
} alts;

static void alts_offer(alts *a, const ds_graph *g, const int32_t *cand)
{
	const size_t n = (size_t)g->n;
	bool valid;
	int64_t pk = order_peak(g, cand, &valid);
	int i = a->k;
	while (i > 0 && pool_better(pk, valid, a->peak[i - 1], a->valid[i - 1]))
		i--;
	if (i >= a->nalt)
		return;
	for (int j = 0; j < a->k; j++)
		if (a->peak[j] == pk && !memcmp(a->ord + j * n, cand, n * 4))
			return;
	int last = a->k < a->nalt ? a->k : a->nalt - 1;
	for (int j = last; j > i; j--) {
		memcpy(a->ord + j * n, a->ord + (j - 1) * n, n * sizeof *cand);
		a->peak[j] = a->peak[j - 1];
		a->valid[j] = a->valid[j - 1];
	}
	memcpy(a->ord + i * n, cand, n * sizeof *cand);
	a->peak[i] = pk;
	a->valid[i] = valid;
	if (a->k < a->nalt)
		a->k++;
}

/* Reverses a[0..n). */
static void reverse(int32_t *a, int32_t n)
{
	for (int32_t i = 0, j = n - 1; i < j; i++, j--) {
		int32_t t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
}

/* MPAS on one graph, in one piece. */
static int mpas_one(const ds_graph *g, const ds_mpas_opts *o, int32_t *order,
		    alts *A, ds_err *e)
{
	const ds_heap *h = g->heap;
	const int32_t n = g->n;
	const int64_t effort = o && o->effort > 0 ? o->effort : DEFAULT_EFFORT;
	views w;
	run R;
	ls L;
	pool P;
	memset(&w, 0, sizeof w);
	memset(&R, 0, sizeof R);
	memset(&L, 0, sizeof L);
	memset(&P, 0, sizeof P);
	int32_t *cand = ds_alloc(h, (size_t)n, sizeof *cand);
	int64_t *wgt = ds_alloc(h, (size_t)NVARIANTS * g->nbuf + 1,
				sizeof *wgt);
	int64_t *wstay = ds_alloc(h, (size_t)n, sizeof *wstay);
	uint8_t *blive = ds_alloc(h, (size_t)g->nbuf + 1, sizeof *blive);
	bool ok = cand && wgt && wstay && blive;
	for (int i = 0; i < LS_STARTS; i++) {
		P.ord[i] = ds_alloc(h, (size_t)n, sizeof *P.ord[i]);
		ok = ok && P.ord[i];
	}
	int rc = ok ? DS_OK : ds_fail(e, DS_ENOMEM, "out of memory");
	if (rc == DS_OK)
		rc = views_build(g, &w, e);
	if (rc == DS_OK)
		rc = run_alloc(&R, h, n, g->pred_off[n], e);
	if (rc == DS_OK && ls_applies(g))
		rc = ls_init(&L, g, &w.fw, e);
	/* the free-first order, ties broken by the rank: cheap, a safe
	 * fallback, and the program order where the rank recovers it */
	if (rc == DS_OK)
		rc = ds_order_free_first_ranked(g, w.rank, cand, e);
	if (rc == DS_OK) {
		pool_offer(&P, g, cand);
		if (A)
			alts_offer(A, g, cand);
	}
	/* greedy runs, every variant once per round, as many rounds as
	 * the effort allows for the graph's size */
	int64_t runs = GREEDY_WORK * effort / (n > 0 ? n : 1);
	if (runs < 1)
		runs = 1;
	if (runs > NVARIANTS * MAX_ROUNDS)
		runs = NVARIANTS * MAX_ROUNDS;
	for (int64_t b = 0; rc == DS_OK && b < (int64_t)NVARIANTS * g->nbuf;
	     b++)
		wgt[b] = 1;
	for (int64_t k = 0; k < runs && rc == DS_OK; k++) {
		int i = (int)(k % NVARIANTS);
		const gparams *p = &variants[i];
		int64_t *wv = wgt + (int64_t)i * g->nbuf;
		for (int32_t x = 0; x < n; x++)
			wstay[x] = w.stay[x] *
				   (g->kind[x] == DS_OP ? 0 : wv[g->buf[x]]);
		view vv = p->dir ? w.bw : w.fw;
		vv.stay = wstay;
		bool invalid;
		rc = greedy(&R, &vv, p, cand, &invalid, e);
		if (rc)
			break;
		if (p->dir)
			reverse(cand, n);
		pool_offer(&P, g, cand);
		if (A)
			alts_offer(A, g, cand);
		bump_peak(g, cand, wv, blive);
	}
	/* the band orders, either way: the program order of a graph
	 * without loops whose operations use recent values (there the
	 * rank sees no structure to recover, and the greedy's local view
	 * strays) */
	int64_t bpeak[2] = {0, 0};
	bool bvalid[2] = {false, false};
	int64_t best = P.k > 0 ? P.peak[0] : INT64_MAX;
	bool best_valid = P.k > 0 && P.valid[0];
	for (int rev = 0; rev < 3 && rc == DS_OK; rev++) {
		/* the third, the better way smoothed, only where a band
		 * order beats every other candidate: where the long axis is
		 * the program */
		bool smooth = rev == 2;
		int way = smooth && pool_better(bpeak[1], bvalid[1], bpeak[0],
						bvalid[0]);
		if (smooth && !pool_better(bpeak[way], bvalid[way], best,
					   best_valid))
			break;
		rc = ds_band_order(g, w.rank, smooth ? way : rev,
				   smooth ? BAND_SMOOTH : 0, cand, e);
		if (rc)
			break;
		if (!smooth)
			bpeak[rev] = order_peak(g, cand, &bvalid[rev]);
		pool_offer(&P, g, cand);
		if (A)
			alts_offer(A, g, cand);
	}
	/* polish the best orders; the best result wins, ties keep the
	 * earlier (unpolished) one */
	if (rc == DS_OK) {
		memcpy(order, P.ord[0], (size_t)n * sizeof *order);
		int64_t best = P.peak[0];
		bool best_valid = P.valid[0];
		for (int i = 0; i < P.k && L.g; i++) {
			memcpy(cand, P.ord[i], (size_t)n * sizeof *cand);
			ls_run(&L, cand, effort, LS_WINDOW);
			bool valid;
			int64_t pk = order_peak(g, cand, &valid);
			if (pool_better(pk, valid, best, best_valid)) {
				best = pk;
				best_valid = valid;
				memcpy(order, cand, (size_t)n * sizeof *order);
			}
		}
	}
	for (int i = 0; i < LS_STARTS; i++)
		ds_free(h, P.ord[i]);
	if (L.g)
		ls_free(&L);
	run_free(&R);
	views_free(h, &w);
	ds_free(h, cand);
	ds_free(h, wgt);
	ds_free(h, wstay);
	ds_free(h, blive);
	return rc;
}

/* ---- graphs holding several operators ---- */

/* Weakly connected components (a buffer's ALLOC and FREE together even
 * when nothing uses it): comp[x] in 0..*ncomp, numbered by their least
 * node. */
static void components_of(const ds_graph *g, int32_t *comp, int32_t *ncomp)
{
	const int32_t n = g->n;
	for (int32_t x = 0; x < n; x++)
		comp[x] = x;
	for (int32_t x = 0; x < n; x++) {
		int32_t lim = g->pred_off[x + 1] - g->pred_off[x];
		for (int32_t j = 0; j <= lim; j++) {
			int32_t a = x, b;
			if (j < lim)
				b = g->pred[g->pred_off[x] + j];
			else if (g->kind[x] == DS_FREE)
				b = g->buf_alloc[g->buf[x]];
			else
				continue;
			while (comp[a] != a)
				a = comp[a] = comp[comp[a]];
			while (comp[b] != b)
				b = comp[b] = comp[comp[b]];
			if (a != b)
				comp[a > b ? a : b] = a < b ? a : b;
		}
	}
	/* roots are each component's least node: number them in order */
	int32_t k = 0;
	for (int32_t x = 0; x < n; x++)
		comp[x] = comp[x] == x ? k++ : comp[comp[x]];
	*ncomp = k;
}

/* The subgraph of the nodes list[0..k) (increasing Ids) as a graph of
 * its own, node list[i] becoming node i, buffers and edges kept; eidx
 * holds the indices of its edges in g's input order. */
static int subgraph(const ds_graph *g, const int32_t *list, int32_t k,
		    const int32_t *eidx, int64_t ne, int32_t *local,
		    ds_graph **out, ds_err *e)
{
	const ds_heap *h = g->heap;
	int64_t *bufs = NULL;
	int32_t maxuse = 1;
	for (int32_t i = 0; i < k; i++) {
		int32_t x = list[i], u = g->use_off[x + 1] - g->use_off[x];
		local[x] = i;
		if (u > maxuse)
			maxuse = u;
	}
	ds_builder *b = ds_builder_new(h, g->source);
	bufs = ds_alloc(h, (size_t)maxuse, sizeof *bufs);
	int rc = b && bufs ? DS_OK : ds_fail(e, DS_ENOMEM, "out of memory");
	for (int32_t i = 0; i < k && rc == DS_OK; i++) {
		int32_t x = list[i];
		if (g->kind[x] != DS_OP) {
			int32_t bf = g->buf[x];
			rc = ds_builder_buffer(b, i, g->kind[x] == DS_FREE,
					       g->buf_id[bf], g->buf_size[bf],
					       ds_mem_names[g->buf_mem[bf]], e);
			continue;
		}
		int32_t u = g->use_off[x + 1] - g->use_off[x];
		for (int32_t j = 0; j < u; j++)
			bufs[j] = g->buf_id[g->use[g->use_off[x] + j]];
		rc = ds_builder_op(b, i, g->ops[g->op[x]], g->pipes[g->pipe[x]],
				   g->cycles[x], bufs, u, e);
	}
	for (int64_t j = 0; j < ne && rc == DS_OK; j++)
		rc = ds_builder_edge(b, local[g->esrc[eidx[j]]],
				     local[g->edst[eidx[j]]], e);
	if (rc == DS_OK)
		rc = ds_builder_finish(b, &g->caps, out, e);
	ds_builder_free(b);
	ds_free(h, bufs);
	return rc;
}

/* Drops the alternatives equal to order (or to an earlier one). */
static int alts_distinct(const ds_graph *g, const int32_t *order, int32_t *alt,
			 int k)
{
	const size_t n = (size_t)g->n;
	int m = 0;
	for (int i = 0; i < k; i++) {
		const int32_t *x = alt + i * n;
		bool dup = !memcmp(x, order, n * sizeof *x);
		for (int j = 0; j < m && !dup; j++)
			dup = !memcmp(x, alt + j * n, n * sizeof *x);
		if (dup)
			continue;
		if (m != i)
			memmove(alt + m * n, x, n * sizeof *x);
		m++;
	}
	return m;
}

/* Operators that share nothing are scheduled one after the other, each
 * on its own: every buffer of one is freed before the next starts, so
 * the peak is the largest of theirs, whatever the numbering.  Each gets
 * a share of the effort by its size. */
int ds_mpas_alts(const ds_graph *g, const ds_mpas_opts *o, int32_t *order,
		 int32_t *alt, int nalt, int *got, ds_err *e)
{
	const ds_heap *h = g->heap;
	const int32_t n = g->n;
	if (nalt > MAX_ALTS)
		nalt = MAX_ALTS;
	if (!alt || nalt < 0)
		nalt = 0;
	if (got)
		*got = 0;
	alts A = {.ord = NULL, .k = 0, .nalt = nalt};
	int32_t ncomp = 0;
	int32_t *comp = ds_alloc(h, (size_t)n + 1, sizeof *comp);
	if (!comp)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	components_of(g, comp, &ncomp);
	if (ncomp <= 1) {
		ds_free(h, comp);
		A.ord = alt;
		int rc = mpas_one(g, o, order, nalt ? &A : NULL, e);
		if (rc == DS_OK && got)
			*got = alts_distinct(g, order, alt, A.k);
		return rc;
	}
	/* nodes and edges by component (counting sort, stable) */
	int32_t *noff = ds_alloc(h, (size_t)ncomp + 1, sizeof *noff);
	int32_t *nodes = ds_alloc(h, (size_t)n + 1, sizeof *nodes);
	int64_t *eoff = ds_alloc(h, (size_t)ncomp + 1, sizeof *eoff);
	int32_t *edges = ds_alloc(h, (size_t)g->nedge + 1, sizeof *edges);
	int32_t *local = ds_alloc(h, (size_t)n + 1, sizeof *local);
	int32_t *sub = ds_alloc(h, (size_t)n + 1, sizeof *sub);
	A.ord = nalt ? ds_alloc(h, (size_t)nalt * n, sizeof *A.ord) : NULL;
	int rc = noff && nodes && eoff && edges && local && sub &&
			 (A.ord || !nalt)
			 ? DS_OK
			 : ds_fail(e, DS_ENOMEM, "out of memory");
	if (rc == DS_OK) {
		for (int32_t x = 0; x < n; x++)
			noff[comp[x] + 1]++;
		for (int64_t j = 0; j < g->nedge; j++)
			eoff[comp[g->esrc[j]] + 1]++;
		for (int32_t c = 0; c < ncomp; c++) {
			noff[c + 1] += noff[c];
			eoff[c + 1] += eoff[c];
		}
		for (int32_t x = 0; x < n; x++)
			nodes[noff[comp[x]]++] = x;
		for (int64_t j = 0; j < g->nedge; j++)
			edges[eoff[comp[g->esrc[j]]]++] = (int32_t)j;
		/* the fills moved each start to the next one's: back */
		for (int32_t c = ncomp; c > 0; c--) {
			noff[c] = noff[c - 1];
			eoff[c] = eoff[c - 1];
		}
		noff[0] = 0;
		eoff[0] = 0;
	}
	/* the effort is shared by size, so that the work stays what it is
	 * for one graph of n nodes; alternative i runs each component's
	 * alternative i (its best order when it has fewer) */
	const int64_t effort = o && o->effort > 0 ? o->effort : DEFAULT_EFFORT;
	int32_t len = 0;
	int nk = 0;
	for (int32_t c = 0; c < ncomp && rc == DS_OK; c++) {
		ds_graph *sg = NULL;
		int32_t k = noff[c + 1] - noff[c];
		ds_mpas_opts oc = {effort * k / n + 1};
		A.k = 0;
		rc = subgraph(g, nodes + noff[c], k, edges + eoff[c],
			      eoff[c + 1] - eoff[c], local, &sg, e);
		if (rc == DS_OK)
			rc = mpas_one(sg, &oc, sub, nalt ? &A : NULL, e);
		for (int32_t i = 0; i < k && rc == DS_OK; i++)
			order[len + i] = nodes[noff[c] + sub[i]];
		for (int j = 0; j < nalt && rc == DS_OK; j++) {
			const int32_t *from = j < A.k ? A.ord + (size_t)j * k
						      : sub;
			for (int32_t i = 0; i < k; i++)
				alt[(size_t)j * n + len + i] =
					nodes[noff[c] + from[i]];
		}
		if (A.k > nk)
			nk = A.k;
		len += k;
		ds_graph_free(sg);
	}
	DS_ASSERT(rc != DS_OK || len == n);
	if (rc == DS_OK && got)
		*got = alts_distinct(g, order, alt, nk);
	ds_free(h, comp);
	ds_free(h, noff);
	ds_free(h, nodes);
	ds_free(h, eoff);
	ds_free(h, edges);
	ds_free(h, local);
	ds_free(h, sub);
	ds_free(h, A.ord);
	return rc;
}

int ds_mpas(const ds_graph *g, const ds_mpas_opts *o, int32_t *order,
	    ds_err *e)
{
	return ds_mpas_alts(g, o, order, NULL, 0, NULL, e);
}
