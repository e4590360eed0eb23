/* dansched.h: the public C API of libdansched.
 *
 * dansched plans the execution of one NPU operator graph (a DAG of pipe
 * operations and ALLOC/FREE buffer nodes) on one core of a Davinci-style
 * NPU: an order with low peak memory, offsets in the scratchpads with spills
 * to DDR where they do not fit, and an order in which the pipes overlap.
 * The problem, the file formats and the figures are those of SPEC.md.
 *
 * Conventions.
 *  - Every function that can fail returns a status (DANSCHED_OK == 0) and,
 *    when err is not NULL, fills it with one line naming the file and the
 *    offending item.  Nothing calls exit() or prints.
 *  - Every allocation goes through the dansched_allocator given when a
 *    graph is made (NULL: malloc/realloc/free).  Plans use their graph's.
 *    The one exception is the JSON parser's temporary tree (cJSON only has
 *    process-wide hooks, which a library must not set).
 *  - Objects are opaque; each *_destroy accepts NULL.  A plan must be
 *    destroyed before the graph it was made for.
 *  - A NULL where a call needs an object, a string, an array with items
 *    or an output is DANSCHED_BAD_INPUT ("no graph given", ...); the
 *    accessors return 0, -1 or NULL for a NULL object.  Never a crash.
 *  - No global mutable state: distinct graphs may be used from distinct
 *    threads at once.
 *  - Same input and options, same output, byte for byte.
 */
#ifndef DANSCHED_H
#define DANSCHED_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DANSCHED_VERSION_MAJOR 0
#define DANSCHED_VERSION_MINOR 2
#define DANSCHED_VERSION_PATCH 0
#define DANSCHED_VERSION_STRING "0.2.0"

/* The version of the library actually linked, "MAJOR.MINOR.PATCH". */
const char *dansched_version(void);

/* ---- status and errors ---- */

enum {
	DANSCHED_OK = 0,
	DANSCHED_INVALID_PLAN = 1, /* a plan breaks a rule of SPEC.md */
	DANSCHED_BAD_INPUT = 2,	   /* malformed file, graph or argument */
	DANSCHED_NO_MEMORY = 3	   /* the allocator said no */
};

typedef struct dansched_error {
	int status;
	char message[512];
} dansched_error;

/* fn(ud, ptr, size): size == 0 frees ptr (which may be NULL) and returns
 * NULL; otherwise it behaves like realloc(ptr, size) and returns NULL on
 * failure, leaving ptr untouched. */
typedef struct dansched_allocator {
	void *(*fn)(void *ud, void *ptr, size_t size);
	void *ud;
} dansched_allocator;

/* ---- memories ---- */

enum {
	DANSCHED_L1,
	DANSCHED_UB,
	DANSCHED_L0A,
	DANSCHED_L0B,
	DANSCHED_L0C,
	DANSCHED_NMEM
};

typedef struct dansched_caps {
	int64_t cap[DANSCHED_NMEM]; /* bytes, indexed by DANSCHED_L1... */
} dansched_caps;

/* L1 4096, UB 1024, L0A 256, L0B 256, L0C 512. */
void dansched_caps_default(dansched_caps *caps);
/* Overrides from "L1=8192,UB=2048" (any subset, any order). */
int dansched_caps_parse(dansched_caps *caps, const char *spec,
			dansched_error *err);
/* "L1", "UB", ... or NULL for an index out of range. */
const char *dansched_memory_name(int memory);

/* ---- graphs ---- */

typedef struct dansched_graph dansched_graph;
typedef struct dansched_builder dansched_builder;

/* A builder collects nodes and edges in any order; finish validates them
 * (Ids exactly 0..N-1, edges between existing nodes, no cycle, each buffer
 * one ALLOC and one FREE of the same Size and Type, Size within its
 * memory, operations naming existing buffers).  name is used in messages.
 * Returns NULL when out of memory. */
dansched_builder *dansched_builder_new(const dansched_allocator *alloc,
				       const char *name);
/* A buffer node: ALLOC (is_free 0) or FREE (is_free 1) of buffer bufid in
 * memory "L1", "UB", "L0A", "L0B" or "L0C". */
