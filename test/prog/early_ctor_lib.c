/* SPDX-License-Identifier: MIT */
/*
 * A library whose constructor creates fds.  Linked into
 * ctor_calls_before_init, its constructor runs before libfdrange's own
 * (ld.so runs the program's dependencies' constructors first), so these
 * calls reach the wrappers before the library's constructor did.
 */
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

int early_fds[4] = { -1, -1, -1, -1 };
int early_errno_ok = 1;

__attribute__((constructor)) static void early(void)
{
	int p[2];

	early_fds[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	early_fds[1] = socket(AF_UNIX, SOCK_STREAM, 0);
	if (pipe(p) == 0) {
		early_fds[2] = p[0];
		early_fds[3] = p[1];
	}
}
