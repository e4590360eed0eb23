/* cli_bench.c: the bench and tradeoff commands: every scheduler on every
 * graph, and the dan pipeline's makespan against its traffic budget. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char usage_bench[] =
	"usage: dansched bench [GRAPH...] [--json | --csv] [--cap SPEC]\n"
	"                      [--quiet]\n"
	"       dansched bench --scale [--kind KIND] [--nodes N] [--repeat R]\n"
	"\n"
	"Runs every scheduler (original, free-first, lpmf, cp-list, vpux, dan)\n"
	"on every graph (default: the bundled graphs), checks every plan with\n"
	"the evaluator, and prints one table per metric with dan's reduction\n"
	"against the original schedule and against the best baseline, the\n"
	"averages, the run times, and notes where dan moves fewer bytes than\n"
	"the best baseline with more spills.  peak_vstay is the peak of the\n"
	"schedule of the peak-memory problem (dan: its MPAS order, the\n"
	"baselines: their plan); plan_peak_vstay the peak of every final plan\n"
	"(dan's later stages reorder for traffic and overlap).  The original\n"
	"schedule is the node-Id order, repaired where the Ids are not a\n"
	"topological order (Kahn's algorithm taking the least ready Id).\n"
	"\n"
	"  --json   {\"results\": [{\"case\", \"scheduler\", \"peak_vstay\",\n"
	"           \"extra_ddr\", \"spills\", \"makespan\", \"seconds\",\n"
	"           \"plan_peak_vstay\"}, ...]}\n"
	"  --csv    the same rows as CSV\n"
	"  --quiet  no progress line\n"
	"\n"
	"With --scale: generates graphs of KIND (default matmul) of N/100,\n"
	"N/20, N/10, N/2 and N nodes (N default 1000000, at least 100), runs\n"
	"the full dan pipeline on each, and prints the time and the peak\n"
	"memory (RSS) per size, and the time growth per doubling of N.  Each\n"
	"size runs R times (default 1), each run in a process of its own, and\n"
	"the row is the run with the least plan time, the one least disturbed\n"
	"by other work (runs: how many it is the best of).\n";

static const char usage_tradeoff[] =
	"usage: dansched tradeoff GRAPH... -o DIR [--json] [--published FILE]\n"
	"                         [--cap SPEC] [--quiet]\n"
	"\n"
	"Plans each graph with the dan pipeline at traffic budgets 0, 5, 25,\n"
	"100 and 400 (percent of the DLR plan's extra DDR traffic that CPE may\n"
	"add) and prints the makespan and extra_ddr at each.  A plan allowed a\n"
	"larger budget may use the plan of a smaller one, so the makespan\n"
	"never rises with the budget: where it would, the point keeps the\n"
	"previous budget's plan.  Writes DIR/<case>_tradeoff.svg: makespan\n"
	"against extra DDR traffic, with dansched's curve, the plans of the\n"
	"five baselines, lb_any (no plan below it), and the points other\n"
	"solutions reached on the same graph, read from FILE.  When FILE is\n"
	"absent a note says so and the charts have no published points.\n"
	"Nothing is written unless every graph loads and plans.\n"
	"\n"
	"  -o DIR            output folder (created when missing)\n"
	"  --json            one object per graph and line: {\"case\",\n"
	"                    \"points\": [{\"budget\", \"extra_ddr\",\n"
	"                    \"makespan\"}, ...]}\n"
	"  --published FILE  a CSV table with the columns case, source,\n"
	"                    extra_ddr and makespan (other columns ignored);\n"
	"                    default " DS_PUBLISHED "\n"
	"  --quiet           no progress line\n";

/* ---- bench ---- */

/* bench: keeps the peak of the MPAS order, the schedule of the peak-memory
 * problem (the later stages reorder for traffic and overlap). */
static void progress_bench(void *ud, const char *stage, double seconds,
			   const dansched_figures *f)
{
	(void)seconds;
	if (strcmp(stage, "mpas") == 0)
		((job *)ud)->order_peak = f->peak_vstay;
}


static double reduction(int64_t ref, int64_t x)
{
	if (ref == 0)
		return x == 0 ? 0.0 : -100.0;
	return 100.0 * (double)(ref - x) / (double)ref;
}

