/* SPDX-License-Identifier: MIT */
/*
 * Finding a live process's stats block and opening it for reading.
 *
 * This runs, often as root, against a process that controls its own maps:
 *  - the block is found in /proc/PID/maps, read whole with whole lines
 *    only, and a candidate must be a shared mapping named exactly
 *    FDR_BLK_MAPS_NAME on the kernel's internal shmem mount (the device of
 *    a memfd of our own): memory, never a FUSE file, a FIFO or a device;
 *  - it is read with pread only, through /proc/PID/map_files (root) or
 *    /proc/PID/mem (ptrace read access), never past the mapping's length,
 *    and checked whole (stat_load.c, stat_check.c) before use;
 *  - the pid it names must be the process's own, or an ancestor's: a
 *    child of fork() keeps its parent's block mapped, untouched, until it
 *    places an fd of its own.  Such a block is reported as inherited and
 *    its counters (the parent's) are not shown as the child's.
 */
#include "stat.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define ST_MAPS_MAX      (64u << 20)   /* bytes of /proc/PID/maps read at most */
#define ST_MAP_LEN_MAX   (1ull << 30)  /* a block mapping longer than this is not one */
#define ST_CANDIDATES    32u           /* candidate mappings examined at most */
#define ST_ANCESTORS     64u           /* parents followed at most */

struct fd_src {
	int fd;
	uint64_t base;   /* file offset (map_files) or address (mem) of byte 0 */
};

