/* SPDX-License-Identifier: MIT */
/*
 * Start-up and shutdown, in one visible order, and RLIMIT_NOFILE tracking.
 *
 * fdr_init() may run from our constructor, or earlier from a wrapper called
 * by another library's constructor, in any thread, even in a signal
 * handler: it takes no lock (a CAS elects one initialiser; everyone else
 * passes through until it is done), does not allocate and uses no stdio.
 * What needs a normal context (dlsym, pthread_atfork: both may lock and
 * allocate) runs only in the constructor, which the dynamic linker calls
 * in one, before main(); until then a fork child would simply keep writing
 * its parent's block, and nothing forks that early but other libraries'
 * constructors.  Our prepare handler, registered last, runs first.
 *
 * Shutdown is one destructor: the exit report, only when FDRANGE_STATS asks
 * for one.  Otherwise the library makes no syscall at exit; the block needs
 * no removal (blockmap.c).
 *
 * The very first step reads /proc/self/status: under a seccomp filter
 * inherited at exec nothing else is done at all (sandbox.c).
 */
#include "state.h"
#include "blockmap.h"
#include "envcheck.h"
#include "geometry.h"
#include "owners.h"
#include "krange.h"
#include "pregrow.h"
#include "proc.h"
#include "real.h"
#include "sandbox.h"
#include "status.h"
#include "strbuf.h"
#include "sys.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <unistd.h>

extern char **environ;

static const char *env_get(const char *name, void *arg)
{
	(void)arg;
	return getenv(name);
}

