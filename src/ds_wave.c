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
 * that only stages data for one consumer next to it); then each load
 * slow for its size (waiting only for its ALLOCs, at least
 * WAVE_HOIST_CPB cycles per byte) moved up with its ALLOCs, at most
 * WAVE_HOIST_SPAN positions, as far as the order's peak (ds_order_peak)
 * allows: the peak does not rise.
 *
 * Why: MPAS's order may leave a layer's outputs waiting until a whole
 * earlier layer is done (peak memory does not care there), so that in the
 * first part of the plan only a few layers can run and the busiest pipe
 * waits for loads (Conv_Case1: the first ~200k cycles have MTE2 at 100 %
 * and CUBE at ~17 %).  Run right after their producers, the first layers
 * go as one wave: their outputs live shorter and the deeper layers' work
 * overlaps the loads.  Only the first layers: deeper, the wave holds
 * every layer's weights at once (depth 16 places with more traffic, 6,496
 * bytes, from 17 the order's peak passes DLR's: 5,668; with those tests
 * off, 583,929 and 589,810: deeper does not pay anyway).
 * The loads moved up: in Conv_Case1's wave plan, MTE2 idled ~18k cycles
 * at 200-250k (waiting for L1 addresses: L1 full of weights), then ran
 * 273 loads of 1 to 8 bytes (80-92 cycles each) at 250-275k with CUBE
 * 30 % busy waiting for them; each load's CUBE descendants (~270k cycles
 * of work) made them critical.  Such a load costs its pipe many cycles
 * and memory only a few bytes: run earlier, it fills the idle MTE2
 * earlier, where the memory is spare (582,161 -> 564,209 at 5,304 bytes,
 * the same peak 5,032).
 *
 * Cost: O((N + E) log N) (dlr_po_follow's heap, a radix sort of the
 * keys); the feeders moved, at most WAVE_WORK * N, each O(its preds);
 * the loads moved up, O(N + E) to find them and at most WAVE_HOIST_WORK
 * * N positions looked at, then a radix sort. */
#include "ds_dlr.h"
#include "ds_rank.h"

#include <string.h>

/* Depth in busiest-pipe operations up to which the wave pulls.  Measured
 * on Conv_Case1 (`schedule`, default options): depths 11, 13, 14 and 15
 * give 589,672, 584,396, 583,675 and 582,161 (602,490 without the wave);
 * from 16 on the wave plan does not pass ds_backbone_choose's tests
 * (ds_backbone.c) and is not taken (602,490 again); the other bundled
 * graphs never take it. */
#define WAVE_DEPTH 15

/* Feeders moved in all, per node of the graph: a bound on the work
 * (each feeder move is one push; the six bundled graphs make 0.03 to
 * 0.25 per node: Conv_Case1 991, Matmul_Case1 7,616). */
#define WAVE_WORK 1

/* Spacing of the keys: a node at position i has key i * WAVE_SCALE, so
 * that the nodes pulled in behind position i fit between i and i + 1. */
#define WAVE_SCALE ((int64_t)1 << 30)

/* The loads moved up (wave_hoist_keys): those whose cycles are at least
 * WAVE_HOIST_CPB per byte, moved at most WAVE_HOIST_SPAN positions.
 * Measured on Conv_Case1 (`schedule`, default options; its loads take 80,
 * 85 and 92 cycles for 1, 4 and 8 bytes, 11.5 or more per byte, and 136
 * to 581 cycles for 32 to 256 bytes, 4.25 or fewer): spans 1,000, 1,500
 * and 2,000 give 573,932, 567,296 and 563,536 (582,161 without); 2,500
 * places the wave order with more traffic than DLR's order aged (6,420
 * bytes against 5,936), so the wave is not taken (602,490); moving the
 * loads of up to 36 or 72 bytes too (2,000) does the same (8,120 and
 * 21,704 bytes). */
#define WAVE_HOIST_CPB 8
/* Positions looked at in all while moving loads up, per node of the
 * graph: a bound on the work (Conv_Case1 looks at 1,216,564 in all, 34
 * per node; Conv_Case0 500; the other bundled graphs have no such load). */
#define WAVE_HOIST_WORK 64
#define WAVE_HOIST_SPAN 2000

/* The busiest pipe (ds_pipe_busier: the most cycles, CPE's rule on ties),
 * -1 for none; load[0..npipes) is scratch. */
