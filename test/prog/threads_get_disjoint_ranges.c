/* SPDX-License-Identifier: MIT */
/*
 * Several threads create fds through every wrapped call at the same time.
 * Placed: each thread's fds lie in one range of its own, no 8-fd line of
 * the fd table holds fds of two threads, and fdrange_thread_range() agrees.
 * Both modes: every fd is valid and nothing leaks.
 */
#include "common.h"

#define NTHREADS 4
#define ROUNDS 3
#define MAXFDS (NMAKERS * ROUNDS * 2)

struct worker {
	pthread_t tid;
	struct maker_ctx *ctx;
	int fds[MAXFDS];
	int nfds;
	int api_lo, api_hi, api_ret;
};

static pthread_barrier_t start;

static void *run(void *arg)
{
	struct worker *w = arg;
	int (*range)(int *, int *) = (int (*)(int *, int *))dlsym(RTLD_DEFAULT, "fdrange_thread_range");

	pthread_barrier_wait(&start);
	for (int r = 0; r < ROUNDS; r++) {
		for (unsigned m = 0; m < NMAKERS; m++) {
			int out[2], n = makers[m].make(w->ctx, r & 1, out);

			CHECK(n > 0, "%s: %s", makers[m].name, strerror(errno));
			for (int i = 0; i < n; i++)
				w->fds[w->nfds++] = out[i];
		}
	}
	w->api_ret = range ? range(&w->api_lo, &w->api_hi) : -ENOSYS;
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker w[NTHREADS] = { 0 };
	struct maker_ctx ctx;
	int before, owner_of_line[(1 << 20) / 8];
	struct geom g;

	test_mode(argc, argv);
	maker_ctx_init(&ctx);
	before = count_fds();
	pthread_barrier_init(&start, NULL, NTHREADS);
	for (int t = 0; t < NTHREADS; t++) {
		w[t].ctx = &ctx;
		CHECK(pthread_create(&w[t].tid, NULL, run, &w[t]) == 0, "pthread_create");
	}
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(w[t].tid, NULL);

	for (int t = 0; t < NTHREADS; t++)
		for (int i = 0; i < w[t].nfds; i++)
			CHECK(fd_valid(w[t].fds[i]), "thread %d fd %d invalid", t, w[t].fds[i]);

	if (placed_mode) {
		bool range_used[64] = { false };

		g = test_geom();
		memset(owner_of_line, -1, sizeof(owner_of_line));
		for (int t = 0; t < NTHREADS; t++) {
			long r = range_of(&g, w[t].fds[0]);

			CHECK(r >= 0, "thread %d: fd %d is in no range", t, w[t].fds[0]);
			CHECK(!range_used[r], "thread %d: range %ld already belongs to another thread", t, r);
			range_used[r] = true;
			CHECK(w[t].api_ret == 0 && w[t].api_lo == g.base + r * g.width &&
			      w[t].api_hi == w[t].api_lo + g.width,
			      "thread %d: fdrange_thread_range says %d [%d,%d), expected [%ld,%ld)", t,
			      w[t].api_ret, w[t].api_lo, w[t].api_hi, g.base + r * g.width,
			      g.base + (r + 1) * g.width);
			for (int i = 0; i < w[t].nfds; i++) {
				int fd = w[t].fds[i], *o = &owner_of_line[fd / 8];

				CHECK(range_of(&g, fd) == r, "thread %d: fd %d outside its range %ld", t, fd, r);
				CHECK(*o == -1 || *o == t, "fd line %d holds fds of threads %d and %d",
				      fd / 8, *o, t);
				*o = t;
			}
		}
	}
	for (int t = 0; t < NTHREADS; t++)
		for (int i = 0; i < w[t].nfds; i++)
			CHECK(close(w[t].fds[i]) == 0, "close %d: %s", w[t].fds[i], strerror(errno));
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	maker_ctx_fini(&ctx);
	printf("%d threads x %zu calls x %d rounds: ok (%s)\n", NTHREADS, NMAKERS, ROUNDS, argv[1]);
	return 0;
}
