/* ds_pack.c: placement by capacity first, addresses after (pk_).
 *
 * ds_place decides spills and addresses together, along the order: when
 * a buffer finds no hole it spills a window of neighbours, although the
 * memory may hold enough free bytes in several holes.  On Conv_Case0
 * most of DLR's spills before the last three layers are of that kind
 * (a 1,536-byte accumulator arriving with 2,304 bytes resident of 4,096:
 * a window spilled for it).  Here the spills are decided on bytes alone
 * (a memory is full when its resident bytes and the buffer's exceed the
 * capacity; victims as ds_place scores them, one buffer at a time), and
 * the addresses afterwards, for all occupancies at once (an occupancy:
 * a buffer from its ALLOC or SPILL_IN to its FREE or SPILL_OUT), as
 * dynamic storage allocation: the occupancies by decreasing breadth
 * (the most bytes resident at one time within their span), or by
 * decreasing size, each at the lowest offset clear of those placed
 * that overlap it in time.  Where neither fits, the spills are decided
 * again with the memory's capacity lowered, over the spans of the
 * occupancies that stood out, by as much as they did; PK_TRIES tries in
 * all.  (A bounded search for a packing, after MiniMalloc's canonical
 * solutions, found some the greedy orders miss, but none that changed
 * a bundled graph's plan, for 0.2 s or more on FlashAttention_Case1.)
 *
 * Requires: a valid graph whose every operation's buffers fit together
 * in each memory (ds_check_fits), a topological order of its n nodes
 * (ds_order_check).
 * Guarantees: on DS_OK with *fits, a plan ds_replay accepts, in the form
 * ds_place gives (SPILL_OUTs right before the node that needed the room,
 * SPILL_INs right before the node that needs the buffer, spills in the
 * order of their SPILL_OUTs); *fits false (and no plan) when no try
 * packed.  Node Ids and buffer indices only break exact ties.
 *
 * Cost, N nodes, B buffers, K occupancies of one memory, P = N + 2S the
 * plan's length: per try O(N R) for the spills (R resident buffers
 * scanned per eviction), O(P + K log P) for the breadths (a segment tree
 * of the load), O(K log K + K M) for each packing, M the occupancies
 * met in the buckets of one (the index by time, PK_BUCKETS; K at
 * worst), and the caller's rounds times that again for each order that
 * misses.  Memory O(N + B + P + E), E the index's entries (K times the
 * buckets one spans, at most PK_BUCKETS), one arena. */
#include "ds_stage.h"

#include <stdlib.h>
#include <string.h>

/* Tries in all (the first at the memory's capacity).  1 and 2 gave the
 * same plans on the six bundled graphs and on 95 of 96 generated runs
 * (four kinds, 300 to 4,000 nodes, default caps and L1=2048,UB=768); on
 * the other, `gen --kind random --nodes 2000 --seed 11`, DLR's figure was
 * 544 bytes with 2 tries and 832 with 1 (before the rounds, which pack
 * it in one try: 352).  With DLR's rounds, `--nodes 500 --seed 6` at
 * L1=1536,UB=640: 2,464 bytes with 2 tries, 3,712 with 1 (test_pipeline,
 * 2026-12-06). */
#define PK_TRIES 2

enum { PK_NONE, PK_RESIDENT, PK_SPILLED, PK_FREED };

/* One occupancy: buf over plan positions [start, end) at off. */
typedef struct pk_occ {
	int32_t buf, start, end;
	int32_t from, to; /* the same span in positions of the input order
			     (to: -1 while open) */
	int32_t spill; /* the spill whose SPILL_IN starts it; -1: the ALLOC */
	int64_t breadth, off;
} pk_occ;

