/*
 * ingest.c: the ingest's driver: the reading phase, then the writing
 * phases in order, then the manifest.
 *
 * Reading fills dictionaries, the per-domain records of domains.bin (a
 * file-backed array), external sorts (domain edges, platform pairs,
 * changes to domain records) and spools (URL-level links, captures: their
 * URL and anchor ids become final only when reading ends, and they are
 * sorted then). Writing streams each sort once, in domain-id order, into
 * the CSR files of docs/index-format.md. Everything goes to a temporary
 * sibling of the output directory which is renamed into place only when
 * complete.
 *
 * Memory is bounded by --mem-mb (b->mem): the sorts and the dictionaries of
 * URLs and anchors spill runs, per-domain arrays live in files of which
 * only a share stays resident, and the dictionaries of domain names and
 * small strings fail the ingest rather than outgrow the budget.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include <seo/errors.h>
#include <seo/log.h>
#include <seo/util.h>

#include "ingest.h"

void graph__b_progress(graph__builder *b, uint64_t done, uint64_t total)
{
	int64_t now = seo_mono_ms();

	if (!b->opts->progress || now - b->last_progress_ms < 500)
		return;
	b->last_progress_ms = now;
	b->opts->progress(b->opts->progress_ctx, b->phase, done, total,
			  b->records);
}

/* Ends a sort of the reading phase, once written out. */
void graph__sort_done(graph__builder *b, graph__xsort **s)
{
	b->stats->runs_spilled += graph__xsort_runs(*s);
	graph__xsort_free(*s);
	*s = NULL;
}

/* ---- the manifest ---- */

static uint64_t dir_bytes(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	uint64_t sum = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char p[8400];
		struct stat st;

		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
			sum += (uint64_t)st.st_size;
	}
	closedir(d);
	return sum;
}

static int write_meta(graph__wctx *c)
{
	graph__builder *b = c->b;
	graph_ingest_stats *s = b->stats;
	graph__meta m = { 0 };
	json_t *j;
	char *text;
	int rc;

	m.magic = GRAPH__MAGIC;
	m.version = GRAPH_FORMAT_VERSION;
	m.as_of = b->as_of;
	m.n_domains = c->n;
	m.n_edges = c->n_edges;
	m.n_links = c->n_links;
	m.n_urls = b->urls.n;
	m.n_anchors = b->anchors.n;
	m.n_strs = b->strs.n;
	m.n_captures = c->n_captures;
	m.max_refdomains = c->max_ref;
	m.flags = b->flags;
	snprintf(m.release, sizeof(m.release), "%s", b->opts->release);
	rc = graph__marr_sync(&b->dom);
	if (!rc)
		rc = graph__write_file(c->dir, "meta.bin", &m, sizeof(m));
	if (rc)
		return rc;
	s->domains = c->n;
	s->domain_edges = c->n_edges;
	s->links = c->n_links;
	s->urls = b->urls.n;
	s->anchors = b->anchors.n;
	s->captures = c->n_captures;
	s->records = b->records;
	s->malformed = b->malformed;
	s->edge_bytes = c->edge_bytes;
	s->bytes_per_edge = c->n_edges ? (double)c->edge_bytes /
						 (double)c->n_edges : 0;
	j = json_pack("{s:i, s:s, s:O, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I},"
		      " s:{s:I, s:f}}",
		      "format_version", GRAPH_FORMAT_VERSION, "release",
		      b->opts->release, "inputs", b->inputs_json, "counts",
		      "domains", (json_int_t)c->n, "domain_edges",
		      (json_int_t)c->n_edges, "links", (json_int_t)c->n_links,
		      "urls", (json_int_t)b->urls.n, "anchors",
		      (json_int_t)b->anchors.n, "captures",
		      (json_int_t)c->n_captures, "malformed",
		      (json_int_t)b->malformed, "edges", "bytes",
		      (json_int_t)c->edge_bytes, "bytes_per_edge",
		      s->bytes_per_edge);
	{
		json_t *pl = json_object();
		size_t np;
		const graph_platform *p = graph_platforms(&np);

		for (size_t i = 0; pl && i < np; i++)
			json_object_set_new(pl, p[i].slug,
					    json_integer((json_int_t)c->plat_count[i]));
		if (!pl || json_object_set_new(j, "platforms", pl) != 0) {
			json_decref(j);
			j = NULL;
		}
	}
	text = j ? json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
	json_decref(j);
	if (!text)
		return SEO_ENOMEM;
	/* last file written: its presence marks a finished directory */
	rc = graph__write_file(c->dir, "manifest.json", text, strlen(text));
	free(text);
	return rc;
}

