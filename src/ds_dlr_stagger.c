/* ds_dlr_stagger.c: accumulators side by side, staggered (sg_); groups
 * of accumulators one after another, relayed (rl_).
 *
 * Requires: a valid graph and a topological order of its n nodes (checked
 * by the caller: DLR's plan order without its spill nodes).
 * Guarantees: out[0..n) a topological order of the n nodes (dlr_po_follow's)
 * and *changed true, or *changed false and out[] untouched when the order
 * never runs two accumulators side by side, some operation is a step of
 * two of them, the lag is 0 steps or the order comes out the same
 * (ds_dlr_stagger); when no group's order changes (ds_dlr_relay).  A
 * pure function of the graph and the order (positions break every
 * tie; BufIds are only compared for equality).  DS_ENOMEM on failure,
 * nothing else.
 * Cost: O(N + E) to find the accumulators, their shared inputs and the
 * lanes, O(W I) per accumulator delayed (sg_delay: W = SG_DELAY_WINDOW,
 * I the shared inputs of an accumulator), O(S log S) to sort their S
 * steps, O((N + E) log N) for the rebuild; the relay O(N + E) for the
 * groups (each position scanned once), O(I log I) per accumulator to
 * sort its inputs and O(C log C) for C accumulators to sort the groups.
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
 * accumulators are taken in the order of their first steps, except in
 * the reload phase (after the last one that reads a shared input, data
 * read by two accumulators or more, first): there one that frees no
 * shared input runs after the next one (within SG_DELAY_WINDOW) that
 * frees one it does not read, when the one after that reads one of its
 * inputs (sg_delay).  With L accumulators open, one that frees nothing
 * holds L1 while the loads behind it wait for addresses (Matmul_Case0:
 * a reload waited 396 cycles for a tile while CUBE ran two accumulators
 * that free none, and the one that frees a row's tiles waited for an
 * L0C slot; the final plan 86,152 -> 85,506 cycles at the same
 * traffic).  Then each accumulator takes the lane
 * that frees first; lane l starts l lags late, the lag 1 / (L div) of the
 * longest chain (div from the caller: a smaller lag keeps fewer inputs
 * live at once), and a chain's step s runs at its lane's time plus s.
 * The last accumulator of each lane starts when the last lane frees
 * (sg_resync): no load follows theirs for a lag to spread, and a lane
 * still a lag behind after the last load runs its lag's steps alone, in
 * the plan's tail (Matmul_Case0: the last two accumulators ended 640
 * cycles apart, 1,289 cycles after the last load; the final plan 87,306
 * -> 86,859 cycles, ds_backbone.c STAGGER_TIE_PCT).
 * The steps sorted by (that time, lane, position) are laid over the
 * places the order gave the steps; every other operation keeps its
 * place, or its first consumer's when that is earlier (a load a step
 * moved up needs), and one that only stages data for one consumer runs
 * next to it (dlr_po_follow's pull).
 *
 * The relay (ds_dlr_relay): a group is a run of accumulators, one after
 * another with no step of another among theirs, that read the same
 * shared inputs (data made before their first steps, read by two
 * accumulators or more), each making a result (data its steps make,
 * other than its own buffer).  When every result is first read after
 * the group's last step, their order is a tie for the traffic (each
 * reads all the inputs), but not for the next work: the result it reads
 * first is best made last, while it is still at hand.  So the members
 * run by decreasing position of their results' first readers (then
 * their places); a group with a result read inside keeps its order.  Conv_Case0's
 * late layers (four accumulators over four 768-byte inputs, each result
 * an input of the next layer, whose every accumulator reads the first
 * one's result first): the next layer's first accumulator found its
 * first input spilled and its second waiting for the first's SPILL_OUT;
 * relayed, DLR's order placed with aged victims replays 489,819 ->
 * 482,924 cycles at 45,888 -> 45,696 bytes, and the final plan is
 * 436,519 -> 416,511 at 47,424 -> 47,232 (CUBE idle in the three late
 * layers 62.6k -> 41.9k cycles).  The steps of each group are laid
 * over the places its steps held, the others keep theirs, and the
 * order is rebuilt as for the stagger. */
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

