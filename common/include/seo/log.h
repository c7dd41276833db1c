/*
 * seo/log.h: leveled logging, one JSON object per line on stderr.
 *
 * The level is tested before any formatting, so a disabled debug line costs
 * one comparison. Messages follow PostgreSQL's style: lowercase, no final
 * period.
 */
#ifndef SEO_LOG_H
#define SEO_LOG_H

enum seo_log_level {
	SEO_LOG_DEBUG = 0,
	SEO_LOG_INFO = 1,
	SEO_LOG_WARN = 2,
	SEO_LOG_ERROR = 3,
};

extern int seo_log_min_level;

/*
 * Sets the component name written on every line and the level from
 * SEO_LOG_LEVEL as seo/config.h parsed it (debug, info, warn, error;
 * default info). `component` must
 * outlive the process (a string literal).
 */
void seo_log_init(const char *component);

/* Returns the level named `name`, or -1 when the name is unknown. */
int seo_log_level_parse(const char *name);

void seo__log_write(int level, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Writes an already-built JSON object as its own line (access logs). */
void seo_log_raw_line(const char *json_line);

#define SEO_LOG(lvl, ...)                                                     \
	do {                                                                  \
		if ((lvl) >= seo_log_min_level)                               \
			seo__log_write((lvl), __FILE__, __LINE__, __VA_ARGS__); \
	} while (0)

#define log_debug(...) SEO_LOG(SEO_LOG_DEBUG, __VA_ARGS__)
#define log_info(...) SEO_LOG(SEO_LOG_INFO, __VA_ARGS__)
#define log_warn(...) SEO_LOG(SEO_LOG_WARN, __VA_ARGS__)
#define log_error(...) SEO_LOG(SEO_LOG_ERROR, __VA_ARGS__)

#endif
