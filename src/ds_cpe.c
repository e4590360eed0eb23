/* ds_cpe.c: stage 3, critical path enhancement.
 *
 * Requires: a graph and a full plan for it that ds_replay accepts (order
 * with spill nodes, offsets, spills), e.g. stage 2's.
 * Guarantees: a plan that ds_replay accepts, with the input's spills or a
 * subset of them (so never more extra DDR traffic or spills), a peak_vstay
 * at most peak_budget_pct percent above the input's, and a makespan no
 * longer than the input's: the input itself when nothing better is found.
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
 *    frontier_op).
 *  - Priorities: first the backbone's order, then the times at which the
 *    busiest pipe needs each node, then forward-backward improvement (a
 *    pass over the reversed graph gives each node a resource-aware latest
 *    start).
 *  - Fixed-mode orders are also re-placed afterwards (offsets whose
 *    previous occupants ended earliest), which takes reuse edges off the
 *    critical path for the next round.
 * Every candidate is checked with ds_replay; the best valid one is kept.
 *
 * Cost, per pass: O((N + E) log N) for the constraint graph and the list
 * scheduling, where each decision tries at most MAX_TRIES candidates;
 * per online placement attempt O(R D + S^2) (R <= MAX_RESERVED backbone
 * occupancies still to start, D their disjoint address intervals, S the
 * address segments of the memory: a few tens here), O(R) per spill
 * considered for dropping; and a replay per candidate plan.  3 passes
 * in each of 2 modes per round; at most DEFAULT_ROUNDS rounds (or
 * effort), fewer once a round gains little.
 * Memory O(N + E). */
#include "ds_stage.h"

#include <string.h>

/* edge types: order only, timed, the address-reuse edges of the fixed
 * mode (timed) */
enum { E_ORDER = 0, E_TIMED = 1, E_REUSE = 2 };
enum { K_OP, K_ALLOC, K_FREE, K_SOUT, K_SIN };
/* node states in the list scheduler */
enum { S_WAIT, S_PARKED, S_QUEUED, S_ISSUED };

/* ---- address segments of one memory (as in ds_replay) ---- */

/* Segment s covers [lo[s], lo[s+1]) (the last one up to the capacity) and
 * was last occupied by occupancy occ[s] (-1: never). */
typedef struct segmap {
	int64_t *lo;
	int32_t *occ;
	int32_t n, cap;
	int64_t size;
} segmap;

static int sm_init(const ds_heap *h, segmap *m, int64_t size)
{
	memset(m, 0, sizeof *m);
	m->cap = 16;
	m->lo = ds_alloc(h, (size_t)m->cap, sizeof *m->lo);
	m->occ = ds_alloc(h, (size_t)m->cap, sizeof *m->occ);
	if (!m->lo || !m->occ)
		return DS_ENOMEM;
	m->n = 1;
	m->lo[0] = 0;
	m->occ[0] = -1;
	m->size = size;
	return DS_OK;
}

static void sm_free(const ds_heap *h, segmap *m)
{
	ds_free(h, m->lo);
	ds_free(h, m->occ);
	memset(m, 0, sizeof *m);
}

static int64_t sm_hi(const segmap *m, int32_t s)
{
	return s + 1 < m->n ? m->lo[s + 1] : m->size;
}

/* The segment holding address x. */
static int32_t sm_find(const segmap *m, int64_t x)
{
	int32_t a = 0, z = m->n - 1;
	while (a < z) {
		int32_t mid = a + (z - a + 1) / 2;
		if (m->lo[mid] <= x)
			a = mid;
		else
			z = mid - 1;
	}
	return a;
}

/* [x, x+size) now belongs to occupancy o. */
static int sm_set(const ds_heap *h, segmap *m, int64_t x, int64_t size,
		  int32_t o)
{
	int64_t end = x + size;
	int32_t i0 = sm_find(m, x), i1 = i0;
	while (i1 + 1 < m->n && m->lo[i1 + 1] < end)
		i1++;
	int64_t pl[3];
	int32_t po[3];
	int np = 0;
	if (m->lo[i0] < x)
		pl[np] = m->lo[i0], po[np++] = m->occ[i0];
	pl[np] = x, po[np++] = o;
	if (end < sm_hi(m, i1))
		pl[np] = end, po[np++] = m->occ[i1];
	int32_t nn = m->n - (i1 - i0 + 1) + np;
	if (nn > m->cap) {
		int32_t nc = 2 * nn;
		int64_t *l = ds_grow(h, m->lo, (size_t)nc, sizeof *l);
		if (!l)
			return DS_ENOMEM;
		m->lo = l;
		int32_t *oc = ds_grow(h, m->occ, (size_t)nc, sizeof *oc);
		if (!oc)
			return DS_ENOMEM;
		m->occ = oc;
		m->cap = nc;
	}
	memmove(m->lo + i0 + np, m->lo + i1 + 1,
		(size_t)(m->n - i1 - 1) * sizeof *m->lo);
	memmove(m->occ + i0 + np, m->occ + i1 + 1,
		(size_t)(m->n - i1 - 1) * sizeof *m->occ);
	for (int k = 0; k < np; k++)
		m->lo[i0 + k] = pl[k], m->occ[i0 + k] = po[k];
	m->n = nn;
	return DS_OK;
}

static void sm_reset(segmap *m)
{
	m->n = 1;
	m->lo[0] = 0;
	m->occ[0] = -1;
}

static int sm_copy(const ds_heap *h, segmap *dst, const segmap *src)
{
	if (dst->cap < src->n) {
		int64_t *l = ds_grow(h, dst->lo, (size_t)src->cap, sizeof *l);
		if (!l)
			return DS_ENOMEM;
		dst->lo = l;
		int32_t *o = ds_grow(h, dst->occ, (size_t)src->cap, sizeof *o);
		if (!o)
			return DS_ENOMEM;
		dst->occ = o;
		dst->cap = src->cap;
	}
	memcpy(dst->lo, src->lo, (size_t)src->n * sizeof *src->lo);
	memcpy(dst->occ, src->occ, (size_t)src->n * sizeof *src->occ);
	dst->n = src->n;
	dst->size = src->size;
	return DS_OK;
}

/* ---- a segment tree: range add, range max over backbone positions ---- */

typedef struct segt {
	int32_t len, size;
	int64_t *mx, *ad;
} segt;

static void st_add(segt *s, int32_t x, int32_t lo, int32_t hi, int32_t l,
		   int32_t r, int64_t v)
{
	if (r < lo || hi < l)
		return;
	if (l <= lo && hi <= r) {
		s->mx[x] += v;
		s->ad[x] += v;
		return;
	}
	int32_t mid = lo + (hi - lo) / 2;
	st_add(s, 2 * x, lo, mid, l, r, v);
	st_add(s, 2 * x + 1, mid + 1, hi, l, r, v);
	int64_t a = s->mx[2 * x], b = s->mx[2 * x + 1];
	s->mx[x] = (a > b ? a : b) + s->ad[x];
}

static int64_t st_max(const segt *s, int32_t x, int32_t lo, int32_t hi,
		      int32_t l, int32_t r)
{
	if (r < lo || hi < l)
		return INT64_MIN / 2;
	if (l <= lo && hi <= r)
		return s->mx[x];
	int32_t mid = lo + (hi - lo) / 2;
	int64_t a = st_max(s, 2 * x, lo, mid, l, r);
	int64_t b = st_max(s, 2 * x + 1, mid + 1, hi, l, r);
	return (a > b ? a : b) + s->ad[x];
}

/* Leaves 0..s->len-1 from val; the padding never counts.  Bottom up:
 * node x covers leaves [(x - size) ...] of its level, as in st_add. */
static void st_build(segt *s, const int64_t *val)
{
	for (int32_t i = 0; i < s->size; i++) {
		s->mx[s->size + i] = i < s->len ? val[i] : INT64_MIN / 4;
		s->ad[s->size + i] = 0;
	}
	for (int32_t x = s->size - 1; x >= 1; x--) {
		int64_t a = s->mx[2 * x], b = s->mx[2 * x + 1];
		s->mx[x] = a > b ? a : b;
		s->ad[x] = 0;
	}
}

/* ---- the pass's working state ---- */

