/*
 * sitemap_walk.c: the sitemap endpoint's walk over a site's sitemaps, as
 * a state machine without I/O, and its driver on the fetcher.
 *
 * Reading rules (docs/decisions.md, "Real-time"): the robots.txt Sitemap
 * lines are the top-level documents; /sitemap.xml is tried only when none
 * of them is readable, and /sitemap_index.xml only when /sitemap.xml is
 * not either. Documents are read breadth-first; the children of an index
 * are queued, and those of a nested index too, but an index found at that
 * second level is listed and not followed. A URL is fetched at most once.
 */
#include "rt.h"

#include "seo/errors.h"
#include "seo/util.h"

#include <string.h>

typedef struct pending {
	const char *url;
	int depth; /* 0: top level, 1: child, 2: child of a nested index */
} pending;

struct rt_sitemap_walk {
	seo_arena *a;
	const char *origin;
	const rt_robots *robots;
	size_t limit;
	/* every document ever queued, in fetch order; [head, n) wait */
	pending queue[RT_SITEMAP_MAX_DOCS + 1];
	size_t n, head;
	int fallback;  /* next discovery step: 0 robots, 1 /sitemap.xml,
			  2 /sitemap_index.xml, 3 none left */
	int in_flight; /* next() returned queue[head - 1], not fed yet */
	int done, truncated;
	rt_sitemap_entry *data;
	size_t n_data;
	const char *sitemap_url;
	int sitemap_kind;
	const char *listed[RT_SITEMAP_MAX_LISTED];
	size_t n_listed, children_total;
	const char *fetched[RT_SITEMAP_MAX_DOCS];
	size_t n_fetched;
};

/* Queues `url` unless it was queued before; a queue already full marks
 * the walk truncated. */
static void enqueue(rt_sitemap_walk *w, const char *url, int depth)
{
	for (size_t i = 0; i < w->n; i++)
		if (strcmp(w->queue[i].url, url) == 0)
			return;
	if (w->n == sizeof(w->queue) / sizeof(w->queue[0])) {
		w->truncated = 1;
		return;
	}
	w->queue[w->n++] = (pending){url, depth};
}

/* Queues the next discovery step, if any. Returns 0 or SEO_ENOMEM. */
static int discover(rt_sitemap_walk *w)
{
	static const char *const fallbacks[] = {"/sitemap.xml", "/sitemap_index.xml"};
	seo_url u;
	int rc;

	if (w->fallback == 0) {
		w->fallback = 1;
		for (size_t i = 0; w->robots && i < w->robots->n_sitemaps; i++)
			enqueue(w, w->robots->sitemaps[i], 0);
		if (w->head < w->n)
			return 0;
	}
	if (w->fallback > 2)
		return 0;
	rc = seo_url_resolve(w->origin, fallbacks[w->fallback - 1], w->a, &u);
	w->fallback++;
	if (rc == 0)
		enqueue(w, u.href, 0);
	return rc == SEO_ENOMEM ? rc : 0;
}

int rt_sitemap_walk_new(const char *origin, const rt_robots *robots,
			size_t limit, seo_arena *a, rt_sitemap_walk **out)
{
	rt_sitemap_walk *w = seo_arena_calloc(a, sizeof(*w));
	seo_url u;
	int rc = SEO_ENOMEM;

	if (w == NULL)
		goto out;
	w->a = a;
	w->robots = robots;
	w->limit = limit;
	w->data = seo_arena_alloc(a, (limit + 1) * sizeof(*w->data));
	if (w->data == NULL)
		goto out;
	rc = seo_url_parse(origin, a, &u);
	if (rc != 0)
		goto out;
	w->origin = u.href;
	rc = discover(w);
	if (rc == 0)
		*out = w;
out:
	return rc;
}

