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
 * whose large residents sit on unit boundaries below units * q and whose
 * other buffers of m above it, units being what the small buffers one
 * operation needs leave, and whose large live bytes fit in the units.
 * The model leaves out the operations that use no large buffer and the
 * memory of the small ones; the plan is built from the search's best
 * state and replayed by the caller, which keeps it only when shorter.
 *
 * The search: steps in the plan's order; before each, evictions (of the
 * RP_EVICT_K residents used longest from now) and then reloads (of the
 * RP_RELOAD_K spilled buffers needed soonest), each at every distinct
 * time a window of free units allows, the snuggest window for each
 * time; a state is dropped when another with the same buffers at the
 * same units matches or beats it in traffic and every time, or when it
 * cannot end before the plan does, and after each step at most
 * RP_BEAM states are kept per traffic figure (the shortest bound first).
 *
 * The plan: the prefix as it was (its spill lines too, a line whose
 * reload falls in the tail reloading when the search says), then the
 * tail's nodes in the order of their times: steps and spill nodes at the
 * search's, the others as late as the steps after them allow (ALAP), a
 * load or store among them at the start of the step running then, so
 * that it does not queue behind a reload on its pipe; each ALLOC or
 * SPILL_IN waits until its addresses are free (large buffers at their
 * units, small ones of m above the units, others where they fit, their
 * own offset first).
 *
 * Requires: a valid graph and a full plan ds_replay accepts, its spill
 * lines in the order of their SPILL_OUTs (ds_plan_sort_spills), with the
 * finish time of each of its nodes from that replay.
 * Guarantees: *changed false and *out empty, or *out a plan of the same
 * graph whose extra DDR traffic is at most max_ddr (none added where the
 * prefix already reaches it), its spill lines sorted; its validity and
 * makespan are the replay's to judge (the caller's).  The same input
 * gives the same plan.
 * Cost: O(N L) for the tail (L buffers live at once), then per step
 * O(F (E + R) S) for F states, E + R moves of O(units) windows each and
 * S = O(B + units + pipes) bytes a state; F is bounded by RP_BEAM times
 * the traffic figures, and the whole by RP_WORK state copies; the plan
 * O(T log T + T L) for T tail nodes.  One arena. */
#include "ds_replan_int.h"

#include <stdlib.h>
#include <string.h>

/* A state: a header then its arrays, in one record of rec bytes. */
typedef struct rp_hdr {
	int32_t hist;
	int32_t next; /* the hash chain */
	int64_t tr;
	uint8_t dead;
} rp_hdr;

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
static int64_t *clk(const rp *r, void *s) { return (int64_t *)((char *)s + r->o_clk); }
/* ready, last and avail of buffer x: t[3x], t[3x+1], t[3x+2] */
static int64_t *tim(const rp *r, void *s) { return (int64_t *)((char *)s + r->o_t); }
static int64_t *ufree(const rp *r, void *s) { return (int64_t *)((char *)s + r->o_free); }
static uint8_t *stat(const rp *r, void *s) { return (uint8_t *)s + r->o_stat; }
static int8_t *pos(const rp *r, void *s) { return (int8_t *)s + r->o_pos; }
static uint8_t *used(const rp *r, void *s) { return (uint8_t *)s + r->o_used; }


static void layout_rec(rp *r)
{
	size_t o = (sizeof(rp_hdr) + 7) & ~(size_t)7;
	r->o_clk = o, o += (size_t)r->npc * 8;
	r->o_t = o, o += (size_t)r->nb * 24;
	r->o_free = o, o += (size_t)r->units * 8;
	r->o_stat = o, o += (size_t)r->nb;
	r->o_pos = o, o += (size_t)r->nb;
	r->o_used = o, o += (size_t)r->nb;
	r->rec = (o + 7) & ~(size_t)7;
}

/* The key: the bytes of stat, pos and used. */
static uint64_t key_hash(const rp *r, void *s)
{
	const uint8_t *k = stat(r, s);
	uint64_t h = 1469598103934665603ull;
	for (int32_t i = 0; i < 3 * r->nb; i++)
		h = (h ^ k[i]) * 1099511628211ull;
	return h;
}