typedef struct packer {
	const ds_graph *g;
	const ds_place_opts *o;
	int32_t rounds; /* pk_pack's rounds after a greedy packing missed */
	ds_err *e;
	int64_t used[DS_NMEM];
	/* per memory and input position: the capacity the spills keep to,
	 * lowered where a packing did not fit */
	int64_t *cap[DS_NMEM];
	/* per buffer */
	uint8_t *state;
	ds_uses uses;			     /* along the order */
	int32_t *mark;			     /* protected at this position */
	int32_t *open;			     /* its open occupancy */
	int32_t *res[DS_NMEM];		     /* resident buffers, unordered */
	int32_t nres[DS_NMEM];
	ds_arena *ar; /* the scratch, occ included */
	pk_occ *occ;
	int64_t nocc, cap_occ;
	ds_plan *p;
	int64_t cap_order, cap_spill;
	int32_t now;
} packer;

/* ---- spills on bytes alone ---- */

static int pk_emit(packer *s, int32_t v)
{
	ds_plan *p = s->p;
	if (ds_reserve(s->g->heap, (void **)&p->order, &s->cap_order,
		       (int64_t)p->len + 1, sizeof *p->order, s->e))
		return DS_ENOMEM;
	p->order[p->len++] = v;
	return DS_OK;
}

/* Opens an occupancy of b at the next plan position. */
static int pk_open(packer *s, int32_t b, int32_t spill)
{
	if (!ds_arena_reserve(s->ar, (void **)&s->occ, &s->cap_occ,
			      s->nocc + 1, sizeof *s->occ))
		return ds_fail(s->e, DS_ENOMEM, "out of memory");
	int m = s->g->buf_mem[b];
	s->occ[s->nocc] = (pk_occ){b, s->p->len, -1, s->now, -1, spill, 0, 0};
	s->open[b] = (int32_t)s->nocc++;
	s->res[m][s->nres[m]++] = b;
	s->used[m] += s->g->buf_size[b];
	s->state[b] = PK_RESIDENT;
	return DS_OK;
}

/* Closes b's occupancy at the plan position of the node emitted next. */
static void pk_close(packer *s, int32_t b, uint8_t state)
{
	int m = s->g->buf_mem[b];
	int32_t i = 0;
	while (s->res[m][i] != b)
		i++;
	s->res[m][i] = s->res[m][--s->nres[m]];
	s->used[m] -= s->g->buf_size[b];
	s->occ[s->open[b]].end = s->p->len + 1;
	s->occ[s->open[b]].to = s->now + 1;
	s->state[b] = state;
}

/* Victim score of b, higher is better: the distance to its next use, or
 * minus the traffic over it (DS_VICTIM_COST). */
static double pk_score(packer *s, int32_t b)
{
	double dist = (double)ds_uses_next(&s->uses, b, s->now) - s->now + 1;
	return s->o->victim == DS_VICTIM_COST
		       ? -(double)ds_spill_traffic(s->g, b) / dist
		       : dist;
}

/* The resident buffer of m to spill: the best score (pk_score); with
 * DS_VICTIM_AGED, of those within tie_pct percent of the furthest next
 * use, the one used longest ago.  Ties: the larger, then the lower
 * index.  -1 when every one is protected. */
static int32_t pk_victim(packer *s, int m)
{
	const ds_graph *g = s->g;
	int32_t best = -1;
	double best_v = 0, lim = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (int32_t i = 0; i < s->nres[m]; i++) {
			int32_t b = s->res[m][i];
			if (s->mark[b] == s->now)
				continue;
			double v = pk_score(s, b);
			if (pass == 1) {
				if (v < lim)
					continue;
				v = s->now - ds_uses_prev(&s->uses, b);
			}
			if (best < 0 || v > best_v ||
			    (v == best_v &&
			     (g->buf_size[b] > g->buf_size[best] ||
			      (g->buf_size[b] == g->buf_size[best] &&
			       b < best)))) {
				best = b;
				best_v = v;
			}
		}
		if (pass == 1 || best < 0 || s->o->victim != DS_VICTIM_AGED)
			break;
		lim = best_v / (1 + s->o->tie_pct / 100.0);
		best = -1;
	}
	return best;
}

