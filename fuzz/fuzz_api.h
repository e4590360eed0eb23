/* fuzz_api.h: the public API's entry points that take caller values,
 * driven by one input (fuzz_api_one), shared by the libFuzzer target
 * fuzz_api.c and tests/test_api.c, which runs it on the seed corpus and
 * on generated inputs in every build (the ASan one included).
 *
 * The input is read a byte at a time (fuzz_bytes): a graph built call by
 * call (dansched_builder_*: Ids, BufIds, sizes, memory, operation and
 * pipe names, buffer lists and edges as the bytes say, right or wrong),
 * finished under capacities parsed from a string (dansched_caps_parse);
 * on that graph, or the fixed FA_FIXED_GRAPH when it is refused:
 * dansched_plan_make from arrays, dansched_schedule (or
 * dansched_schedule_tradeoff) with options of any value (scheduler,
 * stage, effort, budgets), the bounds, the accessors
 * and the name lookups; and dansched_generate with a kind, a size, a
 * seed and capacities.  fuzz_gen_one (the fuzz_gen target) goes on to
 * schedule the generated graph as above: valid graphs of every kind at
 * tight capacities, where the passes spill (its own target, so that the
 * pipeline's time does not slow the calls above).  Numbers are mostly
 * small, so that valid calls come up, and sometimes an edge (negative,
 * zero, past INT32_MAX); strings come from a table of names, right and
 * wrong, or raw from the input, or are NULL, and an array or an output
 * is now and then NULL.
 *
 * Checked beyond the sanitizers: a refused call leaves its out pointer
 * NULL and a one-line message; a plan dansched_schedule returns passes
 * dansched_evaluate with the figures it reported, and so does each of
 * dansched_schedule_tradeoff's, the figures dansched_schedule gives at
 * its budget. */
#ifndef FUZZ_API_H
#define FUZZ_API_H

#include <math.h>

#include "fuzz_common.h"

/* The most builder calls one input makes, and the longest array passed. */
#define FA_MAX_CALLS 64
#define FA_MAX_ARRAY 48

/* A number from the bytes: below `small` mostly, else an edge value
 * (negative, huge, past INT32_MAX, or 134,217,729: one node more than
 * the generator makes, so that no input asks for a graph that takes
 * long to plan). */
static inline int64_t fa_int(fuzz_bytes *b, int64_t small)
{
	static const int64_t edge[] = {-1,	  INT64_MIN, INT64_MAX,
				       INT32_MAX, -INT32_MAX, (int64_t)1 << 40,
				       134217729, -2};
	unsigned k = fuzz_byte(b);
	if (k < 232)
		return small > 0 ? (int64_t)(k % (unsigned)small) : 0;
	return edge[k & 7];
}

/* fa_int(b, small) times unit, an edge value as it is (no overflow). */
static inline int64_t fa_scaled(fuzz_bytes *b, int64_t small, int64_t unit)
{
	int64_t v = fa_int(b, small);
	return v >= 0 && v < small ? v * unit : v;
}

/* A string from the bytes: one of names[] (nnames of them), NULL, or up
 * to 15 raw bytes of the input into buf (FA_STR bytes). */
#define FA_STR 16
static inline const char *fa_str(fuzz_bytes *b, const char *const *names,
				 unsigned nnames, char *buf)
{
	unsigned k = fuzz_byte(b);
	if (k == 223)
		return NULL;
	if (k < 224)
		return names[k % nnames];
	/* the bytes past the input's end are zeros: the string ends there */
	size_t len = k & 15, left = b->len - b->at;
	if (len > left)
		len = left;
	if (len > FA_STR - 1)
		len = FA_STR - 1;
	memcpy(buf, b->d + b->at, len);
	b->at += len;
	buf[len] = '\0';
	return buf;
}

/* A status the call under test returned, with its message and out. */
static inline void fa_refused(int rc, const dansched_error *e,
			      const void *out, const char *what)
{
	if (rc == DANSCHED_OK)
		return;
	if (out)
		fuzz_die(what, "refused, but *out is not NULL");
	if (!e->message[0] || strchr(e->message, '\n'))
		fuzz_die(what, e->message[0] ? e->message : "refused without a message");
}

/* ---- the graph, call by call ---- */

static const char *const fa_mems[] = {"L1", "UB", "L0A", "L0B", "L0C",
				      "L2", "",	  "l1"};
