/* ds_replay.c: the evaluator ("generalized NPU execution model").
 *
 * Requires: a graph that passed ds_builder_finish, and any plan at all.
 * Guarantees: DS_OK only when the plan obeys every rule of SPEC.md, and then
 * the figures are those SPEC.md defines; DS_EPLAN with one line naming the
 * rule, the node and the buffer otherwise.
 *
 * The final graph is the graph's edges plus spill edges plus address-reuse
 * edges.  Spill edges are kept in a transitively reduced form: for each
 * buffer its spill pairs are chained in schedule order (SPILL_IN of one pair
 * -> SPILL_OUT of the next) and each user is tied to the nearest pair on
 * each side.  SPEC.md's full set (every earlier user -> SPILL_OUT, SPILL_IN
 * -> every later user) is implied by that chain once residency holds, which
 * the memory walk checks, so finish times, and hence the makespan, are the
 * same; the reduction keeps the work linear when a buffer spills often. */
#include "ds.h"
#include "ds_segmap.h"

#include <stdio.h>
#include <string.h>

int64_t ds_node_cycles(const ds_graph *g, const ds_plan *p, int32_t v)
{
	if (v < g->n)
		return g->cycles[v];
	int32_t k = (v - g->n) / 2;
	int32_t b = p->spill[k].buf;
	bool out = (v - g->n) % 2 == 0;
	return out ? ds_spill_out_cycles(g, b) : ds_spill_in_cycles(g, b);
}

const char *ds_node_label(const ds_graph *g, const ds_plan *p, int32_t v,
			  char *buf, size_t size)
{
	if (v < 0 || (v >= g->n && (!p || v >= g->n + 2 * p->nspill))) {
		snprintf(buf, size, "%d", v);
	} else if (v >= g->n) {
		int32_t k = (v - g->n) / 2;
		snprintf(buf, size, "%d (%s of buffer %lld)", v,
			 (v - g->n) % 2 ? "SPILL_IN" : "SPILL_OUT",
			 (long long)g->buf_id[p->spill[k].buf]);
	} else if (g->kind[v] != DS_OP) {
		snprintf(buf, size, "%d (%s of buffer %lld)", v,
			 g->kind[v] == DS_ALLOC ? "ALLOC" : "FREE",
			 (long long)g->buf_id[g->buf[v]]);
	} else {
		snprintf(buf, size, "%d (%s)", v, g->ops[g->op[v]]);
	}
	return buf;
}

/* An edge list that grows; later turned into CSR by destination. */
typedef struct edges {
	int32_t *src, *dst;
	int64_t n, cap;
} edges;

/* Working state of one replay. */
typedef struct replay {
	const ds_graph *g;
	const ds_plan *p;
	const ds_heap *h;
	ds_err *e;
	int32_t total;
	int32_t *pos;
	edges extra;
	ds_arena a; /* every scratch array */
	/* address map per memory (the one CPE uses too) */
	ds_segmap seg[DS_NMEM];
	/* occupancies: one per ALLOC or SPILL_IN when offsets are given */
	int32_t *occ_buf, *occ_end, *occ_mark;
	int64_t *occ_lo;
	int32_t nocc;
	int32_t *cur_occ; /* per buffer */
} replay;

static int add_edge(replay *r, int32_t s, int32_t d)
{
	edges *x = &r->extra;
	if (x->n == x->cap) {
		int64_t nc = x->cap ? 2 * x->cap : 1024;
		int32_t *a = ds_arena_grow(&r->a, x->src, (size_t)nc, sizeof *a);
		if (!a)
			return ds_fail(r->e, DS_ENOMEM, "out of memory");
		x->src = a;
		int32_t *b = ds_arena_grow(&r->a, x->dst, (size_t)nc, sizeof *b);
		if (!b)
			return ds_fail(r->e, DS_ENOMEM, "out of memory");
		x->dst = b;
		x->cap = nc;
	}
	x->src[x->n] = s;
	x->dst[x->n] = d;
	x->n++;
	return DS_OK;
}

