/* ds_replan.c: the spills of one memory planned again over a plan's tail,
 * by a dynamic program in units (rp_).
 *
 * Where a memory's large buffers all have sizes that are multiples of one
 * unit, a plan's end can be seen as a few units shared by them: a step
 * (an operation using one) needs its buffers resident; between two steps
 * any resident may go out (SPILL_OUT on the store pipe) and any spilled
 * one come back (SPILL_IN on the load pipe) into units free by then.
 * The other passes decide these one at a time along the order; here, for
 * the tail, they are searched together, with times: each state holds the
 * pipes' clocks, each buffer's ready and last-use times, each unit's
 * free time and its occupant, so that a reload can take half of the
 * units a finished accumulator leaves while an eviction frees the rest
 * beside it (Conv_Case0's last three layers: scripts/late_layers.c
 * measured that their plan loses 7,255 cycles to such choices).
 *
 * The tail: the longest end of the order whose spills are all of large
 * buffers of memory m (a size that is a multiple of the unit q, the gcd
 * of the large sizes spilled, and at least an eighth of the capacity),
 * whose large residents sit on the boundaries of units that start at a
 * base below q (their offset modulo q) and end at base + units * q, the
 * other buffers of m outside them, units being what the small buffers
 * one operation needs leave, and whose large live bytes fit in the units.
 * The model leaves out the operations that use no large buffer and the
 * memory of the small ones; the plan is built from the search's best
 * state and replayed by the caller, which keeps it only when shorter.
 *
 * The search: one step at a time, each state choosing its next among
 * the first RP_WINDOW steps it has not run (in the plan's order) whose
 * predecessors in the graph have run (so that a store may run before
 * the next chain's first step and free its units sooner); before each,
 * evictions (of the RP_EVICT_K residents used longest from now) and then
 * reloads (of the RP_RELOAD_K spilled buffers needed soonest), each at
 * every distinct time a window of free units allows, the snuggest
 * window for each time; a state is dropped when another with the same
 * buffers at the same units and the same steps run matches or beats it
 * in traffic and every time, or when it cannot end before the best end
 * known (the plan's, or a rollout's), and after each step at most
 * RP_BEAM states are kept per traffic figure (the shortest bound first).
 * Each state kept is also run to its end by a one-at-a-time policy (the
 * rest of the plan's order, a spilled buffer back when a step needs it,
 * the resident used furthest ahead out while no units are free): the
 * best such rollout is the search's answer where the beam loses every
 * state or ends no better.
 *
 * The plan: the prefix as it was (its spill lines too, a line whose
 * reload falls in the tail reloading when the search says; the loads of
 * small buffers live at the tail's start join the tail), then the
 * tail's nodes in the order of their times: steps and spill nodes at the
 * search's, the others as late as the steps after them allow (ALAP), a
 * load or store among them at the start of the compute step (one on
 * neither spill pipe) running then, so that it does not queue behind a
 * reload on its pipe; each ALLOC or
 * SPILL_IN waits until its addresses are free (large buffers at their
 * units, small ones of m above the units or else below them, others
 * where they fit, their own offset first).
 *
 * Requires: a valid graph and a full plan ds_replay accepts, its spill
 * lines in the order of their SPILL_OUTs (ds_plan_sort_spills), with the
 * finish time of each of its nodes from that replay.
 * Guarantees: *changed false and *out empty, or *out a plan of the same
 * graph whose extra DDR traffic is at most max_ddr (none added where the
 * prefix already reaches it), its spill lines sorted; its validity and
 * makespan are the replay's to judge (the caller's).  The same input
 * gives the same plan.
 * Cost: the model's (ds_replan_model.c), then per step O(F (E + R + W)
 * S) for F states, E + R moves of O(units) windows each, W = RP_WINDOW
 * steps and S = O(B + units + pipes + steps / 8) bytes a state, and a
 * rollout of O(T B) per state kept for T steps left; F is bounded by
 * RP_BEAM times the traffic figures, and the whole by RP_WORK state
 * copies; the plan O(T log T + T L) for T tail nodes.  One arena. */
#include "ds_replan_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct rp_front {
	char *rec;
	int32_t n, cap;
	int32_t *head; /* hash slots: first record, -1 empty */
	int32_t hcap;
} rp_front;

/* ---- states ---- */

static rp_hdr *hdr(const rp_front *f, int32_t i, size_t rec)
{
	return (rp_hdr *)(f->rec + (size_t)i * rec);
}

/* The offsets of a state's arrays in its record (ds_replan_int.h's
 * accessors), its size. */
