/*
 * updates.c: changes to domain records, queued while reading (inputs that
 * name domains in another order than their ids) and applied in id order
 * as domains.bin is written.
 */
#include <stdlib.h>
#include <string.h>

#include <seo/errors.h>
#include <seo/log.h>

#include "ingest.h"

int graph__b_update(graph__builder *b, uint32_t id, uint32_t kind,
		    uint32_t x, uint32_t y, uint32_t z)
{
	/* the arrival number: how many the sort holds already */
	uint64_t seq = graph__xsort_count(b->upd);
	graph__upd u = { id, (uint32_t)seq, kind, x, y, z };

	if (seq >= UINT32_MAX)
		return SEO_ETOOBIG;
	return graph__xsort_add(b->upd, &u);
}

int graph__cmp_upd(const void *pa, const void *pb)
{
	const graph__upd *a = pa, *b = pb;

	CMP(a->id, b->id);
	CMP(a->seq, b->seq);
	return 0;
}

static void apply_upd(graph__dom *d, const graph__upd *u)
{
	switch (u->kind) {
	case GRAPH__UPD_RANKS:
		d->hc_pos = u->a;
		d->pr_pos = u->b;
		if (d->hosts == 0)
			d->hosts = u->c;
		break;
	case GRAPH__UPD_TRANCO:
		/* several names can fold into one registrable domain: the
		 * best rank wins */
		if (d->tranco == 0 || u->a < d->tranco)
			d->tranco = u->a;
		break;
	case GRAPH__UPD_WHOIS:
		d->registered_day = (int32_t)u->a;
		d->registrar = u->b;
		break;
	case GRAPH__UPD_LINKING:
		d->linking_hosts = (uint64_t)u->b << 32 | u->a;
		break;
	}
}

static int updq_next(graph__updq *q)
{
	const void *rec;
	int rc = graph__xsort_next(q->xs, &rec);

	q->cur = rc == 1 ? rec : NULL;
	return rc < 0 ? rc : 0;
}

int graph__updq_start(graph__updq *q, graph__xsort *xs)
{
	int rc = graph__xsort_finish(xs);

	q->xs = xs;
	return rc ? rc : updq_next(q);
}

/* Applies the changes of domain `id` to its record. */
int graph__updq_apply(graph__updq *q, uint32_t id, graph__dom *d)
{
	int rc = 0;

	while (!rc && q->cur && q->cur->id == id) {
		apply_upd(d, q->cur);
		rc = updq_next(q);
	}
	return rc;
}