typedef struct cpe {
	const ds_graph *g;
	const ds_heap *h;
	ds_err *e;
	int32_t n, total, nspill;
	int32_t npipes;
	int32_t bneck;	 /* the busiest pipe */
	int32_t *porder; /* the pipes, busiest first */
	/* per node of the plan (spill nodes included) */
	uint8_t *kind;
	int32_t *pipe;
	int64_t *cyc;
	int32_t *nbuf; /* ALLOC, FREE and spill nodes: their buffer */

	/* constraint graph of the backbone, CSR by source and by target */
	bool online; /* offsets chosen while scheduling, no reuse edges */
	int64_t ne, cape;
	int32_t *es, *ed;
	uint8_t *et;
	int32_t *s_off, *s_adj, *p_off, *p_adj;
	uint8_t *s_typ, *p_typ;
	uint8_t *has_user;  /* ALLOC: some operation follows it */
	const ds_plan *bbp; /* the backbone plan */
	const int32_t *bb;  /* its order */
	int32_t *pos;	    /* position in it */
	int32_t *rank;	    /* list-scheduling priority, 0 = first */
	int64_t *key;	    /* what the rank is made from */

	/* the backbone's occupancies, in order of their start: addresses
	 * [bo_lo, bo_hi) from position bo_s to bo_e; per memory as lists */
	int32_t nbo;
	int64_t *bo_lo, *bo_hi;
	int32_t *bo_s, *bo_e;
	int32_t *occ_of; /* ALLOC/SPILL_IN node: its backbone occupancy */
	int32_t mo_off[DS_NMEM + 1], *mo_list; /* each list ends with -1 */
	int32_t *mo_idx; /* an occupancy's index in its list */
	/* online: which backbone occupancies have started, and a skip
	 * structure over the lists to find those not started yet */
	uint8_t *bo_started;
	int32_t *skip;
	int64_t *resv; /* scratch: reserved address intervals */

	/* the vstay guard: the backbone's profile (vstay before each
	 * position), as a tree, plus what was issued ahead */
	int64_t *prof;
	segt guard;
	int64_t limit;
	bool guard_on; /* the limit can be reached at all */
	int32_t front;	/* first backbone position not issued */
	int32_t gfront; /* first backbone operation not issued */

	/* list scheduler */
	uint8_t *state;
	int32_t *npend, *nparked;
	int64_t *avail, *start, *fin;
	int32_t *stack, *tmp;
	ds_heapq *waiting, *ready; /* per pipe: by avail time, by rank */
	int64_t *pfree;		   /* per pipe: when it is free again */
	int32_t *fstack;	   /* reverse pass: nodes ready to go */
	int32_t nfree;
	ds_heapq frees; /* FREEs ready to be issued, by backbone position, so
			   that edge order never matters */
	bool stuck; /* no progress possible (see simulate) */
	int32_t *mark, stamp;
	int32_t *out; /* the order being built */
	int32_t nout;

	/* occupancies of the plan being built */
	segmap sm[DS_NMEM], snap[DS_NMEM];
	int32_t nocc;
	int32_t *cur_occ;    /* per buffer: its current occupancy */
	int64_t *occ_endt;   /* end time, INT64_MAX while live */
	int32_t *occ_end;    /* ending node (reuse edges) */
	int32_t *occ_mark;
	int64_t *vacated;    /* online: when a start's window was vacated */
	int32_t *blocker;    /* online: what kept it off its backbone window */
	int64_t *alt_ver;    /* online: mver when no other window was found */
	int64_t *alt_retry;  /* online: and when more memory gets vacated */
	int64_t mver[DS_NMEM];	/* online: occupancies begun or ended */
	int64_t mlast[DS_NMEM]; /* online: latest end time so far */
	int64_t *off, *soff; /* offsets chosen: per buffer, per spill */
	int64_t *bx;	     /* per buffer: offset of its current occupancy */
	bool elide;	     /* online: spills may be dropped (see can_elide) */
	uint8_t *elided;     /* per spill: dropped in the pass being built */
	/* online: reuse edges of the order built, by source */
	int32_t *x_off, *x_adj, *xe;
	int64_t x_cap, xe_cap;
} cpe;

static void cpe_free(cpe *c)
{
	const ds_heap *h = c->h;
	void *arrs[] = {
		c->kind, c->pipe, c->cyc, c->nbuf, c->es, c->ed, c->et,
		c->s_off, c->s_adj, c->p_off, c->p_adj, c->s_typ, c->p_typ,
		c->has_user, c->pos, c->rank, c->key, c->bo_lo, c->bo_hi,
		c->bo_s, c->bo_e, c->occ_of, c->mo_list, c->mo_idx,
		c->bo_started, c->skip, c->resv, c->prof, c->guard.mx,
		c->guard.ad, c->state, c->npend, c->nparked, c->avail, c->start,
		c->fin, c->stack, c->tmp, c->pfree, c->porder, c->fstack,
		c->mark, c->out, c->cur_occ, c->occ_endt, c->occ_end,
		c->occ_mark, c->vacated, c->blocker, c->alt_ver, c->alt_retry,
		c->x_off, c->x_adj, c->xe, c->off, c->soff, c->bx, c->elided};
	for (size_t i = 0; i < sizeof arrs / sizeof arrs[0]; i++)
		ds_free(h, arrs[i]);
	for (int m = 0; m < DS_NMEM; m++) {
		sm_free(h, &c->sm[m]);
		sm_free(h, &c->snap[m]);
	}
	for (int32_t p = 0; p < c->npipes; p++) {
		if (c->waiting)
			ds_heapq_free(&c->waiting[p]);
		if (c->ready)
			ds_heapq_free(&c->ready[p]);
	}
	ds_free(h, c->waiting);
	ds_free(h, c->ready);
	if (c->frees.h)
		ds_heapq_free(&c->frees);
}

static int oom(cpe *c)
{
	return ds_fail(c->e, DS_ENOMEM, "out of memory");
}

/* Static node data and all working arrays. */
static int cpe_init(cpe *c, const ds_graph *g, const ds_plan *in, ds_err *e)
{
	const ds_heap *h = g->heap;
	memset(c, 0, sizeof *c);
	c->g = g;
	c->h = h;
	c->e = e;
	c->n = g->n;
	c->nspill = in->nspill;
	c->total = g->n + 2 * in->nspill;
	const int32_t T = c->total;
	int32_t pmte3 = ds_graph_find_pipe(g, "MTE3");
	int32_t pmte2 = ds_graph_find_pipe(g, "MTE2");
	c->npipes = g->npipes;
	if (pmte3 < 0)
		pmte3 = c->npipes++;
	if (pmte2 < 0)
		pmte2 = c->npipes++;
	const size_t t = (size_t)T, nb = (size_t)(g->nbuf ? g->nbuf : 1);
	const size_t ns = (size_t)(in->nspill ? in->nspill : 1);
	const size_t no = nb + ns, np = (size_t)c->npipes;
	const size_t i32 = sizeof(int32_t), i64 = sizeof(int64_t);
	int32_t size = 1;
	while (size < T)
		size *= 2;
	c->guard.size = size;
	c->guard.len = T;
	bool ok = (c->kind = ds_alloc(h, t, 1)) &&
		  (c->pipe = ds_alloc(h, t, i32)) &&
		  (c->cyc = ds_alloc(h, t, i64)) &&
		  (c->nbuf = ds_alloc(h, t, i32)) &&
		  (c->s_off = ds_alloc(h, t + 1, i32)) &&
		  (c->p_off = ds_alloc(h, t + 1, i32)) &&
		  (c->has_user = ds_alloc(h, t, 1)) &&
		  (c->pos = ds_alloc(h, t, i32)) &&
		  (c->rank = ds_alloc(h, t, i32)) &&
		  (c->key = ds_alloc(h, t, i64)) &&
		  (c->bo_lo = ds_alloc(h, no, i64)) &&
		  (c->bo_hi = ds_alloc(h, no, i64)) &&
		  (c->bo_s = ds_alloc(h, no, i32)) &&
		  (c->bo_e = ds_alloc(h, no, i32)) &&
		  (c->occ_of = ds_alloc(h, t, i32)) &&
		  (c->mo_list = ds_alloc(h, no + DS_NMEM, i32)) &&
		  (c->mo_idx = ds_alloc(h, no, i32)) &&
		  (c->bo_started = ds_alloc(h, no, 1)) &&
		  (c->skip = ds_alloc(h, no + DS_NMEM, i32)) &&
		  (c->resv = ds_alloc(h, 2 * no, i64)) &&
		  (c->prof = ds_alloc(h, t + 1, i64)) &&
		  (c->guard.mx = ds_alloc(h, 2 * (size_t)size, i64)) &&
		  (c->guard.ad = ds_alloc(h, 2 * (size_t)size, i64)) &&
		  (c->state = ds_alloc(h, t, 1)) &&
		  (c->npend = ds_alloc(h, t, i32)) &&
		  (c->nparked = ds_alloc(h, t, i32)) &&
		  (c->avail = ds_alloc(h, t, i64)) &&
		  (c->start = ds_alloc(h, t, i64)) &&
		  (c->fin = ds_alloc(h, t, i64)) &&
		  (c->stack = ds_alloc(h, t, i32)) &&
		  (c->tmp = ds_alloc(h, t, i32)) &&
		  (c->pfree = ds_alloc(h, np, i64)) &&
		  (c->porder = ds_alloc(h, np, i32)) &&
		  (c->fstack = ds_alloc(h, t, i32)) &&
		  (c->mark = ds_alloc(h, t, i32)) &&
		  (c->out = ds_alloc(h, t, i32)) &&
		  (c->cur_occ = ds_alloc(h, nb, i32)) &&
		  (c->occ_endt = ds_alloc(h, no, i64)) &&
		  (c->occ_end = ds_alloc(h, no, i32)) &&
		  (c->occ_mark = ds_alloc(h, no, i32)) &&
		  (c->vacated = ds_alloc(h, t, i64)) &&
		  (c->blocker = ds_alloc(h, t, i32)) &&
		  (c->x_off = ds_alloc(h, t + 1, i32)) &&
		  (c->alt_ver = ds_alloc(h, t, i64)) &&
		  (c->alt_retry = ds_alloc(h, t, i64)) &&
		  (c->off = ds_alloc(h, nb, i64)) &&
		  (c->soff = ds_alloc(h, ns, i64)) &&
		  (c->bx = ds_alloc(h, nb, i64)) &&
		  (c->elided = ds_alloc(h, ns, 1)) &&
		  (c->waiting = ds_alloc(h, np, sizeof *c->waiting)) &&
		  (c->ready = ds_alloc(h, np, sizeof *c->ready));
	for (int m = 0; ok && m < DS_NMEM; m++)
		ok = sm_init(h, &c->sm[m], g->caps.cap[m]) == DS_OK &&
		     sm_init(h, &c->snap[m], g->caps.cap[m]) == DS_OK;
	for (int32_t p = 0; ok && p < c->npipes; p++)
		ok = ds_heapq_init(&c->waiting[p], h, T) == DS_OK &&
		     ds_heapq_init(&c->ready[p], h, T) == DS_OK;
	ok = ok && ds_heapq_init(&c->frees, h, T) == DS_OK;
	if (!ok)
		return oom(c);
	int64_t *load = c->pfree; /* scratch: cycles per pipe */
	for (int32_t v = 0; v < T; v++) {
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
	/* the pipes in a fixed order: busiest first, then by name (never
	 * by index, which follows the Ids); the first is the bottleneck */
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
			if (load[q] > load[p] ||
			    (load[q] == load[p] && strcmp(nq, np) < 0))
				break;
			c->porder[i] = q;
		}
		c->porder[i] = p;
	}
	c->bneck = c->porder[0];
	return DS_OK;
}

