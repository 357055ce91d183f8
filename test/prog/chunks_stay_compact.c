/* SPDX-License-Identifier: MIT */
/*
 * fd numbers stay compact whatever RLIMIT_NOFILE is: with the soft limit
 * raised as far as the hard limit allows, 8 threads holding 1 to 200 fds
 * each (a thread's first 8 on a line of its own, the rest in 64-fd chunks)
 * never see an fd above BASE + 64 x (the chunks they need, plus one for
 * the lines) + 64, nor one at or above max(1024, 2 x the fds open + 64);
 * no 8-fd line holds fds of two threads, and after they close everything
 * and start again the same bound holds: chunks are reused, not added.
 * Where a thread that has a chunk no longer goes back to its line
 * (kernel_groups(), common.h), the second round needs room for all of a
 * thread's fds in chunks.
 */
#include "common.h"

#define NT 8

static const int want[NT] = { 10, 200, 64, 65, 1, 130, 150, 33 };
static int fds[NT][200];
static pthread_barrier_t made, checked;

static void *run(void *arg)
{
	long t = (long)arg;

	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < want[t]; i++) {
			fds[t][i] = eventfd(0, EFD_CLOEXEC);
			CHECK(fds[t][i] >= 0, "eventfd: %s", strerror(errno));
		}
		pthread_barrier_wait(&made);
		pthread_barrier_wait(&checked);
		for (int i = 0; i < want[t]; i++)
			close(fds[t][i]);
		pthread_barrier_wait(&made);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long base = env_num("FDRANGE_BASE", 64), need[2] = { 1, 1 }, bound[2], top[2] = { 0, 0 };
	long open_fds = 0;
	bool groups;
	struct rlimit rl;
	pthread_t t[NT];
	int before;

	test_mode(argc, argv);
	groups = placed_mode && kernel_groups();
	CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0, "getrlimit");
	rl.rlim_cur = rl.rlim_max;
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit");
	CHECK(rl.rlim_cur >= 4096, "hard limit %lu too low for this test", (unsigned long)rl.rlim_cur);
	before = count_fds();
	for (int i = 0; i < NT; i++) {
		need[0] += want[i] > 8 ? (want[i] - 8 + 63) / 64 : 0;
		need[1] += want[i] > 8 ? (groups ? want[i] + 63 : want[i] - 8 + 63) / 64 : 0;
		open_fds += want[i];
	}
	for (int r = 0; r < 2; r++) {
		bound[r] = base + 64 * need[r] + 64;
		if (bound[r] > 2 * (open_fds + before) + 64 && bound[r] > 1024)
			bound[r] = 2 * (open_fds + before) + 64 > 1024 ? 2 * (open_fds + before) + 64 : 1024;
	}
	pthread_barrier_init(&made, NULL, NT + 1);
	pthread_barrier_init(&checked, NULL, NT + 1);
	for (long i = 0; i < NT; i++)
		CHECK(pthread_create(&t[i], NULL, run, (void *)i) == 0, "pthread_create");
	for (int round = 0; round < 2; round++) {
		static int owner[1 << 19];

		pthread_barrier_wait(&made);
		memset(owner, -1, sizeof(owner));
		for (int i = 0; i < NT; i++) {
			for (int k = 0; k < want[i]; k++) {
				int fd = fds[i][k];

				CHECK(fd < (1 << 22), "fd %d", fd);
				if (fd > top[round])
					top[round] = fd;
				if (!placed_mode || fd < base)
					continue;
				CHECK(owner[(fd - base) / 8] == -1 || owner[(fd - base) / 8] == i,
				      "line of fd %d holds fds of threads %d and %d", fd,
				      owner[(fd - base) / 8], i);
				owner[(fd - base) / 8] = i;
			}
		}
		if (placed_mode)
			CHECK(top[round] < bound[round], "round %d: highest fd %ld not below the bound "
			      "%ld (BASE + 64 x %ld chunks + 64, or 2 x open + 64)", round, top[round],
			      bound[round], need[round]);
		pthread_barrier_wait(&checked);
		pthread_barrier_wait(&made);
	}
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	printf("%d threads, %ld then %ld chunks needed, highest fd %ld then %ld (bounds %ld, %ld%s): "
	       "ok (%s)\n", NT, need[0], need[1], top[0], top[1], bound[0], bound[1],
	       groups ? ", kernel groups" : "", argv[1]);
	return 0;
}
