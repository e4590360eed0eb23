/* main.c: the dansched command line, a thin layer over the library.
 *
 *   schedule [GRAPH...] -o DIR   load, plan (MPAS -> DLR -> CPE), check,
 *                                write the plan
 *   eval GRAPH SCHEDULE ...      replay a plan and print its figures
 *   bench [GRAPH...]             every scheduler on every graph, tables
 *   tradeoff GRAPH... -o DIR     makespan against traffic budget
 *                                (these two in cli_bench.c)
 *   trace / memmap               pictures of a plan
 *   convert IN OUT               JSON <-> CSV
 *   gen --nodes N -o FILE        a synthetic graph
 *
 * It uses nothing but the public API, dansched.h.
 * Exit status: 0 ok, 1 invalid plan, 2 bad input or usage. */
#include "cli.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


static const char usage_main[] =
	"usage: dansched COMMAND [ARGS]\n"
	"\n"
	"Schedules NPU operator graphs (SPEC.md) and checks plans.\n"
	"\n"
	"commands:\n"
	"  schedule [GRAPH...] -o DIR   plan each graph (default: the bundled\n"
	"                               graphs) and write its result files\n"
	"  eval GRAPH SCHEDULE [MEMORY [SPILL]]\n"
	"                               check a plan and print its figures\n"
	"  bench [GRAPH...]             every scheduler on every graph: tables\n"
	"  tradeoff GRAPH... -o DIR     makespan against traffic budget, and\n"
	"                               its chart\n"
	"  trace GRAPH SCHEDULE [MEMORY SPILL] -o FILE.json\n"
	"                               the replay as a Perfetto/Chrome trace\n"
	"  memmap GRAPH SCHEDULE MEMORY SPILL -o FILE.svg\n"
	"                               the memory layout over time, as SVG\n"
	"  convert IN OUT               convert a graph between JSON and CSV\n"
	"  gen --nodes N -o FILE.json   write a synthetic graph\n"
	"\n"
	"options for every command:\n"
	"  --cap L1=4096,UB=1024,L0A=256,L0B=256,L0C=512\n"
	"                               memory capacities (SPEC.md defaults)\n"
	"  -h, --help                   help for a command\n"
	"  --version                    print the version\n"
	"\n"
	"Exit status: 0 ok, 1 invalid plan, 2 bad input or usage.\n";

static const char usage_eval[] =
	"usage: dansched eval GRAPH SCHEDULE [MEMORY [SPILL]] [--q1] [--json]\n"
	"                     [--any-spill-order] [--cap SPEC]\n"
	"\n"
	"Replays the plan on the machine model of SPEC.md, checks every rule\n"
	"and prints peak_vstay, extra_ddr, spills, makespan, the lower bounds\n"
	"lb_critical_path, lb_pipe_load, lb_phase and lb_any, ratio_any\n"
	"(makespan / max(lb_critical_path, lb_pipe_load, lb_any)) and the\n"
	"peak occupancy of each memory.  lb_phase and lb_any hold for every\n"
	"plan of the graph.  lb_phase: the busiest pipe's cycles before an\n"
	"operation plus the busiest pipe's from it on (ancestors /\n"
	"descendants), the most over all operations.  lb_any: per pipe, the\n"
	"one-machine problem whose releases and tails are those loads (or the\n"
	"longest paths), solved with preemption (Jackson's rule); at least\n"
	"lb_phase, the critical path and the busiest pipe.  On a graph too\n"
	"large for the exact figures (about 130,000 nodes) they are sampled\n"
	"along the schedule, still valid, and lb_any_sampled=1 says so.\n"
	"Without MEMORY only the order is checked and the makespan has no\n"
	"address-reuse edges.\n"
	"\n"
	"The spill lines must be in the order the spills happen: line k's\n"
	"SPILL_OUT (node N+2k) before line k+1's in the schedule, as SPEC.md\n"
	"and the referee read the statement; the first line out of order makes\n"
	"the plan invalid.\n"
	"\n"
	"  --q1               also require at most one live buffer in each of\n"
	"                     L0A, L0B, L0C (the rule of the peak-memory\n"
	"                     problem)\n"
	"  --any-spill-order  accept spill lines in any order (files written\n"
	"                     under the looser convention; the figures are the\n"
	"                     same)\n"
	"  --json             print one JSON object\n"
	"\n"
	"Exit status: 0 valid, 1 a rule is broken (the line says which), 2 bad\n"
	"input.\n";