/* Accumulator c reads buffer b (counted once: stamp[b] == c once seen):
 * with in NULL counted in nrd[b] (how many accumulators read b); else
 * written to in[*k] when two or more read it.  A reads function's step
 * (sg_reads, rl_reads); *k: how many so far. */
static void sg_take(int32_t b, int32_t c, int32_t *stamp, int32_t *nrd,
		    int32_t *in, int32_t *k)
{
	if (stamp[b] == c)
		return;
	stamp[b] = c;
	if (!in)
		nrd[b]++, (*k)++;
	else if (nrd[b] >= 2)
		in[(*k)++] = b;
}

/* The buffers accumulator c reads through the operations that feed its
 * steps (no step themselves), each once, as sg_take does.  Returns how
 * many. */
static int32_t sg_reads(const sgrun *s, int32_t c, int32_t *stamp,
			int32_t *nrd, int32_t *in)
{
	const ds_graph *g = s->g;
	int32_t nu, k = 0;
	const int32_t *u = sg_users(s, s->cbuf[c], &nu);
	for (int32_t j = 0; j < nu; j++)
		for (int32_t q = g->pred_off[u[j]]; q < g->pred_off[u[j] + 1];
		     q++) {
			int32_t x = g->pred[q];
			if (g->kind[x] != DS_OP || s->chain[x] >= 0)
				continue;
			for (int32_t r = g->use_off[x]; r < g->use_off[x + 1];
			     r++)
				sg_take(g->use[r], c, stamp, nrd, in, &k);
		}
	return k;
}

/* What an accumulator reads, one way or another (sg_reads, rl_reads). */
typedef int32_t (*sg_reads_fn)(const sgrun *s, int32_t c, int32_t *stamp,
			       int32_t *nrd, int32_t *in);

static int sg_cmp_buf(const void *pa, const void *pb)
{
	int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
	return (a > b) - (a < b);
}

/* The shared inputs of each accumulator c (by position in cbuf):
 * in[off[c]..off[c + 1]), the buffers it reads (reads) that another
 * accumulator reads too, each list sorted (by BufId: only compared for
 * equality) when sorted is set.  False when the arena failed. */
static bool sg_shared(const sgrun *s, ds_arena *a, sg_reads_fn reads,
		      bool sorted, int32_t **offp, int32_t **inp)
{
	const int32_t nb = s->g->nbuf;
	int32_t *stamp = ds_arena_alloc(a, (size_t)nb + 1, sizeof *stamp);
	int32_t *nrd = ds_arena_alloc(a, (size_t)nb + 1, sizeof *nrd);
	int32_t *off = ds_arena_alloc(a, (size_t)s->nch + 1, sizeof *off);
	if (a->failed)
		return false;
	int64_t tot = 0;
	for (int32_t b = 0; b < nb; b++)
		stamp[b] = -1, nrd[b] = 0;
	for (int32_t c = 0; c < s->nch; c++)
		tot += reads(s, c, stamp, nrd, NULL);
	int32_t *in = ds_arena_alloc(a, (size_t)tot + 1, sizeof *in);
	if (a->failed)
		return false;
	for (int32_t b = 0; b < nb; b++)
		stamp[b] = -1;
	off[0] = 0;
	for (int32_t c = 0; c < s->nch; c++) {
		off[c + 1] = off[c] + reads(s, c, stamp, nrd, in + off[c]);
		if (sorted)
			qsort(in + off[c], (size_t)(off[c + 1] - off[c]),
			      sizeof *in, sg_cmp_buf);
	}
	*offp = off;
	*inp = in;
	return true;
}

/* How far ahead (accumulators) sg_delay looks for one that frees an
 * input.  Measured on Matmul_Case0 (final makespan, default options;
 * 86,152 without sg_delay): 1 moves none (86,152), 2 moves two (85,506
 * at the same 12,032 bytes), 3 eight (93,783).
 * Without the partner rule, 2 gives 86,220 at 11,904 bytes (three
 * moves); over the whole order, not only the reload phase, 92,901. */
