/* ds_order.c: simple orders: the Id order (repaired), Kahn's algorithm
 * with a key (the free-first order and the baselines' orders use it);
 * and an order's peak_vstay.
 *
 * Requires: a valid graph.  Guarantees: a topological order of all n nodes
 * (of the order constraints, g->pred).
 * The free-first order also keeps at most one live buffer in each L0 memory
 * whenever that is possible without a deadlock: an L0 ALLOC waits while
 * another buffer of its memory is live, unless nothing else can run.
 *
 * Cost: O((N + E) log N) with a binary heap of ready nodes. */
#include "ds_stage.h"

#include <string.h>

/* Every node the same key: Kahn takes the least ready Id. */
static int64_t key_none(const ds_graph *g, void *ctx, int32_t v)
{
	(void)g;
	(void)ctx;
	(void)v;
	return 0;
}

/* SPEC.md does not ask for Ids in a topological order: the Id order
 * repaired, Kahn taking the least ready Id, which is 0..n-1 itself where
 * the Ids are topological (then the least unscheduled Id is always
 * ready). */
int ds_order_id(const ds_graph *g, int32_t *order, ds_err *e)
{
	return ds_order_kahn(g, key_none, NULL, false, order, e);
}

int64_t ds_order_peak(const ds_graph *g, const int32_t *order,
		      bool *one_live)
{
	int64_t cur = 0, peak = 0;
	int32_t live[DS_NMEM] = {0};
	bool ok = true;
	for (int32_t i = 0; i < g->n; i++) {
		int32_t x = order[i];
		if (g->kind[x] == DS_OP)
			continue;
		int32_t b = g->buf[x];
		int m = g->buf_mem[b];
		int d = g->kind[x] == DS_ALLOC ? 1 : -1;
		if (ds_mem_stays(m)) {
			cur += d * g->buf_size[b];
			if (cur > peak)
				peak = cur;
		} else if ((live[m] += d) > 1) {
			ok = false;
		}
	}
	if (one_live)
		*one_live = ok;
	return peak;
}

/* ---- a binary min-heap of (key, node) ---- */

void ds_heapq_push(ds_heapq *q, int64_t key, int32_t v)
{
	int32_t i = q->n++;
	while (i > 0) {
		int32_t up = (i - 1) / 2;
		if (q->key[up] < key || (q->key[up] == key && q->node[up] < v))
			break;
		q->key[i] = q->key[up];
		q->node[i] = q->node[up];
		i = up;
	}
	q->key[i] = key;
	q->node[i] = v;
}

int32_t ds_heapq_pop(ds_heapq *q)
{
	int32_t top = q->node[0];
	int64_t key = q->key[--q->n];
	int32_t v = q->node[q->n];
	int32_t i = 0;
	for (;;) {
		int32_t c = 2 * i + 1;
		if (c >= q->n)
			break;
		if (c + 1 < q->n &&
		    (q->key[c + 1] < q->key[c] ||
		     (q->key[c + 1] == q->key[c] && q->node[c + 1] < q->node[c])))
			c++;
		if (key < q->key[c] || (key == q->key[c] && v < q->node[c]))
			break;
		q->key[i] = q->key[c];
		q->node[i] = q->node[c];
		i = c;
	}
	q->key[i] = key;
	q->node[i] = v;
	return top;
}

int ds_heapq_init(ds_heapq *q, const ds_heap *h, int32_t cap)
{
	memset(q, 0, sizeof *q);
	q->h = h;
	q->key = ds_alloc(h, (size_t)cap, sizeof *q->key);
	q->node = ds_alloc(h, (size_t)cap, sizeof *q->node);
	return q->key && q->node ? DS_OK : DS_ENOMEM;
}

void ds_heapq_free(ds_heapq *q)
{
	ds_free(q->h, q->key);
	ds_free(q->h, q->node);
	memset(q, 0, sizeof *q);
}

/* ---- Kahn with a key ---- */

/* The ready heap q and, per L0 memory, the heap of gated ALLOCs, all of
 * capacity n. */
static int kahn_init(const ds_heap *h, int32_t n, ds_heapq *q,
		     ds_heapq *held)
{
	int rc = ds_heapq_init(q, h, n);
	for (int m = 0; m < DS_NMEM && rc == DS_OK; m++)
		if (!ds_mem_stays(m))
			rc = ds_heapq_init(&held[m], h, n);
	return rc;
}

/* The best held ALLOC over all memories, taken out: when only gated
 * ALLOCs are ready, one runs rather than deadlock. */
