/* ds_dlr.c: stage 2, deterministic linear repacking (DLR).
 *
 * Requires: a valid graph and a topological order of its n nodes (stage 1's;
 * any topological order will do).
 * Guarantees: a plan ds_replay accepts under g->caps (order with spill nodes
 * inserted, one offset per buffer, spills with new offsets), or DS_EINPUT
 * when some operation's buffers cannot fit together in a memory at all.
 * The result is a pure function of the graph and the input order.
 *
 * Two parts:
 *
 * 1. A memory-aware list scheduler re-derives the order.  Allocations are
 *    lazy (an ALLOC is emitted right before its buffer's first user) and
 *    FREEs eager.  At each step it picks a "goal": an operation together
 *    with the few unscheduled operations it still waits for (its closure),
 *    scored by what running it now costs: the traffic of the evictions it
 *    forces, the bytes it must bring in from DDR (for a goal that starts a
 *    long-lived buffer, averaged over all the work that buffer commits to),
 *    then how recently its resident inputs were used (work that reuses what
 *    was just touched goes first, so data is reused before it leaves), then
 *    stage 1's position.  A goal must finish something (some buffer's last
 *    use) and may start a long-lived buffer only when that buffer's next
 *    user is itself near.  Residency is modelled in bytes with cost-weighted
 *    LRU eviction: the scheduler does not know its own future.
 *
 * 2. The order is then placed by ds_place (best fit, spills by cost and
 *    distance to the exact next use, victims as one contiguous window).
 *
 * Several variants (stage 1's order itself, scheduler parameter sets) are
 * placed and measured with ds_replay; the least (extra_ddr, spills) wins,
 * ties going to the earlier variant.
 *
 * Cost: each scheduler step scores the goals reachable in a few edges from
 * ready operations that touch live buffers plus a few fresh ones, each in
 * O(closure), so O(N * G * C) with G goals per step and C closure size (both
 * bounded by parameters), plus O(N + E) bookkeeping; each placement is
 * O(N * R^2) worst case, R the resident buffers of a memory. */
#include "ds_stage.h"

#include <string.h>
#ifdef DLR_DEBUG
#include <stdio.h>
#endif

enum { B_NONE, B_RES, B_SPILL, B_FREED };

/* Parameters of one scheduler run. */
typedef struct lsp {
	int32_t max_closure; /* operations a goal may pull in (itself too) */
	int32_t fan;	     /* users / successors followed per node */
	int32_t depth;	     /* successor levels explored from the seeds */
	int32_t new_k;	     /* fresh ready operations seeded per step */
	bool chain_first;    /* a goal starting a long-lived buffer that fits
				goes before the rest (fills free room) */
	bool mru;	     /* recency of reused inputs before stage 1 */
	double cap_frac;     /* modelled share of each capacity */
} lsp;

/* A goal's score: compared field by field, smaller first. */
typedef struct score {
	double evict; /* traffic of the evictions it forces */
	int cls;      /* 0: starts a long-lived buffer into free room */
	double load;  /* bytes brought in (see score_goal) */
	double rec;   /* negated mean recency of resident inputs */
	int32_t pos;  /* stage 1 position */
} score;

/* A CSR list per node or buffer. */
typedef struct csr {
	int32_t *off, *v;
} csr;

typedef struct lsched {
	const ds_graph *g;
	const lsp *P;
	const ds_heap *h;
	const int32_t *pos1; /* stage 1 position of each node */
	csr dep;	     /* what a node waits for, by stage 1 position */
	csr osucc;	     /* operation successors, by stage 1 position */
	csr usr;	     /* users of a buffer, by stage 1 position */
	/* per node */
	int32_t *cnt; /* unmet dependencies (ready ALLOCs count as met) */
	uint8_t *done;
	int32_t *ready_at; /* index in ready[], -1 when not there */
	int32_t *ready;
	int32_t nready;
	int32_t *mark; /* in the closure being looked at: cstamp */
	int32_t *seen; /* explored this step, or walked: sstamp */
	int32_t cstamp, sstamp, bstamp, dstamp;
	/* per buffer */
	uint8_t *bst;
	int32_t *rem;	/* unscheduled users */
	int64_t *last;	/* last use, in scheduler steps */
	int32_t *bmark; /* scoring stamp */
	int32_t *bcnt;	/* uses inside the closure being scored */
	int32_t *claim; /* == dstamp: a live long-lived buffer's work needs it */
	int32_t *live;	/* started, not freed */
	int32_t nlive;
	int32_t *live_at;
	int32_t *res[DS_NMEM]; /* resident buffers per memory */
	int32_t nres[DS_NMEM];
	int32_t *res_at;
	int64_t used[DS_NMEM], cap[DS_NMEM];
	int64_t tick;
	/* scratch */
	int32_t *clo; /* closure in emission order */
	int32_t nclo, nclo_ops;
	int32_t *cand;
	int32_t *bufs;
	int32_t *frees; /* FREEs that became ready */
	int32_t nfrees;
	/* output */
	int32_t *order;
	int32_t len;
} lsched;