static const char usage_schedule[] =
	"usage: dansched schedule [GRAPH...] -o DIR [options]\n"
	"\n"
	"Plans each graph (default: every *.json in the bundled data folder),\n"
	"checks the plan with the evaluator and writes DIR/<case>_schedule.txt,\n"
	"_memory.txt and _spill.txt (only _schedule.txt for --stage mpas).\n"
	"Prints per graph the four figures, lower_bnd = max(critical path,\n"
	"busiest pipe with the plan's spills), ratio = makespan / lower_bnd,\n"
	"lb_phase and lb_any, bounds that hold for every plan of the graph\n"
	"(see eval; lb_any is followed by ~ when sampled), and ratio_any =\n"
	"makespan / max(lower_bnd, lb_any).\n"
	"\n"
	"  -o DIR                output folder (created when missing)\n"
	"  --stage STAGE         mpas | dlr | cpe (default cpe): the last stage\n"
	"                        of the dan pipeline to run\n"
	"  --scheduler NAME      dan (default) | original | free-first | lpmf |\n"
	"                        cp-list | vpux; original is the node-Id order,\n"
	"                        repaired where the Ids are not topological\n"
	"                        (Kahn's algorithm, least ready Id first)\n"
	"  --effort N            every stage searches N times its default\n"
	"                        budget; with N > 1 CPE also starts from the\n"
	"                        second-best backbone plan, and the default's\n"
	"                        plan is made too, the shorter kept (1 to\n"
	"                        1000; default 1)\n"
	"  --traffic-budget PCT  the plan may have up to PCT % more extra DDR\n"
	"                        traffic than the DLR plan, spent where it\n"
	"                        shortens the makespan: a placement with\n"
	"                        victims used longest ago, retiming's\n"
	"                        evictions and double buffering, and the\n"
	"                        plan's last spills searched again\n"
	"                        (default 5); up to 20,000 nodes, CPE's plan\n"
	"                        at budget 0 is kept where it is shorter\n"
	"                        and within the budget, and above 5 the plan\n"
	"                        at the next lower of 5, 25, 100 and 400\n"
	"                        where it is shorter, and the plan from the\n"
	"                        starting plan chosen within 5's cap where\n"
	"                        that is shorter\n"
	"  --peak-budget PCT     the plan may have up to PCT % more peak_vstay\n"
	"                        than the DLR plan, spent where it shortens\n"
	"                        the makespan (default 5); above 5, the plans\n"
	"                        at 5, 25 and 100 below it are made too, one\n"
	"                        kept where it is shorter, or as long at a\n"
	"                        lower peak.  Two plans may exceed it: a\n"
	"                        baseline's, where only it meets the\n"
	"                        baselines' own least makespan or traffic,\n"
	"                        and on a graph of separate parts the parts'\n"
	"                        plan, each part held to its own DLR plan's\n"
	"  --trace, --memmap     also write DIR/<case>_trace.json and\n"
	"                        DIR/<case>_memmap.svg (not with --stage mpas:\n"
	"                        an order has no memory map)\n"
	"  --json                one JSON object per graph instead of a table\n"
	"  -v                    print each stage's time and figures\n"
	"  --quiet               no progress line\n"
	"\n"
	"--effort, the budgets and --stage mpas or dlr are the dan pipeline's,\n"
	"the budgets its CPE stage's: refused with another scheduler or stage.\n"
	"Nothing is written unless every graph loads and plans.\n";


static const char usage_trace[] =
	"usage: dansched trace GRAPH SCHEDULE [MEMORY SPILL] -o FILE.json\n"
	"\n"
	"Writes the replay as a Chrome Trace Event file (open it in\n"
	"ui.perfetto.dev or chrome://tracing): one track per pipe, one event\n"
	"per operation and spill node (1 cycle = 1 us), memory occupancy\n"
	"counters.\n";

static const char usage_memmap[] =
	"usage: dansched memmap GRAPH SCHEDULE MEMORY SPILL -o FILE.svg\n"
	"\n"
	"Writes an SVG with one panel per memory: address up, replay time\n"
	"across, one rectangle per occupancy of a buffer (spilled-in ones\n"
	"marked); hover a rectangle for its buffer.\n";


static const char usage_gen[] =
	"usage: dansched gen --nodes N [--kind matmul|attention|conv|random]\n"
	"                    [--seed S] -o FILE.json\n"
	"\n"
	"Writes a valid synthetic graph of about N nodes in the benchmark's\n"
	"conventions, the same for the same seed (default kind matmul, seed\n"
	"1).\n";

static const char usage_convert[] =
	"usage: dansched convert IN OUT [--cap SPEC]\n"
	"\n"
	"Converts a graph between JSON (SPEC.md) and CSV.  A CSV graph is two\n"
	"tables: NAME_nodes.csv (columns Id,Op,BufId,Size,Type,Pipe,Cycles,Bufs)\n"
	"and NAME_edges.csv (columns Src,Dst) beside it; name the nodes table.\n"
	"The graph is validated on the way.\n";

static int exit_code(int rc)
{
	return rc == DANSCHED_INVALID_PLAN ? 1 : rc ? 2 : 0;
}

int cli_report(const dansched_error *e)
{
	fprintf(stderr, "dansched: %s\n", e->message);
	return exit_code(e->status);
}

/* After a usage error: the command's synopsis (its usage up to the first
 * blank line) and where the rest is, not the whole help, which would
 * bury the error line. */
static void usage_hint(const char *usage)
{
	static const char lead[] = "usage: dansched ";
	const char *end = strstr(usage, "\n\n");
	int len = end ? (int)(end - usage) : (int)strlen(usage);
	const char *cmd = "";
	int clen = 0;
	if (strncmp(usage, lead, sizeof lead - 1) == 0) {
		cmd = usage + sizeof lead - 1;
		clen = (int)strcspn(cmd, " \n");
	}
	fprintf(stderr, "%.*s\nsee 'dansched %.*s%s--help'\n", len, usage,
		clen, cmd, clen ? " " : "");
}

