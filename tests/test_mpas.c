/* test_mpas.c: stage 1, MPAS (ds_mpas.c).
 *
 * On every bundled graph: the order is topological and keeps one live
 * buffer per L0 memory (ds_replay with q1 on a plan without offsets or
 * spills), its peak_vstay reaches the figure, two runs give the same
 * order, and copies of the graph with their node Ids (and BufIds)
 * renumbered at random (several fixed seeds) get the same peak within
 * 2 %.  A graph holding two bundled operators peaks at the larger of
 * their peaks, and a part of one (Conv_Case0's first layers) needs the
 * local search's second phase to reach its figure.  Small graphs check
 * that MPAS undoes a bad Id order and never deadlocks on L0 memories;
 * generated graphs widen the net (a random DAG stays near the
 * generator's own order, renumbered or not, and a few need the second
 * phase too); a failing heap checks every error path. */
#include "test_util.h"

#include "ds_stage.h"

/* ---- helpers ---- */

/* Runs ds_mpas with the given effort (0: default) and checks the order
 * with ds_replay (q1 when asked); returns the figures, *order the order
 * (the caller frees it). */
static void run_mpas(const ds_graph *g, int64_t effort, bool q1,
		     int32_t **order, ds_figures *f)
{
	ds_err e;
	int32_t *ord = malloc((size_t)g->n * sizeof *ord);
	assert_non_null(ord);
	ds_mpas_opts o = {.effort = effort};
	int rc = ds_mpas(g, &o, ord, &e);
	if (rc)
		fail_msg("%s: ds_mpas failed: %s", g->source, e.msg);
	ds_plan p = {g->n, ord, NULL, 0, NULL};
	ds_replay_opts ro = {.q1 = q1};
	rc = ds_replay(g, &p, &ro, f, &e);
	if (rc)
		fail_msg("%s: replay%s refuses the order: %s", g->source,
			 q1 ? " --q1" : "", e.msg);
	*order = ord;
}

/* peak_vstay of the free-first order, and whether it keeps the one-live
 * rule (MPAS must then keep it too). */
static bool free_first_q1(const ds_graph *g)
{
	ds_err e;
	int32_t *ord = malloc((size_t)g->n * sizeof *ord);
	assert_non_null(ord);
	assert_int_equal(ds_order_free_first(g, ord, &e), DS_OK);
	ds_plan p = {g->n, ord, NULL, 0, NULL};
	ds_replay_opts ro = {.q1 = true};
	ds_figures f;
	bool ok = ds_replay(g, &p, &ro, &f, &e) == DS_OK;
	free(ord);
	return ok;
}

/* The same graph under a random renumbering of its node Ids (and, with
 * new_bufids, of its BufIds). */
static ds_graph *renumbered(const ds_graph *g, uint64_t seed, bool new_bufids)
{
	int32_t *perm = test_shuffled(g->n, &seed);
	ds_graph *r = test_renumbered(g, perm, new_bufids, &seed);
	free(perm);
	return r;
}

/* How far, in per mille, a renumbered copy's peak may stray from the
 * original's: only the order among nodes alike in every structural
 * respect may depend on the Ids. */
#define RENUM_PERMILLE 20
/* Renumbered copies checked per bundled graph. */
#define RENUM_SEEDS 4

/* peak_vstay of g's MPAS order against nseeds copies renumbered with
 * seeds seed0, seed0 + 1, ... (every other one with new BufIds too);
 * fails when one strays beyond RENUM_PERMILLE. */
static void check_renumbered(const char *name, const ds_graph *g,
			     int64_t peak, uint64_t seed0, int nseeds)
{
	for (int i = 0; i < nseeds; i++) {
		ds_graph *r = renumbered(g, seed0 + (uint64_t)i, i & 1);
		int32_t *c;
		ds_figures fc;
		run_mpas(r, 0, true, &c, &fc);
		int64_t diff = fc.peak_vstay - peak;
		if (diff < 0)
			diff = -diff;
		if (diff * 1000 > peak * RENUM_PERMILLE)
			fail_msg("%s: copy renumbered with seed %llu peaks at "
				 "%lld, the original at %lld",
				 name, (unsigned long long)(seed0 + i),
				 (long long)fc.peak_vstay, (long long)peak);
		free(c);
		ds_graph_free(r);
	}
}

