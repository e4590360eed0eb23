/* ds_cpe_list.c: CPE's list scheduling (prefix cl_; its segment tree st_).
 *
 * Requires: a cpe (ds_cpe.h) whose backbone is set (cpe_set_backbone:
 * constraint graph by source and target, positions, vstay profile) and
 * whose ranks are set (cl_set_rank).
 * Guarantees: cl_simulate builds in c->out an order of all nodes that keeps
 * every edge of the constraint graph, at the non-delay times c->start and
 * c->fin, with the guard's vstay within c->limit when c->guard_on; online,
 * also the offsets c->off, c->soff and the dropped spills c->elided (the
 * rules of ds_cpe_mem.c); or *ok false when stuck, which those rules rule
 * out except in gang mode (see "gangs" below).  cl_need_keys and
 * cl_simulate_back only give priorities (c->key).
 * Cost: per simulation O((N + E) log N), each decision trying at most
 * CPE_MAX_TRIES candidates (plus their placement, ds_cpe_mem.c); the
 * guard O(log N) per node issued; in gang mode, per candidate, O(its
 * gang's users and predecessors), and per decision O(the committed list,
 * at most the operations of the gangs placed and not yet issued). */
#include "ds_cpe.h"

#include <string.h>

/* ---- a segment tree: range add, range max over backbone positions ---- */

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

/* ---- priorities ---- */

/* Ranks from key: nodes sorted by (key, backbone position), so node Ids
 * never matter.  A merge sort of the backbone order (stable), with tmp
 * and stack as its two buffers. */
void cl_set_rank(cpe *c, const int64_t *key)
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
static void cl_guard_commit(cpe *c, int32_t v)
{
	int64_t d = cpe_dvstay(c, v);
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
static bool cl_guard_allows(cpe *c, int32_t *nodes, int32_t k)
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
		add += cpe_dvstay(c, nodes[i]);
	/* the tree's overall maximum bounds every range: often enough */
	if (add <= 0 || c->guard.mx[1] + add <= c->limit)
		return true;
	int32_t lo = c->front;
	for (int32_t i = 0; i < k && add > 0; i++) {
		int64_t d = cpe_dvstay(c, nodes[i]);
		if (d <= 0)
			continue;
		int32_t hi = c->pos[nodes[i]];
		if (st_max(&c->guard, 1, 0, c->guard.size - 1, lo, hi) + add >
		    c->limit) {
			c->refused++;
			return false;
		}
		add -= d;
		lo = hi + 1;
	}
	return true;
}

/* ---- list scheduling ---- */

/* A node whose predecessors are now all issued or parked ALLOCs changes
 * state: an ALLOC parks (it is issued later, right before a successor:
 * it costs nothing and an early ALLOC only holds memory), a FREE is
 * issued at once, an operation becomes a candidate of its pipe. */
