/* SPDX-License-Identifier: MIT */
/*
 * Connections that come and go one at a time while the hand-off is still
 * being learned reuse the learning pool's first chunk, in increasing
 * order: the first 64 accepted and closed in turn all lie in one 64-fd
 * chunk, each on the first fd of the line after the previous one's
 * (wrapping at the chunk's end).  (A pool that claimed its next chunk
 * whenever its cursor moved on took all 8 chunks, 512 fd numbers, for one
 * open connection.)  None is ever registered with epoll, as in a thread-
 * per-connection server: after 64 accepts the library stops learning and
 * leaves accepted fds where the kernel puts them (model "unregistered"),
 * with no extra syscall: the kernel's lowest free fd, below BASE here.
 */
#include "common.h"

#define NCONN 200
#define GIVE_UP 64  /* lib/handoff.c */

static int listener, accepted[NCONN];

static void *serve(void *arg)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	CHECK(getsockname(listener, (struct sockaddr *)&a, &len) == 0, "getsockname");
	for (int i = 0; i < NCONN; i++) {
		int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		CHECK(c >= 0 && connect(c, (struct sockaddr *)&a, sizeof(a)) == 0, "connect: %s",
		      strerror(errno));
		accepted[i] = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
		CHECK(accepted[i] >= 0, "accept4: %s", strerror(errno));
		close(accepted[i]);
		close(c);
	}
	return arg;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	long base = env_num("FDRANGE_BASE", 64);
	pthread_t t;
	int before;

	test_mode(argc, argv);
	before = count_fds();
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(listener >= 0 && bind(listener, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	      listen(listener, 16) == 0, "listen: %s", strerror(errno));
	/* A second thread: placement starts once the process is threaded. */
	CHECK(pthread_create(&t, NULL, serve, NULL) == 0, "pthread_create");
	pthread_join(t, NULL);
	for (int i = 0; i < GIVE_UP && placed_mode; i++) {
		CHECK(accepted[i] >= base && accepted[i] % 8 == 0,
		      "connection %d at fd %d: not on a line of the learning pool", i, accepted[i]);
		CHECK((accepted[i] - base) / 64 == (accepted[0] - base) / 64,
		      "connection %d at fd %d, the first at %d: the pool took another chunk", i,
		      accepted[i], accepted[0]);
		CHECK(!i || accepted[i] == accepted[i - 1] + 8 ||
		      (accepted[i] - base) % 64 == 0,
		      "connection %d at fd %d after %d: not the next line", i, accepted[i],
		      accepted[i - 1]);
	}
	for (int i = GIVE_UP; i < NCONN && placed_mode; i++)
		CHECK(accepted[i] < base, "connection %d at fd %d: moved although none of %d was "
		      "ever registered", i, accepted[i], i);
	close(listener);
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	printf("%d connections one at a time while learning: fds %d..%d: ok (%s)\n", NCONN,
	       accepted[0], accepted[NCONN - 1], argv[1]);
	return 0;
}