const char *rt_sitemap_walk_next(rt_sitemap_walk *w)
{
	const char *url = NULL;

	if (w->done || w->in_flight)
		goto out;
	if (w->n_data >= w->limit || w->head == RT_SITEMAP_MAX_DOCS) {
		/* a bound ends the walk; anything left is not read */
		w->truncated |= w->head < w->n;
		w->done = 1;
		goto out;
	}
	while (w->head == w->n && w->sitemap_url == NULL && w->fallback <= 2)
		if (discover(w) != 0) {
			/* out of memory: end with what was read */
			w->done = 1;
			goto out;
		}
	if (w->head == w->n) {
		w->done = 1;
		goto out;
	}
	w->in_flight = 1;
	url = w->queue[w->head++].url;
out:
	return url;
}

/* Lists and queues the children of index `doc`, read at `depth`. */
static int add_children(rt_sitemap_walk *w, const rt_sitemap_doc *doc,
			const char *base, int depth)
{
	w->children_total += doc->children_total;
	for (size_t i = 0; i < doc->n_children; i++) {
		seo_url u;
		int rc = seo_url_resolve(base, doc->children[i], w->a, &u);

		if (rc == SEO_ENOMEM)
			return rc;
		if (w->n_listed < RT_SITEMAP_MAX_LISTED)
			w->listed[w->n_listed++] = rc == 0 ? u.href : doc->children[i];
		if (rc == 0 && depth < 2)
			enqueue(w, u.href, depth + 1);
		else if (rc == 0)
			w->truncated = 1; /* a third level is not followed */
	}
	/* children beyond those the parser kept are neither listed nor read */
	if (doc->children_total > doc->n_children)
		w->truncated = 1;
	return 0;
}

size_t rt_sitemap_walk_room(const rt_sitemap_walk *w)
{
	return w->limit - w->n_data;
}

int rt_sitemap_walk_feed(rt_sitemap_walk *w, const char *body, size_t len)
{
	rt_sitemap_doc doc;
	int rc;

	if (!w->in_flight)
		return SEO_EINVAL;
	if (body == NULL)
		return rt_sitemap_walk_take(w, NULL, 0);
	rc = rt_sitemap_parse(body, len, rt_sitemap_walk_room(w), RT_SITEMAP_MAX_LISTED,
			      w->a, &doc);
	return rt_sitemap_walk_take(w, &doc, rc);
}

int rt_sitemap_walk_take(rt_sitemap_walk *w, const rt_sitemap_doc *d, int parsed)
{
	const pending *p;
	rt_sitemap_doc doc;
	int rc = 0;

	if (!w->in_flight)
		return SEO_EINVAL;
	w->in_flight = 0;
	p = &w->queue[w->head - 1];
	if (d == NULL || parsed == SEO_EINVAL)
		goto out; /* a document that fails is skipped */
	rc = parsed;
	if (rc != 0)
		goto out;
	doc = *d;
	if (w->sitemap_url == NULL) {
		w->sitemap_url = p->url;
		w->sitemap_kind = doc.kind;
	}
	if (p->depth > 0)
		w->fetched[w->n_fetched++] = p->url;
	w->truncated |= doc.truncated;
	if (doc.kind == RT_SITEMAP_INDEX) {
		rc = add_children(w, &doc, p->url, p->depth);
		goto out;
	}
	memcpy(w->data + w->n_data, doc.urls, doc.n_urls * sizeof(*doc.urls));
	w->n_data += doc.n_urls;
out:
	return rc;
}

void rt_sitemap_walk_expire(rt_sitemap_walk *w)
{
	if (!w->done)
		w->truncated |= w->in_flight || w->head < w->n ||
			(w->sitemap_url == NULL && w->fallback <= 2);
	w->done = 1;
	w->in_flight = 0;
}

static json_t *strings(const char *const *v, size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr != NULL && i < n; i++)
		if (json_array_append_new(arr, json_string(v[i])) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	return arr;
}

