/*
 * tech.c: the technology fingerprint engine (seo/tech.h).
 *
 * Each pattern is compiled with PCRE2 JIT. Header, cookie and meta
 * patterns are looked up by name, so only a few run per page. Script URL
 * and HTML patterns would each scan the whole input; instead every such
 * pattern gets the longest literal it cannot match without (extracted
 * from the regex), one Aho-Corasick pass per input finds which literals
 * occur, and only the patterns whose literal occurred (or that have none)
 * run.
 */
#define PCRE2_CODE_UNIT_WIDTH 8

#include "seo/tech.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>
#include <pcre2.h>

#include "seo/config.h"
#include "seo/errors.h"
#include "seo/util.h"

/* The spec's categories: the only ones a rule may name. */
static const char *const categories[] = {
	"framework", "cms", "ecommerce", "analytics", "cdn", "hosting",
	"email_marketing", "ab_testing", "payments", "crm", "support",
};

enum kind { K_HEADER, K_COOKIE, K_META, K_SCRIPT, K_HTML, N_KINDS };

/* Member of a technology per kind, and the confidence a match gives. */
static const struct {
	const char *member;
	int keyed; /* an object {name: pattern} rather than a list */
	int confidence;
} kinds[N_KINDS] = {
	[K_HEADER] = {"headers", 1, SEO_TECH_DEFINITE},
	[K_COOKIE] = {"cookies", 1, SEO_TECH_DEFINITE},
	[K_META] = {"meta", 1, SEO_TECH_DEFINITE},
	[K_SCRIPT] = {"scriptSrc", 0, SEO_TECH_HIGH},
	[K_HTML] = {"html", 0, SEO_TECH_HIGH},
};

/* Shorter literals would let too many patterns through to be worth it. */
#define MIN_LITERAL 3
#define MAX_GROUPS 10

typedef struct pattern {
	size_t tech;
	char *key;       /* keyed kinds: the name, matched in any case */
	pcre2_code *re;  /* NULL: presence alone matches */
	char *version;   /* template with \N for capture N, or NULL */
	int confidence;
	long literal;    /* prefilter literal, or -1: always run */
} pattern;

typedef struct tech {
	char *name;
	const char *category; /* one of categories[], or NULL: not reported */
	size_t *implies;
	int *implies_conf;
	size_t n_implies;
} tech;

/* Aho-Corasick automaton over case-folded bytes, with bytes mapped to
 * the classes that occur in the literals so that rows stay small. */
typedef struct acm {
	uint8_t cls[256];
	size_t ncls, nstates, nlits;
	int32_t *next; /* nstates * ncls, complete (a DFA) */
	int32_t *out;  /* literal ending at the state, or -1 */
	int32_t *dict; /* nearest suffix state with an output; 0: none */
} acm;

struct seo_tech_rules {
	tech *techs;
	size_t n_techs;
	pattern *pats[N_KINDS];
	size_t n_pats[N_KINDS];
	acm ac[N_KINDS]; /* K_SCRIPT and K_HTML */
};

const char *seo_tech_confidence_name(int confidence)
{
	return confidence >= SEO_TECH_DEFINITE ? "definite"
	       : confidence == SEO_TECH_HIGH	? "high"
						: "medium";
}

/* ---- literal extraction ------------------------------------------------- */

/*
 * The longest run of characters every match of `re` contains, lowercased,
 * into buf; 0 when there is none worth using. Only top-level atoms count
 * (a group may be optional or an alternation), a top-level alternation
 * gives up, and a quantifier that allows zero takes back the character
 * before it.
 */