static int sync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return SEO_EIO;
	fsync(fd);
	close(fd);
	return 0;
}

static int write_index(graph__builder *b)
{
	graph__wctx c = { .b = b, .dir = b->dir, .n = b->n_doms };
	int rc;

	graph__marr_init(&c.refdeg);
	graph__marr_init(&c.rank);
	graph__marr_init(&c.hosts);
	graph__marr_init(&c.byrank);
	/* reading is over: no string is interned any more, no vertex id
	 * or name looked up (the names' fence goes back to the budget) */
	graph__freeze_dicts(b);
	if (b->names)
		graph__fence_free(b);
	graph__marr_close(&b->vmap);
	if ((rc = graph__write_stage(&c)) || (rc = graph__rank_domains(&c)) ||
	    (rc = graph__write_csrs(&c)) ||
	    (rc = graph__write_sdict(&c, "urls", &b->urls)) ||
	    (rc = graph__write_sdict(&c, "anchors", &b->anchors)) ||
	    (rc = graph__write_links(&c)) || (rc = graph__write_ranks(&c)) ||
	    (rc = graph__write_outbound(&c)) ||
	    (rc = graph__write_captures(&c)))
		goto out;
	/* no more ids to make final */
	graph__marr_close(&b->urls.map);
	graph__marr_close(&b->anchors.map);
	if ((rc = graph__write_platforms(&c)) ||
	    (rc = graph__write_domain_names(&c)) ||
	    (rc = graph__write_dict(b->dir, "strs", &b->strs)) ||
	    (rc = graph__write_similar(&c)))
		goto out;
	rc = write_meta(&c);
out:
	graph__marr_close(&c.refdeg);
	graph__marr_close(&c.rank);
	graph__marr_close(&c.hosts);
	graph__marr_close(&c.byrank);
	graph__xsort_free(c.lupd);
	free(c.heavy);
	return rc;
}

/* Inputs are read in this order whatever the command line says:
 * vertices define the ids the edges use. */
static const graph_input_kind read_order[] = {
	GRAPH_IN_VERTICES, GRAPH_IN_EDGES, GRAPH_IN_RANKS, GRAPH_IN_TRANCO,
	GRAPH_IN_WHOIS,    GRAPH_IN_WAT,   GRAPH_IN_CDX,
};

