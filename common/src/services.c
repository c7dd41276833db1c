/* The service registry as a table (seo/services.h). */
#include "seo/services.h"

#include "seo/errors.h"

#include <string.h>

/* `calls` is a 32-bit mask of services. */
_Static_assert(SEO__SVC_COUNT <= 32, "too many services for the calls mask");

static const seo_service_def table[SEO__SVC_COUNT] = {
#define SEO_SERVICE(id, name, port, calls, summary) \
	[SEO_SVC_##id] = {name, "svc-" name, SEO_CFG_##id##_ADDR, port, calls, summary},
#include "services.def"
#undef SEO_SERVICE
};

const seo_service_def *seo_service_get(seo_service svc)
{
	return &table[svc];
}

int seo_service_find(const char *name, seo_service *out)
{
	for (int i = 0; i < SEO__SVC_COUNT; i++) {
		if (strcmp(name, table[i].name) == 0 ||
		    strcmp(name, table[i].process) == 0) {
			*out = (seo_service)i;
			return 0;
		}
	}
	return SEO_ENOTFOUND;
}

const char *seo_service_addr(seo_service svc)
{
	return seo_config(table[svc].addr_key);
}

int seo_service_may_call(seo_service from, seo_service to)
{
	return (table[from].calls & (1u << to)) != 0;
}
