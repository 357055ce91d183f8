// SPDX-License-Identifier: GPL-2.0
/*
 * fdalloc on|off [ITERS]: the per-task preferred fd range
 * (PR_SET_FD_RANGE, CONFIG_FD_RANGE).
 *
 * "off" (a kernel without it, or fd_range=off): both prctls fail with
 * EINVAL and every allocation takes the lowest free number.  "on": the
 * range's semantics, one check per behaviour a user relies on:
 *  - a task without a range gets the lowest free number, as before;
 *  - with one, every lowest-free creation path lands in it: open, socket,
 *    raw syscall(SYS_socket), accept, pipe, dup, eventfd, epoll_create1,
 *    pidfd_open, opendir (glibc's internal open), SCM_RIGHTS, io_uring's
 *    openat and accept into the table when they complete inline, in the
 *    submitter (a request punted to an io-wq worker runs as that worker,
 *    a task without a range, and gets the lowest free fd), and the files
 *    and sockets glibc's NSS opens and closes inside getaddrinfo() and
 *    getpwnam() (seen through a seccomp listener on close());
 *  - explicit targets ignore it: F_DUPFD with a minimum, dup2, dup3;
 *  - a full range falls back to the lowest free number, and so does an
 *    allocation while some fd below the range's floor is free, or while
 *    the table holds fewer fds than the range's min_open; with enough
 *    held, a hole below the range is left a hole;
 *  - the kernel's count of the fds a table holds (PR_GET_FD_RANGE's fifth
 *    value) is exact through every path that opens or closes one: F_DUPFD,
 *    dup2 to a free and to an open fd, dup3, SCM_RIGHTS, close_range, a
 *    failed open, a fork child's copy, unshare, close_range(UNSHARE) over
 *    the highest fds (a shorter copy), exec's close-on-exec;
 *  - a range past the table's size grows the table, and when the table
 *    cannot grow (fs.nr_open lowered) the lowest free fd comes; past
 *    RLIMIT_NOFILE it is not used;
 *  - a new thread, a fork child and an exec'd program start without one;
 *    unshare(CLONE_FILES) and close_range(CLOSE_RANGE_UNSHARE) leave the
 *    table it was set for, so it no longer applies;
 *  - threads with their own ranges allocate and close concurrently: each
 *    fd in its thread's range while the range has room, never one fd
 *    twice;
 *  - bad arguments: EINVAL.
 * Prints "fdalloc: PASS" or FAIL lines; exit status 1 on any failure.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <liburing.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <stddef.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PR_SET_FD_RANGE
#define PR_SET_FD_RANGE 0x46440001
#define PR_GET_FD_RANGE 0x46440002
#endif
#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif

static int failures;
static const char *self_path;

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "fdalloc: FAIL %s:%d: ", __func__, __LINE__); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		failures++; \
	} \
} while (0)

static int set_range(unsigned lo, unsigned hi)
{
	return prctl(PR_SET_FD_RANGE, lo, hi, 0, 0);
}

/* {lo, hi, floor}; all ~0 if the prctl failed */
static void get_range(unsigned r[3])
{
	r[0] = r[1] = r[2] = ~0u;
	if (prctl(PR_GET_FD_RANGE, r, 0, 0, 0))
		r[0] = r[1] = r[2] = ~0u;
}

/* The fds this thread's table holds as the kernel counts them
 * (PR_GET_FD_RANGE's fifth value), or -1. */
static long kernel_open_count(void)
{
	unsigned r[5];

	if (prctl(PR_GET_FD_RANGE, r, 5, 0, 0))
		return -1;
	return r[4];
}

/* The same, counted in /proc/thread-self/fd, without the directory's own
 * fd; -1 if it cannot be read. */
static long proc_open_count(void)
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
static int lowest_free(void)
{
	for (int fd = 0; fd < 4096; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF)
			return fd;
	return -1;
}

static int in(int fd, unsigned lo, unsigned hi)
{
	return fd >= 0 && (unsigned)fd >= lo && (unsigned)fd < hi;
}

static int tcp_listener(int *port)
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

static int tcp_connect(int port)
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
static int pass_fd(int fd)
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

/* Submit the prepared request and check the fd its completion installed
 * (an error result fails the check too). */
