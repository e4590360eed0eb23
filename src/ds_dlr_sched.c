/* ds_dlr_sched.c: DLR's two list schedulers, po_ and ls_.
 *
 * Requires: a valid graph; dlr_po_follow: a topological order of its n nodes
 * (and its positions); dlr_ls_run: anchor positions of a topological order,
 * and optionally a reference plan's positions of the graph's nodes.
 * Guarantees: a topological order of all n nodes into the caller's array,
 * in which every user of a buffer follows its ALLOC and its FREE follows
 * every user; a pure function of the inputs (node Ids break exact ties);
 * DS_ENOMEM (with e set) and nothing else on failure.
 * Cost: dlr_po_follow O((N + E) log N); dlr_ls_run O(N * G * K) with G candidate
 * goals per step and K the closure bound (both constants, see LS_*), plus
 * O(R) per eviction scored, R the resident buffers of a memory. */
#include "ds_dlr.h"

#include <string.h>

void dlr_sort_lists(const int32_t *pos, csr *c, int32_t n)
{
	for (int32_t v = 0; v < n; v++) {
		int32_t *a = c->v + c->off[v];
		int32_t len = c->off[v + 1] - c->off[v];
		for (int32_t i = 1; i < len; i++) {
			int32_t x = a[i], j = i;
			while (j > 0 && pos[a[j - 1]] > pos[x]) {
				a[j] = a[j - 1];
				j--;
			}
			a[j] = x;
		}
	}
}

/* ---- readiness, shared ----
 *
 * Besides the edges, every user of a buffer waits for its ALLOC, and its
 * FREE for every user (the graph need not spell these out).  cnt[] counts
 * both kinds, so a dependency given twice is counted and met twice. */

/* Unmet dependencies of each node, both kinds, into cnt[0..n) (zeroed). */
static void dlr_count_deps(const ds_graph *g, int32_t *cnt)
{
	for (int32_t b = 0; b < g->nbuf; b++)
		cnt[g->buf_free[b]] += g->user_off[b + 1] - g->user_off[b];
	for (int32_t v = 0; v < g->n; v++) {
		cnt[v] += g->pred_off[v + 1] - g->pred_off[v];
		if (g->kind[v] == DS_OP)
			cnt[v] += g->use_off[v + 1] - g->use_off[v];
	}
}

/* The ALLOC v became ready: it passes readiness on at once (it is emitted
 * only with its buffer's first user), to its successors, then to its
 * buffer's users; ready(ctx, w) for each w whose count reaches zero. */
static void dlr_alloc_release(const ds_graph *g, int32_t v, int32_t *cnt,
			      void (*ready)(void *, int32_t), void *ctx)
{
	int32_t b = g->buf[v];
	for (int32_t k = g->succ_off[v]; k < g->succ_off[v + 1]; k++)
		if (--cnt[g->succ[k]] == 0)
			ready(ctx, g->succ[k]);
	for (int32_t k = g->user_off[b]; k < g->user_off[b + 1]; k++)
		if (--cnt[g->user[k]] == 0)
			ready(ctx, g->user[k]);
}

/* ---- orders that follow stage 1 (po_) ----
 *
 * Stage 1's order with every ALLOC moved to just before its buffer's first
 * user and every FREE to just after its last (JIT), and a "pull" version
 * where an operation whose only purpose is to stage data for one consumer
 * (each buffer it writes has exactly one more user) runs right before that
 * consumer: a load and a move sit next to the operation that needs them
 * instead of where stage 1 put them.  Both are a topological sort by key,
 * O((N + E) log N). */

typedef struct porder {
	const ds_graph *g;
	int32_t *tmp; /* the ALLOCs or FREEs one operation readies */
	int32_t *cnt;
	uint8_t *done;
	int32_t *key;
	const int32_t *pos1;
	ds_heapq q;
	int32_t *out;
	int32_t len;
} porder;

static void po_ready(void *ctx, int32_t v);

static void po_release(porder *p, int32_t w)
{
	if (--p->cnt[w] == 0)
		po_ready(p, w);
}

/* Emits a before its first user or its FREE, once. */
static void po_emit_alloc(porder *p, int32_t a)
{
	if (!p->done[a]) {
		p->done[a] = 1;
		p->out[p->len++] = a;
	}
}

/* As in the scheduler: an ALLOC passes readiness on when its own
 * dependencies are met; operations go into the queue. */
static void po_ready(void *ctx, int32_t v)
{
	porder *p = ctx;
	const ds_graph *g = p->g;
	if (g->kind[v] == DS_OP) {
		ds_heapq_push(&p->q, (int64_t)p->key[v] * g->n + p->pos1[v], v);
		return;
	}
	if (g->kind[v] == DS_FREE) {
		po_emit_alloc(p, g->buf_alloc[g->buf[v]]);
		p->done[v] = 1;
		p->out[p->len++] = v;
		for (int32_t k = g->succ_off[v]; k < g->succ_off[v + 1]; k++)
			po_release(p, g->succ[k]);
		return;
	}
	dlr_alloc_release(g, v, p->cnt, po_ready, p);
}

/* The keys, consumers first: stage 1's (or base_key), and with pull an
 * operation that only stages data for one consumer takes its key. */
