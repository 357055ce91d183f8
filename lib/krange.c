/* SPDX-License-Identifier: MIT */
/*
 * Placement by the kernel, where it can: with PR_SET_FD_RANGE a thread
 * tells the kernel once where its fds go, and from then on the kernel's
 * own allocation puts them there.  No F_DUPFD, no close, no temporary slot
 * in the shared table: the fd is written once, where it stays.
 *
 * The range is only a preference.  The kernel takes the lowest free fd in
 * it and the lowest free fd as before when it is full, so it can never
 * clobber an fd, and everything the dup path decides still holds: place.c
 * sees each new fd as before, finds it already where its owner's fds go
 * (counted "inplace"), and moves it only when it landed elsewhere (the
 * range was full, the chunk changed hands, the bound moved).  After such a
 * move the range follows the fd to its new place, so a thread pays one
 * prctl when its destination changes, not per fd.
 *
 * Accepted fds go where the hand-off learner predicts.  A server that
 * serves where it accepts (model local) has its range there already.  One
 * that deals connections out (rotation, memcached) aims the acceptor's
 * range, after each accept, at the chunk of the thread predicted for the
 * next one: one prctl per accept, and the accepted fd is born in place.
 * Aiming after the accept, not before it, spends nothing on the accepts
 * that find no connection (EAGAIN).  What the acceptor creates for itself
 * meanwhile lands in that chunk and is moved back by the dup path.
 *
 * A range is one chunk (or line): after a burst, the kernel would go on
 * filling the chunk of the last move while closes freed the owner's lower
 * chunks.  So every RECOMPACT-th fd found in place, the range goes back
 * to the owner's lowest chunk (a prctl, at most one per RECOMPACT fds); if
 * that is full, the kernel's lowest free fd comes back and the dup path
 * moves it, as place.c's own recompaction would have tried it.  So a
 * thread that keeps its lowest chunk full (long-lived fds) pays a move and
 * a second prctl every RECOMPACT fds.  No back-off: it would delay the
 * sinking after a burst, which select() programs rely on
 * (test/prog/fds_sink_back_after_a_burst.c).
 *
 * The kernel uses a range only while the process holds FDRANGE_THRESHOLD
 * fds or more (it counts them, under its own lock): a process that closed
 * down to a few fds gets lowest-free numbers again, as on the dup path,
 * with no syscall.  Unlike the dup path, which can only read the count
 * from the kernel's lowest free number (all fds below the threshold open),
 * a process that holds many keeps its holes below the threshold: a
 * connection closed there is not replaced there, between the threads'
 * ranges, but in its thread's range.
 *
 * A thread that accepted aims its range at its connections, not at its own
 * fds (which the dup path moves).  If it goes on creating fds of its own
 * and accepts no more (it accepted a control connection once, then went to
 * work), its range follows its own fds again after ACCEPT_IDLE of them had
 * to be moved (or ACCEPT_IDLE x RECOMPACT were found in place).
 *
 * The kernel drops the range of a new task (fork, clone) and at exec; a
 * fork child's words are renewed (proc.c), so the two agree.  A vfork
 * child (or a clone sharing memory) runs on its parent's thread words: what
 * it sets there is the child's range, not the parent's.  So the words are a
 * belief.  When the kernel numbered a thread's fd outside the range the
 * thread believes it has, the next range is set even if it looks unchanged:
 * at most one prctl per such fd, none per fd born in the range.  The drop
 * before a seccomp filter trusts no belief: it is always made, unless the
 * library has stopped already.  Like every move, a prctl is made only
 * inside fdr_move_begin(), or in that drop: never in a sandbox.
 */
#include "krange.h"
#include "bound.h"
#include "geometry.h"
#include "handoff.h"
#include "lines.h"
#include "moves.h"
#include "owners.h"
#include "sys.h"

#include <errno.h>

/* Own fds of an accepting thread that had to be moved, with no accept
 * between, before its range follows its own fds again. */
#define ACCEPT_IDLE 16

#ifndef PR_SET_FD_RANGE
#define PR_SET_FD_RANGE 0x46440001
#define PR_GET_FD_RANGE 0x46440002
#endif

