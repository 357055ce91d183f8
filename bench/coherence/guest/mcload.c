/* SPDX-License-Identifier: MIT */
/*
 * mcload PORT CONNS REQUESTS CHURN CPU SERVER_PID LABEL - the memcached load
 * inside the coherence guest.
 *
 * One thread, pinned to vCPU CPU, keeps CONNS connections to memcached on
 * 127.0.0.1:PORT busy in a closed loop (one request in flight per
 * connection; 9 gets to 1 set of a 32-byte value). After CHURN requests a
 * connection is closed and reopened, so memcached's main thread keeps
 * accepting (writing the fd table) while its workers look fds up: the
 * mix that makes fd-table lines bounce. The plugin window covers exactly
 * REQUESTS answered requests (connections are opened and warmed before).
 * After the window it prints memcached's fd numbers (from
 * /proc/SERVER_PID/fd) so the report can show where the fds were.
 * Every wait is bounded (5 s per reply, 10 s to connect at start).
 */
#define _GNU_SOURCE
#include "hypercall.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct conn {
	int fd, waiting, is_set;
	long served;
	size_t got;
	char buf[512];
};

static int port;

static int connect_once(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		return -1;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void die(const char *what)
{
	fprintf(stderr, "mcload: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void send_req(struct conn *c, int idx, long n)
{
	char req[128];
	int len;

	c->is_set = n % 10 == 0;
	if (c->is_set)
		len = snprintf(req, sizeof(req), "set key%d 0 0 32\r\n%032d\r\n", idx, idx);
	else
		len = snprintf(req, sizeof(req), "get key%d\r\n", idx);
	if (write(c->fd, req, (size_t)len) != len)
		die("write");
	c->waiting = 1;
	c->got = 0;
}

/* Read what is there; 1 when the reply is complete. */
static int recv_reply(struct conn *c)
{
	ssize_t r = read(c->fd, c->buf + c->got, sizeof(c->buf) - 1 - c->got);
	if (r <= 0)
		die(r == 0 ? "server closed a connection" : "read");
	c->got += (size_t)r;
	c->buf[c->got] = 0;
	const char *end = c->is_set ? "STORED\r\n" : "END\r\n";
	size_t el = strlen(end);
	if (c->got >= el && !memcmp(c->buf + c->got - el, end, el))
		return 1;
	if (c->got >= sizeof(c->buf) - 1) {
		fprintf(stderr, "mcload: unexpected reply '%.60s'\n", c->buf);
		exit(1);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 8) {
		fprintf(stderr, "usage: mcload PORT CONNS REQUESTS CHURN CPU SERVER_PID LABEL\n");
		return 2;
	}
	port = atoi(argv[1]);
	int nc = atoi(argv[2]), cpu = atoi(argv[5]);
	long total = atol(argv[3]), churn = atol(argv[4]);
	struct conn *c = calloc((size_t)nc, sizeof(*c));
	struct pollfd *p = calloc((size_t)nc, sizeof(*p));
	int *idx = calloc((size_t)nc, sizeof(*idx)); /* p[k] polls c[idx[k]] */
	long done = 0, reconnects = 0, seq = 0;
	char label[256];
	cpu_set_t set;

	if (!c || !p || !idx || nc < 1 || total < 1 || churn < 1)
		return 2;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");

	/* the server may still be starting: retry the first connection */
	for (int t = 0; t < 100; t++) {
		if ((c[0].fd = connect_once()) >= 0)
			break;
		usleep(100000);
	}
	if (c[0].fd < 0)
		die("connect");
	for (int i = 1; i < nc; i++)
		if ((c[i].fd = connect_once()) < 0)
			die("connect");
	/* warm up: one set per key, so that gets hit */
	for (int i = 0; i < nc; i++) {
		send_req(&c[i], i, 0);
		while (!recv_reply(&c[i]))
			;
		c[i].waiting = 0;
	}

	coh_call(COH_OPEN, 0, 0, 0);
	while (done < total) {
		int np = 0;
		for (int i = 0; i < nc; i++) {
			if (!c[i].waiting && done + np < total) {
				if (c[i].served >= churn) {
					close(c[i].fd);
					if ((c[i].fd = connect_once()) < 0)
						die("reconnect");
					c[i].served = 0;
					reconnects++;
				}
				send_req(&c[i], i, ++seq);
			}
			if (c[i].waiting) {
				p[np].fd = c[i].fd;
				p[np].events = POLLIN;
				idx[np] = i;
				np++;
			}
		}
		int r = poll(p, (nfds_t)np, 5000);
		if (r <= 0)
			die(r == 0 ? "reply timeout" : "poll");
		for (int k = 0; k < np; k++) {
			if (!(p[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			struct conn *cc = &c[idx[k]];
			if (recv_reply(cc)) {
				cc->waiting = 0;
				cc->served++;
				done++;
			}
		}
	}
	snprintf(label, sizeof(label), "%s requests=%ld conns=%d churn=%ld reconnects=%ld", argv[7], done, nc,
		 churn, reconnects);
	coh_call(COH_CLOSE, (unsigned long)label, 0, 0);
	printf("COH %s\n", label);

	/* where memcached's fds are (the connections are still open) */
	char path[64];
	snprintf(path, sizeof(path), "/proc/%s/fd", argv[6]);
	DIR *d = opendir(path);
	if (d) {
		struct dirent *e;
		printf("COH server_fds");
		while ((e = readdir(d)))
			if (e->d_name[0] != '.')
				printf(" %s", e->d_name);
		printf("\n");
		closedir(d);
	}
	for (int i = 0; i < nc; i++)
		close(c[i].fd);
	return 0;
}
