/* ds_rank.c: a structural rank of the nodes, a program order recovered
 * without the Ids.
 *
 * Requires: a valid graph (ds_builder_finish).  Guarantees: rank[] is a
 * permutation of 0..n-1 that depends on the graph's structure (what the
 * nodes are, their edges, the order of each operation's buffers) and on
 * the node Ids only through a choice among nodes the refinement below
 * leaves alike, which are the graph's symmetries wherever it is
 * symmetric (tiles of a loop): then a renumbered copy gets the same rank
 * up to an automorphism, i.e. the same plans.  The passes break their
 * exact ties by it, so that a renumbering changes nothing else.
 *
 * Method.  The rank is meant to be a program order, the order a compiler
 * would emit the graph in, recovered without the Ids:
 *
 * - a hash of what each node is, its depth and height, the operand
 *   positions of its buffers and its neighbourhood, refined (Weisfeiler-
 *   Lehman) until the number of classes stops growing, separates nodes
 *   that differ; what is left alike are mostly true symmetries (the
 *   tiles of a loop).  Those are ordered by individualisation-
 *   refinement: the first class of more than one node, in hash order,
 *   gives one node a class of its own, and a partition refinement (a
 *   cell split by what its nodes read of a splitter cell, as the hash
 *   reads its neighbours; all new cells but the largest become
 *   splitters) spreads that until the partition is stable; repeated
 *   until every class is one node.  Ties broken by Id would not do:
 *   two K tiles loaded by pulled COPY_INs take their order among one
 *   walked operation's pulls from this order while their consumers'
 *   order comes from the walk, so an order taken from the Ids pairs
 *   tiles and consumers differently on a renumbered copy;
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
 *   direction it took); then the hash rank.  In a loop nest whose iterations
 *   carry state (the running maximum and sum of an attention kernel),
 *   the first steps of every state chain have the longest paths ahead,
 *   so the walk advances all chains a step at a time, which holds the
 *   chains' state and one step's operands rather than every step's
 *   operands;
 * - an ALLOC ranks just before its first operation, a FREE just after
 *   its last.
 *
 * Cost, N nodes, E constraint edges: O(N + E) per round of hashing
 * (until the classes stop growing, at most CANON_ROUNDS; the class counts
 * sort by radix, ds_hkey_sort); the refinement O((N + E) log N) in all
 * (each node's readers scanned when its cell is a splitter, a node in
 * at most log2 N of them, each splitter's nodes sorted by what they
 * read), O(N log N) for the final sort, plus
 * the walk's re-ageing, O(T log N) for T at most TOUCH_MAX per buffer per
 * walked operation.  Memory O(N + E + T).  The band order, another
 * program order (for graphs without loop structure), is ds_band.c's. */
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

/* The label of node x: kind, operation, pipe, cycles and, for ALLOC and
 * FREE, its buffer's size and memory (what renumbering keeps). */
static uint64_t node_label(const ds_graph *g, int32_t x)
{
	uint64_t z = mix64(g->kind[x] + 1) ^ str_hash(g->ops[g->op[x]]);
	if (g->pipe[x] >= 0)
		z ^= mix64(str_hash(g->pipes[g->pipe[x]]));
	z = mix64(z + (uint64_t)g->cycles[x]);
	if (g->kind[x] != DS_OP)
		z = mix64(z + (uint64_t)g->buf_size[g->buf[x]] * 8 +
			  g->buf_mem[g->buf[x]]);
	return z;
}

