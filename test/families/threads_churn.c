/* SPDX-License-Identifier: MIT */
/*
 * Short-lived threads: THREADS detached threads, at most ALIVE at once (a
 * semaphore), each creating one fd (in turn a TCP socket, /dev/null, an
 * eventfd, a UDP socket), holding it HOLD_MS, closing it and exiting.
 *
 *   threads_churn DIR [THREADS ALIVE HOLD_MS]     (default 1000 50 40)
 *
 * Waits (at most 10 s) for DIR/start (the test's sampler is running then),
 * counts its open fds (/proc/self/fd) before the first thread and after
 * the last has finished, writes DIR/done and waits (at most 10 s) for
 * DIR/go (the test samples it then), and prints
 *   threads_churn: threads=N created=N maxfd=N baseline=N after=N
 * Exit status 0 only if every thread created and closed its fd and the
 * count after is the baseline (no fd leaked).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static sem_t slots;
static atomic_int created, finished, failed, maxfd;
static int hold_ms;

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own fd */
}

static void *one(void *arg)
{
	long k = (long)arg;
	int fd;

	switch (k % 4) {
	case 0: fd = socket(AF_INET, SOCK_STREAM, 0); break;
	case 1: fd = open("/dev/null", O_RDONLY); break;
	case 2: fd = eventfd(0, 0); break;
	default: fd = socket(AF_INET, SOCK_DGRAM, 0); break;
	}
	if (fd < 0) {
		atomic_fetch_add(&failed, 1);
	} else {
		int m = atomic_load(&maxfd);

		while (fd > m && !atomic_compare_exchange_weak(&maxfd, &m, fd))
			;
		atomic_fetch_add(&created, 1);
		usleep((useconds_t)hold_ms * 1000);
		if (close(fd))
			atomic_fetch_add(&failed, 1);
	}
	atomic_fetch_add(&finished, 1);
	sem_post(&slots);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 1000, alive = 50, baseline, after;
	pthread_attr_t attr;
	char path[4200];
	struct stat st;

	if (argc != 2 && argc != 5) {
		fprintf(stderr, "usage: threads_churn DIR [THREADS ALIVE HOLD_MS]\n");
		return 2;
	}
	hold_ms = 40;
	if (argc == 5) {
		threads = atoi(argv[2]);
		alive = atoi(argv[3]);
		hold_ms = atoi(argv[4]);
	}
	if (threads < 1 || alive < 1 || hold_ms < 0)
		return 2;
	snprintf(path, sizeof(path), "%s/start", argv[1]);
	for (int i = 0; i < 200 && stat(path, &st); i++)
		usleep(50000);
	baseline = count_fds();
	sem_init(&slots, 0, (unsigned)alive);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (long k = 0; k < threads; k++) {
		pthread_t t;

		sem_wait(&slots);
		if (pthread_create(&t, &attr, one, (void *)k)) {
			atomic_fetch_add(&failed, 1);
			atomic_fetch_add(&finished, 1);
			sem_post(&slots);
		}
	}
	/* Every thread has posted once it is done with its fd. */
	for (int i = 0; i < alive; i++)
		sem_wait(&slots);
	usleep(50000); /* the last threads' exits (key destructors) */
	after = count_fds();
	snprintf(path, sizeof(path), "%s/done", argv[1]);
	FILE *f = fopen(path, "w");

	if (!f || fclose(f))
		return 1;
	snprintf(path, sizeof(path), "%s/go", argv[1]);
	for (int i = 0; i < 200 && stat(path, &st); i++)
		usleep(50000);
	printf("threads_churn: threads=%d created=%d maxfd=%d baseline=%d after=%d failed=%d\n",
	       threads, atomic_load(&created), atomic_load(&maxfd), baseline, after,
	       atomic_load(&failed));
	return atomic_load(&created) == threads && !atomic_load(&failed) && after == baseline &&
			       atomic_load(&finished) == threads
		       ? 0
		       : 1;
}