/* Spills victims of b's memory until b's bytes fit; *fits false when
 * only protected buffers are left. */
static int pk_room(packer *s, int32_t b, bool *fits)
{
	const ds_graph *g = s->g;
	int m = g->buf_mem[b];
	while (s->used[m] + g->buf_size[b] > s->cap[m][s->now]) {
		int32_t v = pk_victim(s, m);
		if (v < 0) {
			/* a lowered profile is a wish: the memory itself is the
			 * limit */
			*fits = s->used[m] + g->buf_size[b] <= g->caps.cap[m];
			return DS_OK;
		}
		ds_plan *p = s->p;
		if (ds_reserve(g->heap, (void **)&p->spill, &s->cap_spill,
			       (int64_t)p->nspill + 1, sizeof *p->spill, s->e))
			return DS_ENOMEM;
		int32_t k = p->nspill++;
		p->spill[k] = (ds_spill){v, -1};
		pk_close(s, v, PK_SPILLED);
		s->open[v] = k; /* until it comes back: the spill */
		int rc = pk_emit(s, g->n + 2 * k);
		if (rc)
			return rc;
	}
	return DS_OK;
}

/* Brings back the spilled buffers among bufs[0..nb), protected. */
static int pk_reload(packer *s, const int32_t *bufs, int32_t nb, bool *fits)
{
	for (int32_t k = 0; k < nb; k++)
		s->mark[bufs[k]] = s->now;
	for (int32_t k = 0; k < nb && *fits; k++) {
		int32_t b = bufs[k];
		if (s->state[b] != PK_SPILLED)
			continue;
		int32_t sk = s->open[b];
		int rc = pk_room(s, b, fits);
		if (rc == DS_OK && *fits)
			rc = pk_open(s, b, sk);
		if (rc == DS_OK && *fits)
			rc = pk_emit(s, s->g->n + 2 * sk + 1);
		if (rc)
			return rc;
	}
	return DS_OK;
}

/* Node v at position i: an ALLOC opens, a FREE closes (back first if
 * spilled), an operation's buffers come back. */
static int pk_node(packer *s, int32_t v, int32_t i, bool *fits)
{
	const ds_graph *g = s->g;
	int rc;
	s->now = i;
	if (g->kind[v] == DS_ALLOC) {
		int32_t b = g->buf[v];
		s->mark[b] = i;
		rc = pk_room(s, b, fits);
		if (rc == DS_OK && *fits)
			rc = pk_open(s, b, -1);
	} else if (g->kind[v] == DS_FREE) {
		int32_t b = g->buf[v];
		rc = pk_reload(s, &b, 1, fits);
		if (rc == DS_OK && *fits)
			pk_close(s, b, PK_FREED);
	} else {
		rc = pk_reload(s, g->use + g->use_off[v],
			       g->use_off[v + 1] - g->use_off[v], fits);
	}
	return rc == DS_OK && *fits ? pk_emit(s, v) : rc;
}

/* Runs the spill decisions along order into s->p and s->occ. */
static int pk_spills(packer *s, const int32_t *order, bool *fits)
{
	const ds_graph *g = s->g;
	memset(s->p, 0, sizeof *s->p);
	s->nocc = s->cap_order = s->cap_spill = 0;
	memset(s->used, 0, sizeof s->used);
	memset(s->nres, 0, sizeof s->nres);
	memset(s->state, PK_NONE, (size_t)g->nbuf);
	ds_uses_rewind(&s->uses, g);
	for (int32_t b = 0; b < g->nbuf; b++)
		s->mark[b] = -1;
	*fits = true;
	int rc = DS_OK;
	for (int32_t i = 0; i < g->n && rc == DS_OK && *fits; i++)
		rc = pk_node(s, order[i], i, fits);
	return rc;
}

