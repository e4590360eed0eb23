/* ds_cpe.c: stage 3, critical path enhancement.
 *
 * Requires: a graph and a full plan for it that ds_replay accepts (order
 * with spill nodes, offsets, spills), e.g. stage 2's.
 * Guarantees: a plan that ds_replay accepts, with the input's spills or a
 * subset of them (so never more extra DDR traffic or spills), a peak_vstay
 * at most peak_budget_pct percent above the input's (and at most peak_cap
 * when that is set, or the input's), and a makespan no longer than the
 * input's: the input itself when nothing better is found.
 *
 * How: rounds over a "backbone" plan (the input, then the best plan found
 * so far), each a few passes of list scheduling.
 *  - The backbone gives a constraint graph: graph edges, spill edges (its
 *    spills stay, each between the same uses of its buffer) and residency
 *    (a use stays inside its buffer's occupancy).
 *  - Non-delay list scheduling simulates the machine: each idle pipe issues
 *    its best ready operation, so the order built is one whose replay
 *    (SPEC.md) runs at the simulated times.  ALLOCs cost nothing and are
 *    issued lazily, right before their first user, FREEs as soon as they
 *    can; a load thus moves early exactly as far as memory lets it, and
 *    double buffering appears where memory allows.
 *  - Memory, two ways.  "Fixed": the backbone's offsets are kept and its
 *    address-reuse edges join the constraints, so any order the scheduler
 *    builds is valid.  "Online": offsets are chosen as the simulation
 *    issues each ALLOC and SPILL_IN: the backbone's offset once no earlier
 *    backbone occupancy of those addresses is still to start, or else any
 *    window vacated in time that no backbone occupancy still to start
 *    needs before this one ends (see bb_window_ok, reserve), so a load
 *    waits only for memory really in use.  Both rules keep the backbone's
 *    own layout usable for whatever has not started yet.
 *  - Online, a spill is dropped when its buffer can stay where it is: no
 *    backbone occupancy still to start before its FREE needs those
 *    addresses (see can_elide).  Its buffer's first window is chosen with
 *    that in mind where possible.  The plan then has fewer spill nodes,
 *    renumbered; a backbone with fewer spills rebuilds the working state.
 *  - peak_vstay is guarded against the backbone's vstay profile (see
 *    guard_commit).  Together with the memory rules this keeps the
 *    backbone's next operation always issuable: no deadlock (see
 *    frontier_op).  The limit is the input's peak for the first rounds;
 *    only when the guard refused something there and the peak budget is
 *    higher do the rounds run again with the limit raised to the budget,
 *    from the best plan so far, so a budget never makes the plan longer
 *    (FlashAttention_Case0's DLR plan: 35,295 at budget 0, 32,766 at 5;
 *    a single phase at the budget's limit made Conv_Case0's longer).
 *  - Priorities: first the backbone's order, then the times at which the
 *    busiest pipe needs each node, then forward-backward improvement (a
 *    pass over the reversed graph gives each node a resource-aware latest
 *    start).
 *  - Fixed-mode orders are also re-placed afterwards (offsets whose
 *    previous occupants ended earliest), which takes reuse edges off the
 *    critical path for the next round.
 *  - A third mode, "gang" (ds_cpe_list.c): online, but where an
 *    operation could run as soon as its operands in the memories that
 *    do not stay are placed, those occupancies are placed together past
 *    the backbone's reservations, so that products whose inputs are
 *    ready overtake earlier ones whose inputs are still being computed.
 *    It runs in a call's first round, then in the next only after a
 *    round where it gave the best plan, on graphs of up to
 *    CPE_GANG_MAX_NODES.  Measured against the pipeline without it
 *    (2026-12-07, `dansched gen`, four kinds, 800 to 5,000 nodes, 60
 *    graphs, 120 runs at the default capacities and L1=2048,UB=768): 30
 *    final plans shorter (matmul 3,000 seed 2 73,187 -> 70,074 cycles,
 *    random 1,000 seed 1 20,036 -> 19,250, random 800 seed 6 at
 *    L1=2048,UB=768 20,173 -> 19,450) and 2 longer (0.14 and 0.34 %);
 *    also random 1,500 seed 6 27,731 -> 28,346 (its plan is its parts':
 *    on the largest, the spill-separated uses pulled together,
 *    ds_window.c, took CPE's 23,621 cycles to 23,328, and find nothing
 *    on the gang mode's 23,422) and Matmul_Case0 85,347 -> 85,415 at 256
 *    bytes less traffic, the other five bundled graphs the same;
 *    2.4 % more instructions on the six (callgrind, 42.38 -> 43.38 G:
 *    the two over CPE_GANG_MAX_NODES do not run it).
 * Every candidate is checked with ds_replay; the best valid one is kept.
 *
 * Cost, per pass: O((N + E) log N) for the constraint graph and the list
 * scheduling, where each decision tries at most CPE_MAX_TRIES candidates;
 * per online placement attempt O(R D + S^2) (R <= CPE_MAX_RESERVED
 * backbone occupancies still to start, D their disjoint address
 * intervals, S the address segments of the memory: a few tens here),
 * O(R) per spill considered for dropping; and a replay per candidate
 * plan.  CPE_FB_PASSES passes in each of 2 modes per round (3 when the
 * gang mode runs); at most
 * CPE_DEFAULT_ROUNDS rounds, fewer once a round gains little, and as many
 * again with the relaxed peak limit, within CPE_RELAX_WORK nodes (rounds
 * times N; beyond, one light round: one pass of one mode); effort N
 * multiplies both budgets.
 * Memory O(N + E). */
