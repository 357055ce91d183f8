/* SPDX-License-Identifier: MIT */
/*
 * Shared by the integration programs.  Each program runs twice under meson:
 * plain, and with libfdrange preloaded.  argv[1] says which ("plain" or
 * "placed"); the invariants every program checks (data intact, no leak,
 * close-on-exec as asked, right file behind each fd) must hold in both, and
 * the placement assertions only in "placed".
 */
#ifndef TEST_COMMON_H
#define TEST_COMMON_H

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../check.h"

int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

/*
 * The library is on its kernel-range path, on a kernel that allocates and
 * closes in ranges without the table's lock (patch 0007 booted with
 * fd_range_nolock=on: PR_GET_FD_RANGE's sixth value is 1): there a thread
 * that has a chunk no longer goes back to its 8-fd line (lib/lines.h).
 */
static inline bool kernel_groups(void)
{
	unsigned r[6] = { 0 };

	return kernel_range_allowed() && syscall(SYS_prctl, 0x46440002, r, 6, 0, 0) == 0 &&
	       r[5] == 1;
}

/* The lowest free fd right now (what the kernel would hand out next). */
static inline int lowest_free(void)
{
	int fd = fcntl(0, F_DUPFD, 0);

	CHECK(fd >= 0, "F_DUPFD: %s", strerror(errno));
	close(fd);
	return fd;
}

/* ---- one creator per wrapped call ---- */

struct maker_ctx {
	int listener;            /* a listening TCP socket on 127.0.0.1 */
	struct sockaddr_in addr;
	char dir[64];            /* a scratch directory */
	int dirfd;
	unsigned serial;
};

struct maker {
	const char *name;
	bool has_cloexec;        /* the call can ask for close-on-exec */
	/* Create fds into out[] (1 or 2, or 2 where a client socket is needed
	 * too); returns how many, or -1 with errno. */
	int (*make)(struct maker_ctx *c, bool cloexec, int out[2]);
};

static inline void maker_ctx_init(struct maker_ctx *c)
{
	socklen_t len = sizeof(c->addr);

	memset(c, 0, sizeof(*c));
	c->listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(c->listener >= 0, "socket: %s", strerror(errno));
	c->addr.sin_family = AF_INET;
	c->addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(bind(c->listener, (struct sockaddr *)&c->addr, sizeof(c->addr)) == 0,
	      "bind: %s", strerror(errno));
	CHECK(listen(c->listener, 128) == 0, "listen: %s", strerror(errno));
	CHECK(getsockname(c->listener, (struct sockaddr *)&c->addr, &len) == 0, "getsockname");
	snprintf(c->dir, sizeof(c->dir), "/tmp/fdrange-test.XXXXXX");
	CHECK(mkdtemp(c->dir), "mkdtemp: %s", strerror(errno));
	c->dirfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(c->dirfd >= 0, "open dir: %s", strerror(errno));
}

/* Without spawning rm: a child would print its own copy of any message. */
static inline void maker_ctx_fini(struct maker_ctx *c)
{
	DIR *d = fdopendir(dup(c->dirfd));
	struct dirent *e;

	CHECK(d, "fdopendir");
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			CHECK(unlinkat(c->dirfd, e->d_name, 0) == 0, "unlink %s", e->d_name);
	closedir(d);
	close(c->listener);
	close(c->dirfd);
	CHECK(rmdir(c->dir) == 0, "rmdir %s: %s", c->dir, strerror(errno));
}

static inline int connect_client(struct maker_ctx *c, int *client)
{
	*client = socket(AF_INET, SOCK_STREAM, 0);
	if (*client < 0)
		return -1;
	if (connect(*client, (struct sockaddr *)&c->addr, sizeof(c->addr)) < 0) {
		close(*client);
		return -1;
	}
	return 0;
}

static inline int mk_accept(struct maker_ctx *c, bool cloexec, int out[2])
{
	(void)cloexec;
	if (connect_client(c, &out[1]) < 0)
		return -1;
	out[0] = accept(c->listener, NULL, NULL);
	return out[0] < 0 ? -1 : 2;
}

static inline int mk_accept4(struct maker_ctx *c, bool cloexec, int out[2])
{
	if (connect_client(c, &out[1]) < 0)
		return -1;
	out[0] = accept4(c->listener, NULL, NULL, cloexec ? SOCK_CLOEXEC : 0);
	return out[0] < 0 ? -1 : 2;
}

#define MK1(fn, expr) \
static inline int mk_##fn(struct maker_ctx *c, bool cloexec, int out[2]) \
{ \
	(void)c; (void)cloexec; \
	out[0] = (expr); \
	return out[0] < 0 ? -1 : 1; \
}

#define PATHBUF(c) ({ static __thread char p_[96]; \
	snprintf(p_, sizeof(p_), "%s/f%u", (c)->dir, __atomic_fetch_add(&(c)->serial, 1, __ATOMIC_RELAXED)); p_; })
#define NAMEBUF(c) ({ static __thread char n_[32]; \
	snprintf(n_, sizeof(n_), "f%u", __atomic_fetch_add(&(c)->serial, 1, __ATOMIC_RELAXED)); n_; })
#define CX(flag) (cloexec ? (flag) : 0)