/* ---- addresses: the occupancies packed ---- */

/* The most bytes of memory m resident at one plan position over each of
 * its occupancies' spans: a max segment tree over the load (tree: 2 * len
 * entries). */
static void pk_breadths(packer *s, int m, int64_t *tree)
{
	const int32_t len = s->p->len;
	memset(tree, 0, 2 * (size_t)len * sizeof *tree);
	int64_t *load = tree + len; /* the leaves: first a difference array */
	for (int64_t i = 0; i < s->nocc; i++) {
		const pk_occ *q = &s->occ[i];
		if (s->g->buf_mem[q->buf] != m)
			continue;
		load[q->start] += s->g->buf_size[q->buf];
		if (q->end < len)
			load[q->end] -= s->g->buf_size[q->buf];
	}
	for (int32_t i = 1; i < len; i++)
		load[i] += load[i - 1];
	for (int32_t i = len - 1; i > 0; i--)
		tree[i] = tree[2 * i] > tree[2 * i + 1] ? tree[2 * i]
							: tree[2 * i + 1];
	for (int64_t i = 0; i < s->nocc; i++) {
		pk_occ *q = &s->occ[i];
		if (s->g->buf_mem[q->buf] != m)
			continue;
		int64_t best = 0;
		for (int32_t l = q->start + len, r = q->end + len; l < r;
		     l >>= 1, r >>= 1) {
			if ((l & 1) && tree[l++] > best)
				best = tree[l - 1];
			if ((r & 1) && tree[--r] > best)
				best = tree[r];
		}
		q->breadth = best;
	}
}

/* The greedy packings' orders of occupancies: the broadest first (then
 * the larger), the larger first (then the broader); then the earlier,
 * the lower buffer index.  Five more were tried (by length, area, start,
 * breadth then start, breadth then length): on Conv_Case0's first
 * packing that missed they reached 4,752 to 5,760 bytes, against 4,224
 * by size (4,096 fit). */
enum { PK_BY_BREADTH, PK_BY_SIZE, PK_KEYS };

/* An occupancy's sort keys under one of the orders (qsort takes no
 * context, so the keys travel with the index). */
typedef struct pk_key {
	int64_t k1, k2;
	int32_t start, buf;
	int64_t i;
} pk_key;

static int pk_key_cmp(const void *pa, const void *pb)
{
	const pk_key *x = pa, *y = pb;
	if (x->k1 != y->k1)
		return x->k1 > y->k1 ? -1 : 1;
	if (x->k2 != y->k2)
		return x->k2 > y->k2 ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->buf > y->buf) - (x->buf < y->buf);
}

/* Sorts idx[0..k) into the order of key; keys: scratch for k. */
static void pk_sort(packer *s, int64_t *idx, pk_key *keys, int64_t k, int key)
{
	const ds_graph *g = s->g;
	for (int64_t j = 0; j < k; j++) {
		const pk_occ *q = &s->occ[idx[j]];
		int64_t size = g->buf_size[q->buf];
		keys[j] = (pk_key){key == PK_BY_SIZE ? size : q->breadth,
				   key == PK_BY_SIZE ? q->breadth : size,
				   q->start, q->buf, idx[j]};
	}
	qsort(keys, (size_t)k, sizeof *keys, pk_key_cmp);
	for (int64_t j = 0; j < k; j++)
		idx[j] = keys[j].i;
}

static int pk_span_cmp(const void *pa, const void *pb)
{
	const int64_t *a = pa, *b = pb;
	return (a[0] > b[0]) - (a[0] < b[0]);
}

/* The placed occupancies by time: the plan's positions cut into about
 * PK_BUCKETS buckets, each placed occupancy listed in every bucket its
 * span meets, so that pk_lowest looks only at those sharing a bucket
 * with the new one, not at every one placed. */
#define PK_BUCKETS 256

