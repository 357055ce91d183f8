/* SPDX-License-Identifier: MIT */
/*
 * A process that creates and registers many fds from two threads, then
 * forks a child that does the same on a smaller scale: 2 x 1000 eventfds,
 * each added to an epoll instance, all open at once (so their numbers
 * spread over the table), then closed; the child 100 more.  Everything
 * must succeed and both must exit 0 -- the workload whose stats-block
 * writes touch one page per 512 fds, run by shm_full_no_sigbus.sh with
 * /dev/shm full.  With fill=PATH it writes PATH until its file system is
 * full (ENOSPC) just before fork(): the parent started with room, the child
 * starts without.
 * usage: many_fds_two_threads_then_fork plain|placed [fill=PATH]
 */
#include "../check.h"

#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define PER_THREAD 1000

static int ep;

static void *worker(void *arg)
{
	int *fds = arg;

	for (int i = 0; i < PER_THREAD; i++) {
		struct epoll_event ev = { .events = EPOLLIN };

		fds[i] = eventfd(0, EFD_CLOEXEC);
		CHECK(fds[i] >= 0, "eventfd %d: %s", i, strerror(errno));
		ev.data.fd = fds[i];
		CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev) == 0, "epoll_ctl(ADD, %d): %s",
		      fds[i], strerror(errno));
	}
	return NULL;
}

/* Write @path until its file system is full. */
static void fill(const char *path)
{
	static char buf[65536];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	long total = 0;

	CHECK(fd >= 0, "open %s: %s", path, strerror(errno));
	for (;;) {
		ssize_t n = write(fd, buf, sizeof(buf));

		if (n < 0 && errno == ENOSPC)
			break;
		CHECK(n > 0, "write %s: %s", path, n < 0 ? strerror(errno) : "0 bytes");
		total += n;
		CHECK(total < (1L << 30), "%s: 1 GiB written and not full", path);
	}
	CHECK(close(fd) == 0, "close: %s", strerror(errno));
}

static void child(void)
{
	for (int i = 0; i < 100; i++) {
		struct epoll_event ev = { .events = EPOLLIN };
		int fd = eventfd(0, EFD_CLOEXEC);

		CHECK(fd >= 0, "child eventfd: %s", strerror(errno));
		ev.data.fd = fd;
		CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0, "child epoll_ctl: %s",
		      strerror(errno));
		close(fd);
	}
	exit(0);   /* exit(), not _exit(): destructors run */
}

int main(int argc, char **argv)
{
	static int fds[2][PER_THREAD];
	struct rlimit rl;
	pthread_t t[2];
	pid_t pid;
	int st;

	test_mode(argc, argv);
	alarm(60);
	/* Room for 2000 fds wherever the ranges put them. */
	CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0, "getrlimit: %s", strerror(errno));
	if (rl.rlim_cur < 8192) {
		rl.rlim_cur = rl.rlim_max < 8192 ? rl.rlim_max : 8192;
		CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit: %s", strerror(errno));
	}
	if (rl.rlim_cur < 2 * PER_THREAD + 64) {
		printf("SKIP: RLIMIT_NOFILE hard limit %lu too low\n", (unsigned long)rl.rlim_max);
		return 77;
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	CHECK(ep >= 0, "epoll_create1: %s", strerror(errno));
	for (int i = 0; i < 2; i++)
		CHECK(pthread_create(&t[i], NULL, worker, fds[i]) == 0, "pthread_create");
	for (int i = 0; i < 2; i++)
		CHECK(pthread_join(t[i], NULL) == 0, "pthread_join");
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < PER_THREAD; j++)
			CHECK(close(fds[i][j]) == 0, "close: %s", strerror(errno));
	if (argc > 2 && !strncmp(argv[2], "fill=", 5))
		fill(argv[2] + 5);
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0)
		child();
	CHECK(waitpid(pid, &st, 0) == pid, "waitpid: %s", strerror(errno));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "fork child: %s %d",
	      WIFSIGNALED(st) ? "killed by signal" : "exit status",
	      WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	printf("2 x %d eventfds registered from two threads, a forked child 100 more: all fine\n",
	       PER_THREAD);
	return 0;
}
