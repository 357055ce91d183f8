/* SPDX-License-Identifier: MIT */
/*
 * A program that lowers its own RLIMIT_NOFILE after start (as memcached
 * does) gets ranges recomputed below the new limit, whichever of
 * setrlimit, prlimit(0), prlimit(own pid) or prlimit64 it uses.
 */
#include "common.h"

struct job {
	int fds[8];
	int lo, hi;
};

static void *make(void *arg)
{
	struct job *j = arg;
	int (*range)(int *, int *) = (int (*)(int *, int *))dlsym(RTLD_DEFAULT, "fdrange_thread_range");

	for (int i = 0; i < 8; i += 2)
		CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, &j->fds[i]) == 0, "socketpair");
	j->lo = j->hi = -1;
	if (range)
		CHECK(range(&j->lo, &j->hi) == 0, "fdrange_thread_range");
	return NULL;
}

static void run(int limit, long slots, long base)
{
	struct job jobs[2];
	pthread_t t[2];
	long width = ((limit - 1 - base) / slots) / 64 * 64;

	for (int i = 0; i < 2; i++)
		CHECK(pthread_create(&t[i], NULL, make, &jobs[i]) == 0, "pthread_create");
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		for (int k = 0; k < 8; k++) {
			int fd = jobs[i].fds[k];

			CHECK(fd < limit - 1, "limit %d: fd %d not below it", limit, fd);
			if (placed_mode)
				CHECK(fd >= jobs[i].lo && fd < jobs[i].hi && jobs[i].hi - jobs[i].lo == width &&
				      (jobs[i].lo - base) % width == 0,
				      "limit %d: fd %d outside [%d,%d), width %ld expected", limit, fd,
				      jobs[i].lo, jobs[i].hi, width);
			close(fd);
		}
	}
}

int main(int argc, char **argv)
{
	struct rlimit rl, old;
	long slots = env_num("FDRANGE_SLOTS", 4), base = env_num("FDRANGE_BASE", 64);
	int before;

	test_mode(argc, argv);
	before = count_fds();
	CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0, "getrlimit");
	CHECK(rl.rlim_max >= 2048, "hard limit %lu too low for this test", (unsigned long)rl.rlim_max);

	rl.rlim_cur = 2048;
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit");
	run(2048, slots, base);
	rl.rlim_cur = 1024;
	CHECK(prlimit(0, RLIMIT_NOFILE, &rl, &old) == 0 && old.rlim_cur == 2048, "prlimit(0)");
	run(1024, slots, base);
	rl.rlim_cur = 700;
	CHECK(prlimit(getpid(), RLIMIT_NOFILE, &rl, NULL) == 0, "prlimit(pid)");
	run(700, slots, base);
	{
		struct rlimit64 r64 = { 600, rl.rlim_max };

		CHECK(prlimit64(0, RLIMIT_NOFILE, &r64, NULL) == 0, "prlimit64");
		run(600, slots, base);
		r64.rlim_cur = 1500;
		CHECK(setrlimit64(RLIMIT_NOFILE, &r64) == 0, "setrlimit64");
		run(1500, slots, base);
	}
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	printf("lowered limit: ok (%s)\n", argv[1]);
	return 0;
}
