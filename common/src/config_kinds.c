/*
 * config_kinds.c: one parser per kind of configuration value (seo/config.h),
 * each saying in lowercase what is wrong with a value it refuses.
 */
#include "seo/config.h"
#include "seo/errors.h"
#include "seo/log.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* Longest part of a value repeated in a message. */
#define QUOTE_MAX 80

static int fault(seo_cfg_error *err, const seo_cfg_def *def,
		 const char *fmt, ...)
{
	size_t n;
	va_list ap;

	n = (size_t)snprintf(err->message, sizeof(err->message), "%s: ",
			     def->name);
	va_start(ap, fmt);
	vsnprintf(err->message + n, sizeof(err->message) - n, fmt, ap);
	va_end(ap);
	return SEO_EINVAL;
}

/* s[0..len) in double quotes, cut to QUOTE_MAX bytes, control bytes and
 * quotes shown as '?'. */
static const char *quote(char *buf, size_t cap, const char *s, size_t len)
{
	size_t i, o = 0, keep = len > QUOTE_MAX ? QUOTE_MAX : len;

	buf[o++] = '"';
	for (i = 0; i < keep && o + 5 < cap; i++)
		buf[o++] = iscntrl((unsigned char)s[i]) || s[i] == '"' ? '?' : s[i];
	if (keep < len && o + 5 < cap)
		o += (size_t)snprintf(buf + o, cap - o, "...");
	buf[o++] = '"';
	buf[o] = '\0';
	return buf;
}

#define Q(s, len) quote(qbuf, sizeof(qbuf), (s), (len))

static int has_control(const char *s)
{
	for (; *s; s++)
		if (iscntrl((unsigned char)*s))
			return 1;
	return 0;
}

static int has_space_or_control(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (isspace((unsigned char)s[i]) || iscntrl((unsigned char)s[i]))
			return 1;
	return 0;
}

/* ---- numbers and words ---------------------------------------------------- */

static int parse_number(const seo_cfg_def *def, const char *s,
			seo_cfg_value *out, seo_cfg_error *err)
{
	const char *unit = def->kind == SEO_CFG_MS ? "milliseconds" : def->unit;
	char qbuf[QUOTE_MAX + 8], *end;
	long long n;

	errno = 0;
	n = strtoll(s, &end, 10);
	if (!(isdigit((unsigned char)s[0]) || (s[0] == '-' && isdigit((unsigned char)s[1]))) ||
	    *end != '\0')
		return fault(err, def, "%s is not a whole number of %s",
			     Q(s, strlen(s)), unit);
	if (errno == ERANGE || n < def->min || n > def->max)
		return fault(err, def, "%s is out of range: %lld to %lld %s",
			     Q(s, strlen(s)), def->min, def->max, unit);
	out->num = n;
	return 0;
}

static int parse_onoff(const seo_cfg_def *def, const char *s,
		       seo_cfg_value *out, seo_cfg_error *err)
{
	char qbuf[QUOTE_MAX + 8];

	if (strcmp(s, "on") != 0 && strcmp(s, "off") != 0)
		return fault(err, def, "%s is neither on nor off",
			     Q(s, strlen(s)));
	out->num = strcmp(s, "on") == 0;
	return 0;
}

static int parse_level(const seo_cfg_def *def, const char *s,
		       seo_cfg_value *out, seo_cfg_error *err)
{
	char qbuf[QUOTE_MAX + 8];
	int lvl = seo_log_level_parse(s);

	if (lvl < 0)
		return fault(err, def, "%s is not one of debug, info, warn, error",
			     Q(s, strlen(s)));
	out->num = lvl;
	return 0;
}

/* ---- addresses, URLs, paths ----------------------------------------------- */