/* ---- the constraint graph of a backbone plan ---- */

static int add_edge(cpe *c, int32_t s, int32_t d, int typ)
{
	if (c->ne == c->cape) {
		int64_t nc = c->cape ? 2 * c->cape : 4096;
		int32_t *a = ds_grow(c->h, c->es, (size_t)nc, sizeof *a);
		if (!a)
			return oom(c);
		c->es = a;
		a = ds_grow(c->h, c->ed, (size_t)nc, sizeof *a);
		if (!a)
			return oom(c);
		c->ed = a;
		uint8_t *t = ds_grow(c->h, c->et, (size_t)nc, 1);
		if (!t)
			return oom(c);
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
	return add_edge(ud, from, to, timed ? E_TIMED : E_ORDER);
}

/* Spill edges (SPEC.md, in the reduced form of ds_replay) and the
 * residency of users inside their occupancy, which only constrains the
 * order. */
static int spill_edges(cpe *c, const ds_plan *p)
{
	return ds_spill_edges(c->g, p, c->pos, true, cpe_edge, c, c->e);
}

/* Offset of the occupancy that node v (ALLOC or SPILL_IN) starts. */
static int64_t occ_offset(const cpe *c, const ds_plan *p, int32_t v)
{
	return c->kind[v] == K_ALLOC ? p->offset[c->nbuf[v]]
				     : p->spill[(v - c->n) / 2].offset;
}

/* Walks backbone p: its occupancies (bo_*, occ_of) and, in fixed mode,
 * its address-reuse edges, from the end of each earlier occupant of an
 * occupancy's addresses to its start. */
static int reuse_edges(cpe *c, const ds_plan *p)
{
	const ds_graph *g = c->g;
	for (int m = 0; m < DS_NMEM; m++)
		sm_reset(&c->sm[m]);
	c->nbo = 0;
	for (int32_t i = 0; i < p->len; i++) {
		int32_t v = p->order[i], b = c->nbuf[v];
		int k = c->kind[v];
		if (k == K_FREE || k == K_SOUT) {
			c->occ_end[c->cur_occ[b]] = v;
			c->bo_e[c->cur_occ[b]] = i;
			continue;
		}
		if (k != K_ALLOC && k != K_SIN)
			continue;
		segmap *s = &c->sm[g->buf_mem[b]];
		int64_t x = occ_offset(c, p, v), end = x + g->buf_size[b];
		for (int32_t j = sm_find(s, x); j < s->n && s->lo[j] < end;
		     j++) {
			int32_t o = s->occ[j];
			if (o < 0 || c->occ_mark[o] == v || c->online)
				continue;
			c->occ_mark[o] = v;
			/* the backbone passed ds_replay: no live overlap */
			DS_ASSERT(c->occ_end[o] >= 0);
			if (add_edge(c, c->occ_end[o], v, E_REUSE))
				return DS_ENOMEM;
		}
		int32_t o = c->nbo++;
		c->occ_end[o] = -1;
		c->occ_mark[o] = -1;
		c->bo_lo[o] = x;
		c->bo_hi[o] = end;
		c->bo_s[o] = i;
		c->bo_e[o] = p->len;
		c->occ_of[v] = o;
		c->cur_occ[b] = o;
		if (sm_set(c->h, s, x, g->buf_size[b], o))
			return oom(c);
	}
	/* per memory, in order of start (a stable counting sort), each
	 * list closed by a sentinel -1 */
	for (int m = 0; m <= DS_NMEM; m++)
		c->mo_off[m] = m;
	for (int32_t o = 0; o < c->nbo; o++)
		c->mo_off[g->buf_mem[c->nbuf[p->order[c->bo_s[o]]]] + 1]++;
	for (int m = 0; m < DS_NMEM; m++)
		c->mo_off[m + 1] += c->mo_off[m] - m;
	int32_t fill[DS_NMEM];
	memcpy(fill, c->mo_off, sizeof fill);
	for (int32_t o = 0; o < c->nbo; o++) {
		int m = g->buf_mem[c->nbuf[p->order[c->bo_s[o]]]];
		c->mo_idx[o] = fill[m];
		c->mo_list[fill[m]++] = o;
	}
	for (int m = 0; m < DS_NMEM; m++) {
		DS_ASSERT(fill[m] == c->mo_off[m + 1] - 1);
		c->mo_list[fill[m]] = -1;
	}
	return DS_OK;
}

/* CSR by source and by target over the collected edges. */
static int build_csr(cpe *c)
{
	const int32_t T = c->total;
	const ds_heap *h = c->h;
	ds_free(h, c->s_adj);
	ds_free(h, c->p_adj);
	ds_free(h, c->s_typ);
	ds_free(h, c->p_typ);
	size_t m = (size_t)(c->ne ? c->ne : 1);
	c->s_adj = ds_alloc(h, m, sizeof *c->s_adj);
	c->p_adj = ds_alloc(h, m, sizeof *c->p_adj);
	c->s_typ = ds_alloc(h, m, 1);
	c->p_typ = ds_alloc(h, m, 1);
	if (!c->s_adj || !c->p_adj || !c->s_typ || !c->p_typ)
		return oom(c);
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

/* vstay change when v is issued. */
static int64_t dvstay(const cpe *c, int32_t v)
{
	int k = c->kind[v];
	if (k != K_ALLOC && k != K_FREE)
		return 0;
	int32_t b = c->nbuf[v];
	if (!ds_mem_stays(c->g->buf_mem[b]))
		return 0;
	return k == K_ALLOC ? c->g->buf_size[b] : -c->g->buf_size[b];
}

/* Everything the list scheduler needs from backbone p. */
static int set_backbone(cpe *c, const ds_plan *p, bool online)
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
		if ((rc = add_edge(c, g->esrc[k], g->edst[k], E_TIMED)))
			return rc;
	if ((rc = spill_edges(c, p)) || (rc = reuse_edges(c, p)) ||
	    (rc = build_csr(c)))
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
		x += dvstay(c, p->order[i]);
	}
	c->prof[p->len] = x;
	return DS_OK;
}

