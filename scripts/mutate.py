#!/usr/bin/env python3
"""Mutation check: do the tests notice a small deliberate bug?

Copies the tree (the tracked files, as they are in the working tree) to a
temporary folder beside a link to ../shared, builds it once (with
DS_CHECKS, as scripts/test.sh: the assertions are live), then applies
each mutation of MUTATIONS in turn: one textual replacement in one file,
an incremental build, and the tests the mutation names, one at a time and
the likeliest to catch it first, until one fails (the mutation is caught) or all pass (it
survives).  A mutation whose text is not found exactly once, or that does
not build, is reported as such (the code moved: update the list).  A test
that already fails on the unmutated tree is named in a WARNING, and then
catches a mutation only with a failure line the unmutated tree did not
show.

Not part of CI (it takes a while).  Runs with DS_CROSSCHECK_QUICK=1 unless
--full.  Usage:
  python3 scripts/mutate.py [--full] [--keep] [--timeout S] [NAME_SUBSTRING...]
  python3 scripts/mutate.py --check [NAME_SUBSTRING...]
  python3 scripts/mutate.py -h | --help
Prints one line per mutation and the score; exit 1 if any survives.
--check only says, without copying or building, whether each mutation's
text is found exactly once in the working tree (exit 1 if one is not).
A NAME_SUBSTRING picks the mutations whose name contains it (any of them);
to pick "cli: --help prints the main usage", give "main usage".
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# the tests of each kind of mutation, the likeliest to catch it first
EVAL = ["test_replay", "test_api", "test_view", "test_crosscheck"]
CLI = ["cli", "golden"]
STAGE = ["golden", "test_pipeline", "test_cpe", "test_mpas", "test_dlr",
         "test_baseline"]
RETIME = ["test_retime", "cli", "golden", "test_pipeline"]
PORTFOLIO = ["test_portfolio", "golden", "test_pipeline", "test_baseline"]

# (name, file, text, replacement, tests)
MUTATIONS = [
    # ---- the evaluator's rules (src/ds_replay.c)
    ("eval: spill nodes skip their pipe's in-order wait", "src/ds_replay.c",
     "if (pp >= 0 && pfree[pp] > s)", "if (pp >= 0 && v < n && pfree[pp] > s)",
     EVAL),
    ("eval: capacity checked against the memory's size only", "src/ds_replay.c",
     "if (off > cap - size)", "if (off > cap)", EVAL),
    ("eval: overlap with a live buffer allowed", "src/ds_replay.c",
     "if (r->occ_end[o] < 0) {", "if (r->occ_end[o] < 0 && !r) {", EVAL),
    ("eval: --q1 one-live rule off", "src/ds_replay.c",
     "} else if (++w->l0[m] > 1 && w->q1) {",
     "} else if (++w->l0[m] > 1 && w->q1 && !w) {",
     EVAL),
    ("eval: graph edges not checked for order", "src/ds_replay.c",
     "if (r->pos[g->esrc[k]] > r->pos[g->edst[k]])",
     "if (r->pos[g->esrc[k]] > r->pos[g->edst[k]] + 1)", EVAL),
    ("eval: spill edges not checked for order", "src/ds_replay.c",
     "if (r->pos[r->extra.src[k]] > r->pos[r->extra.dst[k]])",
     "if (r->pos[r->extra.src[k]] > r->pos[r->extra.dst[k]] + 1)", EVAL),
    # the spill model (SPEC.md "Spills") is shared by the evaluator and
    # the stages since it moved to src/ds.h: only figures worked out by
    # hand or the referee can notice these
    ("eval: spill node cost 2*size + 100", "src/ds.h",
     "#define DS_SPILL_FIXED_CYCLES 150", "#define DS_SPILL_FIXED_CYCLES 100",
     EVAL),
    ("eval: SPILL_OUT of a COPY_IN buffer costs cycles", "src/ds.h",
     "return g->buf_copyin[b] ? 0 : ds_spill_in_cycles(g, b);",
     "return ds_spill_in_cycles(g, b);", EVAL),
    ("eval: no address-reuse edges", "src/ds_replay.c",
     "int rc = add_edge(r, r->occ_end[o], v);",
     "int rc = r ? DS_OK : add_edge(r, r->occ_end[o], v);", EVAL),
    # ---- each stage's key step
    ("cpe: 1 round", "src/ds_cpe.h",
     "#define CPE_DEFAULT_ROUNDS 4", "#define CPE_DEFAULT_ROUNDS 1", STAGE),
    ("cpe: 1 round and 1 pass", "src/ds_cpe.h",
     "#define CPE_FB_PASSES 3", "#define CPE_FB_PASSES 1\n"
     "#undef CPE_DEFAULT_ROUNDS\n#define CPE_DEFAULT_ROUNDS 1", STAGE),
    ("mpas: L0 deadlock guard off", "src/ds_mpas_greedy.c",
     "static bool gr_l0_safe(run *r)\n{\n",
     "static bool gr_l0_safe(run *r)\n{\n\tif (r)\n\t\treturn true;\n",
     STAGE),
    ("dlr: one start (was 16)", "src/ds_dlr_stage.c",
     "#define DLR_STARTS 16", "#define DLR_STARTS 1", STAGE),
    ("dlr greedy: a started chain stays among its inputs' readers",
     "src/ds_dlr_greedy.c",
     "int32_t at = p->upos[k], end = p->uoff[x] + --p->left[x];",
     "int32_t at = p->upos[k], end = p->uoff[x] + p->left[x] - 1;",
     ["test_dlr"]),
    ("dlr greedy: a reader's place in uv not kept", "src/ds_dlr_greedy.c",
     "\t\tp->upos[kw] = at;\n", "\n", ["test_dlr"]),
    ("dlr memo: a placement kept for another victim rule",
     "src/ds_dlr.c", "x->o.victim == o->victim &&", "",
     ["test_dlr", "golden", "test_pipeline"]),
    ("dlr memo: a replaced placement keeps its old order and key",
     "src/ds_dlr.c",
     "\tmemcpy(k->order, order, (size_t)g->n * sizeof *order);\n\tk->hash = h;\n",
     "\tif (k->hash == 0) {\n\t\tmemcpy(k->order, order, (size_t)g->n * sizeof *order);\n\t\tk->hash = h;\n\t}\n",
     ["test_dlr", "golden", "test_pipeline"]),
    ("cpe: the free runs kept across an occupancy's end",
     "src/ds_cpe_list.c",
     "\t\t\tc->occ_endt[c->cur_occ[c->nbuf[v]]] = c->fin[v];\n\t\t\tc->endver++;\n",
     "\t\t\tc->occ_endt[c->cur_occ[c->nbuf[v]]] = c->fin[v];\n",
     ["test_cpe", "golden", "test_pipeline"]),
    ("segmap: a copy leaves the version", "src/ds_segmap.c",
     "\tdst->ver++; /* not src's: dst's versions only grow */\n", "",
     ["test_cpe", "golden", "test_pipeline"]),
    ("free-first: FREEs not first", "src/ds_order.c",
     "int64_t c = g->kind[v] == DS_FREE ? 0 : g->kind[v] == DS_OP ? 1 : 2;",
     "int64_t c = g->kind[v] == DS_FREE ? 1 : g->kind[v] == DS_OP ? 1 : 2;",
     STAGE),
    ("place: the aged victim rule is furthest next use", "src/ds_place.c",
     "if (x < 0 || s->o->victim != DS_VICTIM_AGED)",
     "if (x < 0 || s->o->victim != -1)", ["test_dlr"]),
    ("pipeline: CPE never starts from the aged placement",
     "src/ds_chain.c",
     "int rc = ds_cpe(g, bb->len ? bb : dlr, &o->cpe, out, e);",
     "int rc = ds_cpe(g, dlr, &o->cpe, out, e);\n\t(void)bb;",
     ["test_pipeline", "golden"]),
    ("cli: bench --repeat ignored", "src/cli_bench.c",
     "for (int64_t k = 0; k < a->repeat; k++) {",
     "for (int64_t k = 0; k < 1; k++) {", CLI),
    ("cli: bench takes --scale's options and the reverse", "src/cli_bench.c",
     "\tconst char *opt;\n\tif (!a->scale) {",
     "\tconst char *opt;\n\tif (a)\n\t\treturn 0;\n\tif (!a->scale) {", CLI),
    ("retime: traffic cap ignored", "src/ds_retime.c",
     "if (r->cf.extra_ddr + tr > r->max_ddr ||",
     "if (r->cf.extra_ddr + tr > INT64_MAX - tr ||", RETIME),
    ("retime: never run", "src/ds_chain.c",
     "\tif (rc == DS_OK)\n\t\trc = retime(g, o, out, dlr_ddr, f, e);",
     "\tif (rc == DS_OK && dlr_ddr < 0)\n\t\trc = retime(g, o, out, dlr_ddr, f, e);",
     RETIME),
    ("replan: a step may run before the steps it follows",
     "src/ds_replan.c", "\t\tif (pr[w] & ~d[w])", "\t\tif (pr[w] & ~d[w] & 0)",
     ["test_replan"]),
    ("replan: the tail kept to the plan's own traffic", "src/ds_finish.c",
     "\treturn f->extra_ddr > max_ddr ? f->extra_ddr : max_ddr;",
     "\treturn f->extra_ddr > max_ddr || 1 ? f->extra_ddr : max_ddr;",
     ["test_retime"]),
    ("replan: a union's tail may spend over its parts' traffic",
     "src/ds_pipeline.c", "\treturn cap < parts_ddr ? cap : parts_ddr;",
     "\treturn cap < parts_ddr || 1 ? cap : parts_ddr;", ["test_portfolio"]),
    ("replan: the units start at offset 0 only", "src/ds_replan_model.c",
     "\tbase = base < 0 ? 0 : base;", "\tbase = base < 0 || 1 ? 0 : base;",
     ["test_replan"]),
    ("replan: no rollout kept", "src/ds_replan.c",
     "\tif (end < r->inc_end) {", "\tif (end < r->inc_end && !r) {",
     ["test_replan"]),
    ("window: reloads not moved up", "src/ds_window.c",
     "\tif (hoisted && !hoist_all(x))", "\tif (hoisted && x && 0 && !hoist_all(x))",
     ["test_window"]),
    ("window: the victim with the nearest next use", "src/ds_window.c",
     "\t\tif (nu > bn || (nu == bn && x->last[b] < bl))",
     "\t\tif (bn < 0 || nu < bn || (nu == bn && x->last[b] < bl))",
     ["test_window"]),
    ("window: pinned occupancies placed like free ones", "src/ds_window.c",
     "\t\tif (q->pinned) {", "\t\tif (q->pinned && 0) {",
     ["test_window"]),
    ("portfolio: the baselines' plans never compete with dan's",
     "src/ds_portfolio.c",
     "for (int s = 0; s < DS_NBASE && rc == DS_OK; s++) {\n\t\tif (!pf->placed[s]",
     "for (int s = DS_NBASE; s < DS_NBASE && rc == DS_OK; s++) {\n\t\tif (!pf->placed[s]",
     PORTFOLIO),
    # ---- the public API (src/ds_api.c)
    ("api: spill accessor gives the buffer index, not its BufId",
     "src/ds_api.c", "*bufid = g->g->buf_id[p->p.spill[k].buf];",
     "*bufid = p->p.spill[k].buf;", ["test_api"]),
    ("api: offset accessor ignores the buffer", "src/ds_api.c",
     "return b < 0 || !p->p.offset ? -1 : p->p.offset[b];",
     "return b < 0 || !p->p.offset ? -1 : p->p.offset[0];", ["test_api"]),
    ("api: caller's allocator ignored by builder_new", "src/ds_api.c",
     "\tds_heap h = heap_of(alloc);\n\tdansched_builder *b",
     "\tds_heap h = heap_of(NULL);\n\t(void)alloc;\n\tdansched_builder *b",
     ["test_api"]),
    # ---- each CLI option ignored (src/main.c, bench and tradeoff in
    # src/cli_bench.c)
    ("cli: eval --q1 ignored", "src/main.c",
     "unsigned flags = (a.q1 ? DANSCHED_EVAL_Q1 : 0u) |",
     "unsigned flags = (a.q1 && !a.q1 ? DANSCHED_EVAL_Q1 : 0u) |", CLI),
    ("cli: eval --json ignored", "src/main.c",
     "\tif (a.json)\n\t\treturn cli_print_json(figures_json(NULL, &f, &b));",
     "\tif (a.json && !a.json)\n\t\treturn cli_print_json(figures_json(NULL, &f, &b));",
     CLI),
    ("cli: --cap SPEC ignored", "src/main.c",
     "\tcase OPT_CAP:\n\t\tif (dansched_caps_parse(&a->caps, val, &e))",
     "\tcase OPT_CAP:\n\t\tif (dansched_caps_parse(&(dansched_caps){{0}}, val, &e))",
     CLI),
    # (--cap=SPEC is getopt_long's now: the place that can still drop the
    # capacities of one command is where schedule and bench load a graph)
    ("cli: schedule/bench --cap ignored", "src/main.c",
     "int rc = dansched_graph_load(NULL, path, &a->caps, &j->g, e);",
     "(void)a;\n\tint rc = dansched_graph_load(NULL, path, NULL, &j->g, e);",
     CLI),
    ("cli: schedule --effort ignored", "src/main.c",
     "o->effort = a->effort;", "o->effort = 0;", CLI),
    ("mpas: effort read as moves, not a multiplier", "src/ds_mpas.c",
     "LS_MOVES * (o && o->effort > 1 ? o->effort : 1)",
     "(o && o->effort > 0 ? o->effort : LS_MOVES)",
     ["test_mpas", "cli"]),
    ("mpas: no second phase of the local search", "src/ds_mpas.c",
     "\t\tpolish_keep(M, M->jumped, &jbest, &jvalid);",
     "\t\t(void)jvalid;",
     ["test_mpas", "test_pipeline"]),
    ("mpas: the second phase's jumps never made", "src/ds_mpas_ls.c",
     "if (got == LS_NONE && jumps)", "if (got == LS_NONE && jumps && !s)",
     ["test_mpas", "test_pipeline"]),
    ("mpas: no jump of a first user later", "src/ds_mpas_ls.c",
     "const int32_t n = dir ? s->nback : s->non;",
     "const int32_t n = dir ? s->nback : 0;",
     ["test_mpas", "test_pipeline"]),
    ("mpas: 8 jump targets each way, not 16", "src/ds_mpas_ls.c",
     "#define LS_JUMPS 16", "#define LS_JUMPS 8", ["test_mpas"]),
    ("mpas: the jump targets no further back than the first phase reaches",
     "src/ds_mpas_ls.c", "if (f < p - LS_REACH)",
     "if (f >= p - LS_REACH && f < p)",
     ["test_mpas", "test_pipeline"]),
    ("pipeline: DLR only from the second phase's order", "src/ds_pipeline.c",
     "\tif (!d->near_first)\n\t\treturn dlr_search_from(",
     "\tif (d)\n\t\treturn dlr_search_from(",
     ["test_pipeline", "test_mpas"]),
    ("pipeline: DLR never from the second phase's order", "src/ds_pipeline.c",
     "if (rc || ds_dlr_starts(g, o) < 2)",
     "if (rc || ds_dlr_starts(g, o) > 0)",
     ["test_pipeline", "test_mpas"]),
    ("pipeline: the first phase's order not replaced by a baseline's",
     "src/ds_pipeline.c",
     "\tmemcpy(d->near_first, d->near, (size_t)g->n * sizeof *d->near);\n\treturn mpas_or_baseline(",
     "\tmemcpy(d->near_first, d->near, (size_t)g->n * sizeof *d->near);\n\treturn 0 && mpas_or_baseline(",
     ["test_pipeline", "test_mpas"]),
    ("pipeline: the second phase's DLR plan kept on ties", "src/ds_pipeline.c",
     "bool take = rc == DS_OK && ds_dlr_better(&fq, &f);",
     "bool take = rc == DS_OK && !ds_dlr_better(&f, &fq);",
     ["test_pipeline", "test_mpas"]),
    ("api: effort not checked", "src/ds_api.c",
     "o->effort < 0 || o->effort > DANSCHED_EFFORT_MAX", "o->effort < 0",
     ["test_api", "python"]),
    ("cli: schedule --traffic-budget ignored", "src/main.c",
     "o->traffic_budget_pct = a->traffic_budget;",
     "o->traffic_budget_pct = 5;", CLI),
    ("cli: schedule --peak-budget ignored", "src/main.c",
     "o->peak_budget_pct = a->peak_budget;", "o->peak_budget_pct = 0;", CLI),
    ("cli: schedule --stage ignored", "src/main.c",
     "\to->effort = a->effort;",
     "\to->stage = DANSCHED_CPE;\n\to->effort = a->effort;", CLI),
    ("cli: schedule --scheduler forced to dan", "src/main.c",
     "\to->effort = a->effort;",
     "\to->scheduler = DANSCHED_DAN;\n\to->effort = a->effort;", CLI),
    ("cli: schedule refuses nothing it would not use", "src/main.c",
     "\tconst char *opt;\n\tif (!dan && o->stage != DANSCHED_CPE)",
     "\tconst char *opt;\n\tif (a)\n\t\treturn 0;\n\tif (!dan && o->stage != DANSCHED_CPE)",
     CLI),
    ("api: options a run would not use taken", "src/ds_api.c",
     "\treturn options_unused(o, e);", "\treturn 0 && options_unused(o, e);",
     ["test_api", "python"]),
    ("api: a NULL Bufs array with items taken", "src/ds_graph.c",
     "if (nbufs < 0 || (nbufs > 0 && !bufs))", "if (nbufs < 0)",
     ["test_api"]),
    ("api: a message quotes control characters", "src/ds_util.c",
     "\t\t\tif ((unsigned char)*c < 0x20 || *c == 0x7f)",
     "\t\t\tif (0)", ["test_api"]),
    ("pipeline: no rounds of CPE and retiming after the first",
     "src/ds_chain.c",
     "int rounds = ds_run_size(g, o) <= CPE_RETIME_MAX_NODES",
     "int rounds = ds_run_size(g, o) < 0", STAGE),
    ("parts: a plan within the sums kept though the parts' dominates",
     "src/ds_parts.c",
     "\t     ds_portfolio_beats(&fc, bf))) {",
     "\t     (0 && ds_portfolio_beats(&fc, bf)))) {",
     ["test_portfolio"]),
    ("parts: graphs of more than 4 parts planned whole only",
     "src/ds_parts.c", "\tif (pt.k > PARTS_MAX)", "\tif (pt.k > 4)",
     ["test_portfolio"]),
    ("parts: a part's graph numbered in g's order, not by its own rank",
     "src/ds_parts.c", "\t\t\tpt->local[rank[i]] = pt->nodes[i];",
     "\t\t\tpt->local[i] = pt->nodes[i] + 0 * rank[i];",
     ["test_portfolio"]),
    ("parts: the parts of a large graph planned with their own budgets",
     "src/ds_parts.c", "\tif (g->n > DS_SMALL_GRAPH_NODES)\n\t\tds_run_opts_size",
     "\tif (g->n < 0)\n\t\tds_run_opts_size", ["test_portfolio"]),
    ("size: a part's work budgets not cut to its share", "src/ds_stage.h",
     "\tif (all == n)\n\t\treturn work;", "\tif (all >= n)\n\t\treturn work;",
     ["test_pipeline"]),
    ("size: DLR starts by the part's own size", "src/ds_dlr_stage.c",
     "\tint64_t k = work / ds_size_nodes(g, o->size_nodes);",
     "\tint64_t k = work / ds_size_nodes(g, 0);", ["test_pipeline"]),
    ("parts: parts of one size run in the order of their least node",
     "src/ds_parts.c", "uint64_t r = (uint64_t)rank[v], first",
     "uint64_t r = (uint64_t)v + 0 * (uint64_t)rank[v], first",
     ["test_portfolio"]),
    ("parts: preferred by (extra_ddr, spills, makespan) at stage CPE too",
     "src/ds_parts.c", "\tif (o->stage != DS_STAGE_CPE)",
     "\tif (o->stage != 0)", ["test_portfolio"]),
    ("parts: the whole plan given up wherever it is not within the sums",
     "src/ds_parts.c",
     "\t    ((!within(bf, &pt.sum) && preferred(o, &fc, bf)) ||",
     "\t    ((!within(bf, &pt.sum) && (1 || preferred(o, &fc, bf))) ||",
     ["test_portfolio"]),
    ("pipeline: no runner-up backbone at more effort", "src/ds_chain.c",
     "\tif (o->cpe.effort <= 1 || !bb->had_prev || bb->pulled)",
     "\tif (o->cpe.effort >= 1 || !bb->had_prev || bb->pulled)",
     ["test_pipeline"]),
    ("pipeline: more effort keeps its own plan (no default floor)",
     "src/ds_pipeline.c",
     "\tif (more)\n\t\talt[n++] = one;",
     "\tif (0 && more)\n\t\talt[n++] = one;", ["test_pipeline"]),
    ("pipeline: no budget floor (stage 3 again at budget 0)",
     "src/ds_pipeline.c",
     "\tif (o->cpe.traffic_budget_pct <= 0 || df->extra_ddr == 0 ||",
     "\tif (o->cpe.traffic_budget_pct >= 0 || df->extra_ddr == 0 ||",
     ["test_pipeline"]),
    ("pipeline: the budget floor takes no plan of more traffic",
     "src/ds_pipeline.c",
     "\t\t\t      replan_ddr(o, df, parts_ddr), out, f, &took, e);",
     "\t\t\t      replan_ddr(o, df, parts_ddr) * 0, out, f, &took, e);",
     ["test_pipeline"]),
    ("pipeline: no peak floor (a peak budget's plan longer than 5's kept)",
     "src/ds_pipeline.c",
     "\t\tif (peak_rungs[r] >= o->cpe.peak_budget_pct)\n\t\t\tbreak;",
     "\t\tif (peak_rungs[r] >= 0)\n\t\t\tbreak;", ["test_pipeline"]),
    ("pipeline: the peak floors at 5 only (not at 25 and 100)",
     "src/ds_pipeline.c",
     "static const double peak_rungs[NPEAK_RUNGS] = {PEAK_BUDGET_DEFAULT, 25,\n\t\t\t\t\t       100};",
     "static const double peak_rungs[NPEAK_RUNGS] = {PEAK_BUDGET_DEFAULT, 1e9,\n\t\t\t\t\t       1e9};",
     ["test_pipeline"]),
    ("pipeline: of plans as long, the higher peak kept",
     "src/ds_chain.c",
     "\t\t\t\t\t    fq->peak_vstay < f->peak_vstay))),",
     "\t\t\t\t\t    fq->peak_vstay > f->peak_vstay))),",
     ["test_pipeline"]),
    ("pipeline: the stage's plans not held to the peak budget",
     "src/ds_pipeline.c",
     "\tcapped.cpe.peak_cap = finish_peak(ro, df);",
     "\tcapped.cpe.peak_cap = 0 * finish_peak(ro, df);", ["test_pipeline"]),
    ("pipeline: a plan above the peak cap kept where shorter",
     "src/ds_chain.c",
     "\tbool qin = within_cap(o, fq), in = within_cap(o, f);",
     "\tbool qin = true, in = within_cap(o, f);",
     ["test_pipeline"]),
    ("pipeline: no cap floor (the chain's plan above the peak cap kept)",
     "src/ds_chain.c",
     "\tif (within_cap(o, f))\n\t\treturn DS_OK;\n\tds_backbone bb;",
     "\tif (within_cap(o, f) || 1)\n\t\treturn DS_OK;\n\tds_backbone bb;",
     ["test_pipeline"]),
    ("portfolio: a baseline's plan above the peak cap kept where better",
     "src/ds_portfolio.c",
     "\tif (!ds_within_peak_cap(cap, f->peak_vstay) &&",
     "\tif (0 && !ds_within_peak_cap(cap, f->peak_vstay) &&",
     ["test_pipeline", "test_portfolio"]),
    ("portfolio: the peak cap holds even against the targets",
     "src/ds_portfolio.c",
     "\t\treturn misses(t, f) < misses(t, bf);",
     "\t\treturn false && misses(t, f) < misses(t, bf);",
     ["test_portfolio"]),
    ("pipeline: the ladder's plans without the floors",
     "src/ds_pipeline.c",
     "\tint n = floor_opts(o, alt);",
     "\tint n = 0 * floor_opts(o, alt);", ["test_pipeline"]),
    ("pipeline: no ladder floor (a budget's plan longer than 5's kept)",
     "src/ds_pipeline.c",
     "\tif (ds_budget_ladder[below] == 0 || df->extra_ddr == 0 ||",
     "\tif (below >= 0 || df->extra_ddr == 0 ||", ["test_pipeline"]),
    ("pipeline: the chain at budget 5 taken from budget 0's",
     "src/ds_pipeline.c",
     "const bool zero = o->cpe.traffic_budget_pct == 0;",
     "const bool zero = o->cpe.traffic_budget_pct <= 5;",
     ["test_pipeline", "test_api"]),
    ("pipeline: CPE's stage at 25 and above taken from 5's",
     "src/ds_pipeline.c",
     "const int i = ladder_index(o->cpe.traffic_budget_pct);",
     "const int i = ladder_index(o->cpe.traffic_budget_pct) > 1 ? 1 : "
     "ladder_index(o->cpe.traffic_budget_pct);",
     ["test_api", "test_pipeline"]),
    ("json: a node streamed alone nests from 0, not from its depth",
     "src/ds_json.c",
     "int most = CJSON_NESTING_LIMIT - depth;",
     "int most = CJSON_NESTING_LIMIT - depth + 3;", ["test_loader"]),
    ("json: a byte order mark before a streamed element let through",
     "src/ds_json.c",
     "if (s->at >= s->len || s->text[s->at] == '\\xEF') {",
     "if (s->at >= s->len) {", ["test_loader"]),
    ("json: every document read whole (the streamed path unused)",
     "src/ds_json.c",
     "\t*read = load_stream(&L, b, text, len, start, e);",
     "\t*read = load_stream(&L, b, text, len, start, e) && !b;",
     ["test_loader"]),
    ("pipeline: no lean floor (only the backbone the whole budget chose)",
     "src/ds_chain.c",
     "\tif (o->cpe.traffic_budget_pct <= LEAN_BUDGET_PCT ||",
     "\tif (o->cpe.traffic_budget_pct >= 0 ||", ["test_retime"]),
    ("retime: a reload's need not bounded by its occupancy's end",
     "src/ds_retime_phase.c",
     "\t*line = end >= 0 ? r->pos[end] : r->total;",
     "\t*line = end >= 0 ? r->total : r->total;", RETIME),
    ("retime: by need, the window ready first, not one ready by need",
     "src/ds_retime_phase.c",
     "\t\t\tk = t <= need ? rdy_room(r, d, x, size, cap) : cap + t;",
     "\t\t\tk = t <= need && 0 ? rdy_room(r, d, x, size, cap) : cap + t;",
     ["test_retime", "test_pipeline"]),
    ("retime: by need, the times of the plan itself (edges not lifted)",
     "src/ds_retime_phase.c",
     "\tif (off > g2.caps.cap[m])\n\t\tg2.caps.cap[m] = off;",
     "\tif (off > g2.caps.cap[m])\n\t\tg2.caps.cap[m] = off;\n"
     "\trt_plan_copy(r->g, &r->cur, &r->trial);",
     ["test_retime", "test_pipeline"]),
    ("cpe: the gang mode never runs", "src/ds_cpe.c",
     "\tif (rc == DS_OK && !light && b->gang_on && b->gang_due)",
     "\tif (rc == DS_OK && !light && b->gang_on && b->gang_due && 0)",
     ["test_pipeline"]),
    ("cpe: a gang's windows keep the backbone's reservations",
     "src/ds_cpe_mem.c",
     "\treturn c->relax_now && !ds_mem_stays(c->g->buf_mem[c->nbuf[v]]);",
     "\treturn c->relax_now && !ds_mem_stays(c->g->buf_mem[c->nbuf[v]])"
     " && 0;", ["test_pipeline"]),
    ("cpe: a gang's operations not issued first", "src/ds_cpe_list.c",
     "\tif (c->ncommit > 0) {", "\tif (c->ncommit > 0 && 0) {",
     ["test_pipeline"]),
    ("pipeline: the finished plan never placed by need", "src/ds_pipeline.c",
     "\tif (o->part || ds_run_size(g, o) > NEED_MAX_NODES)",
     "\tif (o->part || ds_run_size(g, o) > NEED_MAX_NODES || o)",
     ["test_retime", "test_pipeline"]),
    ("pipeline: dead reloads never dropped", "src/ds_pipeline.c",
     "\t\trc = ds_plan_drop_dead_reloads(g, out, &dead, e);",
     "\t\tdead = 0, rc = dead;", ["test_pipeline"]),
    ("parts: no grouped plan", "src/ds_parts.c",
     "\tif (rc == DS_OK && pt.k > 2 && grouped)",
     "\tif (rc == DS_OK && pt.k > 2 && grouped && 0)", PORTFOLIO),
    ("parts: small parts never join the largest", "src/ds_parts.c",
     "\t\tsmall[c] = (int64_t)size[c] * GROUP_SMALL <= big;",
     "\t\tsmall[c] = (int64_t)size[c] * GROUP_SMALL <= big - big;",
     PORTFOLIO),
    ("dlr stage: the start count not checked", "src/ds_dlr_stage.c",
     "\tif (s->nstart < 1 || s->nstart > DS_DLR_MAX_STARTS)",
     "\tif (0)", ["test_dlr"]),
    ("dlr stage: no more starts run in full on small graphs",
     "src/ds_dlr_stage.c",
     "\tif (s->nstart < 2 || fig->spills == 0 ||\n",
     "\tif (s->nstart < 2 || 1 ||\n",
     ["test_pipeline"]),
    ("dlr stage: the stage's order not run in full again",
     "src/ds_dlr_stage.c",
     "\tif (!l->full[0])\n\t\trc = dlr_more(",
     "\tif (!l->full[0] && 0)\n\t\trc = dlr_more(",
     ["test_pipeline"]),
    ("dlr stage: the runner-up lite start not run in full",
     "src/ds_dlr_stage.c",
     "\tif (rc == DS_OK && runner_up > 0)",
     "\tif (rc == DS_OK && runner_up > 0 && 0)",
     ["test_pipeline"]),
    ("pack: DLR's packed placements never kept", "src/ds_dlr_stage.c",
     "\tif (rc == DS_OK && ds_pack_applies(g, o->size_nodes))\n"
     "\t\trc = dlr_packed(",
     "\tif (rc == DS_OK && ds_pack_applies(g, o->size_nodes) && 0)\n"
     "\t\trc = dlr_packed(",
     ["test_pipeline", "golden"]),
    ("pack: no greedy order tried", "src/ds_pack.c",
     "\tfor (int key = 0; key < PK_KEYS && !*fit; key++)",
     "\tfor (int key = 0; key < 0 && !*fit; key++)",
     ["test_dlr", "test_pipeline"]),
    ("pack: occupancies overlapping in time may share addresses",
     "src/ds_pack.c",
     "\t\t\tif (!meet || (first",
     "\t\t\tif (1 || !meet || (first",
     ["test_dlr", "test_pipeline"]),
    ("pack: an occupancy listed in its first bucket only", "src/ds_pack.c",
     "\t     b <= pk_last_bucket(ix, start, end); b++) {\n"
     "\t\tix->item[ix->nent] = (int32_t)j;",
     "\t     b <= pk_last_bucket(ix, start, end) &&\n"
     "\t     b == pk_bucket(ix, start); b++) {\n"
     "\t\tix->item[ix->nent] = (int32_t)j;",
     ["test_dlr", "test_pipeline"]),
    ("pack: no rounds after a greedy packing missed", "src/ds_pack.c",
     "\tfor (int32_t r = 0; r <= s->rounds; r++) {",
     "\tfor (int32_t r = 0; r <= 0; r++) {", ["test_dlr", "test_pipeline"]),
    ("pack: the capacity never lowered after a failed packing",
     "src/ds_pack.c", "\t\ts->cap[m][i] -= dec[i];",
     "\t\ts->cap[m][i] -= 0 * dec[i];", ["test_pipeline", "golden"]),
    ("backbone: no packed candidate", "src/ds_backbone.c",
     "\tif (rc || *ddr <= max_ddr || !bb->pack)",
     "\tif (rc || 1 || *ddr <= max_ddr || !bb->pack)",
     ["test_pipeline", "golden"]),
    ("retime: rotations fitting the cap in found order, not by gain",
     "src/ds_retime_phase.c",
     "\t\t\tif (best < 0 || gain[k] * bt > gain[best] * tr)",
     "\t\t\tif (best < 0 || (gain[k] < 0 && gain[best] < 0))", RETIME),
    ("backbone: DLR's timely plan not weighed", "src/ds_backbone.c",
     "\t\trc = backbone_timely(g, timely, tf, cap, bb, e);",
     "\t\trc = backbone_timely(g, timely, tf, -1, bb, e);",
     ["test_pipeline"]),
    ("backbone: no staggered candidate", "src/ds_backbone.c",
     "\t\trc = backbone_stagger(g, order, cap, df->extra_ddr, bb, e);",
     "\t\trc = backbone_stagger(g, order, -1, df->extra_ddr, bb, e);",
     ["test_pipeline", "golden"]),
    ("backbone: no relayed candidate", "src/ds_backbone.c",
     "\t\trc = backbone_relay(g, order, cap, bb, e);",
     "\t\trc = backbone_relay(g, order, -1, bb, e);",
     ["test_pipeline", "golden"]),
    ("backbone: no wave candidate", "src/ds_backbone.c",
     "\t\trc = backbone_try(g, order + g->n, aged_tie_pcts[0],\n\t\t\t\t  bb->best.extra_ddr, df->peak_vstay, WAVE_MARGIN,",
     "\t\trc = backbone_try(g, order + g->n, aged_tie_pcts[0],\n\t\t\t\t  -1, df->peak_vstay, WAVE_MARGIN,",
     ["test_pipeline", "golden"]),
    ("backbone: no tail candidate", "src/ds_backbone.c",
     "\t\trc = backbone_tail(g, o, order, cap, df, bb, e);",
     "\t\trc = backbone_tail(g, o, order, -1, df, bb, e);",
     ["test_pipeline", "golden"]),
    ("backbone: the pulls never kept", "src/ds_backbone.c",
     "\t\tbool take = rc == DS_OK && dlr_dominates(&fq, &fp);",
     "\t\tbool take = rc == DS_OK && !dlr_dominates(&fq, &fp) && 0;",
     ["test_pipeline", "test_retime"]),
    ("backbone: no pulls around the later spills", "src/ds_backbone.c",
     "\t\trc = pull_pass(g, o, pair + nfirst, late + nfirst, nlater,",
     "\t\trc = pull_pass(g, o, pair + nfirst, late + nfirst, 0 * nlater,",
     ["test_pipeline"]),
    ("backbone: no second backbone from the aged placement over the cap",
     "src/ds_backbone.c",
     "} else if (rc == DS_OK && over && !fits &&",
     "} else if (rc == DS_OK && over && !fits && !over &&",
     ["test_pipeline"]),
    ("backbone: the second backbone only where it replays shorter",
     "src/ds_backbone.c",
     "\talt.best.makespan = INT64_MAX / 1000;",
     "\talt.best = bb->best;",
     ["test_pipeline"]),
    ("pipeline: no window floor (the window pass not run)",
     "src/ds_pipeline.c",
     "\tif (ds_dlr_starts(g, o) < 2)\n\t\treturn DS_OK;\n"
     "\treturn ds_window_pulls(",
     "\tif (ds_dlr_starts(g, o) < 2 || 1)\n\t\treturn DS_OK;\n"
     "\treturn ds_window_pulls(",
     ["test_window"]),
    ("pipeline: no over floor", "src/ds_chain.c",
     "\treturn chain_keep_from(g, o, &bb->alt, &bb->alt_best, dlr, df, out,",
     "\treturn bb ? DS_OK : chain_keep_from(g, o, &bb->alt, &bb->alt_best, dlr, df, out,",
     ["test_pipeline"]),
    ("pipeline: no pull floor", "src/ds_chain.c",
     "\tif (!bb->pulled)\n\t\treturn DS_OK;\n\treturn chain_from_prev(",
     "\tif (bb->pulled || !bb->pulled)\n\t\treturn DS_OK;\n\treturn chain_from_prev(",
     ["test_pipeline"]),
    ("pull: a pulled use leaves its ancestors behind", "src/ds_pull.c",
     "\t\t\t\tanc[g->pred[k]] = true;",
     "\t\t\t\tanc[g->pred[k]] = anc[g->pred[k]];",
     ["test_dlr"]),
    ("plan: a dead reload's spill keeps its own offset", "src/ds_plan.c",
     "\t\t\tp->spill[k1].offset = p->spill[k].offset;\n",
     "", ["test_plan"]),
    ("cpe: the rounds' peak limit not kept", "src/ds_cpe.c",
     "\tif (o && !ds_within_peak_cap(o->peak_cap, b->peak_budget))",
     "\tif (o && 0 && !ds_within_peak_cap(o->peak_cap, b->peak_budget))",
     STAGE),
    ("cpe: no light round on a large graph", "src/ds_cpe.c",
     "\t\t\tnr = light ? 1 : nr;", "\t\t\tnr = light ? 0 : nr;",
     ["test_cpe"]),
    ("cli: schedule --json ignored", "src/main.c",
     "\t\tif (json)\n\t\t\tcli_print_json(figures_json(jobs[i].case_name",
     "\t\tif (json && !json)\n\t\t\tcli_print_json(figures_json(jobs[i].case_name",
     CLI),
    ("cli: schedule -v ignored", "src/main.c",
     "\tif (a->verbose)\n\t\to->progress = progress_verbose;",
     "\tif (a->verbose && !a->verbose)\n\t\to->progress = progress_verbose;",
     CLI),
    ("cli: schedule --quiet ignored", "src/main.c",
     "bool tty = !a->quiet && !a->verbose && isatty(fileno(stderr));",
     "bool tty = !a->verbose && isatty(fileno(stderr));", CLI),
    ("cli: schedule --trace ignored", "src/main.c",
     "write_views(&jobs[i], a->out, a->trace, a->memmap, &e)",
     "write_views(&jobs[i], a->out, false, a->memmap, &e)", CLI),
    ("cli: schedule --memmap ignored", "src/main.c",
     "write_views(&jobs[i], a->out, a->trace, a->memmap, &e)",
     "write_views(&jobs[i], a->out, a->trace, false, &e)", CLI),
    ("cli: schedule without graphs plans one fewer", "src/main.c",
     "\t*paths = (const char **)*bundled;\n\treturn rc;",
     "\t*paths = (const char **)*bundled;\n\t*np -= *np > 1;\n\treturn rc;",
     CLI),
    ("cli: bench --csv ignored", "src/cli_bench.c",
     "\telse if (rc == 0 && a.csv)\n\t\tbench_csv(",
     "\telse if (rc == 0 && a.csv && !a.csv)\n\t\tbench_csv(", CLI),
    ("cli: bench --json ignored", "src/cli_bench.c",
     "\tif (rc == 0 && a.json)\n\t\trc = bench_json(",
     "\tif (rc == 0 && a.json && !a.json)\n\t\trc = bench_json(", CLI),
    ("cli: bench --quiet ignored", "src/cli_bench.c",
     "bool tty = !a->quiet && isatty(fileno(stderr));",
     "bool tty = isatty(fileno(stderr));", CLI),
    ("cli: bench 'vs best' leaves free-first out", "src/cli_bench.c",
     "if (s != DANSCHED_DAN && metric(&row[s], m) < best) {",
     "if (s != DANSCHED_DAN && s != DANSCHED_FREE_FIRST &&\n\t\t    "
     "metric(&row[s], m) < best) {", CLI),
    ("cli: bench 'vs orig' against free-first", "src/cli_bench.c",
     "reduction(metric(&row[DANSCHED_ORIGINAL], m), dan)",
     "reduction(metric(&row[DANSCHED_FREE_FIRST], m), dan)", CLI),
    ("cli: bench --scale --kind ignored", "src/cli_bench.c",
     "dansched_generate(NULL, a->kind, nodes, 1,",
     "dansched_generate(NULL, \"matmul\", nodes, 1,", CLI),
    ("cli: bench --scale --nodes ignored", "src/cli_bench.c",
     "int64_t top = a->nodes > 0 ? a->nodes : 1000000;",
     "int64_t top = a->nodes > 0 ? 20000 : 1000000;", CLI),
    ("cli: gen --kind ignored", "src/main.c",
     "dansched_generate(NULL, a.kind, a.nodes,",
     "dansched_generate(NULL, \"matmul\", a.nodes,", CLI),
    ("cli: gen --nodes ignored", "src/main.c",
     "dansched_generate(NULL, a.kind, a.nodes,",
     "dansched_generate(NULL, a.kind, 1000,", CLI),
    ("cli: gen --seed ignored", "src/main.c",
     "a.nodes, (uint64_t)a.seed,", "a.nodes, (uint64_t)1,", CLI),
    ("cli: gen --cap ignored", "src/main.c",
     "(uint64_t)a.seed,\n\t\t\t\t    &a.caps, &g, &e)))",
     "(uint64_t)a.seed,\n\t\t\t\t    NULL, &g, &e)))", CLI),
    ("cli: convert --cap ignored", "src/main.c",
     "if ((rc = dansched_graph_load(NULL, a.pos[0], &a.caps, &g, &e)))",
     "if ((rc = dansched_graph_load(NULL, a.pos[0], NULL, &g, &e)))", CLI),
    ("cli: trace/memmap -o ignored", "src/main.c",
     "rc = memmap ? dansched_write_memmap(g, p, a.out, &e)\n\t\t    : dansched_write_trace(g, p, a.out, &e);",
     "rc = memmap ? dansched_write_memmap(g, p, \"/tmp/ds_mut.svg\", &e)\n\t\t    : dansched_write_trace(g, p, \"/tmp/ds_mut.json\", &e);",
     CLI),
    ("cli: --help prints the main usage", "src/main.c",
     "\tif (a->help) {\n\t\tfputs(usage, stdout);",
     "\tif (a->help) {\n\t\tfputs(usage_main, stdout);", CLI),
]


def run(cmd, cwd, timeout=None, env=None):
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True,
                           errors="replace",
                           timeout=timeout, env=env)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", ""


def copy_tree(dest):
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.split(b"\0")
    for f in files:
        if not f:
            continue
        src = os.path.join(ROOT, f.decode())
        dst = os.path.join(dest, f.decode())
        if not os.path.isfile(src):
            continue  # deleted in the working tree
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst)


def failures(out):
    """The lines by which a test says what failed (cli.sh's FAIL:, cmocka's
    [  FAILED  ] and assertion lines, Python's AssertionError)."""
    return set(l.strip() for l in out.splitlines()
               if l.startswith("FAIL: ") or "[  FAILED  ]" in l
               or "error: Failure!" in l or "AssertionError" in l)


def run_test(tree, t, timeout, env):
    return run(["ctest", "--test-dir", "build", "-R", "^%s$" % t,
                "--timeout", str(timeout), "--output-on-failure"],
               tree, timeout=timeout + 60, env=env)


def build(tree):
    return run(["cmake", "--build", "build", "-j2"], tree)


def check(chosen):
    """Is each mutation's text found exactly once?  No copy, no build."""
    bad = 0
    for name, path, text, _repl, _tests in chosen:
        try:
            n = open(os.path.join(ROOT, path)).read().count(text)
        except OSError:
            n = -1
        bad += n != 1
        print("%-12s %-60s %s" % ("applies" if n == 1 else "NOT APPLIED",
                                  name, path if n >= 0 else path + " missing"))
    print("\n%d of %d mutations apply" % (len(chosen) - bad, len(chosen)))
    return 1 if bad else 0


def main(argv):
    if "-h" in argv or "--help" in argv:
        print(__doc__.strip())
        return 0
    full = "--full" in argv
    keep = "--keep" in argv
    timeout = 900
    if "--timeout" in argv:
        timeout = int(argv[argv.index("--timeout") + 1])
    picks = [a for a in argv if a not in ("--full", "--keep", "--timeout",
                                          "--check")
             and not a.isdigit()]
    chosen = [m for m in MUTATIONS
              if not picks or any(p in m[0] for p in picks)]
    if "--check" in argv:
        return check(chosen)
    top = tempfile.mkdtemp(prefix="ds_mutate_")
    tree = os.path.join(top, "tree")
    os.symlink(os.path.join(os.path.dirname(ROOT), "shared"),
               os.path.join(top, "shared"))
    copy_tree(tree)
    env = dict(os.environ)
    if not full:
        env["DS_CROSSCHECK_QUICK"] = "1"
    env["DS_REQUIRE_REFEREE"] = "1"
    print("copy in %s; building" % tree, flush=True)
    rc, out = run(["cmake", "-S", ".", "-B", "build",
                   "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DDS_CHECKS=ON"], tree)
    rc2, out2 = build(tree) if rc == 0 else (rc, out)
    if rc2 != 0:
        print(out2[-3000:])
        sys.exit("the unmutated tree does not build")
    # a test that already fails on the unmutated tree catches a mutation
    # only by a failure line of its own (else every mutation would count)
    base = {}
    for t in sorted({t for m in chosen for t in m[4]}):
        rc, out = run_test(tree, t, timeout, env)
        if rc != 0:
            base[t] = failures(out)
            print("WARNING      %s fails on the unmutated tree: %s"
                  % (t, "; ".join(sorted(base[t]))[:300]), flush=True)
    caught, survived, broken = [], [], []
    for name, path, text, repl, tests in chosen:
        t0 = time.time()
        full_path = os.path.join(tree, path)
        orig = open(full_path).read()
        if orig.count(text) != 1:
            broken.append(name)
            print("NOT APPLIED  %-60s (text found %d times in %s)"
                  % (name, orig.count(text), path), flush=True)
            continue
        open(full_path, "w").write(orig.replace(text, repl))
        try:
            rc, out = build(tree)
            if rc != 0:
                broken.append(name)
                print("NO BUILD     %-60s %s" % (name, out[-400:]), flush=True)
                continue
            by = None
            for t in tests:
                rc, out = run_test(tree, t, timeout, env)
                new = failures(out) - base.get(t, set())
                if rc != 0 and (t not in base or new or rc == "timeout"):
                    by = t + (" (timeout)" if rc == "timeout" else "")
                    if t in base:
                        by += ": " + "; ".join(sorted(new))[:200]
                    break
            secs = time.time() - t0
            if by:
                caught.append(name)
                print("caught       %-60s by %s (%.0f s)" % (name, by, secs),
                      flush=True)
            else:
                survived.append(name)
                print("SURVIVED     %-60s ran %s (%.0f s)"
                      % (name, ", ".join(tests), secs), flush=True)
        finally:
            open(full_path, "w").write(orig)
            # the restored file must be newer than the mutated build
            os.utime(full_path, None)
    n = len(caught) + len(survived)
    print("\nscore: %d of %d mutations caught; %d survived; %d not applied "
          "or not built" % (len(caught), n, len(survived), len(broken)))
    for s in survived:
        print("  survivor: " + s)
    if keep:
        print("tree kept in " + tree)
    else:
        shutil.rmtree(top, ignore_errors=True)
    return 1 if survived or broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
