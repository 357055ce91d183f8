/* SPDX-License-Identifier: MIT */
/*
 * Shared by the adversarial programs of test/hardening.  Like test/prog,
 * each program runs "plain" and "placed" (with libfdrange preloaded) and
 * checks the same invariants in both:
 *
 *   - no crash (the program runs to the end and exits 0);
 *   - no deadlock: a watchdog ends the process with exit 3 after
 *     HARD_DEADLINE seconds (default 60), before meson's own timeout;
 *   - no leak: /proc/self/fd has as many entries at the end as at the start;
 *   - no fd pointing at the wrong file: every object carries a token that
 *     only its creator knows and is checked through its fd before close.
 */
#ifndef HARD_H
#define HARD_H

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"

/* For children of fork() in a threaded process: no stdio, no malloc. */
#define CHECK_RAW(cond, msg) do { \
	if (!(cond)) { \
		static const char m_[] = __FILE__ ": child check failed: " msg "\n"; \
		(void)!write(2, m_, sizeof(m_) - 1); \
		_exit(1); \
	} } while (0)

static int (*api_range)(int *lo, int *hi);
static int (*api_range_of)(int fd);

static void *watchdog(void *arg)
{
	struct timespec ts = { (time_t)(intptr_t)arg, 0 };
	static const char msg[] = "watchdog: deadline passed, assuming a deadlock\n";

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(3);
	return NULL;
}

