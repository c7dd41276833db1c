/*
 * The outreach fields of POST /v1/proposals, validated against the
 * specification's field limits (outreach.h).
 */
#include "outreach.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

#include "seo/domain.h"
#include "seo/errors.h"

#define AUTHORITY_MIN 0.0
#define AUTHORITY_MAX 100.0
#define EMAIL_LOCAL_MAX 64
#define DNS_LABEL_MAX 63
/* An existing campaign's id: the prefix and 24 url-safe characters
 * (agent__new_id()). */
#define CAMPAIGN_PREFIX "cmp_"
#define CAMPAIGN_ID_LEN (4 + 24)

/* Length of the UTF-8 sequence starting with byte `c`, 0 when it cannot
 * start one. */
static int seq_len(unsigned char c)
{
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		return 2;
	if (c >= 0xE0 && c <= 0xEF)
		return 3;
	if (c >= 0xF0 && c <= 0xF4)
		return 4;
	return 0;
}

long agent__outreach_chars(const char *s, const char *allowed)
{
	const unsigned char *p = (const unsigned char *)s;
	long n = 0;

	while (*p != '\0') {
		int len = seq_len(*p);
		unsigned cp = len == 1 ? *p : *p & (0xFF >> (len + 1));

		if (len == 0)
			return -1;
		for (int i = 1; i < len; i++) {
			if ((p[i] & 0xC0) != 0x80)
				return -1;
			cp = cp << 6 | (p[i] & 0x3F);
		}
		/* Overlong forms, surrogates and beyond U+10FFFF. */
		if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
		    (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
			return -1;
		if ((cp < 0x20 && strchr(allowed, (int)cp) == NULL) ||
		    (cp >= 0x7F && cp <= 0x9F))
			return -1;
		p += len;
		n++;
	}
	return n;
}

/* Not empty and not only blanks. */
static int blank(const char *s)
{
	while (*s != '\0' && isspace((unsigned char)*s))
		s++;
	return *s == '\0';
}

/*
 * A text field: present (unless optional), printable (`allowed` control
 * characters aside), not blank, at most `max` characters.
 */
static int check_text(const char *field, const char *s, const char *allowed,
		      long max, int optional, agent_err *err)
{
	long n;

	if (s == NULL) {
		if (optional)
			return 0;
		return agent__err(err, SEO_EINVAL, "invalid_proposal_input",
				  "%s is required", field);
	}
	n = agent__outreach_chars(s, allowed);
	if (n < 0)
		return agent__err(err, SEO_EINVAL, "invalid_proposal_input",
				  "%s holds control characters or invalid text",
				  field);
	if (blank(s))
		return agent__err(err, SEO_EINVAL, "invalid_proposal_input",
				  "%s is empty", field);
	if (n > max)
		return agent__err(err, SEO_EINVAL, "invalid_proposal_input",
				  "%s is longer than %ld characters", field, max);
	return 0;
}

/* A DNS name after an address's '@': letters, digits, '-' in labels of
 * 1..63 that neither start nor end with '-', two labels at least. */
static int mail_domain_ok(const char *d)
{
	size_t label = 0;
	int labels = 1;

	for (const char *p = d; *p != '\0'; p++) {
		if (*p == '.') {
			if (label == 0 || p[-1] == '-')
				return 0;
			label = 0;
			labels++;
		} else if (isalnum((unsigned char)*p) ||
			   (*p == '-' && label > 0)) {
			if (++label > DNS_LABEL_MAX)
				return 0;
		} else {
			return 0;
		}
	}
	return label > 0 && d[strlen(d) - 1] != '-' && labels >= 2;
}

/* An address of the plain form local@domain in ASCII (no quoted local
 * part, no comments, no display name): what goes in RCPT TO as is. */
static int email_ok(const char *e)
{
	static const char atext[] = "!#$%&'*+/=?^_`{|}~-";
	const char *at = strchr(e, '@');
	size_t local;

	if (at == NULL || strchr(at + 1, '@') != NULL)
		return 0;
	local = (size_t)(at - e);
	if (local == 0 || local > EMAIL_LOCAL_MAX || e[0] == '.' || at[-1] == '.')
		return 0;
	for (const char *p = e; p < at; p++) {
		if (*p == '.' ? p[1] == '.'
			      : !isalnum((unsigned char)*p) && strchr(atext, *p) == NULL)
			return 0;
	}
	return mail_domain_ok(at + 1);
}

static char *lower_dup(seo_arena *arena, const char *s)
{
	char *d = seo_arena_strdup(arena, s);

	for (char *p = d; p != NULL && *p != '\0'; p++)
		*p = (char)tolower((unsigned char)*p);
	return d;
}

static int read_contact(const Seo__Agent__V1__Contact *c, size_t i,
			seo_arena *arena, agent_contact *out, agent_err *err)
{
	char field[64], domain[SEO_DOMAIN_MAX + 1];
	int rc;

#define FIELD(name) (snprintf(field, sizeof(field), "contacts[%zu]." name, i), field)
	rc = check_text(FIELD("email"), c->email, "", AGENT_OUTREACH_EMAIL_MAX, 0, err);
	if (rc == 0 && !email_ok(c->email))
		rc = agent__err(err, SEO_EINVAL, "invalid_proposal_input",
				"%s is not an email address", field);
	if (rc == 0)
		rc = check_text(FIELD("domain"), c->domain, "",
				AGENT_OUTREACH_DOMAIN_MAX, 0, err);
	if (rc == 0 && seo_domain_normalize(c->domain, SEO_DOMAIN_STRIP_WWW,
					    domain, sizeof(domain)) != 0)
		rc = agent__err(err, SEO_EINVAL, "invalid_proposal_input",
				"%s is not a domain", field);
	if (rc == 0)
		rc = check_text(FIELD("subject"), c->subject, "",
				AGENT_OUTREACH_SUBJECT_MAX, 0, err);
	if (rc == 0)
		rc = check_text(FIELD("body"), c->body, "\t\n\r",
				AGENT_OUTREACH_BODY_MAX, 0, err);
	if (rc == 0)
		rc = check_text(FIELD("name"), c->name, "", AGENT_OUTREACH_NAME_MAX,
				1, err);
#undef FIELD
	if (rc != 0)
		return rc;
	out->email = c->email;
	out->email_key = lower_dup(arena, c->email);
	out->domain = seo_arena_strdup(arena, domain);
	out->subject = c->subject;
	out->body = c->body;
	out->name = c->name;
	/* The specification keeps an out-of-range authority as unknown. */
	out->has_authority = c->has_domain_authority && isfinite(c->domain_authority) &&
			     c->domain_authority >= AUTHORITY_MIN &&
			     c->domain_authority <= AUTHORITY_MAX;
	out->authority = out->has_authority ? c->domain_authority : 0;
	return out->email_key == NULL || out->domain == NULL ? SEO_ENOMEM : 0;
}

/* 1 when one of the `n` contacts already read has domain `d`. */
static int domain_repeated(const agent_contact *cs, size_t n, const char *d)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(cs[i].domain, d) == 0)
			return 1;
	return 0;
}

