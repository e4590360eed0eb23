/* ds_pull.c: an order that pulls the uses a plan's spills separate.
 *
 * A plan's first spill of buffer b stands between two uses of b: the
 * last use before its SPILL_OUT and the first after it.  Where the later
 * use depends directly on the earlier one (an order constraint) and
 * could run right after it, the spill is the price of running other work
 * between them (FlashAttention_Case1: S tiles written by their copies,
 * spilled at once, read by their first vector op tens of thousands of
 * cycles later).  This order is the plan's own, except that each such
 * later use moves up to right after the earlier one, with the ALLOCs it
 * needs, and the FREEs it makes ready follow it; a moved use is itself an
 * earlier use for the pairs it starts.  Placing the order again (DLR)
 * then measures whether that pays.  With direct false, any two uses
 * around a first spill make a pair, the dependence or not: on its own
 * that found nothing below DLR's 21,504 bytes on FlashAttention_Case1,
 * but 1,024 bytes on FlashAttention_Case0 (DLR 1,280), so the pipeline
 * runs the direct rounds first, then an undirected one (dlr_pulled,
 * ds_dlr_stage.c).
 * ds_pull_pairs lists those pairs (undirected), or the pairs around each
 * later spill of a buffer (its reloaded data spilled again before a
 * later use); ds_order_pull_one moves one later use up together with
 * the ancestors that stand between the two (a load of its weights
 * placed after the earlier use, say), which ds_order_pull cannot: the
 * pipeline tries such pulls one pair at a time on CPE's backbone
 * (backbone_pulled, Conv_Case0's CONV 89).
 *
 * Requires: a valid graph and a plan for it whose order ds_replay
 * accepts (spill nodes included); ds_order_pull_one, a topological
 * order of the n nodes.  Guarantees: ds_order_pull, a topological order
 * of the n graph nodes (of the order constraints, g->pred), the plan's
 * order with its spill nodes dropped where no use moves, *moved counting
 * the uses moved; ds_order_pull_one, its order with the one pull made, a
 * topological order still.  Only the graph's constraints and the plan's
 * positions decide, no operator name or shape.
 *
 * Cost: O(N + E + S U) time, S spills, U the most uses of one buffer;
 * O(N + S) memory; no recursion (an explicit stack).  ds_pull_pairs:
 * O(len + nbuf + S U); ds_order_pull_one: O(N + E), O(N) memory. */
#include "ds_stage.h"

#include <string.h>

/* The work: the plan's positions, the pairs (earlier use -> later use,
 * CSR by the earlier), and the order being built. */
typedef struct pull_ctx {
	const ds_graph *g;
	int32_t *pos;	  /* [n] position in the plan's order */
	int32_t *to_off;  /* [n+1] CSR: the later uses of each earlier one */
	int32_t *to;
	bool *done;	  /* [n] already in the order */
	int32_t *stack;	  /* [2n] frames: node, then next pair index */
	int32_t *tmp;	  /* [n] the ALLOCs or FREEs one use readies */
	int32_t *order;
	int32_t len;
	int32_t moved;
	bool direct;	  /* only pairs whose later use depends on the
			     earlier one */
} pull_ctx;

/* The uses of b on each side of position so: the last before it (*a),
 * the first after it (*c); -1 when none. */
static void uses_around(const pull_ctx *x, int32_t b, int32_t so,
			int32_t *a, int32_t *c)
{
	const ds_graph *g = x->g;
	*a = *c = -1;
	for (int32_t k = g->user_off[b]; k < g->user_off[b + 1]; k++) {
		int32_t u = g->user[k];
		if (x->pos[u] < so && (*a < 0 || x->pos[u] > x->pos[*a]))
			*a = u;
		if (x->pos[u] > so && (*c < 0 || x->pos[u] < x->pos[*c]))
			*c = u;
	}
}

/* c has a if among its direct predecessors (order constraints). */
static bool depends(const ds_graph *g, int32_t a, int32_t c)
{
	for (int32_t k = g->pred_off[c]; k < g->pred_off[c + 1]; k++)
		if (g->pred[k] == a)
			return true;
	return false;
}

/* x->pos[v] = node v's line in p; first[b] = the line of buffer b's
 * first SPILL_OUT, -1 when it has none. */
static void first_spills(pull_ctx *x, const ds_plan *p, int32_t *first)
{
	const ds_graph *g = x->g;
	for (int32_t b = 0; b < g->nbuf; b++)
		first[b] = -1;
	for (int32_t i = 0; i < p->len; i++) {
		int32_t v = p->order[i];
		if (v < g->n)
			x->pos[v] = i;
		else if ((v - g->n) % 2 == 0 &&
			 first[p->spill[(v - g->n) / 2].buf] < 0)
			first[p->spill[(v - g->n) / 2].buf] = i;
	}
}

