/* ds_mpas.c: stage 1, MPAS: memory-pressure-aware topological scheduling.
 *
 * Requires: a valid graph (ds_builder_finish; its pred/succ lists hold
 * the residency constraints too).  Guarantees: order[] is a topological
 * order of all n nodes; at most one buffer of each L0 memory is live at
 * any time whenever one of the candidate orders achieves it (the
 * free-first order, ties broken by the structural rank, is always a
 * candidate, and every greedy order does on the bundled graphs).  The
 * aim is the least peak_vstay.  A graph holding several operators that
 * share nothing (weakly connected components) is scheduled one operator
 * after the other, each on its own, the larger first (ds_mpas_alts() at
 * the end of the file).  The files: this one (the views, the candidate
 * orders, the pass), ds_mpas_greedy.c (the greedy run, gr_; its
 * candidates, cand_, in treaps, tp_), ds_mpas_ls.c (the local search,
 * ls_); ds_mpas_int.h holds what they share.
 *
 * Method.  Operations do not change memory: the decision is which
 * operation (with the ALLOCs it needs) runs next; an ALLOC is best run
 * just before its first user and a FREE just after its last.  The list
 * scheduler (mpas_gr_run()) keeps candidate targets: an operation with its
 * ancestors that have not run ("closure", bounded in size), extended along
 * buffers left with a single consumer (a load alone looks cheap, but its
 * buffer stays until the consumer runs).  A target is rated by simulating
 * it: the rise of memory over the current level, the net change once the
 * FREEs it enables have run, and the progress it makes towards freeing
 * live buffers.  The best target runs, then every node that costs nothing
 * (FREEs, operations whose buffers are live) runs at once.  L0 ALLOCs are
 * gated: a target may not need a busy L0 memory, and one that leaves an
 * L0 buffer live must leave a state in which every live L0 buffer can
 * still be freed (no wait-for cycle between L0 memories), so the one-live
 * rule holds without deadlock.  The variants (priorities, forwards or on
 * the reversed graph, where FREEs play ALLOCs and the peak is the same)
 * run for a few rounds each, buffers live at the previous round's peak
 * weighing more.
 *
 * Nothing depends on the node Ids but the order among nodes alike in
 * every structural respect: every exact tie (between candidates, in the
 * pred/succ lists the closures walk, among buffers the local search
 * tries) is broken by one structural rank (ds_structural_rank(), in
 * ds_rank.c), a program order recovered from the graph alone.  It also
 * yields candidates of its own: the free-first order with its ties
 * broken by the rank, and a greedy variant (POL_RANK) that follows it as
 * closely as the one-live rule allows.  Those recover the loop order of
 * the program, a global choice the greedy's local view cannot see (which
 * of two loops of an attention kernel goes inside decides whether the
 * queries or the keys and values stay resident).  A graph without loop
 * structure (values used within a window of recent ones, as in the
 * generator's random DAGs) has no loop order to recover; there the band
 * orders (ds_band_order(), along the graph's long axis, either way) are
 * the program order, and they are candidates too (the better one also
 * smoothed where it beats every other candidate).
 *
 * The best orders then go through a local search that moves blocks of
 * operations across the peak (with lifetime compaction: ALLOCs sunk to
 * their first user, FREEs hoisted to their last): a buffer live at a
 * peak position leaves it when all its remaining users move before it
 * (with their ancestors), or its first user moves after it, or its last
 * user before it.  The best order wins; ties keep the earlier candidate.
 * A second phase of the search, from each first phase's result and with
 * an eighth of its budget, may also move a block back to where a buffer
 * live at the peak began long before, or on to where one ends long after
 * (ds_mpas_ls.c's jumps); its best
 * order wins only where its peak is lower, and the next stage then gets
 * the first phase's too (ds_mpas_alts' near).
 *
 * Cost, N nodes, E constraint edges, B buffers: a greedy run is about
 * O((N + E) * K * D * log C) with K the closure bound (GREEDY_KMAX), D
 * the fan-out of the re-rating after each decision and C the candidates
 * (up to N):
 * the candidates sit in treaps, one per L0 memory they wait for, and a
 * decision finds the best in O(log C) (tp_best()).  A decision also re-rates
 * the candidates whose stale ratings put them ahead, a few per decision
 * on the graphs measured (a candidate found waiting for a busy L0 memory
 * keeps its last full rating, so the waiting ones do not all come back
 * each time the memory frees).  gr_forced(), when no candidate can run,
 * rates every node that waits for nothing (a set kept up to date),
 * O(R * K) a call for R such nodes; it never runs on the bundled graphs
 * nor on the generator's at 100k nodes.  With M = LS_MOVES x effort
 * (the budget of moves), there are GREEDY_WORK * M / N runs (at least
 * one, at most NVARIANTS * MAX_ROUNDS), so small graphs get more.  The
 * structural rank: see ds_rank.c (O((N + E) log N) per round of
 * hashing; the two band orders, ds_band.c, O((N + E) log(N + E))).
 * Splitting into operators: O(N + E)
 * and a copy of the graph.  The local search, on the LS_STARTS best
 * orders, does at most M move (and its second phase M / 8 more)
 * evaluations of O(W) each (W the window, LS_WINDOW operations); finding
 * the moves of a step is O(N + 48 B) and an accepted move costs O(N + E),
 * these together bounded by LS_SCAN * W * M.  So O((N + E) log N)
 * for a given effort: 1M nodes of the generator's matmul kind take 4 to
 * 5 s.  Memory O(N + E), every scratch array of a run from one arena
 * (mpas_init), released in one call. */