uint64_t ds_order_shape(const ds_graph *g, const int32_t *order,
			int32_t *pos)
{
	const int32_t n = g->n;
	for (int32_t i = 0; i < n; i++)
		pos[order[i]] = i;
	uint64_t h = mix64((uint64_t)n);
	for (int32_t i = 0; i < n; i++) {
		int32_t x = order[i];
		uint64_t z = node_label(g, x), preds = 0;
		/* the preds as a set: their list follows the input */
		for (int32_t k = g->epred_off[x]; k < g->epred_off[x + 1]; k++)
			preds += mix64((uint64_t)pos[g->epred[k]] + 1);
		z = mix64(z ^ preds);
		/* the buffers in the order the operation lists them */
		for (int32_t k = g->use_off[x]; k < g->use_off[x + 1]; k++)
			z = mix64(z ^ (uint64_t)pos[g->buf_alloc[g->use[k]]]);
		h = mix64(h ^ z);
	}
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
 * dp and k are scratch.  True when the classes stopped growing within
 * CANON_ROUNDS (they are stable). */
static bool hash_nodes(const ds_graph *g, uint64_t *hs, uint64_t *h2,
		       int32_t *dp, int32_t *ht, ds_hkey *k)
{
	const int32_t n = g->n;
	for (int32_t x = 0; x < n; x++) {
		hs[x] = node_label(g, x);
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
			return true;
		classes = c;
	}
	return false;
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

/* ---- ties among nodes the hashing leaves alike ---- */

/* The ordered partition that individualisation-refinement works on: el[]
 * holds the nodes, each cell a run el[s..cend[s]) named by its start s
 * (cell[x] for node x, at[x] its place in el).  look[] lists per node x
 * the nodes whose hash reads x, lcol how (see part_look).  The splitter
 * queue (q, a ring of qn from qh; inq) holds cell starts.  val, tmark,
 * tk, cmark, cc, coff, bk are one splitter's scratch. */
typedef struct part {
	int64_t *loff;
	int32_t *look, *lcol;
	int32_t *el, *at, *cell, *cend, *q, *cc, *cmark, *coff, *tmark, *bk;
	uint8_t *inq;
	uint64_t *val;
	ds_hkey *tk;
	int32_t n, qh, qn, stamp;
} part;

/* y reads x through relation col: counted (fill NULL) or written. */
static void look_add(part *P, int64_t *fill, int32_t x, int32_t y,
		     int32_t col)
{
	if (!fill) {
		P->loff[x + 1]++;
		return;
	}
	P->look[fill[x]] = y;
	P->lcol[fill[x]++] = col;
}

/* What the hash of each node reads (hash_nodes, operands): its preds (as
 * relation 1) and succs (2); an operation, the ALLOC of the buffer in
 * place i of its list (4i + 3); an ALLOC or FREE, the operations listing
 * its buffer, by place (4i + 4).  Counted into loff, or written. */
static void part_looks(const ds_graph *g, part *P, int64_t *fill)
{
	for (int32_t x = 0; x < g->n; x++) {
		for (int32_t j = g->pred_off[x]; j < g->pred_off[x + 1]; j++) {
			look_add(P, fill, g->pred[j], x, 1);
			look_add(P, fill, x, g->pred[j], 2);
		}
		for (int32_t j = g->use_off[x]; j < g->use_off[x + 1]; j++) {
			int32_t b = g->use[j], c = j - g->use_off[x];
			look_add(P, fill, g->buf_alloc[b], x, 4 * c + 3);
			look_add(P, fill, x, g->buf_alloc[b], 4 * c + 4);
			look_add(P, fill, x, g->buf_free[b], 4 * c + 4);
		}
	}
}

static void part_push(part *P, int32_t s)
{
	P->inq[s] = 1;
	P->q[(P->qh + P->qn++) % P->n] = s;
}

/* The partition of the hashes: nodes by hash (the cells in hash order),
 * the look lists; every cell a splitter when the hashing stopped before
 * the classes did (stable). */
static int part_init(const ds_graph *g, part *P, const uint64_t *hs,
		     bool stable, ds_arena *a, ds_err *e)
{
	const int32_t n = g->n;
	const size_t n1 = (size_t)n + 1;
	memset(P, 0, sizeof *P);
	P->n = n;
	P->loff = ds_arena_alloc(a, n1 + 1, sizeof *P->loff);
	int64_t *fill = ds_arena_alloc(a, n1, sizeof *fill);
	if (a->failed)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	part_looks(g, P, NULL);
	for (int32_t x = 0; x < n; x++)
		P->loff[x + 1] += P->loff[x];
	size_t nl = (size_t)P->loff[n] + 1;
	P->look = ds_arena_alloc(a, nl, sizeof *P->look);
	P->lcol = ds_arena_alloc(a, nl, sizeof *P->lcol);
	P->el = ds_arena_alloc(a, n1, sizeof *P->el);
	P->at = ds_arena_alloc(a, n1, sizeof *P->at);
	P->cell = ds_arena_alloc(a, n1, sizeof *P->cell);
	P->cend = ds_arena_alloc(a, n1, sizeof *P->cend);
	P->q = ds_arena_alloc(a, n1, sizeof *P->q);
	P->cc = ds_arena_alloc(a, n1, sizeof *P->cc);
	P->cmark = ds_arena_alloc(a, n1, sizeof *P->cmark);
	P->coff = ds_arena_alloc(a, n1, sizeof *P->coff);
	P->tmark = ds_arena_alloc(a, n1, sizeof *P->tmark);
	P->bk = ds_arena_alloc(a, n1, sizeof *P->bk);
	P->inq = ds_arena_alloc(a, n1, sizeof *P->inq);
	P->val = ds_arena_alloc(a, n1, sizeof *P->val);
	P->tk = ds_arena_alloc(a, n1, sizeof *P->tk);
	if (a->failed)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	memcpy(fill, P->loff, (size_t)n * sizeof *fill);
	part_looks(g, P, fill);
	ds_arena_release(a, fill);
	for (int32_t x = 0; x < n; x++)
		P->tk[x] = (ds_hkey){hs[x], x};
	ds_hkey_sort(g->heap, P->tk, (size_t)n);
	for (int32_t i = 0, s = 0; i < n; i++) {
		int32_t x = P->tk[i].x;
		if (i > 0 && P->tk[i].h != P->tk[i - 1].h) {
			P->cend[s] = i;
			if (!stable)
				part_push(P, s);
			s = i;
		}
		P->el[i] = x;
		P->at[x] = i;
		P->cell[x] = s;
		if (i == n - 1) {
			P->cend[s] = n;
			if (!stable)
				part_push(P, s);
		}
	}
	return DS_OK;
}

static int int32_cmp(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

/* Cell a split by the values of its t nodes in B (sorted by value; the
 * others read none of the splitter): those go first, keeping the name
 * a, then one cell per value, in increasing value.  The new cells are
 * splitters, all but the largest when a is not one already (the
 * largest: what it tells follows from a and the others). */
static void part_split(part *P, int32_t a, const int32_t *B, int32_t t)
{
	const int32_t b = P->cend[a];
	if (t == b - a && P->val[B[0]] == P->val[B[t - 1]])
		return;
	for (int32_t i = 0; i < t; i++) {
		int32_t y = B[i], p = P->at[y], to = b - t + i, z = P->el[to];
		P->el[to] = y;
		P->at[y] = to;
		P->el[p] = z;
		P->at[z] = p;
	}
	int32_t big = a, fs = t < b - a ? b - t : a;
	if (fs > a)
		P->cend[a] = fs;
	while (fs < b) {
		int32_t fe = fs + 1;
		while (fe < b && P->val[P->el[fe]] == P->val[P->el[fs]])
			fe++;
		P->cend[fs] = fe;
		for (int32_t i = fs; i < fe && fs != a; i++)
			P->cell[P->el[i]] = fs;
		fs = fe;
	}
	for (fs = a; fs < b; fs = P->cend[fs])
		if (P->cend[fs] - fs > P->cend[big] - big)
			big = fs;
	bool all = P->inq[a];
	for (fs = a; fs < b; fs = P->cend[fs])
		if (!P->inq[fs] && (all || fs != big))
			part_push(P, fs);
}

/* Splitter s: each node reading s's nodes gets the sum of (mixed)
 * relations it reads them through; every cell those nodes are in is
 * split by it, the cells in order of place (whatever order the nodes
 * sit in, the same cells result in the same places). */
static void part_splitter(const ds_heap *h, part *P, int32_t s)
{
	int32_t t = 0, nc = 0, st = ++P->stamp;
	for (int32_t i = s; i < P->cend[s]; i++) {
		int32_t x = P->el[i];
		for (int64_t l = P->loff[x]; l < P->loff[x + 1]; l++) {
			int32_t y = P->look[l], c = P->cell[y];
			if (P->cend[c] - c == 1)
				continue;
			if (P->tmark[y] != st) {
				P->tmark[y] = st;
				P->val[y] = 0;
				P->tk[t++].x = y;
			}
			P->val[y] += mix64((uint64_t)P->lcol[l] + 11);
		}
	}
	for (int32_t i = 0; i < t; i++)
		P->tk[i].h = P->val[P->tk[i].x];
	ds_hkey_sort(h, P->tk, (size_t)t);
	/* the nodes by cell (a counting sort, keeping their order) */
	for (int32_t i = 0; i < t; i++) {
		int32_t c = P->cell[P->tk[i].x];
		if (P->cmark[c] != st) {
			P->cmark[c] = st;
			P->coff[c] = 0;
			P->cc[nc++] = c;
		}
		P->coff[c]++;
	}
	qsort(P->cc, (size_t)nc, sizeof *P->cc, int32_cmp);
	for (int32_t i = 0, o = 0; i < nc; i++) {
		int32_t c = P->cc[i], k = P->coff[c];
		P->coff[c] = o;
		o += k;
	}
	for (int32_t i = 0; i < t; i++)
		P->bk[P->coff[P->cell[P->tk[i].x]]++] = P->tk[i].x;
	for (int32_t i = 0, o = 0; i < nc; i++) {
		int32_t c = P->cc[i], k = P->coff[c] - o;
		part_split(P, c, P->bk + o, k);
		o += k;
	}
}

static void part_refine(const ds_heap *h, part *P)
{
	while (P->qn > 0) {
		int32_t s = P->q[P->qh];
		P->qh = (P->qh + 1) % P->n;
		P->qn--;
		P->inq[s] = 0;
		part_splitter(h, P, s);
	}
}

/* Until every cell is one node: the first cell of more, its first node
 * made a cell of its own (at the cell's end), and the refinement run
 * from it.  Nodes alike to it are often symmetric to it in the graph;
 * then which one is taken changes the rank only by a symmetry. */
static void part_individualise(const ds_heap *h, part *P)
{
	part_refine(h, P);
	for (int32_t f = 0; f < P->n;) {
		int32_t e = P->cend[f];
		if (e - f == 1) {
			f++;
			continue;
		}
		int32_t v = P->el[f], w = P->el[e - 1];
		P->el[f] = w;
		P->at[w] = f;
		P->el[e - 1] = v;
		P->at[v] = e - 1;
		P->cell[v] = e - 1;
		P->cend[e - 1] = e;
		P->cend[f] = e - 1;
		part_push(P, e - 1);
		part_refine(h, P);
	}
}

/* hr[0..n): the nodes by hash; nodes alike in it by individualisation-
 * refinement (see above).  stable: the hashing's classes stopped
 * growing. */
static int hash_rank(const ds_graph *g, const uint64_t *hs, bool stable,
		     int32_t *hr, ds_err *e)
{
	ds_arena a;
	part P;
	ds_arena_init(&a, g->heap);
	int rc = part_init(g, &P, hs, stable, &a, e);
	if (rc == DS_OK) {
		part_individualise(g->heap, &P);
		for (int32_t i = 0; i < g->n; i++)
			hr[P.el[i]] = i;
	}
	ds_arena_free(&a);
	return rc;
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

/* Lists longer than this are sorted by radix (ds_hkey_sort), the others
 * by insertion: most lists hold a few entries, and one radix sort of all
 * entries keyed by (list, rank), as before, took about 170 perf samples
 * of a default run on the six bundled graphs where this takes about 20.
 * Not tuned: any bound keeps the cost O(E). */
#define SORT_LIST_INSERT 32

/* Is node a before node b in a list sorted by rank (then node)? */
static bool sort_list_before(const int32_t *rank, int32_t a, int32_t b)
{
	uint32_t ra = (uint32_t)rank[a], rb = (uint32_t)rank[b];
	return ra != rb ? ra < rb : a < b;
}

void ds_rank_sort_lists(const ds_heap *h, const int32_t *off, int32_t *adj,
			int32_t n, const int32_t *rank, ds_hkey *k)
{
	for (int32_t x = 0; x < n; x++) {
		int32_t *a = adj + off[x], len = off[x + 1] - off[x];
		if (len > SORT_LIST_INSERT) {
			for (int32_t i = 0; i < len; i++)
				k[i] = (ds_hkey){(uint32_t)rank[a[i]], a[i]};
			ds_hkey_sort(h, k, (size_t)len);
			for (int32_t i = 0; i < len; i++)
				a[i] = k[i].x;
			continue;
		}
		for (int32_t i = 1; i < len; i++) {
			int32_t y = a[i], j = i;
			while (j > 0 && sort_list_before(rank, y, a[j - 1])) {
				a[j] = a[j - 1];
				j--;
			}
			a[j] = y;
		}
	}
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
	bool stable; /* hash_nodes' */
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
	c->stable = hash_nodes(g, c->hs, c->h2, c->dp, c->ht, c->k);
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
	int rc = hash_rank(g, c->hs, c->stable, c->hr, e);
	if (rc)
		return rc;
	rc = walk_run(g, c->pull, c->ht, c->hr, &c->W, c->indeg, c->stk,
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
