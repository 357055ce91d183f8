/* SPDX-License-Identifier: MIT */
/*
 * Threads create and close fds as fast as they can for a few seconds
 * (STRESS_SECONDS, default 3; at most 200000 operations per thread).  Each
 * object carries a token only its creator knows; every fd is checked to
 * still reach its own object before it is closed, so an fd clobbered or
 * swapped by a move would be caught.  At the end no fd is left over.
 */
#include "common.h"

#include <time.h>

#define NTHREADS 4
#define HELD 48

enum kind { K_MEMFD, K_PIPE, K_EVENTFD, K_SOCKETPAIR, K_NKINDS };

struct obj {
	enum kind kind;
	int fd[2];
	unsigned long token;
};

struct worker {
	pthread_t tid;
	unsigned id;
	unsigned long ops;
	double seconds;
};

static unsigned long rnd(unsigned long *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void create(struct obj *o, unsigned long token, unsigned long r)
{
	o->kind = (enum kind)(r % K_NKINDS);
	o->token = token;
	o->fd[1] = -1;
	switch (o->kind) {
	case K_MEMFD:
		o->fd[0] = memfd_create("stress", r & 8 ? MFD_CLOEXEC : 0);
		CHECK(o->fd[0] >= 0, "memfd_create: %s", strerror(errno));
		CHECK(pwrite(o->fd[0], &token, sizeof(token), 0) == sizeof(token), "pwrite");
		break;
	case K_PIPE:
		CHECK(pipe2(o->fd, r & 8 ? O_CLOEXEC : 0) == 0, "pipe2: %s", strerror(errno));
		break;
	case K_EVENTFD:
		o->fd[0] = eventfd(0, EFD_NONBLOCK);
		CHECK(o->fd[0] >= 0, "eventfd: %s", strerror(errno));
		break;
	case K_SOCKETPAIR:
		CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, o->fd) == 0, "socketpair: %s", strerror(errno));
		break;
	default:
		break;
	}
}

/* The fd still reaches the object created with this token. */
static void verify(const struct obj *o)
{
	unsigned long got = 0, t = o->token;
	uint64_t ev;

	switch (o->kind) {
	case K_MEMFD:
		CHECK(pread(o->fd[0], &got, sizeof(got), 0) == sizeof(got) && got == t,
		      "memfd fd %d holds %lx, not its token %lx", o->fd[0], got, t);
		break;
	case K_PIPE:
	case K_SOCKETPAIR:
		CHECK(write(o->fd[1], &t, sizeof(t)) == sizeof(t), "write fd %d: %s", o->fd[1], strerror(errno));
		CHECK(read(o->fd[0], &got, sizeof(got)) == sizeof(got) && got == t,
		      "fd pair %d/%d carried %lx, not %lx", o->fd[0], o->fd[1], got, t);
		break;
	case K_EVENTFD:
		ev = t;
		CHECK(write(o->fd[0], &ev, sizeof(ev)) == sizeof(ev), "eventfd write");
		CHECK(read(o->fd[0], &ev, sizeof(ev)) == sizeof(ev) && ev == t,
		      "eventfd %d counted %lx, not %lx", o->fd[0], (unsigned long)ev, t);
		break;
	default:
		break;
	}
}

static void destroy(struct obj *o)
{
	verify(o);
	CHECK(close(o->fd[0]) == 0, "close %d: %s", o->fd[0], strerror(errno));
	if (o->fd[1] >= 0)
		CHECK(close(o->fd[1]) == 0, "close %d: %s", o->fd[1], strerror(errno));
	o->fd[0] = -1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *run(void *arg)
{
	struct worker *w = arg;
	struct obj held[HELD];
	unsigned long seed = 0x9e3779b97f4a7c15ul * (w->id + 1), serial = 0;
	double t0 = now(), limit = w->seconds;

	for (int i = 0; i < HELD; i++)
		held[i].fd[0] = -1;
	while (w->ops < 200000 && (w->ops & 255 || now() - t0 < limit)) {
		unsigned long r = rnd(&seed);
		struct obj *o = &held[r % HELD];

		if (o->fd[0] >= 0)
			destroy(o);
		else
			create(o, ((unsigned long)w->id << 48) | ++serial, r >> 8);
		w->ops++;
	}
	for (int i = 0; i < HELD; i++)
		if (held[i].fd[0] >= 0)
			destroy(&held[i]);
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker w[NTHREADS];
	unsigned long total = 0;
	int before;

	test_mode(argc, argv);
	before = count_fds();
	for (unsigned t = 0; t < NTHREADS; t++) {
		w[t] = (struct worker){ .id = t, .seconds = (double)env_num("STRESS_SECONDS", 3) };
		CHECK(pthread_create(&w[t].tid, NULL, run, &w[t]) == 0, "pthread_create");
	}
	for (unsigned t = 0; t < NTHREADS; t++) {
		pthread_join(w[t].tid, NULL);
		total += w[t].ops;
	}
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	printf("stress: %lu create/close operations in %d threads: ok (%s)\n", total, NTHREADS, argv[1]);
	return 0;
}