static void uring_check(struct io_uring *ring, const char *what, unsigned lo, unsigned hi)
{
	struct io_uring_cqe *cqe;
	int r;

	io_uring_submit(ring);
	if (io_uring_wait_cqe(ring, &cqe))
		return;
	r = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	CHECK(in(r, lo, hi), "io_uring %s gave %d, range [%u,%u)", what, r, lo, hi);
	if (r >= 0)
		close(r);
}

/* io_uring openat and accept into the table (not fixed files). */
static void uring_paths(unsigned lo, unsigned hi, int lst, int port)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	int c;

	/* The ring's own fd is lowest-free too: set up before the check. */
	if (io_uring_queue_init(4, &ring, 0)) {
		fprintf(stderr, "fdalloc: io_uring unavailable, its paths not checked\n");
		return;
	}
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_openat(sqe, AT_FDCWD, "/proc/self/status", O_RDONLY | O_CLOEXEC, 0);
	uring_check(&ring, "openat", lo, hi);
	c = tcp_connect(port);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_accept(sqe, lst, NULL, NULL, SOCK_CLOEXEC);
	uring_check(&ring, "accept", lo, hi);
	if (c >= 0)
		close(c);
	io_uring_queue_exit(&ring);
}

/*
 * NSS: glibc opens /etc/nsswitch.conf, /etc/hosts, /etc/passwd and tries
 * nscd's socket inside getaddrinfo() and getpwnam(), and closes them before
 * it returns, so no interposer sees them and their numbers are gone by
 * then.  A thread of its own (a seccomp filter cannot be taken off again)
 * sets the range and does both lookups under a filter that hands every
 * close() to this thread, which reads the fd's number and what it names
 * (the table is shared, the fd still open) and lets the close go on.
 */
struct nss_run {
	unsigned lo, hi;
	int listener;		/* the filter's listener; -errno; -1000 not yet */
	int range_err;		/* errno of the thread's PR_SET_FD_RANGE */
	int gai;		/* getaddrinfo's result */
	int pw;			/* getpwnam found root */
};

