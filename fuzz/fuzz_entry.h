/* fuzz_entry.h: what each fuzz target does with one input, shared by the
 * libFuzzer targets (fuzz_*.c) and the regression test (tests/test_gen.c),
 * which replays every file of tests/fuzz_regress/ through the same code.
 *
 * Header only: static inline functions, so a file may include it and use
 * any subset without unused-function warnings.
 *
 * Every entry returns the status of the library call under test.  Any
 * status is acceptable (bad input is refused cleanly); what the fuzzers
 * look for is a crash, a sanitizer report, a leak or a hang.  The few
 * properties checked beyond that call abort() with a message:
 *   - a loaded graph is placed over a free-first order and the plan that
 *     ds_place returns must pass ds_replay;
 *   - a plan that ds_replay accepts is written and read back unchanged;
 *   - a JSON text is accepted by the streamed and the whole-document path
 *     alike, into the same graph (fuzz_json_whole).
 *
 *   - fuzz_order: every entry point taking an order refuses exactly the
 *     orders that are not topological (DS_EINPUT), the plans made from the
 *     others pass ds_replay; the replay, CPE and the public API agree on
 *     which plans are valid, and renumbering the spills changes no figure.
 *
 * fuzz_api (fuzz_api.h) drives the public API's other entries that take
 * caller values; what both share is in fuzz_common.h.
 *
 * The loaders read files, so the CSV, plan and order entries write their
 * inputs to files DIR/TAG<name> (the caller picks a DIR and a TAG no other
 * process uses) and remove them before returning. */
#ifndef FUZZ_ENTRY_H
#define FUZZ_ENTRY_H

#include "ds.h"
#include "ds_stage.h"
#include "fuzz_common.h"

/* Writes data[0..len) to dir/<tag><name>; the path goes into path[size]. */
static inline void fuzz_write(const char *dir, const char *tag,
			      const char *name, const uint8_t *data, size_t len,
			      char *path, size_t size)
{
	snprintf(path, size, "%s/%s%s", dir, tag, name);
	FILE *f = fopen(path, "wb");
	if (!f)
		fuzz_die("cannot write", path);
	if (len && fwrite(data, 1, len, f) != len)
		fuzz_die("cannot write", path);
	if (fclose(f) != 0)
		fuzz_die("cannot close", path);
}

/* Splits data at NUL bytes into at most max parts; returns the count. */
static inline int fuzz_split(const uint8_t *data, size_t len, int max,
			     const uint8_t **part, size_t *plen)
{
	int n = 0;
	size_t start = 0;
	for (size_t i = 0; i < len && n < max - 1; i++)
		if (data[i] == 0) {
			part[n] = data + start;
			plen[n++] = i - start;
			start = i + 1;
		}
	part[n] = data + start;
	plen[n++] = len - start;
	return n;
}

/* The pipeline a loaded graph goes through: free-first order, placement,
 * replay.  ds_place may refuse a graph (DS_EINPUT: an operation's buffers
 * cannot fit together) but a plan it returns must be valid. */
static inline void fuzz_place(const ds_graph *g)
{
	ds_err e;
	int32_t *order = ds_alloc(g->heap, (size_t)g->n, sizeof *order);
	if (!order)
		return;
	if (ds_order_free_first(g, order, &e) == DS_OK) {
		ds_place_opts o = {DS_FIRST_FIT, DS_VICTIM_COST, 0};
		ds_plan p;
		if (ds_place(g, order, &o, &p, &e) == DS_OK) {
			ds_figures f;
			if (ds_replay(g, &p, NULL, &f, &e) != DS_OK)
				fuzz_die("ds_place made an invalid plan", e.msg);
			ds_plan_free(g->heap, &p);
		}
	}
	ds_free(g->heap, order);
}

/* Do a[0..n) and b[0..n) of elem bytes each hold the same bytes? */
static inline bool fuzz_same(const void *a, const void *b, size_t n,
			     size_t elem)
{
	return n == 0 || memcmp(a, b, n * elem) == 0;
}

