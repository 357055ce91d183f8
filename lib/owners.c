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
 * Owner records 0 and 1 are the two pools of accepted fds (block.h);
 * threads (or, under FDRANGE_ACCEPT=roundrobin, the lanes of the rotation
 * first, then the threads) take the lowest free record from
 * FDR_OWN_FIRST on.  With FDRANGE_SLOTS=N threads share N records in turn.
 */
#include "owners.h"
#include "geometry.h"
#include "sys.h"

#include <pthread.h>
#include <stdint.h>

/* initial-exec: the general TLS model may call malloc on first access. */
#define TLS __thread __attribute__((tls_model("initial-exec")))
/* 0: none yet; 1: being assigned (a signal handler must not start a
 * second assignment); else owner index + 2. */
static TLS unsigned tls_owner;
static TLS uint32_t tls_tid;
/* The fork generation this thread lives in: a thread the child makes has 0. */
static TLS unsigned tls_epoch;
static unsigned fork_owner = FDR_NO_OWNER;  /* in a fork child: the forking thread's */

static pthread_key_t exit_key;
static bool have_exit_key;
/* The key's value names the owner: &exit_cookie[o], never NULL. */
static char exit_cookie[FDR_MAX_OWNERS];
/* Owner records threads start at: after the lanes under roundrobin. */
static unsigned first_thread_owner = FDR_OWN_FIRST;

uint32_t fdr_self_tid(void)
{
	if (__builtin_expect(!tls_tid, 0))
		tls_tid = (uint32_t)SYS_CALL(SYS_gettid);
	return tls_tid;
}

