/* SPDX-License-Identifier: MIT */
/*
 * coherence.c - a QEMU TCG plugin that counts cache-line transfers between
 * vCPUs caused by chosen guest kernel functions (the fd table's readers and
 * writers), so that libfdrange's effect can be counted where timings show
 * nothing (2 vCPUs, no many-core machine).
 *
 * What it models. Every memory access made by an instruction that lies
 * inside one of the listed kernel functions updates a MESI-like state of its
 * 64-byte line: the set of vCPUs holding a valid copy and the vCPU holding
 * it modified (if any). An access by vCPU c is a *transfer* when the line
 * is valid somewhere else and
 *   - c reads it and has no valid copy (data comes from another cache;
 *     a *HITM* if that copy was modified, the event perf c2c reports), or
 *   - c writes it while another vCPU holds a copy (read-for-ownership or
 *     invalidation of the other copies).
 * A line nobody held before is a cold miss, not a transfer. The caches are
 * infinite: only coherence moves lines. Accesses by unlisted code are not
 * seen; the state is what the listed code did. The lock functions (category
 * lock: the out-of-line spin_lock and its slow path) are seen only while
 * they run for a listed caller, found by the return address at their entry,
 * so file_lock's word counts and the scheduler's locks do not.
 * Stack accesses (push/pop/call/ret and anything addressed through %rsp)
 * are not instrumented: kernel stacks are per task and would only count
 * task migrations.
 *
 * Windows. The guest opens and closes measurement windows with a magic
 * user-mode instruction, `xchg %rcx,%rcx` (48 87 c9, which no compiler
 * emits), with the command in %rax and arguments in %rdi/%rsi/%rdx:
 *   1 OPEN                    zero the counters, start counting
 *   2 CLOSE  rdi=label        append the window's counts to the output file
 *   3 ADDFN  rdi=start rsi=end rdx="CAT NAME"   (symbols from the guest's
 *            /proc/kallsyms, for kernels without a System.map)
 *   4 COMMIT                  use the functions added; retranslates all code
 * Line states are tracked outside windows too, so a window starts warm.
 *
 * Line names. fd_install(fd, file) stores file at fdt->fd[fd]; the plugin
 * reads fd (%rdi) at its entry and learns each table's fd[] base from that
 * store (base = address - 8*fd). A base fdarray_off % 64 bytes into a line
 * is the fd_array embedded in files_struct (offset fdarray_off: 160 on 6.12
 * x86_64, 168 with the series' CONFIG_FD_RANGE), which gives the
 * files_struct itself; its lines are then named by offset (and
 * fdcache_gen[] at gen_off for the fdcache kernel). The fdcache
 * kernel allocates one generation counter line per 64 fds with each
 * struct fdtable; with fdt_gen_off the plugin reads that pointer from the
 * table and names those lines Tn.fdcache_gen[k] (fds 64k..64k+63). Tables
 * are numbered T1, T2... in the order they are learned. Other lines are "?".
 *
 * Arguments (-plugin coherence.so,ARG=VAL,...):
 *   out=FILE          where windows are appended (required)
 *   syms=FILE         lines "START END CAT NAME" (hex, end exclusive);
 *                     CAT is lookup, create, close, other, init (struct
 *                     file initialisation) or lock (see above)
 *   fdarray_off=N     offset of fd_array in files_struct (default 160)
 *   gen_off=N         offset of fdcache_gen[] (default 0: none)
 *   gen_n=N           number of fdcache_gen lines at gen_off (default 8)
 *   fdt_gen_off=N     offset in struct fdtable of the pointer to its
 *                     counters (default 0: none)
 *   fdt_off=N         offset of the fdt pointer in files_struct (default 32)
 */
#include "qemu-plugin-api.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

CP_EXPORT int qemu_plugin_version = CP_PLUGIN_API_VERSION;

#define MAX_VCPUS 64
#define LINE ((uint64_t)64)
#define KERNEL_START 0xffff800000000000ull
#define NCAT 6
/* init: struct file initialisation on the creation paths; lock: the
 * spinlock functions, counted only when called from a listed function */
enum { CAT_LOOKUP, CAT_CREATE, CAT_CLOSE, CAT_OTHER, CAT_INIT, CAT_LOCK };
static const char *const cat_names[NCAT] = { "lookup", "create", "close", "other", "init", "lock" };

struct fn {
	uint64_t start, end;
	int cat;
	int is_fd_install, is_fput;
	char name[64];
	uint64_t acc, xfer, hitm; /* in the current window */
	uint64_t lock_xfer; /* transfers in lock functions called from this one */
};

struct line {
	uint64_t addr; /* 0: empty slot */
	uint64_t valid; /* vCPUs holding a valid copy */
	int dirty; /* vCPU holding it modified, -1: none */
	uint64_t acc, xfer, hitm, rd, wr, xcat[NCAT]; /* in the current window */
};

