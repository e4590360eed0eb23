/* late_layers.c: the least span of Conv_Case0's last three layers for each
 * number of spills, in a model of them (issue 14; an analysis tool, not
 * part of dansched; build: cc -O2 -o late_layers scripts/late_layers.c).
 *
 * The layers: three of four chains each; a chain accumulates into a
 * 1,536-byte L1 buffer (the accumulator) four CONVs of 3,505, 3,771, 3,771
 * and 3,506 cycles, CONV k reading the layer's k-th 768-byte input, and
 * its last CONV writes the chain's 768-byte output: chain c's output is
 * the next layer's input c (the last layer's outputs go out by a COPY_OUT
 * of 1,778 cycles).  In Conv_Case0 they are the accumulators 712-718,
 * 752-758 and 792-798, the inputs 671-677, 711-717 and 751-757 and the
 * outputs 791-797 (`dansched schedule` puts them from cycle 191,265 on).
 *
 * The model: L1 counted in 768-byte units, 5 of them (3,840 <= 4,096 <
 * 4,608), an accumulator two, from its chain's first CONV's start to its
 * last CONV's finish; chains run one at a time (two accumulators, a last
 * CONV's input and its output need 6 units) in any order within a layer;
 * a spill is a SPILL_OUT on MTE3 and a SPILL_IN on MTE2 of 1,686 cycles
 * each (2 * 768 + 150), its SPILL_IN into a unit free by then (the unit's
 * previous occupant ended: FREE after its last use, SPILL_OUT or COPY_OUT
 * finished); the weights (a 144-byte L1 buffer and a COPY_IN of 357 cycles
 * per CONV, which fit in the 256 bytes left), MTE1 and the rest of the
 * graph are left out.  At the origin, the first late CONV's start, every
 * pipe is free and each first-layer input is resident or already in DDR,
 * one spill each.  The search is exact for the model: a dynamic program
 * over the CONVs in order, between two CONVs any evictions (MTE3, in any
 * order) then any reloads (MTE2, any order, into any free unit), each
 * timed as early as its pipe, its data and its unit allow, keeping every
 * state no other state with the same buffers and positions matches or
 * beats in every time and in spills (times that no longer bind clamped).
 * States that cannot end below UB (their CUBE time plus the CONV work
 * left) are dropped.
 *
 * usage: late_layers SPILLS UB [--start any|1|2|3] [--reserve] [--trace]
 *   prints, for each number of spills up to SPILLS, the least span (last
 *   CONV's finish) below UB;
 *   --start 1 to 3: only the start with that many first-layer inputs
 *   resident (2: what `dansched schedule` has at 191,265; default any);
 *   --reserve: an accumulator's two units are never free between chains
 *   (a layout that keeps every accumulator at one address);
 *   --trace: the best plan with SPILLS spills, and whether its occupancies
 *   fit five 768-byte positions with each accumulator on two adjacent
 *   ones (a layout exists for it; checked by backtracking).
 *
 * Measured 2026-12-04 (`late_layers 26 216000 --start 2`, and with
 * --reserve): spills 24, 25, 26 give 210,226, 205,168, 200,110 cycles;
 * with --reserve 216,786, 211,728, 206,670 (the beam search of session 27
 * found these); dansched's plan spans 212,423 with 25 (191,265 to
 * 403,688).  --trace at 24, 25 and 26: a layout exists.  The plan at 25,
 * run in a full plan by scripts/late_layers_plan.py: 398,474 cycles at
 * 43,008 bytes and 31 spills (dansched's: 405,466 at the same), valid
 * under `dansched eval` and the referee. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int32_t T[4] = {3505, 3771, 3771, 3506};
enum { XFER = 1686, COUT = 1778, CAP = 5, NB = 16 };

typedef struct {
	int8_t L, mask, c, k, nfree, sp, dead;
	int8_t stat[NB], used[NB]; /* stat: 0 none, 1 resident, 2 in DDR */
	int32_t ready[NB], last[NB], avail[NB];
	int32_t fr[CAP]; /* free units' free times, sorted */
	int32_t cube, m2, m3, hist;
} st;

typedef struct {
	int32_t parent, start, fin;
	char ty; /* I start, C conv, E evict, R reload, O copy out */
	int8_t b;
} ev;

typedef struct {
	int smax, ub, start, reserve;
	ev *h;
	int32_t nh, hcap;
} run;

typedef struct {
	st *v;
	int32_t *next, n, cap, hcap;
	uint64_t *hk;
	int32_t *head;
} front;

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p) {
		fprintf(stderr, "late_layers: out of memory\n");
		exit(1);
	}
	return p;
}