#include "ds_cpe.h"

#include <string.h>

/* ---- the working state ---- */

/* One freeing idiom: the heaps, then the arena with every array. */
static void cpe_free(cpe *c)
{
	for (int32_t p = 0; p < c->npipes; p++) {
		if (c->waiting)
			ds_heapq_free(&c->waiting[p]);
		if (c->ready)
			ds_heapq_free(&c->ready[p]);
	}
	if (c->frees.h)
		ds_heapq_free(&c->frees);
	ds_arena_free(&c->a);
}

/* Every working array from the pass's arena, failure checked once by the
 * caller (c->a.failed).  Sizes: T nodes, nb buffers, ns spills, no
 * occupancies, np pipes. */
static void cpe_arrays(cpe *c, size_t t, size_t nb, size_t ns, size_t np)
{
	ds_arena *a = &c->a;
	const size_t no = nb + ns, i32 = sizeof(int32_t), i64 = sizeof(int64_t);
	const size_t tree = 2 * (size_t)c->guard.size;
	/* per node */
	c->kind = ds_arena_alloc(a, t, 1);
	c->pipe = ds_arena_alloc(a, t, i32);
	c->cyc = ds_arena_alloc(a, t, i64);
	c->nbuf = ds_arena_alloc(a, t, i32);
	c->s_off = ds_arena_alloc(a, t + 1, i32);
	c->p_off = ds_arena_alloc(a, t + 1, i32);
	c->has_user = ds_arena_alloc(a, t, 1);
	c->pos = ds_arena_alloc(a, t, i32);
	c->rank = ds_arena_alloc(a, t, i32);
	c->key = ds_arena_alloc(a, t, i64);
	c->occ_of = ds_arena_alloc(a, t, i32);
	c->prof = ds_arena_alloc(a, t + 1, i64);
	/* the backbone's occupancies */
	c->bo_lo = ds_arena_alloc(a, no, i64);
	c->bo_hi = ds_arena_alloc(a, no, i64);
	c->bo_s = ds_arena_alloc(a, no, i32);
	c->bo_e = ds_arena_alloc(a, no, i32);
	c->mo_list = ds_arena_alloc(a, no + DS_NMEM, i32);
	c->mo_idx = ds_arena_alloc(a, no, i32);
	c->bo_started = ds_arena_alloc(a, no, 1);
	c->skip = ds_arena_alloc(a, no + DS_NMEM, i32);
	c->bo_fen = ds_arena_alloc(a, no + DS_NMEM + 1, i32);
	/* free runs: one more than the occupancies that part them */
	c->resv = ds_arena_alloc(a, 2 * no + 2, i64);
	c->fr = ds_arena_alloc(a, 2 * no + 2, i64);
	/* the guard */
	c->guard.mx = ds_arena_alloc(a, tree, i64);
	c->guard.ad = ds_arena_alloc(a, tree, i64);
	/* the list scheduler */
	c->state = ds_arena_alloc(a, t, 1);
	c->npend = ds_arena_alloc(a, t, i32);
	c->nparked = ds_arena_alloc(a, t, i32);
	c->avail = ds_arena_alloc(a, t, i64);
	c->start = ds_arena_alloc(a, t, i64);
	c->fin = ds_arena_alloc(a, t, i64);
	c->stack = ds_arena_alloc(a, t, i32);
	c->commit = ds_arena_alloc(a, t, i32);
	c->committed = ds_arena_alloc(a, t, 1);
	c->tmp = ds_arena_alloc(a, t, i32);
	c->pfree = ds_arena_alloc(a, np, i64);
	c->porder = ds_arena_alloc(a, np, i32);
	c->fstack = ds_arena_alloc(a, t, i32);
	c->mark = ds_arena_alloc(a, t, i32);
	c->out = ds_arena_alloc(a, t, i32);
	/* the occupancies of the plan being built */
	c->cur_occ = ds_arena_alloc(a, nb, i32);
	c->occ_endt = ds_arena_alloc(a, no, i64);
	c->occ_end = ds_arena_alloc(a, no, i32);
	c->occ_mark = ds_arena_alloc(a, no, i32);
	c->vacated = ds_arena_alloc(a, t, i64);
	c->blocker = ds_arena_alloc(a, t, i32);
	c->x_off = ds_arena_alloc(a, t + 1, i32);
	c->alt_ver = ds_arena_alloc(a, t, i64);
	c->alt_retry = ds_arena_alloc(a, t, i64);
	c->off = ds_arena_alloc(a, nb, i64);
	c->soff = ds_arena_alloc(a, ns, i64);
	c->bx = ds_arena_alloc(a, nb, i64);
	c->elided = ds_arena_alloc(a, ns, 1);
	c->waiting = ds_arena_alloc(a, np, sizeof *c->waiting);
	c->ready = ds_arena_alloc(a, np, sizeof *c->ready);
}