static void *nss_lookups(void *arg)
{
	struct nss_run *n = arg;
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_close, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai = NULL;
	int l;

	/* The listener is made before the range is set: only NSS's fds are
	 * made under it. */
	l = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ? -1 :
	    (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	__atomic_store_n(&n->listener, l < 0 ? -errno : l, __ATOMIC_RELEASE);
	if (l < 0)
		return NULL;
	if (set_range(n->lo, n->hi)) {
		n->range_err = errno;
		return NULL;
	}
	n->gai = getaddrinfo("localhost", "80", &hints, &ai);
	if (!n->gai)
		freeaddrinfo(ai);
	n->pw = getpwnam("root") != NULL;
	return NULL;
}

static void nss_paths(unsigned lo, unsigned hi)
{
	struct nss_run n = { .lo = lo, .hi = hi, .listener = -1000, .gai = -1 };
	int l, closed = 0, out = 0, hosts = 0, passwd = 0, sockets = 0, ended = 0;
	pthread_t t;

#ifndef __x86_64__
	printf("fdalloc: NSS not checked: the filter is written for x86_64\n");
	return;
#endif
	if (pthread_create(&t, NULL, nss_lookups, &n)) {
		CHECK(0, "nss: pthread_create");
		return;
	}
	/* No limit here: alarm() bounds the program. */
	while ((l = __atomic_load_n(&n.listener, __ATOMIC_ACQUIRE)) == -1000)
		usleep(1000);
	CHECK(l >= 0, "nss: no seccomp listener: %s", strerror(l < 0 ? -l : 0));
	/* Until every task under the filter is gone: POLLHUP. */
	while (l >= 0) {
		struct pollfd p = { .fd = l, .events = POLLIN };
		struct seccomp_notif req;
		struct seccomp_notif_resp resp;
		char link[64], name[256];
		ssize_t len;
		int fd;

		if (poll(&p, 1, 10000) <= 0) {
			CHECK(0, "nss: the lookups stopped for 10 s");
			break;
		}
		if (!(p.revents & POLLIN)) {
			ended = (p.revents & POLLHUP) && !(p.revents & (POLLERR | POLLNVAL));
			CHECK(ended, "nss: the listener ended with revents %#x", p.revents);
			break;
		}
		memset(&req, 0, sizeof(req));
		if (ioctl(l, SECCOMP_IOCTL_NOTIF_RECV, &req)) {
			if (errno == ENOENT)	/* the task went away */
				continue;
			CHECK(0, "nss: SECCOMP_IOCTL_NOTIF_RECV: %s", strerror(errno));
			break;
		}
		fd = (int)req.data.args[0];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		len = readlink(link, name, sizeof(name) - 1);
		name[len > 0 ? len : 0] = '\0';
		closed++;
		hosts += !strcmp(name, "/etc/hosts");
		passwd += !strcmp(name, "/etc/passwd");
		sockets += !strncmp(name, "socket:", 7);
		if (!in(fd, lo, hi)) {
			CHECK(0, "nss: glibc closed fd %d (%s), outside [%u,%u)", fd, name, lo, hi);
			out++;
		}
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		if (ioctl(l, SECCOMP_IOCTL_NOTIF_SEND, &resp) && errno != ENOENT) {
			CHECK(0, "nss: SECCOMP_IOCTL_NOTIF_SEND: %s", strerror(errno));
			break;
		}
	}
	/* Closed before the join: a close() the loop did not answer fails
	 * with ENOSYS once no listener is left, and the thread finishes. */
	if (l >= 0)
		close(l);
	pthread_join(t, NULL);
	if (l < 0)
		return;
	CHECK(!n.range_err, "nss: PR_SET_FD_RANGE in the thread: %s", strerror(n.range_err));
	CHECK(n.gai == 0 && n.pw, "nss: getaddrinfo(localhost) %d, getpwnam(root) %s: is /etc set up?",
	      n.gai, n.pw ? "found" : "not found");
	CHECK(hosts && passwd, "nss: /etc/hosts closed %d times, /etc/passwd %d: NSS did not read them",
	      hosts, passwd);
	if (ended && !out && hosts && passwd)
		printf("fdalloc: NSS: %d fds closed inside getaddrinfo/getpwnam (/etc/hosts, /etc/passwd, %d sockets), all in [%u,%u)\n",
		       closed, sockets, lo, hi);
}

/* Every lowest-free creation path, with the range [lo, hi) set. */
static void creation_paths(unsigned lo, unsigned hi)
{
	int port = 0, lst, c, a, p[2], fd, d;
	DIR *dir;

	lst = tcp_listener(&port);
	CHECK(in(lst, lo, hi), "socket gave %d", lst);
	fd = (int)syscall(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CHECK(in(fd, lo, hi), "syscall(SYS_socket) gave %d", fd);
	close(fd);
	c = tcp_connect(port);
	a = accept4(lst, NULL, NULL, SOCK_CLOEXEC);
	CHECK(in(c, lo, hi) && in(a, lo, hi), "connect socket %d, accept4 %d", c, a);
	close(c);
	close(a);
	CHECK(pipe2(p, O_CLOEXEC) == 0 && in(p[0], lo, hi) && in(p[1], lo, hi),
	      "pipe2 gave %d %d", p[0], p[1]);
	fd = dup(p[0]);
	CHECK(in(fd, lo, hi), "dup gave %d", fd);
	close(fd);
	fd = pass_fd(p[1]);
	CHECK(in(fd, lo, hi), "SCM_RIGHTS gave %d", fd);
	close(fd);
	close(p[0]);
	close(p[1]);
	fd = eventfd(0, EFD_CLOEXEC);
	CHECK(in(fd, lo, hi), "eventfd gave %d", fd);
	close(fd);
	fd = epoll_create1(EPOLL_CLOEXEC);
	CHECK(in(fd, lo, hi), "epoll_create1 gave %d", fd);
	close(fd);
	fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	CHECK(in(fd, lo, hi), "pidfd_open gave %d", fd);
	close(fd);
	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	CHECK(in(fd, lo, hi), "open gave %d", fd);
	/* explicit targets: F_DUPFD's minimum, dup2, dup3 */
	d = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	CHECK(d >= 0 && d < (int)lo, "F_DUPFD(0) gave %d, not the lowest free", d);
	close(d);
	d = fcntl(fd, F_DUPFD_CLOEXEC, 20);
	CHECK(d == 20, "F_DUPFD(20) gave %d", d);
	CHECK(dup2(fd, 21) == 21 && dup3(fd, 22, O_CLOEXEC) == 22, "dup2/dup3 moved");
	close(20);
	close(21);
	close(22);
	close(fd);
	dir = opendir("/proc/self");
	CHECK(dir && in(dirfd(dir), lo, hi), "opendir gave %d", dir ? dirfd(dir) : -1);
	if (dir)
		closedir(dir);
	uring_paths(lo, hi, lst, port);
	close(lst);
	nss_paths(lo, hi);
}

static void no_range_is_lowest_free(void)
{
	int want = lowest_free(), fd = eventfd(0, EFD_CLOEXEC), p[2];

	CHECK(fd == want, "no range: eventfd gave %d, lowest free %d", fd, want);
	want = lowest_free();
	CHECK(pipe2(p, O_CLOEXEC) == 0 && p[0] == want, "no range: pipe gave %d, lowest %d", p[0], want);
	close(p[0]);
	close(p[1]);
	close(fd);
}

static void full_range_falls_back(void)
{
	int fds[8], extra, want;

	CHECK(set_range(300, 304) == 0, "set [300,304): %s", strerror(errno));
	for (int i = 0; i < 4; i++) {
		fds[i] = eventfd(0, EFD_CLOEXEC);
		CHECK(fds[i] == 300 + i, "fd %d of the range is %d", i, fds[i]);
	}
	want = lowest_free();
	extra = eventfd(0, EFD_CLOEXEC);
	CHECK(extra == want, "full range: got %d, lowest free %d", extra, want);
	close(fds[2]);
	fds[2] = eventfd(0, EFD_CLOEXEC);
	CHECK(fds[2] == 302, "a freed slot in the range: got %d, want 302", fds[2]);
	for (int i = 0; i < 4; i++)
		close(fds[i]);
	close(extra);
	set_range(0, 0);
}

static void resize_and_limit(void)
{
	struct rlimit rl;
	int fd, want;

	/* Past the table's size (at most 4096 here): the table grows. */
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < 8192) {
		struct rlimit up = { 8192, rl.rlim_max > 8192 ? rl.rlim_max : 8192 };

		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			rl = up;
	}
	CHECK(set_range(5000, 5008) == 0, "set [5000,5008): %s", strerror(errno));
	fd = eventfd(0, EFD_CLOEXEC);
	if (rl.rlim_cur > 5000)
		CHECK(fd == 5000, "range past the table: got %d", fd);
	else
		CHECK(fd >= 0 && fd < 5000, "range past RLIMIT_NOFILE %lu: got %d",
		      (unsigned long)rl.rlim_cur, fd);
	close(fd);
	/* The table cannot grow to the range (fs.nr_open lowered under it):
	 * the lowest free fd, never an error the range caused.  In a fork
	 * child, whose copy of the table is small again. */
	if (rl.rlim_cur > 5000) {
		pid_t pid;
		int st;

		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			FILE *f = fopen("/proc/sys/fs/nr_open", "r+");
			unsigned long was = 0;

			failures = 0;  /* the child's own verdict */

			if (!f || fscanf(f, "%lu", &was) != 1) {
				fprintf(stderr, "fdalloc: fs.nr_open not readable, growth failure not checked\n");
				_exit(0);
			}
			CHECK(set_range(5000, 5008) == 0, "set [5000,5008): %s", strerror(errno));
			rewind(f);
			if (fprintf(f, "4096\n") > 0 && fflush(f) == 0) {
				want = lowest_free();
				fd = eventfd(0, EFD_CLOEXEC);
				CHECK(fd == want, "table cannot grow to the range: got %d (%s), lowest free %d",
				      fd, fd < 0 ? strerror(errno) : "ok", want);
				CHECK(set_range(5000, 5008) == -1 && errno == EINVAL,
				      "a range past fs.nr_open accepted");
				rewind(f);
				fprintf(f, "%lu\n", was);
				fflush(f);
			} else {
				fprintf(stderr, "fdalloc: fs.nr_open not writable, growth failure not checked\n");
			}
			_exit(failures ? 1 : 0);
		}
		CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st),
		      "the growth-failure child failed");
	}
	/* Past the soft limit: not used at all. */
	rl.rlim_cur = 1024;
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit: %s", strerror(errno));
	want = lowest_free();
	fd = eventfd(0, EFD_CLOEXEC);
	CHECK(fd == want, "range past the limit: got %d, lowest free %d", fd, want);
	close(fd);
	set_range(0, 0);
}

