/* SPDX-License-Identifier: MIT */
/*
 * Table growth: the time of the first fd placement that makes the kernel
 * grow the fd table once the process has threads.  expand_fdtable() then
 * waits for an RCU grace period (synchronize_rcu) before it frees the old
 * table, because other threads may still be reading it locklessly; while
 * the process is single-threaded it does not.
 *
 * The main thread creates one fd (range 0 on the library's sides), starts a
 * worker, and the worker times its first and second fd creation; the
 * library places the worker's fds in range 1, high above the table's
 * initial size.  Sides K and Kp do the same move by hand without the
 * library, showing the kernel's cost with and without growing the table
 * while still single-threaded.  exec-us is the time to fork, exec and exit
 * a program doing nothing, where the library's start-up (and pregrowing)
 * shows; exec-after-us the same once the measurement above is done.
 */
#include "ab.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

struct res {
	int mode;       /* 0 plain eventfd, 1 eventfd + move to high by hand */
	int high;
	int fd1, fd2;
	double first_us, second_us;
	long fdsize_before, fdsize_after;
};

/* The first fd of range 1 with FDRANGE_SLOTS=2 and the default base and width. */
static int range1_lo(void)
{
	unsigned long lim = ab_nofile(), w;

	if (lim > 1048576)
		lim = 1048576;
	w = (lim - 1 - 64) / 2;
	w -= w % 64;
	return (int)(64 + w);
}

static int create(int mode, int high)
{
	int fd = eventfd(0, 0), nfd;

	if (fd < 0)
		ab_die("eventfd: %s", strerror(errno));
	if (mode == 0)
		return fd;
	nfd = fcntl(fd, F_DUPFD, high);
	if (nfd < 0)
		ab_die("F_DUPFD %d: %s", high, strerror(errno));
	close(fd);
	return nfd;
}

static void *worker(void *arg)
{
	struct res *r = arg;
	uint64_t t0, t1, t2;

	r->fdsize_before = ab_fdsize();
	t0 = ab_now_ns();
	r->fd1 = create(r->mode, r->high);
	t1 = ab_now_ns();
	r->fd2 = create(r->mode, r->high);
	t2 = ab_now_ns();
	r->fdsize_after = ab_fdsize();
	r->first_us = (double)(t1 - t0) / 1e3;
	r->second_us = (double)(t2 - t1) / 1e3;
	close(r->fd1);
	close(r->fd2);
	return NULL;
}

static double exec_us(unsigned n)
{
	uint64_t t0 = ab_now_ns();

	for (unsigned i = 0; i < n; i++) {
		int st;
		pid_t pid = fork();

		if (pid == 0) {
			execl("/proc/self/exe", "bench_growth", "--noop", (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			ab_die("noop child failed");
	}
	return (double)(ab_now_ns() - t0) / 1e3 / n;
}

static int child(const struct ab_ctx *ctx)
{
	struct res r = { 0 };
	long fdsize0 = ab_fdsize();
	double exec0 = exec_us(ctx->smoke ? 2 : 20);
	int main_fd;

	r.mode = !strcmp(ctx->mode, "raw") || !strcmp(ctx->mode, "rawpre");
	r.high = range1_lo();
	if (!strcmp(ctx->mode, "rawpre")) {
		/* What growing in advance costs: once, while single-threaded. */
		uint64_t t0 = ab_now_ns();

		close(create(1, r.high + 63));
		ab_emit("grow-1thread-us", (double)(ab_now_ns() - t0) / 1e3);
	}
	main_fd = eventfd(0, 0);                  /* the main thread takes range 0 */
	ab_threads(1, worker, &r, sizeof(r));
	close(main_fd);
	ab_emit("first-fd-us", r.first_us);
	ab_emit("second-fd-us", r.second_us);
	ab_emit("exec-us", exec0);
	ab_emit("exec-after-us", exec_us(ctx->smoke ? 2 : 20));
	ab_note("FDSize %ld at start, %ld before the worker's first fd, %ld after; "
		"worker's fds %d, %d", fdsize0, r.fdsize_before, r.fdsize_after, r.fd1, r.fd2);
	return 0;
}

static const struct ab_side sides[] = {
	{ "A", "no library: the worker's fd at the lowest free number", false, { NULL }, NULL },
	{ "K", "no library: the worker moves its fd to range 1 by F_DUPFD itself", false,
	  { NULL }, "raw" },
	{ "Kp", "as K, after one F_DUPFD+close to there while single-threaded", false,
	  { NULL }, "rawpre" },
	{ "B0", "LD_PRELOAD=libfdrange.so, not growing in advance:", true,
	  { "FDRANGE_SLOTS=2", "FDRANGE_PREGROW=0", "FDRANGE_THRESHOLD=0", NULL }, NULL },
	{ "B", "LD_PRELOAD=libfdrange.so, default pregrow:", true,
	  { "FDRANGE_SLOTS=2", "FDRANGE_THRESHOLD=0", NULL }, NULL },
};

int main(int argc, char **argv)
{
	static const struct ab_bench b = {
		.name = "bench_growth",
		.what = "first fd placement that grows the fd table once threads exist",
		.unit = "microseconds",
		.sides = sides, .nsides = 5, .rounds = 11, .seconds = 0,
		.child = child,
	};

	if (argc == 2 && !strcmp(argv[1], "--noop"))
		return 0;
	return ab_main(argc, argv, &b);
}