static void layout_rec(rp *r)
{
	size_t o = (sizeof(rp_hdr) + 7) & ~(size_t)7;
	r->o_clk = o, o += (size_t)r->npc * 8;
	r->o_t = o, o += (size_t)r->nb * 24;
	r->o_free = o, o += (size_t)r->units * 8;
	r->o_stat = o, o += (size_t)r->nb;
	r->o_pos = o, o += (size_t)r->nb;
	r->o_used = o, o += (size_t)r->nb;
	o = (o + 7) & ~(size_t)7;
	r->o_done = o, o += (size_t)r->nw * 8;
	r->o_rem = o, o += (size_t)r->npc * 8;
	r->keylen = r->o_done + (size_t)r->nw * 8 - r->o_stat;
	r->rec = o;
}

/* The key: the bytes of stat, pos, used and done (the zero padding
 * before done included). */
static uint64_t key_hash(const rp *r, void *s)
{
	const uint8_t *k = stat(r, s);
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < r->keylen; i++)
		h = (h ^ k[i]) * 1099511628211ull;
	return h;
}

static bool same_key(const rp *r, void *a, void *b)
{
	bool same = memcmp(stat(r, a), stat(r, b), r->keylen) == 0;
	/* the same steps run: the same cycles left (covers() relies on it) */
	DS_ASSERT(!same || memcmp(rem(r, a), rem(r, b),
				  (size_t)r->npc * sizeof(int64_t)) == 0);
	return same;
}

/* Times that no longer bind clamped, so that equivalent states compare
 * equal: a unit or a ready time to the earliest clock, a last use to the
 * store pipe's, a spilled buffer's to the load pipe's. */
static void normalise(const rp *r, void *s)
{
	int64_t *c = clk(r, s), *t = tim(r, s), *fr = ufree(r, s), lo = -1;
	for (int i = 0; i < r->npc; i++)
		if (r->active[i] && (lo < 0 || c[i] < lo))
			lo = c[i];
	for (int32_t u = 0; u < r->units; u++)
		if (fr[u] >= 0)
			fr[u] = max64(fr[u], lo);
	uint8_t *st = stat(r, s), *us = used(r, s);
	for (int32_t x = 0; x < r->nb; x++) {
		int64_t *tx = t + 3 * x;
		if (st[x] == ST_RES) {
			tx[0] = max64(tx[0], lo);
			tx[1] = max64(tx[1], c[r->pout]);
			tx[2] = 0;
		} else {
			tx[0] = tx[1] = 0, us[x] = 0;
			tx[2] = st[x] == ST_DDR ? max64(tx[2], c[r->pin]) : 0;
		}
	}
}

/* a matches or beats b (same key) in traffic and every time. */
static bool covers(const rp *r, void *a, void *b)
{
	if (((rp_hdr *)a)->tr > ((rp_hdr *)b)->tr)
		return false;
	const int64_t *ca = clk(r, a), *cb = clk(r, b);
	for (int i = 0; i < r->npc; i++)
		if (ca[i] > cb[i])
			return false;
	const int64_t *fa = ufree(r, a), *fb = ufree(r, b);
	for (int32_t u = 0; u < r->units; u++)
		if (fa[u] > fb[u])
			return false;
	const int64_t *ta = tim(r, a), *tb = tim(r, b);
	for (int32_t i = 0; i < 3 * r->nb; i++)
		if (ta[i] > tb[i])
			return false;
	return true;
}

static bool front_init(rp *r, rp_front *f)
{
	memset(f, 0, sizeof *f);
	f->hcap = 1024;
	f->head = ds_arena_alloc(&r->a, (size_t)f->hcap, sizeof *f->head);
	if (!f->head)
		return false;
	memset(f->head, 0xff, (size_t)f->hcap * sizeof *f->head);
	return true;
}

static bool front_add(rp *r, rp_front *f, void *s);

#ifndef NDEBUG
/* Each resident on its own units, no other unit held (the test build
 * checks every state added against this recount). */
static bool units_agree(const rp *r, void *s)
{
	const uint8_t *st = stat(r, s);
	const int8_t *ps = pos(r, s);
	const int64_t *fr = ufree(r, s);
	uint32_t held = 0;
	for (int32_t x = 0; x < r->nb; x++) {
		if ((st[x] == ST_RES) != (ps[x] >= 0))
			return false;
		for (int32_t u = ps[x]; st[x] == ST_RES && u < ps[x] + r->w[x];
		     u++) {
			if (held >> u & 1 || fr[u] >= 0)
				return false;
			held |= 1u << u;
		}
	}
	for (int32_t u = 0; u < r->units; u++)
		if (!(held >> u & 1) && fr[u] < 0)
			return false;
	return true;
}
#endif

/* f emptied, its memory kept for the next step. */
static void front_reset(rp_front *f)
{
	f->n = 0;
	memset(f->head, 0xff, (size_t)f->hcap * sizeof *f->head);
}

