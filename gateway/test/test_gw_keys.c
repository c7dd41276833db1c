/*
 * test_gw_keys.c: keys kept in the gateway's memory (gateway/lib/keys.c):
 * a kept key is found only while the watch is trusted, a revocation, a
 * removed user or a reset forgets it, an answer that a revocation may
 * have passed (the epoch moved) is not kept, and keys whose hashes fall
 * in one set are all kept up to its eight slots, the least recently used
 * given up beyond.
 */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

#include <event2/event.h>

#include "keys.h"

#define HASH_A "aaaaaaaa00000000000000000000000000000000000000000000000000000001"
#define HASH_B "bbbbbbbb00000000000000000000000000000000000000000000000000000002"

static struct event_base *base;
static rpc_client *no_client; /* the watch never asks */

static gw_keys *new_keys(void)
{
	gw_keys *k = NULL;

	CU_ASSERT_FATAL(gw__keys_new(base, &no_client, "gw-test", NULL, NULL, &k) == 0);
	return k;
}

static void heard(gw_keys *k, const char *instance, uint64_t seq, int reset,
		  char **keys, size_t n_keys, char **users, size_t n_users,
		  int64_t now)
{
	Seo__Account__V1__WatchResponse w = SEO__ACCOUNT__V1__WATCH_RESPONSE__INIT;

	w.instance = (char *)instance;
	w.seq = seq;
	w.reset = reset;
	w.keys = keys;
	w.n_keys = n_keys;
	w.users = users;
	w.n_users = n_users;
	gw__keys_heard(k, &w, now);
}

static void put(gw_keys *k, const char *hash, const char *user)
{
	gw_kept_key key = {.workspace_id = "ws_1", .role = "owner"};

	strcpy(key.user_id, user);
	gw__keys_put(k, hash, &key, gw__keys_epoch(k));
}

static void test_trusted_only_while_the_watch_answers(void)
{
	gw_keys *k = new_keys();
	gw_kept_key out;

	put(k, HASH_A, "usr_1");
	CU_ASSERT_EQUAL(gw__keys_get(k, HASH_A, 1000, &out), 0);
	heard(k, "i1", 0, 1, NULL, 0, NULL, 0, 1000);
	put(k, HASH_A, "usr_1");
	CU_ASSERT_EQUAL(gw__keys_get(k, HASH_A, 1000, &out), 1);
	CU_ASSERT_STRING_EQUAL(out.user_id, "usr_1");
	CU_ASSERT_EQUAL(gw__keys_get(k, HASH_B, 1000, &out), 0);
	CU_ASSERT_EQUAL(gw__keys_get(k, HASH_A, 1000 + GW_KEYS_TRUST_MS - 1, &out), 1);
	CU_ASSERT_EQUAL(gw__keys_get(k, HASH_A, 1000 + GW_KEYS_TRUST_MS, &out), 0);
	gw__keys_free(k);
}

static void test_revocation_user_and_reset_forget(void)
{
	gw_keys *k = new_keys();
	char *revoked[] = {HASH_A};
	char *removed[] = {"usr_2"};
	gw_kept_key out;

	heard(k, "i1", 0, 1, NULL, 0, NULL, 0, 0);
	put(k, HASH_A, "usr_1");
	put(k, HASH_B, "usr_2");
	heard(k, "i1", 1, 0, revoked, 1, NULL, 0, 10);
	CU_ASSERT_EQUAL(gw__keys_get(k, HASH_A, 10, &out), 0);
	CU_ASSERT_EQUAL(gw__keys_get(k, HASH_B, 10, &out), 1);
	heard(k, "i1", 2, 0, NULL, 0, removed, 1, 20);
	CU_ASSERT_EQUAL(gw__keys_get(k, HASH_B, 20, &out), 0);
	put(k, HASH_A, "usr_1");
	heard(k, "i1", 3, 1, NULL, 0, NULL, 0, 30);
	CU_ASSERT_EQUAL(gw__keys_get(k, HASH_A, 30, &out), 0);
	/* Another svc-account process: nothing it did not see is kept. */
	put(k, HASH_A, "usr_1");
	heard(k, "i2", 0, 0, NULL, 0, NULL, 0, 40);
	CU_ASSERT_EQUAL(gw__keys_get(k, HASH_A, 40, &out), 0);
	gw__keys_free(k);
}

