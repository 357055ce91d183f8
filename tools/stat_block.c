/* SPDX-License-Identifier: MIT */
/*
 * Finding, reading and validating a process's stats block (lib/block.h).
 *
 * This is the part of `fdrange stat` that runs, often as root, against
 * bytes another process controls.  The rules:
 *  - the block is found in /proc/PID/maps, read whole with whole lines
 *    only, and a candidate must be a shared mapping named exactly
 *    FDR_BLK_MAPS_NAME on the kernel's internal shmem mount (the device of
 *    a memfd of our own): memory, never a FUSE file, a FIFO or a device;
 *  - it is read with pread only, through /proc/PID/map_files (root) or
 *    /proc/PID/mem (ptrace read access), only the parts needed and never
 *    past the mapping's length;
 *  - every header field is checked before any is used (fdr_blk_check_*,
 *    pure functions the unit tests and the fuzzer drive directly), with
 *    overflow-safe arithmetic, and refused with one line naming the field;
 *  - everything is copied out: nothing is ever dereferenced in place, and
 *    the over-aligned owner records land in memory aligned for them.
 * The block is live: the library writes it while we read.  Values that
 * only a race can make odd (a chunk naming an owner beyond our snapshot's
 * nowners) are tolerated as unowned; values no race can make are refused.
 */
#include "stat.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
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
#define ST_COUNT_MAX     (1ull << 62)  /* no counter of a real process gets here */
#define ST_NR_OPEN_MAX   2147483584ull /* the kernel's sysctl_nr_open_max */
#define ST_REC_WINDOW    8192u         /* records read per pread at most (64 KiB) */

static int refuse(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int refuse(char *why, size_t whylen, const char *fmt, ...)
{
	if (whylen) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return -EBADMSG;
}

/* [off, off + len) lies within [lo, size): no overflow whatever the values. */
static bool within(uint64_t off, uint64_t len, uint64_t lo, uint64_t size)
{
	return off >= lo && off <= size && len <= size - off;
}

static bool overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return alen && blen && a < b + blen && b < a + alen;
}

static bool nul_in(const char *s, size_t n)
{
	return memchr(s, 0, n) != NULL;
}

