/*
 * seo/clock.h: the one clock of periodic work (library seo_common).
 *
 * Jobs (seo/job.h) and their schedulers read time here, never from the
 * system directly, so that a test or an operator (`seoctl job run NAME
 * --at TIME`) can say which instant it is. Request handling keeps
 * seo_now_ms() (seo/util.h): a set clock changes what jobs see only.
 */
#ifndef SEO_CLOCK_H
#define SEO_CLOCK_H

#include <stdint.h>

/* The set instant (Unix milliseconds), else the system's wall clock.
 * Thread-safe. */
int64_t seo_clock_ms(void);

/* Makes seo_clock_ms() answer `ms` from now on, in every thread; 0 goes
 * back to the system's clock. */
void seo_clock_set_ms(int64_t ms);

#endif
