/* SPDX-License-Identifier: MIT */
/*
 * Scale: the cost of a created-and-closed fd as the number of threads grows
 * (1, 2, 4, 16, 64) and as the creating thread's range fills (0, 10, 50,
 * 90% of it held open), with the memory it takes: the kernel's fd table
 * size (FDSize in /proc/self/status; about 8.25 bytes per entry) and the
 * process RSS.
 *
 * threads-T: T threads create and close eventfds at once; the figure is
 * wall time over all fds created (the inverse of throughput: on a machine
 * with fewer CPUs than threads, per-thread latency only measures the
 * scheduler).  fill-X%: one thread holds X% of 4096 fds open (in its own
 * range on side B, at the lowest numbers on side A) and measures (median
 * over chunks of 64 fds); both
 * sides pay the kernel's search past the held fds once per fd, so B-A
 * should stay the same at every fill.
 */
#include "ab.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FILL_BASE 4096

static const unsigned thread_counts[] = { 1, 2, 4, 16, 64 };
static const unsigned fills[] = { 0, 10, 50, 90 };

#define MAX_CHUNKS 2048

struct job {
	double seconds;
	unsigned fill;          /* fds to hold open while measuring */
	unsigned long fds;
	uint64_t ns;
	int lo, hi, sample;
	/* fill runs: ns per fd of each chunk of 64, through libc [0] and made
	 * raw and moved by hand with F_DUPFD + close [1], taking turns */
	unsigned nchunks[2];
	double *chunk[2];
} __attribute__((aligned(128)));

/* libc's eventfd, behind the library's back (the by-hand variant). */
static int (*libc_eventfd)(unsigned, int);

/* By hand: libc's eventfd, then the library's two raw syscalls. */
static int create_close(const struct job *j, bool by_hand)
{
	int fd = by_hand ? libc_eventfd(0, 0) : eventfd(0, 0);

	if (fd < 0)
		ab_die("eventfd: %s", strerror(errno));
	if (by_hand) {
		int nfd = (int)syscall(SYS_fcntl, fd, F_DUPFD, j->lo >= 0 ? j->lo : 64);

		if (nfd < 0 || syscall(SYS_close, fd))
			ab_die("F_DUPFD: %s", strerror(errno));
		fd = nfd;
	}
	close(fd);
	return fd;
}

static void *churn(void *arg)
{
	struct job *j = arg;
	int *held = NULL;
	uint64_t t0, end;

	if (j->fill) {
		held = malloc(j->fill * sizeof(*held));
		if (!held)
			ab_die("out of memory");
		for (unsigned i = 0; i < j->fill; i++)
			if ((held[i] = eventfd(0, 0)) < 0)
				ab_die("eventfd (holding %u): %s", i, strerror(errno));
	}
	if (ab_lib_range(&j->lo, &j->hi))
		j->lo = j->hi = -1;
	for (int i = 0; i < 100; i++)
		create_close(j, false);
	end = ab_now_ns() + (uint64_t)(j->seconds * 1e9 * (j->chunk[0] ? 2 : 1));
	t0 = ab_now_ns();
	/* The two variants swap places every round: the second runs warm. */
	for (unsigned round = 0; round == 0 || ab_now_ns() < end; round++) {
		for (int i = 0; i < (j->chunk[0] ? 2 : 1); i++) {
			int hand = i ^ (int)(round & 1 && j->chunk[0]);
			uint64_t c0 = ab_now_ns();

			for (int i = 0; i < 64; i++) {
				int fd = create_close(j, hand);

				if (!hand)
					j->sample = fd;
			}
			if (!hand)
				j->fds += 64;
			if (j->chunk[hand] && j->nchunks[hand] < MAX_CHUNKS)
				j->chunk[hand][j->nchunks[hand]++] = (double)(ab_now_ns() - c0) / 64;
		}
	}
	j->ns = ab_now_ns() - t0;
	for (unsigned i = 0; i < j->fill; i++)
		close(held[i]);
	free(held);
	return NULL;
}

