/*
 * readers.c: the public crawl formats, streamed line by line or record by
 * record into the builder. A malformed line or record is logged with file
 * and line (the first few per file) and counted; it never stops the run.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <seo/arena.h>
#include <seo/errors.h>
#include <seo/log.h>
#include <seo/tech.h>

#include "ingest.h"

/* Beyond this many per file only the count is reported. */
#define MALFORMED_LOGGED 20
/* What one WAT record gives the fingerprint engine at most: a platform's
 * signals (generator, its headers, its script hosts) come early. */
#define TECH_KV_MAX 64
#define TECH_URLS_MAX 128
/* Slots of the table of recent (domain, platforms), a power of two. */
#define PLAT_SEEN_BITS 16

typedef struct rd {
	graph__builder *b;
	graph__reader r;
	const graph_input *in;
	uint64_t records, malformed;
} rd;

static void bad(rd *x, uint64_t line, const char *why)
{
	x->malformed++;
	x->b->malformed++;
	if (x->malformed <= MALFORMED_LOGGED)
		log_warn("malformed input skipped: \"%s\" line %llu: %s",
			 x->in->path, (unsigned long long)line, why);
}

static void tick(rd *x)
{
	x->records++;
	x->b->records++;
	if ((x->records & 4095) == 0)
		graph__b_progress(x->b, graph__reader_offset(&x->r),
				  x->r.size);
}

/* Splits `s` at `sep` into at most `max` fields; returns the count. */
static int split(char *s, char sep, char **f, int max)
{
	int n = 0;

	f[n++] = s;
	while (n < max && (s = strchr(s, sep))) {
		*s++ = '\0';
		f[n++] = s;
	}
	return n;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return SEO_EINVAL;
	*v = strtoull(s, &end, 10);
	return *end ? SEO_EINVAL : 0;
}

static int valid_rev(const char *s, size_t len)
{
	if (len == 0 || len > GRAPH_DOMAIN_MAX)
		return 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!(islower(c) || isdigit(c) || c == '-' || c == '.' ||
		      c == '_'))
			return 0;
	}
	return 1;
}

static int vertices_line(rd *x, char *line)
{
	char *f[4] = { 0 };
	uint64_t vid, hosts = 0;
	uint32_t id;
	graph__builder *b = x->b;
	int rc;

	if (split(line, '\t', f, 4) < 2 || parse_u64(f[0], &vid) ||
	    vid >= GRAPH__NONE || !valid_rev(f[1], strlen(f[1])) ||
	    (f[2] && parse_u64(f[2], &hosts)) || hosts > UINT32_MAX) {
		bad(x, x->r.line, "expected id<TAB>reversed_domain<TAB>num_hosts");
		return 0;
	}
	rc = graph__b_vertex(b, f[1], strlen(f[1]), &id);
	if (!rc)
		rc = graph__b_vertex_map(b, vid, id);
	if (rc)
		return rc;
	graph__b_dom(b, id)->hosts = (uint32_t)hosts;
	return 0;
}

static int edges_line(rd *x, char *line)
{
	char *f[3] = { 0 };
	uint64_t from, to;
	graph__edge e;
	graph__builder *b = x->b;

	if (split(line, '\t', f, 3) != 2 || parse_u64(f[0], &from) ||
	    parse_u64(f[1], &to)) {
		bad(x, x->r.line, "expected from_id<TAB>to_id");
		return 0;
	}
	if (graph__b_vertex_id(b, from, &e.a) ||
	    graph__b_vertex_id(b, to, &e.b)) {
		bad(x, x->r.line, "vertex id not in the vertices file");
		return 0;
	}
	if (e.a == e.b)
		return 0;
	return graph__xsort_add(b->edges, &e);
}

