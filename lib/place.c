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
 * A cursor walks the lines of the chunks the pool has; a line found taken
 * (its connection is still open) makes the pool claim its next chunk, up
 * to FDR_SPARSE_CHUNKS, and the fd goes on that chunk's first line.  So
 * connections that come and go one at a time reuse one chunk, and a burst
 * accepted before the first answer (a client opening all its connections
 * at once) grows the pool by a chunk per 8, one miss each, never packing
 * two on a line while the pool may still grow.  SPARSE_TRIES bounds the
 * search of a full pool; what finds no line goes to the shared pool.
 */
#define SPARSE_TRIES 8

/* The pool's @n-th usable chunk in fd order, FDR_NO_CHUNK if none; with
 * @n = FDR_SPARSE_CHUNKS + 1 the count of them goes to *@have. */
static unsigned sparse_chunk(unsigned n, unsigned *have)
{
	unsigned c = fdr_owner_next_chunk(FDR_OWN_SPARSE, 0), k = 0;

	for (; c != FDR_NO_CHUNK && k < n; k++)
		c = fdr_owner_next_chunk(FDR_OWN_SPARSE, c + 1);
	if (have)
		*have = k;
	return c;
}

static unsigned sparse_grow(struct fdr_blk_owner *ow)
{
	/* Racing accepts may overshoot the cap by one chunk each; the pool
	 * is bounded by the threads that accept, not corrupted. */
	if (__atomic_load_n(&ow->chunks, __ATOMIC_RELAXED) >= FDR_SPARSE_CHUNKS)
		return FDR_NO_CHUNK;
	return fdr_owner_claim_lowest(FDR_OWN_SPARSE);
}

/* @fd copied to @lo exactly: 1 (*nfd set), 0 taken, or -errno. */
static int dup_exact(int fd, unsigned long lo, bool cloexec, struct fdr_blk_owner *ow,
		     unsigned long cap, long *nfd)
{
	if (lo >= cap)
		return 0;
	*nfd = sys_dupfd(fd, (unsigned)lo, cloexec);
	if (*nfd < 0)
		return (int)*nfd;
	if ((unsigned long)*nfd == lo)
		return 1;
	drop(ow, *nfd);
	return 0;
}

static long place_sparse(int fd, bool cloexec, struct fdr_blk_owner *ow, unsigned long cap)
{
	static unsigned cursor;
	unsigned base = fdr_st.cfg.base;
	long nfd = -ENOSPC;

	for (int t = 0; t < SPARSE_TRIES; t++) {
		unsigned have, c;
		int r;

		sparse_chunk(FDR_SPARSE_CHUNKS + 1, &have);
		if (have) {
			unsigned line = __atomic_fetch_add(&cursor, 1, __ATOMIC_RELAXED) % (have * 8);
			c = sparse_chunk(line / 8, NULL);
			if (c == FDR_NO_CHUNK)
				continue;       /* a chunk went above a lowered limit */
			r = dup_exact(fd, fdr_chunk_lo(base, c) + 8UL * (line % 8), cloexec, ow, cap,
				      &nfd);
			if (r)
				return r < 0 ? r : nfd;
		}
		/* Taken, or no chunk yet: a new chunk's first line is free. */
		c = sparse_grow(ow);
		if (c == FDR_NO_CHUNK) {
			if (!have)
				return -ENOSPC;
			continue;
		}
		r = dup_exact(fd, fdr_chunk_lo(base, c), cloexec, ow, cap, &nfd);
		if (r)
			return r < 0 ? r : nfd;
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
