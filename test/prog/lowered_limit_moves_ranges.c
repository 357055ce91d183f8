/* SPDX-License-Identifier: MIT */
/*
 * A program that lowers its own RLIMIT_NOFILE after start (as memcached
 * does) gets its fds placed in chunks below the new limit (never at
 * limit - 1), whichever of setrlimit, prlimit(0), prlimit(own pid) or
 * prlimit64 it uses; two threads never share an 8-fd line.  Each thread
 * makes 8 fds: exactly its line (a thread holds a line before chunks).
 */
#include "common.h"

struct job {
	int fds[8];
	int lo, hi;
};

/* Both threads alive until both made their fds: a thread's chunks go back
 * to the pool when it exits. */
static pthread_barrier_t both;

static void *make(void *arg)
{
	struct job *j = arg;
	int (*range)(int *, int *) = (int (*)(int *, int *))dlsym(RTLD_DEFAULT, "fdrange_thread_range");

	for (int i = 0; i < 8; i += 2)
		CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, &j->fds[i]) == 0, "socketpair");
	j->lo = j->hi = -1;
	if (range)
		CHECK(range(&j->lo, &j->hi) == 0, "fdrange_thread_range");
	pthread_barrier_wait(&both);
	return NULL;
}

static void run(int limit, long base)
{
	struct job jobs[2];
	pthread_t t[2];
	long cap = (limit - 1) / 64 * 64;

	for (int i = 0; i < 2; i++)
		CHECK(pthread_create(&t[i], NULL, make, &jobs[i]) == 0, "pthread_create");
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2; i++) {
		for (int k = 0; k < 8; k++) {
			int fd = jobs[i].fds[k];

			CHECK(fd < limit - 1, "limit %d: fd %d not below it", limit, fd);
			if (placed_mode) {
				CHECK(fd >= base && fd < cap, "limit %d: fd %d outside [%ld,%ld)", limit,
				      fd, base, cap);
				CHECK(jobs[i].lo >= base && jobs[i].hi <= cap && jobs[i].hi - jobs[i].lo == 8 &&
				      (jobs[i].lo - base) % 8 == 0 && fd >= jobs[i].lo && fd < jobs[i].hi,
				      "limit %d: fd %d not in the thread's line [%d,%d) below %ld", limit,
				      fd, jobs[i].lo, jobs[i].hi, cap);
				for (int m = 0; m < 8; m++)
					CHECK((fd - base) / 8 != (jobs[1 - i].fds[m] - base) / 8,
					      "limit %d: fds %d and %d of two threads on one line", limit,
					      fd, jobs[1 - i].fds[m]);
			}
		}
	}
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < 8; k++)
			close(jobs[i].fds[k]);
}

int main(int argc, char **argv)
{
	struct rlimit rl, old;
	long base = env_num("FDRANGE_BASE", 64);
	int before;

	test_mode(argc, argv);
	pthread_barrier_init(&both, NULL, 2);
	before = count_fds();
	CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0, "getrlimit");
	CHECK(rl.rlim_max >= 2048, "hard limit %lu too low for this test", (unsigned long)rl.rlim_max);

	rl.rlim_cur = 2048;
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit");
	run(2048, base);
	rl.rlim_cur = 1024;
	CHECK(prlimit(0, RLIMIT_NOFILE, &rl, &old) == 0 && old.rlim_cur == 2048, "prlimit(0)");
	run(1024, base);
	rl.rlim_cur = 700;
	CHECK(prlimit(getpid(), RLIMIT_NOFILE, &rl, NULL) == 0, "prlimit(pid)");
	run(700, base);
	{
		struct rlimit64 r64 = { 600, rl.rlim_max };

		CHECK(prlimit64(0, RLIMIT_NOFILE, &r64, NULL) == 0, "prlimit64");
		run(600, base);
		r64.rlim_cur = 1500;
		CHECK(setrlimit64(RLIMIT_NOFILE, &r64) == 0, "setrlimit64");
		run(1500, base);
	}
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	printf("lowered limit: ok (%s)\n", argv[1]);
	return 0;
}
