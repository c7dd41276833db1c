/*
 * test_supervise.c: seo-supervise's process table (supervise.c): a dead
 * process is due again after a back-off that doubles while it keeps
 * dying young and starts over once it ran long enough; the status file
 * names a restarting process.
 */
#include "supervise.h"

#include "seo/errors.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>
#include <jansson.h>

static const sup_policy pol = {
	.first_ms = 100, .max_ms = 1000, .stable_ms = 5000, .stop_grace_ms = 1000,
};

/* A wait status of a child killed by `sig`, as waitpid() gives it. */
#define KILLED(sig) (sig)
#define EXITED(code) ((code) << 8)

static void test_default_policy(void)
{
	/* the stack is back within two seconds of a kill */
	CU_ASSERT(sup_default_policy.first_ms <= 200);
	CU_ASSERT(sup_default_policy.max_ms >= sup_default_policy.first_ms);
	CU_ASSERT(sup_default_policy.stable_ms > 0);
	CU_ASSERT(sup_default_policy.stop_grace_ms > 0);
}

static void test_backoff_doubles_then_caps(void)
{
	static const int64_t want[] = { 100, 200, 400, 800, 1000, 1000 };
	sup_proc p;
	int64_t now = 1000;

	sup_proc_init(&p, "svc-account", "/bin/svc-account");
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		sup_started(&p, 42, now);
		now += 10; /* dies young */
		CU_ASSERT_EQUAL(sup_died(&p, &pol, EXITED(1), now), want[i]);
		CU_ASSERT_EQUAL(p.state, SUP_RESTARTING);
		CU_ASSERT_EQUAL(p.pid, 0);
		CU_ASSERT_EQUAL(p.start_at_ms, now + want[i]);
		now = p.start_at_ms;
	}
}

static void test_backoff_resets_after_a_stable_run(void)
{
	sup_proc p;

	sup_proc_init(&p, "gateway", "/bin/gateway");
	sup_started(&p, 7, 0);
	CU_ASSERT_EQUAL(sup_died(&p, &pol, KILLED(SIGKILL), 10), 100);
	sup_started(&p, 8, 110);
	CU_ASSERT_EQUAL(sup_died(&p, &pol, KILLED(SIGKILL), 120), 200);
	sup_started(&p, 9, 320);
	/* ran its stable time: the next death is the first of a new streak */
	CU_ASSERT_EQUAL(sup_died(&p, &pol, KILLED(SIGKILL), 320 + pol.stable_ms), 100);
	CU_ASSERT_EQUAL(p.restarts, 2);
}

static void test_next_due(void)
{
	sup_proc p[3];
	int64_t wait;

	sup_proc_init(&p[0], "a", "/a");
	sup_proc_init(&p[1], "b", "/b");
	sup_proc_init(&p[2], "c", "/c");
	/* everything is due at first, in order */
	CU_ASSERT_EQUAL(sup_next_due(p, 3, 0, &wait), 0);
	sup_started(&p[0], 10, 0);
	sup_started(&p[1], 11, 0);
	sup_started(&p[2], 12, 0);
	CU_ASSERT_EQUAL(sup_next_due(p, 3, 0, &wait), SEO_ENOTFOUND);
	CU_ASSERT_EQUAL(wait, -1);
	CU_ASSERT_EQUAL(sup_find_pid(p, 3, 11), 1);
	CU_ASSERT_EQUAL(sup_find_pid(p, 3, 99), SEO_ENOTFOUND);
	CU_ASSERT_EQUAL(sup_find_pid(p, 3, 0), SEO_ENOTFOUND);
	sup_died(&p[1], &pol, KILLED(SIGKILL), 50);
	CU_ASSERT_EQUAL(sup_next_due(p, 3, 60, &wait), SEO_ENOTFOUND);
	CU_ASSERT_EQUAL(wait, 90);
	CU_ASSERT_EQUAL(sup_next_due(p, 3, 150, &wait), 1);
	/* a stopped process is never due */
	sup_stopped(&p[1], 0);
	CU_ASSERT_EQUAL(sup_next_due(p, 3, 10000, &wait), SEO_ENOTFOUND);
}

static json_t *status_of(const sup_proc *p, size_t n, int stopping, int64_t now)
{
	char *text = NULL;
	json_t *doc;

	CU_ASSERT_FATAL(sup_status_render(p, n, 4242, stopping, now, &text) == 0);
	doc = json_loads(text, 0, NULL);
	free(text);
	CU_ASSERT_FATAL(doc != NULL);
	return doc;
}

static void test_status_names_the_restarting_process(void)
{
	sup_proc p[2];
	json_t *doc, *a, *g;

	sup_proc_init(&p[0], "svc-account", "/bin/svc-account");
	sup_proc_init(&p[1], "gateway", "/bin/gateway");
	sup_started(&p[0], 100, 0);
	sup_started(&p[1], 101, 0);
	sup_died(&p[0], &pol, KILLED(SIGKILL), 20000);
	doc = status_of(p, 2, 0, 20030);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(doc, "pid")), 4242);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(doc, "state")), "running");
	a = json_array_get(json_object_get(doc, "processes"), 0);
	g = json_array_get(json_object_get(doc, "processes"), 1);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(a, "name")), "svc-account");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(a, "state")), "restarting");
	CU_ASSERT(json_is_null(json_object_get(a, "pid")));
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(a, "last_exit")), "signal 9");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(a, "restart_in_ms")), 70);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(g, "state")), "running");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(g, "pid")), 101);
	CU_ASSERT(json_is_null(json_object_get(g, "last_exit")));
	CU_ASSERT_PTR_NULL(json_object_get(g, "restart_in_ms"));
	json_decref(doc);

	sup_started(&p[0], 102, 20100);
	sup_stopped(&p[1], EXITED(0));
	doc = status_of(p, 2, 1, 20200);
	a = json_array_get(json_object_get(doc, "processes"), 0);
	g = json_array_get(json_object_get(doc, "processes"), 1);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(doc, "state")), "stopping");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(a, "restarts")), 1);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(a, "state")), "running");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(g, "state")), "stopped");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(g, "last_exit")), "status 0");
	json_decref(doc);
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("supervise", NULL, NULL);
	CU_add_test(s, "default policy", test_default_policy);
	CU_add_test(s, "back-off doubles, then caps", test_backoff_doubles_then_caps);
	CU_add_test(s, "back-off starts over after a stable run",
		    test_backoff_resets_after_a_stable_run);
	CU_add_test(s, "what is due next", test_next_due);
	CU_add_test(s, "status names the restarting process",
		    test_status_names_the_restarting_process);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_tests_failed() + CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failed == 0 ? 0 : 1;
}