static int64_t traffic(const ds_graph *g, int32_t b)
{
	return g->buf_size[b] * (g->buf_copyin[b] ? 1 : 2);
}

static bool better(const score *a, const score *b)
{
	if (a->evict != b->evict)
		return a->evict < b->evict;
	if (a->cls != b->cls)
		return a->cls < b->cls;
	if (a->load != b->load)
		return a->load < b->load;
	if (a->rec != b->rec)
		return a->rec < b->rec;
	return a->pos < b->pos;
}

/* ---- readiness ----
 *
 * Besides the edges, every user of a buffer waits for its ALLOC and its FREE
 * for every user (the graph need not spell these out).  cnt[] counts both
 * kinds, so a dependency given twice is simply counted and released twice. */

static void ready_add(lsched *s, int32_t v)
{
	if (s->g->kind[v] == DS_FREE) {
		s->frees[s->nfrees++] = v;
		return;
	}
	s->ready_at[v] = s->nready;
	s->ready[s->nready++] = v;
}

static void ready_del(lsched *s, int32_t v)
{
	int32_t i = s->ready_at[v];
	if (i < 0)
		return;
	int32_t last = s->ready[--s->nready];
	s->ready[i] = last;
	s->ready_at[last] = i;
	s->ready_at[v] = -1;
}

static void release(lsched *s, int32_t w);

/* v's dependencies are met.  An ALLOC passes readiness on at once: it is
 * emitted only when its first user is. */
static void became_ready(lsched *s, int32_t v)
{
	const ds_graph *g = s->g;
	if (g->kind[v] != DS_ALLOC) {
		ready_add(s, v);
		return;
	}
	int32_t b = g->buf[v];
	for (int32_t k = g->succ_off[v]; k < g->succ_off[v + 1]; k++)
		release(s, g->succ[k]);
	for (int32_t k = g->user_off[b]; k < g->user_off[b + 1]; k++)
		release(s, g->user[k]);
}

static void release(lsched *s, int32_t w)
{
	if (--s->cnt[w] == 0)
		became_ready(s, w);
}

/* ---- the residency model ---- */

static void res_add(lsched *s, int32_t b)
{
	int m = s->g->buf_mem[b];
	s->res_at[b] = s->nres[m];
	s->res[m][s->nres[m]++] = b;
	s->used[m] += s->g->buf_size[b];
	s->bst[b] = B_RES;
}

static void res_del(lsched *s, int32_t b, uint8_t st)
{
	int m = s->g->buf_mem[b];
	int32_t i = s->res_at[b];
	int32_t last = s->res[m][--s->nres[m]];
	s->res[m][i] = last;
	s->res_at[last] = i;
	s->used[m] -= s->g->buf_size[b];
	s->bst[b] = st;
}

/* Eviction preference: least recently used first, and per byte of room a
 * buffer whose data sits in DDR costs half as much to drop. */
static double evict_key(const lsched *s, int32_t b)
{
	double age = (double)(s->tick - s->last[b]) + 1;
	return s->g->buf_copyin[b] ? 2 * age : age;
}

/* The resident buffer of m to evict first, skipping those stamped with
 * bstamp (protected) or taken; -1 when none is left. */
