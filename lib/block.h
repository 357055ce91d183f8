/* SPDX-License-Identifier: MIT */
/*
 * The stats block: layout shared by the library (which writes it) and
 * `fdrange stat` (which reads it from another process, as root, and must
 * treat every byte of it as hostile input).  Nothing else lives here.
 *
 * The block is the library's whole placement state, not a copy of it: the
 * owner records, the chunk table, the learned hand-off model and one record
 * per fd.  It is a memfd named FDR_BLK_NAME, mapped MAP_SHARED at start-up
 * and its fd closed at once: /proc/PID/maps shows it as
 * "/memfd:fdrange (deleted)".  It never has a name in a file system, so
 * nothing is left behind at exit, another user cannot take its name, and a
 * full /dev/shm cannot make a write to it raise SIGBUS (memfds live on the
 * kernel's internal tmpfs mount, which has no size limit: a page that
 * cannot be had is an ordinary out-of-memory, as for malloc).  Where a
 * memfd cannot be made, the same layout lives in private anonymous memory
 * and only the exit report shows it.
 *
 * Change the layout only together with FDR_BLK_VERSION.
 */
#ifndef FDR_BLOCK_H
#define FDR_BLOCK_H

#include <stdint.h>

#define FDR_BLK_NAME      "fdrange"
#define FDR_BLK_MAPS_NAME "/memfd:" FDR_BLK_NAME " (deleted)"
#define FDR_BLK_MAGIC     "FDRSTAT3"
#define FDR_BLK_VERSION   3u
#define FDR_BLK_HDR_SIZE  4096u

#define FDR_CHUNK         64u     /* fds per chunk: 8 lines of the kernel's fd[] array */
#define FDR_MAX_OWNERS    1027u   /* the three pools + 1024 threads (FDRANGE_SLOTS max) */
#define FDR_OWNER_SIZE    128u    /* FDR_PAD: one owner's counters never share a line pair */
#define FDR_ROT_MAX       64u     /* longest rotation the hand-off model learns */
#define FDR_SETTINGS_MAX  16u
#define FDR_BLK_MAX_FD    1048576u /* the kernel's default fs.nr_open; the record table's cap */

/* hdr.flags */
#define FDR_BLK_ACTIVE    1u      /* the library is placing fds */
#define FDR_BLK_PRIVATE   2u      /* never set in a memfd: the block is anonymous */

/* Owner indices with a fixed meaning; threads (or lanes) start at FDR_OWN_FIRST. */
#define FDR_OWN_SPARSE    0u      /* accepted while the hand-off is being learned: one fd per 8-fd line */
#define FDR_OWN_SHARED    1u      /* accepted, serving thread not predictable: packed together */
#define FDR_OWN_LINES     2u      /* chunks cut into 8-fd lines, a line each for owners that hold no chunk yet */
#define FDR_OWN_FIRST     3u
#define FDR_LINES_PER_CHUNK 8u    /* FDR_CHUNK / 8: one kernel fd[] cache line each */

/*
 * Where a table names an owner (the chunk and line tables, an accept's
 * predicted owner in its record), it holds the owner's id, its index + 1,
 * so that 0 is none.  fdr_owner_index() of a nonzero id only.
 */
static inline uint32_t fdr_owner_id(unsigned o)
{
	return (uint32_t)o + 1u;
}

static inline unsigned fdr_owner_index(uint32_t id)
{
	return id - 1u;
}

/* fdr_blk_owner.kind */
enum fdr_owner_kind {
	FDR_KIND_FREE,            /* unused record */
	FDR_KIND_THREAD,          /* the fds of one thread (or of SLOTS-sharing threads) */
	FDR_KIND_LANE,            /* FDRANGE_ACCEPT=roundrobin: one position of the rotation */
	FDR_KIND_SPARSE,          /* FDR_OWN_SPARSE */
	FDR_KIND_SHARED,          /* FDR_OWN_SHARED */
	FDR_KIND_LINES,           /* FDR_OWN_LINES */
	FDR_KIND_NR
};