static int order_violation(replay *r, int32_t s, int32_t d)
{
	char a[96], b[96];
	return ds_fail(r->e, DS_EPLAN,
		       "order: node %s must come before node %s (schedule "
		       "lines %d and %d)",
		       ds_node_label(r->g, r->p, s, a, sizeof a),
		       ds_node_label(r->g, r->p, d, b, sizeof b),
		       r->pos[s] + 1, r->pos[d] + 1);
}

int ds_order_positions(const int32_t *order, int32_t len, int32_t total,
		       int32_t *pos, int code, const char *what, ds_err *e)
{
	for (int32_t v = 0; v < total; v++)
		pos[v] = -1;
	for (int32_t i = 0; i < len; i++) {
		int32_t v = order[i];
		if (v < 0 || v >= total)
			return ds_fail(e, code,
				       "%s line %d: node %d does not exist",
				       what, i + 1, v);
		if (pos[v] >= 0)
			return ds_fail(e, code,
				       "%s line %d: node %d appears twice "
				       "(first on line %d)",
				       what, i + 1, v, pos[v] + 1);
		pos[v] = i;
	}
	return DS_OK;
}

int ds_order_check(const ds_graph *g, const int32_t *order, const char *who,
		   ds_err *e)
{
	if (!order)
		return ds_fail(e, DS_EINPUT, "%s: no order given", who);
	int32_t *pos = ds_alloc(g->heap, (size_t)(g->n ? g->n : 1),
				sizeof *pos);
	if (!pos)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	char what[64];
	snprintf(what, sizeof what, "%s: order", who);
	int rc = ds_order_positions(order, g->n, g->n, pos, DS_EINPUT, what,
				    e);
	for (int32_t v = 0; v < g->n && rc == DS_OK; v++)
		for (int32_t k = g->pred_off[v]; k < g->pred_off[v + 1]; k++) {
			int32_t u = g->pred[k];
			if (pos[u] < pos[v])
				continue;
			char a[96], b[96];
			rc = ds_fail(e, DS_EINPUT,
				     "%s: not a topological order: node %s "
				     "(line %d) must come before node %s "
				     "(line %d)",
				     who, ds_node_label(g, NULL, u, a, sizeof a),
				     pos[u] + 1,
				     ds_node_label(g, NULL, v, b, sizeof b),
				     pos[v] + 1);
			break;
		}
	ds_free(g->heap, pos);
	return rc;
}

/* The schedule is a permutation of all n + 2*nspill nodes. */
static int check_permutation(replay *r)
{
	const ds_plan *p = r->p;
	if (p->len != r->total)
		return ds_fail(r->e, DS_EPLAN,
			       "schedule: %d entries, expected %d (%d nodes + "
			       "2 x %d spills)",
			       p->len, r->total, r->g->n, p->nspill);
	return ds_order_positions(p->order, p->len, r->total, r->pos,
				  DS_EPLAN, "schedule", r->e);
}

/* Spill line k's SPILL_OUT stands after line k-1's (SPEC.md: the k-th
 * spill operation is N+2k, N+2k+1). */
static int check_spill_order(replay *r)
{
	const int32_t n = r->g->n;
	for (int32_t k = 1; k < r->p->nspill; k++) {
		int32_t a = n + 2 * (k - 1), b = n + 2 * k;
		if (r->pos[b] < r->pos[a])
			return ds_fail(r->e, DS_EPLAN,
				       "spill order: spill line %d: its "
				       "SPILL_OUT %d (schedule line %d) runs "
				       "before that of line %d (%d, schedule "
				       "line %d); spill lines must follow "
				       "their SPILL_OUTs",
				       k + 1, b, r->pos[b] + 1, k, a,
				       r->pos[a] + 1);
	}
	return DS_OK;
}

/* Each buffer b's spills, in schedule order of their SPILL_OUT, into
 * list[off[b]..off[b + 1]) (off and fill zeroed, nbuf + 1 long). */
static void spill_lists(const ds_graph *g, const ds_plan *p, int32_t *off,
			int32_t *list, int32_t *fill)
{
	const int32_t n = g->n;
	for (int32_t k = 0; k < p->nspill; k++)
		off[p->spill[k].buf + 1]++;
	for (int32_t b = 0; b < g->nbuf; b++)
		off[b + 1] += off[b];
	for (int32_t i = 0; i < p->len; i++) {
		int32_t v = p->order[i];
		if (v >= n && (v - n) % 2 == 0) {
			int32_t b = p->spill[(v - n) / 2].buf;
			list[off[b] + fill[b]++] = (v - n) / 2;
		}
	}
}

