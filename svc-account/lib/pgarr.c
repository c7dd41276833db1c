/*
 * PostgreSQL array literals, so that a whole batch travels as a few bound
 * parameters (unnest($1::text[], ...)) instead of one statement per row.
 */
#include "acct_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void acct__pgarr_init(acct__pgarr *a)
{
	memset(a, 0, sizeof(*a));
}

static void put(acct__pgarr *a, const char *s, size_t n)
{
	if (a->oom)
		return;
	/* Room for the bytes, a closing brace and the NUL. */
	if (a->len + n + 2 > a->cap) {
		size_t cap = a->cap != 0 ? a->cap : 256;
		char *p;

		while (a->len + n + 2 > cap)
			cap *= 2;
		p = realloc(a->s, cap);
		if (p == NULL) {
			a->oom = 1;
			return;
		}
		a->s = p;
		a->cap = cap;
	}
	memcpy(a->s + a->len, s, n);
	a->len += n;
}

static void separator(acct__pgarr *a)
{
	put(a, a->len == 0 ? "{" : ",", 1);
}

void acct__pgarr_add(acct__pgarr *a, const char *v)
{
	separator(a);
	if (v == NULL) {
		put(a, "NULL", 4);
		return;
	}
	/* Quoted, so that commas, braces, spaces and the word NULL stay
	 * data; inside quotes only '"' and '\' need a backslash. */
	put(a, "\"", 1);
	for (const char *p = v; *p != '\0';) {
		size_t run = strcspn(p, "\"\\");

		put(a, p, run);
		p += run;
		if (*p != '\0') {
			put(a, "\\", 1);
			put(a, p++, 1);
		}
	}
	put(a, "\"", 1);
}

void acct__pgarr_addi(acct__pgarr *a, int64_t v)
{
	char num[24];
	int n = snprintf(num, sizeof(num), "%" PRId64, v);

	separator(a);
	put(a, num, (size_t)n);
}

const char *acct__pgarr_done(acct__pgarr *a)
{
	if (a->len == 0)
		put(a, "{", 1);
	if (a->oom)
		return NULL;
	a->s[a->len] = '}';
	a->s[a->len + 1] = '\0';
	return a->s;
}

void acct__pgarr_free(acct__pgarr *a)
{
	free(a->s);
	acct__pgarr_init(a);
}