static const char *const fa_pipes[] = {"CUBE", "VECTOR", "MTE1", "MTE2",
				       "MTE3", "FIXP",	 "",	 "SCALAR"};
static const char *const fa_ops[] = {"MATMUL", "COPY_IN", "ALLOC", "FREE",
				     "EXP",    "",	  "SPILL_IN"};

static inline void fa_add_buffer(dansched_builder *bl, fuzz_bytes *b)
{
	char buf[FA_STR];
	dansched_error e;
	int64_t id = fa_int(b, 24), bufid = fa_int(b, 8);
	int is_free = (int)fa_int(b, 2);
	int64_t size = fa_scaled(b, 200, 16);
	const char *mem = fa_str(b, fa_mems, 8, buf);
	int rc = dansched_builder_add_buffer(bl, id, is_free, bufid, size, mem,
					     &e);
	fa_refused(rc, &e, NULL, "dansched_builder_add_buffer");
}

static inline void fa_add_op(dansched_builder *bl, fuzz_bytes *b)
{
	char nbuf[FA_STR], pbuf[FA_STR];
	dansched_error e;
	int64_t bufs[FA_MAX_ARRAY];
	int64_t id = fa_int(b, 24);
	const char *op = fa_str(b, fa_ops, 7, nbuf);
	const char *pipe = fa_str(b, fa_pipes, 8, pbuf);
	int64_t cycles = fa_int(b, 200);
	/* a count no larger than the array (the API cannot check that),
	 * or a negative one; the array NULL now and then */
	int64_t nb = fa_int(b, 4);
	int32_t n = nb > FA_MAX_ARRAY ? FA_MAX_ARRAY : (int32_t)nb;
	for (int32_t i = 0; i < n; i++)
		bufs[i] = fa_int(b, 8);
	bool null = fuzz_byte(b) == 255;
	int rc = dansched_builder_add_op(bl, id, op, pipe, cycles,
					 null ? NULL : bufs, n, &e);
	fa_refused(rc, &e, NULL, "dansched_builder_add_op");
}

static inline void fa_add_edge(dansched_builder *bl, fuzz_bytes *b)
{
	dansched_error e;
	int64_t src = fa_int(b, 24), dst = fa_int(b, 24);
	int rc = dansched_builder_add_edge(bl, src, dst, &e);
	fa_refused(rc, &e, NULL, "dansched_builder_add_edge");
}

/* Capacities from a string of the input, or NULL (the defaults). */
static inline const dansched_caps *fa_caps(fuzz_bytes *b, dansched_caps *c)
{
	/* right and wrong, and tight ones where generated graphs spill */
	static const char *const specs[] = {
		"L1=8192",	  "UB=2048,L1=2048", "L1=0",
		"UB=-1",	  "L9=4",	     "L1=99999999999999999999",
		"L1=",		  "",		     "L1=1536,UB=640",
		"L1=1024,UB=512"};
	char buf[FA_STR];
	dansched_error e;
	if (fuzz_byte(b) & 1)
		return NULL;
	dansched_caps_default(c);
	int rc = dansched_caps_parse(c, fa_str(b, specs, 10, buf), &e);
	fa_refused(rc, &e, NULL, "dansched_caps_parse");
	return rc == DANSCHED_OK ? c : NULL;
}

/* The graph the builder calls make, or NULL when finish refuses it. */
static inline dansched_graph *fa_build(const dansched_allocator *al,
				       fuzz_bytes *b)
{
	dansched_builder *bl = dansched_builder_new(al, "fuzz");
	if (!bl)
		return NULL;
	unsigned calls = fuzz_byte(b) % FA_MAX_CALLS;
	for (unsigned i = 0; i < calls; i++) {
		unsigned k = fuzz_byte(b) % 3;
		if (k == 0)
			fa_add_buffer(bl, b);
		else if (k == 1)
			fa_add_op(bl, b);
		else
			fa_add_edge(bl, b);
	}
	dansched_caps caps;
	const dansched_caps *c = fa_caps(b, &caps);
	dansched_graph *g = NULL;
	dansched_error e;
	int rc = dansched_builder_finish(bl, c, &g, &e);
	fa_refused(rc, &e, g, "dansched_builder_finish");
	dansched_builder_destroy(bl);
	return g;
}

/* ---- on a graph ---- */

