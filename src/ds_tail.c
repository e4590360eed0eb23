/* ds_tail.c: the tail order, an order for CPE's backbone in which a
 * group's late loads come in the order their consumers need them and the
 * next group's first work runs before the last of them (tl_).
 *
 * Requires: a valid graph and a topological order of its n nodes (DLR's
 * plan's order without its spill nodes).
 * Guarantees: out[0..n) a topological order of the n nodes and *changed
 * true, or *changed false and out[] untouched when the order has no rise
 * (below) or comes out the same (or, never seen and asserted, when a step
 * broke the order: checked with ds_order_check).  A pure function of the
 * graph and the order (positions break every tie).  DS_ENOMEM on failure,
 * nothing else.
 * Cost: O(N + E) for the b-levels and the rises; per rise O(N + E) for
 * the sort of its tail, then at most TAIL_WORK * N + TAIL_WORK_MIN window
 * positions looked at over all the windows tried; the eager pass at most
 * TAIL_EAGER_ROUNDS sweeps of O(N + E) plus TAIL_WORK * N +
 * TAIL_WORK_MIN positions shifted.
 *
 * Why: DLR's order may load a group's last tiles in an order unrelated to
 * the order their consumers run (FlashAttention_Case0: its 8 V tiles in
 * block order 2,3,1,0 while the output accumulation needs 0,1,2,3, so the
 * P.V tail waits for the last V tile), and load the next group's first
 * tiles (the next rows' Q) only after all of them.  Three steps fix both:
 *
 * 1. A load's b-level is the longest path, in cycles, from it to a sink.
 *    A rise is a load whose b-level is more than TAIL_RISE times the
 *    previous load's (in the order); its tail, the run of loads just
 *    before it whose b-levels are below its own by that factor.  From the
 *    tail's first load to the rise, the loads are sorted by b-level
 *    (descending, each distinct b-level a class), and every node follows
 *    the latest class among its ancestors there (a node no load there
 *    precedes: the earliest class among its consumers).
 * 2. The tail's late loads (those below its top class) and everything
 *    that depends on them, or feeds only such, are deferred: from the
 *    first late load to an end e, the nodes not deferred come first.  e
 *    is the one, after the rise, that gives the order the least peak
 *    (ds_order_peak; the latest on ties): the next group's work moves up
 *    as far as it fits in the memory the late loads leave.
 * 3. Eagerly over the whole order: an operation whose output stays in
 *    memory and whose inputs die at it, freeing at least as much as its
 *    output takes, runs (with its output's ALLOC and its inputs' FREEs)
 *    right after its last producer, when that is more than
 *    TAIL_EAGER_GAP positions before it.
 * FlashAttention_Case0 (default options): DLR lite places this order at
 * the same 1,024 bytes as its own (4 spills), replay 45,174 against the
 * aged 45,571; CPE and retiming make 30,028 cycles of it (31,673 before),
 * peak 5,388. */
#include "ds_dlr.h"

#include <stdlib.h>
#include <string.h>

/* A rise: a load with more than TAIL_RISE times the b-level of the load
 * before it.  FlashAttention_Case0: its one rise is the next rows' Q
 * load (b-level 2,513) after the last V load (1,258); its other loads
 * are within 1.1 of their neighbours (2,258 to 2,536, 1,108 to 1,258). */
#define TAIL_RISE_NUM 3
#define TAIL_RISE_DEN 2

/* Step 2's ends tried and step 3's shifts: at most TAIL_WORK * N +
 * TAIL_WORK_MIN positions each (FlashAttention_Case0, 1,716 nodes: every
 * end to the order's end, about 0.9M positions; the end chosen, 561, is
 * 105 after the rise). */
#define TAIL_WORK 16
#define TAIL_WORK_MIN ((int64_t)1 << 21)

/* Step 3: sweeps, and the least distance moved (the moves found by the
 * FlashAttention_Case0 experiment: 3 sweeps, more than 2 positions). */
#define TAIL_EAGER_ROUNDS 3
#define TAIL_EAGER_GAP 2

typedef struct tl {
	const ds_graph *g;
	int32_t *order; /* the order being rebuilt (n) */
	int32_t *pos;	/* its positions (n) */
	int64_t *bl;	/* b-levels (n) */
	int32_t *key;	/* scratch per node (n) */
	int32_t *tmp;	/* scratch order (n) */
	uint8_t *mark;	/* scratch flags per node (n) */
	int64_t *run;	/* memory after each position (n) */
	int64_t work;	/* positions left to look at */
} tl;

