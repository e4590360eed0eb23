/* ds_band.c: the band order, a program order for graphs without loop
 * structure, along the graph's long axis.
 *
 * Requires: a valid graph (ds_builder_finish) and its structural rank
 * (ds_structural_rank(), ds_rank.c).  Guarantees: a topological order of
 * all the nodes that depends on the Ids only through the rank; the
 * one-live rule holds when the L0 groups need nothing of each other.
 *
 * Method.  The band order is a program order for graphs without loop
 * structure (the generator's random DAGs: each value is made and used
 * within a window of recent values, so the rank's walk has nothing to
 * follow).  There every edge joins nodes close in the
 * program, so the program is the graph's long axis: a breadth-first
 * sweep over the edges taken both ways from the component's least-ranked
 * node finds one end u, a sweep from u the other end v, and a node's
 * position is d(u) - d(v) (the "double sweep" of bandwidth reduction),
 * or the reverse (both are tried: which end comes first is not known).
 * A distance is coarse (a wide window puts a hundred nodes at each), so
 * the caller may ask for rounds of smoothing: each node moves to the mean
 * place of itself and its neighbours in the last order, which is then
 * pulled again.  The operations in that order pull their ancestors not
 * placed yet (depth first, predecessors in band order), a FREE goes
 * right after its last predecessor.  Operations sharing L0 buffers (an
 * L0 group: a chain of products and the moves filling its operands) go
 * as one: first what the group needs from outside, then its operations,
 * each after its predecessors in the group, deepest first, so its L0
 * buffers follow each other and the one-live rule holds whenever the
 * groups need nothing of each other.
 *
 * Cost, N nodes, E constraint edges: O(N + E) for the sweeps and each
 * pull, O((N + E) log(N + E)) for the sorts of each pull (one, plus one
 * per round of smoothing); memory O(N + E). */
#include "ds_stage.h"

#include <stdlib.h>
#include <string.h>

/* A node's place in the band order: its component, its position along
 * the component's long axis, then the rank. */
typedef struct bkey {
	int64_t pos;
	int32_t comp, rank, x;
} bkey;

static int bkey_cmp(const void *a, const void *b)
{
	const bkey *p = a, *q = b;
	if (p->comp != q->comp)
		return p->comp < q->comp ? -1 : 1;
	if (p->pos != q->pos)
		return p->pos < q->pos ? -1 : 1;
	return (p->rank > q->rank) - (p->rank < q->rank);
}

/* Breadth-first search from s over the constraint edges taken both
 * ways: dist[] for the nodes reached (the queue, which holds them in
 * the order reached, *len of them); returns the farthest node, the
 * least rank among those as far. */
static int32_t band_bfs(const ds_graph *g, const int32_t *rank, int32_t s,
			int32_t *dist, int32_t *mark, int32_t stamp,
			int32_t *queue, int32_t *len)
{
	int32_t head = 0, tail = 0, far = s;
	queue[tail++] = s;
	mark[s] = stamp;
	dist[s] = 0;
	while (head < tail) {
		int32_t x = queue[head++];
		if (dist[x] > dist[far] ||
		    (dist[x] == dist[far] && rank[x] < rank[far]))
			far = x;
		for (int dir = 0; dir < 2; dir++) {
			const int32_t *off = dir ? g->succ_off : g->pred_off;
			const int32_t *adj = dir ? g->succ : g->pred;
			for (int32_t k = off[x]; k < off[x + 1]; k++) {
				int32_t y = adj[k];
				if (mark[y] == stamp)
					continue;
				mark[y] = stamp;
				dist[y] = dist[x] + 1;
				queue[tail++] = y;
			}
		}
	}
	*len = tail;
	return far;
}

/* The pull: a machine of explicit frames (the graphs are deep).  A NODE
 * frame emits its node after its predecessors; a GROUP frame runs an L0
 * group (operations that share L0 buffers) at once: first what it needs
 * from outside, then its operations, each after its predecessors inside
 * the group, deepest first (the chain holding an L0 buffer before the
 * move that fills the next one), so the group's L0 buffers follow each
 * other; GNODE is one such step.  A NODE that meets one of its own
 * pullers (the group's needs lead back into the order being pulled)
 * gives up up to the nearest GROUP, which goes on; the operations are
 * pulled again later as plain nodes. */
enum { F_NODE, F_GNODE, F_GROUP };

