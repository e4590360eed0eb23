/* ds_mpas_ls.c: MPAS's local search over the order of operations (ls_).
 *
 * Requires: a valid graph whose ALLOCs have no preds and FREEs no succs
 * (mpas_ls_applies; true of every bundled graph), its forwards view, and a
 * topological order of all its nodes.  Guarantees: mpas_ls_run leaves a
 * topological order whose peak_vstay is never higher, with at most one
 * buffer of each L0 memory live at any time when the order given had
 * that; an order that breaks the one-live rule is left as it is.
 *
 * Method.  The order is seen as a sequence of operations with lifetime
 * compaction (ALLOCs sunk to their first user, FREEs hoisted to their
 * last), so a buffer lives over a range of positions.  A step moves a
 * block of operations across a peak position (with its ancestors or
 * descendants) so that a buffer live there leaves it; the first move
 * that lowers the peak, or the number of positions at the peak, is
 * taken (ls_step).  Buffers are tried in the rank order of their ALLOC,
 * so the first move found does not depend on the numbering.  A second
 * phase, from the first's local optimum, may also move a block back to
 * the start of a buffer live at the peak that began long before it, or
 * on to the end of one that ends long after (ls_jumps): it undoes the
 * order in which two of them began or end.
 *
 * Cost, N nodes, E edges, B buffers: at most M move evaluations of
 * O(W) each (W = LS_WINDOW operations); finding the moves of a step is
 * O(N + 48 B) and an accepted move costs O(N + E) (ls_eval_all), these
 * together bounded by LS_SCAN * W * M (M: the caller's budget of moves;
 * the second phase's M is the first's / LS_JUMP_SHARE, and a step of it
 * also costs O(B) to find the jump targets).
 * Memory O(N + E), from the caller's arena. */
#include "ds_mpas_int.h"

#include <stdlib.h>
#include <string.h>

/* A move spans at most LS_WINDOW operations, and moves a block at most
 * LS_REACH positions past the peak.  Measured as in ds_mpas.c (eight
 * graphs, peak sum 72,938): LS_WINDOW 128: 72,858, 512: 72,642 (both by
 * Conv_Case1 alone: 5,280 and 5,064 against 5,360; 512 costs about 1.3
 * times the time); LS_REACH 4: 73,164 (the random graph 2,976 against
 * 2,752), 16: 72,940. */
#define LS_WINDOW 256
#define LS_REACH 8
/* The scans for moves and the re-evaluations after them (O(N + B) a step)
 * stop past LS_SCAN * LS_WINDOW * M elementary steps: a huge graph
 * gets a few steps, not up to M of them (the bundled graphs use at
 * most about a tenth of it: 4 or 16 change no peak there). */
#define LS_SCAN 8
/* The second phase (mpas_ls_run with jumps): at most LS_JUMPS jump
 * targets each way a peak position, and 1 / LS_JUMP_SHARE of the first
 * phase's budget of moves.  Measured on 512 generated graphs (`gen`, the
 * four kinds; 400, 800, 1,500 and 3,000 nodes, seeds 1-8; 600, 1,200 and
 * 2,500 nodes, seeds 9-40) and 43 parts of the bundled ones, `schedule
 * --stage mpas`: the sum of their peaks is 1,785,066 bytes without the
 * second phase; with it 1,780,948 at LS_JUMPS 16 (26 graphs lower), the
 * same at 32, 1,781,697 at 8 and 1,781,721 at 4; LS_JUMP_SHARE 4 or 16
 * (at LS_JUMPS 8): 1,781,689 and 1,781,731 (2026-12-06). */
#define LS_JUMPS 16
#define LS_JUMP_SHARE 8

/* The order as a sequence of operations; every ALLOC sits just before the
 * first operation tied to its buffer and every FREE just after the last
 * ("lifetime compaction"), so a buffer lives over a range of positions.
 * This needs ALLOCs without preds and FREEs without succs (true of every
 * bundled graph); otherwise the search is skipped. */
