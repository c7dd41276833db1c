#include "seo/log.h"
#include "seo/config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "seo/json_text.h"

int seo_log_min_level = SEO_LOG_INFO;

static const char *log_component = "seo";

static const char *const level_names[] = {"debug", "info", "warn", "error"};

int seo_log_level_parse(const char *name)
{
	for (int i = 0; i < 4; i++)
		if (name != NULL && strcmp(name, level_names[i]) == 0)
			return i;
	return -1;
}

void seo_log_init(const char *component)
{
	log_component = component;
	seo_log_min_level = (int)seo_config_num(SEO_CFG_LOG_LEVEL);
}

void seo_log_raw_line(const char *json_line)
{
	/* One fputs per line keeps lines whole when threads log at once. */
	size_t n = strlen(json_line);
	char stackbuf[2048];
	char *buf = n + 2 <= sizeof(stackbuf) ? stackbuf : malloc(n + 2);

	if (buf == NULL)
		return;
	memcpy(buf, json_line, n);
	buf[n] = '\n';
	buf[n + 1] = '\0';
	fputs(buf, stderr);
	if (buf != stackbuf)
		free(buf);
}

void seo__log_write(int level, const char *file, int line, const char *fmt, ...)
{
	char msg[1024];
	char ts[64];
	char src[256];
	struct timespec now;
	struct tm tm;
	va_list ap;
	json_t *obj;
	char *text;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min, tm.tm_sec, now.tv_nsec / 1000000);

	snprintf(src, sizeof(src), "%s:%d", file, line);
	obj = json_pack("{s:s, s:s, s:s, s:s, s:s}", "ts", ts, "level",
			level_names[level < 0 || level > 3 ? 1 : level],
			"component", log_component, "msg", msg, "src", src);
	if (obj == NULL)
		return;
	text = seo_json_dumps(obj, JSON_COMPACT, NULL);
	json_decref(obj);
	if (text == NULL)
		return;
	seo_log_raw_line(text);
	free(text);
}