typedef struct bframe {
	int32_t x;   /* node, or group (its root) */
	int32_t i;   /* next predecessor, or member */
	int8_t type;
	int8_t phase; /* GROUP: 0 outside needs, 1 sinks, 2 the rest */
	int8_t wait;  /* GNODE: its node's NODE frame is pushed */
} bframe;

typedef struct band {
	const ds_graph *g;
	int32_t *ps;		   /* predecessors: the group's first */
	const int32_t *rank;
	const int32_t *grp;	   /* group root per node, -1: none */
	int32_t *moff, *mem;	   /* members per group root, band order */
	uint8_t *state;		   /* 0 new, 1 on a NODE frame, 2 out */
	uint8_t *started;	   /* per group root */
	int32_t *left;		   /* predecessors not out yet */
	int32_t *work;		   /* FREEs to emit */
	bframe *st;
	int32_t sp;
	bool abort;
	int32_t *out, len;
} band;

static void band_emit(band *b, int32_t x)
{
	const ds_graph *g = b->g;
	int32_t wl = 0, wr = 0;
	b->work[wr++] = x;
	b->state[x] = 2;
	while (wl < wr) {
		int32_t z = b->work[wl++], w0 = wr;
		b->out[b->len++] = z;
		for (int32_t k = g->succ_off[z]; k < g->succ_off[z + 1]; k++) {
			int32_t s = g->succ[k];
			if (--b->left[s] == 0 && !b->state[s] &&
			    g->kind[s] == DS_FREE) {
				b->state[s] = 2;
				b->work[wr++] = s;
			}
		}
		/* the FREEs z completes by rank, not in the Ids' order of
		 * the succ list (as many as z's buffers: an insertion
		 * sort) */
		for (int32_t i = w0 + 1; i < wr; i++) {
			int32_t t = b->work[i], j = i;
			for (; j > w0 && b->rank[b->work[j - 1]] > b->rank[t];
			     j--)
				b->work[j] = b->work[j - 1];
			b->work[j] = t;
		}
	}
}

/* Pushes what pulls x: its group, or x itself; false when x can only
 * wait (on a frame below). */
static bool band_push(band *b, int32_t x, bool plain)
{
	int32_t r = b->grp[x];
	if (!plain && r >= 0 && !b->started[r]) {
		b->started[r] = 1;
		b->st[b->sp++] = (bframe){r, b->moff[r], F_GROUP, 0, 0};
		return true;
	}
	if (b->state[x])
		return false;
	b->state[x] = 1;
	b->st[b->sp++] = (bframe){x, b->g->pred_off[x], F_NODE, 0, 0};
	return true;
}

/* A give-up in progress: frames up to the nearest GROUP are dropped (a
 * NODE's node is new again); there the member in hand waits. */
static void band_unwind(band *b, bframe *f)
{
	if (f->type != F_GROUP) {
		if (f->type == F_NODE)
			b->state[f->x] = 0;
		b->sp--;
		return;
	}
	b->abort = false;
	if (f->phase == 0)
		f->i++;
}

/* A NODE: its next predecessor not out is pulled; with none left, the
 * node goes out. */
static void band_step_node(band *b, bframe *f)
{
	const ds_graph *g = b->g;
	int32_t x = f->x;
	if (f->i == g->pred_off[x + 1]) {
		b->sp--;
		band_emit(b, x);
		return;
	}
	int32_t p = b->ps[f->i];
	if (b->state[p] == 2)
		f->i++;
	else if (!band_push(b, p, false))
		b->abort = true; /* p is a puller of x */
}

/* A GNODE: its predecessors inside the group first (GNODEs), then its
 * node as a plain NODE. */
static void band_step_gnode(band *b, bframe *f)
{
	const ds_graph *g = b->g;
	int32_t x = f->x;
	if (f->wait || b->state[x] == 2) {
		b->sp--;
		return;
	}
	int32_t p = f->i < g->pred_off[x + 1] ? b->ps[f->i] : -1;
	if (p >= 0 && b->grp[p] == b->grp[x]) {
		f->i++;
		if (b->state[p] != 2)
			b->st[b->sp++] =
				(bframe){p, g->pred_off[p], F_GNODE, 0, 0};
		return;
	}
	f->wait = 1;
	if (!band_push(b, x, true))
		b->abort = true;
}

/* A GROUP's phase 0 at member y: what the group needs from outside; the
 * ALLOCs wait for their users. */
