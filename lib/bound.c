/* SPDX-License-Identifier: MIT */
/*
 * The do-no-harm bound.  Per-thread chunks cost fd numbers: every owner's
 * last chunk is partly empty.  For a few event-loop threads with many
 * connections that is noise; for a thread per connection it made fd
 * numbers grow with the threads (200 connections: 13504 instead of 406)
 * and broke select() programs.  So, for every move:
 *
 *  1. A kernel fd below FD_SETSIZE is never moved to FD_SETSIZE or above
 *     (fdr_bound_cap): a process that holds fewer than 1024 fds gets
 *     kernel numbers below 1024 (the lowest free number is at most the
 *     count of open fds), so all its fds stay below 1024, as plain.
 *  2. No chunk is claimed that ends above max(FD_SETSIZE, 2 x open + 64),
 *     open being the fds the process holds, counted in /proc/thread-self/fd
 *     (fdr_bound_allows, count_open()).  Counting is a syscall, and on
 *     kernels before 6.2 a directory read, O(open), so it is done only
 *     when a claim would reach past the last count's bound: a
 *     count that raised the bound by an eighth or more lets the next one
 *     follow at once (the fd space grows geometrically between them);
 *     after one that did not, the next waits for open/64 + 1 refused
 *     claims, so that counting costs O(1) per placement.
 *  3. Near the soft limit, nothing is moved (fdr_near_limit).
 * FDRANGE_BOUND=off drops 1 and 2, for a program that never uses select():
 * its user asks for fd numbers that grow with the threads (a line of the
 * fd table's bitmaps per thread, docs/design.md); 3 stays.
 * An fd that the bound stops keeps the kernel's number: the library
 * degrades to plain numbering, counted as fallbacks "bound" and "near".
 * Chunks claimed while the bound was higher stay usable: the fd numbers
 * of a process whose connections come and go sink back by the placement
 * rule (place.c), not by force.
 */
#include "bound.h"
#include "proc.h"
#include "pstate.h"
#include "sys.h"

#include <dirent.h>
#include <sys/stat.h>

/* Where the counting stands is fdr_ps.bound (pstate.h). */

/*
 * The fds this process has open now, or -errno.  Since Linux 6.2 the size
 * of /proc/PID/fd is that count: the weight of the open_fds bitmap, read
 * under RCU.  Reading the directory instead takes and drops a reference
 * on every open file from this thread, so the refcount line of every
 * connection moves here and back to the thread that serves it (what that
 * cost memcached in the coherence model:
 * docs/results/2026-12-05-coherence-open-fd-count.md).  So stat first, and count the entries
 * only where stat gives no usable size: an error (statx refused by a
 * sandbox, or missing), no STATX_SIZE in the answer, size 0 (kernels
 * before 6.2), or a size of 2^31 or more, which no fd count can be; and
 * always where the headers lack statx.
 */
static long count_open(void)
{
	char buf[4096] __attribute__((aligned(8)));
	long fd, n, count = 0;
#if defined(SYS_statx) && defined(STATX_SIZE)
	struct statx stx;

	if (SYS_CALL(SYS_statx, AT_FDCWD, "/proc/thread-self/fd", 0, STATX_SIZE, &stx) == 0 &&
	    (stx.stx_mask & STATX_SIZE) && stx.stx_size > 0 && stx.stx_size < (1ull << 31))
		return (long)stx.stx_size;
#endif
	fd = sys_openat(AT_FDCWD, "/proc/thread-self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (fd == -ENOENT)
		fd = sys_openat(AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	while ((n = SYS_CALL(SYS_getdents64, (int)fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			const struct dirent64 *d = (const struct dirent64 *)(buf + off);

			count += d->d_name[0] != '.';
			off += d->d_reclen ? d->d_reclen : n;
		}
	}
	sys_close((int)fd);
	/* The directory's own fd is not the program's. */
	return n < 0 ? n : count - 1;
}

static bool recount(unsigned long end)
{
	struct fdr_blk_hdr *h = __atomic_load_n(&fdr_p->hdr, __ATOMIC_ACQUIRE);
	unsigned long top = __atomic_load_n(&fdr_st.bound_top, __ATOMIC_RELAXED);
	unsigned long prev = h ? __atomic_load_n(&h->open_counted, __ATOMIC_RELAXED) : 0;
	long n;
	bool ok;

	if (__atomic_exchange_n(&fdr_ps.bound.counting, 1, __ATOMIC_ACQUIRE))
		return false;
	if (!__atomic_load_n(&fdr_ps.bound.last_helped, __ATOMIC_RELAXED) &&
	    __atomic_add_fetch(&fdr_ps.bound.refused, 1, __ATOMIC_RELAXED) < prev / 64 + 1) {
		__atomic_store_n(&fdr_ps.bound.counting, 0, __ATOMIC_RELEASE);
		return false;
	}
	__atomic_store_n(&fdr_ps.bound.refused, 0, __ATOMIC_RELAXED);
	n = count_open();
	if (n >= 0) {
		unsigned long want = 2 * (unsigned long)n + 64;

		if (want < FDR_FD_SETSIZE)
			want = FDR_FD_SETSIZE;
		/* Progress only if it raised the bound by an eighth: a bound
		 * crept up fd by fd would be counted for at every claim. */
		__atomic_store_n(&fdr_ps.bound.last_helped, want >= top + top / 8, __ATOMIC_RELAXED);
		top = want;
		__atomic_store_n(&fdr_st.bound_top, top, __ATOMIC_RELAXED);
		if (h) {
			__atomic_store_n(&h->open_counted, (uint64_t)n, __ATOMIC_RELAXED);
			__atomic_store_n(&h->bound_top, top, __ATOMIC_RELAXED);
			fdr_count(&h->counts);
		}
	} else {
		__atomic_store_n(&fdr_ps.bound.last_helped, false, __ATOMIC_RELAXED);
	}
	ok = end <= top;
	__atomic_store_n(&fdr_ps.bound.counting, 0, __ATOMIC_RELEASE);
	return ok;
}

void fdr_bound_skipped(void)
{
	if (!__atomic_load_n(&fdr_ps.bound.last_helped, __ATOMIC_RELAXED))
		__atomic_add_fetch(&fdr_ps.bound.refused, 1, __ATOMIC_RELAXED);
}

bool fdr_bound_allows(unsigned long end)
{
	if (end <= __atomic_load_n(&fdr_st.bound_top, __ATOMIC_RELAXED) ||
	    !fdr_bound_on())
		return true;
	return recount(end);
}