struct ls {
	const ds_graph *g;
	const view *v; /* forwards */
	int32_t nops, nbuf;
	int32_t *seq, *pos;   /* pos: per node, -1 for ALLOC/FREE */
	int32_t *boff, *bops; /* per buffer: the operations tied to it */
	int32_t *border;      /* the buffers by the rank of their ALLOC */
	int32_t *ooff, *obuf; /* per node: the buffers tied to it */
	/* per node: its succs and preds that are operations (the view's
	 * lists without the FREEs and ALLOCs, never in seq: the walks of
	 * ls_pull_front and ls_block only look for marked operations) */
	int32_t *osoff, *osucc, *opoff, *opred;
	int32_t *first, *last; /* per buffer: positions, -1: no operation */
	int64_t *val;	       /* per position: live bytes while it runs */
	int64_t *gap;	       /* [nops+1]: live bytes between positions */
	int32_t *gl0;	       /* [(nops+1)*NL0]: live L0 buffers, same */
	int32_t *al0;	       /* [(nops+1)*NL0]: live L0 buffers at */
	int64_t *pmax, *smax;  /* prefix and suffix maxima of val */
	int32_t *pcnt, *scnt;  /* how many positions reach them */
	int64_t peak;
	int32_t npeak;
	/* scratch */
	int32_t *bst, *wcnt, *nst, *ord;
	uint8_t *blive, *bafter;
	int32_t st; /* the last stamp of nst and bst: one counter for every
		       walk, so that none meets a mark an earlier walk left
		       (ls_tie_all's, in BufId order, once did) */
	int32_t pstart; /* where the scan for peaks starts */
	/* ls_jump_targets': where the buffers live at the peak begin (back)
	 * and end (on) */
	int32_t back[LS_JUMPS], on[LS_JUMPS], nback, non;
	int64_t ntry;	/* move evaluations so far */
	int64_t work;	/* scans for moves and re-evaluations so far */
};

static int64_t bsize(const ls *s, int32_t b)
{
	return ds_mem_stays(s->g->buf_mem[b]) ? s->g->buf_size[b] : 0;
}

static int bl0(const ls *s, int32_t b)
{
	int m = s->g->buf_mem[b];
	return ds_mem_stays(m) ? -1 : m - DS_L0A;
}

/* Buffer b's first and last positions (-1: no operation). */
static void ls_span(ls *s, int32_t b)
{
	int32_t f = -1, l = -1;
	for (int32_t k = s->boff[b]; k < s->boff[b + 1]; k++) {
		int32_t p = s->pos[s->bops[k]];
		if (f < 0 || p < f)
			f = p;
		if (p > l)
			l = p;
	}
	s->first[b] = f;
	s->last[b] = l;
}

/* Buffer b, live from first[b] to last[b], into the difference arrays of
 * val, gap, gl0 and al0 (ls_sum adds them up). */
static void ls_add_buffer(ls *s, int32_t b)
{
	const int32_t np = s->nops, f = s->first[b], l = s->last[b];
	if (f < 0)
		return;
	int64_t z = bsize(s, b);
	int m = bl0(s, b);
	s->val[f] += z;
	if (l + 1 < np)
		s->val[l + 1] -= z;
	s->gap[f + 1] += z;
	s->gap[l + 1] -= z;
	if (m >= 0) {
		s->gl0[(f + 1) * NL0 + m]++;
		s->gl0[(l + 1) * NL0 + m]--;
		s->al0[f * NL0 + m]++;
		s->al0[(l + 1) * NL0 + m]--;
	}
}

/* The difference arrays summed; false when the one-live rule is broken. */
static bool ls_sum(ls *s)
{
	const int32_t np = s->nops;
	bool ok = true;
	for (int32_t i = 1; i < np; i++)
		s->val[i] += s->val[i - 1];
	for (int m = 0; m < NL0; m++)
		ok = ok && s->al0[m] <= 1;
	for (int32_t i = 1; i <= np; i++) {
		s->gap[i] += s->gap[i - 1];
		for (int m = 0; m < NL0; m++) {
			s->gl0[i * NL0 + m] += s->gl0[(i - 1) * NL0 + m];
			s->al0[i * NL0 + m] += s->al0[(i - 1) * NL0 + m];
			/* one-live: buffers live while position i runs */
			ok = ok && s->al0[i * NL0 + m] <= 1;
		}
	}
	return ok;
}

/* The prefix and suffix maxima of val and how many positions reach
 * them; the peak and its count. */
