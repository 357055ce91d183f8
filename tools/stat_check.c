/* SPDX-License-Identifier: MIT */
/*
 * Validating a stats block's bytes (lib/block.h): the part of `fdrange
 * stat` that decides, often as root, whether bytes another process wrote
 * may be used at all.  Pure functions, driven directly by the unit tests
 * and the fuzzer:
 *  - every header field is checked before any is used, with
 *    overflow-safe arithmetic, and refused with one line naming the field
 *    and its value;
 *  - the tables lie inside the block, past its header, apart, aligned;
 *  - owner records, chunk entries and the line pool's lines name only
 *    owners that can exist.
 * The block is live: the library writes it while we read.  Values that
 * only a race can make odd (a chunk or line naming an owner beyond our
 * snapshot's nowners) are tolerated as unowned; values no race can make
 * are refused.
 */
#include "stat.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define ST_COUNT_MAX     (1ull << 62)  /* no counter of a real process gets here */
#define ST_NR_OPEN_MAX   2147483584ull /* the kernel's sysctl_nr_open_max */

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

static int check_settings(const struct fdr_blk_hdr *h, char *why, size_t whylen)
{
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
	return 0;
}

static int check_geometry(const struct fdr_blk_hdr *h, char *why, size_t whylen)
{
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
	/* open_counted may pass the nr_open of start-up (sysctl raised since);
	 * never the kernel's own maximum, nor the bound beyond 2 x that. */
	if (h->open_counted > ST_NR_OPEN_MAX)
		return refuse(why, whylen, "open_counted %" PRIu64 " exceeds %llu", h->open_counted,
			      ST_NR_OPEN_MAX);
	if (h->bound_top > 2 * ST_NR_OPEN_MAX + 64)
		return refuse(why, whylen, "bound_top %" PRIu64 " is beyond any fd", h->bound_top);
	if (h->threshold > FDR_BLK_MAX_FD)
		return refuse(why, whylen, "threshold %" PRIu64 " exceeds %u", h->threshold,
			      FDR_BLK_MAX_FD);
	if (h->kernel_range > 1)
		return refuse(why, whylen, "kernel_range %" PRIu64 " is not 0 or 1", h->kernel_range);
	if (h->few_seen > 1)
		return refuse(why, whylen, "few_seen %" PRIu64 " is not 0 or 1", h->few_seen);
	return 0;
}

static int check_model(const struct fdr_blk_hdr *h, char *why, size_t whylen)
{
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
	return 0;
}

static int check_counts(const struct fdr_blk_hdr *h, char *why, size_t whylen)
{
	const uint64_t counts[] = { h->limit_changes, h->single_kept, h->untracked,
				    h->learned_after, h->relearns, h->accepted, h->observed,
				    h->hits, h->misses, h->realignments, h->counts,
				    h->accepts_left };
	static const char *const count_names[] = { "limit_changes", "single_kept", "untracked",
						   "learned_after", "relearns", "accepted",
						   "observed", "hits", "misses", "realignments",
						   "counts", "accepts_left" };

	_Static_assert(sizeof(counts) / sizeof(counts[0]) ==
		       sizeof(count_names) / sizeof(count_names[0]), "a name per count");
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		if (counts[i] > ST_COUNT_MAX)
			return refuse(why, whylen, "%s %" PRIu64 " is beyond any count",
				      count_names[i], counts[i]);
	return 0;
}

/* One table at @off of @len bytes: aligned, inside, after the header. */
static int check_table(const struct fdr_blk_hdr *h, const char *name, uint64_t off,
		       uint64_t len, unsigned align, char *why, size_t whylen)
{
	if (off % align || !within(off, len, h->hdr_size, h->size))
		return refuse(why, whylen, "%s %" PRIu64 " (+%" PRIu64 " bytes) is not an "
			      "aligned offset within the block's %" PRIu64 " bytes after its header",
			      name, off, len, h->size);
	return 0;
}

static int check_tables(const struct fdr_blk_hdr *h, char *why, size_t whylen)
{
	const uint64_t owners_len = (uint64_t)h->max_owners * h->owner_size;
	const uint64_t chunks_len = (uint64_t)h->nchunks * sizeof(uint32_t);
	const uint64_t recs_len = h->nrecs * sizeof(uint64_t);
	const uint64_t lines_len = (uint64_t)h->nchunks * FDR_LINES_PER_CHUNK * sizeof(uint32_t);
	const uint64_t off[] = { h->owners_off, h->chunks_off, h->recs_off, h->lines_off };
	const uint64_t len[] = { owners_len, chunks_len, recs_len, lines_len };
	int ret;

	if ((ret = check_table(h, "owners_off", h->owners_off, owners_len, 8, why, whylen)) ||
	    (ret = check_table(h, "chunks_off", h->chunks_off, chunks_len, 4, why, whylen)) ||
	    (ret = check_table(h, "recs_off", h->recs_off, recs_len, 8, why, whylen)))
		return ret;
	/* With no chunk at all there are no lines, and nothing is read there. */
	if (lines_len && (ret = check_table(h, "lines_off", h->lines_off, lines_len, 4, why,
					    whylen)))
		return ret;
	for (unsigned i = 0; i < 4; i++)
		for (unsigned k = i + 1; k < 4; k++)
			if (overlap(off[i], len[i], off[k], len[k]))
				return refuse(why, whylen, "tables overlap: owners_off %" PRIu64
					      " chunks_off %" PRIu64 " recs_off %" PRIu64
					      " lines_off %" PRIu64, h->owners_off, h->chunks_off,
					      h->recs_off, h->lines_off);
	return 0;
}

