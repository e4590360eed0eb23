/* ds_api.c: the public API (include/dansched.h) over the internal modules.
 *
 * The public objects wrap the internal ones together with a copy of the
 * caller's allocator, so that the internal structures can keep a stable
 * pointer to it.  Status codes and memory indices are the same numbers on
 * both sides (checked below at compile time). */
#include "dansched.h"
#include "ds_pipeline.h"

#include <stdio.h>
#include <string.h>

/* (int) casts: the two sides are distinct anonymous enums */
_Static_assert((int)DANSCHED_OK == (int)DS_OK &&
		       (int)DANSCHED_INVALID_PLAN == (int)DS_EPLAN &&
		       (int)DANSCHED_BAD_INPUT == (int)DS_EINPUT &&
		       (int)DANSCHED_NO_MEMORY == (int)DS_ENOMEM,
	       "status codes agree");
_Static_assert((int)DANSCHED_NMEM == (int)DS_NMEM &&
		       (int)DANSCHED_L0C == (int)DS_L0C,
	       "memory indices agree");
_Static_assert((int)DANSCHED_NSCHEDULERS == (int)DS_NSCHED &&
		       (int)DANSCHED_DAN == (int)DS_SCHED_DAN &&
		       (int)DANSCHED_CPE == (int)DS_STAGE_CPE,
	       "scheduler and stage numbers agree");
_Static_assert(sizeof(((dansched_error *)0)->message) ==
		       sizeof(((ds_err *)0)->msg),
	       "error messages have the same room");

struct dansched_graph {
	ds_heap heap;
	ds_graph *g;
};

struct dansched_builder {
	ds_heap heap;
	ds_builder *b;
};

/* A plan remembers the shape of the graph it was made for: its arrays are
 * sized by it, and a plan given with another graph is refused (plan_fits). */
struct dansched_plan {
	ds_heap heap;
	ds_plan p;
	int32_t n, nbuf;
};

/* Runs an internal call with a ds_err and copies it out. */
static int out_err(int rc, const ds_err *e, dansched_error *err)
{
	if (err) {
		err->status = rc;
		if (rc)
			memcpy(err->message, e->msg, sizeof err->message);
		else
			err->message[0] = 0;
	}
	return rc;
}

static ds_heap heap_of(const dansched_allocator *a)
{
	if (a && a->fn) {
		ds_heap h = {a->fn, a->ud};
		return h;
	}
	return *ds_heap_std();
}

static int no_memory(dansched_error *err)
{
	ds_err e;
	return out_err(ds_fail(&e, DS_ENOMEM, "out of memory"), &e, err);
}

/* A pointer the call needs was NULL: DS_EINPUT naming what it stands for
 * (the convention of dansched.h: never a crash). */
static int missing(const char *what, dansched_error *err)
{
	ds_err e;
	return out_err(ds_fail(&e, DS_EINPUT, "no %s given", what), &e, err);
}

const char *dansched_version(void) { return DS_VERSION; }

void dansched_caps_default(dansched_caps *caps)
{
	if (!caps)
		return;
	ds_caps c;
	ds_caps_default(&c);
	memcpy(caps->cap, c.cap, sizeof c.cap);
}

int dansched_caps_parse(dansched_caps *caps, const char *spec,
			dansched_error *err)
{
	ds_caps c;
	ds_err e;
	if (!caps || !spec)
		return missing(caps ? "capacity spec" : "capacities", err);
	memcpy(c.cap, caps->cap, sizeof c.cap);
	int rc = ds_caps_parse(&c, spec, &e);
	if (rc == DS_OK)
		memcpy(caps->cap, c.cap, sizeof c.cap);
	return out_err(rc, &e, err);
}

const char *dansched_memory_name(int memory)
{
	return memory >= 0 && memory < DS_NMEM ? ds_mem_names[memory] : NULL;
}

static ds_caps caps_of(const dansched_caps *caps)
{
	ds_caps c;
	if (caps)
		memcpy(c.cap, caps->cap, sizeof c.cap);
	else
		ds_caps_default(&c);
	return c;
}

/* ---- graphs ---- */

dansched_builder *dansched_builder_new(const dansched_allocator *alloc,
				       const char *name)
{
	ds_heap h = heap_of(alloc);
	dansched_builder *b = ds_alloc(&h, 1, sizeof *b);
	if (!b)
		return NULL;
	b->heap = h;
	b->b = ds_builder_new(&b->heap, name);
	if (!b->b) {
		ds_free(&h, b);
		return NULL;
	}
	return b;
}

