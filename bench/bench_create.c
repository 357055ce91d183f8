/* SPDX-License-Identifier: MIT */
/*
 * Creation cost: ns per created-and-closed fd for open, socket, accept
 * (TCP loopback), pipe and eventfd, on 1 and 2 threads, with and without
 * the library; and the floor the library cannot go below, the two syscalls
 * of the move (a plain F_DUPFD + close pair), measured the same way.
 *
 * Besides each call (placed by the library on side B), each call is also
 * made through libc's own definition, behind the library's back, and moved
 * by hand with the same two raw syscalls ("+move").  That splits the
 * library's added cost into the kernel's part (side A: X+move - X) and the
 * library's own code (side B: X - X+move, same process, same fd numbers).  The operations take turns in chunks of 64
 * fds (24 for accept); each thread's figure is the median over its chunks,
 * which resists bursts of interference on a shared machine.
 *
 * --count=N --call=NAME (with --child=0 or 1, no driver) runs N
 * create-and-close iterations untimed, for counting syscalls under strace
 * (bench/syscount.sh); --hold=N first opens N fds and keeps them, so that
 * the created fds are numbered above N (past FDRANGE_THRESHOLD).
 */
#include "ab.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

enum call { C_OPEN, C_SOCKET, C_ACCEPT, C_PIPE, C_EVENTFD, C_NCALLS };

static const char *const call_names[C_NCALLS] = { "open", "socket", "accept", "pipe", "eventfd" };

/* The measured operations: each call through libc (placed by the library
 * on side B), each call made raw and moved by hand, and the floor. */
#define NOPS (2 * C_NCALLS + 1)
#define OP_FLOOR (2 * C_NCALLS)

static long count = -1;          /* --count: strace mode */
static unsigned hold;            /* --hold: fds held open before counting */
static int only = -1;            /* --call */
static unsigned max_threads = 2; /* --threads */

/*
 * Connections per accept batch: below the listen backlog, so every connect
 * completes without waiting for an accept; and few enough that, with two
 * threads' batches open, the accepted fd still lands below FDRANGE_BASE
 * (64): one the kernel puts inside the thread's range is left in place and
 * would measure nothing.
 */
#define BATCH 24
#define CHUNK 64
#define MAX_CHUNKS 4096

struct worker {
	unsigned index;
	double seconds;
	long iterations;        /* count mode: this many of call `only`, untimed */
	unsigned lo;            /* where fds are moved by hand: the thread's range on B */
	int src, lsn;
	struct sockaddr_in sa;
	int sample[C_NCALLS];
	/* ns per fd of each chunk of each op: the median resists bursts of
	 * interference (other tenants, other helpers' builds) */
	unsigned n[NOPS];
	double chunk[NOPS][MAX_CHUNKS];
};

static void fd_close(int fd)
{
	if (close(fd))
		ab_die("close(%d): %s", fd, strerror(errno));
}

/* Client sockets bypass the library (raw syscall): only accept is measured. */
static int raw_client(const struct sockaddr_in *sa)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	int fd = (int)syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		ab_die("socket: %s", strerror(errno));
	/* Close with RST: no TIME_WAIT, so long runs cannot exhaust ports. */
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)))
		ab_die("connect: %s", strerror(errno));
	return fd;
}

static int listener(struct sockaddr_in *sa)
{
	socklen_t len = sizeof(*sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)sa, sizeof(*sa)) || listen(fd, 2 * BATCH) ||
	    getsockname(fd, (struct sockaddr *)sa, &len))
		ab_die("listener: %s", strerror(errno));
	return fd;
}

/*
 * libc's own definitions, behind the library's back: the by-hand variant
 * enters the kernel through the same libc code (cancellation-point
 * handling included) as the library's wrappers do.
 */
static struct {
	int (*open)(const char *, int, ...);
	int (*socket)(int, int, int);
	int (*accept)(int, struct sockaddr *, socklen_t *);
	int (*pipe)(int *);
	int (*eventfd)(unsigned, int);
} libc;

