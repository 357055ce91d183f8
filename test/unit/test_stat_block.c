/* SPDX-License-Identifier: MIT */
/*
 * fdrange stat's block validation (tools/stat_block.c), its escaping and
 * its analysis, on blocks built in memory: a valid block is accepted at any
 * alignment; each corrupted field is refused with one line naming it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stat.h"
#include "../stat/mkblock.h"

static _Alignas(128) unsigned char blk[MKB_SIZE + 1];

static void accepts_a_valid_block_at_any_alignment(void **state)
{
	static unsigned char shifted[MKB_SIZE + 1];
	char why[256] = "";

	(void)state;
	mkblock(blk, 42);
	assert_int_equal(fdr_blk_check(blk, MKB_SIZE, MKB_SIZE, why, sizeof(why)), 0);
	/* libFuzzer's buffers have no alignment: neither may the check need one. */
	memcpy(shifted + 1, blk, MKB_SIZE);
	assert_int_equal(fdr_blk_check(shifted + 1, MKB_SIZE, MKB_SIZE, why, sizeof(why)), 0);
	/* A longer mapping than the block is fine. */
	assert_int_equal(fdr_blk_check(blk, MKB_SIZE, MKB_SIZE * 2, why, sizeof(why)), 0);
}

struct bad {
	const char *field;     /* must appear in the message */
	void (*spoil)(struct fdr_blk_hdr *h);
};

#define SPOIL(name, stmt) static void name(struct fdr_blk_hdr *h) { stmt; }
SPOIL(magic, h->magic[0] = 'X')
SPOIL(version, h->version = 1)
SPOIL(hdr_size, h->hdr_size = 4095)
SPOIL(size_big, h->size = MKB_SIZE + 1)
SPOIL(size_small, h->size = 100)
SPOIL(pid, h->pid = -4)
SPOIL(private_flag, h->flags |= FDR_BLK_PRIVATE)
SPOIL(lib_version, memset(h->lib_version, 'v', sizeof(h->lib_version)))
SPOIL(nsettings, h->nsettings = FDR_SETTINGS_MAX + 1)
SPOIL(setting_name, memset(h->settings[2].name, 'n', sizeof(h->settings[2].name)))
SPOIL(setting_value, memset(h->settings[0].value, 'v', sizeof(h->settings[0].value)))
SPOIL(from_env, h->settings[1].from_env = 7)
SPOIL(chunk, h->chunk = 128)
SPOIL(nr_open, h->nr_open = 1ull << 40)
SPOIL(base_align, h->base = 100)
SPOIL(base_big, h->base = 8192)
SPOIL(width_align, h->fixed_width = 100)
SPOIL(width_huge, h->fixed_width = 0xffffffc0u)
SPOIL(nchunks, h->nchunks = 65)
SPOIL(nchunks_wrap, h->nchunks = 0xffffffffu)
SPOIL(top_chunk, h->top_chunk = MKB_NCHUNKS + 1)
SPOIL(max_owners_big, h->max_owners = FDR_MAX_OWNERS + 1)
SPOIL(max_owners_small, h->max_owners = 1)
SPOIL(nowners, h->nowners = MKB_OWNERS + 1)
SPOIL(owner_size, h->owner_size = 64)
SPOIL(nrecs, h->nrecs = FDR_BLK_MAX_FD + 1ull)
SPOIL(policy, h->policy = ST_POLICY_NR)
SPOIL(model, h->model = FDR_MODEL_NR)
SPOIL(rot_len, h->rot_len = FDR_ROT_MAX + 1)
SPOIL(rot_owner, h->rot_owner[1] = MKB_OWNERS)
SPOIL(counter, h->hits = ~0ull)
SPOIL(judged, (h->judged = 3, h->judged_local = 4))
SPOIL(owners_off_wrap, h->owners_off = ~0ull - 63)
SPOIL(owners_off_in_hdr, h->owners_off = 8)
SPOIL(owners_off_align, h->owners_off = MKB_OWNERS_OFF + 4)
SPOIL(chunks_off_beyond, h->chunks_off = MKB_SIZE)
SPOIL(recs_off_wrap, h->recs_off = ~0ull - 7)
SPOIL(recs_too_many, h->nrecs = MKB_NRECS + 1)
SPOIL(overlap, h->chunks_off = MKB_OWNERS_OFF + 128)

