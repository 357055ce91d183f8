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
 * when the owner's chunks are full, and are counted (probes); after a try
 * that found no room at all, the owner's next few fds get none (backoff.c).
 *
 * A thread's first fds go to one 8-fd line of its own (lines.c); it gets
 * chunks only once it fills that line.  Every move respects the do-no-harm
 * bound (bound.c): no fd below FD_SETSIZE moved above it, no chunk claimed
 * beyond twice the fds the process holds, nothing moved near the limit.
 *
 * Nothing is moved while the process has one thread: there is nobody whose
 * fds could share a cache line with its own, and it then sees exactly the
 * numbers, and the syscalls, it would see without the library.
 */
#include "place.h"
#include "backoff.h"
#include "blockmap.h"
#include "bound.h"
#include "geometry.h"
#include "handoff.h"
#include "krange.h"
#include "lines.h"
#include "moves.h"
#include "owners.h"
#include "pregrow.h"
#include "pstate.h"
#include "sys.h"

#define MAX_TRIES 4
#define RECOMPACT 16

/* Close @nfd (a copy that will not be used); count the try. */
static void drop(struct fdr_blk_owner *ow, long nfd)
{
	sys_close((int)nfd);
	fdr_count(&ow->probes);
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

/*
 * One fd per 8-fd line (FDR_OWN_SPARSE, while the hand-off is learned): the
 * copy must land on the first fd of a line; the pool only ever uses those.
 * The lines are taken in fd order, the next pool line above the last one
 * used (wrapping to the pool's lowest), so connections accepted one after
 * another get increasing numbers, as lowest-free numbering gives them.  A
 * line found taken (its connection is still open) makes the pool claim its
 * next chunk, up to FDR_SPARSE_CHUNKS, and the fd goes on that chunk's
 * first line: a burst accepted before the first answer grows the pool by a
 * chunk per 8, never packing two on a line while it may still grow.  At
 * most two tries; what finds no line goes to the shared pool.  The
 * cursor is fdr_ps.sparse_cursor (pstate.h).
 */
static int sparse_try(int fd, bool cloexec, struct fdr_blk_owner *ow, unsigned long cap,
		      unsigned line, long *nfd)
{
	int r = dup_exact(fd, fdr_line_lo(fdr_st.cfg.base, line), cloexec, ow, cap, nfd);

	if (r > 0)
		__atomic_store_n(&fdr_ps.sparse_cursor, line + 1, __ATOMIC_RELAXED);
	return r;
}

static long place_sparse(int fd, bool cloexec, struct fdr_blk_owner *ow, unsigned long cap,
			 bool *bounded)
{
	unsigned at = __atomic_load_n(&fdr_ps.sparse_cursor, __ATOMIC_RELAXED);
	unsigned c = fdr_owner_next_chunk(FDR_OWN_SPARSE, at / FDR_LINES_PER_CHUNK, cap);
	long nfd = -ENOSPC;
	int r;

	if (c == FDR_NO_CHUNK) {
		c = fdr_owner_next_chunk(FDR_OWN_SPARSE, 0, cap);
		at = 0;
	}
	if (c != FDR_NO_CHUNK) {
		unsigned line = c == at / FDR_LINES_PER_CHUNK ? at : c * FDR_LINES_PER_CHUNK;

		r = sparse_try(fd, cloexec, ow, cap, line, &nfd);
		if (r)
			return r < 0 ? r : nfd;
	}
	/* Taken, or no chunk yet: a new chunk's first line is free.  Racing
	 * accepts may overshoot the cap by one chunk each; the pool is
	 * bounded by the threads that accept, not corrupted. */
	if (__atomic_load_n(&ow->chunks, __ATOMIC_RELAXED) >= FDR_SPARSE_CHUNKS)
		return -ENOSPC;
	c = fdr_owner_claim_lowest(FDR_OWN_SPARSE, cap, bounded);
	if (c == FDR_NO_CHUNK)
		return -ENOSPC;
	r = sparse_try(fd, cloexec, ow, cap, c * FDR_LINES_PER_CHUNK, &nfd);
	if (r)
		return r < 0 ? r : nfd;
	return -ENOSPC;
}

/*
 * A copy of @fd in line @line, which the owner @ow holds, or -EAGAIN when
 * the line is full (the owner then goes on to chunks), or F_DUPFD's error.
 */
static long place_line(int fd, bool cloexec, struct fdr_blk_owner *ow, unsigned line)
{
	unsigned long lo = fdr_line_lo(fdr_st.cfg.base, line);
	long nfd = sys_dupfd(fd, (unsigned)lo, cloexec);

	if (nfd < 0)
		return nfd;
	if ((unsigned long)nfd < lo + 8)
		return nfd;
	drop(ow, nfd);
	return -EAGAIN;
}

/*
 * Before owner @ow grows by a chunk: the line *@line it holds, if it has
 * room (closes freed it after a burst).  An fd there, or -EAGAIN.  The
 * owner's next fds go there first, until it is full again.  *@line is
 * FDR_NO_LINE afterwards: one try per placement.
 */
static long before_growing(int fd, bool cloexec, struct fdr_blk_owner *ow, unsigned *line)
{
	long nfd;

	if (*line == FDR_NO_LINE)
		return -EAGAIN;
	nfd = place_line(fd, cloexec, ow, *line);
	*line = FDR_NO_LINE;  /* tried */
	if (nfd >= 0)
		__atomic_store_n(&ow->hint_line, 1, __ATOMIC_RELAXED);
	return nfd;
}

/*
 * A copy of @fd in @o's chunks (or, before they grow, in its line @line),
 * or -errno: -ENOSPC when there is no room, F_DUPFD's error otherwise.
 */
static long place_in(int fd, bool cloexec, unsigned o, unsigned long cap, unsigned line,
		     bool *bounded)
{
	struct fdr_blk_owner *ow = fdr_owner(o);
	unsigned base = fdr_st.cfg.base, hint = __atomic_load_n(&ow->hint, __ATOMIC_RELAXED);
	unsigned c = hint ? hint - 1 : fdr_owner_next_chunk(o, 0, cap);
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
		unsigned low = fdr_owner_next_chunk(o, 0, cap);

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
				c = fdr_owner_next_chunk(o, 0, cap);
			}
			if (c == FDR_NO_CHUNK) {
				nfd = before_growing(fd, cloexec, ow, &line);
				if (nfd != -EAGAIN)
					return nfd;
				c = fdr_owner_claim_lowest(o, cap, bounded);
			}
			if (c == FDR_NO_CHUNK)
				return -ENOSPC;
		}
		lo = fdr_chunk_lo(base, c);
		if (lo + FDR_CHUNK_FDS > cap) {
			/* A hint above a lowered cap: try from the lowest again. */
			c = from_lowest ? FDR_NO_CHUNK : fdr_owner_next_chunk(o, 0, cap);
			from_lowest = true;
			if (c == FDR_NO_CHUNK)
				c = fdr_owner_claim_lowest(o, cap, bounded);
			if (c == FDR_NO_CHUNK)
				return -ENOSPC;
			continue;
		}
		nfd = sys_dupfd(fd, (unsigned)lo, cloexec);
		if (nfd < 0)
			return nfd;
		x = fdr_chunk_of(base, nfd);
		if ((unsigned long)nfd < cap && fdr_chunk_owner((unsigned)x) == fdr_owner_id(o)) {
			__atomic_store_n(&ow->hint, (unsigned)x + 1, __ATOMIC_RELAXED);
			return nfd;
		}
		/* A chunk nobody holds: the owner grows, but only once its
		 * chunks below the hint, and its line, were tried too (closes
		 * free room there). */
		if ((unsigned long)nfd < cap && from_lowest && !fdr_chunk_owner((unsigned)x)) {
			if (line != FDR_NO_LINE) {
				drop(ow, nfd);
				nfd = before_growing(fd, cloexec, ow, &line);
				if (nfd != -EAGAIN)
					return nfd;
				t--;  /* the line was an extra try: the free chunk again */
				continue;
			}
			if (fdr_owner_claim(o, (unsigned)x, cap)) {
				__atomic_store_n(&ow->hint, (unsigned)x + 1, __ATOMIC_RELAXED);
				return nfd;
			}
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
			c = fdr_owner_next_chunk(o, 0, cap);
			continue;
		}
		/* Everything from lo to nfd is taken: the owner's next chunk above. */
		c = fdr_owner_next_chunk(o, (unsigned)x + 1, cap);
	}
	return -ENOSPC;
}

