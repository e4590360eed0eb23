/* ds_dlr.c: stage 2, deterministic linear repacking (DLR).
 *
 * Requires: a valid graph and a topological order of its n nodes (stage 1's;
 * any topological order will do, it only guides; checked: DS_EINPUT).
 * Guarantees: a plan that ds_replay accepts under g->caps (the order with
 * spill nodes inserted, one offset per buffer, the spills with their new
 * offsets), or DS_EINPUT when some operation's buffers cannot fit together
 * in a memory at all (ds_check_fits).  The plan is a pure function of the
 * graph and the input order; node Ids only break exact ties.
 *
 * Placement and spilling are ds_place's: best fit, so a buffer coming back
 * with SPILL_IN may land at a new offset (that is how the layout repacks);
 * when nothing fits, the victims are the resident buffers over one
 * contiguous window, scored by their traffic (size when a COPY_IN backs
 * them, twice the size otherwise) against the distance to their next use.
 *
 * The order matters as much as the layout, so several orders are placed and
 * measured with ds_replay, and the least (extra_ddr, spills) wins (ties: the
 * earlier candidate):
 *
 *  - stage 1's order as given;
 *  - the same with lazy ALLOCs and eager FREEs ("JIT"), and with operations
 *    that only stage data for one consumer moved next to it ("pull");
 *  - the chain order: accumulators (a buffer updated by a sequence of
 *    operations) are the long-lived work; a step-level simulation picks
 *    which run side by side and which follows which so that the data they
 *    read is reused before it leaves; and the same simulation taken the
 *    other way at its turns (order_turns): where a group of chains ends
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
 * resident buffers of a memory; each replay O(N + E). */
#include "ds_stage.h"

#include <string.h>

/* A CSR list per node or buffer. */
typedef struct csr {
	int32_t *off, *v;
} csr;

/* Sorts each list of c by pos of its entries (insertion sort: the lists
 * are short, and it is stable). */
static void sort_lists(const int32_t *pos, csr *c, int32_t n)
{
	for (int32_t v = 0; v < n; v++) {
		int32_t *a = c->v + c->off[v];
		int32_t len = c->off[v + 1] - c->off[v];
		for (int32_t i = 1; i < len; i++) {
			int32_t x = a[i], j = i;
			while (j > 0 && pos[a[j - 1]] > pos[x]) {
				a[j] = a[j - 1];
				j--;
			}
			a[j] = x;
		}
	}
}

/* ---- orders that follow stage 1 ----
 *
 * Stage 1's order with every ALLOC moved to just before its buffer's first
 * user and every FREE to just after its last (JIT), and a "pull" version
 * where an operation whose only purpose is to stage data for one consumer
 * (each buffer it writes has exactly one more user) runs right before that
 * consumer: a load and a move sit next to the operation that needs them
 * instead of where stage 1 put them.  Both are a topological sort by key,
 * O((N + E) log N). */

typedef struct porder {
	const ds_graph *g;
	int32_t *cnt;
	uint8_t *done;
	int32_t *key;
	const int32_t *pos1;
	ds_heapq q;
	int32_t *out;
	int32_t len;
} porder;

static void po_release(porder *p, int32_t w);

/* As in the scheduler: an ALLOC passes readiness on when its own
 * dependencies are met; operations go into the queue. */
static void po_ready(porder *p, int32_t v)
{
	const ds_graph *g = p->g;
	if (g->kind[v] == DS_OP) {
		ds_heapq_push(&p->q, (int64_t)p->key[v] * g->n + p->pos1[v], v);
		return;
	}
	if (g->kind[v] == DS_FREE) {
		int32_t a = g->buf_alloc[g->buf[v]];
		if (!p->done[a]) {
			p->done[a] = 1;
			p->out[p->len++] = a;
		}
		p->done[v] = 1;
		p->out[p->len++] = v;
		for (int32_t k = g->succ_off[v]; k < g->succ_off[v + 1]; k++)
			po_release(p, g->succ[k]);
		return;
	}
	int32_t b = g->buf[v];
	for (int32_t k = g->succ_off[v]; k < g->succ_off[v + 1]; k++)
		po_release(p, g->succ[k]);
	for (int32_t k = g->user_off[b]; k < g->user_off[b + 1]; k++)
		po_release(p, g->user[k]);
}

static void po_release(porder *p, int32_t w)
{
	if (--p->cnt[w] == 0)
		po_ready(p, w);
}

static int order_follow(const ds_graph *g, const int32_t *order,
			const int32_t *pos1, const int32_t *base_key,
			bool pull, int32_t *out, ds_err *e)
{
	const ds_heap *h = g->heap;
	const int32_t n = g->n, nb = g->nbuf;
	porder p;
	memset(&p, 0, sizeof p);
	p.g = g;
	p.pos1 = pos1;
	p.out = out;
	p.cnt = ds_alloc(h, (size_t)n, sizeof *p.cnt);
	p.done = ds_alloc(h, (size_t)n, 1);
	p.key = ds_alloc(h, (size_t)n, sizeof *p.key);
	int32_t *writer = ds_alloc(h, (size_t)nb, sizeof *writer);
	int rc = ds_heapq_init(&p.q, h, n);
	if (!p.cnt || !p.done || !p.key || !writer || rc) {
		rc = ds_fail(e, DS_ENOMEM, "out of memory");
		goto out;
	}
	/* a buffer's writer: its first user in stage 1 order */
	for (int32_t b = 0; b < nb; b++) {
		writer[b] = -1;
		for (int32_t k = g->user_off[b]; k < g->user_off[b + 1]; k++)
			if (writer[b] < 0 || pos1[g->user[k]] < pos1[writer[b]])
				writer[b] = g->user[k];
	}
	/* keys, consumers first */
	for (int32_t i = n - 1; i >= 0; i--) {
		int32_t v = order[i], to = -1;
		bool stage = pull && g->kind[v] == DS_OP;
		p.key[v] = base_key ? base_key[v] : i;
		for (int32_t k = g->use_off[v]; stage && k < g->use_off[v + 1];
		     k++) {
			int32_t b = g->use[k];
			if (writer[b] != v)
				continue;
			if (g->user_off[b + 1] - g->user_off[b] != 2) {
				stage = false;
				break;
			}
			int32_t w = g->user[g->user_off[b]] == v
					    ? g->user[g->user_off[b] + 1]
					    : g->user[g->user_off[b]];
			if (to < 0 || p.key[w] < p.key[to])
				to = w;
		}
		if (stage && to >= 0 && p.key[to] > p.key[v])
			p.key[v] = p.key[to];
	}
	for (int32_t b = 0; b < nb; b++)
		p.cnt[g->buf_free[b]] += g->user_off[b + 1] - g->user_off[b];
	for (int32_t v = 0; v < n; v++) {
		p.cnt[v] += g->pred_off[v + 1] - g->pred_off[v];
		if (g->kind[v] == DS_OP)
			p.cnt[v] += g->use_off[v + 1] - g->use_off[v];
	}
	/* nodes without dependencies (ALLOCs, mostly); key[] is free to
	 * mark them before any readiness is passed on */
	for (int32_t v = 0; v < n; v++)
		if (p.cnt[v] == 0)
			p.done[v] = 2;
	for (int32_t v = 0; v < n; v++)
		if (p.done[v] == 2) {
			p.done[v] = 0;
			po_ready(&p, v);
		}
	while (p.q.n > 0) {
		int32_t v = ds_heapq_pop(&p.q);
		for (int32_t k = g->pred_off[v]; k < g->pred_off[v + 1]; k++) {
			int32_t a = g->pred[k];
			if (g->kind[a] == DS_ALLOC && !p.done[a]) {
				p.done[a] = 1;
				out[p.len++] = a;
			}
		}
		for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
			int32_t a = g->buf_alloc[g->use[k]];
			if (!p.done[a]) {
				p.done[a] = 1;
				out[p.len++] = a;
			}
		}
		p.done[v] = 1;
		out[p.len++] = v;
		for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++)
			po_release(&p, g->buf_free[g->use[k]]);
		for (int32_t k = g->succ_off[v]; k < g->succ_off[v + 1]; k++)
			po_release(&p, g->succ[k]);
	}
	DS_ASSERT(p.len == n);
out:
	ds_free(h, p.cnt);
	ds_free(h, p.done);
	ds_free(h, p.key);
	ds_free(h, writer);
	ds_heapq_free(&p.q);
	return rc;
}

/* ---- chain order ----
 *
 * An accumulator is a buffer (data not from DDR) with three users or more
 * that follow each other along edges: a chain of steps, each reading data
 * that other chains read too (in Matmul a tile of A or B).  Which chains
 * run side by side, and which follows which, decides how often that data
 * must be brought back.  This simulates the chains at step granularity:
 * as many chains run at once as their memory holds, stepping in turn (so
 * two chains sharing data use it together); the inputs sit in an LRU model
 * of their memories; when a chain ends, the next is the one whose
 * remaining inputs cost least to bring in (bytes missing, plus bytes to
 * evict for them; inputs the running chains will bring count as there),
 * judged together with the best chain that could start after it when two
 * fit side by side (ch_pick), then the one reusing the most recently used
 * data, then stage 1's.  The
 * simulated order of steps is then laid over the places stage 1 gave the
 * steps, each step taking along the loads and moves that feed it, and the
 * order is rebuilt by order_follow.  The chains that may start are the
 * first CH_WINDOW (256) not started in stage 1's order.  O(C W S I) for C
 * chains of S steps with I inputs each, W = CH_WINDOW, plus
 * O((N + E) log N). */

typedef struct chsim {
	const ds_graph *g;
	const int32_t *pos1;
	int32_t nch;
	int32_t *cbuf;		/* chain -> its buffer */
	int32_t *soff, *sv;	/* chain -> its steps (users, stage 1 order) */
	int32_t *ioff, *iv;	/* step -> input buffers */
	int32_t *coff, *cv;	/* step -> operations it takes along */
	/* simulation */
	uint8_t *res;		/* per buffer: in the model */
	int64_t *last;		/* per buffer: last use tick */
	int32_t *uses;		/* per buffer: steps still reading it */
	int32_t *stamp;		/* per buffer */
	int32_t *claim;		/* per buffer: == cst, running chains read it */
	int32_t *pclaim;	/* per buffer: == pst, the partner tried reads it */
	int32_t st, cst, pst;
	int64_t used[DS_NMEM], cused[DS_NMEM];
	int64_t icap[DS_NMEM]; /* modelled capacity for the inputs */
	int32_t nin;		/* buffers in the model */
	int64_t tick;
} chsim;

/* Is b an accumulator: data made here, three users or more, each user
 * after the first a direct successor of the one before (stage 1 order)? */
static bool is_chain(const ds_graph *g, const int32_t *usr, int32_t nu,
		     int32_t b)
{
	if (g->buf_copyin[b] || nu < 3)
		return false;
	for (int32_t k = 1; k < nu; k++) {
		bool edge = false;
		for (int32_t j = g->pred_off[usr[k]]; j < g->pred_off[usr[k] + 1];
		     j++)
			edge |= g->pred[j] == usr[k - 1];
		if (!edge)
			return false;
	}
	return true;
}

/* Makes room for size bytes of memory m in the model, least recently used
 * first, never an input of the current step (stamp == st). */
static void ch_room(chsim *c, int m, int64_t size, const int32_t *res_list,
		    int32_t nres)
{
	const ds_graph *g = c->g;
	while (c->used[m] + size > c->icap[m]) {
		int32_t v = -1;
		for (int32_t i = 0; i < nres; i++) {
			int32_t x = res_list[i];
			if (!c->res[x] || g->buf_mem[x] != m || c->stamp[x] == c->st)
				continue;
			if (v < 0 || c->last[x] < c->last[v] ||
			    (c->last[x] == c->last[v] &&
			     c->pos1[g->buf_alloc[x]] < c->pos1[g->buf_alloc[v]]))
				v = x;
		}
		if (v < 0)
			return;
		c->res[v] = 0;
		c->nin--;
		c->used[m] -= g->buf_size[v];
	}
}

/* Bytes chain ch must bring in for its inputs (not in the model, not
 * claimed by the running chains (== claim) or the partner tried (pclaim ==
 * pst)), plus the bytes that would overflow their memories; *mru gets the
 * latest use among its inputs in the model. */
static int64_t ch_cost(chsim *c, int32_t ch, int32_t claim, int64_t *mru)
{
	const ds_graph *g = c->g;
	int64_t nw[DS_NMEM] = {0}, cost = 0;
	*mru = -1;
	c->st++;
	for (int32_t si = c->soff[ch]; si < c->soff[ch + 1]; si++)
		for (int32_t k = c->ioff[si]; k < c->ioff[si + 1]; k++) {
			int32_t x = c->iv[k];
			if (c->stamp[x] == c->st || c->claim[x] == claim ||
			    c->pclaim[x] == c->pst)
				continue;
			c->stamp[x] = c->st;
			if (c->res[x]) {
				if (c->last[x] > *mru)
					*mru = c->last[x];
			} else {
				nw[g->buf_mem[x]] += g->buf_size[x];
			}
		}
	for (int m = 0; m < DS_NMEM; m++) {
		int64_t over = c->used[m] + nw[m] - c->icap[m];
		cost += nw[m] + (over > 0 ? over : 0);
	}
	return cost;
}

/* The inputs of chain x count as brought in by a partner (pclaim == a new
 * pst) in the next ch_cost calls. */
static void ch_partner(chsim *c, int32_t x)
{
	c->pst++;
	for (int32_t si = c->soff[x]; si < c->soff[x + 1]; si++)
		for (int32_t k = c->ioff[si]; k < c->ioff[si + 1]; k++)
			c->pclaim[c->iv[k]] = c->pst;
}

/* Is a before b: less cost, then more recent reuse, then stage 1. */
static bool ch_before(const chsim *c, int32_t a, int64_t ca, int64_t ma,
		      int32_t b, int64_t cb, int64_t mb)
{
	if (ca != cb)
		return ca < cb;
	if (ma != mb)
		return ma > mb;
	return c->pos1[c->sv[c->soff[a]]] < c->pos1[c->sv[c->soff[b]]];
}

enum { CH_TOP = 8 };
/* The chains that may start next: the first CH_WINDOW not started in
 * stage 1's order (all of them on the bundled graphs), which keeps a
 * start O(CH_WINDOW) instead of O(C). */
