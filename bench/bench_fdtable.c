/* SPDX-License-Identifier: MIT */
/*
 * The fd-table effect itself: T lookup threads each look up their own fds
 * (fcntl F_GETFL: fdget + the struct file, nothing else) while C churn
 * threads create and close fds as fast as they can.
 *
 * A, interleaved: no library; the kernel's lowest-free numbering puts the
 * churners' fds in the holes between the lookup threads' fds, so every
 * fd_install and close of a churner writes the fd-table cache lines
 * (fd[] pointers, 8 per line; open_fds bitmap) that the lookups read.
 * B, ranges: the library with one 512-fd range per thread, so lookups and
 * churn never touch the same line of the table.
 *
 * The effect needs the lookup and churn threads on different cores at the
 * same time, preferably different sockets or core complexes; on a machine
 * with few CPUs it cannot show, and the program says so.
 */
#include "ab.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#define MAX_FDS 64
#define WIDTH 512

static unsigned nlookups, nchurners, nfds = 8;

static struct {
	pthread_mutex_t turn;
	pthread_barrier_t start;
	volatile int stop;
} sync_;

struct thr {
	unsigned index;
	bool lookup;
	double seconds;
	int fds[MAX_FDS];
	unsigned long ops;
	uint64_t ns;
	int sample;
} __attribute__((aligned(128)));

static void *thread_fn(void *arg)
{
	struct thr *t = arg;
	int holes[MAX_FDS];
	uint64_t t0;

	/*
	 * Set up one thread at a time, lookup threads first, so the threads
	 * take the library's ranges in a known order and, without it, each
	 * lookup fd is followed by a hole that a churner's fd will fill.
	 */
	pthread_mutex_lock(&sync_.turn);
	if (t->lookup) {
		for (unsigned i = 0; i < nfds; i++) {
			t->fds[i] = eventfd(0, EFD_NONBLOCK);
			holes[i] = eventfd(0, 0);
			if (t->fds[i] < 0 || holes[i] < 0)
				ab_die("eventfd: %s", strerror(errno));
		}
		for (unsigned i = 0; i < nfds; i++)
			close(holes[i]);
	} else {
		/* Take the range now: a churner's first fd must not race the setup. */
		int fd = eventfd(0, 0);

		if (fd < 0)
			ab_die("eventfd: %s", strerror(errno));
		close(fd);
	}
	pthread_mutex_unlock(&sync_.turn);
	pthread_barrier_wait(&sync_.start);

	t0 = ab_now_ns();
	if (t->lookup) {
		while (!sync_.stop) {
			for (unsigned i = 0; i < nfds; i++)
				if (fcntl(t->fds[i], F_GETFL) < 0)
					ab_die("fcntl: %s", strerror(errno));
			t->ops += nfds;
		}
	} else {
		/*
		 * Keep a ring of open fds, replacing the oldest each time: the
		 * new fds wander over the holes between the lookup fds instead
		 * of reusing the lowest one only.
		 */
		unsigned ring = nfds * nlookups / nchurners, k = 0;
		int open_fds[MAX_FDS];

		ring = ring < 1 ? 1 : ring > MAX_FDS ? MAX_FDS : ring;
		for (unsigned i = 0; i < ring; i++)
			open_fds[i] = -1;
		while (!sync_.stop) {
			if (open_fds[k] >= 0)
				close(open_fds[k]);
			open_fds[k] = eventfd(0, 0);
			if (open_fds[k] < 0)
				ab_die("eventfd: %s", strerror(errno));
			t->sample = open_fds[k];
			k = (k + 1) % ring;
			t->ops++;
		}
		for (unsigned i = 0; i < ring; i++)
			if (open_fds[i] >= 0)
				close(open_fds[i]);
	}
	t->ns = ab_now_ns() - t0;
	return NULL;
}

static void *timer_fn(void *arg)
{
	const struct ab_ctx *ctx = arg;

	pthread_barrier_wait(&sync_.start);
	usleep((useconds_t)(ctx->seconds * 1e6));
	sync_.stop = 1;
	return NULL;
}

