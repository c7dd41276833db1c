/*
 * test_pbjson.c: the shared JSON <-> protobuf-c conversion (seo/pbjson.h)
 * on the public messages: round trips, faults and the paths naming them,
 * the two strictness flags, bytes, enums, RawJson and presence.
 */
#include <CUnit/Basic.h>
#include <string.h>

#include "seo/account/v1/account.pb-c.h"
#include "seo/common/raw_json.pb-c.h"
#include "seo/errors.h"
#include "seo/nullable.h"
#include "seo/pbjson.h"
#include "seo/realtime/v1/realtime.pb-c.h"

#define ACCT(t) (&seo__account__v1__##t##__descriptor)
#define RT(t) (&seo__realtime__v1__##t##__descriptor)
/* The required members of a SitemapResponse the tests do not vary. */
#define SITEMAP_REST \
	", \"sitemap_type\": \"x\", \"child_sitemaps_total\": 0," \
	" \"truncated\": false, \"source\": \"none\", \"billed\": 0}"

static seo_arena *arena;
static seo_pbjson_error err;

/* Decodes `text` into a message of `desc` with `flags`; the return code. */
static int decode(const char *text, const ProtobufCMessageDescriptor *desc,
		  unsigned flags, ProtobufCMessage **out)
{
	json_t *j = json_loads(text, JSON_ALLOW_NUL, NULL);
	int rc;

	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	memset(&err, 0, sizeof(err));
	rc = seo_pbjson_decode(j, desc, flags, arena, out, &err);
	json_decref(j);
	return rc;
}

/* Whether `text` decodes with `flags` and encodes back to the same JSON. */
static int round_trips(const char *text, const ProtobufCMessageDescriptor *desc,
		       unsigned flags)
{
	ProtobufCMessage *m = NULL;
	json_t *want = json_loads(text, 0, NULL), *got;
	int same;

	if (decode(text, desc, flags, &m) != 0)
		return 0;
	got = seo_pbjson_encode(m, seo_proto_nullable);
	same = json_equal(want, got);
	json_decref(want);
	json_decref(got);
	return same;
}

/* Whether `text` fails with `fault` at `path`. */
static int fails(const char *text, const ProtobufCMessageDescriptor *desc,
		 unsigned flags, seo_pbjson_fault fault, const char *path)
{
	ProtobufCMessage *m = NULL;

	return decode(text, desc, flags, &m) == SEO_EINVAL && err.fault == fault &&
	       strcmp(err.path, path) == 0;
}

static void test_round_trip(void)
{
	CU_ASSERT(round_trips("{\"workspace_id\": \"w\", \"user_id\": \"u\","
			      " \"key_id\": \"k\", \"role\": \"owner\","
			      " \"charge_id\": \"\", \"credits_remaining\": -5,"
			      " \"rate\": {\"limit\": 9223372036854775807,"
			      " \"remaining\": 0, \"reset_s\": 1, \"granted\": 8}}",
			      ACCT(authorize_response), SEO_PBJSON_STRICT));
	/* unset optionals encode as null, an unset oneof not at all */
	CU_ASSERT(round_trips("{\"url\": \"u\", \"priority\": \"0.5\"}",
			      RT(sitemap_url), SEO_PBJSON_STRICT));
	CU_ASSERT(round_trips("{\"data\": [{\"url\": \"u\"}], \"total\": 1,"
			      " \"sitemap_url\": null, \"child_sitemaps\": [],"
			      " \"child_sitemaps_fetched\": [\"a\"]" SITEMAP_REST,
			      RT(sitemap_response), SEO_PBJSON_STRICT));
	/* bytes as base64, a RawJson as the value it holds */
	CU_ASSERT(round_trips("{\"payload\": \"aGk=\", \"signature\": \"s\"}",
			      ACCT(payment_webhook_request), SEO_PBJSON_STRICT));
	CU_ASSERT(round_trips("{\"type\": [\"A\"], \"id\": null, \"block_index\": 0,"
			      " \"source\": \"graph\", \"properties\": [1, {\"b\": null}]}",
			      RT(schema_entity), SEO_PBJSON_STRICT));
}