enum { CH_WINDOW = 256 };

/* The chain to start among cand[0..n) with their costs: the best by
 * itself, or, when a second chain would fit beside it, the best together
 * with the best chain to follow it (the partner's inputs count as brought
 * in): chains that run side by side share what they read.  Only CH_TOP
 * leaders are tried, at most two of any one (cost, recency), since equal
 * scores mostly mean interchangeable chains. */
static int32_t ch_pick(chsim *c, int32_t *cand, int64_t *cost, int64_t *mru,
		       int32_t n, int32_t claim, const uint8_t *started)
{
	const ds_graph *g = c->g;
	if (n == 0)
		return -1;
	int32_t top[CH_TOP] = {0}, nt = 0;
	for (int32_t i = 0; i < n; i++) {
		/* insert i into top[] (sorted), keeping the variety rule */
		int32_t same = 0;
		for (int32_t j = 0; j < nt; j++)
			same += cost[top[j]] == cost[i] && mru[top[j]] == mru[i];
		if (same >= 2) {
			/* replace the worse of the two when i beats it */
			int32_t w = -1;
			for (int32_t j = 0; j < nt; j++)
				if (cost[top[j]] == cost[i] && mru[top[j]] == mru[i])
					w = j;
			if (!ch_before(c, cand[i], cost[i], mru[i], cand[top[w]],
				       cost[top[w]], mru[top[w]]))
				continue;
			memmove(top + w, top + w + 1,
				(size_t)(nt - w - 1) * sizeof *top);
			nt--;
		}
		int32_t j = nt < CH_TOP ? nt++ : CH_TOP;
		while (j > 0 && ch_before(c, cand[i], cost[i], mru[i],
					  cand[top[j - 1]], cost[top[j - 1]],
					  mru[top[j - 1]])) {
			if (j < CH_TOP)
				top[j] = top[j - 1];
			j--;
		}
		if (j < CH_TOP)
			top[j] = i;
	}
	int32_t best = top[0];
	int32_t b0 = c->cbuf[cand[best]];
	int m = g->buf_mem[b0];
	if (c->cused[m] + 2 * g->buf_size[b0] > g->caps.cap[m] || n < 2)
		return cand[best];
	int64_t best_total = -1;
	for (int32_t i = 0; i < nt; i++) {
		int32_t x = cand[top[i]];
		ch_partner(c, x);
		int64_t follow = -1;
		for (int32_t j = 0; j < n; j++) {
			int32_t y = cand[j];
			int64_t ym;
			if (y == x || started[y])
				continue;
			int64_t yc = ch_cost(c, y, claim, &ym);
			if (follow < 0 || yc < follow)
				follow = yc;
		}
		int64_t total = cost[top[i]] + (follow < 0 ? 0 : follow);
		if (best_total < 0 || total < best_total) {
			best_total = total;
			best = top[i];
		}
	}
	c->pst++;
	return cand[best];
}

/* How many of the inputs all ng chains of the last group read (cnt[x] ==
 * ng, st[x] == stamp) chain ch reads; *other: whether it reads any other
 * input of that group. */
static int32_t ch_reads(chsim *c, int32_t ch, const int32_t *cnt,
			const int32_t *st, int32_t stamp, int32_t ng,
			bool *other)
{
	int32_t common = 0;
	*other = false;
	c->st++;
	for (int32_t si = c->soff[ch]; si < c->soff[ch + 1]; si++)
		for (int32_t k = c->ioff[si]; k < c->ioff[si + 1]; k++) {
			int32_t x = c->iv[k];
			if (c->stamp[x] == c->st || st[x] != stamp)
				continue;
			c->stamp[x] = c->st;
			common += cnt[x] == ng;
			*other |= cnt[x] < ng;
		}
	return common;
}

/* A turn: the group of chains that just ended (grp[0..ng), two or more)
 * read some inputs in common, and the chain chosen next, pick, reads none
 * of the others: the group's stationary data is done with and the next
 * band starts, here across the one just run.  The way the simulation
 * turns is the locally cheapest, which can cut the remaining work into
 * ever shorter bands; the other way is to keep the common inputs: out[0],
 * out[1] get the best two candidates (cand[0..n) with their costs) that
 * read all of them, the second judged with the first's inputs counted as
 * brought in, for the caller to try.  Left as they are when this is no
 * turn.  cnt[] and st[] are per-buffer scratch, stamp a new stamp.
 * O(inputs of the group and of the candidates). */
static void ch_turn(chsim *c, const int32_t *grp, int32_t ng, int32_t *cnt,
		    int32_t *st, int32_t stamp, const int32_t *cand,
		    const int64_t *cost, const int64_t *mru, int32_t n,
		    int32_t pick, int32_t *out)
{
	int32_t ncommon = 0;
	for (int32_t i = 0; i < ng; i++) {
		c->st++;
		for (int32_t si = c->soff[grp[i]]; si < c->soff[grp[i] + 1]; si++)
			for (int32_t k = c->ioff[si]; k < c->ioff[si + 1]; k++) {
				int32_t x = c->iv[k];
				if (c->stamp[x] == c->st)
					continue;
				c->stamp[x] = c->st;
				if (st[x] != stamp) {
					st[x] = stamp;
					cnt[x] = 0;
				}
				ncommon += ++cnt[x] == ng;
			}
	}
	if (ncommon == 0)
		return;
	bool other;
	ch_reads(c, pick, cnt, st, stamp, ng, &other);
	if (other)
		return;
	int32_t lead = -1;
	for (int32_t i = 0; i < n; i++) {
		if (ch_reads(c, cand[i], cnt, st, stamp, ng, &other) ==
			    ncommon &&
		    (lead < 0 || ch_before(c, cand[i], cost[i], mru[i],
					   cand[lead], cost[lead], mru[lead])))
			lead = i;
	}
	if (lead < 0)
		return;
	int32_t x = cand[lead], y = -1;
	int64_t yc = 0, ym = 0;
	ch_partner(c, x);
	for (int32_t i = 0; i < n; i++) {
		if (cand[i] == x)
			continue;
		if (ch_reads(c, cand[i], cnt, st, stamp, ng, &other) !=
		    ncommon)
			continue;
		int64_t m, cc = ch_cost(c, cand[i], -1, &m);
		if (y < 0 || ch_before(c, cand[i], cc, m, y, yc, ym)) {
			y = cand[i];
			yc = cc;
			ym = m;
		}
	}
	c->pst++;
	if (y < 0)
		return;
	out[0] = x;
	out[1] = y;
}

/* How order_chains chooses. */
typedef struct chopts {
	double share; /* the part of each memory the simulation lets the
			 inputs use (a smaller share makes the chains keep
			 less data around, a larger one more) */
	int64_t pilot; /* > 0: the pilot chooses, within this budget */
	int64_t nest;  /* pilot: the budget to judge its own first choices
			  by whole pilots (0: none) */
	const int32_t *ref; /* pilot: the simulation's chain order */
	int64_t ref_ddr;    /* pilot: extra_ddr of its placement */
	int64_t improve;    /* the improvement's budget (work units) */
	int32_t *alt;	    /* pilot: room for two chain orders (nbuf
			       apart), the pilot's and the nested one's,
			       when the one chosen is not theirs */
	int32_t *nalt;	    /* pilot: how many it holds */
	const int32_t *force; /* simulation: this chain order (no pilot) */
	int32_t *ref_out;   /* simulation: its chain order (may be NULL) */
	const int32_t *prefix; /* simulation: these nprefix starts first, */
	int32_t nprefix;       /* then its own choices */
	int32_t *turn_out;  /* simulation: per start i at a turn, the group
			       that keeps the last group's common inputs
			       (2i, 2i + 1; else left as it is) */
} chopts;

/* ---- the reuse pilot ----
 *
 * A second way to choose the chain order, judged by what a placement would
 * really cost.  pl_eval lays the chains out (started in a given order as
 * their memory has room, stepping in turn, as order_chains does) and counts
 * the traffic of the reloads under furthest-next-use eviction, the rule the
 * placer follows; on graphs whose traffic is the chains' inputs it gives
 * the placement's figure to a reload or two.  rg_run is a fast greedy over
 * the same layout: it starts the chain with the fewest bytes neither
 * resident nor brought by the running chains, then the one whose loads
 * complete the most other chains (data just loaded is used by all that
 * need only it), then recency, then stage 1; its model evicts dead data
 * first, then the data whose waiting chains are furthest from complete,
 * then what the running chains read.
 *
 * The pilot builds the order start by start: it tries the greedy's best
 * unlike choices (PL_K at most), completes each with the greedy, evaluates
 * the complete orders exactly and keeps the choice whose completion costs
 * least.  That sees what no rule of thumb does, for instance whether a
 * taller band of work around stationary inputs pays for itself later.  It
 * runs once per way of breaking the greedy's last ties (PL_VARIANTS), the
 * cheapest order winning; then a nested pilot judges the first choices of
 * that order by whole pilots, within a budget of its own (a choice that
 * pays only with later choices shows there).  It is used only where the
 * simulation's order, placed, costs what the model says (the chains
 * describe the traffic), and stops when its greedy starts well behind
 * that order.
 *
 * Cost: a greedy run is O(C (C I + T I U) + A (U + R)) for C chains with
 * I distinct inputs, T = PL_TOP ranked candidates, U chains per input, A
 * accesses and R resident inputs; an evaluation O(A R), less when cut
 * short at a bound; the pilot makes up to PL_K runs per start, the nested
 * one a pilot per choice, each within a budget of work units that effort
 * scales, after which the best order met so far stands. */

enum { PL_K = 3, PL_TOP = 16, PL_SLOTS = 4, PL_VARIANTS = 4 };

typedef struct pilot {
	chsim *c;
	int32_t *cioff, *civ;	/* chain -> its distinct inputs */
	int32_t *siv;		/* step inputs, each step's in the order of
				   the operations reading them (stage 1) */
	int32_t *uoff, *uv;	/* buffer -> chains reading it */
	int32_t *first;		/* chain -> stage 1 place of its first step */
	int64_t reserve[DS_NMEM]; /* chain buffers' peak bytes per memory */
	/* layout and evaluation */
	int32_t *steps;	/* steps in execution order */
	int32_t *acc, *accs, *nxt; /* accesses: buffer, step serial, next */
	int32_t *nu;	/* per buffer: next use (access index) */
	int32_t *stamp; /* per buffer */
	int32_t st;
	uint8_t *res, *seen;
	int32_t *rl[DS_NMEM], nrl[DS_NMEM]; /* resident buffers */
	int32_t *live, *lnext;
	int32_t *rpos;	/* per buffer: its place in rl[] */
	int32_t *ins, nins; /* the distinct inputs */
	/* the greedy */
	int64_t *miss;	/* per chain: input bytes neither resident nor claimed */
	uint8_t *started;
	int32_t *claim; /* per buffer: reads left by running chains */
	int32_t *left;	/* per buffer: chains not started reading it */
	int64_t *last;	/* per buffer: last use tick */
	int64_t *red;	/* per chain: scratch for the completion count */
	int32_t *redst, *touch, redstamp;
	int32_t *cand;
	int64_t *cmru, *cben;
	int64_t used[DS_NMEM], cused[DS_NMEM], tick, work;
	int variant; /* the greedy's last tie-breaks: bit 0, stage 1 order
			backwards; bit 1, least recent reuse first */
	/* slots of a complete order with its ranked choices at each start */
	int32_t *ord[PL_SLOTS], *rk[PL_SLOTS], *nrk[PL_SLOTS];
	int32_t *pre, *pre2; /* prefixes being tried, per level */
} pilot;

static int64_t pl_cap(const pilot *p, int m)
{
	int64_t cap = p->c->g->caps.cap[m] - p->reserve[m];
	return cap > 0 ? cap : 0;
}

/* The steps of the chains started in order[], as many at once as their
 * memory holds, stepping in turn; returns the number of steps. */
static int32_t pl_layout(pilot *p, const int32_t *order)
{
	chsim *c = p->c;
	const ds_graph *g = c->g;
	int32_t nlive = 0, ns = 0, k = 0, done = 0;
	int64_t cused[DS_NMEM] = {0};
	while (done < c->nch) {
		while (k < c->nch) {
			int32_t ch = order[k], b = c->cbuf[ch];
			int m = g->buf_mem[b];
			int64_t size = g->buf_size[b];
			if (nlive > 0 && cused[m] + size > g->caps.cap[m])
				break;
			cused[m] += size;
			p->live[nlive] = ch;
			p->lnext[nlive++] = c->soff[ch];
			k++;
		}
		for (int32_t l = 0; l < nlive; l++)
			p->steps[ns++] = p->lnext[l]++;
		for (int32_t l = 0; l < nlive;) {
			int32_t ch = p->live[l];
			if (p->lnext[l] < c->soff[ch + 1]) {
				l++;
				continue;
			}
			int32_t b = c->cbuf[ch];
			cused[g->buf_mem[b]] -= g->buf_size[b];
			done++;
			memmove(p->live + l, p->live + l + 1,
				(size_t)(nlive - l - 1) * sizeof *p->live);
			memmove(p->lnext + l, p->lnext + l + 1,
				(size_t)(nlive - l - 1) * sizeof *p->lnext);
			nlive--;
		}
	}
	return ns;
}

/* Removes b from the evaluation's resident list of m. */
static void pl_drop(pilot *p, int m, int32_t b)
{
	for (int32_t i = 0; i < p->nrl[m]; i++)
		if (p->rl[m][i] == b) {
			p->rl[m][i] = p->rl[m][--p->nrl[m]];
			break;
		}
	p->res[b] = 0;
}

/* Removes b from the evaluation's resident list of m, in O(1). */
static void pl_out(pilot *p, int m, int32_t b)
{
	int32_t i = p->rpos[b], last = p->rl[m][--p->nrl[m]];
	DS_ASSERT(p->rl[m][i] == b);
	p->rl[m][i] = last;
	p->rpos[last] = i;
	p->res[b] = 0;
	p->used[m] -= p->c->g->buf_size[b];
}

/* Traffic of the reloads when the chains start in order[]: every input
 * read again after leaving costs its traffic; the victims are the
 * resident inputs used furthest ahead (data used no more goes at once;
 * next uses are access indices, so no two resident inputs tie).  Stops
 * once the cost reaches bound (the traffic only grows), returning what
 * it has. */
