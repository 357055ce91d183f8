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
#include <limits.h>
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
	return kind < FDR_KIND_NR ? fdr_kind_words[kind] : "?";
}

bool st_other_ns(const struct st_proc *p)
{
	return p->nspid && p->nspid != p->pid;
}

long st_shown_tid(const struct st_report *r, long tid)
{
	return r->host_tid && tid ? r->host_tid(r->p, tid) : tid;
}

/* An owner index that names a record in use in our snapshot. */
static bool owner_used(const struct st_blk *b, uint32_t v)
{
	return v && v <= b->hdr.nowners && b->owners[v - 1].kind != FDR_KIND_FREE;
}

int st_owner_of_fd(const struct st_blk *b, long fd)
{
	const struct fdr_blk_hdr *h = &b->hdr;
	long c;
	uint32_t v;

	if (fd < (long)h->base)
		return -1;
	c = (fd - (long)h->base) / (long)FDR_CHUNK;
	/* Entries beyond our snapshot's nowners were claimed after it. */
	if (c >= (long)h->top_chunk || !owner_used(b, (v = b->chunks[c])))
		return -1;
	/* A line pool chunk: each 8-fd line is its holder's. */
	if (v == FDR_OWN_LINES + 1) {
		uint32_t l = b->lines[(fd - (long)h->base) / 8];

		if (owner_used(b, l))
			return (int)l - 1;
	}
	return (int)v - 1;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

struct key_at {
	long key;
	size_t first;   /* index of the first fd with it; then the letter order */
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

/* The serving groups, each fd's group, their counts. */
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
	/* Letters in order of the tid as we see it (gone threads last), or
	 * of the epoll fd: the order a reader of ps -L or ls -l expects. */
	for (size_t g = 0; g < u; g++) {
		long shown = r->b ? st_shown_tid(r, k[g].key) : k[g].key;

		k[g].first = shown > 0 ? (size_t)shown : (size_t)LONG_MAX + (size_t)k[g].key;
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
		r->groups[g].shown = r->b ? st_shown_tid(r, k[g].key) : k[g].key;
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
	/* Below threshold the kernel's numbering stands by rule (an older
	 * block, or none, has 0 there: every line is judged). */
	const long min = r->b ? (long)r->b->hdr.threshold : 0;
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
		if (line * 8 < min) {
			t->low_lines += g[0] >= 0;
			t->low_shared += shared[0];
			t->low_client_shared += shared[2];
			continue;
		}
		t->lines += g[0] >= 0;
		t->shared += shared[0];
		t->sock_lines += g[1] >= 0;
		t->sock_shared += shared[1];
		t->client_lines += g[2] >= 0;
		t->client_shared += shared[2];
	}
}

/* Chunks per owner; in the line pool's chunks, lines per holder. */
static void count_chunks(struct st_report *r, const int *ridx)
{
	const struct st_blk *b = r->b;

	for (uint32_t c = 0; c < b->hdr.top_chunk; c++) {
		uint32_t v = b->chunks[c];

		if (!owner_used(b, v) || ridx[v - 1] < 0)
			continue;
		r->owners[ridx[v - 1]].nchunks++;
		r->claimed_chunks++;
		if (v != FDR_OWN_LINES + 1)
			continue;
		for (uint32_t l = 0; l < FDR_LINES_PER_CHUNK; l++) {
			uint32_t h = b->lines[(size_t)c * FDR_LINES_PER_CHUNK + l];

			if (owner_used(b, h) && ridx[h - 1] >= 0) {
				r->owners[ridx[h - 1]].nlines++;
				r->owners[ridx[v - 1]].nlines++;
			}
		}
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
	if (!b) {
		st_reason_find(r);
		return 0;
	}

	/* Owners in use, in index order: threads and lanes first by index,
	 * the pools (indices below FDR_OWN_FIRST) after them, as the report
	 * lists them. */
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
	count_chunks(r, ridx);
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
		r->range_sets = sat_add(r->range_sets, o->range_sets);
	}
	r->seen = sat_add(sat_add(sat_add(r->placed, r->inplace), sat_add(r->kept, r->fallbacks)),
			  b->hdr.single_kept);
	r->below_threshold = st_lower_bound(p, (long)b->hdr.threshold);

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
			/* Sorted fds, and a line has one owner: a new line is a
			 * new line of that owner's. */
			r->owners[k].open_lines += !i || p->fds[i - 1].fd / 8 != f->fd / 8;
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
	if (!ret)
		st_reason_find(r);
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
	long tid = st_shown_tid(r, o->tid);
	char t[24];

	if (tid > 0 || !o->tid)
		snprintf(t, sizeof(t), "%ld", tid);
	else
		snprintf(t, sizeof(t), "(exited)");
	switch (o->kind) {
	case FDR_KIND_THREAD:
		snprintf(buf, len, "thread %s", t);
		break;
	case FDR_KIND_LANE:
		snprintf(buf, len, "lane %u (tid %s)", ow->idx - FDR_OWN_FIRST, t);
		break;
	case FDR_KIND_SPARSE:
		snprintf(buf, len, "learning pool");
		break;
	case FDR_KIND_LINES:
		snprintf(buf, len, "line pool");
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

/*
 * Runs of fds per owner: its chunks, and its lines in the line pool's
 * chunks (which the pool's own span covers too).  One pass over the
 * table, a sort, a merge of runs that touch.
 */
static int make_spans(struct st_report *r, const int *ridx)
{
	const struct st_blk *b = r->b;
	size_t n = 0, cap = (size_t)b->hdr.top_chunk * (FDR_LINES_PER_CHUNK + 1) + 1;

	r->spans = malloc(cap * sizeof(*r->spans));
	if (!r->spans)
		return -ENOMEM;
	for (uint32_t c = 0; c < b->hdr.top_chunk; c++) {
		uint32_t v = b->chunks[c];
		long lo = (long)b->hdr.base + (long)c * FDR_CHUNK;

		if (!owner_used(b, v) || ridx[v - 1] < 0)
			continue;
		r->spans[n++] = (struct st_span){ (uint32_t)ridx[v - 1], lo, lo + FDR_CHUNK };
		if (v != FDR_OWN_LINES + 1)
			continue;
		for (uint32_t l = 0; l < FDR_LINES_PER_CHUNK; l++) {
			uint32_t h = b->lines[(size_t)c * FDR_LINES_PER_CHUNK + l];

			if (owner_used(b, h) && ridx[h - 1] >= 0)
				r->spans[n++] = (struct st_span){ (uint32_t)ridx[h - 1], lo + 8L * l,
								  lo + 8L * (l + 1) };
		}
	}
	qsort(r->spans, n, sizeof(*r->spans), cmp_span);
	{
		size_t m = 0;

		for (size_t i = 0; i < n; i++) {
			if (m && r->spans[m - 1].owner == r->spans[i].owner &&
			    r->spans[m - 1].hi == r->spans[i].lo)
				r->spans[m - 1].hi = r->spans[i].hi;
			else
				r->spans[m++] = r->spans[i];
		}
		n = m;
	}
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
