/* main.c: the dansched command line, a thin layer over the library.
 *
 *   dansched eval GRAPH SCHEDULE [MEMORY [SPILL]]   check a plan, print figures
 *   dansched schedule [GRAPH...] -o DIR              plan each graph, write files
 *   dansched convert IN OUT                          JSON <-> CSV
 *
 * Exit status: 0 ok, 1 invalid plan, 2 bad input or usage. */
#include "ds.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#ifndef DS_DATA_DIR
#define DS_DATA_DIR "data"
#endif

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
	"  convert IN OUT               convert a graph between JSON and CSV\n"
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
	"                     [--cap SPEC]\n"
	"\n"
	"Replays the plan on the machine model of SPEC.md, checks every rule\n"
	"and prints peak_vstay, extra_ddr, spills, makespan, the lower bounds\n"
	"lb_critical_path and lb_pipe_load, and the peak occupancy of each\n"
	"memory.  Without MEMORY only the order is checked and the makespan\n"
	"has no address-reuse edges.\n"
	"\n"
	"  --q1     also require at most one live buffer in each of L0A, L0B,\n"
	"           L0C (the rule of the peak-memory problem)\n"
	"  --json   print one JSON object\n"
	"\n"
	"Exit status: 0 valid, 1 a rule is broken (the line says which), 2 bad\n"
	"input.\n";

static const char usage_schedule[] =
	"usage: dansched schedule [GRAPH...] -o DIR [--stage STAGE] [--json]\n"
	"                         [--cap SPEC]\n"
	"\n"
	"Plans each graph (default: every *.json in the bundled data folder),\n"
	"checks the plan with the evaluator and writes DIR/<case>_schedule.txt\n"
	"(and _memory.txt, _spill.txt when the stage places buffers).  Prints\n"
	"one row of figures per graph, or with --json one object per line.\n"
	"\n"
	"  -o DIR          output folder (created when missing)\n"
	"  --stage STAGE   id: the node-Id order, no memory plan (default)\n"
	"\n"
	"Nothing is written unless every graph loads and plans.\n";

static const char usage_convert[] =
	"usage: dansched convert IN OUT [--cap SPEC]\n"
	"\n"
	"Converts a graph between JSON (SPEC.md) and CSV.  A CSV graph is two\n"
	"tables: NAME_nodes.csv (columns Id,Op,BufId,Size,Type,Pipe,Cycles,Bufs)\n"
	"and NAME_edges.csv (columns Src,Dst) beside it; name the nodes table.\n"
	"The graph is validated on the way.\n";

static int exit_code(int rc) { return rc == DS_EPLAN ? 1 : rc ? 2 : 0; }

static int report(const ds_err *e)
{
	fprintf(stderr, "dansched: %s\n", e->msg);
	return exit_code(e->code);
}

static int usage_error(const char *usage, const char *fmt, const char *arg)
{
	fprintf(stderr, "dansched: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n\n%s", usage);
	return 2;
}

/* Options shared by the commands; positional arguments collected in order. */
typedef struct args {
	const char *pos[64];
	int npos;
	const char *out_dir;
	const char *stage;
	bool q1, json, help;
	ds_caps caps;
} args;

static int parse_args(int argc, char **argv, const char *usage, args *a)
{
	memset(a, 0, sizeof *a);
	ds_caps_default(&a->caps);
	a->stage = "id";
	for (int i = 0; i < argc; i++) {
		const char *s = argv[i];
		const char *val = NULL;
		if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0) {
			a->help = true;
		} else if (strcmp(s, "--q1") == 0) {
			a->q1 = true;
		} else if (strcmp(s, "--json") == 0) {
			a->json = true;
		} else if (strcmp(s, "-o") == 0 || strcmp(s, "--stage") == 0 ||
			   strcmp(s, "--cap") == 0) {
			if (i + 1 >= argc)
				return usage_error(usage, "%s needs a value",
						   s);
			val = argv[++i];
			if (s[1] == 'o')
				a->out_dir = val;
			else if (s[2] == 's')
				a->stage = val;
			else {
				ds_err e;
				if (ds_caps_parse(&a->caps, val, &e))
					return report(&e);
			}
		} else if (strncmp(s, "--cap=", 6) == 0) {
			ds_err e;
			if (ds_caps_parse(&a->caps, s + 6, &e))
				return report(&e);
		} else if (s[0] == '-' && s[1]) {
			return usage_error(usage, "unknown option '%s'", s);
		} else {
			if (a->npos == 64)
				return usage_error(usage, "too many arguments%s",
						   "");
			a->pos[a->npos++] = s;
		}
	}
	return 0;
}

/* ---- printing figures ---- */