static int64_t pl_eval(pilot *p, const int32_t *order, int64_t bound)
{
	chsim *c = p->c;
	const ds_graph *g = c->g;
	int32_t ns = pl_layout(p, order), na = 0;
	for (int32_t s = 0; s < ns; s++)
		for (int32_t k = c->ioff[p->steps[s]];
		     k < c->ioff[p->steps[s] + 1]; k++) {
			p->acc[na] = p->siv[k];
			p->accs[na++] = s;
		}
	for (int32_t i = 0; i < p->nins; i++) {
		int32_t b = p->ins[i];
		p->nu[b] = INT32_MAX;
		p->res[b] = p->seen[b] = 0;
	}
	for (int32_t i = na - 1; i >= 0; i--) {
		p->nxt[i] = p->nu[p->acc[i]];
		p->nu[p->acc[i]] = i;
	}
	for (int m = 0; m < DS_NMEM; m++) {
		p->nrl[m] = 0;
		p->used[m] = 0;
	}
	int64_t cost = 0;
	p->work += na;
	for (int32_t i = 0; i < na; i++) {
		int32_t x = p->acc[i];
		int m = g->buf_mem[x];
		int32_t *rl = p->rl[m];
		if (i == 0 || p->accs[i] != p->accs[i - 1]) {
			p->st++;
			for (int32_t j = i; j < na && p->accs[j] == p->accs[i];
			     j++)
				p->stamp[p->acc[j]] = p->st;
		}
		if (!p->res[x]) {
			if (p->seen[x])
				cost += ds_spill_traffic(g, x);
			if (cost >= bound)
				return cost;
			p->seen[x] = 1;
			while (p->used[m] + g->buf_size[x] > pl_cap(p, m)) {
				int32_t v = -1;
				for (int32_t j = 0; j < p->nrl[m]; j++) {
					int32_t y = rl[j];
					if (p->stamp[y] != p->st &&
					    (v < 0 || p->nu[y] > p->nu[v]))
						v = y;
				}
				p->work += p->nrl[m];
				if (v < 0)
					break;
				pl_out(p, m, v);
			}
			p->res[x] = 1;
			p->rpos[x] = p->nrl[m];
			rl[p->nrl[m]++] = x;
			p->used[m] += g->buf_size[x];
		}
		p->nu[x] = p->nxt[i];
		if (p->nu[x] == INT32_MAX)
			pl_out(p, m, x);
	}
	return cost;
}

/* ---- the greedy ---- */

static bool rg_have(const pilot *p, int32_t x)
{
	return p->res[x] || p->claim[x] > 0;
}

/* x became present or absent: the chains reading it miss it or not. */
static void rg_flip(pilot *p, int32_t x, bool before)
{
	bool now = rg_have(p, x);
	if (now == before)
		return;
	int64_t d = now ? -p->c->g->buf_size[x] : p->c->g->buf_size[x];
	for (int32_t k = p->uoff[x]; k < p->uoff[x + 1]; k++)
		p->miss[p->uv[k]] += d;
	p->work += p->uoff[x + 1] - p->uoff[x];
}

static void rg_unres(pilot *p, int32_t x)
{
	bool before = rg_have(p, x);
	int m = p->c->g->buf_mem[x];
	pl_drop(p, m, x);
	p->used[m] -= p->c->g->buf_size[x];
	rg_flip(p, x, before);
}

/* Eviction order, larger first: data nobody waits for, then data whose
 * waiting chains miss the most, then least recently used; what the
 * running chains still read goes last. */
static void rg_key(pilot *p, int32_t x, int *cat, int64_t *pr)
{
	if (p->claim[x] > 0) {
		*cat = 0;
		*pr = 0;
		return;
	}
	*cat = 1;
	*pr = INT64_MAX;
	for (int32_t k = p->uoff[x]; k < p->uoff[x + 1]; k++) {
		int32_t u = p->uv[k];
		if (!p->started[u] && p->miss[u] < *pr)
			*pr = p->miss[u];
	}
	p->work += p->uoff[x + 1] - p->uoff[x];
	if (*pr == INT64_MAX)
		*cat = 2;
}

static void rg_room(pilot *p, int m, int64_t size)
{
	int64_t cap = p->c->g->caps.cap[m] - p->cused[m];
	while (p->used[m] + size > cap) {
		int32_t v = -1, vc = 0;
		int64_t vp = 0;
		for (int32_t j = 0; j < p->nrl[m]; j++) {
			int32_t y = p->rl[m][j];
			int cat;
			int64_t pr;
			if (p->stamp[y] == p->st)
				continue;
			rg_key(p, y, &cat, &pr);
			if (v < 0 || cat > vc || (cat == vc && pr > vp) ||
			    (cat == vc && pr == vp && p->last[y] < p->last[v])) {
				v = y;
				vc = cat;
				vp = pr;
			}
		}
		if (v < 0)
			return;
		rg_unres(p, v);
	}
}

/* Is a before b as the chain to start: fewer missing bytes, more chains
 * completed by its loads, more recent reuse, stage 1. */
static bool rg_before(const pilot *p, int32_t a, int64_t ba, int64_t ma,
		      int32_t b, int64_t bb, int64_t mb)
{
	if (p->miss[a] != p->miss[b])
		return p->miss[a] < p->miss[b];
	if (ba != bb)
		return ba > bb;
	if (ma != mb)
		return (p->variant & 2) ? ma < mb : ma > mb;
	return (p->variant & 1) ? p->first[a] > p->first[b]
				: p->first[a] < p->first[b];
}

/* Chains that nothing but ch's missing inputs keep from complete. */
static int64_t rg_completes(pilot *p, int32_t ch)
{
	const ds_graph *g = p->c->g;
	int32_t nt = 0;
	int64_t n = 0;
	p->redstamp++;
	for (int32_t k = p->cioff[ch]; k < p->cioff[ch + 1]; k++) {
		int32_t x = p->civ[k];
		if (rg_have(p, x))
			continue;
		for (int32_t j = p->uoff[x]; j < p->uoff[x + 1]; j++) {
			int32_t u = p->uv[j];
			if (u == ch || p->started[u])
				continue;
			if (p->redst[u] != p->redstamp) {
				p->redst[u] = p->redstamp;
				p->red[u] = 0;
				p->touch[nt++] = u;
			}
			p->red[u] += g->buf_size[x];
		}
		p->work += p->uoff[x + 1] - p->uoff[x];
	}
	for (int32_t i = 0; i < nt; i++)
		n += p->miss[p->touch[i]] == p->red[p->touch[i]];
	return n;
}

/* Ranks the chains that may start now into cand[0..*n), best first (the
 * PL_TOP best by missing bytes and reuse fully ranked). */
static void rg_rank(pilot *p, int32_t *n)
{
	chsim *c = p->c;
	const ds_graph *g = c->g;
	int32_t nc = 0;
	for (int32_t ch = 0; ch < c->nch; ch++) {
		int32_t b = c->cbuf[ch];
		int m = g->buf_mem[b];
		if (p->started[ch] ||
		    p->cused[m] + g->buf_size[b] > g->caps.cap[m])
			continue;
		int64_t mru = -1;
		for (int32_t k = p->cioff[ch]; k < p->cioff[ch + 1]; k++)
			if (p->res[p->civ[k]] && p->last[p->civ[k]] > mru)
				mru = p->last[p->civ[k]];
		p->work += p->cioff[ch + 1] - p->cioff[ch];
		p->cmru[ch] = mru;
		p->cben[ch] = 0;
		/* insertion into the sorted top, the rest appended */
		int32_t j = nc++;
		int32_t lim = j < PL_TOP ? j : PL_TOP;
		p->cand[j] = ch;
		if (j >= PL_TOP) {
			if (!rg_before(p, ch, 0, mru, p->cand[PL_TOP - 1], 0,
				       p->cmru[p->cand[PL_TOP - 1]]))
				continue;
			p->cand[j] = p->cand[PL_TOP - 1];
			lim = PL_TOP - 1;
		}
		while (lim > 0 && rg_before(p, ch, 0, mru, p->cand[lim - 1], 0,
					    p->cmru[p->cand[lim - 1]])) {
			p->cand[lim] = p->cand[lim - 1];
			lim--;
		}
		p->cand[lim] = ch;
	}
	int32_t top = nc < PL_TOP ? nc : PL_TOP;
	for (int32_t i = 0; i < top; i++)
		p->cben[p->cand[i]] = rg_completes(p, p->cand[i]);
	for (int32_t i = 1; i < top; i++) {
		int32_t x = p->cand[i], j = i;
		while (j > 0 && rg_before(p, x, p->cben[x], p->cmru[x],
					  p->cand[j - 1], p->cben[p->cand[j - 1]],
					  p->cmru[p->cand[j - 1]])) {
			p->cand[j] = p->cand[j - 1];
			j--;
		}
		p->cand[j] = x;
	}
	*n = nc;
}

/* The choices the pilot tries among the ranked cand[0..nc): the best of
 * each (missing bytes, completions) in rank order, PL_K at most; chains
 * alike in both are mostly interchangeable, and the choice that matters
 * is between unlike ones (complete what is loaded, or load more). */
static void rg_choices(pilot *p, int32_t nc, int32_t *r, int32_t *nr)
{
	int32_t n = 0;
	for (int32_t i = 0; i < nc && n < PL_K; i++) {
		int32_t x = p->cand[i];
		bool dup = false;
		for (int32_t j = 0; j < n && !dup; j++)
			dup = p->miss[r[j]] == p->miss[x] &&
			      p->cben[r[j]] == p->cben[x];
		if (!dup)
			r[n++] = x;
	}
	*nr = n;
}

/* One greedy run: the chains of forced[0..nf) first, in that order, then
 * the greedy's choices; out[] gets the start order, and for each start i
 * not forced, rank[i * PL_K ..] the best nrank[i] choices there. */
static void rg_run(pilot *p, const int32_t *forced, int32_t nf,
		   int32_t rank_from, int32_t *out, int32_t *rank,
		   int32_t *nrank)
{
	chsim *c = p->c;
	const ds_graph *g = c->g;
	int32_t nout = 0, nlive = 0, done = 0;
	for (int32_t ch = 0; ch < c->nch; ch++) {
		p->started[ch] = 0;
		p->miss[ch] = 0;
		for (int32_t k = p->cioff[ch]; k < p->cioff[ch + 1]; k++)
			p->miss[ch] += g->buf_size[p->civ[k]];
	}
	for (int32_t b = 0; b < g->nbuf; b++) {
		p->res[b] = 0;
		p->claim[b] = 0;
		p->left[b] = p->uoff[b + 1] - p->uoff[b];
		p->last[b] = 0;
	}
	for (int m = 0; m < DS_NMEM; m++) {
		p->nrl[m] = 0;
		p->used[m] = p->cused[m] = 0;
	}
	p->tick = 0;
	while (done < c->nch) {
		for (;;) {
			int32_t ch;
			if (nout >= c->nch)
				break;
			if (nout < nf) {
				ch = forced[nout];
				int32_t b = c->cbuf[ch];
				int m = g->buf_mem[b];
				if (nlive > 0 && p->cused[m] + g->buf_size[b] >
							 g->caps.cap[m])
					break;
				if (nout >= rank_from) {
					int32_t nc;
					rg_rank(p, &nc);
					rg_choices(p, nc,
						   rank + (size_t)nout * PL_K,
						   &nrank[nout]);
				}
			} else {
				int32_t nc;
				rg_rank(p, &nc);
				if (nc == 0 && nlive > 0)
					break;
				if (nc == 0) {
					/* nothing fits beside nothing: cannot
					 * happen (ds_check_fits); stay total */
					for (ch = 0; p->started[ch]; ch++)
						;
				} else {
					ch = p->cand[0];
				}
				rg_choices(p, nc, rank + (size_t)nout * PL_K,
					   &nrank[nout]);
			}
			p->started[ch] = 1;
			out[nout++] = ch;
			p->live[nlive] = ch;
			p->lnext[nlive++] = c->soff[ch];
			p->cused[g->buf_mem[c->cbuf[ch]]] +=
				g->buf_size[c->cbuf[ch]];
			for (int32_t k = p->cioff[ch]; k < p->cioff[ch + 1]; k++)
				p->left[p->civ[k]]--;
			for (int32_t si = c->soff[ch]; si < c->soff[ch + 1]; si++)
				for (int32_t k = c->ioff[si]; k < c->ioff[si + 1];
				     k++) {
					int32_t x = c->iv[k];
					bool before = rg_have(p, x);
					p->claim[x]++;
					rg_flip(p, x, before);
				}
		}
		/* one step of each running chain, in turn */
		for (int32_t l = 0; l < nlive; l++) {
			int32_t si = p->lnext[l]++;
			p->st++;
			for (int32_t k = c->ioff[si]; k < c->ioff[si + 1]; k++)
				p->stamp[c->iv[k]] = p->st;
			for (int32_t k = c->ioff[si]; k < c->ioff[si + 1]; k++) {
				int32_t x = c->iv[k];
				int m = g->buf_mem[x];
				p->tick++;
				if (!p->res[x]) {
					rg_room(p, m, g->buf_size[x]);
					bool before = rg_have(p, x);
					p->res[x] = 1;
					p->rl[m][p->nrl[m]++] = x;
					p->used[m] += g->buf_size[x];
					rg_flip(p, x, before);
				}
				p->last[x] = p->tick;
			}
			for (int32_t k = c->ioff[si]; k < c->ioff[si + 1]; k++) {
				int32_t x = c->iv[k];
				bool before = rg_have(p, x);
				p->claim[x]--;
				rg_flip(p, x, before);
				if (p->claim[x] == 0 && p->left[x] == 0)
					rg_unres(p, x);
			}
			p->work += c->ioff[si + 1] - c->ioff[si];
		}
		for (int32_t l = 0; l < nlive;) {
			int32_t ch = p->live[l];
			if (p->lnext[l] < c->soff[ch + 1]) {
				l++;
				continue;
			}
			p->cused[g->buf_mem[c->cbuf[ch]]] -=
				g->buf_size[c->cbuf[ch]];
			done++;
			memmove(p->live + l, p->live + l + 1,
				(size_t)(nlive - l - 1) * sizeof *p->live);
			memmove(p->lnext + l, p->lnext + l + 1,
				(size_t)(nlive - l - 1) * sizeof *p->lnext);
			nlive--;
		}
	}
}