/* The live states of from added to to (emptied first). */
static void front_copy(rp *r, const rp_front *from, rp_front *to)
{
	front_reset(to);
	for (int32_t i = 0; i < from->n && !r->failed; i++)
		if (!hdr(from, i, r->rec)->dead)
			front_add(r, to, hdr(from, i, r->rec));
}

/* The hash slots twice as many, the chains rebuilt. */
static bool front_rehash(rp *r, rp_front *f)
{
	ds_arena_release(&r->a, f->head);
	f->hcap *= 2;
	f->head = ds_arena_alloc(&r->a, (size_t)f->hcap, sizeof *f->head);
	if (!f->head)
		return false;
	memset(f->head, 0xff, (size_t)f->hcap * sizeof *f->head);
	for (int32_t i = 0; i < f->n; i++) {
		void *s = hdr(f, i, r->rec);
		int32_t k = (int32_t)(key_hash(r, s) & (uint64_t)(f->hcap - 1));
		((rp_hdr *)s)->next = f->head[k];
		f->head[k] = i;
	}
	return true;
}

/* Adds state s to f unless a state of f covers it; drops those it
 * covers.  False only when memory fails (r->failed). */
static bool front_add(rp *r, rp_front *f, void *s)
{
	normalise(r, s);
	DS_ASSERT(units_agree(r, s));
	r->work++;
	int32_t k = (int32_t)(key_hash(r, s) & (uint64_t)(f->hcap - 1));
	for (int32_t j = f->head[k]; j >= 0; j = hdr(f, j, r->rec)->next) {
		rp_hdr *o = hdr(f, j, r->rec);
		if (!o->dead && same_key(r, o, s) && covers(r, o, s))
			return true;
	}
	for (int32_t j = f->head[k]; j >= 0; j = hdr(f, j, r->rec)->next) {
		rp_hdr *o = hdr(f, j, r->rec);
		if (!o->dead && same_key(r, o, s) && covers(r, s, o))
			o->dead = 1;
	}
	if (f->n == f->cap) {
		int32_t nc = f->cap ? 2 * f->cap : 256;
		char *nr = ds_arena_grow(&r->a, f->rec, (size_t)nc, r->rec);
		if (!nr)
			return !(r->failed = true);
		f->rec = nr, f->cap = nc;
	}
	rp_hdr *d = hdr(f, f->n, r->rec);
	memcpy(d, s, r->rec);
	d->dead = 0;
	d->next = f->head[k];
	f->head[k] = f->n++;
	if (f->n > f->hcap / 2 && !front_rehash(r, f))
		return !(r->failed = true);
	return true;
}

static int32_t ev_push(rp *r, int32_t parent, int kind, int32_t x, int pos_,
		       int64_t start, int64_t fin)
{
	if (r->nev == r->evcap) {
		int32_t nc = r->evcap ? 2 * r->evcap : 4096;
		rp_ev *ne = ds_arena_grow(&r->a, r->ev, (size_t)nc, sizeof *ne);
		if (!ne) {
			r->failed = true;
			return -1;
		}
		r->ev = ne, r->evcap = nc;
	}
	r->ev[r->nev] = (rp_ev){parent, (int8_t)kind, (int8_t)pos_, x, start,
				fin};
	return r->nev++;
}

/* The least finish s can reach: each clock plus its steps left. */
static int64_t bound(const rp *r, void *s)
{
	const int64_t *c = clk(r, s), *rm = rem(r, s);
	int64_t b = 0;
	for (int i = 0; i < r->npc; i++)
		if (r->active[i])
			b = max64(b, c[i] + rm[i]);
	return b;
}

/* The first step using x that s has not run, -1 when none. */
static int32_t next_undone(const rp *r, void *s, int32_t x)
{
	for (int32_t k = r->uoff[x]; k < r->uoff[x + 1]; k++)
		if (!is_done(r, s, r->ustep[k]))
			return r->ustep[k];
	return -1;
}

/* The first step s has not run. */
static int32_t first_undone(const rp *r, void *s)
{
	const uint64_t *d = done(r, s);
	int32_t w = 0;
	while (w < r->nw && d[w] == UINT64_MAX)
		w++;
	int32_t si = 64 * w;
	while (si < r->ns && is_done(r, s, si))
		si++;
	return si;
}

/* ---- the moves ---- */

/* Free units beside window [p, p + w): fewer is a snugger fit. */
static int snug(const rp *r, const int64_t *fr, int32_t p, int32_t w)
{
	return (p > 0 && fr[p - 1] >= 0) + (p + w < r->units && fr[p + w] >= 0);
}

