/* SPDX-License-Identifier: MIT */
/*
 * A pre-fork daemon: the program forks, the child calls setsid() and forks
 * the workers, then exits; the program itself exits once that child has
 * (the classic double fork: the workers are grandchildren, orphans in a
 * session of their own).  Each worker starts THREADS threads; each thread
 * creates a TCP socket, a socketpair, a pipe and opens /dev/null, sends a
 * message through the pipe and the socketpair and reads it back, and holds
 * its fds until DIR/stop exists (at most 30 s).
 *
 *   prefork DIR WORKERS THREADS
 *
 * Files in DIR: workers (one worker pid a line, written by the middle
 * process before it exits), fds-PID (per worker, once all its threads hold
 * their fds: one line per thread, "thread N fds A B C ..."), ready-PID
 * (after fds-PID), done-PID ("ok" or "error ..." when the worker exits).
 * Exit status of the program: 0 when the middle process forked every
 * worker.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PER_THREAD 6

static const char *dir;
static int nthreads;
static pthread_barrier_t held;

struct slot {
	int fds[PER_THREAD];
	int err;
};

static int exists(const char *name)
{
	char p[4096];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return stat(p, &st) == 0;
}

static int put(const char *name, const char *text)
{
	char p[4096], tmp[4200];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", p);
	f = fopen(tmp, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) || rename(tmp, p))
		return -1;
	return 0;
}

/* Writes msg into w and reads it back from r. */
static int round_trip(int w, int r, const char *msg)
{
	char buf[64] = { 0 };
	size_t n = strlen(msg);

	if (write(w, msg, n) != (ssize_t)n)
		return -1;
	if (read(r, buf, sizeof(buf) - 1) != (ssize_t)n)
		return -1;
	return memcmp(buf, msg, n) ? -1 : 0;
}

static void *thread_main(void *arg)
{
	struct slot *s = arg;
	int sp[2] = { -1, -1 }, pp[2] = { -1, -1 };

	s->fds[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) || pipe2(pp, O_CLOEXEC))
		s->err = errno ? errno : EIO;
	s->fds[1] = sp[0];
	s->fds[2] = sp[1];
	s->fds[3] = pp[0];
	s->fds[4] = pp[1];
	s->fds[5] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	for (int i = 0; i < PER_THREAD; i++)
		if (s->fds[i] < 0 && !s->err)
			s->err = EBADF;
	if (!s->err && (round_trip(pp[1], pp[0], "through the pipe") ||
			round_trip(sp[0], sp[1], "through the socketpair") ||
			round_trip(sp[1], sp[0], "and back")))
		s->err = EPROTO;
	pthread_barrier_wait(&held); /* every thread holds its fds */
	for (int i = 0; i < 600 && !exists("stop"); i++)
		usleep(50000);
	for (int i = 0; i < PER_THREAD; i++)
		if (s->fds[i] >= 0 && close(s->fds[i]) && !s->err)
			s->err = errno;
	return NULL;
}

static int worker(void)
{
	struct slot *slots = calloc((size_t)nthreads, sizeof(*slots));
	pthread_t *t = calloc((size_t)nthreads, sizeof(*t));
	char name[64], *text, err[128] = "";
	size_t cap = 64 + (size_t)nthreads * (16 + PER_THREAD * 12), len = 0;

	text = malloc(cap);
	if (!slots || !t || !text)
		return 1;
	pthread_barrier_init(&held, NULL, (unsigned)nthreads + 1);
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, thread_main, &slots[i]))
			return 1;
	pthread_barrier_wait(&held);
	for (int i = 0; i < nthreads; i++) {
		len += (size_t)snprintf(text + len, cap - len, "thread %d fds", i);
		for (int k = 0; k < PER_THREAD; k++)
			len += (size_t)snprintf(text + len, cap - len, " %d", slots[i].fds[k]);
		len += (size_t)snprintf(text + len, cap - len, "\n");
	}
	snprintf(name, sizeof(name), "fds-%d", (int)getpid());
	if (put(name, text))
		return 1;
	snprintf(name, sizeof(name), "ready-%d", (int)getpid());
	if (put(name, "ready\n"))
		return 1;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(t[i], NULL);
		if (slots[i].err && !err[0])
			snprintf(err, sizeof(err), "error thread %d: %s\n", i, strerror(slots[i].err));
	}
	snprintf(name, sizeof(name), "done-%d", (int)getpid());
	put(name, err[0] ? err : "ok\n");
	return err[0] ? 1 : 0;
}

int main(int argc, char **argv)
{
	int nworkers, st;
	pid_t mid;

	if (argc != 4) {
		fprintf(stderr, "usage: prefork DIR WORKERS THREADS\n");
		return 2;
	}
	dir = argv[1];
	nworkers = atoi(argv[2]);
	nthreads = atoi(argv[3]);
	if (nworkers < 1 || nworkers > 64 || nthreads < 1 || nthreads > 256)
		return 2;
	mid = fork();
	if (mid < 0)
		return 1;
	if (mid == 0) {
		char pids[64 * 16] = "";
		size_t len = 0;

		if (setsid() < 0)
			_exit(1);
		for (int i = 0; i < nworkers; i++) {
			pid_t w = fork();

			if (w < 0)
				_exit(1);
			if (w == 0)
				_exit(worker());
			len += (size_t)snprintf(pids + len, sizeof(pids) - len, "%d\n", (int)w);
		}
		_exit(put("workers", pids) ? 1 : 0);
	}
	if (waitpid(mid, &st, 0) != mid)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