/* The metrics of a bench run, in table order.  peak_vstay is the
 * peak-memory problem's figure: the order's peak, which for dan is its MPAS
 * schedule (DLR and CPE reorder for traffic and overlap); plan_peak_vstay
 * and the rest are the final plan's. */
enum { M_PEAK, M_PLAN_PEAK, M_DDR, M_SPILLS, M_MAKESPAN, NMETRICS };
static const char *const metric_keys[NMETRICS] = {
	"peak_vstay", "plan_peak_vstay", "extra_ddr", "spills", "makespan"};

static int64_t metric(const job *j, int m)
{
	switch (m) {
	case M_PEAK:
		return j->order_peak ? j->order_peak : j->fig.peak_vstay;
	case M_PLAN_PEAK: return j->fig.peak_vstay;
	case M_DDR: return j->fig.extra_ddr;
	case M_SPILLS: return j->fig.spills;
	default: return j->fig.makespan;
	}
}

/* Peak resident memory of this process so far, in MiB. */
static double peak_rss_mib(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_maxrss / 1024.0;
}

static double seconds_now(void)
{
	return (double)clock() / CLOCKS_PER_SEC;
}

/* One run of one size of bench --scale, as the child sends it back. */
typedef struct scale_run {
	int32_t nodes, runs; /* runs: how many the row is the best of */
	double gen_s, plan_s, rss_mib;
	int64_t makespan;
} scale_run;

/* bench --scale's smallest graph has N / SCALE_FIRST_DIV nodes */
#define SCALE_FIRST_DIV 100

/* One run of bench --scale: generate a graph of about `nodes` nodes,
 * plan it (CPU seconds of each step), into *r; 0 or an exit status. */
static int scale_once(const args *a, int64_t nodes, scale_run *r)
{
	dansched_error e;
	dansched_graph *g;
	double t0 = seconds_now();
	if (dansched_generate(NULL, a->kind, nodes, 1, &a->caps, &g, &e))
		return cli_report(&e);
	double t1 = seconds_now();
	dansched_options o;
	dansched_options_default(&o);
	dansched_plan *p;
	dansched_figures f;
	int rc = dansched_schedule(g, &o, &p, &f, &e);
	double t2 = seconds_now();
	r->nodes = dansched_graph_nodes(g);
	dansched_plan_destroy(p);
	dansched_graph_destroy(g);
	if (rc)
		return cli_report(&e);
	r->gen_s = t1 - t0;
	r->plan_s = t2 - t1;
	r->rss_mib = peak_rss_mib();
	r->makespan = f.makespan;
	return 0;
}

/* scale_once in a child process of its own, so that it starts from a
 * fresh heap as a run of the CLI does (in one process, the 1M-node run
 * paid for the heap the smaller ones left behind: up to 2.7x per
 * doubling against 1.9x in separate processes) and its RSS is its own
 * peak.  0 or an exit status. */
static int scale_child(const args *a, int64_t nodes, scale_run *r)
{
	int fd[2];
	if (pipe(fd)) {
		fprintf(stderr, "dansched: pipe: %s\n", strerror(errno));
		return 2;
	}
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "dansched: fork: %s\n", strerror(errno));
		close(fd[0]);
		close(fd[1]);
		return 2;
	}
	if (pid == 0) {
		close(fd[0]);
		int rc = scale_once(a, nodes, r);
		if (rc == 0 && write(fd[1], r, sizeof *r) != sizeof *r)
			rc = 2;
		_exit(rc);
	}
	close(fd[1]);
	ssize_t got = read(fd[0], r, sizeof *r);
	close(fd[0]);
	int status = 0;
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return 2;
	if (WEXITSTATUS(status) != 0)
		return WEXITSTATUS(status);
	return got == (ssize_t)sizeof *r ? 0 : 2;
}

/* a->repeat runs of one size into *best, the one with the least plan
 * time: the run least disturbed by other work on the machine.  The plan
 * is deterministic, so every run's makespan must be the same. */
static int scale_best(const args *a, int64_t nodes, scale_run *best)
{
	for (int64_t k = 0; k < a->repeat; k++) {
		scale_run r = {0};
		int rc = scale_child(a, nodes, &r);
		if (rc)
			return rc;
		if (k > 0 && r.makespan != best->makespan) {
			fprintf(stderr, "dansched: internal error: two runs of "
					"the same graph gave makespans %lld and "
					"%lld\n",
				(long long)best->makespan,
				(long long)r.makespan);
			return 2;
		}
		if (k == 0 || r.plan_s < best->plan_s)
			*best = r;
		best->runs = (int32_t)k + 1;
	}
	return 0;
}