static int ranks_line(rd *x, char *line)
{
	char *f[7] = { 0 };
	uint64_t hc, pr, hosts = 0;
	uint32_t id;
	int n, rc;

	if (line[0] == '#')
		return 0;
	n = split(line, '\t', f, 7);
	if (n < 5 || n > 6 || parse_u64(f[0], &hc) || parse_u64(f[2], &pr) ||
	    hc == 0 || hc > UINT32_MAX || pr > UINT32_MAX ||
	    !valid_rev(f[4], strlen(f[4])) ||
	    (n == 6 && (parse_u64(f[5], &hosts) || hosts > UINT32_MAX))) {
		bad(x, x->r.line,
		    "expected harmonicc_pos, harmonicc_val, pr_pos, pr_val, reversed domain[, n_hosts]");
		return 0;
	}
	rc = graph__b_domain_rev(x->b, f[4], strlen(f[4]), &id);
	if (rc)
		return rc;
	return graph__b_update(x->b, id, GRAPH__UPD_RANKS, (uint32_t)hc,
			       (uint32_t)pr, (uint32_t)hosts);
}

/* A CSV field, with surrounding double quotes removed. */
static char *unquote(char *s)
{
	size_t n = strlen(s);

	if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
		s[n - 1] = '\0';
		return s + 1;
	}
	return s;
}

static int csv_domain(rd *x, const char *field, uint32_t *id)
{
	char norm[GRAPH_DOMAIN_MAX + 1], reg[GRAPH_DOMAIN_MAX + 1];

	if (graph_normalize_domain(field, norm, sizeof(norm)))
		return SEO_EINVAL;
	graph__registrable(norm, reg);
	return graph__b_domain(x->b, reg, id);
}

static int tranco_line(rd *x, char *line)
{
	char *f[3] = { 0 };
	uint64_t rank;
	uint32_t id;
	int rc;

	if (split(line, ',', f, 3) != 2 || parse_u64(f[0], &rank) ||
	    rank == 0 || rank > UINT32_MAX) {
		bad(x, x->r.line, "expected rank,domain");
		return 0;
	}
	rc = csv_domain(x, unquote(f[1]), &id);
	if (rc == SEO_EINVAL) {
		bad(x, x->r.line, "not a domain name");
		return 0;
	}
	if (rc)
		return rc;
	return graph__b_update(x->b, id, GRAPH__UPD_TRANCO, (uint32_t)rank,
			       0, 0);
}

static int whois_line(rd *x, char *line)
{
	char *f[3] = { 0 };
	int64_t t;
	uint32_t id, reg = GRAPH__NONE;
	const char *registrar;
	int rc;

	if (x->r.line == 1 && strncasecmp(line, "domain,", 7) == 0)
		return 0;
	if (split(line, ',', f, 3) != 3) {
		bad(x, x->r.line, "expected domain,registered_at,registrar");
		return 0;
	}
	t = graph__parse_time(unquote(f[1]));
	if (t <= 0) {
		bad(x, x->r.line, "registered_at is not a YYYY-MM-DD date");
		return 0;
	}
	rc = csv_domain(x, unquote(f[0]), &id);
	if (rc == SEO_EINVAL) {
		bad(x, x->r.line, "not a domain name");
		return 0;
	}
	if (rc)
		return rc;
	registrar = unquote(f[2]);
	if (*registrar) {
		rc = graph__b_intern(x->b, &x->b->strs, registrar,
				     strlen(registrar), &reg);
		if (rc)
			return rc;
	}
	return graph__b_update(x->b, id, GRAPH__UPD_WHOIS,
			       (uint32_t)(int32_t)(t / 86400), reg, 0);
}

/* Domain and URL ids of an absolute URL; SEO_EINVAL when unusable. */
static int url_ids(graph__builder *b, const char *url, uint32_t *dom,
		   uint32_t *uid)
{
	char d[GRAPH_DOMAIN_MAX + 1];
	int rc = graph__url_domain(url, d);

	if (rc)
		return rc;
	rc = graph__b_domain(b, d, dom);
	if (!rc)
		rc = graph__b_string(b, &b->urls, url, strlen(url), uid);
	return rc;
}

