/* ds_place.c: placement and spilling over a fixed order (the allocator
 * shared by the baselines and stage 2).
 *
 * Requires: a topological order of the graph's n nodes, and a graph whose
 * every operation's buffers fit together in each memory (both checked
 * here: DS_EINPUT otherwise).
 * Guarantees: a plan (order with spill nodes inserted, one offset per
 * buffer, spills with their new offsets) that ds_replay accepts: buffers
 * never overlap while resident, every buffer is resident when an operation
 * uses it and at its FREE.  SPILL_OUT nodes stand right before the node that
 * needed the space, SPILL_IN right before the node that needs the buffer.
 *
 * Each memory's resident buffers sit in a plain array sorted by offset: a
 * memory holds at most capacity/min-size buffers (a few hundred here), and a
 * scan of that array is both the simplest and, at this size, the fastest
 * way to find a hole or a window of victims.
 *
 * Victims (ds_place_opts.victim): the window whose nearest next use is
 * furthest (FURTHEST), the least traffic over distance (COST), or AGED:
 * among the windows FURTHEST scores within tie_pct percent of its best,
 * the one whose victims' last uses lie furthest back in the order, so
 * that a SPILL_OUT need not wait for a use that has just run (the
 * traffic may differ from FURTHEST's either way).
 *
 * Cost: O(N + E) to prepare, then O(R) per placement and O(R W) per
 * spill decision (twice that with AGED), R the number of resident
 * buffers in that memory and W the most buffers one window overlaps;
 * each buffer's next use and score are found once per decision
 * (window_terms), the O(R W) part only adds them up. */
#include "ds_stage.h"

#include <string.h>

enum { ST_NONE, ST_RESIDENT, ST_SPILLED, ST_FREED };

typedef struct slot {
	int64_t lo;
	int32_t buf;
} slot;

typedef struct placer {
	const ds_graph *g;
	const ds_place_opts *o;
	const ds_heap *h;
	ds_err *e;
	/* per buffer */
	uint8_t *state;
	int64_t *off;
	ds_uses uses;			     /* along the order */
	int32_t *mark;			     /* protection stamp */
	/* per memory: resident buffers sorted by offset */
	slot *res[DS_NMEM];
	int32_t nres[DS_NMEM];
	/* output */
	ds_plan *p;
	int64_t cap_order, cap_spill;
	int32_t *open_spill; /* per buffer: spill index awaiting SPILL_IN */
	int32_t now;	     /* position in the input order */
	/* per resident buffer of the memory pick_window works on, by index
	 * in res[]: what window_cost reads (window_terms) */
	double *wval;	  /* COST: traffic over distance; else distance */
	int32_t *wsince;  /* positions since its last use */
	uint8_t *wprot;	  /* protected (marked now) */
} placer;

static int emit(placer *s, int32_t v)
{
	ds_plan *p = s->p;
	if (ds_reserve(s->h, (void **)&p->order, &s->cap_order,
		       (int64_t)p->len + 1, sizeof *p->order, s->e))
		return DS_ENOMEM;
	p->order[p->len++] = v;
	return DS_OK;
}

/* ---- each buffer's uses along the order (ds_uses, ds_pack.c's too) ---- */

bool ds_uses_init(ds_uses *u, const ds_graph *g, const int32_t *order,
		  ds_arena *a)
{
	const size_t nb = (size_t)g->nbuf;
	u->off = ds_arena_alloc(a, nb + 1, sizeof *u->off);
	u->ptr = ds_arena_alloc(a, nb, sizeof *u->ptr);
	u->pos = ds_arena_alloc(a, (size_t)g->use_off[g->n] + nb,
				sizeof *u->pos);
	if (a->failed)
		return false;
	for (int32_t i = 0; i < g->n; i++) {
		int32_t v = order[i];
		if (g->kind[v] == DS_FREE)
			u->off[g->buf[v] + 1]++;
		for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++)
			u->off[g->use[k] + 1]++;
	}
	for (int32_t b = 0; b < g->nbuf; b++) {
		u->off[b + 1] += u->off[b];
		u->ptr[b] = u->off[b];
	}
	for (int32_t i = 0; i < g->n; i++) {
		int32_t v = order[i];
		if (g->kind[v] == DS_FREE)
			u->pos[u->ptr[g->buf[v]]++] = i;
		for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++)
			u->pos[u->ptr[g->use[k]]++] = i;
	}
	ds_uses_rewind(u, g);
	return true;
}