static void ls_maxima(ls *s)
{
	const int32_t np = s->nops;
	for (int32_t i = 0; i < np; i++) {
		int64_t x = s->val[i];
		if (i == 0 || x > s->pmax[i - 1]) {
			s->pmax[i] = x;
			s->pcnt[i] = 1;
		} else {
			s->pmax[i] = s->pmax[i - 1];
			s->pcnt[i] = s->pcnt[i - 1] + (x == s->pmax[i]);
		}
	}
	for (int32_t i = np - 1; i >= 0; i--) {
		int64_t x = s->val[i];
		if (i == np - 1 || x > s->smax[i + 1]) {
			s->smax[i] = x;
			s->scnt[i] = 1;
		} else {
			s->smax[i] = s->smax[i + 1];
			s->scnt[i] = s->scnt[i + 1] + (x == s->smax[i]);
		}
	}
	s->peak = np ? s->pmax[np - 1] : 0;
	s->npeak = np ? s->pcnt[np - 1] : 0;
}

/* Everything derived from seq; false when the one-live rule is broken. */
static bool ls_eval_all(ls *s)
{
	const int32_t np = s->nops;
	for (int32_t i = 0; i < np; i++)
		s->pos[s->seq[i]] = i;
	memset(s->val, 0, (size_t)np * sizeof *s->val);
	memset(s->gap, 0, (size_t)(np + 1) * sizeof *s->gap);
	memset(s->gl0, 0, (size_t)(np + 1) * NL0 * sizeof *s->gl0);
	memset(s->al0, 0, (size_t)(np + 1) * NL0 * sizeof *s->al0);
	/* difference arrays, summed below */
	for (int32_t b = 0; b < s->nbuf; b++) {
		ls_span(s, b);
		ls_add_buffer(s, b);
	}
	bool ok = ls_sum(s);
	ls_maxima(s);
	return ok;
}

/* Counts, for each buffer of the operations ord[0..hi-lo] (to sit at
 * positions lo..hi), how many of them use it (wcnt), whether it is live
 * before lo (blive) and after hi (bafter); bst marks the buffers met. */
static void ls_count_uses(ls *s, int32_t lo, int32_t hi, const int32_t *ord)
{
	/* the arrays in locals: the stores to the byte flags below could
	 * otherwise alias s and force every field to be loaded again (a
	 * fifth more instructions in ls_try, measured with callgrind) */
	const int32_t *ooff = s->ooff, *obuf = s->obuf;
	const int32_t *first = s->first, *last = s->last;
	int32_t *bst = s->bst, *wcnt = s->wcnt;
	uint8_t *blive = s->blive, *bafter = s->bafter;
	int32_t st = ++s->st;
	for (int32_t i = 0; i <= hi - lo; i++) {
		int32_t w = ord[i];
		for (int32_t k = ooff[w]; k < ooff[w + 1]; k++) {
			int32_t b = obuf[k];
			if (bst[b] != st) {
				bst[b] = st;
				wcnt[b] = 0;
				blive[b] = first[b] < lo;
				bafter[b] = last[b] > hi;
			}
			wcnt[b]++;
		}
	}
}

/* The most live bytes over positions lo..hi holding ord[0..hi-lo] and
 * *n, how many positions reach it (after ls_count_uses); -1 when the
 * one-live rule would break. */
static int64_t ls_window_peak(ls *s, int32_t lo, int32_t hi,
			      const int32_t *ord, int32_t *n)
{
	/* the arrays in locals, as in ls_count_uses */
	const int32_t *ooff = s->ooff, *obuf = s->obuf;
	const uint8_t *mem = s->g->buf_mem;
	const int64_t *size = s->g->buf_size;
	int32_t *wcnt = s->wcnt;
	uint8_t *blive = s->blive;
	const uint8_t *bafter = s->bafter;
	int64_t cur = s->gap[lo], wmax = -1;
	int32_t wn = 0, l0c[NL0];
	for (int m = 0; m < NL0; m++)
		l0c[m] = s->gl0[lo * NL0 + m];
	for (int32_t i = 0; i <= hi - lo; i++) {
		int32_t w = ord[i];
		for (int32_t k = ooff[w]; k < ooff[w + 1]; k++) {
			int32_t b = obuf[k];
			if (blive[b])
				continue;
			blive[b] = 1;
			bool stays = ds_mem_stays(mem[b]);
			if (!stays && ++l0c[mem[b] - DS_L0A] > 1)
				return -1;
			cur += stays ? size[b] : 0;
		}
		if (cur > wmax) {
			wmax = cur;
			wn = 1;
		} else if (cur == wmax) {
			wn++;
		}
		for (int32_t k = ooff[w]; k < ooff[w + 1]; k++) {
			int32_t b = obuf[k];
			if (--wcnt[b] == 0 && !bafter[b]) {
				bool stays = ds_mem_stays(mem[b]);
				if (!stays)
					l0c[mem[b] - DS_L0A]--;
				cur -= stays ? size[b] : 0;
			}
		}
	}
	DS_ASSERT(cur == s->gap[hi + 1]);
	*n = wn;
	return wmax;
}

