/* test_arena.c: the scratch arena of ds_util.c (ds.h), and its sort of
 * (hash, index) keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ds.h"

/* Blocks are zeroed, aligned, independent, and all released at once. */
static void alloc_and_free_all(void **state)
{
	(void)state;
	ds_faulty f = {0};
	ds_heap h = ds_heap_faulty(&f);
	ds_arena a;
	ds_arena_init(&a, &h);
	int64_t *x = ds_arena_alloc(&a, 100, sizeof *x);
	char *c = ds_arena_alloc(&a, 3, 1);
	double *d = ds_arena_alloc(&a, 7, sizeof *d);
	assert_non_null(x);
	assert_non_null(c);
	assert_non_null(d);
	assert_false(a.failed);
	assert_int_equal((uintptr_t)d % _Alignof(max_align_t), 0);
	for (int i = 0; i < 100; i++)
		assert_int_equal(x[i], 0);
	memset(c, 'x', 3);
	x[99] = 42;
	assert_int_equal(f.live, 3);
	ds_arena_free(&a);
	assert_int_equal(f.live, 0);
	assert_null(a.head);
}

/* Growing keeps the contents and the links; releasing one block early
 * leaves the others to ds_arena_free. */
static void grow_and_release(void **state)
{
	(void)state;
	ds_faulty f = {0};
	ds_heap h = ds_heap_faulty(&f);
	ds_arena a;
	ds_arena_init(&a, &h);
	int32_t *first = ds_arena_alloc(&a, 4, sizeof *first);
	int32_t *mid = ds_arena_alloc(&a, 4, sizeof *mid);
	int32_t *last = ds_arena_alloc(&a, 4, sizeof *last);
	for (int i = 0; i < 4; i++)
		mid[i] = i + 1;
	mid = ds_arena_grow(&a, mid, 100000, sizeof *mid);
	assert_non_null(mid);
	for (int i = 0; i < 4; i++)
		assert_int_equal(mid[i], i + 1);
	ds_arena_release(&a, first);
	ds_arena_release(&a, last);
	assert_int_equal(f.live, 1);
	ds_arena_release(&a, NULL);
	ds_arena_free(&a);
	assert_int_equal(f.live, 0);
}

/* A failure is sticky: later requests fail too, without calling the
 * heap, and everything taken before is still released in one call. */
static void failure_is_sticky(void **state)
{
	(void)state;
	ds_faulty f = {.fail_at = 2};
	ds_heap h = ds_heap_faulty(&f);
	ds_arena a;
	ds_arena_init(&a, &h);
	void *p = ds_arena_alloc(&a, 8, 8);
	assert_non_null(p);
	assert_null(ds_arena_alloc(&a, 8, 8));
	assert_true(a.failed);
	long calls = f.calls;
	assert_null(ds_arena_alloc(&a, 1, 1));
	assert_null(ds_arena_grow(&a, p, 16, 8));
	assert_int_equal(f.calls, calls);
	ds_arena_free(&a);
	assert_int_equal(f.live, 0);
	assert_false(a.failed);
}

/* A size whose product overflows is refused, not wrapped. */
static void overflow_refused(void **state)
{
	(void)state;
	ds_arena a;
	ds_arena_init(&a, ds_heap_std());
	assert_null(ds_arena_alloc(&a, SIZE_MAX / 2, 4));
	assert_true(a.failed);
	ds_arena_free(&a);
}

/* ds_arena_reserve: capacity at least the need, doubling from 16, the
 * contents kept; a failing heap leaves the array as it was. */
static void reserve_doubles(void **state)
{
	(void)state;
	ds_faulty f = {0};
	ds_heap h = ds_heap_faulty(&f);
	ds_arena a;
	ds_arena_init(&a, &h);
	int32_t *v = NULL;
	int64_t cap = 0;
	assert_true(ds_arena_reserve(&a, (void **)&v, &cap, 1, sizeof *v));
	assert_int_equal(cap, 16);
	for (int32_t i = 0; i < 16; i++)
		v[i] = i;
	assert_true(ds_arena_reserve(&a, (void **)&v, &cap, 16, sizeof *v));
	assert_int_equal(cap, 16);
	assert_true(ds_arena_reserve(&a, (void **)&v, &cap, 40, sizeof *v));
	assert_int_equal(cap, 64);
	for (int32_t i = 0; i < 16; i++)
		assert_int_equal(v[i], i);
	int32_t *was = v;
	f.fail_at = f.calls + 1;
	assert_false(ds_arena_reserve(&a, (void **)&v, &cap, 65, sizeof *v));
	assert_true(a.failed);
	assert_ptr_equal(v, was);
	assert_int_equal(cap, 64);
	ds_arena_free(&a);
	assert_int_equal(f.live, 0);
}

/* ds_hkey_sort gives qsort's array (ds_hkey_cmp) on keys with repeated
 * hashes, negative and repeated indices, hashes differing only in their
 * high bytes, below and above the radix sort's threshold; and the same
 * when its scratch cannot be had (qsort then), leaking nothing. */
static void hkey_sort_is_qsort(void **state)
{
	(void)state;
	static const size_t sizes[] = {0, 1, 2, 63, 64, 65, 1000, 5000};
	uint64_t r = 88172645463325252u; /* xorshift64 */
	for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
		for (long fail = 0; fail < 2; fail++) {
			size_t n = sizes[s];
			ds_hkey *a = calloc(n + 1, sizeof *a);
			ds_hkey *b = calloc(n + 1, sizeof *b);
			assert_non_null(a);
			assert_non_null(b);
			for (size_t i = 0; i < n; i++) {
				r ^= r << 13, r ^= r >> 7, r ^= r << 17;
				a[i].h = (r % 5) << (8 * (r % 8));
				a[i].x = (int32_t)(r >> 40) % 50 - 25;
			}
			memcpy(b, a, n * sizeof *a);
			qsort(b, n, sizeof *b, ds_hkey_cmp);
			ds_faulty f = {.fail_at = fail};
			ds_heap h = ds_heap_faulty(&f);
			ds_hkey_sort(&h, a, n);
			assert_memory_equal(a, b, n * sizeof *a);
			assert_int_equal(f.live, 0);
			free(a);
			free(b);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(alloc_and_free_all),
		cmocka_unit_test(grow_and_release),
		cmocka_unit_test(failure_is_sticky),
		cmocka_unit_test(overflow_refused),
		cmocka_unit_test(reserve_doubles),
		cmocka_unit_test(hkey_sort_is_qsort),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
