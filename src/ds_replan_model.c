/* ds_replan_model.c: the tail and the model of ds_replan.c's search
 * (rp_; the overview is ds_replan.c's header).  The unit and the large
 * buffers, the tail (the longest end of the plan that qualifies), the
 * steps with their buffers, uses and predecessors, and the state at the
 * tail's start: the pipes' clocks, the residents at their units, the
 * buffers in DDR and the traffic the prefix has spent.
 *
 * Requires: a run's state (rp) with its graph, plan, finish times,
 * memory and budget.  Guarantees: false where the tail or its model is
 * beyond the limits of ds_replan_int.h (r->a.failed set when memory
 * failed instead).  Cost: O(N L) for the tail (L buffers live at once),
 * O((T + P) S / 64) for the predecessors of the steps (T tail nodes, P
 * their order constraints, S steps).  Memory: the run's arena, the
 * predecessors' sets O(T S / 64) words at most RP_REACH bytes. */
#include "ds_replan_int.h"

#include <string.h>

/* ---- the tail ---- */

static int64_t gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;
		a = b, b = t;
	}
	return a;
}

/* Buffer b is one of the units' (large) in memory m with unit q. */
static bool is_big(const rp *r, int32_t b)
{
	const ds_graph *g = r->g;
	return g->buf_mem[b] == r->m && g->buf_size[b] % r->q == 0 &&
	       g->buf_size[b] * 8 >= r->cap;
}

/* The unit: the gcd of the sizes of m's large spilled buffers; 0 when
 * none is spilled. */
int64_t rp_unit(const rp *r)
{
	int64_t q = 0;
	for (int32_t k = 0; k < r->p->nspill; k++) {
		int32_t b = r->p->spill[k].buf;
		if (r->g->buf_mem[b] == r->m && r->g->buf_size[b] * 8 >= r->cap)
			q = gcd64(q, r->g->buf_size[b]);
	}
	return q;
}

/* Node v of a plan with spill lines sp and offsets off (a graph node
 * or a spill node), when it starts or ends an occupancy: its buffer *b,
 * whether it starts one, and where (*o; an ending node's is the
 * buffer's first offset, unused). */
bool rp_occupancy(const ds_graph *g, const ds_spill *sp, const int64_t *off,
		  int32_t v, int32_t *b, int64_t *o, bool *starts)
{
	if (v >= g->n) {
		int32_t k = (v - g->n) / 2;
		*b = sp[k].buf, *starts = (v - g->n) % 2 == 1;
		*o = *starts ? sp[k].offset : off[*b];
		return true;
	}
	if (g->kind[v] == DS_OP)
		return false;
	*b = g->buf[v], *starts = g->kind[v] == DS_ALLOC, *o = off[*b];
	return true;
}

/* Per line i of the plan, m's residents before it: their large units
 * (big[i]), whether the large ones sit on the boundaries of units that
 * start at base[i] (al[i]; base[i] < q, the large ones' offset modulo q,
 * 0 when there is none), the end of the highest large one (hi[i]) and
 * the offset of the lowest small one not wholly below base[i] (lo[i]).
 * A base: a plan whose first bytes hold a small buffer has its large
 * ones shifted by it (Conv_Case0 at L1=4416: a 1-byte buffer at 0, the
 * late layers' at 1 + k 768), and the tail's search plans them there. */
typedef struct rp_lines {
	int32_t *big;
	uint8_t *al;
	int64_t *hi, *lo, *base;
} rp_lines;

/* Line i's figures into L from the nl residents live[] at offsets
 * cur[]. */
static void line_figures(const rp *r, rp_lines *L, int32_t i,
			 const int32_t *live, int32_t nl, const int64_t *cur)
{
	const ds_graph *g = r->g;
	int64_t units = 0, hi = 0, lo = r->cap, base = -1;
	bool al = true;
	for (int32_t j = 0; j < nl; j++) {
		int32_t b = live[j];
		if (!is_big(r, b))
			continue;
		units += g->buf_size[b] / r->q;
		hi = max64(hi, cur[b] + g->buf_size[b]);
		if (base < 0)
			base = cur[b] % r->q;
		al = al && cur[b] % r->q == base;
	}
	base = base < 0 ? 0 : base;
	for (int32_t j = 0; j < nl; j++) {
		int32_t b = live[j];
		if (!is_big(r, b) && cur[b] + g->buf_size[b] > base)
			lo = min64(lo, cur[b]);
	}
	L->big[i] = (int32_t)min64(units, INT32_MAX);
	L->al[i] = al, L->hi[i] = hi, L->lo[i] = lo, L->base[i] = base;
}