/* The peak of the whole order when the window lo..hi peaks at wmax: the
 * positions before lo and after hi join in. */
static int64_t ls_whole_peak(const ls *s, int32_t lo, int32_t hi,
			     int64_t wmax)
{
	int64_t pk = wmax;
	if (lo > 0 && s->pmax[lo - 1] > pk)
		pk = s->pmax[lo - 1];
	if (hi + 1 < s->nops && s->smax[hi + 1] > pk)
		pk = s->smax[hi + 1];
	return pk;
}

/* How many positions before lo and after hi reach pk. */
static int32_t ls_outside_count(const ls *s, int32_t lo, int32_t hi,
				int64_t pk)
{
	int32_t cnt = 0;
	if (lo > 0 && s->pmax[lo - 1] == pk)
		cnt += s->pcnt[lo - 1];
	if (hi + 1 < s->nops && s->smax[hi + 1] == pk)
		cnt += s->scnt[hi + 1];
	return cnt;
}

/* Peak and number of positions reaching it if positions lo..hi held
 * ord[0..hi-lo] instead; false when the one-live rule would break. */
static bool ls_try(ls *s, int32_t lo, int32_t hi, const int32_t *ord,
		   int64_t *peak, int32_t *npeak)
{
	int32_t wn;
	ls_count_uses(s, lo, hi, ord);
	int64_t wmax = ls_window_peak(s, lo, hi, ord, &wn);
	if (wmax < 0)
		return false;
	int64_t pk = ls_whole_peak(s, lo, hi, wmax);
	*peak = pk;
	*npeak = (wmax == pk ? wn : 0) + ls_outside_count(s, lo, hi, pk);
	return true;
}

/* The nodes of lo..hi marked st, and their ancestors in lo..hi, to the
 * front, keeping relative order on both sides: ord gets the new contents
 * of lo..hi. */
static void ls_pull_front(ls *s, int32_t lo, int32_t hi, int32_t st,
			  int32_t *ord)
{
	int32_t k = 0;
	for (int32_t i = hi - 1; i >= lo; i--) {
		int32_t y = s->seq[i];
		if (s->nst[y] == st)
			continue;
		for (int32_t j = s->osoff[y]; j < s->osoff[y + 1]; j++)
			if (s->nst[s->osucc[j]] == st) {
				s->nst[y] = st;
				break;
			}
	}
	for (int32_t i = lo; i <= hi; i++)
		if (s->nst[s->seq[i]] == st)
			ord[k++] = s->seq[i];
	for (int32_t i = lo; i <= hi; i++)
		if (s->nst[s->seq[i]] != st)
			ord[k++] = s->seq[i];
	DS_ASSERT(k == hi - lo + 1);
}

/* The move that takes operation x (at lo) later past position hi, with
 * its descendants in between (later = true); or operation x (at hi)
 * earlier before lo, with its ancestors in between.  ord gets the new
 * contents of lo..hi. */
static void ls_block(ls *s, int32_t lo, int32_t hi, bool later,
		     int32_t *ord)
{
	int32_t st = ++s->st, k = 0;
	if (later) {
		s->nst[s->seq[lo]] = st;
		for (int32_t i = lo + 1; i <= hi; i++) {
			int32_t y = s->seq[i];
			for (int32_t j = s->opoff[y]; j < s->opoff[y + 1]; j++)
				if (s->nst[s->opred[j]] == st) {
					s->nst[y] = st;
					break;
				}
		}
		for (int32_t i = lo; i <= hi; i++)
			if (s->nst[s->seq[i]] != st)
				ord[k++] = s->seq[i];
		for (int32_t i = lo; i <= hi; i++)
			if (s->nst[s->seq[i]] == st)
				ord[k++] = s->seq[i];
		DS_ASSERT(k == hi - lo + 1);
	} else {
		s->nst[s->seq[hi]] = st;
		ls_pull_front(s, lo, hi, st, ord);
	}
}

