/* load_file.c: plan a graph file with every scheduler and compare.
 *
 *   cc load_file.c $(pkg-config --cflags --libs dansched) -o load_file
 *   ./load_file data/Matmul_Case0.json
 */
#include <dansched.h>

#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: load_file GRAPH.json\n");
		return 2;
	}
	dansched_error err;
	dansched_graph *g;
	if (dansched_graph_load(NULL, argv[1], NULL, &g, &err)) {
		fprintf(stderr, "load_file: %s\n", err.message);
		return 2;
	}
	printf("%s: %d nodes, %d buffers\n", argv[1], dansched_graph_nodes(g),
	       dansched_graph_buffers(g));
	printf("%-11s %10s %10s %7s %10s\n", "scheduler", "peak_vstay",
	       "extra_ddr", "spills", "makespan");
	int status = 0;
	for (int s = 0; s < DANSCHED_NSCHEDULERS; s++) {
		dansched_options opt;
		dansched_options_default(&opt);
		opt.scheduler = s;
		dansched_plan *plan;
		dansched_figures f;
		if (dansched_schedule(g, &opt, &plan, &f, &err)) {
			fprintf(stderr, "load_file: %s\n", err.message);
			status = 1;
			continue;
		}
		printf("%-11s %10lld %10lld %7lld %10lld\n",
		       dansched_scheduler_name(s), (long long)f.peak_vstay,
		       (long long)f.extra_ddr, (long long)f.spills,
		       (long long)f.makespan);
		dansched_plan_destroy(plan);
	}
	dansched_graph_destroy(g);
	return status;
}
