/*
 * seo/arena.h: a bump allocator, one per request or RPC.
 *
 * Everything allocated from an arena is freed at once by seo_arena_free();
 * individual frees are no-ops. Not thread-safe: an arena belongs to the one
 * request that created it.
 */
#ifndef SEO_ARENA_H
#define SEO_ARENA_H

#include <stdarg.h>
#include <stddef.h>

#include <protobuf-c/protobuf-c.h>

typedef struct seo_arena seo_arena;

/* Returns a new arena whose first block holds `hint` bytes (0: a default),
 * or NULL when out of memory. The caller frees it with seo_arena_free(). */
seo_arena *seo_arena_new(size_t hint);

/* Frees the arena and everything allocated from it. NULL is allowed. */
void seo_arena_free(seo_arena *a);

/* Returns `n` bytes aligned for any type, owned by the arena, or NULL when
 * out of memory. */
void *seo_arena_alloc(seo_arena *a, size_t n);

/* Like seo_arena_alloc() but zero-filled. */
void *seo_arena_calloc(seo_arena *a, size_t n);

/* Copies `s` (NUL-terminated) or the first `n` bytes of `s` into the arena,
 * NUL-terminated. NULL when out of memory. */
char *seo_arena_strdup(seo_arena *a, const char *s);
char *seo_arena_strndup(seo_arena *a, const char *s, size_t n);

/* printf into the arena. NULL when out of memory. */
char *seo_arena_printf(seo_arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
char *seo_arena_vprintf(seo_arena *a, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/* Bytes handed out so far (for tests and metrics). */
size_t seo_arena_used(const seo_arena *a);

/*
 * Fills `out` with a protobuf-c allocator drawing from `a`; its free is a
 * no-op, so protobuf_c_message_free_unpacked() need not be called on
 * messages unpacked with it. `out` must not outlive `a`.
 */
void seo_arena_pb_allocator(seo_arena *a, ProtobufCAllocator *out);

#endif
