#include "test_config.h"

#include <stdio.h>
#include <stdlib.h>

#include <CUnit/CUnit.h>

#include "seo/config.h"

void seo_test_config_set(const char *name, const char *value)
{
	seo_cfg_error err;

	if (value != NULL)
		setenv(name, value, 1);
	else
		unsetenv(name);
	if (seo_config_load(&err) != 0) {
		fprintf(stderr, "configuration refused: %s\n", err.message);
		CU_FAIL_FATAL("configuration refused");
	}
}
