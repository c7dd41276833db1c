/*
 * html.c: what the analysers share over MyHTML's tree: the parse, the
 * walk, text extraction and JSON-LD script blocks.
 *
 * The parse is nearly all of an analysis's time (docs/benchmarks.md,
 * "realtime"). A MyHTML instance and tree cost more to make (about 1 ms
 * and 1 MiB) than a typical page costs to parse, so parsers are pooled:
 * a parse takes an idle one, and rt__html_free() cleans it and gives it
 * back. MyHTML keeps the memory of its largest parse across cleans, so a
 * parser that read a page above KEEP_MAX is destroyed instead, and at
 * most POOL_MAX wait idle (parses are short and CPU-bound: about as many
 * run at once as there are cores, whatever the handler threads).
 */
#include "rt_int.h"

#include "seo/errors.h"
#include "seo/log.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TEXT_DEPTH_MAX 256

void rt__sb_add(rt__sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *ns;

		while (cap < b->len + n + 1)
			cap *= 2;
		ns = realloc(b->s, cap);
		if (ns == NULL) {
			b->oom = 1;
			return;
		}
		b->s = ns;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

/* A parser keeps about 6 MB after pages of up to 1 MiB (2 MB up to
 * 128 KiB; measured on the saved pages), more after larger ones: those
 * parsers are not kept. */
#define KEEP_MAX (1024 * 1024)
#define POOL_MAX 8

struct rt__html {
	myhtml_t *mh;
	myhtml_tree_t *tree;
	size_t len;            /* bytes of the page parsed */
	struct rt__html *next; /* in the idle pool */
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static rt__html *pool; /* idle parsers, clean */
static unsigned pool_len;

static void parser_free(rt__html *h)
{
	if (h == NULL)
		return;
	myhtml_tree_destroy(h->tree);
	myhtml_destroy(h->mh);
	free(h);
}

static rt__html *parser_new(void)
{
	rt__html *h = calloc(1, sizeof(*h));
	myhtml_tree_t *tree;

	if (h == NULL)
		return NULL;
	if ((h->mh = myhtml_create()) == NULL ||
	    myhtml_init(h->mh, MyHTML_OPTIONS_PARSE_MODE_SINGLE, 1, 0) != MyHTML_STATUS_OK ||
	    (tree = myhtml_tree_create()) == NULL) {
		parser_free(h);
		return NULL;
	}
	/* a tree whose init failed half-way cannot be destroyed (its
	 * destructor follows the pointers init did not set): it is lost,
	 * which only happens when memory is exhausted */
	if (myhtml_tree_init(tree, h->mh) != MyHTML_STATUS_OK) {
		parser_free(h);
		return NULL;
	}
	h->tree = tree;
	return h;
}

int rt__html_parse(const char *html, size_t len, rt__html **out)
{
	rt__html *h;
	mystatus_t st;

	pthread_mutex_lock(&pool_lock);
	if ((h = pool) != NULL) {
		pool = h->next;
		pool_len--;
	}
	pthread_mutex_unlock(&pool_lock);
	if (h == NULL && (h = parser_new()) == NULL)
		return SEO_ENOMEM;
	h->len = len;
	st = myhtml_parse(h->tree, MyENCODING_UTF_8, html, len);
	if (st != MyHTML_STATUS_OK) {
		log_error("html parse failed: myhtml status 0x%x", (unsigned)st);
		parser_free(h);
		return SEO_ENOMEM;
	}
	*out = h;
	return 0;
}

void rt__html_free(rt__html *h)
{
	if (h == NULL)
		return;
	if (h->len <= KEEP_MAX) {
		myhtml_tree_clean(h->tree);
		pthread_mutex_lock(&pool_lock);
		if (pool_len < POOL_MAX) {
			h->next = pool;
			pool = h;
			pool_len++;
			h = NULL;
		}
		pthread_mutex_unlock(&pool_lock);
	}
	parser_free(h);
}

myhtml_tree_t *rt__html_tree(const rt__html *h)
{
	return h->tree;
}

/* 1 when code point `cp` is a letter of "ld+json" in either case. */
static int json_ld_char(unsigned long cp)
{
	return cp != 0 && cp < 0x80 && strchr("ldjsonLDJSON+", (int)cp) != NULL;
}

/* 1 when the character reference at `p` (after its '&') could stand for
 * a letter of "ld+json": a numeric one of such a code point, &plus; or
 * &fjlig; ("fj"), the only named ones holding any. */
static int json_ld_ref(const char *p, const char *end)
{
	unsigned long cp = 0;
	int base = 10, digits = 0;

	if (p < end && *p != '#')
		return (end - p >= 4 && memcmp(p, "plus", 4) == 0) ||
		       (end - p >= 5 && memcmp(p, "fjlig", 5) == 0);
	if (++p < end && (*p == 'x' || *p == 'X')) {
		base = 16;
		p++;
	}
	for (; p < end && (base == 16 ? isxdigit((unsigned char)*p) : isdigit((unsigned char)*p)); p++) {
		/* anything past Unicode reads as U+FFFD */
		if (cp <= 0x10ffff)
			cp = cp * (unsigned long)base +
			     (unsigned long)(isdigit((unsigned char)*p) ? *p - '0' : (*p | 0x20) - 'a' + 10);
		digits = 1;
	}
	return digits && json_ld_char(cp);
}

int rt__may_hold_json_ld(const char *html, size_t len)
{
	const char *end = html + len, *p;

	for (p = html; (p = memchr(p, '+', (size_t)(end - p))) != NULL; p++)
		if (p - html >= 2 && end - p >= 5 && strncasecmp(p - 2, "ld", 2) == 0 &&
		    strncasecmp(p + 1, "json", 4) == 0)
			return 1;
	for (p = html; (p = memchr(p, '&', (size_t)(end - p))) != NULL; p++)
		if (json_ld_ref(p + 1, end))
			return 1;
	return 0;
}

const char *rt__attr(myhtml_tree_node_t *e, const char *name)
{
	size_t n = strlen(name), klen;

	for (myhtml_tree_attr_t *at = myhtml_node_attribute_first(e); at != NULL;
	     at = myhtml_attribute_next(at)) {
		const char *k = myhtml_attribute_key(at, &klen);

		if (klen == n && memcmp(k, name, n) == 0) {
			const char *v = myhtml_attribute_value(at, NULL);

			/* MyHTML keeps no text for an empty value */
			return v != NULL ? v : "";
		}
	}
	return NULL;
}

/* 1 for an element: not a text, comment, doctype or document node. */
static int is_element(myhtml_tree_node_t *n)
{
	myhtml_tag_id_t t = myhtml_node_tag_id(n);

	return t != MyHTML_TAG__TEXT && t != MyHTML_TAG__COMMENT && t != MyHTML_TAG__DOCTYPE &&
	       t != MyHTML_TAG__UNDEF;
}

void rt__text_of(myhtml_tree_node_t *n, rt__sbuf *b, int depth)
{
	if (myhtml_node_tag_id(n) == MyHTML_TAG__TEXT) {
		size_t len;
		const char *s = myhtml_node_text(n, &len);

		if (s != NULL)
			rt__sb_add(b, s, len);
		return;
	}
	if (!is_element(n) || depth > TEXT_DEPTH_MAX)
		return;
	for (myhtml_tree_node_t *c = myhtml_node_child(n); c != NULL; c = myhtml_node_next(c)) {
		/* a space between elements keeps their words apart */
		if (is_element(c))
			rt__sb_add(b, " ", 1);
		rt__text_of(c, b, depth + 1);
	}
}

typedef struct frame {
	myhtml_tree_node_t *n;    /* the element */
	myhtml_tree_node_t *next; /* its next child to visit */
	unsigned flags;
} frame;

int rt__html_walk(myhtml_tree_node_t *root, const rt__html_visitor *v)
{
	size_t cap = 64, top = 0;
	frame *st = malloc(cap * sizeof(*st));
	int rc = 0;

	if (st == NULL)
		return SEO_ENOMEM;
	st[top++] = (frame){root, myhtml_node_child(root), 0};
	while (top > 0) {
		frame *f = &st[top - 1];
		myhtml_tree_node_t *c = f->next;
		unsigned flags = f->flags;

		if (c == NULL) {
			if (top > 1 && v->leave)
				v->leave(v->ud, f->n);
			top--;
			continue;
		}
		f->next = myhtml_node_next(c);
		if (myhtml_node_tag_id(c) == MyHTML_TAG__TEXT) {
			size_t len;
			const char *s = myhtml_node_text(c, &len);

			if (v->text && s != NULL)
				v->text(v->ud, s, len, f->flags);
			continue;
		}
		if (!is_element(c))
			continue;
		rc = v->enter(v->ud, c, &flags);
		if (rc < 0)
			goto out;
		if (rc == 1) {
			if (v->leave)
				v->leave(v->ud, c);
			rc = 0;
			continue;
		}
		if (top == cap) {
			frame *ns = realloc(st, 2 * cap * sizeof(*st));

			if (ns == NULL) {
				rc = SEO_ENOMEM;
				goto out;
			}
			st = ns;
			cap *= 2;
		}
		st[top++] = (frame){c, myhtml_node_child(c), flags};
	}
out:
	free(st);
	return rc;
}

int rt__is_json_ld(myhtml_tree_node_t *e)
{
	static const char mime[] = "application/ld+json";
	const char *t;

	if (myhtml_node_tag_id(e) != MyHTML_TAG_SCRIPT || (t = rt__attr(e, "type")) == NULL)
		return 0;
	while (isspace((unsigned char)*t))
		t++;
	if (strncasecmp(t, mime, sizeof(mime) - 1) != 0)
		return 0;
	t += sizeof(mime) - 1;
	while (isspace((unsigned char)*t))
		t++;
	return *t == '\0' || *t == ';';
}

/* Wrappers that pages put around script text for pre-HTML5 browsers. */
static const char *const wrap_open[] = {
	"/*<![CDATA[*/", "//<![CDATA[", "<![CDATA[", "<!--",
};
static const char *const wrap_close[] = {
	"/*]]>*/", "//]]>", "]]>", "//-->", "-->",
};

/* Overwrites wrappers at both ends of s[0..len) with spaces, so that a
 * parser's line and column still match the page. */
static void blank_wrappers(char *s, size_t len)
{
	size_t lo = 0, hi = len;
	int again = 1;

	while (again) {
		again = 0;
		while (lo < hi && isspace((unsigned char)s[lo]))
			lo++;
		while (hi > lo && isspace((unsigned char)s[hi - 1]))
			hi--;
		for (size_t i = 0; i < sizeof(wrap_open) / sizeof(wrap_open[0]); i++) {
			size_t n = strlen(wrap_open[i]);

			if (hi - lo >= n && memcmp(s + lo, wrap_open[i], n) == 0) {
				memset(s + lo, ' ', n);
				again = 1;
				break;
			}
		}
		for (size_t i = 0; i < sizeof(wrap_close) / sizeof(wrap_close[0]); i++) {
			size_t n = strlen(wrap_close[i]);

			if (hi - lo >= n && memcmp(s + hi - n, wrap_close[i], n) == 0) {
				memset(s + hi - n, ' ', n);
				again = 1;
				break;
			}
		}
	}
}

int rt__json_ld_load(myhtml_tree_node_t *script, json_t **out, json_error_t *err)
{
	rt__sbuf b = {0};
	int rc = SEO_ENOMEM;

	rt__sb_add(&b, "", 0);
	rt__text_of(script, &b, 0);
	if (b.oom)
		goto out;
	blank_wrappers(b.s, b.len);
	*out = json_loadb(b.s, b.len, JSON_DECODE_ANY, err);
	if (*out != NULL)
		rc = 0;
	else if (json_error_code(err) != json_error_out_of_memory)
		rc = SEO_EINVAL;
out:
	free(b.s);
	return rc;
}