static size_t required_literal(const char *re, char *buf, size_t cap)
{
	size_t best = 0, cur = 0;
	char run[256];
	int depth = 0;

	for (const char *p = re; *p; p++) {
		int c = (unsigned char)*p, lit = -1;

		/* one alternative alone need not occur */
		if (c == '|' && depth == 0)
			return 0;
		if (c == '\\' && p[1] != '\0') {
			c = (unsigned char)*++p;
			/* \d, \w, \b, \1...: classes and assertions; the
			 * operands of \x41, \x{41} and \p{L} are no text */
			if (!isalnum(c))
				lit = c;
			else if (p[1] == '{')
				while (p[1] != '\0' && *p != '}')
					p++;
			else if (c == 'x')
				for (int i = 0; i < 2 && isxdigit((unsigned char)p[1]); i++)
					p++;
		} else if (c == '[') {
			for (p++; *p && *p != ']'; p++)
				if (*p == '\\' && p[1] != '\0')
					p++;
			if (*p == '\0')
				break;
		} else if (c == '?' || c == '*' ||
			   (c == '{' && isdigit((unsigned char)p[1]))) {
			if (cur > 0 && (c != '{' || p[1] == '0'))
				cur--;
			if (c == '{')
				while (p[1] != '\0' && *p != '}')
					p++;
		} else {
			depth += c == '(' ? 1 : c == ')' ? -1 : 0;
			if (!strchr("()^$.+{}", c))
				lit = c;
		}
		if (lit >= 0 && depth == 0 && cur < sizeof(run)) {
			run[cur++] = (char)tolower(lit);
			continue;
		}
		/* of equal runs the later: patterns tend to narrow down towards
		 * their end ("<[^>]+class=\"[^\"]*svelte-") */
		if (cur >= best && cur > 0 && cur < cap) {
			memcpy(buf, run, cur);
			best = cur;
		}
		cur = 0;
	}
	if (cur >= best && cur > 0 && cur < cap) {
		memcpy(buf, run, cur);
		best = cur;
	}
	return best >= MIN_LITERAL ? best : 0;
}

/* ---- Aho-Corasick ------------------------------------------------------- */

static void acm_free(acm *m)
{
	free(m->next);
	free(m->out);
	free(m->dict);
}

static int acm_build(acm *m, char *const *lits, size_t n)
{
	size_t total = 1, head = 0, tail = 0;
	int32_t *queue = NULL, *fail = NULL;
	int rc = SEO_ENOMEM;

	memset(m->cls, 0, sizeof(m->cls));
	m->ncls = 1;
	m->nlits = n;
	for (size_t i = 0; i < n; i++) {
		total += strlen(lits[i]);
		for (const char *p = lits[i]; *p; p++) {
			unsigned char c = (unsigned char)*p;
			if (m->cls[c] == 0 && m->ncls < 255) {
				m->cls[c] = (uint8_t)m->ncls;
				m->cls[toupper(c)] = (uint8_t)m->ncls++;
			}
		}
	}
	m->next = calloc(total * m->ncls, sizeof(*m->next));
	m->out = malloc(total * sizeof(*m->out));
	m->dict = calloc(total, sizeof(*m->dict));
	queue = malloc(total * sizeof(*queue));
	if (m->next == NULL || m->out == NULL || m->dict == NULL || queue == NULL)
		goto out;
	for (size_t s = 0; s < total; s++)
		m->out[s] = -1;
	/* The trie; 0 is "no edge" while building, since no edge enters the
	 * root. */
	m->nstates = 1;
	for (size_t i = 0; i < n; i++) {
		int32_t s = 0;
		for (const char *p = lits[i]; *p; p++) {
			int32_t *e = &m->next[(size_t)s * m->ncls + m->cls[(unsigned char)*p]];
			if (*e == 0)
				*e = (int32_t)m->nstates++;
			s = *e;
		}
		m->out[s] = (int32_t)i;
	}
	/* Breadth first: failure links folded into the missing edges. */
	if ((fail = calloc(m->nstates, sizeof(*fail))) == NULL)
		goto out;
	for (size_t c = 0; c < m->ncls; c++)
		if (m->next[c] != 0)
			queue[tail++] = m->next[c];
	while (head < tail) {
		int32_t s = queue[head++];
		for (size_t c = 0; c < m->ncls; c++) {
			int32_t *e = &m->next[(size_t)s * m->ncls + c];
			int32_t f = m->next[(size_t)fail[s] * m->ncls + c];
			if (*e == 0) {
				*e = f;
				continue;
			}
			fail[*e] = f;
			m->dict[*e] = m->out[f] >= 0 ? f : m->dict[f];
			queue[tail++] = *e;
		}
	}
	rc = 0;
out:
	free(fail);
	free(queue);
	return rc;
}

