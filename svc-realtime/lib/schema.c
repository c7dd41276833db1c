/*
 * schema.c: the schema-markup response: every JSON-LD block of a page,
 * flattened into entities.
 *
 * Reading rules (docs/decisions.md, "Real-time"): a block's object is an
 * entity unless it is a bare @graph container (an @graph and no @type);
 * each object of a block's array is read the same way; the objects of a
 * top-level @graph (an array, or one object) are entities with source
 * "graph", and a @graph nested inside those stays in their properties.
 * A block holding any other JSON value is valid and yields nothing.
 */
#include "rt.h"
#include "rt_int.h"

#include "seo/errors.h"

#include <stdlib.h>
#include <string.h>

typedef struct extract {
	json_t *data;    /* entities */
	json_t *types;   /* object used as a set of type names */
	json_t *invalid; /* invalid_blocks */
	long blocks;
} extract;

/* The entity of `o`, appended to ex->data. */
static int add_entity(extract *ex, json_t *o, long block, const char *source)
{
	json_t *t = json_object_get(o, "@type"), *id = json_object_get(o, "@id");
	json_t *type = json_array(), *v;
	size_t i;
	int rc = SEO_ENOMEM;

	if (type == NULL)
		goto out;
	if (json_is_string(t)) {
		if (json_array_append(type, t) != 0)
			goto out;
	} else if (json_is_array(t)) {
		json_array_foreach(t, i, v)
			if (json_is_string(v) && json_array_append(type, v) != 0)
				goto out;
	}
	json_array_foreach(type, i, v)
		if (json_object_set(ex->types, json_string_value(v), json_true()) != 0)
			goto out;
	if (json_array_append_new(ex->data, json_pack("{s:O,s:O,s:I,s:s,s:O}",
		"type", type, "id", json_is_string(id) ? id : json_null(),
		"block_index", (json_int_t)block, "source", source,
		"properties", o)) != 0)
		goto out;
	rc = 0;
out:
	json_decref(type);
	return rc;
}

/* A top-level object of block `block`: itself, then its @graph. */
static int add_top(extract *ex, json_t *o, long block)
{
	json_t *graph = json_object_get(o, "@graph"), *v;
	size_t i;
	int rc = 0;

	/* a bare {"@context", "@graph"} wrapper is not an entity itself */
	if (!(json_is_array(graph) || json_is_object(graph)) ||
	    json_object_get(o, "@type") != NULL)
		rc = add_entity(ex, o, block, "top_level");
	if (rc == 0 && json_is_object(graph))
		rc = add_entity(ex, graph, block, "graph");
	json_array_foreach(graph, i, v)
		if (rc == 0 && json_is_object(v))
			rc = add_entity(ex, v, block, "graph");
	return rc;
}

static int on_block(extract *ex, myhtml_tree_node_t *script)
{
	long block = ex->blocks++;
	json_error_t err;
	json_t *j = NULL, *v;
	size_t i;
	int rc = rt__json_ld_load(script, &j, &err);

	if (rc == SEO_EINVAL) {
		/* jansson quotes the bytes near the error and cuts its text
		 * at a fixed length: either may split a UTF-8 sequence, which
		 * json_pack() refuses */
		seo_arena *a = seo_arena_new(0);
		char *text;
		size_t len;

		if (a == NULL)
			return SEO_ENOMEM;
		rc = seo_to_utf8(err.text, strlen(err.text), "utf-8", a, &text, &len);
		if (rc == 0 && json_array_append_new(ex->invalid, json_pack("{s:I,s:s,s:i,s:i,s:i}",
			"index", (json_int_t)block, "error", text,
			"line", err.line, "column", err.column, "position", err.position)))
			rc = SEO_ENOMEM;
		seo_arena_free(a);
		return rc;
	}
	if (rc != 0)
		return rc;
	if (json_is_object(j))
		rc = add_top(ex, j, block);
	else if (json_is_array(j))
		json_array_foreach(j, i, v)
			if (rc == 0 && json_is_object(v))
				rc = add_top(ex, v, block);
	json_decref(j);
	return rc;
}

static int on_element(void *ud, myhtml_tree_node_t *n, unsigned *flags)
{
	(void)flags;
	if (!rt__is_json_ld(n))
		return 0;
	return on_block(ud, n) ? SEO_ENOMEM : 1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The keys of the type set as a new array, sorted by byte value; NULL
 * when out of memory. */
static json_t *sorted_types(json_t *set)
{
	size_t n = 0, cap = json_object_size(set);
	const char **keys = malloc((cap ? cap : 1) * sizeof(*keys));
	json_t *arr = json_array(), *res = NULL, *v;
	const char *k;

	if (keys == NULL || arr == NULL)
		goto out;
	json_object_foreach(set, k, v)
		keys[n++] = k;
	qsort(keys, n, sizeof(*keys), cmp_str);
	for (size_t i = 0; i < n; i++)
		if (json_array_append_new(arr, json_string(keys[i])) != 0)
			goto out;
	res = arr;
	arr = NULL;
out:
	free(keys);
	json_decref(arr);
	return res;
}

int rt_schema_markup(const rt_page *page, json_t **out)
{
	extract ex = {json_array(), json_object(), json_array(), 0};
	rt__html *h = NULL;
	json_t *types = NULL;
	long invalid;
	int rc = SEO_ENOMEM;

	if (ex.data == NULL || ex.types == NULL || ex.invalid == NULL)
		goto out;
	/* most pages have no JSON-LD: those need no parse at all */
	if (rt__may_hold_json_ld(page->html, page->html_len)) {
		if (rt__html_parse(page->html, page->html_len, &h) != 0)
			goto out;
		rc = rt__html_walk(myhtml_tree_get_document(rt__html_tree(h)),
				   &(rt__html_visitor){on_element, NULL, NULL, &ex});
		if (rc != 0)
			goto out;
		rc = SEO_ENOMEM;
	}
	if ((types = sorted_types(ex.types)) == NULL)
		goto out;
	invalid = (long)json_array_size(ex.invalid);
	*out = json_pack("{s:O,s:s,s:I,s:I,s:b,s:O,s:I,s:I,s:I,s:O}",
			 "data", ex.data, "final_url", page->final_url,
			 "status_code", (json_int_t)page->status,
			 "response_time_ms", (json_int_t)page->response_time_ms,
			 "has_schema_markup", json_array_size(ex.data) > 0,
			 "types", types, "block_count", (json_int_t)ex.blocks,
			 "valid_block_count", (json_int_t)(ex.blocks - invalid),
			 "invalid_block_count", (json_int_t)invalid,
			 "invalid_blocks", ex.invalid);
	if (*out != NULL)
		rc = 0;
out:
	json_decref(types);
	json_decref(ex.data);
	json_decref(ex.types);
	json_decref(ex.invalid);
	rt__html_free(h);
	return rc;
}
