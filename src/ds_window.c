/* ds_window.c: a spill's uses pulled together in a finished plan, the
 * window around them spilled and placed again (wn_).
 *
 * A plan's spill of buffer b stands between two uses of b.  Where the
 * later use could run next to the earlier one, the spill buys room for
 * the work between them, but that work may need less room than the
 * spill frees, or room that another buffer could give sooner: Conv_Case0
 * runs CONV 89 after two CONVs whose 1,536-byte accumulator evicts 89's
 * inputs (a free SPILL_OUT of 768 bytes, a 384-byte one that CUBE waits
 * 918 cycles for, and their reloads: 3,522 cycles of idle CUBE in all);
 * with 89 next to CONV 86, the one spill needed is of the buffer 89 has
 * just written, whose SPILL_OUT runs while CUBE works, at the same
 * traffic.  CPE keeps its backbone's spills and DLR places orders
 * without the time in view, so neither makes that plan; here a finished
 * plan is changed where it stands:
 *
 * - the pull: the later use and its ancestors that stand after the
 *   earlier use move up to right after it (ds_order_pull_one), and the
 *   FREEs that became ready follow them;
 * - the window: a slack of graph nodes on each side of the nodes that
 *   moved, widened until no spill of the plan has one end inside and
 *   one outside (at most WN_WIDEST slacks); the spills inside are
 *   dropped;
 * - the spills, along the window on bytes: where an ALLOC or a reload
 *   finds its memory full, the resident buffer born in the window whose
 *   next use is furthest (then the one used longest ago) goes out, its
 *   SPILL_OUT right after its last use so that it runs early; a buffer
 *   that went out comes back right before its next use, or (hoisted)
 *   as early after its SPILL_OUT as its bytes fit all the way, past the
 *   FREEs standing there, so that its load runs while the room's user
 *   computes;
 * - the addresses of the occupancies inside the window, those that
 *   reach outside it keeping their offsets: a depth-first search (the
 *   large ones first, then by start), each at its old offset or at the
 *   low or high end of a gap left by those placed, at most WN_NODES
 *   steps.
 *
 * Each pair of the first SPILL_OUTs (ds_pull_pairs) is tried in turn on
 * the plan kept so far, at each slack of wn_slack, hoisted and not; the
 * shortest of those the replay accepts is kept where it is shorter than
 * that plan, with no more traffic, within the peak limit.  The pairs of
 * the later SPILL_OUTs too (as the backbone's pulls take them) changed
 * no plan of 372 generated runs nor of the six bundled graphs at four
 * budgets (2026-12-05), so they are not tried.
 *
 * Requires: a valid graph and a plan of it that ds_replay accepts, with
 * offsets.  Guarantees: *p replaced only by a plan ds_replay accepts
 * whose makespan is smaller, extra_ddr at most p's and peak_vstay at
 * most max_peak or p's; *f its figures.  Positions in the plan and the
 * graph's constraints decide, no operator's name or shape; Ids only
 * break exact ties.
 *
 * Cost: per pair O(N + E) for the pull and the window's bookkeeping,
 * O(W U + V nbuf) for the spills (W window nodes, U buffers an
 * operation uses, V evictions, each a scan of the buffers), the
 * search at most WN_NODES steps of O(K log K) (K occupancies overlapping
 * the window), and one replay; 8 such tries per pair (four slacks,
 * hoisted and not), WN_PAIRS pairs at most.  Memory: one arena per try,
 * O(N + P). */
#include "ds_stage.h"

#include <stdlib.h>
#include <string.h>

/* Graph nodes on each side of the moved ones, each tried, and the widest
 * window in slacks.  Measured through the pipeline, one slack at a time
 * against all four (final makespans: Conv_Case0; `gen --kind random
 * --nodes 1200 --seed 5`; `--nodes 2000 --seed 1` at L1=3072,UB=768 and
 * at L1=2560,UB=640; `--seed 2` at L1=2560,UB=640): 20 gave 398,410,
 * 29,341, 38,325, 43,833 and 43,242; 60 394,888, 29,325, 38,244, 45,119
 * and 42,580; 120 397,243, 29,341, 38,244, 42,847 and 43,242; 240
 * 397,243, 29,281, 38,244, 44,798 and 43,242; all four 394,888, 29,281,
 * 38,244, 42,847 and 42,580, each as short as the best slack alone, at
 * no measurable cost on the six bundled graphs (most pairs fail early).
 * WN_NODES at 2,000 gave 43,027 for 42,847; at 200,000 the same. */
static const int32_t wn_slack[] = {20, 60, 120, 240};
#define WN_NSLACK ((int)(sizeof wn_slack / sizeof *wn_slack))
#define WN_WIDEST 8
/* The placement search's steps per memory (see wn_slack). */
#define WN_NODES 20000
/* Pairs tried at most. */
#define WN_PAIRS 32

enum { WN_GRAPH = 0, WN_IN = 1 };

/* One entry of the window's new order: a graph node, or a new spill's
 * SPILL_OUT or SPILL_IN (v the spill's index among the new ones). */
typedef struct wn_item {
	int32_t v;
	uint8_t what;
} wn_item;

