/*
 * graph_ingest.h: the ingest half of svc-graph (library `graph_ingest`):
 * crawl files in their public formats to an index directory, which the
 * query half (graph.h) maps. seo-ingest is its command line.
 *
 * Ownership: the caller owns the options, the inputs and the stats;
 * nothing is kept after graph_ingest() returns.
 */
#ifndef SEO_GRAPH_INGEST_H
#define SEO_GRAPH_INGEST_H

#include <stddef.h>
#include <stdint.h>

#include "graph_format.h"

typedef enum graph_input_kind {
	GRAPH_IN_VERTICES,
	GRAPH_IN_EDGES,
	GRAPH_IN_RANKS,
	GRAPH_IN_WAT,
	GRAPH_IN_CDX,
	GRAPH_IN_TRANCO,
	GRAPH_IN_WHOIS,
} graph_input_kind;

typedef struct graph_input {
	graph_input_kind kind;
	const char *path;
} graph_input;

/* Called now and then during an ingest (e.g. for a terminal progress
 * line): `phase` is a short label, `done`/`total` bytes of the current
 * input (total 0 when unknown), `records` records read so far. */
typedef void (*graph_progress_fn)(void *ctx, const char *phase,
				  uint64_t done, uint64_t total,
				  uint64_t records);

typedef struct graph_ingest_opts {
	const char *out_dir;   /* final index directory; must not exist */
	const char *release;   /* release label, e.g. "CC-MAIN-2024-30" */
	const graph_input *inputs;
	size_t n_inputs;
	size_t mem_mb;         /* the whole ingest's budget in MiB; 0 means 2048 */
	const char *tmp_dir;   /* sorted runs; NULL: next to out_dir */
	graph_progress_fn progress; /* may be NULL */
	void *progress_ctx;
} graph_ingest_opts;

/* What an ingest read and wrote, for the tool's report and the tests. */
typedef struct graph_ingest_stats {
	uint64_t domains;
	uint64_t domain_edges;
	uint64_t links;          /* URL-level links between domains */
	uint64_t urls;
	uint64_t anchors;
	uint64_t captures;       /* CDX lines and WAT responses */
	uint64_t records;        /* input records read, all inputs */
	uint64_t malformed;      /* input lines or records skipped */
	uint64_t edge_bytes;     /* in- and out-link CSR, offsets and skip
				  * entries included */
	double bytes_per_edge;   /* edge_bytes / domain_edges */
	uint64_t index_bytes;    /* whole directory */
	uint64_t runs_spilled;   /* sorted runs written to disk */
	uint64_t dict_runs;      /* of which runs of URLs and anchors */
	double seconds;
	uint64_t platform_domains; /* (domain, platform) pairs stored */
	uint64_t similar_domains;  /* heavy domains whose similar domains
				    * are stored */
	uint32_t similar_passes;   /* passes over the in-lists counting them
				    * (more when --mem-mb is short) */
	double similar_seconds;    /* what counting them took */
} graph_ingest_stats;

/*
 * Reads every input and writes a complete index at opts->out_dir: files go
 * to a temporary sibling directory that is renamed when complete, so the
 * directory is either whole or absent. A malformed line or record is
 * logged (file and line) and counted, never fatal. Fills `stats` when not
 * NULL. WAT inputs need the technology rule file (seo_tech_rules_path()):
 * their pages' platforms are detected with it. Returns 0, SEO_EINVAL
 * without out_dir or release (or a release over 63 bytes, or a rule file
 * that does not parse), SEO_EEXIST when out_dir exists, SEO_ENOTFOUND when
 * an input or the rule file cannot be found, SEO_EIO or SEO_ENOMEM.
 */
int graph_ingest(const graph_ingest_opts *opts, graph_ingest_stats *stats);

/* Removes `dir` and everything below it (a demo crawl, an unfinished
 * index, a test's scratch); what cannot be removed is left. */
void graph_remove_dir(const char *dir);

#endif