/* ---- priorities ---- */

/* Ranks from key: nodes sorted by (key, backbone position), so node Ids
 * never matter.  A merge sort of the backbone order (stable), with tmp
 * and stack as its two buffers. */
static void set_rank(cpe *c, const int64_t *key)
{
	const int32_t T = c->total;
	int32_t *a = c->tmp, *b = c->stack;
	for (int32_t i = 0; i < T; i++)
		a[i] = c->bb[i];
	for (int32_t w = 1; w < T; w *= 2) {
		for (int32_t lo = 0; lo < T; lo += 2 * w) {
			int32_t mid = lo + w < T ? lo + w : T;
			int32_t hi = lo + 2 * w < T ? lo + 2 * w : T;
			int32_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				b[k++] = key[a[j]] < key[a[i]] ? a[j++]
							       : a[i++];
			while (i < mid)
				b[k++] = a[i++];
			while (j < hi)
				b[k++] = a[j++];
		}
		int32_t *t = a;
		a = b;
		b = t;
	}
	for (int32_t i = 0; i < T; i++)
		c->rank[a[i]] = i;
}

/* ---- the vstay guard ---- */

/* The guard's value at backbone position f is the vstay the plan has when
 * the frontier (the first backbone node not issued yet) stands at f: the
 * backbone's own profile there plus the changes of the nodes issued ahead
 * of the frontier.  Keeping every value from the frontier on within the
 * limit means that issuing the rest in backbone order stays within it: the
 * backbone's next operation is always allowed. */
static void guard_commit(cpe *c, int32_t v)
{
	int64_t d = dvstay(c, v);
	/* the frontier node itself: its change is in the profile, and the
	 * frontier moves past it at once */
	if (!c->guard_on || d == 0 || c->pos[v] == c->front)
		return;
	DS_ASSERT(c->pos[v] > c->front);
	st_add(&c->guard, 1, 0, c->guard.size - 1, c->front, c->pos[v], d);
}

/* Would issuing nodes[0..k) (ALLOCs and SPILL_INs: they only add) keep
 * the guard within the limit?  Each adds from the frontier to its own
 * backbone position.  Sorts nodes by position. */
static bool guard_allows(cpe *c, int32_t *nodes, int32_t k)
{
	if (!c->guard_on)
		return true;
	for (int32_t i = 1; i < k; i++)
		for (int32_t j = i;
		     j > 0 && c->pos[nodes[j]] < c->pos[nodes[j - 1]]; j--) {
			int32_t t = nodes[j];
			nodes[j] = nodes[j - 1];
			nodes[j - 1] = t;
		}
	int64_t add = 0;
	for (int32_t i = 0; i < k; i++)
		add += dvstay(c, nodes[i]);
	/* the tree's overall maximum bounds every range: often enough */
	if (add <= 0 || c->guard.mx[1] + add <= c->limit)
		return true;
	int32_t lo = c->front;
	for (int32_t i = 0; i < k && add > 0; i++) {
		int64_t d = dvstay(c, nodes[i]);
		if (d <= 0)
			continue;
		int32_t hi = c->pos[nodes[i]];
		if (st_max(&c->guard, 1, 0, c->guard.size - 1, lo, hi) + add >
		    c->limit)
			return false;
		add -= d;
		lo = hi + 1;
	}
	return true;
}

/* ---- windows ---- */

/* Re-placement: among the windows of size bytes in segmap s that are free
 * in the order so far (left- or right-aligned on a segment), the one whose
 * previous occupants all ended earliest, then the tightest fit; -1 when
 * none is free. */
static int64_t earliest_window(const cpe *c, const segmap *s, int64_t size)
{
	int64_t best = -1, blast = 0, bfit = 0;
	for (int32_t i = 0; i < s->n;) {
		int32_t o = s->occ[i];
		if (o >= 0 && c->occ_endt[o] == INT64_MAX) {
			i++;
			continue;
		}
		/* a free run [rlo, rhi) */
		int32_t j = i;
		while (j < s->n &&
		       (s->occ[j] < 0 || c->occ_endt[s->occ[j]] != INT64_MAX))
			j++;
		int64_t rlo = s->lo[i], rhi = sm_hi(s, j - 1);
		for (int32_t k = i; k < j && rhi - rlo >= size; k++) {
			for (int side = 0; side < 2; side++) {
				int64_t x = side ? sm_hi(s, k) - size
						 : s->lo[k];
				if (x < rlo || x + size > rhi)
					continue;
				int64_t last = -1;
				for (int32_t q = side ? sm_find(s, x) : k;
				     q < s->n && s->lo[q] < x + size; q++)
					if (s->occ[q] >= 0 &&
					    c->occ_endt[s->occ[q]] > last)
						last = c->occ_endt[s->occ[q]];
				int64_t fit = rhi - rlo - size;
				if (best < 0 || last < blast ||
				    (last == blast &&
				     (fit < bfit ||
				      (fit == bfit && x < best)))) {
					best = x;
					blast = last;
					bfit = fit;
				}
			}
		}
		i = j;
	}
	return best;
}

/* Is [x, x + size) free in the order so far?  *last gets the time its
 * previous occupants all ended. */
static bool window_at(const cpe *c, const segmap *s, int64_t x, int64_t size,
		      int64_t *last)
{
	*last = -1;
	for (int32_t q = sm_find(s, x); q < s->n && s->lo[q] < x + size;
	     q++) {
		int32_t o = s->occ[q];
		if (o < 0)
			continue;
		if (c->occ_endt[o] == INT64_MAX)
			return false;
		if (c->occ_endt[o] > *last)
			*last = c->occ_endt[o];
	}
	return true;
}

static bool starts_occ(const cpe *c, int32_t v)
{
	return c->kind[v] == K_ALLOC || c->kind[v] == K_SIN;
}

/* v (ALLOC or SPILL_IN) occupies [x, x + size) from now on. */
static int occupy(cpe *c, int32_t v, int64_t x)
{
	const ds_graph *g = c->g;
	int32_t b = c->nbuf[v], o = c->nocc++;
	DS_ASSERT(o < c->g->nbuf + c->nspill);
	c->occ_endt[o] = INT64_MAX;
	c->cur_occ[b] = o;
	if (c->kind[v] == K_ALLOC)
		c->off[b] = x;
	else
		c->soff[(v - c->n) / 2] = x;
	c->bx[b] = x;
	return sm_set(c->h, &c->sm[g->buf_mem[b]], x, g->buf_size[b], o);
}

/* Backbone occupancies still to start that an online placement looks at:
 * beyond, a placement off the backbone's offset is not tried, and one on
 * it waits for the frontier to come closer. */
#define MAX_RESERVED 256

/* The next backbone occupancy not started yet at or after index j of its
 * memory's list (the list ends with a sentinel that never starts): each
 * index points on to a later one once started, with path halving, so
 * that the scans below only meet occupancies still to start. */
static int32_t next_unstarted(cpe *c, int32_t j)
{
	while (c->skip[j] != j) {
		c->skip[j] = c->skip[c->skip[j]];
		j = c->skip[j];
	}
	return j;
}

/* Online: may the occupancy v starts take its backbone window at time t?
 * The window must be free and vacated by t, and no backbone occupancy
 * that comes before v's and overlaps it may be still to start (that one
 * needs the window first). */
static bool bb_window_ok(cpe *c, int32_t v, int64_t t, int64_t *last)
{
	int m = c->g->buf_mem[c->nbuf[v]];
	int32_t me = c->occ_of[v];
	int64_t lo = c->bo_lo[me], hi = c->bo_hi[me];
	if (!window_at(c, &c->sm[m], lo, hi - lo, last) || *last > t)
		return false;
	/* the occupancy that stood in the way last time often still does */
	int32_t bl = c->blocker[v], seen = 0;
	if (bl >= 0 && !c->bo_started[bl])
		return false;
	for (int32_t j = next_unstarted(c, c->mo_off[m]);;
	     j = next_unstarted(c, j + 1)) {
		int32_t o = c->mo_list[j];
		if (o < 0 || c->bo_s[o] >= c->bo_s[me])
			return true;
		if (++seen > MAX_RESERVED)
			return false; /* too far ahead to tell: wait */
		if (c->bo_lo[o] < hi && lo < c->bo_hi[o]) {
			c->blocker[v] = o;
			return false;
		}
	}
}