int seo_split_hostport(const char *addr, char *host, unsigned hostlen,
		       unsigned short *port)
{
	const char *colon, *h = addr;
	size_t hl;
	char *end;
	long p;

	if (addr == NULL)
		return SEO_EINVAL;
	if (addr[0] == '[') {
		const char *close = strchr(addr, ']');
		if (close == NULL || close[1] != ':')
			return SEO_EINVAL;
		h = addr + 1;
		hl = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(addr, ':');
		if (colon == NULL)
			return SEO_EINVAL;
		hl = (size_t)(colon - addr);
	}
	if (hl == 0 || hl + 1 > hostlen)
		return SEO_EINVAL;
	errno = 0;
	p = strtol(colon + 1, &end, 10);
	if (errno != 0 || !isdigit((unsigned char)colon[1]) || *end != '\0' ||
	    p < 0 || p > 65535)
		return SEO_EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	*port = (unsigned short)p;
	return 0;
}

static int parse_addr(const seo_cfg_def *def, const char *s,
		      seo_cfg_error *err)
{
	char qbuf[QUOTE_MAX + 8], host[256];
	unsigned short port;

	if (seo_split_hostport(s, host, sizeof(host), &port) != 0 ||
	    has_space_or_control(host, strlen(host)) ||
	    (s[0] != '[' && strchr(host, ':') != NULL))
		return fault(err, def, "%s is not a host:port address",
			     Q(s, strlen(s)));
	return 0;
}

/* Whether s[0..len) is one of `list`'s " or "-separated words. */
static int word_in(const char *s, size_t len, const char *list)
{
	const char *p = list;

	while (*p) {
		const char *sep = strstr(p, " or ");
		size_t wl = sep != NULL ? (size_t)(sep - p) : strlen(p);

		if (wl == len && strncasecmp(p, s, len) == 0)
			return 1;
		p += wl;
		if (sep != NULL)
			p += 4;
	}
	return 0;
}

static int parse_url(const seo_cfg_def *def, const char *s,
		     seo_cfg_error *err)
{
	char qbuf[QUOTE_MAX + 8];
	const char *colon = strstr(s, "://");
	size_t host_len = colon != NULL ? strcspn(colon + 3, "/?#") : 0;

	if (colon == NULL || !word_in(s, (size_t)(colon - s), def->schemes) ||
	    host_len == 0 || colon[3] == '@' || has_space_or_control(s, strlen(s)))
		return fault(err, def, "%s is not an %s URL", Q(s, strlen(s)),
			     def->schemes);
	return 0;
}

/* A key=value connection string: words, each key=value, a value bare or in
 * single quotes with backslash escapes. */
static int conninfo_ok(const char *s)
{
	int words = 0;

	for (;;) {
		while (isspace((unsigned char)*s))
			s++;
		if (*s == '\0')
			return words > 0;
		if (!isalpha((unsigned char)*s))
			return 0;
		while (isalnum((unsigned char)*s) || *s == '_')
			s++;
		while (isspace((unsigned char)*s))
			s++;
		if (*s++ != '=')
			return 0;
		while (isspace((unsigned char)*s))
			s++;
		if (*s == '\'') {
			for (s++; *s != '\''; s++) {
				if (*s == '\\' && s[1] != '\0')
					s++;
				if (*s == '\0')
					return 0;
			}
			s++;
		} else {
			while (*s != '\0' && !isspace((unsigned char)*s))
				s++;
		}
		words++;
	}
}

/* Never repeated: the string may hold a password. */
static int parse_pg(const seo_cfg_def *def, const char *s, seo_cfg_error *err)
{
	int url = strncmp(s, "postgresql://", 13) == 0 ||
		  strncmp(s, "postgres://", 11) == 0;

	if (has_control(s) || (url ? strchr(s, ' ') != NULL : !conninfo_ok(s)))
		return fault(err, def, "the value is not a postgresql:// URL or "
				       "a key=value connection string");
	return 0;
}

static int parse_path(const seo_cfg_def *def, const char *s,
		      seo_cfg_error *err)
{
	char qbuf[QUOTE_MAX + 8];
	struct stat st;

	if (def->kind == SEO_CFG_FILE &&
	    (stat(s, &st) != 0 || S_ISDIR(st.st_mode) || access(s, R_OK) != 0))
		return fault(err, def, "%s is not a readable file",
			     Q(s, strlen(s)));
	if (def->kind == SEO_CFG_DIR && (stat(s, &st) != 0 || !S_ISDIR(st.st_mode)))
		return fault(err, def, "%s is not a directory", Q(s, strlen(s)));
	return 0;
}

