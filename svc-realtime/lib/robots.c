/*
 * robots.c: robots.txt as Google reads it (RFC 9309 plus Google's
 * leniencies): groups of user-agent lines and their rules, sitemap lines
 * anywhere, crawl-delay, and the longest-match matcher with * and $.
 *
 * Reading rules: a UTF-8 BOM is skipped; lines end at LF, CR or CRLF; '#'
 * starts a comment; keys are case-insensitive and a few frequent typos of
 * Google's list are accepted ("useragent", "disalow", "site-map"...); a
 * line without ':' is read as "key value" when the value is one token.
 * Consecutive user-agent lines share a group; an allow or disallow line
 * ends the run, so the next user-agent starts a new group (sitemap and
 * crawl-delay lines do not, as in Google's parser). Rules before any
 * user-agent and empty patterns are ignored.
 */
#include "rt.h"

#include "seo/errors.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum kind { K_NONE, K_AGENT, K_ALLOW, K_DISALLOW, K_SITEMAP, K_DELAY };

static const struct { const char *key; enum kind kind; } keys[] = {
	{"user-agent", K_AGENT}, {"useragent", K_AGENT}, {"user agent", K_AGENT},
	{"allow", K_ALLOW},
	{"disallow", K_DISALLOW}, {"dissallow", K_DISALLOW}, {"dissalow", K_DISALLOW},
	{"disalow", K_DISALLOW}, {"diasllow", K_DISALLOW}, {"disallaw", K_DISALLOW},
	{"sitemap", K_SITEMAP}, {"site-map", K_SITEMAP},
	{"crawl-delay", K_DELAY},
};

typedef struct rec {
	enum kind kind;
	const char *val;
	long group; /* index of the group a rule belongs to, -1: none */
} rec;

static int is_ws(char c)
{
	return c == ' ' || c == '\t';
}

/* Splits one line (comment already cut) into key and value; K_NONE when
 * it is not a known key-value line. */
static enum kind split(const char *s, size_t n, const char **val, size_t *vlen)
{
	const char *colon, *v;
	size_t klen;

	while (n > 0 && is_ws(*s))
		s++, n--;
	while (n > 0 && is_ws(s[n - 1]))
		n--;
	colon = memchr(s, ':', n);
	if (colon != NULL) {
		klen = (size_t)(colon - s);
		v = colon + 1;
	} else {
		/* "Disallow /x": a space separates key and one-token value */
		for (klen = 0; klen < n && !is_ws(s[klen]); klen++)
			;
		v = s + klen;
		while (v < s + n && is_ws(*v))
			v++;
		if (v == s + n || memchr(v, ' ', (size_t)(s + n - v)) != NULL ||
		    memchr(v, '\t', (size_t)(s + n - v)) != NULL)
			return K_NONE;
	}
	while (klen > 0 && is_ws(s[klen - 1]))
		klen--;
	while (v < s + n && is_ws(*v))
		v++;
	*val = v;
	*vlen = (size_t)(s + n - v);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strlen(keys[i].key) == klen && strncasecmp(s, keys[i].key, klen) == 0)
			return keys[i].kind;
	return K_NONE;
}

/* The product token of a user-agent value ("Googlebot/2.1" -> "Googlebot",
 * "*" stays), as a length. */
static size_t product_token(const char *v, size_t n)
{
	size_t i = 0;

	if (n > 0 && v[0] == '*')
		return 1;
	while (i < n && (isalpha((unsigned char)v[i]) || v[i] == '_' || v[i] == '-'))
		i++;
	return i;
}

/* Normalises a pattern or path for matching: bytes outside printable
 * ASCII are percent-encoded and existing escapes upper-cased, as Google
 * does. A new string on `a`, or NULL. */
static char *normalise(seo_arena *a, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	char *out = seo_arena_alloc(a, 3 * n + 1), *o = out;

	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '%' && i + 2 < n && isxdigit((unsigned char)s[i + 1]) &&
		    isxdigit((unsigned char)s[i + 2])) {
			*o++ = '%';
			*o++ = (char)toupper((unsigned char)s[++i]);
			*o++ = (char)toupper((unsigned char)s[++i]);
		} else if (c <= 0x20 || c >= 0x7f) {
			*o++ = '%';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		} else {
			*o++ = (char)c;
		}
	}
	*o = '\0';
	return out;
}

