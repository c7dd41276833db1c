/*
 * sitemap.c: one sitemap document (urlset or sitemapindex, plain or
 * gzip), read as a stream with libxml2's reader.
 *
 * Reading rules: elements are matched by local name and depth only
 * (root, entry, field), so that any namespace or none is accepted and the
 * extensions' own <image:loc> or <video:content_loc>, one level deeper,
 * are not mistaken for an entry's fields. Values are trimmed; the first
 * of a repeated field wins; an entry without a <loc> is skipped.
 *
 * Safety: no network (XML_PARSE_NONET), no DTD loading and no entity
 * substitution (neither XML_PARSE_DTDLOAD nor XML_PARSE_NOENT), so an
 * external entity is never read and an entity reference reads as
 * nothing; libxml2's own limits stay on (no XML_PARSE_HUGE). The
 * decompressed size is bounded by RT_SITEMAP_MAX_XML.
 */
#include "rt.h"
#include "rt_int.h"

#include "seo/errors.h"

#include <ctype.h>
#include <libxml/xmlreader.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

/* The bytes handed to the XML reader, inflated when gzip. */
typedef struct source {
	const unsigned char *in;
	size_t len, off;
	int gzip, gz_done;
	z_stream z;
	size_t produced;
	int too_large;
} source;

static int src_read(void *ctx, char *buf, int cap)
{
	source *s = ctx;
	size_t n;

	if (s->produced >= RT_SITEMAP_MAX_XML) {
		s->too_large = 1;
		return -1;
	}
	if ((size_t)cap > RT_SITEMAP_MAX_XML - s->produced)
		cap = (int)(RT_SITEMAP_MAX_XML - s->produced);
	if (!s->gzip) {
		n = s->len - s->off < (size_t)cap ? s->len - s->off : (size_t)cap;
		memcpy(buf, s->in + s->off, n);
		s->off += n;
		s->produced += n;
		return (int)n;
	}
	s->z.next_out = (unsigned char *)buf;
	s->z.avail_out = (unsigned)cap;
	while (s->z.avail_out > 0 && !s->gz_done) {
		int zr;

		s->z.next_in = (unsigned char *)s->in + s->off;
		s->z.avail_in = (unsigned)(s->len - s->off);
		zr = inflate(&s->z, Z_NO_FLUSH);
		s->off = s->len - s->z.avail_in;
		if (zr == Z_STREAM_END) {
			/* another gzip member may follow; other trailing
			 * bytes (padding) are ignored */
			if (s->len - s->off >= 2 && s->in[s->off] == 0x1f &&
			    s->in[s->off + 1] == 0x8b && inflateReset(&s->z) == Z_OK)
				continue;
			s->gz_done = 1;
		} else if (zr != Z_OK) {
			return -1; /* corrupt, or truncated (Z_BUF_ERROR) */
		}
	}
	n = (size_t)cap - s->z.avail_out;
	s->produced += n;
	return (int)n;
}

enum field { F_NONE = -1, F_LOC, F_LASTMOD, F_CHANGEFREQ, F_PRIORITY, F_COUNT };

static const char *const field_names[F_COUNT] = {"loc", "lastmod", "changefreq", "priority"};

typedef struct reader {
	rt_sitemap_doc *doc;
	seo_arena *a;
	size_t max_urls, max_children;
	const char *fields[F_COUNT]; /* of the current entry */
	int in_entry;                /* inside <url> or <sitemap> */
	enum field field;            /* being read */
	rt__sbuf text;
	char xml_error[160];
} reader;

static void on_xml_error(void *ctx, xmlErrorPtr e)
{
	reader *rd = ctx;

	if (rd->xml_error[0] == '\0' && e != NULL && e->message != NULL) {
		size_t n;

		snprintf(rd->xml_error, sizeof(rd->xml_error), "%s", e->message);
		n = strlen(rd->xml_error);
		while (n > 0 && isspace((unsigned char)rd->xml_error[n - 1]))
			rd->xml_error[--n] = '\0';
	}
}

/* Arena copy of the trimmed text buffer, or NULL. */
static const char *take_text(reader *rd)
{
	const char *s = rd->text.s ? rd->text.s : "";
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	return seo_arena_strndup(rd->a, s, n);
}

/* An entry ended. Returns 0, 1 when the URL limit stops the reading, or
 * SEO_ENOMEM. */
static int end_entry(reader *rd)
{
	rt_sitemap_doc *d = rd->doc;
	const char *loc = rd->fields[F_LOC];

	if (loc == NULL || *loc == '\0')
		return 0;
	if (d->kind == RT_SITEMAP_INDEX) {
		if (d->n_children < rd->max_children)
			d->children[d->n_children++] = loc;
		d->children_total++;
		return 0;
	}
	if (d->n_urls == rd->max_urls) {
		d->truncated = 1;
		return 1;
	}
	d->urls[d->n_urls++] = (rt_sitemap_entry){loc, rd->fields[F_LASTMOD],
		rd->fields[F_CHANGEFREQ], rd->fields[F_PRIORITY]};
	return 0;
}

/* Handles the node the reader stands on. Returns 0, 1 to stop reading,
 * SEO_EINVAL (not a sitemap) or SEO_ENOMEM. */
