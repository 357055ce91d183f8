/* SPDX-License-Identifier: MIT */
/*
 * From what /proc and the block say to what the report shows: the serving
 * groups (threads with the block, epoll instances without), each owner's
 * open fds, purity and who serves them, the shared 8-fd lines, the totals.
 * Pure: no /proc access beyond the name callback, so the fuzzer drives it.
 * Linear or n log n in the number of fds: a process may have a million.
 */
#include "stat.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char st_letter(int g)
{
	static const char set[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

	if (g < 0 || g >= (int)sizeof(set) - 1)
		return '?';
	return set[g];
}

const char *st_kind_word(uint32_t kind)
{
	static const char *const w[] = { "free", "thread", "lane", "sparse", "shared" };

	_Static_assert(sizeof(w) / sizeof(w[0]) == FDR_KIND_NR, "a word per kind");
	return kind < FDR_KIND_NR ? w[kind] : "?";
}

bool st_never_registered(const struct fdr_blk_hdr *h)
{
	return h->policy == ST_POLICY_AUTO && h->accepted >= 16 && !h->observed &&
	       (h->model == FDR_MODEL_NONE || h->model == FDR_MODEL_LEARNING);
}

const char *st_model_word(const struct fdr_blk_hdr *h)
{
	if (h->policy == ST_POLICY_THREAD)
		return "thread";
	if (h->policy == ST_POLICY_ROUNDROBIN)
		return "roundrobin";
	/* Nothing to learn from: as unpredictable as it gets (see the text). */
	if (st_never_registered(h))
		return "unpredictable";
	return h->model < FDR_MODEL_NR ? fdr_model_words[h->model] : "?";
}

int st_owner_of_fd(const struct st_blk *b, long fd)
{
	const struct fdr_blk_hdr *h = &b->hdr;
	long c;

	if (fd < (long)h->base)
		return -1;
	c = (fd - (long)h->base) / (long)FDR_CHUNK;
	/* Entries beyond our snapshot's nowners were claimed after it. */
	if (c >= (long)h->top_chunk || !b->chunks[c] || b->chunks[c] > h->nowners ||
	    b->owners[b->chunks[c] - 1].kind == FDR_KIND_FREE)
		return -1;
	return (int)b->chunks[c] - 1;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

struct key_at {
	long key;
	size_t first;   /* index of the first fd with it */
	unsigned group;
};

static int cmp_key(const void *a, const void *b)
{
	const struct key_at *x = a, *y = b;

	return (x->key > y->key) - (x->key < y->key);
}

static int cmp_first(const void *a, const void *b)
{
	const struct key_at *x = a, *y = b;

	return (x->first > y->first) - (x->first < y->first);
}

/* fd's group key, or -1: the registering thread, or the one epoll watching it. */
static long key_of(const struct st_report *r, const struct st_fd *f)
{
	if (r->b)
		return f->tid ? (long)f->tid : -1;
	return f->watchers == 1 ? (long)f->watcher : -1;
}

/* Groups lettered in the order of their first fd. */
static int make_groups(struct st_report *r)
{
	struct st_proc *p = r->p;
	struct key_at *k = malloc((p->nfds ? p->nfds : 1) * sizeof(*k));
	size_t n = 0, u = 0;

	if (!k)
		return -ENOMEM;
	for (size_t i = 0; i < p->nfds; i++) {
		long key = key_of(r, &p->fds[i]);

		if (key >= 0)
			k[n++] = (struct key_at){ key, i, 0 };
	}
	/* Stable enough: ties on key keep the lowest first index below. */
	qsort(k, n, sizeof(*k), cmp_key);
	for (size_t i = 0; i < n; i++) {
		if (u && k[u - 1].key == k[i].key) {
			if (k[i].first < k[u - 1].first)
				k[u - 1].first = k[i].first;
			continue;
		}
		k[u++] = k[i];
	}
	qsort(k, u, sizeof(*k), cmp_first);
	r->groups = calloc(u ? u : 1, sizeof(*r->groups));
	if (!r->groups) {
		free(k);
		return -ENOMEM;
	}
	r->ngroups = (unsigned)u;
	for (size_t g = 0; g < u; g++) {
		r->groups[g].key = k[g].key;
		k[g].group = (unsigned)g;
		if (r->b && r->name_of)
			r->name_of(p, k[g].key, r->groups[g].name, sizeof(r->groups[g].name));
		else if (!r->b)
			snprintf(r->groups[g].name, sizeof(r->groups[g].name), "epoll fd %ld",
				 k[g].key);
	}
	qsort(k, u, sizeof(*k), cmp_key);
	r->gsorted = malloc((u ? u : 1) * sizeof(*r->gsorted));
	if (!r->gsorted) {
		free(k);
		return -ENOMEM;
	}
	for (size_t g = 0; g < u; g++)
		r->gsorted[g] = k[g].group;
	for (size_t i = 0; i < p->nfds; i++) {
		struct st_fd *f = &p->fds[i];
		struct key_at want = { key_of(r, f), 0, 0 }, *hit;
		struct st_group *g;

		f->group = -1;
		if (want.key < 0)
			continue;
		hit = bsearch(&want, k, u, sizeof(*k), cmp_key);
		if (!hit)
			continue;
		f->group = (int)hit->group;
		g = &r->groups[f->group];
		g->fds++;
		g->sockets += f->is_socket;
		g->clients += f->tcp == ST_TCP_CLIENT;
	}
	free(k);
	return 0;
}

struct pair {
	unsigned bucket;
	int group;
};

static int cmp_pair(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	if (x->bucket != y->bucket)
		return x->bucket < y->bucket ? -1 : 1;
	return (x->group > y->group) - (x->group < y->group);
}

static int cmp_served(const void *a, const void *b)
{
	const struct st_served *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return (x->group > y->group) - (x->group < y->group);
}

/*
 * Who serves the open fds of each owner (and of "low" and "unowned"):
 * (bucket, group) pairs sorted, counted in runs.  n log n.
 */
static int served_by(struct st_report *r, const int *bucket_of_fd, unsigned nbuckets,
		     struct st_served **by, unsigned *nby)
{
	struct st_proc *p = r->p;
	struct pair *pr = malloc((p->nfds ? p->nfds : 1) * sizeof(*pr));
	struct st_served *all;
	size_t n = 0, runs = 0;

	if (!pr)
		return -ENOMEM;
	for (size_t i = 0; i < p->nfds; i++)
		if (bucket_of_fd[i] >= 0 && p->fds[i].group >= 0)
			pr[n++] = (struct pair){ (unsigned)bucket_of_fd[i], p->fds[i].group };
	qsort(pr, n, sizeof(*pr), cmp_pair);
	for (size_t i = 0; i < n; i++)
		runs += !i || cmp_pair(&pr[i - 1], &pr[i]) != 0;
	all = calloc(runs ? runs : 1, sizeof(*all));
	if (!all) {
		free(pr);
		return -ENOMEM;
	}
	runs = 0;
	for (size_t i = 0; i < n; i++) {
		if (!i || cmp_pair(&pr[i - 1], &pr[i]) != 0) {
			all[runs].group = pr[i].group;
			runs++;
			nby[pr[i].bucket]++;
		}
		all[runs - 1].n++;
	}
	/* Buckets come in order: hand each its slice of @all. */
	for (unsigned b = 0, off = 0; b < nbuckets; b++) {
		by[b] = all + off;
		qsort(by[b], nby[b], sizeof(*by[b]), cmp_served);
		off += nby[b];
	}
	r->served_mem = all;
	free(pr);
	return 0;
}

static int make_spans(struct st_report *r, const int *ridx);

/*
 * Purity among accepted client sockets only, per owner bucket: what the
 * hand-off model decides.  A proxy's own upstream sockets, which it may
 * pass between threads, and a main thread's wake-up fds made for its
 * workers are left out.  Sorted (bucket, group) pairs: linear after the
 * sort.
 */
static int client_purity(struct st_report *r, const int *bucket_of_fd)
{
	struct st_proc *p = r->p;
	struct pair *pr = malloc((p->nfds ? p->nfds : 1) * sizeof(*pr));
	size_t n = 0;

	if (!pr)
		return -ENOMEM;
	for (size_t i = 0; i < p->nfds; i++)
		if (bucket_of_fd[i] >= 0 && bucket_of_fd[i] < (int)r->nowners &&
		    p->fds[i].group >= 0 && p->fds[i].tcp == ST_TCP_CLIENT)
			pr[n++] = (struct pair){ (unsigned)bucket_of_fd[i], p->fds[i].group };
	qsort(pr, n, sizeof(*pr), cmp_pair);
	for (size_t i = 0; i < n;) {
		size_t j = i, best = 0;
		unsigned k = pr[i].bucket;

		while (j < n && pr[j].bucket == k) {
			size_t run = j;

			while (j < n && !cmp_pair(&pr[run], &pr[j]))
				j++;
			if (j - run > best)
				best = j - run;
		}
		r->owners[k].client_purity = 100.0 * (double)best / (double)(j - i);
		i = j;
	}
	free(pr);
	return 0;
}

static void tally_lines(struct st_report *r)
{
	const struct st_proc *p = r->p;
	struct st_lines *t = &r->t;
	size_t i = 0;

	memset(t, 0, sizeof(*t));
	while (i < p->nfds) {
		long line = p->fds[i].fd / 8;
		int g[3] = { -1, -1, -1 };     /* all, sockets, clients */
		bool shared[3] = { false, false, false };

		for (; i < p->nfds && p->fds[i].fd / 8 == line; i++) {
			const struct st_fd *f = &p->fds[i];
			const bool in[3] = { true, f->is_socket, f->tcp == ST_TCP_CLIENT };

			if (f->group < 0)
				continue;
			for (int k = 0; k < 3; k++) {
				if (!in[k])
					continue;
				if (g[k] < 0)
					g[k] = f->group;
				else if (g[k] != f->group)
					shared[k] = true;
			}
		}
		t->lines += g[0] >= 0;
		t->shared += shared[0];
		t->sock_lines += g[1] >= 0;
		t->sock_shared += shared[1];
		t->client_lines += g[2] >= 0;
		t->client_shared += shared[2];
	}
}

int st_analyze(struct st_report *r)
{
	struct st_proc *p = r->p;
	const struct st_blk *b = r->b;
	int *bucket = NULL, *ridx = NULL;
	struct st_served **by = NULL;
	unsigned *nby = NULL, nb;
	int ret;

	r->min_purity = ST_NO_PURITY;
	r->min_client_purity = ST_NO_PURITY;
	for (size_t i = 0; i < p->nfds; i++)
		r->client_sockets += p->fds[i].tcp == ST_TCP_CLIENT;
	ret = make_groups(r);
	if (ret)
		return ret;
	tally_lines(r);
	if (!b)
		return 0;

	/* Owners in use, in index order: threads and lanes first by index,
	 * the pools (indices 0 and 1) after them, as the report lists them. */
	r->owners = calloc(b->hdr.nowners ? b->hdr.nowners : 1, sizeof(*r->owners));
	ridx = malloc((b->hdr.nowners ? b->hdr.nowners : 1) * sizeof(*ridx));
	if (!r->owners || !ridx) {
		ret = -ENOMEM;
		goto out;
	}
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = 0; i < b->hdr.nowners; i++) {
			const struct fdr_blk_owner *o = &b->owners[i];
			bool pool = i < FDR_OWN_FIRST;

			if (pass == 0)
				ridx[i] = -1;
			if (o->kind == FDR_KIND_FREE || pool != (pass == 1))
				continue;
			ridx[i] = (int)r->nowners;
			r->owners[r->nowners].idx = i;
			r->owners[r->nowners].purity = ST_NO_PURITY;
			r->owners[r->nowners].client_purity = ST_NO_PURITY;
			r->nowners++;
		}
	for (uint32_t c = 0; c < b->hdr.top_chunk; c++) {
		uint32_t v = b->chunks[c];

		if (v && v <= b->hdr.nowners && ridx[v - 1] >= 0) {
			r->owners[ridx[v - 1]].nchunks++;
			r->claimed_chunks++;
		}
	}
	ret = make_spans(r, ridx);
	if (ret)
		goto out;
	for (unsigned k = 0; k < r->nowners; k++) {
		struct st_owner *ow = &r->owners[k];
		const struct fdr_blk_owner *o = &b->owners[ow->idx];

		ow->group = o->tid && (o->kind == FDR_KIND_THREAD || o->kind == FDR_KIND_LANE) ?
			    st_group_of_key(r, (long)o->tid) : -1;
		for (unsigned f = 0; f < FDR_FB_NR; f++) {
			ow->fallbacks = sat_add(ow->fallbacks, o->fallback[f]);
			r->fb_why[f] = sat_add(r->fb_why[f], o->fallback[f]);
		}
		r->placed = sat_add(r->placed, o->placed);
		r->inplace = sat_add(r->inplace, o->inplace);
		r->kept = sat_add(r->kept, o->kept);
		r->fallbacks = sat_add(r->fallbacks, ow->fallbacks);
		r->probes = sat_add(r->probes, o->probes);
		r->claims = sat_add(r->claims, o->claims);
	}

	/* Buckets: owners 0..nowners-1, then "low", then "unowned". */
	nb = r->nowners + 2;
	bucket = malloc((p->nfds ? p->nfds : 1) * sizeof(*bucket));
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	by = calloc(nb, sizeof(*by));
	nby = calloc(nb, sizeof(*nby));
	if (!bucket || !by || !nby) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < p->nfds; i++) {
		struct st_fd *f = &p->fds[i];
		int o = st_owner_of_fd(b, f->fd);
		int k = o >= 0 ? ridx[o] : -1;

		f->owner = o;
		if (f->fd < (long)b->hdr.base) {
			bucket[i] = (int)r->nowners;
			r->low_open++;
		} else if (k < 0) {
			bucket[i] = (int)r->nowners + 1;
			r->unowned_open++;
		} else {
			bucket[i] = k;
			r->owners[k].open++;
			r->owners[k].served += f->group >= 0;
		}
	}
	ret = served_by(r, bucket, nb, by, nby);
	if (!ret)
		ret = client_purity(r, bucket);
	if (ret)
		goto out;
	for (unsigned k = 0; k < r->nowners; k++) {
		struct st_owner *ow = &r->owners[k];
		uint32_t kind = b->owners[ow->idx].kind;

		ow->by = by[k];
		ow->nby = nby[k];
		if ((kind == FDR_KIND_THREAD || kind == FDR_KIND_LANE) && ow->client_purity >= 0 &&
		    (r->min_client_purity < 0 || ow->client_purity < r->min_client_purity))
			r->min_client_purity = ow->client_purity;
		if (!ow->served)
			continue;
		ow->purity = 100.0 * ow->by[0].n / ow->served;
		if ((kind == FDR_KIND_THREAD || kind == FDR_KIND_LANE) &&
		    (r->min_purity < 0 || ow->purity < r->min_purity))
			r->min_purity = ow->purity;
	}
	r->low_by = by[r->nowners];
	r->low_nby = nby[r->nowners];
	r->unowned_by = by[r->nowners + 1];
	r->unowned_nby = nby[r->nowners + 1];
out:
	free(bucket);
	free(ridx);
	free(by);
	free(nby);
	return ret;
}

