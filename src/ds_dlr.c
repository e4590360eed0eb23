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
#include <stdlib.h>
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
	bool pair;	     /* score such starts with their best successor */
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
	const int32_t *posr; /* position in a reference order, or NULL */
	csr rusr;	     /* users of a buffer, by reference position */
	int32_t *rptr;	     /* per buffer: first maybe unscheduled in rusr */
	int32_t now_ref;     /* reference position of the last operation */
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
	int32_t cstamp, sstamp, bstamp, dstamp, qstamp;
	/* per buffer */
	uint8_t *bst;
	int32_t *rem;	/* unscheduled users */
	int64_t *last;	/* last use, in scheduler steps */
	int32_t *bmark; /* scoring stamp */
	int32_t *bcnt;	/* uses inside the closure being scored */
	int32_t *claim; /* == dstamp: a live long-lived buffer's work needs it */
	int32_t *pclaim; /* == pstamp: the partner being tried needs it */
	int32_t pstamp;
	int32_t *iseen;	/* per buffer: counted as a chain input (istamp) */
	int32_t istamp;
	int32_t *fail;	/* per node: closure over the limit (fstamp) */
	int32_t fstamp;
	int32_t *cdep;	/* exploration depth of cand[i] */
	int32_t *qseen;	/* per node: queued this step (qstamp) */
	int32_t ncand;
	int32_t *xs;	/* long-lived starts that go first, this step */
	int32_t nxs;
	bool push;	/* score_goal may queue dominating consumers */
	int32_t *rec; /* inputs recorded while scoring a partner */
	int32_t nrec;
	bool recording;
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
	if (a->cls != b->cls)
		return a->cls < b->cls;
	if (a->evict != b->evict)
		return a->evict < b->evict;
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

/* Reference position of b's next unscheduled user (INT32_MAX: none). */
static int32_t next_ref(lsched *s, int32_t b)
{
	int32_t k = s->rptr[b];
	while (k < s->rusr.off[b + 1] && s->done[s->rusr.v[k]])
		k++;
	s->rptr[b] = k;
	return k < s->rusr.off[b + 1] ? s->posr[s->rusr.v[k]] : INT32_MAX;
}

/* Eviction preference, larger first: with a reference order (an earlier
 * plan's), the distance to the next use in it (Belady's rule against that
 * forecast); without, the time since the last use (LRU).  Per byte of room
 * a buffer whose data sits in DDR costs half as much to drop. */
static double evict_key(lsched *s, int32_t b)
{
	double d;
	if (s->posr) {
		int32_t nr = next_ref(s, b);
		d = nr == INT32_MAX ? 1e9 : (double)nr - s->now_ref;
		if (d < 1)
			d = 1;
	} else {
		d = (double)(s->tick - s->last[b]) + 1;
	}
	return s->g->buf_copyin[b] ? 2 * d : d;
}

/* The resident buffer of m to evict first, skipping those stamped with
 * bstamp (protected) or taken; -1 when none is left. */