static const struct bad bads[] = {
	{ "magic", magic }, { "version", version }, { "hdr_size", hdr_size },
	{ "size", size_big }, { "size", size_small }, { "pid", pid },
	{ "flags", private_flag }, { "lib_version", lib_version }, { "nsettings", nsettings },
	{ "settings[2] name", setting_name }, { "settings[0] value", setting_value },
	{ "from_env", from_env }, { "chunk 128", chunk }, { "nr_open", nr_open },
	{ "base 100", base_align }, { "base 8192", base_big }, { "fixed_width 100", width_align },
	{ "fixed_width 4294967232", width_huge }, { "nchunks 65", nchunks },
	{ "nchunks 4294967295", nchunks_wrap }, { "top_chunk", top_chunk },
	{ "max_owners", max_owners_big }, { "max_owners 1", max_owners_small },
	{ "nowners 9", nowners }, { "owner_size 64", owner_size }, { "nrecs", nrecs },
	{ "policy 3", policy }, { "model 5", model }, { "rot_len 65", rot_len },
	{ "rot_owner[1] 8", rot_owner }, { "hits", counter }, { "judged_local 4 exceeds judged 3", judged }, { "owners_off", owners_off_wrap },
	{ "owners_off 8", owners_off_in_hdr }, { "owners_off", owners_off_align },
	{ "chunks_off", chunks_off_beyond }, { "recs_off", recs_off_wrap },
	{ "recs_off", recs_too_many }, { "overlap", overlap },
};

static void refuses_each_bad_header_field_by_name(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		char why[256] = "";
		int ret;

		mkblock(blk, 42);
		bads[i].spoil(mkb_hdr(blk));
		ret = fdr_blk_check(blk, MKB_SIZE, MKB_SIZE, why, sizeof(why));
		/* Another version is another release, not a forgery. */
		if (ret != (bads[i].spoil == version ? -EPROTONOSUPPORT : -EBADMSG) ||
		    !strstr(why, bads[i].field) || strchr(why, '\n')) {
			fprintf(stderr, "case %zu (%s): ret %d, why '%s'\n", i, bads[i].field, ret,
				why);
			fail();
		}
	}
}

static void refuses_bad_owners_and_chunks(void **state)
{
	struct fdr_blk_owner o;
	char why[256];

	(void)state;
	mkblock(blk, 42);
	memset(&o, 0, sizeof(o));
	o.kind = 9;
	mkb_set_owner(blk, 3, &o);
	assert_int_equal(fdr_blk_check(blk, MKB_SIZE, MKB_SIZE, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "owner 3: kind 9"));

	mkblock(blk, 42);
	o.kind = FDR_KIND_THREAD;  /* a thread where the sparse pool belongs */
	mkb_set_owner(blk, 0, &o);
	assert_int_equal(fdr_blk_check(blk, MKB_SIZE, MKB_SIZE, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "owner 0"));

	mkblock(blk, 42);
	o.kind = FDR_KIND_THREAD;
	o.chunks = MKB_NCHUNKS + 1;
	mkb_set_owner(blk, 2, &o);
	assert_int_equal(fdr_blk_check(blk, MKB_SIZE, MKB_SIZE, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "chunks 64"));

	mkblock(blk, 42);
	mkb_set_chunk(blk, 2, MKB_OWNERS + 1);
	assert_int_equal(fdr_blk_check(blk, MKB_SIZE, MKB_SIZE, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "chunk 2"));

	/* Beyond nowners but within max_owners: claimed after the header was
	 * read, a race of a live process, not a forgery: accepted. */
	mkblock(blk, 42);
	mkb_set_chunk(blk, 2, MKB_OWNERS);
	assert_int_equal(fdr_blk_check(blk, MKB_SIZE, MKB_SIZE, why, sizeof(why)), 0);
}

static void refuses_truncated_input(void **state)
{
	char why[256];

	(void)state;
	mkblock(blk, 42);
	assert_int_equal(fdr_blk_check(blk, 100, MKB_SIZE, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "truncated"));
	assert_int_equal(fdr_blk_check(blk, MKB_OWNERS_OFF + 10, MKB_SIZE, why, sizeof(why)),
			 -EBADMSG);
	assert_non_null(strstr(why, "truncated"));
	/* A message buffer too small is cut, never overrun. */
	{
		char tiny[8];

		memset(tiny, 'z', sizeof(tiny));
		assert_int_equal(fdr_blk_check(blk, 100, MKB_SIZE, tiny, 5), -EBADMSG);
		assert_int_equal(tiny[4], 0);
		assert_int_equal(tiny[5], 'z');
	}
}