int dansched_builder_add_buffer(dansched_builder *b, int64_t id, int is_free,
				int64_t bufid, int64_t size,
				const char *memory, dansched_error *err)
{
	ds_err e;
	if (!b)
		return missing("builder", err);
	return out_err(ds_builder_buffer(b->b, id, is_free != 0, bufid, size,
					 memory, &e),
		       &e, err);
}

int dansched_builder_add_op(dansched_builder *b, int64_t id, const char *op,
			    const char *pipe, int64_t cycles,
			    const int64_t *bufs, int32_t nbufs,
			    dansched_error *err)
{
	ds_err e;
	if (!b)
		return missing("builder", err);
	return out_err(ds_builder_op(b->b, id, op, pipe, cycles, bufs, nbufs,
				     &e),
		       &e, err);
}

int dansched_builder_add_edge(dansched_builder *b, int64_t src, int64_t dst,
			      dansched_error *err)
{
	ds_err e;
	if (!b)
		return missing("builder", err);
	return out_err(ds_builder_edge(b->b, src, dst, &e), &e, err);
}

/* A graph wrapper whose heap the internal graph will point at. */
static dansched_graph *graph_new(const ds_heap *h)
{
	dansched_graph *g = ds_alloc(h, 1, sizeof *g);
	if (g)
		g->heap = *h;
	return g;
}

/* The end of every call that makes a graph: g (from graph_new on heap
 * h) goes to *out when rc is DS_OK and is freed otherwise; rc and e are
 * reported through err. */
static int graph_done(dansched_graph *g, const ds_heap *h, int rc,
		      const ds_err *e, dansched_graph **out,
		      dansched_error *err)
{
	if (rc)
		ds_free(h, g);
	else
		*out = g;
	return out_err(rc, e, err);
}

int dansched_builder_finish(dansched_builder *b, const dansched_caps *caps,
			    dansched_graph **out, dansched_error *err)
{
	if (!b || !out)
		return missing(b ? "output" : "builder", err);
	*out = NULL;
	dansched_graph *g = graph_new(&b->heap);
	if (!g)
		return no_memory(err);
	/* the graph keeps a pointer to its heap: its own copy, not ours */
	ds_builder_rehome(b->b, &g->heap);
	ds_caps c = caps_of(caps);
	ds_err e;
	int rc = ds_builder_finish(b->b, &c, &g->g, &e);
	ds_builder_rehome(b->b, &b->heap);
	return graph_done(g, &b->heap, rc, &e, out, err);
}

void dansched_builder_destroy(dansched_builder *b)
{
	if (!b)
		return;
	ds_heap h = b->heap;
	ds_builder_free(b->b);
	ds_free(&h, b);
}

int dansched_graph_load(const dansched_allocator *alloc, const char *path,
			const dansched_caps *caps, dansched_graph **out,
			dansched_error *err)
{
	if (!path || !out)
		return missing(path ? "output" : "path", err);
	ds_heap h = heap_of(alloc);
	*out = NULL;
	dansched_graph *g = graph_new(&h);
	if (!g)
		return no_memory(err);
	ds_caps c = caps_of(caps);
	ds_err e;
	int rc = ds_load_graph(&g->heap, path, &c, &g->g, &e);
	return graph_done(g, &h, rc, &e, out, err);
}

int dansched_graph_save(const dansched_graph *g, const char *path,
			dansched_error *err)
{
	ds_err e;
	if (!g || !path)
		return missing(g ? "path" : "graph", err);
	int rc = ds_write_graph(g->g, path, &e);
	return out_err(rc, &e, err);
}