/* bench --scale: time and memory of the full pipeline as N grows, each
 * size the best of a->repeat runs (scale_best); the growth per doubling
 * from the size before, its time scaled to a doubling of N. */
static int bench_scale(const args *a)
{
	int64_t top = a->nodes > 0 ? a->nodes : 1000000;
	const int64_t sizes[] = {top / SCALE_FIRST_DIV, top / 20, top / 10,
				 top / 2, top};
	scale_run prev = {0};
	printf("%-10s %10s %9s %9s %9s %12s %10s %8s %4s\n", "kind", "nodes",
	       "gen_s", "plan_s", "rss_MiB", "us/node", "makespan",
	       "x/double", "runs");
	fflush(stdout); /* the header now, the rows as each size ends */
	for (int i = 0; i < 5; i++) {
		scale_run r = {0};
		int rc = scale_best(a, sizes[i], &r);
		if (rc)
			return rc;
		printf("%-10s %10d %9.3f %9.3f %9.1f %12.3f %10lld ", a->kind,
		       r.nodes, r.gen_s, r.plan_s, r.rss_mib,
		       1e6 * r.plan_s / (double)r.nodes,
		       (long long)r.makespan);
		if (i > 0 && prev.plan_s > 0)
			printf("%8.2f",
			       pow(r.plan_s / prev.plan_s,
				   log(2.0) / log((double)r.nodes /
						  (double)prev.nodes)));
		else
			printf("%8s", "-");
		printf(" %4d\n", r.runs);
		fflush(stdout);
		prev = r;
	}
	return 0;
}

/* Runs every scheduler on every graph into jobs[graph * NSCHED + s]. */
static int bench_run(const args *a, const char **paths, int np, job *jobs)
{
	dansched_error e;
	bool tty = !a->quiet && isatty(fileno(stderr));
	int rc = 0;
	for (int i = 0; i < np && rc == 0; i++)
		for (int s = 0; s < DANSCHED_NSCHEDULERS && rc == 0; s++) {
			if (tty)
				fprintf(stderr, "\r\033[Kbench %s: %s",
					paths[i], dansched_scheduler_name(s));
			dansched_options o;
			dansched_options_default(&o);
			o.scheduler = s;
			o.progress = progress_bench;
			if (cli_run_job(paths[i], a, &o,
				    &jobs[i * DANSCHED_NSCHEDULERS + s], &e))
				rc = cli_report(&e);
		}
	if (tty)
		fprintf(stderr, "\r\033[K");
	return rc;
}

/* --csv: one row per graph and scheduler. */
static void bench_csv(const job *jobs, int njobs)
{
	printf("case,scheduler");
	for (int m = 0; m < NMETRICS; m++)
		if (m != M_PLAN_PEAK)
			printf(",%s", metric_keys[m]);
	printf(",seconds,%s\n", metric_keys[M_PLAN_PEAK]);
	for (int k = 0; k < njobs; k++) {
		const job *j = &jobs[k];
		printf("%s,%s", j->case_name,
		       dansched_scheduler_name(k % DANSCHED_NSCHEDULERS));
		for (int m = 0; m < NMETRICS; m++)
			if (m != M_PLAN_PEAK)
				printf(",%lld", (long long)metric(j, m));
		printf(",%.3f,%lld\n", j->seconds,
		       (long long)metric(j, M_PLAN_PEAK));
	}
}

/* --json: the same rows as objects. */
static int bench_json(const job *jobs, int njobs)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(root, "results");
	for (int k = 0; k < njobs; k++) {
		const job *j = &jobs[k];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "case", j->case_name);
		cJSON_AddStringToObject(
			o, "scheduler",
			dansched_scheduler_name(k % DANSCHED_NSCHEDULERS));
		for (int m = 0; m < NMETRICS; m++)
			if (m != M_PLAN_PEAK)
				cJSON_AddNumberToObject(o, metric_keys[m],
							(double)metric(j, m));
		cJSON_AddNumberToObject(o, "seconds", j->seconds);
		cJSON_AddNumberToObject(o, metric_keys[M_PLAN_PEAK],
					(double)metric(j, M_PLAN_PEAK));
		cJSON_AddItemToArray(arr, o);
	}
	return cli_print_json(root);
}

