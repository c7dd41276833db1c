/*
 * sitemap.c: one sitemap document (urlset or sitemapindex, plain or
 * gzip), parsed as its bytes arrive: libxml2's push parser with SAX
 * callbacks, fed by zlib's inflate when the document is gzip. Nothing
 * holds the whole document.
 *
 * Reading rules: elements are matched by local name and depth only
 * (root, entry, field), so that any namespace or none is accepted and the
 * extensions' own <image:loc> or <video:content_loc>, one level deeper,
 * are not mistaken for an entry's fields. Values are trimmed; the first
 * of a repeated field wins; an entry without a <loc> is skipped.
 *
 * Safety: no network (XML_PARSE_NONET), no DTD loading, no entity
 * declarations kept and no entity substitution, so an external entity is
 * never read and an entity reference reads as nothing (the parser runs in
 * recovery mode for that one error; any other error ends the reading);
 * libxml2's own limits stay on (no XML_PARSE_HUGE). The XML read is
 * bounded by the caller's max_xml.
 */
#include "rt.h"
#include "rt_int.h"

#include "seo/errors.h"

#include <ctype.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#define INFLATE_CHUNK 16384
/* Bytes handed to libxml2 or zlib in one call. */
#define CHUNK_MAX (1 << 20)

enum field { F_NONE = -1, F_LOC, F_LASTMOD, F_CHANGEFREQ, F_PRIORITY, F_COUNT };

static const char *const field_names[F_COUNT] = {"loc", "lastmod", "changefreq", "priority"};

/* Why the reading ended early, in order of precedence. */
enum stop { GOING = 0, STOP_LIMIT, STOP_BOUND, STOP_NOT_SITEMAP, STOP_ERROR, STOP_NOMEM };

struct rt_sitemap_parser {
	rt_sitemap_doc *doc; /* on the arena */
	seo_arena *a;
	size_t max_urls, max_children, max_xml;
	xmlParserCtxtPtr xml;
	/* the bytes: the first two decide gzip */
	unsigned char magic[2];
	size_t n_magic;
	int gzip, gz_started, gz_ended, gz_trailer;
	z_stream z;
	size_t produced; /* XML bytes handed to libxml2 */
	/* the reading */
	int depth;                   /* open elements */
	const char *fields[F_COUNT]; /* of the current entry */
	int in_entry;                /* inside <url> or <sitemap> */
	enum field field;            /* being read */
	rt__sbuf text;
	enum stop stop;
	char xml_error[160];
};

static void halt(rt_sitemap_parser *p, enum stop why)
{
	if (p->stop == GOING)
		p->stop = why;
	xmlStopParser(p->xml);
}

static void on_xml_error(void *ctx, xmlErrorPtr e)
{
	rt_sitemap_parser *p = ctx;

	/* an entity reference reads as nothing; the reading goes on */
	if (e == NULL || e->code == XML_ERR_UNDECLARED_ENTITY ||
	    e->code == XML_WAR_UNDECLARED_ENTITY || e->level < XML_ERR_ERROR)
		return;
	if (p->xml_error[0] == '\0' && e->message != NULL) {
		size_t n;

		snprintf(p->xml_error, sizeof(p->xml_error), "%s", e->message);
		n = strlen(p->xml_error);
		while (n > 0 && isspace((unsigned char)p->xml_error[n - 1]))
			p->xml_error[--n] = '\0';
	}
	halt(p, STOP_ERROR);
}

/* Arena copy of the trimmed text buffer, or NULL. */
static const char *take_text(rt_sitemap_parser *p)
{
	const char *s = p->text.s ? p->text.s : "";
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	return seo_arena_strndup(p->a, s, n);
}

/* An entry ended. */
static void end_entry(rt_sitemap_parser *p)
{
	rt_sitemap_doc *d = p->doc;
	const char *loc = p->fields[F_LOC];

	if (loc == NULL || *loc == '\0')
		return;
	if (d->kind == RT_SITEMAP_INDEX) {
		if (d->n_children < p->max_children)
			d->children[d->n_children++] = loc;
		d->children_total++;
		return;
	}
	if (d->n_urls == p->max_urls) {
		d->truncated = 1;
		halt(p, STOP_LIMIT);
		return;
	}
	d->urls[d->n_urls++] = (rt_sitemap_entry){loc, p->fields[F_LASTMOD],
		p->fields[F_CHANGEFREQ], p->fields[F_PRIORITY]};
}

