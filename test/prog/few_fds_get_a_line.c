/* SPDX-License-Identifier: MIT */
/*
 * fd numbers grow with the fds a process holds, not with its threads:
 * threads alive at once, each holding the one file it opened (a thread per
 * connection, a pool's worker serving a file), get an 8-fd line each, not
 * a 64-fd chunk.  100 such threads: no two share a line.  300: the lines
 * that fit below FD_SETSIZE run out, and the rest keep the kernel's
 * numbers (which then fill the lines' free slots: plain numbering, the
 * harmless direction).  Either way every fd stays below FD_SETSIZE (the
 * process holds fewer than 1024), and the highest is below max(1024,
 * 2 x the fds open + 64).  Then 1000 short-lived threads, at most 50
 * alive, one file each: the same, and nothing left open.  (Each such
 * thread used to claim a whole chunk: 200 of them reached fd 12,864 under
 * a high limit, and select() programs aborted.)
 */
#include "common.h"

#include <sys/resource.h>

#define NT 300
#define APART 100
#define SHORT 1000
#define ALIVE 50

static int fds[NT];
static pthread_barrier_t opened, done;

static void *hold(void *arg)
{
	long i = (long)arg;

	fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CHECK(fds[i] >= 0, "open: %s", strerror(errno));
	pthread_barrier_wait(&opened);
	pthread_barrier_wait(&done);
	close(fds[i]);
	return NULL;
}

/* @n threads holding one fd each; their highest fd. */
static int hold_n(int n, long base, bool apart)
{
	static int owner[1 << 16];
	pthread_t t[NT];
	int top = 0, open_now, bound;

	pthread_barrier_init(&opened, NULL, n + 1);
	pthread_barrier_init(&done, NULL, n + 1);
	for (long i = 0; i < n; i++)
		CHECK(pthread_create(&t[i], NULL, hold, (void *)i) == 0, "pthread_create %ld", i);
	pthread_barrier_wait(&opened);
	open_now = count_fds();
	bound = 2 * open_now + 64 > 1024 ? 2 * open_now + 64 : 1024;
	memset(owner, -1, sizeof(owner));
	for (int i = 0; i < n; i++) {
		if (fds[i] > top)
			top = fds[i];
		CHECK(fds[i] < 1024, "thread %d of %d: fd %d beyond FD_SETSIZE with %d fds open", i,
		      n, fds[i], open_now);
		if (!placed_mode || !apart || fds[i] < base)
			continue;
		CHECK(owner[(fds[i] - base) / 8] == -1, "fds %d and %d of two threads on one line",
		      owner[(fds[i] - base) / 8], fds[i]);
		owner[(fds[i] - base) / 8] = fds[i];
	}
	CHECK(top < bound, "%d threads: highest fd %d, bound %d for %d open", n, top, bound,
	      open_now);
	pthread_barrier_wait(&done);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&opened);
	pthread_barrier_destroy(&done);
	return top;
}

static int top_short;

static void *brief(void *arg)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int top = __atomic_load_n(&top_short, __ATOMIC_RELAXED);

	CHECK(fd >= 0, "open: %s", strerror(errno));
	while (fd > top && !__atomic_compare_exchange_n(&top_short, &top, fd, true,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	usleep(200);
	close(fd);
	return arg;
}

int main(int argc, char **argv)
{
	long base = env_num("FDRANGE_BASE", 64);
	pthread_t t[ALIVE];
	struct rlimit rl;
	int before, top_apart, top;

	test_mode(argc, argv);
	CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0, "getrlimit");
	rl.rlim_cur = rl.rlim_max < 20000 ? rl.rlim_max : 20000;
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit");
	before = count_fds();
	top_apart = hold_n(APART, base, true);
	top = hold_n(NT, base, false);
	for (int i = 0; i < SHORT; i += ALIVE) {
		for (int k = 0; k < ALIVE; k++)
			CHECK(pthread_create(&t[k], NULL, brief, NULL) == 0, "pthread_create");
		for (int k = 0; k < ALIVE; k++)
			pthread_join(t[k], NULL);
	}
	CHECK(top_short < 1024, "short-lived threads reached fd %d", top_short);
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	printf("threads with one fd each: %d apart, highest fd %d; %d, highest %d; %d short-lived, "
	       "highest %d: ok (%s)\n", APART, top_apart, NT, top, SHORT, top_short, argv[1]);
	return 0;
}
