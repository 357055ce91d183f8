/* SPDX-License-Identifier: MIT */
/*
 * Learning who serves accepted connections, so that each goes to the
 * chunks of the thread that will use it (FDRANGE_ACCEPT=auto).
 *
 * A server registers a connection with epoll_ctl(EPOLL_CTL_ADD) from the
 * thread that serves it.  Each accepted fd carries, in its record, the
 * accept's sequence number and the prediction made for it; the thread that
 * registers it is the answer.  From the last answers the learner settles on
 * a model:
 *  - local: served by the thread that accepted it (h2o, redis, haproxy
 *    with multi-queue off, trafficserver with accept_threads 0);
 *  - rotation: one thread accepts and deals connections out in a fixed
 *    order over L threads (memcached, trafficserver's ACCEPT thread, the
 *    boss/worker pattern of Netty and Java NIO servers): connection k goes
 *    to the thread at position (k + offset) mod L;
 *  - unpredictable: neither fits (haproxy's default multi-queue, varnish);
 *    such fds are packed in a pool of their own, apart from the threads'
 *    chunks, and `fdrange stat` says so;
 *  - unregistered: the program registers (almost) none of its accepted
 *    connections with epoll (a thread per connection, blocking reads, or
 *    select/poll): after GIVE_UP accepts with fewer than one answer in
 *    eight there is nothing to learn from, and accepted fds stay where the
 *    kernel puts them, with no syscall.  Answers that come later are still
 *    used: the model can settle from there.
 * Until a model fits, accepted fds go alone on an 8-fd line each (the
 * sparse pool, FDR_SPARSE_CHUNKS at most), so the early connections of a
 * long-lived burst leave no shared line behind either.
 *
 * Once settled the learner only checks predictions.  A rotation that drifts
 * (memcached refuses a connection: our counter moved, its own did not)
 * is realigned by the first miss, once: fds accepted before the correction
 * carry an older generation and cannot correct it again.  Too many misses
 * (a quarter of the last 32) and the model is learned again.
 *
 * No lock on the wrapper paths: the learner runs under a try-lock, and an
 * answer that finds it busy is simply not used.  Accepts read the model
 * with relaxed loads; a torn read misplaces one fd, nothing worse.
 */
#include "handoff.h"
#include "owners.h"
#include "pstate.h"

/* The learner's own words are fdr_ps.learner (pstate.h). */
#define RING FDR_HANDOFF_RING
#define WINDOW 32u
#define GIVE_UP 64u

#define E_SEQ(e)  ((uint32_t)(e))
#define E_ACC(e)  ((unsigned)((e) >> 32) & 0xffffu)
#define E_SRV(e)  ((unsigned)((e) >> 48))

void fdr_handoff_setup(struct fdr_blk_hdr *h)
{
	h->model = FDR_MODEL_NONE;
	if (fdr_st.cfg.accept != FDR_ACCEPT_ROUNDROBIN)
		return;
	h->rot_len = fdr_st.cfg.slots ? fdr_st.cfg.slots : fdr_st.ncpus;
	if (h->rot_len > FDR_ROT_MAX)
		h->rot_len = FDR_ROT_MAX;
	for (unsigned r = 0; r < h->rot_len; r++)
		h->rot_owner[r] = FDR_OWN_FIRST + r;
	h->model = FDR_MODEL_ROTATION;
}