static void po_keys(porder *p, const int32_t *order, const int32_t *writer,
		    const int32_t *base_key, bool pull)
{
	const ds_graph *g = p->g;
	for (int32_t i = g->n - 1; i >= 0; i--) {
		int32_t v = order[i], to = -1;
		bool stage = pull && g->kind[v] == DS_OP;
		p->key[v] = base_key ? base_key[v] : i;
		for (int32_t k = g->use_off[v]; stage && k < g->use_off[v + 1];
		     k++) {
			int32_t b = g->use[k];
			if (writer[b] != v)
				continue;
			if (g->user_off[b + 1] - g->user_off[b] != 2) {
				stage = false;
				break;
			}
			int32_t w = g->user[g->user_off[b]] == v
					    ? g->user[g->user_off[b] + 1]
					    : g->user[g->user_off[b]];
			if (to < 0 || p->key[w] < p->key[to])
				to = w;
		}
		if (stage && to >= 0 && p->key[to] > p->key[v])
			p->key[v] = p->key[to];
	}
}

/* Sorts x[0..k) by pos (insertion: an operation readies a few ALLOCs
 * and FREEs at a time). */
static void po_sort(const int32_t *pos, int32_t *x, int32_t k)
{
	for (int32_t i = 1; i < k; i++) {
		int32_t y = x[i], j = i;
		for (; j > 0 && pos[x[j - 1]] > pos[y]; j--)
			x[j] = x[j - 1];
		x[j] = y;
	}
}

/* Runs operation v with its pending ALLOCs, and passes readiness on.
 * Its own buffers' ALLOCs and FREEs go in the order of its list, those
 * it is tied to by edges only in stage 1's order (not in the Ids'): a
 * FREE's last count is taken there. */
static void po_run(porder *p, int32_t v)
{
	const ds_graph *g = p->g;
	int32_t k0 = 0;
	for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++)
		po_emit_alloc(p, g->buf_alloc[g->use[k]]);
	for (int32_t k = g->pred_off[v]; k < g->pred_off[v + 1]; k++)
		if (g->kind[g->pred[k]] == DS_ALLOC && !p->done[g->pred[k]])
			p->tmp[k0++] = g->pred[k];
	po_sort(p->pos1, p->tmp, k0);
	for (int32_t i = 0; i < k0; i++)
		po_emit_alloc(p, p->tmp[i]);
	p->done[v] = 1;
	p->out[p->len++] = v;
	k0 = 0;
	for (int32_t k = g->succ_off[v]; k < g->succ_off[v + 1]; k++) {
		int32_t w = g->succ[k];
		if (--p->cnt[w] != 0)
			continue;
		if (g->kind[w] == DS_OP)
			po_ready(p, w); /* queued by key: no order here */
		else
			p->tmp[k0++] = w;
	}
	po_sort(p->pos1, p->tmp, k0);
	for (int32_t i = 0; i < k0; i++)
		po_ready(p, p->tmp[i]);
	for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++)
		po_release(p, g->buf_free[g->use[k]]);
}

int dlr_po_follow(const ds_graph *g, const int32_t *order, const int32_t *pos1,
	      const int32_t *base_key, bool pull, int32_t *out, ds_err *e)
{
	const int32_t n = g->n, nb = g->nbuf;
	ds_arena a;
	ds_arena_init(&a, g->heap);
	porder p = {.g = g, .pos1 = pos1, .out = out};
	p.cnt = ds_arena_alloc(&a, (size_t)n, sizeof *p.cnt);
	p.done = ds_arena_alloc(&a, (size_t)n, 1);
	p.key = ds_arena_alloc(&a, (size_t)n, sizeof *p.key);
	int32_t *writer = ds_arena_alloc(&a, (size_t)nb, sizeof *writer);
	p.tmp = ds_arena_alloc(&a, (size_t)n + 1, sizeof *p.tmp);
	int rc = ds_heapq_init(&p.q, g->heap, n);
	if (a.failed || rc) {
		rc = ds_fail(e, DS_ENOMEM, "out of memory");
		goto out;
	}
	/* a buffer's writer: its first user in stage 1 order */
	for (int32_t b = 0; b < nb; b++) {
		writer[b] = -1;
		for (int32_t k = g->user_off[b]; k < g->user_off[b + 1]; k++)
			if (writer[b] < 0 || pos1[g->user[k]] < pos1[writer[b]])
				writer[b] = g->user[k];
	}
	po_keys(&p, order, writer, base_key, pull);
	dlr_count_deps(g, p.cnt);
	/* nodes without dependencies (ALLOCs, mostly), marked first so that
	 * readiness passed on by one of them does not count another twice */
	for (int32_t v = 0; v < n; v++)
		if (p.cnt[v] == 0)
			p.done[v] = 2;
	for (int32_t v = 0; v < n; v++)
		if (p.done[v] == 2) {
			p.done[v] = 0;
			po_ready(&p, v);
		}
	while (p.q.n > 0)
		po_run(&p, ds_heapq_pop(&p.q));
	DS_ASSERT(p.len == n);
out:
	ds_heapq_free(&p.q);
	ds_arena_free(&a);
	return rc;
}