/* The first of the spills l[0..cnt) (in schedule order) whose SPILL_OUT
 * stands after position at; cnt when none does.  A binary search. */
static int32_t first_after(const int32_t *pos, int32_t n, const int32_t *l,
			   int32_t cnt, int32_t at)
{
	int32_t a = 0, z = cnt;
	while (a < z) {
		int32_t mid = a + (z - a) / 2;
		if (pos[n + 2 * l[mid]] < at)
			a = mid + 1;
		else
			z = mid;
	}
	return a;
}

/* The spill edges of SPEC.md in a reduced form with the same effect: a
 * buffer's spill pairs chained in schedule order (pos), each user tied to
 * the nearest pair on each side.  With residency, also the order-only
 * edges that keep each use inside its buffer's occupancy (ALLOC or the
 * SPILL_IN before it, FREE or the SPILL_OUT after it).  The caller's edge()
 * gets them buffer by buffer, in BufId order. */
int ds_spill_edges(const ds_graph *g, const ds_plan *p, const int32_t *pos,
		   bool residency, ds_edge_fn edge, void *ud, ds_err *e)
{
	const int32_t n = g->n, S = p->nspill, nb = g->nbuf;
	int rc = DS_OK;
	int32_t *off = ds_alloc(g->heap, (size_t)nb + 1, sizeof *off);
	int32_t *list = ds_alloc(g->heap, (size_t)(S ? S : 1), sizeof *list);
	int32_t *fill = ds_alloc(g->heap, (size_t)nb + 1, sizeof *fill);
	if (!off || !list || !fill) {
		rc = ds_fail(e, DS_ENOMEM, "out of memory");
		goto out;
	}
	spill_lists(g, p, off, list, fill);
	for (int32_t b = 0; b < nb && rc == DS_OK; b++) {
		int32_t lo = off[b], hi = off[b + 1];
		int32_t al = g->buf_alloc[b], fr = g->buf_free[b];
		if (lo == hi && !residency)
			continue;
		for (int32_t j = lo; j < hi && rc == DS_OK; j++) {
			int32_t so = n + 2 * list[j], si = so + 1;
			if ((rc = edge(ud, al, so, true)) ||
			    (rc = edge(ud, so, si, true)) ||
			    (rc = edge(ud, si, fr, true)))
				break;
			if (j > lo)
				rc = edge(ud, n + 2 * list[j - 1] + 1, so, true);
		}
		if (rc == DS_OK && lo == hi)
			rc = edge(ud, al, fr, false);
		for (int32_t k = g->user_off[b];
		     k < g->user_off[b + 1] && rc == DS_OK; k++) {
			int32_t u = g->user[k];
			int32_t a = lo + first_after(pos, n, list + lo, hi - lo,
						     pos[u]);
			if (a < hi)
				rc = edge(ud, u, n + 2 * list[a], true);
			else if (residency)
				rc = edge(ud, u, fr, false);
			if (rc == DS_OK && a > lo)
				rc = edge(ud, n + 2 * list[a - 1] + 1, u, true);
			else if (rc == DS_OK && residency)
				rc = edge(ud, al, u, false);
		}
	}
out:
	ds_free(g->heap, off);
	ds_free(g->heap, list);
	ds_free(g->heap, fill);
	return rc;
}

static int replay_edge(void *ud, int32_t from, int32_t to, bool timed)
{
	DS_ASSERT(timed);
	(void)timed;
	return add_edge(ud, from, to);
}

/* Graph edges and (reduced) spill edges, each checked against the order. */
static int spill_edges(replay *r)
{
	const ds_graph *g = r->g;
	const ds_plan *p = r->p;
	for (int64_t k = 0; k < g->nedge; k++)
		if (r->pos[g->esrc[k]] > r->pos[g->edst[k]])
			return order_violation(r, g->esrc[k], g->edst[k]);
	if (p->nspill == 0)
		return DS_OK;
	int rc = ds_spill_edges(g, p, r->pos, false, replay_edge, r, r->e);
	for (int64_t k = 0; k < r->extra.n && rc == DS_OK; k++)
		if (r->pos[r->extra.src[k]] > r->pos[r->extra.dst[k]])
			rc = order_violation(r, r->extra.src[k],
					     r->extra.dst[k]);
	return rc;
}