static void pl_free(const ds_heap *h, pilot *p)
{
	void *a[] = {p->siv, p->cioff, p->civ,	 p->uoff,  p->uv,     p->first,
		     p->steps, p->acc,	 p->accs,  p->nxt,    p->nu,
		     p->stamp, p->res,	 p->seen,  p->live,   p->lnext,
		     p->miss,  p->started, p->claim, p->left,  p->last,
		     p->red,   p->redst, p->touch, p->cand,   p->cmru,
		     p->cben};
	for (size_t i = 0; i < sizeof a / sizeof *a; i++)
		ds_free(h, a[i]);
	for (int m = 0; m < DS_NMEM; m++)
		ds_free(h, p->rl[m]);
	ds_free(h, p->rpos);
	ds_free(h, p->ins);
	for (int i = 0; i < PL_SLOTS; i++) {
		ds_free(h, p->ord[i]);
		ds_free(h, p->rk[i]);
		ds_free(h, p->nrk[i]);
	}
	ds_free(h, p->pre);
	ds_free(h, p->pre2);
}

/* A slot other than a, b and c. */
static int pl_slot(int a, int b, int c)
{
	int s = 0;
	while (s == a || s == b || s == c)
		s++;
	DS_ASSERT(s < PL_SLOTS);
	return s;
}

/* The pilot from the starts fixed[0..nfix): the greedy's completion is
 * the first incumbent, and stands when it costs more than giveup; then a
 * pass over the later starts: at each, every choice is completed by the
 * greedy, and a complete order costing less becomes the incumbent, whose
 * start there is then kept.  Leaves slot keep alone; returns the
 * incumbent's slot and its cost in *val. */
static int pl_pilot(pilot *p, const int32_t *fixed, int32_t nfix, int keep,
		    int64_t giveup, int64_t budget, int64_t *val)
{
	const int32_t nch = p->c->nch;
	int inc = pl_slot(keep, -1, -1);
	rg_run(p, fixed, nfix, nfix, p->ord[inc], p->rk[inc], p->nrk[inc]);
	int64_t incv = pl_eval(p, p->ord[inc], INT64_MAX);
	for (int32_t at = nfix; at < nch && incv <= giveup && p->work < budget;
	     at++) {
		int32_t r[PL_K], nr = p->nrk[inc][at];
		memcpy(r, p->rk[inc] + (size_t)at * PL_K, (size_t)nr * sizeof *r);
		memcpy(p->pre, p->ord[inc], (size_t)at * sizeof *p->pre);
		/* r[0] is the incumbent's own choice */
		for (int32_t i = 1; i < nr && p->work < budget; i++) {
			int s = pl_slot(keep, inc, -1);
			p->pre[at] = r[i];
			rg_run(p, p->pre, at + 1, at + 1, p->ord[s], p->rk[s],
			       p->nrk[s]);
			int64_t cost = pl_eval(p, p->ord[s], INT64_MAX);
			if (cost < incv) {
				incv = cost;
				inc = s;
			}
		}
	}
	*val = incv;
	return inc;
}

/* ---- the improvement ----
 *
 * A local search over the start order with pl_eval as the objective,
 * from the cheapest order the pilots or the simulation found.  At each
 * place i in turn: a block of up to PL_BLOCK chains from i moved up to
 * PL_REACH places either way, chain i swapped with one up to PL_REACH
 * after it, the segment from i to a place up to PL_REACH after reversed;
 * the first move that lowers the cost is kept and the scan goes on from
 * there; passes repeat until one finds nothing or the budget is spent.
 * The pilot's greedy completions miss such small rearrangements of the
 * bands they build (a chain or a pair started a little earlier or later).
 * O(C PL_BLOCK PL_REACH) trials per pass, each an evaluation cut short at
 * the incumbent's cost; the budget counts the evaluations' work. */

enum { PL_BLOCK = 3, PL_REACH = 8 };

/* tr[] = ord[] with its block [i, i + len) moved to start at j. */
static void pl_move(const int32_t *ord, int32_t n, int32_t i, int32_t len,
		    int32_t j, int32_t *tr)
{
	int32_t t = 0;
	for (int32_t k = 0; k < n; k++) {
		if (t == j)
			for (int32_t b = 0; b < len; b++)
				tr[t++] = ord[i + b];
		if (k < i || k >= i + len)
			tr[t++] = ord[k];
	}
	if (t == j)
		for (int32_t b = 0; b < len; b++)
			tr[t++] = ord[i + b];
	DS_ASSERT(t == n);
}

/* Keeps tr[] in ord[] when it costs less than *val. */
static bool pl_keep(pilot *p, int32_t *ord, const int32_t *tr, int64_t *val)
{
	int64_t v = pl_eval(p, tr, *val);
	if (v >= *val)
		return false;
	memcpy(ord, tr, (size_t)p->c->nch * sizeof *ord);
	*val = v;
	return true;
}

/* One pass of local moves over ord[] (costing *val): each block of up to
 * PL_BLOCK chains moved up to PL_REACH places either way, each pair of
 * chains up to PL_REACH apart swapped, each segment that long reversed,
 * in that order by place, keeping the first move that lowers the cost
 * each time.  Returns whether any did. */
static bool pl_pass(pilot *p, int32_t *ord, int64_t *val, int64_t budget)
{
	const int32_t n = p->c->nch;
	int32_t *tr = p->pre;
	bool any = false;
	for (int32_t i = 0; i < n && p->work < budget; i++) {
		for (int32_t len = 1; len <= PL_BLOCK && i + len <= n; len++)
			for (int32_t d = -PL_REACH; d <= PL_REACH; d++) {
				int32_t j = i + d;
				if (d == 0 || j < 0 || j + len > n ||
				    p->work >= budget)
					continue;
				pl_move(ord, n, i, len, j, tr);
				any |= pl_keep(p, ord, tr, val);
			}
		for (int32_t j = i + 1; j <= i + PL_REACH && j < n &&
					p->work < budget;
		     j++) {
			memcpy(tr, ord, (size_t)n * sizeof *tr);
			tr[i] = ord[j];
			tr[j] = ord[i];
			any |= pl_keep(p, ord, tr, val);
		}
		for (int32_t j = i + 2; j <= i + PL_REACH && j < n &&
					p->work < budget;
		     j++) {
			memcpy(tr, ord, (size_t)n * sizeof *tr);
			for (int32_t k = i; k <= j; k++)
				tr[k] = ord[i + j - k];
			any |= pl_keep(p, ord, tr, val);
		}
	}
	return any;
}

/* Improves ord[] (costing val) by local passes until none helps or
 * p->work reaches budget; returns its cost. */
static int64_t pl_improve(pilot *p, int32_t *ord, int64_t val,
			  int64_t budget)
{
	while (p->work < budget && pl_pass(p, ord, &val, budget))
		;
	return val;
}

/* The pilot's chain start order into out[0..nch), within budget work
 * units (at least the greedy's own order). */
static int pl_order(chsim *c, const chopts *o, int32_t *out,
		    bool *useful, ds_err *e)
{
	const int64_t budget = o->pilot;
	const ds_graph *g = c->g;
	const ds_heap *h = g->heap;
	const int32_t nch = c->nch, nb = g->nbuf;
	const int32_t nsteps = c->soff[nch], nacc = c->ioff[nsteps];
	*o->nalt = 0;
	pilot p;
	memset(&p, 0, sizeof p);
	p.c = c;
	int rc = DS_OK;
	bool ok = true;
	for (int i = 0; i < PL_SLOTS; i++) {
		p.ord[i] = ds_alloc(h, (size_t)nch, sizeof **p.ord);
		p.rk[i] = ds_alloc(h, (size_t)nch * PL_K, sizeof **p.rk);
		p.nrk[i] = ds_alloc(h, (size_t)nch, sizeof **p.nrk);
		ok = ok && p.ord[i] && p.rk[i] && p.nrk[i];
	}
	p.pre = ds_alloc(h, (size_t)nch, sizeof *p.pre);
	p.pre2 = ds_alloc(h, (size_t)nch, sizeof *p.pre2);
	int32_t *takers = ds_alloc(h, (size_t)g->n, sizeof *takers);
	ok = ok && p.pre && p.pre2 && takers;
	p.cioff = ds_alloc(h, (size_t)nch + 1, sizeof *p.cioff);
	p.civ = ds_alloc(h, (size_t)nacc + 1, sizeof *p.civ);
	p.siv = ds_alloc(h, (size_t)nacc + 1, sizeof *p.siv);
	p.uoff = ds_alloc(h, (size_t)nb + 1, sizeof *p.uoff);
	p.uv = ds_alloc(h, (size_t)nacc + 1, sizeof *p.uv);
	p.first = ds_alloc(h, (size_t)nch, sizeof *p.first);
	p.steps = ds_alloc(h, (size_t)nsteps, sizeof *p.steps);
	p.acc = ds_alloc(h, (size_t)nacc + 1, sizeof *p.acc);
	p.accs = ds_alloc(h, (size_t)nacc + 1, sizeof *p.accs);
	p.nxt = ds_alloc(h, (size_t)nacc + 1, sizeof *p.nxt);
	p.nu = ds_alloc(h, (size_t)nb, sizeof *p.nu);
	p.stamp = ds_alloc(h, (size_t)nb, sizeof *p.stamp);
	p.res = ds_alloc(h, (size_t)nb, 1);
	p.seen = ds_alloc(h, (size_t)nb, 1);
	p.live = ds_alloc(h, (size_t)nch, sizeof *p.live);
	p.lnext = ds_alloc(h, (size_t)nch, sizeof *p.lnext);
	p.miss = ds_alloc(h, (size_t)nch, sizeof *p.miss);
	p.started = ds_alloc(h, (size_t)nch, 1);
	p.claim = ds_alloc(h, (size_t)nb, sizeof *p.claim);
	p.left = ds_alloc(h, (size_t)nb, sizeof *p.left);
	p.last = ds_alloc(h, (size_t)nb, sizeof *p.last);
	p.red = ds_alloc(h, (size_t)nch, sizeof *p.red);
	p.redst = ds_alloc(h, (size_t)nch, sizeof *p.redst);
	p.touch = ds_alloc(h, (size_t)nch, sizeof *p.touch);
	p.cand = ds_alloc(h, (size_t)nch, sizeof *p.cand);
	p.cmru = ds_alloc(h, (size_t)nch, sizeof *p.cmru);
	p.cben = ds_alloc(h, (size_t)nch, sizeof *p.cben);
	ok = ok && p.cioff && p.civ && p.siv && p.uoff && p.uv && p.first &&
	     p.steps && p.acc && p.accs && p.nxt && p.nu && p.stamp && p.res &&
	     p.seen && p.live && p.lnext && p.miss && p.started && p.claim &&
	     p.left && p.last && p.red && p.redst && p.touch && p.cand &&
	     p.cmru && p.cben;
	p.rpos = ds_alloc(h, (size_t)nb, sizeof *p.rpos);
	p.ins = ds_alloc(h, (size_t)nb, sizeof *p.ins);
	ok = ok && p.rpos && p.ins;
	for (int m = 0; ok && m < DS_NMEM; m++) {
		p.rl[m] = ds_alloc(h, (size_t)nb, sizeof *p.rl[m]);
		ok = p.rl[m] != NULL;
	}
	if (!ok) {
		rc = ds_fail(e, DS_ENOMEM, "out of memory");
		goto out;
	}
	/* each step's inputs in the order their first readers run in stage
	 * 1, as the layout will run them; an operation that several steps
	 * take along runs with the first of them, so it does not count
	 * (nu[] is free scratch here) */
	memcpy(p.siv, c->iv, (size_t)nacc * sizeof *p.siv);
	for (int32_t k = 0; k < c->coff[nsteps]; k++)
		takers[c->cv[k]]++;
	for (int32_t si = 0; si < nsteps; si++) {
		int32_t *a = p.siv + c->ioff[si];
		int32_t len = c->ioff[si + 1] - c->ioff[si];
		for (int32_t i = 0; i < len; i++)
			p.nu[a[i]] = INT32_MAX;
		for (int32_t k = c->coff[si]; k < c->coff[si + 1]; k++) {
			int32_t x = c->cv[k];
			if (takers[x] > 1)
				continue;
			for (int32_t j = g->use_off[x]; j < g->use_off[x + 1];
			     j++)
				if (c->pos1[x] < p.nu[g->use[j]])
					p.nu[g->use[j]] = c->pos1[x];
		}
		for (int32_t i = 1; i < len; i++) {
			int32_t x = a[i], j = i;
			while (j > 0 && p.nu[a[j - 1]] > p.nu[x]) {
				a[j] = a[j - 1];
				j--;
			}
			a[j] = x;
		}
	}
	/* each chain's distinct inputs, each input's chains */
	p.st = 1;
	for (int32_t ch = 0; ch < nch; ch++) {
		int32_t n = p.cioff[ch];
		p.st++;
		for (int32_t si = c->soff[ch]; si < c->soff[ch + 1]; si++)
			for (int32_t k = c->ioff[si]; k < c->ioff[si + 1]; k++)
				if (p.stamp[c->iv[k]] != p.st) {
					p.stamp[c->iv[k]] = p.st;
					p.civ[n++] = c->iv[k];
					p.uoff[c->iv[k] + 1]++;
				}
		p.cioff[ch + 1] = n;
		p.first[ch] = c->pos1[c->sv[c->soff[ch]]];
	}
	for (int32_t b = 0; b < nb; b++) {
		if (p.uoff[b + 1] > 0)
			p.ins[p.nins++] = b;
		p.uoff[b + 1] += p.uoff[b];
	}
	for (int32_t b = 0; b < nb; b++)
		p.left[b] = p.uoff[b];
	for (int32_t ch = 0; ch < nch; ch++)
		for (int32_t k = p.cioff[ch]; k < p.cioff[ch + 1]; k++)
			p.uv[p.left[p.civ[k]]++] = ch;
	/* the chain buffers' peak per memory, left to the inputs' rest */
	{
		int64_t cused[DS_NMEM] = {0};
		for (int32_t ch = 0; ch < nch; ch++) {
			int32_t b = c->cbuf[ch];
			int m = g->buf_mem[b];
			if (cused[m] + g->buf_size[b] <= g->caps.cap[m])
				cused[m] += g->buf_size[b];
		}
		for (int m = 0; m < DS_NMEM; m++)
			p.reserve[m] = cused[m];
	}
	/* the model counts only the reloads of the chains' inputs: where
	 * the simulation's order placed costs other than the model says,
	 * the chains do not describe the work, and the pilot is not used */
	int64_t val = 0, refv = pl_eval(&p, o->ref, INT64_MAX);
	int64_t tol = o->ref_ddr / 8;
	*useful = refv >= o->ref_ddr - tol && refv <= o->ref_ddr + tol;
	/* a greedy run cannot be cut short: with too many chains for the
	 * budget to pay a few, the pilot is not used either */
	int64_t imax = 0, umax = 0;
	for (int32_t ch = 0; ch < nch; ch++)
		if (p.cioff[ch + 1] - p.cioff[ch] > imax)
			imax = p.cioff[ch + 1] - p.cioff[ch];
	for (int32_t b = 0; b < nb; b++)
		if (p.uoff[b + 1] - p.uoff[b] > umax)
			umax = p.uoff[b + 1] - p.uoff[b];
	double tie = (double)PL_TOP * (double)imax * (double)umax;
	double run = (double)nch * ((double)p.cioff[nch] + tie) +
		     (double)nacc * (double)umax;
	bool piloted = *useful && run * 8 <= (double)budget;
	if (!*useful)
		goto out;
	/* the pilot refines the greedy: when the greedy is well behind the
	 * simulation's order, there is no catching up, and no trying */
	int best = -1;
	int bvar = 0;
	for (int v = 0; piloted && v < PL_VARIANTS; v++) {
		int64_t vv;
		p.variant = v;
		int sl = pl_pilot(&p, NULL, 0, best, refv + refv / 8, budget,
				  &vv);
		if (best < 0 || vv < val) {
			best = sl;
			val = vv;
			bvar = v;
		}
	}
	p.variant = bvar;
	piloted = piloted && val <= refv + refv / 8;
	/* the pilot's order, kept as a candidate of its own: the steps
	 * after it may lower the model's cost where the placement does not
	 * follow */
	int32_t nalt = piloted ? 1 : 0;
	if (piloted)
		memcpy(o->alt, p.ord[best], (size_t)nch * sizeof *o->alt);
	int64_t pval = val;
	/* nested: the pilot's own choices, each completed by a whole pilot
	 * (a choice that pays only with later choices shows there), from the
	 * first start on while its budget lasts */
	const int64_t nbudget = p.work + o->nest;
	for (int32_t at = 0; piloted && at < nch && p.work < nbudget; at++) {
		/* the incumbent's choices here, afresh */
		int f = pl_slot(best, -1, -1);
		rg_run(&p, p.ord[best], nch, at, p.ord[f], p.rk[f], p.nrk[f]);
		best = f;
		int32_t r[PL_K], nr = p.nrk[best][at];
		memcpy(r, p.rk[best] + (size_t)at * PL_K,
		       (size_t)nr * sizeof *r);
		memcpy(p.pre2, p.ord[best], (size_t)at * sizeof *p.pre2);
		for (int32_t i = 1; i < nr && p.work < nbudget; i++) {
			int64_t v;
			p.pre2[at] = r[i];
			int sl = pl_pilot(&p, p.pre2, at + 1, best, INT64_MAX,
					  nbudget, &v);
			if (v < val) {
				val = v;
				best = sl;
			}
		}
	}
	if (piloted && val < pval) {
		memcpy(o->alt + (size_t)nalt * (size_t)nb, p.ord[best],
		       (size_t)nch * sizeof *o->alt);
		nalt++;
	}
	/* the improvement, from the better of the pilot's order and the
	 * simulation's */
	bool from_pilot = piloted && val < refv;
	int64_t v0 = from_pilot ? val : refv;
	memcpy(out, from_pilot ? p.ord[best] : o->ref,
	       (size_t)nch * sizeof *out);
	int64_t v1 = pl_improve(&p, out, v0, p.work + o->improve);
	/* out: the cheapest order; alt: the earlier ones that differ */
	if (v1 < v0) {
		*o->nalt = nalt;
	} else if (nalt > 0) {
		memcpy(out, o->alt + (size_t)(nalt - 1) * (size_t)nb,
		       (size_t)nch * sizeof *out);
		*o->nalt = nalt - 1;
	} else {
		*useful = false;
	}
out:
	pl_free(h, &p);
	ds_free(h, takers);
	return rc;
}