static void bad_arguments(void)
{
	unsigned r[3];

	errno = 0;
	CHECK(set_range(10, 10) == -1 && errno == EINVAL, "lo == hi accepted");
	CHECK(set_range(20, 10) == -1 && errno == EINVAL, "lo > hi accepted");
	CHECK(set_range(0, 1u << 31) == -1 && errno == EINVAL, "hi past nr_open accepted");
	CHECK(prctl(PR_SET_FD_RANGE, 100, 110, 101, 0) == -1 && errno == EINVAL, "floor above lo accepted");
	CHECK(prctl(PR_SET_FD_RANGE, 100, 110, 0, 1ul << 32) == -1 && errno == EINVAL,
	      "min_open past 32 bits accepted");
	CHECK(prctl(PR_SET_FD_RANGE, 0, 0, 0, 5) == -1 && errno == EINVAL, "min_open without a range accepted");
	CHECK(prctl(PR_GET_FD_RANGE, NULL, 0, 0, 0) == -1 && errno == EFAULT, "GET to NULL");
	CHECK(prctl(PR_GET_FD_RANGE, r, 2, 0, 0) == -1 && errno == EINVAL, "GET of 2 values accepted");
	CHECK(prctl(PR_GET_FD_RANGE, r, 6, 0, 0) == -1 && errno == EINVAL, "GET of 6 values accepted");
	CHECK(prctl(PR_GET_FD_RANGE, r, 3, 1, 0) == -1 && errno == EINVAL, "GET with arg4 accepted");
	get_range(r);
	CHECK(r[0] == 0 && r[1] == 0, "a failed set left [%u,%u)", r[0], r[1]);
}

