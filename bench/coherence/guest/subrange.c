/* An experiment, not the product (its record:
 * docs/results/2026-12-05-coherence-what-is-left.md, "Placement inside the
 * embedded table"; why it is not built: docs/design.md): memcached's
 * connections in small fd ranges inside the 64-fd table that files_struct
 * embeds, one range per worker, on the fd-range kernel (patch 0002).
 * libfdrange's chunks are 64 fds wide and start above 64, so placing them
 * grows the table, whose bitmaps then leave file_lock's cache line; this
 * asks what placement saves when they stay.
 *
 * The main thread accepts every connection and memcached hands connection k
 * to worker k mod t, starting with worker 0 (shared/background/notes.md):
 * before each accept the main thread aims its own range at the worker that
 * will serve the connection. SUB_BASE (27: above memcached's own fds at
 * -t 4 or less, and on a cache-line boundary of fd_array, which starts 40
 * bytes into file_lock's line on the range kernel (168 in files_struct,
 * after open_fd_count): lines hold fds 3-10, 11-18, ..., 27-34, ...),
 * SUB_N (workers), SUB_WIDTH (default (64 - base) / n, in whole 8-fd
 * lines). A range that is full falls back to the kernel's lowest free fd.
 *
 * A bad setting or a refused prctl prints a "COH FAIL" line, which fails
 * the boot (run.sh), and leaves memcached's numbering alone.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#define PR_SET_FD_RANGE 0x46440001
#define EMBEDDED 64	/* NR_OPEN_DEFAULT on 64-bit */

static unsigned int next_worker, base = 27, width, nworkers = 4;
static int off;	/* a bad setting or a refused prctl: place nothing */
static int (*real_accept4)(int, struct sockaddr *, socklen_t *, int);

/* *@v = @name's value if it is set; 0, after a "COH FAIL" line, when it is
 * not a number in [@lo, @hi]. */
static int setting(const char *name, unsigned int lo, unsigned int hi, unsigned int *v)
{
	const char *s = getenv(name);
	char *end;
	unsigned long n;

	if (!s)
		return 1;
	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || end == s || *end || n < lo || n > hi) {
		fprintf(stderr, "COH FAIL subrange: %s=%s: want a number in %u..%u\n", name, s, lo, hi);
		return 0;
	}
	*v = (unsigned int)n;
	return 1;
}

__attribute__((constructor)) static void init(void)
{
	real_accept4 = (int (*)(int, struct sockaddr *, socklen_t *, int))dlsym(RTLD_NEXT, "accept4");
	if (!setting("SUB_BASE", 3, EMBEDDED - 8, &base) || !setting("SUB_N", 1, 7, &nworkers)) {
		off = 1;
		return;
	}
	width = (EMBEDDED - base) / nworkers / 8 * 8;
	if (!setting("SUB_WIDTH", 1, EMBEDDED, &width))
		off = 1;
	else if (!width || base + width * nworkers > EMBEDDED) {
		fprintf(stderr, "COH FAIL subrange: %u ranges of %u from fd %u do not fit in the "
			"embedded %u fds\n", nworkers, width, base, EMBEDDED);
		off = 1;
	}
}

int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	unsigned int lo = base + width * next_worker;
	int r, e = errno;

	/* floor 3, min_open 0: the range applies from the first fd */
	if (!off && prctl(PR_SET_FD_RANGE, lo, lo + width, 3, 0)) {
		fprintf(stderr, "COH FAIL subrange: prctl(PR_SET_FD_RANGE, %u, %u, 3, 0): %s\n",
			lo, lo + width, strerror(errno));
		off = 1;
	}
	errno = e;
	r = real_accept4(fd, addr, len, flags);
	if (r >= 0)
		next_worker = (next_worker + 1) % nworkers;
	return r;
}

int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	return accept4(fd, addr, len, 0);
}
