/* SPDX-License-Identifier: MIT */
/*
 * fdrange stat PID: the locality report of a running process, read from
 * another shell without stopping it.
 *
 * Sources, all read-only:
 *  - /proc/PID/fd and fdinfo: the open fds, and for every epoll instance
 *    the fds it watches (its "tfd:" lines, with the watched file's inode);
 *  - /dev/shm/fdrange.NS.PID, the library's stats block (lib/shm_stats.h),
 *    found by name in /proc/PID/maps, so trusted only while the process
 *    maps it:
 *    settings, geometry, per-range counters, and per fd the thread that
 *    registered it with epoll_ctl(EPOLL_CTL_ADD).
 * Without the block (plain process, library disabled) the serving thread
 * of an fd is unknown: fds are grouped by the epoll instance watching them,
 * which in event-loop servers such as memcached stands for one thread.
 */
#include "stat.h"
#include "options.h"
#include "geometry.h"
#include "shm_stats.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define MAX_GROUPS 62
#define MAP_COLS 64      /* map characters per row: 512 fds, one open_fds line */

struct fdinfo {
	long fd;
	unsigned long ino;
	char target[96];
	bool is_epoll, is_socket;
	int watchers;         /* epoll instances watching it */
	long watcher;         /* the (last) epoll fd watching it */
	uint32_t tid;         /* library: registering thread, validated */
	bool pending;         /* library: accepted, not yet registered */
	int group;            /* index into groups, -1 unknown */
};

struct group {
	long key;             /* tid (library) or epoll fd (/proc only) */
	char name[32];
	unsigned fds, sockets;
	unsigned lane;        /* range served + 1 (roundrobin lanes), 0 none */
};

struct report {
	long pid;
	char comm[64];
	bool lib_mapped, have_blk;
	char blk_path[64];    /* as the process names it, in its mount namespace */
	struct fdr_shm_hdr hdr;
	struct fdr_range_stats *ranges;
	uint32_t *lanes;
	struct fdinfo *fds;
	size_t nfds;
	struct group groups[MAX_GROUPS];
	unsigned ngroups;
	unsigned long soft_limit;
	bool color;
};

static const char *prog = "fdrange stat";

static int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return (int)n;
}

static int cmp_fd(const void *a, const void *b)
{
	const struct fdinfo *x = a, *y = b;

	return (x->fd > y->fd) - (x->fd < y->fd);
}

