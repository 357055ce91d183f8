/* SPDX-License-Identifier: MIT */
/*
 * After a burst, a thread's fds sink back to its low chunks: it holds 600
 * fds (10 chunks), closes them, and of its next 40 fds, those from the
 * 17th on lie below BASE + 128 again.  (Placement started from the chunk
 * of the thread's last fd, so a threaded CPython, whose test_subprocess
 * opens many fds once, went on with fds above 1024 and its select()-based
 * tests failed.)
 */
#include "common.h"

static int after[40];

static void *burst(void *arg)
{
	static int fds[600];

	for (int i = 0; i < 600; i++)
		CHECK((fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0, "open: %s",
		      strerror(errno));
	for (int i = 0; i < 600; i++)
		close(fds[i]);
	for (int i = 0; i < 40; i++) {
		CHECK((after[i] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0, "open: %s",
		      strerror(errno));
		close(after[i]);
	}
	return arg;
}

int main(int argc, char **argv)
{
	long base = env_num("FDRANGE_BASE", 64);
	pthread_t t;
	int before;

	test_mode(argc, argv);
	before = count_fds();
	CHECK(pthread_create(&t, NULL, burst, NULL) == 0, "pthread_create");
	pthread_join(t, NULL);
	for (int i = 16; i < 40 && placed_mode; i++)
		CHECK(after[i] >= base && after[i] < base + 128,
		      "fd %d after the burst (the %dth), expected one of [%ld, %ld)", after[i], i + 1,
		      base, base + 128);
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	printf("after a burst of 600: fd %d, then %d: ok (%s)\n", after[0], after[39], argv[1]);
	return 0;
}
