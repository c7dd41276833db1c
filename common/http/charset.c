/*
 * charset.c: which charset an HTML document is in, and conversion of it
 * to valid UTF-8 with glibc's iconv.
 */
#include "seo/charset.h"

#include "seo/errors.h"

#include <ctype.h>
#include <errno.h>
#include <iconv.h>
#include <string.h>
#include <strings.h>

#define PRESCAN_BYTES 1024

/* Length of the valid UTF-8 sequence at `s` (at most `len` bytes), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t len)
{
	size_t n;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates and values past U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

static int utf8_valid(const char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		size_t n = utf8_seq((const unsigned char *)s + i, len - i);

		if (n == 0)
			return 0;
		i += n;
	}
	return 1;
}

/* Copies a charset label (letters, digits, - _ . : ) from `p`, lowercase,
 * into `dst`; returns its length. */
static size_t label_copy(const char *p, const char *end, char *dst, size_t cap)
{
	size_t n = 0;

	while (p < end && (*p == '"' || *p == '\'' || isspace((unsigned char)*p)))
		p++;
	while (p < end && n + 1 < cap &&
	       (isalnum((unsigned char)*p) || strchr("-_.:", *p) != NULL))
		dst[n++] = (char)tolower((unsigned char)*p++);
	dst[n] = '\0';
	return n;
}

/* The value of "charset=" inside `s` (a Content-Type or meta content). */
static size_t charset_param(const char *s, const char *end, char *dst, size_t cap)
{
	for (const char *p = s; p + 8 <= end; p++) {
		const char *q = p + 7;

		if (strncasecmp(p, "charset", 7) != 0)
			continue;
		while (q < end && isspace((unsigned char)*q))
			q++;
		if (q < end && *q == '=')
			return label_copy(q + 1, end, dst, cap);
	}
	return 0;
}

/* The HTML5 prescan, reduced to what real pages use: <meta charset=x> and
 * <meta http-equiv=content-type content="...; charset=x">. */
static size_t meta_prescan(const char *body, size_t len, char *dst, size_t cap)
{
	const char *end = body + (len < PRESCAN_BYTES ? len : PRESCAN_BYTES);

	for (const char *p = body; p + 5 < end; p++) {
		const char *tag_end;

		if (p[0] != '<' || strncasecmp(p + 1, "meta", 4) != 0 ||
		    !(isspace((unsigned char)p[5]) || p[5] == '/'))
			continue;
		tag_end = memchr(p, '>', (size_t)(end - p));
		if (tag_end == NULL)
			tag_end = end;
		for (const char *q = p + 5; q + 8 <= tag_end; q++) {
			const char *v = q + 7;

			if (strncasecmp(q, "charset", 7) != 0 ||
			    isalnum((unsigned char)q[-1]))
				continue;
			while (v < tag_end && isspace((unsigned char)*v))
				v++;
			if (v < tag_end && *v == '=')
				return label_copy(v + 1, tag_end, dst, cap);
		}
		/* http-equiv content: "text/html; charset=x" */
		if (charset_param(p, tag_end, dst, cap) > 0)
			return strlen(dst);
	}
	return 0;
}

/* WHATWG's label table, for the labels iconv would read differently. */
static const char *label_normalise(const char *label)
{
	static const char *const cp1252[] = {
		"iso-8859-1", "iso8859-1", "latin1", "l1", "us-ascii", "ascii",
		"iso_8859-1", "cp819", "ibm819", "x-cp1252", "cp1252",
		"windows-1252", "ansi_x3.4-1968",
	};

	for (size_t i = 0; i < sizeof(cp1252) / sizeof(cp1252[0]); i++)
		if (strcmp(label, cp1252[i]) == 0)
			return "windows-1252";
	if (strcmp(label, "utf8") == 0 || strcmp(label, "unicode-1-1-utf-8") == 0)
		return "utf-8";
	if (strcmp(label, "x-sjis") == 0 || strcmp(label, "shift-jis") == 0)
		return "shift_jis";
	if (strcmp(label, "gb2312") == 0 || strcmp(label, "gbk") == 0)
		return "gb18030";
	return label;
}

const char *seo_charset_detect(const char *body, size_t len,
			      const char *content_type, seo_arena *a)
{
	const unsigned char *b = (const unsigned char *)body;
	char label[64];

	if (len >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf)
		return "utf-8";
	if (len >= 2 && b[0] == 0xfe && b[1] == 0xff)
		return "utf-16be";
	if (len >= 2 && b[0] == 0xff && b[1] == 0xfe)
		return "utf-16le";
	if ((content_type != NULL &&
	     charset_param(content_type, content_type + strlen(content_type),
			   label, sizeof(label)) > 0) ||
	    meta_prescan(body, len, label, sizeof(label)) > 0) {
		/* a document that says UTF-16 in ASCII bytes is not UTF-16 */
		if (strncmp(label, "utf-16", 6) == 0)
			return "utf-8";
		return seo_arena_strdup(a, label_normalise(label));
	}
	return utf8_valid(body, len) ? "utf-8" : "windows-1252";
}

/* Copies UTF-8 from `in`, replacing invalid bytes with U+FFFD. */
static size_t utf8_sanitise(const char *in, size_t len, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < len;) {
		size_t n = utf8_seq((const unsigned char *)in + i, len - i);

		if (n == 0) {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(out + o, in + i, n);
		o += n;
		i += n;
	}
	return o;
}

int seo_to_utf8(const char *in, size_t len, const char *charset, seo_arena *a,
	       char **out, size_t *out_len)
{
	iconv_t cd = (iconv_t)-1;
	char *conv = NULL, *dst;
	size_t conv_len = 0;
	int rc = SEO_ENOMEM;

	if (strcasecmp(charset, "utf-8") != 0)
		cd = iconv_open("UTF-8", charset);
	if (cd != (iconv_t)-1) {
		/* 4 output bytes per input byte covers every charset
		 * (UTF-16 input takes 2 bytes per code unit). */
		size_t cap = 4 * len + 4, inleft = len, outleft = cap;
		char *ip = (char *)in, *op;

		conv = seo_arena_alloc(a, cap);
		if (conv == NULL)
			goto out;
		op = conv;
		while (inleft > 0) {
			if (iconv(cd, &ip, &inleft, &op, &outleft) != (size_t)-1)
				break;
			if (errno == E2BIG)
				break; /* cannot happen with the bound above */
			/* EILSEQ or EINVAL (truncated): one replacement,
			 * skip one byte */
			if (outleft < 3)
				break;
			memcpy(op, "\xef\xbf\xbd", 3);
			op += 3;
			outleft -= 3;
			ip++;
			inleft--;
		}
		in = conv;
		len = (size_t)(op - conv);
	}
	if (len >= 3 && memcmp(in, "\xef\xbb\xbf", 3) == 0) {
		in += 3;
		len -= 3;
	}
	/* every invalid byte grows to 3 */
	dst = seo_arena_alloc(a, 3 * len + 1);
	if (dst == NULL)
		goto out;
	conv_len = utf8_sanitise(in, len, dst);
	dst[conv_len] = '\0';
	*out = dst;
	*out_len = conv_len;
	rc = 0;
out:
	if (cd != (iconv_t)-1)
		iconv_close(cd);
	return rc;
}
