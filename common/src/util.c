#include "seo/util.h"
#include "seo/errors.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

int64_t seo_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t seo_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t seo_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static const char hex[] = "0123456789abcdef";

static void to_hex(const unsigned char *in, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hex[in[i] >> 4];
		out[2 * i + 1] = hex[in[i] & 15];
	}
	out[2 * n] = '\0';
}

void seo_fmt_hex(char *out, size_t digits, uint64_t v)
{
	while (digits-- > 0) {
		out[digits] = hex[v & 15];
		v >>= 4;
	}
}

void seo_fmt_id(char *out, const char *prefix, size_t plen, uint64_t v)
{
	memcpy(out, prefix, plen);
	seo_fmt_hex(out + plen, SEO_FMT_ID_DIGITS, v);
	out[plen + SEO_FMT_ID_DIGITS] = '\0';
}

/* OpenSSL 3 looks an algorithm up by name at every SHA256() call (a
 * tenth of the gateway's key check); fetched once, it is not. */
static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void sha256_fetch(void)
{
	sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

void seo_sha256_hex(const void *data, size_t len, char out[65])
{
	unsigned char md[SHA256_DIGEST_LENGTH];

	pthread_once(&sha256_once, sha256_fetch);
	if (sha256_md == NULL ||
	    EVP_Digest(data, len, md, NULL, sha256_md, NULL) != 1)
		SHA256(data, len, md);
	to_hex(md, sizeof(md), out);
}

void seo_hmac_sha256_hex(const void *key, size_t keylen, const void *data,
			 size_t len, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;

	HMAC(EVP_sha256(), key, (int)keylen, data, len, md, &mdlen);
	to_hex(md, mdlen, out);
}

int seo_secure_streq(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char diff = la != lb;

	for (size_t i = 0; i < la && i < lb; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return diff == 0;
}

int seo_random_string(char *out, size_t n, const char *alphabet)
{
	size_t alen = strlen(alphabet);
	/* Rejection sampling keeps the draw uniform for any alphabet size. */
	unsigned limit = 256 - (256 % (unsigned)alen);
	size_t filled = 0;
	unsigned char buf[64];

	while (filled < n) {
		if (RAND_bytes(buf, sizeof(buf)) != 1)
			return SEO_EIO;
		for (size_t i = 0; i < sizeof(buf) && filled < n; i++)
			if (buf[i] < limit)
				out[filled++] = alphabet[buf[i] % alen];
	}
	out[n] = '\0';
	return 0;
}

int seo_data_path(const char *configured, const char *const *beside_exe,
		  char *out, size_t n)
{
	char exe[PATH_MAX];
	ssize_t len;
	char *slash;

	if (configured != NULL && configured[0] != '\0')
		return (size_t)snprintf(out, n, "%s", configured) < n
			       ? 0 : SEO_ETOOBIG;
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len < 0)
		return SEO_ENOTFOUND;
	exe[len] = '\0';
	if ((slash = strrchr(exe, '/')) != NULL)
		*slash = '\0';
	for (; *beside_exe != NULL; beside_exe++)
		if ((size_t)snprintf(out, n, "%s/%s", exe, *beside_exe) < n &&
		    access(out, R_OK) == 0)
			return 0;
	return SEO_ENOTFOUND;
}