static int32_t imax(int32_t a, int32_t b) { return a > b ? a : b; }

static int32_t ev_push(run *r, int32_t parent, char ty, int b, int32_t s,
		       int32_t f)
{
	if (r->nh == r->hcap) {
		r->hcap = r->hcap ? 2 * r->hcap : 1 << 16;
		r->h = xrealloc(r->h, (size_t)r->hcap * sizeof *r->h);
	}
	r->h[r->nh] = (ev){parent, s, f, ty, (int8_t)b};
	return r->nh++;
}

/* Uses left of buffer b before CONV k of chain c of layer L (an output
 * of the last layer: its COPY_OUT). */
static int uses_left(int b, const st *s)
{
	if (b >= 12)
		return 1;
	int lb = b / 4, kb = b % 4, n = 0;
	if (lb != s->L)
		return lb > s->L ? 4 : 0;
	for (int ch = 0; ch < 4; ch++)
		if (!(s->mask >> ch & 1) && !(ch == s->c && s->k > kb))
			n++;
	return n;
}

static void sort_free(st *s)
{
	for (int i = 1; i < s->nfree; i++)
		for (int j = i; j > 0 && s->fr[j - 1] > s->fr[j]; j--) {
			int32_t t = s->fr[j];
			s->fr[j] = s->fr[j - 1], s->fr[j - 1] = t;
		}
}

/* Times that no longer bind clamped to the pipe that would wait for them,
 * so that equivalent states compare equal. */
static void normalise(st *s)
{
	int32_t lo = s->m2 < s->cube ? s->m2 : s->cube;
	for (int i = 0; i < s->nfree; i++)
		s->fr[i] = imax(s->fr[i], lo);
	sort_free(s);
	for (int b = 0; b < NB; b++) {
		if (s->stat[b] == 1) {
			s->ready[b] = imax(s->ready[b], s->cube);
			s->last[b] = imax(s->last[b], s->m3);
			s->avail[b] = 0;
			continue;
		}
		s->ready[b] = s->last[b] = 0, s->used[b] = 0;
		s->avail[b] = s->stat[b] == 2 ? imax(s->avail[b], s->m2) : 0;
	}
}

static uint64_t key(const st *s)
{
	uint64_t k = (uint64_t)s->L | (uint64_t)s->mask << 2 |
		     (uint64_t)(s->c + 1) << 6 | (uint64_t)s->k << 9;
	for (int b = 0; b < NB; b++)
		k |= (uint64_t)(s->stat[b] | s->used[b] << 2) << (11 + 3 * b);
	return k;
}

/* a matches or beats b in spills and every time (same key) */
static int covers(const st *a, const st *b)
{
	if (a->sp > b->sp || a->cube > b->cube || a->m2 > b->m2 ||
	    a->m3 > b->m3)
		return 0;
	for (int i = 0; i < a->nfree; i++)
		if (a->fr[i] > b->fr[i])
			return 0;
	for (int x = 0; x < NB; x++) {
		if (a->stat[x] == 1 &&
		    (a->ready[x] > b->ready[x] || a->last[x] > b->last[x]))
			return 0;
		if (a->stat[x] == 2 && a->avail[x] > b->avail[x])
			return 0;
	}
	return 1;
}

static void front_init(front *f)
{
	memset(f, 0, sizeof *f);
	f->hcap = 1 << 18;
	f->hk = xrealloc(NULL, (size_t)f->hcap * sizeof *f->hk);
	f->head = xrealloc(NULL, (size_t)f->hcap * sizeof *f->head);
	for (int32_t i = 0; i < f->hcap; i++)
		f->head[i] = -2; /* empty slot */
}

static void front_free(front *f)
{
	free(f->v), free(f->next), free(f->hk), free(f->head);
}

static int32_t front_slot(const front *f, uint64_t k)
{
	int32_t i = (int32_t)((k * 0x9E3779B97F4A7C15ull) >> 33) & (f->hcap - 1);
	while (f->head[i] != -2 && f->hk[i] != k)
		i = (i + 1) & (f->hcap - 1);
	return i;
}

