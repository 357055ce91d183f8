/* SPDX-License-Identifier: MIT */
/*
 * The placement rule: move a new fd into its owner's chunks with F_DUPFD.
 *
 * F_DUPFD(lo) takes the lowest free fd >= lo atomically under the kernel's
 * file_lock, so it can never close or replace an fd some other thread
 * holds, which dup2() onto a chosen number would.  Where the copy lands
 * says whether there was room: in a chunk of the owner (or one nobody holds,
 * which the owner then claims) it stays and the original is closed; in
 * another owner's chunk it is closed and the next candidate tried.  In the
 * steady state that is one try: 2 syscalls per created fd (F_DUPFD and the
 * close of the original), none on any other path.  Extra tries happen only
 * when the owner's chunks are full, and are counted (probes).
 *
 * Nothing is moved while the process has one thread: there is nobody whose
 * fds could share a cache line with its own, and it then sees exactly the
 * numbers, and the syscalls, it would see without the library.
 */
#include "place.h"
#include "blockmap.h"
#include "geometry.h"
#include "handoff.h"
#include "owners.h"
#include "sys.h"

#define MAX_TRIES 4
#define RECOMPACT 16

/* Close @nfd (a copy that will not be used); count the try. */
static void drop(struct fdr_blk_owner *ow, long nfd)
{
	sys_close((int)nfd);
	fdr_count(&ow->probes);
}

/*
 * One fd per 8-fd line (FDR_OWN_SPARSE, while the hand-off is learned): the
 * copy must land on the first fd of a line; the pool only ever uses those.
 * A cursor walks the pool's FDR_SPARSE_CHUNKS x 8 lines in order, and the
 * pool claims its next chunk when the cursor first reaches it: a burst of
 * up to that many connections, all accepted before the first answer (a
 * client opening its connections at once), gets a fresh line each with no
 * miss.  Once the cursor wraps, lines freed by closed connections are
 * found by trying; SPARSE_TRIES bounds that.
 */
#define SPARSE_LINES (FDR_SPARSE_CHUNKS * 8u)
#define SPARSE_TRIES 8

static long place_sparse(int fd, bool cloexec, struct fdr_blk_owner *ow, unsigned long cap)
{
	static unsigned cursor;
	unsigned base = fdr_st.cfg.base;

	for (int t = 0; t < SPARSE_TRIES; t++) {
		unsigned line = __atomic_fetch_add(&cursor, 1, __ATOMIC_RELAXED) % SPARSE_LINES;
		unsigned want = line / 8, k = 0, c;
		unsigned long lo;
		long nfd;

		/* The want-th chunk of the pool (in fd order), claiming up to it. */
		c = fdr_owner_next_chunk(FDR_OWN_SPARSE, 0);
		while (c != FDR_NO_CHUNK && k < want) {
			c = fdr_owner_next_chunk(FDR_OWN_SPARSE, c + 1);
			k++;
		}
		while (c == FDR_NO_CHUNK &&
		       __atomic_load_n(&ow->chunks, __ATOMIC_RELAXED) < FDR_SPARSE_CHUNKS) {
			c = fdr_owner_claim_lowest(FDR_OWN_SPARSE);
			if (c == FDR_NO_CHUNK)
				return -ENOSPC;
			/* Another thread's claim may have come first: count again. */
			c = fdr_owner_next_chunk(FDR_OWN_SPARSE, 0);
			for (k = 0; c != FDR_NO_CHUNK && k < want; k++)
				c = fdr_owner_next_chunk(FDR_OWN_SPARSE, c + 1);
		}
		if (c == FDR_NO_CHUNK)
			continue;       /* the pool is full and smaller than want */
		lo = fdr_chunk_lo(base, c) + 8UL * (line % 8);
		if (lo >= cap)
			continue;
		nfd = sys_dupfd(fd, (unsigned)lo, cloexec);
		if (nfd < 0)
			return nfd;
		if ((unsigned long)nfd == lo)
			return nfd;
		drop(ow, nfd);
	}
	return -ENOSPC;
}

/*
 * A copy of @fd in @o's chunks, or -errno: -ENOSPC when there is no room,
 * F_DUPFD's error otherwise.
 */
