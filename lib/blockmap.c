/* SPDX-License-Identifier: MIT */
/*
 * Making the stats block (layout: block.h) of this process.
 *
 * At start-up the constructor makes a memfd, sizes it, maps it MAP_SHARED
 * and closes the fd again at once, so the program sees no fd of ours.
 * With raw syscalls: no malloc, no stdio, nothing a wrapper could see.
 * The pages are sparse: only the header, the owners in use, the claimed
 * part of the chunk table and the records of fds that were accepted or
 * registered ever take memory.
 *
 * Nothing about it is left behind when the process ends, however it ends:
 * there is no name to remove, no destructor, no syscall at exit (a process
 * locked into a seccomp filter, like sshd's pre-authentication child, must
 * not meet a syscall it never made).  `fdrange stat` finds the mapping in
 * /proc/PID/maps.
 *
 * A child must never write its parent's block: the words that point at
 * the block are in proc.h's page, which no child inherits; a child makes a
 * block of its own at its first placement, laid out as its parent's.
 *
 * A process that loaded the library but places nothing (FDRANGE_DISABLE,
 * a bad setting) has a block too, saying why; one that started under a
 * seccomp filter has none: making it would take syscalls (sandbox.c).
 */
#include "blockmap.h"
#include "cpu_relax.h"
#include "handoff.h"
#include "owners.h"
#include "geometry.h"
#include "pstate.h"
#include "strbuf.h"
#include "sys.h"

#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 1u
#endif
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 8u
#endif

static void *sys_mmap(size_t len, int prot, int flags, int fd)
{
	long r = SYS_CALL(SYS_mmap, 0L, len, prot, flags, fd, 0);

	/* The raw syscall returns the address as a long; there is no other way. */
	return r < 0 && r > -4096 ? NULL : (void *)r; // NOLINT(performance-no-int-to-ptr)
}

/* A shared memfd mapping of @size bytes, or private memory; flags out. */
static void *map_block(size_t size, uint32_t *flags)
{
	void *p = NULL;
	/* NOEXEC_SEAL (Linux 6.3+) keeps newer kernels from logging that a
	 * memfd was made executable by default; older ones refuse the flag. */
	long fd = SYS_CALL(SYS_memfd_create, FDR_BLK_NAME, MFD_CLOEXEC | MFD_NOEXEC_SEAL);

	if (fd == -EINVAL)
		fd = SYS_CALL(SYS_memfd_create, FDR_BLK_NAME, MFD_CLOEXEC);
	if (fd >= 0) {
		if (SYS_CALL(SYS_ftruncate, (int)fd, size) == 0)
			p = sys_mmap(size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd);
		sys_close((int)fd);
	}
	*flags = p ? 0 : FDR_BLK_PRIVATE;
	if (!p)
		p = sys_mmap(size, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1);
	return p;
}

static void fill_settings(struct fdr_blk_hdr *h)
{
	const struct fdr_config *cfg = &fdr_st.cfg;

	h->nsettings = fdr_noptions;
	for (unsigned i = 0; i < fdr_noptions; i++) {
		struct fdr_blk_setting *s = &h->settings[i];
		struct strbuf sb;

		sb_init(&sb, s->name, sizeof(s->name), -1);
		sb_str(&sb, fdr_options[i].env);
		fdr_option_format(&fdr_options[i], cfg, s->value, sizeof(s->value));
		s->from_env = cfg->source[i] == FDR_SRC_ENV;
	}
}

