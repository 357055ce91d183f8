/* SPDX-License-Identifier: MIT */
/*
 * Children that no fork handler tells the library about, made by _Fork()
 * or a raw clone(SIGCHLD), are new processes like fork()'s: single-
 * threaded, their fds keep the kernel's numbers (the lowest free, as
 * without the library), and nothing they do reaches their parent's block.
 * A threaded parent makes 10 of each, every child opening two files (only
 * async-signal-safe calls: what such a child may make); afterwards a new
 * thread of the parent gets its first fd exactly where a new thread got
 * it before.
 * (Such children used to write their parent's shared block: their fds
 * were moved to 64 65, and their claims used up the parent's chunks and
 * owner records: a new parent thread's first fd went from 128 to 768.)
 */
#include "common.h"

#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

extern pid_t _Fork(void);

static int first_fd;

static void *one(void *arg)
{
	first_fd = eventfd(0, 0);
	CHECK(first_fd >= 0, "eventfd");
	return arg;
}

/* A new thread's first fd; the fd is kept open while @keep. */
static int new_thread_fd(bool keep)
{
	pthread_t t;

	CHECK(pthread_create(&t, NULL, one, NULL) == 0, "pthread_create");
	pthread_join(t, NULL);
	if (!keep)
		close(first_fd);
	return first_fd;
}

/* In the child: exit 0 if its fds are what they would be plain. */
static void child(void)
{
	int want = fcntl(0, F_DUPFD, 0), a, b;

	close(want);
	a = open("/dev/null", O_RDONLY);
	b = open("/dev/null", O_RDONLY);
	_exit(a == want && b > a && b < 64 ? 0 : 10);
}

static void wait_ok(pid_t c, const char *how, int i)
{
	int st;

	CHECK(c > 0, "%s: %s", how, strerror(errno));
	CHECK(waitpid(c, &st, 0) == c, "waitpid");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s child %d: exit %d signal %d", how, i,
	      WIFEXITED(st) ? WEXITSTATUS(st) : -1, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

int main(int argc, char **argv)
{
	int keep = new_thread_fd(true), before, after;

	test_mode(argc, argv);
	before = new_thread_fd(false);
	for (int i = 0; i < 10; i++) {
		pid_t c = _Fork();

		if (c == 0)
			child();
		wait_ok(c, "_Fork", i);
		c = (pid_t)syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
		if (c == 0)
			child();
		wait_ok(c, "clone", i);
	}
	after = new_thread_fd(false);
	CHECK(after == before, "a new thread's first fd: %d before the children, %d after", before,
	      after);
	close(keep);
	printf("20 children of _Fork and clone: kernel numbers, parent's fd %d then %d: ok (%s)\n",
	       before, after, argv[1]);
	return 0;
}