struct table {
	uint64_t base; /* &fd[0] */
	unsigned max_fd; /* highest fd seen installed */
	/* read from the guest's struct fdtable once the owning files_struct
	 * is known (0: not known) */
	uint64_t files, fdt, open_fds, close_on_exec, full_fds_bits;
	uint64_t gens; /* the table's fdcache_gen lines (fdt_gen_off), 0: none */
	unsigned max_fds;
};

struct vcpu {
	struct qemu_plugin_register *rax, *rdi, *rsi, *rdx, *rsp;
	GByteArray *buf;
	uint64_t fd, rsp_at_entry; /* fd_install's arguments, at its entry */
	/* the listed function whose call of a lock function is running on
	 * this vCPU, + 1; 0: the lock function was called from elsewhere */
	size_t lock_caller;
};

/* struct file pointers seen at fput() entry: lines inside one of them are
 * named "file". A small open-addressed set; when full, names are lost,
 * counts are not. */
#define FILE_SLOTS (1u << 16)
#define FILE_SIZE 256 /* bound on sizeof(struct file), 6.1 and 6.12 */
static uint64_t files_seen[FILE_SLOTS];
static uint64_t nfiles_seen;

static qemu_plugin_id_t plugin_id;
/*
 * Locking. A line's state is guarded by the spinlock of its stripe; the
 * tables, the struct file set and the staged functions by meta_lock;
 * opening and closing a window takes them all. Spinlocks, and striped,
 * because with one pthread mutex the vCPU threads convoyed: a thread that
 * slept on the contended mutex gave its host CPU away, the other re-took
 * the (unfair) mutex for whole time slices, and the vCPUs ran in long
 * turns instead of interleaving (the microbenchmark's overlap indicator
 * fell to ~0.01 in most boots).
 */
#define NSTRIPES 256
static struct {
	char flag;
	char pad[63];
} stripes[NSTRIPES];
static char meta_lock;