/* Sets found[i] for each literal i occurring in s. */
static void acm_scan(const acm *m, const char *s, size_t len, uint8_t *found)
{
	int32_t st = 0;

	for (size_t i = 0; i < len; i++) {
		st = m->next[(size_t)st * m->ncls + m->cls[(unsigned char)s[i]]];
		for (int32_t t = m->out[st] >= 0 ? st : m->dict[st]; t != 0;
		     t = m->dict[t])
			found[m->out[t]] = 1;
	}
}

/* ---- rule parsing ------------------------------------------------------- */

typedef struct parser {
	seo_tech_rules *r;
	const json_t *cat_map; /* "categories", or NULL */
	char *err;
	size_t errlen;
	/* prefilter literals per kind, growing */
	char **lits[N_KINDS];
	size_t n_lits[N_KINDS], cap_lits[N_KINDS];
} parser;

__attribute__((format(printf, 2, 3))) static int bad(parser *ps,
						     const char *fmt, ...)
{
	va_list ap;

	if (ps->err != NULL && ps->errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(ps->err, ps->errlen, fmt, ap);
		va_end(ap);
	}
	return SEO_EINVAL;
}

/* A member that may be one string or an array of them: its i-th string,
 * NULL past the end or when it is not a string. */
static size_t n_strings(const json_t *v)
{
	return json_is_array(v) ? json_array_size(v) : v != NULL;
}

static const char *string_at(const json_t *v, size_t i)
{
	return json_string_value(json_is_array(v) ? json_array_get(v, i) : v);
}

/* Our confidence level for suffix value n on a pattern whose kind gives
 * `dflt`. */
static int level_of(long n, int dflt)
{
	if (n < 75)
		return SEO_TECH_MEDIUM;
	if (n < 100 && dflt > SEO_TECH_HIGH)
		return SEO_TECH_HIGH;
	return dflt;
}

/*
 * Splits "regex\;version:\1\;confidence:50" in place: returns the regex,
 * sets *version (NULL when absent) and *confidence.
 */
static char *split_suffixes(char *s, char **version, int *confidence, int dflt)
{
	char *sep = strstr(s, "\\;");

	*version = NULL;
	*confidence = dflt;
	while (sep != NULL) {
		char *item = sep + 2, *next = strstr(item, "\\;");
		*sep = '\0';
		if (next != NULL)
			*next = '\0';
		if (strncmp(item, "version:", 8) == 0)
			*version = item + 8;
		else if (strncmp(item, "confidence:", 11) == 0)
			*confidence = level_of(strtol(item + 11, NULL, 10), dflt);
		sep = next;
	}
	return s;
}

static long add_literal(parser *ps, int kind, const char *lit)
{
	for (size_t i = 0; i < ps->n_lits[kind]; i++)
		if (strcmp(ps->lits[kind][i], lit) == 0)
			return (long)i;
	if (ps->n_lits[kind] == ps->cap_lits[kind]) {
		size_t cap = ps->cap_lits[kind] ? 2 * ps->cap_lits[kind] : 64;
		char **l = realloc(ps->lits[kind], cap * sizeof(*l));
		if (l == NULL)
			return SEO_ENOMEM;
		ps->lits[kind] = l;
		ps->cap_lits[kind] = cap;
	}
	if ((ps->lits[kind][ps->n_lits[kind]] = strdup(lit)) == NULL)
		return SEO_ENOMEM;
	return (long)ps->n_lits[kind]++;
}

static int add_pattern(parser *ps, size_t t, int kind, const char *key,
		       const char *text)
{
	seo_tech_rules *r = ps->r;
	pattern *p, *grown;
	char *copy = strdup(text), *re, *version, lit[256];
	int rc = SEO_ENOMEM, errcode;
	PCRE2_SIZE erroff;

	if (copy == NULL)
		return SEO_ENOMEM;
	grown = realloc(r->pats[kind], (r->n_pats[kind] + 1) * sizeof(*grown));
	if (grown == NULL)
		goto out;
	r->pats[kind] = grown;
	p = &grown[r->n_pats[kind]];
	memset(p, 0, sizeof(*p));
	p->tech = t;
	p->literal = -1;
	re = split_suffixes(copy, &version, &p->confidence, kinds[kind].confidence);
	if ((key != NULL && (p->key = strdup(key)) == NULL) ||
	    (version != NULL && (p->version = strdup(version)) == NULL))
		goto undo;
	if (re[0] != '\0') {
		p->re = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED,
				      PCRE2_CASELESS, &errcode, &erroff, NULL);
		if (p->re == NULL) {
			PCRE2_UCHAR msg[128];
			pcre2_get_error_message(errcode, msg, sizeof(msg));
			rc = bad(ps, "%s: %s pattern \"%s\": %s at %zu",
				 r->techs[t].name, kinds[kind].member, re,
				 (const char *)msg, (size_t)erroff);
			goto undo;
		}
		/* Without JIT (unsupported CPU) PCRE2 still interprets. */
		pcre2_jit_compile(p->re, PCRE2_JIT_COMPLETE);
		if (!kinds[kind].keyed) {
			size_t n = required_literal(re, lit, sizeof(lit));
			if (n > 0) {
				lit[n] = '\0';
				p->literal = add_literal(ps, kind, lit);
				if (p->literal < 0)
					goto undo;
			}
		}
	}
	r->n_pats[kind]++;
	rc = 0;
	goto out;
