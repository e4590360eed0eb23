/* ds_dlr.c: stage 2, deterministic linear repacking (DLR).
 *
 * Requires: a valid graph and a topological order of its n nodes (stage 1's;
 * any topological order will do, it only guides; checked: DS_EINPUT).
 * Guarantees: a plan that ds_replay accepts under g->caps (the order with
 * spill nodes inserted, one offset per buffer, the spills with their new
 * offsets), or DS_EINPUT when some operation's buffers cannot fit together
 * in a memory at all (ds_check_fits).  The plan is a pure function of the
 * graph and the input order; node Ids only break exact ties.  So with a
 * memo (o->memo, made for g) an order asked again gets a copy of the plan
 * made before, in O(N), and so does a candidate order placed again with
 * the same options, within a run or across runs (with asserts on, each
 * entry's first reuse makes the plan again and checks that it is the
 * same).
 *
 * Placement and spilling are ds_place's: best fit, so a buffer coming back
 * with SPILL_IN may land at a new offset (that is how the layout repacks);
 * when nothing fits, the victims are the resident buffers over one
 * contiguous window, scored by their traffic (size when a COPY_IN backs
 * them, twice the size otherwise) against the distance to their next use.
 *
 * The order matters as much as the layout, so several orders are placed and
 * measured (their spill tables, dlr_measure; a replay with asserts on),
 * and the least (extra_ddr, spills) wins (ties: the earlier candidate):
 *
 *  - stage 1's order as given;
 *  - the same with lazy ALLOCs and eager FREEs ("JIT"), and with operations
 *    that only stage data for one consumer moved next to it ("pull");
 *  - the chain order: accumulators (a buffer updated by a sequence of
 *    operations) are the long-lived work; a step-level simulation picks
 *    which run side by side and which follows which so that the data they
 *    read is reused before it leaves; and the same simulation taken the
 *    other way at its turns (dlr_turns): where a group of chains ends
 *    and the next reads none of its stationary data, keeping the inputs
 *    the group had in common keeps the bands of work long;
 *  - the chain orders of the reuse pilot: a greedy over the chains with a
 *    lookahead that completes each choice and measures the reloads of the
 *    complete order exactly; the nested pilot, which judges the pilot's
 *    first choices by whole pilots; and a local search over the best
 *    order met, with the same exact measure (each of these placed, the
 *    model's gain not always being the placement's);
 *  - a memory-aware list scheduler that follows the best order so far but
 *    skips ahead when the next work would force an eviction that other
 *    work would not, first with an LRU model of residency, then (effort
 *    rounds) with the best plan so far as the forecast of next uses.
 *
 * Cost: the stage-1 orders and the chain order are O((N + E) log N) plus
 * O(C W S I) for C chains of S steps reading I buffers, W = CH_WINDOW
 * chains considered at each start, that once per try at a turn (at most
 * TURN_WORK / N * effort tries); the pilot, the nested pilot and the
 * local search are each held to a budget of work units that effort
 * scales (see there); a scheduler run is
 * O(N * G * K) with G candidate goals per step and K the closure bound
 * (both constants); each placement is O(N * R log R) typically, R the
 * resident buffers of a memory; each measure O(S) for S spills (a
 * replay, O(N + E), with asserts on).
 *
 * The files: this one is the driver (the candidates, in the order above);
 * ds_dlr_sched.c the list schedulers (po_, ls_), ds_dlr_chain.c the chain
 * simulation (ch_), ds_dlr_pilot.c the pilot and the improvement (pl_),
 * ds_dlr_greedy.c the pilot's greedy (rg_); ds_dlr.h what they share. */
#include "ds_dlr.h"

#include <string.h>

/* ---- candidates ---- */

typedef struct best {
	ds_plan plan;
	ds_figures f;
	bool have;
	int64_t last; /* least extra_ddr of the last dlr_try's plans */
	ds_dlr_memo *memo; /* the placements are looked up in (NULL: none) */
} best;

static int memo_place(ds_dlr_memo *m, const int32_t *order,
		      const ds_place_opts *o, ds_plan *out, ds_err *e);

