// SPDX-License-Identifier: GPL-2.0
/*
 * fdrange_race on|off [ITERS]: threads with ranges of their own allocate
 * and close concurrently (ITERS rounds of 16 fds each): every fd in its
 * thread's range, never one fd twice, and afterwards next_fd still finds
 * the lowest free number.  On or off, it then prints the ns per
 * eventfd()+close() without a range (ITERS * 20 of them), the check's
 * cost, for the reader to compare between kernels (TCG: indicative only):
 * in a fork child's fresh table, and in this process's.
 */
#include "fdrange.h"

/* Threads with ranges of their own, allocating and closing at once. */
#define NT 3
#define HELD 16
static atomic_int go;
static _Atomic unsigned char owner_of[4096];

static void *racer(void *arg)
{
	unsigned lo = 512 + 64 * (unsigned)(long)arg, hi = lo + 64;  /* below RLIMIT_NOFILE */
	int held[HELD];

	set_range(lo, hi);
	while (!atomic_load(&go))
		sched_yield();
	for (long i = 0; i < iters; i++) {
		for (int k = 0; k < HELD; k++) {
			held[k] = eventfd(0, EFD_CLOEXEC);
			CHECK(in(held[k], lo, hi), "thread %ld: fd %d outside [%u,%u)",
			      (long)arg, held[k], lo, hi);
			if (held[k] >= 0 && held[k] < 4096)
				CHECK(atomic_exchange(&owner_of[held[k]], 1) == 0,
				      "fd %d handed out twice", held[k]);
		}
		for (int k = 0; k < HELD; k++) {
			if (held[k] >= 0 && held[k] < 4096)
				atomic_store(&owner_of[held[k]], 0);
			close(held[k]);
		}
	}
	return NULL;
}

static void threads_race(void)
{
	pthread_t t[NT];
	int lowest = lowest_free(), after;

	for (long i = 0; i < NT; i++)
		pthread_create(&t[i], NULL, racer, (void *)i);
	atomic_store(&go, 1);
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	after = lowest_free();
	CHECK(after == lowest, "lowest free %d before the race, %d after", lowest, after);
	/* next_fd must still find the lowest free number */
	after = eventfd(0, EFD_CLOEXEC);
	CHECK(after == lowest, "after the race: got %d, lowest free %d", after, lowest);
	close(after);
}

/* ns per eventfd()+close() without a range: the check's cost, compared
 * between kernels by the caller. */
static void cost(long n, const char *where)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		close(eventfd(0, 0));
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%s: cost %.0f ns per eventfd+close without a range (%ld, %s)\n",
	       prog, ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n, n, where);
}

/*
 * In a fork child, whose table no task has set a range on (with patch
 * 0007: no group locks), then here, where the racing threads had ranges
 * (with 0007: every allocation and close also takes a group lock).
 */
static void cost_of_check(void)
{
	pid_t c = fork();

	if (c == 0) {
		cost(iters * 20, "table without ranges");
		fflush(stdout);
		_exit(0);
	}
	if (c > 0)
		waitpid(c, NULL, 0);
	cost(iters * 20, "table where threads had ranges");
}

int main(int argc, char **argv)
{
	return range_main(argc, argv, "fdrange_race", threads_race, cost_of_check);
}
