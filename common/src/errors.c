#include "seo/errors.h"

#include <string.h>

/* Sorted by HTTP status, then code, as the specification's table reads. */
static const seo_error_def error_table[] = {
	{"invalid_parameter", 400, SEO_GRPC_INVALID_ARGUMENT, "a query parameter or body field is missing, of the wrong type or out of range"},
	{"invalid_json", 400, SEO_GRPC_INVALID_ARGUMENT, "the body is not valid JSON or not a JSON object"},
	{"invalid_domain", 400, SEO_GRPC_INVALID_ARGUMENT, "the domain is not a valid public domain name"},
	{"invalid_credits", 400, SEO_GRPC_INVALID_ARGUMENT, "checkout credits not an integer of at least 100"},
	{"invalid_signature", 400, SEO_GRPC_INVALID_ARGUMENT, "payment webhook signature missing or wrong"},
	{"invalid_proposal_input", 400, SEO_GRPC_INVALID_ARGUMENT, "unknown field, bad kind, bad status filter, invalid proposal input"},
	{"invalid_activity_input", 400, SEO_GRPC_INVALID_ARGUMENT, "missing or empty summary, unknown field, invalid site_id, kind_hint, object_refs or client_request_id"},
	{"invalid_task_summary", 400, SEO_GRPC_INVALID_ARGUMENT, "task summary missing, empty after cleaning, or not a string"},
	{"invalid_client_report_input", 400, SEO_GRPC_INVALID_ARGUMENT, "site_id missing, or week_start not a past Monday"},
	{"invalid_url", 400, SEO_GRPC_INVALID_ARGUMENT, "malformed, non-http(s), credentialed or fragment URL"},
	{"private_ip", 400, SEO_GRPC_INVALID_ARGUMENT, "host private, reserved or local"},
	{"missing_platform", 400, SEO_GRPC_INVALID_ARGUMENT, "platform-domains without platform"},
	{"unknown_platform", 400, SEO_GRPC_INVALID_ARGUMENT, "platform not supported"},
	{"indexnow_invalid_url", 400, SEO_GRPC_INVALID_ARGUMENT, "urls missing, empty or not valid public http(s) URLs"},
	{"indexnow_too_many_urls", 400, SEO_GRPC_INVALID_ARGUMENT, "more than 1000 URLs"},
	{"indexnow_host_mismatch", 400, SEO_GRPC_INVALID_ARGUMENT, "URLs do not share one host"},
	{"indexnow_host_not_a_website", 400, SEO_GRPC_INVALID_ARGUMENT, "host is not a workspace website or subdomain of one"},
	{"indexnow_key_not_found", 400, SEO_GRPC_FAILED_PRECONDITION, "no key for the host"},
	{"indexnow_key_not_verified", 400, SEO_GRPC_FAILED_PRECONDITION, "key file missing, not HTTP 200, or content differs"},
	{"indexnow_invalid_request", 400, SEO_GRPC_INVALID_ARGUMENT, "upstream rejected as malformed"},
	{"missing_seed", 400, SEO_GRPC_INVALID_ARGUMENT, "keyword-ideas without keywords and url"},
	{"missing_keywords", 400, SEO_GRPC_INVALID_ARGUMENT, "keyword-metrics without keywords"},
	{"invalid_language", 400, SEO_GRPC_INVALID_ARGUMENT, "language not languageConstants/<digits>"},
	{"invalid_geo_target", 400, SEO_GRPC_INVALID_ARGUMENT, "geo target not geoTargetConstants/<digits>"},
	{"ads_planner_not_connected", 400, SEO_GRPC_FAILED_PRECONDITION, "ads connection not made"},
	{"ads_planner_no_account_selected", 400, SEO_GRPC_FAILED_PRECONDITION, "no ads account selected"},
	{"ads_planner_invalid_request", 400, SEO_GRPC_INVALID_ARGUMENT, "upstream rejected the request"},
	{"invalid_input", 400, SEO_GRPC_INVALID_ARGUMENT, "free tool parameter missing or invalid"},
	{"invalid_dimensions", 400, SEO_GRPC_INVALID_ARGUMENT, "console search-analytics: no valid dimensions"},
	{"invalid_body", 400, SEO_GRPC_INVALID_ARGUMENT, "backlink-report body invalid"},
	{"invalid_email", 400, SEO_GRPC_INVALID_ARGUMENT, "backlink-report email invalid"},
	{"invalid_api_key", 401, SEO_GRPC_UNAUTHENTICATED, "missing, invalid or revoked key"},
	{"ads_planner_token_expired", 401, SEO_GRPC_UNAUTHENTICATED, "ads connection expired or revoked"},
	{"insufficient_credits", 402, SEO_GRPC_FAILED_PRECONDITION, "balance too low, nothing charged"},
	{"spend_cap_reached", 402, SEO_GRPC_FAILED_PRECONDITION, "monthly spend cap reached, nothing charged"},
	{"capability_missing", 403, SEO_GRPC_PERMISSION_DENIED, "role not allowed"},
	{"indexnow_key_rejected", 403, SEO_GRPC_PERMISSION_DENIED, "upstream rejected the key"},
	{"ads_planner_developer_token_not_approved", 403, SEO_GRPC_PERMISSION_DENIED, "service-side approval pending"},
	{"ads_planner_customer_not_enabled", 403, SEO_GRPC_PERMISSION_DENIED, "selected ads account inactive"},
	{"ads_planner_access_denied", 403, SEO_GRPC_PERMISSION_DENIED, "upstream denied"},
	{"challenge_failed", 403, SEO_GRPC_PERMISSION_DENIED, "free tool token missing or invalid"},
	{"not_found", 404, SEO_GRPC_NOT_FOUND, "no such route"},
	{"user_not_found", 404, SEO_GRPC_NOT_FOUND, "user missing or in another workspace"},
	{"key_not_found", 404, SEO_GRPC_NOT_FOUND, "key unknown, already revoked or another person's"},
	{"site_not_found", 404, SEO_GRPC_NOT_FOUND, "website missing or in another workspace"},
	{"proposal_not_found", 404, SEO_GRPC_NOT_FOUND, "proposal missing or in another workspace"},
	{"task_not_found", 404, SEO_GRPC_NOT_FOUND, "task missing or in another workspace"},
	{"ads_planner_account_not_found", 404, SEO_GRPC_NOT_FOUND, "ads account missing"},
	{"method_not_allowed", 405, SEO_GRPC_UNIMPLEMENTED, "the path exists but not with this method"},
	{"request_timeout", 408, SEO_GRPC_DEADLINE_EXCEEDED, "the request's headers and body did not arrive within its deadline"},
	{"task_not_claimable", 409, SEO_GRPC_ABORTED, "task done, expired, cancelled, or claimed by another key"},
	{"payload_too_large", 413, SEO_GRPC_RESOURCE_EXHAUSTED, "request body over the stated limit"},
	{"unsupported_media_type", 415, SEO_GRPC_INVALID_ARGUMENT, "body is not application/json"},
	{"indexnow_url_mismatch", 422, SEO_GRPC_FAILED_PRECONDITION, "upstream rejected URLs or key mismatch"},
	{"rate_limited", 429, SEO_GRPC_RESOURCE_EXHAUSTED, "more than the allowed requests per minute per key"},
	{"too_many_connections", 429, SEO_GRPC_RESOURCE_EXHAUSTED, "more open connections from one address than allowed"},
	{"indexnow_rate_limited", 429, SEO_GRPC_RESOURCE_EXHAUSTED, "upstream rate limit"},
	{"key_limit_reached", 429, SEO_GRPC_RESOURCE_EXHAUSTED, "the workspace already has 20 active api keys; revoke one first"},
	{"activity_limit_reached", 429, SEO_GRPC_RESOURCE_EXHAUSTED, "200 notes already logged that UTC day"},
	{"quota_exceeded", 429, SEO_GRPC_RESOURCE_EXHAUSTED, "daily quota exhausted"},
	{"user_quota_exceeded", 429, SEO_GRPC_RESOURCE_EXHAUSTED, "50 page-performance calls per person per day"},
	{"ads_planner_user_quota_exceeded", 429, SEO_GRPC_RESOURCE_EXHAUSTED, "ads per-user daily cap"},
	{"ads_planner_daily_quota_exceeded", 429, SEO_GRPC_RESOURCE_EXHAUSTED, "ads service-wide daily cap"},
	{"ads_planner_quota_exceeded", 429, SEO_GRPC_RESOURCE_EXHAUSTED, "ads upstream cap"},
	{"tools_quota_exceeded", 429, SEO_GRPC_RESOURCE_EXHAUSTED, "free page-speed shared budget used up"},
	{"email_quota_exceeded", 429, SEO_GRPC_RESOURCE_EXHAUSTED, "backlink-report limit per email"},
	{"ip_quota_exceeded", 429, SEO_GRPC_RESOURCE_EXHAUSTED, "backlink-report limit per IP"},
	{"internal_error", 500, SEO_GRPC_INTERNAL, "unexpected failure inside the service"},
	{"checkout_failed", 500, SEO_GRPC_INTERNAL, "checkout session not created"},
	{"tool_failed", 500, SEO_GRPC_INTERNAL, "free tool failed unexpectedly"},
	{"report_failed", 500, SEO_GRPC_INTERNAL, "report generation failed"},
	{"console_api_error", 502, SEO_GRPC_UNAVAILABLE, "upstream rejected the console request"},
	{"service_unavailable", 503, SEO_GRPC_UNAVAILABLE, "an internal service is down or past its deadline"},
	{"fetch_failed", 503, SEO_GRPC_UNAVAILABLE, "target page unreachable"},
	{"timeout", 503, SEO_GRPC_DEADLINE_EXCEEDED, "target page too slow"},
	{"response_too_large", 503, SEO_GRPC_RESOURCE_EXHAUSTED, "target page too large"},
	{"psi_unavailable", 503, SEO_GRPC_UNAVAILABLE, "upstream page-speed error, no charge"},
	{"indexnow_unavailable", 503, SEO_GRPC_UNAVAILABLE, "IndexNow unreachable or unexpected status"},
	{"query_timeout", 503, SEO_GRPC_UNAVAILABLE, "free tools data store timed out"},
	{"upstream_error", 503, SEO_GRPC_UNAVAILABLE, "free tools data store failed"},
	{"deterministic_timeout", 503, SEO_GRPC_UNAVAILABLE, "free tools query will not succeed on retry"},
};