static void cl_touch(cpe *c, int32_t v)
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
			cl_touch(c, w);
		}
	} else if (k == K_FREE || k == K_ALLOC) {
		/* an ALLOC nobody would issue (no operation follows it)
		 * goes at once, like a FREE */
		if (c->npend[v] == 0) {
			c->state[v] = S_QUEUED;
			ds_heapq_push(&c->frees, c->pos[v], v);
		}
	} else if (c->npend[v] == 0 &&
		   (cpe_is_elided(c, v) ||
		    (k == K_SOUT && c->elide && cm_can_elide(c, v)))) {
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
#ifndef NDEBUG
/* Debug: the guard's values from the frontier on against their
 * definition (see cl_guard_commit): the backbone's profile plus the
 * changes of the nodes issued ahead, those at or after the position.
 * Node x of the tree covers [lo, hi]; acc: the additions of its
 * ancestors; *ahead: the changes at positions after hi.  Right to left,
 * O(size) in all; each inner node's maximum is checked on the way. */
static void cl_check_guard(const cpe *c, int32_t x, int32_t lo, int32_t hi,
			   int64_t acc, int64_t *ahead)
{
	const segt *s = &c->guard;
	if (hi < c->front)
		return;
	if (lo == hi) {
		if (lo >= c->total)
			return;
		int32_t v = c->bb[lo];
		if (c->state[v] == S_ISSUED)
			*ahead += cpe_dvstay(c, v);
		DS_ASSERT(s->mx[x] + acc == c->prof[lo] + *ahead);
		return;
	}
	int64_t a = s->mx[2 * x], b = s->mx[2 * x + 1];
	DS_ASSERT(s->mx[x] == (a > b ? a : b) + s->ad[x]);
	int32_t mid = lo + (hi - lo) / 2;
	cl_check_guard(c, 2 * x + 1, mid + 1, hi, acc + s->ad[x], ahead);
	cl_check_guard(c, 2 * x, lo, mid, acc + s->ad[x], ahead);
}

/* Debug: the list scheduler's incremental state recomputed from scratch,
 * at every power-of-four count of nodes issued and at the end (about
 * log4(N) + 1 times O(N + E + N log N) per simulation): the frontier,
 * each node's pending and parked predecessors, the guard. */
static void cl_check(const cpe *c)
{
	uint32_t k = (uint32_t)c->nout;
	bool pow4 = (k & (k - 1)) == 0 && (k & 0x55555555u) != 0;
	if (!pow4 && c->nout != c->total)
		return;
	int32_t f = 0;
	while (f < c->total && c->state[c->bb[f]] == S_ISSUED)
		f++;
	DS_ASSERT(f == c->front);
	for (int32_t v = 0; v < c->total; v++) {
		int32_t pend = 0, parked = 0;
		for (int32_t j = c->p_off[v]; j < c->p_off[v + 1]; j++) {
			pend += c->state[c->p_adj[j]] != S_ISSUED;
			parked += c->state[c->p_adj[j]] == S_PARKED;
		}
		DS_ASSERT(pend == c->npend[v] && parked == c->nparked[v]);
	}
	int64_t ahead = 0;
	if (c->guard_on)
		cl_check_guard(c, 1, 0, c->guard.size - 1, 0, &ahead);
}
#endif

static void cl_issue(cpe *c, int32_t v, int64_t start)
{
	bool parked = c->state[v] == S_PARKED, dropped = cpe_is_elided(c, v);
	cl_guard_commit(c, v);
	c->state[v] = S_ISSUED;
	c->out[c->nout++] = v;
	c->start[v] = start;
	c->fin[v] = start + (dropped ? 0 : c->cyc[v]);
	if (c->online && c->kind[v] != K_OP) {
		int m = c->g->buf_mem[c->nbuf[v]];
		c->mver[m]++;
		if (cpe_starts_occ(c, v)) {
			cm_started(c, c->occ_of[v]);
		}
		/* a dropped spill's buffer stays where it is */
		if ((c->kind[v] == K_FREE || c->kind[v] == K_SOUT) &&
		    !dropped) {
			c->occ_endt[c->cur_occ[c->nbuf[v]]] = c->fin[v];
			c->endver++;
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
		cl_touch(c, w);
	}
#ifndef NDEBUG
	cl_check(c);
#endif
}

static int cl_drain_frees(cpe *c)
{
	while (c->frees.n > 0) {
		int32_t v = ds_heapq_pop(&c->frees);
		if (c->online && c->kind[v] == K_ALLOC) {
			/* an ALLOC without users: the backbone's offset,
			 * if that is free, else give up */
			int64_t last;
			if (!cm_bb_window_ok(c, v, INT64_MAX, &last)) {
				c->stuck = true;
				return DS_OK;
			}
			if (cm_occupy(c, v, c->bo_lo[c->occ_of[v]]))
				return cpe_oom(c);
			if (c->avail[v] < last)
				c->avail[v] = last;
		}
		cl_issue(c, v, c->avail[v]);
	}
	return DS_OK;
}

/* The parked ALLOCs v waits for (and theirs) into c->tmp from index *k. */
static void cl_gather_parked(cpe *c, int32_t v, int32_t *k)
{
	for (int32_t j = c->p_off[v]; j < c->p_off[v + 1]; j++) {
		int32_t a = c->p_adj[j];
		if (c->state[a] != S_PARKED || c->mark[a] == c->stamp)
			continue;
		c->mark[a] = c->stamp;
		cl_gather_parked(c, a, k);
		c->tmp[(*k)++] = a;
	}
}

/* ---- gangs ----
 * The online mode keeps the backbone's next operation issuable by
 * reserving, for each backbone occupancy still to start, its addresses
 * against later ones (ds_cpe_mem.c).  In the small memories that do not
 * stay (L0A/L0B/L0C here), that keeps their occupancies in the backbone's
 * order: a product whose operands are loaded and whose result is needed
 * waits behind an earlier one whose input is still being computed
 * (generated attention graphs: the P.V products of one head, waiting for
 * its softmax, hold back the next head's Q.K^T).  The gang mode lifts
 * the reservations for a gang: an operation w that ends every occupancy
 * of a memory that does not stay that candidate u starts (its last user
 * in backbone order) and that can run as soon as memory allows (each
 * predecessor issued, a parked ALLOC, u, or an operation ready but for
 * its ALLOCs).  Then every such occupancy that w and those operations
 * start is placed with u's, all or none, and they go first on their
 * pipes.  Only memories that do not stay are taken ahead: with a gang's
 * L1 accumulator placed early too, the vstay guard held back the loads
 * its operation waited for, and most of Conv_Case0's passes got stuck.
 * They can still get stuck (a gang holds what the frontier operation
 * needs, which waits for memory the gang's operation needs): the pass
 * then gives no plan. */

/* Is operation s ready but for memory: every predecessor issued or a
 * parked ALLOC? */
static bool cl_ready_but_memory(const cpe *c, int32_t s)
{
	for (int32_t j = c->p_off[s]; j < c->p_off[s + 1]; j++) {
		int32_t a = c->p_adj[j];
		if (c->state[a] != S_ISSUED && c->state[a] != S_PARKED)
			return false;
	}
	return true;
}

/* The last user, in backbone order, of buffer b. */
static int32_t cl_last_user(const cpe *c, int32_t b)
{
	const ds_graph *g = c->g;
	int32_t last = -1;
	for (int32_t j = g->user_off[b]; j < g->user_off[b + 1]; j++)
		if (last < 0 || c->pos[g->user[j]] > c->pos[last])
			last = g->user[j];
	return last;
}

/* The one operation that ends every occupancy of a memory that does not
 * stay among the parked ALLOCs tmp[0..k), or -1 (none, or more than
 * one). */
static int32_t cl_gang_anchor(const cpe *c, int32_t k)
{
	int32_t w = -1;
	for (int32_t i = 0; i < k; i++) {
		int32_t a = c->tmp[i], b = c->nbuf[a];
		if (c->kind[a] != K_ALLOC || ds_mem_stays(c->g->buf_mem[b]))
			continue;
		int32_t last = cl_last_user(c, b);
		if (last < 0 || (w >= 0 && last != w))
			return -1;
		w = last;
	}
	return w;
}

/* Can anchor w run as soon as memory allows, once u is issued? */
static bool cl_gang_ready(const cpe *c, int32_t u, int32_t w)
{
	for (int32_t j = c->p_off[w]; j < c->p_off[w + 1]; j++) {
		int32_t a = c->p_adj[j];
		if (a == u || c->state[a] == S_ISSUED || c->state[a] == S_PARKED)
			continue;
		if (c->kind[a] != K_OP || !cl_ready_but_memory(c, a))
			return false;
	}
	return true;
}

/* Is a, a predecessor of u's gang's anchor, one of the gang's operations
 * still to issue (u aside)? */
static bool cl_gang_op(const cpe *c, int32_t u, int32_t a)
{
	return a != u && c->kind[a] == K_OP && c->state[a] != S_ISSUED;
}

/* Gang mode: u's gang's parked ALLOCs (its anchor's and those of the
 * anchor's other predecessors not issued) join u's in tmp (from *k on),
 * c->gang_w the anchor; true then.  False, *k as it was, when u has no
 * gang or the gang would take memory that stays. */
static bool cl_gather_gang(cpe *c, int32_t u, int32_t *k)
{
	if (!c->gang)
		return false;
	int32_t w = cl_gang_anchor(c, *k);
	if (w < 0 || w == u || c->state[w] == S_ISSUED ||
	    !cl_gang_ready(c, u, w))
		return false;
	const int32_t k0 = *k;
	for (int32_t j = c->p_off[w]; j < c->p_off[w + 1]; j++) {
		int32_t a = c->p_adj[j];
		if (cl_gang_op(c, u, a))
			cl_gather_parked(c, a, k);
	}
	cl_gather_parked(c, w, k);
	for (int32_t i = k0; i < *k; i++) {
		int32_t a = c->tmp[i];
		if (c->kind[a] != K_ALLOC ||
		    ds_mem_stays(c->g->buf_mem[c->nbuf[a]])) {
			*k = k0;
			return false;
		}
	}
	c->gang_w = w;
	return true;
}

/* v on the committed list, once. */
static void cl_commit(cpe *c, int32_t v)
{
	if (c->committed[v])
		return;
	c->committed[v] = 1;
	c->commit[c->ncommit++] = v;
}

/* A gang placed with u: its anchor and the anchor's other operations not
 * issued yet go on the committed list. */
static void cl_commit_gang(cpe *c, int32_t u)
{
	const int32_t w = c->gang_w;
	for (int32_t j = c->p_off[w]; j < c->p_off[w + 1]; j++) {
		int32_t a = c->p_adj[j];
		if (cl_gang_op(c, u, a))
			cl_commit(c, a);
	}
	cl_commit(c, w);
}

/* Can candidate u be issued at time t?  Its occupancy starts (its parked
 * ALLOCs, itself if a SPILL_IN) must pass the guard and, online, find
 * memory vacated by t, where they are then placed; in gang mode with
 * u's gang's (cl_gather_gang).  tmp[0..*k) gets the parked ALLOCs in
 * issue order. */
static int cl_try_candidate(cpe *c, int32_t u, int64_t t, int32_t *k, bool *ok)
{
	*k = 0;
	c->stamp++;
	cl_gather_parked(c, u, k);
	const bool gang = cl_gather_gang(c, u, k);
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
	*ok = cl_guard_allows(c, set, ns);
	if (!*ok || !c->online)
		return DS_OK;
	c->relax_now = gang;
	int rc = cm_place_now(c, set, ns, t, ok);
	c->relax_now = false;
	if (rc == DS_OK && *ok && gang)
		cl_commit_gang(c, u);
	return rc;
}

/* The backbone's first operation not issued yet.  Everything before it in
 * the backbone is issued or a parked ALLOC, so it is a candidate; the
 * guard lets it pass; fixed, the reuse edges keep its memory valid;
 * online, its backbone offsets are free once vacated: every backbone
 * occupancy before it has ended, and nothing issued ahead holds them (see
 * cm_bb_window_ok and reserve). */
static int32_t cl_frontier_op(cpe *c)
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

/* The entries of a ready heap in (rank, node) order, read without taking
 * them out: the heap indices that may come next (the children of those
 * read), the least first.  A decision mostly refuses its few candidates
 * (98 % of the refusals on the bundled graphs come in decisions that
 * issue nothing), and popping them only to push them back cost more than
 * the rest of the heap's work. */
typedef struct cl_peek {
	int32_t at[CPE_MAX_TRIES + 3];
	int32_t n;
} cl_peek;

static bool cl_heap_before(const ds_heapq *q, int32_t i, int32_t j)
{
	return q->key[i] < q->key[j] ||
	       (q->key[i] == q->key[j] && q->node[i] < q->node[j]);
}

/* The heap index of the next entry, -1 when all were read.  At most
 * CPE_MAX_TRIES + 1 are read before the caller pops (cl_peek_pop), so
 * at most CPE_MAX_TRIES + 2 indices wait in at[]. */
static int32_t cl_peek_next(const ds_heapq *q, cl_peek *k)
{
	if (k->n == 0)
		return -1;
	int32_t b = 0;
	for (int32_t i = 1; i < k->n; i++)
		if (cl_heap_before(q, k->at[i], k->at[b]))
			b = i;
	int32_t x = k->at[b];
	k->at[b] = k->at[--k->n];
	for (int32_t y = 2 * x + 1; y <= 2 * x + 2 && y < q->n; y++) {
		DS_ASSERT(k->n < (int32_t)(sizeof k->at / sizeof *k->at));
		k->at[k->n++] = y;
	}
	return x;
}

/* The reading turns into taking: the first m entries read leave the heap
 * (in the order read, as pops give them); later entries are popped. */
static void cl_peek_pop(ds_heapq *q, int32_t m, bool *peek)
{
	for (int32_t i = 0; i < m; i++)
		ds_heapq_pop(q);
	*peek = false;
}

/* Pipe p's candidates that got ready by time t go from the waiting heap
 * (by time) to the ready heap (by rank). */
static void cl_promote(cpe *c, int32_t p, int64_t t)
{
	ds_heapq *w = &c->waiting[p], *r = &c->ready[p];
	while (w->n > 0 && w->key[0] <= t) {
		int32_t v = ds_heapq_pop(w);
		ds_heapq_push(r, c->rank[v], v);
	}
}

/* What one decision on a pipe found: g, the frontier operation, and
 * whether it was tried; v, the candidate to issue, its parked ALLOCs in
 * c->tmp[0..k); or drop, a SPILL_OUT to drop (-1: none). */
typedef struct cl_pick {
	int32_t g, v, k, drop;
	bool tried_g;
} cl_pick;

/* The next candidate of ready heap r, read in place while peeking, else
 * popped; -1 when there is none. */
static int32_t cl_next_ready(ds_heapq *r, cl_peek *rd, bool peek)
{
	if (peek) {
		int32_t i = cl_peek_next(r, rd);
		return i < 0 ? -1 : r->node[i];
	}
	return r->n > 0 ? ds_heapq_pop(r) : -1;
}

/* Candidate u at time t: issued already (nothing to do), a SPILL_OUT to
 * drop (pk->drop), one that can be issued (pk->v, its parked ALLOCs in
 * c->tmp[0..pk->k)), or else *refused. */
static int cl_judge(cpe *c, int32_t u, int64_t t, cl_pick *pk, bool *refused)
{
	*refused = false;
	if (c->state[u] == S_ISSUED)
		return DS_OK; /* issued as the frontier operation */
	if (c->kind[u] == K_SOUT && c->elide && cm_can_elide(c, u)) {
		/* memory freed up since it got ready: drop it */
		pk->drop = u;
		return DS_OK;
	}
	pk->tried_g |= u == pk->g;
	int32_t k;
	bool ok; /* both set by cl_try_candidate */
	int rc = cl_try_candidate(c, u, t, &k, &ok);
	if (rc)
		return rc;
	pk->k = k;
	if (ok)
		pk->v = u;
	*refused = !ok;
	return DS_OK;
}

/* The candidates of ready heap r, best first, until one can be dropped
 * or issued at time t, or CPE_MAX_TRIES were refused.  Candidates that
 * are refused wait for a later decision: they stay in the heap, read
 * there (cl_peek), unless an entry must leave it, when those read so far
 * are popped and pushed back as refused. */
static int cl_scan_ready(cpe *c, ds_heapq *r, int64_t t, cl_pick *pk)
{
	int32_t nrej = 0, u;
	bool peek = true, refused;
	cl_peek rd = {.at = {0}, .n = r->n > 0};
	while (nrej < CPE_MAX_TRIES && (u = cl_next_ready(r, &rd, peek)) >= 0) {
		int rc = cl_judge(c, u, t, pk, &refused);
		if (rc)
			return rc;
		if (refused) {
			c->stack[nrej++] = u;
			continue;
		}
		if (peek) /* it leaves: the refused before it too */
			cl_peek_pop(r, nrej + 1, &peek);
		if (pk->v >= 0 || pk->drop >= 0)
			break;
	}
	for (int32_t i = 0; i < nrej && !peek; i++)
		ds_heapq_push(r, c->rank[c->stack[i]], c->stack[i]);
	return DS_OK;
}

/* No candidate read can go: the frontier operation, when it is pipe p's,
 * ready by time t and was not read, is tried too. */
static int cl_try_frontier(cpe *c, int32_t p, int64_t t, cl_pick *pk)
{
	int32_t g = pk->g;
	if (pk->tried_g || g < 0 || c->pipe[g] != p ||
	    c->state[g] != S_QUEUED || c->avail[g] > t)
		return DS_OK;
	/* it stays in a heap: skipped there once issued */
	int32_t k;
	bool ok;
	int rc = cl_try_candidate(c, g, t, &k, &ok);
	pk->k = k;
	if (rc == DS_OK && ok)
		pk->v = g;
	return rc;
}

/* Issues candidate v on pipe p at time t, after its parked ALLOCs
 * (c->tmp[0..k)); then the FREEs that got ready. */
static int cl_issue_picked(cpe *c, int32_t p, int64_t t, int32_t v, int32_t k)
{
	for (int32_t i = 0; i < k; i++) {
		int32_t a = c->tmp[i];
		/* online, an ALLOC waits for its window to be vacated */
		if (c->online && c->avail[a] < c->vacated[a])
			c->avail[a] = c->vacated[a];
		cl_issue(c, a, c->avail[a]);
	}
	DS_ASSERT(c->avail[v] <= t);
	cl_issue(c, v, t);
	c->pfree[p] = c->fin[v];
	return cl_drain_frees(c);
}

/* Drops SPILL_OUT v (it costs nothing, its buffer stays where it is);
 * then the FREEs that got ready. */
static int cl_drop(cpe *c, int32_t v)
{
	c->elided[(v - c->n) / 2] = 1;
	cl_issue(c, v, c->avail[v]);
	return cl_drain_frees(c);
}

/* Gang mode: of the committed operations of pipe p ready by time t, the
 * first in backbone order that can be issued (*v, its parked ALLOCs in
 * tmp[0..*k)), or *v -1; the issued ones leave the list. */
static int cl_try_committed(cpe *c, int32_t p, int64_t t, int32_t *v,
			    int32_t *k)
{
	int32_t n = 0, best = -1;
	for (int32_t i = 0; i < c->ncommit; i++) {
		int32_t a = c->commit[i];
		if (c->state[a] == S_ISSUED)
			continue;
		c->commit[n++] = a;
		if (c->pipe[a] == p && c->state[a] == S_QUEUED &&
		    c->avail[a] <= t && (best < 0 || c->pos[a] < c->pos[best]))
			best = a;
	}
	c->ncommit = n;
	*v = -1;
	if (best < 0)
		return DS_OK;
	bool ok, gang = c->gang;
	c->gang = false; /* its gang is placed: no other */
	int rc = cl_try_candidate(c, best, t, k, &ok);
	c->gang = gang;
	if (rc == DS_OK && ok)
		*v = best;
	return rc;
}

/* Tries to issue the best candidate of idle pipe p at time t (*done when
 * something was issued): the ready candidates in rank order, else the
 * frontier operation. */
static int cl_issue_on_pipe(cpe *c, int32_t p, int64_t t, bool *done)
{
	int rc;
	cl_promote(c, p, t);
	if (c->ncommit > 0) {
		int32_t v, k;
		if ((rc = cl_try_committed(c, p, t, &v, &k)))
			return rc;
		if (v >= 0) {
			*done = true;
			return cl_issue_picked(c, p, t, v, k);
		}
	}
	cl_pick pk = {.g = cl_frontier_op(c), .v = -1, .k = 0, .drop = -1};
	if ((rc = cl_scan_ready(c, &c->ready[p], t, &pk)))
		return rc;
	if (pk.drop >= 0) {
		*done = true;
		return cl_drop(c, pk.drop);
	}
	if (pk.v < 0 && (rc = cl_try_frontier(c, p, t, &pk)))
		return rc;
	*done = pk.v >= 0;
	if (pk.v < 0)
		return DS_OK;
	return cl_issue_picked(c, p, t, pk.v, pk.k);
}

/* The working state of a forward simulation, back to its start. */
static void cl_reset(cpe *c)
{
	for (int32_t v = 0; v < c->total; v++) {
		c->state[v] = S_WAIT;
		c->npend[v] = c->p_off[v + 1] - c->p_off[v];
		c->nparked[v] = 0;
		c->avail[v] = 0;
		c->mark[v] = 0;
		c->blocker[v] = -1;
		c->alt_ver[v] = -1;
		c->committed[v] = 0;
	}
	c->ncommit = 0;
	c->stamp = 0;
	for (int32_t p = 0; p < c->npipes; p++) {
		c->waiting[p].n = 0;
		c->ready[p].n = 0;
		c->pfree[p] = 0;
	}
	if (c->guard_on)
		st_build(&c->guard, c->prof);
	for (int m = 0; m < DS_NMEM; m++) {
		ds_segmap_reset(&c->sm[m]);
		c->mver[m] = 0;
		c->mlast[m] = 0;
	}
	for (int32_t j = 0; j < c->mo_off[DS_NMEM]; j++)
		c->skip[j] = j;
#ifndef NDEBUG
	c->skip_calls = 0;
	c->fen_calls = 0;
#endif
	memset(c->bo_started, 0, (size_t)c->nbo);
	memset(c->bo_fen, 0, (size_t)(c->mo_off[DS_NMEM] + 1) * sizeof *c->bo_fen);
	if (c->nspill > 0)
		memset(c->elided, 0, (size_t)c->nspill);
	c->nocc = 0;
	c->front = 0;
	c->gfront = 0;
	c->nout = 0;
	c->frees.n = 0;
	c->stuck = false;
}

/* The forward simulation's next event after t: a pipe gets free (memory
 * may be vacated then too), or a candidate gets ready; INT64_MAX when
 * there is none. */
static int64_t cl_next_event(const cpe *c, int64_t t)
{
	int64_t next = INT64_MAX;
	for (int32_t p = 0; p < c->npipes; p++) {
		if (c->pfree[p] > t && c->pfree[p] < next)
			next = c->pfree[p];
		if (c->waiting[p].n > 0 && c->waiting[p].key[0] > t &&
		    c->waiting[p].key[0] < next)
			next = c->waiting[p].key[0];
	}
	return next;
}

/* Non-delay list scheduling of the whole plan over the backbone's
 * constraint graph: c->out gets the order, c->start and c->fin the times
 * (the replay's, or later ones), online also c->off and c->soff.  *ok is
 * false if the simulation gets stuck, which the rules above rule out but
 * in gang mode. */
int cl_simulate(cpe *c, bool *ok)
{
	const int32_t T = c->total;
	int rc;
	cl_reset(c);
	for (int32_t i = 0; i < T; i++)
		if (c->npend[c->bb[i]] == 0)
			cl_touch(c, c->bb[i]);
	if ((rc = cl_drain_frees(c)))
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
				    (rc = cl_issue_on_pipe(c, p, t, &done)))
					return rc;
				progress |= done;
			}
		}
		if (c->nout == T || c->stuck)
			break;
		t = cl_next_event(c, t);
		if (t == INT64_MAX)
			c->stuck = true; /* gang mode only; refused */
	}
	*ok = !c->stuck;
	return DS_OK;
}

