/* ds_view.c: two pictures of a plan, for people.
 *
 * ds_write_trace writes a Chrome Trace Event JSON file (opens as is in
 * ui.perfetto.dev and chrome://tracing): one track per pipe with one
 * complete event per operation and spill node, and one counter per memory
 * with the bytes it holds over time.  ds_write_memmap writes a
 * self-contained SVG: one panel per memory, address up, time right, one
 * rectangle per occupancy.
 *
 * Requires: a graph that passed ds_builder_finish and any plan; the memory
 * map also needs offsets.  Guarantees: nothing is written unless ds_replay
 * accepts the plan (its error is returned as is); the file is replaced
 * atomically; the same graph and plan give the same bytes.
 *
 * Times are the replay's: a node runs from its start to its finish cycle.
 * An occupancy (ALLOC or SPILL_IN up to FREE or SPILL_OUT) runs from the
 * start of the node that begins it to the finish of the node that ends it:
 * the address-reuse edges make the next tenant of those addresses start no
 * earlier than that finish, so rectangles of one memory never overlap.
 *
 * Cost: one replay, then O((N + S) log(N + S)) for the sorts, S spills. */
#include "ds_stage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One tenancy of a buffer in its memory. */
typedef struct occ {
	int32_t buf;
	int32_t from, to; /* ALLOC or SPILL_IN node; FREE or SPILL_OUT node */
	int64_t lo;	  /* offset, -1 without a memory plan */
	int64_t t0, t1;	  /* start of from, finish of to */
} occ;

/* What both writers need: the replay's times and the occupancies. */
typedef struct view {
	const ds_graph *g;
	const ds_plan *p;
	const ds_heap *h;
	ds_figures f;
	int64_t *start, *finish; /* per node of the plan */
	occ *occ;
	int32_t nocc;
	int32_t nmem_bufs[DS_NMEM]; /* buffers per memory */
	char *name;		    /* case name, for titles */
} view;

static void view_free(view *v)
{
	ds_free(v->h, v->start);
	ds_free(v->h, v->finish);
	ds_free(v->h, v->occ);
	ds_free(v->h, v->name);
}

static bool is_spill(const view *v, int32_t node)
{
	return node >= v->g->n;
}

static bool is_spill_in(const view *v, int32_t node)
{
	return node >= v->g->n && (node - v->g->n) % 2 == 1;
}

/* Buffer an ALLOC, FREE or spill node works on. */
static int32_t node_buf(const view *v, int32_t node)
{
	if (is_spill(v, node))
		return v->p->spill[(node - v->g->n) / 2].buf;
	return v->g->buf[node];
}

/* Plan node u opens an occupancy at position v->nocc (ALLOC, SPILL_IN) or
 * closes its buffer's open one, cur[b] (FREE, SPILL_OUT); other nodes
 * do neither. */
static void view_step(view *v, int32_t u, int32_t *cur, int32_t total)
{
	const ds_graph *g = v->g;
	const ds_plan *p = v->p;
	bool opens, closes;
	if (u < g->n) {
		opens = g->kind[u] == DS_ALLOC;
		closes = g->kind[u] == DS_FREE;
	} else {
		opens = is_spill_in(v, u);
		closes = !opens;
	}
	if (!opens && !closes)
		return;
	int32_t b = node_buf(v, u);
	if (opens) {
		DS_ASSERT(v->nocc < total);
		(void)total;
		occ *o = &v->occ[v->nocc];
		o->buf = b;
		o->from = u;
		o->to = -1;
		o->lo = !p->offset ? -1
			: u < g->n ? p->offset[b]
				   : p->spill[(u - g->n) / 2].offset;
		o->t0 = v->start[u];
		cur[b] = v->nocc++;
	} else {
		occ *o = &v->occ[cur[b]];
		DS_ASSERT(o->buf == b && o->to < 0);
		o->to = u;
		o->t1 = v->finish[u];
	}
}

/* The occupancies of a plan the replay accepted, in schedule order of
 * their first node: each buffer opens once at its ALLOC and once per
 * SPILL_IN, and every occupancy is closed by FREE at last. */
