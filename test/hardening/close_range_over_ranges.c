/* SPDX-License-Identifier: MIT */
/*
 * close_range() and closefrom() over the ranges: programs (daemons, shells
 * before exec) close every fd above some number.  The library keeps no fd
 * of its own, so nothing of it breaks; after the sweep every thread's new
 * fds are placed again, from the bottom of its range; and
 * CLOSE_RANGE_CLOEXEC marks exactly the fds of the ranges.
 */
#include "hard.h"

#include <linux/close_range.h>

#define NT 4
#define PER 40

struct job {
	pthread_t tid;
	struct tok o[PER];
	int lo, hi;
};

static void *make(void *arg)
{
	struct job *j = arg;

	for (int i = 0; i < PER; i++) {
		CHECK(tok_create(&j->o[i], (uint64_t)(uintptr_t)j + (uint64_t)i, (unsigned long)i) == 0,
		      "create: %s", strerror(errno));
		for (int k = 0; k < 2; k++)
			CHECK(!placed_mode || j->o[i].fd[k] < 0 || in_my_range(j->o[i].fd[k]),
			      "fd %d outside the range", j->o[i].fd[k]);
	}
	j->lo = j->hi = -1;
	if (api_range)
		CHECK(api_range(&j->lo, &j->hi) == 0, "fdrange_thread_range");
	return NULL;
}

static void run(struct job *jobs)
{
	for (int t = 0; t < NT; t++)
		CHECK(pthread_create(&jobs[t].tid, NULL, make, &jobs[t]) == 0, "pthread_create");
	for (int t = 0; t < NT; t++)
		pthread_join(jobs[t].tid, NULL);
}

static int lowest_of(struct job *jobs)
{
	int low = 1 << 30;

	for (int t = 0; t < NT; t++)
		for (int i = 0; i < PER; i++)
			for (int k = 0; k < 2; k++)
				if (jobs[t].o[i].fd[k] >= 0 && jobs[t].o[i].fd[k] < low)
					low = jobs[t].o[i].fd[k];
	return low;
}

int main(int argc, char **argv)
{
	static struct job jobs[NT];
	int before, from, keep;

	hard_init(argc, argv);
	before = count_fds();
	/* An fd below the sweep must survive it and still be the same file. */
	keep = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CHECK(keep >= 0, "open");

	/* 1: CLOSE_RANGE_CLOEXEC from the lowest created fd up. */
	run(jobs);
	from = lowest_of(jobs);
	CHECK(from > keep, "created fd %d below the kept fd %d", from, keep);
	CHECK(syscall(SYS_close_range, (unsigned)from, ~0u, CLOSE_RANGE_CLOEXEC) == 0,
	      "close_range cloexec: %s", strerror(errno));
	for (int t = 0; t < NT; t++)
		for (int i = 0; i < PER; i++) {
			for (int k = 0; k < 2; k++)
				CHECK(jobs[t].o[i].fd[k] < 0 || fcntl(jobs[t].o[i].fd[k], F_GETFD) == FD_CLOEXEC,
				      "fd %d not close-on-exec", jobs[t].o[i].fd[k]);
			CHECK(tok_ok(&jobs[t].o[i]), "fd %d lost its object", jobs[t].o[i].fd[0]);
		}

	/* 2: close_range sweeps them all; the threads' numbers are free again. */
	CHECK(syscall(SYS_close_range, (unsigned)from, ~0u, 0) == 0, "close_range: %s", strerror(errno));
	for (int t = 0; t < NT; t++)
		for (int i = 0; i < PER; i++)
			for (int k = 0; k < 2; k++)
				CHECK(jobs[t].o[i].fd[k] < 0 || !fd_valid(jobs[t].o[i].fd[k]),
				      "fd %d survived close_range", jobs[t].o[i].fd[k]);
	CHECK(count_fds() == before + 1, "%d fds after close_range, want %d", count_fds(), before + 1);

	/* 3: create again: placed from the bottom of each range, all intact;
	 * then closefrom() sweeps once more. */
	run(jobs);
	for (int t = 0; t < NT; t++) {
		for (int i = 0; i < PER; i++)
			CHECK(tok_ok(&jobs[t].o[i]), "fd %d lost its object", jobs[t].o[i].fd[0]);
		if (placed_mode)
			/* The main thread shares a range with one worker. */
			CHECK(jobs[t].o[0].fd[0] == jobs[t].lo ||
			      (jobs[t].o[0].fd[0] == jobs[t].lo + 1 && keep == jobs[t].lo),
			      "range [%d,%d) not reused from its start: %d",
			      jobs[t].lo, jobs[t].hi, jobs[t].o[0].fd[0]);
	}
	closefrom(lowest_of(jobs));
	CHECK(count_fds() == before + 1, "%d fds after closefrom, want %d", count_fds(), before + 1);

	/* 4: and the library still works for the next fds. */
	run(jobs);
	for (int t = 0; t < NT; t++)
		for (int i = 0; i < PER; i++)
			tok_check_close(&jobs[t].o[i]);
	{
		struct stat st;

		CHECK(fstat(keep, &st) == 0 && S_ISCHR(st.st_mode), "kept fd %d changed", keep);
	}
	close(keep);
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	printf("close_range/closefrom: ok (%s)\n", argv[1]);
	return 0;
}
