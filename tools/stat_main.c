/* SPDX-License-Identifier: MIT */
/*
 * fdrange stat PID: the locality report of a running process, read from
 * another shell without stopping it.  This file: the arguments, the order
 * of the steps, the exit statuses, the watchdog and --interval.
 *
 * Sources, all read-only (see stat_proc.c and stat_block.c):
 *  - /proc/PID: fds, their targets, epoll watch lists, TCP sockets, names;
 *  - the library's stats block (lib/block.h), a memfd the process maps
 *    shared, found in /proc/PID/maps and validated field by field.
 * Without the block the serving thread of an fd is unknown: fds are grouped
 * by the epoll instance watching them, which in event-loop servers such as
 * memcached stands for one thread.
 */
#include "stat.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WATCHDOG_S 10   /* a sample taking longer than this has blocked */

static const char *prog = "fdrange stat";

/* Written before each alarm() so the handler only has to write(2) it:
 * the JSON error to stdout with --json, the text line to stderr always
 * when that fails (stdout may be the very pipe that blocked). */
static char wd_msg[256], wd_text[256];
static size_t wd_len, wd_text_len;
static int wd_fd = 2;

static void watchdog(int sig)
{
	int fl;

	(void)sig;
	/* Never block here: the write that blocked may be on this fd. */
	fl = fcntl(wd_fd, F_GETFL);
	if (fl >= 0)
		fcntl(wd_fd, F_SETFL, fl | O_NONBLOCK);
	if (write(wd_fd, wd_msg, wd_len) != (ssize_t)wd_len && wd_fd != 2 &&
	    write(2, wd_text, wd_text_len) < 0) {
		/* Nothing left to tell anyone. */
	}
	_exit(ST_EXIT_PROC);
}

static void arm_watchdog(long pid, bool json)
{
	char why[160];

	snprintf(why, sizeof(why), "gave up after %d s with pid %ld: a read or write blocked", WATCHDOG_S,
		 pid);
	snprintf(wd_text, sizeof(wd_text), "%s: %s\n", prog, why);
	wd_text_len = strlen(wd_text);
	if (json)
		snprintf(wd_msg, sizeof(wd_msg), "{\"schema\":1,\"error\":\"%s\"}\n", why);
	else
		snprintf(wd_msg, sizeof(wd_msg), "%s", wd_text);
	wd_len = strlen(wd_msg);
	wd_fd = json ? 1 : 2;
	signal(SIGALRM, watchdog);
	alarm(WATCHDOG_S);
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: fdrange stat [--color=auto|always|never] [--no-map] [--json]\n"
		"                    [--interval SECONDS [--count N]] PID\n"
		"Show how the fds of running process PID are placed and which threads serve\n"
		"them: the settings and geometry, the learned hand-off of accepted connections,\n"
		"per owner (thread, lane or pool) its chunks, the fds placed, fallbacks, extra\n"
		"probes, open fds, purity (share of its open fds served by its main thread) and\n"
		"serving threads; the 8-fd lines of the fd table shared by fds of different\n"
		"threads; and a map of the fd table.  Reads the library's stats block (a memfd\n"
		"the process maps, found in /proc/PID/maps) and /proc; works without the\n"
		"library too, from /proc alone, where fds are grouped by the epoll instance\n"
		"that watches them.  The last line, starting with 'summary:', is for scripts.\n"
		"  --json              one JSON document instead (schema 1, see fdrange(1))\n"
		"  --interval SECONDS  a summary line (with --json: a JSON object) every\n"
		"                      SECONDS until the process exits\n"
		"  --count N           stop after N samples\n"
		"Exit status: 0 (also when PID exits during --interval), 1 if PID cannot be\n"
		"read, 2 for a bad option, 3 if its stats block is refused (corrupt or forged).\n");
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", prog);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "; see 'fdrange stat --help'\n");
	return ST_EXIT_USAGE;
}

/* SECONDS: a plain decimal number, > 0 and at most a day. */
static bool parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	if (!isdigit((unsigned char)s[0]) && s[0] != '.')
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v < 0.001 || v > 86400)
		return false;
	*out = v;
	return true;
}

static bool parse_count(const char *s, long *out)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)s[0]))
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 1 || v > 1000000000L)
		return false;
	*out = v;
	return true;
}

struct sample {
	struct st_proc p;
	struct st_blk b;
	struct st_report r;
	char why[ST_WHY_MAX];
};

static void sample_free(struct sample *s)
{
	st_report_free(&s->r);
	st_blk_free(&s->b);
	st_proc_free(&s->p);
}

/* One look at the process.  Returns an exit status; @s->why says why not 0. */
static int take_sample(long pid, struct sample *s)
{
	bool lib = false;
	int ret;

	memset(s, 0, sizeof(*s));
	ret = st_proc_read(&s->p, pid, s->why, sizeof(s->why));
	if (ret < 0)
		return ST_EXIT_PROC;
	ret = st_blk_find(&s->p, &s->b, &lib, s->why, sizeof(s->why));
	if (ret < 0) {
		st_proc_free(&s->p);
		return ret == -EBADMSG ? ST_EXIT_BLOCK : ST_EXIT_PROC;
	}
	s->r.p = &s->p;
	s->r.b = ret == 1 ? &s->b : NULL;
	s->r.lib_mapped = lib;
	if (ret == 0)
		snprintf(s->r.noblk, sizeof(s->r.noblk), "%s", s->why);
	s->r.name_of = st_thread_name;
	ret = st_analyze(&s->r);
	if (ret < 0) {
		snprintf(s->why, sizeof(s->why), "out of memory");
		sample_free(s);
		return ST_EXIT_PROC;
	}
	return ST_EXIT_OK;
}