static void test_values(void)
{
	ProtobufCMessage *m = NULL;
	Seo__Account__V1__PaymentWebhookRequest *w;
	Seo__Realtime__V1__SchemaEntity *e;
	Seo__Account__V1__AuthorizeRequest *r;

	CU_ASSERT_EQUAL(decode("{\"payload\": \"aGk=\", \"signature\": \"s\"}",
			       ACCT(payment_webhook_request), 0, &m), 0);
	w = (void *)m;
	CU_ASSERT(w->payload.len == 2 && memcmp(w->payload.data, "hi", 2) == 0);
	CU_ASSERT_EQUAL(decode("{\"type\": [], \"block_index\": 1, \"source\": \"x\","
			       " \"properties\": {\"b\": [1, 2]}}", RT(schema_entity),
			       0, &m), 0);
	e = (void *)m;
	CU_ASSERT_STRING_EQUAL(e->properties->json, "{\"b\":[1,2]}");
	CU_ASSERT(e->n_type == 0 && e->id == NULL);
	/* uint32 bounds, and a real without fraction unless strict */
	CU_ASSERT_EQUAL(decode("{\"key_hash\": \"h\", \"endpoint\": \"e\", \"cost\": 3.0,"
			       " \"roles_allowed\": 4294967295, \"usage_domain\": \"d\","
			       " \"rate_limited\": true, \"no_balance\": false,"
			       " \"rate_want\": 16}",
			       ACCT(authorize_request), 0,
			       &m), 0);
	r = (void *)m;
	CU_ASSERT(r->cost == 3 && r->roles_allowed == 4294967295u && r->rate_limited &&
		  r->rate_want == 16);
}

static void test_faults(void)
{
	const char *auth = "{\"workspace_id\": \"w\", \"user_id\": \"u\", \"key_id\": \"k\","
			   " \"role\": \"r\", \"charge_id\": \"c\", \"credits_remaining\": 1,"
			   " \"rate\": %s}";
	char text[512];

	snprintf(text, sizeof(text), auth, "{\"limit\": \"x\", \"remaining\": 0, \"reset_s\": 0}");
	CU_ASSERT(fails(text, ACCT(authorize_response), 0, SEO_PBJSON_TYPE, "rate.limit"));
	CU_ASSERT_STRING_EQUAL(err.field->name, "limit");
	snprintf(text, sizeof(text), auth, "{\"limit\": 1, \"remaining\": 0}");
	CU_ASSERT(fails(text, ACCT(authorize_response), 0, SEO_PBJSON_MISSING, "rate.reset_s"));
	snprintf(text, sizeof(text), auth, "{\"limit\": 1, \"remaining\": 0, \"reset_s\": 0, \"zzz\": 1}");
	CU_ASSERT(fails(text, ACCT(authorize_response), SEO_PBJSON_STRICT_FIELDS,
			SEO_PBJSON_UNKNOWN, "rate.zzz"));
	CU_ASSERT_STRING_EQUAL(err.message->name, "seo.account.v1.RateLimitState");
	CU_ASSERT(err.field == NULL);
	/* without the flag an unknown member is skipped */
	CU_ASSERT(round_trips("{\"received\": true}", ACCT(payment_webhook_response), 0));
	CU_ASSERT(fails("{\"received\": true, \"x\": 1}", ACCT(payment_webhook_response),
			SEO_PBJSON_STRICT, SEO_PBJSON_UNKNOWN, "x"));
	CU_ASSERT(fails("{}", ACCT(payment_webhook_response), 0, SEO_PBJSON_MISSING,
			"received"));
	CU_ASSERT(fails("{\"received\": null}", ACCT(payment_webhook_response), 0,
			SEO_PBJSON_MISSING, "received"));
	/* elements are named by index */
	CU_ASSERT(fails("{\"data\": [{\"url\": \"a\"}, {}], \"total\": 1"
			SITEMAP_REST, RT(sitemap_response), 0,
			SEO_PBJSON_MISSING, "data[1].url"));
	CU_ASSERT(fails("{\"data\": [null], \"total\": 1" SITEMAP_REST,
			RT(sitemap_response), 0, SEO_PBJSON_TYPE, "data[0]"));
	/* strict types: integers as integers, repeated fields as arrays */
	CU_ASSERT(fails("{\"data\": null, \"total\": 1.0" SITEMAP_REST,
			RT(sitemap_response), SEO_PBJSON_STRICT_TYPES, SEO_PBJSON_ARRAY,
			"data"));
	CU_ASSERT(fails("{\"total\": 1.0" SITEMAP_REST,
			RT(sitemap_response), SEO_PBJSON_STRICT_TYPES, SEO_PBJSON_TYPE,
			"total"));
	CU_ASSERT(fails("{\"data\": 5, \"total\": 1" SITEMAP_REST,
			RT(sitemap_response), 0, SEO_PBJSON_ARRAY, "data"));
	CU_ASSERT_EQUAL(decode("{\"data\": null, \"total\": 1.0" SITEMAP_REST,
			       RT(sitemap_response), 0, &(ProtobufCMessage *){NULL}), 0);
	/* ranges, base64, NUL */
	CU_ASSERT(fails("{\"key_hash\": \"h\", \"endpoint\": \"e\", \"cost\": 1,"
			" \"roles_allowed\": -1, \"usage_domain\": \"d\", \"rate_limited\": true}",
			ACCT(authorize_request), 0, SEO_PBJSON_RANGE, "roles_allowed"));
	CU_ASSERT(fails("{\"payload\": \"aGk\", \"signature\": \"s\"}",
			ACCT(payment_webhook_request), 0, SEO_PBJSON_TYPE, "payload"));
	CU_ASSERT(fails("{\"payload\": \"\", \"signature\": \"a\\u0000b\"}",
			ACCT(payment_webhook_request), 0, SEO_PBJSON_UTF8, "signature"));
	CU_ASSERT(fails("[]", ACCT(payment_webhook_request), 0, SEO_PBJSON_TYPE, ""));
}