int dansched_generate(const dansched_allocator *alloc, const char *kind,
		      int64_t nodes, uint64_t seed, const dansched_caps *caps,
		      dansched_graph **out, dansched_error *err)
{
	static const char *const kinds[] = {"matmul", "attention", "conv",
					    "random"};
	static const int ids[] = {DS_GEN_MATMUL, DS_GEN_ATTENTION, DS_GEN_CONV,
				  DS_GEN_RANDOM};
	ds_err e;
	if (!out)
		return missing("output", err);
	*out = NULL;
	int k = -1;
	for (int i = 0; i < 4; i++)
		if (kind && strcmp(kind, kinds[i]) == 0)
			k = ids[i];
	if (k < 0)
		return out_err(ds_fail(&e, DS_EINPUT,
				       "unknown graph kind '%s' (matmul, "
				       "attention, conv, random)",
				       kind ? kind : "(null)"),
			       &e, err);
	ds_heap h = heap_of(alloc);
	dansched_graph *g = graph_new(&h);
	if (!g)
		return no_memory(err);
	ds_caps c = caps_of(caps);
	int rc = ds_generate(&g->heap, k, nodes, seed, &c, &g->g, &e);
	return graph_done(g, &h, rc, &e, out, err);
}

void dansched_graph_destroy(dansched_graph *g)
{
	if (!g)
		return;
	ds_heap h = g->heap;
	ds_graph_free(g->g);
	ds_free(&h, g);
}

int32_t dansched_graph_nodes(const dansched_graph *g)
{
	return g ? g->g->n : 0;
}

int32_t dansched_graph_buffers(const dansched_graph *g)
{
	return g ? g->g->nbuf : 0;
}

int dansched_case_name(const char *path, char *buf, size_t size)
{
	const char *start;
	if (!path || !buf)
		return DS_EINPUT;
	size_t l = ds_case_span(path, &start);
	if (l >= size)
		return DS_EINPUT;
	memcpy(buf, start, l);
	buf[l] = 0;
	return DS_OK;
}

/* ---- planning ---- */

const char *dansched_scheduler_name(int s)
{
	return s >= 0 && s < DS_NSCHED ? ds_sched_names[s] : NULL;
}

int dansched_scheduler_from_name(const char *name)
{
	for (int s = 0; name && s < DS_NSCHED; s++)
		if (strcmp(name, ds_sched_names[s]) == 0)
			return s;
	return -1;
}

const char *dansched_stage_name(int stage)
{
	return stage >= 1 && stage <= 3 ? ds_stage_names[stage] : NULL;
}

_Static_assert(DANSCHED_NTRADEOFF == DS_NLADDER, "the tradeoff's budgets");

double dansched_tradeoff_budget(int i)
{
	return i >= 0 && i < DS_NLADDER ? ds_budget_ladder[i] : -1;
}

int dansched_stage_from_name(const char *name)
{
	for (int s = 1; name && s <= 3; s++)
		if (strcmp(name, ds_stage_names[s]) == 0)
			return s;
	return -1;
}

void dansched_options_default(dansched_options *o)
{
	ds_run_opts r;
	if (!o)
		return;
	ds_run_opts_default(&r);
	memset(o, 0, sizeof *o);
	o->scheduler = r.scheduler;
	o->stage = r.stage;
	o->traffic_budget_pct = r.cpe.traffic_budget_pct;
	o->peak_budget_pct = r.cpe.peak_budget_pct;
}

static void figures_out(const ds_figures *f, dansched_figures *fig)
{
	if (!fig)
		return;
	fig->nodes = f->nodes;
	fig->peak_vstay = f->peak_vstay;
	fig->extra_ddr = f->extra_ddr;
	fig->spills = f->spills;
	fig->makespan = f->makespan;
	fig->lb_critical_path = f->lb_critical_path;
	fig->lb_pipe_load = f->lb_pipe_load;
	memcpy(fig->peak_mem, f->peak_mem, sizeof fig->peak_mem);
}

/* Relays the internal progress callback to the caller's. */
static void relay_progress(void *ud, const char *stage, double seconds,
			   const ds_figures *f)
{
	const dansched_options *o = ud;
	dansched_figures fig;
	figures_out(f, &fig);
	o->progress(o->progress_ud, stage, seconds, &fig);
}

static dansched_plan *plan_new(const dansched_graph *g)
{
	dansched_plan *p = ds_alloc(&g->heap, 1, sizeof *p);
	if (p) {
		p->heap = g->heap;
		p->n = g->g->n;
		p->nbuf = g->g->nbuf;
	}
	return p;
}

/* The precondition of every call taking a graph and a plan: the plan was
 * made for a graph of this shape (its offsets, spills and order are sized
 * and numbered by it).  DS_EINPUT otherwise. */