/* A floor: the range is used only while every fd below it is open. */
static void floor_keeps_few_fds_low(void)
{
	int fd, want, held[64], n = 0;
	unsigned r[3];

	CHECK(prctl(PR_SET_FD_RANGE, 600, 664, 40, 0) == 0, "set with floor 40: %s", strerror(errno));
	get_range(r);
	CHECK(r[0] == 600 && r[1] == 664 && r[2] == 40, "GET gave [%u,%u) floor %u", r[0], r[1], r[2]);
	want = lowest_free();
	fd = eventfd(0, EFD_CLOEXEC);
	CHECK(fd == want && fd < 40, "few fds (lowest free %d): got %d", want, fd);
	close(fd);
	/* fill everything below the floor: then the range applies */
	while ((fd = lowest_free()) >= 0 && fd < 40 && n < 64)
		held[n++] = fcntl(0, F_DUPFD_CLOEXEC, fd);
	fd = eventfd(0, EFD_CLOEXEC);
	CHECK(fd == 600, "all of 0-39 open: got %d, want 600", fd);
	close(fd);
	/* one fd below the floor freed: its number again */
	if (n > 5) {
		want = held[5];
		close(held[5]);
		fd = eventfd(0, EFD_CLOEXEC);
		CHECK(fd == want, "fd %d below the floor free: got %d", want, fd);
		held[5] = fd;
	}
	for (int i = 0; i < n; i++)
		close(held[i]);
	set_range(0, 0);
}

/*
 * min_open: the range is used only while the table holds that many fds, and
 * then even with holes below it (a connection closed low is not replaced
 * low); with fewer held, the lowest free fd, the hole first.
 */
