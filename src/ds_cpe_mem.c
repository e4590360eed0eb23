/* ds_cpe_mem.c: CPE's memory side (prefix cm_): the backbone's
 * occupancies and address-reuse edges, the windows of the online
 * placement, the spills that may be dropped, the re-placement of
 * fixed-mode orders.
 *
 * Requires: a cpe from cpe_init (ds_cpe.h); cm_reuse_edges a backbone that
 * ds_replay accepts; the others the occupancies it recorded.
 * Guarantees: an occupancy placed online is free and vacated when it
 * starts, and clear of the addresses backbone occupancies still to start
 * need before it ends (cm_bb_window_ok, cm_alt_window, cm_can_elide), so
 * the backbone's next operation stays issuable, except that while a gang
 * is placed (cm_lifted, ds_cpe_list.c) the memories that do not stay are
 * only free and vacated; cm_replace gives every occupancy of the order
 * built a free window, or *ok false.
 * Cost: per online placement attempt O(R D + S^2) (R <= CPE_MAX_RESERVED
 * backbone occupancies still to start, D their disjoint address
 * intervals, S the address segments of the memory); O(R) per spill
 * considered for dropping; a walk O(N S). */
#include "ds_cpe.h"

#include <string.h>

/* ---- the occupancy walk ---- */

/* A walk over the occupancies of an order, the prologue cm_reuse_edges,
 * cm_built_reuse and cm_replace share: the segment maps reset, then in
 * order each node that starts an occupancy (ALLOC, SPILL_IN) or ends its
 * buffer's current one (FREE, SPILL_OUT). */
typedef struct cm_walk {
	const int32_t *order;
	int32_t len, i;	  /* i: the index after the node returned */
	bool skip_elided; /* the nodes of dropped spills are no events */
} cm_walk;

static void cm_walk_begin(cpe *c, cm_walk *w, const int32_t *order,
			  int32_t len, bool skip_elided)
{
	for (int m = 0; m < DS_NMEM; m++)
		ds_segmap_reset(&c->sm[m]);
	w->order = order;
	w->len = len;
	w->i = 0;
	w->skip_elided = skip_elided;
}

/* The next node that starts an occupancy (*starts) or ends one; -1 at the
 * end of the order. */
static int32_t cm_walk_next(const cpe *c, cm_walk *w, bool *starts)
{
	while (w->i < w->len) {
		int32_t v = w->order[w->i++];
		if (c->kind[v] == K_OP ||
		    (w->skip_elided && cpe_is_elided(c, v)))
			continue;
		*starts = cpe_starts_occ(c, v);
		return v;
	}
	return -1;
}

/* The earlier occupants of the addresses below end from segment *j of
 * map s on, each once for the start v (occ_mark): the next one, or -1. */
static int32_t cm_walk_occupant(cpe *c, const ds_segmap *s, int64_t end,
				int32_t v, int32_t *j)
{
	for (; *j < s->n && s->lo[*j] < end; (*j)++) {
		int32_t o = s->occ[*j];
		if (o < 0 || c->occ_mark[o] == v)
			continue;
		c->occ_mark[o] = v;
		return o;
	}
	return -1;
}

/* The walk's start v: occupancy o of its buffer at [x, x + size). */
static int cm_walk_start(cpe *c, int32_t v, int64_t x, int32_t o)
{
	const ds_graph *g = c->g;
	int32_t b = c->nbuf[v];
	c->occ_end[o] = -1;
	c->occ_mark[o] = -1;
	c->cur_occ[b] = o;
	if (ds_segmap_set(&c->sm[g->buf_mem[b]], x, g->buf_size[b], o))
		return cpe_oom(c);
	return DS_OK;
}

/* ---- the backbone's occupancies ---- */

/* Offset of the occupancy that node v (ALLOC or SPILL_IN) starts. */
static int64_t cm_occ_offset(const cpe *c, const ds_plan *p, int32_t v)
{
	return c->kind[v] == K_ALLOC ? p->offset[c->nbuf[v]]
				     : p->spill[(v - c->n) / 2].offset;
}

/* The backbone's occupancies per memory, in order of their start (a
 * stable counting sort), each list closed by a sentinel -1. */
static void cm_memory_lists(cpe *c, const ds_plan *p)
{
	const ds_graph *g = c->g;
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
}

