/*
 * fuzz_url.c: rt_url_parse(), rt_url_resolve() against a fixed base, and
 * the address policy on literal IPs (never a DNS name: no network), plus
 * the SEO_FETCH_ALLOW_NETS and SEO_FETCH_CONNECT_TO parsers and the
 * domain normaliser (seo/domain.h) on the same bytes.
 *
 * Invariants: a canonical href parses back to itself; an IPv4 host is a
 * dotted quad and a name is nothing inet_aton() would read as an address
 * (the policy relies on it); rt_addr_blocked() and rt_resolve_checked()
 * agree on a literal; a normalised domain is lowercase ASCII, stays the
 * same normalised again and is a host rt_url_parse() reads as a name.
 */
#include "fuzz.h"

#include "seo/domain.h"
#include "seo/errors.h"

#include <arpa/inet.h>
#include <netinet/in.h>

static void check_addr(const rt_url *u, const rt_netpolicy *policy)
{
	struct sockaddr_storage ss, got;
	int blocked, rc;

	memset(&ss, 0, sizeof(ss));
	if (u->host_kind == RT_HOST_V4) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		in->sin_family = AF_INET;
		FUZZ_CHECK(inet_pton(AF_INET, u->host, &in->sin_addr) == 1);
	} else if (u->host_kind == RT_HOST_V6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		in6->sin6_family = AF_INET6;
		FUZZ_CHECK(inet_pton(AF_INET6, u->host, &in6->sin6_addr) == 1);
	} else {
		struct in_addr in;

		FUZZ_CHECK(u->host_kind == RT_HOST_NAME);
		FUZZ_CHECK(inet_aton(u->host, &in) == 0);
		return;
	}
	blocked = rt_addr_blocked(policy, (struct sockaddr *)&ss);
	/* numeric hosts are not looked up: this stays off the network */
	rc = rt_resolve_checked(policy, u->host, u->port, &got);
	FUZZ_CHECK(rc == (blocked ? SEO_EDENIED : 0));
}

static void check_url(const rt_url *u, const rt_netpolicy *policy)
{
	seo_arena *a = seo_arena_new(0);
	rt_url again;

	FUZZ_CHECK(a != NULL);
	FUZZ_CHECK(u->href != NULL && u->host != NULL && u->path != NULL);
	FUZZ_CHECK(u->path[0] == '/');
	FUZZ_CHECK(rt_url_parse(u->href, a, &again) == 0);
	FUZZ_CHECK(strcmp(again.href, u->href) == 0);
	FUZZ_CHECK(again.host_kind == u->host_kind && again.port == u->port);
	check_addr(u, policy);
	seo_arena_free(a);
}

static void check_domain(const char *s, unsigned flags, seo_arena *a)
{
	char out[SEO_DOMAIN_MAX + 1], again[SEO_DOMAIN_MAX + 1];
	const char *url;
	rt_url u;
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
	FUZZ_CHECK(url != NULL && rt_url_parse(url, a, &u) == 0);
	FUZZ_CHECK(u.host_kind == RT_HOST_NAME && strcmp(u.host, out) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	seo_arena *a = seo_arena_new(0);
	rt_netpolicy policy;
	rt_connect_to ct[RT_MAX_CONNECT_TO];
	size_t n_ct;
	rt_url u;
	int rc;

	FUZZ_CHECK(a != NULL);
	rc = rt_url_parse(s, a, &u);
	FUZZ_CHECK(rc == 0 || rc == SEO_EINVAL);
	if (rc == 0)
		check_url(&u, NULL);
	rc = rt_url_resolve("https://example.com/dir/page?q=1", s, a, &u);
	FUZZ_CHECK(rc == 0 || rc == SEO_EINVAL);
	if (rc == 0)
		check_url(&u, NULL);
	/* the same bytes as an allow list: an exempted literal is never
	 * refused */
	if (rt_netpolicy_parse(s, &policy) == 0) {
		FUZZ_CHECK(policy.n <= RT_MAX_ALLOW_NETS);
		for (size_t i = 0; i < policy.n; i++) {
			struct sockaddr_storage ss;

			memset(&ss, 0, sizeof(ss));
			ss.ss_family = (sa_family_t)policy.nets[i].family;
			if (ss.ss_family == AF_INET)
				memcpy(&((struct sockaddr_in *)&ss)->sin_addr,
				       policy.nets[i].addr, 4);
			else
				memcpy(&((struct sockaddr_in6 *)&ss)->sin6_addr,
				       policy.nets[i].addr, 16);
			FUZZ_CHECK(!rt_addr_blocked(&policy, (struct sockaddr *)&ss));
		}
	}
	if (rt_connect_to_parse(s, ct, &n_ct) == 0)
		FUZZ_CHECK(n_ct <= RT_MAX_CONNECT_TO);
	check_domain(s, 0, a);
	check_domain(s, SEO_DOMAIN_STRIP_WWW, a);
	seo_arena_free(a);
	free(s);
	return 0;
}
