/*
 * test_hmap: the string-keyed hash map (common/src/hmap.c): entries found
 * by key across shared buckets, deleted and freed, a walk that changes
 * the entries it visits and frees those it drops, clear and destroy
 * (ASan sees every entry freed once).
 */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/hmap.h"

typedef struct item {
	seo_hnode node;
	int value;
} item;

static item *item_new(const char *key, int value)
{
	item *it = calloc(1, sizeof(*it));

	if (it != NULL) {
		snprintf(it->node.key, sizeof(it->node.key), "%s", key);
		it->value = value;
	}
	return it;
}

/* 100 keys in 4 buckets: chains of about 25. */
static void fill(seo_hmap *m)
{
	char key[16];

	for (int i = 0; i < 100; i++) {
		item *it;

		snprintf(key, sizeof(key), "k%d", i);
		it = item_new(key, i);
		CU_ASSERT_PTR_NOT_NULL_FATAL(it);
		seo_hmap_put(m, &it->node);
	}
}

static void test_get_del(void)
{
	seo_hmap m;
	item *it;

	CU_ASSERT_EQUAL_FATAL(seo_hmap_init(&m, 4), 0);
	fill(&m);
	CU_ASSERT_EQUAL(m.count, 100);
	it = (item *)seo_hmap_get(&m, "k42");
	CU_ASSERT_PTR_NOT_NULL_FATAL(it);
	CU_ASSERT_EQUAL(it->value, 42);
	CU_ASSERT_PTR_NULL(seo_hmap_get(&m, "k100"));
	CU_ASSERT_PTR_NULL(seo_hmap_get(&m, "k42x"));
	CU_ASSERT_EQUAL(seo_hmap_del(&m, "k42"), 1);
	CU_ASSERT_EQUAL(seo_hmap_del(&m, "k42"), 0);
	CU_ASSERT_PTR_NULL(seo_hmap_get(&m, "k42"));
	CU_ASSERT_PTR_NOT_NULL(seo_hmap_get(&m, "k41"));
	CU_ASSERT_EQUAL(m.count, 99);
	seo_hmap_destroy(&m);
	CU_ASSERT_PTR_NULL(m.buckets);
	seo_hmap_destroy(&m);
}

/* Doubles every value; drops the odd ones. */
static int double_drop_odd(seo_hnode *n, void *visited)
{
	item *it = (item *)n;

	(*(int *)visited)++;
	it->value *= 2;
	return it->value % 4 != 0;
}

static void test_walk(void)
{
	seo_hmap m;
	int visited = 0;
	item *it;

	CU_ASSERT_EQUAL_FATAL(seo_hmap_init(&m, 4), 0);
	fill(&m);
	CU_ASSERT_EQUAL(seo_hmap_drop(&m, double_drop_odd, &visited), 50);
	CU_ASSERT_EQUAL(visited, 100);
	CU_ASSERT_EQUAL(m.count, 50);
	CU_ASSERT_PTR_NULL(seo_hmap_get(&m, "k7"));
	it = (item *)seo_hmap_get(&m, "k8");
	CU_ASSERT_PTR_NOT_NULL_FATAL(it);
	CU_ASSERT_EQUAL(it->value, 16);
	seo_hmap_clear(&m);
	CU_ASSERT_EQUAL(m.count, 0);
	CU_ASSERT_PTR_NULL(seo_hmap_get(&m, "k8"));
	fill(&m);
	CU_ASSERT_EQUAL(m.count, 100);
	seo_hmap_destroy(&m);
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("hmap", NULL, NULL);
	CU_add_test(s, "get and del across shared buckets", test_get_del);
	CU_add_test(s, "a walk that changes and drops", test_walk);
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