static void note_owner_used(unsigned o)
{
	unsigned n = __atomic_load_n(&fdr_st.hdr->nowners, __ATOMIC_RELAXED);

	while (n <= o && !__atomic_compare_exchange_n(&fdr_st.hdr->nowners, &n, o + 1, true,
						      __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* Chunks wholly below the limit in force (and in the table). */
static unsigned usable_chunks(void)
{
	unsigned long cap = __atomic_load_n(&fdr_st.cap, __ATOMIC_RELAXED);
	unsigned below = fdr_geom_nchunks(fdr_st.cfg.base, cap);

	return below < fdr_st.nchunks ? below : fdr_st.nchunks;
}

/* The chunks @o may claim, for a fixed FDRANGE_WIDTH its own range only. */
static void claimable(unsigned o, unsigned *first, unsigned *end)
{
	unsigned below = usable_chunks();

	if (o < FDR_OWN_FIRST || !fdr_st.cfg.width) {
		*first = 0;
		*end = below;
		return;
	}
	fdr_geom_claimable(&fdr_st.cfg, o - FDR_OWN_FIRST, below, first, end);
}

bool fdr_owner_claim(unsigned o, unsigned c)
{
	unsigned first, end;
	uint32_t cur = 0;

	if (c >= fdr_st.nchunks)
		return false;
	cur = __atomic_load_n(&fdr_st.chunks[c], __ATOMIC_RELAXED);
	if (cur == o + 1)
		return true;
	claimable(o, &first, &end);
	if (cur || c < first || c >= end)
		return false;
	if (!__atomic_compare_exchange_n(&fdr_st.chunks[c], &cur, o + 1, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return cur == o + 1;
	__atomic_fetch_add(&fdr_owner(o)->chunks, 1, __ATOMIC_RELAXED);
	fdr_count(&fdr_owner(o)->claims);
	{
		uint32_t top = __atomic_load_n(&fdr_st.hdr->top_chunk, __ATOMIC_RELAXED);

		while (top <= c && !__atomic_compare_exchange_n(&fdr_st.hdr->top_chunk, &top, c + 1,
								true, __ATOMIC_RELAXED,
								__ATOMIC_RELAXED))
			;
	}
	return true;
}

unsigned fdr_owner_claim_lowest(unsigned o)
{
	unsigned first, end, c, from;

	claimable(o, &first, &end);
	from = __atomic_load_n(&fdr_st.claim_from, __ATOMIC_RELAXED);
	c = from < first || fdr_st.cfg.width ? first : from;
	for (; c < end; c++) {
		if (__atomic_load_n(&fdr_st.chunks[c], __ATOMIC_RELAXED))
			continue;
		if (fdr_owner_claim(o, c)) {
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

unsigned fdr_owner_next_chunk(unsigned o, unsigned from)
{
	unsigned top = __atomic_load_n(&fdr_st.hdr->top_chunk, __ATOMIC_RELAXED);
	unsigned below = usable_chunks();

	/* A chunk above a lowered limit is held but of no use now. */
	if (top > below)
		top = below;
	for (unsigned c = from; c < top; c++)
		if (__atomic_load_n(&fdr_st.chunks[c], __ATOMIC_RELAXED) == o + 1)
			return c;
	return FDR_NO_CHUNK;
}

/* Give @o's chunks back; they may still hold fds, which stay valid. */
static void release(unsigned o)
{
	struct fdr_blk_owner *ow = fdr_owner(o);
	unsigned top = __atomic_load_n(&fdr_st.hdr->top_chunk, __ATOMIC_RELAXED);
	unsigned lowest = FDR_NO_CHUNK;

	for (unsigned c = 0; c < top && c < fdr_st.nchunks; c++) {
		uint32_t cur = o + 1;

		if (__atomic_compare_exchange_n(&fdr_st.chunks[c], &cur, 0, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED) && lowest == FDR_NO_CHUNK)
			lowest = c;
	}
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

	if (o >= FDR_MAX_OWNERS || !fdr_st.hdr)
		return;
	/* Fds this thread makes in later destructors pass through: its
	 * chunks are about to go back. */
	tls_owner = 1;
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
	unsigned s = tls_owner, o;
	struct fdr_blk_owner *ow;

	if (__builtin_expect(s >= 2, 1))
		return s - 2;
	if (s == 1 || !fdr_st.hdr)
		return FDR_NO_OWNER;
	tls_owner = 1;
	o = pick_record();
	ow = fdr_owner(o);
	__atomic_store_n(&ow->kind, FDR_KIND_THREAD, __ATOMIC_RELAXED);
	__atomic_store_n(&ow->tid, fdr_self_tid(), __ATOMIC_RELAXED);
	__atomic_fetch_add(&ow->live, 1, __ATOMIC_RELAXED);
	fdr_count(&ow->threads);
	note_owner_used(o);
	/* For keys below 32, glibc stores the value in the thread itself: no
	 * malloc here. */
	if (have_exit_key)
		pthread_setspecific(exit_key, &exit_cookie[o]);
	tls_owner = o + 2;
	return o;
}

void fdr_owners_init(void)
{
	const struct fdr_config *cfg = &fdr_st.cfg;

	fdr_owner(FDR_OWN_SPARSE)->kind = FDR_KIND_SPARSE;
	fdr_owner(FDR_OWN_SHARED)->kind = FDR_KIND_SHARED;
	note_owner_used(FDR_OWN_SHARED);
	if (cfg->accept == FDR_ACCEPT_ROUNDROBIN) {
		unsigned lanes = cfg->slots ? cfg->slots : fdr_st.ncpus;

		if (lanes > FDR_ROT_MAX)
			lanes = FDR_ROT_MAX;
		for (unsigned l = 0; l < lanes; l++)
			fdr_owner(FDR_OWN_FIRST + l)->kind = FDR_KIND_LANE;
		first_thread_owner = FDR_OWN_FIRST + lanes;
		note_owner_used(first_thread_owner - 1);
	}
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

bool fdr_child_still_single(void)
{
	if (tls_epoch == __atomic_load_n(&fdr_st.fork_epoch, __ATOMIC_RELAXED))
		return true;
	/* A thread the child made: from now on it has threads. */
	__atomic_store_n(&fdr_st.child_single, false, __ATOMIC_RELAXED);
	return false;
}

void fdr_owners_atfork_child(void)
{
	fork_owner = tls_owner >= 2 ? tls_owner - 2 : FDR_NO_OWNER;
	tls_tid = 0;
	tls_epoch = ++fdr_st.fork_epoch;
	fdr_st.child_single = true;
}

void fdr_owners_child_fixup(void)
{
	unsigned self = fork_owner;

	for (unsigned o = first_thread_owner; o < fdr_st.hdr->nowners; o++) {
		struct fdr_blk_owner *ow = fdr_owner(o);

		if (ow->kind != FDR_KIND_THREAD)
			continue;
		if (o == self) {
			ow->live = 1;
			/* The forking thread is the child's first: its tid is the pid. */
			ow->tid = (uint32_t)fdr_st.hdr->pid;
			continue;
		}
		ow->live = 0;
		release(o);
	}
}