static int plan_fits(const dansched_graph *g, const dansched_plan *p,
		     ds_err *e)
{
	if (!g || !p)
		return ds_fail(e, DS_EINPUT, "no %s given", g ? "plan" : "graph");
	if (p->n != g->g->n || p->nbuf != g->g->nbuf)
		return ds_fail(e, DS_EINPUT,
			       "%s: the plan was made for another graph (%d "
			       "nodes, %d buffers; this one has %d and %d)",
			       g->g->source, p->n, p->nbuf, g->g->n,
			       g->g->nbuf);
	return DS_OK;
}

/* Options o sets (at other values than dansched_options_default's) that
 * its run would not use, refused as the CLI refuses them: the stage, the
 * effort and the budgets are dan's (a baseline's plan is its whole run),
 * the budgets its CPE stage's.  A value equal to the default cannot be
 * told from one left alone, and is taken. */
static int options_unused(const dansched_options *o, ds_err *e)
{
	dansched_options d;
	dansched_options_default(&d);
	const bool dan = o->scheduler == DANSCHED_DAN;
	const char *whose = dan ? "stage cpe" : "the dan scheduler";
	if (!dan && o->stage != d.stage)
		return ds_fail(e, DS_EINPUT, "stage %s is for the dan scheduler "
			       "(a baseline's plan is its whole run)",
			       ds_stage_names[o->stage]);
	if (!dan && o->effort > 1)
		return ds_fail(e, DS_EINPUT, "effort %lld is for the dan "
			       "scheduler", (long long)o->effort);
	if (dan && o->stage == DANSCHED_CPE)
		return DS_OK;
	if (o->traffic_budget_pct != d.traffic_budget_pct)
		return ds_fail(e, DS_EINPUT, "traffic budget %g is for %s",
			       o->traffic_budget_pct, whose);
	if (o->peak_budget_pct != d.peak_budget_pct)
		return ds_fail(e, DS_EINPUT, "peak budget %g is for %s",
			       o->peak_budget_pct, whose);
	return DS_OK;
}

/* The caller's options, checked: DS_EINPUT naming the first out of
 * range, then the first the run would not use. */
static int options_check(const dansched_options *o, ds_err *e)
{
	if (o->scheduler < 0 || o->scheduler >= DS_NSCHED)
		return ds_fail(e, DS_EINPUT, "unknown scheduler %d",
			       o->scheduler);
	if (o->stage < DS_STAGE_MPAS || o->stage > DS_STAGE_CPE)
		return ds_fail(e, DS_EINPUT, "unknown stage %d", o->stage);
	if (o->effort < 0 || o->effort > DANSCHED_EFFORT_MAX)
		return ds_fail(e, DS_EINPUT,
			       "effort %lld is out of range (0 to %d)",
			       (long long)o->effort, DANSCHED_EFFORT_MAX);
	const double pct[2] = {o->traffic_budget_pct, o->peak_budget_pct};
	for (int i = 0; i < 2; i++)
		if (!(pct[i] >= 0 && pct[i] <= DANSCHED_BUDGET_MAX))
			return ds_fail(e, DS_EINPUT,
				       "%s budget %g is out of range (0 to "
				       "%g)",
				       i ? "peak" : "traffic", pct[i],
				       DANSCHED_BUDGET_MAX);
	return options_unused(o, e);
}

/* The caller's options o, or the defaults (in *def) when o is NULL. */
static const dansched_options *options_given(const dansched_options *o,
					     dansched_options *def)
{
	if (o)
		return o;
	dansched_options_default(def);
	return def;
}

/* The pipeline's options for the caller's o. */
static void run_opts(const dansched_options *o, ds_run_opts *r)
{
	ds_run_opts_default(r);
	r->scheduler = o->scheduler;
	r->stage = o->stage;
	r->mpas.effort = r->dlr.effort = r->cpe.effort = o->effort;
	r->retime.effort = o->effort;
	r->cpe.traffic_budget_pct = o->traffic_budget_pct;
	r->cpe.peak_budget_pct = o->peak_budget_pct;
	if (o->progress) {
		r->progress = relay_progress;
		r->progress_ud = (void *)o;
	}
}

