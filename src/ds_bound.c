/* ds_bound.c: lower bounds on the makespan of every plan of a graph.
 *
 * Requires: a valid graph.  Guarantees: every figure in ds_bounds is a
 * lower bound on the makespan of every valid plan of the graph (whatever
 * its order, offsets and spills: those only add nodes and edges), and
 * any = max(critical path, busiest pipe, phase, the one-machine bounds).
 *
 * The loads.  An operation v cannot start before each of its ancestors
 * has run, one at a time on each pipe, nor before the longest path from
 * a source ends; after v ends, its descendants still have to run.  So
 *
 *     head(v) = max(longest path to v, max over pipes p of the cycles of
 *                   v's ancestors on p)
 *     tail(v) = max(longest path from v, the same for v's descendants)
 *
 * and the phase bound is max over v of (busiest pipe among v's ancestors)
 * + (busiest pipe among v and its descendants), as before, now over every
 * operation.  Ancestors and descendants follow the graph's own edges, as
 * the replay's timing does.
 *
 * The one-machine bound.  On each pipe, the operations are jobs with
 * release head(v), length cycles(v) and tail tail(v); every plan is a
 * schedule of them on one machine with max(finish + tail) <= makespan.
 * Jackson's preemptive rule (at each moment run the released job with the
 * largest tail) gives the preemptive optimum of max(finish + tail), a
 * lower bound on the non-preemptive one, so on the makespan.  It
 * dominates head + cycles + tail of each job, hence the phase bound, the
 * critical path and the busiest pipe (they are still max'ed in, to be sure).
 *
 * Exact ancestor loads.  Per-pipe loads of ancestor sets are not additive
 * over a DAG (a diamond counts its top twice), so they come from bitsets:
 * for each pipe p, its operations sorted by cycles are given bits, in
 * blocks of at most BLOCK_BYTES / (8 N) 64-bit words; a walk in
 * topological order ORs each node's predecessors' rows (their own bit
 * included) into its row, and sums its cycles per run of equal cycles
 * within a word (cycles x popcount).  The descendants are the same walk
 * backwards.
 *
 * Cost: exact: O(sum over pipes p of W_p * (N + E) + N_ops * S) time, W_p
 * = ceil(ops on p / 64) words and S the runs of equal cycles over all
 * words (one per word on the bundled graphs), O(N + E + BLOCK_BYTES)
 * memory; then O(N_ops log N_ops) for the one-machine bounds.  Conv_Case1
 * (36,086 nodes, 85,653 edges): estimated 5.1e7 word steps, 0.06 s;
 * rows that are still empty (no ancestor in the block yet) are skipped.
 * When that estimate exceeds the work budget (WORK_DEFAULT), the loads are
 * under-estimated instead, still validly: exact at about 90 operations
 * sampled along an order (one O(N + E) walk each), and elsewhere the
 * largest along a path (a node's load is at least a predecessor's plus
 * that predecessor's cycles); ds_bounds.exact says which. */
#include "ds.h"

#include <stdlib.h>
#include <string.h>

/* Operations sampled (then refined by halving steps) where the exact
 * bound is over its work budget.  Measured on `dansched gen` graphs of
 * 200,000 nodes (seed 3, the four kinds) with 12, 24, 48, 96 and 192:
 * lb_any the same at each (its one-machine bounds are at the busiest
 * pipe's load there), lb_phase not monotone in the count (random
 * 90,140 / 69,611 / 132,009 / 140,700 / 141,311; matmul 28,672 at 12
 * and 24, 26,624 from 48; conv 17,624 to 22,143), the bound's -v time
 * 0.02 - 0.05 s at each; 48 as before. */
