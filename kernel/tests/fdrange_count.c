// SPDX-License-Identifier: GPL-2.0
/*
 * fdrange_count on|off: the kernel's count of the fds a table holds
 * (PR_GET_FD_RANGE's fifth value, which the min_open condition reads)
 * matches /proc/thread-self/fd after every path that opens or closes one:
 * pipe2, F_DUPFD, dup2 to a free and to an open fd, dup3, SCM_RIGHTS,
 * close_range, a failed open, close_range(UNSHARE) over the highest fds (a
 * shorter copy), a fork child's copy, a thread's unshare.  (Exec's
 * close-on-exec: fdrange_new_task.)
 */
#include "fdrange.h"

static void *count_in_unshared_thread(void *arg)
{
	(void)arg;
	CHECK(unshare(CLONE_FILES) == 0, "unshare: %s", strerror(errno));
	COUNT_MATCHES("a thread's unshared copy");
	return NULL;
}

/* close_range(UNSHARE) over the highest fds: the copy leaves them out
 * (a shorter table), and must not count them. */
static void *count_after_close_range_unshare(void *arg)
{
	(void)arg;
	CHECK(syscall(SYS_close_range, 900, ~0u, CLOSE_RANGE_UNSHARE) == 0,
	      "close_range(900, ~0, UNSHARE): %s", strerror(errno));
	CHECK(fcntl(900, F_GETFD) < 0 && fcntl(901, F_GETFD) < 0, "900/901 still open in the copy");
	COUNT_MATCHES("close_range(UNSHARE) over the highest fds");
	return NULL;
}

static void open_count_is_exact(void)
{
	int p[2], got, st;
	pthread_t t;
	pid_t pid;

	COUNT_MATCHES("start");
	CHECK(pipe2(p, O_CLOEXEC) == 0, "pipe: %s", strerror(errno));
	COUNT_MATCHES("pipe2");
	CHECK(fcntl(p[0], F_DUPFD_CLOEXEC, 700) == 700, "F_DUPFD 700: %s", strerror(errno));
	COUNT_MATCHES("F_DUPFD");
	CHECK(dup2(p[1], 701) == 701, "dup2 to 701: %s", strerror(errno));
	COUNT_MATCHES("dup2 to a free fd");
	CHECK(dup2(p[0], 701) == 701, "dup2 over 701: %s", strerror(errno));
	COUNT_MATCHES("dup2 over an open fd");
	CHECK(dup3(p[1], 702, O_CLOEXEC) == 702, "dup3 to 702: %s", strerror(errno));
	COUNT_MATCHES("dup3");
	got = pass_fd(p[0]);
	CHECK(got >= 0, "SCM_RIGHTS: nothing received");
	COUNT_MATCHES("SCM_RIGHTS");
	CHECK(syscall(SYS_close_range, 700, 702, 0) == 0, "close_range: %s", strerror(errno));
	COUNT_MATCHES("close_range");
	CHECK(open("/nonexistent-fdrange", O_RDONLY | O_CLOEXEC) < 0, "/nonexistent-fdrange opened");
	COUNT_MATCHES("a failed open (the fd put back)");
	CHECK(fcntl(0, F_DUPFD_CLOEXEC, 900) == 900 && fcntl(0, F_DUPFD_CLOEXEC, 901) == 901,
	      "F_DUPFD 900, 901: %s", strerror(errno));
	pthread_create(&t, NULL, count_after_close_range_unshare, NULL);
	pthread_join(t, NULL);
	close(900);
	close(901);
	COUNT_MATCHES("after the close_range(UNSHARE) thread");
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		failures = 0;
		COUNT_MATCHES("fork child");
		_exit(failures ? 1 : 0);
	}
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st), "fork child's count");
	pthread_create(&t, NULL, count_in_unshared_thread, NULL);
	pthread_join(t, NULL);
	COUNT_MATCHES("after a thread's unshare");
	close(got);
	close(p[0]);
	close(p[1]);
	COUNT_MATCHES("closed");
}

int main(int argc, char **argv)
{
	return range_main(argc, argv, "fdrange_count", open_count_is_exact, NULL);
}
