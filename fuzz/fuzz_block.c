/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the part of `fdrange stat` that reads a stats
 * block another process wrote (tools/stat_check.c, tools/stat_load.c)
 * and everything that then uses it: the analysis and both renderers.
 *
 * Input: 8 bytes that draw a synthetic list of open fds (count, spacing,
 * which are sockets, accepted, watched), then the block's bytes as the
 * target would have mapped them (the mapping's length is the input's).
 *
 * Properties, checked with abort() so libFuzzer and the replay report
 * them like crashes (and ASan/UBSan catch the rest):
 *   - fdr_blk_check() accepts, or refuses (-EBADMSG, or -EPROTONOSUPPORT
 *     for another version) with one non-empty line;
 *   - what it accepts, st_blk_load() reading the same bytes piecewise
 *     accepts too, and every later step succeeds;
 *   - the text report is printable ASCII and newlines only (names full of
 *     escapes included), ends with a "summary: pid=" line;
 *   - the JSON report has no raw control or high byte, starts with
 *     {"schema":1 and ends with "}\n".
 */
#include "stat.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROP(cond) do { if (!(cond)) abort(); } while (0)

struct mem {
	const uint8_t *p;
	size_t len;
};

static int mem_read(void *ctx, void *buf, size_t len, uint64_t off)
{
	const struct mem *m = ctx;

	if (off > m->len || len > m->len - off)
		return -EIO;
	memcpy(buf, m->p + off, len);
	return 0;
}

static void name_of(const struct st_proc *p, long tid, char *out, size_t len)
{
	(void)p;
	snprintf(out, len, tid % 2 ? "w\033[2J%ld" : "\xc2\x9bq%ld\x7f", tid);
}

static void check_text(const char *s, size_t n)
{
	size_t start = 0;
	const char *last;

	PROP(s && n && s[n - 1] == '\n');
	for (size_t i = 0; i < n; i++) {
		PROP(s[i] == '\n' || (s[i] >= 0x20 && s[i] < 0x7f));
		if (s[i] == '\n' && i + 1 < n)
			start = i + 1;  /* where the last line begins */
	}
	last = s + start;

	PROP(!strncmp(last, "summary: pid=", 13));
}

static void check_json(const char *s, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++)
		PROP(s[i] >= 0x20 && s[i] < 0x7f);
	PROP(n > 13 && !strncmp(s, "{\"schema\":1", 11) && !strcmp(s + n - 2, "}\n"));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mem m;
	struct st_src src;
	struct st_blk b;
	struct st_proc p;
	struct st_report r;
	char why[ST_WHY_MAX], *text = NULL, *json = NULL;
	size_t tlen = 0, jlen = 0;
	uint64_t seed;
	FILE *f;
	int ret;

	if (size < 8)
		return 0;
	memcpy(&seed, data, 8);
	m.p = data + 8;
	m.len = size - 8;
	memset(why, 0, sizeof(why));
	ret = fdr_blk_check(m.p, m.len, m.len, why, sizeof(why));
	if (ret) {
		PROP((ret == -EBADMSG || ret == -EPROTONOSUPPORT) && why[0] && !strchr(why, '\n'));
		return 0;
	}
	src.read = mem_read;
	src.ctx = &m;
	src.maplen = m.len;
	memset(&b, 0, sizeof(b));
	PROP(st_blk_load(&src, &b, why, sizeof(why)) == 0);

	/* A synthetic fd list: up to 300 fds, gaps drawn from the seed, so
	 * that they land low, in chunks and beyond the records. */
	memset(&p, 0, sizeof(p));
	p.pid = 4242;
	snprintf(p.comm, sizeof(p.comm), "fu\033]0;zz\007");
	p.soft_limit = seed >> 48;
	p.nfds = seed % 301;
	p.fds = calloc(p.nfds ? p.nfds : 1, sizeof(*p.fds));
	PROP(p.fds != NULL);
	{
		long fd = 0;
		uint64_t x = seed | 1;

		for (size_t i = 0; i < p.nfds; i++) {
			struct st_fd *fd_ = &p.fds[i];

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			fd += 1 + (long)(x % ((seed >> 9) % 97 + 1));
			fd_->fd = (int)fd;
			fd_->group = fd_->owner = fd_->watcher = -1;
			fd_->is_socket = x & 2;
			fd_->tcp = fd_->is_socket ? (uint8_t)(x >> 3) % 4 : ST_TCP_NONE;
			fd_->watchers = (x >> 5) % 3 != 0;
			fd_->watcher = fd_->watchers ? 3 : -1;
			snprintf(fd_->target, sizeof(fd_->target), "socket:[%zu]\033", i);
		}
	}
	PROP(st_blk_records(&src, &b, p.fds, p.nfds) == 0);
	memset(&r, 0, sizeof(r));
	r.p = &p;
	r.b = &b;
	r.name_of = name_of;
	PROP(st_analyze(&r) == 0);

	f = open_memstream(&text, &tlen);
	PROP(f != NULL);
	st_render_text(f, &r, &(struct st_text_opts){ .color = false, .map = true });
	fclose(f);
	check_text(text, tlen);
	f = open_memstream(&json, &jlen);
	PROP(f != NULL);
	st_render_json(f, &r);
	fclose(f);
	check_json(json, jlen);
	free(text);
	free(json);
	st_report_free(&r);
	st_blk_free(&b);
	free(p.fds);
	return 0;
}