/* ---- the bundled graphs ---- */

/* The peak_vstay MPAS must reach (referee --q1), at or below the
 * published acceptance figures 6912 / 11631 / 4498 / 7586 / 9216 /
 * 34816: what it reaches now, so that a regression fails. */
static const struct {
	const char *file;
	int64_t figure;
} expect[] = {
	{"Conv_Case0.json", 6912},
	{"Conv_Case1.json", 5360},
	{"FlashAttention_Case0.json", 4248},
	{"FlashAttention_Case1.json", 7586},
	{"Matmul_Case0.json", 9216},
	{"Matmul_Case1.json", 34816},
};

static void check_bundled(const char *name, const char *path, ds_graph *g,
			  void *ud)
{
	(void)ud;
	int32_t *a, *b;
	ds_figures fa, fb;
	run_mpas(g, 0, true, &a, &fa);
	run_mpas(g, 0, true, &b, &fb);
	if (memcmp(a, b, (size_t)g->n * sizeof *a))
		fail_msg("%s: two runs give different orders", path);
	/* the figure (a bundled graph not listed only has to be valid) */
	for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++)
		if (!strcmp(expect[i].file, name) &&
		    fa.peak_vstay > expect[i].figure)
			fail_msg("%s: peak_vstay %lld above %lld", path,
				 (long long)fa.peak_vstay,
				 (long long)expect[i].figure);
	check_renumbered(path, g, fa.peak_vstay, 20251130,
			 test_quick() ? 1 : RENUM_SEEDS);
	free(a);
	free(b);
}

static void bundled_graphs(void **state)
{
	(void)state;
	assert_true(for_each_bundled(check_bundled, NULL) >= 6);
}

/* ---- the structural rank on renumbered copies ---- */

/* Nodes a of g and b of r are alike: what they are, their buffer. */
static bool same_node(const ds_graph *g, int32_t a, const ds_graph *r,
		      int32_t b)
{
	if (g->kind[a] != r->kind[b] || g->cycles[a] != r->cycles[b] ||
	    strcmp(g->ops[g->op[a]], r->ops[r->op[b]]) ||
	    (g->pipe[a] >= 0) != (r->pipe[b] >= 0) ||
	    (g->pipe[a] >= 0 &&
	     strcmp(g->pipes[g->pipe[a]], r->pipes[r->pipe[b]])))
		return false;
	return g->kind[a] == DS_OP ||
	       (g->buf_size[g->buf[a]] == r->buf_size[r->buf[b]] &&
		g->buf_mem[g->buf[a]] == r->buf_mem[r->buf[b]]);
}

/* How many nodes of g the map phi (node of g -> node of r) does not
 * carry onto a node of r alike in kind, buffer and operands, plus the
 * edges of g it does not carry onto edges of r: 0 when phi is an
 * isomorphism. */
static int64_t iso_faults(const ds_graph *g, const ds_graph *r,
			  const int32_t *phi)
{
	int64_t bad = 0;
	int32_t *bmap = malloc(((size_t)g->nbuf + 1) * sizeof *bmap);
	int32_t *mark = calloc((size_t)r->n + 1, sizeof *mark);
	assert_true(bmap && mark);
	for (int32_t b = 0; b < g->nbuf; b++)
		bmap[b] = r->buf[phi[g->buf_alloc[b]]];
	for (int32_t x = 0; x < g->n; x++) {
		int32_t y = phi[x];
		bool ok = same_node(g, x, r, y);
		if (ok && g->kind[x] != DS_OP)
			ok = bmap[g->buf[x]] == r->buf[y];
		if (ok && g->kind[x] == DS_OP) {
			int32_t nu = g->use_off[x + 1] - g->use_off[x];
			ok = nu == r->use_off[y + 1] - r->use_off[y];
			for (int32_t k = 0; ok && k < nu; k++)
				ok = bmap[g->use[g->use_off[x] + k]] ==
				     r->use[r->use_off[y] + k];
		}
		bad += !ok;
		for (int32_t k = r->epred_off[y]; k < r->epred_off[y + 1]; k++)
			mark[r->epred[k]] = y + 1;
		for (int32_t k = g->epred_off[x]; k < g->epred_off[x + 1]; k++)
			bad += mark[phi[g->epred[k]]] != y + 1;
	}
	free(bmap);
	free(mark);
	return bad;
}

