/*
 * pageseo.c: the page SEO audit object, from one parse and one walk over
 * MyHTML's HTML5 tree.
 *
 * Reading rules where the spec is silent: the first <title> and the first
 * meta of each name win; lengths count Unicode code points of the text
 * with whitespace collapsed; an <img> without an alt attribute is missing
 * one (alt="" marks a decorative image); links are http(s) <a href>s,
 * internal when their host equals the page's, ignoring a leading "www."
 * (an IDN host compares in punycode);
 * words are whitespace-separated runs holding a letter or digit in the
 * visible text of <body> (no script, style, noscript, template).
 */
#include "rt.h"
#include "rt_int.h"

#include "seo/domain.h"
#include "seo/errors.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TITLE_MIN 30
#define TITLE_MAX 60
#define DESC_MIN 120
#define DESC_MAX 160

/* What the walk collects before the JSON is built. */
typedef struct audit {
	const rt_page *page;
	seo_arena *a;      /* what the audit needs while it runs */
	const char *base;  /* <base href> or the final URL */
	const char *host;  /* lowercase host of the base, without "www." */
	myhtml_tree_node_t *title;
	const char *description, *canonical, *robots, *viewport, *lang;
	const char *meta_lang, *favicon;
	const char *og[5], *twitter_card, *twitter_title;
	json_t *hreflang, *h1, *h2, *json_ld;
	long h3, images, missing_alt, internal, external, words;
	int in_word;
} audit;

static const char *const og_names[5] = {"title", "description", "image", "type", "url"};

/* 1 when the space-separated token list `list` holds `tok`. */
static int has_token(const char *list, const char *tok)
{
	size_t n = strlen(tok);

	for (const char *p = list; p && *p;) {
		size_t len;

		while (*p && isspace((unsigned char)*p))
			p++;
		len = strcspn(p, " \t\r\n\f");
		if (len == n && strncasecmp(p, tok, n) == 0)
			return 1;
		p += len;
	}
	return 0;
}

/* Collapses whitespace runs to one space and trims, in place. */
static size_t collapse(char *s)
{
	size_t o = 0;
	int space = 1;

	for (size_t i = 0; s[i]; i++) {
		if (isspace((unsigned char)s[i])) {
			space = 1;
			continue;
		}
		if (space && o > 0)
			s[o++] = ' ';
		space = 0;
		s[o++] = s[i];
	}
	s[o] = '\0';
	return o;
}

static size_t utf8_chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

/* The collapsed text of `n` as a new JSON string (NULL when out of
 * memory). */
static json_t *text_json(myhtml_tree_node_t *n)
{
	rt__sbuf b = {0};
	json_t *j;

	rt__sb_add(&b, "", 0);
	rt__text_of(n, &b, 0);
	if (b.oom)
		return NULL;
	collapse(b.s);
	j = json_string(b.s);
	free(b.s);
	return j;
}

/* Resolves `href` against the base; the text as written when it does not
 * resolve to an http(s) URL. */
static json_t *url_json(const audit *au, const char *href)
{
	seo_url u;

	return json_string(seo_url_resolve(au->base, href, au->a, &u) == 0 ? u.href : href);
}

/* Host of an absolute or scheme-relative href, lowercased into `out`
 * without "www."; 0 when `href` is relative, -1 when not http(s). */
static int href_host(const char *href, char *out, size_t cap)
{
	char idn[SEO_DOMAIN_MAX + 1];
	const char *p = href, *h;
	size_t len, at, i;

	while (*p && isspace((unsigned char)*p))
		p++;
	if (strncasecmp(p, "http://", 7) == 0)
		h = p + 7;
	else if (strncasecmp(p, "https://", 8) == 0)
		h = p + 8;
	else if (p[0] == '/' && p[1] == '/')
		h = p + 2;
	else if (strchr("/?#", *p) != NULL || strcspn(p, ":/?#") == strlen(p) ||
		 p[strcspn(p, ":/?#")] != ':')
		return 0; /* relative path (the "" of an empty href too) */
	else
		return -1; /* mailto:, javascript:, tel:, ... */
	len = strcspn(h, "/?#\\");
	at = len;
	while (at > 0 && h[at - 1] != '@')
		at--;
	h += at;
	len -= at;
	if (len > 0 && h[0] != '[')
		len = strcspn(h, ":/?#\\");
	while (len > 0 && h[len - 1] == '.')
		len--;
	for (i = 0; i < len && (unsigned char)h[i] < 0x80; i++)
		;
	/* one that is no valid IDN compares as written */
	if (i < len && seo_domain_to_ascii(h, len, idn, sizeof(idn)) == 0) {
		h = idn;
		len = strlen(idn);
	}
	if (len >= 4 && strncasecmp(h, "www.", 4) == 0) {
		h += 4;
		len -= 4;
	}
	if (len >= cap)
		len = cap - 1;
	for (i = 0; i < len; i++)
		out[i] = (char)tolower((unsigned char)h[i]);
	out[len] = '\0';
	return 1;
}

