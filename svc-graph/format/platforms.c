/*
 * platforms.c: the supported platforms, one table (slug, name, category,
 * the rule file's technology and the aliases a caller may use) that the
 * ingest detects by and the query side answers from.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <seo/errors.h>

#include "format.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Names are compared with case, blanks, dots, hyphens and underscores
 * folded away ("Word Press", "wordpress.org" and "WordPress" are one). */
#define KEY_MAX 64
/* Aliases per platform, besides its slug and name. */
#define ALIASES_MAX 4

/* Index order is the spec's order of the supported slugs; it is also the
 * order of the index's platform section, so a change is a new format
 * version. Categories are the rule file's names (cms, ecommerce,
 * payments) where one fits, else the kind of product. */
static const graph_platform platforms[GRAPH_PLATFORM_COUNT] = {
	{"wix", "Wix", "website_builder", "Wix"},
	{"wordpress", "WordPress", "cms", "WordPress"},
	{"squarespace", "Squarespace", "website_builder", "Squarespace"},
	{"webflow", "Webflow", "website_builder", "Webflow"},
	{"framer", "Framer", "website_builder", "Framer"},
	{"tilda", "Tilda", "website_builder", "Tilda"},
	{"weebly", "Weebly", "website_builder", "Weebly"},
	{"strikingly", "Strikingly", "website_builder", "Strikingly"},
	{"bubble", "Bubble", "no_code", "Bubble"},
	{"softr", "Softr", "no_code", "Softr"},
	{"carrd", "Carrd", "website_builder", "Carrd"},
	{"godaddy_builder", "GoDaddy Website Builder", "website_builder",
	 "GoDaddy Website Builder"},
	{"contentful", "Contentful", "headless_cms", "Contentful"},
	{"sanity", "Sanity", "headless_cms", "Sanity"},
	{"shopify", "Shopify", "ecommerce", "Shopify"},
	{"bigcommerce", "BigCommerce", "ecommerce", "BigCommerce"},
	{"kajabi", "Kajabi", "online_courses", "Kajabi"},
	{"thinkific", "Thinkific", "online_courses", "Thinkific"},
	{"paypal", "PayPal", "payments", "PayPal"},
};

/* Other names callers use, besides each slug and name (same order);
 * spellings that only differ by folding need no entry. */
static const char *const aliases[GRAPH_PLATFORM_COUNT][ALIASES_MAX] = {
	{"wix.com"},
	{"wp", "wordpress.org", "wordpress.com"},
	{NULL},
	{NULL},
	{"framer sites"},
	{"tilda publishing", "tilda.cc"},
	{"weebly.com"},
	{"strikingly.com"},
	{"bubble.io"},
	{"softr.io"},
	{"carrd.co"},
	{"godaddy", "godaddy sites", "websites + marketing"},
	{NULL},
	{"sanity.io"},
	{"shopify plus"},
	{NULL},
	{NULL},
	{NULL},
	{NULL},
};

const graph_platform *graph_platforms(size_t *n)
{
	*n = N(platforms);
	return platforms;
}

const char *graph_platform_slugs(void)
{
	return "wix, wordpress, squarespace, webflow, framer, tilda, weebly, "
	       "strikingly, bubble, softr, carrd, godaddy_builder, contentful, "
	       "sanity, shopify, bigcommerce, kajabi, thinkific, paypal";
}

/* The comparison key of a name into `out` (KEY_MAX bytes); 0 when it is
 * empty or too long to be any platform's. */
static size_t fold(const char *s, char *out)
{
	size_t n = 0;

	for (; *s; s++) {
		if (strchr(" \t._-", *s))
			continue;
		if (n + 1 >= KEY_MAX)
			return 0;
		out[n++] = (char)tolower((unsigned char)*s);
	}
	out[n] = '\0';
	return n;
}

static int same(const char *key, const char *name)
{
	char k[KEY_MAX];

	return name != NULL && fold(name, k) > 0 && strcmp(k, key) == 0;
}

int graph_platform_find(const char *name, size_t *idx)
{
	char key[KEY_MAX];

	if (name == NULL || fold(name, key) == 0)
		return SEO_ENOTFOUND;
	for (size_t i = 0; i < N(platforms); i++) {
		int hit = same(key, platforms[i].slug) ||
			  same(key, platforms[i].name);

		for (size_t k = 0; !hit && k < ALIASES_MAX; k++)
			hit = same(key, aliases[i][k]);
		if (hit) {
			*idx = i;
			return 0;
		}
	}
	return SEO_ENOTFOUND;
}

int graph__platform_of_tech(const char *tech)
{
	for (size_t i = 0; i < N(platforms); i++)
		if (strcmp(platforms[i].tech, tech) == 0)
			return (int)i;
	return -1;
}
