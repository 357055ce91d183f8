// SPDX-License-Identifier: GPL-2.0
/*
 * fdrange_new_task on|off: a new thread, a fork child and an exec'd
 * program start without a range (their fds are lowest-free), and exec's
 * close-on-exec leaves the kernel's fd count exact.  The mutant-range boot
 * of kernel/test.sh (a new task keeps its parent's range) must fail here
 * with "new thread inherited".
 */
#include "fdrange.h"

static void *thread_start_has_none(void *arg)
{
	unsigned r[3];
	int want = lowest_free(), fd = eventfd(0, EFD_CLOEXEC);

	(void)arg;
	get_range(r);
	CHECK(r[0] == 0 && r[1] == 0, "new thread inherited [%u,%u)", r[0], r[1]);
	CHECK(fd == want, "new thread: got %d, lowest free %d", fd, want);
	close(fd);
	return NULL;
}

static void new_tasks_start_without(void)
{
	pthread_t t;
	pid_t pid;
	int st;

	CHECK(set_range(200, 264) == 0, "set: %s", strerror(errno));
	pthread_create(&t, NULL, thread_start_has_none, NULL);
	pthread_join(t, NULL);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		unsigned r[3];
		int want = lowest_free(), fd = eventfd(0, EFD_CLOEXEC);

		failures = 0;  /* the child's own verdict, not the parent's so far */

		get_range(r);
		CHECK(r[0] == 0 && r[1] == 0, "fork child inherited [%u,%u)", r[0], r[1]);
		CHECK(fd == want, "fork child: got %d, lowest free %d", fd, want);
		_exit(failures ? 1 : 0);
	}
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st), "fork child failed");
	pid = fork();
	if (pid == 0) {
		/* the exec'd image checks itself (main, "exec-child"); one
		 * close-on-exec fd for exec to close and uncount */
		set_range(200, 264);
		CHECK(eventfd(0, EFD_CLOEXEC) >= 0, "eventfd: %s", strerror(errno));
		execl(self_path, self_path, "exec-child", (char *)NULL);
		_exit(2);
	}
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st),
	      "exec'd program: status %d", st);
	set_range(0, 0);
}

/* The exec'd image (fdrange_new_task exec-child) checks itself. */
static int exec_child(void)
{
	unsigned r[3];
	int want = lowest_free(), fd = eventfd(0, EFD_CLOEXEC);

	prog = "fdrange_new_task exec-child";
	get_range(r);
	CHECK(r[0] == 0 && r[1] == 0, "exec'd program inherited [%u,%u)", r[0], r[1]);
	CHECK(fd == want, "exec'd program: got %d, lowest free %d", fd, want);
	COUNT_MATCHES("exec'd program, close-on-exec fds closed");
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "exec-child"))
		return exec_child();
	return range_main(argc, argv, "fdrange_new_task", new_tasks_start_without, NULL);
}
