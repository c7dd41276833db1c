/*
 * test_agent_clean: the cleaning of what agents and people write
 * (lib/clean.c).
 */
#include <string.h>

#include <CUnit/Basic.h>

#include "agent_int.h"

static seo_arena *arena;

/* `in` cleaned and cut to `max` characters equals `want`. */
static void is(const char *in, size_t max, const char *want)
{
	char *out = NULL;

	CU_ASSERT_EQUAL_FATAL(agent__text_clean(arena, in, max, &out), 0);
	CU_ASSERT_STRING_EQUAL(out, want);
}

static void test_controls(void)
{
	is("plain text", 100, "plain text");
	is("a\x01" "b\x1b[31mc\x7f" "d", 100, "ab[31mcd");
	is("C1\xc2\x80\xc2\x9f here", 100, "C1 here");
	is("tab\there\nline\r\nend", 100, "tab here line end");
	is("a  \t b", 100, "a b");
	is("  \t\n  padded \n ", 100, "padded");
	is("", 100, "");
	is(" \n\t ", 100, "");
}

static void test_invisible(void)
{
	/* zero-width space and joiner, soft hyphen, bidi override and
	 * isolate, word joiner, BOM, variation selector, a tag character */
	is("a\xe2\x80\x8b" "b\xe2\x80\x8d" "c\xc2\xad" "d", 100, "abcd");
	is("\xe2\x80\xae" "evil\xe2\x81\xa6" "x\xe2\x81\xa0" "y\xef\xbb\xbf", 100,
	   "evilxy");
	is("ok\xef\xb8\x8f\xf3\xa0\x80\x81\xf3\xa0\x81\x81", 100, "ok");
	is("\xe2\x80\x8b\xe2\x81\xa0", 100, "");
	/* visible non-ASCII stays */
	is("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 100,
	   "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	/* line and paragraph separators and NEL break words */
	is("a\xe2\x80\xa8" "b\xe2\x80\xa9" "c\xc2\x85" "d", 100, "a b c d");
}

static void test_bad_utf8(void)
{
	/* stray continuation, overlong '/', surrogate, past U+10FFFF, cut
	 * sequence */
	is("a\x80" "b\xc0\xaf" "c\xed\xa0\x80" "d\xf4\x90\x80\x80" "e\xe2\x82", 100,
	   "abcde");
}

static void test_cut(void)
{
	is("abcdef", 3, "abc");
	/* characters, not bytes */
	is("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 2, "\xc3\xa9\xc3\xa9");
	is("\xf0\x9f\x98\x80\xf0\x9f\x98\x80", 1, "\xf0\x9f\x98\x80");
	/* removed characters do not count; a space at the cut is trimmed */
	is("\xe2\x80\x8b\xe2\x80\x8b" "ab cd", 3, "ab");
	is("ab", 0, "");
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	arena = seo_arena_new(0);
	if (arena == NULL || CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("agent_clean", NULL, NULL);
	CU_add_test(s, "controls", test_controls);
	CU_add_test(s, "invisible", test_invisible);
	CU_add_test(s, "bad utf-8", test_bad_utf8);
	CU_add_test(s, "cut", test_cut);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	seo_arena_free(arena);
	return failed != 0;
}
