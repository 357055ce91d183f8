/* SPDX-License-Identifier: MIT */
/*
 * fdrange profile PID... | -- COMMAND | --perf-data FILE: the share of a
 * process's CPU in each fd path (profile_funcs.c says which functions and
 * why), per process and per thread, and one line saying what placement
 * could save.
 *
 * The sampler is perf_event_open(2) itself, so nothing beyond the kernel is
 * needed: a cpu-clock software event per thread (no hardware counters, so
 * it works in VMs), kernel call stacks only (the kernel's own unwinder: no
 * frame pointers or debug information of the program are needed), kernel
 * symbols from /proc/kallsyms.  --perf-data reads a perf(1) recording
 * through `perf script` instead, so that both tools can be run on the very
 * same samples (test/profile/profile_agrees_with_perf_report.sh).
 */
#include "profile.h"
#include "stat.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Exit statuses (fdrange-profile(1)). */
#define PX_OK 0
#define PX_FAIL 1       /* nothing profiled: no such process, no perf events, no samples */
#define PX_USAGE 2
#define PX_PERM 3       /* not allowed to sample, or kernel addresses hidden */
#define PX_PARTIAL 4    /* a process exited while sampled: its part is marked */

#define MAX_PIDS 64
#define RING_PAGES 64           /* 256 KiB per thread: 1 s of samples at 4 kHz with deep stacks */
#define POLL_MS 100             /* how often rings are drained and new threads looked for */
#define MIN_SAMPLES 200         /* below this no share is worth a sentence */

static const char *prog = "fdrange profile";

struct thread {
	int tid;
	char comm[32];
	unsigned long n[PF_NCAT];
	int fd;                 /* the event, or -1 once closed */
	void *ring;
	bool skipped;           /* found mid-run with no fd or buffer left for it */
};

struct target {
	int pid;
	char comm[32];
	bool gone;              /* exited while sampled */
	bool skipped;           /* not running when sampling began: not sampled */
	double gone_after;      /* seconds into the run */
	unsigned long n[PF_NCAT];
	unsigned long fn[64];   /* samples per pf_funcs entry */
	unsigned long lost;
	unsigned unsampled;     /* threads skipped, see thread.skipped */
	bool scanned;           /* its threads were listed once */
	struct thread *t;
	unsigned nt, capt;
};

static struct target targets[MAX_PIDS];
static unsigned ntargets;
static struct pf_syms syms;
static long page_size;
static unsigned hz = 1999;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

/*
 * Stop our command after a signal stopped the sampling: it must not outlive
 * fdrange.  SIGTERM first, SIGKILL after 5 s for one that ignores it.
 */
static void stop_child(int child, int *status)
{
	for (int i = 0; i < 50; i++) {
		pid_t r = waitpid(child, status, WNOHANG);

		if (r == child || (r < 0 && errno == ECHILD))
			return;
		if (i == 0)
			kill(child, SIGTERM);
		poll(NULL, 0, 100);
	}
	kill(child, SIGKILL);
	waitpid(child, status, 0);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void read_comm(int pid, int tid, char *out, size_t len)
{
	char path[64];
	FILE *f;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(out, (int)len, f))
			out[strcspn(out, "\n")] = 0;
		fclose(f);
	}
}

static struct thread *thread_of(struct target *tg, int tid)
{
	for (unsigned i = 0; i < tg->nt; i++)
		if (tg->t[i].tid == tid)
			return &tg->t[i];
	if (tg->nt == tg->capt) {
		unsigned cap = tg->capt ? tg->capt * 2 : 16;
		struct thread *p = realloc(tg->t, cap * sizeof(*p));

		if (!p)
			return NULL;
		tg->t = p;
		tg->capt = cap;
	}
	memset(&tg->t[tg->nt], 0, sizeof(tg->t[0]));
	tg->t[tg->nt].tid = tid;
	tg->t[tg->nt].fd = -1;
	return &tg->t[tg->nt++];
}

/* One sample's kernel call stack, as function indexes of the table. */
static void count_sample(struct target *tg, int tid, bool kernel, const uint64_t *ips, unsigned nips)
{
	int chain[128], leaf = -1, func;
	unsigned n = 0;
	enum pf_cat c;
	struct thread *t;

	for (unsigned i = 0; i < nips && n < 128; i++) {
		if (ips[i] >= (uint64_t)PERF_CONTEXT_MAX)
			continue;       /* a context marker, not an address */
		chain[n++] = pf_syms_find(&syms, ips[i]);
	}
	if (n)
		leaf = chain[0];
	c = pf_classify(leaf, kernel, n ? chain + 1 : chain, n ? n - 1 : 0, &func);
	tg->n[c]++;
	if (func >= 0 && c != PF_KERNEL)
		tg->fn[func]++;
	t = thread_of(tg, tid);
	if (t)
		t->n[c]++;
}

/* ---- the sampler ---- */

