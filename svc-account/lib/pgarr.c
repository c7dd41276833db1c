/*
 * PostgreSQL array literals, so that a whole batch travels as a few bound
 * parameters (unnest($1::text[], ...)) instead of one statement per row;
 * or a text[] in the binary array format (array_recv), for large elements.
 */
#include "acct_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The binary array's head: ndim, has-nulls, element type, then the one
 * dimension's size and lower bound; each element is its length (-1:
 * NULL) and its bytes. All integers are 32-bit big-endian. */
#define BIN_HEAD 20
#define BIN_EMPTY 12 /* ndim 0: no dimension */
#define TEXT_OID 25

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

static void set32(char *at, int32_t v)
{
	uint32_t u = (uint32_t)v;

	at[0] = (char)(u >> 24);
	at[1] = (char)(u >> 16);
	at[2] = (char)(u >> 8);
	at[3] = (char)u;
}

static void put32(acct__pgarr *a, int32_t v)
{
	char b[4];

	set32(b, v);
	put(a, b, sizeof(b));
}

void acct__pgarr_init_bin(acct__pgarr *a)
{
	static const char head[BIN_HEAD];

	acct__pgarr_init(a);
	a->binary = 1;
	put(a, head, sizeof(head));
}

static void add_bin(acct__pgarr *a, const char *v, size_t n)
{
	if (n > INT32_MAX)
		a->oom = 1;
	a->n++;
	if (v == NULL)
		a->nulls = 1;
	put32(a, v != NULL ? (int32_t)n : -1);
	if (v != NULL)
		put(a, v, n);
}

static void separator(acct__pgarr *a)
{
	put(a, a->len == 0 ? "{" : ",", 1);
}

void acct__pgarr_add(acct__pgarr *a, const char *v)
{
	if (a->binary) {
		add_bin(a, v, v != NULL ? strlen(v) : 0);
		return;
	}
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

	if (a->binary) {
		add_bin(a, num, (size_t)n);
		return;
	}
	separator(a);
	put(a, num, (size_t)n);
}

static const char *done_bin(acct__pgarr *a)
{
	if (a->oom)
		return NULL;
	set32(a->s, a->n > 0);
	set32(a->s + 4, a->nulls);
	set32(a->s + 8, TEXT_OID);
	set32(a->s + 12, a->n);
	set32(a->s + 16, 1);
	if (a->n == 0)
		a->len = BIN_EMPTY;
	return a->s;
}

const char *acct__pgarr_done(acct__pgarr *a)
{
	if (a->binary)
		return done_bin(a);
	if (a->len == 0)
		put(a, "{", 1);
	if (a->oom)
		return NULL;
	a->s[a->len] = '}';
	a->s[a->len + 1] = '\0';
	return a->s;
}

int acct__pgarr_len(const acct__pgarr *a)
{
	return (int)a->len;
}

void acct__pgarr_free(acct__pgarr *a)
{
	free(a->s);
	acct__pgarr_init(a);
}