#include "ds_mpas_int.h"
#include "ds_rank.h"

#include <stdlib.h>
#include <string.h>

/* ---- tuning ----
 * Measured (issue 15) on the six bundled graphs and gen --nodes 3000
 * --kind random/attention --seed 1, `schedule --stage mpas -v`, each
 * value against half and double of it, the rest unchanged: the sum of
 * the eight peak_vstay is 72,938 at these values; the MPAS CPU seconds
 * (summed, a loaded 2-core machine) are only indicative. */

/* Move evaluations of the local search per polished order at the default
 * effort (1; --effort N: N times as many). */
#define LS_MOVES 40000
/* Greedy runs: GREEDY_WORK * LS_MOVES * effort / N of them.  1 or 4: every peak
 * the same; 4 takes about twice the time (4.2 s against 1.9 s). */
#define GREEDY_WORK 2
/* Rounds of each greedy variant, at most (binds below 2,000 nodes at the
 * default effort).  4 or 16: every peak the same. */
#define MAX_ROUNDS 8
/* A greedy target's closure holds at most this many nodes.  12: 73,044
 * (Conv_Case1 5,216 but FlashAttention_Case0 4,498 against 5,360 and
 * 4,248); 48: 73,012 (5,184 and 4,498), and more time (3.4 s against
 * 2.3 s at 12). */
#define GREEDY_KMAX 24
/* Orders polished by the local search.  4: every peak the same, more
 * time (3.5 s against 2.7 s in that run); 1 not measured (the pool's
 * code needs at least 2). */
#define LS_STARTS 2
/* Smoothing rounds of the third band order (ds_band_order()).  5 or 20:
 * every peak the same on these graphs (the smoothed order wins on none of
 * them at 3000 nodes). */
#define BAND_SMOOTH 10
/* At most this many other orders go to the next stage (ds_mpas_alts):
 * enough for DLR, which places up to DLR_STARTS - 1 = 15 of them on
 * small graphs (DLR_STARTS in ds_dlr_stage.c says what chose that). */
#define MAX_ALTS 16

/* ---- orders as a whole ---- */

/* Raises the weight of every buffer live at the (first) peak of order:
 * the next greedy round sees them bigger and keeps them shorter. */
static void bump_peak(const ds_graph *g, const int32_t *order, int64_t *wgt,
		      uint8_t *live)
{
	int64_t cur = 0, peak = -1;
	int32_t at = 0;
	for (int32_t i = 0; i < g->n; i++) {
		int32_t x = order[i];
		if (g->kind[x] == DS_OP || !ds_mem_stays(g->buf_mem[g->buf[x]]))
			continue;
		cur += (g->kind[x] == DS_ALLOC ? 1 : -1) *
		       g->buf_size[g->buf[x]];
		if (cur > peak) {
			peak = cur;
			at = i;
		}
	}
	memset(live, 0, (size_t)g->nbuf);
	for (int32_t i = 0; i <= at && i < g->n; i++) {
		int32_t x = order[i];
		if (g->kind[x] != DS_OP)
			live[g->buf[x]] = g->kind[x] == DS_ALLOC;
	}
	for (int32_t b = 0; b < g->nbuf; b++)
		if (live[b] && ds_mem_stays(g->buf_mem[b]))
			wgt[b]++;
}

/* ---- building the views ---- */

typedef struct views {
	view fw, bw;
	uint8_t *kind_bw;
	int64_t *stay;
	int8_t *l0;
	int32_t *mate;
	int32_t *lev_fw, *lev_bw;
	uint8_t *load_fw, *load_bw;
	int32_t *rank;		 /* ds_structural_rank() */
	int32_t *pred_s, *succ_s; /* pred and succ lists sorted by rank */
	int32_t *cpred_fw, *cpred_bw; /* the same, ALLOCs last (view.cpred) */
} views;

/* Longest path from a root counted in operations, along a topological
 * order topo of the view (or its reverse when rev); and which operations
 * are loads (preceded by ALLOCs only). */
static void levels(const view *v, const int32_t *topo, bool rev,
		   int32_t *lev, uint8_t *load)
{
	for (int32_t i = 0; i < v->n; i++) {
		int32_t x = topo[rev ? v->n - 1 - i : i];
		int32_t l = 0;
		load[x] = v->kind[x] == DS_OP;
		for (int32_t k = v->poff[x]; k < v->poff[x + 1]; k++) {
			int32_t y = v->pred[k];
			if (lev[y] > l)
				l = lev[y];
			if (v->kind[y] != DS_ALLOC)
				load[x] = 0;
		}
		lev[x] = l + (v->kind[x] == DS_OP);
	}
}

/* cpred of view v: each node's preds, those that are not ALLOCs first,
 * each part in the order of v->pred.  O(N + E). */
static void closure_preds(const view *v, int32_t *cpred)
{
	for (int32_t x = 0; x < v->n; x++) {
		int32_t j = v->poff[x];
		for (int alloc = 0; alloc < 2; alloc++)
			for (int32_t k = v->poff[x]; k < v->poff[x + 1]; k++)
				if ((v->kind[v->pred[k]] == DS_ALLOC) == alloc)
					cpred[j++] = v->pred[k];
	}
}