static int child(const struct ab_ctx *ctx)
{
	unsigned n = nlookups + nchurners;
	struct thr *t = aligned_alloc(128, n * sizeof(*t));
	pthread_t *tid = calloc(n + 1, sizeof(*tid));
	double lookups = 0, churn = 0;
	char buf[256];
	size_t len = 0;

	if (!t || !tid)
		ab_die("out of memory");
	memset(t, 0, n * sizeof(*t));
	pthread_mutex_init(&sync_.turn, NULL);
	pthread_barrier_init(&sync_.start, NULL, n + 1);
	for (unsigned i = 0; i < n; i++) {
		t[i].index = i;
		t[i].lookup = i < nlookups;
		t[i].seconds = ctx->seconds;
		if (pthread_create(&tid[i], NULL, thread_fn, &t[i]))
			ab_die("pthread_create failed");
	}
	if (pthread_create(&tid[n], NULL, timer_fn, (void *)ctx))
		ab_die("pthread_create failed");
	for (unsigned i = 0; i <= n; i++)
		pthread_join(tid[i], NULL);
	for (unsigned i = 0; i < n; i++) {
		double rate = (double)t[i].ops / ((double)t[i].ns / 1e9);

		if (t[i].lookup)
			lookups += rate / nlookups;
		else
			churn += rate / nchurners;
	}
	ab_emit("lookups-M/s-per-thread", lookups / 1e6);
	ab_emit("churn-k/s-per-thread", churn / 1e3);
	for (unsigned i = 0; i < nfds && len < sizeof(buf); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%d", i ? "," : "",
					t[0].fds[i]);
	ab_note("lookup thread 0 looks up fds %s; churner 0's last fd: %d", buf,
		t[nlookups].sample);
	for (unsigned i = 0; i < n; i++)
		for (unsigned k = 0; t[i].lookup && k < nfds; k++)
			close(t[i].fds[k]);
	free(t);
	free(tid);
	return 0;
}

static void summary(const struct ab_ctx *ctx)
{
	unsigned need = nlookups + nchurners;

	printf("lookups/s per lookup thread: B/A > 1 means per-thread ranges help.\n");
	printf("this machine: %ld online CPUs; the run uses %u lookup + %u churn threads.\n",
	       ctx->ncpus, nlookups, nchurners);
	if (ctx->ncpus < 4 || (long)need > ctx->ncpus)
		printf("TOO SMALL to show the effect: it needs the lookup and churn threads running "
		       "on separate cores at once (%u here, more is better: many cores, several "
		       "core complexes or sockets, where a cache-line transfer costs 100+ ns); "
		       "with %ld CPU(s) any difference is noise.\n", need, ctx->ncpus);
}

static int option(const char *name, const char *value)
{
	if (!strcmp(name, "lookups"))
		nlookups = (unsigned)ab_ulong(name, value, 1, 256);
	else if (!strcmp(name, "churners"))
		nchurners = (unsigned)ab_ulong(name, value, 1, 256);
	else if (!strcmp(name, "fds"))
		nfds = (unsigned)ab_ulong(name, value, 1, MAX_FDS);
	else
		return -1;
	return 0;
}

static char slots_env[40], width_env[40];
static struct ab_side sides[] = {
	{ "A", "interleaved: no library, lowest-free numbering", false, { NULL }, NULL },
	{ "B", "ranges: LD_PRELOAD=libfdrange.so,", true, { slots_env, width_env, "FDRANGE_THRESHOLD=0", NULL }, NULL },
};

int main(int argc, char **argv)
{
	static const struct ab_bench b = {
		.name = "bench_fdtable",
		.what = "fd lookups of T threads while C threads create and close fds",
		.unit = "millions of lookups/s per lookup thread; thousands of fds/s per churner",
		.sides = sides, .nsides = 2, .rounds = 7, .seconds = 0.3,
		.usage = "[--lookups=T] [--churners=C] [--fds=K per lookup thread]",
		.option = option, .child = child, .summary = summary,
	};
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct rlimit rl;

	/* The ranges need the same geometry in the driver and in every child. */
	for (int i = 1; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');

		if (eq && !strncmp(argv[i], "--", 2) && strncmp(argv[i], "--child", 7) &&
		    strncmp(argv[i], "--rounds", 8) && strncmp(argv[i], "--seconds", 9) &&
		    strncmp(argv[i], "--lib", 5) && strncmp(argv[i], "--tsv", 5)) {
			char name[32];

			snprintf(name, sizeof(name), "%.*s", (int)(eq - argv[i] - 2), argv[i] + 2);
			option(name, eq + 1);
		}
	}
	if (!nlookups)
		nlookups = ncpus > 1 ? (unsigned)ncpus / 2 : 1;
	if (!nchurners)
		nchurners = ncpus > (long)nlookups ? (unsigned)ncpus - nlookups : 1;
	snprintf(slots_env, sizeof(slots_env), "FDRANGE_SLOTS=%u", nlookups + nchurners);
	snprintf(width_env, sizeof(width_env), "FDRANGE_WIDTH=%u", WIDTH);
	/* One 512-fd range per thread must fit below the soft limit. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) &&
	    rl.rlim_cur < 64 + (rlim_t)(nlookups + nchurners + 1) * WIDTH) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) ||
		    rl.rlim_cur < 64 + (rlim_t)(nlookups + nchurners + 1) * WIDTH)
			ab_die("RLIMIT_NOFILE too low for %u ranges of %u fds",
			       nlookups + nchurners, WIDTH);
	}
	return ab_main(argc, argv, &b);
}