int dansched_builder_add_buffer(dansched_builder *b, int64_t id, int is_free,
				int64_t bufid, int64_t size,
				const char *memory, dansched_error *err);
/* An operation node running `cycles` on `pipe` and using `nbufs` buffers. */
int dansched_builder_add_op(dansched_builder *b, int64_t id, const char *op,
			    const char *pipe, int64_t cycles,
			    const int64_t *bufs, int32_t nbufs,
			    dansched_error *err);
/* dst may start only after src has finished. */
int dansched_builder_add_edge(dansched_builder *b, int64_t src, int64_t dst,
			      dansched_error *err);
/* Validates and makes the graph (caps NULL: the defaults).  The builder is
 * emptied either way and must still be destroyed. */
int dansched_builder_finish(dansched_builder *b, const dansched_caps *caps,
			    dansched_graph **out, dansched_error *err);
void dansched_builder_destroy(dansched_builder *b);

/* Loads a graph file: JSON as in SPEC.md, or CSV when path ends in .csv
 * (then path is the nodes table NAME_nodes.csv, with NAME_edges.csv
 * beside it). */
int dansched_graph_load(const dansched_allocator *alloc, const char *path,
			const dansched_caps *caps, dansched_graph **out,
			dansched_error *err);
/* Writes JSON, or CSV when path ends in .csv; atomically. */
int dansched_graph_save(const dansched_graph *g, const char *path,
			dansched_error *err);
/* A synthetic graph of about `nodes` nodes; kind is "matmul",
 * "attention", "conv" or "random"; the same for the same seed. */
int dansched_generate(const dansched_allocator *alloc, const char *kind,
		      int64_t nodes, uint64_t seed, const dansched_caps *caps,
		      dansched_graph **out, dansched_error *err);
void dansched_graph_destroy(dansched_graph *g);

int32_t dansched_graph_nodes(const dansched_graph *g);
int32_t dansched_graph_buffers(const dansched_graph *g);
/* The case name of a graph file ("data/Matmul_Case0.json" ->
 * "Matmul_Case0") into buf; DANSCHED_BAD_INPUT when it does not fit. */
int dansched_case_name(const char *path, char *buf, size_t size);

/* ---- figures ---- */

typedef struct dansched_figures {
	int64_t nodes;		   /* graph nodes, spill nodes not counted */
	int64_t peak_vstay;	   /* max live L1+UB bytes */
	int64_t extra_ddr;	   /* bytes moved by spills */
	int64_t spills;		   /* SPILL_OUT/SPILL_IN pairs */
	int64_t makespan;	   /* cycles of the replay */
	int64_t lb_critical_path;  /* longest path of the graph, cycles */
	int64_t lb_pipe_load;	   /* busiest pipe's cycles, spills included */
	int64_t peak_mem[DANSCHED_NMEM]; /* peak occupied bytes per memory */
} dansched_figures;

/* ---- planning ---- */

enum {
	DANSCHED_ORIGINAL,   /* node-Id order (repaired: Kahn by least ready
				Id where the Ids are not topological), first
				fit, furthest next use */
	DANSCHED_FREE_FIRST, /* Kahn FREE first / ALLOC last, best fit */
	DANSCHED_LPMF,	     /* PyTorch Inductor's lpmf, best fit */
	DANSCHED_CP_LIST,    /* HEFT-style critical path list, first fit */
	DANSCHED_VPUX,	     /* OpenVINO NPU per-executor queues */
	DANSCHED_DAN,	     /* MPAS -> DLR -> CPE */
	DANSCHED_NSCHEDULERS
};
enum { DANSCHED_MPAS = 1, DANSCHED_DLR = 2, DANSCHED_CPE = 3 };

/* "original", ..., "dan"; NULL out of range.  from_name: -1 if unknown. */
const char *dansched_scheduler_name(int scheduler);
int dansched_scheduler_from_name(const char *name);
/* "mpas", "dlr", "cpe"; from_name: -1 if unknown. */
const char *dansched_stage_name(int stage);
int dansched_stage_from_name(const char *name);

/* The traffic budgets (percent) `dansched tradeoff` plans at, rising:
 * along them dan's makespan never rises on graphs of up to 20,000 nodes
 * (see traffic_budget_pct).  i from 0 to DANSCHED_NTRADEOFF - 1; -1 out
 * of range. */