/* A BufId: one of g's, or any number. */
static inline int64_t fa_bufid(const dansched_graph *g, fuzz_bytes *b)
{
	int64_t k = fa_int(b, 16);
	int64_t id = dansched_graph_buffer_id(g, (int32_t)k);
	return id >= 0 && (k & 1) ? id : fa_int(b, 16);
}

/* A count of at most FA_MAX_ARRAY entries, or a negative one. */
static inline int64_t fa_count(fuzz_bytes *b, int64_t small)
{
	int64_t n = fa_int(b, small);
	return n > FA_MAX_ARRAY ? FA_MAX_ARRAY : n;
}

static inline bool fa_plan_make(const dansched_graph *g, fuzz_bytes *b)
{
	int64_t order[FA_MAX_ARRAY];
	dansched_place off[FA_MAX_ARRAY], sp[FA_MAX_ARRAY];
	int64_t n = dansched_graph_nodes(g);
	int64_t len = fa_count(b, n + 3), noff = fa_count(b, 16);
	int64_t nsp = fa_count(b, 4);
	for (int64_t i = 0; i < len; i++)
		order[i] = (fuzz_byte(b) & 3) ? i : fa_int(b, n + 4);
	for (int64_t i = 0; i < noff; i++)
		off[i] = (dansched_place){fa_bufid(g, b), fa_scaled(b, 64, 64)};
	for (int64_t i = 0; i < nsp; i++)
		sp[i] = (dansched_place){fa_bufid(g, b), fa_scaled(b, 64, 64)};
	unsigned nulls = fuzz_byte(b);
	dansched_plan *p = NULL;
	dansched_error e;
	dansched_figures f;
	int rc = dansched_plan_make(g, nulls & 1 ? NULL : order, len,
				    nulls & 2 ? NULL : off, noff,
				    nulls & 4 ? NULL : sp, nsp, &p, &e);
	fa_refused(rc, &e, p, "dansched_plan_make");
	if (rc == DANSCHED_OK)
		fa_refused(dansched_evaluate(g, p, 0, &f, &e), &e, NULL,
			   "dansched_evaluate");
	dansched_plan_destroy(p);
	return rc == DANSCHED_OK;
}

/* A budget: the default, in range, or not a budget at all. */
static inline double fa_budget(fuzz_bytes *b)
{
	static const double v[] = {5, 0, 25, -1, 1e6, 1e7, NAN, INFINITY};
	return v[fuzz_byte(b) & 7];
}

/* A plan dansched_schedule returned replays to the figures it reported. */
static inline void fa_check_plan(const dansched_graph *g,
				 const dansched_plan *p,
				 const dansched_figures *f)
{
	dansched_figures r;
	dansched_error e;
	int64_t lb_any, lb_phase;
	int exact;
	int rc = dansched_evaluate(g, p, 0, &r, &e);
	if (rc == DANSCHED_NO_MEMORY)
		return;
	if (rc != DANSCHED_OK)
		fuzz_die("dansched_schedule made a plan the evaluator refuses",
			 e.message);
	if (r.makespan != f->makespan || r.extra_ddr != f->extra_ddr ||
	    r.peak_vstay != f->peak_vstay)
		fuzz_die("dansched_schedule", "its figures are not the replay's");
	if (dansched_any_bound(g, p, &lb_any, &lb_phase, &exact, &e) ==
		    DANSCHED_OK &&
	    lb_any > r.makespan)
		fuzz_die("dansched_any_bound", "above a plan's makespan");
	int64_t bufid, at;
	int32_t k = dansched_plan_spill_count(p);
	if (k > 0 && dansched_plan_spill(g, p, k - 1, &bufid, &at) != 0)
		fuzz_die("dansched_plan_spill", "refuses the plan's last spill");
}

/* The plan dansched_schedule makes with o at tradeoff budget i has
 * figures f (dansched_schedule_tradeoff's at i). */
static inline void fa_same_point(const dansched_graph *g,
				 const dansched_options *o, int i,
				 const dansched_figures *f)
{
	dansched_options at = *o;
	at.traffic_budget_pct = dansched_tradeoff_budget(i);
	dansched_plan *p = NULL;
	dansched_figures r;
	dansched_error e;
	int rc = dansched_schedule(g, &at, &p, &r, &e);
	dansched_plan_destroy(p);
	if (rc == DANSCHED_NO_MEMORY)
		return;
	if (rc != DANSCHED_OK || r.makespan != f->makespan ||
	    r.extra_ddr != f->extra_ddr || r.peak_vstay != f->peak_vstay)
		fuzz_die("dansched_schedule_tradeoff",
			 "a point is not dansched_schedule's at its budget");
}

