/*
 * seo/json_text.h: JSON values to text, all or nothing.
 *
 * jansson's json_dumps() ignores a failed write of an object key: when its
 * buffer cannot grow there, it goes on and returns a text with the key's
 * bytes missing (jansson 2.14, dump.c), which a client would get as a
 * malformed answer. seo_json_dumps() measures the text first and writes it
 * into one buffer of that size, where no write can fail.
 */
#ifndef SEO_JSON_TEXT_H
#define SEO_JSON_TEXT_H

#include <stddef.h>

#include <jansson.h>

/*
 * The text of `v` as json_dumps(v, flags) writes it, NUL-terminated, in
 * malloc()ed memory the caller frees; its length (without the NUL) in *len
 * when `len` is not NULL. Returns NULL when out of memory, or when
 * json_dumps() would (a value other than an array or object without
 * JSON_ENCODE_ANY).
 */
char *seo_json_dumps(const json_t *v, size_t flags, size_t *len);

#endif