static int view_occupancies(view *v, ds_err *e)
{
	const ds_graph *g = v->g;
	const ds_plan *p = v->p;
	int32_t total = g->nbuf + p->nspill;
	v->occ = ds_alloc(v->h, (size_t)(total > 0 ? total : 1), sizeof *v->occ);
	int32_t *cur = ds_alloc(v->h, (size_t)(g->nbuf > 0 ? g->nbuf : 1),
				sizeof *cur);
	if (!v->occ || !cur) {
		ds_free(v->h, cur);
		return ds_fail(e, DS_ENOMEM, "out of memory");
	}
	for (int32_t i = 0; i < p->len; i++)
		view_step(v, p->order[i], cur, total);
	DS_ASSERT(v->nocc == total);
	ds_free(v->h, cur);
	for (int32_t b = 0; b < g->nbuf; b++)
		v->nmem_bufs[g->buf_mem[b]]++;
	return DS_OK;
}

/* Replays the plan (refusing it as the replay does) and lists the
 * occupancies in schedule order of their first node. */
static int view_init(view *v, const ds_graph *g, const ds_plan *p, ds_err *e)
{
	memset(v, 0, sizeof *v);
	v->g = g;
	v->p = p;
	v->h = g->heap;
	size_t len = p->len > 0 ? (size_t)p->len : 1;
	v->start = ds_alloc(v->h, len, sizeof *v->start);
	v->finish = ds_alloc(v->h, len, sizeof *v->finish);
	v->name = ds_case_name(v->h, g->source);
	if (!v->start || !v->finish || !v->name)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	ds_replay_opts o = {.q1 = false, .start = v->start,
			    .finish = v->finish};
	int rc = ds_replay(g, p, &o, &v->f, e);
	return rc ? rc : view_occupancies(v, e);
}

/* ---- escaping ---- */

static void put(ds_text *t, const char *s, size_t n)
{
	if (n)
		ds_text_printf(t, "%.*s", (int)n, s);
}

/* A JSON string literal.  Names come from graph files that the loaders
 * checked for UTF-8; should one not be, its upper bytes become U+FFFD so
 * the output stays valid JSON. */
static void json_str(ds_text *t, const char *s)
{
	size_t n = strlen(s), run = 0;
	bool utf8 = ds_utf8_check(s, n) == n;
	ds_text_printf(t, "\"");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *rep = NULL;
		char buf[8];
		if (c == '"')
			rep = "\\\"";
		else if (c == '\\')
			rep = "\\\\";
		else if (c < 0x20 || c == 0x7f) {
			snprintf(buf, sizeof buf, "\\u%04x", c);
			rep = buf;
		} else if (c >= 0x80 && !utf8) {
			rep = "\\ufffd";
		}
		if (!rep)
			continue;
		put(t, s + run, i - run);
		ds_text_printf(t, "%s", rep);
		run = i + 1;
	}
	put(t, s + run, n - run);
	ds_text_printf(t, "\"");
}

/* Text for XML content or a quoted attribute.  XML 1.0 has no way to
 * write most control characters at all: they become '?', as do the bytes
 * of a name that is not UTF-8. */
static void xml_str(ds_text *t, const char *s)
{
	size_t n = strlen(s), run = 0;
	bool utf8 = ds_utf8_check(s, n) == n;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *rep = NULL;
		switch (c) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&apos;"; break;
		default:
			if (c < 0x20 || c == 0x7f || (c >= 0x80 && !utf8))
				rep = "?";
		}
		if (!rep)
			continue;
		put(t, s + run, i - run);
		ds_text_printf(t, "%s", rep);
		run = i + 1;
	}
	put(t, s + run, n - run);
}

/* Writes the finished text, or reports why there is none. */
static int finish_text(const view *v, ds_text *t, const char *path,
		       ds_err *e)
{
	if (t->failed)
		return ds_fail(e, DS_ENOMEM, "%s: out of memory", path);
	return ds_write_file_atomic(v->h, path, t->s, (size_t)t->len, e);
}