/* The windows of w free units a load may take, one per distinct time it
 * could start (lo or a unit's free time), the snuggest, earliest first,
 * into at[]; their count. */
static int32_t spots(const rp *r, const int64_t *fr, int32_t w, int64_t lo,
		     int32_t *at)
{
	int64_t t[RP_UNITS];
	int sn[RP_UNITS];
	int32_t k = 0;
	for (int32_t p = 0; p + w <= r->units; p++) {
		int64_t s = lo;
		bool ok = true;
		for (int32_t u = p; u < p + w && ok; u++)
			ok = fr[u] >= 0, s = max64(s, fr[u]);
		if (!ok)
			continue;
		int c = snug(r, fr, p, w), j = 0;
		while (j < k && t[j] != s)
			j++;
		if (j == k)
			t[k] = s, sn[k] = c, at[k++] = p;
		else if (c < sn[j])
			sn[j] = c, at[j] = p;
	}
	for (int32_t i = 1; i < k; i++) /* by time; k <= RP_UNITS */
		for (int32_t j = i; j > 0 && t[j - 1] > t[j]; j--) {
			int64_t tt = t[j];
			t[j] = t[j - 1], t[j - 1] = tt;
			int32_t a = at[j];
			at[j] = at[j - 1], at[j - 1] = a;
		}
	return k;
}

/* The next state: a copy of s in r's scratch record. */
static void *scratch(rp *r, void *tmp, const void *s)
{
	memcpy(tmp, s, r->rec);
	return tmp;
}

static void give_units(const rp *r, void *s, int32_t x, int64_t at)
{
	int64_t *fr = ufree(r, s);
	int32_t p = pos(r, s)[x];
	for (int32_t u = p; u < p + r->w[x]; u++)
		fr[u] = at;
	pos(r, s)[x] = -1;
}

/* Candidates for a move in state s, next uses counted among the steps s
 * has not run: residents used since they came in, used later but not by
 * the first step s has not run (evict), or spilled buffers used later
 * (reload), at most k, the furthest next use first for an eviction, the
 * nearest for a reload. */
static int32_t candidates(const rp *r, void *s, bool evict, int32_t k,
			  int32_t *out)
{
	const uint8_t *st = stat(r, s), *us = used(r, s);
	int32_t nu[RP_BUFS], n = 0, si = first_undone(r, s);
	for (int32_t x = 0; x < r->nb; x++) {
		int32_t u = next_undone(r, s, x);
		if (u < 0)
			continue;
		if (evict ? st[x] != ST_RES || !us[x] || u == si
			  : st[x] != ST_DDR)
			continue;
		int32_t j = n++;
		for (; j > 0 && (evict ? nu[j - 1] < u : nu[j - 1] > u); j--)
			nu[j] = nu[j - 1], out[j] = out[j - 1];
		nu[j] = u, out[j] = x;
	}
	return n < k ? n : k;
}

/* Event kind of x on state t's history (not while a rollout only
 * measures: r->quiet). */
static void note(rp *r, void *t, int kind, int32_t x, int32_t p,
		 int64_t start, int64_t fin)
{
	rp_hdr *h = t;
	if (!r->quiet)
		h->hist = ev_push(r, h->hist, kind, x, p, start, fin);
}

/* Buffer x of state t out (its SPILL_OUT after its last use); false
 * when that passes the traffic budget. */
static bool apply_evict(rp *r, void *t, int32_t x)
{
	int32_t b = r->buf[x];
	int64_t tr = ds_spill_traffic(r->g, b);
	if (((rp_hdr *)t)->tr + tr > r->budget)
		return false;
	int64_t *cl = clk(r, t), *tx = tim(r, t) + 3 * x;
	int64_t at = max64(cl[r->pout], tx[1]);
	int64_t fin = at + ds_spill_out_cycles(r->g, b);
	stat(r, t)[x] = ST_DDR, tx[2] = fin, cl[r->pout] = fin;
	give_units(r, t, x, fin);
	((rp_hdr *)t)->tr += tr;
	note(r, t, EV_EVICT, x, -1, at, fin);
	return true;
}

/* Buffer x of state t back into the units from p on. */
static void apply_reload(rp *r, void *t, int32_t x, int32_t p)
{
	int64_t start = max64(clk(r, t)[r->pin], tim(r, t)[3 * x + 2]);
	for (int32_t u = p; u < p + r->w[x]; u++)
		start = max64(start, ufree(r, t)[u]);
	int64_t fin = start + ds_spill_in_cycles(r->g, r->buf[x]);
	take_units(r, t, x, p);
	int64_t *tx = tim(r, t) + 3 * x;
	stat(r, t)[x] = ST_RES, used(r, t)[x] = 0;
	tx[0] = tx[1] = fin, clk(r, t)[r->pin] = fin;
	note(r, t, EV_RELOAD, x, p, start, fin);
}