int cli_usage_error(const char *usage, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "dansched: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	usage_hint(usage);
	return 2;
}


/* A number from min (0 or more) to max for option opt, or -1 (with a
 * message). */
static double number_arg(const char *usage, const char *opt, const char *val,
			 double min, double max)
{
	char *end;
	double d = strtod(val, &end);
	if (end == val || *end || !(d >= min) || d > max) {
		cli_usage_error(usage, "%s needs a number from %g to %g, "
				       "got '%s'",
				opt, min, max, val);
		return -1;
	}
	return d;
}

/* Every option of every command; each command accepts the ones it names
 * (command_args).  -h, -o and -v are the short ones. */
enum {
	OPT_STAGE = 256, OPT_SCHEDULER, OPT_CAP, OPT_EFFORT, OPT_TRAFFIC,
	OPT_PEAK, OPT_NODES, OPT_KIND, OPT_SEED, OPT_PUBLISHED, OPT_Q1,
	OPT_JSON, OPT_CSV, OPT_TRACE, OPT_MEMMAP, OPT_QUIET, OPT_SCALE,
	OPT_ANY_SPILL_ORDER, OPT_REPEAT,
	OPT_END /* after the last */
};

/* args.given keeps one bit per long-only option in a uint64_t */
_Static_assert(OPT_END - 256 <= 64, "too many long options for args.given");

static const struct option all_options[] = {
	{"help", no_argument, NULL, 'h'},
	{"verbose", no_argument, NULL, 'v'},
	{"stage", required_argument, NULL, OPT_STAGE},
	{"scheduler", required_argument, NULL, OPT_SCHEDULER},
	{"cap", required_argument, NULL, OPT_CAP},
	{"effort", required_argument, NULL, OPT_EFFORT},
	{"traffic-budget", required_argument, NULL, OPT_TRAFFIC},
	{"peak-budget", required_argument, NULL, OPT_PEAK},
	{"nodes", required_argument, NULL, OPT_NODES},
	{"kind", required_argument, NULL, OPT_KIND},
	{"seed", required_argument, NULL, OPT_SEED},
	{"published", required_argument, NULL, OPT_PUBLISHED},
	{"q1", no_argument, NULL, OPT_Q1},
	{"json", no_argument, NULL, OPT_JSON},
	{"csv", no_argument, NULL, OPT_CSV},
	{"trace", no_argument, NULL, OPT_TRACE},
	{"memmap", no_argument, NULL, OPT_MEMMAP},
	{"quiet", no_argument, NULL, OPT_QUIET},
	{"scale", no_argument, NULL, OPT_SCALE},
	{"any-spill-order", no_argument, NULL, OPT_ANY_SPILL_ORDER},
	{"repeat", required_argument, NULL, OPT_REPEAT},
};
#define NOPTIONS (int)(sizeof all_options / sizeof *all_options)

static void args_default(args *a)
{
	dansched_options d; /* the budgets' defaults are the library's */
	dansched_options_default(&d);
	memset(a, 0, sizeof *a);
	dansched_caps_default(&a->caps);
	a->stage = "cpe";
	a->scheduler = "dan";
	a->kind = "matmul";
	a->seed = 1;
	a->repeat = 1;
	a->traffic_budget = d.traffic_budget_pct;
	a->peak_budget = d.peak_budget_pct;
	a->published = DS_PUBLISHED;
}

/* Where the long option `name` stands among the space-separated `names`,
 * NULL when it is not one of them. */
static const char *named(const char *names, const char *name)
{
	size_t n = strlen(name);
	for (const char *s = names; (s = strstr(s, name)); s += n)
		if ((s == names || s[-1] == ' ') && (s[n] == ' ' || !s[n]))
			return s;
	return NULL;
}

/* The option table of one command: --help and the long options it names,
 * ended by a zero entry. */
static void command_options(const char *longs, struct option *opts)
{
	int k = 0;
	for (int i = 0; i < NOPTIONS; i++)
		if (all_options[i].val == 'h' ||
		    named(longs, all_options[i].name))
			opts[k++] = all_options[i];
	memset(&opts[k], 0, sizeof opts[k]);
}

/* Whether option c takes a number, and its range [*min, *max]. */
static bool number_range(int c, double *min, double *max)
{
	*min = 1;
	*max = 9e15;
	switch (c) {
	case OPT_EFFORT: *max = DANSCHED_EFFORT_MAX; return true;
	case OPT_REPEAT: *max = CLI_REPEAT_MAX; return true;
	case OPT_NODES: return true;
	case OPT_SEED: *min = 0; return true;
	case OPT_TRAFFIC:
	case OPT_PEAK: *min = 0; *max = DANSCHED_BUDGET_MAX; return true;
	}
	return false;
}