typedef struct pk_index {
	int32_t width, nbucket;
	int32_t *head; /* nbucket: the entry listed last, -1 for none */
	int32_t *next; /* per entry: the entry listed before it */
	int32_t *item; /* per entry: the occupancy's placement index */
	int64_t nent;
} pk_index;

/* The packing's scratch, for one memory at a time. */
typedef struct pk_scratch {
	int64_t *idx;  /* nocc: the memory's occupancies */
	pk_key *keys;  /* nocc: pk_sort's */
	int64_t *tmp;  /* nocc: pk_promote's */
	int64_t *best; /* nocc, by occupancy: the offsets of the lowest top */
	int32_t *when; /* 2 nocc: the placed ones' spans in time, */
	int64_t *at;   /* 2 nocc: and in memory (placement order) */
	int64_t *span; /* 2 nocc + 2 len: pk_lowest's, pk_breadths' tree */
	int64_t *dec;  /* n: pk_lower's */
	pk_index ix;   /* pk_pack's, over the placed ones */
} pk_scratch;

static int32_t pk_bucket(const pk_index *ix, int32_t pos)
{
	return pos / ix->width;
}

/* The last bucket an occupancy over [start, end) meets. */
static int32_t pk_last_bucket(const pk_index *ix, int32_t start, int32_t end)
{
	return pk_bucket(ix, end > start ? end - 1 : start);
}

/* Lists placed occupancy j (its span in w->when) in its buckets. */
static void pk_index_add(pk_index *ix, const pk_scratch *w, int64_t j)
{
	int32_t start = w->when[2 * j], end = w->when[2 * j + 1];
	for (int32_t b = pk_bucket(ix, start);
	     b <= pk_last_bucket(ix, start, end); b++) {
		ix->item[ix->nent] = (int32_t)j;
		ix->next[ix->nent] = ix->head[b];
		ix->head[b] = (int32_t)ix->nent++;
	}
}

/* Sorts the ns spans (lo, hi pairs) by lo: by insertion where they are
 * few, as they mostly are (qsort's call overhead was a tenth of a packed
 * placement's time on FlashAttention_Case1). */
static void pk_sort_spans(int64_t *span, int64_t ns)
{
	if (ns > 16) {
		qsort(span, (size_t)ns, 2 * sizeof *span, pk_span_cmp);
		return;
	}
	for (int64_t i = 1; i < ns; i++) {
		int64_t lo = span[2 * i], hi = span[2 * i + 1], j = i;
		for (; j > 0 && span[2 * (j - 1)] > lo; j--) {
			span[2 * j] = span[2 * (j - 1)];
			span[2 * j + 1] = span[2 * (j - 1) + 1];
		}
		span[2 * j] = lo;
		span[2 * j + 1] = hi;
	}
}

/* The lowest offset for size bytes over plan positions [start, end)
 * clear of the occupancies placed so far (w->ix; w->when, w->at), each
 * met once: in the first bucket the two share. */
static int64_t pk_lowest(const pk_scratch *w, int32_t start, int32_t end,
			 int64_t size)
{
	const pk_index *ix = &w->ix;
	int64_t ns = 0, off = 0;
	int32_t b0 = pk_bucket(ix, start);
	for (int32_t b = b0; b <= pk_last_bucket(ix, start, end); b++)
		for (int32_t e = ix->head[b]; e >= 0; e = ix->next[e]) {
			int32_t i = ix->item[e];
			int32_t rs = w->when[2 * i], re = w->when[2 * i + 1];
			int32_t first = pk_bucket(ix, rs);
			bool meet = rs < end && start < re;
			if (!meet || (first > b0 ? first : b0) != b)
				continue;
			w->span[2 * ns] = w->at[2 * i];
			w->span[2 * ns + 1] = w->at[2 * i + 1];
			ns++;
		}
	pk_sort_spans(w->span, ns);
	for (int64_t i = 0; i < ns && w->span[2 * i] < off + size; i++)
		if (w->span[2 * i + 1] > off)
			off = w->span[2 * i + 1];
	return off;
}

