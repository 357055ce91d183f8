/* SPDX-License-Identifier: MIT */
/*
 * fdrange stat PID: the locality report of a running process, read from
 * another shell without stopping it.  This file: the arguments, the order
 * of the steps, the exit statuses, the watchdog, --interval, several PIDs
 * and --all (a summary each), and the output form of each.
 *
 * Sources, all read-only (see stat_proc.c, stat_find.c, stat_load.c,
 * stat_check.c):
 *  - /proc/PID: fds, their targets, epoll watch lists, TCP sockets, names;
 *  - the library's stats block (lib/block.h), a memfd the process maps
 *    shared, found in /proc/PID/maps and validated field by field.
 * Without the block the serving thread of an fd is unknown: fds are grouped
 * by the epoll instance watching them, which in event-loop servers such as
 * memcached stands for one thread.
 */
#include "stat.h"

#include <ctype.h>
#include <dirent.h>
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

	if (pid > 0)
		snprintf(why, sizeof(why), "gave up after %d s with pid %ld: a read or write blocked",
			 WATCHDOG_S, pid);
	else
		snprintf(why, sizeof(why), "gave up after %d s: a read or write blocked", WATCHDOG_S);
	snprintf(wd_text, sizeof(wd_text), "%s: %s\n", prog, why);
	wd_text_len = strlen(wd_text);
	if (json)
		snprintf(wd_msg, sizeof(wd_msg), "{\"schema\":1,\"error\":\"%s\",\"reason\":"
			 "\"timeout\",\"pid\":%ld}\n", why, pid);
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
		"Usage: fdrange stat [--color=WHEN] [--no-map] [--json] PID\n"
		"       fdrange stat [--json|--prometheus] [--interval S [--count N]]\n"
		"                    PID... | --all\n"
		"Show how the fds of running process PID are placed and which threads serve\n"
		"them: the settings and geometry, the learned hand-off of accepted\n"
		"connections, per owner (thread, lane or pool) its chunks and lines, the fds\n"
		"placed, fallbacks, extra probes, open fds, purity (share of its open fds\n"
		"served by its main thread) and serving threads; the 8-fd lines of the fd\n"
		"table shared by fds of different threads; a map of the fd table; and why\n"
		"the library places nothing, if it does not.  Reads the library's stats block\n"
		"(a memfd the process maps, found in /proc/PID/maps) and /proc; works without\n"
		"the library too, from /proc alone, where fds are grouped by the epoll\n"
		"instance that watches them.  The last line, 'summary:', is for scripts.\n"
		"  --color=WHEN        colour the map's letters by thread: auto (when stdout\n"
		"                      is a terminal and NO_COLOR is unset), always, never\n"
		"  --no-map            leave the map of the fd table out\n"
		"  --json              one JSON document instead (schema 1, see fdrange(1))\n"
		"  --prometheus        Prometheus text format, for node_exporter's textfile\n"
		"                      collector: a sample per process, labelled pid and comm\n"
		"  --interval SECONDS  a summary line (with --json: a JSON object) every\n"
		"                      SECONDS until the process exits\n"
		"  --count N           stop after N samples\n"
		"  --all               every process that has libfdrange mapped\n"
		"With several PIDs or --all: one summary line (or JSON object) each.\n"
		"Exit status: 0 (also when PID exits during --interval), 1 if PID cannot be\n"
		"read, 2 for a bad option, 3 if its stats block is refused (corrupt or\n"
		"forged); with several PIDs the highest of theirs.\n");
}

/* Set once the arguments are known to ask for JSON: usage errors too. */
static bool usage_json;

static int usage_error(const char *fmt, const char *arg)
{
	char msg[320], e[160];

	/* The argument is the user's, possibly any bytes: shown escaped. */
	snprintf(e, sizeof(e), "%s", arg);
	snprintf(msg, sizeof(msg), fmt, e);
	if (usage_json) {
		char full[400];

		snprintf(full, sizeof(full), "%s; see 'fdrange stat --help'", msg);
		st_json_error(stdout, full, "usage", 0);
		fflush(stdout);
		return ST_EXIT_USAGE;
	}
	fprintf(stderr, "%s: ", prog);
	st_put_escaped(stderr, msg, sizeof(msg));
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

/* A plain decimal number from @min to @max. */
static bool parse_whole(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)s[0]))
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