#define DANSCHED_NTRADEOFF 5
double dansched_tradeoff_budget(int i);

/* The largest effort and budget dansched_schedule accepts (a larger one
 * is DANSCHED_BAD_INPUT): the work grows with the effort, and a budget
 * of 10,000 times DLR's traffic or peak leaves nothing to limit. */
#define DANSCHED_EFFORT_MAX 1000
#define DANSCHED_BUDGET_MAX 1e6

typedef struct dansched_options {
	int scheduler;		   /* DANSCHED_DAN by default */
	int stage;		   /* dan: last stage to run (DANSCHED_CPE) */
	int64_t effort;		   /* dan: every stage's search budget
				      times this, 0 to DANSCHED_EFFORT_MAX
				      (0 or 1: the default); above 1, CPE
				      also runs from the second-best
				      backbone plan, and the default's
				      plan is made too: the shorter is
				      kept, never a longer one */
	double traffic_budget_pct; /* the final plan may have this % more
				      extra DDR traffic than DLR's, spent
				      where it shortens the makespan
				      (aged victims, retiming) (5); on
				      graphs of up to 20,000 nodes, CPE's
				      plan at budget 0 is kept where it
				      is shorter and within the budget,
				      and above 5 the plan
				      at the next lower budget of
				      dansched_tradeoff_budget (5, 25,
				      100, 400) where it is shorter */
	double peak_budget_pct;	   /* the plan may have this % more
				      peak_vstay than the DLR plan, where
				      that shortens it (5); above 5 the
				      plans at 5, 25 and 100 below it are
				      made too, one kept where it is
				      shorter or as long at a lower peak.
				      Exceptions: a baseline's plan where
				      only it meets the baselines' own
				      least makespan or traffic, and the
				      plan of a graph's separate parts,
				      each part within its own DLR
				      plan's */
	/* both budgets: finite, 0 to DANSCHED_BUDGET_MAX.  What a run would
	 * not use is DANSCHED_BAD_INPUT, as the CLI refuses it: with a
	 * baseline scheduler, a stage, effort or budget other than the
	 * default's (its plan is its whole run); with stage MPAS or DLR,
	 * budgets other than the default's (they are CPE's) */
	/* called after each stage ("mpas", "dlr", "cpe") with its CPU time
	 * and figures, and within CPE after the retiming ("retime", before
	 * "cpe": its own time, the figures of the plan it kept), or NULL */
	void (*progress)(void *ud, const char *stage, double seconds,
			 const dansched_figures *fig);
	void *progress_ud;
} dansched_options;

void dansched_options_default(dansched_options *o);

typedef struct dansched_plan dansched_plan;

/* Plans g.  On success *out is a plan that the evaluator has accepted
 * (an MPAS-only plan is an order without offsets) and fig (if not NULL)
 * holds its figures; its spills are numbered in the order they happen
 * (see dansched_plan_order).  A graph that cannot be placed at all (one
 * node needs more of a memory than it holds) gives DANSCHED_BAD_INPUT. */
int dansched_schedule(const dansched_graph *g, const dansched_options *o,
		      dansched_plan **out, dansched_figures *fig,
		      dansched_error *err);

/* Plans g with dan at each budget of dansched_tradeoff_budget: out[i] and
 * fig[i] (fig may be NULL) are the plan and figures dansched_schedule
 * makes at budget i with the rest of o, the work the budgets share (MPAS,
 * DLR, the plans the floors take from the lower budgets) done once:
 * `dansched tradeoff`'s points.  o as dansched_schedule's, but for the
 * dan scheduler to stage CPE, and with its traffic budget left at the
 * default (another is DANSCHED_BAD_INPUT); the progress callback hears
 * mpas and dlr once, then retime and cpe at each budget.  On failure
 * every out[i] is NULL. */
int dansched_schedule_tradeoff(const dansched_graph *g,
			       const dansched_options *o,
			       dansched_plan *out[DANSCHED_NTRADEOFF],
			       dansched_figures fig[DANSCHED_NTRADEOFF],
			       dansched_error *err);

