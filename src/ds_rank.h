/* ds_rank.h: what ds_rank.c shares with the passes that use the
 * structural rank besides ds_structural_rank() (ds_stage.h), and with
 * those that sort adjacency lists by a position (ds_wave.c): private to
 * the library. */
#ifndef DS_RANK_H
#define DS_RANK_H

#include "ds.h"

/* Sorts each list adj[off[x]..off[x+1]) of a CSR over n nodes by rank
 * (then node), with k[0..off[n]] as scratch: each list on its own, by
 * insertion when short, by radix (ds_hkey_sort, its scratch from h) when
 * long: O(E) whatever the degrees. */
void ds_rank_sort_lists(const ds_heap *h, const int32_t *off, int32_t *adj,
			int32_t n, const int32_t *rank, ds_hkey *k);

#endif
