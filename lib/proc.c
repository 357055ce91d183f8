/* SPDX-License-Identifier: MIT */
/*
 * One process, one block, however the process was made.
 *
 * A child of fork() shares its parent's block mapping (MAP_SHARED): a
 * write through it would change the parent's counters and chunk table.
 * fork() runs our handlers, but _Fork(), clone(SIGCHLD) and posix_spawn's
 * clone run none, and a grandchild inherits whatever state its parent had
 * left.  So the words that say "this is my block" live in one page marked
 * MADV_WIPEONFORK: the kernel hands every child (whatever made it, short
 * of CLONE_VM) that page zeroed.  A zero page means a new process that has
 * no block of its own yet; it makes one at its first placement, copied
 * from the block it still maps (fdr_st.last_hdr).  Nothing else tells a
 * child apart, and nothing else needs a syscall: the check is one load.
 *
 * Threads: their cached words (owner, tid, hand-off state) carry the epoch
 * of the process they were filled in; a thread that finds another epoch
 * renews them.  Epochs grow along each line of descent (fdr_st.epoch_next
 * is inherited), so a thread never mistakes an ancestor's words for its
 * process's.
 *
 * Single-threadedness: glibc never sets __libc_single_threaded again, not
 * even in a fork child.  Our fork handler marks the forking thread as the
 * child's only thread (home = the child's epoch); a thread the child makes
 * has home 0, and its first wrapper call ends the child's single-threaded
 * time.  A child that no handler told about (_Fork, clone) is adopted by
 * the first thread that calls a wrapper there, which is taken for the
 * forking one: at worst a threaded child is taken for single-threaded
 * until another of its threads comes by, and its fds keep the kernel's
 * numbers meanwhile, the harmless direction.
 *
 * Where MADV_WIPEONFORK is refused (Linux before 4.14), the page is a
 * static one and only fork()'s handler clears it: _Fork() and clone()
 * children then write their parent's block, as before the page existed.
 */
#include "proc.h"
#include "sys.h"

#include <sys/mman.h>

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif

static struct fdr_proc fallback;
struct fdr_proc *fdr_p FDR_HIDDEN = &fallback;
FDR_TLS struct fdr_thread fdr_t FDR_HIDDEN;

static unsigned new_epoch(void)
{
	return __atomic_add_fetch(&fdr_st.epoch_next, 1, __ATOMIC_RELAXED);
}

int fdr_proc_start(void)
{
	long r = SYS_CALL(SYS_mmap, 0L, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct fdr_proc *p;

	fallback.epoch = new_epoch();
	if (r < 0 && r > -4096)
		return (int)r;
	/* The raw syscall returns the address as a long; there is no other way. */
	p = (struct fdr_proc *)r; // NOLINT(performance-no-int-to-ptr)
	if (SYS_CALL(SYS_madvise, p, 4096, MADV_WIPEONFORK) < 0) {
		SYS_CALL(SYS_munmap, p, 4096);
		return -EINVAL;
	}
	p->epoch = fallback.epoch;
	__atomic_store_n(&fdr_p, p, __ATOMIC_RELEASE);
	return 0;
}

void fdr_thread_renew(unsigned epoch)
{
	struct fdr_thread *t = &fdr_t;

	t->owner = FDR_SELF_UNSET;
	t->tid = 0;
	t->pick = 0;
	t->lane = 0;
	/* A new task starts without a kernel range (fork, clone). */
	t->range_lo = 0;
	t->range_hi = 0;
	t->range_stale = 0;
	t->accepting = 0;
	/* Owner indices are the new process's own. */
	for (unsigned i = 0; i < FDR_BACKOFF_SLOTS; i++)
		t->backoff[i].owner = 0;
	__atomic_store_n(&t->epoch, epoch, __ATOMIC_RELAXED);
}

void fdr_proc_adopt(void)
{
	struct fdr_proc *p = fdr_p;
	unsigned want = 0, e = new_epoch();

	__atomic_store_n(&p->child, true, __ATOMIC_RELAXED);
	if (__atomic_compare_exchange_n(&p->epoch, &want, e, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		fdr_t.home = e;
}

void fdr_proc_atfork_child(void)
{
	struct fdr_proc *p = fdr_p;

	/* The wiped page is zero already; the static fallback is not. */
	__builtin_memset(p, 0, sizeof(*p));
	p->child = true;
	p->epoch = new_epoch();
	fdr_t.home = p->epoch;
}

void fdr_proc_point_at(struct fdr_blk_hdr *h)
{
	struct fdr_proc *p = fdr_p;

	p->owners = (struct fdr_blk_owner *)((char *)h + h->owners_off);
	p->chunks = (uint32_t *)((char *)h + h->chunks_off);
	p->lines = (uint32_t *)((char *)h + h->lines_off);
	p->recs = (uint64_t *)((char *)h + h->recs_off);
	p->nchunks = h->nchunks;
	p->nrecs = h->nrecs;
	fdr_st.last_hdr = h;
}

void fdr_proc_publish(struct fdr_blk_hdr *h)
{
	__atomic_store_n(&fdr_p->hdr, h, __ATOMIC_RELEASE);
}