/* A lower bound on the makespan of every plan of g (any order, offsets and
 * spills), at least its critical path and often well above max(critical
 * path, busiest pipe) when the graph's phases load different pipes: for
 * an operation v, the busiest pipe's cycles among v's ancestors plus the
 * busiest pipe's cycles among v and its descendants, maximised over every
 * operation.  p (may be NULL) matters only for a graph too large for the
 * exact figure (see dansched_any_bound): then operations sampled along
 * p's order are used (NULL: the graph's topological order).
 * dansched_any_bound gives this figure too, and one at least as large. */
int dansched_phase_bound(const dansched_graph *g, const dansched_plan *p,
			 int64_t *lb, dansched_error *err);

/* lb_any: the strongest lower bound dansched knows on the makespan of
 * every plan of g.  Each operation gets a release (the longer of its
 * longest path from the sources and the busiest pipe's cycles among its
 * ancestors) and a tail (the same for its descendants); per pipe, the
 * one-machine problem with these releases and tails, solved exactly with
 * preemption (Jackson's rule: run the released job with the largest
 * tail), bounds the makespan.  lb_any is the largest of those, the
 * critical path, the busiest pipe and lb_phase (also returned in
 * *lb_phase when not NULL: the figure of dansched_phase_bound for the
 * same p), so lb_any >= lb_phase always.  Exact ancestor loads cost about
 * (N + E) * ops / 32 word operations: above a work budget (about 5e8,
 * reached near 100,000 nodes) they are under-estimated from operations
 * sampled along p's order, and *exact (when not NULL) is 0 instead of 1;
 * the figures are then weaker but still valid bounds.  Deterministic. */
int dansched_any_bound(const dansched_graph *g, const dansched_plan *p,
		       int64_t *lb_any, int64_t *lb_phase, int *exact,
		       dansched_error *err);

/* Reads the benchmark's result files; memory and spill may be NULL. */
int dansched_plan_read(const dansched_graph *g, const char *schedule,
		       const char *memory, const char *spill,
		       dansched_plan **out, dansched_error *err);
/* Replays p on the machine model, checks every rule and measures it.
 * DANSCHED_INVALID_PLAN with the rule, node and buffer in the message when
 * a rule is broken; DANSCHED_BAD_INPUT when p was made for a graph of
 * another shape (as for every call below taking g and p).  Flags:
 *   DANSCHED_EVAL_Q1           also at most one live buffer in each L0
 *                              memory (the rule of the peak-memory problem)
 *   DANSCHED_EVAL_SPILL_ORDER  spill k's SPILL_OUT (node N+2k) must stand
 *                              before spill k+1's in the order, as SPEC.md
 *                              and strict checkers (the referee's default)
 *                              read the statement; without it the spills
 *                              may be numbered in any order.
 * Every plan dansched_schedule returns passes with either flag set. */
enum { DANSCHED_EVAL_Q1 = 1u, DANSCHED_EVAL_SPILL_ORDER = 2u };
int dansched_evaluate_flags(const dansched_graph *g, const dansched_plan *p,
			    unsigned flags, dansched_figures *fig,
			    dansched_error *err);
/* The same with q1 as above and any spill order (as in version 0.2.0,
 * before the order was checked): dansched_evaluate_flags(g, p,
 * q1 ? DANSCHED_EVAL_Q1 : 0, fig, err). */
int dansched_evaluate(const dansched_graph *g, const dansched_plan *p,
		      int q1, dansched_figures *fig, dansched_error *err);
/* Writes DIR/CASE_schedule.txt, and _memory.txt and _spill.txt when the
 * plan has offsets; all or nothing. */
int dansched_plan_write(const dansched_graph *g, const dansched_plan *p,
			const char *dir, const char *case_name,
			dansched_error *err);
/* The replay as a Chrome Trace Event file (Perfetto), and the memory
 * layout over time as an SVG (needs offsets). */
int dansched_write_trace(const dansched_graph *g, const dansched_plan *p,
			 const char *path, dansched_error *err);
int dansched_write_memmap(const dansched_graph *g, const dansched_plan *p,
			  const char *path, dansched_error *err);
void dansched_plan_destroy(dansched_plan *p);

