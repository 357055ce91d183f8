/* SPDX-License-Identifier: MIT */
/*
 * fdrange stat's analysis and rendering are linear in the number of fds:
 * 300,000 synthetic fds (dense, served by 16 epoll
 * instances, or with a block whose chunks hold the first ones) are
 * analysed and rendered as text (map included) and JSON within the limit
 * (5 s, RENDER_SCALE_LIMIT_S), well above the ~0.3 s they take; the map
 * that restarted its scan for every 8-fd line took minutes here.  Needs
 * no process with that many fds (RLIMIT_NOFILE may not allow one).
 */
#include "stat.h"
#include "mkblock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, "render_scale: " __VA_ARGS__); \
				       fputc('\n', stderr); exit(1); } } while (0)

static _Alignas(128) unsigned char blk[MKB_SIZE];

struct mem {
	const unsigned char *p;
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

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void name_of(const struct st_proc *p, long tid, char *out, size_t len)
{
	(void)p;
	snprintf(out, len, "w%ld", tid);
}

static double run(size_t n, bool with_block)
{
	struct mem m = { blk, MKB_SIZE };
	struct st_src src = { mem_read, &m, MKB_SIZE };
	struct st_proc p;
	struct st_blk b;
	struct st_report r;
	FILE *null = fopen("/dev/null", "w");
	double t0;

	CHECK(null, "/dev/null: %s", strerror(errno));
	memset(&p, 0, sizeof(p));
	p.pid = 1234;
	p.nfds = n;
	p.fds = calloc(n, sizeof(*p.fds));
	CHECK(p.fds, "out of memory");
	for (size_t i = 0; i < n; i++) {
		struct st_fd *f = &p.fds[i];

		f->fd = (int)i;
		f->watchers = 1;
		f->watcher = (int)((i / 7) % 16);
		f->group = f->owner = -1;
		f->is_socket = i % 3 == 0;
		f->tcp = f->is_socket ? ST_TCP_CLIENT : ST_TCP_NONE;
	}
	memset(&b, 0, sizeof(b));
	if (with_block) {
		mkblock(blk, 1234);
		CHECK(st_blk_load(&src, &b, (char[ST_WHY_MAX]){ 0 }, ST_WHY_MAX) == 0, "load");
		CHECK(st_blk_records(&src, &b, p.fds, p.nfds) == 0, "records");
	}
	memset(&r, 0, sizeof(r));
	r.p = &p;
	r.b = with_block ? &b : NULL;
	r.name_of = name_of;
	t0 = now();
	CHECK(st_analyze(&r) == 0, "analyze");
	st_render_text(null, &r, &(struct st_text_opts){ .color = false, .map = true });
	st_render_json(null, &r);
	t0 = now() - t0;
	CHECK(r.p->nfds == n && (with_block || r.ngroups == 16), "%u groups", r.ngroups);
	st_report_free(&r);
	st_blk_free(&b);
	free(p.fds);
	fclose(null);
	return t0;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 300000;
	const char *lim = getenv("RENDER_SCALE_LIMIT_S");
	double limit = lim ? atof(lim) : 5.0;

	for (int wb = 0; wb < 2; wb++) {
		double t = run(n, wb);

		printf("%s block: %zu fds analysed and rendered in %.3f s (limit %.1f s)\n",
		       wb ? "with a" : "without a", n, t, limit);
		CHECK(t < limit, "%.3f s for %zu fds: not linear", t, n);
	}
	return 0;
}