#define SAMPLES 48
/* Rows of one bitset block: 8 MiB, small beside a plan's own memory. */
#define BLOCK_BYTES ((int64_t)8 << 20)
/* Exact when the estimated word steps (exact_work) stay under this, 5.4e8.
 * Measured (-O2, one core of the 2-core build machine): the bundled graphs
 * estimate at most 5.1e7 (Conv_Case1, 0.06 s); generated graphs of
 * 100,000 nodes 3.1e8 - 4.1e8 (0.15 - 0.33 s: exact); of 200,000 nodes
 * 1.4e9 - 1.7e9 (fall back: 0.07 - 0.11 s; 1M nodes 0.5 - 0.8 s). */
#define WORK_DEFAULT ((int64_t)1 << 29)

typedef struct bnd {
	const ds_graph *g;
	ds_arena ar;
	int32_t *soff, *succ; /* the edges by source (CSR) */
	int32_t *ops;	      /* operations sorted by (pipe, cycles, node) */
	int32_t *pipe_off;    /* [npipes + 1] into ops */
	int64_t *lp_in, *lp_out; /* longest path to v's start, from its end */
	int64_t *amax, *dmax;	 /* busiest pipe among ancestors, descendants */
	int64_t *down;	/* descendants' cycles on v's own pipe */
	int64_t *acc;	/* per node: the current pipe's load */
	/* bitset blocks (exact) */
	uint64_t *rows, *mask;
	int64_t *segc;
	int32_t *pos, *seg_off, bw;
	uint8_t *nz; /* the row is not empty */
	/* samples (fallback) */
	int32_t nsamp, *samp;
	int64_t *samp_anc, *samp_desc; /* [nsamp * npipes] */
	int32_t *mark, stamp, *stk;
} bnd;

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t s;
	return ds_add(a, b, &s) ? s : INT64_MAX;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static int popcount64(uint64_t x)
{
#if defined(__GNUC__)
	return __builtin_popcountll(x);
#else
	int n = 0;
	for (; x; x &= x - 1)
		n++;
	return n;
#endif
}

static bool is_op(const ds_graph *g, int32_t v)
{
	return g->kind[v] == DS_OP && g->pipe[v] >= 0;
}

/* ---- set-up ---- */

static void build_succ(bnd *b)
{
	const ds_graph *g = b->g;
	const int32_t n = g->n;
	for (int64_t k = 0; k < g->nedge; k++)
		b->soff[g->esrc[k] + 1]++;
	for (int32_t v = 0; v < n; v++)
		b->soff[v + 1] += b->soff[v];
	for (int32_t v = 0; v < n; v++)
		for (int32_t k = g->epred_off[v]; k < g->epred_off[v + 1]; k++)
			b->succ[b->soff[g->epred[k]]++] = v;
	for (int32_t v = n; v > 0; v--)
		b->soff[v] = b->soff[v - 1];
	b->soff[0] = 0;
}

/* The operations by pipe (counting), within a pipe by cycles then node
 * (the runs of equal cycles make the bit sums cheap; the bounds do not
 * depend on this order). */
static int sort_ops(bnd *b)
{
	const ds_graph *g = b->g;
	for (int32_t v = 0; v < g->n; v++)
		if (is_op(g, v))
			b->pipe_off[g->pipe[v] + 1]++;
	for (int32_t p = 0; p < g->npipes; p++)
		b->pipe_off[p + 1] += b->pipe_off[p];
	int32_t nops = b->pipe_off[g->npipes];
	ds_hkey *k = ds_arena_alloc(&b->ar, (size_t)nops + 1, sizeof *k);
	int32_t *at = ds_arena_alloc(&b->ar, (size_t)g->npipes + 1, sizeof *at);
	if (b->ar.failed)
		return DS_ENOMEM;
	memcpy(at, b->pipe_off, (size_t)g->npipes * sizeof *at);
	for (int32_t v = 0; v < g->n; v++)
		if (is_op(g, v))
			k[at[g->pipe[v]]++] = (ds_hkey){(uint64_t)g->cycles[v], v};
	for (int32_t p = 0; p < g->npipes; p++)
		qsort(k + b->pipe_off[p],
		      (size_t)(b->pipe_off[p + 1] - b->pipe_off[p]), sizeof *k,
		      ds_hkey_cmp);
	for (int32_t i = 0; i < nops; i++)
		b->ops[i] = k[i].x;
	ds_arena_release(&b->ar, k);
	ds_arena_release(&b->ar, at);
	return DS_OK;
}

