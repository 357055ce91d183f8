/* SPDX-License-Identifier: MIT */
/*
 * Start-up, per-thread range assignment and RLIMIT_NOFILE tracking.
 *
 * Initialisation may run from the constructor, or earlier from a wrapper
 * called by another library's constructor, in any thread, even in a signal
 * handler: it takes no lock (a CAS elects one initialiser; everyone else
 * passes through until it is done), does not allocate and uses no stdio.
 */
#include "state.h"
#include "geometry.h"
#include "pregrow.h"
#include "shm_stats.h"
#include "strbuf.h"
#include "sys.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <unistd.h>

struct fdr_state fdr_st FDR_HIDDEN;

/* initial-exec: the general TLS model may call malloc on first access. */
static __thread unsigned thread_slot __attribute__((tls_model("initial-exec")));

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
	long ret = SYS_CALL(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl);

	*soft = rl.rlim_cur;
	return ret < 0 ? ret : 0;
}

static unsigned long read_limit(void)
{
	unsigned long soft;

	return read_limit_raw(&soft) < 0 ? 1024 : soft;
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
}

/* The child of fork() is a new process: its report counts its own fds. */
static void atfork_child(void)
{
	/* First: the child must stop writing the parent's stats block. */
	fdr_shm_atfork_child();
	for (unsigned i = 0; i < fdr_st.cfg.slots; i++) {
		struct fdr_range_stats *rs = fdr_rs(i);
		unsigned long threads = rs->threads;

		__builtin_memset(rs, 0, sizeof(*rs));
		rs->threads = threads;
	}
	fdr_st.limit_changes = 0;
}

void fdr_init(void)
{
	int expected = FDR_UNINIT, saved_errno;
	char msg[256];

	if (!__atomic_compare_exchange_n(&fdr_st.phase, &expected, FDR_BUSY, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	/* Called from a wrapper after a successful call, whose caller must
	 * find errno as it was: sysconf() and getauxval() may set it. */
	saved_errno = errno;

	fdr_st.secure = getauxval(AT_SECURE) != 0;
	if (fdr_st.secure) {
		/* Set-id programs must not be steered by the environment. */
		fdr_config_defaults(&fdr_st.cfg, 1);
		fdr_st.active = false;
	} else if (fdr_config_load(&fdr_st.cfg, sysconf(_SC_NPROCESSORS_ONLN), env_get,
				   NULL, msg, sizeof(msg)) < 0) {
		config_error(msg);
		fdr_config_defaults(&fdr_st.cfg, sysconf(_SC_NPROCESSORS_ONLN));
		fdr_st.config_error = true;
		fdr_st.active = false;
	} else {
		fdr_st.active = !fdr_st.cfg.disable;
	}
	fdr_st.nr_open = read_nr_open();
	fdr_st.limit = read_limit();
	fdr_st.width = fdr_geom_width(&fdr_st.cfg, fdr_st.limit, fdr_st.nr_open);
	if (fdr_st.active) {
		pthread_atfork(NULL, NULL, atfork_child);
		fdr_pregrow();  /* before the program can start threads */
	}
	__atomic_store_n(&fdr_st.phase, FDR_READY, __ATOMIC_RELEASE);
	errno = saved_errno;
}

unsigned fdr_thread_slot(void)
{
	unsigned s = thread_slot;

	if (__builtin_expect(s != 0, 1))
		return s - 1;
	s = __atomic_fetch_add(&fdr_st.next_thread, 1, __ATOMIC_RELAXED) % fdr_st.cfg.slots;
	fdr_count(&fdr_rs(s)->threads);
	thread_slot = s + 1;
	return s;
}

void fdr_limit_changed(unsigned long soft)
{
	if (__atomic_load_n(&fdr_st.phase, __ATOMIC_ACQUIRE) != FDR_READY)
		return;
	/*
	 * Threads setting the limit at once may store in the opposite order
	 * of their syscalls and leave the geometry of an older limit behind.
	 * So each one checks, after its store, that the kernel still has the
	 * limit it stored, and stores again if not: whoever stores last has
	 * checked after storing, so the geometry ends at the kernel's limit.
	 * One more prlimit64 per setrlimit call, none per placed fd.
	 */
	for (;;) {
		unsigned long now;

		__atomic_store_n(&fdr_st.limit, soft, __ATOMIC_SEQ_CST);
		__atomic_store_n(&fdr_st.width, fdr_geom_width(&fdr_st.cfg, soft, fdr_st.nr_open),
				 __ATOMIC_SEQ_CST);
		if (read_limit_raw(&now) < 0 || now == soft)
			break;
		soft = now;
	}
	fdr_count(&fdr_st.limit_changes);
	fdr_shm_geometry();
}

__attribute__((constructor)) static void fdr_constructor(void)
{
	fdr_init();
}
