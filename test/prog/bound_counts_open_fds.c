/* SPDX-License-Identifier: MIT */
/*
 * The do-no-harm bound: no chunk ends above max(1024, 2 x open + 64),
 * open being the fds the process holds, counted when a claim would reach
 * past the last count's bound (lib/bound.c: the size of /proc/PID/fd on
 * Linux 6.2 and later, the directory's entries before).  The process holds
 * HELD fds, then a thread creates MADE more, so its chunks reach past
 * 1024.  Placed: the count happened, it saw at least the HELD fds and no
 * more than are open at the end, the bound is the one that count gives,
 * and no fd lies past it; on Linux 6.2 and later it was a stat, with no
 * directory read (which would take a reference on every open file).
 * Both modes: every fd valid, nothing leaks.
 */
#include "common.h"

#include <stdarg.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#define HELD 600
#define MADE 600

static int held[HELD], made[MADE];
static unsigned long n_statx, n_getdents;

/*
 * The library makes its own syscalls through the process's syscall()
 * (lib/syscall.c): this one, exported (-rdynamic in meson.build), so the
 * test sees how the library counted.  The test's own counting (readdir)
 * does not come here.
 */
long syscall(long n, ...)
{
	static long (*real)(long, ...);
	long a[6];
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (n == SYS_statx)
		__atomic_fetch_add(&n_statx, 1, __ATOMIC_RELAXED);
	if (n == SYS_getdents64)
		__atomic_fetch_add(&n_getdents, 1, __ATOMIC_RELAXED);
	return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* Linux 6.2 or later: /proc/PID/fd reports the open fds as its size. */
static bool stat_counts(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	return uname(&u) == 0 && sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
	       (major > 6 || (major == 6 && minor >= 2));
}

static void *create(void *arg)
{
	(void)arg;
	for (int i = 0; i < MADE; i += 2)
		CHECK(pipe(&made[i]) == 0, "pipe after %d: %s", i, strerror(errno));
	return NULL;
}

/* "... bound B (open fds counted N times, last L)" from the report. */
static void report_bound(unsigned long long *bound, unsigned long long *counts,
			 unsigned long long *last)
{
	static char text[16384];
	const char *at;

	read_report(text, sizeof(text));
	at = strstr(text, "; bound ");
	CHECK(at && sscanf(at, "; bound %llu (open fds counted %llu times, last %llu)", bound, counts,
			   last) == 3, "no bound in the report:\n%s", text);
}

int main(int argc, char **argv)
{
	pthread_t t;
	int before, highest = 0, open_now;

	test_mode(argc, argv);
	need_nofile(4096);
	before = count_fds();
	for (int i = 0; i < HELD; i += 2)
		CHECK(pipe(&held[i]) == 0, "pipe: %s", strerror(errno));
	CHECK(pthread_create(&t, NULL, create, NULL) == 0, "pthread_create");
	pthread_join(t, NULL);
	open_now = count_fds();
	for (int i = 0; i < MADE; i++) {
		CHECK(fd_valid(made[i]), "fd %d invalid", made[i]);
		if (made[i] > highest)
			highest = made[i];
	}
	if (placed_mode) {
		unsigned long long bound, counts, last, want;

		report_bound(&bound, &counts, &last);
		CHECK(counts >= 1, "no count of open fds, highest fd %d", highest);
		CHECK(last >= HELD && last <= (unsigned long long)open_now,
		      "the last count saw %llu open fds: %d were held before, %d are open now", last,
		      HELD, open_now);
		want = 2 * last + 64 > 1024 ? 2 * last + 64 : 1024;
		CHECK(bound == want, "bound %llu after a count of %llu, expected %llu", bound, last, want);
		CHECK((unsigned long long)highest < bound, "fd %d past the bound %llu", highest, bound);
		if (stat_counts())
			CHECK(n_statx >= counts && n_getdents == 0,
			      "%llu counts by %lu statx and %lu getdents64: the directory was read",
			      counts, n_statx, n_getdents);
		else
			CHECK(n_getdents >= counts, "%llu counts by %lu getdents64", counts, n_getdents);
		printf("counted %llu times (%lu statx, %lu getdents64), last %llu open of %d now; "
		       "bound %llu, highest fd %d\n", counts, n_statx, n_getdents, last, open_now, bound,
		       highest);
	}
	for (int i = 0; i < MADE; i++)
		CHECK(close(made[i]) == 0, "close %d", made[i]);
	for (int i = 0; i < HELD; i++)
		CHECK(close(held[i]) == 0, "close %d", held[i]);
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	printf("bound_counts_open_fds: ok (%s)\n", argv[1]);
	return 0;
}