/* Buffer x of state i of f out, the state added to f. */
static void evict_one(rp *r, rp_front *f, int32_t i, int32_t x, void *tmp)
{
	void *t = scratch(r, tmp, hdr(f, i, r->rec));
	if (apply_evict(r, t, x) && bound(r, t) < r->ub)
		front_add(r, f, t);
}

/* Buffer x of state i of f back, into each window spots() gives. */
static void reload_one(rp *r, rp_front *f, int32_t i, int32_t x, void *tmp)
{
	int32_t at[RP_UNITS];
	void *s = hdr(f, i, r->rec);
	int64_t lo = max64(clk(r, s)[r->pin], tim(r, s)[3 * x + 2]);
	int32_t na = spots(r, ufree(r, s), r->w[x], lo, at);
	for (int32_t k = 0; k < na && !r->failed; k++) {
		void *t = scratch(r, tmp, hdr(f, i, r->rec)); /* f may move */
		apply_reload(r, t, x, at[k]);
		if (bound(r, t) < r->ub)
			front_add(r, f, t);
	}
}

/* Evictions (evict) or reloads before the next step, from every state
 * of f, those they make included: f closed under them. */
static void moves(rp *r, rp_front *f, bool evict, void *tmp)
{
	for (int32_t i = 0; i < f->n && !r->failed; i++) {
		if (hdr(f, i, r->rec)->dead)
			continue;
		int32_t c[RP_BUFS];
		int32_t nc = candidates(r, hdr(f, i, r->rec), evict,
					evict ? RP_EVICT_K : RP_RELOAD_K, c);
		for (int32_t j = 0; j < nc && !r->failed; j++)
			(evict ? evict_one : reload_one)(r, f, i, c[j], tmp);
	}
}

/* ---- a step ---- */

/* The allocations of a step placed: for each distinct start time the
 * snuggest placement (windows in the order of the step's buffers). */
typedef struct rp_place {
	int32_t n, na;		 /* placements; allocations */
	int32_t x[RP_ALLOCS];	 /* the buffers allocated */
	int32_t p[RP_UNITS][RP_ALLOCS]; /* per placement, each one's window */
	int64_t t[RP_UNITS];	 /* its start */
	int sn[RP_UNITS];	 /* its snugness */
} rp_place;

static void place_rec(const rp *r, int64_t *fr, rp_place *pl, int32_t i,
		      int32_t *cur, int64_t t, int sn)
{
	if (i == pl->na) {
		int32_t j = 0;
		while (j < pl->n && pl->t[j] != t)
			j++;
		if (j == pl->n && pl->n == RP_UNITS)
			return;
		if (j < pl->n && sn >= pl->sn[j])
			return;
		pl->n += j == pl->n;
		pl->t[j] = t, pl->sn[j] = sn;
		memcpy(pl->p[j], cur, sizeof pl->p[j]);
		return;
	}
	int32_t x = pl->x[i], w = r->w[x];
	for (int32_t p = 0; p + w <= r->units; p++) {
		bool ok = true;
		int64_t s = t;
		for (int32_t u = p; u < p + w && ok; u++)
			ok = fr[u] >= 0, s = max64(s, fr[u]);
		if (!ok)
			continue;
		int c = snug(r, fr, p, w);
		int64_t keep[RP_UNITS];
		for (int32_t u = 0; u < w; u++)
			keep[u] = fr[p + u], fr[p + u] = -1;
		cur[i] = p;
		place_rec(r, fr, pl, i + 1, cur, s, sn + c);
		for (int32_t u = 0; u < w; u++)
			fr[p + u] = keep[u];
	}
}

/* Whether s can run step si: its buffers resident but those it
 * allocates; *lo the start its clock and their readiness allow. */
static bool step_ready(const rp *r, void *s, int32_t si, int64_t *lo)
{
	const uint8_t *st = stat(r, s);
	const int64_t *t = tim(r, s);
	*lo = clk(r, s)[r->spipe[si]];
	for (int32_t k = r->soff[si]; k < r->soff[si + 1]; k++) {
		int32_t x = r->sbuf[k];
		if (r->salloc[k])
			continue;
		if (st[x] != ST_RES)
			return false;
		*lo = max64(*lo, t[3 * x]);
	}
	return true;
}