/* The move that takes every operation of buffer b from position from
 * on (up to hi, its last) earlier, with their ancestors from lo on, to
 * the front of lo..hi: b then ends before from.  Needed where b's
 * remaining users only free memory together (two consumers of one small
 * buffer, each of which alone frees nothing).  ord gets the new contents
 * of lo..hi. */
static void ls_block_all(ls *s, int32_t lo, int32_t hi, int32_t b,
			 int32_t from, int32_t *ord)
{
	int32_t st = ++s->st;
	for (int32_t j = s->boff[b]; j < s->boff[b + 1]; j++) {
		int32_t y = s->bops[j];
		if (s->pos[y] >= from && s->pos[y] <= hi)
			s->nst[y] = st;
	}
	ls_pull_front(s, lo, hi, st, ord);
}

/* Peak positions a step looks at, at most, from where the last move
 * was.  8 or 32: every peak the same on the eight graphs. */
#define LS_PEAKS 16

enum { LS_NONE, LS_MOVED, LS_SPENT };

/* The move of buffer b off peak position p in direction dir (0: its
 * first operation later, 1: its last earlier, 2: all its users from
 * position from on first) over positions lo..hi: made when it lowers
 * the peak or the number of positions at it (LS_MOVED); LS_SPENT when
 * the budget of move evaluations ran out. */
static int ls_try_span(ls *s, int32_t b, int32_t p, int dir, int32_t lo,
		       int32_t hi, int32_t from, int64_t budget)
{
	int32_t *ord = s->ord;
	if (s->ntry >= budget)
		return LS_SPENT;
	if (dir == 2)
		ls_block_all(s, lo, hi, b, from, ord);
	else
		ls_block(s, lo, hi, !dir, ord);
	s->ntry++;
	int64_t pk;
	int32_t np;
	if (!ls_try(s, lo, hi, ord, &pk, &np))
		return LS_NONE;
	if (pk > s->peak || (pk == s->peak && np >= s->npeak))
		return LS_NONE;
	memcpy(s->seq + lo, ord, (size_t)(hi - lo + 1) * sizeof *ord);
	s->pstart = p;
	s->work += s->nops + s->nbuf;
	bool ok = ls_eval_all(s);
	DS_ASSERT(ok && s->peak == pk && s->npeak == np);
	(void)ok;
	return LS_MOVED;
}

/* The moves that take buffer b off peak position p in direction dir,
 * up to LS_REACH positions past p: the first one that lowers the peak or
 * the number of positions at it is made (ls_try_span). */
static int ls_try_buffer(ls *s, int32_t b, int32_t p, int dir,
			 int64_t budget)
{
	for (int32_t d = 0; d <= LS_REACH; d++) {
		int32_t lo = dir ? p - d : s->first[b];
		int32_t hi = dir ? s->last[b] : p + d;
		if (lo < 0 || hi >= s->nops || hi - lo > LS_WINDOW)
			break;
		if (lo == hi || (dir == 1   ? lo <= s->first[b]
				 : dir == 0 ? hi >= s->last[b]
					    : hi <= p))
			break;
		int got = ls_try_span(s, b, p, dir, lo, hi, p + 1, budget);
		if (got != LS_NONE)
			return got;
	}
	return LS_NONE;
}

/* The jumps of the second phase (ls_jump_targets): buffer b's users
 * from p on (dir 2: from the jump on), or its last one (dir 1), with
 * their ancestors, to just before the start of a buffer live at peak
 * position p that began further back than LS_REACH; or b's first user
 * (dir 0), with its descendants, to just after the end of one that ends
 * further on than that.  The order in which two buffers live at the
 * peak began (or end) is then undone (Conv_Case0's own first layers:
 * an accumulator begun before the two loads another convolution still
 * needs; finishing that one first lowers the peak of MPAS's order of
 * them by 12 %, test_mpas's part_of_a_bundled_graph). */
