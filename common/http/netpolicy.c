/*
 * netpolicy.c: the private-address policy and checked name resolution.
 *
 * The policy is applied to addresses, never to host text: resolvers and
 * libcurl accept many spellings of one address, so whatever getaddrinfo()
 * returns is what gets checked and later pinned.
 */
#include "seo/fetch.h"

#include "resolver.h"
#include "seo/errors.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <string.h>

/* IPv4 networks no fetch may reach (IANA special-purpose registry). */
static const struct {
	unsigned char net[4];
	unsigned bits;
} v4_blocked_nets[] = {
	{{0, 0, 0, 0}, 8},        /* "this network" */
	{{10, 0, 0, 0}, 8},       /* private */
	{{100, 64, 0, 0}, 10},    /* CGNAT; also cloud metadata 100.100.100.200 */
	{{127, 0, 0, 0}, 8},      /* loopback */
	{{169, 254, 0, 0}, 16},   /* link-local; metadata 169.254.169.254 */
	{{172, 16, 0, 0}, 12},    /* private */
	{{192, 0, 0, 0}, 24},     /* protocol assignments; metadata 192.0.0.192 */
	{{192, 0, 2, 0}, 24},     /* documentation */
	{{192, 31, 196, 0}, 24},  /* AS112 */
	{{192, 52, 193, 0}, 24},  /* AMT */
	{{192, 88, 99, 0}, 24},   /* 6to4 relay anycast */
	{{192, 168, 0, 0}, 16},   /* private */
	{{192, 175, 48, 0}, 24},  /* direct delegation AS112 */
	{{198, 18, 0, 0}, 15},    /* benchmarking */
	{{198, 51, 100, 0}, 24},  /* documentation */
	{{203, 0, 113, 0}, 24},   /* documentation */
	{{224, 0, 0, 0}, 4},      /* multicast */
	{{240, 0, 0, 0}, 4},      /* reserved and broadcast */
};

static int v4_blocked(const unsigned char *a)
{
	for (size_t i = 0; i < sizeof(v4_blocked_nets) / sizeof(v4_blocked_nets[0]); i++)
		if (seo_prefix_match(a, v4_blocked_nets[i].net, v4_blocked_nets[i].bits))
			return 1;
	return 0;
}

static int v6_blocked(const unsigned char *a)
{
	/* full 16 bytes: seo_prefix_match() reads the byte holding the last
	 * partial bits */
	static const unsigned char nat64[16] = {0, 0x64, 0xff, 0x9b};
	static const unsigned char doc[16] = {0x20, 0x01, 0x0d, 0xb8};
	static const unsigned char doc2[16] = {0x3f, 0xff};
	static const unsigned char ietf[16] = {0x20, 0x01};

	/* NAT64 reaches whatever IPv4 address it wraps. */
	if (memcmp(a, nat64, 12) == 0)
		return v4_blocked(a + 12);
	/* Only global unicast is fetchable: this refuses ::, ::1, mapped,
	 * compatible and translated IPv4, discard-only, ULA, link-local,
	 * site-local and multicast in one test. */
	if ((a[0] & 0xe0) != 0x20)
		return 1;
	if (seo_prefix_match(a, ietf, 23) || seo_prefix_match(a, doc, 32) ||
	    seo_prefix_match(a, doc2, 20))
		return 1; /* Teredo, ORCHID, benchmarking; documentation */
	if (a[0] == 0x20 && a[1] == 0x02)
		return v4_blocked(a + 2); /* 6to4 wraps an IPv4 address */
	return 0;
}

static int policy_allows(const seo_fetch_config *c, int family,
			 const unsigned char *addr)
{
	return c != NULL &&
	       seo_cidr_match(c->allow_nets, c->n_allow_nets, family, addr);
}

int seo_addr_blocked(const seo_fetch_config *cfg, const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		const unsigned char *a = (const unsigned char *)&((const struct sockaddr_in *)sa)->sin_addr;

		return v4_blocked(a) && !policy_allows(cfg, AF_INET, a);
	}
	if (sa->sa_family == AF_INET6) {
		const unsigned char *a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;

		return v6_blocked(a) && !policy_allows(cfg, AF_INET6, a);
	}
	return 1;
}

int (*seo__getaddrinfo)(const char *node, const char *service,
			const struct addrinfo *hints,
			struct addrinfo **res) = getaddrinfo;

int seo__addrs_checked(const seo_fetch_config *cfg, const struct addrinfo *res,
		       unsigned short port, struct sockaddr_storage *out)
{
	for (const struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next)
		if (seo_addr_blocked(cfg, ai->ai_addr))
			return SEO_EDENIED;
	memset(out, 0, sizeof(*out));
	memcpy(out, res->ai_addr, res->ai_addrlen);
	if (out->ss_family == AF_INET)
		((struct sockaddr_in *)out)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)out)->sin6_port = htons(port);
	return 0;
}

int seo_resolve_checked(const seo_fetch_config *cfg, const char *host,
			unsigned short port, struct sockaddr_storage *out)
{
	struct addrinfo hints, *res = NULL;
	unsigned char probe[16];
	int rc = SEO_EIO;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (inet_pton(AF_INET, host, probe) == 1 || inet_pton(AF_INET6, host, probe) == 1)
		hints.ai_flags = AI_NUMERICHOST;
	if (seo__getaddrinfo(host, NULL, &hints, &res) == 0 && res != NULL)
		rc = seo__addrs_checked(cfg, res, port, out);
	if (res != NULL)
		freeaddrinfo(res);
	return rc;
}