/* Step si run on state t with placement j of pl. */
static void apply_step(rp *r, void *t, int32_t si, const rp_place *pl,
		       int32_t j)
{
	for (int32_t i = 0; i < pl->na; i++) {
		take_units(r, t, pl->x[i], pl->p[j][i]);
		note(r, t, EV_ALLOC, pl->x[i], pl->p[j][i], 0, 0);
	}
	int64_t start = pl->t[j], fin = start + r->scyc[si];
	uint8_t *st = stat(r, t), *us = used(r, t);
	int64_t *tm = tim(r, t);
	for (int32_t k = r->soff[si]; k < r->soff[si + 1]; k++) {
		int32_t x = r->sbuf[k];
		int64_t *tx = tm + 3 * x;
		if (r->salloc[k])
			st[x] = ST_RES, tx[0] = tx[1] = fin;
		tx[1] = max64(tx[1], fin);
		if (r->sdep[k])
			tx[0] = fin;
		us[x] = 1;
	}
	done(r, t)[si >> 6] |= 1ull << (si & 63);
	rem(r, t)[r->spipe[si]] -= r->scyc[si];
	for (int32_t k = r->soff[si]; k < r->soff[si + 1]; k++)
		if (next_undone(r, t, r->sbuf[k]) < 0)
			st[r->sbuf[k]] = ST_NONE, give_units(r, t, r->sbuf[k], fin);
	clk(r, t)[r->spipe[si]] = fin;
	note(r, t, EV_STEP, si, -1, start, fin);
}

/* Step si run from s with placement j of pl, into next. */
static void run_step(rp *r, rp_front *next, void *s, int32_t si,
		     const rp_place *pl, int32_t j, void *tmp)
{
	void *t = scratch(r, tmp, s);
	apply_step(r, t, si, pl, j);
	if (!r->failed && bound(r, t) < r->ub)
		front_add(r, next, t);
}

/* The placements of step si's allocations from state s (*pl); false
 * when s cannot run it (a buffer it reads not resident). */
static bool placements(const rp *r, void *s, int32_t si, rp_place *pl)
{
	int64_t lo;
	if (!step_ready(r, s, si, &lo))
		return false;
	pl->na = 0;
	for (int32_t k = r->soff[si]; k < r->soff[si + 1]; k++)
		if (r->salloc[k])
			pl->x[pl->na++] = r->sbuf[k];
	int64_t fr[RP_UNITS];
	int32_t cur[RP_ALLOCS] = {0};
	memcpy(fr, ufree(r, s), (size_t)r->units * sizeof *fr);
	pl->n = 0;
	place_rec(r, fr, pl, 0, cur, lo, 0);
	return true;
}

/* Whether s has run every step si follows. */
static bool preds_done(const rp *r, void *s, int32_t si)
{
	const uint64_t *pr = r->spred + (size_t)si * (size_t)r->nw;
	const uint64_t *d = done(r, s);
	for (int32_t w = 0; w < r->nw; w++)
		if (pr[w] & ~d[w])
			return false;
	return true;
}

/* Step si from state i of f, with each placement of its allocations. */
static void step_from(rp *r, rp_front *f, int32_t i, rp_front *next,
		      int32_t si, void *tmp)
{
	rp_place pl;
	if (!placements(r, hdr(f, i, r->rec), si, &pl))
		return;
	for (int32_t j = 0; j < pl.n; j++)
		run_step(r, next, hdr(f, i, r->rec), si, &pl, j, tmp);
}

/* From every state of f, each step it may run next, into next. */
static void steps_from(rp *r, rp_front *f, rp_front *next, void *tmp)
{
	for (int32_t i = 0; i < f->n && !r->failed; i++) {
		void *s = hdr(f, i, r->rec);
		if (((rp_hdr *)s)->dead)
			continue;
		int32_t seen = 0;
		for (int32_t si = first_undone(r, s);
		     si < r->ns && seen < RP_WINDOW && !r->failed; si++) {
			s = hdr(f, i, r->rec);
			if (is_done(r, s, si))
				continue;
			seen++;
			if (preds_done(r, s, si))
				step_from(r, f, i, next, si, tmp);
		}
	}
}

/* ---- rollouts ---- */

/* The resident of t used furthest ahead that step si does not use, -1
 * when none. */
static int32_t roll_victim(const rp *r, void *t, int32_t si)
{
	const uint8_t *st = stat(r, t), *us = used(r, t);
	int32_t best = -1, bu = -1;
	for (int32_t x = 0; x < r->nb; x++) {
		if (st[x] != ST_RES || !us[x] || rp_use_at(r, si, x) >= 0)
			continue;
		int32_t u = next_undone(r, t, x);
		if (u > bu)
			best = x, bu = u;
	}
	return best;
}

/* Buffer x back on t for step si, into the earliest window, evicting
 * the victims roll_victim names while none is free; false when that
 * runs out of victims or of traffic. */
