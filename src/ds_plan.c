/* ds_plan.c: the benchmark's three result files, and two rewrites of a
 * plan's spills: numbered in the order they happen, and dead reloads
 * dropped.
 *
 * Requires: a valid graph.  Reading guarantees a plan whose numbers are in
 * range (node Ids >= 0, known buffers, offsets >= 0 or -1 for "not given");
 * it does not check the rules, ds_replay does.  Writing is all or nothing.
 * The rewrites: see ds.h. */
#include "ds.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

void ds_plan_free(const ds_heap *h, ds_plan *p)
{
	ds_free(h, p->order);
	ds_free(h, p->offset);
	ds_free(h, p->spill);
	memset(p, 0, sizeof *p);
}

void ds_plan_nodes(const ds_graph *g, const ds_plan *p, int32_t *out)
{
	int32_t len = 0;
	for (int32_t i = 0; i < p->len; i++)
		if (p->order[i] < g->n)
			out[len++] = p->order[i];
}

void ds_plan_keep(const ds_heap *h, bool take, ds_plan *cur,
		  ds_figures *fcur, ds_plan *cand, const ds_figures *fcand)
{
	if (take) {
		ds_plan_free(h, cur);
		*cur = *cand;
		*fcur = *fcand;
		memset(cand, 0, sizeof *cand);
	} else {
		ds_plan_free(h, cand);
	}
}

int ds_plan_copy(const ds_graph *g, const ds_plan *p, ds_plan *out,
		 ds_err *e)
{
	const ds_heap *h = g->heap;
	memset(out, 0, sizeof *out);
	out->len = p->len;
	out->nspill = p->nspill;
	out->order = ds_alloc(h, (size_t)p->len, sizeof *out->order);
	out->offset = p->offset ? ds_alloc(h, (size_t)g->nbuf + 1,
					   sizeof *out->offset)
				: NULL;
	out->spill = p->nspill ? ds_alloc(h, (size_t)p->nspill,
					  sizeof *out->spill)
			       : NULL;
	if (!out->order || (p->offset && !out->offset) ||
	    (p->nspill && !out->spill)) {
		ds_plan_free(h, out);
		return ds_fail(e, DS_ENOMEM, "out of memory");
	}
	memcpy(out->order, p->order, (size_t)p->len * sizeof *p->order);
	if (p->offset)
		memcpy(out->offset, p->offset,
		       (size_t)g->nbuf * sizeof *p->offset);
	if (p->nspill)
		memcpy(out->spill, p->spill,
		       (size_t)p->nspill * sizeof *p->spill);
	return DS_OK;
}

bool ds_plan_same(const ds_graph *g, const ds_plan *a, const ds_plan *b)
{
	if (a->len != b->len || a->nspill != b->nspill ||
	    memcmp(a->order, b->order, (size_t)a->len * sizeof *a->order))
		return false;
	if (!a->offset || !b->offset) {
		if (a->offset != b->offset)
			return false;
	} else if (memcmp(a->offset, b->offset,
			  (size_t)g->nbuf * sizeof *a->offset)) {
		return false;
	}
	for (int32_t k = 0; k < a->nspill; k++)
		if (a->spill[k].buf != b->spill[k].buf ||
		    a->spill[k].offset != b->spill[k].offset)
			return false;
	return true;
}

/* Reads a decimal integer (optional sign) at *s, skipping blanks first;
 * false when there is none or it does not fit DS_VALUE_MAX. */
static bool read_int(const char **s, int64_t *out)
{
	const char *p = *s;
	while (*p == ' ' || *p == '\t')
		p++;
	bool neg = false;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (!isdigit((unsigned char)*p))
		return false;
	int64_t v = 0;
	for (; isdigit((unsigned char)*p); p++) {
		v = v * 10 + (*p - '0');
		if (v > DS_VALUE_MAX)
			return false;
	}
	while (*p == ' ' || *p == '\t')
		p++;
	*s = p;
	*out = neg ? -v : v;
	return true;
}

/* Calls fn for each non-blank line of a text file: either one integer or a
 * pair "a:b".  Syntax errors are DS_EINPUT naming file and line. */
typedef int (*line_fn)(void *ctx, int64_t a, int64_t b, const char *path,
		       int line, ds_err *e);

