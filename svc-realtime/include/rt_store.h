/*
 * rt_store.h: what of svc-realtime's PostgreSQL state others may run
 * (library rt_store, without the service's network stack): its migration
 * set and its periodic jobs, for its own process and for seoctl.
 */
#ifndef RT_STORE_H
#define RT_STORE_H

#include <stddef.h>

#include "seo/job.h"
#include "seo/pg.h"

/* rt_NNN_name.sql in svc-realtime/migrations, or
 * SEO_REALTIME_MIGRATIONS_DIR (seo/pg.h). */
extern const seo_pg_set rt_migrations;

/* "retention": page-performance results past their 24 h and daily
 * counters older than 7 days (seo/job.h). */
extern const seo_job rt_jobs[];
extern const size_t rt_n_jobs;

#endif
