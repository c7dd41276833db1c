/*
 * techstack.c: rt_tech_stack(), the tech stack object from a fetched
 * homepage through the fingerprint engine of seo/tech.h. Pure: no
 * network.
 */
#include "rt.h"

#include <strings.h>

#include "seo/errors.h"

/* The first meta generator of `in`, or NULL. */
static const char *generator(const seo_tech_input *in)
{
	for (size_t i = 0; i < in->n_meta; i++)
		if (strcasecmp(in->meta[i].name, "generator") == 0)
			return in->meta[i].value;
	return NULL;
}

int rt_tech_stack(const char *domain, const seo_fetch_result *res,
		  const seo_tech_rules *rules, seo_arena *a, json_t **out)
{
	seo_tech_kv *hdr = seo_arena_alloc(a, (res->n_headers + 1) * sizeof(*hdr));
	seo_tech_match *m;
	seo_tech_input in;
	json_t *techs;
	size_t n;

	*out = NULL;
	if (hdr == NULL)
		return SEO_ENOMEM;
	for (size_t i = 0; i < res->n_headers; i++)
		hdr[i] = (seo_tech_kv){res->headers[i].name, res->headers[i].value};
	if (seo_tech_input_from_page(hdr, res->n_headers, res->body, res->body_len,
				     a, &in) != 0 ||
	    seo_tech_detect(rules, &in, a, &m, &n) != 0 ||
	    (techs = json_array()) == NULL)
		return SEO_ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (json_array_append_new(techs, json_pack("{s:s, s:s, s:s}", "name", m[i].name,
							   "category", m[i].category,
							   "confidence",
							   seo_tech_confidence_name(m[i].confidence))) != 0) {
			json_decref(techs);
			return SEO_ENOMEM;
		}
	/* s? and s*: null for an absent header or generator */
	*out = json_pack("{s:s, s:o, s:s?, s:s?, s:I, s:s?}", "domain", domain,
			 "technologies", techs, "server", seo_fetch_header(res, "server"),
			 "x_powered_by", seo_fetch_header(res, "x-powered-by"),
			 "response_time_ms", (json_int_t)res->response_time_ms,
			 "generator", generator(&in));
	return *out != NULL ? 0 : SEO_ENOMEM;
}
