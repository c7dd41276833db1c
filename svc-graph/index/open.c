/*
 * open.c: the memory-mapped index: its files mapped read-only at open and
 * checked against the counts of meta.bin, so queries index the arrays
 * without bounds surprises and without parsing. Per-domain lists are CSR:
 * an offsets file (n + 1 entries) and a data file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <seo/errors.h>
#include <seo/log.h>

#include "index.h"

static const char *const file_names[F__COUNT] = {
	"meta.bin", "domains.bin", "byrank.u32", "domsorted.u32",
	"domrev.str", "domrev.off", "domfwd.str", "domfwd.off",
	"out.off", "out.dat", "in.off", "in.dat",
	"links.off", "links.bin", "recent.u32", "pages.off", "pages.bin",
	"anchortext.off", "anchortext.bin", "outl.off", "outl.bin",
	"urlidx.off", "urlidx.bin", "status.off", "status.bin",
	"urls.str", "urls.off", "anchors.str", "anchors.off",
	"strs.str", "strs.off",
	"plat.off", "plat.bin", "platname.u32", "plattld.str", "plattld.off",
	"inskip.dir", "inskip.bin", "linkskip.dir", "linkskip.bin",
	"simtop.dir", "simtop.bin",
};

static int map_file(const char *dir, const char *name, graph__map *m)
{
	char path[4200];
	struct stat st;
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? SEO_ENOTFOUND : SEO_EIO;
	if (fstat(fd, &st) != 0) {
		rc = SEO_EIO;
		goto out;
	}
	m->len = (size_t)st.st_size;
	/* an empty file maps to an empty array */
	m->p = "";
	if (m->len > 0) {
		void *p = mmap(NULL, m->len, PROT_READ, MAP_SHARED, fd, 0);

		if (p == MAP_FAILED) {
			rc = SEO_EIO;
			goto out;
		}
		m->p = p;
	}
out:
	close(fd);
	return rc;
}

void graph_index_close(graph_index *ix)
{
	if (!ix)
		return;
	for (int i = 0; i < F__COUNT; i++)
		if (ix->f[i].len > 0)
			munmap((void *)ix->f[i].p, ix->f[i].len);
	graph__sim_cache_free(ix->sim);
	free(ix);
}

/* An offsets file of n + 1 entries from 0 to `limit`. The entries in
 * between are not walked: at full scale that would read gigabytes at
 * every open, and the writer emits them ascending by construction. */
static int check_off(const graph_index *ix, int id, uint64_t limit)
{
	const uint64_t *o = ARR(ix, id, uint64_t);

	return ix->f[id].len == (ix->n + 1) * sizeof(uint64_t) && o[0] == 0 &&
	       o[ix->n] == limit;
}

/* The platform section: one group per platform over plat.bin, the name
 * order beside it, and the suffix dictionary (docs/index-format.md). */
static int check_platforms(const graph_index *ix)
{
	const uint64_t *o = ARR(ix, F_PLAT_OFF, uint64_t);
	const uint64_t *t = ARR(ix, F_PLATTLD_OFF, uint64_t);
	size_t nt = ix->f[F_PLATTLD_OFF].len / 8;
	uint64_t n = ix->f[F_PLAT].len / sizeof(graph__pdom);
	size_t ts = ix->f[F_PLATTLD_STR].len;

	return ix->f[F_PLAT_OFF].len == (GRAPH_PLATFORM_COUNT + 1) * 8 &&
	       o[0] == 0 && o[GRAPH_PLATFORM_COUNT] == n &&
	       ix->f[F_PLAT].len == n * sizeof(graph__pdom) &&
	       ix->f[F_PLAT_BYNAME].len == n * 4 && nt >= 1 &&
	       ix->f[F_PLATTLD_OFF].len == nt * 8 && t[0] == 0 &&
	       t[nt - 1] == ts &&
	       (ts == 0 ||
		((const char *)ix->f[F_PLATTLD_STR].p)[ts - 1] == '\0');
}