#define SG_DELAY_WINDOW 2

/* The accumulators' order before the lanes (sg_delay): cat[i] the
 * accumulator (index into cbuf) at position i, last[b] the position of
 * the last reader of shared input b, mark[] stamps (m the current one). */
typedef struct sgdelay {
	const int32_t *off, *in;
	int32_t *cat, *last, *mark, *moved;
	int32_t m, end;
} sgdelay;

/* Does the accumulator at position i free a shared input (read by no
 * later accumulator), one not stamped m when m > 0? */
static bool sg_frees(const sgdelay *d, int32_t i, int32_t m)
{
	int32_t c = d->cat[i];
	for (int32_t k = d->off[c]; k < d->off[c + 1]; k++)
		if (d->last[d->in[k]] == i && (m == 0 || d->mark[d->in[k]] != m))
			return true;
	return false;
}

/* Does the accumulator at position i read an input stamped m? */
static bool sg_reads_marked(const sgdelay *d, int32_t i, int32_t m)
{
	int32_t c = d->cat[i];
	for (int32_t k = d->off[c]; k < d->off[c + 1]; k++)
		if (d->mark[d->in[k]] == m)
			return true;
	return false;
}

/* Where the accumulator at i goes: when it frees no shared input, after
 * the first of the next SG_DELAY_WINDOW that frees one it does not read,
 * provided the one after that reads one of its inputs (it keeps a
 * partner to step beside); else -1. */
static int32_t sg_delay_to(sgdelay *d, int32_t i)
{
	int32_t x = d->cat[i];
	if (d->moved[x] || d->off[x] == d->off[x + 1] || sg_frees(d, i, 0))
		return -1;
	int32_t m = ++d->m;
	for (int32_t k = d->off[x]; k < d->off[x + 1]; k++)
		d->mark[d->in[k]] = m;
	for (int32_t j = i + 1; j <= i + SG_DELAY_WINDOW && j < d->end; j++)
		if (sg_frees(d, j, m))
			return sg_reads_marked(d, j + 1, m) ? j : -1;
	return -1;
}

/* The accumulator at i (its inputs stamped d->m) moved to j > i: the
 * ones between move up a place, the last readers follow. */
static void sg_delay_move(sgdelay *d, int32_t i, int32_t j)
{
	int32_t x = d->cat[i], m = d->m;
	for (int32_t p = i + 1; p <= j; p++) {
		int32_t c = d->cat[p];
		for (int32_t k = d->off[c]; k < d->off[c + 1]; k++)
			if (d->mark[d->in[k]] != m && d->last[d->in[k]] == p)
				d->last[d->in[k]] = p - 1;
	}
	for (int32_t k = d->off[x]; k < d->off[x + 1]; k++)
		if (d->last[d->in[k]] < j)
			d->last[d->in[k]] = j;
	memmove(d->cat + i, d->cat + i + 1, (size_t)(j - i) * sizeof *d->cat);
	d->cat[j] = x;
	d->moved[x] = 1;
}

/* After the last accumulator that reads a shared input first (the reload
 * phase), each accumulator that frees no shared input runs after the
 * next one that frees one it does not read (sg_delay_to), once; the
 * lanes' last accumulators stay.  cbuf[] reordered; false when the
 * arena failed. */