/* Removes [lo, hi) from the *n sorted disjoint stretches in c->resv and
 * drops those left shorter than size: only the stretches it touches are
 * looked at. */
static void resv_cut(cpe *c, int32_t *n, int64_t lo, int64_t hi, int64_t size)
{
	int64_t *r = c->resv;
	int32_t i = 0, z = *n;
	/* the first stretch ending after lo */
	while (i < z) {
		int32_t mid = i + (z - i) / 2;
		if (r[2 * mid + 1] <= lo)
			i = mid + 1;
		else
			z = mid;
	}
	/* stretches i..j-1 meet [lo, hi); at most two pieces are left of
	 * them: the head of the first and the tail of the last */
	int32_t j = i;
	while (j < *n && r[2 * j] < hi)
		j++;
	if (j == i)
		return;
	int64_t piece[4] = {r[2 * i], lo, hi, r[2 * j - 1]};
	int32_t k = 0;
	int64_t keep[4];
	for (int q = 0; q < 4; q += 2)
		if (piece[q + 1] - piece[q] >= size) {
			keep[k++] = piece[q];
			keep[k++] = piece[q + 1];
		}
	int32_t np = k / 2, tail = *n - j;
	memmove(r + 2 * (i + np), r + 2 * j, (size_t)tail * 2 * sizeof *r);
	memcpy(r + 2 * i, keep, (size_t)k * sizeof *r);
	*n = i + np + tail;
}

/* Online: the tightest window of size bytes in segmap s that is free now,
 * was vacated by time t and avoids the addresses the backbone still needs
 * while the occupancy v starts lives: those of every backbone occupancy
 * not started yet (other than v's) that starts before v's ends.  Placed
 * there, v never holds what the backbone's next operation needs (see
 * frontier_op).  -1 when there is none.  The stretches allowed (free runs
 * minus those addresses) are kept in c->resv; candidates are aligned on
 * their ends and on segment boundaries. */
static int64_t alt_window(cpe *c, int32_t v, const segmap *s, int64_t size,
			  int64_t t, int32_t until, int64_t *last_out)
{
	int64_t *r = c->resv;
	int32_t n = 0;
	/* the free runs long enough */
	for (int32_t i = 0; i < s->n; i++) {
		int32_t o = s->occ[i];
		if (o >= 0 && c->occ_endt[o] == INT64_MAX)
			continue;
		int32_t j = i;
		while (j + 1 < s->n &&
		       (s->occ[j + 1] < 0 ||
			c->occ_endt[s->occ[j + 1]] != INT64_MAX))
			j++;
		if (sm_hi(s, j) - s->lo[i] >= size) {
			r[2 * n] = s->lo[i];
			r[2 * n++ + 1] = sm_hi(s, j);
		}
		i = j;
	}
	/* minus the reservations, giving up as soon as nothing is left */
	int m = c->g->buf_mem[c->nbuf[v]];
	int32_t me = c->occ_of[v], seen = 0;
	for (int32_t j = next_unstarted(c, c->mo_off[m]); n > 0;
	     j = next_unstarted(c, j + 1)) {
		int32_t o = c->mo_list[j];
		if (o < 0 || c->bo_s[o] > until)
			break;
		if (o == me)
			continue;
		if (++seen > MAX_RESERVED)
			return -1;
		resv_cut(c, &n, c->bo_lo[o], c->bo_hi[o], size);
	}
	int64_t best = -1, bfit = 0;
	for (int32_t q = 0; q < n; q++) {
		int64_t a = r[2 * q], z = r[2 * q + 1];
		int32_t i = sm_find(s, a), j = sm_find(s, z - 1);
		/* candidates: both ends of the stretch, and aligned on each
		 * segment's start or end */
		for (int32_t k = 2 * i - 2; k < 2 * j + 2; k++) {
			int64_t x = k == 2 * i - 2   ? a
				    : k == 2 * i - 1 ? z - size
				    : k % 2	     ? sm_hi(s, k / 2) - size
						     : s->lo[k / 2];
			int64_t last;
			if (x < a || x + size > z ||
			    !window_at(c, s, x, size, &last) || last > t)
				continue;
			int64_t fit = z - a - size;
			if (best < 0 || fit < bfit ||
			    (fit == bfit && x < best)) {
				best = x;
				bfit = fit;
				*last_out = last;
			}
		}
	}
	return best;
}

/* Is v a node of a spill dropped in the pass being built? */
static bool is_elided(const cpe *c, int32_t v)
{
	return v >= c->n && c->elided[(v - c->n) / 2];
}

/* Online: may the spill whose SPILL_OUT is v be dropped, its buffer kept
 * where it is until the occupancy its SPILL_IN would start ends?  Only
 * when no backbone occupancy still to start before that end needs those
 * addresses, the rule alt_window follows: the buffer then never holds
 * what the backbone's next operation needs (see frontier_op).  A dropped
 * spill saves its traffic, its trips on MTE3 and MTE2, and the wait of
 * the users behind its SPILL_IN; peak_vstay does not count spills. */
static bool can_elide(cpe *c, int32_t v)
{
	const ds_graph *g = c->g;
	int32_t b = c->nbuf[v];
	int m = g->buf_mem[b];
	int64_t lo = c->bx[b], hi = lo + g->buf_size[b];
	int32_t me = c->occ_of[v + 1], until = c->bo_e[me], seen = 0;
	DS_ASSERT(c->kind[v] == K_SOUT && c->online);
	for (int32_t j = next_unstarted(c, c->mo_off[m]);;
	     j = next_unstarted(c, j + 1)) {
		int32_t o = c->mo_list[j];
		if (o < 0 || c->bo_s[o] > until)
			return true;
		if (o == me)
			continue;
		if (++seen > MAX_RESERVED)
			return false;
		if (c->bo_lo[o] < hi && lo < c->bo_hi[o])
			return false;
	}
}

/* Online: windows at time t for the occupancies nodes[0..k) start, all or
 * none (*ok): the backbone's offset when allowed, else a window outside
 * the backbone's reservations.  c->vacated gets when each was vacated. */
static int place_now(cpe *c, const int32_t *nodes, int32_t k, int64_t t,
		     bool *ok)
{
	const ds_graph *g = c->g;
	int32_t nstarts = 0, nocc = c->nocc;
	bool snapped[DS_NMEM] = {false};
	for (int32_t i = 0; i < k; i++)
		nstarts += starts_occ(c, nodes[i]);
	*ok = true;
	for (int32_t i = 0; i < k && *ok; i++) {
		int32_t v = nodes[i], b = c->nbuf[v];
		if (!starts_occ(c, v))
			continue;
		int m = g->buf_mem[b];
		if (nstarts > 1 && !snapped[m]) {
			/* all or none: keep what to undo */
			if (sm_copy(c->h, &c->snap[m], &c->sm[m]))
				return oom(c);
			snapped[m] = true;
		}
		int64_t last = -1, x = c->bo_lo[c->occ_of[v]];
		int32_t me = c->occ_of[v], fr = c->pos[g->buf_free[b]];
		if (c->elide && c->bo_e[me] < fr) {
			/* its occupancy ends in a spill: a window free until
			 * its FREE lets that spill be dropped (can_elide) */
			x = alt_window(c, v, &c->sm[m], g->buf_size[b], t, fr,
				       &last);
			if (x >= 0)
				goto found;
			x = c->bo_lo[me];
		}
		if (!bb_window_ok(c, v, t, &last)) {
			/* no other window either, unless memory m changed
			 * or time vacated more of it since the last try */
			if (c->alt_ver[v] == c->mver[m] && t < c->alt_retry[v])
				x = -1;
			else
				x = alt_window(c, v, &c->sm[m], g->buf_size[b],
					       t, c->bo_e[me], &last);
			if (x < 0) {
				c->alt_ver[v] = c->mver[m];
				c->alt_retry[v] = c->mlast[m] > t ? c->mlast[m]
								  : INT64_MAX;
			}
		}
		if (x < 0) {
			*ok = false;
			break;
		}
	found:
		if (occupy(c, v, x))
			return oom(c);
		c->vacated[v] = last;
	}
	if (*ok)
		return DS_OK;
	c->nocc = nocc;
	for (int m = 0; m < DS_NMEM; m++)
		if (snapped[m] && sm_copy(c->h, &c->sm[m], &c->snap[m]))
			return oom(c);
	return DS_OK;
}

