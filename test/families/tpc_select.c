/* SPDX-License-Identifier: MIT */
/*
 * A thread-per-connection echo server of the oldest kind: the main thread
 * blocks in accept(), one detached pthread per connection serves it with
 * blocking reads and writes, no epoll.  Each handler opens one file of its
 * own (/dev/null) for the connection's lifetime and waits for its socket
 * with select() and FD_SET.  Built with -O2 -D_FORTIFY_SOURCE=2, FD_SET
 * aborts ("*** bit out of range 0 - FD_SETSIZE on fd_set ***") on an fd
 * >= FD_SETSIZE: a program that works plain because its fds stay below
 * 1024 must not be pushed above it.
 *
 *   tpc_select PORTFILE
 *
 * listens on 127.0.0.1 on a port the kernel picks, writes the port to
 * PORTFILE, and serves until SIGTERM; then prints
 *   tpc_select: accepted=N served=N maxfd=N
 * and exits 0 ("tpc_select: aborted, maxfd=N" if FD_SET aborts it).  A handler that sees a failed select/read/write or open
 * counts an error and the exit status is 1.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>

static atomic_long accepted, served, errors;
static atomic_int maxfd;
static volatile sig_atomic_t stopping;

static void note_fd(int fd)
{
	int m = atomic_load(&maxfd);

	while (fd > m && !atomic_compare_exchange_weak(&maxfd, &m, fd))
		;
}

static void *serve(void *arg)
{
	int c = (int)(long)arg;
	int f = open("/dev/null", O_RDONLY | O_CLOEXEC);
	char buf[4096];

	if (f < 0) {
		atomic_fetch_add(&errors, 1);
	} else {
		note_fd(f);
	}
	for (;;) {
		fd_set rd, ex;
		struct timeval tv = { .tv_sec = 30 };

		FD_ZERO(&rd);
		FD_ZERO(&ex);
		FD_SET(c, &rd);
		/* The file waits too, for an exceptional condition /dev/null never
		 * has (it is always readable): its number goes through FD_SET. */
		if (f >= 0)
			FD_SET(f, &ex);
		int n = select((c > f ? c : f) + 1, &rd, NULL, &ex, &tv);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			atomic_fetch_add(&errors, 1);
			break;
		}
		if (!FD_ISSET(c, &rd))
			continue;
		ssize_t r = read(c, buf, sizeof(buf));

		if (r == 0)
			break;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			atomic_fetch_add(&errors, 1);
			break;
		}
		for (ssize_t off = 0; off < r;) {
			ssize_t w = write(c, buf + off, (size_t)(r - off));

			if (w <= 0) {
				atomic_fetch_add(&errors, 1);
				goto out;
			}
			off += w;
		}
	}
out:
	if (f >= 0)
		close(f);
	close(c);
	atomic_fetch_add(&served, 1);
	return NULL;
}

/* FD_SET's abort: say how high the fds went (async-signal-safe), then
 * abort() goes on to kill the process. */
static void on_abort(int sig)
{
	char buf[64] = "tpc_select: aborted, maxfd=", *p = buf + 27;
	char digits[16];
	int n = atomic_load(&maxfd), k = 0;

	(void)sig;
	do
		digits[k++] = (char)('0' + n % 10);
	while ((n /= 10) && k < 15);
	while (k)
		*p++ = digits[--k];
	*p++ = '\n';
	if (write(1, buf, (size_t)(p - buf)) < 0)
		return;
}

static void on_term(int sig)
{
	(void)sig;
	stopping = 1;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	struct sigaction sa = { .sa_handler = on_term };
	pthread_attr_t attr;
	int one = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: tpc_select PORTFILE\n");
		return 2;
	}
	sigaction(SIGTERM, &sa, NULL); /* no SA_RESTART: accept() returns EINTR */
	signal(SIGABRT, on_abort);
	signal(SIGPIPE, SIG_IGN);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 512) ||
	    getsockname(l, (struct sockaddr *)&a, &al)) {
		perror("tpc_select: listen");
		return 1;
	}
	FILE *pf = fopen(argv[1], "w");

	if (!pf || fprintf(pf, "%d\n", ntohs(a.sin_port)) < 0 || fclose(pf)) {
		perror("tpc_select: port file");
		return 1;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 128 * 1024);
	while (!stopping) {
		int c = accept(l, NULL, NULL);
		pthread_t t;

		if (c < 0) {
			if (errno == EINTR)
				continue;
			perror("tpc_select: accept");
			atomic_fetch_add(&errors, 1);
			break;
		}
		note_fd(c);
		atomic_fetch_add(&accepted, 1);
		if (pthread_create(&t, &attr, serve, (void *)(long)c)) {
			atomic_fetch_add(&errors, 1);
			close(c);
		}
	}
	/* Let the handlers of connections the client already closed finish. */
	for (int i = 0; i < 100 && atomic_load(&served) < atomic_load(&accepted); i++)
		usleep(20000);
	printf("tpc_select: accepted=%ld served=%ld maxfd=%d errors=%ld\n", atomic_load(&accepted),
	       atomic_load(&served), atomic_load(&maxfd), atomic_load(&errors));
	return atomic_load(&errors) ? 1 : 0;
}
