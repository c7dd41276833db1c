/*
 * test_site.c: starts and stops tests/fakes/site_server.py (test_site.h).
 */
#include "test_site.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t server_pid = -1;

int test_site_start(int *port)
{
	const char *src = getenv("SEO_SOURCE_DIR");
	char script[4096], line[32];
	int fds[2];
	FILE *in;

	snprintf(script, sizeof(script), "%s/tests/fakes/site_server.py",
		 src ? src : ".");
	if (pipe(fds) != 0)
		return -1;
	server_pid = fork();
	if (server_pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execl("/usr/bin/python3", "python3", script, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	in = fdopen(fds[0], "r");
	if (in == NULL || fgets(line, sizeof(line), in) == NULL)
		return -1;
	fclose(in);
	*port = atoi(line);
	return *port > 0 ? 0 : -1;
}

int test_site_stop(void)
{
	if (server_pid > 0) {
		kill(server_pid, SIGTERM);
		waitpid(server_pid, NULL, 0);
		server_pid = -1;
	}
	return 0;
}