static unsigned predict(struct fdr_blk_hdr *h, uint32_t seq, unsigned acc)
{
	unsigned model = __atomic_load_n(&h->model, __ATOMIC_RELAXED), len, o;

	if (fdr_st.cfg.accept == FDR_ACCEPT_THREAD)
		return acc;
	switch (model) {
	case FDR_MODEL_LOCAL:
		return acc;
	case FDR_MODEL_ROTATION:
		len = __atomic_load_n(&h->rot_len, __ATOMIC_RELAXED);
		if (!len || len > FDR_ROT_MAX)
			return FDR_OWN_SPARSE;
		o = __atomic_load_n(&h->rot_owner[(seq + __atomic_load_n(&fdr_ps.learner.rot_off,
									 __ATOMIC_RELAXED)) % len],
				    __ATOMIC_RELAXED);
		if (o >= FDR_MAX_OWNERS)
			return FDR_OWN_SPARSE;
		len = __atomic_load_n(&fdr_owner(o)->kind, __ATOMIC_RELAXED);
		if (len != FDR_KIND_THREAD && len != FDR_KIND_LANE) {
			__atomic_store_n(&fdr_ps.learner.stale, true, __ATOMIC_RELAXED);
			return FDR_OWN_SPARSE;
		}
		return o;
	case FDR_MODEL_UNPREDICTABLE:
		return FDR_OWN_SHARED;
	case FDR_MODEL_UNREGISTERED:
		return FDR_NO_OWNER;
	default:
		return FDR_OWN_SPARSE;
	}
}

static void settle(struct fdr_blk_hdr *h, unsigned model);

/*
 * No answers to learn from: many accepted, (almost) none registered.  Set
 * under the learner's try-lock; a busy learner means answers are coming.
 */
static void give_up(struct fdr_blk_hdr *h, uint32_t seq)
{
	unsigned m = __atomic_load_n(&h->model, __ATOMIC_RELAXED);

	if ((m != FDR_MODEL_NONE && m != FDR_MODEL_LEARNING) || seq < GIVE_UP ||
	    fdr_st.cfg.accept != FDR_ACCEPT_AUTO ||
	    __atomic_load_n(&h->observed, __ATOMIC_RELAXED) * 8 >= seq ||
	    __atomic_exchange_n(&fdr_ps.learner.busy, 1, __ATOMIC_ACQUIRE))
		return;
	m = h->model;
	if (m == FDR_MODEL_NONE || m == FDR_MODEL_LEARNING)
		settle(h, FDR_MODEL_UNREGISTERED);
	__atomic_store_n(&fdr_ps.learner.busy, 0, __ATOMIC_RELEASE);
}

/* The owner the accept numbered @seq by thread @acc goes to.  Fixed
 * ranges (FDRANGE_WIDTH) leave no room for the pools: until a model fits,
 * an accepted fd goes to the accepting thread's range. */
static unsigned owner_for(struct fdr_blk_hdr *h, uint32_t seq, unsigned acc)
{
	unsigned pred = predict(h, seq, acc);

	return pred < FDR_OWN_FIRST && fdr_st.cfg.width ? acc : pred;
}

unsigned fdr_handoff_owner(unsigned acc)
{
	struct fdr_blk_hdr *h = fdr_p->hdr;
	uint32_t seq = (uint32_t)__atomic_fetch_add(&h->accepted, 1, __ATOMIC_RELAXED);
	/* The generation before the prediction: a change landing in between
	 * makes this fd look older than it is, never newer. */
	unsigned g = __atomic_load_n(&fdr_ps.learner.gen, __ATOMIC_ACQUIRE);
	unsigned pred;

	give_up(h, seq);
	pred = owner_for(h, seq, acc);
	__atomic_store_n(&fdr_ps.learner.ring[seq % RING],
			 (uint64_t)(seq + 1u) | (uint64_t)fdr_owner_id(acc) << 32, __ATOMIC_RELAXED);
	fdr_self()->pick = FDR_REC_MAKE(seq, pred == FDR_NO_OWNER ? 0 : fdr_owner_id(pred), g);
	if (pred == FDR_NO_OWNER)
		fdr_count(&h->accepts_left);
	return pred;
}

bool fdr_handoff_is_local(void)
{
	struct fdr_blk_hdr *h = fdr_p->hdr;

	return h && __atomic_load_n(&h->model, __ATOMIC_RELAXED) == FDR_MODEL_LOCAL;
}