static cJSON *figures_json(const char *case_name, const ds_figures *f)
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
	for (int m = 0; m < DS_NMEM; m++) {
		char key[16];
		snprintf(key, sizeof key, "peak_%s", ds_mem_names[m]);
		cJSON_AddNumberToObject(o, key, (double)f->peak_mem[m]);
	}
	return o;
}

static int print_json(cJSON *o)
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

static int64_t lower_bound(const ds_figures *f)
{
	return f->lb_critical_path > f->lb_pipe_load ? f->lb_critical_path
						     : f->lb_pipe_load;
}

/* ---- eval ---- */

static int cmd_eval(int argc, char **argv)
{
	args a;
	int rc = parse_args(argc, argv, usage_eval, &a);
	if (rc)
		return rc;
	if (a.help) {
		fputs(usage_eval, stdout);
		return 0;
	}
	if (a.npos < 2 || a.npos > 4)
		return usage_error(usage_eval,
				   "eval needs GRAPH SCHEDULE [MEMORY [SPILL]]%s",
				   "");
	const ds_heap *h = ds_heap_std();
	ds_err e;
	ds_graph *g;
	if ((rc = ds_load_graph(h, a.pos[0], &a.caps, &g, &e)))
		return report(&e);
	ds_plan p;
	rc = ds_plan_read(g, a.pos[1], a.npos > 2 ? a.pos[2] : NULL,
			  a.npos > 3 ? a.pos[3] : NULL, &p, &e);
	if (rc) {
		ds_graph_free(g);
		return report(&e);
	}
	ds_figures f;
	ds_replay_opts o = {.q1 = a.q1};
	rc = ds_replay(g, &p, &o, &f, &e);
	ds_plan_free(h, &p);
	ds_graph_free(g);
	if (rc) {
		if (a.json && rc == DS_EPLAN) {
			cJSON *x = cJSON_CreateObject();
			cJSON_AddNumberToObject(x, "valid", 0);
			cJSON_AddStringToObject(x, "error", e.msg);
			print_json(x);
		}
		return report(&e);
	}
	if (a.json)
		return print_json(figures_json(NULL, &f));
	printf("valid=1 nodes=%lld peak_vstay=%lld extra_ddr=%lld spills=%lld "
	       "makespan=%lld lb_critical_path=%lld lb_pipe_load=%lld",
	       (long long)f.nodes, (long long)f.peak_vstay,
	       (long long)f.extra_ddr, (long long)f.spills,
	       (long long)f.makespan, (long long)f.lb_critical_path,
	       (long long)f.lb_pipe_load);
	for (int m = 0; m < DS_NMEM; m++)
		printf(" peak_%s=%lld", ds_mem_names[m],
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
	int rc = parse_args(argc, argv, usage_convert, &a);
	if (rc)
		return rc;
	if (a.help) {
		fputs(usage_convert, stdout);
		return 0;
	}
	if (a.npos != 2)
		return usage_error(usage_convert, "convert needs IN OUT%s", "");
	const ds_heap *h = ds_heap_std();
	ds_err e;
	ds_graph *g;
	if ((rc = ds_load_graph(h, a.pos[0], &a.caps, &g, &e)))
		return report(&e);
	if (ends_with(a.pos[1], ".csv"))
		rc = ds_write_csv(g, a.pos[1], &e);
	else
		rc = ds_write_json(g, a.pos[1], &e);
	ds_graph_free(g);
	return rc ? report(&e) : 0;
}

/* ---- schedule ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.json in the bundled data folder, sorted by name. */
static int bundled_graphs(char ***out, int *count)
{
	DIR *d = opendir(DS_DATA_DIR);
	if (!d) {
		fprintf(stderr, "dansched: %s: cannot open the bundled data "
				"folder: %s\n",
			DS_DATA_DIR, strerror(errno));
		return 2;
	}
	char **list = NULL;
	int n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!ends_with(de->d_name, ".json"))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			char **nl = realloc(list, (size_t)cap * sizeof *nl);
			if (!nl)
				break;
			list = nl;
		}
		size_t l = strlen(DS_DATA_DIR) + strlen(de->d_name) + 2;
		list[n] = malloc(l);
		if (!list[n])
			break;
		snprintf(list[n++], l, "%s/%s", DS_DATA_DIR, de->d_name);
	}
	closedir(d);
	qsort(list, (size_t)n, sizeof *list, cmp_str);
	*out = list;
	*count = n;
	if (n == 0) {
		fprintf(stderr, "dansched: %s: no *.json graphs\n",
			DS_DATA_DIR);
		return 2;
	}
	return 0;
}

static int make_dir(const char *path)
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

