#include "seo/json_text.h"

#include <stdlib.h>

/* A jansson allocation failed on this thread since seo_json_loadb()
 * began. */
static _Thread_local int failed;

static void *json_malloc(size_t size)
{
	void *p = malloc(size);

	if (p == NULL)
		failed = 1;
	return p;
}

static void json_free(void *ptr)
{
	free(ptr);
}

void seo_json_init(void)
{
	json_set_alloc_funcs(json_malloc, json_free);
}

json_t *seo_json_loadb(const char *buf, size_t len, size_t flags,
		       json_error_t *err, int *oom)
{
	json_t *v;

	failed = 0;
	v = json_loadb(buf, len, flags, err);
	*oom = failed;
	/* jansson sometimes goes on past a failed allocation and returns a
	 * value that lacks a part: all or nothing */
	if (failed) {
		json_decref(v);
		return NULL;
	}
	return v;
}

char *seo_json_dumps(const json_t *v, size_t flags, size_t *len)
{
	/* every value has at least one byte of text: 0 is a failure */
	size_t n = json_dumpb(v, NULL, 0, flags);
	char *text;

	if (n == 0 || (text = malloc(n + 1)) == NULL)
		return NULL;
	if (json_dumpb(v, text, n, flags) != n) {
		free(text);
		return NULL;
	}
	text[n] = '\0';
	if (len != NULL)
		*len = n;
	return text;
}