/* Whether line i of p is its buffer's first SPILL_OUT (first[], from
 * first_spills; with later, one of its SPILL_OUTs after the first) with
 * a use on each side, *a before and *c after (with x->direct, c
 * depending on a): a pair. */
static bool pair_at(const pull_ctx *x, const ds_plan *p,
		    const int32_t *first, int32_t i, bool later, int32_t *a,
		    int32_t *c)
{
	const ds_graph *g = x->g;
	int32_t v = p->order[i];
	if (v < g->n || (v - g->n) % 2 != 0)
		return false;
	int32_t b = p->spill[(v - g->n) / 2].buf;
	if ((first[b] != i) != later)
		return false;
	uses_around(x, b, i, a, c);
	return *a >= 0 && *c >= 0 && (!x->direct || depends(g, *a, *c));
}

/* The pairs: per spilled buffer, its first SPILL_OUT's uses around it.
 * first[] (scratch, [nbuf]) gets each buffer's first SPILL_OUT
 * position. */
static int build_pairs(pull_ctx *x, const ds_plan *p, int32_t *first,
		       ds_err *e)
{
	const ds_graph *g = x->g;
	first_spills(x, p, first);
	/* count, then fill (two passes over the buffers, in the order of
	 * their first SPILL_OUTs, not in the BufIds') */
	for (int pass = 0; pass < 2; pass++) {
		for (int32_t i = 0; i < p->len; i++) {
			int32_t a, c;
			if (!pair_at(x, p, first, i, false, &a, &c))
				continue;
			if (pass == 0)
				x->to_off[a + 1]++;
			else
				x->to[x->to_off[a + 1]++] = c;
		}
		if (pass == 0) {
			for (int32_t v = 0; v < g->n; v++)
				x->to_off[v + 1] += x->to_off[v];
			x->to = ds_alloc(g->heap, (size_t)x->to_off[g->n] + 1,
					 sizeof *x->to);
			if (!x->to)
				return ds_fail(e, DS_ENOMEM, "out of memory");
			/* the fill pass advances to_off[v + 1] from v's
			 * start to its end */
			for (int32_t v = g->n; v > 0; v--)
				x->to_off[v] = x->to_off[v - 1];
			x->to_off[0] = 0;
		}
	}
	return DS_OK;
}

/* w can run now: each predecessor is in the order or an ALLOC that
 * needs nothing (it is added right before w). */
static bool ready(const pull_ctx *x, int32_t w)
{
	const ds_graph *g = x->g;
	for (int32_t k = g->pred_off[w]; k < g->pred_off[w + 1]; k++) {
		int32_t u = g->pred[k];
		if (!x->done[u] && !(g->kind[u] == DS_ALLOC &&
				     g->pred_off[u] == g->pred_off[u + 1]))
			return false;
	}
	return true;
}

static void put(pull_ctx *x, int32_t v)
{
	x->done[v] = true;
	x->order[x->len++] = v;
}

/* Puts x->tmp[0..k) in plan position order (insertion: a use readies
 * a few ALLOCs or FREEs at a time), not in the Ids'. */
static void put_by_position(pull_ctx *x, int32_t k)
{
	int32_t *t = x->tmp;
	for (int32_t i = 1; i < k; i++) {
		int32_t y = t[i], j = i;
		for (; j > 0 && x->pos[t[j - 1]] > x->pos[y]; j--)
			t[j] = t[j - 1];
		t[j] = y;
	}
	for (int32_t i = 0; i < k; i++)
		put(x, t[i]);
}

/* The FREEs w's run made ready. */
static void put_frees(pull_ctx *x, int32_t w)
{
	const ds_graph *g = x->g;
	int32_t nt = 0;
	for (int32_t k = g->succ_off[w]; k < g->succ_off[w + 1]; k++) {
		int32_t f = g->succ[k];
		if (g->kind[f] == DS_FREE && !x->done[f] && ready(x, f))
			x->tmp[nt++] = f;
	}
	put_by_position(x, nt);
}

/* v, then depth first each later use of a pair v starts that can run,
 * with its ALLOCs before it and the FREEs it made ready after what it
 * pulled in turn. */
static void put_pulling(pull_ctx *x, int32_t v)
{
	const ds_graph *g = x->g;
	int32_t sp = 0;
	put(x, v);
	x->stack[sp++] = v;
	x->stack[sp++] = x->to_off[v];
	while (sp > 0) {
		int32_t u = x->stack[sp - 2], k = x->stack[sp - 1];
		if (k == x->to_off[u + 1]) {
			sp -= 2;
			if (sp > 0) /* u was pulled */
				put_frees(x, u);
			continue;
		}
		x->stack[sp - 1] = k + 1;
		int32_t w = x->to[k];
		if (x->done[w] || g->kind[w] != DS_OP || !ready(x, w))
			continue;
		int32_t nt = 0;
		for (int32_t j = g->pred_off[w]; j < g->pred_off[w + 1]; j++)
			if (!x->done[g->pred[j]])
				x->tmp[nt++] = g->pred[j];
		put_by_position(x, nt);
		put(x, w);
		x->moved++;
		x->stack[sp++] = w;
		x->stack[sp++] = x->to_off[w];
	}
}