/* The structural rank is canonical up to the graph's symmetries: the
 * node of rank k in a renumbered copy (new Ids and BufIds) is the image
 * of the original's node of rank k under an isomorphism, and MPAS's
 * order of the copy is the image of the original's.  (At 8b9c8af the
 * rank broke ties among nodes its hashing left alike by Id:
 * FlashAttention_Case0's copy below had 102 nodes mapped wrong, and
 * FlashAttention_Case1's MPAS order put an operation's FREEs in BufId
 * order.  Until 4a7980e the local search's first moves read stale marks
 * left in BufId order: FlashAttention_Case1's copy of seed 13 got another
 * order from position 2,116 on.) */
static void check_canonical_seed(const char *path, ds_graph *g,
				 uint64_t seed)
{
	ds_graph *r = renumbered(g, seed, true);
	int32_t *rg = malloc((size_t)g->n * sizeof *rg);
	int32_t *rr = malloc((size_t)g->n * sizeof *rr);
	int32_t *byr = malloc((size_t)g->n * sizeof *byr);
	int32_t *phi = malloc((size_t)g->n * sizeof *phi);
	assert_true(rg && rr && byr && phi);
	ds_err e;
	assert_int_equal(ds_structural_rank(g, rg, &e), DS_OK);
	assert_int_equal(ds_structural_rank(r, rr, &e), DS_OK);
	for (int32_t y = 0; y < r->n; y++)
		byr[rr[y]] = y;
	for (int32_t x = 0; x < g->n; x++)
		phi[x] = byr[rg[x]];
	int64_t bad = iso_faults(g, r, phi);
	if (bad)
		fail_msg("%s, seed %llu: rank k <-> rank k of a renumbered "
			 "copy is no isomorphism (%lld nodes and edges off)",
			 path, (unsigned long long)seed, (long long)bad);
	int32_t *a, *b;
	ds_figures fa, fb;
	run_mpas(g, 0, true, &a, &fa);
	run_mpas(r, 0, true, &b, &fb);
	for (int32_t i = 0; i < g->n; i++)
		if (phi[a[i]] != b[i])
			fail_msg("%s, seed %llu: MPAS's order of a renumbered "
				 "copy differs from the original's at position "
				 "%d",
				 path, (unsigned long long)seed, (int)i);
	free(a);
	free(b);
	free(rg);
	free(rr);
	free(byr);
	free(phi);
	ds_graph_free(r);
}

static void check_canonical(const char *name, const char *path, ds_graph *g,
			    void *ud)
{
	(void)ud;
	if (test_quick() && strcmp(name, "FlashAttention_Case0.json"))
		return;
	check_canonical_seed(path, g, 20261202);
	check_canonical_seed(path, g, 13);
}

static void rank_canonical(void **state)
{
	(void)state;
	assert_true(for_each_bundled(check_canonical, NULL) >= 6);
}

/* ---- several operators in one graph ---- */

/* MPAS's order of the union of b and a is that of the union of a and b
 * (a's nodes first there), node for node: which operator runs first
 * follows their sizes and shapes, not their Ids (until 4a7980e the one
 * holding the least Id ran first). */
static void check_union_order(const ds_graph *a, const ds_graph *b,
			      const int32_t *ou)
{
	ds_graph *v = test_union(b, a);
	int32_t *ov;
	ds_figures fv;
	run_mpas(v, 0, true, &ov, &fv);
	for (int32_t i = 0; i < v->n; i++) {
		int32_t y = ov[i];
		int32_t x = y < b->n ? a->n + y : y - b->n;
		if (x != ou[i])
			fail_msg("%s + %s: MPAS's order of the union taken "
				 "the other way differs at position %d",
				 a->source, b->source, (int)i);
	}
	free(ov);
	ds_graph_free(v);
}

