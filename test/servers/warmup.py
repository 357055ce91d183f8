#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Sequential client connections before a server test's load.

    warmup.py PORT PROTO N

Opens N connections to 127.0.0.1:PORT one after another; on each it sends
one request of PROTO (http, redis, memcached, echo), reads the reply, waits
a moment with the connection idle, and closes it.  A keep-alive server then
registers each connection with epoll from the thread that serves it, which
is what libfdrange learns its hand-off model from; a server that has been
up for a while has seen such connections before any load.  Exit status 0
if every request got a reply, 1 otherwise (with one line saying which).
"""
import socket
import sys
import time

REQUEST = {
    "http": b"GET /index.html HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    "redis": b"PING\r\n",
    "memcached": b"version\r\n",
    "echo": b"warmup\n",
}


def one(port, request):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(request)
        if not s.recv(4096):
            raise ConnectionError("closed without a reply")
        # Idle on an open connection: the server goes back to its event
        # loop and registers the connection before it sees the close.
        time.sleep(0.02)


def main():
    if len(sys.argv) != 4 or sys.argv[2] not in REQUEST:
        sys.exit("usage: warmup.py PORT http|redis|memcached|echo N")
    port, request, n = int(sys.argv[1]), REQUEST[sys.argv[2]], int(sys.argv[3])
    for i in range(n):
        try:
            one(port, request)
        except OSError as e:
            sys.exit(f"warmup: connection {i + 1} of {n} to port {port}: {e}")


main()
