/* SPDX-License-Identifier: MIT */
/*
 * The public fdrange_thread_range() in a child of fork(), called from a
 * thread of the child that has placed nothing yet (the child has no block
 * of its own at that point): it gives a range of the child's own, and the
 * thread's next fd lands in it.  (It used to dereference a NULL block
 * pointer: SIGSEGV.)
 */
#include "common.h"

#include <sys/wait.h>

static int (*range)(int *, int *);

static void *ask(void *arg)
{
	int lo = -1, hi = -1, r = range(&lo, &hi), fd;

	(void)arg;
	if (r)
		return (void *)(long)(100 - r);
	fd = eventfd(0, 0);
	if (fd < lo || fd >= hi)
		return (void *)10L;
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	pid_t c;
	int st;

	test_mode(argc, argv);
	range = (int (*)(int *, int *))dlsym(RTLD_DEFAULT, "fdrange_thread_range");
	CHECK(range, "no fdrange_thread_range");
	c = fork();
	CHECK(c >= 0, "fork");
	if (c == 0) {
		pthread_t t;
		void *r;

		if (pthread_create(&t, NULL, ask, NULL) || pthread_join(t, &r))
			_exit(20);
		_exit((int)(long)r);
	}
	CHECK(waitpid(c, &st, 0) == c, "waitpid");
	CHECK(WIFEXITED(st), "child killed by signal %d", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	CHECK(WEXITSTATUS(st) == 0, "child exit %d (10: fd outside its range; 100+e: error -e)",
	      WEXITSTATUS(st));
	printf("fdrange_thread_range in a fork child's new thread: a range of its own: ok (%s)\n",
	       argv[1]);
	return 0;
}