/* Buffer b starts an occupancy at offset off with node v: check capacity and
 * overlap with live buffers, and tie v to the end of each earlier occupant
 * of these addresses (the address-reuse edges). */
static int occupy(replay *r, int32_t b, int64_t off, int32_t v)
{
	const ds_graph *g = r->g;
	int m = g->buf_mem[b];
	int64_t size = g->buf_size[b], cap = g->caps.cap[m];
	char lv[96];
	if (off < 0)
		return ds_fail(r->e, DS_EPLAN,
			       "memory: buffer %lld has no offset (node %s)",
			       (long long)g->buf_id[b],
			       ds_node_label(g, r->p, v, lv, sizeof lv));
	if (off > cap - size)
		return ds_fail(r->e, DS_EPLAN,
			       "capacity: buffer %lld at [%lld, %lld) exceeds "
			       "%s capacity %lld (node %s)",
			       (long long)g->buf_id[b], (long long)off,
			       (long long)(off + size), ds_mem_names[m],
			       (long long)cap,
			       ds_node_label(g, r->p, v, lv, sizeof lv));
	ds_segmap *sm = &r->seg[m];
	int64_t end = off + size;
	int32_t i0 = ds_segmap_find(sm, off);
	for (int32_t i = i0; i < sm->n && sm->lo[i] < end; i++) {
		int32_t o = sm->occ[i];
		if (o < 0 || r->occ_mark[o] == v)
			continue;
		if (r->occ_end[o] < 0) {
			int32_t ob = r->occ_buf[o];
			return ds_fail(r->e, DS_EPLAN,
				       "overlap: buffer %lld [%lld, %lld) "
				       "overlaps live buffer %lld [%lld, %lld) "
				       "in %s (node %s)",
				       (long long)g->buf_id[b], (long long)off,
				       (long long)end, (long long)g->buf_id[ob],
				       (long long)r->occ_lo[o],
				       (long long)(r->occ_lo[o] + g->buf_size[ob]),
				       ds_mem_names[m],
				       ds_node_label(g, r->p, v, lv, sizeof lv));
		}
		r->occ_mark[o] = v;
		int rc = add_edge(r, r->occ_end[o], v);
		if (rc)
			return rc;
	}
	int32_t o = r->nocc++;
	r->occ_buf[o] = b;
	r->occ_end[o] = -1;
	r->occ_lo[o] = off;
	r->occ_mark[o] = -1;
	r->cur_occ[b] = o;
	if (ds_segmap_set_at(sm, i0, off, size, o))
		return ds_fail(r->e, DS_ENOMEM, "out of memory");
	return DS_OK;
}

/* The memory walk's running state: which buffers are resident, the
 * vstay total, the bytes used and (L0) buffers live per memory. */
typedef struct mem_walk {
	uint8_t *res;
	bool q1;
	int64_t vstay;
	int64_t used[DS_NMEM];
	int32_t l0[DS_NMEM];
} mem_walk;

/* An operation: every buffer it lists must be resident. */
static int check_uses(replay *r, const mem_walk *w, int32_t v)
{
	const ds_graph *g = r->g;
	char lv[96];
	for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++)
		if (!w->res[g->use[k]])
			return ds_fail(r->e, DS_EPLAN,
				       "residency: node %s uses buffer %lld "
				       "while it is not resident",
				       ds_node_label(g, r->p, v, lv, sizeof lv),
				       (long long)g->buf_id[g->use[k]]);
	return DS_OK;
}

