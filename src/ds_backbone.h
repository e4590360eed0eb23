/* ds_backbone.h: CPE's backbone, the plan its list scheduling keeps the
 * spills of and reorders around (ds_backbone.c). */
#ifndef DS_BACKBONE_H
#define DS_BACKBONE_H

#include "ds_pipeline.h"

/* CPE's backbone so far: the plan (len 0: DLR's own) and its figures;
 * the one it replaced (len 0: DLR's own; none while had_prev is false),
 * from which CPE also starts with more effort or after a pull
 * (ds_chain.c: cpe_runner_up, pull_floor). */
typedef struct ds_backbone {
	ds_plan plan;
	ds_figures best;
	ds_plan prev;
	bool had_prev;
	int64_t prev_peak; /* prev's peak_vstay (DLR's when prev is) */
	bool pulled;	   /* plan is backbone_pulled's */
	ds_plan alt;	   /* a second backbone (len 0: none): the pulls
			      from the aged placement over the cap, where
			      one is kept (ds_backbone.c: pulled_over) */
	ds_figures alt_best; /* alt's replay */
	ds_plan timely;	   /* a third (len 0: none): DLR's timely plan,
			      where it replays far shorter than plan
			      (ds_backbone.c: backbone_timely) */
	ds_figures timely_best; /* timely's replay */
	bool pack;	   /* DLR's plan is packed (ds_pack.c): so are the
			      candidates whose ordinary placement exceeds
			      the cap */
} ds_backbone;

/* CPE's backbone from DLR's plan dlr (figures *df; packed: a packed
 * placement, ds_place_packed's; timely: the placement DLR dropped whose
 * replay was the shortest, len 0 for none, with that replay's figures
 * *tf), into *bb: see ds_backbone.c.  The caller frees *bb
 * (ds_backbone_free), whatever the result. */
int ds_backbone_choose(const ds_graph *g, const ds_run_opts *o,
		       const ds_plan *dlr, const ds_figures *df, bool packed,
		       const ds_plan *timely, const ds_figures *tf,
		       ds_backbone *bb, ds_err *e);
void ds_backbone_free(const ds_graph *g, ds_backbone *bb);

#endif