static int child(const struct ab_ctx *ctx)
{
	struct job *j = aligned_alloc(128, 64 * sizeof(*j));
	char key[48];

	void *h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);

	if (!j)
		ab_die("out of memory");
	libc_eventfd = h ? (int (*)(unsigned, int))dlsym(h, "eventfd") : NULL;
	if (!libc_eventfd)
		ab_die("libc.so.6 eventfd not found");
	for (unsigned k = 0; k < sizeof(thread_counts) / sizeof(thread_counts[0]); k++) {
		unsigned t = thread_counts[k];
		unsigned long fds = 0;
		uint64_t t0 = ab_now_ns();

		memset(j, 0, 64 * sizeof(*j));
		for (unsigned i = 0; i < t; i++)
			j[i].seconds = ctx->seconds;
		ab_threads(t, churn, j, sizeof(*j));
		for (unsigned i = 0; i < t; i++)
			fds += j[i].fds;
		snprintf(key, sizeof(key), "threads-%u-ns", t);
		ab_emit(key, (double)(ab_now_ns() - t0) / (double)fds);
		snprintf(key, sizeof(key), "threads-%u-fdsize", t);
		ab_emit(key, (double)ab_fdsize());
		snprintf(key, sizeof(key), "threads-%u-rss-KiB", t);
		ab_emit(key, (double)ab_rss_kib());
	}
	if (!strcmp(ctx->mode, "threads"))
		goto out;
	for (unsigned k = 0; k < sizeof(fills) / sizeof(fills[0]); k++) {
		static double chunks[2][MAX_CHUNKS];

		memset(j, 0, sizeof(*j));
		j->seconds = ctx->seconds;
		/* smoke: a check that it runs, so fewer fds to hold */
		j->fill = (ctx->smoke ? FILL_BASE / 8 : FILL_BASE) * fills[k] / 100;
		j->chunk[0] = chunks[0];
		j->chunk[1] = chunks[1];
		ab_threads(1, churn, j, sizeof(*j));
		/* the median chunk: robust to bursts of interference */
		snprintf(key, sizeof(key), "fill-%u%%-ns", fills[k]);
		ab_emit(key, ab_stats_of(chunks[0], j->nchunks[0]).median);
		snprintf(key, sizeof(key), "fill-%u%%+move-ns", fills[k]);
		ab_emit(key, ab_stats_of(chunks[1], j->nchunks[1]).median);
		if (k == 3 && j->lo >= 0)
			ab_note("fill %u%%: %u fds held in range [%d, %d), new fds at %d", fills[k],
				j->fill, j->lo, j->hi, j->sample);
		else if (k == 3)
			ab_note("fill %u%%: %u fds held, new fds at %d", fills[k], j->fill, j->sample);
	}
out:
	ab_note("FDSize at the end %ld (table of about %ld KiB), RLIMIT_NOFILE %lu",
		ab_fdsize(), (ab_fdsize() * 33 / 4 + 1023) / 1024, ab_nofile());
	free(j);
	return 0;
}

static void summary(const struct ab_ctx *ctx)
{
	printf("added cost per fd as the range fills (ns; medians of per-round differences):\n"
	       "  B-A: whole (two processes); kernel: the move by hand, X+move - X on side A\n"
	       "  (includes the F_DUPFD search past the held fds); library: its own code,\n"
	       "  X - X+move on side B\n");
	printf("  %-12s %22s %8s %8s\n", "", "B-A [min .. max]", "kernel", "library");
	for (unsigned k = 0; k < sizeof(fills) / sizeof(fills[0]); k++) {
		char key[48], mk[48], cell[64];
		struct ab_cost cost;

		snprintf(key, sizeof(key), "fill-%u%%-ns", fills[k]);
		snprintf(mk, sizeof(mk), "fill-%u%%+move-ns", fills[k]);
		cost = ab_cost_split(key, mk);
		if (!cost.whole.present)
			continue;
		snprintf(cell, sizeof(cell), "%.0f [%.0f .. %.0f]", cost.whole.median,
			 cost.whole.min, cost.whole.max);
		printf("  %-12s %22s %8.0f %8.0f\n", key, cell, cost.kernel.median,
		       cost.library.median);
	}
	if (ctx->ncpus < 4)
		printf("with %ld CPUs, threads beyond %ld only take turns: the threads-T rows show "
		       "that the cost per fd does not grow with threads, not how it scales.\n",
		       ctx->ncpus, ctx->ncpus);
}

static const struct ab_side sides[] = {
	{ "A", "no library", false, { NULL }, NULL },
	{ "B", "LD_PRELOAD=libfdrange.so, two 4096-fd ranges shared by the threads:", true,
	  { "FDRANGE_SLOTS=2", "FDRANGE_WIDTH=4096", "FDRANGE_THRESHOLD=0", NULL }, NULL },
	{ "B64", "LD_PRELOAD=libfdrange.so, a range per thread even at 64 threads:", true,
	  { "FDRANGE_SLOTS=64", "FDRANGE_THRESHOLD=0", NULL }, "threads" },
};

int main(int argc, char **argv)
{
	static const struct ab_bench b = {
		.name = "bench_scale",
		.what = "fd creation cost and fd table size against threads and range fill",
		.unit = "ns per created-and-closed eventfd; FDSize in table entries; RSS in KiB",
		.sides = sides, .nsides = 3, .rounds = 5, .seconds = 0.1,
		.child = child, .summary = summary,
	};
	struct rlimit rl;

	/* Side B's two 4096-fd ranges must fit below the soft limit. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < 64 + 3 * FILL_BASE) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur < 64 + 3 * FILL_BASE)
			ab_die("RLIMIT_NOFILE (hard) below %d", 64 + 3 * FILL_BASE);
	}
	return ab_main(argc, argv, &b);
}
