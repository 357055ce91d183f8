/* SPDX-License-Identifier: MIT */
/*
 * A signal handler that interrupts its own thread in the middle of a move
 * (between the F_DUPFD and the close of the original) and creates an fd
 * that meets EMFILE must not wait for that move: it cannot end while the
 * handler runs.  The table is filled by raw syscalls but for fd 10 and the
 * highest number; one thread creates and closes in a loop while a timer
 * signals it, and the handler creates an eventfd.  It used to spin about
 * 100 ms in the handler, and, the next signal being due by then, for ever
 * (seen: no end in 10 s).  The handler may get EMFILE (the move holds the
 * free number: a limit in docs/hardening.md); the program must finish, and
 * no handler may take more than a few milliseconds.
 *
 * No helper threads (test/check.h's idle thread, hard.h's watchdog): the
 * case needs the creating thread to be the process's only busy one.  The
 * meson timeout is the watchdog.
 *
 *   handler_emfile_mid_move plain|placed
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define LIMIT 512
#define FAIL(...) do { fprintf(stderr, "handler_emfile_mid_move: " __VA_ARGS__); \
		       fputc('\n', stderr); exit(1); } while (0)

static int stop;
static double longest;
static unsigned long runs;

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void handler(int sig)
{
	int e = errno, fd;
	double t0 = now_ms(), d;

	(void)sig;
	fd = eventfd(0, 0);
	if (fd >= 0)
		close(fd);
	d = now_ms() - t0;
	if (d > longest)
		longest = d;
	runs++;
	errno = e;
}

static void *creator(void *arg)
{
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGUSR1 };
	struct itimerspec its = { { 0, 10000000 }, { 0, 10000000 } };
	timer_t tm;

	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &sev, &tm) || timer_settime(tm, 0, &its, NULL))
		FAIL("timer: %s", strerror(errno));
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		int fd = open("/dev/null", O_RDONLY);

		if (fd >= 0)
			close(fd);
	}
	timer_delete(tm);
	return arg;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = handler, .sa_flags = SA_RESTART };
	bool placed = argc > 1 && !strcmp(argv[1], "placed");
	struct rlimit rl;
	pthread_t t;

	if (argc < 2 || (!placed && strcmp(argv[1], "plain")))
		FAIL("usage: %s plain|placed", argv[0]);
	if (placed != (dlsym(RTLD_DEFAULT, "fdrange_version") != NULL))
		FAIL("mode %s but libfdrange %s loaded", argv[1], placed ? "is not" : "is");
	if (sigaction(SIGUSR1, &sa, NULL) || getrlimit(RLIMIT_NOFILE, &rl))
		FAIL("sigaction/getrlimit: %s", strerror(errno));
	rl.rlim_cur = LIMIT;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		FAIL("setrlimit: %s", strerror(errno));
	while (syscall(SYS_eventfd2, 0, 0) >= 0)
		;
	syscall(SYS_close, 10);
	syscall(SYS_close, LIMIT - 1);
	if (pthread_create(&t, NULL, creator, NULL))
		FAIL("pthread_create");
	sleep(2);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	if (runs < 10)
		FAIL("only %lu handler runs in 2 s", runs);
	if (longest > 20)
		FAIL("a handler took %.1f ms (its own thread's move cannot end meanwhile)", longest);
	printf("%lu handler runs, the longest %.2f ms: ok (%s)\n", runs, longest, argv[1]);
	return 0;
}