static long place_in(int fd, bool cloexec, unsigned o, unsigned long cap)
{
	struct fdr_blk_owner *ow = fdr_owner(o);
	unsigned base = fdr_st.cfg.base, hint = __atomic_load_n(&ow->hint, __ATOMIC_RELAXED);
	unsigned c = hint ? hint - 1 : fdr_owner_next_chunk(o, 0);
	bool from_lowest = !hint;
	/*
	 * The hint (the chunk of the owner's last fd) spares probes through
	 * full chunks, but after a burst it sits high while closes have freed
	 * the owner's low chunks.  Every RECOMPACT-th placement starts from
	 * the owner's lowest chunk instead, going back to the hint if that
	 * only finds another owner's chunk: at most one extra try per
	 * RECOMPACT fds, and fd numbers sink back after a burst.
	 */
	unsigned back = FDR_NO_CHUNK;
	int tries = MAX_TRIES;

	if (hint && !(__atomic_load_n(&ow->placed, __ATOMIC_RELAXED) % RECOMPACT)) {
		unsigned low = fdr_owner_next_chunk(o, 0);

		if (low != FDR_NO_CHUNK && low < hint - 1) {
			back = hint - 1;
			c = low;
			tries += 2;  /* the look at the low chunks and the way back are extra */
		}
	}

	for (int t = 0; t < tries; t++) {
		unsigned long lo;
		long nfd, x;

		if (c == FDR_NO_CHUNK) {
			/* Before the owner grows, any room below its hint. */
			if (!from_lowest) {
				from_lowest = true;
				c = fdr_owner_next_chunk(o, 0);
			}
			if (c == FDR_NO_CHUNK)
				c = fdr_owner_claim_lowest(o);
			if (c == FDR_NO_CHUNK)
				return -ENOSPC;
		}
		lo = fdr_chunk_lo(base, c);
		if (lo >= cap) {
			/* A hint above a lowered limit: try from the lowest again. */
			c = from_lowest ? FDR_NO_CHUNK : fdr_owner_next_chunk(o, 0);
			from_lowest = true;
			if (c == FDR_NO_CHUNK)
				c = fdr_owner_claim_lowest(o);
			if (c == FDR_NO_CHUNK)
				return -ENOSPC;
			continue;
		}
		nfd = sys_dupfd(fd, (unsigned)lo, cloexec);
		if (nfd < 0)
			return nfd;
		x = fdr_chunk_of(base, nfd);
		if ((unsigned long)nfd < cap && fdr_chunk_owner((unsigned)x) == o + 1) {
			__atomic_store_n(&ow->hint, (unsigned)x + 1, __ATOMIC_RELAXED);
			return nfd;
		}
		/* A chunk nobody holds: the owner grows, but only once its
		 * chunks below the hint were tried too (closes free room there). */
		if ((unsigned long)nfd < cap && from_lowest && !fdr_chunk_owner((unsigned)x) &&
		    fdr_owner_claim(o, (unsigned)x)) {
			__atomic_store_n(&ow->hint, (unsigned)x + 1, __ATOMIC_RELAXED);
			return nfd;
		}
		drop(ow, nfd);
		if ((unsigned long)nfd >= cap)
			return -ENOSPC;
		if (back != FDR_NO_CHUNK && (unsigned)x < back) {
			c = back;
			back = FDR_NO_CHUNK;
			continue;
		}
		back = FDR_NO_CHUNK;
		if (!from_lowest && !fdr_chunk_owner((unsigned)x)) {
			from_lowest = true;
			c = fdr_owner_next_chunk(o, 0);
			continue;
		}
		/* Everything from lo to nfd is taken: the owner's next chunk above. */
		c = fdr_owner_next_chunk(o, (unsigned)x + 1);
	}
	return -ENOSPC;
}

/* The rule itself, once the process is known to have threads and a block. */
static int move(int fd, bool cloexec, enum fdr_origin origin)
{
	struct fdr_blk_owner *ow;
	unsigned long cap;
	unsigned o;
	long nfd, c;

	o = origin == FDR_FROM_ACCEPT ? fdr_handoff_owner() : fdr_owner_self();
	if (o == FDR_NO_OWNER)
		return fd;
	ow = fdr_owner(o);
	/*
	 * Under roundrobin the chunks belong to the connections; the other
	 * fds stay where the kernel puts them, below BASE as a rule.  A
	 * program that closes stdin and opens /dev/null relies on getting 0.
	 */
	if (fd <= 2 || (origin != FDR_FROM_ACCEPT && fdr_st.cfg.accept == FDR_ACCEPT_ROUNDROBIN) ||
	    (origin == FDR_FROM_OPEN && fdr_st.cfg.open == FDR_OPEN_KEEP)) {
		fdr_count(&ow->kept);
		return fd;
	}
	/* The cached limit, not getrlimit: no extra syscall per fd. */
	cap = __atomic_load_n(&fdr_st.cap, __ATOMIC_RELAXED);
	c = fdr_chunk_of(fdr_st.cfg.base, fd);
	if (c >= 0 && (unsigned long)fd < cap && o != FDR_OWN_SPARSE &&
	    fdr_chunk_owner((unsigned)c) == o + 1) {
		fdr_count(&ow->inplace);
		return fd;
	}
	nfd = o == FDR_OWN_SPARSE ? place_sparse(fd, cloexec, ow, cap) : -ENOSPC;
	if (o == FDR_OWN_SPARSE && nfd == -ENOSPC) {
		/* Learning took its share of the fd space: pack the rest. */
		o = FDR_OWN_SHARED;
		ow = fdr_owner(o);
	}
	if (o != FDR_OWN_SPARSE)
		nfd = place_in(fd, cloexec, o, cap);
	if (nfd < 0) {
		/* F_DUPFD: EINVAL for lo >= limit, EMFILE for no free fd below it. */
		fdr_count(&ow->fallback[nfd == -ENOSPC ? FDR_FB_FULL :
					nfd == -EINVAL || nfd == -EMFILE ? FDR_FB_LIMIT :
					FDR_FB_OTHER]);
		return fd;
	}
	/* The copy shares the open file; closing the original changes nothing
	 * the caller can see except the number. */
	sys_close(fd);
	fdr_count(&ow->placed);
	return (int)nfd;
}

int fdr_place(int fd, bool cloexec, enum fdr_origin origin)
{
	if (!fdr_ready() || fdr_tls_forking)
		return fd;
	if (fdr_single_threaded()) {
		struct fdr_blk_hdr *h = __atomic_load_n(&fdr_st.hdr, __ATOMIC_ACQUIRE);

		if (h)
			fdr_count(&h->single_kept);
		return fd;
	}
	/* A fork child makes its own block now, at its first placement. */
	if (!__atomic_load_n(&fdr_st.hdr, __ATOMIC_ACQUIRE) && !fdr_block_for_child())
		return fd;
	fd = move(fd, cloexec, origin);
	if (origin != FDR_FROM_ACCEPT)
		fdr_handoff_created(fd);
	return fd;
}
