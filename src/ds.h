/* ds.h: the library's internal interface.
 *
 * One graph representation (ds_graph: integer ids, CSR adjacency, a buffer
 * table), one plan representation (ds_plan: order, offsets, spills), one
 * replay (ds_replay) that checks a plan and measures it.  Every module that
 * allocates does so through a ds_heap; there is no global mutable state.
 *
 * Status codes double as the CLI's exit codes: 0 ok, 1 invalid plan,
 * 2 bad input or usage; DS_ENOMEM is reported as 2 by the CLI.
 */
#ifndef DS_H
#define DS_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DS_VERSION "0.2.0"

enum { DS_OK = 0, DS_EPLAN = 1, DS_EINPUT = 2, DS_ENOMEM = 3 };

/* Invariants that must hold whatever the input: a failure is a bug here. */
#define DS_ASSERT(x) assert(x)

/* ---- errors: one line of text, the status it goes with ---- */

typedef struct ds_err {
	int code;
	char msg[512];
} ds_err;

/* Records code and a printf-style message in e (which may be NULL) and
 * returns code, so callers write `return ds_fail(e, DS_EINPUT, ...)`.
 * The message is one line: control characters in it become '?'. */
int ds_fail(ds_err *e, int code, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;

/* ---- allocation: everything goes through one hook ---- */

/* fn(ud, ptr, size): size == 0 frees ptr and returns NULL; otherwise it acts
 * as realloc and returns NULL on failure, leaving ptr untouched. */
typedef struct ds_heap {
	void *(*fn)(void *ud, void *ptr, size_t size);
	void *ud;
} ds_heap;

const ds_heap *ds_heap_std(void);
void *ds_alloc(const ds_heap *h, size_t count, size_t size); /* zeroed */
void *ds_grow(const ds_heap *h, void *p, size_t count, size_t size);
void ds_free(const ds_heap *h, void *p);
char *ds_strdup(const ds_heap *h, const char *s);

/* A test heap whose allocation number fail_at (counting from 1) and all
 * later ones fail; fail_at == 0 never fails.  Counts calls and live blocks. */
typedef struct ds_faulty {
	long fail_at;
	long calls;
	long live;
} ds_faulty;
ds_heap ds_heap_faulty(ds_faulty *state);

/* A scratch arena for one pass run, in the manner of QBE's alloc/freeall:
 * every block comes from the heap hook (so the allocation-failure sweeps
 * keep their meaning), a failure is sticky (check `failed` once after
 * taking every array), and ds_arena_free releases everything in one call.
 * Blocks may be grown; freeing a single block early is allowed too. */
typedef struct ds_arena_blk ds_arena_blk;
typedef struct ds_arena {
	const ds_heap *heap;
	ds_arena_blk *head; /* the blocks, newest first */
	bool failed;	    /* an allocation failed: results are incomplete */
} ds_arena;

void ds_arena_init(ds_arena *a, const ds_heap *h);
/* count * size zeroed bytes, or NULL (and failed set) on failure or after
 * an earlier failure. */
void *ds_arena_alloc(ds_arena *a, size_t count, size_t size);
/* Resizes p (from this arena, or NULL) to count * size bytes; the new
 * part is not zeroed.  NULL (p untouched, failed set) on failure. */
void *ds_arena_grow(ds_arena *a, void *p, size_t count, size_t size);
/* Growable arena array: makes room for *cap >= need elements of elem
 * bytes in *p (from a, or NULL), doubling as ds_reserve does; false (p
 * untouched, failed set) on failure. */
bool ds_arena_reserve(ds_arena *a, void **p, int64_t *cap, int64_t need,
		      size_t elem);
/* Releases p (from this arena, or NULL) now instead of at ds_arena_free. */
void ds_arena_release(ds_arena *a, void *p);
/* Releases every block; the arena may be used again (failed cleared). */
void ds_arena_free(ds_arena *a);

/* Growable array helper: makes room for *cap >= need elements. */
int ds_reserve(const ds_heap *h, void **p, int64_t *cap, int64_t need,
	       size_t elem, ds_err *e);

/* A key and a node or buffer index: ds_hkey_cmp (for qsort) orders by key,
 * then index, so that sorting by a key is deterministic. */
typedef struct ds_hkey {
	uint64_t h;
	int32_t x;
} ds_hkey;
int ds_hkey_cmp(const void *a, const void *b);
/* Sorts k[0..n) into the order qsort with ds_hkey_cmp gives (a total
 * order: the same array), in O(n) passes of a radix sort; scratch from
 * h, or qsort itself when that fails or n is small. */
void ds_hkey_sort(const ds_heap *h, ds_hkey *k, size_t n);

/* ---- memories ---- */

enum ds_mem { DS_L1, DS_UB, DS_L0A, DS_L0B, DS_L0C, DS_NMEM };

extern const char *const ds_mem_names[DS_NMEM];

typedef struct ds_caps {
	int64_t cap[DS_NMEM];
} ds_caps;

void ds_caps_default(ds_caps *c);
/* Parses "L1=4096,UB=1024,..." over the current values. */
int ds_caps_parse(ds_caps *c, const char *spec, ds_err *e);
int ds_mem_from_name(const char *name); /* -1 when unknown */
/* L1 and UB count towards peak_vstay; L0* fall under the one-live rule. */
static inline bool ds_mem_stays(int m) { return m == DS_L1 || m == DS_UB; }

/* Largest Size, Cycles, offset or Id value accepted anywhere: exact in a
 * double (JSON) and leaves headroom so sums of many cannot overflow int64
 * without the checks in ds_add. */
#define DS_VALUE_MAX ((int64_t)1 << 53)
#define DS_NODES_MAX ((int64_t)1 << 28)

/* a + b into *r; false on overflow or a negative operand. */
static inline bool ds_add(int64_t a, int64_t b, int64_t *r)
{
	if (a < 0 || b < 0 || a > INT64_MAX - b)
		return false;
	*r = a + b;
	return true;
}

/* ---- the graph ---- */

enum ds_kind { DS_OP = 0, DS_ALLOC = 1, DS_FREE = 2 };

typedef struct ds_graph {
	const ds_heap *heap;
	char *source; /* file name, for messages */
	int32_t n;    /* nodes 0..n-1 */
	int32_t nbuf; /* buffers 0..nbuf-1, in increasing BufId */
	int64_t nedge;

	/* per node */
	uint8_t *kind;	  /* enum ds_kind */
	int32_t *op;	  /* index into ops[] (ALLOC and FREE included) */
	int32_t *pipe;	  /* index into pipes[], -1 for ALLOC/FREE */
	int64_t *cycles;  /* 0 for ALLOC/FREE */
	int32_t *buf;	  /* ALLOC/FREE: buffer index; operations: -1 */
	int32_t *use_off; /* [n+1] CSR: buffers an operation lists in Bufs */
	int32_t *use;
	/* Order constraints, CSR: the edges plus, for every buffer, ALLOC
	 * before each user and FREE after each user (residency needs them
	 * even where no edge says so); duplicates dropped.  Every pass that
	 * orders nodes follows these. */
	int32_t *pred_off; /* [n+1], by destination */
	int32_t *pred;
	int32_t *succ_off; /* [n+1], by source */
	int32_t *succ;
	/* The graph's own edges: the replay's timing and the critical path
	 * use these and nothing more, as SPEC.md does. */
	int32_t *epred_off; /* [n+1], by destination */
	int32_t *epred;
	int32_t *esrc, *edst; /* in input order (for writing back) */
	int32_t *topo;	      /* topological order of the constraints */

	/* per buffer */
	int64_t *buf_id;
	int64_t *buf_size;
	uint8_t *buf_mem;     /* enum ds_mem */
	int32_t *buf_alloc;   /* its ALLOC node */
	int32_t *buf_free;    /* its FREE node */
	uint8_t *buf_copyin;  /* a COPY_IN uses it: its data sits in DDR */
	int32_t *user_off;    /* [nbuf+1] CSR: operations using it, by Id */
	int32_t *user;

	/* names */
	int32_t nops, npipes;
	char **ops;
	char **pipes;

	ds_caps caps;
	int64_t critical_path; /* longest path in cycles */
} ds_graph;

/* Is pipe a (na, cycles la) busier than pipe b (nb, lb)?  More cycles,
 * on a tie the name first in strcmp order: the one rule for "the busiest
 * pipe" (CPE's bottleneck, the wave order's pipe), so that it never
 * depends on the order in which the input names its pipes. */
bool ds_pipe_busier(int64_t la, const char *na, int64_t lb, const char *nb);

/* ---- the spill model of SPEC.md ("Spills"), in one place ---- */

/* The fixed part of a spill transfer: `2 * size + 150` cycles each way. */
#define DS_SPILL_FIXED_CYCLES 150

/* Cycles of a SPILL_IN of buffer b, and of its SPILL_OUT (0 when a
 * COPY_IN uses b: its data still sits in DDR, nothing to write back). */
static inline int64_t ds_spill_in_cycles(const ds_graph *g, int32_t b)
{
	return 2 * g->buf_size[b] + DS_SPILL_FIXED_CYCLES;
}
static inline int64_t ds_spill_out_cycles(const ds_graph *g, int32_t b)
{
	return g->buf_copyin[b] ? 0 : ds_spill_in_cycles(g, b);
}
/* Extra DDR traffic of one spill of b: out and back in, or only back in
 * when a COPY_IN uses b. */
static inline int64_t ds_spill_traffic(const ds_graph *g, int32_t b)
{
	return g->buf_size[b] * (g->buf_copyin[b] ? 1 : 2);
}

void ds_graph_free(ds_graph *g);
/* Buffer index of a BufId, -1 when there is none (binary search). */
int32_t ds_graph_find_buf(const ds_graph *g, int64_t bufid);
/* Index of a pipe name, -1 when no node runs on it. */
int32_t ds_graph_find_pipe(const ds_graph *g, const char *name);

/* Building a graph: add nodes and edges in any order, then finish, which
 * validates everything and returns the graph or the first problem found.
 * Messages name the source and the offending node, edge or buffer. */
typedef struct ds_builder ds_builder;

ds_builder *ds_builder_new(const ds_heap *h, const char *source);
void ds_builder_free(ds_builder *b);
/* Points b (and the graph it will make) at h, a copy of its allocator that
 * outlives the builder (the public API keeps one in each graph). */
void ds_builder_rehome(ds_builder *b, const ds_heap *h);
/* is_free: false for ALLOC, true for FREE.  mem_name: L1, UB, L0A, ... */
int ds_builder_buffer(ds_builder *b, int64_t id, bool is_free, int64_t bufid,
		      int64_t size, const char *mem_name, ds_err *e);
int ds_builder_op(ds_builder *b, int64_t id, const char *op, const char *pipe,
		  int64_t cycles, const int64_t *bufs, int32_t nbufs, ds_err *e);
int ds_builder_edge(ds_builder *b, int64_t src, int64_t dst, ds_err *e);
/* On success *out owns a new graph; b is left empty either way. */
int ds_builder_finish(ds_builder *b, const ds_caps *caps, ds_graph **out,
		      ds_err *e);

/* ---- graph files ---- */

/* JSON (SPEC.md) or CSV (path ending in .csv: the nodes table; the edges
 * table sits beside it, see ds_csv_edges_path). */
int ds_load_graph(const ds_heap *h, const char *path, const ds_caps *caps,
		  ds_graph **out, ds_err *e);
int ds_load_json(const ds_heap *h, const char *path, const ds_caps *caps,
		 ds_graph **out, ds_err *e);
int ds_load_json_text(const ds_heap *h, const char *source, const char *text,
		      size_t len, const ds_caps *caps, ds_graph **out,
		      ds_err *e);
int ds_write_json(const ds_graph *g, const char *path, ds_err *e);
/* CSV when path ends in .csv (any case), JSON otherwise. */
int ds_write_graph(const ds_graph *g, const char *path, ds_err *e);
int ds_load_csv(const ds_heap *h, const char *nodes_path, const ds_caps *caps,
		ds_graph **out, ds_err *e);
int ds_write_csv(const ds_graph *g, const char *nodes_path, ds_err *e);
/* "x/foo_nodes.csv" -> "x/foo_edges.csv"; caller frees with ds_free. */
char *ds_csv_edges_path(const ds_heap *h, const char *nodes_path);
/* The case name of a graph file: base name without extension (and
 * without the _nodes suffix of a CSV nodes table). Caller frees. */
char *ds_case_name(const ds_heap *h, const char *path);
/* The same without allocating: the name is the n bytes at *start. */
size_t ds_case_span(const char *path, const char **start);

/* A point another solution reached on a graph, and a list of them. */
typedef struct ds_point {
	char *label; /* its source */
	int64_t extra_ddr, makespan;
} ds_point;
typedef struct ds_points {
	ds_point *p;
	int64_t n, cap;
} ds_points;
/* The rows of CSV file path (columns case, source, extra_ddr, makespan,
 * any order and letter case, others ignored) whose case is case_name,
 * except rows leaving a figure empty.  Free with ds_points_free. */
int ds_csv_points(const ds_heap *h, const char *path, const char *case_name,
		  ds_points *out, ds_err *e);
void ds_points_free(const ds_heap *h, ds_points *pts);

/* ---- files ---- */

/* Whole file into memory, NUL-terminated. */
int ds_read_file(const ds_heap *h, const char *path, char **text, size_t *len,
		 ds_err *e);
/* Writes via a temporary file in the same folder and rename(). */
int ds_write_file_atomic(const ds_heap *h, const char *path, const char *data,
			 size_t len, ds_err *e);
/* All or nothing for several files: every temporary is written before the
 * first rename, and on failure no temporary is left behind. */
int ds_write_files_atomic(const ds_heap *h, int count,
			  const char *const *paths, const char *const *data,
			  const size_t *lens, ds_err *e);
/* Byte offset of the first invalid UTF-8 sequence, or len when valid. */
size_t ds_utf8_check(const char *s, size_t len);

/* A growing text buffer for writers. */
typedef struct ds_text {
	const ds_heap *heap;
	char *s;
	int64_t len, cap;
	bool failed; /* an allocation failed: the text is incomplete */
} ds_text;
void ds_text_init(ds_text *t, const ds_heap *h);
void ds_text_printf(ds_text *t, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;
void ds_text_free(ds_text *t);

/* ---- plans ---- */

typedef struct ds_spill {
	int32_t buf;	/* buffer index */
	int64_t offset; /* NewOffset at its SPILL_IN */
} ds_spill;

/* A plan: the order of all n + 2*nspill nodes (SPILL_OUT of spill k is node
 * n+2k, its SPILL_IN n+2k+1), optionally an offset per buffer, and spills. */
typedef struct ds_plan {
	int32_t len;
	int32_t *order;
	int64_t *offset; /* [nbuf], NULL when no memory plan is given */
	int32_t nspill;
	ds_spill *spill;
} ds_plan;

void ds_plan_free(const ds_heap *h, ds_plan *p);
/* Reads the benchmark's result files; mem_path and spill_path may be NULL.
 * Syntax errors are DS_EINPUT, items naming unknown buffers DS_EPLAN. */
int ds_plan_read(const ds_graph *g, const char *sched_path,
		 const char *mem_path, const char *spill_path, ds_plan *out,
		 ds_err *e);
/* Renumbers p's spills in the order their SPILL_OUTs stand in p->order
 * (SPEC.md: spill line k's SPILL_OUT, node n+2k, before line k+1's), the
 * spill nodes in p->order renamed to match: a pure relabelling, every
 * figure stays.  Every plan the library returns goes through it once it is
 * finished (ds_run).  Requires each spill's SPILL_OUT once in p->order
 * (DS_EPLAN otherwise).  O(len + nspill). */
int ds_plan_sort_spills(const ds_graph *g, ds_plan *p, ds_err *e);
/* Drops p's dead reloads: a SPILL_IN whose buffer goes out again (its
 * next SPILL_OUT) before any operation uses it.  The spill that brought
 * it back then ends at the later spill's SPILL_IN, at that one's offset;
 * the dead SPILL_IN and the later SPILL_OUT go, and the spills are
 * renumbered in their old order (a sorted plan stays sorted).  The plan
 * keeps its order otherwise, so the replay accepts it whenever it
 * accepted p, with 2 x size (size when a COPY_IN backs the buffer) less
 * extra_ddr and one spill less per drop, the same peak_vstay and no
 * later start anywhere (fewer nodes and edges; a reuse edge from the
 * dead occupancy's end now comes from an earlier end).  *dropped: how
 * many.  Requires a plan ds_replay accepts (the pipeline's: its spill
 * nodes and buffers in range).  O(len + nbuf + nspill). */
int ds_plan_drop_dead_reloads(const ds_graph *g, ds_plan *p,
			      int32_t *dropped, ds_err *e);
/* Writes DIR/<case>_schedule.txt, _memory.txt (when offsets are set) and
 * _spill.txt, all or nothing. */
int ds_plan_write(const ds_graph *g, const ds_plan *p, const char *dir,
		  const char *case_name, ds_err *e);

/* ---- replay: the evaluator ---- */

typedef struct ds_figures {
	int64_t nodes; /* graph nodes, spill nodes not included */
	int64_t peak_vstay;
	int64_t extra_ddr;
	int64_t spills;
	int64_t makespan;
	int64_t lb_critical_path;
	int64_t lb_pipe_load;
	int64_t peak_mem[DS_NMEM]; /* peak occupied bytes per memory */
	bool has_memory;	   /* offsets were checked, reuse edges used */
} ds_figures;

/* Plan p's order without its spill nodes into out[0..n): the graph's
 * nodes in the order p runs them. */
void ds_plan_nodes(const ds_graph *g, const ds_plan *p, int32_t *out);

/* Keep-if-better, one home: with take, the candidate *cand (figures
 * *fcand) replaces *cur and *fcur, cur's plan freed; else cand's plan is
 * freed.  Either way cand is left empty (its plan owned or freed). */
void ds_plan_keep(const ds_heap *h, bool take, ds_plan *cur,
		  ds_figures *fcur, ds_plan *cand, const ds_figures *fcand);

/* A copy of plan p into *out (its own arrays), DS_ENOMEM when they
 * cannot be had (*out then empty). */
int ds_plan_copy(const ds_graph *g, const ds_plan *p, ds_plan *out,
		 ds_err *e);
/* Do plans a and b of g have the same order, offsets (or both none) and
 * spills?  The spills field by field: ds_spill has padding bytes. */
bool ds_plan_same(const ds_graph *g, const ds_plan *a, const ds_plan *b);

typedef struct ds_replay_opts {
	bool q1; /* at most one live buffer in each of L0A, L0B, L0C */
	/* optional outputs, each [plan->len] indexed by node id: */
	int64_t *start;
	int64_t *finish;
	/* spill lines in the order their SPILL_OUTs run (SPEC.md, the
	 * referee's default); false (and no opts) accepts any line order */
	bool spill_order;
} ds_replay_opts;

/* Checks every rule of SPEC.md and measures the plan.  DS_EPLAN with a
 * message naming the rule, the node and the buffer when a rule is broken. */
int ds_replay(const ds_graph *g, const ds_plan *p, const ds_replay_opts *o,
	      ds_figures *out, ds_err *e);

/* pos[v] = the line (from 0) of node v in order[0..len), each of
 * 0..total-1 at most once, -1 for the nodes absent; `code` with
 * "<what> line L: node V does not exist" (or "appears twice")
 * otherwise.  The one permutation check of the replay and of every pass
 * that takes an order. */
int ds_order_positions(const int32_t *order, int32_t len, int32_t total,
		       int32_t *pos, int code, const char *what, ds_err *e);
/* The precondition of every pass that takes an order of g's n nodes
 * (ds_place, ds_dlr): order[0..n) is a topological order of g's order
 * constraints (g->pred).  A caller's wrong order is bad input: DS_EINPUT
 * naming `who`, the node and its line.  O(N + E). */
int ds_order_check(const ds_graph *g, const int32_t *order, const char *who,
		   ds_err *e);

/* The spill edges of plan p in the reduced form the replay uses (a
 * buffer's spill pairs chained, each user tied to the nearest pair on each
 * side), given the schedule positions pos[]; with residency, also the
 * order-only edges (timed false) that keep each use inside its
 * occupancy.  edge() gets each; a nonzero return stops the walk. */
typedef int (*ds_edge_fn)(void *ud, int32_t from, int32_t to, bool timed);
int ds_spill_edges(const ds_graph *g, const ds_plan *p, const int32_t *pos,
		   bool residency, ds_edge_fn edge, void *ud, ds_err *e);

/* Lower bounds on the makespan of every plan of g (any order, offsets and
 * spills), see ds_bound.c. */
typedef struct ds_bounds {
	int64_t critical_path; /* longest path */
	int64_t pipe_load;     /* busiest pipe, the graph's operations only */
	/* max over operations v of the busiest pipe's cycles among v's
	 * ancestors plus the busiest pipe's among v and its descendants */
	int64_t phase;
	/* lb_any: max of the above and, per pipe, the preemptive one-machine
	 * bound with releases and tails (Jackson's rule) */
	int64_t any;
	/* true: the ancestor loads were exact; false: the graph was over the
	 * work budget and they were under-estimated from samples taken along
	 * order (every figure is still a valid bound) */
	bool exact;
} ds_bounds;

/* All of ds_bounds.  order[0..len) (NULL: g->topo) only places the
 * samples when the exact loads would take more than `work` word steps
 * (0: the default budget). */
int ds_bounds_compute(const ds_graph *g, const int32_t *order, int32_t len,
		      int64_t work, ds_bounds *out, ds_err *e);
/* ds_bounds.phase alone, for the default budget. */
int ds_phase_bound(const ds_graph *g, const int32_t *order, int32_t len,
		   int64_t *lb, ds_err *e);

/* Cycles and pipe of any node of a plan, spill nodes included. */
int64_t ds_node_cycles(const ds_graph *g, const ds_plan *p, int32_t v);
/* Human-readable name of node v ("17 (MOVE)", "4120 (SPILL_OUT of buffer
 * 3)") into buf. */
const char *ds_node_label(const ds_graph *g, const ds_plan *p, int32_t v,
			  char *buf, size_t size);

/* ---- views (ds_view.c) ---- */

/* Chrome Trace Event JSON (opens in ui.perfetto.dev): a track per pipe, a
 * complete event per operation and spill node (1 cycle = 1 us of trace
 * time), a counter of the bytes each memory holds.  Replays p first and
 * refuses it with the replay's error when it is invalid. */
int ds_write_trace(const ds_graph *g, const ds_plan *p, const char *path,
		   ds_err *e);
/* A self-contained SVG memory map: per memory, address over time, one
 * rectangle per occupancy.  Needs p->offset (DS_EINPUT without). */
int ds_write_memmap(const ds_graph *g, const ds_plan *p, const char *path,
		    ds_err *e);

/* ---- charts (ds_chart.c) ---- */

/* A series of points (extra DDR traffic, makespan) for a trade-off chart. */
typedef struct ds_series {
	const char *label;
	const int64_t *extra_ddr, *makespan;
	int32_t n;
	int kind; /* enum ds_series_kind */
} ds_series;
enum ds_series_kind {
	DS_SERIES_CURVE,    /* joined by a line, in the order given */
	DS_SERIES_POINTS,   /* markers only */
	DS_SERIES_PUBLISHED /* another solution's point: its own marker */
};

/* A self-contained SVG of makespan against extra DDR traffic: the series,
 * a dashed line at lb (0: none), axes with ticks and labels (log scale
 * where the figures span more than 20x), a legend.  title is the case. */
int ds_chart_tradeoff(const ds_heap *h, const char *path, const char *title,
		      const ds_series *s, int ns, int64_t lb, ds_err *e);

/* ---- generator (ds_gen.c) ---- */

enum { DS_GEN_MATMUL, DS_GEN_ATTENTION, DS_GEN_CONV, DS_GEN_RANDOM };

/* A synthetic graph of about `nodes` nodes in the conventions of the
 * bundled data: DS_GEN_MATMUL (tiled matmul, an accumulation chain over K
 * per output tile), DS_GEN_ATTENTION (flash attention: matmul, vector
 * softmax chain in UB, second matmul), DS_GEN_CONV (layers of convolution
 * tiles: many small L1 buffers with several consumers), DS_GEN_RANDOM (a
 * random layered DAG).  The same arguments give the same graph. */
int ds_generate(const ds_heap *h, int kind, int64_t nodes, uint64_t seed,
		const ds_caps *caps, ds_graph **out, ds_err *e);

#endif