void ds_uses_rewind(ds_uses *u, const ds_graph *g)
{
	for (int32_t b = 0; b < g->nbuf; b++)
		u->ptr[b] = u->off[b];
}

int32_t ds_uses_next(ds_uses *u, int32_t b, int32_t now)
{
	int32_t k = u->ptr[b];
	while (k < u->off[b + 1] && u->pos[k] < now)
		k++;
	u->ptr[b] = k;
	return k < u->off[b + 1] ? u->pos[k] : INT32_MAX;
}

int32_t ds_uses_prev(const ds_uses *u, int32_t b)
{
	int32_t k = u->ptr[b];
	return k > u->off[b] ? u->pos[k - 1] : -1;
}

/* Position of b's next use (an operation or its FREE) at or after now. */
static int32_t next_use(placer *s, int32_t b)
{
	return ds_uses_next(&s->uses, b, s->now);
}

/* Position of b's last use (an operation) before now, -1 when none: call
 * after next_use, which moves its pointer past the uses before now. */
static int32_t prev_use(const placer *s, int32_t b)
{
	return ds_uses_prev(&s->uses, b);
}

static void res_insert(placer *s, int m, int32_t b, int64_t lo)
{
	slot *r = s->res[m];
	int32_t i = s->nres[m];
	while (i > 0 && r[i - 1].lo > lo) {
		r[i] = r[i - 1];
		i--;
	}
	r[i] = (slot){lo, b};
	s->nres[m]++;
	s->state[b] = ST_RESIDENT;
	s->off[b] = lo;
}

static void res_remove(placer *s, int m, int32_t b)
{
	slot *r = s->res[m];
	int32_t i = 0;
	/* b is resident: the order constraints put every FREE after its
	 * ALLOC (the fuzzers once found a graph where it was not) */
	while (i < s->nres[m] && r[i].buf != b)
		i++;
	DS_ASSERT(i < s->nres[m]);
	memmove(r + i, r + i + 1, (size_t)(s->nres[m] - i - 1) * sizeof *r);
	s->nres[m]--;
}

/* A hole of at least size bytes by the fit policy, or -1. */
static int64_t find_hole(placer *s, int m, int64_t size)
{
	const slot *r = s->res[m];
	int64_t cap = s->g->caps.cap[m], best = -1, best_len = INT64_MAX;
	int64_t at = 0;
	for (int32_t i = 0; i <= s->nres[m]; i++) {
		int64_t end = i < s->nres[m] ? r[i].lo : cap;
		int64_t len = end - at;
		if (len >= size) {
			if (s->o->fit == DS_FIRST_FIT)
				return at;
			if (len < best_len)
				best = at, best_len = len;
		}
		if (i < s->nres[m])
			at = r[i].lo + s->g->buf_size[r[i].buf];
	}
	return best;
}

static int spill_out(placer *s, int m, int32_t b)
{
	ds_plan *p = s->p;
	if (ds_reserve(s->h, (void **)&p->spill, &s->cap_spill,
		       (int64_t)p->nspill + 1, sizeof *p->spill, s->e))
		return DS_ENOMEM;
	int32_t k = p->nspill++;
	p->spill[k] = (ds_spill){b, -1};
	s->open_spill[b] = k;
	res_remove(s, m, b);
	s->state[b] = ST_SPILLED;
	return emit(s, s->g->n + 2 * k);
}

/* What window_cost reads of each resident buffer of m, computed once per
 * pick_window rather than once per window overlapping it (a buffer's next
 * use does not change while now stays; next_use only moves its pointer
 * past uses before now, which any later call would do too). */