static int32_t wave_busiest(const ds_graph *g, int64_t *load)
{
	int32_t best = -1;
	memset(load, 0, (size_t)g->npipes * sizeof *load);
	for (int32_t v = 0; v < g->n; v++)
		if (g->kind[v] == DS_OP)
			load[g->pipe[v]] += g->cycles[v];
	for (int32_t p = 0; p < g->npipes; p++)
		if (best < 0 || ds_pipe_busier(load[p], g->pipes[p],
					       load[best], g->pipes[best]))
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

/* A load worth running early: an operation that waits for nothing but
 * the ALLOCs of its own buffers, first user of each, whose cycles are at
 * least WAVE_HOIST_CPB per byte it holds; its bytes (0 when not one). */
static int64_t wave_load_bytes(const ds_graph *g, const int32_t *pos,
			       int32_t v)
{
	int64_t bytes = 0;
	if (g->kind[v] != DS_OP)
		return 0;
	for (int32_t k = g->pred_off[v]; k < g->pred_off[v + 1]; k++) {
		int32_t p = g->pred[k];
		if (g->kind[p] != DS_ALLOC ||
		    g->pred_off[p] != g->pred_off[p + 1])
			return 0;
	}
	for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
		int32_t b = g->use[k];
		for (int32_t j = g->user_off[b]; j < g->user_off[b + 1]; j++)
			if (pos[g->user[j]] < pos[v])
				return 0;
		bytes += g->buf_size[b];
	}
	return bytes > 0 && g->cycles[v] >= WAVE_HOIST_CPB * bytes ? bytes : 0;
}

/* The live bytes of the memories that stay (ds_order_peak's) after each
 * position of order, into live[0..n); returns their peak. */
static int64_t wave_live(const ds_graph *g, const int32_t *order,
			 int64_t *live)
{
	int64_t cur = 0, peak = 0;
	for (int32_t i = 0; i < g->n; i++) {
		int32_t x = order[i];
		if (g->kind[x] != DS_OP && ds_mem_stays(g->buf_mem[g->buf[x]]))
			cur += (g->kind[x] == DS_ALLOC ? 1 : -1) *
			       g->buf_size[g->buf[x]];
		live[i] = cur;
		peak = cur > peak ? cur : peak;
	}
	return peak;
}

/* Is x a FREE of a memory that stays (it lowers the live bytes)? */
static bool wave_frees(const ds_graph *g, int32_t x)
{
	return g->kind[x] == DS_FREE && ds_mem_stays(g->buf_mem[g->buf[x]]);
}

/* The loads worth running early (wave_load_bytes), each in turn along
 * order, moved with its ALLOCs up to WAVE_HOIST_SPAN positions earlier:
 * to the earliest position from which the live bytes, its own added,
 * stay within the order's peak, while *work lasts (each position looked
 * at is one unit).  key[x]: 4 x the position to sort by, plus 1 for an
 * ALLOC and 2 for a load moved there, 3 for a node left in place. */
static void wave_hoist_keys(const ds_graph *g, const int32_t *order,
			    const int32_t *pos, int64_t *live, int64_t *key)
{
	const int64_t peak = wave_live(g, order, live);
	int64_t work = (int64_t)g->n * WAVE_HOIST_WORK;
	for (int32_t i = 0; i < g->n; i++)
		key[order[i]] = 4 * (int64_t)i + 3;
	for (int32_t i = 0; i < g->n && work > 0; i++) {
		int32_t v = order[i], lo = i, t = i;
		int64_t bytes = wave_load_bytes(g, pos, v);
		if (bytes == 0)
			continue;
		for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++)
			if (pos[g->buf_alloc[g->use[k]]] < lo)
				lo = pos[g->buf_alloc[g->use[k]]];
		/* before node j, from lo back while the bytes fit; never
		 * right before a FREE of a memory that stays, so that the
		 * moved nodes' own point (live[j - 1] + bytes) is at most
		 * live[j] + bytes, checked here and raised by later moves
		 * passing over it exactly as live[j] is */
		for (int32_t j = lo - 1; j >= 0 && lo - j <= WAVE_HOIST_SPAN &&
					 work > 0 && live[j] + bytes <= peak;
		     j--, work--)
			if (!wave_frees(g, order[j]))
				t = j;
		if (t >= lo)
			continue;
		for (int32_t j = t; j < lo; j++)
			live[j] += bytes;
		for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++)
			key[g->buf_alloc[g->use[k]]] = 4 * (int64_t)t + 1;
		key[v] = 4 * (int64_t)t + 2;
	}
}

/* order (n nodes) with the loads worth running early moved up
 * (wave_hoist_keys), in place; pos, tmp, live, key and hk are scratch of
 * n entries. */
static void wave_hoist(const ds_graph *g, int32_t *order, int32_t *pos,
		       int32_t *tmp, int64_t *live, int64_t *key, ds_hkey *hk)
{
	const int32_t n = g->n;
	for (int32_t i = 0; i < n; i++) {
		pos[order[i]] = i;
		tmp[i] = order[i];
	}
	wave_hoist_keys(g, tmp, pos, live, key);
	for (int32_t i = 0; i < n; i++) {
		hk[i].h = (uint64_t)key[tmp[i]];
		hk[i].x = i;
	}
	ds_hkey_sort(g->heap, hk, (size_t)n);
	for (int32_t i = 0; i < n; i++)
		order[i] = tmp[hk[i].x];
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
	int64_t *live = ds_arena_alloc(&a, (size_t)n, sizeof *live);
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
	if (rc == DS_OK)
		wave_hoist(g, out, pos1, stack, live, key, hk);
	ds_arena_free(&a);
	return rc;
}