/* Two operators that share nothing, in one graph: one can run after the
 * other, so the peak is the larger of theirs (not their sum), and a
 * renumbering changes nothing. */
static void several_operators(void **state)
{
	(void)state;
	static const char *const pairs[][2] = {
		{"FlashAttention_Case1.json", "Matmul_Case0.json"},
		{"Conv_Case0.json", "FlashAttention_Case0.json"},
	};
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
		ds_graph *a = load_bundled(pairs[i][0]);
		ds_graph *b = load_bundled(pairs[i][1]);
		ds_graph *u = test_union(a, b);
		int32_t *oa, *ob, *ou;
		ds_figures fa, fb, fu;
		run_mpas(a, 0, true, &oa, &fa);
		run_mpas(b, 0, true, &ob, &fb);
		run_mpas(u, 0, true, &ou, &fu);
		int64_t max = fa.peak_vstay > fb.peak_vstay ? fa.peak_vstay
							    : fb.peak_vstay;
		if (fu.peak_vstay > max)
			fail_msg("%s + %s: peak_vstay %lld, theirs %lld and "
				 "%lld",
				 pairs[i][0], pairs[i][1],
				 (long long)fu.peak_vstay,
				 (long long)fa.peak_vstay,
				 (long long)fb.peak_vstay);
		check_renumbered("union", u, fu.peak_vstay, 7, 2);
		check_union_order(a, b, ou);
		check_canonical_seed("union", u, 1);
		free(oa);
		free(ob);
		free(ou);
		ds_graph_free(a);
		ds_graph_free(b);
		ds_graph_free(u);
	}
}

/* A part of a bundled graph, as a graph of its own: the first layers
 * of Conv_Case0, what node 1304 needs (1,711 nodes).  Within reach of
 * the local search's first phase, its best order peaks at 4,994 bytes
 * (an accumulator begun before two loads another convolution still
 * needs); the second phase's jumps finish that convolution first.  An
 * order of 4,418 exists (session 41 found it by cutting the graph).
 * Renumbered copies find it too. */
static void part_of_a_bundled_graph(void **state)
{
	(void)state;
	ds_graph *g = load_bundled("Conv_Case0.json");
	ds_graph *part = test_ancestors(g, 1304);
	int32_t *o;
	ds_figures f;
	run_mpas(part, 0, true, &o, &f);
	if (f.peak_vstay > 4416)
		fail_msg("Conv_Case0's part before node 1304: peak_vstay "
			 "%lld above 4,416", (long long)f.peak_vstay);
	check_renumbered("Conv_Case0's part", part, f.peak_vstay, 3, 2);
	free(o);
	ds_graph_free(part);
	ds_graph_free(g);
}

/* Generated graphs where the second phase lowers the peak (of 512:
 * `gen`, the four kinds, 400 to 3,000 nodes, seeds 1-40, it lowers 25):
 * `--kind random --nodes 400 --seed 6` 2,080 -> 1,984 bytes (by moving a
 * buffer's first user past where another ends), `--nodes 2500 --seed
 * 26` 2,192 -> 1,680, `--nodes 600 --seed 21` 2,240 -> 1,872 (2,240
 * still with 8 jump targets, not LS_JUMPS' 16), `--kind conv --nodes
 * 1500 --seed 7` 2,948 -> 2,761. */