/* Is @fd already where owner @o's fds go? */
static bool in_place(int fd, unsigned o, unsigned long cap)
{
	long c = fdr_chunk_of(fdr_st.cfg.base, fd);
	unsigned own;

	if (c < 0 || (unsigned long)fd >= cap || o == FDR_OWN_SPARSE)
		return false;
	own = fdr_chunk_owner((unsigned)c);
	return own == fdr_owner_id(o) ||
	       (own == fdr_owner_id(FDR_OWN_LINES) &&
		fdr_line_owner((unsigned)(fd - fdr_st.cfg.base) / 8) == fdr_owner_id(o));
}

/* A copy of @fd where owner *@o's fds go; *@o may become the shared pool. */
static long place(int fd, bool cloexec, unsigned *o, unsigned long cap, bool *bounded)
{
	struct fdr_blk_owner *ow = fdr_owner(*o);
	unsigned line = FDR_NO_LINE;
	bool chunks;
	long nfd;

	if (*o == FDR_OWN_SPARSE) {
		nfd = place_sparse(fd, cloexec, ow, cap, bounded);
		if (nfd != -ENOSPC)
			return nfd;
		/* Learning took its share of the fd space: pack the rest. */
		*o = FDR_OWN_SHARED;
		ow = fdr_owner(*o);
	}
	/* A thread without chunks, or whose line has room again: its line
	 * first, where it uses one (fdr_line_used()). */
	chunks = __atomic_load_n(&ow->chunks, __ATOMIC_RELAXED) != 0;
	if (__atomic_load_n(&ow->kind, __ATOMIC_RELAXED) == FDR_KIND_THREAD &&
	    fdr_line_used(chunks)) {
		line = !chunks || __atomic_load_n(&ow->line, __ATOMIC_RELAXED) ?
		       fdr_line_of(*o, cap, bounded) : FDR_NO_LINE;
		if (line != FDR_NO_LINE && (!chunks || __atomic_load_n(&ow->hint_line, __ATOMIC_RELAXED))) {
			nfd = place_line(fd, cloexec, ow, line);
			if (nfd != -EAGAIN)
				return nfd;
			/* Full: the owner goes on to (or back to) its chunks. */
			__atomic_store_n(&ow->hint_line, 0, __ATOMIC_RELAXED);
			line = FDR_NO_LINE;
		}
	}
	return place_in(fd, cloexec, *o, cap, line, bounded);
}

