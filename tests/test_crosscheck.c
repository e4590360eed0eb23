/* test_crosscheck.c: our evaluator against the independent referee.
 *
 * For every bundled graph, and for graphs neither has seen (Ids renumbered
 * at random, two operators combined in one graph), plans are written to a
 * temporary folder and both ds_replay and ../shared/referee/npu_referee.py
 * measure them; every figure must be identical.  Plans: the Id order, and
 * randomised valid plans (random topological orders, the shared placer with
 * a random policy, so many spills) — at least 200 in all.
 *
 * The plans the stages write: dan's MPAS order of every bundled graph
 * (also under the one-live rule, the referee's --q1), its DLR plan, and
 * every baseline's plan; and broken plans (out of order, a node twice,
 * over capacity, overlapping, a buffer used while spilled, two live L0
 * buffers under --q1) that both must reject, for the same rule.
 *
 * Where the referee is missing the test says so loudly and is skipped
 * (exit 77, which CTest reports as skipped), or fails when
 * DS_REQUIRE_REFEREE=1 (CI).  DS_CROSSCHECK_QUICK=1 runs a fifth of the
 * random plans and the stages' plans of the graphs under 2 MB only (the
 * sanitizer pass of CI: the referee is slow).
 *
 * The final plans (dan's full pipeline) of every bundled graph and of the
 * union of two are checked too, with the referee's default, strict spill
 * order (issue 20). */
#include "ds_pipeline.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef REFEREE
#define REFEREE "../shared/referee/npu_referee.py"
#endif

static int failures, checked;

static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull); /* splitmix64 */
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* A random topological order: Kahn picking a random ready node; with
 * free_first, FREEs and operations go before ALLOCs (far fewer spills). */
static void random_order(const ds_graph *g, uint64_t seed, bool free_first,
			 int32_t *order)
{
	int32_t n = g->n;
	int32_t *indeg = calloc((size_t)n, sizeof *indeg);
	int32_t *ready = malloc((size_t)n * sizeof *ready);
	int32_t nr = 0, len = 0;
	for (int32_t v = 0; v < n; v++) {
		indeg[v] = g->pred_off[v + 1] - g->pred_off[v];
		if (!indeg[v])
			ready[nr++] = v;
	}
	while (len < n) {
		int32_t pick = (int32_t)(next_rand(&seed) % (uint64_t)nr);
		if (free_first) {
			for (int32_t k = 0; k < nr; k++)
				if (g->kind[ready[k]] != DS_ALLOC) {
					pick = k;
					break;
				}
		}
		int32_t v = ready[pick];
		ready[pick] = ready[--nr];
		order[len++] = v;
		for (int32_t k = g->succ_off[v]; k < g->succ_off[v + 1]; k++)
			if (--indeg[g->succ[k]] == 0)
				ready[nr++] = g->succ[k];
	}
	free(indeg);
	free(ready);
}