/* Stores one parsed option; the exit status of a usage error, or 0. */
static int set_option(int c, const char *opt, const char *val,
		      const char *usage, args *a)
{
	double d = 0, min, max;
	dansched_error e;
	if (number_range(c, &min, &max) &&
	    (d = number_arg(usage, opt, val, min, max)) < 0)
		return 2;
	switch (c) {
	case 'h': a->help = true; break;
	case 'o': a->out = val; break;
	case 'v': a->verbose = true; break;
	case OPT_STAGE: a->stage = val; break;
	case OPT_SCHEDULER: a->scheduler = val; break;
	case OPT_CAP:
		if (dansched_caps_parse(&a->caps, val, &e))
			return cli_usage_error(usage, "%s", e.message);
		break;
	case OPT_EFFORT: a->effort = (int64_t)d; break;
	case OPT_TRAFFIC: a->traffic_budget = d; break;
	case OPT_PEAK: a->peak_budget = d; break;
	case OPT_NODES: a->nodes = (int64_t)d; break;
	case OPT_KIND: a->kind = val; break;
	case OPT_SEED: a->seed = (int64_t)d; break;
	case OPT_PUBLISHED: a->published = val; break;
	case OPT_Q1: a->q1 = true; break;
	case OPT_JSON: a->json = true; break;
	case OPT_CSV: a->csv = true; break;
	case OPT_TRACE: a->trace = true; break;
	case OPT_MEMMAP: a->memmap = true; break;
	case OPT_QUIET: a->quiet = true; break;
	case OPT_SCALE: a->scale = true; break;
	case OPT_ANY_SPILL_ORDER: a->any_spill_order = true; break;
	case OPT_REPEAT: a->repeat = (int64_t)d; break;
	}
	return 0;
}

/* The text of the option getopt_long just refused. */
static const char *refused_option(char **argv, char *buf, size_t size)
{
	if (optopt > 0 && optopt < 256) {
		snprintf(buf, size, "-%c", optopt);
		return buf;
	}
	return argv[optind - 1];
}

const char *cli_given_of(const args *a, const char *names)
{
	const char *first = NULL, *at = NULL;
	for (int i = 0; i < NOPTIONS; i++) {
		int c = all_options[i].val;
		const char *s = c >= 256 && (a->given >> (c - 256) & 1)
					? named(names, all_options[i].name)
					: NULL;
		if (s && (!at || s < at))
			first = all_options[i].name, at = s;
	}
	return first;
}

/* Parses a command's arguments (argv[0] is the command's name) with
 * getopt_long: the short options `shorts` ("o:" and "v" where the command
 * takes them; -h always) and the long options named in `longs`, separated
 * by spaces (--help always); anything else is a usage error.  0 to go on,
 * -1 when --help was answered, or the exit status of a usage error. */
int cli_command_args(int argc, char **argv, const char *usage,
			const char *shorts, const char *longs, args *a)
{
	struct option opts[NOPTIONS + 1];
	char optstring[16];
	snprintf(optstring, sizeof optstring, ":h%s", shorts);
	command_options(longs, opts);
	args_default(a);
	opterr = 0;
	optind = 1;
	int c, li, rc = 0;
	char buf[8], name[32];
	while (rc == 0 &&
	       (c = getopt_long(argc, argv, optstring, opts, &li)) != -1) {
		if (c == '?')
			return cli_usage_error(usage, "unknown option '%s'",
					   refused_option(argv, buf, sizeof buf));
		if (c == ':')
			return cli_usage_error(usage, "%s needs a value",
					   refused_option(argv, buf, sizeof buf));
		if (c < 256)
			snprintf(name, sizeof name, "-%c", c);
		else
			snprintf(name, sizeof name, "--%s", opts[li].name);
		rc = set_option(c, name, optarg, usage, a);
		if (c >= 256)
			a->given |= (uint64_t)1 << (c - 256);
	}
	if (rc)
		return rc;
	if (a->help) {
		fputs(usage, stdout);
		return -1;
	}
	for (int i = optind; i < argc; i++) {
		if (a->npos == 256)
			return cli_usage_error(usage, "too many arguments");
		a->pos[a->npos++] = argv[i];
	}
	return 0;
}

/* ---- printing figures ---- */


static int64_t lower_bound(const dansched_figures *f);

/* makespan / max(lower_bnd, lb_any) */
static double ratio_any(const dansched_figures *f, const bounds *b)
{
	int64_t lb = lower_bound(f) > b->any ? lower_bound(f) : b->any;
	return lb ? (double)f->makespan / (double)lb : 0.0;
}

/* The bounds of g (for p's samples, when over the work budget), timed. */
static int get_bounds(const dansched_graph *g, const dansched_plan *p,
		      bounds *b, dansched_error *e)
{
	clock_t t0 = clock();
	int rc = dansched_any_bound(g, p, &b->any, &b->phase, &b->exact, e);
	b->seconds = (double)(clock() - t0) / CLOCKS_PER_SEC;
	return rc;
}