/*
 * Lowest-free numbering gave a number below FDRANGE_THRESHOLD: the process
 * does not hold every fd below it yet, and with so few fds a move costs
 * more than it saves (docs/design.md, "Which fds are moved").  The block
 * only learns that this happened, once: a count per fd would be a write
 * to a line every thread shares, for every fd of a small program.
 */
static void few(struct fdr_blk_hdr *h)
{
	if (h && !__atomic_load_n(&h->few_seen, __ATOMIC_RELAXED))
		__atomic_store_n(&h->few_seen, 1, __ATOMIC_RELAXED);
}

/* The rule itself, once the process is known to have threads and a block. */
static int move(int fd, bool cloexec, enum fdr_origin origin)
{
	unsigned self = fdr_owner_self(), o, target;
	struct fdr_blk_owner *me, *ow;
	unsigned long cap;
	bool bounded = false;
	unsigned why;
	long nfd;

	if (self == FDR_NO_OWNER)
		return fd;
	o = origin == FDR_FROM_ACCEPT ? fdr_handoff_owner(self) : self;
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
	/* An accepted fd below the threshold (fdr_place() returned the
	 * others already): its hand-off was predicted and recorded above, so
	 * the learner learns from connections it does not move. */
	if ((unsigned)fd < fdr_st.cfg.threshold) {
		few(fdr_p->hdr);
		return fd;
	}
	/*
	 * FDRANGE_LOCAL=keep, the default: once the settled model is local, a
	 * connection its accepting thread serves stays wherever the kernel put
	 * it, on the dup path.  There each move takes file_lock twice more
	 * (F_DUPFD, the close) and writes the fd table's bitmaps twice more,
	 * lines every thread writes at its own accept rate; in the coherence model
	 * that costs more than the connection's own line saves for this shape
	 * (docs/design.md, "Servers that accept in every thread").  The kernel
	 * numbers it lowest-free: below BASE while there are holes there,
	 * above it in a hole of whichever chunk or line has one (any owner's,
	 * or none's), as without the library.  Its record was made in
	 * fdr_handoff_owner(): the learner goes on checking the model with it,
	 * and a model that stops being local moves again.  Counted kept even
	 * where that happens to be its own line or chunk: every connection
	 * accepted after the model settled and numbered from the threshold
	 * up is (test/prog/handoff_is_learned.c).
	 */
	if (origin == FDR_FROM_ACCEPT && o == self && fdr_st.cfg.local == FDR_LOCAL_KEEP &&
	    fdr_st.cfg.accept == FDR_ACCEPT_AUTO && !fdr_st.kernel_range && fdr_handoff_is_local()) {
		fdr_count(&ow->kept);
		return fd;
	}
	/* The cached limit, not getrlimit: no extra syscall per fd. */
	if (fdr_near_limit(fd, __atomic_load_n(&fdr_st.limit, __ATOMIC_RELAXED))) {
		fdr_count(&ow->fallback[FDR_FB_NEAR]);
		return fd;
	}
	cap = fdr_bound_cap(fd, __atomic_load_n(&fdr_st.cap, __ATOMIC_RELAXED));
	if (in_place(fd, o, cap)) {
		fdr_count(&ow->inplace);
		fdr_backoff_end(o);
		/* Where the kernel put it (krange.c): let the range sink, now and then. */
		if (fdr_st.kernel_range && o == self && origin != FDR_FROM_ACCEPT &&
		    !(__atomic_load_n(&ow->inplace, __ATOMIC_RELAXED) % RECOMPACT))
			fdr_krange_sink(self, fd, cap);
		return fd;
	}
	if (fdr_backoff_skip(o, cap, &why)) {
		fdr_count(&ow->fallback[why]);
		if (why == FDR_FB_BOUND)
			fdr_bound_skipped();
		return fd;
	}
	me = fdr_owner(self);
	if (!fdr_move_begin(me)) {
		/* Not a sandbox: a creation near the limit is retrying. */
		if (__atomic_load_n(&fdr_st.active, __ATOMIC_RELAXED))
			fdr_count(&ow->fallback[FDR_FB_NEAR]);
		return fd;
	}
	if (fdr_st.cfg.threshold)
		fdr_pregrow_late(fd);
	target = o;
	nfd = place(fd, cloexec, &o, cap, &bounded);
	ow = fdr_owner(o);
	if (nfd < 0) {
		fdr_move_end(me);
		/* F_DUPFD: EINVAL for lo >= limit, EMFILE for no free fd below it.
		 * No room where the bound (or FD_SETSIZE) stopped us: "bound". */
		bounded |= nfd == -ENOSPC && cap < __atomic_load_n(&fdr_st.cap, __ATOMIC_RELAXED);
		why = nfd == -ENOSPC ? (bounded ? FDR_FB_BOUND : FDR_FB_FULL) :
		      nfd == -EINVAL || nfd == -EMFILE ? FDR_FB_LIMIT : FDR_FB_OTHER;
		fdr_count(&ow->fallback[why]);
		if (nfd == -ENOSPC)
			fdr_backoff_failed(target, cap, why);
		return fd;
	}
	fdr_backoff_end(target);
	/* The copy shares the open file; closing the original changes nothing
	 * the caller can see except the number. */
	sys_close(fd);
	if (fdr_st.kernel_range) {
		/* The kernel's range did not place it: maybe the range is
		 * not what this thread believes (krange.c). */
		fdr_krange_missed(fd);
		/* It follows the thread's own fds to where they now go. */
		if (o == self && origin != FDR_FROM_ACCEPT)
			fdr_krange_follow(self, (int)nfd);
	}
	fdr_move_end(me);
	fdr_count(&ow->placed);
	return (int)nfd;
}