/* ---- trace ---- */

/* Total orders for qsort, so equal keys cannot make the output vary. */
typedef struct xev {
	int64_t t0, t1;
	int32_t tid, node;
} xev;

static int cmp_xev(const void *a, const void *b)
{
	const xev *x = a, *y = b;
	if (x->t1 != y->t1)
		return x->t1 < y->t1 ? -1 : 1;
	if (x->t0 != y->t0)
		return x->t0 < y->t0 ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->node > y->node) - (x->node < y->node);
}

typedef struct cev {
	int64_t t, delta;
	int32_t mem, seq;
} cev;

static int cmp_cev(const void *a, const void *b)
{
	const cev *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->mem != y->mem)
		return x->mem < y->mem ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* "args" of one operation or spill node: its id, BufIds and memories. */
static void trace_args(ds_text *t, const view *v, int32_t u)
{
	const ds_graph *g = v->g;
	int32_t one, nb;
	const int32_t *bufs;
	if (is_spill(v, u)) {
		one = node_buf(v, u);
		bufs = &one;
		nb = 1;
	} else {
		bufs = g->use + g->use_off[u];
		nb = g->use_off[u + 1] - g->use_off[u];
	}
	ds_text_printf(t, "\"args\":{\"id\":%d,\"bufs\":[", u);
	for (int32_t k = 0; k < nb; k++)
		ds_text_printf(t, "%s%lld", k ? "," : "",
			       (long long)g->buf_id[bufs[k]]);
	ds_text_printf(t, "],\"mem\":[");
	for (int32_t k = 0; k < nb; k++)
		ds_text_printf(t, "%s\"%s\"", k ? "," : "",
			       ds_mem_names[g->buf_mem[bufs[k]]]);
	ds_text_printf(t, "]");
	if (is_spill(v, u)) {
		int32_t k = (u - g->n) / 2;
		ds_text_printf(t, ",\"spill\":%d,\"size\":%lld", k,
			       (long long)g->buf_size[bufs[0]]);
		if (is_spill_in(v, u) && v->p->offset)
			ds_text_printf(t, ",\"offset\":%lld",
				       (long long)v->p->spill[k].offset);
	}
	ds_text_printf(t, "}");
}

/* The trace's tracks: tid = pipe index + 1; spill nodes run on MTE3 and
 * MTE2 (SPEC.md), which get tracks of their own when no graph node runs
 * there, as in the replay. */
typedef struct tracks {
	int32_t np;	   /* tracks */
	int32_t pout, pin; /* the pipes of SPILL_OUT and SPILL_IN */
} tracks;

static tracks trace_tracks(const view *v)
{
	const ds_graph *g = v->g;
	tracks k = {g->npipes, ds_graph_find_pipe(g, "MTE3"),
		    ds_graph_find_pipe(g, "MTE2")};
	if (k.pout < 0 && v->p->nspill > 0)
		k.pout = k.np++;
	if (k.pin < 0 && v->p->nspill > 0)
		k.pin = k.np++;
	return k;
}

/* Operations and spill nodes in the order of the plan. */
static int64_t trace_nevents(const view *v)
{
	int64_t nx = 0;
	for (int32_t i = 0; i < v->p->len; i++) {
		int32_t u = v->p->order[i];
		if (u >= v->g->n || v->g->kind[u] == DS_OP)
			nx++;
	}
	return nx;
}

/* The complete events into x, sorted by finish time (so the last one ends
 * at the makespan); their number. */
static int64_t trace_events(const view *v, const tracks *k, xev *x)
{
	const ds_graph *g = v->g;
	int64_t nx = 0;
	for (int32_t i = 0; i < v->p->len; i++) {
		int32_t u = v->p->order[i];
		if (u < g->n && g->kind[u] != DS_OP)
			continue;
		int32_t pipe = u < g->n ? g->pipe[u]
			       : is_spill_in(v, u) ? k->pin : k->pout;
		xev ev = {v->start[u], v->finish[u], pipe + 1, u};
		x[nx++] = ev;
	}
	qsort(x, (size_t)nx, sizeof *x, cmp_xev);
	return nx;
}