static int parse_mailbox(const seo_cfg_def *def, const char *s,
			 seo_cfg_error *err)
{
	char qbuf[QUOTE_MAX + 8];
	const char *at = strchr(s, '@');

	if (at == NULL || at == s || at[1] == '\0' || strchr(at + 1, '@') ||
	    strpbrk(s, "<>,;:\"()[]\\") != NULL ||
	    has_space_or_control(s, strlen(s)))
		return fault(err, def, "%s is not an email address",
			     Q(s, strlen(s)));
	return 0;
}

/* ---- lists ---------------------------------------------------------------- */

/* One network: an address, or address/bits. */
static int cidr_parse(const char *s, size_t len, seo_cidr *out)
{
	char buf[INET6_ADDRSTRLEN + 5];
	const char *slash = memchr(s, '/', len);
	size_t alen = slash != NULL ? (size_t)(slash - s) : len;
	unsigned bits = 0;

	if (alen == 0 || alen >= INET6_ADDRSTRLEN)
		return SEO_EINVAL;
	memcpy(buf, s, alen);
	buf[alen] = '\0';
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, buf, out->addr) == 1)
		out->family = AF_INET;
	else if (inet_pton(AF_INET6, buf, out->addr) == 1)
		out->family = AF_INET6;
	else
		return SEO_EINVAL;
	out->bits = out->family == AF_INET ? 32 : 128;
	if (slash == NULL)
		return 0;
	if (slash + 1 == s + len || len - alen - 1 > 3)
		return SEO_EINVAL;
	for (const char *p = slash + 1; p < s + len; p++) {
		if (!isdigit((unsigned char)*p))
			return SEO_EINVAL;
		bits = bits * 10 + (unsigned)(*p - '0');
	}
	if (bits > out->bits)
		return SEO_EINVAL;
	out->bits = bits;
	return 0;
}

int seo_prefix_match(const unsigned char *addr, const unsigned char *net,
		     unsigned bits)
{
	unsigned whole = bits / 8, rest = bits % 8;

	if (memcmp(addr, net, whole) != 0)
		return 0;
	if (rest == 0)
		return 1;
	return ((addr[whole] ^ net[whole]) & (0xff << (8 - rest))) == 0;
}

int seo_cidr_match(const seo_cidr *nets, size_t n, int family,
		   const unsigned char *addr)
{
	for (size_t i = 0; i < n; i++)
		if (nets[i].family == family &&
		    seo_prefix_match(addr, nets[i].addr, nets[i].bits))
			return 1;
	return 0;
}

/* A host field of a connect-to entry (maybe "[v6]", maybe empty) up to the
 * next ':'. */
static int ct_host(const char **s, const char *end, char *dst, size_t cap)
{
	const char *p = *s, *stop;
	size_t len;

	if (p < end && *p == '[') {
		stop = memchr(p, ']', (size_t)(end - p));
		if (stop == NULL)
			return SEO_EINVAL;
		p++;
		len = (size_t)(stop - p);
		stop++;
	} else {
		stop = memchr(p, ':', (size_t)(end - p));
		len = (size_t)((stop != NULL ? stop : end) - p);
		stop = p + len;
	}
	if (len >= cap || has_space_or_control(p, len))
		return SEO_EINVAL;
	memcpy(dst, p, len);
	dst[len] = '\0';
	*s = stop;
	return 0;
}

/* A port field (maybe empty: 0) up to the next ':' or the end. */
static int ct_port(const char **s, const char *end, unsigned short *port)
{
	const char *p = *s;
	unsigned long v = 0;

	for (; p < end && *p != ':'; p++) {
		if (!isdigit((unsigned char)*p))
			return SEO_EINVAL;
		v = v * 10 + (unsigned long)(*p - '0');
		if (v > 65535)
			return SEO_EINVAL;
	}
	*port = (unsigned short)v;
	*s = p;
	return 0;
}

static int ct_colon(const char **s, const char *end)
{
	if (*s >= end || **s != ':')
		return SEO_EINVAL;
	(*s)++;
	return 0;
}

