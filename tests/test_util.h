/* test_util.h: small helpers shared by the cmocka tests (header only, so
 * each test stays one executable built from one .c file). */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ds.h"
#include "ds_pipeline.h"
#include "test_quick.h"

/* Inline JSON pieces.  Numbers are pasted as written, so a test can put any
 * token (2.5, -5, "60") where a number belongs. */
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

/* Fails the test unless hay contains needle, showing both. */
#define assert_contains(hay, needle)                                         \
	do {                                                                 \
		const char *h_ = (hay), *n_ = (needle);                      \
		if (!strstr(h_, n_))                                         \
			fail_msg("'%s' does not contain '%s'", h_, n_);      \
	} while (0)

#define assert_starts_with(hay, prefix)                                      \
	do {                                                                 \
		const char *h_ = (hay), *p_ = (prefix);                      \
		if (strncmp(h_, p_, strlen(p_)) != 0)                        \
			fail_msg("'%s' does not start with '%s'", h_, p_);   \
	} while (0)

/* Loads a graph from inline JSON with the given capacities (default ones
 * when caps is NULL), as the file "t.json". */
static inline int load_caps(const char *json, const ds_caps *caps,
			    ds_graph **g, ds_err *e)
{
	ds_caps def;
	if (!caps) {
		ds_caps_default(&def);
		caps = &def;
	}
	memset(e, 0, sizeof *e);
	return ds_load_json_text(ds_heap_std(), "t.json", json, strlen(json),
				 caps, g, e);
}

/* Loads a graph the test needs; any refusal fails the test. */
static inline ds_graph *must_load(const char *json)
{
	ds_graph *g = NULL;
	ds_err e;
	int rc = load_caps(json, NULL, &g, &e);
	if (rc != DS_OK)
		fail_msg("loading failed (%d): %s", rc, e.msg);
	assert_non_null(g);
	return g;
}

/* A generated graph (`dansched gen --kind K --nodes N --seed S --cap
 * SPEC`, SPEC over the default capacities, NULL for none) the test needs;
 * any failure fails the test. */
static inline ds_graph *must_generate_caps(int kind, int64_t nodes,
					   uint64_t seed, const char *spec)
{
	ds_caps caps;
	ds_caps_default(&caps);
	ds_graph *g = NULL;
	ds_err e;
	if (spec && ds_caps_parse(&caps, spec, &e))
		fail_msg("ds_caps_parse: %s", e.msg);
	if (ds_generate(ds_heap_std(), kind, nodes, seed, &caps, &g, &e))
		fail_msg("ds_generate: %s", e.msg);
	assert_non_null(g);
	return g;
}

static inline ds_graph *must_generate(int kind, int64_t nodes, uint64_t seed)
{
	return must_generate_caps(kind, nodes, seed, NULL);
}

/* g to be planned at capacities spec, as `dansched schedule --cap SPEC`
 * plans it; a spec that does not parse fails the test. */
static inline void must_set_caps(ds_graph *g, const char *spec)
{
	ds_err e;
	if (ds_caps_parse(&g->caps, spec, &e))
		fail_msg("ds_caps_parse: %s", e.msg);
}

/* A generated graph at the default capacities (`dansched gen` with no
 * --cap) to be planned at capacities spec, as `dansched schedule --cap
 * SPEC` plans the generated file; any failure fails the test. */
static inline ds_graph *must_generate_planned_at(int kind, int64_t nodes,
						 uint64_t seed,
						 const char *spec)
{
	ds_graph *g = must_generate(kind, nodes, seed);
	must_set_caps(g, spec);
	return g;
}

/* A fresh temporary folder; the caller removes it with rm_tree. */
static inline char *make_tmpdir(void)
{
	char tmpl[] = "/tmp/ds_test_XXXXXX";
	char *d = mkdtemp(tmpl);
	assert_non_null(d);
	char *s = malloc(strlen(d) + 1);
	assert_non_null(s);
	strcpy(s, d);
	return s;
}

/* Removes a folder with plain files (the tests create no subfolders
 * except where they remove them themselves) and frees the name. */
static inline void rm_tree(char *dir)
{
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *de;
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			char p[4096];
			snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
			if (remove(p) != 0)
				rmdir(p);
		}
		closedir(d);
	}
	rmdir(dir);
	free(dir);
}

static inline void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
}