int st_group_of_key(const struct st_report *r, long key)
{
	size_t lo = 0, hi = r->ngroups;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		long k = r->groups[r->gsorted[mid]].key;

		if (k == key)
			return (int)r->gsorted[mid];
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

size_t st_lower_bound(const struct st_proc *p, long fd)
{
	size_t lo = 0, hi = p->nfds;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->fds[mid].fd < fd)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void st_owner_label(const struct st_report *r, const struct st_owner *ow, char *buf,
		    size_t len)
{
	const struct fdr_blk_owner *o = &r->b->owners[ow->idx];

	switch (o->kind) {
	case FDR_KIND_THREAD:
		snprintf(buf, len, "thread %u", o->tid);
		break;
	case FDR_KIND_LANE:
		snprintf(buf, len, "lane %u (tid %u)", ow->idx - FDR_OWN_FIRST, o->tid);
		break;
	default:
		snprintf(buf, len, "%s pool", st_kind_word(o->kind));
		break;
	}
}

static int cmp_span(const void *a, const void *b)
{
	const struct st_span *x = a, *y = b;

	if (x->owner != y->owner)
		return x->owner < y->owner ? -1 : 1;
	return (x->lo > y->lo) - (x->lo < y->lo);
}

/* Runs of consecutive chunks per owner: one pass over the table, a sort. */
static int make_spans(struct st_report *r, const int *ridx)
{
	const struct st_blk *b = r->b;
	size_t n = 0;

	r->spans = malloc((b->hdr.top_chunk ? b->hdr.top_chunk : 1) * sizeof(*r->spans));
	if (!r->spans)
		return -ENOMEM;
	for (uint32_t c = 0; c < b->hdr.top_chunk; c++) {
		uint32_t v = b->chunks[c];

		if (!v || v > b->hdr.nowners || ridx[v - 1] < 0)
			continue;
		if (n && r->spans[n - 1].owner == (uint32_t)ridx[v - 1] && r->spans[n - 1].hi == c)
			r->spans[n - 1].hi = c + 1;
		else
			r->spans[n++] = (struct st_span){ (uint32_t)ridx[v - 1], c, c + 1 };
	}
	qsort(r->spans, n, sizeof(*r->spans), cmp_span);
	r->nspans = n;
	for (size_t i = 0; i < n; i++) {
		struct st_owner *ow = &r->owners[r->spans[i].owner];

		if (!ow->nspans)
			ow->span0 = i;
		ow->nspans++;
	}
	return 0;
}

void st_report_free(struct st_report *r)
{
	free(r->gsorted);
	free(r->spans);
	r->gsorted = NULL;
	r->spans = NULL;
	free(r->groups);
	free(r->owners);
	free(r->served_mem);
	r->groups = NULL;
	r->owners = NULL;
	r->served_mem = NULL;
}