/*
 * After every accept, wherever move() left the fd: the kernel's range of
 * the accepting thread points at where the next accepted fd goes (or at
 * nothing), so that fd is born in place (krange.c).
 */
static void aim(void)
{
	unsigned self = fdr_owner_self();

	if (self != FDR_NO_OWNER)
		fdr_krange_aim(self);
}

int fdr_place(int fd, bool cloexec, enum fdr_origin origin)
{
	if (fdr_t.forking)
		return fd;
	if (fdr_single_threaded()) {
		struct fdr_blk_hdr *h = __atomic_load_n(&fdr_p->hdr, __ATOMIC_ACQUIRE);

		if (h)
			fdr_count(&h->single_kept);
		return fd;
	}
	/*
	 * Below the threshold a created fd costs nothing more: no owner, no
	 * gettid, no block for a fork child.  Only a record an accept left
	 * for this number is forgotten, as for any new fd.  Accepted fds go
	 * on, for the hand-off learner (move()).
	 */
	if ((unsigned)fd < fdr_st.cfg.threshold && origin != FDR_FROM_ACCEPT) {
		struct fdr_blk_hdr *h = __atomic_load_n(&fdr_p->hdr, __ATOMIC_ACQUIRE);

		if (h) {
			few(h);
			fdr_handoff_created(fd);
		}
		return fd;
	}
	/* A fork child makes its own block now, at its first placement. */
	if (!__atomic_load_n(&fdr_p->hdr, __ATOMIC_ACQUIRE) && !fdr_block_for_child())
		return fd;
	fd = move(fd, cloexec, origin);
	if (origin != FDR_FROM_ACCEPT)
		fdr_handoff_created(fd);
	else if (fdr_st.kernel_range)
		aim();
	return fd;
}