/* The figures the candidates are compared by, extra_ddr and spills, read
 * off plan p's spill table in O(S): ds_place's plans are valid by
 * construction, and every caller of ds_dlr replays the plan it returns;
 * a full replay of every candidate (as before) cost about a tenth of
 * DLR's time.  With asserts on, the replay runs and must agree. */
static int dlr_measure(const ds_graph *g, const ds_plan *p, ds_figures *f,
		       ds_err *e)
{
	memset(f, 0, sizeof *f);
	f->spills = p->nspill;
	for (int32_t k = 0; k < p->nspill; k++)
		if (!ds_add(f->extra_ddr, ds_spill_traffic(g, p->spill[k].buf),
			    &f->extra_ddr))
			return ds_fail(e, DS_EINPUT, "%s: extra_ddr overflows",
				       g->source);
#ifndef NDEBUG
	ds_figures r;
	int rc = ds_replay(g, p, NULL, &r, e);
	DS_ASSERT(rc != DS_EPLAN);
	if (rc)
		return rc;
	DS_ASSERT(r.extra_ddr == f->extra_ddr && r.spills == f->spills);
#endif
	return DS_OK;
}

/* Places order with o, measures the plan, keeps it when it beats *b. */
static int dlr_place(const ds_graph *g, const int32_t *order,
		     const ds_place_opts *o, best *b, ds_err *e)
{
	ds_plan p;
	int rc = b->memo ? memo_place(b->memo, order, o, &p, e)
			 : ds_place(g, order, o, &p, e);
	if (rc)
		return rc;
	ds_figures f;
	if ((rc = dlr_measure(g, &p, &f, e))) {
		ds_plan_free(g->heap, &p);
		return rc;
	}
	if (f.extra_ddr < b->last)
		b->last = f.extra_ddr;
	if (!b->have || f.extra_ddr < b->f.extra_ddr ||
	    (f.extra_ddr == b->f.extra_ddr && f.spills < b->f.spills)) {
		if (b->have)
			ds_plan_free(g->heap, &b->plan);
		b->plan = p;
		b->f = f;
		b->have = true;
	} else {
		ds_plan_free(g->heap, &p);
	}
	return DS_OK;
}

/* Tries order with both victim rules: furthest next use (Belady) wins on
 * buffers of one size, traffic over distance when sizes and costs mix. */
static int dlr_try(const ds_graph *g, const int32_t *order, best *b,
		     ds_err *e)
{
	ds_place_opts o = {DS_BEST_FIT, DS_VICTIM_FURTHEST, 0};
	b->last = INT64_MAX;
	int rc = dlr_place(g, order, &o, b, e);
	if (rc)
		return rc;
	o.victim = DS_VICTIM_COST;
	return dlr_place(g, order, &o, b, e);
}

/* pos[v] = place of node v in the order of plan p, spill nodes left out. */
static void dlr_positions(const ds_graph *g, const ds_plan *p, int32_t *pos)
{
	int32_t len = 0;
	for (int32_t i = 0; i < p->len; i++)
		if (p->order[i] < g->n)
			pos[p->order[i]] = len++;
}

/* Simulations tried at the turns per unit of effort: TURN_TRIES at most,
 * and no more than TURN_WORK nodes placed in all (each try places the
 * whole graph), so that large graphs stay linear: 12 tries at 30,000
 * nodes, none from 400,000 on. */
#define TURN_TRIES 24
#define TURN_WORK 400000

/* The work budgets of the pilot, per unit of effort.  Measured as
 * ds_dlr.h says (extra_ddr summed over the six graphs, 316,264 at these
 * values): PILOT_WORK 20M or 80M, IMPROVE_WORK 10M or 40M, LITE_SHARE 5 or
 * 20 and NEST_WORK 160M give the same figures (NEST_WORK 160M in 3.1 s
 * instead of ~2.6 s); NEST_WORK 40M gives 317,160 (Matmul_Case0 12,416
 * instead of 11,520).  The budgets that show flat here were set on
 * Matmul_Case0 and its renumbered copies, where the pilot and the
 * improvement took it from 15,744 to 11,776 (git log of this file). */