/* ---- the trade-off chart ---- */

/* Points (extra DDR traffic, makespan) of one solution, for the chart. */
typedef struct dansched_series {
	const char *label;
	const int64_t *extra_ddr; /* [npoints] */
	const int64_t *makespan;  /* [npoints] */
	int32_t npoints;
	int curve; /* 1: joined by a line, in the order given; 0: markers */
} dansched_series;

/* Writes (atomically) a self-contained SVG chart of makespan against extra
 * DDR traffic titled case_name: the series; the points of the CSV table
 * `published` (NULL: none; columns case, source, extra_ddr and makespan,
 * any order, others ignored) whose case is case_name, one marker each
 * labelled by its source (a row leaving a figure empty is skipped); and
 * a dashed line at lb (0: none), e.g. lb_any.  *npublished (may be NULL)
 * gets the number of published points drawn.  alloc as for graphs. */
int dansched_write_tradeoff(const dansched_allocator *alloc, const char *path,
			    const char *case_name,
			    const dansched_series *series, int nseries,
			    const char *published, int64_t lb, int *npublished,
			    dansched_error *err);

/* The order: node Ids, graph nodes 0..N-1 and spill nodes (SPILL_OUT of
 * spill k is N+2k, its SPILL_IN N+2k+1; in a plan dansched_schedule made,
 * spill k's SPILL_OUT stands before spill k+1's).  Valid while p lives. */
int32_t dansched_plan_length(const dansched_plan *p);
const int32_t *dansched_plan_order(const dansched_plan *p);
/* 1 when the plan places buffers (it has offsets and spills), else 0. */
int dansched_plan_has_offsets(const dansched_plan *p);
/* Offset of buffer bufid at its ALLOC, or -1 (no offsets, or unknown). */
int64_t dansched_plan_offset(const dansched_graph *g, const dansched_plan *p,
			     int64_t bufid);
int32_t dansched_plan_spill_count(const dansched_plan *p);
/* Spill k: the buffer and its offset after SPILL_IN. */
int dansched_plan_spill(const dansched_graph *g, const dansched_plan *p,
			int32_t k, int64_t *bufid, int64_t *new_offset);

/* ---- graphs and plans from memory (for bindings such as python/) ---- */

/* Parses a graph from len bytes of JSON text in the format of SPEC.md,
 * with the checks and messages of dansched_graph_load; source names the
 * text in messages (NULL: "graph"). */
int dansched_graph_parse(const dansched_allocator *alloc, const char *source,
			 const char *text, size_t len,
			 const dansched_caps *caps, dansched_graph **out,
			 dansched_error *err);

/* The BufId of buffer number index, 0 <= index < dansched_graph_buffers(g),
 * in increasing BufId order (the order of a memory file); -1 when index is
 * out of range or g is NULL. */
int64_t dansched_graph_buffer_id(const dansched_graph *g, int32_t index);

/* One line of a memory or spill file: a buffer and an offset. */
typedef struct dansched_place {
	int64_t bufid;
	int64_t offset;
} dansched_place;

/* Makes a plan from arrays, as dansched_plan_read does from the three
 * files: order[0..len) the node Ids (spill nodes as in
 * dansched_plan_order), offsets[0..noffsets) the offset of each buffer at
 * its ALLOC (offsets NULL: an order without offsets, like a missing MEMORY
 * file), spills[0..nspills) each spill's buffer and offset after SPILL_IN.
 * A broken argument (NULL g or out, a negative count, a NULL array with a
 * nonzero count, more than INT32_MAX nodes) is DANSCHED_BAD_INPUT; an item
 * that cannot belong to a plan of g (a node Id out of range, an unknown
 * buffer, a negative offset, a buffer given two offsets) is
 * DANSCHED_INVALID_PLAN naming the array and index ("offsets[3]: ...").
 * The rules are not checked here: dansched_evaluate does that. */
int dansched_plan_make(const dansched_graph *g, const int64_t *order,
		       int64_t len, const dansched_place *offsets,
		       int64_t noffsets, const dansched_place *spills,
		       int64_t nspills, dansched_plan **out,
		       dansched_error *err);

#ifdef __cplusplus
}
#endif

#endif