static void on_start(void *ctx, const xmlChar *localname, const xmlChar *prefix,
		     const xmlChar *uri, int nb_namespaces, const xmlChar **namespaces,
		     int nb_attributes, int nb_defaulted, const xmlChar **attributes)
{
	rt_sitemap_parser *p = ctx;
	const char *name = (const char *)localname;
	rt_sitemap_doc *d = p->doc;
	int depth = p->depth++;

	(void)prefix, (void)uri, (void)nb_namespaces, (void)namespaces;
	(void)nb_attributes, (void)nb_defaulted, (void)attributes;
	if (depth == 0) {
		if (strcasecmp(name, "urlset") == 0)
			d->kind = RT_SITEMAP_URLSET;
		else if (strcasecmp(name, "sitemapindex") == 0)
			d->kind = RT_SITEMAP_INDEX;
		else
			halt(p, STOP_NOT_SITEMAP);
	} else if (depth == 1) {
		memset(p->fields, 0, sizeof(p->fields));
		p->field = F_NONE;
		p->in_entry = strcasecmp(name, d->kind == RT_SITEMAP_INDEX ? "sitemap" : "url") == 0;
	} else if (depth == 2 && p->in_entry) {
		rt__sbuf empty = {0};

		p->field = F_NONE;
		for (int f = 0; f < F_COUNT; f++)
			if (strcmp(name, field_names[f]) == 0)
				p->field = (enum field)f;
		free(p->text.s);
		p->text = empty;
	}
}

static void on_end(void *ctx, const xmlChar *localname, const xmlChar *prefix,
		   const xmlChar *uri)
{
	rt_sitemap_parser *p = ctx;
	int depth = --p->depth;

	(void)localname, (void)prefix, (void)uri;
	if (!p->in_entry)
		return;
	if (depth == 2 && p->field != F_NONE) {
		if (p->fields[p->field] == NULL &&
		    (p->fields[p->field] = take_text(p)) == NULL)
			halt(p, STOP_NOMEM);
		p->field = F_NONE;
	} else if (depth == 1) {
		p->in_entry = 0;
		end_entry(p);
	}
}

static void on_text(void *ctx, const xmlChar *ch, int len)
{
	rt_sitemap_parser *p = ctx;

	if (!p->in_entry || p->depth != 3 || p->field == F_NONE)
		return;
	rt__sb_add(&p->text, (const char *)ch, (size_t)len);
	if (p->text.oom)
		halt(p, STOP_NOMEM);
}

int rt_sitemap_parser_new(size_t max_urls, size_t max_children, size_t max_xml,
			  seo_arena *a, rt_sitemap_parser **out)
{
	rt_sitemap_parser *p = calloc(1, sizeof(*p));
	xmlSAXHandler sax;
	rt_sitemap_doc *d;

	if (p == NULL)
		return SEO_ENOMEM;
	p->a = a;
	p->max_urls = max_urls;
	p->max_children = max_children;
	p->max_xml = max_xml;
	p->field = F_NONE;
	p->doc = d = seo_arena_calloc(a, sizeof(*d));
	if (d != NULL) {
		d->urls = seo_arena_alloc(a, (max_urls + 1) * sizeof(*d->urls));
		d->children = seo_arena_alloc(a, (max_children + 1) * sizeof(*d->children));
	}
	memset(&sax, 0, sizeof(sax));
	sax.initialized = XML_SAX2_MAGIC;
	sax.startElementNs = on_start;
	sax.endElementNs = on_end;
	sax.characters = on_text;
	sax.cdataBlock = on_text;
	sax.ignorableWhitespace = on_text;
	sax.serror = on_xml_error;
	xmlInitParser();
	if (d == NULL || d->urls == NULL || d->children == NULL ||
	    (p->xml = xmlCreatePushParserCtxt(&sax, p, NULL, 0, NULL)) == NULL) {
		free(p);
		return SEO_ENOMEM;
	}
	xmlCtxtUseOptions(p->xml, XML_PARSE_NONET | XML_PARSE_NOERROR |
			  XML_PARSE_NOWARNING | XML_PARSE_RECOVER);
	*out = p;
	return 0;
}

/* Hands XML bytes to libxml2, within max_xml. */
static void push_xml(rt_sitemap_parser *p, const char *data, size_t len)
{
	int cut = 0;

	if (p->stop != GOING)
		return;
	if (len > p->max_xml - p->produced) {
		len = p->max_xml - p->produced;
		cut = 1;
	}
	p->produced += len;
	while (len > 0 && p->stop == GOING) {
		int n = len > CHUNK_MAX ? CHUNK_MAX : (int)len;

		xmlParseChunk(p->xml, data, n, 0);
		data += n;
		len -= (size_t)n;
	}
	if (cut && p->stop == GOING) {
		p->doc->truncated = 1;
		p->stop = STOP_BOUND;
	}
}