static bool roll_reload(rp *r, void *t, int32_t si, int32_t x)
{
	while (stat(r, t)[x] == ST_DDR) {
		int32_t at[RP_UNITS];
		int64_t lo = max64(clk(r, t)[r->pin], tim(r, t)[3 * x + 2]);
		if (spots(r, ufree(r, t), r->w[x], lo, at) > 0) {
			apply_reload(r, t, x, at[0]);
			return true;
		}
		int32_t v = roll_victim(r, t, si);
		if (v < 0 || !apply_evict(r, t, v))
			return false;
	}
	return stat(r, t)[x] == ST_RES;
}

/* Step si on t as a one-at-a-time policy runs it: its spilled buffers
 * back, victims out while its allocations find no units, the earliest
 * placement (the snuggest among those). */
static bool roll_step(rp *r, void *t, int32_t si)
{
	for (int32_t k = r->soff[si]; k < r->soff[si + 1]; k++)
		if (!r->salloc[k] && !roll_reload(r, t, si, r->sbuf[k]))
			return false;
	rp_place pl;
	for (;;) {
		if (!placements(r, t, si, &pl))
			return false;
		if (pl.n > 0)
			break;
		int32_t v = roll_victim(r, t, si);
		if (v < 0 || !apply_evict(r, t, v))
			return false;
	}
	int32_t j = 0;
	for (int32_t i = 1; i < pl.n; i++)
		if (pl.t[i] < pl.t[j] || (pl.t[i] == pl.t[j] && pl.sn[i] < pl.sn[j]))
			j = i;
	apply_step(r, t, si, &pl, j);
	return true;
}

/* State s run to its end on t by roll_step, the steps left in the plan's
 * order: the end's time, INT64_MAX when a step cannot run. */
static int64_t rollout(rp *r, const void *s, void *t)
{
	memcpy(t, s, r->rec);
	for (int32_t si = 0; si < r->ns; si++)
		if (!is_done(r, t, si) && !roll_step(r, t, si))
			return INT64_MAX;
	return bound(r, t);
}

/* State s's rollout, kept when it ends before the best yet: run again
 * with its events into r->inc, and the bound that prunes lowered to its
 * end. */
static void roll_best(rp *r, void *s)
{
	r->quiet = true;
	int64_t end = rollout(r, s, r->roll);
	r->quiet = false;
	if (end < r->inc_end) {
		r->inc_end = end;
		rollout(r, s, r->inc);
		r->ub = min64(r->ub, end);
	}
}

/* The kept states of next: at most RP_BEAM per traffic figure, the least
 * bound first (then the least clocks' sum, then the first made), each
 * run to its end by a rollout (roll_best). */
typedef struct rp_rank {
	int64_t tr, b, sum;
	int32_t i;
} rp_rank;

