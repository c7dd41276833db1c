/*
 * rt_int.h: helpers shared by the analysers of svc-realtime; not part of
 * the public API (rt.h).
 */
#ifndef RT_INT_H
#define RT_INT_H

#include <stddef.h>

#include <gumbo.h>
#include <jansson.h>

#include "seo/arena.h"

/* A growing NUL-terminated string on the heap; the owner free()s s. */
typedef struct rt__sbuf {
	char *s;
	size_t len, cap;
	int oom; /* set once an append failed; later appends do nothing */
} rt__sbuf;

void rt__sb_add(rt__sbuf *b, const char *s, size_t n);

/*
 * Parses `html` (UTF-8, `len` bytes) with gumbo, every node allocated on
 * `a`: the tree lives as long as the arena and is freed with it
 * (gumbo_destroy_output() must not be called). Parse errors are not
 * recorded. Running out of memory inside gumbo aborts the process, since
 * gumbo cannot fail an allocation. Returns 0 with *out set, or
 * SEO_ENOMEM.
 */
int rt__html_parse(const char *html, size_t len, seo_arena *a, GumboOutput **out);

/* First block of the arena of a `len`-byte page's tree: gumbo takes
 * several times the page (5 to 10 on the saved pages). */
#define RT_TREE_ARENA_HINT(len) (4 * (len) + 4096)

/*
 * 0 when `html` cannot hold a JSON-LD block, so that its parse can be
 * skipped: no "ld+json" (any case) in its bytes and no character
 * reference that could spell a letter of it (in a type attribute, a
 * parse would decode it). 1 when it may: a parse decides.
 */
int rt__may_hold_json_ld(const char *html, size_t len);

/* Value of attribute `name` of `e`, owned by the gumbo tree, or NULL. */
const char *rt__attr(const GumboElement *e, const char *name);

/* Appends the text under `n` to `b`, a space between elements, with the
 * depth capped. */
void rt__text_of(const GumboNode *n, rt__sbuf *b, int depth);

/*
 * A depth-first walk over a gumbo tree, without recursion. Each frame
 * carries `flags`, which an element inherits from its parent and which
 * enter() may change for the element's subtree.
 */
typedef struct rt__html_visitor {
	/* An element or template is entered: 0 to walk its children, 1 to
	 * skip them, or a negative SEO_E* code to stop the walk. */
	int (*enter)(void *ud, const GumboNode *n, unsigned *flags);
	/* The element is left (after its children, or right after enter()
	 * when they were skipped). NULL allowed. */
	void (*leave)(void *ud, const GumboNode *n);
	/* A text, whitespace or CDATA node; NULL allowed. */
	void (*text)(void *ud, const GumboNode *n, unsigned flags);
	void *ud;
} rt__html_visitor;

/* Walks the children of `root` (its own enter() is not called). Returns
 * 0, the first negative code of enter(), or SEO_ENOMEM. */
int rt__html_walk(const GumboNode *root, const rt__html_visitor *v);

/* 1 when `e` is a <script> whose type is application/ld+json (any case,
 * parameters allowed). */
int rt__is_json_ld(const GumboElement *e);

/*
 * Parses the text of a JSON-LD <script> with jansson (any JSON value),
 * after blanking an HTML comment or CDATA wrapper so that error positions
 * still point into the script text. Returns 0 and a new reference in
 * *out (the caller json_decref()s it); SEO_EINVAL with *err filled when
 * the text is not JSON; SEO_ENOMEM.
 */
int rt__json_ld_load(const GumboNode *script, json_t **out, json_error_t *err);

#endif
