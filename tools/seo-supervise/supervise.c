/*
 * supervise.c: the process table of seo-supervise (supervise.h).
 */
#include "supervise.h"

#include "seo/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <jansson.h>

/*
 * 100 ms brings a killed service back well within two seconds; 10 s is
 * the longest a crashing one waits, so a fixed fault is picked up soon.
 * The grace comes on top of SEO_DRAIN_MS (main.c): the gateway's refunds
 * after its drain (5 s) and its exit.
 */
const sup_policy sup_default_policy = {
	.first_ms = 100,
	.max_ms = 10000,
	.stable_ms = 10000,
	.stop_grace_ms = 10000,
};

static const char *const state_names[] = {
	[SUP_STARTING] = "starting",
	[SUP_RUNNING] = "running",
	[SUP_RESTARTING] = "restarting",
	[SUP_STOPPED] = "stopped",
};

void sup_proc_init(sup_proc *p, const char *name, const char *path)
{
	memset(p, 0, sizeof(*p));
	p->name = name;
	p->path = path;
	p->state = SUP_STARTING;
	p->last_status = -1;
}

void sup_started(sup_proc *p, pid_t pid, int64_t now)
{
	if (p->state == SUP_RESTARTING)
		p->restarts++;
	p->pid = pid;
	p->state = SUP_RUNNING;
	p->started_ms = now;
}

int64_t sup_died(sup_proc *p, const sup_policy *pol, int status, int64_t now)
{
	int64_t delay = pol->first_ms;

	if (now - p->started_ms >= pol->stable_ms)
		p->streak = 0;
	for (unsigned i = 0; i < p->streak && delay < pol->max_ms; i++)
		delay *= 2;
	if (delay > pol->max_ms)
		delay = pol->max_ms;
	p->streak++;
	p->pid = 0;
	p->state = SUP_RESTARTING;
	p->last_status = status;
	p->start_at_ms = now + delay;
	return delay;
}

void sup_stopped(sup_proc *p, int status)
{
	p->pid = 0;
	p->state = SUP_STOPPED;
	p->last_status = status;
}

int sup_find_pid(const sup_proc *procs, size_t n, pid_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (procs[i].pid == pid && pid > 0)
			return (int)i;
	return SEO_ENOTFOUND;
}

int sup_next_due(const sup_proc *procs, size_t n, int64_t now, int64_t *wait_ms)
{
	*wait_ms = -1;
	for (size_t i = 0; i < n; i++) {
		int64_t left;

		if (procs[i].state != SUP_STARTING && procs[i].state != SUP_RESTARTING)
			continue;
		left = procs[i].start_at_ms - now;
		if (left <= 0)
			return (int)i;
		if (*wait_ms < 0 || left < *wait_ms)
			*wait_ms = left;
	}
	return SEO_ENOTFOUND;
}

/* "signal 9", "status 1", or JSON null before the first death. */
static json_t *exit_json(int status)
{
	char buf[32];

	if (status < 0)
		return json_null();
	if (WIFSIGNALED(status))
		snprintf(buf, sizeof(buf), "signal %d", WTERMSIG(status));
	else
		snprintf(buf, sizeof(buf), "status %d", WEXITSTATUS(status));
	return json_string(buf);
}

static json_t *proc_json(const sup_proc *p, int64_t now)
{
	json_t *o = json_pack("{s:s, s:s, s:o, s:I, s:o}", "name", p->name,
			      "state", state_names[p->state],
			      "pid", p->pid > 0 ? json_integer(p->pid) : json_null(),
			      "restarts", (json_int_t)p->restarts,
			      "last_exit", exit_json(p->last_status));

	if (o != NULL && p->state == SUP_RESTARTING) {
		int64_t left = p->start_at_ms - now;

		if (json_object_set_new(o, "restart_in_ms",
					json_integer(left > 0 ? left : 0)) != 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

int sup_status_render(const sup_proc *procs, size_t n, pid_t self, int stopping,
		      int64_t now, char **out)
{
	json_t *list = json_array(), *doc;

	*out = NULL;
	if (list == NULL)
		return SEO_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (json_array_append_new(list, proc_json(&procs[i], now)) != 0) {
			json_decref(list);
			return SEO_ENOMEM;
		}
	}
	doc = json_pack("{s:I, s:s, s:o}", "pid", (json_int_t)self,
			"state", stopping ? "stopping" : "running", "processes", list);
	if (doc == NULL)
		return SEO_ENOMEM;
	*out = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	return *out != NULL ? 0 : SEO_ENOMEM;
}
