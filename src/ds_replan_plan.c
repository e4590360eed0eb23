/* ds_replan_plan.c: the plan of ds_replan.c's search (rp_; the overview
 * is ds_replan.c's header).  The best end state's events give the steps'
 * times, the units each allocation and reload took and the spill lines
 * (the prefix's, a line crossing into the tail reloading where the
 * search reloads its buffer, one line per eviction); the prefix's loads
 * of small buffers live at the tail's start join the tail; each node of
 * the tail gets a key (steps and spill nodes their times, the others as
 * late as the steps after them allow, a load or store among them at the
 * start of the compute step running then), and the tail is ordered by
 * Kahn's rule, the least key first, keeping the graph's order
 * constraints and each large buffer's events in their order; an ALLOC or
 * SPILL_IN waits until its addresses are free.
 *
 * Requires: a run's state (rp) whose search found an end state.
 * Guarantees: DS_OK with *changed and *out a plan of the graph whose
 * spill lines are sorted (its validity and makespan are the replay's to
 * judge, the caller's), or *changed false and *out empty when the order
 * cannot be completed (an ALLOC with no room and nothing left to free);
 * DS_ENOMEM when memory fails.
 * Cost: O(T log T + E_T + T L) for T tail nodes, E_T their constraints
 * and L buffers live at once.  Memory: the run's arena, the plan from
 * the graph's heap. */
#include "ds_replan_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- the keys ---- */

/* The best state's events from the root, in order, into *path. */
static int32_t path_of(rp *r, int32_t best, int32_t **path)
{
	int32_t n = 0;
	for (int32_t h = best; h > 0; h = r->ev[h].parent)
		n++;
	*path = ds_arena_alloc(&r->a, (size_t)n + 1, sizeof **path);
	if (!*path)
		return -1;
	int32_t i = n;
	for (int32_t h = best; h > 0; h = r->ev[h].parent)
		(*path)[--i] = h;
	return n;
}

/* The steps' times, the allocations' units and the spill lines: the
 * prefix's, a crossing line reloading at the search's reload, and one
 * line per eviction; each line's SPILL_OUT and SPILL_IN keyed. */
static bool events(rp *r, rp_emit *E, const int32_t *at, const int32_t *path,
		   int32_t np)
{
	const ds_graph *g = r->g;
	int32_t nevict = 0;
	for (int32_t i = 0; i < np; i++)
		nevict += r->ev[path[i]].kind == EV_EVICT;
	E->K = rp_prefix_lines(r, at);
	E->nl = E->K + nevict;
	E->total = g->n + 2 * E->nl;
	E->sp = ds_arena_alloc(&r->a, (size_t)E->nl + 1, sizeof *E->sp);
	E->sstart = ds_arena_alloc(&r->a, (size_t)r->ns, sizeof *E->sstart);
	E->sfin = ds_arena_alloc(&r->a, (size_t)r->ns, sizeof *E->sfin);
	E->apos = ds_arena_alloc(&r->a, (size_t)r->nb, sizeof *E->apos);
	E->key = ds_arena_alloc(&r->a, (size_t)E->total, sizeof *E->key);
	E->cls = ds_arena_alloc(&r->a, (size_t)E->total, 1);
	E->in = ds_arena_alloc(&r->a, (size_t)E->total, 1);
	int32_t *pend = ds_arena_alloc(&r->a, (size_t)r->nb, sizeof *pend);
	if (r->a.failed)
		return false;
	memcpy(E->sp, r->p->spill, (size_t)E->K * sizeof *E->sp);
	memset(E->apos, 0xff, (size_t)r->nb * sizeof *E->apos);
	memset(pend, 0xff, (size_t)r->nb * sizeof *pend);
	for (int32_t k = 0; k < E->K; k++)
		if (at[g->n + 2 * k + 1] >= r->a0)
			pend[r->bi[E->sp[k].buf]] = k;
	int32_t L = E->K;
	for (int32_t i = 0; i < np; i++) {
		const rp_ev *ev = &r->ev[path[i]];
		int32_t x = ev->x, k;
		switch (ev->kind) {
		case EV_STEP:
			E->sstart[x] = ev->start, E->sfin[x] = ev->fin;
			break;
		case EV_ALLOC:
			E->apos[x] = ev->pos;
			break;
		case EV_EVICT:
			E->sp[L] = (ds_spill){r->buf[x], 0};
			k = g->n + 2 * L;
			E->key[k] = ev->start, E->cls[k] = 1, E->in[k] = 2;
			pend[x] = L++;
			break;
		case EV_RELOAD:
			if (pend[x] < 0)
				return false;
			E->sp[pend[x]].offset = r->base + ev->pos * r->q;
			k = g->n + 2 * pend[x] + 1;
			E->key[k] = ev->start, E->cls[k] = 2, E->in[k] = 2;
			pend[x] = -1;
			break;
		}
	}
	for (int32_t x = 0; x < r->nb; x++)
		if (pend[x] >= 0)
			return false;
	return true;
}