static int ls_jumps(ls *s, int32_t b, int32_t p, int dir, int64_t budget)
{
	const int32_t f = s->first[b], l = s->last[b];
	const int32_t n = dir ? s->nback : s->non;
	if (dir && l <= p)
		return LS_NONE;
	for (int32_t j = 0; j < n; j++) {
		int32_t lo = dir ? s->back[j] : f, hi = dir ? l : s->on[j];
		/* the targets run away from p: the spans only grow */
		if (hi - lo > LS_WINDOW || (dir ? lo <= f : hi >= l))
			break;
		int got = ls_try_span(s, b, p, dir, lo, hi,
				      dir == 2 ? lo : p + 1, budget);
		if (got != LS_NONE)
			return got;
	}
	return LS_NONE;
}

/* Inserts position x into list[0..*k), at most LS_JUMPS of them, no
 * repeats, the nearest to the peak first (back: the latest). */
static void ls_jump_insert(int32_t *list, int32_t *k, int32_t x, bool back)
{
	for (int32_t j = 0; j < *k; j++)
		if (list[j] == x)
			return;
	int32_t i = *k < LS_JUMPS ? *k : LS_JUMPS - 1;
	if (*k == LS_JUMPS && (back ? x <= list[i] : x >= list[i]))
		return;
	while (i > 0 && (back ? list[i - 1] < x : list[i - 1] > x)) {
		list[i] = list[i - 1];
		i--;
	}
	list[i] = x;
	*k += *k < LS_JUMPS;
}

/* The jump targets at peak position p: where the buffers live there
 * begin, further back than LS_REACH (s->back), and where they end,
 * further on (s->on), the nearest LS_JUMPS of each. */
static void ls_jump_targets(ls *s, int32_t p)
{
	s->nback = s->non = 0;
	s->work += s->nbuf;
	for (int32_t b = 0; b < s->nbuf; b++) {
		int32_t f = s->first[b], l = s->last[b];
		if (bsize(s, b) == 0 || f < 0 || f > p || l < p)
			continue;
		if (f < p - LS_REACH)
			ls_jump_insert(s->back, &s->nback, f, true);
		if (l > p + LS_REACH)
			ls_jump_insert(s->on, &s->non, l, false);
	}
}

/* One step: the first move found that takes a buffer live at a peak
 * position off it and lowers the peak or the number of positions at the
 * peak.  A buffer leaves position p when its first operation (with its
 * descendants up to there) moves to just after p, or a little further,
 * or its last operation (with its ancestors) to just before p, or a
 * little earlier, or (the second phase, jumps) to where a buffer live
 * at p began long before or ends long after.  False at a local
 * optimum. */
static bool ls_step(ls *s, bool jumps, int64_t budget)
{
	int32_t seen = 0;
	if (s->work > budget * LS_WINDOW * LS_SCAN)
		return false;
	/* from the position of the last move on: the peaks before it
	 * resisted already */
	for (int32_t q = 0; q < s->nops && seen < LS_PEAKS; q++) {
		int32_t p = (s->pstart + q) % s->nops;
		s->work++;
		if (s->val[p] != s->peak)
			continue;
		seen++;
		s->work += 3 * (int64_t)s->nbuf;
		if (jumps)
			ls_jump_targets(s, p);
		/* moving all of a buffer's remaining users first, for
		 * every buffer: few tries, and the common case in tiled
		 * loops */
		for (int di = 0; di < 3; di++)
			for (int32_t bi = 0; bi < s->nbuf; bi++) {
				int32_t b = s->border[bi];
				if (bsize(s, b) == 0 || s->first[b] < 0 ||
				    s->first[b] > p || s->last[b] < p)
					continue;
				int dir = (di + 2) % 3;
				int got = ls_try_buffer(s, b, p, dir, budget);
				if (got == LS_NONE && jumps)
					got = ls_jumps(s, b, p, dir, budget);
				if (got != LS_NONE)
					return got == LS_MOVED;
			}
	}
	return false;
}

/* Buffers in rank order of their ALLOC: the first move found does not
 * depend on the numbering. */
static void ls_sort_buffers(ls *s, ds_arena *a)
{
	const ds_graph *g = s->g;
	const int32_t nb = g->nbuf;
	ds_hkey *k = ds_arena_alloc(a, (size_t)nb + 1, sizeof *k);
	if (!k)
		return;
	for (int32_t b = 0; b < nb; b++)
		k[b] = (ds_hkey){(uint64_t)s->v->rank[g->buf_alloc[b]], b};
	qsort(k, (size_t)nb, sizeof *k, ds_hkey_cmp);
	for (int32_t b = 0; b < nb; b++)
		s->border[b] = k[b].x;
	ds_arena_release(a, k);
}