/* Work units (inputs and users visited) of the reuse pilot: a pass over a
 * few hundred chains at the default. */
#define PILOT_WORK INT64_C(40000000)
/* Work units (accesses and resident inputs visited by evaluations) of the
 * improvement. */
#define IMPROVE_WORK INT64_C(20000000)
/* Work units of the nested pilot. */
#define NEST_WORK INT64_C(80000000)
/* A lite run's pilot gets 1/LITE_SHARE of the budget (and no nested pilot
 * and no improvement): enough to tell the starts worth a full run. */
#define LITE_SHARE 10

/* The simulation's order ref0 (its chain starts; turns[] as ch_turn left
 * them; placed, it costs cost) taken the other way at its turns, one at a
 * time from the first: the simulation is rerun with the starts before the
 * turn and the two chains ch_turn proposed forced, and the new order,
 * placed, replaces ref when it costs less (its own later turns then being
 * the ones tried).  A greedy that always turns the cheap way leaves the
 * remaining work in ever shorter bands, each reloading its stationary
 * data; keeping the common inputs keeps the bands long.  At most
 * max_tries simulations, each O(one simulation + placement).  turns[] is
 * overwritten. */
static int dlr_turns(const ds_graph *g, const int32_t *order,
		     const int32_t *pos1, const int32_t *ref0, int32_t *turns,
		     int64_t cost, int64_t max_tries, best *b, ds_err *e)
{
	const size_t nb = (size_t)g->nbuf;
	ds_arena a;
	ds_arena_init(&a, g->heap);
	int32_t *pre = ds_arena_alloc(&a, nb + 2, sizeof *pre);
	int32_t *ref = ds_arena_alloc(&a, nb + 1, sizeof *ref);
	int32_t *ref2 = ds_arena_alloc(&a, nb + 1, sizeof *ref2);
	int32_t *turns2 = ds_arena_alloc(&a, 2 * nb + 2, sizeof *turns2);
	int32_t *ord = ds_arena_alloc(&a, (size_t)g->n, sizeof *ord);
	int rc = DS_OK;
	if (a.failed) {
		rc = ds_fail(e, DS_ENOMEM, "out of memory");
		goto out;
	}
	memcpy(ref, ref0, nb * sizeof *ref);
	int64_t tries = 0;
	for (int32_t i = 1; i < g->nbuf && tries < max_tries; i++) {
		int32_t x = turns[2 * i], y = turns[2 * i + 1];
		if (x < 0 || (ref[i] == x && ref[i + 1] == y))
			continue;
		memcpy(pre, ref, (size_t)i * sizeof *pre);
		pre[i] = x;
		pre[i + 1] = y;
		for (size_t k = 0; k < 2 * nb + 2; k++)
			turns2[k] = -1;
		chopts co = {.share = 1.0,
			     .ref_out = ref2,
			     .prefix = pre,
			     .nprefix = i + 2,
			     .turn_out = turns2};
		bool chains;
		if ((rc = dlr_ch_order(g, order, pos1, &co, ord, &chains, e)) ||
		    (rc = dlr_try(g, ord, b, e)))
			goto out;
		tries++;
		if (b->last < cost) {
			cost = b->last;
			memcpy(ref, ref2, nb * sizeof *ref);
			memcpy(turns, turns2, (2 * nb + 2) * sizeof *turns);
		}
	}
out:
	ds_arena_free(&a);
	return rc;
}

/* One DLR run's state: stage 1's order and positions, the best plan so
 * far, and the scratch the candidates share. */
typedef struct dlr {
	const ds_graph *g;
	const int32_t *order;
	int64_t effort;
	int64_t size_nodes; /* ds_dlr_opts' */
	bool lite;
	best b;
	int32_t *pos1, *ord, *anchor, *posr;
	int32_t *chref; /* the simulation's chain order */
	int32_t *chalt; /* the pilot's alternative chain orders */
	int32_t *turns; /* the simulation's turns (ch_turn), two per start */
	int64_t ref_ddr; /* extra_ddr of the simulation's order, placed */
} dlr;

