/* SPDX-License-Identifier: MIT */
/*
 * fdrange stat's block validation (tools/stat_check.c, stat_load.c), its
 * escaping, analysis, reasons and summaries, on blocks built in memory: a
 * valid block is accepted at any alignment; each corrupted field is
 * refused with one line naming it; the line pool's lines count as their
 * holders'; why a library places nothing is named.
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
SPOIL(why_inactive, h->why_inactive = FDR_WHY_NR)
SPOIL(why_msg, memset(h->why_msg, 'm', sizeof(h->why_msg)))
SPOIL(lines_off_beyond, h->lines_off = MKB_SIZE - 8)
SPOIL(lines_off_align, h->lines_off = MKB_LINES_OFF + 2)
SPOIL(lines_overlap, h->lines_off = MKB_CHUNKS_OFF)
SPOIL(open_counted, h->open_counted = 1ull << 40)
SPOIL(bound_top, h->bound_top = ~0ull)
SPOIL(accepts_left, h->accepts_left = ~0ull)
SPOIL(threshold_big, h->threshold = 1048577)
SPOIL(few_seen_2, h->few_seen = 2)
SPOIL(counts, h->counts = 1ull << 63)

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
	{ "policy 3", policy }, { "model 6", model }, { "rot_len 65", rot_len },
	{ "rot_owner[1] 8", rot_owner }, { "hits", counter }, { "judged_local 4 exceeds judged 3", judged }, { "owners_off", owners_off_wrap },
	{ "owners_off 8", owners_off_in_hdr }, { "owners_off", owners_off_align },
	{ "chunks_off", chunks_off_beyond }, { "recs_off", recs_off_wrap },
	{ "recs_off", recs_too_many }, { "overlap", overlap },
	{ "why_inactive 5", why_inactive }, { "why_msg", why_msg },
	{ "lines_off", lines_off_beyond }, { "lines_off", lines_off_align },
	{ "overlap", lines_overlap }, { "open_counted", open_counted }, { "bound_top", bound_top },
	{ "accepts_left", accepts_left }, { "counts", counts },
	{ "threshold 1048577 exceeds", threshold_big }, { "few_seen 2", few_seen_2 },
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
	o.kind = FDR_KIND_THREAD;  /* a thread where the learning pool belongs */
	mkb_set_owner(blk, FDR_OWN_SPARSE, &o);
	assert_int_equal(fdr_blk_check(blk, MKB_SIZE, MKB_SIZE, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "owner 0"));

	mkblock(blk, 42);
	o.kind = FDR_KIND_SHARED;  /* another pool where the line pool belongs */
	mkb_set_owner(blk, FDR_OWN_LINES, &o);
	assert_int_equal(fdr_blk_check(blk, MKB_SIZE, MKB_SIZE, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "owner 2: kind shared does not belong"));

	mkblock(blk, 42);
	o.kind = FDR_KIND_LINES;  /* the line pool among the threads */
	mkb_set_owner(blk, FDR_OWN_FIRST, &o);
	assert_int_equal(fdr_blk_check(blk, MKB_SIZE, MKB_SIZE, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "owner 3: kind lines"));

	mkblock(blk, 42);
	o.kind = FDR_KIND_THREAD;
	o.chunks = MKB_NCHUNKS + 1;
	mkb_set_owner(blk, FDR_OWN_FIRST, &o);
	assert_int_equal(fdr_blk_check(blk, MKB_SIZE, MKB_SIZE, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "chunks 64"));

	mkblock(blk, 42);
	o.chunks = 0;
	o.lines = MKB_NCHUNKS * FDR_LINES_PER_CHUNK + 1;
	mkb_set_owner(blk, FDR_OWN_FIRST, &o);
	assert_int_equal(fdr_blk_check(blk, MKB_SIZE, MKB_SIZE, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "owner 3: lines 505"));

	mkblock(blk, 42);
	o.lines = 0;
	o.busy = 2;
	mkb_set_owner(blk, FDR_OWN_FIRST, &o);
	assert_int_equal(fdr_blk_check(blk, MKB_SIZE, MKB_SIZE, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "owner 3: busy 2 is not 0 or 1"));
	o.busy = 1;  /* moving an fd right now: fine */
	mkb_set_owner(blk, FDR_OWN_FIRST, &o);
	assert_int_equal(fdr_blk_check(blk, MKB_SIZE, MKB_SIZE, why, sizeof(why)), 0);

	mkblock(blk, 42);
	o.busy = 0;
	o.fallback[FDR_FB_NEAR] = ~0ull;
	mkb_set_owner(blk, FDR_OWN_FIRST, &o);
	assert_int_equal(fdr_blk_check(blk, MKB_SIZE, MKB_SIZE, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "owner 3: counter 8"));

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

