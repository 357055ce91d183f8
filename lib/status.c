/* SPDX-License-Identifier: MIT */
/*
 * /proc/self/status, read once at start-up (status.h): the one reader of
 * the file in the library.  Raw syscalls into static memory, no lock, no
 * allocation, no stdio: fdr_init() may run in a signal handler.
 */
#include "status.h"
#include "sys.h"

#include <limits.h>

/*
 * What /proc/self/status said at start-up (one read, before anything
 * else): only the lines the start-up uses, each after a newline, as the
 * readers of the text expect.  The whole file is read: a long Groups: line
 * (hundreds of supplementary groups) puts Seccomp: kilobytes down.
 */
static struct {
	char text[256];
	size_t len;
	bool read;
} status;

static const char *const status_keys[] = { "FDSize:", "Threads:", "Seccomp:" };

/* Line @l (@len bytes, maybe cut) into status.text if start-up uses it. */
static void keep_status_line(const char *l, size_t len)
{
	for (size_t k = 0; k < sizeof(status_keys) / sizeof(status_keys[0]); k++) {
		size_t kl = __builtin_strlen(status_keys[k]);

		if (len < kl || __builtin_memcmp(l, status_keys[k], kl) != 0)
			continue;
		if (status.len + 1 + len + 1 > sizeof(status.text))
			return;
		status.text[status.len++] = '\n';
		__builtin_memcpy(status.text + status.len, l, len);
		status.len += len;
		status.text[status.len] = 0;
		return;
	}
}

/* false if the file could not be read to its end. */
static bool scan_status(int fd)
{
	char buf[1024], line[64];
	size_t ll = 0;
	long n;

	while ((n = sys_read(fd, buf, sizeof(buf))) > 0) {
		for (long i = 0; i < n; i++) {
			if (buf[i] == '\n') {
				keep_status_line(line, ll);
				ll = 0;
			} else if (ll < sizeof(line)) {
				/* The rest of a long line (Groups:) holds no key of ours. */
				line[ll++] = buf[i];
			}
		}
	}
	return n == 0;
}

int fdr_status_read_fd(int fd)
{
	status.len = 0;
	status.text[0] = 0;
	status.read = false;
	if (!scan_status(fd) || !status.len)
		return -EIO;
	status.read = true;
	return 0;
}

int fdr_status_read(void)
{
	long fd = sys_openat(AT_FDCWD, "/proc/self/status", O_RDONLY | O_CLOEXEC, 0);
	int ret;

	if (fd < 0)
		return (int)fd;
	ret = fdr_status_read_fd((int)fd);
	sys_close((int)fd);
	return ret;
}

long fdr_status_value(const char *key)
{
	if (!status.read)
		return -1;
	/* Every kept line starts after a newline. */
	for (const char *p = status.text; *p; p++) {
		const char *k = key, *q = p + 1;
		long v = 0;

		if (*p != '\n')
			continue;
		while (*k && *q == *k)
			k++, q++;
		if (*k)
			continue;
		while (*q == ' ' || *q == '\t')
			q++;
		for (; *q >= '0' && *q <= '9'; q++)
			v = v > (LONG_MAX - 9) / 10 ? LONG_MAX : v * 10 + (*q - '0');
		return v;
	}
	return -1;
}