/* A SPILL_OUT placed after the window item `after`. */
typedef struct wn_out {
	int32_t after, spill;
} wn_out;

/* One occupancy of the new plan: buf over positions [start, end). */
typedef struct wn_occ {
	int32_t buf, start, end;
	int32_t line; /* its spill line in the new plan, -1: the ALLOC */
	int64_t off, want; /* want: its old offset, -1 when none */
	bool pinned;
} wn_occ;

typedef struct wn {
	const ds_graph *g;
	const ds_plan *p;
	ds_arena *ar;
	int32_t *ord;  /* [n] graph nodes, the pull made */
	int32_t *rank; /* [n] a node's index in ord */
	int32_t *slot; /* [2 nspill] the rank of the graph node each of p's
			  spill nodes stands before */
	int32_t L, H;  /* the window: ord[L..H) */
	/* the walk */
	uint8_t *res, *born;
	int32_t *spilled; /* [nbuf] its new spill, -1 */
	int32_t *last;	  /* [nbuf] item of its last use or birth */
	int32_t *nxt_off, *nxt; /* CSR: window ranks of each buffer's uses */
	int32_t *nptr;
	int32_t *free_at; /* [nbuf] window rank of its FREE, -1 */
	int64_t used[DS_NMEM], used0[DS_NMEM];
	wn_item *item;
	int32_t nitem;
	int64_t cap_item;
	wn_out *outs;
	int32_t nout;
	int32_t *nbufs; /* the new spills' buffers */
	int32_t nnew;
	int64_t cap_new; /* of nbufs and of outs */
} wn;

/* ---- the pull ---- */

/* Moves the FREEs after position at whose predecessors all stand at or
 * before it up to right after it, in their order (tmp: n entries). */
static void frees_follow(const ds_graph *g, int32_t *ord, int32_t *rank,
			 int32_t at, int32_t *tmp)
{
	int32_t nf = 0, w = at + 1;
	for (int32_t i = at + 1; i < g->n; i++) {
		int32_t v = ord[i];
		bool ready = g->kind[v] == DS_FREE;
		for (int32_t k = g->pred_off[v]; ready && k < g->pred_off[v + 1];
		     k++)
			ready = rank[g->pred[k]] <= at;
		if (ready)
			tmp[nf++] = v;
		else
			ord[w++] = v; /* w <= i: compacted in place */
	}
	memmove(ord + at + 1 + nf, ord + at + 1,
		(size_t)(w - at - 1) * sizeof *ord);
	memcpy(ord + at + 1, tmp, (size_t)nf * sizeof *ord);
	for (int32_t i = 0; i < g->n; i++)
		rank[ord[i]] = i;
}

/* p's graph nodes with c pulled next to a (and its ready FREEs after
 * it) into x->ord; [*lo, *hi] the ranks that changed; false when
 * nothing moves. */
static int wn_pull(wn *x, int32_t a, int32_t c, int32_t *lo, int32_t *hi,
		   bool *moved, ds_err *e)
{
	const ds_graph *g = x->g;
	int32_t *before = ds_arena_alloc(x->ar, (size_t)g->n, sizeof *before);
	int32_t *tmp = ds_arena_alloc(x->ar, (size_t)g->n, sizeof *tmp);
	if (x->ar->failed)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	ds_plan_nodes(g, x->p, x->ord);
	memcpy(before, x->ord, (size_t)g->n * sizeof *before);
	int32_t nm = 0;
	int rc = ds_order_pull_one(g, x->ord, a, c, &nm, e);
	*moved = false;
	if (rc)
		return rc;
	for (int32_t i = 0; i < g->n; i++)
		x->rank[x->ord[i]] = i;
	frees_follow(g, x->ord, x->rank, x->rank[c], tmp);
	*lo = -1;
	for (int32_t i = 0; i < g->n; i++)
		if (x->ord[i] != before[i]) {
			*lo = *lo < 0 ? i : *lo;
			*hi = i;
		}
	*moved = *lo >= 0;
	return DS_OK;
}

/* ---- the window ---- */

/* x->slot: for each spill node of p, the rank (in p's own order of graph
 * nodes) of the graph node after it; the pull moves nodes only within
 * the window, so ranks outside it are p's. */
static void slots(wn *x)
{
	const ds_plan *p = x->p;
	const int32_t n = x->g->n;
	int32_t r = 0;
	for (int32_t i = 0; i < p->len; i++) {
		int32_t v = p->order[i];
		if (v < n)
			r++;
		else
			x->slot[v - n] = r;
	}
}

/* Widens [L, H) until no spill of p has one end inside and one outside;
 * false when it grows past max nodes. */
static bool widen(wn *x, int32_t max)
{
	bool grew = true;
	while (grew) {
		grew = false;
		for (int32_t k = 0; k < x->p->nspill; k++) {
			int32_t so = x->slot[2 * k], si = x->slot[2 * k + 1];
			bool in0 = so >= x->L && so < x->H;
			bool in1 = si >= x->L && si < x->H;
			if (in0 == in1)
				continue;
			x->L = so < x->L ? so : x->L;
			x->H = si + 1 > x->H ? si + 1 : x->H;
			grew = true;
		}
		if (x->H - x->L > max)
			return false;
	}
	return true;
}