static void min_open_leaves_holes(void)
{
	int held[24], n = 0, fd, hole, want;
	long open = kernel_open_count();
	unsigned r[5];

	CHECK(open >= 0, "PR_GET_FD_RANGE of 5 values: %s", strerror(errno));
	if (open < 0)
		return;
	COUNT_MATCHES("before min_open");
	CHECK(prctl(PR_SET_FD_RANGE, 600, 664, 3, open + 20) == 0, "set with min_open %ld: %s",
	      open + 20, strerror(errno));
	memset(r, 0xff, sizeof(r));
	CHECK(prctl(PR_GET_FD_RANGE, r, 5, 0, 0) == 0 && r[0] == 600 && r[1] == 664 && r[2] == 3 &&
	      r[3] == open + 20 && r[4] == open, "GET gave [%u,%u) floor %u min_open %u open %u",
	      r[0], r[1], r[2], r[3], r[4]);
	/* fewer than min_open held: the lowest free fd */
	while (n < 20) {
		want = lowest_free();
		held[n] = eventfd(0, EFD_CLOEXEC);
		CHECK(held[n] == want, "holding %ld of %ld: got %d, lowest free %d", open + n, open + 20,
		      held[n], want);
		n++;
	}
	/* min_open held: the range, and a hole below it stays a hole */
	fd = eventfd(0, EFD_CLOEXEC);
	CHECK(fd == 600, "holding min_open (%ld): got %d, want 600", open + 20, fd);
	hole = held[3];
	close(hole);
	held[3] = fd;
	fd = eventfd(0, EFD_CLOEXEC);
	CHECK(fd == 601, "holding %ld with fd %d free: got %d, want 601", open + 20, hole, fd);
	held[n++] = fd;
	COUNT_MATCHES("min_open held");
	/* below min_open again: the hole first */
	close(held[--n]);
	close(held[3]);
	held[3] = -1;
	fd = eventfd(0, EFD_CLOEXEC);
	CHECK(fd == hole, "holding %ld of %ld: got %d, want the hole %d", open + 19, open + 20, fd, hole);
	held[3] = fd;
	for (int i = 0; i < n; i++)
		close(held[i]);
	/* a min_open no table can reach: never used, and no error */
	CHECK(prctl(PR_SET_FD_RANGE, 600, 664, 3, 1ul << 31) == 0, "min_open 2^31: %s", strerror(errno));
	want = lowest_free();
	fd = eventfd(0, EFD_CLOEXEC);
	CHECK(fd == want, "min_open 2^31: got %d, lowest free %d", fd, want);
	close(fd);
	set_range(0, 0);
	COUNT_MATCHES("after min_open");
}

static void *count_in_unshared_thread(void *arg)
{
	(void)arg;
	CHECK(unshare(CLONE_FILES) == 0, "unshare: %s", strerror(errno));
	COUNT_MATCHES("a thread's unshared copy");
	return NULL;
}

/* close_range(UNSHARE) over the highest fds: the copy leaves them out
 * (a shorter table), and must not count them. */
static void *count_after_close_range_unshare(void *arg)
{
	(void)arg;
	CHECK(syscall(SYS_close_range, 900, ~0u, CLOSE_RANGE_UNSHARE) == 0,
	      "close_range(900, ~0, UNSHARE): %s", strerror(errno));
	CHECK(fcntl(900, F_GETFD) < 0 && fcntl(901, F_GETFD) < 0, "900/901 still open in the copy");
	COUNT_MATCHES("close_range(UNSHARE) over the highest fds");
	return NULL;
}