/* A load: an operation that waits for nothing but ALLOCs, whose
 * buffers all take data from DDR (buf_copyin). */
static bool tl_is_load(const ds_graph *g, int32_t v)
{
	if (g->kind[v] != DS_OP)
		return false;
	for (int32_t k = g->epred_off[v]; k < g->epred_off[v + 1]; k++)
		if (g->kind[g->epred[k]] != DS_ALLOC)
			return false;
	for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++)
		if (!g->buf_copyin[g->use[k]])
			return false;
	return g->use_off[v] < g->use_off[v + 1];
}

static void tl_blevels(tl *t)
{
	const ds_graph *g = t->g;
	for (int32_t i = g->n - 1; i >= 0; i--) {
		int32_t v = g->topo[i];
		int64_t best = 0;
		for (int32_t k = g->succ_off[v]; k < g->succ_off[v + 1]; k++)
			if (t->bl[g->succ[k]] > best)
				best = t->bl[g->succ[k]];
		t->bl[v] = g->cycles[v] + best;
	}
}

static void tl_positions(tl *t)
{
	for (int32_t i = 0; i < t->g->n; i++)
		t->pos[t->order[i]] = i;
}

static bool tl_rises(int64_t lo, int64_t hi)
{
	return hi * TAIL_RISE_DEN > lo * TAIL_RISE_NUM;
}

/* ---- step 1: the tail's loads by class ---- */

static int tl_cmp_i64_desc(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
	return (a < b) - (a > b);
}

/* key[v] for v in [lo, hi): the class it follows (-1: none). */
static int tl_classes(tl *t, int32_t lo, int32_t hi, int64_t *cls)
{
	const ds_graph *g = t->g;
	int32_t nc = 0;
	for (int32_t i = lo; i < hi; i++)
		if (tl_is_load(g, t->order[i]))
			cls[nc++] = t->bl[t->order[i]];
	qsort(cls, (size_t)nc, sizeof *cls, tl_cmp_i64_desc);
	int32_t m = 0;
	for (int32_t i = 0; i < nc; i++)
		if (m == 0 || cls[m - 1] != cls[i])
			cls[m++] = cls[i];
	return m;
}

static int32_t tl_class_of(const int64_t *cls, int32_t m, int64_t b)
{
	for (int32_t c = 0; c < m; c++)
		if (cls[c] == b)
			return c;
	return -1;
}

static bool tl_in(const tl *t, int32_t v, int32_t lo, int32_t hi)
{
	return t->pos[v] >= lo && t->pos[v] < hi;
}

static void tl_rank(tl *t, int32_t lo, int32_t hi, const int64_t *cls,
		    int32_t m)
{
	const ds_graph *g = t->g;
	for (int32_t i = lo; i < hi; i++) {
		int32_t v = t->order[i];
		int32_t r = tl_is_load(g, v) ? tl_class_of(cls, m, t->bl[v])
					     : -1;
		for (int32_t k = g->pred_off[v]; k < g->pred_off[v + 1]; k++)
			if (tl_in(t, g->pred[k], lo, hi) &&
			    t->key[g->pred[k]] > r)
				r = t->key[g->pred[k]];
		t->key[v] = r;
	}
	for (int32_t i = hi - 1; i >= lo; i--) {
		int32_t v = t->order[i];
		if (t->key[v] != -1)
			continue;
		int32_t r = -1;
		for (int32_t k = g->succ_off[v]; k < g->succ_off[v + 1]; k++) {
			int32_t s = g->succ[k];
			if (tl_in(t, s, lo, hi) && g->kind[s] != DS_FREE &&
			    t->key[s] >= 0 && (r < 0 || t->key[s] < r))
				r = t->key[s];
		}
		t->key[v] = r;
	}
	/* no node before its predecessors (FREEs and nodes left at -1) */
	for (int32_t i = lo; i < hi; i++) {
		int32_t v = t->order[i];
		for (int32_t k = g->pred_off[v]; k < g->pred_off[v + 1]; k++)
			if (tl_in(t, g->pred[k], lo, hi) &&
			    t->key[g->pred[k]] > t->key[v])
				t->key[v] = t->key[g->pred[k]];
	}
}

