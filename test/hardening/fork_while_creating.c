/* SPDX-License-Identifier: MIT */
/*
 * fork() from one thread while other threads create, place and close fds;
 * each child creates fds at once, through several wrapped calls, before
 * anything else.  The fork may catch another thread between its F_DUPFD
 * and the close of the original: the child then inherits both numbers of
 * an fd that no thread of the child knows about (without the library it
 * inherits one); that is the known cost, not a fault.  What must hold: the
 * child's own new fds work, are not moved (the child has one thread: the
 * kernel's numbers, below BASE), and are all gone after it closes them;
 * the parent loses nothing.
 */
#include "hard.h"

#include <netinet/in.h>
#include <sys/socket.h>

#define NCHURN 3

static volatile int stop;

/* In the child of a threaded parent: async-signal-safe calls only. */
static void child(void)
{
	int before = count_fds_raw(), p[2], sv[2], e, n, s;
	uint64_t v = 7, got = 0;
	char c = 'c', r = 0;

	CHECK_RAW(before > 0, "count");
	CHECK_RAW(pipe(p) == 0, "pipe");
	CHECK_RAW(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
	e = eventfd(0, 0);
	n = open("/dev/null", O_WRONLY);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	CHECK_RAW(e >= 0 && n >= 0 && s >= 0, "eventfd/open/socket");
	CHECK_RAW(write(p[1], &c, 1) == 1 && read(p[0], &r, 1) == 1 && r == 'c', "pipe data");
	CHECK_RAW(write(sv[0], &c, 1) == 1 && read(sv[1], &r, 1) == 1 && r == 'c', "socketpair data");
	CHECK_RAW(write(e, &v, 8) == 8 && read(e, &got, 8) == 8 && got == 7, "eventfd data");
	CHECK_RAW(write(n, &c, 1) == 1, "/dev/null");
	if (api_range) {
		int fds[] = { p[0], p[1], sv[0], sv[1], e, n, s };

		for (unsigned i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
			CHECK_RAW(fds[i] >= 0 && fds[i] < 64, "child fd moved although the child has one thread");
	}
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
	close(e);
	close(n);
	close(s);
	CHECK_RAW(count_fds_raw() == before, "child leaked fds");
	_exit(0);
}

int main(int argc, char **argv)
{
	struct churn c[NCHURN] = { 0 };
	unsigned nforks = (unsigned)env_num("HARD_FORKS", 300);
	int before;

	hard_init(argc, argv);
	before = count_fds();
	churn_start(c, NCHURN, &stop, false);
	for (unsigned i = 0; i < nforks; i++) {
		int st;
		pid_t pid = fork();

		CHECK(pid >= 0, "fork: %s", strerror(errno));
		if (pid == 0)
			child();
		CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child %u: status %#x", i, st);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	churn_join(c, NCHURN);
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	printf("fork while creating: %u children ok (%s)\n", nforks, argv[1]);
	return 0;
}
