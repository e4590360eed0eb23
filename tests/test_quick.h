/* test_quick.h: whether the tests run quick (CI's sanitizer pass).
 *
 * The sanitizer pass of CI sets DS_TEST_QUICK=1: the slow tests then do a
 * part of their work (the first pass did all of it).  Its own header so
 * that test_api.c, which sees the library through dansched.h only, reads
 * the variable the same way as the tests that include test_util.h. */
#ifndef TEST_QUICK_H
#define TEST_QUICK_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static inline bool test_quick(void)
{
	const char *q = getenv("DS_TEST_QUICK");
	return q && *q && strcmp(q, "0") != 0;
}

#endif