/* Walks backbone p: its occupancies (bo_*, occ_of, the lists per memory)
 * and, in fixed mode, its address-reuse edges, from the end of each
 * earlier occupant of an occupancy's addresses to its start. */
int cm_reuse_edges(cpe *c, const ds_plan *p)
{
	const ds_graph *g = c->g;
	cm_walk w;
	bool st;
	int rc;
	cm_walk_begin(c, &w, p->order, p->len, false);
	c->nbo = 0;
	for (int32_t v; (v = cm_walk_next(c, &w, &st)) >= 0;) {
		int32_t b = c->nbuf[v];
		if (!st) {
			c->occ_end[c->cur_occ[b]] = v;
			c->bo_e[c->cur_occ[b]] = w.i - 1;
			continue;
		}
		ds_segmap *s = &c->sm[g->buf_mem[b]];
		int64_t x = cm_occ_offset(c, p, v), end = x + g->buf_size[b];
		for (int32_t j = ds_segmap_find(s, x), o;
		     !c->online && (o = cm_walk_occupant(c, s, end, v, &j)) >= 0;) {
			/* the backbone passed ds_replay: no live overlap */
			DS_ASSERT(c->occ_end[o] >= 0);
			if (cpe_add_edge(c, c->occ_end[o], v, E_REUSE))
				return DS_ENOMEM;
		}
		int32_t o = c->nbo++;
		c->bo_lo[o] = x;
		c->bo_hi[o] = end;
		c->bo_s[o] = w.i - 1;
		c->bo_e[o] = p->len;
		c->occ_of[v] = o;
		if ((rc = cm_walk_start(c, v, x, o)))
			return rc;
	}
	cm_memory_lists(c, p);
	return DS_OK;
}

/* ---- windows ---- */

/* Re-placement: among the windows of size bytes in ds_segmap s that are free
 * in the order so far (left- or right-aligned on a segment), the one whose
 * previous occupants all ended earliest, then the tightest fit; -1 when
 * none is free. */