/* Do graphs a and b hold the same nodes, buffers and edges? */
static inline bool fuzz_same_graph(const ds_graph *a, const ds_graph *b)
{
	if (a->n != b->n || a->nbuf != b->nbuf || a->nedge != b->nedge ||
	    a->use_off[a->n] != b->use_off[b->n])
		return false;
	size_t n = (size_t)a->n, nb = (size_t)a->nbuf, ne = (size_t)a->nedge;
	size_t nu = (size_t)a->use_off[n];
	bool same = fuzz_same(a->kind, b->kind, n, 1) &&
		    fuzz_same(a->cycles, b->cycles, n, sizeof *a->cycles) &&
		    fuzz_same(a->buf, b->buf, n, sizeof *a->buf) &&
		    fuzz_same(a->use_off, b->use_off, n + 1,
			      sizeof *a->use_off) &&
		    fuzz_same(a->use, b->use, nu, sizeof *a->use) &&
		    fuzz_same(a->esrc, b->esrc, ne, sizeof *a->esrc) &&
		    fuzz_same(a->edst, b->edst, ne, sizeof *a->edst) &&
		    fuzz_same(a->buf_id, b->buf_id, nb, sizeof *a->buf_id) &&
		    fuzz_same(a->buf_size, b->buf_size, nb,
			      sizeof *a->buf_size) &&
		    fuzz_same(a->buf_mem, b->buf_mem, nb, 1);
	for (size_t v = 0; v < n && same; v++) {
		int32_t pa = a->pipe[v], pb = b->pipe[v];
		same = strcmp(a->ops[a->op[v]], b->ops[b->op[v]]) == 0 &&
		       (pa < 0 || pb < 0
				? pa == pb
				: strcmp(a->pipes[pa], b->pipes[pb]) == 0);
	}
	return same;
}

/* The text read by the whole-document path: a form feed put first (after
 * a byte order mark) is white space to cJSON but not to the streamed path
 * (ds_json.c), which then leaves the file to it.  It must accept the text
 * exactly when the first load did (rc), with the same graph g. */
static inline void fuzz_json_whole(const uint8_t *data, size_t len, int rc,
				   const ds_graph *g)
{
	size_t bom = len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
	char *t = malloc(len + 1);
	if (!t)
		return;
	memcpy(t, data, bom);
	t[bom] = '\f';
	memcpy(t + bom + 1, data + bom, len - bom);
	ds_caps caps;
	ds_caps_default(&caps);
	ds_graph *w = NULL;
	ds_err e;
	int wrc = ds_load_json_text(ds_heap_std(), "fuzz.json", t, len + 1,
				    &caps, &w, &e);
	free(t);
	bool judged = wrc != DS_ENOMEM && rc != DS_ENOMEM;
	if (judged && (wrc == DS_OK) != (rc == DS_OK))
		fuzz_die("streamed and whole loads disagree", e.msg);
	if (judged && w && g && !fuzz_same_graph(g, w))
		fuzz_die("streamed and whole loads built different graphs",
			 "fuzz.json");
	if (w)
		ds_graph_free(w);
}

/* fuzz_json: the input is a JSON graph text, also read whole
 * (fuzz_json_whole). */
static inline int fuzz_json_one(const uint8_t *data, size_t len)
{
	ds_caps caps;
	ds_caps_default(&caps);
	ds_graph *g = NULL;
	ds_err e;
	if (len > FUZZ_MAX_INPUT)
		len = FUZZ_MAX_INPUT;
	int rc = ds_load_json_text(ds_heap_std(), "fuzz.json",
				   (const char *)data, len, &caps, &g, &e);
	fuzz_json_whole(data, len, rc, g);
	if (rc == DS_OK) {
		ds_check_fits(g, &e);
		fuzz_place(g);
		ds_graph_free(g);
	} else if (g) {
		fuzz_die("a refused load left a graph", e.msg);
	}
	return rc;
}

/* fuzz_csv: the nodes table, a NUL byte, the edges table (no NUL: an
 * empty edges table); the nodes table is read as published points too. */
static inline int fuzz_csv_one(const char *dir, const char *tag,
			       const uint8_t *data, size_t len)
{
	const uint8_t *part[2];
	size_t plen[2];
	char nodes[4096], edges[4096];
	if (len > FUZZ_MAX_INPUT)
		len = FUZZ_MAX_INPUT;
	int n = fuzz_split(data, len, 2, part, plen);
	fuzz_write(dir, tag, "g_nodes.csv", part[0], plen[0], nodes,
		   sizeof nodes);
	fuzz_write(dir, tag, "g_edges.csv", n > 1 ? part[1] : data,
		   n > 1 ? plen[1] : 0, edges, sizeof edges);
	ds_caps caps;
	ds_caps_default(&caps);
	ds_graph *g = NULL;
	ds_err e;
	int rc = ds_load_graph(ds_heap_std(), nodes, &caps, &g, &e);
	/* the first table also as published points (ds_csv_points, the
	 * other reader over the same CSV code) */
	ds_points pts;
	if (ds_csv_points(ds_heap_std(), nodes, "Conv_Case0", &pts, &e) ==
	    DS_OK)
		ds_points_free(ds_heap_std(), &pts);
	remove(nodes);
	remove(edges);
	if (rc == DS_OK) {
		fuzz_place(g);
		ds_graph_free(g);
	} else if (g) {
		fuzz_die("a refused load left a graph", e.msg);
	}
	return rc;
}

