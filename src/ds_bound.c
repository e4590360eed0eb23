/* ds_bound.c: the phase lower bound on the makespan.
 *
 * Requires: a valid graph.  Guarantees: *lb is a lower bound on the
 * makespan of every valid plan of the graph (whatever its order, offsets
 * and spills), and at least its critical path.
 *
 * Why: max(critical path, busiest pipe) is loose on graphs whose phases
 * load different pipes: when a convolution's first layers keep the DMA
 * pipe busy and its last ones the CUBE pipe, no order overlaps the two if
 * the compute depends on all the loads.  For any operation v, every
 * ancestor of v runs before v starts, one at a time on its pipe, and v
 * with all its descendants runs after; so
 *
 *     makespan >= max over pipes p of (cycles of v's ancestors on p)
 *               + max over pipes q of (cycles of v and its descendants on q).
 *
 * Memory and spills only add to this.  The bound is the maximum over
 * operations v; evaluating one v walks the graph (O(N + E)), so it is
 * taken over SAMPLES operations spread evenly over an order (a plan's:
 * in a good plan, position follows time, so the samples cross each phase
 * boundary; else the graph's topological order), then refined around the
 * best one by halving steps.  Any sample gives a valid bound; better
 * samples only bring it closer to the exact maximum.  Ancestors and
 * descendants follow the graph's own edges, as the replay's timing does.
 *
 * Cost: O((SAMPLES + 2 log N) * (N + E)) time, O(N + E) memory. */
#include "ds.h"

#include <string.h>

#define SAMPLES 48

typedef struct walk {
	const ds_graph *g;
	int32_t *soff, *succ; /* the edges by source (CSR) */
	int32_t *mark, stamp;
	int32_t *stk;
	int64_t *load; /* [npipes] */
} walk;

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t s;
	return ds_add(a, b, &s) ? s : INT64_MAX;
}

/* The busiest pipe's cycles over the nodes reached from v along off/adj,
 * v itself counted when self. */
static int64_t reach_load(walk *w, int32_t v, const int32_t *off,
			  const int32_t *adj, bool self)
{
	const ds_graph *g = w->g;
	int32_t st = ++w->stamp, top = 0;
	for (int32_t p = 0; p < g->npipes; p++)
		w->load[p] = 0;
	w->mark[v] = st;
	w->stk[top++] = v;
	while (top > 0) {
		int32_t x = w->stk[--top];
		if ((x != v || self) && g->pipe[x] >= 0)
			w->load[g->pipe[x]] =
				sat_add(w->load[g->pipe[x]], g->cycles[x]);
		for (int32_t k = off[x]; k < off[x + 1]; k++) {
			int32_t y = adj[k];
			if (w->mark[y] != st) {
				w->mark[y] = st;
				w->stk[top++] = y;
			}
		}
	}
	int64_t best = 0;
	for (int32_t p = 0; p < g->npipes; p++)
		if (w->load[p] > best)
			best = w->load[p];
	return best;
}

static int64_t phase_at(walk *w, int32_t v)
{
	const ds_graph *g = w->g;
	return sat_add(reach_load(w, v, g->epred_off, g->epred, false),
		       reach_load(w, v, w->soff, w->succ, true));
}

int ds_phase_bound(const ds_graph *g, const int32_t *order, int32_t len,
		   int64_t *lb, ds_err *e)
{
	const ds_heap *h = g->heap;
	const int32_t n = g->n;
	int rc = DS_OK;
	walk w = {.g = g};
	int32_t *ops = NULL;
	*lb = g->critical_path;
	w.soff = ds_alloc(h, (size_t)n + 1, sizeof *w.soff);
	w.succ = ds_alloc(h, (size_t)g->nedge + 1, sizeof *w.succ);
	w.mark = ds_alloc(h, (size_t)n, sizeof *w.mark);
	w.stk = ds_alloc(h, (size_t)n, sizeof *w.stk);
	w.load = ds_alloc(h, (size_t)g->npipes + 1, sizeof *w.load);
	ops = ds_alloc(h, (size_t)n, sizeof *ops);
	if (!w.soff || !w.succ || !w.mark || !w.stk || !w.load || !ops) {
		rc = ds_fail(e, DS_ENOMEM, "out of memory");
		goto out;
	}
	/* the edges by source */
	memset(w.soff, 0, ((size_t)n + 1) * sizeof *w.soff);
	for (int64_t k = 0; k < g->nedge; k++)
		w.soff[g->esrc[k] + 1]++;
	for (int32_t v = 0; v < n; v++)
		w.soff[v + 1] += w.soff[v];
	for (int32_t v = 0; v < n; v++)
		for (int32_t k = g->epred_off[v]; k < g->epred_off[v + 1]; k++)
			w.succ[w.soff[g->epred[k]]++] = v;
	for (int32_t v = n; v > 0; v--)
		w.soff[v] = w.soff[v - 1];
	w.soff[0] = 0;
	memset(w.mark, 0, (size_t)n * sizeof *w.mark);

	/* the operations in the order given (spill nodes skipped), or in
	 * the graph's topological order */
	if (!order) {
		order = g->topo;
		len = n;
	}
	int32_t nops = 0;
	for (int32_t i = 0; i < len; i++)
		if (order[i] >= 0 && order[i] < n && nops < n &&
		    g->kind[order[i]] == DS_OP)
			ops[nops++] = order[i];
	if (nops == 0)
		goto out;

	/* samples, then halving steps around the best */
	int32_t k = nops < SAMPLES ? nops : SAMPLES;
	int32_t bi = 0;
	int64_t best = -1;
	for (int32_t s = 0; s < k; s++) {
		int32_t i = k > 1 ? (int32_t)((int64_t)s * (nops - 1) / (k - 1))
				  : 0;
		int64_t f = phase_at(&w, ops[i]);
		if (f > best)
			best = f, bi = i;
	}
	for (int32_t step = k > 1 ? (nops - 1) / (k - 1) / 2 : 0; step > 0;
	     step /= 2) {
		int32_t at = bi;
		for (int d = -1; d <= 1; d += 2) {
			int32_t i = at + d * step;
			if (i < 0 || i >= nops)
				continue;
			int64_t f = phase_at(&w, ops[i]);
			if (f > best)
				best = f, bi = i;
		}
	}
	if (best > *lb)
		*lb = best;
out:
	ds_free(h, w.soff);
	ds_free(h, w.succ);
	ds_free(h, w.mark);
	ds_free(h, w.stk);
	ds_free(h, w.load);
	ds_free(h, ops);
	return rc;
}