static bool walk_lines(rp *r, rp_lines *L)
{
	const ds_graph *g = r->g;
	const ds_plan *p = r->p;
	int64_t *cur = ds_arena_alloc(&r->a, (size_t)g->nbuf, sizeof *cur);
	int32_t *live = ds_arena_alloc(&r->a, (size_t)g->nbuf, sizeof *live);
	L->big = ds_arena_alloc(&r->a, (size_t)p->len + 1, sizeof *L->big);
	L->al = ds_arena_alloc(&r->a, (size_t)p->len + 1, sizeof *L->al);
	L->hi = ds_arena_alloc(&r->a, (size_t)p->len + 1, sizeof *L->hi);
	L->lo = ds_arena_alloc(&r->a, (size_t)p->len + 1, sizeof *L->lo);
	L->base = ds_arena_alloc(&r->a, (size_t)p->len + 1, sizeof *L->base);
	if (r->a.failed)
		return false;
	int32_t nl = 0;
	for (int32_t i = 0; i <= p->len; i++) {
		line_figures(r, L, i, live, nl, cur);
		int32_t b;
		int64_t o;
		bool st;
		if (i == p->len || !rp_occupancy(g, p->spill, p->offset,
						 p->order[i], &b, &o, &st) ||
		    g->buf_mem[b] != r->m)
			continue;
		if (st) {
			cur[b] = o, live[nl++] = b;
			continue;
		}
		for (int32_t j = 0; j < nl; j++)
			if (live[j] == b) {
				live[j] = live[--nl];
				break;
			}
	}
	return true;
}

/* The small buffers of m operation v needs at once, and whether it uses
 * a large one. */
static int64_t small_need(const rp *r, int32_t v, bool *uses_big)
{
	const ds_graph *g = r->g;
	int64_t s = 0;
	*uses_big = false;
	for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
		int32_t b = g->use[k];
		if (is_big(r, b))
			*uses_big = true;
		else if (g->buf_mem[b] == r->m)
			s += g->buf_size[b];
	}
	return s;
}

/* The tail: r->a0, r->units and r->base; false when no line
 * qualifies. */
static bool choose_tail(rp *r, const rp_lines *L)
{
	const ds_graph *g = r->g;
	const ds_plan *p = r->p;
	int64_t need = 0;
	int32_t bigmax = 0, steps = 0, best = -1, best_units = 0;
	for (int32_t i = p->len - 1; i >= 0; i--) {
		int32_t v = p->order[i];
		if (v >= g->n && !is_big(r, p->spill[(v - g->n) / 2].buf))
			break;
		bool big = false;
		if (v < g->n && g->kind[v] == DS_OP)
			need = max64(need, small_need(r, v, &big));
		if (big && ++steps > RP_STEPS)
			break;
		int64_t units = (r->cap - need) / r->q;
		if (units > RP_UNITS)
			units = RP_UNITS;
		bigmax = bigmax > L->big[i] ? bigmax : L->big[i];
		if (units < 1 || bigmax > units)
			break;
		int64_t end = L->base[i] + units * r->q;
		if (v < g->n && g->kind[v] != DS_FREE && L->al[i] &&
		    L->hi[i] <= end && L->lo[i] >= end && end <= r->cap)
			best = i, best_units = (int32_t)units;
	}
	r->a0 = best, r->units = best_units;
	r->base = best >= 0 ? L->base[best] : 0;
	return best >= 0;
}

/* ---- the model ---- */

/* Position of every node of the plan; -1 for none. */
int32_t *rp_positions(rp *r)
{
	const ds_plan *p = r->p;
	int32_t total = r->g->n + 2 * p->nspill;
	int32_t *at = ds_arena_alloc(&r->a, (size_t)total, sizeof *at);
	if (!at)
		return NULL;
	memset(at, 0xff, (size_t)total * sizeof *at);
	for (int32_t i = 0; i < p->len; i++)
		at[p->order[i]] = i;
	return at;
}

/* Whether graph edge u -> v exists. */
static bool has_edge(const ds_graph *g, int32_t u, int32_t v)
{
	for (int32_t k = g->epred_off[v]; k < g->epred_off[v + 1]; k++)
		if (g->epred[k] == u)
			return true;
	return false;
}

/* The steps (the tail's operations using a large buffer) and the
 * model's buffers, in the order of their first use; *nuse: their uses.
 * False when the tail has more buffers than a state holds or one larger
 * than the units. */