/* ---- list scheduling ---- */

/* A node whose predecessors are now all issued or parked ALLOCs changes
 * state: an ALLOC parks (it is issued later, right before a successor:
 * it costs nothing and an early ALLOC only holds memory), a FREE is
 * issued at once, an operation becomes a candidate of its pipe. */
static void touch(cpe *c, int32_t v)
{
	if (c->state[v] != S_WAIT || c->npend[v] != c->nparked[v])
		return;
	int k = c->kind[v];
	if (k == K_ALLOC && c->has_user[v]) {
		c->state[v] = S_PARKED;
		c->fin[v] = c->avail[v];
		for (int32_t j = c->s_off[v]; j < c->s_off[v + 1]; j++) {
			int32_t w = c->s_adj[j];
			c->nparked[w]++;
			if (c->s_typ[j] != E_ORDER && c->avail[w] < c->fin[v])
				c->avail[w] = c->fin[v];
			touch(c, w);
		}
	} else if (k == K_FREE || k == K_ALLOC) {
		/* an ALLOC nobody would issue (no operation follows it)
		 * goes at once, like a FREE */
		if (c->npend[v] == 0) {
			c->state[v] = S_QUEUED;
			ds_heapq_push(&c->frees, c->pos[v], v);
		}
	} else if (c->npend[v] == 0 &&
		   (is_elided(c, v) ||
		    (k == K_SOUT && c->elide && can_elide(c, v)))) {
		/* a dropped spill costs nothing: it goes at once too */
		c->elided[(v - c->n) / 2] = 1;
		c->state[v] = S_QUEUED;
		ds_heapq_push(&c->frees, c->pos[v], v);
	} else {
		DS_ASSERT(c->pipe[v] >= 0);
		c->state[v] = S_QUEUED;
		ds_heapq_push(&c->waiting[c->pipe[v]], c->avail[v], v);
	}
}

/* Issues v at time start: appends it to the order, commits it to the
 * guard, ends its occupancy (FREE, SPILL_OUT) and releases its
 * successors. */
static void issue(cpe *c, int32_t v, int64_t start)
{
	bool parked = c->state[v] == S_PARKED, dropped = is_elided(c, v);
	guard_commit(c, v);
	c->state[v] = S_ISSUED;
	c->out[c->nout++] = v;
	c->start[v] = start;
	c->fin[v] = start + (dropped ? 0 : c->cyc[v]);
	if (c->online && c->kind[v] != K_OP) {
		int m = c->g->buf_mem[c->nbuf[v]];
		c->mver[m]++;
		if (starts_occ(c, v)) {
			int32_t o = c->occ_of[v];
			c->bo_started[o] = 1;
			c->skip[c->mo_idx[o]] = c->mo_idx[o] + 1;
		}
		/* a dropped spill's buffer stays where it is */
		if ((c->kind[v] == K_FREE || c->kind[v] == K_SOUT) &&
		    !dropped) {
			c->occ_endt[c->cur_occ[c->nbuf[v]]] = c->fin[v];
			if (c->fin[v] > c->mlast[m])
				c->mlast[m] = c->fin[v];
		}
	}
	while (c->front < c->total && c->state[c->bb[c->front]] == S_ISSUED)
		c->front++;
	for (int32_t j = c->s_off[v]; j < c->s_off[v + 1]; j++) {
		int32_t w = c->s_adj[j];
		c->npend[w]--;
		if (parked)
			c->nparked[w]--;
		if (c->s_typ[j] != E_ORDER && c->avail[w] < c->fin[v])
			c->avail[w] = c->fin[v];
		touch(c, w);
	}
}

static int drain_frees(cpe *c)
{
	while (c->frees.n > 0) {
		int32_t v = ds_heapq_pop(&c->frees);
		if (c->online && c->kind[v] == K_ALLOC) {
			/* an ALLOC without users: the backbone's offset,
			 * if that is free, else give up */
			int64_t last;
			if (!bb_window_ok(c, v, INT64_MAX, &last)) {
				c->stuck = true;
				return DS_OK;
			}
			if (occupy(c, v, c->bo_lo[c->occ_of[v]]))
				return oom(c);
			if (c->avail[v] < last)
				c->avail[v] = last;
		}
		issue(c, v, c->avail[v]);
	}
	return DS_OK;
}

/* The parked ALLOCs v waits for (and theirs) into c->tmp from index *k. */
static void gather_parked(cpe *c, int32_t v, int32_t *k)
{
	for (int32_t j = c->p_off[v]; j < c->p_off[v + 1]; j++) {
		int32_t a = c->p_adj[j];
		if (c->state[a] != S_PARKED || c->mark[a] == c->stamp)
			continue;
		c->mark[a] = c->stamp;
		gather_parked(c, a, k);
		c->tmp[(*k)++] = a;
	}
}

/* Can candidate u be issued at time t?  Its occupancy starts (its parked
 * ALLOCs, itself if a SPILL_IN) must pass the guard and, online, find
 * memory vacated by t, where they are then placed.  tmp[0..*k) gets the
 * parked ALLOCs in issue order. */
static int try_candidate(cpe *c, int32_t u, int64_t t, int32_t *k, bool *ok)
{
	*k = 0;
	c->stamp++;
	gather_parked(c, u, k);
	/* in backbone order: a topological order of them too, and one that
	 * does not depend on the order of the edges */
	for (int32_t i = 1; i < *k; i++)
		for (int32_t j = i;
		     j > 0 && c->pos[c->tmp[j]] < c->pos[c->tmp[j - 1]]; j--) {
			int32_t x = c->tmp[j];
			c->tmp[j] = c->tmp[j - 1];
			c->tmp[j - 1] = x;
		}
	int32_t *set = c->tmp + *k, ns = *k;
	memcpy(set, c->tmp, (size_t)*k * sizeof *set);
	if (c->kind[u] == K_SIN)
		set[ns++] = u;
	*ok = guard_allows(c, set, ns);
	if (*ok && c->online)
		return place_now(c, set, ns, t, ok);
	return DS_OK;
}

/* The backbone's first operation not issued yet.  Everything before it in
 * the backbone is issued or a parked ALLOC, so it is a candidate; the
 * guard lets it pass; fixed, the reuse edges keep its memory valid;
 * online, its backbone offsets are free once vacated: every backbone
 * occupancy before it has ended, and nothing issued ahead holds them (see
 * bb_window_ok and reserve). */
static int32_t frontier_op(cpe *c)
{
	while (c->gfront < c->total) {
		int32_t v = c->bb[c->gfront];
		if (c->state[v] != S_ISSUED && c->kind[v] != K_ALLOC &&
		    c->kind[v] != K_FREE)
			return v;
		c->gfront++;
	}
	return -1;
}

/* Candidates tried per decision before only the frontier operation is: a
 * refused candidate stays, and retrying all of them at every decision
 * would cost O(N) each time. */
#define MAX_TRIES 4

/* Tries to issue the best candidate of idle pipe p at time t.  Candidates
 * that are refused wait for a later decision. */
static int issue_on_pipe(cpe *c, int32_t p, int64_t t, bool *done)
{
	ds_heapq *w = &c->waiting[p], *r = &c->ready[p];
	int rc;
	while (w->n > 0 && w->key[0] <= t) {
		int32_t v = ds_heapq_pop(w);
		ds_heapq_push(r, c->rank[v], v);
	}
	int32_t nrej = 0, v = -1, k = 0, g = frontier_op(c), drop = -1;
	bool ok = false, tried_g = false;
	while (r->n > 0 && nrej < MAX_TRIES) {
		int32_t u = ds_heapq_pop(r);
		if (c->state[u] == S_ISSUED)
			continue; /* issued as the frontier operation */
		if (c->kind[u] == K_SOUT && c->elide && can_elide(c, u)) {
			/* memory freed up since it got ready: drop it */
			drop = u;
			break;
		}
		tried_g |= u == g;
		if ((rc = try_candidate(c, u, t, &k, &ok)))
			return rc;
		if (ok) {
			v = u;
			break;
		}
		c->stack[nrej++] = u;
	}
	for (int32_t i = 0; i < nrej; i++)
		ds_heapq_push(r, c->rank[c->stack[i]], c->stack[i]);
	if (drop >= 0) {
		c->elided[(drop - c->n) / 2] = 1;
		issue(c, drop, c->avail[drop]);
		*done = true;
		return drain_frees(c);
	}
	if (v < 0 && !tried_g && g >= 0 && c->pipe[g] == p &&
	    c->state[g] == S_QUEUED && c->avail[g] <= t) {
		/* it stays in a heap: skipped there once issued */
		if ((rc = try_candidate(c, g, t, &k, &ok)))
			return rc;
		if (ok)
			v = g;
	}
	*done = v >= 0;
	if (v < 0)
		return DS_OK;
	for (int32_t i = 0; i < k; i++) {
		int32_t a = c->tmp[i];
		/* online, an ALLOC waits for its window to be vacated */
		if (c->online && c->avail[a] < c->vacated[a])
			c->avail[a] = c->vacated[a];
		issue(c, a, c->avail[a]);
	}
	DS_ASSERT(c->avail[v] <= t);
	issue(c, v, t);
	c->pfree[p] = c->fin[v];
	return drain_frees(c);
}

