/* SPDX-License-Identifier: MIT */
/*
 * What every test program checks with, whatever its suite: the CHECK macro,
 * the plain/placed mode (a program runs once without and once with
 * libfdrange preloaded), and the fd counting the no-leak checks use.
 * test/prog/common.h and test/hardening/hard.h build on it.
 */
#ifndef TEST_CHECK_H
#define TEST_CHECK_H

#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		exit(1); \
	} } while (0)

static bool placed_mode;

/* A numeric test parameter from the environment; unset or empty: @def. */
static inline long env_num(const char *name, long def)
{
	const char *v = getenv(name);

	return v && *v ? strtol(v, NULL, 10) : def;
}

static inline bool env_is(const char *name, const char *value)
{
	const char *v = getenv(name);

	return v && !strcmp(v, value);
}

/* The settings let the library take its kernel-range path where the kernel
 * has one (lib/krange.c): not FDRANGE_KERNEL=off, and no policy that leaves
 * fds where the kernel numbers them. */
static inline bool kernel_range_allowed(void)
{
	return !env_is("FDRANGE_KERNEL", "off") && !env_is("FDRANGE_ACCEPT", "roundrobin") &&
	       !env_is("FDRANGE_OPEN", "keep");
}

/*
 * pthread_create(), returning only once the thread runs its own code.
 * Until then the sanitizers' thread start may hold their allocator's lock,
 * and a test that forks at once gave a child whose first malloc waited for
 * that lock forever (ASan build, CI).  0 or the pthread_create error.
 */
struct test_thread_start {
	void *(*fn)(void *);
	void *arg;
	int started;
};

static void *test_thread_trampoline(void *p)
{
	struct test_thread_start *s = p;
	void *(*fn)(void *) = s->fn;
	void *arg = s->arg;

	/* s lives on the creator's stack: not touched after this store. */
	__atomic_store_n(&s->started, 1, __ATOMIC_RELEASE);
	return fn(arg);
}

static inline int test_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	struct test_thread_start s = { fn, arg, 0 };
	struct timespec now, end;
	int r = pthread_create(t, NULL, test_thread_trampoline, &s);

	if (r)
		return r;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += 10;
	while (!__atomic_load_n(&s.started, __ATOMIC_ACQUIRE)) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		CHECK(now.tv_sec < end.tv_sec ||
		      (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec),
		      "a new thread did not start in 10 s");
		usleep(100);
	}
	return 0;
}

static void *test_idle_thread(void *arg)
{
	for (;;)
		pause();
	return arg;
}

/*
 * argv[1] is "plain" or "placed", and must match whether the library is
 * loaded: a preload that silently failed would otherwise turn every
 * placement assertion into a no-op.
 *
 * The library leaves a single-threaded process alone (nothing to
 * separate); the test programs check placement, so like the servers they
 * stand for they are multi-threaded from the start: an idle thread.
 */
static inline void test_mode(int argc, char **argv)
{
	pthread_t idle;

	CHECK(argc >= 2 && (!strcmp(argv[1], "plain") || !strcmp(argv[1], "placed")),
	      "usage: %s plain|placed [ARGS]", argv[0]);
	placed_mode = !strcmp(argv[1], "placed");
	CHECK(placed_mode == (dlsym(RTLD_DEFAULT, "fdrange_version") != NULL),
	      "mode %s but libfdrange %s loaded", argv[1], placed_mode ? "is not" : "is");
	/* TEST_HOLD=N: N fds held open from here on, made while the process
	 * is still single-threaded (so the kernel's numbers), to run a test
	 * past the default FDRANGE_THRESHOLD (64) rather than with it off. */
	for (long i = env_num("TEST_HOLD", 0); i > 0; i--)
		CHECK(open("/dev/null", O_RDONLY | O_CLOEXEC) >= 0, "TEST_HOLD: open: %s",
		      strerror(errno));
	CHECK(test_thread_start(&idle, test_idle_thread, NULL) == 0, "pthread_create");
	pthread_detach(idle);
}


/* Open fds of this process, not counting the directory stream's own. */
static inline int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	CHECK(d, "opendir: %s", strerror(errno));
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;
}

static inline bool fd_valid(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

#endif