static int read_campaign(const Seo__Agent__V1__CreateProposalRequest *req,
			 agent_outreach_input *in, agent_err *err)
{
	int rc;

	if (req->n_urls > 0)
		return agent__err(err, SEO_EINVAL, "invalid_proposal_input",
				  "urls is not a field of outreach_send");
	if ((req->campaign_name == NULL) == (req->campaign_id == NULL))
		return agent__err(err, SEO_EINVAL, "invalid_proposal_input",
				  "outreach_send takes campaign_name or campaign_id, "
				  "one of them");
	if (req->campaign_id != NULL) {
		/* An id of another form names no campaign; the lookup says so. */
		in->campaign_id = req->campaign_id;
		in->site_id = req->site_id;
		return 0;
	}
	rc = check_text("campaign_name", req->campaign_name, "",
			AGENT_OUTREACH_CAMPAIGN_NAME_MAX, 0, err);
	if (rc != 0)
		return rc;
	if (req->site_id == NULL || *req->site_id == '\0')
		return agent__err(err, SEO_EINVAL, "invalid_proposal_input",
				  "site_id is required for a new campaign");
	if (req->n_contacts == 0)
		return agent__err(err, SEO_EINVAL, "invalid_proposal_input",
				  "contacts is required with campaign_name");
	in->campaign_name = req->campaign_name;
	in->site_id = req->site_id;
	return 0;
}

int agent__outreach_read(const Seo__Agent__V1__CreateProposalRequest *req,
			 seo_arena *arena, agent_outreach_input *in,
			 agent_err *err)
{
	int rc;

	memset(in, 0, sizeof(*in));
	rc = read_campaign(req, in, err);
	if (rc != 0)
		return rc;
	if (req->n_contacts > AGENT_OUTREACH_PER_PROPOSAL)
		return agent__err(err, SEO_EINVAL, "invalid_proposal_input",
				  "contacts holds more than %d entries",
				  AGENT_OUTREACH_PER_PROPOSAL);
	if (req->n_contacts == 0)
		return 0;
	in->contacts = seo_arena_calloc(arena, req->n_contacts * sizeof(*in->contacts));
	if (in->contacts == NULL)
		return SEO_ENOMEM;
	for (size_t i = 0; i < req->n_contacts; i++) {
		agent_contact *c = &in->contacts[i];

		if (req->contacts[i] == NULL)
			return agent__err(err, SEO_EINVAL, "invalid_proposal_input",
					  "contacts[%zu] is not an object", i);
		rc = read_contact(req->contacts[i], i, arena, c, err);
		if (rc != 0)
			return rc;
		if (domain_repeated(in->contacts, i, c->domain))
			return agent__err(err, SEO_EINVAL, "invalid_proposal_input",
					  "contacts[%zu].domain repeats %s: one contact "
					  "per domain", i, c->domain);
	}
	in->n_contacts = req->n_contacts;
	return 0;
}

int agent__outreach_campaign_id_ok(const char *id)
{
	if (strlen(id) != CAMPAIGN_ID_LEN ||
	    strncmp(id, CAMPAIGN_PREFIX, strlen(CAMPAIGN_PREFIX)) != 0)
		return 0;
	for (const char *p = id + strlen(CAMPAIGN_PREFIX); *p != '\0'; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_')
			return 0;
	return 1;
}