/* *any: there are chains (and, for the pilot, an order worth trying). */
static int order_chains(const ds_graph *g, const int32_t *order,
			const int32_t *pos1, const chopts *o, int32_t *out,
			bool *any, ds_err *e)
{
	const double share = o->share;
	const ds_heap *h = g->heap;
	const int32_t n = g->n, nb = g->nbuf;
	chsim c;
	memset(&c, 0, sizeof c);
	c.g = g;
	c.pos1 = pos1;
	for (int m = 0; m < DS_NMEM; m++)
		c.icap[m] = (int64_t)(share * (double)g->caps.cap[m]);
	int rc = DS_OK;
	int32_t *usr = ds_alloc(h, (size_t)g->user_off[nb] + 1, sizeof *usr);
	int32_t *isstep = ds_alloc(h, (size_t)n, sizeof *isstep);
	int32_t *key = ds_alloc(h, (size_t)n, sizeof *key);
	int32_t *anchor = ds_alloc(h, (size_t)n, sizeof *anchor);
	int32_t *mark = ds_alloc(h, (size_t)n, sizeof *mark);
	int32_t *tmp = ds_alloc(h, (size_t)n, sizeof *tmp);
	int32_t *live = ds_alloc(h, (size_t)nb, sizeof *live);
	int32_t *next = ds_alloc(h, (size_t)nb, sizeof *next);
	int32_t *reslist = ds_alloc(h, (size_t)nb, sizeof *reslist);
	uint8_t *started = ds_alloc(h, (size_t)nb, 1);
	c.cbuf = ds_alloc(h, (size_t)nb, sizeof *c.cbuf);
	c.soff = ds_alloc(h, (size_t)nb + 1, sizeof *c.soff);
	c.res = ds_alloc(h, (size_t)nb, 1);
	c.last = ds_alloc(h, (size_t)nb, sizeof *c.last);
	c.uses = ds_alloc(h, (size_t)nb, sizeof *c.uses);
	c.stamp = ds_alloc(h, (size_t)nb, sizeof *c.stamp);
	c.claim = ds_alloc(h, (size_t)nb, sizeof *c.claim);
	c.pclaim = ds_alloc(h, (size_t)nb, sizeof *c.pclaim);
	int32_t *cand = ds_alloc(h, (size_t)nb, sizeof *cand);
	int64_t *ccost = ds_alloc(h, (size_t)nb, sizeof *ccost);
	int64_t *cmru = ds_alloc(h, (size_t)nb, sizeof *cmru);
	int32_t *wnext = ds_alloc(h, (size_t)nb + 1, sizeof *wnext);
	int32_t *wprev = ds_alloc(h, (size_t)nb + 1, sizeof *wprev);
	int32_t *prevg = ds_alloc(h, (size_t)nb + 1, sizeof *prevg);
	int32_t *icnt = ds_alloc(h, (size_t)nb + 1, sizeof *icnt);
	int32_t *ist = ds_alloc(h, (size_t)nb + 1, sizeof *ist);
	ds_heapq wq;
	memset(&wq, 0, sizeof wq);
	int32_t *forced = NULL;
	int64_t ni = 0, ncl = 0, cap_i = 0, cap_c = 0;
	if (!usr || !isstep || !key || !anchor || !mark || !tmp || !live ||
	    !next || !reslist || !started || !c.cbuf || !c.soff || !c.res ||
	    !c.last || !c.uses || !c.stamp || !c.claim || !c.pclaim || !cand ||
	    !ccost || !cmru || !wnext || !wprev || !prevg || !icnt || !ist)
		goto oom;
	/* users by stage 1 position; the chains and their steps */
	memcpy(usr, g->user, (size_t)g->user_off[nb] * sizeof *usr);
	{
		csr u = {g->user_off, usr};
		sort_lists(pos1, &u, nb);
	}
	int32_t nsteps = 0;
	for (int32_t b = 0; b < nb; b++) {
		int32_t *ub = usr + g->user_off[b];
		int32_t nu = g->user_off[b + 1] - g->user_off[b];
		if (!is_chain(g, ub, nu, b))
			continue;
		c.cbuf[c.nch] = b;
		c.soff[c.nch + 1] = c.soff[c.nch] + nu;
		c.nch++;
		nsteps += nu;
	}
	*any = c.nch > 1;
	if (c.nch < 2)
		goto out;
	c.sv = ds_alloc(h, (size_t)nsteps, sizeof *c.sv);
	c.ioff = ds_alloc(h, (size_t)nsteps + 1, sizeof *c.ioff);
	c.coff = ds_alloc(h, (size_t)nsteps + 1, sizeof *c.coff);
	if (!c.sv || !c.ioff || !c.coff)
		goto oom;
	for (int32_t ch = 0; ch < c.nch; ch++) {
		int32_t b = c.cbuf[ch];
		memcpy(c.sv + c.soff[ch], usr + g->user_off[b],
		       (size_t)(c.soff[ch + 1] - c.soff[ch]) * sizeof *c.sv);
	}
	for (int32_t i = 0; i < nsteps; i++)
		isstep[c.sv[i]] = 1;
	/* what each step takes along (its operation preds that are no step,
	 * and theirs) and reads (buffers of those not wholly inside) */
	int32_t ms = 0;
	for (int32_t ch = 0; ch < c.nch; ch++)
		for (int32_t si = c.soff[ch]; si < c.soff[ch + 1]; si++) {
			int32_t u = c.sv[si], nt = 0;
			ms++;
			tmp[nt++] = u;
			mark[u] = ms;
			for (int32_t lvl = 0, lo = 0; lvl < 2; lvl++) {
				int32_t hi = nt;
				for (int32_t q = lo; q < hi; q++) {
					int32_t x = tmp[q];
					for (int32_t k = g->pred_off[x];
					     k < g->pred_off[x + 1]; k++) {
						int32_t p = g->pred[k];
						if (g->kind[p] != DS_OP ||
						    isstep[p] || mark[p] == ms)
							continue;
						mark[p] = ms;
						tmp[nt++] = p;
					}
				}
				lo = hi;
			}
			if (ds_reserve(h, (void **)&c.cv, &cap_c, ncl + nt,
				       sizeof *c.cv, e))
				goto fail;
			for (int32_t q = 0; q < nt; q++)
				c.cv[ncl++] = tmp[q];
			c.coff[si + 1] = (int32_t)ncl;
			/* inputs: buffers with a user outside the step */
			for (int32_t q = 0; q < nt; q++) {
				int32_t x = tmp[q];
				for (int32_t k = g->use_off[x];
				     k < g->use_off[x + 1]; k++) {
					int32_t bb = g->use[k];
					if (bb == c.cbuf[ch] || c.stamp[bb] == ms)
						continue;
					c.stamp[bb] = ms;
					bool local = true;
					for (int32_t j = g->user_off[bb];
					     j < g->user_off[bb + 1]; j++)
						local &= mark[g->user[j]] == ms;
					if (local)
						continue;
					if (ds_reserve(h, (void **)&c.iv, &cap_i,
						       ni + 1, sizeof *c.iv, e))
						goto fail;
					c.iv[ni++] = bb;
					c.uses[bb]++;
				}
			}
			c.ioff[si + 1] = (int32_t)ni;
		}
	/* the chains not started, a list in stage 1's order of their first
	 * steps (ties: as built) */
	if (ds_heapq_init(&wq, h, c.nch))
		goto oom;
	for (int32_t ch = 0; ch < c.nch; ch++)
		ds_heapq_push(&wq, pos1[c.sv[c.soff[ch]]], ch);
	int32_t whead = -1;
	for (int32_t prev = -1; wq.n > 0;) {
		int32_t ch = ds_heapq_pop(&wq);
		wprev[ch] = prev;
		wnext[ch] = -1;
		if (prev >= 0)
			wnext[prev] = ch;
		else
			whead = ch;
		prev = ch;
	}
	/* stage 1's places of the steps, in order: the anchors */
	int32_t na = 0;
	for (int32_t i = 0; i < n; i++)
		if (isstep[order[i]])
			anchor[na++] = i;
	for (int32_t v = 0; v < n; v++)
		key[v] = pos1[v];
	for (int32_t v = 0; v < n; v++)
		mark[v] = 0; /* now: taken along by an executed step */
	/* the pilot chooses the order of the chains (or it is given), or
	 * the simulation below does as it goes */
	if (o->pilot > 0 || o->force) {
		forced = ds_alloc(h, (size_t)c.nch, sizeof *forced);
		if (!forced)
			goto oom;
		if (o->force)
			memcpy(forced, o->force, (size_t)c.nch * sizeof *forced);
		else if ((rc = pl_order(&c, o, forced, any, e)) || !*any)
			goto out;
	}
	/* the simulation */
	int32_t nlive = 0, nres = 0, done = 0, t = 0, nstart = 0, nprev = 0;
	int32_t gst = 0;
	for (int32_t b = 0; b < nb; b++)
		c.stamp[b] = ist[b] = 0;
	c.st = c.cst = c.pst = 1;
	while (done < c.nch) {
		/* start chains while their memory has room */
		for (;;) {
			int32_t bestc;
			/* a whole order given, or its first starts */
			if (forced || nstart < o->nprefix) {
				if (nstart == c.nch)
					break;
				bestc = (forced ? forced : o->prefix)[nstart];
				int32_t b = c.cbuf[bestc];
				int m = g->buf_mem[b];
				if (nlive > 0 &&
				    c.cused[m] + g->buf_size[b] > g->caps.cap[m])
					break;
				nstart++;
				goto start;
			}
			/* inputs the running chains will bring anyway */
			int32_t claim = ++c.cst;
			for (int32_t l = 0; l < nlive; l++)
				for (int32_t si = next[l]; si < c.soff[live[l] + 1];
				     si++)
					for (int32_t k = c.ioff[si];
					     k < c.ioff[si + 1]; k++)
						c.claim[c.iv[k]] = claim;
			c.pst++; /* no partner yet */
			int32_t ncand = 0;
			for (int32_t ch = whead, nw = 0; ch >= 0 && nw < CH_WINDOW;
			     ch = wnext[ch], nw++) {
				int32_t b = c.cbuf[ch];
				int m = g->buf_mem[b];
				DS_ASSERT(!started[ch]);
				if (c.cused[m] + g->buf_size[b] > g->caps.cap[m])
					continue;
				cand[ncand] = ch;
				ccost[ncand] = ch_cost(&c, ch, claim, &cmru[ncand]);
				ncand++;
			}
			bestc = ch_pick(&c, cand, ccost, cmru, ncand, claim,
					started);
			if (bestc < 0)
				break;
			if (o->turn_out && nlive == 0 && nprev >= 2)
				ch_turn(&c, prevg, nprev, icnt, ist, ++gst, cand,
					ccost, cmru, ncand, bestc,
					o->turn_out + 2 * (size_t)done);
			nstart++;
start:
			nprev = 0;
			if (o->ref_out)
				o->ref_out[done + nlive] = bestc;
			started[bestc] = 1;
			if (wprev[bestc] >= 0)
				wnext[wprev[bestc]] = wnext[bestc];
			else
				whead = wnext[bestc];
			if (wnext[bestc] >= 0)
				wprev[wnext[bestc]] = wprev[bestc];
			live[nlive] = bestc;
			next[nlive++] = c.soff[bestc];
			c.cused[g->buf_mem[c.cbuf[bestc]]] +=
				g->buf_size[c.cbuf[bestc]];
		}
		DS_ASSERT(nlive > 0);
		/* one step of each running chain, in turn */
		for (int32_t l = 0; l < nlive; l++) {
			int32_t si = next[l]++;
			c.st++;
			for (int32_t k = c.ioff[si]; k < c.ioff[si + 1]; k++)
				c.stamp[c.iv[k]] = c.st;
			c.tick++;
			for (int32_t k = c.ioff[si]; k < c.ioff[si + 1]; k++) {
				int32_t x = c.iv[k];
				int m = g->buf_mem[x];
				if (!c.res[x]) {
					ch_room(&c, m, g->buf_size[x], reslist,
						nres);
					c.res[x] = 1;
					c.nin++;
					c.used[m] += g->buf_size[x];
					reslist[nres++] = x;
				}
				c.last[x] = c.tick;
				if (--c.uses[x] == 0) {
					c.res[x] = 0;
					c.nin--;
					c.used[m] -= g->buf_size[x];
				}
			}
			/* compact the resident list when most of it left the
			 * model (and drop repeats): ch_room scans it, so it
			 * stays O(what the memories hold) */
			if (nres > 2 * c.nin + 16) {
				int32_t j = 0, st = ++c.st;
				for (int32_t i = 0; i < nres; i++) {
					int32_t x = reslist[i];
					if (c.res[x] && c.stamp[x] != st) {
						c.stamp[x] = st;
						reslist[j++] = x;
					}
				}
				nres = j;
			}
			/* a step shared by two chains takes its place once */
			if (mark[c.sv[si]])
				continue;
			for (int32_t k = c.coff[si]; k < c.coff[si + 1]; k++) {
				int32_t x = c.cv[k];
				if (!mark[x]) {
					mark[x] = 1;
					key[x] = anchor[t];
				}
			}
			t++;
		}
		for (int32_t l = 0; l < nlive;) {
			int32_t ch = live[l];
			if (next[l] < c.soff[ch + 1]) {
				l++;
				continue;
			}
			c.cused[g->buf_mem[c.cbuf[ch]]] -=
				g->buf_size[c.cbuf[ch]];
			prevg[nprev++] = ch;
			done++;
			memmove(live + l, live + l + 1,
				(size_t)(nlive - l - 1) * sizeof *live);
			memmove(next + l, next + l + 1,
				(size_t)(nlive - l - 1) * sizeof *next);
			nlive--;
		}
	}
	DS_ASSERT(t == na);
	rc = order_follow(g, order, pos1, key, false, out, e);
	goto out;
oom:
	rc = ds_fail(e, DS_ENOMEM, "out of memory");
	goto out;
fail:
	rc = DS_ENOMEM;
out:
	ds_free(h, usr);
	ds_free(h, isstep);
	ds_free(h, key);
	ds_free(h, anchor);
	ds_free(h, mark);
	ds_free(h, tmp);
	ds_free(h, live);
	ds_free(h, next);
	ds_free(h, reslist);
	ds_free(h, started);
	ds_free(h, c.cbuf);
	ds_free(h, c.soff);
	ds_free(h, c.sv);
	ds_free(h, c.ioff);
	ds_free(h, c.iv);
	ds_free(h, c.coff);
	ds_free(h, c.cv);
	ds_free(h, c.res);
	ds_free(h, c.last);
	ds_free(h, c.uses);
	ds_free(h, c.stamp);
	ds_free(h, c.claim);
	ds_free(h, c.pclaim);
	ds_free(h, cand);
	ds_free(h, ccost);
	ds_free(h, cmru);
	ds_free(h, wnext);
	ds_free(h, wprev);
	ds_free(h, prevg);
	ds_free(h, icnt);
	ds_free(h, ist);
	ds_heapq_free(&wq);
	ds_free(h, forced);
	return rc;
}

