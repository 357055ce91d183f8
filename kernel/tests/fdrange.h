/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers for the fd-range guest tests, kernel/tests/fdrange_*.c:
 * one program per behaviour of the per-task preferred fd range
 * (PR_SET_FD_RANGE, CONFIG_FD_RANGE, patch 0002 in kernel/patches/), on top of
 * common.h (its includes, die(), the alarm handler).  Each is run as
 *
 *   fdrange_NAME on|off [ITERS]
 *
 * "off" (a kernel without the range, or booted with fd_range=off): both
 * prctls fail with EINVAL and every allocation takes the lowest free
 * number; every program checks that, whatever its behaviour.  "on": the
 * program's own behaviour.  Each prints "fdrange_NAME: PASS" or FAIL lines
 * and exits 1 on any failure.  All loops are bounded; alarm() bounds every
 * program.
 */
#ifndef FDRANGE_H
#define FDRANGE_H

#include "common.h"
#include <dirent.h>
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

#ifndef PR_SET_FD_RANGE
#define PR_SET_FD_RANGE 0x46440001
#define PR_GET_FD_RANGE 0x46440002
#endif
#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif

static atomic_int failures;
static long iters = 1000;	/* ITERS: rounds of the racing test */
static const char *self_path;	/* argv[0], for the exec test */

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s: FAIL %s:%d: ", prog, __func__, __LINE__); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		failures++; \
	} \
} while (0)

static inline int set_range(unsigned lo, unsigned hi)
{
	return prctl(PR_SET_FD_RANGE, lo, hi, 0, 0);
}

/* {lo, hi, floor}; all ~0 if the prctl failed */
static inline void get_range(unsigned r[3])
{
	r[0] = r[1] = r[2] = ~0u;
	if (prctl(PR_GET_FD_RANGE, r, 0, 0, 0))
		r[0] = r[1] = r[2] = ~0u;
}

/* Set [lo, hi) and check that PR_GET_FD_RANGE reports it. */
static inline void set_range_checked(unsigned lo, unsigned hi)
{
	unsigned r[3];

	CHECK(set_range(lo, hi) == 0, "PR_SET_FD_RANGE [%u,%u): %s", lo, hi, strerror(errno));
	get_range(r);
	CHECK(r[0] == lo && r[1] == hi, "PR_GET_FD_RANGE gave [%u,%u), want [%u,%u)", r[0], r[1], lo, hi);
}

/* The fds this thread's table holds as the kernel counts them
 * (PR_GET_FD_RANGE's fifth value), or -1. */
static inline long kernel_open_count(void)
{
	unsigned r[5];

	if (prctl(PR_GET_FD_RANGE, r, 5, 0, 0))
		return -1;
	return r[4];
}

/* The same, counted in /proc/thread-self/fd, without the directory's own
 * fd; -1 if it cannot be read. */
static inline long proc_open_count(void)
{
	DIR *d = opendir("/proc/thread-self/fd");
	struct dirent *e;
	long n = -1;  /* the directory's own fd is listed */

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* Called with no other thread running: nothing half-made in the table. */
#define COUNT_MATCHES(when) do { \
	long k_ = kernel_open_count(), p_ = proc_open_count(); \
	CHECK(k_ >= 0 && k_ == p_, "%s: the kernel counts %ld fds, /proc/thread-self/fd lists %ld", \
	      (when), k_, p_); \
} while (0)

/* The lowest free fd now, found without allocating one. */
static inline int lowest_free(void)
{
	for (int fd = 0; fd < 4096; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF)
			return fd;
	return -1;
}

static inline int in(int fd, unsigned lo, unsigned hi)
{
	return fd >= 0 && (unsigned)fd >= lo && (unsigned)fd < hi;
}

static inline int tcp_listener(int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001) };
	socklen_t len = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) || listen(s, 16) ||
	    getsockname(s, (struct sockaddr *)&a, &len))
		return -1;
	*port = ntohs(a.sin_port);
	return s;
}

static inline int tcp_connect(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(0x7f000001) };
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof(a))) {
		close(s);
		return -1;
	}
	return s;
}

/* One fd through SCM_RIGHTS over a socketpair; the received number. */
static inline int pass_fd(int fd)
{
	int sv[2], got = -1;
	char c = 'x', cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;

	/* The pair itself goes wherever the range says; only the received fd
	 * is looked at. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -1;
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	if (sendmsg(sv[0], &m, 0) == 1) {
		memset(cbuf, 0, sizeof(cbuf));
		m.msg_controllen = sizeof(cbuf);
		if (recvmsg(sv[1], &m, MSG_CMSG_CLOEXEC) == 1 && (cm = CMSG_FIRSTHDR(&m)))
			memcpy(&got, CMSG_DATA(cm), sizeof(int));
	}
	close(sv[0]);
	close(sv[1]);
	return got;
}

/* Without a range, eventfd and pipe take the lowest free number. */
static inline void no_range_is_lowest_free(void)
{
	int want = lowest_free(), fd = eventfd(0, EFD_CLOEXEC), p[2];

	CHECK(fd == want, "no range: eventfd gave %d, lowest free %d", fd, want);
	want = lowest_free();
	CHECK(pipe2(p, O_CLOEXEC) == 0 && p[0] == want, "no range: pipe gave %d, lowest %d", p[0], want);
	close(p[0]);
	close(p[1]);
	close(fd);
}

/*
 * main() of every fdrange_* program: NAME on|off [ITERS].  "off": both
 * prctls fail with EINVAL and numbering is lowest-free.  "on": @on, the
 * program's behaviour.  @always (may be NULL) runs after either.
 */
static inline int range_main(int argc, char **argv, const char *name,
			     void (*on)(void), void (*always)(void))
{
	unsigned r[3];

	prog = name;
	self_path = argv[0];
	signal(SIGALRM, on_alarm);
	alarm(600);
	if (argc < 2 || (strcmp(argv[1], "on") && strcmp(argv[1], "off"))) {
		fprintf(stderr, "usage: %s on|off [ITERS]\n", name);
		return 2;
	}
	if (argc > 2)
		iters = atol(argv[2]);
	no_range_is_lowest_free();
	if (!strcmp(argv[1], "off")) {
		errno = 0;
		CHECK(set_range(100, 110) == -1 && errno == EINVAL, "PR_SET_FD_RANGE did not fail with EINVAL");
		errno = 0;
		CHECK(prctl(PR_GET_FD_RANGE, r, 0, 0, 0) == -1 && errno == EINVAL,
		      "PR_GET_FD_RANGE did not fail with EINVAL");
		no_range_is_lowest_free();
	} else {
		on();
	}
	if (always)
		always();
	printf("%s: %s\n", prog, failures ? "FAIL" : "PASS");
	fflush(stdout);
	return failures ? 1 : 0;
}

#endif