int dansched_schedule(const dansched_graph *g, const dansched_options *o,
		      dansched_plan **out, dansched_figures *fig,
		      dansched_error *err)
{
	if (!g || !out)
		return missing(g ? "output" : "graph", err);
	dansched_options def;
	o = options_given(o, &def);
	ds_run_opts r;
	run_opts(o, &r);
	ds_err e;
	*out = NULL;
	int rc = options_check(o, &e);
	if (rc)
		return out_err(rc, &e, err);
	dansched_plan *p = plan_new(g);
	if (!p)
		return no_memory(err);
	ds_figures f;
	rc = ds_run(g->g, &r, &p->p, &f, &e);
	if (rc) {
		ds_free(&g->heap, p);
		return out_err(rc, &e, err);
	}
	figures_out(&f, fig);
	*out = p;
	return out_err(DS_OK, &e, err);
}

/* The options a tradeoff run refuses: options_check's, then a traffic
 * budget of its own (the ladder's are its); another scheduler or stage
 * ds_run_ladder refuses. */
static int tradeoff_options(const dansched_options *o, ds_err *e)
{
	int rc = options_check(o, e);
	if (rc)
		return rc;
	dansched_options d;
	dansched_options_default(&d);
	if (o->traffic_budget_pct != d.traffic_budget_pct)
		return ds_fail(e, DS_EINPUT, "traffic budget %g: a tradeoff "
			       "run plans at dansched_tradeoff_budget's",
			       o->traffic_budget_pct);
	return DS_OK;
}

int dansched_schedule_tradeoff(const dansched_graph *g,
			       const dansched_options *o,
			       dansched_plan *out[DANSCHED_NTRADEOFF],
			       dansched_figures fig[DANSCHED_NTRADEOFF],
			       dansched_error *err)
{
	if (out)
		memset(out, 0, DS_NLADDER * sizeof *out);
	if (!g || !out)
		return missing(g ? "output" : "graph", err);
	dansched_options def;
	o = options_given(o, &def);
	ds_err e;
	dansched_plan *p[DS_NLADDER] = {0};
	int rc = tradeoff_options(o, &e);
	for (int i = 0; i < DS_NLADDER && rc == DS_OK; i++)
		if (!(p[i] = plan_new(g)))
			rc = ds_fail(&e, DS_ENOMEM, "out of memory");
	ds_plan pl[DS_NLADDER];
	ds_figures f[DS_NLADDER];
	ds_run_opts r;
	run_opts(o, &r);
	if (rc == DS_OK)
		rc = ds_run_ladder(g->g, &r, pl, f, &e);
	for (int i = 0; i < DS_NLADDER; i++) {
		if (rc == DS_OK) {
			p[i]->p = pl[i];
			figures_out(&f[i], fig ? &fig[i] : NULL);
			out[i] = p[i];
		} else {
			ds_free(&g->heap, p[i]);
		}
	}
	return out_err(rc, &e, err);
}

int dansched_plan_read(const dansched_graph *g, const char *schedule,
		       const char *memory, const char *spill,
		       dansched_plan **out, dansched_error *err)
{
	if (!g || !schedule || !out)
		return missing(!g ? "graph" : !out ? "output" : "schedule path",
			       err);
	*out = NULL;
	dansched_plan *p = plan_new(g);
	if (!p)
		return no_memory(err);
	ds_err e;
	int rc = ds_plan_read(g->g, schedule, memory, spill, &p->p, &e);
	if (rc) {
		ds_free(&g->heap, p);
		return out_err(rc, &e, err);
	}
	*out = p;
	return out_err(DS_OK, &e, err);
}

int dansched_evaluate_flags(const dansched_graph *g, const dansched_plan *p,
			    unsigned flags, dansched_figures *fig,
			    dansched_error *err)
{
	ds_replay_opts o = {
		.q1 = (flags & DANSCHED_EVAL_Q1) != 0,
		.spill_order = (flags & DANSCHED_EVAL_SPILL_ORDER) != 0};
	ds_figures f;
	ds_err e;
	int rc = plan_fits(g, p, &e);
	if (rc == DS_OK && (flags & ~(unsigned)(DANSCHED_EVAL_Q1 |
					       DANSCHED_EVAL_SPILL_ORDER)))
		rc = ds_fail(&e, DS_EINPUT, "evaluate: unknown flags 0x%x",
			     flags);
	if (rc == DS_OK)
		rc = ds_replay(g->g, &p->p, &o, &f, &e);
	if (rc == DS_OK)
		figures_out(&f, fig);
	return out_err(rc, &e, err);
}