/* ---- the list scheduler ----
 *
 * Builds an order node by node.  ALLOCs are lazy (emitted right before the
 * first user of their buffer), FREEs eager.  Each step picks a goal: an
 * operation together with the unscheduled operations it waits for (its
 * closure, at most LS_MAX_CLOSURE operations), all emitted at once.  The
 * candidates are the next LS_WINDOW operations of the anchor order (the
 * best order so far) and the next LS_FAN users of each of the LS_SEEDS most
 * recently used resident buffers.
 *
 * Rules: a goal must finish something (the last use of a buffer, or be an
 * operation only FREEs follow).  One that leaves a new buffer with exactly
 * one more user, that user being near (its own closure fits), gives way to
 * that user, which is queued instead: data is staged next to the operation
 * that needs it.  One that starts a buffer with more users needs the next
 * of them near: allocate only when the consumer is near.  Goals breaking a
 * rule are taken only when no candidate keeps them, even after a wider look.
 *
 * Among goals: the least eviction traffic in the residency model, then the
 * anchor order.  The model counts bytes per memory; its victims are the
 * least recently used buffers, or, given a reference plan, those whose next
 * use in it is furthest (Belady against that forecast); per byte of room, a
 * buffer whose data sits in DDR costs half as much. */

enum { B_NONE, B_RES, B_SPILL, B_FREED };

/* The scheduler's bounds, each measured at half and double as ds_dlr.h
 * says (extra_ddr summed over the six graphs, 316,264 at these values):
 * - LS_MAX_CLOSURE: 3 gives 321,128 (FlashAttention_Case0 768, but _Case1
 *   26,880), 12 gives 321,640 (FlashAttention_Case1 26,880) and is slower.
 * - LS_FAN: 1 gives the same figures, 6 the same in 4.5 s instead of
 *   ~2.6 s; 3 kept (the scheduler wins nothing on these graphs with 1).
 * - LS_WINDOW: 4 gives the same figures, 16 gives 316,552
 *   (FlashAttention_Case1 21,792).
 * - LS_SEEDS: 32 gives the same figures; 8 gives 314,984
 *   (FlashAttention_Case1 20,224 instead of 21,504), a lead for a tuning
 *   change (not taken here: this file's refactor keeps plans identical). */
#define LS_MAX_CLOSURE 6 /* operations a goal may pull in, itself too */
#define LS_FAN 3	 /* users followed per seeded buffer */
#define LS_WINDOW 8	 /* next operations of the anchor order seeded */
#define LS_SEEDS 16	 /* most recently used resident buffers seeded */

/* Compared field by field, smaller first. */
typedef struct ls_score {
	int level;    /* 1: breaks a rule */
	double evict; /* traffic of the evictions it forces in the model */
	int32_t pos;  /* anchor position */
} ls_score;

typedef struct lsched {
	const ds_graph *g;
	ds_arena *a; /* every array below */
	const int32_t *pos1; /* anchor position of each node */
	const int32_t *posr; /* reference plan position of each node, or NULL */
	csr dep;	     /* what a node waits for, by anchor position */
	csr usr;	     /* users of a buffer, by anchor position */
	csr rusr;	     /* users of a buffer, by reference position */
	int32_t *rptr;	     /* per buffer: first maybe unscheduled in rusr */
	int32_t now_ref;     /* reference position of the last operation */
	/* per node */
	int32_t *cnt; /* unmet dependencies (ready ALLOCs count as met) */
	uint8_t *done;
	int32_t *ready_at; /* index in ready[], -1 when not there */
	int32_t *ready;
	int32_t nready;
	int32_t *mark;	/* in the closure being looked at: cstamp */
	int32_t *seen;	/* walked by ls_near(): sstamp */
	int32_t *qseen; /* queued this step: qstamp */
	int32_t *fail;	/* closure over the limit this step: fstamp */
	int32_t cstamp, sstamp, qstamp, fstamp, bstamp;
	int32_t *ord1; /* the anchor order */
	int32_t *skip; /* union-find over it: next unscheduled operation */
	/* per buffer */
	uint8_t *bst;
	int32_t *rem;	/* unscheduled users */
	int64_t *last;	/* last use, in scheduler ticks */
	int32_t *bmark; /* protected / counted: bstamp */
	int32_t *bcnt;	/* uses inside the closure being scored */
	double *ekey;	/* ls_evict_key, valid while kep == kepoch */
	int32_t *kep;
	int32_t kepoch; /* moves on at each emission (the keys' inputs) */
	int32_t *res[DS_NMEM]; /* resident buffers per memory */
	int32_t nres[DS_NMEM];
	int32_t *res_at;
	int32_t *mru_prev, *mru_next; /* resident, most recently used first */
	int32_t mru_head;
	int64_t used[DS_NMEM];
	int64_t tick;
	/* scratch */
	int32_t *clo; /* closure in emission order */
	int32_t nclo, nclo_ops;
	int32_t *cand;
	int32_t ncand;
	bool push; /* ls_score_goal may queue the users goals give way to */
	int32_t *bufs;
	int32_t *frees; /* FREEs that became ready */
	int32_t nfrees;
	/* output */
	int32_t *order;
	int32_t len;
} lsched;

/* ---- readiness ---- */