static void longest_paths(bnd *b)
{
	const ds_graph *g = b->g;
	for (int32_t i = 0; i < g->n; i++) {
		int32_t v = g->topo[i];
		for (int32_t k = g->epred_off[v]; k < g->epred_off[v + 1]; k++) {
			int32_t u = g->epred[k];
			b->lp_in[v] = max64(b->lp_in[v],
					    sat_add(b->lp_in[u], g->cycles[u]));
		}
	}
	for (int32_t i = g->n - 1; i >= 0; i--) {
		int32_t v = g->topo[i];
		for (int32_t k = b->soff[v]; k < b->soff[v + 1]; k++) {
			int32_t w = b->succ[k];
			b->lp_out[v] = max64(b->lp_out[v],
					     sat_add(b->lp_out[w], g->cycles[w]));
		}
	}
}

/* Estimated word steps of the exact loads (saturating). */
static int64_t exact_work(const bnd *b)
{
	const ds_graph *g = b->g;
	int64_t words = 0;
	for (int32_t p = 0; p < g->npipes; p++)
		words += (b->pipe_off[p + 1] - b->pipe_off[p] + 63) / 64;
	int64_t per = sat_add(g->n, g->nedge);
	int64_t nops = b->pipe_off[g->npipes];
	if (words > 0 && per > INT64_MAX / 4 / words)
		return INT64_MAX;
	/* S <= ops on the pipe; charged in full only where cycles vary */
	return 2 * words * per + 2 * nops * (words < nops ? words : nops);
}

/* ---- exact loads: bitset blocks ---- */

/* Bits for ops[lo, hi) of one pipe: positions, and per word its runs of
 * equal cycles (mask, cycles). */
static void block_bits(bnd *b, int32_t lo, int32_t hi)
{
	const ds_graph *g = b->g;
	int32_t ns = 0;
	for (int32_t i = lo; i < hi; i++) {
		int32_t bit = i - lo, v = b->ops[i];
		b->pos[v] = bit;
		if (bit % 64 == 0 || g->cycles[v] != g->cycles[b->ops[i - 1]]) {
			if (bit % 64 == 0)
				b->seg_off[bit / 64] = ns;
			b->mask[ns] = 0;
			b->segc[ns++] = g->cycles[v];
		}
		b->mask[ns - 1] |= (uint64_t)1 << (bit % 64);
	}
	b->seg_off[(hi - lo + 63) / 64] = ns;
}

/* Cycles of the block's operations whose bits are set in row. */
static int64_t row_load(const bnd *b, const uint64_t *row, int32_t words)
{
	int64_t sum = 0;
	for (int32_t w = 0; w < words; w++) {
		if (!row[w])
			continue;
		for (int32_t s = b->seg_off[w]; s < b->seg_off[w + 1]; s++)
			sum = sat_add(sum, b->segc[s] *
						   popcount64(row[w] & b->mask[s]));
	}
	return sum;
}

/* One block, one direction: rows in topological order (backwards for
 * descendants), each operation's load of the block's set into acc. */
static void block_walk(bnd *b, int32_t words, bool down)
{
	const ds_graph *g = b->g;
	const int32_t n = g->n;
	const int32_t *off = down ? b->soff : g->epred_off;
	const int32_t *adj = down ? b->succ : g->epred;
	for (int32_t i = 0; i < n; i++) {
		int32_t v = g->topo[down ? n - 1 - i : i];
		uint64_t *row = b->rows + (int64_t)v * b->bw;
		b->nz[v] = 0;
		for (int32_t k = off[v]; k < off[v + 1]; k++) {
			if (!b->nz[adj[k]])
				continue; /* an empty row: nothing to add */
			const uint64_t *r = b->rows + (int64_t)adj[k] * b->bw;
			if (!b->nz[v])
				memset(row, 0, (size_t)words * sizeof *row);
			b->nz[v] = 1;
			for (int32_t w = 0; w < words; w++)
				row[w] |= r[w];
		}
		if (b->nz[v] && is_op(g, v))
			b->acc[v] = sat_add(b->acc[v], row_load(b, row, words));
		if (b->pos[v] >= 0) {
			if (!b->nz[v])
				memset(row, 0, (size_t)words * sizeof *row);
			b->nz[v] = 1;
			row[b->pos[v] / 64] |= (uint64_t)1 << (b->pos[v] % 64);
		}
	}
}

