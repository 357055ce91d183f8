#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Echo load for tpc_select: CONNS connections held open at once.

    echo_client.py PORT CONNS SECONDS READYFILE

Opens CONNS connections to 127.0.0.1:PORT, then for SECONDS seconds sends
a distinct message on every connection and reads each echo back, round
after round; creates READYFILE once all connections are up and one round
has been echoed (the time to sample the server).  Prints
    echo_client: conns=N rounds=R echoes=E errors=X
and exits 0 only if every echo came back intact (X == 0).
"""
import socket
import sys
import time


def main():
    port, conns, secs, ready = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    socks, errors, echoes, rounds = [], 0, 0, 0
    for i in range(conns):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            socks.append(s)
        except OSError as e:
            errors += 1
            print(f"echo_client: connect {i}: {e}", file=sys.stderr)
    end = time.monotonic() + secs
    while True:
        for i, s in enumerate(socks):
            if s is None:
                continue
            msg = f"round {rounds} conn {i} ".encode() * 8
            try:
                s.sendall(msg)
                got = b""
                while len(got) < len(msg):
                    b = s.recv(len(msg) - len(got))
                    if not b:
                        raise OSError("connection closed by the server")
                    got += b
                if got != msg:
                    raise OSError("echo differs")
                echoes += 1
            except OSError as e:
                errors += 1
                print(f"echo_client: conn {i} round {rounds}: {e}", file=sys.stderr)
                s.close()
                socks[i] = None
        rounds += 1
        if rounds == 1:
            open(ready, "w").close()
        if time.monotonic() >= end or not any(socks):
            break
        time.sleep(0.05)
    for s in socks:
        if s is not None:
            s.close()
    print(f"echo_client: conns={conns} rounds={rounds} echoes={echoes} errors={errors}")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
