#include "seo/json_text.h"

#include <stdlib.h>

char *seo_json_dumps(const json_t *v, size_t flags, size_t *len)
{
	/* every value has at least one byte of text: 0 is a failure */
	size_t n = json_dumpb(v, NULL, 0, flags);
	char *text;

	if (n == 0 || (text = malloc(n + 1)) == NULL)
		return NULL;
	if (json_dumpb(v, text, n, flags) != n) {
		free(text);
		return NULL;
	}
	text[n] = '\0';
	if (len != NULL)
		*len = n;
	return text;
}
