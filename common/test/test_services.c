/*
 * test_services.c: the service registry (common/src/services.c over
 * registry/services.def): its rows are consistent, the configuration keys
 * follow them, and the graph of who calls whom has no cycle.
 */
#include "seo/services.h"

#include "seo/config.h"
#include "seo/errors.h"
#include "test_config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

static void test_rows(void)
{
	for (int i = 0; i < SEO__SVC_COUNT; i++) {
		const seo_service_def *d = seo_service_get((seo_service)i);
		char want[64];
		size_t n;

		CU_ASSERT_FATAL(d->name != NULL && *d->name != '\0');
		for (const char *p = d->name; *p != '\0'; p++)
			CU_ASSERT(islower((unsigned char)*p) || isdigit((unsigned char)*p));
		snprintf(want, sizeof(want), "svc-%s", d->name);
		CU_ASSERT_STRING_EQUAL(d->process, want);
		/* SEO_<ID>_ADDR with ID the name in capitals */
		n = (size_t)snprintf(want, sizeof(want), "SEO_");
		for (const char *p = d->name; *p != '\0'; p++)
			want[n++] = (char)toupper((unsigned char)*p);
		snprintf(want + n, sizeof(want) - n, "_ADDR");
		CU_ASSERT_STRING_EQUAL(seo_config_def(d->addr_key)->name, want);
		snprintf(want, sizeof(want), "127.0.0.1:%u", d->port);
		CU_ASSERT_STRING_EQUAL(seo_config_def(d->addr_key)->dflt, want);
		CU_ASSERT(d->port > 1024 && d->port < 65536);
		CU_ASSERT(d->summary != NULL && d->summary[strlen(d->summary) - 1] == '.');
		for (int j = 0; j < i; j++) {
			const seo_service_def *e = seo_service_get((seo_service)j);
			CU_ASSERT(strcmp(d->name, e->name) != 0);
			CU_ASSERT(d->port != e->port);
			CU_ASSERT(d->addr_key != e->addr_key);
		}
	}
}

static void test_find_and_addr(void)
{
	seo_service svc;
	const seo_service_def *d = seo_service_get(SEO__SVC_COUNT - 1);
	const char *var = seo_config_def(d->addr_key)->name;

	CU_ASSERT(seo_service_find(d->name, &svc) == 0 && svc == SEO__SVC_COUNT - 1);
	CU_ASSERT(seo_service_find(d->process, &svc) == 0 && svc == SEO__SVC_COUNT - 1);
	CU_ASSERT(seo_service_find("svc-nothing", &svc) == SEO_ENOTFOUND);
	CU_ASSERT(seo_service_find("gateway", &svc) == SEO_ENOTFOUND);

	seo_test_config_set(var, NULL);
	CU_ASSERT_STRING_EQUAL(seo_service_addr(SEO__SVC_COUNT - 1),
			       seo_config_def(d->addr_key)->dflt);
	seo_test_config_set(var, "10.0.0.7:7000");
	CU_ASSERT_STRING_EQUAL(seo_service_addr(SEO__SVC_COUNT - 1), "10.0.0.7:7000");
	seo_test_config_set(var, NULL);
}

/* Depth-first: 1 when a path from `from` returns to a service on it. */
static int cycle_from(int from, int *state)
{
	if (state[from] == 1)
		return 1;
	if (state[from] == 2)
		return 0;
	state[from] = 1;
	for (int to = 0; to < SEO__SVC_COUNT; to++)
		if (seo_service_may_call((seo_service)from, (seo_service)to) &&
		    cycle_from(to, state))
			return 1;
	state[from] = 2;
	return 0;
}

static void test_calls_have_no_cycle(void)
{
	int state[SEO__SVC_COUNT] = {0};

	for (int i = 0; i < SEO__SVC_COUNT; i++) {
		CU_ASSERT(!seo_service_may_call((seo_service)i, (seo_service)i));
		/* only services of the registry */
		CU_ASSERT((seo_service_get((seo_service)i)->calls >> SEO__SVC_COUNT) == 0);
		CU_ASSERT(cycle_from(i, state) == 0);
	}
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("services", NULL, NULL);
	CU_add_test(s, "rows", test_rows);
	CU_add_test(s, "find and address", test_find_and_addr);
	CU_add_test(s, "who calls whom has no cycle", test_calls_have_no_cycle);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_tests_failed() + CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failed == 0 ? 0 : 1;
}