/* Why an fd was not moved into its owner's chunks. */
enum fdr_reason {
	FDR_FB_FULL,              /* no room in the owner's chunks and none to claim */
	FDR_FB_LIMIT,             /* not below RLIMIT_NOFILE (EINVAL, EMFILE) */
	FDR_FB_OTHER,             /* any other F_DUPFD error */
	FDR_FB_BOUND,             /* a move would reach past the do-no-harm bound (FD_SETSIZE, 2 x open + 64) */
	FDR_FB_NEAR,              /* the kernel's lowest free fd is near the soft limit: no second number taken */
	FDR_FB_NR
};

/*
 * One owner: a thread (or a lane, or a pool) and the chunks it holds.
 * Counters are written with relaxed atomics, mostly by one thread.
 */
struct fdr_blk_owner {
	uint32_t kind;            /* enum fdr_owner_kind */
	uint32_t tid;             /* THREAD: its thread; LANE: the thread serving it; 0: none yet */
	uint32_t chunks;          /* chunks held now */
	uint32_t hint;            /* chunk to try first, + 1; 0: none */
	uint32_t live;            /* live threads using this owner */
	uint32_t lines;           /* lines held now in the line pool's chunks */
	uint64_t threads;         /* threads ever given this owner */
	uint64_t placed;          /* moved into its chunks */
	uint64_t inplace;         /* already in one of its chunks, left alone */
	uint64_t kept;            /* not moved by rule: fds 0-2, FDRANGE_OPEN/LOCAL=keep, roundrobin */
	uint64_t fallback[FDR_FB_NR];
	uint64_t probes;          /* extra F_DUPFD tries beyond the first (2 syscalls each) */
	uint64_t claims;          /* chunks and lines claimed */
	uint32_t busy;            /* moves in flight by this owner's threads (moves.h); internal */
	uint32_t line;            /* the line it holds in the lines pool + 1 (chunk * 8 + line); 0 none */
	uint32_t hint_line;       /* 1: its next fd goes to its line first (then its chunks) */
	uint32_t range_sets;      /* PR_SET_FD_RANGE calls by its threads (krange.c); 0 in the
				   * blocks of releases before it (it was padding) */
} __attribute__((aligned(FDR_OWNER_SIZE)));

_Static_assert(sizeof(struct fdr_blk_owner) == FDR_OWNER_SIZE, "owner record size");

/* What the library learned about who serves accepted connections. */
enum fdr_model {
	FDR_MODEL_NONE,           /* no accepted connection registered yet */
	FDR_MODEL_LEARNING,       /* seen some, no model fits yet */
	FDR_MODEL_LOCAL,          /* served by the thread that accepted them */
	FDR_MODEL_ROTATION,       /* dealt out in a fixed rotation: rot_owner[] */
	FDR_MODEL_UNPREDICTABLE,  /* neither: such fds go to FDR_OWN_SHARED */
	FDR_MODEL_UNREGISTERED,   /* many accepted, none registered with epoll (thread per
				   * connection?): accepted fds stay where the kernel puts them */
	FDR_MODEL_NR
};

/* The words reports and `fdrange stat` use, indexed by the enums above. */
static const char *const fdr_model_words[FDR_MODEL_NR] __attribute__((unused)) = {
	"none", "learning", "local", "rotation", "unpredictable", "unregistered",
};
static const char *const fdr_kind_words[FDR_KIND_NR] __attribute__((unused)) = {
	"free", "thread", "lane", "sparse", "shared", "lines",
};

/* Why the library places nothing in a process that has a block (hdr.why_inactive). */
enum fdr_why {
	FDR_WHY_ACTIVE,           /* placing (or ready to, once threads exist) */
	FDR_WHY_DISABLED,         /* FDRANGE_DISABLE=1 */
	FDR_WHY_CONFIG,           /* a bad or unknown FDRANGE_* variable: why_msg says which */
	FDR_WHY_SECCOMP,          /* a seccomp filter was installed while running (prctl, seccomp) */
	FDR_WHY_SECURE,           /* secure-execution mode (set-id program): every call passed through */
	FDR_WHY_NR
};
static const char *const fdr_why_words[FDR_WHY_NR] __attribute__((unused)) = {
	"active", "disabled", "config", "seccomp", "secure",
};