/* Id order, no memory plan: the reference every stage is measured from. */
static int plan_id_order(const ds_graph *g, ds_plan *p, ds_err *e)
{
	memset(p, 0, sizeof *p);
	p->order = ds_alloc(g->heap, (size_t)g->n, sizeof *p->order);
	if (!p->order)
		return ds_fail(e, DS_ENOMEM, "out of memory");
	for (int32_t v = 0; v < g->n; v++)
		p->order[v] = v;
	p->len = g->n;
	return DS_OK;
}

typedef struct job {
	const char *path;
	char *case_name;
	ds_graph *g;
	ds_plan plan;
	ds_figures fig;
	double seconds;
} job;

static int cmd_schedule(int argc, char **argv)
{
	args a;
	int rc = parse_args(argc, argv, usage_schedule, &a);
	if (rc)
		return rc;
	if (a.help) {
		fputs(usage_schedule, stdout);
		return 0;
	}
	if (!a.out_dir)
		return usage_error(usage_schedule, "schedule needs -o DIR%s",
				   "");
	if (strcmp(a.stage, "id") != 0)
		return usage_error(usage_schedule, "unknown stage '%s'",
				   a.stage);
	char **bundled = NULL;
	int nb = 0;
	const char **paths = a.pos;
	int np = a.npos;
	if (np == 0) {
		if ((rc = bundled_graphs(&bundled, &nb)))
			goto free_bundled;
		paths = (const char **)bundled;
		np = nb;
	}
	const ds_heap *h = ds_heap_std();
	job *jobs = calloc((size_t)np, sizeof *jobs);
	if (!jobs) {
		rc = 2;
		goto free_bundled;
	}
	ds_err e;
	/* load, plan and check everything before writing anything */
	for (int i = 0; i < np && rc == 0; i++) {
		job *j = &jobs[i];
		j->path = paths[i];
		clock_t t0 = clock();
		int r = ds_load_graph(h, j->path, &a.caps, &j->g, &e);
		if (r == DS_OK)
			r = plan_id_order(j->g, &j->plan, &e);
		if (r == DS_OK) {
			ds_replay_opts o = {.q1 = false};
			r = ds_replay(j->g, &j->plan, &o, &j->fig, &e);
		}
		j->seconds = (double)(clock() - t0) / CLOCKS_PER_SEC;
		if (r == DS_OK) {
			j->case_name = ds_case_name(h, j->path);
			if (!j->case_name)
				r = ds_fail(&e, DS_ENOMEM, "out of memory");
		}
		if (r)
			rc = report(&e);
	}
	if (rc == 0)
		rc = make_dir(a.out_dir);
	for (int i = 0; i < np && rc == 0; i++)
		if (ds_plan_write(jobs[i].g, &jobs[i].plan, a.out_dir,
				  jobs[i].case_name, &e))
			rc = report(&e);
	if (rc == 0 && !a.json)
		printf("%-22s %9s %10s %10s %7s %10s %10s %6s %8s\n", "case",
		       "nodes", "peak_vstay", "extra_ddr", "spills", "makespan",
		       "lower_bnd", "ratio", "seconds");
	for (int i = 0; i < np && rc == 0; i++) {
		job *j = &jobs[i];
		if (a.json) {
			print_json(figures_json(j->case_name, &j->fig));
			continue;
		}
		int64_t lb = lower_bound(&j->fig);
		printf("%-22s %9lld %10lld %10lld %7lld %10lld %10lld %6.3f "
		       "%8.3f\n",
		       j->case_name, (long long)j->fig.nodes,
		       (long long)j->fig.peak_vstay,
		       (long long)j->fig.extra_ddr, (long long)j->fig.spills,
		       (long long)j->fig.makespan, (long long)lb,
		       lb ? (double)j->fig.makespan / (double)lb : 0.0,
		       j->seconds);
	}
	for (int i = 0; i < np; i++) {
		ds_free(h, jobs[i].case_name);
		ds_plan_free(h, &jobs[i].plan);
		ds_graph_free(jobs[i].g);
	}
	free(jobs);
free_bundled:
	for (int i = 0; i < nb; i++)
		free(bundled[i]);
	free(bundled);
	return rc;
}

int main(int argc, char **argv)
{
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
		printf("dansched %s\n", DS_VERSION);
		return 0;
	}
	if (strcmp(cmd, "eval") == 0)
		return cmd_eval(argc - 2, argv + 2);
	if (strcmp(cmd, "schedule") == 0)
		return cmd_schedule(argc - 2, argv + 2);
	if (strcmp(cmd, "convert") == 0)
		return cmd_convert(argc - 2, argv + 2);
	fprintf(stderr, "dansched: unknown command '%s'\n\n%s", cmd,
		usage_main);
	return 2;
}
