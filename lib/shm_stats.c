/* SPDX-License-Identifier: MIT */
/*
 * The live stats block (see shm_stats.h) and roundrobin realignment.
 *
 * Lifetime of /dev/shm/fdrange.NS.PID (NS: the inode of the process's pid
 * namespace, so that processes with the same pid in different namespaces
 * sharing one /dev/shm, such as two containers of a pod, never touch each
 * other's blocks; `fdrange stat` finds the name in /proc/PID/maps):
 *  - created by the constructor with raw syscalls (no malloc, no stdio),
 *    mapped MAP_SHARED and its fd closed again at once, so the program sees
 *    no extra fd;
 *  - a forked child maps a block of its own before it can write anything,
 *    never the parent's (fdr_shm_atfork_child);
 *  - removed by the destructor at exit();
 *  - a process killed by a signal, or one leaving through _exit() (a
 *    daemonizing parent), cannot remove it: every start of the library
 *    removes files of processes of its own pid namespace that no longer
 *    exist, and `fdrange stat`
 *    only trusts a block that /proc/PID/maps shows mapped by that process.
 * When /dev/shm is missing or full, or /proc cannot name the pid
 * namespace, the block is an anonymous private
 * mapping instead: placement and realignment work the same, only
 * `fdrange stat` falls back to what /proc shows.
 *
 * Realignment (FDRANGE_ACCEPT=roundrobin).  The accepting thread places
 * connection k in range (k + offset) mod SLOTS and marks the fd "pending"
 * with the range and the current realignment generation.  The thread that
 * registers the fd with epoll_ctl(EPOLL_CTL_ADD) serves it.  Each serving
 * thread owns the range of the first connection it registered (its lane).
 * When a thread registers a pending fd outside its lane, the program's
 * hand-off and our counter have drifted apart (memcached rejected a
 * connection, which advanced our counter but not its own): the first thread
 * to see it, if the fd was placed under the current generation, moves the
 * counter by the difference and bumps the generation, so fds placed before
 * the correction cannot correct it twice.  The generation is odd while a
 * correction is in progress; fds placed then are never used to judge.
 */
#include "shm_stats.h"
#include "geometry.h"
#include "strbuf.h"
#include "sys.h"

#include <stdbool.h>
#include <sys/mman.h>
#include <sys/syscall.h>

struct fdr_range_stats *fdr_shm_ranges FDR_HIDDEN;

static struct fdr_shm_hdr *blk;
static uint64_t *recs;
static uint64_t nrecs;
static uint32_t *lanes;
static size_t blk_size;
static long blk_pid;      /* pid whose file this is; 0: private mapping */
static char blk_path[64]; /* its name, for the destructor */

/* initial-exec: the general TLS model may call malloc on first access. */
#define TLS __thread __attribute__((tls_model("initial-exec")))
static TLS uint32_t tls_tid;   /* cached gettid() */
static TLS uint32_t tls_lane;  /* range this thread serves + 1; 0: none yet */
static TLS uint32_t tls_pick;  /* last roundrobin pick: range + 1 | gen << 16 */

/*
 * The inode number of this process's pid namespace, or 0 if /proc cannot
 * say.  Read at each block creation, not once: a child forked after
 * unshare(CLONE_NEWPID) is pid 1 of a new namespace.
 */
static unsigned long long pidns_ino(void)
{
	char buf[64];
	unsigned long long v = 0;
	long n = SYS_CALL(SYS_readlinkat, AT_FDCWD, "/proc/self/ns/pid", buf, sizeof(buf) - 1);
	const char *p;

	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* "pid:[4026531836]" */
	for (p = buf; *p && *p != '['; p++)
		;
	if (!*p)
		return 0;
	for (p++; *p >= '0' && *p <= '9' && v < (1ull << 60); p++)
		v = v * 10 + (unsigned long long)(*p - '0');
	return *p == ']' ? v : 0;
}

static void shm_path(char *buf, size_t len, unsigned long long ns, long pid)
{
	struct strbuf sb;

	sb_init(&sb, buf, len, -1);
	sb_str(&sb, FDR_SHM_DIR "/" FDR_SHM_PREFIX);
	sb_u64(&sb, ns);
	sb_str(&sb, ".");
	sb_u64(&sb, (unsigned long long)pid);
}