/* The segment maps and the heaps (those from the heap hook). */
static bool cpe_maps_heaps(cpe *c)
{
	const ds_graph *g = c->g;
	bool ok = !c->a.failed;
	for (int m = 0; ok && m < DS_NMEM; m++)
		ok = ds_segmap_init(&c->sm[m], &c->a, g->caps.cap[m]) == DS_OK &&
		     ds_segmap_init(&c->snap[m], &c->a, g->caps.cap[m]) ==
			     DS_OK;
	for (int32_t p = 0; ok && p < c->npipes; p++)
		ok = ds_heapq_init(&c->waiting[p], c->h, c->total) == DS_OK &&
		     ds_heapq_init(&c->ready[p], c->h, c->total) == DS_OK;
	return ok && ds_heapq_init(&c->frees, c->h, c->total) == DS_OK;
}

/* Static node data: kind, pipe (spills on MTE3 and MTE2), cycles and
 * buffer of each node of plan in; load gets the cycles per pipe. */
static void cpe_nodes(cpe *c, const ds_plan *in, int32_t pmte3,
		      int32_t pmte2, int64_t *load)
{
	const ds_graph *g = c->g;
	for (int32_t v = 0; v < c->total; v++) {
		c->cyc[v] = ds_node_cycles(g, in, v);
		if (v < g->n) {
			c->kind[v] = g->kind[v] == DS_ALLOC  ? K_ALLOC
				     : g->kind[v] == DS_FREE ? K_FREE
							     : K_OP;
			c->pipe[v] = g->pipe[v];
			c->nbuf[v] = g->buf[v];
		} else {
			bool so = (v - g->n) % 2 == 0;
			c->kind[v] = so ? K_SOUT : K_SIN;
			c->pipe[v] = so ? pmte3 : pmte2;
			c->nbuf[v] = in->spill[(v - g->n) / 2].buf;
		}
		if (c->pipe[v] >= 0)
			load[c->pipe[v]] += c->cyc[v];
	}
}

