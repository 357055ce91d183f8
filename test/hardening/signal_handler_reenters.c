/* SPDX-License-Identifier: MIT */
/*
 * Signal handlers that create fds through wrapped calls, delivered to
 * threads that are themselves inside wrapped calls (creating, placing and
 * closing fds as fast as they can).  The handler's fds must be valid,
 * reach their own objects, land in the interrupted thread's range, and be
 * gone after the handler: the placement has no lock a handler could
 * deadlock on and no state an interrupted placement could leave torn.
 */
#include "hard.h"

#include <sys/socket.h>
#include <sys/sysmacros.h>

#define NCHURN 3

static volatile int stop;
static unsigned long handled, handler_outside;

/* Only async-signal-safe calls: pipe, open, socket, read, write, close. */
static void handler(int sig)
{
	int saved = errno, p[2], n, s;
	char c = 'x', got = 0;

	(void)sig;
	if (pipe(p) == 0) {
		if (write(p[1], &c, 1) != 1 || read(p[0], &got, 1) != 1 || got != 'x')
			_exit(10);
		if (api_range && (!in_my_range(p[0]) || !in_my_range(p[1])))
			__atomic_fetch_add(&handler_outside, 1, __ATOMIC_RELAXED);
		close(p[0]);
		close(p[1]);
	} else if (errno != EMFILE) {
		_exit(11);
	}
	n = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (n >= 0) {
		struct stat st;

		if (fstat(n, &st) != 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3))
			_exit(12);
		close(n);
	}
	s = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (s >= 0)
		close(s);
	__atomic_fetch_add(&handled, 1, __ATOMIC_RELAXED);
	errno = saved;
}

int main(int argc, char **argv)
{
	struct churn c[NCHURN] = { 0 };
	struct sigaction sa = { 0 };
	double t0, seconds = (double)env_num("HARD_SECONDS", 2);
	unsigned long sent = 0, ops, seed = 42;
	int before;

	hard_init(argc, argv);
	before = count_fds();
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction");
	churn_start(c, NCHURN, &stop, false);
	t0 = now_s();
	while (now_s() - t0 < seconds) {
		struct timespec ts = { 0, 20000 };

		pthread_kill(c[xorshift(&seed) % NCHURN].tid, SIGUSR1);
		sent++;
		nanosleep(&ts, NULL);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	ops = churn_join(c, NCHURN);
	CHECK(handled > 100, "only %lu of %lu signals handled", handled, sent);
	CHECK(handler_outside == 0, "%lu handler fds outside the thread's range", handler_outside);
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	printf("signal handler: %lu handlers ran during %lu operations in %d threads: ok (%s)\n",
	       handled, ops, NCHURN, argv[1]);
	return 0;
}