/* Window positions [lo, hi) of order as the positions say. */
static void tl_positions_in(tl *t, int32_t lo, int32_t hi)
{
	for (int32_t i = lo; i < hi; i++)
		t->pos[t->order[i]] = i;
}

static int tl_cmp_i64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
	return (a > b) - (a < b);
}

/* order[lo, hi) stably sorted by key (-1 first); buf: hi - lo scratch. */
static void tl_sort_window(tl *t, int32_t lo, int32_t hi, int64_t *buf)
{
	for (int32_t i = lo; i < hi; i++)
		buf[i - lo] = ((int64_t)(t->key[t->order[i]] + 1) << 32) | i;
	qsort(buf, (size_t)(hi - lo), sizeof *buf, tl_cmp_i64);
	for (int32_t i = lo; i < hi; i++)
		t->tmp[i] = t->order[(int32_t)(buf[i - lo] & 0xffffffff)];
	memcpy(t->order + lo, t->tmp + lo, (size_t)(hi - lo) * sizeof *t->tmp);
	tl_positions_in(t, lo, hi);
	t->work -= hi - lo;
}

/* ---- step 2: the late loads deferred ---- */

/* mark[v] = 1 for the late loads' descendants (the whole graph). */
static void tl_late_closure(tl *t, const int32_t *late, int32_t nlate)
{
	const ds_graph *g = t->g;
	memset(t->mark, 0, (size_t)g->n);
	int32_t sp = 0;
	for (int32_t i = 0; i < nlate; i++) {
		t->mark[late[i]] = 1;
		t->tmp[sp++] = late[i];
	}
	while (sp > 0) {
		int32_t v = t->tmp[--sp];
		for (int32_t k = g->succ_off[v]; k < g->succ_off[v + 1]; k++)
			if (!t->mark[g->succ[k]]) {
				t->mark[g->succ[k]] = 1;
				t->tmp[sp++] = g->succ[k];
			}
	}
}

/* Does v (not an ALLOC) feed only deferred nodes (FREEs aside)? */
static bool tl_feeds_deferred(const tl *t, const uint8_t *d, int32_t v)
{
	const ds_graph *g = t->g;
	bool any = false;
	for (int32_t k = g->succ_off[v]; k < g->succ_off[v + 1]; k++) {
		int32_t s = g->succ[k];
		if (g->kind[s] == DS_FREE)
			continue;
		if (!d[s])
			return false;
		any = true;
	}
	return any;
}

/* d[v] for the window [lo, hi): deferred (d equals mark[] outside the
 * window on entry). */
static void tl_deferred(tl *t, int32_t lo, int32_t hi, uint8_t *d)
{
	const ds_graph *g = t->g;
	for (int32_t i = lo; i < hi; i++)
		d[t->order[i]] = t->mark[t->order[i]];
	for (bool ch = true; ch;) {
		ch = false;
		for (int32_t i = hi - 1; i >= lo; i--) {
			int32_t v = t->order[i];
			if (d[v] || g->kind[v] == DS_ALLOC)
				continue;
			bool late = tl_feeds_deferred(t, d, v);
			for (int32_t k = g->pred_off[v];
			     !late && k < g->pred_off[v + 1]; k++)
				late = d[g->pred[k]];
			if (late)
				d[v] = ch = 1;
		}
		t->work -= hi - lo;
	}
	/* an ALLOC when all it precedes is deferred */
	for (int32_t i = lo; i < hi; i++) {
		int32_t v = t->order[i];
		if (g->kind[v] != DS_ALLOC)
			continue;
		bool all = g->succ_off[v] < g->succ_off[v + 1];
		for (int32_t k = g->succ_off[v]; all && k < g->succ_off[v + 1];
		     k++)
			all = d[g->succ[k]];
		d[v] = all;
	}
}

/* tmp[lo, hi): the window with the deferred nodes last. */
static void tl_split(tl *t, int32_t lo, int32_t hi, const uint8_t *d)
{
	int32_t w = lo;
	for (int pass = 0; pass < 2; pass++)
		for (int32_t i = lo; i < hi; i++)
			if (d[t->order[i]] == pass)
				t->tmp[w++] = t->order[i];
}