/* Stage 1's order as given, JIT, and pulled. */
static int dlr_follow(dlr *d, ds_err *e)
{
	int rc = dlr_try(d->g, d->order, &d->b, e);
	for (int pull = 0; pull < 2 && !rc; pull++)
		if (!(rc = dlr_po_follow(d->g, d->order, d->pos1, NULL, pull, d->ord,
				     e)))
			rc = dlr_try(d->g, d->ord, &d->b, e);
	return rc;
}

/* The chain order, with the inputs' memory modelled at a few sizes (more
 * with effort); *chains: the graph has chains. */
static int dlr_chains(dlr *d, bool *chains, ds_err *e)
{
	static const double shares[] = {1.0, 0.75, 0.5, 1.25, 1.5};
	size_t nshares = d->effort > 1 ? sizeof shares / sizeof *shares : 2;
	*chains = false;
	for (size_t k = 0; k < nshares; k++) {
		int rc;
		chopts co = {.share = shares[k],
			     .ref_out = k == 0 ? d->chref : NULL,
			     .turn_out = k == 0 && !d->lite ? d->turns : NULL};
		if ((rc = dlr_ch_order(d->g, d->order, d->pos1, &co, d->ord, chains,
				   e)) ||
		    (*chains && (rc = dlr_try(d->g, d->ord, &d->b, e))))
			return rc;
		if (k == 0)
			d->ref_ddr = d->b.last;
		if (!*chains)
			break;
	}
	return DS_OK;
}

/* A work budget, d's graph's share of it. */
static int64_t dlr_share(const dlr *d, int64_t work)
{
	return ds_work_share(d->g, d->size_nodes, work);
}

/* The chain order the pilot finds, the nested pilot and the improvement
 * refining it, each placed (the model's gain is not always the
 * placement's), with the budgets of effort level lvl. */
static int dlr_pilot(dlr *d, int64_t lvl, ds_err *e)
{
	const ds_graph *g = d->g;
	bool chains;
	int32_t nalt = 0;
	chopts co = {.share = 1.0,
		     .pilot = dlr_share(d, PILOT_WORK * lvl) /
			      (d->lite ? LITE_SHARE : 1),
		     .nest = d->lite ? 0 : dlr_share(d, NEST_WORK * lvl),
		     .ref = d->chref,
		     .ref_ddr = d->ref_ddr,
		     .improve = d->lite ? 0 : dlr_share(d, IMPROVE_WORK * lvl),
		     .alt = d->chalt,
		     .nalt = &nalt};
	int rc;
	if ((rc = dlr_ch_order(g, d->order, d->pos1, &co, d->ord, &chains, e)) ||
	    (chains && (rc = dlr_try(g, d->ord, &d->b, e))))
		return rc;
	for (int32_t k = 0; chains && k < nalt; k++) {
		chopts fo = {.share = 1.0,
			     .force = d->chalt + (size_t)k * (size_t)g->nbuf};
		if ((rc = dlr_ch_order(g, d->order, d->pos1, &fo, d->ord, &chains,
				   e)) ||
		    (rc = dlr_try(g, d->ord, &d->b, e)))
			return rc;
	}
	return DS_OK;
}

/* The scheduler follows the best order so far where it has no reason to
 * differ; then, each round, it also takes that plan's next uses as the
 * forecast for its evictions. */
static int dlr_sched(dlr *d, ds_err *e)
{
	const ds_graph *g = d->g;
	dlr_positions(g, &d->b.plan, d->anchor);
	int rc;
	if ((rc = dlr_ls_run(g, d->anchor, NULL, d->ord, e)) ||
	    (rc = dlr_try(g, d->ord, &d->b, e)))
		return rc;
	for (int64_t r = 0; r < d->effort; r++) {
		dlr_positions(g, &d->b.plan, d->posr);
		if ((rc = dlr_ls_run(g, d->anchor, d->posr, d->ord, e)) ||
		    (rc = dlr_try(g, d->ord, &d->b, e)))
			return rc;
	}
	return DS_OK;
}