static int perf_open(int tid, bool on_exec)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.freq = 1;
	a.sample_freq = hz;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
	/* The program's own stack would need its frame pointers or DWARF;
	 * which fd path a sample is in, the kernel's stack alone says. */
	a.exclude_callchain_user = 1;
	a.disabled = on_exec;
	a.enable_on_exec = on_exec;
	return (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* The line for a refused perf_event_open (errno @err) on @pid. */
static void perm_message(char *buf, size_t len, int pid, int err)
{
	long paranoid = pf_read_long("/proc/sys/kernel/perf_event_paranoid");
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", pid);
	if (err == ENOENT || err == ENOSYS || err == EOPNOTSUPP) {
		snprintf(buf, len, "this kernel offers no perf events (perf_event_open: %s); "
			 "it needs CONFIG_PERF_EVENTS", strerror(err));
	} else if (geteuid() != 0 && paranoid > 1) {
		snprintf(buf, len, "not allowed to sample kernel call stacks: kernel.perf_event_paranoid "
			 "is %ld, which allows it only with CAP_PERFMON; run as root, or 'sudo sysctl "
			 "kernel.perf_event_paranoid=1' (kernel-wide; not setcap on fdrange itself, which runs "
			 "any command: give CAP_PERFMON only to a copy used just for profiling)", paranoid);
	} else if (geteuid() != 0 && stat(path, &st) == 0 && st.st_uid != geteuid()) {
		snprintf(buf, len, "not allowed to sample pid %d: it belongs to uid %u; run as that "
			 "user or as root (or with CAP_PERFMON)", pid, (unsigned)st.st_uid);
	} else {
		snprintf(buf, len, "perf_event_open is refused (%s) although kernel.perf_event_paranoid "
			 "is %ld: a container or seccomp policy blocks it; allow perf_event_open there "
			 "(docker: --cap-add PERFMON and a seccomp profile that permits it) or run "
			 "fdrange profile on the host", strerror(err), paranoid);
	}
}

/* Drain @t's ring into @tg. */
static void drain(struct target *tg, struct thread *t)
{
	static unsigned char rec[65536];
	struct perf_event_mmap_page *mp = t->ring;
	unsigned char *data;
	uint64_t head, tail, size;

	if (!mp)
		return;
	data = (unsigned char *)mp + page_size;
	size = (uint64_t)RING_PAGES * (uint64_t)page_size;
	head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	tail = mp->data_tail;
	while (tail < head) {
		struct perf_event_header h;
		uint64_t off = tail % size;

		for (size_t i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(off + i) % size];
		if (h.size < sizeof(h) || h.size > head - tail)
			break;
		for (size_t i = 0; i < h.size; i++)
			rec[i] = data[(off + i) % size];
		if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + 24) {
			uint64_t ip, nr;
			uint32_t pt[2];

			memcpy(&ip, rec + sizeof(h), 8);
			memcpy(pt, rec + sizeof(h) + 8, 8);
			memcpy(&nr, rec + sizeof(h) + 16, 8);
			if (sizeof(h) + 24 + nr * 8 <= h.size) {
				uint64_t *ips = (uint64_t *)(void *)(rec + sizeof(h) + 24);
				unsigned mode = h.misc & PERF_RECORD_MISC_CPUMODE_MASK;

				(void)ip;
				count_sample(tg, (int)pt[1], mode == PERF_RECORD_MISC_KERNEL,
					     ips, (unsigned)nr);
			}
		} else if (h.type == PERF_RECORD_LOST && h.size >= sizeof(h) + 16) {
			uint64_t lost;

			memcpy(&lost, rec + sizeof(h) + 8, 8);
			tg->lost += lost;
		}
		tail += h.size;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
}

static void close_thread(struct thread *t)
{
	if (t->ring)
		munmap(t->ring, (size_t)(RING_PAGES + 1) * (size_t)page_size);
	if (t->fd >= 0)
		close(t->fd);
	t->ring = NULL;
	t->fd = -1;
}

/*
 * Open an event on @tid of @tg.  0; -1 when the thread is gone (ESRCH);
 * otherwise exits with the reason.
 */
static int attach(struct target *tg, int tid, bool on_exec, bool json)
{
	struct thread *t = thread_of(tg, tid);
	int fd;

	if (!t) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(PX_FAIL);
	}
	if (t->fd >= 0 || t->ring || t->skipped)
		return 0;
	fd = perf_open(tid, on_exec);
	if (fd < 0) {
		int err = errno, rc;
		char msg[512];

		if (err == ESRCH)
			return -1;
		/*
		 * A thread started mid-run costs the run its part, not the
		 * samples of the threads already followed.
		 */
		if ((err == EMFILE || err == ENFILE) && tg->scanned) {
			t->skipped = true;
			tg->unsampled++;
			return 0;
		}
		if (err == EMFILE || err == ENFILE) {
			snprintf(msg, sizeof(msg), "no fd left for thread %d's event (%s): raise "
				 "'ulimit -n' (one fd per thread sampled)", tid, strerror(err));
			rc = PX_FAIL;
		} else {
			perm_message(msg, sizeof(msg), tg->pid, err);
			rc = (err == ENOENT || err == ENOSYS || err == EOPNOTSUPP) ? PX_FAIL : PX_PERM;
		}
		if (json) {
			printf("{\"schema\": \"fdrange-profile/1\", \"error\": ");
			st_json_str(stdout, msg, strlen(msg));
			printf("}\n");
		} else {
			fprintf(stderr, "%s: %s\n", prog, msg);
		}
		exit(rc);
	}
	t->ring = mmap(NULL, (size_t)(RING_PAGES + 1) * (size_t)page_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, fd, 0);
	if (t->ring == MAP_FAILED) {
		t->ring = NULL;
		if (tg->scanned) {
			close(fd);
			t->skipped = true;
			tg->unsampled++;
			return 0;
		}
		/* Locked-memory limit (perf_event_mlock_kb) reached: say so. */
		fprintf(stderr, "%s: cannot map the sample buffer of thread %d: %s (raise "
			"kernel.perf_event_mlock_kb, or sample fewer threads)\n", prog, tid,
			strerror(errno));
		close(fd);
		t->ring = NULL;
		exit(PX_FAIL);
	}
	t->fd = fd;
	read_comm(tg->pid, tid, t->comm, sizeof(t->comm));
	return 0;
}