/* Runs the referee on files in dir and compares its figures with ours. */
static void compare(const ds_graph *g, const char *graph_path,
		    const char *dir, const ds_plan *p, const char *what)
{
	ds_err e;
	ds_figures f;
	ds_replay_opts o = {0};
	if (ds_replay(g, p, &o, &f, &e) != DS_OK) {
		printf("FAIL %s: our evaluator refuses a valid plan: %s\n",
		       what, e.msg);
		failures++;
		return;
	}
	if (ds_plan_write(g, p, dir, "x", &e) != DS_OK) {
		printf("FAIL %s: %s\n", what, e.msg);
		failures++;
		return;
	}
	char cmd[4096];
	if (p->offset)
		snprintf(cmd, sizeof cmd,
			 "python3 '%s' '%s' '%s/x_schedule.txt' "
			 "'%s/x_memory.txt' '%s/x_spill.txt' --json",
			 REFEREE, graph_path, dir, dir, dir);
	else
		snprintf(cmd, sizeof cmd,
			 "python3 '%s' '%s' '%s/x_schedule.txt' --json",
			 REFEREE, graph_path, dir);
	FILE *pp = popen(cmd, "r");
	char out[4096] = "";
	size_t got = pp ? fread(out, 1, sizeof out - 1, pp) : 0;
	out[got] = 0;
	int st = pp ? pclose(pp) : -1;
	cJSON *j = cJSON_Parse(out);
	if (st != 0 || !j) {
		printf("FAIL %s: the referee says: %s\n", what, out);
		failures++;
		cJSON_Delete(j);
		return;
	}
	struct {
		const char *key;
		int64_t ours;
	} fig[] = {{"peak_vstay", f.peak_vstay},
		   {"extra_ddr", f.extra_ddr},
		   {"spills", f.spills},
		   {"makespan", f.makespan},
		   {"lb_critical_path", f.lb_critical_path},
		   {"lb_pipe_load", f.lb_pipe_load},
		   {"peak_L1", p->offset ? f.peak_mem[DS_L1] : 0},
		   {"peak_UB", p->offset ? f.peak_mem[DS_UB] : 0}};
	for (size_t k = 0; k < sizeof fig / sizeof fig[0]; k++) {
		cJSON *x = cJSON_GetObjectItemCaseSensitive(j, fig[k].key);
		if (!cJSON_IsNumber(x) || (int64_t)x->valuedouble != fig[k].ours) {
			printf("FAIL %s: %s ours %lld, referee %s\n", what,
			       fig[k].key, (long long)fig[k].ours,
			       cJSON_IsNumber(x) ? cJSON_PrintUnformatted(x)
						 : "missing");
			failures++;
		}
	}
	cJSON_Delete(j);
	checked++;
}

/* The graph file at path at the default capacities, or NULL with the
 * failure counted. */
static ds_graph *load_counted(const char *path)
{
	ds_caps caps;
	ds_caps_default(&caps);
	ds_graph *g;
	ds_err e;
	if (ds_load_graph(ds_heap_std(), path, &caps, &g, &e)) {
		printf("FAIL %s: %s\n", path, e.msg);
		failures++;
		return NULL;
	}
	return g;
}

/* The Id order and `count` random plans of one graph file. */
static void check_graph(const char *path, const char *dir, int count,
			uint64_t seed, bool id_order_is_topological)
{
	const ds_heap *h = ds_heap_std();
	ds_graph *g = load_counted(path);
	if (!g)
		return;
	ds_err e;
	int32_t *order = malloc((size_t)g->n * sizeof *order);
	ds_plan p;
	char what[512];
	/* the Id order (the free-first order where Ids were renumbered),
	 * order only */
	memset(&p, 0, sizeof p);
	if (id_order_is_topological)
		ds_order_id(g, order, &e);
	else
		ds_order_free_first(g, order, &e);
	p.order = order;
	p.len = g->n;
	snprintf(what, sizeof what, "%s %s order", path,
		 id_order_is_topological ? "Id" : "free-first");
	compare(g, path, dir, &p, what);
	for (int i = 0; i < count; i++) {
		uint64_t s = seed + (uint64_t)i * 7919;
		bool ff = i % 3 != 0;
		random_order(g, s, ff, order);
		ds_place_opts po = {(int)(next_rand(&s) % 2),
				    (int)(next_rand(&s) % 3), 10};
		if (ds_place(g, order, &po, &p, &e)) {
			printf("FAIL %s: placer: %s\n", path, e.msg);
			failures++;
			continue;
		}
		snprintf(what, sizeof what, "%s plan %d (%s order, fit %d, "
			 "victim %d, %d spills)", path, i,
			 ff ? "free-first random" : "random", po.fit,
			 po.victim, p.nspill);
		compare(g, path, dir, &p, what);
		ds_plan_free(h, &p);
	}
	free(order);
	ds_graph_free(g);
}

/* Writes a graph that renumbers Ids of src at random, or appends a second
 * copy of src2 with Ids and BufIds shifted past those of src. */