/* ---- the list scheduler ----
 *
 * Builds an order node by node.  ALLOCs are lazy (emitted right before the
 * first user of their buffer), FREEs eager.  Each step picks a goal: an
 * operation together with the unscheduled operations it waits for (its
 * closure, at most max_closure operations), all emitted at once.  The
 * candidates are the next `window` operations of the anchor order (the best
 * order so far) and the next `fan` users of each of the `seeds` most
 * recently used resident buffers.
 *
 * Rules: a goal must finish something (the last use of a buffer, or be an
 * operation only FREEs follow).  One that leaves a new buffer with exactly
 * one more user, that user being near (its own closure fits), gives way to
 * that user, which is queued instead: data is staged next to the operation
 * that needs it.  One that starts a buffer with more users needs the next
 * of them near: allocate only when the consumer is near.  Goals breaking a
 * rule are taken only when no candidate keeps them, even after a wider look.
 *
 * Among goals: the least eviction traffic in the residency model, then the
 * anchor order.  The model counts bytes per memory; its victims are the
 * least recently used buffers, or, given a reference plan, those whose next
 * use in it is furthest (Belady against that forecast); per byte of room, a
 * buffer whose data sits in DDR costs half as much. */

enum { B_NONE, B_RES, B_SPILL, B_FREED };

typedef struct lsp {
	int32_t max_closure; /* operations a goal may pull in, itself too */
	int32_t fan;	     /* users followed per seeded buffer */
	int32_t window;	     /* next operations of the anchor order seeded */
	int32_t seeds;	     /* most recently used resident buffers seeded */
} lsp;

/* Compared field by field, smaller first. */
typedef struct score {
	int level;    /* 1: breaks a rule */
	double evict; /* traffic of the evictions it forces in the model */
	int32_t pos;  /* anchor position */
} score;

typedef struct lsched {
	const ds_graph *g;
	const lsp *P;
	const ds_heap *h;
	const int32_t *pos1; /* anchor position of each node */
	const int32_t *posr; /* reference plan position of each node, or NULL */
	csr dep;	     /* what a node waits for, by anchor position */
	csr usr;	     /* users of a buffer, by anchor position */
	csr rusr;	     /* users of a buffer, by reference position */
	int32_t *rptr;	     /* per buffer: first maybe unscheduled in rusr */
	int32_t now_ref;     /* reference position of the last operation */
	/* per node */
	int32_t *cnt; /* unmet dependencies (ready ALLOCs count as met) */
	uint8_t *done;
	int32_t *ready_at; /* index in ready[], -1 when not there */
	int32_t *ready;
	int32_t nready;
	int32_t *mark;	/* in the closure being looked at: cstamp */
	int32_t *seen;	/* walked by near(): sstamp */
	int32_t *qseen; /* queued this step: qstamp */
	int32_t *fail;	/* closure over the limit this step: fstamp */
	int32_t cstamp, sstamp, qstamp, fstamp, bstamp;
	int32_t *ord1; /* the anchor order */
	int32_t *skip; /* union-find over it: next unscheduled operation */
	/* per buffer */
	uint8_t *bst;
	int32_t *rem;	/* unscheduled users */
	int64_t *last;	/* last use, in scheduler ticks */
	int32_t *bmark; /* protected / counted: bstamp */
	int32_t *bcnt;	/* uses inside the closure being scored */
	int32_t *res[DS_NMEM]; /* resident buffers per memory */
	int32_t nres[DS_NMEM];
	int32_t *res_at;
	int32_t *mru_prev, *mru_next; /* resident, most recently used first */
	int32_t mru_head;
	int64_t used[DS_NMEM];
	int64_t tick;
	/* scratch */
	int32_t *clo; /* closure in emission order */
	int32_t nclo, nclo_ops;
	int32_t *cand;
	int32_t ncand;
	bool push; /* score_goal may queue the users goals give way to */
	int32_t *bufs;
	int32_t *frees; /* FREEs that became ready */
	int32_t nfrees;
	/* output */
	int32_t *order;
	int32_t len;
} lsched;

/* ---- readiness ----
 *
 * Besides the edges, every user of a buffer waits for its ALLOC, and its
 * FREE for every user (the graph need not spell these out).  cnt[] counts
 * both kinds, so a dependency given twice is counted and met twice. */

static void ready_add(lsched *s, int32_t v)
{
	if (s->g->kind[v] == DS_FREE) {
		s->frees[s->nfrees++] = v;
		return;
	}
	s->ready_at[v] = s->nready;
	s->ready[s->nready++] = v;
}

static void ready_del(lsched *s, int32_t v)
{
	int32_t i = s->ready_at[v];
	if (i < 0)
		return;
	int32_t last = s->ready[--s->nready];
	s->ready[i] = last;
	s->ready_at[last] = i;
	s->ready_at[v] = -1;
}

static void release(lsched *s, int32_t w);

/* v's dependencies are met.  An ALLOC passes readiness on at once: it is
 * emitted only with its first user. */
static void became_ready(lsched *s, int32_t v)
{
	const ds_graph *g = s->g;
	if (g->kind[v] != DS_ALLOC) {
		ready_add(s, v);
		return;
	}
	int32_t b = g->buf[v];
	for (int32_t k = g->succ_off[v]; k < g->succ_off[v + 1]; k++)
		release(s, g->succ[k]);
	for (int32_t k = g->user_off[b]; k < g->user_off[b + 1]; k++)
		release(s, g->user[k]);
}

static void release(lsched *s, int32_t w)
{
	if (--s->cnt[w] == 0)
		became_ready(s, w);
}

/* ---- the residency model ---- */

static void mru_unlink(lsched *s, int32_t b)
{
	int32_t p = s->mru_prev[b], q = s->mru_next[b];
	if (p >= 0)
		s->mru_next[p] = q;
	else
		s->mru_head = q;
	if (q >= 0)
		s->mru_prev[q] = p;
}

static void mru_front(lsched *s, int32_t b)
{
	s->mru_prev[b] = -1;
	s->mru_next[b] = s->mru_head;
	if (s->mru_head >= 0)
		s->mru_prev[s->mru_head] = b;
	s->mru_head = b;
}

static void res_add(lsched *s, int32_t b)
{
	int m = s->g->buf_mem[b];
	mru_front(s, b);
	s->res_at[b] = s->nres[m];
	s->res[m][s->nres[m]++] = b;
	s->used[m] += s->g->buf_size[b];
	s->bst[b] = B_RES;
}

static void res_del(lsched *s, int32_t b, uint8_t st)
{
	int m = s->g->buf_mem[b];
	mru_unlink(s, b);
	int32_t i = s->res_at[b];
	int32_t last = s->res[m][--s->nres[m]];
	s->res[m][i] = last;
	s->res_at[last] = i;
	s->used[m] -= s->g->buf_size[b];
	s->bst[b] = st;
}

/* Reference position of b's next unscheduled user (INT32_MAX: none). */
static int32_t next_ref(lsched *s, int32_t b)
{
	int32_t k = s->rptr[b];
	while (k < s->rusr.off[b + 1] && s->done[s->rusr.v[k]])
		k++;
	s->rptr[b] = k;
	return k < s->rusr.off[b + 1] ? s->posr[s->rusr.v[k]] : INT32_MAX;
}

/* Eviction preference, larger first. */
static double evict_key(lsched *s, int32_t b)
{
	double d;
	if (s->posr) {
		int32_t nr = next_ref(s, b);
		d = nr == INT32_MAX ? 1e9 : (double)nr - s->now_ref;
		if (d < 1)
			d = 1;
	} else {
		d = (double)(s->tick - s->last[b]) + 1;
	}
	return s->g->buf_copyin[b] ? 2 * d : d;
}

/* The resident buffer of m to evict first, skipping the protected
 * (bmark == bstamp) and the taken (bmark == taken); -1 when none is left.
 * Ties go to the buffer allocated first in the anchor order. */
static int32_t victim(lsched *s, int m, int32_t taken)
{
	const ds_graph *g = s->g;
	int32_t best = -1;
	double bk = -1;
	for (int32_t i = 0; i < s->nres[m]; i++) {
		int32_t b = s->res[m][i];
		if (s->bmark[b] == s->bstamp || s->bmark[b] == taken)
			continue;
		double k = evict_key(s, b);
		if (k > bk || (k == bk && s->pos1[g->buf_alloc[b]] <
						  s->pos1[g->buf_alloc[best]])) {
			bk = k;
			best = b;
		}
	}
	return best;
}

/* Makes room for size bytes in m, evicting unprotected buffers.  The model
 * may stay over capacity when nothing can go: ds_place deals with the real
 * layout later. */
static void make_room(lsched *s, int m, int64_t size)
{
	while (s->used[m] + size > s->g->caps.cap[m]) {
		int32_t b = victim(s, m, s->bstamp);
		if (b < 0)
			return;
		res_del(s, b, B_SPILL);
	}
}

