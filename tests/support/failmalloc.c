/*
 * failmalloc.c: the counting allocator behind the linker's --wrap (see
 * failmalloc.h).
 */
#include "failmalloc.h"

#include <execinfo.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

void *__real_malloc(size_t size);
void *__real_calloc(size_t nmemb, size_t size);
void *__real_realloc(void *ptr, size_t size);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);

void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t nmemb, size_t size);
void *__wrap_realloc(void *ptr, size_t size);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static atomic_long n_allocs; /* since the run began */
static atomic_long fail_at;  /* the allocation to fail; 0: none */
static atomic_int failed;    /* fail_at was reached */
static atomic_int settled;   /* ... after failmalloc_settle() */
static atomic_int lenient;   /* ... in a lenient allocation */
static void *stack[32];      /* where it was reached */
static int stack_depth;

/* 1 when this allocation is the one to fail. */
static int fail_now(void)
{
	long n = atomic_fetch_add(&n_allocs, 1) + 1;

	if (n != atomic_load(&fail_at))
		return 0;
	stack_depth = backtrace(stack, 32);
	atomic_store(&failed, 1);
	return 1;
}

void *__wrap_malloc(size_t size)
{
	return fail_now() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t nmemb, size_t size)
{
	return fail_now() ? NULL : __real_calloc(nmemb, size);
}

void *__wrap_realloc(void *ptr, size_t size)
{
	return fail_now() ? NULL : __real_realloc(ptr, size);
}

char *__wrap_strdup(const char *s)
{
	return fail_now() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	return fail_now() ? NULL : __real_strndup(s, n);
}

void *failmalloc_lenient_malloc(size_t size)
{
	if (!fail_now())
		return __real_malloc(size);
	atomic_store(&lenient, 1);
	return NULL;
}

void *failmalloc_lenient_realloc(void *ptr, size_t size)
{
	if (!fail_now())
		return __real_realloc(ptr, size);
	atomic_store(&lenient, 1);
	return NULL;
}

void failmalloc_init(void)
{
	/* backtrace() loads libgcc on its first call: not in a run */
	stack_depth = backtrace(stack, 32);
}

void failmalloc_settle(void)
{
	if (!atomic_load(&failed))
		atomic_store(&settled, 1);
}

/* Says what went wrong in run `n`, and, the first time in a loop, where
 * allocation n was made. */
static void report(const char *what, long n, long made, int rc, int first)
{
	fprintf(stderr, "\n  %s: allocation %ld of %ld failed, yet %d%s\n",
		what, n, made, rc, first ? "; at" : "");
	if (first)
		backtrace_symbols_fd(stack, stack_depth, 2);
}

long failmalloc_loop(const char *what, int (*run)(void *ud), void *ud,
		     long max_runs)
{
	int reported = 0;

	for (long n = 1; n <= max_runs; n++) {
		long made;
		int rc;

		atomic_store(&n_allocs, 0);
		atomic_store(&failed, 0);
		atomic_store(&settled, 0);
		atomic_store(&lenient, 0);
		atomic_store(&fail_at, n);
		rc = run(ud);
		atomic_store(&fail_at, 0);
		made = atomic_load(&n_allocs);
		if (!atomic_load(&failed)) {
			if (rc != 0)
				fprintf(stderr, "\n  %s: %d without a failed allocation\n",
					what, rc);
			CU_ASSERT_EQUAL(rc, 0);
			return made;
		}
		if (atomic_load(&settled) || atomic_load(&lenient))
			continue;
		if (rc >= 0)
			report(what, n, made, rc, !reported++);
		CU_ASSERT(rc < 0);
	}
	fprintf(stderr, "\n  %s: still failing after %ld runs\n", what, max_runs);
	CU_FAIL("failmalloc_loop: max_runs reached");
	return -1;
}