static void ls_ready_add(lsched *s, int32_t v)
{
	if (s->g->kind[v] == DS_FREE) {
		s->frees[s->nfrees++] = v;
		return;
	}
	s->ready_at[v] = s->nready;
	s->ready[s->nready++] = v;
}

static void ls_ready_del(lsched *s, int32_t v)
{
	int32_t i = s->ready_at[v];
	if (i < 0)
		return;
	int32_t last = s->ready[--s->nready];
	s->ready[i] = last;
	s->ready_at[last] = i;
	s->ready_at[v] = -1;
}

static void ls_release(lsched *s, int32_t w);

/* v's dependencies are met.  An ALLOC passes readiness on at once: it is
 * emitted only with its first user. */
static void ls_became_ready(void *ctx, int32_t v)
{
	lsched *s = ctx;
	if (s->g->kind[v] != DS_ALLOC)
		ls_ready_add(s, v);
	else
		dlr_alloc_release(s->g, v, s->cnt, ls_became_ready, s);
}

static void ls_release(lsched *s, int32_t w)
{
	if (--s->cnt[w] == 0)
		ls_became_ready(s, w);
}

/* ---- the residency model ---- */

static void ls_mru_unlink(lsched *s, int32_t b)
{
	int32_t p = s->mru_prev[b], q = s->mru_next[b];
	if (p >= 0)
		s->mru_next[p] = q;
	else
		s->mru_head = q;
	if (q >= 0)
		s->mru_prev[q] = p;
}

static void ls_mru_front(lsched *s, int32_t b)
{
	s->mru_prev[b] = -1;
	s->mru_next[b] = s->mru_head;
	if (s->mru_head >= 0)
		s->mru_prev[s->mru_head] = b;
	s->mru_head = b;
}

static void ls_res_add(lsched *s, int32_t b)
{
	int m = s->g->buf_mem[b];
	ls_mru_front(s, b);
	s->res_at[b] = s->nres[m];
	s->res[m][s->nres[m]++] = b;
	s->used[m] += s->g->buf_size[b];
	s->bst[b] = B_RES;
}

static void ls_res_del(lsched *s, int32_t b, uint8_t st)
{
	int m = s->g->buf_mem[b];
	ls_mru_unlink(s, b);
	int32_t i = s->res_at[b];
	int32_t last = s->res[m][--s->nres[m]];
	s->res[m][i] = last;
	s->res_at[last] = i;
	s->used[m] -= s->g->buf_size[b];
	s->bst[b] = st;
}

/* Reference position of b's next unscheduled user (INT32_MAX: none). */
static int32_t ls_next_ref(lsched *s, int32_t b)
{
	int32_t k = s->rptr[b];
	while (k < s->rusr.off[b + 1] && s->done[s->rusr.v[k]])
		k++;
	s->rptr[b] = k;
	return k < s->rusr.off[b + 1] ? s->posr[s->rusr.v[k]] : INT32_MAX;
}

/* Eviction preference of b, larger first, computed. */
static double ls_evict_key_now(lsched *s, int32_t b)
{
	double d;
	if (s->posr) {
		int32_t nr = ls_next_ref(s, b);
		d = nr == INT32_MAX ? 1e9 : (double)nr - s->now_ref;
		if (d < 1)
			d = 1;
	} else {
		d = (double)(s->tick - s->last[b]) + 1;
	}
	return s->g->buf_copyin[b] ? 2 * d : d;
}

/* The same, kept per emission: a function of the state only ls_emit
 * changes (tick, now_ref, last[], done[]; a buffer whose last[] it
 * changes is protected until it returns), and the goals scored between
 * two emissions ask for the same victims' keys again and again.  With
 * asserts on, a kept key is checked against a fresh one for about one
 * buffer in 64. */
static double ls_evict_key(lsched *s, int32_t b)
{
	if (s->kep[b] == s->kepoch) {
		DS_ASSERT((b & 63) != (s->kepoch & 63) ||
			  s->ekey[b] == ls_evict_key_now(s, b));
		return s->ekey[b];
	}
	s->kep[b] = s->kepoch;
	s->ekey[b] = ls_evict_key_now(s, b);
	return s->ekey[b];
}

/* The resident buffer of m to evict first, skipping the protected
 * (bmark == bstamp) and the taken (bmark == taken); -1 when none is left.
 * Ties go to the buffer allocated first in the anchor order. */
static int32_t ls_victim(lsched *s, int m, int32_t taken)
{
	const ds_graph *g = s->g;
	int32_t best = -1;
	double bk = -1;
	for (int32_t i = 0; i < s->nres[m]; i++) {
		int32_t b = s->res[m][i];
		if (s->bmark[b] == s->bstamp || s->bmark[b] == taken)
			continue;
		double k = ls_evict_key(s, b);
		if (k > bk || (k == bk && s->pos1[g->buf_alloc[b]] <
						  s->pos1[g->buf_alloc[best]])) {
			bk = k;
			best = b;
		}
	}
	return best;
}

/* Makes room for size bytes in m, evicting unprotected buffers.  The model
 * may stay over capacity when nothing can go: ds_place deals with the real
 * layout later. */