/* Inflates gzip bytes into the XML parser. */
static void push_gzip(rt_sitemap_parser *p, const unsigned char *in, size_t len)
{
	unsigned char out[INFLATE_CHUNK];

	while (p->stop == GOING && len > 0 && !p->gz_trailer) {
		int zr;

		if (p->gz_ended) {
			/* another gzip member may follow; other trailing
			 * bytes (padding) are ignored */
			if (in[0] != 0x1f || inflateReset(&p->z) != Z_OK) {
				p->gz_trailer = 1;
				return;
			}
			p->gz_ended = 0;
		}
		p->z.next_in = (unsigned char *)in;
		p->z.avail_in = (unsigned)(len > CHUNK_MAX ? CHUNK_MAX : len);
		do {
			p->z.next_out = out;
			p->z.avail_out = sizeof(out);
			zr = inflate(&p->z, Z_NO_FLUSH);
			push_xml(p, (const char *)out, sizeof(out) - p->z.avail_out);
		} while (zr == Z_OK && p->stop == GOING &&
			 (p->z.avail_in > 0 || p->z.avail_out == 0));
		if (zr == Z_STREAM_END) {
			p->gz_ended = 1;
		} else if (zr != Z_OK && zr != Z_BUF_ERROR) {
			snprintf(p->xml_error, sizeof(p->xml_error), "gzip data is corrupt");
			p->stop = STOP_ERROR;
		} else if (p->z.next_in == in) {
			return; /* no progress: wait for more */
		}
		len -= (size_t)(p->z.next_in - in);
		in = p->z.next_in;
	}
}

/* Bytes once gzip or not is known. */
static void push_bytes(rt_sitemap_parser *p, const unsigned char *data, size_t len)
{
	if (p->gzip)
		push_gzip(p, data, len);
	else
		push_xml(p, (const char *)data, len);
}

/* Decides gzip from the first two bytes; 0 or SEO_ENOMEM. */
static int start_bytes(rt_sitemap_parser *p)
{
	if (p->magic[0] == 0x1f && p->magic[1] == 0x8b) {
		/* 16 + MAX_WBITS: a gzip header, not zlib's */
		if (inflateInit2(&p->z, 16 + MAX_WBITS) != Z_OK)
			return SEO_ENOMEM;
		p->gzip = p->gz_started = 1;
	}
	push_bytes(p, p->magic, p->n_magic);
	return 0;
}

int rt_sitemap_parser_feed(rt_sitemap_parser *p, const char *data, size_t len)
{
	const unsigned char *in = (const unsigned char *)data;

	while (p->n_magic < 2 && len > 0) {
		p->magic[p->n_magic++] = *in++;
		len--;
		if (p->n_magic == 2 && start_bytes(p) != 0)
			return SEO_ENOMEM;
	}
	if (p->n_magic == 2 && len > 0)
		push_bytes(p, in, len);
	if (p->stop == STOP_NOMEM)
		return SEO_ENOMEM;
	return p->stop != GOING;
}

void rt_sitemap_parser_free(rt_sitemap_parser *p)
{
	if (p == NULL)
		return;
	free(p->text.s);
	if (p->xml != NULL) {
		/* libxml2 makes a document of its own for a DOCTYPE's
		 * declarations, even without a tree */
		if (p->xml->myDoc != NULL)
			xmlFreeDoc(p->xml->myDoc);
		xmlFreeParserCtxt(p->xml);
	}
	if (p->gz_started)
		inflateEnd(&p->z);
	free(p);
}

int rt_sitemap_parser_end(rt_sitemap_parser *p, rt_sitemap_doc *out)
{
	rt_sitemap_doc *d = p->doc;
	int rc = 0;

	if (p->n_magic < 2 && start_bytes(p) != 0)
		p->stop = STOP_NOMEM;
	if (p->gzip && !p->gz_ended && p->stop == GOING) {
		snprintf(p->xml_error, sizeof(p->xml_error), "gzip data is cut short");
		p->stop = STOP_ERROR;
	}
	if (p->stop == GOING)
		xmlParseChunk(p->xml, NULL, 0, 1);
	switch (p->stop) {
	case STOP_NOMEM:
		rc = SEO_ENOMEM;
		break;
	case STOP_NOT_SITEMAP:
		d->error = "root element is not urlset or sitemapindex";
		rc = SEO_EINVAL;
		break;
	case STOP_BOUND:
		d->error = "sitemap exceeds the size limit";
		break;
	case STOP_ERROR:
		d->error = seo_arena_strdup(p->a, p->xml_error[0] ? p->xml_error
								  : "sitemap cannot be read");
		if (d->error == NULL)
			rc = SEO_ENOMEM;
		break;
	default:
		break;
	}
	if (rc == 0 && d->kind == 0) {
		/* nothing was read before the error: not a sitemap */
		if (d->error == NULL)
			d->error = "document has no root element";
		rc = SEO_EINVAL;
	}
	d->xml_bytes = p->produced;
	*out = *d;
	rt_sitemap_parser_free(p);
	return rc;
}

int rt_sitemap_parse(const char *body, size_t len, size_t max_urls,
		     size_t max_children, seo_arena *a, rt_sitemap_doc *out)
{
	rt_sitemap_parser *p;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = rt_sitemap_parser_new(max_urls, max_children, RT_SITEMAP_MAX_XML, a, &p);
	if (rc != 0)
		return rc;
	if (rt_sitemap_parser_feed(p, body, len) == SEO_ENOMEM) {
		rt_sitemap_parser_free(p);
		return SEO_ENOMEM;
	}
	return rt_sitemap_parser_end(p, out);
}