/* Per node, in both directions: the bytes counted in peak_vstay, the L0
 * memory, the mate, the kind in the reversed view. */
static void views_nodes(const ds_graph *g, views *w)
{
	for (int32_t x = 0; x < g->n; x++) {
		w->l0[x] = -1;
		w->mate[x] = -1;
		w->kind_bw[x] = g->kind[x] == DS_ALLOC	 ? DS_FREE
				: g->kind[x] == DS_FREE ? DS_ALLOC
							: DS_OP;
		if (g->kind[x] == DS_OP)
			continue;
		int32_t b = g->buf[x];
		int m = g->buf_mem[b];
		if (ds_mem_stays(m))
			w->stay[x] = g->buf_size[b];
		else
			w->l0[x] = (int8_t)(m - DS_L0A);
		w->mate[x] = g->kind[x] == DS_ALLOC ? g->buf_free[b]
						    : g->buf_alloc[b];
	}
}

/* The two views of g, every array from a; rank: g's structural rank,
 * or NULL to compute it. */
static int views_build(const ds_graph *g, const int32_t *rank, ds_arena *a,
		       views *w, ds_err *e)
{
	const int32_t n = g->n;
	const int64_t ne = g->pred_off[n];
	memset(w, 0, sizeof *w);
	w->kind_bw = ds_arena_alloc(a, (size_t)n, sizeof *w->kind_bw);
	w->stay = ds_arena_alloc(a, (size_t)n, sizeof *w->stay);
	w->l0 = ds_arena_alloc(a, (size_t)n, sizeof *w->l0);
	w->mate = ds_arena_alloc(a, (size_t)n, sizeof *w->mate);
	w->lev_fw = ds_arena_alloc(a, (size_t)n, sizeof *w->lev_fw);
	w->lev_bw = ds_arena_alloc(a, (size_t)n, sizeof *w->lev_bw);
	w->load_fw = ds_arena_alloc(a, (size_t)n, sizeof *w->load_fw);
	w->load_bw = ds_arena_alloc(a, (size_t)n, sizeof *w->load_bw);
	w->rank = ds_arena_alloc(a, (size_t)n + 1, sizeof *w->rank);
	w->pred_s = ds_arena_alloc(a, (size_t)ne + 1, sizeof *w->pred_s);
	w->succ_s = ds_arena_alloc(a, (size_t)ne + 1, sizeof *w->succ_s);
	w->cpred_fw = ds_arena_alloc(a, (size_t)ne + 1, sizeof *w->cpred_fw);
	w->cpred_bw = ds_arena_alloc(a, (size_t)ne + 1, sizeof *w->cpred_bw);
	if (a->failed)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	int rc = DS_OK;
	if (rank)
		memcpy(w->rank, rank, (size_t)n * sizeof *w->rank);
	else
		rc = ds_structural_rank(g, w->rank, e);
	if (rc)
		return rc;
	/* lists in rank order: the closures' visiting order is then
	 * structural too */
	ds_hkey *k = ds_arena_alloc(a, (size_t)ne + 1, sizeof *k);
	if (!k)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	memcpy(w->pred_s, g->pred, (size_t)ne * sizeof *w->pred_s);
	memcpy(w->succ_s, g->succ, (size_t)ne * sizeof *w->succ_s);
	ds_rank_sort_lists(g->heap, g->pred_off, w->pred_s, n, w->rank, k);
	ds_rank_sort_lists(g->heap, g->succ_off, w->succ_s, n, w->rank, k);
	ds_arena_release(a, k);
	views_nodes(g, w);
	w->fw = (view){n,	     g->pred_off,  w->pred_s,	 g->succ_off,
		       w->succ_s,    g->kind,	   w->stay,	 w->l0,
		       w->mate,	     w->lev_fw,	   w->load_fw,	 g->buf,
		       g->user_off,  g->user,	   g->use_off,	 g->use,
		       g->buf_alloc, g->buf_free,  w->rank,	 w->cpred_fw};
	w->bw = (view){n,	     g->succ_off,  w->succ_s,	 g->pred_off,
		       w->pred_s,    w->kind_bw,   w->stay,	 w->l0,
		       w->mate,	     w->lev_bw,	   w->load_bw,	 g->buf,
		       g->user_off,  g->user,	   g->use_off,	 g->use,
		       g->buf_free,  g->buf_alloc, w->rank,	 w->cpred_bw};
	closure_preds(&w->fw, w->cpred_fw);
	closure_preds(&w->bw, w->cpred_bw);
	levels(&w->fw, g->topo, false, w->lev_fw, w->load_fw);
	levels(&w->bw, g->topo, true, w->lev_bw, w->load_bw);
	return DS_OK;
}


/* ---- the pass ---- */

/* The greedy variants, most useful first.  Each runs for a few rounds in
 * which the buffers live at its previous round's peak weigh more (see
 * bump_peak), as many as the effort allows for the graph's size. */