int dansched_evaluate(const dansched_graph *g, const dansched_plan *p,
		      int q1, dansched_figures *fig, dansched_error *err)
{
	return dansched_evaluate_flags(g, p, q1 ? DANSCHED_EVAL_Q1 : 0u, fig,
				       err);
}

int dansched_phase_bound(const dansched_graph *g, const dansched_plan *p,
			 int64_t *lb, dansched_error *err)
{
	ds_err e;
	if (!g || !lb)
		return missing(g ? "output" : "graph", err);
	int rc = p ? plan_fits(g, p, &e) : DS_OK;
	if (rc == DS_OK)
		rc = ds_phase_bound(g->g, p ? p->p.order : NULL,
				    p ? p->p.len : 0, lb, &e);
	return out_err(rc, &e, err);
}

int dansched_any_bound(const dansched_graph *g, const dansched_plan *p,
		       int64_t *lb_any, int64_t *lb_phase, int *exact,
		       dansched_error *err)
{
	ds_err e;
	ds_bounds b;
	if (!g || !lb_any)
		return missing(g ? "output" : "graph", err);
	int rc = p ? plan_fits(g, p, &e) : DS_OK;
	if (rc == DS_OK)
		rc = ds_bounds_compute(g->g, p ? p->p.order : NULL,
				       p ? p->p.len : 0, 0, &b, &e);
	if (rc)
		return out_err(rc, &e, err);
	*lb_any = b.any;
	if (lb_phase)
		*lb_phase = b.phase;
	if (exact)
		*exact = b.exact;
	return out_err(rc, &e, err);
}

/* The published points as series of one point each, after the caller's. */
static ds_series *all_series(const ds_heap *h, const dansched_series *s,
			     int ns, const ds_points *pub)
{
	ds_series *all = ds_alloc(h, (size_t)ns + (size_t)pub->n + 1,
				  sizeof *all);
	if (!all)
		return NULL;
	for (int k = 0; k < ns; k++)
		all[k] = (ds_series){s[k].label, s[k].extra_ddr, s[k].makespan,
				     s[k].npoints,
				     s[k].curve ? DS_SERIES_CURVE
						: DS_SERIES_POINTS};
	for (int64_t i = 0; i < pub->n; i++)
		all[ns + i] = (ds_series){pub->p[i].label,
					  &pub->p[i].extra_ddr,
					  &pub->p[i].makespan, 1,
					  DS_SERIES_PUBLISHED};
	return all;
}

int dansched_write_tradeoff(const dansched_allocator *alloc, const char *path,
			    const char *case_name,
			    const dansched_series *series, int nseries,
			    const char *published, int64_t lb, int *npublished,
			    dansched_error *err)
{
	if (!path || !case_name)
		return missing(path ? "case name" : "path", err);
	ds_heap h = heap_of(alloc);
	ds_points pub = {NULL, 0, 0};
	ds_err e;
	int rc = DS_OK;
	if (nseries < 0 || (nseries > 0 && !series) || lb < 0)
		rc = ds_fail(&e, DS_EINPUT, "%s: bad chart arguments", path);
	for (int k = 0; rc == DS_OK && k < nseries; k++)
		if (series[k].npoints < 0 || !series[k].label ||
		    (series[k].npoints > 0 &&
		     (!series[k].extra_ddr || !series[k].makespan)))
			rc = ds_fail(&e, DS_EINPUT, "%s: series %d is malformed",
				     path, k);
	if (rc == DS_OK && published)
		rc = ds_csv_points(&h, published, case_name, &pub, &e);
	if (npublished)
		*npublished = rc ? 0 : (int)pub.n;
	if (rc)
		return out_err(rc, &e, err);
	ds_series *all = all_series(&h, series, nseries, &pub);
	rc = all ? ds_chart_tradeoff(&h, path, case_name, all,
				     nseries + (int)pub.n, lb, &e)
		 : ds_fail(&e, DS_ENOMEM, "%s: out of memory", path);
	ds_free(&h, all);
	ds_points_free(&h, &pub);
	return out_err(rc, &e, err);
}

int dansched_plan_write(const dansched_graph *g, const dansched_plan *p,
			const char *dir, const char *case_name,
			dansched_error *err)
{
	ds_err e;
	if (!dir || !case_name)
		return missing(dir ? "case name" : "directory", err);
	int rc = plan_fits(g, p, &e);
	if (rc == DS_OK)
		rc = ds_plan_write(g->g, &p->p, dir, case_name, &e);
	return out_err(rc, &e, err);
}