/* Backward: v is placed, its reversed finish time in c->start; its
 * predecessors learn when they may start and are released when v was
 * their last successor. */
static void cl_back_release(cpe *c, int32_t v)
{
	for (int32_t j = c->p_off[v]; j < c->p_off[v + 1]; j++) {
		int32_t u = c->p_adj[j];
		if (c->p_typ[j] != E_ORDER && c->avail[u] < c->start[v])
			c->avail[u] = c->start[v];
		if (--c->npend[u] == 0)
			c->fstack[c->nfree++] = u;
	}
}

/* Backward: the next event after t, a pipe that gets free with work
 * waiting or ready. */
static int64_t cl_back_next_event(const cpe *c, int64_t t)
{
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
	return next;
}

/* Backward: ranks from the forward finish times, every node pending on
 * its successors, the sinks released in backbone order. */
static void cl_back_reset(cpe *c)
{
	const int32_t T = c->total;
	for (int32_t v = 0; v < T; v++)
		c->key[v] = -c->fin[v];
	cl_set_rank(c, c->key);
	for (int32_t v = 0; v < T; v++) {
		c->npend[v] = c->s_off[v + 1] - c->s_off[v];
		c->avail[v] = 0;
	}
	for (int32_t p = 0; p < c->npipes; p++) {
		c->waiting[p].n = 0;
		c->ready[p].n = 0;
		c->pfree[p] = 0;
	}
	c->nfree = 0;
	for (int32_t i = T - 1; i >= 0; i--)
		if (c->npend[c->bb[i]] == 0)
			c->fstack[c->nfree++] = c->bb[i];
}