/* ALLOC v of buffer b: vstay and its peak, the one-live rule (q1). */
static int alloc_step(replay *r, mem_walk *w, int32_t v, int32_t b,
		      ds_figures *f)
{
	const ds_graph *g = r->g;
	int m = g->buf_mem[b];
	char lv[96];
	if (ds_mem_stays(m)) {
		w->vstay += g->buf_size[b];
		if (w->vstay > f->peak_vstay)
			f->peak_vstay = w->vstay;
	} else if (++w->l0[m] > 1 && w->q1) {
		return ds_fail(r->e, DS_EPLAN,
			       "one-live (--q1): buffer %lld is the second "
			       "live buffer in %s (node %s)",
			       (long long)g->buf_id[b], ds_mem_names[m],
			       ds_node_label(g, r->p, v, lv, sizeof lv));
	}
	return DS_OK;
}

/* FREE v of buffer b: it must be resident. */
static int free_step(replay *r, mem_walk *w, int32_t v, int32_t b)
{
	const ds_graph *g = r->g;
	int m = g->buf_mem[b];
	char lv[96];
	if (ds_mem_stays(m))
		w->vstay -= g->buf_size[b];
	else
		w->l0[m]--;
	if (!w->res[b])
		return ds_fail(r->e, DS_EPLAN,
			       "residency: FREE %s of a buffer that is not "
			       "resident",
			       ds_node_label(g, r->p, v, lv, sizeof lv));
	return DS_OK;
}

/* Spill node v of buffer b: a SPILL_OUT needs it resident, a SPILL_IN
 * not. */
static int spill_step(replay *r, const mem_walk *w, int32_t v, int32_t b,
		      bool out)
{
	char lv[96];
	if (out == (w->res[b] != 0))
		return DS_OK;
	return ds_fail(r->e, DS_EPLAN, "residency: %s while the buffer is %s",
		       ds_node_label(r->g, r->p, v, lv, sizeof lv),
		       out ? "not resident" : "still resident");
}

/* Buffer b's occupancy starts at node v at offset off (ALLOC or
 * SPILL_IN), or ends (FREE or SPILL_OUT): residency, bytes used and
 * their peak, and with offsets the address map. */
static int occupancy_step(replay *r, mem_walk *w, int32_t v, int32_t b,
			  bool starts, int64_t off, ds_figures *f)
{
	const ds_graph *g = r->g;
	const bool mem = r->p->offset != NULL;
	int m = g->buf_mem[b];
	if (starts) {
		int rc = mem ? occupy(r, b, off, v) : DS_OK;
		if (rc)
			return rc;
		w->res[b] = 1;
		w->used[m] += g->buf_size[b];
		if (w->used[m] > f->peak_mem[m])
			f->peak_mem[m] = w->used[m];
	} else {
		if (mem)
			r->occ_end[r->cur_occ[b]] = v;
		w->res[b] = 0;
		w->used[m] -= g->buf_size[b];
	}
	return DS_OK;
}

/* One node of the schedule in the memory walk. */
static int memory_step(replay *r, mem_walk *w, int32_t v, ds_figures *f)
{
	const ds_graph *g = r->g;
	const ds_plan *p = r->p;
	const int32_t n = g->n;
	if (v < n && g->kind[v] == DS_OP)
		return check_uses(r, w, v);
	if (v < n) {
		int32_t b = g->buf[v];
		bool alloc = g->kind[v] == DS_ALLOC;
		int rc = alloc ? alloc_step(r, w, v, b, f)
			       : free_step(r, w, v, b);
		int64_t off = alloc && p->offset ? p->offset[b] : 0;
		return rc ? rc : occupancy_step(r, w, v, b, alloc, off, f);
	}
	const ds_spill *s = &p->spill[(v - n) / 2];
	bool out = (v - n) % 2 == 0;
	int rc = spill_step(r, w, v, s->buf, out);
	return rc ? rc : occupancy_step(r, w, v, s->buf, !out, s->offset, f);
}

/* Walks the schedule: residency, the one-live rule, peak_vstay and
 * per-memory occupancy, and (with offsets) capacity, overlap, reuse edges. */
static int walk_memory(replay *r, bool q1, ds_figures *f)
{
	mem_walk w;
	memset(&w, 0, sizeof w);
	w.q1 = q1;
	w.res = ds_arena_alloc(&r->a, (size_t)r->g->nbuf, 1);
	if (!w.res)
		return ds_fail(r->e, DS_ENOMEM, "out of memory");
	int rc = DS_OK;
	for (int32_t i = 0; i < r->p->len && rc == DS_OK; i++)
		rc = memory_step(r, &w, r->p->order[i], f);
	return rc;
}

