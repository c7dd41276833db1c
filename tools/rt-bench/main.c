/*
 * rt-bench: the driver of bench/realtime.sh (docs/benchmarks.md).
 *
 *   rt-bench analyse [--reps N] [--names FILE] [--only NAME] PAGE.html...
 *       Runs page-seo, schema-markup and tech-stack N times (default 20) on
 *       each saved page and prints, per analysis, "NAME<TAB>p50_us<TAB>
 *       p99_us<TAB>pages": percentiles over the pages of each page's median
 *       thread CPU time. FILE receives "PAGE<TAB>tech..." lines, the
 *       technologies tech-stack found. --only runs one of them, or
 *       html-parse: MyHTML's parse alone on a reused parser, cleaned
 *       after each run as the analyses' pool does, their floor.
 *   rt-bench fetch URL COUNT CONCURRENCY
 *       Fetches URL COUNT times, CONCURRENCY at once, through one fetcher
 *       and prints "pages_per_s<TAB>ok<TAB>failed<TAB>wall_s" (failed: not
 *       a 200; the first such is told on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <myhtml/api.h>

#include "rt.h"
#include "seo/errors.h"
#include "seo/util.h"

/* The saved pages carry no headers: every page gets this one, as the npm
 * reference does (bench/wappalyzer.js). */
static const seo_header PAGE_HEADERS[] = {{"content-type", "text/html"}};
/* Relative links resolve against it; the analyses never fetch it. */
static const char PAGE_URL[] = "https://bench.example/";

enum { AN_SEO, AN_SCHEMA, AN_TECH, AN_PARSE, AN_COUNT };
static const char *const AN_NAMES[AN_COUNT] = {"page-seo", "schema-markup", "tech-stack",
					       "html-parse"};
/* What analyse runs unless --only says otherwise. */
#define AN_DEFAULT ((1u << AN_SEO) | (1u << AN_SCHEMA) | (1u << AN_TECH))

static int die(const char *what)
{
	fprintf(stderr, "rt-bench: %s\n", what);
	return 1;
}

static double thread_cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank percentile `p` (0..100) of `v`, which it sorts. */
static double percentile(double *v, size_t n, double p)
{
	size_t k = (size_t)(p / 100.0 * n + 0.999999);

	qsort(v, n, sizeof(*v), cmp_double);
	return v[k == 0 ? 0 : k - 1];
}