static int rank_cmp(const void *pa, const void *pb)
{
	const rp_rank *a = pa, *b = pb;
	if (a->tr != b->tr)
		return a->tr < b->tr ? -1 : 1;
	if (a->b != b->b)
		return a->b < b->b ? -1 : 1;
	if (a->sum != b->sum)
		return a->sum < b->sum ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

static bool beam(rp *r, rp_front *next, rp_front *out)
{
	if (next->n > r->nrank) {
		ds_arena_release(&r->a, r->rank);
		r->nrank = 2 * next->n;
		r->rank = ds_arena_alloc(&r->a, (size_t)r->nrank, sizeof *r->rank);
		if (!r->rank)
			return !(r->failed = true);
	}
	rp_rank *k = r->rank;
	int32_t n = 0;
	for (int32_t i = 0; i < next->n; i++) {
		void *s = hdr(next, i, r->rec);
		if (((rp_hdr *)s)->dead)
			continue;
		int64_t sum = 0;
		for (int c = 0; c < r->npc; c++)
			sum += clk(r, s)[c];
		k[n++] = (rp_rank){((rp_hdr *)s)->tr, bound(r, s), sum, i};
	}
	if (n > 1)
		qsort(k, (size_t)n, sizeof *k, rank_cmp);
	front_reset(out);
	for (int32_t i = 0, run = 0; i < n && !r->failed; i++) {
		run = i > 0 && k[i].tr == k[i - 1].tr ? run + 1 : 0;
		if (run >= RP_BEAM)
			continue;
		void *s = hdr(next, k[i].i, r->rec);
		front_add(r, out, s);
		roll_best(r, s);
	}
	return !r->failed;
}

/* ---- the search ---- */

/* One step of the search: the states of f[0] through evictions (f[1]),
 * reloads (f[2]) and each step a state may run next (f[3]) into f[0]
 * again. */
static bool search_step(rp *r, rp_front *f, void *tmp)
{
	front_copy(r, &f[0], &f[1]);
	moves(r, &f[1], true, tmp);
	front_copy(r, &f[1], &f[2]);
	moves(r, &f[2], false, tmp);
	front_reset(&f[3]);
	steps_from(r, &f[2], &f[3], tmp);
	return !r->failed && beam(r, &f[3], &f[0]);
}

/* The last event of the best of f's states and the best rollout (the
 * earliest end, then the least traffic), -1 when there is neither. */
static int32_t best_end(rp *r, const rp_front *f)
{
	int32_t best = -1;
	int64_t bend = 0, btr = 0;
	if (r->inc_end < INT64_MAX)
		best = ((rp_hdr *)r->inc)->hist, bend = r->inc_end,
		btr = ((rp_hdr *)r->inc)->tr;
	for (int32_t i = 0; i < f->n; i++) {
		void *s = hdr(f, i, r->rec);
		if (((rp_hdr *)s)->dead)
			continue;
		int64_t end = bound(r, s), tr = ((rp_hdr *)s)->tr;
		if (best < 0 || end < bend || (end == bend && tr < btr))
			best = ((rp_hdr *)s)->hist, bend = end, btr = tr;
	}
	return best;
}

/* The search from s0: the last event of the best end state or rollout,
 * -1 when none ends before the plan does. */
static int32_t search(rp *r, void *s0, void *tmp)
{
	rp_front f[4];
	for (int i = 0; i < 4; i++)
		if (!front_init(r, &f[i]))
			return -1;
	if (!front_add(r, &f[0], s0))
		return -1;
	for (int32_t si = 0; si < r->ns; si++)
		if (!search_step(r, f, tmp) || f[0].n == 0 ||
		    r->work > RP_WORK) {
			front_reset(&f[0]); /* every state lost: the rollouts */
			break;
		}
	return best_end(r, &f[0]);
}

/* ---- a run ---- */

/* The spill pipes and the clocks' arrays, the state's layout. */
static bool clocks(rp *r)
{
	const ds_graph *g = r->g;
	r->npc = g->npipes + 2;
	r->pin = ds_graph_find_pipe(g, "MTE2");
	r->pout = ds_graph_find_pipe(g, "MTE3");
	r->pin = r->pin >= 0 ? r->pin : g->npipes;
	r->pout = r->pout >= 0 ? r->pout : g->npipes + 1;
	r->active = ds_arena_alloc(&r->a, (size_t)r->npc, 1);
	layout_rec(r);
	return !r->a.failed;
}

static int nomem(ds_err *e) { return ds_fail(e, DS_ENOMEM, "out of memory"); }

static int run(rp *r, ds_plan *out, bool *changed, ds_err *e)
{
	if (!rp_find_tail(r))
		return r->a.failed ? nomem(e) : DS_OK;
	int32_t *at = rp_positions(r);
	if (!at)
		return nomem(e);
	if (!rp_build_steps(r, at) || r->ns == 0)
		return r->a.failed ? nomem(e) : DS_OK;
	if (!clocks(r))
		return nomem(e);
	void *s0 = ds_arena_alloc(&r->a, 1, r->rec);
	void *tmp = ds_arena_alloc(&r->a, 1, r->rec);
	r->roll = ds_arena_alloc(&r->a, 1, r->rec);
	r->inc = ds_arena_alloc(&r->a, 1, r->rec);
	r->inc_end = INT64_MAX;
	if (!s0 || !tmp || !r->roll || !r->inc)
		return nomem(e);
	for (int32_t i = 0; i < r->p->len; i++)
		r->ub = max64(r->ub, r->fin[r->p->order[i]]);
	if (!rp_origin(r, at, s0))
		return r->a.failed ? nomem(e) : DS_OK;
	((rp_hdr *)s0)->hist = ev_push(r, -1, EV_ROOT, -1, -1, 0, 0);
	int32_t best = search(r, s0, tmp);
	if (r->failed || r->a.failed)
		return nomem(e);
	return best < 0 ? DS_OK : rp_emit_plan(r, best, at, out, changed, e);
}

int ds_replan_tail(const ds_graph *g, const ds_plan *p, const int64_t *fin,
		   int m, int64_t max_ddr, ds_plan *out, bool *changed,
		   ds_err *e)
{
	memset(out, 0, sizeof *out);
	*changed = false;
	if (!p->offset || p->len == 0 || m < 0 || m >= DS_NMEM)
		return DS_OK;
	rp r;
	memset(&r, 0, sizeof r);
	r.g = g, r.p = p, r.fin = fin, r.m = m;
	r.cap = g->caps.cap[m], r.budget = max_ddr;
	ds_arena_init(&r.a, g->heap);
	r.q = rp_unit(&r);
	int rc = r.q > 0 ? run(&r, out, changed, e) : DS_OK;
	ds_arena_free(&r.a);
	return rc;
}