static void second_phase_generated(void **state)
{
	(void)state;
	static const struct {
		int kind;
		int64_t nodes, peak;
		uint64_t seed;
	} c[] = {{DS_GEN_RANDOM, 400, 1984, 6},
		 {DS_GEN_RANDOM, 2500, 1680, 26},
		 {DS_GEN_RANDOM, 600, 1872, 21},
		 {DS_GEN_CONV, 1500, 2761, 7}};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		ds_graph *g = must_generate(c[i].kind, c[i].nodes, c[i].seed);
		int32_t *o;
		ds_figures f;
		run_mpas(g, 0, true, &o, &f);
		if (f.peak_vstay != c[i].peak)
			fail_msg("kind %d, %lld nodes, seed %d: peak_vstay "
				 "%lld, not %lld", c[i].kind,
				 (long long)c[i].nodes, (int)c[i].seed,
				 (long long)f.peak_vstay, (long long)c[i].peak);
		free(o);
		ds_graph_free(g);
	}
}

/* ---- small graphs ---- */

#define ALLOC(id, buf, size, type)                                            \
	"{\"Id\":" #id ",\"Op\":\"ALLOC\",\"BufId\":" #buf ",\"Size\":" #size \
	",\"Type\":\"" #type "\"}"
#define FREE(id, buf, size, type)                                            \
	"{\"Id\":" #id ",\"Op\":\"FREE\",\"BufId\":" #buf ",\"Size\":" #size \
	",\"Type\":\"" #type "\"}"
#define OP(id, op, pipe, cycles, bufs)                                        \
	"{\"Id\":" #id ",\"Op\":\"" #op "\",\"Pipe\":\"" #pipe                \
	"\",\"Cycles\":" #cycles ",\"Bufs\":[" bufs "]}"
#define GRAPH(nodes, edges) "{\"Nodes\":[" nodes "],\"Edges\":[" edges "]}"

/* Three loads, each consumed on its own: in Id order all three are live
 * at once (300 bytes); MPAS keeps one at a time. */
static void loads_one_at_a_time(void **state)
{
	(void)state;
	ds_graph *g = must_load(GRAPH(
		ALLOC(0, 0, 100, UB) "," ALLOC(1, 1, 100, UB) "," ALLOC(
			2, 2, 100, UB) "," OP(3, COPY_IN, MTE2, 10, "0") "," OP(4, COPY_IN, MTE2, 10, "1") "," OP(5, COPY_IN, MTE2, 10, "2") "," OP(6, EXP, VECTOR, 10, "0") "," OP(7, EXP, VECTOR, 10, "1") "," OP(8, EXP, VECTOR, 10, "2") "," FREE(9, 0, 100, UB) "," FREE(10, 1, 100, UB) "," FREE(11, 2, 100, UB),
		"[0,3],[1,4],[2,5],[3,6],[4,7],[5,8],[6,9],[7,10],[8,11],"
		"[0,9],[1,10],[2,11]"));
	int32_t *o;
	ds_figures f;
	run_mpas(g, 0, true, &o, &f);
	assert_int_equal(f.peak_vstay, 100);
	free(o);
	ds_graph_free(g);
}

/* Two output tiles accumulating in L0C, each over two products whose
 * operands pass through L0A and L0B: starting a second tile, or moving an
 * operand of the other tile into L0A, would leave no way forward without
 * two live buffers in one L0 memory.  The order must keep the rule. */