static void spin_lock(char *l)
{
	while (__atomic_test_and_set(l, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(l, __ATOMIC_RELAXED))
			__builtin_ia32_pause();
}

static void spin_unlock(char *l)
{
	__atomic_clear(l, __ATOMIC_RELEASE);
}

static char *stripe_of(uint64_t line)
{
	return &stripes[((line >> 6) * 0x9e3779b97f4a7c15ull) >> 56].flag;
}

static void lock_all(void)
{
	for (unsigned i = 0; i < NSTRIPES; i++)
		spin_lock(&stripes[i].flag);
	spin_lock(&meta_lock);
}

static void unlock_all(void)
{
	spin_unlock(&meta_lock);
	for (unsigned i = NSTRIPES; i-- > 0;)
		spin_unlock(&stripes[i].flag);
}
static const char *out_path;
static uint64_t fdarray_off = 160, gen_off, gen_n = 8, fdt_gen_off;
/* files_struct.fdt and the struct fdtable members (x86_64, 6.1 and 6.12) */
static uint64_t fdt_off = 32;
enum { FDT_MAX_FDS = 0, FDT_FD = 8, FDT_CLOEXEC = 16, FDT_OPEN = 24, FDT_FULL = 32 };

static struct fn *fns, *staged;
static size_t nfns, nstaged;
static struct vcpu vcpus[MAX_VCPUS];

#define LINE_SLOTS (1u << 18)
static struct line *lines;
static uint64_t lines_used, lines_dropped;

#define MAX_TABLES 4096
static struct table tables[MAX_TABLES];
static unsigned ntables;

static int window_open;
static uint64_t w_acc, w_switches;
static int last_vcpu = -1;

static int cat_of(const char *s)
{
	for (int i = 0; i < NCAT; i++)
		if (!strcmp(s, cat_names[i]))
			return i;
	return -1;
}

static int fn_cmp(const void *a, const void *b)
{
	const struct fn *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static struct fn *fn_at(uint64_t pc)
{
	size_t lo = 0, hi = nfns;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (pc < fns[mid].start)
			hi = mid;
		else if (pc >= fns[mid].end)
			lo = mid + 1;
		else
			return &fns[mid];
	}
	return NULL;
}

static int add_fn(struct fn **arr, size_t *n, uint64_t s, uint64_t e, const char *cat_name)
{
	char cat[16], name[64];
	int c;

	if (sscanf(cat_name, "%15s %63s", cat, name) != 2 || (c = cat_of(cat)) < 0 || e <= s)
		return -1;
	*arr = realloc(*arr, (*n + 1) * sizeof(**arr));
	if (!*arr)
		abort();
	struct fn *f = &(*arr)[(*n)++];
	memset(f, 0, sizeof(*f));
	f->start = s;
	f->end = e;
	f->cat = c;
	f->is_fd_install = !strcmp(name, "fd_install");
	f->is_fput = !strcmp(name, "fput");
	snprintf(f->name, sizeof(f->name), "%s", name);
	return 0;
}

/* The slot of a line; called with the line's stripe lock held, so only
 * claiming an empty slot races (with other stripes): compare-and-swap. */
static struct line *line_get(uint64_t addr)
{
	uint64_t h = (addr >> 6) * 0x9e3779b97f4a7c15ull;
	for (unsigned i = 0; i < 64; i++) {
		struct line *l = &lines[(h + i) & (LINE_SLOTS - 1)];
		uint64_t a = __atomic_load_n(&l->addr, __ATOMIC_ACQUIRE);
		if (a == addr)
			return l;
		if (a)
			continue;
		if (__atomic_load_n(&lines_used, __ATOMIC_RELAXED) >= LINE_SLOTS / 2)
			break; /* keep probing short; report the loss */
		if (__atomic_compare_exchange_n(&l->addr, &a, addr, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			l->dirty = -1;
			__atomic_add_fetch(&lines_used, 1, __ATOMIC_RELAXED);
			return l;
		}
		if (a == addr)
			return l;
	}
	__atomic_add_fetch(&lines_dropped, 1, __ATOMIC_RELAXED);
	return NULL;
}

static uint64_t read_reg(struct vcpu *v, struct qemu_plugin_register *r)
{
	uint64_t val = 0;

	g_byte_array_set_size(v->buf, 0);
	int n = qemu_plugin_read_register(r, v->buf);
	if (n > 0)
		memcpy(&val, v->buf->data, n < 8 ? (size_t)n : 8);
	return val;
}

static void file_seen(uint64_t f)
{
	uint64_t h = (f >> 6) * 0x9e3779b97f4a7c15ull;
	if (!f || nfiles_seen >= FILE_SLOTS / 2)
		return;
	for (unsigned i = 0; i < 32; i++) {
		uint64_t *slot = &files_seen[(h + i) & (FILE_SLOTS - 1)];
		if (*slot == f)
			return;
		if (!*slot) {
			*slot = f;
			nfiles_seen++;
			return;
		}
	}
}

static bool in_file(uint64_t line)
{
	/* a struct file starting up to FILE_SIZE bytes before the line's end */
	for (uint64_t f = (line + LINE - 1) & ~(uint64_t)7; f + FILE_SIZE > line && f >= 8; f -= 8) {
		uint64_t h = (f >> 6) * 0x9e3779b97f4a7c15ull;
		for (unsigned i = 0; i < 32; i++) {
			uint64_t v = files_seen[(h + i) & (FILE_SLOTS - 1)];
			if (v == f)
				return true;
			if (!v)
				break;
		}
	}
	return false;
}

static bool read_u64(struct vcpu *v, uint64_t addr, uint64_t *out)
{
	g_byte_array_set_size(v->buf, 0);
	if (!qemu_plugin_read_memory_vaddr(addr, v->buf, 8) || v->buf->len < 8)
		return false;
	memcpy(out, v->buf->data, 8);
	return true;
}

/* Fill in t's fdtable from files (a files_struct) if files->fdt->fd is
 * t's array. Runs in kernel context (inside fd_install), where the
 * kernel's mappings are live. */
static bool table_from_files(struct vcpu *v, struct table *t, uint64_t files)
{
	uint64_t fdt, fd, open, cloexec, full, maxfds;

	if (!read_u64(v, files + fdt_off, &fdt) || !read_u64(v, fdt + FDT_FD, &fd) || fd != t->base)
		return false;
	if (!read_u64(v, fdt + FDT_MAX_FDS, &maxfds) || !read_u64(v, fdt + FDT_OPEN, &open) ||
	    !read_u64(v, fdt + FDT_CLOEXEC, &cloexec) || !read_u64(v, fdt + FDT_FULL, &full))
		return false;
	t->files = files;
	t->fdt = fdt;
	t->max_fds = (unsigned)maxfds;
	t->open_fds = open;
	t->close_on_exec = cloexec;
	t->full_fds_bits = full;
	if (!fdt_gen_off || !read_u64(v, fdt + fdt_gen_off, &t->gens))
		t->gens = 0;
	return true;
}

static bool is_embedded(uint64_t base)
{
	return fdarray_off && (base & (LINE - 1)) == (fdarray_off & (LINE - 1));
}

static void learn_table(struct vcpu *v, uint64_t base, uint64_t fd)
{
	for (unsigned i = 0; i < ntables; i++) {
		if (tables[i].base == base) {
			if (fd > tables[i].max_fd)
				tables[i].max_fd = (unsigned)fd;
			return;
		}
	}
	if (ntables >= MAX_TABLES)
		return;
	struct table *t = &tables[ntables++];
	memset(t, 0, sizeof(*t));
	t->base = base;
	t->max_fd = (unsigned)fd;
	if (is_embedded(base)) {
		table_from_files(v, t, base - fdarray_off);
		return;
	}
	/* an allocated array: find the files_struct it belongs to among the
	 * ones known from their embedded arrays, newest first */
	for (unsigned i = ntables - 1; i-- > 0;)
		if (is_embedded(tables[i].base) && table_from_files(v, t, tables[i].base - fdarray_off))
			return;
}

/* A memory access of an instruction of fns[idx]. */
static void on_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	size_t idx = (size_t)(uintptr_t)udata;
	bool store = qemu_plugin_mem_is_store(info);
	uint64_t bit = 1ull << (vcpu % MAX_VCPUS);
	int xfer = 0, hitm = 0;

	uint64_t la = vaddr & ~(LINE - 1);
	struct fn *f = idx < nfns ? &fns[idx] : NULL;
	struct fn *caller = NULL;
	if (f && f->cat == CAT_LOCK) {
		/* spin_lock() is called from all over the kernel: only the
		 * calls made by the listed functions (file_lock) are seen */
		size_t c = vcpus[vcpu % MAX_VCPUS].lock_caller;
		if (!c || c > nfns)
			return;
		caller = &fns[c - 1];
	}
	char *sl = stripe_of(la);
	spin_lock(sl);
	struct line *l = line_get(la);
	if (l) {
		if (!store) {
			if (!(l->valid & bit)) {
				if (l->valid) {
					xfer = 1;
					hitm = l->dirty >= 0;
				}
				l->valid |= bit;
				l->dirty = -1;
			}
		} else {
			if (l->valid & ~bit) {
				xfer = 1;
				hitm = l->dirty >= 0 && l->dirty != (int)vcpu;
			}
			l->valid = bit;
			l->dirty = (int)vcpu;
		}
	}
	if (f && f->is_fd_install && store && (1u << qemu_plugin_mem_size_shift(info)) == 8) {
		struct vcpu *v = &vcpus[vcpu % MAX_VCPUS];
		uint64_t d = vaddr > v->rsp_at_entry ? vaddr - v->rsp_at_entry : v->rsp_at_entry - vaddr;
		if (d > 32768 && v->fd < (1u << 20)) {
			spin_lock(&meta_lock);
			learn_table(v, vaddr - 8 * v->fd, v->fd);
			spin_unlock(&meta_lock);
		}
	}
	if (__atomic_load_n(&window_open, __ATOMIC_RELAXED) && f) {
		__atomic_add_fetch(&w_acc, 1, __ATOMIC_RELAXED);
		int prev = __atomic_exchange_n(&last_vcpu, (int)vcpu, __ATOMIC_RELAXED);
		if (prev >= 0 && prev != (int)vcpu)
			__atomic_add_fetch(&w_switches, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&f->acc, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&f->xfer, (uint64_t)xfer, __ATOMIC_RELAXED);
		__atomic_add_fetch(&f->hitm, (uint64_t)hitm, __ATOMIC_RELAXED);
		if (caller)
			__atomic_add_fetch(&caller->lock_xfer, (uint64_t)xfer, __ATOMIC_RELAXED);
		if (l) {
			l->acc++;
			l->xfer += xfer;
			l->hitm += hitm;
			l->xcat[f->cat] += xfer;
			if (store)
				l->wr++;
			else
				l->rd++;
		}
	}
	spin_unlock(sl);
}

static void on_fput_entry(unsigned int vcpu, void *udata)
{
	struct vcpu *v = &vcpus[vcpu % MAX_VCPUS];
	(void)udata;
	uint64_t f = read_reg(v, v->rdi);
	spin_lock(&meta_lock);
	file_seen(f);
	spin_unlock(&meta_lock);
}

/*
 * Entry of a lock function: who called it? The return address is at
 * (%rsp). A call from another lock function (the contended slow path
 * from _raw_spin_lock) keeps the outer caller. An interrupt that takes a
 * lock of its own inside an attributed call resets the caller, and the
 * rest of the interrupted call goes uncounted (rare; an undercount).
 */
static void on_lock_entry(unsigned int vcpu, void *udata)
{
	struct vcpu *v = &vcpus[vcpu % MAX_VCPUS];
	uint64_t ret = 0;
	(void)udata;
	if (!read_u64(v, read_reg(v, v->rsp), &ret)) {
		v->lock_caller = 0;
		return;
	}
	struct fn *g = fn_at(ret);
	if (!g)
		v->lock_caller = 0;
	else if (g->cat != CAT_LOCK)
		v->lock_caller = (size_t)(g - fns) + 1;
}

static void on_fd_install_entry(unsigned int vcpu, void *udata)
{
	struct vcpu *v = &vcpus[vcpu % MAX_VCPUS];
	(void)udata;
	v->fd = read_reg(v, v->rdi);
	v->rsp_at_entry = read_reg(v, v->rsp);
}

static bool in_bitmap(uint64_t addr, uint64_t map, unsigned max_fds)
{
	uint64_t bytes = ((uint64_t)max_fds + 7) / 8;
	return map && addr + LINE > map && addr < map + (bytes ? bytes : 8);
}

static void name_line(uint64_t addr, char *buf, size_t len)
{
	/* newest table first: a freed and reused array is named by its new owner */
	for (unsigned i = ntables; i-- > 0;) {
		const struct table *t = &tables[i];
		uint64_t files = t->base - fdarray_off;
		if (is_embedded(t->base) && addr >= files && addr < t->base + 64 * 8) {
			/* the fd_array embedded in files_struct: name by offset */
			uint64_t off = addr - files;
			if (off + LINE <= fdarray_off) {
				snprintf(buf, len, "T%u.files_struct+%" PRIu64 "%s", i + 1, off,
					 off == 0 ? "(count,fdt)" : "");
			} else if (off < fdarray_off) {
				snprintf(buf, len, "T%u.files_struct+%" PRIu64 "(file_lock,next_fd,bitmaps,fd[0-%" PRIu64 "])",
					 i + 1, off, (off + LINE - fdarray_off) / 8 - 1);
			} else {
				uint64_t a = (off - fdarray_off + 7) / 8, b = (off + LINE - fdarray_off) / 8 - 1;
				snprintf(buf, len, "T%u.fd_array[%" PRIu64 "-%" PRIu64 "]", i + 1, a, b > 63 ? 63 : b);
			}
			return;
		}
		if (gen_off && is_embedded(t->base) && addr >= files + gen_off && addr < files + gen_off + gen_n * LINE) {
			snprintf(buf, len, "T%u.fdcache_gen[%" PRIu64 "]", i + 1, (addr - files - gen_off) / LINE);
			return;
		}
		if (t->gens && t->max_fds && addr >= t->gens &&
		    addr < t->gens + (t->max_fds + 63) / 64 * LINE) {
			snprintf(buf, len, "T%u.fdcache_gen[%" PRIu64 "]", i + 1, (addr - t->gens) / LINE);
			return;
		}
		if (is_embedded(t->base))
			continue;
		uint64_t nfd = t->max_fds ? t->max_fds : ((uint64_t)t->max_fd | 7) + 1;
		if (addr + LINE > t->base && addr < t->base + 8 * nfd) {
			uint64_t a = addr > t->base ? (addr - t->base) / 8 : 0;
			snprintf(buf, len, "T%u.fd[%" PRIu64 "-%" PRIu64 "]", i + 1, a, (addr + LINE - t->base) / 8 - 1);
			return;
		}
		if (t->fdt && addr + LINE > t->fdt && addr < t->fdt + (fdt_gen_off ? fdt_gen_off + 8 : 56)) {
			snprintf(buf, len, "T%u.struct_fdtable(max_fds,fd,bitmap pointers)", i + 1);
			return;
		}
		const char *what = NULL;
		uint64_t map = 0;
		if (in_bitmap(addr, t->open_fds, t->max_fds))
			what = "open_fds", map = t->open_fds;
		else if (in_bitmap(addr, t->close_on_exec, t->max_fds))
			what = "close_on_exec", map = t->close_on_exec;
		else if (t->full_fds_bits && addr + LINE > t->full_fds_bits && addr < t->full_fds_bits + 8)
			what = "full_fds_bits", map = t->full_fds_bits;
		if (what) {
			uint64_t a = addr > map ? (addr - map) * 8 : 0;
			if (map == t->full_fds_bits)
				snprintf(buf, len, "T%u.%s", i + 1, what);
			else
				snprintf(buf, len, "T%u.%s[fds%" PRIu64 "-%" PRIu64 "]", i + 1, what, a,
					 (addr + LINE - map) * 8 - 1);
			return;
		}
	}
	if (in_file(addr)) {
		snprintf(buf, len, "struct_file");
		return;
	}
	snprintf(buf, len, "?");
}

static int line_xfer_cmp(const void *a, const void *b)
{
	const struct line *x = *(struct line *const *)a, *y = *(struct line *const *)b;
	return x->xfer < y->xfer ? 1 : x->xfer > y->xfer ? -1 : (x->addr > y->addr) - (x->addr < y->addr);
}

#define TOP_LINES 40

/* Zero the window's counters (line states stay: the next window starts
 * warm). Lock held. */
static void zero_window(void)
{
	for (size_t i = 0; i < nfns; i++)
		fns[i].acc = fns[i].xfer = fns[i].hitm = fns[i].lock_xfer = 0;
	for (size_t i = 0; i < LINE_SLOTS; i++) {
		struct line *l = &lines[i];
		if (l->addr) {
			l->acc = l->xfer = l->hitm = l->rd = l->wr = 0;
			memset(l->xcat, 0, sizeof(l->xcat));
		}
	}
	w_acc = w_switches = 0;
	last_vcpu = -1;
}

/* Append the window to the output file and zero its counters. Lock held. */
static void close_window(const char *label)
{
	FILE *o = fopen(out_path, "a");
	struct line *top[TOP_LINES];
	size_t ntop = 0;
	uint64_t tot_x = 0, tot_h = 0, look_x = 0, look_h = 0;

	for (size_t i = 0; i < nfns; i++) {
		tot_x += fns[i].xfer;
		tot_h += fns[i].hitm;
		if (fns[i].cat == CAT_LOOKUP) {
			look_x += fns[i].xfer;
			look_h += fns[i].hitm;
		}
	}
	if (o) {
		fprintf(o, "W %s\n", label);
		fprintf(o, "S accesses=%" PRIu64 " switches=%" PRIu64 " xfer=%" PRIu64 " hitm=%" PRIu64
			   " lookup_xfer=%" PRIu64 " lookup_hitm=%" PRIu64 " lines=%" PRIu64 " dropped=%" PRIu64
			   " tables=%u fns=%zu\n",
			w_acc, w_switches, tot_x, tot_h, look_x, look_h, lines_used, lines_dropped, ntables, nfns);
		for (size_t i = 0; i < nfns; i++)
			if (fns[i].acc)
				fprintf(o, "F %s %s acc=%" PRIu64 " xfer=%" PRIu64 " hitm=%" PRIu64 " lock=%" PRIu64 "\n",
					fns[i].name, cat_names[fns[i].cat], fns[i].acc, fns[i].xfer, fns[i].hitm,
					fns[i].lock_xfer);
	}
	for (size_t i = 0; i < LINE_SLOTS; i++) {
		struct line *l = &lines[i];
		if (!l->addr || !l->xfer)
			continue;
		if (ntop < TOP_LINES) {
			top[ntop++] = l;
		} else {
			/* replace the smallest kept one */
			size_t m = 0;
			for (size_t k = 1; k < ntop; k++)
				if (top[k]->xfer < top[m]->xfer)
					m = k;
			if (l->xfer > top[m]->xfer)
				top[m] = l;
		}
	}
	qsort(top, ntop, sizeof(top[0]), line_xfer_cmp);
	/* Totals per class of line over every line with a transfer (the L
	 * records below are only the top ones): what the fd table itself
	 * costs, as opposed to struct file refcounts and per-task data. */
	enum { C_TABLE, C_GEN, C_FILE, C_OTHER, NCLASS };
	static const char *const class_names[NCLASS] = { "fdtable", "fdcache_gen", "struct_file", "unnamed" };
	uint64_t cx[NCLASS][NCAT + 2];
	memset(cx, 0, sizeof(cx));
	for (size_t i = 0; i < LINE_SLOTS; i++) {
		struct line *l = &lines[i];
		char name[128];
		int c;
		if (!l->addr || !l->xfer)
			continue;
		name_line(l->addr, name, sizeof(name));
		if (strstr(name, "fdcache_gen"))
			c = C_GEN;
		else if (name[0] == 'T')
			c = C_TABLE;
		else if (!strcmp(name, "struct_file"))
			c = C_FILE;
		else
			c = C_OTHER;
		for (int k = 0; k < NCAT; k++)
			cx[c][k] += l->xcat[k];
		cx[c][NCAT] += l->xfer;
		cx[c][NCAT + 1] += l->hitm;
	}
	if (o)
		for (int c = 0; c < NCLASS; c++)
			fprintf(o, "C %s xfer=%" PRIu64 " hitm=%" PRIu64 " lookup=%" PRIu64 " create=%" PRIu64
				   " close=%" PRIu64 " other=%" PRIu64 " init=%" PRIu64 " lock=%" PRIu64 "\n",
				class_names[c], cx[c][NCAT], cx[c][NCAT + 1], cx[c][0], cx[c][1], cx[c][2], cx[c][3],
				cx[c][4], cx[c][5]);
	if (o) {
		for (size_t i = 0; i < ntop; i++) {
			char name[128];
			name_line(top[i]->addr, name, sizeof(name));
			fprintf(o, "L %#" PRIx64 " %s xfer=%" PRIu64 " hitm=%" PRIu64 " rd=%" PRIu64 " wr=%" PRIu64
				   " lookup=%" PRIu64 " create=%" PRIu64 " close=%" PRIu64 " other=%" PRIu64
				   " init=%" PRIu64 " lock=%" PRIu64 "\n",
				top[i]->addr, name, top[i]->xfer, top[i]->hitm, top[i]->rd, top[i]->wr,
				top[i]->xcat[0], top[i]->xcat[1], top[i]->xcat[2], top[i]->xcat[3],
				top[i]->xcat[4], top[i]->xcat[5]);
		}
		fprintf(o, "E\n");
		fclose(o);
	}
	zero_window();
}

/* Read a NUL-terminated guest string, a page at a time: the part on the
 * next page is read only if the string goes on there (a label on the
 * guest's stack may straddle a page boundary). */
static void read_guest_string(struct vcpu *v, uint64_t addr, char *buf, size_t len)
{
	size_t got = 0;

	buf[0] = 0;
	while (got + 1 < len) {
		size_t n = len - 1 - got;
		uint64_t page_left = 4096 - ((addr + got) & 4095);
		if (n > page_left)
			n = page_left;
		g_byte_array_set_size(v->buf, 0);
		if (!qemu_plugin_read_memory_vaddr(addr + got, v->buf, n) || v->buf->len < n)
			break;
		memcpy(buf + got, v->buf->data, n);
		got += n;
		buf[got] = 0;
		if (memchr(buf + got - n, 0, n))
			break;
	}
	for (char *p = buf; *p; p++)
		if (*p == '\n')
			*p = ' ';
}

static void install_callbacks(void);

static void after_reset(qemu_plugin_id_t id)
{
	(void)id;
	/* All vCPUs are stopped here and every translation is gone: swap in
	 * the functions the guest added and instrument anew. */
	lock_all();
	free(fns);
	fns = staged;
	nfns = nstaged;
	staged = NULL;
	nstaged = 0;
	qsort(fns, nfns, sizeof(*fns), fn_cmp);
	unlock_all();
	install_callbacks();
}

static void on_hypercall(unsigned int vcpu, void *udata)
{
	struct vcpu *v = &vcpus[vcpu % MAX_VCPUS];
	uint64_t cmd = read_reg(v, v->rax);
	char s[256];
	(void)udata;

	switch (cmd) {
	case 1:
		lock_all();
		zero_window();
		window_open = 1;
		unlock_all();
		break;
	case 2:
		read_guest_string(v, read_reg(v, v->rdi), s, sizeof(s));
		lock_all();
		window_open = 0;
		close_window(s);
		unlock_all();
		break;
	case 3: {
		uint64_t st = read_reg(v, v->rdi), en = read_reg(v, v->rsi);
		read_guest_string(v, read_reg(v, v->rdx), s, sizeof(s));
		spin_lock(&meta_lock);
		if (add_fn(&staged, &nstaged, st, en, s) < 0) {
			char msg[300];
			snprintf(msg, sizeof(msg), "coherence: bad ADDFN '%s'\n", s);
			qemu_plugin_outs(msg);
		}
		spin_unlock(&meta_lock);
		break;
	}
	case 4:
		qemu_plugin_reset(plugin_id, after_reset);
		break;
	default:
		break;
	}
}

static bool is_stack_insn(const struct qemu_plugin_insn *insn)
{
	char *d = qemu_plugin_insn_disas(insn);
	bool stack = false;

	if (d) {
		const char *p = d;
		while (*p == ' ')
			p++;
		stack = !strncmp(p, "push", 4) || !strncmp(p, "pop", 3) || !strncmp(p, "call", 4) ||
			!strncmp(p, "ret", 3) || !strncmp(p, "leave", 5) || !strncmp(p, "enter", 5) ||
			strstr(p, "rsp") != NULL;
		g_free(d);
	}
	return stack;
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	(void)id;

	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t pc = qemu_plugin_insn_vaddr(insn);

		if (pc >= KERNEL_START) {
			struct fn *f = fn_at(pc);
			if (!f)
				continue;
			if (f->is_fd_install && pc == f->start)
				qemu_plugin_register_vcpu_insn_exec_cb(insn, on_fd_install_entry,
								       QEMU_PLUGIN_CB_R_REGS, NULL);
			if (f->is_fput && pc == f->start)
				qemu_plugin_register_vcpu_insn_exec_cb(insn, on_fput_entry, QEMU_PLUGIN_CB_R_REGS, NULL);
			if (f->cat == CAT_LOCK && pc == f->start)
				qemu_plugin_register_vcpu_insn_exec_cb(insn, on_lock_entry, QEMU_PLUGIN_CB_R_REGS, NULL);
			if (is_stack_insn(insn))
				continue;
			qemu_plugin_register_vcpu_mem_cb(insn, on_mem, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW,
							 (void *)(uintptr_t)(f - fns));
		} else if (qemu_plugin_insn_size(insn) == 3) {
			uint8_t b[3];
			if (qemu_plugin_insn_data(insn, b, 3) == 3 && b[0] == 0x48 && b[1] == 0x87 && b[2] == 0xc9)
				qemu_plugin_register_vcpu_insn_exec_cb(insn, on_hypercall, QEMU_PLUGIN_CB_R_REGS, NULL);
		}
	}
}