static void window_terms(placer *s, int m)
{
	const ds_graph *g = s->g;
	const slot *r = s->res[m];
	for (int32_t i = 0; i < s->nres[m]; i++) {
		int32_t b = r[i].buf;
		int32_t nu = next_use(s, b);
		double dist = (double)nu - s->now + 1;
		s->wprot[i] = s->mark[b] == s->now;
		s->wsince[i] = s->now - prev_use(s, b);
		s->wval[i] = s->o->victim != DS_VICTIM_COST
				     ? dist
				     : (double)ds_spill_traffic(g, b) / dist;
	}
}

/* Score of spilling the buffers overlapping [x, x+size): lower is better;
 * -1 when a protected buffer is in the way.  *bytes gets the bytes
 * they hold, the tie-break; *age the fewest positions since one of them
 * was last used.  *from: no resident buffer before index *from ends after
 * x; it moves on to the first that does, so a caller trying windows by
 * increasing x scans each buffer once (resident buffers do not overlap,
 * so their ends grow with their starts). */
static double window_cost(placer *s, int m, int64_t x, int64_t size,
			  int64_t *bytes, int32_t *age, int32_t *from)
{
	const ds_graph *g = s->g;
	const slot *r = s->res[m];
	double cost = 0, nearest = INT32_MAX;
	*bytes = 0;
	*age = INT32_MAX;
	int32_t a = *from;
	while (a < s->nres[m] && r[a].lo + g->buf_size[r[a].buf] <= x)
		a++;
	*from = a;
	for (int32_t i = a; i < s->nres[m] && r[i].lo < x + size; i++) {
		if (s->wprot[i])
			return -1;
		*bytes += g->buf_size[r[i].buf];
		if (s->wsince[i] < *age)
			*age = s->wsince[i];
		if (s->o->victim != DS_VICTIM_COST) {
			if (s->wval[i] < nearest)
				nearest = s->wval[i];
		} else {
			cost += s->wval[i];
		}
	}
	if (s->o->victim != DS_VICTIM_COST)
		return 1.0 / nearest; /* furthest nearest use first */
	return cost;
}

/* Candidate window i of m for size bytes: windows start at 0 or a
 * buffer's end (i < nres), or end at a buffer's start or the capacity:
 * two runs of increasing starts (see window_cost's from); -1 when it
 * does not fit in m. */
static int64_t window_at(const placer *s, int m, int64_t size, int32_t i)
{
	const ds_graph *g = s->g;
	int32_t nr = s->nres[m];
	int64_t cand, cap = g->caps.cap[m];
	if (i < 0)
		cand = 0;
	else if (i < nr)
		cand = s->res[m][i].lo + g->buf_size[s->res[m][i].buf];
	else if (i < 2 * nr)
		cand = s->res[m][i - nr].lo - size;
	else
		cand = cap - size;
	return cand < 0 || cand + size > cap ? -1 : cand;
}

/* The window of m to spill for size bytes: the least score, then the
 * fewest bytes, then the lowest offset; -1 when every window holds a
 * protected buffer.  DS_VICTIM_AGED then takes, among the windows scoring
 * at most tie_pct percent above that, the one whose victims were used
 * longest ago (then the same order). */
static int64_t pick_window(placer *s, int m, int64_t size)
{
	double best = -1;
	int64_t best_bytes = 0, x = -1;
	int32_t best_age = 0;
	const int32_t nw = 2 * s->nres[m] + 1;
	window_terms(s, m);
	for (int pass = 0; pass < 2; pass++) {
		const double lim = best * (1 + s->o->tie_pct / 100.0);
		int32_t from = 0;
		for (int32_t i = -1; i < nw; i++) {
			if (i == s->nres[m])
				from = 0; /* the second run of starts */
			int64_t cand = window_at(s, m, size, i), bytes;
			int32_t age;
			double c = cand < 0 ? -1
					    : window_cost(s, m, cand, size,
							  &bytes, &age, &from);
			if (c < 0 || (pass == 1 && (c > lim || age < best_age)))
				continue;
			if (pass == 1 && age > best_age) {
				best_age = age;
				best = c;
				best_bytes = bytes;
				x = cand;
			} else if (best < 0 || c < best ||
				   (c == best &&
				    (bytes < best_bytes ||
				     (bytes == best_bytes && cand < x)))) {
				best = c;
				best_bytes = bytes;
				x = cand;
				if (pass == 0)
					best_age = age;
			}
		}
		if (x < 0 || s->o->victim != DS_VICTIM_AGED)
			break;
	}
	return x;
}