static int32_t victim(const lsched *s, int m, int32_t taken)
{
	int32_t best = -1;
	double bk = -1;
	for (int32_t i = 0; i < s->nres[m]; i++) {
		int32_t b = s->res[m][i];
		if (s->bmark[b] == s->bstamp || s->bmark[b] == taken)
			continue;
		double k = evict_key(s, b);
		if (k > bk || (k == bk && s->pos1[s->g->buf_alloc[b]] <
						  s->pos1[s->g->buf_alloc[best]])) {
			bk = k;
			best = b;
		}
	}
	return best;
}

/* Makes room for size bytes in m, evicting unprotected buffers in the
 * model.  The model may stay over capacity when nothing can go: the placer
 * deals with the real layout. */
static void make_room(lsched *s, int m, int64_t size)
{
	while (s->used[m] + size > s->cap[m]) {
		int32_t b = victim(s, m, s->bstamp);
		if (b < 0)
			return;
		res_del(s, b, B_SPILL);
	}
}

/* Appends v to the order and updates readiness and the model. */
static void emit(lsched *s, int32_t v)
{
	const ds_graph *g = s->g;
	DS_ASSERT(!s->done[v] && s->cnt[v] == 0);
	s->order[s->len++] = v;
	s->done[v] = 1;
	ready_del(s, v);
	s->tick++;
	if (g->kind[v] == DS_ALLOC) {
		int32_t b = g->buf[v];
		s->bmark[b] = ++s->bstamp;
		make_room(s, g->buf_mem[b], g->buf_size[b]);
		res_add(s, b);
		s->last[b] = s->tick;
		return; /* it passed readiness on when it became ready */
	}
	if (g->kind[v] == DS_FREE) {
		int32_t b = g->buf[v];
		if (s->bst[b] == B_RES)
			res_del(s, b, B_FREED);
		s->bst[b] = B_FREED;
	} else {
		s->bstamp++;
		for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++)
			s->bmark[g->use[k]] = s->bstamp;
		for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
			int32_t b = g->use[k];
			if (s->bst[b] == B_SPILL) {
				make_room(s, g->buf_mem[b], g->buf_size[b]);
				res_add(s, b);
			}
			s->last[b] = s->tick;
			s->rem[b]--;
			release(s, g->buf_free[b]);
		}
	}
	for (int32_t k = g->succ_off[v]; k < g->succ_off[v + 1]; k++)
		release(s, g->succ[k]);
}

/* Emits the FREEs that became ready (with the ALLOC of a buffer nobody
 * uses, which only now meets its FREE). */
static void flush_frees(lsched *s)
{
	while (s->nfrees > 0) {
		int32_t f = s->frees[--s->nfrees];
		int32_t a = s->g->buf_alloc[s->g->buf[f]];
		if (!s->done[a])
			emit(s, a);
		emit(s, f);
	}
}

/* ---- goals ---- */

/* The nodes v waits for: its preds, and for an operation the ALLOCs of its
 * buffers, sorted by stage 1 position into buf (at most cap); returns how
 * many, or -1 when there are more than cap. */
static int32_t deps_sorted(const lsched *s, int32_t v, int32_t *buf,
			   int32_t cap)
{
	const ds_graph *g = s->g;
	int32_t n = 0;
	for (int32_t k = g->pred_off[v]; k < g->pred_off[v + 1]; k++) {
		if (n == cap)
			return -1;
		buf[n++] = g->pred[k];
	}
	if (g->kind[v] == DS_OP)
		for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
			if (n == cap)
				return -1;
			buf[n++] = g->buf_alloc[g->use[k]];
		}
	for (int32_t i = 1; i < n; i++) {
		int32_t x = buf[i], j = i;
		while (j > 0 && s->pos1[buf[j - 1]] > s->pos1[x]) {
			buf[j] = buf[j - 1];
			j--;
		}
		buf[j] = x;
	}
	return n;
}

enum { DEPS_MAX = 64 };

/* Depth-first over unscheduled dependencies, appending in post-order (so
 * the closure is emitted in a topological order); false past the limit. */