static struct qemu_plugin_register *find_reg(GArray *regs, const char *name)
{
	for (guint i = 0; i < regs->len; i++) {
		qemu_plugin_reg_descriptor *r = &g_array_index(regs, qemu_plugin_reg_descriptor, i);
		if (!strcmp(r->name, name))
			return r->handle;
	}
	return NULL;
}

static void on_vcpu_init(qemu_plugin_id_t id, unsigned int vcpu)
{
	struct vcpu *v = &vcpus[vcpu % MAX_VCPUS];
	GArray *regs = qemu_plugin_get_registers();
	(void)id;

	v->rax = find_reg(regs, "rax");
	v->rdi = find_reg(regs, "rdi");
	v->rsi = find_reg(regs, "rsi");
	v->rdx = find_reg(regs, "rdx");
	v->rsp = find_reg(regs, "rsp");
	if (!v->buf)
		v->buf = g_byte_array_new();
	if (!v->rax || !v->rdi || !v->rsi || !v->rdx || !v->rsp)
		qemu_plugin_outs("coherence: x86_64 registers rax/rdi/rsi/rdx/rsp not found\n");
	g_array_free(regs, TRUE);
}

static void on_exit_cb(qemu_plugin_id_t id, void *udata)
{
	(void)id;
	(void)udata;
	FILE *o = fopen(out_path, "a");
	if (o) {
		fprintf(o, "X lines=%" PRIu64 " dropped=%" PRIu64 " tables=%u fns=%zu\n", lines_used, lines_dropped,
			ntables, nfns);
		fclose(o);
	}
}