static int64_t cm_earliest_window(const cpe *c, const ds_segmap *s,
				  int64_t size)
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
		int64_t rlo = s->lo[i], rhi = ds_segmap_hi(s, j - 1);
		for (int32_t k = i; k < j && rhi - rlo >= size; k++) {
			for (int side = 0; side < 2; side++) {
				int64_t x = side ? ds_segmap_hi(s, k) - size
						 : s->lo[k];
				if (x < rlo || x + size > rhi)
					continue;
				int64_t last = -1;
				for (int32_t q = side ? ds_segmap_find(s, x) : k;
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
static bool cm_window_at(const cpe *c, const ds_segmap *s, int64_t x,
			 int64_t size, int64_t *last)
{
	*last = -1;
	for (int32_t q = ds_segmap_find(s, x); q < s->n && s->lo[q] < x + size;
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

/* v (ALLOC or SPILL_IN) occupies [x, x + size) from now on. */
int cm_occupy(cpe *c, int32_t v, int64_t x)
{
	const ds_graph *g = c->g;
	int32_t b = c->nbuf[v], o = c->nocc++;
	DS_ASSERT(o < c->g->nbuf + c->nspill);
	c->occ_endt[o] = INT64_MAX;
	c->endver++;
	c->cur_occ[b] = o;
	if (c->kind[v] == K_ALLOC)
		c->off[b] = x;
	else
		c->soff[(v - c->n) / 2] = x;
	c->bx[b] = x;
	return ds_segmap_set(&c->sm[g->buf_mem[b]], x, g->buf_size[b], o);
}

/* The next backbone occupancy not started yet at or after index j of its
 * memory's list (the list ends with a sentinel that never starts): each
 * index points on to a later one once started, with path halving, so
 * that the scans below only meet occupancies still to start. */
static int32_t cm_next_unstarted(cpe *c, int32_t j)
{
#ifndef NDEBUG
	/* debug, at every power-of-two call of a simulation: the answer
	 * from scratch, a plain scan of the list */
	int32_t naive = -1;
	c->skip_calls++;
	if ((c->skip_calls & (c->skip_calls - 1)) == 0)
		for (naive = j; c->mo_list[naive] >= 0 &&
				c->bo_started[c->mo_list[naive]];
		     naive++)
			;
#endif
	while (c->skip[j] != j) {
		c->skip[j] = c->skip[c->skip[j]];
		j = c->skip[j];
	}
	DS_ASSERT(naive < 0 || naive == j);
	return j;
}

/* Online: backbone occupancy o has started: the skip structure passes
 * over it, and the Fenwick tree counts it.  O(log N). */
void cm_started(cpe *c, int32_t o)
{
	c->bo_started[o] = 1;
	c->skip[c->mo_idx[o]] = c->mo_idx[o] + 1;
	for (int32_t i = c->mo_idx[o] + 1; i <= c->mo_off[DS_NMEM];
	     i += i & -i)
		c->bo_fen[i]++;
}

/* Started occupancies at list indices [0, j). */
static int32_t cm_started_before(const cpe *c, int32_t j)
{
	int32_t k = 0;
	for (; j > 0; j -= j & -j)
		k += c->bo_fen[j];
	return k;
}

/* Backbone occupancies of memory m not started yet that start at or
 * before backbone position until: O(log N), where walking the list
 * (cm_next_unstarted) is O(count). */
static int32_t cm_unstarted_until(cpe *c, int m, int32_t until)
{
	int32_t a = c->mo_off[m], z = c->mo_off[m + 1] - 1; /* sentinel */
	const int32_t a0 = a;
	while (a < z) {
		int32_t mid = a + (z - a) / 2;
		if (c->bo_s[c->mo_list[mid]] <= until)
			a = mid + 1;
		else
			z = mid;
	}
	int32_t k = a - a0 -
		    (cm_started_before(c, a) - cm_started_before(c, a0));
#ifndef NDEBUG
	/* debug, at every power-of-two call of a simulation: the count
	 * from scratch, against the Fenwick tree kept by cm_started */
	c->fen_calls++;
	if ((c->fen_calls & (c->fen_calls - 1)) == 0) {
		int32_t naive = 0;
		for (int32_t j = a0; j < a; j++)
			naive += !c->bo_started[c->mo_list[j]];
		DS_ASSERT(naive == k);
	}
#endif
	return k;
}

/* Are the backbone's reservations lifted for v's memory?  While a gang
 * is placed (cl_gather_gang), for the memories that do not stay. */
static bool cm_lifted(const cpe *c, int32_t v)
{
	return c->relax_now && !ds_mem_stays(c->g->buf_mem[c->nbuf[v]]);
}

/* Online: may the occupancy v starts take its backbone window at time t?
 * The window must be free and vacated by t, and no backbone occupancy
 * that comes before v's and overlaps it may be still to start (that one
 * needs the window first), unless the reservations are lifted
 * (cm_lifted). */
bool cm_bb_window_ok(cpe *c, int32_t v, int64_t t, int64_t *last)
{
	int m = c->g->buf_mem[c->nbuf[v]];
	int32_t me = c->occ_of[v];
	int64_t lo = c->bo_lo[me], hi = c->bo_hi[me];
	if (!cm_window_at(c, &c->sm[m], lo, hi - lo, last) || *last > t)
		return false;
	if (cm_lifted(c, v))
		return true;
	/* the occupancy that stood in the way last time often still does */
	int32_t bl = c->blocker[v], seen = 0;
	if (bl >= 0 && !c->bo_started[bl])
		return false;
	for (int32_t j = cm_next_unstarted(c, c->mo_off[m]);;
	     j = cm_next_unstarted(c, j + 1)) {
		int32_t o = c->mo_list[j];
		if (o < 0 || c->bo_s[o] >= c->bo_s[me])
			return true;
		if (++seen > CPE_MAX_RESERVED)
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
static void cm_resv_cut(cpe *c, int32_t *n, int64_t lo, int64_t hi,
			int64_t size)
{
	int64_t *r = c->resv;
	int32_t i = 0, z = *n;
	/* most reservations miss every stretch: the span tells at once */
	if (z == 0 || hi <= r[0] || lo >= r[2 * z - 1])
		return;
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

/* Into r as [lo, hi) pairs, every run of segments of s free of started
 * occupancies (each ends at a started one or at the map's end); how
 * many. */
static int32_t cm_runs(const cpe *c, const ds_segmap *s, int64_t *r)
{
	int32_t n = 0;
	for (int32_t i = 0; i < s->n; i++) {
		int32_t o = s->occ[i];
		if (o >= 0 && c->occ_endt[o] == INT64_MAX)
			continue;
		int32_t j = i;
		while (j + 1 < s->n &&
		       (s->occ[j + 1] < 0 ||
			c->occ_endt[s->occ[j + 1]] != INT64_MAX))
			j++;
		r[2 * n] = s->lo[i];
		r[2 * n++ + 1] = ds_segmap_hi(s, j);
		i = j;
	}
	return n;
}

/* The runs of segments of s free of started occupancies that are size
 * bytes long or more, into c->resv as [lo, hi) pairs; how many.  The
 * runs of all sizes are kept (c->fr) while neither s nor an occupancy's
 * end changes: the candidates tried between two issues ask again of the
 * same map (with asserts on, a kept list is checked against a new one). */
static int32_t cm_free_runs(cpe *c, const ds_segmap *s, int64_t size)
{
	if (c->fr_map != s || c->fr_ver != s->ver ||
	    c->fr_endver != c->endver) {
		c->nfr = cm_runs(c, s, c->fr);
		c->fr_map = s;
		c->fr_ver = s->ver;
		c->fr_endver = c->endver;
	} else {
		DS_ASSERT(cm_runs(c, s, c->resv) == c->nfr &&
			  memcmp(c->resv, c->fr,
				 (size_t)c->nfr * 2 * sizeof *c->fr) == 0);
	}
	int32_t n = 0;
	for (int32_t q = 0; q < c->nfr; q++)
		if (c->fr[2 * q + 1] - c->fr[2 * q] >= size) {
			c->resv[2 * n] = c->fr[2 * q];
			c->resv[2 * n++ + 1] = c->fr[2 * q + 1];
		}
	return n;
}

/* The n stretches of c->resv minus the addresses of the backbone
 * occupancies of v's memory not started yet (other than v's) that start
 * by line until; how many are left, or -1 when there are too many such
 * occupancies to look at (counted first, in O(log N)).  Gives up as soon
 * as nothing is left. */
static int32_t cm_minus_reserved(cpe *c, int32_t v, int32_t n, int64_t size,
				 int32_t until)
{
	int m = c->g->buf_mem[c->nbuf[v]];
	int32_t me = c->occ_of[v], seen = 0;
	if (n > 0 && cm_unstarted_until(c, m, until) -
			     (!c->bo_started[me] && c->bo_s[me] <= until) >
			     CPE_MAX_RESERVED)
		return -1;
	for (int32_t j = cm_next_unstarted(c, c->mo_off[m]); n > 0;
	     j = cm_next_unstarted(c, j + 1)) {
		int32_t o = c->mo_list[j];
		if (o < 0 || c->bo_s[o] > until)
			break;
		if (o == me)
			continue;
		if (++seen > CPE_MAX_RESERVED)
			return -1;
		cm_resv_cut(c, &n, c->bo_lo[o], c->bo_hi[o], size);
	}
	return n;
}

/* Of the n stretches in c->resv, the tightest window of size bytes
 * vacated by time t (its last occupant's end in *last_out), the lowest
 * on ties; candidates: both ends of each stretch and each segment's start
 * or end within it.  -1 when there is none. */
static int64_t cm_tightest(cpe *c, const ds_segmap *s, int32_t n,
			   int64_t size, int64_t t, int64_t *last_out)
{
	const int64_t *r = c->resv;
	int64_t best = -1, bfit = 0;
	for (int32_t q = 0; q < n; q++) {
		int64_t a = r[2 * q], z = r[2 * q + 1];
		int32_t i = ds_segmap_find(s, a), j = ds_segmap_find(s, z - 1);
		for (int32_t k = 2 * i - 2; k < 2 * j + 2; k++) {
			int64_t x = k == 2 * i - 2   ? a
				    : k == 2 * i - 1 ? z - size
				    : k % 2	     ? ds_segmap_hi(s, k / 2) - size
						     : s->lo[k / 2];
			int64_t last;
			if (x < a || x + size > z ||
			    !cm_window_at(c, s, x, size, &last) || last > t)
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

/* Online: the tightest window of size bytes in ds_segmap s that is free now,
 * was vacated by time t and avoids the addresses the backbone still needs
 * while the occupancy v starts lives: those of every backbone occupancy
 * not started yet (other than v's) that starts before v's ends.  Placed
 * there, v never holds what the backbone's next operation needs (see
 * cl_frontier_op).  -1 when there is none.  The stretches allowed (free runs
 * minus those addresses) are kept in c->resv; candidates are aligned on
 * their ends and on segment boundaries. */
static int64_t cm_alt_window(cpe *c, int32_t v, const ds_segmap *s,
			     int64_t size, int64_t t, int32_t until,
			     int64_t *last_out)
{
	int32_t n = cm_free_runs(c, s, size);
	if (!cm_lifted(c, v))
		n = cm_minus_reserved(c, v, n, size, until);
	return n < 0 ? -1 : cm_tightest(c, s, n, size, t, last_out);
}

/* Online: may the spill whose SPILL_OUT is v be dropped, its buffer kept
 * where it is until the occupancy its SPILL_IN would start ends?  Only
 * when no backbone occupancy still to start before that end needs those
 * addresses, the rule cm_alt_window follows: the buffer then never holds
 * what the backbone's next operation needs (see cl_frontier_op).  A dropped
 * spill saves its traffic, its trips on MTE3 and MTE2, and the wait of
 * the users behind its SPILL_IN; peak_vstay does not count spills. */
bool cm_can_elide(cpe *c, int32_t v)
{
	const ds_graph *g = c->g;
	int32_t b = c->nbuf[v];
	int m = g->buf_mem[b];
	int64_t lo = c->bx[b], hi = lo + g->buf_size[b];
	int32_t me = c->occ_of[v + 1], until = c->bo_e[me], seen = 0;
	DS_ASSERT(c->kind[v] == K_SOUT && c->online);
	for (int32_t j = cm_next_unstarted(c, c->mo_off[m]);;
	     j = cm_next_unstarted(c, j + 1)) {
		int32_t o = c->mo_list[j];
		if (o < 0 || c->bo_s[o] > until)
			return true;
		if (o == me)
			continue;
		if (++seen > CPE_MAX_RESERVED)
			return false;
		if (c->bo_lo[o] < hi && lo < c->bo_hi[o])
			return false;
	}
}

/* Online: the window at time t for the occupancy node v starts (when it
 * was vacated in *last): with elision on and v's occupancy ending in a
 * spill, a window free until its FREE (the spill can then be dropped,
 * cm_can_elide); else the backbone's offset when allowed, else a window
 * outside the backbone's reservations; -1 when there is none. */
static int64_t cm_window_for(cpe *c, int32_t v, int64_t t, int64_t *last)
{
	const ds_graph *g = c->g;
	int32_t b = c->nbuf[v];
	int m = g->buf_mem[b];
	int32_t me = c->occ_of[v], fr = c->pos[g->buf_free[b]];
	if (c->elide && c->bo_e[me] < fr) {
		int64_t x = cm_alt_window(c, v, &c->sm[m], g->buf_size[b], t,
					  fr, last);
		if (x >= 0)
			return x;
	}
	if (cm_bb_window_ok(c, v, t, last))
		return c->bo_lo[me];
	/* no other window either, unless memory m changed or time vacated
	 * more of it since the last try, or the last try was not as free
	 * (alt_ver is 2 mver, plus 1 when it lifted the reservations) */
	const bool lifted = cm_lifted(c, v);
	const int64_t seen = c->alt_ver[v]; /* -1: no try yet */
	int64_t x = -1;
	if (seen < 0 || seen / 2 != c->mver[m] || t >= c->alt_retry[v] ||
	    (lifted && seen % 2 == 0))
		x = cm_alt_window(c, v, &c->sm[m], g->buf_size[b], t,
				  c->bo_e[me], last);
	if (x < 0) {
		c->alt_ver[v] = 2 * c->mver[m] + lifted;
		c->alt_retry[v] = c->mlast[m] > t ? c->mlast[m] : INT64_MAX;
	}
	return x;
}

/* Online: windows at time t for the occupancies nodes[0..k) start, all or
 * none (*ok): cm_window_for each.  c->vacated gets when each was
 * vacated. */
int cm_place_now(cpe *c, const int32_t *nodes, int32_t k, int64_t t,
		 bool *ok)
{
	const ds_graph *g = c->g;
	int32_t nstarts = 0, nocc = c->nocc;
	bool snapped[DS_NMEM] = {false};
	for (int32_t i = 0; i < k; i++)
		nstarts += cpe_starts_occ(c, nodes[i]);
	*ok = true;
	for (int32_t i = 0; i < k && *ok; i++) {
		int32_t v = nodes[i];
		if (!cpe_starts_occ(c, v))
			continue;
		int m = g->buf_mem[c->nbuf[v]];
		if (nstarts > 1 && !snapped[m]) {
			/* all or none: keep what to undo */
			if (ds_segmap_copy(&c->snap[m], &c->sm[m]))
				return cpe_oom(c);
			snapped[m] = true;
		}
		int64_t last = -1;
		int64_t x = cm_window_for(c, v, t, &last);
		if (x < 0) {
			*ok = false;
			break;
		}
		if (cm_occupy(c, v, x))
			return cpe_oom(c);
		c->vacated[v] = last;
	}
	if (*ok)
		return DS_OK;
	c->nocc = nocc;
	for (int m = 0; m < DS_NMEM; m++)
		if (snapped[m] && ds_segmap_copy(&c->sm[m], &c->snap[m]))
			return cpe_oom(c);
	return DS_OK;
}

/* Online: the address-reuse edges of the order just built (c->out with
 * c->off, c->soff), by source, into c->x_off and c->x_adj: memory waits
 * the constraint graph does not show. */
int cm_built_reuse(cpe *c)
{
	const ds_graph *g = c->g;
	const int32_t T = c->total;
	int32_t nocc = 0;
	int64_t ne = 0;
	cm_walk w;
	bool st;
	int rc;
	memset(c->x_off, 0, ((size_t)T + 1) * sizeof *c->x_off);
	cm_walk_begin(c, &w, c->out, c->nout, true);
	/* edges as (source, target) pairs in c->xe */
	for (int32_t v; (v = cm_walk_next(c, &w, &st)) >= 0;) {
		int32_t b = c->nbuf[v];
		if (!st) {
			c->occ_end[c->cur_occ[b]] = v;
			continue;
		}
		ds_segmap *s = &c->sm[g->buf_mem[b]];
		int64_t x = c->kind[v] == K_ALLOC ? c->off[b]
						  : c->soff[(v - c->n) / 2];
		int64_t end = x + g->buf_size[b];
		for (int32_t j = ds_segmap_find(s, x), o;
		     (o = cm_walk_occupant(c, s, end, v, &j)) >= 0;) {
			if (cpe_reserve(c, (void **)&c->xe, &c->xe_cap,
					2 * ne + 2, sizeof *c->xe))
				return DS_ENOMEM;
			c->xe[2 * ne] = c->occ_end[o];
			c->xe[2 * ne++ + 1] = v;
			c->x_off[c->occ_end[o] + 1]++;
		}
		if ((rc = cm_walk_start(c, v, x, nocc++)))
			return rc;
	}
	for (int32_t v = 0; v < T; v++)
		c->x_off[v + 1] += c->x_off[v];
	if (cpe_reserve(c, (void **)&c->x_adj, &c->x_cap, ne ? ne : 1,
			sizeof *c->x_adj))
		return DS_ENOMEM;
	for (int32_t v = 0; v < T; v++)
		c->tmp[v] = c->x_off[v];
	for (int64_t k = 0; k < ne; k++)
		c->x_adj[c->tmp[c->xe[2 * k]]++] = c->xe[2 * k + 1];
	return DS_OK;
}

/* ---- re-placement ---- */

/* Fixed mode: new offsets (c->off, c->soff) for the order c->out, each
 * where the previous occupants ended earliest at the times c->fin, so
 * that reuse edges bind less in the next round.  *ok is false when
 * fragmentation leaves an occupancy without room. */
int cm_replace(cpe *c, bool *ok)
{
	const ds_graph *g = c->g;
	cm_walk w;
	bool st;
	cm_walk_begin(c, &w, c->out, c->nout, false);
	c->nocc = 0;
	*ok = true;
	for (int32_t v; (v = cm_walk_next(c, &w, &st)) >= 0;) {
		int32_t b = c->nbuf[v];
		if (!st) {
			c->occ_endt[c->cur_occ[b]] = c->fin[v];
			c->endver++;
			continue;
		}
		int64_t x = cm_earliest_window(c, &c->sm[g->buf_mem[b]],
					       g->buf_size[b]);
		if (x < 0) {
			*ok = false;
			return DS_OK;
		}
		if (cm_occupy(c, v, x))
			return cpe_oom(c);
	}
	return DS_OK;
}
