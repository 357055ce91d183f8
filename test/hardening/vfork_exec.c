/* SPDX-License-Identifier: MIT */
/*
 * vfork() + exec while other threads create fds.  The vfork child borrows
 * the parent's memory (and so the library's state and the thread's range
 * slot) but has its own fd table: the fds it creates before exec are
 * placed in its own table and must not touch the parent's.  The exec'd
 * program (with the preload inherited) writes its output through a pipe
 * the child set up; the parent reads it back intact.
 */
#include "hard.h"

#define NCHURN 2

static volatile int stop;

int main(int argc, char **argv)
{
	struct churn c[NCHURN] = { 0 };
	unsigned rounds = (unsigned)env_num("HARD_FORKS", 200);
	int before;

	hard_init(argc, argv);
	before = count_fds();
	churn_start(c, NCHURN, &stop, false);
	for (unsigned i = 0; i < rounds; i++) {
		char want[32], got[64] = { 0 };
		int p[2], st, len;
		ssize_t n;
		pid_t pid;

		len = snprintf(want, sizeof(want), "round %u\n", i);
		CHECK(pipe2(p, O_CLOEXEC) == 0, "pipe2");
		pid = vfork();
		CHECK(pid >= 0, "vfork: %s", strerror(errno));
		if (pid == 0) {
			/* Wrapped calls in the vfork child, then exec. */
			int null = open("/dev/null", O_RDONLY);

			if (null < 0 || dup2(null, 0) != 0 || dup2(p[1], 1) != 1)
				_exit(20);
			close(null);
			execl("/bin/echo", "echo", want + 0, (char *)NULL);
			_exit(127);
		}
		close(p[1]);
		n = read(p[0], got, sizeof(got) - 1);
		close(p[0]);
		CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
		/* echo adds a newline to "round N\n". */
		CHECK(n == len + 1 && !memcmp(got, want, (size_t)len), "child wrote '%s'", got);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	churn_join(c, NCHURN);
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	printf("vfork+exec: %u rounds ok (%s)\n", rounds, argv[1]);
	return 0;
}