/* The least value of metric m among the baselines of one graph's row. */
static int64_t best_baseline(const job *row, int m, int *who)
{
	int64_t best = INT64_MAX;
	for (int s = 0; s < DANSCHED_NSCHEDULERS; s++)
		if (s != DANSCHED_DAN && metric(&row[s], m) < best) {
			best = metric(&row[s], m);
			*who = s;
		}
	return best;
}

/* One table: metric m of every scheduler per graph, dan's reduction
 * against the original and the best baseline, and their averages. */
static void bench_table(const job *jobs, int np, int m)
{
	static const char *const titles[NMETRICS] = {
		("peak_vstay (bytes; dan: its MPAS order, the baselines: "
		 "their plan)"),
		"plan_peak_vstay (bytes; every scheduler's final plan)",
		"extra_ddr (bytes)", "spills", "makespan (cycles)"};
	printf("%s%s\n\n%-22s", m ? "\n" : "", titles[m], "case");
	for (int s = 0; s < DANSCHED_NSCHEDULERS; s++)
		printf(" %10s", dansched_scheduler_name(s));
	printf(" %9s %9s\n", "vs orig", "vs best");
	double sum_o = 0, sum_b = 0;
	for (int i = 0; i < np; i++) {
		const job *row = &jobs[i * DANSCHED_NSCHEDULERS];
		printf("%-22s", row->case_name);
		for (int s = 0; s < DANSCHED_NSCHEDULERS; s++)
			printf(" %10lld", (long long)metric(&row[s], m));
		int who = 0;
		int64_t dan = metric(&row[DANSCHED_DAN], m);
		double ro = reduction(metric(&row[DANSCHED_ORIGINAL], m), dan);
		double rb = reduction(best_baseline(row, m, &who), dan);
		sum_o += ro;
		sum_b += rb;
		printf(" %8.1f%% %8.1f%%\n", ro, rb);
	}
	printf("%-22s", "average");
	for (int s = 0; s < DANSCHED_NSCHEDULERS; s++)
		printf(" %10s", "");
	printf(" %8.1f%% %8.1f%%\n", sum_o / np, sum_b / np);
}

static void bench_times(const job *jobs, int np)
{
	printf("\nrun time (seconds, load + plan + check)\n\n%-22s", "case");
	for (int s = 0; s < DANSCHED_NSCHEDULERS; s++)
		printf(" %10s", dansched_scheduler_name(s));
	printf("\n");
	for (int i = 0; i < np; i++) {
		printf("%-22s", jobs[i * DANSCHED_NSCHEDULERS].case_name);
		for (int s = 0; s < DANSCHED_NSCHEDULERS; s++)
			printf(" %10.3f",
			       jobs[i * DANSCHED_NSCHEDULERS + s].seconds);
		printf("\n");
	}
}

/* Notes: where dan moves fewer bytes than the baseline moving the least
 * but spills more often (more, smaller transfers). */
static void bench_notes(const job *jobs, int np)
{
	bool any = false;
	for (int i = 0; i < np; i++) {
		const job *row = &jobs[i * DANSCHED_NSCHEDULERS];
		int who = 0;
		int64_t bytes = best_baseline(row, M_DDR, &who);
		const job *dan = &row[DANSCHED_DAN];
		if (metric(dan, M_DDR) >= bytes ||
		    metric(dan, M_SPILLS) <= metric(&row[who], M_SPILLS))
			continue;
		if (!any)
			printf("\nnotes\n\n");
		any = true;
		printf("%s: dan moves fewer bytes than %s (%lld against "
		       "%lld) with more spills (%lld against %lld)\n",
		       row->case_name, dansched_scheduler_name(who),
		       (long long)metric(dan, M_DDR), (long long)bytes,
		       (long long)metric(dan, M_SPILLS),
		       (long long)metric(&row[who], M_SPILLS));
	}
}

/* The options of bench and of bench --scale apart: each refuses the
 * other's (no option that does nothing).  0 or a usage error's status. */
