/* SPDX-License-Identifier: MIT */
/*
 * fd_churn THREADS SECONDS: threads that create and close fds on the one
 * fd table as fast as they can, for fdrange profile's lock-wait test.
 * dup + close takes the table's lock twice with little else around it, the
 * worst case of an accept loop with short connections.  Prints "ready" once
 * the threads run, and the number of fds made at the end.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop;
static atomic_ulong made;

static void *churn(void *arg)
{
	unsigned long n = 0;

	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		int fd = dup(0);

		if (fd >= 0) {
			close(fd);
			n++;
		}
	}
	atomic_fetch_add(&made, n);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[64];
	int n, secs;

	if (argc != 3 || (n = atoi(argv[1])) < 1 || n > 64 || (secs = atoi(argv[2])) < 1) {
		fprintf(stderr, "usage: fd_churn THREADS(1-64) SECONDS\n");
		return 2;
	}
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, churn, NULL)) {
			fprintf(stderr, "fd_churn: pthread_create failed\n");
			return 1;
		}
	printf("ready\n");
	fflush(stdout);
	sleep((unsigned)secs);
	atomic_store(&stop, 1);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("made %lu\n", atomic_load(&made));
	return 0;
}