/* The pipes in a fixed order: busiest first, then by name (never by
 * index, which follows the Ids); the first is the bottleneck. */
static void cpe_pipes(cpe *c, int32_t pmte3, const int64_t *load)
{
	const ds_graph *g = c->g;
	for (int32_t p = 0; p < c->npipes; p++) {
		const char *np = p < g->npipes ? g->pipes[p]
			       : p == pmte3    ? "MTE3"
					       : "MTE2";
		int32_t i = p;
		for (; i > 0; i--) {
			int32_t q = c->porder[i - 1];
			const char *nq = q < g->npipes ? g->pipes[q]
				       : q == pmte3    ? "MTE3"
						       : "MTE2";
			if (ds_pipe_busier(load[q], nq, load[p], np))
				break;
			c->porder[i] = q;
		}
		c->porder[i] = p;
	}
	c->bneck = c->porder[0];
}

/* Static node data and all working arrays. */
static int cpe_init(cpe *c, const ds_graph *g, const ds_plan *in, ds_err *e)
{
	memset(c, 0, sizeof *c);
	ds_arena_init(&c->a, g->heap);
	c->g = g;
	c->h = g->heap;
	c->e = e;
	c->n = g->n;
	c->nspill = in->nspill;
	c->total = g->n + 2 * in->nspill;
	int32_t pmte3 = ds_graph_find_pipe(g, "MTE3");
	int32_t pmte2 = ds_graph_find_pipe(g, "MTE2");
	c->npipes = g->npipes;
	if (pmte3 < 0)
		pmte3 = c->npipes++;
	if (pmte2 < 0)
		pmte2 = c->npipes++;
	int32_t size = 1;
	while (size < c->total)
		size *= 2;
	c->guard.size = size;
	c->guard.len = c->total;
	cpe_arrays(c, (size_t)c->total, (size_t)(g->nbuf ? g->nbuf : 1),
		   (size_t)(in->nspill ? in->nspill : 1), (size_t)c->npipes);
	if (!cpe_maps_heaps(c))
		return cpe_oom(c);
	int64_t *load = c->pfree; /* scratch: cycles per pipe */
	cpe_nodes(c, in, pmte3, pmte2, load);
	cpe_pipes(c, pmte3, load);
	return DS_OK;
}

/* Makes room for *cap >= need elements of *p (from the arena), doubling
 * as ds_reserve does. */
int cpe_reserve(cpe *c, void **p, int64_t *cap, int64_t need, size_t elem)
{
	if (need <= *cap)
		return DS_OK;
	int64_t n = *cap < 16 ? 16 : *cap;
	while (n < need)
		n *= 2;
	void *q = ds_arena_grow(&c->a, *p, (size_t)n, elem);
	if (!q)
		return cpe_oom(c);
	*p = q;
	*cap = n;
	return DS_OK;
}

/* ---- the constraint graph of a backbone plan ---- */

int cpe_add_edge(cpe *c, int32_t s, int32_t d, int typ)
{
	if (c->ne == c->cape) {
		int64_t nc = c->cape ? 2 * c->cape : 4096;
		int32_t *a = ds_arena_grow(&c->a, c->es, (size_t)nc, sizeof *a);
		if (!a)
			return cpe_oom(c);
		c->es = a;
		a = ds_arena_grow(&c->a, c->ed, (size_t)nc, sizeof *a);
		if (!a)
			return cpe_oom(c);
		c->ed = a;
		uint8_t *t = ds_arena_grow(&c->a, c->et, (size_t)nc, 1);
		if (!t)
			return cpe_oom(c);
		c->et = t;
		c->cape = nc;
	}
	c->es[c->ne] = s;
	c->ed[c->ne] = d;
	c->et[c->ne] = (uint8_t)typ;
	c->ne++;
	return DS_OK;
}

static int cpe_edge(void *ud, int32_t from, int32_t to, bool timed)
{
	return cpe_add_edge(ud, from, to, timed ? E_TIMED : E_ORDER);
}

/* Spill edges (SPEC.md, in the reduced form of ds_replay) and the
 * residency of users inside their occupancy, which only constrains the
 * order. */
