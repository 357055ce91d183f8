/* SPDX-License-Identifier: MIT */
/*
 * Writes the hand-made seeds of fuzz/corpus/block (input layout: see
 * fuzz_block.c): valid blocks of every model and policy, and blocks
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

int main(int argc, char **argv)
{
	struct fdr_blk_hdr *h = mkb_hdr(blk);
	const uint64_t seed = 0x0000123456789a40ull | 200;  /* 200 fds, gaps up to ~97 */

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
		mkb_set_owner(blk, 4, &o);
		h->nowners = 5;
		mkb_set_chunk(blk, 4, 5);
		h->top_chunk = 5;
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
	return 0;
}