unsigned fdr_handoff_next(unsigned acc)
{
	struct fdr_blk_hdr *h = fdr_p->hdr;

	if (!h)
		return FDR_NO_OWNER;
	/* The prediction the next accept will make, unless the model changes
	 * first: nothing recorded, nothing counted. */
	return owner_for(h, (uint32_t)__atomic_load_n(&h->accepted, __ATOMIC_RELAXED), acc);
}

void fdr_handoff_accepted(int fd)
{
	struct fdr_proc *p = fdr_p;
	struct fdr_thread *t = fdr_self();
	uint64_t v = t->pick;

	t->pick = 0;
	if (!v || !p->hdr || fd < 0 || (uint64_t)fd >= p->nrecs || t->forking)
		return;
	/* Also forgets the thread that served the previous fd with this number. */
	__atomic_store_n(&p->recs[fd], v, __ATOMIC_RELAXED);
}

/* Settle on @model (under the try-lock). */
static void settle(struct fdr_blk_hdr *h, unsigned model)
{
	__atomic_store_n(&fdr_ps.learner.rot_off, 0, __ATOMIC_RELAXED);
	fdr_ps.learner.window = 0;
	fdr_ps.learner.waited = 0;
	__atomic_store_n(&h->learned_after, __atomic_load_n(&h->accepted, __ATOMIC_RELAXED),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&h->model, model, __ATOMIC_RELAXED);
	__atomic_fetch_add(&fdr_ps.learner.gen, 1, __ATOMIC_RELEASE);
}

/*
 * Which model the last answers fit, if any.  The answers are the newest
 * RING accepts with a known server, newest first.
 *
 * A rotation is looked for twice.  First by accept number: connection k
 * at position k mod L.  That is exact even when the serving threads
 * register their connections in batches, out of order (trafficserver's
 * net threads do), but a refused connection (accepted, never dealt: the
 * program's rotation does not move) breaks it until the window has passed
 * it.  Then by rank among the answers, which a refusal does not disturb,
 * but which batches do: a gap of not-yet-registered connections makes
 * the answers look like a shorter rotation.  So ranks are tried only when
 * the accept numbers contradict each other, not when they merely leave
 * positions unseen (a batch still to come).  Both must hold for the
 * newest max(2L, MIN_EVIDENCE) accepts or answers, over L distinct threads
 * that include every thread seen serving in the whole window, so that
 * chance (a random hand-off) or a gap almost never passes for one.
 */
#define MIN_EVIDENCE 12u

struct answers {
	uint32_t seq[RING];
	unsigned acc[RING], srv[RING], n;
};

/* The commonest distance (by @key) to the same server's previous answer. */
static unsigned period(const struct answers *a, bool by_seq)
{
	unsigned diffs[RING + 1] = { 0 }, len = 0, best = 0;

	for (unsigned i = 0; i < a->n; i++)
		for (unsigned j = i + 1; j < a->n; j++)
			if (a->srv[j] == a->srv[i]) {
				unsigned d = by_seq ? a->seq[i] - a->seq[j] : j - i;

				if (d <= RING)
					diffs[d]++;
				break;
			}
	for (unsigned d = 1; d <= RING; d++)
		if (diffs[d] > best) {
			best = diffs[d];
			len = d;
		}
	return len <= FDR_ROT_MAX ? len : 0;
}

enum fit { FIT, CONFLICT, INCOMPLETE };

/*
 * Whether the answers to the newest @m accepts (by accept number, or the
 * newest @m answers by rank) fit a rotation of @len: @order[p] is the
 * thread at position p, where an answer's position is its accept number
 * mod @len (@by_seq) or its rank mod @len (rank 0 the newest).  CONFLICT: two
 * threads at one position, or one thread at two; INCOMPLETE: no
 * contradiction, but not enough seen yet.
 */