/* The header: figures, process and track names. */
static void trace_header(const view *v, const tracks *k, ds_text *t)
{
	const ds_graph *g = v->g;
	ds_text_printf(t, "{\"displayTimeUnit\":\"ns\",\n\"otherData\":{"
		       "\"source\":");
	json_str(t, g->source);
	ds_text_printf(t,
		       ",\"time\":\"1 us of trace time = 1 cycle\","
		       "\"makespan\":%lld,\"peak_vstay\":%lld,"
		       "\"extra_ddr\":%lld,\"spills\":%lld},\n"
		       "\"traceEvents\":[\n",
		       (long long)v->f.makespan, (long long)v->f.peak_vstay,
		       (long long)v->f.extra_ddr, (long long)v->f.spills);
	ds_text_printf(t, "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\","
		       "\"args\":{\"name\":");
	json_str(t, v->name);
	ds_text_printf(t, "}}");
	for (int32_t q = 0; q < k->np; q++) {
		const char *name = q < g->npipes ? g->pipes[q]
				   : q == k->pout ? "MTE3" : "MTE2";
		ds_text_printf(t, ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":%d,"
			       "\"name\":\"thread_name\",\"args\":{\"name\":",
			       q + 1);
		json_str(t, name);
		ds_text_printf(t, "}},\n{\"ph\":\"M\",\"pid\":1,\"tid\":%d,"
			       "\"name\":\"thread_sort_index\","
			       "\"args\":{\"sort_index\":%d}}",
			       q + 1, q + 1);
	}
}

/* One complete event per operation and spill node. */
static void trace_complete(const view *v, const xev *x, int64_t nx,
			   ds_text *t)
{
	const ds_graph *g = v->g;
	for (int64_t i = 0; i < nx; i++) {
		int32_t u = x[i].node;
		bool sp = is_spill(v, u);
		ds_text_printf(t, ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%d,"
			       "\"ts\":%lld,\"dur\":%lld,\"name\":",
			       x[i].tid, (long long)x[i].t0,
			       (long long)(x[i].t1 - x[i].t0));
		if (sp)
			ds_text_printf(t, "\"%s\"", is_spill_in(v, u)
							   ? "SPILL_IN"
							   : "SPILL_OUT");
		else
			json_str(t, g->ops[g->op[u]]);
		if (sp)
			ds_text_printf(t, ",\"cat\":\"spill\","
				       "\"cname\":\"terrible\",");
		else
			ds_text_printf(t, ",\"cat\":\"op\",");
		trace_args(t, v, u);
		ds_text_printf(t, "}");
	}
}

/* Occupancy counters: bytes held per memory, sampled whenever an
 * occupancy begins or ends; simultaneous changes make one sample.  c has
 * room for two events per occupancy. */
static void trace_counters(const view *v, cev *c, ds_text *t)
{
	const ds_graph *g = v->g;
	int64_t nc = 0;
	for (int32_t i = 0; i < v->nocc; i++) {
		const occ *o = &v->occ[i];
		int m = g->buf_mem[o->buf];
		int64_t sz = g->buf_size[o->buf];
		cev a = {o->t0, sz, m, 2 * i}, b = {o->t1, -sz, m, 2 * i + 1};
		c[nc++] = a;
		c[nc++] = b;
	}
	qsort(c, (size_t)nc, sizeof *c, cmp_cev);
	int64_t held[DS_NMEM] = {0};
	bool at0[DS_NMEM] = {false};
	for (int64_t i = 0; i < nc && c[i].t == 0; i++)
		at0[c[i].mem] = true;
	/* every counter starts at 0 bytes at time 0 */
	for (int m = 0; m < DS_NMEM; m++)
		if (v->nmem_bufs[m] && !at0[m])
			ds_text_printf(t, ",\n{\"ph\":\"C\",\"pid\":1,\"ts\":0,"
				       "\"name\":\"%s\",\"args\":{\"bytes\":0}}",
				       ds_mem_names[m]);
	for (int64_t i = 0; i < nc; i++) {
		held[c[i].mem] += c[i].delta;
		if (i + 1 < nc && c[i + 1].t == c[i].t && c[i + 1].mem == c[i].mem)
			continue;
		DS_ASSERT(held[c[i].mem] >= 0);
		ds_text_printf(t, ",\n{\"ph\":\"C\",\"pid\":1,\"ts\":%lld,"
			       "\"name\":\"%s\",\"args\":{\"bytes\":%lld}}",
			       (long long)c[i].t, ds_mem_names[c[i].mem],
			       (long long)held[c[i].mem]);
	}
}

