#include "seo/arena.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_ALIGN 16
#define ARENA_DEFAULT_BLOCK 8192

struct arena_block {
	struct arena_block *next;
	size_t size;
	size_t used;
	/* Keeps data[] aligned for any type. */
	max_align_t data[];
};

struct seo_arena {
	struct arena_block *head;
	size_t total;
};

static struct arena_block *block_new(size_t size)
{
	struct arena_block *b = malloc(sizeof(*b) + size);

	if (b == NULL)
		return NULL;
	b->next = NULL;
	b->size = size;
	b->used = 0;
	return b;
}

seo_arena *seo_arena_new(size_t hint)
{
	seo_arena *a = malloc(sizeof(*a));

	if (a == NULL)
		return NULL;
	a->head = block_new(hint ? hint : ARENA_DEFAULT_BLOCK);
	a->total = 0;
	if (a->head == NULL) {
		free(a);
		return NULL;
	}
	return a;
}

void seo_arena_free(seo_arena *a)
{
	struct arena_block *b, *next;

	if (a == NULL)
		return;
	for (b = a->head; b != NULL; b = next) {
		next = b->next;
		free(b);
	}
	free(a);
}

void *seo_arena_alloc(seo_arena *a, size_t n)
{
	struct arena_block *b = a->head;
	size_t need = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	void *p;

	if (need < n)
		return NULL;
	if (need == 0)
		need = ARENA_ALIGN;
	if (b->size - b->used < need) {
		size_t size = b->size * 2;
		if (size < need)
			size = need;
		b = block_new(size);
		if (b == NULL)
			return NULL;
		b->next = a->head;
		a->head = b;
	}
	p = (char *)b->data + b->used;
	b->used += need;
	a->total += need;
	return p;
}

void *seo_arena_calloc(seo_arena *a, size_t n)
{
	void *p = seo_arena_alloc(a, n);

	if (p != NULL)
		memset(p, 0, n);
	return p;
}

char *seo_arena_strndup(seo_arena *a, const char *s, size_t n)
{
	char *p = seo_arena_alloc(a, n + 1);

	if (p == NULL)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *seo_arena_strdup(seo_arena *a, const char *s)
{
	return seo_arena_strndup(a, s, strlen(s));
}

char *seo_arena_vprintf(seo_arena *a, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;
	char *p;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return NULL;
	p = seo_arena_alloc(a, (size_t)n + 1);
	if (p == NULL)
		return NULL;
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	return p;
}

char *seo_arena_printf(seo_arena *a, const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	p = seo_arena_vprintf(a, fmt, ap);
	va_end(ap);
	return p;
}

size_t seo_arena_used(const seo_arena *a)
{
	return a->total;
}

static void *pb_alloc(void *data, size_t size)
{
	return seo_arena_alloc(data, size);
}

static void pb_free(void *data, void *ptr)
{
	(void)data;
	(void)ptr;
}

void seo_arena_pb_allocator(seo_arena *a, ProtobufCAllocator *out)
{
	out->alloc = pb_alloc;
	out->free = pb_free;
	out->allocator_data = a;
}
