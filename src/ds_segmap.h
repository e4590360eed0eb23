/* ds_segmap.h: the address-segment map of one memory, the one model of
 * "who last occupied these addresses" shared by the evaluator (ds_replay.c)
 * and CPE (ds_cpe_mem.c).  Prefix ds_segmap_.
 *
 * Segment s covers [lo[s], lo[s+1]) (the last one up to size, the memory's
 * capacity) and was last occupied by occupancy occ[s] (-1: never).  An
 * occupancy is whatever integer the caller numbers it with.  Arrays come
 * from the caller's scratch arena: nothing to free one by one. */
#ifndef DS_SEGMAP_H
#define DS_SEGMAP_H

#include "ds.h"

/* Debug builds log the sets since the last reset while there are at most
 * this many, and recompute the map from that log at every power-of-two
 * count (ds_segmap_set): O(DS_SEGMAP_LOG^2) per reset, bounded. */
#define DS_SEGMAP_LOG 64

typedef struct ds_segmap {
	int64_t *lo;
	int32_t *occ;
	int32_t n, cap;
	int64_t size;
	ds_arena *arena;
	uint64_t ver; /* bumped by every change after ds_segmap_init (a
			 reset or a copy too): one map's contents are the
			 same while its ver is */
#ifndef NDEBUG
	int32_t nset; /* sets since the reset; DS_SEGMAP_LOG + 1: too many */
	int64_t set_lo[DS_SEGMAP_LOG], set_hi[DS_SEGMAP_LOG];
	int32_t set_occ[DS_SEGMAP_LOG];
#endif
} ds_segmap;

/* One segment [0, size), never occupied.  DS_ENOMEM (a->failed) when the
 * arena fails. */
int ds_segmap_init(ds_segmap *m, ds_arena *a, int64_t size);
/* Back to one segment never occupied. */
void ds_segmap_reset(ds_segmap *m);
/* The end of segment s. */
static inline int64_t ds_segmap_hi(const ds_segmap *m, int32_t s)
{
	return s + 1 < m->n ? m->lo[s + 1] : m->size;
}
/* The segment holding address x: O(log n).  Inline: the walks call it
 * once per occupancy. */
static inline int32_t ds_segmap_find(const ds_segmap *m, int64_t x)
{
	int32_t a = 0, z = m->n - 1;
	while (a < z) {
		int32_t mid = a + (z - a + 1) / 2;
		if (m->lo[mid] <= x)
			a = mid;
		else
			z = mid - 1;
	}
	return a;
}
/* [x, x + size) now belongs to occupancy o: O(n).  DS_ENOMEM when the map
 * cannot grow (the map is unchanged then). */
int ds_segmap_set(ds_segmap *m, int64_t x, int64_t size, int32_t o);
/* The same when the caller knows s = ds_segmap_find(m, x) already. */
int ds_segmap_set_at(ds_segmap *m, int32_t s, int64_t x, int64_t size,
		     int32_t o);
/* dst (from ds_segmap_init, same size) becomes a copy of src: O(n). */
int ds_segmap_copy(ds_segmap *dst, const ds_segmap *src);

#endif
