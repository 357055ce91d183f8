/* SPDX-License-Identifier: MIT */
/*
 * What /proc says about a process, read-only and without stopping it:
 * its open fds and their link targets, which fds each epoll instance
 * watches (its fdinfo "tfd:" lines), comm and thread names, RLIMIT_NOFILE,
 * and which TCP sockets listen, were accepted (their local port is one the
 * process listens on) or are other connections, from /proc/PID/net/tcp and
 * tcp6 matched by socket inode.
 *
 * Nothing here follows a target's link or opens an fd's file: stat() on
 * /proc/PID/fd/N would ask the file's file system (a FUSE server of the
 * target's could answer never).  Inodes come from "socket:[N]" targets or
 * from fdinfo's "ino:" line.  Every file is read whole into a bounded,
 * growing buffer, so no line is ever split into two.
 */
#include "stat.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ST_FDINFO_MAX  (256u << 20)   /* an epoll watching 1M fds: ~100 MiB of tfd lines */
#define ST_SMALL_MAX   (1u << 20)

/* A small /proc file (comm, limits, status): one read, NUL-terminated. */
static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	do
		n = read(fd, buf, len - 1);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		int err = errno;

		close(fd);
		return -err;
	}
	close(fd);
	buf[n] = 0;
	return (int)n;
}

/* A whole file into a growing buffer: no line of it is ever split. */
int st_read_whole(const char *path, char **out, size_t *outlen, size_t max)
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

static bool parse_fd(const char *s, int *fd);

static int cmp_tid(const void *a, const void *b)
{
	const struct st_tid *x = a, *y = b;

	return (x->ns > y->ns) - (x->ns < y->ns);
}

/* "NSpid:\t2345\t2" in a status file: the last field, its own namespace's. */
static long nspid_of(const char *status)
{
	const char *l = strstr(status, "\nNSpid:"), *last = NULL;

	if (!l)
		return 0;
	for (const char *q = l + 7; *q && *q != '\n'; q++)
		if (isdigit((unsigned char)*q) && (q[-1] == '\t' || q[-1] == ' ' || q[-1] == ':'))
			last = q;
	return last ? strtol(last, NULL, 10) : 0;
}

/*
 * A process in another pid namespace records its threads' tids as it sees
 * them: map those to ours through each thread's NSpid line, once per look.
 */
static void read_tids(struct st_proc *p)
{
	char path[64];
	struct dirent *de;
	size_t cap = 64;
	DIR *d;

	if (!p->nspid || p->nspid == p->pid)
		return;
	snprintf(path, sizeof(path), "/proc/%ld/task", p->pid);
	d = opendir(path);
	p->tids = malloc(cap * sizeof(*p->tids));
	if (!d || !p->tids) {
		if (d)
			closedir(d);
		return;
	}
	while ((de = readdir(d))) {
		char buf[4096];
		int host;
		long ns;

		if (!parse_fd(de->d_name, &host))
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/task/%d/status", p->pid, host);
		if (read_small(path, buf, sizeof(buf)) <= 0 || (ns = nspid_of(buf)) <= 0)
			continue;
		if (p->ntids == cap) {
			struct st_tid *nt = realloc(p->tids, 2 * cap * sizeof(*nt));

			if (!nt)
				break;
			p->tids = nt;
			cap *= 2;
		}
		p->tids[p->ntids++] = (struct st_tid){ ns, host };
	}
	closedir(d);
	qsort(p->tids, p->ntids, sizeof(*p->tids), cmp_tid);
}

/* The number after "\nKEY:" in a status file, or @dflt. */
static long status_num(const char *status, const char *key, long dflt)
{
	const char *l = strstr(status, key);

	if (!l)
		return dflt;
	l += strlen(key);
	while (*l == ' ' || *l == '\t')
		l++;
	return isdigit((unsigned char)*l) ? strtol(l, NULL, 10) : dflt;
}

