/* ds_baseline.c: the orders of the external baselines the paper compares
 * against, re-implemented over our graph.
 *
 *  lpmf     PyTorch Inductor's reorder_for_peak_memory: "least peak memory
 *           first" greedy, with its BFS and DFS fallbacks; the order with
 *           the lowest peak of the three wins.
 *  cp-list  HEFT-style list scheduling: upward rank (longest path to the
 *           end in cycles), highest rank first.
 *  vpux     OpenVINO NPU feasible-memory scheduler: per-executor (pipe)
 *           ready queues served in turn, buffers allocated as late and
 *           freed as early as the queues allow.
 *
 * Requires: a valid graph.  Guarantees: topological orders of all n nodes;
 * lpmf and vpux gate L0 ALLOCs by the one-live rule like free-first (so
 * their peak_vstay is comparable), cp-list does not (HEFT knows no memory).
 * Cost: O((N + E) log N) each. */
#include "ds_stage.h"

#include <string.h>

/* ---- lpmf ---- */

/* The greedy of Inductor's topological_sort_lpmf: for each ready node,
 * mem1 is the memory while it runs, mem2 after it; among nodes whose mem1
 * stays within the peak so far pick the least mem2, otherwise the least
 * mem1.  Here an ALLOC raises both by its size and a FREE lowers mem2, so
 * the rule reduces to a fixed key: the largest FREE first, then operations,
 * then the smallest ALLOC (one that fits under the peak, when any does, is
 * also the smallest).  L0 buffers do not count towards the peak. */
static int64_t key_lpmf(const ds_graph *g, void *ctx, int32_t v)
{
	(void)ctx;
	if (g->kind[v] == DS_OP)
		return 0;
	int32_t b = g->buf[v];
	if (!ds_mem_stays(g->buf_mem[b]))
		return 0;
	return g->kind[v] == DS_ALLOC ? g->buf_size[b] : -g->buf_size[b];
}

/* BFS fallback: Kahn by the step at which a node became ready. */
static int64_t key_bfs(const ds_graph *g, void *ctx, int32_t v)
{
	(void)g;
	(void)v;
	return (*(int64_t *)ctx)++;
}

/* DFS fallback: the most recently readied node first. */
static int64_t key_dfs(const ds_graph *g, void *ctx, int32_t v)
{
	(void)g;
	(void)v;
	return -(*(int64_t *)ctx)++;
}

int ds_order_lpmf(const ds_graph *g, int32_t *order, ds_err *e)
{
	const ds_heap *h = g->heap;
	int32_t *alt = ds_alloc(h, (size_t)g->n, sizeof *alt);
	if (!alt)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	int rc = ds_order_kahn(g, key_lpmf, NULL, true, order, e);
	int64_t best = rc ? 0 : ds_order_peak(g, order, NULL);
	ds_key_fn fallbacks[2] = {key_bfs, key_dfs};
	for (int k = 0; k < 2 && rc == DS_OK; k++) {
		int64_t tick = 0;
		rc = ds_order_kahn(g, fallbacks[k], &tick, true, alt, e);
		int64_t p = rc ? 0 : ds_order_peak(g, alt, NULL);
		if (rc == DS_OK && p < best) {
			best = p;
			memcpy(order, alt, (size_t)g->n * sizeof *order);
		}
	}
	ds_free(h, alt);
	return rc;
}

/* ---- cp-list ---- */

/* Upward rank: cycles of v plus the longest path after it. */
static int upward_rank(const ds_graph *g, int64_t *rank)
{
	for (int32_t i = g->n - 1; i >= 0; i--) {
		int32_t v = g->topo[i];
		int64_t best = 0;
		for (int32_t k = g->succ_off[v]; k < g->succ_off[v + 1]; k++)
			if (rank[g->succ[k]] > best)
				best = rank[g->succ[k]];
		rank[v] = best + g->cycles[v];
	}
	return DS_OK;
}

static int64_t key_rank(const ds_graph *g, void *ctx, int32_t v)
{
	(void)g;
	return -((int64_t *)ctx)[v];
}

int ds_order_cp_list(const ds_graph *g, int32_t *order, ds_err *e)
{
	int64_t *rank = ds_alloc(g->heap, (size_t)g->n, sizeof *rank);
	if (!rank)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	upward_rank(g, rank);
	int rc = ds_order_kahn(g, key_rank, rank, false, order, e);
	ds_free(g->heap, rank);
	return rc;
}

/* ---- vpux ---- */

/* Executors are served in turn: an operation's key is (round, pipe), where
 * a pipe's round counts the operations already queued on it, so no pipe
 * runs far ahead of the others.  Buffers are allocated only when nothing
 * else is ready (the scheduler allocates an op's buffers as it admits it)
 * and freed as soon as they can be. */
typedef struct vpux_ctx {
	int64_t *round; /* per pipe */
	int32_t npipes;
} vpux_ctx;

static int64_t key_vpux(const ds_graph *g, void *ctx, int32_t v)
{
	vpux_ctx *c = ctx;
	if (g->kind[v] == DS_FREE)
		return INT64_MIN / 2;
	if (g->kind[v] == DS_ALLOC)
		return INT64_MAX / 2;
	int32_t p = g->pipe[v];
	return c->round[p]++ * (c->npipes + 1) + p;
}

int ds_order_vpux(const ds_graph *g, int32_t *order, ds_err *e)
{
	vpux_ctx c = {ds_alloc(g->heap, (size_t)g->npipes + 1, sizeof(int64_t)),
		      g->npipes};
	if (!c.round)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	int rc = ds_order_kahn(g, key_vpux, &c, true, order, e);
	ds_free(g->heap, c.round);
	return rc;
}