/* Places occupancies w->idx[0..k) in that order, each at the lowest
 * offset clear of those placed before it; returns the top. */
static int64_t pk_place(packer *s, pk_scratch *w, int64_t k)
{
	const ds_graph *g = s->g;
	int64_t top = 0;
	for (int32_t b = 0; b < w->ix.nbucket; b++)
		w->ix.head[b] = -1;
	w->ix.nent = 0;
	for (int64_t j = 0; j < k; j++) {
		pk_occ *q = &s->occ[w->idx[j]];
		int64_t size = g->buf_size[q->buf];
		q->off = pk_lowest(w, q->start, q->end, size);
		w->when[2 * j] = q->start;
		w->when[2 * j + 1] = q->end;
		w->at[2 * j] = q->off;
		w->at[2 * j + 1] = q->off + size;
		pk_index_add(&w->ix, w, j);
		if (q->off + size > top)
			top = q->off + size;
	}
	return top;
}

/* Moves the occupancies of w->idx[0..k) placed above cap to the front,
 * both groups keeping their order (one round of "squeaky wheel"
 * optimisation: those that did not fit are placed first next time). */
static void pk_promote(packer *s, const pk_scratch *w, int64_t k,
		       int64_t cap)
{
	int64_t n = 0;
	for (int above = 1; above >= 0; above--)
		for (int64_t j = 0; j < k; j++) {
			const pk_occ *q = &s->occ[w->idx[j]];
			if ((q->off + s->g->buf_size[q->buf] > cap) == above)
				w->tmp[n++] = w->idx[j];
		}
	memcpy(w->idx, w->tmp, (size_t)k * sizeof *w->idx);
}

/* Lowers memory m's capacity profile over the input span of each
 * occupancy placed above the capacity, by as much as it stands out (the
 * most of those covering a position); dec: scratch for n entries. */
static void pk_lower(packer *s, int m, const int64_t *idx, int64_t k,
		     int64_t *dec)
{
	const ds_graph *g = s->g;
	memset(dec, 0, (size_t)g->n * sizeof *dec);
	for (int64_t j = 0; j < k; j++) {
		const pk_occ *q = &s->occ[idx[j]];
		int64_t ex = q->off + g->buf_size[q->buf] - g->caps.cap[m];
		int32_t to = q->to < 0 ? g->n : q->to;
		for (int32_t i = q->from; ex > 0 && i < to; i++)
			if (dec[i] < ex)
				dec[i] = ex;
	}
	for (int32_t i = 0; i < g->n; i++)
		s->cap[m][i] -= dec[i];
}

/* w->ix for the k occupancies of w->idx, from s->ar; false when out of
 * memory. */
static bool pk_index_alloc(packer *s, pk_scratch *w, int64_t k)
{
	pk_index *ix = &w->ix;
	int32_t len = s->p->len;
	ix->width = (len + PK_BUCKETS - 1) / PK_BUCKETS;
	ix->nbucket = pk_bucket(ix, len - 1) + 1;
	int64_t nent = 0;
	for (int64_t j = 0; j < k; j++) {
		const pk_occ *q = &s->occ[w->idx[j]];
		nent += pk_last_bucket(ix, q->start, q->end) -
			pk_bucket(ix, q->start) + 1;
	}
	ix->head = ds_arena_alloc(s->ar, (size_t)ix->nbucket, sizeof *ix->head);
	ix->next = ds_arena_alloc(s->ar, (size_t)nent, sizeof *ix->next);
	ix->item = ds_arena_alloc(s->ar, (size_t)nent, sizeof *ix->item);
	return !s->ar->failed;
}