undo:
	pcre2_code_free(p->re);
	free(p->key);
	free(p->version);
out:
	free(copy);
	return rc;
}

static const char *our_category(const char *name)
{
	for (size_t i = 0; i < sizeof(categories) / sizeof(categories[0]); i++)
		if (strcmp(name, categories[i]) == 0)
			return categories[i];
	return NULL;
}

/* The category of technology t from "category" (one name) or "cats" (a
 * list of names or numeric ids of the file's "categories"): the first of
 * ours. */
static int parse_category(parser *ps, size_t t, const json_t *def)
{
	const json_t *list = json_object_get(def, "category");
	tech *te = &ps->r->techs[t];

	if (list == NULL && (list = json_object_get(def, "cats")) == NULL)
		return bad(ps, "%s: no category", te->name);
	for (size_t i = 0; te->category == NULL && i < n_strings(list); i++) {
		const json_t *c = json_is_array(list) ? json_array_get(list, i) : list;
		const char *name = json_string_value(c);
		char id[32];

		if (json_is_integer(c)) {
			snprintf(id, sizeof(id), "%lld", (long long)json_integer_value(c));
			name = json_string_value(json_object_get(ps->cat_map, id));
			if (name == NULL)
				continue; /* not one of ours: matched, not reported */
		}
		if (name == NULL || (te->category = our_category(name)) == NULL)
			return bad(ps, "%s: unknown category", te->name);
	}
	return 0;
}