/* ---- the spills along the window ---- */

static bool push_item(wn *x, int32_t v, uint8_t what)
{
	if (!ds_arena_reserve(x->ar, (void **)&x->item, &x->cap_item,
			      x->nitem + 1, sizeof *x->item))
		return false;
	x->item[x->nitem++] = (wn_item){v, what};
	return true;
}

/* A new spill of buffer b (its SPILL_OUT's room in outs too); its index,
 * -1 when memory fails. */
static int32_t new_spill(wn *x, int32_t b)
{
	int64_t cap = x->cap_new;
	if (!ds_arena_reserve(x->ar, (void **)&x->nbufs, &x->cap_new,
			      x->nnew + 1, sizeof *x->nbufs) ||
	    !ds_arena_reserve(x->ar, (void **)&x->outs, &cap, x->nnew + 1,
			      sizeof *x->outs))
		return -1;
	x->nbufs[x->nnew] = b;
	return x->nnew++;
}

/* The window ranks of each buffer's uses (CSR) and of its FREE. */
static bool uses_in_window(wn *x)
{
	const ds_graph *g = x->g;
	x->nxt_off = ds_arena_alloc(x->ar, (size_t)g->nbuf + 1, sizeof(int32_t));
	x->nptr = ds_arena_alloc(x->ar, (size_t)g->nbuf, sizeof(int32_t));
	if (x->ar->failed)
		return false;
	for (int32_t r = x->L; r < x->H; r++) {
		int32_t v = x->ord[r];
		for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++)
			x->nxt_off[g->use[k] + 1]++;
		if (g->kind[v] == DS_FREE)
			x->free_at[g->buf[v]] = r;
	}
	for (int32_t b = 0; b < g->nbuf; b++)
		x->nxt_off[b + 1] += x->nxt_off[b];
	x->nxt = ds_arena_alloc(x->ar, (size_t)x->nxt_off[g->nbuf] + 1,
				sizeof *x->nxt);
	if (!x->nxt)
		return false;
	memcpy(x->nptr, x->nxt_off, (size_t)g->nbuf * sizeof *x->nptr);
	for (int32_t r = x->L; r < x->H; r++) {
		int32_t v = x->ord[r];
		for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++)
			x->nxt[x->nptr[g->use[k]]++] = r;
	}
	memcpy(x->nptr, x->nxt_off, (size_t)g->nbuf * sizeof *x->nptr);
	return true;
}

/* Rank of b's next use at or after r, INT32_MAX when none in the window
 * (the ranks asked of one buffer never decrease). */
static int32_t next_use(wn *x, int32_t b, int32_t r)
{
	int32_t *q = &x->nptr[b];
	while (*q < x->nxt_off[b + 1] && x->nxt[*q] < r)
		(*q)++;
	return *q < x->nxt_off[b + 1] ? x->nxt[*q] : INT32_MAX;
}

/* Whether operation v uses buffer b. */
static bool uses(const ds_graph *g, int32_t v, int32_t b)
{
	for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++)
		if (g->use[k] == b)
			return true;
	return false;
}

/* The victim for room at rank r in memory m, not used by v: born in the
 * window, its next use and its FREE in the window; the furthest next
 * use, then the earliest last use.  -1 when none. */
static int32_t victim(wn *x, int m, int32_t v, int32_t r)
{
	const ds_graph *g = x->g;
	int32_t best = -1, bn = -1, bl = 0;
	for (int32_t b = 0; b < g->nbuf; b++) {
		if (!x->res[b] || !x->born[b] || g->buf_mem[b] != m ||
		    x->free_at[b] < 0 || (v >= 0 && uses(g, v, b)))
			continue;
		int32_t nu = next_use(x, b, r);
		if (nu == INT32_MAX || nu > x->free_at[b])
			continue;
		if (nu > bn || (nu == bn && x->last[b] < bl))
			best = b, bn = nu, bl = x->last[b];
	}
	return best;
}

/* Room for size bytes in memory m at rank r (for v, -1: an ALLOC's);
 * false when no victim is left. */
static int room(wn *x, int m, int64_t size, int32_t v, int32_t r, bool *ok)
{
	const ds_graph *g = x->g;
	*ok = true;
	while (x->used[m] + size > g->caps.cap[m]) {
		int32_t b = victim(x, m, v, r);
		if (b < 0) {
			*ok = false;
			return DS_OK;
		}
		int32_t k = new_spill(x, b);
		if (k < 0)
			return DS_ENOMEM;
		x->outs[x->nout++] = (wn_out){x->last[b], k};
		x->spilled[b] = k;
		x->res[b] = 0;
		x->used[m] -= g->buf_size[b];
	}
	return DS_OK;
}

/* The resident buffers and bytes at the window's start: p's order up to
 * ord[L], p's spills there included. */