static bool parse_count(const char *s, long *out)
{
	return parse_whole(s, 1, 1000000000L, out);
}

static bool parse_pid(const char *s, long *out)
{
	return parse_whole(s, 1, 0x3fffffff, out);
}

struct sample {
	struct st_proc p;
	struct st_blk b;
	struct st_report r;
	char why[ST_WHY_MAX];
	const char *reason;          /* the error's word when not ST_EXIT_OK */
};

static void sample_free(struct sample *s)
{
	st_report_free(&s->r);
	st_blk_free(&s->b);
	st_proc_free(&s->p);
}

static const char *proc_reason(int err)
{
	if (err == -ST_ERR_EXITED)
		return "exited";
	if (err == -ENOENT || err == -ESRCH)
		return "no_process";
	if (err == -EACCES || err == -EPERM)
		return "permission";
	return "proc";
}

/* One look at the process.  Returns an exit status; @s->why says why not 0. */
static int take_sample(long pid, struct sample *s)
{
	int ret;

	memset(s, 0, sizeof(*s));
	ret = st_proc_read(&s->p, pid, s->why, sizeof(s->why));
	if (ret < 0) {
		s->reason = proc_reason(ret);
		return ST_EXIT_PROC;
	}
	ret = st_blk_find(&s->p, &s->b, &s->r.found, s->why, sizeof(s->why));
	if (ret < 0) {
		st_proc_free(&s->p);
		s->reason = ret == -EBADMSG ? "refused" : proc_reason(ret);
		return ret == -EBADMSG ? ST_EXIT_BLOCK : ST_EXIT_PROC;
	}
	s->r.p = &s->p;
	s->r.b = ret == 1 ? &s->b : NULL;
	if (ret == 0)
		snprintf(s->r.noblk, sizeof(s->r.noblk), "%s", s->why);
	s->r.name_of = st_thread_name;
	s->r.host_tid = st_host_tid;
	ret = st_analyze(&s->r);
	if (ret < 0) {
		snprintf(s->why, sizeof(s->why), "out of memory");
		s->reason = "proc";
		sample_free(s);
		return ST_EXIT_PROC;
	}
	return ST_EXIT_OK;
}

/* "pid N: WHY", unless WHY names the pid itself. */
static void error_msg(long pid, const char *why, char *msg, size_t len)
{
	if (!strncmp(why, "no process", 10) || !strncmp(why, "cannot", 6))
		snprintf(msg, len, "%s", why);
	else
		snprintf(msg, len, "pid %ld: %s", pid, why);
}

static void report_error(bool json, long pid, const char *why, const char *reason)
{
	char msg[ST_WHY_MAX + 64];

	error_msg(pid, why, msg, sizeof(msg));
	if (json) {
		st_json_error(stdout, msg, reason, pid);
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

enum form { FORM_TEXT, FORM_JSON, FORM_PROM };

/* The targets of one round: the PIDs given, or every process with the
 * library mapped (--all), in pid order. */
struct targets {
	long *pid;
	size_t n, cap;
	bool *seen;                  /* sampled once already (--interval) */
	bool all;
	unsigned unreadable;         /* --all: processes whose maps we may not read */
};

static int add_target(struct targets *t, long pid)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		long *np = realloc(t->pid, cap * sizeof(*np));
		bool *ns;

		if (!np)
			return -ENOMEM;
		t->pid = np;
		ns = realloc(t->seen, cap * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		t->seen = ns;
		t->cap = cap;
	}
	t->seen[t->n] = false;
	t->pid[t->n++] = pid;
	return 0;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* --all: /proc's processes whose maps name libfdrange.so, ourselves left out. */
static int scan_all(struct targets *t)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	long self = (long)getpid();

	t->n = 0;
	t->unreadable = 0;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		long pid;
		int ret;

		if (!parse_pid(de->d_name, &pid) || pid == self)
			continue;
		ret = st_maps_lib(pid);
		if (ret == -EACCES || ret == -EPERM)
			t->unreadable++;
		if (ret > 0 && add_target(t, pid) < 0) {
			closedir(d);
			return -ENOMEM;
		}
	}
	closedir(d);
	if (t->n)
		qsort(t->pid, t->n, sizeof(*t->pid), cmp_long);
	return 0;
}

