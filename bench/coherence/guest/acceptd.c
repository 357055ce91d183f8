/* SPDX-License-Identifier: MIT */
/*
 * acceptd PORT THREADS - the accept-per-thread server shape, for the
 * coherence model (bench/coherence/run.sh, job "ac") and for the many-core
 * A/B on real cores (bench/manycore.sh).
 *
 * It stands for the servers whose every worker thread accepts its own
 * connections: trafficserver with per-thread listeners, envoy, h2o, haproxy
 * with one bind per thread. Each of THREADS threads (named "ac-worker")
 * opens its own SO_REUSEPORT listener on 127.0.0.1:PORT, so the kernel
 * spreads new connections over the threads by hash; the thread accepts
 * (accept4), registers the connection with its own epoll, serves it and
 * closes it when the client does. No fd ever crosses threads: every
 * allocation and close of the fd table comes from the thread that uses the
 * fd, which is the shape where the table's lock and bitmaps are written by
 * every thread at its own accept rate.
 *
 * It speaks the part of memcached's text protocol that mcload uses, so the
 * same client drives both shapes: "get KEY" and "set KEY 0 0 N" with an
 * N-byte value (N <= 64), the values kept in one small table under a lock
 * per key stripe. A real server does more per request (parsing, TLS,
 * logging), which is why the model counts transfers per request and per
 * connection, not time.
 *
 * Runs until killed; exit status 1 (with a line on stderr) when it cannot
 * listen.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define KEYS 8192
#define VALMAX 64
#define STRIPES 64

struct conn {
	int fd;
	size_t got;
	char buf[256];
};

static struct {
	pthread_mutex_t lock;
} stripes[STRIPES];
static char values[KEYS][VALMAX];
static unsigned char lens[KEYS], present[KEYS];
static int port;

static int listener(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 4096)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* "keyN" -> N, or -1 */
static int key_of(const char *s, size_t n)
{
	long k = 0;

	if (n < 4 || memcmp(s, "key", 3))
		return -1;
	for (size_t i = 3; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		k = k * 10 + (s[i] - '0');
		if (k >= KEYS)
			return -1;
	}
	return (int)k;
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * Answer every complete command in c->buf; 0 to keep the connection, -1 to
 * drop it (a protocol error or a failed send).
 */
static int serve(struct conn *c)
{
	for (;;) {
		char *eol = memmem(c->buf, c->got, "\r\n", 2);
		char out[VALMAX + 64];
		size_t used;
		int k, len = 0;

		if (!eol)
			return c->got < sizeof(c->buf) ? 0 : -1;
		size_t ln = (size_t)(eol - c->buf);
		if (ln > 4 && !memcmp(c->buf, "get ", 4)) {
			k = key_of(c->buf + 4, ln - 4);
			if (k < 0)
				return -1;
			pthread_mutex_lock(&stripes[k % STRIPES].lock);
			if (present[k])
				len = snprintf(out, sizeof(out), "VALUE key%d 0 %u\r\n%.*s\r\nEND\r\n", k,
					       lens[k], (int)lens[k], values[k]);
			pthread_mutex_unlock(&stripes[k % STRIPES].lock);
			if (!len)
				len = snprintf(out, sizeof(out), "END\r\n");
			used = ln + 2;
		} else if (ln > 4 && !memcmp(c->buf, "set ", 4)) {
			char *sp = memchr(c->buf + 4, ' ', ln - 4);
			unsigned flags, exp, n;
			if (!sp || (k = key_of(c->buf + 4, (size_t)(sp - c->buf - 4))) < 0)
				return -1;
			*eol = 0;
			if (sscanf(sp, " %u %u %u", &flags, &exp, &n) != 3 || n > VALMAX)
				return -1;
			*eol = '\r';
			if (c->got < ln + 2 + n + 2)
				return 0; /* the value is still on its way */
			pthread_mutex_lock(&stripes[k % STRIPES].lock);
			memcpy(values[k], eol + 2, n);
			lens[k] = (unsigned char)n;
			present[k] = 1;
			pthread_mutex_unlock(&stripes[k % STRIPES].lock);
			len = snprintf(out, sizeof(out), "STORED\r\n");
			used = ln + 2 + n + 2;
		} else {
			return -1;
		}
		if (send_all(c->fd, out, (size_t)len))
			return -1;
		memmove(c->buf, c->buf + used, c->got - used);
		c->got -= used;
	}
}

static void drop(int ep, struct conn *c)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c);
}

static void *worker(void *arg)
{
	struct epoll_event ev[64];
	int lfd = listener(), ep = epoll_create1(EPOLL_CLOEXEC), one = 1;
	static struct conn lmark; /* epoll data of the listener */

	(void)arg;
	prctl(PR_SET_NAME, "ac-worker");
	if (lfd < 0 || ep < 0) {
		fprintf(stderr, "acceptd: listening on 127.0.0.1:%d failed: %s\n", port, strerror(errno));
		exit(1);
	}
	ev[0].events = EPOLLIN;
	ev[0].data.ptr = &lmark;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev[0])) {
		perror("acceptd: epoll_ctl");
		exit(1);
	}
	for (;;) {
		int n = epoll_wait(ep, ev, 64, -1);
		for (int i = 0; i < n; i++) {
			if (ev[i].data.ptr == &lmark) {
				int fd;
				while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
					struct conn *c = calloc(1, sizeof(*c));
					struct epoll_event e = { .events = EPOLLIN };
					if (!c) {
						close(fd);
						continue;
					}
					c->fd = fd;
					e.data.ptr = c;
					setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
					if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e)) {
						close(fd);
						free(c);
					}
				}
				continue;
			}
			struct conn *c = ev[i].data.ptr;
			ssize_t r = recv(c->fd, c->buf + c->got, sizeof(c->buf) - c->got, 0);
			if (r < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (r <= 0) {
				drop(ep, c);
				continue;
			}
			c->got += (size_t)r;
			if (serve(c))
				drop(ep, c);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc == 3 ? atoi(argv[2]) : 0;

	port = argc == 3 ? atoi(argv[1]) : 0;
	if (port < 1 || port > 65535 || threads < 1 || threads > 1024) {
		fprintf(stderr, "usage: acceptd PORT THREADS (PORT 1-65535, THREADS 1-1024)\n");
		return 2;
	}
	for (int i = 0; i < STRIPES; i++)
		pthread_mutex_init(&stripes[i].lock, NULL);
	pthread_t t;
	for (int i = 1; i < threads; i++)
		if (pthread_create(&t, NULL, worker, NULL)) {
			fprintf(stderr, "acceptd: cannot start thread %d\n", i);
			return 1;
		}
	worker(NULL);
	return 0;
}
