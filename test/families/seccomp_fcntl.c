/* SPDX-License-Identifier: MIT */
/*
 * A sandboxed two-thread program: it installs a seccomp filter that allows
 * every syscall except fcntl with a command other than F_GETFD, F_SETFD,
 * F_GETFL and F_SETFL (a sandbox that never expected its program to
 * duplicate fds), then creates fds in two threads at once.  Plain, the
 * program never calls such an fcntl and exits 0.
 *
 *   seccomp_fcntl seccomp DIR   filter by seccomp(2) (SECCOMP_SET_MODE_FILTER,
 *                               through syscall(SYS_seccomp)), action
 *                               SECCOMP_RET_KILL_PROCESS
 *   seccomp_fcntl prctl DIR     filter by prctl(PR_SET_SECCOMP,
 *                               SECCOMP_MODE_FILTER), action SECCOMP_RET_TRAP
 *   seccomp_fcntl exec DIR      installs the filter (seccomp(2), kill), then
 *                               execve()s itself as "inherited DIR" with the
 *                               same environment (LD_PRELOAD too): the
 *                               library, if preloaded, starts under it
 *   seccomp_fcntl inherited DIR (what exec runs: no filter of its own; fails
 *                               if none was inherited)
 *
 * Before the threads, a forked child calls fcntl(F_DUPFD) and must die of
 * SIGSYS (the filter is in force: the check can fail).  Then two threads
 * each create a TCP socket, a pipe, an eventfd and open /dev/null, meet at
 * a barrier, and the main thread writes DIR/held and waits (at most 10 s)
 * for DIR/go, so that the fd table can be sampled; then everything is
 * closed, "seccomp_fcntl MODE: ok fds=..." printed and the exit status is
 * 0.  Killed by the filter the process exits with SIGSYS (shells: 159).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../seccomp_fcntl_filter.h"

#define PER_THREAD 5

static const char *dir;
static pthread_barrier_t met;
static int fds[2][PER_THREAD];

static int install(int use_prctl)
{
	if (install_fcntl_filter(use_prctl ? FILTER_PRCTL : FILTER_SECCOMP,
				 use_prctl ? SECCOMP_RET_TRAP : SECCOMP_RET_KILL_PROCESS)) {
		perror("seccomp_fcntl: install the filter");
		return -1;
	}
	return 0;
}

/* The filter is in force: a child's F_DUPFD dies of SIGSYS, F_GETFD works. */
static int filter_works(void)
{
	int st;
	pid_t c;

	if (fcntl(1, F_GETFD) < 0) {
		perror("seccomp_fcntl: F_GETFD refused");
		return -1;
	}
	c = fork();
	if (c < 0)
		return -1;
	if (c == 0) {
		syscall(__NR_fcntl, 1, F_DUPFD, 10);
		_exit(0);
	}
	if (waitpid(c, &st, 0) != c || !WIFSIGNALED(st) || WTERMSIG(st) != SIGSYS) {
		fprintf(stderr, "seccomp_fcntl: the filter is not in force (child status %#x)\n", st);
		return -1;
	}
	return 0;
}

static int exists(const char *name)
{
	char p[4096];
	struct stat s;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return stat(p, &s) == 0;
}

static void *make_fds(void *arg)
{
	int *f = arg, p[2] = { -1, -1 };

	f[0] = socket(AF_INET, SOCK_STREAM, 0);
	f[1] = open("/dev/null", O_RDONLY);
	if (pipe(p) == 0) {
		f[2] = p[0];
		f[3] = p[1];
	} else {
		f[2] = f[3] = -1;
	}
	f[4] = eventfd(0, EFD_CLOEXEC);
	pthread_barrier_wait(&met);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	char held[4200];
	FILE *h;
	int bad = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: seccomp_fcntl seccomp|prctl|exec|inherited DIR\n");
		return 2;
	}
	dir = argv[2];
	if (!strcmp(argv[1], "seccomp") || !strcmp(argv[1], "prctl")) {
		if (install(!strcmp(argv[1], "prctl")))
			return 1;
	} else if (!strcmp(argv[1], "exec")) {
		char *args[] = { argv[0], "inherited", argv[2], NULL };
		extern char **environ;

		if (install(0))
			return 1;
		execve("/proc/self/exe", args, environ);
		perror("seccomp_fcntl: execve");
		return 1;
	} else if (strcmp(argv[1], "inherited")) {
		fprintf(stderr, "seccomp_fcntl: unknown mode %s\n", argv[1]);
		return 2;
	}
	if (filter_works())
		return 1;
	pthread_barrier_init(&met, NULL, 2);
	if (pthread_create(&t, NULL, make_fds, fds[1]))
		return 1;
	make_fds(fds[0]);
	pthread_join(t, NULL);
	snprintf(held, sizeof(held), "%s/held", dir);
	h = fopen(held, "w");
	if (!h || fclose(h))
		return 1;
	for (int i = 0; i < 200 && !exists("go"); i++)
		usleep(50000);
	printf("seccomp_fcntl %s: ", argv[1]);
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < PER_THREAD; i++) {
			if (fds[k][i] < 0 || close(fds[k][i]))
				bad = 1;
		}
	printf("%s fds=", bad ? "FAILED" : "ok");
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < PER_THREAD; i++)
			printf("%s%d", k || i ? "," : "", fds[k][i]);
	printf("\n");
	return bad;
}