static void ls_make_room(lsched *s, int m, int64_t size)
{
	while (s->used[m] + size > s->g->caps.cap[m]) {
		int32_t b = ls_victim(s, m, s->bstamp);
		if (b < 0)
			return;
		ls_res_del(s, b, B_SPILL);
	}
}

/* Appends v to the order and updates readiness and the model. */
static void ls_emit(lsched *s, int32_t v)
{
	const ds_graph *g = s->g;
	DS_ASSERT(!s->done[v] && s->cnt[v] == 0);
	s->order[s->len++] = v;
	s->done[v] = 1;
	s->kepoch++;
	s->skip[s->pos1[v]] = s->pos1[v] + 1;
	ls_ready_del(s, v);
	s->tick++;
	if (g->kind[v] == DS_ALLOC) {
		int32_t b = g->buf[v];
		s->bmark[b] = ++s->bstamp;
		ls_make_room(s, g->buf_mem[b], g->buf_size[b]);
		ls_res_add(s, b);
		s->last[b] = s->tick;
		return; /* it passed readiness on when it became ready */
	}
	if (g->kind[v] == DS_FREE) {
		int32_t b = g->buf[v];
		if (s->bst[b] == B_RES)
			ls_res_del(s, b, B_FREED);
		s->bst[b] = B_FREED;
	} else {
		if (s->posr)
			s->now_ref = s->posr[v];
		s->bstamp++;
		for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++)
			s->bmark[g->use[k]] = s->bstamp;
		for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
			int32_t b = g->use[k];
			if (s->bst[b] == B_SPILL) {
				ls_make_room(s, g->buf_mem[b], g->buf_size[b]);
				ls_res_add(s, b);
			} else {
				ls_mru_unlink(s, b);
				ls_mru_front(s, b);
			}
			s->last[b] = s->tick;
			s->rem[b]--;
			ls_release(s, g->buf_free[b]);
		}
	}
	for (int32_t k = g->succ_off[v]; k < g->succ_off[v + 1]; k++)
		ls_release(s, g->succ[k]);
}

/* Emits the FREEs that became ready (with the ALLOC of a buffer nobody
 * uses, which only now meets its FREE). */
static void ls_flush_frees(lsched *s)
{
	while (s->nfrees > 0) {
		int32_t f = s->frees[--s->nfrees];
		int32_t a = s->g->buf_alloc[s->g->buf[f]];
		if (!s->done[a])
			ls_emit(s, a);
		ls_emit(s, f);
	}
}

/* ---- goals ---- */

/* Depth-first over unscheduled dependencies, appending in post-order (the
 * closure is emitted in that order, a topological one); false past the
 * limit, or when the closure would need a FREE. */
static bool ls_closure_rec(lsched *s, int32_t v)
{
	const ds_graph *g = s->g;
	s->mark[v] = s->cstamp;
	for (int32_t k = s->dep.off[v]; k < s->dep.off[v + 1]; k++) {
		int32_t p = s->dep.v[k];
		if (s->done[p] || s->mark[p] == s->cstamp)
			continue;
		if (g->kind[p] == DS_FREE || s->fail[p] == s->fstamp ||
		    !ls_closure_rec(s, p))
			return false;
	}
	if (g->kind[v] == DS_OP && ++s->nclo_ops > LS_MAX_CLOSURE)
		return false;
	s->clo[s->nclo++] = v;
	return true;
}

/* The closure of v: v and every unscheduled node it waits for. */
static bool ls_closure(lsched *s, int32_t v)
{
	s->cstamp++;
	s->nclo = 0;
	s->nclo_ops = 0;
	if (ls_closure_rec(s, v))
		return true;
	s->fail[v] = s->fstamp; /* this step, whatever waits for v fails */
	return false;
}

/* Counts the unscheduled operations v waits for outside the current
 * closure, down from *budget; false once it runs out. */
static bool ls_near_rec(lsched *s, int32_t v, int32_t *budget)
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
		if (!ls_near_rec(s, p, budget))
			return false;
	}
	return true;
}

/* Is u near: its own closure, the current one counted as done, within
 * budget operations?  (No user at all: nothing waits.) */
static bool ls_near(lsched *s, int32_t u, int32_t budget)
{
	if (u < 0)
		return true;
	s->sstamp++;
	return ls_near_rec(s, u, &budget);
}

/* The next unscheduled user of b outside the current closure, or -1. */
static int32_t ls_next_user(const lsched *s, int32_t b)
{
	for (int32_t k = s->usr.off[b]; k < s->usr.off[b + 1]; k++) {
		int32_t u = s->usr.v[k];
		if (!s->done[u] && s->mark[u] != s->cstamp)
			return u;
	}
	return -1;
}

/* Queues v as a candidate, once per step. */
static void ls_queue(lsched *s, int32_t v)
{
	if (s->qseen[v] == s->qstamp)
		return;
	s->qseen[v] = s->qstamp;
	s->cand[s->ncand++] = v;
}

/* The buffers the operations of the closure clo[] use, into bufs[] (how
 * many returned), each with its count of uses there in bcnt[] (marked
 * with a new bstamp); *bufless when they use none. */
