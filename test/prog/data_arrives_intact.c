/* SPDX-License-Identifier: MIT */
/*
 * Moved fds still refer to what they were created for: bytes written
 * through moved pipes, socketpairs, TCP connections and memfds arrive
 * intact, and an opened file is the same inode as its path.
 */
#include "common.h"

static void roundtrip(const char *what, int wfd, int rfd)
{
	char out[4096], in[4096];
	size_t got = 0;

	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (char)(i * 131 + wfd);
	CHECK(write(wfd, out, sizeof(out)) == (ssize_t)sizeof(out), "%s: write: %s", what, strerror(errno));
	while (got < sizeof(in)) {
		ssize_t n = read(rfd, in + got, sizeof(in) - got);

		CHECK(n > 0, "%s: read: %s", what, n ? strerror(errno) : "EOF");
		got += (size_t)n;
	}
	CHECK(!memcmp(in, out, sizeof(in)), "%s: data differs", what);
}

int main(int argc, char **argv)
{
	struct maker_ctx ctx;
	int before, p[2], s[2], fd, cl, srv;
	struct stat a, b;
	char path[128];

	test_mode(argc, argv);
	maker_ctx_init(&ctx);
	before = count_fds();

	CHECK(pipe(p) == 0, "pipe");
	roundtrip("pipe", p[1], p[0]);
	close(p[0]);
	close(p[1]);
	CHECK(pipe2(p, O_CLOEXEC) == 0, "pipe2");
	roundtrip("pipe2", p[1], p[0]);
	close(p[0]);
	close(p[1]);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, s) == 0, "socketpair");
	roundtrip("socketpair a->b", s[0], s[1]);
	roundtrip("socketpair b->a", s[1], s[0]);
	close(s[0]);
	close(s[1]);
	CHECK(connect_client(&ctx, &cl) == 0, "connect");
	srv = accept4(ctx.listener, NULL, NULL, SOCK_CLOEXEC);
	CHECK(srv >= 0, "accept4");
	roundtrip("tcp client->server", cl, srv);
	roundtrip("tcp server->client", srv, cl);
	close(cl);
	close(srv);

	fd = memfd_create("intact", 0);
	CHECK(fd >= 0, "memfd_create");
	CHECK(pwrite(fd, "marker-1234", 11, 0) == 11, "pwrite");
	{
		char buf[16] = { 0 };

		CHECK(pread(fd, buf, 11, 0) == 11 && !strcmp(buf, "marker-1234"), "memfd content");
	}
	close(fd);

	snprintf(path, sizeof(path), "%s/inode", ctx.dir);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0, "open: %s", strerror(errno));
	CHECK(fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino &&
	      a.st_dev == b.st_dev, "fd %d is not the file it was opened for", fd);
	close(fd);

	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	maker_ctx_fini(&ctx);
	printf("data intact: ok (%s)\n", argv[1]);
	return 0;
}