static int cpe_spill_edges(cpe *c, const ds_plan *p)
{
	return ds_spill_edges(c->g, p, c->pos, true, cpe_edge, c, c->e);
}

/* CSR by source and by target over the collected edges. */
static int cpe_build_csr(cpe *c)
{
	const int32_t T = c->total;
	ds_arena *a = &c->a;
	ds_arena_release(a, c->s_adj);
	ds_arena_release(a, c->p_adj);
	ds_arena_release(a, c->s_typ);
	ds_arena_release(a, c->p_typ);
	size_t m = (size_t)(c->ne ? c->ne : 1);
	c->s_adj = ds_arena_alloc(a, m, sizeof *c->s_adj);
	c->p_adj = ds_arena_alloc(a, m, sizeof *c->p_adj);
	c->s_typ = ds_arena_alloc(a, m, 1);
	c->p_typ = ds_arena_alloc(a, m, 1);
	if (a->failed)
		return cpe_oom(c);
	memset(c->s_off, 0, ((size_t)T + 1) * sizeof *c->s_off);
	memset(c->p_off, 0, ((size_t)T + 1) * sizeof *c->p_off);
	for (int64_t k = 0; k < c->ne; k++) {
		c->s_off[c->es[k] + 1]++;
		c->p_off[c->ed[k] + 1]++;
	}
	for (int32_t v = 0; v < T; v++) {
		c->s_off[v + 1] += c->s_off[v];
		c->p_off[v + 1] += c->p_off[v];
	}
	/* running cursors in tmp and stack */
	for (int32_t v = 0; v < T; v++) {
		c->tmp[v] = c->s_off[v];
		c->stack[v] = c->p_off[v];
	}
	for (int64_t k = 0; k < c->ne; k++) {
		int32_t s = c->es[k], d = c->ed[k];
		c->s_adj[c->tmp[s]] = d;
		c->s_typ[c->tmp[s]++] = c->et[k];
		c->p_adj[c->stack[d]] = s;
		c->p_typ[c->stack[d]++] = c->et[k];
	}
	return DS_OK;
}

/* Everything the list scheduler needs from backbone p. */
static int cpe_set_backbone(cpe *c, const ds_plan *p, bool online)
{
	const ds_graph *g = c->g;
	int rc;
	DS_ASSERT(p->len == c->total);
	c->bbp = p;
	c->bb = p->order;
	c->online = online;
	for (int32_t i = 0; i < p->len; i++)
		c->pos[p->order[i]] = i;
	c->ne = 0;
	for (int64_t k = 0; k < g->nedge; k++)
		if ((rc = cpe_add_edge(c, g->esrc[k], g->edst[k], E_TIMED)))
			return rc;
	if ((rc = cpe_spill_edges(c, p)) || (rc = cm_reuse_edges(c, p)) ||
	    (rc = cpe_build_csr(c)))
		return rc;
	for (int32_t v = 0; v < c->total; v++) {
		c->has_user[v] = 0;
		for (int32_t j = c->s_off[v]; j < c->s_off[v + 1]; j++)
			if (c->kind[c->s_adj[j]] != K_ALLOC &&
			    c->kind[c->s_adj[j]] != K_FREE)
				c->has_user[v] = 1;
	}
	int64_t x = 0;
	for (int32_t i = 0; i < p->len; i++) {
		c->prof[i] = x;
		x += cpe_dvstay(c, p->order[i]);
	}
	c->prof[p->len] = x;
	return DS_OK;
}

/* ---- plans ---- */

static int cpe_plan_alloc(const ds_graph *g, const ds_plan *in, ds_plan *p)
{
	const ds_heap *h = g->heap;
	memset(p, 0, sizeof *p);
	p->len = in->len;
	p->nspill = in->nspill;
	p->order = ds_alloc(h, (size_t)in->len, sizeof *p->order);
	p->offset = ds_alloc(h, (size_t)(g->nbuf ? g->nbuf : 1),
			     sizeof *p->offset);
	p->spill = ds_alloc(h, (size_t)(in->nspill ? in->nspill : 1),
			    sizeof *p->spill);
	if (!p->order || !p->offset || !p->spill) {
		ds_plan_free(h, p);
		return DS_ENOMEM;
	}
	return DS_OK;
}