static int place(placer *s, int32_t b, int64_t *at);

/* The next protected buffer of m to bring back in repack: the largest,
 * then the one used soonest (BufId only breaks exact ties, so the layout
 * does not depend on the numbering); -1 when none is left. */
static int32_t repack_next(placer *s, int m, int32_t except)
{
	const ds_graph *g = s->g;
	int32_t best = -1, best_nu = 0;
	for (int32_t b = 0; b < g->nbuf; b++) {
		if (b == except || s->mark[b] != s->now || g->buf_mem[b] != m ||
		    s->state[b] != ST_SPILLED)
			continue;
		int32_t nu = next_use(s, b);
		if (best < 0 || g->buf_size[b] > g->buf_size[best] ||
		    (g->buf_size[b] == g->buf_size[best] && nu < best_nu)) {
			best = b;
			best_nu = nu;
		}
	}
	return best;
}

/* No window avoids the protected buffers: spill everything in m and bring
 * the protected ones back packed from offset 0, largest first.  They fit,
 * since every operation's buffers fit together (checked up front).
 * O(k B) for k protected buffers among B. */
static int repack(placer *s, int m, int32_t except)
{
	int rc;
	while (s->nres[m] > 0)
		if ((rc = spill_out(s, m, s->res[m][0].buf)))
			return rc;
	for (int32_t b; (b = repack_next(s, m, except)) >= 0;) {
		int64_t at;
		if ((rc = place(s, b, &at)))
			return rc;
		int32_t k = s->open_spill[b];
		s->p->spill[k].offset = at;
		s->open_spill[b] = -1;
		if ((rc = emit(s, s->g->n + 2 * k + 1)))
			return rc;
	}
	return DS_OK;
}

/* Finds room for b in its memory, spilling victims when needed; b becomes
 * resident at *at.  Buffers marked with the current stamp are never
 * victims. */
static int place(placer *s, int32_t b, int64_t *at)
{
	const ds_graph *g = s->g;
	int m = g->buf_mem[b];
	int64_t size = g->buf_size[b];
	int64_t x = find_hole(s, m, size);
	if (x < 0) {
		x = pick_window(s, m, size);
		int rc;
		if (x < 0) {
			s->mark[b] = s->now;
			if ((rc = repack(s, m, b)))
				return rc;
			x = find_hole(s, m, size);
		} else {
			/* spill the victims in the chosen window */
			for (int32_t i = 0; i < s->nres[m];) {
				int32_t v = s->res[m][i].buf;
				int64_t lo = s->res[m][i].lo;
				if (lo < x + size && lo + g->buf_size[v] > x) {
					if ((rc = spill_out(s, m, v)))
						return rc;
				} else {
					i++;
				}
			}
		}
		DS_ASSERT(x >= 0 && find_hole(s, m, size) >= 0);
	}
	res_insert(s, m, b, x);
	*at = x;
	return DS_OK;
}

/* Makes every buffer of node v resident (SPILL_IN what was spilled). */
static int reload(placer *s, int32_t v, const int32_t *bufs, int32_t nb)
{
	(void)v;
	for (int32_t k = 0; k < nb; k++)
		s->mark[bufs[k]] = s->now;
	for (int32_t k = 0; k < nb; k++) {
		int32_t b = bufs[k];
		if (s->state[b] != ST_SPILLED)
			continue;
		int64_t at;
		int rc = place(s, b, &at);
		if (rc)
			return rc;
		int32_t sk = s->open_spill[b];
		s->p->spill[sk].offset = at;
		s->open_spill[b] = -1;
		if ((rc = emit(s, s->g->n + 2 * sk + 1)))
			return rc;
	}
	return DS_OK;
}