static void state_at_start(wn *x)
{
	const ds_graph *g = x->g;
	const ds_plan *p = x->p;
	const int32_t n = g->n;
	int32_t r = 0;
	for (int32_t i = 0; i < p->len; i++) {
		int32_t v = p->order[i], b;
		if (v < n) {
			if (r++ >= x->L)
				break;
			if (g->kind[v] == DS_OP)
				continue;
			b = g->buf[v];
			x->res[b] = g->kind[v] == DS_ALLOC;
		} else {
			if (x->slot[v - n] >= x->L)
				break;
			b = p->spill[(v - n) / 2].buf;
			x->res[b] = (v - n) % 2 == 1;
		}
	}
	for (int32_t b = 0; b < g->nbuf; b++)
		if (x->res[b])
			x->used[g->buf_mem[b]] += g->buf_size[b];
}

/* One graph node of the window, at rank r: its room, its reloads. */
static int walk_node(wn *x, int32_t r, bool *ok)
{
	const ds_graph *g = x->g;
	int32_t v = x->ord[r];
	int rc = DS_OK;
	*ok = true;
	if (g->kind[v] == DS_ALLOC) {
		int32_t b = g->buf[v];
		rc = room(x, g->buf_mem[b], g->buf_size[b], -1, r, ok);
		if (rc || !*ok)
			return rc;
		x->res[b] = x->born[b] = 1;
		x->used[g->buf_mem[b]] += g->buf_size[b];
		x->last[b] = x->nitem;
	} else if (g->kind[v] == DS_FREE) {
		int32_t b = g->buf[v];
		if (x->spilled[b] >= 0 && !x->res[b])
			return *ok = false, DS_OK;
		if (x->res[b])
			x->used[g->buf_mem[b]] -= g->buf_size[b];
		x->res[b] = 0;
	} else {
		for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
			int32_t b = g->use[k];
			if (x->res[b] || x->spilled[b] < 0)
				continue;
			rc = room(x, g->buf_mem[b], g->buf_size[b], v, r, ok);
			if (rc || !*ok)
				return rc;
			if (!push_item(x, x->spilled[b], WN_IN))
				return DS_ENOMEM;
			x->res[b] = 1;
			x->used[g->buf_mem[b]] += g->buf_size[b];
		}
	}
	if (!push_item(x, v, WN_GRAPH))
		return DS_ENOMEM;
	for (int32_t k = g->use_off[v]; g->kind[v] == DS_OP &&
					k < g->use_off[v + 1]; k++)
		x->last[g->use[k]] = x->nitem - 1;
	return rc;
}

/* The window walked: x->item, x->outs; *ok false when some room cannot
 * be made. */
static int walk(wn *x, bool *ok)
{
	const ds_graph *g = x->g;
	size_t nb = (size_t)g->nbuf;
	x->res = ds_arena_alloc(x->ar, nb, 1);
	x->born = ds_arena_alloc(x->ar, nb, 1);
	x->spilled = ds_arena_alloc(x->ar, nb, sizeof *x->spilled);
	x->last = ds_arena_alloc(x->ar, nb, sizeof *x->last);
	x->free_at = ds_arena_alloc(x->ar, nb, sizeof *x->free_at);
	if (x->ar->failed)
		return DS_ENOMEM;
	for (int32_t b = 0; b < g->nbuf; b++)
		x->spilled[b] = x->free_at[b] = -1;
	if (!uses_in_window(x))
		return DS_ENOMEM;
	state_at_start(x);
	memcpy(x->used0, x->used, sizeof x->used0);
	int rc = DS_OK;
	*ok = true;
	for (int32_t r = x->L; r < x->H && rc == DS_OK && *ok; r++)
		rc = walk_node(x, r, ok);
#ifndef NDEBUG
	/* debug: the bytes kept along the walk against a count from
	 * scratch of the resident buffers */
	int64_t u[DS_NMEM] = {0};
	for (int32_t b = 0; b < g->nbuf; b++)
		if (x->res[b])
			u[g->buf_mem[b]] += g->buf_size[b];
	for (int m = 0; m < DS_NMEM; m++)
		DS_ASSERT(rc || !*ok || u[m] == x->used[m]);
#endif
	return rc;
}

/* ---- the reloads moved up ---- */

/* SPILL_OUTs by the item they follow, then by spill. */
static int out_cmp(const void *pa, const void *pb)
{
	const wn_out *a = pa, *b = pb;
	if (a->after != b->after)
		return a->after < b->after ? -1 : 1;
	return (a->spill > b->spill) - (a->spill < b->spill);
}

/* Bytes of memory m after each item (its SPILL_OUTs after it too) into
 * after[0..nitem). */
static void bytes_after(const wn *x, int m, int64_t *after)
{
	const ds_graph *g = x->g;
	int64_t u = x->used0[m];
	int32_t o = 0;
	for (int32_t j = 0; j < x->nitem; j++) {
		const wn_item *it = &x->item[j];
		int32_t b = it->what == WN_GRAPH
				    ? (g->kind[it->v] == DS_OP ? -1 : g->buf[it->v])
				    : x->nbufs[it->v];
		if (b >= 0 && g->buf_mem[b] == m)
			u += it->what == WN_GRAPH && g->kind[it->v] == DS_FREE
				     ? -g->buf_size[b]
				     : g->buf_size[b];
		for (; o < x->nout && x->outs[o].after == j; o++)
			if (g->buf_mem[x->nbufs[x->outs[o].spill]] == m)
				u -= g->buf_size[x->nbufs[x->outs[o].spill]];
		after[j] = u;
	}
}