static int bench_check_args(const args *a)
{
	const char *opt;
	if (!a->scale) {
		if ((opt = cli_given_of(a, "kind nodes repeat")))
			return cli_usage_error(usage_bench,
					   "--%s goes with --scale", opt);
		return 0;
	}
	if (a->npos > 0)
		return cli_usage_error(usage_bench, "bench --scale makes its "
				       "own graphs, got '%s'", a->pos[0]);
	if ((opt = cli_given_of(a, "json csv quiet")))
		return cli_usage_error(usage_bench,
				   "--%s is not for bench --scale", opt);
	if (cli_given_of(a, "nodes") && a->nodes < SCALE_FIRST_DIV)
		return cli_usage_error(usage_bench, "bench --scale needs --nodes "
				       "%d or more (its smallest graph has N/%d "
				       "nodes), got %lld",
				       SCALE_FIRST_DIV, SCALE_FIRST_DIV,
				       (long long)a->nodes);
	return 0;
}

int cmd_bench(int argc, char **argv)
{
	args a;
	int rc = cli_command_args(argc, argv, usage_bench, "",
			      "json csv quiet scale kind nodes repeat cap",
			      &a);
	if (rc)
		return rc < 0 ? 0 : rc;
	if ((rc = bench_check_args(&a)))
		return rc;
	if (a.scale)
		return bench_scale(&a);
	char **bundled = NULL;
	const char **paths;
	int np;
	if ((rc = cli_graph_paths(&a, &bundled, &paths, &np)))
		return rc;
	int njobs = np * DANSCHED_NSCHEDULERS;
	job *jobs = calloc((size_t)njobs, sizeof *jobs);
	if (!jobs) {
		cli_free_list(bundled, np);
		return 2;
	}
	rc = bench_run(&a, paths, np, jobs);
	if (rc == 0 && a.json)
		rc = bench_json(jobs, njobs);
	else if (rc == 0 && a.csv)
		bench_csv(jobs, njobs);
	else if (rc == 0) {
		for (int m = 0; m < NMETRICS; m++)
			bench_table(jobs, np, m);
		bench_times(jobs, np);
		bench_notes(jobs, np);
	}
	cli_free_jobs(jobs, njobs);
	cli_free_list(bundled, bundled ? np : 0);
	return rc;
}

/* ---- tradeoff ---- */

#define NBUDGET DANSCHED_NTRADEOFF

/* One graph's points: dan at each budget, each baseline, and lb_any. */
typedef struct curve {
	char case_name[256];
	int64_t ddr[NBUDGET], mk[NBUDGET];
	int64_t base_ddr[DANSCHED_DAN], base_mk[DANSCHED_DAN];
	int64_t lb_any;
} curve;

/* Plans g with baseline s, figures only. */
static int plan_point(const dansched_graph *g, int s, int64_t *ddr,
		      int64_t *mk, dansched_error *e)
{
	dansched_options o;
	dansched_options_default(&o);
	o.scheduler = s;
	dansched_plan *p;
	dansched_figures f;
	int rc = dansched_schedule(g, &o, &p, &f, e);
	dansched_plan_destroy(p);
	*ddr = f.extra_ddr;
	*mk = f.makespan;
	return rc;
}

/* dan's points on g into c: its plans at the tradeoff budgets, made in
 * one run.  A budget whose plan is worse than the previous budget's
 * (longer, or as long with more traffic) keeps the previous plan, which
 * it is allowed to use. */
static int trade_dan(const dansched_graph *g, curve *c, dansched_error *e)
{
	dansched_plan *p[NBUDGET];
	dansched_figures f[NBUDGET];
	int rc = dansched_schedule_tradeoff(g, NULL, p, f, e);
	for (int i = 0; i < NBUDGET && rc == 0; i++) {
		dansched_plan_destroy(p[i]);
		c->ddr[i] = f[i].extra_ddr;
		c->mk[i] = f[i].makespan;
		if (i > 0 &&
		    (c->mk[i] > c->mk[i - 1] ||
		     (c->mk[i] == c->mk[i - 1] && c->ddr[i] > c->ddr[i - 1])))
			c->mk[i] = c->mk[i - 1], c->ddr[i] = c->ddr[i - 1];
	}
	return rc;
}