/* The hash of keys twice as large. */
static void front_grow(front *f)
{
	int32_t oc = f->hcap, *oh = f->head;
	uint64_t *ok = f->hk;
	f->hcap *= 2;
	f->hk = xrealloc(NULL, (size_t)f->hcap * sizeof *f->hk);
	f->head = xrealloc(NULL, (size_t)f->hcap * sizeof *f->head);
	for (int32_t i = 0; i < f->hcap; i++)
		f->head[i] = -2;
	for (int32_t i = 0; i < oc; i++)
		if (oh[i] != -2) {
			int32_t j = front_slot(f, ok[i]);
			f->hk[j] = ok[i], f->head[j] = oh[i];
		}
	free(oh), free(ok);
}

/* Adds s unless a state of f covers it; drops the states s covers. */
static void front_add(front *f, st s)
{
	normalise(&s);
	uint64_t k = key(&s);
	int32_t i = front_slot(f, k);
	if (f->head[i] == -2)
		f->hk[i] = k, f->head[i] = -1;
	for (int32_t j = f->head[i]; j >= 0; j = f->next[j])
		if (!f->v[j].dead && covers(&f->v[j], &s))
			return;
	for (int32_t j = f->head[i]; j >= 0; j = f->next[j])
		if (!f->v[j].dead && covers(&s, &f->v[j]))
			f->v[j].dead = 1;
	if (f->n == f->cap) {
		f->cap = f->cap ? 2 * f->cap : 1024;
		f->v = xrealloc(f->v, (size_t)f->cap * sizeof *f->v);
		f->next = xrealloc(f->next, (size_t)f->cap * sizeof *f->next);
	}
	if (f->n > f->hcap / 2) {
		front_grow(f);
		i = front_slot(f, k);
	}
	s.dead = 0;
	f->v[f->n] = s;
	f->next[f->n] = f->head[i];
	f->head[i] = f->n++;
}

/* The least finish of the last CONV from s: its CUBE time (or when the
 * next CONV's input can be ready) plus the CONV work left. */
static int32_t bound(const st *s)
{
	if (s->L == 3)
		return s->cube;
	int32_t chain = T[0] + T[1] + T[2] + T[3], done = 0;
	for (int i = 0; s->c >= 0 && i < s->k; i++)
		done += T[i];
	int b = 4 * s->L + s->k;
	int32_t at = s->cube;
	if (s->stat[b] == 1)
		at = imax(at, s->ready[b]);
	else if (s->stat[b] == 2)
		at = imax(at, imax(s->m2, s->avail[b]) + XFER);
	int left = 4 * (2 - s->L) + 4 - __builtin_popcount((unsigned)s->mask);
	return at + chain * left - done;
}

static void put(run *r, front *f, const st *s)
{
	if (bound(s) < r->ub)
		front_add(f, *s);
}

/* CONV k of chain c: its input resident; the accumulator's two units at
 * k = 0 (unless reserved) and the output's unit at k = 3, chosen among
 * the free ones (every choice tried). */
static void conv(run *r, front *out, const st *s)
{
	int b = 4 * s->L + s->k;
	if (s->stat[b] != 1)
		return;
	int need = (s->k == 0 && !r->reserve ? 2 : 0) + (s->k == 3);
	if (s->nfree < need)
		return;
	int n = s->nfree;
	for (int i = 0; i < (need ? n : 1); i++)
		for (int j = need == 2 ? i + 1 : 0; j < (need == 2 ? n : 1); j++) {
			st t = *s;
			int32_t at = imax(s->cube, s->ready[b]);
			if (need >= 1)
				at = imax(at, s->fr[i]);
			if (need == 2)
				at = imax(at, s->fr[j]);
			t.nfree = 0;
			for (int q = 0; q < n; q++)
				if (!need || (q != i && (need < 2 || q != j)))
					t.fr[t.nfree++] = s->fr[q];
			int32_t fin = at + T[s->k];
			if (uses_left(b, s) == 1)
				t.stat[b] = 0, t.fr[t.nfree++] = fin;
			else
				t.last[b] = fin, t.used[b] = 1;
			t.cube = fin;
			t.hist = ev_push(r, s->hist, 'C',
					 s->L * 16 + s->c * 4 + s->k, at, fin);
			if (s->k == 3) {
				int o = 4 * (s->L + 1) + s->c;
				t.stat[o] = 1, t.used[o] = 1;
				t.ready[o] = t.last[o] = fin;
				if (!r->reserve)
					t.fr[t.nfree++] = fin, t.fr[t.nfree++] = fin;
				t.mask = (int8_t)(t.mask | 1 << s->c);
				t.c = -1, t.k = 0;
				if (t.mask == 15)
					t.L++, t.mask = 0;
			} else {
				t.k++;
			}
			put(r, out, &t);
		}
}