/*
 * Summaries of each target, one round (or --count rounds every
 * --interval): a line each in text, a JSON object each, or one
 * Prometheus document a round.  A process that exits after one sample
 * leaves the rounds quietly; they end when none is left (not with --all,
 * whose next scan may find new ones).
 */
static int run_summaries(struct targets *t, enum form form, double interval, long count)
{
	struct sample *s = malloc(sizeof(*s));
	struct st_summary *sums = NULL;
	int worst = ST_EXIT_OK;

	if (!s) {
		report_error(form == FORM_JSON, 0, "out of memory", "proc");
		return ST_EXIT_PROC;
	}
	for (long round = 0; !count || round < count; round++) {
		size_t nsum = 0, live = 0;
		double t0;

		if (round) {
			struct timespec ts = { (time_t)interval,
					       (long)((interval - (double)(time_t)interval) * 1e9) };

			while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
				;
		}
		if (t->all && (scan_all(t) < 0 || (!round && t->unreadable && geteuid() != 0)))
			fprintf(stderr, "%s: %u %s could not be read; run as root to see them all\n",
				prog, t->unreadable, st_pl(t->unreadable, "process", "processes"));
		free(sums);
		sums = calloc(t->n ? t->n : 1, sizeof(*sums));
		if (!sums) {
			report_error(form == FORM_JSON, 0, "out of memory", "proc");
			worst = ST_EXIT_PROC;
			break;
		}
		t0 = now_s();
		for (size_t i = 0; i < t->n; i++) {
			long pid = t->pid[i];
			int rc;

			if (pid <= 0)
				continue;  /* gone in an earlier round */
			arm_watchdog(pid, form == FORM_JSON);
			rc = take_sample(pid, s);
			alarm(0);
			if (rc != ST_EXIT_OK) {
				char msg[ST_WHY_MAX + 64];

				/* Once said, not again: its samples end here.  Gone
				 * since its last sample (or since --all saw it a
				 * moment ago): the end, not an error. */
				t->pid[i] = 0;
				if ((t->seen[i] || t->all) && !st_proc_alive(pid))
					continue;
				if (rc > worst)
					worst = rc;
				if (form != FORM_JSON)
					report_error(false, pid, s->why, s->reason);
				error_msg(pid, s->why, msg, sizeof(msg));
				st_summarize_error(pid, s->reason, msg, &sums[nsum++]);
				continue;
			}
			t->seen[i] = true;
			live++;
			st_summarize(&s->r, &sums[nsum++]);
			sample_free(s);
		}
		/* The output may block too (a pipe nobody reads). */
		arm_watchdog(t->n == 1 ? t->pid[0] : 0, form == FORM_JSON);
		for (size_t i = 0; form != FORM_PROM && i < nsum; i++) {
			if (form == FORM_JSON)
				st_summary_json(stdout, &sums[i], interval > 0 ? t0 : 0);
			else
				st_summary_text(stdout, &sums[i]);
		}
		if (form == FORM_PROM)
			st_render_prom(stdout, sums, nsum);
		fflush(stdout);
		alarm(0);
		if (!live && !t->all)
			break;
		if (!interval)
			break;
	}
	free(sums);
	free(s);
	return worst;
}

/* One process, the whole report. */
static int run_report(long pid, bool json, const struct st_text_opts *topts)
{
	struct sample *s = malloc(sizeof(*s));
	int rc;

	if (!s) {
		report_error(json, pid, "out of memory", "proc");
		return ST_EXIT_PROC;
	}
	arm_watchdog(pid, json);
	rc = take_sample(pid, s);
	if (rc != ST_EXIT_OK) {
		alarm(0);
		report_error(json, pid, s->why, s->reason);
		free(s);
		return rc;
	}
	if (json)
		st_render_json(stdout, &s->r);
	else
		st_render_text(stdout, &s->r, topts);
	fflush(stdout);
	alarm(0);
	sample_free(s);
	free(s);
	return ST_EXIT_OK;
}