static int trace_text(const view *v, ds_text *t, ds_err *e)
{
	tracks k = trace_tracks(v);
	int64_t nx = trace_nevents(v);
	ds_arena a;
	ds_arena_init(&a, v->h);
	xev *x = ds_arena_alloc(&a, (size_t)(nx ? nx : 1), sizeof *x);
	cev *c = ds_arena_alloc(&a, (size_t)(v->nocc ? 2 * v->nocc : 1),
				sizeof *c);
	if (a.failed) {
		ds_arena_free(&a);
		return ds_fail(e, DS_ENOMEM, "out of memory");
	}
	nx = trace_events(v, &k, x);
	trace_header(v, &k, t);
	trace_complete(v, x, nx, t);
	trace_counters(v, c, t);
	ds_text_printf(t, "\n]}\n");
	ds_arena_free(&a);
	return DS_OK;
}

int ds_write_trace(const ds_graph *g, const ds_plan *p, const char *path,
		   ds_err *e)
{
	view v;
	ds_text t;
	ds_text_init(&t, g->heap);
	int rc = view_init(&v, g, p, e);
	if (rc == DS_OK)
		rc = trace_text(&v, &t, e);
	if (rc == DS_OK)
		rc = finish_text(&v, &t, path, e);
	ds_text_free(&t);
	view_free(&v);
	return rc;
}

/* ---- memory map ---- */

enum {
	SVG_W = 1200,
	MARGIN_L = 78, /* address labels */
	MARGIN_R = 24,
	HEAD_H = 58,   /* title and legend */
	PANEL_TOP = 22, /* panel title above its plot */
	PANEL_BOT = 30, /* cycle labels below it, then a gap */
	PLOT_MIN = 52,	/* plot height of the smallest memory ... */
	PLOT_VAR = 130, /* ... plus this much times sqrt(cap / largest) */
};

static int64_t isqrt(int64_t x)
{
	int64_t r = 0;
	while ((r + 1) * (r + 1) <= x)
		r++;
	return r;
}

/* Smallest 1, 2 or 5 times a power of ten that is at least x. */
static int64_t nice_step(int64_t x)
{
	int64_t s = 1;
	for (;;) {
		if (s >= x)
			return s;
		if (2 * s >= x)
			return 2 * s;
		if (5 * s >= x)
			return 5 * s;
		if (s > INT64_MAX / 100)
			return s;
		s *= 10;
	}
}

/* Fill colour of a buffer's ordinary occupancies: a few muted hues so that
 * neighbours tell apart; hashed from the BufId so it is stable. */
static const char *buf_fill(int64_t bufid)
{
	static const char *const pal[] = {
		"#4e79a7", "#59a14f", "#76b7b2", "#b07aa1",
		"#9c755f", "#edc948", "#86bcb6", "#8cd17d",
	};
	uint64_t z = (uint64_t)bufid + 0x9e3779b97f4a7c15u;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	z ^= z >> 31;
	return pal[z % (sizeof pal / sizeof pal[0])];
}