static bool closure_rec(lsched *s, int32_t v)
{
	const ds_graph *g = s->g;
	s->mark[v] = s->cstamp;
	int32_t dep[DEPS_MAX];
	int32_t nd = deps_sorted(s, v, dep, DEPS_MAX);
	if (nd < 0)
		return false;
	for (int32_t k = 0; k < nd; k++) {
		int32_t p = dep[k];
		if (s->done[p] || s->mark[p] == s->cstamp)
			continue;
		if (g->kind[p] == DS_FREE || !closure_rec(s, p))
			return false;
	}
	if (g->kind[v] == DS_OP && ++s->nclo_ops > s->P->max_closure)
		return false;
	s->clo[s->nclo++] = v;
	return true;
}

/* The closure of goal v: v and every unscheduled node it waits for. */
static bool closure(lsched *s, int32_t v)
{
	s->cstamp++;
	s->nclo = 0;
	s->nclo_ops = 0;
	return closure_rec(s, v);
}

/* Counts the unscheduled operations v waits for outside the current
 * closure, down from *budget; false once it runs out. */
static bool near_rec(lsched *s, int32_t v, int32_t *budget)
{
	const ds_graph *g = s->g;
	s->seen[v] = s->sstamp;
	if (g->kind[v] == DS_OP && --*budget < 0)
		return false;
	for (int32_t k = g->pred_off[v]; k < g->pred_off[v + 1]; k++) {
		int32_t p = g->pred[k];
		if (s->done[p] || s->mark[p] == s->cstamp ||
		    s->seen[p] == s->sstamp || g->kind[p] == DS_ALLOC)
			continue;
		if (!near_rec(s, p, budget))
			return false;
	}
	return true;
}

/* Is some unscheduled user of b outside the current closure near: its own
 * closure, the current one counted as done, within the limit? */
static bool user_near(lsched *s, int32_t b)
{
	const ds_graph *g = s->g;
	for (int32_t k = g->user_off[b]; k < g->user_off[b + 1]; k++) {
		int32_t u = g->user[k];
		if (s->done[u] || s->mark[u] == s->cstamp)
			continue;
		int32_t budget = s->P->max_closure;
		s->sstamp++;
		if (near_rec(s, u, &budget))
			return true;
	}
	return false;
}

/* Bytes a future user u of a buffer started by this goal must still bring
 * in: the buffers of u and of its unscheduled operation preds that are
 * spilled, or unstarted with their data in DDR, and not yet counted
 * (seen[] on their ALLOC node with the current sstamp). */
static int64_t user_misses(lsched *s, int32_t u)
{
	const ds_graph *g = s->g;
	int64_t miss = 0;
	for (int32_t k = g->pred_off[u] - 1; k < g->pred_off[u + 1]; k++) {
		int32_t x = k < g->pred_off[u] ? u : g->pred[k];
		if (s->done[x] || g->kind[x] != DS_OP)
			continue;
		for (int32_t j = g->use_off[x]; j < g->use_off[x + 1]; j++) {
			int32_t b = g->use[j];
			int32_t a = g->buf_alloc[b];
			if (s->seen[a] == s->sstamp)
				continue;
			s->seen[a] = s->sstamp;
			if (s->bst[b] == B_SPILL ||
			    (s->bst[b] == B_NONE && g->buf_copyin[b] &&
			     s->mark[a] != s->cstamp))
				miss += g->buf_size[b];
		}
	}
	return miss;
}

/* Scores goal v (its closure is in clo); false when it is not a goal:
 * it finishes nothing, or it starts a long-lived buffer too early. */