/* Mode check as in test/prog, the watchdog, and the API if preloaded. */
static inline void hard_init(int argc, char **argv)
{
	pthread_t t;
	sigset_t all, old;

	test_mode(argc, argv);
	api_range = (int (*)(int *, int *))dlsym(RTLD_DEFAULT, "fdrange_thread_range");
	api_range_of = (int (*)(int))dlsym(RTLD_DEFAULT, "fdrange_range_of_fd");
	CHECK(placed_mode == (api_range != NULL), "fdrange_thread_range %s exported",
	      placed_mode ? "is not" : "is");
	/* The watchdog must not take the test's signals. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	/* HARD_DEADLINE_SCALE: tools/ci/tsan.sh and valgrind.sh stretch
	 * meson's timeouts, and must stretch this one with them. */
	CHECK(test_thread_start(&t, watchdog,
				(void *)(intptr_t)(env_num("HARD_DEADLINE", 60) *
						   env_num("HARD_DEADLINE_SCALE", 1))) == 0,
	      "watchdog");
	pthread_detach(t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Async-signal-safe count, for children of fork(): getdents64 directly. */
static inline int count_fds_raw(void)
{
	char buf[4096];
	long fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int n = 0;
	long got;

	if (fd < 0)
		return -1;
	while ((got = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < got;) {
			unsigned short reclen;
			const char *name = buf + off + 19;

			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			if (name[0] != '.')
				n++;
			off += reclen;
		}
	}
	syscall(SYS_close, fd);
	return n - 1;
}

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline unsigned long xorshift(unsigned long *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* In placed mode: @fd lies in the calling thread's range (or below BASE
 * when the library had to fall back, which the caller may allow). */
static inline bool in_my_range(int fd)
{
	int lo, hi;

	if (!api_range || api_range(&lo, &hi) != 0)
		return false;
	return fd >= lo && fd < hi;
}

/* This thread's kernel fd range {lo, hi, floor, min_open, open}
 * (PR_GET_FD_RANGE, kernel/ patch 0002): false where the kernel has none.
 * Five values, as the library's own probe asks: a kernel of the series'
 * first version (no min_open) has none for the library either. */
static inline bool kernel_fd_range(unsigned kr[5])
{
	return syscall(SYS_prctl, 0x46440002, kr, 5, 0, 0) == 0;
}

/* The library is on its kernel-range path: preloaded, on a kernel with the
 * fd range, and not told to keep off it (FDRANGE_KERNEL=off, or a policy
 * that leaves fds where the kernel numbers them: lib/krange.c). */
static inline bool kernel_range_path(void)
{
	unsigned kr[5];

	return placed_mode && kernel_fd_range(kr) && kernel_range_allowed();
}

/* The last line of a test that counts fds born in the kernel range. */
static inline void report_born(const char *what, bool kernel, int born, int of,
			       const char *mode)
{
	if (kernel)
		printf("%s: %d of %d born in the kernel range: ok (%s)\n", what, born, of, mode);
	else
		printf("%s: ok (%s; kernel range not checked: no PR_SET_FD_RANGE path here)\n",
		       what, mode);
}

/* ---- token objects: an fd (pair) that proves which object it reaches ---- */

enum tok_kind { TK_MEMFD, TK_PIPE, TK_EVENTFD, TK_SOCKETPAIR, TK_NKINDS };

struct tok {
	enum tok_kind kind;
	int fd[2];
	uint64_t token;
};

/* Returns 0, or -1 with errno (EMFILE and friends) and nothing open. */
static inline int tok_create(struct tok *o, uint64_t token, unsigned long r)
{
	o->kind = (enum tok_kind)(r % TK_NKINDS);
	o->token = token;
	o->fd[0] = o->fd[1] = -1;
	switch (o->kind) {
	case TK_MEMFD:
		o->fd[0] = memfd_create("hard", r & 8 ? MFD_CLOEXEC : 0);
		if (o->fd[0] < 0)
			return -1;
		if (pwrite(o->fd[0], &token, sizeof(token), 0) != sizeof(token)) {
			close(o->fd[0]);
			o->fd[0] = -1;
			errno = EIO;
			return -1;
		}
		return 0;
	case TK_PIPE:
		return pipe2(o->fd, r & 8 ? O_CLOEXEC : 0);
	case TK_EVENTFD:
		o->fd[0] = eventfd(0, EFD_NONBLOCK | (r & 8 ? EFD_CLOEXEC : 0));
		return o->fd[0] < 0 ? -1 : 0;
	case TK_SOCKETPAIR:
		return socketpair(AF_UNIX, SOCK_STREAM | (r & 8 ? SOCK_CLOEXEC : 0), 0, o->fd);
	default:
		return -1;
	}
}

/* True when the fd(s) still reach the object created with the token. */
static inline bool tok_ok(const struct tok *o)
{
	uint64_t got = 0, t = o->token;

	switch (o->kind) {
	case TK_MEMFD:
		return pread(o->fd[0], &got, sizeof(got), 0) == sizeof(got) && got == t;
	case TK_PIPE:
	case TK_SOCKETPAIR:
		return write(o->fd[1], &t, sizeof(t)) == sizeof(t) &&
		       read(o->fd[0], &got, sizeof(got)) == sizeof(got) && got == t;
	case TK_EVENTFD:
		/* eventfd adds: 0 would read back as EAGAIN. */
		t |= 1;
		return write(o->fd[0], &t, sizeof(t)) == sizeof(t) &&
		       read(o->fd[0], &got, sizeof(got)) == sizeof(got) && got == t;
	default:
		return false;
	}
}

static inline void tok_close(struct tok *o)
{
	for (int i = 0; i < 2; i++)
		if (o->fd[i] >= 0)
			CHECK(close(o->fd[i]) == 0, "close %d: %s", o->fd[i], strerror(errno));
	o->fd[0] = o->fd[1] = -1;
}

static inline void tok_check_close(struct tok *o)
{
	CHECK(tok_ok(o), "fd %d/%d (kind %d) does not reach its object %llx", o->fd[0],
	      o->fd[1], (int)o->kind, (unsigned long long)o->token);
	tok_close(o);
}

/* ---- churn: threads creating, checking and closing fds until told ---- */

#define CHURN_HELD 24

struct churn {
	pthread_t tid;
	unsigned id;
	volatile int *stop;
	bool allow_emfile;      /* limit games: EMFILE/ENFILE are fine */
	bool check_range;       /* new fds in the own range (placed, no limit games) */
	unsigned long ops, emfile;
};

static void *churn_run(void *arg)
{
	struct churn *c = arg;
	struct tok held[CHURN_HELD];
	unsigned long seed = 0x9e3779b97f4a7c15ul * (c->id + 1), serial = 0;

	for (int i = 0; i < CHURN_HELD; i++)
		held[i].fd[0] = held[i].fd[1] = -1;
	while (!__atomic_load_n(c->stop, __ATOMIC_RELAXED)) {
		unsigned long r = xorshift(&seed);
		struct tok *o = &held[r % CHURN_HELD];

		if (o->fd[0] >= 0) {
			tok_check_close(o);
		} else if (tok_create(o, ((uint64_t)c->id << 48) | ++serial, r >> 8) < 0) {
			CHECK(c->allow_emfile && (errno == EMFILE || errno == ENFILE),
			      "create: %s", strerror(errno));
			o->fd[0] = o->fd[1] = -1;
			c->emfile++;
		} else if (c->check_range) {
			for (int k = 0; k < 2; k++)
				CHECK(o->fd[k] < 0 || in_my_range(o->fd[k]),
				      "thread %u: fd %d outside its range", c->id, o->fd[k]);
		}
		c->ops++;
	}
	for (int i = 0; i < CHURN_HELD; i++)
		if (held[i].fd[0] >= 0)
			tok_check_close(&held[i]);
	return NULL;
}

/*
 * @limit_games: the program changes its own RLIMIT_NOFILE meanwhile, so
 * creations may fail with EMFILE and the ranges move under the threads:
 * only without it is every new fd checked against the thread's range
 * (placed mode).
 */
static inline void churn_start(struct churn *c, unsigned n, volatile int *stop, bool limit_games)
{
	for (unsigned i = 0; i < n; i++) {
		c[i].id = i;
		c[i].stop = stop;
		c[i].allow_emfile = limit_games;
		c[i].check_range = placed_mode && !limit_games;
		CHECK(pthread_create(&c[i].tid, NULL, churn_run, &c[i]) == 0, "pthread_create");
	}
}

static inline unsigned long churn_join(struct churn *c, unsigned n)
{
	unsigned long ops = 0;

	for (unsigned i = 0; i < n; i++) {
		pthread_join(c[i].tid, NULL);
		ops += c[i].ops;
	}
	return ops;
}

#endif