/* acc = the exact load of pipe p among each node's ancestors (down:
 * descendants), block by block. */
static void exact_pipe(bnd *b, int32_t p, bool down)
{
	const int32_t per = b->bw * 64;
	memset(b->acc, 0, (size_t)b->g->n * sizeof *b->acc);
	for (int32_t lo = b->pipe_off[p]; lo < b->pipe_off[p + 1]; lo += per) {
		int32_t hi = lo + per < b->pipe_off[p + 1] ? lo + per
							   : b->pipe_off[p + 1];
		block_bits(b, lo, hi);
		block_walk(b, (hi - lo + 63) / 64, down);
		for (int32_t i = lo; i < hi; i++)
			b->pos[b->ops[i]] = -1;
	}
}

static int exact_alloc(bnd *b)
{
	const ds_graph *g = b->g;
	int32_t maxw = 1;
	for (int32_t p = 0; p < g->npipes; p++) {
		int32_t w = (b->pipe_off[p + 1] - b->pipe_off[p] + 63) / 64;
		maxw = w > maxw ? w : maxw;
	}
	int64_t fit = BLOCK_BYTES / 8 / (g->n > 0 ? g->n : 1);
	b->bw = fit < 1 ? 1 : fit < maxw ? (int32_t)fit : maxw;
	b->rows = ds_arena_alloc(&b->ar, (size_t)g->n * (size_t)b->bw,
				 sizeof *b->rows);
	b->mask = ds_arena_alloc(&b->ar, (size_t)b->bw * 64, sizeof *b->mask);
	b->segc = ds_arena_alloc(&b->ar, (size_t)b->bw * 64, sizeof *b->segc);
	b->seg_off = ds_arena_alloc(&b->ar, (size_t)b->bw + 1,
				    sizeof *b->seg_off);
	b->pos = ds_arena_alloc(&b->ar, (size_t)g->n + 1, sizeof *b->pos);
	b->nz = ds_arena_alloc(&b->ar, (size_t)g->n + 1, sizeof *b->nz);
	if (b->ar.failed)
		return DS_ENOMEM;
	for (int32_t v = 0; v < g->n; v++)
		b->pos[v] = -1;
	return DS_OK;
}

/* ---- fallback loads: exact at samples, path maxima elsewhere ---- */

/* Per-pipe cycles of the nodes reached from v (v not counted) into load. */
static void reach_load(bnd *b, int32_t v, bool down, int64_t *load)
{
	const ds_graph *g = b->g;
	const int32_t *off = down ? b->soff : g->epred_off;
	const int32_t *adj = down ? b->succ : g->epred;
	int32_t st = ++b->stamp, top = 0;
	memset(load, 0, (size_t)g->npipes * sizeof *load);
	b->mark[v] = st;
	b->stk[top++] = v;
	while (top > 0) {
		int32_t x = b->stk[--top];
		if (x != v && is_op(g, x))
			load[g->pipe[x]] = sat_add(load[g->pipe[x]],
						   g->cycles[x]);
		for (int32_t k = off[x]; k < off[x + 1]; k++)
			if (b->mark[adj[k]] != st) {
				b->mark[adj[k]] = st;
				b->stk[top++] = adj[k];
			}
	}
}