static void l0_never_deadlocks(void **state)
{
	(void)state;
	/* tile t (t = 0, 1), product k (k = 0, 1): L1 operands a_tk, b_tk,
	 * L0A x_tk, L0B y_tk, accumulator c_t in L0C */
	char nodes[16384], edges[8192];
	int id = 0, nn = 0, ne = 0;
	int buf = 0;
#define N(...) (nn += snprintf(nodes + nn, sizeof nodes - nn, __VA_ARGS__))
#define E(s, d) (ne += snprintf(edges + ne, sizeof edges - ne, \
				"%s[%d,%d]", ne ? "," : "", (s), (d)))
	for (int t = 0; t < 2; t++) {
		int c = buf++;
		int ca = id++, cf;
		N("%s{\"Id\":%d,\"Op\":\"ALLOC\",\"BufId\":%d,\"Size\":64,"
		  "\"Type\":\"L0C\"}",
		  nn ? "," : "", ca, c);
		int prev = -1;
		for (int k = 0; k < 2; k++) {
			int a = buf++, bb = buf++, x = buf++, y = buf++;
			int aa = id++, ba = id++, xa = id++, ya = id++;
			int ci = id++, cj = id++, mx = id++, my = id++;
			int mm = id++;
			int af = id++, bf = id++, xf = id++, yf = id++;
			N(",{\"Id\":%d,\"Op\":\"ALLOC\",\"BufId\":%d,\"Size\":"
			  "32,\"Type\":\"L1\"}",
			  aa, a);
			N(",{\"Id\":%d,\"Op\":\"ALLOC\",\"BufId\":%d,\"Size\":"
			  "32,\"Type\":\"L1\"}",
			  ba, bb);
			N(",{\"Id\":%d,\"Op\":\"ALLOC\",\"BufId\":%d,\"Size\":"
			  "16,\"Type\":\"L0A\"}",
			  xa, x);
			N(",{\"Id\":%d,\"Op\":\"ALLOC\",\"BufId\":%d,\"Size\":"
			  "16,\"Type\":\"L0B\"}",
			  ya, y);
			N(",{\"Id\":%d,\"Op\":\"COPY_IN\",\"Pipe\":\"MTE2\","
			  "\"Cycles\":5,\"Bufs\":[%d]}",
			  ci, a);
			N(",{\"Id\":%d,\"Op\":\"COPY_IN\",\"Pipe\":\"MTE2\","
			  "\"Cycles\":5,\"Bufs\":[%d]}",
			  cj, bb);
			N(",{\"Id\":%d,\"Op\":\"MOVE\",\"Pipe\":\"MTE1\","
			  "\"Cycles\":5,\"Bufs\":[%d,%d]}",
			  mx, x, a);
			N(",{\"Id\":%d,\"Op\":\"MOVE\",\"Pipe\":\"MTE1\","
			  "\"Cycles\":5,\"Bufs\":[%d,%d]}",
			  my, y, bb);
			N(",{\"Id\":%d,\"Op\":\"MATMUL\",\"Pipe\":\"CUBE\","
			  "\"Cycles\":5,\"Bufs\":[%d,%d,%d]}",
			  mm, c, x, y);
			N(",{\"Id\":%d,\"Op\":\"FREE\",\"BufId\":%d,\"Size\":"
			  "32,\"Type\":\"L1\"}",
			  af, a);
			N(",{\"Id\":%d,\"Op\":\"FREE\",\"BufId\":%d,\"Size\":"
			  "32,\"Type\":\"L1\"}",
			  bf, bb);
			N(",{\"Id\":%d,\"Op\":\"FREE\",\"BufId\":%d,\"Size\":"
			  "16,\"Type\":\"L0A\"}",
			  xf, x);
			N(",{\"Id\":%d,\"Op\":\"FREE\",\"BufId\":%d,\"Size\":"
			  "16,\"Type\":\"L0B\"}",
			  yf, y);
			E(aa, ci);
			E(ba, cj);
			E(ci, mx);
			E(cj, my);
			E(xa, mx);
			E(ya, my);
			E(mx, mm);
			E(my, mm);
			E(ca, mm);
			if (prev >= 0)
				E(prev, mm);
			E(mx, af);
			E(my, bf);
			E(mm, xf);
			E(mm, yf);
			E(aa, af);
			E(ba, bf);
			E(xa, xf);
			E(ya, yf);
			prev = mm;
		}
		int out = id++;
		cf = id++;
		N(",{\"Id\":%d,\"Op\":\"COPY_OUT\",\"Pipe\":\"FIXP\","
		  "\"Cycles\":5,\"Bufs\":[%d]}",
		  out, c);
		N(",{\"Id\":%d,\"Op\":\"FREE\",\"BufId\":%d,\"Size\":64,"
		  "\"Type\":\"L0C\"}",
		  cf, c);
		E(prev, out);
		E(out, cf);
		E(ca, cf);
	}
