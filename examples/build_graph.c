/* build_graph.c: build a small graph in memory, plan it, print the figures.
 *
 *   cc build_graph.c $(pkg-config --cflags --libs dansched) -o build_graph
 *
 * The graph: load a tile into L1, move it to L0A, multiply into L0C, copy
 * the result out.  Each buffer has an ALLOC before its first user and a
 * FREE after its last. */
#include <dansched.h>

#include <stdio.h>

#define TRY(call)                                                        \
	do {                                                             \
		if ((call) != DANSCHED_OK) {                             \
			fprintf(stderr, "build_graph: %s\n", err.message); \
			return 1;                                        \
		}                                                        \
	} while (0)

int main(void)
{
	dansched_error err = {0, ""};
	dansched_builder *b = dansched_builder_new(NULL, "example");
	if (!b)
		return 1;
	/* buffers: 0 = L1 tile, 1 = L0A tile, 2 = L0C accumulator */
	const int64_t l1[] = {0}, mv[] = {1, 0}, mm[] = {2, 1}, out[] = {2};
	TRY(dansched_builder_add_buffer(b, 0, 0, 0, 128, "L1", &err));
	TRY(dansched_builder_add_buffer(b, 1, 0, 1, 128, "L0A", &err));
	TRY(dansched_builder_add_buffer(b, 2, 0, 2, 256, "L0C", &err));
	TRY(dansched_builder_add_op(b, 3, "COPY_IN", "MTE2", 325, l1, 1, &err));
	TRY(dansched_builder_add_op(b, 4, "MOVE", "MTE1", 31, mv, 2, &err));
	TRY(dansched_builder_add_op(b, 5, "MATMUL", "CUBE", 128, mm, 2, &err));
	TRY(dansched_builder_add_op(b, 6, "COPY_OUT", "FIXP", 60, out, 1, &err));
	TRY(dansched_builder_add_buffer(b, 7, 1, 0, 128, "L1", &err));
	TRY(dansched_builder_add_buffer(b, 8, 1, 1, 128, "L0A", &err));
	TRY(dansched_builder_add_buffer(b, 9, 1, 2, 256, "L0C", &err));
	const int64_t edges[][2] = {{0, 3}, {3, 4}, {1, 4}, {4, 5}, {2, 5},
				    {5, 6}, {4, 7}, {5, 8}, {6, 9}};
	for (size_t k = 0; k < sizeof edges / sizeof edges[0]; k++)
		TRY(dansched_builder_add_edge(b, edges[k][0], edges[k][1],
					      &err));
	dansched_graph *g;
	TRY(dansched_builder_finish(b, NULL, &g, &err));
	dansched_builder_destroy(b);

	dansched_options opt;
	dansched_options_default(&opt);
	dansched_plan *plan;
	dansched_figures fig;
	TRY(dansched_schedule(g, &opt, &plan, &fig, &err));
	printf("dansched %s: %d nodes planned\n", dansched_version(),
	       dansched_plan_length(plan));
	printf("peak_vstay=%lld extra_ddr=%lld spills=%lld makespan=%lld "
	       "(lower bound %lld)\n",
	       (long long)fig.peak_vstay, (long long)fig.extra_ddr,
	       (long long)fig.spills, (long long)fig.makespan,
	       (long long)(fig.lb_critical_path > fig.lb_pipe_load
				   ? fig.lb_critical_path
				   : fig.lb_pipe_load));
	printf("order:");
	for (int32_t i = 0; i < dansched_plan_length(plan); i++)
		printf(" %d", dansched_plan_order(plan)[i]);
	printf("\n");
	dansched_plan_destroy(plan);
	dansched_graph_destroy(g);
	return 0;
}
