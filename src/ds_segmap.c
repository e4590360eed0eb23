/* ds_segmap.c: the address-segment map of one memory (see ds_segmap.h).
 *
 * Requires: addresses within [0, size) and sets inside them (the callers
 * check capacity first).
 * Guarantees: after any sequence of sets since the last reset, each
 * address's segment names the last occupancy set over it (-1: none).
 * Debug builds recompute that from a log of the sets (see DS_SEGMAP_LOG).
 * Cost: find O(log n), set and copy O(n), n the segments (a few tens in
 * practice: the occupancies that still show in the memory). */
#include "ds_segmap.h"

#include <string.h>

int ds_segmap_init(ds_segmap *m, ds_arena *a, int64_t size)
{
	memset(m, 0, sizeof *m);
	m->arena = a;
	m->cap = 16;
	m->lo = ds_arena_alloc(a, (size_t)m->cap, sizeof *m->lo);
	m->occ = ds_arena_alloc(a, (size_t)m->cap, sizeof *m->occ);
	if (!m->lo || !m->occ)
		return DS_ENOMEM;
	m->size = size;
	ds_segmap_reset(m);
	return DS_OK;
}

void ds_segmap_reset(ds_segmap *m)
{
	m->ver++;
	m->n = 1;
	m->lo[0] = 0;
	m->occ[0] = -1;
#ifndef NDEBUG
	m->nset = 0;
#endif
}

/* Room for cap segments. */
static int sm_room(ds_segmap *m, int32_t cap)
{
	if (cap <= m->cap)
		return DS_OK;
	int64_t *l = ds_arena_grow(m->arena, m->lo, (size_t)cap, sizeof *l);
	if (!l)
		return DS_ENOMEM;
	m->lo = l;
	int32_t *o = ds_arena_grow(m->arena, m->occ, (size_t)cap, sizeof *o);
	if (!o)
		return DS_ENOMEM;
	m->occ = o;
	m->cap = cap;
	return DS_OK;
}

#ifndef NDEBUG
/* From scratch: the last set logged that covers address a. */
static int32_t sm_owner(const ds_segmap *m, int64_t a)
{
	for (int32_t k = m->nset; k-- > 0;)
		if (m->set_lo[k] <= a && a < m->set_hi[k])
			return m->set_occ[k];
	return -1;
}

/* The map against its recomputation from the log: both are step
 * functions of the address, so agreeing at every step of either is
 * agreeing everywhere. */
static void sm_check(const ds_segmap *m)
{
	DS_ASSERT(m->n >= 1 && m->n <= m->cap && m->lo[0] == 0);
	for (int32_t s = 0; s < m->n; s++) {
		DS_ASSERT(s == 0 || m->lo[s - 1] <= m->lo[s]);
		DS_ASSERT(m->lo[s] <= m->size);
		if (m->lo[s] < ds_segmap_hi(m, s))
			DS_ASSERT(m->occ[s] == sm_owner(m, m->lo[s]));
	}
	for (int32_t k = 0; k < m->nset; k++) {
		int64_t a[2] = {m->set_lo[k], m->set_hi[k]};
		for (int i = 0; i < 2; i++)
			if (a[i] < m->size)
				DS_ASSERT(m->occ[ds_segmap_find(m, a[i])] ==
					  sm_owner(m, a[i]));
	}
}

/* Logs a set while the log has room; checks at power-of-two counts. */
static void sm_log(ds_segmap *m, int64_t x, int64_t end, int32_t o)
{
	if (m->nset >= DS_SEGMAP_LOG) {
		m->nset = DS_SEGMAP_LOG + 1; /* too many: no more checks */
		return;
	}
	m->set_lo[m->nset] = x;
	m->set_hi[m->nset] = end;
	m->set_occ[m->nset++] = o;
	if ((m->nset & (m->nset - 1)) == 0)
		sm_check(m);
}
#endif

int ds_segmap_set(ds_segmap *m, int64_t x, int64_t size, int32_t o)
{
	return ds_segmap_set_at(m, ds_segmap_find(m, x), x, size, o);
}

int ds_segmap_set_at(ds_segmap *m, int32_t s, int64_t x, int64_t size,
		     int32_t o)
{
	int64_t end = x + size;
	int32_t i0 = s, i1 = i0;
	DS_ASSERT(i0 == ds_segmap_find(m, x));
	while (i1 + 1 < m->n && m->lo[i1 + 1] < end)
		i1++;
	/* segments i0..i1 become: the head of i0 before x (if any), the new
	 * occupancy, the tail of i1 after end (if any) */
	int64_t pl[3];
	int32_t po[3];
	int np = 0;
	if (m->lo[i0] < x)
		pl[np] = m->lo[i0], po[np++] = m->occ[i0];
	pl[np] = x, po[np++] = o;
	if (end < ds_segmap_hi(m, i1))
		pl[np] = end, po[np++] = m->occ[i1];
	int32_t nn = m->n - (i1 - i0 + 1) + np;
	if (nn > m->cap && sm_room(m, 2 * nn))
		return DS_ENOMEM;
	memmove(m->lo + i0 + np, m->lo + i1 + 1,
		(size_t)(m->n - i1 - 1) * sizeof *m->lo);
	memmove(m->occ + i0 + np, m->occ + i1 + 1,
		(size_t)(m->n - i1 - 1) * sizeof *m->occ);
	for (int k = 0; k < np; k++)
		m->lo[i0 + k] = pl[k], m->occ[i0 + k] = po[k];
	m->n = nn;
	m->ver++;
#ifndef NDEBUG
	if (m->nset <= DS_SEGMAP_LOG)
		sm_log(m, x, end, o);
#endif
	return DS_OK;
}

int ds_segmap_copy(ds_segmap *dst, const ds_segmap *src)
{
	if (dst->cap < src->n && sm_room(dst, src->cap))
		return DS_ENOMEM;
	memcpy(dst->lo, src->lo, (size_t)src->n * sizeof *src->lo);
	memcpy(dst->occ, src->occ, (size_t)src->n * sizeof *src->occ);
	dst->n = src->n;
	dst->size = src->size;
	dst->ver++; /* not src's: dst's versions only grow */
#ifndef NDEBUG
	dst->nset = src->nset;
	int32_t k = src->nset <= DS_SEGMAP_LOG ? src->nset : 0;
	memcpy(dst->set_lo, src->set_lo, (size_t)k * sizeof *src->set_lo);
	memcpy(dst->set_hi, src->set_hi, (size_t)k * sizeof *src->set_hi);
	memcpy(dst->set_occ, src->set_occ, (size_t)k * sizeof *src->set_occ);
#endif
	return DS_OK;
}