/* dst has room for the input's spills: every plan here has at most
 * those. */
static void cpe_plan_copy(const ds_graph *g, const ds_plan *src, ds_plan *dst)
{
	dst->len = src->len;
	dst->nspill = src->nspill;
	memcpy(dst->order, src->order, (size_t)src->len * sizeof *src->order);
	memcpy(dst->offset, src->offset, (size_t)g->nbuf * sizeof *src->offset);
	if (src->nspill > 0) /* src->spill may be NULL without spills */
		memcpy(dst->spill, src->spill,
		       (size_t)src->nspill * sizeof *src->spill);
}

typedef struct best {
	ds_plan plan;
	ds_figures f;
	int64_t max_peak, max_ddr;
	int64_t peak_budget; /* max_peak once relaxed (see ds_cpe) */
	int64_t refused;     /* issues the vstay guard refused so far */
	bool gang_on;	     /* the gang mode may run (CPE_GANG_MAX_NODES) */
	bool gang_due;	     /* it runs in the next round */
} best;

/* Replays cand; when it is valid, within the budgets and shorter than the
 * best so far, swaps it in.  The replay refusing a candidate would be a
 * bug here; the best plan stays safe as the candidate is not taken. */
static int cpe_consider(cpe *c, ds_plan *cand, best *b)
{
	ds_figures f;
	ds_err e2;
	int rc = ds_replay(c->g, cand, NULL, &f, &e2);
	if (rc == DS_ENOMEM)
		return cpe_oom(c);
	DS_ASSERT(rc == DS_OK);
	if (rc || f.peak_vstay > b->max_peak || f.extra_ddr > b->max_ddr ||
	    f.makespan >= b->f.makespan)
		return DS_OK;
	ds_plan t = b->plan;
	b->plan = *cand;
	*cand = t;
	b->f = f;
	return DS_OK;
}

/* The candidates of one forward pass: online, its order with the offsets
 * chosen on the way; fixed, its order with the backbone's offsets, and
 * with offsets re-placed (see cm_replace). */
static int cpe_try_order(cpe *c, const ds_plan *bb, ds_plan *cand, best *b)
{
	const ds_graph *g = c->g;
	int rc;
	cpe_plan_copy(g, bb, cand);
	memcpy(cand->order, c->out, (size_t)c->total * sizeof *c->out);
	if (c->online) {
		/* the spills kept, renumbered in their old order (tmp: the
		 * new index of each) */
		int32_t kept = 0, n = c->n, len = 0;
		memcpy(cand->offset, c->off, (size_t)g->nbuf * sizeof *c->off);
		for (int32_t k = 0; k < c->nspill; k++) {
			if (c->elided[k])
				continue;
			c->tmp[k] = kept;
			cand->spill[kept].buf = bb->spill[k].buf;
			cand->spill[kept++].offset = c->soff[k];
		}
		for (int32_t i = 0; i < c->total; i++) {
			int32_t v = c->out[i], k = (v - n) / 2;
			if (cpe_is_elided(c, v))
				continue;
			cand->order[len++] =
				v < n ? v : n + 2 * c->tmp[k] + (v - n) % 2;
		}
		cand->nspill = kept;
		cand->len = len;
		return cpe_consider(c, cand, b);
	}
	if ((rc = cpe_consider(c, cand, b)))
		return rc;
	bool ok;
	if ((rc = cm_replace(c, &ok)) || !ok)
		return rc;
	cpe_plan_copy(g, bb, cand);
	memcpy(cand->order, c->out, (size_t)c->total * sizeof *c->out);
	memcpy(cand->offset, c->off, (size_t)g->nbuf * sizeof *c->off);
	for (int32_t k = 0; k < cand->nspill; k++)
		cand->spill[k].offset = c->soff[k];
	return cpe_consider(c, cand, b);
}

/* ---- the pass ---- */

/* The budgets around the input's figures b->f: extra DDR traffic at most
 * the option's percentage above it; peak_vstay the input's at first,
 * b->peak_budget (the option's percentage above it, at most peak_cap when
 * that is set and above the input's) once relaxed. */