static bool score_goal(lsched *s, int32_t v, score *out)
{
	const ds_graph *g = s->g;
	int32_t nb = 0;
	bool finishes = false, bufless = true;
	s->bstamp++;
	for (int32_t i = 0; i < s->nclo; i++) {
		int32_t x = s->clo[i];
		if (g->kind[x] != DS_OP)
			continue;
		for (int32_t k = g->use_off[x]; k < g->use_off[x + 1]; k++) {
			int32_t b = g->use[k];
			bufless = false;
			if (s->bmark[b] != s->bstamp) {
				s->bmark[b] = s->bstamp;
				s->bcnt[b] = 0;
				s->bufs[nb++] = b;
			}
			s->bcnt[b]++;
		}
	}
	int64_t need[DS_NMEM] = {0}, load = 0, mru = -1;
	int64_t chain_miss = 0, chain_steps = 0;
	for (int32_t i = 0; i < nb; i++) {
		int32_t b = s->bufs[i];
		bool last = s->bcnt[b] == s->rem[b];
		finishes |= last;
		if (s->bst[b] == B_RES) {
			if (s->last[b] > mru)
				mru = s->last[b];
			continue;
		}
		need[g->buf_mem[b]] += g->buf_size[b];
		if (s->bst[b] == B_SPILL || g->buf_copyin[b])
			load += g->buf_size[b];
		if (s->bst[b] != B_NONE || last || g->buf_copyin[b])
			continue;
		/* it starts a long-lived buffer: its next user must be near,
		 * and the work it commits to is scored with it */
		if (!user_near(s, b))
			return false;
		if (!s->P->chain)
			continue;
		s->sstamp++;
		for (int32_t k = g->user_off[b]; k < g->user_off[b + 1]; k++) {
			int32_t u = g->user[k];
			if (s->done[u] || s->mark[u] == s->cstamp)
				continue;
			chain_miss += user_misses(s, u);
			chain_steps++;
		}
	}
	if (!finishes && !bufless) {
		/* an operation followed by FREEs only ends work too */
		for (int32_t k = g->succ_off[v]; k < g->succ_off[v + 1]; k++)
			if (g->kind[g->succ[k]] != DS_FREE)
				return false;
	}
	/* evictions it forces, the model's victims first */
	double evict = 0;
	int32_t taken = -(s->bstamp); /* never a real stamp */
	for (int m = 0; m < DS_NMEM; m++) {
		int64_t over = s->used[m] + need[m] - s->cap[m];
		int32_t nt = 0;
		while (over > 0) {
			int32_t b = victim(s, m, taken);
			if (b < 0) {
				evict += 1e12; /* cannot fit: last resort */
				break;
			}
			s->bmark[b] = taken;
			s->bufs[nb + nt++] = b;
			evict += (double)traffic(g, b);
			over -= g->buf_size[b];
		}
		for (int32_t i = 0; i < nt; i++)
			s->bmark[s->bufs[nb + i]] = 0;
	}
	out->evict = evict;
	out->load = chain_steps ? (double)(load + chain_miss) /
					  (double)(1 + chain_steps)
				: (double)load;
	out->mru = s->P->mru ? -mru : 0;
	out->pos = s->pos1[v];
	return true;
}

/* Looks at the goals reachable from ready operations and returns the best,
 * or -1 when none qualifies. */
static int32_t pick_goal(lsched *s)
{
	const ds_graph *g = s->g;
	int32_t nc = 0, best = -1;
	score bs = {0, 0, 0, 0};
	int32_t est = ++s->sstamp;
	/* seeds: ready operations touching a started buffer, and the new_k
	 * fresh ones first in stage 1 order */
	for (int32_t i = 0; i < s->nready; i++) {
		int32_t v = s->ready[i];
		bool live = g->use_off[v] == g->use_off[v + 1];
		for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++)
			if (s->bst[g->use[k]] != B_NONE)
				live = true;
		if (live) {
			s->seen[v] = est;
			s->cand[nc++] = v;
		}
	}
	for (int32_t r = 0; r < s->P->new_k; r++) {
		int32_t pick = -1;
		for (int32_t i = 0; i < s->nready; i++) {
			int32_t v = s->ready[i];
			if (s->seen[v] != est &&
			    (pick < 0 || s->pos1[v] < s->pos1[pick]))
				pick = v;
		}
		if (pick < 0)
			break;
		s->seen[pick] = est;
		s->cand[nc++] = pick;
	}
	/* their successors, depth - 1 levels deep */
	int32_t lo = 0;
	for (int32_t d = 1; d < s->P->depth; d++) {
		int32_t hi = nc;
		for (int32_t i = lo; i < hi; i++) {
			int32_t v = s->cand[i];
			for (int32_t k = g->succ_off[v]; k < g->succ_off[v + 1];
			     k++) {
				int32_t w = g->succ[k];
				if (g->kind[w] != DS_OP || s->done[w] ||
				    s->seen[w] == est)
					continue;
				s->seen[w] = est;
				s->cand[nc++] = w;
			}
		}
		lo = hi;
	}
	for (int32_t i = 0; i < nc; i++) {
		int32_t v = s->cand[i];
		score sc;
		if (!closure(s, v) || !score_goal(s, v, &sc))
			continue;
		if (best < 0 || better(&sc, &bs)) {
			best = v;
			bs = sc;
		}
	}
	return best;
}

