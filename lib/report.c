/* SPDX-License-Identifier: MIT */
/*
 * The statistics report (FDRANGE_STATS, fdrange_report()): the settings in
 * force and where they came from (from the option table), the geometry,
 * what was learned about accepted connections, and per owner what was
 * placed and why anything fell back.  Written with raw write(2) from a
 * stack buffer, so it works from a destructor and a signal handler alike.
 */
#include "state.h"
#include "geometry.h"
#include "proc.h"
#include "strbuf.h"
#include "sys.h"

#define NCOLS 12

static uint64_t load(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void row(struct strbuf *sb, const char *name, const char *kind, uint64_t tid,
		const uint64_t v[NCOLS])
{
	sb_strw(sb, name, 6);
	sb_strw(sb, kind, 8);
	sb_u64w(sb, tid, 8);
	for (unsigned i = 0; i < NCOLS; i++)
		sb_u64w(sb, v[i], 9);
	sb_char(sb, '\n');
}

static void settings(struct strbuf *sb, const struct fdr_config *cfg)
{
	char val[FDR_PATH_MAX];

	sb_str(sb, "settings:");
	for (unsigned i = 0; i < fdr_noptions; i++) {
		fdr_option_format(&fdr_options[i], cfg, val, sizeof(val));
		sb_str(sb, i % 4 ? " " : "\n ");
		sb_str(sb, fdr_options[i].env);
		sb_char(sb, '=');
		sb_str(sb, val);
		if (cfg->source[i] == FDR_SRC_DEFAULT)
			sb_str(sb, "(default)");
	}
	sb_char(sb, '\n');
}

static void model(struct strbuf *sb, const struct fdr_blk_hdr *h)
{
	unsigned m = __atomic_load_n(&h->model, __ATOMIC_RELAXED);

	sb_str(sb, "accepted: ");
	sb_u64(sb, load(&h->accepted));
	sb_str(sb, " connections while multi-threaded, ");
	sb_u64(sb, load(&h->observed));
	sb_str(sb, " seen registered; model ");
	sb_str(sb, m < FDR_MODEL_NR ? fdr_model_words[m] : "?");
	if (m == FDR_MODEL_ROTATION) {
		sb_str(sb, " over ");
		sb_u64(sb, h->rot_len);
	}
	if (m == FDR_MODEL_LOCAL || m == FDR_MODEL_ROTATION || m == FDR_MODEL_UNPREDICTABLE ||
	    m == FDR_MODEL_UNREGISTERED) {
		sb_str(sb, ", settled after ");
		sb_u64(sb, load(&h->learned_after));
	}
	sb_str(sb, "; ");
	sb_u64(sb, load(&h->relearns));
	sb_str(sb, " relearns, predictions ");
	sb_u64(sb, load(&h->hits));
	sb_str(sb, " right, ");
	sb_u64(sb, load(&h->misses));
	sb_str(sb, " wrong, ");
	sb_u64(sb, load(&h->realignments));
	sb_str(sb, " realignments");
	if (m == FDR_MODEL_UNREGISTERED) {
		sb_str(sb, "; left where the kernel put them: ");
		sb_u64(sb, load(&h->accepts_left));
	}
	sb_char(sb, '\n');
}

static void owners(struct strbuf *sb, const struct fdr_blk_hdr *h)
{
	uint64_t total[NCOLS] = { 0 };
	unsigned idle = 0, n = __atomic_load_n(&h->nowners, __ATOMIC_RELAXED);

	sb_str(sb, "owner kind         tid   chunks    lines  threads   placed  inplace     kept"
		   "  fb_full fb_limit fb_other fb_bound  fb_near   probes\n");
	for (unsigned o = 0; o < n && o < FDR_MAX_OWNERS; o++) {
		const struct fdr_blk_owner *ow = &fdr_p->owners[o];
		uint64_t v[NCOLS] = {
			__atomic_load_n(&ow->chunks, __ATOMIC_RELAXED),
			__atomic_load_n(&ow->lines, __ATOMIC_RELAXED), load(&ow->threads),
			load(&ow->placed), load(&ow->inplace), load(&ow->kept),
			load(&ow->fallback[FDR_FB_FULL]), load(&ow->fallback[FDR_FB_LIMIT]),
			load(&ow->fallback[FDR_FB_OTHER]), load(&ow->fallback[FDR_FB_BOUND]),
			load(&ow->fallback[FDR_FB_NEAR]), load(&ow->probes),
		};
		unsigned kind = __atomic_load_n(&ow->kind, __ATOMIC_RELAXED);
		bool any = false;
		char name[16];
		struct strbuf tmp;

		for (unsigned i = 0; i < NCOLS; i++) {
			total[i] += v[i];
			any |= i != 2 && v[i] != 0;
		}
		if (!any) {
			idle++;
			continue;
		}
		sb_init(&tmp, name, sizeof(name), -1);
		sb_u64(&tmp, o);
		row(sb, name, kind < FDR_KIND_NR ? fdr_kind_words[kind] : "?",
		    __atomic_load_n(&ow->tid, __ATOMIC_RELAXED), v);
	}
	row(sb, "total", "", 0, total);
	if (idle) {
		sb_u64(sb, idle);
		sb_str(sb, " idle owners not shown\n");
	}
}

int fdr_report_write(int fd)
{
	const struct fdr_config *cfg = &fdr_st.cfg;
	const struct fdr_blk_hdr *h = __atomic_load_n(&fdr_p->hdr, __ATOMIC_ACQUIRE);
	unsigned long limit = __atomic_load_n(&fdr_st.limit, __ATOMIC_RELAXED);
	bool active = __atomic_load_n(&fdr_st.active, __ATOMIC_RELAXED);
	char mem[1024];
	struct strbuf sb;

	sb_init(&sb, mem, sizeof(mem), fd);
	sb_str(&sb, "libfdrange " FDRANGE_VERSION_STRING " report: pid ");
	sb_u64(&sb, (unsigned long long)sys_getpid());
	sb_str(&sb, active ? ", placing fds" :
		    fdr_st.why == FDR_WHY_SECCOMP ? ", passing through (a seccomp filter)" :
		    fdr_st.why == FDR_WHY_CONFIG ? ", passing through (bad configuration: " :
		    fdr_st.why == FDR_WHY_DISABLED ? ", passing through (FDRANGE_DISABLE)" :
		    ", passing through (no memory for its state)");
	if (!active && fdr_st.why == FDR_WHY_CONFIG) {
		sb_str(&sb, fdr_st.why_msg);
		sb_char(&sb, ')');
	}
	sb_str(&sb, fdr_st.secure ? " in secure-execution mode\n" : "\n");
	settings(&sb, cfg);
	sb_str(&sb, "geometry: RLIMIT_NOFILE ");
	sb_u64(&sb, limit);
	sb_str(&sb, " (changed ");
	sb_u64(&sb, h ? load(&h->limit_changes) : 0);
	sb_str(&sb, " times), fs.nr_open ");
	sb_u64(&sb, fdr_st.nr_open);
	sb_str(&sb, ", chunks of 64 fds from fd ");
	sb_u64(&sb, cfg->base);
	if (cfg->width) {
		sb_str(&sb, ", fixed ranges of ");
		sb_u64(&sb, cfg->width);
	}
	if (h) {
		unsigned top = __atomic_load_n(&h->top_chunk, __ATOMIC_RELAXED);

		sb_str(&sb, ", ");
		sb_u64(&sb, top);
		sb_str(&sb, " claimed at most (highest fd ");
		sb_u64(&sb, top ? fdr_chunk_lo(cfg->base, top) - 1 : cfg->base);
		sb_str(&sb, "); bound ");
		sb_u64(&sb, load(&h->bound_top));
		sb_str(&sb, " (open fds counted ");
		sb_u64(&sb, load(&h->counts));
		sb_str(&sb, " times, last ");
		sb_u64(&sb, load(&h->open_counted));
		sb_str(&sb, ")");
	}
	sb_char(&sb, '\n');
	if (h) {
		model(&sb, h);
		owners(&sb, h);
		sb_str(&sb, "left alone while single-threaded: ");
		sb_u64(&sb, load(&h->single_kept));
		sb_str(&sb, " fds; fds left below FDRANGE_THRESHOLD ");
		sb_u64(&sb, cfg->threshold);
		sb_str(&sb, load(&h->few_seen) ? ": some\n" : ": none\n");
		sb_str(&sb, load(&h->kernel_range) ?
		       "placement path: kernel range (PR_SET_FD_RANGE)\n" :
		       "placement path: dup (F_DUPFD)\n");
	}
	return sb_flush(&sb);
}

static int open_dest(const char *dest)
{
	char path[FDR_PATH_MAX + 24];
	struct strbuf sb;
	long fd;

	if (!__builtin_strcmp(dest, "stderr"))
		return 2;
	sb_init(&sb, path, sizeof(path), -1);
	for (; *dest; dest++) {
		if (dest[0] == '%' && dest[1] == 'p') {
			sb_u64(&sb, (unsigned long long)sys_getpid());
			dest++;
		} else {
			sb_char(&sb, *dest);
		}
	}
	/*
	 * Every %p may add digits: a cut path would be some other file.  Never
	 * through a symlink another user planted (a root process would append
	 * to the file it names), and no wider access than the owner's.
	 */
	fd = sb.len + 1 >= sizeof(path) ? -ENAMETOOLONG :
		sys_openat(AT_FDCWD, path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
			   0600);
	if (fd < 0) {
		char mem[FDR_PATH_MAX + 128];
		struct strbuf err;

		sb_init(&err, mem, sizeof(mem), 2);
		sb_str(&err, "libfdrange: FDRANGE_STATS: cannot open ");
		sb_quoted(&err, path, FDR_PATH_MAX);
		sb_str(&err, fd == -ELOOP ? " for the report: it is a symbolic link\n" :
			      " for the report (errno ");
		if (fd != -ELOOP) {
			sb_u64(&err, (unsigned long long)-fd);
			sb_str(&err, ")\n");
		}
		sb_flush(&err);
	}
	return (int)fd;
}

void fdr_report_at_exit(void)
{
	int fd;

	/* Under a seccomp filter: not even this (open may be forbidden). */
	if (__atomic_load_n(&fdr_st.phase, __ATOMIC_ACQUIRE) != FDR_READY ||
	    !fdr_st.cfg.stats[0] || __atomic_load_n(&fdr_st.sandboxed, __ATOMIC_RELAXED))
		return;
	fd = open_dest(fdr_st.cfg.stats);
	if (fd < 0)
		return;
	fdr_report_write(fd);
	if (fd != 2)
		sys_close(fd);
}
