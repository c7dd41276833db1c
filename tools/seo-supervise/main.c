/*
 * seo-supervise: the parent process of the local stack (`./seo up`).
 *
 *   seo-supervise --status FILE --log-dir DIR PROGRAM...
 *
 * Starts each PROGRAM, its output appended to DIR/<name>.log; starts one
 * that dies again after a back-off (supervise.h); on SIGTERM, SIGINT or
 * SIGHUP stops them in reverse order, each gone before the next is
 * signalled (the gateway, last on the line, first: what it drains can
 * still reach the services), each given SEO_DRAIN_MS and the policy's
 * grace before SIGKILL, then exits 0. FILE holds the status (JSON),
 * replaced whole on every change and removed at exit. A child gets
 * SIGTERM if the supervisor itself dies, so nothing of the stack is left
 * behind.
 */
#include "supervise.h"

#include "seo/config.h"
#include "seo/errors.h"
#include "seo/log.h"
#include "seo/util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct supervisor {
	sup_proc *procs;
	size_t n;
	const char *status_path;
	const char *log_dir;
	sup_policy pol;
	sigset_t sigs;
	int stopping;
} supervisor;

static void write_status(const supervisor *s)
{
	char tmp[PATH_MAX], *text;
	FILE *f;

	if (sup_status_render(s->procs, s->n, getpid(), s->stopping, seo_mono_ms(),
			      &text) != 0) {
		log_error("status: out of memory");
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", s->status_path);
	f = fopen(tmp, "w");
	if (f == NULL || fprintf(f, "%s\n", text) < 0 || fclose(f) != 0 ||
	    rename(tmp, s->status_path) != 0)
		log_error("cannot write %s: %s", s->status_path, strerror(errno));
	free(text);
}

/* In the child: its log as stdout and stderr, no blocked signal, and
 * SIGTERM when the supervisor dies. Never returns. */
static void exec_child(const supervisor *s, const sup_proc *p, pid_t parent)
{
	char log[PATH_MAX];
	sigset_t none;
	int fd;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent)
		_exit(127);
	snprintf(log, sizeof(log), "%s/%s.log", s->log_dir, p->name);
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
		_exit(127);
	if (fd > STDERR_FILENO)
		close(fd);
	execl(p->path, p->path, (char *)NULL);
	fprintf(stderr, "seo-supervise: cannot run %s: %s\n", p->path, strerror(errno));
	_exit(127);
}

static void start(supervisor *s, sup_proc *p)
{
	pid_t parent = getpid(), pid = fork();
	int64_t now = seo_mono_ms();

	if (pid == 0)
		exec_child(s, p, parent);
	if (pid < 0) {
		log_error("cannot start %s: %s", p->name, strerror(errno));
		p->started_ms = now;
		sup_died(p, &s->pol, 127 << 8, now);
		return;
	}
	sup_started(p, pid, now);
	log_info("started %s, pid %d (restarts %u)", p->name, (int)pid, p->restarts);
}

/* Collects every child that ended: started again later, or stopped. */
static void reap(supervisor *s)
{
	pid_t pid;
	int status, i;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		sup_proc *p;

		i = sup_find_pid(s->procs, s->n, pid);
		if (i < 0)
			continue;
		p = &s->procs[i];
		if (s->stopping) {
			sup_stopped(p, status);
			log_info("%s stopped", p->name);
			continue;
		}
		log_warn("%s (pid %d) died (%s %d), starting it again in %lld ms",
			 p->name, (int)pid,
			 WIFSIGNALED(status) ? "signal" : "status",
			 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
			 (long long)sup_died(p, &s->pol, status, seo_mono_ms()));
	}
}

/* Waits up to `ms` (-1: without end) for a signal; returns it, 0 on
 * timeout. */
static int wait_signal(const supervisor *s, int64_t ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
	int sig;

	do
		sig = ms < 0 ? sigwaitinfo(&s->sigs, NULL) : sigtimedwait(&s->sigs, NULL, &ts);
	while (sig < 0 && errno == EINTR);
	return sig < 0 ? 0 : sig;
}

static void stop_one(supervisor *s, sup_proc *p)
{
	int64_t deadline = seo_mono_ms() + s->pol.stop_grace_ms;
	pid_t pid = p->pid;
	int status;

	kill(pid, SIGTERM);
	while (p->pid == pid) {
		int64_t left = deadline - seo_mono_ms();

		if (left <= 0) {
			log_warn("%s did not stop in %lld ms: killed", p->name,
				 (long long)s->pol.stop_grace_ms);
			kill(pid, SIGKILL);
			if (waitpid(pid, &status, 0) == pid)
				sup_stopped(p, status);
			break;
		}
		if (wait_signal(s, left) == SIGCHLD)
			reap(s);
	}
}

static void stop_all(supervisor *s)
{
	s->stopping = 1;
	reap(s);
	write_status(s);
	for (size_t i = s->n; i-- > 0;) {
		if (s->procs[i].pid > 0)
			stop_one(s, &s->procs[i]);
		s->procs[i].state = SUP_STOPPED;
		write_status(s);
	}
}

static void run(supervisor *s)
{
	while (!s->stopping) {
		int64_t wait_ms;
		int i, sig;

		while ((i = sup_next_due(s->procs, s->n, seo_mono_ms(), &wait_ms)) >= 0)
			start(s, &s->procs[i]);
		write_status(s);
		sig = wait_signal(s, wait_ms);
		if (sig == SIGCHLD)
			reap(s);
		else if (sig != 0)
			s->stopping = 1;
	}
}

static int usage(void)
{
	fprintf(stderr, "usage: seo-supervise --status FILE --log-dir DIR PROGRAM...\n");
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "status", required_argument, NULL, 's' },
		{ "log-dir", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	supervisor s = { 0 };
	int c;

	seo_config_init();
	seo_log_init("seo-supervise");
	/* a child drains its calls for SEO_DRAIN_MS after SIGTERM */
	s.pol = sup_default_policy;
	s.pol.stop_grace_ms += seo_config_num(SEO_CFG_DRAIN_MS);
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 's')
			s.status_path = optarg;
		else if (c == 'l')
			s.log_dir = optarg;
		else
			return usage();
	}
	if (s.status_path == NULL || s.log_dir == NULL || optind == argc)
		return usage();
	s.n = (size_t)(argc - optind);
	s.procs = calloc(s.n, sizeof(*s.procs));
	if (s.procs == NULL) {
		log_error("out of memory");
		return 1;
	}
	for (size_t i = 0; i < s.n; i++) {
		const char *path = argv[optind + (int)i], *slash = strrchr(path, '/');

		sup_proc_init(&s.procs[i], slash != NULL ? slash + 1 : path, path);
	}
	sigemptyset(&s.sigs);
	sigaddset(&s.sigs, SIGCHLD);
	sigaddset(&s.sigs, SIGTERM);
	sigaddset(&s.sigs, SIGINT);
	sigaddset(&s.sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &s.sigs, NULL);
	run(&s);
	stop_all(&s);
	unlink(s.status_path);
	free(s.procs);
	log_info("every process stopped");
	return 0;
}