static int connect_to_parse(const char *s, size_t len, seo_connect_to *e)
{
	const char *end = s + len;

	if (ct_host(&s, end, e->host, sizeof(e->host)) || ct_colon(&s, end) ||
	    ct_port(&s, end, &e->port) || ct_colon(&s, end) ||
	    ct_host(&s, end, e->connect_host, sizeof(e->connect_host)) ||
	    ct_colon(&s, end) || ct_port(&s, end, &e->connect_port) || s != end)
		return SEO_EINVAL;
	for (char *c = e->host; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	return 0;
}

/*
 * A comma-separated list, blank entries skipped, each entry trimmed and
 * parsed into an element of `size` bytes: as many as the value holds.
 */
static int parse_list(const seo_cfg_def *def, const char *text,
		      seo_cfg_value *out, seo_cfg_error *err)
{
	int cidrs = def->kind == SEO_CFG_NETS;
	size_t size = cidrs ? sizeof(seo_cidr) : sizeof(seo_connect_to);
	size_t cap = 1, n = 0, len;
	char qbuf[QUOTE_MAX + 8];
	const char *p, *s, *e;
	char *list;

	for (p = text; *p; p++)
		cap += *p == ',';
	list = calloc(cap, size);
	if (list == NULL)
		return SEO_ENOMEM;
	for (p = text; *p; p = *e ? e + 1 : e) {
		e = p + strcspn(p, ",");
		for (s = p; s < e && isspace((unsigned char)*s); s++)
			;
		for (len = (size_t)(e - s); len > 0 && isspace((unsigned char)s[len - 1]); len--)
			;
		if (len == 0)
			continue;
		if (cidrs ? cidr_parse(s, len, (seo_cidr *)(list + n * size))
			  : connect_to_parse(s, len, (seo_connect_to *)(list + n * size))) {
			free(list);
			return fault(err, def, "entry %zu %s is not %s", n + 1,
				     Q(s, len),
				     cidrs ? "an address or a CIDR network"
					   : "HOST:PORT:CONNECT_HOST:CONNECT_PORT");
		}
		n++;
	}
	if (n == 0) {
		free(list);
		list = NULL;
	}
	out->list = list;
	out->n = n;
	return 0;
}

/* ---- by kind -------------------------------------------------------------- */

int seo_cfg_parse(const seo_cfg_def *def, const char *text,
		  seo_cfg_value *out, seo_cfg_error *err)
{
	char qbuf[QUOTE_MAX + 8];

	memset(out, 0, sizeof(*out));
	out->text = text != NULL && *text != '\0' ? text : def->dflt;
	text = out->text;
	if (*text == '\0')
		return 0;
	if (has_control(text))
		return def->kind == SEO_CFG_SECRET || def->kind == SEO_CFG_PG
			       ? fault(err, def, "the value contains a control character")
			       : fault(err, def, "%s contains a control character",
				       Q(text, strlen(text)));
	switch (def->kind) {
	case SEO_CFG_TEXT:
		return 0;
	case SEO_CFG_SECRET:
		if (def->min > 0 && strlen(text) < (size_t)def->min)
			return fault(err, def, "the value is shorter than %lld "
				     "characters", def->min);
		return 0;
	case SEO_CFG_INT:
	case SEO_CFG_MS:
		return parse_number(def, text, out, err);
	case SEO_CFG_ONOFF:
		return parse_onoff(def, text, out, err);
	case SEO_CFG_LEVEL:
		return parse_level(def, text, out, err);
	case SEO_CFG_ADDR:
		return parse_addr(def, text, err);
	case SEO_CFG_URL:
		return parse_url(def, text, err);
	case SEO_CFG_PG:
		return parse_pg(def, text, err);
	case SEO_CFG_FILE:
	case SEO_CFG_DIR:
		return parse_path(def, text, err);
	case SEO_CFG_MAILBOX:
		return parse_mailbox(def, text, err);
	case SEO_CFG_NETS:
	case SEO_CFG_CONNECT_TO:
		return parse_list(def, text, out, err);
	}
	return fault(err, def, "has no kind");
}

void seo_cfg_value_clear(seo_cfg_value *v)
{
	free(v->list);
	memset(v, 0, sizeof(*v));
}
