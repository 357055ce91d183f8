/* SPDX-License-Identifier: MIT */
/*
 * fdrange_thread_range() never reports a range the thread cannot use: with
 * fixed ranges (FDRANGE_WIDTH=8192) and RLIMIT_NOFILE 1024, the thread of
 * range 0 gets [BASE, 960) (cut at the limit, as its fds are), and the
 * thread of range 1, which lies wholly above the limit, gets -ERANGE.
 * (It returned 0 and [8256, 16448) before, against what fdrange.h says.)
 */
#include "common.h"

static int (*range)(int *, int *);
static pthread_barrier_t both;

struct res {
	int ret, lo, hi, fd;
};

static void *run(void *arg)
{
	struct res *r = arg;

	int fd = eventfd(0, EFD_CLOEXEC);  /* the thread's first fd: its range */

	r->ret = range ? range(&r->lo, &r->hi) : -ENOSYS;
	__atomic_store_n(&r->fd, fd, __ATOMIC_RELEASE);
	pthread_barrier_wait(&both);
	return NULL;
}

int main(int argc, char **argv)
{
	struct rlimit rl, orig;
	struct res r[2] = { { 0 } };
	pthread_t t[2];

	test_mode(argc, argv);
	range = (int (*)(int *, int *))dlsym(RTLD_DEFAULT, "fdrange_thread_range");
	CHECK(getrlimit(RLIMIT_NOFILE, &orig) == 0, "getrlimit");
	rl = orig;
	rl.rlim_cur = 1024;
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit");
	pthread_barrier_init(&both, NULL, 2);
	/* One after the other: the first takes range 0, the second range 1. */
	for (int i = 0; i < 2; i++) {
		CHECK(pthread_create(&t[i], NULL, run, &r[i]) == 0, "pthread_create");
		while (!__atomic_load_n(&r[i].fd, __ATOMIC_ACQUIRE))
			usleep(1000);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2; i++)
		CHECK(r[i].fd > 0 && r[i].fd < 1023, "fd %d", r[i].fd);
	if (placed_mode) {
		CHECK(r[0].ret == 0 && r[0].lo == 64 && r[0].hi == 960,
		      "range 0: %d [%d,%d), expected 0 [64,960)", r[0].ret, r[0].lo, r[0].hi);
		CHECK(r[0].fd >= r[0].lo && r[0].fd < r[0].hi, "range 0's fd %d outside it", r[0].fd);
		CHECK(r[1].ret == -ERANGE, "range 1 lies above the limit, yet %d [%d,%d)", r[1].ret,
		      r[1].lo, r[1].hi);
	}
	for (int i = 0; i < 2; i++)
		close(r[i].fd);
	CHECK(setrlimit(RLIMIT_NOFILE, &orig) == 0, "restore");
	printf("thread ranges cut at the limit: ok (%s)\n", argv[1]);
	return 0;
}
