/*
 * A workspace's ended leased calls as columns (lease_queue.h). Each call
 * appends its domain, then any name of its own, to one text buffer, so
 * the calls after a dropped front start at the first one's domain.
 */
#include "lease_queue.h"

#include <stdlib.h>
#include <string.h>

#include "seo/errors.h"

#define FIRST_CAP 64

/* Every column but the text, with its entry's size: the walks that
 * treat them alike (grow, drop, free) read this one list. */
#define N_COLS (5 + 2 * GW_LQ_NAMES)

typedef struct col {
	void **p;
	size_t size;
} col;

static void columns(gw_lq *q, col c[N_COLS])
{
	size_t n = 0;

	c[n++] = (col){(void **)&q->request_no, sizeof(*q->request_no)};
	c[n++] = (col){(void **)&q->charged, sizeof(*q->charged)};
	c[n++] = (col){(void **)&q->used, sizeof(*q->used)};
	c[n++] = (col){(void **)&q->created_at, sizeof(*q->created_at)};
	c[n++] = (col){(void **)&q->domain, sizeof(*q->domain)};
	for (int j = 0; j < GW_LQ_NAMES; j++) {
		c[n++] = (col){(void **)&q->name[j], sizeof(*q->name[j])};
		c[n++] = (col){(void **)&q->own[j], sizeof(*q->own[j])};
	}
}

/* Every column at `cap` entries at least; 0 or SEO_ENOMEM (the columns
 * grown so far stay grown, the queue as it was). */
static int grow(gw_lq *q, size_t cap)
{
	col c[N_COLS];

	columns(q, c);
	for (size_t i = 0; i < N_COLS; i++) {
		void *p = realloc(*c[i].p, cap * c[i].size);

		if (p == NULL)
			return SEO_ENOMEM;
		*c[i].p = p;
	}
	q->cap = cap;
	return 0;
}

/* Appends `s` with its NUL to the text (push() made room); its offset. */
static uint32_t put(gw_lq *q, const char *s, size_t n)
{
	uint32_t at = (uint32_t)q->text_len;

	memcpy(q->text + q->text_len, s, n + 1);
	q->text_len += n + 1;
	return at;
}

int gw__lq_push(gw_lq *q, const gw_lq_call *c)
{
	const char *domain = c->domain != NULL ? c->domain : "";
	size_t dlen = strlen(domain), len[GW_LQ_NAMES] = {0},
	       need = dlen + 1, i = q->n;

	for (int j = 0; j < GW_LQ_NAMES; j++)
		if (c->name[j] == GW_LQ_OWN)
			need += (len[j] = strlen(c->own[j])) + 1;
	if (q->n == q->cap &&
	    grow(q, q->cap > 0 ? q->cap * 2 : FIRST_CAP) != 0)
		return SEO_ENOMEM;
	if (q->text_len + need > UINT32_MAX)
		return SEO_ENOMEM;
	if (q->text_len + need > q->text_cap) {
		size_t cap = q->text_cap > 0 ? q->text_cap : 1024;
		char *t;

		while (cap < q->text_len + need)
			cap *= 2;
		if ((t = realloc(q->text, cap)) == NULL)
			return SEO_ENOMEM;
		q->text = t;
		q->text_cap = cap;
	}
	q->request_no[i] = c->request_no;
	q->charged[i] = c->charged;
	q->used[i] = c->used;
	q->created_at[i] = c->created_at;
	q->domain[i] = put(q, domain, dlen);
	for (int j = 0; j < GW_LQ_NAMES; j++) {
		q->name[j][i] = c->name[j];
		q->own[j][i] = c->name[j] == GW_LQ_OWN ? put(q, c->own[j], len[j]) : 0;
	}
	q->n++;
	return 0;
}

void gw__lq_drop(gw_lq *q, size_t k)
{
	size_t rest, base;
	col c[N_COLS];

	if (k >= q->n) {
		q->n = 0;
		q->text_len = 0;
		return;
	}
	rest = q->n - k;
	base = q->domain[k];
	columns(q, c);
	for (size_t i = 0; i < N_COLS; i++)
		memmove(*c[i].p, (char *)*c[i].p + k * c[i].size, rest * c[i].size);
	memmove(q->text, q->text + base, q->text_len - base);
	q->text_len -= base;
	for (size_t i = 0; i < rest; i++) {
		q->domain[i] -= (uint32_t)base;
		for (int j = 0; j < GW_LQ_NAMES; j++)
			if (q->name[j][i] == GW_LQ_OWN)
				q->own[j][i] -= (uint32_t)base;
	}
	q->n = rest;
}

const char *gw__lq_own(const gw_lq *q, size_t i, int j)
{
	return q->text + q->own[j][i];
}

const char *gw__lq_domain(const gw_lq *q, size_t i)
{
	return q->text + q->domain[i];
}

void gw__lq_free(gw_lq *q)
{
	col c[N_COLS];

	columns(q, c);
	for (size_t i = 0; i < N_COLS; i++)
		free(*c[i].p);
	free(q->text);
	memset(q, 0, sizeof(*q));
}