/* The extra edges (spill and address-reuse) by destination, CSR:
 * xadj[xoff[v] .. xoff[v + 1]) the sources of v's. */
static void extra_csr(const replay *r, int32_t *xoff, int32_t *xadj)
{
	const int32_t total = r->total;
	for (int64_t k = 0; k < r->extra.n; k++)
		xoff[r->extra.dst[k] + 1]++;
	for (int32_t v = 0; v < total; v++)
		xoff[v + 1] += xoff[v];
	for (int64_t k = 0; k < r->extra.n; k++)
		xadj[xoff[r->extra.dst[k]]++] = r->extra.src[k];
	for (int32_t v = total; v > 0; v--)
		xoff[v] = xoff[v - 1];
	xoff[0] = 0;
}

/* The latest finish among node v's graph and extra predecessors. */
static int64_t ready_at(const replay *r, const int64_t *fin,
			const int32_t *xoff, const int32_t *xadj, int32_t v)
{
	const ds_graph *g = r->g;
	int64_t s = 0;
	if (v < g->n)
		for (int32_t k = g->epred_off[v]; k < g->epred_off[v + 1]; k++)
			if (fin[g->epred[k]] > s)
				s = fin[g->epred[k]];
	for (int32_t k = xoff[v]; k < xoff[v + 1]; k++)
		if (fin[xadj[k]] > s)
			s = fin[xadj[k]];
	return s;
}

/* Finish times in schedule order over graph + extra edges and pipes. */
static int walk_time(replay *r, const ds_replay_opts *o, ds_figures *f)
{
	const ds_graph *g = r->g;
	const ds_plan *p = r->p;
	const int32_t n = g->n, total = r->total;
	int32_t pmte3 = ds_graph_find_pipe(g, "MTE3");
	int32_t pmte2 = ds_graph_find_pipe(g, "MTE2");
	int32_t np = g->npipes;
	if (pmte3 < 0)
		pmte3 = np++;
	if (pmte2 < 0)
		pmte2 = np++;
	ds_arena *a = &r->a;
	int64_t *fin = o && o->finish
			       ? o->finish
			       : ds_arena_alloc(a, (size_t)total, sizeof *fin);
	int64_t *pfree = ds_arena_alloc(a, (size_t)np, sizeof *pfree);
	int64_t *busy = ds_arena_alloc(a, (size_t)np, sizeof *busy);
	int32_t *xoff = ds_arena_alloc(a, (size_t)total + 1, sizeof *xoff);
	int32_t *xadj = ds_arena_alloc(
		a, (size_t)(r->extra.n ? r->extra.n : 1), sizeof *xadj);
	if (a->failed)
		return ds_fail(r->e, DS_ENOMEM, "out of memory");
	extra_csr(r, xoff, xadj);

	for (int32_t i = 0; i < p->len; i++) {
		int32_t v = p->order[i];
		int64_t s = ready_at(r, fin, xoff, xadj, v);
		int32_t pp = v < n ? g->pipe[v]
				   : ((v - n) % 2 == 0 ? pmte3 : pmte2);
		int64_t c = ds_node_cycles(g, p, v);
		if (pp >= 0 && pfree[pp] > s)
			s = pfree[pp];
		if (o && o->start)
			o->start[v] = s;
		if (!ds_add(s, c, &fin[v]) ||
		    (pp >= 0 && !ds_add(busy[pp], c, &busy[pp])))
			return ds_fail(r->e, DS_EINPUT,
				       "%s: the makespan overflows 64 bits",
				       g->source);
		if (pp >= 0)
			pfree[pp] = fin[v];
		if (fin[v] > f->makespan)
			f->makespan = fin[v];
	}
	for (int32_t q = 0; q < np; q++)
		if (busy[q] > f->lb_pipe_load)
			f->lb_pipe_load = busy[q];
	return DS_OK;
}

/* The plan's spill table against the graph: a count that fits the node
 * numbers, the tables present, known buffers. */
