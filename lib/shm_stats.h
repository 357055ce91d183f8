/* SPDX-License-Identifier: MIT */
/*
 * The live stats block: a small versioned file in /dev/shm that the library
 * maps at start-up and `fdrange stat PID` reads from another shell while the
 * program runs, the way vma_stats reads libvma's block.  It holds the
 * settings, the live geometry, the per-range counters, the roundrobin
 * realignment state and, per fd number, the thread that registered the fd
 * with epoll_ctl(EPOLL_CTL_ADD).
 *
 * The layout is shared with tools/stat.c: change it only together with
 * FDR_SHM_VERSION.  The reader refuses any other version.
 */
#ifndef FDR_SHM_STATS_H
#define FDR_SHM_STATS_H

#include <stdint.h>

#define FDR_SHM_DIR      "/dev/shm"
#define FDR_SHM_PREFIX   "fdrange."
#define FDR_SHM_MAGIC    "FDRSTATS"
#define FDR_SHM_VERSION  1u
#define FDR_SHM_HDR_SIZE 4096u

/* hdr.flags */
#define FDR_SHM_ACTIVE    1u  /* the library is placing fds */
#define FDR_SHM_PRIVATE   2u  /* never set in a file: block is anonymous */

/*
 * One record per fd number, written as one 64-bit word so that a single
 * store updates it:
 *   bits  0..31  tid of the thread that last registered the fd (0: none)
 *   bit  63      pending: accepted and placed under roundrobin, not yet
 *                registered by any thread
 *   bits 48..62  realignment generation at placement (15 bits)
 *   bits 32..47  range the fd was placed in
 */
#define FDR_REC_PENDING   (1ull << 63)
#define FDR_REC_TID(v)    ((uint32_t)(v))
#define FDR_REC_RANGE(v)  ((unsigned)(((v) >> 32) & 0xffffu))
#define FDR_REC_GEN(v)    ((unsigned)(((v) >> 48) & 0x7fffu))
#define FDR_REC_MAKE(range, gen) \
	(FDR_REC_PENDING | ((uint64_t)((gen) & 0x7fffu) << 48) | ((uint64_t)((range) & 0xffffu) << 32))

struct fdr_shm_hdr {
	char magic[8];            /* FDR_SHM_MAGIC, not NUL-terminated */
	uint32_t version;         /* FDR_SHM_VERSION */
	uint32_t hdr_size;        /* FDR_SHM_HDR_SIZE */
	uint64_t size;            /* bytes in the whole block */
	int32_t pid;              /* the process that owns the block */
	uint32_t flags;           /* FDR_SHM_* */
	char lib_version[16];     /* FDRANGE_VERSION_STRING */

	/* Settings, copied once at creation. */
	uint32_t slots, base, cfg_width, accept, open, pad0;

	/* Live geometry, rewritten when the process changes RLIMIT_NOFILE. */
	uint64_t limit, width, nr_open, limit_changes;

	/* Layout of the rest of the block: offsets from its start. */
	uint64_t ranges_off;      /* struct fdr_range_stats[nranges] */
	uint32_t range_size, nranges;
	uint64_t lanes_off;       /* uint32_t tid[nranges]: thread serving range r (roundrobin) */
	uint64_t recs_off;        /* uint64_t rec[nrecs], indexed by fd */
	uint64_t nrecs;

	/* Written by the serving threads: a line of their own. */
	uint64_t rr_gen __attribute__((aligned(64)));  /* even; +2 per realignment */
	uint64_t rr_misplaced;    /* accepted fds registered by a thread not owning their range */
	uint64_t rr_unmatched;    /* first fd of a thread landed in a range another thread owns */
	uint64_t untracked;       /* EPOLL_CTL_ADDs of fds beyond the record table */
};

_Static_assert(sizeof(struct fdr_shm_hdr) <= FDR_SHM_HDR_SIZE, "header too big");

/*
 * A block's name is FDR_SHM_PREFIX "NS.PID": the inode number of the
 * process's pid namespace and its pid there, both decimal and non-zero.
 * Parses the part after the prefix; returns the character after PID, or
 * NULL.  Plain code, no libc: the library's constructor uses it too.
 */
static inline const char *fdr_shm_parse_name(const char *p, unsigned long long *ns, long *pid)
{
	*ns = 0;
	*pid = 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (*ns >= (1ull << 60))
			return 0;
		*ns = *ns * 10 + (unsigned long long)(*p - '0');
	}
	if (*p++ != '.')
		return 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (*pid >= (1L << 31))
			return 0;
		*pid = *pid * 10 + (*p - '0');
	}
	return *ns && *pid > 0 ? p : 0;
}

#include "state.h"

/* The library side; tools/stat.c uses only the layout above. */

/* Create the block (or a private one if /dev/shm cannot hold it). */
void fdr_shm_init(void) FDR_HIDDEN;
/* In the child after fork(): a block of its own, never the parent's. */
void fdr_shm_atfork_child(void) FDR_HIDDEN;
/* The process changed its RLIMIT_NOFILE: mirror the geometry. */
void fdr_shm_geometry(void) FDR_HIDDEN;

/* roundrobin: the range for the next accepted fd (remembered per thread). */
unsigned fdr_rr_pick(void) FDR_HIDDEN;
/* An accept wrapper returns @fd: note it as awaiting its serving thread. */
void fdr_shm_accepted(int fd) FDR_HIDDEN;
/* epoll_ctl(EPOLL_CTL_ADD) of @fd succeeded on this thread. */
void fdr_shm_registered(int fd) FDR_HIDDEN;

/* Counters of range @r: in the block when there is one. */
extern struct fdr_range_stats *fdr_shm_ranges FDR_HIDDEN;

static inline struct fdr_range_stats *fdr_rs(unsigned r)
{
	struct fdr_range_stats *p = __atomic_load_n(&fdr_shm_ranges, __ATOMIC_ACQUIRE);

	return p ? &p[r] : &fdr_st.range[r];
}

#endif