/* The count the min_open condition reads is exact on every path. */
static void open_count_is_exact(void)
{
	int p[2], got, st;
	pthread_t t;
	pid_t pid;

	COUNT_MATCHES("start");
	CHECK(pipe2(p, O_CLOEXEC) == 0, "pipe: %s", strerror(errno));
	COUNT_MATCHES("pipe2");
	CHECK(fcntl(p[0], F_DUPFD_CLOEXEC, 700) == 700, "F_DUPFD 700: %s", strerror(errno));
	COUNT_MATCHES("F_DUPFD");
	CHECK(dup2(p[1], 701) == 701, "dup2 to 701: %s", strerror(errno));
	COUNT_MATCHES("dup2 to a free fd");
	CHECK(dup2(p[0], 701) == 701, "dup2 over 701: %s", strerror(errno));
	COUNT_MATCHES("dup2 over an open fd");
	CHECK(dup3(p[1], 702, O_CLOEXEC) == 702, "dup3 to 702: %s", strerror(errno));
	COUNT_MATCHES("dup3");
	got = pass_fd(p[0]);
	CHECK(got >= 0, "SCM_RIGHTS: nothing received");
	COUNT_MATCHES("SCM_RIGHTS");
	CHECK(syscall(SYS_close_range, 700, 702, 0) == 0, "close_range: %s", strerror(errno));
	COUNT_MATCHES("close_range");
	CHECK(open("/nonexistent-fdalloc", O_RDONLY | O_CLOEXEC) < 0, "/nonexistent-fdalloc opened");
	COUNT_MATCHES("a failed open (the fd put back)");
	CHECK(fcntl(0, F_DUPFD_CLOEXEC, 900) == 900 && fcntl(0, F_DUPFD_CLOEXEC, 901) == 901,
	      "F_DUPFD 900, 901: %s", strerror(errno));
	pthread_create(&t, NULL, count_after_close_range_unshare, NULL);
	pthread_join(t, NULL);
	close(900);
	close(901);
	COUNT_MATCHES("after the close_range(UNSHARE) thread");
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		failures = 0;
		COUNT_MATCHES("fork child");
		_exit(failures ? 1 : 0);
	}
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st), "fork child's count");
	pthread_create(&t, NULL, count_in_unshared_thread, NULL);
	pthread_join(t, NULL);
	COUNT_MATCHES("after a thread's unshare");
	close(got);
	close(p[0]);
	close(p[1]);
	COUNT_MATCHES("closed");
}

static void *thread_start_has_none(void *arg)
{
	unsigned r[3];
	int want = lowest_free(), fd = eventfd(0, EFD_CLOEXEC);

	(void)arg;
	get_range(r);
	CHECK(r[0] == 0 && r[1] == 0, "new thread inherited [%u,%u)", r[0], r[1]);
	CHECK(fd == want, "new thread: got %d, lowest free %d", fd, want);
	close(fd);
	return NULL;
}

static void *thread_unshares(void *arg)
{
	unsigned r[3];
	int how = (int)(long)arg, fd, want;

	set_range(400, 408);
	if (how == 0)
		CHECK(unshare(CLONE_FILES) == 0, "unshare: %s", strerror(errno));
	else
		CHECK(syscall(SYS_close_range, 1000, 1001, CLOSE_RANGE_UNSHARE) == 0,
		      "close_range(UNSHARE): %s", strerror(errno));
	get_range(r);
	CHECK(r[0] == 0 && r[1] == 0, "%s: range [%u,%u) still reported",
	      how ? "close_range" : "unshare", r[0], r[1]);
	want = lowest_free();
	fd = eventfd(0, EFD_CLOEXEC);
	CHECK(fd == want, "%s: got %d, lowest free %d", how ? "close_range" : "unshare", fd, want);
	return NULL;
}

static void new_tasks_start_without(void)
{
	pthread_t t;
	pid_t pid;
	int st;

	CHECK(set_range(200, 264) == 0, "set: %s", strerror(errno));
	pthread_create(&t, NULL, thread_start_has_none, NULL);
	pthread_join(t, NULL);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		unsigned r[3];
		int want = lowest_free(), fd = eventfd(0, EFD_CLOEXEC);

		failures = 0;  /* the child's own verdict, not the parent's so far */

		get_range(r);
		CHECK(r[0] == 0 && r[1] == 0, "fork child inherited [%u,%u)", r[0], r[1]);
		CHECK(fd == want, "fork child: got %d, lowest free %d", fd, want);
		_exit(failures ? 1 : 0);
	}
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st), "fork child failed");
	pid = fork();
	if (pid == 0) {
		/* the exec'd image checks itself (main, "exec-child"); one
		 * close-on-exec fd for exec to close and uncount */
		set_range(200, 264);
		CHECK(eventfd(0, EFD_CLOEXEC) >= 0, "eventfd: %s", strerror(errno));
		execl(self_path, self_path, "exec-child", (char *)NULL);
		_exit(2);
	}
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st),
	      "exec'd program: status %d", st);
	/* A thread that leaves the shared table leaves its range behind. */
	for (long how = 0; how < 2; how++) {
		pthread_create(&t, NULL, thread_unshares, (void *)how);
		pthread_join(t, NULL);
	}
	set_range(0, 0);
}

