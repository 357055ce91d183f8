/* SPDX-License-Identifier: MIT */
/*
 * A target for `fdrange stat` tests that needs no libfdrange: it makes a
 * memfd named "fdrange", maps it shared and writes a stats block
 * (lib/block.h) describing real fds of its own, valid or corrupted in a
 * chosen way, then prints "ready" and sleeps until killed.  So stat can be
 * tested against hostile and broken targets without the library.
 *
 * usage: fake_block MODE [-n N] [-d DECOYS] [-l LIBFILE]
 * MODE: valid, plain (no block), inactive (no block; maps LIBFILE, a file
 * named libfdrange.so), escapes (names, version and settings full of
 * terminal escapes; comm and thread names too), huge_width, bad_offsets,
 * nowners_big, wrong_pid, truncated, bad_rot, bad_kind, bad_chunk,
 * no_nul, bad_model, bad_policy, wrong_version.
 * -n N: N more fds (dups of /dev/null) above the block's chunks, with
 * RLIMIT_NOFILE raised to fit (the linear-time test).
 * -d DECOYS: before the block, DECOYS other "fdrange" memfd blocks, each
 * valid but for its pid (a process forging blocks).
 *
 * The fds it describes: a TCP listener and connections to itself; thread
 * A's accepted sockets in chunks 0 and 2 (fds 64-127, 192-255), thread B's
 * in chunk 1 plus one in A's chunk 0 (so chunk 0 is shared and A's purity
 * is below 100%), a pending accepted socket in the sparse pool's chunk 3.
 * Each accepted socket is registered with its thread's epoll instance.
 */
#include "block.h"
#include "options.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DIE(...) do { fprintf(stderr, "fake_block: " __VA_ARGS__); fputc('\n', stderr); \
		      exit(1); } while (0)

#define NR_OPEN 65536u
#define BASE 64u

static const char *mode;
static pid_t tids[2];
static int ready_pipe[2], hold_pipe[2];

