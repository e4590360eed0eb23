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
 * outputs 791-797 (`dansched schedule` puts them from cycle 187,942 on).
 *
 * The model: L1 counted in 768-byte units, 5 of them (3,840 <= 4,096 <
 * 4,608), an accumulator two, from its chain's first CONV's start to its
 * last CONV's finish; CUBE runs any CONV whose input exists (its chain's
 * CONVs in order), at most K chains begun and not ended at once; a spill
 * is a SPILL_OUT on MTE3 and a SPILL_IN on MTE2 of 1,686 cycles each
 * (2 * 768 + 150), its SPILL_IN into a unit free by then (the unit's
 * previous occupant ended: FREE after its last use, SPILL_OUT or COPY_OUT
 * finished); an accumulator may be spilled between its chain's CONVs
 * (3,222 cycles each way, two units, twice the traffic: it counts as two
 * spills); peak_vstay, where limited, counts the units of every buffer
 * allocated and not yet freed, in L1 or spilled, at each CONV.  The
 * weights (a 144-byte L1 buffer and a COPY_IN of 357 cycles per CONV,
 * which fit in the 256 bytes left), MTE1 and the rest of the graph are
 * left out.  At the origin, the first late CONV's start, every pipe is
 * free and each first-layer input is resident or already in DDR, one
 * spill each.  The search is exact for the model: a dynamic program over
 * the CONVs, between two CONVs any evictions (MTE3, in any order) then
 * any reloads (MTE2, any order, into any free units), each timed as early
 * as its pipe, its data and its units allow, keeping every state no other
 * state with the same buffers and progress matches or beats in every
 * time and in spills (times that no longer bind clamped).  States that
 * cannot end below UB (the earliest start of a next CONV, its input and
 * accumulator readable, plus the CONV work left) are dropped.
 *
 * usage: late_layers SPILLS UB [--start any|1|2|3] [--inflight K]
 *                    [--peak UNITS] [--one-chain] [--reserve] [--trace]
 *   prints, for each number of spills up to SPILLS, the least span (last
 *   CONV's finish) below UB;
 *   --start 1 to 3: only the starts with that many first-layer inputs
 *   resident (2: what `dansched schedule` has at 187,942; default any);
 *   --inflight K: chains begun and not ended at once (default 2; 3 and
 *   up only where an accumulator is spilled, and much slower);
 *   --peak UNITS: peak_vstay at most UNITS units (default none); 9 is
 *   the default peak budget's limit: 5 % over the DLR plan's 6,914 bytes
 *   is 7,259, where 9 units and a CONV's 144-byte weight fit (7,056,
 *   the plan's peak) and 10 do not (7,680);
 *   --one-chain: the narrower model of sessions 27-39: one chain at a
 *   time, accumulators never spilled;
 *   --reserve: an accumulator's two units are never free between chains
 *   (a layout that keeps every accumulator at one address; implies
 *   --one-chain);
 *   --trace: the best plan with SPILLS spills, and whether its occupancies
 *   fit five 768-byte positions with each accumulator on two adjacent
 *   ones (a layout exists for it; checked by backtracking).
 *
 * Measured 2026-12-06 (`late_layers 26 216000 --start 2` and options;
 * spills 24, 25, 26):
 *   --one-chain: 210,226, 205,168, 200,110 (with --reserve 216,786,
 *   211,728, 206,670), as sessions 27-39 had them; a layout exists at 24,
 *   25 and 26 (--trace);
 *   --peak 9 (two chains at once, accumulators spilled): the same,
 *   210,226, 205,168, 200,110 (110 s, 1.3 GB), and with --inflight 3 the
 *   same again (132 s); four chains at once cannot end one of them
 *   within 9 units (four accumulators, its input and its output are 10),
 *   so within the default peak budget the model's plans are no shorter
 *   than one chain at a time;
 *   no peak limit: 206,254, 202,698, 199,326 (378 s, 3.1 GB), at a peak
 *   of 10 units (7,680 bytes, 7,824 with the plan's weight); the plan at
 *   25 spills the first chain's accumulator of the first two layers, and
 *   a layout exists for it; dansched with ds_replan.c's search widened
 *   (a window of 16 steps, a beam of 64, ten times the work) and
 *   `--peak-budget 100` gives 392,993 cycles at 43,008 bytes and a peak
 *   of 7,824, its late span 202,882 with two accumulators spilled.
 * With more spills (`late_layers 30 216000 --start 2 --one-chain`):
 * 196,554 at 27, 193,182 at 28, 189,810 at 29, 186,438 at 30; --peak 9
 * gives the same at 27 and 28 (2026-12-06, session 43).  Each late spill
 * costs 1,536 bytes, so the 546 bytes the plan leaves under the cap
 * (43,554, 5 % over DLR's 41,480) buy none, and a 27th would need the
 * first layers' traffic (4,608 bytes) cut to 2,082, below the 3,072 any
 * plan spends there (README, "Figures").
 * dansched's plan spans 205,168 with 25 (187,942 to 393,110) and ends at
 * 394,888 (the last COPY_OUT).  The plan at 25 of --one-chain, run in a
 * full plan by scripts/late_layers_plan.py after the first layers of
 * tests/data/Conv_Case0_405466_*: 398,474 cycles at 43,008 bytes and 31
 * spills, valid under `dansched eval` and the referee. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int32_t T[4] = {3505, 3771, 3771, 3506};
enum { XFER = 1686, XACC = 3222, COUT = 1778, CAP = 5 };
/* buffers: the data ones (layer L's input k at 4L + k, the last layer's
 * outputs at 12-15), then the accumulators (chain 4L + c at 16 + 4L + c) */
enum { ND = 16, NB = ND + 12, NCH = 12 };

typedef struct {
	int8_t p[NCH]; /* CONVs run per chain */
	int8_t stat[NB], used[NB]; /* stat: 0 none, 1 resident, 2 in DDR */
	int8_t nfree, sp, dead;
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
	int smax, ub, start, reserve, inflight, peak, accs;
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

static int is_acc(int b) { return b >= ND; }
static int is_out(int b) { return b >= 12 && b < ND; }

/* Has data buffer d been written (a first-layer input, or its chain
 * ended)? */
static int produced(const st *s, int d)
{
	return d < 4 || s->p[d - 4] == 4;
}

/* Uses left of data buffer d: CONVs to read it (a last-layer output: its
 * COPY_OUT). */
static int uses_left(const st *s, int d)
{
	if (is_out(d))
		return 1;
	int L = d / 4, k = d % 4, n = 0;
	for (int c = 0; c < 4; c++)
		n += s->p[4 * L + c] <= k;
	return n;
}

static int in_flight(const st *s)
{
	int n = 0;
	for (int ch = 0; ch < NCH; ch++)
		n += s->p[ch] > 0 && s->p[ch] < 4;
	return n;
}

/* Units of the buffers allocated and not freed (resident or spilled). */
static int allocated(const st *s)
{
	int n = 0;
	for (int b = 0; b < NB; b++)
		if (s->stat[b])
			n += is_acc(b) ? 2 : 1;
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
			s->ready[b] = imax(s->ready[b],
					   is_out(b) ? s->m3 : s->cube);
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
	uint64_t h = 1469598103934665603ull;
	for (int i = 0; i < NCH; i++)
		h = (h ^ (uint8_t)s->p[i]) * 1099511628211ull;
	for (int b = 0; b < NB; b++)
		h = (h ^ (uint8_t)(s->stat[b] | s->used[b] << 2)) *
		    1099511628211ull;
	return h;
}

static int same_key(const st *a, const st *b)
{
	if (memcmp(a->p, b->p, sizeof a->p))
		return 0;
	for (int x = 0; x < NB; x++)
		if (a->stat[x] != b->stat[x] || a->used[x] != b->used[x])
			return 0;
	return 1;
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
	f->hcap = 1 << 16;
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

/* Adds s unless a state of f covers it (then 0); drops the states s
 * covers. */
static int front_add(front *f, st s)
{
	normalise(&s);
	uint64_t k = key(&s);
	int32_t i = front_slot(f, k);
	if (f->head[i] == -2)
		f->hk[i] = k, f->head[i] = -1;
	for (int32_t j = f->head[i]; j >= 0; j = f->next[j])
		if (!f->v[j].dead && same_key(&f->v[j], &s) &&
		    covers(&f->v[j], &s))
			return 0;
	for (int32_t j = f->head[i]; j >= 0; j = f->next[j])
		if (!f->v[j].dead && same_key(&f->v[j], &s) &&
		    covers(&s, &f->v[j]))
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
	return 1;
}

/* When buffer b of s can be read at the earliest: resident, when it is
 * ready; in DDR, after a reload (of `cycles`) starting when MTE2 and its
 * SPILL_OUT allow. */
static int32_t readable(const st *s, int b, int32_t cycles)
{
	if (s->stat[b] == 1)
		return s->ready[b];
	return imax(s->m2, s->avail[b]) + cycles;
}

/* The least finish of the last CONV from s: the earliest start of any
 * next CONV (its input and accumulator readable) plus the CONV work
 * left. */
static int32_t bound(const st *s)
{
	int32_t left = 0, first = INT32_MAX;
	for (int ch = 0; ch < NCH; ch++) {
		int k = s->p[ch], d = 4 * (ch / 4) + k;
		for (int i = k; i < 4; i++)
			left += T[i];
		if (k == 4 || !produced(s, d) || !s->stat[d])
			continue;
		int32_t at = imax(s->cube, readable(s, d, XFER));
		if (k > 0)
			at = imax(at, readable(s, ND + ch, XACC));
		if (at < first)
			first = at;
	}
	return (first == INT32_MAX ? s->cube : first) + left;
}

/* Adds t, reached from its parent by event (ty, b, start, fin), where it
 * can end below UB. */
static void put(run *r, front *f, st t, char ty, int b, int32_t start,
		int32_t fin)
{
	if (bound(&t) >= r->ub)
		return;
	int32_t parent = t.hist;
	t.hist = r->nh;
	if (front_add(f, t))
		ev_push(r, parent, ty, b, start, fin);
}

/* Takes the free units named by the bits of set (their times are s's
 * fr[]) out of t's free list; returns the time they are all free by, at
 * the earliest `at`. */
static int32_t take_units(st *t, const st *s, unsigned set, int32_t at)
{
	t->nfree = 0;
	for (int q = 0; q < s->nfree; q++)
		if (set >> q & 1)
			at = imax(at, s->fr[q]);
		else
			t->fr[t->nfree++] = s->fr[q];
	return at;
}

/* Chain ch's next CONV at `at`, t being s with the units it takes out of
 * the free list. */
static void conv_at(run *r, front *out, const st *s, int ch, int32_t at,
		    st t)
{
	int L = ch / 4, k = s->p[ch], d = 4 * L + k, a = ND + ch;
	int32_t fin = at + T[k];
	t.cube = fin;
	if (uses_left(s, d) == 1)
		t.stat[d] = 0, t.fr[t.nfree++] = fin;
	else
		t.last[d] = imax(t.last[d], fin), t.used[d] = 1;
	t.p[ch]++;
	if (k == 3) {
		int o = 4 * (L + 1) + ch % 4;
		t.stat[a] = 0;
		if (!r->reserve)
			t.fr[t.nfree++] = fin, t.fr[t.nfree++] = fin;
		t.stat[o] = 1, t.used[o] = 1, t.ready[o] = t.last[o] = fin;
	} else {
		t.stat[a] = 1, t.used[a] = 1, t.ready[a] = t.last[a] = fin;
	}
	put(r, out, t, 'C', 16 * L + 4 * (ch % 4) + k, at, fin);
}

/* The next CONV of chain ch: its input resident, its accumulator too
 * (or two units for it at its first CONV, unless reserved), a unit for
 * its output at its last, each choice of the free units tried; within
 * the peak limit. */
static void conv(run *r, front *out, const st *s, int ch)
{
	int L = ch / 4, k = s->p[ch], d = 4 * L + k, a = ND + ch;
	if (!produced(s, d) || s->stat[d] != 1)
		return;
	if (k > 0 && s->stat[a] != 1)
		return;
	if (k == 0 && in_flight(s) >= r->inflight)
		return;
	int need = (k == 0 && !r->reserve ? 2 : 0) + (k == 3);
	if (s->nfree < need)
		return;
	if (r->peak && allocated(s) + (k == 0 ? 2 : 0) + (k == 3) > r->peak)
		return;
	int32_t at0 = imax(s->cube, s->ready[d]);
	if (k > 0)
		at0 = imax(at0, s->ready[a]);
	for (unsigned set = 0; set < 1u << s->nfree; set++) {
		if (__builtin_popcount(set) != need)
			continue;
		st t = *s;
		int32_t at = take_units(&t, s, set, at0);
		conv_at(r, out, s, ch, at, t);
	}
}

static void convs(run *r, front *out, const st *s)
{
	for (int ch = 0; ch < NCH; ch++)
		if (s->p[ch] < 4)
			conv(r, out, s, ch);
}

/* One eviction (a COPY_OUT for a last-layer output) of a used resident
 * buffer: data still to be read, or an accumulator between its chain's
 * CONVs. */
static void evict(run *r, front *f, const st *s)
{
	for (int b = 0; b < NB; b++) {
		if (s->stat[b] != 1 || !s->used[b] || (is_acc(b) && !r->accs))
			continue;
		int out = is_out(b), cost = is_acc(b) ? 2 : !out;
		if (s->sp + cost > r->smax)
			continue;
		st t = *s;
		int32_t at = imax(s->m3, out ? s->ready[b] : s->last[b]);
		int32_t fin = at + (out ? COUT : is_acc(b) ? XACC : XFER);
		t.stat[b] = out ? 0 : 2, t.avail[b] = fin, t.m3 = fin;
		t.fr[t.nfree++] = fin;
		if (is_acc(b))
			t.fr[t.nfree++] = fin;
		t.sp = (int8_t)(t.sp + cost);
		put(r, f, t, out ? 'O' : 'E', b, at, fin);
	}
}

/* One reload of a buffer in DDR, into each free unit (an accumulator:
 * each pair of them). */
static void reload(run *r, front *f, const st *s)
{
	for (int b = 0; b < NB; b++) {
		if (s->stat[b] != 2)
			continue;
		int acc = is_acc(b);
		for (int i = 0; i < s->nfree; i++)
			for (int j = acc ? 0 : -1; j < (acc ? i : 0); j++) {
				st t = *s;
				unsigned set = 1u << i | (j >= 0 ? 1u << j : 0);
				int32_t at = take_units(&t, s, set,
							imax(s->m2, s->avail[b]));
				int32_t fin = at + (acc ? XACC : XFER);
				t.stat[b] = 1, t.used[b] = 0, t.m2 = fin;
				t.ready[b] = t.last[b] = fin;
				put(r, f, t, 'R', b, at, fin);
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
	for (int m = 0; m < 16; m++) {
		int nres = __builtin_popcount((unsigned)m);
		if (nres > 3 || (r->start && nres != r->start))
			continue;
		st s;
		memset(&s, 0, sizeof s);
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

/* One CONV: evictions, reloads, then the CONV. */
static void step(run *r, front *cur, front *next)
{
	front ev_, rl;
	front_init(&ev_), front_init(&rl);
	closure(r, cur, &ev_, evict);
	closure(r, &ev_, &rl, reload);
	for (int32_t i = 0; i < rl.n; i++)
		if (!rl.v[i].dead)
			convs(r, next, &rl.v[i]);
	front_free(&ev_), front_free(&rl);
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

static void print_move(const ev *e)
{
	const char *what = e->ty == 'R'	  ? "SPILL_IN "
			   : e->ty == 'E' ? "SPILL_OUT"
					  : "COPY_OUT ";
	if (is_acc(e->b))
		printf("%7d %7d %s accumulator layer %d chain %d\n", e->start,
		       e->fin, what, (e->b - ND) / 4, (e->b - ND) % 4);
	else
		printf("%7d %7d %s buffer %d\n", e->start, e->fin, what, e->b);
}

/* Prints the plan ending at event h; checks its layout. */
static void trace(const run *r, int32_t h)
{
	int32_t path[1024], np = 0, open[NB], uses[ND] = {0};
	occ o[256];
	int no = 0;
	for (; h >= 0; h = r->h[h].parent)
		path[np++] = h;
	for (int b = 0; b < NB; b++)
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
			int d = 4 * L + k, a = ND + 4 * L + c;
			printf("%7d %7d CONV layer %d chain %d k %d\n", e->start,
			       e->fin, L, c, k);
			if (k == 0)
				open[a] = e->start;
			if (++uses[d] == 4)
				o[no++] = (occ){open[d], e->fin, 0, 0};
			if (k == 3) {
				o[no++] = (occ){open[a], e->fin, 1, 0};
				open[4 * (L + 1) + c] = e->start;
			}
			continue;
		}
		print_move(e);
		if (e->ty == 'R')
			open[e->b] = e->start;
		else
			o[no++] = (occ){open[e->b], e->fin, is_acc(e->b), 0};
	}
	qsort(o, (size_t)no, sizeof *o, occ_cmp);
	printf("a layout with accumulators on adjacent units: %s\n",
	       fits(o, no, 0) ? "exists" : "none");
}

static int usage(const char *msg, const char *arg)
{
	if (msg)
		fprintf(stderr, "late_layers: %s%s\n", msg, arg ? arg : "");
	fprintf(stderr, "usage: late_layers SPILLS UB [--start any|1|2|3] "
			"[--inflight K] [--peak UNITS] [--one-chain] "
			"[--reserve] [--trace]\n");
	return 2;
}

static int parse(run *r, int *tr, int argc, char **argv)
{
	r->smax = atoi(argv[1]), r->ub = atoi(argv[2]);
	r->inflight = 2, r->accs = 1;
	if (r->smax < 0 || r->smax > 60 || r->ub <= 0)
		return usage("SPILLS must be 0 to 60 and UB positive", NULL);
	for (int i = 3; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--reserve"))
			r->reserve = 1;
		else if (!strcmp(a, "--one-chain"))
			r->inflight = 1, r->accs = 0;
		else if (!strcmp(a, "--trace"))
			*tr = 1;
		else if (!strcmp(a, "--start") && v) {
			r->start = strcmp(v, "any") ? atoi(v) : 0;
			if (strcmp(v, "any") && (r->start < 1 || r->start > 3))
				return usage("--start takes any, 1, 2 or 3, "
					     "not ", v);
			i++;
		} else if (!strcmp(a, "--inflight") && v) {
			r->inflight = atoi(v), i++;
			if (r->inflight < 1 || r->inflight > 4)
				return usage("--inflight takes 1 to 4, not ", v);
		} else if (!strcmp(a, "--peak") && v) {
			r->peak = atoi(v), i++;
			if (r->peak < 7)
				return usage("--peak takes 7 units or more (a "
					     "layer's inputs, an accumulator "
					     "and an output), not ", v);
		} else {
			return usage("unknown argument ", a);
		}
	}
	if (r->reserve)
		r->inflight = 1, r->accs = 0;
	return 0;
}

int main(int argc, char **argv)
{
	run r = {0};
	int tr = 0;
	if (argc < 3)
		return usage(NULL, NULL);
	if (parse(&r, &tr, argc, argv))
		return 2;
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
