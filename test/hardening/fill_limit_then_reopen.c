/* SPDX-License-Identifier: MIT */
/*
 * Fill RLIMIT_NOFILE completely from several threads, then free one fd at
 * a time (below BASE, inside a range, at limit - 1) and create again, from
 * a thread of each range: the new fd must be exactly the one just freed,
 * as without the library (the kernel hands out the only free number and
 * the move then finds no room and gives it back unchanged).
 */
#include "hard.h"

#define LIMIT 512
#define NT 4

static int fds[LIMIT];
static int nfds;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void *fill(void *arg)
{
	(void)arg;
	for (;;) {
		int p[2];

		if (pipe(p) < 0) {
			int fd;

			CHECK(errno == EMFILE, "pipe: %s", strerror(errno));
			/* One number may be left when the count is odd. */
			fd = eventfd(0, 0);
			if (fd < 0) {
				CHECK(errno == EMFILE, "eventfd: %s", strerror(errno));
				return NULL;
			}
			pthread_mutex_lock(&mu);
			fds[nfds++] = fd;
			pthread_mutex_unlock(&mu);
			continue;
		}
		pthread_mutex_lock(&mu);
		fds[nfds++] = p[0];
		fds[nfds++] = p[1];
		pthread_mutex_unlock(&mu);
	}
}

struct reopen {
	int freed, got, err;
};

static void *reopen_one(void *arg)
{
	struct reopen *r = arg;

	r->got = open("/dev/null", O_RDONLY);
	r->err = r->got < 0 ? errno : 0;
	return NULL;
}

static int index_of(int fd)
{
	for (int i = 0; i < nfds; i++)
		if (fds[i] == fd)
			return i;
	return -1;
}

int main(int argc, char **argv)
{
	pthread_t t[NT];
	struct rlimit rl, old;
	int before, open_then, victims[] = { 40, 100, 130, 300, 400, LIMIT - 2, LIMIT - 1 };

	hard_init(argc, argv);
	before = count_fds();
	CHECK(getrlimit(RLIMIT_NOFILE, &old) == 0, "getrlimit");
	rl = old;
	rl.rlim_cur = LIMIT;
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit");
	open_then = count_fds();
	for (int i = 0; i < NT; i++)
		CHECK(pthread_create(&t[i], NULL, fill, NULL) == 0, "pthread_create");
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	CHECK(nfds == LIMIT - open_then, "%d fds made, %d free below %d", nfds, LIMIT - open_then, LIMIT);
	CHECK(fcntl(0, F_DUPFD, 0) < 0 && errno == EMFILE, "the table is not full");

	/* Each victim: free it, create from a new thread (a new range each
	 * time), and get that very number back. */
	for (unsigned v = 0; v < sizeof(victims) / sizeof(victims[0]); v++) {
		struct reopen r = { victims[v], -1, 0 };
		pthread_t th;
		int i = index_of(victims[v]);

		CHECK(i >= 0, "fd %d is not one of ours", victims[v]);
		CHECK(close(fds[i]) == 0, "close");
		CHECK(pthread_create(&th, NULL, reopen_one, &r) == 0, "pthread_create");
		pthread_join(th, NULL);
		CHECK(r.got == r.freed, "freed %d, open returned %d (%s)", r.freed, r.got,
		      r.got < 0 ? strerror(r.err) : "ok");
		fds[i] = r.got;
		/* Full again: the next creation fails exactly as libc's. */
		errno = 0;
		CHECK(open("/dev/null", O_RDONLY) == -1 && errno == EMFILE, "open on a full table: %s",
		      strerror(errno));
	}
	for (int i = 0; i < nfds; i++)
		CHECK(close(fds[i]) == 0, "close %d", fds[i]);
	CHECK(setrlimit(RLIMIT_NOFILE, &old) == 0, "restore limit");
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	printf("fill limit then reopen: %d fds, ok (%s)\n", nfds, argv[1]);
	return 0;
}