static cJSON *figures_json(const char *case_name, const dansched_figures *f,
			   const bounds *b)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	if (case_name)
		cJSON_AddStringToObject(o, "case", case_name);
	cJSON_AddNumberToObject(o, "valid", 1);
	cJSON_AddNumberToObject(o, "nodes", (double)f->nodes);
	cJSON_AddNumberToObject(o, "peak_vstay", (double)f->peak_vstay);
	cJSON_AddNumberToObject(o, "extra_ddr", (double)f->extra_ddr);
	cJSON_AddNumberToObject(o, "spills", (double)f->spills);
	cJSON_AddNumberToObject(o, "makespan", (double)f->makespan);
	cJSON_AddNumberToObject(o, "lb_critical_path",
				(double)f->lb_critical_path);
	cJSON_AddNumberToObject(o, "lb_pipe_load", (double)f->lb_pipe_load);
	cJSON_AddNumberToObject(o, "lb_phase", (double)b->phase);
	cJSON_AddNumberToObject(o, "lb_any", (double)b->any);
	cJSON_AddBoolToObject(o, "lb_any_exact", b->exact != 0);
	cJSON_AddNumberToObject(o, "ratio_any", ratio_any(f, b));
	for (int m = 0; m < DANSCHED_NMEM; m++) {
		char key[16];
		snprintf(key, sizeof key, "peak_%s", dansched_memory_name(m));
		cJSON_AddNumberToObject(o, key, (double)f->peak_mem[m]);
	}
	return o;
}

int cli_print_json(cJSON *o)
{
	char *s = o ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	if (!s) {
		fprintf(stderr, "dansched: out of memory\n");
		return 2;
	}
	puts(s);
	cJSON_free(s);
	return 0;
}

static int64_t lower_bound(const dansched_figures *f)
{
	return f->lb_critical_path > f->lb_pipe_load ? f->lb_critical_path
						     : f->lb_pipe_load;
}

/* ---- eval ---- */

/* The graph a.pos[0] and the plan a.pos[1..3] (schedule, memory, spill). */
static int load_plan(const args *a, dansched_graph **g, dansched_plan **p,
		     dansched_error *e)
{
	int rc = dansched_graph_load(NULL, a->pos[0], &a->caps, g, e);
	if (rc)
		return rc;
	rc = dansched_plan_read(*g, a->pos[1], a->npos > 2 ? a->pos[2] : NULL,
				a->npos > 3 ? a->pos[3] : NULL, p, e);
	if (rc) {
		dansched_graph_destroy(*g);
		*g = NULL;
	}
	return rc;
}

static int cmd_eval(int argc, char **argv)
{
	args a;
	int rc = cli_command_args(argc, argv, usage_eval, "",
			      "q1 json any-spill-order cap", &a);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (a.npos < 2 || a.npos > 4)
		return cli_usage_error(usage_eval,
				   "eval needs GRAPH SCHEDULE [MEMORY [SPILL]]");
	dansched_error e;
	dansched_graph *g;
	dansched_plan *p;
	if ((rc = load_plan(&a, &g, &p, &e)))
		return cli_report(&e);
	dansched_figures f;
	bounds b;
	unsigned flags = (a.q1 ? DANSCHED_EVAL_Q1 : 0u) |
			 (a.any_spill_order ? 0u : DANSCHED_EVAL_SPILL_ORDER);
	rc = dansched_evaluate_flags(g, p, flags, &f, &e);
	if (rc == DANSCHED_OK)
		rc = get_bounds(g, p, &b, &e);
	dansched_plan_destroy(p);
	dansched_graph_destroy(g);
	if (rc) {
		if (a.json && rc == DANSCHED_INVALID_PLAN) {
			cJSON *x = cJSON_CreateObject();
			cJSON_AddNumberToObject(x, "valid", 0);
			cJSON_AddStringToObject(x, "error", e.message);
			cli_print_json(x);
		}
		return cli_report(&e);
	}
	if (a.json)
		return cli_print_json(figures_json(NULL, &f, &b));
	printf("valid=1 nodes=%lld peak_vstay=%lld extra_ddr=%lld spills=%lld "
	       "makespan=%lld lb_critical_path=%lld lb_pipe_load=%lld "
	       "lb_phase=%lld lb_any=%lld%s ratio_any=%.3f",
	       (long long)f.nodes, (long long)f.peak_vstay,
	       (long long)f.extra_ddr, (long long)f.spills,
	       (long long)f.makespan, (long long)f.lb_critical_path,
	       (long long)f.lb_pipe_load, (long long)b.phase,
	       (long long)b.any, b.exact ? "" : " lb_any_sampled=1",
	       ratio_any(&f, &b));
	for (int m = 0; m < DANSCHED_NMEM; m++)
		printf(" peak_%s=%lld", dansched_memory_name(m),
		       (long long)f.peak_mem[m]);
	printf("\n");
	return 0;
}

/* ---- convert ---- */

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int cmd_convert(int argc, char **argv)
{
	args a;
	int rc = cli_command_args(argc, argv, usage_convert, "", "cap", &a);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (a.npos != 2)
		return cli_usage_error(usage_convert, "convert needs IN OUT");
	dansched_error e;
	dansched_graph *g;
	if ((rc = dansched_graph_load(NULL, a.pos[0], &a.caps, &g, &e)))
		return cli_report(&e);
	rc = dansched_graph_save(g, a.pos[1], &e);
	dansched_graph_destroy(g);
	return rc ? cli_report(&e) : 0;
}