int dansched_write_trace(const dansched_graph *g, const dansched_plan *p,
			 const char *path, dansched_error *err)
{
	ds_err e;
	if (!path)
		return missing("path", err);
	int rc = plan_fits(g, p, &e);
	if (rc == DS_OK)
		rc = ds_write_trace(g->g, &p->p, path, &e);
	return out_err(rc, &e, err);
}

int dansched_write_memmap(const dansched_graph *g, const dansched_plan *p,
			  const char *path, dansched_error *err)
{
	ds_err e;
	if (!path)
		return missing("path", err);
	int rc = plan_fits(g, p, &e);
	if (rc == DS_OK)
		rc = ds_write_memmap(g->g, &p->p, path, &e);
	return out_err(rc, &e, err);
}

void dansched_plan_destroy(dansched_plan *p)
{
	if (!p)
		return;
	ds_heap h = p->heap;
	ds_plan_free(&h, &p->p);
	ds_free(&h, p);
}

int32_t dansched_plan_length(const dansched_plan *p)
{
	return p ? p->p.len : 0;
}

const int32_t *dansched_plan_order(const dansched_plan *p)
{
	return p ? p->p.order : NULL;
}

int dansched_plan_has_offsets(const dansched_plan *p)
{
	return p && p->p.offset != NULL;
}

int64_t dansched_plan_offset(const dansched_graph *g, const dansched_plan *p,
			     int64_t bufid)
{
	if (plan_fits(g, p, NULL))
		return -1;
	int32_t b = ds_graph_find_buf(g->g, bufid);
	return b < 0 || !p->p.offset ? -1 : p->p.offset[b];
}

int32_t dansched_plan_spill_count(const dansched_plan *p)
{
	return p ? p->p.nspill : 0;
}

int dansched_plan_spill(const dansched_graph *g, const dansched_plan *p,
			int32_t k, int64_t *bufid, int64_t *new_offset)
{
	if (plan_fits(g, p, NULL) || k < 0 || k >= p->p.nspill || !bufid ||
	    !new_offset)
		return DS_EINPUT;
	*bufid = g->g->buf_id[p->p.spill[k].buf];
	*new_offset = p->p.spill[k].offset;
	return DS_OK;
}

/* ---- graphs and plans from memory ---- */

int dansched_graph_parse(const dansched_allocator *alloc, const char *source,
			 const char *text, size_t len,
			 const dansched_caps *caps, dansched_graph **out,
			 dansched_error *err)
{
	ds_err e;
	if (out)
		*out = NULL;
	if (!out || (!text && len))
		return out_err(ds_fail(&e, DS_EINPUT, "%s: no %s given",
				       source ? source : "graph",
				       out ? "text" : "output"),
			       &e, err);
	ds_heap h = heap_of(alloc);
	dansched_graph *g = graph_new(&h);
	if (!g)
		return no_memory(err);
	ds_caps c = caps_of(caps);
	int rc = ds_load_json_text(&g->heap, source, text ? text : "", len, &c,
				   &g->g, &e);
	return graph_done(g, &h, rc, &e, out, err);
}

int64_t dansched_graph_buffer_id(const dansched_graph *g, int32_t index)
{
	if (!g || index < 0 || index >= g->g->nbuf)
		return -1;
	return g->g->buf_id[index];
}

/* The arguments of dansched_plan_make that no plan could fix. */
static int make_args_check(const dansched_graph *g, const int64_t *order,
			   int64_t len, const dansched_place *offsets,
			   int64_t noffsets, const dansched_place *spills,
			   int64_t nspills, dansched_plan **out, ds_err *e)
{
	if (!g || !out)
		return ds_fail(e, DS_EINPUT, "plan: no %s given",
			       g ? "output" : "graph");
	if (len < 0 || noffsets < 0 || nspills < 0)
		return ds_fail(e, DS_EINPUT, "plan: negative count (order %lld, "
					     "offsets %lld, spills %lld)",
			       (long long)len, (long long)noffsets,
			       (long long)nspills);
	if ((!order && len) || (!offsets && noffsets) || (!spills && nspills))
		return ds_fail(e, DS_EINPUT, "plan: %s is NULL but has items",
			       !order && len	       ? "order"
			       : !offsets && noffsets ? "offsets"
						      : "spills");
	if (len > INT32_MAX)
		return ds_fail(e, DS_EINPUT, "plan: %lld nodes in the order, "
					     "at most %d",
			       (long long)len, INT32_MAX);
	return DS_OK;
}

