/* SPDX-License-Identifier: MIT */
/*
 * Run under inject_syscall.so (see there): the library's own F_DUPFD or
 * close fails.  Whatever fails inside the library, the program sees
 * exactly what libc returned: when the move fails, the very fd libc
 * created (the lowest free number, which the test predicts), with errno
 * untouched and close-on-exec as asked; when the close of the original
 * "fails", the moved fd and no leak.  Failing calls keep libc's -1/errno.
 */
#include "hard.h"

#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#define SENTINEL 4242

enum expect { EXP_LOWEST, EXP_PLACED, EXP_EITHER };

static int lowest_free_from(int from)
{
	int fd = fcntl(0, F_DUPFD, from);

	CHECK(fd >= 0, "F_DUPFD");
	close(fd);
	return fd;
}

/* The two numbers a pipe would get now. */
static void lowest_two(int two[2])
{
	two[0] = fcntl(0, F_DUPFD, 0);
	two[1] = fcntl(0, F_DUPFD, 0);
	CHECK(two[0] >= 0 && two[1] >= 0, "F_DUPFD");
	close(two[0]);
	close(two[1]);
}

static void check_new(const char *what, int fd, int predicted, bool cloexec, enum expect exp)
{
	CHECK(fd >= 0, "%s failed: %s", what, strerror(errno));
	CHECK(errno == SENTINEL, "%s changed errno to %d", what, errno);
	CHECK(fcntl(fd, F_GETFD) == (cloexec ? FD_CLOEXEC : 0), "%s: fd %d close-on-exec wrong", what, fd);
	if (exp == EXP_LOWEST)
		CHECK(fd == predicted, "%s returned %d, libc returned %d", what, fd, predicted);
	else if (exp == EXP_PLACED)
		CHECK(in_my_range(fd), "%s: fd %d not placed", what, fd);
	else
		CHECK(fd == predicted || in_my_range(fd), "%s: fd %d neither libc's %d nor placed",
		      what, fd, predicted);
}

int main(int argc, char **argv)
{
	unsigned long (*count)(void) = (unsigned long (*)(void))dlsym(RTLD_DEFAULT, "inject_count");
	const char *inj = getenv("INJECT") ? getenv("INJECT") : "";
	bool every = env_num("INJECT_EVERY", 1) == 1;
	/* Every move failing: libc's fd; every close failing or nothing
	 * injected: the placed fd; some of each: one or the other. */
	enum expect exp;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int before, lst, cli, fd, p[2], two[2];
	unsigned rounds = (unsigned)env_num("HARD_ROUNDS", 50);
	sigset_t ss;

	hard_init(argc, argv);
	exp = !placed_mode || (!strncmp(inj, "dupfd=", 6) && every) ? EXP_LOWEST :
	      !strncmp(inj, "dupfd=", 6) ? EXP_EITHER : EXP_PLACED;
	CHECK(!*inj || count, "INJECT set but inject_syscall.so not loaded");
	before = count_fds();
	lst = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(lst >= 0 && bind(lst, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(lst, 64) == 0 &&
	      getsockname(lst, (struct sockaddr *)&a, &alen) == 0, "listener");
	sigemptyset(&ss);
	sigaddset(&ss, SIGUSR2);
	for (unsigned r = 0; r < rounds; r++) {
		bool cx = r & 1;
		int low;

#define ONE(name, call, cloexec) do { \
		low = lowest_free_from(0); \
		errno = SENTINEL; \
		fd = (call); \
		check_new(name, fd, low, cloexec, exp); \
		close(fd); \
	} while (0)
		ONE("open", open("/dev/null", O_RDONLY | (cx ? O_CLOEXEC : 0)), cx);
		ONE("openat", openat(AT_FDCWD, "/dev/null", O_RDONLY | (cx ? O_CLOEXEC : 0)), cx);
		ONE("socket", socket(AF_UNIX, SOCK_DGRAM | (cx ? SOCK_CLOEXEC : 0), 0), cx);
		ONE("eventfd", eventfd(0, cx ? EFD_CLOEXEC : 0), cx);
		ONE("epoll_create1", epoll_create1(cx ? EPOLL_CLOEXEC : 0), cx);
		ONE("timerfd_create", timerfd_create(CLOCK_MONOTONIC, cx ? TFD_CLOEXEC : 0), cx);
		ONE("memfd_create", memfd_create("inj", cx ? MFD_CLOEXEC : 0), cx);
		ONE("inotify_init1", inotify_init1(cx ? IN_CLOEXEC : 0), cx);
		ONE("signalfd", signalfd(-1, &ss, cx ? SFD_CLOEXEC : 0), cx);
#undef ONE
		/* accept4: the client is created first, then predict. */
		cli = socket(AF_INET, SOCK_STREAM, 0);
		CHECK(cli >= 0 && connect(cli, (struct sockaddr *)&a, sizeof(a)) == 0, "connect");
		low = lowest_free_from(0);
		errno = SENTINEL;
		fd = accept4(lst, NULL, NULL, cx ? SOCK_CLOEXEC : 0);
		check_new("accept4", fd, low, cx, exp);
		CHECK(write(cli, "a", 1) == 1 && read(fd, p, 1) == 1, "accepted fd carries data");
		close(fd);
		close(cli);
		/* Pairs: both numbers libc gave (the two lowest free). */
		lowest_two(two);
		errno = SENTINEL;
		CHECK(pipe2(p, cx ? O_CLOEXEC : 0) == 0, "pipe2: %s", strerror(errno));
		check_new("pipe2[0]", p[0], two[0], cx, exp);
		check_new("pipe2[1]", p[1], two[1], cx, exp);
		CHECK(write(p[1], "x", 1) == 1 && read(p[0], &low, 1) == 1, "pipe data");
		close(p[0]);
		close(p[1]);
		lowest_two(two);
		errno = SENTINEL;
		CHECK(socketpair(AF_UNIX, SOCK_STREAM | (cx ? SOCK_CLOEXEC : 0), 0, p) == 0, "socketpair");
		check_new("socketpair[0]", p[0], two[0], cx, exp);
		check_new("socketpair[1]", p[1], two[1], cx, exp);
		CHECK(write(p[1], "x", 1) == 1 && read(p[0], &low, 1) == 1, "socketpair data");
		close(p[0]);
		close(p[1]);
		/* A failing call: exactly libc's -1 and errno. */
		errno = SENTINEL;
		CHECK(open("/nonexistent/x", O_RDONLY) == -1 && errno == ENOENT, "failing open: %d", errno);
		CHECK(count_fds() == before + 1, "round %u: %d fds open, %d expected", r, count_fds(),
		      before + 1);
	}
	close(lst);
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	printf("injected failures (%s): %lu injected, program saw libc's results: ok (%s)\n",
	       *inj ? inj : "none", count ? count() : 0ul, argv[1]);
	CHECK(!placed_mode || !*inj || count() > 0, "nothing was injected");
	return 0;
}