int graph_ingest(const graph_ingest_opts *opts_in, graph_ingest_stats *stats)
{
	graph_ingest_opts opts = *opts_in;
	graph_ingest_stats local = { 0 };
	graph__builder b = { 0 };
	char tmp[4200], tdir[4200];
	struct stat st;
	int64_t t0 = seo_mono_ms();
	int rc, made = 0;

	if (!opts.out_dir || !opts.release || !*opts.release ||
	    strlen(opts.release) >= sizeof(((graph__meta *)0)->release))
		return SEO_EINVAL;
	if (!stats)
		stats = &local;
	memset(stats, 0, sizeof(*stats));
	if (opts.mem_mb == 0)
		opts.mem_mb = 2048;
	if (stat(opts.out_dir, &st) == 0) {
		log_error("index directory \"%s\" already exists",
			  opts.out_dir);
		return SEO_EEXIST;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", opts.out_dir, (long)getpid());
	if (!opts.tmp_dir)
		opts.tmp_dir = tmp;
	snprintf(tdir, sizeof(tdir), "%s", opts.tmp_dir);
	opts.tmp_dir = tdir;
	if (mkdir(tmp, 0755) != 0) {
		log_error("cannot create \"%s\": %s", tmp, strerror(errno));
		return SEO_EIO;
	}
	made = 1;
	b.opts = &opts;
	b.dir = tmp;
	b.stats = stats;
	b.mem.cap = opts.mem_mb << 20;
	b.inputs_json = json_array();
	b.names = calloc(1, sizeof(*b.names));
	graph__marr_init(&b.dom);
	graph__marr_init(&b.vmap);
	if (b.names) {
		graph__marr_init(&b.names->off);
		graph__marr_init(&b.names->str);
	}
	if ((rc = graph__sdict_init(&b.urls, opts.tmp_dir, &b.mem)) ||
	    (rc = graph__sdict_init(&b.anchors, opts.tmp_dir, &b.mem)))
		goto out;
	for (size_t i = 0; !b.tech && i < opts.n_inputs; i++)
		if (opts.inputs[i].kind == GRAPH_IN_WAT &&
		    (rc = graph__platform_rules(&b.tech)))
			goto out;
	/* the sorts fill at once while reading and take what the budget
	 * has room for, each up to a part of it: the domain graph's is by
	 * far the largest input */
	if (!b.inputs_json || !b.names) {
		rc = SEO_ENOMEM;
		goto out;
	}
	if ((rc = graph__b_array(&b, &b.dom, "domains.bin", 0, b.mem.cap / 4,
				 0)) ||
	    (rc = graph__xsort_new(sizeof(graph__edge), graph__cmp_pair,
				   b.mem.cap / 4, opts.tmp_dir, &b.mem,
				   &b.edges)) ||
	    (rc = graph__xsort_new(sizeof(graph__lrec), NULL, b.mem.cap / 4,
				   opts.tmp_dir, &b.mem, &b.links_in)) ||
	    (rc = graph__xsort_new(sizeof(graph__crec), NULL, b.mem.cap / 16,
				   opts.tmp_dir, &b.mem, &b.caps_in)) ||
	    (rc = graph__xsort_new(sizeof(graph__edge), graph__cmp_pair,
				   b.mem.cap / 32, opts.tmp_dir, &b.mem,
				   &b.plats)) ||
	    (rc = graph__xsort_new(sizeof(graph__upd), graph__cmp_upd,
				   b.mem.cap / 16, opts.tmp_dir, &b.mem,
				   &b.upd)))
		goto out;
	for (size_t k = 0; k < sizeof(read_order) / sizeof(read_order[0]); k++)
		for (size_t i = 0; i < opts.n_inputs; i++) {
			if (opts.inputs[i].kind != read_order[k])
				continue;
			/* the vertices, read first, are all in */
			if (read_order[k] != GRAPH_IN_VERTICES &&
			    (rc = graph__names_seal(&b)))
				goto out;
			rc = graph__read_input(&b, &opts.inputs[i]);
			if (rc)
				goto out;
		}
	if ((rc = graph__names_seal(&b)) || (rc = write_index(&b)))
		goto out;
	stats->index_bytes = dir_bytes(tmp);
	sync_dir(tmp);
	if (rename(tmp, opts.out_dir) != 0) {
		log_error("cannot rename \"%s\" to \"%s\": %s", tmp,
			  opts.out_dir, strerror(errno));
		rc = errno == EEXIST || errno == ENOTEMPTY ? SEO_EEXIST :
							     SEO_EIO;
		goto out;
	}
	made = 0;
	stats->seconds = (double)(seo_mono_ms() - t0) / 1000.0;
out:
	if (made)
		graph_remove_dir(tmp);
	graph__xsort_free(b.edges);
	graph__xsort_free(b.links_in);
	graph__xsort_free(b.caps_in);
	graph__xsort_free(b.links);
	graph__xsort_free(b.outl);
	graph__xsort_free(b.caps);
	graph__xsort_free(b.plats);
	graph__xsort_free(b.upd);
	seo_tech_rules_free(b.tech);
	free(b.plat_seen);
	graph__dict_free(&b.doms);
	graph__sdict_free(&b.urls);
	graph__sdict_free(&b.anchors);
	graph__dict_free(&b.strs);
	graph__names_free(&b);
	graph__marr_close(&b.dom);
	graph__marr_close(&b.vmap);
	json_decref(b.inputs_json);
	return rc;
}
