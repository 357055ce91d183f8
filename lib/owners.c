/* SPDX-License-Identifier: MIT */
/*
 * Owners: each thread that gets fds placed owns 64-fd chunks of the fd
 * space above BASE (geometry.h), claimed on demand, the lowest unclaimed
 * chunk first, so fd numbers stay as compact as the threads' needs allow.
 * The chunk table in the block says who holds each chunk; a claim is one
 * compare-and-swap on its entry, no lock.  When a thread exits, its chunks
 * go back to the pool (pthread key destructor), so short-lived threads do
 * not use up the fd space.
 *
 * Owner records 0 and 1 are the two pools of accepted fds and 2 the pool
 * of lines (block.h); threads (or, under FDRANGE_ACCEPT=roundrobin, the
 * lanes of the rotation first, then the threads) take the lowest free
 * record from FDR_OWN_FIRST on.  With FDRANGE_SLOTS=N threads share N
 * records in turn.  A thread's cached record (proc.h) is its process's:
 * in a fork child every thread starts afresh.
 *
 * Every claim of a chunk, by anyone, goes through claim() and so through
 * the bound (bound.c): fd numbers grow with the fds held, not the threads.
 */
#include "owners.h"
#include "bound.h"
#include "geometry.h"
#include "sys.h"

#include <pthread.h>
#include <stdint.h>

static pthread_key_t exit_key;
static bool have_exit_key;
/* The key's value names the owner: &exit_cookie[o], never NULL. */
static char exit_cookie[FDR_MAX_OWNERS];
/* Owner records threads start at: after the lanes under roundrobin. */
static unsigned first_thread_owner = FDR_OWN_FIRST;

uint32_t fdr_self_tid(void)
{
	struct fdr_thread *t = fdr_self();

	if (__builtin_expect(!t->tid, 0))
		t->tid = (uint32_t)SYS_CALL(SYS_gettid);
	return t->tid;
}