/* Whole file as a malloc'd string; NULL when it cannot be opened. */
static inline char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1024, n = 0;
	char *s = malloc(cap);
	assert_non_null(s);
	size_t got;
	while ((got = fread(s + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (n + 1 == cap) {
			cap *= 2;
			s = realloc(s, cap);
			assert_non_null(s);
		}
	}
	fclose(f);
	s[n] = 0;
	return s;
}

/* Number of entries in a folder other than . and ..; -1 when it is not
 * there. */
static inline int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

/* ---- renumbering: the same graph under other Ids ---- */

static inline uint64_t test_splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* A random permutation of 0..n-1 (free it). */
static inline int32_t *test_shuffled(int32_t n, uint64_t *seed)
{
	int32_t *p = malloc((size_t)(n ? n : 1) * sizeof *p);
	assert_non_null(p);
	for (int32_t i = 0; i < n; i++)
		p[i] = i;
	for (int32_t i = n - 1; i > 0; i--) {
		int32_t j = (int32_t)(test_splitmix(seed) % (uint64_t)(i + 1));
		int32_t t = p[i];
		p[i] = p[j];
		p[j] = t;
	}
	return p;
}

/* The same graph with node v renamed perm[v] (and, with new_bufids, the
 * buffers given shuffled BufIds), its nodes and edges handed to the
 * builder in a random order: nothing about it may change a result but
 * tie-breaks. */
static inline ds_graph *test_renumbered(const ds_graph *g,
					const int32_t *perm, bool new_bufids,
					uint64_t *seed)
{
	int32_t *bperm = new_bufids ? test_shuffled(g->nbuf, seed) : NULL;
	int32_t *nodes = test_shuffled(g->n, seed);
	int32_t *edges = test_shuffled((int32_t)g->nedge, seed);
	ds_err e;
	ds_builder *b = ds_builder_new(ds_heap_std(), "renumbered");
	assert_non_null(b);
	int64_t bufs[64];
	for (int32_t i = 0; i < g->n; i++) {
		int32_t v = nodes[i];
		int rc;
		if (g->kind[v] != DS_OP) {
			int32_t x = g->buf[v];
			rc = ds_builder_buffer(b, perm[v], g->kind[v] == DS_FREE,
					       bperm ? bperm[x] : g->buf_id[x],
					       g->buf_size[x],
					       ds_mem_names[g->buf_mem[x]], &e);
		} else {
			int32_t nb = g->use_off[v + 1] - g->use_off[v];
			assert_true(nb <= 64);
			for (int32_t k = 0; k < nb; k++) {
				int32_t x = g->use[g->use_off[v] + k];
				bufs[k] = bperm ? bperm[x] : g->buf_id[x];
			}
			rc = ds_builder_op(b, perm[v], g->ops[g->op[v]],
					   g->pipes[g->pipe[v]], g->cycles[v],
					   bufs, nb, &e);
		}
		if (rc)
			fail_msg("renumbering: %s", e.msg);
	}
	for (int64_t k = 0; k < g->nedge; k++) {
		int32_t j = edges[k];
		if (ds_builder_edge(b, perm[g->esrc[j]], perm[g->edst[j]], &e))
			fail_msg("renumbering: %s", e.msg);
	}
	ds_graph *out = NULL;
	if (ds_builder_finish(b, &g->caps, &out, &e))
		fail_msg("renumbering: %s", e.msg);
	ds_builder_free(b);
	free(bperm);
	free(nodes);
	free(edges);
	return out;
}

/* The graph's nodes in the order of plan p (its spill nodes left out),
 * in an array with room for copies such orders (free it). */
static inline int32_t *test_graph_order(const ds_graph *g, const ds_plan *p,
					int copies)
{
	int32_t *ord = malloc((size_t)copies * (size_t)g->n * sizeof *ord);
	assert_non_null(ord);
	int32_t len = 0;
	for (int32_t i = 0; i < p->len; i++)
		if (p->order[i] < g->n)
			ord[len++] = p->order[i];
	assert_int_equal(len, g->n);
	return ord;
}

/* g's nodes into bd, node v with Id id0 + id[v] (dropped where id[v] <
 * 0; id NULL: id0 + v) and its BufIds moved by bid0, with the edges
 * between them; name says which helper failed. */
static inline void test_add_graph(ds_builder *bd, const ds_graph *g,
				  int64_t id0, int64_t bid0, const int32_t *id,
				  const char *name)
{
	ds_err e;
	int64_t bufs[64];
	for (int32_t v = 0; v < g->n; v++) {
		int rc;
		if (id && id[v] < 0)
			continue;
		int64_t vid = id0 + (id ? id[v] : v);
		if (g->kind[v] != DS_OP) {
			int32_t x = g->buf[v];
			rc = ds_builder_buffer(bd, vid, g->kind[v] == DS_FREE,
					       bid0 + g->buf_id[x],
					       g->buf_size[x],
					       ds_mem_names[g->buf_mem[x]], &e);
		} else {
			int32_t nb = g->use_off[v + 1] - g->use_off[v];
			assert_true(nb <= 64);
			for (int32_t k = 0; k < nb; k++)
				bufs[k] = bid0 +
					  g->buf_id[g->use[g->use_off[v] + k]];
			rc = ds_builder_op(bd, vid, g->ops[g->op[v]],
					   g->pipes[g->pipe[v]], g->cycles[v],
					   bufs, nb, &e);
		}
		if (rc)
			fail_msg("%s: %s", name, e.msg);
	}
	for (int64_t k = 0; k < g->nedge; k++) {
		int32_t a = g->esrc[k], b = g->edst[k];
		if (id && (id[a] < 0 || id[b] < 0))
			continue;
		if (ds_builder_edge(bd, id0 + (id ? id[a] : a),
				    id0 + (id ? id[b] : b), &e))
			fail_msg("%s: %s", name, e.msg);
	}
}

/* The graph bd holds, finished at g's capacities; bd freed. */
static inline ds_graph *test_finish(ds_builder *bd, const ds_graph *g,
				    const char *name)
{
	ds_err e;
	ds_graph *out = NULL;
	if (ds_builder_finish(bd, &g->caps, &out, &e))
		fail_msg("%s: %s", name, e.msg);
	ds_builder_free(bd);
	return out;
}

/* The disjoint union of a and b, as one graph holding both operators:
 * a's nodes keep their Ids, b's follow them, b's BufIds are moved past
 * a's largest. */
static inline ds_graph *test_union(const ds_graph *a, const ds_graph *b)
{
	ds_builder *bd = ds_builder_new(ds_heap_std(), "union");
	assert_non_null(bd);
	int64_t boff = a->nbuf ? a->buf_id[a->nbuf - 1] + 1 : 0;
	test_add_graph(bd, a, 0, 0, NULL, "union");
	test_add_graph(bd, b, a->n, boff, NULL, "union");
	return test_finish(bd, a, "union");
}

/* The part of g that node x needs: x and its ancestors (with the ALLOCs
 * of their buffers), and the FREEs of those buffers, as a graph of its
 * own (its nodes numbered in the order of their Ids in g). */
static inline ds_graph *test_ancestors(const ds_graph *g, int32_t x)
{
	bool *keep = calloc((size_t)g->n, sizeof *keep);
	int32_t *stack = malloc((size_t)g->n * sizeof *stack);
	assert_true(keep && stack);
	int32_t sp = 0;
	keep[x] = true;
	stack[sp++] = x;
	while (sp > 0) {
		int32_t y = stack[--sp];
		for (int32_t k = g->pred_off[y]; k < g->pred_off[y + 1]; k++) {
			int32_t z = g->pred[k];
			if (!keep[z]) {
				keep[z] = true;
				stack[sp++] = z;
			}
		}
	}
	for (int32_t b = 0; b < g->nbuf; b++)
		if (keep[g->buf_alloc[b]])
			keep[g->buf_free[b]] = true;
	int32_t k = 0;
	for (int32_t v = 0; v < g->n; v++) /* the Ids, reusing stack */
		stack[v] = keep[v] ? k++ : -1;
	ds_builder *bd = ds_builder_new(ds_heap_std(), "part");
	assert_non_null(bd);
	test_add_graph(bd, g, 0, 0, stack, "part");
	free(stack);
	free(keep);
	return test_finish(bd, g, "part");
}

/* ---- the bundled graphs ---- */

static inline int bundled_filter(const struct dirent *de)
{
	size_t l = strlen(de->d_name);
	return l > 5 && strcmp(de->d_name + l - 5, ".json") == 0;
}

/* The bundled graph data/<file> (a file name, "Conv_Case0.json"), at the
 * default capacities on heap h (load_bundled: the standard heap); fails
 * the test otherwise. */
static inline ds_graph *load_bundled_on(const ds_heap *h, const char *file)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/data/%s", DS_SOURCE_DIR, file);
	ds_caps caps;
	ds_caps_default(&caps);
	ds_graph *g = NULL;
	ds_err e;
	if (ds_load_graph(h, path, &caps, &g, &e))
		fail_msg("%s", e.msg);
	return g;
}