int fdr_blk_check_hdr(const struct fdr_blk_hdr *h, uint64_t maplen, char *why, size_t whylen)
{
	int ret;

	if (memcmp(h->magic, FDR_BLK_MAGIC, sizeof(h->magic)) != 0) {
		/* The magic names its version too: FDRSTAT2 is an older release. */
		if (!memcmp(h->magic, FDR_BLK_MAGIC, sizeof(h->magic) - 1) &&
		    h->version != FDR_BLK_VERSION) {
			refuse(why, whylen, "version %" PRIu32 ", this fdrange reads version %u only",
			       h->version, FDR_BLK_VERSION);
			return -EPROTONOSUPPORT;
		}
		return refuse(why, whylen, "magic is not " FDR_BLK_MAGIC);
	}
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
	if (h->why_inactive >= FDR_WHY_NR)
		return refuse(why, whylen, "why_inactive %" PRIu32 " is not a known reason",
			      h->why_inactive);
	if (!nul_in(h->why_msg, sizeof(h->why_msg)))
		return refuse(why, whylen, "why_msg is not NUL-terminated within %zu bytes",
			      sizeof(h->why_msg));
	if ((ret = check_settings(h, why, whylen)) || (ret = check_geometry(h, why, whylen)))
		return ret;
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
	if ((ret = check_model(h, why, whylen)) || (ret = check_counts(h, why, whylen)))
		return ret;
	return check_tables(h, why, whylen);
}

static int check_owner(const struct fdr_blk_hdr *h, uint32_t i, const struct fdr_blk_owner *o,
		       char *why, size_t whylen)
{
	const uint64_t counts[] = { o->threads, o->placed, o->inplace, o->kept, o->fallback[0],
				    o->fallback[1], o->fallback[2], o->fallback[3],
				    o->fallback[4], o->probes, o->claims };
	uint32_t want = i == FDR_OWN_SPARSE ? FDR_KIND_SPARSE :
			i == FDR_OWN_SHARED ? FDR_KIND_SHARED :
			i == FDR_OWN_LINES ? FDR_KIND_LINES : FDR_KIND_NR;

	_Static_assert(FDR_FB_NR == 5, "fallback reasons listed above");
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
	if (o->lines > (uint64_t)h->nchunks * FDR_LINES_PER_CHUNK)
		return refuse(why, whylen, "owner %" PRIu32 ": lines %" PRIu32
			      " exceeds the %u lines of nchunks %" PRIu32, i, o->lines,
			      FDR_LINES_PER_CHUNK, h->nchunks);
	if (o->busy > 1)
		return refuse(why, whylen, "owner %" PRIu32 ": busy %" PRIu32 " is not 0 or 1", i,
			      o->busy);
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

/* Line @l (of a chunk the line pool holds) names holder @v (index + 1). */
static int check_line(const struct fdr_blk_hdr *h, uint64_t l, uint32_t v, char *why,
		      size_t whylen)
{
	if (v > h->max_owners)
		return refuse(why, whylen, "line %" PRIu64 ": holder %" PRIu32
			      " (index + 1) exceeds max_owners %" PRIu32, l, v, h->max_owners);
	/* The pool hands its lines out; it cannot hold one from itself. */
	if (v == FDR_OWN_LINES + 1)
		return refuse(why, whylen, "line %" PRIu64 ": holder %" PRIu32
			      " is the line pool itself", l, v);
	return 0;
}

/* The 8 lines of chunk @c, which the line pool holds. */
static int check_chunk_lines(const struct fdr_blk_hdr *h, uint32_t c, const uint32_t *line,
			     char *why, size_t whylen)
{
	for (uint32_t l = 0; l < FDR_LINES_PER_CHUNK; l++) {
		int ret = check_line(h, (uint64_t)c * FDR_LINES_PER_CHUNK + l, line[l], why, whylen);

		if (ret)
			return ret;
	}
	return 0;
}

int fdr_blk_check_lines(const struct fdr_blk_hdr *h, const uint32_t *chunks,
			const uint32_t *lines, char *why, size_t whylen)
{
	for (uint32_t c = 0; c < h->top_chunk; c++) {
		int ret = chunks[c] == FDR_OWN_LINES + 1 ?
			  check_chunk_lines(h, c, &lines[(size_t)c * FDR_LINES_PER_CHUNK], why,
					    whylen) : 0;

		if (ret)
			return ret;
	}
	return 0;
}

/* 32-bit entry @i of the table at @off in @p (no alignment needed). */
static uint32_t u32_at(const unsigned char *p, uint64_t off, uint64_t i)
{
	uint32_t v;

	memcpy(&v, p + off + i * sizeof(v), sizeof(v));
	return v;
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
	    !within(h.chunks_off, (uint64_t)h.top_chunk * sizeof(uint32_t), 0, len) ||
	    !within(h.lines_off, (uint64_t)h.top_chunk * FDR_LINES_PER_CHUNK * sizeof(uint32_t), 0,
		    len))
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
		uint32_t v = u32_at(p, h.chunks_off, c);

		ret = check_chunk(&h, c, v, why, whylen);
		if (ret)
			return ret;
		if (v == FDR_OWN_LINES + 1) {
			uint32_t line[FDR_LINES_PER_CHUNK];

			memcpy(line, p + h.lines_off + (uint64_t)c * sizeof(line), sizeof(line));
			ret = check_chunk_lines(&h, c, line, why, whylen);
			if (ret)
				return ret;
		}
	}
	return 0;
}
