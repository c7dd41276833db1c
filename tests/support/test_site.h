/*
 * test_site.h: tests/fakes/site_server.py as a child process, for the unit
 * tests that fetch from a live site (the fetcher, the provider client, the
 * sitemap walk; test_site.c).
 */
#ifndef TEST_SITE_H
#define TEST_SITE_H

/* Starts the site on a free port of 127.0.0.1 and sets *port. Returns 0,
 * or -1 (call test_site_stop() all the same). */
int test_site_start(int *port);

/* Stops the site; fits a CUnit suite cleanup. Always 0. */
int test_site_stop(void);

#endif
