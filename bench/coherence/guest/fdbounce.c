/* SPDX-License-Identifier: MIT */
/*
 * fdbounce MODE ITERS - the coherence counter's validation microbenchmark.
 *
 * A reader thread (pinned to vCPU 0) does write()+read() on its eventfd R;
 * a churner thread (pinned to vCPU 1) creates an eventfd, moves it to fd C
 * with F_DUPFD and closes both, in a loop. Both do the same syscalls in
 * both modes; only where C lies differs:
 *   inter  R = 64, C = 65: the churner's fd_install/close write the fd[]
 *          line the reader's lookups read (lowest-free numbering does this
 *          to real programs),
 *   sep    R = 64, C = 128: each thread's fd in its own 64-fd range.
 *   alias  R = 64, C = 576: separate ranges too, but 576 is 512 above 64:
 *          the first fdcache design had 8 invalidation counters per table,
 *          shared by ranges (fd >> 6) % 8, so both fds shared one and every
 *          close of C made the reader's cached entry stale. The counters
 *          are now one per 64-fd range, and alias should look like sep.
 *          Plain kernels see no difference from sep.
 * The table is grown to 1024 fds first, while single-threaded, so both fds
 * live in the separately allocated fd[] array and no table growth happens
 * inside the window.
 *
 * The window (plugin counts) covers the threads' loops. The label written
 * with it carries the overlap indicator: the share of churner iterations in
 * which the reader made progress since the churner's previous iteration.
 * Near 0 means the vCPUs took turns in long slices (coarse TCG scheduling),
 * so the count says nothing about fine-grained sharing.
 */
#define _GNU_SOURCE
#include "hypercall.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

static int R, C;
static long iters;
static volatile int go, stop;
static volatile unsigned long churn_progress, reader_progress;
static unsigned long reader_saw, churner_saw;

static void pin(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	if (sched_setaffinity(0, sizeof(s), &s)) {
		perror("fdbounce: sched_setaffinity");
		exit(1);
	}
}

static void *reader(void *arg)
{
	uint64_t v = 1;
	unsigned long last = 0;
	(void)arg;
	pin(0);
	while (!go)
		;
	for (long i = 0; i < iters; i++) {
		if (write(R, &v, 8) != 8 || read(R, &v, 8) != 8) {
			perror("fdbounce: reader");
			exit(1);
		}
		unsigned long p = churn_progress;
		reader_saw += p != last;
		last = p;
		reader_progress++;
	}
	stop = 1;
	return NULL;
}

static void *churner(void *arg)
{
	unsigned long last = 0;
	(void)arg;
	pin(1);
	while (!go)
		;
	while (!stop) {
		int fd = eventfd(0, 0);
		if (fd < 0) {
			perror("fdbounce: eventfd");
			exit(1);
		}
		int nfd = fcntl(fd, F_DUPFD, C);
		if (nfd != C) {
			fprintf(stderr, "fdbounce: F_DUPFD gave %d, wanted %d\n", nfd, C);
			exit(1);
		}
		close(fd);
		close(nfd);
		unsigned long p = reader_progress;
		churner_saw += p != last;
		last = p;
		churn_progress++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	char label[200];

	if (argc != 3 || (strcmp(argv[1], "inter") && strcmp(argv[1], "sep") && strcmp(argv[1], "alias"))) {
		fprintf(stderr, "usage: fdbounce inter|sep|alias ITERS\n");
		return 2;
	}
	iters = atol(argv[2]);
	R = 64;
	C = !strcmp(argv[1], "inter") ? 65 : !strcmp(argv[1], "sep") ? 128 : 576;

	/* The eventfd first, while the table is the one embedded in
	 * files_struct (so the plugin learns where that is); then grow the
	 * table to 1024 slots now, not inside the window. */
	int e = eventfd(0, 0);
	int g = fcntl(0, F_DUPFD, 1023);
	if (g != 1023) {
		fprintf(stderr, "fdbounce: cannot grow the fd table (%d)\n", g);
		return 1;
	}
	close(g);
	if (e < 0 || fcntl(e, F_DUPFD, R) != R) {
		fprintf(stderr, "fdbounce: cannot place the reader's fd at %d\n", R);
		return 1;
	}
	close(e);

	if (pthread_create(&a, NULL, reader, NULL) || pthread_create(&b, NULL, churner, NULL))
		return 1;
	usleep(100000); /* both threads pinned and spinning */
	coh_call(COH_OPEN, 0, 0, 0);
	go = 1;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	/* Overlap: the share of churner iterations during which the reader
	 * made progress (the reader's loop is the faster one, so with both
	 * vCPUs really running at once this is near 1), and the reader's
	 * view, normalised by the fewer of the two loops' iterations. */
	unsigned long fewer = churn_progress < (unsigned long)iters ? churn_progress : (unsigned long)iters;
	double ov = churn_progress ? (double)churner_saw / (double)churn_progress : 0;
	double ov2 = fewer ? (double)reader_saw / (double)fewer : 0;
	snprintf(label, sizeof(label), "micro mode=%s requests=%ld churns=%lu overlap=%.3f overlap_reader=%.3f",
		 argv[1], iters, churn_progress, ov, ov2);
	coh_call(COH_CLOSE, (unsigned long)label, 0, 0);
	printf("COH %s\n", label);
	return 0;
}