static bool same_key(const rp *r, void *a, void *b)
{
	return memcmp(stat(r, a), stat(r, b), (size_t)r->nb * 3) == 0;
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
	const int64_t *c = clk(r, s);
	int64_t b = 0;
	for (int i = 0; i < r->npc; i++)
		if (r->active[i])
			b = max64(b, c[i] + r->rem[i]);
	return b;
}

/* The first step at or after si using x, -1 when none. */
static int32_t next_use(const rp *r, int32_t x, int32_t si)
{
	for (int32_t k = r->uoff[x]; k < r->uoff[x + 1]; k++)
		if (r->ustep[k] >= si)
			return r->ustep[k];
	return -1;
}

static bool last_use(const rp *r, int32_t x, int32_t si)
{
	return r->ustep[r->uoff[x + 1] - 1] == si;
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

static void take_units(const rp *r, void *s, int32_t x, int32_t p)
{
	int64_t *fr = ufree(r, s);
	for (int32_t u = p; u < p + r->w[x]; u++)
		fr[u] = -1;
	pos(r, s)[x] = (int8_t)p;
}

static void give_units(const rp *r, void *s, int32_t x, int64_t at)
{
	int64_t *fr = ufree(r, s);
	int32_t p = pos(r, s)[x];
	for (int32_t u = p; u < p + r->w[x]; u++)
		fr[u] = at;
	pos(r, s)[x] = -1;
}

/* Candidates for a move at step si: residents used, not used by si, used
 * later (evict), or spilled buffers used later (reload), at most k, the
 * furthest next use first for an eviction, the nearest for a reload. */
static int32_t candidates(const rp *r, void *s, int32_t si, bool evict,
			  int32_t k, int32_t *out)
{
	const uint8_t *st = stat(r, s), *us = used(r, s);
	int32_t nu[RP_BUFS], n = 0;
	for (int32_t x = 0; x < r->nb; x++) {
		int32_t u = next_use(r, x, si);
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

/* Buffer x of state i of f out (its SPILL_OUT after its last use). */
static void evict_one(rp *r, rp_front *f, int32_t i, int32_t x, void *tmp)
{
	void *s = hdr(f, i, r->rec);
	int32_t b = r->buf[x];
	int64_t tr = ds_spill_traffic(r->g, b);
	if (((rp_hdr *)s)->tr + tr > r->budget)
		return;
	void *t = scratch(r, tmp, s);
	int64_t *cl = clk(r, t), *tx = tim(r, t) + 3 * x;
	int64_t at = max64(cl[r->pout], tx[1]);
	int64_t fin = at + ds_spill_out_cycles(r->g, b);
	stat(r, t)[x] = ST_DDR, tx[2] = fin, cl[r->pout] = fin;
	give_units(r, t, x, fin);
	((rp_hdr *)t)->tr += tr;
	((rp_hdr *)t)->hist = ev_push(r, ((rp_hdr *)s)->hist, EV_EVICT, x, -1,
				      at, fin);
	if (bound(r, t) < r->ub)
		front_add(r, f, t);
}

/* Buffer x of state i of f back, into each window spots() gives. */
static void reload_one(rp *r, rp_front *f, int32_t i, int32_t x, void *tmp)
{
	int32_t b = r->buf[x], at[RP_UNITS];
	void *s = hdr(f, i, r->rec);
	int64_t lo = max64(clk(r, s)[r->pin], tim(r, s)[3 * x + 2]);
	int32_t na = spots(r, ufree(r, s), r->w[x], lo, at);
	for (int32_t k = 0; k < na && !r->failed; k++) {
		s = hdr(f, i, r->rec); /* f may have moved */
		void *t = scratch(r, tmp, s);
		int64_t start = lo;
		for (int32_t u = at[k]; u < at[k] + r->w[x]; u++)
			start = max64(start, ufree(r, t)[u]);
		int64_t fin = start + ds_spill_in_cycles(r->g, b);
		take_units(r, t, x, at[k]);
		int64_t *tx = tim(r, t) + 3 * x;
		stat(r, t)[x] = ST_RES, used(r, t)[x] = 0;
		tx[0] = tx[1] = fin, clk(r, t)[r->pin] = fin;
		((rp_hdr *)t)->hist = ev_push(r, ((rp_hdr *)s)->hist, EV_RELOAD,
					      x, at[k], start, fin);
		if (bound(r, t) < r->ub)
			front_add(r, f, t);
	}
}

/* Evictions (evict) or reloads before step si, from every state of f,
 * those they make included: f closed under them. */
static void moves(rp *r, rp_front *f, int32_t si, bool evict, void *tmp)
{
	for (int32_t i = 0; i < f->n && !r->failed; i++) {
		if (hdr(f, i, r->rec)->dead)
			continue;
		int32_t c[RP_BUFS];
		int32_t nc = candidates(r, hdr(f, i, r->rec), si, evict,
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

/* Step si run from s with placement j of pl, into next. */
static void run_step(rp *r, rp_front *next, void *s, int32_t si,
		     const rp_place *pl, int32_t j, void *tmp)
{
	void *t = scratch(r, tmp, s);
	int32_t h = ((rp_hdr *)s)->hist;
	for (int32_t i = 0; i < pl->na; i++) {
		take_units(r, t, pl->x[i], pl->p[j][i]);
		h = ev_push(r, h, EV_ALLOC, pl->x[i], pl->p[j][i], 0, 0);
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
		if (last_use(r, x, si))
			st[x] = ST_NONE, give_units(r, t, x, fin);
	}
	clk(r, t)[r->spipe[si]] = fin;
	((rp_hdr *)t)->hist = ev_push(r, h, EV_STEP, si, -1, start, fin);
	if (!r->failed && bound(r, t) < r->ub)
		front_add(r, next, t);
}

static void steps_from(rp *r, rp_front *f, rp_front *next, int32_t si,
		       void *tmp)
{
	rp_place pl;
	pl.na = 0;
	for (int32_t k = r->soff[si]; k < r->soff[si + 1]; k++)
		if (r->salloc[k])
			pl.x[pl.na++] = r->sbuf[k];
	for (int32_t i = 0; i < f->n && !r->failed; i++) {
		void *s = hdr(f, i, r->rec);
		int64_t lo;
		if (((rp_hdr *)s)->dead || !step_ready(r, s, si, &lo))
			continue;
		int64_t fr[RP_UNITS];
		int32_t cur[RP_ALLOCS] = {0};
		memcpy(fr, ufree(r, s), (size_t)r->units * sizeof *fr);
		pl.n = 0;
		place_rec(r, fr, &pl, 0, cur, lo, 0);
		for (int32_t j = 0; j < pl.n; j++)
			run_step(r, next, hdr(f, i, r->rec), si, &pl, j, tmp);
	}
}

/* The kept states of next: at most RP_BEAM per traffic figure, the least
 * bound first (then the least clocks' sum, then the first made). */
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
		if (run < RP_BEAM)
			front_add(r, out, hdr(next, k[i].i, r->rec));
	}
	return !r->failed;
}

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
static int64_t unit_of(const rp *r)
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
 * (big[i]), whether the large ones sit on unit boundaries (al[i]), the
 * end of the highest large one (hi[i]) and the offset of the lowest
 * small one (lo[i]). */
typedef struct rp_lines {
	int32_t *big;
	uint8_t *al;
	int64_t *hi, *lo;
} rp_lines;

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
	if (r->a.failed)
		return false;
	int32_t nl = 0;
	for (int32_t i = 0; i <= p->len; i++) {
		int64_t units = 0, hi = 0, lo = r->cap;
		bool al = true;
		for (int32_t j = 0; j < nl; j++) {
			int32_t b = live[j];
			if (is_big(r, b)) {
				units += g->buf_size[b] / r->q;
				hi = max64(hi, cur[b] + g->buf_size[b]);
				al = al && cur[b] % r->q == 0;
			} else {
				lo = min64(lo, cur[b]);
			}
		}
		L->big[i] = (int32_t)min64(units, INT32_MAX);
		L->al[i] = al, L->hi[i] = hi, L->lo[i] = lo;
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

/* The tail: r->a0 and r->units; false when no line qualifies. */
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
		if (v < g->n && g->kind[v] != DS_FREE && L->al[i] &&
		    L->hi[i] <= units * r->q && L->lo[i] >= units * r->q)
			best = i, best_units = (int32_t)units;
	}
	r->a0 = best, r->units = best_units;
	return best >= 0;
}

/* ---- the model ---- */

/* Position of every node of the plan; -1 for none. */
static int32_t *positions(rp *r)
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

/* The steps, the model's buffers and their uses; false when the tail is
 * beyond the model's limits (or memory fails: r->a.failed). */
static bool build_steps(rp *r, const int32_t *at)
{
	int32_t nuse;
	return collect_steps(r, &nuse) && use_lists(r, nuse) &&
	       use_flags(r, at);
}

/* ---- the search ---- */

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
		r->rem[r->spipe[si]] += r->scyc[si];
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
			if (off[b] < (u + 1) * r->q &&
			    u * r->q < off[b] + g->buf_size[b])
				fr[u] = max64(fr[u], r->fin[v]);
		st[b] = -1;
	}
	for (int32_t b = 0; b < g->nbuf; b++) {
		if (st[b] < 0 || !is_big(r, b))
			continue;
		int32_t x = r->bi[b], p0 = (int32_t)(off[b] / r->q);
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

/* One step of the search: the states of f[0] through evictions (f[1]),
 * reloads (f[2]) and step si (f[3]) into f[0] again. */
static bool search_step(rp *r, rp_front *f, int32_t si, void *tmp)
{
	front_copy(r, &f[0], &f[1]);
	moves(r, &f[1], si, true, tmp);
	front_copy(r, &f[1], &f[2]);
	moves(r, &f[2], si, false, tmp);
	r->rem[r->spipe[si]] -= r->scyc[si];
	front_reset(&f[3]);
	steps_from(r, &f[2], &f[3], si, tmp);
	return !r->failed && beam(r, &f[3], &f[0]);
}

/* The search from s0: the last event of the best end state, -1 when no
 * state ends before the plan does (or the work ran out). */
static int32_t search(rp *r, void *s0, void *tmp)
{
	rp_front f[4];
	for (int i = 0; i < 4; i++)
		if (!front_init(r, &f[i]))
			return -1;
	if (!front_add(r, &f[0], s0))
		return -1;
	for (int32_t si = 0; si < r->ns; si++)
		if (!search_step(r, f, si, tmp) || f[0].n == 0 ||
		    r->work > RP_WORK)
			return -1;
	int32_t best = -1;
	int64_t bend = 0, btr = 0;
	for (int32_t i = 0; i < f[0].n; i++) {
		void *s = hdr(&f[0], i, r->rec);
		if (((rp_hdr *)s)->dead)
			continue;
		int64_t end = bound(r, s), tr = ((rp_hdr *)s)->tr;
		if (best < 0 || end < bend || (end == bend && tr < btr))
			best = ((rp_hdr *)s)->hist, bend = end, btr = tr;
	}
	return best;
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
	r->rem = ds_arena_alloc(&r->a, (size_t)r->npc, sizeof *r->rem);
	layout_rec(r);
	return !r->a.failed;
}

static int nomem(ds_err *e) { return ds_fail(e, DS_ENOMEM, "out of memory"); }

static int run(rp *r, ds_plan *out, bool *changed, ds_err *e)
{
	rp_lines L;
	if (!walk_lines(r, &L))
		return nomem(e);
	if (!choose_tail(r, &L))
		return DS_OK;
	int32_t *at = positions(r);
	if (!at)
		return nomem(e);
	if (!build_steps(r, at) || r->ns == 0)
		return r->a.failed ? nomem(e) : DS_OK;
	if (!clocks(r))
		return nomem(e);
	void *s0 = ds_arena_alloc(&r->a, 1, r->rec);
	void *tmp = ds_arena_alloc(&r->a, 1, r->rec);
	if (!s0 || !tmp)
		return nomem(e);
	for (int32_t i = 0; i < r->p->len; i++)
		r->ub = max64(r->ub, r->fin[r->p->order[i]]);
	memset(pos(r, s0), 0xff, (size_t)r->nb);
	origin_clocks(r, at, s0);
	if (!origin_memory(r, at, s0))
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
	r.q = unit_of(&r);
	int rc = r.q > 0 ? run(&r, out, changed, e) : DS_OK;
	ds_arena_free(&r.a);
	return rc;
}