#undef N
#undef E
	char *json = malloc(strlen(nodes) + strlen(edges) + 64);
	assert_non_null(json);
	sprintf(json, "{\"Nodes\":[%s],\"Edges\":[%s]}", nodes, edges);
	ds_graph *g = must_load(json);
	free(json);
	int32_t *o;
	ds_figures f;
	run_mpas(g, 0, true, &o, &f);
	/* one L1 operand at a time: each is freed by its MOVE */
	assert_int_equal(f.peak_vstay, 32);
	free(o);
	ds_graph_free(g);
}

/* An ALLOC after an operation and a FREE before one: the local search
 * does not apply, the order must still be valid. */
static void unusual_edges(void **state)
{
	(void)state;
	ds_graph *g = must_load(GRAPH(
		ALLOC(0, 0, 10, UB) "," OP(1, EXP, VECTOR, 10, "0") "," FREE(
			2, 0, 10, UB) "," ALLOC(3, 1, 20, UB) "," OP(4, EXP, VECTOR, 10, "1") "," FREE(5, 1, 20, UB) "," OP(6, ADD, VECTOR, 1, ""),
		"[0,1],[1,2],[1,3],[3,4],[4,5],[2,6]"));
	int32_t *o;
	ds_figures f;
	run_mpas(g, 0, true, &o, &f);
	assert_int_equal(f.peak_vstay, 20);
	free(o);
	ds_graph_free(g);
}

/* No options, and any effort, work; effort 1 is the default. */
static void options(void **state)
{
	(void)state;
	ds_graph *g = must_generate(DS_GEN_ATTENTION, 400, 3);
	ds_err e;
	int32_t *o = malloc((size_t)g->n * sizeof *o);
	assert_non_null(o);
	assert_int_equal(ds_mpas(g, NULL, o, &e), DS_OK);
	ds_plan p = {g->n, o, NULL, 0, NULL};
	ds_figures f0, f;
	assert_int_equal(ds_replay(g, &p, NULL, &f0, &e), DS_OK);
	for (int64_t eff = 1; eff <= 4; eff *= 2) {
		int32_t *q;
		run_mpas(g, eff, free_first_q1(g), &q, &f);
		if (eff == 1)
			assert_memory_equal(q, o, (size_t)g->n * sizeof *o);
		free(q);
	}
	free(o);
	ds_graph_free(g);
}

/* ---- generated graphs ---- */

/* How far, in per mille, MPAS may be above the free-first order of the
 * generator's Ids on a random DAG.  Those Ids are the generator's
 * sequence, whose window bounds every value's lifetime: a lucky program
 * order that MPAS recovers from the structure alone (the band order).
 * Measured: at most 1.05 times on the seeds below, 1.12 times at 10,000
 * nodes (seed 1), the same on renumbered copies. */
#define RANDOM_PERMILLE 1200

/* Valid, the same within 2 % under a renumbering, and never more than
 * 2 % above the free-first order of the generator's own Ids for the
 * kinds with the structure of a real operator (tiled matmul, attention,
 * convolution), RANDOM_PERMILLE for the random kind. */
static void generated_graphs(void **state)
{
	(void)state;
	ds_caps caps;
	ds_caps_default(&caps);
	static const int kinds[] = {DS_GEN_MATMUL, DS_GEN_ATTENTION,
				    DS_GEN_CONV, DS_GEN_RANDOM};
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
		for (uint64_t seed = 1; seed <= 6; seed++) {
			ds_graph *g = NULL;
			ds_err e;
			int64_t nodes = 200 + 400 * (int64_t)seed;
			if (ds_generate(ds_heap_std(), kinds[k], nodes, seed,
					&caps, &g, &e))
				fail_msg("generate: %s", e.msg);
			int32_t *o;
			ds_figures f;
			run_mpas(g, 0, free_first_q1(g), &o, &f);
			check_renumbered("generated", g, f.peak_vstay, seed, 1);
			int32_t *ff = malloc((size_t)g->n * sizeof *ff);
			assert_non_null(ff);
			assert_int_equal(ds_order_free_first(g, ff, &e), DS_OK);
			ds_plan p = {g->n, ff, NULL, 0, NULL};
			ds_figures f2;
			assert_int_equal(ds_replay(g, &p, NULL, &f2, &e), DS_OK);
			if (kinds[k] == DS_GEN_RANDOM &&
			    f.peak_vstay * 1000 >
				    f2.peak_vstay * RANDOM_PERMILLE)
				fail_msg("random seed %d: %lld above "
					 "free-first %lld",
					 (int)seed, (long long)f.peak_vstay,
					 (long long)f2.peak_vstay);
			if (kinds[k] != DS_GEN_RANDOM && free_first_q1(g) &&
			    f.peak_vstay * 1000 > f2.peak_vstay * 1020)
				fail_msg("kind %d seed %d: %lld above "
					 "free-first %lld",
					 kinds[k], (int)seed,
					 (long long)f.peak_vstay,
					 (long long)f2.peak_vstay);
			free(ff);
			free(o);
			ds_graph_free(g);
		}
}

