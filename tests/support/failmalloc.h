/*
 * failmalloc.h: makes the Nth allocation fail (nghttp2's failmalloc idea),
 * for the unit tests that check a layer's out-of-memory paths.
 *
 * A test executable linked with the object library seo_test_failmalloc
 * (tests/support/CMakeLists.txt) has its malloc, calloc, realloc, strdup
 * and strndup calls, and those of every static library it links (ours),
 * routed through here by the linker's --wrap. Allocations made inside
 * shared libraries are not seen, except where our code hands the library
 * an allocator of its own: jansson's after seo_json_init()
 * (seo/json_text.h), nghttp2's in common/rpc (rpc__mem()).
 *
 * The counter is atomic: allocations of other threads count too, so a run
 * is deterministic only when the code under test allocates on one thread.
 */
#ifndef SEO_TEST_FAILMALLOC_H
#define SEO_TEST_FAILMALLOC_H

#include <stddef.h>

/* Call first in main(). */
void failmalloc_init(void);

/*
 * Called by a run once its result is known: allocations failing after it
 * (in clean-up, which has no result to give) must not crash or leak, but
 * the run may still return 0.
 */
void failmalloc_settle(void);

/*
 * Counted allocators for a library that absorbs some of its own allocation
 * failures (libevent: event_base_new() goes on without its notification
 * pipe, bufferevent_socket_new() ignores a callback it could not add): when
 * one of these fails, the run must still neither crash, hang nor leak, but
 * it may succeed. free() is the C library's.
 */
void *failmalloc_lenient_malloc(size_t size);
void *failmalloc_lenient_realloc(void *ptr, size_t size);

/*
 * Runs `run(ud)` with allocation 1 failing, then 2, and so on, until a run
 * ends before reaching the failing allocation; at most `max_runs` runs. A
 * run returns 0 on success or a negative code. Asserts (CUnit) that every
 * run whose allocation failed before it settled returned a negative code
 * (printing the failed allocation's stack when not), unless it was a
 * lenient one and that the last,
 * unfailed run returned 0. Returns the number of allocations the unfailed
 * run made (the runs were one more), or -1 when `max_runs` was reached.
 */
long failmalloc_loop(const char *what, int (*run)(void *ud), void *ud,
		     long max_runs);

#endif