/* Threads with ranges of their own, allocating and closing at once. */
#define NT 3
#define HELD 16
static long iters;
static atomic_int go;
static _Atomic unsigned char owner_of[4096];

static void *racer(void *arg)
{
	unsigned lo = 512 + 64 * (unsigned)(long)arg, hi = lo + 64;  /* below RLIMIT_NOFILE */
	int held[HELD];

	set_range(lo, hi);
	while (!atomic_load(&go))
		sched_yield();
	for (long i = 0; i < iters; i++) {
		for (int k = 0; k < HELD; k++) {
			held[k] = eventfd(0, EFD_CLOEXEC);
			CHECK(in(held[k], lo, hi), "thread %ld: fd %d outside [%u,%u)",
			      (long)arg, held[k], lo, hi);
			if (held[k] >= 0 && held[k] < 4096)
				CHECK(atomic_exchange(&owner_of[held[k]], 1) == 0,
				      "fd %d handed out twice", held[k]);
		}
		for (int k = 0; k < HELD; k++) {
			if (held[k] >= 0 && held[k] < 4096)
				atomic_store(&owner_of[held[k]], 0);
			close(held[k]);
		}
	}
	return NULL;
}

static void threads_race(void)
{
	pthread_t t[NT];
	int lowest = lowest_free(), after;

	for (long i = 0; i < NT; i++)
		pthread_create(&t[i], NULL, racer, (void *)i);
	atomic_store(&go, 1);
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	after = lowest_free();
	CHECK(after == lowest, "lowest free %d before the race, %d after", lowest, after);
	/* next_fd must still find the lowest free number */
	after = eventfd(0, EFD_CLOEXEC);
	CHECK(after == lowest, "after the race: got %d, lowest free %d", after, lowest);
	close(after);
}

/* ns per eventfd()+close() without a range: the check's cost, compared
 * between kernels by the caller. */
static void cost(long n)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		close(eventfd(0, 0));
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("fdalloc: cost %.0f ns per eventfd+close without a range (%ld)\n",
	       ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n, n);
}

int main(int argc, char **argv)
{
	unsigned r[3];

	self_path = argv[0];
	alarm(600);
	if (argc > 1 && !strcmp(argv[1], "exec-child")) {
		int want = lowest_free(), fd = eventfd(0, EFD_CLOEXEC);

		get_range(r);
		CHECK(r[0] == 0 && r[1] == 0, "exec'd program inherited [%u,%u)", r[0], r[1]);
		CHECK(fd == want, "exec'd program: got %d, lowest free %d", fd, want);
		COUNT_MATCHES("exec'd program, close-on-exec fds closed");
		return failures ? 1 : 0;
	}
	if (argc < 2 || (strcmp(argv[1], "on") && strcmp(argv[1], "off"))) {
		fprintf(stderr, "usage: fdalloc on|off [ITERS]\n");
		return 2;
	}
	iters = argc > 2 ? atol(argv[2]) : 1000;
	no_range_is_lowest_free();
	if (!strcmp(argv[1], "off")) {
		errno = 0;
		CHECK(set_range(100, 110) == -1 && errno == EINVAL, "PR_SET_FD_RANGE did not fail with EINVAL");
		errno = 0;
		CHECK(prctl(PR_GET_FD_RANGE, r, 0, 0, 0) == -1 && errno == EINVAL,
		      "PR_GET_FD_RANGE did not fail with EINVAL");
		no_range_is_lowest_free();
	} else {
		CHECK(set_range(100, 164) == 0, "PR_SET_FD_RANGE: %s", strerror(errno));
		get_range(r);
		CHECK(r[0] == 100 && r[1] == 164, "PR_GET_FD_RANGE gave [%u,%u)", r[0], r[1]);
		creation_paths(100, 164);
		CHECK(set_range(0, 0) == 0, "clearing: %s", strerror(errno));
		no_range_is_lowest_free();
		full_range_falls_back();
		floor_keeps_few_fds_low();
		min_open_leaves_holes();
		open_count_is_exact();
		bad_arguments();
		new_tasks_start_without();
		threads_race();
		resize_and_limit();
	}
	cost(iters * 20);
	printf("fdalloc: %s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