static void test_helpers(void)
{
	const ProtobufCEnumDescriptor *role = &seo__account__v1__role__descriptor;
	size_t pre = seo_pbjson_enum_prefix(role);
	json_t *name = seo_pbjson_enum_name("ROLE_OWNER", pre);
	seo_pbjson_int i = seo_pbjson_int_of(-2147483648LL);
	int v = -1;

	CU_ASSERT_EQUAL(pre, 5);
	CU_ASSERT_STRING_EQUAL(json_string_value(name), "owner");
	json_decref(name);
	CU_ASSERT(seo_pbjson_enum_parse(role, "admin", 5, &v) == 0 && v == 2);
	CU_ASSERT_EQUAL(seo_pbjson_enum_parse(role, "ADMIN", 5, &v), SEO_EINVAL);
	CU_ASSERT(seo_pbjson_int_fits(&i, PROTOBUF_C_TYPE_INT32));
	CU_ASSERT(!seo_pbjson_int_fits(&i, PROTOBUF_C_TYPE_UINT64));
	i = seo_pbjson_int_of(-2147483649LL);
	CU_ASSERT(!seo_pbjson_int_fits(&i, PROTOBUF_C_TYPE_INT32));
	CU_ASSERT_EQUAL(seo_utf8_prefix("a\xc3\xa9\xc3", 4), 3);
	CU_ASSERT_EQUAL(seo_utf8_prefix("a\0b", 3), 1);
	CU_ASSERT_EQUAL(seo_utf8_prefix("\xed\xa0\x80", 3), 0); /* a surrogate */
}

/* Long ASCII text with one odd byte (NUL, a lone continuation or lead
 * byte, 0xff, or DEL, which is fine) at every position and alignment:
 * the eight-byte steps stop exactly there. */
static void test_utf8_long(void)
{
	static const unsigned char odd[] = {0x00, 0x80, 0xc3, 0xff, 0x7f};
	unsigned char buf[80];

	memset(buf, 'a', sizeof(buf));
	CU_ASSERT_EQUAL(seo_utf8_prefix((const char *)buf, sizeof(buf)), sizeof(buf));
	for (size_t k = 0; k < sizeof(odd); k++)
		for (size_t at = 0; at < 40; at++)
			for (size_t off = 0; off < 8; off++) {
				size_t len = 40 + off;

				memset(buf, 'a', sizeof(buf));
				buf[off + at] = odd[k];
				CU_ASSERT_EQUAL(seo_utf8_prefix((const char *)buf + off, len),
						odd[k] == 0x7f ? len : at);
			}
	/* A two-byte sequence inside, then more ASCII. */
	memset(buf, 'a', sizeof(buf));
	buf[13] = 0xc3;
	buf[14] = 0xa9;
	CU_ASSERT_EQUAL(seo_utf8_prefix((const char *)buf, 64), 64);
}

int main(void)
{
	CU_pSuite s;
	int failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	arena = seo_arena_new(0);
	s = CU_add_suite("pbjson", NULL, NULL);
	CU_add_test(s, "decode and encode back", test_round_trip);
	CU_add_test(s, "decoded values", test_values);
	CU_add_test(s, "faults, paths and strictness", test_faults);
	CU_add_test(s, "enum, integer and UTF-8 helpers", test_helpers);
	CU_add_test(s, "UTF-8 prefix of long text", test_utf8_long);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = (int)CU_get_number_of_failures();
	CU_cleanup_registry();
	seo_arena_free(arena);
	return failed != 0;
}
