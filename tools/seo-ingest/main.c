/*
 * seo-ingest: builds a crawl index from crawl files (CONTRACT.md).
 *
 *   seo-ingest --out DIR --release LABEL [--domain-vertices F]
 *              [--domain-edges F] [--domain-ranks F] [--wat F]...
 *              [--cdx F]... [--tranco F] [--whois F] [--mem-mb N]
 *   seo-ingest --demo --out DIR [--release LABEL]
 *
 * Prints one JSON summary on stdout; errors go to stderr as log lines and
 * the exit status is non-zero. --mem-mb (default 2048) bounds what the
 * ingest holds in memory: peak RSS stays within it plus a few MiB.
 */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <seo/arena.h>
#include <seo/config.h>
#include <seo/errors.h>
#include <seo/log.h>
#include <seo/util.h>

#include "crawlgen.h"
#include "graph_ingest.h"

#define MAX_INPUTS 256

typedef struct progress {
	int64_t t0;
	int shown;
} progress;

/* A single overwritten line on a terminal: records/s, bytes, ETA. */
static void show_progress(void *ctx, const char *phase, uint64_t done,
			  uint64_t total, uint64_t records)
{
	progress *p = ctx;
	double secs = (double)(seo_mono_ms() - p->t0) / 1000.0;
	double rate = secs > 0 ? (double)records / secs : 0;

	fprintf(stderr, "\r%-18s %12llu records %9.0f rec/s %8.1f MB",
		phase, (unsigned long long)records, rate, (double)done / 1e6);
	if (total > 0 && done > 0 && done <= total)
		fprintf(stderr, " of %.1f MB, eta %.0f s", (double)total / 1e6,
			secs * (double)(total - done) / (double)done);
	fprintf(stderr, "\033[K");
	p->shown = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: seo-ingest --out DIR --release LABEL [--domain-vertices F]\n"
		"                  [--domain-edges F] [--domain-ranks F] [--wat F]...\n"
		"                  [--cdx F]... [--tranco F] [--whois F] [--mem-mb N]\n"
		"       seo-ingest --demo --out DIR [--release LABEL] [--mem-mb N]\n"
		"--mem-mb N bounds the memory the ingest holds, in MiB (default\n"
		"2048, at least 16): larger inputs spill to disk next to DIR\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "release", required_argument, NULL, 'r' },
		{ "domain-vertices", required_argument, NULL, 'V' },
		{ "domain-edges", required_argument, NULL, 'E' },
		{ "domain-ranks", required_argument, NULL, 'R' },
		{ "wat", required_argument, NULL, 'w' },
		{ "cdx", required_argument, NULL, 'c' },
		{ "tranco", required_argument, NULL, 't' },
		{ "whois", required_argument, NULL, 'W' },
		{ "mem-mb", required_argument, NULL, 'm' },
		{ "demo", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	graph_input inputs[MAX_INPUTS];
	graph_ingest_opts opts = { 0 };
	graph_ingest_stats st;
	progress prog = { .t0 = seo_mono_ms() };
	seo_arena *arena = NULL;
	char demo_dir[4096] = "";
	size_t n = 0;
	int demo = 0, c, rc, status = 1;

	seo_config_init();
	seo_log_init("seo-ingest");
	/* large buffers (sort runs, dictionaries) from mmap, so that what is
	 * freed goes back to the system: --mem-mb counts what is held, and
	 * glibc's adaptive threshold would keep freed buffers in the heap */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		graph_input_kind kind;
		char *end;

		switch (c) {
		case 'o':
			opts.out_dir = optarg;
			continue;
		case 'r':
			opts.release = optarg;
			continue;
		case 'm':
			errno = 0;
			opts.mem_mb = strtoul(optarg, &end, 10);
			if (errno || *end || opts.mem_mb < 16) {
				fprintf(stderr, "seo-ingest: --mem-mb must be an integer of at least 16\n");
				return 2;
			}
			continue;
		case 'd':
			demo = 1;
			continue;
		case 'h':
			usage(stdout);
			return 0;
		case 'V': kind = GRAPH_IN_VERTICES; break;
		case 'E': kind = GRAPH_IN_EDGES; break;
		case 'R': kind = GRAPH_IN_RANKS; break;
		case 'w': kind = GRAPH_IN_WAT; break;
		case 'c': kind = GRAPH_IN_CDX; break;
		case 't': kind = GRAPH_IN_TRANCO; break;
		case 'W': kind = GRAPH_IN_WHOIS; break;
		default:
			usage(stderr);
			return 2;
		}
		if (n == MAX_INPUTS) {
			fprintf(stderr, "seo-ingest: more than %d inputs\n",
				MAX_INPUTS);
			return 2;
		}
		inputs[n].kind = kind;
		inputs[n++].path = optarg;
	}
	if (optind < argc || !opts.out_dir || (!demo && !opts.release) ||
	    (demo && n > 0)) {
		usage(stderr);
		return 2;
	}
	arena = seo_arena_new(0);
	if (!arena) {
		fprintf(stderr, "seo-ingest: out of memory\n");
		return 1;
	}
	if (demo) {
		const char *tmp = getenv("TMPDIR");

		if (!opts.release)
			opts.release = "demo";
		snprintf(demo_dir, sizeof(demo_dir), "%s/seo-demo-XXXXXX",
			 tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(demo_dir)) {
			fprintf(stderr, "seo-ingest: cannot create a temporary directory: %s\n",
				strerror(errno));
			demo_dir[0] = '\0';
			goto out;
		}
		rc = crawlgen_demo_write(demo_dir, 1, arena, inputs, &n);
		if (rc) {
			fprintf(stderr, "seo-ingest: cannot write the demo crawl: %s\n",
				seo_strerror(rc));
			goto out;
		}
	}
	opts.inputs = inputs;
	opts.n_inputs = n;
	if (isatty(STDERR_FILENO)) {
		opts.progress = show_progress;
		opts.progress_ctx = &prog;
	}
	rc = graph_ingest(&opts, &st);
	if (prog.shown)
		fprintf(stderr, "\r\033[K");
	if (rc) {
		fprintf(stderr, "seo-ingest: ingest failed: %s%s\n",
			seo_strerror(rc),
			rc == SEO_EEXIST ? " (the output directory exists)" : "");
		goto out;
	}
	printf("{\"out\": \"%s\", \"release\": \"%s\", \"domains\": %llu, "
	       "\"domain_edges\": %llu, \"links\": %llu, \"urls\": %llu, "
	       "\"anchors\": %llu, \"captures\": %llu, \"records\": %llu, "
	       "\"malformed\": %llu, \"edge_bytes\": %llu, "
	       "\"bytes_per_edge\": %.3f, \"index_bytes\": %llu, "
	       "\"runs_spilled\": %llu, \"dict_runs\": %llu, "
	       "\"platform_domains\": %llu, "
	       "\"seconds\": %.3f, \"edges_per_second\": %.0f}\n",
	       opts.out_dir, opts.release, (unsigned long long)st.domains,
	       (unsigned long long)st.domain_edges,
	       (unsigned long long)st.links, (unsigned long long)st.urls,
	       (unsigned long long)st.anchors,
	       (unsigned long long)st.captures,
	       (unsigned long long)st.records,
	       (unsigned long long)st.malformed,
	       (unsigned long long)st.edge_bytes, st.bytes_per_edge,
	       (unsigned long long)st.index_bytes,
	       (unsigned long long)st.runs_spilled,
	       (unsigned long long)st.dict_runs,
	       (unsigned long long)st.platform_domains, st.seconds,
	       st.seconds > 0 ? (double)st.domain_edges / st.seconds : 0.0);
	status = 0;
out:
	if (demo_dir[0])
		graph_remove_dir(demo_dir);
	seo_arena_free(arena);
	return status;
}