/* dansched_schedule_tradeoff with o (NULL: the defaults): refused with
 * every out[i] NULL, or plans that replay to their figures, one of them
 * (the bytes choose which) the one dansched_schedule makes at its
 * budget.  One, not all: each is a whole run of the pipeline, and all
 * five took the sanitized fuzz_gen past its timeout on an input CI's
 * run of 2026-12-06 found (11.7 s; 6.5 s with one). */
static inline bool fa_tradeoff(const dansched_graph *g,
			       const dansched_options *o, fuzz_bytes *b)
{
	dansched_plan *p[DANSCHED_NTRADEOFF];
	dansched_figures f[DANSCHED_NTRADEOFF];
	dansched_error e;
	dansched_options def;
	dansched_options_default(&def);
	int same = (int)(fuzz_byte(b) % DANSCHED_NTRADEOFF);
	int rc = dansched_schedule_tradeoff(g, o, p, f, &e);
	for (int i = 0; i < DANSCHED_NTRADEOFF; i++) {
		fa_refused(rc, &e, p[i], "dansched_schedule_tradeoff");
		if (rc == DANSCHED_OK) {
			fa_check_plan(g, p[i], &f[i]);
			if (i == same)
				fa_same_point(g, o ? o : &def, i, &f[i]);
		}
		dansched_plan_destroy(p[i]);
	}
	return rc == DANSCHED_OK;
}

static inline bool fa_schedule(const dansched_graph *g, fuzz_bytes *b)
{
	dansched_options o;
	dansched_options_default(&o);
	unsigned set = fuzz_byte(b);
	if (set & 1)
		o.scheduler = (int)fa_int(b, DANSCHED_NSCHEDULERS + 1);
	if (set & 2)
		o.stage = (int)fa_int(b, 5);
	if (set & 4)
		o.effort = fa_int(b, 3);
	if (set & 8)
		o.traffic_budget_pct = fa_budget(b);
	if (set & 16)
		o.peak_budget_pct = fa_budget(b);
	dansched_plan *p = NULL;
	dansched_figures f;
	dansched_error e;
	if (set & 64) {
		/* no output: refused, whatever the options */
		if (dansched_schedule(g, &o, NULL, &f, &e) != DANSCHED_BAD_INPUT)
			fuzz_die("dansched_schedule", "took a NULL output");
		return false;
	}
	if (set & 128) /* the budgets' ladder instead */
		return fa_tradeoff(g, set & 32 ? NULL : &o, b);
	int rc = dansched_schedule(g, set & 32 ? NULL : &o, &p, &f, &e);
	fa_refused(rc, &e, p, "dansched_schedule");
	if (rc == DANSCHED_OK)
		fa_check_plan(g, p, &f);
	dansched_plan_destroy(p);
	return rc == DANSCHED_OK;
}

/* The lookups by name and index. */
static inline void fa_names(const dansched_graph *g, fuzz_bytes *b)
{
	static const char *const names[] = {"dan", "lpmf", "mpas", "cpe",
					    "",	   "Dan",  "dlr",  "vpux"};
	char buf[FA_STR];
	int s = dansched_scheduler_from_name(fa_str(b, names, 8, buf));
	int t = dansched_stage_from_name(fa_str(b, names, 8, buf));
	if ((s >= 0) != (dansched_scheduler_name(s) != NULL) ||
	    (t >= 0) != (dansched_stage_name(t) != NULL))
		fuzz_die("a name lookup", "found a name it cannot give back");
	dansched_memory_name((int)fa_int(b, 7));
	dansched_scheduler_name((int)fa_int(b, 8));
	dansched_stage_name((int)fa_int(b, 5));
	dansched_graph_buffer_id(g, (int32_t)fa_int(b, 16));
}

/* What one input reached (fuzz_api_one's and fuzz_gen_one's result), for
 * the tests. */
enum {
	FA_BUILT = 1,	     /* the builder's graph was accepted */
	FA_PLAN_MADE = 2,    /* dansched_plan_make made a plan */
	FA_SCHEDULED = 4,    /* dansched_schedule made a plan */
	FA_GENERATED = 8,    /* dansched_generate made a graph */
	FA_GEN_SCHEDULED = 16 /* ... and dansched_schedule planned it */
};