static int read_lines(const ds_heap *h, const char *path, bool pairs,
		      line_fn fn, void *ctx, ds_err *e)
{
	char *text;
	size_t len;
	int rc = ds_read_file(h, path, &text, &len, e);
	if (rc)
		return rc;
	if (ds_utf8_check(text, len) != len || strlen(text) != len) {
		ds_free(h, text);
		return ds_fail(e, DS_EINPUT, "%s: not a text file", path);
	}
	int line = 0;
	for (char *p = text; *p && rc == DS_OK;) {
		char *eol = strchr(p, '\n');
		if (eol)
			*eol = 0;
		line++;
		size_t l = strlen(p);
		while (l && (p[l - 1] == '\r' || p[l - 1] == ' ' ||
			     p[l - 1] == '\t'))
			p[--l] = 0;
		const char *q = p;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q) {
			int64_t a, b = 0;
			bool ok = read_int(&q, &a);
			if (ok && pairs)
				ok = *q++ == ':' && read_int(&q, &b);
			if (!ok || *q)
				rc = ds_fail(e, DS_EINPUT,
					     "%s:%d: expected %s, got '%.40s'",
					     path, line,
					     pairs ? "BufId:Offset"
						   : "a node Id",
					     p);
			else
				rc = fn(ctx, a, b, path, line, e);
		}
		if (!eol)
			break;
		p = eol + 1;
	}
	ds_free(h, text);
	return rc;
}

typedef struct reader {
	const ds_graph *g;
	ds_plan *p;
	int64_t cap;
} reader;

static int on_spill(void *ctx, int64_t bufid, int64_t off, const char *path,
		    int line, ds_err *e)
{
	reader *r = ctx;
	int32_t b = ds_graph_find_buf(r->g, bufid);
	if (b < 0)
		return ds_fail(e, DS_EPLAN, "%s:%d: spill of unknown buffer %lld",
			       path, line, (long long)bufid);
	if (off < 0)
		return ds_fail(e, DS_EPLAN, "%s:%d: negative offset %lld",
			       path, line, (long long)off);
	if (r->p->nspill >= (INT32_MAX - r->g->n) / 2)
		return ds_fail(e, DS_EPLAN, "%s:%d: too many spills", path,
			       line);
	if (ds_reserve(r->g->heap, (void **)&r->p->spill, &r->cap,
		       r->p->nspill + 1, sizeof(ds_spill), e))
		return DS_ENOMEM;
	r->p->spill[r->p->nspill++] = (ds_spill){b, off};
	return DS_OK;
}

static int on_offset(void *ctx, int64_t bufid, int64_t off, const char *path,
		     int line, ds_err *e)
{
	reader *r = ctx;
	int32_t b = ds_graph_find_buf(r->g, bufid);
	if (b < 0)
		return ds_fail(e, DS_EPLAN,
			       "%s:%d: offset for unknown buffer %lld", path,
			       line, (long long)bufid);
	if (off < 0)
		return ds_fail(e, DS_EPLAN, "%s:%d: negative offset %lld",
			       path, line, (long long)off);
	if (r->p->offset[b] >= 0)
		return ds_fail(e, DS_EPLAN, "%s:%d: buffer %lld given twice",
			       path, line, (long long)bufid);
	r->p->offset[b] = off;
	return DS_OK;
}

static int on_node(void *ctx, int64_t v, int64_t unused, const char *path,
		   int line, ds_err *e)
{
	(void)unused;
	reader *r = ctx;
	if (v < 0 || v >= INT32_MAX)
		return ds_fail(e, DS_EPLAN, "%s:%d: node %lld does not exist",
			       path, line, (long long)v);
	if (ds_reserve(r->g->heap, (void **)&r->p->order, &r->cap,
		       (int64_t)r->p->len + 1, sizeof(int32_t), e))
		return DS_ENOMEM;
	r->p->order[r->p->len++] = (int32_t)v;
	return DS_OK;
}