static void find_libc(void)
{
	void *h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);

	if (!h)
		ab_die("libc.so.6: %s", dlerror());
	libc.open = (int (*)(const char *, int, ...))dlsym(h, "open");
	libc.socket = (int (*)(int, int, int))dlsym(h, "socket");
	libc.accept = (int (*)(int, struct sockaddr *, socklen_t *))dlsym(h, "accept");
	libc.pipe = (int (*)(int *))dlsym(h, "pipe");
	libc.eventfd = (int (*)(unsigned, int))dlsym(h, "eventfd");
	if (!libc.open || !libc.socket || !libc.accept || !libc.pipe || !libc.eventfd)
		ab_die("libc.so.6 lacks a creation call");
}

/* What the library does, by hand and with the same raw syscalls (lib/sys.h):
 * F_DUPFD into the range, close the original. */
static int move(const struct worker *w, int fd)
{
	int nfd = (int)syscall(SYS_fcntl, fd, F_DUPFD, w->lo);

	if (nfd < 0 || syscall(SYS_close, fd))
		ab_die("F_DUPFD %u: %s", w->lo, strerror(errno));
	return nfd;
}

/* One create-and-close of @c; by hand: libc's call plus move().  Returns the fds made. */
static unsigned create_close(struct worker *w, enum call c, bool by_hand)
{
	int fd, p[2];

	switch (c) {
	case C_OPEN:
		fd = by_hand ? libc.open("/dev/null", O_RDONLY) : open("/dev/null", O_RDONLY);
		break;
	case C_SOCKET:
		fd = by_hand ? libc.socket(AF_INET, SOCK_STREAM, 0) : socket(AF_INET, SOCK_STREAM, 0);
		break;
	case C_ACCEPT:
		fd = by_hand ? libc.accept(w->lsn, NULL, NULL) : accept(w->lsn, NULL, NULL);
		break;
	case C_EVENTFD:
		fd = by_hand ? libc.eventfd(0, 0) : eventfd(0, 0);
		break;
	case C_PIPE:
		if (by_hand ? libc.pipe(p) : pipe(p))
			ab_die("pipe: %s", strerror(errno));
		if (by_hand) {
			p[0] = move(w, p[0]);
			p[1] = move(w, p[1]);
		}
		if (!by_hand)
			w->sample[c] = p[1];
		fd_close(p[0]);
		fd_close(p[1]);
		return 2;
	default:
		ab_die("bad call");
	}
	if (fd < 0)
		ab_die("%s: %s", call_names[c], strerror(errno));
	if (by_hand)
		fd = move(w, fd);
	else
		w->sample[c] = fd;
	fd_close(fd);
	return 1;
}

/* One chunk of @op (not the floor): returns ns, counts fds in *fds. */
static uint64_t run_chunk(struct worker *w, unsigned op, unsigned long *fds)
{
	int clients[BATCH];
	uint64_t t0, ns;

	*fds = 0;
	if (op / 2 == C_ACCEPT) {
		/* Connect a batch (untimed), time accepting and closing it. */
		for (unsigned i = 0; i < BATCH; i++)
			clients[i] = raw_client(&w->sa);
		t0 = ab_now_ns();
		for (unsigned i = 0; i < BATCH; i++)
			*fds += create_close(w, C_ACCEPT, op % 2);
		ns = ab_now_ns() - t0;
		for (unsigned i = 0; i < BATCH; i++)
			close(clients[i]);
		return ns;
	}
	t0 = ab_now_ns();
	for (int i = 0; i < CHUNK; i++)
		*fds += create_close(w, (enum call)(op / 2), op % 2);
	return ab_now_ns() - t0;
}