static int32_t kahn_pop_held(ds_heapq *held)
{
	int mb = -1;
	for (int m = 0; m < DS_NMEM; m++)
		if (held[m].n > 0 &&
		    (mb < 0 || held[m].key[0] < held[mb].key[0] ||
		     (held[m].key[0] == held[mb].key[0] &&
		      held[m].node[0] < held[mb].node[0])))
			mb = m;
	return ds_heapq_pop(&held[mb]);
}

/* The next node: the best ready one, the L0 ALLOCs met on the way held
 * while another buffer of their memory is live (gate); else the best
 * held one. */
static int32_t kahn_next(const ds_graph *g, bool gate, ds_heapq *q,
			 ds_heapq *held, const int32_t *live)
{
	while (q->n > 0) {
		int64_t ck = q->key[0];
		int32_t c = ds_heapq_pop(q);
		int m = g->kind[c] == DS_ALLOC ? g->buf_mem[g->buf[c]] : DS_L1;
		if (gate && !ds_mem_stays(m) && live[m] > 0) {
			ds_heapq_push(&held[m], ck, c);
			continue;
		}
		return c;
	}
	return kahn_pop_held(held);
}

/* Node v taken: an ALLOC or FREE of an L0 buffer changes how many
 * buffers of its memory are live. */
static void kahn_count_live(const ds_graph *g, int32_t v, ds_heapq *q,
			    ds_heapq *held, int32_t *live)
{
	if (g->kind[v] == DS_OP)
		return;
	int m = g->buf_mem[g->buf[v]];
	if (ds_mem_stays(m))
		return;
	live[m] += g->kind[v] == DS_ALLOC ? 1 : -1;
	/* gating changes only here: the best held ALLOC of m competes
	 * again */
	if (live[m] == 0 && held[m].n > 0) {
		int64_t ck = held[m].key[0];
		int32_t c = ds_heapq_pop(&held[m]);
		ds_heapq_push(q, ck, c);
	}
}

/* A node's key is computed once, when it becomes ready (a stateful key,
 * such as a counter, keeps the value it had then, also while the node is
 * held back by the gate). */
int ds_order_kahn(const ds_graph *g, ds_key_fn key, void *ctx, bool gate,
		  int32_t *order, ds_err *e)
{
	const ds_heap *h = g->heap;
	const int32_t n = g->n;
	int32_t *indeg = ds_alloc(h, (size_t)n, sizeof *indeg);
	ds_heapq q, held[DS_NMEM]; /* gated L0 ALLOCs, per memory */
	memset(held, 0, sizeof held);
	int rc = kahn_init(h, n, &q, held);
	if (!indeg || rc) {
		rc = ds_fail(e, DS_ENOMEM, "out of memory");
		goto out;
	}
	int32_t live[DS_NMEM] = {0};
	for (int32_t v = 0; v < n; v++) {
		indeg[v] = g->pred_off[v + 1] - g->pred_off[v];
		if (!indeg[v])
			ds_heapq_push(&q, key(g, ctx, v), v);
	}
	for (int32_t len = 0; len < n; len++) {
		int32_t v = kahn_next(g, gate, &q, held, live);
		order[len] = v;
		kahn_count_live(g, v, &q, held, live);
		for (int32_t k = g->succ_off[v]; k < g->succ_off[v + 1]; k++) {
			int32_t w = g->succ[k];
			if (--indeg[w] == 0)
				ds_heapq_push(&q, key(g, ctx, w), w);
		}
	}
out:
	ds_free(h, indeg);
	ds_heapq_free(&q);
	for (int m = 0; m < DS_NMEM; m++)
		ds_heapq_free(&held[m]);
	return rc;
}

/* ---- free-first ---- */

/* FREE 0, operation 1, ALLOC 2; then the rank (ctx, or the Id). */
static int64_t class_key(const ds_graph *g, void *ctx, int32_t v)
{
	const int32_t *rank = ctx;
	int64_t c = g->kind[v] == DS_FREE ? 0 : g->kind[v] == DS_OP ? 1 : 2;
	return c * ((int64_t)g->n + 1) + (rank ? rank[v] : v);
}

int ds_order_free_first(const ds_graph *g, int32_t *order, ds_err *e)
{
	return ds_order_free_first_ranked(g, NULL, order, e);
}

int ds_order_free_first_ranked(const ds_graph *g, const int32_t *rank,
			       int32_t *order, ds_err *e)
{
	return ds_order_kahn(g, class_key, (void *)rank, true, order, e);
}