static bool sg_delay(sgrun *s, ds_arena *a)
{
	const ds_graph *g = s->g;
	const int32_t nch = s->nch, nb = g->nbuf;
	int32_t *off, *in;
	if (!sg_shared(s, a, sg_reads, false, &off, &in))
		return false;
	sgdelay d = {.off = off, .in = in, .end = nch - s->lanes};
	d.cat = ds_arena_alloc(a, (size_t)nch + 1, sizeof *d.cat);
	d.moved = ds_arena_alloc(a, (size_t)nch + 1, sizeof *d.moved);
	d.last = ds_arena_alloc(a, (size_t)nb + 1, sizeof *d.last);
	d.mark = ds_arena_alloc(a, (size_t)nb + 1, sizeof *d.mark);
	if (a->failed)
		return false;
	int32_t i = 0;
	for (int32_t b = 0; b < nb; b++)
		d.last[b] = -1, d.mark[b] = 0;
	for (int32_t c = 0; c < nch; c++) {
		d.cat[c] = c;
		d.moved[c] = 0;
		for (int32_t k = off[c]; k < off[c + 1]; k++) {
			if (d.last[in[k]] < 0)
				i = c + 1; /* a first reader */
			d.last[in[k]] = c;
		}
	}
	while (i < d.end) {
		int32_t j = sg_delay_to(&d, i);
		if (j < 0)
			i++;
		else
			sg_delay_move(&d, i, j);
	}
	for (int32_t c = 0; c < nch; c++)
		d.moved[c] = s->cbuf[d.cat[c]];
	memcpy(s->cbuf, d.moved, (size_t)nch * sizeof *s->cbuf);
	return true;
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

/* The order rebuilt from the steps' new places st (sorted here) as the
 * stagger and the relay do: keys from them, then dlr_po_follow (its
 * pull) over s's order; into out, *changed set, when it differs from
 * that order (tmp: n entries of scratch). */
static int sg_rebuild(const sgrun *s, sgstep *st, int32_t *key, int32_t *tmp,
		      int32_t *out, bool *changed, ds_err *e)
{
	const int32_t n = s->g->n;
	qsort(st, (size_t)s->nsteps, sizeof *st, sg_cmp);
	sg_keys(s, st, key);
	int rc = dlr_po_follow(s->g, s->order, s->pos, key, true, tmp, e);
	if (rc == DS_OK && memcmp(tmp, s->order, (size_t)n * sizeof *tmp)) {
		memcpy(out, tmp, (size_t)n * sizeof *out);
		*changed = true;
	}
	return rc;
}

/* What the stagger and the relay both start with: s's scratch from a
 * (positions, users, chains, accumulators; key and tmp for sg_rebuild),
 * each buffer's users sorted by position in s->order, and the
 * accumulators found (sg_find, into *found).  False when out of memory. */
static bool sg_begin(sgrun *s, ds_arena *a, int32_t **key, int32_t **tmp,
		     bool *found)
{
	const ds_graph *g = s->g;
	const int32_t n = g->n, nb = g->nbuf;
	int32_t *pos = ds_arena_alloc(a, (size_t)n, sizeof *pos);
	s->usr = ds_arena_alloc(a, (size_t)g->user_off[nb] + 1, sizeof *s->usr);
	s->chain = ds_arena_alloc(a, (size_t)n, sizeof *s->chain);
	s->cbuf = ds_arena_alloc(a, (size_t)nb + 1, sizeof *s->cbuf);
	*key = ds_arena_alloc(a, (size_t)n, sizeof **key);
	*tmp = ds_arena_alloc(a, (size_t)n, sizeof **tmp);
	if (a->failed)
		return false;
	for (int32_t i = 0; i < n; i++)
		pos[s->order[i]] = i;
	s->pos = pos;
	memcpy(s->usr, g->user, (size_t)g->user_off[nb] * sizeof *s->usr);
	csr u = {g->user_off, s->usr};
	dlr_sort_lists(pos, &u, nb);
	*found = sg_find(s);
	return true;
}

int ds_dlr_stagger(const ds_graph *g, const int32_t *order, int32_t div,
		   int32_t *out, bool *changed, ds_err *e)
{
	*changed = false;
	ds_arena a;
	ds_arena_init(&a, g->heap);
	sgrun s = {.g = g, .order = order};
	int32_t *key, *tmp;
	bool found;
	int rc = DS_OK;
	if (!sg_begin(&s, &a, &key, &tmp, &found)) {
		rc = ds_fail(e, DS_ENOMEM, "out of memory");
		goto out;
	}
	if (!found || (s.lanes = sg_lanes(&s)) < 2)
		goto out;
	if (!sg_delay(&s, &a)) {
		rc = ds_fail(e, DS_ENOMEM, "out of memory");
		goto out;
	}
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
	rc = sg_rebuild(&s, st, key, tmp, out, changed, e);
out:
	ds_arena_free(&a);
	return rc;
}

/* ---- relay: a group's chains ordered by when their results are needed ---- */

/* Where the first consumer of accumulator c's result sits: the least
 * position, after c's last step, of a user of a buffer that a step of c
 * makes (its first user is one of c's steps; c's own buffer left out);
 * INT32_MAX when it has none. */
static int32_t rl_need(const sgrun *s, int32_t c)
{
	const ds_graph *g = s->g;
	int32_t nu, need = INT32_MAX;
	const int32_t *u = sg_users(s, s->cbuf[c], &nu);
	for (int32_t j = 0; j < nu; j++)
		for (int32_t k = g->use_off[u[j]]; k < g->use_off[u[j] + 1];
		     k++) {
			int32_t b = g->use[k], nb;
			const int32_t *w = sg_users(s, b, &nb);
			if (b == s->cbuf[c] || w[0] != u[j])
				continue;
			for (int32_t q = 1; q < nb; q++)
				if (s->chain[w[q]] != c && s->pos[w[q]] < need)
					need = s->pos[w[q]];
		}
	return need;
}

/* Do accumulators c and d read the same shared inputs (lists sorted)? */
static bool rl_same_inputs(const int32_t *off, const int32_t *in, int32_t c,
			   int32_t d)
{
	int32_t nc = off[c + 1] - off[c];
	return nc > 0 && nc == off[d + 1] - off[d] &&
	       !memcmp(in + off[c], in + off[d], (size_t)nc * sizeof *in);
}

/* The buffers accumulator c's steps use that were made before its first
 * step, each once, as sg_take does.  Returns how many. */
static int32_t rl_reads(const sgrun *s, int32_t c, int32_t *stamp,
			int32_t *nrd, int32_t *in)
{
	const ds_graph *g = s->g;
	int32_t nu, k = 0;
	const int32_t *u = sg_users(s, s->cbuf[c], &nu);
	for (int32_t j = 0; j < nu; j++)
		for (int32_t r = g->use_off[u[j]]; r < g->use_off[u[j] + 1];
		     r++) {
			int32_t b = g->use[r], nb;
			const int32_t *w = sg_users(s, b, &nb);
			if (s->pos[w[0]] < s->pos[u[0]])
				sg_take(b, c, stamp, nrd, in, &k);
		}
	return k;
}

/* Positions of accumulator c's first and last steps. */
static void rl_span(const sgrun *s, int32_t c, int32_t *lo, int32_t *hi)
{
	int32_t nu;
	const int32_t *u = sg_users(s, s->cbuf[c], &nu);
	*lo = s->pos[u[0]];
	*hi = s->pos[u[nu - 1]];
}

/* Steps of any accumulator at positions lo..hi. */
static int32_t rl_steps_in(const sgrun *s, int32_t lo, int32_t hi)
{
	int32_t k = 0;
	for (int32_t i = lo; i <= hi; i++)
		k += s->chain[s->order[i]] >= 0;
	return k;
}

/* The group of accumulators from c on: each after the one before, no
 * step of another accumulator among theirs, reading the same shared
 * inputs.  Returns its end (exclusive); need[] of its members filled,
 * all 0 (their order kept) when a result is read before the group's
 * last step.  O(the group's span). */
static int32_t rl_group(const sgrun *s, const int32_t *off, const int32_t *in,
			int32_t c, int32_t *need)
{
	int32_t lo, hi, end = c + 1, nu;
	rl_span(s, c, &lo, &hi);
	sg_users(s, s->cbuf[c], &nu);
	if (rl_steps_in(s, lo, hi) != nu)
		return c + 1;
	while (end < s->nch && rl_same_inputs(off, in, c, end)) {
		int32_t lo2, hi2;
		rl_span(s, end, &lo2, &hi2);
		sg_users(s, s->cbuf[end], &nu);
		if (lo2 < hi || rl_steps_in(s, hi + 1, hi2) != nu)
			break;
		hi = hi2;
		end++;
	}
	bool inside = false;
	for (int32_t x = c; x < end; x++) {
		need[x] = rl_need(s, x);
		inside |= need[x] <= hi;
	}
	for (int32_t x = c; inside && x < end; x++)
		need[x] = 0; /* a result read inside: left as it is */
	return end;
}

/* A group member: its buffer, where its result is needed, its place. */
typedef struct rlmember {
	int32_t buf, need, at;
} rlmember;

static int rl_cmp_member(const void *pa, const void *pb)
{
	const rlmember *a = pa, *b = pb;
	if (a->need != b->need)
		return a->need > b->need ? -1 : 1;
	return (a->at > b->at) - (a->at < b->at);
}

/* Each group's accumulators by decreasing need (then their places): the
 * result needed first is made last, so it is still at hand.  cbuf[]
 * reordered, gend[c] the end of the group starting at c (m: room for
 * nch members); true when something moved. */
static bool rl_reorder(sgrun *s, const int32_t *off, const int32_t *in,
		       int32_t *need, int32_t *gend, rlmember *m)
{
	bool moved = false;
	for (int32_t c = 0, end; c < s->nch; c = end) {
		end = rl_group(s, off, in, c, need);
		gend[c] = end;
		for (int32_t x = c; x < end; x++)
			m[x] = (rlmember){s->cbuf[x], need[x], x};
		qsort(m + c, (size_t)(end - c), sizeof *m, rl_cmp_member);
		for (int32_t x = c; x < end; x++) {
			moved |= m[x].at != x;
			s->cbuf[x] = m[x].buf;
		}
	}
	return moved;
}

/* st[]: the steps of the groups' accumulators (gend) in their new order,
 * each group's steps given the places its steps held (t), the others
 * their own. */
static void rl_steps(const sgrun *s, const int32_t *gend, sgstep *st)
{
	int32_t k = 0;
	for (int32_t c = 0; c < s->nch; c = gend[c]) {
		int32_t first = INT32_MAX, lo, hi;
		for (int32_t x = c; x < gend[c]; x++) {
			rl_span(s, x, &lo, &hi);
			if (lo < first)
				first = lo;
		}
		int32_t at = first;
		for (int32_t x = c; x < gend[c]; x++) {
			int32_t nu;
			const int32_t *w = sg_users(s, s->cbuf[x], &nu);
			for (int32_t j = 0; j < nu; j++) {
				int32_t t = s->pos[w[j]];
				if (gend[c] > c + 1) { /* the group's next place */
					while (s->chain[s->order[at]] < 0)
						at++;
					t = at++;
				}
				st[k++] = (sgstep){t, 0, s->pos[w[j]], w[j]};
			}
		}
	}
}

int ds_dlr_relay(const ds_graph *g, const int32_t *order, int32_t *out,
		 bool *changed, ds_err *e)
{
	*changed = false;
	ds_arena a;
	ds_arena_init(&a, g->heap);
	sgrun s = {.g = g, .order = order};
	int32_t *key, *tmp, *need, *off, *in;
	rlmember *m;
	sgstep *st;
	bool found;
	int rc = DS_OK;
	if (!sg_begin(&s, &a, &key, &tmp, &found))
		goto oom;
	need = ds_arena_alloc(&a, (size_t)g->nbuf + 1, sizeof *need);
	if (a.failed)
		goto oom;
	if (!found || s.nch < 2)
		goto out;
	if (!sg_shared(&s, &a, rl_reads, true, &off, &in))
		goto oom;
	m = ds_arena_alloc(&a, (size_t)s.nch, sizeof *m);
	if (a.failed)
		goto oom;
	if (!rl_reorder(&s, off, in, need, tmp, m))
		goto out;
	st = ds_arena_alloc(&a, (size_t)s.nsteps + 1, sizeof *st);
	if (a.failed)
		goto oom;
	rl_steps(&s, tmp, st);
	rc = sg_rebuild(&s, st, key, tmp, out, changed, e);
	goto out;
oom:
	rc = ds_fail(e, DS_ENOMEM, "out of memory");
out:
	ds_arena_free(&a);
	return rc;
}
