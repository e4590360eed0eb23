/* ds_wave.c: the wave order, an order for CPE's backbone in which the
 * busiest pipe's first operations run right after their producers.
 *
 * Requires: a valid graph and a topological order of its n nodes (DLR's
 * plan's order without its spill nodes).
 * Guarantees: a topological order of the n nodes into out[0..n), a pure
 * function of the graph and the order: the order with each operation of
 * the busiest pipe (most cycles) at most WAVE_DEPTH such operations deep
 * moved to just after the latest of its producers on that pipe, and the
 * operations on other pipes it waits for (its loads and moves) just
 * before it; then dlr_po_follow (ALLOCs lazy, FREEs eager, an operation
 * that only stages data for one consumer next to it).
 *
 * Why: MPAS's order may leave a layer's outputs waiting until a whole
 * earlier layer is done (peak memory does not care there), so that in the
 * first part of the plan only a few layers can run and the busiest pipe
 * waits for loads (Conv_Case1: the first ~200k cycles have MTE2 at 100 %
 * and CUBE at ~17 %).  Run right after their producers, the first layers
 * go as one wave: their outputs live shorter and the deeper layers' work
 * overlaps the loads.  Only the first layers: deeper, the wave holds
 * every layer's weights at once.
 *
 * Cost: O((N + E) log N) (dlr_po_follow's heap, a radix sort of the
 * keys); the feeders moved, at most WAVE_WORK * N, each O(its preds). */
#include "ds_dlr.h"
#include "ds_rank.h"

#include <string.h>

/* Depth in busiest-pipe operations up to which the wave pulls.  Measured
 * on Conv_Case1 (`schedule`, default options): depths 11, 13, 14 and 15
 * give 589,672, 584,396, 583,675 and 582,161 (602,490 without the wave);
 * from 16 on the wave plan does not pass aged_backbone's tests
 * (ds_pipeline.c) and is not taken (602,490 again); the other bundled
 * graphs never take it. */
#define WAVE_DEPTH 15

/* Feeders moved in all, per node of the graph: a bound on the work
 * (each feeder move is one push; the six bundled graphs make 0.03 to
 * 0.25 per node: Conv_Case1 991, Matmul_Case1 7,616). */
#define WAVE_WORK 1

/* Spacing of the keys: a node at position i has key i * WAVE_SCALE, so
 * that the nodes pulled in behind position i fit between i and i + 1. */
#define WAVE_SCALE ((int64_t)1 << 30)

/* The pipe with the most cycles (the least index on ties), -1 for none;
 * load[0..npipes) is scratch. */
static int32_t wave_busiest(const ds_graph *g, int64_t *load)
{
	int32_t best = -1;
	memset(load, 0, (size_t)g->npipes * sizeof *load);
	for (int32_t v = 0; v < g->n; v++)
		if (g->kind[v] == DS_OP)
			load[g->pipe[v]] += g->cycles[v];
	for (int32_t p = 0; p < g->npipes; p++)
		if (best < 0 || load[p] > load[best])
			best = p;
	return best;
}

/* Depth of each node in operations of pipe bp (its own included), along
 * order (topological). */
static void wave_depth(const ds_graph *g, const int32_t *order, int32_t bp,
		       int32_t *depth)
{
	for (int32_t i = 0; i < g->n; i++) {
		int32_t v = order[i], d = 0;
		for (int32_t k = g->pred_off[v]; k < g->pred_off[v + 1]; k++)
			if (depth[g->pred[k]] > d)
				d = depth[g->pred[k]];
		depth[v] = d + (g->kind[v] == DS_OP && g->pipe[v] == bp);
	}
}

/* Operation v of pipe bp goes to key k: the operations on other pipes it
 * waits for (transitively, through such operations, found along the pred
 * lists pred, each in order) go just before it, each that is later than
 * that, each once (mark), while *work lasts. */