static uint32_t clamp_ts(int64_t t)
{
	return t <= 0 ? 0 : t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

static int capture(graph__builder *b, const char *url, int64_t ts,
		   long status, const char *mime)
{
	graph__crec c;
	size_t mlen;
	int rc;

	rc = url_ids(b, url, &c.dom, &c.url);
	if (rc)
		return rc;
	c.ts = clamp_ts(ts);
	c.status = status > 0 && status < 1000 ? (uint32_t)status : 0;
	c.mime = GRAPH__NONE;
	if (mime && (mlen = strcspn(mime, "; ")) > 0) {
		rc = graph__b_intern(b, &b->strs, mime, mlen, &c.mime);
		if (rc)
			return rc;
	}
	if (c.ts > b->as_of)
		b->as_of = c.ts;
	return graph__xsort_add(b->caps_in, &c);
}

static int cdx_line(rd *x, char *line)
{
	char *sp1 = strchr(line, ' '), *sp2;
	json_t *j = NULL;
	const char *url, *status, *mime;
	int64_t ts;
	int rc = 0;

	sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp2) {
		bad(x, x->r.line, "expected urlkey timestamp {json}");
		goto out;
	}
	*sp2 = '\0';
	ts = graph__parse_time(sp1 + 1);
	j = json_loads(sp2 + 1, 0, NULL);
	url = json_string_value(json_object_get(j, "url"));
	status = json_string_value(json_object_get(j, "status"));
	mime = json_string_value(json_object_get(j, "mime"));
	if (ts <= 0 || !url) {
		bad(x, x->r.line, ts <= 0 ? "bad timestamp" :
					    "json without a url");
		goto out;
	}
	rc = capture(x->b, url, ts, status ? strtol(status, NULL, 10) : 0,
		     mime);
	if (rc == SEO_EINVAL) {
		bad(x, x->r.line, "url without a domain name");
		rc = 0;
	}
out:
	json_decref(j);
	return rc;
}

static int wat_link(graph__builder *b, uint32_t from_dom, uint32_t from_url,
		    json_t *l, uint32_t ts)
{
	const char *path = json_string_value(json_object_get(l, "path"));
	const char *url = json_string_value(json_object_get(l, "url"));
	const char *text, *rel;
	char buf[8192];
	graph__lrec r;
	size_t n;
	int rc;

	if (!path || !url)
		return 0;
	if (strncmp(path, "A@", 2) == 0) {
		r.type = GRAPH__LT_HYPERLINK;
		text = json_string_value(json_object_get(l, "text"));
	} else if (strncmp(path, "IMG@", 4) == 0) {
		r.type = GRAPH__LT_IMAGE;
		text = json_string_value(json_object_get(l, "alt"));
	} else {
		return 0;
	}
	n = strlen(url);
	if (n >= sizeof(buf))
		return 0;
	memcpy(buf, url, n + 1);
	graph__html_unescape(buf, n);
	/* relative links stay on their own site: not backlinks */
	rc = url_ids(b, buf, &r.to_dom, &r.to_url);
	if (rc == SEO_EINVAL || (!rc && r.to_dom == from_dom))
		return 0;
	if (rc)
		return rc;
	r.from_dom = from_dom;
	r.from_url = from_url;
	r.ts = ts;
	r.anchor = GRAPH__NONE;
	r.rel = GRAPH__NONE;
	if (text) {
		n = strlen(text);
		if (n >= sizeof(buf))
			n = sizeof(buf) - 1;
		memcpy(buf, text, n);
		buf[n] = '\0';
		n = graph__html_unescape(buf, n);
		/* whitespace runs as one blank: anchors group by wording */
		{
			size_t o = 0;

			for (size_t i = 0; i < n; i++) {
				if (isspace((unsigned char)buf[i])) {
					if (o > 0 && buf[o - 1] != ' ')
						buf[o++] = ' ';
				} else {
					buf[o++] = buf[i];
				}
			}
			while (o > 0 && buf[o - 1] == ' ')
				o--;
			n = o;
		}
		if (n > 0) {
			rc = graph__b_string(b, &b->anchors, buf, n, &r.anchor);
			if (rc)
				return rc;
		}
	}
	rel = json_string_value(json_object_get(l, "rel"));
	if (rel && *rel) {
		rc = graph__b_intern(b, &b->strs, rel, strlen(rel), &r.rel);
		if (rc)
			return rc;
	}
	rc = graph__xsort_add(b->links_in, &r);
	if (!rc) {
		graph__edge e = { from_dom, r.to_dom };

		rc = graph__xsort_add(b->edges, &e);
	}
	return rc;
}