static const gparams variants[] = {
	{.dir = 1, .pol = POL_NET, .prio = PR_NET, .kmax = GREEDY_KMAX},
	{.dir = 0, .pol = POL_NET, .prio = PR_NET, .kmax = GREEDY_KMAX},
	{.dir = 1, .pol = POL_RISE, .prio = PR_NET, .kmax = GREEDY_KMAX},
	{.dir = 0, .pol = POL_PEAK, .prio = PR_CREDIT, .kmax = GREEDY_KMAX},
	{.dir = 0, .pol = POL_RANK, .prio = PR_NET, .kmax = GREEDY_KMAX},
};
#define NVARIANTS ((int)(sizeof variants / sizeof variants[0]))

/* The best orders found, best first; ties keep the earlier one. */
typedef struct pool {
	int32_t *ord[LS_STARTS];
	int64_t peak[LS_STARTS];
	bool valid[LS_STARTS];
	int k;
} pool;

/* Valid orders first, then the lower peak. */
static bool pool_better(int64_t pa, bool va, int64_t pb, bool vb)
{
	return va != vb ? va : pa < pb;
}

/* Offers cand (n nodes) to the pool, which keeps the LS_STARTS best. */
static void pool_offer(pool *p, const ds_graph *g, const int32_t *cand)
{
	bool valid;
	int64_t pk = ds_order_peak(g, cand, &valid);
	int i = p->k;
	while (i > 0 && pool_better(pk, valid, p->peak[i - 1], p->valid[i - 1]))
		i--;
	if (i >= LS_STARTS)
		return;
	/* shift the worse ones down, recycling the last buffer */
	int last = p->k < LS_STARTS ? p->k : LS_STARTS - 1;
	int32_t *buf = p->ord[last];
	for (int j = last; j > i; j--) {
		p->ord[j] = p->ord[j - 1];
		p->peak[j] = p->peak[j - 1];
		p->valid[j] = p->valid[j - 1];
	}
	p->ord[i] = buf;
	memcpy(buf, cand, (size_t)g->n * sizeof *buf);
	p->peak[i] = pk;
	p->valid[i] = valid;
	if (p->k < LS_STARTS)
		p->k++;
}

/* Other good orders for the next stage: the nalt best by peak among the
 * candidates, each different from the others (a duplicate is not kept);
 * ties keep the earlier one.  Peaks equal or close give DLR very
 * different traffic, which only placing them tells. */
typedef struct alts {
	int32_t *ord; /* [nalt * n] */
	int64_t peak[MAX_ALTS];
	bool valid[MAX_ALTS];
	int k, nalt;
} alts;

static void alts_offer(alts *a, const ds_graph *g, const int32_t *cand)
{
	const size_t n = (size_t)g->n;
	bool valid;
	int64_t pk = ds_order_peak(g, cand, &valid);
	int i = a->k;
	while (i > 0 && pool_better(pk, valid, a->peak[i - 1], a->valid[i - 1]))
		i--;
	if (i >= a->nalt)
		return;
	for (int j = 0; j < a->k; j++)
		if (a->peak[j] == pk && !memcmp(a->ord + j * n, cand, n * 4))
			return;
	int last = a->k < a->nalt ? a->k : a->nalt - 1;
	for (int j = last; j > i; j--) {
		memcpy(a->ord + j * n, a->ord + (j - 1) * n, n * sizeof *cand);
		a->peak[j] = a->peak[j - 1];
		a->valid[j] = a->valid[j - 1];
	}
	memcpy(a->ord + i * n, cand, n * sizeof *cand);
	a->peak[i] = pk;
	a->valid[i] = valid;
	if (a->k < a->nalt)
		a->k++;
}