int ds_check_fits(const ds_graph *g, ds_err *e)
{
	for (int32_t v = 0; v < g->n; v++) {
		int64_t need[DS_NMEM] = {0};
		for (int32_t k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
			int32_t b = g->use[k];
			int m = g->buf_mem[b];
			need[m] += g->buf_size[b];
			if (need[m] > g->caps.cap[m])
				return ds_fail(e, DS_EINPUT,
					       "%s: node %d (%s) needs %lld "
					       "bytes of %s at once, more than "
					       "its capacity %lld",
					       g->source, v, g->ops[g->op[v]],
					       (long long)need[m],
					       ds_mem_names[m],
					       (long long)g->caps.cap[m]);
		}
	}
	return DS_OK;
}

/* The scratch of s from arena a (the uses along order), and the plan's
 * offsets; false when one failed. */
static bool place_alloc(placer *s, const int32_t *order, ds_arena *a)
{
	const ds_graph *g = s->g;
	const size_t nb = (size_t)g->nbuf;
	s->state = ds_arena_alloc(a, nb, 1);
	s->off = ds_arena_alloc(a, nb, sizeof *s->off);
	s->mark = ds_arena_alloc(a, nb, sizeof *s->mark);
	s->wval = ds_arena_alloc(a, nb, sizeof *s->wval);
	s->wsince = ds_arena_alloc(a, nb, sizeof *s->wsince);
	s->wprot = ds_arena_alloc(a, nb, 1);
	s->open_spill = ds_arena_alloc(a, nb, sizeof *s->open_spill);
	for (int m = 0; m < DS_NMEM; m++)
		s->res[m] = ds_arena_alloc(a, nb, sizeof *s->res[m]);
	if (a->failed || !ds_uses_init(&s->uses, g, order, a))
		return false;
	for (size_t b = 0; b < nb; b++) {
		s->mark[b] = -1;
		s->open_spill[b] = -1;
	}
	s->p->offset = ds_alloc(s->h, nb, sizeof *s->p->offset);
	return s->p->offset != NULL;
}

/* Node v at position i of the order: an ALLOC is placed, a FREE's buffer
 * (back first if spilled) leaves, an operation's buffers come back. */
static int place_node(placer *s, int32_t v, int32_t i)
{
	const ds_graph *g = s->g;
	int rc;
	s->now = i;
	if (g->kind[v] == DS_ALLOC) {
		int32_t b = g->buf[v];
		s->mark[b] = i;
		rc = place(s, b, &s->p->offset[b]);
	} else if (g->kind[v] == DS_FREE) {
		int32_t b = g->buf[v];
		/* a spilled buffer must be back before its FREE */
		rc = reload(s, v, &b, 1);
		if (rc == DS_OK) {
			res_remove(s, g->buf_mem[b], b);
			s->state[b] = ST_FREED;
		}
	} else {
		rc = reload(s, v, g->use + g->use_off[v],
			    g->use_off[v + 1] - g->use_off[v]);
	}
	return rc == DS_OK ? emit(s, v) : rc;
}

int ds_place_check(const ds_graph *g, const int32_t *order, ds_err *e)
{
	int rc = ds_order_check(g, order, "placement", e);
	return rc ? rc : ds_check_fits(g, e);
}

int ds_place(const ds_graph *g, const int32_t *order,
	     const ds_place_opts *o, ds_plan *out, ds_err *e)
{
	memset(out, 0, sizeof *out);
	int rc = ds_place_check(g, order, e);
	if (rc)
		return rc;
	ds_arena a;
	ds_arena_init(&a, g->heap);
	placer s = {.g = g, .o = o, .h = g->heap, .e = e, .p = out};
	if (!place_alloc(&s, order, &a)) {
		rc = ds_fail(e, DS_ENOMEM, "out of memory");
	} else {
		for (int32_t i = 0; i < g->n && rc == DS_OK; i++)
			rc = place_node(&s, order[i], i);
	}
	ds_arena_free(&a);
	if (rc)
		ds_plan_free(g->heap, out);
	return rc;
}