static bool collect_steps(rp *r, int32_t *nuse)
{
	const ds_graph *g = r->g;
	const ds_plan *p = r->p;
	int32_t tl = p->len - r->a0;
	r->step = ds_arena_alloc(&r->a, (size_t)tl, sizeof *r->step);
	r->bi = ds_arena_alloc(&r->a, (size_t)g->nbuf, sizeof *r->bi);
	r->buf = ds_arena_alloc(&r->a, RP_BUFS, sizeof *r->buf);
	r->w = ds_arena_alloc(&r->a, RP_BUFS, sizeof *r->w);
	if (r->a.failed)
		return false;
	memset(r->bi, 0xff, (size_t)g->nbuf * sizeof *r->bi);
	*nuse = 0;
	for (int32_t i = r->a0; i < p->len; i++) {
		int32_t v = p->order[i];
		bool big = false;
		if (v >= g->n || g->kind[v] != DS_OP)
			continue;
		small_need(r, v, &big);
		if (!big)
			continue;
		r->step[r->ns++] = v;
		for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
			int32_t b = g->use[k];
			if (!is_big(r, b))
				continue;
			++*nuse;
			if (r->bi[b] >= 0)
				continue;
			if (r->nb == RP_BUFS || g->buf_size[b] / r->q > r->units)
				return false;
			r->bi[b] = r->nb, r->buf[r->nb] = b;
			r->w[r->nb++] = (int8_t)(g->buf_size[b] / r->q);
		}
	}
	return true;
}

/* Each step's buffers (soff/sbuf, each once) and each buffer's steps
 * (uoff/ustep, in order). */
static bool use_lists(rp *r, int32_t nuse)
{
	const ds_graph *g = r->g;
	r->spipe = ds_arena_alloc(&r->a, (size_t)r->ns + 1, sizeof *r->spipe);
	r->scyc = ds_arena_alloc(&r->a, (size_t)r->ns + 1, sizeof *r->scyc);
	r->soff = ds_arena_alloc(&r->a, (size_t)r->ns + 1, sizeof *r->soff);
	r->sbuf = ds_arena_alloc(&r->a, (size_t)nuse + 1, sizeof *r->sbuf);
	r->sdep = ds_arena_alloc(&r->a, (size_t)nuse + 1, 1);
	r->salloc = ds_arena_alloc(&r->a, (size_t)nuse + 1, 1);
	r->uoff = ds_arena_alloc(&r->a, (size_t)r->nb + 1, sizeof *r->uoff);
	r->ustep = ds_arena_alloc(&r->a, (size_t)nuse + 1, sizeof *r->ustep);
	int32_t *fill = ds_arena_alloc(&r->a, (size_t)r->nb + 1, sizeof *fill);
	if (r->a.failed)
		return false;
	int32_t n = 0;
	for (int32_t si = 0; si < r->ns; si++) {
		int32_t v = r->step[si];
		r->spipe[si] = g->pipe[v], r->scyc[si] = g->cycles[v];
		r->soff[si] = n;
		for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
			int32_t x = r->bi[g->use[k]], j = r->soff[si];
			if (x < 0)
				continue;
			while (j < n && r->sbuf[j] != x)
				j++;
			if (j == n)
				r->sbuf[n++] = x, r->uoff[x + 1]++;
		}
	}
	r->soff[r->ns] = n;
	for (int32_t x = 0; x < r->nb; x++)
		r->uoff[x + 1] += r->uoff[x];
	memcpy(fill, r->uoff, (size_t)r->nb * sizeof *fill);
	for (int32_t si = 0; si < r->ns; si++)
		for (int32_t k = r->soff[si]; k < r->soff[si + 1]; k++)
			r->ustep[fill[r->sbuf[k]]++] = si;
	return true;
}

/* The first step at or after si using x, -1 when none. */
static int32_t next_use(const rp *r, int32_t x, int32_t si)
{
	for (int32_t k = r->uoff[x]; k < r->uoff[x + 1]; k++)
		if (r->ustep[k] >= si)
			return r->ustep[k];
	return -1;
}

/* Whether step si allocates buffer x (after use_flags). */
static bool allocates(const rp *r, int32_t si, int32_t x)
{
	int32_t k = rp_use_at(r, si, x);
	return k >= 0 && r->salloc[k];
}

/* Per use: whether the step allocates the buffer (its first use, its
 * ALLOC in the tail) and whether it writes for the next use (an edge to
 * that step, or the allocation).  False when a step allocates more than
 * a placement tries. */