static uint64_t floor_chunk(struct worker *w, unsigned long *fds)
{
	uint64_t t0 = ab_now_ns();

	for (int i = 0; i < CHUNK; i++) {
		int nfd = (int)syscall(SYS_fcntl, w->src, F_DUPFD, w->lo);

		if (nfd < 0 || syscall(SYS_close, nfd))
			ab_die("F_DUPFD: %s", strerror(errno));
	}
	*fds = CHUNK;
	return ab_now_ns() - t0;
}

static bool op_wanted(unsigned op)
{
	return only < 0 || op == OP_FLOOR || (int)(op / 2) == only;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	int lo, hi;
	uint64_t end;

	/* On B, move by hand to where the library moves: the same fd numbers. */
	w->lo = ab_lib_range(&lo, &hi) == 0 ? (unsigned)lo : 64 + 512 * w->index;
	/* The floor's source: any open fd will do, this one bypasses the library. */
	w->src = (int)syscall(SYS_eventfd2, 0, 0);
	if (w->src < 0)
		ab_die("eventfd: %s", strerror(errno));
	w->lsn = listener(&w->sa);
	for (int c = 0; c < C_NCALLS; c++)
		w->sample[c] = -1;

	if (w->iterations >= 0) {
		/* strace mode: exactly N of one call through libc, nothing else */
		for (long i = 0; i < w->iterations; i++) {
			int client = only == C_ACCEPT ? raw_client(&w->sa) : -1;

			create_close(w, (enum call)only, false);
			if (client >= 0)
				close(client);
		}
	} else {
		/*
		 * The ops take turns chunk by chunk, so that drift on a noisy
		 * machine lands on all of them alike; the first round of chunks
		 * warms caches and grows the fd table, and is not counted.  X
		 * and X+move swap places every round: whichever runs second
		 * finds the caches warm from the first.
		 */
		end = 0;
		for (unsigned round = 0; !end || ab_now_ns() < end; round++) {
			for (unsigned i = 0; i < NOPS; i++) {
				unsigned op = i == OP_FLOOR ? i : i ^ (round & 1);
				unsigned long fds;
				uint64_t ns;

				if (!op_wanted(op))
					continue;
				ns = op == OP_FLOOR ? floor_chunk(w, &fds) : run_chunk(w, op, &fds);
				if (round && w->n[op] < MAX_CHUNKS)
					w->chunk[op][w->n[op]++] = (double)ns / (double)fds;
			}
			if (!round)
				end = ab_now_ns() + (uint64_t)(w->seconds * 1e9 *
							       (only < 0 ? NOPS : 3));
		}
	}
	close(w->src);
	close(w->lsn);
	return NULL;
}

static void op_key(char *key, size_t len, unsigned op, unsigned t)
{
	if (op == OP_FLOOR)
		snprintf(key, len, "floor/%ut", t);
	else
		snprintf(key, len, "%s%s/%ut", call_names[op / 2], op % 2 ? "+move" : "", t);
}

static int child(const struct ab_ctx *ctx)
{
	static struct worker w[2];
	char key[48];

	find_libc();
	if (count >= 0) {
		memset(w, 0, sizeof(w[0]));
		w[0].iterations = count;
		if (only < 0)
			only = C_EVENTFD;
		for (unsigned i = 0; i < hold; i++)
			if (open("/dev/null", O_RDONLY | O_CLOEXEC) < 0)
				ab_die("--hold: open: %s", strerror(errno));
		work(&w[0]);
		return 0;
	}
	for (unsigned t = 1; t <= max_threads; t++) {
		memset(w, 0, sizeof(w));
		for (unsigned i = 0; i < t; i++) {
			w[i].seconds = ctx->seconds;
			w[i].iterations = -1;
			w[i].index = i;
		}
		ab_threads(t, work, w, sizeof(w[0]));
		for (unsigned op = 0; op < NOPS; op++) {
			double ns = 0;

			if (!op_wanted(op))
				continue;
			for (unsigned i = 0; i < t; i++) {
				if (!w[i].n[op])
					ab_die("op %u: nothing measured", op);
				ns += ab_stats_of(w[i].chunk[op], w[i].n[op]).median;
			}
			op_key(key, sizeof(key), op, t);
			ab_emit(key, ns / t);
		}
		if (t == 1)
			for (int c = 0; c < C_NCALLS; c++)
				if (op_wanted(2 * (unsigned)c))
					ab_note("%s: fds land at %d%s", call_names[c], w[0].sample[c],
						ctx->preload ? "" : " (lowest free)");
	}
	return 0;
}

