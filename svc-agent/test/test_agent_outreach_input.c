/*
 * test_agent_outreach_input: the outreach fields of POST /v1/proposals and
 * the specification's field limits, at their exact sizes.
 */
#include <math.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "outreach.h"
#include "seo/errors.h"

static seo_arena *arena;
static Seo__Agent__V1__Contact contacts[AGENT_OUTREACH_PER_PROPOSAL + 1];
static Seo__Agent__V1__Contact *contact_ptrs[AGENT_OUTREACH_PER_PROPOSAL + 1];
static Seo__Agent__V1__CreateProposalRequest req;

/* `n` bytes of `c` on the arena. */
static char *repeat(const char *c, size_t n)
{
	size_t len = strlen(c);
	char *s = seo_arena_alloc(arena, n * len + 1);

	for (size_t i = 0; i < n; i++)
		memcpy(s + i * len, c, len);
	s[n * len] = '\0';
	return s;
}

/* An inline request of `n` valid contacts on domains d0.example ... */
static void inline_request(size_t n)
{
	seo__agent__v1__create_proposal_request__init(&req);
	req.kind = "outreach_send";
	req.site_id = "site_1";
	req.campaign_name = "Spring links";
	for (size_t i = 0; i < n; i++) {
		seo__agent__v1__contact__init(&contacts[i]);
		contacts[i].email = seo_arena_printf(arena, "Editor%zu@D%zu.example", i, i);
		contacts[i].domain = seo_arena_printf(arena, "d%zu.example", i);
		contacts[i].subject = "A resource for your readers";
		contacts[i].body = "Hello,\n\tthis page may help.\r\n";
		contact_ptrs[i] = &contacts[i];
	}
	req.contacts = contact_ptrs;
	req.n_contacts = n;
}

static int read_req(agent_outreach_input *in, agent_err *err)
{
	return agent__outreach_read(&req, arena, in, err);
}

#define ASSERT_INVALID(what)                                              \
	do {                                                                  \
		agent_outreach_input in_;                                     \
		agent_err err_ = {0};                                         \
		CU_ASSERT_EQUAL(read_req(&in_, &err_), SEO_EINVAL);           \
		CU_ASSERT_STRING_EQUAL(err_.code, "invalid_proposal_input");  \
		CU_ASSERT_PTR_NOT_NULL(strstr(err_.message, what));           \
	} while (0)

#define ASSERT_VALID()                                                    \
	do {                                                                  \
		agent_outreach_input in_;                                     \
		agent_err err_ = {0};                                         \
		CU_ASSERT_EQUAL(read_req(&in_, &err_), 0);                    \
	} while (0)

static void test_chars(void)
{
	CU_ASSERT_EQUAL(agent__outreach_chars("abc", ""), 3);
	CU_ASSERT_EQUAL(agent__outreach_chars("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80", ""), 9);
	CU_ASSERT_EQUAL(agent__outreach_chars("a\nb", ""), -1);
	CU_ASSERT_EQUAL(agent__outreach_chars("a\nb\tc\r", "\t\n\r"), 6);
	CU_ASSERT_EQUAL(agent__outreach_chars("a\x01", "\t\n\r"), -1);
	CU_ASSERT_EQUAL(agent__outreach_chars("a\x7f", ""), -1);
	CU_ASSERT_EQUAL(agent__outreach_chars("\xc2\x85", ""), -1);      /* U+0085 */
	CU_ASSERT_EQUAL(agent__outreach_chars("\xc0\xaf", ""), -1);      /* overlong */
	CU_ASSERT_EQUAL(agent__outreach_chars("\xed\xa0\x80", ""), -1);  /* surrogate */
	CU_ASSERT_EQUAL(agent__outreach_chars("\xe2\x82", ""), -1);      /* cut */
}