static unsigned long read_nr_open(void)
{
	char buf[32];
	unsigned long v = 0;
	long fd, n, i;

	fd = sys_openat(AT_FDCWD, "/proc/sys/fs/nr_open", O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return FDR_MAX_FD;
	n = sys_read((int)fd, buf, sizeof(buf) - 1);
	sys_close((int)fd);
	for (i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
		v = v * 10 + (unsigned long)(buf[i] - '0');
	return v ? v : FDR_MAX_FD;
}

/* The soft RLIMIT_NOFILE in force, or -errno. */
static long read_limit_raw(unsigned long *soft)
{
	struct rlimit rl = { 0, 0 };
	long ret = SYS_CALL(SYS_prlimit64, 0, RLIMIT_NOFILE, 0L, &rl);

	*soft = rl.rlim_cur;
	return ret < 0 ? ret : 0;
}

static void set_limit(unsigned long soft)
{
	__atomic_store_n(&fdr_st.limit, soft, __ATOMIC_SEQ_CST);
	__atomic_store_n(&fdr_st.cap, fdr_geom_cap(soft, fdr_st.nr_open), __ATOMIC_SEQ_CST);
}

static void config_error(const char *msg)
{
	char mem[512];
	struct strbuf sb;

	sb_init(&sb, mem, sizeof(mem), 2);
	sb_str(&sb, "libfdrange: ");
	sb_str(&sb, msg);
	sb_str(&sb, "; passing all calls through\n");
	sb_flush(&sb);
	sb_init(&sb, fdr_st.why_msg, sizeof(fdr_st.why_msg), -1);
	sb_str(&sb, msg);
}

/*
 * A process whose status cannot be read may be sandboxed, and we would not
 * know: the library then stays out of its way (no block, no placement),
 * the direction that harms nothing.
 */
static void read_status(void)
{
	/* Any failure, a full table included (a late start from another
	 * library's constructor can meet one): what the file would have said
	 * is unknown, and a filter inherited at exec may be in force. */
	if (fdr_status_read() < 0) {
		fdr_st.sandboxed = true;
		return;
	}
	if (fdr_sandbox_in_status()) {
		fdr_st.sandboxed = true;
		fdr_st.why = FDR_WHY_SECCOMP;
	}
}

/* The settings, or pass-through with one line on stderr. */
static void load_config(void)
{
	char msg[256];
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	fdr_st.ncpus = n < 1 ? 1 : n > (long)FDR_ROT_MAX ? FDR_ROT_MAX : (unsigned)n;
	fdr_st.secure = getauxval(AT_SECURE) != 0;
	if (fdr_st.secure) {
		/*
		 * Set-id programs must not be steered by the environment, and
		 * are not placed at all: nobody asked for the library on their
		 * behalf.  The block says so, for fdrange stat.
		 */
		fdr_config_defaults(&fdr_st.cfg);
		fdr_st.why = FDR_WHY_SECURE;
		return;
	}
	/* A misspelt name is the same A/B mistake as a bad value. */
	if (fdr_env_check(environ, msg, sizeof(msg)) < 0 ||
	    fdr_config_load(&fdr_st.cfg, env_get, NULL, msg, sizeof(msg)) < 0) {
		config_error(msg);
		fdr_config_defaults(&fdr_st.cfg);
		fdr_st.why = FDR_WHY_CONFIG;
		return;
	}
	if (fdr_st.cfg.disable)
		fdr_st.why = FDR_WHY_DISABLED;
	/* A filter installed by another library's constructor, before us. */
	fdr_st.active = !fdr_st.cfg.disable && !__atomic_load_n(&fdr_st.sandboxed, __ATOMIC_SEQ_CST);
}

static void read_limits(void)
{
	unsigned long soft;

	fdr_st.nr_open = read_nr_open();
	set_limit(read_limit_raw(&soft) < 0 ? 1024 : soft);
}

static void start_process(void)
{
	/* Without the page a _Fork() or clone() child would write our block. */
	fdr_proc_start();
}

/* Also when passing through: the block says why, for `fdrange stat`. */
static void make_block(void)
{
	if (fdr_block_create() < 0)
		fdr_st.active = false;
}

static void start_owners(void)
{
	if (fdr_st.active)
		fdr_owners_init();
}

/* Before the program can start threads: every thread then sees the same. */
static void probe_kernel(void)
{
	struct fdr_blk_hdr *h = __atomic_load_n(&fdr_p->hdr, __ATOMIC_ACQUIRE);

	fdr_st.kernel_range = fdr_krange_probe(&fdr_st.kernel_groups);
	if (h)
		__atomic_store_n(&h->kernel_range, fdr_st.kernel_range, __ATOMIC_RELAXED);
}

static void grow_table(void)
{
	if (fdr_st.active)  /* before the program can start threads */
		fdr_pregrow();
}

/*
 * Start-up, in order.  Each step needs the ones before it: the block is
 * sized by fs.nr_open and laid out by the settings, and its words live in
 * this process's page; the thread-exit hook gives chunks back; growing the
 * table needs the limit and the status read first.
 */
static void (*const startup[])(void) = {
	load_config,
	read_limits,
	start_process,
	make_block,
	start_owners,
	probe_kernel,
	grow_table,
};

void fdr_init(void)
{
	int expected = FDR_UNINIT, saved_errno;

	if (!__atomic_compare_exchange_n(&fdr_st.phase, &expected, FDR_BUSY, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	/* Called from a wrapper after a successful call, whose caller must
	 * find errno as it was: sysconf() and getauxval() may set it. */
	saved_errno = errno;
	/* A library loaded before us may have installed a filter (through
	 * our prctl or seccomp wrapper) from its constructor: not one more
	 * syscall then, not even the read of the status. */
	if (!__atomic_load_n(&fdr_st.sandboxed, __ATOMIC_SEQ_CST))
		read_status();
	for (unsigned i = 0; i < sizeof(startup) / sizeof(startup[0]) && !fdr_st.sandboxed; i++)
		startup[i]();
	__atomic_store_n(&fdr_st.phase, FDR_READY, __ATOMIC_RELEASE);
	errno = saved_errno;
}

void fdr_limit_changed(unsigned long soft)
{
	if (__atomic_load_n(&fdr_st.phase, __ATOMIC_ACQUIRE) != FDR_READY)
		return;
	/*
	 * Threads setting the limit at once may store in the opposite order
	 * of their syscalls and leave the cap of an older limit behind.  So
	 * each one checks, after its store, that the kernel still has the
	 * limit it stored, and stores again if not: whoever stores last has
	 * checked after storing, so the cap ends at the kernel's limit.
	 * One more prlimit64 per setrlimit call, none per placed fd.
	 */
	if (!__atomic_load_n(&fdr_st.active, __ATOMIC_SEQ_CST)) {
		/* Nothing is placed: no syscall to check the store order. */
		set_limit(soft);
		fdr_block_geometry();
		return;
	}
	for (;;) {
		unsigned long now;

		set_limit(soft);
		if (read_limit_raw(&now) < 0 || now == soft)
			break;
		soft = now;
	}
	if (fdr_p->hdr)
		fdr_count(&fdr_p->hdr->limit_changes);
	fdr_block_geometry();
}

/*
 * fork(): while it runs, fds made in this thread (by other libraries' fork
 * handlers) pass through.  The child is a new process with one thread: its
 * page (proc.c) says so, it makes its own block at its first placement, so
 * that inside fork the library makes no syscall at all.  The handlers only
 * make that exact: children of _Fork() and clone() get there without them.
 */
static void atfork_prepare(void)
{
	fdr_t.forking = 1;
}

static void atfork_parent(void)
{
	fdr_t.forking = 0;
}

static void atfork_child(void)
{
	fdr_proc_atfork_child();
	fdr_t.forking = 0;
}

/* The steps that need a normal context; see the top of this file. */
__attribute__((constructor(101))) static void fdr_constructor(void)
{
	fdr_resolve(FDR_SYM_accept);  /* every libc symbol at once: no dlsym later */
	fdr_init();
	if (fdr_st.active)
		pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

__attribute__((destructor)) static void fdr_destructor(void)
{
	fdr_report_at_exit();
}
