/*
 * rules.c: the technology rule file reduced to what can show a platform,
 * for the WAT records' detection.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include <seo/errors.h>
#include <seo/log.h>
#include <seo/tech.h>

#include "ingest.h"

/* The name an implies entry gives ("WordPress\\;confidence:50"). */
static int implied_is(const char *entry, const json_t *techs)
{
	char name[256];
	size_t n = strcspn(entry, "\\");

	if (n >= sizeof(name))
		return 0;
	memcpy(name, entry, n);
	name[n] = '\0';
	return json_object_get(techs, name) != NULL;
}

/* Whether technology `def` implies one in `techs`; an implies entry is
 * one string or an array of them. */
static int implies_one(const json_t *def, const json_t *techs)
{
	const json_t *imp = json_object_get(def, "implies"), *e;
	size_t i;

	if (json_is_string(imp))
		return implied_is(json_string_value(imp), techs);
	json_array_foreach(imp, i, e)
		if (json_is_string(e) &&
		    implied_is(json_string_value(e), techs))
			return 1;
	return 0;
}

/*
 * The rule file reduced to what can show a platform: the platforms'
 * technologies and those implying one (WordPress.com implies WordPress),
 * their implies of anything else dropped. Detection of a platform is the
 * same as with the whole file, for a tenth of the patterns per record.
 */
int graph__platform_rules(seo_tech_rules **out)
{
	char path[4096], err[256];
	json_error_t jerr;
	json_t *root = NULL, *keep = json_object(), *sub = json_object();
	json_t *techs, *def, *e;
	const char *name;
	char *text = NULL;
	size_t i;
	int rc, grew = 1;

	if (!keep || !sub) {
		rc = SEO_ENOMEM;
		goto out;
	}
	rc = seo_tech_rules_path(path, sizeof(path));
	if (!rc && access(path, R_OK) != 0)
		rc = SEO_ENOTFOUND;
	if (rc) {
		log_error("no technology rule file for the platforms of the WAT "
			  "records (SEO_TECH_RULES, or data/tech/rules.json "
			  "beside the executable): %s", seo_strerror(rc));
		goto out;
	}
	root = json_load_file(path, 0, &jerr);
	techs = json_object_get(root, "technologies");
	if (!json_is_object(techs)) {
		log_error("cannot read the rule file \"%s\": %s", path,
			  root ? "no technologies" : jerr.text);
		rc = SEO_EINVAL;
		goto out;
	}
	json_object_foreach(techs, name, def)
		if (graph__platform_of_tech(name) >= 0)
			json_object_set(keep, name, def);
	if (json_object_size(keep) < GRAPH_PLATFORM_COUNT)
		log_warn("the rule file \"%s\" lacks %zu of the %d platforms",
			 path, GRAPH_PLATFORM_COUNT - json_object_size(keep),
			 GRAPH_PLATFORM_COUNT);
	while (grew) {
		grew = 0;
		json_object_foreach(techs, name, def)
			if (!json_object_get(keep, name) &&
			    implies_one(def, keep)) {
				json_object_set(keep, name, def);
				grew = 1;
			}
	}
	json_object_foreach(keep, name, def) {
		json_t *copy = json_copy(def), *imp = json_array();
		json_t *list = json_object_get(def, "implies");

		if (json_is_string(list) &&
		    implied_is(json_string_value(list), keep))
			json_array_append(imp, list);
		json_array_foreach(list, i, e)
			if (json_is_string(e) &&
			    implied_is(json_string_value(e), keep))
				json_array_append(imp, e);
		/* set_new takes its value, even when it fails */
		if (!copy)
			json_decref(imp);
		rc = !copy || json_object_set_new(copy, "implies", imp) ||
				     json_object_set(sub, name, copy) ?
			     SEO_ENOMEM : 0;
		json_decref(copy);
		if (rc)
			goto out;
	}
	def = json_pack("{s:O, s:O?}", "technologies", sub, "categories",
			json_object_get(root, "categories"));
	text = def ? json_dumps(def, JSON_COMPACT) : NULL;
	json_decref(def);
	if (!text) {
		rc = SEO_ENOMEM;
		goto out;
	}
	rc = seo_tech_rules_parse(text, strlen(text), out, err, sizeof(err));
	if (rc)
		log_error("rule file \"%s\": %s", path, err);
out:
	free(text);
	json_decref(root);
	json_decref(keep);
	json_decref(sub);
	return rc;
}