static void count_link(audit *au, const char *href)
{
	char host[256];
	int kind = href_host(href, host, sizeof(host));

	if (kind == 0 || (kind == 1 && strcmp(host, au->host) == 0))
		au->internal++;
	else if (kind == 1)
		au->external++;
}

static void on_meta(audit *au, myhtml_tree_node_t *e)
{
	const char *name = rt__attr(e, "name"), *prop = rt__attr(e, "property");
	const char *content = rt__attr(e, "content"), *equiv = rt__attr(e, "http-equiv");
	const char *key = name ? name : prop;

	if (content == NULL)
		return;
	if (equiv != NULL && strcasecmp(equiv, "content-language") == 0 && !au->meta_lang)
		au->meta_lang = content;
	if (key == NULL)
		return;
	if (strcasecmp(key, "description") == 0 && !au->description)
		au->description = content;
	else if (strcasecmp(key, "robots") == 0 && !au->robots)
		au->robots = content;
	else if (strcasecmp(key, "viewport") == 0 && !au->viewport)
		au->viewport = content;
	else if (strcasecmp(key, "twitter:card") == 0 && !au->twitter_card)
		au->twitter_card = content;
	else if (strcasecmp(key, "twitter:title") == 0 && !au->twitter_title)
		au->twitter_title = content;
	else if (strncasecmp(key, "og:", 3) == 0)
		for (int i = 0; i < 5; i++)
			if (strcasecmp(key + 3, og_names[i]) == 0 && !au->og[i])
				au->og[i] = content;
}

static int on_link(audit *au, myhtml_tree_node_t *e)
{
	const char *rel = rt__attr(e, "rel"), *href = rt__attr(e, "href");
	const char *hl = rt__attr(e, "hreflang");

	if (rel == NULL || href == NULL)
		return 0;
	if (has_token(rel, "canonical") && !au->canonical)
		au->canonical = href;
	if (has_token(rel, "icon") && !au->favicon)
		au->favicon = href;
	if (has_token(rel, "alternate") && hl != NULL) {
		json_t *o = json_object(), *u = url_json(au, href);

		if (o == NULL || u == NULL ||
		    json_object_set_new(o, "lang", json_string(hl)) != 0 ||
		    json_object_set_new(o, "url", u) != 0 ||
		    json_array_append_new(au->hreflang, o) != 0) {
			json_decref(o);
			return SEO_ENOMEM;
		}
	}
	return 0;
}

/* Malformed blocks are left out here; schema-markup reports them. */
static int on_json_ld(audit *au, myhtml_tree_node_t *n)
{
	json_error_t err;
	json_t *j = NULL, *v;
	size_t i;
	int rc = rt__json_ld_load(n, &j, &err);

	if (rc != 0)
		return rc == SEO_EINVAL ? 0 : rc;
	if (json_is_object(j))
		rc = json_array_append(au->json_ld, j);
	else if (json_is_array(j))
		json_array_foreach(j, i, v)
			if (json_is_object(v) && (rc = json_array_append(au->json_ld, v)) != 0)
				break;
	json_decref(j);
	return rc == 0 ? 0 : SEO_ENOMEM;
}

