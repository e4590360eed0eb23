/* ds_rank.c: a structural rank of the nodes, a program order recovered
 * without the Ids.
 *
 * Requires: a valid graph (ds_builder_finish).  Guarantees: rank[] is a
 * permutation of 0..n-1 that depends on the graph's structure (what the
 * nodes are, their edges, the order of each operation's buffers) and on
 * the node Ids only in the order among nodes alike in all of it.  The
 * passes break their exact ties by it, so that a renumbering changes
 * nothing else.
 *
 * Method.  The rank is meant to be a program order, the order a compiler
 * would emit the graph in, recovered without the Ids:
 *
 * - a hash of what each node is, its depth and height, the operand
 *   positions of its buffers and its neighbourhood, refined (Weisfeiler-
 *   Lehman) until the number of classes stops growing, separates nodes
 *   that differ; what is left alike are mostly true symmetries (the
 *   tiles of a loop);
 * - input operations are pulled: loads (preceded by ALLOCs only), and
 *   operations that only combine inputs and feed a single operation (an
 *   L1 to L0 move, a product accumulating into the next one).  A program
 *   issues them just before their consumer, not when they could first
 *   run, and so does the rank: each walked operation is preceded by the
 *   pulled operations it needs that are not placed yet, chain by chain;
 * - the other operations follow a walk (Kahn's algorithm): the most
 *   recently enabled first, so one tile is finished before the next
 *   starts; then the one most recently reached through a buffer shared
 *   with walked work; among work as old as the start the longest path
 *   ahead first, among younger work the shortest (a reduction whose
 *   small result ends soon runs before the long branch); then the more
 *   buffers shared with the walk so far (a tiled loop keeps the
 *   direction it took); then the hash.  In a loop nest whose iterations
 *   carry state (the running maximum and sum of an attention kernel),
 *   the first steps of every state chain have the longest paths ahead,
 *   so the walk advances all chains a step at a time, which holds the
 *   chains' state and one step's operands rather than every step's
 *   operands;
 * - an ALLOC ranks just before its first operation, a FREE just after
 *   its last.
 *
 * The band order (ds_band_order()) is another program order, for graphs
 * without loop structure (the generator's random DAGs: each value is
 * made and used within a window of recent values, so the rank's walk
 * has nothing to follow).  There every edge joins nodes close in the
 * program, so the program is the graph's long axis: a breadth-first
 * sweep over the edges taken both ways from the component's least-ranked
 * node finds one end u, a sweep from u the other end v, and a node's
 * position is d(u) - d(v) (the "double sweep" of bandwidth reduction),
 * or the reverse (both are tried: which end comes first is not known).
 * A distance is coarse (a wide window puts a hundred nodes at each), so
 * the caller may ask for rounds of smoothing: each node moves to the mean
 * place of itself and its neighbours in the last order, which is then
 * pulled again.  The operations in that order pull their ancestors not
 * placed yet
 * (depth first, predecessors in band order), a FREE goes right after
 * its last predecessor.  Operations sharing L0 buffers (an L0 group: a
 * chain of products and the moves filling its operands) go as one: first
 * what the group needs from outside, then its operations, each after
 * its predecessors in the group, deepest first, so its L0 buffers follow
 * each other and the one-live rule holds whenever the groups need
 * nothing of each other.
 *
 * Cost, N nodes, E constraint edges: O(N + E) per round of hashing
 * (until the classes stop growing, at most CANON_ROUNDS; the class counts
 * sort by radix, ds_hkey_sort), O(N log N) for the final sort, plus
 * the walk's re-ageing, O(T log N) for T at most TOUCH_MAX per buffer per
 * walked operation.  Memory O(N + E + T).  The band order: O(N + E) for
 * the sweeps and each pull, O((N + E) log(N + E)) for the sorts of each
 * pull (one, plus one per round of smoothing); memory O(N + E). */
#include "ds_stage.h"
#include "ds_rank.h"

#include <stdlib.h>
#include <string.h>

/* Rounds of neighbourhood hashing, at most: a bound on the cost, as the
 * refinement stops by itself once the classes stop growing (which round
 * that is on the bundled graphs was not measured). */
#define CANON_ROUNDS 64

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

/* A node's place in the rank before the final sort: its walk position,
 * how far before its consumer a pulled operation goes, ALLOC / operation
 * / FREE, then the hash rank. */
typedef struct pkey {
	int64_t pos;
	int32_t sub;
	int32_t cls;
	int32_t h;
	int32_t x;
} pkey;

/* Before in (pos, sub) alone. */
static bool pkey_before(const pkey *p, const pkey *q)
{
	return p->pos != q->pos ? p->pos < q->pos : p->sub < q->sub;
}

static int pkey_cmp(const void *a, const void *b)
{
	const pkey *p = a, *q = b;
	if (pkey_before(p, q))
		return -1;
	if (pkey_before(q, p))
		return 1;
	if (p->cls != q->cls)
		return p->cls < q->cls ? -1 : 1;
	return (p->h > q->h) - (p->h < q->h);
}

/* Number of distinct values in hs[0..n), with k[0..n] as scratch. */
static int32_t count_classes(const ds_heap *h, const uint64_t *hs, int32_t n,
			     ds_hkey *k)
{
	int32_t c = 0;
	for (int32_t x = 0; x < n; x++)
		k[x] = (ds_hkey){hs[x], x};
	ds_hkey_sort(h, k, (size_t)n);
	for (int32_t i = 0; i < n; i++)
		c += i == 0 || k[i].h != k[i - 1].h;
	return c;
}

/* The operands of x in their order: for an operation, its buffers
 * (their ALLOCs) by position in its list; for an ALLOC or FREE, the
 * operations using its buffer and where in their lists.  The order of
 * an operation's buffers is part of what it computes (which input of a
 * subtraction is the older value), so it may tell nodes apart. */