static void band_group_needs(band *b, bframe *f, int32_t y)
{
	const ds_graph *g = b->g;
	int32_t k = g->pred_off[y], end_p = g->pred_off[y + 1];
	for (; k < end_p; k++) {
		int32_t p = b->ps[k];
		if (b->grp[p] != f->x && b->state[p] != 2 &&
		    g->kind[p] != DS_ALLOC)
			break;
	}
	/* a need already being pulled below is not one the group can meet
	 * first: the member waits */
	if (k == end_p || !band_push(b, b->ps[k], false))
		f->i++;
}

/* A GROUP: member by member, its outside needs (phase 0), its sinks as
 * GNODEs (phase 1), then the rest (phase 2). */
static void band_step_group(band *b, bframe *f)
{
	const ds_graph *g = b->g;
	int32_t r = f->x;
	if (f->i == b->moff[r + 1]) {
		if (f->phase == 2) {
			b->sp--;
			return;
		}
		f->phase++;
		f->i = b->moff[r];
		return;
	}
	int32_t y = b->mem[f->i];
	if (f->phase == 0) {
		band_group_needs(b, f, y);
		return;
	}
	f->i++;
	if (b->state[y] == 2)
		return;
	if (f->phase == 2) {
		band_push(b, y, true);
		return;
	}
	bool sink = true;
	for (int32_t k = g->succ_off[y]; k < g->succ_off[y + 1] && sink; k++)
		sink = b->grp[g->succ[k]] != r;
	if (sink)
		b->st[b->sp++] = (bframe){y, g->pred_off[y], F_GNODE, 0, 0};
}

static void band_run(band *b)
{
	while (b->sp > 0) {
		bframe *f = &b->st[b->sp - 1];
		if (b->abort)
			band_unwind(b, f);
		else if (f->type == F_NODE)
			band_step_node(b, f);
		else if (f->type == F_GNODE)
			band_step_gnode(b, f);
		else
			band_step_group(b, f);
	}
}

/* Lists longer than this are sorted by qsort, the others by insertion:
 * most predecessor lists hold a few entries.  Not tuned. */
#define BAND_LIST_INSERT 32

/* Sorts k[0..n), one list's keys (comp alike), as bkey_cmp orders them. */
static void band_sort_list(bkey *k, int32_t n)
{
	if (n > BAND_LIST_INSERT) {
		qsort(k, (size_t)n, sizeof *k, bkey_cmp);
		return;
	}
	for (int32_t i = 1; i < n; i++) {
		bkey y = k[i];
		int32_t j = i;
		while (j > 0 && bkey_cmp(&y, &k[j - 1]) < 0) {
			k[j] = k[j - 1];
			j--;
		}
		k[j] = y;
	}
}

/* Each node's predecessor list into b->ps, sorted: the group's first,
 * deepest first, then the others by place.  The edges' keys come grouped
 * by node (comp), the first field bkey_cmp compares, so each node's list
 * is sorted on its own: the same order as one qsort of all the edges, at
 * about half its cost. */
static void band_sort_preds(band *b, const int32_t *rank, const int64_t *pos,
			    const int32_t *dep, bkey *k)
{
	const ds_graph *g = b->g;
	const int32_t n = g->n, *grp = b->grp;
	for (int32_t x = 0; x < n; x++)
		for (int32_t j = g->pred_off[x]; j < g->pred_off[x + 1]; j++) {
			int32_t p = g->pred[j];
			bool same = grp[x] >= 0 && grp[p] == grp[x];
			k[j] = (bkey){same ? INT64_MIN / 2 - dep[p] : pos[p], x,
				      rank[p], p};
		}
	for (int32_t x = 0; x < n; x++)
		band_sort_list(k + g->pred_off[x],
			       g->pred_off[x + 1] - g->pred_off[x]);
	for (int64_t j = 0; j < g->pred_off[n]; j++)
		b->ps[j] = k[j].x;
}

/* Every node by place into k[0..n), the run's counters reset, and the
 * members of each group in that order (b->mem from b->moff[group]). */