/* offsets[] into p->offset (one per buffer, -1 where not given). */
static int make_offsets(const ds_graph *g, const dansched_place *offsets,
			int64_t noffsets, ds_plan *p, ds_err *e)
{
	p->offset = ds_alloc(g->heap, (size_t)g->nbuf + 1, sizeof *p->offset);
	if (!p->offset)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	for (int32_t b = 0; b < g->nbuf; b++)
		p->offset[b] = -1;
	for (int64_t i = 0; i < noffsets; i++) {
		int32_t b = ds_graph_find_buf(g, offsets[i].bufid);
		long long id = (long long)offsets[i].bufid;
		if (b < 0)
			return ds_fail(e, DS_EPLAN, "offsets[%lld]: offset for "
						    "unknown buffer %lld",
				       (long long)i, id);
		if (offsets[i].offset < 0)
			return ds_fail(e, DS_EPLAN, "offsets[%lld]: negative "
						    "offset %lld",
				       (long long)i,
				       (long long)offsets[i].offset);
		if (p->offset[b] >= 0)
			return ds_fail(e, DS_EPLAN, "offsets[%lld]: buffer %lld "
						    "given twice",
				       (long long)i, id);
		p->offset[b] = offsets[i].offset;
	}
	return DS_OK;
}

/* spills[] into p->spill. */
static int make_spills(const ds_graph *g, const dansched_place *spills,
		       int64_t nspills, ds_plan *p, ds_err *e)
{
	if (nspills >= (INT32_MAX - g->n) / 2)
		return ds_fail(e, DS_EPLAN, "spills: %lld spills, too many",
			       (long long)nspills);
	p->spill = ds_alloc(g->heap, (size_t)nspills + 1, sizeof *p->spill);
	if (!p->spill)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	for (int64_t k = 0; k < nspills; k++) {
		int32_t b = ds_graph_find_buf(g, spills[k].bufid);
		if (b < 0)
			return ds_fail(e, DS_EPLAN, "spills[%lld]: spill of "
						    "unknown buffer %lld",
				       (long long)k, (long long)spills[k].bufid);
		if (spills[k].offset < 0)
			return ds_fail(e, DS_EPLAN, "spills[%lld]: negative "
						    "offset %lld",
				       (long long)k,
				       (long long)spills[k].offset);
		p->spill[p->nspill++] = (ds_spill){b, spills[k].offset};
	}
	return DS_OK;
}

/* order[] into p->order. */
static int make_order(const ds_graph *g, const int64_t *order, int64_t len,
		      ds_plan *p, ds_err *e)
{
	p->order = ds_alloc(g->heap, (size_t)len + 1, sizeof *p->order);
	if (!p->order)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	for (int64_t i = 0; i < len; i++) {
		if (order[i] < 0 || order[i] >= INT32_MAX)
			return ds_fail(e, DS_EPLAN, "order[%lld]: node %lld "
						    "does not exist",
				       (long long)i, (long long)order[i]);
		p->order[p->len++] = (int32_t)order[i];
	}
	return DS_OK;
}

int dansched_plan_make(const dansched_graph *g, const int64_t *order,
		       int64_t len, const dansched_place *offsets,
		       int64_t noffsets, const dansched_place *spills,
		       int64_t nspills, dansched_plan **out,
		       dansched_error *err)
{
	ds_err e;
	if (out)
		*out = NULL;
	int rc = make_args_check(g, order, len, offsets, noffsets, spills,
				 nspills, out, &e);
	if (rc)
		return out_err(rc, &e, err);
	dansched_plan *p = plan_new(g);
	if (!p)
		return no_memory(err);
	rc = make_spills(g->g, spills, nspills, &p->p, &e);
	if (rc == DS_OK && offsets)
		rc = make_offsets(g->g, offsets, noffsets, &p->p, &e);
	if (rc == DS_OK)
		rc = make_order(g->g, order, len, &p->p, &e);
	if (rc) {
		dansched_plan_destroy(p);
		return out_err(rc, &e, err);
	}
	*out = p;
	return out_err(DS_OK, &e, err);
}