static int ls_run(const ds_graph *g, const int32_t *pos1, const lsp *P,
		  int32_t *order, ds_err *e)
{
	const ds_heap *h = g->heap;
	const int32_t n = g->n, nb = g->nbuf;
	lsched s;
	memset(&s, 0, sizeof s);
	s.g = g;
	s.P = P;
	s.h = h;
	s.pos1 = pos1;
	s.order = order;
	s.cnt = ds_alloc(h, (size_t)n, sizeof *s.cnt);
	s.done = ds_alloc(h, (size_t)n, 1);
	s.ready_at = ds_alloc(h, (size_t)n, sizeof *s.ready_at);
	s.ready = ds_alloc(h, (size_t)n, sizeof *s.ready);
	s.mark = ds_alloc(h, (size_t)n, sizeof *s.mark);
	s.seen = ds_alloc(h, (size_t)n, sizeof *s.seen);
	s.clo = ds_alloc(h, (size_t)n, sizeof *s.clo);
	s.cand = ds_alloc(h, (size_t)n, sizeof *s.cand);
	s.frees = ds_alloc(h, (size_t)n, sizeof *s.frees);
	s.bst = ds_alloc(h, (size_t)nb, 1);
	s.rem = ds_alloc(h, (size_t)nb, sizeof *s.rem);
	s.last = ds_alloc(h, (size_t)nb, sizeof *s.last);
	s.bmark = ds_alloc(h, (size_t)nb, sizeof *s.bmark);
	s.bcnt = ds_alloc(h, (size_t)nb, sizeof *s.bcnt);
	s.res_at = ds_alloc(h, (size_t)nb, sizeof *s.res_at);
	s.bufs = ds_alloc(h, (size_t)nb * 2, sizeof *s.bufs);
	bool ok = s.cnt && s.done && s.ready_at && s.ready && s.mark &&
		  s.seen && s.clo && s.cand && s.frees && s.bst && s.rem &&
		  s.last && s.bmark && s.bcnt && s.res_at && s.bufs;
	for (int m = 0; ok && m < DS_NMEM; m++) {
		s.res[m] = ds_alloc(h, (size_t)nb, sizeof *s.res[m]);
		ok = s.res[m] != NULL;
		s.cap[m] = (int64_t)((double)g->caps.cap[m] * P->cap_frac);
	}
	int rc = DS_OK;
	if (!ok) {
		rc = ds_fail(e, DS_ENOMEM, "out of memory");
		goto out;
	}
	for (int32_t b = 0; b < nb; b++) {
		s.rem[b] = g->user_off[b + 1] - g->user_off[b];
		s.cnt[g->buf_free[b]] += s.rem[b];
	}
	for (int32_t v = 0; v < n; v++) {
		s.ready_at[v] = -1;
		s.cnt[v] += g->pred_off[v + 1] - g->pred_off[v];
		if (g->kind[v] == DS_OP)
			s.cnt[v] += g->use_off[v + 1] - g->use_off[v];
	}
	for (int32_t v = 0; v < n; v++)
		if (s.cnt[v] == 0 && g->kind[v] == DS_ALLOC)
			became_ready(&s, v);
	for (int32_t v = 0; v < n; v++)
		if (s.cnt[v] == 0 && g->kind[v] != DS_ALLOC &&
		    s.ready_at[v] < 0 && g->kind[v] != DS_FREE)
			ready_add(&s, v);
	flush_frees(&s);
	while (s.len < n) {
		int32_t goal = pick_goal(&s);
		if (goal < 0) {
			/* nothing qualifies: the first ready operation in
			 * stage 1 order, with its pending ALLOCs */
			for (int32_t i = 0; i < s.nready; i++)
				if (goal < 0 || pos1[s.ready[i]] < pos1[goal])
					goal = s.ready[i];
			DS_ASSERT(goal >= 0);
		}
		if (!closure(&s, goal)) {
			/* a ready operation waits only for ALLOCs */
			s.nclo = 0;
			int32_t dep[DEPS_MAX];
			int32_t nd = deps_sorted(&s, goal, dep, DEPS_MAX);
			DS_ASSERT(nd >= 0);
			for (int32_t k = 0; k < nd; k++)
				if (!s.done[dep[k]])
					s.clo[s.nclo++] = dep[k];
			s.clo[s.nclo++] = goal;
		}
		for (int32_t i = 0; i < s.nclo; i++) {
			if (s.done[s.clo[i]])
				continue;
			emit(&s, s.clo[i]);
			flush_frees(&s);
		}
	}
	DS_ASSERT(s.len == n);
out:
	ds_free(h, s.cnt);
	ds_free(h, s.done);
	ds_free(h, s.ready_at);
	ds_free(h, s.ready);
	ds_free(h, s.mark);
	ds_free(h, s.seen);
	ds_free(h, s.clo);
	ds_free(h, s.cand);
	ds_free(h, s.frees);
	ds_free(h, s.bst);
	ds_free(h, s.rem);
	ds_free(h, s.last);
	ds_free(h, s.bmark);
	ds_free(h, s.bcnt);
	ds_free(h, s.res_at);
	ds_free(h, s.bufs);
	for (int m = 0; m < DS_NMEM; m++)
		ds_free(h, s.res[m]);
	return rc;
}

