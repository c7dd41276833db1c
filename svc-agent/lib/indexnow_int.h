/*
 * indexnow_int.h: what IndexNow's own files share (indexnow.h is what the
 * other parts use): the keys' writes and the key-file check.
 */
#ifndef AGENT_INDEXNOW_INT_H
#define AGENT_INDEXNOW_INT_H

#include <stdint.h>

#include <libpq-fe.h>

#include "indexnow.h"

/* How long a confirmed key file is trusted. */
#define AGENT_INOW_VERIFIED_MS ((int64_t)24 * 3600 * 1000)

/*
 * The key of `host` in `workspace_id`, made now (32 lowercase hexadecimal
 * characters from the CSPRNG) when there is none; two concurrent calls
 * get the same one. *created is 1 when this call made it. Strings of *out
 * live on `a`. Returns 0, SEO_EDB, SEO_EIO (no randomness) or SEO_ENOMEM.
 */
int agent__inow_key_ensure(PGconn *pg, const char *workspace_id,
			   const char *host, int64_t now_ms, seo_arena *a,
			   agent_inow_key *out, int *created);

/* Remembers that the file of `key` was confirmed at `at_ms`; 0 or
 * SEO_EDB. */
int agent__inow_key_verified(PGconn *pg, const char *workspace_id,
			     const char *host, const char *key, int64_t at_ms);

/* Forgets the confirmation (the upstream rejected the key); 0 or
 * SEO_EDB. */
int agent__inow_key_forget(PGconn *pg, const char *workspace_id,
			   const char *host);

/*
 * Fetches `key_location` through the shared fetcher of `cfg` (https, no
 * redirect followed, 30 s, at most 4 KB) and says whether it is the key
 * file of `key`: HTTP 200 and the body, without a UTF-8 byte-order mark
 * and surrounding whitespace, equal to the key. Blocks. Returns 1 when it
 * is, 0 when it is not (`why`, `why_len` bytes, says why, for logs and
 * the client's message).
 */
int agent__inow_file_check(const seo_fetch_config *cfg,
			   const char *key_location, const char *key,
			   char *why, size_t why_len);

/* The key file's body as a fetch returned it (`len` bytes) is `key`. */
int agent__inow_file_matches(const char *body, size_t len, const char *key);

#endif