static struct fdinfo *find_fd(struct report *r, long fd)
{
	size_t lo = 0, hi = r->nfds;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (r->fds[mid].fd == fd)
			return &r->fds[mid];
		if (r->fds[mid].fd < fd)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int list_fds(struct report *r)
{
	char path[64];
	struct dirent *de;
	size_t cap = 256;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%ld/fd", r->pid);
	d = opendir(path);
	if (!d)
		return -errno;
	r->fds = calloc(cap, sizeof(*r->fds));
	if (!r->fds) {
		closedir(d);
		return -ENOMEM;
	}
	while ((de = readdir(d))) {
		struct fdinfo *f;
		char lp[320];
		struct stat st;
		ssize_t n;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (r->nfds == cap) {
			struct fdinfo *nf = realloc(r->fds, 2 * cap * sizeof(*nf));

			if (!nf) {
				closedir(d);
				return -ENOMEM;
			}
			r->fds = nf;
			cap *= 2;
		}
		f = &r->fds[r->nfds];
		memset(f, 0, sizeof(*f));
		f->fd = strtol(de->d_name, NULL, 10);
		f->group = -1;
		snprintf(lp, sizeof(lp), "/proc/%ld/fd/%s", r->pid, de->d_name);
		n = readlink(lp, f->target, sizeof(f->target) - 1);
		if (n < 0)
			continue;  /* closed meanwhile */
		f->target[n] = 0;
		if (stat(lp, &st) == 0)
			f->ino = st.st_ino;
		f->is_epoll = !strcmp(f->target, "anon_inode:[eventpoll]");
		f->is_socket = !strncmp(f->target, "socket:", 7);
		r->nfds++;
	}
	closedir(d);
	qsort(r->fds, r->nfds, sizeof(*r->fds), cmp_fd);
	return 0;
}

/* Each epoll's fdinfo lists what it watches: "tfd: N events: .. ino:HEX". */
static void read_epolls(struct report *r)
{
	for (size_t i = 0; i < r->nfds; i++) {
		char path[64], line[256];
		FILE *fp;

		if (!r->fds[i].is_epoll)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/fdinfo/%ld", r->pid, r->fds[i].fd);
		fp = fopen(path, "re");
		if (!fp)
			continue;
		while (fgets(line, sizeof(line), fp)) {
			const char *ip = strstr(line, " ino:");
			struct fdinfo *t;
			unsigned long ino;
			char *end;
			long tfd;

			if (strncmp(line, "tfd:", 4) != 0 || !ip)
				continue;
			errno = 0;
			tfd = strtol(line + 4, &end, 10);
			if (errno || end == line + 4 || tfd < 0)
				continue;
			ino = strtoul(ip + 5, NULL, 16);
			t = find_fd(r, tfd);
			/* A watched fd number now naming another file is stale. */
			if (!t || (t->ino && t->ino != ino))
				continue;
			t->watchers++;
			t->watcher = r->fds[i].fd;
		}
		fclose(fp);
	}
}

/* Where the process's stats block is, from its maps line. */
struct blk_loc {
	long ns_pid;                 /* the pid in the name: the process's own view */
	unsigned long dev_major, dev_minor;
	unsigned long long ino;
	bool old_name;               /* fdrange.PID: an older libfdrange's block */
};

/* "start-end perms offset MAJ:MIN INODE ...": the device and the inode. */
static bool maps_dev_ino(const char *line, struct blk_loc *b)
{
	const char *p = line;
	char *end;

	for (int field = 0; field < 3; field++) {
		p = strchr(p, ' ');
		if (!p)
			return false;
		p++;
	}
	errno = 0;
	b->dev_major = strtoul(p, &end, 16);
	if (*end != ':')
		return false;
	b->dev_minor = strtoul(end + 1, &end, 16);
	if (*end != ' ')
		return false;
	b->ino = strtoull(end + 1, &end, 10);
	return !errno && *end == ' ' && b->ino;
}

/*
 * The stats block the process has mapped, found by name in its maps: the
 * name carries its pid namespace and its pid there, which need not be the
 * PID we were given (a process in a container, seen from the host).
 * Also notes whether libfdrange itself is mapped.
 */
static bool find_block(long pid, char *out, size_t outlen, struct blk_loc *b, bool *lib)
{
	static const char needle[] = " " FDR_SHM_DIR "/" FDR_SHM_PREFIX;
	char path[64], line[512];
	bool found = false;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
	fp = fopen(path, "re");
	if (!fp)
		return false;
	while (fgets(line, sizeof(line), fp)) {
		char *p = strstr(line, needle);
		const char *end;
		unsigned long long ns;
		long n;

		if (strstr(line, "/libfdrange.so"))
			*lib = true;
		if (!p || found)
			continue;
		p++;
		/* Exactly NS.PID: a removed file shows as "... (deleted)". */
		end = fdr_shm_parse_name(p + sizeof(needle) - 2, &ns, &n);
		if (!end) {
			/* An older libfdrange named it by pid alone. */
			const char *q = p + sizeof(needle) - 2;

			while (isdigit((unsigned char)*q))
				q++;
			b->old_name |= q > p + sizeof(needle) - 2 && *q == '\n';
			continue;
		}
		if (*end != '\n' || (size_t)(end - p) >= outlen || !maps_dev_ino(line, b))
			continue;
		memcpy(out, p, (size_t)(end - p));
		out[end - p] = 0;
		b->ns_pid = n;
		found = true;
	}
	fclose(fp);
	return found;
}

/*
 * Open the file the process maps, through its own root (its /dev/shm may
 * not be ours), following no link and opening nothing until it is known to
 * be that very regular file: a process could put a FIFO or a device where
 * its block was, and this often runs as root.  Returns an fd or -errno.
 */
static int open_mapped(long pid, const char *path, const struct blk_loc *b)
{
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS,
	};
	char buf[64];
	struct stat st;
	int dfd, pfd, fd, err;