/* Elements whose boundaries do not split a word ("foo<b>bar</b>"). */
static int inline_tag(myhtml_tag_id_t t)
{
	switch (t) {
	case MyHTML_TAG_A: case MyHTML_TAG_ABBR: case MyHTML_TAG_B:
	case MyHTML_TAG_BDI: case MyHTML_TAG_BDO: case MyHTML_TAG_CITE:
	case MyHTML_TAG_CODE: case MyHTML_TAG_DFN: case MyHTML_TAG_EM:
	case MyHTML_TAG_I: case MyHTML_TAG_KBD: case MyHTML_TAG_MARK:
	case MyHTML_TAG_Q: case MyHTML_TAG_S: case MyHTML_TAG_SAMP:
	case MyHTML_TAG_SMALL: case MyHTML_TAG_SPAN: case MyHTML_TAG_STRONG:
	case MyHTML_TAG_SUB: case MyHTML_TAG_SUP: case MyHTML_TAG_TIME:
	case MyHTML_TAG_U: case MyHTML_TAG_VAR: case MyHTML_TAG_FONT:
		return 1;
	default:
		return 0;
	}
}

static void count_words(audit *au, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (isspace(c)) {
			au->in_word = 0;
		} else if (isalnum(c) || c >= 0x80) {
			if (!au->in_word)
				au->words++;
			au->in_word = 1;
		}
		/* punctuation joins or ends nothing on its own: "a - b" is
		 * two words, "e-mail" one */
	}
}

#define VISIBLE 1u /* walk flag: inside <body>, outside script and style */

static int on_element(void *ud, myhtml_tree_node_t *e, unsigned *flags)
{
	audit *au = ud;
	myhtml_tag_id_t tag = myhtml_node_tag_id(e);
	const char *href;
	int rc = 0;

	switch (tag) {
	case MyHTML_TAG_BODY:
		*flags |= VISIBLE;
		break;
	case MyHTML_TAG_TITLE:
		/* an <svg><title> is not the document's */
		if (!au->title && myhtml_node_namespace(e) == MyHTML_NAMESPACE_HTML)
			au->title = e;
		*flags &= ~VISIBLE;
		break;
	case MyHTML_TAG_META:
		on_meta(au, e);
		break;
	case MyHTML_TAG_LINK:
		rc = on_link(au, e);
		break;
	case MyHTML_TAG_H1:
	case MyHTML_TAG_H2: {
		json_t *t = text_json(e);

		if (t == NULL || json_array_append_new(tag == MyHTML_TAG_H1 ? au->h1 : au->h2, t) != 0)
			rc = SEO_ENOMEM;
		break;
	}
	case MyHTML_TAG_H3:
		au->h3++;
		break;
	case MyHTML_TAG_IMG:
		au->images++;
		if (rt__attr(e, "alt") == NULL)
			au->missing_alt++;
		break;
	case MyHTML_TAG_A:
		if ((href = rt__attr(e, "href")) != NULL)
			count_link(au, href);
		break;
	case MyHTML_TAG_SCRIPT:
		if (rt__is_json_ld(e))
			rc = on_json_ld(au, e);
		*flags &= ~VISIBLE;
		break;
	case MyHTML_TAG_STYLE:
	case MyHTML_TAG_NOSCRIPT:
	case MyHTML_TAG_TEMPLATE:
		*flags &= ~VISIBLE;
		break;
	default:
		break;
	}
	if (!inline_tag(tag))
		au->in_word = 0;
	return rc;
}

static void on_leave(void *ud, myhtml_tree_node_t *n)
{
	audit *au = ud;

	if (!inline_tag(myhtml_node_tag_id(n)))
		au->in_word = 0;
}

static void on_text(void *ud, const char *s, size_t len, unsigned flags)
{
	if (flags & VISIBLE)
		count_words(ud, s, len);
}

/* {text, length, optimal} of a title or description. */
static json_t *measured(json_t *text, long lo, long hi)
{
	long len = text ? (long)utf8_chars(json_string_value(text)) : 0;

	return json_pack("{s:o,s:I,s:b}", "text", text ? text : json_null(),
			 "length", (json_int_t)len, "optimal", len >= lo && len <= hi);
}

static json_t *str_or_empty(const char *s)
{
	return json_string(s ? s : "");
}

/* Applies one robots directive list to *index / *follow. Directives
 * scoped to a named crawler ("otherbot: noindex") are not general and are
 * skipped. */