static void pk_index_free(packer *s, pk_index *ix)
{
	ds_arena_release(s->ar, ix->head);
	ds_arena_release(s->ar, ix->next);
	ds_arena_release(s->ar, ix->item);
	memset(ix, 0, sizeof *ix);
}

/* The greedy packing in the order of key, then up to s->rounds times
 * with those placed above cap moved to the front (pk_promote); true when
 * one fits (its offsets in s->occ), else the lowest top met, here or
 * before, in *best_top (-1: none yet) and its offsets in w->best. */
static bool pk_rounds(packer *s, pk_scratch *w, int64_t k, int key,
		      int64_t cap, int64_t *best_top)
{
	pk_sort(s, w->idx, w->keys, k, key);
	for (int32_t r = 0; r <= s->rounds; r++) {
		if (r > 0)
			pk_promote(s, w, k, cap);
		int64_t top = pk_place(s, w, k);
		if (top <= cap)
			return true;
		if (*best_top >= 0 && top >= *best_top)
			continue;
		*best_top = top;
		for (int64_t j = 0; j < k; j++)
			w->best[w->idx[j]] = s->occ[w->idx[j]].off;
	}
	return false;
}

/* Packs memory m's occupancies (pk_rounds, for each of pk_sort's keys);
 * *fit false when none fits: the lowest top met is restored and the
 * profile lowered where it stands out (pk_lower). */
static int pk_pack(packer *s, int m, pk_scratch *w, bool *fit)
{
	const ds_graph *g = s->g;
	const int64_t cap = g->caps.cap[m];
	int64_t k = 0, best_top = -1;
	for (int64_t i = 0; i < s->nocc; i++) {
		if (s->occ[i].end < 0)
			s->occ[i].end = s->p->len;
		if (g->buf_mem[s->occ[i].buf] == m)
			w->idx[k++] = i;
	}
	*fit = k == 0;
	if (k == 0)
		return DS_OK;
	pk_breadths(s, m, w->span);
	if (!pk_index_alloc(s, w, k)) {
		pk_index_free(s, &w->ix);
		return ds_fail(s->e, DS_ENOMEM, "out of memory");
	}
	for (int key = 0; key < PK_KEYS && !*fit; key++)
		*fit = pk_rounds(s, w, k, key, cap, &best_top);
	pk_index_free(s, &w->ix);
	if (*fit)
		return DS_OK;
	for (int64_t j = 0; j < k; j++)
		s->occ[w->idx[j]].off = w->best[w->idx[j]];
	pk_lower(s, m, w->idx, k, w->dec);
	return DS_OK;
}

/* The packed offsets into the plan: the ALLOC's occupancy gives the
 * buffer's offset, each SPILL_IN's its spill's. */
static void pk_write(packer *s)
{
	for (int64_t i = 0; i < s->nocc; i++) {
		const pk_occ *q = &s->occ[i];
		if (q->spill < 0)
			s->p->offset[q->buf] = q->off;
		else
			s->p->spill[q->spill].offset = q->off;
	}
}

/* ---- the driver ---- */

/* The scratch of s from arena a (the uses along order); false when one
 * failed. */
static bool pk_alloc(packer *s, const int32_t *order, ds_arena *a)
{
	const size_t nb = (size_t)s->g->nbuf;
	s->state = ds_arena_alloc(a, nb, 1);
	s->mark = ds_arena_alloc(a, nb, sizeof *s->mark);
	s->open = ds_arena_alloc(a, nb, sizeof *s->open);
	for (int m = 0; m < DS_NMEM; m++) {
		s->res[m] = ds_arena_alloc(a, nb, sizeof *s->res[m]);
		s->cap[m] = ds_arena_alloc(a, (size_t)s->g->n, sizeof *s->cap[m]);
		for (int32_t i = 0; s->cap[m] && i < s->g->n; i++)
			s->cap[m][i] = s->g->caps.cap[m];
	}
	return !a->failed && ds_uses_init(&s->uses, s->g, order, a);
}