#define N_ERRORS (sizeof(error_table) / sizeof(error_table[0]))

const seo_error_def *seo_error_lookup(const char *code)
{
	if (code == NULL)
		return NULL;
	for (unsigned i = 0; i < N_ERRORS; i++)
		if (strcmp(error_table[i].code, code) == 0)
			return &error_table[i];
	return NULL;
}

const seo_error_def *seo_error_table(unsigned *count)
{
	*count = N_ERRORS;
	return error_table;
}

const seo_error_def *seo_error_for_grpc(int grpc_status)
{
	const char *code;

	switch (grpc_status) {
	case SEO_GRPC_INVALID_ARGUMENT:
	case SEO_GRPC_OUT_OF_RANGE:
		code = "invalid_parameter";
		break;
	case SEO_GRPC_NOT_FOUND:
		code = "not_found";
		break;
	case SEO_GRPC_UNAUTHENTICATED:
		code = "invalid_api_key";
		break;
	case SEO_GRPC_PERMISSION_DENIED:
		code = "capability_missing";
		break;
	case SEO_GRPC_UNAVAILABLE:
	case SEO_GRPC_DEADLINE_EXCEEDED:
	case SEO_GRPC_CANCELLED:
	case SEO_GRPC_RESOURCE_EXHAUSTED:
		code = "service_unavailable";
		break;
	default:
		code = "internal_error";
		break;
	}
	return seo_error_lookup(code);
}

