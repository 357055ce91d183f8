/* SPDX-License-Identifier: MIT */
/*
 * A small valid stats block (lib/block.h, v3, laid out by its
 * fdr_blk_layout(), as the library lays out its own) in a buffer, for the
 * unit tests of fdr_blk_check() and the fuzz target's seeds: 8 owner records,
 * 63 chunks from fd 64, records for fds 0..511.  Two threads (tids 101
 * and 102, owners 3 and 4) hold chunks 0, 2 and 1; the learning pool
 * chunk 3; the line pool chunk 4, whose first line (fds 320-327) thread
 * 102 holds and second (328-335) thread 101; a rotation over both.
 * Tests corrupt a copy one field at a time.
 */
#ifndef TEST_STAT_MKBLOCK_H
#define TEST_STAT_MKBLOCK_H

#include "block.h"

#include <stdio.h>
#include <string.h>

#define MKB_OWNERS   8u
#define MKB_NCHUNKS  63u
#define MKB_NRECS    512u
#define MKB_OWNERS_OFF  FDR_BLK_OWNERS_OFF
#define MKB_CHUNKS_OFF  FDR_BLK_CHUNKS_OFF(MKB_OWNERS)
#define MKB_LINES_OFF   FDR_BLK_LINES_OFF(MKB_OWNERS, MKB_NCHUNKS)
#define MKB_RECS_OFF    FDR_BLK_RECS_OFF(MKB_OWNERS, MKB_NCHUNKS)
#define MKB_SIZE        FDR_BLK_SIZE(MKB_OWNERS, MKB_NCHUNKS, MKB_NRECS)

/* The header of the block in @buf (at least MKB_SIZE bytes, 8-aligned). */
static inline struct fdr_blk_hdr *mkb_hdr(void *buf)
{
	return (struct fdr_blk_hdr *)buf;
}

/* Owner @i, copied in or out with memcpy: @buf need not be 128-aligned. */
static inline void mkb_set_owner(void *buf, unsigned i, const struct fdr_blk_owner *o)
{
	memcpy((char *)buf + MKB_OWNERS_OFF + (size_t)i * FDR_OWNER_SIZE, o, sizeof(*o));
}

static inline void mkb_set_chunk(void *buf, unsigned c, uint32_t v)
{
	memcpy((char *)buf + MKB_CHUNKS_OFF + (size_t)c * 4u, &v, sizeof(v));
}

static inline void mkb_set_line(void *buf, unsigned l, uint32_t v)
{
	memcpy((char *)buf + MKB_LINES_OFF + (size_t)l * 4u, &v, sizeof(v));
}

static inline void mkb_set_rec(void *buf, unsigned fd, uint64_t v)
{
	memcpy((char *)buf + MKB_RECS_OFF + (size_t)fd * 8u, &v, sizeof(v));
}

static inline size_t mkblock(void *buf, int pid)
{
	struct fdr_blk_hdr *h = mkb_hdr(buf);
	struct fdr_blk_owner o;
	static const char *const names[][2] = {
		{ "FDRANGE_SLOTS", "auto" }, { "FDRANGE_BASE", "64" }, { "FDRANGE_WIDTH", "auto" },
		{ "FDRANGE_ACCEPT", "auto" },
	};

	memset(buf, 0, MKB_SIZE);
	memcpy(h->magic, FDR_BLK_MAGIC, 8);
	h->version = FDR_BLK_VERSION;
	h->hdr_size = FDR_BLK_HDR_SIZE;
	h->size = fdr_blk_layout(h, MKB_OWNERS, MKB_NCHUNKS, MKB_NRECS);
	h->pid = pid;
	h->flags = FDR_BLK_ACTIVE;
	snprintf(h->lib_version, sizeof(h->lib_version), "0.2.0");
	h->nsettings = 4;
	for (unsigned i = 0; i < 4; i++) {
		snprintf(h->settings[i].name, sizeof(h->settings[i].name), "%s", names[i][0]);
		snprintf(h->settings[i].value, sizeof(h->settings[i].value), "%s", names[i][1]);
		h->settings[i].from_env = i == 1;
	}
	h->base = 64;
	h->chunk = FDR_CHUNK;
	h->top_chunk = 5;
	h->nowners = 5;
	h->limit = 4096;
	h->nr_open = 4096;
	h->policy = 0;
	h->model = FDR_MODEL_ROTATION;
	h->rot_len = 2;
	h->rot_owner[0] = FDR_OWN_FIRST;
	h->rot_owner[1] = FDR_OWN_FIRST + 1;
	h->learned_after = 4;
	h->accepted = 12;
	h->observed = 11;
	h->hits = 6;
	h->misses = 1;
	h->bound_top = 1024;
	h->why_inactive = FDR_WHY_ACTIVE;

	memset(&o, 0, sizeof(o));
	o.kind = FDR_KIND_SPARSE;
	o.chunks = 1;
	o.placed = 1;
	mkb_set_owner(buf, FDR_OWN_SPARSE, &o);
	o.kind = FDR_KIND_SHARED;
	o.chunks = 0;
	o.placed = 0;
	mkb_set_owner(buf, FDR_OWN_SHARED, &o);
	o.kind = FDR_KIND_LINES;
	o.chunks = 1;
	o.claims = 1;
	mkb_set_owner(buf, FDR_OWN_LINES, &o);
	o.kind = FDR_KIND_THREAD;
	o.tid = 101;
	o.chunks = 2;
	o.lines = 1;
	o.placed = 8;
	o.probes = 2;
	o.claims = 3;
	o.fallback[FDR_FB_FULL] = 1;
	o.fallback[FDR_FB_BOUND] = 1;
	mkb_set_owner(buf, FDR_OWN_FIRST, &o);
	o.tid = 102;
	o.chunks = 1;
	o.placed = 5;
	o.probes = 0;
	o.claims = 2;
	o.fallback[FDR_FB_FULL] = 0;
	o.fallback[FDR_FB_BOUND] = 0;
	o.fallback[FDR_FB_NEAR] = 1;
	mkb_set_owner(buf, FDR_OWN_FIRST + 1, &o);
	/* Owner ids: threads, the learning pool, the line pool. */
	mkb_set_chunk(buf, 0, fdr_owner_id(FDR_OWN_FIRST));
	mkb_set_chunk(buf, 1, fdr_owner_id(FDR_OWN_FIRST + 1));
	mkb_set_chunk(buf, 2, fdr_owner_id(FDR_OWN_FIRST));
	mkb_set_chunk(buf, 3, fdr_owner_id(FDR_OWN_SPARSE));
	mkb_set_chunk(buf, 4, fdr_owner_id(FDR_OWN_LINES));
	mkb_set_line(buf, 4 * FDR_LINES_PER_CHUNK, fdr_owner_id(FDR_OWN_FIRST + 1));
	mkb_set_line(buf, 4 * FDR_LINES_PER_CHUNK + 1, fdr_owner_id(FDR_OWN_FIRST));
	/* Thread 101 registered fds 64-69, 192 and 328; 102 fds 70, 128-131
	 * and 320. */
	for (unsigned fd = 64; fd < 70; fd++)
		mkb_set_rec(buf, fd, 101);
	mkb_set_rec(buf, 192, 101);
	mkb_set_rec(buf, 328, 101);
	mkb_set_rec(buf, 70, 102);
	for (unsigned fd = 128; fd < 132; fd++)
		mkb_set_rec(buf, fd, 102);
	mkb_set_rec(buf, 320, 102);
	mkb_set_rec(buf, 250, FDR_REC_MAKE(7, 3, 1));
	return MKB_SIZE;
}

#endif