/* Non-delay list scheduling of the whole plan over the backbone's
 * constraint graph: c->out gets the order, c->start and c->fin the times
 * (the replay's, or later ones), online also c->off and c->soff.  *ok is
 * false if the simulation gets stuck, which the rules above rule out. */
static int simulate(cpe *c, bool *ok)
{
	const int32_t T = c->total;
	int rc;
	for (int32_t v = 0; v < T; v++) {
		c->state[v] = S_WAIT;
		c->npend[v] = c->p_off[v + 1] - c->p_off[v];
		c->nparked[v] = 0;
		c->avail[v] = 0;
		c->mark[v] = 0;
		c->blocker[v] = -1;
		c->alt_ver[v] = -1;
	}
	c->stamp = 0;
	for (int32_t p = 0; p < c->npipes; p++) {
		c->waiting[p].n = 0;
		c->ready[p].n = 0;
		c->pfree[p] = 0;
	}
	if (c->guard_on)
		st_build(&c->guard, c->prof);
	for (int m = 0; m < DS_NMEM; m++) {
		sm_reset(&c->sm[m]);
		c->mver[m] = 0;
		c->mlast[m] = 0;
	}
	for (int32_t j = 0; j < c->mo_off[DS_NMEM]; j++)
		c->skip[j] = j;
	memset(c->bo_started, 0, (size_t)c->nbo);
	if (c->nspill > 0)
		memset(c->elided, 0, (size_t)c->nspill);
	c->nocc = 0;
	c->front = 0;
	c->gfront = 0;
	c->nout = 0;
	c->frees.n = 0;
	c->stuck = false;
	for (int32_t i = 0; i < T; i++)
		if (c->npend[c->bb[i]] == 0)
			touch(c, c->bb[i]);
	if ((rc = drain_frees(c)))
		return rc;
	int64_t t = 0;
	while (c->nout < T && !c->stuck) {
		bool progress = true;
		while (progress && !c->stuck) {
			progress = false;
			for (int32_t i = 0; i < c->npipes; i++) {
				int32_t p = c->porder[i];
				bool done = false;
				if (c->pfree[p] <= t &&
				    (rc = issue_on_pipe(c, p, t, &done)))
					return rc;
				progress |= done;
			}
		}
		if (c->nout == T || c->stuck)
			break;
		/* next event: a pipe gets free (memory may be vacated then
		 * too), or a candidate gets ready */
		int64_t next = INT64_MAX;
		for (int32_t p = 0; p < c->npipes; p++) {
			if (c->pfree[p] > t && c->pfree[p] < next)
				next = c->pfree[p];
			if (c->waiting[p].n > 0 && c->waiting[p].key[0] > t &&
			    c->waiting[p].key[0] < next)
				next = c->waiting[p].key[0];
		}
		if (next == INT64_MAX)
			c->stuck = true; /* cannot happen; refused if it does */
		t = next;
	}
	*ok = !c->stuck;
	return DS_OK;
}

/* The same list scheduling on the reversed constraint graph, priority to
 * the nodes that finish last in the forward times c->fin: a right-justified
 * schedule.  c->key gets each node's start in it, counted back from its
 * end: the latest start that keeps the reversed schedule's length, the
 * priority of the next forward pass (resource-aware, unlike the bottom
 * level).  No guard here: these are only priorities.  Clobbers the
 * forward times. */
static void simulate_back(cpe *c)
{
	const int32_t T = c->total;
	for (int32_t v = 0; v < T; v++)
		c->key[v] = -c->fin[v];
	set_rank(c, c->key);
	for (int32_t v = 0; v < T; v++) {
		c->npend[v] = c->s_off[v + 1] - c->s_off[v];
		c->avail[v] = 0;
	}
	for (int32_t p = 0; p < c->npipes; p++) {
		c->waiting[p].n = 0;
		c->ready[p].n = 0;
		c->pfree[p] = 0;
	}
	int32_t done = 0;
	c->nfree = 0;
	for (int32_t i = T - 1; i >= 0; i--)
		if (c->npend[c->bb[i]] == 0)
			c->fstack[c->nfree++] = c->bb[i];
	int64_t t = 0, end = 0;
	for (;;) {
		/* c->start holds reversed finish times */
		while (c->nfree > 0) {
			int32_t v = c->fstack[--c->nfree];
			if (c->pipe[v] >= 0) {
				ds_heapq_push(&c->waiting[c->pipe[v]],
					      c->avail[v], v);
				continue;
			}
			c->start[v] = c->avail[v];
			done++;
			for (int32_t j = c->p_off[v]; j < c->p_off[v + 1];
			     j++) {
				int32_t u = c->p_adj[j];
				if (c->p_typ[j] != E_ORDER &&
				    c->avail[u] < c->start[v])
					c->avail[u] = c->start[v];
				if (--c->npend[u] == 0)
					c->fstack[c->nfree++] = u;
			}
		}
		bool progress = false;
		for (int32_t p = 0; p < c->npipes; p++) {
			if (c->pfree[p] > t)
				continue;
			ds_heapq *w = &c->waiting[p], *r = &c->ready[p];
			while (w->n > 0 && w->key[0] <= t) {
				int32_t v = ds_heapq_pop(w);
				ds_heapq_push(r, c->rank[v], v);
			}
			if (r->n == 0)
				continue;
			int32_t v = ds_heapq_pop(r);
			c->start[v] = t + c->cyc[v];
			c->pfree[p] = c->start[v];
			if (c->start[v] > end)
				end = c->start[v];
			done++;
			progress = true;
			for (int32_t j = c->p_off[v]; j < c->p_off[v + 1];
			     j++) {
				int32_t u = c->p_adj[j];
				if (c->p_typ[j] != E_ORDER &&
				    c->avail[u] < c->start[v])
					c->avail[u] = c->start[v];
				if (--c->npend[u] == 0)
					c->fstack[c->nfree++] = u;
			}
		}
		if (progress || c->nfree > 0)
			continue;
		if (done == T)
			break;
		int64_t next = INT64_MAX;
		for (int32_t p = 0; p < c->npipes; p++) {
			int64_t ev = INT64_MAX;
			if (c->waiting[p].n > 0)
				ev = c->waiting[p].key[0] > c->pfree[p]
					     ? c->waiting[p].key[0]
					     : c->pfree[p];
			if (c->ready[p].n > 0 && c->pfree[p] < ev)
				ev = c->pfree[p];
			if (ev > t && ev < next)
				next = ev;
		}
		DS_ASSERT(next != INT64_MAX); /* a DAG always drains */
		t = next;
	}
	for (int32_t v = 0; v < T; v++)
		c->key[v] = end - c->start[v];
}

/* Online: the address-reuse edges of the order just built (c->out with
 * c->off, c->soff), by source, into c->x_off and c->x_adj: memory waits
 * the constraint graph does not show. */