/* Spill k's SPILL_IN moved up from item i to the earliest item after
 * its SPILL_OUT where its bytes fit all the way, then past the FREEs
 * standing there (their addresses free for it too). */
static void hoist(wn *x, int32_t k, int32_t i, int64_t *after)
{
	const ds_graph *g = x->g;
	int32_t b = x->nbufs[k], m = g->buf_mem[b], so = -1;
	for (int32_t o = 0; o < x->nout; o++)
		if (x->outs[o].spill == k)
			so = x->outs[o].after;
	const int64_t size = g->buf_size[b], cap = g->caps.cap[m];
	bytes_after(x, m, after);
	int32_t p = i;
	while (p - 1 > so && after[p - 1] + size <= cap &&
	       (p >= 2 ? after[p - 2] : x->used0[m]) + size <= cap)
		p--;
	while (p < i && x->item[p].what == WN_GRAPH &&
	       g->kind[x->item[p].v] == DS_FREE)
		p++;
	if (p == i)
		return;
	wn_item si = x->item[i];
	memmove(x->item + p + 1, x->item + p, (size_t)(i - p) * sizeof *x->item);
	x->item[p] = si;
	for (int32_t o = 0; o < x->nout; o++)
		if (x->outs[o].after >= p && x->outs[o].after < i)
			x->outs[o].after++;
#ifndef NDEBUG
	bytes_after(x, m, after); /* debug: the memory fits all the way */
	for (int32_t j = 0; j < x->nitem; j++)
		DS_ASSERT(after[j] <= cap);
#endif
}

/* Every new reload moved up (hoist), in the order of the spills. */
static bool hoist_all(wn *x)
{
	int64_t *after = ds_arena_alloc(x->ar, (size_t)x->nitem + 1,
					sizeof *after);
	if (!after)
		return false;
	if (x->nout > 0) /* outs is NULL while there is none */
		qsort(x->outs, (size_t)x->nout, sizeof *x->outs, out_cmp);
	for (int32_t k = 0; k < x->nnew; k++)
		for (int32_t j = 0; j < x->nitem; j++)
			if (x->item[j].what == WN_IN && x->item[j].v == k) {
				hoist(x, k, j, after);
				break;
			}
	ds_arena_release(x->ar, after);
	return true;
}

/* ---- the new plan's order ---- */

/* p's spill lines kept (outside the window) get lines 0..K-1 in their
 * order, the new ones K.. in theirs; line[k] for p's k, -1 dropped. */
static int32_t kept_lines(wn *x, int32_t *line)
{
	int32_t K = 0;
	for (int32_t k = 0; k < x->p->nspill; k++) {
		bool in = x->slot[2 * k] >= x->L && x->slot[2 * k] < x->H;
		line[k] = in ? -1 : K++;
	}
	return K;
}

/* The new plan's order into q (q->order sized), *lo and *hi the
 * positions the window's items take. */
static void compose(wn *x, const int32_t *line, int32_t K, ds_plan *q,
		    int32_t *lo, int32_t *hi)
{
	const ds_plan *p = x->p;
	const int32_t n = x->g->n;
	int32_t len = 0, r = 0, i = 0;
	for (; i < p->len; i++) { /* the prefix */
		int32_t v = p->order[i];
		if (v < n ? r >= x->L : x->slot[v - n] >= x->L)
			break;
		r += v < n;
		q->order[len++] = v < n ? v : n + 2 * line[(v - n) / 2] +
						      (v - n) % 2;
	}
	*lo = len;
	if (x->nout > 0) /* outs is NULL while there is none */
		qsort(x->outs, (size_t)x->nout, sizeof *x->outs, out_cmp);
	int32_t o = 0;
	for (int32_t j = 0; j < x->nitem; j++) {
		const wn_item *it = &x->item[j];
		q->order[len++] = it->what == WN_GRAPH ? it->v
						       : n + 2 * (K + it->v) + 1;
		for (; o < x->nout && x->outs[o].after == j; o++)
			q->order[len++] = n + 2 * (K + x->outs[o].spill);
	}
	*hi = len;
	for (r = 0, i = 0; i < p->len; i++) { /* the suffix */
		int32_t v = p->order[i];
		bool after = v < n ? r >= x->H : x->slot[v - n] >= x->H;
		r += v < n;
		if (after)
			q->order[len++] = v < n ? v : n + 2 * line[(v - n) / 2] +
							      (v - n) % 2;
	}
	q->len = len;
}

/* ---- the addresses ---- */

/* The occupancies of q's order (at most q->len), each with its old
 * offset where it keeps one; pinned when it reaches outside [lo, hi). */