/* One eviction (a COPY_OUT for a last-layer output) of a used resident
 * buffer other than the next CONV's input. */
static void evict(run *r, front *f, const st *s)
{
	int nxt = 4 * s->L + s->k;
	for (int b = 0; b < NB; b++) {
		if (s->stat[b] != 1 || !s->used[b] || b == nxt)
			continue;
		int out = b >= 12;
		if (!out && s->sp >= r->smax)
			continue;
		st t = *s;
		int32_t at = imax(s->m3, s->last[b]);
		int32_t fin = at + (out ? COUT : XFER);
		t.stat[b] = out ? 0 : 2, t.avail[b] = fin, t.m3 = fin;
		t.fr[t.nfree++] = fin;
		t.sp = (int8_t)(t.sp + !out);
		t.hist = ev_push(r, s->hist, out ? 'O' : 'E', b, at, fin);
		put(r, f, &t);
	}
}

/* One reload of a buffer in DDR, into each free unit. */
static void reload(run *r, front *f, const st *s)
{
	for (int b = 0; b < NB; b++) {
		if (s->stat[b] != 2)
			continue;
		for (int i = 0; i < s->nfree; i++) {
			st t = *s;
			int32_t at = imax(imax(s->m2, s->avail[b]), s->fr[i]);
			int32_t fin = at + XFER;
			t.fr[i] = t.fr[--t.nfree];
			t.stat[b] = 1, t.used[b] = 0, t.m2 = fin;
			t.ready[b] = t.last[b] = fin;
			t.hist = ev_push(r, s->hist, 'R', b, at, fin);
			put(r, f, &t);
		}
	}
}

/* out: every state of in and all reached from them by moves. */
static void closure(run *r, front *in, front *out,
		    void (*move)(run *, front *, const st *))
{
	for (int32_t i = 0; i < in->n; i++)
		if (!in->v[i].dead)
			front_add(out, in->v[i]);
	for (int32_t lo = 0, hi; lo < out->n; lo = hi) {
		hi = out->n;
		for (int32_t i = lo; i < hi; i++)
			if (!out->v[i].dead) {
				st s = out->v[i];
				move(r, out, &s);
			}
	}
}

static void start_states(run *r, front *f)
{
	for (int m = 1; m < 16; m += 2) { /* the first input resident */
		int nres = __builtin_popcount((unsigned)m);
		if (nres > 3 || (r->start && nres != r->start))
			continue;
		st s;
		memset(&s, 0, sizeof s);
		s.c = -1;
		for (int b = 0; b < 4; b++) {
			s.stat[b] = m >> b & 1 ? 1 : 2;
			s.used[b] = s.stat[b] == 1;
			s.sp = (int8_t)(s.sp + (s.stat[b] == 2));
		}
		s.nfree = (int8_t)(CAP - nres - (r->reserve ? 2 : 0));
		if (s.sp > r->smax)
			continue;
		s.hist = ev_push(r, -1, 'I', m, 0, 0);
		front_add(f, s);
	}
}

/* One CONV: the chain chosen where none runs, evictions, reloads, CONV. */
static void step(run *r, front *cur, front *next)
{
	front ch, ev_, rl;
	front_init(&ch), front_init(&ev_), front_init(&rl);
	for (int32_t i = 0; i < cur->n; i++) {
		st s = cur->v[i];
		if (s.dead)
			continue;
		for (int c = 0; c < 4; c++)
			if (s.c == c || (s.c < 0 && !(s.mask >> c & 1))) {
				st t = s;
				t.c = (int8_t)c;
				front_add(&ch, t);
			}
	}
	closure(r, &ch, &ev_, evict);
	closure(r, &ev_, &rl, reload);
	for (int32_t i = 0; i < rl.n; i++)
		if (!rl.v[i].dead)
			conv(r, next, &rl.v[i]);
	front_free(&ch), front_free(&ev_), front_free(&rl);
}

/* ---- the layout check of --trace ---- */

typedef struct {
	int32_t s, e;
	int acc, pos;
} occ;

static int fits(occ *o, int n, int i)
{
	if (i == n)
		return 1;
	int w = o[i].acc ? 2 : 1;
	for (int p = 0; p + w <= CAP; p++) {
		int ok = 1;
		for (int j = 0; j < i && ok; j++) {
			int wj = o[j].acc ? 2 : 1;
			if (o[j].s < o[i].e && o[i].s < o[j].e &&
			    o[j].pos < p + w && p < o[j].pos + wj)
				ok = 0;
		}
		if (ok) {
			o[i].pos = p;
			if (fits(o, n, i + 1))
				return 1;
		}
	}
	return 0;
}