static int32_t ls_closure_bufs(lsched *s, bool *bufless)
{
	const ds_graph *g = s->g;
	int32_t nb = 0;
	*bufless = true;
	s->bstamp++;
	for (int32_t i = 0; i < s->nclo; i++) {
		int32_t x = s->clo[i];
		if (g->kind[x] != DS_OP)
			continue;
		for (int32_t k = g->use_off[x]; k < g->use_off[x + 1]; k++) {
			int32_t b = g->use[k];
			*bufless = false;
			if (s->bmark[b] != s->bstamp) {
				s->bmark[b] = s->bstamp;
				s->bcnt[b] = 0;
				s->bufs[nb++] = b;
			}
			s->bcnt[b]++;
		}
	}
	return nb;
}

/* The bytes per memory the closure's nb buffers need brought in (need[]),
 * whether it finishes one of them, and its level: 1 when it leaves a new
 * buffer waiting for a user far away.  False when it leaves one waiting
 * for a single user near enough to give way to (queued, when push is
 * set). */
static bool ls_closure_needs(lsched *s, int32_t nb, int64_t need[DS_NMEM],
			     bool *finishes, int *level)
{
	const ds_graph *g = s->g;
	for (int32_t i = 0; i < nb; i++) {
		int32_t b = s->bufs[i];
		bool last = s->bcnt[b] == s->rem[b];
		*finishes |= last;
		if (s->bst[b] == B_RES)
			continue;
		need[g->buf_mem[b]] += g->buf_size[b];
		if (s->bst[b] != B_NONE || last || g->buf_copyin[b])
			continue;
		/* it leaves a new buffer waiting for more users */
		int32_t u = ls_next_user(s, b);
		if (s->rem[b] - s->bcnt[b] == 1) {
			if (ls_near(s, u, LS_MAX_CLOSURE - s->nclo_ops)) {
				if (s->push)
					ls_queue(s, u);
				return false;
			}
		} else if (!ls_near(s, u, LS_MAX_CLOSURE)) {
			*level = 1;
		}
	}
	return true;
}

/* The traffic of the evictions that bringing need[] in forces, the
 * model's victims first (bufs[nb..] as scratch); 1e15 per memory where
 * it cannot fit. */
static double ls_forced_evictions(lsched *s, int32_t nb,
				  const int64_t need[DS_NMEM])
{
	const ds_graph *g = s->g;
	double evict = 0;
	int32_t taken = -s->bstamp; /* never a real stamp */
	for (int m = 0; m < DS_NMEM; m++) {
		int64_t over = s->used[m] + need[m] - g->caps.cap[m];
		int32_t nt = 0;
		while (over > 0) {
			int32_t b = ls_victim(s, m, taken);
			if (b < 0) {
				evict += 1e15; /* cannot fit: last resort */
				break;
			}
			s->bmark[b] = taken;
			s->bufs[nb + nt++] = b;
			evict += (double)ds_spill_traffic(g, b);
			over -= g->buf_size[b];
		}
		for (int32_t i = 0; i < nt; i++)
			s->bmark[s->bufs[nb + i]] = 0;
	}
	return evict;
}

/* Scores goal v, whose closure is in clo[]; false when it gives way to the
 * user it leaves a buffer for (then queued, when push is set). */
static bool ls_score_goal(lsched *s, int32_t v, ls_score *out)
{
	const ds_graph *g = s->g;
	bool finishes = false, bufless;
	int level = 0;
	int32_t nb = ls_closure_bufs(s, &bufless);
	int64_t need[DS_NMEM] = {0};
	if (!ls_closure_needs(s, nb, need, &finishes, &level))
		return false;
	if (!finishes && !bufless)
		for (int32_t k = g->succ_off[v]; k < g->succ_off[v + 1]; k++)
			if (g->kind[g->succ[k]] != DS_FREE)
				level = 1;
	out->level = level;
	out->evict = ls_forced_evictions(s, nb, need);
	out->pos = s->pos1[v];
	return true;
}

static bool ls_better(const ls_score *a, const ls_score *b)
{
	if (a->level != b->level)
		return a->level < b->level;
	if (a->evict != b->evict)
		return a->evict < b->evict;
	return a->pos < b->pos;
}

/* Anchor position of the first unscheduled operation at or after position
 * i (n when none): union-find with path halving over the anchor order. */
static int32_t ls_skip_find(lsched *s, int32_t i)
{
	while (s->skip[i] != i) {
		s->skip[i] = s->skip[s->skip[i]];
		i = s->skip[i];
	}
	return i;
}

/* The best goal among the candidates (wide: a larger window, every resident
 * buffer), and its level (2 when there is none). */
static int32_t ls_pick_goal(lsched *s, bool wide, int *level)
{
	int32_t window = wide ? 4 * LS_WINDOW : LS_WINDOW;
	int32_t seeds = wide ? INT32_MAX : LS_SEEDS;
	int32_t best = -1;
	ls_score bs = {0, 0, 0};
	s->qstamp++;
	s->fstamp++;
	s->ncand = 0;
	for (int32_t i = ls_skip_find(s, 0), k = 0; i < s->g->n && k < window;
	     i = ls_skip_find(s, i + 1), k++)
		ls_queue(s, s->ord1[i]);
	for (int32_t b = s->mru_head, k = 0; b >= 0 && k < seeds;
	     b = s->mru_next[b], k++)
		for (int32_t j = s->usr.off[b], f = 0;
		     j < s->usr.off[b + 1] && f < LS_FAN; j++)
			if (!s->done[s->usr.v[j]]) {
				ls_queue(s, s->usr.v[j]);
				f++;
			}
	s->push = true;
	for (int32_t i = 0; i < s->ncand; i++) {
		int32_t v = s->cand[i];
		ls_score sc;
		if (!ls_closure(s, v) || !ls_score_goal(s, v, &sc))
			continue;
		if (best < 0 || ls_better(&sc, &bs)) {
			best = v;
			bs = sc;
		}
	}
	s->push = false;
	*level = best < 0 ? 2 : bs.level;
	return best;
}

