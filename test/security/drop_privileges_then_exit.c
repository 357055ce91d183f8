/* SPDX-License-Identifier: MIT */
/*
 * A process started as root that creates an fd, drops to nobody (like
 * memcached -u nobody, sshd's children, any daemon) and then ends:
 *   exit        exit(0), destructors run as nobody
 *   sigterm     killed by SIGTERM, no destructors
 *   fork-exit   the same in a forked child, exit(0); the parent stays root
 *   fork-sigterm
 * The child's pid goes to stdout (the process's own for the first two) so
 * that drop_privileges_leaves_nothing.sh can look for what it left.
 * usage: drop_privileges_then_exit plain|placed exit|sigterm|fork-exit|fork-sigterm
 */
#include "../check.h"

#include <grp.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOBODY 65534

static void drop_and_end(bool term)
{
	int fd = eventfd(0, EFD_CLOEXEC);

	CHECK(fd >= 0, "eventfd: %s", strerror(errno));
	CHECK(setgroups(0, NULL) == 0, "setgroups: %s", strerror(errno));
	CHECK(setgid(NOBODY) == 0, "setgid: %s", strerror(errno));
	CHECK(setuid(NOBODY) == 0, "setuid: %s", strerror(errno));
	CHECK(getuid() == NOBODY && geteuid() == NOBODY, "still uid %d", (int)geteuid());
	close(fd);
	if (term) {
		kill(getpid(), SIGTERM);
		pause();
	}
	exit(0);
}

int main(int argc, char **argv)
{
	const char *how;
	bool fork_first, term;

	test_mode(argc, argv);
	CHECK(argc == 3, "usage: %s plain|placed exit|sigterm|fork-exit|fork-sigterm", argv[0]);
	how = argv[2];
	fork_first = !strncmp(how, "fork-", 5);
	term = !strcmp(how + (fork_first ? 5 : 0), "sigterm");
	CHECK(term || !strcmp(how + (fork_first ? 5 : 0), "exit"), "unknown way to end: %s", how);
	if (geteuid() != 0) {
		printf("SKIP: not root\n");
		return 77;
	}
	alarm(20);
	if (!fork_first) {
		printf("%ld\n", (long)getpid());
		fflush(stdout);
		drop_and_end(term);
	} else {
		pid_t pid;
		int st;

		fflush(stdout);
		pid = fork();
		CHECK(pid >= 0, "fork: %s", strerror(errno));
		if (pid == 0)
			drop_and_end(term);
		CHECK(waitpid(pid, &st, 0) == pid, "waitpid: %s", strerror(errno));
		CHECK(term ? WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM :
		       WIFEXITED(st) && WEXITSTATUS(st) == 0, "child: status 0x%x", st);
		printf("%ld\n", (long)pid);
	}
	return 0;
}