int fdr_blk_check_hdr(const struct fdr_blk_hdr *h, uint64_t maplen, char *why, size_t whylen)
{
	uint64_t owners_len, chunks_len, recs_len;
	const uint64_t counts[] = { h->limit_changes, h->single_kept, h->untracked,
				    h->learned_after, h->relearns, h->accepted, h->observed,
				    h->hits, h->misses, h->realignments };
	static const char *const count_names[] = { "limit_changes", "single_kept", "untracked",
						   "learned_after", "relearns", "accepted",
						   "observed", "hits", "misses", "realignments" };

	if (memcmp(h->magic, FDR_BLK_MAGIC, sizeof(h->magic)) != 0)
		return refuse(why, whylen, "magic is not " FDR_BLK_MAGIC);
	/* Another release's layout, not a corrupt one: the caller shows what
	 * /proc alone tells rather than refusing the process. */
	if (h->version != FDR_BLK_VERSION) {
		refuse(why, whylen, "version %" PRIu32 ", this fdrange reads version %u only",
		       h->version, FDR_BLK_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (h->hdr_size != FDR_BLK_HDR_SIZE)
		return refuse(why, whylen, "hdr_size %" PRIu32 ", expected %u", h->hdr_size,
			      FDR_BLK_HDR_SIZE);
	if (h->size < FDR_BLK_HDR_SIZE || h->size > maplen)
		return refuse(why, whylen, "size %" PRIu64 " is not within %u..%" PRIu64
			      " (the mapping's length)", h->size, FDR_BLK_HDR_SIZE, maplen);
	if (h->pid <= 0)
		return refuse(why, whylen, "pid %" PRId32 " is not a process id", h->pid);
	if (h->flags & FDR_BLK_PRIVATE)
		return refuse(why, whylen, "flags 0x%" PRIx32 " say private memory, but it is a memfd",
			      h->flags);
	if (!nul_in(h->lib_version, sizeof(h->lib_version)))
		return refuse(why, whylen, "lib_version is not NUL-terminated within %zu bytes",
			      sizeof(h->lib_version));
	if (h->nsettings > FDR_SETTINGS_MAX)
		return refuse(why, whylen, "nsettings %" PRIu32 " exceeds %u", h->nsettings,
			      FDR_SETTINGS_MAX);
	for (uint32_t i = 0; i < h->nsettings; i++) {
		const struct fdr_blk_setting *s = &h->settings[i];

		if (!nul_in(s->name, sizeof(s->name)) || !nul_in(s->value, sizeof(s->value)))
			return refuse(why, whylen, "settings[%" PRIu32 "] %s is not NUL-terminated",
				      i, nul_in(s->name, sizeof(s->name)) ? "value" : "name");
		if (s->from_env > 1)
			return refuse(why, whylen, "settings[%" PRIu32 "].from_env %" PRIu32
				      " is not 0 or 1", i, s->from_env);
	}
	if (h->chunk != FDR_CHUNK)
		return refuse(why, whylen, "chunk %" PRIu32 ", expected %u", h->chunk, FDR_CHUNK);
	if (h->nr_open < FDR_CHUNK || h->nr_open > ST_NR_OPEN_MAX)
		return refuse(why, whylen, "nr_open %" PRIu64 " is not within %u..%llu",
			      h->nr_open, FDR_CHUNK, ST_NR_OPEN_MAX);
	if (h->base % FDR_CHUNK || h->base > h->nr_open)
		return refuse(why, whylen, "base %" PRIu32 " is not a multiple of %u up to nr_open %"
			      PRIu64, h->base, FDR_CHUNK, h->nr_open);
	if (h->fixed_width % FDR_CHUNK || h->fixed_width > FDR_BLK_MAX_FD)
		return refuse(why, whylen, "fixed_width %" PRIu32 " is not a multiple of %u up to %u",
			      h->fixed_width, FDR_CHUNK, FDR_BLK_MAX_FD);
	if (h->base + (uint64_t)h->nchunks * FDR_CHUNK > h->nr_open + FDR_CHUNK)
		return refuse(why, whylen, "nchunks %" PRIu32 " from base %" PRIu32
			      " reach beyond nr_open %" PRIu64, h->nchunks, h->base, h->nr_open);
	if (h->top_chunk > h->nchunks)
		return refuse(why, whylen, "top_chunk %" PRIu32 " exceeds nchunks %" PRIu32,
			      h->top_chunk, h->nchunks);
	if (h->max_owners < FDR_OWN_FIRST || h->max_owners > FDR_MAX_OWNERS)
		return refuse(why, whylen, "max_owners %" PRIu32 " is not within %u..%u",
			      h->max_owners, FDR_OWN_FIRST, FDR_MAX_OWNERS);
	if (h->nowners > h->max_owners)
		return refuse(why, whylen, "nowners %" PRIu32 " exceeds max_owners %" PRIu32,
			      h->nowners, h->max_owners);
	if (h->owner_size != sizeof(struct fdr_blk_owner))
		return refuse(why, whylen, "owner_size %" PRIu32 ", expected %zu", h->owner_size,
			      sizeof(struct fdr_blk_owner));
	if (h->nrecs > FDR_BLK_MAX_FD)
		return refuse(why, whylen, "nrecs %" PRIu64 " exceeds %u", h->nrecs, FDR_BLK_MAX_FD);
	if (h->policy >= ST_POLICY_NR)
		return refuse(why, whylen, "policy %" PRIu32 " is not a known policy", h->policy);
	if (h->model >= FDR_MODEL_NR)
		return refuse(why, whylen, "model %" PRIu32 " is not a known model", h->model);
	if (h->rot_len > FDR_ROT_MAX)
		return refuse(why, whylen, "rot_len %" PRIu32 " exceeds %u", h->rot_len, FDR_ROT_MAX);
	for (uint32_t i = 0; i < h->rot_len; i++)
		if (h->rot_owner[i] >= h->max_owners)
			return refuse(why, whylen, "rot_owner[%" PRIu32 "] %" PRIu32
				      " is not below max_owners %" PRIu32, i, h->rot_owner[i],
				      h->max_owners);
	if (h->judged_local > h->judged)
		return refuse(why, whylen, "judged_local %" PRIu32 " exceeds judged %" PRIu32,
			      h->judged_local, h->judged);
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		if (counts[i] > ST_COUNT_MAX)
			return refuse(why, whylen, "%s %" PRIu64 " is beyond any count",
				      count_names[i], counts[i]);

	/* The tables: inside the block, past the header, apart, aligned. */
	owners_len = (uint64_t)h->max_owners * h->owner_size;
	chunks_len = (uint64_t)h->nchunks * sizeof(uint32_t);
	recs_len = h->nrecs * sizeof(uint64_t);
	if (h->owners_off % 8 || !within(h->owners_off, owners_len, h->hdr_size, h->size))
		return refuse(why, whylen, "owners_off %" PRIu64 " (+%" PRIu64 " bytes) is not an "
			      "aligned offset within the block's %" PRIu64 " bytes after its header",
			      h->owners_off, owners_len, h->size);
	if (h->chunks_off % 4 || !within(h->chunks_off, chunks_len, h->hdr_size, h->size))
		return refuse(why, whylen, "chunks_off %" PRIu64 " (+%" PRIu64 " bytes) is not an "
			      "aligned offset within the block's %" PRIu64 " bytes after its header",
			      h->chunks_off, chunks_len, h->size);
	if (h->recs_off % 8 || !within(h->recs_off, recs_len, h->hdr_size, h->size))
		return refuse(why, whylen, "recs_off %" PRIu64 " (+%" PRIu64 " bytes) is not an "
			      "aligned offset within the block's %" PRIu64 " bytes after its header",
			      h->recs_off, recs_len, h->size);
	if (overlap(h->owners_off, owners_len, h->chunks_off, chunks_len) ||
	    overlap(h->owners_off, owners_len, h->recs_off, recs_len) ||
	    overlap(h->chunks_off, chunks_len, h->recs_off, recs_len))
		return refuse(why, whylen, "tables overlap: owners_off %" PRIu64 " chunks_off %"
			      PRIu64 " recs_off %" PRIu64, h->owners_off, h->chunks_off, h->recs_off);
	return 0;
}

static int check_owner(const struct fdr_blk_hdr *h, uint32_t i, const struct fdr_blk_owner *o,
		       char *why, size_t whylen)
{
	const uint64_t counts[] = { o->threads, o->placed, o->inplace, o->kept, o->fallback[0],
				    o->fallback[1], o->fallback[2], o->probes, o->claims };
	uint32_t want = i == FDR_OWN_SPARSE ? FDR_KIND_SPARSE :
			i == FDR_OWN_SHARED ? FDR_KIND_SHARED : FDR_KIND_NR;

	_Static_assert(FDR_FB_NR == 3, "fallback reasons listed above");
	if (o->kind >= FDR_KIND_NR)
		return refuse(why, whylen, "owner %" PRIu32 ": kind %" PRIu32 " is not a known kind",
			      i, o->kind);
	if (o->kind != FDR_KIND_FREE &&
	    (want != FDR_KIND_NR ? o->kind != want :
	     o->kind != FDR_KIND_THREAD && o->kind != FDR_KIND_LANE))
		return refuse(why, whylen, "owner %" PRIu32 ": kind %s does not belong at index %"
			      PRIu32, i, st_kind_word(o->kind), i);
	if (o->chunks > h->nchunks)
		return refuse(why, whylen, "owner %" PRIu32 ": chunks %" PRIu32
			      " exceeds nchunks %" PRIu32, i, o->chunks, h->nchunks);
	if (o->hint > h->nchunks)
		return refuse(why, whylen, "owner %" PRIu32 ": hint %" PRIu32
			      " is beyond nchunks %" PRIu32, i, o->hint, h->nchunks);
	for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++)
		if (counts[k] > ST_COUNT_MAX)
			return refuse(why, whylen, "owner %" PRIu32 ": counter %zu is %" PRIu64
				      ", beyond any count", i, k, counts[k]);
	return 0;
}

int fdr_blk_check_owners(const struct fdr_blk_hdr *h, const struct fdr_blk_owner *o,
			 char *why, size_t whylen)
{
	for (uint32_t i = 0; i < h->nowners; i++) {
		int ret = check_owner(h, i, &o[i], why, whylen);

		if (ret)
			return ret;
	}
	return 0;
}

static int check_chunk(const struct fdr_blk_hdr *h, uint32_t c, uint32_t v, char *why,
		       size_t whylen)
{
	/* Beyond nowners but within max_owners: claimed after our header
	 * snapshot; shown unowned.  Beyond max_owners: impossible. */
	if (v > h->max_owners)
		return refuse(why, whylen, "chunk %" PRIu32 ": owner %" PRIu32
			      " (index + 1) exceeds max_owners %" PRIu32, c, v, h->max_owners);
	return 0;
}

int fdr_blk_check_chunks(const struct fdr_blk_hdr *h, const uint32_t *chunks, char *why,
			 size_t whylen)
{
	for (uint32_t c = 0; c < h->top_chunk; c++) {
		int ret = check_chunk(h, c, chunks[c], why, whylen);

		if (ret)
			return ret;
	}
	return 0;
}

int fdr_blk_check(const void *buf, size_t len, size_t maplen, char *why, size_t whylen)
{
	const unsigned char *p = buf;
	struct fdr_blk_hdr h;
	int ret;

	if (len < sizeof(h))
		return refuse(why, whylen, "truncated: %zu bytes, the header needs %zu", len,
			      sizeof(h));
	memcpy(&h, p, sizeof(h));
	ret = fdr_blk_check_hdr(&h, maplen, why, whylen);
	if (ret)
		return ret;
	if (!within(h.owners_off, (uint64_t)h.nowners * sizeof(struct fdr_blk_owner), 0, len) ||
	    !within(h.chunks_off, (uint64_t)h.top_chunk * sizeof(uint32_t), 0, len))
		return refuse(why, whylen, "truncated: %zu bytes given, the tables in use need more",
			      len);
	for (uint32_t i = 0; i < h.nowners; i++) {
		struct fdr_blk_owner o;  /* a copy: @buf has no alignment */

		memcpy(&o, p + h.owners_off + (uint64_t)i * sizeof(o), sizeof(o));
		ret = check_owner(&h, i, &o, why, whylen);
		if (ret)
			return ret;
	}
	for (uint32_t c = 0; c < h.top_chunk; c++) {
		uint32_t v;

		memcpy(&v, p + h.chunks_off + (uint64_t)c * sizeof(v), sizeof(v));
		ret = check_chunk(&h, c, v, why, whylen);
		if (ret)
			return ret;
	}
	return 0;
}

void st_blk_free(struct st_blk *b)
{
	free(b->owners);
	free(b->chunks);
	b->owners = NULL;
	b->chunks = NULL;
}

static int src_read(const struct st_src *src, void *buf, size_t len, uint64_t off)
{
	if (off > src->maplen || len > src->maplen - off)
		return -EIO;
	return len ? src->read(src->ctx, buf, len, off) : 0;
}

int st_blk_load(const struct st_src *src, struct st_blk *b, char *why, size_t whylen)
{
	struct fdr_blk_hdr *h = &b->hdr;
	size_t olen, clen;
	int ret;

	b->owners = NULL;
	b->chunks = NULL;
	ret = src_read(src, h, sizeof(*h), 0);
	if (ret) {
		snprintf(why, whylen, "cannot read its header: %s", strerror(-ret));
		return ret;
	}
	ret = fdr_blk_check_hdr(h, src->maplen, why, whylen);
	if (ret)
		return ret;
	/* Over-aligned records: aligned_alloc, never calloc (issue 14.13). */
	olen = (h->nowners ? h->nowners : 1) * sizeof(struct fdr_blk_owner);
	clen = (h->top_chunk ? h->top_chunk : 1) * sizeof(uint32_t);
	b->owners = aligned_alloc(_Alignof(struct fdr_blk_owner), olen);
	b->chunks = malloc(clen);
	if (!b->owners || !b->chunks) {
		st_blk_free(b);
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	memset(b->owners, 0, olen);
	memset(b->chunks, 0, clen);
	ret = src_read(src, b->owners, h->nowners * sizeof(struct fdr_blk_owner), h->owners_off);
	if (!ret)
		ret = src_read(src, b->chunks, h->top_chunk * sizeof(uint32_t), h->chunks_off);
	if (ret) {
		st_blk_free(b);
		snprintf(why, whylen, "cannot read its tables: %s", strerror(-ret));
		return ret;
	}
	ret = fdr_blk_check_owners(h, b->owners, why, whylen);
	if (!ret)
		ret = fdr_blk_check_chunks(h, b->chunks, why, whylen);
	if (ret)
		st_blk_free(b);
	return ret;
}

static void apply_rec(struct st_fd *f, uint64_t rec)
{
	f->pending = rec & FDR_REC_PENDING;
	/* Only an fd some epoll watches now was registered by its current
	 * holder: an older record may name the previous one. */
	f->tid = !f->pending && f->watchers ? FDR_REC_TID(rec) : 0;
}

int st_blk_records(const struct st_src *src, const struct st_blk *b, struct st_fd *fds,
		   size_t nfds)
{
	uint64_t *win = calloc(ST_REC_WINDOW, sizeof(*win));
	size_t i = 0;
	int ret = 0;

	if (!win)
		return -ENOMEM;
	/* Windows from one open fd to the last open fd within reach: the
	 * records of open fds, in few reads, whatever their spread. */
	while (i < nfds && (uint64_t)fds[i].fd < b->hdr.nrecs) {
		uint64_t lo = (uint64_t)fds[i].fd;
		size_t j = i;

		while (j + 1 < nfds && (uint64_t)fds[j + 1].fd < b->hdr.nrecs &&
		       (uint64_t)fds[j + 1].fd < lo + ST_REC_WINDOW)
			j++;
		ret = src_read(src, win, ((uint64_t)fds[j].fd - lo + 1) * sizeof(*win),
			       b->hdr.recs_off + lo * sizeof(*win));
		if (ret)
			break;
		for (; i <= j; i++)
			apply_rec(&fds[i], win[(uint64_t)fds[i].fd - lo]);
	}
	free(win);
	return ret;
}

/* --- finding it in a live process --- */

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

/* All of @path, up to ST_MAPS_MAX bytes: a growing buffer, NUL-terminated. */
static int read_whole(const char *path, char **out, size_t *outlen, size_t max)
{
	size_t cap = 1 << 16, len = 0;
	char *buf;
	int fd;

	*out = NULL;
	*outlen = 0;
	buf = malloc(cap);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !buf) {
		int err = fd < 0 ? (errno ? errno : EIO) : ENOMEM;

		if (fd >= 0)
			close(fd);
		free(buf);
		return -err;
	}
	for (;;) {
		ssize_t n;

		if (cap - len < 2) {
			char *nb;

			if (cap >= max) {
				close(fd);
				free(buf);
				return -EFBIG;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				close(fd);
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;

			close(fd);
			free(buf);
			return -err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = 0;
	*out = buf;
	*outlen = len;
	return 0;
}

int st_read_whole(const char *path, char **out, size_t *outlen, size_t max);
int st_read_whole(const char *path, char **out, size_t *outlen, size_t max)
{
	return read_whole(path, out, outlen, max);
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

static bool is_lib_path(const char *p, size_t len)
{
	const char *base = p;

	for (size_t i = 0; i < len; i++)
		if (p[i] == '/')
			base = p + i + 1;
	return (size_t)(p + len - base) >= 13 && !memcmp(base, "libfdrange.so", 13);
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

int st_blk_find(const struct st_proc *p, struct st_blk *b, bool *lib_mapped, char *why,
		size_t whylen)
{
	static const char name[] = FDR_BLK_MAPS_NAME;
	char path[64], first_why[ST_WHY_MAX] = "", first_cwhy[ST_WHY_MAX] = "";
	unsigned candidates = 0, tried = 0;
	int first_err = 0;
	size_t len = 0;
	char *maps = NULL, *l;
	dev_t shm = 0;
	int ret;

	*lib_mapped = false;
	ret = shmem_dev(&shm);
	if (ret) {
		snprintf(why, whylen, "cannot make a memfd to learn the shmem device: %s",
			 strerror(-ret));
		return ret;
	}
	snprintf(path, sizeof(path), "/proc/%ld/maps", p->pid);
	ret = read_whole(path, &maps, &len, ST_MAPS_MAX);
	if (ret) {
		snprintf(why, whylen, "cannot read %s: %s", path,
			 ret == -EFBIG ? "larger than 64 MiB" : strerror(-ret));
		return ret;
	}
	/* Whole lines only: a last line without its newline is cut, not read. */
	for (l = maps; l < maps + len;) {
		char *nl = memchr(l, '\n', (size_t)(maps + len - l));
		struct maps_line m;
		struct fd_src s = { -1, 0 };
		struct st_src src;
		char cwhy[ST_WHY_MAX];

		if (!nl)
			break;
		if (!parse_maps_line(l, (size_t)(nl - l), &m)) {
			l = nl + 1;
			continue;
		}
		l = nl + 1;
		if (is_lib_path(m.path, m.pathlen))
			*lib_mapped = true;
		if (m.pathlen != sizeof(name) - 1 || memcmp(m.path, name, m.pathlen) != 0 ||
		    m.perms[0] != 'r' || m.perms[3] != 's' ||
		    makedev(m.dev_major, m.dev_minor) != shm)
			continue;
		candidates++;
		if (b->owners || tried >= ST_CANDIDATES)
			continue;  /* found already, or enough tried: count the rest */
		tried++;
		if (m.end - m.start < FDR_BLK_HDR_SIZE || m.end - m.start > ST_MAP_LEN_MAX) {
			ret = refuse(cwhy, sizeof(cwhy), "mapping length %" PRIu64
				     " is not within %u..%llu", m.end - m.start, FDR_BLK_HDR_SIZE,
				     ST_MAP_LEN_MAX);
		} else {
			const char *via = NULL;

			ret = open_candidate(p->pid, &m, shm, &s, &via, cwhy, sizeof(cwhy));
			if (!ret) {
				src.read = fd_read;
				src.ctx = &s;
				src.maplen = m.end - m.start;
				ret = st_blk_load(&src, b, cwhy, sizeof(cwhy));
				if (!ret && p->nspid && b->hdr.pid != p->nspid) {
					ret = refuse(cwhy, sizeof(cwhy), "pid %" PRId32
						     " is not the process's own (%ld in its "
						     "namespace)", b->hdr.pid, p->nspid);
					st_blk_free(b);
				}
				if (!ret) {
					ret = st_blk_records(&src, b, p->fds, p->nfds);
					if (ret) {
						snprintf(cwhy, sizeof(cwhy), "cannot read its fd "
							 "records: %s", strerror(-ret));
						st_blk_free(b);
					}
				}
				close(s.fd);
				if (!ret) {
					b->map_start = m.start;
					b->map_end = m.end;
					b->via = via;
				}
			}
		}
		if (ret && !first_err) {
			first_err = ret;
			snprintf(first_cwhy, sizeof(first_cwhy), "%s", cwhy);
			snprintf(first_why, sizeof(first_why), "stats block at %" PRIx64 "-%" PRIx64
				 " refused: %.240s", m.start, m.end, cwhy);
		}
	}
	free(maps);
	if (b->owners)
		return 1;
	if (!candidates || (first_err == -EPROTONOSUPPORT && candidates == 1)) {
		if (candidates) {
			snprintf(why, whylen, "its stats block is of another libfdrange release: %s",
				 first_cwhy);
			*lib_mapped = true;  /* shown as library=inactive: loaded, not readable */
			return 0;
		}
		snprintf(why, whylen, "%s", *lib_mapped ?
			 "libfdrange is loaded but keeps no stats block (FDRANGE_DISABLE, a bad "
			 "FDRANGE_* value, secure-execution mode, or no memfd)" :
			 "libfdrange is not loaded in this process");
		return 0;
	}
	if (candidates > 1)
		snprintf(why, whylen, "%.250s (%u candidate mappings, %u examined, none accepted)",
			 first_why, candidates, tried);
	else
		snprintf(why, whylen, "%s", first_why);
	/* Refused contents, or a read we were not allowed: both are errors. */
	return first_err == -EBADMSG || first_err == -EIO || first_err == -ESTALE ||
	       first_err == -EPROTONOSUPPORT ? -EBADMSG : first_err;
}