static void refuses_bad_lines(void **state)
{
	char why[256];

	(void)state;
	/* A line of the line pool's chunk 4 naming an owner that cannot be. */
	mkblock(blk, 42);
	mkb_set_line(blk, 4 * FDR_LINES_PER_CHUNK + 5, MKB_OWNERS + 1);
	assert_int_equal(fdr_blk_check(blk, MKB_SIZE, MKB_SIZE, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "line 37: holder 9"));
	/* The pool holding a line of its own. */
	mkblock(blk, 42);
	mkb_set_line(blk, 4 * FDR_LINES_PER_CHUNK + 5, FDR_OWN_LINES + 1);
	assert_int_equal(fdr_blk_check(blk, MKB_SIZE, MKB_SIZE, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "line pool itself"));
	/* The same bytes in a chunk the line pool does not hold mean nothing. */
	mkblock(blk, 42);
	mkb_set_line(blk, 1 * FDR_LINES_PER_CHUNK + 5, 0xffffffffu);
	assert_int_equal(fdr_blk_check(blk, MKB_SIZE, MKB_SIZE, why, sizeof(why)), 0);
	/* No chunk at all: no line table needed, wherever its offset. */
	mkblock(blk, 42);
	mkb_hdr(blk)->nchunks = 0;
	mkb_hdr(blk)->top_chunk = 0;
	mkb_hdr(blk)->nowners = 0;
	mkb_hdr(blk)->lines_off = 0;
	assert_int_equal(fdr_blk_check(blk, MKB_SIZE, MKB_SIZE, why, sizeof(why)), 0);
	/* An older release's block (magic FDRSTAT2): another release, not a forgery. */
	mkblock(blk, 42);
	memcpy(mkb_hdr(blk)->magic, "FDRSTAT2", 8);
	mkb_hdr(blk)->version = 2;
	assert_int_equal(fdr_blk_check(blk, MKB_SIZE, MKB_SIZE, why, sizeof(why)), -EPROTONOSUPPORT);
	assert_non_null(strstr(why, "version 2"));
	memcpy(mkb_hdr(blk)->magic, "FDRSTAT2", 8);
	mkb_hdr(blk)->version = 3;  /* its magic and version disagree: corrupt */
	assert_int_equal(fdr_blk_check(blk, MKB_SIZE, MKB_SIZE, why, sizeof(why)), -EBADMSG);
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

/* The fixture's fds in a process of @nthreads threads; fd 250 unwatched. */
static void fixture_proc(struct st_proc *p, unsigned nthreads)
{
	static const int fds[] = { 3, 64, 65, 66, 67, 68, 69, 70, 128, 129, 130, 131, 192, 250,
				   320, 328, 4000 };
	size_t n = sizeof(fds) / sizeof(fds[0]);

	memset(p, 0, sizeof(*p));
	p->pid = 42;
	p->threads = nthreads;
	p->seccomp = 0;
	p->fds = calloc(n, sizeof(*p->fds));
	assert_non_null(p->fds);
	p->nfds = n;
	for (size_t i = 0; i < n; i++) {
		p->fds[i].fd = fds[i];
		p->fds[i].watchers = fds[i] != 250;
		p->fds[i].is_socket = true;
		p->fds[i].tcp = ST_TCP_CLIENT;
	}
}

static void load_fixture(struct st_blk *b, struct st_proc *p, unsigned *reads)
{
	struct mem m = { blk, MKB_SIZE, 0 };
	struct st_src src = { mem_read, &m, MKB_SIZE };
	char why[256];

	memset(b, 0, sizeof(*b));
	assert_int_equal(st_blk_load(&src, b, why, sizeof(why)), 0);
	m.reads = 0;
	assert_int_equal(st_blk_records(&src, b, p->fds, p->nfds), 0);
	if (reads)
		*reads = m.reads;
}

/* The block in blk (made by the caller) read for @p, and analysed. */
static void analyze_fixture(struct st_blk *b, struct st_proc *p, struct st_report *r,
			    long (*host_tid)(const struct st_proc *p, long tid))
{
	load_fixture(b, p, NULL);
	memset(r, 0, sizeof(*r));
	r->p = p;
	r->b = b;
	r->found.lib_mapped = true;
	r->host_tid = host_tid;
	assert_int_equal(st_analyze(r), 0);
}

static void free_fixture(struct st_blk *b, struct st_proc *p, struct st_report *r)
{
	st_report_free(r);
	st_blk_free(b);
	free(p->fds);
}

static void loads_records_and_analyzes(void **state)
{
	struct st_blk b;
	struct st_proc p;
	struct st_report r;
	unsigned reads;

	(void)state;
	mkblock(blk, 42);
	fixture_proc(&p, 3);
	load_fixture(&b, &p, &reads);
	assert_int_equal((uintptr_t)b.owners % 128, 0);
	/* Open fds 3..328 lie within one window: one read for all. */
	assert_int_equal(reads, 1);
	assert_int_equal(p.fds[1].tid, 101);
	assert_int_equal(p.fds[7].tid, 102);
	assert_true(p.fds[13].pending);
	assert_int_equal(p.fds[16].tid, 0);  /* beyond nrecs: unknown */

	/* The line pool's lines are their holders'; a free line the pool's. */
	assert_int_equal(st_owner_of_fd(&b, 320), FDR_OWN_FIRST + 1);
	assert_int_equal(st_owner_of_fd(&b, 329), FDR_OWN_FIRST);
	assert_int_equal(st_owner_of_fd(&b, 336), FDR_OWN_LINES);
	assert_int_equal(st_owner_of_fd(&b, 383), FDR_OWN_LINES);
	assert_int_equal(st_owner_of_fd(&b, 384), -1);

	memset(&r, 0, sizeof(r));
	r.p = &p;
	r.b = &b;
	r.found.lib_mapped = true;
	assert_int_equal(st_analyze(&r), 0);
	assert_int_equal(r.ngroups, 2);
	assert_int_equal(r.nowners, 5);
	/* Threads first: owner 3 (tid 101) holds 64-69 (its), 70 (102's),
	 * 192 (its), pending 250, and on its line 328 (its): purity 8/9. */
	assert_int_equal(r.owners[0].idx, FDR_OWN_FIRST);
	assert_int_equal(r.owners[0].open, 10);
	assert_int_equal(r.owners[0].nchunks, 2);
	assert_int_equal(r.owners[0].nlines, 1);
	assert_int_equal(r.owners[0].nspans, 3);
	assert_int_equal(r.owners[0].open_lines, 4);
	assert_true(r.owners[0].purity > 88.8 && r.owners[0].purity < 89.0);
	assert_true(r.min_purity > 88.8 && r.min_purity < 89.0);
	/* Owner 4 (tid 102): its chunk 1 and its line 320-327. */
	assert_int_equal(r.owners[1].open, 5);
	assert_int_equal(r.owners[1].nspans, 2);
	assert_int_equal(r.spans[r.owners[1].span0 + 1].lo, 320);
	assert_int_equal(r.spans[r.owners[1].span0 + 1].hi, 328);
	assert_true(r.owners[1].purity > 99.9);
	/* The pools after them; the line pool: one chunk, two lines handed out. */
	assert_int_equal(r.owners[4].idx, FDR_OWN_LINES);
	assert_int_equal(r.owners[4].nchunks, 1);
	assert_int_equal(r.owners[4].nlines, 2);
	assert_int_equal(r.owners[4].open, 0);
	assert_int_equal(r.t.shared, 1);          /* line 8: fds 64-71 */
	assert_int_equal(r.t.client_shared, 1);
	assert_int_equal(r.low_open, 1);
	assert_int_equal(r.unowned_open, 1);      /* fd 4000 */
	assert_int_equal(r.placed, 14);
	assert_int_equal(r.fallbacks, 3);
	assert_int_equal(r.fb_why[FDR_FB_BOUND], 1);
	assert_int_equal(r.fb_why[FDR_FB_NEAR], 1);
	/* Seen: 14 placed + 3 fallbacks; 17 open: none known unseen. */
	assert_int_equal(r.seen, 17);
	assert_int_equal(st_unseen(&r), 0);
	assert_int_equal(r.reason, ST_R_NONE);
	assert_string_equal(st_library_word(&r), "yes");
	assert_string_equal(st_model_word(&b.hdr), "rotation");
	b.hdr.policy = ST_POLICY_THREAD;
	assert_string_equal(st_model_word(&b.hdr), "thread");
	b.hdr.policy = ST_POLICY_AUTO;
	b.hdr.model = FDR_MODEL_UNREGISTERED;
	assert_string_equal(st_model_word(&b.hdr), "unregistered");
	free_fixture(&b, &p, &r);
}

/* In another pid namespace tids 101 and 102 are, to us, 9000 and 8000. */
static long host_tid(const struct st_proc *p, long tid)
{
	(void)p;
	return tid == 101 ? 9000 : tid == 102 ? 8000 : 0;
}

static void letters_follow_the_tid_as_we_see_it(void **state)
{
	struct st_blk b;
	struct st_proc p;
	struct st_report r;
	char label[48];

	(void)state;
	mkblock(blk, 42);
	fixture_proc(&p, 3);
	analyze_fixture(&b, &p, &r, host_tid);
	/* 102 is 8000 to us: it comes first, though its fds come later. */
	assert_int_equal(r.groups[0].key, 102);
	assert_int_equal(r.groups[0].shown, 8000);
	assert_int_equal(r.groups[1].shown, 9000);
	assert_int_equal(r.owners[0].group, 1);
	st_owner_label(&r, &r.owners[0], label, sizeof(label));
	assert_string_equal(label, "thread 9000");
	st_owner_label(&r, &r.owners[2], label, sizeof(label));
	assert_string_equal(label, "learning pool");
	free_fixture(&b, &p, &r);
}

/* st_analyze's reason for the fixture changed by @spoil, in a process of
 * @nthreads threads. */
static enum st_reason reason_of(void (*spoil)(struct fdr_blk_hdr *h), unsigned nthreads,
				char *text, size_t len)
{
	struct st_blk b;
	struct st_proc p;
	struct st_report r;
	enum st_reason why;

	mkblock(blk, 42);
	if (spoil)
		spoil(mkb_hdr(blk));
	fixture_proc(&p, nthreads);
	analyze_fixture(&b, &p, &r, NULL);
	why = r.reason;
	st_reason_text(&r, text, len);
	if (why != ST_R_NONE && why != ST_R_LIMIT && why != ST_R_SINGLE && why != ST_R_FEW)
		assert_string_equal(st_library_word(&r), "inactive");
	free_fixture(&b, &p, &r);
	return why;
}

SPOIL(disabled, (h->why_inactive = FDR_WHY_DISABLED, h->flags = 0))
SPOIL(config, (h->why_inactive = FDR_WHY_CONFIG, h->flags = 0,
	       snprintf(h->why_msg, sizeof(h->why_msg), "FDRANGE_SLOTS=\"abc\": not a number")))
SPOIL(seccomp, (h->why_inactive = FDR_WHY_SECCOMP, h->flags = 0))
SPOIL(secure, (h->why_inactive = FDR_WHY_SECURE, h->flags = 0))
SPOIL(low_limit, h->limit = 100)
SPOIL(some_few, (h->threshold = 64, h->few_seen = 1))

static void all_few(struct fdr_blk_hdr *h);

/* As all_few, and one fd past the threshold fell back. */
static void few_then_fallback(struct fdr_blk_hdr *h)
{
	struct fdr_blk_owner o;

	all_few(h);
	memcpy(&o, (char *)h + h->owners_off + (size_t)FDR_OWN_FIRST * sizeof(o), sizeof(o));
	o.fallback[FDR_FB_BOUND] = 1;
	mkb_set_owner(h, FDR_OWN_FIRST, &o);
}

/* Threads made fds, every one numbered below the threshold: none placed. */
static void all_few(struct fdr_blk_hdr *h)
{
	struct fdr_blk_owner o;

	some_few(h);
	for (uint32_t i = 0; i < h->nowners; i++) {
		/* memcpy: the fixture's buffer need not be 128-aligned */
		memcpy(&o, (char *)h + h->owners_off + (size_t)i * sizeof(o), sizeof(o));
		o.placed = o.inplace = 0;
		memset(o.fallback, 0, sizeof(o.fallback));
		mkb_set_owner(h, i, &o);
	}
}

static void names_why_nothing_is_placed(void **state)
{
	char text[512];
	struct st_proc p;
	struct st_report r;

	(void)state;
	assert_int_equal(reason_of(NULL, 3, text, sizeof(text)), ST_R_NONE);
	assert_string_equal(text, "");
	assert_int_equal(reason_of(disabled, 3, text, sizeof(text)), ST_R_DISABLED);
	assert_non_null(strstr(text, "FDRANGE_DISABLE=1"));
	assert_int_equal(reason_of(config, 3, text, sizeof(text)), ST_R_CONFIG);
	assert_non_null(strstr(text, "FDRANGE_SLOTS=\"abc\": not a number"));
	assert_int_equal(reason_of(seccomp, 3, text, sizeof(text)), ST_R_SECCOMP);
	assert_non_null(strstr(text, "seccomp filter was installed while it ran"));
	assert_int_equal(reason_of(secure, 3, text, sizeof(text)), ST_R_SECURE);
	assert_non_null(strstr(text, "set-user-ID or set-group-ID program"));
	assert_string_equal(st_reason_word(ST_R_SECURE), "secure");
	assert_int_equal(reason_of(low_limit, 3, text, sizeof(text)), ST_R_LIMIT);
	assert_non_null(strstr(text, "RLIMIT_NOFILE 100 (as the library last saw it) leaves no 64-fd chunk above FDRANGE_BASE 64"));
	assert_int_equal(reason_of(NULL, 1, text, sizeof(text)), ST_R_SINGLE);
	assert_non_null(strstr(text, "single-threaded so far"));
	assert_string_equal(st_reason_word(ST_R_SINGLE), "single_threaded");
	/* Some fds kept below the threshold, others placed: placing. */
	assert_int_equal(reason_of(some_few, 3, text, sizeof(text)), ST_R_NONE);
	assert_int_equal(reason_of(all_few, 3, text, sizeof(text)), ST_R_FEW);
	assert_non_null(strstr(text, "every fd it made was numbered below FDRANGE_THRESHOLD 64"));
	/* ... but not when an fd past it fell back: that has its own count. */
	assert_int_equal(reason_of(few_then_fallback, 3, text, sizeof(text)), ST_R_NONE);
	assert_string_equal(st_reason_word(ST_R_FEW), "few_fds");
	/* Single-threaded comes first: nothing is moved before a second thread. */
	assert_int_equal(reason_of(all_few, 1, text, sizeof(text)), ST_R_SINGLE);
	assert_null(st_reason_word(ST_R_NONE));

	/* Without a block: from what the maps and the status said. */
	fixture_proc(&p, 2);
	memset(&r, 0, sizeof(r));
	r.p = &p;
	assert_int_equal(st_analyze(&r), 0);
	assert_int_equal(r.reason, ST_R_NOT_LOADED);
	assert_string_equal(st_library_word(&r), "no");
	st_report_free(&r);
	memset(&r, 0, sizeof(r));
	r.p = &p;
	r.found.lib_mapped = true;
	p.seccomp = 2;
	assert_int_equal(st_analyze(&r), 0);
	assert_int_equal(r.reason, ST_R_SECCOMP_START);
	assert_string_equal(st_library_word(&r), "inactive");
	st_reason_text(&r, text, sizeof(text));
	assert_non_null(strstr(text, "started under a seccomp filter (Seccomp: 2"));
	st_report_free(&r);
	memset(&r, 0, sizeof(r));
	r.p = &p;
	r.found.lib_mapped = true;
	r.found.inherited_from = 41;
	assert_int_equal(st_analyze(&r), 0);
	assert_int_equal(r.reason, ST_R_INHERITED);
	st_report_free(&r);
	free(p.fds);
}

static void counts_fds_that_never_passed_through(void **state)
{
	struct st_blk b;
	struct st_proc p;
	struct st_report r;
	struct st_fd *more;

	(void)state;
	mkblock(blk, 42);
	fixture_proc(&p, 3);
	/* 60 more open fds than the library ever saw (17): at least 43 unseen. */
	more = realloc(p.fds, 60 * sizeof(*more));
	assert_non_null(more);
	p.fds = more;
	for (size_t i = p.nfds; i < 60; i++) {
		memset(&p.fds[i], 0, sizeof(p.fds[i]));
		p.fds[i].fd = (int)(5000 + i);
	}
	p.nfds = 60;
	analyze_fixture(&b, &p, &r, NULL);
	assert_int_equal(st_unseen(&r), 43);
	assert_true(st_unseen_matters(&r));
	free_fixture(&b, &p, &r);
}

/* The Prometheus document of @s into *@out, *@len (the caller's: the
 * stream writes them until it is closed). */
static void capture_prom(const struct st_summary *s, size_t n, char **out, size_t *len)
{
	FILE *f = open_memstream(out, len);

	assert_non_null(f);
	st_render_prom(f, s, n);
	fclose(f);
}

static void prometheus_groups_families_and_escapes_labels(void **state)
{
	struct st_blk b;
	struct st_proc p;
	struct st_report r;
	struct st_summary s[3];
	char *t = NULL;
	size_t tlen = 0;

	(void)state;
	mkblock(blk, 42);
	fixture_proc(&p, 3);
	snprintf(p.comm, sizeof(p.comm), "a\"b\\c\033[2J\n");
	analyze_fixture(&b, &p, &r, NULL);
	st_summarize(&r, &s[0]);
	s[1] = s[0];
	s[1].pid = 43;
	st_summarize_error(44, "exited", "exited, not reaped", &s[2]);
	capture_prom(s, 3, &t, &tlen);
	/* Each family once, its samples together: pid 42's and 43's. */
	assert_non_null(strstr(t, "# TYPE fdrange_fds_placed_total counter\n"
			       "fdrange_fds_placed_total{pid=\"42\",comm=\"a\\\"b\\\\x5cc\\\\x1b[2J\\\\x0a\"} 14\n"
			       "fdrange_fds_placed_total{pid=\"43\","));
	assert_null(strstr(strstr(t, "# TYPE fdrange_fds_placed_total") + 1,
			   "# TYPE fdrange_fds_placed_total"));
	assert_non_null(strstr(t, ",reason=\"bound\"} 1\n"));
	assert_non_null(strstr(t, "fdrange_model{pid=\"42\","));
	assert_non_null(strstr(t, "fdrange_placing{pid=\"42\",comm="));
	assert_non_null(strstr(t, "fdrange_stat_error{pid=\"44\",comm=\"\",reason=\"exited\"} 1\n"));
	assert_non_null(strstr(t, "fdrange_min_purity_ratio{pid=\"42\","));
	/* No raw control byte anywhere. */
	for (const char *c = t; *c; c++)
		assert_true(*c == '\n' || (*c >= 0x20 && *c < 0x7f));
	free(t);
	free_fixture(&b, &p, &r);
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
		cmocka_unit_test(refuses_bad_lines),
		cmocka_unit_test(refuses_truncated_input),
		cmocka_unit_test(loads_records_and_analyzes),
		cmocka_unit_test(letters_follow_the_tid_as_we_see_it),
		cmocka_unit_test(names_why_nothing_is_placed),
		cmocka_unit_test(counts_fds_that_never_passed_through),
		cmocka_unit_test(prometheus_groups_families_and_escapes_labels),
		cmocka_unit_test(escapes_what_the_target_wrote),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
