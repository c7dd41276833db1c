/*
 * test_acct_watch.c: the watch of what stops a key (svc-account/lib/
 * watch.c): a watcher gets the events after what it read, or a reset; a
 * revocation waits until every live watcher read it, and no longer than
 * ACCT_WATCH_ACK_MS for one that does not ask again; a silent watcher is
 * not waited for, nor one that said it stops; a key's rate grants recalled
 * reach the watchers as their own kind.
 */
#include <CUnit/Basic.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "acct_int.h"
#include "seo/util.h"

#define KEY "0000000000000000000000000000000000000000000000000000000000000001"

static acct__watch w;
static acct__watch_batch b;

static void setup(void)
{
	acct_err err;

	CU_ASSERT_FATAL(acct__watch_init(&w, &err) == 0);
}

static void test_events_after_what_was_read(void)
{
	setup();
	acct__watch_wait(&w, "gw-1", NULL, 0, 0, &b);
	CU_ASSERT_EQUAL(b.reset, 1);
	acct__watch_key(&w, KEY, 0);
	acct__watch_user(&w, "usr_1");
	acct__watch_wait(&w, "gw-1", b.instance, b.seq, 1000, &b);
	CU_ASSERT_EQUAL(b.reset, 0);
	CU_ASSERT_EQUAL(b.n, 2);
	CU_ASSERT_EQUAL(b.ev[0].kind, ACCT_WATCH_KEY);
	CU_ASSERT_STRING_EQUAL(b.ev[0].id, KEY);
	CU_ASSERT_EQUAL(b.ev[1].kind, ACCT_WATCH_USER);
	CU_ASSERT_STRING_EQUAL(b.ev[1].id, "usr_1");
	/* Nothing new: answered empty after the wait. */
	acct__watch_wait(&w, "gw-1", b.instance, b.seq, 50, &b);
	CU_ASSERT_EQUAL(b.n, 0);
	CU_ASSERT_EQUAL(b.reset, 0);
	acct__watch_reset(&w);
	acct__watch_wait(&w, "gw-1", b.instance, b.seq, 1000, &b);
	CU_ASSERT_EQUAL(b.reset, 1);
	acct__watch_wait(&w, "gw-1", "another", b.seq, 0, &b);
	CU_ASSERT_EQUAL(b.reset, 1);
	acct__watch_destroy(&w);
}

/* A gateway that asks again 100 ms after the revocation. */
static void *late_reader(void *arg)
{
	acct__watch_batch *mine = arg;

	usleep(100 * 1000);
	acct__watch_wait(&w, "gw-1", mine->instance, mine->seq + 1, 0, mine);
	return NULL;
}

static void test_revocation_waits_for_live_watchers(void)
{
	static acct__watch_batch mine;
	pthread_t t;
	int64_t t0;

	setup();
	acct__watch_wait(&w, "gw-1", NULL, 0, 0, &mine);
	CU_ASSERT_FATAL(pthread_create(&t, NULL, late_reader, &mine) == 0);
	t0 = seo_mono_ms();
	acct__watch_key(&w, KEY, 1);
	CU_ASSERT(seo_mono_ms() - t0 >= 90);
	CU_ASSERT(seo_mono_ms() - t0 < ACCT_WATCH_ACK_MS);
	pthread_join(t, NULL);
	/* It does not ask again: waited for up to the bound. */
	t0 = seo_mono_ms();
	acct__watch_key(&w, KEY, 1);
	CU_ASSERT(seo_mono_ms() - t0 >= ACCT_WATCH_ACK_MS - 10);
	acct__watch_destroy(&w);
}

static void test_silent_watchers_are_not_waited_for(void)
{
	int64_t t0;

	setup();
	acct__watch_wait(&w, "gw-1", NULL, 0, 0, &b);
	usleep((ACCT_WATCH_LIVE_MS + 50) * 1000);
	t0 = seo_mono_ms();
	acct__watch_key(&w, KEY, 1);
	CU_ASSERT(seo_mono_ms() - t0 < 100);
	acct__watch_destroy(&w);
}

static void test_a_stopped_watcher_is_not_waited_for(void)
{
	int64_t t0;

	setup();
	acct__watch_wait(&w, "gw-1", NULL, 0, 0, &b);
	acct__watch_gone(&w, "gw-1");
	t0 = seo_mono_ms();
	acct__watch_key(&w, KEY, 1);
	CU_ASSERT(seo_mono_ms() - t0 < 100);
	acct__watch_destroy(&w);
}

static void test_rate_recall_is_an_event(void)
{
	uint64_t seq;

	setup();
	acct__watch_wait(&w, "gw-1", NULL, 0, 0, &b);
	seq = b.seq;
	acct__watch_rate(&w, KEY);
	acct__watch_wait(&w, "gw-1", b.instance, seq, 0, &b);
	CU_ASSERT_EQUAL(b.n, 1);
	CU_ASSERT_EQUAL(b.ev[0].kind, ACCT_WATCH_RATE);
	CU_ASSERT_STRING_EQUAL(b.ev[0].id, KEY);
	acct__watch_destroy(&w);
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("acct_watch", NULL, NULL);
	CU_add_test(s, "events after what was read", test_events_after_what_was_read);
	CU_add_test(s, "revocation waits for live watchers",
		    test_revocation_waits_for_live_watchers);
	CU_add_test(s, "silent watchers are not waited for",
		    test_silent_watchers_are_not_waited_for);
	CU_add_test(s, "a stopped watcher is not waited for",
		    test_a_stopped_watcher_is_not_waited_for);
	CU_add_test(s, "rate recall is an event", test_rate_recall_is_an_event);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed != 0;
}
