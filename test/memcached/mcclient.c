/* SPDX-License-Identifier: MIT */
/*
 * A tiny memcached client for the memcached tests: no libmemcached, so the
 * tests control exactly when each connection opens, talks and closes.
 *
 *   mcclient hold PORT N MAXSEC   open N connections one after another, each
 *                                 answering "version" before the next opens;
 *                                 print "held H rejected R", keep them open
 *                                 until MAXSEC passed or SIGTERM
 *   mcclient churn PORT CYCLES    connect, "version", close, CYCLES times;
 *                                 print "ok K failed F"
 *   mcclient stat PORT NAME       print the value of one "stats" field
 *   mcclient closefds [PIDFILE] -- CMD...
 *                                 write the pid (CMD's, after exec) to PIDFILE,
 *                                 exec CMD with every fd above 2 closed
 *                                 (servers must not inherit the test's fds)
 * Every wait is bounded: 5 s per reply.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int connect_to(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

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

/* Send @req, read one reply line into @buf.  Returns its length, 0 on EOF, -1. */
static int ask(int fd, const char *req, char *buf, size_t len)
{
	size_t n = 0;

	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req))
		return -1;
	while (n + 1 < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, 5000) != 1)
			return -1;
		r = read(fd, buf + n, len - 1 - n);
		if (r < 0)
			return errno == ECONNRESET ? 0 : -1;
		if (r == 0)
			break;
		n += (size_t)r;
		buf[n] = 0;
		if (strstr(buf, "\r\n"))
			break;
	}
	buf[n] = 0;
	return (int)n;
}

/* 1: served; 0: rejected by the server; -1: could not connect */
static int open_one(int port, int *out)
{
	char buf[256];
	int fd = connect_to(port), n;

	if (fd < 0)
		return -1;
	n = ask(fd, "version\r\n", buf, sizeof(buf));
	if (n > 0 && !strncmp(buf, "VERSION", 7)) {
		*out = fd;
		return 1;
	}
	close(fd);
	return 0;
}

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static int hold(int port, int n, int maxsec)
{
	int held = 0, rejected = 0, failed = 0, fd;
	time_t end = time(NULL) + maxsec;

	signal(SIGTERM, on_term);
	for (int i = 0; i < n; i++) {
		int r = open_one(port, &fd);

		held += r == 1;
		rejected += r == 0;
		failed += r < 0;
	}
	printf("held %d rejected %d failed %d\n", held, rejected, failed);
	fflush(stdout);
	while (!stop && time(NULL) < end)
		usleep(20000);
	return 0;
}

static int churn(int port, long cycles)
{
	long ok = 0, failed = 0;
	char buf[256];

	for (long i = 0; i < cycles; i++) {
		int fd = connect_to(port);

		if (fd >= 0 && ask(fd, "version\r\n", buf, sizeof(buf)) > 0 &&
		    !strncmp(buf, "VERSION", 7))
			ok++;
		else
			failed++;
		if (fd >= 0)
			close(fd);
	}
	printf("ok %ld failed %ld\n", ok, failed);
	return failed ? 1 : 0;
}

static int stat_field(int port, const char *name)
{
	char buf[16384], key[128];
	size_t n = 0;
	int fd = connect_to(port);
	const char *p;

	if (fd < 0 || write(fd, "stats\r\n", 7) != 7)
		return 1;
	while (n + 1 < sizeof(buf) && !strstr(buf, "END\r\n")) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&pf, 1, 5000) != 1 || (r = read(fd, buf + n, sizeof(buf) - 1 - n)) <= 0)
			return 1;
		n += (size_t)r;
		buf[n] = 0;
	}
	close(fd);
	snprintf(key, sizeof(key), "STAT %s ", name);
	p = strstr(buf, key);
	if (!p)
		return 1;
	p += strlen(key);
	printf("%.*s\n", (int)strcspn(p, "\r\n"), p);
	return 0;
}

static int closefds_exec(const char *pidfile, char **argv)
{
	DIR *d = opendir("/proc/self/fd");
	int keep = d ? dirfd(d) : -1;
	struct dirent *de;
	int fds[1024], n = 0;

	if (pidfile) {
		FILE *f = fopen(pidfile, "w");

		if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f)) {
			perror(pidfile);
			return 127;
		}
	}
	while (d && (de = readdir(d)))
		if (de->d_name[0] >= '0' && de->d_name[0] <= '9' && n < 1024)
			fds[n++] = atoi(de->d_name);
	for (int i = 0; i < n; i++)
		if (fds[i] > 2 && fds[i] != keep)
			close(fds[i]);
	if (d)
		closedir(d);
	execvp(argv[0], argv);
	perror(argv[0]);
	return 127;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && !strcmp(argv[1], "hold"))
		return hold(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if (argc >= 4 && !strcmp(argv[1], "churn"))
		return churn(atoi(argv[2]), atol(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "stat"))
		return stat_field(atoi(argv[2]), argv[3]);
	if (argc >= 4 && !strcmp(argv[1], "closefds") && !strcmp(argv[2], "--"))
		return closefds_exec(NULL, argv + 3);
	if (argc >= 5 && !strcmp(argv[1], "closefds") && !strcmp(argv[3], "--"))
		return closefds_exec(argv[2], argv + 4);
	fprintf(stderr, "usage: mcclient hold PORT N MAXSEC | churn PORT CYCLES | "
		"stat PORT NAME | closefds [PIDFILE] -- CMD...\n");
	return 2;
}
