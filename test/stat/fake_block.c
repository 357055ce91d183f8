/* SPDX-License-Identifier: MIT */
/*
 * A target for `fdrange stat` tests that needs no libfdrange: it makes a
 * memfd named "fdrange", maps it shared and writes a stats block
 * (lib/block.h) describing real fds of its own, valid or corrupted in a
 * chosen way, then prints "ready" and sleeps until killed.  So stat can be
 * tested against hostile and broken targets without the library.
 *
 * usage: fake_block MODE [-n N] [-d DECOYS] [-l LIBFILE] [-u UID] [-F] [-Z] [-S]
 *        fake_block exec PROGRAM [ARG...]
 * MODE: valid, plain (no block), inactive (no block; maps LIBFILE, a file
 * named libfdrange.so), escapes (names, version and settings full of
 * terminal escapes; comm and thread names too), huge_width, bad_offsets,
 * nowners_big, wrong_pid, truncated, bad_rot, bad_kind, bad_chunk,
 * no_nul, bad_model, bad_policy, wrong_version, bad_line, bad_why;
 * the reasons a library places nothing: disabled (FDRANGE_DISABLE=1),
 * config (a bad FDRANGE_SLOTS), seccomp_late (a filter installed while
 * running), limit (RLIMIT_NOFILE below the first chunk), single (no
 * second thread).
 * exec: installs a seccomp filter and executes PROGRAM under it (a
 * program started under a filter, as sandboxed services are).
 * -n N: N more fds (dups of /dev/null) above the block's chunks, with
 * RLIMIT_NOFILE raised to fit (the linear-time test).
 * -d DECOYS: before the block, DECOYS other "fdrange" memfd blocks, each
 * valid but for its pid (a process forging blocks).
 * -F: once set up, fork(): the child keeps the block mapped (a fork child
 * that placed nothing yet) and prints "child PID" before "ready".
 * -Z: a child that exits and is left unreaped: "zombie PID" before "ready".
 * -S: once set up, install a seccomp filter (allowing everything).
 * -u UID: once ready, switch to UID (and gid UID): the process is no
 * longer dumpable, so that only root may read it.
 *
 * The fds it describes: a TCP listener and connections to itself; thread
 * A's accepted sockets in chunks 0 and 2 (fds 64-127, 192-255), thread B's
 * in chunk 1 plus one in A's chunk 0 (so chunk 0 is shared and A's purity
 * is below 100%), a pending accepted socket in the learning pool's chunk
 * 3, and in the line pool's chunk 4 one socket of B's on the line B holds
 * (fd 320) and one of A's on A's (fd 328).  Each accepted socket but the
 * pending one is registered with its thread's epoll instance.
 */
#include "block.h"
#include "geometry.h"
#include "options.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
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
#include <sys/wait.h>
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

/* The library's layout (lib/block.h) for fs.nr_open NR_OPEN and BASE,
 * as lib/blockmap.c computes it: chunks below the cap, a record per fd. */
static size_t layout(struct fdr_blk_hdr *h)
{
	unsigned nchunks = fdr_geom_nchunks(BASE, fdr_geom_cap(NR_OPEN, NR_OPEN));

	return (size_t)fdr_blk_layout(h, FDR_MAX_OWNERS, nchunks, NR_OPEN);
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

/* An allow-everything filter: what counts is that one is in force. */
static void install_seccomp(void)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { 1, &allow };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0))
		DIE("seccomp: %s", strerror(errno));
}

static bool is(const char *m)
{
	return !strcmp(mode, m);
}