static void install_callbacks(void)
{
	qemu_plugin_register_vcpu_tb_trans_cb(plugin_id, on_tb_trans);
	qemu_plugin_register_atexit_cb(plugin_id, on_exit_cb, NULL);
}

static int load_syms(const char *path)
{
	FILE *f = fopen(path, "r");
	char l[256], cat[16], name[64], both[96];
	uint64_t s, e;

	if (!f)
		return -1;
	while (fgets(l, sizeof(l), f)) {
		if (sscanf(l, "%" SCNx64 " %" SCNx64 " %15s %63s", &s, &e, cat, name) != 4)
			continue;
		snprintf(both, sizeof(both), "%s %s", cat, name);
		if (add_fn(&fns, &nfns, s, e, both) < 0) {
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	qsort(fns, nfns, sizeof(*fns), fn_cmp);
	return 0;
}

CP_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	plugin_id = id;
	if (!info->system_emulation || strcmp(info->target_name, "x86_64")) {
		qemu_plugin_outs("coherence: needs qemu-system-x86_64\n");
		return -1;
	}
	if (info->system.max_vcpus > MAX_VCPUS) {
		qemu_plugin_outs("coherence: at most 64 vCPUs\n");
		return -1;
	}
	for (int i = 0; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		if (!eq) {
			fprintf(stderr, "coherence: bad argument '%s'\n", argv[i]);
			return -1;
		}
		*eq = 0;
		const char *k = argv[i], *val = eq + 1;
		if (!strcmp(k, "out")) {
			out_path = val;
		} else if (!strcmp(k, "syms")) {
			if (load_syms(val) < 0) {
				fprintf(stderr, "coherence: cannot read symbols from %s\n", val);
				return -1;
			}
		} else if (!strcmp(k, "fdarray_off")) {
			fdarray_off = strtoull(val, NULL, 0);
		} else if (!strcmp(k, "gen_off")) {
			gen_off = strtoull(val, NULL, 0);
		} else if (!strcmp(k, "fdt_off")) {
			fdt_off = strtoull(val, NULL, 0);
		} else if (!strcmp(k, "gen_n")) {
			gen_n = strtoull(val, NULL, 0);
		} else if (!strcmp(k, "fdt_gen_off")) {
			fdt_gen_off = strtoull(val, NULL, 0);
		} else {
			fprintf(stderr, "coherence: unknown argument '%s'\n", k);
			return -1;
		}
	}
	if (!out_path) {
		fprintf(stderr, "coherence: out=FILE is required\n");
		return -1;
	}
	lines = calloc(LINE_SLOTS, sizeof(*lines));
	if (!lines)
		return -1;
	qemu_plugin_register_vcpu_init_cb(id, on_vcpu_init);
	install_callbacks();
	return 0;
}