/* ---- platforms of a WAT response ---- */

/* A header whose repeats (Set-Cookie) come as an array adds each. */
static void add_header(seo_tech_kv *kv, size_t *n, const char *name,
		       json_t *v)
{
	size_t i;
	json_t *e;

	if (json_is_string(v) && *n < TECH_KV_MAX)
		kv[(*n)++] = (seo_tech_kv){ name, json_string_value(v) };
	json_array_foreach(v, i, e)
		if (json_is_string(e) && *n < TECH_KV_MAX)
			kv[(*n)++] = (seo_tech_kv){ name, json_string_value(e) };
}

static void add_url(const char **urls, size_t *n, json_t *item)
{
	const char *url = json_string_value(json_object_get(item, "url"));

	if (url && *n < TECH_URLS_MAX)
		urls[(*n)++] = url;
}

/* Head links that load an asset, as opposed to naming another page. */
static int asset_link(json_t *link)
{
	const char *rel = json_string_value(json_object_get(link, "rel"));

	return rel &&
	       (strcasestr(rel, "stylesheet") || strcasestr(rel, "preload"));
}

/* Records the platforms of `bits` for `dom`, skipping those the same
 * domain showed lately: a domain's pages mostly come together, so its
 * pairs are written about once rather than once per page. */
static int plat_pairs(graph__builder *b, uint32_t dom, uint32_t bits)
{
	uint64_t *slot, key = (uint64_t)dom + 1;
	uint32_t known;
	int rc = 0;

	if (!b->plat_seen &&
	    !(b->plat_seen = calloc((size_t)1 << PLAT_SEEN_BITS,
				    sizeof(*b->plat_seen))))
		return SEO_ENOMEM;
	slot = &b->plat_seen[(dom * 2654435761u) >> (32 - PLAT_SEEN_BITS)];
	known = *slot >> 32 == key ? (uint32_t)*slot : 0;
	*slot = key << 32 | known | bits;
	bits &= ~known;
	for (uint32_t p = 0; !rc && bits; p++, bits >>= 1)
		if (bits & 1) {
			graph__edge e = { p, dom };

			rc = graph__xsort_add(b->plats, &e);
		}
	return rc;
}

/*
 * Runs the fingerprint engine over what WAT keeps of a page: response
 * headers (Set-Cookie gives the cookies), head metas (generator), script
 * sources (head and body) and the stylesheets and preloads of the head.
 * There is no HTML, so the rules' html patterns cannot fire.
 */
static int wat_platforms(graph__builder *b, json_t *resp, uint32_t dom)
{
	seo_tech_kv headers[TECH_KV_MAX], meta[TECH_KV_MAX];
	const char *urls[TECH_URLS_MAX];
	json_t *html = json_object_get(resp, "HTML-Metadata");
	json_t *head = json_object_get(html, "Head"), *v;
	size_t nh = 0, nm = 0, nu = 0, n = 0, i;
	seo_tech_input in;
	seo_tech_match *m = NULL;
	seo_arena *a;
	const char *k;
	uint32_t bits = 0;
	int rc;

	if (!b->tech)
		return 0;
	json_object_foreach(json_object_get(resp, "Headers"), k, v)
		add_header(headers, &nh, k, v);
	json_array_foreach(json_object_get(head, "Metas"), i, v) {
		const char *name, *content;

		name = json_string_value(json_object_get(v, "name"));
		content = json_string_value(json_object_get(v, "content"));

		if (!name)
			name = json_string_value(json_object_get(v, "property"));
		if (name && content && nm < TECH_KV_MAX)
			meta[nm++] = (seo_tech_kv){ name, content };
	}
	json_array_foreach(json_object_get(head, "Scripts"), i, v)
		add_url(urls, &nu, v);
	json_array_foreach(json_object_get(head, "Link"), i, v)
		if (asset_link(v))
			add_url(urls, &nu, v);
	json_array_foreach(json_object_get(html, "Links"), i, v) {
		const char *path = json_string_value(json_object_get(v, "path"));

		if (path && strncmp(path, "SCRIPT@", 7) == 0)
			add_url(urls, &nu, v);
	}
	if (nh + nm + nu == 0)
		return 0;
	a = seo_arena_new(8192);
	if (!a)
		return SEO_ENOMEM;
	rc = seo_tech_input_from_page(headers, nh, "", 0, a, &in);
	if (!rc) {
		in.html = NULL;
		in.meta = meta;
		in.n_meta = nm;
		in.scripts = urls;
		in.n_scripts = nu;
		rc = seo_tech_detect(b->tech, &in, a, &m, &n);
	}
	for (i = 0; !rc && i < n; i++) {
		int p = graph__platform_of_tech(m[i].name);

		if (p >= 0)
			bits |= 1u << p;
	}
	seo_arena_free(a);
	if (rc || !bits)
		return rc;
	return plat_pairs(b, dom, bits);
}