static enum fit fits_in(const struct answers *a, unsigned len, bool by_seq, unsigned order[],
			unsigned m)
{
	unsigned used = 0;

	if (!len)
		return CONFLICT;
	for (unsigned p = 0; p < len; p++)
		order[p] = FDR_NO_OWNER;
	for (unsigned i = 0; i < a->n; i++) {
		unsigned age = by_seq ? a->seq[0] - a->seq[i] : i;
		/* len != 0 (checked above); the analyzer loses that across the
		 * stores into order[]. */
		unsigned p = (by_seq ? a->seq[i] : i) % len; // NOLINT(clang-analyzer-core.DivideZero)

		if (age >= m)
			break;
		if (order[p] == FDR_NO_OWNER)
			order[p] = a->srv[i];
		if (order[p] != a->srv[i])
			return CONFLICT;
		used++;
	}
	for (unsigned p = 0; p < len; p++)
		for (unsigned q = 0; q < p; q++)
			if (order[p] != FDR_NO_OWNER && order[q] == order[p])
				return CONFLICT;
	/* Enough evidence: by rank every one of the m newest answers; by
	 * accept number most of the m newest accepts (some still in flight). */
	if (used < (by_seq ? m - m / 4 : m))
		return INCOMPLETE;
	for (unsigned p = 0; p < len; p++)
		if (order[p] == FDR_NO_OWNER)
			return INCOMPLETE;
	/* Every thread seen serving in the window takes part. */
	for (unsigned i = 0; i < a->n; i++) {
		bool in = false;

		for (unsigned p = 0; p < len && !in; p++)
			in = order[p] == a->srv[i];
		if (!in)
			return CONFLICT;
	}
	return FIT;
}

/* The newest max(2 len, MIN_EVIDENCE) accepts: what a model is judged on. */
static enum fit fits(const struct answers *a, unsigned len, bool by_seq, unsigned order[])
{
	return fits_in(a, len, by_seq, order, 2 * len > MIN_EVIDENCE ? 2 * len : MIN_EVIDENCE);
}

static void evaluate(struct fdr_blk_hdr *h, uint32_t newest)
{
	struct answers a;
	unsigned local = 0, len, order[FDR_ROT_MAX];
	enum fit f = CONFLICT;

	a.n = 0;
	for (uint32_t k = 0; k < RING; k++) {
		uint32_t s = newest - k;
		uint64_t e = __atomic_load_n(&fdr_ps.learner.ring[s % RING], __ATOMIC_RELAXED);

		if (E_SEQ(e) != s + 1u || !E_SRV(e) || !E_ACC(e))
			continue;
		a.seq[a.n] = s;
		a.acc[a.n] = fdr_owner_index(E_ACC(e));
		a.srv[a.n] = fdr_owner_index(E_SRV(e));
		local += a.acc[a.n] == a.srv[a.n];
		a.n++;
	}
	if (a.n < 8)
		return;
	if (local * 10 >= a.n * 9) {
		settle(h, FDR_MODEL_LOCAL);
		return;
	}
	len = period(&a, true);
	if (len)
		f = fits(&a, len, true, order);
	if (f == FIT) {
		/* Position p holds accept numbers k with k mod len == p. */
		for (unsigned p = 0; p < len; p++)
			__atomic_store_n(&h->rot_owner[p], order[p], __ATOMIC_RELAXED);
		__atomic_store_n(&h->rot_len, len, __ATOMIC_RELAXED);
		settle(h, FDR_MODEL_ROTATION);
		return;
	}
	/*
	 * No contradiction, but the newest accepts are not answered yet: a
	 * burst accepted before its connections were dealt, now registered
	 * by several threads at once, out of order.  If every answer in the
	 * ring fits the rotation, wait for the rest rather than call it
	 * unpredictable; a hand-off that answers only some connections
	 * (varnish registers those that go idle) contradicts itself over
	 * the whole ring and is judged now.  At most RING such looks.
	 */
	if (f == INCOMPLETE && a.n >= WINDOW && fits_in(&a, len, true, order, RING) != CONFLICT &&
	    ++fdr_ps.learner.waited < RING) {
		if (h->model == FDR_MODEL_NONE)
			__atomic_store_n(&h->model, FDR_MODEL_LEARNING, __ATOMIC_RELAXED);
		return;
	}
	len = f == CONFLICT ? period(&a, false) : 0;
	if (len && fits(&a, len, false, order) == FIT) {
		/* The accept d after the newest answer goes to the thread d ranks
		 * after it: rank -d, which is rank (-d mod len). */
		for (unsigned d = 1; d <= len; d++)
			__atomic_store_n(&h->rot_owner[(a.seq[0] + d) % len], order[(len - d % len) % len],
					 __ATOMIC_RELAXED);
		__atomic_store_n(&h->rot_len, len, __ATOMIC_RELAXED);
		settle(h, FDR_MODEL_ROTATION);
		return;
	}
	if (a.n >= WINDOW && h->model != FDR_MODEL_UNPREDICTABLE) {
		/* Enough answers to judge, unregistered or not. */
		__atomic_store_n(&h->judged, a.n, __ATOMIC_RELAXED);
		__atomic_store_n(&h->judged_local, local, __ATOMIC_RELAXED);
		settle(h, FDR_MODEL_UNPREDICTABLE);
	} else if (h->model == FDR_MODEL_NONE) {
		__atomic_store_n(&h->model, FDR_MODEL_LEARNING, __ATOMIC_RELAXED);
	}
}