static int parse_tech(parser *ps, size_t t, const json_t *def)
{
	tech *te = &ps->r->techs[t];
	const json_t *implies = json_object_get(def, "implies");
	int rc;

	if (!json_is_object(def))
		return bad(ps, "%s: not an object", te->name);
	if ((rc = parse_category(ps, t, def)) != 0)
		return rc;
	for (int k = 0; k < N_KINDS; k++) {
		const json_t *m = json_object_get(def, kinds[k].member), *v;
		const char *key;

		if (m == NULL)
			continue;
		if (kinds[k].keyed) {
			if (!json_is_object(m))
				return bad(ps, "%s: %s is not an object", te->name,
					   kinds[k].member);
			json_object_foreach((json_t *)m, key, v) {
				for (size_t i = 0; i < n_strings(v); i++) {
					const char *s = string_at(v, i);
					if (s == NULL)
						return bad(ps, "%s: %s.%s is not a string",
							   te->name, kinds[k].member, key);
					if ((rc = add_pattern(ps, t, k, key, s)) != 0)
						return rc;
				}
			}
			continue;
		}
		for (size_t i = 0; i < n_strings(m); i++) {
			const char *s = string_at(m, i);
			if (s == NULL)
				return bad(ps, "%s: %s holds a non-string", te->name,
					   kinds[k].member);
			if ((rc = add_pattern(ps, t, k, NULL, s)) != 0)
				return rc;
		}
	}
	te->n_implies = n_strings(implies);
	te->implies = calloc(te->n_implies + 1, sizeof(*te->implies));
	te->implies_conf = calloc(te->n_implies + 1, sizeof(*te->implies_conf));
	if (te->implies == NULL || te->implies_conf == NULL)
		return SEO_ENOMEM;
	for (size_t i = 0; i < te->n_implies; i++) {
		const char *s = string_at(implies, i);
		char *copy, *name, *version;
		size_t j;

		if (s == NULL)
			return bad(ps, "%s: implies holds a non-string", te->name);
		if ((copy = strdup(s)) == NULL)
			return SEO_ENOMEM;
		name = split_suffixes(copy, &version, &te->implies_conf[i],
				      SEO_TECH_DEFINITE);
		for (j = 0; j < ps->r->n_techs; j++)
			if (strcmp(ps->r->techs[j].name, name) == 0)
				break;
		te->implies[i] = j;
		rc = j == ps->r->n_techs
			     ? bad(ps, "%s: implies unknown \"%s\"", te->name, name)
			     : 0;
		free(copy);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int seo_tech_rules_parse(const char *json, size_t len, seo_tech_rules **out,
			 char *err, size_t errlen)
{
	parser ps = {.err = err, .errlen = errlen};
	json_error_t jerr;
	json_t *root = json_loadb(json, len, 0, &jerr), *techs, *def;
	const char *name;
	size_t t = 0;
	int rc = SEO_ENOMEM;

	*out = NULL;
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (root == NULL) {
		rc = bad(&ps, "line %d: %s", jerr.line, jerr.text);
		goto out;
	}
	techs = json_object_get(root, "technologies");
	ps.cat_map = json_object_get(root, "categories");
	if (!json_is_object(techs)) {
		rc = bad(&ps, "no \"technologies\" object");
		goto out;
	}
	if ((ps.r = calloc(1, sizeof(*ps.r))) == NULL)
		goto out;
	ps.r->techs = calloc(json_object_size(techs) + 1, sizeof(*ps.r->techs));
	if (ps.r->techs == NULL)
		goto out;
	/* Names first, so that implies may point forward. */
	json_object_foreach(techs, name, def) {
		if ((ps.r->techs[ps.r->n_techs].name = strdup(name)) == NULL)
			goto out;
		ps.r->n_techs++;
	}
	json_object_foreach(techs, name, def) {
		if ((rc = parse_tech(&ps, t++, def)) != 0)
			goto out;
	}
	rc = 0;
	for (int k = K_SCRIPT; rc == 0 && k <= K_HTML; k++)
		rc = acm_build(&ps.r->ac[k], ps.lits[k], ps.n_lits[k]);
	if (rc == 0) {
		*out = ps.r;
		ps.r = NULL;
	}
out:
	for (int k = 0; k < N_KINDS; k++) {
		for (size_t i = 0; i < ps.n_lits[k]; i++)
			free(ps.lits[k][i]);
		free(ps.lits[k]);
	}
	seo_tech_rules_free(ps.r);
	json_decref(root);
	return rc;
}

int seo_tech_rules_load(const char *path, seo_tech_rules **out, char *err,
			size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long size;
	int rc = SEO_EIO;

	*out = NULL;
	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0)
		goto out;
	if ((buf = malloc((size_t)size + 1)) == NULL) {
		rc = SEO_ENOMEM;
		goto out;
	}
	if (fread(buf, 1, (size_t)size, f) != (size_t)size)
		goto out;
	rc = seo_tech_rules_parse(buf, (size_t)size, out, err, errlen);
out:
	if (rc == SEO_EIO && err != NULL && errlen > 0)
		snprintf(err, errlen, "cannot read %s", path);
	free(buf);
	if (f != NULL)
		fclose(f);
	return rc;
}

/* Where the rule file is, relative to the executable's directory. */
static const char *const exe_relative[] = {
	"../../data/tech/rules.json",   /* build/bin, build/tests */
	"../share/seo/tech/rules.json", /* an installed tree */
	NULL,
};

int seo_tech_rules_path(char *out, size_t n)
{
	return seo_data_path(seo_config(SEO_CFG_TECH_RULES), exe_relative, out,
			     n);
}

size_t seo_tech_rules_count(const seo_tech_rules *r)
{
	return r->n_techs;
}

void seo_tech_rules_free(seo_tech_rules *r)
{
	if (r == NULL)
		return;
	for (int k = 0; k < N_KINDS; k++) {
		for (size_t i = 0; i < r->n_pats[k]; i++) {
			pcre2_code_free(r->pats[k][i].re);
			free(r->pats[k][i].key);
			free(r->pats[k][i].version);
		}
		free(r->pats[k]);
		acm_free(&r->ac[k]);
	}
	for (size_t i = 0; i < r->n_techs; i++) {
		free(r->techs[i].name);
		free(r->techs[i].implies);
		free(r->techs[i].implies_conf);
	}
	free(r->techs);
	free(r);
}

/* ---- detection ---------------------------------------------------------- */

typedef struct scan {
	const seo_tech_rules *r;
	seo_arena *a;
	pcre2_match_data *md;
	int *level;
	const char **version;
	int nomem;
} scan;

/* The version template of p filled from the last match of s, or NULL. */
static const char *fill_version(scan *sc, const pattern *p, const char *s)
{
	PCRE2_SIZE *ov = pcre2_get_ovector_pointer(sc->md);
	uint32_t n = pcre2_get_ovector_count(sc->md);
	char buf[128];
	size_t len = 0;

	for (const char *t = p->version; *t && len < sizeof(buf) - 1; t++) {
		uint32_t g;
		if (t[0] != '\\' || !isdigit((unsigned char)t[1])) {
			buf[len++] = *t;
			continue;
		}
		g = (uint32_t)(*++t - '0');
		if (g < n && ov[2 * g] != PCRE2_UNSET)
			for (PCRE2_SIZE i = ov[2 * g];
			     i < ov[2 * g + 1] && len < sizeof(buf) - 1; i++)
				buf[len++] = s[i];
	}
	if (len == 0)
		return NULL;
	return seo_arena_strndup(sc->a, buf, len);
}

/* Runs p on s; on a match, raises its technology. */
static int try_pattern(scan *sc, const pattern *p, const char *s, size_t len)
{
	if (p->re != NULL &&
	    pcre2_match(p->re, (PCRE2_SPTR)s, len, 0, 0, sc->md, NULL) < 0)
		return 0;
	if (p->confidence > sc->level[p->tech])
		sc->level[p->tech] = p->confidence;
	if (p->version != NULL && p->re != NULL && sc->version[p->tech] == NULL)
		sc->version[p->tech] = fill_version(sc, p, s);
	return 1;
}

static void match_keyed(scan *sc, int kind, const seo_tech_kv *kv, size_t n)
{
	for (size_t i = 0; i < sc->r->n_pats[kind]; i++) {
		const pattern *p = &sc->r->pats[kind][i];
		for (size_t j = 0; j < n; j++)
			if (kv[j].name != NULL && kv[j].value != NULL &&
			    strcasecmp(kv[j].name, p->key) == 0 &&
			    try_pattern(sc, p, kv[j].value, strlen(kv[j].value)))
				break;
	}
}

/* Runs the patterns of `kind` whose literal occurs in one of the texts. */
static void match_texts(scan *sc, int kind, const char *const *texts,
			const size_t *lens, size_t n)
{
	const acm *m = &sc->r->ac[kind];
	uint8_t *found = seo_arena_calloc(sc->a, m->nlits + 1);

	if (found == NULL) {
		sc->nomem = 1;
		return;
	}
	for (size_t j = 0; j < n; j++)
		acm_scan(m, texts[j], lens[j], found);
	for (size_t i = 0; i < sc->r->n_pats[kind]; i++) {
		const pattern *p = &sc->r->pats[kind][i];
		if (p->literal >= 0 && !found[p->literal])
			continue;
		for (size_t j = 0; j < n; j++)
			if (try_pattern(sc, p, texts[j], lens[j]))
				break;
	}
}

/* Gives implied technologies their implier's confidence, or the lower one
 * of the implies entry, until nothing changes. */
static void apply_implies(const seo_tech_rules *r, int *level)
{
	int changed = 1;

	while (changed) {
		changed = 0;
		for (size_t t = 0; t < r->n_techs; t++) {
			const tech *te = &r->techs[t];
			for (size_t i = 0; level[t] > 0 && i < te->n_implies; i++) {
				int lv = level[t] < te->implies_conf[i]
						 ? level[t]
						 : te->implies_conf[i];
				if (lv > level[te->implies[i]]) {
					level[te->implies[i]] = lv;
					changed = 1;
				}
			}
		}
	}
}

static int by_confidence_name(const void *x, const void *y)
{
	const seo_tech_match *a = x, *b = y;

	if (a->confidence != b->confidence)
		return b->confidence - a->confidence;
	return strcasecmp(a->name, b->name);
}

int seo_tech_detect(const seo_tech_rules *r, const seo_tech_input *in,
		    seo_arena *a, seo_tech_match **out, size_t *n)
{
	scan sc = {r, a, NULL, NULL, NULL, 0};
	size_t html_len = in->html_len < SEO_TECH_HTML_MAX ? in->html_len
							  : SEO_TECH_HTML_MAX;
	size_t *lens = NULL, cnt = 0;
	seo_tech_match *m;
	int rc = SEO_ENOMEM;

	*out = NULL;
	*n = 0;
	sc.level = seo_arena_calloc(a, (r->n_techs + 1) * sizeof(*sc.level));
	sc.version = seo_arena_calloc(a, (r->n_techs + 1) * sizeof(*sc.version));
	lens = seo_arena_alloc(a, (in->n_scripts + 1) * sizeof(*lens));
	sc.md = pcre2_match_data_create(MAX_GROUPS, NULL);
	if (sc.level == NULL || sc.version == NULL || lens == NULL || sc.md == NULL)
		goto out;
	match_keyed(&sc, K_HEADER, in->headers, in->n_headers);
	match_keyed(&sc, K_COOKIE, in->cookies, in->n_cookies);
	match_keyed(&sc, K_META, in->meta, in->n_meta);
	for (size_t i = 0; i < in->n_scripts; i++)
		lens[i] = strlen(in->scripts[i]);
	match_texts(&sc, K_SCRIPT, in->scripts, lens, in->n_scripts);
	if (in->html != NULL)
		match_texts(&sc, K_HTML, &in->html, &html_len, 1);
	if (sc.nomem)
		goto out;
	apply_implies(r, sc.level);
	for (size_t t = 0; t < r->n_techs; t++)
		cnt += sc.level[t] > 0 && r->techs[t].category != NULL;
	if ((m = seo_arena_alloc(a, (cnt + 1) * sizeof(*m))) == NULL)
		goto out;
	cnt = 0;
	for (size_t t = 0; t < r->n_techs; t++)
		if (sc.level[t] > 0 && r->techs[t].category != NULL)
			m[cnt++] = (seo_tech_match){r->techs[t].name,
						    r->techs[t].category,
						    sc.version[t], sc.level[t]};
	qsort(m, cnt, sizeof(*m), by_confidence_name);
	*out = m;
	*n = cnt;
	rc = 0;
out:
	pcre2_match_data_free(sc.md);
	return rc;
}

/* ---- input from a page -------------------------------------------------- */

/* A growing array on the arena. */
typedef struct grow {
	void *items;
	size_t n, cap, size;
} grow;

static void *grow_push(grow *g, seo_arena *a)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 16;
		void *items = seo_arena_alloc(a, cap * g->size);
		if (items == NULL)
			return NULL;
		if (g->n > 0)
			memcpy(items, g->items, g->n * g->size);
		g->items = items;
		g->cap = cap;
	}
	return (char *)g->items + g->n++ * g->size;
}