static int wat_record(rd *x, const char *body, size_t len, uint64_t line)
{
	json_error_t err;
	json_t *j = json_loadb(body, len, 0, &err), *env, *hdr, *resp, *links;
	const char *type, *uri, *date, *status, *mime = NULL;
	uint32_t from_dom, from_url;
	int64_t ts;
	size_t i;
	json_t *l;
	int rc = 0;

	if (!j) {
		bad(x, line, "metadata record is not JSON");
		goto out;
	}
	env = json_object_get(j, "Envelope");
	hdr = json_object_get(env, "WARC-Header-Metadata");
	type = json_string_value(json_object_get(hdr, "WARC-Type"));
	if (!type || strcmp(type, "response") != 0)
		goto out;
	uri = json_string_value(json_object_get(hdr, "WARC-Target-URI"));
	date = json_string_value(json_object_get(hdr, "WARC-Date"));
	ts = date ? graph__parse_time(date) : 0;
	resp = json_object_get(json_object_get(env, "Payload-Metadata"),
			       "HTTP-Response-Metadata");
	if (!uri || ts <= 0) {
		bad(x, line, "response without WARC-Target-URI or WARC-Date");
		goto out;
	}
	status = json_string_value(json_object_get(
		json_object_get(resp, "Response-Message"), "Status"));
	{
		json_t *h = json_object_get(resp, "Headers");
		const char *k;
		json_t *v;

		json_object_foreach(h, k, v)
			if (strcasecmp(k, "Content-Type") == 0)
				mime = json_string_value(v);
	}
	rc = capture(x->b, uri, ts, status ? strtol(status, NULL, 10) : 0,
		     mime);
	if (rc == SEO_EINVAL) {
		bad(x, line, "WARC-Target-URI without a domain name");
		rc = 0;
		goto out;
	}
	if (rc)
		goto out;
	rc = url_ids(x->b, uri, &from_dom, &from_url);
	if (!rc)
		rc = wat_platforms(x->b, resp, from_dom);
	if (rc)
		goto out;
	links = json_object_get(json_object_get(resp, "HTML-Metadata"),
				"Links");
	json_array_foreach(links, i, l) {
		rc = wat_link(x->b, from_dom, from_url, l, clamp_ts(ts));
		if (rc)
			goto out;
	}
out:
	json_decref(j);
	return rc;
}

/* WARC records: "WARC/1.x", header lines, a blank line, Content-Length
 * bytes of block. Only metadata records with a JSON block matter. */