struct fdr_blk_setting {
	char name[24];            /* FDRANGE_SLOTS: the option table's env name */
	char value[72];           /* as the option table formats it; cut, NUL-terminated */
	uint32_t from_env;        /* 1: set in the environment; 0: the default */
	uint32_t pad0;
};

struct fdr_blk_hdr {
	char magic[8];            /* FDR_BLK_MAGIC, not NUL-terminated */
	uint32_t version;         /* FDR_BLK_VERSION */
	uint32_t hdr_size;        /* FDR_BLK_HDR_SIZE */
	uint64_t size;            /* bytes in the whole block */
	int32_t pid;              /* the owning process, in its own pid namespace */
	uint32_t flags;           /* FDR_BLK_* */
	char lib_version[16];     /* FDRANGE_VERSION_STRING, NUL-terminated */

	/* Settings, in option-table order, written once at start-up. */
	uint32_t nsettings;
	uint32_t pad0;
	struct fdr_blk_setting settings[FDR_SETTINGS_MAX];

	/* Geometry.  Chunk c holds fds [base + c*chunk, base + (c+1)*chunk). */
	uint32_t base;            /* FDRANGE_BASE */
	uint32_t chunk;           /* FDR_CHUNK */
	uint32_t fixed_width;     /* FDRANGE_WIDTH when set: owner FIRST+i holds range i only; 0: chunks claimed on demand */
	uint32_t nchunks;         /* entries in the chunk table */
	uint32_t top_chunk;       /* one past the highest chunk ever claimed */
	uint32_t nowners;         /* owner records ever used: highest index + 1 */
	uint64_t limit;           /* soft RLIMIT_NOFILE as last seen */
	uint64_t nr_open;         /* fs.nr_open */
	uint64_t limit_changes;
	uint64_t single_kept;     /* fds left alone because the process was single-threaded */
	uint64_t untracked;       /* epoll registrations of fds beyond the record table */

	/* The hand-off model (lib/handoff.c); written under its try-lock. */
	uint32_t policy;          /* enum fdr_accept as configured */
	uint32_t model;           /* enum fdr_model */
	uint32_t rot_len;         /* ROTATION: positions */
	uint32_t pad1;
	uint32_t rot_owner[FDR_ROT_MAX]; /* owner index of each position */
	uint64_t learned_after;   /* accepted connections seen when the model last settled */
	uint64_t relearns;        /* times a settled model was dropped and learned again */
	uint64_t accepted;        /* accepted fds seen (multi-threaded) */
	uint64_t observed;        /* of those, registered by a serving thread */
	uint64_t hits, misses;    /* predictions checked under a settled model */
	uint64_t realignments;    /* rotation counter moved to follow the program */

	/* Where the tables are: offsets from the block's start. */
	uint64_t owners_off;      /* struct fdr_blk_owner[max_owners] */
	uint32_t owner_size;      /* sizeof(struct fdr_blk_owner) */
	uint32_t max_owners;      /* FDR_MAX_OWNERS */
	uint64_t chunks_off;      /* uint32_t per chunk: owner index + 1; 0 unclaimed */
	uint64_t recs_off;        /* uint64_t per fd number, FDR_REC_* */
	uint64_t nrecs;

	/* When the model was last judged unpredictable: of the answers it
	 * was judged on, how many the accepting thread served itself. */
	uint32_t judged, judged_local;

	/* Version 3. */
	uint32_t why_inactive;    /* enum fdr_why */
	uint32_t pad2;
	char why_msg[160];        /* FDR_WHY_CONFIG: the one-line message printed at start; NUL-terminated */
	uint64_t lines_off;       /* uint32_t per line, FDR_LINES_PER_CHUNK per chunk (nchunks of
				   * them): owner index + 1 of the line's holder, 0 free; meaningful
				   * in chunks held by FDR_OWN_LINES */
	uint64_t bound_top;       /* chunks are claimed only below this fd: max(FD_SETSIZE,
				   * 2 x open_counted + 64) */
	uint64_t open_counted;    /* fds open at the last count (/proc/thread-self/fd); 0: never */
	uint64_t counts;          /* times the open fds were counted (only when a claim reached
				   * past bound_top) */
	uint64_t accepts_left;    /* accepted fds left where the kernel put them (model unregistered) */

