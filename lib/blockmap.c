/* SPDX-License-Identifier: MIT */
/*
 * Making the stats block (layout: block.h) of this process.
 *
 * At start-up the constructor makes a memfd, sizes it, maps it MAP_SHARED
 * and closes the fd again at once, so the program sees no fd of ours.
 * With raw syscalls: no malloc, no stdio, nothing a wrapper could see.
 * The pages are sparse: only the header, the owners in use, the claimed
 * part of the chunk table and the records of fds that were accepted or
 * registered ever take memory.
 *
 * Nothing about it is left behind when the process ends, however it ends:
 * there is no name to remove, no destructor, no syscall at exit (a process
 * locked into a seccomp filter, like sshd's pre-authentication child, must
 * not meet a syscall it never made).  `fdrange stat` finds the mapping in
 * /proc/PID/maps.
 *
 * A child of fork() must never write its parent's block: it stops using it
 * inside fork, and makes a block of its own at its first placement.
 */
#include "blockmap.h"
#include "handoff.h"
#include "owners.h"
#include "geometry.h"
#include "strbuf.h"
#include "sys.h"

#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 1u
#endif
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 8u
#endif

static size_t blk_size;

static void *sys_mmap(size_t len, int prot, int flags, int fd)
{
	long r = SYS_CALL(SYS_mmap, NULL, len, prot, flags, fd, 0);

	/* The raw syscall returns the address as a long; there is no other way. */
	return r < 0 && r > -4096 ? NULL : (void *)r; // NOLINT(performance-no-int-to-ptr)
}

/* A shared memfd mapping of @size bytes, or private memory; flags out. */
static void *map_block(size_t size, uint32_t *flags)
{
	void *p = NULL;
	/* NOEXEC_SEAL (Linux 6.3+) keeps newer kernels from logging that a
	 * memfd was made executable by default; older ones refuse the flag. */
	long fd = SYS_CALL(SYS_memfd_create, FDR_BLK_NAME, MFD_CLOEXEC | MFD_NOEXEC_SEAL);

	if (fd == -EINVAL)
		fd = SYS_CALL(SYS_memfd_create, FDR_BLK_NAME, MFD_CLOEXEC);
	if (fd >= 0) {
		if (SYS_CALL(SYS_ftruncate, (int)fd, size) == 0)
			p = sys_mmap(size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd);
		sys_close((int)fd);
	}
	*flags = p ? 0 : FDR_BLK_PRIVATE;
	if (!p)
		p = sys_mmap(size, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1);
	return p;
}

static void point_at(struct fdr_blk_hdr *h)
{
	fdr_st.owners = (struct fdr_blk_owner *)((char *)h + h->owners_off);
	fdr_st.chunks = (uint32_t *)((char *)h + h->chunks_off);
	fdr_st.recs = (uint64_t *)((char *)h + h->recs_off);
	fdr_st.nchunks = h->nchunks;
	fdr_st.nrecs = h->nrecs;
	__atomic_store_n(&fdr_st.hdr, h, __ATOMIC_RELEASE);
}

static void fill_settings(struct fdr_blk_hdr *h)
{
	const struct fdr_config *cfg = &fdr_st.cfg;

	h->nsettings = fdr_noptions;
	for (unsigned i = 0; i < fdr_noptions; i++) {
		struct fdr_blk_setting *s = &h->settings[i];
		struct strbuf sb;

		sb_init(&sb, s->name, sizeof(s->name), -1);
		sb_str(&sb, fdr_options[i].env);
		fdr_option_format(&fdr_options[i], cfg, s->value, sizeof(s->value));
		s->from_env = cfg->source[i] == FDR_SRC_ENV;
	}
}

