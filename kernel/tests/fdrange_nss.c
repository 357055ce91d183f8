// SPDX-License-Identifier: GPL-2.0
/*
 * fdrange_nss on|off: the files and sockets glibc's NSS opens and closes
 * inside getaddrinfo() and getpwnam() land in the range.
 *
 * glibc opens /etc/nsswitch.conf, /etc/hosts, /etc/passwd and tries
 * nscd's socket inside getaddrinfo() and getpwnam(), and closes them before
 * it returns, so no interposer sees them and their numbers are gone by
 * then.  A thread of its own (a seccomp filter cannot be taken off again)
 * sets the range and does both lookups under a filter that hands every
 * close() to this thread, which reads the fd's number and what it names
 * (the table is shared, the fd still open) and lets the close go on.
 * The guest's /etc (kernel/test.sh) has NSS from files only.
 */
#include "fdrange.h"
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netdb.h>
#include <poll.h>
#include <pwd.h>
#include <stddef.h>
#include <sys/ioctl.h>

struct nss_run {
	unsigned lo, hi;
	int listener;		/* the filter's listener; -errno; -1000 not yet */
	int range_err;		/* errno of the thread's PR_SET_FD_RANGE */
	int gai;		/* getaddrinfo's result */
	int pw;			/* getpwnam found root */
};

static void *nss_lookups(void *arg)
{
	struct nss_run *n = arg;
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_close, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fprog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai = NULL;
	int l;

	/* The listener is made before the range is set: only NSS's fds are
	 * made under it. */
	l = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ? -1 :
	    (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog);
	__atomic_store_n(&n->listener, l < 0 ? -errno : l, __ATOMIC_RELEASE);
	if (l < 0)
		return NULL;
	if (set_range(n->lo, n->hi)) {
		n->range_err = errno;
		return NULL;
	}
	n->gai = getaddrinfo("localhost", "80", &hints, &ai);
	if (!n->gai)
		freeaddrinfo(ai);
	n->pw = getpwnam("root") != NULL;
	return NULL;
}

static void nss_paths(unsigned lo, unsigned hi)
{
	struct nss_run n = { .lo = lo, .hi = hi, .listener = -1000, .gai = -1 };
	int l, closed = 0, out = 0, hosts = 0, passwd = 0, sockets = 0, ended = 0;
	pthread_t t;

#ifndef __x86_64__
	printf("%s: NSS not checked: the filter is written for x86_64\n", prog);
	return;
#endif
	if (pthread_create(&t, NULL, nss_lookups, &n)) {
		CHECK(0, "nss: pthread_create");
		return;
	}
	/* No limit here: alarm() bounds the program. */
	while ((l = __atomic_load_n(&n.listener, __ATOMIC_ACQUIRE)) == -1000)
		usleep(1000);
	CHECK(l >= 0, "nss: no seccomp listener: %s", strerror(l < 0 ? -l : 0));
	/* Until every task under the filter is gone: POLLHUP. */
	while (l >= 0) {
		struct pollfd p = { .fd = l, .events = POLLIN };
		struct seccomp_notif req;
		struct seccomp_notif_resp resp;
		char link[64], name[256];
		ssize_t len;
		int fd;

		if (poll(&p, 1, 10000) <= 0) {
			CHECK(0, "nss: the lookups stopped for 10 s");
			break;
		}
		if (!(p.revents & POLLIN)) {
			ended = (p.revents & POLLHUP) && !(p.revents & (POLLERR | POLLNVAL));
			CHECK(ended, "nss: the listener ended with revents %#x", p.revents);
			break;
		}
		memset(&req, 0, sizeof(req));
		if (ioctl(l, SECCOMP_IOCTL_NOTIF_RECV, &req)) {
			if (errno == ENOENT)	/* the task went away */
				continue;
			CHECK(0, "nss: SECCOMP_IOCTL_NOTIF_RECV: %s", strerror(errno));
			break;
		}
		fd = (int)req.data.args[0];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		len = readlink(link, name, sizeof(name) - 1);
		name[len > 0 ? len : 0] = '\0';
		closed++;
		hosts += !strcmp(name, "/etc/hosts");
		passwd += !strcmp(name, "/etc/passwd");
		sockets += !strncmp(name, "socket:", 7);
		if (!in(fd, lo, hi)) {
			CHECK(0, "nss: glibc closed fd %d (%s), outside [%u,%u)", fd, name, lo, hi);
			out++;
		}
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		if (ioctl(l, SECCOMP_IOCTL_NOTIF_SEND, &resp) && errno != ENOENT) {
			CHECK(0, "nss: SECCOMP_IOCTL_NOTIF_SEND: %s", strerror(errno));
			break;
		}
	}
	/* Closed before the join: a close() the loop did not answer fails
	 * with ENOSYS once no listener is left, and the thread finishes. */
	if (l >= 0)
		close(l);
	pthread_join(t, NULL);
	if (l < 0)
		return;
	CHECK(!n.range_err, "nss: PR_SET_FD_RANGE in the thread: %s", strerror(n.range_err));
	CHECK(n.gai == 0 && n.pw, "nss: getaddrinfo(localhost) %d, getpwnam(root) %s: is /etc set up?",
	      n.gai, n.pw ? "found" : "not found");
	CHECK(hosts && passwd, "nss: /etc/hosts closed %d times, /etc/passwd %d: NSS did not read them",
	      hosts, passwd);
	if (ended && !out && hosts && passwd)
		printf("%s: NSS: %d fds closed inside getaddrinfo/getpwnam (/etc/hosts, /etc/passwd, %d sockets), all in [%u,%u)\n",
		       prog, closed, sockets, lo, hi);
}

static void nss(void)
{
	nss_paths(100, 164);
}

int main(int argc, char **argv)
{
	return range_main(argc, argv, "fdrange_nss", nss, NULL);
}