static int64_t tl_delta(const ds_graph *g, int32_t v)
{
	if (g->kind[v] == DS_OP || !ds_mem_stays(g->buf_mem[g->buf[v]]))
		return 0;
	int64_t s = g->buf_size[g->buf[v]];
	return g->kind[v] == DS_ALLOC ? s : -s;
}

/* The peak of order with [lo, hi) taken from tmp (pre, suf: the most
 * memory before lo and from hi on). */
static int64_t tl_window_peak(const tl *t, int32_t lo, int32_t hi,
			      const int64_t *pre, const int64_t *suf)
{
	int64_t cur = lo > 0 ? t->run[lo - 1] : 0;
	int64_t peak = pre[lo] > suf[hi] ? pre[lo] : suf[hi];
	for (int32_t i = lo; i < hi; i++) {
		cur += tl_delta(t->g, t->tmp[i]);
		if (cur > peak)
			peak = cur;
	}
	return peak;
}

/* pre[i]: the most memory before position i; suf[i]: from i on. */
static void tl_profile(tl *t, int64_t *pre, int64_t *suf)
{
	const int32_t n = t->g->n;
	int64_t cur = 0;
	pre[0] = 0;
	for (int32_t i = 0; i < n; i++) {
		cur += tl_delta(t->g, t->order[i]);
		t->run[i] = cur;
		pre[i + 1] = pre[i] > cur ? pre[i] : cur;
	}
	suf[n] = 0;
	for (int32_t i = n - 1; i >= 0; i--)
		suf[i] = suf[i + 1] > t->run[i] ? suf[i + 1] : t->run[i];
}

/* The end (after rise) with the least peak, the latest on ties. */
static int32_t tl_best_end(tl *t, int32_t lo, int32_t rise, uint8_t *d,
			   int64_t *pre, int64_t *suf)
{
	tl_profile(t, pre, suf);
	int32_t best = -1;
	int64_t bp = 0;
	for (int32_t hi = rise + 1; hi <= t->g->n && t->work > 0; hi++) {
		tl_deferred(t, lo, hi, d);
		tl_split(t, lo, hi, d);
		int64_t p = tl_window_peak(t, lo, hi, pre, suf);
		t->work -= hi - lo;
		if (best < 0 || p <= bp) {
			best = hi;
			bp = p;
		}
	}
	return best;
}

/* Steps 1 and 2 for the rise at position rise (a load); tail: its
 * first load's position.  Scratch: cls (n), late (n), d (n), pre, suf
 * (n + 1). */
typedef struct tl_scratch {
	int64_t *cls, *pre, *suf;
	int32_t *late;
	uint8_t *d;
} tl_scratch;

static void tl_one_rise(tl *t, int32_t tail, int32_t rise, tl_scratch *s)
{
	const ds_graph *g = t->g;
	int32_t m = tl_classes(t, tail, rise, s->cls);
	tl_rank(t, tail, rise, s->cls, m);
	tl_sort_window(t, tail, rise, s->pre);
	int32_t nlate = 0, lo = -1;
	for (int32_t i = tail; i < rise; i++) {
		int32_t v = t->order[i];
		if (tl_is_load(g, v) && t->bl[v] < s->cls[0]) {
			s->late[nlate++] = v;
			if (lo < 0)
				lo = i;
		}
	}
	if (nlate == 0)
		return;
	tl_late_closure(t, s->late, nlate);
	memcpy(s->d, t->mark, (size_t)g->n);
	int32_t hi = tl_best_end(t, lo, rise, s->d, s->pre, s->suf);
	if (hi < 0)
		return;
	tl_deferred(t, lo, hi, s->d);
	tl_split(t, lo, hi, s->d);
	memcpy(t->order + lo, t->tmp + lo, (size_t)(hi - lo) * sizeof *t->tmp);
	tl_positions_in(t, lo, hi);
}

/* The rises, each from the order as the ones before left it. */
static void tl_tails(tl *t, tl_scratch *s)
{
	const ds_graph *g = t->g;
	int32_t prev = -1;
	for (int32_t i = 0; i < g->n && t->work > 0; i++) {
		int32_t v = t->order[i];
		if (!tl_is_load(g, v))
			continue;
		if (prev >= 0 && tl_rises(t->bl[prev], t->bl[v])) {
			int32_t tail = -1;
			for (int32_t j = i - 1; j >= 0 && t->work-- > 0; j--) {
				int32_t u = t->order[j];
				if (!tl_is_load(g, u))
					continue;
				if (!tl_rises(t->bl[u], t->bl[v]))
					break;
				tail = j;
			}
			if (tail < 0) /* the work ran out before the tail */
				break;
			tl_one_rise(t, tail, i, s);
			v = t->order[i];
		}
		prev = v;
	}
}

