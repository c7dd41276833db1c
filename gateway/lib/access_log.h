/*
 * access_log.h: the gateway's access-log line, one JSON object per answered
 * request, written without printf or a jansson tree. Internal to gw.
 */
#ifndef GW_ACCESS_LOG_H
#define GW_ACCESS_LOG_H

#include "seo/json_write.h"

/* What one line says; the strings are the caller's. */
typedef struct gw_access {
	long long ts_ms;
	const char *request_id, *method, *path, *route; /* not NULL */
	int status;
	long long duration_us;
	long long bytes;
	long long credits;
	const char *workspace_id, *key_id; /* NULL: written as null */
} gw_access;

/*
 * Writes the line of `a` into `w` (after what it holds, without a newline):
 * {"ts":..,"request_id":..,"method":..,"path":..,"route":..,"status":..,
 * "duration_ms":..,"bytes":..,"credits":..,"workspace_id":..,"key_id":..},
 * duration_ms a real as jansson writes it, bytes of a string that are no
 * UTF-8 as U+FFFD. A failed allocation shows in w->failed.
 */
void gw__access_line(seo_jw *w, const gw_access *a);

#endif
