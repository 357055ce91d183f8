/* SPDX-License-Identifier: MIT */
/*
 * Writes the hand-made seeds of fuzz/corpus/block (input layout: see
 * fuzz_block.c): valid v3 blocks of every model, policy and reason the
 * library places nothing, with the line pool's lines held, and blocks
 * corrupted one way each.  The fuzzer's own finds are merged in by run.sh.
 *
 *   cc -D_GNU_SOURCE -Ilib -Itest/stat fuzz/block_seeds.c -o /tmp/block_seeds &&
 *   /tmp/block_seeds fuzz/corpus/block
 */
#include "mkblock.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Alignas(128) unsigned char blk[MKB_SIZE];
static const char *dir;
static unsigned n;

static void emit(const char *name, uint64_t seed, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/seed-%02u-%s", dir, n++, name);
	f = fopen(path, "wb");
	if (!f || fwrite(&seed, 8, 1, f) != 1 || fwrite(blk, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* Owner FDR_OWN_FIRST with busy 2: only 0 and 1 are. */
static void owner_busy(void *buf)
{
	struct fdr_blk_owner o;

	memcpy(&o, (char *)buf + MKB_OWNERS_OFF + (size_t)FDR_OWN_FIRST * FDR_OWNER_SIZE, sizeof(o));
	o.busy = 2;
	mkb_set_owner(buf, FDR_OWN_FIRST, &o);
}

int main(int argc, char **argv)
{
	struct fdr_blk_hdr *h = mkb_hdr(blk);
	const uint64_t seed = 0x0000123456789a40ull | 200;  /* 200 fds, gaps up to ~97 */

	/* Two digits of seed numbers: fewer than 100 seeds. */

	if (argc != 2) {
		fprintf(stderr, "usage: block_seeds DIR\n");
		return 2;
	}
	dir = argv[1];
	mkblock(blk, 7);
	emit("valid", seed, MKB_SIZE);
	emit("valid-few-fds", 0x3, MKB_SIZE);
	for (uint32_t model = 0; model < FDR_MODEL_NR; model++) {
		char name[32];

		mkblock(blk, 7);
		h->model = model;
		snprintf(name, sizeof(name), "model-%u", model);
		emit(name, seed, MKB_SIZE);
	}
	mkblock(blk, 7);
	h->policy = 1;
	emit("policy-thread", seed, MKB_SIZE);
	mkblock(blk, 7);
	h->policy = 2;
	{
		struct fdr_blk_owner o;

		memset(&o, 0, sizeof(o));
		o.kind = FDR_KIND_LANE;
		o.tid = 103;
		o.chunks = 1;
		mkb_set_owner(blk, 5, &o);
		h->nowners = 6;
		mkb_set_chunk(blk, 5, 6);
		h->top_chunk = 6;
	}
	emit("roundrobin-lane", seed, MKB_SIZE);
	mkblock(blk, 7);
	h->fixed_width = 128;
	emit("fixed-width", seed, MKB_SIZE);
	mkblock(blk, 7);
	h->top_chunk = MKB_NCHUNKS;
	for (unsigned c = 0; c < MKB_NCHUNKS; c++)
		mkb_set_chunk(blk, c, c % 5);  /* alternating, unclaimed, beyond nowners */
	emit("all-chunks-alternating", seed, MKB_SIZE);
	mkblock(blk, 7);
	snprintf(h->lib_version, sizeof(h->lib_version), "\033[31m\xc2\x9b");
	snprintf(h->settings[0].value, sizeof(h->settings[0].value), "\033]52;c;eA==\007");
	snprintf(h->settings[1].name, sizeof(h->settings[1].name), "FDRANGE_\033X");
	emit("escapes", seed, MKB_SIZE);

	for (uint32_t why = 0; why < FDR_WHY_NR; why++) {
		char name[32];

		mkblock(blk, 7);
		h->why_inactive = why;
		h->flags = why ? 0 : FDR_BLK_ACTIVE;
		if (why == FDR_WHY_CONFIG)
			snprintf(h->why_msg, sizeof(h->why_msg), "FDRANGE_SLOTS=\"\033[2J\": not a number");
		snprintf(name, sizeof(name), "why-%u", why);
		emit(name, seed, MKB_SIZE);
	}
	mkblock(blk, 7);
	h->limit = 100;  /* no chunk fits: the limit reason */
	emit("limit-below-first-chunk", seed, MKB_SIZE);
	mkblock(blk, 7);
	for (unsigned l = 0; l < FDR_LINES_PER_CHUNK; l++)
		mkb_set_line(blk, 4 * FDR_LINES_PER_CHUNK + l, FDR_OWN_FIRST + 1 + l % 2);
	emit("line-pool-full", seed, MKB_SIZE);
	mkblock(blk, 7);
	mkb_set_line(blk, 4 * FDR_LINES_PER_CHUNK + 3, MKB_OWNERS);  /* beyond nowners: a race */
	emit("line-holder-beyond-nowners", seed, MKB_SIZE);
	mkblock(blk, 7);
	h->bound_top = 2048;
	h->open_counted = 992;
	h->counts = 3;
	h->accepts_left = 40;
	h->model = FDR_MODEL_UNREGISTERED;
	emit("bound-counted-unregistered", seed, MKB_SIZE);
	mkblock(blk, 7);
	h->nchunks = 0;
	h->top_chunk = 0;
	h->nowners = 0;
	h->lines_off = 0;
	emit("no-chunks", seed, MKB_SIZE);
	mkblock(blk, 7);
	memcpy(h->magic, "FDRSTAT2", 8);
	h->version = 2;
	emit("older-release", seed, MKB_SIZE);

	mkblock(blk, 7);
	emit("truncated-header", seed, 100);
	emit("truncated-owners", seed, MKB_OWNERS_OFF + 200);
	mkblock(blk, 7);
	h->fixed_width = 0x7fffffc0u;
	emit("huge-width", seed, MKB_SIZE);
	mkblock(blk, 7);
	h->chunks_off = MKB_SIZE + 4096;
	emit("chunks-beyond", seed, MKB_SIZE);
	mkblock(blk, 7);
	h->owners_off = ~0ull - 63;
	emit("owners-off-wraps", seed, MKB_SIZE);
	mkblock(blk, 7);
	h->nowners = 5000;
	emit("nowners-big", seed, MKB_SIZE);
	mkblock(blk, 7);
	h->nchunks = 0xffffffffu;
	emit("nchunks-wraps", seed, MKB_SIZE);
	mkblock(blk, 7);
	h->rot_len = 3;
	h->rot_owner[2] = 4000;
	emit("rot-owner-big", seed, MKB_SIZE);
	mkblock(blk, 7);
	memset(h->lib_version, 'x', sizeof(h->lib_version));
	emit("no-nul", seed, MKB_SIZE);
	mkblock(blk, 7);
	h->size = MKB_SIZE * 4;
	emit("size-beyond-map", seed, MKB_SIZE);
	mkblock(blk, 7);
	mkb_set_line(blk, 4 * FDR_LINES_PER_CHUNK + 6, 0x7fffffffu);
	emit("line-holder-big", seed, MKB_SIZE);
	mkblock(blk, 7);
	mkb_set_line(blk, 4 * FDR_LINES_PER_CHUNK + 6, FDR_OWN_LINES + 1);
	emit("line-held-by-its-pool", seed, MKB_SIZE);
	mkblock(blk, 7);
	h->lines_off = MKB_CHUNKS_OFF + 4;
	emit("lines-overlap-chunks", seed, MKB_SIZE);
	mkblock(blk, 7);
	h->why_inactive = 77;
	emit("why-unknown", seed, MKB_SIZE);
	mkblock(blk, 7);
	memset(h->why_msg, 'm', sizeof(h->why_msg));
	emit("why-msg-no-nul", seed, MKB_SIZE);
	mkblock(blk, 7);
	owner_busy(blk);
	emit("owner-busy-2", seed, MKB_SIZE);
	return 0;
}
