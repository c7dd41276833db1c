/*
 * The settable clock of periodic work (seo/clock.h).
 */
#include "seo/clock.h"

#include <stdatomic.h>

#include "seo/util.h"

static atomic_int_least64_t set_ms;

int64_t seo_clock_ms(void)
{
	int64_t ms = atomic_load(&set_ms);

	return ms != 0 ? ms : seo_now_ms();
}

void seo_clock_set_ms(int64_t ms)
{
	atomic_store(&set_ms, ms);
}