/* ---- variants ---- */

typedef struct best {
	ds_plan plan;
	ds_figures f;
	bool have;
} best;

/* Places order with opts, measures it, keeps it when it beats *b. */
static int try_order(const ds_graph *g, const int32_t *order,
		     const ds_place_opts *po, best *b, ds_err *e)
{
	ds_plan p;
	int rc = ds_place(g, order, po, &p, e);
	if (rc)
		return rc;
	ds_figures f;
	rc = ds_replay(g, &p, NULL, &f, e);
	DS_ASSERT(rc != DS_EPLAN);
	if (rc) {
		ds_plan_free(g->heap, &p);
		return rc;
	}
#ifdef DLR_DEBUG
	fprintf(stderr, "  variant: extra %lld spills %lld\n",
		(long long)f.extra_ddr, (long long)f.spills);
#endif
	if (!b->have || f.extra_ddr < b->f.extra_ddr ||
	    (f.extra_ddr == b->f.extra_ddr && f.spills < b->f.spills)) {
		if (b->have)
			ds_plan_free(g->heap, &b->plan);
		b->plan = p;
		b->f = f;
		b->have = true;
	} else {
		ds_plan_free(g->heap, &p);
	}
	return DS_OK;
}

static const lsp variants[] = {
	{6, 4, 3, true, true, 1.0},
	{6, 4, 3, false, true, 1.0},
	{6, 4, 3, true, false, 1.0},
};

int ds_dlr(const ds_graph *g, const int32_t *order, const ds_dlr_opts *o,
	   ds_plan *out, ds_err *e)
{
	const ds_heap *h = g->heap;
	memset(out, 0, sizeof *out);
	int rc = ds_check_fits(g, e);
	if (rc)
		return rc;
	int64_t effort = o && o->effort > 0 ? o->effort : 1;
	(void)effort;
	int32_t *pos1 = ds_alloc(h, (size_t)g->n, sizeof *pos1);
	int32_t *ord = ds_alloc(h, (size_t)g->n, sizeof *ord);
	best b;
	memset(&b, 0, sizeof b);
	if (!pos1 || !ord) {
		rc = ds_fail(e, DS_ENOMEM, "out of memory");
		goto out;
	}
	for (int32_t i = 0; i < g->n; i++)
		pos1[order[i]] = i;
	ds_place_opts po = {DS_BEST_FIT, DS_VICTIM_FURTHEST};
	if ((rc = try_order(g, order, &po, &b, e)))
		goto out;
	for (size_t k = 0; k < sizeof variants / sizeof *variants; k++) {
		if ((rc = ls_run(g, pos1, &variants[k], ord, e)) ||
		    (rc = try_order(g, ord, &po, &b, e)))
			goto out;
	}
	*out = b.plan;
	b.have = false;
out:
	if (b.have)
		ds_plan_free(h, &b.plan);
	ds_free(h, pos1);
	ds_free(h, ord);
	return rc;
}