static void svg_occ(ds_text *t, const view *v, const occ *o, double top,
		    double ph, int64_t cap, double sx)
{
	const ds_graph *g = v->g;
	int64_t sz = g->buf_size[o->buf];
	double x = MARGIN_L + (double)o->t0 * sx;
	double w = (double)(o->t1 - o->t0) * sx;
	double y = top + ph - (double)(o->lo + sz) * ph / (double)cap;
	double h = (double)sz * ph / (double)cap;
	bool in = is_spill_in(v, o->from), out = is_spill(v, o->to);
	if (w < 0.6)
		w = 0.6; /* keep instants visible */
	/* an outline on a sliver would hide its colour: only evictions
	 * keep theirs */
	bool thin = !out && (w < 2.5 || h < 2.5);
	ds_text_printf(t, "<rect class=\"occ%s%s%s\" x=\"%.2f\" y=\"%.2f\" "
		       "width=\"%.2f\" height=\"%.2f\" fill=\"%s\">",
		       in ? " spilled" : "", out ? " evicted" : "",
		       thin ? " thin" : "", x, y, w, h,
		       in ? "url(#reload)" : buf_fill(g->buf_id[o->buf]));
	char a[96], b[96];
	ds_text_printf(t, "<title>buffer %lld (%s, %lld B) at [%lld, %lld), "
		       "cycles %lld-%lld, nodes ",
		       (long long)g->buf_id[o->buf],
		       ds_mem_names[g->buf_mem[o->buf]], (long long)sz,
		       (long long)o->lo, (long long)(o->lo + sz),
		       (long long)o->t0, (long long)o->t1);
	xml_str(t, ds_node_label(g, v->p, o->from, a, sizeof a));
	ds_text_printf(t, " to ");
	xml_str(t, ds_node_label(g, v->p, o->to, b, sizeof b));
	ds_text_printf(t, "</title></rect>\n");
}

/* One memory's panel with its plot area starting at y = top. */
static void svg_panel(ds_text *t, const view *v, int m, double top,
		      double ph, double sx, int64_t tstep)
{
	const ds_graph *g = v->g;
	int64_t cap = g->caps.cap[m];
	double pw = SVG_W - MARGIN_L - MARGIN_R;
	int32_t nin = 0, nocc = 0;
	for (int32_t i = 0; i < v->nocc; i++)
		if (g->buf_mem[v->occ[i].buf] == m) {
			nocc++;
			nin += is_spill_in(v, v->occ[i].from);
		}
	ds_text_printf(t, "<g class=\"panel\" id=\"mem-%s\">\n",
		       ds_mem_names[m]);
	ds_text_printf(t, "<text class=\"ptitle\" x=\"%d\" y=\"%.2f\">%s  "
		       "<tspan class=\"sub\">capacity %lld B, peak %lld B, "
		       "%d buffers, %d occupancies, %d re-loaded by SPILL_IN"
		       "</tspan></text>\n",
		       MARGIN_L, top - 7, ds_mem_names[m], (long long)cap,
		       (long long)v->f.peak_mem[m], v->nmem_bufs[m], nocc, nin);
	ds_text_printf(t, "<rect class=\"frame\" x=\"%d\" y=\"%.2f\" "
		       "width=\"%.2f\" height=\"%.2f\"/>\n",
		       MARGIN_L, top, pw, ph);
	/* cycle grid and labels */
	for (int64_t c = 0; c <= v->f.makespan; c += tstep) {
		double x = MARGIN_L + (double)c * sx;
		ds_text_printf(t, "<line class=\"grid\" x1=\"%.2f\" y1=\"%.2f\" "
			       "x2=\"%.2f\" y2=\"%.2f\"/>"
			       "<text class=\"tick\" x=\"%.2f\" y=\"%.2f\" "
			       "text-anchor=\"middle\">%lld</text>\n",
			       x, top, x, top + ph + 4, x, top + ph + 15,
			       (long long)c);
		if (c > INT64_MAX - tstep)
			break;
	}
	/* address ticks: a power of two near a quarter of the capacity */
	int64_t astep = 1;
	while (astep * 2 <= cap / 4)
		astep *= 2;
	for (int64_t a = 0;; a += astep) {
		if (a > cap || (a < cap && cap - a < astep / 2))
			a = cap; /* always label the capacity, alone */
		double y = top + ph - (double)a * ph / (double)cap;
		ds_text_printf(t, "<line class=\"grid\" x1=\"%d\" y1=\"%.2f\" "
			       "x2=\"%.2f\" y2=\"%.2f\"/>"
			       "<text class=\"tick\" x=\"%d\" y=\"%.2f\" "
			       "text-anchor=\"end\">%lld</text>\n",
			       MARGIN_L - 4, y, MARGIN_L + pw, y,
			       MARGIN_L - 6, y + 3.5, (long long)a);
		if (a == cap)
			break;
	}
	for (int32_t i = 0; i < v->nocc; i++)
		if (g->buf_mem[v->occ[i].buf] == m)
			svg_occ(t, v, &v->occ[i], top, ph, cap, sx);
	ds_text_printf(t, "</g>\n");
}