static int check_spill_table(const ds_graph *g, const ds_plan *p, ds_err *e)
{
	if (p->nspill < 0 || (int64_t)g->n + 2 * (int64_t)p->nspill > INT32_MAX)
		return ds_fail(e, DS_EPLAN, "spills: too many (%d)",
			       p->nspill);
	if ((p->len > 0 && !p->order) || (p->nspill > 0 && !p->spill))
		return ds_fail(e, DS_EINPUT, "replay: the plan has %s",
			       p->order || !p->len ? "no spill table"
						   : "no order");
	for (int32_t k = 0; k < p->nspill; k++)
		if (p->spill[k].buf < 0 || p->spill[k].buf >= g->nbuf)
			return ds_fail(e, DS_EPLAN,
				       "spill %d: unknown buffer index %d", k,
				       p->spill[k].buf);
	return DS_OK;
}

/* A replay of plan p on graph g, its scratch arena and the schedule
 * positions (the arena is set up even when that fails). */
static int replay_begin(replay *r, const ds_graph *g, const ds_plan *p,
			ds_err *e)
{
	memset(r, 0, sizeof *r);
	r->g = g;
	r->p = p;
	r->h = g->heap;
	r->e = e;
	r->total = g->n + 2 * p->nspill;
	ds_arena_init(&r->a, r->h);
	r->pos = ds_arena_alloc(&r->a, (size_t)r->total, sizeof *r->pos);
	if (!r->pos)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	return DS_OK;
}

/* With offsets: the occupancies (one per buffer and spill at most) and
 * each memory's address map. */
static int address_maps(replay *r)
{
	const ds_graph *g = r->g;
	int32_t nocc = g->nbuf + r->p->nspill;
	ds_arena *a = &r->a;
	r->occ_buf = ds_arena_alloc(a, (size_t)nocc, sizeof *r->occ_buf);
	r->occ_end = ds_arena_alloc(a, (size_t)nocc, sizeof *r->occ_end);
	r->occ_mark = ds_arena_alloc(a, (size_t)nocc, sizeof *r->occ_mark);
	r->occ_lo = ds_arena_alloc(a, (size_t)nocc, sizeof *r->occ_lo);
	r->cur_occ = ds_arena_alloc(a, (size_t)g->nbuf, sizeof *r->cur_occ);
	for (int m = 0; m < DS_NMEM && !a->failed; m++)
		ds_segmap_init(&r->seg[m], a, g->caps.cap[m]);
	if (a->failed)
		return ds_fail(r->e, DS_ENOMEM, "out of memory");
	return DS_OK;
}

/* The figures the walks do not measure: counts, the critical path, the
 * spills' extra DDR traffic. */
static int plan_figures(replay *r, ds_figures *f)
{
	const ds_graph *g = r->g;
	const ds_plan *p = r->p;
	f->nodes = g->n;
	f->spills = p->nspill;
	f->has_memory = p->offset != NULL;
	f->lb_critical_path = g->critical_path;
	for (int32_t k = 0; k < p->nspill; k++) {
		int32_t b = p->spill[k].buf;
		int64_t t = ds_spill_traffic(g, b);
		if (!ds_add(f->extra_ddr, t, &f->extra_ddr))
			return ds_fail(r->e, DS_EINPUT,
				       "%s: extra_ddr overflows", g->source);
	}
	return DS_OK;
}

int ds_replay(const ds_graph *g, const ds_plan *p, const ds_replay_opts *o,
	      ds_figures *out, ds_err *e)
{
	ds_figures f;
	memset(&f, 0, sizeof f);
	memset(out, 0, sizeof *out);
	int rc = check_spill_table(g, p, e);
	if (rc)
		return rc;
	replay r;
	if ((rc = replay_begin(&r, g, p, e)) ||
	    (rc = check_permutation(&r)) ||
	    (o && o->spill_order && (rc = check_spill_order(&r))) ||
	    (rc = spill_edges(&r)) ||
	    (p->offset && (rc = address_maps(&r))) ||
	    (rc = walk_memory(&r, o && o->q1, &f)) ||
	    (rc = walk_time(&r, o, &f)) || (rc = plan_figures(&r, &f)))
		goto out;
	*out = f;
out:
	ds_arena_free(&r.a);
	return rc;
}