/* Open events on the threads of @tg not yet sampled.  Number of threads seen. */
static unsigned scan_threads(struct target *tg, bool json)
{
	char path[64];
	DIR *d;
	struct dirent *e;
	unsigned seen = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", tg->pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);

		if (*end || tid <= 0)
			continue;
		seen++;
		(void)attach(tg, (int)tid, false, json);
	}
	closedir(d);
	tg->scanned = true;
	return seen;
}

static bool alive(int pid)
{
	char path[64], state = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	/* A zombie has no threads left to sample. */
	if (fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
		state = 'Z';
	fclose(f);
	return state != 'Z' && state != 'X';
}

static void drain_all(void)
{
	for (unsigned i = 0; i < ntargets; i++)
		for (unsigned j = 0; j < targets[i].nt; j++)
			drain(&targets[i], &targets[i].t[j]);
}

/*
 * Sample every target for @seconds (0: until @child exits or a signal).
 * @child: the pid of a command started by us, or 0.
 */
static void sample(double seconds, int child, int *child_status, bool json)
{
	double t0 = now_s();

	/* A command's event starts at its exec (enable_on_exec), not here. */
	for (unsigned i = 0; i < ntargets && !child; i++)
		for (unsigned j = 0; j < targets[i].nt; j++)
			if (targets[i].t[j].fd >= 0)
				ioctl(targets[i].t[j].fd, PERF_EVENT_IOC_ENABLE, 0);
	while (!stop) {
		bool any = false;

		poll(NULL, 0, POLL_MS);
		drain_all();
		for (unsigned i = 0; i < ntargets; i++) {
			struct target *tg = &targets[i];

			if (tg->gone)
				continue;
			if (child ? false : !alive(tg->pid)) {
				tg->gone = true;
				tg->gone_after = now_s() - t0;
				continue;
			}
			any = true;
			scan_threads(tg, json);
		}
		if (child) {
			int st;

			if (waitpid(child, &st, WNOHANG) == child) {
				*child_status = st;
				targets[0].gone_after = now_s() - t0;
				break;
			}
			any = true;
		}
		if (!any || (seconds > 0 && now_s() - t0 >= seconds))
			break;
	}
	drain_all();
	for (unsigned i = 0; i < ntargets; i++) {
		struct target *tg = &targets[i];

		if (!tg->gone && !child)
			tg->gone_after = now_s() - t0;
		for (unsigned j = 0; j < tg->nt; j++) {
			if (!child && tg->t[j].fd >= 0)
				read_comm(tg->pid, tg->t[j].tid, tg->t[j].comm, sizeof(tg->t[j].comm));
			close_thread(&tg->t[j]);
		}
		if (!child && !tg->skipped)
			read_comm(tg->pid, 0, tg->comm, sizeof(tg->comm));
	}
}

/* ---- perf(1) data ---- */

/*
 * `perf script -F comm,tid,ip,sym` prints, per sample, a line "COMM TID"
 * then one line "\tADDR SYMBOL" per frame, leaf first, then a blank line.
 */
static int read_perf_data(const char *file, bool json)
{
	char line[1024];
	FILE *p;
	int fds[2], st;
	pid_t perf;
	uint64_t ips[128];
	unsigned nips = 0;
	int tid = -1, lines = 0;
	struct target *tg = &targets[0];
	int names[128];
	bool have = false;
	FILE *errf;

	(void)json;
	if (access(file, R_OK) != 0) {
		fprintf(stderr, "%s: --perf-data: cannot read '%s': %s\n", prog, file, strerror(errno));
		return PX_USAGE;
	}
	/*
	 * perf's warnings go to a file, not into the stream parsed (a line of
	 * them could read as a sample), and are shown only when perf fails.
	 */
	errf = tmpfile();
	if (pipe2(fds, O_CLOEXEC) < 0 || (perf = fork()) < 0) {
		fprintf(stderr, "%s: cannot run perf: %s\n", prog, strerror(errno));
		if (errf)
			fclose(errf);
		return PX_FAIL;
	}
	if (perf == 0) {
		dup2(fds[1], 1);
		if (errf)
			dup2(fileno(errf), 2);
		execlp("perf", "perf", "script", "-i", file, "-F", "comm,tid,ip,sym", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	p = fdopen(fds[0], "r");
	if (!p) {
		close(fds[0]);
		waitpid(perf, NULL, 0);
		if (errf)
			fclose(errf);
		fprintf(stderr, "%s: out of memory\n", prog);
		return PX_FAIL;
	}
	ntargets = 1;
	snprintf(tg->comm, sizeof(tg->comm), "%s", file);
	for (;;) {
		bool eof = !fgets(line, sizeof(line), p);

		if (!eof)
			lines++;
		if (eof || line[0] == '\n' || (line[0] != '\t' && line[0] != ' ')) {
			if (have) {
				/* Resolve with perf's names: the same as perf report's. */
				int func, leaf = nips ? names[0] : -1;
				enum pf_cat c = pf_classify(leaf, nips && ips[0] >= 0xffff800000000000ull,
							    names + 1, nips ? nips - 1 : 0, &func);
				struct thread *t = thread_of(tg, tid);

				tg->n[c]++;
				if (func >= 0 && c != PF_KERNEL)
					tg->fn[func]++;
				if (t)
					t->n[c]++;
				have = false;
			}
			if (eof)
				break;
			if (line[0] != '\n') {
				char *sp;

				line[strcspn(line, "\n")] = 0;
				while ((sp = line + strlen(line)) > line && sp[-1] == ' ')
					sp[-1] = 0;
				sp = strrchr(line, ' ');
				if (sp) {
					char *end;
					long v;

					errno = 0;
					v = strtol(sp + 1, &end, 10);
					tid = (errno || end == sp + 1 || v < 0 || v > INT_MAX) ? -1 : (int)v;
				}
				if (!sp || tid < 0) {
					fclose(p);
					waitpid(perf, NULL, 0);
					fprintf(stderr, "%s: --perf-data: perf script printed '%.80s', "
						"expected 'COMM TID' (a recording made with 'perf record -g')\n",
						prog, line);
					return PX_FAIL;
				}
				have = true;
				nips = 0;
				if (tg->pid == 0) {
					tg->pid = tid;
					snprintf(tg->comm, sizeof(tg->comm), "%.*s", (int)(sp - line), line);
				}
				{
					struct thread *t = thread_of(tg, tid);

					if (t && !t->comm[0])
						snprintf(t->comm, sizeof(t->comm), "%.*s", (int)(sp - line), line);
				}
			}
			continue;
		}
		if (have && nips < 128) {
			char *at = line + strspn(line, " \t"), *end;
			unsigned long long a;

			errno = 0;
			a = strtoull(at, &end, 16);
			if (!errno && end != at) {
				char *sym = end + strspn(end, " ");

				sym[strcspn(sym, " \n")] = 0;
				ips[nips] = a;
				names[nips] = pf_func_by_name(sym);
				nips++;
			}
		}
	}
	fclose(p);
	if (waitpid(perf, &st, 0) != perf || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || !tg->pid) {
		if (errf) {
			rewind(errf);
			while (fgets(line, sizeof(line), errf))
				fprintf(stderr, "perf: %s", line);
			fclose(errf);
		}
		fprintf(stderr, "%s: --perf-data: 'perf script -i %s' failed or found no samples "
			"(is perf installed, and was it recorded with -g?)\n", prog, file);
		return PX_FAIL;
	}
	(void)lines;
	if (errf)
		fclose(errf);
	return PX_OK;
}

/* ---- the report ---- */

static unsigned long counted(const unsigned long *n)
{
	unsigned long s = 0;

	for (unsigned c = 0; c < PF_NCAT; c++)
		if (c != PF_VIRT)
			s += n[c];
	return s;
}

static double pct(unsigned long x, unsigned long of)
{
	return of ? 100.0 * (double)x / (double)of : 0;
}

/* The line a user can act on. */
static void advice(char *buf, size_t len, const struct target *tg)
{
	unsigned long all = counted(tg->n);
	double l = pct(tg->n[PF_LOOKUP], all), c = pct(tg->n[PF_CREATE], all);
	double k = pct(tg->n[PF_CLOSE], all), w = pct(tg->n[PF_LOCKWAIT], all);
	char head[160];

	snprintf(head, sizeof(head), "fd paths %.1f%% of CPU (lookups %.1f%%, create %.1f%%, "
		 "close %.1f%%, lock wait %.1f%%)", l + c + k + w, l, c, k, w);
	if (all < MIN_SAMPLES)
		snprintf(buf, len, "%s, from only %lu samples: too few to say; sample longer "
			 "(--seconds) while the process is under load", head, all);
	else if (w >= 1.0 && w >= l)
		snprintf(buf, len, "%s: threads wait for the fd table's lock; placement cannot remove "
			 "that lock (each fd it moves costs two more acquisitions), so expect no gain "
			 "from libfdrange here: fewer fds opened and closed per second, or a table per "
			 "thread, would", head);
	else if (l < 0.5)
		snprintf(buf, len, "%s: the most placement can save here is about %.1f%%: too little "
			 "to be worth deploying libfdrange for", head, l);
	else
		snprintf(buf, len, "%s: the most placement can save here is about %.1f%% (the "
			 "lookups, if all of it were cache misses it removes); measure it with 'fdrange "
			 "ab'", head, l);
}

static void missing_list(char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (unsigned i = 0; i < pf_nfuncs && n + 2 < len; i++) {
		if (!pf_absent(&syms, i))
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " " : "", pf_funcs[i].name);
		if (n >= len)
			n = len - 1;
	}
}

static void print_fn_list(FILE *f, const struct target *tg, int cat, unsigned long all)
{
	bool first = true;

	for (unsigned i = 0; i < pf_nfuncs; i++) {
		int c = pf_funcs[i].cat == PF_SPIN ? PF_LOCKWAIT : pf_funcs[i].cat;

		if (c != cat || !tg->fn[i])
			continue;
		fprintf(f, "%s%s %.2f%%", first ? "   " : ", ", pf_funcs[i].name, pct(tg->fn[i], all));
		first = false;
	}
}

static void report_text(const char *how, bool from_perf)
{
	char buf[1024];

	for (unsigned i = 0; i < ntargets; i++) {
		struct target *tg = &targets[i];
		unsigned long all = counted(tg->n), total = all + tg->n[PF_VIRT];

		if (tg->skipped) {
			printf("%s: pid %d: PARTIAL: no such process when the sampling began, so not "
			       "sampled\n", prog, tg->pid);
			if (i + 1 < ntargets)
				putchar('\n');
			continue;
		}
		if (from_perf)
			printf("%s: %s (%s), %lu samples\n", prog, how, tg->comm, total);
		else
			printf("%s: pid %d (%s), %.1f s at %u Hz, %lu samples\n", prog, tg->pid,
			       tg->comm, tg->gone_after, hz, total);
		if (tg->lost)
			printf("  %lu samples lost (the buffer filled): shares are of those read\n",
			       tg->lost);
		if (tg->gone)
			printf("  PARTIAL: the process exited after %.1f s\n", tg->gone_after);
		if (tg->unsampled)
			printf("  PARTIAL: %u threads started during the run were not sampled (no fd "
			       "or sample buffer left: raise 'ulimit -n' or kernel.perf_event_mlock_kb)\n",
			       tg->unsampled);
		printf("\n  %-16s %9s %8s\n", "path", "samples", "of CPU");
		for (unsigned c = 0; c < PF_NCAT; c++) {
			if (c == PF_VIRT)
				continue;
			printf("  %-16s %9lu %7.2f%%", pf_cat_name[c], tg->n[c], pct(tg->n[c], all));
			if (c <= PF_LOCKWAIT)
				print_fn_list(stdout, tg, (int)c, all);
			putchar('\n');
		}
		/* Apart, under a heading of their own: not part of the shares above. */
		if (tg->n[PF_VIRT]) {
			printf("\n  left out: %lu samples (%.1f%% of all) in the hypervisor's functions "
			       "(interrupts delivered there, not work of the process)\n",
			       tg->n[PF_VIRT], pct(tg->n[PF_VIRT], total));
			for (unsigned f = 0; f < pf_nfuncs; f++)
				if (pf_funcs[f].cat == PF_VIRT && tg->fn[f])
					printf("  %-16s %9lu %7.2f%% of all\n", pf_funcs[f].name, tg->fn[f],
					       pct(tg->fn[f], total));
		}
		printf("\n  %-8s %-16s %8s %7s %7s %7s %9s\n", "thread", "name", "samples", "lookup",
		       "create", "close", "lock wait");
		for (unsigned j = 0; j < tg->nt; j++) {
			const struct thread *t = &tg->t[j];
			unsigned long ta = counted(t->n);

			if (!ta)
				continue;
			printf("  %-8d %-16s %8lu %6.2f%% %6.2f%% %6.2f%% %8.2f%%\n", t->tid, t->comm, ta,
			       pct(t->n[PF_LOOKUP], ta), pct(t->n[PF_CREATE], ta),
			       pct(t->n[PF_CLOSE], ta), pct(t->n[PF_LOCKWAIT], ta));
		}
		advice(buf, sizeof(buf), tg);
		printf("\n%s\n", buf);
		if (i + 1 < ntargets)
			putchar('\n');
	}
	missing_list(buf, sizeof(buf));
	if (buf[0] && !from_perf)
		printf("(not in this kernel, so never counted: %s)\n", buf);
}

static void json_counts(const unsigned long *n)
{
	static const char *const key[PF_NCAT] = { "lookup", "create", "close", "lock_wait",
						  "virtualisation", "kernel_other", "user" };

	for (unsigned c = 0; c < PF_NCAT; c++)
		printf("%s\"%s\": %lu", c ? ", " : "", key[c], n[c]);
}

static void json_shares(const unsigned long *n)
{
	static const char *const key[PF_NCAT] = { "lookup", "create", "close", "lock_wait",
						  "virtualisation", "kernel_other", "user" };
	unsigned long all = counted(n);
	bool first = true;

	for (unsigned c = 0; c < PF_NCAT; c++) {
		if (c == PF_VIRT)
			continue;
		printf("%s\"%s\": %.4f", first ? "" : ", ", key[c], pct(n[c], all));
		first = false;
	}
	printf(", \"fd_paths\": %.4f", pct(n[PF_LOOKUP] + n[PF_CREATE] + n[PF_CLOSE] + n[PF_LOCKWAIT], all));
}

static void report_json(bool from_perf)
{
	char buf[1024];

	printf("{\"schema\": \"fdrange-profile/1\", \"source\": \"%s\", \"hz\": %u, \"processes\": [",
	       from_perf ? "perf-data" : "perf_event_open", from_perf ? 0 : hz);
	for (unsigned i = 0; i < ntargets; i++) {
		struct target *tg = &targets[i];
		bool first = true;

		printf("%s\n  {\"pid\": %d, \"comm\": ", i ? "," : "", tg->pid);
		st_json_str(stdout, tg->comm, strlen(tg->comm));
		printf(", \"seconds\": %.2f, \"partial\": %s, \"skipped\": %s, \"lost\": %lu, "
		       "\"unsampled_threads\": %u,\n   \"samples\": {",
		       tg->gone_after, tg->gone || tg->unsampled ? "true" : "false",
		       tg->skipped ? "true" : "false", tg->lost, tg->unsampled);
		json_counts(tg->n);
		printf("},\n   \"shares_pct\": {");
		json_shares(tg->n);
		printf("},\n   \"functions\": {");
		for (unsigned f = 0; f < pf_nfuncs; f++) {
			if (!tg->fn[f])
				continue;
			printf("%s\"%s\": %lu", first ? "" : ", ", pf_funcs[f].name, tg->fn[f]);
			first = false;
		}
		printf("},\n   \"threads\": [");
		for (unsigned j = 0; j < tg->nt; j++) {
			printf("%s\n    {\"tid\": %d, \"comm\": ", j ? "," : "", tg->t[j].tid);
			st_json_str(stdout, tg->t[j].comm, strlen(tg->t[j].comm));
			printf(", \"samples\": {");
			json_counts(tg->t[j].n);
			printf("}, \"shares_pct\": {");
			json_shares(tg->t[j].n);
			printf("}}");
		}
		if (tg->skipped)
			snprintf(buf, sizeof(buf), "no such process when the sampling began: not sampled");
		else
			advice(buf, sizeof(buf), tg);
		printf("],\n   \"advice\": ");
		st_json_str(stdout, buf, strlen(buf));
		printf("}");
	}
	printf("],\n \"functions_absent\": [");
	for (unsigned f = 0, n = 0; f < pf_nfuncs && !from_perf; f++)
		if (pf_absent(&syms, f))
			printf("%s\"%s\"", n++ ? ", " : "", pf_funcs[f].name);
	printf("]}\n");
}

/* ---- arguments ---- */

/* fdrange profile's options: the one place each is defined, for the
 * parser and the help alike. */
enum popt { O_SECONDS, O_HZ, O_JSON, O_OUTPUT, O_PERF_DATA, O_FUNCTIONS, NOPTS };
static const struct {
	const char *name, *metavar, *accepted;
	const char *help;
} popts[NOPTS] = {
	[O_SECONDS] = { "--seconds", "N", "seconds, a number from 0.1 to 3600",
			"sample PIDs for N seconds, 0.1 to 3600 (default 5); a COMMAND is "
			"sampled as long as it runs" },
	[O_HZ] = { "--hz", "HZ", "an integer from 10 to 20000",
		   "samples per second of CPU time per thread, 10 to 20000 (default 1999)" },
	[O_JSON] = { "--json", NULL, NULL, "the result as JSON" },
	[O_OUTPUT] = { "--output", "FILE", "a file to write",
		       "write the result to FILE, not to standard output (which a COMMAND shares)" },
	[O_PERF_DATA] = { "--perf-data", "FILE", "a recording of perf record -e cpu-clock -g",
			  "classify a recording of 'perf record -e cpu-clock -g' (read with "
			  "'perf script') instead of sampling" },
	[O_FUNCTIONS] = { "--functions", NULL, NULL,
			  "list the kernel functions of each path, and which this kernel has" },
};

/* @text from column 21, words wrapped before column 80. */
static void help_wrap(FILE *out, const char *text)
{
	int col = 21;

	while (*text) {
		int w = (int)strcspn(text, " ");

		if (col > 21 && col + 1 + w > 80) {
			fprintf(out, "\n%21s", "");
			col = 21;
		} else if (col > 21) {
			fputc(' ', out);
			col++;
		}
		fwrite(text, 1, (size_t)w, out);
		col += w;
		text += w;
		text += strspn(text, " ");
	}
	fputc('\n', out);
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: fdrange profile [--seconds N] [--hz HZ] [--json] PID...\n"
		"   or: fdrange profile [--hz HZ] [--json] -- COMMAND [ARG]...\n"
		"   or: fdrange profile [--json] --perf-data FILE\n"
		"   or: fdrange profile --functions\n"
		"How much of a process's CPU goes to the kernel's fd paths: looking fds up\n"
		"(fget/fdget/fput), creating them (alloc_fd, fd_install), closing them, and\n"
		"waiting for the fd table's lock; per process and per thread, from kernel\n"
		"call stacks sampled with perf_event_open (a cpu-clock event; no perf tool\n"
		"needed).  Ends with what placement (libfdrange) could save at most.\n"
		"\n");
	for (unsigned i = 0; i < NOPTS; i++) {
		char left[40];

		snprintf(left, sizeof(left), "  %s%s%s", popts[i].name, popts[i].metavar ? " " : "",
			 popts[i].metavar ? popts[i].metavar : "");
		fprintf(out, "%-21s", left);
		help_wrap(out, popts[i].help);
	}
	fprintf(out,
		"  -h, --help         this help\n"
		"\n"
		"Needs root, CAP_PERFMON (and CAP_SYSLOG to read kernel addresses), or\n"
		"kernel.perf_event_paranoid <= 1 for one's own processes.\n"
		"Exit status: 0; 1 nothing could be profiled; 2 bad usage; 3 not allowed to\n"
		"sample or to read kernel addresses; 4 a process exited while sampled, or\n"
		"threads it started could not be sampled, or one of several PIDs was not\n"
		"running (its result is printed, marked PARTIAL).  With -- COMMAND stopped\n"
		"by a signal: 128 + the signal.\n");
}

static int syms_rc;

/* The kernel's symbols; -1 (syms_rc set) when they cannot be read.  Read
 * after the events are open, so that a user who may not sample at all is
 * told that first. */
static int load_syms(bool json)
{
	char err[512];
	int rc = pf_syms_load(&syms, "/proc/kallsyms", err, sizeof(err));

	if (rc == 0)
		return 0;
	if (json) {
		printf("{\"schema\": \"fdrange-profile/1\", \"error\": ");
		st_json_str(stdout, err, strlen(err));
		printf("}\n");
	} else {
		fprintf(stderr, "%s: %s\n", prog, err);
	}
	syms_rc = rc == -2 ? PX_PERM : PX_FAIL;
	return -1;
}

static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return PX_USAGE;
}