/* The plot height of each memory's panel (0: the plan uses none of its
 * buffers, no panel) into ph; returns the height of the picture. */
static double memmap_heights(const view *v, double *ph)
{
	const ds_graph *g = v->g;
	int64_t maxcap = 1;
	double height = HEAD_H;
	for (int m = 0; m < DS_NMEM; m++)
		if (v->nmem_bufs[m] && g->caps.cap[m] > maxcap)
			maxcap = g->caps.cap[m];
	for (int m = 0; m < DS_NMEM; m++) {
		if (!v->nmem_bufs[m])
			continue;
		/* taller for larger memories, but a small one stays legible */
		int64_t r = isqrt(g->caps.cap[m] * 10000 / maxcap); /* 0..100 */
		ph[m] = PLOT_MIN + (double)(PLOT_VAR * r) / 100.0;
		height += PANEL_TOP + ph[m] + PANEL_BOT;
	}
	return height;
}

/* The svg element and the picture's title and description. */
static void memmap_open(ds_text *t, const view *v, double height)
{
	ds_text_printf(t, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		       "<svg xmlns=\"http://www.w3.org/2000/svg\" "
		       "width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" "
		       "font-family=\"DejaVu Sans, Arial, sans-serif\" "
		       "font-size=\"11\">\n",
		       SVG_W, height, SVG_W, height);
	ds_text_printf(t, "<title>memory map of ");
	xml_str(t, v->name);
	ds_text_printf(t, "</title>\n<desc>One panel per memory: address "
		       "upwards from 0 to the capacity, time to the right in "
		       "cycles of the replay. Each rectangle is one occupancy "
		       "of a buffer, from the start of its ALLOC or SPILL_IN "
		       "to the finish of its FREE or SPILL_OUT.</desc>\n");
}

/* The style sheet, the hatching of re-loaded occupancies and the white
 * background. */
static void memmap_style(ds_text *t)
{
	ds_text_printf(t,
		       "<style>\n"
		       ".frame{fill:#f7f7f7;stroke:#888;stroke-width:0.6}\n"
		       ".grid{stroke:#ddd;stroke-width:0.5}\n"
		       ".tick{fill:#444;font-size:10px}\n"
		       ".ptitle{font-size:12px;font-weight:bold;fill:#222}\n"
		       ".sub{font-weight:normal;fill:#555}\n"
		       ".head{font-size:14px;font-weight:bold;fill:#111}\n"
		       ".occ{stroke:#2b2b2b;stroke-width:0.3;"
		       "stroke-opacity:0.7}\n"
		       ".occ.thin{stroke:none}\n"
		       ".occ.evicted{stroke:#c1121f;stroke-width:0.9;"
		       "stroke-opacity:1}\n"
		       "</style>\n"
		       "<defs><pattern id=\"reload\" width=\"5\" height=\"5\" "
		       "patternUnits=\"userSpaceOnUse\" "
		       "patternTransform=\"rotate(45)\">"
		       "<rect width=\"5\" height=\"5\" fill=\"#f4a261\"/>"
		       "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"5\" "
		       "stroke=\"#c8553d\" stroke-width=\"2.5\"/>"
		       "</pattern></defs>\n"
		       "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n");
}