	/* Appended in version 3: zero in the blocks of older releases. */
	uint64_t threshold;       /* FDRANGE_THRESHOLD */
	uint64_t few_seen;        /* 1 once an fd was left where the kernel numbered it, below
				   * threshold (a flag, not a count: no shared write per fd) */
	uint64_t kernel_range;    /* 1: the kernel allocates in the threads' ranges
				   * (PR_SET_FD_RANGE, krange.c); 0: the dup path only, and
				   * in the blocks of releases before it */
};

_Static_assert(sizeof(struct fdr_blk_hdr) <= FDR_BLK_HDR_SIZE, "header too big");

/*
 * Where the tables of a block with @owners owner records, @nchunks chunks
 * and @nrecs fd records lie: after the header the owner records, the
 * chunk table, the lines table (FDR_LINES_PER_CHUNK entries per chunk),
 * then from the next page on the records.  The library lays out its blocks
 * so (blockmap.c), and the tests build theirs with it (test/stat/);
 * `fdrange stat` takes the offsets from the header and checks them.
 */
#define FDR_BLK_OWNERS_OFF ((uint64_t)FDR_BLK_HDR_SIZE)
#define FDR_BLK_CHUNKS_OFF(owners) (FDR_BLK_OWNERS_OFF + (uint64_t)(owners) * FDR_OWNER_SIZE)
#define FDR_BLK_LINES_OFF(owners, nchunks) \
	(FDR_BLK_CHUNKS_OFF(owners) + (uint64_t)(nchunks) * sizeof(uint32_t))
#define FDR_BLK_RECS_OFF(owners, nchunks) \
	((FDR_BLK_LINES_OFF(owners, nchunks) + \
	  (uint64_t)(nchunks) * FDR_LINES_PER_CHUNK * sizeof(uint32_t) + 4095u) & ~(uint64_t)4095u)
#define FDR_BLK_SIZE(owners, nchunks, nrecs) \
	(FDR_BLK_RECS_OFF(owners, nchunks) + (uint64_t)(nrecs) * sizeof(uint64_t))

/* That layout in header @h (offsets, counts, the owner record size); the
 * block's size in bytes. */
static inline uint64_t fdr_blk_layout(struct fdr_blk_hdr *h, uint32_t owners, uint32_t nchunks,
				      uint64_t nrecs)
{
	h->owners_off = FDR_BLK_OWNERS_OFF;
	h->owner_size = FDR_OWNER_SIZE;
	h->max_owners = owners;
	h->chunks_off = FDR_BLK_CHUNKS_OFF(owners);
	h->nchunks = nchunks;
	h->lines_off = FDR_BLK_LINES_OFF(owners, nchunks);
	h->recs_off = FDR_BLK_RECS_OFF(owners, nchunks);
	h->nrecs = nrecs;
	return FDR_BLK_SIZE(owners, nchunks, nrecs);
}

/*
 * One record per fd number, one 64-bit word so that one store updates it.
 * Registered (bit 63 clear): bits 0..31 the tid of the thread that last
 * registered the fd with epoll_ctl(EPOLL_CTL_ADD), 0 none.
 * Pending (bit 63 set): accepted, not yet registered; bits 0..31 the
 * accept's sequence number, 32..47 the predicted owner + 1 (0: none),
 * 48..62 the model generation at the accept.
 */
#define FDR_REC_PENDING    (1ull << 63)
#define FDR_REC_TID(v)     ((uint32_t)(v))
#define FDR_REC_SEQ(v)     ((uint32_t)(v))
#define FDR_REC_PRED(v)    ((unsigned)(((v) >> 32) & 0xffffu))
#define FDR_REC_GEN(v)     ((unsigned)(((v) >> 48) & 0x7fffu))
#define FDR_REC_MAKE(seq, pred, gen) \
	(FDR_REC_PENDING | ((uint64_t)((gen) & 0x7fffu) << 48) | \
	 ((uint64_t)((pred) & 0xffffu) << 32) | (uint32_t)(seq))

#endif