MK1(socket, socket(AF_INET, SOCK_STREAM | CX(SOCK_CLOEXEC), 0))
MK1(open, open(PATHBUF(c), O_RDWR | O_CREAT | CX(O_CLOEXEC), 0600))
MK1(open64, open64(PATHBUF(c), O_RDWR | O_CREAT | CX(O_CLOEXEC), 0600))
MK1(openat, openat(c->dirfd, NAMEBUF(c), O_RDWR | O_CREAT | CX(O_CLOEXEC), 0600))
MK1(openat64, openat64(c->dirfd, NAMEBUF(c), O_RDWR | O_CREAT | CX(O_CLOEXEC), 0600))
MK1(creat, creat(PATHBUF(c), 0600))
MK1(creat64, creat64(PATHBUF(c), 0600))
MK1(__open_2, __open_2("/dev/null", O_RDONLY | CX(O_CLOEXEC)))
MK1(__open64_2, __open64_2("/dev/null", O_RDONLY | CX(O_CLOEXEC)))
MK1(__openat_2, __openat_2(AT_FDCWD, "/dev/null", O_RDONLY | CX(O_CLOEXEC)))
MK1(__openat64_2, __openat64_2(AT_FDCWD, "/dev/null", O_RDONLY | CX(O_CLOEXEC)))
MK1(epoll_create, epoll_create(8))
MK1(epoll_create1, epoll_create1(CX(EPOLL_CLOEXEC)))
MK1(eventfd, eventfd(0, CX(EFD_CLOEXEC)))
MK1(timerfd_create, timerfd_create(CLOCK_MONOTONIC, CX(TFD_CLOEXEC)))
MK1(inotify_init, inotify_init())
MK1(inotify_init1, inotify_init1(CX(IN_CLOEXEC)))
MK1(memfd_create, memfd_create("fdrange-test", CX(MFD_CLOEXEC)))

static inline int mk_signalfd(struct maker_ctx *c, bool cloexec, int out[2])
{
	sigset_t set;

	(void)c;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	out[0] = signalfd(-1, &set, CX(SFD_CLOEXEC));
	return out[0] < 0 ? -1 : 1;
}

static inline int mk_socketpair(struct maker_ctx *c, bool cloexec, int out[2])
{
	(void)c;
	return socketpair(AF_UNIX, SOCK_STREAM | CX(SOCK_CLOEXEC), 0, out) < 0 ? -1 : 2;
}

static inline int mk_pipe(struct maker_ctx *c, bool cloexec, int out[2])
{
	(void)c; (void)cloexec;
	return pipe(out) < 0 ? -1 : 2;
}

static inline int mk_pipe2(struct maker_ctx *c, bool cloexec, int out[2])
{
	(void)c;
	return pipe2(out, CX(O_CLOEXEC)) < 0 ? -1 : 2;
}

/* Every wrapped fd-creating call.  The client side of the accept pairs is a
 * socket() fd, so it is checked like one. */
static const struct maker makers[] = {
	{ "accept", false, mk_accept }, { "accept4", true, mk_accept4 },
	{ "socket", true, mk_socket }, { "socketpair", true, mk_socketpair },
	{ "open", true, mk_open }, { "open64", true, mk_open64 },
	{ "openat", true, mk_openat }, { "openat64", true, mk_openat64 },
	{ "creat", false, mk_creat }, { "creat64", false, mk_creat64 },
	{ "__open_2", true, mk___open_2 }, { "__open64_2", true, mk___open64_2 },
	{ "__openat_2", true, mk___openat_2 }, { "__openat64_2", true, mk___openat64_2 },
	{ "pipe", false, mk_pipe }, { "pipe2", true, mk_pipe2 },
	{ "epoll_create", false, mk_epoll_create }, { "epoll_create1", true, mk_epoll_create1 },
	{ "eventfd", true, mk_eventfd }, { "timerfd_create", true, mk_timerfd_create },
	{ "signalfd", true, mk_signalfd }, { "inotify_init", false, mk_inotify_init },
	{ "inotify_init1", true, mk_inotify_init1 }, { "memfd_create", true, mk_memfd_create },
};
#define NMAKERS (sizeof(makers) / sizeof(makers[0]))

/* The range [lo, hi) an fd is expected in, from the test's FDRANGE_* env. */
struct geom {
	long base, width, slots;
};

static inline struct geom test_geom(void)
{
	struct geom g = { env_num("FDRANGE_BASE", 64), env_num("FDRANGE_WIDTH", 0),
			  env_num("FDRANGE_SLOTS", 0) };

	CHECK(g.width > 0 && g.slots > 0, "the test must set FDRANGE_WIDTH and FDRANGE_SLOTS");
	return g;
}

static inline long range_of(const struct geom *g, int fd)
{
	if (fd < g->base || fd >= g->base + g->width * g->slots)
		return -1;
	return (fd - g->base) / g->width;
}

/* A soft RLIMIT_NOFILE of at least @n, raised if need be; a hard limit below
 * it skips the test (exit 77, as meson counts a skip). */
static inline void need_nofile(rlim_t n)
{
	struct rlimit rl;

	CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0, "getrlimit");
	if (rl.rlim_cur >= n)
		return;
	if (rl.rlim_max < n) {
		printf("skipped: hard RLIMIT_NOFILE %lu, this test needs %lu\n",
		       (unsigned long)rl.rlim_max, (unsigned long)n);
		exit(77);
	}
	rl.rlim_cur = n;
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit: %s", strerror(errno));
}

/* The library's report (fdrange_report()) into @buf, NUL-terminated. */
static inline void read_report(char *buf, size_t size)
{
	int (*report)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "fdrange_report");
	int mfd = memfd_create("report", MFD_CLOEXEC);
	ssize_t n;

	CHECK(report && mfd >= 0 && report(mfd) == 0, "fdrange_report");
	n = pread(mfd, buf, size - 1, 0);
	close(mfd);
	CHECK(n > 0, "empty report");
	buf[n] = 0;
}

#endif
