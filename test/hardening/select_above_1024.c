/* SPDX-License-Identifier: MIT */
/*
 * select() can only watch fds below FD_SETSIZE (1024); FD_SET on a larger
 * fd writes past the fd_set (glibc's _FORTIFY_SOURCE aborts instead).  The
 * library never moves an fd the kernel numbered below FD_SETSIZE to
 * FD_SETSIZE or above, so a program that holds fewer than 1024 fds keeps
 * every fd within select()'s reach, whatever the settings:
 *
 *   select_above_1024 MODE low   default BASE, soft limit 1024.
 *   select_above_1024 MODE high  FDRANGE_BASE above 1024 under a raised
 *                                limit: the chunks lie beyond FD_SETSIZE,
 *                                so nothing is moved there.  (The library
 *                                used to move these fds above 1024.)
 */
#include "hard.h"

#include <poll.h>
#include <sys/select.h>

#define NT 4

struct job {
	pthread_t tid;
	int p[2];
};

static void *make(void *arg)
{
	struct job *j = arg;

	CHECK(pipe(j->p) == 0, "pipe: %s", strerror(errno));
	return NULL;
}

int main(int argc, char **argv)
{
	struct job jobs[NT];
	const char *mode = argc > 2 ? argv[2] : "";
	int before, above = 0;

	hard_init(argc, argv);
	if (!strcmp(mode, "low")) {
		struct rlimit rl;

		CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0, "getrlimit");
		rl.rlim_cur = FD_SETSIZE;
		CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit");
	} else {
		CHECK(!strcmp(mode, "high"), "mode low or high");
	}
	before = count_fds();
	for (int t = 0; t < NT; t++)
		CHECK(pthread_create(&jobs[t].tid, NULL, make, &jobs[t]) == 0, "pthread_create");
	for (int t = 0; t < NT; t++) {
		pthread_join(jobs[t].tid, NULL);
		CHECK(write(jobs[t].p[1], "s", 1) == 1, "write");
	}
	for (int t = 0; t < NT; t++) {
		int rfd = jobs[t].p[0];

		if (rfd < FD_SETSIZE) {
			fd_set set;
			struct timeval tv = { 5, 0 };

			FD_ZERO(&set);
			FD_SET(rfd, &set);
			CHECK(select(rfd + 1, &set, NULL, NULL, &tv) == 1 && FD_ISSET(rfd, &set),
			      "select on fd %d", rfd);
		} else {
			/* What a select() program would corrupt; poll() is fine. */
			struct pollfd pfd = { rfd, POLLIN, 0 };

			above++;
			CHECK(poll(&pfd, 1, 5000) == 1 && pfd.revents & POLLIN, "poll on fd %d", rfd);
		}
		close(jobs[t].p[0]);
		close(jobs[t].p[1]);
	}
	if (!strcmp(mode, "low"))
		CHECK(above == 0, "%d fds at or above FD_SETSIZE under a limit of FD_SETSIZE", above);
	else
		CHECK(above == 0, "%d of %d read ends >= FD_SETSIZE with a BASE above it (%s)",
		      above, NT, argv[1]);
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	printf("select %s: %d of %d fds beyond select()'s reach: ok (%s)\n", mode, above, NT, argv[1]);
	return 0;
}