/* Reads the records of `txt`: one per known line, in order. */
static int read_records(const char *txt, size_t len, seo_arena *a, rec **out,
			size_t *n_out)
{
	size_t cap = 1, n = 0;
	rec *recs;

	for (size_t i = 0; i < len; i++)
		cap += txt[i] == '\n' || txt[i] == '\r';
	recs = seo_arena_alloc(a, cap * sizeof(*recs));
	if (recs == NULL)
		return SEO_ENOMEM;
	for (size_t i = 0; i < len;) {
		size_t end = i, ll, vlen;
		const char *v, *hash;
		enum kind k;

		while (end < len && txt[end] != '\n' && txt[end] != '\r')
			end++;
		ll = end - i;
		if ((hash = memchr(txt + i, '#', ll)) != NULL)
			ll = (size_t)(hash - (txt + i));
		k = split(txt + i, ll, &v, &vlen);
		if (k == K_AGENT)
			vlen = product_token(v, vlen);
		if (k != K_NONE) {
			recs[n].kind = k;
			recs[n].group = -1;
			recs[n].val = k == K_ALLOW || k == K_DISALLOW ?
				normalise(a, v, vlen) : seo_arena_strndup(a, v, vlen);
			if (recs[n].val == NULL)
				return SEO_ENOMEM;
			n++;
		}
		/* CRLF is one line break */
		i = end + (end + 1 < len && txt[end] == '\r' && txt[end + 1] == '\n' ? 2 : 1);
	}
	*out = recs;
	*n_out = n;
	return 0;
}

/* Builds the groups of `recs` on `a`. */
static int build_groups(rec *recs, size_t n, seo_arena *a, rt_robots *r)
{
	long groups = 0;
	int in_agents = 0;

	for (size_t i = 0; i < n; i++) {
		if (recs[i].kind == K_AGENT && !in_agents) {
			groups++;
			in_agents = 1;
		} else if (recs[i].kind == K_ALLOW || recs[i].kind == K_DISALLOW) {
			in_agents = 0;
		}
		if (recs[i].kind != K_SITEMAP)
			recs[i].group = groups - 1;
	}
	r->n_groups = (size_t)groups;
	r->groups = seo_arena_calloc(a, (groups ? (size_t)groups : 1) * sizeof(*r->groups));
	if (r->groups == NULL)
		return SEO_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		rt_robots_group *g = recs[i].group >= 0 ? &r->groups[recs[i].group] : NULL;

		if (g == NULL)
			continue;
		if (recs[i].kind == K_AGENT)
			g->n_agents++;
		else if ((recs[i].kind == K_ALLOW || recs[i].kind == K_DISALLOW) && *recs[i].val)
			g->n_rules++;
	}
	for (long gi = 0; gi < groups; gi++) {
		rt_robots_group *g = &r->groups[gi];

		g->agents = seo_arena_alloc(a, (g->n_agents + 1) * sizeof(*g->agents));
		g->rules = seo_arena_alloc(a, (g->n_rules + 1) * sizeof(*g->rules));
		if (g->agents == NULL || g->rules == NULL)
			return SEO_ENOMEM;
		g->n_agents = g->n_rules = 0;
		g->crawl_delay = -1;
	}
	for (size_t i = 0; i < n; i++) {
		rt_robots_group *g = recs[i].group >= 0 ? &r->groups[recs[i].group] : NULL;
		char *end;
		double d;

		if (g == NULL)
			continue;
		switch (recs[i].kind) {
		case K_AGENT:
			g->agents[g->n_agents++] = recs[i].val;
			break;
		case K_ALLOW:
		case K_DISALLOW:
			if (*recs[i].val)
				g->rules[g->n_rules++] = (rt_robots_rule){
					recs[i].kind == K_ALLOW, recs[i].val};
			break;
		case K_DELAY:
			d = strtod(recs[i].val, &end);
			if (end != recs[i].val && *end == '\0' && d >= 0 && g->crawl_delay < 0)
				g->crawl_delay = d;
			break;
		default:
			break;
		}
	}
	return 0;
}

/* The absolute http(s) sitemap URLs, canonicalised; others are dropped. */
static int collect_sitemaps(const rec *recs, size_t n, seo_arena *a, rt_robots *r)
{
	r->sitemaps = seo_arena_alloc(a, (n + 1) * sizeof(*r->sitemaps));
	if (r->sitemaps == NULL)
		return SEO_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		seo_url u;
		int rc;

		if (recs[i].kind != K_SITEMAP)
			continue;
		rc = seo_url_parse(recs[i].val, a, &u);
		if (rc == SEO_ENOMEM)
			return rc;
		if (rc == 0)
			r->sitemaps[r->n_sitemaps++] = u.href;
	}
	return 0;
}

