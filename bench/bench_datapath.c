/* SPDX-License-Identifier: MIT */
/*
 * Data path: the library wraps only calls that create fds, so reads and
 * writes on fds it has already placed must cost exactly what they cost
 * without it (ratio 1.00 within noise).  Measured on a pipe, a UNIX
 * socketpair and a plain lookup (fcntl F_GETFL), from a second thread so
 * the kernel takes its multi-threaded fget path on both sides.  The three
 * take turns in chunks of 256; the figure is the median chunk.
 *
 * The child also checks, with dladdr(), which object each data-path name
 * resolves to in this process: libc, never the library; and that the
 * creation calls do resolve to the library on side B.
 */
#include "ab.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum op { OP_PIPE, OP_UNIX, OP_GETFL, OP_NR };

static const char *const op_names[OP_NR] = { "pipe-write+read", "unix-send+recv", "fcntl-getfl" };

#define CHUNK 256
#define MAX_CHUNKS 4096

struct job {
	double seconds;
	int pipe[2], sock[2];
	unsigned n[OP_NR];
	double chunk[OP_NR][MAX_CHUNKS];  /* ns per iteration of each chunk */
};

static void op_once(const struct job *j, enum op op, char *buf, size_t len)
{
	switch (op) {
	case OP_PIPE:
		if (write(j->pipe[1], buf, len) != (ssize_t)len ||
		    read(j->pipe[0], buf, len) != (ssize_t)len)
			ab_die("pipe: %s", strerror(errno));
		break;
	case OP_UNIX:
		if (send(j->sock[0], buf, len, 0) != (ssize_t)len ||
		    recv(j->sock[1], buf, len, 0) != (ssize_t)len)
			ab_die("socketpair: %s", strerror(errno));
		break;
	default:
		if (fcntl(j->sock[0], F_GETFL) < 0)
			ab_die("fcntl: %s", strerror(errno));
	}
}

/* The ops take turns chunk by chunk; the first round warms up. */
static void *run(void *arg)
{
	struct job *j = arg;
	char buf[64] = { 0 };
	uint64_t end = 0;

	for (unsigned round = 0; !end || ab_now_ns() < end; round++) {
		for (int op = 0; op < OP_NR; op++) {
			uint64_t t0 = ab_now_ns();

			for (int i = 0; i < CHUNK; i++)
				op_once(j, (enum op)op, buf, sizeof(buf));
			if (round && j->n[op] < MAX_CHUNKS)
				j->chunk[op][j->n[op]++] = (double)(ab_now_ns() - t0) / CHUNK;
		}
		if (!round)
			end = ab_now_ns() + (uint64_t)(j->seconds * 1e9 * OP_NR);
	}
	return NULL;
}

/* The basename of the object holding @p, or "?". */
static const char *object_of(void *p)
{
	Dl_info info;
	const char *slash;

	if (!p || !dladdr(p, &info) || !info.dli_fname)
		return "?";
	slash = strrchr(info.dli_fname, '/');
	return slash ? slash + 1 : info.dli_fname;
}

/* Where @name resolves for this process's own calls. */
static const char *provider(const char *name)
{
	return object_of(dlsym(RTLD_DEFAULT, name));
}

static void check_symbols(const struct ab_ctx *ctx)
{
	static const char *const datapath[] = {
		"read", "write", "readv", "writev", "recv", "send", "recvfrom", "sendto",
		"recvmsg", "sendmsg", "close", "dup", "dup2", "dup3", "fcntl", "ioctl",
		"epoll_wait", "epoll_pwait", "poll", "select", "splice", NULL,
	};
	static const char *const creators[] = {
		"open", "openat", "socket", "accept", "accept4", "pipe", "pipe2", "eventfd",
		"socketpair", "epoll_create1", NULL,
	};
	char line[512];
	size_t len = 0;
	unsigned n;
	void *lib = NULL;

	if (ctx->preload) {
		/* The library itself, found through one of its own API names. */
		Dl_info info;
		void *api = dlsym(RTLD_DEFAULT, "fdrange_active");

		if (api && dladdr(api, &info) && info.dli_fname)
			lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
		if (!lib)
			ab_die("cannot find the preloaded library's handle");
	}
	for (n = 0; datapath[n]; n++) {
		const char *p = provider(datapath[n]);

		if (strstr(p, "fdrange"))
			ab_die("data-path call %s resolves to %s", datapath[n], p);
		/* Nor may the library define it (it would be interposed elsewhere). */
		if (lib && strstr(object_of(dlsym(lib, datapath[n])), "fdrange"))
			ab_die("the library defines data-path call %s", datapath[n]);
	}
	ab_note("%u data-path names (read, write, recv, send, close, dup*, fcntl, epoll_wait, "
		"...) all resolve to %s%s", n, provider("read"),
		lib ? "; the library defines none of them" : "");
	for (unsigned i = 0; creators[i]; i++) {
		if (lib && !strstr(object_of(dlsym(lib, creators[i])), "fdrange"))
			ab_die("the library does not define creation call %s", creators[i]);
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s", i ? " " : "",
					creators[i]);
		if (len >= sizeof(line))
			break;
	}
	/* Under a sanitizer its runtime comes first and calls on to the library. */
	ab_note("creation calls (%s) resolve to %s%s", line, provider("socket"),
		lib ? "; the library defines all of them" : "");
	if (lib)
		dlclose(lib);
}

static int child(const struct ab_ctx *ctx)
{
	static struct job j;

	check_symbols(ctx);
	/* Created through the wrapped calls: placed on side B. */
	if (pipe(j.pipe) || socketpair(AF_UNIX, SOCK_STREAM, 0, j.sock))
		ab_die("pipe/socketpair: %s", strerror(errno));
	ab_note("pipe fds %d,%d; socketpair fds %d,%d", j.pipe[0], j.pipe[1], j.sock[0],
		j.sock[1]);
	j.seconds = ctx->seconds;
	ab_threads(1, run, &j, sizeof(j));
	for (int op = 0; op < OP_NR; op++)
		ab_emit(op_names[op], ab_stats_of(j.chunk[op], j.n[op]).median);
	return 0;
}

static const struct ab_side sides[] = {
	{ "A", "no library", false, { NULL }, NULL },
	/* Every fd moved, so that the data path runs on placed fds. */
	{ "B", "LD_PRELOAD=libfdrange.so, FDRANGE_THRESHOLD=0 (every fd moved)", true,
	  { "FDRANGE_THRESHOLD=0", NULL }, NULL },
};

int main(int argc, char **argv)
{
	static const struct ab_bench b = {
		.name = "bench_datapath",
		.what = "data path on fds the library placed: must be unchanged (B/A = 1.00)",
		.unit = "ns per iteration, 64-byte messages, one thread besides main",
		.sides = sides, .nsides = 2, .rounds = 15, .seconds = 0.05,
		.child = child,
	};

	return ab_main(argc, argv, &b);
}