/* The candidates in turn (see the top of this file). */
static int dlr_run(dlr *d, ds_err *e)
{
	const ds_graph *g = d->g;
	int rc;
	bool chains;
	if ((rc = dlr_follow(d, e)) || (rc = dlr_chains(d, &chains, e)))
		return rc;
	int64_t turn_tries =
		TURN_WORK * d->effort / ds_size_nodes(g, d->size_nodes);
	if (turn_tries > TURN_TRIES * d->effort)
		turn_tries = TURN_TRIES * d->effort;
	if (chains && !d->lite && turn_tries > 0 &&
	    (rc = dlr_turns(g, d->order, d->pos1, d->chref, d->turns,
			    d->ref_ddr, turn_tries, &d->b, e)))
		return rc;
	/* with effort, also with budgets that much larger (the default's
	 * orders are among the candidates still) */
	for (int64_t lvl = 1; chains && lvl <= d->effort;
	     lvl = lvl < d->effort ? d->effort : lvl + 1)
		if ((rc = dlr_pilot(d, lvl, e)))
			return rc;
	return d->lite ? DS_OK : dlr_sched(d, e);
}

/* ---- the memo ---- */

/* Entries kept at most; past it plans are made and not kept.  A run on
 * Conv_Case0 keeps 60; the pipeline makes a memo for graphs of up to
 * DS_FLOOR_MAX_NODES nodes (ds_pipeline.c), so that it holds 128 copies
 * of an order and a plan of 20,000 nodes at most. */
#define MEMO_MAX 128
/* Placements kept, the latest ones.  Measured (a log of ds_place's
 * orders, session 53): of the schedule's 627 placements on Conv_Case0,
 * 277 repeat an earlier one, 244 of them within the 64 distinct ones
 * before it (FlashAttention_Case0: 54 of 78; the other graphs, all of
 * their 12, 16 and 2). */
#define PLACE_KEEP 64

/* A plan kept for an order (its hash; the options are the entry's). */
typedef struct kept {
	uint64_t hash;
	int32_t *order; /* the order, n nodes */
	ds_plan plan;
#ifndef NDEBUG
	bool checked; /* made again at its first reuse, and compared */
#endif
} kept;

struct ds_dlr_memo {
	const ds_graph *g;
	int32_t n;
	struct memo_entry {
		kept k; /* ds_dlr's plan of the input order */
		int64_t effort, size_nodes;
		bool lite;
	} e[MEMO_MAX];
	int32_t np, pnext; /* placements kept; the next to replace */
	struct place_entry {
		kept k; /* ds_place's plan of a candidate order */
		ds_place_opts o;
	} pl[PLACE_KEEP];
};

ds_dlr_memo *ds_dlr_memo_new(const ds_graph *g)
{
	ds_dlr_memo *m = ds_alloc(g->heap, 1, sizeof *m);
	if (m)
		m->g = g;
	return m;
}

void ds_dlr_memo_free(ds_dlr_memo *m)
{
	if (!m)
		return;
	const ds_heap *h = m->g->heap;
	for (int32_t i = 0; i < m->n; i++) {
		ds_free(h, m->e[i].k.order);
		ds_plan_free(h, &m->e[i].k.plan);
	}
	for (int32_t i = 0; i < m->np; i++) {
		ds_free(h, m->pl[i].k.order);
		ds_plan_free(h, &m->pl[i].k.plan);
	}
	ds_free(h, m);
}

/* FNV-1a over the order's node ids. */
static uint64_t memo_hash(const ds_graph *g, const int32_t *order)
{
	uint64_t h = UINT64_C(14695981039346656037);
	for (int32_t i = 0; i < g->n; i++)
		h = (h ^ (uint32_t)order[i]) * UINT64_C(1099511628211);
	return h;
}

/* Is k kept for order (hash h)? */
static bool kept_is(const ds_graph *g, const kept *k, const int32_t *order,
		    uint64_t h)
{
	return k->hash == h &&
	       memcmp(k->order, order, (size_t)g->n * sizeof *order) == 0;
}

/* k becomes a copy of plan p for order (hash h), its order array reused
 * when it has one; DS_ENOMEM (as every allocation failure is reported,
 * test_api) leaves k as it was. */