/* The phase figure of sampled operation v: its exact loads, kept. */
static int64_t sample_at(bnd *b, int32_t v)
{
	const ds_graph *g = b->g;
	int64_t *a = b->samp_anc + (int64_t)b->nsamp * g->npipes;
	int64_t *d = b->samp_desc + (int64_t)b->nsamp * g->npipes;
	b->samp[b->nsamp++] = v;
	reach_load(b, v, false, a);
	reach_load(b, v, true, d);
	int64_t am = 0, dm = sat_add(d[g->pipe[v]], g->cycles[v]);
	for (int32_t p = 0; p < g->npipes; p++)
		am = max64(am, a[p]), dm = max64(dm, d[p]);
	return sat_add(am, dm);
}

/* SAMPLES operations spread evenly over ops[0, nops), then halving steps
 * around the best (where phases meet), as the sampled bound always did. */
static void take_samples(bnd *b, const int32_t *ops, int32_t nops)
{
	int32_t k = nops < SAMPLES ? nops : SAMPLES, bi = 0;
	int64_t best = -1;
	for (int32_t s = 0; s < k; s++) {
		int32_t i = k > 1 ? (int32_t)((int64_t)s * (nops - 1) / (k - 1))
				  : 0;
		int64_t f = sample_at(b, ops[i]);
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
			int64_t f = sample_at(b, ops[i]);
			if (f > best)
				best = f, bi = i;
		}
	}
}

/* The operations of order[0, len) (NULL: the topological order). */
static int sample_setup(bnd *b, const int32_t *order, int32_t len)
{
	const ds_graph *g = b->g;
	const int32_t n = g->n;
	int64_t most = SAMPLES + 2 * 32 + 2;
	b->samp = ds_arena_alloc(&b->ar, (size_t)most, sizeof *b->samp);
	b->samp_anc = ds_arena_alloc(&b->ar, (size_t)(most * g->npipes + 1),
				     sizeof *b->samp_anc);
	b->samp_desc = ds_arena_alloc(&b->ar, (size_t)(most * g->npipes + 1),
				      sizeof *b->samp_desc);
	b->mark = ds_arena_alloc(&b->ar, (size_t)n + 1, sizeof *b->mark);
	b->stk = ds_arena_alloc(&b->ar, (size_t)n + 1, sizeof *b->stk);
	int32_t *ops = ds_arena_alloc(&b->ar, (size_t)n + 1, sizeof *ops);
	if (b->ar.failed)
		return DS_ENOMEM;
	if (!order)
		order = g->topo, len = n;
	int32_t nops = 0;
	for (int32_t i = 0; i < len; i++)
		if (order[i] >= 0 && order[i] < n && nops < n &&
		    is_op(g, order[i]))
			ops[nops++] = order[i];
	if (nops > 0)
		take_samples(b, ops, nops);
	ds_arena_release(&b->ar, ops);
	return DS_OK;
}

/* acc = a lower bound on pipe p's load among each node's ancestors (down:
 * descendants): the samples' exact loads, carried along the edges. */
static void sampled_pipe(bnd *b, int32_t p, bool down)
{
	const ds_graph *g = b->g;
	const int32_t n = g->n;
	const int32_t *off = down ? b->soff : g->epred_off;
	const int32_t *adj = down ? b->succ : g->epred;
	const int64_t *seed = down ? b->samp_desc : b->samp_anc;
	memset(b->acc, 0, (size_t)n * sizeof *b->acc);
	for (int32_t s = 0; s < b->nsamp; s++)
		b->acc[b->samp[s]] = seed[(int64_t)s * g->npipes + p];
	for (int32_t i = 0; i < n; i++) {
		int32_t v = g->topo[down ? n - 1 - i : i];
		for (int32_t k = off[v]; k < off[v + 1]; k++) {
			int32_t u = adj[k];
			int64_t c = g->pipe[u] == p ? g->cycles[u] : 0;
			b->acc[v] = max64(b->acc[v], sat_add(b->acc[u], c));
		}
	}
}

/* ---- the bounds ---- */