/* Appends v to the order and updates readiness and the model. */
static void emit(lsched *s, int32_t v)
{
	const ds_graph *g = s->g;
	DS_ASSERT(!s->done[v] && s->cnt[v] == 0);
	s->order[s->len++] = v;
	s->done[v] = 1;
	s->skip[s->pos1[v]] = s->pos1[v] + 1;
	ready_del(s, v);
	s->tick++;
	if (g->kind[v] == DS_ALLOC) {
		int32_t b = g->buf[v];
		s->bmark[b] = ++s->bstamp;
		make_room(s, g->buf_mem[b], g->buf_size[b]);
		res_add(s, b);
		s->last[b] = s->tick;
		return; /* it passed readiness on when it became ready */
	}
	if (g->kind[v] == DS_FREE) {
		int32_t b = g->buf[v];
		if (s->bst[b] == B_RES)
			res_del(s, b, B_FREED);
		s->bst[b] = B_FREED;
	} else {
		if (s->posr)
			s->now_ref = s->posr[v];
		s->bstamp++;
		for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++)
			s->bmark[g->use[k]] = s->bstamp;
		for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
			int32_t b = g->use[k];
			if (s->bst[b] == B_SPILL) {
				make_room(s, g->buf_mem[b], g->buf_size[b]);
				res_add(s, b);
			} else {
				mru_unlink(s, b);
				mru_front(s, b);
			}
			s->last[b] = s->tick;
			s->rem[b]--;
			release(s, g->buf_free[b]);
		}
	}
	for (int32_t k = g->succ_off[v]; k < g->succ_off[v + 1]; k++)
		release(s, g->succ[k]);
}

/* Emits the FREEs that became ready (with the ALLOC of a buffer nobody
 * uses, which only now meets its FREE). */
static void flush_frees(lsched *s)
{
	while (s->nfrees > 0) {
		int32_t f = s->frees[--s->nfrees];
		int32_t a = s->g->buf_alloc[s->g->buf[f]];
		if (!s->done[a])
			emit(s, a);
		emit(s, f);
	}
}

/* ---- goals ---- */

/* Depth-first over unscheduled dependencies, appending in post-order (the
 * closure is emitted in that order, a topological one); false past the
 * limit, or when the closure would need a FREE. */
static bool closure_rec(lsched *s, int32_t v)
{
	const ds_graph *g = s->g;
	s->mark[v] = s->cstamp;
	for (int32_t k = s->dep.off[v]; k < s->dep.off[v + 1]; k++) {
		int32_t p = s->dep.v[k];
		if (s->done[p] || s->mark[p] == s->cstamp)
			continue;
		if (g->kind[p] == DS_FREE || s->fail[p] == s->fstamp ||
		    !closure_rec(s, p))
			return false;
	}
	if (g->kind[v] == DS_OP && ++s->nclo_ops > s->P->max_closure)
		return false;
	s->clo[s->nclo++] = v;
	return true;
}

/* The closure of v: v and every unscheduled node it waits for. */
static bool closure(lsched *s, int32_t v)
{
	s->cstamp++;
	s->nclo = 0;
	s->nclo_ops = 0;
	if (closure_rec(s, v))
		return true;
	s->fail[v] = s->fstamp; /* this step, whatever waits for v fails */
	return false;
}

/* Counts the unscheduled operations v waits for outside the current
 * closure, down from *budget; false once it runs out. */
static bool near_rec(lsched *s, int32_t v, int32_t *budget)
{
	const ds_graph *g = s->g;
	s->seen[v] = s->sstamp;
	if (g->kind[v] == DS_OP && --*budget < 0)
		return false;
	for (int32_t k = s->dep.off[v]; k < s->dep.off[v + 1]; k++) {
		int32_t p = s->dep.v[k];
		if (s->done[p] || s->mark[p] == s->cstamp ||
		    s->seen[p] == s->sstamp || g->kind[p] == DS_ALLOC)
			continue;
		if (!near_rec(s, p, budget))
			return false;
	}
	return true;
}

/* Is u near: its own closure, the current one counted as done, within
 * budget operations?  (No user at all: nothing waits.) */
static bool near(lsched *s, int32_t u, int32_t budget)
{
	if (u < 0)
		return true;
	s->sstamp++;
	return near_rec(s, u, &budget);
}

/* The next unscheduled user of b outside the current closure, or -1. */
static int32_t next_user(const lsched *s, int32_t b)
{
	for (int32_t k = s->usr.off[b]; k < s->usr.off[b + 1]; k++) {
		int32_t u = s->usr.v[k];
		if (!s->done[u] && s->mark[u] != s->cstamp)
			return u;
	}
	return -1;
}

/* Queues v as a candidate, once per step. */
static void queue(lsched *s, int32_t v)
{
	if (s->qseen[v] == s->qstamp)
		return;
	s->qseen[v] = s->qstamp;
	s->cand[s->ncand++] = v;
}

/* Scores goal v, whose closure is in clo[]; false when it gives way to the
 * user it leaves a buffer for (then queued, when push is set). */
static bool score_goal(lsched *s, int32_t v, score *out)
{
	const ds_graph *g = s->g;
	int32_t nb = 0;
	bool finishes = false, bufless = true;
	int level = 0;
	s->bstamp++;
	for (int32_t i = 0; i < s->nclo; i++) {
		int32_t x = s->clo[i];
		if (g->kind[x] != DS_OP)
			continue;
		for (int32_t k = g->use_off[x]; k < g->use_off[x + 1]; k++) {
			int32_t b = g->use[k];
			bufless = false;
			if (s->bmark[b] != s->bstamp) {
				s->bmark[b] = s->bstamp;
				s->bcnt[b] = 0;
				s->bufs[nb++] = b;
			}
			s->bcnt[b]++;
		}
	}
	int64_t need[DS_NMEM] = {0};
	for (int32_t i = 0; i < nb; i++) {
		int32_t b = s->bufs[i];
		bool last = s->bcnt[b] == s->rem[b];
		finishes |= last;
		if (s->bst[b] == B_RES)
			continue;
		need[g->buf_mem[b]] += g->buf_size[b];
		if (s->bst[b] != B_NONE || last || g->buf_copyin[b])
			continue;
		/* it leaves a new buffer waiting for more users */
		int32_t u = next_user(s, b);
		if (s->rem[b] - s->bcnt[b] == 1) {
			if (near(s, u, s->P->max_closure - s->nclo_ops)) {
				if (s->push)
					queue(s, u);
				return false;
			}
		} else if (!near(s, u, s->P->max_closure)) {
			level = 1;
		}
	}
	if (!finishes && !bufless)
		for (int32_t k = g->succ_off[v]; k < g->succ_off[v + 1]; k++)
			if (g->kind[g->succ[k]] != DS_FREE)
				level = 1;
	/* the evictions it forces, the model's victims first */
	double evict = 0;
	int32_t taken = -s->bstamp; /* never a real stamp */
	for (int m = 0; m < DS_NMEM; m++) {
		int64_t over = s->used[m] + need[m] - g->caps.cap[m];
		int32_t nt = 0;
		while (over > 0) {
			int32_t b = victim(s, m, taken);
			if (b < 0) {
				evict += 1e15; /* cannot fit: last resort */
				break;
			}
			s->bmark[b] = taken;
			s->bufs[nb + nt++] = b;
			evict += (double)ds_spill_traffic(g, b);
			over -= g->buf_size[b];
		}
		for (int32_t i = 0; i < nt; i++)
			s->bmark[s->bufs[nb + i]] = 0;
	}
	out->level = level;
	out->evict = evict;
	out->pos = s->pos1[v];
	return true;
}

static bool better(const score *a, const score *b)
{
	if (a->level != b->level)
		return a->level < b->level;
	if (a->evict != b->evict)
		return a->evict < b->evict;
	return a->pos < b->pos;
}

/* Anchor position of the first unscheduled operation at or after position
 * i (n when none): union-find with path halving over the anchor order. */
static int32_t skip_find(lsched *s, int32_t i)
{
	while (s->skip[i] != i) {
		s->skip[i] = s->skip[s->skip[i]];
		i = s->skip[i];
	}
	return i;
}

/* The best goal among the candidates (wide: a larger window, every resident
 * buffer), and its level (2 when there is none). */
static int32_t pick_goal(lsched *s, bool wide, int *level)
{
	int32_t window = wide ? 4 * s->P->window : s->P->window;
	int32_t seeds = wide ? INT32_MAX : s->P->seeds;
	int32_t best = -1;
	score bs = {0, 0, 0};
	s->qstamp++;
	s->fstamp++;
	s->ncand = 0;
	for (int32_t i = skip_find(s, 0), k = 0; i < s->g->n && k < window;
	     i = skip_find(s, i + 1), k++)
		queue(s, s->ord1[i]);
	for (int32_t b = s->mru_head, k = 0; b >= 0 && k < seeds;
	     b = s->mru_next[b], k++)
		for (int32_t j = s->usr.off[b], f = 0;
		     j < s->usr.off[b + 1] && f < s->P->fan; j++)
			if (!s->done[s->usr.v[j]]) {
				queue(s, s->usr.v[j]);
				f++;
			}
	s->push = true;
	for (int32_t i = 0; i < s->ncand; i++) {
		int32_t v = s->cand[i];
		score sc;
		if (!closure(s, v) || !score_goal(s, v, &sc))
			continue;
		if (best < 0 || better(&sc, &bs)) {
			best = v;
			bs = sc;
		}
	}
	s->push = false;
	*level = best < 0 ? 2 : bs.level;
	return best;
}

static int build_lists(lsched *s)
{
	const ds_graph *g = s->g;
	const ds_heap *h = s->h;
	const int32_t n = g->n, nb = g->nbuf;
	s->dep.off = ds_alloc(h, (size_t)n + 1, sizeof(int32_t));
	s->usr.off = ds_alloc(h, (size_t)nb + 1, sizeof(int32_t));
	s->usr.v = ds_alloc(h, (size_t)g->user_off[nb] + 1, sizeof(int32_t));
	if (!s->dep.off || !s->usr.off || !s->usr.v)
		return DS_ENOMEM;
	for (int32_t v = 0; v < n; v++) {
		int32_t nd = g->pred_off[v + 1] - g->pred_off[v];
		if (g->kind[v] == DS_OP)
			nd += g->use_off[v + 1] - g->use_off[v];
		s->dep.off[v + 1] = s->dep.off[v] + nd;
	}
	s->dep.v = ds_alloc(h, (size_t)s->dep.off[n] + 1, sizeof(int32_t));
	if (!s->dep.v)
		return DS_ENOMEM;
	for (int32_t v = 0; v < n; v++) {
		int32_t *d = s->dep.v + s->dep.off[v];
		for (int32_t k = g->pred_off[v]; k < g->pred_off[v + 1]; k++)
			*d++ = g->pred[k];
		if (g->kind[v] == DS_OP)
			for (int32_t k = g->use_off[v]; k < g->use_off[v + 1];
			     k++)
				*d++ = g->buf_alloc[g->use[k]];
	}
	memcpy(s->usr.off, g->user_off, ((size_t)nb + 1) * sizeof(int32_t));
	memcpy(s->usr.v, g->user, (size_t)g->user_off[nb] * sizeof(int32_t));
	sort_lists(s->pos1, &s->dep, n);
	sort_lists(s->pos1, &s->usr, nb);
	if (s->posr) {
		s->rusr.off = ds_alloc(h, (size_t)nb + 1, sizeof(int32_t));
		s->rusr.v = ds_alloc(h, (size_t)g->user_off[nb] + 1,
				     sizeof(int32_t));
		s->rptr = ds_alloc(h, (size_t)nb, sizeof(int32_t));
		if (!s->rusr.off || !s->rusr.v || !s->rptr)
			return DS_ENOMEM;
		memcpy(s->rusr.off, g->user_off,
		       ((size_t)nb + 1) * sizeof(int32_t));
		memcpy(s->rusr.v, g->user,
		       (size_t)g->user_off[nb] * sizeof(int32_t));
		sort_lists(s->posr, &s->rusr, nb);
		for (int32_t b = 0; b < nb; b++)
			s->rptr[b] = s->rusr.off[b];
	}
	return DS_OK;
}

static void ls_free(lsched *s)
{
	const ds_heap *h = s->h;
	void *p[] = {s->dep.off, s->dep.v,   s->usr.off,   s->usr.v,
		     s->rusr.off, s->rusr.v, s->rptr,      s->cnt,
		     s->done,	  s->ready_at, s->ready,   s->mark,
		     s->seen,	  s->qseen,  s->fail,      s->ord1,
		     s->skip,	  s->bst,    s->rem,	   s->last,
		     s->bmark,	  s->bcnt,   s->res_at,    s->mru_prev,
		     s->mru_next, s->clo,    s->cand,	   s->bufs,
		     s->frees};
	for (size_t i = 0; i < sizeof p / sizeof *p; i++)
		ds_free(h, p[i]);
	for (int m = 0; m < DS_NMEM; m++)
		ds_free(h, s->res[m]);
}