/* A copy of the graph's user lists, sorted by pos. */
static csr ls_users(lsched *s, const int32_t *pos)
{
	const ds_graph *g = s->g;
	const int32_t nb = g->nbuf;
	csr u;
	u.off = ds_arena_alloc(s->a, (size_t)nb + 1, sizeof *u.off);
	u.v = ds_arena_alloc(s->a, (size_t)g->user_off[nb] + 1, sizeof *u.v);
	if (s->a->failed)
		return u;
	memcpy(u.off, g->user_off, ((size_t)nb + 1) * sizeof *u.off);
	memcpy(u.v, g->user, (size_t)g->user_off[nb] * sizeof *u.v);
	dlr_sort_lists(pos, &u, nb);
	return u;
}

/* What each node waits for (edges, and an operation's ALLOCs) and each
 * buffer's users, by anchor position; by reference position too. */
static void ls_build_lists(lsched *s)
{
	const ds_graph *g = s->g;
	const int32_t n = g->n, nb = g->nbuf;
	s->dep.off = ds_arena_alloc(s->a, (size_t)n + 1, sizeof *s->dep.off);
	if (s->a->failed)
		return;
	for (int32_t v = 0; v < n; v++) {
		int32_t nd = g->pred_off[v + 1] - g->pred_off[v];
		if (g->kind[v] == DS_OP)
			nd += g->use_off[v + 1] - g->use_off[v];
		s->dep.off[v + 1] = s->dep.off[v] + nd;
	}
	s->dep.v = ds_arena_alloc(s->a, (size_t)s->dep.off[n] + 1,
				  sizeof *s->dep.v);
	if (s->a->failed)
		return;
	for (int32_t v = 0; v < n; v++) {
		int32_t *d = s->dep.v + s->dep.off[v];
		for (int32_t k = g->pred_off[v]; k < g->pred_off[v + 1]; k++)
			*d++ = g->pred[k];
		if (g->kind[v] == DS_OP)
			for (int32_t k = g->use_off[v]; k < g->use_off[v + 1];
			     k++)
				*d++ = g->buf_alloc[g->use[k]];
	}
	dlr_sort_lists(s->pos1, &s->dep, n);
	s->usr = ls_users(s, s->pos1);
	if (s->posr && !s->a->failed) {
		s->rusr = ls_users(s, s->posr);
		s->rptr = ds_arena_alloc(s->a, (size_t)nb, sizeof *s->rptr);
		if (s->a->failed)
			return;
		for (int32_t b = 0; b < nb; b++)
			s->rptr[b] = s->rusr.off[b];
	}
}

/* Every array of s from its arena; false when one failed. */
static bool ls_alloc(lsched *s)
{
	ds_arena *a = s->a;
	const size_t n = (size_t)s->g->n, nb = (size_t)s->g->nbuf;
	s->cnt = ds_arena_alloc(a, n, sizeof *s->cnt);
	s->done = ds_arena_alloc(a, n, 1);
	s->ready_at = ds_arena_alloc(a, n, sizeof *s->ready_at);
	s->ready = ds_arena_alloc(a, n, sizeof *s->ready);
	s->mark = ds_arena_alloc(a, n, sizeof *s->mark);
	s->seen = ds_arena_alloc(a, n, sizeof *s->seen);
	s->qseen = ds_arena_alloc(a, n, sizeof *s->qseen);
	s->fail = ds_arena_alloc(a, n, sizeof *s->fail);
	s->ord1 = ds_arena_alloc(a, n, sizeof *s->ord1);
	s->skip = ds_arena_alloc(a, n + 1, sizeof *s->skip);
	s->clo = ds_arena_alloc(a, n, sizeof *s->clo);
	s->cand = ds_arena_alloc(a, n, sizeof *s->cand);
	s->frees = ds_arena_alloc(a, n, sizeof *s->frees);
	s->bst = ds_arena_alloc(a, nb, 1);
	s->rem = ds_arena_alloc(a, nb, sizeof *s->rem);
	s->last = ds_arena_alloc(a, nb, sizeof *s->last);
	s->bmark = ds_arena_alloc(a, nb, sizeof *s->bmark);
	s->bcnt = ds_arena_alloc(a, nb, sizeof *s->bcnt);
	s->ekey = ds_arena_alloc(a, nb, sizeof *s->ekey);
	s->kep = ds_arena_alloc(a, nb, sizeof *s->kep);
	s->res_at = ds_arena_alloc(a, nb, sizeof *s->res_at);
	s->mru_prev = ds_arena_alloc(a, nb, sizeof *s->mru_prev);
	s->mru_next = ds_arena_alloc(a, nb, sizeof *s->mru_next);
	s->bufs = ds_arena_alloc(a, nb * 2, sizeof *s->bufs);
	for (int m = 0; m < DS_NMEM; m++)
		s->res[m] = ds_arena_alloc(a, nb, sizeof *s->res[m]);
	if (!a->failed)
		ls_build_lists(s);
	return !a->failed;
}