static void fold_pipe(bnd *b, int32_t p, bool down)
{
	const ds_graph *g = b->g;
	int64_t *m = down ? b->dmax : b->amax;
	for (int32_t v = 0; v < g->n; v++) {
		m[v] = max64(m[v], b->acc[v]);
		if (down && g->pipe[v] == p)
			b->down[v] = b->acc[v];
	}
}

static void phase_bound(const bnd *b, ds_bounds *out)
{
	const ds_graph *g = b->g;
	for (int32_t v = 0; v < g->n; v++)
		if (is_op(g, v)) {
			int64_t d = max64(b->dmax[v],
					  sat_add(b->down[v], g->cycles[v]));
			out->phase = max64(out->phase, sat_add(b->amax[v], d));
		}
}

/* A binary max-heap of jobs by tail (ties: lower job first). */
typedef struct jheap {
	int32_t *a, n;
	const int64_t *key;
} jheap;

static bool jh_above(const jheap *h, int32_t x, int32_t y)
{
	return h->key[x] > h->key[y] || (h->key[x] == h->key[y] && x < y);
}

static void jh_push(jheap *h, int32_t x)
{
	int32_t i = h->n++;
	for (; i > 0 && jh_above(h, x, h->a[(i - 1) / 2]); i = (i - 1) / 2)
		h->a[i] = h->a[(i - 1) / 2];
	h->a[i] = x;
}

static void jh_pop(jheap *h)
{
	int32_t x = h->a[--h->n], i = 0;
	for (;;) {
		int32_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && jh_above(h, h->a[c + 1], h->a[c]))
			c++;
		if (!jh_above(h, h->a[c], x))
			break;
		h->a[i] = h->a[c];
		i = c;
	}
	h->a[i] = x;
}

/* Jackson's preemptive rule on jobs 0..m-1 sorted by release r, with
 * lengths len (consumed) and tails q: the optimum of max(finish + tail). */
static int64_t jackson(const int64_t *r, int64_t *len, const int64_t *q,
		       int32_t m, int32_t *heap)
{
	jheap h = {heap, 0, q};
	int64_t t = 0, best = 0;
	int32_t i = 0;
	while (i < m || h.n > 0) {
		if (h.n == 0 && t < r[i])
			t = r[i];
		while (i < m && r[i] <= t)
			jh_push(&h, i++);
		int32_t j = h.a[0];
		int64_t run = len[j];
		if (i < m && r[i] - t < run)
			run = r[i] - t;
		t = sat_add(t, run);
		len[j] -= run;
		if (len[j] == 0) {
			jh_pop(&h);
			best = max64(best, sat_add(t, q[j]));
		}
	}
	return best;
}

/* The one-machine bound of pipe p: its operations by release. */
static int machine_bound(bnd *b, int32_t p, int64_t *lb)
{
	const ds_graph *g = b->g;
	int32_t lo = b->pipe_off[p], m = b->pipe_off[p + 1] - lo;
	ds_hkey *k = ds_arena_alloc(&b->ar, (size_t)m + 1, sizeof *k);
	int64_t *r = ds_arena_alloc(&b->ar, (size_t)m + 1, sizeof *r);
	int64_t *len = ds_arena_alloc(&b->ar, (size_t)m + 1, sizeof *len);
	int64_t *q = ds_arena_alloc(&b->ar, (size_t)m + 1, sizeof *q);
	int32_t *heap = ds_arena_alloc(&b->ar, (size_t)m + 1, sizeof *heap);
	if (b->ar.failed)
		return DS_ENOMEM;
	for (int32_t i = 0; i < m; i++) {
		int32_t v = b->ops[lo + i];
		k[i] = (ds_hkey){(uint64_t)max64(b->lp_in[v], b->amax[v]), v};
	}
	qsort(k, (size_t)m, sizeof *k, ds_hkey_cmp);
	for (int32_t i = 0; i < m; i++) {
		int32_t v = k[i].x;
		r[i] = (int64_t)k[i].h;
		len[i] = g->cycles[v];
		q[i] = max64(b->lp_out[v], b->dmax[v]);
	}
	*lb = jackson(r, len, q, m, heap);
	ds_arena_release(&b->ar, k);
	ds_arena_release(&b->ar, r);
	ds_arena_release(&b->ar, len);
	ds_arena_release(&b->ar, q);
	ds_arena_release(&b->ar, heap);
	return DS_OK;
}