static int kept_set(const ds_graph *g, kept *k, const int32_t *order,
		    uint64_t h, const ds_plan *p, ds_err *e)
{
	ds_plan copy;
	int rc = ds_plan_copy(g, p, &copy, e);
	if (rc)
		return rc;
	if (!k->order &&
	    !(k->order = ds_alloc(g->heap, (size_t)g->n, sizeof *k->order))) {
		ds_plan_free(g->heap, &copy);
		return ds_fail(e, DS_ENOMEM, "out of memory");
	}
	ds_plan_free(g->heap, &k->plan);
	k->plan = copy;
	memcpy(k->order, order, (size_t)g->n * sizeof *order);
	k->hash = h;
#ifndef NDEBUG
	k->checked = false;
#endif
	return DS_OK;
}

/* The entry for order under d's options (hash h), NULL when none. */
static struct memo_entry *memo_find(ds_dlr_memo *m, const dlr *d,
				    const int32_t *order, uint64_t h)
{
	for (int32_t i = 0; i < m->n; i++) {
		struct memo_entry *x = &m->e[i];
		if (x->effort == d->effort && x->size_nodes == d->size_nodes &&
		    x->lite == d->lite && kept_is(m->g, &x->k, order, h))
			return x;
	}
	return NULL;
}

/* A copy of plan p kept for order (hash h) while there is room. */
static int memo_put(ds_dlr_memo *m, const dlr *d, const int32_t *order,
		    uint64_t h, const ds_plan *p, ds_err *e)
{
	if (m->n >= MEMO_MAX)
		return DS_OK;
	struct memo_entry *x = &m->e[m->n];
	memset(x, 0, sizeof *x);
	int rc = kept_set(m->g, &x->k, order, h, p, e);
	if (rc)
		return rc;
	x->effort = d->effort;
	x->size_nodes = d->size_nodes;
	x->lite = d->lite;
	m->n++;
	return DS_OK;
}

static int dlr_make(dlr d, ds_plan *out, ds_err *e);

#ifndef NDEBUG
/* With asserts on, at an entry's first reuse: again, the plan made anew
 * (rc its status), must be the kept one (the memo rests on ds_dlr and
 * ds_place being pure functions); again is freed. */
static int memo_same(const ds_graph *g, int rc, ds_plan *again,
		     const ds_plan *kept)
{
	if (rc)
		return rc;
	DS_ASSERT(ds_plan_same(g, again, kept));
	ds_plan_free(g->heap, again);
	return DS_OK;
}
#endif

/* The memo's copy of x's plan into *out (made again and compared at its
 * first reuse, memo_same). */
static int memo_get(const dlr *d, struct memo_entry *x, ds_plan *out,
		    ds_err *e)
{
	const ds_graph *g = d->g;
	int rc = DS_OK;
#ifndef NDEBUG
	ds_plan again;
	if (!x->k.checked) {
		x->k.checked = true;
		rc = memo_same(g, dlr_make(*d, &again, e), &again, &x->k.plan);
	}
#endif
	return rc ? rc : ds_plan_copy(g, &x->k.plan, out, e);
}

/* The placement kept for order under o (hash h), NULL when none. */
static struct place_entry *place_find(ds_dlr_memo *m, const int32_t *order,
				      const ds_place_opts *o, uint64_t h)
{
	for (int32_t i = 0; i < m->np; i++) {
		struct place_entry *x = &m->pl[i];
		if (x->o.fit == o->fit && x->o.victim == o->victim &&
		    x->o.tie_pct == o->tie_pct && kept_is(m->g, &x->k, order, h))
			return x;
	}
	return NULL;
}

/* A copy of plan p kept for order under o (hash h), in place of the
 * oldest when PLACE_KEEP are kept (that one stays when the copy cannot
 * be had). */
static int place_put(ds_dlr_memo *m, const int32_t *order,
		     const ds_place_opts *o, uint64_t h, const ds_plan *p,
		     ds_err *e)
{
	struct place_entry *x = &m->pl[m->pnext];
	int rc = kept_set(m->g, &x->k, order, h, p, e);
	if (rc)
		return rc;
	x->o = *o;
	if (m->pnext == m->np)
		m->np++;
	m->pnext = (m->pnext + 1) % PLACE_KEEP;
	return DS_OK;
}