/* A random DAG of 10,000 nodes: MPAS within RANDOM_PERMILLE of the
 * free-first order of the generator's Ids, a renumbered copy too (where
 * the Id order peaks about 47 times higher). */
static void large_random_graph(void **state)
{
	(void)state;
	ds_graph *g = must_generate(DS_GEN_RANDOM, 10000, 1);
	ds_err e;
	int32_t *ff = malloc((size_t)g->n * sizeof *ff);
	assert_non_null(ff);
	assert_int_equal(ds_order_free_first(g, ff, &e), DS_OK);
	ds_plan p = {g->n, ff, NULL, 0, NULL};
	ds_figures f0;
	assert_int_equal(ds_replay(g, &p, NULL, &f0, &e), DS_OK);
	for (int i = 0; i < 2; i++) {
		ds_graph *r = i ? renumbered(g, 20251130, true) : g;
		int32_t *o;
		ds_figures f;
		run_mpas(r, 0, true, &o, &f);
		if (f.peak_vstay * 1000 > f0.peak_vstay * RANDOM_PERMILLE)
			fail_msg("random 10k%s: %lld above free-first %lld",
				 i ? " renumbered" : "",
				 (long long)f.peak_vstay,
				 (long long)f0.peak_vstay);
		free(o);
		if (i)
			ds_graph_free(r);
	}
	free(ff);
	ds_graph_free(g);
}

/* ds_mpas into o under alloc_sweep. */
typedef struct mpas_call {
	const ds_graph *g;
	int32_t *o;
} mpas_call;

static int mpas_once(void *ctx, ds_err *e)
{
	mpas_call *c = ctx;
	return ds_mpas(c->g, NULL, c->o, e);
}

/* ---- out of memory: every allocation may fail ---- */

static void out_of_memory(void **state)
{
	(void)state;
	ds_faulty st = {0, 0, 0};
	ds_heap fh = ds_heap_faulty(&st);
	ds_caps caps;
	ds_caps_default(&caps);
	ds_graph *g = NULL;
	ds_err e;
	assert_int_equal(ds_generate(&fh, DS_GEN_MATMUL, 300, 5, &caps, &g,
				     &e),
			 DS_OK);
	int32_t *o = malloc((size_t)g->n * sizeof *o);
	assert_non_null(o);
	mpas_call c = {g, o};
	alloc_sweep(&st, &(sweep){mpas_once, NULL, &c});
	ds_plan p = {g->n, o, NULL, 0, NULL};
	ds_replay_opts ro = {.q1 = true};
	ds_figures f;
	assert_int_equal(ds_replay(g, &p, &ro, &f, &e), DS_OK);
	free(o);
	ds_graph_free(g);
	assert_int_equal(st.live, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(loads_one_at_a_time),
		cmocka_unit_test(l0_never_deadlocks),
		cmocka_unit_test(unusual_edges),
		cmocka_unit_test(options),
		cmocka_unit_test(generated_graphs),
		cmocka_unit_test(large_random_graph),
		cmocka_unit_test(out_of_memory),
		cmocka_unit_test(bundled_graphs),
		cmocka_unit_test(rank_canonical),
		cmocka_unit_test(several_operators),
		cmocka_unit_test(part_of_a_bundled_graph),
		cmocka_unit_test(second_phase_generated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