static int list_functions(void)
{
	for (unsigned i = 0; i < pf_nfuncs; i++)
		printf("%-10s %-34s %s\n", pf_funcs[i].cat == PF_SPIN ? "lock-wait" :
		       pf_funcs[i].cat == PF_LOCKWAIT ? "lock-wait" :
		       pf_funcs[i].cat == PF_VIRT ? "virt" : pf_cat_name[pf_funcs[i].cat],
		       pf_funcs[i].name, syms.present[i] ? "present" : "absent");
	return PX_OK;
}

/*
 * The PIDs not running when sampling begins: with others to profile, one
 * line each and the result marked PARTIAL; with none, one line and false.
 */
static bool skip_gone(void)
{
	unsigned live = 0;

	for (unsigned k = 0; k < ntargets; k++)
		live += !targets[k].skipped;
	if (!live) {
		fprintf(stderr, "%s: no process", prog);
		for (unsigned k = 0; k < ntargets; k++)
			fprintf(stderr, "%s %d", k ? "," : "", targets[k].pid);
		fputc('\n', stderr);
		return false;
	}
	for (unsigned k = 0; k < ntargets; k++) {
		if (!targets[k].skipped)
			continue;
		targets[k].gone = true;
		fprintf(stderr, "%s: no process %d: skipped, the other PIDs profiled (PARTIAL)\n",
			prog, targets[k].pid);
	}
	return true;
}