/* Does the tag at p (just after '<') have name `name`? */
static int tag_is(const char *p, const char *end, const char *name)
{
	size_t n = strlen(name);

	return (size_t)(end - p) > n && strncasecmp(p, name, n) == 0 &&
	       (isspace((unsigned char)p[n]) || p[n] == '/' || p[n] == '>');
}

/*
 * Reads the attributes of a tag from p (after its name) to its '>',
 * keeping the values of the `n` names in `want` (first one wins) as
 * strings on `a`. Returns the position after the tag, or NULL when out of
 * memory.
 */
static const char *tag_attrs(const char *p, const char *end, seo_arena *a,
			     const char *const *want, const char **got, size_t n)
{
	for (size_t k = 0; k < n; k++)
		got[k] = NULL;
	while (p < end && *p != '>') {
		const char *name = p, *val = NULL;
		size_t nlen, vlen = 0;

		if (isspace((unsigned char)*p) || *p == '/') {
			p++;
			continue;
		}
		while (p < end && !isspace((unsigned char)*p) && *p != '=' &&
		       *p != '>' && *p != '/')
			p++;
		nlen = (size_t)(p - name);
		while (p < end && isspace((unsigned char)*p))
			p++;
		if (p < end && *p == '=') {
			for (p++; p < end && isspace((unsigned char)*p); p++)
				;
			if (p < end && (*p == '"' || *p == '\'')) {
				const char *q = memchr(p + 1, *p, (size_t)(end - p - 1));
				val = p + 1;
				vlen = (size_t)((q ? q : end) - val);
				p = q ? q + 1 : end;
			} else {
				for (val = p; p < end && !isspace((unsigned char)*p) && *p != '>'; p++)
					;
				vlen = (size_t)(p - val);
			}
		}
		for (size_t k = 0; val != NULL && k < n; k++)
			if (got[k] == NULL && strlen(want[k]) == nlen &&
			    strncasecmp(name, want[k], nlen) == 0 &&
			    (got[k] = seo_arena_strndup(a, val, vlen)) == NULL)
				return NULL;
	}
	return p < end ? p + 1 : end;
}

