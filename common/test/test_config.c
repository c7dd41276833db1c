/*
 * test_config.c: the configuration table and one parser per kind
 * (seo/config.h): what each accepts, the words of each refusal, lists of
 * any length, and a load that replaces nothing when one value is bad.
 */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "seo/config.h"
#include "seo/errors.h"

static seo_cfg_error err;
static seo_cfg_value val;

/* Parses `text` as row `key`; the return code (val holds the result). */
static int parse(seo_cfg key, const char *text)
{
	seo_cfg_value_clear(&val);
	memset(&err, 0, sizeof(err));
	return seo_cfg_parse(seo_config_def(key), text, &val, &err);
}

/* Whether `text` is refused as `key` with exactly `message`. */
static int refused(seo_cfg key, const char *text, const char *message)
{
	if (parse(key, text) != SEO_EINVAL)
		return 0;
	if (strcmp(err.message, message) != 0) {
		fprintf(stderr, "\n  got  %s\n  want %s\n", err.message, message);
		return 0;
	}
	return 1;
}

static void test_defaults_parse(void)
{
	for (int k = 0; k < SEO__CFG_COUNT; k++) {
		const seo_cfg_def *d = seo_config_def((seo_cfg)k);

		CU_ASSERT_PTR_NOT_NULL_FATAL(d->name);
		CU_ASSERT(strncmp(d->name, "SEO_", 4) == 0);
		CU_ASSERT(d->meaning != NULL && d->meaning[0] != '\0');
		CU_ASSERT_EQUAL(parse((seo_cfg)k, NULL), 0);
		CU_ASSERT_STRING_EQUAL(val.text, d->dflt);
	}
	CU_ASSERT_EQUAL(parse(SEO_CFG_RPC_TIMEOUT_MS, ""), 0);
	CU_ASSERT_EQUAL(val.num, 30000);
}

static void test_numbers(void)
{
	CU_ASSERT_EQUAL(parse(SEO_CFG_RPC_TIMEOUT_MS, "2500"), 0);
	CU_ASSERT_EQUAL(val.num, 2500);
	CU_ASSERT(refused(SEO_CFG_RPC_TIMEOUT_MS, "abc",
			  "SEO_RPC_TIMEOUT_MS: \"abc\" is not a whole number of milliseconds"));
	CU_ASSERT(refused(SEO_CFG_RPC_TIMEOUT_MS, "10s",
			  "SEO_RPC_TIMEOUT_MS: \"10s\" is not a whole number of milliseconds"));
	CU_ASSERT(refused(SEO_CFG_RPC_TIMEOUT_MS, " 5",
			  "SEO_RPC_TIMEOUT_MS: \" 5\" is not a whole number of milliseconds"));
	CU_ASSERT(refused(SEO_CFG_RPC_TIMEOUT_MS, "0",
			  "SEO_RPC_TIMEOUT_MS: \"0\" is out of range: 1 to 3600000 milliseconds"));
	CU_ASSERT(refused(SEO_CFG_RPC_TIMEOUT_MS, "99999999999999999999",
			  "SEO_RPC_TIMEOUT_MS: \"99999999999999999999\" is out of range: "
			  "1 to 3600000 milliseconds"));
	CU_ASSERT_EQUAL(parse(SEO_CFG_RATE_LIMIT_PER_MIN, "0"), 0);
	CU_ASSERT_EQUAL(val.num, 0);
	CU_ASSERT(refused(SEO_CFG_RATE_LIMIT_PER_MIN, "-1",
			  "SEO_RATE_LIMIT_PER_MIN: \"-1\" is out of range: 0 to 1000000000 "
			  "requests per minute"));
	CU_ASSERT(refused(SEO_CFG_HTTP_BODY_LIMIT, "2M",
			  "SEO_HTTP_BODY_LIMIT: \"2M\" is not a whole number of bytes"));
}

