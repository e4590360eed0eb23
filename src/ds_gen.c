/* ds_gen.c: synthetic graphs in the benchmark's conventions.
 *
 * Requires: capacities large enough for the generator's operations (L1 at
 * least 6 bytes, UB 3, each L0 memory 1; the defaults give every buffer
 * its realistic size).
 * Guarantees: a graph that passed ds_builder_finish, of about `nodes`
 * nodes (generation stops at the first unit boundary at or past it; units
 * are sized to what is left, so the overshoot is small), the same graph
 * for the same (kind, nodes, seed, caps) on every platform, and the
 * conventions of the bundled graphs (data/, JSON):
 *   - Ids are a topological order: operations and ALLOCs in the order they
 *     are emitted, every FREE after them in BufId order (as in the bundled
 *     files, whose Id order is "the original schedule");
 *   - every buffer is written before it is read; its ALLOC has an edge to
 *     its first user and to its FREE; the FREE has edges from the readers
 *     of the buffer's last value (or from its last writer when nobody
 *     read it);
 *   - data edges writer -> reader, and reader -> next writer (write after
 *     read), so every use of a buffer lies between its ALLOC and its FREE
 *     along the edges;
 *   - COPY_IN (MTE2) fills L1/UB from DDR, MOVE (MTE1) L1 -> L0A/L0B,
 *     MATMUL (CUBE) L0A x L0B into an L0C accumulator (a chain over K),
 *     CONV (CUBE) writes L1, COPY (FIXP) L0C -> UB, vector ops on UB, COPY
 *     (MTE3) UB -> L1, COPY_OUT (FIXP from L0C, MTE3 from UB or L1);
 *   - every operation's buffers fit its memories together, and no
 *     operation uses two buffers of one L0 memory, so a schedule with one
 *     live buffer per L0 memory exists (the emission order with each FREE
 *     right after its last use is one).
 * Bufs list the written buffer first, as the bundled files do.
 *
 * Time O(N log N) (the builder's sort; generation itself is linear), memory
 * O(N) for N nodes. */
#include "ds.h"
#include "ds_stage.h"

#include <stdio.h>
#include <string.h>

/* ---- state ---- */

typedef struct gen {
	const ds_heap *h;
	ds_builder *b;
	ds_err *e;
	int rc; /* the first failure; every emitter is a no-op after it */
	uint64_t rng;
	ds_caps caps;
	int64_t budget; /* nodes wanted */
	int32_t next;	/* next node Id */

	/* per buffer (index = BufId) */
	int32_t nbuf;
	int64_t bcap;
	int32_t *alloc;	  /* its ALLOC node */
	int32_t *writer;  /* last writer, -1 none */
	int32_t *readers; /* readers of the last value: list head, -1 none */
	int32_t *nuse;	  /* operations using it so far */
	int64_t *size;
	uint8_t *mem;

	/* reader lists: a pool of (node, next) cells; a write drops the list
	 * (its cells stay unused), so the pool grows with the uses: O(N) */
	int32_t *rnode, *rnext;
	int64_t rn, rcap;

	/* stamp[u] == v + 1: the edge u -> v is already made (a node gets
	 * all its in-edges at once, so one stamp per source suffices) */
	int32_t *stamp;
	int64_t scap;
} gen;