static void wave_feeders(const ds_graph *g, const int32_t *pred, int32_t v,
			 int32_t bp, int64_t k, int64_t *key, int32_t *stack,
			 int32_t *mark, int64_t *work)
{
	int32_t top = 0;
	int64_t next = k - 1;
	stack[top++] = v;
	while (top > 0) {
		int32_t u = stack[--top];
		for (int32_t j = g->pred_off[u]; j < g->pred_off[u + 1]; j++) {
			int32_t p = pred[j];
			if (g->kind[p] != DS_OP || g->pipe[p] == bp ||
			    key[p] <= next || mark[p] == v || *work <= 0)
				continue;
			mark[p] = v;
			(*work)--;
			key[p] = next--;
			stack[top++] = p;
		}
	}
}

/* The keys: position times WAVE_SCALE, the pulled operations and their
 * feeders moved (see the top of this file). */
static void wave_keys(const ds_graph *g, const int32_t *order,
		      const int32_t *pred, int32_t bp, const int32_t *depth,
		      int64_t *key, int32_t *stack, int32_t *mark)
{
	int64_t work = (int64_t)g->n * WAVE_WORK;
	for (int32_t i = 0; i < g->n; i++) {
		key[order[i]] = (int64_t)i * WAVE_SCALE;
		mark[i] = -1;
	}
	for (int32_t i = 0; i < g->n; i++) {
		int32_t v = order[i];
		if (g->kind[v] != DS_OP || g->pipe[v] != bp ||
		    depth[v] > WAVE_DEPTH)
			continue;
		int64_t k = -1;
		for (int32_t j = g->pred_off[v]; j < g->pred_off[v + 1]; j++) {
			int32_t p = g->pred[j];
			if (g->kind[p] == DS_OP && g->pipe[p] == bp &&
			    key[p] > k)
				k = key[p];
		}
		if (k < 0 || k + WAVE_SCALE / 2 >= key[v])
			continue;
		key[v] = k + WAVE_SCALE / 2;
		wave_feeders(g, pred, v, bp, key[v], key, stack, mark, &work);
	}
}

int ds_wave_order(const ds_graph *g, const int32_t *order, int32_t *out,
		  ds_err *e)
{
	const int32_t n = g->n;
	ds_arena a;
	ds_arena_init(&a, g->heap);
	int32_t *depth = ds_arena_alloc(&a, (size_t)n, sizeof *depth);
	int32_t *stack = ds_arena_alloc(&a, (size_t)n, sizeof *stack);
	int32_t *pos1 = ds_arena_alloc(&a, (size_t)n, sizeof *pos1);
	int32_t *rank = ds_arena_alloc(&a, (size_t)n, sizeof *rank);
	int32_t *mark = ds_arena_alloc(&a, (size_t)n, sizeof *mark);
	int64_t *key = ds_arena_alloc(&a, (size_t)n, sizeof *key);
	ds_hkey *hk = ds_arena_alloc(&a, (size_t)n, sizeof *hk);
	int64_t *load = ds_arena_alloc(&a, (size_t)g->npipes + 1, sizeof *load);
	const size_t ne = (size_t)g->pred_off[n];
	int32_t *pred = ds_arena_alloc(&a, ne + 1, sizeof *pred);
	ds_hkey *ek = ds_arena_alloc(&a, ne + 1, sizeof *ek);
	if (a.failed) {
		ds_arena_free(&a);
		return ds_fail(e, DS_ENOMEM, "out of memory");
	}
	int32_t bp = wave_busiest(g, load);
	wave_depth(g, order, bp, depth);
	/* the feeders are found along the pred lists in order, not in the
	 * Ids' (the keys they get follow that) */
	for (int32_t i = 0; i < n; i++)
		pos1[order[i]] = i;
	memcpy(pred, g->pred, ne * sizeof *pred);
	ds_rank_sort_lists(g->heap, g->pred_off, pred, n, pos1, ek);
	wave_keys(g, order, pred, bp, depth, key, stack, mark);
	/* the keys as ranks, ties by the place in order */
	for (int32_t i = 0; i < n; i++) {
		hk[i].h = (uint64_t)key[order[i]];
		hk[i].x = i;
	}
	ds_hkey_sort(g->heap, hk, (size_t)n);
	for (int32_t i = 0; i < n; i++)
		rank[order[hk[i].x]] = i;
	int rc = dlr_po_follow(g, order, pos1, rank, true, out, e);
	ds_arena_free(&a);
	return rc;
}