static void test_words(void)
{
	CU_ASSERT_EQUAL(parse(SEO_CFG_CHALLENGE, "off"), 0);
	CU_ASSERT_EQUAL(val.num, 0);
	CU_ASSERT_EQUAL(parse(SEO_CFG_CHALLENGE, "on"), 0);
	CU_ASSERT_EQUAL(val.num, 1);
	CU_ASSERT(refused(SEO_CFG_CHALLENGE, "yes",
			  "SEO_CHALLENGE: \"yes\" is neither on nor off"));
	CU_ASSERT_EQUAL(parse(SEO_CFG_LOG_LEVEL, "warn"), 0);
	CU_ASSERT_EQUAL(val.num, 2);
	CU_ASSERT(refused(SEO_CFG_LOG_LEVEL, "INFO",
			  "SEO_LOG_LEVEL: \"INFO\" is not one of debug, info, warn, error"));
	CU_ASSERT_EQUAL(parse(SEO_CFG_DATA_DIR, "var/other graph"), 0);
	CU_ASSERT(refused(SEO_CFG_DATA_DIR, "a\tb",
			  "SEO_DATA_DIR: \"a?b\" contains a control character"));
	/* secrets are never repeated */
	CU_ASSERT(refused(SEO_CFG_PAYMENTS_KEY, "sk_live\r\nX-Evil: 1",
			  "SEO_PAYMENTS_KEY: the value contains a control character"));
	/* a secret with a minimum length: empty is allowed (unset) */
	CU_ASSERT(refused(SEO_CFG_INTERNAL_TOKEN, "fifteen-chars..",
			  "SEO_INTERNAL_TOKEN: the value is shorter than 16 characters"));
	CU_ASSERT_EQUAL(parse(SEO_CFG_INTERNAL_TOKEN, "sixteen-chars..."), 0);
	CU_ASSERT_EQUAL(parse(SEO_CFG_INTERNAL_TOKEN, ""), 0);
	CU_ASSERT_EQUAL(parse(SEO_CFG_MAIL_FROM, "billing@seo.test"), 0);
	CU_ASSERT(refused(SEO_CFG_MAIL_FROM, "Billing <b@seo.test>",
			  "SEO_MAIL_FROM: \"Billing <b@seo.test>\" is not an email address"));
	CU_ASSERT(refused(SEO_CFG_MAIL_FROM, "a@b@c",
			  "SEO_MAIL_FROM: \"a@b@c\" is not an email address"));
}

static void test_addresses(void)
{
	char host[64];
	unsigned short port;

	CU_ASSERT_EQUAL(parse(SEO_CFG_HTTP_ADDR, "0.0.0.0:80"), 0);
	CU_ASSERT_EQUAL(parse(SEO_CFG_HTTP_ADDR, "[::1]:8080"), 0);
	CU_ASSERT_EQUAL(parse(SEO_CFG_ACCOUNT_ADDR, "svc-account.internal:9101"), 0);
	CU_ASSERT(refused(SEO_CFG_HTTP_ADDR, "localhost",
			  "SEO_HTTP_ADDR: \"localhost\" is not a host:port address"));
	CU_ASSERT(refused(SEO_CFG_HTTP_ADDR, "::1:80",
			  "SEO_HTTP_ADDR: \"::1:80\" is not a host:port address"));
	CU_ASSERT(refused(SEO_CFG_GRAPH_ADDR, "127.0.0.1:65536",
			  "SEO_GRAPH_ADDR: \"127.0.0.1:65536\" is not a host:port address"));
	CU_ASSERT(refused(SEO_CFG_GRAPH_ADDR, "127.0.0.1:",
			  "SEO_GRAPH_ADDR: \"127.0.0.1:\" is not a host:port address"));
	CU_ASSERT_EQUAL(seo_split_hostport("[fe80::1]:443", host, sizeof(host), &port), 0);
	CU_ASSERT_STRING_EQUAL(host, "fe80::1");
	CU_ASSERT_EQUAL(port, 443);
	CU_ASSERT_EQUAL(seo_split_hostport("h:+1", host, sizeof(host), &port), SEO_EINVAL);
}

static void test_urls(void)
{
	CU_ASSERT_EQUAL(parse(SEO_CFG_PAGESPEED_URL, "http://127.0.0.1:9/psi"), 0);
	CU_ASSERT_EQUAL(parse(SEO_CFG_PAYMENTS_API_URL, "HTTPS://api.example"), 0);
	CU_ASSERT_EQUAL(parse(SEO_CFG_SMTP_URL, "smtp://127.0.0.1:2525"), 0);
	CU_ASSERT(refused(SEO_CFG_PAGESPEED_URL, "ftp://x",
			  "SEO_PAGESPEED_URL: \"ftp://x\" is not an http or https URL"));
	CU_ASSERT(refused(SEO_CFG_PAGESPEED_URL, "www.googleapis.com",
			  "SEO_PAGESPEED_URL: \"www.googleapis.com\" is not an http or https URL"));
	CU_ASSERT(refused(SEO_CFG_INDEXNOW_URL, "https:///path",
			  "SEO_INDEXNOW_URL: \"https:///path\" is not an http or https URL"));
	CU_ASSERT(refused(SEO_CFG_RDAP_URL, "https://a b",
			  "SEO_RDAP_URL: \"https://a b\" is not an http or https URL"));
	CU_ASSERT(refused(SEO_CFG_SMTP_URL, "http://mail",
			  "SEO_SMTP_URL: \"http://mail\" is not an smtp or smtps URL"));
	CU_ASSERT_EQUAL(parse(SEO_CFG_PG_URL, "postgresql://seo@127.0.0.1:5432/seo"), 0);
	CU_ASSERT_EQUAL(parse(SEO_CFG_PG_URL, "host=127.0.0.1 port=5432 password='a b\\'c'"), 0);
	CU_ASSERT(refused(SEO_CFG_PG_URL, "host=x password",
			  "SEO_PG_URL: the value is not a postgresql:// URL or a key=value "
			  "connection string"));
}

