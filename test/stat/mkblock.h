/* SPDX-License-Identifier: MIT */
/*
 * A small valid stats block (lib/block.h) in a buffer, for the unit tests
 * of fdr_blk_check() and the fuzz target's seeds: 8 owner records, 63
 * chunks from fd 64, records for fds 0..255.  Two threads (tids 101 and
 * 102) hold chunks 0, 2 and 1; the sparse pool chunk 3; a rotation over
 * both.  Tests corrupt a copy one field at a time.
 */
#ifndef TEST_STAT_MKBLOCK_H
#define TEST_STAT_MKBLOCK_H

#include "block.h"

#include <stdio.h>
#include <string.h>

#define MKB_OWNERS   8u
#define MKB_NCHUNKS  63u
#define MKB_NRECS    256u
#define MKB_OWNERS_OFF  FDR_BLK_HDR_SIZE
#define MKB_CHUNKS_OFF  (MKB_OWNERS_OFF + MKB_OWNERS * FDR_OWNER_SIZE)
#define MKB_RECS_OFF    ((MKB_CHUNKS_OFF + MKB_NCHUNKS * 4u + 7u) & ~7u)
#define MKB_SIZE        (MKB_RECS_OFF + MKB_NRECS * 8u)

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
	h->size = MKB_SIZE;
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
	h->nchunks = MKB_NCHUNKS;
	h->top_chunk = 4;
	h->nowners = 4;
	h->limit = 4096;
	h->nr_open = 4096;
	h->policy = 0;
	h->model = FDR_MODEL_ROTATION;
	h->rot_len = 2;
	h->rot_owner[0] = 2;
	h->rot_owner[1] = 3;
	h->learned_after = 4;
	h->accepted = 12;
	h->observed = 11;
	h->hits = 6;
	h->misses = 1;
	h->owners_off = MKB_OWNERS_OFF;
	h->owner_size = FDR_OWNER_SIZE;
	h->max_owners = MKB_OWNERS;
	h->chunks_off = MKB_CHUNKS_OFF;
	h->recs_off = MKB_RECS_OFF;
	h->nrecs = MKB_NRECS;

	memset(&o, 0, sizeof(o));
	o.kind = FDR_KIND_SPARSE;
	o.chunks = 1;
	o.placed = 1;
	mkb_set_owner(buf, 0, &o);
	o.kind = FDR_KIND_SHARED;
	o.chunks = 0;
	o.placed = 0;
	mkb_set_owner(buf, 1, &o);
	o.kind = FDR_KIND_THREAD;
	o.tid = 101;
	o.chunks = 2;
	o.placed = 7;
	o.probes = 2;
	o.fallback[FDR_FB_FULL] = 1;
	mkb_set_owner(buf, 2, &o);
	o.tid = 102;
	o.chunks = 1;
	o.placed = 4;
	o.probes = 0;
	o.fallback[FDR_FB_FULL] = 0;
	mkb_set_owner(buf, 3, &o);
	mkb_set_chunk(buf, 0, 3);
	mkb_set_chunk(buf, 1, 4);
	mkb_set_chunk(buf, 2, 3);
	mkb_set_chunk(buf, 3, 1);
	/* Thread 101 registered fds 64-69 and 192; 102 fds 70 and 128-131. */
	for (unsigned fd = 64; fd < 70; fd++)
		mkb_set_rec(buf, fd, 101);
	mkb_set_rec(buf, 192, 101);
	mkb_set_rec(buf, 70, 102);
	for (unsigned fd = 128; fd < 132; fd++)
		mkb_set_rec(buf, fd, 102);
	mkb_set_rec(buf, 250, FDR_REC_MAKE(7, 3, 1));
	return MKB_SIZE;
}

#endif
