/* cli.h: what the command-line's files share (src/main.c: options,
 * printing, schedule and the small commands; src/cli_bench.c: bench and
 * tradeoff).  The CLI uses nothing but the public API, dansched.h. */
#ifndef CLI_H
#define CLI_H

#include "dansched.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#ifndef DS_DATA_DIR
#define DS_DATA_DIR "data"
#endif
/* The points other solutions reached: the benchmark's shared folder sits
 * beside the project's (../shared from its root). */
#define DS_PUBLISHED DS_DATA_DIR "/../../shared/published.csv"

/* bench --scale --repeat: at most this many runs of each size. */
#define CLI_REPEAT_MAX 100

/* Options shared by the commands; positional arguments collected in order. */
typedef struct args {
	const char *pos[256];
	int npos;
	const char *out;
	const char *stage, *scheduler, *kind, *published;
	int64_t effort, nodes, seed, repeat;
	double traffic_budget, peak_budget;
	bool q1, json, csv, help, trace, memmap, verbose, quiet, scale;
	bool any_spill_order;
	uint64_t given; /* the long-only options given, a bit each (main.c) */
	dansched_caps caps;
} args;

/* The bounds that hold for every plan of a graph (dansched_any_bound). */
typedef struct bounds {
	int64_t phase, any;
	int exact;	/* 0: sampled, the graph is over the work budget */
	double seconds; /* CPU time to compute them */
} bounds;

typedef struct job {
	const char *path;
	char case_name[256];
	dansched_graph *g;
	dansched_plan *plan;
	dansched_figures fig;
	int64_t order_peak; /* peak_vstay of the MPAS order (dan only) */
	bounds lb;	    /* dansched_any_bound (schedule only) */
	double seconds;
} job;

/* The bundled graphs (every .json of the data folder), sorted; free
 * them with cli_free_list. */
int cli_bundled_graphs(char ***out, int *count);
/* The graphs a command works on: its operands, or else the bundled graphs
 * (*bundled then holds them, for cli_free_list; NULL otherwise). 0 or
 * cli_bundled_graphs' exit status. */
int cli_graph_paths(args *a, char ***bundled, const char ***paths,
		    int *np);
/* The first in `names` (long options, space-separated, without their
 * dashes) of those that were given, NULL when none was.  Only the options
 * that have no one-letter form (-h, -o, -v) are kept. */
const char *cli_given_of(const args *a, const char *names);
/* Parses a command's options with getopt_long (see main.c); 0 to go on,
 * -1 when --help was answered, or the exit status of a usage error. */
int cli_command_args(int argc, char **argv, const char *usage,
			const char *shorts, const char *longs, args *a);
/* Destroys each job's plan and graph. */
void cli_free_jobs(job *jobs, int n);
void cli_free_list(char **list, int n);
/* mkdir -p path; the exit status (0 or 2, with a message). */
int cli_make_dir(const char *path);
/* Prints o on one line and deletes it; 0, or 2 when out of memory. */
int cli_print_json(cJSON *o);
/* Prints e and returns the exit status of its status. */
int cli_report(const dansched_error *e);
/* Loads path and plans it with o into j (its case name, graph, plan,
 * figures, time). */
int cli_run_job(const char *path, const args *a, const dansched_options *o,
		   job *j, dansched_error *e);
/* "dansched: " and the printf-style message, then the command's synopsis
 * (usage up to its first blank line) and where its help is; exit status
 * 2. */
int cli_usage_error(const char *usage, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

/* The commands of cli_bench.c (argv[0]: the command's name). */
int cmd_bench(int argc, char **argv);
int cmd_tradeoff(int argc, char **argv);

#endif