static inline ds_graph *load_bundled(const char *file)
{
	return load_bundled_on(ds_heap_std(), file);
}

/* g planned by ds_run with options o (NULL: the defaults): its figures;
 * the test fails when it does not plan. */
static inline ds_figures must_plan_figures(const ds_graph *g,
					   const ds_run_opts *o)
{
	ds_run_opts def;
	ds_run_opts_default(&def);
	ds_plan p;
	ds_figures f;
	ds_err e;
	if (ds_run(g, o ? o : &def, &p, &f, &e))
		fail_msg("%s: %s", g->source, e.msg);
	ds_plan_free(g->heap, &p);
	return f;
}

/* g planned by ds_run with the default options but the peak budget pct:
 * its figures. */
static inline ds_figures must_plan_at_peak(const ds_graph *g, double pct)
{
	ds_run_opts o;
	ds_run_opts_default(&o);
	o.cpe.peak_budget_pct = pct;
	return must_plan_figures(g, &o);
}

/* Calls fn(name, path, g, ud) for every data/<name>.json of the source tree in
 * name order (the folder may gain graphs: nothing is named here), each
 * loaded with the default capacities and freed after fn returns.  Returns
 * how many graphs there were. */
typedef void (*bundled_fn)(const char *name, const char *path, ds_graph *g,
			   void *ud);