static void test_paths(void)
{
	char dir[] = "/tmp/seo-test-config-XXXXXX", file[64], want[160];
	FILE *f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/ca.pem", dir);
	f = fopen(file, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fclose(f);
	CU_ASSERT_EQUAL(parse(SEO_CFG_FETCH_CA_FILE, file), 0);
	CU_ASSERT_EQUAL(parse(SEO_CFG_MIGRATIONS_DIR, dir), 0);
	snprintf(want, sizeof(want), "SEO_HTTP_TLS_CERT: \"%s\" is not a readable file", dir);
	CU_ASSERT(refused(SEO_CFG_HTTP_TLS_CERT, dir, want));
	snprintf(want, sizeof(want), "SEO_MIGRATIONS_DIR: \"%s\" is not a directory", file);
	CU_ASSERT(refused(SEO_CFG_MIGRATIONS_DIR, file, want));
	unlink(file);
	snprintf(want, sizeof(want), "SEO_TECH_RULES: \"%s\" is not a readable file", file);
	CU_ASSERT(refused(SEO_CFG_TECH_RULES, file, want));
	rmdir(dir);
}

static void test_nets(void)
{
	const seo_cidr *c;

	CU_ASSERT_EQUAL(parse(SEO_CFG_FETCH_ALLOW_NETS, " 127.0.0.0/8 ,, ::1 ,10.1.2.3/32"), 0);
	CU_ASSERT_EQUAL_FATAL(val.n, 3);
	c = val.list;
	CU_ASSERT(c[0].family == AF_INET && c[0].bits == 8 && c[0].addr[0] == 127);
	CU_ASSERT(c[1].family == AF_INET6 && c[1].bits == 128 && c[1].addr[15] == 1);
	CU_ASSERT(c[2].family == AF_INET && c[2].bits == 32 && c[2].addr[3] == 3);
	CU_ASSERT_EQUAL(parse(SEO_CFG_FETCH_ALLOW_NETS, " , "), 0);
	CU_ASSERT(val.n == 0 && val.list == NULL);
	CU_ASSERT(refused(SEO_CFG_FETCH_ALLOW_NETS, "127.0.0.0/8,10.0.0.0/",
			  "SEO_FETCH_ALLOW_NETS: entry 2 \"10.0.0.0/\" is not an address or "
			  "a CIDR network"));
	CU_ASSERT(refused(SEO_CFG_FETCH_ALLOW_NETS, "127.0.0.0/33",
			  "SEO_FETCH_ALLOW_NETS: entry 1 \"127.0.0.0/33\" is not an address or "
			  "a CIDR network"));
	CU_ASSERT(refused(SEO_CFG_FETCH_ALLOW_NETS, "localhost",
			  "SEO_FETCH_ALLOW_NETS: entry 1 \"localhost\" is not an address or "
			  "a CIDR network"));
	CU_ASSERT(refused(SEO_CFG_FETCH_ALLOW_NETS, "::/-1",
			  "SEO_FETCH_ALLOW_NETS: entry 1 \"::/-1\" is not an address or "
			  "a CIDR network"));
}

static void test_connect_to(void)
{
	const seo_connect_to *e;
	char *big, *p;
	size_t i;

	CU_ASSERT_EQUAL(parse(SEO_CFG_FETCH_CONNECT_TO,
			      "Site.test:80:127.0.0.1:8080, ::[::1]:9000,:443::"), 0);
	CU_ASSERT_EQUAL_FATAL(val.n, 3);
	e = val.list;
	CU_ASSERT(strcmp(e[0].host, "site.test") == 0 && e[0].port == 80 &&
		  strcmp(e[0].connect_host, "127.0.0.1") == 0 && e[0].connect_port == 8080);
	CU_ASSERT(e[1].host[0] == '\0' && e[1].port == 0 &&
		  strcmp(e[1].connect_host, "::1") == 0 && e[1].connect_port == 9000);
	CU_ASSERT(e[2].port == 443 && e[2].connect_host[0] == '\0' && e[2].connect_port == 0);
	CU_ASSERT(refused(SEO_CFG_FETCH_CONNECT_TO, "a:80:b:1, a:80:b",
			  "SEO_FETCH_CONNECT_TO: entry 2 \"a:80:b\" is not "
			  "HOST:PORT:CONNECT_HOST:CONNECT_PORT"));
	CU_ASSERT(refused(SEO_CFG_FETCH_CONNECT_TO, "a:x:b:1",
			  "SEO_FETCH_CONNECT_TO: entry 1 \"a:x:b:1\" is not "
			  "HOST:PORT:CONNECT_HOST:CONNECT_PORT"));
	CU_ASSERT(refused(SEO_CFG_FETCH_CONNECT_TO, "a:80:b:70000",
			  "SEO_FETCH_CONNECT_TO: entry 1 \"a:80:b:70000\" is not "
			  "HOST:PORT:CONNECT_HOST:CONNECT_PORT"));
	CU_ASSERT(refused(SEO_CFG_FETCH_CONNECT_TO, "a b:80:c:1",
			  "SEO_FETCH_CONNECT_TO: entry 1 \"a b:80:c:1\" is not "
			  "HOST:PORT:CONNECT_HOST:CONNECT_PORT"));
	/* as many entries as given: 5000 here, the last one kept */
	big = malloc(5000 * 40);
	CU_ASSERT_PTR_NOT_NULL_FATAL(big);
	for (i = 0, p = big; i < 5000; i++)
		p += sprintf(p, "%sh%zu.test:80:127.0.0.1:%zu", i ? "," : "", i, 1000 + i);
	CU_ASSERT_EQUAL(parse(SEO_CFG_FETCH_CONNECT_TO, big), 0);
	CU_ASSERT_EQUAL_FATAL(val.n, 5000);
	e = val.list;
	CU_ASSERT(strcmp(e[4999].host, "h4999.test") == 0 && e[4999].connect_port == 5999);
	free(big);
}

static void test_load(void)
{
	const seo_connect_to *e;
	size_t n;

	unsetenv("SEO_RPC_TIMEOUT_MS");
	setenv("SEO_FETCH_CONNECT_TO", "a.test:80:127.0.0.1:81", 1);
	CU_ASSERT_EQUAL_FATAL(seo_config_load(&err), 0);
	CU_ASSERT_EQUAL(seo_config_num(SEO_CFG_RPC_TIMEOUT_MS), 30000);
	e = seo_config_connect_to(SEO_CFG_FETCH_CONNECT_TO, &n);
	CU_ASSERT(n == 1 && e != NULL && e[0].connect_port == 81);
	/* a bad value replaces nothing and names itself */
	setenv("SEO_RPC_TIMEOUT_MS", "abc", 1);
	setenv("SEO_FETCH_CONNECT_TO", "", 1);
	CU_ASSERT_EQUAL(seo_config_load(&err), SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.message,
			       "SEO_RPC_TIMEOUT_MS: \"abc\" is not a whole number of milliseconds");
	CU_ASSERT_EQUAL(seo_config_num(SEO_CFG_RPC_TIMEOUT_MS), 30000);
	CU_ASSERT_PTR_NOT_NULL(seo_config_connect_to(SEO_CFG_FETCH_CONNECT_TO, &n));
	CU_ASSERT_EQUAL(n, 1);
	unsetenv("SEO_RPC_TIMEOUT_MS");
	CU_ASSERT_EQUAL(seo_config_load(&err), 0);
	CU_ASSERT_PTR_NULL(seo_config_connect_to(SEO_CFG_FETCH_CONNECT_TO, &n));
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_PTR_NULL(seo_config_nets(SEO_CFG_FETCH_CONNECT_TO, &n));
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("config", NULL, NULL);
	CU_add_test(s, "every default parses", test_defaults_parse);
	CU_add_test(s, "numbers and durations", test_numbers);
	CU_add_test(s, "words, text, secrets, mailboxes", test_words);
	CU_add_test(s, "host:port addresses", test_addresses);
	CU_add_test(s, "URLs and connection strings", test_urls);
	CU_add_test(s, "files and directories", test_paths);
	CU_add_test(s, "CIDR lists", test_nets);
	CU_add_test(s, "connect-to lists of any length", test_connect_to);
	CU_add_test(s, "loading the environment", test_load);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	seo_cfg_value_clear(&val);
	CU_cleanup_registry();
	return failed != 0;
}
