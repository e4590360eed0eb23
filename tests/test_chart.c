/* test_chart.c: the trade-off chart (ds_chart.c) and the published points
 * it reads (ds_csv_points). */
#include "test_util.h"

static char *read_text(const char *path)
{
	char *s;
	size_t len;
	ds_err e;
	if (ds_read_file(ds_heap_std(), path, &s, &len, &e))
		fail_msg("%s", e.msg);
	return s;
}

static void points(void **state)
{
	(void)state;
	char *dir = make_tmpdir(), path[256];
	snprintf(path, sizeof path, "%s/pub.csv", dir);
	/* any column order and case, quoted cells, an empty figure (row
	 * skipped), other cases skipped */
	write_text(path, "Makespan,CASE,Source,Extra_DDR,note\n"
			 "100,G,\"a, b\",7,x\n"
			 "200,H,c,8,\n"
			 ",G,d,9,\n"
			 "300,G,e,10,\"q\"\"q\"\n");
	ds_points p;
	ds_err e;
	assert_int_equal(ds_csv_points(ds_heap_std(), path, "G", &p, &e),
			 DS_OK);
	assert_int_equal(p.n, 2);
	assert_string_equal(p.p[0].label, "a, b");
	assert_int_equal(p.p[0].extra_ddr, 7);
	assert_int_equal(p.p[0].makespan, 100);
	assert_string_equal(p.p[1].label, "e");
	assert_int_equal(p.p[1].makespan, 300);
	ds_points_free(ds_heap_std(), &p);
	/* every allocation may fail: reported, nothing leaks */
	ds_faulty st = {0};
	ds_heap fh = ds_heap_faulty(&st);
	for (long n = 1;; n++) {
		st.fail_at = n;
		st.calls = 0;
		int rc = ds_csv_points(&fh, path, "G", &p, &e);
		if (rc == DS_OK) {
			ds_points_free(&fh, &p);
			assert_int_equal(st.live, 0);
			break;
		}
		assert_int_equal(st.live, 0);
		assert_int_equal(rc, DS_ENOMEM);
		assert_true(n < 50);
	}
	/* a missing column, a bad figure in another case's row */
	write_text(path, "case,source,makespan\nG,a,1\n");
	assert_int_equal(ds_csv_points(ds_heap_std(), path, "G", &p, &e),
			 DS_EINPUT);
	assert_contains(e.msg, "extra_ddr");
	write_text(path, "case,source,extra_ddr,makespan\nH,a,-3,1\n");
	assert_int_equal(ds_csv_points(ds_heap_std(), path, "G", &p, &e),
			 DS_EINPUT);
	assert_contains(e.msg, "pub.csv:2");
	rm_tree(dir);
}

/* Degenerate charts still give a whole SVG with finite coordinates. */
static void degenerate(void **state)
{
	(void)state;
	char *dir = make_tmpdir(), path[256];
	snprintf(path, sizeof path, "%s/c.svg", dir);
	int64_t zero[1] = {0};
	int64_t x[3] = {10, 100, 100000}, y[3] = {5, 50, 500000};
	ds_series s[2] = {{"<ours>", zero, zero, 1, DS_SERIES_CURVE},
			  {"theirs", x, y, 3, DS_SERIES_PUBLISHED}};
	ds_err e;
	for (int ns = 0; ns <= 2; ns++)
		for (int64_t lb = 0; lb <= 7; lb += 7) {
			assert_int_equal(ds_chart_tradeoff(ds_heap_std(), path,
							   "T&C", s, ns, lb,
							   &e),
					 DS_OK);
			char *t = read_text(path);
			assert_non_null(strstr(t, "</svg>\n"));
			assert_null(strstr(t, "nan"));
			assert_null(strstr(t, "inf"));
			assert_non_null(strstr(t, "T&amp;C"));
			if (ns > 0)
				assert_non_null(strstr(t, "&lt;ours&gt;"));
			/* a zero keeps the axes linear */
			assert_null(strstr(t, "log scale"));
			free(t);
		}
	/* figures spanning 10^5: log axes */
	assert_int_equal(ds_chart_tradeoff(ds_heap_std(), path, "T", s + 1, 1,
					   0, &e),
			 DS_OK);
	char *t = read_text(path);
	assert_non_null(strstr(t, "(bytes, log scale)"));
	assert_non_null(strstr(t, "(cycles, log scale)"));
	free(t);
	rm_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(points),
		cmocka_unit_test(degenerate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
