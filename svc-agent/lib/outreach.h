/*
 * outreach.h: the outreach part of svc-agent: a website's mail campaigns,
 * their copy-ready contacts, and the two steps of an `outreach_send`
 * proposal that the proposals part calls (proposals.h): prepare (at
 * creation) and run (once approved). Mail goes out through svc-agent's
 * outbox (seo/mail.h).
 *
 * Functions return 0 or a negative SEO_E* code; a public error (a code
 * of seo/errors.h and a message for the client) goes to `err`.
 */
#ifndef AGENT_OUTREACH_H
#define AGENT_OUTREACH_H

#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "agent_int.h"
#include "seo/agent/v1/agent.pb-c.h"

/* The specification's Limits and the contact's field limits, in
 * characters. */
#define AGENT_OUTREACH_PER_PROPOSAL 100
#define AGENT_OUTREACH_PER_CAMPAIGN 500
#define AGENT_OUTREACH_EMAIL_MAX 320
#define AGENT_OUTREACH_DOMAIN_MAX 253
#define AGENT_OUTREACH_SUBJECT_MAX 500
#define AGENT_OUTREACH_BODY_MAX 10000
#define AGENT_OUTREACH_NAME_MAX 200
#define AGENT_OUTREACH_CAMPAIGN_NAME_MAX 200

/* A contact as validated: strings borrowed from the request, except
 * `domain` (normalised, on the arena) and `email_key`. */
typedef struct agent_contact {
	const char *email;
	const char *email_key;   /* lowercased email: one mail per address */
	const char *domain;
	const char *subject;
	const char *body;
	const char *name;        /* NULL when none */
	int has_authority;       /* 0: unknown (absent or out of range) */
	double authority;
} agent_contact;

/* The outreach fields of a CreateProposalRequest, validated. */
typedef struct agent_outreach_input {
	const char *campaign_name; /* inline campaign, or NULL */
	const char *campaign_id;   /* existing campaign, or NULL */
	const char *site_id;       /* required with campaign_name */
	agent_contact *contacts;   /* on the arena; n_contacts of them */
	size_t n_contacts;
} agent_outreach_input;

/*
 * Reads the outreach fields of `req` into *in (arrays on `arena`, which
 * must outlive *in): either campaign_name with site_id and 1..100
 * contacts, or campaign_id with 0..100 contacts; no urls; one contact per
 * domain; every field within its limit (a domain_authority out of 0..100
 * is kept as unknown). Returns 0, SEO_EINVAL with *err set
 * (invalid_proposal_input, the message naming the field), or SEO_ENOMEM.
 */
int agent__outreach_read(const Seo__Agent__V1__CreateProposalRequest *req,
			 seo_arena *arena, agent_outreach_input *in,
			 agent_err *err);

/* 1 when `id` has the form of a campaign id (cmp_ and 24 url-safe
 * characters). */
int agent__outreach_campaign_id_ok(const char *id);

/* Characters (UTF-8 code points) of `s`, or -1 when it is not valid UTF-8
 * or holds a control character other than those `allowed` ("\t\n\r" for a
 * body, "" for one-line fields). */
long agent__outreach_chars(const char *s, const char *allowed);

/* The kind's hooks, agent_outreach_prepare() and agent_outreach_run(),
 * are declared with the kinds table's types in proposals.h. What a
 * prepare holds is stored under a hold id (`hld_`) named in the
 * proposal's payload, {"campaign_id", "hold_id", "contacts"}. */

#endif
