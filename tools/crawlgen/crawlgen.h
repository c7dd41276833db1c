/*
 * crawlgen.h: deterministic synthetic crawls in the public formats, for
 * seo-ingest --demo, graph-bench and the tests (library `crawlgen`). They
 * are inputs of the ingest (graph_ingest.h), not part of it.
 *
 * Ownership: the paths put in `inputs` are allocated from the caller's
 * arena `a`; the files are the caller's to remove (graph_remove_dir()).
 */
#ifndef SEO_CRAWLGEN_H
#define SEO_CRAWLGEN_H

#include <stddef.h>
#include <stdint.h>

#include <seo/arena.h>

#include "graph_ingest.h"

/*
 * Writes the demo crawl into `dir` (created when missing) and fills
 * `inputs` (at least 8 entries) with what it wrote. `scale` 1 is the demo
 * (a few thousand domains). Returns 0 or SEO_EIO/SEO_ENOMEM.
 */
int crawlgen_demo_write(const char *dir, unsigned scale, seo_arena *a,
			graph_input *inputs, size_t *n_inputs);

/*
 * Writes a synthetic domain graph of `n_domains` (at least 2) domains and
 * `n_edges` distinct edges (fewer only when the degrees drawn cannot hold
 * them: out-degrees stop at n / 4) into `dir` (created when missing):
 * domain-vertices.txt, domain-edges.txt, domain-ranks.txt and a WAT file
 * with URL-level links from one domain in 16, with web-like skew
 * (power-law in- and out-degrees, 40 % of the domains never linked to) and
 * ids unrelated to popularity. The same `seed` gives the same files. Fills
 * `inputs` (at least 4 entries). Returns 0, SEO_EINVAL, SEO_EIO or
 * SEO_ENOMEM.
 */
int crawlgen_synth_write(const char *dir, uint32_t n_domains,
			 uint64_t n_edges, uint64_t seed, seo_arena *a,
			 graph_input *inputs, size_t *n_inputs);

#endif