/* Every field of two plans for g. */
static inline bool fuzz_same_plan(const ds_graph *g, const ds_plan *a,
				  const ds_plan *b)
{
	if (a->len != b->len || a->nspill != b->nspill ||
	    !a->offset != !b->offset)
		return false;
	for (int32_t i = 0; i < a->len; i++)
		if (a->order[i] != b->order[i])
			return false;
	for (int32_t k = 0; k < a->nspill; k++)
		if (a->spill[k].buf != b->spill[k].buf ||
		    a->spill[k].offset != b->spill[k].offset)
			return false;
	for (int32_t x = 0; a->offset && x < g->nbuf; x++)
		if (a->offset[x] != b->offset[x])
			return false;
	return true;
}

/* fuzz_plan: schedule, NUL, memory, NUL, spill.  With one part there is
 * no memory plan; with two, no spill file.  The plan is read for
 * FUZZ_PLAN_GRAPH and replayed with and without the one-live rule. */
static inline int fuzz_plan_one(const char *dir, const char *tag,
				const uint8_t *data, size_t len)
{
	static const char graph[] = FUZZ_PLAN_GRAPH;
	const ds_heap *h = ds_heap_std();
	ds_caps caps;
	ds_caps_default(&caps);
	ds_graph *g = NULL;
	ds_err e;
	if (ds_load_json_text(h, "plan.json", graph, sizeof graph - 1, &caps,
			      &g, &e) != DS_OK)
		fuzz_die("the fixed graph does not load", e.msg);
	if (len > FUZZ_MAX_INPUT)
		len = FUZZ_MAX_INPUT;
	const uint8_t *part[3];
	size_t plen[3];
	int n = fuzz_split(data, len, 3, part, plen);
	char path[3][4096];
	static const char *const name[3] = {"p_schedule.txt", "p_memory.txt",
					    "p_spill.txt"};
	for (int i = 0; i < n; i++)
		fuzz_write(dir, tag, name[i], part[i], plen[i], path[i],
			   sizeof path[i]);
	ds_plan p;
	int rc = ds_plan_read(g, path[0], n > 1 ? path[1] : NULL,
			      n > 2 ? path[2] : NULL, &p, &e);
	for (int i = 0; i < n; i++)
		remove(path[i]);
	if (rc == DS_OK) {
		int64_t *start = ds_alloc(h, (size_t)p.len + 1, sizeof *start);
		int64_t *finish = ds_alloc(h, (size_t)p.len + 1,
					   sizeof *finish);
		ds_replay_opts o = {.start = start, .finish = finish};
		ds_figures f;
		rc = ds_replay(g, &p, &o, &f, &e);
		o.q1 = true;
		int rc1 = ds_replay(g, &p, &o, &f, &e);
		if (rc != DS_OK && rc1 == DS_OK)
			fuzz_die("valid under q1 but not without", e.msg);
		char wcase[256], ps[4400], pm[4400], pp[4400];
		snprintf(wcase, sizeof wcase, "%sw", tag);
		snprintf(ps, sizeof ps, "%s/%s_schedule.txt", dir, wcase);
		snprintf(pm, sizeof pm, "%s/%s_memory.txt", dir, wcase);
		snprintf(pp, sizeof pp, "%s/%s_spill.txt", dir, wcase);
		if (rc == DS_OK &&
		    ds_plan_write(g, &p, dir, wcase, &e) == DS_OK) {
			/* what we accept, we write and read back unchanged */
			ds_plan q;
			if (ds_plan_read(g, ps, p.offset ? pm : NULL,
					 p.offset ? pp : NULL, &q, &e) != DS_OK)
				fuzz_die("a written plan does not read back",
					 e.msg);
			if (!fuzz_same_plan(g, &p, &q))
				fuzz_die("a written plan reads back changed",
					 ps);
			ds_plan_free(h, &q);
			remove(ps);
			remove(pm);
			remove(pp);
		}
		ds_free(h, start);
		ds_free(h, finish);
		ds_plan_free(h, &p);
	}
	ds_graph_free(g);
	return rc;
}