/* One run: order[] gets a topological order of all n nodes. */
static int ls_run(const ds_graph *g, const int32_t *pos1,
		  const int32_t *posr, const lsp *P, int32_t *order, ds_err *e)
{
	const ds_heap *h = g->heap;
	const int32_t n = g->n, nb = g->nbuf;
	lsched s;
	memset(&s, 0, sizeof s);
	s.g = g;
	s.P = P;
	s.h = h;
	s.pos1 = pos1;
	s.posr = posr;
	s.order = order;
	s.cnt = ds_alloc(h, (size_t)n, sizeof *s.cnt);
	s.done = ds_alloc(h, (size_t)n, 1);
	s.ready_at = ds_alloc(h, (size_t)n, sizeof *s.ready_at);
	s.ready = ds_alloc(h, (size_t)n, sizeof *s.ready);
	s.mark = ds_alloc(h, (size_t)n, sizeof *s.mark);
	s.seen = ds_alloc(h, (size_t)n, sizeof *s.seen);
	s.qseen = ds_alloc(h, (size_t)n, sizeof *s.qseen);
	s.fail = ds_alloc(h, (size_t)n, sizeof *s.fail);
	s.ord1 = ds_alloc(h, (size_t)n, sizeof *s.ord1);
	s.skip = ds_alloc(h, (size_t)n + 1, sizeof *s.skip);
	s.clo = ds_alloc(h, (size_t)n, sizeof *s.clo);
	s.cand = ds_alloc(h, (size_t)n, sizeof *s.cand);
	s.frees = ds_alloc(h, (size_t)n, sizeof *s.frees);
	s.bst = ds_alloc(h, (size_t)nb, 1);
	s.rem = ds_alloc(h, (size_t)nb, sizeof *s.rem);
	s.last = ds_alloc(h, (size_t)nb, sizeof *s.last);
	s.bmark = ds_alloc(h, (size_t)nb, sizeof *s.bmark);
	s.bcnt = ds_alloc(h, (size_t)nb, sizeof *s.bcnt);
	s.res_at = ds_alloc(h, (size_t)nb, sizeof *s.res_at);
	s.mru_prev = ds_alloc(h, (size_t)nb, sizeof *s.mru_prev);
	s.mru_next = ds_alloc(h, (size_t)nb, sizeof *s.mru_next);
	s.bufs = ds_alloc(h, (size_t)nb * 2, sizeof *s.bufs);
	bool ok = s.cnt && s.done && s.ready_at && s.ready && s.mark &&
		  s.seen && s.qseen && s.fail && s.ord1 && s.skip && s.clo &&
		  s.cand && s.frees && s.bst && s.rem && s.last && s.bmark &&
		  s.bcnt && s.res_at && s.mru_prev && s.mru_next && s.bufs;
	for (int m = 0; ok && m < DS_NMEM; m++) {
		s.res[m] = ds_alloc(h, (size_t)nb, sizeof *s.res[m]);
		ok = s.res[m] != NULL;
	}
	int rc = DS_OK;
	if (!ok || build_lists(&s)) {
		rc = ds_fail(e, DS_ENOMEM, "out of memory");
		goto out;
	}
	/* stamps start above the zeroed marks */
	s.cstamp = s.sstamp = s.qstamp = s.fstamp = s.bstamp = 1;
	s.mru_head = -1;
	for (int32_t b = 0; b < nb; b++) {
		s.rem[b] = g->user_off[b + 1] - g->user_off[b];
		s.cnt[g->buf_free[b]] += s.rem[b];
	}
	/* the window skips ALLOCs and FREEs: they are never goals */
	for (int32_t v = 0; v < n; v++) {
		s.ord1[pos1[v]] = v;
		s.skip[pos1[v]] = g->kind[v] == DS_OP ? pos1[v] : pos1[v] + 1;
	}
	s.skip[n] = n;
	for (int32_t v = 0; v < n; v++) {
		s.ready_at[v] = -1;
		s.cnt[v] += g->pred_off[v + 1] - g->pred_off[v];
		if (g->kind[v] == DS_OP)
			s.cnt[v] += g->use_off[v + 1] - g->use_off[v];
	}
	/* nodes without dependencies, marked first so that readiness passed
	 * on by one of them does not count another twice */
	for (int32_t v = 0; v < n; v++)
		if (s.cnt[v] == 0)
			s.mark[v] = 1;
	for (int32_t v = 0; v < n; v++)
		if (s.mark[v] == 1) {
			s.mark[v] = 0;
			became_ready(&s, v);
		}
	flush_frees(&s);
	while (s.len < n) {
		int level;
		int32_t goal = pick_goal(&s, false, &level);
		if (level > 0) {
			/* look further before breaking a rule */
			int wlevel;
			int32_t w = pick_goal(&s, true, &wlevel);
			if (wlevel <= level)
				goal = w;
		}
		if (goal >= 0) {
			bool okc = closure(&s, goal);
			DS_ASSERT(okc);
			(void)okc;
		} else {
			/* no candidate at all: the first ready operation of
			 * the anchor order, with its pending ALLOCs */
			for (int32_t i = 0; i < s.nready; i++)
				if (goal < 0 || pos1[s.ready[i]] < pos1[goal])
					goal = s.ready[i];
			DS_ASSERT(goal >= 0);
			s.nclo = 0;
			for (int32_t k = s.dep.off[goal];
			     k < s.dep.off[goal + 1]; k++)
				if (!s.done[s.dep.v[k]])
					s.clo[s.nclo++] = s.dep.v[k];
			s.clo[s.nclo++] = goal;
		}
		for (int32_t i = 0; i < s.nclo; i++) {
			if (s.done[s.clo[i]])
				continue;
			emit(&s, s.clo[i]);
			flush_frees(&s);
		}
	}
	DS_ASSERT(s.len == n);
out:
	ls_free(&s);
	return rc;
}

/* ---- candidates ---- */

typedef struct best {
	ds_plan plan;
	ds_figures f;
	bool have;
	int64_t last; /* least extra_ddr of the last try_order's plans */
} best;

/* Places order with o, measures the plan, keeps it when it beats *b. */
static int try_place(const ds_graph *g, const int32_t *order,
		     const ds_place_opts *o, best *b, ds_err *e)
{
	ds_plan p;
	int rc = ds_place(g, order, o, &p, e);
	if (rc)
		return rc;
	ds_figures f;
	rc = ds_replay(g, &p, NULL, &f, e);
	/* ds_place's plans are valid by construction */
	DS_ASSERT(rc != DS_EPLAN);
	if (rc) {
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
static int try_order(const ds_graph *g, const int32_t *order, best *b,
		     ds_err *e)
{
	ds_place_opts o = {DS_BEST_FIT, DS_VICTIM_FURTHEST};
	b->last = INT64_MAX;
	int rc = try_place(g, order, &o, b, e);
	if (rc)
		return rc;
	o.victim = DS_VICTIM_COST;
	return try_place(g, order, &o, b, e);
}

/* pos[v] = place of node v in the order of plan p, spill nodes left out. */
static void plan_positions(const ds_graph *g, const ds_plan *p, int32_t *pos)
{
	int32_t len = 0;
	for (int32_t i = 0; i < p->len; i++)
		if (p->order[i] < g->n)
			pos[p->order[i]] = len++;
}

static const lsp sched_params = {6, 3, 8, 16};

/* Simulations tried at the turns per unit of effort: TURN_TRIES at most,
 * and no more than TURN_WORK nodes placed in all (each try places the
 * whole graph), so that large graphs stay linear: 12 tries at 30,000
 * nodes, none from 400,000 on. */
enum { TURN_TRIES = 24, TURN_WORK = 400000 };

/* The simulation's order ref (its chain starts; turns[] as ch_turn left
 * them; placed, it costs cost) taken the other way at its turns, one at a
 * time from the first: the simulation is rerun with the starts before the
 * turn and the two chains ch_turn proposed forced, and the new order,
 * placed, replaces ref when it costs less (its own later turns then being
 * the ones tried).  A greedy that always turns the cheap way leaves the
 * remaining work in ever shorter bands, each reloading its stationary
 * data; keeping the common inputs keeps the bands long.  At most
 * max_tries simulations, each O(one simulation + placement).  turns[] is
 * overwritten. */
static int order_turns(const ds_graph *g, const int32_t *order,
		       const int32_t *pos1, const int32_t *ref0, int32_t *turns,
		       int64_t cost, int64_t max_tries, best *b, ds_err *e)
{
	const ds_heap *h = g->heap;
	const size_t nb = (size_t)g->nbuf;
	int32_t *pre = ds_alloc(h, nb + 2, sizeof *pre);
	int32_t *ref = ds_alloc(h, nb + 1, sizeof *ref);
	int32_t *ref2 = ds_alloc(h, nb + 1, sizeof *ref2);
	int32_t *turns2 = ds_alloc(h, 2 * nb + 2, sizeof *turns2);
	int32_t *ord = ds_alloc(h, (size_t)g->n, sizeof *ord);
	int rc = DS_OK;
	if (!pre || !ref || !ref2 || !turns2 || !ord) {
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
		if ((rc = order_chains(g, order, pos1, &co, ord, &chains, e)) ||
		    (rc = try_order(g, ord, b, e)))
			goto out;
		tries++;
		if (b->last < cost) {
			cost = b->last;
			memcpy(ref, ref2, nb * sizeof *ref);
			memcpy(turns, turns2, (2 * nb + 2) * sizeof *turns);
		}
	}
out:
	ds_free(h, pre);
	ds_free(h, ref);
	ds_free(h, ref2);
	ds_free(h, turns2);
	ds_free(h, ord);
	return rc;
}

/* Work units (inputs and users visited) of the reuse pilot per unit of
 * effort: a pass over a few hundred chains at the default. */
static const int64_t pilot_work = 40000000;
/* Work units (accesses and resident inputs visited by evaluations) of the
 * improvement per unit of effort. */
static const int64_t improve_work = 20000000;
/* A lite run's pilot gets this part of the budget (and no nested pilot
 * and no improvement): enough to tell the starts worth a full run. */
static const int64_t lite_share = 10;
/* Work units of the nested pilot per unit of effort. */
static const int64_t nest_work = 80000000;

int ds_dlr(const ds_graph *g, const int32_t *order, const ds_dlr_opts *o,
	   ds_plan *out, ds_err *e)
{
	const ds_heap *h = g->heap;
	memset(out, 0, sizeof *out);
	int rc = ds_order_check(g, order, "dlr", e);
	if (rc == DS_OK)
		rc = ds_check_fits(g, e);
	if (rc)
		return rc;
	int64_t effort = o && o->effort > 0 ? o->effort : 1;
	bool lite = o && o->lite;
	int32_t *pos1 = ds_alloc(h, (size_t)g->n, sizeof *pos1);
	int32_t *ord = ds_alloc(h, (size_t)g->n, sizeof *ord);
	int32_t *anchor = ds_alloc(h, (size_t)g->n, sizeof *anchor);
	int32_t *posr = ds_alloc(h, (size_t)g->n, sizeof *posr);
	int32_t *chref = ds_alloc(h, (size_t)g->nbuf + 1, sizeof *chref);
	/* the pilot's alternative chain orders (chains are buffers) */
	int32_t *chalt = ds_alloc(h, 2 * (size_t)g->nbuf + 1, sizeof *chalt);
	/* the simulation's turns (ch_turn), two chains per start */
	int32_t *turns = ds_alloc(h, 2 * (size_t)g->nbuf + 2, sizeof *turns);
	best b;
	memset(&b, 0, sizeof b);
	if (!pos1 || !ord || !anchor || !posr || !chref || !chalt || !turns) {
		rc = ds_fail(e, DS_ENOMEM, "out of memory");
		goto out;
	}
	for (int32_t i = 0; i < g->n; i++)
		pos1[order[i]] = i;
	for (int32_t i = 0; i < 2 * g->nbuf + 2; i++)
		turns[i] = -1;
	if ((rc = try_order(g, order, &b, e)))
		goto out;
	for (int pull = 0; pull < 2; pull++)
		if ((rc = order_follow(g, order, pos1, NULL, pull, ord, e)) ||
		    (rc = try_order(g, ord, &b, e)))
			goto out;
	/* the chain order, with the inputs' memory modelled at a few sizes
	 * (more with effort) */
	static const double shares[] = {1.0, 0.75, 0.5, 1.25, 1.5};
	size_t nshares = effort > 1 ? sizeof shares / sizeof *shares : 2;
	bool have_chains = false;
	int64_t ref_ddr = 0;
	for (size_t k = 0; k < nshares; k++) {
		bool chains;
		chopts co = {.share = shares[k],
			     .ref_out = k == 0 ? chref : NULL,
			     .turn_out = k == 0 && !lite ? turns : NULL};
		if ((rc = order_chains(g, order, pos1, &co, ord, &chains, e)) ||
		    (chains && (rc = try_order(g, ord, &b, e))))
			goto out;
		have_chains = chains;
		if (k == 0)
			ref_ddr = b.last;
		if (!chains)
			break;
	}
	int64_t turn_tries = TURN_WORK * effort / (g->n > 0 ? g->n : 1);
	if (turn_tries > TURN_TRIES * effort)
		turn_tries = TURN_TRIES * effort;
	if (have_chains && !lite && turn_tries > 0 &&
	    (rc = order_turns(g, order, pos1, chref, turns, ref_ddr,
			      turn_tries, &b, e)))
		goto out;
	/* the chain order the pilot finds, the nested pilot and the
	 * improvement refining it, each placed (the model's gain is not
	 * always the placement's); with effort, also with budgets that much
	 * larger (the default's orders are among the candidates still) */
	for (int64_t lvl = 1; have_chains && lvl <= effort;
	     lvl = lvl < effort ? effort : lvl + 1) {
		bool chains;
		int32_t nalt = 0;
		chopts co = {.share = 1.0,
			     .pilot = pilot_work * lvl / (lite ? lite_share : 1),
			     .nest = lite ? 0 : nest_work * lvl,
			     .ref = chref,
			     .ref_ddr = ref_ddr,
			     .improve = lite ? 0 : improve_work * lvl,
			     .alt = chalt,
			     .nalt = &nalt};
		if ((rc = order_chains(g, order, pos1, &co, ord, &chains, e)) ||
		    (chains && (rc = try_order(g, ord, &b, e))))
			goto out;
		for (int32_t k = 0; chains && k < nalt; k++) {
			chopts fo = {.share = 1.0,
				     .force = chalt +
					      (size_t)k * (size_t)g->nbuf};
			if ((rc = order_chains(g, order, pos1, &fo, ord, &chains,
					       e)) ||
			    (rc = try_order(g, ord, &b, e)))
				goto out;
		}
	}
	/* the scheduler follows the best order so far where it has no reason
	 * to differ; then, each round, it also takes that plan's next uses
	 * as the forecast for its evictions */
	plan_positions(g, &b.plan, anchor);
	if (!lite && ((rc = ls_run(g, anchor, NULL, &sched_params, ord, e)) ||
		      (rc = try_order(g, ord, &b, e))))
		goto out;
	for (int64_t r = 0; r < effort && !lite; r++) {
		plan_positions(g, &b.plan, posr);
		if ((rc = ls_run(g, anchor, posr, &sched_params, ord, e)) ||
		    (rc = try_order(g, ord, &b, e)))
			goto out;
	}
	*out = b.plan;
	b.have = false;
out:
	if (b.have)
		ds_plan_free(h, &b.plan);
	ds_free(h, pos1);
	ds_free(h, ord);
	ds_free(h, anchor);
	ds_free(h, posr);
	ds_free(h, chref);
	ds_free(h, chalt);
	ds_free(h, turns);
	return rc;
}
