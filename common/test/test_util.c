/*
 * test_util: the helpers of seo/util.h that write text: fixed-width hex
 * of an integer (ids and counters) and the hex of a SHA-256.
 */
#include <CUnit/Basic.h>
#include <string.h>

#include "seo/util.h"

static void test_fmt_hex(void)
{
	char out[20];

	memset(out, 'x', sizeof(out));
	seo_fmt_hex(out, 16, 0x1a2b3c);
	CU_ASSERT_NSTRING_EQUAL(out, "00000000001a2b3c", 16);
	CU_ASSERT_EQUAL(out[16], 'x'); /* nothing written past the digits */
	seo_fmt_hex(out, 16, UINT64_MAX);
	CU_ASSERT_NSTRING_EQUAL(out, "ffffffffffffffff", 16);
	/* fewer digits keep the low ones */
	seo_fmt_hex(out, 3, 0xabcd);
	CU_ASSERT_NSTRING_EQUAL(out, "bcd", 3);
	seo_fmt_hex(out, 0, 7);
	CU_ASSERT_EQUAL(out[0], 'b');
}

static void test_fmt_id(void)
{
	char out[40];

	memset(out, 'x', sizeof(out));
	seo_fmt_id(out, "5a636b962dced363", 16, 0x67386);
	CU_ASSERT_STRING_EQUAL(out, "5a636b962dced3630000000000067386");
	CU_ASSERT_EQUAL(out[33], 'x'); /* nothing past the NUL */
	/* only plen bytes of the prefix, none at all when 0 */
	seo_fmt_id(out, "abcdef", 3, UINT64_MAX);
	CU_ASSERT_STRING_EQUAL(out, "abcffffffffffffffff");
	seo_fmt_id(out, "", 0, 0);
	CU_ASSERT_STRING_EQUAL(out, "0000000000000000");
}

static void test_sha256_hex(void)
{
	char out[65];

	seo_sha256_hex("abc", 3, out);
	CU_ASSERT_STRING_EQUAL(out, "ba7816bf8f01cfea414140de5dae2223"
				    "b00361a396177a9cb410ff61f20015ad");
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("util", NULL, NULL);
	CU_add_test(s, "fixed-width hex of an integer", test_fmt_hex);
	CU_add_test(s, "a prefix and 16 hex digits", test_fmt_id);
	CU_add_test(s, "hex of a SHA-256", test_sha256_hex);
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
