/*
 * supervise.h: the process table of seo-supervise, the parent process of
 * the local stack (`./seo up`). Pure logic, no system calls: main.c
 * forks, waits and signals, and tells this table what happened; the
 * table decides when a dead process starts again (back-off) and renders
 * the status file.
 *
 * Times are milliseconds of one monotonic clock, passed in by the caller.
 */
#ifndef SUPERVISE_H
#define SUPERVISE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The back-off: a process that dies is started again after `first_ms`,
 * doubled for each further death within `stable_ms` of its start, at most
 * `max_ms`; one that ran `stable_ms` starts its count again. Children
 * stopping get `stop_grace_ms` between SIGTERM and SIGKILL.
 */
typedef struct sup_policy {
	int64_t first_ms;
	int64_t max_ms;
	int64_t stable_ms;
	int64_t stop_grace_ms;
} sup_policy;

/* The policy seo-supervise runs with (docs/decisions.md). */
extern const sup_policy sup_default_policy;

typedef enum sup_state {
	SUP_STARTING,   /* not started yet, or due to start now */
	SUP_RUNNING,
	SUP_RESTARTING, /* dead, waiting for its back-off */
	SUP_STOPPED,    /* stopped by the supervisor, not started again */
} sup_state;

typedef struct sup_proc {
	const char *name;   /* borrowed: the program's file name */
	const char *path;   /* borrowed: what is executed */
	pid_t pid;          /* 0 when not running */
	sup_state state;
	unsigned restarts;  /* starts after the first one */
	unsigned streak;    /* deaths in a row, each within stable_ms */
	int64_t started_ms; /* the last start */
	int64_t start_at_ms; /* SUP_STARTING, SUP_RESTARTING: when to start */
	int last_status;    /* wait status of the last death, -1 for none */
} sup_proc;

/* A process of `name` run from `path` (both borrowed), due to start now. */
void sup_proc_init(sup_proc *p, const char *name, const char *path);

/* Records that `p` was started as `pid` at `now`. */
void sup_started(sup_proc *p, pid_t pid, int64_t now);

/*
 * Records that `p` died with wait status `status` at `now` and schedules
 * its next start under `pol`. Returns the back-off in milliseconds.
 */
int64_t sup_died(sup_proc *p, const sup_policy *pol, int status, int64_t now);

/* Records that `p` exited while the supervisor was stopping it. */
void sup_stopped(sup_proc *p, int status);

/*
 * The process of `procs[0..n)` running as `pid`. Returns its index, or
 * SEO_ENOTFOUND.
 */
int sup_find_pid(const sup_proc *procs, size_t n, pid_t pid);

/*
 * What to do next: returns the index of a process due to start at `now`,
 * or SEO_ENOTFOUND when none is, with `*wait_ms` set to the time until the
 * next one is due (-1: none is waiting).
 */
int sup_next_due(const sup_proc *procs, size_t n, int64_t now, int64_t *wait_ms);

/*
 * The status file's JSON: the supervisor's `self` pid, whether it is
 * `stopping`, and one object per process (name, state, pid or null,
 * restarts, last_exit as "signal N" or "status N" or null, restart_in_ms
 * while restarting). Returns 0 with `*out` a NUL-terminated string the
 * caller frees with free(), or SEO_ENOMEM.
 */
int sup_status_render(const sup_proc *procs, size_t n, pid_t self, int stopping,
		      int64_t now, char **out);

#endif
