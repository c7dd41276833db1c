/* route_names.c: the public names of the route stages' kinds
 * (gw_routes.h), shared by the OpenAPI document and the metrics. */
#include "gw_routes.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* names[v], or "" past the table. */
static const char *name_of(const char *const *names, size_t n, unsigned v)
{
	return v < n && names[v] != NULL ? names[v] : "";
}

const char *gw_bill_name(gw_bill kind)
{
	static const char *const names[] = {
		[GW_BILL_FREE] = "free",
		[GW_BILL_FIXED] = "fixed",
		[GW_BILL_PER_ITEM] = "per_item",
		[GW_BILL_AFTER] = "after_success",
	};
	return name_of(names, N(names), kind);
}

const char *gw_key_name(gw_key key)
{
	static const char *const names[] = {
		[GW_KEY_REQUIRED] = "required",
		[GW_KEY_OPTIONAL] = "optional",
		[GW_KEY_NONE] = "none",
	};
	return name_of(names, N(names), key);
}

const char *gw_quota_name(gw_quota quota)
{
	static const char *const names[] = {
		[GW_QUOTA_KEY] = "key",
		[GW_QUOTA_IP] = "ip",
		[GW_QUOTA_NONE] = "none",
	};
	return name_of(names, N(names), quota);
}

const char *gw_output_name(gw_output kind)
{
	static const char *const names[] = {
		[GW_OUT_JSON] = "json",
		[GW_OUT_BYTES] = "bytes",
	};
	return name_of(names, N(names), kind);
}