static void *sys_mmap(size_t len, int prot, int flags, int fd)
{
	long r = SYS_CALL(SYS_mmap, NULL, len, prot, flags, fd, 0);

	/* The raw syscall returns the address as a long; there is no other way. */
	return r < 0 && r > -4096 ? NULL : (void *)r; // NOLINT(performance-no-int-to-ptr)
}

/*
 * Remove the files of processes of our pid namespace that are gone
 * (killed, _exit).  Another namespace's pids mean nothing to kill() here:
 * its files are left alone.
 */
static void sweep_stale(unsigned long long self_ns, long self)
{
	char buf[4096] __attribute__((aligned(8)));
	long dfd;

	if (!self_ns)
		return;
	dfd = sys_openat(AT_FDCWD, FDR_SHM_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (dfd < 0)
		return;
	/* Bounded: a huge /dev/shm costs at most 16 reads per start. */
	for (int round = 0; round < 16; round++) {
		long n = SYS_CALL(SYS_getdents64, (int)dfd, buf, sizeof(buf));
		if (n <= 0)
			break;
		for (long off = 0; off < n;) {
			unsigned short reclen = *(unsigned short *)(buf + off + 16);
			const char *name = buf + off + 19, *end;
			unsigned long long ns;
			long pid;

			off += reclen;
			if (__builtin_memcmp(name, FDR_SHM_PREFIX, sizeof(FDR_SHM_PREFIX) - 1) != 0 ||
			    !(end = fdr_shm_parse_name(name + sizeof(FDR_SHM_PREFIX) - 1, &ns, &pid)) ||
			    *end || ns != self_ns || pid == self)
				continue;
			/* EPERM means it exists under another user: leave it. */
			if (SYS_CALL(SYS_kill, (int)pid, 0) == -ESRCH)
				SYS_CALL(SYS_unlinkat, (int)dfd, name, 0);
		}
	}
	sys_close((int)dfd);
}

/* A fresh block for this process: a file in /dev/shm, else private memory. */
static struct fdr_shm_hdr *create_block(size_t size, unsigned long long ns, long *pid_out)
{
	char path[64];
	long pid = sys_getpid(), fd = -ENOENT;
	void *p = NULL;

	shm_path(path, sizeof(path), ns, pid);
	/* Ours by namespace and pid: left by a dead process with our pid, or
	 * by our own image before exec. */
	if (ns) {
		SYS_CALL(SYS_unlinkat, AT_FDCWD, path, 0);
		fd = sys_openat(AT_FDCWD, path,
				O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	}
	if (fd >= 0) {
		if (SYS_CALL(SYS_ftruncate, (int)fd, size) == 0)
			p = sys_mmap(size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd);
		sys_close((int)fd);
		if (!p)
			SYS_CALL(SYS_unlinkat, AT_FDCWD, path, 0);
	}
	*pid_out = p ? pid : 0;
	if (p)
		__builtin_memcpy(blk_path, path, sizeof(blk_path));
	else
		p = sys_mmap(size, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1);
	return p;
}

/*
 * Threads that change RLIMIT_NOFILE at once all rewrite these fields:
 * atomic stores, so each field holds one whole value.  A reader may
 * still see fields from two concurrent changes; the report is a snapshot
 * for people, and the next change rewrites them all.
 */
static void fill_geometry(struct fdr_shm_hdr *h)
{
	__atomic_store_n(&h->limit, __atomic_load_n(&fdr_st.limit, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
	__atomic_store_n(&h->width, __atomic_load_n(&fdr_st.width, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
	__atomic_store_n(&h->nr_open, (uint64_t)fdr_st.nr_open, __ATOMIC_RELAXED);
	__atomic_store_n(&h->limit_changes,
			 __atomic_load_n(&fdr_st.limit_changes, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}

/*
 * Build and publish a block.  @keep_counts: carry the current counters
 * over (start-up); otherwise start from zero but keep the threads count
 * (a forked child, whose report counts its own fds).
 */
static void setup(bool keep_counts, unsigned long long ns)
{
	const struct fdr_config *cfg = &fdr_st.cfg;
	size_t ranges_off = FDR_SHM_HDR_SIZE;
	size_t lanes_off = ranges_off + cfg->slots * sizeof(struct fdr_range_stats);
	size_t recs_off = (lanes_off + cfg->slots * sizeof(uint32_t) + 63) & ~(size_t)63;
	uint64_t n = fdr_st.nr_open < FDR_MAX_FD ? fdr_st.nr_open : FDR_MAX_FD;
	size_t size = (recs_off + n * sizeof(uint64_t) + 4095) & ~(size_t)4095;
	struct fdr_range_stats *ranges;
	struct fdr_shm_hdr *h;
	long pid;

	h = create_block(size, ns, &pid);
	if (!h)
		return;
	/* The counters move into the block: a torn count at start-up is the
	 * worst a concurrent placement can cause, and there is normally none. */
	ranges = (struct fdr_range_stats *)((char *)h + ranges_off);
	for (unsigned r = 0; r < cfg->slots; r++) {
		if (keep_counts)
			ranges[r] = *fdr_rs(r);
		else
			ranges[r].threads = fdr_rs(r)->threads;
	}
	__builtin_memcpy(h->magic, FDR_SHM_MAGIC, 8);
	h->version = FDR_SHM_VERSION;
	h->hdr_size = FDR_SHM_HDR_SIZE;
	h->size = size;
	h->pid = (int32_t)sys_getpid();
	h->flags = FDR_SHM_ACTIVE | (pid ? 0 : FDR_SHM_PRIVATE);
	{
		struct strbuf sb;

		sb_init(&sb, h->lib_version, sizeof(h->lib_version), -1);
		sb_str(&sb, FDRANGE_VERSION_STRING);
	}
	h->slots = cfg->slots;
	h->base = cfg->base;
	h->cfg_width = cfg->width;
	h->accept = cfg->accept;
	h->open = cfg->open;
	fill_geometry(h);
	h->ranges_off = ranges_off;
	h->range_size = sizeof(struct fdr_range_stats);
	h->nranges = cfg->slots;
	h->lanes_off = lanes_off;
	h->recs_off = recs_off;
	h->nrecs = n;

	blk_size = size;
	blk_pid = pid;
	lanes = (uint32_t *)((char *)h + lanes_off);
	nrecs = n;
	__atomic_store_n(&recs, (uint64_t *)((char *)h + recs_off), __ATOMIC_RELEASE);
	__atomic_store_n(&fdr_shm_ranges, ranges, __ATOMIC_RELEASE);
	__atomic_store_n(&blk, h, __ATOMIC_RELEASE);
}

void fdr_shm_init(void)
{
	unsigned long long ns;

	if (blk || !fdr_ready())
		return;
	ns = pidns_ino();
	sweep_stale(ns, sys_getpid());
	setup(true, ns);
}

__attribute__((constructor)) static void fdr_shm_constructor(void)
{
	fdr_shm_init();
}

void fdr_shm_atfork_child(void)
{
	struct fdr_shm_hdr *old = blk;
	size_t old_size = blk_size;

	tls_tid = 0;
	tls_lane = 0;
	tls_pick = 0;
	if (!old)
		return;
	/* Only this thread exists now: nothing writes the old block while
	 * the pointers move.  Stop writing it first, whatever happens next. */
	blk = NULL;
	recs = NULL;
	__atomic_store_n(&fdr_shm_ranges, NULL, __ATOMIC_RELEASE);
	for (unsigned r = 0; r < fdr_st.cfg.slots; r++)
		fdr_st.range[r].threads =
			((struct fdr_range_stats *)((char *)old + old->ranges_off))[r].threads;
	setup(false, pidns_ino());
	SYS_CALL(SYS_munmap, old, old_size);
}

__attribute__((destructor)) static void fdr_shm_destructor(void)
{
	/* Only the process the file is named after removes it: a forked child
	 * that could not make its own never removes its parent's. */
	if (!blk || !blk_pid || blk_pid != sys_getpid())
		return;
	SYS_CALL(SYS_unlinkat, AT_FDCWD, blk_path, 0);
}

void fdr_shm_geometry(void)
{
	struct fdr_shm_hdr *h = __atomic_load_n(&blk, __ATOMIC_ACQUIRE);

	if (h)
		fill_geometry(h);
}

unsigned fdr_rr_pick(void)
{
	struct fdr_shm_hdr *h = __atomic_load_n(&blk, __ATOMIC_ACQUIRE);
	/* The generation is read before the counter moves: a correction that
	 * lands in between makes this fd look older than it is, never newer. */
	uint64_t g = h ? __atomic_load_n(&h->rr_gen, __ATOMIC_ACQUIRE) : 1;
	unsigned r = (unsigned)(__atomic_fetch_add(&fdr_st.rr_next, 1, __ATOMIC_RELAXED) %
				fdr_st.cfg.slots);

	tls_pick = (g & 1) ? 0 : (r + 1) | (uint32_t)((g >> 1) & 0x7fff) << 16;
	return r;
}

void fdr_shm_accepted(int fd)
{
	uint64_t *t = __atomic_load_n(&recs, __ATOMIC_ACQUIRE);
	uint32_t pick = tls_pick;
	uint64_t v = 0;

	tls_pick = 0;
	if (!t || fd < 0 || (uint64_t)fd >= nrecs)
		return;
	/* Judge only fds that really went where the pick said (not fallbacks). */
	if (pick && fdr_geom_range_of(&fdr_st.cfg, __atomic_load_n(&fdr_st.width, __ATOMIC_RELAXED),
				      fd) == (int)(pick & 0xffff) - 1)
		v = FDR_REC_MAKE((pick & 0xffff) - 1, pick >> 16);
	/* Also forgets the thread that served the previous fd with this number. */
	__atomic_store_n(&t[fd], v, __ATOMIC_RELAXED);
}

static void realign(struct fdr_shm_hdr *h, uint64_t rec, uint32_t tid)
{
	unsigned slots = fdr_st.cfg.slots, r = FDR_REC_RANGE(rec), lane = tls_lane;
	uint64_t g;

	if (r >= slots)
		return;
	if (!lane) {
		uint32_t owner = 0;

		if (__atomic_compare_exchange_n(&lanes[r], &owner, tid, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED) || owner == tid) {
			tls_lane = r + 1;
			return;
		}
		/* Drift before this thread's first connection, or more serving
		 * threads than ranges: no lane to judge by yet. */
		__atomic_fetch_add(&h->rr_unmatched, 1, __ATOMIC_RELAXED);
		return;
	}
	if (lane - 1 == r)
		return;
	__atomic_fetch_add(&h->rr_misplaced, 1, __ATOMIC_RELAXED);
	g = __atomic_load_n(&h->rr_gen, __ATOMIC_ACQUIRE);
	if ((g & 1) || ((g >> 1) & 0x7fff) != FDR_REC_GEN(rec))
		return;
	if (!__atomic_compare_exchange_n(&h->rr_gen, &g, g + 1, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	/* Connections from now on land where the program sends them. */
	__atomic_fetch_add(&fdr_st.rr_next, (lane - 1 + slots - r) % slots, __ATOMIC_RELAXED);
	__atomic_store_n(&h->rr_gen, g + 2, __ATOMIC_RELEASE);
}

void fdr_shm_registered(int fd)
{
	struct fdr_shm_hdr *h = __atomic_load_n(&blk, __ATOMIC_ACQUIRE);
	uint64_t *t = recs;
	uint32_t tid;
	uint64_t old;

	if (!h || fd < 0)
		return;
	if ((uint64_t)fd >= nrecs) {
		__atomic_fetch_add(&h->untracked, 1, __ATOMIC_RELAXED);
		return;
	}
	tid = tls_tid;
	if (__builtin_expect(!tid, 0))
		tls_tid = tid = (uint32_t)SYS_CALL(SYS_gettid);
	/* The common path: one load, one store, to a word only this fd uses. */
	old = __atomic_load_n(&t[fd], __ATOMIC_RELAXED);
	__atomic_store_n(&t[fd], tid, __ATOMIC_RELAXED);
	if (old & FDR_REC_PENDING)
		realign(h, old, tid);
}