/* The options that cannot go together: a usage error, or -1 if none. */
static int check_together(const struct targets *t, bool json, bool prom, bool have_interval,
			  bool have_count)
{
	if (!t->n && !t->all)
		return usage_error("no PID given (or --all)%s", "");
	if (t->n && t->all)
		return usage_error("--all takes no PID%s", "");
	if (have_count && !have_interval)
		return usage_error("--count needs --interval%s", "");
	if (json && prom)
		return usage_error("--json and --prometheus are two forms: one only%s", "");
	if (prom && have_interval)
		return usage_error("--prometheus writes one snapshot: run it from a timer into the "
				   "collector's directory, without --interval%s", "");
	return -1;
}

/* A process id argument into @t: -1 (no exit status yet), or a usage error's. */
static int pid_arg(struct targets *t, const char *a)
{
	long pid;

	if (!parse_pid(a, &pid))
		return usage_error("'%s' is not a process id (a number from 1 to 1073741823)", a);
	if (add_target(t, pid) < 0)
		return usage_error("out of memory%s", "");
	return -1;
}

int fdrange_stat_main(int argc, char **argv)
{
	const char *color = "auto";
	struct st_text_opts topts = { false, true };
	bool json = false, prom = false, have_interval = false, have_count = false;
	struct targets t = { 0 };
	double interval = 0;
	long count = 0;
	int rc = -1;   /* -1 until an exit status is known */

	/* Known before any message: a usage error is JSON too with --json. */
	for (int i = 1; i < argc; i++)
		usage_json |= !strcmp(argv[i], "--json");
	for (int i = 1; i < argc && rc < 0; i++) {
		const char *a = argv[i], *val = NULL;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			rc = ST_EXIT_OK;
		} else if (!strncmp(a, "--color=", 8) || !strncmp(a, "--colour=", 9)) {
			color = strchr(a, '=') + 1;
			if (strcmp(color, "auto") != 0 && strcmp(color, "always") != 0 &&
			    strcmp(color, "never") != 0)
				rc = usage_error("--color: '%s' is not auto, always or never", color);
		} else if (!strcmp(a, "--color") || !strcmp(a, "--colour")) {
			rc = usage_error("%s needs =WHEN: --color=auto, --color=always or "
					 "--color=never", a);
		} else if (!strcmp(a, "--")) {
			/* What follows is process ids only. */
			while (++i < argc && rc < 0)
				rc = pid_arg(&t, argv[i]);
		} else if (!strcmp(a, "--no-map")) {
			topts.map = false;
		} else if (!strcmp(a, "--json")) {
			json = true;
		} else if (!strcmp(a, "--prometheus")) {
			prom = true;
		} else if (!strcmp(a, "--all")) {
			t.all = true;
		} else if (!strcmp(a, "--interval") || !strncmp(a, "--interval=", 11) ||
			   !strcmp(a, "--count") || !strncmp(a, "--count=", 8)) {
			bool is_int = a[2] == 'i';

			val = strchr(a, '=');
			if (val)
				val++;
			else if (i + 1 < argc)
				val = argv[++i];
			else
				rc = usage_error("%s needs a value", a);
			if (is_int) {
				if (val && !parse_seconds(val, &interval))
					rc = usage_error("--interval: '%s' is not a number of "
							 "seconds from 0.001 to 86400", val);
				have_interval = true;
			} else {
				if (val && !parse_count(val, &count))
					rc = usage_error("--count: '%s' is not a whole number from "
							 "1 to 1000000000", val);
				have_count = true;
			}
		} else if (a[0] == '-' && a[1]) {
			rc = usage_error("unknown option '%s'", a);
		} else {
			rc = pid_arg(&t, a);
		}
	}
	if (rc < 0)
		rc = check_together(&t, json, prom, have_interval, have_count);
	if (rc >= 0) {
		free(t.pid);
		free(t.seen);
		return rc;
	}
	topts.color = !json && (!strcmp(color, "always") ||
				(!strcmp(color, "auto") && isatty(1) && !getenv("NO_COLOR")));
	if (t.n == 1 && !t.all && !have_interval && !prom)
		rc = run_report(t.pid[0], json, &topts);
	else
		rc = run_summaries(&t, json ? FORM_JSON : prom ? FORM_PROM : FORM_TEXT, interval,
				   have_interval ? count : 1);
	free(t.pid);
	free(t.seen);
	return rc;
}