static void *thread_main(void *arg)
{
	long i = (long)arg;
	char c;

	if (!strcmp(mode, "escapes"))
		prctl(PR_SET_NAME, i ? "\033[2Jwipe" : "\033]0;t\007x", 0, 0, 0);
	else
		prctl(PR_SET_NAME, i ? "worker-b" : "worker-a", 0, 0, 0);
	tids[i] = (pid_t)syscall(SYS_gettid);
	if (write(ready_pipe[1], "r", 1) != 1)
		DIE("ready pipe");
	while (read(hold_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static size_t layout(struct fdr_blk_hdr *h)
{
	size_t owners_off = FDR_BLK_HDR_SIZE;
	size_t chunks_off = owners_off + (size_t)FDR_MAX_OWNERS * sizeof(struct fdr_blk_owner);
	unsigned nchunks = (NR_OPEN - 64 - BASE) / FDR_CHUNK;
	size_t recs_off = (chunks_off + nchunks * sizeof(uint32_t) + 4095) & ~(size_t)4095;

	h->owners_off = owners_off;
	h->chunks_off = chunks_off;
	h->recs_off = recs_off;
	h->nrecs = NR_OPEN;
	h->nchunks = nchunks;
	return recs_off + NR_OPEN * sizeof(uint64_t);
}

/* A shared "fdrange" memfd mapping of @size bytes, its fd closed. */
static void *map_memfd(size_t size)
{
	int fd = memfd_create(FDR_BLK_NAME, MFD_CLOEXEC);
	void *p;

	if (fd < 0 || ftruncate(fd, (off_t)size) != 0)
		DIE("memfd: %s", strerror(errno));
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		DIE("mmap: %s", strerror(errno));
	close(fd);
	return p;
}

struct fdset {
	int fd[64];
	uint32_t tid[64];
	bool pending[64];
	unsigned n;
};

/* An accepted connection moved to the first free fd >= @at. */
static int accepted_at(int lfd, int at, int *client)
{
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	int c, s, moved;

	if (getsockname(lfd, (struct sockaddr *)&a, &al) != 0)
		DIE("getsockname");
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) != 0)
		DIE("connect: %s", strerror(errno));
	s = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (s < 0)
		DIE("accept: %s", strerror(errno));
	moved = fcntl(s, F_DUPFD_CLOEXEC, at);
	if (moved < 0)
		DIE("F_DUPFD: %s", strerror(errno));
	close(s);
	*client = c;
	return moved;
}

static void fill_settings(struct fdr_blk_hdr *h, bool escapes)
{
	h->nsettings = fdr_noptions < FDR_SETTINGS_MAX ? fdr_noptions : FDR_SETTINGS_MAX;
	for (unsigned i = 0; i < h->nsettings; i++) {
		struct fdr_blk_setting *s = &h->settings[i];

		snprintf(s->name, sizeof(s->name), "%s", fdr_options[i].env);
		snprintf(s->value, sizeof(s->value), "%s", fdr_options[i].def);
		s->from_env = i == 0;
	}
	if (escapes && h->nsettings >= 2) {
		/* OSC 52 writes the clipboard of the terminal that shows it. */
		snprintf(h->settings[0].value, sizeof(h->settings[0].value), "\033]52;c;cHduZWQ=\007");
		snprintf(h->settings[1].name, sizeof(h->settings[1].name), "FDRANGE_\033[8mX");
	}
}

int main(int argc, char **argv)
{
	static struct fdset set;
	struct fdr_blk_hdr tmpl, *h;
	struct fdr_blk_owner *own;
	uint32_t *chunks;
	uint64_t *recs;
	struct sockaddr_in a = { .sin_family = AF_INET };
	pthread_t th[2];
	const char *libfile = NULL;
	unsigned long extra = 0;
	unsigned decoys = 0;
	size_t size;
	int lfd, ep[2], opt, c;

	if (argc < 2)
		DIE("usage: fake_block MODE [-n N] [-d DECOYS] [-l LIBFILE]");
	mode = argv[1];
	optind = 2;
	while ((opt = getopt(argc, argv, "n:d:l:")) != -1) {
		if (opt == 'n')
			extra = strtoul(optarg, NULL, 10);
		else if (opt == 'd')
			decoys = (unsigned)strtoul(optarg, NULL, 10);
		else if (opt == 'l')
			libfile = optarg;
		else
			DIE("bad option");
	}
	if (!strcmp(mode, "escapes"))
		prctl(PR_SET_NAME, "\033[31mred\033[0m", 0, 0, 0);
	if (pipe2(ready_pipe, O_CLOEXEC) || pipe2(hold_pipe, O_CLOEXEC))
		DIE("pipe");
	for (long i = 0; i < 2; i++) {
		char r;

		if (pthread_create(&th[i], NULL, thread_main, (void *)i))
			DIE("pthread_create");
		if (read(ready_pipe[0], &r, 1) != 1)
			DIE("ready");
	}

	/* The fds: a listener, connections to it, the accepted ends moved. */
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 64))
		DIE("listen: %s", strerror(errno));
	ep[0] = epoll_create1(EPOLL_CLOEXEC);
	ep[1] = epoll_create1(EPOLL_CLOEXEC);
	if (ep[0] < 0 || ep[1] < 0)
		DIE("epoll_create1");
	{
		/* [thread, first fd, count, registered] */
		static const int plan[][4] = {
			{ 0, 64, 6, 1 }, { 1, 70, 1, 1 }, { 1, 128, 4, 1 }, { 0, 192, 3, 1 },
			{ 0, 256, 1, 0 },
		};

		for (unsigned p = 0; p < sizeof(plan) / sizeof(plan[0]); p++)
			for (int k = 0; k < plan[p][2]; k++) {
				int fd = accepted_at(lfd, plan[p][1] + k, &c);
				struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

				(void)c;  /* the client end stays open, low */
				if (plan[p][3] && epoll_ctl(ep[plan[p][0]], EPOLL_CTL_ADD, fd, &ev))
					DIE("epoll_ctl: %s", strerror(errno));
				set.fd[set.n] = fd;
				set.tid[set.n] = plan[p][3] ? (uint32_t)tids[plan[p][0]] : 0;
				set.pending[set.n] = !plan[p][3];
				set.n++;
			}
	}
	if (extra) {
		struct rlimit rl = { extra + 4096, extra + 4096 };
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			DIE("setrlimit %lu: %s", extra + 4096, strerror(errno));
		for (unsigned long i = 0; i < extra; i++)
			if (fcntl(null, F_DUPFD_CLOEXEC, 1024) < 0)
				DIE("dup %lu: %s", i, strerror(errno));
	}
	if (libfile) {
		int fd = open(libfile, O_RDONLY | O_CLOEXEC);

		if (fd < 0 || mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED)
			DIE("map %s: %s", libfile, strerror(errno));
		close(fd);
	}

	if (strcmp(mode, "plain") != 0 && strcmp(mode, "inactive") != 0) {
		memset(&tmpl, 0, sizeof(tmpl));
		size = layout(&tmpl);
		h = map_memfd(size);
		memcpy(h, &tmpl, sizeof(tmpl));
		memcpy(h->magic, FDR_BLK_MAGIC, 8);
		h->version = FDR_BLK_VERSION;
		h->hdr_size = FDR_BLK_HDR_SIZE;
		h->size = size;
		h->pid = getpid();
		h->flags = FDR_BLK_ACTIVE;
		snprintf(h->lib_version, sizeof(h->lib_version), "%s",
			 !strcmp(mode, "escapes") ? "1\033[5m\302\233" : "0.2.0-fake");
		fill_settings(h, !strcmp(mode, "escapes"));
		h->base = BASE;
		h->chunk = FDR_CHUNK;
		h->top_chunk = 4;
		h->nowners = 4;
		h->limit = 20000;
		h->nr_open = NR_OPEN;
		h->limit_changes = 1;
		h->policy = 0;  /* auto */
		h->model = FDR_MODEL_ROTATION;
		h->rot_len = 2;
		h->rot_owner[0] = 2;
		h->rot_owner[1] = 3;
		h->learned_after = 4;
		h->relearns = 1;
		h->accepted = 15;
		h->observed = 14;
		h->hits = 9;
		h->misses = 1;
		h->realignments = 2;
		h->owner_size = sizeof(struct fdr_blk_owner);
		h->max_owners = FDR_MAX_OWNERS;
		own = (struct fdr_blk_owner *)((char *)h + h->owners_off);
		chunks = (uint32_t *)((char *)h + h->chunks_off);
		recs = (uint64_t *)((char *)h + h->recs_off);
		own[0].kind = FDR_KIND_SPARSE;
		own[0].placed = 1;
		own[1].kind = FDR_KIND_SHARED;
		own[2].kind = FDR_KIND_THREAD;
		own[2].tid = (uint32_t)tids[0];
		own[2].placed = 9;
		own[2].inplace = 2;
		own[2].fallback[FDR_FB_FULL] = 1;
		own[2].probes = 3;
		own[2].claims = 2;
		own[2].chunks = 2;
		own[3].kind = FDR_KIND_THREAD;
		own[3].tid = (uint32_t)tids[1];
		own[3].placed = 5;
		own[3].fallback[FDR_FB_LIMIT] = 2;
		own[3].probes = 1;
		own[3].claims = 1;
		own[3].chunks = 1;
		chunks[0] = 3;  /* owner index + 1 */
		chunks[1] = 4;
		chunks[2] = 3;
		chunks[3] = 1;
		for (unsigned i = 0; i < set.n; i++)
			recs[set.fd[i]] = set.pending[i] ? FDR_REC_MAKE(i, 3, 1) : set.tid[i];

		if (!strcmp(mode, "huge_width"))
			h->fixed_width = 0x7fffffc0u;
		else if (!strcmp(mode, "bad_offsets"))
			h->chunks_off = h->size + 4096;
		else if (!strcmp(mode, "nowners_big"))
			h->nowners = 5000;
		else if (!strcmp(mode, "wrong_pid"))
			h->pid = getpid() + 1;
		else if (!strcmp(mode, "truncated"))
			h->size = size + 1;
		else if (!strcmp(mode, "bad_rot"))
			h->rot_owner[1] = 4000;
		else if (!strcmp(mode, "bad_kind"))
			own[3].kind = 77;
		else if (!strcmp(mode, "bad_chunk"))
			chunks[2] = 0x7fffffff;
		else if (!strcmp(mode, "no_nul"))
			memset(h->lib_version, 'x', sizeof(h->lib_version));
		else if (!strcmp(mode, "bad_model"))
			h->model = 17;
		else if (!strcmp(mode, "bad_policy"))
			h->policy = 3;
		else if (!strcmp(mode, "wrong_version"))
			h->version = 1;
		else if (strcmp(mode, "valid") != 0 && strcmp(mode, "escapes") != 0)
			DIE("unknown mode '%s'", mode);

		/* Forged blocks, mapped after the real one: the kernel places
		 * them below it, so they come first in /proc/PID/maps. */
		for (unsigned d = 0; d < decoys; d++) {
			struct fdr_blk_hdr *f = map_memfd(size);

			memcpy(f, h, size);
			f->pid = getpid() + 1 + (int)d;
		}
	}
	printf("ready %d\n", getpid());
	fflush(stdout);
	for (;;)
		pause();
}