static int32_t victim(lsched *s, int m, int32_t taken)
{
	const ds_graph *g = s->g;
	int32_t best = -1;
	double bk = -1;
	for (int32_t i = 0; i < s->nres[m]; i++) {
		int32_t b = s->res[m][i];
		if (s->bmark[b] == s->bstamp || s->bmark[b] == taken)
			continue;
		double k = evict_key(s, b);
		if (k > bk || (k == bk && s->pos1[g->buf_alloc[b]] <
						  s->pos1[g->buf_alloc[best]])) {
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
		s->live_at[b] = s->nlive;
		s->live[s->nlive++] = b;
		return; /* it passed readiness on when it became ready */
	}
	if (g->kind[v] == DS_FREE) {
		int32_t b = g->buf[v];
		if (s->bst[b] == B_RES)
			res_del(s, b, B_FREED);
		s->bst[b] = B_FREED;
		int32_t i = s->live_at[b], last = s->live[--s->nlive];
		s->live[i] = last;
		s->live_at[last] = i;
	} else {
		if (s->posr)
			s->now_ref = s->posr[v];
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

/* Depth-first over unscheduled dependencies, appending in post-order (so
 * the closure can be emitted in that order); false past the limit. */
static bool closure_rec(lsched *s, int32_t v)
{
	const ds_graph *g = s->g;
	s->mark[v] = s->cstamp;
	for (int32_t k = s->dep.off[v]; k < s->dep.off[v + 1]; k++) {
		int32_t p = s->dep.v[k];
		if (s->done[p] || s->mark[p] == s->cstamp)
			continue;
		if (g->kind[p] == DS_FREE || s->fail[p] == s->fstamp ||
		    !closure_rec(s, p))
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
	if (closure_rec(s, v))
		return true;
	s->fail[v] = s->fstamp; /* this step, whatever waits for v fails */
	return false;
}

/* Counts the unscheduled operations v waits for outside the current
 * closure, down from *budget; false once it runs out. */
static bool near_rec(lsched *s, int32_t v, int32_t *budget)
{
	const ds_graph *g = s->g;
	s->seen[v] = s->sstamp;
	if (g->kind[v] == DS_OP && --*budget < 0)
		return false;
	for (int32_t k = s->dep.off[v]; k < s->dep.off[v + 1]; k++) {
		int32_t p = s->dep.v[k];
		if (s->done[p] || s->mark[p] == s->cstamp ||
		    s->seen[p] == s->sstamp || g->kind[p] == DS_ALLOC)
			continue;
		if (!near_rec(s, p, budget))
			return false;
	}
	return true;
}

/* The next unscheduled user of b outside the current closure, or -1. */
static int32_t next_user(const lsched *s, int32_t b)
{
	for (int32_t k = s->usr.off[b]; k < s->usr.off[b + 1]; k++) {
		int32_t u = s->usr.v[k];
		if (!s->done[u] && s->mark[u] != s->cstamp)
			return u;
	}
	return -1;
}

/* Is u near: its own closure, the current one counted as done, within
 * budget operations? */
static bool near(lsched *s, int32_t u, int32_t budget)
{
	if (u < 0)
		return true;
	s->sstamp++;
	return near_rec(s, u, &budget);
}

/* Can operation p run once the current closure has: is each of its
 * buffers started, in DDR, or first written by p itself? */
static bool producible(const lsched *s, int32_t p)
{
	const ds_graph *g = s->g;
	for (int32_t k = g->use_off[p]; k < g->use_off[p + 1]; k++) {
		int32_t x = g->use[k];
		if (s->bst[x] != B_NONE || g->buf_copyin[x] ||
		    s->mark[g->buf_alloc[x]] == s->cstamp)
			continue;
		if (s->usr.v[s->usr.off[x]] != p)
			return false;
	}
	return true;
}

/* Is the work of long-lived buffer b ready: every unscheduled user, and
 * each operation it waits for that is not b's work nor in the closure,
 * producible? */
static bool chain_ready(const lsched *s, int32_t b)
{
	const ds_graph *g = s->g;
	for (int32_t k = s->usr.off[b]; k < s->usr.off[b + 1]; k++) {
		int32_t u = s->usr.v[k];
		if (s->done[u] || s->mark[u] == s->cstamp)
			continue;
		for (int32_t j = g->pred_off[u]; j < g->pred_off[u + 1]; j++) {
			int32_t p = g->pred[j];
			if (s->done[p] || s->mark[p] == s->cstamp ||
			    g->kind[p] != DS_OP)
				continue;
			bool chain = false;
			for (int32_t q = g->use_off[p]; q < g->use_off[p + 1];
			     q++)
				chain |= g->use[q] == b;
			if (!chain && !producible(s, p))
				return false;
		}
	}
	return true;
}

/* Inputs of a future user u of a buffer this goal starts: the buffers of u
 * and of its unscheduled operation preds, each counted once per goal (seen[]
 * on its ALLOC).  Adds the bytes to bring in (spilled, or unstarted with
 * data in DDR, not claimed by live work nor loaded by the closure) to *miss,
 * and resident ones to the recency sums. */
static void user_inputs(lsched *s, int32_t u, int64_t *miss, double *rsum,
			int64_t *nhit)
{
	const ds_graph *g = s->g;
	for (int32_t k = g->pred_off[u] - 1; k < g->pred_off[u + 1]; k++) {
		int32_t x = k < g->pred_off[u] ? u : g->pred[k];
		if (s->done[x] || g->kind[x] != DS_OP)
			continue;
		for (int32_t j = g->use_off[x]; j < g->use_off[x + 1]; j++) {
			int32_t b = g->use[j];
			int32_t a = g->buf_alloc[b];
			(void)a;
			if (s->iseen[b] == s->istamp || s->bmark[b] == s->bstamp)
				continue;
			s->iseen[b] = s->istamp;
			if (s->recording)
				s->rec[s->nrec++] = b;
			if (s->bst[b] == B_RES) {
				*rsum += (double)s->last[b];
				++*nhit;
			} else if ((s->bst[b] == B_SPILL ||
				    (s->bst[b] == B_NONE && g->buf_copyin[b])) &&
				   s->claim[b] != s->dstamp &&
				   s->pclaim[b] != s->pstamp) {
				*miss += g->buf_size[b];
			}
		}
	}
}

/* Scores goal v (its closure is in clo); false when it is not a goal:
 * it finishes nothing, or it starts a long-lived buffer whose next user is
 * far (it would sit in memory waiting).
 *
 * load is the bytes the closure brings in from DDR; for a goal that starts
 * a long-lived buffer it also counts what the rest of that buffer's work
 * will bring in (the work a start commits to), in total when such starts
 * go first, else per step of that work. */
static bool score_goal(lsched *s, int32_t v, score *out)
{
	const ds_graph *g = s->g;
	int32_t nb = 0;
	bool finishes = false, bufless = true, starts = false;
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
	int64_t need[DS_NMEM] = {0}, start_need[DS_NMEM] = {0};
	int64_t load = 0, nhit = 0;
	int64_t chain_miss = 0, chain_steps = 0;
	double rsum = 0;
	s->istamp++; /* chain inputs counted once per goal */
	for (int32_t i = 0; i < nb; i++) {
		int32_t b = s->bufs[i];
		bool last = s->bcnt[b] == s->rem[b];
		finishes |= last;
		if (s->bst[b] == B_RES) {
			rsum += (double)s->last[b];
			nhit++;
			continue;
		}
		need[g->buf_mem[b]] += g->buf_size[b];
		if (s->recording)
			s->rec[s->nrec++] = b;
		if ((s->bst[b] == B_SPILL || g->buf_copyin[b]) &&
		    s->pclaim[b] != s->pstamp)
			load += g->buf_size[b];
		if (s->bst[b] != B_NONE || last || g->buf_copyin[b])
			continue;
		/* the goal leaves a new buffer waiting for more users */
		int32_t u = next_user(s, b);
		if (s->rem[b] - s->bcnt[b] == 1) {
			/* one more: when that user is near, it is the better
			 * goal (it ends what this one starts) */
			if (near(s, u, s->P->max_closure - s->nclo_ops)) {
				if (s->push && s->qseen[u] != s->qstamp) {
					s->qseen[u] = s->qstamp;
					s->cdep[s->ncand] = 0;
					s->cand[s->ncand++] = u;
				}
				return false;
			}
			continue;
		}
		/* a long-lived buffer: all the work it commits to must be
		 * able to run without waiting for other work */
		if (!chain_ready(s, b))
			return false;
		starts = true;
		start_need[g->buf_mem[b]] += g->buf_size[b];
		for (int32_t k = s->usr.off[b]; k < s->usr.off[b + 1]; k++) {
			int32_t w = s->usr.v[k];
			if (s->done[w] || s->mark[w] == s->cstamp)
				continue;
			user_inputs(s, w, &chain_miss, &rsum, &nhit);
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
	int32_t taken = -s->bstamp; /* never a real stamp */
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
	/* a long-lived start that has room in its own memory goes first
	 * when chain_first: the room would otherwise sit idle */
	out->cls = 1;
	if (starts && s->P->chain_first && evict < 1e12) {
		out->cls = 0;
		for (int m = 0; m < DS_NMEM; m++)
			if (start_need[m] > 0 &&
			    s->used[m] + start_need[m] > s->cap[m])
				out->cls = 1;
	}
	out->evict = evict;
	if (!starts) {
		out->load = (double)load;
	} else if (out->cls == 0) {
		out->evict = 0;
		out->load = evict + (double)(load + chain_miss);
	} else {
		out->load = (double)(load + chain_miss) /
			    (double)(1 + chain_steps);
	}
	out->rec = s->P->mru && nhit ? -rsum / (double)nhit : 0;
	out->pos = s->pos1[v];
	return true;
}

/* Queues v as a candidate at exploration depth d, once per step. */
static void queue(lsched *s, int32_t v, int32_t d)
{
	if (s->qseen[v] == s->qstamp)
		return;
	s->qseen[v] = s->qstamp;
	s->cdep[s->ncand] = d;
	s->cand[s->ncand++] = v;
}

/* Queues up to fan unscheduled users of b. */
static void seed_users(lsched *s, int32_t b)
{
	int32_t k = 0;
	for (int32_t j = s->usr.off[b]; j < s->usr.off[b + 1] && k < s->P->fan;
	     j++) {
		int32_t u = s->usr.v[j];
		if (s->done[u])
			continue;
		k++;
		queue(s, u, 0);
	}
}

/* Marks (claim[] = dstamp) the inputs of the next users of every live
 * long-lived buffer: data that work already started will need. */
static void mark_claims(lsched *s)
{
	const ds_graph *g = s->g;
	s->dstamp++;
	for (int32_t i = 0; i < s->nlive; i++) {
		int32_t b = s->live[i];
		if (g->buf_copyin[b] || s->rem[b] < 2)
			continue;
		int32_t k = 0;
		for (int32_t j = s->usr.off[b];
		     j < s->usr.off[b + 1] && k < 2 * s->P->fan; j++) {
			int32_t u = s->usr.v[j];
			if (s->done[u])
				continue;
			k++;
			for (int32_t q = g->pred_off[u] - 1; q < g->pred_off[u + 1];
			     q++) {
				int32_t x = q < g->pred_off[u] ? u : g->pred[q];
				if (s->done[x] || g->kind[x] != DS_OP)
					continue;
				for (int32_t r = g->use_off[x];
				     r < g->use_off[x + 1]; r++)
					s->claim[g->use[r]] = s->dstamp;
			}
		}
	}
}

/* Among starts xs[0..n) that go first, the one whose chain plus the best
 * chain to start after it brings in the least: two long-lived buffers side
 * by side share what they both need, so a start is judged with its best
 * successor.  Only the PAIR_TOP best by their own score are tried, each
 * with every successor. */
enum { PAIR_TOP = 6 };

static int32_t pick_pair(lsched *s, int32_t *xs, int32_t n)
{
	score sc[PAIR_TOP];
	int32_t top[PAIR_TOP], nt = 0;
	for (int32_t i = 0; i < n; i++) {
		score x;
		bool ok = closure(s, xs[i]) && score_goal(s, xs[i], &x);
		DS_ASSERT(ok);
		(void)ok;
		/* insertion into the sorted top list */
		int32_t j = nt < PAIR_TOP ? nt++ : PAIR_TOP;
		while (j > 0 && better(&x, &sc[j - 1])) {
			if (j < PAIR_TOP) {
				sc[j] = sc[j - 1];
				top[j] = top[j - 1];
			}
			j--;
		}
		if (j < PAIR_TOP) {
			sc[j] = x;
			top[j] = xs[i];
		}
	}
	int32_t best = top[0];
	double best_cost = -1;
	for (int32_t i = 0; i < nt; i++) {
		s->recording = true;
		s->nrec = 0;
		score x;
		closure(s, top[i]);
		score_goal(s, top[i], &x);
		s->recording = false;
		s->pstamp++;
		for (int32_t k = 0; k < s->nrec; k++)
			s->pclaim[s->rec[k]] = s->pstamp;
		double follow = -1;
		for (int32_t j = 0; j < n; j++) {
			score y;
			if (xs[j] == top[i] || !closure(s, xs[j]) ||
			    !score_goal(s, xs[j], &y))
				continue;
			if (follow < 0 || y.load < follow)
				follow = y.load;
		}
		s->pstamp++;
		double cost = sc[i].load + (follow < 0 ? 0 : follow);
#ifdef DLR_DEBUG
		if (getenv("DLR_TRACE"))
			fprintf(stderr, "pair len %d x %d load %.0f rec %.1f follow %.0f\n",
				s->len, top[i], sc[i].load, sc[i].rec, follow);
#endif
		if (best_cost < 0 || cost < best_cost) {
			best_cost = cost;
			best = top[i];
		}
	}
	return best;
}

/* Explores candidate goals from the next users of live buffers and a few
 * fresh ready operations, following successors of those whose closure is
 * within the limit, and returns the best, or -1 when none qualifies. */
static int32_t pick_goal(lsched *s)
{
	int32_t best = -1;
	score bs;
	memset(&bs, 0, sizeof bs);
	s->qstamp++;
	s->fstamp++;
	s->ncand = 0;
	s->nxs = 0;
	for (int32_t i = 0; i < s->nlive; i++)
		seed_users(s, s->live[i]);
	for (int32_t r = 0; r < s->P->new_k; r++) {
		int32_t pick = -1;
		for (int32_t i = 0; i < s->nready; i++) {
			int32_t v = s->ready[i];
			if (s->qseen[v] != s->qstamp &&
			    (pick < 0 || s->pos1[v] < s->pos1[pick]))
				pick = v;
		}
		if (pick < 0)
			break;
		queue(s, pick, 0);
	}
	mark_claims(s);
	s->push = true;
	for (int32_t i = 0; i < s->ncand; i++) {
		int32_t v = s->cand[i], d = s->cdep[i];
		if (!closure(s, v))
			continue;
		score sc;
		if (score_goal(s, v, &sc)) {
			if (sc.cls == 0)
				s->xs[s->nxs++] = v;
			if (best < 0 || better(&sc, &bs)) {
				best = v;
				bs = sc;
			}
		}
		if (d + 1 >= s->P->depth)
			continue;
		int32_t k = 0;
		for (int32_t j = s->osucc.off[v];
		     j < s->osucc.off[v + 1] && k < s->P->fan; j++) {
			int32_t w = s->osucc.v[j];
			if (s->done[w])
				continue;
			k++;
			queue(s, w, d + 1);
		}
	}
	s->push = false;
	if (s->P->pair && s->nxs > 1)
		best = pick_pair(s, s->xs, s->nxs);
	return best;
}

/* CSR lists sorted by the stage 1 position of their entries. */
static void sort_lists(const int32_t *pos1, csr *c, int32_t n)
{
	for (int32_t v = 0; v < n; v++) {
		int32_t *a = c->v + c->off[v];
		int32_t len = c->off[v + 1] - c->off[v];
		for (int32_t i = 1; i < len; i++) {
			int32_t x = a[i], j = i;
			while (j > 0 && pos1[a[j - 1]] > pos1[x]) {
				a[j] = a[j - 1];
				j--;
			}
			a[j] = x;
		}
	}
}

static int build_lists(lsched *s)
{
	const ds_graph *g = s->g;
	const ds_heap *h = s->h;
	const int32_t n = g->n, nb = g->nbuf;
	s->dep.off = ds_alloc(h, (size_t)n + 1, sizeof(int32_t));
	s->osucc.off = ds_alloc(h, (size_t)n + 1, sizeof(int32_t));
	s->usr.off = ds_alloc(h, (size_t)nb + 1, sizeof(int32_t));
	if (!s->dep.off || !s->osucc.off || !s->usr.off)
		return DS_ENOMEM;
	for (int32_t v = 0; v < n; v++) {
		int32_t nd = g->pred_off[v + 1] - g->pred_off[v];
		if (g->kind[v] == DS_OP)
			nd += g->use_off[v + 1] - g->use_off[v];
		int32_t ns = 0;
		for (int32_t k = g->succ_off[v]; k < g->succ_off[v + 1]; k++)
			ns += g->kind[g->succ[k]] == DS_OP;
		s->dep.off[v + 1] = s->dep.off[v] + nd;
		s->osucc.off[v + 1] = s->osucc.off[v] + ns;
	}
	s->dep.v = ds_alloc(h, (size_t)s->dep.off[n] + 1, sizeof(int32_t));
	s->osucc.v = ds_alloc(h, (size_t)s->osucc.off[n] + 1, sizeof(int32_t));
	s->usr.v = ds_alloc(h, (size_t)g->user_off[nb] + 1, sizeof(int32_t));
	if (!s->dep.v || !s->osucc.v || !s->usr.v)
		return DS_ENOMEM;
	for (int32_t v = 0; v < n; v++) {
		int32_t *d = s->dep.v + s->dep.off[v];
		for (int32_t k = g->pred_off[v]; k < g->pred_off[v + 1]; k++)
			*d++ = g->pred[k];
		if (g->kind[v] == DS_OP)
			for (int32_t k = g->use_off[v]; k < g->use_off[v + 1];
			     k++)
				*d++ = g->buf_alloc[g->use[k]];
		int32_t *o = s->osucc.v + s->osucc.off[v];
		for (int32_t k = g->succ_off[v]; k < g->succ_off[v + 1]; k++)
			if (g->kind[g->succ[k]] == DS_OP)
				*o++ = g->succ[k];
	}
	memcpy(s->usr.off, g->user_off, ((size_t)nb + 1) * sizeof(int32_t));
	memcpy(s->usr.v, g->user, (size_t)g->user_off[nb] * sizeof(int32_t));
	sort_lists(s->pos1, &s->dep, n);
	sort_lists(s->pos1, &s->osucc, n);
	sort_lists(s->pos1, &s->usr, nb);
	if (s->posr) {
		s->rusr.off = ds_alloc(h, (size_t)nb + 1, sizeof(int32_t));
		s->rusr.v = ds_alloc(h, (size_t)g->user_off[nb] + 1,
				     sizeof(int32_t));
		s->rptr = ds_alloc(h, (size_t)nb, sizeof(int32_t));
		if (!s->rusr.off || !s->rusr.v || !s->rptr)
			return DS_ENOMEM;
		memcpy(s->rusr.off, g->user_off,
		       ((size_t)nb + 1) * sizeof(int32_t));
		memcpy(s->rusr.v, g->user,
		       (size_t)g->user_off[nb] * sizeof(int32_t));
		sort_lists(s->posr, &s->rusr, nb);
		for (int32_t b = 0; b < nb; b++)
			s->rptr[b] = s->rusr.off[b];
	}
	return DS_OK;
}

static void free_lists(lsched *s)
{
	csr *c[4] = {&s->dep, &s->osucc, &s->usr, &s->rusr};
	ds_free(s->h, s->rptr);
	for (int i = 0; i < 4; i++) {
		ds_free(s->h, c[i]->off);
		ds_free(s->h, c[i]->v);
	}
}

static int ls_run(const ds_graph *g, const int32_t *pos1,
		  const int32_t *posr, const lsp *P, int32_t *order, ds_err *e)
{
	const ds_heap *h = g->heap;
	const int32_t n = g->n, nb = g->nbuf;
	lsched s;
	memset(&s, 0, sizeof s);
	s.g = g;
	s.P = P;
	s.h = h;
	s.pos1 = pos1;
	s.posr = posr;
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
	s.claim = ds_alloc(h, (size_t)nb, sizeof *s.claim);
	s.pclaim = ds_alloc(h, (size_t)nb, sizeof *s.pclaim);
	s.iseen = ds_alloc(h, (size_t)nb, sizeof *s.iseen);
	s.fail = ds_alloc(h, (size_t)n, sizeof *s.fail);
	s.cdep = ds_alloc(h, (size_t)n, sizeof *s.cdep);
	s.qseen = ds_alloc(h, (size_t)n, sizeof *s.qseen);
	s.xs = ds_alloc(h, (size_t)n, sizeof *s.xs);
	s.rec = ds_alloc(h, (size_t)nb * 2, sizeof *s.rec);
	s.live = ds_alloc(h, (size_t)nb, sizeof *s.live);
	s.live_at = ds_alloc(h, (size_t)nb, sizeof *s.live_at);
	s.res_at = ds_alloc(h, (size_t)nb, sizeof *s.res_at);
	s.bufs = ds_alloc(h, (size_t)nb * 2, sizeof *s.bufs);
	bool ok = s.cnt && s.done && s.ready_at && s.ready && s.mark &&
		  s.seen && s.clo && s.cand && s.frees && s.bst && s.rem &&
		  s.last && s.bmark && s.bcnt && s.claim && s.pclaim && s.rec && s.iseen &&
		  s.fail && s.cdep && s.qseen && s.xs && s.live &&
		  s.live_at && s.res_at && s.bufs;
	for (int m = 0; ok && m < DS_NMEM; m++) {
		s.res[m] = ds_alloc(h, (size_t)nb, sizeof *s.res[m]);
		ok = s.res[m] != NULL;
		s.cap[m] = (int64_t)((double)g->caps.cap[m] * P->cap_frac);
	}
	int rc = DS_OK;
	if (!ok || build_lists(&s)) {
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
		if (s.cnt[v] == 0 && g->kind[v] == DS_OP && s.ready_at[v] < 0)
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
			s.nclo = 0;
			for (int32_t k = s.dep.off[goal];
			     k < s.dep.off[goal + 1]; k++)
				if (!s.done[s.dep.v[k]])
					s.clo[s.nclo++] = s.dep.v[k];
			s.clo[s.nclo++] = goal;
		} else {
			bool okc = closure(&s, goal);
			DS_ASSERT(okc);
			(void)okc;
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
	free_lists(&s);
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
	ds_free(h, s.claim);
	ds_free(h, s.pclaim);
	ds_free(h, s.iseen);
	ds_free(h, s.fail);
	ds_free(h, s.cdep);
	ds_free(h, s.qseen);
	ds_free(h, s.xs);
	ds_free(h, s.rec);
	ds_free(h, s.live);
	ds_free(h, s.live_at);
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
static int try_order1(const ds_graph *g, const int32_t *order,
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
	fprintf(stderr, "  variant(%d): extra %lld spills %lld\n", po->victim,
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

static int try_order(const ds_graph *g, const int32_t *order,
		     const ds_place_opts *po, best *b, ds_err *e)
{
	int rc = try_order1(g, order, po, b, e);
	if (rc)
		return rc;
	ds_place_opts p2 = *po;
	p2.victim = DS_VICTIM_COST;
	return try_order1(g, order, &p2, b, e);
}

static const lsp variants[] = {
	/* closure fan depth new_k chain_first pair mru cap_frac */
	{6, 3, 3, 2, true, true, true, 1.0},
	{6, 3, 3, 2, true, false, true, 1.0},
	{6, 3, 3, 2, false, false, true, 1.0},
	{6, 3, 3, 2, true, true, false, 1.0},
	{6, 3, 3, 2, false, false, false, 1.0},
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
	int32_t *posr = ds_alloc(h, (size_t)g->n, sizeof *posr);
	best b;
	memset(&b, 0, sizeof b);
	if (!pos1 || !ord || !posr) {
		rc = ds_fail(e, DS_ENOMEM, "out of memory");
		goto out;
	}
	for (int32_t i = 0; i < g->n; i++)
		pos1[order[i]] = i;
	ds_place_opts po = {DS_BEST_FIT, DS_VICTIM_FURTHEST};
	if ((rc = try_order(g, order, &po, &b, e)))
		goto out;
	for (size_t k = 0; k < sizeof variants / sizeof *variants; k++) {
#ifdef DLR_DEBUG
		if (getenv("DLR_ONLY") && atoi(getenv("DLR_ONLY")) != (int)k)
			continue;
#endif
		if ((rc = ls_run(g, pos1, NULL, &variants[k], ord, e)) ||
		    (rc = try_order(g, ord, &po, &b, e)))
			goto out;
	}
	/* rounds against the best plan so far as the forecast */
	for (int64_t r = 0; r < effort; r++) {
		int32_t len = 0;
		for (int32_t i = 0; i < b.plan.len; i++)
			if (b.plan.order[i] < g->n)
				posr[b.plan.order[i]] = len++;
		for (size_t k = 0; k < sizeof variants / sizeof *variants;
		     k++) {
			if ((rc = ls_run(g, pos1, posr, &variants[k], ord, e)) ||
			    (rc = try_order(g, ord, &po, &b, e)))
				goto out;
		}
	}
	*out = b.plan;
	b.have = false;
out:
	if (b.have)
		ds_plan_free(h, &b.plan);
	ds_free(h, pos1);
	ds_free(h, ord);
	ds_free(h, posr);
	return rc;
}
