/* SPDX-License-Identifier: MIT */
/*
 * A thread whose chunks reach above a limit lowered later still places
 * its fds, in its chunks below the new limit: it held chunks 0-4 (300 fds),
 * closed them all, the limit went down to 256 (chunks below fd 192 only),
 * and its next fds must land in [BASE, 192), not stay where the kernel put
 * them.  (Its hint, the chunk of its last fd, was above the new limit, and
 * the placement gave up on it instead of trying its lower chunks.)
 */
#include "common.h"

static int after[5];

static void *worker(void *arg)
{
	int fds[300];
	struct rlimit rl;

	for (int i = 0; i < 300; i++)
		CHECK((fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0, "open: %s",
		      strerror(errno));
	for (int i = 0; i < 300; i++)
		close(fds[i]);
	CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0, "getrlimit");
	rl.rlim_cur = 256;
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit: %s", strerror(errno));
	for (int i = 0; i < 5; i++)
		CHECK((after[i] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0, "open: %s",
		      strerror(errno));
	return arg;
}

int main(int argc, char **argv)
{
	long base = env_num("FDRANGE_BASE", 64);
	struct rlimit orig;
	pthread_t t;
	int before;

	test_mode(argc, argv);
	CHECK(getrlimit(RLIMIT_NOFILE, &orig) == 0 && orig.rlim_cur >= 512, "limit too low");
	before = count_fds();
	CHECK(pthread_create(&t, NULL, worker, NULL) == 0, "pthread_create");
	pthread_join(t, NULL);
	for (int i = 0; i < 5; i++) {
		CHECK(after[i] < 255, "fd %d not below the new limit", after[i]);
		if (placed_mode)
			CHECK(after[i] >= base && after[i] < 192, "fd %d not in a chunk below 192",
			      after[i]);
		close(after[i]);
	}
	CHECK(setrlimit(RLIMIT_NOFILE, &orig) == 0, "restore");
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	printf("lowered limit: fds %d..%d: ok (%s)\n", after[0], after[4], argv[1]);
	return 0;
}
