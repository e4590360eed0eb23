/* ds_graph.c: building and validating the graph representation.
 *
 * Requires: nodes and edges fed through ds_builder_* in any order.
 * Guarantees (after ds_builder_finish succeeds): Ids are exactly 0..n-1;
 * every edge names existing nodes and the edges form a DAG; every buffer has
 * exactly one ALLOC and one FREE with the same Size and Type, 0 < Size <= its
 * memory's capacity; every buffer an operation lists exists and is listed
 * once; CSR pred/succ/use/user arrays and a topological order are filled.
 * Anything else is refused with one line naming the source and the item. */
#include "ds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Interned names (op and pipe): indices given in first-seen order, so the
 * result never depends on hash order. */
typedef struct names {
	char **str;
	int64_t n, cap;
	int32_t *slot; /* open addressing: index+1, 0 empty */
	int64_t nslot;
} names;

struct ds_builder {
	const ds_heap *heap;
	char *source;
	/* raw nodes, in the order given */
	int64_t n, cap;
	int64_t *id;
	uint8_t *kind;
	int32_t *op, *pipe;
	int64_t *cycles, *bufid, *size;
	int8_t *mem;
	int64_t *use_start; /* into uses[] */
	int32_t *nuse;
	int64_t *uses;
	int64_t nuses, cap_uses;
	/* raw edges */
	int64_t ne, cap_e;
	int64_t *esrc, *edst;
	names ops, pipes;
	bool oom;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static void names_free(const ds_heap *h, names *t)
{
	for (int64_t i = 0; i < t->n; i++)
		ds_free(h, t->str[i]);
	ds_free(h, t->str);
	ds_free(h, t->slot);
	memset(t, 0, sizeof *t);
}

/* Index of s in t, added when absent; -1 when out of memory. */
static int32_t names_intern(const ds_heap *h, names *t, const char *s)
{
	if (2 * (t->n + 1) > t->nslot) {
		int64_t ns = t->nslot ? t->nslot * 2 : 64;
		int32_t *slot = ds_alloc(h, (size_t)ns, sizeof *slot);
		if (!slot)
			return -1;
		for (int64_t i = 0; i < t->n; i++) {
			uint64_t k = hash_str(t->str[i]) & (uint64_t)(ns - 1);
			while (slot[k])
				k = (k + 1) & (uint64_t)(ns - 1);
			slot[k] = (int32_t)(i + 1);
		}
		ds_free(h, t->slot);
		t->slot = slot;
		t->nslot = ns;
	}
	uint64_t mask = (uint64_t)(t->nslot - 1), k = hash_str(s) & mask;
	while (t->slot[k]) {
		if (strcmp(t->str[t->slot[k] - 1], s) == 0)
			return t->slot[k] - 1;
		k = (k + 1) & mask;
	}
	if (ds_reserve(h, (void **)&t->str, &t->cap, t->n + 1, sizeof(char *),
		       NULL))
		return -1;
	char *d = ds_strdup(h, s);
	if (!d)
		return -1;
	t->str[t->n] = d;
	t->slot[k] = (int32_t)(t->n + 1);
	return (int32_t)t->n++;
}

ds_builder *ds_builder_new(const ds_heap *h, const char *source)
{
	ds_builder *b = ds_alloc(h, 1, sizeof *b);
	if (!b)
		return NULL;
	b->heap = h;
	b->source = ds_strdup(h, source ? source : "graph");
	if (!b->source) {
		ds_free(h, b);
		return NULL;
	}
	return b;
}

static void builder_clear(ds_builder *b)
{
	const ds_heap *h = b->heap;
	void *arrays[] = {b->id,     b->kind,  b->op,	 b->pipe,
			  b->cycles, b->bufid, b->size,	 b->mem,
			  b->use_start, b->nuse, b->uses, b->esrc,
			  b->edst};
	for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
		ds_free(h, arrays[i]);
	names_free(h, &b->ops);
	names_free(h, &b->pipes);
	char *source = b->source;
	memset(b, 0, sizeof *b);
	b->heap = h;
	b->source = source;
}

void ds_builder_rehome(ds_builder *b, const ds_heap *h)
{
	/* same allocator, another copy of it: blocks move freely */
	DS_ASSERT(h->fn == b->heap->fn && h->ud == b->heap->ud);
	b->heap = h;
}

void ds_builder_free(ds_builder *b)
{
	if (!b)
		return;
	builder_clear(b);
	ds_free(b->heap, b->source);
	ds_free(b->heap, b);
}

static int oom(ds_builder *b, ds_err *e)
{
	b->oom = true;
	return ds_fail(e, DS_ENOMEM, "%s: out of memory", b->source);
}

/* Room for one more raw node in every per-node array. */
static int grow_nodes(ds_builder *b, ds_err *e)
{
	if (b->n >= DS_NODES_MAX)
		return ds_fail(e, DS_EINPUT, "%s: more than %lld nodes",
			       b->source, (long long)DS_NODES_MAX);
	if (b->n < b->cap)
		return DS_OK;
	int64_t nc = b->cap ? b->cap * 2 : 256;
	const ds_heap *h = b->heap;
#define GROW(field)                                                          \
	do {                                                                 \
		void *q = ds_grow(h, b->field, (size_t)nc, sizeof *b->field); \
		if (!q)                                                      \
			return oom(b, e);                                    \
		b->field = q;                                                \
	} while (0)
	GROW(id);
	GROW(kind);
	GROW(op);
	GROW(pipe);
	GROW(cycles);
	GROW(bufid);
	GROW(size);
	GROW(mem);
	GROW(use_start);
	GROW(nuse);
#undef GROW
	b->cap = nc;
	return DS_OK;
}

static int check_id(ds_builder *b, int64_t id, ds_err *e)
{
	if (id < 0 || id >= DS_NODES_MAX)
		return ds_fail(e, DS_EINPUT, "%s: node Id %lld is out of range",
			       b->source, (long long)id);
	return DS_OK;
}

int ds_builder_buffer(ds_builder *b, int64_t id, bool is_free, int64_t bufid,
		      int64_t size, const char *mem_name, ds_err *e)
{
	int rc;
	if ((rc = check_id(b, id, e)))
		return rc;
	int m = mem_name ? ds_mem_from_name(mem_name) : -1;
	if (m < 0)
		return ds_fail(e, DS_EINPUT,
			       "%s: node %lld (%s of buffer %lld): unknown "
			       "memory type '%s' (L1, UB, L0A, L0B, L0C)",
			       b->source, (long long)id,
			       is_free ? "FREE" : "ALLOC", (long long)bufid,
			       mem_name ? mem_name : "(none)");
	if (bufid < 0 || bufid > DS_VALUE_MAX)
		return ds_fail(e, DS_EINPUT,
			       "%s: node %lld: BufId %lld is out of range",
			       b->source, (long long)id, (long long)bufid);
	if (size <= 0 || size > DS_VALUE_MAX)
		return ds_fail(e, DS_EINPUT,
			       "%s: node %lld (%s of buffer %lld): Size %lld "
			       "must be positive",
			       b->source, (long long)id,
			       is_free ? "FREE" : "ALLOC", (long long)bufid,
			       (long long)size);
	if ((rc = grow_nodes(b, e)))
		return rc;
	int32_t op = names_intern(b->heap, &b->ops, is_free ? "FREE" : "ALLOC");
	if (op < 0)
		return oom(b, e);
	int64_t i = b->n++;
	b->id[i] = id;
	b->kind[i] = is_free ? DS_FREE : DS_ALLOC;
	b->op[i] = op;
	b->pipe[i] = -1;
	b->cycles[i] = 0;
	b->bufid[i] = bufid;
	b->size[i] = size;
	b->mem[i] = (int8_t)m;
	b->use_start[i] = b->nuses;
	b->nuse[i] = 0;
	return DS_OK;
}

int ds_builder_op(ds_builder *b, int64_t id, const char *op, const char *pipe,
		  int64_t cycles, const int64_t *bufs, int32_t nbufs, ds_err *e)
{
	int rc;
	if ((rc = check_id(b, id, e)))
		return rc;
	if (!op || !pipe)
		return ds_fail(e, DS_EINPUT, "%s: node %lld: no %s given",
			       b->source, (long long)id,
			       op ? "Pipe" : "operation name");
	if (!op[0] || strcmp(op, "ALLOC") == 0 || strcmp(op, "FREE") == 0)
		return ds_fail(e, DS_EINPUT,
			       "%s: node %lld: operation name '%s' is reserved "
			       "or empty",
			       b->source, (long long)id, op);
	if (!pipe[0])
		return ds_fail(e, DS_EINPUT, "%s: node %lld (%s): empty Pipe",
			       b->source, (long long)id, op);
	if (cycles < 0 || cycles > DS_VALUE_MAX)
		return ds_fail(e, DS_EINPUT,
			       "%s: node %lld (%s): Cycles %lld out of range",
			       b->source, (long long)id, op, (long long)cycles);
	if (nbufs < 0 || (nbufs > 0 && !bufs))
		return ds_fail(e, DS_EINPUT, "%s: node %lld: bad Bufs (%s)",
			       b->source, (long long)id,
			       nbufs < 0 ? "a negative count" : "NULL");
	for (int32_t k = 0; k < nbufs; k++) {
		for (int32_t j = 0; j < k; j++)
			if (bufs[j] == bufs[k])
				return ds_fail(e, DS_EINPUT,
					       "%s: node %lld (%s): buffer "
					       "%lld listed twice in Bufs",
					       b->source, (long long)id, op,
					       (long long)bufs[k]);
	}
	if ((rc = grow_nodes(b, e)))
		return rc;
	if (ds_reserve(b->heap, (void **)&b->uses, &b->cap_uses,
		       b->nuses + nbufs, sizeof *b->uses, e))
		return oom(b, e);
	int32_t opi = names_intern(b->heap, &b->ops, op);
	int32_t pi = opi < 0 ? -1 : names_intern(b->heap, &b->pipes, pipe);
	if (opi < 0 || pi < 0)
		return oom(b, e);
	int64_t i = b->n++;
	b->id[i] = id;
	b->kind[i] = DS_OP;
	b->op[i] = opi;
	b->pipe[i] = pi;
	b->cycles[i] = cycles;
	b->bufid[i] = -1;
	b->size[i] = 0;
	b->mem[i] = -1;
	b->use_start[i] = b->nuses;
	b->nuse[i] = nbufs;
	if (nbufs)
		memcpy(b->uses + b->nuses, bufs, (size_t)nbufs * sizeof *bufs);
	b->nuses += nbufs;
	return DS_OK;
}

int ds_builder_edge(ds_builder *b, int64_t src, int64_t dst, ds_err *e)
{
	if (b->ne >= INT32_MAX)
		return ds_fail(e, DS_EINPUT, "%s: too many edges", b->source);
	if (b->ne == b->cap_e) {
		/* esrc and edst grow in step */
		int64_t nc = b->cap_e ? 2 * b->cap_e : 256;
		int64_t *s = ds_grow(b->heap, b->esrc, (size_t)nc, sizeof *s);
		if (!s)
			return oom(b, e);
		b->esrc = s;
		int64_t *d = ds_grow(b->heap, b->edst, (size_t)nc, sizeof *d);
		if (!d)
			return oom(b, e);
		b->edst = d;
		b->cap_e = nc;
	}
	b->esrc[b->ne] = src;
	b->edst[b->ne] = dst;
	b->ne++;
	return DS_OK;
}

/* ---- finishing ---- */

typedef struct bufent {
	int64_t bufid;
	int32_t node; /* node Id */
	int32_t is_free;
} bufent;

static int cmp_bufent(const void *a, const void *b)
{
	const bufent *x = a, *y = b;
	if (x->bufid != y->bufid)
		return x->bufid < y->bufid ? -1 : 1;
	if (x->is_free != y->is_free)
		return x->is_free - y->is_free;
	return (x->node > y->node) - (x->node < y->node);
}

void ds_graph_free(ds_graph *g)
{
	if (!g)
		return;
	const ds_heap *h = g->heap;
	void *arrays[] = {g->epred_off, g->epred,
			  g->source, g->kind,	  g->op,       g->pipe,
			  g->cycles, g->buf,	  g->use_off,  g->use,
			  g->pred_off, g->pred,	  g->succ_off, g->succ,
			  g->esrc,   g->edst,	  g->topo,     g->buf_id,
			  g->buf_size, g->buf_mem, g->buf_alloc, g->buf_free,
			  g->buf_copyin, g->user_off, g->user};
	for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
		ds_free(h, arrays[i]);
	for (int32_t i = 0; i < g->nops; i++)
		ds_free(h, g->ops[i]);
	for (int32_t i = 0; i < g->npipes; i++)
		ds_free(h, g->pipes[i]);
	ds_free(h, g->ops);
	ds_free(h, g->pipes);
	ds_free(h, g);
}

int32_t ds_graph_find_buf(const ds_graph *g, int64_t bufid)
{
	int32_t lo = 0, hi = g->nbuf - 1;
	while (lo <= hi) {
		int32_t mid = lo + (hi - lo) / 2;
		if (g->buf_id[mid] == bufid)
			return mid;
		if (g->buf_id[mid] < bufid)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

int32_t ds_graph_find_pipe(const ds_graph *g, const char *name)
{
	for (int32_t i = 0; i < g->npipes; i++)
		if (strcmp(g->pipes[i], name) == 0)
			return i;
	return -1;
}

/* Fills off[0..n] and adj[] from (from[k], to[k]) pairs grouped by from,
 * keeping input order inside each group (a stable counting sort). */
static void build_csr(int32_t n, int64_t m, const int32_t *from,
		      const int32_t *to, int32_t *off, int32_t *adj)
{
	memset(off, 0, (size_t)(n + 1) * sizeof *off);
	for (int64_t k = 0; k < m; k++)
		off[from[k] + 1]++;
	for (int32_t v = 0; v < n; v++)
		off[v + 1] += off[v];
	for (int64_t k = 0; k < m; k++)
		adj[off[from[k]]++] = to[k];
	for (int32_t v = n; v > 0; v--)
		off[v] = off[v - 1];
	off[0] = 0;
}

/* Names up to 8 nodes of a cycle among the nodes Kahn's pass left over. */
static int report_cycle(const ds_graph *g, const int32_t *off,
			const int32_t *adj, const int32_t *indeg,
			const char *what, ds_err *e)
{
	/* Every left-over node has a left-over predecessor, so walking them
	 * must come back to a node already seen: that closes a cycle. */
	int32_t *via = ds_alloc(g->heap, (size_t)g->n, sizeof *via);
	if (!via)
		return ds_fail(e, DS_ENOMEM, "%s: out of memory", g->source);
	for (int32_t v = 0; v < g->n; v++)
		via[v] = -1;
	int32_t v = 0;
	while (indeg[v] == 0)
		v++;
	while (via[v] < 0) {
		for (int32_t k = off[v]; k < off[v + 1]; k++)
			if (indeg[adj[k]] > 0) {
				via[v] = adj[k];
				break;
			}
		v = via[v];
	}
	/* v is on the cycle.  c[i+1] = via[c[i]] runs against the edges, so
	 * c[k-1] -> ... -> c[0] is a path along them; print up to 8. */
	int32_t c[8], len = 1, k = 0;
	c[k++] = v;
	for (int32_t u = via[v]; u != v; u = via[u], len++)
		if (k < 8)
			c[k++] = u;
	char list[200];
	size_t at = 0;
	for (int32_t i = k - 1; i >= 0; i--)
		at += (size_t)snprintf(list + at, sizeof list - at, "%d -> ",
				       c[i]);
	if (len > k)
		snprintf(list + at, sizeof list - at, "...");
	else
		snprintf(list + at, sizeof list - at, "%d", c[k - 1]);
	ds_free(g->heap, via);
	return ds_fail(e, DS_EINPUT, "%s: %s: %s", g->source, what, list);
}

static int cmp_int32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

/* Kahn's pass (FIFO seeded in Id order) into order; returns how many nodes
 * it placed, fewer than n when there is a cycle (indeg > 0 marks the nodes
 * left over). */
static int32_t kahn(int32_t n, const int32_t *pred_off, const int32_t *soff,
		    const int32_t *sadj, int32_t *indeg, int32_t *order)
{
	for (int32_t v = 0; v < n; v++)
		indeg[v] = pred_off[v + 1] - pred_off[v];
	int32_t head = 0, tail = 0;
	for (int32_t v = 0; v < n; v++)
		if (indeg[v] == 0)
			order[tail++] = v;
	while (head < tail) {
		int32_t v = order[head++];
		for (int32_t k = soff[v]; k < soff[v + 1]; k++)
			if (--indeg[sadj[k]] == 0)
				order[tail++] = sadj[k];
	}
	return tail;
}

/* The state of one ds_builder_finish: the builder, the graph being
 * filled, and the scratch arrays (all from one arena). */
typedef struct fin {
	ds_builder *b;
	ds_graph *g;
	const ds_caps *caps;
	ds_err *e;
	ds_arena ar;
	int32_t n;
	int32_t *slot;	/* per Id: the builder's index of that node */
	bufent *be;	/* ALLOC and FREE nodes by (buffer, FREE, Id) */
	int32_t nbn;
	int32_t *indeg; /* Kahn's in-degrees, and the nodes it left */
} fin;

static int fin_oom(fin *f)
{
	return ds_fail(f->e, DS_ENOMEM, "%s: out of memory", f->b->source);
}

/* count zeroed elements of size for the graph (freed with it), or NULL
 * after reporting the failure. */
static void *fin_new(fin *f, int64_t count, size_t size)
{
	void *p = ds_alloc(f->b->heap, (size_t)count, size);
	if (!p)
		fin_oom(f);
	return p;
}

/* The same, scratch: released at the end of ds_builder_finish. */
static void *fin_tmp(fin *f, int64_t count, size_t size)
{
	void *p = ds_arena_alloc(&f->ar, (size_t)count, size);
	if (!p)
		fin_oom(f);
	return p;
}

/* Ids: exactly 0..n-1. */
static int check_ids(fin *f)
{
	const ds_builder *b = f->b;
	const int32_t n = f->n;
	if (!(f->slot = fin_tmp(f, n, sizeof *f->slot)))
		return DS_ENOMEM;
	for (int32_t i = 0; i < n; i++)
		f->slot[i] = -1;
	for (int32_t i = 0; i < n; i++) {
		int64_t id = b->id[i];
		if (id >= n)
			return ds_fail(f->e, DS_EINPUT,
				       "%s: node Id %lld out of range: %d "
				       "nodes need Ids 0..%d",
				       b->source, (long long)id, n, n - 1);
		if (f->slot[id] >= 0)
			return ds_fail(f->e, DS_EINPUT,
				       "%s: node Id %lld appears twice",
				       b->source, (long long)id);
		f->slot[id] = i;
	}
	return DS_OK;
}

/* Per-node fields, in Id order. */
static int copy_nodes(fin *f)
{
	const ds_builder *b = f->b;
	ds_graph *g = f->g;
	const int32_t n = f->n;
	if (!(g->kind = fin_new(f, n, sizeof *g->kind)) ||
	    !(g->op = fin_new(f, n, sizeof *g->op)) ||
	    !(g->pipe = fin_new(f, n, sizeof *g->pipe)) ||
	    !(g->cycles = fin_new(f, n, sizeof *g->cycles)) ||
	    !(g->buf = fin_new(f, n, sizeof *g->buf)))
		return DS_ENOMEM;
	for (int32_t v = 0; v < n; v++) {
		int32_t i = f->slot[v];
		g->kind[v] = b->kind[i];
		g->op[v] = b->op[i];
		g->pipe[v] = b->pipe[i];
		g->cycles[v] = b->cycles[i];
		g->buf[v] = -1;
	}
	return DS_OK;
}

/* The ALLOC and FREE nodes sorted by buffer, ALLOC first: f->be. */
static int sort_buffer_nodes(fin *f)
{
	const ds_builder *b = f->b;
	int32_t nbn = 0;
	for (int32_t i = 0; i < f->n; i++)
		nbn += b->kind[i] != DS_OP;
	if (!(f->be = fin_tmp(f, nbn ? nbn : 1, sizeof *f->be)))
		return DS_ENOMEM;
	nbn = 0;
	for (int32_t v = 0; v < f->n; v++) {
		int32_t i = f->slot[v];
		if (b->kind[i] != DS_OP)
			f->be[nbn++] = (bufent){b->bufid[i], v,
						b->kind[i] == DS_FREE};
	}
	qsort(f->be, (size_t)nbn, sizeof *f->be, cmp_bufent);
	f->nbn = nbn;
	return DS_OK;
}

/* The nodes be[k..j) of one buffer: one ALLOC and one FREE, matching
 * Size and Type, the Size within the memory's capacity. */
static int check_buffer(fin *f, int32_t k, int32_t j)
{
	const ds_builder *b = f->b;
	const bufent *be = f->be;
	int32_t na = 0, nf = 0;
	for (int32_t t = k; t < j; t++)
		be[t].is_free ? nf++ : na++;
	long long bid = (long long)be[k].bufid;
	if (na != 1 || nf != 1)
		return ds_fail(f->e, DS_EINPUT,
			       "%s: buffer %lld has %d ALLOC and %d FREE "
			       "nodes (needs exactly one of each)",
			       b->source, bid, na, nf);
	int32_t ia = f->slot[be[k].node], ifr = f->slot[be[k + 1].node];
	if (b->size[ia] != b->size[ifr])
		return ds_fail(f->e, DS_EINPUT,
			       "%s: buffer %lld: Size %lld at ALLOC (node %d) "
			       "but %lld at FREE (node %d)",
			       b->source, bid, (long long)b->size[ia],
			       be[k].node, (long long)b->size[ifr],
			       be[k + 1].node);
	if (b->mem[ia] != b->mem[ifr])
		return ds_fail(f->e, DS_EINPUT,
			       "%s: buffer %lld: Type %s at ALLOC (node %d) "
			       "but %s at FREE (node %d)",
			       b->source, bid, ds_mem_names[b->mem[ia]],
			       be[k].node, ds_mem_names[b->mem[ifr]],
			       be[k + 1].node);
	if (b->size[ia] > f->caps->cap[b->mem[ia]])
		return ds_fail(f->e, DS_EINPUT,
			       "%s: buffer %lld: Size %lld exceeds %s "
			       "capacity %lld",
			       b->source, bid, (long long)b->size[ia],
			       ds_mem_names[b->mem[ia]],
			       (long long)f->caps->cap[b->mem[ia]]);
	return DS_OK;
}

/* Buffers: one ALLOC and one FREE each, matching Size and Type; the
 * buffer arrays, by increasing buffer Id. */
static int check_buffers(fin *f)
{
	ds_graph *g = f->g;
	int rc = sort_buffer_nodes(f);
	int32_t nbuf = 0;
	for (int32_t k = 0; k < f->nbn && rc == DS_OK; nbuf++) {
		int32_t j = k;
		while (j < f->nbn && f->be[j].bufid == f->be[k].bufid)
			j++;
		rc = check_buffer(f, k, j);
		k = j;
	}
	if (rc)
		return rc;
	g->nbuf = nbuf;
	if (!(g->buf_id = fin_new(f, nbuf, sizeof *g->buf_id)) ||
	    !(g->buf_size = fin_new(f, nbuf, sizeof *g->buf_size)) ||
	    !(g->buf_mem = fin_new(f, nbuf, sizeof *g->buf_mem)) ||
	    !(g->buf_alloc = fin_new(f, nbuf, sizeof *g->buf_alloc)) ||
	    !(g->buf_free = fin_new(f, nbuf, sizeof *g->buf_free)) ||
	    !(g->buf_copyin = fin_new(f, nbuf, sizeof *g->buf_copyin)))
		return DS_ENOMEM;
	for (int32_t k = 0, x = 0; k < f->nbn; k += 2, x++) {
		const bufent *be = f->be;
		int32_t ia = f->slot[be[k].node];
		g->buf_id[x] = be[k].bufid;
		g->buf_size[x] = f->b->size[ia];
		g->buf_mem[x] = (uint8_t)f->b->mem[ia];
		g->buf_alloc[x] = be[k].node;
		g->buf_free[x] = be[k + 1].node;
		g->buf[be[k].node] = x;
		g->buf[be[k + 1].node] = x;
	}
	return DS_OK;
}

/* Operations' buffers, as buffer indices (use), and each buffer's users
 * (user); a buffer used by a COPY_IN is marked. */
static int check_uses(fin *f)
{
	const ds_builder *b = f->b;
	ds_graph *g = f->g;
	const int32_t n = f->n, nbuf = g->nbuf;
	int32_t *cnt;
	if (!(g->use_off = fin_new(f, (int64_t)n + 1, sizeof *g->use_off)) ||
	    !(g->use = fin_new(f, b->nuses ? b->nuses : 1, sizeof *g->use)) ||
	    !(g->user_off =
		      fin_new(f, (int64_t)nbuf + 1, sizeof *g->user_off)) ||
	    !(g->user = fin_new(f, b->nuses ? b->nuses : 1, sizeof *g->user)))
		return DS_ENOMEM;
	int32_t copy_in = -1;
	for (int32_t k = 0; k < b->ops.n; k++)
		if (strcmp(b->ops.str[k], "COPY_IN") == 0)
			copy_in = k;
	int64_t nu = 0;
	for (int32_t v = 0; v < n; v++) {
		int32_t i = f->slot[v];
		g->use_off[v] = (int32_t)nu;
		for (int32_t k = 0; k < b->nuse[i]; k++) {
			int64_t bid = b->uses[b->use_start[i] + k];
			int32_t x = ds_graph_find_buf(g, bid);
			if (x < 0)
				return ds_fail(f->e, DS_EINPUT,
					       "%s: node %d (%s) uses buffer "
					       "%lld, which has no ALLOC",
					       b->source, v,
					       b->ops.str[b->op[i]],
					       (long long)bid);
			g->use[nu++] = x;
			g->user_off[x + 1]++;
			if (b->op[i] == copy_in)
				g->buf_copyin[x] = 1;
		}
	}
	g->use_off[n] = (int32_t)nu;
	for (int32_t x = 0; x < nbuf; x++)
		g->user_off[x + 1] += g->user_off[x];
	if (!(cnt = fin_tmp(f, nbuf ? nbuf : 1, sizeof *cnt)))
		return DS_ENOMEM;
	for (int32_t v = 0; v < n; v++)
		for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
			int32_t x = g->use[k];
			g->user[g->user_off[x] + cnt[x]++] = v;
		}
	ds_arena_release(&f->ar, cnt);
	return DS_OK;
}

/* Edges: both ends exist, no loop; epred, the graph's own edges by
 * destination (timing and critical path). */
static int check_edges(fin *f)
{
	const ds_builder *b = f->b;
	ds_graph *g = f->g;
	const int32_t n = f->n;
	g->nedge = b->ne;
	if (!(g->esrc = fin_new(f, b->ne ? b->ne : 1, sizeof *g->esrc)) ||
	    !(g->edst = fin_new(f, b->ne ? b->ne : 1, sizeof *g->edst)))
		return DS_ENOMEM;
	for (int64_t k = 0; k < b->ne; k++) {
		int64_t s = b->esrc[k], d = b->edst[k];
		if (s < 0 || s >= n || d < 0 || d >= n)
			return ds_fail(f->e, DS_EINPUT,
				       "%s: edge %lld [%lld, %lld] names node "
				       "%lld, which does not exist",
				       b->source, (long long)k, (long long)s,
				       (long long)d,
				       (long long)(s < 0 || s >= n ? s : d));
		if (s == d)
			return ds_fail(f->e, DS_EINPUT,
				       "%s: edge %lld [%lld, %lld] is a loop: "
				       "the edges form a cycle",
				       b->source, (long long)k, (long long)s,
				       (long long)d);
		g->esrc[k] = (int32_t)s;
		g->edst[k] = (int32_t)d;
	}
	if (!(g->epred_off =
		      fin_new(f, (int64_t)n + 1, sizeof *g->epred_off)) ||
	    !(g->epred = fin_new(f, b->ne ? b->ne : 1, sizeof *g->epred)))
		return DS_ENOMEM;
	build_csr(n, b->ne, g->edst, g->esrc, g->epred_off, g->epred);
	return DS_OK;
}

/* A cycle among the edges themselves, named with them. */
static int check_edge_cycle(fin *f)
{
	ds_graph *g = f->g;
	const int32_t n = f->n;
	int64_t ne = f->b->ne;
	if (!(f->indeg = fin_tmp(f, n, sizeof *f->indeg)) ||
	    !(g->topo = fin_new(f, n, sizeof *g->topo)))
		return DS_ENOMEM;
	int32_t *soff = fin_tmp(f, (int64_t)n + 1, sizeof *soff);
	int32_t *sadj = soff ? fin_tmp(f, ne ? ne : 1, sizeof *sadj) : NULL;
	if (!sadj)
		return DS_ENOMEM;
	build_csr(n, ne, g->esrc, g->edst, soff, sadj);
	int32_t done = kahn(n, g->epred_off, soff, sadj, f->indeg, g->topo);
	ds_arena_release(&f->ar, sadj);
	ds_arena_release(&f->ar, soff);
	if (done < n)
		return report_cycle(g, g->epred_off, g->epred, f->indeg,
				    "the edges form a cycle", f->e);
	return DS_OK;
}

/* Each pred list sorted, duplicates dropped; then ef/et rewritten as the
 * remaining (pred, node) pairs.  Returns how many remain. */
static int32_t dedup_preds(ds_graph *g, int32_t *ef, int32_t *et)
{
	int32_t w = 0, start = 0;
	for (int32_t v = 0; v < g->n; v++) {
		int32_t lo = start, hi = g->pred_off[v + 1];
		start = hi;
		qsort(g->pred + lo, (size_t)(hi - lo), sizeof *g->pred,
		      cmp_int32);
		g->pred_off[v] = w;
		for (int32_t q = lo; q < hi; q++)
			if (q == lo || g->pred[q] != g->pred[q - 1])
				g->pred[w++] = g->pred[q];
	}
	g->pred_off[g->n] = w;
	for (int32_t v = 0, q = 0; v < g->n; v++)
		for (; q < g->pred_off[v + 1]; q++)
			ef[q] = g->pred[q], et[q] = v;
	return w;
}

/* The order constraints: the edges, and each buffer's ALLOC before its
 * users and its FREE after them (residency demands it even where no edge
 * says so).  Every pass that orders nodes follows these; duplicates of
 * edges are dropped. */
static int build_constraints(fin *f)
{
	const ds_builder *b = f->b;
	ds_graph *g = f->g;
	const int32_t n = f->n;
	int64_t m = b->ne + 2 * b->nuses + g->nbuf;
	if (m > INT32_MAX)
		return ds_fail(f->e, DS_EINPUT, "%s: too many edges",
			       b->source);
	int32_t *ef = fin_tmp(f, m, sizeof *ef);
	int32_t *et = ef ? fin_tmp(f, m, sizeof *et) : NULL;
	if (!et)
		return DS_ENOMEM;
	int64_t k = 0;
	for (; k < b->ne; k++)
		ef[k] = g->esrc[k], et[k] = g->edst[k];
	for (int32_t v = 0; v < n; v++)
		for (int32_t u = g->use_off[v]; u < g->use_off[v + 1]; u++) {
			int32_t x = g->use[u];
			ef[k] = g->buf_alloc[x], et[k++] = v;
			ef[k] = v, et[k++] = g->buf_free[x];
		}
	for (int32_t x = 0; x < g->nbuf; x++)
		ef[k] = g->buf_alloc[x], et[k++] = g->buf_free[x];
	if (!(g->pred_off = fin_new(f, (int64_t)n + 1, sizeof *g->pred_off)) ||
	    !(g->pred = fin_new(f, m, sizeof *g->pred)))
		return DS_ENOMEM;
	build_csr(n, m, et, ef, g->pred_off, g->pred);
	int32_t w = dedup_preds(g, ef, et);
	if (!(g->succ_off = fin_new(f, (int64_t)n + 1, sizeof *g->succ_off)) ||
	    !(g->succ = fin_new(f, w ? w : 1, sizeof *g->succ)))
		return DS_ENOMEM;
	build_csr(n, w, ef, et, g->succ_off, g->succ);
	ds_arena_release(&f->ar, et);
	ds_arena_release(&f->ar, ef);
	return DS_OK;
}

/* Topological order over the constraints (Kahn, FIFO seeded in Id
 * order). */
static int order_constraints(fin *f)
{
	ds_graph *g = f->g;
	if (kahn(f->n, g->pred_off, g->succ_off, g->succ, f->indeg, g->topo) <
	    f->n)
		return report_cycle(g, g->pred_off, g->pred, f->indeg,
				    "a buffer is used outside its ALLOC..FREE "
				    "(edges with each ALLOC before its users "
				    "and FREE after them form a cycle)",
				    f->e);
	return DS_OK;
}

/* The critical path over the edges, along the topological order. */
static int critical_path(fin *f)
{
	ds_graph *g = f->g;
	int64_t *cp = fin_tmp(f, f->n, sizeof *cp);
	if (!cp)
		return DS_ENOMEM;
	for (int32_t i = 0; i < f->n; i++) {
		int32_t v = g->topo[i];
		int64_t s0 = 0, end;
		for (int32_t q = g->epred_off[v]; q < g->epred_off[v + 1]; q++)
			if (cp[g->epred[q]] > s0)
				s0 = cp[g->epred[q]];
		if (!ds_add(s0, g->cycles[v], &end))
			return ds_fail(f->e, DS_EINPUT,
				       "%s: the critical path overflows 64 "
				       "bits",
				       f->b->source);
		cp[v] = end;
		if (end > g->critical_path)
			g->critical_path = end;
	}
	return DS_OK;
}

/* Names move from the builder to the graph. */
static void move_names(ds_builder *b, ds_graph *g)
{
	g->nops = (int32_t)b->ops.n;
	g->ops = b->ops.str;
	b->ops.str = NULL;
	b->ops.n = 0;
	g->npipes = (int32_t)b->pipes.n;
	g->pipes = b->pipes.str;
	b->pipes.str = NULL;
	b->pipes.n = 0;
}

/* The graph from the builder's nodes and edges, each check in turn; the
 * first refusal (or failed allocation) stops. */
static int finish_graph(ds_builder *b, ds_graph *g, const ds_caps *caps,
			ds_err *e)
{
	fin f = {.b = b, .g = g, .caps = caps, .e = e, .n = (int32_t)b->n};
	ds_arena_init(&f.ar, b->heap);
	g->caps = *caps;
	g->n = f.n;
	if (f.n == 0)
		return ds_fail(e, DS_EINPUT, "%s: the graph has no nodes",
			       b->source);
	int (*const steps[])(fin *) = {
		check_ids,	   copy_nodes,	      check_buffers,
		check_uses,	   check_edges,	      check_edge_cycle,
		build_constraints, order_constraints, critical_path,
	};
	int rc = DS_OK;
	for (size_t i = 0; i < sizeof steps / sizeof *steps && !rc; i++)
		rc = steps[i](&f);
	if (rc == DS_OK)
		move_names(b, g);
	ds_arena_free(&f.ar);
	return rc;
}

int ds_builder_finish(ds_builder *b, const ds_caps *caps, ds_graph **out,
		      ds_err *e)
{
	*out = NULL;
	if (b->oom) {
		builder_clear(b);
		return ds_fail(e, DS_ENOMEM, "%s: out of memory", b->source);
	}
	ds_graph *g = ds_alloc(b->heap, 1, sizeof *g);
	if (!g) {
		builder_clear(b);
		return ds_fail(e, DS_ENOMEM, "%s: out of memory", b->source);
	}
	g->heap = b->heap;
	g->source = ds_strdup(b->heap, b->source);
	int rc = g->source ? finish_graph(b, g, caps, e)
			   : ds_fail(e, DS_ENOMEM, "%s: out of memory",
				     b->source);
	builder_clear(b);
	if (rc) {
		ds_graph_free(g);
		return rc;
	}
	*out = g;
	return DS_OK;
}
