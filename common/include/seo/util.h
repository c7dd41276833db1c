/*
 * seo/util.h: clocks, hashes and randomness used everywhere.
 */
#ifndef SEO_UTIL_H
#define SEO_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Wall-clock time in Unix milliseconds. */
int64_t seo_now_ms(void);

/* Monotonic time in milliseconds, for deadlines and latencies. */
int64_t seo_mono_ms(void);

/* Monotonic time in microseconds. */
int64_t seo_mono_us(void);

/* Writes the lowercase hex SHA-256 of `data` into `out` (65 bytes with the
 * NUL). */
void seo_sha256_hex(const void *data, size_t len, char out[65]);

/* Lowercase hex HMAC-SHA256 of `data` under `key` into `out` (65 bytes). */
void seo_hmac_sha256_hex(const void *key, size_t keylen, const void *data,
			 size_t len, char out[65]);

/* Writes the low `digits` hex digits of `v`, lowercase, most significant
 * first and zero-padded, to out[0..digits) (no NUL): ids and counters
 * written without printf. */
void seo_fmt_hex(char *out, size_t digits, uint64_t v);

/* The hex digits of the number in an id of seo_fmt_id(). */
#define SEO_FMT_ID_DIGITS 16

/* Writes the `plen` bytes of `prefix`, then `v` as SEO_FMT_ID_DIGITS hex
 * digits (seo_fmt_hex()) and a NUL, to `out` (plen + SEO_FMT_ID_DIGITS +
 * 1 bytes): the form of the gateway's request ids and of its calls'
 * idempotency keys, which svc-account rebuilds from a report's columns. */
void seo_fmt_id(char *out, const char *prefix, size_t plen, uint64_t v);

/* Constant-time comparison of two NUL-terminated strings; 1 when equal. */
int seo_secure_streq(const char *a, const char *b);

/*
 * Fills `out` with `n` characters drawn uniformly from `alphabet` using the
 * OpenSSL CSPRNG, then a NUL (`out` holds n + 1 bytes). Returns 0, or
 * SEO_EIO when the generator fails.
 */
int seo_random_string(char *out, size_t n, const char *alphabet);

/*
 * Where a data file or directory the process reads is: `configured` (a
 * configuration value) when not empty, else the first of the
 * NULL-terminated `beside_exe`, paths relative to the running executable's
 * directory, that exists. Writes it to `out` (`n` bytes). Returns 0,
 * SEO_ETOOBIG when it does not fit, SEO_ENOTFOUND when none exists.
 */
int seo_data_path(const char *configured, const char *const *beside_exe,
		  char *out, size_t n);

/* Alphabets for seo_random_string(). */
#define SEO_ALPHANUM "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
#define SEO_URLSAFE SEO_ALPHANUM "-_"

#endif