static json_t *entry_json(const rt_sitemap_entry *e)
{
	json_t *o = json_pack("{s:s}", "url", e->loc);

	if (o != NULL && ((e->lastmod && json_object_set_new(o, "lastmod", json_string(e->lastmod))) ||
			  (e->changefreq && json_object_set_new(o, "changefreq", json_string(e->changefreq))) ||
			  (e->priority && json_object_set_new(o, "priority", json_string(e->priority))))) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

int rt_sitemap_walk_result(const rt_sitemap_walk *w, json_t **out)
{
	json_t *data = json_array();
	const char *type = "none";

	for (size_t i = 0; data != NULL && i < w->n_data; i++)
		if (json_array_append_new(data, entry_json(&w->data[i])) != 0) {
			json_decref(data);
			data = NULL;
		}
	if (w->sitemap_url != NULL)
		type = w->sitemap_kind == RT_SITEMAP_INDEX ? "sitemap_index" : "sitemap";
	*out = json_pack("{s:o,s:I,s:s?,s:s,s:o,s:I,s:o,s:b,s:s}",
			 "data", data, "total", (json_int_t)w->n_data,
			 "sitemap_url", w->sitemap_url, "sitemap_type", type,
			 "child_sitemaps", strings(w->listed, w->n_listed),
			 "child_sitemaps_total", (json_int_t)w->children_total,
			 "child_sitemaps_fetched", strings(w->fetched, w->n_fetched),
			 "truncated", w->truncated,
			 "source", w->sitemap_url ? "sitemap" : "none");
	return *out ? 0 : SEO_ENOMEM;
}

/* ---- the driver on the fetcher ---- */

#define ROBOTS_TIMEOUT_MS 5000
/* robots.txt bytes fetched; the parser reads RT_ROBOTS_MAX_BYTES */
#define ROBOTS_MAX_BODY (2 * 1024 * 1024)

typedef struct job {
	seo_fetcher *f;
	seo_arena *a;   /* the caller's: the walk and the robots rules */
	seo_arena *doc; /* the response being read; freed once read */
	const char *origin;
	size_t limit;
	int64_t deadline_ms;
	rt_robots robots;
	rt_sitemap_walk *w;
	rt_sitemap_done_fn done;
	void *ud;
	rt_sitemap_parser *parser; /* the document being read */
	int got_body;      /* its 2xx body began */
	int nomem;         /* its parser ran out of memory */
	size_t received;   /* document bytes the walk received */
	size_t xml_read;   /* XML the walk parsed */
} job;

/* Frees the response arena and reports. `j` lives on the caller's arena,
 * which the callback may free: nothing touches it afterwards. */
static void finish(job *j, int rc)
{
	json_t *res = NULL;

	rt_sitemap_parser_free(j->parser);
	j->parser = NULL;
	seo_arena_free(j->doc);
	j->doc = NULL;
	if (rc == 0)
		rc = rt_sitemap_walk_result(j->w, &res);
	j->done(rc, res, j->ud);
}

static int on_chunk(const char *data, size_t len, void *ud);

/* Starts fetching `url` within the time left, its body kept, or streamed
 * to the document's parser when there is one; 0 or SEO_ENOMEM. */
static int start(job *j, const char *url, long cap_ms, size_t max_body,
		 seo_fetch_done_fn cb)
{
	seo_fetch_opts o = {0};
	int64_t left = j->deadline_ms - seo_mono_ms();

	/* at least 1 ms: 0 would mean the fetcher's default */
	o.timeout_ms = left < cap_ms ? (left > 0 ? (long)left : 1) : cap_ms;
	o.raw_body = 1;
	o.max_body = max_body;
	if (j->parser != NULL) {
		o.on_body = on_chunk;
		o.body_ud = j;
	}
	j->doc = seo_arena_new(0);
	if (j->doc == NULL)
		return SEO_ENOMEM;
	return seo_fetch_start(j->f, url, &o, j->doc, cb, j);
}

static void on_doc(const seo_fetch_result *res, void *ud);

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* Fetches the walk's next document, or reports when it is over. The
 * walk's byte budgets end it like its deadline. */
static void step(job *j)
{
	const char *url;
	int rc;

	if (seo_mono_ms() >= j->deadline_ms || j->received >= RT_SITEMAP_WALK_BYTES ||
	    j->xml_read >= RT_SITEMAP_WALK_XML)
		rt_sitemap_walk_expire(j->w);
	url = rt_sitemap_walk_next(j->w);
	if (url == NULL) {
		finish(j, 0);
		return;
	}
	j->got_body = 0;
	rc = rt_sitemap_parser_new(rt_sitemap_walk_room(j->w), RT_SITEMAP_MAX_LISTED,
				   min_size(RT_SITEMAP_MAX_XML,
					    RT_SITEMAP_WALK_XML - j->xml_read),
				   j->a, &j->parser);
	if (rc == 0)
		rc = start(j, url, RT_SITEMAP_WALK_MS,
			   min_size(RT_SITEMAP_DOC_BYTES,
				    RT_SITEMAP_WALK_BYTES - j->received),
			   on_doc);
	if (rc != 0)
		finish(j, rc);
}

static int success(const seo_fetch_result *res)
{
	return res->error == SEO_FETCH_OK && res->status >= 200 && res->status < 300;
}

/* A piece of a document's 2xx body, straight into its parser. */
static int on_chunk(const char *data, size_t len, void *ud)
{
	job *j = ud;
	int rc = rt_sitemap_parser_feed(j->parser, data, len);

	j->got_body = 1;
	j->received += len;
	if (rc == SEO_ENOMEM)
		j->nomem = 1;
	return rc != 0;
}

static void on_doc(const seo_fetch_result *res, void *ud)
{
	job *j = ud;
	rt_sitemap_parser *p = j->parser;
	/* a transfer cut at its byte bound keeps what was parsed */
	int cut = res->error == SEO_FETCH_TOO_LARGE && j->got_body;
	rt_sitemap_doc doc;
	int rc, parsed;

	j->parser = NULL;
	if (j->nomem) {
		rt_sitemap_parser_free(p);
		rc = SEO_ENOMEM;
	} else if (success(res) || cut) {
		parsed = rt_sitemap_parser_end(p, &doc);
		doc.truncated |= cut;
		j->xml_read += doc.xml_bytes;
		rc = rt_sitemap_walk_take(j->w, &doc, parsed);
	} else {
		rt_sitemap_parser_free(p);
		rc = rt_sitemap_walk_take(j->w, NULL, 0);
	}
	/* the fetcher is done with its arena once it has called back */
	seo_arena_free(j->doc);
	j->doc = NULL;
	if (rc != 0)
		finish(j, rc);
	else
		step(j);
}

static void on_robots(const seo_fetch_result *res, void *ud)
{
	job *j = ud;
	const rt_robots *robots = NULL;
	int rc = 0;

	if (res->error == SEO_FETCH_INVALID_URL || res->error == SEO_FETCH_PRIVATE_IP) {
		rc = res->error == SEO_FETCH_INVALID_URL ? SEO_EINVAL : SEO_EDENIED;
		goto out;
	}
	if (success(res)) {
		rc = rt_robots_parse(res->body, res->body_len, j->a, &j->robots);
		robots = &j->robots;
	}
	if (rc == 0)
		rc = rt_sitemap_walk_new(j->origin, robots, j->limit, j->a, &j->w);
out:
	seo_arena_free(j->doc);
	j->doc = NULL;
	if (rc != 0)
		finish(j, rc);
	else
		step(j);
}

int rt_sitemap_fetch(seo_fetcher *f, const char *origin, size_t limit,
		     long walk_ms, seo_arena *a, rt_sitemap_done_fn done,
		     void *ud)
{
	job *j = seo_arena_calloc(a, sizeof(*j));
	seo_url u;
	const char *robots_url;
	int rc = SEO_ENOMEM;

	if (j == NULL || (origin = seo_arena_strdup(a, origin)) == NULL)
		goto out;
	rc = seo_url_resolve(origin, "/robots.txt", a, &u);
	if (rc != 0)
		goto out;
	robots_url = u.href;
	if (walk_ms <= 0 || walk_ms > RT_SITEMAP_WALK_MS)
		walk_ms = RT_SITEMAP_WALK_MS;
	*j = (job){f, a, NULL, origin, limit, seo_mono_ms() + walk_ms, {0}, NULL,
		   done, ud, NULL, 0, 0, 0, 0};
	rc = start(j, robots_url, ROBOTS_TIMEOUT_MS, ROBOTS_MAX_BODY, on_robots);
	if (rc != 0)
		seo_arena_free(j->doc);
out:
	return rc;
}
