/* SPDX-License-Identifier: MIT */
/*
 * With the default FDRANGE_THRESHOLD (64), a threaded process that holds
 * fewer fds than that gets exactly the kernel's numbers: 4 threads take
 * turns creating fds through the wrapped calls (socket, eventfd, pipe2,
 * open, accept4) and every one is the lowest free fd, as without the
 * library.  Moving them would cost 2 syscalls and 2 more fd-table writes
 * each, for lines that few fds cannot keep apart anyway
 * (docs/design.md, "Which fds are moved").  Once the process holds every
 * fd below 64, the fds the threads create next are numbered past it and
 * placed: under the library no 8-fd line at or above 64 holds fds of two
 * threads (plain numbering interleaves them there).  Then the fds below 64
 * are closed: new fds fill them again, unmoved.
 */
#include "common.h"

#include <sched.h>
#include <sys/syscall.h>

#define NT 4
#define PER_THREAD 6   /* past the threshold */

static pthread_mutex_t turn = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t phase;
static int lsn;
static struct sockaddr_in lsn_addr;
static int after[NT][PER_THREAD];
static int accept_want;  /* the lowest free fd once accept's client socket exists */

static int free_below(int n)
{
	int k = 0;

	for (int fd = 0; fd < n; fd++)
		k += !fd_valid(fd);
	return k;
}

/* One new fd through the k-th kind of wrapped call (a pipe's write end
 * is closed: one fd each, the read end checked). */
static int make(unsigned k)
{
	int fd = -1, p[2];

	switch (k % 5) {
	case 0:
		fd = socket(AF_INET, SOCK_DGRAM, 0);
		break;
	case 1:
		fd = eventfd(0, EFD_CLOEXEC);
		break;
	case 2:
		CHECK(pipe2(p, O_CLOEXEC) == 0, "pipe2: %s", strerror(errno));
		close(p[1]);
		fd = p[0];
		break;
	case 3:
		fd = open("/dev/null", O_RDONLY);
		break;
	case 4: {
		int c = (int)syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);

		CHECK(c >= 0, "socket: %s", strerror(errno));
		CHECK(connect(c, (struct sockaddr *)&lsn_addr, sizeof(lsn_addr)) == 0,
		      "connect: %s", strerror(errno));
		accept_want = lowest_free();
		fd = accept4(lsn, NULL, NULL, SOCK_CLOEXEC);
		syscall(SYS_close, c);
		break;
	}
	}
	CHECK(fd >= 0, "call %u: %s", k % 5, strerror(errno));
	return fd;
}

/* Below the threshold: one fd at a time across the threads, each the
 * lowest free.  Returns how many were made (0 once fds 0-63 are all open). */
static int fill_below(long id)
{
	int made = 0;

	for (unsigned k = (unsigned)id;; k++) {
		int want, fd;

		pthread_mutex_lock(&turn);
		want = lowest_free();
		if (want >= 64) {
			pthread_mutex_unlock(&turn);
			return made;
		}
		/* The client socket of an accept takes the lowest free number
		 * first, the accepted fd the next free one, which with one
		 * free fd left below 64 would be past the threshold. */
		if (k % 5 == 4 && free_below(64) < 2)
			k++;
		fd = make(k);
		if (k % 5 == 4)
			want = accept_want;
		CHECK(fd == want, "thread %ld, call %u: fd %d, the lowest free was %d", id, k % 5,
		      fd, want);
		pthread_mutex_unlock(&turn);
		made++;
	}
}

static void *worker(void *arg)
{
	long id = (long)arg;

	fill_below(id);
	pthread_barrier_wait(&phase);
	for (int i = 0; i < PER_THREAD; i++) {
		pthread_mutex_lock(&turn);   /* interleave the threads' creations */
		after[id][i] = make((unsigned)(id + i));
		pthread_mutex_unlock(&turn);
		sched_yield();
	}
	pthread_barrier_wait(&phase);
	/* fds 0-63 closed by main: filled again, unmoved */
	pthread_barrier_wait(&phase);
	fill_below(id);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[NT];
	socklen_t alen = sizeof(lsn_addr);
	static int owner[1 << 12];

	test_mode(argc, argv);
	CHECK(!getenv("FDRANGE_THRESHOLD"), "FDRANGE_THRESHOLD is set: this test is about the default");
	lsn = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(lsn >= 0, "socket: %s", strerror(errno));
	memset(&lsn_addr, 0, sizeof(lsn_addr));
	lsn_addr.sin_family = AF_INET;
	lsn_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(bind(lsn, (struct sockaddr *)&lsn_addr, sizeof(lsn_addr)) == 0, "bind: %s", strerror(errno));
	CHECK(listen(lsn, 64) == 0, "listen: %s", strerror(errno));
	CHECK(getsockname(lsn, (struct sockaddr *)&lsn_addr, &alen) == 0, "getsockname");
	CHECK(lsn < 64, "listener at %d", lsn);

	pthread_barrier_init(&phase, NULL, NT + 1);
	for (long i = 0; i < NT; i++)
		CHECK(pthread_create(&t[i], NULL, worker, (void *)i) == 0, "pthread_create");
	pthread_barrier_wait(&phase);
	/* fill_below returned in every thread: 0-63 are all open */
	CHECK(lowest_free() >= 64, "lowest free %d after filling", lowest_free());
	pthread_barrier_wait(&phase);

	memset(owner, -1, sizeof(owner));
	for (int id = 0; id < NT; id++)
		for (int i = 0; i < PER_THREAD; i++) {
			int fd = after[id][i], line = fd / 8;

			CHECK(fd >= 64 && fd < 1024, "thread %d: fd %d past the threshold", id, fd);
			CHECK(fd_valid(fd), "fd %d not open", fd);
			if (!placed_mode)
				continue;
			CHECK(owner[line] < 0 || owner[line] == id,
			      "fd %d of thread %d on a line with thread %d's", fd, id, owner[line]);
			owner[line] = id;
		}
	/* Back below the threshold: 3..63 closed (but the listener). */
	for (int fd = 3; fd < 64; fd++)
		if (fd != lsn)
			close(fd);
	pthread_barrier_wait(&phase);
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	CHECK(lowest_free() >= 64, "lowest free %d after refilling", lowest_free());
	printf("below 64: the kernel's numbers; past it: %s (%s)\n",
	       placed_mode ? "a line per thread" : "interleaved", argv[1]);
	return 0;
}