static int check(const graph_index *ix)
{
	const graph__meta *m = ix->meta;
	uint64_t n = ix->n;

	if (ix->f[F_DOMAINS].len != n * sizeof(graph__dom) ||
	    ix->f[F_BYRANK].len != n * 4 || ix->f[F_DOMSORTED].len != n * 4 ||
	    ix->f[F_LINKS].len != m->n_links * sizeof(graph__link) ||
	    ix->f[F_RECENT].len != m->n_links * 4)
		return 0;
	if (!check_off(ix, F_DOMREV_OFF, ix->f[F_DOMREV_STR].len) ||
	    !check_off(ix, F_DOMFWD_OFF, ix->f[F_DOMFWD_STR].len) ||
	    !check_off(ix, F_OUT_OFF, ix->f[F_OUT_DAT].len) ||
	    !check_off(ix, F_IN_OFF, ix->f[F_IN_DAT].len) ||
	    !check_off(ix, F_LINKS_OFF, m->n_links) ||
	    !check_off(ix, F_PAGES_OFF,
		       ix->f[F_PAGES].len / sizeof(graph__agg)) ||
	    !check_off(ix, F_ANCH_OFF,
		       ix->f[F_ANCH].len / sizeof(graph__agg)) ||
	    !check_off(ix, F_OUTL_OFF,
		       ix->f[F_OUTL].len / sizeof(graph__outl)) ||
	    !check_off(ix, F_URLIDX_OFF,
		       ix->f[F_URLIDX].len / sizeof(graph__cap)) ||
	    !check_off(ix, F_STATUS_OFF,
		       ix->f[F_STATUS].len / sizeof(graph__status)))
		return 0;
	if (ix->f[F_URLS_OFF].len != (m->n_urls + 1) * 8 ||
	    ix->f[F_ANCHORS_OFF].len != (m->n_anchors + 1) * 8 ||
	    ix->f[F_STRS_OFF].len != (m->n_strs + 1) * 8)
		return 0;
	if (!check_platforms(ix))
		return 0;
	/* skip and similar-domains entries are checked against these
	 * sizes where they are used */
	if (ix->f[F_INSKIP_DIR].len % sizeof(graph__skipdir) ||
	    ix->f[F_INSKIP].len % sizeof(graph__inskip) ||
	    ix->f[F_LINKSKIP_DIR].len % sizeof(graph__skipdir) ||
	    ix->f[F_LINKSKIP].len % sizeof(uint32_t) ||
	    ix->f[F_SIMTOP_DIR].len % sizeof(graph__simdir) ||
	    ix->f[F_SIMTOP].len % sizeof(graph__sim))
		return 0;
	/* string blobs end with a NUL so that every entry is a C string */
	for (int s = F_DOMREV_STR; s <= F_STRS_STR; s++) {
		if (s != F_DOMREV_STR && s != F_DOMFWD_STR && s != F_URLS_STR &&
		    s != F_ANCHORS_STR && s != F_STRS_STR)
			continue;
		if (ix->f[s].len > 0 &&
		    ((const char *)ix->f[s].p)[ix->f[s].len - 1] != '\0')
			return 0;
	}
	return 1;
}

int graph_index_open(const char *dir, graph_index **out)
{
	graph_index *ix = calloc(1, sizeof(*ix));
	int rc = 0, missing_v3 = 0;

	if (!ix)
		return SEO_ENOMEM;
	/* the manifest is written last: without it the index is partial */
	{
		graph__map m = { 0 };

		rc = map_file(dir, "manifest.json", &m);
		if (m.len > 0)
			munmap((void *)m.p, m.len);
		if (rc)
			goto out;
	}
	for (int i = 0; i < F__COUNT; i++) {
		rc = map_file(dir, file_names[i], &ix->f[i]);
		if (rc == SEO_ENOTFOUND && i >= F_SINCE_3) {
			ix->f[i] = (graph__map){ "", 0 };
			missing_v3 = 1;
			continue;
		}
		if (rc) {
			log_error("cannot map index file \"%s/%s\": %s", dir,
				  file_names[i], seo_strerror(rc));
			rc = rc == SEO_ENOTFOUND ? SEO_EINVAL : rc;
			goto out;
		}
	}
	ix->meta = ARR(ix, F_META, graph__meta);
	if (ix->f[F_META].len != sizeof(graph__meta) ||
	    ix->meta->magic != GRAPH__MAGIC ||
	    ix->meta->version < FORMAT_OLDEST ||
	    ix->meta->version > GRAPH_FORMAT_VERSION ||
	    (ix->meta->version >= 3 && missing_v3) ||
	    ix->meta->release[sizeof(ix->meta->release) - 1] != '\0') {
		log_error("\"%s\" is not a whole index of format version %d "
			  "to %d", dir, FORMAT_OLDEST, GRAPH_FORMAT_VERSION);
		rc = SEO_EINVAL;
		goto out;
	}
	ix->n = ix->meta->n_domains;
	ix->dom = ARR(ix, F_DOMAINS, graph__dom);
	if (!check(ix)) {
		log_error("index \"%s\" is inconsistent", dir);
		rc = SEO_EINVAL;
		goto out;
	}
	rc = graph__sim_cache_new(ix);
	if (rc)
		goto out;
	*out = ix;
	ix = NULL;
out:
	graph_index_close(ix);
	return rc;
}

const char *graph_index_release(const graph_index *ix)
{
	return ix->meta->release;
}

uint64_t graph_index_domain_count(const graph_index *ix)
{
	return ix->n;
}

uint64_t graph_index_edge_count(const graph_index *ix)
{
	return ix->meta->n_edges;
}