static int64_t node_cycles(const ds_graph *g, int32_t v)
{
	return v < g->n ? g->cycles[v] : 0;
}

/* The start of the step of starts[] running at t (the latest to start
 * by t), t when none has. */
static int64_t snap(const int64_t *starts, int32_t ns, int64_t t)
{
	int32_t lo = 0, hi = ns;
	while (lo < hi) {
		int32_t mid = lo + (hi - lo) / 2;
		if (starts[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 ? starts[lo - 1] : t;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Whether prefix operation u may join the tail: every successor of it
 * in the tail, and no buffer of it one of the model's (whose times the
 * search took from the prefix as it was). */
static bool may_move(const rp *r, const int32_t *at, int32_t u)
{
	const ds_graph *g = r->g;
	for (int32_t j = g->succ_off[u]; j < g->succ_off[u + 1]; j++)
		if (at[g->succ[j]] < r->a0)
			return false;
	for (int32_t k = g->use_off[u]; k < g->use_off[u + 1]; k++)
		if (r->bi[g->use[k]] >= 0)
			return false;
	return true;
}

/* Prefix nodes that join the tail (E->moved): for each small buffer of
 * m live at the tail's start, its ALLOC and the prefix's operations
 * using it (its load), where each of those may move (may_move).  The
 * search leaves the small buffers out; a weight loaded for a step that
 * now runs later would hold the addresses above the units the next
 * steps' weights need, so its load runs when its step does (Conv_Case0:
 * 238 cycles).  Their number. */
static int32_t moved_nodes(rp *r, rp_emit *E, const int32_t *at)
{
	const ds_graph *g = r->g;
	int32_t nm = 0;
	for (int32_t b = 0; b < g->nbuf; b++) {
		int32_t fa = g->buf_alloc[b], ff = g->buf_free[b];
		if (g->buf_mem[b] != r->m || r->bi[b] >= 0 ||
		    g->buf_size[b] * 8 >= r->cap || at[fa] >= r->a0 ||
		    at[ff] < r->a0)
			continue;
		bool ok = true;
		for (int32_t k = g->user_off[b]; k < g->user_off[b + 1]; k++) {
			int32_t u = g->user[k];
			ok = ok && (at[u] >= r->a0 || may_move(r, at, u));
		}
		if (!ok)
			continue;
		E->moved[fa] = 1, nm++;
		for (int32_t k = g->user_off[b]; k < g->user_off[b + 1]; k++) {
			int32_t u = g->user[k];
			if (at[u] < r->a0 && !E->moved[u])
				E->moved[u] = 1, nm++;
		}
	}
	return nm;
}

/* Keys of the tail's graph nodes: steps at the search's times, the large
 * buffers' ALLOCs at their first step's start and FREEs at their last
 * step's finish (first and last in the search's order), the others as
 * late as their successors allow (a load or store snapped to the start
 * of the compute step running then: a step on the load or store pipe,
 * a COPY_OUT, often starts with a reload, and a weight's load keyed
 * there queued behind it, 328 cycles twice on Conv_Case0), FREEs of the
 * others once their predecessors finish. */
static bool graph_keys(rp *r, rp_emit *E)
{
	const ds_graph *g = r->g;
	const ds_plan *p = r->p;
	int64_t *starts = ds_arena_alloc(&r->a, (size_t)r->ns + 1, 8);
	if (!starts)
		return false;
	int32_t nst = 0; /* the compute steps' starts */
	for (int32_t si = 0; si < r->ns; si++)
		if (r->spipe[si] != r->pin && r->spipe[si] != r->pout)
			starts[nst++] = E->sstart[si];
	qsort(starts, (size_t)nst, 8, cmp64);
	for (int32_t i = r->a0; i < p->len; i++) /* 1: in the tail */
		if (p->order[i] < g->n)
			E->in[p->order[i]] = 1;
	for (int32_t v = 0; v < g->n; v++)
		if (E->moved[v])
			E->in[v] = 1;
	for (int32_t si = 0; si < r->ns; si++) {
		int32_t v = r->step[si];
		E->key[v] = E->sstart[si], E->cls[v] = 5, E->in[v] = 2;
	}
	for (int32_t x = 0; x < r->nb; x++) {
		int32_t b = r->buf[x], fa = g->buf_alloc[b], ff = g->buf_free[b];
		int64_t first = INT64_MAX, last = 0;
		for (int32_t k = r->uoff[x]; k < r->uoff[x + 1]; k++) {
			first = min64(first, E->sstart[r->ustep[k]]);
			last = max64(last, E->sfin[r->ustep[k]]);
		}
		if (E->in[fa] == 1)
			E->key[fa] = first, E->cls[fa] = 3, E->in[fa] = 2;
		if (E->in[ff] == 1)
			E->key[ff] = last, E->cls[ff] = 0, E->in[ff] = 2;
	}
	for (int32_t i = p->len - 1; i >= 0; i--) { /* the moved nodes too */
		int32_t v = p->order[i];
		if (v >= g->n || E->in[v] != 1 || g->kind[v] == DS_FREE)
			continue;
		int64_t k = INT64_MAX;
		for (int32_t j = g->succ_off[v]; j < g->succ_off[v + 1]; j++)
			if (E->in[g->succ[j]] == 2)
				k = min64(k, E->key[g->succ[j]] - g->cycles[v]);
		k = k == INT64_MAX ? r->origin : k;
		if (g->kind[v] == DS_OP &&
		    (g->pipe[v] == r->pin || g->pipe[v] == r->pout))
			k = snap(starts, nst, k);
		E->key[v] = k, E->cls[v] = 4, E->in[v] = 2;
	}
	for (int32_t i = r->a0; i < p->len; i++) {
		int32_t v = p->order[i];
		if (v >= g->n || E->in[v] != 1)
			continue;
		int64_t k = r->origin;
		for (int32_t j = g->pred_off[v]; j < g->pred_off[v + 1]; j++) {
			int32_t u = g->pred[j];
			if (E->in[u] == 2)
				k = max64(k, E->key[u] + node_cycles(g, u));
		}
		E->key[v] = k, E->cls[v] = 0, E->in[v] = 2;
	}
	return true;
}

/* ---- the order of the tail ---- */

typedef struct rp_sortkey {
	int64_t key;
	int32_t cls, tie, v;
} rp_sortkey;

static int sortkey_cmp(const void *pa, const void *pb)
{
	const rp_sortkey *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->cls != b->cls)
		return a->cls - b->cls;
	return (a->tie > b->tie) - (a->tie < b->tie);
}

/* The tail's nodes ranked by (key, class, line). */
static bool rank_tail(rp *r, rp_emit *E, const int32_t *at)
{
	const ds_graph *g = r->g;
	E->nt = 0;
	for (int32_t v = 0; v < E->total; v++)
		E->nt += E->in[v] == 2;
	rp_sortkey *k = ds_arena_alloc(&r->a, (size_t)E->nt + 1, sizeof *k);
	E->tail = ds_arena_alloc(&r->a, (size_t)E->nt + 1, sizeof *E->tail);
	E->rank = ds_arena_alloc(&r->a, (size_t)E->total, sizeof *E->rank);
	if (r->a.failed)
		return false;
	int32_t n = 0;
	for (int32_t v = 0; v < E->total; v++)
		if (E->in[v] == 2)
			k[n++] = (rp_sortkey){E->key[v], E->cls[v],
					      v < g->n ? at[v] : r->p->len + v,
					      v};
	qsort(k, (size_t)n, sizeof *k, sortkey_cmp);
	for (int32_t i = 0; i < n; i++)
		E->tail[i] = k[i].v, E->rank[k[i].v] = i;
	ds_arena_release(&r->a, k);
	return true;
}

/* The large buffer (model index) spill node or graph node v belongs to
 * as an event, -1 for none; a step's are listed by the caller. */
static int32_t event_buf(const rp *r, const rp_emit *E, int32_t v)
{
	const ds_graph *g = r->g;
	if (v >= g->n)
		return r->bi[E->sp[(v - g->n) / 2].buf];
	if (g->kind[v] == DS_OP)
		return -1;
	return r->bi[g->buf[v]];
}

typedef struct rp_pair {
	int32_t x, rank, v;
} rp_pair;

static int pair_cmp(const void *pa, const void *pb)
{
	const rp_pair *a = pa, *b = pb;
	if (a->x != b->x)
		return a->x - b->x;
	return (a->rank > b->rank) - (a->rank < b->rank);
}

/* The constraints among the tail's nodes, CSR by source into
 * *off and *dst: the graph's order constraints, and each large buffer's
 * events (ALLOC, uses, spill nodes, FREE) in the order of their ranks. */
static bool constraints(rp *r, rp_emit *E, int32_t **off, int32_t **dst)
{
	const ds_graph *g = r->g;
	int32_t np = 0, ne = 0;
	for (int32_t i = 0; i < E->nt; i++) {
		int32_t v = E->tail[i];
		if (v < g->n && g->kind[v] == DS_OP)
			np += g->use_off[v + 1] - g->use_off[v];
		else
			np++;
		if (v < g->n)
			ne += g->pred_off[v + 1] - g->pred_off[v];
	}
	rp_pair *pr = ds_arena_alloc(&r->a, (size_t)np + 1, sizeof *pr);
	int32_t *src = ds_arena_alloc(&r->a, (size_t)(ne + np) + 1, 4);
	int32_t *to = ds_arena_alloc(&r->a, (size_t)(ne + np) + 1, 4);
	*off = ds_arena_alloc(&r->a, (size_t)E->total + 1, sizeof **off);
	if (r->a.failed)
		return false;
	int32_t n = 0, m = 0;
	for (int32_t i = 0; i < E->nt; i++) {
		int32_t v = E->tail[i];
		if (v < g->n && g->kind[v] == DS_OP) {
			for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++)
				if (r->bi[g->use[k]] >= 0)
					pr[n++] = (rp_pair){r->bi[g->use[k]], i, v};
		} else if (event_buf(r, E, v) >= 0) {
			pr[n++] = (rp_pair){event_buf(r, E, v), i, v};
		}
		for (int32_t k = v < g->n ? g->pred_off[v] : 0;
		     v < g->n && k < g->pred_off[v + 1]; k++)
			if (E->in[g->pred[k]] == 2)
				src[m] = g->pred[k], to[m++] = v;
	}
	qsort(pr, (size_t)n, sizeof *pr, pair_cmp);
	for (int32_t i = 1; i < n; i++)
		if (pr[i].x == pr[i - 1].x && pr[i].v != pr[i - 1].v)
			src[m] = pr[i - 1].v, to[m++] = pr[i].v;
	*dst = ds_arena_alloc(&r->a, (size_t)m + 1, sizeof **dst);
	if (!*dst)
		return false;
	for (int32_t i = 0; i < m; i++)
		(*off)[src[i] + 1]++;
	for (int32_t v = 0; v < E->total; v++)
		(*off)[v + 1] += (*off)[v];
	int32_t *fill = ds_arena_alloc(&r->a, (size_t)E->total + 1, 4);
	if (!fill)
		return false;
	memcpy(fill, *off, (size_t)E->total * 4);
	for (int32_t i = 0; i < m; i++)
		(*dst)[fill[src[i]]++] = to[i];
	return true;
}

/* ---- memory while ordering ---- */

/* The live occupancies of each memory. */
typedef struct rp_live {
	int32_t n[DS_NMEM];
	int64_t *lo[DS_NMEM], *hi[DS_NMEM];
	int32_t *b[DS_NMEM];
} rp_live;

static bool live_init(rp *r, rp_live *L)
{
	for (int m = 0; m < DS_NMEM; m++) {
		size_t nb = (size_t)r->g->nbuf + 1;
		L->n[m] = 0;
		L->lo[m] = ds_arena_alloc(&r->a, nb, 8);
		L->hi[m] = ds_arena_alloc(&r->a, nb, 8);
		L->b[m] = ds_arena_alloc(&r->a, nb, 4);
	}
	return !r->a.failed;
}

static bool free_at(const rp_live *L, int m, int64_t o, int64_t size,
		    int64_t cap)
{
	if (o < 0 || o + size > cap)
		return false;
	for (int32_t i = 0; i < L->n[m]; i++)
		if (o < L->hi[m][i] && L->lo[m][i] < o + size)
			return false;
	return true;
}

/* The offset for size bytes of memory m in [lo, cap): pref when free,
 * else the lowest free one at lo or at the end of a live occupancy; -1
 * when none. */
static int64_t fit(const rp_live *L, int m, int64_t size, int64_t lo,
		   int64_t cap, int64_t pref)
{
	if (pref >= lo && free_at(L, m, pref, size, cap))
		return pref;
	int64_t best = free_at(L, m, lo, size, cap) ? lo : -1;
	for (int32_t i = 0; i < L->n[m]; i++) {
		int64_t o = L->hi[m][i];
		if (o >= lo && (best < 0 || o < best) &&
		    free_at(L, m, o, size, cap))
			best = o;
	}
	return best;
}

static void live_add(rp_live *L, int m, int32_t b, int64_t o, int64_t size)
{
	int32_t i = L->n[m]++;
	L->lo[m][i] = o, L->hi[m][i] = o + size, L->b[m][i] = b;
}

static void live_drop(rp_live *L, int m, int32_t b)
{
	for (int32_t i = 0; i < L->n[m]; i++)
		if (L->b[m][i] == b) {
			int32_t j = --L->n[m];
			L->lo[m][i] = L->lo[m][j], L->hi[m][i] = L->hi[m][j];
			L->b[m][i] = L->b[m][j];
			return;
		}
}

/* Whether node v can take its addresses now (placing an ALLOC of the
 * tail that the search did not place); applies it to L when it can.
 * *frees: it ends an occupancy. */
static bool take(rp *r, rp_emit *E, rp_live *L, int32_t v, bool tail,
		 bool *frees)
{
	const ds_graph *g = r->g;
	int32_t b;
	int64_t o;
	bool starts;
	*frees = false;
	if (!rp_occupancy(g, E->sp, E->off, v, &b, &o, &starts))
		return true;
	int m = g->buf_mem[b];
	int64_t size = g->buf_size[b], cap = g->caps.cap[m];
	if (!starts) {
		live_drop(L, m, b);
		*frees = true;
		return true;
	}
	bool placed = v >= g->n || !tail ||
		      (r->bi[b] >= 0 && g->buf_alloc[b] == v);
	if (!placed) { /* small ones of m above the units, else below */
		int64_t lo = m == r->m ? r->base + r->units * r->q : 0;
		o = fit(L, m, size, lo, cap, E->off[b]);
		if (o < 0 && m == r->m)
			o = fit(L, m, size, 0, r->base, E->off[b]);
		if (o < 0)
			return false;
		E->off[b] = o;
	} else if (tail && !free_at(L, m, o, size, cap)) {
		return false;
	}
	live_add(L, m, b, o, size);
	return true;
}

/* ---- the order and the plan ---- */

/* The prefix's occupancies applied to L, its lines but the moved ones
 * copied to order; their number. */
static int32_t prefix(rp *r, rp_emit *E, rp_live *L, int32_t *order)
{
	int32_t n = 0;
	for (int32_t i = 0; i < r->a0; i++) {
		bool fr;
		int32_t v = r->p->order[i];
		if (v < r->g->n && E->moved[v])
			continue;
		order[n++] = v;
		take(r, E, L, v, false, &fr);
	}
	return n;
}

/* The tail's nodes after the prefix's pre lines in order[], by Kahn's
 * rule, the least rank first, a node that cannot take its addresses
 * waiting until a node ends an occupancy; the nodes placed. */
static int32_t order_tail(rp *r, rp_emit *E, rp_live *L, const int32_t *off,
			  const int32_t *dst, int32_t *order, int32_t pre,
			  ds_err *e)
{
	int32_t *deg = ds_arena_alloc(&r->a, (size_t)E->total, 4);
	int32_t *wait = ds_arena_alloc(&r->a, (size_t)E->nt + 1, 4);
	ds_heapq q;
	int rc = ds_heapq_init(&q, r->g->heap, E->nt + 1);
	if (!deg || !wait || rc != DS_OK) {
		ds_heapq_free(&q);
		return ds_fail(e, DS_ENOMEM, "out of memory"), -1;
	}
	for (int32_t i = 0; i < E->nt; i++)
		for (int32_t k = off[E->tail[i]]; k < off[E->tail[i] + 1]; k++)
			deg[dst[k]]++;
	for (int32_t i = 0; i < E->nt; i++)
		if (deg[E->tail[i]] == 0)
			ds_heapq_push(&q, i, E->tail[i]);
	int32_t len = pre, nw = 0;
	while (q.n > 0) {
		int32_t v = ds_heapq_pop(&q);
		bool fr;
		if (!take(r, E, L, v, true, &fr)) {
			wait[nw++] = v;
			continue;
		}
		order[len++] = v;
		for (; fr && nw > 0; nw--)
			ds_heapq_push(&q, E->rank[wait[nw - 1]], wait[nw - 1]);
		for (int32_t k = off[v]; k < off[v + 1]; k++)
			if (--deg[dst[k]] == 0)
				ds_heapq_push(&q, E->rank[dst[k]], dst[k]);
	}
	ds_heapq_free(&q);
	return len - pre;
}

static int rp_plan(rp *r, rp_emit *E, const int32_t *at, ds_plan *out,
		   bool *built, ds_err *e)
{
	const ds_graph *g = r->g;
	const ds_heap *h = g->heap;
	int32_t *off, *dst;
	rp_live L;
	*built = false;
	memset(out, 0, sizeof *out);
	if (!rank_tail(r, E, at) || !constraints(r, E, &off, &dst) ||
	    !live_init(r, &L))
		return ds_fail(e, DS_ENOMEM, "out of memory");
	out->len = r->a0 - E->nmoved + E->nt;
	out->order = ds_alloc(h, (size_t)out->len, sizeof *out->order);
	out->offset = ds_alloc(h, (size_t)g->nbuf + 1, sizeof *out->offset);
	out->spill = ds_alloc(h, (size_t)E->nl + 1, sizeof *out->spill);
	if (!out->order || !out->offset || !out->spill) {
		ds_plan_free(h, out);
		return ds_fail(e, DS_ENOMEM, "out of memory");
	}
	int32_t pre = prefix(r, E, &L, out->order);
	int32_t placed = order_tail(r, E, &L, off, dst, out->order, pre, e);
	if (placed < 0 || placed != E->nt) {
		ds_plan_free(h, out);
		return placed < 0 ? DS_ENOMEM : DS_OK;
	}
	memcpy(out->offset, E->off, (size_t)g->nbuf * sizeof *out->offset);
	memcpy(out->spill, E->sp, (size_t)E->nl * sizeof *out->spill);
	out->nspill = E->nl;
	int rc = ds_plan_sort_spills(g, out, e);
	if (rc != DS_OK)
		ds_plan_free(h, out);
	*built = rc == DS_OK;
	return rc;
}

/* The search's best end state's plan into *out (*changed). */
int rp_emit_plan(rp *r, int32_t best, const int32_t *at, ds_plan *out,
		 bool *changed, ds_err *e)
{
	rp_emit E;
	int32_t *path;
	memset(&E, 0, sizeof E);
	int32_t np = path_of(r, best, &path);
	if (np < 0)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	if (!events(r, &E, at, path, np))
		return r->a.failed ? ds_fail(e, DS_ENOMEM, "out of memory")
				   : DS_OK;
	E.off = ds_arena_alloc(&r->a, (size_t)r->g->nbuf + 1, sizeof *E.off);
	E.moved = ds_arena_alloc(&r->a, (size_t)r->g->n + 1, 1);
	if (!E.off || !E.moved)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	E.nmoved = moved_nodes(r, &E, at);
	if (!graph_keys(r, &E))
		return ds_fail(e, DS_ENOMEM, "out of memory");
	memcpy(E.off, r->p->offset, (size_t)r->g->nbuf * sizeof *E.off);
	for (int32_t x = 0; x < r->nb; x++)
		if (E.apos[x] >= 0)
			E.off[r->buf[x]] = r->base + E.apos[x] * r->q;
	return rp_plan(r, &E, at, out, changed, e);
}
