/* ds_dlr_stagger.c: accumulators side by side, staggered (sg_).
 *
 * Requires: a valid graph and a topological order of its n nodes (checked
 * by the caller: DLR's plan order without its spill nodes).
 * Guarantees: out[0..n) a topological order of the n nodes (dlr_po_follow's)
 * and *changed true, or *changed false and out[] untouched when the order
 * never runs two accumulators side by side, some operation is a step of
 * two of them, the lag is 0 steps or the order comes out the same.  A
 * pure function of the graph and the order (positions break every
 * tie).  DS_ENOMEM on failure, nothing else.
 * Cost: O(N + E) to find the accumulators and lanes, O(S log S) to sort
 * their S steps, O((N + E) log N) for the rebuild.
 *
 * Why: DLR's chain order runs the accumulators (dlr_is_chain) side by side
 * stepping in turn, so that two sharing an input read it together.  Their
 * inputs then die together and the next ones are first needed together:
 * the loads come in bursts, and between bursts the load pipe waits for
 * addresses held by data the running steps still read (Matmul_Case0 on
 * a9539da: 12,885 of MTE2's 14,472 idle cycles waited for L1 addresses,
 * in stretches of 16 MATMULs that load nothing).  Staggered, the lanes
 * are half a chain apart: each input dies, and the next is needed, one
 * lane at a time, so the loads spread over the steps.
 *
 * How: L, the lanes, is the most accumulators open at once in the order
 * (first step run, last not yet); with L < 2 nothing changes.  The
 * accumulators, in the order of their first steps, each take the lane
 * that frees first; lane l starts l lags late, the lag 1 / (L div) of the
 * longest chain (div from the caller: a smaller lag keeps fewer inputs
 * live at once), and a chain's step s runs at its lane's time plus s.
 * The last accumulator of each lane starts when the last lane frees
 * (sg_resync): no load follows theirs for a lag to spread, and a lane
 * still a lag behind after the last load runs its lag's steps alone, in
 * the plan's tail (Matmul_Case0: the last two accumulators ended 640
 * cycles apart, 1,289 cycles after the last load; the final plan 87,306
 * -> 86,859 cycles, ds_pipeline.c STAGGER_TIE_PCT).
 * The steps sorted by (that time, lane, position) are laid over the
 * places the order gave the steps; every other operation keeps its
 * place, or its first consumer's when that is earlier (a load a step
 * moved up needs), and one that only stages data for one consumer runs
 * next to it (dlr_po_follow's pull). */
#include "ds_dlr.h"

#include <stdlib.h>
#include <string.h>

/* One step: its node, the time its lane runs it, its lane. */
typedef struct sgstep {
	int64_t t;
	int32_t lane, pos, v;
} sgstep;

static int sg_cmp(const void *pa, const void *pb)
{
	const sgstep *a = pa, *b = pb;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	if (a->lane != b->lane)
		return a->lane < b->lane ? -1 : 1;
	return (a->pos > b->pos) - (a->pos < b->pos);
}

typedef struct sgrun {
	const ds_graph *g;
	const int32_t *order, *pos;
	int32_t *usr;	/* users of each buffer by position (g->user_off) */
	int32_t *chain; /* per node: the accumulator it is a step of, or -1 */
	int32_t *cbuf;	/* accumulators (their buffers) by first step */
	int32_t nch, nsteps, lanes, longest;
	int64_t lag; /* steps between one lane's start and the next's */
} sgrun;

/* The users of b by position. */
static const int32_t *sg_users(const sgrun *s, int32_t b, int32_t *nu)
{
	*nu = s->g->user_off[b + 1] - s->g->user_off[b];
	return s->usr + s->g->user_off[b];
}

/* The accumulators in the order of their first steps, their steps marked;
 * false when an operation is a step of two. */
static bool sg_find(sgrun *s)
{
	const ds_graph *g = s->g;
	for (int32_t v = 0; v < g->n; v++)
		s->chain[v] = -1;
	for (int32_t i = 0; i < g->n; i++) {
		int32_t v = s->order[i];
		for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
			int32_t b = g->use[k], nu;
			const int32_t *u = sg_users(s, b, &nu);
			if (u[0] != v || !dlr_is_chain(g, u, nu, b))
				continue;
			for (int32_t j = 0; j < nu; j++) {
				if (s->chain[u[j]] >= 0)
					return false;
				s->chain[u[j]] = s->nch;
			}
			s->cbuf[s->nch++] = b;
			s->nsteps += nu;
			if (nu > s->longest)
				s->longest = nu;
		}
	}
	return true;
}

/* The most accumulators open at once along the order. */
static int32_t sg_lanes(const sgrun *s)
{
	const ds_graph *g = s->g;
	int32_t open = 0, most = 0;
	for (int32_t i = 0; i < g->n; i++) {
		int32_t v = s->order[i], c = s->chain[v], nu;
		if (c < 0)
			continue;
		const int32_t *u = sg_users(s, s->cbuf[c], &nu);
		if (u[0] == v && ++open > most)
			most = open;
		if (u[nu - 1] == v)
			open--;
	}
	return most;
}