static int fd_read(void *ctx, void *buf, size_t len, uint64_t off)
{
	const struct fd_src *s = ctx;
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(s->fd, (char *)buf + done, len - done,
				  (off_t)(s->base + off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		done += (size_t)n;
	}
	return 0;
}

/* The device of the kernel's internal shmem mount: that of a memfd. */
static int shmem_dev(dev_t *dev)
{
	static dev_t cached;
	static bool known;
	struct stat st;
	int fd;

	if (known) {
		*dev = cached;
		return 0;
	}
	fd = memfd_create("fdrange-stat-probe", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0) {
		int err = errno;

		close(fd);
		return -err;
	}
	close(fd);
	cached = st.st_dev;
	known = true;
	*dev = cached;
	return 0;
}

struct maps_line {
	uint64_t start, end, pgoff, ino;
	unsigned dev_major, dev_minor;
	char perms[5];
	const char *path;       /* within the line; "" none */
	size_t pathlen;
};

/* "start-end perms offset MAJ:MIN INODE   path": strict, or false. */
static bool parse_maps_line(const char *l, size_t len, struct maps_line *m)
{
	char buf[128];
	size_t head = len < sizeof(buf) - 1 ? len : sizeof(buf) - 1;
	unsigned long long s, e, off, ino;
	unsigned maj, mnr;
	int n = 0;

	memcpy(buf, l, head);
	buf[head] = 0;
	/* The kernel formats these fields (the target controls only the path,
	 * after them): they are never out of range for sscanf. */
	// NOLINTNEXTLINE(cert-err34-c): see above
	if (sscanf(buf, "%llx-%llx %4s %llx %x:%x %llu%n", &s, &e, m->perms, &off, &maj, &mnr,
		   &ino, &n) != 7 || n <= 0 || e < s)
		return false;
	m->start = s;
	m->end = e;
	m->pgoff = off;
	m->ino = ino;
	m->dev_major = maj;
	m->dev_minor = mnr;
	while ((size_t)n < len && l[n] == ' ')
		n++;
	m->path = l + n;
	m->pathlen = len - (size_t)n;
	return true;
}

bool st_is_lib_path(const char *p, size_t len)
{
	const char *base = p;

	for (size_t i = 0; i < len; i++)
		if (p[i] == '/')
			base = p + i + 1;
	return (size_t)(p + len - base) >= 13 && !memcmp(base, "libfdrange.so", 13);
}

/* Calls @fn on each whole, well-formed line of process @pid's maps until
 * it returns non-zero.  That value, 0 after the last line, or -errno
 * (@why says). */
static int each_maps_line(long pid, int (*fn)(const struct maps_line *m, void *arg), void *arg,
			  char *why, size_t whylen)
{
	char path[64], *maps = NULL;
	size_t len = 0;
	int ret;

	snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
	ret = st_read_whole(path, &maps, &len, ST_MAPS_MAX);
	if (ret) {
		snprintf(why, whylen, "cannot read %s: %s", path,
			 ret == -EFBIG ? "larger than 64 MiB" : strerror(-ret));
		return ret;
	}
	/* Whole lines only: a last line without its newline is cut, not read. */
	for (char *l = maps; l < maps + len && !ret;) {
		char *nl = memchr(l, '\n', (size_t)(maps + len - l));
		struct maps_line m;

		if (!nl)
			break;
		if (parse_maps_line(l, (size_t)(nl - l), &m))
			ret = fn(&m, arg);
		l = nl + 1;
	}
	free(maps);
	return ret;
}

static int lib_line(const struct maps_line *m, void *arg)
{
	(void)arg;
	return st_is_lib_path(m->path, m->pathlen);
}

int st_maps_lib(long pid)
{
	char why[ST_WHY_MAX];

	return each_maps_line(pid, lib_line, NULL, why, sizeof(why));
}

/* Open candidate @m for reading: map_files as root, else /proc/PID/mem. */
static int open_candidate(long pid, const struct maps_line *m, dev_t shm, struct fd_src *s,
			  const char **via, char *why, size_t whylen)
{
	char path[96];
	struct stat st;
	int pfd, fd, err;

	snprintf(path, sizeof(path), "/proc/%ld/map_files/%" PRIx64 "-%" PRIx64, pid, m->start,
		 m->end);
	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd >= 0) {
		/* The very memfd the maps line names, and only then opened. */
		if (fstat(pfd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != shm ||
		    st.st_ino != m->ino) {
			close(pfd);
			snprintf(why, whylen, "%s is no longer the memfd the maps line names", path);
			return -ESTALE;
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d", pfd);
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		err = errno;
		close(pfd);
		if (fd < 0) {
			snprintf(why, whylen, "cannot open its memfd: %s", strerror(err));
			return -err;
		}
		s->fd = fd;
		s->base = m->pgoff;
		*via = "map_files";
		return 0;
	}
	if (errno != EPERM && errno != EACCES) {
		err = errno;
		snprintf(why, whylen, "cannot open %s: %s", path, strerror(err));
		return -err;
	}
	snprintf(path, sizeof(path), "/proc/%ld/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		snprintf(why, whylen, "cannot read its stats block: %s: %s%s", path, strerror(err),
			 err == EACCES || err == EPERM ?
			 " (needs ptrace read access: run as the process's user or root)" : "");
		return -err;
	}
	s->fd = fd;
	s->base = m->start;
	*via = "/proc/PID/mem";
	return 0;
}

/*
 * The ancestor of @p whose pid in its own namespace is @pid (what the
 * library wrote there): a fork child's inherited block names it.  Our pid
 * of it, or 0.  Followed through PPid, which is what fork() makes.
 */
static long ancestor_named(const struct st_proc *p, long pid)
{
	long a = p->ppid;

	for (unsigned n = 0; a > 0 && n < ST_ANCESTORS; n++) {
		struct st_proc q;

		if (st_proc_status(&q, a) != 0)
			return 0;
		if ((q.nspid ? q.nspid : a) == pid)
			return a;
		a = q.ppid;
	}
	return 0;
}

/* What st_blk_find() carries from one maps line to the next. */
struct finder {
	const struct st_proc *p;
	struct st_blk *b;
	struct st_found *f;
	dev_t shm;
	bool own;                    /* the process's own block is in b */
	unsigned candidates, tried;
	int first_err;
	char first_why[ST_WHY_MAX], first_cwhy[ST_WHY_MAX];
};

/* A candidate read and checked: the process's own, inherited, or refused. */
static int adopt(struct finder *x, const struct st_src *src, char *cwhy, size_t len)
{
	const struct st_proc *p = x->p;
	struct st_blk *b = x->b;
	long own = p->nspid ? p->nspid : p->pid, from;
	int ret;

	if (b->hdr.pid == own) {
		ret = st_blk_records(src, b, p->fds, p->nfds);
		if (ret) {
			snprintf(cwhy, len, "cannot read its fd records: %s", strerror(-ret));
			st_blk_free(b);
		}
		return ret;
	}
	/* Not its own: an ancestor's, kept since fork (its counters are the
	 * ancestor's, never shown as this process's), or a forgery. */
	from = ancestor_named(p, b->hdr.pid);
	if (from) {
		if (!x->f->inherited_from)
			x->f->inherited_from = from;
		ret = 1;
	} else {
		snprintf(cwhy, len, "pid %" PRId32 " is not the process's own (%ld in its "
			 "namespace) nor an ancestor's", b->hdr.pid, own);
		ret = -EBADMSG;
	}
	st_blk_free(b);
	return ret;
}

static int try_candidate(struct finder *x, const struct maps_line *m, char *cwhy, size_t len)
{
	struct fd_src s = { -1, 0 };
	struct st_src src;
	const char *via = NULL;
	int ret;

	if (m->end - m->start < FDR_BLK_HDR_SIZE || m->end - m->start > ST_MAP_LEN_MAX) {
		snprintf(cwhy, len, "mapping length %" PRIu64 " is not within %u..%llu",
			 m->end - m->start, FDR_BLK_HDR_SIZE, ST_MAP_LEN_MAX);
		return -EBADMSG;
	}
	ret = open_candidate(x->p->pid, m, x->shm, &s, &via, cwhy, len);
	if (ret)
		return ret;
	src.read = fd_read;
	src.ctx = &s;
	src.maplen = m->end - m->start;
	ret = st_blk_load(&src, x->b, cwhy, len);
	if (!ret)
		ret = adopt(x, &src, cwhy, len);
	close(s.fd);
	if (!ret) {
		x->b->map_start = m->start;
		x->b->map_end = m->end;
		x->b->via = via;
	}
	return ret;
}

static int block_line(const struct maps_line *m, void *arg)
{
	static const char name[] = FDR_BLK_MAPS_NAME;
	struct finder *x = arg;
	char cwhy[ST_WHY_MAX];
	int ret;

	if (st_is_lib_path(m->path, m->pathlen))
		x->f->lib_mapped = true;
	if (m->pathlen != sizeof(name) - 1 || memcmp(m->path, name, m->pathlen) != 0 ||
	    m->perms[0] != 'r' || m->perms[3] != 's' ||
	    makedev(m->dev_major, m->dev_minor) != x->shm)
		return 0;
	x->candidates++;
	if (x->own || x->tried >= ST_CANDIDATES)
		return 0;  /* found already, or enough tried: count the rest */
	x->tried++;
	ret = try_candidate(x, m, cwhy, sizeof(cwhy));
	x->own = ret == 0;
	if (ret < 0 && !x->first_err) {
		x->first_err = ret;
		snprintf(x->first_cwhy, sizeof(x->first_cwhy), "%s", cwhy);
		snprintf(x->first_why, sizeof(x->first_why), "stats block at %" PRIx64 "-%" PRIx64
			 " refused: %.240s", m->start, m->end, cwhy);
	}
	return 0;
}

int st_blk_find(const struct st_proc *p, struct st_blk *b, struct st_found *f, char *why,
		size_t whylen)
{
	struct finder *x = calloc(1, sizeof(*x));
	int ret;

	memset(f, 0, sizeof(*f));
	if (!x) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	x->p = p;
	x->b = b;
	x->f = f;
	b->owners = NULL;
	ret = shmem_dev(&x->shm);
	if (ret) {
		snprintf(why, whylen, "cannot make a memfd to learn the shmem device: %s",
			 strerror(-ret));
	} else {
		ret = each_maps_line(p->pid, block_line, x, why, whylen);
	}
	if (ret) {
		free(x);
		return ret;
	}
	if (x->own) {
		ret = 1;
	} else if (f->inherited_from) {
		snprintf(why, whylen, "inherited block of pid %ld; nothing placed in this process "
			 "yet", f->inherited_from);
		f->lib_mapped = true;
	} else if (!x->candidates || (x->first_err == -EPROTONOSUPPORT && x->candidates == 1)) {
		if (x->candidates) {
			snprintf(why, whylen, "its stats block is of another libfdrange release: %s",
				 x->first_cwhy);
			f->other_release = true;
			f->lib_mapped = true;  /* loaded, not readable: library=inactive */
		} else {
			snprintf(why, whylen, "%s", f->lib_mapped ?
				 "libfdrange is loaded but keeps no stats block" :
				 "libfdrange is not loaded in this process");
		}
	} else {
		if (x->candidates > 1)
			snprintf(why, whylen, "%.250s (%u candidate mappings, %u examined, none "
				 "accepted)", x->first_why, x->candidates, x->tried);
		else
			snprintf(why, whylen, "%s", x->first_why);
		/* Refused contents, or a read we were not allowed: both are errors. */
		ret = x->first_err == -EBADMSG || x->first_err == -EIO ||
		      x->first_err == -ESTALE || x->first_err == -EPROTONOSUPPORT ?
		      -EBADMSG : x->first_err;
	}
	free(x);
	return ret;
}