/* ---- step 3: eager consumers ---- */

/* The memory v's dying inputs free minus its output's (in the output's
 * memory), or -1 when v is not a candidate; nd, dies[]: those inputs. */
static int64_t tl_gain(const tl *t, int32_t v, int32_t *dies, int32_t *nd)
{
	const ds_graph *g = t->g;
	*nd = 0;
	if (g->kind[v] != DS_OP || g->use_off[v] == g->use_off[v + 1])
		return -1;
	int32_t out = g->use[g->use_off[v]];
	int mem = g->buf_mem[out];
	if (!ds_mem_stays(mem))
		return -1;
	int64_t gain = -g->buf_size[out];
	for (int32_t k = g->use_off[v] + 1; k < g->use_off[v + 1]; k++) {
		int32_t b = g->use[k], f = g->buf_free[b];
		bool last = true;
		for (int32_t j = g->pred_off[f]; last && j < g->pred_off[f + 1];
		     j++)
			last = g->kind[g->pred[j]] == DS_ALLOC ||
			       t->pos[g->pred[j]] <= t->pos[v];
		if (!last)
			continue;
		dies[(*nd)++] = f;
		if (g->buf_mem[b] == mem)
			gain += g->buf_size[b];
	}
	return gain;
}

/* The position of v's last producer (ALLOCs aside), -1 when none. */
static int32_t tl_last_producer(const tl *t, int32_t v)
{
	const ds_graph *g = t->g;
	int32_t at = -1;
	for (int32_t k = g->pred_off[v]; k < g->pred_off[v + 1]; k++)
		if (g->kind[g->pred[k]] != DS_ALLOC && t->pos[g->pred[k]] > at)
			at = t->pos[g->pred[k]];
	return at;
}

/* Is x one of mv[0..nm)? */
static bool tl_among(const int32_t *mv, int32_t nm, int32_t x)
{
	for (int32_t j = 0; j < nm; j++)
		if (mv[j] == x)
			return true;
	return false;
}

/* Can mv[0..nm) all stand right after position at? */
static bool tl_can_move(const tl *t, const int32_t *mv, int32_t nm,
			int32_t at)
{
	const ds_graph *g = t->g;
	for (int32_t i = 0; i < nm; i++)
		for (int32_t k = g->pred_off[mv[i]];
		     k < g->pred_off[mv[i] + 1]; k++) {
			int32_t p = g->pred[k];
			if (!tl_among(mv, nm, p) && t->pos[p] > at)
				return false;
		}
	for (int32_t i = 0; i < nm; i++)
		for (int32_t k = g->succ_off[mv[i]];
		     k < g->succ_off[mv[i] + 1]; k++) {
			int32_t q = g->succ[k];
			if (!tl_among(mv, nm, q) && t->pos[q] <= at)
				return false;
		}
	return true;
}

/* mv[0..nm) moved to just after position at, in that order (each
 * moves up, or down to there); the nodes between keep their order. */
static void tl_move(tl *t, const int32_t *mv, int32_t nm, int32_t at)
{
	int32_t lo = at + 1, hi = at;
	for (int32_t i = 0; i < nm; i++) {
		t->mark[mv[i]] = 1;
		lo = t->pos[mv[i]] < lo ? t->pos[mv[i]] : lo;
		hi = t->pos[mv[i]] > hi ? t->pos[mv[i]] : hi;
	}
	int32_t w = lo;
	for (int32_t i = lo; i <= at; i++)
		if (!t->mark[t->order[i]])
			t->tmp[w++] = t->order[i];
	for (int32_t i = 0; i < nm; i++)
		t->tmp[w++] = mv[i];
	for (int32_t i = at + 1; i <= hi; i++)
		if (!t->mark[t->order[i]])
			t->tmp[w++] = t->order[i];
	memcpy(t->order + lo, t->tmp + lo, (size_t)(hi - lo + 1) * sizeof *t->tmp);
	tl_positions_in(t, lo, hi + 1);
	for (int32_t i = 0; i < nm; i++)
		t->mark[mv[i]] = 0;
	t->work -= hi - lo + 1;
}