/* The modes whose library places nothing: no owner but the pools. */
static void inactive_block(struct fdr_blk_hdr *h, struct fdr_blk_owner *own)
{
	if (is("disabled") || is("config")) {
		h->flags = 0;
		h->why_inactive = is("disabled") ? FDR_WHY_DISABLED : FDR_WHY_CONFIG;
		if (is("config"))
			snprintf(h->why_msg, sizeof(h->why_msg), "libfdrange: FDRANGE_SLOTS=\"abc\": "
				 "not a number; accepted: 'auto' or an integer from 1 to 1024; "
				 "passing all calls through");
		h->nowners = 0;
		h->top_chunk = 0;
		h->model = FDR_MODEL_NONE;
		h->rot_len = 0;
		memset(own, 0, 5 * sizeof(*own));
	} else if (is("seccomp_late")) {
		h->flags = 0;
		h->why_inactive = FDR_WHY_SECCOMP;
	} else if (is("limit") || is("single")) {
		h->limit = is("limit") ? 100 : 20000;
		h->single_kept = 4;
		h->nowners = FDR_OWN_FIRST;
		h->top_chunk = 0;
		h->model = FDR_MODEL_NONE;
		h->rot_len = 0;
		memset(own + FDR_OWN_FIRST, 0, 2 * sizeof(*own));
		own[FDR_OWN_SPARSE].placed = 0;
	}
}

/* -F: the child keeps the block; both stay until killed.  -Z: the child
 * exits at once and stays a zombie. */