int st_proc_status(struct st_proc *p, long pid)
{
	char path[64], buf[8192];
	const char *l;
	int ret;

	p->state = 0;
	p->ppid = 0;
	p->nspid = 0;
	p->threads = 0;
	p->seccomp = -1;
	p->have_uids = false;
	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	ret = read_small(path, buf, sizeof(buf));
	if (ret <= 0)
		return ret ? ret : -EIO;
	/* Kernel-formatted: "State:\tS (sleeping)", "Uid:\t0\t0\t0\t0". */
	l = strstr(buf, "\nState:");
	if (l) {
		for (l += 7; *l == ' ' || *l == '\t'; l++)
			;
		p->state = *l;
	}
	p->ppid = status_num(buf, "\nPPid:", 0);
	p->nspid = nspid_of(buf);
	p->threads = (unsigned)status_num(buf, "\nThreads:", 0);
	p->seccomp = (int)status_num(buf, "\nSeccomp:", -1);
	l = strstr(buf, "\nUid:");
	if (l) {
		char *end;

		l += 5;
		p->have_uids = true;
		for (int i = 0; i < 4 && p->have_uids; i++) {
			p->uids[i] = (uid_t)strtoul(l, &end, 10);
			p->have_uids = end != l;
			l = end;
		}
	}
	return 0;
}

long st_host_tid(const struct st_proc *p, long tid)
{
	struct st_tid key = { tid, 0 };
	const struct st_tid *hit;

	if (!p->nspid || p->nspid == p->pid)
		return tid;
	hit = p->tids ? bsearch(&key, p->tids, p->ntids, sizeof(*p->tids), cmp_tid) : NULL;
	return hit ? hit->host : 0;
}

void st_thread_name(const struct st_proc *p, long tid, char *out, size_t len)
{
	char path[64];

	tid = st_host_tid(p, tid);
	if (!tid) {
		snprintf(out, len, "(exited)");
		return;
	}
	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/comm", p->pid, tid);
	if (read_small(path, out, len) <= 0)
		snprintf(out, len, "(exited)");
	else if (strlen(out) && out[strlen(out) - 1] == '\n')
		out[strlen(out) - 1] = 0;  /* the kernel's newline, not the name's */
}

bool st_proc_alive(long pid)
{
	char path[64], buf[512];
	const char *s;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return false;
	/* "pid (comm) S ...": the state follows the last ')'. */
	s = strrchr(buf, ')');
	return s && s[1] == ' ' && s[2] != 'Z' && s[2] != 'X';
}

static int cmp_fd(const void *a, const void *b)
{
	const struct st_fd *x = a, *y = b;

	return (x->fd > y->fd) - (x->fd < y->fd);
}

static struct st_fd *find_fd(struct st_proc *p, long fd)
{
	size_t lo = 0, hi = p->nfds;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->fds[mid].fd == fd)
			return &p->fds[mid];
		if (p->fds[mid].fd < fd)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* A decimal fd number, strictly. */
static bool parse_fd(const char *s, int *fd)
{
	long v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s) || v > (1L << 31) / 10)
			return false;
		v = v * 10 + (*s - '0');
	}
	if (v > 0x7fffffff)
		return false;
	*fd = (int)v;
	return true;
}

/*
 * Why /proc refused us, appended to @why.  The kernel lets a user read a
 * process whose real, effective and saved uids are all that user's, and
 * only while it is dumpable: a process that changed its uid (a daemon
 * dropping root), ran set-uid, or called prctl(PR_SET_DUMPABLE, 0) is
 * readable by root only, even by the uid it runs as.
 */
static void explain_denied(const struct st_proc *p, char *why, size_t whylen)
{
	size_t n = strlen(why);
	uid_t me = geteuid();

	if (n >= whylen)
		return;
	if (!p->have_uids)
		snprintf(why + n, whylen - n, " (run as the process's user or root)");
	else if (me == 0)
		snprintf(why + n, whylen - n, " (even as root: no CAP_SYS_PTRACE here, or a "
			 "security module forbids it)");
	else if (p->uids[0] == me && p->uids[1] == me && p->uids[2] == me)
		snprintf(why + n, whylen - n, " (it runs as your uid %u but is not dumpable: it "
			 "changed its uid or gid, was started set-uid, or called "
			 "prctl(PR_SET_DUMPABLE, 0); only root can read such a process)",
			 (unsigned)me);
	else
		snprintf(why + n, whylen - n, " (it runs as uid %u: run as the process's user or "
			 "root)", (unsigned)p->uids[1]);
}