static int occ_cmp(const void *a, const void *b)
{
	const occ *x = a, *y = b;
	return x->s != y->s ? (x->s > y->s) - (x->s < y->s)
			    : (x->e > y->e) - (x->e < y->e);
}

/* Prints the plan ending at event h; checks its layout. */
static void trace(const run *r, int32_t h)
{
	int32_t path[1024], np = 0, open[NB + 1], uses[NB] = {0};
	occ o[256];
	int no = 0;
	for (; h >= 0; h = r->h[h].parent)
		path[np++] = h;
	for (int b = 0; b <= NB; b++)
		open[b] = -1;
	while (np--) {
		const ev *e = &r->h[path[np]];
		if (e->ty == 'I') {
			for (int b = 0; b < 4; b++)
				open[b] = e->b >> b & 1 ? -1000000 : -1;
			printf("start: inputs resident %#x\n", e->b);
			continue;
		}
		if (e->ty == 'C') {
			int L = e->b / 16, c = e->b / 4 % 4, k = e->b % 4;
			int b = 4 * L + k;
			printf("%7d %7d CONV layer %d chain %d k %d\n", e->start,
			       e->fin, L, c, k);
			if (k == 0)
				open[NB] = e->start;
			if (++uses[b] == 4)
				o[no++] = (occ){open[b], e->fin, 0, 0};
			if (k == 3) {
				o[no++] = (occ){open[NB], e->fin, 1, 0};
				open[4 * (L + 1) + c] = e->start;
			}
			continue;
		}
		printf("%7d %7d %s buffer %d\n", e->start, e->fin,
		       e->ty == 'R' ? "SPILL_IN " : e->ty == 'E' ? "SPILL_OUT"
								: "COPY_OUT ",
		       e->b);
		if (e->ty == 'R')
			open[e->b] = e->start;
		else
			o[no++] = (occ){open[e->b], e->fin, 0, 0};
	}
	qsort(o, (size_t)no, sizeof *o, occ_cmp);
	printf("a layout with accumulators on adjacent units: %s\n",
	       fits(o, no, 0) ? "exists" : "none");
}

int main(int argc, char **argv)
{
	run r = {0};
	int tr = 0;
	if (argc < 3) {
		fprintf(stderr, "usage: late_layers SPILLS UB [--start any|1|2|3]"
				" [--reserve] [--trace]\n");
		return 2;
	}
	r.smax = atoi(argv[1]), r.ub = atoi(argv[2]);
	if (r.smax < 0 || r.smax > 60 || r.ub <= 0) {
		fprintf(stderr, "late_layers: SPILLS must be 0 to 60 and UB "
				"positive\n");
		return 2;
	}
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--reserve"))
			r.reserve = 1;
		else if (!strcmp(argv[i], "--trace"))
			tr = 1;
		else if (!strcmp(argv[i], "--start") && i + 1 < argc) {
			const char *a = argv[++i];
			r.start = strcmp(a, "any") ? atoi(a) : 0;
			if (strcmp(a, "any") && (r.start < 1 || r.start > 3)) {
				fprintf(stderr, "late_layers: --start takes "
						"any, 1, 2 or 3, not %s\n", a);
				return 2;
			}
		} else {
			fprintf(stderr, "late_layers: unknown argument %s\n",
				argv[i]);
			return 2;
		}
	}
	front cur;
	front_init(&cur);
	start_states(&r, &cur);
	for (int i = 0; i < 48; i++) {
		front next;
		front_init(&next);
		step(&r, &cur, &next);
		front_free(&cur);
		cur = next;
	}
	int32_t best[64], at[64];
	for (int i = 0; i < 64; i++)
		best[i] = INT32_MAX, at[i] = -1;
	for (int32_t i = 0; i < cur.n; i++)
		if (!cur.v[i].dead && cur.v[i].cube < best[cur.v[i].sp])
			best[cur.v[i].sp] = cur.v[i].cube, at[cur.v[i].sp] = i;
	int any = 0;
	for (int i = 0; i < 64; i++)
		if (at[i] >= 0)
			printf("spills %d span %d\n", i, best[i]), any = 1;
	if (!any)
		printf("no plan with at most %d spills below %d\n", r.smax, r.ub);
	if (tr && at[r.smax] >= 0)
		trace(&r, cur.v[at[r.smax]].hist);
	front_free(&cur);
	free(r.h);
	return 0;
}