static void test_an_answer_a_revocation_passed_is_not_kept(void)
{
	gw_keys *k = new_keys();
	char *revoked[] = {HASH_A};
	gw_kept_key key = {.workspace_id = "ws_1", .user_id = "usr_1",
			   .role = "owner"}, out;
	uint64_t asked;

	heard(k, "i1", 0, 1, NULL, 0, NULL, 0, 0);
	asked = gw__keys_epoch(k);
	heard(k, "i1", 1, 0, revoked, 1, NULL, 0, 5);
	gw__keys_put(k, HASH_A, &key, asked);
	CU_ASSERT_EQUAL(gw__keys_get(k, HASH_A, 5, &out), 0);
	gw__keys_free(k);
}

/* Hashes of one set: the same first eight hex digits, then `i`. */
static void same_set(char out[65], int i)
{
	snprintf(out, 65, "cccccccc%056d", i);
}

static void test_keys_of_one_set_share_it(void)
{
	gw_keys *k = new_keys();
	char h[10][65];
	gw_kept_key out;
	int kept = 0;

	heard(k, "i1", 0, 1, NULL, 0, NULL, 0, 0);
	for (int i = 0; i < 10; i++)
		same_set(h[i], i);
	/* Eight keys of a set are kept side by side, each in turn. */
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 8; i++) {
			put(k, h[i], "usr_1");
			for (int j = 0; j <= i; j++)
				CU_ASSERT_EQUAL(gw__keys_get(k, h[j], 0, &out), 1);
		}
	/* A ninth takes the slot of the least recently used: h[0] (h[1]
	 * to h[7] read since), then a tenth that of h[1]. */
	for (int i = 1; i < 8; i++)
		CU_ASSERT_EQUAL(gw__keys_get(k, h[i], 0, &out), 1);
	put(k, h[8], "usr_1");
	CU_ASSERT_EQUAL(gw__keys_get(k, h[0], 0, &out), 0);
	put(k, h[9], "usr_1");
	CU_ASSERT_EQUAL(gw__keys_get(k, h[1], 0, &out), 0);
	for (int i = 0; i < 10; i++)
		kept += gw__keys_get(k, h[i], 0, &out);
	CU_ASSERT_EQUAL(kept, 8);
	CU_ASSERT_EQUAL(gw__keys_get(k, h[9], 0, &out), 1);
	/* A revoked key frees its slot: the next key takes it, no other
	 * is given up. */
	{
		char *revoked[] = {h[5]};

		heard(k, "i1", 1, 0, revoked, 1, NULL, 0, 1);
	}
	put(k, h[0], "usr_1");
	kept = 0;
	for (int i = 0; i < 10; i++)
		kept += gw__keys_get(k, h[i], 1, &out);
	CU_ASSERT_EQUAL(kept, 8);
	CU_ASSERT_EQUAL(gw__keys_get(k, h[0], 1, &out), 1);
	CU_ASSERT_EQUAL(gw__keys_get(k, h[5], 1, &out), 0);
	gw__keys_free(k);
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	base = event_base_new();
	if (base == NULL || CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("gw_keys", NULL, NULL);
	CU_add_test(s, "trusted only while the watch answers",
		    test_trusted_only_while_the_watch_answers);
	CU_add_test(s, "revocation, user and reset forget",
		    test_revocation_user_and_reset_forget);
	CU_add_test(s, "an answer a revocation passed is not kept",
		    test_an_answer_a_revocation_passed_is_not_kept);
	CU_add_test(s, "keys of one set share it",
		    test_keys_of_one_set_share_it);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	event_base_free(base);
	return failed != 0;
}