/* Roundrobin: the lane this thread serves, taking a free one on first use. */
static unsigned lane_of(struct fdr_blk_hdr *h, unsigned pred, uint32_t tid)
{
	struct fdr_thread *t = fdr_self();
	struct fdr_blk_owner *ow;
	uint32_t cur = 0;

	if (t->lane)
		return fdr_owner_index(t->lane);
	if (pred < FDR_OWN_FIRST || pred >= FDR_OWN_FIRST + h->rot_len)
		return FDR_NO_OWNER;
	ow = fdr_owner(pred);
	if (__atomic_compare_exchange_n(&ow->tid, &cur, tid, false, __ATOMIC_RELAXED,
					__ATOMIC_RELAXED) || cur == tid) {
		t->lane = fdr_owner_id(pred);
		return pred;
	}
	return FDR_NO_OWNER;
}

/* Check a settled model's prediction; realign a rotation on its first miss. */
static void check(struct fdr_blk_hdr *h, uint64_t rec, unsigned srv, uint32_t tid)
{
	unsigned pred = fdr_owner_index(FDR_REC_PRED(rec)), len = h->rot_len, p = FDR_NO_OWNER;
	bool rr = fdr_st.cfg.accept == FDR_ACCEPT_ROUNDROBIN;
	bool hit;

	if (rr) {
		unsigned lane = lane_of(h, pred, tid);

		hit = lane == pred;
		if (lane != FDR_NO_OWNER)
			p = lane - FDR_OWN_FIRST;
	} else {
		hit = pred == srv;
		for (unsigned i = 0; i < len && i < FDR_ROT_MAX && p == FDR_NO_OWNER; i++)
			if (h->rot_owner[i] == srv)
				p = i;
	}
	fdr_ps.learner.window = (fdr_ps.learner.window << 1) | (hit ? 0u : 1u);
	if (hit) {
		fdr_count(&h->hits);
		return;
	}
	fdr_count(&h->misses);
	if (h->model == FDR_MODEL_ROTATION && p != FDR_NO_OWNER && len &&
	    FDR_REC_GEN(rec) == (__atomic_load_n(&fdr_ps.learner.gen, __ATOMIC_RELAXED) & 0x7fffu)) {
		unsigned long off = __atomic_load_n(&fdr_ps.learner.rot_off, __ATOMIC_RELAXED);
		unsigned at = (unsigned)((FDR_REC_SEQ(rec) + off) % len);

		/* Connections from now on land where the program sends them. */
		__atomic_store_n(&fdr_ps.learner.rot_off, off + (p + len - at) % len, __ATOMIC_RELAXED);
		__atomic_fetch_add(&fdr_ps.learner.gen, 1, __ATOMIC_RELEASE);
		fdr_count(&h->realignments);
		return;
	}
	if (!rr && fdr_st.cfg.accept == FDR_ACCEPT_AUTO &&
	    __builtin_popcount(fdr_ps.learner.window) > (int)WINDOW / 4) {
		fdr_count(&h->relearns);
		__atomic_store_n(&h->model, FDR_MODEL_LEARNING, __ATOMIC_RELAXED);
		__atomic_fetch_add(&fdr_ps.learner.gen, 1, __ATOMIC_RELEASE);
		fdr_ps.learner.window = 0;
	}
}