static uint64_t operands(const ds_graph *g, const uint64_t *hs, int32_t x)
{
	uint64_t c = 0;
	if (g->kind[x] == DS_OP) {
		for (int32_t j = g->use_off[x]; j < g->use_off[x + 1]; j++)
			c += mix64(hs[g->buf_alloc[g->use[j]]] +
				   (uint64_t)(j - g->use_off[x]) * 16 + 5);
		return c;
	}
	int32_t b = g->buf[x];
	for (int32_t j = g->user_off[b]; j < g->user_off[b + 1]; j++) {
		int32_t u = g->user[j];
		for (int32_t i = g->use_off[u]; i < g->use_off[u + 1]; i++)
			if (g->use[i] == b)
				c += mix64(hs[u] + (uint64_t)(i - g->use_off[u]) *
							   16 + 7);
	}
	return c;
}

/* The structural hash of every node into hs[]: the node, its depth and
 * height, its neighbourhood.  ht[] gets the height in operations; h2,
 * dp and k are scratch. */
static void hash_nodes(const ds_graph *g, uint64_t *hs, uint64_t *h2,
		       int32_t *dp, int32_t *ht, ds_hkey *k)
{
	const int32_t n = g->n;
	for (int32_t x = 0; x < n; x++) {
		uint64_t z = mix64(g->kind[x] + 1) ^ str_hash(g->ops[g->op[x]]);
		if (g->pipe[x] >= 0)
			z ^= mix64(str_hash(g->pipes[g->pipe[x]]));
		z = mix64(z + (uint64_t)g->cycles[x]);
		if (g->kind[x] != DS_OP)
			z = mix64(z + (uint64_t)g->buf_size[g->buf[x]] * 8 +
				  g->buf_mem[g->buf[x]]);
		hs[x] = z;
	}
	/* the longest paths from a root and to a leaf, in operations,
	 * place a node in the whole graph */
	memset(dp, 0, (size_t)n * sizeof *dp);
	memset(ht, 0, (size_t)n * sizeof *ht);
	for (int32_t i = 0; i < n; i++) {
		int32_t x = g->topo[i], y = g->topo[n - 1 - i];
		for (int32_t j = g->pred_off[x]; j < g->pred_off[x + 1]; j++) {
			int32_t p = g->pred[j];
			int32_t d = dp[p] + (g->kind[p] == DS_OP);
			if (d > dp[x])
				dp[x] = d;
		}
		for (int32_t j = g->succ_off[y]; j < g->succ_off[y + 1]; j++) {
			int32_t s = g->succ[j];
			int32_t d = ht[s] + (g->kind[s] == DS_OP);
			if (d > ht[y])
				ht[y] = d;
		}
	}
	for (int32_t x = 0; x < n; x++)
		hs[x] = mix64(hs[x] + mix64((uint64_t)dp[x] << 32 | (uint32_t)ht[x]));
	/* sums of mixed hashes: independent of the lists' order; until the
	 * number of classes stops growing (each round refines the last) */
	int32_t classes = count_classes(g->heap, hs, n, k);
	for (int round = 0; round < CANON_ROUNDS; round++) {
		for (int32_t x = 0; x < n; x++) {
			uint64_t a = 0, b = 0;
			for (int32_t j = g->pred_off[x]; j < g->pred_off[x + 1];
			     j++)
				a += mix64(hs[g->pred[j]] + 1);
			for (int32_t j = g->succ_off[x]; j < g->succ_off[x + 1];
			     j++)
				b += mix64(hs[g->succ[j]] + 2);
			h2[x] = mix64(hs[x] ^ mix64(a) ^ (mix64(b) * 3) ^
				      (mix64(operands(g, hs, x)) * 5));
		}
		memcpy(hs, h2, (size_t)n * sizeof *hs);
		int32_t c = count_classes(g->heap, hs, n, k);
		if (c == classes)
			break;
		classes = c;
	}
}

/* hr[0..n): the nodes by hash, nodes alike in it by Id.  k is
 * scratch. */
static void hash_rank(const ds_heap *h, const uint64_t *hs, int32_t n,
		      ds_hkey *k, int32_t *hr)
{
	for (int32_t x = 0; x < n; x++)
		k[x] = (ds_hkey){hs[x], x};
	ds_hkey_sort(h, k, (size_t)n);
	for (int32_t i = 0; i < n; i++)
		hr[k[i].x] = i;
}

/* Pulled operations (see above) into pull[], along the topological
 * order. */
static void pulled(const ds_graph *g, uint8_t *pull)
{
	for (int32_t i = 0; i < g->n; i++) {
		int32_t x = g->topo[i], nops = 0, osucc = 0;
		bool inputs = true;
		pull[x] = 0;
		if (g->kind[x] != DS_OP)
			continue;
		for (int32_t j = g->pred_off[x]; j < g->pred_off[x + 1]; j++) {
			int32_t p = g->pred[j];
			if (g->kind[p] == DS_OP) {
				nops++;
				inputs = inputs && pull[p];
			}
		}
		for (int32_t j = g->succ_off[x]; j < g->succ_off[x + 1]; j++)
			osucc += g->kind[g->succ[j]] == DS_OP;
		pull[x] = nops == 0 || (inputs && osucc == 1);
	}
}

/* ---- the walk ---- */

/* A ready operation in the walk: the younger first, then the more
 * recently reached through a shared buffer, then the longer path ahead
 * for work as old as the start and the shorter for the rest, then more
 * inputs shared with the walk so far, then the hash rank. */
typedef struct went {
	int64_t age, tage;
	int32_t ht, cnt, hr, x;
} went;

static bool went_before(const went *a, const went *b)
{
	if (a->age != b->age)
		return a->age > b->age;
	if (a->tage != b->tage)
		return a->tage > b->tage;
	if (a->ht != b->ht)
		return a->age > 0 ? a->ht < b->ht : a->ht > b->ht;
	if (a->cnt != b->cnt)
		return a->cnt > b->cnt;
	return a->hr < b->hr;
}

typedef struct wheap {
	went *e;
	int64_t n, cap;
	int64_t npop; /* pops so far (the debug check's interval) */
} wheap;