struct mem {
	const unsigned char *p;
	size_t len;
	unsigned reads;
};

static int mem_read(void *ctx, void *buf, size_t len, uint64_t off)
{
	struct mem *m = ctx;

	m->reads++;
	if (off > m->len || len > m->len - off)
		return -EIO;
	memcpy(buf, m->p + off, len);
	return 0;
}

static void loads_records_and_analyzes(void **state)
{
	struct mem m = { blk, MKB_SIZE, 0 };
	struct st_src src = { mem_read, &m, MKB_SIZE };
	struct st_blk b;
	struct st_proc p;
	struct st_report r;
	char why[256];
	static const int fds[] = { 3, 64, 65, 66, 67, 68, 69, 70, 128, 129, 130, 131, 192, 250,
				   4000 };
	size_t n = sizeof(fds) / sizeof(fds[0]);

	(void)state;
	mkblock(blk, 42);
	memset(&b, 0, sizeof(b));
	assert_int_equal(st_blk_load(&src, &b, why, sizeof(why)), 0);
	assert_int_equal((uintptr_t)b.owners % 128, 0);
	memset(&p, 0, sizeof(p));
	p.pid = 42;
	p.fds = calloc(n, sizeof(*p.fds));
	p.nfds = n;
	for (size_t i = 0; i < n; i++) {
		p.fds[i].fd = fds[i];
		p.fds[i].watchers = fds[i] != 250;
		p.fds[i].is_socket = true;
		p.fds[i].tcp = ST_TCP_CLIENT;
	}
	m.reads = 0;
	assert_int_equal(st_blk_records(&src, &b, p.fds, p.nfds), 0);
	/* Open fds 3..250 lie within one window: one read for all. */
	assert_int_equal(m.reads, 1);
	assert_int_equal(p.fds[1].tid, 101);
	assert_int_equal(p.fds[7].tid, 102);
	assert_true(p.fds[13].pending);
	assert_int_equal(p.fds[14].tid, 0);  /* beyond nrecs: unknown */

	memset(&r, 0, sizeof(r));
	r.p = &p;
	r.b = &b;
	assert_int_equal(st_analyze(&r), 0);
	assert_int_equal(r.ngroups, 2);
	assert_int_equal(r.nowners, 4);
	/* Threads first: owner 2 (tid 101) holds 64-69 (its), 70 (102's) and
	 * 192 (its): purity 7/8. */
	assert_int_equal(r.owners[0].idx, 2);
	assert_int_equal(r.owners[0].open, 9);   /* and the pending fd 250 */
	assert_int_equal(r.owners[0].nchunks, 2);
	assert_int_equal(r.owners[0].nspans, 2);
	assert_true(r.owners[0].purity > 87.4 && r.owners[0].purity < 87.6);
	assert_true(r.min_purity > 87.4 && r.min_purity < 87.6);
	assert_int_equal(r.t.shared, 1);          /* line 8: fds 64-71 */
	assert_int_equal(r.t.client_shared, 1);
	assert_int_equal(r.low_open, 1);
	assert_int_equal(r.unowned_open, 1);      /* fd 4000 */
	assert_int_equal(r.placed, 12);
	assert_string_equal(st_model_word(&b.hdr), "rotation");
	b.hdr.policy = ST_POLICY_THREAD;
	assert_string_equal(st_model_word(&b.hdr), "thread");
	st_report_free(&r);
	st_blk_free(&b);
	free(p.fds);
}

static char *capture(void (*fn)(FILE *, const char *, size_t), const char *s)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	fn(f, s, strlen(s));
	fclose(f);
	return out;
}

static void escapes_what_the_target_wrote(void **state)
{
	char *t, *j;

	(void)state;
	t = capture(st_put_escaped, "a\033[2J\n\\\x9b\x7f" "b");
	assert_string_equal(t, "a\\x1b[2J\\x0a\\x5c\\x9b\\x7fb");
	j = capture(st_json_str, "a\033\"\\\n\xc3\xa9");
	assert_string_equal(j, "\"a\\u001b\\\"\\\\\\u000a\\u00c3\\u00a9\"");
	free(t);
	free(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(accepts_a_valid_block_at_any_alignment),
		cmocka_unit_test(refuses_each_bad_header_field_by_name),
		cmocka_unit_test(refuses_bad_owners_and_chunks),
		cmocka_unit_test(refuses_truncated_input),
		cmocka_unit_test(loads_records_and_analyzes),
		cmocka_unit_test(escapes_what_the_target_wrote),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