/* ---- schedule ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.json in the bundled data folder, sorted by name. */
int cli_bundled_graphs(char ***out, int *count)
{
	*out = NULL;
	*count = 0;
	DIR *d = opendir(DS_DATA_DIR);
	if (!d) {
		fprintf(stderr, "dansched: %s: cannot open the bundled data "
				"folder: %s\n",
			DS_DATA_DIR, strerror(errno));
		return 2;
	}
	char **list = NULL;
	int n = 0, cap = 0, rc = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!ends_with(de->d_name, ".json"))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			char **nl = realloc(list, (size_t)cap * sizeof *nl);
			if (!nl) {
				rc = 2;
				break;
			}
			list = nl;
		}
		size_t l = strlen(DS_DATA_DIR) + strlen(de->d_name) + 2;
		list[n] = malloc(l);
		if (!list[n]) {
			rc = 2;
			break;
		}
		snprintf(list[n++], l, "%s/%s", DS_DATA_DIR, de->d_name);
	}
	closedir(d);
	if (n)
		qsort(list, (size_t)n, sizeof *list, cmp_str);
	*out = list;
	*count = n;
	if (rc)
		fprintf(stderr, "dansched: out of memory\n");
	else if (n == 0) {
		fprintf(stderr, "dansched: %s: no *.json graphs\n",
			DS_DATA_DIR);
		rc = 2;
	}
	return rc;
}

int cli_graph_paths(args *a, char ***bundled, const char ***paths,
		    int *np)
{
	*bundled = NULL;
	*paths = a->pos;
	*np = a->npos;
	if (*np > 0)
		return 0;
	int rc = cli_bundled_graphs(bundled, np);
	*paths = (const char **)*bundled;
	return rc;
}