static void robots_apply(const char *list, int *index, int *follow)
{
	for (const char *p = list; p && *p;) {
		size_t len = strcspn(p, ",");
		char tok[32];
		size_t n = 0;

		for (size_t i = 0; i < len && n + 1 < sizeof(tok); i++)
			if (!isspace((unsigned char)p[i]))
				tok[n++] = (char)tolower((unsigned char)p[i]);
		tok[n] = '\0';
		if (strcmp(tok, "noindex") == 0 || strcmp(tok, "none") == 0)
			*index = 0;
		if (strcmp(tok, "nofollow") == 0 || strcmp(tok, "none") == 0)
			*follow = 0;
		p += len;
		if (*p == ',')
			p++;
	}
}

static const char *header(const rt_page *p, const char *name)
{
	for (size_t i = 0; i < p->n_headers; i++)
		if (strcmp(p->headers[i].name, name) == 0)
			return p->headers[i].value;
	return NULL;
}

static json_t *robots_json(const audit *au)
{
	const rt_page *p = au->page;
	int index = 1, follow = 1;
	rt__sbuf raw = {0};

	rt__sb_add(&raw, "", 0);
	if (au->robots) {
		robots_apply(au->robots, &index, &follow);
		rt__sb_add(&raw, au->robots, strlen(au->robots));
	}
	for (size_t i = 0; i < p->n_headers; i++) {
		const char *v = p->headers[i].value;
		size_t colon = strcspn(v, ":,");

		if (strcmp(p->headers[i].name, "x-robots-tag") != 0)
			continue;
		if (v[colon] == ':' && strncasecmp(v, "unavailable_after", 17) != 0 &&
		    strncasecmp(v, "max-", 4) != 0)
			continue; /* "otherbot: noindex" */
		robots_apply(v, &index, &follow);
		if (raw.len > 0)
			rt__sb_add(&raw, ", ", 2);
		rt__sb_add(&raw, v, strlen(v));
	}
	if (raw.oom)
		return NULL;
	json_t *j = json_pack("{s:b,s:b,s:s}", "index", index, "follow", follow,
			      "raw", raw.s);
	free(raw.s);
	return j;
}

static json_t *language_json(const audit *au)
{
	const char *tag = NULL, *source = "none";
	const char *cl = header(au->page, "content-language");
	char primary[16], clean[64];
	size_t n = 0, len;

	if (au->lang && *au->lang) {
		tag = au->lang;
		source = "html_lang";
	} else if (cl && *cl) {
		tag = cl;
		source = "content_language_header";
	} else if (au->meta_lang && *au->meta_lang) {
		tag = au->meta_lang;
		source = "meta_content_language";
	}
	/* first tag of a list ("de-DE, en"), trimmed */
	while (tag && isspace((unsigned char)*tag))
		tag++;
	len = tag ? strcspn(tag, ", \t") : 0;
	if (len >= sizeof(clean)) {
		len = sizeof(clean) - 1;
		/* cut before a character, never inside one: json_pack()
		 * refuses broken UTF-8 */
		while (len > 0 && ((unsigned char)tag[len] & 0xc0) == 0x80)
			len--;
	}
	if (tag)
		memcpy(clean, tag, len);
	clean[len] = '\0';
	for (; n < len && n + 1 < sizeof(primary) && isalpha((unsigned char)clean[n]); n++)
		primary[n] = (char)tolower((unsigned char)clean[n]);
	primary[n] = '\0';
	return json_pack("{s:s,s:s,s:s}", "primary", primary, "tag", clean,
			 "source", source);
}

static json_t *canonical_json(const audit *au)
{
	seo_url c, f;
	int self = 0;
	json_t *url;

	if (au->canonical == NULL)
		return json_pack("{s:n,s:b}", "url", "self_referential", 0);
	url = url_json(au, au->canonical);
	if (url == NULL)
		return NULL;
	if (seo_url_parse(json_string_value(url), au->a, &c) == 0 &&
	    seo_url_resolve(au->page->final_url, au->page->final_url, au->a, &f) == 0)
		self = strcmp(c.href, f.href) == 0;
	return json_pack("{s:o,s:b}", "url", url, "self_referential", self);
}