int64_t ds_cpe_budget(int64_t value, double pct)
{
	pct = pct > 0 ? pct : 0;
	return value + (int64_t)((double)value * pct / 100);
}

static void cpe_budgets(best *b, const ds_cpe_opts *o)
{
	b->max_ddr = ds_cpe_budget(b->f.extra_ddr,
				   o ? o->traffic_budget_pct : 5);
	b->max_peak = b->f.peak_vstay;
	b->peak_budget = ds_cpe_budget(b->f.peak_vstay,
				       o ? o->peak_budget_pct : 0);
	if (o && !ds_within_peak_cap(o->peak_cap, b->peak_budget))
		b->peak_budget =
			o->peak_cap > b->max_peak ? o->peak_cap : b->max_peak;
}

/* The sizes of the buffers that stay (L1, UB) added up until they pass
 * limit: no guard is needed when all of them together stay within it. */
static int64_t cpe_stay_sum(const ds_graph *g, int64_t limit)
{
	int64_t sum = 0;
	for (int32_t bf = 0; bf < g->nbuf && sum <= limit; bf++)
		if (ds_mem_stays(g->buf_mem[bf]))
			sum += g->buf_size[bf];
	return sum;
}

/* One mode's forward-backward passes over backbone bb (passes of
 * them), each candidate order offered to the best (cpe_try_order). */
static int cpe_mode(cpe *c, const ds_plan *bb, ds_plan *cand, best *b,
		    bool online, int passes)
{
	int rc;
	c->elide = online;
	if ((rc = cpe_set_backbone(c, bb, online)))
		return rc;
	for (int32_t v = 0; v < c->total; v++)
		c->key[v] = c->pos[v];
	cl_set_rank(c, c->key);
	for (int pass = 0; pass < passes; pass++) {
		bool ok;
		if ((rc = cl_simulate(c, &ok)))
			return rc;
		if (!ok || (rc = cpe_try_order(c, bb, cand, b)))
			return rc;
		if (pass == 0 && (rc = cl_need_keys(c)))
			return rc;
		if (pass > 0)
			cl_simulate_back(c);
		cl_set_rank(c, c->key);
	}
	return DS_OK;
}

/* The gang mode's passes over backbone bb (cpe_mode, online, with
 * gangs: cl_gather_gang); it runs again in the next round only when it
 * gave the best plan in this one (b->gang_due). */
static int cpe_gang_mode(cpe *c, const ds_plan *bb, ds_plan *cand, best *b)
{
	const int64_t before = b->f.makespan;
	c->gang = true;
	int rc = cpe_mode(c, bb, cand, b, true, CPE_FB_PASSES);
	c->gang = false;
	b->gang_due = b->f.makespan < before;
	return rc;
}

/* One round: the best plan so far is the backbone of every mode; it may
 * have dropped spills, and then has fewer nodes (the working state is
 * rebuilt).  stay_sum: see cpe_stay_sum.  A light round is the online
 * mode's first pass only. */
static int cpe_round(cpe *c, ds_plan *bb, ds_plan *cand, best *b,
		     int64_t stay_sum, bool light, ds_err *e)
{
	const ds_graph *g = c->g;
	int rc = DS_OK;
	cpe_plan_copy(g, &b->plan, bb);
	if (bb->nspill != c->nspill) {
		cpe_free(c);
		if ((rc = cpe_init(c, g, bb, e)))
			return rc;
	}
	c->limit = b->max_peak;
	c->guard_on = stay_sum > c->limit;
	c->refused = 0;
	for (int online = 1; online >= (light ? 1 : 0) && rc == DS_OK;
	     online--)
		rc = cpe_mode(c, bb, cand, b, online,
			      light ? 1 : CPE_FB_PASSES);
	if (rc == DS_OK && !light && b->gang_on && b->gang_due)
		rc = cpe_gang_mode(c, bb, cand, b);
	b->refused += c->refused;
	return rc;
}

/* The effort, a multiplier of the default budgets (0 counts as 1). */
static int64_t cpe_effort(const ds_cpe_opts *o)
{
	return o && o->effort > 1 ? o->effort : 1;
}