static void report_error(bool json, long pid, const char *why)
{
	char msg[ST_WHY_MAX + 64];

	if (!strncmp(why, "no process", 10) || !strncmp(why, "cannot", 6))
		snprintf(msg, sizeof(msg), "%s", why);
	else
		snprintf(msg, sizeof(msg), "pid %ld: %s", pid, why);
	if (json) {
		st_json_error(stdout, msg);
		fflush(stdout);
	} else {
		/* One line, and the target's bytes in it escaped. */
		fprintf(stderr, "%s: ", prog);
		st_put_escaped(stderr, msg, sizeof(msg));
		fputc('\n', stderr);
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run_interval(long pid, bool json, double interval, long count)
{
	struct sample *s = malloc(sizeof(*s));
	int rc = ST_EXIT_OK;

	if (!s) {
		report_error(json, pid, "out of memory");
		return ST_EXIT_PROC;
	}
	for (long n = 0; !count || n < count; n++) {
		if (n) {
			struct timespec ts = { (time_t)interval,
					       (long)((interval - (double)(time_t)interval) * 1e9) };

			while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
				;
		}
		arm_watchdog(pid, json);
		rc = take_sample(pid, s);
		if (rc != ST_EXIT_OK) {
			alarm(0);
			/* Gone after at least one sample: the end, not an error. */
			if (n && !st_proc_alive(pid))
				rc = ST_EXIT_OK;
			else
				report_error(json, pid, s->why);
			break;
		}
		if (json)
			st_summary_json(stdout, &s->r, now_s());
		else
			st_summary_text(stdout, &s->r);
		fflush(stdout);
		alarm(0);
		sample_free(s);
	}
	free(s);
	return rc;
}

int fdrange_stat_main(int argc, char **argv)
{
	const char *color = "auto", *pidarg = NULL;
	struct st_text_opts topts = { false, true };
	bool json = false, have_interval = false, have_count = false;
	double interval = 0;
	long count = 0, pid;
	struct sample *s;
	char *end;
	int rc;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return ST_EXIT_OK;
		} else if (!strncmp(a, "--color=", 8) || !strncmp(a, "--colour=", 9)) {
			color = strchr(a, '=') + 1;
			if (strcmp(color, "auto") != 0 && strcmp(color, "always") != 0 &&
			    strcmp(color, "never") != 0)
				return usage_error("--color: '%s' is not auto, always or never", color);
		} else if (!strcmp(a, "--no-map")) {
			topts.map = false;
		} else if (!strcmp(a, "--json")) {
			json = true;
		} else if (!strcmp(a, "--interval") || !strncmp(a, "--interval=", 11) ||
			   !strcmp(a, "--count") || !strncmp(a, "--count=", 8)) {
			bool is_int = a[2] == 'i';

			val = strchr(a, '=');
			if (val)
				val++;
			else if (i + 1 < argc)
				val = argv[++i];
			else
				return usage_error("%s needs a value", a);
			if (is_int) {
				if (!parse_seconds(val, &interval))
					return usage_error("--interval: '%s' is not a number of "
							   "seconds from 0.001 to 86400", val);
				have_interval = true;
			} else {
				if (!parse_count(val, &count))
					return usage_error("--count: '%s' is not a whole number from "
							   "1 to 1000000000", val);
				have_count = true;
			}
		} else if (a[0] == '-' && a[1]) {
			return usage_error("unknown option '%s'", a);
		} else if (pidarg) {
			return usage_error("one PID only, '%s' is a second", a);
		} else {
			pidarg = a;
		}
	}
	if (!pidarg)
		return usage_error("no PID given%s", "");
	if (have_count && !have_interval)
		return usage_error("--count needs --interval%s", "");
	errno = 0;
	pid = strtol(pidarg, &end, 10);
	if (!isdigit((unsigned char)pidarg[0]) || *end || errno || pid <= 0 || pid > 0x3fffffff) {
		fprintf(stderr, "%s: '", prog);
		st_put_escaped(stderr, pidarg, 64);
		fprintf(stderr, "' is not a process id\n");
		return ST_EXIT_USAGE;
	}
	topts.color = !json && (!strcmp(color, "always") ||
				(!strcmp(color, "auto") && isatty(1) && !getenv("NO_COLOR")));
	if (have_interval)
		return run_interval(pid, json, interval, count);

	s = malloc(sizeof(*s));
	if (!s) {
		report_error(json, pid, "out of memory");
		return ST_EXIT_PROC;
	}
	arm_watchdog(pid, json);
	rc = take_sample(pid, s);
	if (rc != ST_EXIT_OK) {
		alarm(0);
		report_error(json, pid, s->why);
		free(s);
		return rc;
	}
	if (json)
		st_render_json(stdout, &s->r);
	else
		st_render_text(stdout, &s->r, &topts);
	fflush(stdout);
	alarm(0);
	sample_free(s);
	free(s);
	return ST_EXIT_OK;
}
