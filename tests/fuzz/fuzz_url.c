/*
 * fuzz_url.c: seo_url_parse(), seo_url_resolve() against a fixed base, and
 * the address policy on literal IPs (never a DNS name: no network), plus
 * the SEO_FETCH_ALLOW_NETS and SEO_FETCH_CONNECT_TO parsers and the
 * domain normaliser (seo/domain.h) on the same bytes.
 *
 * Invariants: a canonical href parses back to itself; an IPv4 host is a
 * dotted quad and a name is nothing inet_aton() would read as an address
 * (the policy relies on it); seo_addr_blocked() and seo_resolve_checked()
 * agree on a literal; a normalised domain is lowercase ASCII, stays the
 * same normalised again and is a host seo_url_parse() reads as a name.
 */
#include "fuzz.h"

#include "seo/domain.h"
#include "seo/errors.h"

#include <arpa/inet.h>
#include <netinet/in.h>

static void check_addr(const seo_url *u, const seo_fetch_config *policy)
{
	struct sockaddr_storage ss, got;
	int blocked, rc;

	memset(&ss, 0, sizeof(ss));
	if (u->host_kind == SEO_HOST_V4) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		in->sin_family = AF_INET;
		FUZZ_CHECK(inet_pton(AF_INET, u->host, &in->sin_addr) == 1);
	} else if (u->host_kind == SEO_HOST_V6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		in6->sin6_family = AF_INET6;
		FUZZ_CHECK(inet_pton(AF_INET6, u->host, &in6->sin6_addr) == 1);
	} else {
		struct in_addr in;

		FUZZ_CHECK(u->host_kind == SEO_HOST_NAME);
		FUZZ_CHECK(inet_aton(u->host, &in) == 0);
		return;
	}
	blocked = seo_addr_blocked(policy, (struct sockaddr *)&ss);
	/* numeric hosts are not looked up: this stays off the network */
	rc = seo_resolve_checked(policy, u->host, u->port, &got);
	FUZZ_CHECK(rc == (blocked ? SEO_EDENIED : 0));
}

static void check_url(const seo_url *u, const seo_fetch_config *policy)
{
	seo_arena *a = seo_arena_new(0);
	seo_url again;

	FUZZ_CHECK(a != NULL);
	FUZZ_CHECK(u->href != NULL && u->host != NULL && u->path != NULL);
	FUZZ_CHECK(u->path[0] == '/');
	FUZZ_CHECK(seo_url_parse(u->href, a, &again) == 0);
	FUZZ_CHECK(strcmp(again.href, u->href) == 0);
	FUZZ_CHECK(again.host_kind == u->host_kind && again.port == u->port);
	check_addr(u, policy);
	seo_arena_free(a);
}

static void check_domain(const char *s, unsigned flags, seo_arena *a)
{
	char out[SEO_DOMAIN_MAX + 1], again[SEO_DOMAIN_MAX + 1];
	const char *url;
	seo_url u;
	int rc = seo_domain_normalize(s, flags, out, sizeof(out));

	FUZZ_CHECK(rc == 0 || rc == SEO_EINVAL);
	if (rc != 0)
		return;
	for (const char *p = out; *p; p++)
		FUZZ_CHECK((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
			   *p == '-' || *p == '_' || *p == '.');
	/* in the site form ("www.www.x" loses one "www." in the graph's) */
	FUZZ_CHECK(seo_domain_normalize(out, 0, again, sizeof(again)) == 0);
	FUZZ_CHECK(strcmp(out, again) == 0);
	url = seo_arena_printf(a, "https://%s/", out);
	FUZZ_CHECK(url != NULL && seo_url_parse(url, a, &u) == 0);
	FUZZ_CHECK(u.host_kind == SEO_HOST_NAME && strcmp(u.host, out) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	seo_arena *a = seo_arena_new(0);
	seo_fetch_config policy = {0};
	seo_url u;
	int rc;

	FUZZ_CHECK(a != NULL);
	rc = seo_url_parse(s, a, &u);
	FUZZ_CHECK(rc == 0 || rc == SEO_EINVAL);
	if (rc == 0)
		check_url(&u, NULL);
	rc = seo_url_resolve("https://example.com/dir/page?q=1", s, a, &u);
	FUZZ_CHECK(rc == 0 || rc == SEO_EINVAL);
	if (rc == 0)
		check_url(&u, NULL);
	/* the same bytes as an allow list: an exempted literal is never
	 * refused */
	if (seo_fetch_parse_allow_nets(s, &policy.allow_nets, &policy.n_allow_nets) == 0) {
		for (size_t i = 0; i < policy.n_allow_nets; i++) {
			struct sockaddr_storage ss;

			memset(&ss, 0, sizeof(ss));
			ss.ss_family = (sa_family_t)policy.allow_nets[i].family;
			if (ss.ss_family == AF_INET)
				memcpy(&((struct sockaddr_in *)&ss)->sin_addr,
				       policy.allow_nets[i].addr, 4);
			else
				memcpy(&((struct sockaddr_in6 *)&ss)->sin6_addr,
				       policy.allow_nets[i].addr, 16);
			FUZZ_CHECK(!seo_addr_blocked(&policy, (struct sockaddr *)&ss));
		}
	}
	/* as a connect-to list: at most one entry per comma-separated field */
	if (seo_fetch_parse_connect_to(s, &policy.connect_to, &policy.n_connect_to) == 0) {
		size_t fields = 1;

		for (const char *c = s; *c; c++)
			fields += *c == ',';
		FUZZ_CHECK(policy.n_connect_to <= fields);
	}
	seo_fetch_config_clear(&policy);
	check_domain(s, 0, a);
	check_domain(s, SEO_DOMAIN_STRIP_WWW, a);
	seo_arena_free(a);
	free(s);
	return 0;
}