	snprintf(buf, sizeof(buf), "/proc/%ld/root", pid);
	dfd = open(buf, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	pfd = (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));
	if (pfd < 0 && errno == ENOSYS)  /* Linux < 5.6: the inode check below still holds */
		pfd = openat(dfd, path + 1, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	err = errno;
	close(dfd);
	if (pfd < 0)
		return -err;
	if (fstat(pfd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_ino != b->ino ||
	    major(st.st_dev) != b->dev_major || minor(st.st_dev) != b->dev_minor) {
		close(pfd);
		return -ESTALE;
	}
	snprintf(buf, sizeof(buf), "/proc/self/fd/%d", pfd);
	fd = open(buf, O_RDONLY | O_CLOEXEC);
	err = errno;
	close(pfd);
	return fd < 0 ? -err : fd;
}

static int pread_all(int fd, void *buf, size_t len, off_t off)
{
	ssize_t n = pread(fd, buf, len, off);

	return n == (ssize_t)len ? 0 : -EIO;
}

/* The stats block, if the process has it mapped and it is one we read. */
static void read_block(struct report *r, char *why, size_t whylen)
{
	char *path = r->blk_path;
	struct fdr_shm_hdr *h = &r->hdr;
	struct blk_loc b = { 0 };
	int fd;

	if (!find_block(r->pid, path, sizeof(r->blk_path), &b, &r->lib_mapped)) {
		snprintf(why, whylen, b.old_name ?
			 "its stats block has the name of an older libfdrange (fdrange.PID); this "
			 "fdrange reads fdrange.NS.PID" : r->lib_mapped ?
			 "libfdrange is loaded but keeps no stats block (FDRANGE_DISABLE, a bad "
			 "FDRANGE_* value, secure-execution mode, or /dev/shm or /proc unavailable)" :
			 "libfdrange is not loaded in this process");
		return;
	}
	fd = open_mapped(r->pid, path, &b);
	if (fd < 0) {
		snprintf(why, whylen, "cannot open %s: %s", path,
			 fd == -ESTALE ? "it is no longer the file the process maps" : strerror(-fd));
		return;
	}
	if (pread_all(fd, h, sizeof(*h), 0) || memcmp(h->magic, FDR_SHM_MAGIC, 8) != 0 ||
	    h->version != FDR_SHM_VERSION || h->hdr_size != FDR_SHM_HDR_SIZE ||
	    h->range_size != sizeof(struct fdr_range_stats) || h->nranges > FDR_MAX_SLOTS ||
	    h->slots != h->nranges) {
		snprintf(why, whylen, "%s is not a version-%u stats block (a different libfdrange "
			 "version?)", path, FDR_SHM_VERSION);
		close(fd);
		return;
	}
	if (h->pid != b.ns_pid) {
		snprintf(why, whylen, "%s names pid %ld but holds pid %d's block", path, b.ns_pid,
			 (int)h->pid);
		close(fd);
		return;
	}
	r->ranges = calloc(h->nranges ? h->nranges : 1, sizeof(*r->ranges));
	r->lanes = calloc(h->nranges ? h->nranges : 1, sizeof(*r->lanes));
	if (!r->ranges || !r->lanes ||
	    pread_all(fd, r->ranges, h->nranges * sizeof(*r->ranges), (off_t)h->ranges_off) ||
	    pread_all(fd, r->lanes, h->nranges * sizeof(*r->lanes), (off_t)h->lanes_off)) {
		snprintf(why, whylen, "%s: short read", path);
		close(fd);
		return;
	}
	for (size_t i = 0; i < r->nfds; i++) {
		struct fdinfo *f = &r->fds[i];
		uint64_t rec = 0;

		if ((uint64_t)f->fd >= h->nrecs ||
		    pread_all(fd, &rec, sizeof(rec), (off_t)(h->recs_off + 8 * (uint64_t)f->fd)))
			continue;
		f->pending = rec & FDR_REC_PENDING;
		/* Only an fd some epoll watches now was registered by its
		 * current holder: an older record may name the previous one. */
		if (FDR_REC_TID(rec) && f->watchers)
			f->tid = FDR_REC_TID(rec);
	}
	close(fd);
	r->have_blk = true;
}

static void thread_name(long pid, long tid, char *out, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/comm", pid, tid);
	if (read_text(path, out, len) <= 0)
		snprintf(out, len, "(exited)");
	out[strcspn(out, "\n")] = 0;
}

static int group_of(struct report *r, long key)
{
	for (unsigned g = 0; g < r->ngroups; g++)
		if (r->groups[g].key == key)
			return (int)g;
	if (r->ngroups == MAX_GROUPS)
		return -1;
	r->groups[r->ngroups].key = key;
	if (r->have_blk) {
		thread_name(r->pid, key, r->groups[r->ngroups].name, sizeof(r->groups[0].name));
		for (unsigned l = 0; l < r->hdr.nranges; l++)
			if (r->lanes[l] == (uint32_t)key)
				r->groups[r->ngroups].lane = l + 1;
	} else {
		snprintf(r->groups[r->ngroups].name, sizeof(r->groups[0].name), "epoll fd %ld", key);
	}
	return (int)r->ngroups++;
}

static void assign_groups(struct report *r)
{
	for (size_t i = 0; i < r->nfds; i++) {
		struct fdinfo *f = &r->fds[i];

		if (r->have_blk ? !f->tid : f->watchers != 1)
			continue;
		f->group = group_of(r, r->have_blk ? (long)f->tid : f->watcher);
		if (f->group >= 0) {
			r->groups[f->group].fds++;
			r->groups[f->group].sockets += f->is_socket;
		}
	}
}

static char letter(int g)
{
	static const char set[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

	if (g < 0 || g >= (int)sizeof(set) - 1)
		return '?';
	return set[g];
}

/* ANSI colour per group, so neighbouring letters differ at a glance. */
static const char *colour(const struct report *r, int g)
{
	static const char *const c[] = { "\033[1;32m", "\033[1;34m", "\033[1;35m", "\033[1;36m",
					 "\033[1;33m", "\033[32m", "\033[34m", "\033[35m",
					 "\033[36m", "\033[33m" };

	return r->color ? c[g % 10] : "";
}

#define RESET(r) ((r)->color ? "\033[0m" : "")

/* What 8-fd line @line holds: -2 nothing open, -1 open but no known
 * server, -3 two or more servers, else the one group. */
static int line_state(const struct report *r, size_t *cursor, long line, bool sockets_only,
		      bool *any_open)
{
	int g = -2;

	*any_open = false;
	while (*cursor < r->nfds && r->fds[*cursor].fd < line * 8)
		(*cursor)++;
	for (size_t i = *cursor; i < r->nfds && r->fds[i].fd < line * 8 + 8; i++) {
		const struct fdinfo *f = &r->fds[i];

		*any_open = true;
		if (sockets_only && !f->is_socket)
			continue;
		if (f->group < 0) {
			if (g == -2)
				g = -1;
			continue;
		}
		if (g < 0)
			g = f->group;
		else if (g != f->group)
			return -3;
	}
	return g;
}

static void map_char(const struct report *r, int st, bool any_open)
{
	if (st == -3)
		printf("%s#%s", r->color ? "\033[1;41;37m" : "", RESET(r));
	else if (st >= 0)
		printf("%s%c%s", colour(r, st), letter(st), RESET(r));
	else if (any_open)
		putchar('+');
	else
		printf("%s.%s", r->color ? "\033[2m" : "", RESET(r));
}

/* One map row: fds [lo, hi), wrapped at MAP_COLS, trailing empty lines cut. */
static void map_row(const struct report *r, const char *label, long lo, long hi)
{
	long first = lo / 8, last = (hi + 7) / 8, end = first;
	size_t cursor = 0;
	bool open;

	for (long l = first; l < last; l++) {
		size_t c = 0;

		line_state(r, &c, l, false, &open);
		if (open)
			end = l + 1;
	}
	printf("  %-22s ", label);
	for (long l = first; l < end; l++) {
		if (l > first && (l - first) % MAP_COLS == 0)
			printf("\n  %-22s ", "");
		map_char(r, line_state(r, &cursor, l, false, &open), open);
	}
	if (end < last)
		printf("%s%s(+%ld empty)", end > first ? " " : "", r->color ? "\033[2m" : "",
		       last - end);
	printf("%s\n", RESET(r));
}

struct tally {
	unsigned long lines, shared, sock_lines, sock_shared;
};

static struct tally count_lines(const struct report *r)
{
	struct tally t = { 0 };
	size_t c1 = 0, c2 = 0;
	bool open;
	long max = r->nfds ? r->fds[r->nfds - 1].fd : 0;

	for (long l = 0; l <= max / 8; l++) {
		int a = line_state(r, &c1, l, false, &open);
		int s = line_state(r, &c2, l, true, &open);

		t.lines += a >= 0 || a == -3;
		t.shared += a == -3;
		t.sock_lines += s >= 0 || s == -3;
		t.sock_shared += s == -3;
	}
	return t;
}

static void span_str(char *buf, size_t len, long lo, long hi)
{
	if (hi > lo)
		snprintf(buf, len, "%ld-%ld", lo, hi - 1);
	else
		snprintf(buf, len, "-");
}

/* Who serves the open fds in [lo, hi): "A:16 B:2", and the purity. */
static double serving(const struct report *r, long lo, long hi, char *out, size_t len,
		      unsigned *open_n)
{
	unsigned cnt[MAX_GROUPS] = { 0 }, served = 0, best = 0;
	size_t n = 0;

	*open_n = 0;
	out[0] = 0;
	for (size_t i = 0; i < r->nfds; i++) {
		const struct fdinfo *f = &r->fds[i];

		if (f->fd < lo || f->fd >= hi)
			continue;
		(*open_n)++;
		if (f->group >= 0) {
			cnt[f->group]++;
			served++;
		}
	}
	for (unsigned g = 0; g < r->ngroups; g++) {
		if (!cnt[g])
			continue;
		if (cnt[g] > best)
			best = cnt[g];
		if (n < len)
			n += (size_t)snprintf(out + n, len - n, "%s%s%c%s:%u", n ? " " : "",
					      colour(r, (int)g), letter((int)g), RESET(r), cnt[g]);
	}
	if (!served) {
		snprintf(out, len, "-");
		return -1;
	}
	return 100.0 * best / served;
}

static unsigned long fallbacks(const struct fdr_range_stats *rs)
{
	unsigned long s = 0;

	for (unsigned i = 0; i < FDR_FB_NR; i++)
		s += rs->fallback[i];
	return s;
}

static void table_row(const char *name, const char *span, const char *placed,
		      const char *inplace, const char *fb, unsigned open_n, double purity,
		      const char *who)
{
	char pur[16];

	if (purity < 0)
		snprintf(pur, sizeof(pur), "-");
	else
		snprintf(pur, sizeof(pur), "%.1f%%", purity);
	printf("%-6s %-13s %7s %7s %9s %5u %7s  %s\n", name, span, placed, inplace, fb, open_n,
	       pur, who);
}

static const char *num(char *buf, size_t len, unsigned long v)
{
	snprintf(buf, len, "%lu", v);
	return buf;
}

static void print_library(struct report *r, double *min_purity, unsigned long *placed,
			  unsigned long *fb)
{
	const struct fdr_shm_hdr *h = &r->hdr;
	struct fdr_config cfg;
	char span[48], who[512], b1[24], b2[24], b3[24];
	unsigned open_n;
	double p;

	memset(&cfg, 0, sizeof(cfg));
	cfg.slots = h->slots;
	cfg.base = h->base;
	cfg.width = h->cfg_width;
	cfg.accept = h->accept;
	cfg.open = h->open;
	printf("settings: FDRANGE_SLOTS=%u FDRANGE_BASE=%u FDRANGE_WIDTH=%s FDRANGE_ACCEPT=%s "
	       "FDRANGE_OPEN=%s\n", h->slots, h->base,
	       h->cfg_width ? (snprintf(span, sizeof(span), "%u", h->cfg_width), span) : "auto",
	       h->accept == FDR_ACCEPT_ROUNDROBIN ? "roundrobin" : "thread",
	       h->open == FDR_OPEN_KEEP ? "keep" : "move");
	printf("geometry: %u ranges of %llu fds from fd %u; RLIMIT_NOFILE %llu as the library saw "
	       "it (%llu changes), %lu now; fs.nr_open %llu\n", h->slots,
	       (unsigned long long)h->width, h->base, (unsigned long long)h->limit,
	       (unsigned long long)h->limit_changes, r->soft_limit,
	       (unsigned long long)h->nr_open);
	if (r->soft_limit && r->soft_limit != h->limit)
		printf("  note: the limit was changed from outside; fds that no longer fit fall back\n");
	if (h->accept == FDR_ACCEPT_ROUNDROBIN) {
		unsigned lanes = 0;

		for (unsigned l = 0; l < h->nranges; l++)
			lanes += r->lanes[l] != 0;
		printf("roundrobin: %u of %u ranges have a serving thread; %llu realignments, "
		       "%llu connections registered outside their thread's range, %llu first "
		       "connections in a range already served\n", lanes, h->slots,
		       (unsigned long long)h->rr_gen / 2, (unsigned long long)h->rr_misplaced,
		       (unsigned long long)h->rr_unmatched);
	}
	printf("\n%-6s %-13s %7s %7s %9s %5s %7s  %s\n", "range", "fds", "placed", "inplace",
	       "fallbacks", "open", "purity", "served by (open fds per thread)");
	*min_purity = -1;
	*placed = *fb = 0;
	p = serving(r, 0, h->base, who, sizeof(who), &open_n);
	span_str(span, sizeof(span), 0, h->base);
	table_row("low", span, "", "", "", open_n, p, who);
	for (unsigned i = 0; i < h->slots; i++) {
		const struct fdr_range_stats *rs = &r->ranges[i];
		long lo = (long)fdr_geom_lo(&cfg, (unsigned)h->width, i);
		long hi = h->width ? lo + (long)h->width : lo;
		char name[16];

		*placed += rs->placed;
		*fb += fallbacks(rs);
		p = serving(r, lo, hi, who, sizeof(who), &open_n);
		if (p >= 0 && (*min_purity < 0 || p < *min_purity))
			*min_purity = p;
		snprintf(name, sizeof(name), "%u", i);
		span_str(span, sizeof(span), lo, hi);
		table_row(name, span, num(b1, sizeof(b1), rs->placed),
			  num(b2, sizeof(b2), rs->inplace), num(b3, sizeof(b3), fallbacks(rs)),
			  open_n, p, who);
	}
	if (h->width) {
		long end = (long)fdr_geom_lo(&cfg, (unsigned)h->width, h->slots);

		p = serving(r, end, 1L << 40, who, sizeof(who), &open_n);
		if (open_n) {
			span_str(span, sizeof(span), end, r->fds[r->nfds - 1].fd + 1);
			table_row("above", span, "", "", "", open_n, p, who);
		}
	}
	{
		unsigned long why[FDR_FB_NR] = { 0 };

		for (unsigned i = 0; i < h->slots; i++)
			for (unsigned k = 0; k < FDR_FB_NR; k++)
				why[k] += r->ranges[i].fallback[k];
		printf("fallbacks: %lu no room in the range, %lu range not below RLIMIT_NOFILE, "
		       "%lu other\n", why[FDR_FB_FULL], why[FDR_FB_LIMIT], why[FDR_FB_OTHER]);
	}
}

static void print_groups(const struct report *r)
{
	printf("\n%s:\n", r->have_blk ? "serving threads (registered the fd with epoll_ctl ADD)" :
	       "watching epoll instances (the serving thread is unknown without the library)");
	if (!r->ngroups)
		printf("  none\n");
	for (unsigned g = 0; g < r->ngroups; g++) {
		const struct group *gr = &r->groups[g];

		printf("  %s%c%s  ", colour(r, (int)g), letter((int)g), RESET(r));
		if (r->have_blk)
			printf("tid %-7ld %-16s", gr->key, gr->name);
		else
			printf("%-24s", gr->name);
		printf(" %4u fds (%u sockets)", gr->fds, gr->sockets);
		if (gr->lane)
			printf(", serves range %u", gr->lane - 1);
		putchar('\n');
	}
}

static void print_map(const struct report *r)
{
	const struct fdr_shm_hdr *h = &r->hdr;
	long max = r->nfds ? r->fds[r->nfds - 1].fd + 1 : 0;
	char label[128];

	printf("\nmap, one character per 8-fd line of the fd table (64 per row = 512 fds):\n"
	       "  letter: open fds there are served by that %s only; '#': by two or more "
	       "(a shared line);\n  '+': open, server unknown; '.': nothing open\n",
	       r->have_blk ? "thread" : "epoll instance");
	if (r->have_blk && h->width) {
		struct fdr_config cfg = { .slots = h->slots, .base = h->base };
		long end = (long)fdr_geom_lo(&cfg, (unsigned)h->width, h->slots);

		snprintf(label, sizeof(label), "low %ld-%u", 0L, h->base - (h->base > 0));
		if (h->base)
			map_row(r, label, 0, h->base);
		for (unsigned i = 0; i < h->slots; i++) {
			long lo = (long)fdr_geom_lo(&cfg, (unsigned)h->width, i);

			snprintf(label, sizeof(label), "range %u %ld-%ld", i, lo,
				 lo + (long)h->width - 1);
			map_row(r, label, lo, lo + (long)h->width);
		}
		if (max > end) {
			snprintf(label, sizeof(label), "above %ld-%ld", end, max - 1);
			map_row(r, label, end, max);
		}
		return;
	}
	for (long lo = 0; lo < max; lo += 8L * MAP_COLS) {
		snprintf(label, sizeof(label), "fds %ld-%ld", lo, lo + 8L * MAP_COLS - 1);
		map_row(r, label, lo, lo + 8L * MAP_COLS);
	}
	if (!max)
		printf("  (no open fds)\n");
}

static void stat_usage(FILE *out)
{
	fprintf(out,
		"Usage: fdrange stat [--color=auto|always|never] [--no-map] PID\n"
		"Show how the fds of running process PID are placed and which threads serve\n"
		"them: per range the fds placed, fallbacks, serving threads and purity (share\n"
		"of a range's open fds served by its main thread), the 8-fd lines of the fd\n"
		"table shared by fds of different threads, the settings and geometry, and a\n"
		"map of the fd table.  Reads the library's stats block (/dev/shm/fdrange.NS.PID)\n"
		"and /proc; works without the library too, from /proc alone, where fds are\n"
		"grouped by the epoll instance that watches them.  The last line, starting\n"
		"with 'summary:', is meant for scripts.\n"
		"Exit status: 0, 1 if PID cannot be read, 2 for a bad option.\n");
}

int fdrange_stat_main(int argc, char **argv)
{
	struct report r;
	char path[64], buf[4096], why[256] = "";
	const char *color = "auto", *pidarg = NULL;
	bool show_map = true;
	double min_purity = -1;
	unsigned long placed = 0, fb = 0;
	struct tally t;
	char *end;
	int ret;

	memset(&r, 0, sizeof(r));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			stat_usage(stdout);
			return 0;
		} else if (!strncmp(a, "--color=", 8) || !strncmp(a, "--colour=", 9)) {
			color = strchr(a, '=') + 1;
			if (strcmp(color, "auto") != 0 && strcmp(color, "always") != 0 &&
			    strcmp(color, "never") != 0) {
				fprintf(stderr, "%s: --color: '%s' is not auto, always or never\n",
					prog, color);
				return 2;
			}
		} else if (!strcmp(a, "--no-map")) {
			show_map = false;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "%s: unknown option '%s'; see 'fdrange stat --help'\n", prog, a);
			return 2;
		} else if (pidarg) {
			fprintf(stderr, "%s: one PID only; see 'fdrange stat --help'\n", prog);
			return 2;
		} else {
			pidarg = a;
		}
	}
	if (!pidarg) {
		fprintf(stderr, "%s: no PID given; see 'fdrange stat --help'\n", prog);
		return 2;
	}
	errno = 0;
	r.pid = strtol(pidarg, &end, 10);
	if (!isdigit((unsigned char)pidarg[0]) || *end || errno || r.pid <= 0 || r.pid > 0x3fffffff) {
		fprintf(stderr, "%s: '%s' is not a process id\n", prog, pidarg);
		return 2;
	}
	r.color = !strcmp(color, "always") ||
		  (!strcmp(color, "auto") && isatty(1) && !getenv("NO_COLOR"));
	snprintf(path, sizeof(path), "/proc/%ld/comm", r.pid);
	ret = read_text(path, r.comm, sizeof(r.comm));
	if (ret < 0) {
		if (ret == -ENOENT || ret == -ESRCH)
			fprintf(stderr, "%s: no process with pid %ld\n", prog, r.pid);
		else
			fprintf(stderr, "%s: cannot read %s: %s\n", prog, path, strerror(-ret));
		return 1;
	}
	r.comm[strcspn(r.comm, "\n")] = 0;
	ret = list_fds(&r);
	if (ret < 0) {
		fprintf(stderr, "%s: cannot list the fds of pid %ld: %s%s\n", prog, r.pid,
			strerror(-ret), ret == -EACCES ? " (run as the process's user or root)" : "");
		free(r.fds);
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/%ld/limits", r.pid);
	if (read_text(path, buf, sizeof(buf)) > 0) {
		char *l = strstr(buf, "Max open files");

		if (l)
			r.soft_limit = strtoul(l + 14, NULL, 10);
	}
	read_epolls(&r);
	read_block(&r, why, sizeof(why));
	assign_groups(&r);
	t = count_lines(&r);

	printf("pid %ld (%s): %zu open fds, RLIMIT_NOFILE %lu\n", r.pid, r.comm, r.nfds,
	       r.soft_limit);
	if (r.have_blk) {
		printf("libfdrange %.16s, stats block v%u (%s)%s\n",
		       r.hdr.lib_version, r.hdr.version, r.blk_path,
		       r.hdr.flags & FDR_SHM_PRIVATE ? " (private)" : "");
		print_library(&r, &min_purity, &placed, &fb);
	} else {
		printf("no stats block: %s.\n"
		       "From /proc alone the serving thread of an fd cannot be known, nor what the\n"
		       "library would have placed; shown instead: which epoll instance watches each fd\n"
		       "(event-loop servers such as memcached run one per thread), and how the\n"
		       "kernel's lowest-free numbering interleaves them in the fd table.\n", why);
		min_purity = -1;
	}
	print_groups(&r);
	printf("\nshared 8-fd lines (open fds of two or more %s on one line): %lu of %lu lines "
	       "with served fds; among sockets only: %lu of %lu\n",
	       r.have_blk ? "threads" : "epoll instances", t.shared, t.lines, t.sock_shared,
	       t.sock_lines);
	if (show_map)
		print_map(&r);
	printf("\nsummary: pid=%ld library=%s open_fds=%zu groups=%u shared_lines=%lu "
	       "shared_socket_lines=%lu", r.pid, r.have_blk ? "yes" : r.lib_mapped ? "inactive" : "no",
	       r.nfds, r.ngroups, t.shared, t.sock_shared);
	if (r.have_blk) {
		printf(" min_purity=");
		if (min_purity < 0)
			printf("-");
		else
			printf("%.1f", min_purity);
		printf(" placed=%lu fallbacks=%lu realignments=%llu misplaced=%llu", placed, fb,
		       (unsigned long long)r.hdr.rr_gen / 2, (unsigned long long)r.hdr.rr_misplaced);
	}
	putchar('\n');
	free(r.fds);
	free(r.ranges);
	free(r.lanes);
	return 0;
}