/* ds_place's plan of order under o for m's graph, a copy of the kept one
 * where there is one; with asserts on, an entry's first reuse places the
 * order again and checks that the plan is the same. */
static int memo_place(ds_dlr_memo *m, const int32_t *order,
		      const ds_place_opts *o, ds_plan *out, ds_err *e)
{
	const ds_graph *g = m->g;
	const uint64_t h = memo_hash(g, order);
	struct place_entry *x = place_find(m, order, o, h);
	int rc = DS_OK;
	if (x) {
#ifndef NDEBUG
		ds_plan again;
		if (!x->k.checked) {
			x->k.checked = true;
			rc = memo_same(g, ds_place(g, order, o, &again, e),
				       &again, &x->k.plan);
		}
#endif
		return rc ? rc : ds_plan_copy(g, &x->k.plan, out, e);
	}
	rc = ds_place(g, order, o, out, e);
	if (rc == DS_OK && (rc = place_put(m, order, o, h, out, e)))
		ds_plan_free(g->heap, out);
	return rc;
}

/* ---- the entry ---- */

int ds_dlr(const ds_graph *g, const int32_t *order, const ds_dlr_opts *o,
	   ds_plan *out, ds_err *e)
{
	memset(out, 0, sizeof *out);
	int rc = ds_order_check(g, order, "dlr", e);
	if (rc == DS_OK)
		rc = ds_check_fits(g, e);
	if (rc)
		return rc;
	ds_dlr_memo *m = o && o->memo && o->memo->g == g ? o->memo : NULL;
	dlr d = {.g = g,
		 .order = order,
		 .effort = o && o->effort > 0 ? o->effort : 1,
		 .size_nodes = o ? o->size_nodes : 0,
		 .lite = o && o->lite,
		 .b = {.memo = m}};
	if (!m)
		return dlr_make(d, out, e);
	const uint64_t h = memo_hash(g, order);
	struct memo_entry *x = memo_find(m, &d, order, h);
	if (x)
		return memo_get(&d, x, out, e);
	rc = dlr_make(d, out, e);
	if (rc == DS_OK && (rc = memo_put(m, &d, order, h, out, e)))
		ds_plan_free(g->heap, out);
	return rc;
}

/* ds_dlr's plan made for d's graph, order and options (its other fields
 * zero): the scratch from one arena, freed in one call. */
static int dlr_make(dlr d, ds_plan *out, ds_err *e)
{
	const ds_graph *g = d.g;
	const int32_t *order = d.order;
	const size_t n = (size_t)g->n, nb = (size_t)g->nbuf;
	ds_arena a;
	ds_arena_init(&a, g->heap);
	d.pos1 = ds_arena_alloc(&a, n, sizeof *d.pos1);
	d.ord = ds_arena_alloc(&a, n, sizeof *d.ord);
	d.anchor = ds_arena_alloc(&a, n, sizeof *d.anchor);
	d.posr = ds_arena_alloc(&a, n, sizeof *d.posr);
	d.chref = ds_arena_alloc(&a, nb + 1, sizeof *d.chref);
	d.chalt = ds_arena_alloc(&a, 2 * nb + 1, sizeof *d.chalt);
	d.turns = ds_arena_alloc(&a, 2 * nb + 2, sizeof *d.turns);
	if (a.failed) {
		ds_arena_free(&a);
		return ds_fail(e, DS_ENOMEM, "out of memory");
	}
	for (int32_t i = 0; i < g->n; i++)
		d.pos1[order[i]] = i;
	for (size_t i = 0; i < 2 * nb + 2; i++)
		d.turns[i] = -1;
	int rc = dlr_run(&d, e);
	if (rc == DS_OK) {
		*out = d.b.plan;
		d.b.have = false;
	}
	if (d.b.have)
		ds_plan_free(g->heap, &d.b.plan);
	ds_arena_free(&a);
	return rc;
}
