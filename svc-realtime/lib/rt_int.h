/*
 * rt_int.h: helpers shared by the analysers of svc-realtime; not part of
 * the public API (rt.h).
 */
#ifndef RT_INT_H
#define RT_INT_H

#include <stddef.h>

#include <jansson.h>
#include <myhtml/api.h>

/* A growing NUL-terminated string on the heap; the owner free()s s. */
typedef struct rt__sbuf {
	char *s;
	size_t len, cap;
	int oom; /* set once an append failed; later appends do nothing */
} rt__sbuf;

void rt__sb_add(rt__sbuf *b, const char *s, size_t n);

/*
 * A parsed page: MyHTML's tree of it, on a parser (a MyHTML instance and
 * its tree) taken from a process-wide pool. The nodes and every string in
 * them live until rt__html_free(), which cleans the parser and gives it
 * back (or destroys it: see html.c). Any thread may parse; one rt__html is
 * used by one thread at a time.
 */
typedef struct rt__html rt__html;

/*
 * Parses `html` (UTF-8, `len` bytes; read during the call only) into a new
 * *out, which the caller frees with rt__html_free(). Parse errors are not
 * reported. Returns 0, or SEO_ENOMEM when MyHTML reports a failure (its
 * failure statuses are allocation failures).
 */
int rt__html_parse(const char *html, size_t len, rt__html **out);

/* Ends the use of `h` and of everything in its tree; NULL allowed. */
void rt__html_free(rt__html *h);

/* The tree of `h`, owned by it (myhtml_tree_get_document() and the other
 * accessors of MyHTML's API read it). */
myhtml_tree_t *rt__html_tree(const rt__html *h);

/*
 * 0 when `html` cannot hold a JSON-LD block, so that its parse can be
 * skipped: no "ld+json" (any case) in its bytes and no character
 * reference that could spell a letter of it (in a type attribute, a
 * parse would decode it). 1 when it may: a parse decides.
 */
int rt__may_hold_json_ld(const char *html, size_t len);

/* Value of the first attribute `name` (lowercase) of element `e`, owned
 * by the tree: "" when it has no value, NULL when it is absent. */
const char *rt__attr(myhtml_tree_node_t *e, const char *name);

/* Appends the text under `n` to `b`, a space between elements, with the
 * depth capped. */
void rt__text_of(myhtml_tree_node_t *n, rt__sbuf *b, int depth);

/*
 * A depth-first walk over MyHTML's tree, without recursion. Each frame
 * carries `flags`, which an element inherits from its parent and which
 * enter() may change for the element's subtree.
 */
typedef struct rt__html_visitor {
	/* An element is entered: 0 to walk its children, 1 to skip them,
	 * or a negative SEO_E* code to stop the walk. */
	int (*enter)(void *ud, myhtml_tree_node_t *n, unsigned *flags);
	/* The element is left (after its children, or right after enter()
	 * when they were skipped). NULL allowed. */
	void (*leave)(void *ud, myhtml_tree_node_t *n);
	/* A text node (CDATA sections are text too): its `len` bytes at `s`,
	 * owned by the tree and not always NUL-terminated. NULL allowed. */
	void (*text)(void *ud, const char *s, size_t len, unsigned flags);
	void *ud;
} rt__html_visitor;

/* Walks the children of `root` (its own enter() is not called); comments
 * and doctypes are skipped. Returns 0, the first negative code of enter(),
 * or SEO_ENOMEM. */
int rt__html_walk(myhtml_tree_node_t *root, const rt__html_visitor *v);

/* 1 when `e` is a <script> whose type is application/ld+json (any case,
 * parameters allowed). */
int rt__is_json_ld(myhtml_tree_node_t *e);

/*
 * Parses the text of a JSON-LD <script> with jansson (any JSON value),
 * after blanking an HTML comment or CDATA wrapper so that error positions
 * still point into the script text. Returns 0 and a new reference in
 * *out (the caller json_decref()s it); SEO_EINVAL with *err filled when
 * the text is not JSON; SEO_ENOMEM.
 */
int rt__json_ld_load(myhtml_tree_node_t *script, json_t **out, json_error_t *err);

#endif