static void tl_eager_one(tl *t, int32_t v, int32_t *mv)
{
	const ds_graph *g = t->g;
	int32_t nd;
	if (tl_gain(t, v, mv + 2, &nd) < 0)
		return;
	int32_t at = tl_last_producer(t, v);
	int32_t al = g->buf_alloc[g->use[g->use_off[v]]];
	if (at < 0 || at >= t->pos[v] - TAIL_EAGER_GAP)
		return;
	mv[0] = al;
	mv[1] = v;
	for (int32_t i = 0; i < nd; i++)
		if (t->pos[mv[2 + i]] <= at)
			return;
	if (tl_can_move(t, mv, nd + 2, at))
		tl_move(t, mv, nd + 2, at);
}

static void tl_eager(tl *t, int32_t *mv)
{
	const ds_graph *g = t->g;
	memset(t->mark, 0, (size_t)g->n);
	for (int r = 0; r < TAIL_EAGER_ROUNDS && t->work > 0; r++) {
		memcpy(t->key, t->order, (size_t)g->n * sizeof *t->key);
		for (int32_t i = 0; i < g->n && t->work > 0; i++)
			tl_eager_one(t, t->key[i], mv);
	}
}

/* ---- the pass ---- */

static bool tl_any_rise(const tl *t)
{
	int32_t prev = -1;
	for (int32_t i = 0; i < t->g->n; i++) {
		int32_t v = t->order[i];
		if (!tl_is_load(t->g, v))
			continue;
		if (prev >= 0 && tl_rises(t->bl[prev], t->bl[v]))
			return true;
		prev = v;
	}
	return false;
}

static void tl_run(tl *t, tl_scratch *s, int32_t *mv)
{
	tl_blevels(t);
	if (!tl_any_rise(t))
		return;
	tl_positions(t);
	tl_tails(t, s);
	t->work = TAIL_WORK * (int64_t)t->g->n + TAIL_WORK_MIN;
	tl_eager(t, mv);
}

int ds_tail_order(const ds_graph *g, const int32_t *order, int32_t *out,
		  bool *changed, ds_err *e)
{
	const size_t n = (size_t)g->n;
	*changed = false;
	tl t = {.g = g, .work = TAIL_WORK * (int64_t)n + TAIL_WORK_MIN};
	tl_scratch s;
	ds_arena a;
	ds_arena_init(&a, g->heap);
	t.order = ds_arena_alloc(&a, n + 1, sizeof *t.order);
	t.pos = ds_arena_alloc(&a, n + 1, sizeof *t.pos);
	t.bl = ds_arena_alloc(&a, n + 1, sizeof *t.bl);
	t.key = ds_arena_alloc(&a, n + 1, sizeof *t.key);
	t.tmp = ds_arena_alloc(&a, n + 1, sizeof *t.tmp);
	t.mark = ds_arena_alloc(&a, n + 1, 1);
	t.run = ds_arena_alloc(&a, n + 1, sizeof *t.run);
	s.cls = ds_arena_alloc(&a, n + 1, sizeof *s.cls);
	s.pre = ds_arena_alloc(&a, n + 1, sizeof *s.pre);
	s.suf = ds_arena_alloc(&a, n + 1, sizeof *s.suf);
	s.late = ds_arena_alloc(&a, n + 2, sizeof *s.late);
	s.d = ds_arena_alloc(&a, n + 1, 1);
	int rc = DS_OK;
	if (a.failed) {
		rc = ds_fail(e, DS_ENOMEM, "out of memory");
	} else {
		memcpy(t.order, order, n * sizeof *order);
		tl_run(&t, &s, s.late);
		/* the steps keep every node after its predecessors; should one
		 * not, the order is left as it was (never a failed run) */
		rc = ds_order_check(g, t.order, "tail", e);
		DS_ASSERT(rc != DS_EINPUT);
		*changed = rc == DS_OK &&
			   memcmp(t.order, order, n * sizeof *order) != 0;
		rc = rc == DS_EINPUT ? DS_OK : rc;
		if (*changed)
			memcpy(out, t.order, n * sizeof *out);
	}
	ds_arena_free(&a);
	return rc;
}
