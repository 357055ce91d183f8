/* SPDX-License-Identifier: MIT */
/*
 * One process, one block, however the process was made (see proc.c): the
 * words that belong to this process alone, in a page no child inherits,
 * and the words that belong to one thread.
 */
#ifndef FDR_PROC_H
#define FDR_PROC_H

#include "global.h"

/* fdr_proc.making */
enum fdr_making { FDR_MAKING = 1, FDR_MAKE_FAILED = 2, FDR_MADE = 3 };

/*
 * This process's own block and where its tables are.  All zero in a child
 * of fork(), _Fork() or clone() until the child makes a block of its own:
 * the page is MADV_WIPEONFORK, so no child can ever write its parent's block
 * through these, whether or not a fork handler ran.
 */
struct fdr_proc {
	struct fdr_blk_hdr *hdr;   /* NULL: none (yet) */
	struct fdr_blk_owner *owners;
	uint32_t *chunks;          /* owner id (fdr_owner_id, block.h) per chunk */
	uint32_t *lines;           /* owner id per line of the lines pool's chunks */
	uint64_t *recs;
	unsigned nchunks;          /* chunk table entries (below nr_open) */
	uint64_t nrecs;
	unsigned epoch;            /* nonzero once this process knows itself */
	bool child;                /* a child still taken for single-threaded */
	int making;                /* enum fdr_making: a fork child's block, made by one thread */
	/* Threads whose creation met EMFILE, retrying it: no move starts
	 * meanwhile (moves.h), up to held_off moves since the last retry
	 * began.  Here, not in fdr_st: a fork child, whatever its parent's
	 * other threads were doing, starts with none. */
	int starved;
	unsigned held_off;
	/* The table was grown at the first fd past FDRANGE_THRESHOLD
	 * (pregrow.c); a fork child grows its own. */
	int grown;
};

extern struct fdr_proc *fdr_p FDR_HIDDEN;

/* The words of one thread, valid for the process epoch they carry. */
#define FDR_BACKOFF_SLOTS 16u
#define FDR_BACKOFF_MAX 16u

struct fdr_thread {
	unsigned epoch;            /* fdr_p->epoch these words belong to; 0 none */
	unsigned owner;            /* FDR_SELF_*, or fdr_self_word() of its owner index */
	uint32_t tid;              /* 0 not asked yet */
	uint64_t pick;             /* hand-off record of the fd being accepted; 0 none */
	unsigned lane;             /* roundrobin: owner id of the lane this thread serves; 0 none */
	unsigned range_lo, range_hi; /* the kernel's range for this thread (krange.c); hi 0: none */
	unsigned range_stale;      /* 1: the kernel may hold another range than those two */
	unsigned accepting;        /* 0 none; else 1 + ticks since its last accept (krange.c) */
	/* Owners this thread found no room for lately (backoff.c): not tried
	 * again for a while.  Direct-mapped by owner index. */
	struct fdr_backoff {
		uint16_t owner;    /* owner id (fdr_owner_id, block.h); 0 empty */
		uint8_t left;      /* placements still to skip */
		uint8_t step;      /* the last skip length: 1, 2, 4 .. FDR_BACKOFF_MAX */
		uint8_t why;       /* the fallback the skipped fds count as */
		uint32_t cap;      /* the failed try's cap: a higher one may find room */
		uint32_t top;      /* the bound then (bound_top): a higher one may too */
	} backoff[FDR_BACKOFF_SLOTS];
	/* Kept when the words are renewed: */
	unsigned home;             /* the epoch of the process this thread forked */
	int forking;               /* inside our fork handlers */
	/* Inside a move or the making of a block (moves.h): a signal handler
	 * that interrupted it must not wait for it to end. */
	int moving;
};

extern FDR_TLS struct fdr_thread fdr_t FDR_HIDDEN;

/*
 * fdr_thread.owner: none asked for yet; none to be had now (being given
 * one, or its chunks are going back at thread exit: owners.c); else the
 * owner's index + 2, which fdr_self_word() makes and fdr_self_index()
 * reads back.
 */
#define FDR_SELF_UNSET 0u
#define FDR_SELF_NONE_NOW 1u

static inline unsigned fdr_self_word(unsigned o)
{
	return o + 2;
}

static inline unsigned fdr_self_index(unsigned word)
{
	return word - 2;
}

void fdr_thread_renew(unsigned epoch) FDR_HIDDEN;

/* This thread's words, renewed first if they were another process's. */
static inline struct fdr_thread *fdr_self(void)
{
	unsigned e = __atomic_load_n(&fdr_p->epoch, __ATOMIC_ACQUIRE);

	if (__builtin_expect(fdr_t.epoch != e, 0))
		fdr_thread_renew(e);
	return &fdr_t;
}

/* A child that no fork handler told us about: learn it now (memory only). */
void fdr_proc_adopt(void) FDR_HIDDEN;

/*
 * While this holds there is no other thread whose fds could share a line
 * with ours: nothing is moved, no syscall is made.  A child of fork() is
 * single-threaded until a thread it made itself calls a wrapper.
 */
static inline bool fdr_single_threaded(void)
{
	struct fdr_proc *p = fdr_p;

	if (&__libc_single_threaded && __atomic_load_n(&__libc_single_threaded, __ATOMIC_RELAXED))
		return true;
	if (__builtin_expect(!__atomic_load_n(&p->epoch, __ATOMIC_ACQUIRE), 0))
		fdr_proc_adopt();
	if (__builtin_expect(__atomic_load_n(&p->child, __ATOMIC_RELAXED), 0)) {
		if (fdr_t.home == __atomic_load_n(&p->epoch, __ATOMIC_RELAXED))
			return true;
		__atomic_store_n(&p->child, false, __ATOMIC_RELAXED);
	}
	return false;
}

/* Start-up: this process's page (one mmap, one madvise).  0 or -errno. */
int fdr_proc_start(void) FDR_HIDDEN;

/* Inside fork, in the child (memory only): the forking thread is the only one. */
void fdr_proc_atfork_child(void) FDR_HIDDEN;

/* Point this process's words at block @h (made by this process); other
 * threads see it only once it is published, when it is set up. */
void fdr_proc_point_at(struct fdr_blk_hdr *h) FDR_HIDDEN;
void fdr_proc_publish(struct fdr_blk_hdr *h) FDR_HIDDEN;

#endif