static int32_t occupancies(wn *x, const ds_plan *q, const int32_t *line,
			   int32_t lo, int32_t hi, wn_occ *occ,
			   int32_t *open)
{
	const ds_graph *g = x->g;
	const ds_plan *p = x->p;
	const int32_t n = g->n;
	int32_t *orig = open + g->nbuf; /* new line -> p's, -1: new */
	int32_t no = 0;
	for (int32_t k = 0; k < q->nspill; k++)
		orig[k] = -1;
	for (int32_t k = 0; k < p->nspill; k++)
		if (line[k] >= 0)
			orig[line[k]] = k;
	for (int32_t i = 0; i < q->len; i++) {
		int32_t v = q->order[i], b, k = -1;
		bool starts, ends;
		if (v < n) {
			if (g->kind[v] == DS_OP)
				continue;
			b = g->buf[v];
			starts = g->kind[v] == DS_ALLOC;
			ends = !starts;
		} else {
			k = (v - n) / 2;
			b = q->spill[k].buf;
			starts = (v - n) % 2 == 1;
			ends = !starts;
		}
		if (starts) {
			int64_t want = k < 0 ? p->offset[b]
					     : orig[k] >= 0 ? p->spill[orig[k]].offset
							    : -1;
			occ[no] = (wn_occ){b, i, q->len, k, want, want, false};
			open[b] = no++;
		} else if (ends) {
			occ[open[b]].end = i;
		}
	}
	for (int32_t j = 0; j < no; j++)
		occ[j].pinned = occ[j].start < lo || occ[j].end >= hi;
	return no;
}

static bool overlap_t(const wn_occ *a, const wn_occ *b)
{
	return a->start < b->end && b->start < a->end;
}

static bool overlap_a(const ds_graph *g, const wn_occ *a, int64_t off,
		      const wn_occ *b)
{
	return off < b->off + g->buf_size[b->buf] &&
	       b->off < off + g->buf_size[a->buf];
}

typedef struct wn_dsa {
	const ds_graph *g;
	wn_occ *occ;
	int32_t *idx;	 /* the memory's occupancies near the window */
	int32_t nfix, nfree; /* idx[0..nfix) pinned, then the free ones */
	int64_t *cand;	 /* per depth, its candidates */
	int32_t *ncand, *at;
	int64_t *span;	 /* scratch: placed intervals */
	int32_t stride;
	int64_t cap;
} wn_dsa;

static int span_cmp(const void *pa, const void *pb)
{
	const int64_t *a = pa, *b = pb;
	return (a[0] > b[0]) - (a[0] < b[0]);
}

static void add_cand(int64_t *c, int32_t *nc, int64_t off)
{
	for (int32_t i = 0; i < *nc; i++)
		if (c[i] == off)
			return;
	c[(*nc)++] = off;
}

/* The candidate offsets of the free occupancy at depth d (those before
 * it placed): its old offset where it fits, then each gap's low end,
 * then each gap's high end. */
static void candidates(wn_dsa *s, int32_t d)
{
	const ds_graph *g = s->g;
	wn_occ *q = &s->occ[s->idx[s->nfix + d]];
	int64_t size = g->buf_size[q->buf], *c = s->cand + (int64_t)d * s->stride;
	int32_t ns = 0, nc = 0;
	for (int32_t j = 0; j < s->nfix + d; j++) {
		const wn_occ *r = &s->occ[s->idx[j]];
		if (overlap_t(q, r)) {
			s->span[2 * ns] = r->off;
			s->span[2 * ns + 1] = r->off + g->buf_size[r->buf];
			ns++;
		}
	}
	qsort(s->span, (size_t)ns, 2 * sizeof *s->span, span_cmp);
	int64_t cur = 0;
	int32_t ng = 0;
	int64_t *gap = s->span + 2 * ns; /* after the spans */
	for (int32_t j = 0; j <= ns; j++) {
		int64_t l = j < ns ? s->span[2 * j] : s->cap;
		if (l - cur >= size) {
			gap[2 * ng] = cur;
			gap[2 * ng + 1] = l;
			ng++;
		}
		if (j < ns && s->span[2 * j + 1] > cur)
			cur = s->span[2 * j + 1];
	}
	for (int32_t j = 0; j < ng && q->want >= 0; j++)
		if (gap[2 * j] <= q->want && q->want + size <= gap[2 * j + 1])
			add_cand(c, &nc, q->want);
	for (int32_t j = 0; j < ng; j++)
		add_cand(c, &nc, gap[2 * j]);
	for (int32_t j = 0; j < ng; j++)
		add_cand(c, &nc, gap[2 * j + 1] - size);
	s->ncand[d] = nc;
	s->at[d] = 0;
}

/* Depth-first: each free occupancy at one of its candidates; false when
 * none fits within WN_NODES steps. */
static bool search(wn_dsa *s)
{
	int32_t d = 0;
	long steps = 0;
	if (s->nfree == 0)
		return true;
	candidates(s, 0);
	while (d >= 0) {
		if (++steps > WN_NODES)
			return false;
		if (s->at[d] == s->ncand[d]) {
			d--;
			continue;
		}
		wn_occ *q = &s->occ[s->idx[s->nfix + d]];
		q->off = s->cand[(int64_t)d * s->stride + s->at[d]++];
		if (d + 1 == s->nfree)
			return true;
		candidates(s, ++d);
	}
	return false;
}

typedef struct wn_key {
	int32_t small, start, j;
} wn_key;

static int key_cmp(const void *pa, const void *pb)
{
	const wn_key *a = pa, *b = pb;
	if (a->small != b->small)
		return a->small - b->small;
	return (a->start > b->start) - (a->start < b->start);
}