static void band_by_place(band *b, const int32_t *rank, const int32_t *comp,
			  const int64_t *pos, bkey *k)
{
	const int32_t n = b->g->n, *grp = b->grp;
	int32_t *moff = b->moff;
	for (int32_t x = 0; x < n; x++) {
		k[x] = (bkey){pos[x], comp[x], rank[x], x};
		b->left[x] = b->g->pred_off[x + 1] - b->g->pred_off[x];
		b->state[x] = b->started[x] = 0;
		moff[x] = 0;
	}
	moff[n] = moff[n + 1] = 0;
	qsort(k, (size_t)n, sizeof *k, bkey_cmp);
	for (int32_t x = 0; x < n; x++)
		if (grp[x] >= 0)
			moff[grp[x] + 1]++;
	for (int32_t x = 0; x < n; x++)
		moff[x + 1] += moff[x];
	for (int32_t i = 0; i < n; i++) {
		int32_t x = k[i].x;
		if (grp[x] >= 0)
			b->mem[moff[grp[x]]++] = x;
	}
	for (int32_t x = n; x > 0; x--)
		moff[x] = moff[x - 1];
	moff[0] = 0;
}

/* One band order by pos[]: the predecessor lists sorted, the nodes by
 * place, then the operations in that order pull their ancestors, and
 * last what no operation needed. */
static void band_once(band *b, const int32_t *rank, const int32_t *comp,
		      const int64_t *pos, const int32_t *dep, bkey *k)
{
	const ds_graph *g = b->g;
	const int32_t n = g->n;
	band_sort_preds(b, rank, pos, dep, k);
	band_by_place(b, rank, comp, pos, k);
	b->len = 0;
	for (int pass = 0; pass < 2; pass++)
		for (int32_t i = 0; i < n; i++) {
			int32_t x = k[i].x;
			if (b->state[x] == 2 ||
			    (!pass && g->kind[x] != DS_OP))
				continue;
			band_push(b, x, false);
			band_run(b);
			DS_ASSERT(!b->abort);
			b->abort = false;
		}
#ifndef NDEBUG
	/* every node out once, after all its predecessors: the counters
	 * band_emit keeps end at zero (O(N), once per order) */
	for (int32_t x = 0; x < n; x++)
		DS_ASSERT(b->state[x] == 2 && b->left[x] == 0);
#endif
}

static int32_t uf_find(int32_t *par, int32_t x)
{
	while (par[x] != x) {
		par[x] = par[par[x]];
		x = par[x];
	}
	return x;
}

/* The scratch of one ds_band_order, all from one arena: per node the
 * distances (du: then the position along the long axis; dv: then the
 * depth inside the L0 group), the component, and the pull's arrays. */
typedef struct bscratch {
	int32_t *du, *dv, *comp, *mark, *queue, *grp;
	int64_t *pos;
	bkey *k;
} bscratch;

/* Per component, the long axis: a sweep from its least-ranked node finds
 * one end u, a sweep from u the other end v; a node's position (in du
 * from then on) is how much nearer u than v it is (the other way when
 * rev), the components numbered by their least rank.  left[] is
 * scratch. */
static void band_axes(const ds_graph *g, const int32_t *rank, bool rev,
		      bscratch *s, int32_t *left)
{
	const int32_t n = g->n;
	for (int32_t x = 0; x < n; x++) {
		left[rank[x]] = x; /* the nodes by rank */
		s->mark[x] = -1;
	}
	int32_t ncomp = 0, stamp = 0;
	for (int32_t i = 0; i < n; i++) {
		int32_t x0 = left[i], len;
		if (s->mark[x0] >= 0)
			continue;
		int32_t u = band_bfs(g, rank, x0, s->du, s->mark, stamp++,
				     s->queue, &len);
		u = band_bfs(g, rank, u, s->du, s->mark, stamp++, s->queue,
			     &len);
		band_bfs(g, rank, u, s->dv, s->mark, stamp++, s->queue, &len);
		for (int32_t j = 0; j < len; j++) {
			int32_t x = s->queue[j];
			s->comp[x] = ncomp;
			s->du[x] = rev ? s->dv[x] - s->du[x]
				       : s->du[x] - s->dv[x];
		}
		ncomp++;
	}
}

/* The L0 groups: operations sharing L0 buffers (union-find in mark, then
 * the root per member in grp, -1 for the others); the depth inside the
 * group in dv. */