static void note_owner_used(struct fdr_blk_hdr *h, unsigned o)
{
	unsigned n = __atomic_load_n(&h->nowners, __ATOMIC_RELAXED);

	while (n <= o && !__atomic_compare_exchange_n(&h->nowners, &n, o + 1, true,
						      __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* Chunks wholly below @cap (and in the table). */
static unsigned usable_chunks(unsigned long cap)
{
	unsigned below = fdr_geom_nchunks(fdr_st.cfg.base, cap);

	return below < fdr_p->nchunks ? below : fdr_p->nchunks;
}

/* The chunks @o may claim, for a fixed FDRANGE_WIDTH its own range only. */
static void claimable(unsigned o, unsigned long cap, unsigned *first, unsigned *end)
{
	unsigned below = usable_chunks(cap);

	if (o < FDR_OWN_FIRST || !fdr_st.cfg.width) {
		*first = 0;
		*end = below;
		return;
	}
	fdr_geom_claimable(&fdr_st.cfg, o - FDR_OWN_FIRST, below, first, end);
}

enum claim { CLAIMED, TAKEN, REFUSED };

static enum claim claim(unsigned o, unsigned c, unsigned first, unsigned end)
{
	struct fdr_proc *p = fdr_p;
	uint32_t cur = __atomic_load_n(&p->chunks[c], __ATOMIC_RELAXED), top;

	if (cur == fdr_owner_id(o))
		return CLAIMED;
	if (cur || c < first || c >= end)
		return TAKEN;
	if (!fdr_bound_allows(fdr_chunk_lo(fdr_st.cfg.base, c) + FDR_CHUNK_FDS))
		return REFUSED;
	if (!__atomic_compare_exchange_n(&p->chunks[c], &cur, fdr_owner_id(o), false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return cur == fdr_owner_id(o) ? CLAIMED : TAKEN;
	__atomic_fetch_add(&fdr_owner(o)->chunks, 1, __ATOMIC_RELAXED);
	fdr_count(&fdr_owner(o)->claims);
	top = __atomic_load_n(&p->hdr->top_chunk, __ATOMIC_RELAXED);
	while (top <= c && !__atomic_compare_exchange_n(&p->hdr->top_chunk, &top, c + 1, true,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return CLAIMED;
}

bool fdr_owner_claim(unsigned o, unsigned c, unsigned long cap)
{
	unsigned first, end;

	if (c >= fdr_p->nchunks)
		return false;
	claimable(o, cap, &first, &end);
	return claim(o, c, first, end) == CLAIMED;
}

unsigned fdr_owner_claim_lowest(unsigned o, unsigned long cap, bool *bounded)
{
	unsigned first, end, c, from;

	claimable(o, cap, &first, &end);
	from = __atomic_load_n(&fdr_st.claim_from, __ATOMIC_RELAXED);
	c = from < first || fdr_st.cfg.width ? first : from;
	for (; c < end; c++) {
		enum claim r;

		if (__atomic_load_n(&fdr_p->chunks[c], __ATOMIC_RELAXED))
			continue;
		r = claim(o, c, first, end);
		if (r == REFUSED) {
			/* Every chunk above is refused too. */
			if (bounded)
				*bounded = true;
			break;
		}
		if (r == CLAIMED) {
			/* Only forward from what we read: a release may have
			 * lowered it meanwhile, and that lower chunk is free. */
			if (!fdr_st.cfg.width)
				__atomic_compare_exchange_n(&fdr_st.claim_from, &from, c + 1, false,
							    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
			return c;
		}
	}
	return FDR_NO_CHUNK;
}

unsigned fdr_owner_next_chunk(unsigned o, unsigned from, unsigned long cap)
{
	struct fdr_proc *p = fdr_p;
	unsigned top = __atomic_load_n(&p->hdr->top_chunk, __ATOMIC_RELAXED);
	unsigned below = usable_chunks(cap);

	/* A chunk above a lowered limit is held but of no use now. */
	if (top > below)
		top = below;
	for (unsigned c = from; c < top; c++)
		if (__atomic_load_n(&p->chunks[c], __ATOMIC_RELAXED) == fdr_owner_id(o))
			return c;
	return FDR_NO_CHUNK;
}

/* Give @o's chunks and line back; they may still hold fds, which stay valid. */
static void release(unsigned o)
{
	struct fdr_proc *p = fdr_p;
	struct fdr_blk_owner *ow = fdr_owner(o);
	unsigned top = __atomic_load_n(&p->hdr->top_chunk, __ATOMIC_RELAXED);
	unsigned lowest = FDR_NO_CHUNK, line = __atomic_exchange_n(&ow->line, 0, __ATOMIC_RELAXED);

	for (unsigned c = 0; c < top && c < p->nchunks; c++) {
		uint32_t cur = fdr_owner_id(o);

		if (__atomic_compare_exchange_n(&p->chunks[c], &cur, 0, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED) && lowest == FDR_NO_CHUNK)
			lowest = c;
	}
	if (line && line - 1 < p->nchunks * FDR_LINES_PER_CHUNK) {
		uint32_t cur = fdr_owner_id(o);

		__atomic_compare_exchange_n(&p->lines[line - 1], &cur, 0, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
	}
	__atomic_store_n(&ow->lines, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&ow->chunks, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&ow->hint, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&ow->tid, 0, __ATOMIC_RELAXED);
	if (lowest != FDR_NO_CHUNK) {
		unsigned from = __atomic_load_n(&fdr_st.claim_from, __ATOMIC_RELAXED);

		while (from > lowest && !__atomic_compare_exchange_n(&fdr_st.claim_from, &from, lowest,
								     true, __ATOMIC_RELAXED,
								     __ATOMIC_RELAXED))
			;
	}
	/* Last: a new thread may take the record once it reads FREE. */
	__atomic_store_n(&ow->kind, FDR_KIND_FREE, __ATOMIC_RELEASE);
}

static void thread_exit(void *arg)
{
	unsigned o = (unsigned)((const char *)arg - exit_cookie);
	struct fdr_thread *t = &fdr_t;

	/* A key set in an ancestor process names an owner of its block. */
	if (o >= FDR_MAX_OWNERS || !fdr_p->hdr || t->epoch != fdr_p->epoch ||
	    t->owner != fdr_self_word(o))
		return;
	/* Fds this thread makes in later destructors pass through: its
	 * chunks are about to go back. */
	t->owner = FDR_SELF_NONE_NOW;
	if (__atomic_sub_fetch(&fdr_owner(o)->live, 1, __ATOMIC_ACQ_REL) == 0)
		release(o);
}

/* A record for a new thread: the lowest free one, or with FDRANGE_SLOTS=N
 * (or all records taken) record n mod the count, shared. */
static unsigned pick_record(void)
{
	unsigned n = __atomic_fetch_add(&fdr_st.next_thread, 1, __ATOMIC_RELAXED);
	unsigned count = FDR_MAX_OWNERS - first_thread_owner;

	if (fdr_st.cfg.slots && fdr_st.cfg.accept != FDR_ACCEPT_ROUNDROBIN)
		count = fdr_st.cfg.slots;
	if (!fdr_st.cfg.slots || fdr_st.cfg.accept == FDR_ACCEPT_ROUNDROBIN) {
		for (unsigned o = first_thread_owner; o < FDR_MAX_OWNERS; o++) {
			uint32_t k = FDR_KIND_FREE;

			if (__atomic_compare_exchange_n(&fdr_owner(o)->kind, &k, FDR_KIND_THREAD, false,
							__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
				return o;
		}
	}
	return first_thread_owner + n % count;
}

unsigned fdr_owner_self(void)
{
	struct fdr_thread *t = fdr_self();
	unsigned s = t->owner, o;
	struct fdr_blk_owner *ow;

	if (__builtin_expect(s > FDR_SELF_NONE_NOW, 1))
		return fdr_self_index(s);
	if (s == FDR_SELF_NONE_NOW || !__atomic_load_n(&fdr_p->hdr, __ATOMIC_ACQUIRE))
		return FDR_NO_OWNER;
	t->owner = FDR_SELF_NONE_NOW;
	o = pick_record();
	ow = fdr_owner(o);
	__atomic_store_n(&ow->kind, FDR_KIND_THREAD, __ATOMIC_RELAXED);
	__atomic_store_n(&ow->tid, fdr_self_tid(), __ATOMIC_RELAXED);
	__atomic_fetch_add(&ow->live, 1, __ATOMIC_RELAXED);
	fdr_count(&ow->threads);
	note_owner_used(fdr_p->hdr, o);
	/* For keys below 32, glibc stores the value in the thread itself: no
	 * malloc here. */
	if (have_exit_key)
		pthread_setspecific(exit_key, &exit_cookie[o]);
	t->owner = fdr_self_word(o);
	return o;
}

void fdr_owners_setup(struct fdr_blk_hdr *h)
{
	const struct fdr_config *cfg = &fdr_st.cfg;

	__atomic_store_n(&fdr_st.claim_from, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&fdr_st.next_thread, 0, __ATOMIC_RELAXED);
	first_thread_owner = FDR_OWN_FIRST;
	fdr_owner(FDR_OWN_SPARSE)->kind = FDR_KIND_SPARSE;
	fdr_owner(FDR_OWN_SHARED)->kind = FDR_KIND_SHARED;
	fdr_owner(FDR_OWN_LINES)->kind = FDR_KIND_LINES;
	note_owner_used(h, FDR_OWN_LINES);
	if (cfg->accept == FDR_ACCEPT_ROUNDROBIN) {
		unsigned lanes = cfg->slots ? cfg->slots : fdr_st.ncpus;

		if (lanes > FDR_ROT_MAX)
			lanes = FDR_ROT_MAX;
		for (unsigned l = 0; l < lanes; l++)
			fdr_owner(FDR_OWN_FIRST + l)->kind = FDR_KIND_LANE;
		first_thread_owner = FDR_OWN_FIRST + lanes;
		note_owner_used(h, first_thread_owner - 1);
	}
}

void fdr_owners_init(void)
{
	/* Threads need no record until they make or register an fd, and a
	 * failed key only means chunks are not given back at thread exit. */
	have_exit_key = pthread_key_create(&exit_key, thread_exit) == 0;
	/* glibc keeps keys below 32 in the thread itself; a higher one may
	 * make pthread_setspecific allocate, which a wrapper must not. */
	if (have_exit_key && (unsigned long)exit_key >= 32) {
		pthread_key_delete(exit_key);
		have_exit_key = false;
	}
}