int ds_plan_read(const ds_graph *g, const char *sched_path,
		 const char *mem_path, const char *spill_path, ds_plan *out,
		 ds_err *e)
{
	const ds_heap *h = g->heap;
	memset(out, 0, sizeof *out);
	reader r = {g, out, 0};
	int rc = DS_OK;
	if (spill_path)
		rc = read_lines(h, spill_path, true, on_spill, &r, e);
	if (rc == DS_OK && mem_path) {
		out->offset = ds_alloc(h, (size_t)g->nbuf, sizeof *out->offset);
		if (!out->offset)
			rc = ds_fail(e, DS_ENOMEM, "out of memory");
		for (int32_t b = 0; rc == DS_OK && b < g->nbuf; b++)
			out->offset[b] = -1;
		if (rc == DS_OK)
			rc = read_lines(h, mem_path, true, on_offset, &r, e);
	}
	r.cap = 0;
	if (rc == DS_OK)
		rc = read_lines(h, sched_path, false, on_node, &r, e);
	if (rc)
		ds_plan_free(h, out);
	return rc;
}

int ds_plan_sort_spills(const ds_graph *g, ds_plan *p, ds_err *e)
{
	const int32_t n = g->n, S = p->nspill;
	if (S == 0)
		return DS_OK;
	int32_t *rank = ds_alloc(g->heap, (size_t)S, sizeof *rank);
	ds_spill *sp = ds_alloc(g->heap, (size_t)S, sizeof *sp);
	if (!rank || !sp) {
		ds_free(g->heap, rank);
		ds_free(g->heap, sp);
		return ds_fail(e, DS_ENOMEM, "out of memory");
	}
	/* rank[k]: the new number of spill k, its SPILL_OUT's turn */
	for (int32_t k = 0; k < S; k++)
		rank[k] = -1;
	int32_t next = 0;
	for (int32_t i = 0; i < p->len; i++) {
		int32_t v = p->order[i];
		if (v >= n && v < n + 2 * S && (v - n) % 2 == 0 &&
		    rank[(v - n) / 2] < 0)
			rank[(v - n) / 2] = next++;
	}
	int rc = DS_OK;
	if (next < S) {
		rc = ds_fail(e, DS_EPLAN, "%s: a spill has no SPILL_OUT in the "
			     "schedule", g->source);
	} else {
		for (int32_t k = 0; k < S; k++)
			sp[rank[k]] = p->spill[k];
		memcpy(p->spill, sp, (size_t)S * sizeof *sp);
		for (int32_t i = 0; i < p->len; i++) {
			int32_t v = p->order[i];
			if (v >= n && v < n + 2 * S)
				p->order[i] = n + 2 * rank[(v - n) / 2] +
					      (v - n) % 2;
		}
	}
	ds_free(g->heap, rank);
	ds_free(g->heap, sp);
	return rc;
}

/* Scratch of ds_plan_drop_dead_reloads. */
typedef struct dead_ctx {
	int32_t *in_at;	 /* [nbuf] line of the buffer's last SPILL_IN, -1 */
	int32_t *in_of;	 /* [nbuf] the spill that SPILL_IN now belongs to */
	bool *used;	 /* [nbuf] a use stands after that SPILL_IN */
	int32_t *owner;	 /* [nspill] the spill each SPILL_IN belongs to */
	int32_t *newk;	 /* [nspill] the spill's new number, -1 when gone */
} dead_ctx;

/* Marks the nodes of every dead reload -1: where spill k's SPILL_OUT
 * follows the last SPILL_IN of its buffer with no use between, that
 * SPILL_IN and this SPILL_OUT go, and spill k's SPILL_IN and offset pass
 * to the spill that SPILL_IN belonged to.  Returns how many. */
static int32_t mark_dead(const ds_graph *g, ds_plan *p, dead_ctx *x)
{
	const int32_t n = g->n;
	int32_t dropped = 0;
	for (int32_t i = 0; i < p->len; i++) {
		int32_t v = p->order[i];
		if (v < n) {
			for (int32_t j = g->use_off[v]; j < g->use_off[v + 1];
			     j++)
				x->used[g->use[j]] = true;
			continue;
		}
		int32_t k = (v - n) / 2, b = p->spill[k].buf;
		if ((v - n) % 2) { /* SPILL_IN */
			x->in_at[b] = i;
			x->in_of[b] = x->owner[k];
			x->used[b] = false;
			continue;
		}
		if (x->in_at[b] >= 0 && !x->used[b]) {
			int32_t k1 = x->in_of[b];
			p->order[x->in_at[b]] = -1;
			p->order[i] = -1;
			p->spill[k1].offset = p->spill[k].offset;
			x->owner[k] = k1;
			x->newk[k] = -1;
			dropped++;
		}
		x->in_at[b] = -1;
	}
	return dropped;
}