static void summary(const struct ab_ctx *ctx)
{
	(void)ctx;
	printf("where the added cost goes (ns per fd; medians of per-round differences):\n"
	       "  B-A      the library's whole cost (two processes: includes their drift)\n"
	       "  kernel   the move done by hand, without the library: X+move - X, on side A\n"
	       "  library  the library's own code: X - X+move, both on side B, same fd numbers\n"
	       "  floor    one F_DUPFD + close pair, on side A\n");
	printf("  %-12s %22s %8s %8s %8s\n", "", "B-A [min .. max]", "kernel", "library", "floor");
	for (unsigned t = 1; t <= max_threads; t++) {
		char fk[48], key[48], mk[48], cell[64];
		struct ab_stat fl;

		snprintf(fk, sizeof(fk), "floor/%ut", t);
		fl = ab_stat(fk, 0);
		for (int c = 0; c < C_NCALLS; c++) {
			op_key(key, sizeof(key), 2 * (unsigned)c, t);
			op_key(mk, sizeof(mk), 2 * (unsigned)c + 1, t);
			struct ab_cost cost = ab_cost_split(key, mk);

			if (!cost.whole.present)
				continue;
			snprintf(cell, sizeof(cell), "%.0f [%.0f .. %.0f]", cost.whole.median,
				 cost.whole.min, cost.whole.max);
			printf("  %-12s %22s %8.0f %8.0f %8.0f\n", key, cell, cost.kernel.median,
			       cost.library.median, fl.median);
		}
	}
}

static int option(const char *name, const char *value)
{
	if (!strcmp(name, "count")) {
		count = (long)ab_ulong(name, value, 0, 100000000);
		return 0;
	}
	if (!strcmp(name, "hold")) {
		hold = (unsigned)ab_ulong(name, value, 0, 4096);
		return 0;
	}
	if (!strcmp(name, "threads")) {
		max_threads = (unsigned)ab_ulong(name, value, 1, 2);
		return 0;
	}
	if (!strcmp(name, "call")) {
		for (int c = 0; c < C_NCALLS; c++)
			if (value && !strcmp(value, call_names[c])) {
				only = c;
				return 0;
			}
		ab_die("--call=%s: expected open, socket, accept, pipe or eventfd",
		       value ? value : "");
	}
	return -1;
}

static const struct ab_side sides[] = {
	{ "A", "no library", false, { NULL }, NULL },
	/* Every fd moved: the move's cost is what this measures (with the
	 * default threshold, fds this low would not be moved at all). */
	{ "B", "LD_PRELOAD=libfdrange.so, FDRANGE_THRESHOLD=0 (every fd moved)", true,
	  { "FDRANGE_THRESHOLD=0", NULL }, NULL },
};

int main(int argc, char **argv)
{
	static const struct ab_bench b = {
		.name = "bench_create",
		.what = "cost of creating and closing one fd, 1 and 2 threads; X+move: the call made "
			"raw and moved by hand",
		.unit = "ns per fd; for 2 threads, per fd on each thread",
		.sides = sides, .nsides = 2, .rounds = 7, .seconds = 0.05,
		.usage = "[--threads=1|2] [--call=NAME] [--count=N [--hold=N] (strace mode, with --child=0|1)]",
		.option = option, .child = child, .summary = summary,
	};

	return ab_main(argc, argv, &b);
}
