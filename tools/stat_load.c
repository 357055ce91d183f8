/* SPDX-License-Identifier: MIT */
/*
 * Reading a stats block through a bounded reader (struct st_src: a live
 * process's memfd or memory, or a buffer in the tests and the fuzzer):
 * the header first and checked, then only the parts of the tables in use,
 * each checked before use, never past the mapping.  Everything is copied
 * out, nothing dereferenced in place, and the over-aligned owner records
 * land in memory aligned for them.
 */
#include "stat.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ST_REC_WINDOW    8192u         /* records read per pread at most (64 KiB) */

void st_blk_free(struct st_blk *b)
{
	free(b->owners);
	free(b->chunks);
	free(b->lines);
	b->owners = NULL;
	b->chunks = NULL;
	b->lines = NULL;
}

static int src_read(const struct st_src *src, void *buf, size_t len, uint64_t off)
{
	if (off > src->maplen || len > src->maplen - off)
		return -EIO;
	return len ? src->read(src->ctx, buf, len, off) : 0;
}

/* Only the lines of chunks the line pool holds mean anything: the rest
 * are cleared, so that no later step can read a stale holder. */
static void keep_pool_lines(struct st_blk *b)
{
	for (uint32_t c = 0; c < b->hdr.top_chunk; c++)
		if (b->chunks[c] != FDR_OWN_LINES + 1)
			memset(&b->lines[(size_t)c * FDR_LINES_PER_CHUNK], 0,
			       FDR_LINES_PER_CHUNK * sizeof(*b->lines));
}

int st_blk_load(const struct st_src *src, struct st_blk *b, char *why, size_t whylen)
{
	struct fdr_blk_hdr *h = &b->hdr;
	size_t olen, clen, llen;
	int ret;

	b->owners = NULL;
	b->chunks = NULL;
	b->lines = NULL;
	ret = src_read(src, h, sizeof(*h), 0);
	if (ret) {
		snprintf(why, whylen, "cannot read its header: %s", strerror(-ret));
		return ret;
	}
	ret = fdr_blk_check_hdr(h, src->maplen, why, whylen);
	if (ret)
		return ret;
	/* Over-aligned records: aligned_alloc, never calloc. */
	olen = (h->nowners ? h->nowners : 1) * sizeof(struct fdr_blk_owner);
	clen = (h->top_chunk ? h->top_chunk : 1) * sizeof(uint32_t);
	llen = clen * FDR_LINES_PER_CHUNK;
	b->owners = aligned_alloc(_Alignof(struct fdr_blk_owner), olen);
	b->chunks = malloc(clen);
	b->lines = malloc(llen);
	if (!b->owners || !b->chunks || !b->lines) {
		st_blk_free(b);
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	memset(b->owners, 0, olen);
	memset(b->chunks, 0, clen);
	memset(b->lines, 0, llen);
	ret = src_read(src, b->owners, h->nowners * sizeof(struct fdr_blk_owner), h->owners_off);
	if (!ret)
		ret = src_read(src, b->chunks, h->top_chunk * sizeof(uint32_t), h->chunks_off);
	if (!ret)
		ret = src_read(src, b->lines,
			       (size_t)h->top_chunk * FDR_LINES_PER_CHUNK * sizeof(uint32_t),
			       h->lines_off);
	if (ret) {
		st_blk_free(b);
		snprintf(why, whylen, "cannot read its tables: %s", strerror(-ret));
		return ret;
	}
	ret = fdr_blk_check_owners(h, b->owners, why, whylen);
	if (!ret)
		ret = fdr_blk_check_chunks(h, b->chunks, why, whylen);
	if (!ret)
		ret = fdr_blk_check_lines(h, b->chunks, b->lines, why, whylen);
	if (ret)
		st_blk_free(b);
	else
		keep_pool_lines(b);
	return ret;
}

static void apply_rec(struct st_fd *f, uint64_t rec)
{
	f->pending = rec & FDR_REC_PENDING;
	/* Only an fd some epoll watches now was registered by its current
	 * holder: an older record may name the previous one. */
	f->tid = !f->pending && f->watchers ? FDR_REC_TID(rec) : 0;
}

int st_blk_records(const struct st_src *src, const struct st_blk *b, struct st_fd *fds,
		   size_t nfds)
{
	uint64_t *win = calloc(ST_REC_WINDOW, sizeof(*win));
	size_t i = 0;
	int ret = 0;

	if (!win)
		return -ENOMEM;
	/* Windows from one open fd to the last open fd within reach: the
	 * records of open fds, in few reads, whatever their spread. */
	while (i < nfds && (uint64_t)fds[i].fd < b->hdr.nrecs) {
		uint64_t lo = (uint64_t)fds[i].fd;
		size_t j = i;

		while (j + 1 < nfds && (uint64_t)fds[j + 1].fd < b->hdr.nrecs &&
		       (uint64_t)fds[j + 1].fd < lo + ST_REC_WINDOW)
			j++;
		ret = src_read(src, win, ((uint64_t)fds[j].fd - lo + 1) * sizeof(*win),
			       b->hdr.recs_off + lo * sizeof(*win));
		if (ret)
			break;
		for (; i <= j; i++)
			apply_rec(&fds[i], win[(uint64_t)fds[i].fd - lo]);
	}
	free(win);
	return ret;
}
