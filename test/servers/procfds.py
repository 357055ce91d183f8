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
import subprocess
import sys


def ss(*args):
    """(state, local port, inode) of each socket ss lists.  ss asks the
    kernel through netlink with the filter applied there; /proc/net/tcp
    is read page by page and skips entries when other processes churn
    connections."""
    out = subprocess.run(["ss", "-Htne", *args], check=True, capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        p = line.split()
        ino = next((f[4:] for f in p if f.startswith("ino:")), None)
        if ino is None or len(p) < 5:
            continue
        rows.append((p[0], int(p[3].rsplit(":", 1)[1]), ino))
    return rows


def main():
    pid = int(sys.argv[1])
    fds = {}
    for name in os.listdir(f"/proc/{pid}/fd"):
        try:
            fds[int(name)] = os.readlink(f"/proc/{pid}/fd/{name}")
        except OSError:
            pass
    mine = {t[8:-1]: fd for fd, t in fds.items() if t.startswith("socket:[")}
    listen_ports = {port for st, port, ino in ss("-l") if ino in mine}
    clients = set()
    if listen_ports:
        flt = "( " + " or ".join(f"sport = :{p}" for p in sorted(listen_ports)) + " )"
        clients = {mine[ino] for st, port, ino in ss("-a", flt) if st != "LISTEN" and ino in mine}
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