static void band_groups(const ds_graph *g, bscratch *s)
{
	const int32_t n = g->n;
	int32_t *mark = s->mark, *grp = s->grp;
	for (int32_t x = 0; x < n; x++) {
		mark[x] = x;
		grp[x] = -1;
	}
	for (int32_t b = 0; b < g->nbuf; b++) {
		if (ds_mem_stays(g->buf_mem[b]))
			continue;
		for (int32_t j = g->user_off[b]; j < g->user_off[b + 1]; j++) {
			int32_t u = uf_find(mark, g->user[j]);
			int32_t v = uf_find(mark, g->user[g->user_off[b]]);
			mark[u] = v;
			grp[g->user[j]] = 0;
		}
	}
	for (int32_t x = 0; x < n; x++)
		if (grp[x] == 0)
			grp[x] = uf_find(mark, x);
	for (int32_t i = 0; i < n; i++) {
		int32_t x = g->topo[i], d = 0;
		for (int32_t j = g->pred_off[x]; j < g->pred_off[x + 1]; j++) {
			int32_t p = g->pred[j];
			if (grp[x] >= 0 && grp[p] == grp[x] && s->dv[p] > d)
				d = s->dv[p];
		}
		s->dv[x] = d + 1;
	}
}

/* Smoothing: each node to the mean place of itself and its neighbours in
 * the last order out (in 1/1024). */
static void band_smooth(const ds_graph *g, const int32_t *out, bscratch *s)
{
	int32_t *at = s->mark;
	for (int32_t i = 0; i < g->n; i++)
		at[out[i]] = i;
	for (int32_t x = 0; x < g->n; x++) {
		int64_t sum = at[x], cnt = 1;
		for (int dir = 0; dir < 2; dir++) {
			const int32_t *off = dir ? g->succ_off : g->pred_off;
			const int32_t *adj = dir ? g->succ : g->pred;
			for (int32_t j = off[x]; j < off[x + 1]; j++, cnt++)
				sum += at[adj[j]];
		}
		s->pos[x] = sum * 1024 / cnt;
	}
}

int ds_band_order(const ds_graph *g, const int32_t *rank, bool rev,
		  int smooth, int32_t *out, ds_err *e)
{
	const int32_t n = g->n;
	const size_t n1 = (size_t)n + 1, ne = (size_t)g->pred_off[n];
	ds_arena a;
	ds_arena_init(&a, g->heap);
	bscratch s;
	s.du = ds_arena_alloc(&a, n1, sizeof *s.du);
	s.dv = ds_arena_alloc(&a, n1, sizeof *s.dv);
	s.comp = ds_arena_alloc(&a, n1, sizeof *s.comp);
	s.mark = ds_arena_alloc(&a, n1, sizeof *s.mark);
	s.queue = ds_arena_alloc(&a, n1, sizeof *s.queue);
	s.grp = ds_arena_alloc(&a, n1, sizeof *s.grp);
	s.pos = ds_arena_alloc(&a, n1, sizeof *s.pos);
	s.k = ds_arena_alloc(&a, (ne > n1 ? ne : n1) + 1, sizeof *s.k);
	band b = {
		.g = g,
		.ps = ds_arena_alloc(&a, ne + 1, sizeof *b.ps),
		.rank = rank,
		.grp = s.grp,
		.moff = ds_arena_alloc(&a, n1 + 1, sizeof *b.moff),
		.mem = ds_arena_alloc(&a, n1, sizeof *b.mem),
		.state = ds_arena_alloc(&a, n1, sizeof *b.state),
		.started = ds_arena_alloc(&a, n1, sizeof *b.started),
		.left = ds_arena_alloc(&a, n1, sizeof *b.left),
		.work = s.queue,
		.st = ds_arena_alloc(&a, 3 * n1, sizeof *b.st),
		.out = out,
	};
	if (a.failed) {
		ds_arena_free(&a);
		return ds_fail(e, DS_ENOMEM, "out of memory");
	}
	band_axes(g, rank, rev, &s, b.left);
	band_groups(g, &s);
	for (int32_t x = 0; x < n; x++)
		s.pos[x] = s.du[x];
	for (int round = 0; round <= smooth; round++) {
		if (round > 0)
			band_smooth(g, out, &s);
		band_once(&b, rank, s.comp, s.pos, s.dv, s.k);
		/* a give-up always ends at a GROUP frame (else the graph
		 * had a cycle), so every node is out; the topological
		 * order all the same should that ever fail */
		DS_ASSERT(b.len == n);
		if (b.len != n) {
			memcpy(out, g->topo, (size_t)n * sizeof *out);
			break;
		}
	}
	ds_arena_free(&a);
	return DS_OK;
}