static int write_variant(const char *src, const char *src2, uint64_t seed,
			 const char *out)
{
	const ds_heap *h = ds_heap_std();
	ds_caps caps;
	ds_caps_default(&caps);
	ds_graph *g[2] = {NULL, NULL};
	ds_err e;
	if (ds_load_graph(h, src, &caps, &g[0], &e) ||
	    (src2 && ds_load_graph(h, src2, &caps, &g[1], &e))) {
		printf("FAIL %s\n", e.msg);
		ds_graph_free(g[0]);
		return -1;
	}
	int32_t total = g[0]->n + (g[1] ? g[1]->n : 0);
	int32_t *perm = malloc((size_t)total * sizeof *perm);
	for (int32_t i = 0; i < total; i++)
		perm[i] = i;
	for (int32_t i = total - 1; seed && i > 0; i--) {
		int32_t j = (int32_t)(next_rand(&seed) % (uint64_t)(i + 1));
		int32_t t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	ds_builder *b = ds_builder_new(h, out);
	int rc = 0;
	int32_t base = 0;
	int64_t bufbase = 0;
	for (int k = 0; k < 2 && g[k]; k++) {
		const ds_graph *x = g[k];
		for (int32_t v = 0; v < x->n && !rc; v++) {
			int64_t id = perm[base + v];
			if (x->kind[v] != DS_OP) {
				int32_t bi = x->buf[v];
				rc = ds_builder_buffer(
					b, id, x->kind[v] == DS_FREE,
					bufbase + x->buf_id[bi],
					x->buf_size[bi],
					ds_mem_names[x->buf_mem[bi]], &e);
			} else {
				int64_t bufs[64];
				int32_t nb = 0;
				for (int32_t u = x->use_off[v];
				     u < x->use_off[v + 1] && nb < 64; u++)
					bufs[nb++] = bufbase + x->buf_id[x->use[u]];
				rc = ds_builder_op(b, id, x->ops[x->op[v]],
						   x->pipes[x->pipe[v]],
						   x->cycles[v], bufs, nb, &e);
			}
		}
		for (int64_t k2 = 0; k2 < x->nedge && !rc; k2++)
			rc = ds_builder_edge(b, perm[base + x->esrc[k2]],
					     perm[base + x->edst[k2]], &e);
		base += x->n;
		bufbase += x->buf_id[x->nbuf - 1] + 1;
	}
	ds_graph *ng = NULL;
	if (!rc)
		rc = ds_builder_finish(b, &caps, &ng, &e);
	if (!rc)
		rc = ds_write_json(ng, out, &e);
	if (rc)
		printf("FAIL %s: %s\n", out, e.msg);
	ds_builder_free(b);
	ds_graph_free(ng);
	ds_graph_free(g[0]);
	ds_graph_free(g[1]);
	free(perm);
	return rc;
}

/* ---- the plans the stages write, and broken plans ---- */

/* Runs the referee on the files x_* in dir (memory and spill when
 * offsets), with flags; its first output line goes to msg.  Returns its
 * exit status (0 valid, 1 invalid, other: it failed). */
static int referee_verdict(const char *graph_path, const char *dir,
			   bool offsets, const char *flags, char *msg,
			   size_t size)
{
	char cmd[4096];
	if (offsets)
		snprintf(cmd, sizeof cmd,
			 "python3 '%s' '%s' '%s/x_schedule.txt' "
			 "'%s/x_memory.txt' '%s/x_spill.txt' %s 2>&1",
			 REFEREE, graph_path, dir, dir, dir, flags);
	else
		snprintf(cmd, sizeof cmd,
			 "python3 '%s' '%s' '%s/x_schedule.txt' %s 2>&1",
			 REFEREE, graph_path, dir, flags);
	FILE *pp = popen(cmd, "r");
	msg[0] = 0;
	if (!pp)
		return -1;
	if (!fgets(msg, (int)size, pp))
		msg[0] = 0;
	msg[strcspn(msg, "\n")] = 0;
	char sink[4096];
	while (fread(sink, 1, sizeof sink, pp) > 0)
		;
	int st = pclose(pp);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The rule a message names, ours or the referee's, in one vocabulary. */
static const char *rule_of(const char *msg)
{
	static const struct {
		const char *needle, *rule;
	} rules[] = {
		{"one-live", "q1"},	     {"q1:", "q1"},
		{"order:", "order"},	     {"appears twice", "permutation"},
		{"entries, expected", "permutation"},
		{"schedule has", "permutation"},
		{"exceeds", "capacity"},     {"overlap", "overlap"},
		{"not resident", "residency"}, {"is resident", "residency"},
		{"still resident", "residency"}, {"spill line", "spill order"},
	};
	for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
		if (strstr(msg, rules[i].needle))
			return rules[i].rule;
	return "?";
}

/* A valid plan under the one-live rule: ours and the referee's --q1 both
 * accept it (the figures are compared by compare()). */
static void accept_q1(const ds_graph *g, const char *graph_path,
		      const char *dir, const ds_plan *p, const char *what)
{
	ds_err e;
	ds_figures f;
	ds_replay_opts o = {0};
	o.q1 = true;
	if (ds_replay(g, p, &o, &f, &e) != DS_OK) {
		printf("FAIL %s: ours refuses it under --q1: %s\n", what, e.msg);
		failures++;
		return;
	}
	char msg[1024];
	if (ds_plan_write(g, p, dir, "x", &e) != DS_OK ||
	    referee_verdict(graph_path, dir, p->offset != NULL, "--q1 --json",
			    msg, sizeof msg) != 0) {
		printf("FAIL %s: the referee refuses it under --q1: %s\n", what,
		       msg);
		failures++;
		return;
	}
	checked++;
}

/* A broken plan: both must reject it, for rule want. */
static void both_reject(const ds_graph *g, const char *graph_path,
			const char *dir, const ds_plan *p, bool q1,
			const char *want, const char *what)
{
	ds_err e;
	ds_figures f;
	ds_replay_opts o = {0};
	o.q1 = q1;
	int ours = ds_replay(g, p, &o, &f, &e);
	char msg[1024] = "";
	int ref = -1;
	ds_err we;
	if (ds_plan_write(g, p, dir, "x", &we) == DS_OK)
		ref = referee_verdict(graph_path, dir, p->offset != NULL,
				      q1 ? "--q1" : "", msg, sizeof msg);
	const char *our_rule = ours == DS_EPLAN ? rule_of(e.msg) : "(accepted)";
	const char *ref_rule = ref == 1 ? rule_of(msg) : "(accepted)";
	if (ours != DS_EPLAN || ref != 1 || strcmp(our_rule, want) ||
	    strcmp(ref_rule, want)) {
		printf("FAIL %s: expected both to reject it for %s; ours: %s "
		       "(%s), referee: %s (%s)\n",
		       what, want, our_rule, ours ? e.msg : "valid", ref_rule,
		       msg);
		failures++;
		return;
	}
	checked++;
}

/* A copy of p (order, offsets, spills) to break. */
static void plan_copy(const ds_graph *g, const ds_plan *p, ds_plan *c)
{
	c->len = p->len;
	c->nspill = p->nspill;
	c->order = malloc((size_t)p->len * sizeof *c->order);
	memcpy(c->order, p->order, (size_t)p->len * sizeof *c->order);
	c->offset = NULL;
	c->spill = NULL;
	if (p->offset) {
		c->offset = malloc((size_t)g->nbuf * sizeof *c->offset);
		memcpy(c->offset, p->offset, (size_t)g->nbuf * sizeof *c->offset);
	}
	if (p->nspill) {
		c->spill = malloc((size_t)p->nspill * sizeof *c->spill);
		memcpy(c->spill, p->spill, (size_t)p->nspill * sizeof *c->spill);
	}
}

static void plan_copy_free(ds_plan *c)
{
	free(c->order);
	free(c->offset);
	free(c->spill);
}

/* pos[v]: v's place in p's order. */
static int32_t *positions(const ds_plan *p)
{
	int32_t *pos = malloc((size_t)p->len * sizeof *pos);
	for (int32_t i = 0; i < p->len; i++)
		pos[p->order[i]] = i;
	return pos;
}

/* Two buffers of one memory, never spilled, live at once, that fit at the
 * same offset: *a and *b, or -1. */
static void overlapping_pair(const ds_graph *g, const ds_plan *p,
			     const int32_t *pos, int32_t *a, int32_t *b)
{
	char *spilled = calloc((size_t)g->nbuf + 1, 1);
	for (int32_t k = 0; k < p->nspill; k++)
		spilled[p->spill[k].buf] = 1;
	int32_t *lo = malloc((size_t)g->nbuf * sizeof *lo);
	int32_t *hi = malloc((size_t)g->nbuf * sizeof *hi);
	for (int32_t v = 0; v < g->n; v++) {
		if (g->kind[v] == DS_ALLOC)
			lo[g->buf[v]] = pos[v];
		else if (g->kind[v] == DS_FREE)
			hi[g->buf[v]] = pos[v];
	}
	*a = *b = -1;
	for (int32_t x = 0; x < g->nbuf && *a < 0; x++)
		for (int32_t y = x + 1; y < g->nbuf && *a < 0; y++)
			if (!spilled[x] && !spilled[y] &&
			    g->buf_mem[x] == g->buf_mem[y] && lo[x] < hi[y] &&
			    lo[y] < hi[x] && p->offset[x] != p->offset[y] &&
			    p->offset[x] + g->buf_size[y] <=
				    g->caps.cap[g->buf_mem[y]])
				*a = x, *b = y;
	free(spilled);
	free(lo);
	free(hi);
}

/* Broken copies of p, a valid plan with offsets and spills. */
static void check_broken(const ds_graph *g, const char *path, const char *dir,
			 const ds_plan *p)
{
	char what[600];
	ds_plan c;
	int32_t *pos = positions(p);
	/* a graph edge reversed: its two ends swapped in the order */
	plan_copy(g, p, &c);
	int32_t u = g->esrc[0], v = g->edst[0];
	c.order[pos[u]] = v;
	c.order[pos[v]] = u;
	snprintf(what, sizeof what, "%s: nodes %d and %d swapped", path, u, v);
	both_reject(g, path, dir, &c, false, "order", what);
	plan_copy_free(&c);
	/* a node twice, another missing */
	plan_copy(g, p, &c);
	c.order[1] = c.order[0];
	snprintf(what, sizeof what, "%s: node %d twice", path, c.order[0]);
	both_reject(g, path, dir, &c, false, "permutation", what);
	plan_copy_free(&c);
	/* a buffer one byte over its memory's end */
	plan_copy(g, p, &c);
	int32_t b = g->nbuf / 2;
	c.offset[b] = g->caps.cap[g->buf_mem[b]] - g->buf_size[b] + 1;
	snprintf(what, sizeof what, "%s: buffer %lld over capacity", path,
		 (long long)g->buf_id[b]);
	both_reject(g, path, dir, &c, false, "capacity", what);
	plan_copy_free(&c);
	/* two live buffers at one offset */
	int32_t x, y;
	overlapping_pair(g, p, pos, &x, &y);
	if (x >= 0) {
		plan_copy(g, p, &c);
		c.offset[y] = c.offset[x];
		snprintf(what, sizeof what, "%s: buffers %lld and %lld "
			 "overlap", path, (long long)g->buf_id[x],
			 (long long)g->buf_id[y]);
		both_reject(g, path, dir, &c, false, "overlap", what);
		plan_copy_free(&c);
	} else {
		printf("FAIL %s: no two live buffers to overlap\n", path);
		failures++;
	}
	/* a missing reload: the spill's SPILL_OUT moved back before the last
	 * use of the buffer ahead of it, so that use finds the buffer in DDR.
	 * The final graph ties a spill's SPILL_IN before the next use after
	 * its SPILL_OUT, so both name the order rule (SPILL_IN before the
	 * use), not residency */
	if (p->nspill > 0) {
		int32_t so = g->n, sb = p->spill[0].buf, user = -1;
		for (int32_t i = pos[so] - 1; i >= 0 && user < 0; i--) {
			int32_t w = p->order[i];
			if (w >= g->n || g->kind[w] != DS_OP)
				continue;
			for (int32_t k = g->use_off[w]; k < g->use_off[w + 1]; k++)
				if (g->use[k] == sb)
					user = w;
		}
		if (user >= 0) {
			plan_copy(g, p, &c);
			/* SPILL_OUT goes just before user; the nodes between
			 * shift one place on */
			memmove(&c.order[pos[user] + 1], &c.order[pos[user]],
				(size_t)(pos[so] - pos[user]) * sizeof *c.order);
			c.order[pos[user]] = so;
			snprintf(what, sizeof what, "%s: buffer %lld used while "
				 "spilled (node %d)", path,
				 (long long)g->buf_id[sb], user);
			both_reject(g, path, dir, &c, false, "order", what);
			plan_copy_free(&c);
		}
	}
	free(pos);
}

/* dan's MPAS order (also under --q1), its DLR plan and every baseline's
 * plan of the graph file path, each cross-checked; broken copies of the
 * DLR plan rejected by both (when broken is set). */
static void check_stages(const char *path, const char *dir, bool broken)
{
	const ds_heap *h = ds_heap_std();
	ds_graph *g = load_counted(path);
	if (!g)
		return;
	ds_err e;
	char what[600];
	for (int s = 0; s < DS_NSCHED; s++) {
		for (int stage = DS_STAGE_MPAS;
		     stage <= (s == DS_SCHED_DAN ? DS_STAGE_DLR : DS_STAGE_MPAS);
		     stage++) {
			ds_run_opts o;
			ds_run_opts_default(&o);
			o.scheduler = s;
			o.stage = stage;
			ds_plan p;
			ds_figures f;
			snprintf(what, sizeof what, "%s %s%s%s plan", path,
				 ds_sched_names[s], s == DS_SCHED_DAN ? " " : "",
				 s == DS_SCHED_DAN ? ds_stage_names[stage] : "");
			if (ds_run(g, &o, &p, &f, &e)) {
				printf("FAIL %s: %s\n", what, e.msg);
				failures++;
				continue;
			}
			compare(g, path, dir, &p, what);
			if (s == DS_SCHED_DAN && stage == DS_STAGE_MPAS)
				accept_q1(g, path, dir, &p, what);
			if (broken && s == DS_SCHED_DAN &&
			    stage == DS_STAGE_DLR)
				check_broken(g, path, dir, &p);
			ds_plan_free(h, &p);
		}
	}
	if (!broken) {
		ds_graph_free(g);
		return;
	}
	/* the Id order keeps two L0 buffers live: both refuse it under q1 */
	int32_t *order = malloc((size_t)g->n * sizeof *order);
	ds_order_id(g, order, &e);
	ds_plan idp = {g->n, order, NULL, 0, NULL};
	snprintf(what, sizeof what, "%s Id order under --q1", path);
	both_reject(g, path, dir, &idp, true, "q1", what);
	free(order);
	ds_graph_free(g);
}

/* The size of the file at path in bytes (-1 when it cannot be read). */
static long file_size(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fclose(f);
	return size;
}

/* The final plan (dan's full pipeline, as `dansched schedule` writes it) of
 * the graph file at path: valid with its spills in order, and the referee
 * in its default (strict) mode measures the same figures. */
static void check_final_plan(const char *path, const char *dir)
{
	const ds_heap *h = ds_heap_std();
	ds_graph *g = load_counted(path);
	if (!g)
		return;
	ds_err e;
	ds_run_opts o;
	ds_run_opts_default(&o);
	ds_plan p;
	ds_figures f;
	ds_replay_opts strict = {.spill_order = true};
	char what[600];
	snprintf(what, sizeof what, "%s final plan", path);
	if (ds_run(g, &o, &p, &f, &e) == DS_OK) {
		if (ds_replay(g, &p, &strict, &f, &e) != DS_OK) {
			printf("FAIL %s: spills out of order: %s\n", what,
			       e.msg);
			failures++;
		}
		compare(g, path, dir, &p, what);
		ds_plan_free(h, &p);
	} else {
		printf("FAIL %s: %s\n", what, e.msg);
		failures++;
	}
	ds_graph_free(g);
}

/* The final plans of the bundled graphs (quick: those under 400 KB) and of
 * the union of the first and third (by name). */
static void check_final_plans(char **files, int nf, const char *dir,
			      bool quick)
{
	for (int i = 0; i < nf; i++)
		if (!quick || file_size(files[i]) < 400000)
			check_final_plan(files[i], dir);
	char path[600];
	snprintf(path, sizeof path, "%s/union.json", dir);
	if (nf >= 3 && write_variant(files[0], files[2], 0, path) == 0)
		check_final_plan(path, dir);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
	if (access(REFEREE, R_OK) != 0) {
		const char *req = getenv("DS_REQUIRE_REFEREE");
		bool required = req && strcmp(req, "1") == 0;
		printf("\n*** %s: the referee %s is missing: our evaluator "
		       "is NOT cross-checked ***\n\n",
		       required ? "FAILED (DS_REQUIRE_REFEREE=1)" : "SKIPPED",
		       REFEREE);
		return required ? 1 : 77;
	}
	char dir[] = "/tmp/ds_crossXXXXXX";
	if (!mkdtemp(dir))
		return 1;
	DIR *d = opendir(DS_SOURCE_DIR "/data");
	if (!d)
		return 1;
	char *files[256];
	int nf = 0;
	struct dirent *de;
	while ((de = readdir(d)) && nf < 256) {
		size_t l = strlen(de->d_name);
		if (l > 5 && strcmp(de->d_name + l - 5, ".json") == 0) {
			files[nf] = malloc(l + sizeof DS_SOURCE_DIR + 8);
			sprintf(files[nf++], "%s/data/%s", DS_SOURCE_DIR,
				de->d_name);
		}
	}
	closedir(d);
	qsort(files, (size_t)nf, sizeof *files, cmp_str);
	/* about 200 random plans, fewer on the largest graphs (the referee is
	 * Python: a plan of Conv_Case1 takes it about a second) */
	const char *quick_env = getenv("DS_CROSSCHECK_QUICK");
	bool quick = quick_env && strcmp(quick_env, "1") == 0;
	for (int i = 0; i < nf; i++) {
		int count = file_size(files[i]) > 2000000 ? 4 : 40;
		if (quick)
			count /= 4;
		check_graph(files[i], dir, count, 1000 + (uint64_t)i, true);
	}
	/* the plans the stages write, and broken ones */
	for (int i = 0; i < nf; i++) {
		long size = file_size(files[i]);
		/* broken plans: on the smaller graphs (the rules do not
		 * depend on size; the referee takes a second per large one) */
		if (!quick || size <= 2000000)
			check_stages(files[i], dir, size <= 2000000);
	}
	/* the final plans, spills in the order they happen (issue 20) */
	check_final_plans(files, nf, dir, quick);
	/* graphs neither evaluator has seen: renumbered, combined */
	char path[600];
	for (int i = 0; i < nf && i < 6; i++) {
		snprintf(path, sizeof path, "%s/renumbered.json", dir);
		if (write_variant(files[i], NULL, 77 + (uint64_t)i, path) == 0)
			check_graph(path, dir, 3, 5000 + (uint64_t)i, false);
	}
	if (nf >= 2) {
		snprintf(path, sizeof path, "%s/combined.json", dir);
		if (write_variant(files[0], files[nf > 2 ? 2 : 1], 99, path) ==
		    0)
			check_graph(path, dir, 8, 6000, false);
	}
	for (int i = 0; i < nf; i++)
		free(files[i]);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("warning: could not remove %s\n", dir);
	printf("%d plans cross-checked, %d figure mismatches\n", checked,
	       failures);
	return failures || checked < (quick ? 40 : 200) ? 1 : 0;
}