static void test_inline_read(void)
{
	agent_outreach_input in;
	agent_err err = {0};

	inline_request(2);
	contacts[0].domain = "https://WWW.Example.COM/page";
	contacts[0].name = "Ann";
	contacts[0].has_domain_authority = 1;
	contacts[0].domain_authority = 42.5;
	contacts[1].has_domain_authority = 1;
	contacts[1].domain_authority = 100.5;
	CU_ASSERT_EQUAL_FATAL(read_req(&in, &err), 0);
	CU_ASSERT_STRING_EQUAL(in.campaign_name, "Spring links");
	CU_ASSERT_PTR_NULL(in.campaign_id);
	CU_ASSERT_STRING_EQUAL(in.site_id, "site_1");
	CU_ASSERT_EQUAL_FATAL(in.n_contacts, 2);
	CU_ASSERT_STRING_EQUAL(in.contacts[0].domain, "example.com");
	CU_ASSERT_STRING_EQUAL(in.contacts[0].email, "Editor0@D0.example");
	CU_ASSERT_STRING_EQUAL(in.contacts[0].email_key, "editor0@d0.example");
	CU_ASSERT_STRING_EQUAL(in.contacts[0].name, "Ann");
	CU_ASSERT_EQUAL(in.contacts[0].has_authority, 1);
	CU_ASSERT_DOUBLE_EQUAL(in.contacts[0].authority, 42.5, 1e-9);
	/* out of range: kept as unknown, not refused */
	CU_ASSERT_EQUAL(in.contacts[1].has_authority, 0);
	CU_ASSERT_PTR_NULL(in.contacts[1].name);
}

static void test_authority_range(void)
{
	const double unknown[] = {-0.5, 100.01, 1e300, NAN, INFINITY};
	agent_outreach_input in;
	agent_err err;

	inline_request(1);
	contacts[0].has_domain_authority = 1;
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		contacts[0].domain_authority = unknown[i];
		CU_ASSERT_EQUAL(read_req(&in, &err), 0);
		CU_ASSERT_EQUAL(in.contacts[0].has_authority, 0);
	}
	contacts[0].domain_authority = 0;
	CU_ASSERT_EQUAL(read_req(&in, &err), 0);
	CU_ASSERT_EQUAL(in.contacts[0].has_authority, 1);
	contacts[0].domain_authority = 100;
	CU_ASSERT_EQUAL(read_req(&in, &err), 0);
	CU_ASSERT_EQUAL(in.contacts[0].has_authority, 1);
}

/* Each limit at its size passes and one character more is refused;
 * multi-byte characters count once. */
static void test_field_limits(void)
{
	char *local = repeat("a", 64);

	inline_request(1);
	/* email: 64, "@" and four labels of 63 make 320 */
	contacts[0].email = seo_arena_printf(arena, "%s@%s.%s.%s.%s", local,
					     repeat("b", 63), repeat("c", 63),
					     repeat("d", 63), repeat("e", 63));
	CU_ASSERT_EQUAL(strlen(contacts[0].email), 320);
	ASSERT_VALID();
	contacts[0].email = seo_arena_printf(arena, "%sx", contacts[0].email);
	ASSERT_INVALID("contacts[0].email is longer than 320");
	inline_request(1);
	contacts[0].domain = seo_arena_printf(arena, "%s.%s.%s.%s", repeat("a", 63),
					      repeat("b", 63), repeat("c", 63),
					      repeat("d", 61));
	CU_ASSERT_EQUAL(strlen(contacts[0].domain), 253);
	ASSERT_VALID();
	contacts[0].domain = seo_arena_printf(arena, "%sx", contacts[0].domain);
	ASSERT_INVALID("contacts[0].domain is longer than 253");
	inline_request(1);
	contacts[0].subject = repeat("\xc3\xa9", 500);
	ASSERT_VALID();
	contacts[0].subject = repeat("s", 501);
	ASSERT_INVALID("contacts[0].subject is longer than 500");
	inline_request(1);
	contacts[0].body = repeat("\xe2\x82\xac", 10000);
	ASSERT_VALID();
	contacts[0].body = repeat("b", 10001);
	ASSERT_INVALID("contacts[0].body is longer than 10000");
	inline_request(1);
	contacts[0].name = repeat("n", 200);
	ASSERT_VALID();
	contacts[0].name = repeat("n", 201);
	ASSERT_INVALID("contacts[0].name is longer than 200");
	inline_request(1);
	req.campaign_name = repeat("c", 200);
	ASSERT_VALID();
	req.campaign_name = repeat("c", 201);
	ASSERT_INVALID("campaign_name is longer than 200");
}

/* Sets field `name` of contacts[0]. */
static void set_field(const char *name, char *value)
{
	if (strcmp(name, "email") == 0)
		contacts[0].email = value;
	else if (strcmp(name, "domain") == 0)
		contacts[0].domain = value;
	else if (strcmp(name, "subject") == 0)
		contacts[0].subject = value;
	else if (strcmp(name, "body") == 0)
		contacts[0].body = value;
	else
		contacts[0].name = value;
}