/* Reverses a[0..n). */
static void reverse(int32_t *a, int32_t n)
{
	for (int32_t i = 0, j = n - 1; i < j; i++, j--) {
		int32_t t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
}

/* One MPAS run on one graph: its candidates so far and the scratch
 * arrays, all from one arena. */
typedef struct mpas {
	const ds_graph *g;
	int64_t moves; /* the local search's budget: LS_MOVES x effort */
	ds_arena ar;
	views w;
	run *R;
	ls *L; /* NULL when the local search does not apply */
	pool P;
	alts *A; /* NULL: no alternatives wanted */
	int32_t *cand;
	int32_t *jumped; /* mpas_polish's best of the second phase */
	int64_t *wgt;	/* per variant and buffer: its weight */
	int64_t *wstay; /* per node: the bytes a greedy run counts */
	uint8_t *blive;
} mpas;

static int mpas_init(mpas *M, const ds_graph *g, const int32_t *rank,
		     int64_t moves, alts *A, ds_err *e)
{
	const int32_t n = g->n;
	ds_arena *a = &M->ar;
	memset(M, 0, sizeof *M);
	M->g = g;
	M->moves = moves;
	M->A = A;
	ds_arena_init(a, g->heap);
	M->cand = ds_arena_alloc(a, (size_t)n, sizeof *M->cand);
	M->jumped = ds_arena_alloc(a, (size_t)n, sizeof *M->jumped);
	M->wgt = ds_arena_alloc(a, (size_t)NVARIANTS * g->nbuf + 1,
				sizeof *M->wgt);
	M->wstay = ds_arena_alloc(a, (size_t)n, sizeof *M->wstay);
	M->blive = ds_arena_alloc(a, (size_t)g->nbuf + 1, sizeof *M->blive);
	for (int i = 0; i < LS_STARTS; i++)
		M->P.ord[i] = ds_arena_alloc(a, (size_t)n, sizeof *M->P.ord[i]);
	if (a->failed)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	int rc = views_build(g, rank, a, &M->w, e);
	if (rc == DS_OK && !(M->R = mpas_gr_new(a, n, g->pred_off[n], e)))
		rc = DS_ENOMEM;
	if (rc == DS_OK && mpas_ls_applies(g) &&
	    !(M->L = mpas_ls_new(a, g, &M->w.fw, e)))
		rc = DS_ENOMEM;
	return rc;
}

/* Offers the order in M->cand to the pool and the alternatives. */
static void mpas_offer(mpas *M)
{
	pool_offer(&M->P, M->g, M->cand);
	if (M->A)
		alts_offer(M->A, M->g, M->cand);
}

/* Greedy runs, every variant once per round, as many rounds as the effort
 * allows for the graph's size. */
static int mpas_greedy(mpas *M, ds_err *e)
{
	const ds_graph *g = M->g;
	const int32_t n = g->n;
	int64_t runs = GREEDY_WORK * M->moves / (n > 0 ? n : 1);
	if (runs < 1)
		runs = 1;
	if (runs > NVARIANTS * MAX_ROUNDS)
		runs = NVARIANTS * MAX_ROUNDS;
	for (int64_t b = 0; b < (int64_t)NVARIANTS * g->nbuf; b++)
		M->wgt[b] = 1;
	for (int64_t k = 0; k < runs; k++) {
		int i = (int)(k % NVARIANTS);
		const gparams *p = &variants[i];
		int64_t *wv = M->wgt + (int64_t)i * g->nbuf;
		for (int32_t x = 0; x < n; x++)
			M->wstay[x] = M->w.stay[x] *
				      (g->kind[x] == DS_OP ? 0 : wv[g->buf[x]]);
		view vv = p->dir ? M->w.bw : M->w.fw;
		vv.stay = M->wstay;
		bool invalid;
		int rc = mpas_gr_run(M->R, &vv, p, M->cand, &invalid, e);
		if (rc)
			return rc;
		if (p->dir)
			reverse(M->cand, n);
		mpas_offer(M);
		bump_peak(g, M->cand, wv, M->blive);
	}
	return DS_OK;
}

/* The band orders, either way: the program order of a graph without
 * loops whose operations use recent values (there the rank sees no
 * structure to recover, and the greedy's local view strays). */
static int mpas_bands(mpas *M, ds_err *e)
{
	int64_t bpeak[2] = {0, 0};
	bool bvalid[2] = {false, false};
	int64_t best = M->P.k > 0 ? M->P.peak[0] : INT64_MAX;
	bool best_valid = M->P.k > 0 && M->P.valid[0];
	for (int rev = 0; rev < 3; rev++) {
		/* the third, the better way smoothed, only where a band
		 * order beats every other candidate: where the long axis is
		 * the program */
		bool smooth = rev == 2;
		int way = smooth && pool_better(bpeak[1], bvalid[1], bpeak[0],
						bvalid[0]);
		if (smooth && !pool_better(bpeak[way], bvalid[way], best,
					   best_valid))
			break;
		int rc = ds_band_order(M->g, M->w.rank, smooth ? way : rev,
				       smooth ? BAND_SMOOTH : 0, M->cand, e);
		if (rc)
			return rc;
		if (!smooth)
			bpeak[rev] = ds_order_peak(M->g, M->cand, &bvalid[rev]);
		mpas_offer(M);
	}
	return DS_OK;
}

/* M->cand into to where it peaks lower than *best (*valid: one-live),
 * which then take its figures. */
static void polish_keep(mpas *M, int32_t *to, int64_t *best, bool *valid)
{
	bool v;
	int64_t pk = ds_order_peak(M->g, M->cand, &v);
	if (pool_better(pk, v, *best, *valid)) {
		*best = pk;
		*valid = v;
		memcpy(to, M->cand, (size_t)M->g->n * sizeof *to);
	}
}

/* Polishes the best orders into order; the best result wins, ties keep
 * the earlier (unpolished) one.  The local search's second phase
 * (jumps) runs from each first phase's result; its best order wins only
 * where its peak is lower, and *near then gets the first phase's best
 * (else order's copy): the next stage weighs both (ds_pipeline.c's
 * dlr_search).  near may be NULL. */
static void mpas_polish(mpas *M, int32_t *order, int32_t *near)
{
	const size_t n = (size_t)M->g->n;
	memcpy(order, M->P.ord[0], n * sizeof *order);
	int64_t best = M->P.peak[0], jbest = INT64_MAX;
	bool best_valid = M->P.valid[0], jvalid = false;
	for (int i = 0; i < M->P.k && M->L; i++) {
		memcpy(M->cand, M->P.ord[i], n * sizeof *M->cand);
		mpas_ls_run(M->L, M->cand, M->moves, false);
		polish_keep(M, order, &best, &best_valid);
		mpas_ls_run(M->L, M->cand, M->moves, true);
		polish_keep(M, M->jumped, &jbest, &jvalid);
	}
	if (near)
		memcpy(near, order, n * sizeof *near);
	if (M->L && pool_better(jbest, jvalid, best, best_valid))
		memcpy(order, M->jumped, n * sizeof *order);
}

/* MPAS on one graph, in one piece, with a budget of moves (M->moves);
 * near: mpas_polish's. */
static int mpas_one(const ds_graph *g, const int32_t *rank, int64_t moves,
		    int32_t *order, int32_t *near, alts *A, ds_err *e)
{
	mpas M;
	int rc = mpas_init(&M, g, rank, moves, A, e);
	/* the free-first order, ties broken by the rank: cheap, a safe
	 * fallback, and the program order where the rank recovers it */
	if (rc == DS_OK)
		rc = ds_order_free_first_ranked(g, M.w.rank, M.cand, e);
	if (rc == DS_OK) {
		mpas_offer(&M);
		rc = mpas_greedy(&M, e);
	}
	if (rc == DS_OK)
		rc = mpas_bands(&M, e);
	if (rc == DS_OK)
		mpas_polish(&M, order, near);
	ds_arena_free(&M.ar);
	return rc;
}

/* ---- graphs holding several operators ---- */

/* Weakly connected components (a buffer's ALLOC and FREE together even
 * when nothing uses it): comp[x] in 0..*ncomp, numbered by their least
 * node. */
static void components_of(const ds_graph *g, int32_t *comp, int32_t *ncomp)
{
	const int32_t n = g->n;
	for (int32_t x = 0; x < n; x++)
		comp[x] = x;
	for (int32_t x = 0; x < n; x++) {
		int32_t lim = g->pred_off[x + 1] - g->pred_off[x];
		for (int32_t j = 0; j <= lim; j++) {
			int32_t a = x, b;
			if (j < lim)
				b = g->pred[g->pred_off[x] + j];
			else if (g->kind[x] == DS_FREE)
				b = g->buf_alloc[g->buf[x]];
			else
				continue;
			while (comp[a] != a)
				a = comp[a] = comp[comp[a]];
			while (comp[b] != b)
				b = comp[b] = comp[comp[b]];
			if (a != b)
				comp[a > b ? a : b] = a < b ? a : b;
		}
	}
	/* roots are each component's least node: number them in order */
	int32_t k = 0;
	for (int32_t x = 0; x < n; x++)
		comp[x] = comp[x] == x ? k++ : comp[comp[x]];
	*ncomp = k;
}

/* The subgraph of the nodes list[0..k) (increasing Ids) as a graph of
 * its own, node list[i] becoming node i, buffers and edges kept; eidx
 * holds the indices of its edges in g's input order. */
static int subgraph(const ds_graph *g, const int32_t *list, int32_t k,
		    const int32_t *eidx, int64_t ne, int32_t *local,
		    ds_graph **out, ds_err *e)
{
	const ds_heap *h = g->heap;
	int64_t *bufs = NULL;
	int32_t maxuse = 1;
	for (int32_t i = 0; i < k; i++) {
		int32_t x = list[i], u = g->use_off[x + 1] - g->use_off[x];
		local[x] = i;
		if (u > maxuse)
			maxuse = u;
	}
	ds_builder *b = ds_builder_new(h, g->source);
	bufs = ds_alloc(h, (size_t)maxuse, sizeof *bufs);
	int rc = b && bufs ? DS_OK : ds_fail(e, DS_ENOMEM, "out of memory");
	for (int32_t i = 0; i < k && rc == DS_OK; i++) {
		int32_t x = list[i];
		if (g->kind[x] != DS_OP) {
			int32_t bf = g->buf[x];
			rc = ds_builder_buffer(b, i, g->kind[x] == DS_FREE,
					       g->buf_id[bf], g->buf_size[bf],
					       ds_mem_names[g->buf_mem[bf]], e);
			continue;
		}
		int32_t u = g->use_off[x + 1] - g->use_off[x];
		for (int32_t j = 0; j < u; j++)
			bufs[j] = g->buf_id[g->use[g->use_off[x] + j]];
		rc = ds_builder_op(b, i, g->ops[g->op[x]], g->pipes[g->pipe[x]],
				   g->cycles[x], bufs, u, e);
	}
	for (int64_t j = 0; j < ne && rc == DS_OK; j++)
		rc = ds_builder_edge(b, local[g->esrc[eidx[j]]],
				     local[g->edst[eidx[j]]], e);
	if (rc == DS_OK)
		rc = ds_builder_finish(b, &g->caps, out, e);
	ds_builder_free(b);
	ds_free(h, bufs);
	return rc;
}

/* Drops the alternatives equal to order (or to an earlier one). */
static int alts_distinct(const ds_graph *g, const int32_t *order, int32_t *alt,
			 int k)
{
	const size_t n = (size_t)g->n;
	int m = 0;
	for (int i = 0; i < k; i++) {
		const int32_t *x = alt + i * n;
		bool dup = !memcmp(x, order, n * sizeof *x);
		for (int j = 0; j < m && !dup; j++)
			dup = !memcmp(x, alt + j * n, n * sizeof *x);
		if (dup)
			continue;
		if (m != i)
			memmove(alt + m * n, x, n * sizeof *x);
		m++;
	}
	return m;
}

/* A graph's components as lists: nodes[noff[c]..noff[c+1]) and the input
 * indices of its edges edges[eoff[c]..eoff[c+1]) (counting sorts,
 * stable). */
typedef struct split {
	int32_t ncomp;
	int32_t *comp, *noff, *nodes, *edges;
	int64_t *eoff;
	int32_t *grank; /* the whole graph's structural rank */
	int32_t *byrank; /* its inverse */
	int32_t *srank; /* scratch: a component's share of it */
	ds_hkey *hk;	/* scratch for that */
} split;

/* The whole graph's rank restricted to component c (its nodes renumbered
 * 0..k-1 in increasing Id, as subgraph() does) into S->srank: every
 * operator's order then follows the labelling the later stages break
 * their ties by, not its own, which may differ from it by a symmetry of
 * the operator that the Ids would pick. */
static void split_rank(const split *S, int32_t c)
{
	const int32_t k = S->noff[c + 1] - S->noff[c];
	const int32_t *nodes = S->nodes + S->noff[c];
	for (int32_t i = 0; i < k; i++)
		S->hk[i] = (ds_hkey){(uint64_t)S->grank[nodes[i]], i};
	qsort(S->hk, (size_t)k, sizeof *S->hk, ds_hkey_cmp);
	for (int32_t j = 0; j < k; j++)
		S->srank[S->hk[j].x] = j;
}

static void split_fill(const ds_graph *g, split *S)
{
	const int32_t n = g->n, ncomp = S->ncomp;
	int32_t *noff = S->noff;
	int64_t *eoff = S->eoff;
	for (int32_t x = 0; x < n; x++)
		noff[S->comp[x] + 1]++;
	for (int64_t j = 0; j < g->nedge; j++)
		eoff[S->comp[g->esrc[j]] + 1]++;
	for (int32_t c = 0; c < ncomp; c++) {
		noff[c + 1] += noff[c];
		eoff[c + 1] += eoff[c];
	}
	for (int32_t x = 0; x < n; x++)
		S->nodes[noff[S->comp[x]]++] = x;
	for (int64_t j = 0; j < g->nedge; j++)
		S->edges[eoff[S->comp[g->esrc[j]]]++] = (int32_t)j;
	/* the fills moved each start to the next one's: back */
	for (int32_t c = ncomp; c > 0; c--) {
		noff[c] = noff[c - 1];
		eoff[c] = eoff[c - 1];
	}
	noff[0] = 0;
	eoff[0] = 0;
}

/* MPAS on component c of g as a graph of its own, its order written at
 * order[len..], mpas_polish's near one at near[len..] (near may be
 * NULL) and its alternatives (its best order where it has fewer) at
 * alt[j * n + len..); *nk: the most alternatives a component had; *key:
 * its place among the components (split_sort).  sub, subn: scratch. */
static int split_one(const ds_graph *g, const split *S, int32_t c,
		     int64_t moves, int32_t len, int32_t *order, int32_t *near,
		     int32_t *alt, alts *A, int *nk, int32_t *local,
		     int32_t *sub, int32_t *subn, ds_hkey *key, ds_err *e)
{
	const int32_t n = g->n, k = S->noff[c + 1] - S->noff[c];
	const int32_t *nodes = S->nodes + S->noff[c];
	ds_graph *sg = NULL;
	A->k = 0;
	int rc = subgraph(g, nodes, k, S->edges + S->eoff[c],
			  S->eoff[c + 1] - S->eoff[c], local, &sg, e);
	if (rc == DS_OK) {
		split_rank(S, c);
		rc = mpas_one(sg, S->srank, moves * k / n + 1, sub,
			      near ? subn : NULL, A->nalt ? A : NULL, e);
	}
	for (int32_t i = 0; i < k && rc == DS_OK; i++) {
		order[len + i] = nodes[sub[i]];
		if (near)
			near[len + i] = nodes[subn[i]];
	}
	for (int j = 0; j < A->nalt && rc == DS_OK; j++) {
		const int32_t *from = j < A->k ? A->ord + (size_t)j * k : sub;
		for (int32_t i = 0; i < k; i++)
			alt[(size_t)j * n + len + i] = nodes[from[i]];
	}
	if (A->k > *nk)
		*nk = A->k;
	/* the larger components first, alike ones by their shape, then by
	 * the whole graph's rank: not by the Ids (local is free again:
	 * scratch) */
	if (rc == DS_OK)
		*key = (ds_hkey){((uint64_t)(INT32_MAX - k) << 32) |
					 (ds_order_shape(sg, sub, local) >> 32),
				 S->grank[nodes[sub[0]]]};
	ds_graph_free(sg);
	return rc;
}

/* The split's arrays other than comp, from arena ar (ar->failed when
 * short). */
static void split_alloc(ds_arena *ar, const ds_graph *g, split *S)
{
	const size_t n1 = (size_t)g->n + 1;
	S->noff = ds_arena_alloc(ar, (size_t)S->ncomp + 1, sizeof *S->noff);
	S->nodes = ds_arena_alloc(ar, n1, sizeof *S->nodes);
	S->eoff = ds_arena_alloc(ar, (size_t)S->ncomp + 1, sizeof *S->eoff);
	S->edges = ds_arena_alloc(ar, (size_t)g->nedge + 1, sizeof *S->edges);
	S->grank = ds_arena_alloc(ar, n1, sizeof *S->grank);
	S->byrank = ds_arena_alloc(ar, n1, sizeof *S->byrank);
	S->srank = ds_arena_alloc(ar, n1, sizeof *S->srank);
	S->hk = ds_arena_alloc(ar, n1, sizeof *S->hk);
}

/* The components' orders (at noff[c] in ord) put one after the other in
 * the order of their keys, sorted: through tmp. */
static void split_sort(const split *S, const ds_hkey *key, int32_t *ord,
		       int32_t *tmp)
{
	int32_t len = 0;
	for (int32_t i = 0; i < S->ncomp; i++) {
		int32_t c = S->comp[S->byrank[key[i].x]];
		int32_t k = S->noff[c + 1] - S->noff[c];
		memcpy(tmp + len, ord + S->noff[c], (size_t)k * sizeof *tmp);
		len += k;
	}
	memcpy(ord, tmp, (size_t)len * sizeof *tmp);
}

/* Operators that share nothing are scheduled one after the other, each
 * on its own: every buffer of one is freed before the next starts, so
 * the peak is the largest of theirs, whatever the numbering.  Each gets
 * a share of the effort by its size, and the whole graph's rank
 * restricted to it (split_rank).  The larger run first, those of one
 * size in the order of their shapes (ds_order_shape of their orders),
 * then of that rank, so that a renumbered or recombined graph gets the
 * same order.  Measured on the generated graphs of 3,000 nodes, seeds 1
 * and 2 (final makespans): in the order of their least Ids, attention
 * 59,554 and 59,522, conv 75,986 and 84,375, matmul 101,340 and 73,540,
 * random 53,924 and 52,615; by size and shape 58,951, 59,066, 74,601,
 * 84,588, 101,340, 73,540, 53,924, 52,436; with the whole graph's rank
 * too 58,909, 59,522, 74,674, 84,588, 99,798 (at 16,384 bytes against
 * 17,152), 73,540, 53,924, 52,436.  MPAS's peaks unchanged throughout. */
int ds_mpas_alts(const ds_graph *g, const ds_mpas_opts *o, int32_t *order,
		 int32_t *near, int32_t *alt, int nalt, int *got, ds_err *e)
{
	const int32_t n = g->n;
	if (nalt > MAX_ALTS)
		nalt = MAX_ALTS;
	if (!alt || nalt < 0)
		nalt = 0;
	if (got)
		*got = 0;
	alts A = {.ord = NULL, .k = 0, .nalt = nalt};
	const int64_t moves = ds_work_share(
		g, o ? o->size_nodes : 0,
		LS_MOVES * (o && o->effort > 1 ? o->effort : 1));
	ds_arena ar;
	ds_arena_init(&ar, g->heap);
	split S = {0};
	S.comp = ds_arena_alloc(&ar, (size_t)n + 1, sizeof *S.comp);
	if (!S.comp)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	components_of(g, S.comp, &S.ncomp);
	if (S.ncomp <= 1) {
		ds_arena_free(&ar);
		A.ord = alt;
		int rc = mpas_one(g, NULL, moves, order, near,
				  nalt ? &A : NULL, e);
		if (rc == DS_OK && got)
			*got = alts_distinct(g, order, alt, A.k);
		return rc;
	}
	int32_t *local = ds_arena_alloc(&ar, (size_t)n + 1, sizeof *local);
	int32_t *sub = ds_arena_alloc(&ar, (size_t)n + 1, sizeof *sub);
	int32_t *subn = ds_arena_alloc(&ar, (size_t)n + 1, sizeof *subn);
	ds_hkey *key = ds_arena_alloc(&ar, (size_t)S.ncomp, sizeof *key);
	split_alloc(&ar, g, &S);
	if (nalt)
		A.ord = ds_arena_alloc(&ar, (size_t)nalt * n, sizeof *A.ord);
	int rc = ar.failed ? ds_fail(e, DS_ENOMEM, "out of memory") : DS_OK;
	if (rc == DS_OK)
		split_fill(g, &S);
	if (rc == DS_OK)
		rc = ds_structural_rank(g, S.grank, e);
	for (int32_t x = 0; x < n && rc == DS_OK; x++)
		S.byrank[S.grank[x]] = x;
	/* the moves are shared by size, so that the work stays what it is
	 * for one graph of n nodes; alternative i runs each component's
	 * alternative i (its best order when it has fewer) */
	int32_t len = 0;
	int nk = 0;
	for (int32_t c = 0; c < S.ncomp && rc == DS_OK; c++) {
		rc = split_one(g, &S, c, moves, len, order, near, alt, &A,
			       &nk, local, sub, subn, &key[c], e);
		len += S.noff[c + 1] - S.noff[c];
	}
	DS_ASSERT(rc != DS_OK || len == n);
	if (rc == DS_OK) {
		qsort(key, (size_t)S.ncomp, sizeof *key, ds_hkey_cmp);
		split_sort(&S, key, order, sub);
		if (near)
			split_sort(&S, key, near, sub);
		for (int j = 0; j < nk; j++)
			split_sort(&S, key, alt + (size_t)j * n, sub);
	}
	if (rc == DS_OK && got)
		*got = alts_distinct(g, order, alt, nk);
	ds_arena_free(&ar);
	return rc;
}

int ds_mpas(const ds_graph *g, const ds_mpas_opts *o, int32_t *order,
	    ds_err *e)
{
	return ds_mpas_alts(g, o, order, NULL, NULL, 0, NULL, e);
}