const char *seo_http_reason(int status)
{
	static const struct {
		int status;
		const char *reason;
	} reasons[] = {
		{200, "OK"}, {201, "Created"}, {202, "Accepted"}, {204, "No Content"},
		{301, "Moved Permanently"}, {302, "Found"}, {304, "Not Modified"},
		{400, "Bad Request"}, {401, "Unauthorized"}, {402, "Payment Required"},
		{403, "Forbidden"}, {404, "Not Found"}, {405, "Method Not Allowed"},
		{408, "Request Timeout"}, {409, "Conflict"}, {413, "Payload Too Large"},
		{414, "URI Too Long"}, {415, "Unsupported Media Type"},
		{422, "Unprocessable Entity"}, {429, "Too Many Requests"},
		{431, "Request Header Fields Too Large"},
		{500, "Internal Server Error"}, {501, "Not Implemented"},
		{502, "Bad Gateway"}, {503, "Service Unavailable"},
		{504, "Gateway Timeout"}, {505, "HTTP Version Not Supported"},
	};
	for (unsigned i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (reasons[i].status == status)
			return reasons[i].reason;
	return "Unknown";
}

const char *seo_grpc_status_name(int s)
{
	static const char *const names[] = {
		"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT",
		"DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
		"PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
		"ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL",
		"UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
	};
	if (s < 0 || s > 16)
		return "UNKNOWN";
	return names[s];
}

const char *seo_strerror(int err)
{
	switch (err) {
	case SEO_OK: return "success";
	case SEO_ENOMEM: return "out of memory";
	case SEO_EINVAL: return "invalid argument";
	case SEO_EIO: return "input/output error";
	case SEO_ENOTFOUND: return "not found";
	case SEO_EEXIST: return "already exists";
	case SEO_EDB: return "database error";
	case SEO_ETIMEDOUT: return "timed out";
	case SEO_ECLOSED: return "closed";
	case SEO_ETOOBIG: return "too large";
	case SEO_EDENIED: return "denied";
	case SEO_EUPSTREAM: return "upstream failure";
	default: return "unknown error";
	}
}