static void fork_child(bool zombie)
{
	int sync[2];
	pid_t child;
	char c;

	if (pipe(sync))
		DIE("pipe");
	child = fork();
	if (child < 0)
		DIE("fork: %s", strerror(errno));
	if (child == 0) {
		if (zombie)
			_exit(0);
		printf("child %d\n", getpid());
		fflush(stdout);
		if (write(sync[1], "c", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	if (zombie) {
		siginfo_t si;

		/* Exited, and left unreaped: WNOWAIT keeps it a zombie. */
		if (waitid(P_PID, (id_t)child, &si, WEXITED | WNOWAIT))
			DIE("waitid: %s", strerror(errno));
		printf("zombie %d\n", child);
	} else if (read(sync[0], &c, 1) != 1) {
		DIE("child did not start");
	}
	close(sync[0]);
	close(sync[1]);
}

int main(int argc, char **argv)
{
	static struct fdset set;
	struct fdr_blk_hdr tmpl, *h;
	struct fdr_blk_owner *own, *ta;
	uint32_t *chunks, *lines;
	uint64_t *recs;
	struct sockaddr_in a = { .sin_family = AF_INET };
	pthread_t th[2];
	const char *libfile = NULL;
	unsigned long extra = 0, uid = 0;
	bool fork_it = false, zombie = false, filter = false;
	unsigned decoys = 0;
	size_t size;
	int lfd, ep[2], opt, c;

	if (argc < 2)
		DIE("usage: fake_block MODE [-n N] [-d DECOYS] [-l LIBFILE] [-u UID] [-F] [-Z] [-S]");
	mode = argv[1];
	if (is("exec") && argc > 2) {
		install_seccomp();
		execvp(argv[2], argv + 2);
		DIE("exec %s: %s", argv[2], strerror(errno));
	}
	optind = 2;
	while ((opt = getopt(argc, argv, "n:d:l:u:FZS")) != -1) {
		if (opt == 'F')
			fork_it = true;
		else if (opt == 'Z')
			zombie = true;
		else if (opt == 'S')
			filter = true;
		else if (opt == 'u')
			uid = strtoul(optarg, NULL, 10);
		else if (opt == 'n')
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
	for (long i = 0; i < (is("single") ? 0 : 2); i++) {
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
			{ 0, 256, 1, 0 }, { 1, 320, 1, 1 }, { 0, 328, 1, 1 },
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

	if (!is("plain") && !is("inactive")) {
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
		h->why_inactive = FDR_WHY_ACTIVE;
		snprintf(h->lib_version, sizeof(h->lib_version), "%s",
			 !strcmp(mode, "escapes") ? "1\033[5m\302\233" : "0.2.0-fake");
		fill_settings(h, !strcmp(mode, "escapes"));
		for (unsigned i = 0; is("disabled") && i < h->nsettings; i++)
			if (!strcmp(h->settings[i].name, "FDRANGE_DISABLE")) {
				snprintf(h->settings[i].value, sizeof(h->settings[i].value), "1");
				h->settings[i].from_env = 1;
			}
		h->base = BASE;
		h->chunk = FDR_CHUNK;
		h->top_chunk = 5;
		h->nowners = 5;
		h->limit = 20000;
		h->nr_open = NR_OPEN;
		h->limit_changes = 1;
		h->policy = 0;  /* auto */
		h->model = FDR_MODEL_ROTATION;
		h->rot_len = 2;
		h->rot_owner[0] = FDR_OWN_FIRST;
		h->rot_owner[1] = FDR_OWN_FIRST + 1;
		h->learned_after = 4;
		h->relearns = 1;
		h->accepted = 17;
		h->observed = 16;
		h->hits = 9;
		h->misses = 1;
		h->realignments = 2;
		h->bound_top = 1024;
		own = (struct fdr_blk_owner *)((char *)h + h->owners_off);
		chunks = (uint32_t *)((char *)h + h->chunks_off);
		lines = (uint32_t *)((char *)h + h->lines_off);
		recs = (uint64_t *)((char *)h + h->recs_off);
		own[FDR_OWN_SPARSE].kind = FDR_KIND_SPARSE;
		own[FDR_OWN_SPARSE].placed = 1;
		own[FDR_OWN_SHARED].kind = FDR_KIND_SHARED;
		own[FDR_OWN_LINES].kind = FDR_KIND_LINES;
		own[FDR_OWN_LINES].chunks = 1;
		own[FDR_OWN_LINES].claims = 1;
		ta = &own[FDR_OWN_FIRST];
		ta->kind = FDR_KIND_THREAD;
		ta->tid = (uint32_t)tids[0];
		ta->placed = 10;
		ta->inplace = 2;
		ta->fallback[FDR_FB_FULL] = 1;
		ta->probes = 3;
		ta->claims = 3;
		ta->chunks = 2;
		ta->lines = 1;
		ta[1].kind = FDR_KIND_THREAD;
		ta[1].tid = (uint32_t)tids[1];
		ta[1].placed = 6;
		ta[1].fallback[FDR_FB_LIMIT] = 2;
		ta[1].fallback[FDR_FB_NEAR] = 1;
		ta[1].probes = 1;
		ta[1].claims = 2;
		ta[1].chunks = 1;
		ta[1].lines = 1;
		chunks[0] = fdr_owner_id(FDR_OWN_FIRST);
		chunks[1] = fdr_owner_id(FDR_OWN_FIRST + 1);
		chunks[2] = fdr_owner_id(FDR_OWN_FIRST);
		chunks[3] = fdr_owner_id(FDR_OWN_SPARSE);
		chunks[4] = fdr_owner_id(FDR_OWN_LINES);
		lines[4 * FDR_LINES_PER_CHUNK] = fdr_owner_id(FDR_OWN_FIRST + 1);  /* 320-327: B's */
		lines[4 * FDR_LINES_PER_CHUNK + 1] = fdr_owner_id(FDR_OWN_FIRST);  /* 328-335: A's */
		for (unsigned i = 0; i < set.n; i++)
			recs[set.fd[i]] = set.pending[i] ? FDR_REC_MAKE(i, 3, 1) : set.tid[i];
		inactive_block(h, own);

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
		else if (is("bad_line"))
			lines[4 * FDR_LINES_PER_CHUNK + 2] = FDR_MAX_OWNERS + 5;
		else if (is("bad_why"))
			h->why_inactive = 9;
		else if (!is("valid") && !is("escapes") && !is("disabled") && !is("config") &&
			 !is("seccomp_late") && !is("limit") && !is("single"))
			DIE("unknown mode '%s'", mode);

		/* Forged blocks, mapped after the real one: the kernel places
		 * them below it, so they come first in /proc/PID/maps. */
		for (unsigned d = 0; d < decoys; d++) {
			struct fdr_blk_hdr *f = map_memfd(size);

			memcpy(f, h, size);
			f->pid = getpid() + 1 + (int)d;
		}
	}
	if (fork_it || zombie)
		fork_child(zombie);
	if (filter)
		install_seccomp();
	if (uid && (setresgid((gid_t)uid, (gid_t)uid, (gid_t)uid) ||
		    setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid)))
		DIE("setresuid %lu: %s", uid, strerror(errno));
	printf("ready %d\n", getpid());
	fflush(stdout);
	for (;;)
		pause();
}