/* dansched_generate, and with plan its graph scheduled; FA_ flags
 * reached. */
static inline int fa_generate(const dansched_allocator *al, fuzz_bytes *b,
			      bool plan)
{
	static const char *const kinds[] = {"matmul", "attention", "conv",
					    "random", "",	   "Matmul"};
	char buf[FA_STR];
	const char *kind = fa_str(b, kinds, 6, buf);
	int64_t nodes = fa_int(b, 200);
	uint64_t seed = fuzz_byte(b);
	dansched_caps caps;
	const dansched_caps *c = fa_caps(b, &caps);
	dansched_graph *g = NULL;
	dansched_error e;
	int rc = dansched_generate(al, kind, nodes, seed, c, &g, &e);
	fa_refused(rc, &e, g, "dansched_generate");
	int reached = rc == DANSCHED_OK ? FA_GENERATED : 0;
	/* a valid graph of a kind and capacities the bytes chose */
	if (rc == DANSCHED_OK && plan && fa_schedule(g, b))
		reached |= FA_GEN_SCHEDULED;
	dansched_graph_destroy(g);
	return reached;
}

/* The graph the calls on a graph use when the builder's is refused: a
 * load, a vector operation and a store over one L1 and one UB buffer
 * (small, so that the dan pipeline runs fast). */
#define FA_FIXED_GRAPH                                                       \
	"{\"Nodes\":["                                                       \
	"{\"Id\":0,\"Op\":\"ALLOC\",\"BufId\":0,\"Size\":64,\"Type\":\"L1\"}," \
	"{\"Id\":1,\"Op\":\"COPY_IN\",\"Pipe\":\"MTE2\",\"Cycles\":10,"    \
	"\"Bufs\":[0]},"                                                    \
	"{\"Id\":2,\"Op\":\"ALLOC\",\"BufId\":1,\"Size\":32,\"Type\":\"UB\"}," \
	"{\"Id\":3,\"Op\":\"EXP\",\"Pipe\":\"VECTOR\",\"Cycles\":7,"       \
	"\"Bufs\":[1,0]},"                                                  \
	"{\"Id\":4,\"Op\":\"COPY_OUT\",\"Pipe\":\"MTE3\",\"Cycles\":5,"    \
	"\"Bufs\":[1]},"                                                    \
	"{\"Id\":5,\"Op\":\"FREE\",\"BufId\":0,\"Size\":64,\"Type\":\"L1\"}," \
	"{\"Id\":6,\"Op\":\"FREE\",\"BufId\":1,\"Size\":32,\"Type\":\"UB\"}" \
	"],\"Edges\":[[0,1],[1,3],[2,3],[3,4],[3,5],[4,6]]}"

/* One input: the calls above, in that order, on allocator al (NULL: the
 * standard one).  Returns what it reached (FA_ flags). */
static inline int fuzz_api_one(const dansched_allocator *al,
			       const uint8_t *data, size_t len)
{
	static const char fixed[] = FA_FIXED_GRAPH;
	fuzz_bytes b = {data, len > FUZZ_MAX_INPUT ? FUZZ_MAX_INPUT : len, 0};
	dansched_graph *g = fa_build(al, &b);
	int reached = g ? FA_BUILT : 0;
	dansched_error e;
	if (!g && dansched_graph_parse(al, "fixed", fixed, sizeof fixed - 1,
				       NULL, &g, &e) != DANSCHED_OK)
		return reached; /* out of memory */
	reached |= fa_plan_make(g, &b) ? FA_PLAN_MADE : 0;
	reached |= fa_schedule(g, &b) ? FA_SCHEDULED : 0;
	fa_names(g, &b);
	dansched_graph_destroy(g);
	reached |= fa_generate(al, &b, false);
	return reached;
}

/* One input of fuzz_gen: a generated graph, scheduled.  Returns what it
 * reached (FA_GENERATED, FA_GEN_SCHEDULED). */
static inline int fuzz_gen_one(const dansched_allocator *al,
			       const uint8_t *data, size_t len)
{
	fuzz_bytes b = {data, len > FUZZ_MAX_INPUT ? FUZZ_MAX_INPUT : len, 0};
	return fa_generate(al, &b, true);
}

#endif
