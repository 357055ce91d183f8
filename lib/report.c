/* SPDX-License-Identifier: MIT */
/*
 * The statistics report (FDRANGE_STATS, fdrange_report()): the settings in
 * force and where they came from, the geometry, and per range what was
 * placed and why anything fell back.  Written with raw write(2) from a stack
 * buffer, so it works from a destructor and a signal handler alike.
 */
#include "state.h"
#include "geometry.h"
#include "shm_stats.h"
#include "strbuf.h"
#include "sys.h"

static unsigned long load(const unsigned long *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void row(struct strbuf *sb, const char *name, const char *span,
		const unsigned long v[7])
{
	sb_strw(sb, name, 6);
	sb_strw(sb, span, 16);
	for (unsigned i = 0; i < 7; i++)
		sb_u64w(sb, v[i], 9);
	sb_char(sb, '\n');
}

int fdr_report_write(int fd)
{
	const struct fdr_config *cfg = &fdr_st.cfg;
	unsigned long total[7] = { 0 }, width, limit;
	unsigned idle = 0;
	char mem[1024], val[FDR_PATH_MAX], span[32], name[16];
	struct strbuf sb, tmp;

	sb_init(&sb, mem, sizeof(mem), fd);
	sb_str(&sb, "libfdrange " FDRANGE_VERSION_STRING " report: pid ");
	sb_u64(&sb, (unsigned long long)sys_getpid());
	sb_str(&sb, fdr_st.active ? ", placing fds\n" :
		    fdr_st.secure ? ", passing through (secure-execution mode)\n" :
		    fdr_st.config_error ? ", passing through (bad configuration)\n" :
		    ", passing through (FDRANGE_DISABLE)\n");
	sb_str(&sb, "settings:");
	for (unsigned i = 0; i < fdr_noptions; i++) {
		fdr_option_format(&fdr_options[i], cfg, val, sizeof(val));
		sb_str(&sb, i % 4 ? " " : "\n ");
		sb_str(&sb, fdr_options[i].env);
		sb_char(&sb, '=');
		sb_str(&sb, val);
		if (cfg->source[i] == FDR_SRC_DEFAULT)
			sb_str(&sb, "(default)");
	}
	limit = load(&fdr_st.limit);
	sb_str(&sb, "\ngeometry: RLIMIT_NOFILE ");
	sb_u64(&sb, limit);
	sb_str(&sb, " (changed ");
	sb_u64(&sb, load(&fdr_st.limit_changes));
	sb_str(&sb, " times), fs.nr_open ");
	sb_u64(&sb, fdr_st.nr_open);
	width = __atomic_load_n(&fdr_st.width, __ATOMIC_RELAXED);
	sb_str(&sb, ", range width ");
	sb_u64(&sb, width);
	if (width) {
		sb_str(&sb, ", ranges cover fds ");
		sb_u64(&sb, cfg->base);
		sb_str(&sb, "-");
		sb_u64(&sb, fdr_geom_lo(cfg, (unsigned)width, cfg->slots) - 1);
	} else {
		sb_str(&sb, " (no range fits below the limit: not moving)");
	}
	sb_str(&sb, "\nrange fds               threads   placed  inplace     kept  fb_full fb_limit fb_other\n");
	for (unsigned r = 0; r < cfg->slots; r++) {
		const struct fdr_range_stats *rs = fdr_rs(r);
		unsigned long v[7] = {
			load(&rs->threads), load(&rs->placed), load(&rs->inplace),
			load(&rs->kept), load(&rs->fallback[FDR_FB_FULL]),
			load(&rs->fallback[FDR_FB_LIMIT]), load(&rs->fallback[FDR_FB_OTHER]),
		};
		bool any = false;

		for (unsigned i = 0; i < 7; i++) {
			total[i] += v[i];
			any |= v[i] != 0;
		}
		if (!any) {
			idle++;
			continue;
		}
		sb_init(&tmp, name, sizeof(name), -1);
		sb_u64(&tmp, r);
		sb_init(&tmp, span, sizeof(span), -1);
		if (width) {
			sb_u64(&tmp, fdr_geom_lo(cfg, (unsigned)width, r));
			sb_char(&tmp, '-');
			sb_u64(&tmp, fdr_geom_lo(cfg, (unsigned)width, r + 1) - 1);
		} else {
			sb_char(&tmp, '-');
		}
		row(&sb, name, span, v);
	}
	row(&sb, "total", "", total);
	if (idle) {
		sb_u64(&sb, idle);
		sb_str(&sb, " idle ranges not shown\n");
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
	/* Every %p may add digits: a cut path would be some other file. */
	fd = sb.len + 1 >= sizeof(path) ? -ENAMETOOLONG :
		sys_openat(AT_FDCWD, path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		char mem[FDR_PATH_MAX + 128];
		struct strbuf err;

		sb_init(&err, mem, sizeof(mem), 2);
		sb_str(&err, "libfdrange: FDRANGE_STATS: cannot open ");
		sb_quoted(&err, path, FDR_PATH_MAX);
		sb_str(&err, " for the report (errno ");
		sb_u64(&err, (unsigned long long)-fd);
		sb_str(&err, ")\n");
		sb_flush(&err);
	}
	return (int)fd;
}

__attribute__((destructor)) static void fdr_report_at_exit(void)
{
	int fd;

	if (__atomic_load_n(&fdr_st.phase, __ATOMIC_ACQUIRE) != FDR_READY ||
	    !fdr_st.cfg.stats[0])
		return;
	fd = open_dest(fdr_st.cfg.stats);
	if (fd < 0)
		return;
	fdr_report_write(fd);
	if (fd != 2)
		sys_close(fd);
}
