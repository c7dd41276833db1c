/*
 * html.c: what the analysers share over gumbo's tree: the parse, the
 * walk, text extraction and JSON-LD script blocks.
 *
 * The parse is nearly all of an analysis's time (docs/benchmarks.md,
 * "realtime"): gumbo is given the analysis's arena as its allocator, so
 * that its many small allocations are bump allocations and the tree is
 * freed with the arena, without a walk to destroy it.
 */
#include "rt_int.h"

#include "seo/errors.h"
#include "seo/log.h"

#include <ctype.h>
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

static void *tree_alloc(void *ud, size_t n)
{
	void *p = seo_arena_alloc(ud, n);

	/* gumbo cannot fail an allocation (its own malloc default would
	 * crash on NULL) */
	if (p == NULL) {
		log_error("out of memory parsing a page");
		abort();
	}
	return p;
}

static void tree_free(void *ud, void *p)
{
	(void)ud;
	(void)p;
}

int rt__html_parse(const char *html, size_t len, seo_arena *a, GumboOutput **out)
{
	GumboOptions opts = kGumboDefaultOptions;

	opts.allocator = tree_alloc;
	opts.deallocator = tree_free;
	opts.userdata = a;
	/* parse errors are not reported; recording them costs time */
	opts.max_errors = 0;
	*out = gumbo_parse_with_options(&opts, html, len);
	return *out != NULL ? 0 : SEO_ENOMEM;
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

const char *rt__attr(const GumboElement *e, const char *name)
{
	const GumboAttribute *a = gumbo_get_attribute(&e->attributes, name);

	return a ? a->value : NULL;
}

void rt__text_of(const GumboNode *n, rt__sbuf *b, int depth)
{
	if (n->type == GUMBO_NODE_TEXT || n->type == GUMBO_NODE_WHITESPACE ||
	    n->type == GUMBO_NODE_CDATA) {
		rt__sb_add(b, n->v.text.text, strlen(n->v.text.text));
		return;
	}
	if (n->type != GUMBO_NODE_ELEMENT || depth > TEXT_DEPTH_MAX)
		return;
	for (unsigned i = 0; i < n->v.element.children.length; i++) {
		const GumboNode *c = n->v.element.children.data[i];

		/* a space between elements keeps their words apart */
		if (c->type == GUMBO_NODE_ELEMENT)
			rt__sb_add(b, " ", 1);
		rt__text_of(c, b, depth + 1);
	}
}

typedef struct frame {
	const GumboNode *n;
	unsigned next;
	unsigned flags;
} frame;

int rt__html_walk(const GumboNode *root, const rt__html_visitor *v)
{
	size_t cap = 64, top = 0;
	frame *st = malloc(cap * sizeof(*st));
	int rc = 0;

	if (st == NULL)
		return SEO_ENOMEM;
	st[top++] = (frame){root, 0, 0};
	while (top > 0) {
		frame *f = &st[top - 1];
		const GumboVector *kids = &f->n->v.element.children;
		const GumboNode *c;
		unsigned flags = f->flags;

		if (f->next == kids->length) {
			if (top > 1 && v->leave)
				v->leave(v->ud, f->n);
			top--;
			continue;
		}
		c = kids->data[f->next++];
		if (c->type == GUMBO_NODE_TEXT || c->type == GUMBO_NODE_WHITESPACE ||
		    c->type == GUMBO_NODE_CDATA) {
			if (v->text)
				v->text(v->ud, c, f->flags);
			continue;
		}
		if (c->type != GUMBO_NODE_ELEMENT && c->type != GUMBO_NODE_TEMPLATE)
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
		st[top++] = (frame){c, 0, flags};
	}
out:
	free(st);
	return rc;
}

int rt__is_json_ld(const GumboElement *e)
{
	static const char mime[] = "application/ld+json";
	const char *t;

	if (e->tag != GUMBO_TAG_SCRIPT || (t = rt__attr(e, "type")) == NULL)
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

int rt__json_ld_load(const GumboNode *script, json_t **out, json_error_t *err)
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
