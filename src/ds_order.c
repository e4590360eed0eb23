/* ds_order.c: simple orders: node-Id order and the free-first Kahn order.
 *
 * Requires: a valid graph.  Guarantees: a topological order of all n nodes.
 * The free-first order also keeps at most one live buffer in each L0 memory
 * whenever that is possible without a deadlock: an L0 ALLOC waits while
 * another buffer of its memory is live, unless nothing else can run.
 *
 * Cost: O((N + E) log N) with a binary heap of ready nodes. */
#include "ds_stage.h"

#include <string.h>

int ds_order_id(const ds_graph *g, int32_t *order, ds_err *e)
{
	(void)e;
	for (int32_t v = 0; v < g->n; v++)
		order[v] = v;
	return DS_OK;
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

/* ---- free-first ---- */

/* FREE 0, operation 1, ALLOC 2; then the rank (or the Id). */
static int64_t class_key(const ds_graph *g, const int32_t *rank, int32_t v)
{
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
	const ds_heap *h = g->heap;
	const int32_t n = g->n;
	int32_t *indeg = ds_alloc(h, (size_t)n, sizeof *indeg);
	/* ready L0 ALLOCs waiting for their memory, per memory */
	ds_heapq q, held[DS_NMEM];
	memset(held, 0, sizeof held);
	int rc = ds_heapq_init(&q, h, n);
	for (int m = 0; m < DS_NMEM && rc == DS_OK; m++)
		if (!ds_mem_stays(m))
			rc = ds_heapq_init(&held[m], h, n);
	if (!indeg || rc) {
		rc = ds_fail(e, DS_ENOMEM, "out of memory");
		goto out;
	}
	int32_t len = 0, live[DS_NMEM] = {0};
	for (int32_t v = 0; v < n; v++) {
		indeg[v] = g->pred_off[v + 1] - g->pred_off[v];
		if (indeg[v] == 0)
			ds_heapq_push(&q, class_key(g, rank, v), v);
	}
	while (len < n) {
		int32_t v = -1;
		while (q.n > 0) {
			int32_t c = ds_heapq_pop(&q);
			if (g->kind[c] == DS_ALLOC) {
				int m = g->buf_mem[g->buf[c]];
				if (!ds_mem_stays(m) && live[m] > 0) {
					ds_heapq_push(&held[m],
						      class_key(g, rank, c), c);
					continue;
				}
			}
			v = c;
			break;
		}
		if (v < 0) {
			/* only gated ALLOCs are left: release the smallest
			 * rather than deadlock */
			int mb = -1;
			for (int m = 0; m < DS_NMEM; m++)
				if (held[m].n > 0 &&
				    (mb < 0 || held[m].key[0] < held[mb].key[0]))
					mb = m;
			DS_ASSERT(mb >= 0);
			v = ds_heapq_pop(&held[mb]);
		}
		order[len++] = v;
		if (g->kind[v] != DS_OP) {
			int m = g->buf_mem[g->buf[v]];
			if (!ds_mem_stays(m)) {
				live[m] += g->kind[v] == DS_ALLOC ? 1 : -1;
				/* its memory is free again: one held ALLOC
				 * may run (gating changes only here) */
				if (live[m] == 0 && held[m].n > 0) {
					int32_t c = ds_heapq_pop(&held[m]);
					ds_heapq_push(&q, class_key(g, rank, c),
						      c);
				}
			}
		}
		for (int32_t k = g->succ_off[v]; k < g->succ_off[v + 1]; k++) {
			int32_t w = g->succ[k];
			if (--indeg[w] == 0)
				ds_heapq_push(&q, class_key(g, rank, w), w);
		}
	}
out:
	ds_free(h, indeg);
	ds_heapq_free(&q);
	for (int m = 0; m < DS_NMEM; m++)
		ds_heapq_free(&held[m]);
	return rc;
}