static int on_node(reader *rd, xmlTextReaderPtr r)
{
	rt__sbuf empty = {0};
	int type = xmlTextReaderNodeType(r), depth = xmlTextReaderDepth(r);
	const char *name = (const char *)xmlTextReaderConstLocalName(r);
	rt_sitemap_doc *d = rd->doc;

	if (type == XML_READER_TYPE_ELEMENT && depth == 0) {
		if (name != NULL && strcasecmp(name, "urlset") == 0)
			d->kind = RT_SITEMAP_URLSET;
		else if (name != NULL && strcasecmp(name, "sitemapindex") == 0)
			d->kind = RT_SITEMAP_INDEX;
		else
			return SEO_EINVAL;
		return 0;
	}
	if (type == XML_READER_TYPE_ELEMENT && depth == 1) {
		memset(rd->fields, 0, sizeof(rd->fields));
		rd->field = F_NONE;
		rd->in_entry = name != NULL && !xmlTextReaderIsEmptyElement(r) &&
			strcasecmp(name, d->kind == RT_SITEMAP_INDEX ? "sitemap" : "url") == 0;
		return 0;
	}
	if (!rd->in_entry)
		return 0;
	if (type == XML_READER_TYPE_ELEMENT && depth == 2) {
		rd->field = F_NONE;
		for (int f = 0; f < F_COUNT; f++)
			if (name != NULL && strcmp(name, field_names[f]) == 0)
				rd->field = (enum field)f;
		free(rd->text.s);
		rd->text = empty;
		if (rd->field == F_NONE || !xmlTextReaderIsEmptyElement(r))
			return 0;
		type = XML_READER_TYPE_END_ELEMENT; /* <lastmod/>: ends at once */
	}
	if ((type == XML_READER_TYPE_TEXT || type == XML_READER_TYPE_CDATA ||
	     type == XML_READER_TYPE_SIGNIFICANT_WHITESPACE) && depth == 3 &&
	    rd->field != F_NONE) {
		const char *v = (const char *)xmlTextReaderConstValue(r);

		if (v != NULL)
			rt__sb_add(&rd->text, v, strlen(v));
		return rd->text.oom ? SEO_ENOMEM : 0;
	}
	if (type == XML_READER_TYPE_END_ELEMENT && depth == 2 && rd->field != F_NONE) {
		if (rd->fields[rd->field] == NULL &&
		    (rd->fields[rd->field] = take_text(rd)) == NULL)
			return SEO_ENOMEM;
		rd->field = F_NONE;
		return 0;
	}
	if (type == XML_READER_TYPE_END_ELEMENT && depth == 1) {
		rd->in_entry = 0;
		return end_entry(rd);
	}
	return 0;
}

int rt_sitemap_parse(const char *body, size_t len, size_t max_urls,
		     size_t max_children, seo_arena *a, rt_sitemap_doc *out)
{
	source src = {(const unsigned char *)body, len, 0, 0, 0, {0}, 0, 0};
	reader rd = {out, a, max_urls, max_children, {0}, 0, F_NONE, {0}, ""};
	xmlTextReaderPtr r = NULL;
	int rc = SEO_ENOMEM, step;

	memset(out, 0, sizeof(*out));
	out->urls = seo_arena_alloc(a, (max_urls + 1) * sizeof(*out->urls));
	out->children = seo_arena_alloc(a, (max_children + 1) * sizeof(*out->children));
	if (out->urls == NULL || out->children == NULL)
		goto out;
	if (len >= 2 && src.in[0] == 0x1f && src.in[1] == 0x8b) {
		src.gzip = 1;
		/* 16 + MAX_WBITS: a gzip header, not zlib's */
		if (inflateInit2(&src.z, 16 + MAX_WBITS) != Z_OK)
			goto out;
	}
	xmlInitParser();
	r = xmlReaderForIO(src_read, NULL, &src, NULL, NULL,
			   XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
			   XML_PARSE_NOCDATA);
	if (r == NULL)
		goto out;
	xmlTextReaderSetStructuredErrorHandler(r, on_xml_error, &rd);
	rc = 0;
	while ((step = xmlTextReaderRead(r)) == 1) {
		rc = on_node(&rd, r);
		if (rc != 0)
			break;
	}
	if (rc == SEO_ENOMEM)
		goto out;
	if (rc == SEO_EINVAL) {
		out->error = "root element is not urlset or sitemapindex";
		goto out;
	}
	rc = 0;
	if (step < 0) {
		const char *why = src.too_large ? "sitemap exceeds the size limit" :
			rd.xml_error[0] ? rd.xml_error : "sitemap cannot be read";

		out->error = seo_arena_strdup(a, why);
		out->truncated = src.too_large;
	}
	if (out->kind == 0) {
		/* nothing was read before the error: not a sitemap */
		if (out->error == NULL)
			out->error = "document has no root element";
		rc = SEO_EINVAL;
	}
out:
	free(rd.text.s);
	if (r != NULL)
		xmlFreeTextReader(r);
	if (src.gzip)
		inflateEnd(&src.z);
	return rc;
}
