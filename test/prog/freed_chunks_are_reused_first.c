/* SPDX-License-Identifier: MIT */
/*
 * Chunks given back by exiting threads are claimed again, the lowest
 * first: 16 short threads at a time claim and release chunks at once,
 * then, with every chunk free, a new thread's first fd must be the first
 * fd of chunk 0 (BASE), round after round.  (A blind store of the claim
 * cursor once let it creep upwards past chunks a release had just freed.)
 */
#include "common.h"

static void *churn(void *arg)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0, "open: %s", strerror(errno));
	close(fd);
	return arg;
}

static void *probe(void *arg)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0, "open: %s", strerror(errno));
	*(int *)arg = fd;
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	long base = env_num("FDRANGE_BASE", 64), rounds = env_num("ROUNDS", 1500);
	int before, worst = -1, off = 0;

	test_mode(argc, argv);
	before = count_fds();
	for (long r = 0; r < rounds; r++) {
		pthread_t t[16], p;
		int fd;

		for (int i = 0; i < 16; i++)
			CHECK(pthread_create(&t[i], NULL, churn, NULL) == 0, "pthread_create");
		for (int i = 0; i < 16; i++)
			pthread_join(t[i], NULL);
		CHECK(pthread_create(&p, NULL, probe, &fd) == 0, "pthread_create");
		pthread_join(p, NULL);
		if (placed_mode && fd != base) {
			off++;
			worst = fd > worst ? fd : worst;
		}
	}
	CHECK(!off, "%d of %ld rounds: a new thread's first fd was not %ld (highest %d)", off,
	      rounds, base, worst);
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	printf("%ld rounds of 16 short threads: the next thread starts at chunk 0: ok (%s)\n",
	       rounds, argv[1]);
	return 0;
}
