/*
 * body.c: response bodies in a growing buffer, capped.
 */
#include "body.h"

#include <stdlib.h>
#include <string.h>

#define FIRST_CAP 16384

size_t seo__body_write(char *data, size_t size, size_t n, void *ud)
{
	seo__body *b = ud;
	size_t len = size * n;

	if (b->len + len > b->max) {
		b->too_large = 1;
		return 0;
	}
	if (b->len + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : FIRST_CAP;
		char *nb;

		while (cap < b->len + len + 1)
			cap *= 2;
		nb = realloc(b->data, cap);
		if (nb == NULL)
			return 0;
		b->data = nb;
		b->cap = cap;
	}
	memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return len;
}

void seo__body_reset(seo__body *b)
{
	b->len = 0;
	b->too_large = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

void seo__body_free(seo__body *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
	b->too_large = 0;
}