/* Counts, stamps and the anchor order's skip list; the nodes without
 * dependencies made ready. */
static void ls_init(lsched *s)
{
	const ds_graph *g = s->g;
	const int32_t n = g->n, nb = g->nbuf;
	/* stamps start above the zeroed marks */
	s->cstamp = s->sstamp = s->qstamp = s->fstamp = s->bstamp = 1;
	s->kepoch = 1; /* above the zeroed kep[] */
	s->mru_head = -1;
	for (int32_t b = 0; b < nb; b++)
		s->rem[b] = g->user_off[b + 1] - g->user_off[b];
	dlr_count_deps(g, s->cnt);
	/* the window skips ALLOCs and FREEs: they are never goals */
	for (int32_t v = 0; v < n; v++) {
		s->ord1[s->pos1[v]] = v;
		s->skip[s->pos1[v]] =
			g->kind[v] == DS_OP ? s->pos1[v] : s->pos1[v] + 1;
		s->ready_at[v] = -1;
	}
	s->skip[n] = n;
	/* nodes without dependencies, marked first so that readiness passed
	 * on by one of them does not count another twice */
	for (int32_t v = 0; v < n; v++)
		if (s->cnt[v] == 0)
			s->mark[v] = 1;
	for (int32_t v = 0; v < n; v++)
		if (s->mark[v] == 1) {
			s->mark[v] = 0;
			ls_became_ready(s, v);
		}
	ls_flush_frees(s);
}

/* The next goal with its closure in clo[]: the best candidate, looking
 * further before breaking a rule; with no candidate at all, the first
 * ready operation of the anchor order with its pending ALLOCs. */
static void ls_next_goal(lsched *s)
{
	int level;
	int32_t goal = ls_pick_goal(s, false, &level);
	if (level > 0) {
		int wlevel;
		int32_t w = ls_pick_goal(s, true, &wlevel);
		if (wlevel <= level)
			goal = w;
	}
	if (goal >= 0) {
		bool okc = ls_closure(s, goal);
		DS_ASSERT(okc);
		(void)okc;
		return;
	}
	for (int32_t i = 0; i < s->nready; i++)
		if (goal < 0 || s->pos1[s->ready[i]] < s->pos1[goal])
			goal = s->ready[i];
	DS_ASSERT(goal >= 0);
	s->nclo = 0;
	for (int32_t k = s->dep.off[goal]; k < s->dep.off[goal + 1]; k++)
		if (!s->done[s->dep.v[k]])
			s->clo[s->nclo++] = s->dep.v[k];
	s->clo[s->nclo++] = goal;
}

#ifndef NDEBUG
/* The residency model recomputed from scratch: each memory's bytes, the
 * resident lists and their index, and the MRU list holding exactly the
 * resident buffers.  O(N_buf). */
static void ls_check(const lsched *s)
{
	const ds_graph *g = s->g;
	int32_t nres = 0, nmru = 0;
	for (int m = 0; m < DS_NMEM; m++) {
		int64_t used = 0;
		for (int32_t i = 0; i < s->nres[m]; i++) {
			int32_t b = s->res[m][i];
			DS_ASSERT(s->res_at[b] == i && s->bst[b] == B_RES);
			DS_ASSERT(g->buf_mem[b] == m);
			used += g->buf_size[b];
		}
		DS_ASSERT(used == s->used[m]);
		nres += s->nres[m];
	}
	for (int32_t b = s->mru_head; b >= 0; b = s->mru_next[b]) {
		DS_ASSERT(s->bst[b] == B_RES && nmru < nres);
		nmru++;
	}
	DS_ASSERT(nmru == nres);
	(void)g;
	(void)nres;
	(void)nmru;
}
#endif

int dlr_ls_run(const ds_graph *g, const int32_t *pos1, const int32_t *posr,
	   int32_t *order, ds_err *e)
{
	ds_arena a;
	ds_arena_init(&a, g->heap);
	lsched s = {.g = g, .a = &a, .pos1 = pos1, .posr = posr,
		    .order = order};
	if (!ls_alloc(&s)) {
		ds_arena_free(&a);
		return ds_fail(e, DS_ENOMEM, "out of memory");
	}
	ls_init(&s);
	for (int64_t steps = 1; s.len < g->n; steps++) {
		ls_next_goal(&s);
		for (int32_t i = 0; i < s.nclo; i++) {
			if (s.done[s.clo[i]])
				continue;
			ls_emit(&s, s.clo[i]);
			ls_flush_frees(&s);
		}
#ifndef NDEBUG
		/* at steps 1, 2, 4, ...: O(N_buf log N) in all */
		if ((steps & (steps - 1)) == 0)
			ls_check(&s);
#endif
	}
	DS_ASSERT(s.len == g->n);
	ds_arena_free(&a);
	return DS_OK;
}