/* Reads `path` whole, converted to UTF-8 as the fetcher does, onto `a`. */
static int load_page(const char *path, seo_arena *a, seo_fetch_result *res)
{
	FILE *f = fopen(path, "rb");
	char *raw = NULL, *utf8;
	size_t len = 0, cap = 0, n, out_len;

	if (f == NULL)
		return SEO_EIO;
	do {
		if (len == cap) {
			char *p = realloc(raw, cap = cap * 2 + 65536);

			if (p == NULL) {
				free(raw);
				fclose(f);
				return SEO_ENOMEM;
			}
			raw = p;
		}
		n = fread(raw + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	fclose(f);
	const char *cs = seo_charset_detect(raw, len, PAGE_HEADERS[0].value, a);
	int rc = cs == NULL ? SEO_ENOMEM : seo_to_utf8(raw, len, cs, a, &utf8, &out_len);

	free(raw);
	if (rc != 0)
		return rc;
	*res = (seo_fetch_result){.url = PAGE_URL, .final_url = PAGE_URL, .status = 200,
				 .headers = PAGE_HEADERS, .n_headers = 1, .body = utf8,
				 .body_len = out_len, .charset = cs, .message = ""};
	return 0;
}

/* One html-parse run on `tree`, cleaned after; 0 or SEO_ENOMEM. */
static int parse_once(myhtml_tree_t *tree, const seo_fetch_result *res)
{
	mystatus_t st = myhtml_parse(tree, MyENCODING_UTF_8, res->body, res->body_len);

	myhtml_tree_clean(tree);
	return st == MyHTML_STATUS_OK ? 0 : SEO_ENOMEM;
}

/* One run of analysis `an` on `res`, its result freed; the CPU time in
 * microseconds, or < 0 on failure. Keeps tech-stack's result in *keep
 * when `keep` is not NULL. html-parse runs on `tree`. */
static double run_once(int an, const seo_fetch_result *res, const seo_tech_rules *rules,
		       myhtml_tree_t *tree, json_t **keep)
{
	rt_page page = {res->url, res->final_url, res->status, 0, res->body,
			res->body_len, res->headers, res->n_headers};
	double t0 = thread_cpu_us();
	seo_arena *a = NULL;
	json_t *out = NULL;
	int rc;

	if (an == AN_SEO) {
		rc = rt_page_seo(&page, &out);
	} else if (an == AN_SCHEMA) {
		rc = rt_schema_markup(&page, &out);
	} else if (an == AN_PARSE) {
		rc = parse_once(tree, res);
	} else {
		a = seo_arena_new(0);
		rc = a == NULL ? SEO_ENOMEM : rt_tech_stack("bench.example", res, rules, a, &out);
		seo_arena_free(a);
	}
	if (keep != NULL)
		*keep = json_incref(out);
	json_decref(out);
	double t = thread_cpu_us() - t0;

	return rc == 0 ? t : -1;
}

static int write_names(FILE *f, const char *path, const json_t *stack)
{
	const json_t *t;
	size_t i;

	fputs(path, f);
	json_array_foreach(json_object_get(stack, "technologies"), i, t)
		fprintf(f, "\t%s", json_string_value(json_object_get(t, "name")));
	return fputc('\n', f) == EOF ? -1 : 0;
}

static int cmd_analyse(int argc, char **argv)
{
	const char *names_path = NULL;
	unsigned run = AN_DEFAULT;
	long reps = 20;
	int i = 0;

	for (; i + 1 < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
		if (strcmp(argv[i], "--reps") == 0) {
			reps = strtol(argv[i + 1], NULL, 10);
		} else if (strcmp(argv[i], "--names") == 0) {
			names_path = argv[i + 1];
		} else if (strcmp(argv[i], "--only") == 0) {
			run = 0;
			for (int an = 0; an < AN_COUNT; an++)
				if (strcmp(argv[i + 1], AN_NAMES[an]) == 0)
					run = 1u << an;
			if (run == 0)
				return die("unknown analysis");
		} else {
			return die("unknown option");
		}
	}
	size_t n_pages = (size_t)(argc - i);
	if (n_pages == 0 || reps < 1)
		return die("usage: rt-bench analyse [--reps N] [--names FILE] [--only NAME] PAGE...");

	char path[4096], err[256] = "";
	seo_tech_rules *rules = NULL;
	if (seo_tech_rules_path(path, sizeof(path)) != 0 ||
	    seo_tech_rules_load(path, &rules, err, sizeof(err)) != 0) {
		fprintf(stderr, "rt-bench: tech rules: %s\n", err[0] ? err : "not found");
		return 1;
	}
	FILE *names = names_path != NULL ? fopen(names_path, "w") : NULL;
	double *med[AN_COUNT], *runs = malloc(reps * sizeof(*runs));
	int rc = (names_path != NULL && names == NULL) || runs == NULL;
	myhtml_t *mh = myhtml_create();
	myhtml_tree_t *tree = myhtml_tree_create();

	rc |= mh == NULL || tree == NULL ||
	      myhtml_init(mh, MyHTML_OPTIONS_PARSE_MODE_SINGLE, 1, 0) != MyHTML_STATUS_OK ||
	      myhtml_tree_init(tree, mh) != MyHTML_STATUS_OK;

	for (int an = 0; an < AN_COUNT; an++)
		rc |= (med[an] = malloc(n_pages * sizeof(double))) == NULL;
	for (size_t p = 0; p < n_pages && rc == 0; p++) {
		seo_arena *a = seo_arena_new(0);
		seo_fetch_result res;

		if (a == NULL || load_page(argv[i + p], a, &res) != 0) {
			fprintf(stderr, "rt-bench: cannot read %s\n", argv[i + p]);
			rc = 1;
		}
		for (int an = 0; an < AN_COUNT && rc == 0; an++) {
			json_t *stack = NULL;

			if (!(run & (1u << an)))
				continue;
			/* one untimed run warms the caches and gives the names */
			rc |= run_once(an, &res, rules, tree, &stack) < 0;
			if (an == AN_TECH && names != NULL && rc == 0)
				rc |= write_names(names, argv[i + p], stack);
			json_decref(stack);
			for (long r = 0; r < reps && rc == 0; r++)
				rc |= (runs[r] = run_once(an, &res, rules, tree, NULL)) < 0;
			if (rc == 0)
				med[an][p] = percentile(runs, reps, 50);
		}
		seo_arena_free(a);
	}
	if (names != NULL && fclose(names) != 0)
		rc = 1;
	for (int an = 0; an < AN_COUNT; an++) {
		if (rc == 0 && (run & (1u << an)))
			printf("%s\t%.1f\t%.1f\t%zu\n", AN_NAMES[an], percentile(med[an], n_pages, 50),
			       percentile(med[an], n_pages, 99), n_pages);
		free(med[an]);
	}
	free(runs);
	myhtml_tree_destroy(tree);
	myhtml_destroy(mh);
	seo_tech_rules_free(rules);
	return rc != 0 ? die("analysis failed") : 0;
}

struct load {
	struct event_base *base;
	seo_fetcher *f;
	const char *url;
	long left_to_start, left_to_finish, ok, failed;
	char why[256]; /* the first failure */
};

/* One fetch: its arena holds it and is freed when it ends. */
struct job {
	struct load *l;
	seo_arena *a;
};

static int fetch_next(struct load *l);

static void fetch_done(const seo_fetch_result *res, void *ud)
{
	struct job *j = ud;
	struct load *l = j->l;

	if (res->error == SEO_FETCH_OK && res->status == 200)
		l->ok++;
	else if (l->failed++ == 0)
		snprintf(l->why, sizeof(l->why), "status %ld: %s", res->status, res->message);
	seo_arena_free(j->a);
	if (--l->left_to_finish == 0)
		event_base_loopbreak(l->base);
	else if (l->left_to_start > 0 && fetch_next(l) != 0)
		event_base_loopbreak(l->base);
}

static int fetch_next(struct load *l)
{
	seo_arena *a = seo_arena_new(0);
	struct job *j = a != NULL ? seo_arena_alloc(a, sizeof(*j)) : NULL;

	if (j == NULL) {
		seo_arena_free(a);
		return SEO_ENOMEM;
	}
	*j = (struct job){l, a};
	if (seo_fetch_start(l->f, l->url, NULL, a, fetch_done, j) != 0) {
		seo_arena_free(a);
		return SEO_ENOMEM;
	}
	l->left_to_start--;
	return 0;
}

static int cmd_fetch(int argc, char **argv)
{
	if (argc != 3)
		return die("usage: rt-bench fetch URL COUNT CONCURRENCY");
	long count = strtol(argv[1], NULL, 10), conc = strtol(argv[2], NULL, 10);
	struct load l = {event_base_new(), NULL, argv[0], count, count, 0, 0, ""};

	if (count < 1 || conc < 1)
		return die("COUNT and CONCURRENCY must be positive");
	seo_fetch_config cfg;

	if (seo_fetch_config_from_env(&cfg) != 0)
		return die("out of memory");
	if (l.base == NULL || seo_fetcher_new(l.base, &cfg, &l.f) != 0)
		return die("cannot create the fetcher");
	int64_t t0 = seo_mono_us();
	int rc = 0;

	for (long i = 0; i < conc && i < count && rc == 0; i++)
		rc = fetch_next(&l);
	if (rc == 0)
		event_base_dispatch(l.base);
	double wall = (seo_mono_us() - t0) / 1e6;

	seo_fetcher_free(l.f);
	seo_fetch_config_clear(&cfg);
	event_base_free(l.base);
	if (rc != 0 || l.left_to_finish != 0)
		return die("fetching stopped early");
	printf("%.0f\t%ld\t%ld\t%.3f\n", l.ok / wall, l.ok, l.failed, wall);
	if (l.failed > 0)
		fprintf(stderr, "rt-bench: %ld fetches failed, the first with %s\n", l.failed, l.why);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "analyse") == 0)
		return cmd_analyse(argc - 2, argv + 2);
	if (argc >= 2 && strcmp(argv[1], "fetch") == 0)
		return cmd_fetch(argc - 2, argv + 2);
	return die("usage: rt-bench analyse|fetch ...");
}