static int wheap_push(ds_arena *a, wheap *q, went v, ds_err *err)
{
	if (q->n == q->cap) {
		int64_t cap = q->cap < 16 ? 16 : 2 * q->cap;
		went *e = ds_arena_grow(a, q->e, (size_t)cap, sizeof *e);
		if (!e)
			return ds_fail(err, DS_ENOMEM, "out of memory");
		q->e = e;
		q->cap = cap;
	}
	int64_t i = q->n++;
	while (i > 0 && went_before(&v, &q->e[(i - 1) / 2])) {
		q->e[i] = q->e[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	q->e[i] = v;
	return DS_OK;
}

/* Debug check (asserts live only): at the 2^k-th pop, the heap order
 * of every entry against its parent, O(size) each time. */
static void wheap_check(wheap *q)
{
#ifndef NDEBUG
	q->npop++;
	if (q->npop & (q->npop - 1))
		return;
	for (int64_t i = 1; i < q->n; i++)
		DS_ASSERT(!went_before(&q->e[i], &q->e[(i - 1) / 2]));
#else
	(void)q;
#endif
}

static went wheap_pop(wheap *q)
{
	wheap_check(q);
	went top = q->e[0], v = q->e[--q->n];
	int64_t i = 0;
	for (;;) {
		int64_t c = 2 * i + 1;
		if (c >= q->n)
			break;
		if (c + 1 < q->n && went_before(&q->e[c + 1], &q->e[c]))
			c++;
		if (!went_before(&q->e[c], &v))
			break;
		q->e[i] = q->e[c];
		i = c;
	}
	q->e[i] = v;
	return top;
}

/* A buffer that more than TOUCH_MAX walked operations read re-ages none
 * of them: a buffer everything reads says little about what to do next,
 * and scanning its readers at every step would cost O(N) each.  32 or
 * 128: the same peak_vstay from MPAS on the six bundled graphs and gen
 * random/attention at 3000 nodes (issue 15's measurement, ds_mpas.c). */
#define TOUCH_MAX 64

/* The walk state: which buffers each walked operation touches (its own
 * and its pulled inputs'), and the reverse. */
typedef struct walk {
	int64_t *hoff, *boff; /* CSR offsets of the two below */
	int32_t *hbuf;	      /* per walked operation, its buffers */
	int32_t *bop;	      /* per buffer, the walked operations */
	int32_t *mark, *cnt, *list;
	int64_t *age; /* when a walked operation became ready */
	wheap q;
	ds_arena *ar; /* where all of these come from */
} walk;

/* The buffers of walked operation x and of the pulled operations it
 * pulls (found depth first, marked st); into out when out is set.
 * Returns how many. */
static int32_t head_bufs(const ds_graph *g, const uint8_t *pull, int32_t x,
			 int32_t st, int32_t *nmark, int32_t *bmark,
			 int32_t *stk, int32_t *out)
{
	int32_t sp = 0, nb = 0;
	nmark[x] = st;
	stk[sp++] = x;
	while (sp > 0) {
		int32_t y = stk[--sp];
		for (int32_t j = g->use_off[y]; j < g->use_off[y + 1]; j++) {
			int32_t b = g->use[j];
			if (bmark[b] == st)
				continue;
			bmark[b] = st;
			if (out)
				out[nb] = b;
			nb++;
		}
		for (int32_t j = g->pred_off[y]; j < g->pred_off[y + 1]; j++) {
			int32_t p = g->pred[j];
			if (g->kind[p] != DS_OP || !pull[p] || nmark[p] == st)
				continue;
			nmark[p] = st;
			stk[sp++] = p;
		}
	}
	return nb;
}

/* The walk's tables from a: each walked operation's buffers (its own
 * and its pulled inputs'), and each buffer's walked operations. */
static int walk_init(const ds_graph *g, const uint8_t *pull, walk *w,
		     int32_t *stk, ds_arena *a, ds_err *e)
{
	const int32_t n = g->n, nb = g->nbuf;
	const size_t n1 = (size_t)n + 1;
	memset(w, 0, sizeof *w);
	w->ar = a;
	w->hoff = ds_arena_alloc(a, n1, sizeof *w->hoff);
	w->boff = ds_arena_alloc(a, (size_t)nb + 2, sizeof *w->boff);
	w->mark = ds_arena_alloc(a, n1, sizeof *w->mark);
	w->cnt = ds_arena_alloc(a, n1, sizeof *w->cnt);
	w->list = ds_arena_alloc(a, n1, sizeof *w->list);
	w->age = ds_arena_alloc(a, n1, sizeof *w->age);
	int32_t *bmark = ds_arena_alloc(a, (size_t)nb + 1, sizeof *bmark);
	if (a->failed)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	int32_t st = 0;
	int64_t tot = 0;
	for (int pass = 0; pass < 2; pass++) {
		tot = 0;
		for (int32_t x = 0; x < n; x++) {
			w->hoff[x] = tot;
			if (g->kind[x] != DS_OP || pull[x])
				continue;
			tot += head_bufs(g, pull, x, ++st, w->mark, bmark, stk,
					 pass ? w->hbuf + tot : NULL);
		}
		w->hoff[n] = tot;
		if (!pass) {
			w->hbuf = ds_arena_alloc(a, (size_t)tot + 1,
						 sizeof *w->hbuf);
			w->bop = ds_arena_alloc(a, (size_t)tot + 1,
						sizeof *w->bop);
			if (a->failed)
				return ds_fail(e, DS_ENOMEM, "out of memory");
		}
	}
	ds_arena_release(a, bmark);
	/* the reverse, each buffer's operations in increasing x (the
	 * order does not matter: all of them are counted) */
	for (int64_t i = 0; i < tot; i++)
		w->boff[w->hbuf[i] + 2]++;
	for (int32_t b = 0; b < nb; b++)
		w->boff[b + 2] += w->boff[b + 1];
	for (int32_t x = 0; x < n; x++)
		for (int64_t i = w->hoff[x]; i < w->hoff[x + 1]; i++)
			w->bop[w->boff[w->hbuf[i] + 1]++] = x;
	memset(w->mark, 0, (size_t)n * sizeof *w->mark);
	return DS_OK;
}

/* The walked operations that wait for nothing and share buffers with
 * the operation x just walked (at step stamp) are as young as it now,
 * the more shared the better: pushed again with that age. */
static int walk_reage(const int32_t *ht, const int32_t *hr, walk *w,
		      const int32_t *indeg, const int64_t *pos, int32_t x,
		      int64_t stamp, ds_err *e)
{
	int32_t nl = 0;
	for (int64_t i = w->hoff[x]; i < w->hoff[x + 1]; i++) {
		int32_t b = w->hbuf[i];
		int64_t b0 = w->boff[b], b1 = w->boff[b + 1];
		if (b1 - b0 > TOUCH_MAX)
			continue;
		for (int64_t j = b0; j < b1; j++) {
			int32_t y = w->bop[j];
			if (pos[y] >= 0 || indeg[y] != 0)
				continue;
			if (w->mark[y] != x + 1) {
				w->mark[y] = x + 1;
				w->list[nl++] = y;
			}
			w->cnt[y]++;
		}
	}
	for (int32_t i = 0; i < nl; i++) {
		int32_t y = w->list[i];
		if (wheap_push(w->ar, &w->q,
			       (went){w->age[y], stamp, ht[y], w->cnt[y], hr[y],
				      y},
			       e))
			return DS_ENOMEM;
	}
	return DS_OK;
}

/* Walks the graph (see the rank's comment) into pos[]: for a walked
 * operation its place among them (from 1), for other nodes the number
 * of walked operations before them.  Buffer nodes and pulled operations
 * go at once (stack stk), walked operations through the heap. */
static int walk_run(const ds_graph *g, const uint8_t *pull, const int32_t *ht,
		    const int32_t *hr, walk *w, int32_t *indeg, int32_t *stk,
		    int64_t *pos, ds_err *e)
{
	const int32_t n = g->n;
	int32_t sp = 0;
	int64_t stamp = 0;
	w->q.n = 0;
	memset(w->mark, 0, (size_t)n * sizeof *w->mark);
	memset(w->cnt, 0, (size_t)n * sizeof *w->cnt);
	for (int32_t x = 0; x < n; x++) {
		pos[x] = -1;
		indeg[x] = g->pred_off[x + 1] - g->pred_off[x];
		if (indeg[x] != 0)
			continue;
		if (g->kind[x] != DS_OP || pull[x])
			stk[sp++] = x;
		else if (wheap_push(w->ar, &w->q,
				    (went){0, 0, ht[x], 0, hr[x], x}, e))
			return DS_ENOMEM;
	}
	for (;;) {
		int32_t x;
		if (sp > 0) {
			x = stk[--sp];
		} else if (w->q.n > 0) {
			went v = wheap_pop(&w->q);
			x = v.x;
			if (pos[x] >= 0)
				continue; /* a stale entry */
			stamp++;
		} else {
			break;
		}
		pos[x] = stamp;
		for (int32_t j = g->succ_off[x]; j < g->succ_off[x + 1]; j++) {
			int32_t y = g->succ[j];
			if (--indeg[y] != 0)
				continue;
			if (g->kind[y] != DS_OP || pull[y])
				stk[sp++] = y;
			else if (wheap_push(w->ar, &w->q,
					    (went){stamp, stamp, ht[y], 0, hr[y], y},
					    e))
				return DS_ENOMEM;
			else
				w->age[y] = stamp;
		}
		if (g->kind[x] == DS_OP && !pull[x] &&
		    walk_reage(ht, hr, w, indeg, pos, x, stamp, e))
			return DS_ENOMEM;
	}
	return DS_OK;
}

void ds_rank_sort_lists(const ds_heap *h, const int32_t *off, int32_t *adj,
			int32_t n, const int32_t *rank, ds_hkey *k)
{
	int64_t ne = off[n];
	for (int32_t x = 0; x < n; x++)
		for (int32_t i = off[x]; i < off[x + 1]; i++)
			k[i] = (ds_hkey){(uint64_t)x << 32 | (uint32_t)rank[adj[i]],
				      adj[i]};
	ds_hkey_sort(h, k, (size_t)ne);
	for (int64_t i = 0; i < ne; i++)
		adj[i] = k[i].x;
}

/* The structural rank's working state: the hashes, depths and heights,
 * the pulled operations, the walk's tables, scratch; all from ar. */
typedef struct canon {
	ds_arena ar;
	uint64_t *hs, *h2;
	ds_hkey *k, *k2;	 /* k2: [E + 1] */
	int32_t *psort; /* pred lists sorted by the hash rank */
	pkey *pk;
	int32_t *indeg, *ht, *hr, *stk;
	int32_t *dp; /* depth in operations */
	uint8_t *pull;
	walk W;
} canon;

static int canon_init(const ds_graph *g, canon *c, ds_err *e)
{
	const int32_t n = g->n;
	const size_t n1 = (size_t)n + 1, ne1 = (size_t)g->pred_off[n] + 1;
	ds_arena *a = &c->ar;
	memset(c, 0, sizeof *c);
	ds_arena_init(a, g->heap);
	c->hs = ds_arena_alloc(a, n1, sizeof *c->hs);
	c->h2 = ds_arena_alloc(a, n1, sizeof *c->h2);
	c->k = ds_arena_alloc(a, n1, sizeof *c->k);
	c->k2 = ds_arena_alloc(a, ne1, sizeof *c->k2);
	c->psort = ds_arena_alloc(a, ne1, sizeof *c->psort);
	c->pk = ds_arena_alloc(a, n1, sizeof *c->pk);
	c->indeg = ds_arena_alloc(a, n1, sizeof *c->indeg);
	c->ht = ds_arena_alloc(a, n1, sizeof *c->ht);
	c->hr = ds_arena_alloc(a, n1, sizeof *c->hr);
	c->stk = ds_arena_alloc(a, n1, sizeof *c->stk);
	c->dp = ds_arena_alloc(a, n1, sizeof *c->dp);
	c->pull = ds_arena_alloc(a, n1, sizeof *c->pull);
	if (a->failed)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	hash_nodes(g, c->hs, c->h2, c->dp, c->ht, c->k);
	pulled(g, c->pull);
	return walk_init(g, c->pull, &c->W, c->stk, a, e);
}

/* The pred lists into psort, deepest first (a chain of products
 * accumulating into one buffer is followed back before the moves of its
 * last step), then by hash rank; placed[] is scratch. */
static void canon_pred_order(const ds_graph *g, canon *c, int32_t *placed)
{
	const int32_t n = g->n;
	for (int32_t x = 0; x < n; x++)
		c->k[x] = (ds_hkey){(uint64_t)(n - c->dp[x]) << 32 |
					    (uint32_t)c->hr[x],
				    x};
	ds_hkey_sort(g->heap, c->k, (size_t)n);
	for (int32_t i = 0; i < n; i++)
		placed[c->k[i].x] = i;
	memcpy(c->psort, g->pred, (size_t)g->pred_off[n] * sizeof *c->psort);
	ds_rank_sort_lists(g->heap, g->pred_off, c->psort, n, placed, c->k2);
}

/* The pulled operations walked operation hd needs that are not placed
 * yet, depth first (preds in psort order), just before it. */
static void canon_pull(const ds_graph *g, canon *c, int32_t hd,
		       const int64_t *pos, int32_t *placed)
{
	const int32_t *ps = c->psort;
	int32_t *idx = c->W.cnt, *emit = c->stk;
	int32_t *st = c->indeg; /* zero after the walk; scratch */
	int32_t sp = 0, ne = 0;
	st[sp] = hd;
	idx[sp++] = g->pred_off[hd];
	while (sp > 0) {
		int32_t y = st[sp - 1], p = -1;
		while (idx[sp - 1] < g->pred_off[y + 1]) {
			int32_t q = ps[idx[sp - 1]++];
			if (!placed[q]) {
				p = q;
				break;
			}
		}
		if (p >= 0) {
			placed[p] = 1;
			st[sp] = p;
			idx[sp++] = g->pred_off[p];
			continue;
		}
		sp--;
		if (y != hd)
			emit[ne++] = y;
	}
	for (int32_t t = 0; t < ne; t++) {
		c->pk[emit[t]].pos = pos[hd];
		c->pk[emit[t]].sub = t - ne;
	}
}

/* Operations: walked ones at their position; pulled ones just before the
 * first walked operation that needs them, depth first, so that two
 * products feeding one operation do not interleave their moves. */
static void canon_operations(const ds_graph *g, canon *c, const int64_t *pos)
{
	const int32_t n = g->n;
	int32_t *byp = c->W.list, *placed = c->W.mark, nw = 0;
	canon_pred_order(g, c, placed);
	for (int32_t x = 0; x < n; x++) {
		c->pk[x] = (pkey){pos[x], 0, 1, c->hr[x], x};
		bool walked = g->kind[x] == DS_OP && !c->pull[x];
		placed[x] = !(g->kind[x] == DS_OP && c->pull[x]);
		if (walked) {
			DS_ASSERT(pos[x] >= 1 && pos[x] <= n);
			byp[pos[x] - 1] = x;
			nw++;
		}
	}
	for (int32_t i = 0; i < nw; i++)
		canon_pull(g, c, byp[i], pos, placed);
	memset(c->indeg, 0, (size_t)n * sizeof *c->indeg);
}

/* An ALLOC just before its first operation, a FREE just after its
 * last. */
static void canon_buffers(const ds_graph *g, pkey *pk)
{
	for (int32_t x = 0; x < g->n; x++) {
		if (g->kind[x] == DS_OP)
			continue;
		bool alloc = g->kind[x] == DS_ALLOC, any = false;
		const int32_t *adj = alloc ? g->succ : g->pred;
		int32_t a0 = alloc ? g->succ_off[x] : g->pred_off[x];
		int32_t a1 = alloc ? g->succ_off[x + 1] : g->pred_off[x + 1];
		pk[x].cls = alloc ? 0 : 2;
		for (int32_t j = a0; j < a1; j++) {
			const pkey *q = &pk[adj[j]];
			if (g->kind[adj[j]] != DS_OP)
				continue;
			if (!any || (alloc ? pkey_before(q, &pk[x])
					   : pkey_before(&pk[x], q))) {
				pk[x].pos = q->pos;
				pk[x].sub = q->sub;
			}
			any = true;
		}
	}
}

/* rank[0..n): a permutation of 0..n-1 as described above.
 * O((N + E) log N), plus the walk's re-ageing: O(T log N) for T the
 * (operation, shared buffer) pairs, at most TOUCH_MAX per buffer per
 * walked operation. */
static int canon_rank(const ds_graph *g, canon *c, int32_t *rank,
		      ds_err *e)
{
	const int32_t n = g->n;
	int64_t *pos = (int64_t *)c->h2;
	hash_rank(g->heap, c->hs, n, c->k, c->hr);
	int rc = walk_run(g, c->pull, c->ht, c->hr, &c->W, c->indeg, c->stk,
			  pos, e);
	if (rc)
		return rc;
	canon_operations(g, c, pos);
	canon_buffers(g, c->pk);
	qsort(c->pk, (size_t)n, sizeof *c->pk, pkey_cmp);
	for (int32_t i = 0; i < n; i++)
		rank[c->pk[i].x] = i;
	return DS_OK;
}

int ds_structural_rank(const ds_graph *g, int32_t *rank, ds_err *e)
{
	canon c;
	int rc = canon_init(g, &c, e);
	if (rc == DS_OK)
		rc = canon_rank(g, &c, rank, e);
	ds_arena_free(&c.ar);
	return rc;
}

/* ---- the band order ---- */

/* A node's place in the band order: its component, its position along
 * the component's long axis, then the rank. */
typedef struct bkey {
	int64_t pos;
	int32_t comp, rank, x;
} bkey;

static int bkey_cmp(const void *a, const void *b)
{
	const bkey *p = a, *q = b;
	if (p->comp != q->comp)
		return p->comp < q->comp ? -1 : 1;
	if (p->pos != q->pos)
		return p->pos < q->pos ? -1 : 1;
	return (p->rank > q->rank) - (p->rank < q->rank);
}

/* Breadth-first search from s over the constraint edges taken both
 * ways: dist[] for the nodes reached (the queue, which holds them in
 * the order reached, *len of them); returns the farthest node, the
 * least rank among those as far. */
static int32_t band_bfs(const ds_graph *g, const int32_t *rank, int32_t s,
			int32_t *dist, int32_t *mark, int32_t stamp,
			int32_t *queue, int32_t *len)
{
	int32_t head = 0, tail = 0, far = s;
	queue[tail++] = s;
	mark[s] = stamp;
	dist[s] = 0;
	while (head < tail) {
		int32_t x = queue[head++];
		if (dist[x] > dist[far] ||
		    (dist[x] == dist[far] && rank[x] < rank[far]))
			far = x;
		for (int dir = 0; dir < 2; dir++) {
			const int32_t *off = dir ? g->succ_off : g->pred_off;
			const int32_t *adj = dir ? g->succ : g->pred;
			for (int32_t k = off[x]; k < off[x + 1]; k++) {
				int32_t y = adj[k];
				if (mark[y] == stamp)
					continue;
				mark[y] = stamp;
				dist[y] = dist[x] + 1;
				queue[tail++] = y;
			}
		}
	}
	*len = tail;
	return far;
}

/* The pull: a machine of explicit frames (the graphs are deep).  A NODE
 * frame emits its node after its predecessors; a GROUP frame runs an L0
 * group (operations that share L0 buffers) at once: first what it needs
 * from outside, then its operations, each after its predecessors inside
 * the group, deepest first (the chain holding an L0 buffer before the
 * move that fills the next one), so the group's L0 buffers follow each
 * other; GNODE is one such step.  A NODE that meets one of its own
 * pullers (the group's needs lead back into the order being pulled)
 * gives up up to the nearest GROUP, which goes on; the operations are
 * pulled again later as plain nodes. */
enum { F_NODE, F_GNODE, F_GROUP };

typedef struct bframe {
	int32_t x;   /* node, or group (its root) */
	int32_t i;   /* next predecessor, or member */
	int8_t type;
	int8_t phase; /* GROUP: 0 outside needs, 1 sinks, 2 the rest */
	int8_t wait;  /* GNODE: its node's NODE frame is pushed */
} bframe;

typedef struct band {
	const ds_graph *g;
	int32_t *ps;		   /* predecessors: the group's first */
	const int32_t *rank;
	const int32_t *grp;	   /* group root per node, -1: none */
	int32_t *moff, *mem;	   /* members per group root, band order */
	uint8_t *state;		   /* 0 new, 1 on a NODE frame, 2 out */
	uint8_t *started;	   /* per group root */
	int32_t *left;		   /* predecessors not out yet */
	int32_t *work;		   /* FREEs to emit */
	bframe *st;
	int32_t sp;
	bool abort;
	int32_t *out, len;
} band;

static void band_emit(band *b, int32_t x)
{
	const ds_graph *g = b->g;
	int32_t wl = 0, wr = 0;
	b->work[wr++] = x;
	b->state[x] = 2;
	while (wl < wr) {
		int32_t z = b->work[wl++], w0 = wr;
		b->out[b->len++] = z;
		for (int32_t k = g->succ_off[z]; k < g->succ_off[z + 1]; k++) {
			int32_t s = g->succ[k];
			if (--b->left[s] == 0 && !b->state[s] &&
			    g->kind[s] == DS_FREE) {
				b->state[s] = 2;
				b->work[wr++] = s;
			}
		}
		/* the FREEs z completes by rank, not in the Ids' order of
		 * the succ list (as many as z's buffers: an insertion
		 * sort) */
		for (int32_t i = w0 + 1; i < wr; i++) {
			int32_t t = b->work[i], j = i;
			for (; j > w0 && b->rank[b->work[j - 1]] > b->rank[t];
			     j--)
				b->work[j] = b->work[j - 1];
			b->work[j] = t;
		}
	}
}

/* Pushes what pulls x: its group, or x itself; false when x can only
 * wait (on a frame below). */
static bool band_push(band *b, int32_t x, bool plain)
{
	int32_t r = b->grp[x];
	if (!plain && r >= 0 && !b->started[r]) {
		b->started[r] = 1;
		b->st[b->sp++] = (bframe){r, b->moff[r], F_GROUP, 0, 0};
		return true;
	}
	if (b->state[x])
		return false;
	b->state[x] = 1;
	b->st[b->sp++] = (bframe){x, b->g->pred_off[x], F_NODE, 0, 0};
	return true;
}

/* A give-up in progress: frames up to the nearest GROUP are dropped (a
 * NODE's node is new again); there the member in hand waits. */
static void band_unwind(band *b, bframe *f)
{
	if (f->type != F_GROUP) {
		if (f->type == F_NODE)
			b->state[f->x] = 0;
		b->sp--;
		return;
	}
	b->abort = false;
	if (f->phase == 0)
		f->i++;
}

/* A NODE: its next predecessor not out is pulled; with none left, the
 * node goes out. */
static void band_step_node(band *b, bframe *f)
{
	const ds_graph *g = b->g;
	int32_t x = f->x;
	if (f->i == g->pred_off[x + 1]) {
		b->sp--;
		band_emit(b, x);
		return;
	}
	int32_t p = b->ps[f->i];
	if (b->state[p] == 2)
		f->i++;
	else if (!band_push(b, p, false))
		b->abort = true; /* p is a puller of x */
}

/* A GNODE: its predecessors inside the group first (GNODEs), then its
 * node as a plain NODE. */
static void band_step_gnode(band *b, bframe *f)
{
	const ds_graph *g = b->g;
	int32_t x = f->x;
	if (f->wait || b->state[x] == 2) {
		b->sp--;
		return;
	}
	int32_t p = f->i < g->pred_off[x + 1] ? b->ps[f->i] : -1;
	if (p >= 0 && b->grp[p] == b->grp[x]) {
		f->i++;
		if (b->state[p] != 2)
			b->st[b->sp++] =
				(bframe){p, g->pred_off[p], F_GNODE, 0, 0};
		return;
	}
	f->wait = 1;
	if (!band_push(b, x, true))
		b->abort = true;
}

/* A GROUP's phase 0 at member y: what the group needs from outside; the
 * ALLOCs wait for their users. */
static void band_group_needs(band *b, bframe *f, int32_t y)
{
	const ds_graph *g = b->g;
	int32_t k = g->pred_off[y], end_p = g->pred_off[y + 1];
	for (; k < end_p; k++) {
		int32_t p = b->ps[k];
		if (b->grp[p] != f->x && b->state[p] != 2 &&
		    g->kind[p] != DS_ALLOC)
			break;
	}
	/* a need already being pulled below is not one the group can meet
	 * first: the member waits */
	if (k == end_p || !band_push(b, b->ps[k], false))
		f->i++;
}

/* A GROUP: member by member, its outside needs (phase 0), its sinks as
 * GNODEs (phase 1), then the rest (phase 2). */
static void band_step_group(band *b, bframe *f)
{
	const ds_graph *g = b->g;
	int32_t r = f->x;
	if (f->i == b->moff[r + 1]) {
		if (f->phase == 2) {
			b->sp--;
			return;
		}
		f->phase++;
		f->i = b->moff[r];
		return;
	}
	int32_t y = b->mem[f->i];
	if (f->phase == 0) {
		band_group_needs(b, f, y);
		return;
	}
	f->i++;
	if (b->state[y] == 2)
		return;
	if (f->phase == 2) {
		band_push(b, y, true);
		return;
	}
	bool sink = true;
	for (int32_t k = g->succ_off[y]; k < g->succ_off[y + 1] && sink; k++)
		sink = b->grp[g->succ[k]] != r;
	if (sink)
		b->st[b->sp++] = (bframe){y, g->pred_off[y], F_GNODE, 0, 0};
}

static void band_run(band *b)
{
	while (b->sp > 0) {
		bframe *f = &b->st[b->sp - 1];
		if (b->abort)
			band_unwind(b, f);
		else if (f->type == F_NODE)
			band_step_node(b, f);
		else if (f->type == F_GNODE)
			band_step_gnode(b, f);
		else
			band_step_group(b, f);
	}
}

/* One band order by pos[]: the predecessor lists sorted (the group's
 * first, deepest first, then the others by place), the members of each
 * group and then every node by place, and the pull. */
static void band_once(band *b, const int32_t *rank, const int32_t *comp,
		      const int64_t *pos, const int32_t *dep, bkey *k)
{
	const ds_graph *g = b->g;
	const int32_t n = g->n;
	const int64_t ne = g->pred_off[n];
	const int32_t *grp = b->grp;
	int32_t *ps = b->ps, *moff = b->moff, *mem = b->mem;
	for (int32_t x = 0; x < n; x++)
		for (int32_t j = g->pred_off[x]; j < g->pred_off[x + 1]; j++) {
			int32_t p = g->pred[j];
			bool same = grp[x] >= 0 && grp[p] == grp[x];
			k[j] = (bkey){same ? INT64_MIN / 2 - dep[p] : pos[p], x,
				      rank[p], p};
		}
	qsort(k, (size_t)ne, sizeof *k, bkey_cmp);
	for (int64_t j = 0; j < ne; j++)
		ps[j] = k[j].x;
	for (int32_t x = 0; x < n; x++) {
		k[x] = (bkey){pos[x], comp[x], rank[x], x};
		b->left[x] = g->pred_off[x + 1] - g->pred_off[x];
		b->state[x] = b->started[x] = 0;
		moff[x] = 0;
	}
	moff[n] = moff[n + 1] = 0;
	qsort(k, (size_t)n, sizeof *k, bkey_cmp);
	for (int32_t x = 0; x < n; x++)
		if (grp[x] >= 0)
			moff[grp[x] + 1]++;
	for (int32_t x = 0; x < n; x++)
		moff[x + 1] += moff[x];
	for (int32_t i = 0; i < n; i++) {
		int32_t x = k[i].x;
		if (grp[x] >= 0)
			mem[moff[grp[x]]++] = x;
	}
	for (int32_t x = n; x > 0; x--)
		moff[x] = moff[x - 1];
	moff[0] = 0;
	/* the operations in band order pull their ancestors; then what no
	 * operation needed */
	b->len = 0;
	for (int pass = 0; pass < 2; pass++)
		for (int32_t i = 0; i < n; i++) {
			int32_t x = k[i].x;
			if (b->state[x] == 2 ||
			    (!pass && g->kind[x] != DS_OP))
				continue;
			band_push(b, x, false);
			band_run(b);
			DS_ASSERT(!b->abort);
			b->abort = false;
		}
#ifndef NDEBUG
	/* every node out once, after all its predecessors: the counters
	 * band_emit keeps end at zero (O(N), once per order) */
	for (int32_t x = 0; x < n; x++)
		DS_ASSERT(b->state[x] == 2 && b->left[x] == 0);
#endif
}

static int32_t uf_find(int32_t *par, int32_t x)
{
	while (par[x] != x) {
		par[x] = par[par[x]];
		x = par[x];
	}
	return x;
}

/* The scratch of one ds_band_order, all from one arena: per node the
 * distances (du: then the position along the long axis; dv: then the
 * depth inside the L0 group), the component, and the pull's arrays. */
typedef struct bscratch {
	int32_t *du, *dv, *comp, *mark, *queue, *grp;
	int64_t *pos;
	bkey *k;
} bscratch;

/* Per component, the long axis: a sweep from its least-ranked node finds
 * one end u, a sweep from u the other end v; a node's position (in du
 * from then on) is how much nearer u than v it is (the other way when
 * rev), the components numbered by their least rank.  left[] is
 * scratch. */
static void band_axes(const ds_graph *g, const int32_t *rank, bool rev,
		      bscratch *s, int32_t *left)
{
	const int32_t n = g->n;
	for (int32_t x = 0; x < n; x++) {
		left[rank[x]] = x; /* the nodes by rank */
		s->mark[x] = -1;
	}
	int32_t ncomp = 0, stamp = 0;
	for (int32_t i = 0; i < n; i++) {
		int32_t x0 = left[i], len;
		if (s->mark[x0] >= 0)
			continue;
		int32_t u = band_bfs(g, rank, x0, s->du, s->mark, stamp++,
				     s->queue, &len);
		u = band_bfs(g, rank, u, s->du, s->mark, stamp++, s->queue,
			     &len);
		band_bfs(g, rank, u, s->dv, s->mark, stamp++, s->queue, &len);
		for (int32_t j = 0; j < len; j++) {
			int32_t x = s->queue[j];
			s->comp[x] = ncomp;
			s->du[x] = rev ? s->dv[x] - s->du[x]
				       : s->du[x] - s->dv[x];
		}
		ncomp++;
	}
}

/* The L0 groups: operations sharing L0 buffers (union-find in mark, then
 * the root per member in grp, -1 for the others); the depth inside the
 * group in dv. */
static void band_groups(const ds_graph *g, bscratch *s)
{
	const int32_t n = g->n;
	int32_t *mark = s->mark, *grp = s->grp;
	for (int32_t x = 0; x < n; x++) {
		mark[x] = x;
		grp[x] = -1;
	}
	for (int32_t b = 0; b < g->nbuf; b++) {
		if (ds_mem_stays(g->buf_mem[b]))
			continue;
		for (int32_t j = g->user_off[b]; j < g->user_off[b + 1]; j++) {
			int32_t u = uf_find(mark, g->user[j]);
			int32_t v = uf_find(mark, g->user[g->user_off[b]]);
			mark[u] = v;
			grp[g->user[j]] = 0;
		}
	}
	for (int32_t x = 0; x < n; x++)
		if (grp[x] == 0)
			grp[x] = uf_find(mark, x);
	for (int32_t i = 0; i < n; i++) {
		int32_t x = g->topo[i], d = 0;
		for (int32_t j = g->pred_off[x]; j < g->pred_off[x + 1]; j++) {
			int32_t p = g->pred[j];
			if (grp[x] >= 0 && grp[p] == grp[x] && s->dv[p] > d)
				d = s->dv[p];
		}
		s->dv[x] = d + 1;
	}
}

/* Smoothing: each node to the mean place of itself and its neighbours in
 * the last order out (in 1/1024). */
static void band_smooth(const ds_graph *g, const int32_t *out, bscratch *s)
{
	int32_t *at = s->mark;
	for (int32_t i = 0; i < g->n; i++)
		at[out[i]] = i;
	for (int32_t x = 0; x < g->n; x++) {
		int64_t sum = at[x], cnt = 1;
		for (int dir = 0; dir < 2; dir++) {
			const int32_t *off = dir ? g->succ_off : g->pred_off;
			const int32_t *adj = dir ? g->succ : g->pred;
			for (int32_t j = off[x]; j < off[x + 1]; j++, cnt++)
				sum += at[adj[j]];
		}
		s->pos[x] = sum * 1024 / cnt;
	}
}

int ds_band_order(const ds_graph *g, const int32_t *rank, bool rev,
		  int smooth, int32_t *out, ds_err *e)
{
	const int32_t n = g->n;
	const size_t n1 = (size_t)n + 1, ne = (size_t)g->pred_off[n];
	ds_arena a;
	ds_arena_init(&a, g->heap);
	bscratch s;
	s.du = ds_arena_alloc(&a, n1, sizeof *s.du);
	s.dv = ds_arena_alloc(&a, n1, sizeof *s.dv);
	s.comp = ds_arena_alloc(&a, n1, sizeof *s.comp);
	s.mark = ds_arena_alloc(&a, n1, sizeof *s.mark);
	s.queue = ds_arena_alloc(&a, n1, sizeof *s.queue);
	s.grp = ds_arena_alloc(&a, n1, sizeof *s.grp);
	s.pos = ds_arena_alloc(&a, n1, sizeof *s.pos);
	s.k = ds_arena_alloc(&a, (ne > n1 ? ne : n1) + 1, sizeof *s.k);
	band b = {
		.g = g,
		.ps = ds_arena_alloc(&a, ne + 1, sizeof *b.ps),
		.rank = rank,
		.grp = s.grp,
		.moff = ds_arena_alloc(&a, n1 + 1, sizeof *b.moff),
		.mem = ds_arena_alloc(&a, n1, sizeof *b.mem),
		.state = ds_arena_alloc(&a, n1, sizeof *b.state),
		.started = ds_arena_alloc(&a, n1, sizeof *b.started),
		.left = ds_arena_alloc(&a, n1, sizeof *b.left),
		.work = s.queue,
		.st = ds_arena_alloc(&a, 3 * n1, sizeof *b.st),
		.out = out,
	};
	if (a.failed) {
		ds_arena_free(&a);
		return ds_fail(e, DS_ENOMEM, "out of memory");
	}
	band_axes(g, rank, rev, &s, b.left);
	band_groups(g, &s);
	for (int32_t x = 0; x < n; x++)
		s.pos[x] = s.du[x];
	for (int round = 0; round <= smooth; round++) {
		if (round > 0)
			band_smooth(g, out, &s);
		band_once(&b, rank, s.comp, s.pos, s.dv, s.k);
		/* a give-up always ends at a GROUP frame (else the graph
		 * had a cycle), so every node is out; the topological
		 * order all the same should that ever fail */
		DS_ASSERT(b.len == n);
		if (b.len != n) {
			memcpy(out, g->topo, (size_t)n * sizeof *out);
			break;
		}
	}
	ds_arena_free(&a);
	return DS_OK;
}