void fdr_block_geometry(void)
{
	struct fdr_blk_hdr *h = __atomic_load_n(&fdr_p->hdr, __ATOMIC_ACQUIRE);

	if (h)
		__atomic_store_n(&h->limit, __atomic_load_n(&fdr_st.limit, __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
}

/* The chunk table's entries for this process's settings: every chunk
 * below fs.nr_open, whatever the limit later becomes. */
static unsigned block_nchunks(void)
{
	return fdr_geom_nchunks(fdr_st.cfg.base, fdr_geom_cap(fdr_st.nr_open, fdr_st.nr_open));
}

/* One record per fd number below fs.nr_open, up to FDR_BLK_MAX_FD. */
static uint64_t block_nrecs(void)
{
	return fdr_st.nr_open < FDR_BLK_MAX_FD ? fdr_st.nr_open : FDR_BLK_MAX_FD;
}

/* Layout, settings and geometry of a new block at @h of @size bytes. */
static void fill(struct fdr_blk_hdr *h, size_t size, uint32_t flags)
{
	const struct fdr_config *cfg = &fdr_st.cfg;
	struct strbuf sb;

	__builtin_memcpy(h->magic, FDR_BLK_MAGIC, 8);
	h->version = FDR_BLK_VERSION;
	h->hdr_size = FDR_BLK_HDR_SIZE;
	h->size = size;
	h->pid = (int32_t)sys_getpid();
	h->flags = flags | (fdr_st.active ? FDR_BLK_ACTIVE : 0);
	h->why_inactive = fdr_st.why;
	sb_init(&sb, h->why_msg, sizeof(h->why_msg), -1);
	sb_str(&sb, fdr_st.why_msg);
	sb_init(&sb, h->lib_version, sizeof(h->lib_version), -1);
	sb_str(&sb, FDRANGE_VERSION_STRING);
	fill_settings(h);
	h->base = cfg->base;
	h->chunk = FDR_CHUNK;
	h->fixed_width = cfg->width;
	h->limit = __atomic_load_n(&fdr_st.limit, __ATOMIC_RELAXED);
	h->nr_open = fdr_st.nr_open;
	h->policy = cfg->accept;
	fdr_blk_layout(h, FDR_MAX_OWNERS, block_nchunks(), block_nrecs());
	h->bound_top = FDR_FD_SETSIZE;
	h->threshold = cfg->threshold;
	/* A fork child's block too: the child goes on with the parent's path. */
	h->kernel_range = fdr_st.kernel_range;
}

/* Bytes of a block for this process's settings (fill()'s layout). */
static size_t block_size(void)
{
	return (size_t)FDR_BLK_SIZE(FDR_MAX_OWNERS, block_nchunks(), block_nrecs());
}

/*
 * A new block in use from now on: the owners' and the learner's state,
 * then published.  In a fork child other threads go by p->hdr: none must
 * use the block before its owners and its learner are reset.
 */
static void start(struct fdr_blk_hdr *h)
{
	fdr_proc_point_at(h);
	fdr_pstate_reset();
	fdr_owners_setup(h);
	fdr_handoff_setup(h);
	fdr_proc_publish(h);
}

int fdr_block_create(void)
{
	size_t size = block_size();
	struct fdr_blk_hdr *h;
	uint32_t flags;

	h = map_block(size, &flags);
	if (!h)
		return -ENOMEM;
	fdr_st.blk_size = size;
	fill(h, size, flags);
	start(h);
	return 0;
}

/*
 * Another thread is making the block: a few microseconds (memfd_create,
 * ftruncate, mmap).  Waiting for it, bounded, places this thread's fd
 * too; passing it through would leave the child's first fds of all but
 * one thread at kernel numbers.
 *
 * One spin of a wait: a pause hint, so that the 2^20 spins last tens of
 * milliseconds (a scheduler tick or more) rather than one: on a machine
 * with fewer CPUs than spinning threads the maker may be waiting for a CPU
 * the spinners hold.  No syscall (a filter may forbid sched_yield).
 */
static bool wait_for_block(struct fdr_proc *p)
{
	/* A signal handler that interrupted this thread making it. */
	if (fdr_t.moving)
		return false;
	for (unsigned long spins = 1ul << 20; spins; spins--) {
		if (__atomic_load_n(&p->hdr, __ATOMIC_ACQUIRE))
			return true;
		/* Made between the two loads: published before FDR_MADE. */
		if (__atomic_load_n(&p->making, __ATOMIC_ACQUIRE) != FDR_MAKING)
			return __atomic_load_n(&p->hdr, __ATOMIC_ACQUIRE) != NULL;
		fdr_cpu_relax();
	}
	return false;
}

/*
 * The child's own block, made at its first placement: the same layout and
 * settings as its parent's, with nothing in it.  The child's fd table is a
 * copy of its parent's, so its fds sit where its parent's were, but the
 * owners that held those chunks were its parent's threads: the child's
 * threads claim chunks afresh (F_DUPFD finds the free room in them, never
 * clobbering what is there).  The limit is the child's own, inherited.
 * One thread makes it; others wait for it (bounded).
 */
/* The end of this thread's making: as fdr_move_end (moves.h), its own
 * count first, then what other threads see. */
static bool end_making(struct fdr_proc *p, int state)
{
	fdr_t.moving--;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&p->making, state, __ATOMIC_RELEASE);
	return state == FDR_MADE;
}

/* The one making thread's part: the block, or FDR_MAKE_FAILED. */
static bool make_child_block(struct fdr_proc *p, struct fdr_blk_hdr *old)
{
	struct fdr_blk_hdr *h;
	uint32_t flags;

	/* Making it is syscalls too: a sandbox coming waits for it (moves.c)
	 * or, if it came first, none is made.  Pairs as fdr_move_begin. */
	if (!__atomic_load_n(&fdr_st.active, __ATOMIC_SEQ_CST))
		return end_making(p, FDR_MAKE_FAILED);
	h = map_block(fdr_st.blk_size, &flags);
	if (!h)
		return end_making(p, FDR_MAKE_FAILED);  /* no second try per fd */
	fill(h, fdr_st.blk_size, flags);
	h->limit_changes = 0;
	start(h);
	/* The parent's block (or an ancestor's) is of no use here now. */
	SYS_CALL(SYS_munmap, old, fdr_st.blk_size);
	return end_making(p, FDR_MADE);
}

bool fdr_block_for_child(void)
{
	struct fdr_proc *p = fdr_p;
	struct fdr_blk_hdr *old = fdr_st.last_hdr;
	int state = 0;

	if (__atomic_load_n(&p->hdr, __ATOMIC_ACQUIRE))
		return true;
	if (!old || !fdr_st.blk_size)
		return false;
	if (!__atomic_compare_exchange_n(&p->making, &state, FDR_MAKING, false, __ATOMIC_SEQ_CST,
					 __ATOMIC_ACQUIRE))
		return state == FDR_MADE || (state == FDR_MAKING && wait_for_block(p));
	/* A signal handler in this thread must not wait for this (moves.c);
	 * counted after making shows it, lowered before (end_making). */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	fdr_t.moving++;
	return make_child_block(p, old);
}