/* Memory m's occupancies near the window [lo, hi) into s->idx: the
 * pinned ones at their offsets, then the free ones in the search's
 * order, the large ones (an eighth of the largest or more) first, each
 * class by start; false when two pinned ones collide. */
static bool gather(wn_dsa *s, int m, int32_t no, int32_t lo, int32_t hi,
		   wn_key *keys)
{
	const ds_graph *g = s->g;
	int64_t big = 1;
	s->nfix = s->nfree = 0;
	for (int32_t j = 0; j < no; j++) {
		wn_occ *q = &s->occ[j];
		if (g->buf_mem[q->buf] != m || q->start >= hi || q->end <= lo)
			continue;
		if (q->pinned) {
			if (q->want < 0)
				return false;
			q->off = q->want;
			for (int32_t i = 0; i < s->nfix; i++)
				if (overlap_t(q, &s->occ[s->idx[i]]) &&
				    overlap_a(g, q, q->off, &s->occ[s->idx[i]]))
					return false;
			s->idx[s->nfix++] = j;
		} else {
			keys[s->nfree++] = (wn_key){0, q->start, j};
			if (g->buf_size[q->buf] > big)
				big = g->buf_size[q->buf];
		}
	}
	for (int32_t i = 0; i < s->nfree; i++)
		keys[i].small = g->buf_size[s->occ[keys[i].j].buf] * 8 < big;
	qsort(keys, (size_t)s->nfree, sizeof *keys, key_cmp);
	for (int32_t i = 0; i < s->nfree; i++)
		s->idx[s->nfix + i] = keys[i].j;
	return true;
}

/* Offsets for the free occupancies of every memory; *ok false when a
 * memory's search finds none. */
static int place(wn *x, wn_occ *occ, int32_t no, int32_t lo, int32_t hi,
		 bool *ok)
{
	const ds_graph *g = x->g;
	wn_dsa s = {.g = g, .occ = occ};
	s.idx = ds_arena_alloc(x->ar, (size_t)no + 1, sizeof *s.idx);
	s.ncand = ds_arena_alloc(x->ar, (size_t)no + 1, sizeof *s.ncand);
	s.at = ds_arena_alloc(x->ar, (size_t)no + 1, sizeof *s.at);
	s.span = ds_arena_alloc(x->ar, 4 * (size_t)no + 4, sizeof *s.span);
	wn_key *keys = ds_arena_alloc(x->ar, (size_t)no + 1, sizeof *keys);
	if (x->ar->failed)
		return DS_ENOMEM;
	*ok = true;
	for (int m = 0; m < DS_NMEM && *ok; m++) {
		*ok = gather(&s, m, no, lo, hi, keys);
		if (!*ok)
			break;
		s.cap = g->caps.cap[m];
		s.stride = 2 * (s.nfix + s.nfree) + 4;
		s.cand = ds_arena_alloc(x->ar, (size_t)(s.nfree + 1) *
						       (size_t)s.stride,
					sizeof *s.cand);
		if (!s.cand)
			return DS_ENOMEM;
		*ok = search(&s);
#ifndef NDEBUG
		/* debug: the free occupancies clear of every other one near
		 * the window, checked pair by pair */
		for (int32_t i = s.nfix; *ok && i < s.nfix + s.nfree; i++)
			for (int32_t j = 0; j < s.nfix + s.nfree; j++) {
				const wn_occ *a = &occ[s.idx[i]], *b = &occ[s.idx[j]];
				DS_ASSERT(i == j || !overlap_t(a, b) ||
					  !overlap_a(g, a, a->off, b));
				DS_ASSERT(a->off >= 0 &&
					  a->off + g->buf_size[a->buf] <= s.cap);
			}
#endif
		ds_arena_release(x->ar, s.cand);
	}
	return DS_OK;
}

/* ---- one pair ---- */

/* q's spill lines (p's kept, then the new ones) and offsets. */
static int new_plan(wn *x, const int32_t *line, int32_t K, ds_plan *q)
{
	const ds_graph *g = x->g;
	const ds_plan *p = x->p;
	memset(q, 0, sizeof *q);
	q->nspill = K + x->nnew;
	q->order = ds_alloc(g->heap, (size_t)p->len + 2 * (size_t)x->nnew + 1,
			    sizeof *q->order);
	q->offset = ds_alloc(g->heap, (size_t)g->nbuf + 1, sizeof *q->offset);
	q->spill = ds_alloc(g->heap, (size_t)q->nspill + 1, sizeof *q->spill);
	if (!q->order || !q->offset || !q->spill)
		return DS_ENOMEM;
	memcpy(q->offset, p->offset, (size_t)g->nbuf * sizeof *q->offset);
	for (int32_t k = 0; k < p->nspill; k++)
		if (line[k] >= 0)
			q->spill[line[k]] = p->spill[k];
	for (int32_t j = 0; j < x->nnew; j++)
		q->spill[K + j] = (ds_spill){x->nbufs[j], -1};
	return DS_OK;
}