/* The headline: the case and the plan's figures. */
static void memmap_headline(ds_text *t, const view *v)
{
	ds_text_printf(t, "<text class=\"head\" x=\"%d\" y=\"20\">", MARGIN_L);
	xml_str(t, v->name);
	ds_text_printf(t, ": memory map, makespan %lld cycles, "
		       "peak_vstay %lld B, %lld spills, extra DDR %lld B"
		       "</text>\n",
		       (long long)v->f.makespan, (long long)v->f.peak_vstay,
		       (long long)v->f.spills, (long long)v->f.extra_ddr);
}

/* The legend: the three kinds of rectangle and the axes. */
static void memmap_legend(ds_text *t)
{
	ds_text_printf(t,
		       "<g class=\"legend\">"
		       "<rect x=\"%d\" y=\"31\" width=\"18\" height=\"10\" "
		       "fill=\"#4e79a7\" stroke=\"#2b2b2b\" stroke-width=\"0.3\"/>"
		       "<text x=\"%d\" y=\"40\">buffer from ALLOC (colour per "
		       "buffer)</text>"
		       "<rect x=\"%d\" y=\"31\" width=\"18\" height=\"10\" "
		       "fill=\"url(#reload)\"/>"
		       "<text x=\"%d\" y=\"40\">re-loaded by SPILL_IN</text>"
		       "<rect x=\"%d\" y=\"31\" width=\"18\" height=\"10\" "
		       "fill=\"#f7f7f7\" stroke=\"#c1121f\" stroke-width=\"1.2\"/>"
		       "<text x=\"%d\" y=\"40\">red outline: ends in SPILL_OUT"
		       "</text>"
		       "<text x=\"%d\" y=\"40\" text-anchor=\"end\" "
		       "fill=\"#555\">address (B) up, time (cycles) right"
		       "</text></g>\n",
		       MARGIN_L, MARGIN_L + 24, MARGIN_L + 260, MARGIN_L + 284,
		       MARGIN_L + 440, MARGIN_L + 464, SVG_W - MARGIN_R);
}

/* The panels, one under the other below the head, with plot heights ph;
 * time runs over the plan's makespan, with about ten labelled cycles. */
static void memmap_panels(ds_text *t, const view *v, const double *ph)
{
	int64_t span = v->f.makespan > 0 ? v->f.makespan : 1;
	double pw = SVG_W - MARGIN_L - MARGIN_R;
	double sx = pw / (double)span;
	int64_t tstep = nice_step((span + 9) / 10);
	double y = HEAD_H;
	for (int m = 0; m < DS_NMEM; m++) {
		if (!v->nmem_bufs[m])
			continue;
		svg_panel(t, v, m, y + PANEL_TOP, ph[m], sx, tstep);
		y += PANEL_TOP + ph[m] + PANEL_BOT;
	}
}

/* The memory map as SVG text: the head (title, style, headline, legend),
 * then a panel per memory the plan uses. */
static int memmap_text(const view *v, ds_text *t)
{
	double ph[DS_NMEM] = {0};
	double height = memmap_heights(v, ph);
	memmap_open(t, v, height);
	memmap_style(t);
	memmap_headline(t, v);
	memmap_legend(t);
	memmap_panels(t, v, ph);
	ds_text_printf(t, "</svg>\n");
	return DS_OK;
}

int ds_write_memmap(const ds_graph *g, const ds_plan *p, const char *path,
		    ds_err *e)
{
	if (!p->offset)
		return ds_fail(e, DS_EINPUT,
			       "%s: a memory map needs the offsets of the "
			       "plan (give its MEMORY and SPILL files)",
			       path);
	view v;
	ds_text t;
	ds_text_init(&t, g->heap);
	int rc = view_init(&v, g, p, e);
	if (rc == DS_OK)
		rc = memmap_text(&v, &t);
	if (rc == DS_OK)
		rc = finish_text(&v, &t, path, e);
	ds_text_free(&t);
	view_free(&v);
	return rc;
}