void cli_free_list(char **list, int n)
{
	for (int i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

int cli_make_dir(const char *path)
{
	char buf[4096];
	if (strlen(path) >= sizeof buf) {
		fprintf(stderr, "dansched: %s: path too long\n", path);
		return 2;
	}
	strcpy(buf, path);
	for (char *p = buf + 1;; p++) {
		char c = *p;
		if (c == '/' || c == 0) {
			*p = 0;
			if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
				fprintf(stderr, "dansched: %s: cannot create: "
						"%s\n",
					buf, strerror(errno));
				return 2;
			}
			*p = c;
		}
		if (!c)
			break;
	}
	return 0;
}


/* -v: one line per finished stage, on stderr. */
static void progress_verbose(void *ud, const char *stage, double seconds,
			     const dansched_figures *f)
{
	fprintf(stderr, "  %-10s %-5s %8.3fs  peak_vstay=%lld extra_ddr=%lld "
			"spills=%lld makespan=%lld\n",
		((const job *)ud)->case_name, stage, seconds,
		(long long)f->peak_vstay, (long long)f->extra_ddr,
		(long long)f->spills, (long long)f->makespan);
}

/* -v: the bounds' line, on stderr. */
static void progress_bound(const job *j)
{
	fprintf(stderr, "  %-10s %-5s %8.3fs  lb_any=%lld lb_phase=%lld (%s)\n",
		j->case_name, "bound", j->lb.seconds, (long long)j->lb.any,
		(long long)j->lb.phase,
		j->lb.exact ? "exact"
			    : "sampled: the graph is over the exact bound's "
			      "work budget");
}

void cli_free_jobs(job *jobs, int n)
{
	for (int i = 0; jobs && i < n; i++) {
		dansched_plan_destroy(jobs[i].plan);
		dansched_graph_destroy(jobs[i].g);
	}
	free(jobs);
}

/* Loads the graph at path and plans it with o into j. */
int cli_run_job(const char *path, const args *a, const dansched_options *o,
		   job *j, dansched_error *e)
{
	j->path = path;
	if (dansched_case_name(path, j->case_name, sizeof j->case_name)) {
		snprintf(e->message, sizeof e->message, "%s: name too long",
			 path);
		return e->status = DANSCHED_BAD_INPUT;
	}
	clock_t t0 = clock();
	int rc = dansched_graph_load(NULL, path, &a->caps, &j->g, e);
	if (rc == DANSCHED_OK) {
		dansched_options ro = *o;
		ro.progress_ud = j;
		rc = dansched_schedule(j->g, &ro, &j->plan, &j->fig, e);
	}
	j->seconds = (double)(clock() - t0) / CLOCKS_PER_SEC;
	return rc;
}

static int write_views(const job *j, const char *dir, bool trace, bool mm,
		       dansched_error *e)
{
	char path[4096];
	int rc = DANSCHED_OK;
	if (trace) {
		snprintf(path, sizeof path, "%s/%s_trace.json", dir,
			 j->case_name);
		rc = dansched_write_trace(j->g, j->plan, path, e);
	}
	if (rc == DANSCHED_OK && mm && dansched_plan_has_offsets(j->plan)) {
		snprintf(path, sizeof path, "%s/%s_memmap.svg", dir,
			 j->case_name);
		rc = dansched_write_memmap(j->g, j->plan, path, e);
	}
	return rc;
}

/* The options o's run would not use, refused (no option does nothing):
 * the effort, the budgets and an early stage are the dan pipeline's (a
 * baseline's plan is its whole run: --stage cpe), the budgets its CPE
 * stage's, and the memory map needs a memory plan.  0 or a usage
 * error's status. */
static int schedule_unused(const args *a, const dansched_options *o)
{
	bool dan = o->scheduler == DANSCHED_DAN;
	const char *opt;
	if (!dan && o->stage != DANSCHED_CPE)
		return cli_usage_error(usage_schedule, "--stage %s is for "
				       "--scheduler dan", a->stage);
	if (!dan && (opt = cli_given_of(a, "effort traffic-budget "
					"peak-budget")))
		return cli_usage_error(usage_schedule,
				   "--%s is for --scheduler dan", opt);
	if (o->stage != DANSCHED_CPE &&
	    (opt = cli_given_of(a, "traffic-budget peak-budget")))
		return cli_usage_error(usage_schedule, "--%s is for --stage cpe",
				   opt);
	if (a->memmap && o->stage == DANSCHED_MPAS)
		return cli_usage_error(usage_schedule, "--memmap needs a "
				       "memory plan: not with --stage %s",
				       "mpas");
	return 0;
}

/* The pipeline's options from the command's; 0, or the exit status of an
 * unknown scheduler or stage or of an option the run would not use. */
static int schedule_options(const args *a, dansched_options *o)
{
	dansched_options_default(o);
	o->scheduler = dansched_scheduler_from_name(a->scheduler);
	if (o->scheduler < 0)
		return cli_usage_error(usage_schedule, "unknown scheduler '%s'",
				       a->scheduler);
	o->stage = dansched_stage_from_name(a->stage);
	if (o->stage < 1)
		return cli_usage_error(usage_schedule, "unknown stage '%s'",
				       a->stage);
	o->effort = a->effort;
	o->traffic_budget_pct = a->traffic_budget;
	o->peak_budget_pct = a->peak_budget;
	if (a->verbose)
		o->progress = progress_verbose;
	return schedule_unused(a, o);
}

/* Loads, plans and bounds every graph into jobs, with a progress line on
 * a terminal; 0, or the exit status of the first failure (reported). */
static int schedule_run(const args *a, const dansched_options *o,
			const char **paths, int np, job *jobs)
{
	bool tty = !a->quiet && !a->verbose && isatty(fileno(stderr));
	dansched_error e;
	int rc = 0;
	for (int i = 0; i < np && rc == 0; i++) {
		if (tty)
			fprintf(stderr, "\r\033[Kplanning %d/%d: %s", i + 1, np,
				paths[i]);
		if (cli_run_job(paths[i], a, o, &jobs[i], &e) ||
		    get_bounds(jobs[i].g, jobs[i].plan, &jobs[i].lb, &e))
			rc = cli_report(&e);
		else if (a->verbose)
			progress_bound(&jobs[i]);
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
	return rc;
}

/* Two graphs with one case name would overwrite each other's files; 0, or
 * 2 with a message naming the first two. */
static int schedule_names_differ(const job *jobs, int np)
{
	for (int i = 0; i < np; i++)
		for (int k = 0; k < i; k++)
			if (strcmp(jobs[i].case_name, jobs[k].case_name) == 0) {
				fprintf(stderr, "dansched: %s and %s have the "
						"same case name '%s': their "
						"results would collide\n",
					jobs[k].path, jobs[i].path,
					jobs[i].case_name);
				return 2;
			}
	return 0;
}

/* Writes every plan and its pictures into the -o folder (created when
 * missing); 0, or the exit status of the first failure (reported). */
static int schedule_write(const args *a, const job *jobs, int np)
{
	dansched_error e;
	int rc = cli_make_dir(a->out);
	for (int i = 0; i < np && rc == 0; i++)
		if (dansched_plan_write(jobs[i].g, jobs[i].plan, a->out,
					jobs[i].case_name, &e) ||
		    write_views(&jobs[i], a->out, a->trace, a->memmap, &e))
			rc = cli_report(&e);
	return rc;
}

/* One graph's row of the figures table. */
static void schedule_row(const job *j)
{
	int64_t lb = lower_bound(&j->fig);
	printf("%-22s %9lld %10lld %10lld %7lld %10lld %10lld %6.3f "
	       "%10lld %10lld%c %8.3f %8.3f\n",
	       j->case_name, (long long)j->fig.nodes,
	       (long long)j->fig.peak_vstay, (long long)j->fig.extra_ddr,
	       (long long)j->fig.spills, (long long)j->fig.makespan,
	       (long long)lb, lb ? (double)j->fig.makespan / (double)lb : 0.0,
	       (long long)j->lb.phase, (long long)j->lb.any,
	       j->lb.exact ? ' ' : '~', ratio_any(&j->fig, &j->lb),
	       j->seconds);
}

/* Every graph's figures: a table, or with --json one object per graph. */
static void schedule_print(const job *jobs, int np, bool json)
{
	if (!json)
		printf("%-22s %9s %10s %10s %7s %10s %10s %6s %10s %10s %9s "
		       "%8s\n",
		       "case", "nodes", "peak_vstay", "extra_ddr", "spills",
		       "makespan", "lower_bnd", "ratio", "lb_phase", "lb_any",
		       "ratio_any", "seconds");
	for (int i = 0; i < np; i++)
		if (json)
			cli_print_json(figures_json(jobs[i].case_name,
						    &jobs[i].fig, &jobs[i].lb));
		else
			schedule_row(&jobs[i]);
}

/* schedule: loads, plans and checks every graph, then writes the plans
 * (none unless all of them planned) and prints their figures. */
static int cmd_schedule(int argc, char **argv)
{
	args a;
	int rc = cli_command_args(argc, argv, usage_schedule, "o:v",
			      "stage scheduler effort traffic-budget "
			      "peak-budget trace memmap json verbose quiet "
			      "cap", &a);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (!a.out)
		return cli_usage_error(usage_schedule, "schedule needs -o DIR");
	dansched_options o;
	if ((rc = schedule_options(&a, &o)))
		return rc;
	char **bundled = NULL;
	const char **paths;
	int np;
	if ((rc = cli_graph_paths(&a, &bundled, &paths, &np)))
		return rc;
	job *jobs = calloc((size_t)np, sizeof *jobs);
	if (!jobs) {
		cli_free_list(bundled, np);
		return 2;
	}
	/* load, plan and check everything before writing anything */
	rc = schedule_run(&a, &o, paths, np, jobs);
	if (rc == 0)
		rc = schedule_names_differ(jobs, np);
	if (rc == 0)
		rc = schedule_write(&a, jobs, np);
	if (rc == 0)
		schedule_print(jobs, np, a.json);
	cli_free_jobs(jobs, np);
	cli_free_list(bundled, bundled ? np : 0);
	return rc;
}

/* ---- trace, memmap ---- */

static int cmd_view(int argc, char **argv, bool memmap)
{
	const char *usage = memmap ? usage_memmap : usage_trace;
	args a;
	int rc = cli_command_args(argc, argv, usage, "o:", "cap", &a);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (!a.out || a.npos < 2 || a.npos > 4 || a.npos == 3 ||
	    (memmap && a.npos != 4))
		return cli_usage_error(usage, "%s and -o FILE",
				       memmap ? "memmap needs GRAPH SCHEDULE "
						"MEMORY SPILL"
					      : "trace needs GRAPH SCHEDULE "
						"[MEMORY SPILL]");
	dansched_error e;
	dansched_graph *g;
	dansched_plan *p;
	if ((rc = load_plan(&a, &g, &p, &e)))
		return cli_report(&e);
	rc = memmap ? dansched_write_memmap(g, p, a.out, &e)
		    : dansched_write_trace(g, p, a.out, &e);
	dansched_plan_destroy(p);
	dansched_graph_destroy(g);
	return rc ? cli_report(&e) : 0;
}

/* ---- gen ---- */

static int cmd_gen(int argc, char **argv)
{
	args a;
	int rc = cli_command_args(argc, argv, usage_gen, "o:",
			      "nodes kind seed cap", &a);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (!a.out || a.nodes <= 0 || a.npos)
		return cli_usage_error(usage_gen, "gen needs --nodes N and -o "
			"FILE");
	dansched_error e;
	dansched_graph *g;
	if ((rc = dansched_generate(NULL, a.kind, a.nodes, (uint64_t)a.seed,
				    &a.caps, &g, &e)))
		return cli_report(&e);
	rc = dansched_graph_save(g, a.out, &e);
	dansched_graph_destroy(g);
	return rc ? cli_report(&e) : 0;
}

/* glibc gives each block of 128 KiB or more (up to 32 MiB, as the
 * threshold adapts) a mapping of its own and returns it on free, so the
 * next pass's arrays come in fresh pages the kernel must clear: at 1M
 * generated nodes (`bench --scale --nodes 1000000`, one run each) 23.5 s
 * of planning, 17.7 s with blocks of up to 32 MiB (the most glibc takes)
 * from the heap and the heap kept; the same plans.  A setting of the
 * process, so the CLI's, not the library's. */
static void heap_tuning(void)
{
#ifdef __GLIBC__
	(void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
	(void)mallopt(M_TRIM_THRESHOLD, INT_MAX);
#endif
}

int main(int argc, char **argv)
{
	heap_tuning();
	if (argc < 2) {
		fputs(usage_main, stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 ||
	    strcmp(cmd, "help") == 0) {
		fputs(usage_main, stdout);
		return 0;
	}
	if (strcmp(cmd, "--version") == 0) {
		printf("dansched %s\n", dansched_version());
		return 0;
	}
	if (strcmp(cmd, "eval") == 0)
		return cmd_eval(argc - 1, argv + 1);
	if (strcmp(cmd, "schedule") == 0)
		return cmd_schedule(argc - 1, argv + 1);
	if (strcmp(cmd, "convert") == 0)
		return cmd_convert(argc - 1, argv + 1);
	if (strcmp(cmd, "bench") == 0)
		return cmd_bench(argc - 1, argv + 1);
	if (strcmp(cmd, "trace") == 0)
		return cmd_view(argc - 1, argv + 1, false);
	if (strcmp(cmd, "memmap") == 0)
		return cmd_view(argc - 1, argv + 1, true);
	if (strcmp(cmd, "gen") == 0)
		return cmd_gen(argc - 1, argv + 1);
	if (strcmp(cmd, "tradeoff") == 0)
		return cmd_tradeoff(argc - 1, argv + 1);
	fprintf(stderr, "dansched: unknown command '%s'\n\n%s", cmd,
		usage_main);
	return 2;
}