int fdrange_profile_main(int argc, char **argv)
{
	double seconds = 5;
	bool json = false, functions = false;
	const char *perf_data = NULL;
	int i, child = 0, child_status = 0, rc, out_fd = -1;
	bool stopped = false, sampled;
	bool command = false, seconds_given = false;

	page_size = sysconf(_SC_PAGESIZE);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL;
		char name[32], *end;
		size_t nl;
		unsigned o;
		long h;

		if (!strcmp(a, "--")) {
			i++;
			command = true;
			break;
		}
		if (a[0] != '-')
			break;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return PX_OK;
		}
		nl = strcspn(a, "=");
		snprintf(name, sizeof(name), "%.*s", (int)(nl < sizeof(name) ? nl : sizeof(name) - 1), a);
		if (a[nl] == '=')
			v = a + nl + 1;
		for (o = 0; o < NOPTS && strcmp(name, popts[o].name) != 0; o++)
			;
		if (o == NOPTS)
			return bad("unknown option '%s'; see 'fdrange profile --help'", a);
		if (!popts[o].metavar && v)
			return bad("%s takes no value", name);
		if (popts[o].metavar && !v) {
			if (i + 1 >= argc)
				return bad("%s: the value is missing; expected %s", name, popts[o].accepted);
			v = argv[++i];
		}
		if (!v)
			v = "";         /* an option without a value: v is not read */
		switch ((enum popt)o) {
		case O_JSON:
			json = true;
			break;
		case O_FUNCTIONS:
			functions = true;
			break;
		case O_PERF_DATA:
			perf_data = v;
			break;
		case O_OUTPUT:
			if (out_fd >= 0)
				close(out_fd);
			/* Opened now, so that a bad name fails before any sampling. */
			out_fd = open(v, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (out_fd < 0)
				return bad("--output: cannot write '%s': %s", v, strerror(errno));
			break;
		case O_SECONDS:
			errno = 0;
			seconds = strtod(v, &end);
			if (errno || end == v || *end || !(seconds >= 0.1 && seconds <= 3600))
				return bad("--seconds: '%s' is not %s", v, popts[o].accepted);
			seconds_given = true;
			break;
		case O_HZ:
			errno = 0;
			h = strtol(v, &end, 10);
			if (errno || end == v || *end || h < 10 || h > 20000)
				return bad("--hz: '%s' is not %s", v, popts[o].accepted);
			hz = (unsigned)h;
			break;
		case NOPTS:
			break;
		}
	}
	if (functions) {
		if (load_syms(json) < 0)
			return syms_rc;
		if (i < argc || perf_data)
			return bad("--functions takes no PID, command or --perf-data");
		return list_functions();
	}
	if (perf_data) {
		if (i < argc)
			return bad("--perf-data FILE takes no PID or command");
		rc = read_perf_data(perf_data, json);
		if (rc)
			return rc;
		if (out_fd >= 0 && dup2(out_fd, 1) < 0)
			return bad("--output: %s", strerror(errno));
		if (json)
			report_json(true);
		else
			report_text(perf_data, true);
		return PX_OK;
	}
	if (i >= argc)
		return bad("no PID or command given; see 'fdrange profile --help'");
	if (command && seconds_given)
		return bad("--seconds is for PIDs: with -- COMMAND the sampling lasts as long as the "
			   "command runs; drop --seconds, or start the command and give its PID");

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (command) {
		/* A command: stopped on a pipe until its event is open, which
		 * starts counting at its exec. */
		int go[2];
		char c;

		if (pipe2(go, O_CLOEXEC) < 0)
			return bad("pipe: %s", strerror(errno));
		child = fork();
		if (child < 0)
			return bad("fork: %s", strerror(errno));
		if (child == 0) {
			close(go[1]);
			if (read(go[0], &c, 1) != 1)
				_exit(126);
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			execvp(argv[i], argv + i);
			fprintf(stderr, "%s: %s: %s\n", prog, argv[i], strerror(errno));
			_exit(errno == ENOENT ? 127 : 126);
		}
		close(go[0]);
		ntargets = 1;
		targets[0].pid = child;
		snprintf(targets[0].comm, sizeof(targets[0].comm), "%s", argv[i]);
		if (attach(&targets[0], child, true, json) < 0) {
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
			return bad("the command's process vanished before it started");
		}
		snprintf(targets[0].t[0].comm, sizeof(targets[0].t[0].comm), "%.15s", argv[i]);
		if (load_syms(json) < 0) {
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
			return syms_rc;
		}
		if (write(go[1], "g", 1) != 1) {
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
			return bad("cannot start the command: %s", strerror(errno));
		}
		close(go[1]);
		/* fdrange profile runs as long as the command; Ctrl-C reaches both. */
		signal(SIGINT, SIG_IGN);
		sample(0, child, &child_status, json);
		/* A signal, not the command's end, stopped the sampling. */
		stopped = stop && !targets[0].gone_after;
		if (stopped)
			stop_child(child, &child_status);
		if (WIFEXITED(child_status) && WEXITSTATUS(child_status) >= 126 &&
		    !counted(targets[0].n)) {
			return WEXITSTATUS(child_status);
		}
	} else {
		for (; i < argc; i++) {
			char *end;
			long pid;

			errno = 0;
			pid = strtol(argv[i], &end, 10);
			if (errno || end == argv[i] || *end || pid <= 0 || pid > INT_MAX)
				return bad("'%s' is not a process id; expected PIDs, or -- COMMAND",
					   argv[i]);
			if (ntargets == MAX_PIDS)
				return bad("more than %d PIDs", MAX_PIDS);
			targets[ntargets].pid = (int)pid;
			/* Gone already: skipped below, once all are checked. */
			targets[ntargets].skipped = !alive((int)pid);
			read_comm((int)pid, 0, targets[ntargets].comm, sizeof(targets[0].comm));
			ntargets++;
		}
		for (unsigned k = 0; k < ntargets; k++)
			if (!targets[k].skipped && !scan_threads(&targets[k], json))
				targets[k].skipped = true;
		if (!skip_gone())
			return PX_FAIL;
		if (load_syms(json) < 0)
			return syms_rc;
		sample(seconds, 0, NULL, json);
	}
	if (out_fd >= 0 && (fflush(stdout), dup2(out_fd, 1)) < 0)
		return bad("--output: %s", strerror(errno));
	if (json)
		report_json(false);
	else
		report_text("", false);
	rc = PX_OK;
	sampled = false;
	for (unsigned k = 0; k < ntargets; k++) {
		if (targets[k].gone || targets[k].unsampled)
			rc = PX_PARTIAL;
		if (!counted(targets[k].n) && rc == PX_OK && !child)
			rc = PX_FAIL;
		sampled |= !targets[k].skipped && counted(targets[k].n);
	}
	/* A skipped pid makes the rest partial, not a profile of nothing. */
	if (!sampled && !child)
		rc = PX_FAIL;
	if (child && WIFEXITED(child_status))
		fprintf(stderr, "%s: %s exited with status %d\n", prog, targets[0].comm,
			WEXITSTATUS(child_status));
	if (stopped)
		return 128 + stop;
	return rc;
}