static bool use_flags(rp *r, const int32_t *at)
{
	const ds_graph *g = r->g;
	for (int32_t si = 0; si < r->ns; si++) {
		int32_t na = 0;
		for (int32_t k = r->soff[si]; k < r->soff[si + 1]; k++) {
			int32_t x = r->sbuf[k], b = r->buf[x];
			bool first = r->ustep[r->uoff[x]] == si;
			r->salloc[k] = first && at[g->buf_alloc[b]] >= r->a0;
			na += r->salloc[k];
			int32_t nx = next_use(r, x, si + 1);
			r->sdep[k] = r->salloc[k] ||
				     (nx >= 0 &&
				      has_edge(g, r->step[si], r->step[nx]));
		}
		if (na > RP_ALLOCS)
			return false;
	}
	return true;
}

/* The steps each step follows (r->spred): those with a path to it
 * through the tail's graph nodes, and the step that allocates a buffer
 * it uses; false when the tail's sets of steps would take more than
 * RP_REACH bytes. */
static bool step_preds(rp *r, const int32_t *at)
{
	const ds_graph *g = r->g;
	const ds_plan *p = r->p;
	int32_t nw = r->nw = (r->ns + 63) / 64, tl = p->len - r->a0;
	if ((int64_t)tl * nw * 8 > RP_REACH)
		return false;
	r->spred = ds_arena_alloc(&r->a, (size_t)r->ns * (size_t)nw, 8);
	uint64_t *reach = ds_arena_alloc(&r->a, (size_t)tl * (size_t)nw, 8);
	int32_t *sidx = ds_arena_alloc(&r->a, (size_t)g->n, sizeof *sidx);
	if (r->a.failed)
		return false;
	memset(sidx, 0xff, (size_t)g->n * sizeof *sidx);
	for (int32_t si = 0; si < r->ns; si++)
		sidx[r->step[si]] = si;
	for (int32_t i = r->a0; i < p->len; i++) {
		int32_t v = p->order[i];
		if (v >= g->n)
			continue;
		uint64_t *rv = reach + (size_t)(i - r->a0) * (size_t)nw;
		for (int32_t k = g->pred_off[v]; k < g->pred_off[v + 1]; k++) {
			int32_t u = g->pred[k];
			if (at[u] < r->a0)
				continue;
			const uint64_t *ru = reach + (size_t)(at[u] - r->a0) * (size_t)nw;
			for (int32_t w = 0; w < nw; w++)
				rv[w] |= ru[w];
			if (sidx[u] >= 0)
				rv[sidx[u] >> 6] |= 1ull << (sidx[u] & 63);
		}
		if (sidx[v] >= 0)
			memcpy(r->spred + (size_t)sidx[v] * (size_t)nw, rv,
			       (size_t)nw * 8);
	}
	for (int32_t si = 0; si < r->ns; si++)
		for (int32_t k = r->soff[si]; k < r->soff[si + 1]; k++) {
			int32_t x = r->sbuf[k], sa = r->ustep[r->uoff[x]];
			if (sa != si && allocates(r, sa, x))
				r->spred[(size_t)si * (size_t)nw + (size_t)(sa >> 6)] |=
					1ull << (sa & 63);
		}
	ds_arena_release(&r->a, reach);
	return true;
}

/* The steps, the model's buffers and their uses; false when the tail is
 * beyond the model's limits (or memory fails: r->a.failed). */
bool rp_build_steps(rp *r, const int32_t *at)
{
	int32_t nuse;
	return collect_steps(r, &nuse) && use_lists(r, nuse) &&
	       use_flags(r, at) && step_preds(r, at);
}

/* ---- the origin ---- */

/* The clock node v runs on: its pipe, the spill pipes for spill nodes,
 * -1 for ALLOC and FREE. */
static int clock_of(const rp *r, int32_t v)
{
	if (v >= r->g->n)
		return (v - r->g->n) % 2 ? r->pin : r->pout;
	return r->g->pipe[v];
}

/* Spill lines whose SPILL_OUT stands before the tail (the first ones,
 * the lines being sorted). */
int32_t rp_prefix_lines(const rp *r, const int32_t *at)
{
	int32_t k = 0;
	while (k < r->p->nspill && at[r->g->n + 2 * k] < r->a0)
		k++;
	return k;
}