static int list_fds(struct st_proc *p, char *why, size_t whylen)
{
	char path[64];
	struct dirent *de;
	size_t cap = 256;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%ld/fd", p->pid);
	d = opendir(path);
	if (!d) {
		int err = errno;

		snprintf(why, whylen, "cannot list the fds of pid %ld: %s", p->pid, strerror(err));
		if (err == EACCES || err == EPERM)
			explain_denied(p, why, whylen);
		return -err;
	}
	p->fds = malloc(cap * sizeof(*p->fds));
	if (!p->fds) {
		closedir(d);
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	while ((de = readdir(d))) {
		struct st_fd *f;
		char lp[96];
		ssize_t n;
		int fd;

		if (!parse_fd(de->d_name, &fd))
			continue;
		if (p->nfds == cap) {
			struct st_fd *nf;

			if (cap >= ST_MAX_FDS) {
				closedir(d);
				snprintf(why, whylen, "pid %ld has more than %u fds", p->pid,
					 ST_MAX_FDS);
				return -E2BIG;
			}
			nf = realloc(p->fds, 2 * cap * sizeof(*nf));
			if (!nf) {
				closedir(d);
				snprintf(why, whylen, "out of memory");
				return -ENOMEM;
			}
			p->fds = nf;
			cap *= 2;
		}
		f = &p->fds[p->nfds];
		memset(f, 0, offsetof(struct st_fd, target));
		f->fd = fd;
		f->group = -1;
		f->owner = -1;
		f->watcher = -1;
		snprintf(lp, sizeof(lp), "/proc/%ld/fd/%d", p->pid, fd);
		n = readlink(lp, f->target, sizeof(f->target) - 1);
		if (n < 0)
			continue;  /* closed meanwhile */
		f->target[n] = 0;
		f->is_epoll = !strcmp(f->target, "anon_inode:[eventpoll]");
		if (!strncmp(f->target, "socket:[", 8)) {
			char *end;
			unsigned long long ino = strtoull(f->target + 8, &end, 10);

			f->is_socket = true;
			if (*end == ']')
				f->ino = ino;
		}
		p->nfds++;
	}
	closedir(d);
	qsort(p->fds, p->nfds, sizeof(*p->fds), cmp_fd);
	return 0;
}

/* The inode of fd @f's file: its socket number, else fdinfo's "ino:". */
static uint64_t fd_ino(const struct st_proc *p, const struct st_fd *f)
{
	char path[64], buf[4096];
	const char *ip;

	if (f->ino)
		return f->ino;
	snprintf(path, sizeof(path), "/proc/%ld/fdinfo/%d", p->pid, f->fd);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return 0;
	ip = strstr(buf, "\nino:");
	return ip ? strtoull(ip + 5, NULL, 10) : 0;
}

/* Each epoll's fdinfo lists what it watches: "tfd: N events: .. ino:HEX". */
static void read_epolls(struct st_proc *p)
{
	for (size_t i = 0; i < p->nfds; i++) {
		char path[64], *buf, *l;
		size_t len;

		if (!p->fds[i].is_epoll)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/fdinfo/%d", p->pid, p->fds[i].fd);
		if (st_read_whole(path, &buf, &len, ST_FDINFO_MAX) != 0)
			continue;
		for (l = buf; l < buf + len;) {
			char *nl = memchr(l, '\n', (size_t)(buf + len - l));
			const char *ip;
			struct st_fd *t;
			unsigned long long ino;
			int tfd;

			if (!nl)
				break;  /* whole lines only */
			*nl = 0;
			ip = strstr(l, " ino:");
			/* Kernel-formatted numbers, in range for sscanf. */
			// NOLINTBEGIN(cert-err34-c): see above
			if (!strncmp(l, "tfd:", 4) && ip && sscanf(l + 4, "%d", &tfd) == 1 &&
			    tfd >= 0 && sscanf(ip + 5, "%llx", &ino) == 1 &&
			    (t = find_fd(p, tfd)) != NULL) {
				// NOLINTEND(cert-err34-c)
				uint64_t have = fd_ino(p, t);

				/* A watched fd number now naming another file is stale. */
				if (!have || have == ino) {
					t->watchers++;
					t->watcher = p->fds[i].fd;
				}
			}
			l = nl + 1;
		}
		free(buf);
	}
}

struct by_ino {
	uint64_t ino;
	size_t idx;
};

static int cmp_ino(const void *a, const void *b)
{
	const struct by_ino *x = a, *y = b;

	return (x->ino > y->ino) - (x->ino < y->ino);
}

/*
 * TCP classes.  Listening sockets give the ports; a connected socket whose
 * local port is one of them was accepted (inbound, a client's); any other
 * TCP socket is an outbound or other connection.
 */
static void classify_tcp(struct st_proc *p)
{
	static const char *const files[] = { "tcp", "tcp6" };
	unsigned char *listening = calloc(65536 / 8, 1);
	uint16_t *port = calloc(p->nfds ? p->nfds : 1, sizeof(*port));
	struct by_ino *socks = malloc((p->nfds ? p->nfds : 1) * sizeof(*socks));
	size_t ns = 0;

	if (!listening || !port || !socks)
		goto out;
	for (size_t i = 0; i < p->nfds; i++)
		if (p->fds[i].ino)
			socks[ns++] = (struct by_ino){ p->fds[i].ino, i };
	qsort(socks, ns, sizeof(*socks), cmp_ino);
	for (unsigned k = 0; k < 2 && ns; k++) {
		char path[64], *buf, *l;
		size_t len;

		snprintf(path, sizeof(path), "/proc/%ld/net/%s", p->pid, files[k]);
		if (st_read_whole(path, &buf, &len, ST_FDINFO_MAX) != 0)
			continue;
		for (l = buf; l < buf + len;) {
			char *nl = memchr(l, '\n', (size_t)(buf + len - l));
			unsigned lport, st;
			unsigned long long ino;

			if (!nl)
				break;
			*nl = 0;
			/* Kernel-formatted numbers, in range for sscanf. */
			// NOLINTNEXTLINE(cert-err34-c): see above
			if (sscanf(l, " %*u: %*[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x %*x:%*x %*x:%*x "
				   "%*x %*u %*u %llu", &lport, &st, &ino) == 3 && lport < 65536) {
				struct by_ino key = { ino, 0 };
				const struct by_ino *hit = bsearch(&key, socks, ns, sizeof(*socks),
								   cmp_ino);

				if (hit) {
					struct st_fd *f = &p->fds[hit->idx];

					port[hit->idx] = (uint16_t)lport;
					if (st == 0x0a) {  /* TCP_LISTEN */
						f->tcp = ST_TCP_LISTEN;
						if (!(listening[lport / 8] & (1u << (lport % 8))))
							p->listen_ports++;
						listening[lport / 8] |= (unsigned char)(1u << (lport % 8));
					} else {
						f->tcp = ST_TCP_OTHER;
					}
				}
			}
			l = nl + 1;
		}
		free(buf);
	}
	for (size_t i = 0; i < p->nfds; i++)
		if (p->fds[i].tcp == ST_TCP_OTHER &&
		    (listening[port[i] / 8] & (1u << (port[i] % 8))))
			p->fds[i].tcp = ST_TCP_CLIENT;
out:
	free(listening);
	free(port);
	free(socks);
}


int st_proc_read(struct st_proc *p, long pid, char *why, size_t whylen)
{
	char path[64], buf[4096];
	int ret;

	memset(p, 0, sizeof(*p));
	p->pid = pid;
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	ret = read_small(path, p->comm, sizeof(p->comm));
	if (ret < 0) {
		if (ret == -ENOENT || ret == -ESRCH)
			snprintf(why, whylen, "no process with pid %ld", pid);
		else
			snprintf(why, whylen, "cannot read %s: %s", path, strerror(-ret));
		return ret == -ESRCH ? -ENOENT : ret;
	}
	if (ret > 0 && p->comm[ret - 1] == '\n')
		p->comm[ret - 1] = 0;
	if (st_proc_status(p, pid) == 0 && (p->state == 'Z' || p->state == 'X')) {
		/* Its fds and maps are gone; only its exit status waits. */
		snprintf(why, whylen, "exited, not reaped (a zombie): its parent, pid %ld, has not "
			 "waited for it yet; nothing of it is left to read", p->ppid);
		return -ST_ERR_EXITED;
	}
	snprintf(path, sizeof(path), "/proc/%ld/limits", pid);
	if (read_small(path, buf, sizeof(buf)) > 0) {
		char *l = strstr(buf, "Max open files");

		if (l)
			p->soft_limit = strtoull(l + 14, NULL, 10);
	}
	ret = list_fds(p, why, whylen);
	if (ret < 0) {
		if (ret == -ENOENT)
			snprintf(why, whylen, "no process with pid %ld", pid);
		st_proc_free(p);
		return ret;
	}
	read_epolls(p);
	classify_tcp(p);
	read_tids(p);
	return 0;
}

void st_proc_free(struct st_proc *p)
{
	free(p->fds);
	free(p->tids);
	p->fds = NULL;
	p->tids = NULL;
	p->nfds = 0;
	p->ntids = 0;
}
