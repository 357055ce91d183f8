/* SPDX-License-Identifier: MIT */
/*
 * Every wrapped call, with and without its close-on-exec flag: the fd the
 * caller gets has FD_CLOEXEC exactly as requested, keeps its status flags
 * (O_NONBLOCK), and errno is what it was before the call.
 */
#include "common.h"

int main(int argc, char **argv)
{
	struct maker_ctx ctx;
	int before;

	test_mode(argc, argv);
	maker_ctx_init(&ctx);
	before = count_fds();
	for (unsigned m = 0; m < NMAKERS; m++) {
		for (int want = 0; want <= (int)makers[m].has_cloexec; want++) {
			int out[2], n;

			errno = 12345;
			n = makers[m].make(&ctx, want, out);
			CHECK(n > 0, "%s: %s", makers[m].name, strerror(errno));
			CHECK(errno == 12345, "%s: errno changed to %d on success", makers[m].name, errno);
			/* out[1] of accept is the client's socket(), always without the flag */
			for (int i = 0; i < (n == 2 && !strncmp(makers[m].name, "accept", 6) ? 1 : n); i++) {
				int fl = fcntl(out[i], F_GETFD);

				CHECK(fl >= 0, "%s: fd %d invalid", makers[m].name, out[i]);
				CHECK(!!(fl & FD_CLOEXEC) == want, "%s: FD_CLOEXEC %d, asked %d (fd %d)",
				      makers[m].name, !!(fl & FD_CLOEXEC), want, out[i]);
			}
			for (int i = 0; i < n; i++)
				close(out[i]);
		}
	}
	/* Status flags belong to the open file and must survive the move. */
	{
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		int p[2];

		CHECK(fd >= 0 && (fcntl(fd, F_GETFL) & O_NONBLOCK), "socket lost O_NONBLOCK");
		close(fd);
		CHECK(pipe2(p, O_NONBLOCK | O_CLOEXEC) == 0, "pipe2");
		CHECK((fcntl(p[0], F_GETFL) & O_NONBLOCK) && (fcntl(p[1], F_GETFD) & FD_CLOEXEC),
		      "pipe2 lost a flag");
		close(p[0]);
		close(p[1]);
	}
	/* A failing call returns what libc returns, with libc's errno. */
	errno = 0;
	CHECK(open("/nonexistent/x", O_RDONLY) == -1 && errno == ENOENT, "open failure: errno %d", errno);
	errno = 0;
	CHECK(socket(12345, SOCK_STREAM, 0) == -1 && errno == EAFNOSUPPORT, "socket failure: errno %d", errno);
	errno = 0;
	CHECK(accept(ctx.dirfd, NULL, NULL) == -1 && errno == ENOTSOCK, "accept failure: errno %d", errno);
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	maker_ctx_fini(&ctx);
	printf("close-on-exec and errno: ok (%s)\n", argv[1]);
	return 0;
}
