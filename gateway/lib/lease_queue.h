/*
 * lease_queue.h: a workspace's ended leased calls, in the order they
 * ended, kept as columns (lease.c). A report takes the first calls as
 * they are (LeaseCallColumns is the same shape), and a report answered
 * drops them from the front: no allocation or free a call, no list to
 * walk. A call's user, key and endpoint are indexes into names the
 * caller keeps (lease.c's state), or GW_LQ_OWN with the name kept here;
 * its domain is kept here. Loop thread only. Internal to the gateway.
 */
#ifndef GW_LEASE_QUEUE_H
#define GW_LEASE_QUEUE_H

#include <stddef.h>
#include <stdint.h>

/* A call's names, in the order of gw_lq.name. */
enum { GW_LQ_USER, GW_LQ_KEY, GW_LQ_ENDPOINT, GW_LQ_NAMES };

/* A name not among the caller's: its text is the call's own, here. */
#define GW_LQ_OWN UINT32_MAX

/* Zero-filled is empty. Call i's strings are at text + the offsets;
 * text moves when calls are pushed or dropped. */
typedef struct gw_lq {
	size_t n, cap;
	uint64_t *request_no;
	int64_t *charged, *used, *created_at;
	uint32_t *name[GW_LQ_NAMES]; /* an index, or GW_LQ_OWN */
	uint32_t *own[GW_LQ_NAMES];  /* with GW_LQ_OWN: the name's offset */
	uint32_t *domain;            /* offset; "" for none */
	char *text;
	size_t text_len, text_cap;
} gw_lq;

/* One call to push: `name` the indexes (GW_LQ_OWN: `own` holds the
 * text, copied), `domain` copied (NULL: none). */
typedef struct gw_lq_call {
	uint64_t request_no;
	long long charged, used;
	int64_t created_at;
	uint32_t name[GW_LQ_NAMES];
	const char *own[GW_LQ_NAMES];
	const char *domain;
} gw_lq_call;

/* Appends `c`. 0, or SEO_ENOMEM (nothing appended). */
int gw__lq_push(gw_lq *q, const gw_lq_call *c);

/* Drops the first `k` calls (at most q->n). */
void gw__lq_drop(gw_lq *q, size_t k);

/* Call i's own name j (GW_LQ_OWN), or its domain: owned by the queue,
 * valid until the next push or drop. */
const char *gw__lq_own(const gw_lq *q, size_t i, int j);
const char *gw__lq_domain(const gw_lq *q, size_t i);

/* Frees what `q` holds; it is empty again. */
void gw__lq_free(gw_lq *q);

#endif