/* The clocks, the traffic left and the residents at the tail's start. */
static bool origin_clocks(rp *r, const int32_t *at, void *s0)
{
	const ds_graph *g = r->g;
	int64_t *c = clk(r, s0);
	for (int32_t i = 0; i < r->a0; i++) {
		int32_t v = r->p->order[i], pc = clock_of(r, v);
		if (pc >= 0)
			c[pc] = max64(c[pc], r->fin[v]);
	}
	int64_t spent = 0;
	int32_t K = rp_prefix_lines(r, at);
	for (int32_t k = 0; k < K; k++)
		spent += ds_spill_traffic(g, r->p->spill[k].buf);
	r->budget = r->budget > spent ? r->budget - spent : 0;
	for (int32_t si = 0; si < r->ns; si++) {
		r->active[r->spipe[si]] = 1;
		rem(r, s0)[r->spipe[si]] += r->scyc[si];
	}
	r->active[r->pin] = r->active[r->pout] = 1;
	int32_t v = r->p->order[r->a0];
	r->origin = r->fin[v] - (g->kind[v] == DS_OP ? g->cycles[v] : 0);
	return true;
}

/* When b's occupancy that started at node st was last used before the
 * tail. */
static int64_t last_used(const rp *r, const int32_t *at, int32_t b,
			 int32_t st)
{
	const ds_graph *g = r->g;
	int64_t t = r->fin[st];
	for (int32_t k = g->user_off[b]; k < g->user_off[b + 1]; k++) {
		int32_t u = g->user[k];
		if (at[u] >= 0 && at[u] < r->a0)
			t = max64(t, r->fin[u]);
	}
	return t;
}

/* The units, residents and spilled buffers at the tail's start. */
static bool origin_memory(rp *r, const int32_t *at, void *s0)
{
	const ds_graph *g = r->g;
	int64_t *off = ds_arena_alloc(&r->a, (size_t)g->nbuf, sizeof *off);
	int32_t *st = ds_arena_alloc(&r->a, (size_t)g->nbuf, sizeof *st);
	if (!off || !st)
		return false;
	memset(st, 0xff, (size_t)g->nbuf * sizeof *st);
	int64_t *fr = ufree(r, s0);
	for (int32_t i = 0; i < r->a0; i++) {
		int32_t v = r->p->order[i], b;
		int64_t o;
		bool starts;
		if (!rp_occupancy(g, r->p->spill, r->p->offset, v, &b, &o,
				  &starts) ||
		    g->buf_mem[b] != r->m)
			continue;
		if (starts) {
			off[b] = o, st[b] = v;
			continue;
		}
		for (int32_t u = 0; u < r->units; u++)
			if (off[b] < r->base + (u + 1) * r->q &&
			    r->base + u * r->q < off[b] + g->buf_size[b])
				fr[u] = max64(fr[u], r->fin[v]);
		st[b] = -1;
	}
	for (int32_t b = 0; b < g->nbuf; b++) {
		if (st[b] < 0 || !is_big(r, b))
			continue;
		int32_t x = r->bi[b], p0 = (int32_t)((off[b] - r->base) / r->q);
		int64_t t = last_used(r, at, b, st[b]);
		if (x < 0) { /* no use left: its units free once it is FREE */
			for (int32_t u = p0; u < p0 + g->buf_size[b] / r->q; u++)
				fr[u] = max64(fr[u], t);
			continue;
		}
		stat(r, s0)[x] = ST_RES, used(r, s0)[x] = 1;
		tim(r, s0)[3 * x] = tim(r, s0)[3 * x + 1] = t;
		take_units(r, s0, x, p0);
	}
	int32_t K = rp_prefix_lines(r, at);
	for (int32_t k = 0; k < K; k++) {
		int32_t b = r->p->spill[k].buf, x = r->bi[b];
		if (at[g->n + 2 * k + 1] < r->a0)
			continue;
		if (x < 0)
			return false; /* a reload no step needs */
		stat(r, s0)[x] = ST_DDR;
		tim(r, s0)[3 * x + 2] = r->fin[g->n + 2 * k];
	}
	return true;
}

/* The tail's first line and its units (r->a0, r->units): false when no
 * line qualifies, or memory fails (r->a.failed). */
bool rp_find_tail(rp *r)
{
	rp_lines L;
	return walk_lines(r, &L) && choose_tail(r, &L);
}

/* The state at the tail's start into s0. */
bool rp_origin(rp *r, const int32_t *at, void *s0)
{
	memset(pos(r, s0), 0xff, (size_t)r->nb);
	origin_clocks(r, at, s0);
	return origin_memory(r, at, s0);
}