bool fdr_krange_probe(bool *groups)
{
	unsigned r[6];

	*groups = false;
	/* Under roundrobin or open=keep some fds stay where the kernel numbers
	 * them; a range would number those too. */
	if (fdr_st.cfg.kernel == FDR_KERNEL_OFF || !fdr_st.active ||
	    fdr_st.cfg.accept == FDR_ACCEPT_ROUNDROBIN || fdr_st.cfg.open == FDR_OPEN_KEEP ||
	    __atomic_load_n(&fdr_st.sandboxed, __ATOMIC_SEQ_CST))
		return false;
	/* EINVAL on a kernel without it, booted with fd_range=off, or of the
	 * series' first version, which had no min_open (and so no fifth
	 * value): its floor alone would keep holes below the threshold
	 * filled. */
	if (sys_prctl(PR_GET_FD_RANGE, (unsigned long)r, 5, 0, 0))
		return false;
	/* The sixth value (patch 0007) says whether the kernel has the fast
	 * paths on; a kernel before it refuses six values with EINVAL. */
	*groups = sys_prctl(PR_GET_FD_RANGE, (unsigned long)r, 6, 0, 0) == 0 && r[5] == 1;
	return true;
}

/*
 * The floor of a range [@lo, @hi): the kernel uses the range only while
 * every fd below it is open, so it enforces, with no syscall, the rules the
 * dup path applies to the kernel's lowest-free number whatever the process
 * holds: fds 0-2 are never taken from the program (a program that closes
 * stdin and opens /dev/null relies on getting 0), and no fd the kernel
 * would number below FD_SETSIZE is given a number at or above it
 * (select(); FDRANGE_BOUND=off drops that rule).  The threshold is the
 * range's min_open instead (min_open()).
 */
static unsigned floor_of(unsigned lo, unsigned hi)
{
	unsigned f = hi > FDR_FD_SETSIZE && fdr_bound_on() ? FDR_FD_SETSIZE : 3;

	return f < lo ? f : lo;
}

/* The fds the process must hold before the kernel uses a range: nothing is
 * placed for a process below FDRANGE_THRESHOLD. */
static unsigned min_open(void)
{
	return fdr_st.cfg.threshold;
}

/* A range across FD_SETSIZE would have a floor above its start (none with
 * FDRANGE_BOUND=off). */
static unsigned clamp_hi(unsigned lo, unsigned hi)
{
	return lo < FDR_FD_SETSIZE && hi > FDR_FD_SETSIZE && fdr_bound_on() ?
	       FDR_FD_SETSIZE : hi;
}

/* Is [@lo, @hi) the range the kernel holds for this thread already? */
static bool holds(const struct fdr_thread *t, unsigned lo, unsigned hi)
{
	return !t->range_stale && t->range_lo == lo && t->range_hi == clamp_hi(lo, hi);
}

static void set(unsigned o, unsigned lo, unsigned hi)
{
	struct fdr_thread *t = fdr_self();

	hi = clamp_hi(lo, hi);
	if (holds(t, lo, hi))
		return;
	/* [0, 0): no range, which the kernel takes only as all four 0. */
	if (sys_prctl(PR_SET_FD_RANGE, lo, hi, hi ? floor_of(lo, hi) : 0, hi ? min_open() : 0) < 0) {
		/* Not expected once probed.  The kernel may still hold the
		 * previous range: drop it, and the dup path goes on alone. */
		if (t->range_hi || t->range_stale)
			sys_prctl(PR_SET_FD_RANGE, 0, 0, 0, 0);
		t->range_lo = 0;
		t->range_hi = 0;
		t->range_stale = 0;
		return;
	}
	t->range_lo = lo;
	t->range_hi = hi;
	t->range_stale = 0;
	fdr_count32(&fdr_owner(o)->range_sets);
}

/* Where owner @o's next fd goes, or false: its line, else its hint chunk. */
static bool dest(unsigned o, unsigned long cap, unsigned *lo, unsigned *hi)
{
	struct fdr_blk_owner *ow = fdr_owner(o);
	unsigned base = fdr_st.cfg.base, line, hint;

	if (o == FDR_OWN_SPARSE)
		return false;  /* one fd per line: no range fits */
	line = __atomic_load_n(&ow->line, __ATOMIC_RELAXED);
	if (line && (!__atomic_load_n(&ow->chunks, __ATOMIC_RELAXED) ||
		     (__atomic_load_n(&ow->hint_line, __ATOMIC_RELAXED) &&
		      fdr_line_used(true))) &&
	    fdr_line_owner(line - 1) == fdr_owner_id(o)) {
		*lo = (unsigned)fdr_line_lo(base, line - 1);
		*hi = *lo + 8;
		return *hi <= cap;
	}
	hint = __atomic_load_n(&ow->hint, __ATOMIC_RELAXED);
	if (!hint || fdr_chunk_owner(hint - 1) != fdr_owner_id(o))
		return false;
	*lo = (unsigned)fdr_chunk_lo(base, hint - 1);
	*hi = *lo + FDR_CHUNK_FDS;
	return *hi <= cap;
}