/* The operations tied to buffer b, into bops from k on (counted only
 * when bops is NULL): those after its ALLOC and before its FREE in the
 * augmented graph (its users and any tied by edges).  Returns the new k. */
static int32_t ls_tie_buffer(ls *s, int32_t b, int32_t k, int32_t st)
{
	const ds_graph *g = s->g;
	const view *v = s->v;
	int32_t ends[2] = {g->buf_alloc[b], g->buf_free[b]};
	for (int j = 0; j < 2; j++) {
		int32_t x = ends[j];
		const int32_t *adj = j ? v->pred : v->succ;
		int32_t a0 = j ? v->poff[x] : v->soff[x];
		int32_t a1 = j ? v->poff[x + 1] : v->soff[x + 1];
		for (int32_t i = a0; i < a1; i++) {
			int32_t y = adj[i];
			if (g->kind[y] != DS_OP || s->nst[y] == st)
				continue;
			s->nst[y] = st;
			if (s->bops)
				s->bops[k] = y;
			k++;
		}
	}
	return k;
}

/* Every buffer's operations (boff, bops), counted then filled; then each
 * operation's buffers (ooff, obuf), by rank. */
static void ls_tie_all(ls *s, ds_arena *a)
{
	const int32_t n = s->g->n, nb = s->nbuf;
	for (int pass = 0; pass < 2; pass++) {
		int32_t k = 0;
		for (int32_t b = 0; b < nb; b++) {
			s->boff[b] = k;
			k = ls_tie_buffer(s, b, k, ++s->st);
		}
		s->boff[nb] = k;
		if (!pass) {
			s->bops = ds_arena_alloc(a, (size_t)k + 1,
						 sizeof *s->bops);
			s->obuf = ds_arena_alloc(a, (size_t)k + 1,
						 sizeof *s->obuf);
			if (a->failed)
				return;
		}
	}
	for (int32_t b = 0; b < nb; b++)
		for (int32_t k = s->boff[b]; k < s->boff[b + 1]; k++)
			s->ooff[s->bops[k] + 1]++;
	for (int32_t x = 0; x < n; x++)
		s->ooff[x + 1] += s->ooff[x];
	/* each operation's buffers in rank order (the compacted order puts
	 * its ALLOCs and FREEs in this order) */
	for (int32_t i = 0; i < nb; i++) {
		int32_t b = s->border[i];
		for (int32_t k = s->boff[b]; k < s->boff[b + 1]; k++) {
			int32_t y = s->bops[k];
			s->obuf[s->ooff[y] + s->pos[y]++] = b;
		}
	}
}

/* The operations among each node's view lists adj (offsets off), in
 * their order, into *xoff and *xadj from a. */
static void ls_op_lists(ls *s, ds_arena *a, const int32_t *off,
			const int32_t *adj, int32_t **xoff, int32_t **xadj)
{
	const int32_t n = s->g->n;
	int32_t *o = ds_arena_alloc(a, (size_t)n + 1, sizeof *o);
	int32_t *x = ds_arena_alloc(a, (size_t)off[n] + 1, sizeof *x);
	*xoff = o;
	*xadj = x;
	if (a->failed)
		return;
	for (int32_t y = 0; y < n; y++) {
		o[y + 1] = o[y];
		for (int32_t k = off[y]; k < off[y + 1]; k++)
			if (s->g->kind[adj[k]] == DS_OP)
				x[o[y + 1]++] = adj[k];
	}
}