static int built_reuse(cpe *c)
{
	const ds_graph *g = c->g;
	const int32_t T = c->total;
	for (int m = 0; m < DS_NMEM; m++)
		sm_reset(&c->sm[m]);
	int32_t nocc = 0;
	int64_t ne = 0;
	memset(c->x_off, 0, ((size_t)T + 1) * sizeof *c->x_off);
	/* edges as (source, target) pairs in tmp-like growable arrays */
	for (int32_t i = 0; i < c->nout; i++) {
		int32_t v = c->out[i], b = c->nbuf[v];
		int k = c->kind[v];
		if (is_elided(c, v))
			continue;
		if (k == K_FREE || k == K_SOUT) {
			c->occ_end[c->cur_occ[b]] = v;
			continue;
		}
		if (!starts_occ(c, v))
			continue;
		segmap *s = &c->sm[g->buf_mem[b]];
		int64_t x = k == K_ALLOC ? c->off[b] : c->soff[(v - c->n) / 2];
		int64_t end = x + g->buf_size[b];
		for (int32_t j = sm_find(s, x); j < s->n && s->lo[j] < end;
		     j++) {
			int32_t o = s->occ[j];
			if (o < 0 || c->occ_mark[o] == v)
				continue;
			c->occ_mark[o] = v;
			if (ds_reserve(c->h, (void **)&c->xe, &c->xe_cap,
				       2 * ne + 2, sizeof *c->xe, c->e))
				return DS_ENOMEM;
			c->xe[2 * ne] = c->occ_end[o];
			c->xe[2 * ne++ + 1] = v;
			c->x_off[c->occ_end[o] + 1]++;
		}
		int32_t o = nocc++;
		c->occ_end[o] = -1;
		c->occ_mark[o] = -1;
		c->cur_occ[b] = o;
		if (sm_set(c->h, s, x, g->buf_size[b], o))
			return oom(c);
	}
	for (int32_t v = 0; v < T; v++)
		c->x_off[v + 1] += c->x_off[v];
	if (ds_reserve(c->h, (void **)&c->x_adj, &c->x_cap, ne ? ne : 1,
		       sizeof *c->x_adj, c->e))
		return DS_ENOMEM;
	for (int32_t v = 0; v < T; v++)
		c->tmp[v] = c->x_off[v];
	for (int64_t k = 0; k < ne; k++)
		c->x_adj[c->tmp[c->xe[2 * k]]++] = c->xe[2 * k + 1];
	return DS_OK;
}

/* Priorities anchored on the busiest pipe: its operations keep their
 * forward start times, every other node gets the latest time that still
 * feeds its earliest busiest-pipe successor (successor's key minus its own
 * cycles), or its own start when it feeds none.  Loads then come in the
 * order the bottleneck consumes them.  Needs the forward times. */
static int need_keys(cpe *c)
{
	int rc = c->online ? built_reuse(c) : DS_OK;
	if (rc)
		return rc;
	for (int32_t i = c->nout - 1; i >= 0; i--) {
		int32_t v = c->out[i];
		int64_t need = INT64_MAX;
		if (c->pipe[v] != c->bneck) {
			for (int32_t j = c->s_off[v]; j < c->s_off[v + 1]; j++)
				if (c->key[c->s_adj[j]] - c->cyc[v] < need)
					need = c->key[c->s_adj[j]] - c->cyc[v];
			for (int32_t j = c->x_off[v];
			     c->online && j < c->x_off[v + 1]; j++)
				if (c->key[c->x_adj[j]] - c->cyc[v] < need)
					need = c->key[c->x_adj[j]] - c->cyc[v];
		}
		c->key[v] = need == INT64_MAX ? c->start[v] : need;
	}
	return DS_OK;
}

/* ---- re-placement ---- */

/* Fixed mode: new offsets (c->off, c->soff) for the order c->out, each
 * where the previous occupants ended earliest at the times c->fin, so
 * that reuse edges bind less in the next round.  *ok is false when
 * fragmentation leaves an occupancy without room. */
static int replace(cpe *c, bool *ok)
{
	const ds_graph *g = c->g;
	for (int m = 0; m < DS_NMEM; m++)
		sm_reset(&c->sm[m]);
	c->nocc = 0;
	*ok = true;
	for (int32_t i = 0; i < c->nout; i++) {
		int32_t v = c->out[i], b = c->nbuf[v];
		int k = c->kind[v];
		if (k == K_FREE || k == K_SOUT) {
			c->occ_endt[c->cur_occ[b]] = c->fin[v];
			continue;
		}
		if (k != K_ALLOC && k != K_SIN)
			continue;
		int64_t x = earliest_window(c, &c->sm[g->buf_mem[b]],
					    g->buf_size[b]);
		if (x < 0) {
			*ok = false;
			return DS_OK;
		}
		if (occupy(c, v, x))
			return oom(c);
	}
	return DS_OK;
}

/* ---- plans ---- */

static int plan_alloc(const ds_graph *g, const ds_plan *in, ds_plan *p)
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
static void plan_copy(const ds_graph *g, const ds_plan *src, ds_plan *dst)
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
} best;

/* Replays cand; when it is valid, within the budgets and shorter than the
 * best so far, swaps it in.  The replay refusing a candidate would be a
 * bug here; the best plan stays safe as the candidate is not taken. */
static int consider(cpe *c, ds_plan *cand, best *b)
{
	ds_figures f;
	ds_err e2;
	int rc = ds_replay(c->g, cand, NULL, &f, &e2);
	if (rc == DS_ENOMEM)
		return oom(c);
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
 * with offsets re-placed (see replace). */
static int try_order(cpe *c, const ds_plan *bb, ds_plan *cand, best *b)
{
	const ds_graph *g = c->g;
	int rc;
	plan_copy(g, bb, cand);
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
			if (is_elided(c, v))
				continue;
			cand->order[len++] =
				v < n ? v : n + 2 * c->tmp[k] + (v - n) % 2;
		}
		cand->nspill = kept;
		cand->len = len;
		return consider(c, cand, b);
	}
	if ((rc = consider(c, cand, b)))
		return rc;
	bool ok;
	if ((rc = replace(c, &ok)) || !ok)
		return rc;
	plan_copy(g, bb, cand);
	memcpy(cand->order, c->out, (size_t)c->total * sizeof *c->out);
	memcpy(cand->offset, c->off, (size_t)g->nbuf * sizeof *c->off);
	for (int32_t k = 0; k < cand->nspill; k++)
		cand->spill[k].offset = c->soff[k];
	return consider(c, cand, b);
}

/* ---- the pass ---- */

#define DEFAULT_ROUNDS 4
#define MIN_GAIN_PERMILLE 5
#define FB_PASSES 3

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
	double tp = o ? o->traffic_budget_pct : 5;
	double pp = o ? o->peak_budget_pct : 0;
	tp = tp > 0 ? tp : 0;
	pp = pp > 0 ? pp : 0;
	b.max_ddr = b.f.extra_ddr + (int64_t)((double)b.f.extra_ddr * tp / 100);
	b.max_peak =
		b.f.peak_vstay + (int64_t)((double)b.f.peak_vstay * pp / 100);
	int64_t rounds = o && o->effort > 0 ? o->effort : DEFAULT_ROUNDS;

	cpe c;
	ds_plan cand, bb;
	memset(&cand, 0, sizeof cand);
	memset(&bb, 0, sizeof bb);
	if ((rc = cpe_init(&c, g, in, e)))
		goto out;
	if (plan_alloc(g, in, &b.plan) || plan_alloc(g, in, &cand) ||
	    plan_alloc(g, in, &bb)) {
		rc = oom(&c);
		goto out;
	}
	plan_copy(g, in, &b.plan);
	/* no guard when all L1 and UB buffers together stay within it */
	int64_t sum = 0;
	for (int32_t bf = 0; bf < g->nbuf && sum <= b.max_peak; bf++)
		if (ds_mem_stays(g->buf_mem[bf]))
			sum += g->buf_size[bf];
	for (int64_t r = 0; r < rounds && rc == DS_OK; r++) {
		int64_t before = b.f.makespan;
		/* the best plan so far is the backbone of both modes; it
		 * may have dropped spills, and then has fewer nodes */
		plan_copy(g, &b.plan, &bb);
		if (bb.nspill != c.nspill) {
			cpe_free(&c);
			if ((rc = cpe_init(&c, g, &bb, e)))
				break;
		}
		c.limit = b.max_peak;
		c.guard_on = sum > c.limit;
		for (int online = 1; online >= 0 && rc == DS_OK; online--) {
			c.elide = online;
			if ((rc = set_backbone(&c, &bb, online)))
				break;
			for (int32_t v = 0; v < c.total; v++)
				c.key[v] = c.pos[v];
			set_rank(&c, c.key);
			for (int pass = 0; pass < FB_PASSES; pass++) {
				bool ok;
				if ((rc = simulate(&c, &ok)))
					break;
				if (!ok || (rc = try_order(&c, &bb, &cand, &b)))
					break;
				if (pass == 0 && (rc = need_keys(&c)))
					break;
				if (pass > 0)
					simulate_back(&c);
				set_rank(&c, c.key);
			}
		}
		/* by default, another round only after a round that gained
		 * at least MIN_GAIN_PERMILLE; with an effort, any gain */
		int64_t gain = before - b.f.makespan;
		if (gain <= 0 || (!(o && o->effort > 0) &&
				  gain * 1000 < before * MIN_GAIN_PERMILLE))
			break;
	}
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