/* The points of graph path into c. */
static int trade_graph(const char *path, const args *a, curve *c,
		       dansched_error *e)
{
	dansched_graph *g;
	if (dansched_case_name(path, c->case_name, sizeof c->case_name)) {
		snprintf(e->message, sizeof e->message, "%s: name too long",
			 path);
		return e->status = DANSCHED_BAD_INPUT;
	}
	int rc = dansched_graph_load(NULL, path, &a->caps, &g, e);
	if (rc == 0)
		rc = trade_dan(g, c, e);
	for (int s = 0; s < DANSCHED_DAN && rc == 0; s++)
		rc = plan_point(g, s, &c->base_ddr[s], &c->base_mk[s], e);
	if (rc == 0)
		rc = dansched_any_bound(g, NULL, &c->lb_any, NULL, NULL, e);
	dansched_graph_destroy(g); /* NULL when it did not load */
	return rc;
}

static int trade_chart(const curve *c, const char *dir, const char *pub,
		       dansched_error *e)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s_tradeoff.svg", dir, c->case_name);
	dansched_series s[1 + DANSCHED_DAN];
	s[0] = (dansched_series){"dansched, traffic budget 0-400%", c->ddr,
				 c->mk, NBUDGET, 1};
	for (int k = 0; k < DANSCHED_DAN; k++)
		s[1 + k] = (dansched_series){dansched_scheduler_name(k),
					     &c->base_ddr[k], &c->base_mk[k],
					     1, 0};
	return dansched_write_tradeoff(NULL, path, c->case_name, s,
				       1 + DANSCHED_DAN, pub, c->lb_any, NULL,
				       e);
}

static void trade_print(const curve *c, bool json)
{
	if (!json) {
		for (int i = 0; i < NBUDGET; i++)
			printf("%-22s %6g %10lld %10lld\n", c->case_name,
			       dansched_tradeoff_budget(i), (long long)c->ddr[i],
			       (long long)c->mk[i]);
		return;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "case", c->case_name);
	cJSON *arr = cJSON_AddArrayToObject(o, "points");
	for (int i = 0; i < NBUDGET; i++) {
		cJSON *pt = cJSON_CreateObject();
		cJSON_AddNumberToObject(pt, "budget",
					dansched_tradeoff_budget(i));
		cJSON_AddNumberToObject(pt, "extra_ddr", (double)c->ddr[i]);
		cJSON_AddNumberToObject(pt, "makespan", (double)c->mk[i]);
		cJSON_AddItemToArray(arr, pt);
	}
	cli_print_json(o);
}

/* The published table, or NULL (with a note) when it cannot be read. */
static const char *published_file(const char *path)
{
	if (access(path, R_OK) == 0)
		return path;
	fprintf(stderr, "dansched: note: %s: %s; the charts show no "
			"published points\n",
		path, strerror(errno));
	return NULL;
}

int cmd_tradeoff(int argc, char **argv)
{
	args a;
	int rc = cli_command_args(argc, argv, usage_tradeoff, "o:",
			      "json published quiet cap", &a);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (!a.out || a.npos == 0)
		return cli_usage_error(usage_tradeoff, "tradeoff needs GRAPH... and "
				   "-o DIR");
	curve *c = calloc((size_t)a.npos, sizeof *c);
	if (!c)
		return 2;
	dansched_error e;
	bool tty = !a.quiet && isatty(fileno(stderr));
	for (int i = 0; i < a.npos && rc == 0; i++) {
		if (tty)
			fprintf(stderr, "\r\033[Ktradeoff %d/%d: %s", i + 1,
				a.npos, a.pos[i]);
		if (trade_graph(a.pos[i], &a, &c[i], &e))
			rc = cli_report(&e);
		for (int k = 0; k < i && rc == 0; k++)
			if (strcmp(c[i].case_name, c[k].case_name) == 0) {
				fprintf(stderr, "dansched: %s and %s have the "
						"same case name '%s'\n",
					a.pos[k], a.pos[i], c[i].case_name);
				rc = 2;
			}
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
	const char *pub = rc == 0 ? published_file(a.published) : NULL;
	if (rc == 0)
		rc = cli_make_dir(a.out);
	for (int i = 0; i < a.npos && rc == 0; i++)
		if (trade_chart(&c[i], a.out, pub, &e))
			rc = cli_report(&e);
	if (rc == 0 && !a.json)
		printf("%-22s %6s %10s %10s\n", "case", "budget", "extra_ddr",
		       "makespan");
	for (int i = 0; i < a.npos && rc == 0; i++)
		trade_print(&c[i], a.json);
	free(c);
	return rc;
}