static int bnd_setup(bnd *b)
{
	const ds_graph *g = b->g;
	const size_t n = (size_t)g->n + 1;
	ds_arena *ar = &b->ar;
	b->soff = ds_arena_alloc(ar, n, sizeof *b->soff);
	b->succ = ds_arena_alloc(ar, (size_t)g->nedge + 1, sizeof *b->succ);
	b->ops = ds_arena_alloc(ar, n, sizeof *b->ops);
	b->pipe_off = ds_arena_alloc(ar, (size_t)g->npipes + 1,
				     sizeof *b->pipe_off);
	b->lp_in = ds_arena_alloc(ar, n, sizeof *b->lp_in);
	b->lp_out = ds_arena_alloc(ar, n, sizeof *b->lp_out);
	b->amax = ds_arena_alloc(ar, n, sizeof *b->amax);
	b->dmax = ds_arena_alloc(ar, n, sizeof *b->dmax);
	b->down = ds_arena_alloc(ar, n, sizeof *b->down);
	b->acc = ds_arena_alloc(ar, n, sizeof *b->acc);
	if (ar->failed)
		return DS_ENOMEM;
	build_succ(b);
	longest_paths(b);
	return sort_ops(b);
}

/* amax, dmax and down, exactly or (over the budget) from samples. */
static int loads(bnd *b, const int32_t *order, int32_t len, int64_t work,
		 bool *exact)
{
	*exact = exact_work(b) <= work;
	int rc = *exact ? exact_alloc(b) : sample_setup(b, order, len);
	if (rc)
		return rc;
	for (int32_t p = 0; p < b->g->npipes; p++)
		for (int d = 0; d < 2; d++) {
			if (*exact)
				exact_pipe(b, p, d);
			else
				sampled_pipe(b, p, d);
			fold_pipe(b, p, d);
		}
	return DS_OK;
}

static int all_bounds(bnd *b, const int32_t *order, int32_t len,
		      int64_t work, ds_bounds *out)
{
	const ds_graph *g = b->g;
	int rc = bnd_setup(b);
	if (!rc)
		rc = loads(b, order, len, work, &out->exact);
	if (rc)
		return rc;
	phase_bound(b, out);
	out->any = max64(out->critical_path, out->phase);
	for (int32_t p = 0; p < g->npipes && !rc; p++) {
		int64_t sum = 0, lb = 0;
		for (int32_t i = b->pipe_off[p]; i < b->pipe_off[p + 1]; i++)
			sum = sat_add(sum, g->cycles[b->ops[i]]);
		out->pipe_load = max64(out->pipe_load, sum);
		rc = machine_bound(b, p, &lb);
		out->any = max64(out->any, max64(lb, sum));
	}
	return rc;
}

int ds_bounds_compute(const ds_graph *g, const int32_t *order, int32_t len,
		      int64_t work, ds_bounds *out, ds_err *e)
{
	memset(out, 0, sizeof *out);
	out->critical_path = out->phase = out->any = g->critical_path;
	bnd b = {.g = g};
	ds_arena_init(&b.ar, g->heap);
	int rc = all_bounds(&b, order, len, work > 0 ? work : WORK_DEFAULT,
			    out);
	ds_arena_free(&b.ar);
	if (rc) {
		memset(out, 0, sizeof *out);
		return ds_fail(e, rc, "out of memory");
	}
	return DS_OK;
}

int ds_phase_bound(const ds_graph *g, const int32_t *order, int32_t len,
		   int64_t *lb, ds_err *e)
{
	ds_bounds bd;
	int rc = ds_bounds_compute(g, order, len, 0, &bd, e);
	*lb = rc ? g->critical_path : bd.phase;
	return rc;
}
