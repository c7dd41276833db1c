/*
 * test_config.h: changing the configuration inside a unit test. Processes
 * parse SEO_* once at start (seo/config.h); a test that varies a variable
 * sets it and parses again, as a new process would.
 */
#ifndef SEO_TEST_CONFIG_H
#define SEO_TEST_CONFIG_H

/* Sets variable `name` to `value` (NULL unsets it) and loads the
 * configuration again; a refused value fails the test (CU_FAIL_FATAL). */
void seo_test_config_set(const char *name, const char *value);

#endif