static inline int for_each_bundled(bundled_fn fn, void *ud)
{
	struct dirent **list;
	int n = scandir(DS_SOURCE_DIR "/data", &list, bundled_filter, alphasort);
	assert_true(n >= 0);
	for (int i = 0; i < n; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/data/%s", DS_SOURCE_DIR,
			 list[i]->d_name);
		ds_graph *g = load_bundled(list[i]->d_name);
		fn(list[i]->d_name, path, g, ud);
		ds_graph_free(g);
		free(list[i]);
	}
	free(list);
	return n;
}

/* Replays p into *f; fails the test, naming the rule, if it is invalid. */
static inline void must_replay(const ds_graph *g, const ds_plan *p,
			       ds_figures *f)
{
	ds_err e;
	int rc = ds_replay(g, p, NULL, f, &e);
	if (rc)
		fail_msg("%s: replay refuses the plan: %s", g->source, e.msg);
}


/* The same for a case name ("Conv_Case0"). */
static inline ds_graph *load_bundled_case(const char *name)
{
	char file[512];
	snprintf(file, sizeof file, "%s.json", name);
	return load_bundled(file);
}

/* The code under an allocation-failure sweep: run does one call and
 * returns its status; then, with the heap working again, done (if not
 * NULL) checks the result (on DS_OK) and frees what the call made. */
typedef struct sweep {
	int (*run)(void *ctx, ds_err *e);
	void (*done)(void *ctx, int rc);
	void *ctx;
} sweep;

/* The allocation-failure sweep: the call with allocation k after the
 * current one failing, k = 1, 1 + step, 1 + 2 step, ..., until a call
 * succeeds (step 1: every allocation in turn; more for calls whose every
 * allocation would take too long).  Every call must give DS_OK or
 * DS_ENOMEM (reported in e), and once done has freed its result, as many
 * blocks must be live as before.  Returns the number of calls that
 * failed. */
static inline long alloc_sweep_every(ds_faulty *st, const sweep *w,
				     long step)
{
	const long live = st->live;
	for (long k = 1;; k += step) {
		ds_err e = {0};
		st->fail_at = st->calls + k;
		int rc = w->run(w->ctx, &e);
		st->fail_at = 0;
		if (rc != DS_OK && rc != DS_ENOMEM)
			fail_msg("allocation %ld failing gave status %d: %s", k,
				 rc, e.msg);
		if (rc == DS_ENOMEM)
			assert_int_equal(e.code, DS_ENOMEM);
		if (w->done)
			w->done(w->ctx, rc);
		assert_int_equal(st->live, live);
		if (rc == DS_OK)
			return (k - 1) / step;
	}
}

/* alloc_sweep_every with step 1: every allocation fails in turn. */
static inline long alloc_sweep(ds_faulty *st, const sweep *w)
{
	return alloc_sweep_every(st, w, 1);
}

#endif