/* Drops the marked nodes and the merged spills; the spill nodes renamed
 * to the spills' new numbers (their order kept). */
static void compact_dead(const ds_graph *g, ds_plan *p, dead_ctx *x)
{
	const int32_t n = g->n;
	int32_t kept = 0;
	for (int32_t k = 0; k < p->nspill; k++)
		if (x->newk[k] >= 0) {
			x->newk[k] = kept;
			p->spill[kept++] = p->spill[k];
		}
	int32_t len = 0;
	for (int32_t i = 0; i < p->len; i++) {
		int32_t v = p->order[i];
		if (v >= n) {
			int32_t k = (v - n) / 2, in = (v - n) % 2;
			v = n + 2 * x->newk[in ? x->owner[k] : k] + in;
		}
		if (p->order[i] >= 0)
			p->order[len++] = v;
	}
	p->len = len;
	p->nspill = kept;
}

int ds_plan_drop_dead_reloads(const ds_graph *g, ds_plan *p,
			      int32_t *dropped, ds_err *e)
{
	*dropped = 0;
	if (p->nspill == 0)
		return DS_OK;
	const size_t nb = (size_t)g->nbuf, S = (size_t)p->nspill;
	ds_arena a;
	ds_arena_init(&a, g->heap);
	dead_ctx x = {ds_arena_alloc(&a, nb + 1, sizeof *x.in_at),
		      ds_arena_alloc(&a, nb + 1, sizeof *x.in_of),
		      ds_arena_alloc(&a, nb + 1, sizeof *x.used),
		      ds_arena_alloc(&a, S, sizeof *x.owner),
		      ds_arena_alloc(&a, S, sizeof *x.newk)};
	if (a.failed) {
		ds_arena_free(&a);
		return ds_fail(e, DS_ENOMEM, "out of memory");
	}
	for (size_t b = 0; b < nb; b++)
		x.in_at[b] = -1, x.used[b] = false;
	for (size_t k = 0; k < S; k++)
		x.owner[k] = x.newk[k] = (int32_t)k;
	*dropped = mark_dead(g, p, &x);
	if (*dropped)
		compact_dead(g, p, &x);
	ds_arena_free(&a);
	return DS_OK;
}

int ds_plan_write(const ds_graph *g, const ds_plan *p, const char *dir,
		  const char *case_name, ds_err *e)
{
	const ds_heap *h = g->heap;
	ds_text t[3];
	char *paths[3] = {NULL, NULL, NULL};
	const char *suffix[3] = {"schedule", "memory", "spill"};
	int count = p->offset ? 3 : 1;
	int rc = DS_OK;
	for (int i = 0; i < 3; i++)
		ds_text_init(&t[i], h);
	for (int32_t i = 0; i < p->len; i++)
		ds_text_printf(&t[0], "%d\n", p->order[i]);
	if (p->offset) {
		for (int32_t b = 0; b < g->nbuf; b++)
			ds_text_printf(&t[1], "%lld:%lld\n",
				       (long long)g->buf_id[b],
				       (long long)p->offset[b]);
		for (int32_t k = 0; k < p->nspill; k++)
			ds_text_printf(&t[2], "%lld:%lld\n",
				       (long long)g->buf_id[p->spill[k].buf],
				       (long long)p->spill[k].offset);
	}
	for (int i = 0; i < count; i++) {
		size_t l = strlen(dir) + strlen(case_name) + 32;
		paths[i] = ds_alloc(h, l, 1);
		if (!paths[i] || t[i].failed) {
			rc = ds_fail(e, DS_ENOMEM, "out of memory");
			goto out;
		}
		snprintf(paths[i], l, "%s/%s_%s.txt", dir, case_name,
			 suffix[i]);
	}
	const char *data[3];
	size_t lens[3];
	for (int i = 0; i < count; i++) {
		data[i] = t[i].s ? t[i].s : "";
		lens[i] = (size_t)t[i].len;
	}
	rc = ds_write_files_atomic(h, count, (const char *const *)paths, data,
				   lens, e);
out:
	for (int i = 0; i < 3; i++) {
		ds_text_free(&t[i]);
		ds_free(h, paths[i]);
	}
	return rc;
}
