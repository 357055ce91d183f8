/* SPDX-License-Identifier: MIT */
/*
 * epoll_ctl(2): not an fd-creating call, wrapped only to learn which thread
 * serves each fd.  Event-loop servers register a connection once, from the
 * thread that will serve it, so EPOLL_CTL_ADD names that thread; the other
 * operations pass straight through.  The result and errno are libc's: the
 * bookkeeping runs only after a successful ADD and makes no syscall there
 * except a thread's first gettid(), which leaves errno alone.
 */
#include "handoff.h"
#include "real.h"
#include "state.h"
#include "sys.h"

#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

FDR_EXPORT int epoll_ctl(int epfd, int op, int fd, struct epoll_event *event)
{
	int (*next)(int, int, int, struct epoll_event *) = NEXT(epoll_ctl);
	int ret = next ? next(epfd, op, fd, event) :
			 (int)fdr_syscall(SYS_epoll_ctl, epfd, op, fd, event);

	if (ret == 0 && op == EPOLL_CTL_ADD && fdr_ready())
		fdr_handoff_registered(fd);
	return ret;
}