static int read_wat(rd *x)
{
	char *line, *body;
	size_t len;
	int rc;

	for (;;) {
		uint64_t start;
		long long clen = -1;
		int metadata = 0, in_garbage = 0, warc, too_long = 0;

		do {
			rc = graph__reader_line(&x->r, &line, &len);
			if (rc <= 0)
				return rc;
			/* an over-long line is garbage as well */
			warc = rc == 1 && strncmp(line, "WARC/", 5) == 0;
			if (!warc && (rc != 1 || len > 0) && !in_garbage) {
				bad(x, x->r.line, "expected a WARC record");
				in_garbage = 1;
			}
		} while (!warc);
		start = x->r.line;
		for (;;) {
			rc = graph__reader_line(&x->r, &line, &len);
			if (rc < 0)
				return rc;
			if (rc == 0) {
				bad(x, start, "truncated WARC header");
				return 0;
			}
			if (rc == GRAPH__LINE_TOO_LONG) {
				too_long = 1;
				continue;
			}
			if (len == 0)
				break;
			if (strncasecmp(line, "Content-Length:", 15) == 0)
				clen = strtoll(line + 15, NULL, 10);
			else if (strncasecmp(line, "WARC-Type:", 10) == 0)
				metadata = strstr(line + 10, "metadata") != NULL;
		}
		/* its block is still skipped by its length */
		if (too_long) {
			bad(x, start, "WARC header line too long");
			metadata = 0;
		}
		if (clen < 0 || (unsigned long long)clen > GRAPH__RECORD_MAX) {
			bad(x, start, "WARC record without a usable Content-Length");
			continue;
		}
		rc = graph__reader_bytes(&x->r, (size_t)clen, &body);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			bad(x, start, "truncated WARC record");
			return 0;
		}
		tick(x);
		if (metadata && clen > 0 && body[0] == '{') {
			rc = wat_record(x, body, (size_t)clen, start);
			if (rc)
				return rc;
		}
	}
}

static const char *kind_name(graph_input_kind k)
{
	static const char *names[] = { "domain-vertices", "domain-edges",
				       "domain-ranks", "wat", "cdx",
				       "tranco", "whois" };

	return names[k];
}

int graph__read_input(graph__builder *b, const graph_input *in)
{
	rd x = { .b = b, .in = in };
	char sha[65] = "";
	char *line;
	size_t len;
	int rc;

	rc = graph__reader_open(&x.r, in->path);
	if (rc) {
		log_error("cannot open input \"%s\": %s", in->path,
			  seo_strerror(rc));
		return rc;
	}
	b->phase = kind_name(in->kind);
	if (in->kind == GRAPH_IN_RANKS)
		b->flags |= GRAPH__META_RANKS;
	if (in->kind == GRAPH_IN_TRANCO)
		b->flags |= GRAPH__META_TRANCO;
	if (in->kind == GRAPH_IN_WAT) {
		rc = read_wat(&x);
		goto out;
	}
	while ((rc = graph__reader_line(&x.r, &line, &len)) > 0) {
		if (rc == GRAPH__LINE_TOO_LONG) {
			tick(&x);
			bad(&x, x.r.line, "line too long");
			continue;
		}
		if (len == 0)
			continue;
		tick(&x);
		switch (in->kind) {
		case GRAPH_IN_VERTICES:
			rc = vertices_line(&x, line);
			break;
		case GRAPH_IN_EDGES:
			rc = edges_line(&x, line);
			break;
		case GRAPH_IN_RANKS:
			rc = ranks_line(&x, line);
			break;
		case GRAPH_IN_CDX:
			rc = cdx_line(&x, line);
			break;
		case GRAPH_IN_TRANCO:
			rc = tranco_line(&x, line);
			break;
		case GRAPH_IN_WHOIS:
			rc = whois_line(&x, line);
			break;
		case GRAPH_IN_WAT:
			break;
		}
		if (rc)
			break;
	}
out:
	graph__reader_close(&x.r, sha);
	if (rc < 0) {
		log_error("cannot read input \"%s\": %s", in->path,
			  seo_strerror(rc));
		return rc;
	}
	if (x.malformed > 0)
		log_warn("input \"%s\": %llu malformed lines or records skipped",
			 in->path, (unsigned long long)x.malformed);
	json_array_append_new(b->inputs_json,
			      json_pack("{s:s, s:s, s:s, s:I, s:I}", "kind",
					kind_name(in->kind), "path", in->path,
					"sha256", sha, "records",
					(json_int_t)x.records, "malformed",
					(json_int_t)x.malformed));
	return 0;
}
