/* SPDX-License-Identifier: MIT */
/*
 * The placement rule: move a new fd into its range with F_DUPFD.
 *
 * F_DUPFD(lo) takes the lowest free fd >= lo atomically under the kernel's
 * file_lock, so it can never close or replace an fd some other thread holds,
 * which dup2() onto a chosen number would.  The cost is exactly two
 * syscalls per created fd (F_DUPFD and the close of the original) and none
 * on any other path.
 */
#include "place.h"
#include "geometry.h"
#include "shm_stats.h"
#include "sys.h"

static unsigned target_range(enum fdr_origin origin, bool *keep)
{
	const struct fdr_config *cfg = &fdr_st.cfg;

	if (origin == FDR_FROM_ACCEPT && cfg->accept == FDR_ACCEPT_ROUNDROBIN)
		return fdr_rr_pick();  /* rr_next, realigned by shm_stats.c */
	/*
	 * Under roundrobin the ranges belong to the connections; the
	 * listener's and other threads' fds stay below BASE so they neither
	 * dilute nor share lines with them.
	 */
	*keep = cfg->accept == FDR_ACCEPT_ROUNDROBIN ||
		(origin == FDR_FROM_OPEN && cfg->open == FDR_OPEN_KEEP);
	return fdr_thread_slot();
}

int fdr_place(int fd, bool cloexec, enum fdr_origin origin)
{
	struct fdr_range_stats *rs;
	unsigned long lo, hi;
	unsigned width, r;
	bool keep = false;
	long nfd;

	if (!fdr_ready())
		return fd;
	r = target_range(origin, &keep);
	rs = fdr_rs(r);
	/* A program that closes stdin and opens /dev/null relies on getting 0. */
	if (keep || fd <= 2) {
		fdr_count(&rs->kept);
		return fd;
	}
	width = __atomic_load_n(&fdr_st.width, __ATOMIC_RELAXED);
	if (!width) {
		fdr_count(&rs->fallback[FDR_FB_LIMIT]);
		return fd;
	}
	lo = fdr_geom_lo(&fdr_st.cfg, width, r);
	/* The cached limit, not getrlimit: no extra syscall per fd. */
	hi = fdr_geom_end(&fdr_st.cfg, width, r, __atomic_load_n(&fdr_st.limit, __ATOMIC_RELAXED),
			  fdr_st.nr_open);
	if ((unsigned long)fd >= lo && (unsigned long)fd < hi) {
		fdr_count(&rs->inplace);
		return fd;
	}
	if (hi <= lo) {
		/* The whole range lies at or above the limit: F_DUPFD would only
		 * fail with EINVAL, so spare the syscall. */
		fdr_count(&rs->fallback[FDR_FB_LIMIT]);
		return fd;
	}
	nfd = sys_dupfd(fd, (unsigned)lo, cloexec);
	if (nfd < 0) {
		/* F_DUPFD: EINVAL for lo >= limit, EMFILE for no free fd below it. */
		fdr_count(&rs->fallback[nfd == -EINVAL || nfd == -EMFILE ?
					FDR_FB_LIMIT : FDR_FB_OTHER]);
		return fd;
	}
	if ((unsigned long)nfd >= hi) {
		sys_close((int)nfd);
		fdr_count(&rs->fallback[FDR_FB_FULL]);
		return fd;
	}
	/* The copy shares the open file; closing the original changes nothing
	 * the caller can see except the number. */
	sys_close(fd);
	fdr_count(&rs->placed);
	return (int)nfd;
}