/* The lanes' last accumulators start together: every lane waits for the
 * one that frees last. */
static void sg_resync(const sgrun *s, int64_t *lane_t)
{
	int64_t last = 0;
	for (int32_t l = 0; l < s->lanes; l++)
		if (lane_t[l] > last)
			last = lane_t[l];
	for (int32_t l = 0; l < s->lanes; l++)
		lane_t[l] = last;
}

/* Each accumulator in the lane that frees first, lane l starting l lags
 * late, the last accumulator of each lane all at once (sg_resync); st[]
 * gets every step with its time. */
static void sg_time(const sgrun *s, int64_t *lane_t, sgstep *st)
{
	int32_t k = 0;
	for (int32_t l = 0; l < s->lanes; l++)
		lane_t[l] = (int64_t)l * s->lag;
	for (int32_t c = 0; c < s->nch; c++) {
		int32_t l = 0, nu;
		if (c == s->nch - s->lanes)
			sg_resync(s, lane_t);
		for (int32_t j = 1; j < s->lanes; j++)
			if (lane_t[j] < lane_t[l])
				l = j;
		const int32_t *u = sg_users(s, s->cbuf[c], &nu);
		for (int32_t j = 0; j < nu; j++)
			st[k++] = (sgstep){lane_t[l] + j, l, s->pos[u[j]], u[j]};
		lane_t[l] += nu;
	}
}

/* The keys: the sorted steps laid over the steps' places (st[] holds them
 * by time, the places are the steps' positions in increasing order), the
 * other operations their own place or their first consumer's when
 * earlier. */
static void sg_keys(const sgrun *s, const sgstep *st, int32_t *key)
{
	const ds_graph *g = s->g;
	int32_t t = 0;
	for (int32_t i = 0; i < g->n; i++) {
		int32_t v = s->order[i];
		key[v] = i;
	}
	for (int32_t i = 0; i < g->n; i++)
		if (s->chain[s->order[i]] >= 0)
			key[st[t++].v] = i;
	for (int32_t i = g->n - 1; i >= 0; i--) {
		int32_t v = s->order[i];
		if (g->kind[v] != DS_OP || s->chain[v] >= 0)
			continue;
		for (int32_t k = g->succ_off[v]; k < g->succ_off[v + 1]; k++) {
			int32_t w = g->succ[k];
			if (g->kind[w] == DS_OP && key[w] < key[v])
				key[v] = key[w];
		}
	}
}

int ds_dlr_stagger(const ds_graph *g, const int32_t *order, int32_t div,
		   int32_t *out, bool *changed, ds_err *e)
{
	const int32_t n = g->n, nb = g->nbuf;
	*changed = false;
	ds_arena a;
	ds_arena_init(&a, g->heap);
	sgrun s = {.g = g, .order = order};
	int32_t *pos = ds_arena_alloc(&a, (size_t)n, sizeof *pos);
	s.usr = ds_arena_alloc(&a, (size_t)g->user_off[nb] + 1, sizeof *s.usr);
	s.chain = ds_arena_alloc(&a, (size_t)n, sizeof *s.chain);
	s.cbuf = ds_arena_alloc(&a, (size_t)nb + 1, sizeof *s.cbuf);
	int32_t *key = ds_arena_alloc(&a, (size_t)n, sizeof *key);
	int32_t *tmp = ds_arena_alloc(&a, (size_t)n, sizeof *tmp);
	int rc = DS_OK;
	if (a.failed) {
		rc = ds_fail(e, DS_ENOMEM, "out of memory");
		goto out;
	}
	for (int32_t i = 0; i < n; i++)
		pos[order[i]] = i;
	s.pos = pos;
	memcpy(s.usr, g->user, (size_t)g->user_off[nb] * sizeof *s.usr);
	csr u = {g->user_off, s.usr};
	dlr_sort_lists(pos, &u, nb);
	if (!sg_find(&s) || (s.lanes = sg_lanes(&s)) < 2)
		goto out;
	s.lag = s.longest / ((int64_t)s.lanes * (div > 0 ? div : 1));
	if (s.lag == 0)
		goto out;
	int64_t *lane_t = ds_arena_alloc(&a, (size_t)s.lanes, sizeof *lane_t);
	sgstep *st = ds_arena_alloc(&a, (size_t)s.nsteps, sizeof *st);
	if (a.failed) {
		rc = ds_fail(e, DS_ENOMEM, "out of memory");
		goto out;
	}
	sg_time(&s, lane_t, st);
	qsort(st, (size_t)s.nsteps, sizeof *st, sg_cmp);
	sg_keys(&s, st, key);
	rc = dlr_po_follow(g, order, pos, key, true, tmp, e);
	if (rc == DS_OK && memcmp(tmp, order, (size_t)n * sizeof *tmp)) {
		memcpy(out, tmp, (size_t)n * sizeof *out);
		*changed = true;
	}
out:
	ds_arena_free(&a);
	return rc;
}