int ds_order_pull(const ds_graph *g, const ds_plan *p, bool direct,
		  int32_t *order, int32_t *moved, ds_err *e)
{
	const ds_heap *h = g->heap;
	const int32_t n = g->n;
	pull_ctx x = {.g = g, .order = order, .direct = direct};
	int32_t *first = ds_alloc(h, (size_t)g->nbuf + 1, sizeof *first);
	x.pos = ds_alloc(h, (size_t)n, sizeof *x.pos);
	x.to_off = ds_alloc(h, (size_t)n + 1, sizeof *x.to_off);
	x.done = ds_alloc(h, (size_t)n, sizeof *x.done);
	x.stack = ds_alloc(h, 2 * (size_t)n, sizeof *x.stack);
	x.tmp = ds_alloc(h, (size_t)n + 1, sizeof *x.tmp);
	int rc = DS_OK;
	if (!first || !x.pos || !x.to_off || !x.done || !x.stack || !x.tmp)
		rc = ds_fail(e, DS_ENOMEM, "out of memory");
	if (rc == DS_OK)
		rc = build_pairs(&x, p, first, e);
	for (int32_t i = 0; i < p->len && rc == DS_OK; i++)
		if (p->order[i] < n && !x.done[p->order[i]])
			put_pulling(&x, p->order[i]);
	DS_ASSERT(rc || x.len == n);
	*moved = x.moved;
	ds_free(h, first);
	ds_free(h, x.pos);
	ds_free(h, x.to_off);
	ds_free(h, x.to);
	ds_free(h, x.done);
	ds_free(h, x.stack);
	ds_free(h, x.tmp);
	return rc;
}

int ds_pull_pairs(const ds_graph *g, const ds_plan *p, bool later,
		  int32_t max, int32_t *early, int32_t *late, int32_t *count,
		  ds_err *e)
{
	const ds_heap *h = g->heap;
	pull_ctx x = {.g = g};
	x.pos = ds_alloc(h, (size_t)g->n + 1, sizeof *x.pos);
	int32_t *first = ds_alloc(h, (size_t)g->nbuf + 1, sizeof *first);
	*count = 0;
	if (!x.pos || !first) {
		ds_free(h, x.pos);
		ds_free(h, first);
		return ds_fail(e, DS_ENOMEM, "out of memory");
	}
	first_spills(&x, p, first);
	for (int32_t i = 0; i < p->len && *count < max; i++)
		if (pair_at(&x, p, first, i, later, &early[*count],
			    &late[*count]))
			(*count)++;
	ds_free(h, x.pos);
	ds_free(h, first);
	return DS_OK;
}

int ds_order_pull_one(const ds_graph *g, int32_t *order, int32_t a,
		      int32_t c, int32_t *moved, ds_err *e)
{
	const int32_t n = g->n;
	int32_t pa = -1, pc = -1;
	*moved = 0;
	for (int32_t i = 0; i < n; i++) {
		pa = order[i] == a ? i : pa;
		pc = order[i] == c ? i : pc;
	}
	if (pa < 0 || pc <= pa + 1)
		return DS_OK;
	bool *anc = ds_alloc(g->heap, (size_t)n, sizeof *anc);
	int32_t *tmp = ds_alloc(g->heap, (size_t)(pc - pa), sizeof *tmp);
	if (!anc || !tmp) {
		ds_free(g->heap, anc);
		ds_free(g->heap, tmp);
		return ds_fail(e, DS_ENOMEM, "out of memory");
	}
	/* c's ancestors after a: a node is one when a marked node after it
	 * needs it (the order is topological) */
	anc[c] = true;
	for (int32_t i = pc; i > pa; i--) {
		int32_t v = order[i];
		if (anc[v])
			for (int32_t k = g->pred_off[v]; k < g->pred_off[v + 1];
			     k++)
				anc[g->pred[k]] = true;
	}
	int32_t k = 0;
	for (int32_t i = pa + 1; i <= pc; i++) {
		int32_t v = order[i];
		if (!anc[v])
			continue;
		tmp[k++] = v;
		/* what ds_order_pull brings along too: c's ALLOCs that need
		 * nothing */
		*moved += v != c && !(g->kind[v] == DS_ALLOC &&
				      g->pred_off[v] == g->pred_off[v + 1]);
	}
	if (k == pc - pa)
		*moved = 0; /* all of them stand there already */
	for (int32_t i = pa + 1; i <= pc; i++)
		if (!anc[order[i]])
			tmp[k++] = order[i];
	memcpy(order + pa + 1, tmp, (size_t)(pc - pa) * sizeof *tmp);
	ds_free(g->heap, anc);
	ds_free(g->heap, tmp);
	return DS_OK;
}