/* splitmix64: small, fast, and the same sequence everywhere. */
static uint64_t rnd64(gen *g)
{
	uint64_t z = (g->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n) (n >= 1; the modulo bias is below 2^-40). */
static int64_t rnd(gen *g, int64_t n)
{
	return (int64_t)(rnd64(g) % (uint64_t)n);
}

/* Uniform in [lo, hi]. */
static int64_t rnd_in(gen *g, int64_t lo, int64_t hi)
{
	return lo + rnd(g, hi - lo + 1);
}

static int64_t pick(gen *g, const int64_t *v, int n)
{
	return v[rnd(g, n)];
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* Nodes so far, counting the FREE every buffer will get. */
static int64_t count(const gen *g)
{
	return (int64_t)g->next + g->nbuf;
}

static int64_t left(const gen *g)
{
	return max64(g->budget - count(g), 1);
}

static bool done(const gen *g)
{
	return g->rc || count(g) >= g->budget;
}

/* A size for memory m, cut so that `share` buffers of it fit together (the
 * most one operation of the generator uses); the caller checked up front
 * that caps allow at least one byte each. */
static int64_t fit(const gen *g, int m, int64_t size, int64_t share)
{
	return max64(1, min64(size, g->caps.cap[m] / share));
}

/* ---- emitting nodes ---- */

static bool room_for_node(gen *g)
{
	if (g->rc)
		return false;
	if (g->next >= INT32_MAX - 1 ||
	    ds_reserve(g->h, (void **)&g->stamp, &g->scap,
		       (int64_t)g->next + 1, sizeof *g->stamp, g->e)) {
		g->rc = ds_fail(g->e, DS_ENOMEM, "gen: out of memory");
		return false;
	}
	g->stamp[g->next] = 0;
	return true;
}

/* A new buffer and its ALLOC node; -1 after a failure. */
static int32_t newbuf(gen *g, int m, int64_t size)
{
	if (!room_for_node(g))
		return -1;
	if (g->nbuf == g->bcap) {
		int64_t nc = g->bcap ? 2 * g->bcap : 1024;
		int32_t *a = ds_grow(g->h, g->alloc, (size_t)nc, sizeof *a);
		if (a)
			g->alloc = a;
		int32_t *w = a ? ds_grow(g->h, g->writer, (size_t)nc,
					 sizeof *w)
			       : NULL;
		if (w)
			g->writer = w;
		int32_t *r = w ? ds_grow(g->h, g->readers, (size_t)nc,
					 sizeof *r)
			       : NULL;
		if (r)
			g->readers = r;
		int32_t *u = r ? ds_grow(g->h, g->nuse, (size_t)nc, sizeof *u)
			       : NULL;
		if (u)
			g->nuse = u;
		int64_t *s = u ? ds_grow(g->h, g->size, (size_t)nc, sizeof *s)
			       : NULL;
		if (s)
			g->size = s;
		uint8_t *mm = s ? ds_grow(g->h, g->mem, (size_t)nc, 1) : NULL;
		if (!mm) {
			g->rc = ds_fail(g->e, DS_ENOMEM, "gen: out of memory");
			return -1;
		}
		g->mem = mm;
		g->bcap = nc;
	}
	int32_t x = g->nbuf++;
	int32_t id = g->next++;
	g->alloc[x] = id;
	g->writer[x] = -1;
	g->readers[x] = -1;
	g->nuse[x] = 0;
	g->size[x] = size;
	g->mem[x] = (uint8_t)m;
	int rc = ds_builder_buffer(g->b, id, false, x, size, ds_mem_names[m],
				   g->e);
	if (rc) {
		g->rc = rc;
		return -1;
	}
	return x;
}

/* Edge src -> dst unless dst already has it. */
static void edge(gen *g, int32_t src, int32_t dst)
{
	if (g->rc || g->stamp[src] == dst + 1)
		return;
	g->stamp[src] = dst + 1;
	int rc = ds_builder_edge(g->b, src, dst, g->e);
	if (rc)
		g->rc = rc;
}

static void add_reader(gen *g, int32_t x, int32_t v)
{
	if (g->rn == g->rcap) {
		/* rnode and rnext grow in step */
		int64_t nc = g->rcap ? 2 * g->rcap : 1024;
		int32_t *a = ds_grow(g->h, g->rnode, (size_t)nc, sizeof *a);
		if (a)
			g->rnode = a;
		int32_t *b = a ? ds_grow(g->h, g->rnext, (size_t)nc, sizeof *b)
			       : NULL;
		if (!b) {
			g->rc = ds_fail(g->e, DS_ENOMEM, "gen: out of memory");
			return;
		}
		g->rnext = b;
		g->rcap = nc;
	}
	g->rnode[g->rn] = v;
	g->rnext[g->rn] = g->readers[x];
	g->readers[x] = (int32_t)g->rn++;
}

/* An operation writing buffer out (-1: none) and reading in[0..nin), with
 * the edges that order it after what it depends on; returns its Id. */
static int32_t op(gen *g, const char *name, const char *pipe, int64_t cycles,
		  int32_t out, const int32_t *in, int nin)
{
	int64_t bufs[8];
	int nb = 0;
	DS_ASSERT(nin >= 0 && nin < 8);
	if (!room_for_node(g))
		return -1;
	int32_t v = g->next++;
	if (out >= 0) {
		bufs[nb++] = out;
		if (g->nuse[out] == 0)
			edge(g, g->alloc[out], v);
		if (g->writer[out] >= 0)
			edge(g, g->writer[out], v); /* the chain over K */
		for (int32_t k = g->readers[out]; k >= 0; k = g->rnext[k])
			edge(g, g->rnode[k], v); /* write after read */
	}
	for (int i = 0; i < nin; i++) {
		int32_t x = in[i];
		bufs[nb++] = x;
		if (g->nuse[x] == 0 || g->writer[x] < 0)
			edge(g, g->alloc[x], v);
		else
			edge(g, g->writer[x], v);
	}
	if (g->rc)
		return -1;
	int rc = ds_builder_op(g->b, v, name, pipe, cycles, bufs, nb, g->e);
	if (rc) {
		g->rc = rc;
		return -1;
	}
	for (int i = 0; i < nin; i++) {
		g->nuse[in[i]]++;
		add_reader(g, in[i], v);
	}
	if (out >= 0) {
		g->nuse[out]++;
		g->writer[out] = v;
		g->readers[out] = -1;
	}
	return v;
}

/* Shorthands for the arities the patterns use. */
static void op0(gen *g, const char *name, const char *pipe, int64_t cycles,
		int32_t out)
{
	op(g, name, pipe, cycles, out, NULL, 0);
}

static void op1(gen *g, const char *name, const char *pipe, int64_t cycles,
		int32_t out, int32_t a)
{
	if (a >= 0)
		op(g, name, pipe, cycles, out, &a, 1);
}

static void op2(gen *g, const char *name, const char *pipe, int64_t cycles,
		int32_t out, int32_t a, int32_t b)
{
	int32_t in[2] = {a, b};
	if (a >= 0 && b >= 0)
		op(g, name, pipe, cycles, out, in, 2);
}

/* Every buffer's FREE, in BufId order, after all operations. */
static void frees(gen *g)
{
	for (int32_t x = 0; x < g->nbuf && !g->rc; x++) {
		if (!room_for_node(g))
			return;
		int32_t v = g->next++;
		int rc = ds_builder_buffer(g->b, v, true, x, g->size[x],
					   ds_mem_names[g->mem[x]], g->e);
		if (rc) {
			g->rc = rc;
			return;
		}
		edge(g, g->alloc[x], v);
		if (g->readers[x] >= 0)
			for (int32_t k = g->readers[x]; k >= 0; k = g->rnext[k])
				edge(g, g->rnode[k], v);
		else if (g->writer[x] >= 0)
			edge(g, g->writer[x], v);
	}
}

/* ---- cycle model: the bundled graphs' figures, as functions of size ---- */

static int64_t cyc_copy_in(int64_t size)
{
	return max64(80, 69 + 2 * size); /* 128 -> 325, 256 -> 581 */
}

static int64_t cyc_copy_out(int64_t size)
{
	return 150 + size / 3; /* UB 128 -> 192 */
}

static int64_t cyc_ub_to_l1(int64_t size)
{
	return 15 + 2 * size; /* 128 -> 271 */
}

static int64_t cyc_elementwise(int64_t size)
{
	return 20 + size / 8; /* 128 -> 36, 2 -> 20 */
}

/* ---- the matmul-like kind ---- */

/* One problem C[M x N] = A[M x K] B[K x N] in tiles: L1 tiles of A and B
 * loaded once and shared by every output tile that needs them, one L0C
 * accumulator per output tile with a chain of K MATMULs, each fed by its
 * own MOVEs to L0A and L0B, then COPY_OUT from L0C. */
static void matmul_problem(gen *g, int64_t M, int64_t N, int64_t K)
{
	const int64_t l1 = fit(g, DS_L1, rnd(g, 2) ? 256 : 128, 1);
	const int64_t l0a = fit(g, DS_L0A, 128, 1);
	const int64_t l0b = fit(g, DS_L0B, 128, 1);
	const int64_t l0c = fit(g, DS_L0C, 256, 1);
	int32_t *A = ds_alloc(g->h, (size_t)(M * K + K * N), sizeof *A);
	if (!A) {
		g->rc = ds_fail(g->e, DS_ENOMEM, "gen: out of memory");
		return;
	}
	int32_t *B = A + M * K;
	for (int64_t i = 0; i < M * K + K * N; i++)
		A[i] = -1;
	for (int64_t m = 0; m < M && !g->rc; m++)
		for (int64_t n = 0; n < N && !g->rc; n++) {
			int32_t c = newbuf(g, DS_L0C, l0c);
			for (int64_t k = 0; k < K && !g->rc; k++) {
				int32_t *a = &A[m * K + k], *b = &B[k * N + n];
				if (*a < 0) {
					*a = newbuf(g, DS_L1, l1);
					op0(g, "COPY_IN", "MTE2",
					    cyc_copy_in(l1), *a);
				}
				if (*b < 0) {
					*b = newbuf(g, DS_L1, l1);
					op0(g, "COPY_IN", "MTE2",
					    cyc_copy_in(l1), *b);
				}
				int32_t a0 = newbuf(g, DS_L0A, l0a);
				int32_t b0 = newbuf(g, DS_L0B, l0b);
				op1(g, "MOVE", "MTE1", 15 + l0a / 8, a0, *a);
				op1(g, "MOVE", "MTE1", 15 + l0b / 8, b0, *b);
				op2(g, "MATMUL", "CUBE", l0a, c, b0, a0);
			}
			op1(g, "COPY_OUT", "FIXP", l0c + 7, -1, c);
		}
	ds_free(g->h, A);
}

static void gen_matmul(gen *g)
{
	static const int64_t ks[] = {2, 4, 8, 16};
	while (!done(g)) {
		int64_t rest = left(g), K = pick(g, ks, 4);
		while (K > 1 && 7 * K + 12 > rest)
			K /= 2;
		/* nodes of one output tile, with its share of the loads */
		int64_t per = 3 + 7 * K + 6;
		int64_t tiles = max64(1, rest / per), side = 1;
		while ((side + 1) * (side + 1) <= tiles && side < 32)
			side++;
		int64_t M = max64(1, side - rnd(g, side / 4 + 1));
		int64_t N = max64(1, min64(32, tiles / M));
		N = max64(1, N - rnd(g, N / 4 + 1));
		while (M * N * (3 + 7 * K) + 3 * K * (M + N) > rest &&
		       M * N > 1) {
			if (N >= M)
				N--;
			else
				M--;
		}
		matmul_problem(g, M, N, K);
	}
}

/* ---- the attention-like kind ---- */

/* What the query blocks of one head share: the buffer sizes (L1 tiles, UB
 * blocks, the softmax's rows and running scalars, the L0 tiles) and the
 * tiles: K and V loaded once per head, on first use, Q per query block. */
typedef struct head {
	int64_t D; /* tiles over the head dimension */
	int64_t l1, ub, row, sc, l0a, l0b, l0c;
	int32_t *kt; /* K tiles, nkv x D; -1 not loaded yet */
	int32_t *vt; /* V tiles, nkv; -1 not loaded yet */
	int32_t *qt; /* the current query block's D tiles */
} head;

/* A query block's running figures over the key/value blocks: the max m,
 * the sum l and the output o (-1 before the first block), and corr =
 * exp(old max - new max) of the current block (-1 on the first). */
typedef struct online {
	int32_t m, l, o, corr;
} online;

/* The sizes of one head's buffers and room for its tiles; false after a
 * failure. */
static bool head_init(gen *g, head *hd, int64_t nkv, int64_t D)
{
	hd->D = D;
	hd->l1 = fit(g, DS_L1, rnd(g, 4) ? 256 : 128, 1);
	hd->ub = fit(g, DS_UB, rnd(g, 4) ? 128 : 64, 3);
	hd->row = fit(g, DS_UB, 16, 3);
	hd->sc = fit(g, DS_UB, 2, 3);
	hd->l0a = fit(g, DS_L0A, 128, 1);
	hd->l0b = fit(g, DS_L0B, 128, 1);
	hd->l0c = fit(g, DS_L0C, 256, 1);
	hd->kt = ds_alloc(g->h, (size_t)(nkv * (D + 1) + D), sizeof *hd->kt);
	if (!hd->kt) {
		g->rc = ds_fail(g->e, DS_ENOMEM, "gen: out of memory");
		return false;
	}
	hd->vt = hd->kt + nkv * D;
	hd->qt = hd->vt + nkv;
	for (int64_t i = 0; i < nkv * (D + 1); i++)
		hd->kt[i] = -1;
	return true;
}

/* The L1 tile *t, loaded from DDR unless it already is. */
static void head_load(gen *g, const head *hd, int32_t *t)
{
	if (*t < 0) {
		*t = newbuf(g, DS_L1, hd->l1);
		op0(g, "COPY_IN", "MTE2", cyc_copy_in(hd->l1), *t);
	}
}

/* One MATMUL into the accumulator acc, its operands moved from the L1
 * tiles a1 (to L0A) and b1 (to L0B). */
static void head_matmul(gen *g, const head *hd, int32_t acc, int32_t a1,
			int32_t b1)
{
	int32_t a = newbuf(g, DS_L0A, hd->l0a);
	int32_t b = newbuf(g, DS_L0B, hd->l0b);
	op1(g, "MOVE", "MTE1", 15 + hd->l0a / 8, a, a1);
	op1(g, "MOVE", "MTE1", 38 + hd->l0b / 8, b, b1);
	op2(g, "MATMUL", "CUBE", hd->l0a, acc, b, a);
}

/* The accumulator c copied to a new UB block; returns the block. */
static int32_t head_to_ub(gen *g, const head *hd, int32_t c)
{
	int32_t u = newbuf(g, DS_UB, hd->ub);
	op1(g, "COPY", "FIXP", 41, u, c);
	return u;
}

/* S = Q K^T for key/value block j, a chain of D MATMULs into L0C; returns
 * S in UB. */
static int32_t head_scores(gen *g, const head *hd, int64_t j)
{
	int32_t s0 = newbuf(g, DS_L0C, hd->l0c);
	for (int64_t d = 0; d < hd->D; d++) {
		int32_t *k = &hd->kt[j * hd->D + d];
		head_load(g, hd, k);
		head_matmul(g, hd, s0, hd->qt[d], *k);
	}
	return head_to_ub(g, hd, s0);
}

/* The running sum with block j's row sum rs: rs itself on the first
 * block, else l * corr + rs with corr = exp(m - mn), kept for O.  The
 * running max becomes mn. */
static void head_sum(gen *g, const head *hd, online *st, int32_t mn,
		     int32_t rs, int64_t j)
{
	int64_t sc = hd->sc;
	int32_t ln = newbuf(g, DS_UB, sc);
	st->corr = -1;
	if (j == 0) {
		op1(g, "COMPACT", "VECTOR", 113, ln, rs);
	} else {
		int32_t dm = newbuf(g, DS_UB, sc);
		op2(g, "SUB", "VECTOR", cyc_elementwise(sc), dm, st->m, mn);
		st->corr = newbuf(g, DS_UB, sc);
		op1(g, "EXP", "VECTOR", 31, st->corr, dm);
		int32_t lc = newbuf(g, DS_UB, sc);
		op2(g, "MUL", "VECTOR", cyc_elementwise(sc), lc, st->l,
		    st->corr);
		op2(g, "ADD", "VECTOR", cyc_elementwise(sc), ln, lc, rs);
	}
	st->m = mn;
	st->l = ln;
}

/* The online softmax of block j's scores s: the running max with the
 * block's row max, P = exp(S - max) and its row sum into the running sum.
 * Returns P in UB. */
static int32_t head_softmax(gen *g, const head *hd, online *st, int32_t s,
			    int64_t j)
{
	int64_t ub = hd->ub;
	int32_t rm = newbuf(g, DS_UB, hd->row);
	op1(g, "ROWMAX", "VECTOR", 300 + ub / 12, rm, s);
	int32_t mn = newbuf(g, DS_UB, hd->sc);
	if (j == 0)
		op1(g, "COMPACT", "VECTOR", 113, mn, rm);
	else
		op2(g, "MAX", "VECTOR", cyc_elementwise(hd->sc), mn, st->m,
		    rm);
	int32_t p = newbuf(g, DS_UB, ub);
	op2(g, "SUB", "VECTOR", 100 + ub * 2 / 5, p, s, mn);
	int32_t ex = newbuf(g, DS_UB, ub);
	op1(g, "EXP", "VECTOR", 200 + ub / 7, ex, p);
	int32_t rs = newbuf(g, DS_UB, hd->row);
	op1(g, "ROWSUM", "VECTOR", 330 + ub / 12, rs, ex);
	head_sum(g, hd, st, mn, rs, j);
	return ex;
}

/* O += P V for key/value block j: P (in UB) to L1 (COPY on MTE3), the
 * MATMUL with V's tile, and after the first block the old O rescaled by
 * corr and added. */
static void head_accumulate(gen *g, const head *hd, online *st, int32_t p,
			    int64_t j)
{
	int64_t ub = hd->ub;
	int32_t pl = newbuf(g, DS_L1, hd->l1);
	op1(g, "COPY", "MTE3", cyc_ub_to_l1(ub), pl, p);
	int32_t *v = &hd->vt[j];
	head_load(g, hd, v);
	int32_t o0 = newbuf(g, DS_L0C, hd->l0c);
	head_matmul(g, hd, o0, pl, *v);
	int32_t pv = head_to_ub(g, hd, o0);
	int32_t on = pv;
	if (j > 0) {
		int32_t oc = newbuf(g, DS_UB, ub);
		op2(g, "MUL", "VECTOR", cyc_elementwise(ub), oc, st->o,
		    st->corr);
		on = newbuf(g, DS_UB, ub);
		op2(g, "ADD", "VECTOR", cyc_elementwise(ub), on, oc, pv);
	}
	st->o = on;
}

/* The output O / l of a query block, stored to DDR. */
static void head_store(gen *g, const head *hd, const online *st)
{
	int32_t r = newbuf(g, DS_UB, hd->sc);
	op1(g, "REC", "VECTOR", 37, r, st->l);
	int32_t out = newbuf(g, DS_UB, hd->ub);
	op2(g, "MUL", "VECTOR", cyc_elementwise(hd->ub), out, st->o, r);
	op1(g, "COPY_OUT", "MTE3", cyc_copy_out(hd->ub), -1, out);
}

/* One query block: its Q tiles loaded, then for each key/value block S =
 * Q K^T, the online softmax and O += P V, then O stored. */
static void head_query(gen *g, head *hd, int64_t nkv)
{
	for (int64_t d = 0; d < hd->D; d++) {
		hd->qt[d] = newbuf(g, DS_L1, hd->l1);
		op0(g, "COPY_IN", "MTE2", cyc_copy_in(hd->l1), hd->qt[d]);
	}
	online st = {-1, -1, -1, -1};
	for (int64_t j = 0; j < nkv && !g->rc; j++) {
		int32_t s = head_scores(g, hd, j);
		int32_t p = head_softmax(g, hd, &st, s, j);
		head_accumulate(g, hd, &st, p, j);
	}
	head_store(g, hd, &st);
}

/* One head of flash attention: for each query block, over the key/value
 * blocks, S = Q K^T (a chain of D MATMULs into L0C), COPY to UB, the
 * online-softmax vector chain (row max, subtract, exp, row sum, the
 * running max and sum in small UB buffers), P to L1 (COPY on MTE3), the
 * second MATMUL P V, and the rescaled accumulation of O in UB.  K and V
 * tiles are loaded once per head and shared by all query blocks. */
static void attention_head(gen *g, int64_t nq, int64_t nkv, int64_t D)
{
	head hd;
	if (!head_init(g, &hd, nkv, D))
		return;
	for (int64_t i = 0; i < nq && !g->rc; i++)
		head_query(g, &hd, nkv);
	ds_free(g->h, hd.kt);
}

static void gen_attention(gen *g)
{
	while (!done(g)) {
		int64_t rest = left(g), D = rnd_in(g, 1, 2);
		int64_t nkv = rnd_in(g, 2, 8), nq = rnd_in(g, 1, 8);
		/* nodes of a head, near enough (see attention_head) */
		for (;;) {
			int64_t cost = nq * (3 * D + 9) + nkv * (3 * D + 3) +
				       nq * nkv * (53 + 7 * D);
			if (cost <= rest || (nq == 1 && nkv == 1))
				break;
			if (nq > 1 && nq >= nkv)
				nq--;
			else if (nkv > 1)
				nkv--;
			else
				nq--;
		}
		attention_head(g, nq, nkv, D);
	}
}

/* ---- the conv-like kind ---- */

/* One network of convolution layers over a feature map cut into tiles.
 * Each output tile is a CONV (CUBE) writing an L1 tile from up to three
 * neighbouring input tiles (the halo), weights moved from a shared L1
 * weight buffer to L0B, and a small per-layer L1 parameter buffer that
 * every CONV of the layer reads; some layers add a residual tile from two
 * layers back (CONV_ADD).  Many small L1 buffers, each with several
 * consumers, as in the bundled Conv graphs. */
static void conv_network(gen *g, int64_t layers, int64_t tiles)
{
	static const int64_t tsz[] = {8, 16, 32, 64, 64, 128, 256};
	static const int64_t wsz[] = {8, 8, 36, 72, 72, 96};
	int32_t *buf = ds_alloc(g->h, (size_t)(3 * tiles), sizeof *buf);
	if (!buf) {
		g->rc = ds_fail(g->e, DS_ENOMEM, "gen: out of memory");
		return;
	}
	/* the tiles of the last three feature maps, rotated per layer */
	int32_t *prev2 = buf, *prev = buf + tiles, *cur = buf + 2 * tiles;
	int64_t n2 = 0, n1 = tiles;
	int64_t s = fit(g, DS_L1, pick(g, tsz, 7), 6);
	for (int64_t t = 0; t < n1; t++) {
		prev[t] = newbuf(g, DS_L1, s);
		op0(g, "COPY_IN", "MTE2", cyc_copy_in(s), prev[t]);
	}
	for (int64_t layer = 0; layer < layers && !g->rc; layer++) {
		/* a stride-2 layer halves the tiles now and then */
		int64_t nout = n1 > 2 && rnd(g, 4) == 0 ? (n1 + 1) / 2 : n1;
		bool residual = n2 == nout && rnd(g, 3) == 0;
		int64_t w = fit(g, DS_L0B, pick(g, wsz, 6), 1);
		int64_t wl1 = fit(g, DS_L1, 2 * w, 6);
		int64_t group = rnd_in(g, 1, 4);
		s = fit(g, DS_L1, pick(g, tsz, 7), 6);
		int64_t ps = fit(g, DS_L1, rnd_in(g, 1, 64), 6);
		int32_t param = newbuf(g, DS_L1, ps);
		op0(g, "COPY_IN", "MTE2", cyc_copy_in(ps), param);
		int32_t wbuf = -1;
		for (int64_t t = 0; t < nout && !g->rc; t++) {
			if (t % group == 0) {
				wbuf = newbuf(g, DS_L1, wl1);
				op0(g, "COPY_IN", "MTE2", cyc_copy_in(wl1),
				    wbuf);
			}
			int32_t w0 = newbuf(g, DS_L0B, w);
			op1(g, "MOVE", "MTE1", 9 + w, w0, wbuf);
			cur[t] = newbuf(g, DS_L1, s);
			/* the input tiles under this output tile, +-1 */
			int64_t c = t * n1 / nout;
			int32_t in[7];
			int nin = 0;
			for (int64_t k = c - 1; k <= c + 1; k++)
				if (k >= 0 && k < n1)
					in[nin++] = prev[k];
			in[nin++] = w0;
			in[nin++] = param;
			if (residual)
				in[nin++] = prev2[t];
			op(g, residual ? "CONV_ADD" : "CONV", "CUBE",
			   9 + 2 * s + w / 8, cur[t], in, nin);
		}
		int32_t *old = prev2;
		prev2 = prev;
		n2 = n1;
		prev = cur;
		n1 = nout;
		cur = old;
	}
	for (int64_t t = 0; t < n1 && !g->rc; t++)
		op1(g, "COPY_OUT", "MTE3", 10 + g->size[prev[t]], -1, prev[t]);
	ds_free(g->h, buf);
}

static void gen_conv(gen *g)
{
	while (!done(g)) {
		int64_t rest = left(g);
		int64_t layers = rnd_in(g, 3, 12), tiles = rnd_in(g, 4, 16);
		/* about 9 nodes per output tile, 6 per layer, 6 per tile at
		 * the ends */
		while (layers * tiles * 9 + layers * 6 + tiles * 6 > rest &&
		       (layers > 1 || tiles > 1)) {
			if (tiles > 1 && tiles * 2 >= layers)
				tiles--;
			else
				layers--;
		}
		conv_network(g, layers, tiles);
	}
}

/* ---- the random kind ---- */

/* A window of recent values of one memory, oldest first (a ring). */
typedef struct window {
	int32_t v[32];
	int n, head, cap;
} window;

/* A value of the window; with fresh, three times in four the oldest one
 * nobody has read yet (so that few values leave the window unread). */
static int32_t win_pick(gen *g, const window *w, bool fresh)
{
	if (fresh && rnd(g, 4))
		for (int i = 0; i < w->n; i++) {
			int32_t x = w->v[(w->head + i) % 32];
			if (g->nuse[x] == 1)
				return x;
		}
	return w->v[(w->head + rnd(g, w->n)) % 32];
}

/* A value nobody read goes out to DDR, so every value is used. */
static void store_if_unread(gen *g, int32_t x)
{
	if (!g->rc && x >= 0 && g->nuse[x] == 1)
		op1(g, "COPY_OUT", "MTE3", cyc_copy_out(g->size[x]), -1, x);
}

/* Values of the window nobody has read yet. */
static int win_unread(const gen *g, const window *w)
{
	int k = 0;
	for (int i = 0; i < w->n; i++)
		k += g->nuse[w->v[(w->head + i) % 32]] == 1;
	return k;
}

static void win_push(gen *g, window *w, int32_t x)
{
	if (x < 0)
		return;
	if (w->n == w->cap) {
		store_if_unread(g, w->v[w->head]);
		w->head = (w->head + 1) % 32;
		w->n--;
	}
	w->v[(w->head + w->n++) % 32] = x;
}

/* gen_random's operations and sizes. */
static const char *const rand_vec[] = {"ADD", "MUL", "SUB", "MAX", "EXP",
				       "ROWMAX", "ROWSUM", "COMPACT"};
static const int64_t rand_ubs[] = {16, 32, 64, 128, 128, 256};
static const int64_t rand_l1s[] = {64, 128, 128, 256, 512};

/* A new value of a size drawn from rand_l1s (in L1) or rand_ubs (in
 * UB); its size in *size. */
static int32_t rand_buf(gen *g, bool l1, int64_t *size)
{
	*size = l1 ? fit(g, DS_L1, pick(g, rand_l1s, 5), 6)
		   : fit(g, DS_UB, pick(g, rand_ubs, 6), 3);
	return newbuf(g, l1 ? DS_L1 : DS_UB, *size);
}

/* A value loaded from DDR into window w. */
static void rand_load(gen *g, window *w, bool l1)
{
	int64_t s;
	int32_t x = rand_buf(g, l1, &s);
	op0(g, "COPY_IN", "MTE2", cyc_copy_in(s), x);
	win_push(g, w, x);
}

/* A vector op on one or two values of the UB window, its result there. */
static void rand_vector(gen *g, window *ub)
{
	int32_t a = win_pick(g, ub, true);
	int32_t b = win_pick(g, ub, true);
	int64_t s;
	int32_t x = rand_buf(g, false, &s);
	int64_t cyc = cyc_elementwise(s);
	const char *name = rand_vec[rnd(g, 8)];
	if (a == b || rnd(g, 3) == 0)
		op1(g, name, "VECTOR", cyc, x, a);
	else
		op2(g, name, "VECTOR", cyc, x, a, b);
	win_push(g, ub, x);
}

/* A MATMUL chain of one to four steps through L0A/L0B/L0C (sizes l0[]),
 * its operands moved from the L1 window; the result copied into the UB
 * window or stored. */
static void rand_matmul(gen *g, window *l1, window *ub, const int64_t l0[3])
{
	int32_t c = newbuf(g, DS_L0C, l0[2]);
	for (int64_t k = rnd_in(g, 1, 4); k > 0; k--) {
		int32_t a = newbuf(g, DS_L0A, l0[0]);
		int32_t b = newbuf(g, DS_L0B, l0[1]);
		op1(g, "MOVE", "MTE1", 15 + l0[0] / 8, a, win_pick(g, l1, true));
		op1(g, "MOVE", "MTE1", 15 + l0[1] / 8, b, win_pick(g, l1, true));
		op2(g, "MATMUL", "CUBE", l0[0], c, b, a);
	}
	if (rnd(g, 3)) {
		int64_t s;
		int32_t x = rand_buf(g, false, &s);
		op1(g, "COPY", "FIXP", 41, x, c);
		win_push(g, ub, x);
	} else {
		op1(g, "COPY_OUT", "FIXP", l0[2] + 7, -1, c);
	}
}

/* A UB value copied into a new value of the L1 window. */
static void rand_ub_to_l1(gen *g, window *ub, window *l1)
{
	int32_t a = win_pick(g, ub, true);
	int64_t s;
	int32_t x = rand_buf(g, true, &s);
	op1(g, "COPY", "MTE3", cyc_ub_to_l1(g->size[a]), x, a);
	win_push(g, l1, x);
}

/* A random layered DAG: values live in two windows (UB and L1) of
 * seed-chosen widths; each step loads a value, computes one from values
 * in the windows (vector op, a MATMUL chain through L0A/L0B/L0C, or a UB
 * -> L1 copy) or stores one.  The windows bound how far back a value can
 * be used, so the graph has the locality of a real operator. */
static void gen_random(gen *g)
{
	window ub = {.cap = (int)rnd_in(g, 4, 24)};
	window l1 = {.cap = (int)rnd_in(g, 4, 12)};
	int64_t l0[3];
	l0[0] = fit(g, DS_L0A, 128, 1);
	l0[1] = fit(g, DS_L0B, 128, 1);
	l0[2] = fit(g, DS_L0C, 256, 1);
	while (!done(g)) {
		int64_t r = rnd(g, 100);
		/* loads wait while half a window is still unread */
		if (ub.n == 0 || (r < 12 && 2 * win_unread(g, &ub) <= ub.cap)) {
			rand_load(g, &ub, false);
		} else if (l1.n == 0 ||
			   (r < 24 && 2 * win_unread(g, &l1) <= l1.cap)) {
			rand_load(g, &l1, true);
		} else if (r < 60) {
			rand_vector(g, &ub);
		} else if (r < 75) {
			rand_matmul(g, &l1, &ub, l0);
		} else if (r < 85) {
			rand_ub_to_l1(g, &ub, &l1);
		} else {
			/* a result, not a value just loaded */
			int32_t a = win_pick(g, &ub, false);
			op1(g, "COPY_OUT", "MTE3", cyc_copy_out(g->size[a]), -1,
			    a);
		}
	}
	for (int i = 0; i < ub.n; i++)
		store_if_unread(g, ub.v[(ub.head + i) % 32]);
	for (int i = 0; i < l1.n; i++)
		store_if_unread(g, l1.v[(l1.head + i) % 32]);
}

/* ---- entry ---- */

static const char *const kind_names[] = {"matmul", "attention", "conv",
					 "random"};

int ds_generate(const ds_heap *h, int kind, int64_t nodes, uint64_t seed,
		const ds_caps *caps, ds_graph **out, ds_err *e)
{
	*out = NULL;
	if (kind < DS_GEN_MATMUL || kind > DS_GEN_RANDOM)
		return ds_fail(e, DS_EINPUT, "gen: unknown kind %d", kind);
	if (nodes < 1 || nodes > DS_NODES_MAX / 2)
		return ds_fail(e, DS_EINPUT,
			       "gen: --nodes %lld out of range (1..%lld)",
			       (long long)nodes, (long long)DS_NODES_MAX / 2);
	/* the most buffers of one memory an operation uses (conv: output,
	 * three inputs, parameters, residual in L1; vector ops: three UB) */
	static const int64_t share[DS_NMEM] = {6, 3, 1, 1, 1};
	for (int m = 0; m < DS_NMEM; m++)
		if (caps->cap[m] < share[m])
			return ds_fail(e, DS_EINPUT,
				       "gen: %s capacity %lld is too small "
				       "(at least %lld)",
				       ds_mem_names[m], (long long)caps->cap[m],
				       (long long)share[m]);
	char source[96];
	snprintf(source, sizeof source, "gen-%s-%lld-seed%llu",
		 kind_names[kind], (long long)nodes,
		 (unsigned long long)seed);
	gen g;
	memset(&g, 0, sizeof g);
	g.h = h;
	g.e = e;
	g.rng = seed;
	g.caps = *caps;
	g.budget = nodes;
	g.b = ds_builder_new(h, source);
	if (!g.b)
		return ds_fail(e, DS_ENOMEM, "gen: out of memory");
	switch (kind) {
	case DS_GEN_MATMUL:
		gen_matmul(&g);
		break;
	case DS_GEN_ATTENTION:
		gen_attention(&g);
		break;
	case DS_GEN_CONV:
		gen_conv(&g);
		break;
	default:
		gen_random(&g);
		break;
	}
	frees(&g);
	int rc = g.rc;
	if (!rc)
		rc = ds_builder_finish(g.b, caps, out, e);
	ds_builder_free(g.b);
	void *arrays[] = {g.alloc, g.writer, g.readers, g.nuse, g.size,
			  g.mem,   g.rnode,  g.rnext,	g.stamp};
	for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
		ds_free(h, arrays[i]);
	return rc;
}
