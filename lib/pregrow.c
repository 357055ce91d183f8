/* SPDX-License-Identifier: MIT */
/*
 * Growing the kernel's fd table in advance (FDRANGE_PREGROW).
 *
 * The kernel's fd table starts with 64 entries and grows, to a power of
 * two, when an fd above its size is allocated.  Once threads share the
 * table, expand_fdtable() waits for an RCU grace period (synchronize_rcu)
 * before the old table may be freed, because other threads may be reading
 * it without a lock: the first fd placed above the table's size then stalls
 * its thread for milliseconds (bench/bench_growth.c measures it;
 * docs/benchmarks.md).  A single-threaded process grows without
 * that wait.  Placement starts at BASE (64), just above the embedded table,
 * so a threaded program under the library needs a bigger table sooner than
 * it would plain: the library grows it once, far enough for the chunks
 * most servers need (when: below).
 *
 * Bounds: never beyond the soft RLIMIT_NOFILE, and a table of at most
 * FDRANGE_PREGROW entries (default 1024, enough for the compact chunks of
 * most servers; the kernel
 * spends about 8.25 bytes per entry: an 8-byte file pointer plus bits in
 * the open, close-on-exec and full-word bitmaps; 65536 entries = 528 KiB).
 * The growth itself is the kernel's own: F_DUPFD of a spare fd to the
 * highest number needed, then close; F_DUPFD takes the lowest free fd at or
 * above it and never replaces an fd in use, as dup2 onto a number would.
 *
 * At start-up (FDRANGE_THRESHOLD=0 only): not done when threads already
 * exist (the growth would stall now, and maybe for nothing) or when the
 * table is already big enough (after exec the table is kept).  A child of
 * fork() gets a table only as big as its open fds need, and grows again on
 * demand (with a threshold, at its own first move past it: the flag that
 * says "grown" lives in the page a child does not inherit).
 *
 * With FDRANGE_THRESHOLD (the default 64) nothing is moved until the
 * process holds every fd below it, and a grown table would not be free:
 * above 64 entries the bitmaps leave the line of file_lock and next_fd for
 * lines of their own, which every open and close then writes as well
 * (docs/design.md, "Which fds are moved: the threshold").  So the
 * table is grown at start-up only with the threshold off; otherwise once,
 * inside the first move of an fd numbered past it: the process is past the embedded
 * table by then, as it would be without the library, and one growth with
 * its one grace period replaces the several the chunks' claims would make.
 */
#include "pregrow.h"
#include "global.h"
#include "proc.h"
#include "status.h"
#include "sys.h"

void fdr_pregrow(void)
{
	unsigned long top = fdr_pregrow_top(fdr_st.cfg.pregrow, fdr_st.limit, fdr_st.nr_open);
	long fd, nfd;

	if (!top || fdr_st.cfg.threshold)
		return;
	/* The start-up read of /proc/self/status gives both the thread count
	 * and the table size (FDSize). */
	if (fdr_status_value("Threads:") != 1 || fdr_status_value("FDSize:") > (long)top)
		return;
	/* O_PATH: a spare fd with no side effects, on any file system. */
	fd = sys_openat(AT_FDCWD, "/", O_PATH | O_CLOEXEC, 0);
	if (fd < 0)
		return;
	nfd = sys_dupfd((int)fd, (unsigned)top, 1);
	if (nfd >= 0)
		sys_close((int)nfd);
	sys_close((int)fd);
}

void fdr_pregrow_late(int fd)
{
	unsigned long top;
	long nfd;

	/* Called on every move: once grown, one load of a word that stays
	 * shared, no store (an exchange would write its line on each move). */
	if (__atomic_load_n(&fdr_p->grown, __ATOMIC_RELAXED))
		return;
	top = fdr_pregrow_top(fdr_st.cfg.pregrow, __atomic_load_n(&fdr_st.limit, __ATOMIC_RELAXED),
			      fdr_st.nr_open);
	if (!top || (unsigned long)fd >= top ||
	    __atomic_exchange_n(&fdr_p->grown, 1, __ATOMIC_RELAXED))
		return;
	nfd = sys_dupfd(fd, (unsigned)top, 1);
	if (nfd >= 0)
		sys_close((int)nfd);
}