/* The offsets the search chose into q. */
static void write_offsets(const wn_occ *occ, int32_t no, ds_plan *q)
{
	for (int32_t j = 0; j < no; j++) {
		if (occ[j].pinned)
			continue;
		if (occ[j].line < 0)
			q->offset[occ[j].buf] = occ[j].off;
		else
			q->spill[occ[j].line].offset = occ[j].off;
	}
}

/* The window's spills and addresses made again into q, its reloads
 * moved up (hoist_all) when hoisted; *ok false when a step finds
 * none. */
static int respill(wn *x, bool hoisted, ds_plan *q, bool *ok)
{
	const ds_graph *g = x->g;
	int rc = walk(x, ok);
	if (rc || !*ok)
		return rc;
	if (hoisted && !hoist_all(x))
		return DS_ENOMEM;
	int32_t *line = ds_arena_alloc(x->ar, (size_t)x->p->nspill + 1,
				       sizeof *line);
	if (!line)
		return DS_ENOMEM;
	int32_t K = kept_lines(x, line), lo, hi;
	rc = new_plan(x, line, K, q);
	if (rc)
		return rc;
	compose(x, line, K, q, &lo, &hi);
	wn_occ *occ = ds_arena_alloc(x->ar, (size_t)q->len + 1, sizeof *occ);
	int32_t *open = ds_arena_alloc(x->ar, (size_t)g->nbuf +
						      (size_t)q->nspill + 1,
				       sizeof *open);
	if (!occ || !open)
		return DS_ENOMEM;
	int32_t no = occupancies(x, q, line, lo, hi, occ, open);
	rc = place(x, occ, no, lo, hi, ok);
	if (rc == DS_OK && *ok)
		write_offsets(occ, no, q);
	return rc;
}

/* The plan with late pulled next to early and the window around spilled
 * and placed again (respill), into *q; *ok false (and q empty) when
 * nothing moves or a step finds nothing. */
static int try_pair(const ds_graph *g, const ds_plan *p, int32_t early,
		    int32_t late, int32_t slack, bool hoisted, ds_plan *q,
		    bool *ok, ds_err *e)
{
	ds_arena ar;
	ds_arena_init(&ar, g->heap);
	wn x = {.g = g, .p = p, .ar = &ar};
	x.ord = ds_arena_alloc(&ar, (size_t)g->n, sizeof *x.ord);
	x.rank = ds_arena_alloc(&ar, (size_t)g->n, sizeof *x.rank);
	x.slot = ds_arena_alloc(&ar, 2 * (size_t)p->nspill + 1, sizeof *x.slot);
	int rc = ar.failed ? DS_ENOMEM : DS_OK;
	int32_t lo = 0, hi = 0;
	bool moved = false;
	memset(q, 0, sizeof *q);
	*ok = false;
	if (rc == DS_OK)
		rc = wn_pull(&x, early, late, &lo, &hi, &moved, e);
	if (rc == DS_OK && moved) {
		x.L = lo > slack ? lo - slack : 0;
		x.H = hi + 1 + slack < g->n ? hi + 1 + slack : g->n;
		slots(&x);
		*ok = widen(&x, WN_WIDEST * slack);
	}
	if (rc == DS_OK && *ok)
		rc = respill(&x, hoisted, q, ok);
	if (rc == DS_OK && *ok)
		rc = ds_plan_sort_spills(g, q, e);
	if (rc == DS_ENOMEM)
		rc = ds_fail(e, DS_ENOMEM, "out of memory");
	if (rc || !*ok)
		ds_plan_free(g->heap, q);
	ds_arena_free(&ar);
	return rc;
}

/* The best of pair (early, late)'s plans at each slack and with and
 * without its reloads moved up into *p (figures *f) where it is shorter
 * (ds_keep_shorter, ds_finish.c). */
static int pull_pair(const ds_graph *g, int32_t early, int32_t late,
		     int64_t max_peak, ds_plan *p, ds_figures *f, ds_err *e)
{
	ds_plan best;
	ds_figures fb = *f;
	int rc = DS_OK;
	memset(&best, 0, sizeof best);
	for (int k = 0; k < 2 * WN_NSLACK && rc == DS_OK; k++) {
		ds_plan q;
		bool ok, took;
		rc = try_pair(g, p, early, late, wn_slack[k / 2], k % 2 == 0,
			      &q, &ok, e);
		if (rc == DS_OK && ok)
			rc = ds_keep_shorter(g, &q, max_peak, f, &best, &fb,
					     &took, e);
	}
	ds_plan_keep(g->heap, rc == DS_OK && best.order, p, f, &best, &fb);
	return rc;
}

int ds_window_pulls(const ds_graph *g, ds_plan *p, ds_figures *f,
		    int64_t max_peak, ds_err *e)
{
	int32_t pair[2 * WN_PAIRS], np = 0;
	if (!p->offset)
		return DS_OK;
	int rc = ds_pull_pairs(g, p, false, WN_PAIRS, pair, pair + WN_PAIRS,
			       &np, e);
	for (int32_t k = 0; k < np && rc == DS_OK; k++)
		rc = pull_pair(g, pair[k], pair[WN_PAIRS + k], max_peak, p, f,
			       e);
	return rc;
}