/* By default, another round only after a round that gained at least
 * CPE_MIN_GAIN_PERMILLE; with more effort, after any gain. */
static bool cpe_another_round(const ds_cpe_opts *o, int64_t before,
			      int64_t after)
{
	int64_t gain = before - after;
	if (cpe_effort(o) > 1)
		return gain > 0;
	return gain > 0 && gain * 1000 >= before * CPE_MIN_GAIN_PERMILLE;
}

/* Rounds of the relaxed phase: as many as the first phase's, within
 * CPE_RELAX_WORK nodes in all times the effort (0 on a large graph:
 * cpe_phases gives it one light round instead). */
static int64_t cpe_relaxed_rounds(const ds_graph *g, const ds_cpe_opts *o,
				  int64_t rounds)
{
	int64_t k = CPE_RELAX_WORK * cpe_effort(o) /
		    ds_size_nodes(g, o ? o->size_nodes : 0);
	return k < rounds ? k : rounds;
}

/* The rounds within the input's peak, then, when the guard held
 * something back and the budget lets the peak rise, the rounds again
 * with the limit relaxed to the budget (on a graph too large for one
 * within CPE_RELAX_WORK, one light round: the budget is spent on a graph
 * of any size): never worse than the first phase (its plan is the best
 * so far, in *b), and the extra rounds only where the limit bound.  bb
 * and cand: the rounds' scratch plans. */
static int cpe_phases(cpe *c, const ds_cpe_opts *o, ds_plan *bb,
		      ds_plan *cand, best *b, ds_err *e)
{
	const ds_graph *g = c->g;
	int64_t rounds = CPE_DEFAULT_ROUNDS * cpe_effort(o);
	int rc = DS_OK;
	for (int phase = 0; phase < 2 && rc == DS_OK; phase++) {
		int64_t nr = rounds;
		bool light = false;
		if (phase == 1) {
			nr = cpe_relaxed_rounds(g, o, rounds);
			light = nr == 0;
			nr = light ? 1 : nr;
			if (b->refused == 0 || b->peak_budget <= b->max_peak)
				break;
			b->max_peak = b->peak_budget;
		}
		int64_t stay_sum = cpe_stay_sum(g, b->max_peak);
		for (int64_t r = 0; r < nr; r++) {
			int64_t before = b->f.makespan;
			rc = cpe_round(c, bb, cand, b, stay_sum, light, e);
			if (rc || !cpe_another_round(o, before, b->f.makespan))
				break;
		}
	}
	return rc;
}

int ds_cpe(const ds_graph *g, const ds_plan *in, const ds_cpe_opts *o,
	   ds_plan *out, ds_err *e)
{
	const ds_heap *h = g->heap;
	memset(out, 0, sizeof *out);
	if (!in->offset)
		return ds_fail(e, DS_EINPUT, "cpe: the plan has no offsets");
	best b;
	memset(&b, 0, sizeof b);
	int rc = ds_replay(g, in, NULL, &b.f, e);
	if (rc)
		return rc;
	cpe_budgets(&b, o);
	b.gang_on = ds_size_nodes(g, o ? o->size_nodes : 0) <=
		    CPE_GANG_MAX_NODES;
	b.gang_due = true;

	cpe c;
	ds_plan cand, bb;
	memset(&cand, 0, sizeof cand);
	memset(&bb, 0, sizeof bb);
	if ((rc = cpe_init(&c, g, in, e)))
		goto out;
	if (cpe_plan_alloc(g, in, &b.plan) || cpe_plan_alloc(g, in, &cand) ||
	    cpe_plan_alloc(g, in, &bb)) {
		rc = cpe_oom(&c);
		goto out;
	}
	cpe_plan_copy(g, in, &b.plan);
	rc = cpe_phases(&c, o, &bb, &cand, &b, e);
out:
	cpe_free(&c);
	ds_plan_free(h, &cand);
	ds_plan_free(h, &bb);
	if (rc) {
		ds_plan_free(h, &b.plan);
		return rc;
	}
	*out = b.plan;
	return DS_OK;
}