static void test_contact_rules(void)
{
	static const struct {
		const char *field;
		char *value;
		const char *message; /* NULL: valid */
	} cases[] = {
		{"email", "plain", "contacts[0].email is not"},
		{"email", "@d.example", "contacts[0].email is not"},
		{"email", "a@", "contacts[0].email is not"},
		{"email", "a@b", "contacts[0].email is not"},
		{"email", "a@@b.example", "contacts[0].email is not"},
		{"email", "a b@c.example", "contacts[0].email is not"},
		{"email", "a..b@c.example", "contacts[0].email is not"},
		{"email", ".a@c.example", "contacts[0].email is not"},
		{"email", "a.@c.example", "contacts[0].email is not"},
		{"email", "a@-b.example", "contacts[0].email is not"},
		{"email", "a@b-.example", "contacts[0].email is not"},
		{"email", "a@b..example", "contacts[0].email is not"},
		{"email", "<a@b.example>", "contacts[0].email is not"},
		{"email", "\xc3\xa9@b.example", "contacts[0].email is not"},
		{"email", "a@b_c.example", "contacts[0].email is not"},
		{"email", "a@b.example\r\nBcc: x", "contacts[0].email holds control"},
		{"email", NULL, "contacts[0].email is required"},
		{"email", "o'brien+links@mail.example.co.uk", NULL},
		{"domain", "not a domain", "contacts[0].domain is not a domain"},
		{"domain", "192.168.1.1", "contacts[0].domain is not a domain"},
		{"subject", "two\nlines", "contacts[0].subject holds control"},
		{"subject", "   ", "contacts[0].subject is empty"},
		{"body", NULL, "contacts[0].body is required"},
		{"body", "bell\a", "contacts[0].body holds control"},
		{"name", "", "contacts[0].name is empty"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		inline_request(1);
		set_field(cases[i].field, cases[i].value);
		if (cases[i].message == NULL)
			ASSERT_VALID();
		else
			ASSERT_INVALID(cases[i].message);
	}
	/* one contact per domain, www and case aside */
	inline_request(2);
	contacts[0].domain = "www.Shared.example";
	contacts[1].domain = "shared.example";
	ASSERT_INVALID("contacts[1].domain repeats shared.example");
}

static void test_request_shape(void)
{
	char *urls[] = {"https://example.com/"};

	inline_request(AGENT_OUTREACH_PER_PROPOSAL);
	ASSERT_VALID();
	inline_request(AGENT_OUTREACH_PER_PROPOSAL + 1);
	ASSERT_INVALID("more than 100");
	inline_request(1);
	req.n_contacts = 0;
	ASSERT_INVALID("contacts is required");
	inline_request(1);
	req.site_id = NULL;
	ASSERT_INVALID("site_id is required");
	inline_request(1);
	req.campaign_name = NULL;
	ASSERT_INVALID("campaign_name or campaign_id");
	inline_request(1);
	req.campaign_id = "cmp_x";
	ASSERT_INVALID("campaign_name or campaign_id");
	inline_request(1);
	req.campaign_name = "";
	ASSERT_INVALID("campaign_name is empty");
	inline_request(1);
	req.urls = urls;
	req.n_urls = 1;
	ASSERT_INVALID("urls is not a field of outreach_send");
	/* an existing campaign: contacts optional, site_id optional */
	inline_request(0);
	req.campaign_name = NULL;
	req.site_id = NULL;
	req.campaign_id = "cmp_abc";
	ASSERT_VALID();
}

static void test_campaign_id_form(void)
{
	CU_ASSERT_TRUE(agent__outreach_campaign_id_ok("cmp_abcdefghijklmnopqrstuv-_"));
	CU_ASSERT_FALSE(agent__outreach_campaign_id_ok("cmp_abc"));
	CU_ASSERT_FALSE(agent__outreach_campaign_id_ok("prp_abcdefghijklmnopqrstuv-_"));
	CU_ASSERT_FALSE(agent__outreach_campaign_id_ok("cmp_abcdefghijklmnopqrstu'_"));
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	arena = seo_arena_new(0);
	if (arena == NULL || CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("agent_outreach_input", NULL, NULL);
	CU_add_test(s, "characters counted, controls refused", test_chars);
	CU_add_test(s, "an inline request read and normalised", test_inline_read);
	CU_add_test(s, "domain_authority out of range is unknown", test_authority_range);
	CU_add_test(s, "field limits at their sizes", test_field_limits);
	CU_add_test(s, "contact rules", test_contact_rules);
	CU_add_test(s, "request shape and contact counts", test_request_shape);
	CU_add_test(s, "campaign id form", test_campaign_id_form);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	seo_arena_free(arena);
	return failed != 0;
}