static json_t *build(audit *au)
{
	const rt_page *p = au->page;
	json_t *og = json_object(), *title = NULL, *desc = NULL, *out;

	if (og == NULL)
		return NULL;
	for (int i = 0; i < 5; i++)
		json_object_set_new(og, og_names[i], str_or_empty(au->og[i]));
	if (au->title != NULL && (title = text_json(au->title)) == NULL)
		goto oom;
	if (au->description != NULL) {
		char *d = seo_arena_strdup(au->a, au->description);

		if (d == NULL)
			goto oom;
		collapse(d);
		if ((desc = json_string(d)) == NULL)
			goto oom;
	}
	out = json_pack("{s:s,s:s,s:I,s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:O,"
			"s:{s:O,s:O,s:I},s:o,s:{s:o,s:o},s:O,s:{s:I,s:I},"
			"s:{s:I,s:I},s:I,s:o}",
			"url", p->url, "final_url", p->final_url,
			"status_code", (json_int_t)p->status,
			"response_time_ms", (json_int_t)p->response_time_ms,
			"title", measured(title, TITLE_MIN, TITLE_MAX),
			"description", measured(desc, DESC_MIN, DESC_MAX),
			"canonical", canonical_json(au),
			"robots", robots_json(au),
			"viewport", str_or_empty(au->viewport),
			"language", language_json(au),
			"hreflang", au->hreflang,
			"headings", "h1", au->h1, "h2", au->h2, "h3_count", (json_int_t)au->h3,
			"og", og,
			"twitter", "card", str_or_empty(au->twitter_card),
			"title", str_or_empty(au->twitter_title),
			"json_ld", au->json_ld,
			"images", "total", (json_int_t)au->images,
			"missing_alt", (json_int_t)au->missing_alt,
			"links", "internal", (json_int_t)au->internal,
			"external", (json_int_t)au->external,
			"word_count", (json_int_t)au->words,
			"favicon", au->favicon ? url_json(au, au->favicon) : json_string(""));
	return out;
oom:
	json_decref(og);
	json_decref(title);
	return NULL;
}

int rt_page_seo(const rt_page *page, json_t **out)
{
	rt__html *h = NULL;
	myhtml_tree_t *tree;
	myhtml_tree_node_t *root, *head;
	audit au;
	const char *base_href = NULL;
	char host[256];
	int rc = SEO_ENOMEM;

	memset(&au, 0, sizeof(au));
	au.page = page;
	au.base = page->final_url;
	au.a = seo_arena_new(0);
	au.hreflang = json_array();
	au.h1 = json_array();
	au.h2 = json_array();
	au.json_ld = json_array();
	if (au.a == NULL || !au.hreflang || !au.h1 || !au.h2 || !au.json_ld ||
	    rt__html_parse(page->html, page->html_len, &h) != 0)
		goto out;
	tree = rt__html_tree(h);
	if ((root = myhtml_tree_get_node_html(tree)) != NULL)
		au.lang = rt__attr(root, "lang");
	/* <base href> changes what relative URLs mean; it must come first */
	head = myhtml_tree_get_node_head(tree);
	for (myhtml_tree_node_t *c = head ? myhtml_node_child(head) : NULL; c != NULL;
	     c = myhtml_node_next(c))
		if (myhtml_node_tag_id(c) == MyHTML_TAG_BASE &&
		    (base_href = rt__attr(c, "href")) != NULL)
			break;
	if (base_href != NULL) {
		seo_url u;

		au.base = seo_url_resolve(au.base, base_href, au.a, &u) == 0 ? u.href : base_href;
	}
	if (href_host(au.base, host, sizeof(host)) != 1)
		host[0] = '\0';
	au.host = host;
	rc = rt__html_walk(myhtml_tree_get_document(tree),
			   &(rt__html_visitor){on_element, on_leave, on_text, &au});
	if (rc != 0)
		goto out;
	*out = build(&au);
	rc = *out ? 0 : SEO_ENOMEM;
out:
	json_decref(au.hreflang);
	json_decref(au.h1);
	json_decref(au.h2);
	json_decref(au.json_ld);
	rt__html_free(h);
	seo_arena_free(au.a);
	return rc;
}
