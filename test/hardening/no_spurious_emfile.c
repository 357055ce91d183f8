/* SPDX-License-Identifier: MIT */
/*
 * While an fd is moved it holds two numbers.  Near the soft limit that
 * second number can be the one another thread's creation needed: with 2
 * numbers free below the limit and two threads each holding at most one
 * fd at a time, plain Linux never says EMFILE, and neither may the
 * library.  (It used to: 130 to 40,387 EMFILE a second.)
 *
 *   no_spurious_emfile MODE dense   the fds filling the table have kernel
 *                                   numbers (made by raw syscalls, which
 *                                   the library never sees), up to the
 *                                   limit: nothing is moved near it
 *   no_spurious_emfile MODE placed  they were made by a thread (in its
 *                                   chunks): the two free numbers may be
 *                                   anywhere, a move may take one, and a
 *                                   creation that meets EMFILE then is
 *                                   made again once the move is done
 *   no_spurious_emfile MODE low     kernel numbers as in dense, but one
 *                                   free number is low (fd 10), far from
 *                                   the limit: the fd created there is
 *                                   moved up into the other free one, and
 *                                   a creation failing meanwhile, or just
 *                                   after the move ended, is made again
 *                                   (seen: 359 and 575 EMFILE in 3 s)
 */
#include "hard.h"

#include <sys/resource.h>
#include <sys/syscall.h>

#define LIMIT 512
#define FREE 2

static int fill[LIMIT];
static int nfill, stop;
static unsigned long ops[2], emfile[2];

static void filler(bool raw, bool low)
{
	for (;;) {
		int fd = raw ? (int)syscall(SYS_eventfd2, 0, 0) : eventfd(0, 0);

		if (fd < 0) {
			CHECK(errno == EMFILE, "eventfd: %s", strerror(errno));
			break;
		}
		fill[nfill++] = fd;
	}
	/* Leave exactly FREE numbers free: the highest ones, or the highest
	 * and a low one (the first of ours from fd 10 up). */
	for (int i = 0; i < FREE; i++) {
		int k = nfill - 1;

		if (low && i == FREE - 1)
			for (k = 0; k < nfill - 1 && fill[k] < 10; k++)
				;
		close(fill[k]);
		fill[k] = fill[--nfill];
	}
}

static void *fill_thread(void *arg)
{
	filler(false, false);
	return arg;
}

static void *churn(void *arg)
{
	long t = (long)arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		int fd = t ? open("/dev/null", O_RDONLY) : eventfd(0, 0);

		if (fd < 0) {
			CHECK(errno == EMFILE, "create: %s", strerror(errno));
			emfile[t]++;
			continue;
		}
		close(fd);
		ops[t]++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[2] : "";
	double seconds = env_num("HARD_SECONDS", 2), t0;
	struct rlimit rl, orig;
	pthread_t t[2];
	int before;

	hard_init(argc, argv);
	CHECK(!strcmp(mode, "dense") || !strcmp(mode, "placed") || !strcmp(mode, "low"),
	      "mode dense, placed or low");
	CHECK(getrlimit(RLIMIT_NOFILE, &orig) == 0, "getrlimit");
	rl = orig;
	rl.rlim_cur = LIMIT;
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit");
	before = count_fds();
	if (strcmp(mode, "placed") != 0) {
		filler(true, !strcmp(mode, "low"));
	} else {
		pthread_t f;

		CHECK(pthread_create(&f, NULL, fill_thread, NULL) == 0, "pthread_create");
		pthread_join(f, NULL);
	}
	for (long i = 0; i < 2; i++)
		CHECK(pthread_create(&t[i], NULL, churn, (void *)i) == 0, "pthread_create");
	t0 = now_s();
	while (now_s() - t0 < seconds)
		usleep(10000);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	while (nfill)
		close(fill[--nfill]);
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	CHECK(setrlimit(RLIMIT_NOFILE, &orig) == 0, "restore");
	CHECK(!emfile[0] && !emfile[1], "%lu + %lu EMFILE in %lu + %lu creations with %d numbers "
	      "free for 2 threads holding one each (%s)", emfile[0], emfile[1], ops[0], ops[1], FREE,
	      mode);
	printf("%d free below the limit, 2 threads: %lu creations, no EMFILE: ok (%s %s)\n", FREE,
	       ops[0] + ops[1], mode, argv[1]);
	return 0;
}
