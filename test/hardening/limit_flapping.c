/* SPDX-License-Identifier: MIT */
/*
 * Two threads raise and lower the process's own RLIMIT_NOFILE over and
 * over (setrlimit, prlimit, setrlimit64, prlimit64) while others create,
 * check and close fds.  Creations may fail with EMFILE while the limit is
 * low, exactly as without the library; nothing may crash, leak or reach
 * the wrong object.  When the flapping stops, the geometry must match the
 * limit the kernel ended with, whichever thread set it last: the ranges
 * lie below it and the fds go there.
 */
#include "hard.h"

#define NCHURN 3
#define NFLAP 2

static volatile int stop;
static rlim_t hard_max;

static void set_soft(rlim_t soft, unsigned how)
{
	struct rlimit rl = { soft, hard_max };
	struct rlimit64 r64 = { soft, hard_max };
	int ret;

	switch (how % 4) {
	case 0: ret = setrlimit(RLIMIT_NOFILE, &rl); break;
	case 1: ret = prlimit(0, RLIMIT_NOFILE, &rl, NULL); break;
	case 2: ret = setrlimit64(RLIMIT_NOFILE, &r64); break;
	default: ret = prlimit64(getpid(), RLIMIT_NOFILE, &r64, NULL); break;
	}
	CHECK(ret == 0, "set soft limit %lu: %s", (unsigned long)soft, strerror(errno));
}

static void *flap(void *arg)
{
	static const rlim_t limits[] = { 100, 128, 200, 256, 400, 700, 1024, 1500, 2048, 4096 };
	unsigned long seed = 77 + (uintptr_t)arg, n = 0;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		unsigned long r = xorshift(&seed);

		set_soft(limits[r % (sizeof(limits) / sizeof(limits[0]))], (unsigned)(r >> 8));
		n++;
	}
	return (void *)n;
}

int main(int argc, char **argv)
{
	struct churn c[NCHURN] = { 0 };
	pthread_t f[NFLAP];
	struct rlimit rl, orig;
	double t0, seconds = (double)env_num("HARD_SECONDS", 2);
	unsigned long flaps = 0, emfile = 0, ops;
	long base = env_num("FDRANGE_BASE", 64);
	int before;

	hard_init(argc, argv);
	before = count_fds();
	CHECK(getrlimit(RLIMIT_NOFILE, &orig) == 0, "getrlimit");
	hard_max = orig.rlim_max;
	CHECK(hard_max >= 4096, "hard limit %lu too low", (unsigned long)hard_max);
	churn_start(c, NCHURN, &stop, true);
	for (uintptr_t i = 0; i < NFLAP; i++)
		CHECK(pthread_create(&f[i], NULL, flap, (void *)i) == 0, "pthread_create");
	t0 = now_s();
	while (now_s() - t0 < seconds)
		usleep(10000);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < NFLAP; i++) {
		void *n;

		pthread_join(f[i], &n);
		flaps += (unsigned long)(uintptr_t)n;
	}
	ops = churn_join(c, NCHURN);
	for (int i = 0; i < NCHURN; i++)
		emfile += c[i].emfile;
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);

	/* The chunks follow the limit the kernel has now. */
	CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0, "getrlimit");
	if (placed_mode) {
		long cap = ((long)rl.rlim_cur - 1) / 64 * 64;
		int lo, hi, fd;

		if (cap <= base) {
			CHECK(api_range(&lo, &hi) == -ERANGE, "a range although none fits below %lu",
			      (unsigned long)rl.rlim_cur);
			goto done;
		}
		CHECK(api_range(&lo, &hi) == 0, "no range for limit %lu", (unsigned long)rl.rlim_cur);
		/* A line of 8 fds for a thread that holds no chunk, else a chunk. */
		CHECK((hi - lo == 64 || hi - lo == 8) && (lo - base) % (hi - lo) == 0 && lo >= base &&
		      hi <= cap, "range [%d,%d) for limit %lu, a line or chunk below %ld expected",
		      lo, hi, (unsigned long)rl.rlim_cur, cap);
		fd = eventfd(0, 0);
		CHECK(fd >= lo && fd < hi, "fd %d outside [%d,%d)", fd, lo, hi);
		close(fd);
	}
done:
	CHECK(setrlimit(RLIMIT_NOFILE, &orig) == 0, "restore");
	printf("limit flapping: %lu limit changes, %lu operations (%lu EMFILE): ok (%s)\n", flaps,
	       ops, emfile, argv[1]);
	return 0;
}