void fdr_block_geometry(void)
{
	struct fdr_blk_hdr *h = __atomic_load_n(&fdr_st.hdr, __ATOMIC_ACQUIRE);

	if (h)
		__atomic_store_n(&h->limit, __atomic_load_n(&fdr_st.limit, __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
}

int fdr_block_create(void)
{
	const struct fdr_config *cfg = &fdr_st.cfg;
	unsigned nchunks = fdr_geom_nchunks(cfg->base, fdr_geom_cap(fdr_st.nr_open, fdr_st.nr_open));
	uint64_t nrecs = fdr_st.nr_open < FDR_BLK_MAX_FD ? fdr_st.nr_open : FDR_BLK_MAX_FD;
	size_t owners_off = FDR_BLK_HDR_SIZE;
	size_t chunks_off = owners_off + (size_t)FDR_MAX_OWNERS * sizeof(struct fdr_blk_owner);
	size_t recs_off = (chunks_off + (size_t)nchunks * sizeof(uint32_t) + 4095) & ~(size_t)4095;
	size_t size = recs_off + nrecs * sizeof(uint64_t);
	struct fdr_blk_hdr *h;
	uint32_t flags;
	struct strbuf sb;

	h = map_block(size, &flags);
	if (!h)
		return -ENOMEM;
	__builtin_memcpy(h->magic, FDR_BLK_MAGIC, 8);
	h->version = FDR_BLK_VERSION;
	h->hdr_size = FDR_BLK_HDR_SIZE;
	h->size = size;
	h->pid = (int32_t)sys_getpid();
	h->flags = flags | (fdr_st.active ? FDR_BLK_ACTIVE : 0);
	sb_init(&sb, h->lib_version, sizeof(h->lib_version), -1);
	sb_str(&sb, FDRANGE_VERSION_STRING);
	fill_settings(h);
	h->base = cfg->base;
	h->chunk = FDR_CHUNK;
	h->fixed_width = cfg->width;
	h->nchunks = nchunks;
	h->limit = fdr_st.limit;
	h->nr_open = fdr_st.nr_open;
	h->policy = cfg->accept;
	h->owners_off = owners_off;
	h->owner_size = sizeof(struct fdr_blk_owner);
	h->max_owners = FDR_MAX_OWNERS;
	h->chunks_off = chunks_off;
	h->recs_off = recs_off;
	h->nrecs = nrecs;
	blk_size = size;
	point_at(h);
	return 0;
}

/*
 * Inside fork(), in the child: memory only, no syscall (a child about to
 * exec, or to lock itself into a seccomp filter, must meet none of ours).
 * The parent's block stays mapped, read but never written, until the
 * child first places an fd.
 */
void fdr_block_atfork_child(void)
{
	fdr_st.parent_hdr = fdr_st.hdr;
	fdr_st.nchunks = 0;
	fdr_st.nrecs = 0;
	__atomic_store_n(&fdr_st.hdr, NULL, __ATOMIC_RELEASE);
}

/*
 * The child's own block.  It keeps its parent's geometry and claimed
 * chunks (its fd table is a copy), but counts its own fds from zero; the
 * other threads' chunks are given back by the owners' fix-up.  One thread
 * makes it; others pass their fds through meanwhile.
 */
bool fdr_block_for_child(void)
{
	static int making;
	struct fdr_blk_hdr *old = fdr_st.parent_hdr, *h;
	const struct fdr_blk_owner *oo;
	uint32_t flags;

	if (__atomic_load_n(&fdr_st.hdr, __ATOMIC_ACQUIRE))
		return true;
	if (!old || __atomic_exchange_n(&making, 1, __ATOMIC_ACQUIRE))
		return false;
	h = map_block(blk_size, &flags);
	if (!h)
		return false;  /* `making` stays set: no second try per fd */
	/* The header's layout fields, settings and geometry; not its counters. */
	__builtin_memcpy(h, old, offsetof(struct fdr_blk_hdr, limit_changes));
	h->pid = (int32_t)sys_getpid();
	h->flags = flags | (old->flags & FDR_BLK_ACTIVE);
	h->policy = old->policy;
	h->owners_off = old->owners_off;
	h->owner_size = old->owner_size;
	h->max_owners = old->max_owners;
	h->chunks_off = old->chunks_off;
	h->recs_off = old->recs_off;
	h->nrecs = old->nrecs;
	/* Read once: the parent may still be claiming. */
	h->nowners = __atomic_load_n(&old->nowners, __ATOMIC_RELAXED);
	h->top_chunk = __atomic_load_n(&old->top_chunk, __ATOMIC_RELAXED);
	if (h->nowners > FDR_MAX_OWNERS)
		h->nowners = FDR_MAX_OWNERS;
	if (h->top_chunk > h->nchunks)
		h->top_chunk = h->nchunks;
	oo = (const struct fdr_blk_owner *)((const char *)old + old->owners_off);
	for (unsigned o = 0; o < h->nowners; o++) {
		struct fdr_blk_owner *n = (struct fdr_blk_owner *)((char *)h + h->owners_off) + o;

		n->kind = oo[o].kind;
		n->tid = oo[o].tid;
		n->chunks = oo[o].chunks;
		n->hint = oo[o].hint;
		n->live = oo[o].live;
		n->threads = oo[o].threads;
	}
	__builtin_memcpy((char *)h + h->chunks_off, (const char *)old + old->chunks_off,
			 (size_t)h->top_chunk * sizeof(uint32_t));
	point_at(h);
	fdr_owners_child_fixup();
	fdr_handoff_child_fixup();
	fdr_st.parent_hdr = NULL;
	SYS_CALL(SYS_munmap, old, blk_size);
	return true;
}
