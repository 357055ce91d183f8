/* SPDX-License-Identifier: MIT */
/*
 * Echo load for tpc_select where there is no python (the kernel boot
 * test's guest, kernel/guest-families.sh): echo_client.py in C.
 *
 *   echo_load PORT CONNS ROUNDS READYFILE GOFILE
 *
 * Opens CONNS connections to 127.0.0.1:PORT and echoes one distinct
 * message on each; then, if no error so far, creates READYFILE (every
 * connection is up and served: the time to sample the server) and waits,
 * at most 10 s, for GOFILE; then ROUNDS - 1 more rounds, and closes them
 * all.  Prints
 *   echo_load: conns=N rounds=R echoes=E errors=X
 * and exits 0 only if every echo came back intact (X == 0).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

static long echoes, errors;

static void one(int s, int conn, int round)
{
	char msg[256], got[256];
	int n = snprintf(msg, sizeof(msg), "round %d conn %d echo load message", round, conn);
	ssize_t off = 0;

	if (write(s, msg, (size_t)n) != n) {
		errors++;
		return;
	}
	while (off < n) {
		ssize_t r = read(s, got + off, (size_t)(n - off));

		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			errors++;
			return;
		}
		off += r;
	}
	if (memcmp(msg, got, (size_t)n)) {
		errors++;
		return;
	}
	echoes++;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { .tv_sec = 10 };
	int conns, rounds, *s;
	struct stat st;
	FILE *f;

	if (argc != 6 || (conns = atoi(argv[2])) < 1 || (rounds = atoi(argv[3])) < 1) {
		fprintf(stderr, "usage: echo_load PORT CONNS ROUNDS READYFILE GOFILE\n");
		return 2;
	}
	a.sin_port = htons((unsigned short)atoi(argv[1]));
	s = calloc((size_t)conns, sizeof(*s));
	if (!s)
		return 2;
	for (int i = 0; i < conns; i++) {
		s[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (s[i] < 0 || setsockopt(s[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
		    connect(s[i], (struct sockaddr *)&a, sizeof(a))) {
			fprintf(stderr, "echo_load: connect %d: %s\n", i, strerror(errno));
			errors++;
			if (s[i] >= 0)
				close(s[i]);
			s[i] = -1;
		}
	}
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < conns; i++)
			if (s[i] >= 0)
				one(s[i], i, r);
		if (r == 0 && !errors) {
			f = fopen(argv[4], "w");
			if (!f || fclose(f))
				errors++;
			for (int k = 0; k < 200 && stat(argv[5], &st); k++)
				usleep(50000);
		}
	}
	for (int i = 0; i < conns; i++)
		if (s[i] >= 0)
			close(s[i]);
	printf("echo_load: conns=%d rounds=%d echoes=%ld errors=%ld\n", conns, rounds, echoes, errors);
	return errors ? 1 : 0;
}