/* ---- fuzz_order: orders, right and wrong, to every entry point ---- */

static inline int64_t fuzz_key(const ds_graph *g, void *ctx, int32_t v)
{
	(void)g;
	return ((const uint8_t *)ctx)[v];
}

/* An order of g's n nodes from the input.  mode bit 0: a topological
 * order (Kahn keyed by the next n bytes; bit 1: with the L0 gate), else
 * the Id order shuffled by the swaps the next byte pairs name; bit 2: one
 * entry overwritten by a raw value (maybe out of range or a repeat). */
static inline int fuzz_make_order(const ds_graph *g, unsigned mode,
				  fuzz_bytes *b, int32_t *order, ds_err *e)
{
	const int32_t n = g->n;
	if (mode & 1) {
		uint8_t *key = ds_alloc(g->heap, (size_t)n, 1);
		if (!key)
			return ds_fail(e, DS_ENOMEM, "out of memory");
		for (int32_t v = 0; v < n; v++)
			key[v] = (uint8_t)fuzz_byte(b);
		int rc = ds_order_kahn(g, fuzz_key, key, (mode & 2) != 0,
				       order, e);
		ds_free(g->heap, key);
		if (rc)
			return rc;
	} else {
		for (int32_t v = 0; v < n; v++)
			order[v] = v;
		for (unsigned k = fuzz_byte(b) % 16; k > 0; k--) {
			int32_t i = (int32_t)(fuzz_byte(b) % (unsigned)n);
			int32_t j = (int32_t)(fuzz_byte(b) % (unsigned)n);
			int32_t t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
	}
	if (mode & 4)
		order[fuzz_byte(b) % (unsigned)n] = (int32_t)fuzz_byte(b) - 8;
	return DS_OK;
}

/* q = a copy of p (all of its arrays on h). */
static inline int fuzz_plan_copy(const ds_heap *h, const ds_graph *g,
				 const ds_plan *p, ds_plan *q)
{
	memset(q, 0, sizeof *q);
	q->len = p->len;
	q->nspill = p->nspill;
	q->order = ds_alloc(h, (size_t)p->len + 1, sizeof *q->order);
	q->spill = ds_alloc(h, (size_t)p->nspill + 1, sizeof *q->spill);
	q->offset = p->offset ? ds_alloc(h, (size_t)g->nbuf + 1,
					 sizeof *q->offset)
			      : NULL;
	if (!q->order || !q->spill || (p->offset && !q->offset)) {
		ds_plan_free(h, q);
		return DS_ENOMEM;
	}
	if (p->len > 0)
		memcpy(q->order, p->order, (size_t)p->len * sizeof *q->order);
	if (p->nspill > 0)
		memcpy(q->spill, p->spill,
		       (size_t)p->nspill * sizeof *q->spill);
	if (p->offset)
		memcpy(q->offset, p->offset, (size_t)g->nbuf * sizeof *q->offset);
	return DS_OK;
}

/* Changes q as the input says: spills renumbered at random (valid stays
 * valid), then some swaps of its order (mostly invalid). */
static inline void fuzz_perturb(const ds_graph *g, ds_plan *q, fuzz_bytes *b)
{
	const int32_t n = g->n;
	for (int32_t k = q->nspill - 1; k > 0 && (fuzz_byte(b) & 1); k--) {
		int32_t j = (int32_t)(fuzz_byte(b) % (unsigned)(k + 1));
		ds_spill t = q->spill[k];
		q->spill[k] = q->spill[j];
		q->spill[j] = t;
		for (int32_t i = 0; i < q->len; i++) {
			int32_t v = q->order[i], s = (v - n) / 2;
			if (v >= n && (s == k || s == j))
				q->order[i] = n + 2 * (s == k ? j : k) +
					      (v - n) % 2;
		}
	}
	for (unsigned k = fuzz_byte(b) % 4; k > 0 && q->len > 0; k--) {
		int32_t i = (int32_t)(fuzz_byte(b) % (unsigned)q->len);
		int32_t j = (int32_t)(fuzz_byte(b) % (unsigned)q->len);
		int32_t t = q->order[i];
		q->order[i] = q->order[j];
		q->order[j] = t;
	}
}

/* Two statuses that must agree, unless either ran out of memory. */
static inline void fuzz_agree(int a, int b, const char *what)
{
	if (a != DS_ENOMEM && b != DS_ENOMEM && a != b) {
		char msg[64];
		snprintf(msg, sizeof msg, "status %d, expected %d", b, a);
		fuzz_die(what, msg);
	}
}

/* A plan ds_replay accepted must still be accepted, with its spills in
 * order, once they are renumbered, with the same figures. */
static inline void fuzz_sorted(const ds_heap *h, const ds_graph *g,
			       const ds_plan *q, const ds_figures *f)
{
	ds_plan s;
	ds_err e;
	if (fuzz_plan_copy(h, g, q, &s))
		return;
	ds_replay_opts strict = {.spill_order = true};
	ds_figures fs;
	int rc = ds_plan_sort_spills(g, &s, &e);
	if (rc == DS_OK)
		rc = ds_replay(g, &s, &strict, &fs, &e);
	if (rc != DS_OK && rc != DS_ENOMEM)
		fuzz_die("a valid plan renumbered is refused", e.msg);
	if (rc == DS_OK && (fs.makespan != f->makespan ||
			    fs.extra_ddr != f->extra_ddr ||
			    fs.peak_vstay != f->peak_vstay))
		fuzz_die("renumbering the spills changed a figure", "");
	ds_plan_free(h, &s);
}

/* The public API on plan q, written to files and read back: it must judge
 * q as ds_replay did (loose: rl, strict: rs). */
static inline void fuzz_public(const ds_heap *h, const ds_graph *g,
			       const ds_plan *q, int rl, int rs,
			       const char *dir, const char *tag)
{
	char gpath[4096], cs[256], ps[4400], pm[4400], pp[4400], out[4400];
	static const char graph[] = FUZZ_PLAN_GRAPH;
	ds_err e;
	fuzz_write(dir, tag, "o_graph.json", (const uint8_t *)graph,
		   sizeof graph - 1, gpath, sizeof gpath);
	snprintf(cs, sizeof cs, "%so", tag);
	snprintf(ps, sizeof ps, "%s/%s_schedule.txt", dir, cs);
	snprintf(pm, sizeof pm, "%s/%s_memory.txt", dir, cs);
	snprintf(pp, sizeof pp, "%s/%s_spill.txt", dir, cs);
	dansched_allocator al = {h->fn, h->ud};
	dansched_graph *dg = NULL;
	dansched_plan *dp = NULL;
	if (ds_plan_write(g, q, dir, cs, &e) == DS_OK &&
	    dansched_graph_load(&al, gpath, NULL, &dg, NULL) == DS_OK &&
	    dansched_plan_read(dg, ps, q->offset ? pm : NULL,
			       q->offset ? pp : NULL, &dp, NULL) == DS_OK) {
		dansched_figures f;
		dansched_error err;
		int64_t lb;
		fuzz_agree(rl, dansched_evaluate(dg, dp, 0, &f, &err),
			   "dansched_evaluate and ds_replay disagree");
		fuzz_agree(rs,
			   dansched_evaluate_flags(dg, dp,
						   DANSCHED_EVAL_SPILL_ORDER,
						   &f, &err),
			   "dansched_evaluate_flags and ds_replay disagree");
		dansched_phase_bound(dg, dp, &lb, &err);
		snprintf(out, sizeof out, "%s/%so_view", dir, tag);
		fuzz_agree(rl, dansched_write_trace(dg, dp, out, &err),
			   "dansched_write_trace and ds_replay disagree");
		remove(out);
		if (q->offset)
			fuzz_agree(rl, dansched_write_memmap(dg, dp, out, &err),
				   "dansched_write_memmap and ds_replay "
				   "disagree");
		remove(out);
		if (dansched_plan_write(dg, dp, dir, cs, &err) != DS_OK &&
		    err.status != DS_ENOMEM)
			fuzz_die("dansched_plan_write", err.message);
	}
	dansched_plan_destroy(dp);
	dansched_graph_destroy(dg);
	remove(gpath);
	remove(ps);
	remove(pm);
	remove(pp);
}

/* Plan q (from a placed plan, perturbed): the loose and strict replay,
 * CPE, the renumbering and the public API must agree on it. */
static inline void fuzz_plan_checks(const ds_heap *h, const ds_graph *g,
				    const ds_plan *q, const char *dir,
				    const char *tag)
{
	ds_err e;
	ds_figures f, fs;
	ds_replay_opts strict = {.spill_order = true};
	int rl = ds_replay(g, q, NULL, &f, &e);
	int rs = ds_replay(g, q, &strict, &fs, &e);
	if (rs == DS_OK && rl == DS_EPLAN)
		fuzz_die("valid with the spills in order but not in any order",
			 e.msg);
	if (rl == DS_OK)
		fuzz_sorted(h, g, q, &f);
	ds_plan c;
	ds_cpe_opts co = {.traffic_budget_pct = 5, .effort = 1};
	int rc = ds_cpe(g, q, &co, &c, &e);
	fuzz_agree(q->offset ? rl : DS_EINPUT, rc, "ds_cpe and ds_replay disagree");
	if (rc == DS_OK) {
		if (ds_replay(g, &c, NULL, &fs, &e) == DS_EPLAN)
			fuzz_die("ds_cpe made an invalid plan", e.msg);
		ds_plan_free(h, &c);
	}
	fuzz_public(h, g, q, rl, rs, dir, tag);
}

/* A pass taking an order (ds_place, ds_dlr) returned rc on an order that
 * ds_order_check judged ck: it refuses exactly the wrong ones, and what
 * it makes passes the replay. */
static inline void fuzz_pass(const ds_graph *g, int ck, int rc,
			     const ds_plan *p, const char *what)
{
	ds_err e;
	ds_figures f;
	if (ck != DS_ENOMEM && rc != DS_ENOMEM && (ck == DS_OK) != (rc == DS_OK))
		fuzz_die(what, ck == DS_OK ? "refuses a topological order"
					   : "accepts a wrong order");
	if (rc == DS_OK && ds_replay(g, p, NULL, &f, &e) == DS_EPLAN)
		fuzz_die(what, e.msg);
}

/* fuzz_order: a mode byte, then bytes that make an order of the fixed
 * graph FUZZ_PLAN_GRAPH (see fuzz_make_order), a placement policy, and
 * the changes made to the plan placed from it (fuzz_perturb).  Everything
 * is allocated on h (the tests run it on a failing heap). */
static inline int fuzz_order_one(const ds_heap *h, const char *dir,
				 const char *tag, const uint8_t *data,
				 size_t len)
{
	static const char graph[] = FUZZ_PLAN_GRAPH;
	ds_caps caps;
	ds_caps_default(&caps);
	ds_graph *g = NULL;
	ds_err e;
	int rc = ds_load_json_text(h, "order.json", graph, sizeof graph - 1,
				   &caps, &g, &e);
	if (rc)
		return rc;
	fuzz_bytes b = {data, len > FUZZ_MAX_INPUT ? FUZZ_MAX_INPUT : len, 0};
	unsigned mode = fuzz_byte(&b);
	int32_t *order = ds_alloc(h, (size_t)g->n, sizeof *order);
	rc = order ? fuzz_make_order(g, mode, &b, order, &e) : DS_ENOMEM;
	if (rc == DS_OK) {
		int ck = ds_order_check(g, order, "fuzz", &e);
		ds_place_opts po = {(int)(mode >> 3 & 1), (int)(mode >> 4 & 1), 0};
		ds_plan p, d;
		int rp = ds_place(g, order, &po, &p, &e);
		fuzz_pass(g, ck, rp, &p, "ds_place");
		int rd = ds_dlr(g, order, NULL, &d, &e);
		fuzz_pass(g, ck, rd, &d, "ds_dlr");
		int64_t lb;
		ds_phase_bound(g, order, g->n, &lb, &e);
		/* the order as a plan without offsets (no spills) */
		ds_plan bare = {g->n, order, NULL, 0, NULL};
		fuzz_plan_checks(h, g, &bare, dir, tag);
		/* a plan with spills (DLR's or the placer's), changed */
		ds_plan *src = mode & 32 && rd == DS_OK ? &d
			     : rp == DS_OK	    ? &p
						    : NULL;
		ds_plan q;
		if (src && fuzz_plan_copy(h, g, src, &q) == DS_OK) {
			fuzz_perturb(g, &q, &b);
			fuzz_plan_checks(h, g, &q, dir, tag);
			ds_plan_free(h, &q);
		}
		if (rp == DS_OK)
			ds_plan_free(h, &p);
		if (rd == DS_OK)
			ds_plan_free(h, &d);
		rc = ck;
	}
	ds_free(h, order);
	ds_graph_free(g);
	return rc;
}

#endif