/* One try at the current capacity profiles: the spills, then every
 * memory packed; *packed false when some memory's packing did not fit
 * (its profile lowered for the next try). */
static int pk_try(packer *s, const int32_t *order, bool *fits, bool *packed)
{
	int rc = pk_spills(s, order, fits);
	if (rc || !*fits)
		return rc;
	const size_t no = (size_t)s->nocc, len = (size_t)s->p->len;
	pk_scratch w = {
		ds_arena_alloc(s->ar, no, sizeof *w.idx),
		ds_arena_alloc(s->ar, no, sizeof *w.keys),
		ds_arena_alloc(s->ar, no, sizeof *w.tmp),
		ds_arena_alloc(s->ar, no, sizeof *w.best),
		ds_arena_alloc(s->ar, 2 * no, sizeof *w.when),
		ds_arena_alloc(s->ar, 2 * no, sizeof *w.at),
		ds_arena_alloc(s->ar, 2 * no + 2 * len, sizeof *w.span),
		ds_arena_alloc(s->ar, (size_t)s->g->n, sizeof *w.dec),
		{0, 0, NULL, NULL, NULL, 0},
	};
	if (s->ar->failed)
		rc = ds_fail(s->e, DS_ENOMEM, "out of memory");
	*packed = true;
	for (int m = 0; m < DS_NMEM && rc == DS_OK; m++) {
		bool fit;
		rc = pk_pack(s, m, &w, &fit);
		*packed = fit && *packed;
	}
	ds_arena_release(s->ar, w.idx);
	ds_arena_release(s->ar, w.keys);
	ds_arena_release(s->ar, w.tmp);
	ds_arena_release(s->ar, w.best);
	ds_arena_release(s->ar, w.when);
	ds_arena_release(s->ar, w.at);
	ds_arena_release(s->ar, w.span);
	ds_arena_release(s->ar, w.dec);
	return rc;
}

/* The plan's offsets, from the packing. */
static int pk_finish(packer *s)
{
	s->p->offset = ds_alloc(s->g->heap, (size_t)s->g->nbuf,
				sizeof *s->p->offset);
	if (!s->p->offset)
		return ds_fail(s->e, DS_ENOMEM, "out of memory");
	pk_write(s);
	return DS_OK;
}

/* Graphs of at most this many nodes get packed placements (as those
 * with more than one DLR start, ds_pipeline.c): on Conv_Case1 (36,086
 * nodes) the packings cost about 10 s in DLR and found nothing better. */
#define PK_MAX_NODES 20000

bool ds_pack_applies(const ds_graph *g, int64_t size_nodes)
{
	return ds_size_nodes(g, size_nodes) <= PK_MAX_NODES;
}

int ds_place_packed(const ds_graph *g, const int32_t *order,
		    const ds_place_opts *o, int32_t rounds, ds_plan *out,
		    bool *fits, ds_err *e)
{
	memset(out, 0, sizeof *out);
	*fits = false;
	int rc = ds_place_check(g, order, e);
	if (rc)
		return rc;
	ds_arena a;
	ds_arena_init(&a, g->heap);
	packer s = {.g = g, .o = o, .rounds = rounds, .e = e, .p = out,
		    .ar = &a};
	if (!pk_alloc(&s, order, &a)) {
		ds_arena_free(&a);
		return ds_fail(e, DS_ENOMEM, "out of memory");
	}
	bool packed = false, ok = true;
	for (int t = 0; t < PK_TRIES && rc == DS_OK && ok && !packed; t++) {
		ds_plan_free(g->heap, out);
		rc = pk_try(&s, order, &ok, &packed);
	}
	if (rc == DS_OK && ok && packed) {
		rc = pk_finish(&s);
		*fits = rc == DS_OK;
	}
	if (rc || !*fits)
		ds_plan_free(g->heap, out);
	ds_arena_free(&a);
	return rc;
}