static void observe(struct fdr_blk_hdr *h, uint64_t rec, unsigned srv, uint32_t tid)
{
	uint32_t seq = FDR_REC_SEQ(rec);
	uint64_t *slot = &fdr_ps.learner.ring[seq % RING], e = __atomic_load_n(slot, __ATOMIC_RELAXED);
	unsigned model;

	fdr_count(&h->observed);
	if (E_SEQ(e) == seq + 1u && srv != FDR_NO_OWNER)
		__atomic_compare_exchange_n(slot, &e, e | (uint64_t)fdr_owner_id(srv) << 48, false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	if (__atomic_exchange_n(&fdr_ps.learner.busy, 1, __ATOMIC_ACQUIRE))
		return;
	model = h->model;
	if (__atomic_exchange_n(&fdr_ps.learner.stale, false, __ATOMIC_RELAXED) &&
	    fdr_st.cfg.accept == FDR_ACCEPT_AUTO && model == FDR_MODEL_ROTATION) {
		fdr_count(&h->relearns);
		h->model = model = FDR_MODEL_LEARNING;
		__atomic_fetch_add(&fdr_ps.learner.gen, 1, __ATOMIC_RELEASE);
	}
	if (fdr_st.cfg.accept != FDR_ACCEPT_AUTO || model == FDR_MODEL_LOCAL ||
	    model == FDR_MODEL_ROTATION) {
		/* Judge only what the model in force predicted: an fd accepted
		 * while learning went to a pool, which is no prediction. */
		if (FDR_REC_PRED(rec) >= fdr_owner_id(FDR_OWN_FIRST))
			check(h, rec, srv, tid);
	} else if (model != FDR_MODEL_UNPREDICTABLE ||
		   __atomic_load_n(&h->observed, __ATOMIC_RELAXED) % RING == 0) {
		evaluate(h, seq);
	}
	__atomic_store_n(&fdr_ps.learner.busy, 0, __ATOMIC_RELEASE);
}

void fdr_handoff_registered(int fd)
{
	struct fdr_proc *p = fdr_p;
	struct fdr_blk_hdr *h;
	uint32_t tid;
	uint64_t old;
	unsigned srv;

	if (fdr_t.forking || fd < 0 || fdr_single_threaded())
		return;
	h = __atomic_load_n(&p->hdr, __ATOMIC_ACQUIRE);
	if (!h)
		return;
	if ((uint64_t)fd >= p->nrecs) {
		fdr_count(&h->untracked);
		return;
	}
	srv = fdr_owner_self();
	tid = fdr_self_tid();
	/* The common path: one load, one store, to a word only this fd uses. */
	old = __atomic_load_n(&p->recs[fd], __ATOMIC_RELAXED);
	__atomic_store_n(&p->recs[fd], tid, __ATOMIC_RELAXED);
	if (old & FDR_REC_PENDING)
		observe(h, old, srv, tid);
}

void fdr_handoff_created(int fd)
{
	uint64_t *rec;

	if (fd < 0 || (uint64_t)fd >= fdr_p->nrecs || !fdr_p->recs)
		return;
	rec = &fdr_p->recs[fd];
	/* Read first: most records are not pending, and a store would dirty
	 * the line for nothing. */
	if (__atomic_load_n(rec, __ATOMIC_RELAXED) & FDR_REC_PENDING)
		__atomic_store_n(rec, 0, __ATOMIC_RELAXED);
}
