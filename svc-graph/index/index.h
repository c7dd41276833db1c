/*
 * index.h: what the query side's files share; not a public API. The
 * format they read is ../format/format.h's.
 */
#ifndef GRAPH_INDEX_INTERNAL_H
#define GRAPH_INDEX_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"
#include "graph.h"

/* A file of the index as mapped. */
typedef struct graph__map {
	const void *p;
	size_t len;
} graph__map;

/* The files of the index; open.c names them. */
enum {
	F_META, F_DOMAINS, F_BYRANK, F_DOMSORTED,
	F_DOMREV_STR, F_DOMREV_OFF, F_DOMFWD_STR, F_DOMFWD_OFF,
	F_OUT_OFF, F_OUT_DAT, F_IN_OFF, F_IN_DAT,
	F_LINKS_OFF, F_LINKS, F_RECENT, F_PAGES_OFF, F_PAGES,
	F_ANCH_OFF, F_ANCH, F_OUTL_OFF, F_OUTL,
	F_URLIDX_OFF, F_URLIDX, F_STATUS_OFF, F_STATUS,
	F_URLS_STR, F_URLS_OFF, F_ANCHORS_STR, F_ANCHORS_OFF,
	F_STRS_STR, F_STRS_OFF,
	F_PLAT_OFF, F_PLAT, F_PLAT_BYNAME, F_PLATTLD_STR, F_PLATTLD_OFF,
	F_INSKIP_DIR, F_INSKIP, F_LINKSKIP_DIR, F_LINKSKIP,
	F_SIMTOP_DIR, F_SIMTOP,
	F__COUNT
};

/* Files from here on are new in format 3 (skip entries, stored similar
 * domains): an index of format 2 is served without them, its deep pages
 * decoded from the start and its similar domains counted. */
#define F_SINCE_3 F_INSKIP_DIR
#define FORMAT_OLDEST 2

typedef struct graph__sim_cache graph__sim_cache;

struct graph_index {
	graph__map f[F__COUNT];
	const graph__meta *meta;
	const graph__dom *dom;
	uint64_t n;
	graph__sim_cache *sim; /* similar domains' scratch and bitmaps */
};

#define ARR(ix, id, type) ((const type *)(ix)->f[id].p)

/* ---- strings and ids (lookup.c) ---- */

/* String `id` of the string file `str` with offsets `off`; NULL for
 * GRAPH__NONE. Inline: rows call these once per field. */
static inline const char *graph__str_at(const graph_index *ix, int str,
					int off, uint32_t id)
{
	if (id == GRAPH__NONE)
		return NULL;
	return (const char *)ix->f[str].p + ARR(ix, off, uint64_t)[id];
}

static inline const char *graph__dom_name(const graph_index *ix,
					  uint32_t id)
{
	return graph__str_at(ix, F_DOMFWD_STR, F_DOMFWD_OFF, id);
}

static inline const char *graph__url_str(const graph_index *ix, uint32_t id)
{
	return graph__str_at(ix, F_URLS_STR, F_URLS_OFF, id);
}

static inline const char *graph__anchor_str(const graph_index *ix,
					    uint32_t id)
{
	return graph__str_at(ix, F_ANCHORS_STR, F_ANCHORS_OFF, id);
}

static inline const char *graph__small_str(const graph_index *ix,
					   uint32_t id)
{
	return graph__str_at(ix, F_STRS_STR, F_STRS_OFF, id);
}

/* "image" or "hyperlink" of a GRAPH__LT_* (static). */
static inline const char *graph__type_name(uint32_t t)
{
	return t == GRAPH__LT_IMAGE ? "image" : "hyperlink";
}

/*
 * Resolves a user's domain: 0 with *id, SEO_ENOTFOUND when well-formed but
 * absent, SEO_EINVAL when malformed. A subdomain falls back to its
 * registrable domain, the level the index keeps.
 */
int graph__lookup(const graph_index *ix, const char *domain, uint32_t *id);

/* Common prologue: resolves the domain and clears the outputs (each may
 * be NULL). Returns 1 when found, 0 when absent (outputs empty), or an
 * error. */
int graph__query_start(const graph_index *ix, const char *domain,
		       uint32_t *id, size_t *n, uint64_t *total);

/* graph__query_start() for a one-domain query: clears the `size` bytes of
 * its result `out` and sets *d when found. */
int graph__dom_start(const graph_index *ix, const char *domain, void *out,
		     size_t size, const graph__dom **d);

/* The page's limit, at most GRAPH_LIMIT_MAX. */
uint32_t graph__page_limit(const graph_page *pg);

/* The rows of a list of `total` that the page skips: its offset, at most
 * `total`, so that any offset (up to UINT64_MAX) is an empty page past
 * the end and never an index or a pointer out of the list. */
uint64_t graph__page_skip(const graph_page *pg, uint64_t total);

/* `n` rows of `size` bytes from `a` (one byte when n is 0, so that an
 * empty page is not a failure); NULL when out of memory. */
void *graph__rows_alloc(seo_arena *a, size_t n, size_t size);

/* ---- skip directories (inlist.c) ---- */

/* The first of the `n` entries of a directory (`stride` bytes each,
 * ascending by their leading u32 key) whose key is not below `key`; `n`
 * when none is. */
uint64_t graph__dir_lower_bound(const void *dir, uint64_t n, size_t stride,
				uint32_t key);

/* The skip entries (entries of `size` bytes in file `binf`) of the list
 * `key` of directory `dirf`: their number and the first, or 0 when the
 * list has none or its directory entry disagrees with the file. */
uint32_t graph__skip_find(const graph_index *ix, int dirf, int binf,
			  size_t size, uint32_t key, uint64_t *first);

/* ---- referring domains (refdomains.c) ---- */

/* Links from the domain at importance position `r` within the links of
 * one target: the group is ordered by that position, so two searches. */
uint32_t graph__links_from(const graph_index *ix, uint32_t to, uint32_t r);

/* ---- similar domains' scratch (similar.c) ---- */

/* Makes ix->sim; 0 or SEO_ENOMEM. */
int graph__sim_cache_new(graph_index *ix);
/* Frees a scratch and its bitmaps; NULL is allowed. */
void graph__sim_cache_free(graph__sim_cache *sc);

/* ---- platforms (platforms.c) ---- */

/* The platform section of an open index, checked at open. */
typedef struct graph__platview {
	const uint64_t *off;      /* GRAPH_PLATFORM_COUNT + 1, into doms */
	const graph__pdom *doms;  /* per platform, authority desc, then name */
	const uint32_t *byname;   /* per platform, positions in its doms
				   * group in domain-name order */
	const char *tld_str;
	const uint64_t *tld_off;
	uint64_t n_tlds;
	const graph__dom *dom;    /* domains.bin */
} graph__platview;

void graph__index_platforms(const graph_index *ix, graph__platview *v);

/* ---- similar domains (similar.c) ---- */

/* How graph__similar_domains() answers: the stored rows when they hold
 * the page, else the cheaper count for the domain; or the way given (the
 * tests compare them). STORED answers SEO_ENOTFOUND when the index does
 * not store the page. */
typedef enum graph__sim_method {
	GRAPH__SIM_AUTO,
	GRAPH__SIM_FORWARD,
	GRAPH__SIM_REVERSE,
	GRAPH__SIM_STORED,
} graph__sim_method;

/* graph_similar_domains(), counted by `method`. */
int graph__similar_domains(const graph_index *ix, const char *domain,
			   const graph_page *pg, graph__sim_method method,
			   seo_arena *a, graph_similar_row **rows, size_t *n,
			   uint64_t *total);

#endif