/* Position after the next case-insensitive `needle` from p, or end. */
static const char *skip_past(const char *p, const char *end, const char *needle)
{
	size_t n = strlen(needle);

	for (; (p = memchr(p, needle[0], (size_t)(end - p))) != NULL; p++)
		if ((size_t)(end - p) >= n && strncasecmp(p, needle, n) == 0)
			return p + n;
	return end;
}

static const char *const meta_attrs[] = {"name", "property", "content"};
static const char *const script_attrs[] = {"src"};

int seo_tech_input_from_page(const seo_tech_kv *headers, size_t n_headers,
			     const char *html, size_t html_len, seo_arena *a,
			     seo_tech_input *in)
{
	grow cookies = {.size = sizeof(seo_tech_kv)};
	grow meta = {.size = sizeof(seo_tech_kv)};
	grow scripts = {.size = sizeof(const char *)};
	const char *p = html, *end;
	const char *got[3];

	memset(in, 0, sizeof(*in));
	in->headers = headers;
	in->n_headers = n_headers;
	in->html = html;
	in->html_len = html_len;
	for (size_t i = 0; i < n_headers; i++) {
		const char *v = headers[i].value, *eq, *semi;
		seo_tech_kv *kv;

		if (strcasecmp(headers[i].name, "set-cookie") != 0 ||
		    (eq = strchr(v, '=')) == NULL)
			continue;
		semi = strchr(eq, ';');
		if ((kv = grow_push(&cookies, a)) == NULL ||
		    (kv->name = seo_arena_strndup(a, v, (size_t)(eq - v))) == NULL ||
		    (kv->value = seo_arena_strndup(a, eq + 1, semi ? (size_t)(semi - eq - 1)
								   : strlen(eq + 1))) == NULL)
			return SEO_ENOMEM;
	}
	/* Tags are cheap to find, so the whole page is scanned: large pages
	 * put their script tags last, past the HTML the patterns search. */
	end = html + html_len;
	while (p != NULL && (p = memchr(p, '<', (size_t)(end - p))) != NULL) {
		p++;
		if ((size_t)(end - p) >= 3 && strncmp(p, "!--", 3) == 0) {
			p = skip_past(p + 3, end, "-->");
		} else if (tag_is(p, end, "meta")) {
			p = tag_attrs(p + 4, end, a, meta_attrs, got, 3);
			if (p != NULL && got[2] != NULL && (got[0] || got[1])) {
				seo_tech_kv *kv = grow_push(&meta, a);
				if (kv == NULL)
					return SEO_ENOMEM;
				*kv = (seo_tech_kv){got[0] ? got[0] : got[1], got[2]};
			}
		} else if (tag_is(p, end, "script")) {
			p = tag_attrs(p + 6, end, a, script_attrs, got, 1);
			if (p != NULL && got[0] != NULL) {
				const char **s = grow_push(&scripts, a);
				if (s == NULL)
					return SEO_ENOMEM;
				*s = got[0];
			}
			/* the script's text is no markup */
			if (p != NULL)
				p = skip_past(p, end, "</script");
		}
		if (p == NULL)
			return SEO_ENOMEM;
	}
	in->cookies = cookies.items;
	in->n_cookies = cookies.n;
	in->meta = meta.items;
	in->n_meta = meta.n;
	in->scripts = scripts.items;
	in->n_scripts = scripts.n;
	return 0;
}
