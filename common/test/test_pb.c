/*
 * test_pb.c: the presence rule of seo/pb.h. Every field is optional on the
 * wire; "always" fields (a [default]) are still written as the proto2
 * `required` fields they replace were, byte for byte, and fields without a
 * default stay absent until set.
 */
#include <CUnit/Basic.h>
#include <string.h>

#include "seo/account/v1/account.pb-c.h"
#include "seo/pb.h"

/* Packs `m` after seo_pb_fill(); the length, the bytes in out. */
static size_t packed(ProtobufCMessage *m, uint8_t *out, size_t cap)
{
	size_t n;

	seo_pb_fill(m);
	n = protobuf_c_message_get_packed_size(m);
	CU_ASSERT_FATAL(n <= cap);
	return protobuf_c_message_pack(m, out);
}

static void test_always(void)
{
	const ProtobufCMessageDescriptor *d = &seo__account__v1__user__descriptor;

	CU_ASSERT(seo_pb_always(protobuf_c_message_descriptor_get_field_by_name(d, "id")));
	CU_ASSERT(seo_pb_always(protobuf_c_message_descriptor_get_field_by_name(d, "created_at")));
	CU_ASSERT(!seo_pb_always(protobuf_c_message_descriptor_get_field_by_name(d, "email")));
	CU_ASSERT(!seo_pb_always(protobuf_c_message_descriptor_get_field_by_name(d, "credits")));
	d = &seo__account__v1__authorize_response__descriptor;
	CU_ASSERT(!seo_pb_always(protobuf_c_message_descriptor_get_field_by_name(d, "rate")));
}

/* An untouched message packs as the required fields did: the empty string
 * and zero written, the optional ones not. */
static void test_wire_of_unset(void)
{
	Seo__Account__V1__User u = SEO__ACCOUNT__V1__USER__INIT;
	static const uint8_t want[] = {0x0a, 0x00, 0x20, 0x00};
	uint8_t buf[64];
	size_t n = packed(&u.base, buf, sizeof(buf));

	CU_ASSERT_EQUAL(n, sizeof(want));
	CU_ASSERT(memcmp(buf, want, sizeof(want)) == 0);
}

/* Set values, a NULL string and nested messages, in and out again. */
static void test_round_trip(void)
{
	Seo__Account__V1__AuthorizeResponse r =
		SEO__ACCOUNT__V1__AUTHORIZE_RESPONSE__INIT, *back;
	Seo__Account__V1__RateLimitState rate =
		SEO__ACCOUNT__V1__RATE_LIMIT_STATE__INIT;
	uint8_t buf[256];
	size_t n;

	r.workspace_id = "w1";
	r.charge_id = NULL;
	r.credits_remaining = 7;
	rate.limit = 60;
	r.rate = &rate;
	n = packed(&r.base, buf, sizeof(buf));
	back = seo__account__v1__authorize_response__unpack(NULL, n, buf);
	CU_ASSERT_PTR_NOT_NULL_FATAL(back);
	CU_ASSERT_STRING_EQUAL(back->workspace_id, "w1");
	CU_ASSERT_STRING_EQUAL(back->charge_id, "");
	CU_ASSERT(back->has_credits_remaining && back->credits_remaining == 7);
	CU_ASSERT_PTR_NOT_NULL_FATAL(back->rate);
	CU_ASSERT(back->rate->has_limit && back->rate->limit == 60);
	CU_ASSERT(back->rate->has_remaining && back->rate->remaining == 0);
	seo__account__v1__authorize_response__free_unpacked(back, NULL);
}

/* What an older peer leaves out reads as the default; optional fields
 * stay absent. */
static void test_absent_reads_default(void)
{
	Seo__Account__V1__User *u = seo__account__v1__user__unpack(NULL, 0,
								    (const uint8_t *)"");

	CU_ASSERT_PTR_NOT_NULL_FATAL(u);
	CU_ASSERT_STRING_EQUAL(u->id, "");
	CU_ASSERT(!u->has_created_at && u->created_at == 0);
	CU_ASSERT(u->email == NULL && !u->has_credits);
	seo__account__v1__user__free_unpacked(u, NULL);
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("pb", NULL, NULL);
	CU_add_test(s, "always fields", test_always);
	CU_add_test(s, "wire of an unset message", test_wire_of_unset);
	CU_add_test(s, "round trip", test_round_trip);
	CU_add_test(s, "absent reads default", test_absent_reads_default);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed != 0;
}