/* The same list scheduling on the reversed constraint graph, priority to
 * the nodes that finish last in the forward times c->fin: a right-justified
 * schedule.  c->key gets each node's start in it, counted back from its
 * end: the latest start that keeps the reversed schedule's length, the
 * priority of the next forward pass (resource-aware, unlike the bottom
 * level).  No guard here: these are only priorities.  Clobbers the
 * forward times. */
void cl_simulate_back(cpe *c)
{
	const int32_t T = c->total;
	cl_back_reset(c);
	int32_t done = 0;
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
			cl_back_release(c, v);
		}
		bool progress = false;
		for (int32_t p = 0; p < c->npipes; p++) {
			if (c->pfree[p] > t)
				continue;
			ds_heapq *r = &c->ready[p];
			cl_promote(c, p, t);
			if (r->n == 0)
				continue;
			int32_t v = ds_heapq_pop(r);
			c->start[v] = t + c->cyc[v];
			c->pfree[p] = c->start[v];
			if (c->start[v] > end)
				end = c->start[v];
			done++;
			progress = true;
			cl_back_release(c, v);
		}
		if (progress || c->nfree > 0)
			continue;
		if (done == T)
			break;
		t = cl_back_next_event(c, t);
	}
	for (int32_t v = 0; v < T; v++)
		c->key[v] = end - c->start[v];
}

/* Priorities anchored on the busiest pipe: its operations keep their
 * forward start times, every other node gets the latest time that still
 * feeds its earliest busiest-pipe successor (successor's key minus its own
 * cycles), or its own start when it feeds none.  Loads then come in the
 * order the bottleneck consumes them.  Needs the forward times. */
int cl_need_keys(cpe *c)
{
	int rc = c->online ? cm_built_reuse(c) : DS_OK;
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
