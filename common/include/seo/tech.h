/*
 * seo/tech.h: the technology fingerprint engine (library seo_tech).
 *
 * Rules are read from JSON in the Wappalyzer-compatible format:
 *
 *   {"categories": {"1": "cms"},            optional: numeric cats -> ours
 *    "technologies": {"WordPress": {
 *        "category": "cms",                 or "cats": ["cms"] / [1]
 *        "headers": {"x-pingback": "/xmlrpc\\.php"},
 *        "cookies": {"wp-settings-": ""},
 *        "meta": {"generator": "^WordPress ?([\\d.]+)?\\;version:\\1"},
 *        "scriptSrc": ["/wp-includes/"],
 *        "html": ["<link[^>]+/wp-content/"],
 *        "implies": ["PHP"]}}}
 *
 * Patterns are PCRE2 regular expressions matched case-insensitively; an
 * empty pattern means "present". A pattern may end in `\;version:\N` (the
 * version is capture N) and `\;confidence:N` (0..100). Unknown members are
 * ignored, as other Wappalyzer fields (icon, website, js, dom) are. A
 * technology whose numeric cats have no entry in "categories" is matched
 * (so that implies through it work) but not reported.
 *
 * Confidence: a match in headers, cookies or meta is definite, one in a
 * script URL or the HTML is high; `\;confidence:N` below 75 lowers a
 * pattern to medium, below 100 to high at most. A technology found by
 * several patterns takes the strongest; an implied one takes its implier's
 * confidence, lowered by a confidence suffix on the implies entry.
 *
 * Rules are compiled once (PCRE2 JIT) and are read-only afterwards, so one
 * set can serve many threads. Functions returning int return 0 or a
 * negative SEO_E* code (seo/errors.h).
 */
#ifndef SEO_TECH_H
#define SEO_TECH_H

#include <stddef.h>

#include "seo/arena.h"

/* Bytes of HTML that are searched; the rest of a page is ignored. */
#define SEO_TECH_HTML_MAX ((size_t)512 * 1024)

enum seo_tech_confidence {
	SEO_TECH_MEDIUM = 1,
	SEO_TECH_HIGH = 2,
	SEO_TECH_DEFINITE = 3,
};

/* "medium", "high" or "definite" (static). */
const char *seo_tech_confidence_name(int confidence);

typedef struct seo_tech_rules seo_tech_rules;

/*
 * Compiles the rule file text `json` (`len` bytes) into *out, freed with
 * seo_tech_rules_free(). On SEO_EINVAL (malformed JSON, a member of the
 * wrong type, an unknown category name, a pattern PCRE2 refuses, implies
 * naming an unknown technology) `err` (NULL allowed) receives why, with
 * the technology's name. Also SEO_ENOMEM.
 */
int seo_tech_rules_parse(const char *json, size_t len, seo_tech_rules **out,
			 char *err, size_t errlen);

/* seo_tech_rules_parse() on the file at `path`; SEO_EIO when it cannot be
 * read. */
int seo_tech_rules_load(const char *path, seo_tech_rules **out, char *err,
			size_t errlen);

/*
 * The rule file's path into `out` (`n` bytes): SEO_TECH_RULES when set,
 * else data/tech/rules.json of the source tree (from build/bin or
 * build/tests) or share/seo/tech/rules.json of an installed tree, both
 * relative to the running executable. Returns 0, SEO_ENOTFOUND or
 * SEO_ETOOBIG.
 */
int seo_tech_rules_path(char *out, size_t n);

/* Technologies in the set, reported or not. */
size_t seo_tech_rules_count(const seo_tech_rules *r);

/* NULL is allowed. */
void seo_tech_rules_free(seo_tech_rules *r);

/* A name/value pair: a header (any case of name), a cookie, a meta tag. */
typedef struct seo_tech_kv {
	const char *name;
	const char *value;
} seo_tech_kv;

/* What is known of a page; every part may be empty. Nothing is copied. */
typedef struct seo_tech_input {
	const seo_tech_kv *headers;
	size_t n_headers;
	const seo_tech_kv *cookies; /* from Set-Cookie */
	size_t n_cookies;
	const seo_tech_kv *meta;    /* name (or property) and content */
	size_t n_meta;
	const char *const *scripts; /* src of each <script> */
	size_t n_scripts;
	const char *html;           /* any bytes; the first SEO_TECH_HTML_MAX */
	size_t html_len;
} seo_tech_input;

/*
 * Fills `in` from a fetched page: `headers` as given, cookies from its
 * Set-Cookie headers, meta tags and script sources found anywhere in
 * `html` (a light tag scanner, no parser), and the HTML itself, of which
 * seo_tech_detect() searches the first SEO_TECH_HTML_MAX bytes. Arrays
 * live on `a`; strings point into the inputs or `a`. Returns 0 or
 * SEO_ENOMEM.
 */
int seo_tech_input_from_page(const seo_tech_kv *headers, size_t n_headers,
			     const char *html, size_t html_len, seo_arena *a,
			     seo_tech_input *in);

typedef struct seo_tech_match {
	const char *name;     /* owned by the rules */
	const char *category; /* owned by the rules */
	const char *version;  /* on the arena; NULL when unknown */
	int confidence;       /* enum seo_tech_confidence */
} seo_tech_match;

/*
 * Every reported technology of `in`, strongest confidence first, then by
 * name; *out (on `a`) holds *n of them. Thread-safe for a shared `r`.
 * Returns 0 or SEO_ENOMEM.
 */
int seo_tech_detect(const seo_tech_rules *r, const seo_tech_input *in,
		    seo_arena *a, seo_tech_match **out, size_t *n);

#endif
