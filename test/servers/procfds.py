#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A cross-check of fdrange stat from /proc alone, for the server tests.

    procfds.py PID

prints one line
    procfds: pid=N max_fd=N client_sockets=N max_client_fd=N epolls=N
             epoll_shared_client_lines=N

client sockets: the process's TCP sockets whose local port is a port the
process listens on (accepted connections).  epoll_shared_client_lines: 8-fd
lines of the fd table holding client sockets watched by two or more epoll
instances (a server with one epoll per thread: lines shared by threads).
A client socket watched by no epoll instance counts as its own group '-'.
"""
import os
import sys


def tcp_table(pid):
    rows = {}
    for name in ("tcp", "tcp6"):
        try:
            with open(f"/proc/{pid}/net/{name}") as f:
                next(f)
                for line in f:
                    p = line.split()
                    port = int(p[1].rsplit(":", 1)[1], 16)
                    rows[p[9]] = (port, p[3])
        except OSError:
            pass
    return rows


def main():
    pid = int(sys.argv[1])
    fds = {}
    for name in os.listdir(f"/proc/{pid}/fd"):
        try:
            fds[int(name)] = os.readlink(f"/proc/{pid}/fd/{name}")
        except OSError:
            pass
    tcp = tcp_table(pid)
    sock = {}
    for fd, target in fds.items():
        if target.startswith("socket:["):
            inode = target[8:-1]
            if inode in tcp:
                sock[fd] = tcp[inode]
    listen_ports = {port for port, st in sock.values() if st == "0A"}
    clients = {fd for fd, (port, st) in sock.items() if st != "0A" and port in listen_ports}
    watcher = {}
    epolls = 0
    for fd, target in fds.items():
        if target != "anon_inode:[eventpoll]":
            continue
        epolls += 1
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                for line in f:
                    if line.startswith("tfd:"):
                        watcher.setdefault(int(line.split()[1]), set()).add(fd)
        except OSError:
            pass
    lines = {}
    for fd in clients:
        w = watcher.get(fd) or {"-"}
        lines.setdefault(fd // 8, set()).update(str(x) for x in w)
    shared = sum(1 for groups in lines.values() if len(groups) > 1)
    print(f"procfds: pid={pid} max_fd={max(fds) if fds else -1} client_sockets={len(clients)} "
          f"max_client_fd={max(clients) if clients else -1} epolls={epolls} "
          f"epoll_shared_client_lines={shared}")


if __name__ == "__main__":
    main()