ls *mpas_ls_new(ds_arena *a, const ds_graph *g, const view *v, ds_err *e)
{
	const int32_t n = g->n, nb = g->nbuf;
	ls *s = ds_arena_alloc(a, 1, sizeof *s);
	if (!s) {
		ds_fail(e, DS_ENOMEM, "out of memory");
		return NULL;
	}
	s->g = g;
	s->v = v;
	s->nbuf = nb;
	for (int32_t x = 0; x < n; x++)
		s->nops += g->kind[x] == DS_OP;
	const size_t np1 = (size_t)s->nops + 1, nb1 = (size_t)nb + 1;
	s->seq = ds_arena_alloc(a, np1, sizeof *s->seq);
	s->pos = ds_arena_alloc(a, (size_t)n, sizeof *s->pos);
	s->boff = ds_arena_alloc(a, nb1, sizeof *s->boff);
	s->border = ds_arena_alloc(a, nb1, sizeof *s->border);
	s->ooff = ds_arena_alloc(a, (size_t)n + 1, sizeof *s->ooff);
	s->first = ds_arena_alloc(a, nb1, sizeof *s->first);
	s->last = ds_arena_alloc(a, nb1, sizeof *s->last);
	s->val = ds_arena_alloc(a, np1, sizeof *s->val);
	s->gap = ds_arena_alloc(a, np1, sizeof *s->gap);
	s->gl0 = ds_arena_alloc(a, np1 * NL0, sizeof *s->gl0);
	s->al0 = ds_arena_alloc(a, np1 * NL0, sizeof *s->al0);
	s->pmax = ds_arena_alloc(a, np1, sizeof *s->pmax);
	s->smax = ds_arena_alloc(a, np1, sizeof *s->smax);
	s->pcnt = ds_arena_alloc(a, np1, sizeof *s->pcnt);
	s->scnt = ds_arena_alloc(a, np1, sizeof *s->scnt);
	s->bst = ds_arena_alloc(a, nb1, sizeof *s->bst);
	s->wcnt = ds_arena_alloc(a, nb1, sizeof *s->wcnt);
	s->nst = ds_arena_alloc(a, (size_t)n, sizeof *s->nst);
	s->ord = ds_arena_alloc(a, np1, sizeof *s->ord);
	s->blive = ds_arena_alloc(a, nb1, sizeof *s->blive);
	s->bafter = ds_arena_alloc(a, nb1, sizeof *s->bafter);
	if (!a->failed)
		ls_sort_buffers(s, a);
	if (!a->failed)
		ls_tie_all(s, a);
	if (!a->failed) {
		ls_op_lists(s, a, v->soff, v->succ, &s->osoff, &s->osucc);
		ls_op_lists(s, a, v->poff, v->pred, &s->opoff, &s->opred);
	}
	if (a->failed) {
		ds_fail(e, DS_ENOMEM, "out of memory");
		return NULL;
	}
	return s;
}

/* The search applies: ALLOCs have no preds, FREEs no succs. */
bool mpas_ls_applies(const ds_graph *g)
{
	for (int32_t x = 0; x < g->n; x++) {
		if (g->kind[x] == DS_ALLOC && g->pred_off[x + 1] > g->pred_off[x])
			return false;
		if (g->kind[x] == DS_FREE && g->succ_off[x + 1] > g->succ_off[x])
			return false;
	}
	return true;
}

/* Improves order (all n nodes) in place with at most `moves` moves
 * (with jumps: the second phase, moves / LS_JUMP_SHARE of them); the
 * result is never worse. */
void mpas_ls_run(ls *s, int32_t *order, int64_t moves, bool jumps)
{
	const ds_graph *g = s->g;
	int32_t k = 0;
	for (int32_t i = 0; i < g->n; i++)
		if (g->kind[order[i]] == DS_OP)
			s->seq[k++] = order[i];
	if (!ls_eval_all(s))
		return; /* the order breaks the one-live rule: leave it */
	s->ntry = 0;
	s->work = 0;
	s->pstart = 0;
	if (jumps)
		moves /= LS_JUMP_SHARE;
	while (ls_step(s, jumps, moves))
		;
	/* the compacted order: unused buffers first, then each operation
	 * with the ALLOCs that start there before it and the FREEs that end
	 * there after it */
	k = 0;
	for (int32_t i = 0; i < g->nbuf; i++) {
		int32_t b = s->border[i];
		if (s->first[b] < 0) {
			order[k++] = g->buf_alloc[b];
			order[k++] = g->buf_free[b];
		}
	}
	int32_t np = s->nops;
	for (int32_t i = 0; i < np; i++) {
		int32_t x = s->seq[i];
		for (int32_t j = s->ooff[x]; j < s->ooff[x + 1]; j++) {
			int32_t b = s->obuf[j];
			if (s->first[b] == i)
				order[k++] = g->buf_alloc[b];
		}
		order[k++] = x;
		for (int32_t j = s->ooff[x]; j < s->ooff[x + 1]; j++) {
			int32_t b = s->obuf[j];
			if (s->last[b] == i)
				order[k++] = g->buf_free[b];
		}
	}
	DS_ASSERT(k == g->n);
}