int rt_robots_parse(const char *txt, size_t len, seo_arena *a, rt_robots *out)
{
	rec *recs = NULL;
	size_t n = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if (len > RT_ROBOTS_MAX_BYTES) {
		/* the rest is ignored, like Google does, and so is the line
		 * the cut falls in */
		len = RT_ROBOTS_MAX_BYTES;
		while (len > 0 && txt[len - 1] != '\n' && txt[len - 1] != '\r')
			len--;
		out->truncated = 1;
	}
	if (len >= 3 && memcmp(txt, "\xef\xbb\xbf", 3) == 0) {
		txt += 3;
		len -= 3;
	}
	rc = read_records(txt, len, a, &recs, &n);
	if (rc == 0)
		rc = build_groups(recs, n, a, out);
	if (rc == 0)
		rc = collect_sitemaps(recs, n, a, out);
	return rc;
}

/* 1 when `pat` matches the start of `s` (the whole of it when `pat` ends
 * with '$'); '*' matches any run. Backtracks to the last '*' only, which
 * is enough for patterns whose one wildcard is '*'. */
static int pattern_match(const char *s, const char *pat)
{
	size_t sn = strlen(s), pn = strlen(pat), si = 0, pi = 0;
	size_t star = SIZE_MAX, mark = 0;
	int anchored = pn > 0 && pat[pn - 1] == '$';

	if (anchored)
		pn--;
	while (si < sn) {
		if (pi == pn && !anchored)
			return 1;
		if (pi < pn && pat[pi] == '*') {
			star = pi++;
			mark = si;
		} else if (pi < pn && pat[pi] == s[si]) {
			pi++;
			si++;
		} else if (star != SIZE_MAX) {
			pi = star + 1;
			si = ++mark;
		} else {
			return 0;
		}
	}
	while (pi < pn && pat[pi] == '*')
		pi++;
	return pi == pn;
}

/* 1 when group `g` names the product token `tok` ("*" only names "*"). */
static int names(const rt_robots_group *g, const char *tok, size_t n)
{
	for (size_t i = 0; i < g->n_agents; i++)
		if (strlen(g->agents[i]) == n && strncasecmp(g->agents[i], tok, n) == 0)
			return 1;
	return 0;
}

int rt_robots_allowed(const rt_robots *r, const char *agent, const char *path,
		      int *allowed)
{
	seo_arena *a = seo_arena_new(0);
	size_t tok = product_token(agent, strlen(agent));
	const char *p;
	int global = tok == 0 || (tok == 1 && agent[0] == '*'), specific = 0;
	size_t best_len = 0;
	int best_allow = 1;
	int rc = SEO_ENOMEM;

	if (a == NULL)
		goto out;
	if (*path == '\0')
		path = "/";
	if ((p = normalise(a, path, strlen(path))) == NULL)
		goto out;
	/* the groups naming this crawler, combined; else those of "*" */
	if (!global)
		for (size_t g = 0; g < r->n_groups && !specific; g++)
			specific = names(&r->groups[g], agent, tok);
	for (size_t g = 0; g < r->n_groups; g++) {
		const rt_robots_group *grp = &r->groups[g];

		if (!(specific ? names(grp, agent, tok) : names(grp, "*", 1)))
			continue;
		for (size_t i = 0; i < grp->n_rules; i++) {
			const rt_robots_rule *rule = &grp->rules[i];
			size_t n = strlen(rule->pattern);

			/* the longest pattern wins; on a tie, allow */
			if (pattern_match(p, rule->pattern) &&
			    (n > best_len || (n == best_len && rule->allow))) {
				best_len = n;
				best_allow = rule->allow;
			}
		}
	}
	*allowed = best_allow;
	rc = 0;
out:
	seo_arena_free(a);
	return rc;
}

/* 1 when a pattern matches every path: only '/' and '*', '/' at most
 * once and first: "/", "*", "/" then stars. */
static int matches_all(const char *pat)
{
	if (*pat == '/')
		pat++;
	while (*pat == '*')
		pat++;
	return *pat == '\0';
}

int rt_robots_facts(const rt_robots *r, json_t **out)
{
	int blocked = 0, reopened = 0;

	for (size_t g = 0; r != NULL && g < r->n_groups; g++) {
		if (!names(&r->groups[g], "*", 1))
			continue;
		for (size_t i = 0; i < r->groups[g].n_rules; i++) {
			const rt_robots_rule *rule = &r->groups[g].rules[i];

			if (rule->allow)
				reopened = 1;
			else if (matches_all(rule->pattern))
				blocked = 1;
		}
	}
	*out = json_pack("{s:b,s:b,s:b}", "present", r != NULL,
			 "disallow_all", blocked && !reopened,
			 "sitemap_declared", r != NULL && r->n_sitemaps > 0);
	return *out ? 0 : SEO_ENOMEM;
}
