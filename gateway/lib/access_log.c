/*
 * access_log.c: the access-log line (see access_log.h). The members and
 * their order are the ones the line always had (json_pack() then).
 */
#include "access_log.h"

#include <string.h>

/* ,"name": */
static void key(seo_jw *w, const char *name)
{
	size_t n = strlen(name);

	if (seo_jw_reserve(w, n + 4) != 0)
		return;
	w->buf[w->len++] = ',';
	w->buf[w->len++] = '"';
	memcpy(w->buf + w->len, name, n);
	w->len += n;
	w->buf[w->len++] = '"';
	w->buf[w->len++] = ':';
}

static void string(seo_jw *w, const char *name, const char *s)
{
	key(w, name);
	if (s == NULL)
		seo_jw_raw(w, "null", 4);
	else
		seo_jw_string_lossy(w, s, strlen(s));
}

void gw__access_line(seo_jw *w, const gw_access *a)
{
	seo_jw_raw(w, "{\"ts\":", 6);
	seo_jw_int(w, a->ts_ms);
	string(w, "request_id", a->request_id);
	string(w, "method", a->method);
	string(w, "path", a->path);
	string(w, "route", a->route);
	key(w, "status");
	seo_jw_int(w, a->status);
	key(w, "duration_ms");
	seo_jw_real(w, (double)a->duration_us / 1000.0);
	key(w, "bytes");
	seo_jw_int(w, a->bytes);
	key(w, "credits");
	seo_jw_int(w, a->credits);
	string(w, "workspace_id", a->workspace_id);
	string(w, "key_id", a->key_id);
	seo_jw_char(w, '}');
}
