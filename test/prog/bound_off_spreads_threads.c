/* SPDX-License-Identifier: MIT */
/*
 * FDRANGE_BOUND=off with FDRANGE_WIDTH=512: a program that never uses
 * select() asks for each thread's fds on fd-table bitmap lines of their
 * own, whatever few fds it holds.  NTHREADS threads each make PER fds
 * (sockets, pipes, eventfds), HELD in all, far below 1024.
 *
 *   spread   (FDRANGE_BOUND=off): placed, each thread's fds lie in one
 *            512-fd range [64 + 512 j, 64 + 512 (j + 1)), no two threads in
 *            the same one, and the threads past the second have fds at
 *            1024 or above: the bound no longer holds them below it;
 *   bounded  (the same settings, FDRANGE_BOUND unset: the default): every
 *            fd stays below 1024, as select() needs, so the spread above is
 *            the setting's doing.
 *
 * Both modes, plain and placed: every fd valid and still the kind it was
 * made as, nothing leaks.
 */
#include "common.h"

#define NTHREADS 4
#define PER 24   /* fds per thread: 8 sockets, 4 pipes (8 fds), 8 eventfds */
#define WIDTH 512
#define BASE 64

struct worker {
	pthread_t tid;
	int fds[PER];
	mode_t kinds[PER];
};

static struct worker workers[NTHREADS];
static pthread_barrier_t made, done;

static void *work(void *arg)
{
	struct worker *w = arg;
	int n = 0;

	for (int i = 0; i < 8; i++, n++) {
		w->fds[n] = socket(AF_INET, SOCK_STREAM, 0);
		CHECK(w->fds[n] >= 0, "socket: %s", strerror(errno));
		w->kinds[n] = S_IFSOCK;
	}
	for (int i = 0; i < 4; i++, n += 2) {
		CHECK(pipe(&w->fds[n]) == 0, "pipe: %s", strerror(errno));
		w->kinds[n] = w->kinds[n + 1] = S_IFIFO;
	}
	for (int i = 0; i < 8; i++, n++) {
		w->fds[n] = eventfd(0, 0);
		CHECK(w->fds[n] >= 0, "eventfd: %s", strerror(errno));
		w->kinds[n] = 0;  /* anonymous inode: not a socket, not a pipe */
	}
	CHECK(n == PER, "%d fds made, %d expected", n, PER);
	/* All threads alive until every one has made its fds: each is an
	 * owner of its own, none takes over an exited thread's range. */
	pthread_barrier_wait(&made);
	pthread_barrier_wait(&done);
	return NULL;
}

static mode_t kind_of(int fd)
{
	struct stat st;

	CHECK(fstat(fd, &st) == 0, "fstat %d: %s", fd, strerror(errno));
	return st.st_mode & S_IFMT;
}

int main(int argc, char **argv)
{
	bool spread;
	int before, above = 0;
	int slot_of[NTHREADS];

	test_mode(argc, argv);
	CHECK(argc >= 3 && (!strcmp(argv[2], "spread") || !strcmp(argv[2], "bounded")),
	      "usage: %s plain|placed spread|bounded", argv[0]);
	spread = !strcmp(argv[2], "spread");
	CHECK(!spread || (getenv("FDRANGE_BOUND") && !strcmp(getenv("FDRANGE_BOUND"), "off")),
	      "spread needs FDRANGE_BOUND=off");
	CHECK(spread || !getenv("FDRANGE_BOUND"), "bounded needs FDRANGE_BOUND unset");
	/* NTHREADS ranges of WIDTH from BASE, and the soft limit's margin. */
	need_nofile(4096);
	before = count_fds();
	CHECK(pthread_barrier_init(&made, NULL, NTHREADS + 1) == 0, "barrier");
	CHECK(pthread_barrier_init(&done, NULL, NTHREADS + 1) == 0, "barrier");
	for (int t = 0; t < NTHREADS; t++)
		CHECK(pthread_create(&workers[t].tid, NULL, work, &workers[t]) == 0, "pthread_create");
	pthread_barrier_wait(&made);
	for (int t = 0; t < NTHREADS; t++) {
		struct worker *w = &workers[t];

		slot_of[t] = -1;
		for (int i = 0; i < PER; i++) {
			int fd = w->fds[i];

			CHECK(fd_valid(fd), "thread %d: fd %d invalid", t, fd);
			if (w->kinds[i])
				CHECK(kind_of(fd) == w->kinds[i], "thread %d: fd %d is not the %s it was made as",
				      t, fd, w->kinds[i] == S_IFSOCK ? "socket" : "pipe");
			above += fd >= 1024;
			if (!placed_mode)
				continue;
			if (!spread) {
				CHECK(fd < 1024, "thread %d: fd %d at 1024 or above with the bound on", t, fd);
				continue;
			}
			CHECK(fd >= BASE, "thread %d: fd %d below FDRANGE_BASE", t, fd);
			if (slot_of[t] < 0)
				slot_of[t] = (fd - BASE) / WIDTH;
			CHECK((fd - BASE) / WIDTH == slot_of[t],
			      "thread %d: fd %d outside its range %d-%d", t, fd, BASE + slot_of[t] * WIDTH,
			      BASE + (slot_of[t] + 1) * WIDTH - 1);
		}
		for (int u = 0; placed_mode && spread && u < t; u++)
			CHECK(slot_of[u] != slot_of[t], "threads %d and %d share the range from %d", u, t,
			      BASE + slot_of[t] * WIDTH);
	}
	/* Ranges from 64 in steps of 512: only two of them end below 1024. */
	if (placed_mode && spread)
		CHECK(above >= (NTHREADS - 2) * PER,
		      "%d fds at 1024 or above, expected those of %d threads (%d)", above,
		      NTHREADS - 2, (NTHREADS - 2) * PER);
	pthread_barrier_wait(&done);
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(workers[t].tid, NULL);
	for (int t = 0; t < NTHREADS; t++)
		for (int i = 0; i < PER; i++)
			CHECK(close(workers[t].fds[i]) == 0, "close %d: %s", workers[t].fds[i],
			      strerror(errno));
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	printf("%s: %d threads x %d fds, %d at 1024 or above: ok (%s)\n", argv[2], NTHREADS, PER,
	       above, argv[1]);
	return 0;
}