void fdr_krange_drop(void)
{
	struct fdr_thread *t = &fdr_t;

	/* Whatever the words say (a vfork child may have written them): one
	 * prctl per filter install.  None once the library has stopped: a
	 * filter may be in force then (TSYNC) and forbid it; the thread's
	 * range then stays, as its other threads' ranges do. */
	if (!fdr_st.kernel_range || __atomic_load_n(&fdr_st.sandboxed, __ATOMIC_SEQ_CST))
		return;
	sys_prctl(PR_SET_FD_RANGE, 0, 0, 0, 0);
	t->range_lo = 0;
	t->range_hi = 0;
	t->range_stale = 0;
}

void fdr_krange_missed(int fd)
{
	struct fdr_thread *t = fdr_self();

	/* Born in the believed range, the fd proves the belief, and was moved
	 * for whose it is.  With no range believed, a move is the dup path's
	 * ordinary work (learning, no prediction): no prctl for it either. */
	if (t->range_hi && ((unsigned)fd < t->range_lo || (unsigned)fd >= t->range_hi))
		t->range_stale = 1;
}

/*
 * Does the calling thread's range still serve its accepts?  Ticks the
 * count of own fds since its last accept (the one the caller acts on).  A
 * signal handler that accepts between the load and the store of the tick
 * is lost: one tick too many, a reset a little early, then the next aim.
 */
static bool still_accepting(void)
{
	struct fdr_thread *t = fdr_self();

	if (!t->accepting)
		return false;
	if (++t->accepting <= ACCEPT_IDLE + 1)
		return true;
	t->accepting = 0;
	return false;
}

void fdr_krange_follow(unsigned self, int fd)
{
	unsigned base = fdr_st.cfg.base, lo, hi;
	long c = fdr_chunk_of(base, fd);

	/* An accepting thread's range is aimed at its next connection. */
	if (!fdr_st.kernel_range || c < 0 || still_accepting())
		return;
	if (fdr_chunk_owner((unsigned)c) == fdr_owner_id(FDR_OWN_LINES)) {
		lo = base + (unsigned)(fd - base) / 8 * 8;
		hi = lo + 8;
	} else {
		lo = (unsigned)fdr_chunk_lo(base, (unsigned)c);
		hi = lo + FDR_CHUNK_FDS;
	}
	set(self, lo, hi);
}

void fdr_krange_sink(unsigned self, int fd, unsigned long cap)
{
	struct fdr_blk_owner *me = fdr_owner(self);
	unsigned low, lo;
	long c = fdr_chunk_of(fdr_st.cfg.base, fd);

	if (!fdr_st.kernel_range || c < 0 || still_accepting())
		return;
	low = fdr_owner_next_chunk(self, 0, cap);
	if (low == FDR_NO_CHUNK || low >= (unsigned long)c || !fdr_move_begin(me))
		return;
	lo = (unsigned)fdr_chunk_lo(fdr_st.cfg.base, low);
	set(self, lo, lo + FDR_CHUNK_FDS);
	fdr_move_end(me);
}

void fdr_krange_aim(unsigned self)
{
	struct fdr_blk_owner *me = fdr_owner(self);
	unsigned o, lo = 0, hi = 0;
	unsigned long cap;

	if (!fdr_st.kernel_range)
		return;
	fdr_self()->accepting = 1;
	o = fdr_handoff_next(self);
	cap = __atomic_load_n(&fdr_st.cap, __ATOMIC_RELAXED);
	/* Nowhere to aim: no range, so the kernel's lowest free fd, as
	 * without it. */
	if (o == FDR_NO_OWNER || !dest(o, cap, &lo, &hi))
		lo = hi = 0;
	/* Aimed there already (local model): no bracket, no syscall. */
	if (holds(fdr_self(), lo, hi) || !fdr_move_begin(me))
		return;
	set(self, lo, hi);
	fdr_move_end(me);
}
