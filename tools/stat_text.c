/* SPDX-License-Identifier: MIT */
/*
 * The text report.  Every string that came from the target (comm, thread
 * names, fd targets, the library version, settings) goes through
 * st_put_escaped(): a process must not be able to drive the terminal of
 * the root shell that looks at it.  The map is drawn in one pass over the
 * sorted fds (it once was quadratic).
 */
#include "stat.h"
#include "options.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAP_COLS 64      /* map characters per row: 512 fds */

void st_put_escaped(FILE *out, const char *s, size_t max)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < max && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		/* Controls, DEL, and all high bytes (a UTF-8 C1 control such as
		 * \xc2\x9b is a CSI on some terminals); and '\\' so an escape
		 * shown is always one we made. */
		if (c < 0x20 || c >= 0x7f || c == '\\') {
			fputc('\\', out);
			fputc('x', out);
			fputc(hex[c >> 4], out);
			fputc(hex[c & 15], out);
		} else {
			fputc(c, out);
		}
	}
}

const char *st_pl(unsigned long long n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

struct tctx {
	FILE *out;
	const struct st_report *r;
	bool color;
};

static const char *colour(const struct tctx *t, int g)
{
	static const char *const c[] = { "\033[1;32m", "\033[1;34m", "\033[1;35m", "\033[1;36m",
					 "\033[1;33m", "\033[32m", "\033[34m", "\033[35m",
					 "\033[36m", "\033[33m" };

	return t->color && g >= 0 ? c[g % 10] : "";
}

static const char *reset(const struct tctx *t)
{
	return t->color ? "\033[0m" : "";
}

static void put_letter(const struct tctx *t, int g)
{
	fprintf(t->out, "%s%c%s", colour(t, g), st_letter(g), reset(t));
}

static void put_by(const struct tctx *t, const struct st_served *by, unsigned n)
{
	if (!n)
		fputc('-', t->out);
	for (unsigned i = 0; i < n; i++) {
		if (i)
			fputc(' ', t->out);
		put_letter(t, by[i].group);
		fprintf(t->out, ":%u", by[i].n);
	}
}

static void put_purity(FILE *out, double p)
{
	char buf[16];

	if (p < 0)
		snprintf(buf, sizeof(buf), "-");
	else
		snprintf(buf, sizeof(buf), "%.1f%%", p);
	fprintf(out, " %7s  ", buf);
}

static void settings(const struct tctx *t)
{
	const struct fdr_blk_hdr *h = &t->r->b->hdr;

	for (uint32_t i = 0; i < h->nsettings; i++) {
		const struct fdr_blk_setting *s = &h->settings[i];

		fputs("settings: ", t->out);
		/* A known name prints as the table spells it; any other, escaped. */
		if (fdr_option_by_env(s->name))
			fputs(fdr_option_by_env(s->name)->env, t->out);
		else
			st_put_escaped(t->out, s->name, sizeof(s->name));
		fputc('=', t->out);
		st_put_escaped(t->out, s->value, sizeof(s->value));
		fprintf(t->out, "%s%s\n", s->from_env ? "" : " (default)",
			fdr_option_by_env(s->name) ? "" : " (an option this fdrange does not know)");
	}
}

/* Is setting @name @value in the block (both bounded: the block is data)? */
static bool setting_is(const struct fdr_blk_hdr *h, const char *name, const char *value)
{
	for (uint32_t i = 0; i < h->nsettings && i < FDR_SETTINGS_MAX; i++)
		if (!strncmp(h->settings[i].name, name, sizeof(h->settings[i].name)) &&
		    !strncmp(h->settings[i].value, value, sizeof(h->settings[i].value)))
			return true;
	return false;
}

static uint64_t pct_of(uint64_t a, uint64_t b)
{
	return b ? (uint64_t)(100.0L * a / b + 0.5L) : 0;
}

static void handoff(const struct tctx *t)
{
	const struct st_report *r = t->r;
	const struct fdr_blk_hdr *h = &r->b->hdr;
	static const char *const policy[] = { "auto", "thread", "roundrobin" };
	FILE *out = t->out;
	unsigned long long checked = (unsigned long long)h->hits + h->misses;

	fputs("accepted connections: ", out);
	switch (h->model) {
	case FDR_MODEL_ROTATION:
		fprintf(out, "rotation over %" PRIu32 " %s (", h->rot_len,
			st_pl(h->rot_len, "thread", "threads"));
		for (uint32_t i = 0; i < h->rot_len; i++) {
			uint32_t o = h->rot_owner[i];
			long tid = o < h->nowners ? st_shown_tid(r, r->b->owners[o].tid) : 0;

			if (i)
				fputc(' ', out);
			if (tid > 0)
				fprintf(out, "%ld", tid);
			else
				fprintf(out, "owner %" PRIu32, o);
		}
		fprintf(out, "), learned after %" PRIu64 " %s, %" PRIu64 " %s, %" PRIu64
			"/%llu predictions right\n", h->learned_after,
			st_pl(h->learned_after, "connection", "connections"), h->relearns,
			st_pl(h->relearns, "relearn", "relearns"), h->hits, checked);
		break;
	case FDR_MODEL_LOCAL:
		fprintf(out, "served where accepted (learned after %" PRIu64 " %s, %" PRIu64 " %s, %"
			PRIu64 "/%llu predictions right)%s\n", h->learned_after,
			st_pl(h->learned_after, "connection", "connections"), h->relearns,
			st_pl(h->relearns, "relearn", "relearns"), h->hits, checked,
			/* place.c: only on the dup path, counted kept */
			!h->kernel_range && h->policy == FDR_ACCEPT_AUTO &&
			setting_is(h, "FDRANGE_LOCAL", "keep") ?
			"; since then left where the kernel numbered them (FDRANGE_LOCAL=keep), "
			"counted kept: purity and shared lines of those are the kernel's" : "");
		break;
	case FDR_MODEL_UNPREDICTABLE:
		fprintf(out, "not predictable: of the last %" PRIu32 " %s, %" PRIu64
			"%% were served by another thread than the one that accepted them, and no "
			"rotation fits; such connections are packed in a shared pool, apart from the "
			"threads' own chunks\n", h->judged, st_pl(h->judged, "connection", "connections"),
			pct_of(h->judged - (uint64_t)h->judged_local, h->judged));
		break;
	case FDR_MODEL_UNREGISTERED:
		fprintf(out, "not registered: %" PRIu64 " %s accepted and (almost) none registered with epoll "
			"(a thread per connection?); accepted fds stay where the kernel puts them (%"
			PRIu64 " so far)\n", h->accepted, st_pl(h->accepted, "connection", "connections"),
			h->accepts_left);
		break;
	case FDR_MODEL_LEARNING:
		fprintf(out, "learning (%" PRIu64 " seen)\n", h->accepted);
		break;
	default:
		fprintf(out, "none yet\n");
		break;
	}
	fprintf(out, "  FDRANGE_ACCEPT=%s; %" PRIu64 " accepted, %" PRIu64 " registered by a "
		"serving thread, %" PRIu64 " %s, %" PRIu64 " misplaced (predicted wrong)\n",
		policy[h->policy], h->accepted, h->observed, h->realignments,
		st_pl(h->realignments, "realignment", "realignments"), h->misses);
}

static void spans_of(const struct tctx *t, const struct st_owner *ow)
{
	const struct st_report *r = t->r;

	fputs("  fds ", t->out);
	for (size_t i = 0; i < ow->nspans; i++) {
		const struct st_span *s = &r->spans[ow->span0 + i];

		fprintf(t->out, "%s%ld-%ld", i ? "," : "", s->lo, s->hi - 1);
	}
	fputc('\n', t->out);
}

/* The learning pool holds one connection per 8-fd line: purity means
 * nothing there; how many lines its open fds take says whether it works. */
static void learning_pool(const struct tctx *t, const struct st_owner *ow)
{
	fprintf(t->out, "%u %s on %u %s%s", ow->open, st_pl(ow->open, "fd", "fds"),
		ow->open_lines, st_pl(ow->open_lines, "line", "lines"),
		ow->open == ow->open_lines ? ", one each" : "");
	if (ow->nby)
		fputs("; ", t->out);
}

static void owners(const struct tctx *t)
{
	const struct st_report *r = t->r;
	const struct fdr_blk_hdr *h = &r->b->hdr;
	FILE *out = t->out;

	fprintf(out, "\n%-22s %6s %5s %8s %8s %9s %7s %6s %7s  %s\n", "owner", "chunks", "lines",
		"placed", "inplace", "fallbacks", "probes", "open", "purity",
		"served by (open fds per thread)");
	for (unsigned k = 0; k < r->nowners; k++) {
		const struct st_owner *ow = &r->owners[k];
		const struct fdr_blk_owner *o = &r->b->owners[ow->idx];
		bool learning = o->kind == FDR_KIND_SPARSE;
		char label[48], full[64];

		st_owner_label(r, ow, label, sizeof(label));
		if (ow->group >= 0)
			snprintf(full, sizeof(full), "%c %s", st_letter(ow->group), label);
		else
			snprintf(full, sizeof(full), "  %s", label);
		fprintf(out, "%-22s %6u %5u %8" PRIu64 " %8" PRIu64 " %9" PRIu64 " %7" PRIu64 " %6u",
			full, ow->nchunks, ow->nlines, o->placed, o->inplace, ow->fallbacks, o->probes,
			ow->open);
		put_purity(out, learning ? ST_NO_PURITY : ow->purity);
		if (learning && ow->open)
			learning_pool(t, ow);
		if (!learning || !ow->open || ow->nby)
			put_by(t, ow->by, ow->nby);
		fputc('\n', out);
		if (ow->nspans)
			spans_of(t, ow);
	}
	if (!r->nowners)
		fprintf(out, "  (no owner yet)\n");
	fprintf(out, "%-22s %6s %5s %8s %8s %9s %7s %6u", "  low (below base)", "", "", "", "", "",
		"", r->low_open);
	put_purity(out, ST_NO_PURITY);
	put_by(t, r->low_by, r->low_nby);
	fprintf(out, "\n%-22s %6s %5s %8s %8s %9s %7s %6u", "  unowned", "", "", "", "", "", "",
		r->unowned_open);
	put_purity(out, ST_NO_PURITY);
	put_by(t, r->unowned_by, r->unowned_nby);
	fprintf(out, "\nfallbacks: %" PRIu64 " no room in the owner's chunks, %" PRIu64
		" not below RLIMIT_NOFILE, %" PRIu64 " past the do-no-harm bound, %" PRIu64
		" near the soft limit, %" PRIu64 " other; %" PRIu64 " kept by rule, %" PRIu64
		" kept while single-threaded, %s left below FDRANGE_THRESHOLD %" PRIu64
		" (not counted), %" PRIu64 " epoll %s beyond the record table\n",
		r->fb_why[FDR_FB_FULL], r->fb_why[FDR_FB_LIMIT], r->fb_why[FDR_FB_BOUND],
		r->fb_why[FDR_FB_NEAR], r->fb_why[FDR_FB_OTHER], r->kept, h->single_kept,
		h->few_seen ? "some" : "none", h->threshold, h->untracked,
		st_pl(h->untracked, "registration", "registrations"));
	if (h->kernel_range) {
		uint64_t sets = r->range_sets;

		fprintf(out, "path: kernel range (PR_SET_FD_RANGE): the kernel allocates each "
			"thread's fds in its range, \"inplace\" counts them; %" PRIu64 " range %s, "
			"\"placed\" the fds moved with F_DUPFD\n", sets,
			st_pl(sets, "set (prctl)", "sets (prctl)"));
	} else {
		fprintf(out, "path: dup (F_DUPFD and close per placed fd; the kernel has no "
			"PR_SET_FD_RANGE, or FDRANGE_KERNEL=off)\n");
	}
}

static void groups(const struct tctx *t)
{
	const struct st_report *r = t->r;
	FILE *out = t->out;

	fprintf(out, "\n%s:\n", r->b ? "serving threads (registered the fd with epoll_ctl ADD)" :
		"watching epoll instances (the serving thread is unknown without the library)");
	if (!r->ngroups)
		fprintf(out, "  none\n");
	for (unsigned g = 0; g < r->ngroups; g++) {
		const struct st_group *gr = &r->groups[g];

		fputs("  ", out);
		put_letter(t, (int)g);
		if (r->b && gr->shown > 0)
			fprintf(out, "  tid %-7ld ", gr->shown);
		else if (r->b)
			fprintf(out, "  tid %-7s ", "(gone)");
		if (r->b)
			st_put_escaped(out, gr->name, sizeof(gr->name));
		else
			fprintf(out, "  %s", gr->name);
		fprintf(out, "  %u %s (%u %s, %u accepted)\n", gr->fds, st_pl(gr->fds, "fd", "fds"),
			gr->sockets, st_pl(gr->sockets, "socket", "sockets"), gr->clients);
	}
}

/*
 * Map drawing.  A cursor walks the sorted fds once for the whole map:
 * every row starts where the previous one stopped, so the map costs one
 * pass over the fds plus one character per line drawn.
 */
struct mapper {
	const struct tctx *t;
	size_t cur;
};

static void map_char(struct mapper *m, long line)
{
	const struct st_proc *p = m->t->r->p;
	bool open = false;
	int g = -1;
	bool shared = false;

	while (m->cur < p->nfds && p->fds[m->cur].fd < line * 8)
		m->cur++;
	for (; m->cur < p->nfds && p->fds[m->cur].fd < line * 8 + 8; m->cur++) {
		const struct st_fd *f = &p->fds[m->cur];

		open = true;
		if (f->group < 0)
			continue;
		if (g < 0)
			g = f->group;
		else if (g != f->group)
			shared = true;
	}
	if (shared)
		fprintf(m->t->out, "%s#%s", m->t->color ? "\033[1;41;37m" : "", reset(m->t));
	else if (g >= 0)
		put_letter(m->t, g);
	else if (open)
		fputc('+', m->t->out);
	else
		fprintf(m->t->out, "%s.%s", m->t->color ? "\033[2m" : "", reset(m->t));
}

/* Lines of fds [lo, hi), wrapped at MAP_COLS, trailing empty lines cut. */
static void map_dense(struct mapper *m, const char *label, long lo, long hi)
{
	const struct st_proc *p = m->t->r->p;
	size_t ub = st_lower_bound(p, hi);
	long first = lo / 8, last = (hi + 7) / 8, end = first;

	if (ub > m->cur && ub > 0 && p->fds[ub - 1].fd >= lo)
		end = p->fds[ub - 1].fd / 8 + 1;
	fprintf(m->t->out, "  %-30s ", label);
	for (long l = first; l < end; l++) {
		if (l > first && (l - first) % MAP_COLS == 0)
			fprintf(m->t->out, "\n  %-30s ", "");
		map_char(m, l);
	}
	if (end < last)
		fprintf(m->t->out, "%s%s(+%ld empty)%s", end > first ? " " : "",
			m->t->color ? "\033[2m" : "", last - end, reset(m->t));
	fputc('\n', m->t->out);
	m->cur = ub;
}

/* fds [lo, hi): only the 512-fd rows that hold open fds. */
static void map_sparse(struct mapper *m, const char *what, long lo, long hi)
{
	const struct st_proc *p = m->t->r->p;
	char label[64];

	m->cur = st_lower_bound(p, lo);
	while (m->cur < p->nfds && p->fds[m->cur].fd < hi) {
		long rlo = lo + (p->fds[m->cur].fd - lo) / (8L * MAP_COLS) * (8L * MAP_COLS);
		long rhi = rlo + 8L * MAP_COLS < hi ? rlo + 8L * MAP_COLS : hi;

		snprintf(label, sizeof(label), "%s %ld-%ld", what, rlo, rhi - 1);
		map_dense(m, label, rlo, rhi);
	}
}

/* Whether fd @fd lies in a chunk the line pool holds. */
static bool in_line_pool(const struct st_blk *b, long fd)
{
	long c = (fd - (long)b->hdr.base) / (long)FDR_CHUNK;

	return fd >= (long)b->hdr.base && c < (long)b->hdr.top_chunk &&
	       b->chunks[c] == FDR_OWN_LINES + 1;
}

/* Claimed chunks in fd order, a row per run of one owner; in the line
 * pool's chunks a run of one holder's lines, shown as its own. */
static void map_chunks(const struct tctx *t, struct mapper *m, const int *ridx)
{
	const struct st_report *r = t->r;
	const struct fdr_blk_hdr *h = &r->b->hdr;
	long top = (long)h->base + (long)h->top_chunk * FDR_CHUNK, lo = h->base;
	char label[96];

	while (lo < top) {
		bool pool = in_line_pool(r->b, lo);
		int o = st_owner_of_fd(r->b, lo);
		long hi = lo + (pool ? 8 : FDR_CHUNK);

		while (hi < top && in_line_pool(r->b, hi) == pool && st_owner_of_fd(r->b, hi) == o)
			hi += pool ? 8 : FDR_CHUNK;
		if (o < 0) {
			map_sparse(m, "unowned", lo, hi);
		} else {
			const struct st_owner *ow = ridx && ridx[o] >= 0 ? &r->owners[ridx[o]] : NULL;
			char ol[48];

			if (ow)
				st_owner_label(r, ow, ol, sizeof(ol));
			else
				snprintf(ol, sizeof(ol), "owner %d", o);
			snprintf(label, sizeof(label), "%s%s %ld-%ld", ol,
				 pool && o != (int)FDR_OWN_LINES ? " lines" : "", lo, hi - 1);
			map_dense(m, label, lo, hi);
		}
		lo = hi;
	}
}

static void map(const struct tctx *t)
{
	const struct st_report *r = t->r;
	const struct st_proc *p = r->p;
	struct mapper m = { t, 0 };
	long max = p->nfds ? (long)p->fds[p->nfds - 1].fd + 1 : 0;

	fprintf(t->out, "\nmap, one character per 8-fd line of the fd table (64 per row = 512 fds):\n"
		"  letter: open fds there are served by that %s only; '#': by two or more "
		"(a shared line);\n  '+': open, server unknown; '.': nothing open; rows without "
		"open fds are left out\n", r->b ? "thread" : "epoll instance");
	if (!r->b) {
		map_sparse(&m, "fds", 0, max);
		if (!max)
			fprintf(t->out, "  (no open fds)\n");
		return;
	}
	{
		const struct fdr_blk_hdr *h = &r->b->hdr;
		long base = h->base, top = base + (long)h->top_chunk * FDR_CHUNK;
		/* Owner index to report row: a lookup per run, not a search. */
		int *ridx = malloc((h->nowners ? h->nowners : 1) * sizeof(*ridx));

		for (uint32_t i = 0; ridx && i < h->nowners; i++)
			ridx[i] = -1;
		for (unsigned k = 0; ridx && k < r->nowners; k++)
			ridx[r->owners[k].idx] = (int)k;

		if (base) {
			char label[32];

			snprintf(label, sizeof(label), "low 0-%ld", base - 1);
			map_dense(&m, label, 0, base);
		}
		map_chunks(t, &m, ridx);
		if (max > top)
			map_sparse(&m, "above", top, max);
		free(ridx);
	}
}

static void put_purity_kv(FILE *out, const char *k, double p)
{
	if (p < 0)
		fprintf(out, " %s=-", k);
	else
		fprintf(out, " %s=%.1f", k, p);
}

void st_summary_text(FILE *out, const struct st_summary *s)
{
	const char *why = st_reason_word(s->reason);

	if (s->error[0]) {
		fprintf(out, "summary: pid=%ld error=%s\n", s->pid, s->error_reason);
		return;
	}
	fprintf(out, "summary: pid=%ld library=%s open_fds=%zu groups=%u shared_lines=%lu "
		"shared_socket_lines=%lu client_sockets=%lu shared_client_lines=%lu", s->pid,
		s->library, s->open_fds, s->groups, s->shared_lines, s->shared_socket_lines,
		s->client_sockets, s->shared_client_lines);
	if (s->block) {
		put_purity_kv(out, "min_purity", s->min_purity);
		put_purity_kv(out, "min_client_purity", s->min_client_purity);
		fprintf(out, " placed=%" PRIu64 " inplace=%" PRIu64 " kept=%" PRIu64
			" fallbacks=%" PRIu64 " extra_probes=%" PRIu64
			" model=%s realignments=%" PRIu64 " misplaced=%" PRIu64 " unseen_fds=%lu"
			" threshold=%" PRIu64 " low_shared_client_lines=%lu path=%s"
			" range_sets=%" PRIu64,
			s->placed, s->inplace, s->kept, s->fallbacks, s->probes, s->model,
			s->realignments, s->misses,
			s->unseen, s->threshold, s->low_shared_client_lines,
			s->kernel_range ? "kernel-range" : "dup", s->range_sets);
	}
	fprintf(out, " reason=%s\n", why ? why : "-");
}

/* The block's header lines: version, settings, geometry, the bound. */
static void block_head(const struct tctx *t)
{
	const struct st_report *r = t->r;
	const struct st_proc *p = r->p;
	const struct fdr_blk_hdr *h = &r->b->hdr;
	FILE *out = t->out;
	unsigned long long cap = h->nr_open < p->soft_limit || !p->soft_limit ?
				 h->nr_open : p->soft_limit;

	fputs("libfdrange ", out);
	st_put_escaped(out, h->lib_version, sizeof(h->lib_version));
	fprintf(out, ", stats block v%" PRIu32 " (memfd mapped at %" PRIx64 "-%" PRIx64
		", read through %s)\n", h->version, r->b->map_start, r->b->map_end,
		r->b->via ? r->b->via : "memory");
	settings(t);
	fprintf(out, "geometry: 64-fd chunks from fd %" PRIu32 ", %u claimed, top %" PRIu32
		" of %" PRIu32 "; width: ", h->base, r->claimed_chunks, h->top_chunk, h->nchunks);
	if (h->fixed_width)
		fprintf(out, "fixed, %" PRIu32 " fds per range", h->fixed_width);
	else
		fputs("growable", out);
	fprintf(out, "; limit %llu (RLIMIT_NOFILE %" PRIu64 " as the library saw it, %"
		PRIu64 " %s, %llu now); fs.nr_open %" PRIu64 "\n", cap, h->limit,
		h->limit_changes, st_pl(h->limit_changes, "change", "changes"), p->soft_limit,
		h->nr_open);
	if (p->soft_limit && p->soft_limit != h->limit)
		fprintf(out, "  note: the limit was changed from outside; fds that no longer "
			"fit fall back\n");
	if (setting_is(h, "FDRANGE_BOUND", "off")) {
		fprintf(out, "  do-no-harm bound: off (FDRANGE_BOUND=off): chunks anywhere below "
			"the limit, fds at 1024 and above while few are open\n");
	} else if (h->bound_top) {
		fprintf(out, "  do-no-harm bound: chunks only below fd %" PRIu64
			" (max(FD_SETSIZE, 2 x open fds + 64)); ", h->bound_top);
		if (h->counts)
			fprintf(out, "open fds counted %" PRIu64 " %s, %" PRIu64 " at the last\n",
				h->counts, st_pl(h->counts, "time", "times"), h->open_counted);
		else
			fprintf(out, "open fds not counted yet (no claim reached it)\n");
	}
}

static void why_line(const struct tctx *t)
{
	const struct st_report *r = t->r;
	char why[ST_WHY_MAX + 200];

	st_reason_text(r, why, sizeof(why));
	if (r->b) {
		if (r->reason != ST_R_NONE) {
			fputs("not placing fds: ", t->out);
			st_put_escaped(t->out, why, sizeof(why));
			fputc('\n', t->out);
		}
		if (st_unseen_matters(r))
			fprintf(t->out, "note: at least %lu of the %zu open fds never passed through "
				"libfdrange: inherited, made before it loaded, or by calls it does not "
				"wrap (raw syscalls as in Go programs, glibc-internal opens, io_uring, "
				"SCM_RIGHTS)\n", st_unseen(r), r->p->nfds);
		return;
	}
	fputs(r->reason == ST_R_INHERITED ? "stats block: " : "no stats block: ", t->out);
	st_put_escaped(t->out, why, sizeof(why));
	if (r->reason == ST_R_INHERITED)
		fputs(" (a fork child keeps its parent's block, unused, until it places an fd: "
		      "those counters are not this process's)", t->out);
	fputs(".\nFrom /proc alone the serving thread of an fd cannot be known, nor what the\n"
	      "library would have placed; shown instead: which epoll instance watches each fd\n"
	      "(event-loop servers such as memcached run one per thread), and how the\n"
	      "kernel's lowest-free numbering interleaves them in the fd table.\n", t->out);
}

void st_render_text(FILE *out, const struct st_report *r, const struct st_text_opts *o)
{
	struct tctx t = { out, r, o->color };
	const struct st_proc *p = r->p;
	struct st_summary sum;

	fprintf(out, "pid %ld (", p->pid);
	st_put_escaped(out, p->comm, sizeof(p->comm));
	fprintf(out, "): %zu open %s, %u %s, RLIMIT_NOFILE %llu\n", p->nfds,
		st_pl(p->nfds, "fd", "fds"), p->threads, st_pl(p->threads, "thread", "threads"),
		p->soft_limit);
	if (st_other_ns(p))
		fprintf(out, "pid namespace: its own, where it is pid %ld; pids and tids here are "
			"as seen from this one\n", p->nspid);
	if (r->b)
		block_head(&t);
	why_line(&t);
	/* Disabled or misconfigured from the start: nothing was ever placed. */
	if (r->b && r->reason != ST_R_DISABLED && r->reason != ST_R_CONFIG) {
		handoff(&t);
		owners(&t);
	}
	groups(&t);
	fprintf(out, "\nshared 8-fd lines (open fds of two or more %s on one line): %lu of %lu %s "
		"with served fds; among sockets only: %lu of %lu; among accepted client sockets: "
		"%lu of %lu\n", r->b ? "threads" : "epoll instances", r->t.shared, r->t.lines,
		st_pl(r->t.lines, "line", "lines"), r->t.sock_shared, r->t.sock_lines,
		r->t.client_shared, r->t.client_lines);
	if (r->b && r->b->hdr.threshold)
		fprintf(out, "  (counted from fd %" PRIu64 ", FDRANGE_THRESHOLD: below it the kernel's "
			"numbering stands, as without the library; %lu of its %lu %s shared, %lu "
			"among client sockets)\n", r->b->hdr.threshold, r->t.low_shared,
			r->t.low_lines, st_pl(r->t.low_lines, "line", "lines"),
			r->t.low_client_shared);
	if (o->map)
		map(&t);
	fputc('\n', out);
	st_summarize(r, &sum);
	st_summary_text(out, &sum);
}
